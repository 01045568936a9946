//! Preview–build parity: does a graph give the same terrain at a preview resolution and at a
//! build resolution? `orogen parity` and the tests measure it the same way.
//!
//! The graph is evaluated at both resolutions; every output of every node evaluated at the
//! finer one is brought down to the coarser grid by area averaging and compared:
//! - **mean |difference|** as a share of the value range (the graph's height range for
//!   heights, 1 for masks);
//! - **correlation** of the two fields;
//! - for erosion nodes, of the **change** they make (output − the terrain wired into them):
//!   the **amount ratio** (mean |change| at the finer resolution ÷ at the coarser) and the
//!   correlation of the two changes — a node can keep the terrain's correlation near 1 while
//!   eroding half as much.
//!
//! Tolerances ([`Tolerance`]): generators, filters and masks within 0.25% of the range (they
//! sample the same continuous functions in world units); erosion nodes within 1.5%, an amount
//! ratio in [0.85, 1.15] and a change correlation ≥ 0.9 (≥ 0.85 for droplets, which are
//! stochastic at each resolution); the water nodes' terrains and surfaces (lakes, rivers, sea,
//! snow) within 0.25% and their masks within 1.5%; flow accumulation shown for information (a
//! channel is one cell wide at every resolution); `sky_view` within 1% (its horizons read the
//! terrain's finest octaves, which a coarser grid point-samples); `sediment_depth` (an
//! erosion's change in metres) within the erosion's 1.5%. Anything computed downstream of an
//! erosion node (a height, a mask, a colour) is judged at the erosion tolerance at least; a
//! subgraph's results and graph inputs at the tolerance of what they hand on. Anything computed
//! from an output shown for information (flow accumulation's, an erosion node's state masks)
//! is shown for information too. Scalars (a drainage area in m²) are measured as a share of
//! their own range at the coarser size.
//!
//! # Whose difference is it?
//! [`compare`] also runs each node once more at the preview size on the build's inputs brought
//! down (`Row::own`). End-to-end numbers mix a node's own resolution dependence with its inputs'
//! differences amplified; the own share separates them, so `orogen parity` fails a graph only for
//! a node that misses on its own (`Verdict::Outside`) and labels the rest `inherited`. An erosion
//! node's change measures are split the same way (`Row::own_change`): below a node that adds
//! detail at the build's scale (stream power's valleys), a thermal node erodes the sharper input
//! more end to end than against its own run (one reason stream power takes its drift out
//! exactly: `levels::Multiscale::DRIFT_EXACT`). Tests keep
//! asserting `Row::ok()`, end to end. The own share still includes what area averaging hides: a
//! valley narrower than a preview cell is gone from the averaged input too, so a sea flooding such
//! valleys misses on its own share as well.

#[cfg(feature = "cli")]
mod detail;
#[cfg(feature = "cli")]
pub use detail::{detail, DetailRow, DETAIL_CUTOFF};

use crate::eval::{EvalOptions, EvalResult, Evaluator, Targets};
use crate::field::Field;
use crate::graph::Graph;
use crate::node::{Category, NodeSpec, Parity, PortKind};
use std::path::Path;

/// The agreement of one node output between two resolutions.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub node: String,
    /// The node type.
    pub kind: &'static str,
    pub output: &'static str,
    /// Mean |fine brought down − coarse| ÷ the value range.
    pub mean_abs_diff: f64,
    pub correlation: f64,
    /// Erosion nodes' first output: (amount ratio, correlation of the change).
    pub change: Option<(f64, f64)>,
    /// The node's own share: mean |difference| ÷ the value range between the build's output
    /// brought down and the node run at the preview size on the build's inputs brought down —
    /// what the node itself changes between resolutions, apart from what its inputs do.
    /// `None` for nodes without inputs (their whole difference is their own).
    pub own: Option<f64>,
    /// An erosion node's first output: its change in the build (brought down) against its
    /// change in the own run, as [`Row::change`] measures it (amount ratio, correlation). A
    /// node whose input carries detail finer than the preview's cells (a thermal node below a
    /// stream power node's valleys) changes more in the build than in the preview; run on the
    /// build's input brought down, it changes as much as the build if that is the input's doing.
    pub own_change: Option<(f64, f64)>,
    /// `None` for outputs shown for information only: an erosion node's state and change
    /// masks (water, flow, drainage, rivers, wear), whose very definitions (a river one cell
    /// wide, a mask relative to its largest value) depend on the grid.
    pub tolerance: Option<Tolerance>,
}

/// What a row must meet.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tolerance {
    pub mean_abs_diff: f64,
    /// `(lowest, highest)` amount ratio, and the lowest change correlation (erosion only).
    pub change: Option<((f64, f64), f64)>,
}

/// What `orogen parity` says of a row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Within its tolerance.
    Ok,
    /// Outside its tolerance, but the node run on the build's inputs brought down is within
    /// it: the difference is its inputs', amplified (a sea level on a gentle coast, a slope
    /// of detail finer than the preview's cells), not the node's.
    Inherited,
    /// The node itself gives a different result at the two resolutions.
    Outside,
    /// Shown for information only.
    Info,
}

impl Verdict {
    /// How the CLI prints it.
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Ok => "ok",
            Verdict::Inherited => "inherited",
            Verdict::Outside => "OUTSIDE TOLERANCE",
            Verdict::Info => "info",
        }
    }
}

impl Row {
    /// The row's verdict (see [`Verdict`]).
    #[must_use]
    pub fn verdict(&self) -> Verdict {
        let Some(t) = &self.tolerance else {
            return Verdict::Info;
        };
        if self.ok() {
            return Verdict::Ok;
        }
        // The change measures too are the node's own when the own run has them.
        let change_ok = if self.own_change.is_some() {
            Self::meets(self.own_change, t)
        } else {
            self.change_ok(t)
        };
        match self.own {
            Some(own) if change_ok && own <= t.mean_abs_diff => Verdict::Inherited,
            _ => Verdict::Outside,
        }
    }

    /// Whether an erosion node's change (amount ratio and correlation) meets `t`.
    fn change_ok(&self, t: &Tolerance) -> bool {
        Self::meets(self.change, t)
    }

    /// Whether an erosion node's change end to end meets its tolerance (true for rows
    /// without change measures or tolerance).
    #[must_use]
    pub fn change_within(&self) -> bool {
        self.tolerance.is_none_or(|t| self.change_ok(&t))
    }

    /// Whether `change` (amount ratio, correlation) meets `t`'s.
    fn meets(change: Option<(f64, f64)>, t: &Tolerance) -> bool {
        match (change, t.change) {
            (Some((amount, corr)), Some(((lo, hi), min_corr))) => {
                (lo..=hi).contains(&amount) && corr >= min_corr
            }
            _ => true,
        }
    }

    /// Whether the row is within its tolerance, end to end (the node and everything upstream
    /// of it); see [`Row::verdict`] for the node's own share.
    #[must_use]
    pub fn ok(&self) -> bool {
        let Some(t) = &self.tolerance else {
            return true;
        };
        self.mean_abs_diff <= t.mean_abs_diff && self.change_ok(t)
    }
}

/// The tolerance of a node type's outputs (see the module doc and [`Parity`]); `None` for
/// outputs shown for information only.
#[must_use]
pub fn tolerance(spec: &NodeSpec, is_first_output: bool) -> Option<Tolerance> {
    let within = |mean_abs_diff| {
        Some(Tolerance {
            mean_abs_diff,
            change: None,
        })
    };
    match (spec.traits.parity, spec.category) {
        (Parity::Information, _) => None,
        (Parity::Within(t), _) => within(t),
        (parity, Category::Erosion) => {
            let min_corr = match parity {
                Parity::ErosionCorrelation(c) => c,
                _ => 0.9,
            };
            is_first_output.then_some(Tolerance {
                mean_abs_diff: 0.015,
                change: Some(((0.85, 1.15), min_corr)),
            })
        }
        // Lakes, rivers, sea, snow: their first output (a terrain or water surface) within
        // the generators' 0.25%, the rest within 1.5% — a finer grid resolves a shoreline,
        // a channel or a snow edge a little differently.
        (_, Category::Water) => within(if is_first_output { 0.0025 } else { 0.015 }),
        _ => within(0.0025),
    }
}

/// The tolerance of output `k` of `node`.
///
/// - Nodes that only hand a field on — a subgraph's results, a `graph_input` — take the
///   tolerance of the output they hand on (followed back through any chain of them): a
///   subgraph's erosion result is judged as erosion.
/// - An output computed from a terrain that an erosion node changed upstream — a height, a
///   mask, a colour — is judged at that erosion node's height tolerance (1.5%) when its own
///   is tighter: a filter cannot be closer to its build than its input is (the generators'
///   0.25% is for fields sampled from continuous functions of world position), and a mask
///   thresholding an eroded terrain amplifies the terrain's difference (the water nodes'
///   masks are held to the same 1.5%). Masks measured over the grid's own cells (slopes at
///   `scale_m` 0) typically miss even that: the finer build resolves steeper detail.
fn inherited_tolerance(
    graph: &Graph,
    node: &crate::graph::NodeInstance,
    k: usize,
) -> Option<Tolerance> {
    let (src, k) = handed_on(graph, node, k);
    let own = tolerance(&src.def.spec, k == 0);
    if src.def.spec.category == Category::Erosion {
        return own;
    }
    if fed_by_information(graph, src) {
        return None;
    }
    let upstream = graph
        .upstream(&src.id)
        .into_iter()
        .filter_map(|id| graph.node(&id))
        .filter(|n| n.id != src.id && n.def.spec.category == Category::Erosion)
        .filter_map(|n| tolerance(&n.def.spec, true))
        .map(|t| t.mean_abs_diff)
        .fold(0.0, f64::max);
    own.map(|t| Tolerance {
        mean_abs_diff: t.mean_abs_diff.max(upstream),
        ..t
    })
}

/// Whether anything `node` computes from comes, by any path not crossing an erosion node's
/// height, from an output shown for information only (flow accumulation's cell-wide
/// channels and drainage area, an erosion node's state masks): what is computed from a
/// grid-defined field is grid-defined too.
fn fed_by_information(graph: &Graph, node: &crate::graph::NodeInstance) -> bool {
    let mut seen = std::collections::BTreeSet::new();
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        for r in n.inputs.iter().flatten() {
            let Some(src) = graph.node(&r.node) else {
                continue;
            };
            let Some(k) = src.def.output_index(&r.output) else {
                continue;
            };
            let (orig, k) = handed_on(graph, src, k);
            if tolerance(&orig.def.spec, k == 0).is_none() {
                return true;
            }
            // Through pass-throughs to the node that computed the field; an erosion node's
            // height is judged on its own, whatever it was fed.
            if orig.def.spec.category != Category::Erosion && seen.insert(orig.id.as_str()) {
                stack.push(orig);
            }
        }
    }
    false
}

/// The node and output a pass-through node's output `k` comes from (itself when it is not
/// a pass-through).
fn handed_on<'g>(
    graph: &'g Graph,
    node: &'g crate::graph::NodeInstance,
    k: usize,
) -> (&'g crate::graph::NodeInstance, usize) {
    let (mut node, mut k) = (node, k);
    for _ in 0..graph.nodes.len() {
        let port = if node.def.spec.id == crate::graph::SUBGRAPH_TYPE {
            k
        } else if node.def.spec.traits.graph_input {
            0
        } else {
            break;
        };
        let Some(src) = node
            .inputs
            .get(port)
            .and_then(Option::as_ref)
            .and_then(|r| Some((graph.node(&r.node)?, r)))
            .and_then(|(n, r)| Some((n, n.def.output_index(&r.output)?)))
        else {
            break;
        };
        (node, k) = src;
    }
    (node, k)
}

/// How [`compare_with`] computes the finer size.
#[derive(Clone, Copy, Debug)]
pub enum Fine<'a> {
    /// The whole map in one evaluation, as `orogen build` without tiles computes it.
    WholeMap,
    /// As a tiled build computes it (`orogen parity --as-built`): every global node in a stage
    /// of its own over the whole world — erosion refined on the world's pieces, water over the
    /// tiled terrain — then the rest, through [`crate::tiles::evaluate_region_as_built`] over
    /// the whole world, the code the editor's region preview runs. The pieces are anchored to
    /// the world and the water is exact, so any tile size gives these values. At or below
    /// `coarse` (the build's `--coarse-size`) erosion runs over the whole map and a tiled build
    /// is the whole map's, bit for bit; above it erosion is refined in pieces. The stages are
    /// written in `work`; `graph_file` names the graph's file (relative paths in parameters).
    AsBuilt {
        graph_file: Option<&'a Path>,
        coarse: usize,
        work: &'a Path,
    },
}

/// Evaluates `graph` at `from`² and `to`² (`to` > `from`) and compares every output of the
/// nodes in `nodes` (all nodes when empty), sorted by node and output.
pub fn compare(
    graph: &Graph,
    base_dir: Option<&Path>,
    from: usize,
    to: usize,
    nodes: &[String],
) -> Result<Vec<Row>, String> {
    compare_with(graph, base_dir, from, to, nodes, Fine::WholeMap)
}

/// `graph` at `resolution`² as `fine` computes it, for the nodes in `nodes` (all when empty),
/// every field kept: what [`compare_with`] compares the preview against.
pub fn evaluate_fine(
    graph: &Graph,
    base_dir: Option<&Path>,
    resolution: usize,
    nodes: &[String],
    fine: Fine,
) -> Result<EvalResult, String> {
    let flat = graph.flattened();
    match fine {
        Fine::WholeMap => evaluate_at(
            &mut Evaluator::new(),
            &flat,
            base_dir,
            resolution,
            targets_of(nodes),
        ),
        Fine::AsBuilt {
            graph_file,
            coarse,
            work,
        } => {
            // A stored node is read, not evaluated, so its inputs are only there when asked
            // for: the own run and the erosion's change read them.
            let mut asked = nodes.to_vec();
            for id in nodes {
                let inputs = flat
                    .node(id)
                    .into_iter()
                    .flat_map(|x| x.inputs.iter().flatten());
                asked.extend(inputs.map(|r| r.node.clone()));
            }
            asked.sort_unstable();
            asked.dedup();
            crate::tiles::evaluate_region_as_built(
                &flat,
                graph_file,
                resolution,
                coarse,
                crate::node::Window::full(resolution),
                work,
                &EvalOptions {
                    resolution: Some(resolution),
                    targets: targets_of(&asked),
                    base_dir,
                    keep_all: true,
                    ..EvalOptions::default()
                },
            )
        }
    }
}

fn targets_of(nodes: &[String]) -> Targets {
    if nodes.is_empty() {
        Targets::All
    } else {
        Targets::Nodes(nodes.to_vec())
    }
}

/// [`compare`] with the finer size computed as `fine` says.
pub fn compare_with(
    graph: &Graph,
    base_dir: Option<&Path>,
    from: usize,
    to: usize,
    nodes: &[String],
    fine: Fine,
) -> Result<Vec<Row>, String> {
    let flat = graph.flattened();
    let graph: &Graph = &flat;
    let coarse = evaluate_at(
        &mut Evaluator::new(),
        graph,
        base_dir,
        from,
        targets_of(nodes),
    )?;
    let fine = evaluate_fine(graph, base_dir, to, nodes, fine)?;
    let span = graph.world.height_span_m();
    let mut rows = Vec::new();
    let mut ids: Vec<&str> = if nodes.is_empty() {
        graph.nodes.iter().map(|n| n.id.as_str()).collect()
    } else {
        nodes.iter().map(String::as_str).collect()
    };
    ids.sort_unstable();
    for id in ids {
        let Some(node) = graph.node(id) else {
            return Err(format!("no node \"{id}\" in the graph"));
        };
        let (Some(cf), Some(ff)) = (coarse.fields.get(id), fine.fields.get(id)) else {
            continue; // incomplete or failed: nothing to compare
        };
        // The terrain wired into the node (its first height input), at both resolutions.
        let input = terrain_input(node)
            .and_then(|r| Some((coarse.field(graph, r)?, fine.field(graph, r)?)));
        let own_fields = cf
            .first()
            .and_then(|c| own_run(graph, node, &fine, from, c.width(), c.height(), base_dir));
        for (k, port) in node.def.spec.outputs.iter().enumerate() {
            let (Some(c), Some(f)) = (cf.get(k), ff.get(k)) else {
                continue;
            };
            let down = f.resample_area(c.width(), c.height());
            let range = match port.kind {
                PortKind::Height => span,
                // A quantity in its own unit: a share of its own range at the coarser size.
                PortKind::Scalar => c
                    .min_max()
                    .map_or(1.0, |(lo, hi)| f64::from(hi - lo))
                    .max(f64::MIN_POSITIVE),
                PortKind::Mask | PortKind::Color => 1.0,
            };
            let tolerance = inherited_tolerance(graph, node, k);
            let own_field = own_fields
                .as_ref()
                .and_then(|o| o.get(k))
                .filter(|o| o.width() == c.width() && o.height() == c.height());
            let (mut change, mut own_change) = (None, None);
            if let (Some((ic, fi)), Some(_)) = (&input, tolerance.and_then(|t| t.change)) {
                if port.kind == PortKind::Height {
                    let fi_down = fi.resample_area(c.width(), c.height());
                    let df = Field::zip_map(&down, &fi_down, |a, b| a - b);
                    let dc = Field::zip_map(c, ic, |a, b| a - b);
                    change = Some(change_against(&df, &dc, range));
                    own_change = own_field.map(|o| {
                        change_against(&df, &Field::zip_map(o, &fi_down, |a, b| a - b), range)
                    });
                }
            }
            let own = own_field.map(|o| mean_abs_diff(o.data(), down.data()) / range);
            rows.push(Row {
                node: id.to_owned(),
                kind: node.def.spec.id,
                output: port.name,
                mean_abs_diff: mean_abs_diff(c.data(), down.data()) / range,
                correlation: correlation(c.data(), down.data()),
                change,
                own,
                own_change,
                tolerance,
            });
        }
    }
    // A pass-through (a subgraph's result, a graph input) owns nothing itself: its share is
    // that of the node whose output it hands on (when that node was compared).
    let owns: std::collections::HashMap<(String, &str), Option<f64>> = rows
        .iter()
        .map(|r| ((r.node.clone(), r.output), r.own))
        .collect();
    for r in &mut rows {
        let Some(node) = graph.node(&r.node) else {
            continue;
        };
        let Some(k) = node.def.output_index(r.output) else {
            continue;
        };
        let (src, k) = handed_on(graph, node, k);
        if src.id != node.id {
            r.own = src
                .def
                .spec
                .outputs
                .get(k)
                .and_then(|p| owns.get(&(src.id.clone(), p.name)).copied().flatten());
        }
    }
    Ok(rows)
}

/// A build's change `fine` (brought down) against a change `coarse` on the same grid: the
/// amount ratio (mean |fine| ÷ mean |coarse|) and their correlation.
fn change_against(fine: &Field, coarse: &Field, range: f64) -> (f64, f64) {
    let (mc, mf) = (mean_abs(coarse.data()), mean_abs(fine.data()));
    // A node that changes (next to) nothing at both sizes agrees with itself.
    let nothing = 1e-6 * range;
    if mc <= nothing && mf <= nothing {
        return (1.0, 1.0);
    }
    let amount = if mc > 0.0 { mf / mc } else { f64::INFINITY };
    (amount, correlation(coarse.data(), fine.data()))
}

/// `node` run at `resolution` on the build's (`fine`) inputs brought down to `w × h` by area
/// averaging; `None` for a node without inputs or when it fails.
fn own_run(
    graph: &Graph,
    node: &crate::graph::NodeInstance,
    fine: &EvalResult,
    resolution: usize,
    w: usize,
    h: usize,
    base_dir: Option<&Path>,
) -> Option<Vec<Field>> {
    if node.inputs.iter().all(Option::is_none) {
        return None;
    }
    let mut inputs = Vec::with_capacity(node.inputs.len());
    for (port, r) in node.def.spec.inputs.iter().zip(&node.inputs) {
        let Some(r) = r else {
            inputs.push(None);
            continue;
        };
        let f = fine.field(graph, r)?;
        let coerce = crate::node::Coercion::between(graph.output_kind(r)?, port.kind)?;
        let f = coerce.apply(&f, &graph.world);
        inputs.push(Some(std::sync::Arc::new(f.resample_area(w, h))));
    }
    let cancel = crate::node::CancelToken::new();
    let progress = |_: f32| {};
    let ctx = crate::node::EvalCtx {
        resolution,
        window: crate::node::Window::full(resolution),
        world: graph.world,
        graph_seed: graph.seed,
        node_id: &node.id,
        base_dir,
        allow_outside: &[],
        cancel: &cancel,
        progress: &progress,
        upstream: None,
        arrays: None,
    };
    node.def.eval(&ctx, &inputs, &node.params).ok()
}

fn mean_abs(v: &[f32]) -> f64 {
    v.iter().map(|x| f64::from(x.abs())).sum::<f64>() / v.len().max(1) as f64
}

fn mean_abs_diff(a: &[f32], b: &[f32]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| f64::from((x - y).abs()))
        .sum::<f64>()
        / a.len().max(1) as f64
}

/// Pearson correlation; 1 for two constant fields that are equal, 0 when only one is constant.
#[must_use]
pub fn correlation(a: &[f32], b: &[f32]) -> f64 {
    let n = a.len().min(b.len()).max(1) as f64;
    let (ma, mb) = (
        a.iter().map(|&x| f64::from(x)).sum::<f64>() / n,
        b.iter().map(|&x| f64::from(x)).sum::<f64>() / n,
    );
    let (mut sab, mut saa, mut sbb) = (0.0, 0.0, 0.0);
    for (&x, &y) in a.iter().zip(b) {
        let (dx, dy) = (f64::from(x) - ma, f64::from(y) - mb);
        sab += dx * dy;
        saa += dx * dx;
        sbb += dy * dy;
    }
    if saa == 0.0 && sbb == 0.0 {
        return if (ma - mb).abs() < 1e-12 { 1.0 } else { 0.0 };
    }
    if saa == 0.0 || sbb == 0.0 {
        return 0.0;
    }
    sab / (saa * sbb).sqrt()
}

/// The wire of the terrain a node works on: its first height input.
fn terrain_input(node: &crate::graph::NodeInstance) -> Option<&crate::graph::PortRef> {
    node.def
        .spec
        .inputs
        .iter()
        .zip(&node.inputs)
        .find(|(p, _)| p.kind == PortKind::Height)
        .and_then(|(_, r)| r.as_ref())
}

/// `graph` evaluated at `resolution`² for `targets`, every field kept; the diagnostics of a
/// graph that cannot be evaluated as one message.
fn evaluate_at(
    evaluator: &mut Evaluator,
    graph: &Graph,
    base_dir: Option<&Path>,
    resolution: usize,
    targets: Targets,
) -> Result<EvalResult, String> {
    evaluator
        .evaluate(
            graph,
            &EvalOptions {
                resolution: Some(resolution),
                targets,
                base_dir,
                keep_all: true,
                ..EvalOptions::default()
            },
        )
        .map_err(|d| {
            d.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; ")
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn area_resampling_keeps_the_mean_and_correlation_is_pearson() {
        let f = Field::from_fn(12, 12, |x, y| (x * 3 + y) as f32);
        let d = f.resample_area(5, 5);
        let mean = |f: &Field| f.data().iter().sum::<f32>() / f.data().len() as f32;
        assert!(
            (mean(&f) - mean(&d)).abs() < 1e-4,
            "{} {}",
            mean(&f),
            mean(&d)
        );
        assert_eq!(f.resample_area(6, 6), f.downsample_box(2));
        assert!((correlation(&[1.0, 2.0, 3.0], &[2.0, 4.0, 6.0]) - 1.0).abs() < 1e-12);
        assert!((correlation(&[1.0, 2.0, 3.0], &[3.0, 2.0, 1.0]) + 1.0).abs() < 1e-12);
    }

    /// A row outside its tolerance is inherited when the node on the build's inputs is
    /// within it, outside when it is not (or has no own share), info without a tolerance.
    #[test]
    fn verdicts() {
        let row = |diff: f64, own: Option<f64>, tol: Option<f64>| Row {
            node: "n".into(),
            kind: "slope_mask",
            output: "out",
            mean_abs_diff: diff,
            correlation: 1.0,
            change: None,
            own,
            own_change: None,
            tolerance: tol.map(|t| Tolerance {
                mean_abs_diff: t,
                change: None,
            }),
        };
        assert_eq!(row(0.001, Some(0.001), Some(0.0025)).verdict(), Verdict::Ok);
        assert_eq!(
            row(0.01, Some(0.002), Some(0.0025)).verdict(),
            Verdict::Inherited
        );
        assert_eq!(
            row(0.01, Some(0.004), Some(0.0025)).verdict(),
            Verdict::Outside
        );
        assert_eq!(row(0.01, None, Some(0.0025)).verdict(), Verdict::Outside);
        assert_eq!(row(0.5, Some(0.5), None).verdict(), Verdict::Info);
        assert!(
            !row(0.01, Some(0.002), Some(0.0025)).ok(),
            "ok() stays end to end"
        );
    }

    /// An erosion node whose change misses end to end (a thermal node eroding the sharper
    /// valleys of its build's input) is inherited when the own run changes as much as the
    /// build; outside when the own run misses too, or when there is no own run.
    #[test]
    fn an_erosion_nodes_change_is_inherited_from_its_input_or_its_own() {
        let row = |change: (f64, f64), own_change: Option<(f64, f64)>| Row {
            node: "scree".into(),
            kind: "thermal_erosion",
            output: "out",
            mean_abs_diff: 0.001,
            correlation: 1.0,
            change: Some(change),
            own: Some(0.001),
            own_change,
            tolerance: Some(Tolerance {
                mean_abs_diff: 0.015,
                change: Some(((0.85, 1.15), 0.9)),
            }),
        };
        assert_eq!(row((1.0, 0.99), None).verdict(), Verdict::Ok);
        let inherited = row((1.37, 0.945), Some((1.06, 0.996)));
        assert_eq!(inherited.verdict(), Verdict::Inherited);
        assert!(!inherited.ok() && !inherited.change_within());
        assert_eq!(
            row((1.37, 0.945), Some((1.3, 0.996))).verdict(),
            Verdict::Outside
        );
        assert_eq!(
            row((1.0, 0.8), Some((1.0, 0.85))).verdict(),
            Verdict::Outside
        );
        assert_eq!(row((1.37, 0.945), None).verdict(), Verdict::Outside);
    }
}
