//! Edit › Arrange: a layered drawing of the graph, left to right, in the manner of Sugiyama,
//! Tagawa & Toda (1981), "Methods for visual understanding of hierarchical system structures":
//!
//! 1. **Layers** by longest path from the sources: a node sits one column right of its
//!    right-most input, so every wire runs left to right.
//! 2. **Order** within each column by the barycentre heuristic: nodes are sorted by the mean
//!    position of their inputs (sweeping right), then of their users (sweeping left), a few
//!    times, which removes most wire crossings.
//! 3. **Coordinates**: columns are as wide as their widest node plus a gap; within a column
//!    each node is placed at the mean height of its inputs, pushed down just enough not to
//!    overlap the node above it — so no two nodes overlap, whatever their sizes.
//!
//! Node sizes are the ones drawn (a node's thumbnail and ports make it taller), so the result
//! has no overlaps on screen. Nodes are identified by id; the output is each node's new
//! top-left corner in graph units, deterministic for a given graph and sizes.

use egui::{Pos2, Vec2};
use orogen::Graph;
use std::collections::BTreeMap;

/// Horizontal space between columns, vertical space between nodes (graph units).
const GAP: Vec2 = Vec2::new(70.0, 36.0);
/// Size assumed for a node not drawn yet.
const DEFAULT_SIZE: Vec2 = Vec2::new(180.0, 120.0);
/// Barycentre sweeps (each right then left).
const SWEEPS: usize = 4;

/// New top-left positions for every node of `g`, given drawn `sizes` (graph units).
#[must_use]
pub fn arrange(g: &Graph, sizes: &BTreeMap<String, Vec2>) -> BTreeMap<String, Pos2> {
    let ids: Vec<&str> = g.nodes.iter().map(|n| n.id.as_str()).collect();
    let index: BTreeMap<&str, usize> = ids.iter().enumerate().map(|(i, id)| (*id, i)).collect();
    // Inputs of each node, as indices (each source once).
    let preds: Vec<Vec<usize>> = g
        .nodes
        .iter()
        .map(|n| {
            let mut p: Vec<usize> = n
                .inputs
                .iter()
                .flatten()
                .filter_map(|r| index.get(r.node.as_str()).copied())
                .collect();
            p.sort_unstable();
            p.dedup();
            p
        })
        .collect();
    let mut succs: Vec<Vec<usize>> = vec![Vec::new(); ids.len()];
    for (i, p) in preds.iter().enumerate() {
        for &j in p {
            succs[j].push(i);
        }
    }
    let layer = layers(&preds);
    let columns = order(&layer, &preds, &succs, g);
    let size = |i: usize| sizes.get(ids[i]).copied().unwrap_or(DEFAULT_SIZE);
    let mut pos: Vec<Pos2> = vec![Pos2::ZERO; ids.len()];
    let mut x = 0.0;
    for col in &columns {
        let width = col.iter().map(|&i| size(i).x).fold(0.0, f32::max);
        let mut next_free = f32::NEG_INFINITY;
        for &i in col {
            // At the mean centre height of its inputs (already placed: they are to the left).
            let want = if preds[i].is_empty() {
                next_free.max(0.0)
            } else {
                let c = preds[i]
                    .iter()
                    .map(|&j| pos[j].y + size(j).y / 2.0)
                    .sum::<f32>()
                    / preds[i].len() as f32;
                c - size(i).y / 2.0
            };
            let y = if next_free.is_finite() {
                want.max(next_free)
            } else {
                want
            };
            pos[i] = Pos2::new(x, y);
            next_free = y + size(i).y + GAP.y;
        }
        x += width + GAP.x;
    }
    // Start at the origin.
    let top = pos.iter().map(|p| p.y).fold(f32::INFINITY, f32::min);
    let top = if top.is_finite() { top } else { 0.0 };
    ids.iter()
        .zip(pos)
        .map(|(id, p)| ((*id).to_owned(), Pos2::new(p.x, (p.y - top).round())))
        .collect()
}

/// Longest path from the sources. The graph is a DAG; a cycle (never saved, but a document
/// may hold anything) stops at the node count.
fn layers(preds: &[Vec<usize>]) -> Vec<usize> {
    let n = preds.len();
    let mut layer = vec![0usize; n];
    for _ in 0..n {
        let mut changed = false;
        for i in 0..n {
            let l = preds[i].iter().map(|&j| layer[j] + 1).max().unwrap_or(0);
            if l > layer[i] && l < n {
                layer[i] = l;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    layer
}

/// The columns, each ordered top to bottom by barycentre sweeps; ties keep the order of the
/// nodes' current heights (so an arranged graph arranged again stays as it is).
fn order(
    layer: &[usize],
    preds: &[Vec<usize>],
    succs: &[Vec<usize>],
    g: &Graph,
) -> Vec<Vec<usize>> {
    let depth = layer.iter().copied().max().map_or(0, |m| m + 1);
    let mut columns: Vec<Vec<usize>> = vec![Vec::new(); depth];
    for (i, &l) in layer.iter().enumerate() {
        columns[l].push(i);
    }
    for col in &mut columns {
        col.sort_by(|&a, &b| {
            g.nodes[a].position[1]
                .total_cmp(&g.nodes[b].position[1])
                .then(a.cmp(&b))
        });
    }
    let mut rank = vec![0.0f32; layer.len()];
    let set_ranks = |columns: &[Vec<usize>], rank: &mut [f32]| {
        for col in columns {
            for (k, &i) in col.iter().enumerate() {
                rank[i] = k as f32;
            }
        }
    };
    set_ranks(&columns, &mut rank);
    let sweep = |col: &mut Vec<usize>, rank: &[f32], by: &[Vec<usize>]| {
        let key = |i: usize| {
            if by[i].is_empty() {
                rank[i]
            } else {
                by[i].iter().map(|&j| rank[j]).sum::<f32>() / by[i].len() as f32
            }
        };
        col.sort_by(|&a, &b| key(a).total_cmp(&key(b)).then(rank[a].total_cmp(&rank[b])));
    };
    for _ in 0..SWEEPS {
        for l in 1..depth {
            sweep(&mut columns[l], &rank, preds);
            set_ranks(&columns, &mut rank);
        }
        for l in (0..depth.saturating_sub(1)).rev() {
            sweep(&mut columns[l], &rank, succs);
            set_ranks(&columns, &mut rank);
        }
    }
    columns
}

#[cfg(test)]
mod tests {
    use super::*;
    use egui::Rect;

    fn load(name: &str) -> Graph {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../graphs")
            .join(name);
        orogen::document::graph_file::load_file(&p).unwrap_or_else(|d| panic!("{d}"))
    }

    /// Every example graph, with node sizes from 100 to 320 units: no two nodes overlap, and
    /// every wire runs from a column to one further right.
    #[test]
    fn arranged_graphs_have_no_overlaps_and_wires_run_left_to_right() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../graphs");
        for e in std::fs::read_dir(dir).expect("graphs") {
            let p = e.expect("entry").path();
            if p.extension().is_none_or(|x| x != "json") {
                continue;
            }
            let name = p.file_name().expect("name").to_string_lossy().into_owned();
            let g = load(&name);
            let sizes: BTreeMap<String, Vec2> = g
                .nodes
                .iter()
                .enumerate()
                .map(|(k, n)| {
                    let s = Vec2::new(100.0 + (k * 37 % 220) as f32, 60.0 + (k * 53 % 200) as f32);
                    (n.id.clone(), s)
                })
                .collect();
            let pos = arrange(&g, &sizes);
            assert_eq!(pos.len(), g.nodes.len());
            let rect = |id: &str| Rect::from_min_size(pos[id], sizes[id]);
            for (i, a) in g.nodes.iter().enumerate() {
                for b in &g.nodes[i + 1..] {
                    assert!(
                        !rect(&a.id).intersects(rect(&b.id)),
                        "{name}: {} and {} overlap",
                        a.id,
                        b.id
                    );
                }
                for r in a.inputs.iter().flatten() {
                    assert!(
                        rect(&r.node).max.x < rect(&a.id).min.x,
                        "{name}: the wire {} → {} runs right to left",
                        r.node,
                        a.id
                    );
                }
            }
            // Arranging an arranged graph changes nothing.
            let mut again = g.clone();
            for n in &mut again.nodes {
                n.position = [f64::from(pos[&n.id].x), f64::from(pos[&n.id].y)];
            }
            assert_eq!(arrange(&again, &sizes), pos, "{name}: arranging twice");
        }
    }
}
