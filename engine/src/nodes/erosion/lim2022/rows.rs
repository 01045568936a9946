//! The row kernels of Lim–Tan–Bhojan erosion: fluvial erosion (steps 4–5a), donors, and the
//! gradient constraint (step 5b), each one row at a time, multiversioned for AVX-512/AVX2.

use super::super::flow::NONE;
use super::pow;
use super::LimSettings;

/// One row's inputs to [`fluvial_row`] (`land` and `water` whole: receivers lie in the rows
/// next to it).
pub(super) struct Tiles<'a> {
    pub(super) land: &'a [f32],
    pub(super) water: &'a [f32],
    pub(super) rcv: &'a [u32],
    pub(super) dist: &'a [f32],
    pub(super) drainage: &'a [f32],
    pub(super) c: &'a [f32],
    pub(super) sv: &'a [f32],
}

/// Steps 4 and 5a for one tile with land `li`, water `wi` and its receiver's land + water
/// `sr`: fluvial erosion `Δh = k_e·D^n·s^m` capped at the drop to the receiver, for a dry tile
/// above its receiver (§3.5, Eq. 2), then the value constraint (§3.6). Always inlined: each
/// multiversioned clone of [`fluvial_row`] gets its own copy with its features.
#[expect(clippy::inline_always, clippy::too_many_arguments)]
#[inline(always)]
pub(super) fn fluvial_cell<const PAPER: bool>(
    li: f32,
    wi: f32,
    sr: f32,
    dist: f32,
    d: f32,
    sv: f32,
    c: f32,
    k: &LimSettings,
) -> f32 {
    let drop = (li + wi) - sr;
    let s = drop / dist;
    let dh = if PAPER {
        k.ke * d * (s * s)
    } else {
        k.ke * pow(d, k.n) * pow(s, k.m)
    };
    let erode = wi <= 0.0 && drop > 0.0;
    let cut = if dh < drop { dh } else { drop };
    let h = if erode { li - cut } else { li };
    (1.0 - sv) * h + sv * c
}

/// Steps 4 and 5a on the row starting at tile `row` ([`fluvial_cell`]). A tile without a
/// receiver is its own (no drop). Inner rows pick the receiver's surface among the four
/// neighbours with selects instead of a gather, so the loop vectorises.
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
pub(super) fn fluvial_row(t: &Tiles, row: usize, w: usize, k: &LimSettings, out: &mut [f32]) {
    if k.n == 1.0 && k.m == 2.0 {
        fluvial_row_with::<true>(t, row, w, k, out);
    } else {
        fluvial_row_with::<false>(t, row, w, k, out);
    }
}

/// [`fluvial_row`] for the paper's exponents (`PAPER`: n = 1, m = 2, plain products) or any.
#[expect(clippy::inline_always)]
#[inline(always)]
pub(super) fn fluvial_row_with<const PAPER: bool>(
    t: &Tiles,
    row: usize,
    w: usize,
    k: &LimSettings,
    out: &mut [f32],
) {
    let (land, water) = (t.land, t.water);
    let h = land.len() / w;
    let y = row / w;
    if y == 0 || y + 1 == h || w < 2 {
        for (x, o) in out.iter_mut().enumerate() {
            let i = row + x;
            let r = t.rcv[x];
            let rr = if r == NONE { i } else { r as usize };
            let sr = land[rr] + water[rr];
            *o = fluvial_cell::<PAPER>(
                land[i],
                water[i],
                sr,
                t.dist[x],
                t.drainage[x],
                t.sv[x],
                t.c[x],
                k,
            );
        }
        return;
    }
    // The cells before and after the row exist and are never an end cell's receiver.
    let at = |base: usize| (&land[base..base + w], &water[base..base + w]);
    let ((lu, wu), (ll, wl), (lm, wm)) = (at(row - w), at(row - 1), at(row));
    let ((lr, wr), (ld, wd)) = (at(row + 1), at(row + w));
    let (rcv, dist, drainage) = (&t.rcv[..w], &t.dist[..w], &t.drainage[..w]);
    let (sv, c, out) = (&t.sv[..w], &t.c[..w], &mut out[..w]);
    for x in 0..w {
        let (i, r) = ((row + x) as u32, rcv[x]);
        let sr = if r == i - w as u32 {
            lu[x] + wu[x]
        } else if r == i - 1 {
            ll[x] + wl[x]
        } else if r == i + 1 {
            lr[x] + wr[x]
        } else if r == i + w as u32 {
            ld[x] + wd[x]
        } else {
            lm[x] + wm[x]
        };
        out[x] = fluvial_cell::<PAPER>(lm[x], wm[x], sr, dist[x], drainage[x], sv[x], c[x], k);
    }
}

/// Donors of every tile of row `y`: how many of its four neighbours drain to it.
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
pub(super) fn donors_row(rcv: &[u32], w: usize, y: usize, out: &mut [u32]) {
    let h = rcv.len() / w;
    let row = y * w;
    if y == 0 || y + 1 == h || w < 2 {
        for (x, o) in out.iter_mut().enumerate() {
            let i = row + x;
            let to_me = |j: usize| u32::from(rcv[j] == i as u32);
            let mut k = 0;
            if y > 0 {
                k += to_me(i - w);
            }
            if x > 0 {
                k += to_me(i - 1);
            }
            if x + 1 < w {
                k += to_me(i + 1);
            }
            if y + 1 < h {
                k += to_me(i + w);
            }
            *o = k;
        }
        return;
    }
    // Inner rows: the cells before and after the row exist (the last of the row above, the
    // first of the row below) and never drain into this row's end cells (they are not D4
    // neighbours when w ≥ 2), so every cell takes the same branch-free four comparisons.
    let (up, left) = (&rcv[row - w..row], &rcv[row - 1..row - 1 + w]);
    let (right, down) = (&rcv[row + 1..row + 1 + w], &rcv[row + w..row + 2 * w]);
    for (x, o) in out.iter_mut().enumerate() {
        let i = (row + x) as u32;
        *o = u32::from(up[x] == i)
            + u32::from(left[x] == i)
            + u32::from(right[x] == i)
            + u32::from(down[x] == i);
    }
}

/// Bands of rows whose drainage walks run in parallel (fixed, so the result never depends on
/// the thread count).
pub(super) const DRAIN_BANDS: usize = 8;

/// A ready tile passes its drainage `d` (× `k_d`) and lowest leaf `leaf` on to its receiver;
/// true when that was the receiver's last tributary (it is ready now).
#[inline]
pub(super) fn pass_on(
    kd: f32,
    leaf: u64,
    d: f32,
    rd: &mut f32,
    rleaf: &mut u64,
    rpending: &mut u32,
) -> bool {
    *rd += kd * d;
    *rleaf = (*rleaf).min(leaf);
    *rpending -= 1;
    *rpending == 0
}

/// Step 5b (§3.6) on row `y`: `h ← (1 − s_g)·h + s_g·mean_n(h_n + c − c_n)` over the four
/// neighbours (summed up, left, right, down — [`flow::D4`]'s order — as many as lie on the
/// map), then step 6: the water that brings the tile up to sea level.
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
#[expect(clippy::too_many_arguments)]
pub(super) fn gradient_row(
    land: &[f32],
    c: &[f32],
    sg: &[f32],
    w: usize,
    y: usize,
    sea: f32,
    out: &mut [f32],
    wet: &mut [f32],
) {
    let h = land.len() / w;
    let row = y * w;
    let finish = |i: usize, ideal: f32| (1.0 - sg[i]) * land[i] + sg[i] * ideal;
    let cell = |x: usize| {
        let i = row + x;
        let (mut sum, mut count) = (0.0f32, 0.0f32);
        for (j, inside) in [
            (i.wrapping_sub(w), y > 0),
            (i.wrapping_sub(1), x > 0),
            (i + 1, x + 1 < w),
            (i + w, y + 1 < h),
        ] {
            if inside {
                sum += land[j] + c[i] - c[j];
                count += 1.0;
            }
        }
        finish(i, if count > 0.0 { sum / count } else { land[i] })
    };
    if y == 0 || y + 1 == h || w < 3 {
        for (x, o) in out.iter_mut().enumerate() {
            *o = cell(x);
        }
    } else {
        out[0] = cell(0);
        out[w - 1] = cell(w - 1);
        // The interior: equal-length slices, no bounds checks — vectorised. Same sums in
        // the same order as `cell`.
        let n = w - 2;
        let at = |base: usize| (&land[base..base + n], &c[base..base + n]);
        let ((lu, cu), (ll, cl)) = (at(row - w + 1), at(row));
        let ((lm, cm), (lr, cr)) = (at(row + 1), at(row + 2));
        let (ld, cd) = at(row + w + 1);
        let sgm = &sg[row + 1..row + 1 + n];
        for (k, o) in out[1..=n].iter_mut().enumerate() {
            let ci = cm[k];
            let sum = (lu[k] + ci - cu[k]) + (ll[k] + ci - cl[k]);
            let sum = sum + (lr[k] + ci - cr[k]);
            let sum = sum + (ld[k] + ci - cd[k]);
            *o = (1.0 - sgm[k]) * lm[k] + sgm[k] * (sum / 4.0);
        }
    }
    for (wt, &o) in wet.iter_mut().zip(out.iter()) {
        *wt = (sea - o).max(0.0);
    }
}
