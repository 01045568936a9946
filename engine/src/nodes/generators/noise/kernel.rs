//! The per-sample kernels. One generic body, compiled for AVX-512, AVX2 and the baseline
//! ISA by `multiversion` and chosen at run time; `*_portable` runs the same body without
//! any target feature (used by tests to check that every version gives the same bits).

// The kernel bodies are `#[inline(always)]` on purpose: each multiversioned clone must
// compile its own copy of the body with that clone's target features.
#![expect(clippy::inline_always)]

/// Samples per chunk of a row.
pub const CHUNK: usize = 1024;
/// Cells per chunk's coefficient tables (a power of two, so `& MASK` proves every index in bounds).
pub const TABLE: usize = 2048;
const MASK: usize = TABLE - 1;
/// Table length: `TABLE` plus room for the 32-entry window the AVX-512 kernel loads.
pub const PADDED: usize = TABLE + 32;

/// Per-cell polynomial coefficients for one chunk of one row.
pub struct Coeffs {
    pub k0: Box<[f32; PADDED]>,
    pub k1: Box<[f32; PADDED]>,
    pub k2: Box<[f32; PADDED]>,
    pub k3: Box<[f32; PADDED]>,
}

impl Coeffs {
    #[must_use]
    pub fn new() -> Self {
        Self {
            k0: Box::new([0.0; PADDED]),
            k1: Box::new([0.0; PADDED]),
            k2: Box::new([0.0; PADDED]),
            k3: Box::new([0.0; PADDED]),
        }
    }
}

impl Default for Coeffs {
    fn default() -> Self {
        Self::new()
    }
}

/// How a kernel writes its result: `out = n`, or `out = out + amp·n` (fBm accumulation).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Write {
    Store,
    Accumulate(f32),
}

#[inline(always)]
fn body4(idx: &[u32], fx: &[f32], q: &[f32], k: &Coeffs, out: &mut [f32], w: Write) {
    let n = out.len().min(idx.len()).min(fx.len()).min(q.len());
    let (k0, k1, k2, k3) = (&*k.k0, &*k.k1, &*k.k2, &*k.k3);
    match w {
        Write::Store => {
            for i in 0..n {
                let j = idx[i] as usize & MASK;
                let t = fx[i];
                out[i] = k0[j] + k1[j] * t + q[i] * (k2[j] + k3[j] * t);
            }
        }
        Write::Accumulate(amp) => {
            for i in 0..n {
                let j = idx[i] as usize & MASK;
                let t = fx[i];
                out[i] += amp * (k0[j] + k1[j] * t + q[i] * (k2[j] + k3[j] * t));
            }
        }
    }
}

#[inline(always)]
fn body3(idx: &[u32], fx: &[f32], q: &[f32], k: &Coeffs, out: &mut [f32], w: Write) {
    let n = out.len().min(idx.len()).min(fx.len()).min(q.len());
    let (k0, k1, k2) = (&*k.k0, &*k.k1, &*k.k2);
    match w {
        Write::Store => {
            for i in 0..n {
                let j = idx[i] as usize & MASK;
                out[i] = k0[j] + k1[j] * fx[i] + k2[j] * q[i];
            }
        }
        Write::Accumulate(amp) => {
            for i in 0..n {
                let j = idx[i] as usize & MASK;
                out[i] += amp * (k0[j] + k1[j] * fx[i] + k2[j] * q[i]);
            }
        }
    }
}

/// `body4` when `four`, else `body3`: the scalar path the permute kernels fall back to.
#[inline(always)]
fn body(four: bool, idx: &[u32], fx: &[f32], q: &[f32], k: &Coeffs, out: &mut [f32], w: Write) {
    if four {
        body4(idx, fx, q, k, out, w);
    } else {
        body3(idx, fx, q, k, out, w);
    }
}

/// `out[i] = K0 + K1·fx + q·(K2 + K3·fx)` with the coefficients of cell `idx[i]`.
///
/// `idx` must be non-decreasing (it is: samples are sorted along x). On AVX-512 CPUs this
/// uses table permutes instead of gathers (see `avx512`); elsewhere the autovectorised body.
pub fn kernel4(idx: &[u32], fx: &[f32], q: &[f32], k: &Coeffs, out: &mut [f32], w: Write) {
    #[cfg(target_arch = "x86_64")]
    if avx512::available() {
        avx512::kernel(idx, fx, q, k, out, true, w);
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if avx2::available() {
        avx2::kernel(idx, fx, q, k, out, true, w);
        return;
    }
    kernel4_auto(idx, fx, q, k, out, w);
}

/// `out[i] = K0 + K1·fx + K2·q` with the coefficients of cell `idx[i]` (`idx` non-decreasing).
pub fn kernel3(idx: &[u32], fx: &[f32], q: &[f32], k: &Coeffs, out: &mut [f32], w: Write) {
    #[cfg(target_arch = "x86_64")]
    if avx512::available() {
        avx512::kernel(idx, fx, q, k, out, false, w);
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if avx2::available() {
        avx2::kernel(idx, fx, q, k, out, false, w);
        return;
    }
    kernel3_auto(idx, fx, q, k, out, w);
}

/// [`kernel4`]'s autovectorised body, for AVX2 and the baseline.
#[cfg_attr(
    not(feature = "simd-portable"),
    multiversion::multiversion(targets("x86_64+avx2+fma"))
)]
pub fn kernel4_auto(idx: &[u32], fx: &[f32], q: &[f32], k: &Coeffs, out: &mut [f32], w: Write) {
    body4(idx, fx, q, k, out, w);
}

/// [`kernel3`]'s autovectorised body, for AVX2 and the baseline.
#[cfg_attr(
    not(feature = "simd-portable"),
    multiversion::multiversion(targets("x86_64+avx2+fma"))
)]
pub fn kernel3_auto(idx: &[u32], fx: &[f32], q: &[f32], k: &Coeffs, out: &mut [f32], w: Write) {
    body3(idx, fx, q, k, out, w);
}

/// Gather-free AVX-512 kernels.
///
/// Gathers (`vgatherdps`) are slow under the microcode mitigations for gather data
/// sampling, which made the coefficient lookups most of the noise time (the figures:
/// docs/perf-log.md). Because `idx` is non-decreasing, 16
/// consecutive samples need at most 32 consecutive table entries: two plain loads and one
/// `vpermt2ps` per coefficient replace each gather. The arithmetic is the same IEEE
/// operations in the same order as `body4`/`body3` (no FMA), so results are bit-identical.
#[cfg(target_arch = "x86_64")]
#[expect(unsafe_code)]
mod avx512 {
    use super::{body, Coeffs, Write, TABLE};
    use std::arch::x86_64::{
        __m512, __m512i, _mm512_add_epi32, _mm512_add_ps, _mm512_loadu_epi32, _mm512_loadu_ps,
        _mm512_mul_ps, _mm512_permutex2var_ps, _mm512_permutexvar_ps, _mm512_set1_epi32,
        _mm512_set1_ps, _mm512_storeu_ps,
    };

    pub fn available() -> bool {
        cfg!(not(any(
            feature = "simd-max-avx2",
            feature = "simd-portable"
        ))) && std::is_x86_feature_detected!("avx512f")
    }

    pub fn kernel(
        idx: &[u32],
        fx: &[f32],
        q: &[f32],
        k: &Coeffs,
        out: &mut [f32],
        four: bool,
        w: Write,
    ) {
        if !available() {
            // Unreachable from kernel3/kernel4, which check first; keeps this function safe to call.
            body(four, idx, fx, q, k, out, w);
            return;
        }
        // SAFETY: AVX-512F is available (checked just above).
        unsafe { kernel_avx512(idx, fx, q, k, out, four, w) }
    }

    /// # Safety
    /// The CPU must support AVX-512F.
    #[target_feature(enable = "avx512f")]
    unsafe fn kernel_avx512(
        idx: &[u32],
        fx: &[f32],
        q: &[f32],
        k: &Coeffs,
        out: &mut [f32],
        four: bool,
        w: Write,
    ) {
        let n = out.len().min(idx.len()).min(fx.len()).min(q.len());
        let mut i = 0;
        while i + 16 <= n {
            let first = idx[i] as usize;
            let last = idx[i + 15] as usize;
            // Monotone indices within one 32-entry window that lies inside the padded tables.
            if last >= first && last - first < 32 && first < TABLE {
                // SAFETY: i + 16 <= n bounds the loads from idx, fx, q and the store to out;
                // first < TABLE and the tables hold TABLE + 32 entries, so the two 16-wide
                // loads at `first` and `first + 16` stay inside each table.
                unsafe {
                    let rel: __m512i = _mm512_add_epi32(
                        _mm512_loadu_epi32(idx.as_ptr().add(i).cast()),
                        _mm512_set1_epi32(-(first as i32)),
                    );
                    // Windows of fewer than 16 cells (every octave coarser than about one cell
                    // per sample) need one load and a one-register permute per table.
                    let narrow = last - first < 16;
                    let look = |tab: &[f32]| -> __m512 {
                        let lo = _mm512_loadu_ps(tab.as_ptr().add(first));
                        if narrow {
                            _mm512_permutexvar_ps(rel, lo)
                        } else {
                            let hi = _mm512_loadu_ps(tab.as_ptr().add(first + 16));
                            _mm512_permutex2var_ps(lo, rel, hi)
                        }
                    };
                    let t = _mm512_loadu_ps(fx.as_ptr().add(i));
                    let qq = _mm512_loadu_ps(q.as_ptr().add(i));
                    let k0 = look(&k.k0[..]);
                    let k1 = look(&k.k1[..]);
                    let k2 = look(&k.k2[..]);
                    // Same order as the scalar bodies: (k0 + k1·t) + q·(k2 + k3·t), or (k0 + k1·t) + k2·q.
                    let r = if four {
                        let k3 = look(&k.k3[..]);
                        _mm512_add_ps(
                            _mm512_add_ps(k0, _mm512_mul_ps(k1, t)),
                            _mm512_mul_ps(qq, _mm512_add_ps(k2, _mm512_mul_ps(k3, t))),
                        )
                    } else {
                        _mm512_add_ps(
                            _mm512_add_ps(k0, _mm512_mul_ps(k1, t)),
                            _mm512_mul_ps(k2, qq),
                        )
                    };
                    let r = match w {
                        Write::Store => r,
                        // out + amp·n, as in the scalar bodies.
                        Write::Accumulate(amp) => _mm512_add_ps(
                            _mm512_loadu_ps(out.as_ptr().add(i)),
                            _mm512_mul_ps(_mm512_set1_ps(amp), r),
                        ),
                    };
                    _mm512_storeu_ps(out.as_mut_ptr().add(i), r);
                }
            } else {
                let (a, b) = (i, i + 16);
                body(four, &idx[a..b], &fx[a..b], &q[a..b], k, &mut out[a..b], w);
            }
            i += 16;
        }
        body(four, &idx[i..n], &fx[i..n], &q[i..n], k, &mut out[i..n], w);
    }
}

/// Gather-free AVX2 kernels: the AVX-512 kernels' idea on 8 lanes.
///
/// Because `idx` is non-decreasing, 8 consecutive samples need at most 16 consecutive table
/// entries: a window of fewer than 8 cells (every octave coarser than about one cell per
/// sample) is one load and one `vpermps` per coefficient; a wider one two loads, two
/// `vpermps` and a blend. They replace `vgatherdps`. Same IEEE operations in the same order
/// as `body4`/`body3` (no FMA), so results are bit-identical (tested).
#[cfg(target_arch = "x86_64")]
#[expect(unsafe_code)]
pub(crate) mod avx2 {
    use super::{body, Coeffs, Write, TABLE};
    use std::arch::x86_64::{
        __m256, __m256i, _mm256_add_epi32, _mm256_add_ps, _mm256_blendv_ps, _mm256_castsi256_ps,
        _mm256_cmpgt_epi32, _mm256_loadu_ps, _mm256_loadu_si256, _mm256_mul_ps,
        _mm256_permutevar8x32_ps, _mm256_set1_epi32, _mm256_set1_ps, _mm256_storeu_ps,
    };

    pub fn available() -> bool {
        cfg!(not(feature = "simd-portable")) && std::is_x86_feature_detected!("avx2")
    }

    pub fn kernel(
        idx: &[u32],
        fx: &[f32],
        q: &[f32],
        k: &Coeffs,
        out: &mut [f32],
        four: bool,
        w: Write,
    ) {
        if !available() {
            body(four, idx, fx, q, k, out, w);
            return;
        }
        // SAFETY: AVX2 is available (checked just above).
        unsafe { kernel_avx2(idx, fx, q, k, out, four, w) }
    }

    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    unsafe fn kernel_avx2(
        idx: &[u32],
        fx: &[f32],
        q: &[f32],
        k: &Coeffs,
        out: &mut [f32],
        four: bool,
        w: Write,
    ) {
        let n = out.len().min(idx.len()).min(fx.len()).min(q.len());
        let mut i = 0;
        while i + 8 <= n {
            let first = idx[i] as usize;
            let last = idx[i + 7] as usize;
            if last >= first && last - first < 16 && first < TABLE {
                // SAFETY: i + 8 <= n bounds the loads from idx, fx, q and the store to out;
                // first < TABLE and the tables hold TABLE + 32 entries, so the 8-wide loads at
                // `first` and `first + 8` stay inside each table.
                unsafe {
                    let rel: __m256i = _mm256_add_epi32(
                        _mm256_loadu_si256(idx.as_ptr().add(i).cast()),
                        _mm256_set1_epi32(-(first as i32)),
                    );
                    let narrow = last - first < 8;
                    // Lanes whose entry is in the upper 8 (vpermps reads the low 3 bits only).
                    let upper = _mm256_castsi256_ps(_mm256_cmpgt_epi32(rel, _mm256_set1_epi32(7)));
                    let look = |tab: &[f32]| -> __m256 {
                        let lo =
                            _mm256_permutevar8x32_ps(_mm256_loadu_ps(tab.as_ptr().add(first)), rel);
                        if narrow {
                            lo
                        } else {
                            let hi = _mm256_permutevar8x32_ps(
                                _mm256_loadu_ps(tab.as_ptr().add(first + 8)),
                                rel,
                            );
                            _mm256_blendv_ps(lo, hi, upper)
                        }
                    };
                    let t = _mm256_loadu_ps(fx.as_ptr().add(i));
                    let qq = _mm256_loadu_ps(q.as_ptr().add(i));
                    let k0 = look(&k.k0[..]);
                    let k1 = look(&k.k1[..]);
                    let k2 = look(&k.k2[..]);
                    // Same order as the scalar bodies: (k0 + k1·t) + q·(k2 + k3·t), or (k0 + k1·t) + k2·q.
                    let r = if four {
                        let k3 = look(&k.k3[..]);
                        _mm256_add_ps(
                            _mm256_add_ps(k0, _mm256_mul_ps(k1, t)),
                            _mm256_mul_ps(qq, _mm256_add_ps(k2, _mm256_mul_ps(k3, t))),
                        )
                    } else {
                        _mm256_add_ps(
                            _mm256_add_ps(k0, _mm256_mul_ps(k1, t)),
                            _mm256_mul_ps(k2, qq),
                        )
                    };
                    let r = match w {
                        Write::Store => r,
                        Write::Accumulate(amp) => _mm256_add_ps(
                            _mm256_loadu_ps(out.as_ptr().add(i)),
                            _mm256_mul_ps(_mm256_set1_ps(amp), r),
                        ),
                    };
                    _mm256_storeu_ps(out.as_mut_ptr().add(i), r);
                }
            } else {
                let (a, b) = (i, i + 8);
                body(four, &idx[a..b], &fx[a..b], &q[a..b], k, &mut out[a..b], w);
            }
            i += 8;
        }
        body(four, &idx[i..n], &fx[i..n], &q[i..n], k, &mut out[i..n], w);
    }
}

/// [`kernel4`] without any target feature.
#[inline(never)]
pub fn kernel4_portable(idx: &[u32], fx: &[f32], q: &[f32], k: &Coeffs, out: &mut [f32], w: Write) {
    body4(idx, fx, q, k, out, w);
}

/// [`kernel3`] without any target feature.
#[inline(never)]
pub fn kernel3_portable(idx: &[u32], fx: &[f32], q: &[f32], k: &Coeffs, out: &mut [f32], w: Write) {
    body3(idx, fx, q, k, out, w);
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

/// Gradients of lattice columns `base ..` on lattice row `yi`.
#[cfg_attr(
    not(any(feature = "simd-max-avx2", feature = "simd-portable")),
    multiversion::multiversion(targets("x86_64+avx512f+avx512vl+avx2+fma", "x86_64+avx2+fma"))
)]
#[cfg_attr(
    all(feature = "simd-max-avx2", not(feature = "simd-portable")),
    multiversion::multiversion(targets("x86_64+avx2+fma"))
)]
pub fn gradients(base: i32, yi: i32, seed: u32, gx: &mut [f32], gy: &mut [f32]) {
    for (c, (x, y)) in gx.iter_mut().zip(gy.iter_mut()).enumerate() {
        (*x, *y) = gradient_xy(super::hash2(seed, base.wrapping_add(c as i32), yi));
    }
}

/// Random heights in [−1, 1] of lattice columns `base ..` on lattice row `yi`.
#[cfg_attr(
    not(any(feature = "simd-max-avx2", feature = "simd-portable")),
    multiversion::multiversion(targets("x86_64+avx512f+avx512vl+avx2+fma", "x86_64+avx2+fma"))
)]
#[cfg_attr(
    all(feature = "simd-max-avx2", not(feature = "simd-portable")),
    multiversion::multiversion(targets("x86_64+avx2+fma"))
)]
pub fn heights(base: i32, yi: i32, seed: u32, h: &mut [f32]) {
    for (c, v) in h.iter_mut().enumerate() {
        *v = super::unit_f32(super::hash2(seed, base.wrapping_add(c as i32), yi));
    }
}

/// Perlin cell coefficients from column gradients `[g0x, g0y, g1x, g1y]` on rows yi, yi + 1.
///
/// Per column c the noise along the column's edge is `α_c·t + β_c` (t = x − c), lerped in y;
/// in cell c, `n = p0 + S(fx)(p1 − p0)` with `p0 = α_c fx + β_c` and
/// `p1 = α_{c+1}(fx − 1) + β_{c+1}`, i.e. `K0 + K1·fx + S(fx)·(K2 + K3·fx)`.
#[cfg_attr(
    not(any(feature = "simd-max-avx2", feature = "simd-portable")),
    multiversion::multiversion(targets("x86_64+avx512f+avx512vl+avx2+fma", "x86_64+avx2+fma"))
)]
#[cfg_attr(
    all(feature = "simd-max-avx2", not(feature = "simd-portable")),
    multiversion::multiversion(targets("x86_64+avx2+fma"))
)]
pub fn perlin_cells(g: [&[f32]; 4], fy: f32, sy: f32, k: &mut Coeffs) {
    let [g0x, g0y, g1x, g1y] = g;
    let n = g0x
        .len()
        .min(g0y.len())
        .min(g1x.len())
        .min(g1y.len())
        .min(TABLE)
        .saturating_sub(1);
    // Equal-length views of columns c and c + 1, so every index is provably in bounds and
    // the loop vectorises.
    let (x0l, x0r, y0l, y0r) = (&g0x[..n], &g0x[1..=n], &g0y[..n], &g0y[1..=n]);
    let (x1l, x1r, y1l, y1r) = (&g1x[..n], &g1x[1..=n], &g1y[..n], &g1y[1..=n]);
    let (k0, k1, k2, k3) = (
        &mut k.k0[..n],
        &mut k.k1[..n],
        &mut k.k2[..n],
        &mut k.k3[..n],
    );
    for c in 0..n {
        let a0 = x0l[c] + sy * (x1l[c] - x0l[c]);
        let b0 = y0l[c] * fy + sy * (y1l[c] * (fy - 1.0) - y0l[c] * fy);
        let a1 = x0r[c] + sy * (x1r[c] - x0r[c]);
        let b1 = y0r[c] * fy + sy * (y1r[c] * (fy - 1.0) - y0r[c] * fy);
        k0[c] = b0;
        k1[c] = a0;
        k2[c] = b1 - a1 - b0;
        k3[c] = a1 - a0;
    }
}

/// Value-noise cell coefficients: `n = v_c + S(fx)·(v_{c+1} − v_c)` with `v` lerped in y.
#[cfg_attr(
    not(any(feature = "simd-max-avx2", feature = "simd-portable")),
    multiversion::multiversion(targets("x86_64+avx512f+avx512vl+avx2+fma", "x86_64+avx2+fma"))
)]
#[cfg_attr(
    all(feature = "simd-max-avx2", not(feature = "simd-portable")),
    multiversion::multiversion(targets("x86_64+avx2+fma"))
)]
pub fn value_cells(r0: &[f32], r1: &[f32], sy: f32, k: &mut Coeffs) {
    let n = r0.len().min(r1.len()).min(TABLE).saturating_sub(1);
    let (l0, r0r, l1, r1r) = (&r0[..n], &r0[1..=n], &r1[..n], &r1[1..=n]);
    let (k0, k1, k2) = (&mut k.k0[..n], &mut k.k1[..n], &mut k.k2[..n]);
    for c in 0..n {
        let v0 = l0[c] + sy * (l1[c] - l0[c]);
        let v1 = r0r[c] + sy * (r1r[c] - r0r[c]);
        k0[c] = v0;
        k1[c] = 0.0;
        k2[c] = v1 - v0;
    }
}

/// Zero-gradient D2M1N3 cell coefficients (Thorimbert & Chopard 2016 §3.3, Eq. 19):
/// `h = h00 + S3(x)Δx + S3(y)Δy + A[S3(x)·y + S3(y)·x − x·y]`
/// `  = [h00 + S3(fy)Δy] + fx·[A(S3(fy) − fy)] + S3(fx)·[Δx + A·fy]`.
///
/// The text prints "+ x·y"; with "+" the corner h(1, 1) = h11 fails (it gives
/// h10 + h01 − h00 + 3A), so the sign is a typo: solving Eqs. 8–15 with all gradients zero
/// gives c11 = −A, i.e. "− x·y".
#[cfg_attr(
    not(any(feature = "simd-max-avx2", feature = "simd-portable")),
    multiversion::multiversion(targets("x86_64+avx512f+avx512vl+avx2+fma", "x86_64+avx2+fma"))
)]
#[cfg_attr(
    all(feature = "simd-max-avx2", not(feature = "simd-portable")),
    multiversion::multiversion(targets("x86_64+avx2+fma"))
)]
pub fn zero_gradient_cells(r0: &[f32], r1: &[f32], fy: f32, k: &mut Coeffs) {
    let n = r0.len().min(r1.len()).min(TABLE).saturating_sub(1);
    let sy = fy * fy * (3.0 - 2.0 * fy);
    let (h00s, h10s, h01s, h11s) = (&r0[..n], &r0[1..=n], &r1[..n], &r1[1..=n]);
    let (k0, k1, k2) = (&mut k.k0[..n], &mut k.k1[..n], &mut k.k2[..n]);
    for c in 0..n {
        let (h00, h01, h10, h11) = (h00s[c], h01s[c], h10s[c], h11s[c]);
        let dx = h10 - h00;
        let dy = h01 - h00;
        let a = h11 + h00 - h10 - h01;
        k0[c] = h00 + sy * dy;
        k1[c] = a * (sy - fy);
        k2[c] = dx + a * fy;
    }
}

#[cfg(test)]
#[must_use]
pub fn gradient_xy_for_test(h: u32) -> (f32, f32) {
    gradient_xy(h)
}
