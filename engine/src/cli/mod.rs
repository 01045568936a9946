//! The `orogen` command line: `build`, `plan`, `run-task`, `check`, `stats`, `parity`, `pack`,
//! `unpack`, `diff`, `nodes`.
//!
//! Exit codes: 0 success, 1 evaluation failed (some output could not be computed or written),
//! 2 invalid input (unreadable or invalid graph file, bad arguments).

use anyhow::anyhow;
use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use orogen::build::{build, BuildError, BuildOptions, Exports, MeshFormat, Preset, Range};
use orogen::eval::{CancelToken, ProgressEvent};
use orogen::io::graph_file;
use orogen::io::heightmap::Format;
use orogen::io::render::{Colormap, NormalY};
use orogen::node::{choice_from_name, ChoiceEnum, Registry};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Mutex;

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
        #[command(flatten)]
        tiles: TileArgs,
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
    /// Run one task of a plan: coarse, tile-K or stitch. A task already done (its files
    /// present with the hashes its record gives) is skipped; retrying one is harmless.
    RunTask {
        /// The plan folder written by `orogen plan`.
        plan: PathBuf,
        /// The task id (see plan.json).
        task: String,
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
        /// Histogram bins.
        #[arg(long, default_value_t = 16)]
        bins: usize,
    },
    /// Does the preview predict the build? Evaluate at two resolutions, bring the finer one
    /// down to the coarser grid, and compare every node's outputs (and what each erosion node
    /// changes). Exit 1 when a node is outside its tolerance.
    Parity {
        /// The graph file (JSON).
        graph: PathBuf,
        /// The preview resolution.
        #[arg(long, default_value_t = 256)]
        from: usize,
        /// The build resolution.
        #[arg(long, default_value_t = 2048)]
        to: usize,
        /// Only these nodes (and what they need). Repeatable.
        #[arg(long = "node", value_name = "ID")]
        nodes: Vec<String>,
        /// Graph seed (default: the graph's seed).
        #[arg(long)]
        seed: Option<u64>,
        /// Override a parameter: NODE.PARAM=VALUE. Repeatable.
        #[arg(long = "set", value_name = "NODE.PARAM=VALUE")]
        set: Vec<String>,
        /// Set a graph parameter: NAME=VALUE. Repeatable.
        #[arg(long = "param", value_name = "NAME=VALUE")]
        param: Vec<String>,
        /// Measure detail instead: at the build resolution (--to), the fine-band power of each
        /// erosion node's change (features shorter than two cells of a 256² preview) in its
        /// own mode ÷ with detail = native. Exit 1 when a node makes less than half.
        #[arg(long)]
        detail: bool,
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
    /// List every node type with its ports and parameters.
    Nodes {
        /// Print the machine-readable catalogue.
        #[arg(long)]
        json: bool,
    },
}

/// What `build` writes besides the heightmaps' evaluation.
#[derive(clap::Args)]
struct ExportArgs {
    /// Heightmap formats, comma-separated (png16, exr, r16, f32, tiff16).
    #[arg(long, value_parser = choice::<Format>(), value_delimiter = ',', default_value = "png16")]
    format: Vec<Format>,
    /// Heights mapped onto 0…65535 by 16-bit formats: the graph's height range, or each output's own min…max (unclamped; recorded as range_m in the manifest).
    #[arg(long, value_parser = choice::<Range>(), default_value = "graph")]
    range: Range,
    /// Game-engine preset: size, format and manifest numbers for unity, unreal or godot (overrides --format and rounds --size to a size the engine accepts).
    #[arg(long, value_parser = choice::<Preset>())]
    preset: Option<Preset>,
    /// Colormap of the rendered, hillshaded preview written per output (`<output>.preview.png`).
    #[arg(long, value_parser = choice::<Colormap>(), default_value = "terrain")]
    preview: Colormap,
    /// Do not write previews.
    #[arg(long)]
    no_preview: bool,
    /// Write a tangent-space normal map per height output (`<output>.normal.png`).
    #[arg(long)]
    normal_map: bool,
    /// Normal map bit depth: 8 or 16.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u8).range(8..=16))]
    normal_bits: u8,
    /// Normal map green channel: opengl (Y up: Unity, Godot, Blender) or directx (Y down: Unreal).
    #[arg(long, value_parser = choice::<NormalY>(), default_value = "opengl")]
    normal_y: NormalY,
    /// Write a mesh per height output.
    #[arg(long, value_parser = choice::<MeshFormat>())]
    mesh: Option<MeshFormat>,
    /// Mesh decimation: keep every N-th sample (1 = full resolution).
    #[arg(long, default_value_t = 1)]
    mesh_step: usize,
    /// Splat map: NAME=MASK1,MASK2[,MASK3[,MASK4]] packs up to four mask outputs into NAME.splat.png (RGBA). Repeatable.
    #[arg(long = "splat", value_name = "NAME=MASKS")]
    splat: Vec<String>,
    /// Normalise splat weights to sum to 1 where any is positive.
    #[arg(long)]
    splat_normalize: bool,
}

impl ExportArgs {
    fn exports(&self) -> anyhow::Result<Exports> {
        let splats = self
            .splat
            .iter()
            .map(|s| {
                let (name, masks) = s
                    .split_once('=')
                    .ok_or_else(|| anyhow!("--splat {s}: expected NAME=MASK1,MASK2,…"))?;
                Ok((
                    name.to_owned(),
                    masks.split(',').map(str::to_owned).collect(),
                ))
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        if self.normal_bits != 8 && self.normal_bits != 16 {
            return Err(anyhow!(
                "--normal-bits must be 8 or 16, got {}",
                self.normal_bits
            ));
        }
        if self.mesh_step == 0 {
            return Err(anyhow!("--mesh-step must be at least 1"));
        }
        Ok(Exports {
            formats: self.format.clone(),
            range: self.range,
            preset: self.preset,
            preview: (!self.no_preview).then_some(self.preview),
            normal_map: self.normal_map.then_some((self.normal_bits, self.normal_y)),
            mesh: self.mesh.map(|m| (m, self.mesh_step)),
            splats,
            splat_normalize: self.splat_normalize,
        })
    }
}

/// Tiled, out-of-core builds (see the README's "Large worlds").
#[derive(clap::Args)]
struct TileArgs {
    /// Build in tiles, AxB across and down (e.g. 8x8): no whole-map field is held in memory.
    /// With --preset unreal or unity the tiles share their borders and are named as those
    /// engines import them.
    #[arg(long, value_name = "AxB", conflicts_with = "tile_size")]
    tiles: Option<orogen::tiles::TileRequest>,
    /// Build in tiles of this many samples per side.
    #[arg(long, value_name = "SAMPLES")]
    tile_size: Option<usize>,
    /// With tiles: also write each output as one whole-map file (r16 or f32), streamed row by
    /// row from the tiles.
    #[arg(long, value_parser = choice::<Format>(), value_delimiter = ',')]
    stitch: Vec<Format>,
    /// With tiles: the resolution at which nodes that need the whole world (erosion,
    /// normalisation) see it; each tile adds their change, upsampled, to its own detail.
    #[arg(long, value_name = "SAMPLES", default_value_t = orogen::tiles::COARSE_MAX)]
    coarse_size: usize,
}

impl TileArgs {
    fn request(&self) -> Option<orogen::tiles::TileRequest> {
        use orogen::tiles::TileRequest;
        self.tiles.or(self.tile_size.map(TileRequest::Size))
    }
}

/// The graph to evaluate and how: shared by `build` and `stats`.
#[derive(clap::Args)]
struct GraphArgs {
    /// The graph file (JSON).
    graph: PathBuf,
    /// Samples per side (default: the graph's resolution).
    #[arg(long)]
    size: Option<usize>,
    /// Graph seed (default: the graph's seed).
    #[arg(long)]
    seed: Option<u64>,
    /// Override a parameter: NODE.PARAM=VALUE (VALUE is JSON, or a plain string). Repeatable.
    #[arg(long = "set", value_name = "NODE.PARAM=VALUE")]
    set: Vec<String>,
    /// Set a graph parameter: NAME=VALUE (VALUE is JSON, or a plain string), checked against
    /// its declared range like a value in the file. Repeatable.
    #[arg(long = "param", value_name = "NAME=VALUE")]
    param: Vec<String>,
    /// Refuse to run when the estimated peak memory exceeds this (e.g. 8G, 512M; default:
    /// three quarters of physical memory).
    #[arg(long, value_name = "SIZE")]
    max_memory: Option<String>,
    /// Let the graph's references (subgraph files, imported images) reach into FOLDER although
    /// it is outside the graph's project (docs/security.md). Repeatable. Only for files you trust.
    #[arg(long = "allow-outside", value_name = "FOLDER")]
    allow_outside: Vec<PathBuf>,
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
        Command::Nodes { json } => {
            let reg = Registry::builtin();
            if json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&orogen::io::catalogue::to_json(reg))
                        .unwrap_or_default()
                );
            } else {
                print!("{}", orogen::io::catalogue::to_text(reg));
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
            mut input,
            out,
            exports,
            keep_going,
            tiles,
        } => {
            let _bundle = match open_bundle(&mut input.graph) {
                Ok(b) => b,
                Err(code) => return code,
            };
            match tiles.request() {
                Some(req) => run_tiled(&input, &out, &exports, &tiles, req, true),
                None if !tiles.stitch.is_empty() => {
                    eprintln!("error: --stitch needs --tiles or --tile-size");
                    ExitCode::from(EXIT_INVALID)
                }
                None => run_build(&input, out, &exports, keep_going),
            }
        }
        Command::Plan {
            input,
            out,
            exports,
            tiles,
        } => {
            if let Some(req) = tiles.request() {
                run_tiled(&input, &out, &exports, &tiles, req, false)
            } else {
                eprintln!("error: orogen plan needs --tiles AxB or --tile-size SAMPLES");
                ExitCode::from(EXIT_INVALID)
            }
        }
        Command::Diff { files } => run_diff(&files),
        Command::RunTask { plan, task } => {
            let cancel = cancel_on_signal();
            let opts = orogen::tiles::RunOptions {
                cancel,
                progress: None,
            };
            let start = std::time::Instant::now();
            match orogen::tiles::run_task(&plan, &task, &opts) {
                Ok(outcome) => {
                    report_task(&task, outcome, start.elapsed());
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("error: task {task}: {e}");
                    ExitCode::from(EXIT_FAILED)
                }
            }
        }
        Command::Stats {
            mut input,
            output,
            sea_level,
            bins,
        } => match open_bundle(&mut input.graph) {
            Ok(_bundle) => run_stats(&input, output.as_deref(), sea_level, bins),
            Err(code) => code,
        },
        Command::Parity {
            graph,
            from,
            to,
            nodes,
            seed,
            set,
            param,
            detail,
        } => run_parity(&graph, (from, to), &nodes, seed, &set, &param, detail),
    }
}

/// `orogen check` of one file: errors, warnings (incomplete nodes, saying whether they feed an
/// output), outputs that cannot be built, the memory estimate. True when every output builds.
fn check_one(path: &std::path::Path, accept: bool, allow_outside: &[PathBuf]) -> bool {
    let opts = graph_file::LoadOptions {
        allow_outside,
        ..graph_file::LoadOptions::default()
    };
    let mut g = match graph_file::load_file_opts(path, &opts) {
        Ok(g) => g,
        Err(d) => {
            eprintln!("{d}");
            let n = d.items.len();
            eprintln!(
                "{}: {n} problem{}",
                path.display(),
                if n == 1 { "" } else { "s" }
            );
            return false;
        }
    };
    for p in &g.parameters {
        let unit = if p.spec.unit.is_empty() {
            String::new()
        } else {
            format!(" {}", p.spec.unit)
        };
        println!(
            "{}: parameter {} = {}{unit} ({}){}",
            path.display(),
            p.spec.name,
            p.value.display(p.spec),
            p.spec.expected(),
            if p.spec.doc.is_empty() {
                String::new()
            } else {
                format!(": {}", p.spec.doc)
            }
        );
    }
    let stale: Vec<String> = g
        .stale_subgraphs()
        .into_iter()
        .map(|(id, sg)| stale_message(&id, sg))
        .collect();
    if !stale.is_empty() && accept {
        accept_subgraphs(&mut g);
        if let Err(e) = graph_file::save_file(path, &g) {
            eprintln!("{}: error: cannot write: {e}", path.display());
            return false;
        }
        for s in &stale {
            println!("{}: accepted: {s}", path.display());
        }
    } else {
        for s in &stale {
            eprintln!(
                "{}: warning: {s}; the build uses the file as it is now — review the change, then `orogen check --accept {}` records it",
                path.display(),
                path.display()
            );
        }
    }
    let feeding = orogen::eval::Targets::Outputs.node_set(&g);
    let warnings = g.validate();
    for w in &warnings {
        let scratch = w.node.as_ref().is_some_and(|n| !feeding.contains(n));
        let note = if scratch { " (it feeds no output)" } else { "" };
        eprintln!("{}: {w}{note}", path.display());
    }
    let blocked = g.blocked_outputs();
    for b in &blocked {
        eprintln!("{}: error: {b}", path.display());
    }
    if !blocked.is_empty() {
        eprintln!(
            "{}: {} of {} output{} cannot be built",
            path.display(),
            blocked.len(),
            g.outputs.len(),
            if g.outputs.len() == 1 { "" } else { "s" }
        );
        return false;
    }
    let mem = orogen::eval::memory::estimate_peak_bytes(
        &g,
        g.resolution,
        &orogen::eval::Targets::Outputs,
    )
    .map(orogen::eval::memory::human_bytes)
    .unwrap_or_default();
    let warned = match warnings.len() {
        0 => String::new(),
        1 => ", 1 warning".to_owned(),
        n => format!(", {n} warnings"),
    };
    println!(
        "{}: ok ({} nodes, {} outputs{warned}; estimated peak memory at {}²: {mem})",
        path.display(),
        g.nodes.len(),
        g.outputs.len(),
        g.resolution
    );
    true
}

/// When `path` is a bundle, unpacks it into a temporary folder (kept while the returned
/// value lives) and points `path` at its main graph.
fn open_bundle(path: &mut PathBuf) -> Result<Option<orogen::io::bundle::Opened>, ExitCode> {
    if !orogen::io::bundle::is_bundle(path) {
        return Ok(None);
    }
    match orogen::io::bundle::open(path) {
        Ok(o) => {
            path.clone_from(&o.graph);
            Ok(Some(o))
        }
        Err(e) => {
            eprintln!("error: {e}");
            Err(ExitCode::from(EXIT_INVALID))
        }
    }
}

/// `orogen pack`.
fn run_pack(graph: &std::path::Path, out: &std::path::Path) -> ExitCode {
    let packed = orogen::io::bundle::needed_files(graph).and_then(|needed| {
        orogen::io::bundle::pack_needed(graph, &needed, out).map(|m| (m, needed))
    });
    match packed {
        Ok((m, mut needed)) => {
            let bytes: u64 = m.files.iter().map(|f| f.size).sum();
            // The bundle lists its files by path text below one root: the same order.
            needed.sort_by_key(|n| n.file.to_string_lossy().into_owned());
            for (f, n) in m.files.iter().zip(&needed) {
                println!("  {} ({} bytes): {}", f.path, f.size, n.why.join("; "));
            }
            println!(
                "{}: {} files, {bytes} bytes before compression; main graph {}",
                out.display(),
                m.files.len(),
                m.graph
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(EXIT_INVALID)
        }
    }
}

/// `orogen unpack`.
fn run_unpack(bundle: &std::path::Path, out: Option<PathBuf>, force: bool) -> ExitCode {
    let dir = out.unwrap_or_else(|| bundle.with_extension(""));
    match orogen::io::bundle::unpack(bundle, &dir, force) {
        Ok(main) => {
            println!(
                "{}: unpacked; the graph is {}",
                dir.display(),
                main.display()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(EXIT_INVALID)
        }
    }
}

/// What `orogen check` and `build` say about a subgraph whose file changed since the graph
/// recorded its hash (or that has none recorded).
fn stale_message(id: &str, sg: &orogen::graph::Subgraph) -> String {
    if sg.recorded_hash.is_empty() {
        format!(
            "node \"{id}\": subgraph file \"{}\" has no content hash recorded (it is {} now)",
            sg.path,
            short_hash(&sg.hash)
        )
    } else {
        format!(
            "node \"{id}\": subgraph file \"{}\" changed since this graph recorded it ({} recorded, {} now)",
            sg.path,
            short_hash(&sg.recorded_hash),
            short_hash(&sg.hash)
        )
    }
}

/// `blake3:0123456789ab` (the first 12 hex digits).
fn short_hash(h: &str) -> &str {
    h.get(..19).unwrap_or(h)
}

/// Records every subgraph's current content hash as the accepted one (nested ones are
/// recorded by their own files: this rewrites only the graph given).
fn accept_subgraphs(g: &mut orogen::Graph) {
    for n in &mut g.nodes {
        if let Some(sg) = &n.subgraph {
            if sg.is_stale() {
                n.subgraph = Some(std::sync::Arc::new(orogen::graph::Subgraph {
                    path: sg.path.clone(),
                    recorded_hash: sg.hash.clone(),
                    hash: sg.hash.clone(),
                    graph: sg.graph.clone(),
                }));
            }
        }
    }
}

/// Parses `NAME=VALUE` of `--param`.
fn parse_param(s: &str) -> anyhow::Result<(String, serde_json::Value)> {
    let (name, value) = s
        .split_once('=')
        .ok_or_else(|| anyhow!("--param {s}: expected NAME=VALUE"))?;
    let value =
        serde_json::from_str(value).unwrap_or_else(|_| serde_json::Value::String(value.to_owned()));
    Ok((name.to_owned(), value))
}

/// Parses `NODE.PARAM=VALUE`.
fn parse_set(s: &str) -> anyhow::Result<(String, String, serde_json::Value)> {
    let (key, value) = s
        .split_once('=')
        .ok_or_else(|| anyhow!("--set {s}: expected NODE.PARAM=VALUE"))?;
    let (node, param) = key
        .split_once('.')
        .ok_or_else(|| anyhow!("--set {s}: expected NODE.PARAM=VALUE (no '.' in \"{key}\")"))?;
    let value =
        serde_json::from_str(value).unwrap_or_else(|_| serde_json::Value::String(value.to_owned()));
    Ok((node.to_owned(), param.to_owned(), value))
}

/// Loads a graph with `--set` overrides, `--size` check and `--seed`; on failure prints the
/// problems and returns the exit code. The memory check is at `--size`, or at `memory_side`²
/// when given (a tiled build's largest evaluation).
fn load_graph(args: &GraphArgs, memory_side: Option<usize>) -> Result<orogen::Graph, ExitCode> {
    let GraphArgs {
        graph: graph_path,
        size,
        seed,
        set,
        param,
        ..
    } = args;
    let overrides: Result<Vec<_>, _> = set.iter().map(|s| parse_set(s)).collect();
    let overrides = overrides.map_err(|e| {
        eprintln!("error: {e}");
        ExitCode::from(EXIT_INVALID)
    })?;
    let params: Result<Vec<_>, _> = param.iter().map(|s| parse_param(s)).collect();
    let params = params.map_err(|e| {
        eprintln!("error: {e}");
        ExitCode::from(EXIT_INVALID)
    })?;
    if let Some(s) = *size {
        if !(2..=graph_file::MAX_RESOLUTION as usize).contains(&s) {
            eprintln!(
                "error: --size {s}: expected a resolution in [2, {}]",
                graph_file::MAX_RESOLUTION
            );
            return Err(ExitCode::from(EXIT_INVALID));
        }
    }
    let opts = graph_file::LoadOptions {
        set: &overrides,
        params: &params,
        allow_outside: &args.allow_outside,
    };
    let mut graph = graph_file::load_file_opts(graph_path, &opts).map_err(|d| {
        eprintln!("{d}");
        ExitCode::from(EXIT_INVALID)
    })?;
    if let Some(s) = *seed {
        graph.seed = s;
    }
    for (id, sg) in graph.stale_subgraphs() {
        eprintln!(
            "{}: warning: {}; building with it as it is now (`orogen check --accept {}` records it)",
            graph_path.display(),
            stale_message(&id, sg),
            graph_path.display()
        );
    }
    check_memory(
        &graph,
        memory_side.unwrap_or(size.unwrap_or(graph.resolution)),
        args.max_memory.as_deref(),
    )?;
    Ok(graph)
}

/// Refuses (exit 2, with the estimate) a graph whose estimated peak memory exceeds the budget.
fn check_memory(
    graph: &orogen::Graph,
    resolution: usize,
    max: Option<&str>,
) -> Result<(), ExitCode> {
    use orogen::eval::memory::{default_budget, estimate_peak_bytes, human_bytes, parse_bytes};
    let budget = match max.map(parse_bytes) {
        None => default_budget(),
        Some(Ok(b)) => b,
        Some(Err(e)) => {
            eprintln!("error: --max-memory {e}");
            return Err(ExitCode::from(EXIT_INVALID));
        }
    };
    // An invalid graph is reported by the evaluation with every diagnostic.
    let Ok(estimate) = estimate_peak_bytes(graph, resolution, &orogen::eval::Targets::Outputs)
    else {
        return Ok(());
    };
    if estimate > budget {
        eprintln!(
            "error: building \"{}\" at {resolution}² needs an estimated {} of memory, more than the limit of {}{}; \
             use a smaller --size or raise --max-memory",
            graph.name,
            human_bytes(estimate),
            human_bytes(budget),
            if max.is_none() { " (three quarters of this machine's memory)" } else { "" },
        );
        return Err(ExitCode::from(EXIT_INVALID));
    }
    Ok(())
}

/// `orogen diff A B`, or as git's external diff driver (seven arguments).
fn run_diff(files: &[PathBuf]) -> ExitCode {
    let (a, b, header) = match files {
        [a, b] => (a, b, None),
        [path, old, _, _, new, _, _] => (old, new, Some(path)),
        _ => {
            eprintln!(
                "error: orogen diff takes two graph files (or git's seven diff-driver arguments)"
            );
            return ExitCode::from(EXIT_INVALID);
        }
    };
    let load = |p: &PathBuf| {
        // git passes /dev/null for a file that does not exist on one side.
        if p.as_os_str() == "/dev/null" {
            return Ok(None);
        }
        graph_file::load_file(p).map(Some).map_err(|d| {
            eprintln!("{d}");
        })
    };
    let (Ok(ga), Ok(gb)) = (load(a), load(b)) else {
        return ExitCode::from(EXIT_INVALID);
    };
    if let Some(p) = header {
        println!("orogen diff a/{0} b/{0}", p.display());
    }
    let changes = match (&ga, &gb) {
        (Some(x), Some(y)) => orogen::graph::diff::diff(x, y)
            .iter()
            .map(ToString::to_string)
            .collect(),
        (None, Some(_)) => vec!["+ new graph file".to_owned()],
        (Some(_), None) => vec!["- graph file deleted".to_owned()],
        (None, None) => Vec::new(),
    };
    for c in &changes {
        println!("{c}");
    }
    if changes.is_empty() {
        println!("same graph");
        ExitCode::SUCCESS
    } else {
        // git treats a non-zero exit of a diff driver as a failure; only plain use says 1.
        ExitCode::from(if header.is_some() { 0 } else { EXIT_FAILED })
    }
}

/// A cancel token that Ctrl-C (SIGINT) or SIGTERM trips: running nodes stop within ~100 ms,
/// nothing half-written is left, and the exit code is 130. A second signal exits at once.
fn cancel_on_signal() -> CancelToken {
    let cancel = CancelToken::new();
    let on_signal = cancel.clone();
    let _ = ctrlc::set_handler(move || {
        if on_signal.is_cancelled() {
            std::process::exit(i32::from(EXIT_INTERRUPTED));
        }
        on_signal.cancel();
    });
    cancel
}

fn report_task(task: &str, outcome: orogen::tiles::TaskOutcome, took: std::time::Duration) {
    match outcome {
        orogen::tiles::TaskOutcome::Ran => {
            eprintln!("{task}: done in {:.1} s", took.as_secs_f64());
        }
        orogen::tiles::TaskOutcome::AlreadyDone => {
            eprintln!("{task}: already done (its files match its record)");
        }
    }
}

/// `orogen plan` (`run` false) or `orogen build --tiles` (`run` true: the local runner, every
/// task of the plan in order in this process).
fn run_tiled(
    input: &GraphArgs,
    out: &std::path::Path,
    export_args: &ExportArgs,
    tile_args: &TileArgs,
    req: orogen::tiles::TileRequest,
    run: bool,
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
        allow_outside: &input.allow_outside,
        ..graph_file::LoadOptions::default()
    };
    let probe = match graph_file::load_file_opts(&input.graph, &probe_opts) {
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
    let mut plan = match Plan::for_build(
        &graph,
        Some(&input.graph),
        n,
        req,
        &exports,
        &tile_args.stitch,
        tile_args.coarse_size,
    ) {
        Ok(p) => p,
        Err(e) => {
            for line in e.lines() {
                eprintln!("{}: {line}", input.graph.display());
            }
            return ExitCode::from(EXIT_INVALID);
        }
    };
    plan.allow_outside = input
        .allow_outside
        .iter()
        .map(|p| std::path::absolute(p).unwrap_or_else(|_| p.clone()))
        .collect();
    let grid = plan.grid;
    if let Err(e) = plan.write(out, &graph) {
        eprintln!("error: {e}");
        return ExitCode::from(EXIT_FAILED);
    }
    let tasks = plan.tasks.len();
    if !run {
        println!(
            "{}: {tasks} tasks ({}×{} tiles of {} samples{}, then the stitch)",
            out.join(orogen::tiles::PLAN_FILE).display(),
            grid.tiles_x,
            grid.tiles_y,
            grid.size,
            plan.coarse_resolution
                .map(|c| format!(", after the coarse task at {c}²"))
                .unwrap_or_default()
        );
        println!(
            "run them with `orogen run-task {} TASK`, or on Slurm: {}",
            out.display(),
            out.join("slurm/submit.sh").display()
        );
        return ExitCode::SUCCESS;
    }
    let opts = orogen::tiles::RunOptions {
        cancel: cancel_on_signal(),
        progress: None,
    };
    let mut done = 0;
    let result = orogen::tiles::run_all(out, &opts, |id, outcome, took| {
        done += 1;
        report_task(&format!("[{done}/{tasks}] {id}"), outcome, took);
    });
    match result {
        Ok(()) => {
            println!("{}", out.join("manifest.json").display());
            ExitCode::SUCCESS
        }
        Err(e) if opts.cancel.is_cancelled() => {
            eprintln!("{}: build interrupted ({e}); run the same command again to resume from the tiles already written", input.graph.display());
            ExitCode::from(EXIT_INTERRUPTED)
        }
        Err(e) => {
            eprintln!("{}: {e}", input.graph.display());
            ExitCode::from(EXIT_FAILED)
        }
    }
}

fn run_build(
    input: &GraphArgs,
    out: PathBuf,
    export_args: &ExportArgs,
    keep_going: bool,
) -> ExitCode {
    let exports = match export_args.exports() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(EXIT_INVALID);
        }
    };
    let (graph_path, size) = (&input.graph, input.size);
    let graph = match load_graph(input, None) {
        Ok(g) => g,
        Err(code) => return code,
    };
    let cancel = cancel_on_signal();
    let bar = std::io::stderr().is_terminal().then(|| {
        let bar = ProgressBar::new(graph.nodes.len() as u64);
        bar.set_style(
            ProgressStyle::with_template("{spinner} [{bar:30}] {pos}/{len} nodes {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar
    });
    let running = Mutex::new(Vec::<String>::new());
    let on_progress = |e: ProgressEvent| {
        let Some(bar) = &bar else { return };
        match e {
            ProgressEvent::Started { node } => {
                if let Ok(mut r) = running.lock() {
                    r.push(node.to_owned());
                    bar.set_message(r.join(", "));
                }
            }
            ProgressEvent::Progress { .. } => bar.tick(),
            ProgressEvent::Finished { node, .. } => {
                bar.inc(1);
                if let Ok(mut r) = running.lock() {
                    r.retain(|n| n != node);
                    bar.set_message(r.join(", "));
                }
            }
        }
    };
    let result = build(
        &graph,
        &BuildOptions {
            out_dir: out.clone(),
            exports,
            resolution: size,
            graph_file: Some(graph_path),
            allow_outside: &input.allow_outside,
            keep_going,
            cancel,
            progress: Some(&on_progress),
        },
    );
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    match result {
        Ok(report) => {
            for o in &report.manifest.outputs {
                println!(
                    "{}  {}×{}  [{:.2}, {:.2}]  {}",
                    out.join(&o.file).display(),
                    o.width,
                    o.height,
                    o.min,
                    o.max,
                    &o.hash[..16]
                );
            }
            for (node, e) in &report.manifest.errors {
                eprintln!("{}: node \"{node}\": {e}", graph_path.display());
            }
            println!("{}", report.manifest_path.display());
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
            eprintln!("{}: {e}", graph_path.display());
            ExitCode::from(EXIT_INTERRUPTED)
        }
        Err(e @ BuildError::Incomplete(_)) => {
            for line in e.to_string().lines() {
                eprintln!("{}: {line}", graph_path.display());
            }
            eprintln!("(wire the missing inputs, or build the other outputs with --keep-going)");
            ExitCode::from(EXIT_INVALID)
        }
        Err(e @ BuildError::Failed(_)) => {
            for line in e.to_string().lines() {
                eprintln!("{}: {line}", graph_path.display());
            }
            eprintln!("(build the other outputs with --keep-going)");
            ExitCode::from(EXIT_FAILED)
        }
        Err(e @ (BuildError::Invalid(_) | BuildError::NoOutputs | BuildError::Splat(..))) => {
            eprintln!("{}: {e}", graph_path.display());
            ExitCode::from(EXIT_INVALID)
        }
        Err(e) => {
            eprintln!(
                "error: {:#}",
                anyhow::Error::from(e).context(format!("building {}", graph_path.display()))
            );
            ExitCode::from(EXIT_FAILED)
        }
    }
}

fn run_stats(
    input: &GraphArgs,
    only: Option<&str>,
    sea_level: Option<f32>,
    bins: usize,
) -> ExitCode {
    let (graph_path, size) = (input.graph.as_path(), input.size);
    let graph = match load_graph(input, None) {
        Ok(g) => g,
        Err(code) => return code,
    };
    if let Some(name) = only {
        if !graph.outputs.contains_key(name) {
            let names: Vec<&str> = graph.outputs.keys().map(String::as_str).collect();
            eprintln!(
                "{}: no output \"{name}\"; the outputs are {}",
                graph_path.display(),
                orogen::node::quoted_list(&names)
            );
            return ExitCode::from(EXIT_INVALID);
        }
    }
    let result = orogen::eval::Evaluator::new().evaluate(
        &graph,
        &orogen::eval::EvalOptions {
            resolution: size,
            base_dir: graph_path.parent(),
            allow_outside: &input.allow_outside,
            ..orogen::eval::EvalOptions::default()
        },
    );
    let result = match result {
        Ok(r) => r,
        Err(d) => {
            for item in d {
                eprintln!("{}: {item}", graph_path.display());
            }
            return ExitCode::from(EXIT_INVALID);
        }
    };
    let mut failed = false;
    for (name, r) in graph
        .outputs
        .iter()
        .filter(|(n, _)| only.is_none_or(|o| o == n.as_str()))
    {
        let Some(field) = result.field(&graph, r) else {
            eprintln!("{name}: not computed ({:?})", result.status.get(&r.node));
            failed = true;
            continue;
        };
        let kind = graph.output_kind(r);
        // Colours are measured by their luminance.
        let field = if kind == Some(orogen::node::PortKind::Color) {
            std::sync::Arc::new(orogen::node::luminance(&field))
        } else {
            field
        };
        let s = orogen::analysis::stats(&field, &graph.world, bins, sea_level);
        println!(
            "{name} ({r}, {}×{}, cell {:.3} m)",
            field.width(),
            field.height(),
            graph.world.cell_size_m(field.width())
        );
        println!(
            "  min {:.3}  max {:.3}  mean {:.3}  std {:.3}  median {:.3}",
            s.min, s.max, s.mean, s.std_dev, s.median
        );
        if kind == Some(orogen::node::PortKind::Scalar) {
            // A quantity in its own unit (a drainage area): slopes, hypsometry and a coastline
            // would describe it as if it were a terrain.
            println!("  a scalar in its own unit: no slope, hypsometry, spectrum or coastline");
        } else {
            let [p50, p90, p99] = s.slope_percentiles_deg;
            println!(
                "  slope mean {:.2}°  p50 {p50:.1}°  p90 {p90:.1}°  p99 {p99:.1}°  hypsometric integral {:.3}",
                s.mean_slope_deg, s.hypsometric_integral
            );
            let cell = graph.world.cell_size_m(field.width());
            let spectrum = (kind == Some(orogen::node::PortKind::Height))
                .then(|| orogen::analysis::spectrum(&field, cell))
                .flatten();
            if let Some(sp) = spectrum {
                println!(
                    "  height spectrum P(k) ∝ k^-β: β = {:.2} over wavelengths {:.0} m … {:.0} m",
                    sp.beta, sp.band_m.0, sp.band_m.1
                );
            }
            match &s.coastline {
                Some(c) => println!(
                    "  coastline fractal dimension at sea level {:.3}: D = {:.4}  (boxes: {})",
                    s.sea_level,
                    c.dimension,
                    c.counts
                        .iter()
                        .map(|(e, n)| format!("ε={e}: {n}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                None => println!("  no coastline at sea level {:.3}", s.sea_level),
            }
        }
        let peak = s.histogram.iter().copied().max().unwrap_or(1).max(1);
        let width = (s.max - s.min) / s.histogram.len() as f32;
        for (i, &count) in s.histogram.iter().enumerate() {
            let lo = s.min + width * i as f32;
            let bar = "#".repeat((count * 40).div_ceil(peak) as usize);
            println!("  {lo:>10.2} … {:>10.2} {count:>9} {bar}", lo + width);
        }
    }
    ExitCode::from(if failed { EXIT_FAILED } else { 0 })
}

/// Least fine-band power an erosion node's own mode must make, as a share of `native`'s.
const DETAIL_MIN: f64 = 0.5;

/// `orogen parity --detail`.
fn run_detail(
    path: &std::path::Path,
    graph: &orogen::Graph,
    to: usize,
    nodes: &[String],
) -> ExitCode {
    let t0 = std::time::Instant::now();
    let rows = match orogen::parity::detail(graph, path.parent(), to, nodes) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{}: {e}", path.display());
            return ExitCode::from(EXIT_INVALID);
        }
    };
    println!(
        "{}: detail at {to}² (fine band: above {} cycles per map), {:.1} s",
        path.display(),
        orogen::parity::DETAIL_CUTOFF,
        t0.elapsed().as_secs_f64()
    );
    println!(
        "{:<22} {:<24} {:<11} {:>11} {:>11} {:>7} {:>17}",
        "node", "type", "mode", "fine (m²)", "native", "ratio", "share own/native"
    );
    let mut ok = true;
    for r in &rows {
        let ratio = r.ratio();
        ok &= ratio >= DETAIL_MIN;
        println!(
            "{:<22} {:<24} {:<11} {:>11.4e} {:>11.4e} {:>7.3} {:>8.4}/{:<8.4} {}",
            r.node,
            r.kind,
            r.mode,
            r.own.fine,
            r.native.fine,
            ratio,
            r.own.share(),
            r.native.share(),
            if ratio >= DETAIL_MIN { "ok" } else { "short" }
        );
    }
    println!(
        "ratio: fine-band power of the node's change in its mode ÷ with detail = native at the same size on the same input; \
         a node must make at least {DETAIL_MIN} of it"
    );
    ExitCode::from(if ok { 0 } else { EXIT_FAILED })
}

fn run_parity(
    path: &std::path::Path,
    (from, to): (usize, usize),
    nodes: &[String],
    seed: Option<u64>,
    set: &[String],
    param: &[String],
    detail: bool,
) -> ExitCode {
    if !(2..=graph_file::MAX_RESOLUTION as usize).contains(&from) || to <= from {
        eprintln!("error: --from {from} --to {to}: expected 2 ≤ from < to");
        return ExitCode::from(EXIT_INVALID);
    }
    let args = GraphArgs {
        graph: path.to_path_buf(),
        size: Some(to),
        seed,
        set: set.to_vec(),
        param: param.to_vec(),
        max_memory: None,
        allow_outside: Vec::new(),
    };
    let graph = match load_graph(&args, None) {
        Ok(g) => g,
        Err(code) => return code,
    };
    if detail {
        return run_detail(path, &graph, to, nodes);
    }
    let t0 = std::time::Instant::now();
    let rows = match orogen::parity::compare(&graph, path.parent(), from, to, nodes) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{}: {e}", path.display());
            return ExitCode::from(EXIT_INVALID);
        }
    };
    println!(
        "{}: {from}² vs {to}² (brought down to {from}²), {:.1} s",
        path.display(),
        t0.elapsed().as_secs_f64()
    );
    println!(
        "{:<22} {:<24} {:<12} {:>9} {:>9} {:>6} {:>7} {:>8} {:>8}  verdict",
        "node", "type", "output", "mean|Δ|", "own", "tol", "corr", "amount", "Δcorr"
    );
    let mut all_ok = true;
    let mut inherited = false;
    for r in &rows {
        let (amount, dcorr) = r.change.map_or_else(
            || (String::new(), String::new()),
            |(a, c)| (format!("{a:.3}"), format!("{c:.3}")),
        );
        let verdict = r.verdict();
        all_ok &= verdict != orogen::parity::Verdict::Outside;
        inherited |= verdict == orogen::parity::Verdict::Inherited;
        let own = r
            .own
            .map_or_else(String::new, |o| format!("{:.3}%", 100.0 * o));
        let tol = r.tolerance.map_or_else(
            || "—".to_string(),
            |t| format!("{:.2}%", 100.0 * t.mean_abs_diff),
        );
        println!(
            "{:<22} {:<24} {:<12} {:>8.3}% {:>9} {:>6} {:>7.3} {:>8} {:>8}  {}",
            r.node,
            r.kind,
            r.output,
            100.0 * r.mean_abs_diff,
            own,
            tol,
            r.correlation,
            amount,
            dcorr,
            verdict.label()
        );
    }
    if inherited {
        println!(
            "inherited: the node run on the build's inputs brought down (own) is within its tolerance; \
             the difference end to end (mean|Δ|) is its inputs', amplified — a threshold on a gentle slope, \
             a slope of detail finer than the preview's cells. What you see in the preview moves by that much in the build."
        );
    }
    println!(
        "tolerances (tol): mean|Δ| ≤ 0.25% of the range (sky view 1%, erosion heights, water and snow masks, sediment depth 1.5%; \
         anything computed from an eroded terrain 1.5% at least); erosion amount 0.85–1.15, Δcorr ≥ 0.9 (droplets 0.85); \
         info: masks whose definition depends on the grid (flow accumulation, erosion state) and anything computed from them"
    );
    ExitCode::from(if all_ok { 0 } else { EXIT_FAILED })
}
