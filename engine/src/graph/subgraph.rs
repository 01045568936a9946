//! Graph parameters and subgraphs (format v2).
//!
//! A **graph parameter** is a named, typed, documented knob; node parameters bound to it
//! take its value ([`Graph::apply_parameters`]). A **subgraph** node uses another graph file
//! as one node: its `graph_input` nodes become the node's inputs, its named outputs the
//! node's outputs, its graph parameters the node's parameters.
//!
//! Evaluation never sees a subgraph node: [`Graph::flattened`] expands each one into the
//! inner graph's nodes (ids prefixed `node/`, which no file id can contain) plus one node with
//! the subgraph's own id that hands the inner outputs on, so results, previews and messages
//! keep naming the node the user placed. Every inner node keeps its own content-hash cache
//! key, so editing the inner file recomputes exactly what depends on the change.
//!
//! Every entry point that plans or evaluates (`Evaluator::evaluate`, `Coarse::evaluate`, the
//! tile plan, `tiles::evaluate_region`, `parity::compare`, the memory estimate) flattens first; a
//! graph without subgraphs is borrowed, not copied. The hand-on node and the `graph_input` nodes
//! copy their field once, a memcpy beside the nodes around them; not worth a zero-copy path.
//!
//! **Seeds come from the graph seed and the node's `seed` parameter, never from ids**, so the
//! prefixed inner nodes give exactly the terrain of the same nodes written out (tested byte for
//! byte); a subgraph exposes a `seed` parameter to vary two uses of it.
//!
//! **Bindings are copied, not looked up.** [`Graph::apply_parameters`] copies each graph
//! parameter's value into the node parameters bound to it (after loading, after `set_parameter`,
//! and inside each subgraph instance before expanding), so nodes and cache keys see plain
//! values. A binding is refused at load unless every value the graph parameter allows is valid
//! for the node parameter.

use super::{Graph, NodeInstance, PortRef};
use crate::node::intern::{self, Dynamic};
use crate::node::{
    Category, Coercion, NodeDef, ParamKind, ParamSpec, ParamValue, PortKind, PortSpec,
};
use std::borrow::Cow;
use std::collections::BTreeMap;

/// The node type id of subgraph nodes in files.
pub const SUBGRAPH_TYPE: &str = "subgraph";

/// One graph parameter: its declaration (name, doc, unit, kind with default and ranges) and
/// its value in this graph.
#[derive(Clone, Debug, PartialEq)]
pub struct GraphParam {
    pub spec: &'static ParamSpec,
    pub value: ParamValue,
}

/// The graph file a subgraph node uses.
#[derive(Debug)]
pub struct Subgraph {
    /// The path as written in the including file: relative to its folder, `/`-separated.
    pub path: String,
    /// The content hash recorded in the including file when the node was made (or last
    /// accepted): `blake3:<hex>`.
    pub recorded_hash: String,
    /// The content hash of the graph loaded now.
    pub hash: String,
    /// The graph, its own subgraphs loaded.
    pub graph: Graph,
}

impl Subgraph {
    /// Whether the file changed since the including graph recorded its hash.
    #[must_use]
    pub fn is_stale(&self) -> bool {
        self.recorded_hash != self.hash
    }

    /// The node type this graph is when used as a node (see [`interface_def`]).
    #[must_use]
    pub fn interface(&self) -> &'static NodeDef {
        let stem = self
            .path
            .rsplit('/')
            .next()
            .unwrap_or(&self.path)
            .trim_end_matches(".json");
        interface_def(
            &self.graph,
            if self.graph.name.is_empty() {
                stem
            } else {
                &self.graph.name
            },
        )
    }
}

/// The node type a graph is when used as a subgraph: one input per `graph_input` node (named
/// by its id, required unless the inner node has a default wired), one output per named
/// output, one parameter per graph parameter.
#[must_use]
pub fn interface_def(g: &Graph, label: &str) -> &'static NodeDef {
    let mut inputs: Vec<PortSpec> = g
        .nodes
        .iter()
        .filter(|n| n.def.spec.traits.graph_input)
        .filter_map(|n| {
            let kind = n.def.spec.outputs.first()?.kind;
            let doc = match n.param("doc") {
                Some(ParamValue::Text(t)) => t.as_str(),
                _ => "",
            };
            Some(PortSpec {
                name: intern::str(&n.id),
                kind,
                required: n.inputs.first().is_none_or(Option::is_none),
                doc: intern::str(doc),
            })
        })
        .collect();
    inputs.sort_by_key(|p| p.name);
    let outputs: Vec<PortSpec> = g
        .outputs
        .iter()
        .filter_map(|(name, r)| {
            Some(PortSpec {
                name: intern::str(name),
                kind: g.output_kind(r)?,
                required: false,
                doc: "",
            })
        })
        .collect();
    intern::node_def(Dynamic {
        id: SUBGRAPH_TYPE,
        label: label.to_owned(),
        doc: g.doc.clone(),
        category: Category::Io,
        inputs,
        outputs,
        params: g.parameters.iter().map(|p| *p.spec).collect(),
        eval: not_expanded,
    })
}

/// A subgraph node's own evaluation: never run, [`Graph::flattened`] replaces it.
fn not_expanded(
    _: &crate::node::EvalCtx,
    _: &crate::node::Inputs,
    _: &[ParamValue],
) -> Result<Vec<crate::field::Field>, crate::node::NodeError> {
    Err(crate::node::NodeError::Failed(
        "a subgraph node is evaluated through its expanded graph (Graph::flattened)".into(),
    ))
}

/// The node standing for a subgraph in the expanded graph: its inputs are the inner
/// outputs, handed on unchanged.
fn result_def(outputs: &[PortSpec], label: &str) -> &'static NodeDef {
    intern::node_def(Dynamic {
        id: SUBGRAPH_TYPE,
        label: label.to_owned(),
        doc: String::new(),
        category: Category::Io,
        inputs: outputs
            .iter()
            .map(|p| PortSpec {
                required: true,
                ..*p
            })
            .collect(),
        outputs: outputs.to_vec(),
        params: Vec::new(),
        eval: crate::node::pass_inputs_through,
    })
}

/// A bypassed node as evaluation sees it: a node of the same id and outputs handing on, at
/// each output, the node's first wired input of that output's kind, else the first one the
/// engine coerces to it (a mask into a height output). Downstream nodes then read exactly
/// what wiring around the node gives them. An output with no such input (an erosion node's
/// deposition mask, anything of a generator) is empty: zeros, nothing deposited.
fn bypassed(n: &NodeInstance) -> NodeInstance {
    let wired: Vec<(PortKind, &PortRef)> = n
        .def
        .spec
        .inputs
        .iter()
        .zip(&n.inputs)
        .filter_map(|(p, r)| Some((p.kind, r.as_ref()?)))
        .collect();
    let inputs = n
        .def
        .spec
        .outputs
        .iter()
        .map(|o| {
            wired
                .iter()
                .find(|(k, _)| *k == o.kind)
                .or_else(|| {
                    wired
                        .iter()
                        .find(|(k, _)| Coercion::between(*k, o.kind).is_some())
                })
                .map(|(_, r)| (*r).clone())
        })
        .collect();
    NodeInstance {
        def: bypass_def(n.def.spec.outputs, n.def.spec.label),
        params: Vec::new(),
        inputs,
        bindings: BTreeMap::new(),
        subgraph: None,
        bypass: false,
        ..n.clone()
    }
}

/// The node standing for a bypassed node: inputs like its outputs, each optional, handed on
/// unchanged; an unwired one gives zeros.
fn bypass_def(outputs: &[PortSpec], label: &str) -> &'static NodeDef {
    intern::node_def(Dynamic {
        id: "bypass",
        label: format!("{label} (bypassed)"),
        doc: String::new(),
        category: Category::Io,
        inputs: outputs
            .iter()
            .map(|p| PortSpec {
                required: false,
                ..*p
            })
            .collect(),
        outputs: outputs.to_vec(),
        params: Vec::new(),
        eval: hand_on_or_empty,
    })
}

#[expect(clippy::unnecessary_wraps)] // the node evaluation signature
fn hand_on_or_empty(
    ctx: &crate::node::EvalCtx,
    inputs: &crate::node::Inputs,
    _: &[ParamValue],
) -> Result<Vec<crate::field::Field>, crate::node::NodeError> {
    Ok(inputs
        .spec
        .inputs
        .iter()
        .enumerate()
        .map(|(i, p)| match inputs.get(i) {
            Some(f) => f.clone(),
            None if p.kind == PortKind::Color => {
                let (w, h) = (ctx.window.width, ctx.window.height);
                crate::field::Field::from_channels(w, h, 3, vec![0.0; w * h * 3])
                    .unwrap_or_else(|| ctx.new_field(0.0))
            }
            None => ctx.new_field(0.0),
        })
        .collect())
}

/// Whether `v` is a valid value of `spec` (kind and hard range).
pub fn check_value(spec: &ParamSpec, v: &ParamValue) -> Result<(), String> {
    let ok = match (spec.kind, v) {
        (ParamKind::Float { hard, .. }, ParamValue::Float(x)) => {
            x.is_finite() && *x >= hard.0 && *x <= hard.1
        }
        (ParamKind::Int { hard, .. }, ParamValue::Int(x)) => *x >= hard.0 && *x <= hard.1,
        (ParamKind::Seed { .. }, ParamValue::Int(x)) => (0..=i64::from(u32::MAX)).contains(x),
        (ParamKind::Bool { .. }, ParamValue::Bool(_))
        | (ParamKind::Text { .. }, ParamValue::Text(_)) => true,
        (ParamKind::Choice { options, .. }, ParamValue::Choice(i)) => *i < options.len(),
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(format!("expected {}, found {v}", spec.expected()))
    }
}

/// Why node parameter `node` cannot be bound to graph parameter `graph`, if it cannot: the
/// kinds must match (choices with the same options) and every value the graph parameter
/// accepts must be valid for the node parameter.
#[must_use]
pub fn binding_problem(graph: &ParamSpec, node: &ParamSpec) -> Option<String> {
    let within = |g: (f64, f64), n: (f64, f64)| g.0 >= n.0 && g.1 <= n.1;
    match (graph.kind, node.kind) {
        (ParamKind::Float { hard: g, .. }, ParamKind::Float { hard: n, .. }) => (!within(g, n))
            .then(|| {
                format!(
                    "graph parameter \"{}\" allows [{}, {}] but \"{}\" accepts [{}, {}]; narrow the graph parameter's min and max",
                    graph.name, g.0, g.1, node.name, n.0, n.1
                )
            }),
        (ParamKind::Int { hard: g, .. }, ParamKind::Int { hard: n, .. }) => {
            (!(g.0 >= n.0 && g.1 <= n.1)).then(|| {
                format!(
                    "graph parameter \"{}\" allows [{}, {}] but \"{}\" accepts [{}, {}]; narrow the graph parameter's min and max",
                    graph.name, g.0, g.1, node.name, n.0, n.1
                )
            })
        }
        (ParamKind::Seed { .. }, ParamKind::Seed { .. })
        | (ParamKind::Bool { .. }, ParamKind::Bool { .. })
        | (ParamKind::Text { .. }, ParamKind::Text { .. }) => None,
        (ParamKind::Choice { options: g, .. }, ParamKind::Choice { options: n, .. }) => (g != n)
            .then(|| {
                format!(
                    "graph parameter \"{}\" has the options {} but \"{}\" has {}",
                    graph.name,
                    crate::node::quoted_list(g),
                    node.name,
                    crate::node::quoted_list(n)
                )
            }),
        _ => Some(format!(
            "graph parameter \"{}\" is {} but \"{}\" expects {}",
            graph.name,
            kind_name(graph.kind),
            node.name,
            kind_name(node.kind)
        )),
    }
}

/// `a float`, `an int`, … as graph files name parameter kinds.
#[must_use]
pub fn kind_name(k: ParamKind) -> &'static str {
    match k {
        ParamKind::Float { .. } => "a float",
        ParamKind::Int { .. } => "an int",
        ParamKind::Seed { .. } => "a seed",
        ParamKind::Bool { .. } => "a bool",
        ParamKind::Choice { .. } => "a choice",
        ParamKind::Text { .. } => "a text",
    }
}

impl Graph {
    /// A graph parameter by name.
    #[must_use]
    pub fn parameter(&self, name: &str) -> Option<&GraphParam> {
        self.parameters.iter().find(|p| p.spec.name == name)
    }

    /// Sets graph parameter `name` (checked against its declaration) and every node parameter
    /// bound to it.
    pub fn set_parameter(&mut self, name: &str, value: ParamValue) -> Result<(), String> {
        let p = self
            .parameters
            .iter_mut()
            .find(|p| p.spec.name == name)
            .ok_or_else(|| format!("no graph parameter \"{name}\""))?;
        check_value(p.spec, &value).map_err(|e| format!("graph parameter \"{name}\": {e}"))?;
        p.value = value;
        self.apply_parameters();
        Ok(())
    }

    /// Copies every graph parameter's value into the node parameters bound to it.
    pub fn apply_parameters(&mut self) {
        let values: BTreeMap<&str, &ParamValue> = self
            .parameters
            .iter()
            .map(|p| (p.spec.name, &p.value))
            .collect();
        for n in &mut self.nodes {
            for (param, gp) in &n.bindings {
                if let (Some(i), Some(v)) = (n.def.param_index(param), values.get(gp.as_str())) {
                    n.params[i] = (*v).clone();
                }
            }
        }
    }

    /// Promotes parameter `param` of node `node` to a graph parameter with the same
    /// declaration (name, doc, unit, kind and ranges) and its current value, and binds it.
    /// The graph parameter is named like the node parameter, or `node_param` when that name
    /// is taken. Returns its name.
    pub fn promote_parameter(&mut self, node: &str, param: &str) -> Result<String, String> {
        let n = self
            .node(node)
            .ok_or_else(|| format!("no node \"{node}\""))?;
        let i = n
            .def
            .param_index(param)
            .ok_or_else(|| format!("node \"{node}\" has no parameter \"{param}\""))?;
        if let Some(g) = n.bindings.get(param) {
            return Err(format!(
                "{node}.{param} is already bound to graph parameter \"{g}\""
            ));
        }
        let spec = n.def.params[i];
        let value = n.params[i].clone();
        let name = if self.parameter(param).is_some() {
            super::unique_name(&format!("{node}_{param}"), |c| self.parameter(c).is_some())
        } else {
            param.to_owned()
        };
        let kind = match spec.kind {
            ParamKind::Float { soft, hard, .. } => ParamKind::Float {
                default: match value {
                    ParamValue::Float(x) => x,
                    _ => hard.0,
                },
                soft,
                hard,
            },
            other => other,
        };
        let spec = intern::param_spec(&name, spec.doc, spec.unit, kind);
        self.parameters.push(GraphParam { spec, value });
        self.parameters.sort_by(|a, b| a.spec.name.cmp(b.spec.name));
        if let Some(n) = self.node_mut(node) {
            n.bindings.insert(param.to_owned(), name.clone());
        }
        Ok(name)
    }

    /// Removes graph parameter `name`; the node parameters bound to it keep its value as
    /// their own.
    pub fn remove_parameter(&mut self, name: &str) {
        self.parameters.retain(|p| p.spec.name != name);
        for n in &mut self.nodes {
            n.bindings.retain(|_, g| g != name);
        }
    }

    /// Whether any node is a subgraph.
    #[must_use]
    pub fn has_subgraphs(&self) -> bool {
        self.nodes.iter().any(|n| n.subgraph.is_some())
    }

    /// The number of nodes once every subgraph is expanded (each subgraph node counting
    /// itself, as [`Graph::flattened`] keeps it as the hand-on node), counted only up to just
    /// past `cap`: the work is bounded by `cap` however much a graph expands.
    #[must_use]
    pub fn expanded_len(&self, cap: usize) -> usize {
        let mut n = 0usize;
        for node in &self.nodes {
            n += 1;
            if let Some(sg) = &node.subgraph {
                n = n.saturating_add(sg.graph.expanded_len(cap.saturating_sub(n)));
            }
            if n > cap {
                return n;
            }
        }
        n
    }

    /// Subgraph references whose file changed since the including graph recorded its hash:
    /// the first node using each (nested ones as `outer/inner`), the subgraph, and how many
    /// references of that file with that recorded hash were found. Each distinct subgraph is
    /// visited once, so a file used twice at each of many levels is one line, not 2ⁿ.
    #[must_use]
    pub fn stale_subgraphs(&self) -> Vec<(String, &Subgraph, usize)> {
        let mut out: Vec<(String, &Subgraph, usize)> = Vec::new();
        let mut at: std::collections::HashMap<(&str, &str, &str), usize> =
            std::collections::HashMap::new();
        let mut visited: std::collections::HashSet<(&str, &str)> = std::collections::HashSet::new();
        let mut stack: Vec<(String, &Graph)> = vec![(String::new(), self)];
        while let Some((prefix, g)) = stack.pop() {
            for n in &g.nodes {
                let Some(sg) = &n.subgraph else { continue };
                let id = format!("{prefix}{}", n.id);
                if sg.is_stale() {
                    let key = (
                        sg.path.as_str(),
                        sg.recorded_hash.as_str(),
                        sg.hash.as_str(),
                    );
                    if let Some(&k) = at.get(&key) {
                        out[k].2 += 1;
                    } else {
                        at.insert(key, out.len());
                        out.push((id.clone(), sg.as_ref(), 1));
                    }
                }
                if visited.insert((sg.path.as_str(), sg.hash.as_str())) {
                    stack.push((format!("{id}/"), &sg.graph));
                }
            }
        }
        out
    }

    /// The graph's sea level in metres, for pictures of its heights: the level of its first
    /// node that floods a sea (a node type declaring `sea_level_param`, subgraphs included,
    /// with graph parameters applied); else 0 m when the height range reaches below 0 (a
    /// graph without a sea node whose lows are seabed, like `island`); else none (no water is
    /// drawn: an alpine valley's lows are valleys, not lakes).
    #[must_use]
    pub fn sea_level_m(&self) -> Option<f32> {
        let declared = self.flattened().nodes.iter().find_map(|n| {
            match n.param(n.def.spec.traits.sea_level_param?)? {
                ParamValue::Float(v) => Some(*v as f32),
                _ => None,
            }
        });
        declared.or_else(|| {
            (self.world.height_min_m < 0.0 && self.world.height_max_m > 0.0).then_some(0.0)
        })
    }

    /// The graph evaluation runs: every subgraph node expanded (see the module docs). The
    /// graph itself when it has none.
    #[must_use]
    pub fn flattened(&self) -> Cow<'_, Graph> {
        if !self.has_subgraphs() && !self.nodes.iter().any(|n| n.bypass) {
            return Cow::Borrowed(self);
        }
        let mut nodes = Vec::with_capacity(self.nodes.len());
        for n in &self.nodes {
            if n.bypass {
                nodes.push(bypassed(n));
                continue;
            }
            let Some(sg) = &n.subgraph else {
                nodes.push(n.clone());
                continue;
            };
            let mut inner = sg.graph.clone();
            for (p, v) in inner.parameters.iter_mut().zip(&n.params) {
                p.value = v.clone();
            }
            inner.apply_parameters();
            let inner = inner.flattened().into_owned();
            let dir = sg.path.rfind('/').map_or("", |i| &sg.path[..=i]);
            let prefixed =
                |r: &PortRef| PortRef::new(format!("{}/{}", n.id, r.node), r.output.clone());
            for m in &inner.nodes {
                let mut m2 = NodeInstance {
                    id: format!("{}/{}", n.id, m.id),
                    inputs: m.inputs.iter().map(|r| r.as_ref().map(prefixed)).collect(),
                    bindings: BTreeMap::new(),
                    subgraph: None,
                    ..m.clone()
                };
                if m.def.spec.traits.graph_input {
                    let outer = n
                        .def
                        .input_index(&m.id)
                        .and_then(|i| n.inputs.get(i).cloned().flatten());
                    if let (Some(r), Some(slot)) = (outer, m2.inputs.first_mut()) {
                        *slot = Some(r);
                    }
                }
                // Files named by inner nodes are relative to the inner graph's folder.
                if let (Some(param), false) = (m.def.spec.traits.file_param, dir.is_empty()) {
                    if let Some(ParamValue::Text(path)) =
                        m.def.param_index(param).and_then(|i| m2.params.get_mut(i))
                    {
                        if !path.is_empty() && std::path::Path::new(path.as_str()).is_relative() {
                            *path = format!("{dir}{path}");
                        }
                    }
                }
                nodes.push(m2);
            }
            let def = result_def(n.def.spec.outputs, n.def.spec.label);
            nodes.push(NodeInstance {
                id: n.id.clone(),
                def,
                params: Vec::new(),
                inputs: def
                    .spec
                    .inputs
                    .iter()
                    .map(|p| inner.outputs.get(p.name).map(prefixed))
                    .collect(),
                position: n.position,
                bindings: BTreeMap::new(),
                subgraph: None,
                bypass: false,
                label: n.label.clone(),
            });
        }
        Cow::Owned(Graph {
            nodes,
            ..self.clone()
        })
    }
}
