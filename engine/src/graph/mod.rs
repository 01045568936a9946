//! The runtime graph: node instances with validated parameters, wires between ports,
//! named outputs; structural validation (dangling wires, port types, cycles) and
//! the topological plan the evaluator follows.

mod diagnostic;
mod subgraph;

pub use diagnostic::{
    escape_control, lines as diagnostic_lines, Diagnostic, Diagnostics, Severity,
};
pub use subgraph::{
    binding_problem, check_value, interface_def, kind_name, GraphParam, Subgraph, SUBGRAPH_TYPE,
};

use crate::field::World;
use crate::node::{nearest, Coercion, NodeDef, ParamValue, PortKind};
use petgraph::graph::{DiGraph, NodeIndex};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// A reference to one output port of a node: `node.port` in files.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PortRef {
    pub node: String,
    pub output: String,
}

impl PortRef {
    #[must_use]
    pub fn new(node: impl Into<String>, output: impl Into<String>) -> Self {
        Self {
            node: node.into(),
            output: output.into(),
        }
    }
}

impl std::fmt::Display for PortRef {
    /// `node.port`, or `node` alone when the port is not known (a reference to a node that
    /// does not exist keeps the form it was written in).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.output.is_empty() {
            f.write_str(&self.node)
        } else {
            write!(f, "{}.{}", self.node, self.output)
        }
    }
}

/// One node of a graph.
#[derive(Clone, Debug)]
pub struct NodeInstance {
    /// Unique within the graph; letters, digits, `_` and `-`.
    pub id: String,
    pub def: &'static NodeDef,
    /// Parameter values in the order of `def.params`.
    pub params: Vec<ParamValue>,
    /// What feeds each input port, in the order of `def.spec.inputs`.
    pub inputs: Vec<Option<PortRef>>,
    /// Position on the editor canvas.
    pub position: [f64; 2],
    /// Parameters bound to graph parameters: node parameter name → graph parameter name.
    /// A bound parameter takes the graph parameter's value ([`Graph::apply_parameters`]).
    pub bindings: BTreeMap<String, String>,
    /// For a subgraph node (type [`SUBGRAPH_TYPE`]): the graph file it uses.
    pub subgraph: Option<std::sync::Arc<Subgraph>>,
    /// Bypassed (muted): each output hands on an input instead (see [`Graph::flattened`]).
    pub bypass: bool,
    /// The name the canvas shows instead of the node type's (empty: the type's label).
    pub label: String,
}

impl NodeInstance {
    /// A node of type `def` with default parameters and no inputs.
    #[must_use]
    pub fn new(id: impl Into<String>, def: &'static NodeDef) -> Self {
        Self {
            id: id.into(),
            def,
            params: def.default_values(),
            inputs: vec![None; def.spec.inputs.len()],
            position: [0.0, 0.0],
            bindings: BTreeMap::new(),
            subgraph: None,
            bypass: false,
            label: String::new(),
        }
    }

    /// The value of a parameter by name.
    #[must_use]
    pub fn param(&self, name: &str) -> Option<&ParamValue> {
        self.def.param_index(name).and_then(|i| self.params.get(i))
    }
}

/// A terrain graph.
#[derive(Clone, Debug)]
pub struct Graph {
    pub name: String,
    /// What the graph makes, for people (shown for subgraphs and in the library).
    pub doc: String,
    pub seed: u64,
    pub world: World,
    /// Default samples per side.
    pub resolution: usize,
    pub nodes: Vec<NodeInstance>,
    /// Named outputs written by builds.
    pub outputs: BTreeMap<String, PortRef>,
    /// Graph parameters, sorted by name: knobs bound to node parameters.
    pub parameters: Vec<GraphParam>,
    /// Comment frames on the editor's canvas (layout only: nothing evaluates them).
    pub frames: Vec<Frame>,
    /// Where the world lies on the Earth (from `orogen new --from-dem`): GeoTIFF exports carry
    /// it. Metadata only: nothing evaluates it.
    pub georef: Option<Georef>,
    /// A mask output (`import`'s `valid`, from `orogen new --from-dem`): GeoTIFF exports of
    /// heights, masks and quantities write no data (NaN, GDAL's no-data tag) where it is below
    /// one half — the cells a DEM had no data for. Builds evaluate its node with the outputs.
    pub nodata: Option<PortRef>,
}

/// The world's square mapped onto a rectangle of a coordinate reference system: its bounds in
/// the CRS's units (metres or feet; degrees for a geographic CRS).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Georef {
    /// The CRS's EPSG code, when it has one.
    pub epsg: Option<u32>,
    /// Longitude and latitude (degrees), rather than a projection.
    pub geographic: bool,
    pub west: f64,
    pub south: f64,
    pub east: f64,
    pub north: f64,
}

/// A comment frame: a titled rectangle on the canvas grouping the nodes inside it (the editor
/// moves them with it). Layout only, like node positions.
#[derive(Clone, Debug, PartialEq)]
pub struct Frame {
    pub title: String,
    /// Left, top, width, height in canvas units.
    pub rect: [f64; 4],
}

/// The warnings that name a node, grouped by node id.
fn by_incomplete_node(problems: Vec<Diagnostic>) -> BTreeMap<String, Vec<Diagnostic>> {
    let mut out: BTreeMap<String, Vec<Diagnostic>> = BTreeMap::new();
    for d in problems {
        if let (false, Some(n)) = (d.is_error(), d.node.clone()) {
            out.entry(n).or_default().push(d);
        }
    }
    out
}

/// `base`, else `base_2`, `base_3`, … — the first name `taken` says is free (node ids, output
/// and parameter names).
#[must_use]
pub fn unique_name(base: &str, taken: impl Fn(&str) -> bool) -> String {
    if !taken(base) {
        return base.to_owned();
    }
    let mut i = 2u64;
    loop {
        let name = format!("{base}_{i}");
        if !taken(&name) {
            return name;
        }
        i += 1;
    }
}

/// Whether a string is a valid node id or output name.
#[must_use]
pub fn is_valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// The evaluation order: nodes in topological order, grouped in waves whose members
/// only depend on earlier waves (so each wave can run in parallel).
#[derive(Clone, Debug)]
pub struct Plan {
    /// Indices into `Graph::nodes`, wave by wave; each wave sorted by node id.
    pub waves: Vec<Vec<usize>>,
}

/// An output that cannot be built, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Blocked {
    /// The output's name.
    pub output: String,
    /// `(incomplete node it depends on, its problem)`; the node is `None` when the output's
    /// own reference is broken.
    pub reasons: Vec<(Option<String>, String)>,
}

impl std::fmt::Display for Blocked {
    /// `output "t" cannot be built: it depends on node "terrace", which is incomplete (inputs.in: …)`
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "output \"{}\" cannot be built: ", self.output)?;
        for (k, (node, why)) in self.reasons.iter().enumerate() {
            if k > 0 {
                f.write_str("; ")?;
            }
            match node {
                Some(n) => write!(f, "it depends on node \"{n}\", which is incomplete ({why})")?,
                None => write!(f, "{why}")?,
            }
        }
        Ok(())
    }
}

impl Graph {
    /// An empty graph.
    #[must_use]
    pub fn new(name: impl Into<String>, world: World, resolution: usize, seed: u64) -> Self {
        Self {
            name: name.into(),
            doc: String::new(),
            parameters: Vec::new(),
            seed,
            world,
            resolution,
            nodes: Vec::new(),
            outputs: BTreeMap::new(),
            frames: Vec::new(),
            georef: None,
            nodata: None,
        }
    }

    /// The nodes a build evaluates for its files: those behind the named outputs, and the
    /// node of the no-data mask.
    pub fn export_roots(&self) -> impl Iterator<Item = &PortRef> {
        self.outputs.values().chain(self.nodata.as_ref())
    }

    /// Index of a node by id.
    #[must_use]
    pub fn index_of(&self, id: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.id == id)
    }

    #[must_use]
    pub fn node(&self, id: &str) -> Option<&NodeInstance> {
        self.nodes.iter().find(|n| n.id == id)
    }

    pub fn node_mut(&mut self, id: &str) -> Option<&mut NodeInstance> {
        self.nodes.iter_mut().find(|n| n.id == id)
    }

    /// The kind of the output a reference points to, if it exists.
    #[must_use]
    pub fn output_kind(&self, r: &PortRef) -> Option<PortKind> {
        let n = self.node(&r.node)?;
        n.def
            .spec
            .outputs
            .iter()
            .find(|p| p.name == r.output)
            .map(|p| p.kind)
    }

    /// Checks wires, required inputs, port kinds, outputs and cycles. Reports every problem:
    /// cycles as errors; a node's unwired required input, dangling or mistyped wire, and an
    /// output naming no existing port as warnings (see [`Severity`]).
    #[must_use]
    pub fn validate(&self) -> Vec<Diagnostic> {
        self.validate_refs(&|_| false)
    }

    /// Only the errors of [`Graph::validate`]: what makes the graph unusable as a whole.
    #[must_use]
    pub fn errors(&self) -> Vec<Diagnostic> {
        self.validate()
            .into_iter()
            .filter(Diagnostic::is_error)
            .collect()
    }

    /// Nodes that cannot be evaluated as wired, with their problems (the warnings that name a
    /// node), by node id.
    #[must_use]
    pub fn incomplete_nodes(&self) -> BTreeMap<String, Vec<Diagnostic>> {
        by_incomplete_node(self.validate())
    }

    /// Outputs that cannot be built as the graph stands, each with what blocks it, sorted by
    /// output name. Scratch nodes that feed no output never block anything.
    #[must_use]
    pub fn blocked_outputs(&self) -> Vec<Blocked> {
        let problems = self.validate();
        let incomplete = by_incomplete_node(problems.clone());
        let mut out = Vec::new();
        for (name, r) in &self.outputs {
            if self.output_kind(r).is_none() {
                let problem = problems
                    .iter()
                    .find(|d| d.node.is_none() && d.field == format!("outputs.{name}"))
                    .map_or_else(
                        || format!("\"{r}\" is not an output of any node"),
                        |d| d.message.clone(),
                    );
                out.push(Blocked {
                    output: name.clone(),
                    reasons: vec![(None, problem)],
                });
                continue;
            }
            let reasons: Vec<(Option<String>, String)> = self
                .upstream(&r.node)
                .into_iter()
                .filter_map(|id| incomplete.get(&id).map(|ds| (id, ds)))
                .flat_map(|(id, ds)| ds.iter().map(move |d| (Some(id.clone()), d.detail())))
                .collect();
            if !reasons.is_empty() {
                out.push(Blocked {
                    output: name.clone(),
                    reasons,
                });
            }
        }
        out
    }

    /// `id` and every node it reads from, directly or not, sorted by id.
    #[must_use]
    pub fn upstream(&self, id: &str) -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut stack = vec![id.to_owned()];
        while let Some(n) = stack.pop() {
            if !seen.insert(n.clone()) {
                continue;
            }
            if let Some(node) = self.node(&n) {
                stack.extend(node.inputs.iter().flatten().map(|r| r.node.clone()));
            }
        }
        seen.retain(|n| self.node(n).is_some());
        seen
    }

    /// Like [`Graph::validate`], but references to ids for which `ignore` is true are not
    /// reported (the file loader uses it for nodes it already reported, e.g. of unknown type).
    pub(crate) fn validate_refs(&self, ignore: &dyn Fn(&str) -> bool) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        let ids: Vec<&str> = self.nodes.iter().map(|n| n.id.as_str()).collect();
        // Every problem of a wire or an output reference is local: a warning.
        let check_ref =
            |r: &PortRef, out: &mut Vec<Diagnostic>, node: Option<&str>, field: String| {
                if ignore(&r.node) {
                    return None;
                }
                let Some(src) = self.node(&r.node) else {
                    let hint = nearest(&r.node, ids.iter().copied())
                        .map(|n| format!(" (did you mean \"{n}\"?)"))
                        .unwrap_or_default();
                    out.push(Diagnostic::warning(
                        node,
                        field,
                        format!("refers to node \"{}\", which does not exist{hint}", r.node),
                    ));
                    return None;
                };
                let Some(port) = src.def.spec.outputs.iter().find(|p| p.name == r.output) else {
                    let names: Vec<&str> = src.def.spec.outputs.iter().map(|p| p.name).collect();
                    out.push(Diagnostic::warning(
                        node,
                        field,
                        format!(
                            "node \"{}\" ({}) has no output \"{}\"; its outputs are {}",
                            r.node,
                            src.def.spec.id,
                            r.output,
                            crate::node::quoted_list(&names)
                        ),
                    ));
                    return None;
                };
                Some(port.kind)
            };
        for n in &self.nodes {
            for (spec, input) in n.def.spec.inputs.iter().zip(&n.inputs) {
                let field = format!("inputs.{}", spec.name);
                match input {
                    None if spec.required => out.push(Diagnostic::warning(
                        Some(&n.id),
                        field,
                        format!("required {} input is not connected", spec.kind.name()),
                    )),
                    None => {}
                    Some(r) => {
                        if let Some(kind) = check_ref(r, &mut out, Some(&n.id), field.clone()) {
                            if Coercion::between(kind, spec.kind).is_none() {
                                out.push(Diagnostic::warning(
                                    Some(&n.id),
                                    field,
                                    format!(
                                        "port type mismatch: \"{r}\" is a {} output but this input expects a {}; {}",
                                        kind.name(),
                                        spec.kind.name(),
                                        Coercion::refusal_hint(kind, spec.kind)
                                    ),
                                ));
                            }
                        }
                    }
                }
            }
        }
        for (name, r) in &self.outputs {
            check_ref(r, &mut out, None, format!("outputs.{name}"));
        }
        if let Some(r) = &self.nodata {
            let kind = check_ref(r, &mut out, None, "nodata".into());
            if kind.is_some_and(|k| k != crate::node::PortKind::Mask) {
                out.push(Diagnostic::warning(
                    None,
                    "nodata".into(),
                    format!("\"{r}\" is not a mask output: no-data cells are named by a mask, such as an import node's \"valid\""),
                ));
            }
        }
        if let Err(cycles) = self.plan() {
            out.extend(cycles);
        }
        out
    }

    fn petgraph(&self) -> (DiGraph<usize, ()>, Vec<NodeIndex>) {
        let mut g = DiGraph::with_capacity(self.nodes.len(), self.nodes.len() * 2);
        let idx: Vec<NodeIndex> = (0..self.nodes.len()).map(|i| g.add_node(i)).collect();
        let by_id: HashMap<&str, usize> = self
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.id.as_str(), i))
            .collect();
        for (i, n) in self.nodes.iter().enumerate() {
            for r in n.inputs.iter().flatten() {
                if let Some(&src) = by_id.get(r.node.as_str()) {
                    g.add_edge(idx[src], idx[i], ());
                }
            }
        }
        (g, idx)
    }

    /// The evaluation plan, or one diagnostic per cycle listing the nodes on it.
    pub fn plan(&self) -> Result<Plan, Vec<Diagnostic>> {
        let (g, _) = self.petgraph();
        let Ok(order) = petgraph::algo::toposort(&g, None) else {
            let mut cycles: Vec<Vec<String>> = petgraph::algo::tarjan_scc(&g)
                .into_iter()
                .filter(|scc| scc.len() > 1 || g.contains_edge(scc[0], scc[0]))
                .map(|scc| {
                    let mut ids: Vec<String> =
                        scc.iter().map(|&v| self.nodes[g[v]].id.clone()).collect();
                    ids.sort();
                    ids
                })
                .collect();
            cycles.sort();
            return Err(cycles
                .into_iter()
                .map(|ids| {
                    let quoted: Vec<String> = ids.iter().map(|i| format!("\"{i}\"")).collect();
                    Diagnostic::at(
                        Some(&ids[0]),
                        "inputs".into(),
                        format!(
                            "cycle: the nodes {} depend on each other",
                            quoted.join(" → ")
                        ),
                    )
                })
                .collect());
        };
        let mut level = vec![0usize; self.nodes.len()];
        for &v in &order {
            let l = g
                .neighbors_directed(v, petgraph::Direction::Incoming)
                .map(|u| level[g[u]] + 1)
                .max()
                .unwrap_or(0);
            level[g[v]] = l;
        }
        let depth = level.iter().copied().max().map_or(0, |m| m + 1);
        let mut waves = vec![Vec::new(); depth];
        for (i, &l) in level.iter().enumerate() {
            waves[l].push(i);
        }
        for w in &mut waves {
            w.sort_by(|&a, &b| self.nodes[a].id.cmp(&self.nodes[b].id));
        }
        Ok(Plan { waves })
    }

    /// Sets a parameter from a loosely typed value, checking it against the declaration.
    pub fn set_param(&mut self, node: &str, param: &str, value: ParamValue) -> Result<(), String> {
        let n = self
            .node_mut(node)
            .ok_or_else(|| format!("no node \"{node}\""))?;
        let i = n.def.param_index(param).ok_or_else(|| {
            let hint = nearest(param, n.def.params.iter().map(|p| p.name))
                .map(|s| format!(" (did you mean \"{s}\"?)"))
                .unwrap_or_default();
            format!(
                "node \"{node}\" ({}) has no parameter \"{param}\"{hint}",
                n.def.spec.id
            )
        })?;
        n.params[i] = value;
        Ok(())
    }
}
