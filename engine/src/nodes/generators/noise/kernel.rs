//! The per-sample kernels. One generic body, compiled for AVX-512, AVX2 and the baseline
//! ISA by `multiversion` and chosen at run time; `*_portable` runs the same body without
//! any target feature (used by tests to check that every version gives the same bits).

// The kernel bodies are `#[inline(always)]` on purpose: each multiversioned clone must
// compile its own copy of the body with that clone's target features.
#![allow(clippy::inline_always)]

use multiversion::multiversion;

/// Samples per chunk of a row.
pub const CHUNK: usize = 1024;
/// Length of the per-cell coefficient tables (a power of two, so `& MASK` proves every index in bounds).
pub const TABLE: usize = 2048;
const MASK: usize = TABLE - 1;

/// Per-cell polynomial coefficients for one chunk of one row.
pub struct Coeffs {
    pub k0: Box<[f32; TABLE]>,
    pub k1: Box<[f32; TABLE]>,
    pub k2: Box<[f32; TABLE]>,
    pub k3: Box<[f32; TABLE]>,
}

impl Coeffs {
    #[must_use]
    pub fn new() -> Self {
        Self {
            k0: Box::new([0.0; TABLE]),
            k1: Box::new([0.0; TABLE]),
            k2: Box::new([0.0; TABLE]),
            k3: Box::new([0.0; TABLE]),
        }
    }
}

impl Default for Coeffs {
    fn default() -> Self {
        Self::new()
    }
}

#[inline(always)]
fn body4(idx: &[u32], fx: &[f32], q: &[f32], k: &Coeffs, out: &mut [f32]) {
    let n = out.len().min(idx.len()).min(fx.len()).min(q.len());
    let (k0, k1, k2, k3) = (&*k.k0, &*k.k1, &*k.k2, &*k.k3);
    for i in 0..n {
        let j = idx[i] as usize & MASK;
        let t = fx[i];
        out[i] = k0[j] + k1[j] * t + q[i] * (k2[j] + k3[j] * t);
    }
}

#[inline(always)]
fn body3(idx: &[u32], fx: &[f32], q: &[f32], k: &Coeffs, out: &mut [f32]) {
    let n = out.len().min(idx.len()).min(fx.len()).min(q.len());
    let (k0, k1, k2) = (&*k.k0, &*k.k1, &*k.k2);
    for i in 0..n {
        let j = idx[i] as usize & MASK;
        out[i] = k0[j] + k1[j] * fx[i] + k2[j] * q[i];
    }
}

/// `out[i] = K0 + K1·fx + q·(K2 + K3·fx)` with the coefficients of cell `idx[i]`.
#[multiversion(targets("x86_64+avx512f+avx512vl+avx2+fma", "x86_64+avx2+fma"))]
pub fn kernel4(idx: &[u32], fx: &[f32], q: &[f32], k: &Coeffs, out: &mut [f32]) {
    body4(idx, fx, q, k, out);
}

/// `out[i] = K0 + K1·fx + K2·q` with the coefficients of cell `idx[i]`.
#[multiversion(targets("x86_64+avx512f+avx512vl+avx2+fma", "x86_64+avx2+fma"))]
pub fn kernel3(idx: &[u32], fx: &[f32], q: &[f32], k: &Coeffs, out: &mut [f32]) {
    body3(idx, fx, q, k, out);
}

/// [`kernel4`] without any target feature.
#[inline(never)]
pub fn kernel4_portable(idx: &[u32], fx: &[f32], q: &[f32], k: &Coeffs, out: &mut [f32]) {
    body4(idx, fx, q, k, out);
}

/// [`kernel3`] without any target feature.
#[inline(never)]
pub fn kernel3_portable(idx: &[u32], fx: &[f32], q: &[f32], k: &Coeffs, out: &mut [f32]) {
    body3(idx, fx, q, k, out);
}

#[inline(always)]
fn gradient_xy(h: u32) -> (f32, f32) {
    // Branch-free form of `super::gradient`: k = h >> 29 picks (±1, ±1), (±1, 0) or (0, ±1).
    let k = h >> 29;
    let odd = 1.0 - 2.0 * (k & 1) as f32;
    let gx = if k < 6 { odd } else { 0.0 };
    let gy = if k < 4 {
        1.0 - (k & 2) as f32
    } else if k < 6 {
        0.0
    } else {
        odd
    };
    (gx, gy)
}

#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn perlin_cells_body(
    base: i32,
    span: usize,
    yi: i32,
    fy: f32,
    sy: f32,
    seed: u32,
    alpha: &mut [f32],
    beta: &mut [f32],
    k: &mut Coeffs,
) {
    let span = span.min(TABLE).min(alpha.len()).min(beta.len());
    let y1 = yi.wrapping_add(1);
    // Per column c: the noise along the column's edge is α_c·t + β_c (t = x − c), lerped in y.
    for c in 0..span {
        let col = base.wrapping_add(c as i32);
        let (g0x, g0y) = gradient_xy(super::hash2(seed, col, yi));
        let (g1x, g1y) = gradient_xy(super::hash2(seed, col, y1));
        alpha[c] = g0x + sy * (g1x - g0x);
        beta[c] = g0y * fy + sy * (g1y * (fy - 1.0) - g0y * fy);
    }
    // Cell c: n = p0 + S(fx)(p1 − p0), p0 = α_c fx + β_c, p1 = α_{c+1}(fx − 1) + β_{c+1}.
    let (k0, k1, k2, k3) = (&mut *k.k0, &mut *k.k1, &mut *k.k2, &mut *k.k3);
    for c in 0..span.saturating_sub(1) {
        let (a0, b0, a1, b1) = (alpha[c], beta[c], alpha[c + 1], beta[c + 1]);
        k0[c] = b0;
        k1[c] = a0;
        k2[c] = b1 - a1 - b0;
        k3[c] = a1 - a0;
    }
}

/// Perlin cell coefficients for columns `base .. base + span` of lattice row `yi`.
#[multiversion(targets("x86_64+avx512f+avx512vl+avx2+fma", "x86_64+avx2+fma"))]
#[allow(clippy::too_many_arguments)]
pub fn perlin_cells(
    base: i32,
    span: usize,
    yi: i32,
    fy: f32,
    sy: f32,
    seed: u32,
    alpha: &mut [f32],
    beta: &mut [f32],
    k: &mut Coeffs,
) {
    perlin_cells_body(base, span, yi, fy, sy, seed, alpha, beta, k);
}

/// [`perlin_cells`] without any target feature.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
pub fn perlin_cells_portable(
    base: i32,
    span: usize,
    yi: i32,
    fy: f32,
    sy: f32,
    seed: u32,
    alpha: &mut [f32],
    beta: &mut [f32],
    k: &mut Coeffs,
) {
    perlin_cells_body(base, span, yi, fy, sy, seed, alpha, beta, k);
}

/// Random corner values in [−1, 1] of columns `base .. base + span` on lattice rows `yi` and `yi + 1`.
#[multiversion(targets("x86_64+avx512f+avx512vl+avx2+fma", "x86_64+avx2+fma"))]
pub fn corner_values(base: i32, span: usize, yi: i32, seed: u32, r0: &mut [f32], r1: &mut [f32]) {
    let span = span.min(r0.len()).min(r1.len());
    let y1 = yi.wrapping_add(1);
    for c in 0..span {
        let col = base.wrapping_add(c as i32);
        r0[c] = super::unit_f32(super::hash2(seed, col, yi));
        r1[c] = super::unit_f32(super::hash2(seed, col, y1));
    }
}

#[cfg(test)]
#[must_use]
pub fn gradient_xy_for_test(h: u32) -> (f32, f32) {
    gradient_xy(h)
}
