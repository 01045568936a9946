//! `orogen parity --detail`: how much fine detail each erosion node makes at a build's
//! resolution, against the same node with `detail = native` (needs the `cli` feature: the
//! spectra use rustfft).

use super::{evaluate_at, terrain_input};
use crate::eval::{EvalResult, Evaluator, Targets};
use crate::field::Field;
use crate::graph::Graph;
use crate::node::Category;
use std::path::Path;

/// The fine band `orogen parity --detail` measures: features shorter than two cells of a 256²
/// preview, i.e. wavenumbers above 128 cycles per map side.
pub const DETAIL_CUTOFF: f64 = 128.0;

/// How much fine detail an erosion node makes at a build resolution: the fine band of its
/// change (output − the terrain wired into it) in its own mode, and with `detail = native` at
/// the same resolution on the same input.
#[derive(Clone, Debug, PartialEq)]
pub struct DetailRow {
    pub node: String,
    /// The node type.
    pub kind: &'static str,
    /// Its `detail` mode as set in the graph.
    pub mode: String,
    pub own: crate::analysis::BandPower,
    pub native: crate::analysis::BandPower,
}

impl DetailRow {
    /// Fine-band power in the node's own mode ÷ with `detail = native` (1 for a node set to
    /// native; infinite when native makes no fine detail at all).
    #[must_use]
    pub fn ratio(&self) -> f64 {
        if self.native.fine > 0.0 {
            self.own.fine / self.native.fine
        } else if self.own.fine > 0.0 {
            f64::INFINITY
        } else {
            1.0
        }
    }
}

/// Measures [`DetailRow`]s at `resolution`² for the erosion nodes in `nodes` (all with a
/// `detail` parameter when empty), sorted by node. Upstream results are shared between the
/// runs through one evaluator's cache, so each node costs its own two runs.
pub fn detail(
    graph: &Graph,
    base_dir: Option<&Path>,
    resolution: usize,
    nodes: &[String],
) -> Result<Vec<DetailRow>, String> {
    use crate::node::ParamValue;
    let flat = graph.flattened();
    let graph: &Graph = &flat;
    let mut ids: Vec<String> = graph
        .nodes
        .iter()
        .filter(|n| {
            n.def.spec.category == Category::Erosion
                && n.def.param_index("detail").is_some()
                && (nodes.is_empty() || nodes.contains(&n.id))
        })
        .map(|n| n.id.clone())
        .collect();
    ids.sort();
    let mut evaluator = Evaluator::with_cache(usize::MAX);
    let mut run = |g: &Graph, id: &str| -> Result<EvalResult, String> {
        evaluate_at(
            &mut evaluator,
            g,
            base_dir,
            resolution,
            Targets::Nodes(vec![id.to_owned()]),
        )
    };
    let mut rows = Vec::new();
    for id in ids {
        let Some(node) = graph.node(&id) else {
            continue;
        };
        let Some(input) = terrain_input(node).cloned() else {
            continue;
        };
        let change = |res: &EvalResult| -> Option<Field> {
            let out = res.fields.get(&id)?.first()?;
            let inp = res.field(graph, &input)?;
            Some(Field::zip_map(out, &inp, |a, b| a - b))
        };
        let own = run(graph, &id)?;
        let Some(own_change) = change(&own) else {
            continue; // incomplete or failed
        };
        let k = node.def.param_index("detail").unwrap_or_default();
        let spec = &node.def.params[k];
        let mode = node.params[k].display(spec);
        let native_index = match spec.kind {
            crate::node::ParamKind::Choice { options, .. } => {
                options.iter().position(|o| *o == "native")
            }
            _ => None,
        };
        let mut native_graph = graph.clone();
        if let Some(i) = native_index {
            native_graph.set_param(&id, "detail", ParamValue::Choice(i))?;
        }
        let native = run(&native_graph, &id)?;
        let Some(native_change) = change(&native) else {
            continue;
        };
        rows.push(DetailRow {
            node: id.clone(),
            kind: node.def.spec.id,
            mode,
            own: crate::analysis::band_power(&own_change, DETAIL_CUTOFF),
            native: crate::analysis::band_power(&native_change, DETAIL_CUTOFF),
        });
    }
    Ok(rows)
}
