//! The `orogen` command line: `build`, `check`, `nodes`.
//!
//! Exit codes: 0 success, 1 evaluation failed (some output could not be computed or written),
//! 2 invalid input (unreadable or invalid graph file, bad arguments).

use anyhow::anyhow;
use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use orogen::build::{build, BuildError, BuildOptions};
use orogen::eval::{CancelToken, ProgressEvent};
use orogen::io::graph_file;
use orogen::io::heightmap::Format;
use orogen::node::Registry;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Mutex;

/// Exit code for invalid input.
const EXIT_INVALID: u8 = 2;
/// Exit code for a failed evaluation.
const EXIT_FAILED: u8 = 1;

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
        /// The graph file (JSON).
        graph: PathBuf,
        /// Output folder.
        #[arg(short, long, default_value = "out")]
        out: PathBuf,
        /// Samples per side (default: the graph's resolution).
        #[arg(long)]
        size: Option<usize>,
        /// Graph seed (default: the graph's seed).
        #[arg(long)]
        seed: Option<u64>,
        /// Override a parameter: NODE.PARAM=VALUE (VALUE is JSON, or a plain string). Repeatable.
        #[arg(long = "set", value_name = "NODE.PARAM=VALUE")]
        set: Vec<String>,
        /// File format of the outputs.
        #[arg(long, value_enum, default_value = "png16")]
        format: Format,
    },
    /// Validate graph files and report every problem.
    Check {
        /// Graph files.
        #[arg(required = true)]
        graphs: Vec<PathBuf>,
    },
    /// List every node type with its ports and parameters.
    Nodes {
        /// Print the machine-readable catalogue.
        #[arg(long)]
        json: bool,
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
        Command::Check { graphs } => {
            let mut ok = true;
            for path in graphs {
                match graph_file::load_file(&path) {
                    Ok(g) => println!(
                        "{}: ok ({} nodes, {} outputs)",
                        path.display(),
                        g.nodes.len(),
                        g.outputs.len()
                    ),
                    Err(d) => {
                        ok = false;
                        eprintln!("{d}");
                        eprintln!(
                            "{}: {} problem{}",
                            path.display(),
                            d.items.len(),
                            if d.items.len() == 1 { "" } else { "s" }
                        );
                    }
                }
            }
            ExitCode::from(if ok { 0 } else { EXIT_INVALID })
        }
        Command::Build {
            graph,
            out,
            size,
            seed,
            set,
            format,
        } => run_build(graph, out, size, seed, &set, format),
    }
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

fn run_build(
    graph_path: PathBuf,
    out: PathBuf,
    size: Option<usize>,
    seed: Option<u64>,
    set: &[String],
    format: Format,
) -> ExitCode {
    let overrides: Result<Vec<_>, _> = set.iter().map(|s| parse_set(s)).collect();
    let overrides = match overrides {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(EXIT_INVALID);
        }
    };
    if let Some(s) = size {
        if !(2..=graph_file::MAX_RESOLUTION as usize).contains(&s) {
            eprintln!(
                "error: --size {s}: expected a resolution in [2, {}]",
                graph_file::MAX_RESOLUTION
            );
            return ExitCode::from(EXIT_INVALID);
        }
    }
    let mut graph = match graph_file::load_file_with(&graph_path, &overrides) {
        Ok(g) => g,
        Err(d) => {
            eprintln!("{d}");
            return ExitCode::from(EXIT_INVALID);
        }
    };
    if let Some(s) = seed {
        graph.seed = s;
    }

    let cancel = CancelToken::new();
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
            format,
            resolution: size,
            graph_file: Some(&graph_path),
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
        Err(e @ (BuildError::Invalid(_) | BuildError::NoOutputs)) => {
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
