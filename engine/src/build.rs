//! Headless builds: evaluate a graph's named outputs and write them, plus `manifest.json`,
//! atomically into a folder. The CLI's `build` command and the editor's export use this.

use crate::eval::{
    CancelToken, EvalOptions, EvalResult, Evaluator, NodeStatus, ProgressEvent, Targets,
};
use crate::field::Field;
use crate::graph::{Diagnostic, Graph};
use crate::io::atomic::write_bytes_atomic;
use crate::io::graph_file;
use crate::io::heightmap::{self, Format};
use crate::io::manifest::{GraphInfo, Manifest, OutputEntry, WorldInfo};
use crate::node::PortKind;
use crate::World;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What to build.
pub struct BuildOptions<'a> {
    pub out_dir: PathBuf,
    pub format: Format,
    /// Samples per side; `None` uses the graph's resolution.
    pub resolution: Option<usize>,
    /// The graph file's folder (for relative paths in parameters) and its name for the manifest.
    pub graph_file: Option<&'a Path>,
    pub cancel: CancelToken,
    pub progress: Option<&'a (dyn Fn(ProgressEvent) + Sync)>,
}

/// Why a build did not complete.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error("the graph is invalid:\n{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
    Invalid(Vec<Diagnostic>),
    #[error("the graph declares no outputs: add an \"outputs\" object naming the nodes to write")]
    NoOutputs,
    #[error("cannot write {path}: {source}")]
    Write {
        path: String,
        source: std::io::Error,
    },
    #[error("{0}")]
    Heightmap(#[from] heightmap::HeightmapError),
}

/// What a build did.
#[derive(Debug)]
pub struct BuildReport {
    pub manifest: Manifest,
    pub manifest_path: PathBuf,
    pub eval: EvalResult,
    /// Outputs not written because their node failed or was skipped.
    pub failed_outputs: Vec<String>,
}

impl BuildReport {
    /// True when every output was written.
    #[must_use]
    pub fn complete(&self) -> bool {
        self.failed_outputs.is_empty()
    }
}

/// Builds every named output of `graph`. Outputs whose node failed are listed in the
/// report (and in the manifest's `errors`) while the others are still written.
pub fn build(graph: &Graph, opts: &BuildOptions) -> Result<BuildReport, BuildError> {
    if graph.outputs.is_empty() {
        return Err(BuildError::NoOutputs);
    }
    let base_dir = opts.graph_file.and_then(Path::parent);
    let mut evaluator = Evaluator::new();
    let eval = evaluator
        .evaluate(
            graph,
            &EvalOptions {
                resolution: opts.resolution,
                targets: Targets::Outputs,
                cancel: opts.cancel.clone(),
                progress: opts.progress,
                base_dir,
                keep_all: false,
            },
        )
        .map_err(BuildError::Invalid)?;
    std::fs::create_dir_all(&opts.out_dir).map_err(|source| BuildError::Write {
        path: opts.out_dir.display().to_string(),
        source,
    })?;

    let mut outputs = Vec::new();
    let mut failed_outputs = Vec::new();
    for (name, r) in &graph.outputs {
        let Some(field) = eval.field(graph, r) else {
            failed_outputs.push(name.clone());
            continue;
        };
        if opts.cancel.is_cancelled() {
            failed_outputs.push(name.clone());
            continue;
        }
        let kind = graph.output_kind(r).unwrap_or(PortKind::Height);
        // Masks are written over [0, 1], heights over the graph's height range.
        let frame = match kind {
            PortKind::Height => graph.world,
            PortKind::Mask => World {
                height_min_m: 0.0,
                height_max_m: 1.0,
                ..graph.world
            },
        };
        let file = format!("{name}.{}", opts.format.extension());
        let path = opts.out_dir.join(&file);
        let bytes = heightmap::write(&path, &field, &frame, opts.format)?;
        let (min, max) = field.min_max().unwrap_or((f32::NAN, f32::NAN));
        outputs.push(OutputEntry {
            name: name.clone(),
            source: r.to_string(),
            kind: kind.name().to_owned(),
            file,
            width: field.width(),
            height: field.height(),
            min,
            max,
            hash: blake3::hash(&bytes).to_hex().to_string(),
        });
    }

    let errors: BTreeMap<String, String> = eval
        .status
        .iter()
        .filter_map(|(id, s)| match s {
            NodeStatus::Failed(e) => Some((id.clone(), e.to_string())),
            NodeStatus::Skipped { upstream } => Some((
                id.clone(),
                format!("skipped: upstream node \"{upstream}\" failed"),
            )),
            _ => None,
        })
        .collect();
    let manifest = Manifest {
        orogen_version: env!("CARGO_PKG_VERSION").to_owned(),
        graph: GraphInfo {
            name: graph.name.clone(),
            file: opts
                .graph_file
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
            hash: blake3::hash(graph_file::to_string(graph).as_bytes())
                .to_hex()
                .to_string(),
        },
        seed: graph.seed,
        resolution: eval.resolution,
        world: WorldInfo {
            size_m: graph.world.size_m,
            height_min_m: graph.world.height_min_m,
            height_max_m: graph.world.height_max_m,
            cell_size_m: graph.world.cell_size_m(eval.resolution),
        },
        format: opts.format.name().to_owned(),
        outputs,
        errors,
        timings_ms: eval
            .timings
            .iter()
            .map(|(k, d)| (k.clone(), (d.as_secs_f64() * 1.0e6).round() / 1.0e3))
            .collect(),
    };
    let manifest_path = opts.out_dir.join("manifest.json");
    let mut text = serde_json::to_string_pretty(&manifest).unwrap_or_default();
    text.push('\n');
    write_bytes_atomic(&manifest_path, text.as_bytes()).map_err(|source| BuildError::Write {
        path: manifest_path.display().to_string(),
        source,
    })?;
    Ok(BuildReport {
        manifest,
        manifest_path,
        eval,
        failed_outputs,
    })
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
