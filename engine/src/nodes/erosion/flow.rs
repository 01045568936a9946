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

/// Steepest-descent receivers on `z` (`w × h`): each cell drains to the neighbour with the
/// largest positive drop per node distance, or is a root (`NONE`) when no neighbour is lower
/// or when `is_outlet(i)`. Writes the receiver and the distance to it (cell units).
#[allow(clippy::too_many_arguments)]
pub fn receivers(
    z: &[f32],
    w: usize,
    h: usize,
    off: &[[f32; 2]],
    neighbours: &[(i32, i32)],
    is_outlet: &(dyn Fn(usize) -> bool + Sync),
    rcv: &mut [u32],
    dist: &mut [f32],
) {
    fill_receivers(w, rcv, dist, |x, y| {
        if is_outlet(y * w + x) {
            (NONE, 1.0)
        } else {
            steepest(z, w, h, off, neighbours, x, y)
        }
    });
}

/// A topological order of the receiver forest, donors before receivers (Kahn's algorithm
/// from the sources), and each cell's number of donors. `order` and `count` are scratch
/// buffers reused between calls.
pub fn upstream_first(rcv: &[u32], order: &mut Vec<u32>, count: &mut Vec<u32>) {
    let n = rcv.len();
    count.clear();
    count.resize(n, 0);
    for &r in rcv {
        if r != NONE {
            count[r as usize] += 1;
        }
    }
    order.clear();
    order.extend((0..n as u32).filter(|&i| count[i as usize] == 0));
    let mut head = 0;
    while head < order.len() {
        let i = order[head] as usize;
        head += 1;
        let r = rcv[i];
        if r != NONE {
            let c = &mut count[r as usize];
            *c -= 1;
            if *c == 0 {
                order.push(r);
            }
        }
    }
}

/// Root of every cell's tree (its outlet or pit), following `order` downstream-first.
pub fn roots(rcv: &[u32], order: &[u32], root: &mut Vec<u32>) {
    root.clear();
    root.resize(rcv.len(), NONE);
    for &i in order.iter().rev() {
        let r = rcv[i as usize];
        root[i as usize] = if r == NONE { i } else { root[r as usize] };
    }
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
fn key(v: f32) -> u32 {
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
            heap.last = key(z[first as usize]);
        }
        for &i in &outlets {
            heap.push(key(z[i as usize]), i);
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
                    heap.push(key(z[j]), j as u32);
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
