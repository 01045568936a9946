//! `orogen parity`: does the preview predict the build, and does the build keep the
//! detail its process makes (`--detail`)?

use super::args::load_graph;
use super::args::{GraphArgs, GraphSource};
use super::EXIT_FAILED;
use super::EXIT_INVALID;
use orogen::document::graph_file;
use std::process::ExitCode;

/// Least fine-band power an erosion node's own mode must make, as a share of `native`'s.
pub(super) const DETAIL_MIN: f64 = 0.5;

/// `orogen parity --detail`.
pub(super) fn run_detail(
    path: &std::path::Path,
    graph: &orogen::Graph,
    to: usize,
    nodes: &[String],
) -> ExitCode {
    let t0 = std::time::Instant::now();
    let rows = match orogen::parity::detail(graph, path.parent(), to, nodes) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{}: {e}", orogen::io::owned::escape_path(path));
            return ExitCode::from(EXIT_INVALID);
        }
    };
    println!(
        "{}: detail at {to}² (fine band: above {} cycles per map), {:.1} s",
        orogen::io::owned::escape_path(path),
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

pub(super) fn run_parity(
    source: GraphSource,
    (from, to): (usize, usize),
    nodes: &[String],
    (detail, as_built): (bool, Option<usize>),
) -> ExitCode {
    if !(2..=graph_file::MAX_RESOLUTION as usize).contains(&from) || to <= from {
        eprintln!("error: --from {from} --to {to}: expected 2 ≤ from < to");
        return ExitCode::from(EXIT_INVALID);
    }
    let args = GraphArgs {
        source,
        size: Some(to),
        max_memory: None,
    };
    let path = args.source.graph.as_path();
    let graph = match load_graph(&args, None) {
        Ok(g) => g,
        Err(code) => return code,
    };
    if detail {
        return run_detail(path, &graph, to, nodes);
    }
    let t0 = std::time::Instant::now();
    let rows = match rows_of(path, &graph, (from, to), nodes, as_built) {
        Ok(r) => r,
        Err(code) => return code,
    };
    println!(
        "{}: {from}² vs {to}²{} (brought down to {from}²), {:.1} s",
        orogen::io::owned::escape_path(path),
        as_built.map_or(String::new(), |c| format!(
            " as a tiled build over a {c}² coarse pass computes it"
        )),
        t0.elapsed().as_secs_f64()
    );
    println!(
        "{:<22} {:<24} {:<12} {:>9} {:>9} {:>6} {:>7} {:>8} {:>8}  verdict",
        "node", "type", "output", "mean|Δ|", "own", "tol", "corr", "amount", "Δcorr"
    );
    let mut all_ok = true;
    let mut inherited = false;
    for r in &rows {
        let (mut amount, mut dcorr) = r.change.map_or_else(
            || (String::new(), String::new()),
            |(a, c)| (format!("{a:.3}"), format!("{c:.3}")),
        );
        let verdict = r.verdict();
        all_ok &= verdict != orogen::parity::Verdict::Outside;
        inherited |= verdict == orogen::parity::Verdict::Inherited;
        let own = r
            .own
            .map_or_else(String::new, |o| format!("{:.3}%", 100.0 * o));
        // Inherited for its change: the own run's measures beside the end-to-end ones.
        if let (orogen::parity::Verdict::Inherited, Some((a, c)), false) =
            (verdict, r.own_change, r.change_within())
        {
            amount = format!("{amount} (own {a:.3})");
            dcorr = format!("{dcorr} (own {c:.3})");
        }
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
    let per_cell: Vec<&str> = graph
        .nodes
        .iter()
        .filter(|n| rows.iter().any(|r| r.node == n.id))
        .filter(|n| n.def.resolution(&n.params) == orogen::node::ResolutionBehaviour::PerCell)
        .map(|n| n.id.as_str())
        .collect();
    if !per_cell.is_empty() {
        println!(
            "per cell: {} measure(s) over the grid's own cells (scale_m 0): a finer build reads steeper \
             detail than the preview's cells hold, and its rivers follow bumps they do not. \
             scale_m −1 (auto) measures over a fixed share of the world, which the preview predicts.",
            per_cell.join(", ")
        );
    }
    println!(
        "tolerances (tol): mean|Δ| ≤ 0.25% of the range (sky view 1%, erosion heights, water and snow masks, slope, aspect and curvature masks, sediment depth 1.5%; \
         anything computed from an eroded terrain 1.5% at least); erosion amount 0.85–1.15, Δcorr ≥ 0.9 (droplets 0.85); \
         info: masks whose definition depends on the grid (flow accumulation, erosion state) and anything computed from them"
    );
    ExitCode::from(if all_ok { 0 } else { EXIT_FAILED })
}

/// The parity rows of `graph` (`--as-built`: against a tiled build over that coarse pass, its
/// stages in a temporary folder), or the exit code after printing why not.
fn rows_of(
    path: &std::path::Path,
    graph: &orogen::Graph,
    (from, to): (usize, usize),
    nodes: &[String],
    as_built: Option<usize>,
) -> Result<Vec<orogen::parity::Row>, ExitCode> {
    // The stages of an as-built evaluation, deleted when parity is done.
    let work = match as_built {
        Some(_) => Some(
            tempfile::Builder::new()
                .prefix("orogen-parity-")
                .tempdir()
                .map_err(|e| {
                    eprintln!("error: a folder for the tiled build's stages: {e}");
                    ExitCode::from(EXIT_FAILED)
                })?,
        ),
        None => None,
    };
    let fine = match (&work, as_built) {
        (Some(w), Some(coarse)) => orogen::parity::Fine::AsBuilt {
            graph_file: Some(path),
            coarse,
            work: w.path(),
        },
        _ => orogen::parity::Fine::WholeMap,
    };
    orogen::parity::compare_with(graph, path.parent(), from, to, nodes, fine).map_err(|e| {
        eprintln!("{}: {e}", orogen::io::owned::escape_path(path));
        ExitCode::from(EXIT_INVALID)
    })
}
