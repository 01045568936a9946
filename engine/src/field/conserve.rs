//! Area-preserving up-sampling: a coarse field brought up to a finer grid so that the fine
//! cells inside each coarse cell average exactly to its value, with no crease along the coarse
//! cells' edges.
//!
//! Along one axis the coarse values are the means `r_k` of an unknown function over unit
//! cells. Its integral `F` is known exactly at the cell edges (the running sum of `r`); a cubic
//! spline through those values (C², end slopes the end cells' values) has a derivative `f`
//! that is a quadratic in each cell, C¹ across the edges, with mean `r_k` over cell `k`
//! exactly — the *histospline* (Boneva, Kendall & Stefanov 1971, JRSS B 33(1)). A
//! fine cell's value is `f`'s mean over it (a difference of `F`), so the fine cells within a
//! coarse cell telescope to its integral. Rows, then columns: the tensor product keeps every
//! coarse cell's mean in two dimensions too. A spline reaches across the map, but a value's
//! influence falls by 2 − √3 ≈ 0.27 per coarse cell.

use super::Field;
use rayon::prelude::*;

/// `coarse` brought up to `width × height` keeping its cell means: with whole multiples, the
/// fine cells inside each coarse cell average to its value exactly (up to rounding); with other
/// ratios each fine cell is the reconstruction's mean over it, so area averaging back down
/// gives the coarse field within the overlap of the straddling cells. A single-channel field.
#[must_use]
pub fn upsample_conservative(coarse: &Field, width: usize, height: usize) -> Field {
    if coarse.channels() > 1 {
        return coarse.per_plane(|p| upsample_conservative(p, width, height));
    }
    let rows = along_rows(coarse, width);
    let cols = along_rows(&super::blur::transpose(&rows), height);
    super::blur::transpose(&cols)
}

/// Each row of `f` brought up to `n` samples.
fn along_rows(f: &Field, n: usize) -> Field {
    let (w, h) = (f.width(), f.height());
    let mut out = Field::filled(n, h, 0.0);
    if w == 0 || n == 0 {
        return out;
    }
    out.data_mut()
        .par_chunks_mut(n)
        .zip(f.data().par_chunks(w))
        .for_each(|(o, r)| row(r, o));
    out
}

/// One row: the histospline of `r` (unit cells) averaged over `out.len()` equal cells.
fn row(r: &[f32], out: &mut [f32]) {
    let m = r.len();
    let n = out.len();
    if m == 1 {
        out.fill(r[0]);
        return;
    }
    // The reconstruction's values at the m + 1 cell edges: the ends take the end cells'
    // values; inside, C² continuity of the integral's spline gives
    // d[k−1] + 4 d[k] + d[k+1] = 3 (r[k−1] + r[k]), solved by the Thomas algorithm.
    let rv = |k: usize| f64::from(r[k]);
    let mut d = vec![0.0f64; m + 1];
    d[0] = rv(0);
    d[m] = rv(m - 1);
    if m >= 2 {
        let inner = m - 1;
        let mut c = vec![0.0f64; inner];
        let mut g = vec![0.0f64; inner];
        for i in 0..inner {
            let k = i + 1;
            let mut rhs = 3.0 * (rv(k - 1) + rv(k));
            if k == 1 {
                rhs -= d[0];
            }
            if k == m - 1 {
                rhs -= d[m];
            }
            let (prev_c, prev_g) = if i == 0 {
                (0.0, 0.0)
            } else {
                (c[i - 1], g[i - 1])
            };
            let denom = 4.0 - prev_c;
            c[i] = 1.0 / denom;
            g[i] = (rhs - prev_g) / denom;
        }
        for i in (0..inner).rev() {
            // (The last unknown's right neighbour, d[m], is on the right-hand side already.)
            let next = if i + 1 < inner { d[i + 2] } else { 0.0 };
            d[i + 1] = g[i] - c[i] * next;
        }
    }
    // In cell k, f(t) = a + b t + q t² with f(0) = d[k], f(1) = d[k+1] and mean r[k].
    let coef = |k: usize| {
        let (d0, d1, mean) = (d[k], d[k + 1], rv(k));
        let q = 3.0 * (d0 + d1) - 6.0 * mean;
        let b = 6.0 * mean - 4.0 * d0 - 2.0 * d1;
        (d0, b, q)
    };
    // ∫₀ᵗ f over cell k.
    let integral = |k: usize, t: f64| {
        let (a, b, q) = coef(k);
        t * (a + t * (b / 2.0 + t * q / 3.0))
    };
    let scale = m as f64 / n as f64;
    for (j, o) in out.iter_mut().enumerate() {
        let (x0, x1) = (j as f64 * scale, (j + 1) as f64 * scale);
        let first = (x0.floor() as usize).min(m - 1);
        let mut sum = 0.0f64;
        let mut k = first;
        loop {
            let lo = (x0 - k as f64).max(0.0);
            let hi = (x1 - k as f64).min(1.0);
            if hi > lo {
                sum += integral(k, hi) - integral(k, lo);
            }
            k += 1;
            if k >= m || k as f64 >= x1 {
                break;
            }
        }
        *o = (sum / (x1 - x0)) as f32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn coarse() -> Field {
        Field::from_fn(13, 9, |x, y| {
            let (x, y) = (x as f32, y as f32);
            (x * 0.9).sin() * 40.0 + (y * 1.7).cos() * 25.0 + if x == 6.0 { 90.0 } else { 0.0 }
        })
    }

    #[test]
    fn whole_multiples_keep_every_coarse_cells_mean() {
        let c = coarse();
        let f = upsample_conservative(&c, 13 * 8, 9 * 8);
        let back = f.resample_area(13, 9);
        for (a, b) in back.data().iter().zip(c.data()) {
            assert!((a - b).abs() < 1e-3, "{a} against {b}");
        }
    }

    #[test]
    fn other_ratios_keep_them_within_the_straddling_cells() {
        let c = coarse();
        let f = upsample_conservative(&c, 61, 50);
        let back = f.resample_area(13, 9);
        let worst = back
            .data()
            .iter()
            .zip(c.data())
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
        // A spike of 90 in one column: the straddling cells share it with their neighbours.
        assert!(worst < 12.0, "{worst}");
        let mean =
            |f: &Field| f.data().iter().map(|&v| f64::from(v)).sum::<f64>() / f.data().len() as f64;
        assert!(
            (mean(&f) - mean(&c)).abs() < 0.05,
            "{} vs {}",
            mean(&f),
            mean(&c)
        );
    }

    #[test]
    fn a_constant_stays_and_a_ramp_stays_a_ramp() {
        let c = Field::filled(7, 5, 3.5);
        let f = upsample_conservative(&c, 56, 40);
        assert!(f.data().iter().all(|&v| (v - 3.5).abs() < 1e-5));
        // A linear ramp's cell means are its values at the cell centres: the reconstruction is
        // the ramp itself away from the ends (whose edge values are the end cells' own; that error
        // falls by 0.27 per cell).
        let c = Field::from_fn(16, 3, |x, _| x as f32);
        let f = upsample_conservative(&c, 128, 3);
        for x in 32..96 {
            let want = (x as f32 + 0.5) / 8.0 - 0.5;
            assert!(
                (f.data()[f.width() + x] - want).abs() < 0.02,
                "{x}: {}",
                f.data()[f.width() + x]
            );
        }
    }

    #[test]
    fn no_crease_along_the_coarse_cells_edges() {
        // A single raised cell: the fine field's slope changes smoothly across every coarse
        // edge (no kink as bilinear filtering leaves), so its second difference stays small.
        let c = Field::from_fn(9, 1, |x, _| if x == 4 { 8.0 } else { 0.0 });
        let f = upsample_conservative(&c, 9 * 16, 1);
        let v: Vec<f32> = (0..f.width()).map(|x| f.data()[x]).collect();
        let worst = v
            .windows(3)
            .map(|w| (w[0] - 2.0 * w[1] + w[2]).abs())
            .fold(0.0f32, f32::max);
        assert!(worst < 0.25, "second difference {worst}");
    }
}
