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
//! Comment frames are kept ([`arrange_with_frames`]): each frame's nodes are arranged inside
//! it, and the frame is then one block among the other nodes.
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
    let items = Items::of(g, &ids, sizes);
    let pos = items.place();
    ids.iter()
        .zip(pos)
        .map(|(id, p)| ((*id).to_owned(), p))
        .collect()
}

/// [`arrange`] keeping the graph's comment frames: each frame's nodes (those whose centre lies
/// inside it; the first frame holding a node keeps it) are arranged inside the frame, below
/// its title bar, and each frame then counts as one block — as large as its nodes' drawing
/// plus its margins and title — in the arrangement of the blocks and the free nodes. So no
/// two nodes overlap, no node lies on a frame it does not belong to or on its title, and no
/// two frames overlap. Returns the nodes' new top-left corners and the frames' new rectangles
/// (`[x, y, width, height]`, in the order of `g.frames`).
#[must_use]
pub fn arrange_with_frames(
    g: &Graph,
    sizes: &BTreeMap<String, Vec2>,
) -> (BTreeMap<String, Pos2>, Vec<[f64; 4]>) {
    if g.frames.is_empty() {
        return (arrange(g, sizes), Vec::new());
    }
    // Each node's frame (the first whose rectangle holds its centre).
    let size = |id: &str| sizes.get(id).copied().unwrap_or(DEFAULT_SIZE);
    let frame_of: BTreeMap<&str, usize> = g
        .nodes
        .iter()
        .filter_map(|n| {
            let c = Pos2::new(n.position[0] as f32, n.position[1] as f32) + size(&n.id) / 2.0;
            let f = g
                .frames
                .iter()
                .position(|f| super::frames::rect(f).contains(c))?;
            Some((n.id.as_str(), f))
        })
        .collect();
    // Inside each frame: its members arranged on their own, offset below the title.
    let inset = Vec2::new(FRAME_MARGIN, FRAME_MARGIN + super::frames::HEADER);
    let mut inner: Vec<BTreeMap<String, Pos2>> = Vec::with_capacity(g.frames.len());
    let mut block: Vec<Vec2> = Vec::with_capacity(g.frames.len());
    for f in 0..g.frames.len() {
        let ids: Vec<&str> = g
            .nodes
            .iter()
            .map(|n| n.id.as_str())
            .filter(|id| frame_of.get(id) == Some(&f))
            .collect();
        let pos = Items::of(g, &ids, sizes).place();
        let extent = ids
            .iter()
            .zip(&pos)
            .map(|(id, p)| p.to_vec2() + size(id))
            .fold(Vec2::new(160.0, 40.0), Vec2::max);
        block.push(extent + inset + Vec2::splat(FRAME_MARGIN));
        inner.push(ids.iter().map(|id| (*id).to_owned()).zip(pos).collect());
    }
    // The blocks: every frame, then every free node.
    let free: Vec<&str> = g
        .nodes
        .iter()
        .map(|n| n.id.as_str())
        .filter(|id| !frame_of.contains_key(id))
        .collect();
    let block_of = |id: &str| -> Option<usize> {
        match frame_of.get(id) {
            Some(&f) => Some(f),
            None => free
                .iter()
                .position(|x| *x == id)
                .map(|k| g.frames.len() + k),
        }
    };
    let count = g.frames.len() + free.len();
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); count];
    for n in &g.nodes {
        let Some(to) = block_of(&n.id) else { continue };
        for r in n.inputs.iter().flatten() {
            if let Some(from) = block_of(&r.node).filter(|&b| b != to) {
                preds[to].push(from);
            }
        }
    }
    for p in &mut preds {
        p.sort_unstable();
        p.dedup();
    }
    let mut item_sizes = block.clone();
    item_sizes.extend(free.iter().map(|id| size(id)));
    let mut y: Vec<f64> = g.frames.iter().map(|f| f.rect[1]).collect();
    y.extend(
        free.iter()
            .map(|id| g.node(id).map_or(0.0, |n| n.position[1])),
    );
    let at = Items {
        preds,
        sizes: item_sizes,
        y,
    }
    .place();
    let mut nodes = BTreeMap::new();
    let mut frames = Vec::with_capacity(g.frames.len());
    for (f, members) in inner.iter().enumerate() {
        for (id, p) in members {
            nodes.insert(id.clone(), (at[f] + inset + p.to_vec2()).round());
        }
        let o = at[f].round();
        frames.push([
            f64::from(o.x),
            f64::from(o.y),
            f64::from(block[f].x.round()),
            f64::from(block[f].y.round()),
        ]);
    }
    for (k, id) in free.iter().enumerate() {
        nodes.insert((*id).to_owned(), at[g.frames.len() + k]);
    }
    (nodes, frames)
}

/// Space between a frame's edge and the nodes Arrange puts inside it.
const FRAME_MARGIN: f32 = 24.0;

/// What is laid out: items (nodes, or frames as blocks) with their inputs, drawn sizes and
/// current heights (which break ties, so an arranged graph arranged again stays as it is).
struct Items {
    preds: Vec<Vec<usize>>,
    sizes: Vec<Vec2>,
    y: Vec<f64>,
}

impl Items {
    /// The nodes `ids` of `g`, with their wires among themselves.
    fn of(g: &Graph, ids: &[&str], sizes: &BTreeMap<String, Vec2>) -> Self {
        let index: BTreeMap<&str, usize> = ids.iter().enumerate().map(|(i, id)| (*id, i)).collect();
        let nodes: Vec<_> = ids.iter().filter_map(|id| g.node(id)).collect();
        // Inputs of each node, as indices (each source once).
        let preds = nodes
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
        Self {
            preds,
            sizes: ids
                .iter()
                .map(|id| sizes.get(*id).copied().unwrap_or(DEFAULT_SIZE))
                .collect(),
            y: nodes.iter().map(|n| n.position[1]).collect(),
        }
    }

    /// Top-left corners, the topmost at height 0.
    fn place(&self) -> Vec<Pos2> {
        let preds = &self.preds;
        let mut succs: Vec<Vec<usize>> = vec![Vec::new(); preds.len()];
        for (i, p) in preds.iter().enumerate() {
            for &j in p {
                succs[j].push(i);
            }
        }
        let layer = layers(preds);
        let columns = order(&layer, preds, &succs, &self.y);
        let size = |i: usize| self.sizes[i];
        let mut pos: Vec<Pos2> = vec![Pos2::ZERO; preds.len()];
        let mut x = 0.0;
        for col in &columns {
            let width = col.iter().map(|&i| size(i).x).fold(0.0, f32::max);
            let mut next_free = f32::NEG_INFINITY;
            for &i in col {
                // At the mean centre height of its inputs (already placed: they are to the
                // left).
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
        pos.into_iter()
            .map(|p| Pos2::new(p.x, (p.y - top).round()))
            .collect()
    }
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
    y: &[f64],
) -> Vec<Vec<usize>> {
    let depth = layer.iter().copied().max().map_or(0, |m| m + 1);
    let mut columns: Vec<Vec<usize>> = vec![Vec::new(); depth];
    for (i, &l) in layer.iter().enumerate() {
        columns[l].push(i);
    }
    for col in &mut columns {
        col.sort_by(|&a, &b| y[a].total_cmp(&y[b]).then(a.cmp(&b)));
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

    /// The file names of the example graphs.
    fn example_graphs() -> Vec<String> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../graphs");
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .expect("graphs")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .map(|p| p.file_name().expect("name").to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    /// Every example graph, with node sizes from 100 to 320 units: no two nodes overlap, and
    /// every wire runs from a column to one further right.
    #[test]
    fn arranged_graphs_have_no_overlaps_and_wires_run_left_to_right() {
        for name in example_graphs() {
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

    /// Every example graph with two frames (around its first two and its last two nodes):
    /// Arrange keeps each frame's nodes inside it, below its title; no node overlaps another,
    /// no free node lies on a frame, no two frames overlap, and every frame keeps its nodes.
    #[test]
    fn arrange_keeps_frames_around_their_nodes_without_overlaps() {
        for name in example_graphs() {
            let mut g = load(&name);
            if g.nodes.len() < 5 {
                continue;
            }
            let sizes: BTreeMap<String, Vec2> = g
                .nodes
                .iter()
                .enumerate()
                .map(|(k, n)| {
                    (
                        n.id.clone(),
                        Vec2::new(120.0 + (k * 37 % 180) as f32, 80.0 + (k * 53 % 160) as f32),
                    )
                })
                .collect();
            let ids: Vec<String> = g.nodes.iter().map(|n| n.id.clone()).collect();
            let n = ids.len();
            // Spread the nodes out so that the two frames do not share any.
            for (k, node) in g.nodes.iter_mut().enumerate() {
                node.position = [k as f64 * 400.0, 0.0];
            }
            let groups = [ids[..2].to_vec(), ids[n - 2..].to_vec()];
            for grp in &groups {
                let f = crate::canvas::frames::around(&g, grp, &sizes).expect("frame");
                g.frames.push(f);
            }
            let (pos, frames) = arrange_with_frames(&g, &sizes);
            assert_eq!(pos.len(), n, "{name}");
            assert_eq!(frames.len(), 2, "{name}");
            let node = |id: &str| Rect::from_min_size(pos[id], sizes[id]);
            let frame = |f: usize| {
                let r = frames[f];
                Rect::from_min_size(
                    Pos2::new(r[0] as f32, r[1] as f32),
                    Vec2::new(r[2] as f32, r[3] as f32),
                )
            };
            for (i, a) in ids.iter().enumerate() {
                for b in &ids[i + 1..] {
                    assert!(!node(a).intersects(node(b)), "{name}: {a} and {b} overlap");
                }
                let home = groups.iter().position(|grp| grp.contains(a));
                for f in 0..2 {
                    if home == Some(f) {
                        let inner = frame(f).shrink2(Vec2::new(0.0, 0.0));
                        assert!(
                            inner.contains_rect(node(a)),
                            "{name}: {a} outside its frame"
                        );
                        assert!(
                            node(a).min.y >= frame(f).min.y + crate::canvas::frames::HEADER,
                            "{name}: {a} on its frame's title"
                        );
                    } else {
                        assert!(!frame(f).intersects(node(a)), "{name}: {a} on frame {f}");
                    }
                }
            }
            assert!(!frame(0).intersects(frame(1)), "{name}: the frames overlap");
        }
    }
}
