//! Evaluation off the UI thread.
//!
//! The UI sends the whole graph after every edit; one worker thread owns an
//! [`Evaluator`] with a cache, so only what is downstream of an edit is recomputed. A newer job
//! cancels the one running (through its [`CancelToken`]) and jobs queued behind it are
//! skipped, so the worker always converges on the latest graph. Each job runs at one or more
//! resolutions — a quick one first, then a finer one — and every finished pass is sent back;
//! the UI keeps showing the previous result until a new one arrives.
//!
//! Incomplete nodes (an unconnected required input, say) are the engine's business: it reports
//! them as `NodeStatus::Incomplete`, skips what depends on them and evaluates the rest, so one
//! half-wired node never blanks the previews of the rest of the graph.
//!
//! Evaluation threads run at nice 19 (`setpriority`, one of the workspace's three `unsafe`
//! places) so that the UI and the GL driver keep their frames while erosion uses every core.

use orogen::eval::{DiskCache, EvalOptions, EvalResult, Evaluator, ProgressEvent, Targets};
use orogen::node::CancelToken;
use orogen::Graph;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Results kept across evaluations by the worker's cache.
const CACHE_BYTES: usize = 1 << 30;

/// One evaluation request.
struct Job {
    generation: u64,
    graph: Graph,
    base_dir: Option<PathBuf>,
    allow_outside: Vec<PathBuf>,
    resolutions: Vec<usize>,
    cancel: CancelToken,
    sent: Instant,
    /// The node the preview shows, evaluated first at each resolution.
    focus: Option<String>,
}

/// A finished evaluation pass.
pub struct Snapshot {
    /// The job it answers (increases with every edit).
    pub generation: u64,
    pub resolution: usize,
    /// The graph that was evaluated.
    pub graph: Graph,
    pub result: EvalResult,
    /// From the job being sent to this pass being ready.
    pub latency: Duration,
    /// True when the job was cancelled by a newer one during this pass.
    pub cancelled: bool,
    /// True for the pass of the previewed node alone (and what it needs), sent before the
    /// whole graph's at the same resolution: other nodes are missing from its result.
    pub partial: bool,
    /// The graph's sea level, if it floods one (for the terrain colours), found once here
    /// rather than at every frame that draws the preview.
    pub sea_m: Option<f32>,
}

/// Progress of the nodes running now.
#[derive(Default)]
pub struct Progress {
    pub generation: u64,
    /// Node id → fraction done.
    pub running: BTreeMap<String, f32>,
}

/// Handle to the evaluation thread.
pub struct Worker {
    jobs: Sender<Job>,
    done: Receiver<Snapshot>,
    progress: Arc<Mutex<Progress>>,
    current: Option<CancelToken>,
    generation: u64,
    /// Folders outside the graph's project the user allowed reading from in this session
    /// (never saved, never taken from a file).
    allow_outside: Vec<PathBuf>,
}

impl Worker {
    /// Starts the thread. `repaint` is called whenever something new is ready to show.
    #[must_use]
    pub fn spawn(repaint: Option<egui::Context>, disk: Option<Arc<DiskCache>>) -> Self {
        let (jobs, job_rx) = channel::<Job>();
        let (done_tx, done) = channel();
        let progress = Arc::new(Mutex::new(Progress::default()));
        let shared = Arc::clone(&progress);
        std::thread::Builder::new()
            .name("orogen-eval".into())
            .spawn(move || run(&job_rx, &done_tx, &shared, repaint.as_ref(), disk))
            .map_or_else(
                |e| eprintln!("cannot start the evaluation thread: {e}"),
                |_| (),
            );
        Self {
            jobs,
            done,
            progress,
            current: None,
            generation: 0,
            allow_outside: Vec::new(),
        }
    }

    /// Queues `graph` for evaluation at `resolutions` (in order), cancelling older work.
    /// Returns the job's generation.
    pub fn submit(
        &mut self,
        graph: &Graph,
        base_dir: Option<PathBuf>,
        resolutions: &[usize],
    ) -> u64 {
        self.submit_focused(graph, base_dir, resolutions, None)
    }

    /// As [`Worker::submit`], with node `focus` (the one the preview shows) evaluated first at
    /// each resolution and sent as a partial snapshot before the rest of the graph.
    pub fn submit_focused(
        &mut self,
        graph: &Graph,
        base_dir: Option<PathBuf>,
        resolutions: &[usize],
        focus: Option<&str>,
    ) -> u64 {
        if let Some(c) = self.current.take() {
            c.cancel();
        }
        self.generation += 1;
        let cancel = CancelToken::new();
        self.current = Some(cancel.clone());
        let job = Job {
            generation: self.generation,
            graph: graph.clone(),
            base_dir,
            allow_outside: self.allow_outside.clone(),
            resolutions: resolutions.to_vec(),
            cancel,
            sent: Instant::now(),
            focus: focus.map(str::to_owned),
        };
        // A closed channel means the thread is gone; the UI then simply shows no new results.
        let _ = self.jobs.send(job);
        self.generation
    }

    /// Lets evaluations read below `folder` although it is outside the graph's project (the
    /// user's explicit opt-in after a refusal; see docs/security.md).
    pub fn allow_outside(&mut self, folder: PathBuf) {
        if !self.allow_outside.contains(&folder) {
            self.allow_outside.push(folder);
        }
    }

    /// Cancels whatever is running.
    pub fn cancel(&mut self) {
        if let Some(c) = self.current.take() {
            c.cancel();
        }
    }

    /// Finished passes since the last call, oldest first.
    #[must_use]
    pub fn poll(&self) -> Vec<Snapshot> {
        self.done.try_iter().collect()
    }

    /// Waits up to `timeout` for the next finished pass.
    #[must_use]
    pub fn wait(&self, timeout: Duration) -> Option<Snapshot> {
        self.done.recv_timeout(timeout).ok()
    }

    /// Nodes running now with their progress (for the current generation only).
    #[must_use]
    pub fn running(&self) -> BTreeMap<String, f32> {
        let p = self.progress.lock().unwrap_or_else(PoisonError::into_inner);
        if p.generation == self.generation {
            p.running.clone()
        } else {
            BTreeMap::new()
        }
    }

    #[must_use]
    pub fn generation(&self) -> u64 {
        self.generation
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.cancel();
    }
}

/// How often the progress shown while nodes run is redrawn. Each frame costs CPU that the
/// evaluation (on lower-priority threads) then lacks — much of it with a software GL
/// driver, where redrawing every 16 ms made a preview several times slower than the same
/// build with the CLI (docs/perf-log.md).
pub const PROGRESS_FRAME: Duration = Duration::from_millis(100);

/// A spinner for running nodes that, unlike egui's, does not ask for a frame of its own
/// (egui's asks for every frame): it turns as often as the app redraws while nodes run,
/// every [`PROGRESS_FRAME`].
pub fn busy(ui: &mut egui::Ui) {
    let size = ui.style().spacing.interact_size.y;
    let (rect, _) = ui.allocate_exact_size(egui::vec2(size, size), egui::Sense::hover());
    let turns = ui.input(|i| i.time) / PROGRESS_FRAME.as_secs_f64() / 8.0;
    let start = (turns.fract() * std::f64::consts::TAU) as f32;
    let radius = rect.height() / 2.0 - 2.0;
    let points: Vec<egui::Pos2> = (0..=12)
        .map(|k| {
            let a = start + k as f32 / 12.0 * 4.5;
            rect.center() + radius * egui::vec2(a.cos(), a.sin())
        })
        .collect();
    let stroke = ui.visuals().strong_text_color();
    ui.painter()
        .add(egui::Shape::line(points, egui::Stroke::new(2.0, stroke)));
}

fn run(
    jobs: &Receiver<Job>,
    done: &Sender<Snapshot>,
    progress: &Mutex<Progress>,
    repaint: Option<&egui::Context>,
    disk: Option<Arc<DiskCache>>,
) {
    let mut evaluator = Evaluator::with_cache(CACHE_BYTES).with_disk(disk.clone());
    let mut trimmed_after = 0;
    // Evaluation threads yield to the UI thread (and the GL driver's threads): on a machine
    // whose cores are all busy with an erosion, frames still come in time. Thread count and
    // therefore results are unchanged (the engine's output does not depend on them anyway).
    lower_priority();
    let pool = rayon::ThreadPoolBuilder::new()
        .thread_name(|i| format!("orogen-eval-{i}"))
        .start_handler(|_| lower_priority())
        .build();
    while let Ok(mut job) = jobs.recv() {
        // Only the newest queued job matters.
        while let Ok(newer) = jobs.try_recv() {
            job = newer;
        }
        let graph = &job.graph;
        {
            let mut p = progress.lock().unwrap_or_else(PoisonError::into_inner);
            p.generation = job.generation;
            p.running.clear();
        }
        let on_progress = |e: ProgressEvent| {
            track(
                &mut progress
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .running,
                e,
            );
            if let Some(ctx) = repaint {
                ctx.request_repaint_after(PROGRESS_FRAME);
            }
        };
        for &resolution in &job.resolutions {
            // The node the preview shows first, on its own (it and what it needs), so its
            // picture does not wait for the rest of the graph; then everything (the focus's
            // results come from the cache).
            let focus = job.focus.as_ref().filter(|f| graph.node(f).is_some());
            let passes = focus
                .map(|f| Targets::Nodes(vec![f.clone()]))
                .into_iter()
                .chain(std::iter::once(Targets::All));
            for targets in passes {
                if job.cancel.is_cancelled() {
                    break;
                }
                let partial = !matches!(targets, Targets::All);
                let opts = EvalOptions {
                    resolution: Some(resolution),
                    targets,
                    cancel: job.cancel.clone(),
                    progress: Some(&on_progress),
                    base_dir: job.base_dir.as_deref(),
                    allow_outside: &job.allow_outside,
                    keep_all: true,
                    window: None,
                    coarse: None,
                    arrays: None,
                    stored: None,
                };
                let result = match &pool {
                    Ok(pool) => pool.install(|| evaluator.evaluate(graph, &opts)),
                    Err(_) => evaluator.evaluate(graph, &opts),
                };
                let snapshot = Snapshot {
                    generation: job.generation,
                    resolution,
                    graph: graph.clone(),
                    result: result.unwrap_or_else(failed_per_node),
                    latency: job.sent.elapsed(),
                    cancelled: job.cancel.is_cancelled(),
                    partial,
                    sea_m: graph.sea_level_m(),
                };
                if done.send(snapshot).is_err() {
                    return;
                }
                if let Some(ctx) = repaint {
                    ctx.request_repaint();
                }
            }
        }
        progress
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .running
            .clear();
        // The disk cache kept within its limit, once something new was stored.
        if let Some(d) = &disk {
            let stored = d.counters.stored.load(std::sync::atomic::Ordering::Relaxed);
            if stored > trimmed_after {
                trimmed_after = stored;
                d.trim(d.limit_bytes);
            }
        }
    }
}

/// Graph-wide errors (a cycle, which the canvas refuses to wire) as a result: shown per node.
fn failed_per_node(diags: Vec<orogen::graph::Diagnostic>) -> EvalResult {
    let mut r = EvalResult::default();
    for d in diags {
        r.status.insert(
            d.node.clone().unwrap_or_default(),
            orogen::eval::NodeStatus::Failed(orogen::node::NodeError::Failed(d.to_string())),
        );
    }
    r
}

/// Updates `running` (node id → fraction done) with one progress event; true when a node
/// finished.
pub fn track(running: &mut BTreeMap<String, f32>, e: ProgressEvent) -> bool {
    match e {
        ProgressEvent::Started { node } => {
            running.insert(node.to_owned(), 0.0);
            false
        }
        ProgressEvent::Progress { node, fraction } => {
            running.insert(node.to_owned(), fraction);
            false
        }
        ProgressEvent::Finished { node, .. } => {
            running.remove(node);
            true
        }
    }
}

/// Raises the calling thread's nice value to 19, the lowest priority (Linux: nice is per
/// thread). It keeps the UI's frames steady while erosion uses every core (BENCHMARKS.md).
#[expect(unsafe_code)]
fn lower_priority() {
    #[cfg(target_os = "linux")]
    // SAFETY: setpriority only reads its integer arguments; `who = 0` with PRIO_PROCESS names
    // the calling thread on Linux. Failure (e.g. not permitted) leaves the priority unchanged,
    // which is harmless, so the result is ignored.
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, 0, 19);
    }
}
