//! The `orogen` command line: `build`, `plan`, `run-task`, `check`, `stats`, `parity`, `pack`,
//! `unpack`, `diff`, `nodes`, `cache`.
//!
//! Exit codes: 0 success, 1 evaluation failed (some output could not be computed or written),
//! 2 invalid input (unreadable or invalid graph file, bad arguments).

mod args;
mod build;
mod cache;
mod check;
mod dem;
mod parity;
mod share;
mod stats;

use clap::{Parser, Subcommand};

use self::args::cancel_on_signal;
use self::args::open_bundle;
use self::args::ExportArgs;
use self::args::TileArgs;
use self::args::{GraphArgs, GraphSource};
use self::build::report_task;
use self::build::run_build;
use self::build::run_tiled;
use self::build::Tiled;
use self::cache::{run_cache, CacheArgs, CacheCommand};
use self::check::check_one;
use self::parity::run_parity;
use self::share::run_diff;
use self::share::run_pack;
use self::share::run_unpack;
use self::stats::run_stats;
use orogen::node::choice_from_name;
use orogen::node::ChoiceEnum;
use orogen::node::Registry;
use std::path::PathBuf;
use std::process::ExitCode;

/// A clap parser for an engine enum, by the names files and `orogen nodes` use.
fn choice<T: ChoiceEnum + Clone + Send + Sync + 'static>(
) -> impl clap::builder::TypedValueParser<Value = T> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(T::NAMES)
        .try_map(|s: String| choice_from_name::<T>(&s))
}

/// Exit code for invalid input.
const EXIT_INVALID: u8 = 2;
/// Exit code for a failed evaluation.
const EXIT_FAILED: u8 = 1;
/// Interrupted by SIGINT / SIGTERM (128 + 2, the shell convention for Ctrl-C).
const EXIT_INTERRUPTED: u8 = 130;

#[derive(Parser)]
#[command(
    name = "orogen",
    version,
    about = "Deterministic node-graph terrain builds"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Evaluate a graph and write every named output plus manifest.json.
    Build {
        #[command(flatten)]
        input: GraphArgs,
        /// Output folder.
        #[arg(short, long, default_value = "out")]
        out: PathBuf,
        #[command(flatten)]
        exports: ExportArgs,
        /// Write the outputs that can be built even when others cannot (an incomplete node on
        /// their chain, a failing node); exit 1 if any was left out. Without it a build
        /// writes every output or nothing.
        #[arg(long)]
        keep_going: bool,
        /// Say which nodes were computed and why (a parameter changed, old → new; an input
        /// changed; not stored), which were read from the cache and which were not needed.
        #[arg(long)]
        explain: bool,
        #[command(flatten)]
        tiles: TileArgs,
        #[command(flatten)]
        cache: CacheArgs,
    },
    /// Plan a tiled build as tasks for a scheduler: writes PLAN/plan.json (the coarse task,
    /// one task per tile, the stitch), the graph copy and Slurm job-array scripts
    /// (PLAN/slurm/submit.sh). Run the tasks with `orogen run-task`.
    Plan {
        #[command(flatten)]
        input: GraphArgs,
        /// The plan folder (the build's output folder too).
        #[arg(short, long)]
        out: PathBuf,
        #[command(flatten)]
        exports: ExportArgs,
        #[command(flatten)]
        tiles: TileArgs,
    },
    /// Run one task of a plan: coarse, a stage's (s<i>.piece-<j>, s<i>.tile-<k>, s<i>.whole, s<i>.water),
    /// tile-<k> or stitch. A task already done (its files
    /// present with the hashes its record gives) is skipped; retrying one is harmless.
    RunTask {
        /// The plan folder written by `orogen plan`.
        plan: PathBuf,
        /// The task id (see plan.json).
        task: String,
        #[command(flatten)]
        cache: CacheArgs,
    },
    /// The disk cache of node results: its size, trimming it to its limit, clearing it.
    Cache {
        #[command(subcommand)]
        command: CacheCommand,
    },
    /// Pack a graph, the subgraph files it uses and the images it imports into one
    /// self-contained bundle file (`.orogen`) that builds the same bytes anywhere.
    Pack {
        /// The graph file (JSON).
        graph: PathBuf,
        /// The bundle to write (NAME.orogen).
        #[arg(short, long)]
        out: PathBuf,
    },
    /// Unpack a bundle into a folder, restoring its files as they were packed (every file
    /// is checked against the bundle's hashes first; nothing is ever written outside DIR).
    Unpack {
        /// The bundle (.orogen).
        bundle: PathBuf,
        /// The folder to unpack into (default: the bundle's name next to it).
        #[arg(short, long)]
        out: Option<PathBuf>,
        /// Replace files that exist with other content.
        #[arg(long)]
        force: bool,
    },
    /// Validate graph files and report every problem: errors, and warnings for incomplete
    /// nodes (exit 2 only when an output depends on one).
    Check {
        /// Graph files.
        #[arg(required = true)]
        graphs: Vec<PathBuf>,
        /// Accept changed subgraph files: record their new content hashes in each graph file
        /// (rewritten atomically), which silences the "changed since" warning.
        #[arg(long)]
        accept: bool,
        /// Let the graph's references (subgraph files, imported images) reach into FOLDER although
        /// it is outside the graph's project (docs/security.md). Repeatable. Only for files you trust.
        #[arg(long = "allow-outside", value_name = "FOLDER")]
        allow_outside: Vec<PathBuf>,
    },
    /// Print statistics of each output: range, mean, spread, histogram, slope (mean and
    /// 50/90/99th percentiles), hypsometric integral (Strahler 1952), the height
    /// spectrum's power-law exponent, and the
    /// coastline's fractal dimension by box counting (Thorimbert & Chopard 2016 §5.3).
    Stats {
        #[command(flatten)]
        input: GraphArgs,
        /// Only this output (default: all).
        output: Option<String>,
        /// Sea level for the coastline, in metres (default: the median height).
        #[arg(long)]
        sea_level: Option<f32>,
        /// Histogram bins (1 to 65536).
        #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=65_536))]
        bins: u32,
    },
    /// Does the preview predict the build? Evaluate at two resolutions, bring the finer one
    /// down to the coarser grid, and compare every node's outputs (and what each erosion node
    /// changes). Exit 1 when a node is outside its tolerance.
    Parity {
        #[command(flatten)]
        source: GraphSource,
        /// The preview resolution.
        #[arg(long, default_value_t = 256)]
        from: usize,
        /// The build resolution.
        #[arg(long, default_value_t = 2048)]
        to: usize,
        /// Only these nodes (and what they need). Repeatable.
        #[arg(long = "node", value_name = "ID")]
        nodes: Vec<String>,
        /// Measure detail instead: at the build resolution (--to), the fine-band power of each
        /// erosion node's change (features shorter than two cells of a 256² preview) in its
        /// own mode ÷ with detail = native. Exit 1 when a node makes less than half.
        #[arg(long)]
        detail: bool,
        /// Compute the build resolution as a tiled build (`build --tiles`) does: every
        /// erosion and water node in a stage of its own over the whole world (erosion on the
        /// world's pieces, water exact over the tiled terrain), as the editor's region
        /// preview does. Any tile size gives the same values.
        #[arg(long, conflicts_with = "detail")]
        as_built: bool,
        /// With --as-built: the build's coarse pass (`build --coarse-size`). Erosion is
        /// refined in pieces above it; at or below it a tiled build is the whole map's.
        #[arg(long, value_name = "SAMPLES", default_value_t = orogen::tiles::COARSE_MAX, requires = "as_built")]
        coarse_size: usize,
    },
    /// What changed between two graph files: nodes added, removed, renamed, parameters
    /// (old → new, with units), wires, outputs, world and seed. Exit 0 when they are the same
    /// graph, 1 when they differ. Also a git diff driver: given git's seven arguments (see
    /// docs/graph-format.md), it compares the old and new files.
    Diff {
        /// A B, or git's PATH OLD-FILE OLD-HEX OLD-MODE NEW-FILE NEW-HEX NEW-MODE.
        #[arg(num_args = 2..=7, required = true)]
        files: Vec<PathBuf>,
    },
    /// Start a graph from real elevation data: `orogen new --from-dem DEM.tif -o graph.json`
    /// writes a graph that imports the DEM, with the world's size, height range and resolution
    /// taken from it (the DEM must be inside the graph's folder).
    New {
        /// A GeoTIFF DEM (float32/64, int16/32, uint16; striped or tiled; projected or
        /// geographic).
        #[arg(long = "from-dem", value_name = "DEM")]
        from_dem: PathBuf,
        /// The graph file to write.
        #[arg(short, long)]
        out: PathBuf,
        /// Samples per side, 16 to 16384 (default: the DEM's longer side, within that range).
        #[arg(long, value_parser = clap::value_parser!(u32).range(16..=16_384))]
        resolution: Option<u32>,
    },
    /// List every node type with its ports and parameters.
    Nodes {
        /// Print the machine-readable catalogue.
        #[arg(long, conflicts_with_all = ["markdown", "python"])]
        json: bool,
        /// Print the catalogue as the Markdown page docs/nodes.md.
        #[arg(long, conflicts_with = "python")]
        markdown: bool,
        /// Print the catalogue as the typed Python module python/orogen/nodes.py.
        #[arg(long)]
        python: bool,
    },
}

/// Runs the CLI and returns the process exit code.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { EXIT_INVALID } else { 0 });
        }
    };
    match cli.command {
        Command::Nodes {
            json,
            markdown,
            python,
        } => {
            let reg = Registry::builtin();
            if python {
                print!("{}", orogen::document::catalogue::to_python(reg));
            } else if markdown {
                print!("{}", orogen::document::catalogue::to_markdown(reg));
            } else if json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&orogen::document::catalogue::to_json(reg))
                        .unwrap_or_default()
                );
            } else {
                print!("{}", orogen::document::catalogue::to_text(reg));
            }
            ExitCode::SUCCESS
        }
        Command::Pack { graph, out } => run_pack(&graph, &out),
        Command::Unpack { bundle, out, force } => run_unpack(&bundle, out, force),
        Command::Check {
            graphs,
            accept,
            allow_outside,
        } => {
            let ok = graphs
                .iter()
                .map(|p| {
                    let mut p = p.clone();
                    match open_bundle(&mut p) {
                        Ok(_bundle) => check_one(&p, accept, &allow_outside),
                        Err(_) => false,
                    }
                })
                .fold(true, |a, b| a & b);
            ExitCode::from(if ok { 0 } else { EXIT_INVALID })
        }
        Command::Build {
            input,
            out,
            exports,
            keep_going,
            explain,
            tiles,
            cache,
        } => build_command(input, out, &exports, keep_going, explain, &tiles, &cache),
        Command::Plan {
            input,
            out,
            exports,
            tiles,
        } => {
            if let Some(req) = tiles.request() {
                run_tiled(&input, &out, &exports, &tiles, req, Tiled::Plan)
            } else {
                eprintln!("error: orogen plan needs --tiles AxB or --tile-size SAMPLES");
                ExitCode::from(EXIT_INVALID)
            }
        }
        Command::Diff { files } => run_diff(&files),
        Command::New {
            from_dem,
            out,
            resolution,
        } => dem::run_new_from_dem(&from_dem, &out, resolution.map(|r| r as usize)),
        Command::RunTask { plan, task, cache } => run_task_command(&plan, &task, &cache),
        Command::Cache { command } => run_cache(&command),
        Command::Stats {
            mut input,
            output,
            sea_level,
            bins,
        } => match open_bundle(&mut input.source.graph) {
            Ok(_bundle) => run_stats(&input, output.as_deref(), sea_level, bins as usize),
            Err(code) => code,
        },
        Command::Parity {
            mut source,
            from,
            to,
            nodes,
            detail,
            as_built,
            coarse_size,
        } => match open_bundle(&mut source.graph) {
            Ok(_bundle) => run_parity(
                source,
                (from, to),
                &nodes,
                (detail, as_built.then_some(coarse_size)),
            ),
            Err(code) => code,
        },
    }
}

/// `orogen build`: whole map or tiled, with the disk cache.
fn build_command(
    mut input: GraphArgs,
    out: PathBuf,
    exports: &ExportArgs,
    keep_going: bool,
    explain: bool,
    tiles: &TileArgs,
    cache: &CacheArgs,
) -> ExitCode {
    let _bundle = match open_bundle(&mut input.source.graph) {
        Ok(b) => b,
        Err(code) => return code,
    };
    let cache = match cache.open() {
        Ok(c) => c,
        Err(code) => return code,
    };
    let code = match tiles.request() {
        Some(req) => run_tiled(&input, &out, exports, tiles, req, Tiled::Run(cache.clone())),
        None if !tiles.stitch.is_empty() => {
            eprintln!("error: --stitch needs --tiles or --tile-size");
            ExitCode::from(EXIT_INVALID)
        }
        None => run_build(&input, out, exports, keep_going, explain, cache.clone()),
    };
    cache::finish(cache.as_ref());
    code
}

/// `orogen run-task`, with the disk cache.
fn run_task_command(plan: &std::path::Path, task: &str, cache: &CacheArgs) -> ExitCode {
    let cache = match cache.open() {
        Ok(c) => c,
        Err(code) => return code,
    };
    let opts = orogen::tiles::RunOptions {
        cancel: cancel_on_signal(),
        progress: None,
        cache: cache.clone(),
        side_by_side: 0,
    };
    let start = std::time::Instant::now();
    let code = match orogen::tiles::run_task(plan, task, &opts) {
        Ok(outcome) => {
            report_task(task, outcome, start.elapsed());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: task {task}: {e}");
            ExitCode::from(EXIT_FAILED)
        }
    };
    cache::finish(cache.as_ref());
    code
}
