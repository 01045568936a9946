//! Semantic diff of two graphs (`orogen diff`): what a reviewer needs to know — nodes added,
//! removed, renamed or retyped, parameters changed (old → new, with units), wires and outputs
//! changed, world, seed, resolution and name, graph parameters and what is bound to them,
//! the subgraph files nodes use and their recorded content — and nothing else (node
//! positions are layout, counted on one line).

use crate::document::graph_file::param_to_json;
use crate::graph::{Graph, GraphParam, NodeInstance, PortRef};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// One difference between graph A and graph B.
#[derive(Clone, Debug, PartialEq)]
pub enum Change {
    /// A top-level setting: its name, old and new value (with unit).
    Setting(&'static str, String, String),
    Added {
        id: String,
        ty: &'static str,
    },
    Removed {
        id: String,
        ty: &'static str,
    },
    /// The same node (type, parameters, wiring) under another id.
    Renamed {
        from: String,
        to: String,
    },
    Retyped {
        id: String,
        from: &'static str,
        to: &'static str,
    },
    Param {
        node: String,
        param: &'static str,
        old: String,
        new: String,
        unit: &'static str,
    },
    /// What feeds input `port` of `node` (`None`: unwired).
    Wire {
        node: String,
        port: &'static str,
        old: Option<String>,
        new: Option<String>,
    },
    /// What a named output writes (`None`: not an output).
    Output {
        name: String,
        old: Option<String>,
        new: Option<String>,
    },
    /// A graph parameter's declaration (`None`: not declared): value and accepted values.
    Parameter {
        name: String,
        old: Option<String>,
        new: Option<String>,
    },
    /// What graph parameter a node parameter is bound to (`None`: not bound).
    Binding {
        node: String,
        param: String,
        old: Option<String>,
        new: Option<String>,
    },
    /// A subgraph node's file (`what` = "file") or the content recorded for it ("content").
    Subgraph {
        node: String,
        what: &'static str,
        old: String,
        new: String,
    },
    /// Nodes moved on the canvas (layout only).
    Moved(usize),
}

fn or_none(v: Option<&String>) -> &str {
    v.map_or("(none)", String::as_str)
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Change::Setting(what, a, b) => write!(f, "~ {what}: {a} → {b}"),
            Change::Added { id, ty } => write!(f, "+ node \"{id}\" ({ty})"),
            Change::Removed { id, ty } => write!(f, "- node \"{id}\" ({ty})"),
            Change::Renamed { from, to } => write!(f, "~ node \"{from}\" renamed to \"{to}\""),
            Change::Retyped { id, from, to } => {
                write!(f, "~ node \"{id}\": type {from} → {to}")
            }
            Change::Param {
                node,
                param,
                old,
                new,
                unit,
            } => {
                let u = match *unit {
                    "" => String::new(),
                    "°" | "%" => (*unit).to_owned(),
                    _ => format!(" {unit}"),
                };
                write!(f, "~ {node}.{param}: {old}{u} → {new}{u}")
            }
            Change::Wire {
                node,
                port,
                old,
                new,
            } => write!(
                f,
                "~ wire into {node}.{port}: {} → {}",
                or_none(old.as_ref()),
                or_none(new.as_ref())
            ),
            Change::Output { name, old, new } => match (old, new) {
                (None, Some(n)) => write!(f, "+ output \"{name}\" = {n}"),
                (Some(o), None) => write!(f, "- output \"{name}\" (was {o})"),
                _ => write!(
                    f,
                    "~ output \"{name}\": {} → {}",
                    or_none(old.as_ref()),
                    or_none(new.as_ref())
                ),
            },
            Change::Parameter { name, old, new } => match (old, new) {
                (None, Some(n)) => write!(f, "+ graph parameter \"{name}\" = {n}"),
                (Some(o), None) => write!(f, "- graph parameter \"{name}\" (was {o})"),
                _ => write!(
                    f,
                    "~ graph parameter \"{name}\": {} → {}",
                    or_none(old.as_ref()),
                    or_none(new.as_ref())
                ),
            },
            Change::Binding {
                node,
                param,
                old,
                new,
            } => {
                let b = |v: &Option<String>| {
                    v.as_ref().map_or_else(
                        || "(its own value)".to_owned(),
                        |g| format!("graph parameter \"{g}\""),
                    )
                };
                write!(f, "~ {node}.{param} bound to: {} → {}", b(old), b(new))
            }
            Change::Subgraph {
                node,
                what,
                old,
                new,
            } => write!(f, "~ node \"{node}\": subgraph {what} {old} → {new}"),
            Change::Moved(n) => write!(
                f,
                "  {n} node{} moved on the canvas (layout only)",
                if *n == 1 { "" } else { "s" }
            ),
        }
    }
}

/// A node's parameters as files write them, by name; bound ones left out (they follow the
/// graph parameter, whose change is reported once).
fn params_json(n: &NodeInstance) -> BTreeMap<&'static str, (String, &'static str)> {
    n.def
        .params
        .iter()
        .zip(&n.params)
        .filter(|(s, _)| !n.bindings.contains_key(s.name))
        .map(|(s, v)| (s.name, (param_to_json(s, v).to_string(), s.unit)))
        .collect()
}

/// The names, each once, in the order first met.
fn in_order(names: impl Iterator<Item = &'static str>) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for n in names {
        if !out.contains(&n) {
            out.push(n);
        }
    }
    out
}

/// A graph parameter as `8 (an integer in [1, 16])`.
fn parameter_text(p: &GraphParam) -> String {
    let unit = if p.spec.unit.is_empty() {
        String::new()
    } else {
        format!(" {}", p.spec.unit)
    };
    format!("{}{unit} ({})", p.value.display(p.spec), p.spec.expected())
}

/// The differences from `a` to `b`, in a stable order: settings, removed, renamed, added
/// nodes, then per node (by id) its type, parameters and wires, then outputs, then layout.
#[must_use]
pub fn diff(a: &Graph, b: &Graph) -> Vec<Change> {
    let mut out = Vec::new();
    settings(a, b, &mut out);
    let ida: BTreeMap<&str, &NodeInstance> = a.nodes.iter().map(|n| (n.id.as_str(), n)).collect();
    let idb: BTreeMap<&str, &NodeInstance> = b.nodes.iter().map(|n| (n.id.as_str(), n)).collect();
    let removed: Vec<&str> = ida
        .keys()
        .filter(|k| !idb.contains_key(*k))
        .copied()
        .collect();
    let added: Vec<&str> = idb
        .keys()
        .filter(|k| !ida.contains_key(*k))
        .copied()
        .collect();
    let renamed = renames(&ida, &idb, &removed, &added);
    let renamed_to: BTreeSet<&str> = renamed.values().copied().collect();
    for r in removed.iter().filter(|r| !renamed.contains_key(*r)) {
        out.push(Change::Removed {
            id: (*r).to_owned(),
            ty: ida[r].def.spec.id,
        });
    }
    for (from, to) in &renamed {
        out.push(Change::Renamed {
            from: (*from).to_owned(),
            to: (*to).to_owned(),
        });
    }
    for n in added.iter().filter(|n| !renamed_to.contains(*n)) {
        out.push(Change::Added {
            id: (*n).to_owned(),
            ty: idb[n].def.spec.id,
        });
    }
    // A reference in A, written as B would write it (renamed nodes under their new id).
    let map = |r: &PortRef| {
        let node = renamed.get(r.node.as_str()).map_or(r.node.as_str(), |n| *n);
        PortRef::new(node, r.output.clone()).to_string()
    };
    let mut moved = 0;
    let pairs = ida
        .iter()
        .filter_map(|(id, x)| Some((*x, *idb.get(renamed.get(id).unwrap_or(id))?)));
    for (x, y) in pairs {
        if x.position != y.position {
            moved += 1;
        }
        node_changes(x, y, &map, &mut out);
    }
    let names: BTreeSet<&String> = a.outputs.keys().chain(b.outputs.keys()).collect();
    for name in names {
        let old = a.outputs.get(name).map(map);
        let new = b.outputs.get(name).map(ToString::to_string);
        if old != new {
            out.push(Change::Output {
                name: name.clone(),
                old,
                new,
            });
        }
    }
    if moved > 0 {
        out.push(Change::Moved(moved));
    }
    out
}

/// The graph's own settings and parameters that differ.
fn settings(a: &Graph, b: &Graph, out: &mut Vec<Change>) {
    let setting = |out: &mut Vec<Change>, what, x: String, y: String| {
        if x != y {
            out.push(Change::Setting(what, x, y));
        }
    };
    setting(
        out,
        "name",
        format!("{:?}", a.name),
        format!("{:?}", b.name),
    );
    setting(out, "seed", a.seed.to_string(), b.seed.to_string());
    setting(
        out,
        "resolution",
        a.resolution.to_string(),
        b.resolution.to_string(),
    );
    setting(
        out,
        "world size",
        format!("{} m", a.world.size_m),
        format!("{} m", b.world.size_m),
    );
    setting(
        out,
        "height range",
        format!("{} … {} m", a.world.height_min_m, a.world.height_max_m),
        format!("{} … {} m", b.world.height_min_m, b.world.height_max_m),
    );
    let short = |d: &str| {
        let t: String = d.chars().take(60).collect();
        if t.len() < d.len() {
            format!("{t:?}…")
        } else {
            format!("{t:?}")
        }
    };
    setting(out, "doc", short(&a.doc), short(&b.doc));
    let names: BTreeSet<&str> = a
        .parameters
        .iter()
        .chain(&b.parameters)
        .map(|p| p.spec.name)
        .collect();
    for name in names {
        let old = a.parameter(name).map(parameter_text);
        let new = b.parameter(name).map(parameter_text);
        if old != new {
            out.push(Change::Parameter {
                name: name.to_owned(),
                old,
                new,
            });
        }
    }
}

/// Removed nodes that are renamed added ones: of the same type, parameters and wiring, each
/// the only such match of the other.
fn renames<'g>(
    ida: &BTreeMap<&'g str, &NodeInstance>,
    idb: &BTreeMap<&'g str, &NodeInstance>,
    removed: &[&'g str],
    added: &[&'g str],
) -> BTreeMap<&'g str, &'g str> {
    // A removed node and an added one of the same type, parameters and wiring, each the only
    // such match of the other, is a rename.
    let same = |x: &NodeInstance, y: &NodeInstance| {
        x.def.spec.id == y.def.spec.id
            && x.params == y.params
            && x.inputs == y.inputs
            && x.bindings == y.bindings
            && x.subgraph.as_ref().map(|s| (&s.path, &s.recorded_hash))
                == y.subgraph.as_ref().map(|s| (&s.path, &s.recorded_hash))
    };
    let mut renamed: BTreeMap<&str, &str> = BTreeMap::new();
    for r in removed {
        let m: Vec<&str> = added
            .iter()
            .filter(|n| same(ida[r], idb[*n]))
            .copied()
            .collect();
        if let [n] = m[..] {
            let back = removed.iter().filter(|x| same(ida[*x], idb[n])).count();
            if back == 1 {
                renamed.insert(*r, n);
            }
        }
    }
    renamed
}

/// How node `x` of A became node `y` of B (the same node, perhaps renamed): its type, its
/// subgraph file, parameters, bindings and wires (`map` writes A's references as B would).
fn node_changes(
    x: &NodeInstance,
    y: &NodeInstance,
    map: &impl Fn(&PortRef) -> String,
    out: &mut Vec<Change>,
) {
    let node = y.id.clone();
    // Bypass changes what builds make; a label only what the canvas shows.
    if x.bypass != y.bypass {
        out.push(Change::Param {
            node: node.clone(),
            param: "bypass",
            old: x.bypass.to_string(),
            new: y.bypass.to_string(),
            unit: "",
        });
    }
    if x.label != y.label {
        out.push(Change::Param {
            node: node.clone(),
            param: "label",
            old: format!("{:?}", x.label),
            new: format!("{:?}", y.label),
            unit: "",
        });
    }
    if x.def.spec.id != y.def.spec.id {
        out.push(Change::Retyped {
            id: node,
            from: x.def.spec.id,
            to: y.def.spec.id,
        });
        return;
    }
    if let (Some(sx), Some(sy)) = (&x.subgraph, &y.subgraph) {
        if sx.path != sy.path {
            out.push(Change::Subgraph {
                node: node.clone(),
                what: "file",
                old: sx.path.clone(),
                new: sy.path.clone(),
            });
        }
        let h = |s: &str| s.get(..19).unwrap_or(s).to_owned();
        if sx.recorded_hash != sy.recorded_hash {
            out.push(Change::Subgraph {
                node: node.clone(),
                what: "content",
                old: h(&sx.recorded_hash),
                new: h(&sy.recorded_hash),
            });
        }
    }
    let (px, py) = (params_json(x), params_json(y));
    let pnames = in_order(x.def.params.iter().chain(y.def.params).map(|p| p.name));
    for param in pnames {
        let bx = x.bindings.get(param);
        let by = y.bindings.get(param);
        if bx != by {
            out.push(Change::Binding {
                node: node.clone(),
                param: param.to_owned(),
                old: bx.cloned(),
                new: by.cloned(),
            });
        }
        let (old, new) = (px.get(param), py.get(param));
        if old.map(|o| &o.0) != new.map(|n| &n.0) && (old.is_some() && new.is_some() || bx == by) {
            let unit = new.or(old).map_or("", |v| v.1);
            out.push(Change::Param {
                node: node.clone(),
                param,
                old: old.map_or_else(|| "(none)".to_owned(), |v| v.0.clone()),
                new: new.map_or_else(|| "(none)".to_owned(), |v| v.0.clone()),
                unit,
            });
        }
    }
    let ports = in_order(
        x.def
            .spec
            .inputs
            .iter()
            .chain(y.def.spec.inputs)
            .map(|p| p.name),
    );
    let wire = |n: &NodeInstance, port: &str| {
        n.def
            .input_index(port)
            .and_then(|i| n.inputs.get(i).cloned().flatten())
    };
    for port in ports {
        let old = wire(x, port).as_ref().map(map);
        let new = wire(y, port).as_ref().map(ToString::to_string);
        if old != new {
            out.push(Change::Wire {
                node: node.clone(),
                port,
                old,
                new,
            });
        }
    }
}
