//! Saving: the graph as canonical JSON (every parameter written out, nodes sorted by id,
//! keys in a fixed order), so that saving an unchanged graph gives the same bytes.

use super::{params::number_value, params::param_to_json, CURRENT_VERSION, FORMAT_TAG};
use crate::graph::{Graph, GraphParam, NodeInstance};
use crate::node::ParamKind;
use serde_json::{Map, Value};
use std::path::Path;

/// `world.georef` as the file holds it.
fn georef_value(r: &crate::graph::Georef) -> Value {
    let mut geo = serde_json::json!({
        "geographic": r.geographic,
        "west": number_value(r.west),
        "south": number_value(r.south),
        "east": number_value(r.east),
        "north": number_value(r.north),
    });
    if let (Some(code), Some(o)) = (r.epsg, geo.as_object_mut()) {
        o.insert("crs".into(), Value::from(format!("EPSG:{code}")));
    }
    geo
}

/// The graph as a JSON value with every parameter written out and nodes sorted by id;
/// subgraph nodes reference their files.
#[must_use]
pub fn to_value(g: &Graph) -> Value {
    to_value_with(g, false)
}

/// The JSON of one graph parameter's declaration, its value as the default.
pub(super) fn parameter_to_json(p: &GraphParam) -> Value {
    let mut m = Map::new();
    let (ty, range) = match p.spec.kind {
        ParamKind::Float { soft, hard, .. } => ("float", Some((hard, soft))),
        ParamKind::Int { soft, hard, .. } => (
            "int",
            Some((
                (hard.0 as f64, hard.1 as f64),
                (soft.0 as f64, soft.1 as f64),
            )),
        ),
        ParamKind::Bool { .. } => ("bool", None),
        ParamKind::Seed { .. } => ("seed", None),
        ParamKind::Text { .. } => ("text", None),
        ParamKind::Choice { options, .. } => {
            m.insert("options".into(), Value::from(options.to_vec()));
            ("choice", None)
        }
    };
    m.insert("type".into(), Value::from(ty));
    m.insert("default".into(), param_to_json(p.spec, &p.value));
    if let Some((hard, soft)) = range {
        let num = |x: f64| {
            if ty == "int" {
                Value::from(x as i64)
            } else {
                number_value(x)
            }
        };
        m.insert("min".into(), num(hard.0));
        m.insert("max".into(), num(hard.1));
        if soft != hard {
            m.insert("soft_min".into(), num(soft.0));
            m.insert("soft_max".into(), num(soft.1));
        }
    }
    if !p.spec.unit.is_empty() {
        m.insert("unit".into(), Value::from(p.spec.unit));
    }
    if !p.spec.doc.is_empty() {
        m.insert("doc".into(), Value::from(p.spec.doc));
    }
    Value::Object(m)
}

/// [`to_value`], with every subgraph's graph `embedded` when `embed` (a self-contained
/// document: build copies, tiled plans, recovery files).
#[must_use]
pub fn to_value_with(g: &Graph, embed: bool) -> Value {
    to_value_as(
        g,
        if embed {
            SubgraphsAs::Embedded
        } else {
            SubgraphsAs::Recorded
        },
    )
}

/// How [`to_value_as`] writes a subgraph node.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum SubgraphsAs {
    /// Its path and the hash the file recorded (the file as saved).
    Recorded,
    /// Its path, the recorded hash and the whole graph embedded.
    Embedded,
    /// Its path and the content hash of the graph as loaded now: what [`content_hash`] hashes,
    /// so a graph's hash covers its subgraphs at any depth without serialising them again.
    Current,
}

pub(super) fn to_value_as(g: &Graph, how: SubgraphsAs) -> Value {
    let mut nodes: Vec<&NodeInstance> = g.nodes.iter().collect();
    nodes.sort_by(|a, b| a.id.cmp(&b.id));
    let nodes: Vec<Value> = nodes
        .into_iter()
        .map(|n| {
            let params: Map<String, Value> = n
                .def
                .params
                .iter()
                .zip(&n.params)
                .filter(|(s, _)| !n.bindings.contains_key(s.name))
                .map(|(s, v)| (s.name.to_owned(), param_to_json(s, v)))
                .collect();
            let inputs: Map<String, Value> = n
                .def
                .spec
                .inputs
                .iter()
                .zip(&n.inputs)
                .filter_map(|(s, r)| {
                    r.as_ref()
                        .map(|r| (s.name.to_owned(), Value::String(r.to_string())))
                })
                .collect();
            let mut v = serde_json::json!({
                "id": n.id,
                "type": n.def.spec.id,
                "params": params,
                "inputs": inputs,
                "position": [canvas_unit(n.position[0]), canvas_unit(n.position[1])],
            });
            if let Some(o) = v.as_object_mut() {
                if n.bypass {
                    o.insert("bypass".into(), Value::Bool(true));
                }
                if !n.label.is_empty() {
                    o.insert("label".into(), Value::from(n.label.as_str()));
                }
                if !n.bindings.is_empty() {
                    let bind: Map<String, Value> = n
                        .bindings
                        .iter()
                        .map(|(k, g)| (k.clone(), Value::from(g.as_str())))
                        .collect();
                    o.insert("bind".into(), Value::Object(bind));
                }
                if let Some(sg) = &n.subgraph {
                    o.insert("graph".into(), Value::from(sg.path.as_str()));
                    let hash = if how == SubgraphsAs::Current {
                        &sg.hash
                    } else {
                        &sg.recorded_hash
                    };
                    o.insert("hash".into(), Value::from(hash.as_str()));
                    if how == SubgraphsAs::Embedded {
                        o.insert("embedded".into(), to_value_as(&sg.graph, how));
                    }
                }
            }
            v
        })
        .collect();
    let outputs: Map<String, Value> = g
        .outputs
        .iter()
        .map(|(k, r)| (k.clone(), Value::String(r.to_string())))
        .collect();
    let mut v = serde_json::json!({
        "format": FORMAT_TAG,
        "version": CURRENT_VERSION,
        "name": g.name,
        "seed": g.seed,
        "world": {
            "size_m": number_value(g.world.size_m),
            "height_min_m": number_value(g.world.height_min_m),
            "height_max_m": number_value(g.world.height_max_m),
        },
        "resolution": g.resolution,
        "nodes": nodes,
        "outputs": outputs,
    });
    if let (Some(r), Some(w)) = (g.georef, v.get_mut("world").and_then(Value::as_object_mut)) {
        w.insert("georef".into(), georef_value(&r));
    }
    if let Some(o) = v.as_object_mut() {
        if let Some(r) = &g.nodata {
            o.insert("nodata".into(), Value::String(r.to_string()));
        }
        if !g.doc.is_empty() {
            o.insert("doc".into(), Value::from(g.doc.as_str()));
        }
        if !g.parameters.is_empty() {
            let ps: Map<String, Value> = g
                .parameters
                .iter()
                .map(|p| (p.spec.name.to_owned(), parameter_to_json(p)))
                .collect();
            o.insert("parameters".into(), Value::Object(ps));
        }
        if !g.frames.is_empty() {
            let frames: Vec<Value> = g
                .frames
                .iter()
                .map(|f| {
                    serde_json::json!({
                        "title": f.title,
                        "rect": f.rect.map(canvas_unit),
                    })
                })
                .collect();
            o.insert("frames".into(), Value::Array(frames));
        }
    }
    v
}

/// The text of [`to_value_with`]`(g, true)`: a self-contained copy of the graph.
#[must_use]
pub fn to_string_embedded(g: &Graph) -> String {
    let mut s =
        serde_json::to_string_pretty(&canonical(to_value_with(g, true))).unwrap_or_default();
    s.push('\n');
    s
}

/// The file text: pretty JSON with sorted keys and a final newline. Same graph, same bytes.
#[must_use]
pub fn to_string(g: &Graph) -> String {
    // serde_json's map is a BTreeMap (no `preserve_order`), so keys come out sorted.
    let mut s = serde_json::to_string_pretty(&canonical(to_value(g))).unwrap_or_default();
    s.push('\n');
    s
}

/// A canvas coordinate as a whole number of units (positions only place nodes on the
/// canvas: a dragged node's fractions would make every save of it a diff).
fn canvas_unit(v: f64) -> Value {
    if v.is_finite() && v.abs() < 1e15 {
        Value::from(v.round() as i64)
    } else {
        Value::from(0)
    }
}

/// Sorts object keys recursively, whatever map type serde_json was built with.
pub(super) fn canonical(v: Value) -> Value {
    match v {
        Value::Object(map) => {
            let mut entries: Vec<(String, Value)> = map.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k, canonical(v)))
                    .collect(),
            )
        }
        Value::Array(a) => Value::Array(a.into_iter().map(canonical).collect()),
        other => other,
    }
}

/// Saves a graph atomically.
pub fn save_file(path: &Path, g: &Graph) -> std::io::Result<()> {
    crate::io::atomic::write_bytes_atomic(path, to_string(g).as_bytes())
}
