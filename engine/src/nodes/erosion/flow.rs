//! Single-direction flow routing shared by the stream-power and Lim–Tan–Bhojan nodes:
//! jittered node positions, steepest-descent receivers, a topological order of the receiver
//! forest, basin roots, and depression routing by a priority flood from the outlets (which
//! gives the lake levels of Cordonnier et al. 2016's basin tree, seed 000 §2.3).

use crate::node::splitmix64;
use rayon::prelude::*;

/// "No receiver": the cell is a root (outlet, or a pit before depression routing).
pub const NONE: u32 = u32::MAX;

/// Node positions inside their cells, in cell units: `(x + ox, y + oy)` with offsets drawn
/// uniformly in `[0.5 − jitter/2, 0.5 + jitter/2]` from `(seed, cell index)` (seed 000 §3.1
/// "Node Offset"; `jitter = 1` is the paper's full `[0, 1]`).
#[must_use]
pub fn jittered_offsets(seed: u64, n: usize, jitter: f32) -> Vec<[f32; 2]> {
    (0..n)
        .into_par_iter()
        .map(|i| {
            let r = splitmix64(seed ^ splitmix64(i as u64));
            let u = (r >> 40) as f32 / (1u64 << 24) as f32;
            let v = ((r >> 16) & 0xFF_FFFF) as f32 / (1u64 << 24) as f32;
            [0.5 + jitter * (u - 0.5), 0.5 + jitter * (v - 0.5)]
        })
        .collect()
}

/// A neighbourhood: offsets `(dx, dy)`.
pub const D8: [(i32, i32); 8] = [
    (-1, -1),
    (0, -1),
    (1, -1),
    (-1, 0),
    (1, 0),
    (-1, 1),
    (0, 1),
    (1, 1),
];
/// The von Neumann neighbourhood (seed 000 §3.2 drains to one of the four adjacent tiles).
pub const D4: [(i32, i32); 4] = [(0, -1), (-1, 0), (1, 0), (0, 1)];

/// Distance (cell units) between the nodes of cells `i` and `j` at offset `(dx, dy)`.
#[inline]
fn node_dist(off: &[[f32; 2]], i: usize, j: usize, dx: i32, dy: i32) -> f32 {
    let ddx = dx as f32 + off[j][0] - off[i][0];
    let ddy = dy as f32 + off[j][1] - off[i][1];
    (ddx * ddx + ddy * ddy).sqrt()
}

/// The neighbour of cell `(x, y)` with the steepest descent on `z` (drop per node
/// distance) and the distance to it, or `(NONE, 1)` when no neighbour is lower.
#[allow(clippy::inline_always)] // the per-cell body of two parallel passes
#[inline(always)]
fn steepest(
    z: &[f32],
    w: usize,
    h: usize,
    off: &[[f32; 2]],
    neighbours: &[(i32, i32)],
    x: usize,
    y: usize,
) -> (u32, f32) {
    let i = y * w + x;
    let (mut best, mut best_slope, mut best_d) = (NONE, 0.0f32, 1.0f32);
    for &(dx, dy) in neighbours {
        let (nx, ny) = (x as i32 + dx, y as i32 + dy);
        if nx < 0 || ny < 0 || nx >= w as i32 || ny >= h as i32 {
            continue;
        }
        let j = ny as usize * w + nx as usize;
        let drop = z[i] - z[j];
        if drop > 0.0 {
            let d = node_dist(off, i, j, dx, dy);
            if drop > best_slope * d {
                best_slope = drop / d;
                best = j as u32;
                best_d = d;
            }
        }
    }
    (best, best_d)
}

/// Fills every cell's receiver and distance with `f(x, y)`, in parallel over rows.
fn fill_receivers(
    w: usize,
    rcv: &mut [u32],
    dist: &mut [f32],
    f: impl Fn(usize, usize) -> (u32, f32) + Sync,
) {
    rcv.par_chunks_mut(w)
        .zip(dist.par_chunks_mut(w))
        .enumerate()
        .for_each(|(y, (rrow, drow))| {
            for (x, (r, d)) in rrow.iter_mut().zip(drow.iter_mut()).enumerate() {
                (*r, *d) = f(x, y);
            }
        });
}

/// Distances between neighbouring nodes for [`receivers_d4`]: `right[i]` from node `i` to
/// the node to its right, `down[i]` to the node below it (1 where that neighbour lies off the
/// map). A distance is the same both ways, so these two cover all four directions. The node
/// positions never move, so this is computed once.
pub struct D4Distances {
    pub right: Vec<f32>,
    pub down: Vec<f32>,
}

impl D4Distances {
    #[must_use]
    pub fn new(off: &[[f32; 2]], w: usize, h: usize) -> Self {
        let one = |i: usize, dx: usize, dy: usize| {
            let (x, y) = (i % w + dx, i / w + dy);
            if x < w && y < h {
                node_dist(off, i, y * w + x, dx as i32, dy as i32)
            } else {
                1.0
            }
        };
        Self {
            right: (0..w * h).into_par_iter().map(|i| one(i, 1, 0)).collect(),
            down: (0..w * h).into_par_iter().map(|i| one(i, 0, 1)).collect(),
        }
    }
}

/// One candidate of the steepest-descent choice, branch-free (which neighbour is steepest is
/// data, not a pattern): taken when its drop over distance beats the best so far. The best
/// slope starts at 0 and d > 0, so only a true drop is ever taken.
macro_rules! steeper {
    ($zi:expr, $zj:expr, $d:expr, $j:expr, $best:ident, $slope:ident, $dist:ident) => {{
        let (drop, d) = ($zi - $zj, $d);
        let better = drop > $slope * d;
        $slope = if better { drop / d } else { $slope };
        $best = if better { $j } else { $best };
        $dist = if better { d } else { $dist };
    }};
}

/// Receivers of row `y` among the four neighbours (up, left, right, down — [`D4`]'s order,
/// which breaks ties). `wall` is a row of +∞: the surface beyond the map's top and bottom
/// edges, which never drains anything.
#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512vl+avx2+fma+sse4.1",
    "x86_64+avx2+fma+sse4.1"
))]
#[allow(clippy::too_many_arguments)]
fn receivers_d4_row(
    z: &[f32],
    w: usize,
    d4: &D4Distances,
    wall: &[f32],
    y: usize,
    rrow: &mut [u32],
    drow: &mut [f32],
) {
    let h = z.len() / w;
    let row = y * w;
    let zc = &z[row..row + w];
    let (right, down) = (&d4.right[row..row + w], &d4.down[row..row + w]);
    let (zu, du) = if y > 0 {
        (&z[row - w..row], &d4.down[row - w..row])
    } else {
        (wall, wall)
    };
    let zd = if y + 1 < h {
        &z[row + w..row + 2 * w]
    } else {
        wall
    };
    let (up_j, down_j) = (row.wrapping_sub(w) as u32, (row + w) as u32);
    // One cell, with the left and right neighbours where they exist.
    let cell = |x: usize| {
        let zi = zc[x];
        let (mut best, mut slope, mut dist) = (NONE, 0.0f32, 1.0f32);
        steeper!(zi, zu[x], du[x], up_j + x as u32, best, slope, dist);
        if x > 0 {
            steeper!(
                zi,
                zc[x - 1],
                right[x - 1],
                (row + x - 1) as u32,
                best,
                slope,
                dist
            );
        }
        if x + 1 < w {
            steeper!(
                zi,
                zc[x + 1],
                right[x],
                (row + x + 1) as u32,
                best,
                slope,
                dist
            );
        }
        steeper!(zi, zd[x], down[x], down_j + x as u32, best, slope, dist);
        let _ = slope;
        (best, dist)
    };
    (rrow[0], drow[0]) = cell(0);
    if w < 3 {
        if w == 2 {
            (rrow[1], drow[1]) = cell(1);
        }
        return;
    }
    (rrow[w - 1], drow[w - 1]) = cell(w - 1);
    // The interior: equal-length slices, no bounds checks, no branches — vectorised.
    let n = w - 2;
    let (zl, zm, zr) = (&zc[..n], &zc[1..=n], &zc[2..]);
    let (rl, rm) = (&right[..n], &right[1..=n]);
    let (zu, du, zd, dd) = (&zu[1..=n], &du[1..=n], &zd[1..=n], &down[1..=n]);
    let (ro, dout) = (&mut rrow[1..=n], &mut drow[1..=n]);
    for k in 0..n {
        let (zi, x) = (zm[k], (row + 1 + k) as u32);
        let (mut best, mut slope, mut dist) = (NONE, 0.0f32, 1.0f32);
        steeper!(
            zi,
            zu[k],
            du[k],
            up_j.wrapping_add(1 + k as u32),
            best,
            slope,
            dist
        );
        steeper!(zi, zl[k], rl[k], x - 1, best, slope, dist);
        steeper!(zi, zr[k], rm[k], x + 1, best, slope, dist);
        steeper!(zi, zd[k], dd[k], down_j + 1 + k as u32, best, slope, dist);
        let _ = slope;
        ro[k] = best;
        dout[k] = dist;
    }
}

/// Steepest-descent receivers over [`D4`] with no outlets (a cell with no lower neighbour
/// is its own root: `NONE`), and the distance to each receiver's node.
pub fn receivers_d4(z: &[f32], w: usize, d4: &D4Distances, rcv: &mut [u32], dist: &mut [f32]) {
    let wall = vec![f32::INFINITY; w];
    rcv.par_chunks_mut(w)
        .zip(dist.par_chunks_mut(w))
        .enumerate()
        .for_each(|(y, (rrow, drow))| receivers_d4_row(z, w, d4, &wall, y, rrow, drow));
}

/// An exact monotone priority queue for `u32` keys (a radix heap): pops never go below the
/// last popped key, which holds for a priority flood. Amortised O(1) per operation.
struct RadixHeap {
    buckets: [Vec<(u32, u32)>; 33],
    last: u32,
    len: usize,
}

impl RadixHeap {
    fn new() -> Self {
        Self {
            buckets: std::array::from_fn(|_| Vec::new()),
            last: 0,
            len: 0,
        }
    }

    #[inline]
    fn bucket(&self, key: u32) -> usize {
        (32 - (key ^ self.last).leading_zeros()) as usize
    }

    #[inline]
    fn push(&mut self, key: u32, value: u32) {
        let b = self.bucket(key);
        self.buckets[b].push((key, value));
        self.len += 1;
    }

    fn pop(&mut self) -> Option<u32> {
        if self.len == 0 {
            return None;
        }
        if self.buckets[0].is_empty() {
            let b = (1..33).find(|&b| !self.buckets[b].is_empty())?;
            let items = std::mem::take(&mut self.buckets[b]);
            self.last = items.iter().map(|&(k, _)| k).min()?;
            for &(k, v) in &items {
                let nb = self.bucket(k);
                self.buckets[nb].push((k, v));
            }
            // Give the emptied bucket its allocation back.
            let mut items = items;
            items.clear();
            if self.buckets[b].is_empty() {
                self.buckets[b] = items;
            }
        }
        self.len -= 1;
        self.buckets[0].pop().map(|(_, v)| v)
    }
}

/// Order-preserving map of a float to an unsigned key.
#[inline]
#[must_use]
pub fn order_key(v: f32) -> u32 {
    let b = v.to_bits();
    if b & 0x8000_0000 != 0 {
        !b
    } else {
        b | 0x8000_0000
    }
}

/// Scratch and results of a priority flood.
#[derive(Default)]
pub struct Flood {
    /// Filled surface: each cell's height, or the spill level of the depression it lies in.
    pub filled: Vec<f32>,
    /// The cell each cell was reached from (towards the outlets); `NONE` for outlets.
    pub parent: Vec<u32>,
    /// Cells in the order the flood reached them: non-decreasing filled level, and every
    /// cell after its parent and after every neighbour that is lower on the filled surface,
    /// so it is a downstream-first order for `routed_receivers`.
    pub order: Vec<u32>,
    visited: Vec<bool>,
    lake_queue: std::collections::VecDeque<u32>,
}

impl Flood {
    /// Priority flood from the outlets (Barnes et al. 2014): cells are reached in order of
    /// their spill level, so a cell first reached from a higher level lies in a depression
    /// and gets that level. `parent` then routes every cell to an outlet, lakes included.
    pub fn run(
        &mut self,
        z: &[f32],
        w: usize,
        h: usize,
        neighbours: &[(i32, i32)],
        is_outlet: &(dyn Fn(usize) -> bool + Sync),
    ) {
        let n = z.len();
        self.filled.clear();
        self.filled.extend_from_slice(z);
        self.parent.clear();
        self.parent.resize(n, NONE);
        self.visited.clear();
        self.visited.resize(n, false);
        self.order.clear();
        let mut heap = RadixHeap::new();
        let mut outlets: Vec<u32> = (0..n as u32).filter(|&i| is_outlet(i as usize)).collect();
        outlets.sort_by(|&a, &b| z[a as usize].total_cmp(&z[b as usize]).then(a.cmp(&b)));
        for &i in &outlets {
            self.visited[i as usize] = true;
        }
        // The radix heap's floor starts at the lowest outlet.
        if let Some(&first) = outlets.first() {
            heap.last = order_key(z[first as usize]);
        }
        for &i in &outlets {
            heap.push(order_key(z[i as usize]), i);
        }
        loop {
            let c = match self.lake_queue.pop_front() {
                Some(c) => c,
                None => match heap.pop() {
                    Some(c) => c,
                    None => break,
                },
            } as usize;
            self.order.push(c as u32);
            let (x, y) = ((c % w) as i32, (c / w) as i32);
            let level = self.filled[c];
            for &(dx, dy) in neighbours {
                let (nx, ny) = (x + dx, y + dy);
                if nx < 0 || ny < 0 || nx >= w as i32 || ny >= h as i32 {
                    continue;
                }
                let j = ny as usize * w + nx as usize;
                if self.visited[j] {
                    continue;
                }
                self.visited[j] = true;
                self.parent[j] = c as u32;
                if z[j] <= level {
                    self.filled[j] = level;
                    self.lake_queue.push_back(j as u32);
                } else {
                    heap.push(order_key(z[j]), j as u32);
                }
            }
        }
    }
}

/// Receivers that route across depressions: the steepest descent on the filled surface
/// where some neighbour lies strictly lower on it, else the flood parent (inside lakes and
/// on flat spills). Along any path the pair (filled level, flood order) strictly decreases,
/// so the receivers form a forest rooted at the outlets.
pub fn routed_receivers(
    flood: &Flood,
    w: usize,
    h: usize,
    off: &[[f32; 2]],
    neighbours: &[(i32, i32)],
    rcv: &mut [u32],
    dist: &mut [f32],
) {
    let zf = &flood.filled;
    fill_receivers(w, rcv, dist, |x, y| {
        let i = y * w + x;
        let parent = flood.parent[i];
        if parent == NONE {
            return (NONE, 1.0);
        }
        match steepest(zf, w, h, off, neighbours, x, y) {
            (NONE, _) => {
                let p = parent as usize;
                let (dx, dy) = ((p % w) as i32 - x as i32, (p / w) as i32 - y as i32);
                (parent, node_dist(off, i, p, dx, dy))
            }
            found => found,
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The vectorised D4 kernel picks the receivers the generic search picks, at every cell
    /// of random maps with map edges and rows of one and two cells; where rounding of the
    /// two ways of computing a distance makes them part, both slopes agree to 1e-5.
    #[test]
    fn d4_kernel_matches_the_generic_search() {
        for (w, h) in [(37usize, 23usize), (1, 9), (2, 5), (64, 1), (128, 128)] {
            let n = w * h;
            let z: Vec<f32> = (0..n)
                .map(|i| (splitmix64(i as u64 ^ 0x4D) >> 40) as f32 / 1000.0)
                .collect();
            let off = jittered_offsets(5, n, 1.0);
            let d4 = D4Distances::new(&off, w, h);
            let (mut r1, mut d1) = (vec![0; n], vec![0.0; n]);
            let (mut r2, mut d2) = (vec![0; n], vec![0.0; n]);
            receivers_d4(&z, w, &d4, &mut r1, &mut d1);
            // The generic search (as stream power's routing uses it) as the reference.
            fill_receivers(w, &mut r2, &mut d2, |x, y| {
                steepest(&z, w, h, &off, &D4, x, y)
            });
            for i in 0..n {
                if r1[i] == r2[i] {
                    assert!((d1[i] - d2[i]).abs() <= 1e-5 * d2[i], "{w}×{h} cell {i}");
                    continue;
                }
                assert!(r1[i] != NONE && r2[i] != NONE, "{w}×{h} cell {i}");
                let s1 = (z[i] - z[r1[i] as usize]) / d1[i];
                let s2 = (z[i] - z[r2[i] as usize]) / d2[i];
                assert!(
                    (s1 - s2).abs() <= 1e-5 * s2,
                    "{w}×{h} cell {i}: {s1} vs {s2}"
                );
            }
        }
    }
}
