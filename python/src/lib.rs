//! `orogen._orogen`: the Rust side of the `orogen` Python package, a thin layer over the
//! engine. Values cross as JSON text and fields as little-endian f32 bytes with a shape; the
//! Python package (`python/orogen/__init__.py`) turns them into Python values and numpy arrays.
//!
//! Every evaluation runs on a worker thread with the GIL released; the calling thread waits
//! in slices of 50 ms, checking for signals (Ctrl-C cancels the evaluation exactly as the
//! command line's does, then raises `KeyboardInterrupt`) and calling the progress callback.

use orogen::build::{BuildOptions, Exports};
use orogen::document::graph_file::{self, LoadOptions};
use orogen::eval::{
    ArrayInputs, CancelToken, EvalOptions, Evaluator, NodeStatus, ProgressEvent, Targets,
};
use orogen::field::Field;
use orogen::graph::PortRef;
use orogen::io::heightmap::Format;
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

// Declared in the `orogen` package (which re-exports it), so that pickle finds it there: an
// error raised in a worker process reaches the parent whole, message included.
create_exception!(
    orogen,
    OrogenError,
    PyException,
    "An Orogen graph could not be loaded, changed or built; the message is the command line's."
);

/// Results kept across calls on one graph (in memory), so an edit recomputes only what it
/// changed.
const CACHE_BYTES: usize = 2 << 30;

fn error(message: impl std::fmt::Display) -> PyErr {
    OrogenError::new_err(message.to_string())
}

/// A requested size (samples per side): taken as a Python int, so that a negative or huge
/// one is an `OrogenError` saying what is allowed rather than a bare `OverflowError`.
fn checked_size(size: Option<i64>) -> PyResult<Option<usize>> {
    let allowed = |s: u64| (2..=graph_file::MAX_RESOLUTION).contains(&s);
    match size {
        None => Ok(None),
        Some(s) if u64::try_from(s).is_ok_and(allowed) => Ok(usize::try_from(s).ok()),
        Some(s) => Err(error(format!(
            "size {s}: expected a resolution in [2, {}]",
            graph_file::MAX_RESOLUTION
        ))),
    }
}

/// Where a graph was loaded from.
enum Source {
    File(PathBuf),
    Text { text: String, base: Option<PathBuf> },
}

/// A graph file (or bundle, or JSON text) with its parameter changes.
#[pyclass(module = "orogen._orogen")]
struct Graph {
    source: Source,
    /// A bundle's unpacked files, kept while the graph lives.
    _bundle: Option<orogen::document::bundle::Opened>,
    sets: Vec<(String, String, serde_json::Value)>,
    params: Vec<(String, serde_json::Value)>,
    loaded: orogen::Graph,
    evaluator: Evaluator,
    /// Arrays the graph's `array_input` nodes read, by name.
    arrays: ArrayInputs,
}

impl Graph {
    fn load_with(
        source: &Source,
        sets: &[(String, String, serde_json::Value)],
        params: &[(String, serde_json::Value)],
    ) -> PyResult<orogen::Graph> {
        let opts = LoadOptions {
            set: sets,
            params,
            allow_outside: &[],
        };
        let loaded = match source {
            Source::File(p) => graph_file::load(graph_file::Source::File(p), &opts),
            Source::Text { text, base } => graph_file::load(
                graph_file::Source::Text {
                    text,
                    label: "graph",
                    base: base.as_deref(),
                },
                &opts,
            ),
        };
        loaded.map_err(error)
    }

    fn new(source: Source, bundle: Option<orogen::document::bundle::Opened>) -> PyResult<Self> {
        let loaded = Self::load_with(&source, &[], &[])?;
        Ok(Self {
            source,
            _bundle: bundle,
            sets: Vec::new(),
            params: Vec::new(),
            loaded,
            evaluator: Evaluator::with_cache(CACHE_BYTES),
            arrays: ArrayInputs::new(),
        })
    }

    fn base_dir(&self) -> Option<PathBuf> {
        match &self.source {
            Source::File(p) => p.parent().map(Path::to_path_buf),
            Source::Text { base, .. } => base.clone(),
        }
    }
}

/// `graph` with a seed override (a copy only when there is one).
fn seeded(graph: &orogen::Graph, seed: Option<u64>) -> std::borrow::Cow<'_, orogen::Graph> {
    match seed {
        Some(s) if s != graph.seed => {
            let mut g = graph.clone();
            g.seed = s;
            std::borrow::Cow::Owned(g)
        }
        _ => std::borrow::Cow::Borrowed(graph),
    }
}

/// One progress for a whole evaluation or build: the nodes finished plus the fractions of
/// those running, over the nodes the targets need (in the flattened graph), never going back
/// (a build evaluates some nodes twice: its previews, its exports) and below 1 until the work
/// has returned; with the names of the nodes running.
struct Overall {
    total: usize,
    state: std::sync::Mutex<OverallState>,
}

#[derive(Default)]
struct OverallState {
    finished: usize,
    running: std::collections::BTreeMap<String, f32>,
    last: f32,
    /// The step that finished last.
    latest: String,
}

impl Overall {
    /// Progress over `n` tasks of a tiled build.
    fn tasks(n: usize) -> Self {
        Self {
            total: n.max(1),
            state: std::sync::Mutex::default(),
        }
    }

    fn new<'a>(graph: &orogen::Graph, targets: impl Iterator<Item = &'a str>) -> Self {
        let flat = graph.flattened();
        let mut needed = std::collections::BTreeSet::new();
        for t in targets {
            let ups = flat.upstream(t);
            if ups.is_empty() {
                // A subgraph node's id is gone once flattened: count every node.
                needed.extend(flat.nodes.iter().map(|n| n.id.clone()));
            }
            needed.extend(ups);
        }
        Self {
            total: needed.len().max(1),
            state: std::sync::Mutex::default(),
        }
    }

    /// The overall fraction and stage after event `e`, when it moved.
    fn on(&self, e: &ProgressEvent) -> Option<(f32, String)> {
        let mut s = self.state.lock().ok()?;
        match e {
            ProgressEvent::Started { node } => {
                s.running.insert((*node).to_owned(), 0.0);
            }
            ProgressEvent::Progress { node, fraction } => {
                s.running
                    .insert((*node).to_owned(), fraction.clamp(0.0, 1.0));
            }
            ProgressEvent::Finished { node, .. } => {
                s.running.remove(*node);
                s.finished += 1;
                (*node).clone_into(&mut s.latest);
            }
        }
        let done = s.finished as f32 + s.running.values().sum::<f32>();
        let f = (done / self.total as f32).min(0.999).max(s.last);
        s.last = f;
        let mut stage = s.running.keys().cloned().collect::<Vec<_>>().join(", ");
        if stage.is_empty() {
            // Between steps (and in tiled builds, by task): the one that just finished.
            stage.clone_from(&s.latest);
        }
        Some((f, stage))
    }
}

/// Runs `work` on a worker thread with the GIL released; meanwhile checks for Ctrl-C (which
/// cancels `cancel` and raises `KeyboardInterrupt` once the work has stopped) and hands
/// progress fractions to `progress`.
fn run_released<T: Send>(
    py: Python<'_>,
    cancel: &CancelToken,
    progress: Option<&Bound<'_, PyAny>>,
    overall: &Overall,
    work: impl FnOnce(&(dyn Fn(ProgressEvent) + Sync)) -> T + Send,
) -> PyResult<T> {
    let (tx, rx) = mpsc::channel::<(f32, String)>();
    let (tx, rx) = (std::sync::Mutex::new(tx), std::sync::Mutex::new(rx));
    std::thread::scope(|s| {
        let worker = s.spawn(|| {
            // The sender's lock is held from computing the fraction to sending it: two nodes
            // finishing on two threads must not send their fractions in the other order
            // (the callback once saw the progress go back).
            let report = |e: ProgressEvent| {
                if let Ok(tx) = tx.lock() {
                    if let Some(p) = overall.on(&e) {
                        let _ = tx.send(p);
                    }
                }
            };
            let out = work(&report);
            if let Ok(tx) = tx.lock() {
                let _ = tx.send((1.0, String::new()));
            }
            out
        });
        let mut interrupted = None;
        loop {
            let finished = py.allow_threads(|| {
                // Wait a slice of time for the worker, draining progress meanwhile.
                // Of each run of events with one stage name, the last: every stage is seen
                // however fast it went, and the callback is not flooded by one stage's steps.
                let until = std::time::Instant::now() + Duration::from_millis(50);
                let mut latest: Vec<(f32, String)> = Vec::new();
                if let Ok(rx) = rx.lock() {
                    while let Some(left) = until.checked_duration_since(std::time::Instant::now()) {
                        match rx.recv_timeout(left) {
                            Ok(f) => match latest.last_mut() {
                                Some(last) if last.1 == f.1 => *last = f,
                                _ => latest.push(f),
                            },
                            Err(_) => break,
                        }
                    }
                }
                (worker.is_finished(), latest)
            });
            if let Some(cb) = progress {
                for (f, stage) in finished.1 {
                    if interrupted.is_some() {
                        break;
                    }
                    if let Err(e) = cb.call1((f, stage)) {
                        cancel.cancel();
                        interrupted.get_or_insert(e);
                    }
                }
            }
            if finished.0 {
                break;
            }
            if interrupted.is_none() {
                if let Err(e) = py.check_signals() {
                    cancel.cancel();
                    interrupted = Some(e);
                }
            }
        }
        let out = py
            .allow_threads(|| worker.join())
            .map_err(|_| error("internal error: the evaluation panicked"))?;
        match interrupted {
            Some(e) => Err(e),
            None => Ok(out),
        }
    })
}

/// A field as (little-endian f32 bytes, shape): `(h, w)`, or `(h, w, 3)` for colour
/// (channels interleaved).
fn field_bytes<'py>(py: Python<'py>, f: &Field) -> (Bound<'py, PyBytes>, Vec<usize>) {
    let (w, h, c) = (f.width(), f.height(), f.channels());
    let n = w * h;
    let bytes: Vec<u8> = if c == 1 {
        f.data().iter().flat_map(|v| v.to_le_bytes()).collect()
    } else {
        (0..n * c)
            .flat_map(|k| f.data()[(k % c) * n + k / c].to_le_bytes())
            .collect()
    };
    let shape = if c == 1 { vec![h, w] } else { vec![h, w, c] };
    (PyBytes::new(py, &bytes), shape)
}

/// Evaluated ports: `(name, little-endian f32 bytes, shape)`.
type Raw<'py> = Vec<(String, Bound<'py, PyBytes>, Vec<usize>)>;

/// Why output `name` (port `r`) of an evaluation is missing.
fn missing(
    status: &std::collections::BTreeMap<String, NodeStatus>,
    name: &str,
    r: &PortRef,
) -> PyErr {
    let why = match status.get(&r.node) {
        Some(NodeStatus::Failed(e)) => format!("node \"{}\" failed: {e}", r.node),
        Some(NodeStatus::Incomplete { reason }) => {
            format!("node \"{}\" is incomplete: {reason}", r.node)
        }
        Some(NodeStatus::Skipped { upstream }) => {
            // Name the cause: the first node up the chain that failed or is incomplete.
            let mut cause = upstream;
            for _ in 0..status.len() {
                match status.get(cause) {
                    Some(NodeStatus::Skipped { upstream }) => cause = upstream,
                    _ => break,
                }
            }
            let why = match status.get(cause) {
                Some(NodeStatus::Failed(e)) => format!("failed: {e}"),
                Some(NodeStatus::Incomplete { reason }) => format!("is incomplete: {reason}"),
                _ => "failed or is incomplete".to_owned(),
            };
            format!("node \"{}\" was skipped: \"{cause}\" {why}", r.node)
        }
        _ => format!("\"{r}\" was not computed"),
    };
    error(format!("output \"{name}\": {why}"))
}

#[pymethods]
impl Graph {
    /// Loads a graph file (`.json`) or bundle (`.orogen`).
    #[staticmethod]
    fn load(path: PathBuf) -> PyResult<Self> {
        if path.extension().is_some_and(|e| e == "orogen") {
            let opened = orogen::document::bundle::open(&path, None).map_err(error)?;
            let main = opened.graph.clone();
            return Self::new(Source::File(main), Some(opened));
        }
        Self::new(Source::File(path), None)
    }

    /// A graph from JSON text; `base_dir` stands for the file's folder (subgraph files and
    /// imported images are found there).
    #[staticmethod]
    #[pyo3(signature = (text, base_dir=None))]
    fn from_json(text: String, base_dir: Option<PathBuf>) -> PyResult<Self> {
        Self::new(
            Source::Text {
                text,
                base: base_dir,
            },
            None,
        )
    }

    /// The graph's name.
    #[getter]
    fn name(&self) -> String {
        self.loaded.name.clone()
    }

    /// The graph seed.
    #[getter]
    fn seed(&self) -> u64 {
        self.loaded.seed
    }

    /// Samples per side the graph is built at by default.
    #[getter]
    fn resolution(&self) -> usize {
        self.loaded.resolution
    }

    /// The world frame as JSON: size_m, height_min_m, height_max_m, georef (or null).
    fn world_json(&self) -> String {
        let w = &self.loaded.world;
        let georef = self.loaded.georef.map(|g| {
            serde_json::json!({
                "crs": g.epsg.map(|c| format!("EPSG:{c}")),
                "geographic": g.geographic,
                "west": g.west, "south": g.south, "east": g.east, "north": g.north,
            })
        });
        serde_json::json!({
            "size_m": w.size_m,
            "height_min_m": w.height_min_m,
            "height_max_m": w.height_max_m,
            "georef": georef,
        })
        .to_string()
    }

    /// The graph parameters and their values, as JSON.
    fn parameters_json(&self) -> String {
        serde_json::to_string(&orogen::document::graph_file::parameter_values(
            &self.loaded,
        ))
        .unwrap_or_default()
    }

    /// The named outputs: name → `node.port`, as JSON.
    fn outputs_json(&self) -> String {
        let m: std::collections::BTreeMap<&str, String> = self
            .loaded
            .outputs
            .iter()
            .map(|(k, r)| (k.as_str(), r.to_string()))
            .collect();
        serde_json::to_string(&m).unwrap_or_default()
    }

    /// Sets graph parameter `name` to the JSON `value`, checked like `--param`.
    fn set_param_json(&mut self, name: String, value: &str) -> PyResult<()> {
        let v: serde_json::Value = serde_json::from_str(value).map_err(error)?;
        let mut params = self.params.clone();
        params.retain(|(n, _)| *n != name);
        params.push((name, v));
        self.loaded = Self::load_with(&self.source, &self.sets, &params)?;
        self.params = params;
        Ok(())
    }

    /// Supplies array `name` (read by `array_input` nodes naming it): `height` rows of `width`
    /// little-endian f32 samples, north row first.
    fn set_array_raw(
        &mut self,
        name: &str,
        data: &[u8],
        width: usize,
        height: usize,
    ) -> PyResult<()> {
        if !data.len().is_multiple_of(4) {
            return Err(error(format!(
                "array \"{name}\": {} bytes is not a whole number of float32 samples",
                data.len()
            )));
        }
        let samples = data
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        self.arrays
            .insert(name, width, height, samples)
            .map_err(error)
    }

    /// Withdraws array `name`; whether it was supplied.
    fn remove_array(&mut self, name: &str) -> bool {
        self.arrays.remove(name)
    }

    /// The names of the arrays supplied.
    fn array_names(&self) -> Vec<String> {
        self.arrays.names().map(str::to_owned).collect()
    }

    /// Sets node parameter `key` (`node.param`) to the JSON `value`, checked like `--set`.
    fn set_json(&mut self, key: &str, value: &str) -> PyResult<()> {
        let (node, param) = key
            .split_once('.')
            .ok_or_else(|| error(format!("{key}: expected NODE.PARAM (no '.' in \"{key}\")")))?;
        let v: serde_json::Value = serde_json::from_str(value).map_err(error)?;
        let mut sets = self.sets.clone();
        sets.retain(|(n, p, _)| (n.as_str(), p.as_str()) != (node, param));
        sets.push((node.to_owned(), param.to_owned(), v));
        self.loaded = Self::load_with(&self.source, &sets, &self.params)?;
        self.sets = sets;
        Ok(())
    }

    /// Evaluates ports (`node.port`, or named outputs) at `size`² and returns
    /// `[(name, bytes, shape)]` (see `field_bytes`).
    #[pyo3(signature = (names, size=None, seed=None, progress=None))]
    fn evaluate_raw<'py>(
        &mut self,
        py: Python<'py>,
        names: Vec<String>,
        size: Option<i64>,
        seed: Option<u64>,
        progress: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Raw<'py>> {
        let size = checked_size(size)?;
        let graph = seeded(&self.loaded, seed);
        let mut refs = Vec::with_capacity(names.len());
        for n in &names {
            let r = if let Some(r) = graph.outputs.get(n) {
                r.clone()
            } else {
                let (node, port) = n.split_once('.').unwrap_or((n.as_str(), ""));
                let known = graph
                    .node(node)
                    .is_some_and(|x| port.is_empty() || x.def.output_index(port).is_some());
                if !known {
                    return Err(error(format!(
                        "\"{n}\": not a named output nor a node.port of this graph (outputs: {})",
                        graph.outputs.keys().cloned().collect::<Vec<_>>().join(", ")
                    )));
                }
                let port = if port.is_empty() {
                    graph
                        .node(node)
                        .and_then(|x| x.def.spec.outputs.first())
                        .map_or("out", |p| p.name)
                } else {
                    port
                };
                PortRef::new(node, port)
            };
            refs.push((n.clone(), r));
        }
        let base = self.base_dir();
        let cancel = CancelToken::new();
        let targets = Targets::Nodes(refs.iter().map(|(_, r)| r.node.clone()).collect());
        let evaluator = &mut self.evaluator;
        let arrays = &self.arrays;
        let g: &orogen::Graph = &graph;
        let overall = Overall::new(g, refs.iter().map(|(_, r)| r.node.as_str()));
        let result = run_released(py, &cancel, progress.as_ref(), &overall, |on_progress| {
            evaluator.evaluate(
                g,
                &EvalOptions {
                    resolution: size,
                    targets,
                    cancel: cancel.clone(),
                    progress: Some(on_progress),
                    base_dir: base.as_deref(),
                    arrays: Some(arrays),
                    ..EvalOptions::default()
                },
            )
        })?;
        let res = result.map_err(|d| {
            error(
                d.iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("; "),
            )
        })?;
        if cancel.is_cancelled() {
            return Err(error("cancelled"));
        }
        refs.iter()
            .map(|(name, r)| {
                let f = res
                    .field(g, r)
                    .ok_or_else(|| missing(&res.status, name, r))?;
                let (b, shape) = field_bytes(py, &f);
                Ok((name.clone(), b, shape))
            })
            .collect()
    }

    /// Writes every named output as `orogen build` does (the same files, byte for byte) into
    /// `out_dir`, in `formats` (names as `--format` takes them). Returns the manifest as JSON.
    #[pyo3(signature = (out_dir, formats=None, size=None, seed=None, preview=false, progress=None, extras=None))]
    #[expect(
        clippy::too_many_arguments,
        reason = "Python keyword arguments, as `orogen build` flags"
    )]
    fn write<'py>(
        &self,
        py: Python<'py>,
        out_dir: PathBuf,
        formats: Option<Vec<String>>,
        size: Option<i64>,
        seed: Option<u64>,
        preview: bool,
        progress: Option<Bound<'py, PyAny>>,
        extras: Option<String>,
    ) -> PyResult<String> {
        let size = checked_size(size)?;
        let formats = formats
            .unwrap_or_else(|| vec!["png16".into()])
            .iter()
            .map(|f| orogen::node::choice_from_name::<Format>(f).map_err(error))
            .collect::<PyResult<Vec<_>>>()?;
        let mut exports = Exports {
            formats,
            ..Exports::default()
        };
        if !preview {
            exports.preview = None;
        }
        let mut tiled = None;
        if let Some(json) = extras {
            extra_exports(&mut exports, &json).map_err(error)?;
            tiled = tiling(&json).map_err(error)?;
        }
        let graph = seeded(&self.loaded, seed);
        if let Some((req, stitch)) = tiled {
            let at = (out_dir.as_path(), size);
            return self.write_tiled(py, &graph, at, &exports, (req, &stitch), progress.as_ref());
        }
        let file = match &self.source {
            Source::File(p) => Some(p.clone()),
            Source::Text { .. } => None,
        };
        let cancel = CancelToken::new();
        let g: &orogen::Graph = &graph;
        let overall = Overall::new(g, g.outputs.values().map(|r| r.node.as_str()));
        let report = run_released(py, &cancel, progress.as_ref(), &overall, |on_progress| {
            orogen::build::build(
                g,
                &BuildOptions {
                    out_dir: out_dir.clone(),
                    exports,
                    resolution: size,
                    graph_file: file.as_deref(),
                    allow_outside: &[],
                    keep_going: false,
                    cancel: cancel.clone(),
                    progress: Some(on_progress),
                    cache: None,
                    arrays: Some(&self.arrays),
                },
            )
        })?;
        let report = report.map_err(error)?;
        serde_json::to_string(&report.manifest).map_err(error)
    }
}

impl Graph {
    /// `write` in tiles (`orogen build --tiles`): the plan written into `out_dir` and every
    /// task of it run in order; progress by task. Returns the manifest as JSON.
    fn write_tiled(
        &self,
        py: Python<'_>,
        graph: &orogen::Graph,
        (out_dir, size): (&Path, Option<usize>),
        exports: &Exports,
        (req, stitch): (orogen::tiles::TileRequest, &[Format]),
        progress: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<String> {
        use orogen::tiles::{Plan, RunOptions, Staging};
        let array = <orogen::nodes::io::array_input::ArrayInput as orogen::node::NodeDecl>::SPEC.id;
        if let Some(n) = graph.nodes.iter().find(|n| n.def.spec.id == array) {
            return Err(error(format!(
                "node \"{}\" reads an array: a tiled build's tasks read the plan folder only, so array inputs cannot be tiled (write the array to a file and import it)",
                n.id
            )));
        }
        // A graph given as text resolves its files in its base folder, as the plan's tasks will.
        let file = match &self.source {
            Source::File(p) => Some(p.clone()),
            Source::Text { base, .. } => base.as_ref().map(|b| b.join("graph.json")),
        };
        let n = size.unwrap_or(graph.resolution);
        let plan = Plan::for_build(
            graph,
            file.as_deref(),
            n,
            req,
            exports,
            stitch,
            Staging::default(),
        )
        .map_err(error)?;
        plan.write(out_dir, graph).map_err(error)?;
        let cancel = CancelToken::new();
        let overall = Overall::tasks(plan.tasks.len());
        let run = run_released(py, &cancel, progress, &overall, |on_progress| {
            let opts = RunOptions {
                cancel: cancel.clone(),
                progress: None,
                cache: None,
                side_by_side: 0,
            };
            orogen::tiles::run_all(out_dir, &opts, |id, _, _| {
                on_progress(ProgressEvent::Finished { node: id, ok: true });
            })
        })?;
        run.map_err(|e| error(format!("tiled build in {}: {e}", out_dir.display())))?;
        let manifest = out_dir.join("manifest.json");
        std::fs::read_to_string(&manifest)
            .map_err(|e| error(format!("{}: {e}", manifest.display())))
    }
}

/// The tiling asked for in `write`'s keyword arguments as JSON: `tiles` `[across, down]` or
/// `tile_size`, and `stitch` (formats of whole-map files streamed from the tiles); `None`
/// without either.
fn tiling(json: &str) -> Result<Option<(orogen::tiles::TileRequest, Vec<Format>)>, String> {
    use orogen::tiles::TileRequest;
    let v: serde_json::Value = serde_json::from_str(json).map_err(|e| e.to_string())?;
    let count = |x: &serde_json::Value, what: &str| -> Result<usize, String> {
        x.as_u64()
            .filter(|&c| (1..=4096).contains(&c))
            .map(|c| c as usize)
            .ok_or_else(|| format!("{what}={x}: expected a whole number in [1, 4096]"))
    };
    let req = match (&v["tiles"], &v["tile_size"]) {
        (serde_json::Value::Null, serde_json::Value::Null) => None,
        (t, serde_json::Value::Null) => match t.as_array().map(Vec::as_slice) {
            Some([a, b]) => Some(TileRequest::Count(count(a, "tiles")?, count(b, "tiles")?)),
            _ => {
                return Err(format!(
                    "tiles={t}: expected (across, down), such as (4, 4)"
                ))
            }
        },
        (serde_json::Value::Null, t) => {
            let t = count(t, "tile_size")?;
            if t < 16 {
                return Err(format!("tile_size={t}: expected 16 samples or more"));
            }
            Some(TileRequest::Size(t))
        }
        _ => return Err("tiles and tile_size are alternatives: give one".into()),
    };
    let stitch = v["stitch"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|f| {
                    let name = f.as_str().unwrap_or_default();
                    orogen::node::choice_from_name::<Format>(name)
                        .map_err(|e| format!("stitch: {e}"))
                })
                .collect::<Result<Vec<_>, _>>()
        })
        .transpose()?
        .unwrap_or_default();
    match req {
        Some(r) => Ok(Some((r, stitch))),
        None if stitch.is_empty() => Ok(None),
        None => Err("stitch needs tiles=(across, down) or tile_size".into()),
    }
}

/// The exports beyond the formats, from `write`'s keyword arguments as JSON (`null` for one
/// left out): `preset`, `range`, `normal_map` (8 or 16 bits), `normal_y`, `mesh`, `mesh_step`,
/// `mesh_error_m`, `splats` (name → mask outputs) and `splat_normalize`, checked as
/// `orogen build` checks its flags, with the argument's name in the message.
fn extra_exports(ex: &mut Exports, json: &str) -> Result<(), String> {
    use orogen::node::choice_from_name;
    let v: serde_json::Value = serde_json::from_str(json).map_err(|e| e.to_string())?;
    let text = |k: &str| -> Result<Option<&str>, String> {
        match &v[k] {
            serde_json::Value::Null => Ok(None),
            serde_json::Value::String(s) => Ok(Some(s)),
            other => Err(format!("{k}={other}: expected a string")),
        }
    };
    let named = |k: &str, e: String| format!("{k}: {e}");
    if let Some(p) = text("preset")? {
        ex.preset = Some(choice_from_name(p).map_err(|e| named("preset", e))?);
    }
    if let Some(r) = text("range")? {
        ex.range = choice_from_name(r).map_err(|e| named("range", e))?;
    }
    if let Some(bits) = v["normal_map"].as_u64() {
        if bits != 8 && bits != 16 {
            return Err(format!("normal_map={bits}: expected 8 or 16 (bits)"));
        }
        let y = match text("normal_y")? {
            Some(y) => choice_from_name(y).map_err(|e| named("normal_y", e))?,
            None => orogen::io::render::NormalY::Opengl,
        };
        ex.normal_map = Some((bits as u8, y));
    }
    let step = v["mesh_step"].as_u64().unwrap_or(1);
    if step == 0 {
        return Err("mesh_step=0: expected 1 or more".into());
    }
    if let Some(m) = text("mesh")? {
        let format = choice_from_name(m).map_err(|e| named("mesh", e))?;
        ex.mesh = Some((format, step as usize));
    }
    if let Some(e) = v["mesh_error_m"].as_f64() {
        if !(e.is_finite() && e >= 0.0) {
            return Err(format!("mesh_error_m={e}: expected metres, 0 or more"));
        }
        if ex.mesh.is_none() {
            return Err("mesh_error_m needs mesh=\"obj\" or mesh=\"glb\"".into());
        }
        if step != 1 {
            return Err("mesh_error_m and mesh_step are alternatives: the simplified mesh starts from every sample".into());
        }
        ex.mesh_error_m = Some(e as f32);
    }
    if let Some(splats) = v["splats"].as_object() {
        for (name, masks) in splats {
            let masks: Vec<String> = masks
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|m| m.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default();
            ex.splats.push((name.clone(), masks));
        }
    }
    ex.splat_normalize = v["splat_normalize"].as_bool().unwrap_or(false);
    Ok(())
}

/// The node catalogue as JSON (what `orogen nodes --json` prints).
/// The graph of a GeoTIFF DEM (`orogen new --from-dem`): `(text, note, folder)`, the graph's
/// JSON, the note when the DEM's ground is not square, and the folder the graph belongs in.
/// With `out` the graph is written there atomically (the DEM must lie inside its folder);
/// without, it belongs in the DEM's folder and nothing is written.
#[pyfunction]
#[pyo3(signature = (dem, out=None, resolution=None))]
fn from_dem(
    dem: PathBuf,
    out: Option<PathBuf>,
    resolution: Option<i64>,
) -> PyResult<(String, Option<String>, PathBuf)> {
    let resolution = checked_size(resolution)?;
    let folder = match &out {
        Some(o) => o
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf(),
        None => dem
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf(),
    };
    let label = out.as_deref().map_or_else(
        || "the DEM's graph".to_owned(),
        orogen::io::owned::escape_path,
    );
    let made = orogen::document::dem::from_dem(&dem, &folder, resolution, &label).map_err(error)?;
    if let Some(o) = &out {
        orogen::io::atomic::write_atomic(o, |f| std::io::Write::write_all(f, made.text.as_bytes()))
            .map_err(|e| error(format!("{}: {e}", orogen::io::owned::escape_path(o))))?;
    }
    Ok((made.text, made.note, folder))
}

#[pyfunction]
fn catalogue_json() -> String {
    serde_json::to_string(&orogen::document::catalogue::to_json(
        orogen::node::Registry::builtin(),
    ))
    .unwrap_or_default()
}

#[pymodule]
fn _orogen(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Graph>()?;
    m.add("OrogenError", m.py().get_type::<OrogenError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(catalogue_json, m)?)?;
    m.add_function(wrap_pyfunction!(from_dem, m)?)?;
    Ok(())
}
