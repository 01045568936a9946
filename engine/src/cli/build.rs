//! `orogen build` (whole map or tiled), `plan` and the tasks' reports.

use super::args::cancel_on_signal;
use super::args::load_graph;
use super::args::ExportArgs;
use super::args::GraphArgs;
use super::args::TileArgs;
use super::EXIT_FAILED;
use super::EXIT_INTERRUPTED;
use super::EXIT_INVALID;
use indicatif::ProgressBar;
use indicatif::ProgressStyle;
use orogen::build::build;
use orogen::build::BuildError;
use orogen::build::BuildOptions;
use orogen::document::graph_file;
use orogen::eval::DiskCache;
use orogen::eval::ProgressEvent;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::Mutex;

/// Records what this build's keys were made of beside the cache (for the next `--explain`)
/// and, with `print`, explains this one against the last.
fn explain_build(
    cache: &DiskCache,
    graph_path: &std::path::Path,
    graph: &orogen::graph::Graph,
    eval: &orogen::eval::EvalResult,
    print: bool,
) {
    use orogen::document::explain;
    let path = explain::record_path(cache.dir(), graph_path);
    let previous = explain::load(&path);
    let now = explain::record(graph, eval, previous.as_ref());
    if print {
        println!("explain ({}):", orogen::io::owned::escape_path(cache.dir()));
        for line in explain::lines(graph, eval, previous.as_ref(), &now) {
            println!("{line}");
        }
    }
    explain::save(&path, &now);
}

pub(super) fn report_task(
    task: &str,
    outcome: orogen::tiles::TaskOutcome,
    took: std::time::Duration,
) {
    match outcome {
        orogen::tiles::TaskOutcome::Ran => {
            eprintln!("{task}: done in {:.1} s", took.as_secs_f64());
        }
        orogen::tiles::TaskOutcome::AlreadyDone => {
            eprintln!("{task}: already done (its files match its record)");
        }
    }
}

/// What `run_tiled` does with the plan it writes.
pub(super) enum Tiled {
    /// `orogen plan`: only write it.
    Plan,
    /// `orogen build --tiles`: the local runner, every task of the plan in order in this
    /// process, with this disk cache.
    Run(Option<Arc<DiskCache>>),
}

/// `orogen plan` or `orogen build --tiles`.
pub(super) fn run_tiled(
    input: &GraphArgs,
    out: &std::path::Path,
    export_args: &ExportArgs,
    tile_args: &TileArgs,
    req: orogen::tiles::TileRequest,
    run: Tiled,
) -> ExitCode {
    use orogen::tiles::Plan;
    let fail = |e: &dyn std::fmt::Display| {
        eprintln!("error: {e}");
        ExitCode::from(EXIT_INVALID)
    };
    let exports = match export_args.exports() {
        Ok(e) => e,
        Err(e) => return fail(&e),
    };
    let probe_opts = graph_file::LoadOptions {
        allow_outside: &input.source.allow_outside,
        ..graph_file::LoadOptions::default()
    };
    let probe = match graph_file::load(graph_file::Source::File(&input.source.graph), &probe_opts) {
        Ok(g) => g,
        Err(d) => {
            eprintln!("{d}");
            return ExitCode::from(EXIT_INVALID);
        }
    };
    let n = input.size.unwrap_or(probe.resolution);
    // Memory is that of one tile (with its halo) and of the coarse evaluation.
    let tile = match req {
        orogen::tiles::TileRequest::Count(a, _) => n.div_ceil(a.max(1)),
        orogen::tiles::TileRequest::Size(t) => t,
    };
    let side = (tile + 64).min(n).max(n.min(tile_args.coarse_size));
    let graph = match load_graph(input, Some(side)) {
        Ok(g) => g,
        Err(code) => return code,
    };
    let stage_memory = match stage_memory(input, tile_args) {
        Ok(m) => m,
        Err(code) => return code,
    };
    let mut plan = match Plan::for_build(
        &graph,
        Some(&input.source.graph),
        n,
        req,
        &exports,
        &tile_args.stitch,
        orogen::tiles::Staging {
            coarse_size: tile_args.coarse_size,
            stage_memory,
        },
    ) {
        Ok(p) => p,
        Err(e) => {
            for line in e.lines() {
                eprintln!(
                    "{}: {line}",
                    orogen::io::owned::escape_path(&input.source.graph)
                );
            }
            return ExitCode::from(EXIT_INVALID);
        }
    };
    plan.allow_outside = input
        .source
        .allow_outside
        .iter()
        .map(|p| std::path::absolute(p).unwrap_or_else(|_| p.clone()))
        .collect();
    if let Err(e) = plan.write(out, &graph) {
        eprintln!("error: {e}");
        return ExitCode::from(EXIT_FAILED);
    }
    let tasks = plan.tasks.len();
    let Tiled::Run(cache) = run else {
        print_plan(&plan, out);
        return ExitCode::SUCCESS;
    };
    let side_by_side = side_by_side(input, &graph, side);
    let opts = orogen::tiles::RunOptions {
        cancel: cancel_on_signal(),
        progress: None,
        cache,
        side_by_side,
    };
    let mut done = 0;
    let result = orogen::tiles::run_all(out, &opts, |id, outcome, took| {
        done += 1;
        report_task(&format!("[{done}/{tasks}] {id}"), outcome, took);
    });
    match result {
        Ok(()) => {
            println!(
                "{}",
                orogen::io::owned::escape_path(&out.join("manifest.json"))
            );
            ExitCode::SUCCESS
        }
        Err(e) if opts.cancel.is_cancelled() => {
            eprintln!("{}: build interrupted ({e}); run the same command again to resume from the tiles already written", orogen::io::owned::escape_path(&input.source.graph));
            ExitCode::from(EXIT_INTERRUPTED)
        }
        Err(e) => {
            eprintln!(
                "{}: {e}",
                orogen::io::owned::escape_path(&input.source.graph)
            );
            ExitCode::from(EXIT_FAILED)
        }
    }
}

pub(super) fn run_build(
    input: &GraphArgs,
    out: PathBuf,
    export_args: &ExportArgs,
    keep_going: bool,
    explain: bool,
    cache: Option<Arc<DiskCache>>,
) -> ExitCode {
    let exports = match export_args.exports() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(EXIT_INVALID);
        }
    };
    let (graph_path, size) = (&input.source.graph, input.size);
    let graph = match load_graph(input, None) {
        Ok(g) => g,
        Err(code) => return code,
    };
    let cancel = cancel_on_signal();
    let progress = Progress::new(graph.nodes.len());
    let on_progress = |e: ProgressEvent| progress.on(&e);
    let result = build(
        &graph,
        &BuildOptions {
            out_dir: out.clone(),
            exports,
            resolution: size,
            graph_file: Some(graph_path),
            allow_outside: &input.source.allow_outside,
            keep_going,
            cancel,
            progress: Some(&on_progress),
            cache: cache.clone(),
            arrays: None,
        },
    );
    progress.finish();
    match result {
        Ok(report) => {
            if let Some(c) = &cache {
                explain_build(c, graph_path, &graph, &report.eval, explain);
            } else if explain {
                println!("explain: built without the disk cache (--no-cache or OROGEN_CACHE=off): every node computed");
            }
            for o in &report.manifest.outputs {
                println!(
                    "{}  {}×{}  [{:.2}, {:.2}]  {}",
                    orogen::io::owned::escape_path(&out.join(&o.file)),
                    o.width,
                    o.height,
                    o.min,
                    o.max,
                    &o.hash[..16]
                );
            }
            for (node, e) in &report.manifest.errors {
                eprintln!(
                    "{}: node \"{node}\": {e}",
                    orogen::io::owned::escape_path(graph_path)
                );
            }
            println!("{}", orogen::io::owned::escape_path(&report.manifest_path));
            if report.complete() {
                ExitCode::SUCCESS
            } else {
                eprintln!(
                    "error: {} output(s) not built: {}",
                    report.failed_outputs.len(),
                    report.failed_outputs.join(", ")
                );
                ExitCode::from(EXIT_FAILED)
            }
        }
        Err(e @ BuildError::Cancelled) => {
            eprintln!("{}: {e}", orogen::io::owned::escape_path(graph_path));
            ExitCode::from(EXIT_INTERRUPTED)
        }
        Err(e @ BuildError::Incomplete(_)) => {
            for line in e.to_string().lines() {
                eprintln!("{}: {line}", orogen::io::owned::escape_path(graph_path));
            }
            eprintln!("(wire the missing inputs, or build the other outputs with --keep-going)");
            ExitCode::from(EXIT_INVALID)
        }
        Err(e @ BuildError::Failed(_)) => {
            for line in e.to_string().lines() {
                eprintln!("{}: {line}", orogen::io::owned::escape_path(graph_path));
            }
            eprintln!("(build the other outputs with --keep-going)");
            ExitCode::from(EXIT_FAILED)
        }
        Err(
            e @ (BuildError::Invalid(_)
            | BuildError::NoOutputs
            | BuildError::Splat(..)
            | BuildError::Journal(_)),
        ) => {
            eprintln!("{}: {e}", orogen::io::owned::escape_path(graph_path));
            ExitCode::from(EXIT_INVALID)
        }
        Err(e) => {
            eprintln!(
                "error: {:#}",
                anyhow::Error::from(e).context(format!(
                    "building {}",
                    orogen::io::owned::escape_path(graph_path)
                ))
            );
            ExitCode::from(EXIT_FAILED)
        }
    }
}

/// What a whole-map build shows while it runs: a bar on a terminal; with OROGEN_PROGRESS=lines
/// (for logs: a scheduler's, a pipeline's) a line when each node starts and finishes.
struct Progress {
    bar: Option<ProgressBar>,
    lines: bool,
    running: Mutex<Vec<String>>,
}

impl Progress {
    fn new(nodes: usize) -> Self {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::new(nodes as u64);
            bar.set_style(
                ProgressStyle::with_template("{spinner} [{bar:30}] {pos}/{len} nodes {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            bar
        });
        Self {
            bar,
            lines: std::env::var_os("OROGEN_PROGRESS").is_some_and(|v| v == "lines"),
            running: Mutex::new(Vec::new()),
        }
    }

    fn on(&self, e: &ProgressEvent) {
        if self.lines {
            match e {
                ProgressEvent::Started { node } => eprintln!("started {node}"),
                ProgressEvent::Finished { node, ok } => {
                    eprintln!("finished {node}{}", if *ok { "" } else { " (failed)" });
                }
                ProgressEvent::Progress { .. } => {}
            }
        }
        let Some(bar) = &self.bar else { return };
        match e {
            ProgressEvent::Started { node } => {
                if let Ok(mut r) = self.running.lock() {
                    r.push((*node).to_owned());
                    bar.set_message(r.join(", "));
                }
            }
            ProgressEvent::Progress { .. } => bar.tick(),
            ProgressEvent::Finished { node, .. } => {
                bar.inc(1);
                if let Ok(mut r) = self.running.lock() {
                    r.retain(|n| n != node);
                    bar.set_message(r.join(", "));
                }
            }
        }
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// `--stage-memory`, or half of `--max-memory` when only that is given (`None`: the plan's
/// default).
fn stage_memory(input: &GraphArgs, tile_args: &TileArgs) -> Result<Option<u64>, ExitCode> {
    use orogen::eval::memory::parse_bytes;
    match tile_args.stage_memory.as_deref().map(parse_bytes) {
        // Under --max-memory, a whole-map stage may hold half of it.
        None => Ok(input
            .max_memory
            .as_deref()
            .and_then(|m| parse_bytes(m).ok())
            .map(|b| b / 2)),
        Some(Ok(b)) => Ok(Some(b)),
        Some(Err(e)) => {
            eprintln!("error: --stage-memory {e}");
            Err(ExitCode::from(EXIT_INVALID))
        }
    }
}

/// Under `--max-memory`, how many output tiles fit side by side, each counted at the estimate
/// for a tile of `side`² with its margin (the one `check_memory` made); 0 without a limit.
fn side_by_side(input: &GraphArgs, graph: &orogen::Graph, side: usize) -> usize {
    match input
        .max_memory
        .as_deref()
        .map(orogen::eval::memory::parse_bytes)
    {
        Some(Ok(budget)) => {
            let per = orogen::eval::memory::estimate_peak_bytes(
                graph,
                side,
                &orogen::eval::Targets::Outputs,
            )
            .unwrap_or(0);
            usize::try_from(budget / per.max(1))
                .unwrap_or(usize::MAX)
                .max(1)
        }
        _ => 0,
    }
}

/// What `orogen plan` wrote: its tasks, its stages and how to run them.
fn print_plan(plan: &orogen::tiles::Plan, out: &std::path::Path) {
    let grid = plan.grid;
    let stages: Vec<String> = plan
        .stages
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let how = match s.kind {
                orogen::tiles::StageKind::Pieces => "refined in pieces",
                orogen::tiles::StageKind::Whole => "whole map",
                orogen::tiles::StageKind::Carried => "carried from the coarse pass",
                orogen::tiles::StageKind::Water => "tile by tile, perimeters exchanged",
            };
            format!("s{i} {} ({how})", orogen::io::owned::escape(&s.node))
        })
        .collect();
    println!(
        "{}: {} tasks ({}{}×{} tiles of {} samples, then the stitch)",
        orogen::io::owned::escape_path(&out.join(orogen::tiles::PLAN_FILE)),
        plan.tasks.len(),
        plan.coarse_resolution
            .map(|c| format!("the coarse task at {c}², "))
            .unwrap_or_default(),
        grid.tiles_x,
        grid.tiles_y,
        grid.size
    );
    if !stages.is_empty() {
        println!("stages: {}", stages.join("; "));
    }
    println!(
        "run them with `orogen run-task {} TASK`, or on Slurm: {}",
        orogen::io::owned::escape_path(out),
        orogen::io::owned::escape_path(&out.join("slurm/submit.sh"))
    );
}
