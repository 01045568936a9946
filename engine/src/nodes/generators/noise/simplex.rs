//! 2D simplex noise on a skewed triangular lattice, one row at a time.
//!
//! Skew `F = (√3 − 1)/2`, unskew `G = (3 − √3)/6`; each of the three corners of the
//! containing triangle contributes `max(0, ½ − d²)⁴ · (g · d)` with a hashed gradient from
//! the same 8 directions as the Perlin basis; the sum is scaled by 70 into about [−1, 1].
//! Branch-free so that the row loop vectorises.

// The kernel bodies are `#[inline(always)]` on purpose: each multiversioned clone must
// compile its own copy of the body with that clone's target features.
#![allow(clippy::inline_always)]

use super::lattice::hash2;

use multiversion::multiversion;

const F2: f64 = 0.366_025_403_784_438_6; // (√3 − 1) / 2
const G2: f32 = 0.211_324_87; // (3 − √3) / 6

#[inline(always)]
fn grad_dot(h: u32, x: f32, y: f32) -> f32 {
    // Gradient from the top three bits: (±1, ±1), (±1, 0), (0, ±1).
    let k = h >> 29;
    let diag = k < 4;
    let gx = if diag {
        if k & 1 == 0 {
            1.0
        } else {
            -1.0
        }
    } else if k == 4 {
        1.0
    } else if k == 5 {
        -1.0
    } else {
        0.0
    };
    let gy = if diag {
        if k & 2 == 0 {
            1.0
        } else {
            -1.0
        }
    } else if k == 6 {
        1.0
    } else if k == 7 {
        -1.0
    } else {
        0.0
    };
    gx * x + gy * y
}

#[inline(always)]
fn corner(h: u32, x: f32, y: f32) -> f32 {
    let t = (0.5 - x * x - y * y).max(0.0);
    let t2 = t * t;
    t2 * t2 * grad_dot(h, x, y)
}

#[inline(always)]
fn body(xs: &[f64], y: f64, seed: u32, out: &mut [f32]) {
    for (o, &x) in out.iter_mut().zip(xs) {
        let s = (x + y) * F2;
        let i = (x + s).floor();
        let j = (y + s).floor();
        let t = (i + j) * f64::from(G2);
        let x0 = (x - (i - t)) as f32;
        let y0 = (y - (j - t)) as f32;
        let (ii, jj) = (i as i64 as i32, j as i64 as i32);
        let upper = x0 <= y0;
        let (i1, j1) = if upper { (0, 1) } else { (1, 0) };
        let x1 = x0 - i1 as f32 + G2;
        let y1 = y0 - j1 as f32 + G2;
        let x2 = x0 - 1.0 + 2.0 * G2;
        let y2 = y0 - 1.0 + 2.0 * G2;
        let n0 = corner(hash2(seed, ii, jj), x0, y0);
        let n1 = corner(
            hash2(seed, ii.wrapping_add(i1), jj.wrapping_add(j1)),
            x1,
            y1,
        );
        let n2 = corner(hash2(seed, ii.wrapping_add(1), jj.wrapping_add(1)), x2, y2);
        *o = 70.0 * (n0 + n1 + n2);
    }
}

/// Noise at lattice coordinates `(xs[i], y)` into `out`.
#[multiversion(targets("x86_64+avx512f+avx512vl+avx2+fma", "x86_64+avx2+fma"))]
pub fn row(xs: &[f64], y: f64, seed: u32, out: &mut [f32]) {
    body(xs, y, seed, out);
}

/// [`row`] without any target feature.
#[inline(never)]
pub fn row_portable(xs: &[f64], y: f64, seed: u32, out: &mut [f32]) {
    body(xs, y, seed, out);
}
