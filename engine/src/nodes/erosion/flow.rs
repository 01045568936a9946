//! Single-direction flow routing shared by the stream-power and Lim–Tan–Bhojan nodes:
//! jittered node positions, steepest-descent receivers (D4 and D8 row kernels), donor masks
//! and upstream walks of the receiver forest, and depression routing over the graph of pit
//! basins (Cordonnier et al. 2016's basin tree, seed 000 §2.3), whose lake levels equal a
//! priority flood's.

use crate::node::splitmix64;
use rayon::prelude::*;
use std::sync::atomic::{AtomicU32, Ordering};

/// "No receiver": the cell is a root (outlet, or a pit before depression routing).
pub const NONE: u32 = u32::MAX;

/// Scratch for each thread of the pool that outlives one parallel loop (rayon's
/// `for_each_init` makes a fresh one for every split of the work — dozens per loop — and
/// big fresh allocations are page faults). A thread only ever takes its own, so the locks
/// are never contended.
pub struct PerThread<T>(Vec<std::sync::Mutex<T>>);

impl<T: Default> Default for PerThread<T> {
    fn default() -> Self {
        Self(
            (0..rayon::current_num_threads().max(1))
                .map(|_| std::sync::Mutex::default())
                .collect(),
        )
    }
}

impl<T> PerThread<T> {
    /// The calling thread's scratch.
    pub fn get(&self) -> std::sync::MutexGuard<'_, T> {
        let i = rayon::current_thread_index().unwrap_or(0) % self.0.len();
        self.0[i]
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Wall time of the phases of the last call, for the probes (`spl_probe`).
#[derive(Default, Clone, Debug)]
pub struct Laps {
    last: Option<std::time::Instant>,
    /// Each phase's name and milliseconds.
    pub laps: Vec<(&'static str, f64)>,
}

impl Laps {
    /// Forget the last call's laps and start timing.
    pub fn start(&mut self) {
        self.laps.clear();
        self.last = Some(std::time::Instant::now());
    }

    /// The phase `name` ends now.
    pub fn lap(&mut self, name: &'static str) {
        let now = std::time::Instant::now();
        if let Some(last) = self.last.replace(now) {
            self.laps.push((name, (now - last).as_secs_f64() * 1e3));
        }
    }
}

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
/// distance) and the distance to it, or `(NONE, 1)` when no neighbour is lower: the
/// generic search, the reference the vectorised kernels are tested against.
#[cfg(test)]
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

/// Receivers and distances of every cell by the generic search over `neighbours` (the
/// reference the kernels are tested against).
#[cfg(test)]
fn generic_receivers(
    z: &[f32],
    w: usize,
    h: usize,
    off: &[[f32; 2]],
    neighbours: &[(i32, i32)],
) -> (Vec<u32>, Vec<f32>) {
    (0..w * h)
        .map(|i| steepest(z, w, h, off, neighbours, i % w, i / w))
        .unzip()
}

/// Cell `i` drains where the generic search says (`want`), or, where rounding of the two
/// ways of computing a distance makes the choices part, along a slope equal to 1e-5.
#[cfg(test)]
fn assert_same_choice(z: &[f32], i: usize, got: (u32, f32), want: (u32, f32), what: &str) {
    if got.0 == want.0 {
        assert!((got.1 - want.1).abs() <= 1e-5 * want.1, "{what} cell {i}");
        return;
    }
    assert!(got.0 != NONE && want.0 != NONE, "{what} cell {i}");
    let s1 = (z[i] - z[got.0 as usize]) / got.1;
    let s2 = (z[i] - z[want.0 as usize]) / want.1;
    assert!(
        (s1 - s2).abs() <= 1e-5 * s2,
        "{what} cell {i}: {s1} vs {s2}"
    );
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
        Self {
            right: neighbour_distances(off, w, h, 1, 0),
            down: neighbour_distances(off, w, h, 0, 1),
        }
    }
}

/// Distance from every node to its neighbour's at `(dx, dy)` (1 where that lies off the map).
fn neighbour_distances(off: &[[f32; 2]], w: usize, h: usize, dx: i32, dy: i32) -> Vec<f32> {
    (0..w * h)
        .into_par_iter()
        .map(|i| {
            let (x, y) = ((i % w) as i32 + dx, (i / w) as i32 + dy);
            if x >= 0 && y >= 0 && (x as usize) < w && (y as usize) < h {
                node_dist(off, i, y as usize * w + x as usize, dx, dy)
            } else {
                1.0
            }
        })
        .collect()
}

/// One candidate of the steepest-descent choice, branch-free (which neighbour is steepest is
/// data, not a pattern): taken when its drop over distance beats the best so far's,
/// `drop/d > best drop/best d`, compared as `drop·best d > best drop·d` (distances are
/// positive) so that no candidate costs a division. The best drop starts at 0 (distance 1),
/// so only a true drop is ever taken.
macro_rules! steeper {
    ($zi:expr, $zj:expr, $d:expr, $j:expr, $best:ident, $drop:ident, $dist:ident) => {{
        let (drop, d) = ($zi - $zj, $d);
        let better = drop * $dist > $drop * d;
        $drop = if better { drop } else { $drop };
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
        let (mut best, mut drop, mut dist) = (NONE, 0.0f32, 1.0f32);
        steeper!(zi, zu[x], du[x], up_j + x as u32, best, drop, dist);
        if x > 0 {
            steeper!(
                zi,
                zc[x - 1],
                right[x - 1],
                (row + x - 1) as u32,
                best,
                drop,
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
                drop,
                dist
            );
        }
        steeper!(zi, zd[x], down[x], down_j + x as u32, best, drop, dist);
        let _ = drop;
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
        let (mut best, mut drop, mut dist) = (NONE, 0.0f32, 1.0f32);
        steeper!(
            zi,
            zu[k],
            du[k],
            up_j.wrapping_add(1 + k as u32),
            best,
            drop,
            dist
        );
        steeper!(zi, zl[k], rl[k], x - 1, best, drop, dist);
        steeper!(zi, zr[k], rm[k], x + 1, best, drop, dist);
        steeper!(zi, zd[k], dd[k], down_j + 1 + k as u32, best, drop, dist);
        let _ = drop;
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

/// The float whose [`order_key`] is `k`.
#[inline]
#[must_use]
pub fn from_order_key(k: u32) -> f32 {
    f32::from_bits(if k & 0x8000_0000 != 0 {
        k & 0x7FFF_FFFF
    } else {
        !k
    })
}

/// Index steps of [`D8`]'s offsets on a row-major grid `w` wide.
#[must_use]
pub fn d8_steps(w: usize) -> [isize; 8] {
    D8.map(|(dx, dy)| dy as isize * w as isize + dx as isize)
}

/// Distances between neighbouring nodes for [`receivers_d8`], per node `i` towards the node
/// to its right, below, below-right and below-left (1 where that neighbour lies off the
/// map). A distance is the same both ways, so these four cover all eight directions. The
/// node positions never move, so this is computed once. With every node at its cell's
/// centre (no jitter) the distances are 1 and √2 everywhere: each list is then one row of
/// that constant, read again for every row — 16 bytes per cell less to stream through
/// memory at every search.
pub struct D8Distances {
    right: Vec<f32>,
    down: Vec<f32>,
    down_right: Vec<f32>,
    down_left: Vec<f32>,
    uniform: bool,
}

impl D8Distances {
    #[must_use]
    pub fn new(off: &[[f32; 2]], w: usize, h: usize) -> Self {
        if off.iter().all(|o| *o == [0.5, 0.5]) {
            let row = |d: f32| vec![d; w];
            return Self {
                right: row(1.0),
                down: row(1.0),
                down_right: row(std::f32::consts::SQRT_2),
                down_left: row(std::f32::consts::SQRT_2),
                uniform: true,
            };
        }
        Self {
            right: neighbour_distances(off, w, h, 1, 0),
            down: neighbour_distances(off, w, h, 0, 1),
            down_right: neighbour_distances(off, w, h, 1, 1),
            down_left: neighbour_distances(off, w, h, -1, 1),
            uniform: false,
        }
    }

    /// The `n` distances of list `v` from cell `at` on (inside one row).
    fn run<'a>(&self, v: &'a [f32], at: usize, n: usize) -> &'a [f32] {
        if self.uniform {
            &v[..n]
        } else {
            &v[at..at + n]
        }
    }

    /// The distance of list `v` at cell `i`.
    fn at(&self, v: &[f32], i: usize) -> f32 {
        v[if self.uniform { 0 } else { i }]
    }
}

impl D8Distances {
    /// Whether every node is at its cell's centre: the distances are then 1 to a side
    /// neighbour and √2 to a diagonal one, and [`Depressions::route`] leaves them unwritten.
    #[must_use]
    pub fn uniform(&self) -> bool {
        self.uniform
    }

    /// Distance from cell `i`'s node to its receiver `r`'s (1 for a root, `NONE`).
    #[must_use]
    pub fn to_receiver(&self, w: usize, i: usize, r: u32) -> f32 {
        if r == NONE {
            1.0
        } else {
            self.between(w, i, r as usize)
        }
    }

    /// Distance between the nodes of neighbouring cells `i` and `j` (the step between
    /// neighbours tells the direction; no division by the row length).
    #[must_use]
    pub fn between(&self, w: usize, i: usize, j: usize) -> f32 {
        let (a, b) = (i.min(j), i.max(j));
        let s = b - a;
        if s == 1 {
            self.at(&self.right, a)
        } else if s == w {
            self.at(&self.down, a)
        } else if s == w + 1 {
            self.at(&self.down_right, a)
        } else if s + 1 == w {
            self.at(&self.down_left, a)
        } else {
            1.0
        }
    }
}

/// Receivers of the inner cells of inner row `y` among the eight neighbours ([`D8`]'s order,
/// which breaks ties): every neighbour exists, so the whole row is one branch-free loop
/// over equal-length slices.
#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512vl+avx2+fma+sse4.1",
    "x86_64+avx2+fma+sse4.1"
))]
fn receivers_d8_row(
    z: &[f32],
    w: usize,
    d8: &D8Distances,
    y: usize,
    rrow: &mut [u32],
    drow: &mut [f32],
) {
    let n = w - 2;
    let (up, row, dn) = (y * w - w, y * w, y * w + w);
    macro_rules! s {
        ($v:expr, $at:expr) => {
            &$v[$at..$at + n]
        };
    }
    let (zul, zu, zur) = (s!(z, up), s!(z, up + 1), s!(z, up + 2));
    let (zl, zc, zr) = (s!(z, row), s!(z, row + 1), s!(z, row + 2));
    let (zdl, zd, zdr) = (s!(z, dn), s!(z, dn + 1), s!(z, dn + 2));
    let (dul, du, dur) = (
        d8.run(&d8.down_right, up, n),
        d8.run(&d8.down, up + 1, n),
        d8.run(&d8.down_left, up + 2, n),
    );
    let (dl, dr) = (d8.run(&d8.right, row, n), d8.run(&d8.right, row + 1, n));
    let (ddl, dd, ddr) = (
        d8.run(&d8.down_left, row + 1, n),
        d8.run(&d8.down, row + 1, n),
        d8.run(&d8.down_right, row + 1, n),
    );
    let (ro, dout) = (&mut rrow[1..=n], &mut drow[1..=n]);
    let (up, row, dn) = (up as u32, row as u32, dn as u32);
    for k in 0..n {
        let (zi, kk) = (zc[k], k as u32);
        let (mut best, mut drop, mut dist) = (NONE, 0.0f32, 1.0f32);
        steeper!(zi, zul[k], dul[k], up + kk, best, drop, dist);
        steeper!(zi, zu[k], du[k], up + kk + 1, best, drop, dist);
        steeper!(zi, zur[k], dur[k], up + kk + 2, best, drop, dist);
        steeper!(zi, zl[k], dl[k], row + kk, best, drop, dist);
        steeper!(zi, zr[k], dr[k], row + kk + 2, best, drop, dist);
        steeper!(zi, zdl[k], ddl[k], dn + kk, best, drop, dist);
        steeper!(zi, zd[k], dd[k], dn + kk + 1, best, drop, dist);
        steeper!(zi, zdr[k], ddr[k], dn + kk + 2, best, drop, dist);
        let _ = drop;
        ro[k] = best;
        dout[k] = dist;
    }
}

/// Steepest-descent receivers over [`D8`] with the map border as the outlets: border cells
/// and inner cells with no lower neighbour (pits and flats) get `NONE`; `dist` is the
/// distance to each receiver's node (1 for roots).
pub fn receivers_d8(
    z: &[f32],
    w: usize,
    h: usize,
    d8: &D8Distances,
    rcv: &mut [u32],
    dist: &mut [f32],
) {
    receivers_d8_rows(z, w, h, d8, rcv, dist, false, |_, _| ());
}

/// [`receivers_d8`] row by row, then `then(y, row)` on each row's receivers; with
/// `skip_uniform` and every node at its cell's centre, `dist` is left as it is (the
/// distances are then 1 or √2 by direction, [`D8Distances::to_receiver`]): each row's go to
/// a scratch row of the task instead, so the search writes 4 bytes per cell less to memory.
#[expect(clippy::too_many_arguments)]
fn receivers_d8_rows<T: Send>(
    z: &[f32],
    w: usize,
    h: usize,
    d8: &D8Distances,
    rcv: &mut [u32],
    dist: &mut [f32],
    skip_uniform: bool,
    then: impl Fn(usize, &[u32]) -> T + Sync + Send,
) -> Vec<T> {
    let skip = skip_uniform && d8.uniform;
    rcv.par_chunks_mut(w)
        .zip(dist.par_chunks_mut(w))
        .enumerate()
        .map_init(Vec::new, |scratch, (y, (rrow, drow))| {
            let drow = if skip {
                scratch.resize(w, 0.0);
                &mut scratch[..]
            } else {
                drow
            };
            receivers_d8_full_row(z, w, h, d8, y, rrow, drow);
            then(y, rrow)
        })
        .collect()
}

/// Row `y` of [`receivers_d8`].
fn receivers_d8_full_row(
    z: &[f32],
    w: usize,
    h: usize,
    d8: &D8Distances,
    y: usize,
    rrow: &mut [u32],
    drow: &mut [f32],
) {
    (rrow[0], drow[0]) = (NONE, 1.0);
    (rrow[w - 1], drow[w - 1]) = (NONE, 1.0);
    if y == 0 || y + 1 == h || w < 3 {
        rrow.fill(NONE);
        drow.fill(1.0);
    } else if d8.uniform {
        receivers_d8_row_uniform(z, w, y, rrow, drow);
    } else {
        receivers_d8_row(z, w, d8, y, rrow, drow);
    }
}

/// [`receivers_d8_row`] with every node at its cell's centre: the slope to a side
/// neighbour is its drop, to a diagonal one its drop times 1/√2, compared with the best
/// slope so far — no distances to read or multiply.
#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512vl+avx2+fma+sse4.1",
    "x86_64+avx2+fma+sse4.1"
))]
fn receivers_d8_row_uniform(z: &[f32], w: usize, y: usize, rrow: &mut [u32], drow: &mut [f32]) {
    use std::f32::consts::{FRAC_1_SQRT_2, SQRT_2};
    let n = w - 2;
    let (up, row, dn) = (y * w - w, y * w, y * w + w);
    let s = |at: usize| &z[at..at + n];
    let (zul, zu, zur) = (s(up), s(up + 1), s(up + 2));
    let (zl, zc, zr) = (s(row), s(row + 1), s(row + 2));
    let (zdl, zd, zdr) = (s(dn), s(dn + 1), s(dn + 2));
    let (ro, dout) = (&mut rrow[1..=n], &mut drow[1..=n]);
    let (up, row, dn) = (up as u32, row as u32, dn as u32);
    for k in 0..n {
        let (zi, kk) = (zc[k], k as u32);
        let (mut best, mut top, mut dist) = (NONE, 0.0f32, 1.0f32);
        // One candidate, at distance 1 (`side`) or √2 (`diag`): taken when its slope beats
        // the best so far (which starts at 0, so only a true drop is taken); branch-free.
        macro_rules! take {
            ($slope:expr, $j:expr, $d:expr) => {{
                let slope = $slope;
                let better = slope > top;
                top = if better { slope } else { top };
                best = if better { $j } else { best };
                dist = if better { $d } else { dist };
            }};
        }
        macro_rules! side {
            ($zj:expr, $j:expr) => {
                take!(zi - $zj, $j, 1.0)
            };
        }
        macro_rules! diag {
            ($zj:expr, $j:expr) => {
                take!((zi - $zj) * FRAC_1_SQRT_2, $j, SQRT_2)
            };
        }
        diag!(zul[k], up + kk);
        side!(zu[k], up + kk + 1);
        diag!(zur[k], up + kk + 2);
        side!(zl[k], row + kk);
        side!(zr[k], row + kk + 2);
        diag!(zdl[k], dn + kk);
        side!(zd[k], dn + kk + 1);
        diag!(zdr[k], dn + kk + 2);
        let _ = top;
        ro[k] = best;
        dout[k] = dist;
    }
}

/// Neighbour masks of row `y` of a grid of `u32` values: bit `d` of a cell's mask is set
/// when `bit(the neighbour's value, the cell's index, the cell's value)` holds for its
/// neighbour at [`D8`]`[d]` (neighbours off the map set none). Inlined into multiversioned
/// wrappers, so the inner rows' loop is vectorised for their targets.
#[expect(clippy::inline_always)]
#[inline(always)]
fn mask_d8_row(
    vals: &[u32],
    w: usize,
    y: usize,
    out: &mut [u8],
    bit: impl Fn(u32, u32, u32) -> bool,
) {
    let h = vals.len() / w;
    let row = y * w;
    let slow = |x: usize| {
        let i = row + x;
        let mut m = 0u8;
        for (d, &(dx, dy)) in D8.iter().enumerate() {
            let (nx, ny) = (x as i32 + dx, y as i32 + dy);
            if nx >= 0
                && ny >= 0
                && (nx as usize) < w
                && (ny as usize) < h
                && bit(vals[ny as usize * w + nx as usize], i as u32, vals[i])
            {
                m |= 1 << d;
            }
        }
        m
    };
    if y == 0 || y + 1 == h || w < 3 {
        for (x, o) in out.iter_mut().enumerate() {
            *o = slow(x);
        }
        return;
    }
    out[0] = slow(0);
    out[w - 1] = slow(w - 1);
    let n = w - 2;
    let s = |at: usize| &vals[at..at + n];
    let (up, dn) = (row - w, row + w);
    let nb = [
        s(up),
        s(up + 1),
        s(up + 2),
        s(row),
        s(row + 2),
        s(dn),
        s(dn + 1),
        s(dn + 2),
    ];
    let (own, o) = (s(row + 1), &mut out[1..=n]);
    for k in 0..n {
        let i = (row + 1 + k) as u32;
        let mut m = 0u8;
        for (d, v) in nb.iter().enumerate() {
            m |= u8::from(bit(v[k], i, own[k])) << d;
        }
        o[k] = m;
    }
}

/// Donor masks of row `y`: bit `d` of a cell's mask is set when its neighbour at [`D8`]`[d]`
/// drains to it.
#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512vl+avx2+fma+sse4.1",
    "x86_64+avx2+fma+sse4.1"
))]
fn donors_d8_row(rcv: &[u32], w: usize, y: usize, out: &mut [u8]) {
    mask_d8_row(rcv, w, y, out, |r, i, _| r == i);
}

/// Masks of row `y` of basin labels: bit `d` is set when the neighbour at [`D8`]`[d]` has a
/// higher label (`NONE`, outside every basin, is the highest), so each pair of adjacent
/// cells in different basins is seen once, from the lower label's side.
#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512vl+avx2+fma+sse4.1",
    "x86_64+avx2+fma+sse4.1"
))]
fn higher_d8_row(label: &[u32], w: usize, y: usize, out: &mut [u8]) {
    mask_d8_row(label, w, y, out, |l, _, own| l > own);
}

/// Donor masks of every cell (see [`donors_d8_row`]), in parallel over rows.
pub fn donors_d8(rcv: &[u32], w: usize, donors: &mut [u8]) {
    donors
        .par_chunks_mut(w)
        .enumerate()
        .for_each(|(y, row)| donors_d8_row(rcv, w, y, row));
}

/// The tree of `root` in breadth-first order (every cell after its receiver), walked
/// upstream over the donor masks, into `order` (its length is the tree's size afterwards):
/// the queue is `order` itself, and a cell's receiver lies well before it, so the walks over
/// `order` that follow have no chain of dependent cells back to back. With `PARENT`,
/// `parent` gets the position in `order` of each cell's receiver (the root's is its own,
/// 0). Branch-free over the donor bits for up to four donors (how many donors a cell has is
/// data, not a pattern): the first four donors' cells, by a table ([`DonorSteps`]), are
/// written past the queue's end, which moves past the donors only, into a four-slot window
/// of fixed size (no bounds checks inside). Without `PARENT` the tree is written from
/// `order[base]` on (what is before stays), with `PARENT` `base` is 0.
fn upstream_walk<const PARENT: bool>(
    donors: &[u8],
    steps: &DonorSteps,
    root: u32,
    (order, base): (&mut Vec<u32>, usize),
    parent: &mut Vec<u32>,
) {
    debug_assert!(!PARENT || base == 0);
    // Room for a window past `len`, growing by what this tree has taken so far (what is
    // before `base` is not zeroed again).
    let room = |v: &mut Vec<u32>, base: usize, len: usize| {
        if v.len() < len + 8 {
            v.resize(len + (len - base).max(8) + 8, 0);
        }
    };
    room(order, base, base);
    order[base] = root;
    if PARENT {
        room(parent, 0, 0);
        parent[0] = 0;
    }
    let (mut k, mut len) = (base, base + 1);
    while k < len {
        room(order, base, len);
        let c = order[k];
        let m = donors[c as usize] as usize;
        let count = steps.count[m] as usize;
        let window: &mut [u32; 4] = (&mut order[len..len + 4]).try_into().expect("4 slots");
        for (slot, &step) in window.iter_mut().zip(&steps.first[m]) {
            *slot = c.wrapping_add_signed(step);
        }
        if count > 4 {
            // Five donors or more: rare, so a branch that is rarely taken.
            let mut rest = m;
            for _ in 0..4 {
                rest &= rest - 1;
            }
            for slot in &mut order[len + 4..len + count] {
                *slot = c.wrapping_add_signed(steps.steps[rest.trailing_zeros() as usize]);
                rest &= rest - 1;
            }
        }
        if PARENT {
            room(parent, 0, len);
            parent[len..len + 4].fill(k as u32);
            if count > 4 {
                parent[len + 4..len + count].fill(k as u32);
            }
        }
        len += count;
        k += 1;
    }
    order.truncate(len);
    if PARENT {
        parent.truncate(len);
    }
}

/// The index steps to a cell's donors by donor mask, for [`upstream_walk`] on a grid `w`
/// wide: the steps of the first four donors (in [`D8`]'s order; 0 where there are fewer,
/// which writes the cell itself past the queue's end, harmless), the donor count, and
/// every direction's step for the rare fifth donor and beyond. Four writes per cell
/// instead of eight: most cells have one donor or none.
pub struct DonorSteps {
    first: [[i32; 4]; 256],
    count: [u8; 256],
    steps: [i32; 8],
}

impl DonorSteps {
    #[must_use]
    pub fn new(w: usize) -> Self {
        let steps = d8_steps(w).map(|s| s as i32);
        let mut first = [[0; 4]; 256];
        let mut count = [0; 256];
        for m in 0..256usize {
            let dirs = (0..8).filter(|d| m >> d & 1 == 1);
            for (slot, d) in first[m].iter_mut().zip(dirs) {
                *slot = steps[d];
            }
            count[m] = m.count_ones() as u8;
        }
        Self {
            first,
            count,
            steps,
        }
    }
}

/// The tree of `root` breadth first into `order`, and in `parent` the position in `order`
/// of each cell's receiver (the root's is its own, 0); see [`upstream_walk`].
pub fn upstream_bfs(
    donors: &[u8],
    steps: &DonorSteps,
    root: u32,
    order: &mut Vec<u32>,
    parent: &mut Vec<u32>,
) {
    upstream_walk::<true>(donors, steps, root, (order, 0), parent);
}

/// The cells of the tree of `root`, breadth first, into `cells` (see [`upstream_walk`]).
pub fn upstream_cells(donors: &[u8], steps: &DonorSteps, root: u32, cells: &mut Vec<u32>) {
    upstream_walk::<false>(donors, steps, root, (cells, 0), &mut Vec::new());
}

/// [`upstream_cells`] appended to what `cells` holds.
fn append_upstream_cells(donors: &[u8], steps: &DonorSteps, root: u32, cells: &mut Vec<u32>) {
    let base = cells.len();
    upstream_walk::<false>(donors, steps, root, (cells, base), &mut Vec::new());
}

/// The cheapest way out of basin `b` towards basin `to` (the outside of every pit's basin
/// is basin `nb`, after the last): the pass height `max(z_from, z_at)` over the adjacent pair
/// `from` (in `b`) – `at` (in `to`) where it is lowest, as an [`order_key`].
#[derive(Clone, Copy, Default)]
struct Pass {
    key: u32,
    b: u32,
    to: u32,
    from: u32,
    at: u32,
}

/// Scratch of [`lowest_passes`], one per thread.
#[derive(Default)]
struct PassScratch {
    /// Per neighbouring basin (the outside: entry `nb`), the lowest pass found so far as
    /// `key << 32 | q << 3 | d`: its height's [`order_key`], the place `q` of its cell in the
    /// basin's list and the direction `d` across. `u64::MAX` when none is found yet.
    best: Vec<u64>,
    /// The neighbouring basins in the order they were first found.
    touched: Vec<u32>,
}

impl PassScratch {
    fn reset(&mut self, nb: usize) {
        if self.best.len() != nb + 1 {
            self.best.clear();
            self.best.resize(nb + 1, u64::MAX);
        }
    }
}

/// The lowest pass from basin `b` (its `cells`) to each neighbour with a higher label (the
/// first found among equals), appended to `out` in the order the neighbours are first found. The
/// search has no branch on the heights (which are data, not a pattern): each candidate is a
/// 64-bit minimum whose low bits, the place of the cell in the list then the direction,
/// keep the first found among equal heights.
#[expect(clippy::too_many_arguments)]
fn lowest_passes(
    z: &[f32],
    label: &[u32],
    higher: &[u8],
    steps: &[isize; 8],
    nb: usize,
    s: &mut PassScratch,
    (b, cells): (u32, &[u32]),
    out: &mut Vec<Pass>,
) {
    // The low 32 bits hold `q << 3 | d`.
    assert!(cells.len() < 1 << 29, "basin of 2^29 cells or more");
    let mut len = 0;
    for (q, &u) in cells.iter().enumerate() {
        let m = higher[u as usize];
        if m == 0 {
            continue;
        }
        if s.touched.len() < len + 8 {
            s.touched.resize(2 * (len + 8), 0);
        }
        let zu = z[u as usize];
        let mut m = m;
        while m != 0 {
            let d = m.trailing_zeros() as usize;
            m &= m - 1;
            let v = (u as isize + steps[d]) as usize;
            let to = (label[v] as usize).min(nb);
            let key = u64::from(order_key(zu.max(z[v])));
            let e = &mut s.best[to];
            s.touched[len] = to as u32;
            len += usize::from(*e == u64::MAX);
            *e = (*e).min(key << 32 | (q as u64) << 3 | d as u64);
        }
    }
    for &to in &s.touched[..len] {
        let e = std::mem::replace(&mut s.best[to as usize], u64::MAX);
        let from = cells[(e as u32 >> 3) as usize];
        out.push(Pass {
            key: (e >> 32) as u32,
            b,
            to,
            from,
            at: (from as isize + steps[(e & 7) as usize]) as u32,
        });
    }
}

/// Basins per chunk at most: the basin walks and the pass search work a chunk per task
/// (each task takes its thread's scratch once). A chunk's lists are one allocation each,
/// not one per basin: lists kept from step to step per basin index each held on to the
/// largest basin that index ever had (15× the map's cells in all on `graphs/uplift.json`
/// at 2048² with diffusion), and the many small lists left the heap too fragmented to
/// give back.
const PASS_CHUNK: usize = 64;

/// The cells of a chunk of consecutive basins, each breadth first from its pit, one after
/// the other.
#[derive(Default)]
struct Chunk {
    cells: Vec<u32>,
    /// Where each basin's cells start in `cells`, then the end.
    start: Vec<u32>,
}

impl Chunk {
    fn basin(&self, j: usize) -> &[u32] {
        &self.cells[self.start[j] as usize..self.start[j + 1] as usize]
    }
}

/// Keeps a list's room for the next step, but not room it no longer needs.
fn trim<T>(v: &mut Vec<T>) {
    if v.capacity() > 4 * v.len() + 1024 {
        v.shrink_to(2 * v.len() + 256);
    }
}

/// Depression routing over the graph of pit basins (Cordonnier et al. 2016, as summarised
/// in seed 000 §2.3: basins joined at their lowest passes, spilled along a minimum spanning
/// tree). Every cell that drains by steepest descent to an inner pit belongs to that pit's
/// basin; every other cell descends to the map border. Basins are nodes, joined at the
/// lowest pass between each adjacent pair (and to the outside); each basin's spill level
/// is the lowest, over all ways out to the outside, of the highest pass on the way — the
/// highest pass on its way out along the minimum spanning tree ([`spill_levels`]). A cell's
/// filled height is the larger of its own and its basin's spill level: exactly the surface
/// a priority flood from the border (Barnes et al. 2014) gives, with work on the map
/// proportional to cells and passes, in parallel, and a sort and a tree search over passes
/// and basins only.
#[derive(Default)]
pub struct Depressions {
    /// Basin (index into `pits`) of every cell draining to a pit; `NONE` elsewhere.
    label: Vec<AtomicU32>,
    pits: Vec<u32>,
    /// Spill level of each basin.
    level: Vec<f32>,
    /// The pass each basin spills over: its cell on the basin's side and the one across.
    outlet: Vec<(u32, u32)>,
    /// Cells draining to pits in the last routing.
    pub region_cells: usize,
    rcv_z: Vec<u32>,
    dist_z: Vec<f32>,
    /// The carve's changes of receiver, `(cell, receiver)`, per chunk of basins.
    carved: Vec<Vec<(u32, u32)>>,
    /// Cells of the basins, in chunks of consecutive basins (see [`Chunk`]).
    basins: Vec<Chunk>,
    /// Lowest passes out of the basins of each chunk.
    passes: Vec<Vec<Pass>>,
    /// `label` read into plain values once the basins are known.
    plain: Vec<u32>,
    /// Each thread's map from a neighbouring basin to its place in a basin's passes.
    slots: PerThread<PassScratch>,
    /// Scratch of the spill-level search.
    spill: Spill,
    /// Wall time of the phases of the last routing.
    pub laps: Laps,
}

impl Depressions {
    /// Receivers that route across depressions, and the filled surface. Steepest descent on
    /// `z` first (border cells are the outlets), which finds the pits and their basins; the
    /// spill levels over the basin graph give `filled`; then steepest descent on `filled`,
    /// and where a cell has no lower neighbour on it (lakes, flat spills) the way out of its
    /// lake: the descent on `z` from the pass cell down to the pit, reversed, ending across
    /// the pass (fastscapelib's "carve"), and elsewhere in the lake the descent on `z`, which
    /// reaches that path or the pit. Along any path the filled height never rises and falls
    /// strictly on a step taken on `filled`; at a constant level the path stays in its
    /// basin until it crosses a pass, to a basin closer to the outside: a forest rooted at the
    /// border. Every receiver is one of the eight neighbours; `dist` gets the distance to
    /// each one's node, unless the nodes are all at their cells' centres
    /// ([`D8Distances::uniform`]: then it is not written, and
    /// [`D8Distances::to_receiver`] tells each distance). Between its phases it returns
    /// early when `cancelled()`; the routing is then incomplete and the step must be thrown
    /// away.
    #[expect(clippy::too_many_arguments)]
    pub fn route(
        &mut self,
        z: &[f32],
        w: usize,
        h: usize,
        d8: &D8Distances,
        donors: &mut [u8],
        rcv: &mut Vec<u32>,
        dist: &mut Vec<f32>,
        filled: &mut [f32],
        cancelled: &dyn Fn() -> bool,
    ) {
        let n = w * h;
        self.laps.start();
        // Receivers on the heights, and the pits (inner cells without one) row by row.
        let pits = receivers_d8_rows(z, w, h, d8, rcv, dist, true, |y, r| {
            if y == 0 || y + 1 == h {
                return Vec::new();
            }
            row_pits(r, y * w)
        });
        self.pits.clear();
        self.pits.extend(pits.into_iter().flatten());
        self.region_cells = 0;
        if self.pits.is_empty() {
            filled.par_iter_mut().zip(z).for_each(|(f, &z)| *f = z);
            return;
        }
        if cancelled() {
            return;
        }
        self.laps.lap("receivers, pits");
        // Basins: every pit's tree upstream on the heights' receivers.
        donors_d8(rcv, w, donors);
        if self.label.len() == n {
            self.label
                .par_iter()
                .for_each(|l| l.store(NONE, Ordering::Relaxed));
        } else {
            self.label = (0..n).map(|_| AtomicU32::new(NONE)).collect();
        }
        let (steps, walk_steps) = (d8_steps(w), DonorSteps::new(w));
        let label = &self.label;
        // Each basin's cells, a chunk of basins per task (fewer basins, smaller chunks, so
        // that a few big basins still spread over the threads; the chunking never changes
        // a result).
        let nb = self.pits.len();
        let per = (nb / 32).clamp(1, PASS_CHUNK);
        self.basins.resize_with(nb.div_ceil(per), Chunk::default);
        let donors_now = &*donors;
        self.basins
            .par_iter_mut()
            .zip(self.pits.par_chunks(per))
            .enumerate()
            .for_each(|(c, (chunk, pits))| {
                chunk.cells.clear();
                chunk.start.clear();
                for (j, &p) in pits.iter().enumerate() {
                    let at = chunk.cells.len();
                    chunk.start.push(at as u32);
                    append_upstream_cells(donors_now, &walk_steps, p, &mut chunk.cells);
                    let b = (c * per + j) as u32;
                    for &x in &chunk.cells[at..] {
                        label[x as usize].store(b, Ordering::Relaxed);
                    }
                }
                chunk.start.push(chunk.cells.len() as u32);
                trim(&mut chunk.cells);
            });
        self.laps.lap("basins");
        let basins = &self.basins;
        self.region_cells = basins.iter().map(|c| c.cells.len()).sum();
        if cancelled() {
            return;
        }
        // Labels as plain values, and for every basin cell the neighbours with a higher
        // label (another basin, or outside all of them: NONE), in the donor masks' place.
        self.plain.resize(n, NONE);
        self.plain
            .par_iter_mut()
            .zip(label.par_iter())
            .for_each(|(p, l)| *p = l.load(Ordering::Relaxed));
        let plain = &self.plain;
        donors
            .par_chunks_mut(w)
            .enumerate()
            .for_each(|(y, row)| higher_d8_row(plain, w, y, row));
        self.laps.lap("labels, masks");
        let higher = &*donors;
        // The lowest pass from each basin to each neighbour with a higher label, so every
        // pair of adjacent basins is joined once. Basin cells are inner cells (border cells
        // are outlets), so all eight neighbours exist.
        self.passes.resize_with(basins.len(), Vec::new);
        let slots = &self.slots;
        self.passes
            .par_iter_mut()
            .zip(basins.par_iter())
            .enumerate()
            .for_each(|(c, (out, chunk))| {
                let mut slot = slots.get();
                slot.reset(nb);
                out.clear();
                for j in 0..chunk.start.len() - 1 {
                    let basin = ((c * per + j) as u32, chunk.basin(j));
                    lowest_passes(z, plain, higher, &steps, nb, &mut slot, basin, out);
                }
                trim(out);
            });
        self.laps.lap("passes");
        if cancelled() {
            return;
        }
        spill_levels(
            nb,
            &self.passes,
            &mut self.level,
            &mut self.outlet,
            &mut self.spill,
            &mut self.laps,
        );
        // Filled surface, then the receivers on it.
        let (level, plain) = (&self.level, &self.plain);
        filled
            .par_iter_mut()
            .zip(z.par_iter().zip(plain))
            .for_each(|(f, (&zi, &b))| {
                *f = if b == NONE {
                    zi
                } else {
                    zi.max(level[b as usize])
                };
            });
        std::mem::swap(rcv, &mut self.rcv_z);
        std::mem::swap(dist, &mut self.dist_z);
        rcv.resize(n, NONE);
        dist.resize(n, 1.0);
        receivers_d8_rows(filled, w, h, d8, rcv, dist, true, |_, _| ());
        self.laps.lap("filled, receivers");
        // The way out of each lake (fastscapelib's "carve"): the descent from the pass cell
        // to the pit, reversed, so the outflow crosses the lake to the pass and over it. Each
        // way lies in its own basin, so the ways are walked in parallel (a walk is a chain
        // of dependent loads), each chunk of basins listing its changes, which are then
        // made in order.
        let (rcv_z, now) = (&self.rcv_z, &*rcv);
        let per = self.outlet.len().div_ceil(64).max(1);
        self.carved
            .resize_with(self.outlet.len().div_ceil(per), Vec::new);
        self.carved
            .par_iter_mut()
            .zip(self.outlet.par_chunks(per))
            .for_each(|(list, outlets)| {
                list.clear();
                for &(inside, across) in outlets {
                    if inside == NONE {
                        // A basin the search never reached (the map is connected, so none
                        // is; with heights that are not numbers it could be): its cells keep
                        // no receiver and are left as they are.
                        continue;
                    }
                    let (mut c, mut to) = (inside as usize, across);
                    loop {
                        if now[c] == NONE {
                            list.push((c as u32, to));
                        }
                        let next = rcv_z[c];
                        if next == NONE {
                            break;
                        }
                        (c, to) = (next as usize, c as u32);
                    }
                }
                trim(list);
            });
        for &(c, to) in self.carved.iter().flatten() {
            rcv[c as usize] = to;
            if !d8.uniform {
                dist[c as usize] = d8.between(w, c as usize, to as usize);
            }
        }
        self.laps.lap("carve");
        // Elsewhere in the lakes and on flat spills: the descent on the heights.
        let (dist_z, uniform) = (&self.dist_z, d8.uniform);
        rcv.par_chunks_mut(w)
            .zip(dist.par_chunks_mut(w))
            .enumerate()
            .for_each(|(y, (r, d))| {
                let row = y * w..y * w + w;
                let (b, rz) = (&plain[row.clone()], &rcv_z[row.clone()]);
                lake_row(r, b, rz, (!uniform).then(|| (d, &dist_z[row])));
            });
        self.laps.lap("lakes");
    }
}

/// The inner cells of a row of receivers `r` (cells `at…`) that have none: the row's pits.
/// Counted first (vectorised; most rows have few or none), then listed without a branch
/// on which cells they are (that is data, not a pattern).
fn row_pits(r: &[u32], at: usize) -> Vec<u32> {
    let inner = &r[1..r.len().saturating_sub(1).max(1)];
    let count = inner.iter().filter(|&&v| v == NONE).count();
    if count == 0 {
        return Vec::new();
    }
    let mut pits = vec![0u32; count + 1];
    let mut len = 0;
    for (x, &v) in inner.iter().enumerate() {
        pits[len] = (at + 1 + x) as u32;
        len += usize::from(v == NONE);
    }
    pits.truncate(count);
    pits
}

/// A row of [`Depressions::route`]'s last phase: where a basin cell (label `b` not `NONE`)
/// still has no receiver `r`, the descent on the heights, `rz` (and its distance, when the
/// distances are kept). Branch-free selects (lakes are data, not a pattern), vectorised.
#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512vl+avx2+fma+sse4.1",
    "x86_64+avx2+fma+sse4.1"
))]
#[expect(clippy::needless_bitwise_bool)] // `&`, not `&&`: no branch between the flags.
fn lake_row(r: &mut [u32], b: &[u32], rz: &[u32], dist: Option<(&mut [f32], &[f32])>) {
    let n = r.len();
    let (b, rz) = (&b[..n], &rz[..n]);
    match dist {
        None => {
            for x in 0..n {
                let flat = (r[x] == NONE) & (b[x] != NONE);
                r[x] = if flat { rz[x] } else { r[x] };
            }
        }
        Some((d, dz)) => {
            let (d, dz) = (&mut d[..n], &dz[..n]);
            for x in 0..n {
                let flat = (r[x] == NONE) & (b[x] != NONE);
                r[x] = if flat { rz[x] } else { r[x] };
                d[x] = if flat { dz[x] } else { d[x] };
            }
        }
    }
}

/// Scratch of [`spill_levels`], kept from step to step.
#[derive(Default)]
struct Spill {
    /// Every pass in order of height: the first `len` entries.
    sorted: Vec<Pass>,
    len: usize,
    /// The passes of the first and of the second half of the lists, each sorted.
    halves: [Vec<Pass>; 2],
    /// Union–find over basins and the outside (the last node): parent, and size of roots.
    parent: Vec<u32>,
    size: Vec<u32>,
    /// The minimum spanning tree's passes, then its adjacency (offsets into `adj`).
    tree: Vec<Pass>,
    start: Vec<u32>,
    adj: Vec<Link>,
    /// The search's queue: basin, the basin it was reached from, its level.
    queue: Vec<(u32, u32, f32)>,
}

/// A link of the spanning tree as seen from one of its basins: the basin across, the pass
/// height's key, and the pass's cells on the far basin's side and on this one's.
#[derive(Clone, Copy, Default)]
struct Link {
    to: u32,
    key: u32,
    inside: u32,
    across: u32,
}

impl Spill {
    /// The root of `x`'s set (halving the path on the way).
    fn find(&mut self, mut x: u32) -> u32 {
        while self.parent[x as usize] != x {
            let up = self.parent[self.parent[x as usize] as usize];
            self.parent[x as usize] = up;
            x = up;
        }
        x
    }
}

/// The passes of all `lists` in order of height, ties in the order they were listed (list
/// by list), into `s.sorted[..s.len]`: the lists split in two halves of about as many
/// passes, each half gathered and radix-sorted (stable) on its own thread, then merged —
/// the merge in two parts too, split where the first part's share of each half ends.
fn sort_passes(lists: &[Vec<Pass>], s: &mut Spill) {
    let len: usize = lists.iter().map(Vec::len).sum();
    let mut mid = 0;
    let mut first = 0;
    while mid < lists.len() && 2 * (first + lists[mid].len()) <= len {
        first += lists[mid].len();
        mid += 1;
    }
    let [a, b] = &mut s.halves;
    let sort_half = |half: &mut Vec<Pass>, lists: &[Vec<Pass>]| {
        half.clear();
        for list in lists {
            half.extend_from_slice(list);
        }
        radsort::sort_by_key(half, |j| j.key);
    };
    rayon::join(
        || sort_half(a, &lists[..mid]),
        || sort_half(b, &lists[mid..]),
    );
    if s.sorted.len() < len {
        s.sorted.resize(len, Pass::default());
    }
    // The first part of the merge takes `i` passes of `a` and `len / 2 - i` of `b`.
    let t = len / 2;
    let (mut lo, mut hi) = (t.saturating_sub(b.len()), t.min(a.len()));
    while lo < hi {
        let i = usize::midpoint(lo, hi);
        // Too few of `a` when a[i] still comes before b[t − i − 1] (ties: `a` first).
        if a[i].key <= b[t - i - 1].key {
            lo = i + 1;
        } else {
            hi = i;
        }
    }
    let i = lo;
    let (out1, out2) = s.sorted[..len].split_at_mut(t);
    rayon::join(
        || merge(&a[..i], &b[..t - i], out1),
        || merge(&a[i..], &b[t - i..], out2),
    );
    s.len = len;
    s.halves.iter_mut().for_each(trim);
    if s.sorted.len() > 4 * len + 1024 {
        s.sorted.truncate(2 * len + 256);
        s.sorted.shrink_to_fit();
    }
}

/// The stable merge of `a` and `b` (each in order of height; ties take `a` first) into
/// `out`, as long as both.
fn merge(a: &[Pass], b: &[Pass], out: &mut [Pass]) {
    let (mut i, mut j) = (0, 0);
    for o in out.iter_mut() {
        let take_b = i == a.len() || (j < b.len() && b[j].key < a[i].key);
        *o = if take_b { b[j] } else { a[i] };
        j += usize::from(take_b);
        i += usize::from(!take_b);
    }
}

/// Spill levels and outlets of the basins: each basin's level is the lowest, over all ways
/// out to the outside, of the highest pass on the way — the highest pass on its path in the
/// minimum spanning tree of the basin graph (Cordonnier et al. 2016), which Kruskal's
/// algorithm builds (passes in order of height by a radix sort, joined by a union–find;
/// ties in the order they were listed, basin by basin, so the tree does not depend on
/// timing). A search from the outside over the
/// tree then gives every basin its level and the pass it spills over, towards the outside:
/// `outlet[b]` = (its cell in `b`, the cell across). Basins not joined to the outside keep
/// an infinite level and no outlet. `passes` holds the passes of the `nb` basins basin by
/// basin, in lists of consecutive basins.
fn spill_levels(
    nb: usize,
    passes: &[Vec<Pass>],
    level: &mut Vec<f32>,
    outlet: &mut Vec<(u32, u32)>,
    s: &mut Spill,
    laps: &mut Laps,
) {
    let outside = nb as u32;
    sort_passes(passes, s);
    laps.lap("sort passes");
    s.parent.clear();
    s.parent.extend(0..=outside);
    s.size.clear();
    s.size.resize(nb + 1, 1);
    s.tree.clear();
    for k in 0..s.len {
        let j = s.sorted[k];
        let (rb, rt) = (s.find(j.b), s.find(j.to));
        if rb == rt {
            continue;
        }
        let (small, big) = if s.size[rb as usize] < s.size[rt as usize] {
            (rb, rt)
        } else {
            (rt, rb)
        };
        s.parent[small as usize] = big;
        s.size[big as usize] += s.size[small as usize];
        s.tree.push(j);
        if s.tree.len() == nb {
            break;
        }
    }
    laps.lap("spanning tree");
    // The tree's adjacency, each link oriented from the basin it is listed under, then a
    // search from the outside along it. A basin's links are its parent's (skipped) and its
    // children's, so no "seen" marks are needed; each queue entry carries its level.
    s.start.clear();
    s.start.resize(nb + 2, 0);
    for j in &s.tree {
        s.start[j.b as usize + 1] += 1;
        s.start[j.to as usize + 1] += 1;
    }
    for i in 0..=nb {
        s.start[i + 1] += s.start[i];
    }
    s.adj.clear();
    s.adj.resize(2 * s.tree.len(), Link::default());
    // `start[x]` is the end of x's entries once they are filled in, so shift by one first.
    s.start.copy_within(0..=nb, 1);
    for j in &s.tree {
        for (x, y, inside, across) in [(j.b, j.to, j.at, j.from), (j.to, j.b, j.from, j.at)] {
            let at = &mut s.start[x as usize + 1];
            s.adj[*at as usize] = Link {
                to: y,
                key: j.key,
                inside,
                across,
            };
            *at += 1;
        }
    }
    level.clear();
    level.resize(nb + 1, f32::INFINITY);
    level[nb] = f32::NEG_INFINITY;
    outlet.clear();
    outlet.resize(nb, (NONE, NONE));
    s.queue.clear();
    s.queue.push((outside, NONE, f32::NEG_INFINITY));
    let mut k = 0;
    while let Some(&(x, from, lx)) = s.queue.get(k) {
        k += 1;
        let (lo, hi) = (
            s.start[x as usize] as usize,
            s.start[x as usize + 1] as usize,
        );
        for l in &s.adj[lo..hi] {
            if l.to == from {
                continue;
            }
            let ly = lx.max(from_order_key(l.key));
            level[l.to as usize] = ly;
            outlet[l.to as usize] = (l.inside, l.across);
            s.queue.push((l.to, x, ly));
        }
    }
    level.truncate(nb);
    laps.lap("spill levels");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A breadth-first walk lists every donor, with its receiver's place, for every number of
    /// donors from none to eight (five and more take the walk's rare path): a cell with
    /// donors in the directions of mask `m`, each of them with one donor further out; walked
    /// again after a list's first entries, it leaves them alone.
    #[test]
    fn walks_list_every_donor_count() {
        let w = 9;
        let steps = DonorSteps::new(w);
        let dir = d8_steps(w);
        for m in 0..=255u8 {
            let mut donors = vec![0u8; w * w];
            let centre = 4 * w + 4;
            donors[centre] = m;
            for d in (0..8).filter(|d| m >> d & 1 == 1) {
                // The donor at direction d has its own donor one step further out.
                donors[(centre as isize + dir[d]) as usize] = 1 << d;
            }
            let (mut order, mut parent) = (Vec::new(), Vec::new());
            upstream_bfs(&donors, &steps, centre as u32, &mut order, &mut parent);
            let k = m.count_ones() as usize;
            assert_eq!(order.len(), 1 + 2 * k, "mask {m:08b}");
            for (p, &c) in order.iter().enumerate().skip(1) {
                let r = order[parent[p] as usize] as isize;
                let step = c as isize - r;
                let d = dir.iter().position(|&s| s == step).expect("a neighbour");
                assert!(
                    donors[r as usize] >> d & 1 == 1,
                    "mask {m:08b}: {c} drains to {r}"
                );
            }
            let mut cells = Vec::new();
            upstream_cells(&donors, &steps, centre as u32, &mut cells);
            assert_eq!(cells, order, "mask {m:08b}");
            // Appended after what a list holds, which stays as it was.
            let mut list = vec![7u32; usize::from(m)];
            append_upstream_cells(&donors, &steps, centre as u32, &mut list);
            assert!(
                list[..usize::from(m)].iter().all(|&c| c == 7),
                "mask {m:08b}"
            );
            assert_eq!(list[usize::from(m)..], order[..], "mask {m:08b}");
        }
    }

    /// A row's pits are its inner cells without a receiver, in order, at their map index;
    /// the end cells (the border) never are.
    #[test]
    fn row_pits_lists_the_inner_cells_without_receivers() {
        assert_eq!(row_pits(&[NONE, 5, NONE, 7, NONE, NONE], 60), vec![62, 64]);
        assert_eq!(row_pits(&[NONE, 3, 4, NONE], 0), Vec::<u32>::new());
        assert_eq!(row_pits(&[NONE, NONE], 0), Vec::<u32>::new());
        assert_eq!(row_pits(&[NONE], 0), Vec::<u32>::new());
        assert_eq!(row_pits(&[NONE, NONE, NONE], 9), vec![10]);
    }

    /// The passes of many lists come out as a stable sort of their concatenation would
    /// give them (ties in listing order), whatever the lists' sizes — empty, one, uneven.
    #[test]
    fn passes_sort_stably_across_lists() {
        let mut s = Spill::default();
        for (case, sizes) in [
            vec![],
            vec![0, 0],
            vec![1],
            vec![5, 0, 3],
            vec![1000, 1, 1, 1],
            vec![17; 40],
            vec![0, 3000, 2, 999],
        ]
        .into_iter()
        .enumerate()
        {
            let mut at = 0u32;
            let lists: Vec<Vec<Pass>> = sizes
                .iter()
                .map(|&n| {
                    (0..n)
                        .map(|_| {
                            at += 1;
                            // Few distinct heights: many ties.
                            let key = (splitmix64(u64::from(at) ^ case as u64) % 23) as u32;
                            Pass {
                                key,
                                b: at,
                                ..Pass::default()
                            }
                        })
                        .collect()
                })
                .collect();
            let mut want: Vec<(u32, u32)> = lists.iter().flatten().map(|p| (p.key, p.b)).collect();
            want.sort_by_key(|&(key, _)| key);
            sort_passes(&lists, &mut s);
            let got: Vec<(u32, u32)> = s.sorted[..s.len].iter().map(|p| (p.key, p.b)).collect();
            assert_eq!(got, want, "case {case}");
        }
    }

    /// `order_key` orders floats as numbers (−0 and +0 apart, as their bits are) and
    /// `from_order_key` inverts it bit for bit.
    #[test]
    fn order_keys_sort_floats_and_invert() {
        let v = [
            f32::NEG_INFINITY,
            -1e30,
            -2.5,
            -1e-40,
            -0.0,
            0.0,
            1e-40,
            0.5,
            2000.25,
            f32::INFINITY,
        ];
        for pair in v.windows(2) {
            assert!(order_key(pair[0]) < order_key(pair[1]), "{pair:?}");
        }
        for x in v {
            assert_eq!(from_order_key(order_key(x)).to_bits(), x.to_bits());
        }
    }

    /// The vectorised D8 kernel picks the receivers the generic search picks at every inner
    /// cell (border cells are outlets), with the distance `between` gives; where rounding of
    /// the two ways of computing a distance makes them part, both slopes agree to 1e-5. The
    /// donor masks invert the receivers. With jittered nodes and with nodes at the centres.
    #[test]
    fn d8_kernel_matches_the_generic_search() {
        // Jittered nodes, and nodes at the cell centres (the kernel without distances).
        let sizes = [(37usize, 23usize), (3, 9), (64, 3), (128, 128)];
        for ((w, h), jitter) in sizes.into_iter().flat_map(|s| [(s, 1.0), (s, 0.0)]) {
            let n = w * h;
            let z: Vec<f32> = (0..n)
                .map(|i| (splitmix64(i as u64 ^ 0xD8) >> 40) as f32 / 1000.0)
                .collect();
            let off = jittered_offsets(9, n, jitter);
            let d8 = D8Distances::new(&off, w, h);
            assert_eq!(d8.uniform, jitter == 0.0);
            let (mut r1, mut d1) = (vec![0; n], vec![0.0; n]);
            receivers_d8(&z, w, h, &d8, &mut r1, &mut d1);
            let (r2, d2) = generic_receivers(&z, w, h, &off, &D8);
            for i in 0..n {
                let (x, y) = (i % w, i / w);
                if x == 0 || y == 0 || x + 1 == w || y + 1 == h {
                    assert_eq!(r1[i], NONE, "{w}×{h} border cell {i}");
                    continue;
                }
                if r1[i] != NONE {
                    assert_eq!(d1[i], d8.between(w, i, r1[i] as usize), "{w}×{h} cell {i}");
                }
                assert_same_choice(&z, i, (r1[i], d1[i]), (r2[i], d2[i]), &format!("{w}×{h}"));
            }
            let mut donors = vec![0u8; n];
            donors_d8(&r1, w, &mut donors);
            let steps = d8_steps(w);
            for (i, &m) in donors.iter().enumerate() {
                for (d, step) in steps.iter().enumerate() {
                    let j = i as isize + step;
                    let drains_here = (0..n as isize).contains(&j)
                        && r1[j as usize] == i as u32
                        && (j as usize % w).abs_diff(i % w) <= 1;
                    assert_eq!(m >> d & 1 == 1, drains_here, "{w}×{h} cell {i} dir {d}");
                }
            }
        }
    }

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
            receivers_d4(&z, w, &d4, &mut r1, &mut d1);
            let (r2, d2) = generic_receivers(&z, w, h, &off, &D4);
            for i in 0..n {
                assert_same_choice(&z, i, (r1[i], d1[i]), (r2[i], d2[i]), &format!("{w}×{h}"));
            }
        }
    }
}
