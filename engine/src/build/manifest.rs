//! A build's `manifest.json`: what was built, from which graph, how, and where each file is.

use super::exports::preset_info;
use super::staging::Staging;
use super::{BuildError, BuildOptions, GRAPH_COPY};
use crate::document::graph_file;
use crate::eval::{EvalResult, NodeStatus};
use crate::graph::{Blocked, Graph};
use crate::io::heightmap::Format;
use crate::io::manifest::{GraphInfo, Manifest, OutputEntry, WorldInfo};
use std::collections::BTreeMap;

/// The build's manifest (its graph copy staged first): what was built, from what, how.
pub(super) fn manifest(
    graph: &Graph,
    opts: &BuildOptions,
    eval: &EvalResult,
    stage: &mut Staging,
    formats: &[Format],
    outputs: Vec<OutputEntry>,
    blocked: &[Blocked],
) -> Result<Manifest, BuildError> {
    let ex = &opts.exports;
    // The graph exactly as built (with `--set`, `--seed` and the built resolution), so
    // `orogen build DIR/graph.json` builds the same files again.
    let built = Graph {
        resolution: eval.resolution,
        ..graph.clone()
    };
    let graph_text = graph_file::to_string_embedded(&built);
    if graph_text.len() as u64 > crate::io::trust::MAX_GRAPH_BYTES {
        return Err(BuildError::Write {
            path: opts.out_dir.join(GRAPH_COPY).display().to_string(),
            source: std::io::Error::other(format!(
                "the graph with its subgraphs embedded is {} bytes, more than the {} a graph file may have",
                graph_text.len(),
                crate::io::trust::human_bytes(crate::io::trust::MAX_GRAPH_BYTES)
            )),
        });
    }
    let graph_hash = stage.add(GRAPH_COPY.to_owned(), "graph", graph_text.as_bytes())?;
    Ok(Manifest {
        orogen_version: env!("CARGO_PKG_VERSION").to_owned(),
        graph: GraphInfo {
            name: graph.name.clone(),
            file: opts
                .graph_file
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
            copy: GRAPH_COPY.to_owned(),
            hash: graph_hash,
        },
        seed: graph.seed,
        parameters: crate::document::graph_file::parameter_values(graph),
        resolution: eval.resolution,
        world: WorldInfo {
            size_m: graph.world.size_m,
            height_min_m: graph.world.height_min_m,
            height_max_m: graph.world.height_max_m,
            cell_size_m: graph.world.cell_size_m(eval.resolution),
        },
        formats: formats.iter().map(|f| f.name().to_owned()).collect(),
        preset: ex.preset.map(|p| preset_info(p, graph, eval.resolution)),
        tiling: None,
        outputs,
        tiles: Vec::new(),
        files: std::mem::take(&mut stage.files),
        errors: node_errors(eval, blocked),
        timings_ms: eval
            .timings
            .iter()
            .map(|(k, d)| (k.clone(), (d.as_secs_f64() * 1.0e6).round() / 1.0e3))
            .collect(),
        cache: opts.cache.as_ref().map(|c| crate::io::manifest::CacheInfo {
            dir: c.dir().display().to_string(),
            computed: eval.evaluated().into_iter().map(str::to_owned).collect(),
            read: eval.disk_read.iter().cloned().collect(),
            stored: eval.disk_stored.iter().cloned().collect(),
        }),
    })
}

/// Failed, incomplete and skipped nodes with their messages, for the manifest: those the
/// evaluation met, and the incomplete nodes that blocked outputs before it.
fn node_errors(eval: &EvalResult, blocked: &[Blocked]) -> BTreeMap<String, String> {
    let before = blocked
        .iter()
        .flat_map(|b| &b.reasons)
        .filter_map(|(node, why)| Some((node.clone()?, format!("incomplete: {why}"))));
    let during = eval.status.iter().filter_map(|(id, s)| match s {
        NodeStatus::Failed(e) => Some((id.clone(), e.to_string())),
        NodeStatus::Incomplete { reason } => Some((id.clone(), format!("incomplete: {reason}"))),
        NodeStatus::Skipped { upstream } => Some((
            id.clone(),
            format!("skipped: upstream node \"{upstream}\" failed or is incomplete"),
        )),
        _ => None,
    });
    before.chain(during).collect()
}
