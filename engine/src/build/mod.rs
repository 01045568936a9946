//! Headless builds, orchestrated: evaluate a graph's named outputs, then write them (`writers`),
//! `manifest.json` (`manifest`) and a copy of the graph atomically into a folder (`staging`).
//! The CLI's `build` command and the editor's build dialog both call [`build`] with the same
//! [`Exports`] (`exports`: what to write), whose defaults are what `orogen build` writes with
//! no flags ([`Exports::to_args`] gives the flags back).
//!
//! # Failure handling
//! A build is a transaction (the `staging` module): every file, the manifest included, is staged
//! as a synced temporary file, and a journaled commit replaces the previous build's files; after a
//! crash the next build into the folder rolls back first, so the folder holds one whole build,
//! never a mix. An output that cannot be built stops the build before anything is written, unless
//! `keep_going`. A cancel (the CLI's Ctrl-C, the editor's Cancel) trips the `CancelToken` that
//! nodes poll; the evaluation returns, the temporaries delete themselves and `build` reports
//! `Cancelled`. The CLI refuses a graph whose memory estimate (`eval::memory`) exceeds its
//! budget before anything runs, and a node whose own invariant breaks (the pipe model's
//! conservation) fails with a message rather than returning a wrong terrain.

use crate::eval::{
    CancelToken, EvalOptions, EvalResult, Evaluator, NodeStatus, ProgressEvent, Targets,
};
use crate::field::Field;
use crate::graph::{Blocked, Diagnostic, Graph};
use crate::io::heightmap;
use crate::io::manifest::Manifest;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

mod exports;
mod manifest;
mod splat;
mod staging;
mod writers;

pub use exports::{Exports, MeshFormat, Preset, Range};
pub(crate) use writers::{encode_normal_png, output_frame};

use staging::Staging;

/// What to build.
pub struct BuildOptions<'a> {
    pub out_dir: PathBuf,
    pub exports: Exports,
    /// Samples per side; `None` uses the graph's resolution.
    pub resolution: Option<usize>,
    /// The graph file's folder (for relative paths in parameters) and its name for the manifest.
    pub graph_file: Option<&'a Path>,
    /// Folders outside the graph's project that imports may read (`--allow-outside`).
    pub allow_outside: &'a [PathBuf],
    /// Write the outputs that can be built even when others cannot (an incomplete node on
    /// their chain, a node that fails). Without it a build writes every output or nothing.
    pub keep_going: bool,
    pub cancel: CancelToken,
    pub progress: Option<&'a (dyn Fn(ProgressEvent) + Sync)>,
    /// The disk cache results are read from and written to (`None`: none). Outputs are the
    /// same bytes either way.
    pub cache: Option<std::sync::Arc<crate::eval::DiskCache>>,
    /// Arrays the graph's `array_input` nodes read (from the Python package).
    pub arrays: Option<&'a crate::node::ArrayInputs>,
}

/// The name of the graph copy a build writes next to its outputs.
pub const GRAPH_COPY: &str = "graph.json";

/// Why a build did not complete.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error("the graph is invalid:\n{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
    Invalid(Vec<Diagnostic>),
    #[error("the graph declares no outputs: add an \"outputs\" object naming the nodes to write")]
    NoOutputs,
    #[error("{}\nnothing was written", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
    Incomplete(Vec<Blocked>),
    #[error("{}\nnothing was written", .0.join("\n"))]
    Failed(Vec<String>),
    #[error("build cancelled: no output was written or changed")]
    Cancelled,
    /// The output folder holds a build journal Orogen did not write (see `staging`).
    #[error("{0}")]
    Journal(String),
    #[error("cannot write {path}: {source}")]
    Write {
        path: String,
        source: std::io::Error,
    },
    #[error("{0}")]
    Heightmap(#[from] heightmap::HeightmapError),
    #[error("splat map \"{0}\": {1}")]
    Splat(String, String),
}

/// What a build did.
#[derive(Debug)]
pub struct BuildReport {
    pub manifest: Manifest,
    pub manifest_path: PathBuf,
    pub eval: EvalResult,
    /// Outputs (and splat maps) not written, with `--keep-going`, because a node they need is
    /// incomplete, failed or was skipped.
    pub failed_outputs: Vec<String>,
}

impl BuildReport {
    /// True when every output was written.
    #[must_use]
    pub fn complete(&self) -> bool {
        self.failed_outputs.is_empty()
    }
}

/// Builds every named output of `graph`. An output that cannot be built (an incomplete node
/// on its chain, a node that fails) stops the build before anything is written, unless
/// `keep_going`: then the others are written and the rest listed in the report and in the
/// manifest's `errors`.
pub fn build(graph: &Graph, opts: &BuildOptions) -> Result<BuildReport, BuildError> {
    if graph.outputs.is_empty() {
        return Err(BuildError::NoOutputs);
    }
    splat::check(graph, &opts.exports)?;
    let errors = graph.errors();
    if !errors.is_empty() {
        return Err(BuildError::Invalid(errors));
    }
    let blocked = graph.blocked_outputs();
    if !blocked.is_empty() && !opts.keep_going {
        return Err(BuildError::Incomplete(blocked));
    }
    // A journal Orogen did not write is refused before any work, not after it.
    staging::check(&opts.out_dir)?;
    if opts.cancel.is_cancelled() {
        return Err(BuildError::Cancelled);
    }
    let ex = &opts.exports;
    let resolution = match ex.preset {
        Some(p) => Some(p.size_for(opts.resolution.unwrap_or(graph.resolution))),
        None => opts.resolution,
    };
    let targets = buildable(graph, &blocked);
    let eval = Evaluator::new()
        .with_disk(opts.cache.clone())
        .evaluate(
            graph,
            &EvalOptions {
                resolution,
                targets,
                cancel: opts.cancel.clone(),
                progress: opts.progress,
                base_dir: opts.graph_file.and_then(Path::parent),
                allow_outside: opts.allow_outside,
                keep_all: false,
                window: None,
                coarse: None,
                arrays: opts.arrays,
                stored: None,
            },
        )
        .map_err(BuildError::Invalid)?;
    if opts.cancel.is_cancelled() {
        return Err(BuildError::Cancelled);
    }
    let missing: Vec<String> = graph
        .outputs
        .iter()
        .filter(|(_, r)| eval.field(graph, r).is_none())
        .map(|(name, r)| {
            format!(
                "output \"{name}\" not built: {}",
                why_missing(&eval, &r.node)
            )
        })
        .collect();
    if !missing.is_empty() && !opts.keep_going {
        return Err(BuildError::Failed(missing));
    }
    std::fs::create_dir_all(&opts.out_dir).map_err(|source| BuildError::Write {
        path: opts.out_dir.display().to_string(),
        source,
    })?;
    // A build killed while it switched files last time is rolled back first.
    staging::recover(&opts.out_dir)?;

    let formats = exports::formats_for(ex);
    let mut stage = Staging::new(&opts.out_dir);
    let (outputs, failed_outputs) =
        writers::write_outputs(&mut stage, graph, &eval, opts, &formats)?;
    let manifest = manifest::manifest(graph, opts, &eval, &mut stage, &formats, outputs, &blocked)?;
    let manifest_path = opts.out_dir.join("manifest.json");
    let mut text = serde_json::to_string_pretty(&manifest).map_err(|e| BuildError::Write {
        path: manifest_path.display().to_string(),
        source: std::io::Error::other(e),
    })?;
    text.push('\n');
    stage.add_unlisted(&manifest_path, text.as_bytes())?;
    if opts.cancel.is_cancelled() {
        return Err(BuildError::Cancelled);
    }
    stage.commit()?;
    Ok(BuildReport {
        manifest,
        manifest_path,
        eval,
        failed_outputs,
    })
}

/// What a build evaluates: the nodes behind its outputs, without the blocked ones.
fn buildable(graph: &Graph, blocked: &[Blocked]) -> Targets {
    if blocked.is_empty() {
        Targets::Outputs
    } else {
        let blocked: Vec<&str> = blocked.iter().map(|b| b.output.as_str()).collect();
        Targets::Nodes(
            graph
                .outputs
                .iter()
                .filter(|(name, _)| !blocked.contains(&name.as_str()))
                .map(|(_, r)| r.node.clone())
                .chain(graph.nodata.as_ref().map(|r| r.node.clone()))
                .collect(),
        )
    }
}

/// Why node `id` produced nothing: its own problem, or the one of the node that stopped it.
fn why_missing(eval: &EvalResult, id: &str) -> String {
    let root = match eval.status.get(id) {
        Some(NodeStatus::Skipped { upstream }) => upstream.as_str(),
        _ => id,
    };
    match eval.status.get(root) {
        Some(NodeStatus::Failed(e)) => format!("node \"{root}\": {e}"),
        Some(NodeStatus::Incomplete { reason }) => {
            format!("node \"{root}\" is incomplete ({reason})")
        }
        _ => format!("node \"{root}\" was not evaluated"),
    }
}

/// Convenience for tests and benches: evaluate all outputs in memory.
pub fn evaluate_outputs(
    graph: &Graph,
    resolution: Option<usize>,
) -> Result<BTreeMap<String, Field>, Vec<Diagnostic>> {
    let res = Evaluator::new().evaluate(
        graph,
        &EvalOptions {
            resolution,
            ..EvalOptions::default()
        },
    )?;
    Ok(graph
        .outputs
        .iter()
        .filter_map(|(name, r)| res.field(graph, r).map(|f| (name.clone(), (*f).clone())))
        .collect())
}
