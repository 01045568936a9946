//! Graph parameters (declarations, `--param` overrides), their bindings to node
//! parameters, and one JSON value checked against a parameter's declaration.

use super::{check_keys, error, kind_of, suggest, unknown_name, PARAM_KEYS, PARAM_TYPES};
use crate::graph::{is_valid_id, Diagnostic, GraphParam};
use crate::node::{intern, quoted_list, ParamKind, ParamSpec, ParamValue};
use serde_json::Map;
use serde_json::Value;
use std::collections::BTreeMap;

/// The graph's `parameters`, each declaration checked, then the `--param` overrides applied
/// (checked like a value in the file). Sorted by name.
pub(super) fn parse_parameters(
    v: Option<&Value>,
    overrides: &[(String, Value)],
    diags: &mut Vec<Diagnostic>,
) -> Vec<GraphParam> {
    let mut out = Vec::new();
    match v {
        None => {}
        Some(Value::Object(map)) => {
            for (name, decl) in map {
                if let Some(p) = parse_parameter(name, decl, diags) {
                    out.push(p);
                }
            }
        }
        Some(other) => error(
            diags,
            None,
            "parameters",
            format!(
                "expected an object mapping parameter names to declarations, found {}",
                kind_of(other)
            ),
        ),
    }
    out.sort_by(|a, b| a.spec.name.cmp(b.spec.name));
    let names: Vec<&str> = out.iter().map(|p| p.spec.name).collect();
    let mut set = Vec::new();
    for (name, v) in overrides {
        let field = format!("--param {name}");
        match out.iter().position(|p| p.spec.name == name) {
            None => error(
                diags,
                None,
                field,
                if names.is_empty() {
                    "this graph has no parameters".to_owned()
                } else {
                    format!(
                        "no graph parameter \"{name}\"{}; the graph's parameters are {}",
                        suggest(name, &names),
                        quoted_list(&names)
                    )
                },
            ),
            Some(i) => match param_value(out[i].spec, v) {
                Ok(pv) => set.push((i, pv)),
                Err(msg) => error(diags, None, field, msg),
            },
        }
    }
    for (i, pv) in set {
        out[i].value = pv;
    }
    out
}

/// One graph parameter declaration: `{"type": "float", "default": 0.5, "min": 0, "max": 1,
/// "soft_min": …, "soft_max": …, "unit": "m", "doc": "…"}` (`options` for a choice).
pub(super) fn parse_parameter(
    name: &str,
    decl: &Value,
    diags: &mut Vec<Diagnostic>,
) -> Option<GraphParam> {
    let at = format!("parameters.{name}");
    if !is_valid_id(name) {
        error(
            diags,
            None,
            at,
            "parameter names use 1 to 128 letters, digits, '_' or '-'",
        );
        return None;
    }
    let Some(obj) = decl.as_object() else {
        error(
            diags,
            None,
            at,
            format!(
                "expected a declaration {{\"type\": …, \"default\": …}}, found {}",
                kind_of(decl)
            ),
        );
        return None;
    };
    check_keys(obj, PARAM_KEYS, None, &format!("{at}."), diags);
    let text = |key: &str, diags: &mut Vec<Diagnostic>| match obj.get(key) {
        None => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => {
            error(
                diags,
                None,
                format!("{at}.{key}"),
                format!("expected a string, found {}", kind_of(other)),
            );
            String::new()
        }
    };
    let doc = text("doc", diags);
    let unit = text("unit", diags);
    let ty = match obj.get("type") {
        Some(Value::String(t)) if PARAM_TYPES.contains(&t.as_str()) => t.as_str(),
        other => {
            error(
                diags,
                None,
                format!("{at}.type"),
                format!(
                    "expected one of {}, found {}",
                    quoted_list(PARAM_TYPES),
                    other.map_or_else(|| "nothing".to_owned(), ToString::to_string)
                ),
            );
            return None;
        }
    };
    let placeholder = |kind| intern::param_spec(name, &doc, &unit, kind);
    // The declaration with a placeholder default, to check the default against.
    let kind = match ty {
        "float" => {
            let (hard, soft) = declared_range(obj, &at, ty, diags)?;
            ParamKind::Float {
                default: hard.0,
                soft,
                hard,
            }
        }
        "int" => {
            let (hard, soft) = declared_range(obj, &at, ty, diags)?;
            let int = |x: f64| x.clamp(-9.0e15, 9.0e15).round() as i64;
            ParamKind::Int {
                default: int(hard.0),
                soft: (int(soft.0), int(soft.1)),
                hard: (int(hard.0), int(hard.1)),
            }
        }
        "bool" => ParamKind::Bool { default: false },
        "seed" => ParamKind::Seed { default: 0 },
        "text" => ParamKind::Text { default: "" },
        _ => {
            let options = choice_options(obj, &at, diags)?;
            ParamKind::Choice {
                default: 0,
                options: intern::strs(&options),
            }
        }
    };
    let Some(default) = obj.get("default") else {
        error(
            diags,
            None,
            format!("{at}.default"),
            format!("missing; expected {}", placeholder(kind).expected()),
        );
        return None;
    };
    let value = match param_value(placeholder(kind), default) {
        Ok(v) => v,
        Err(msg) => {
            error(diags, None, format!("{at}.default"), msg);
            return None;
        }
    };
    let kind = with_default(kind, &value);
    Some(GraphParam {
        spec: placeholder(kind),
        value,
    })
}

/// A number parameter's declared range: (hard, soft), soft defaulting to hard and clamped
/// into it.
fn declared_range(
    obj: &Map<String, Value>,
    at: &str,
    ty: &str,
    diags: &mut Vec<Diagnostic>,
) -> Option<((f64, f64), (f64, f64))> {
    let bound = |key: &str, diags: &mut Vec<Diagnostic>| -> Option<f64> {
        match obj.get(key) {
            Some(Value::Number(n)) => n.as_f64(),
            Some(other) => {
                error(
                    diags,
                    None,
                    format!("{at}.{key}"),
                    format!("expected a number, found {}", kind_of(other)),
                );
                None
            }
            None => None,
        }
    };
    let (Some(lo), Some(hi)) = (bound("min", diags), bound("max", diags)) else {
        error(
            diags,
            None,
            at,
            format!("a {ty} parameter needs \"min\" and \"max\" (its allowed range)"),
        );
        return None;
    };
    if lo.partial_cmp(&hi) != Some(std::cmp::Ordering::Less) {
        error(
            diags,
            None,
            format!("{at}.max"),
            format!("must be above min ({lo}), found {hi}"),
        );
        return None;
    }
    let slo = bound("soft_min", diags).unwrap_or(lo).clamp(lo, hi);
    let shi = bound("soft_max", diags).unwrap_or(hi).clamp(slo, hi);
    Some(((lo, hi), (slo, shi)))
}

/// A choice parameter's options: a non-empty array of non-empty names.
fn choice_options(
    obj: &Map<String, Value>,
    at: &str,
    diags: &mut Vec<Diagnostic>,
) -> Option<Vec<String>> {
    match obj.get("options") {
        Some(Value::Array(a))
            if !a.is_empty() && a.iter().all(|o| o.as_str().is_some_and(|s| !s.is_empty())) =>
        {
            Some(
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect(),
            )
        }
        other => {
            error(
                diags,
                None,
                format!("{at}.options"),
                format!(
                    "a choice parameter needs \"options\": a non-empty array of names, found {}",
                    other.map_or("nothing", kind_of)
                ),
            );
            None
        }
    }
}

/// The declaration's kind with its checked default in place of the placeholder.
fn with_default(kind: ParamKind, value: &ParamValue) -> ParamKind {
    match (kind, value) {
        (ParamKind::Float { soft, hard, .. }, ParamValue::Float(x)) => ParamKind::Float {
            default: *x,
            soft,
            hard,
        },
        (ParamKind::Int { soft, hard, .. }, ParamValue::Int(x)) => ParamKind::Int {
            default: *x,
            soft,
            hard,
        },
        (ParamKind::Seed { .. }, ParamValue::Int(x)) => ParamKind::Seed {
            default: u32::try_from(*x).unwrap_or(0),
        },
        (ParamKind::Bool { .. }, ParamValue::Bool(b)) => ParamKind::Bool { default: *b },
        (ParamKind::Choice { options, .. }, ParamValue::Choice(i)) => ParamKind::Choice {
            default: *i,
            options,
        },
        (ParamKind::Text { .. }, ParamValue::Text(t)) => ParamKind::Text {
            default: intern::str(t),
        },
        (k, _) => k,
    }
}

/// A node's `bind`: `{"node parameter": "graph parameter"}`, each checked (both exist, the
/// kinds match, every value the graph parameter allows is valid for the node's).
pub(super) fn parse_bindings(
    v: Option<&Value>,
    def: &crate::node::NodeDef,
    nid: Option<&str>,
    parameters: &[GraphParam],
    diags: &mut Vec<Diagnostic>,
) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let map = match v {
        None => return out,
        Some(Value::Object(map)) => map,
        Some(other) => {
            error(
                diags,
                nid,
                "bind",
                format!(
                    "expected an object mapping parameters to graph parameters, found {}",
                    kind_of(other)
                ),
            );
            return out;
        }
    };
    let names: Vec<&str> = def.params.iter().map(|p| p.name).collect();
    let graph_names: Vec<&str> = parameters.iter().map(|p| p.spec.name).collect();
    for (k, g) in map {
        let field = format!("bind.{k}");
        let Some(pi) = def.param_index(k) else {
            error(
                diags,
                nid,
                field,
                unknown_name("parameter", "parameters", def.spec.id, k, &names),
            );
            continue;
        };
        let Some(g) = g.as_str() else {
            error(
                diags,
                nid,
                field,
                format!("expected a graph parameter's name, found {}", kind_of(g)),
            );
            continue;
        };
        let Some(gp) = parameters.iter().find(|p| p.spec.name == g) else {
            error(
                diags,
                nid,
                field,
                if graph_names.is_empty() {
                    format!("no graph parameter \"{g}\": the graph declares none (add it under \"parameters\")")
                } else {
                    format!(
                        "no graph parameter \"{g}\"{}; the graph's parameters are {}",
                        suggest(g, &graph_names),
                        quoted_list(&graph_names)
                    )
                },
            );
            continue;
        };
        if let Some(problem) = crate::graph::binding_problem(gp.spec, &def.params[pi]) {
            error(diags, nid, field, problem);
            continue;
        }
        out.insert(k.clone(), g.to_owned());
    }
    out
}

/// Checks one JSON value against a parameter declaration.
pub fn param_value(spec: &ParamSpec, v: &Value) -> Result<ParamValue, String> {
    let found = || format!("expected {}, found {}", spec.expected(), kind_of(v));
    match spec.kind {
        ParamKind::Float { hard, .. } => {
            let x = v.as_f64().ok_or_else(found)?;
            if x.is_finite() && x >= hard.0 && x <= hard.1 {
                Ok(ParamValue::Float(x))
            } else {
                Err(format!(
                    "value {x} is outside the allowed range [{}, {}]",
                    hard.0, hard.1
                ))
            }
        }
        ParamKind::Int { hard, .. } => {
            let x = as_integer(v).ok_or_else(found)?;
            if x >= i128::from(hard.0) && x <= i128::from(hard.1) {
                Ok(ParamValue::Int(x as i64))
            } else {
                Err(format!(
                    "value {x} is outside the allowed range [{}, {}]",
                    hard.0, hard.1
                ))
            }
        }
        ParamKind::Seed { .. } => {
            let x = as_integer(v).ok_or_else(found)?;
            if (0..=i128::from(u32::MAX)).contains(&x) {
                Ok(ParamValue::Int(x as i64))
            } else {
                Err(format!(
                    "seed {x} is outside the allowed range [0, {}]",
                    u32::MAX
                ))
            }
        }
        ParamKind::Bool { .. } => v.as_bool().map(ParamValue::Bool).ok_or_else(found),
        ParamKind::Choice { options, .. } => {
            let s = v.as_str().ok_or_else(found)?;
            options
                .iter()
                .position(|o| *o == s)
                .map(ParamValue::Choice)
                .ok_or_else(|| {
                    format!(
                        "\"{s}\" is not one of {}{}",
                        quoted_list(options),
                        suggest(s, options)
                    )
                })
        }
        ParamKind::Text { .. } => v
            .as_str()
            .map(|s| ParamValue::Text(s.to_owned()))
            .ok_or_else(found),
    }
}

/// An integer JSON value (also `3.0`), widened so that huge values can be range-checked.
pub(super) fn as_integer(v: &Value) -> Option<i128> {
    if let Some(i) = v.as_i64() {
        return Some(i128::from(i));
    }
    if let Some(u) = v.as_u64() {
        return Some(i128::from(u));
    }
    let f = v.as_f64()?;
    (f.fract() == 0.0 && f.abs() < 1.0e30).then_some(f as i128)
}

/// The JSON value of a parameter, as files store it.
#[must_use]
pub fn param_to_json(spec: &ParamSpec, v: &ParamValue) -> Value {
    match (v, spec.kind) {
        (ParamValue::Float(x), _) => {
            serde_json::Number::from_f64(*x).map_or(Value::Null, Value::Number)
        }
        (ParamValue::Int(x), _) => Value::from(*x),
        (ParamValue::Bool(b), _) => Value::Bool(*b),
        (ParamValue::Choice(i), ParamKind::Choice { options, .. }) => {
            Value::String(options.get(*i).copied().unwrap_or_default().to_owned())
        }
        (ParamValue::Choice(i), _) => Value::from(*i),
        (ParamValue::Text(s), _) => Value::String(s.clone()),
    }
}

pub(super) fn number_value(x: f64) -> Value {
    serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
}
