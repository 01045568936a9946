//! 2D simplex noise on a skewed triangular lattice, one row at a time.
//!
//! Skew `F = (√3 − 1)/2`, unskew `G = (3 − √3)/6`; each of the three corners of the
//! containing triangle contributes `max(0, ½ − d²)⁴ · (g · d)` with a hashed gradient from
//! the same 8 directions as the Perlin basis; the sum is scaled by 70 into about [−1, 1].
//! Branch-free so that the row loop vectorises; coordinates are f32 relative to a skewed
//! lattice origin per fixed band of x.

// The kernel bodies are `#[inline(always)]` on purpose: each multiversioned clone must
// compile its own copy of the body with that clone's target features.
#![expect(clippy::inline_always)]

const F2: f64 = 0.366_025_403_784_438_6; // (√3 − 1) / 2
const G2: f32 = 0.211_324_87; // (3 − √3) / 6

/// Corner hash: the coordinates' products with two large odd constants, mixed by one
/// multiply-xorshift (cheaper than the lattice bases' `hash2`; the gradient uses the top
/// three bits, which this mixes well).
#[inline(always)]
fn corner_hash(seed: u32, x: i32, y: i32) -> u32 {
    let h = (seed ^ (x as u32).wrapping_mul(0x9E37_79B1) ^ (y as u32).wrapping_mul(0x85EB_CA77))
        .wrapping_mul(0x27D4_EB2D);
    h ^ (h >> 15)
}

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

const G2_64: f64 = 0.211_324_865_405_187_1;

/// Width (lattice units) of the bands of x that share one lattice origin (keeps the local
/// f32 coordinates small). Bands are fixed in lattice space, so a sample's value depends
/// only on where it is, not on where the evaluated row starts (tiles match the whole map).
const BAND: f64 = 64.0;

#[inline(always)]
fn body(xs: &[f64], y: f64, seed: u32, out: &mut [f32]) {
    let mut start = 0;
    while start < xs.len() {
        let band = (xs[start] / BAND).floor();
        let end = start
            + xs[start..]
                .iter()
                .take_while(|&&x| (x / BAND).floor() == band)
                .count()
                .max(1);
        let (xc, oc) = (&xs[start..end], &mut out[start..end]);
        start = end;
        // The lattice is invariant under whole skewed cells: take the skewed cell (a, b) of
        // the band's left edge as origin and work in f32 relative to its unskewed corner.
        let x_band = band * BAND;
        let s0 = (x_band + y) * F2;
        let a = (x_band + s0).floor();
        let b = (y + s0).floor();
        let t0 = (a + b) * G2_64;
        let (ox, oy) = (a - t0, b - t0);
        let (ai, bi) = (a as i64 as i32, b as i64 as i32);
        let ly = (y - oy) as f32;
        for (o, &x) in oc.iter_mut().zip(xc) {
            let lx = (x - ox) as f32;
            let s = (lx + ly) * F2 as f32;
            let i = (lx + s).floor();
            let j = (ly + s).floor();
            let t = (i + j) * G2;
            let x0 = lx - (i - t);
            let y0 = ly - (j - t);
            let (ii, jj) = (ai.wrapping_add(i as i32), bi.wrapping_add(j as i32));
            // Middle corner: (1, 0) below the diagonal, (0, 1) above it.
            let lower = x0 > y0;
            let (i1, j1) = (i32::from(lower), i32::from(!lower));
            let x1 = x0 - i1 as f32 + G2;
            let y1 = y0 - j1 as f32 + G2;
            let x2 = x0 - 1.0 + 2.0 * G2;
            let y2 = y0 - 1.0 + 2.0 * G2;
            let n0 = corner(corner_hash(seed, ii, jj), x0, y0);
            let n1 = corner(
                corner_hash(seed, ii.wrapping_add(i1), jj.wrapping_add(j1)),
                x1,
                y1,
            );
            let n2 = corner(
                corner_hash(seed, ii.wrapping_add(1), jj.wrapping_add(1)),
                x2,
                y2,
            );
            *o = 70.0 * (n0 + n1 + n2);
        }
    }
}

/// Noise at lattice coordinates `(xs[i], y)` into `out`.
#[cfg_attr(
    not(any(feature = "simd-max-avx2", feature = "simd-portable")),
    multiversion::multiversion(targets("x86_64+avx512f+avx512vl+avx2+fma", "x86_64+avx2+fma"))
)]
#[cfg_attr(
    all(feature = "simd-max-avx2", not(feature = "simd-portable")),
    multiversion::multiversion(targets("x86_64+avx2+fma"))
)]
pub fn row(xs: &[f64], y: f64, seed: u32, out: &mut [f32]) {
    body(xs, y, seed, out);
}

/// [`row`] without any target feature.
#[inline(never)]
pub fn row_portable(xs: &[f64], y: f64, seed: u32, out: &mut [f32]) {
    body(xs, y, seed, out);
}
