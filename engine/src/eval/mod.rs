//! Evaluation of a graph: content-hash cache keys, parallel waves on rayon, failure
//! isolation, cancellation, progress, and freeing intermediates once consumed.
//!
//! A node's key hashes everything its result depends on (the list is stated once, on
//! `key::node_key`). Keys are computed in topological order, so editing one parameter changes
//! exactly the keys downstream of that node: a cache lookup by key is dirty propagation with
//! no flags to forget.

mod cache;
pub mod disk;
mod key;
pub mod memory;
mod pieces;
mod run;
mod window;

pub use crate::node::ArrayInputs;
pub use crate::node::CancelToken;
pub use cache::Cache;
pub use disk::DiskCache;
pub(crate) use window::refines;
pub use window::{Coarse, CoarseNode};

/// The windows of the pieces a refining node is refined on at `n`², in a staged plan's order.
#[must_use]
pub fn pieces_of(n: usize) -> Vec<Window> {
    pieces::all(n).into_iter().map(|p| p.window(n)).collect()
}

/// The pieces whose weight is not zero somewhere in `w` of an `n × n` map: each one's index in
/// [`pieces_of`], the piece and its window.
pub(crate) fn pieces_covering(w: Window, n: usize) -> Vec<(usize, pieces::Piece, Window)> {
    let all = pieces::all(n);
    pieces::covering(w, n)
        .into_iter()
        .filter_map(|p| Some((all.iter().position(|q| *q == p)?, p, p.window(n))))
        .collect()
}

pub(crate) use pieces::blend_into as blend_piece;
pub(crate) use pieces::weight as piece_weight;
pub(crate) use run::UpstreamMemo;

use key::node_key;
use window::{spans, Demand, Span};

use crate::field::Field;
use crate::graph::{Diagnostic, Graph, PortRef};
use crate::node::{NodeError, Window};
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
    /// The nodes behind the graph's named outputs and its no-data mask.
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
                .export_roots()
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
    /// Arrays the `array_input` nodes read, by name (from the Python package).
    pub arrays: Option<&'a ArrayInputs>,
    /// Nodes whose results are already computed elsewhere (a staged tiled build's earlier
    /// stages, in its plan folder): read over the window asked for instead of evaluated, and
    /// nothing upstream of them is needed.
    pub stored: Option<&'a dyn StoredFields>,
}

/// Results of some nodes computed elsewhere, readable over any window (see
/// [`EvalOptions::stored`]).
pub trait StoredFields: Sync {
    /// Whether node `id` (of the flattened graph) is stored.
    fn has(&self, id: &str) -> bool;
    /// Node `id`'s outputs (every port, in order) over `window` of the build's grid.
    fn read(&self, id: &str, window: Window) -> Result<Vec<Field>, String>;
    /// What identifies these results in cache keys (a stored result may differ from what the
    /// node would compute in place: a tiled stage, not a carried coarse pass).
    fn tag(&self) -> [u8; 16];
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
            arrays: None,
            stored: None,
        }
    }
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
    /// Nodes whose result was read from the disk cache (a subset of the `Cached` ones).
    pub disk_read: std::collections::BTreeSet<String>,
    /// Nodes whose result this run wrote to the disk cache.
    pub disk_stored: std::collections::BTreeSet<String>,
    /// Nodes whose disk cache entry was damaged (why), recomputed and rewritten.
    pub disk_damaged: BTreeMap<String, String>,
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

/// What an evaluation holds between its waves.
struct Waves {
    result: EvalResult,
    /// The fields computed so far and still read by a later node (or kept).
    live: HashMap<usize, NodeFields>,
    live_bytes: usize,
    /// Each failed, incomplete or skipped node's root cause (the node that failed).
    failed_root: HashMap<usize, String>,
    /// How many nodes still to run read each node.
    consumers: Vec<usize>,
}

impl Waves {
    /// Frees what no later node reads once `wave` has run (unless everything is kept).
    fn free_consumed(&mut self, wave: &[usize], demand: &Demand, keep_all: bool) {
        for &i in wave {
            for &s in &demand.sources[i] {
                self.consumers[s] = self.consumers[s].saturating_sub(1);
                if self.consumers[s] == 0 && !demand.target[s] && !keep_all {
                    if let Some(f) = self.live.remove(&s) {
                        self.live_bytes -= f.iter().map(|f| f.byte_size()).sum::<usize>();
                    }
                }
            }
        }
    }
}

/// Each incomplete node's reasons (its warnings), joined.
fn incomplete_reasons(problems: &[Diagnostic]) -> HashMap<&str, String> {
    let mut incomplete: HashMap<&str, String> = HashMap::new();
    for d in problems {
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
    incomplete
}

/// Every needed node's key, in topological order (a tile's keys also name its window, the
/// node's span and the coarse size).
fn needed_keys(
    graph: &Graph,
    plan: &crate::graph::Plan,
    demand: &Demand,
    resolution: usize,
    opts: &EvalOptions,
    windowed: Option<Window>,
    spans: &[Option<Span>],
) -> Vec<Option<Key>> {
    let scope = key::Scope {
        base_dir: opts.base_dir,
        allow_outside: opts.allow_outside,
        arrays: opts.arrays,
    };
    let mut keys: Vec<Option<Key>> = vec![None; graph.nodes.len()];
    for &i in plan.waves.iter().flatten() {
        if demand.needed[i] {
            let tile = windowed.map(|w| key::Tile {
                window: w,
                span: spans[i].map(|sp| (sp.out, sp.eval)),
                coarse: opts.coarse.map(|c| c.resolution),
            });
            let mut key = node_key(graph, i, resolution, &scope, &keys, tile);
            if let Some(st) = opts.stored.filter(|st| st.has(&graph.nodes[i].id)) {
                let mut h = blake3::Hasher::new();
                h.update(&key);
                h.update(b"stored");
                h.update(&st.tag());
                key.copy_from_slice(&h.finalize().as_bytes()[..16]);
            }
            keys[i] = Some(key);
        }
    }
    keys
}

/// A result found before running a node.
enum Found {
    Memory(NodeFields),
    Disk(NodeFields),
    /// A disk entry that failed its checks (why): the node runs.
    Damaged(String),
    /// Looked up already, not there.
    Absent,
}

/// Evaluates graphs, optionally keeping results in a cache across evaluations (in memory)
/// and across processes (a [`DiskCache`]).
#[derive(Debug, Default)]
pub struct Evaluator {
    cache: Option<Cache>,
    disk: Option<Arc<DiskCache>>,
}

impl Evaluator {
    /// An evaluator without a cache: every run computes what it needs and frees intermediates.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// This evaluator reading and writing results in `disk` too (`None`: no disk cache).
    #[must_use]
    pub fn with_disk(mut self, disk: Option<Arc<DiskCache>>) -> Self {
        self.disk = disk;
        self
    }

    /// An evaluator that keeps results across runs, up to `budget_bytes` (least recently used out first).
    #[must_use]
    pub fn with_cache(budget_bytes: usize) -> Self {
        Self {
            cache: Some(Cache::new(budget_bytes)),
            disk: None,
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
        let incomplete = incomplete_reasons(&problems);
        let plan = graph.plan()?;
        let resolution = opts.resolution.unwrap_or(graph.resolution);
        let count = graph.nodes.len();
        // Targets and everything they need (nothing behind a stored node).
        let mut demand = Demand::new(graph, &opts.targets);
        if let Some(st) = opts.stored {
            demand.cut_at(|i| st.has(&graph.nodes[i].id));
        }
        let full = Window::full(resolution);
        let windowed = opts.window.filter(|w| *w != full);
        let spans: Vec<Option<Span>> = match windowed {
            Some(want) => spans(
                graph,
                &plan,
                &demand.needed,
                &demand.target,
                &demand.sources,
                (resolution, opts.coarse.map(|c| c.resolution)),
                want,
            ),
            None => vec![
                Some(Span {
                    out: full,
                    eval: full,
                    global: false,
                });
                count
            ],
        };

        let keys = needed_keys(graph, &plan, &demand, resolution, opts, windowed, &spans);
        // Results at hand (in memory or on disk) make what only they read unnecessary; the
        // keys of every node the targets depend on are reported all the same.
        let all_keys: BTreeMap<String, Key> = (0..count)
            .filter_map(|i| Some((graph.nodes[i].id.clone(), keys[i]?)))
            .collect();
        let mut found = if opts.keep_all {
            HashMap::new()
        } else {
            self.prune(graph, &plan, &mut demand, &keys, &incomplete)
        };

        let mut st = Waves {
            result: EvalResult {
                resolution,
                keys: all_keys,
                ..EvalResult::default()
            },
            live: HashMap::new(),
            live_bytes: 0,
            failed_root: HashMap::new(),
            consumers: demand.consumers.clone(),
        };
        for wave in &plan.waves {
            let wave: Vec<usize> = wave.iter().copied().filter(|&i| demand.needed[i]).collect();
            let to_compute = self.settle(
                graph,
                &wave,
                &keys,
                &incomplete,
                &demand,
                opts,
                &mut st,
                &mut found,
            );
            let computed: Vec<(usize, Result<Vec<Field>, NodeError>, Duration)> = to_compute
                .par_iter()
                .map(|&i| {
                    let t0 = Instant::now();
                    let stored = opts.stored.filter(|st| st.has(&graph.nodes[i].id));
                    let r = match (stored, spans[i]) {
                        (Some(st), sp) => st
                            .read(&graph.nodes[i].id, sp.map_or(full, |sp| sp.out))
                            .map_err(NodeError::Failed),
                        (None, Some(sp)) if windowed.is_some() => {
                            Self::run_windowed(graph, i, resolution, opts, &st.live, &spans, sp)
                        }
                        (None, _) => Self::run_node(graph, i, resolution, opts, &st.live),
                    };
                    (i, r, t0.elapsed())
                })
                .collect();
            self.keep(graph, computed, &keys, &mut st);
            st.result.peak_live_bytes = st.result.peak_live_bytes.max(st.live_bytes);
            st.free_consumed(&wave, &demand, opts.keep_all);
        }

        let mut result = st.result;
        for (i, mut fields) in st.live {
            if demand.target[i] || opts.keep_all {
                // A target that also feeds other nodes was computed over their larger
                // window; hand back exactly the window asked for.
                if let (Some(want), Some(sp)) = (windowed, spans[i]) {
                    if demand.target[i] && sp.out != want && sp.out.contains(&want) {
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

    /// The start of a wave: each node's key recorded, a node downstream of a failure
    /// skipped, an incomplete one reported, everything refused once cancelled, cache hits
    /// taken; the nodes left to compute.
    #[expect(
        clippy::too_many_arguments,
        reason = "the evaluation's state, passed as it is"
    )]
    fn settle(
        &mut self,
        graph: &Graph,
        wave: &[usize],
        keys: &[Option<Key>],
        incomplete: &HashMap<&str, String>,
        demand: &Demand,
        opts: &EvalOptions,
        st: &mut Waves,
        found: &mut HashMap<usize, Found>,
    ) -> Vec<usize> {
        let mut to_compute = Vec::new();
        for &i in wave {
            let id = &graph.nodes[i].id;
            if let Some(k) = keys[i] {
                st.result.keys.insert(id.clone(), k);
            }
            let upstream_failure = demand.sources[i]
                .iter()
                .find_map(|s| st.failed_root.get(s))
                .cloned();
            let (status, root) = if let Some(root) = upstream_failure {
                (
                    NodeStatus::Skipped {
                        upstream: root.clone(),
                    },
                    root,
                )
            } else if let Some(reason) = incomplete.get(id.as_str()) {
                (
                    NodeStatus::Incomplete {
                        reason: reason.clone(),
                    },
                    id.clone(),
                )
            } else if opts.cancel.is_cancelled() {
                (NodeStatus::Failed(NodeError::Cancelled), id.clone())
            } else {
                let hit = match found.remove(&i) {
                    Some(Found::Absent) => None,
                    Some(f) => Some(f),
                    None => {
                        keys[i].and_then(|k| self.lookup(k, graph.nodes[i].def.spec.outputs.len()))
                    }
                };
                if let Some(Found::Damaged(why)) = &hit {
                    st.result.disk_damaged.insert(id.clone(), why.clone());
                }
                if let Some(Found::Disk(_)) = &hit {
                    st.result.disk_read.insert(id.clone());
                }
                if let Some(Found::Memory(fields) | Found::Disk(fields)) = hit {
                    st.live_bytes += fields.iter().map(|f| f.byte_size()).sum::<usize>();
                    st.live.insert(i, fields);
                    st.result.status.insert(id.clone(), NodeStatus::Cached);
                } else {
                    to_compute.push(i);
                }
                continue;
            };
            st.result.status.insert(id.clone(), status);
            st.failed_root.insert(i, root);
        }
        to_compute
    }

    /// The result under `key` in memory, else on disk (then kept in memory too); a disk entry
    /// without the node's `outputs` fields is not its result.
    fn lookup(&mut self, key: Key, outputs: usize) -> Option<Found> {
        if let Some(f) = self.cache.as_mut().and_then(|c| c.get(&key)) {
            return Some(Found::Memory(f));
        }
        match self.disk.as_ref()?.get(&key) {
            Ok(f) if f.len() != outputs => Some(Found::Damaged(format!(
                "{} fields for {outputs} outputs",
                f.len()
            ))),
            Ok(f) => {
                if let Some(c) = self.cache.as_mut() {
                    c.insert(key, Arc::clone(&f));
                }
                Some(Found::Disk(f))
            }
            Err(disk::Miss::Absent) => None,
            Err(disk::Miss::Damaged(why)) => Some(Found::Damaged(why)),
        }
    }

    /// From the targets upstream: a needed node whose result is at hand is taken as it is,
    /// and what only it read is no longer needed (a build after a late edit reads the
    /// nearest stored results and nothing behind them). Returns what was found.
    fn prune(
        &mut self,
        graph: &Graph,
        plan: &crate::graph::Plan,
        demand: &mut Demand,
        keys: &[Option<Key>],
        incomplete: &HashMap<&str, String>,
    ) -> HashMap<usize, Found> {
        let count = graph.nodes.len();
        let mut found = HashMap::new();
        let mut required = vec![false; count];
        // Whether node i must run (so its sources are required).
        let mut runs = vec![false; count];
        let mut readers: Vec<Vec<usize>> = vec![Vec::new(); count];
        for (i, srcs) in demand.sources.iter().enumerate() {
            for &s in srcs {
                readers[s].push(i);
            }
        }
        for &i in plan.waves.iter().rev().flat_map(|w| w.iter().rev()) {
            if !demand.needed[i] {
                continue;
            }
            required[i] = demand.target[i] || readers[i].iter().any(|&r| runs[r]);
            if !required[i] {
                continue;
            }
            if incomplete.contains_key(graph.nodes[i].id.as_str()) {
                runs[i] = true;
                continue;
            }
            let outputs = graph.nodes[i].def.spec.outputs.len();
            let hit = keys[i].and_then(|k| self.lookup(k, outputs));
            runs[i] = !matches!(hit, Some(Found::Memory(_) | Found::Disk(_)));
            found.insert(i, hit.unwrap_or(Found::Absent));
        }
        demand.restrict(&required);
        found
    }

    /// The end of a wave: what its nodes computed kept (and cached), or their failure noted.
    fn keep(
        &mut self,
        graph: &Graph,
        computed: Vec<(usize, Result<Vec<Field>, NodeError>, Duration)>,
        keys: &[Option<Key>],
        st: &mut Waves,
    ) {
        let computed: Vec<(usize, Result<NodeFields, NodeError>, Duration)> = computed
            .into_iter()
            .map(|(i, r, dt)| (i, r.map(|f| f.into_iter().map(Arc::new).collect()), dt))
            .collect();
        if let Some(disk) = &self.disk {
            // Entries are compressed and written in parallel; a write that cannot be made
            // leaves the build as it is (see `disk`).
            let stored: Vec<usize> = computed
                .par_iter()
                .filter_map(|(i, r, dt)| {
                    let fields = r.as_ref().ok()?;
                    (disk.worth_storing(fields, *dt)
                        && keys[*i].is_some_and(|k| disk.put(&k, fields)))
                    .then_some(*i)
                })
                .collect();
            for i in stored {
                st.result.disk_stored.insert(graph.nodes[i].id.clone());
            }
        }
        for (i, r, dt) in computed {
            let id = graph.nodes[i].id.clone();
            st.result.timings.insert(id.clone(), dt);
            match r {
                Ok(fields) => {
                    st.live_bytes += fields.iter().map(|f| f.byte_size()).sum::<usize>();
                    if let (Some(c), Some(k)) = (self.cache.as_mut(), keys[i]) {
                        c.insert(k, Arc::clone(&fields));
                    }
                    st.live.insert(i, fields);
                    st.result.status.insert(id, NodeStatus::Computed);
                }
                Err(e) => {
                    st.failed_root.insert(i, id.clone());
                    st.result.status.insert(id, NodeStatus::Failed(e));
                }
            }
        }
    }
}
