//! Evaluation of a graph: content-hash cache keys, parallel waves on rayon, failure
//! isolation, cancellation, progress, and freeing intermediates once consumed.
//!
//! A node's key hashes (type id and version, canonical parameters, its inputs' keys and
//! ports, resolution, graph seed, world frame). Keys are computed in topological order, so
//! editing one parameter changes exactly the keys downstream of that node: a cache lookup
//! by key is dirty propagation with no flags to forget.

mod cache;
pub mod memory;

pub use crate::node::CancelToken;
pub use cache::Cache;

use crate::field::Field;
use crate::graph::{Diagnostic, Graph, PortRef};
use crate::node::{Coercion, EvalCtx, Footprint, NodeError, Window};
use rayon::prelude::*;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A node's cache key.
pub type Key = [u8; 16];

/// The outputs of one node, in port order.
pub type NodeFields = Arc<[Arc<Field>]>;

/// Which nodes an evaluation must produce.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Targets {
    /// The nodes behind the graph's named outputs.
    Outputs,
    /// Every node.
    All,
    /// These nodes (by id) and what they need.
    Nodes(Vec<String>),
}

impl Targets {
    /// The ids of the nodes these targets need: the targets and everything upstream of them.
    #[must_use]
    pub fn node_set(&self, graph: &Graph) -> std::collections::BTreeSet<String> {
        match self {
            Targets::All => graph.nodes.iter().map(|n| n.id.clone()).collect(),
            Targets::Outputs => graph
                .outputs
                .values()
                .flat_map(|r| graph.upstream(&r.node))
                .collect(),
            Targets::Nodes(ids) => ids.iter().flat_map(|id| graph.upstream(id)).collect(),
        }
    }
}

/// What happened to a node during an evaluation.
#[derive(Clone, Debug, PartialEq)]
pub enum NodeStatus {
    /// Evaluated in this run.
    Computed,
    /// Taken from the cache.
    Cached,
    /// The node reported an error.
    Failed(NodeError),
    /// Not run because the node itself is incomplete as wired (a required input unwired, say);
    /// `reason` says what is missing, e.g. `inputs.in: required height input is not connected`.
    Incomplete { reason: String },
    /// Not run because an upstream node (named) failed or is incomplete.
    Skipped { upstream: String },
}

/// Progress notifications.
#[derive(Clone, Copy, Debug)]
pub enum ProgressEvent<'a> {
    Started { node: &'a str },
    Progress { node: &'a str, fraction: f32 },
    Finished { node: &'a str, ok: bool },
}

/// Options of one evaluation.
pub struct EvalOptions<'a> {
    /// Samples per side; `None` uses the graph's resolution.
    pub resolution: Option<usize>,
    pub targets: Targets,
    pub cancel: CancelToken,
    pub progress: Option<&'a (dyn Fn(ProgressEvent) + Sync)>,
    /// Folder that relative paths in parameters resolve against (the graph file's folder).
    pub base_dir: Option<&'a Path>,
    /// Folders outside the graph's project that files may be read from (`--allow-outside`).
    pub allow_outside: &'a [PathBuf],
    /// Keep every computed field in the result (editor previews), instead of freeing
    /// intermediates once their last consumer has run (headless builds).
    pub keep_all: bool,
    /// Compute only this part of the grid (a tile); `None`: the whole grid. Every node then
    /// works on the part its consumers need (its footprint added), and global nodes take
    /// their whole-world result from `coarse`.
    pub window: Option<Window>,
    /// The global nodes' results over the whole world at a coarse size (see [`Coarse`]);
    /// required when `window` is set and a global node is needed.
    pub coarse: Option<&'a Coarse>,
}

impl Default for EvalOptions<'_> {
    fn default() -> Self {
        Self {
            resolution: None,
            targets: Targets::Outputs,
            cancel: CancelToken::new(),
            progress: None,
            base_dir: None,
            allow_outside: &[],
            keep_all: false,
            window: None,
            coarse: None,
        }
    }
}

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
        let flat = graph.flattened();
        let graph: &Graph = &flat;
        let res = Evaluator::new()
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
/// what it computes (`out` plus its footprint; for global nodes `out`).
#[derive(Clone, Copy, Debug)]
struct Span {
    out: Window,
    eval: Window,
    global: bool,
}

/// The windows every needed node works on for `want` of the targets (backwards through
/// the plan: a node covers the union of what its consumers read).
fn spans(
    graph: &Graph,
    plan: &crate::graph::Plan,
    needed: &[bool],
    target: &[bool],
    sources: &[Vec<usize>],
    resolution: usize,
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

/// The outcome of an evaluation.
#[derive(Debug, Default)]
pub struct EvalResult {
    /// Status of every node that was needed.
    pub status: BTreeMap<String, NodeStatus>,
    /// Fields of the target nodes (of every needed node with `keep_all`).
    pub fields: BTreeMap<String, NodeFields>,
    /// Cache keys of every needed node.
    pub keys: BTreeMap<String, Key>,
    /// Wall time of every computed node.
    pub timings: BTreeMap<String, Duration>,
    /// Highest total size of node results alive at once, in bytes.
    pub peak_live_bytes: usize,
    pub resolution: usize,
}

impl EvalResult {
    /// Ids of the nodes computed in this run (not taken from the cache), sorted.
    #[must_use]
    pub fn evaluated(&self) -> Vec<&str> {
        self.status
            .iter()
            .filter(|(_, s)| **s == NodeStatus::Computed)
            .map(|(k, _)| k.as_str())
            .collect()
    }

    /// The field behind an output reference, if it was produced.
    #[must_use]
    pub fn field(&self, graph: &Graph, r: &PortRef) -> Option<Arc<Field>> {
        let n = graph.node(&r.node)?;
        let i = n.def.output_index(&r.output)?;
        self.fields.get(&r.node)?.get(i).cloned()
    }

    /// The terrain nearest upstream of node `id`, to draw its masks or colours on: breadth
    /// first through its inputs, the first height wired in (or height output of a node
    /// feeding it) that this result holds.
    #[must_use]
    pub fn terrain_under(&self, graph: &Graph, id: &str) -> Option<Arc<Field>> {
        let mut queue = std::collections::VecDeque::from([id.to_owned()]);
        let mut seen = std::collections::BTreeSet::new();
        while let Some(cur) = queue.pop_front() {
            if !seen.insert(cur.clone()) {
                continue;
            }
            let Some(node) = graph.node(&cur) else {
                continue;
            };
            for r in node.inputs.iter().flatten() {
                if graph.output_kind(r) == Some(crate::node::PortKind::Height) {
                    if let Some(f) = self.field(graph, r) {
                        return Some(f);
                    }
                }
                let own = graph.node(&r.node).and_then(|src| {
                    let i = src
                        .def
                        .spec
                        .outputs
                        .iter()
                        .position(|p| p.kind == crate::node::PortKind::Height)?;
                    self.fields.get(&r.node)?.get(i).cloned()
                });
                if own.is_some() {
                    return own;
                }
                queue.push_back(r.node.clone());
            }
        }
        None
    }

    /// `(node id, error)` for every failed node, sorted by id.
    #[must_use]
    pub fn failures(&self) -> Vec<(&str, &NodeError)> {
        self.status
            .iter()
            .filter_map(|(k, s)| match s {
                NodeStatus::Failed(e) => Some((k.as_str(), e)),
                _ => None,
            })
            .collect()
    }
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
            Targets::Outputs => graph.outputs.values().for_each(|r| mark(&r.node)),
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
}

/// Evaluates graphs, optionally keeping results in a cache across evaluations.
#[derive(Debug, Default)]
pub struct Evaluator {
    cache: Option<Cache>,
}

fn node_key(
    graph: &Graph,
    i: usize,
    resolution: usize,
    base_dir: Option<&Path>,
    keys: &[Option<Key>],
    window: Option<Window>,
) -> Key {
    let n = &graph.nodes[i];
    let mut h = blake3::Hasher::new();
    let spec = &n.def.spec;
    h.update(&(spec.id.len() as u64).to_le_bytes());
    h.update(spec.id.as_bytes());
    h.update(&spec.version.to_le_bytes());
    for v in &n.params {
        v.hash_into(&mut h);
    }
    let extra = n.def.key_extra(base_dir, &n.params);
    h.update(&(extra.len() as u64).to_le_bytes());
    h.update(&extra);
    for (port, input) in spec.inputs.iter().zip(&n.inputs) {
        match input
            .as_ref()
            .and_then(|r| Some((r, graph.index_of(&r.node)?)))
        {
            Some((r, src)) => {
                h.update(b"I");
                h.update(&keys[src].unwrap_or_default());
                let sdef = graph.nodes[src].def;
                h.update(
                    &(sdef.output_index(&r.output).unwrap_or(usize::MAX) as u64).to_le_bytes(),
                );
                let coerce = graph
                    .output_kind(r)
                    .and_then(|k| Coercion::between(k, port.kind));
                h.update(&[coerce.map_or(255, |c| c as u8)]);
            }
            None => {
                h.update(b"-");
            }
        }
    }
    h.update(&(resolution as u64).to_le_bytes());
    if let Some(w) = window {
        // A tile: which part of the grid (a whole-map key has no window, as before).
        for v in [w.x0, w.y0, w.width, w.height] {
            h.update(&(v as u64).to_le_bytes());
        }
    }
    h.update(&graph.seed.to_le_bytes());
    for w in [
        graph.world.size_m,
        graph.world.height_min_m,
        graph.world.height_max_m,
    ] {
        h.update(&w.to_bits().to_le_bytes());
    }
    let mut key = [0u8; 16];
    key.copy_from_slice(&h.finalize().as_bytes()[..16]);
    key
}

/// What feeds input `port` of node `i`, evaluated at `resolution` by a fresh evaluation of
/// the graph upstream of it (coerced to the port's kind); `None` when the port is unwired.
/// The nodes' coarse-to-fine evaluation asks for it at its base level (see
/// [`EvalCtx::upstream`]).
fn upstream_at(
    graph: &Graph,
    i: usize,
    port: usize,
    resolution: usize,
    opts: &EvalOptions,
) -> Result<Option<Arc<Field>>, NodeError> {
    let n = &graph.nodes[i];
    let (Some(spec), Some(Some(r))) = (n.def.spec.inputs.get(port), n.inputs.get(port)) else {
        return Ok(None);
    };
    let missing = NodeError::MissingInput(spec.name);
    let sub = Evaluator::new()
        .evaluate(
            graph,
            &EvalOptions {
                resolution: Some(resolution),
                targets: Targets::Nodes(vec![r.node.clone()]),
                cancel: opts.cancel.clone(),
                progress: None,
                base_dir: opts.base_dir,
                allow_outside: opts.allow_outside,
                keep_all: false,
                window: None,
                coarse: None,
            },
        )
        .map_err(|_| missing.clone())?;
    opts.cancel
        .is_cancelled()
        .then_some(())
        .map_or(Ok(()), |()| Err(NodeError::Cancelled))?;
    let f = sub.field(graph, r).ok_or(missing.clone())?;
    let kind = graph.output_kind(r).ok_or(missing.clone())?;
    let coerce = Coercion::between(kind, spec.kind).ok_or(missing)?;
    Ok(Some(coerce.apply(&f, &graph.world)))
}

impl Evaluator {
    /// An evaluator without a cache: every run computes what it needs and frees intermediates.
    #[must_use]
    pub fn new() -> Self {
        Self { cache: None }
    }

    /// An evaluator that keeps results across runs, up to `budget_bytes` (least recently used out first).
    #[must_use]
    pub fn with_cache(budget_bytes: usize) -> Self {
        Self {
            cache: Some(Cache::new(budget_bytes)),
        }
    }

    #[must_use]
    pub fn cache(&self) -> Option<&Cache> {
        self.cache.as_ref()
    }

    /// Evaluates `graph`. A graph with errors (a cycle) returns them; incomplete nodes
    /// (warnings) are reported per node as [`NodeStatus::Incomplete`] and node failures as
    /// [`NodeStatus::Failed`], their downstream is skipped, and the rest of the graph completes.
    pub fn evaluate(
        &mut self,
        graph: &Graph,
        opts: &EvalOptions,
    ) -> Result<EvalResult, Vec<Diagnostic>> {
        let flat = graph.flattened();
        let graph: &Graph = &flat;
        let problems = graph.validate();
        if problems.iter().any(Diagnostic::is_error) {
            return Err(problems.into_iter().filter(Diagnostic::is_error).collect());
        }
        let mut incomplete: HashMap<&str, String> = HashMap::new();
        for d in &problems {
            if let Some(n) = &d.node {
                incomplete
                    .entry(n.as_str())
                    .and_modify(|m| {
                        m.push_str("; ");
                        m.push_str(&d.detail());
                    })
                    .or_insert_with(|| d.detail());
            }
        }
        let plan = graph.plan()?;
        let resolution = opts.resolution.unwrap_or(graph.resolution);
        let count = graph.nodes.len();
        // Targets and everything they need.
        let Demand {
            sources,
            target,
            needed,
            mut consumers,
        } = Demand::new(graph, &opts.targets);
        let full = Window::full(resolution);
        let windowed = opts.window.filter(|w| *w != full);
        let spans: Vec<Option<Span>> = match windowed {
            Some(want) => spans(graph, &plan, &needed, &target, &sources, resolution, want),
            None => vec![
                Some(Span {
                    out: full,
                    eval: full,
                    global: false,
                });
                count
            ],
        };
        let sources = |i: usize| sources[i].iter().copied();

        // Keys in topological order.
        let mut keys: Vec<Option<Key>> = vec![None; count];
        for &i in plan.waves.iter().flatten() {
            if needed[i] {
                keys[i] = Some(node_key(
                    graph,
                    i,
                    resolution,
                    opts.base_dir,
                    &keys,
                    windowed,
                ));
            }
        }

        let mut result = EvalResult {
            resolution,
            ..EvalResult::default()
        };
        let mut live: HashMap<usize, NodeFields> = HashMap::new();
        let mut live_bytes = 0usize;
        let mut failed_root: HashMap<usize, String> = HashMap::new();

        for wave in &plan.waves {
            let wave: Vec<usize> = wave.iter().copied().filter(|&i| needed[i]).collect();
            let mut to_compute = Vec::new();
            for &i in &wave {
                let id = &graph.nodes[i].id;
                result.keys.insert(id.clone(), keys[i].unwrap_or_default());
                if let Some(root) = sources(i).find_map(|s| failed_root.get(&s)) {
                    let root = root.clone();
                    result.status.insert(
                        id.clone(),
                        NodeStatus::Skipped {
                            upstream: root.clone(),
                        },
                    );
                    failed_root.insert(i, root);
                    continue;
                }
                if let Some(reason) = incomplete.get(id.as_str()) {
                    result.status.insert(
                        id.clone(),
                        NodeStatus::Incomplete {
                            reason: reason.clone(),
                        },
                    );
                    failed_root.insert(i, id.clone());
                    continue;
                }
                if opts.cancel.is_cancelled() {
                    result
                        .status
                        .insert(id.clone(), NodeStatus::Failed(NodeError::Cancelled));
                    failed_root.insert(i, id.clone());
                    continue;
                }
                let hit = self
                    .cache
                    .as_mut()
                    .and_then(|c| c.get(&keys[i].unwrap_or_default()));
                if let Some(fields) = hit {
                    live_bytes += fields.iter().map(|f| f.byte_size()).sum::<usize>();
                    live.insert(i, fields);
                    result.status.insert(id.clone(), NodeStatus::Cached);
                } else {
                    to_compute.push(i);
                }
            }

            let computed: Vec<(usize, Result<Vec<Field>, NodeError>, Duration)> = to_compute
                .par_iter()
                .map(|&i| {
                    let t0 = Instant::now();
                    let r = match spans[i] {
                        Some(sp) if windowed.is_some() => {
                            Self::run_windowed(graph, i, resolution, opts, &live, &spans, sp)
                        }
                        _ => Self::run_node(graph, i, resolution, opts, &live),
                    };
                    (i, r, t0.elapsed())
                })
                .collect();

            for (i, r, dt) in computed {
                let id = graph.nodes[i].id.clone();
                result.timings.insert(id.clone(), dt);
                match r {
                    Ok(fields) => {
                        let fields: NodeFields = fields.into_iter().map(Arc::new).collect();
                        live_bytes += fields.iter().map(|f| f.byte_size()).sum::<usize>();
                        if let Some(c) = self.cache.as_mut() {
                            c.insert(keys[i].unwrap_or_default(), Arc::clone(&fields));
                        }
                        live.insert(i, fields);
                        result.status.insert(id, NodeStatus::Computed);
                    }
                    Err(e) => {
                        failed_root.insert(i, id.clone());
                        result.status.insert(id, NodeStatus::Failed(e));
                    }
                }
            }
            result.peak_live_bytes = result.peak_live_bytes.max(live_bytes);

            // Free what no later node reads.
            for &i in &wave {
                for s in sources(i) {
                    consumers[s] = consumers[s].saturating_sub(1);
                    if consumers[s] == 0 && !target[s] && !opts.keep_all {
                        if let Some(f) = live.remove(&s) {
                            live_bytes -= f.iter().map(|f| f.byte_size()).sum::<usize>();
                        }
                    }
                }
            }
        }

        for (i, mut fields) in live {
            if target[i] || opts.keep_all {
                // A target that also feeds other nodes was computed over their larger
                // window; hand back exactly the window asked for.
                if let (Some(want), Some(sp)) = (windowed, spans[i]) {
                    if target[i] && sp.out != want && sp.out.contains(&want) {
                        fields = fields
                            .iter()
                            .map(|f| Arc::new(sp.out.crop(f, &want)))
                            .collect();
                    }
                }
                result.fields.insert(graph.nodes[i].id.clone(), fields);
            }
        }
        Ok(result)
    }

    /// A node of a windowed evaluation: its inputs cut to what it reads, the node run on
    /// that, its outputs cut to what its consumers need; a global node carries its
    /// whole-world change at the coarse size onto its inputs here instead.
    /// Node `i`'s inputs from the results of the nodes before it, each coerced to its port's
    /// kind; `cut(src, field)` gives the part of node `src`'s field that node `i` reads (all of
    /// it, or in a windowed evaluation the node's window), `None` when it is not there.
    fn gather_inputs(
        graph: &Graph,
        i: usize,
        live: &HashMap<usize, NodeFields>,
        cut: impl Fn(usize, &Arc<Field>) -> Option<Arc<Field>>,
    ) -> Result<Vec<Option<Arc<Field>>>, NodeError> {
        let n = &graph.nodes[i];
        let spec = &n.def.spec;
        let mut inputs = Vec::with_capacity(spec.inputs.len());
        for (port, r) in spec.inputs.iter().zip(&n.inputs) {
            let Some(r) = r else {
                inputs.push(None);
                continue;
            };
            let missing = || NodeError::MissingInput(port.name);
            let src = graph.index_of(&r.node).ok_or_else(missing)?;
            let oi = graph.nodes[src]
                .def
                .output_index(&r.output)
                .ok_or_else(missing)?;
            let f = live
                .get(&src)
                .and_then(|fs| fs.get(oi))
                .ok_or_else(missing)?;
            let f = cut(src, f).ok_or_else(missing)?;
            let kind = graph.output_kind(r).ok_or_else(missing)?;
            let coerce = Coercion::between(kind, port.kind).ok_or_else(missing)?;
            inputs.push(Some(coerce.apply(&f, &graph.world)));
        }
        Ok(inputs)
    }

    fn run_windowed(
        graph: &Graph,
        i: usize,
        resolution: usize,
        opts: &EvalOptions,
        live: &HashMap<usize, NodeFields>,
        spans: &[Option<Span>],
        sp: Span,
    ) -> Result<Vec<Field>, NodeError> {
        let n = &graph.nodes[i];
        let spec = &n.def.spec;
        let inputs = Self::gather_inputs(graph, i, live, |src, f| {
            let from = spans[src]?.out;
            Some(Arc::new(from.crop(f, &sp.eval)))
        })?;
        if sp.global {
            return Self::carry_global(graph, i, resolution, opts, &inputs, sp.out);
        }
        let report = |fraction: f32| {
            if let Some(p) = opts.progress {
                p(ProgressEvent::Progress {
                    node: &n.id,
                    fraction,
                });
            }
        };
        let ctx = EvalCtx {
            resolution,
            window: sp.eval,
            world: graph.world,
            graph_seed: graph.seed,
            node_id: &n.id,
            base_dir: opts.base_dir,
            allow_outside: opts.allow_outside,
            cancel: &opts.cancel,
            progress: &report,
            upstream: None,
        };
        if let Some(p) = opts.progress {
            p(ProgressEvent::Started { node: &n.id });
        }
        let out = n.def.eval(&ctx, &inputs, &n.params).and_then(|fields| {
            if fields.len() != spec.outputs.len()
                || fields
                    .iter()
                    .any(|f| f.width() != sp.eval.width || f.height() != sp.eval.height)
            {
                return Err(NodeError::Failed(format!(
                    "internal error: {} returned fields of the wrong count or size for a tile",
                    spec.id
                )));
            }
            Ok(fields.iter().map(|f| sp.eval.crop(f, &sp.out)).collect())
        });
        if let Some(p) = opts.progress {
            p(ProgressEvent::Finished {
                node: &n.id,
                ok: out.is_ok(),
            });
        }
        out
    }

    /// A global node in a tile: its height outputs are this tile's input plus the change the
    /// node made over the whole world at the coarse size (upsampled to the tile's cells: the
    /// same value wherever a cell is computed, so neighbouring tiles agree on the cells they
    /// share); its other outputs are its whole-world outputs upsampled.
    fn carry_global(
        graph: &Graph,
        i: usize,
        resolution: usize,
        opts: &EvalOptions,
        inputs: &[Option<Arc<Field>>],
        w: Window,
    ) -> Result<Vec<Field>, NodeError> {
        let n = &graph.nodes[i];
        let no_coarse = || {
            NodeError::Failed(format!(
                "internal error: \"{}\" needs the whole map; a tiled build evaluates it at a coarse size first",
                n.id
            ))
        };
        let CoarseNode {
            inputs: c_inputs,
            outputs: c_out,
        } = opts
            .coarse
            .and_then(|c| c.nodes.get(&n.id))
            .ok_or_else(no_coarse)?;
        let up =
            |f: &Field| f.resample_bilinear_window(resolution, (w.x0, w.y0, w.width, w.height));
        // The first height input: what the node changes.
        let first = n
            .def
            .spec
            .inputs
            .iter()
            .position(|p| p.kind == crate::node::PortKind::Height);
        let mut out = Vec::with_capacity(c_out.len());
        for (k, port) in n.def.spec.outputs.iter().enumerate() {
            let c = c_out.get(k).ok_or_else(no_coarse)?;
            let field = match (port.kind, first) {
                (crate::node::PortKind::Height, Some(j)) => {
                    let (Some(tile_in), Some(Some(c_in))) =
                        (inputs.get(j).cloned().flatten(), c_inputs.get(j))
                    else {
                        return Err(NodeError::MissingInput(n.def.spec.inputs[j].name));
                    };
                    let change = Field::zip_map(c, c_in, |o, i| o - i);
                    Field::zip_map(&tile_in, &up(&change), |t, d| t + d)
                }
                _ => up(c),
            };
            out.push(field);
        }
        opts.cancel
            .is_cancelled()
            .then_some(())
            .map_or(Ok(out), |()| Err(NodeError::Cancelled))
    }

    fn run_node(
        graph: &Graph,
        i: usize,
        resolution: usize,
        opts: &EvalOptions,
        live: &HashMap<usize, NodeFields>,
    ) -> Result<Vec<Field>, NodeError> {
        let n = &graph.nodes[i];
        let spec = &n.def.spec;
        let inputs = Self::gather_inputs(graph, i, live, |_, f| Some(Arc::clone(f)))?;
        let report = |fraction: f32| {
            if let Some(p) = opts.progress {
                p(ProgressEvent::Progress {
                    node: &n.id,
                    fraction,
                });
            }
        };
        let upstream = |port: usize, res: usize| upstream_at(graph, i, port, res, opts);
        let ctx = EvalCtx {
            resolution,
            window: crate::node::Window::full(resolution),
            world: graph.world,
            graph_seed: graph.seed,
            node_id: &n.id,
            base_dir: opts.base_dir,
            allow_outside: opts.allow_outside,
            cancel: &opts.cancel,
            progress: &report,
            upstream: Some(&upstream),
        };
        if let Some(p) = opts.progress {
            p(ProgressEvent::Started { node: &n.id });
        }
        let out = n.def.eval(&ctx, &inputs, &n.params);
        let out = out.and_then(|fields| {
            if fields.len() != spec.outputs.len() {
                return Err(NodeError::Failed(format!(
                    "internal error: {} returned {} outputs, declared {}",
                    spec.id,
                    fields.len(),
                    spec.outputs.len()
                )));
            }
            if let Some(f) = fields
                .iter()
                .find(|f| f.width() != resolution || f.height() != resolution)
            {
                return Err(NodeError::Failed(format!(
                    "internal error: {} returned a {}×{} field at resolution {resolution}",
                    spec.id,
                    f.width(),
                    f.height()
                )));
            }
            Ok(fields)
        });
        if let Some(p) = opts.progress {
            p(ProgressEvent::Finished {
                node: &n.id,
                ok: out.is_ok(),
            });
        }
        out
    }
}
