//! Editing with subgraphs: making a subgraph node from a graph file, collapsing a selection
//! of nodes into a new subgraph file, reloading subgraph files after they were edited, and
//! relative paths between files. The editor's library panel, "collapse to subgraph" and
//! "open subgraph" use these; they are here so they can be tested without a UI.

use crate::document::graph_file;
use crate::graph::{Graph, NodeInstance, PortRef, Subgraph, SUBGRAPH_TYPE};
use crate::node::{NodeDecl, PortKind, Registry};
use crate::nodes::io::graph_input;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

/// `to` relative to the folder `from_dir`, `/`-separated (`../lib/x.json` when needed);
/// `None` when they share no root (other drives).
#[must_use]
pub fn relative_path(from_dir: &Path, to: &Path) -> Option<String> {
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let (from, to) = (canon(from_dir), canon(to));
    let a: Vec<Component> = from.components().collect();
    let b: Vec<Component> = to.components().collect();
    if a.first() != b.first() {
        return None;
    }
    let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut parts: Vec<String> = vec!["..".to_owned(); a.len() - common];
    parts.extend(
        b[common..]
            .iter()
            .map(|c| c.as_os_str().to_string_lossy().into_owned()),
    );
    Some(parts.join("/"))
}

/// Loads the graph file `base_dir/rel` as a subgraph (its hash recorded as it is now).
pub fn load_subgraph(base_dir: &Path, rel: &str) -> Result<Subgraph, String> {
    let graph = graph_file::load_file(&base_dir.join(rel)).map_err(|d| d.to_string())?;
    let hash = graph_file::content_hash(&graph);
    Ok(Subgraph {
        path: rel.to_owned(),
        recorded_hash: hash.clone(),
        hash,
        graph,
    })
}

/// A subgraph node `id` using `sub`: its parameters at the inner graph's values.
#[must_use]
pub fn subgraph_node(id: &str, sub: Subgraph) -> NodeInstance {
    let def = sub.interface();
    let mut n = NodeInstance::new(id, def);
    n.params = sub
        .graph
        .parameters
        .iter()
        .map(|p| p.value.clone())
        .collect();
    n.subgraph = Some(Arc::new(sub));
    n
}

/// A node id not used in `g`, from `stem` (`stem`, `stem_2`, …).
#[must_use]
pub fn fresh_id(g: &Graph, stem: &str) -> String {
    let stem: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(100)
        .collect();
    let stem = if stem.is_empty() {
        "node".to_owned()
    } else {
        stem
    };
    crate::graph::unique_name(&stem, |c| g.node(c).is_some())
}

/// Reloads every subgraph file of `g` (relative to `base_dir`) whose content changed, keeping
/// each node's parameter values by name and its wires by port name. With `accept`, the new
/// content is recorded as accepted (the user edited it from here); otherwise the old hash
/// stays recorded and `orogen check` reports the change. Returns the ids of the nodes
/// reloaded.
pub fn refresh_subgraphs(g: &mut Graph, base_dir: &Path, accept: bool) -> Vec<String> {
    let mut changed = Vec::new();
    for n in &mut g.nodes {
        let Some(old) = n.subgraph.clone() else {
            continue;
        };
        let Ok(mut sub) = load_subgraph(base_dir, &old.path) else {
            continue;
        };
        if sub.hash == old.hash {
            continue;
        }
        if !accept {
            sub.recorded_hash.clone_from(&old.recorded_hash);
        }
        use_subgraph(n, sub);
        changed.push(n.id.clone());
    }
    g.apply_parameters();
    changed
}

/// Makes node `n` use `sub`, keeping its parameter values by name (where still valid) and its
/// wires by input name.
fn use_subgraph(n: &mut NodeInstance, sub: Subgraph) {
    let def = sub.interface();
    let mut params: Vec<_> = sub
        .graph
        .parameters
        .iter()
        .map(|p| p.value.clone())
        .collect();
    for (spec, v) in n.def.params.iter().zip(&n.params) {
        if let Some(i) = def.param_index(spec.name) {
            if crate::graph::check_value(&def.params[i], v).is_ok() {
                params[i] = v.clone();
            }
        }
    }
    let inputs = def
        .spec
        .inputs
        .iter()
        .map(|p| {
            n.def
                .input_index(p.name)
                .and_then(|i| n.inputs.get(i).cloned().flatten())
        })
        .collect();
    n.def = def;
    n.params = params;
    n.inputs = inputs;
    n.bindings.retain(|k, _| def.param_index(k).is_some());
    n.subgraph = Some(Arc::new(sub));
}

/// Points subgraph node `id` of `g` at the graph file `base_dir/rel` (the user saved the
/// edited subgraph as a new file): the node keeps its parameter values and wires by name, and
/// the new file's content is recorded.
pub fn repoint_subgraph(g: &mut Graph, id: &str, base_dir: &Path, rel: &str) -> Result<(), String> {
    let sub = load_subgraph(base_dir, rel)?;
    let n = g
        .node_mut(id)
        .filter(|n| n.subgraph.is_some())
        .ok_or_else(|| format!("no subgraph node \"{id}\""))?;
    use_subgraph(n, sub);
    g.apply_parameters();
    Ok(())
}

/// The graph files in `dir` (`*.json`, not its subfolders) with a subgraph node whose file is
/// `file`: the graphs an edit of a shared library file changes. Files that cannot be read or
/// parsed are skipped; each is read with the graph files' size limit.
#[must_use]
pub fn users_of(dir: &Path, file: &Path) -> Vec<PathBuf> {
    let canon = |p: &Path| std::fs::canonicalize(p).ok();
    let Some(target) = canon(file) else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut users: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json") && p.is_file())
        .filter(|p| {
            let Ok(text) = crate::io::trust::read_text(p, crate::io::trust::MAX_GRAPH_BYTES, None)
            else {
                return false;
            };
            let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) else {
                return false;
            };
            let folder = p.parent().unwrap_or(dir);
            v["nodes"].as_array().is_some_and(|nodes| {
                nodes.iter().any(|n| {
                    n["graph"]
                        .as_str()
                        .is_some_and(|rel| canon(&folder.join(rel)).as_ref() == Some(&target))
                })
            })
        })
        .collect();
    users.sort();
    users
}

/// What collapsing moved where.
#[derive(Debug)]
pub struct Collapsed {
    /// The new subgraph node's id.
    pub node: String,
    /// The file written.
    pub file: PathBuf,
}

/// Collapses the nodes `ids` of `g` into a new graph file `file` (written atomically) used by
/// one subgraph node in their place: wires coming in from other nodes become `graph_input`
/// nodes (one per source), wires going out (and the graph's outputs) become the subgraph's
/// named outputs, and the node takes their place on the canvas. `base_dir` is the folder of
/// `g`'s file (the subgraph path is relative to it).
pub fn collapse(
    g: &mut Graph,
    ids: &[String],
    base_dir: &Path,
    file: &Path,
) -> Result<Collapsed, String> {
    let set: BTreeSet<&str> = ids.iter().map(String::as_str).collect();
    if set.is_empty() {
        return Err("select the nodes to collapse first".into());
    }
    for id in &set {
        if g.node(id).is_none() {
            return Err(format!("no node \"{id}\""));
        }
    }
    let stem = file.file_stem().map_or_else(
        || "subgraph".to_owned(),
        |s| s.to_string_lossy().into_owned(),
    );
    let (mut inner, sources, outs) = inner_graph(g, &set, &stem)?;
    if inner.outputs.is_empty() {
        return Err("nothing outside reads the selected nodes: a subgraph needs an output (wire one of them to another node or to an output first)".into());
    }
    inner
        .parameters
        .sort_by(|a, b| a.spec.name.cmp(b.spec.name));
    if let Some(parent) = file.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    graph_file::save_file(file, &inner)
        .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    let rel = relative_path(base_dir, file).ok_or_else(|| {
        format!(
            "{} is not reachable from {}",
            file.display(),
            base_dir.display()
        )
    })?;
    let sub = load_subgraph(base_dir, &rel)?;
    let id = fresh_id(g, &stem);
    let mut node = subgraph_node(&id, sub);
    let chosen: Vec<&NodeInstance> = g
        .nodes
        .iter()
        .filter(|n| set.contains(n.id.as_str()))
        .collect();
    let k = chosen.len() as f64;
    node.position = [
        chosen.iter().map(|n| n.position[0]).sum::<f64>() / k,
        chosen.iter().map(|n| n.position[1]).sum::<f64>() / k,
    ];
    for p in &inner.parameters {
        node.bindings
            .insert(p.spec.name.to_owned(), p.spec.name.to_owned());
    }
    for (r, name) in &sources {
        if let Some(i) = node.def.input_index(name) {
            node.inputs[i] = Some(r.clone());
        }
    }
    g.nodes.retain(|n| !set.contains(n.id.as_str()));
    let rewire = |r: &mut PortRef| {
        if let Some(name) = outs.get(r) {
            *r = PortRef::new(id.clone(), name.clone());
        }
    };
    for n in &mut g.nodes {
        n.inputs.iter_mut().flatten().for_each(rewire);
    }
    g.outputs.values_mut().for_each(rewire);
    g.nodes.push(node);
    g.apply_parameters();
    Ok(Collapsed {
        node: id,
        file: file.to_path_buf(),
    })
}

/// Wires from outside into a subgraph (by their source: the graph input made for it) and out
/// of it (by the inner port read: the output made for it).
type Crossings = BTreeMap<PortRef, String>;

/// The graph the nodes in `set` make on their own: a graph input per outside source they
/// read, an output per inner port read from outside, the graph parameters they are bound to.
fn inner_graph(
    g: &Graph,
    set: &BTreeSet<&str>,
    stem: &str,
) -> Result<(Graph, Crossings, Crossings), String> {
    let reg = Registry::builtin();
    let mut inner = Graph::new(stem.to_owned(), g.world, g.resolution, g.seed);
    // Incoming wires: one graph input per outside source.
    let mut sources: BTreeMap<PortRef, String> = BTreeMap::new();
    let mut taken: BTreeSet<String> = set.iter().map(|s| (*s).to_owned()).collect();
    for n in g.nodes.iter().filter(|n| set.contains(n.id.as_str())) {
        let mut m = n.clone();
        for r in m.inputs.iter_mut().flatten() {
            if set.contains(r.node.as_str()) {
                continue;
            }
            let kind = g.output_kind(r).unwrap_or(PortKind::Height);
            let name = if let Some(name) = sources.get(r) {
                name.clone()
            } else {
                let name = crate::graph::unique_name(&format!("{}_{}", r.node, r.output), |c| {
                    taken.contains(c)
                });
                taken.insert(name.clone());
                sources.insert(r.clone(), name.clone());
                let ty = match kind {
                    PortKind::Height => graph_input::GraphInput::SPEC.id,
                    PortKind::Mask => graph_input::GraphInputMask::SPEC.id,
                    PortKind::Color => graph_input::GraphInputColor::SPEC.id,
                    PortKind::Scalar => graph_input::GraphInputScalar::SPEC.id,
                };
                let def = reg
                    .get(ty)
                    .ok_or_else(|| format!("no node type \"{ty}\""))?;
                let mut input = NodeInstance::new(name.clone(), def);
                input.position = [n.position[0] - 240.0, n.position[1]];
                inner.nodes.push(input);
                name
            };
            *r = PortRef::new(name, "out");
        }
        // Bindings to the graph's parameters: the inner graph declares the same parameters,
        // and the subgraph node is bound to the outer ones (see below).
        for gp in m.bindings.values() {
            if inner.parameter(gp).is_none() {
                if let Some(p) = g.parameter(gp) {
                    inner.parameters.push(p.clone());
                }
            }
        }
        inner.nodes.push(m);
    }
    // Outgoing wires and outputs: one named output per inner port read from outside.
    let mut outs: BTreeMap<PortRef, String> = BTreeMap::new();
    let readers: Vec<PortRef> = g
        .nodes
        .iter()
        .filter(|n| !set.contains(n.id.as_str()))
        .flat_map(|n| n.inputs.iter().flatten().cloned())
        .chain(g.outputs.values().cloned())
        .filter(|r| set.contains(r.node.as_str()))
        .collect();
    for r in readers {
        if outs.contains_key(&r) {
            continue;
        }
        let name = crate::graph::unique_name(&format!("{}_{}", r.node, r.output), |c| {
            outs.values().any(|v| v == c)
        });
        inner.outputs.insert(name.clone(), r.clone());
        outs.insert(r, name);
    }
    Ok((inner, sources, outs))
}

/// Whether `id` names a subgraph node type in files.
#[must_use]
pub fn is_subgraph_type(id: &str) -> bool {
    id == SUBGRAPH_TYPE
}
