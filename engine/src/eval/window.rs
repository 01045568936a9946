//! Windowed evaluation (a tile, a region): the global nodes' whole-world results at a
//! coarse size (`Coarse`), and the window each node computes so that its consumers get the
//! part they read (`Span`, `spans`), and which nodes a set of targets needs (`Demand`).

use super::EvalOptions;
use super::Evaluator;
use super::NodeFields;
use super::Targets;
use crate::field::Field;
use crate::graph::Graph;
use crate::node::Coercion;
use crate::node::Footprint;
use crate::node::Window;
use std::collections::BTreeMap;
use std::collections::HashMap;
use std::sync::Arc;

/// The results of the global nodes (footprint [`Footprint::Global`]: erosion, normalisation)
/// over the whole world at `resolution`², for tiled evaluation: each node's inputs and
/// outputs there. A tile takes from them what the node did, as a change carried onto its
/// own finer input (see [`Evaluator::evaluate`]).
#[derive(Debug, Default)]
pub struct Coarse {
    pub resolution: usize,
    /// Node id → its inputs and outputs at the coarse size.
    pub nodes: BTreeMap<String, CoarseNode>,
}

/// One global node's fields over the whole world at [`Coarse::resolution`]².
#[derive(Debug)]
pub struct CoarseNode {
    /// Its input fields (coerced to the port's kind), `None` where a port is unwired.
    pub inputs: Vec<Option<Arc<Field>>>,
    /// Its output fields.
    pub outputs: NodeFields,
}

impl Coarse {
    /// Evaluates the whole graph at `resolution`² (every node needed by `targets`) and keeps
    /// each global node's inputs and outputs. The rest is dropped.
    pub fn evaluate(
        graph: &Graph,
        resolution: usize,
        targets: &Targets,
        opts: &EvalOptions,
    ) -> Result<Self, String> {
        Self::evaluate_with(graph, resolution, targets, opts, None)
    }

    /// [`Coarse::evaluate`] reading and writing node results in a disk cache.
    pub fn evaluate_with(
        graph: &Graph,
        resolution: usize,
        targets: &Targets,
        opts: &EvalOptions,
        disk: Option<std::sync::Arc<super::DiskCache>>,
    ) -> Result<Self, String> {
        let flat = graph.flattened();
        let graph: &Graph = &flat;
        let res = Evaluator::new()
            .with_disk(disk)
            .evaluate(
                graph,
                &EvalOptions {
                    resolution: Some(resolution),
                    targets: targets.clone(),
                    cancel: opts.cancel.clone(),
                    progress: opts.progress,
                    base_dir: opts.base_dir,
                    allow_outside: opts.allow_outside,
                    keep_all: true,
                    window: None,
                    coarse: None,
                    arrays: opts.arrays,
                    stored: None,
                },
            )
            .map_err(|d| {
                d.iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("; ")
            })?;
        let cell = graph.world.cell_size_m(resolution);
        let mut nodes = BTreeMap::new();
        for n in &graph.nodes {
            if n.def.footprint(&n.params, cell, resolution) != Footprint::Global {
                continue;
            }
            let Some(out) = res.fields.get(&n.id) else {
                continue;
            };
            let inputs = n
                .def
                .spec
                .inputs
                .iter()
                .zip(&n.inputs)
                .map(|(port, r)| {
                    let r = r.as_ref()?;
                    let f = res.field(graph, r)?;
                    let kind = graph.output_kind(r)?;
                    Some(Coercion::between(kind, port.kind)?.apply(&f, &graph.world))
                })
                .collect();
            nodes.insert(
                n.id.clone(),
                CoarseNode {
                    inputs,
                    outputs: Arc::clone(out),
                },
            );
        }
        Ok(Self { resolution, nodes })
    }
}

/// Where each node of a windowed evaluation works: `out` is what its consumers need, `eval`
/// what it computes (`out` plus its footprint; for global nodes `out`, or the windows of the
/// pieces it refines `out` with, see [`refines`]).
#[derive(Clone, Copy, Debug)]
pub(super) struct Span {
    pub(super) out: Window,
    pub(super) eval: Window,
    pub(super) global: bool,
}

/// The windows every needed node works on for `want` of the targets (backwards through
/// the plan: a node covers the union of what its consumers read).
pub(super) fn spans(
    graph: &Graph,
    plan: &crate::graph::Plan,
    needed: &[bool],
    target: &[bool],
    sources: &[Vec<usize>],
    (resolution, coarse): (usize, Option<usize>),
    want: Window,
) -> Vec<Option<Span>> {
    let cell = graph.world.cell_size_m(resolution);
    let mut out: Vec<Option<Window>> = (0..graph.nodes.len())
        .map(|i| target[i].then_some(want))
        .collect();
    let mut spans = vec![None; graph.nodes.len()];
    for &i in plan.waves.iter().flatten().rev() {
        let (true, Some(w)) = (needed[i], out[i]) else {
            continue;
        };
        let n = &graph.nodes[i];
        let fp = n.def.footprint(&n.params, cell, resolution);
        let eval = match fp {
            Footprint::Global if refines(n, resolution, coarse) => {
                super::pieces::reach(w, resolution)
            }
            Footprint::Pointwise | Footprint::Global => w,
            Footprint::Stencil(r) => w.expand(r, resolution),
        };
        spans[i] = Some(Span {
            out: w,
            eval,
            global: fp == Footprint::Global,
        });
        for &s in &sources[i] {
            out[s] = Some(out[s].map_or(eval, |o| o.union(&eval)));
        }
    }
    spans
}

/// Whether a global node refines a window of a build at `resolution`² finer than the coarse
/// pass (at `coarse`²) through pieces (`eval::pieces`): a coarse-to-fine erosion node whose
/// base is coarser than the build.
pub(crate) fn refines(
    n: &crate::graph::NodeInstance,
    resolution: usize,
    coarse: Option<usize>,
) -> bool {
    let Some(coarse) = coarse else {
        return false;
    };
    n.def.tile_refine.is_some()
        && matches!(
            n.def.resolution(&n.params),
            crate::node::ResolutionBehaviour::CoarseToFine { base } if resolution > base.max(coarse)
        )
}

/// Which nodes an evaluation needs, and how many needed consumers read each (one per wire).
/// Shared by the evaluator and the memory estimate, so both free results by the same rule.
pub(crate) struct Demand {
    /// Indices of the nodes each node reads.
    pub sources: Vec<Vec<usize>>,
    pub target: Vec<bool>,
    pub needed: Vec<bool>,
    pub consumers: Vec<usize>,
}

impl Demand {
    pub(crate) fn new(graph: &Graph, targets: &Targets) -> Self {
        let count = graph.nodes.len();
        let by_id: HashMap<&str, usize> = graph
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.id.as_str(), i))
            .collect();
        let sources: Vec<Vec<usize>> = graph
            .nodes
            .iter()
            .map(|n| {
                n.inputs
                    .iter()
                    .flatten()
                    .filter_map(|r| by_id.get(r.node.as_str()).copied())
                    .collect()
            })
            .collect();
        let mut target = vec![false; count];
        let mut mark = |id: &str| {
            if let Some(&i) = by_id.get(id) {
                target[i] = true;
            }
        };
        match targets {
            Targets::All => target.iter_mut().for_each(|t| *t = true),
            Targets::Outputs => graph.export_roots().for_each(|r| mark(&r.node)),
            Targets::Nodes(ids) => ids.iter().for_each(|id| mark(id)),
        }
        let mut needed = vec![false; count];
        let mut stack: Vec<usize> = (0..count).filter(|&i| target[i]).collect();
        while let Some(i) = stack.pop() {
            if !needed[i] {
                needed[i] = true;
                stack.extend(&sources[i]);
            }
        }
        let mut consumers = vec![0usize; count];
        for i in (0..count).filter(|&i| needed[i]) {
            for &s in &sources[i] {
                consumers[s] += 1;
            }
        }
        Self {
            sources,
            target,
            needed,
            consumers,
        }
    }

    /// Nodes for which `leaf` holds are taken as given (read, not evaluated): nothing only
    /// they read is needed, and they read nothing.
    pub(crate) fn cut_at(&mut self, leaf: impl Fn(usize) -> bool) {
        for (i, s) in self.sources.iter_mut().enumerate() {
            if leaf(i) {
                s.clear();
            }
        }
        let count = self.needed.len();
        let mut needed = vec![false; count];
        let mut stack: Vec<usize> = (0..count).filter(|&i| self.target[i]).collect();
        while let Some(i) = stack.pop() {
            if !needed[i] {
                needed[i] = true;
                stack.extend(&self.sources[i]);
            }
        }
        self.needed = needed;
        self.restrict(&vec![true; count]);
    }

    /// Only the nodes in `keep` are needed (a subset of those that were); consumers recounted.
    pub(crate) fn restrict(&mut self, keep: &[bool]) {
        for (n, k) in self.needed.iter_mut().zip(keep) {
            *n = *n && *k;
        }
        self.consumers.iter_mut().for_each(|c| *c = 0);
        for i in (0..self.needed.len()).filter(|&i| self.needed[i]) {
            for &s in &self.sources[i] {
                self.consumers[s] += 1;
            }
        }
    }
}
