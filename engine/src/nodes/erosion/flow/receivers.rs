//! Steepest-descent receivers: distances between (jittered) nodes, the D4 and D8 row kernels
//! (AVX-512 / AVX2 clones, branch-free), and the generic search they are tested against.

use super::NONE;
use rayon::prelude::*;

/// Distance (cell units) between the nodes of cells `i` and `j` at offset `(dx, dy)`.
#[inline]
pub(super) fn node_dist(off: &[[f32; 2]], i: usize, j: usize, dx: i32, dy: i32) -> f32 {
    let ddx = dx as f32 + off[j][0] - off[i][0];
    let ddy = dy as f32 + off[j][1] - off[i][1];
    (ddx * ddx + ddy * ddy).sqrt()
}

/// The neighbour of cell `(x, y)` with the steepest descent on `z` (drop per node
/// distance) and the distance to it, or `(NONE, 1)` when no neighbour is lower: the
/// generic search, the reference the vectorised kernels are tested against.
#[cfg(test)]
pub(super) fn steepest(
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
pub(super) fn generic_receivers(
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
pub(super) fn assert_same_choice(
    z: &[f32],
    i: usize,
    got: (u32, f32),
    want: (u32, f32),
    what: &str,
) {
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
pub(super) fn neighbour_distances(
    off: &[[f32; 2]],
    w: usize,
    h: usize,
    dx: i32,
    dy: i32,
) -> Vec<f32> {
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
#[cfg_attr(
    not(any(feature = "simd-max-avx2", feature = "simd-portable")),
    multiversion::multiversion(targets(
        "x86_64+avx512f+avx512vl+avx2+fma+sse4.1",
        "x86_64+avx2+fma+sse4.1"
    ))
)]
#[cfg_attr(
    all(feature = "simd-max-avx2", not(feature = "simd-portable")),
    multiversion::multiversion(targets("x86_64+avx2+fma+sse4.1"))
)]
pub(super) fn receivers_d4_row(
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

/// Distances between neighbouring nodes for [`receivers_d8`], per node `i` towards the node
/// to its right, below, below-right and below-left (1 where that neighbour lies off the
/// map). A distance is the same both ways, so these four cover all eight directions. The
/// node positions never move, so this is computed once. With every node at its cell's
/// centre (no jitter) the distances are 1 and √2 everywhere: each list is then one row of
/// that constant, read again for every row — 16 bytes per cell less to stream through
/// memory at every search.
pub struct D8Distances {
    pub(super) right: Vec<f32>,
    pub(super) down: Vec<f32>,
    pub(super) down_right: Vec<f32>,
    pub(super) down_left: Vec<f32>,
    pub(super) uniform: bool,
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
    pub(super) fn run<'a>(&self, v: &'a [f32], at: usize, n: usize) -> &'a [f32] {
        if self.uniform {
            &v[..n]
        } else {
            &v[at..at + n]
        }
    }

    /// The distance of list `v` at cell `i`.
    pub(super) fn at(&self, v: &[f32], i: usize) -> f32 {
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
#[cfg_attr(
    not(any(feature = "simd-max-avx2", feature = "simd-portable")),
    multiversion::multiversion(targets(
        "x86_64+avx512f+avx512vl+avx2+fma+sse4.1",
        "x86_64+avx2+fma+sse4.1"
    ))
)]
#[cfg_attr(
    all(feature = "simd-max-avx2", not(feature = "simd-portable")),
    multiversion::multiversion(targets("x86_64+avx2+fma+sse4.1"))
)]
pub(super) fn receivers_d8_row(
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
pub(super) fn receivers_d8_rows<T: Send>(
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
pub(super) fn receivers_d8_full_row(
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
#[cfg_attr(
    not(any(feature = "simd-max-avx2", feature = "simd-portable")),
    multiversion::multiversion(targets(
        "x86_64+avx512f+avx512vl+avx2+fma+sse4.1",
        "x86_64+avx2+fma+sse4.1"
    ))
)]
#[cfg_attr(
    all(feature = "simd-max-avx2", not(feature = "simd-portable")),
    multiversion::multiversion(targets("x86_64+avx2+fma+sse4.1"))
)]
pub(super) fn receivers_d8_row_uniform(
    z: &[f32],
    w: usize,
    y: usize,
    rrow: &mut [u32],
    drow: &mut [f32],
) {
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
