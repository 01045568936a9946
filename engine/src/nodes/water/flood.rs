//! The priority flood every water node starts from, run in horizontal strips in parallel
//! (Barnes 2016, "Parallel priority-flood depression filling for trillion cell digital
//! elevation models", §3), and the flat routing that follows it.
//!
//! Each strip is flooded on its own from its perimeter (Barnes, Lehman & Mulla 2014's
//! Priority-Flood with a plain queue for the cells it raises, their Algorithm 2), every
//! perimeter cell that is not on the map edge starting a watershed label of its own, every
//! map-edge cell the "ocean" label. Where two labels meet, the flood records the spill
//! elevation between them; the seams between strips add the edges between their perimeter
//! cells. One small minimax flood over that label graph from the ocean gives each label the
//! level its water must reach to leave the map, and every cell's level is the larger of that
//! and its strip's own level. The filled surface is unique (the lowest, over all paths to the
//! map edge, of the highest cell on the path), so the result does not depend on the number of
//! strips: the tests compare every strip count with one strip and with an independent flood.
//!
//! A strip's queue is a 4-ary heap keyed on the float's order key and the cell index, so equal
//! heights pop in a fixed order. After the flood, rows in parallel, every cell gets its receiver
//! and, breadth first from each flat's rim, the flat cells theirs (see `Flood::receiver`): a
//! function of the filled surface alone.

use super::{is_edge, neighbours, Grid, NONE};
use crate::nodes::erosion::flow::{order_key, D8};
use dary_heap::QuaternaryHeap;
use rayon::prelude::*;
use std::cmp::Reverse;
use std::collections::VecDeque;

/// A depression-filled surface and where each cell's water goes over it.
pub struct Flood {
    /// The filled level of every cell: the lowest, over all paths to the map edge, of the
    /// highest cell on the path (the water surface of a landscape whose every pit is full).
    pub level: Vec<f32>,
    /// Where each cell sends its water under single-direction routing: its steepest lower
    /// neighbour (drop over distance; the first in [`D8`] order on a tie, O'Callaghan & Mark
    /// 1984); on a flat (no lower neighbour, off the map edge: a lake surface or a flat floor)
    /// the neighbour, level with it, one step closer to where the flat drains (breadth first
    /// from the flat's cells that have a lower neighbour or lie on the map edge); [`NONE`] on
    /// the map edge where nothing is lower (an outlet).
    pub receiver: Vec<u32>,
}

/// Fewest rows a strip is given: thinner strips add more seam than they save.
const MIN_STRIP_ROWS: usize = 64;

/// Fills every depression of the `w × h` terrain `z` that has no outlet to the map edge and
/// routes its flats (see [`Flood`]), one strip per thread.
#[must_use]
pub fn priority_flood(z: &[f32], w: usize, h: usize) -> Flood {
    let strips = rayon::current_num_threads().min(h / MIN_STRIP_ROWS).max(1);
    priority_flood_in(z, w, h, strips)
}

/// [`priority_flood`] over `strips` strips (the result is the same for every count).
#[must_use]
pub fn priority_flood_in(z: &[f32], w: usize, h: usize, strips: usize) -> Flood {
    let level = fill(z, w, h, strips);
    let receiver = receivers(&level, w, h);
    Flood { level, receiver }
}

/// The label of every map-edge cell.
pub(super) const OCEAN: u32 = 0;
/// Not labelled yet.
const UNSET: u32 = u32::MAX;

/// `v` with −0 as +0: which zero a flood keeps would otherwise depend on the order cells are
/// met in (the strips', the tiles'), and the filled surface is to be one function of the
/// terrain, to the bit.
#[inline]
#[must_use]
pub(super) fn canonical(v: f32) -> f32 {
    v + 0.0
}

/// One strip's flood: its cells' own levels (in place), their labels, and the spill edges
/// between its labels (label, label, elevation), labels numbered from 1 within the strip.
pub(super) struct Strip {
    pub(super) labels: Vec<u32>,
    pub(super) edges: Vec<(u32, u32, f32)>,
    pub(super) count: u32,
}

/// The depression-filled levels of `z`, flooded in `strips` strips.
fn fill(z: &[f32], w: usize, h: usize, strips: usize) -> Vec<f32> {
    let z: Vec<f32> = z.iter().map(|&v| canonical(v)).collect();
    let z = z.as_slice();
    let mut level = z.to_vec();
    if w == 0 || h == 0 {
        return level;
    }
    let strips = strips.clamp(1, h);
    let bounds: Vec<(usize, usize)> = (0..strips)
        .map(|s| (s * h / strips, (s + 1) * h / strips))
        .collect();
    let mut parts: Vec<&mut [f32]> = Vec::with_capacity(strips);
    let mut rest = level.as_mut_slice();
    for &(y0, y1) in &bounds {
        let (part, tail) = rest.split_at_mut((y1 - y0) * w);
        parts.push(part);
        rest = tail;
    }
    let floods: Vec<Strip> = parts
        .into_par_iter()
        .zip(bounds.par_iter())
        .map(|(part, &(y0, y1))| flood_window(part, w, y1 - y0, |i| is_edge(i + y0 * w, w, h)))
        .collect();
    if strips == 1 {
        // Every perimeter cell is on the map edge: the strip's levels are the answer.
        return level;
    }
    // Global label numbers: the ocean 0, then each strip's labels after the last strip's.
    let mut base = Vec::with_capacity(strips);
    let mut total = 1u32;
    for f in &floods {
        base.push(total - 1);
        total += f.count;
    }
    let global = |s: usize, l: u32| if l == OCEAN { OCEAN } else { base[s] + l };
    let mut edges: Vec<(u32, u32, f32)> = Vec::new();
    for (s, f) in floods.iter().enumerate() {
        edges.extend(
            f.edges
                .iter()
                .map(|&(a, b, e)| (global(s, a), global(s, b), e)),
        );
    }
    // The seams: each cell of a strip's last row touches three of the next strip's first.
    for s in 0..strips - 1 {
        let (up, down) = (&floods[s], &floods[s + 1]);
        let ya = bounds[s].1 - 1;
        let rows_up = bounds[s].1 - bounds[s].0;
        for x in 0..w {
            let a = ya * w + x;
            let la = global(s, up.labels[(rows_up - 1) * w + x]);
            for nx in x.saturating_sub(1)..(x + 2).min(w) {
                let b = (ya + 1) * w + nx;
                let lb = global(s + 1, down.labels[nx]);
                if la != lb {
                    edges.push((la, lb, z[a].max(z[b])));
                }
            }
        }
    }
    let spill = solve(&edges, total as usize);
    level.par_chunks_mut(w).enumerate().for_each(|(y, row)| {
        let s = bounds.partition_point(|&(_, y1)| y1 <= y);
        let labels = &floods[s].labels[(y - bounds[s].0) * w..][..w];
        for (v, &l) in row.iter_mut().zip(labels) {
            let g = global(s, l) as usize;
            *v = v.max(spill[g]);
        }
    });
    level
}

/// Floods a `w × rows` window of a map (`level`: its cells, raised in place) from the
/// window's perimeter; `on_map_edge(i)` says whether its cell `i` lies on the map's own edge
/// (labelled the ocean) rather than on a seam with the rest of the map.
pub(super) fn flood_window(
    level: &mut [f32],
    w: usize,
    rows: usize,
    on_map_edge: impl Fn(usize) -> bool,
) -> Strip {
    let n = rows * w;
    let mut labels = vec![UNSET; n];
    let mut closed = vec![0u64; n.div_ceil(64)];
    let mut edges = Vec::new();
    let mut count = 0u32;
    let key = |v: f32, i: usize| (u64::from(order_key(v)) << 32) | i as u64;
    let mut open: QuaternaryHeap<Reverse<u64>> = QuaternaryHeap::new();
    let mut pit: VecDeque<u32> = VecDeque::new();
    let on_perimeter = |i: usize| {
        let (x, y) = (i % w, i / w);
        x == 0 || y == 0 || x + 1 == w || y + 1 == rows
    };
    for i in 0..n {
        if on_perimeter(i) {
            closed[i >> 6] |= 1 << (i & 63);
            if on_map_edge(i) {
                labels[i] = OCEAN;
            }
            open.push(Reverse(key(level[i], i)));
        }
    }
    // Cells off the perimeter have all eight neighbours in the strip at fixed offsets.
    let offsets: [isize; 8] = D8.map(|(dx, dy)| dy as isize * w as isize + dx as isize);
    let mut next = [0usize; 8];
    loop {
        let c = if let Some(c) = pit.pop_front() {
            c as usize
        } else if let Some(Reverse(k)) = open.pop() {
            let c = (k & 0xffff_ffff) as usize;
            if labels[c] == UNSET {
                // A perimeter cell no flood reached first: a watershed of its own.
                count += 1;
                labels[c] = count;
            }
            c
        } else {
            break;
        };
        let count_next = if on_perimeter(c) {
            let mut k = 0;
            for j in neighbours(c, w, rows) {
                next[k] = j;
                k += 1;
            }
            k
        } else {
            for (n, o) in next.iter_mut().zip(offsets) {
                *n = c.wrapping_add_signed(o);
            }
            8
        };
        let (lc, vc) = (labels[c], level[c]);
        for &j in &next[..count_next] {
            if closed[j >> 6] & (1 << (j & 63)) != 0 {
                let lj = labels[j];
                if lj != lc && lj != UNSET {
                    edges.push((lc, lj, vc.max(level[j])));
                }
                continue;
            }
            closed[j >> 6] |= 1 << (j & 63);
            labels[j] = lc;
            if level[j] <= vc {
                level[j] = vc;
                pit.push_back(j as u32);
            } else {
                open.push(Reverse(key(level[j], j)));
            }
        }
    }
    Strip {
        labels,
        edges,
        count,
    }
}

/// The level each label's water must reach to leave the map: the lowest, over all paths in
/// the label graph from the ocean, of the highest spill elevation on the path (a minimax
/// Dijkstra; labels 0..`labels`, the ocean 0).
pub(super) fn solve(edges: &[(u32, u32, f32)], labels: usize) -> Vec<f32> {
    // Adjacency in compressed rows, both directions.
    let mut start = vec![0u32; labels + 1];
    for &(a, b, _) in edges {
        start[a as usize + 1] += 1;
        start[b as usize + 1] += 1;
    }
    for i in 0..labels {
        start[i + 1] += start[i];
    }
    let mut fill = start.clone();
    let mut adj = vec![(0u32, 0.0f32); 2 * edges.len()];
    for &(a, b, e) in edges {
        for (from, to) in [(a, b), (b, a)] {
            adj[fill[from as usize] as usize] = (to, e);
            fill[from as usize] += 1;
        }
    }
    let mut spill = vec![f32::INFINITY; labels];
    let mut done = vec![false; labels];
    let mut open: QuaternaryHeap<Reverse<(u32, u32)>> = QuaternaryHeap::new();
    spill[OCEAN as usize] = f32::NEG_INFINITY;
    open.push(Reverse((order_key(f32::NEG_INFINITY), OCEAN)));
    while let Some(Reverse((_, l))) = open.pop() {
        let l = l as usize;
        if done[l] {
            continue;
        }
        done[l] = true;
        for &(m, e) in &adj[start[l] as usize..start[l + 1] as usize] {
            let v = spill[l].max(e);
            if v < spill[m as usize] {
                spill[m as usize] = v;
                open.push(Reverse((order_key(v), m)));
            }
        }
    }
    spill
}

/// The steepest lower neighbour of the cell at `(x, y)` ([`NONE`] when none is lower):
/// drop over distance in f64, the first in [`D8`] order on a tie.
#[inline]
pub(super) fn steepest(level: &[f32], grid: &Grid, x: usize, y: usize) -> u32 {
    const DIST: [f64; 8] = [
        std::f64::consts::SQRT_2,
        1.0,
        std::f64::consts::SQRT_2,
        1.0,
        1.0,
        std::f64::consts::SQRT_2,
        1.0,
        std::f64::consts::SQRT_2,
    ];
    let i = y * grid.w + x;
    let zi = f64::from(level[i]);
    let mut best = (0.0f64, NONE);
    let mut consider = |k: usize, j: usize| {
        let drop = zi - f64::from(level[j]);
        if drop > 0.0 {
            let slope = drop / DIST[k];
            if slope > best.0 {
                best = (slope, j as u32);
            }
        }
    };
    if x > 0 && y > 0 && x + 1 < grid.w && y + 1 < grid.h {
        for (k, o) in grid.offsets.iter().enumerate() {
            consider(k, i.wrapping_add_signed(*o));
        }
    } else {
        for (k, &(dx, dy)) in D8.iter().enumerate() {
            let (nx, ny) = (x as isize + dx as isize, y as isize + dy as isize);
            if nx >= 0 && ny >= 0 && (nx as usize) < grid.w && (ny as usize) < grid.h {
                consider(k, ny as usize * grid.w + nx as usize);
            }
        }
    }
    best.1
}

/// Every cell's receiver over the filled `level` (see [`Flood::receiver`]): the steepest
/// lower neighbour, rows in parallel; then the flats, breadth first from their rims. Every
/// flat cell is reached: a flat whose every cell had only higher neighbours would be a pit,
/// and the flood fills pits.
fn receivers(level: &[f32], w: usize, h: usize) -> Vec<u32> {
    let n = level.len();
    let mut receiver = vec![NONE; n];
    if n == 0 {
        return receiver;
    }
    let grid = Grid::new(w, h);
    // A flat cell: off the map edge, nothing lower.
    let mut flat = vec![false; n];
    receiver
        .par_chunks_mut(w)
        .zip(flat.par_chunks_mut(w))
        .enumerate()
        .for_each(|(y, (row, flat))| {
            for (x, (r, f)) in row.iter_mut().zip(flat).enumerate() {
                *r = steepest(level, &grid, x, y);
                *f = *r == NONE && x > 0 && y > 0 && x + 1 < w && y + 1 < h;
            }
        });
    // On a flat's rim: the first neighbour of its level that drains.
    let rim: Vec<(u32, u32)> = (0..h)
        .into_par_iter()
        .flat_map_iter(|y| {
            let (flat, grid) = (&flat, &grid);
            (0..w).filter_map(move |x| {
                let i = y * w + x;
                if !flat[i] {
                    return None;
                }
                let (cells, count) = grid.around(x, y);
                cells[..count]
                    .iter()
                    .find(|&&j| !flat[j] && level[j] == level[i])
                    .map(|&j| (i as u32, j as u32))
            })
        })
        .collect();
    let mut queue = Vec::with_capacity(rim.len());
    for (i, j) in rim {
        receiver[i as usize] = j;
        queue.push(i);
    }
    let mut head = 0;
    while let Some(&c) = queue.get(head) {
        head += 1;
        let c = c as usize;
        let (cells, count) = grid.around(c % w, c / w);
        for &j in &cells[..count] {
            if flat[j] && receiver[j] == NONE && level[j] == level[c] {
                receiver[j] = c as u32;
                queue.push(j as u32);
            }
        }
    }
    receiver
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rough terrain with pits, ties and long flats after filling.
    fn terrain(w: usize, h: usize, seed: u64) -> Vec<f32> {
        let r = |i: u64| (crate::node::splitmix64(seed ^ crate::node::splitmix64(i)) % 1000) as f32;
        (0..w * h)
            .map(|i| {
                ((r(i as u64) + r(((i % w) / 5 + (i / w) / 5 * 1000) as u64 + 99)) / 60.0).round()
            })
            .collect()
    }

    /// The filled level by its definition, relaxed to a fixed point: the lowest, over the
    /// neighbours, of max(own height, neighbour's level), edges at their own height.
    fn reference(z: &[f32], w: usize, h: usize) -> Vec<f32> {
        let mut level: Vec<f32> = (0..w * h)
            .map(|i| {
                if is_edge(i, w, h) {
                    z[i]
                } else {
                    f32::INFINITY
                }
            })
            .collect();
        loop {
            let mut changed = false;
            for i in 0..w * h {
                let best = neighbours(i, w, h)
                    .map(|j| level[j])
                    .fold(f32::INFINITY, f32::min);
                let v = z[i].max(best);
                if v < level[i] {
                    level[i] = v;
                    changed = true;
                }
            }
            if !changed {
                return level;
            }
        }
    }

    /// The steepest lower neighbour by its definition (`NONE` when none is lower).
    fn grid_steepest(level: &[f32], w: usize, h: usize, i: usize) -> u32 {
        let (x, y) = ((i % w) as i64, (i / w) as i64);
        let mut best = (0.0f64, NONE);
        for (dx, dy) in D8 {
            let (nx, ny) = (x + i64::from(dx), y + i64::from(dy));
            if nx < 0 || ny < 0 || nx >= w as i64 || ny >= h as i64 {
                continue;
            }
            let j = (ny * w as i64 + nx) as usize;
            let d = if dx != 0 && dy != 0 { 2f64.sqrt() } else { 1.0 };
            let s = (f64::from(level[i]) - f64::from(level[j])) / d;
            if s > best.0 {
                best = (s, j as u32);
            }
        }
        best.1
    }

    #[test]
    fn every_strip_count_fills_like_the_definition() {
        for (seed, w, h) in [
            (1u64, 31usize, 29usize),
            (2, 40, 64),
            (3, 7, 50),
            (4, 1, 9),
            (5, 50, 2),
        ] {
            let z = terrain(w, h, seed);
            let want = reference(&z, w, h);
            for strips in [1, 2, 3, 5, 8, h] {
                let f = priority_flood_in(&z, w, h, strips);
                assert_eq!(f.level, want, "seed {seed}, {w}×{h}, {strips} strips");
            }
        }
    }

    #[test]
    fn receivers_are_the_steepest_and_flats_lead_level_to_a_cell_that_drains() {
        let (w, h) = (45, 38);
        let z = terrain(w, h, 7);
        let f = priority_flood_in(&z, w, h, 3);
        let mut flats = 0;
        for i in 0..w * h {
            let lower = neighbours(i, w, h).any(|j| f.level[j] < f.level[i]);
            if is_edge(i, w, h) || lower {
                let steepest = grid_steepest(&f.level, w, h, i);
                assert_eq!(f.receiver[i], steepest, "cell {i} drains");
                continue;
            }
            flats += 1;
            // Follow the parents: level all the way, to a draining cell within n steps.
            let mut c = i;
            for _ in 0..w * h {
                let p = f.receiver[c];
                if p == NONE || f.level[p as usize] < f.level[c] {
                    break;
                }
                let p = p as usize;
                assert!(
                    neighbours(c, w, h).any(|j| j == p),
                    "cell {c}: parent {p} not adjacent"
                );
                assert_eq!(f.level[p], f.level[c]);
                c = p;
            }
            let drains = is_edge(c, w, h) || neighbours(c, w, h).any(|j| f.level[j] < f.level[c]);
            assert!(drains, "flat cell {i} ends at {c}, which does not drain");
        }
        assert!(flats > 50, "the test terrain has flats ({flats})");
    }
}
