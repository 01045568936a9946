//! Terrain statistics: range, moments, histogram, slope (mean and percentiles), the
//! hypsometric integral (Strahler 1952), and the fractal dimension of
//! the coastline by box counting (Thorimbert & Chopard 2016 §5.3) as a measure of realism.

use crate::field::{Field, World};
use rayon::prelude::*;

/// Statistics of one height field.
#[derive(Clone, Debug, PartialEq)]
pub struct Stats {
    pub min: f32,
    pub max: f32,
    pub mean: f64,
    pub std_dev: f64,
    pub median: f32,
    /// Counts of samples in `bins` equal-width bins between `min` and `max`.
    pub histogram: Vec<u64>,
    /// Mean slope angle in degrees, from central differences with the real cell size.
    pub mean_slope_deg: f64,
    /// The 50th, 90th and 99th percentiles of the slope angle, in degrees.
    pub slope_percentiles_deg: [f64; 3],
    /// Strahler 1952's hypsometric integral (mean − min) / (max − min): about 0.5 for an
    /// even spread of heights, lower where a few peaks rise over broad lowlands.
    pub hypsometric_integral: f64,
    /// The sea level used for the coastline.
    pub sea_level: f32,
    /// Fractal dimension of the coastline at `sea_level`, if there is a coastline.
    pub coastline: Option<Coastline>,
}

/// A box-counting measurement (Thorimbert & Chopard 2016 §5.3).
#[derive(Clone, Debug, PartialEq)]
pub struct Coastline {
    /// `D = 1 − slope` of the regression of log L on log ε, with L(ε) = N(ε)·ε.
    pub dimension: f64,
    /// `(ε in pixels, boxes N(ε) that contain coastline)`.
    pub counts: Vec<(usize, usize)>,
}

/// Box sizes used for counting: 2 … 64 pixels, as in Thorimbert & Chopard 2016 Fig. 13.
pub const BOX_SIZES: [usize; 6] = [2, 4, 8, 16, 32, 64];

/// Computes statistics; `sea_level` defaults to the median height.
#[must_use]
pub fn stats(field: &Field, world: &World, bins: usize, sea_level: Option<f32>) -> Stats {
    let data = field.data();
    let (min, max) = field.min_max().unwrap_or((0.0, 0.0));
    let n = data.len().max(1) as f64;
    let mean = data.par_iter().map(|&v| f64::from(v)).sum::<f64>() / n;
    let var = data
        .par_iter()
        .map(|&v| (f64::from(v) - mean).powi(2))
        .sum::<f64>()
        / n;
    let mut sorted = data.to_vec();
    let mid = sorted.len() / 2;
    let median = if sorted.is_empty() {
        0.0
    } else {
        *sorted.select_nth_unstable_by(mid, f32::total_cmp).1
    };
    let bins = bins.max(1);
    let mut histogram = vec![0u64; bins];
    let span = (max - min).max(f32::MIN_POSITIVE);
    for &v in data {
        let b = (((v - min) / span) * bins as f32) as usize;
        histogram[b.min(bins - 1)] += 1;
    }
    let sea_level = sea_level.unwrap_or(median);
    let mut slopes = slopes_deg(field, world.cell_size_m(field.width()));
    let mean_slope_deg = slopes.iter().map(|&v| f64::from(v)).sum::<f64>() / n;
    let slope_percentiles_deg = [0.5, 0.9, 0.99].map(|q| {
        if slopes.is_empty() {
            return 0.0;
        }
        let k = ((slopes.len() - 1) as f64 * q).round() as usize;
        f64::from(*slopes.select_nth_unstable_by(k, f32::total_cmp).1)
    });
    let relief = f64::from(max - min);
    Stats {
        min,
        max,
        mean,
        std_dev: var.sqrt(),
        median,
        histogram,
        mean_slope_deg,
        slope_percentiles_deg,
        hypsometric_integral: if relief > 0.0 {
            (mean - f64::from(min)) / relief
        } else {
            0.0
        },
        sea_level,
        coastline: coastline_dimension(field, sea_level),
    }
}

/// Mean of `atan(|∇h|)` in degrees, central differences (one-sided at the border).
#[must_use]
pub fn mean_slope_deg(field: &Field, cell_size_m: f64) -> f64 {
    let s = slopes_deg(field, cell_size_m);
    s.iter().map(|&v| f64::from(v)).sum::<f64>() / s.len().max(1) as f64
}

/// `atan(|∇h|)` in degrees at every cell, central differences (one-sided at the border).
#[must_use]
pub fn slopes_deg(field: &Field, cell_size_m: f64) -> Vec<f32> {
    let (w, h) = (field.width(), field.height());
    if w < 2 || h < 2 {
        return vec![0.0; w * h];
    }
    (0..h)
        .into_par_iter()
        .flat_map_iter(|y| {
            (0..w).map(move |x| {
                let (x0, x1) = (x.saturating_sub(1), (x + 1).min(w - 1));
                let (y0, y1) = (y.saturating_sub(1), (y + 1).min(h - 1));
                let dx = f64::from(field.data()[y * w + x1] - field.data()[y * w + x0])
                    / ((x1 - x0) as f64 * cell_size_m);
                let dy = f64::from(field.data()[y1 * w + x] - field.data()[y0 * w + x])
                    / ((y1 - y0) as f64 * cell_size_m);
                libm::atan((dx * dx + dy * dy).sqrt()).to_degrees() as f32
            })
        })
        .collect()
}

/// Coastline pixels: land (h ≥ sea level) with at least one 4-neighbour at sea.
#[must_use]
pub fn coastline_pixels(field: &Field, sea_level: f32) -> Vec<bool> {
    let (w, h) = (field.width(), field.height());
    let d = field.data();
    let land = |x: usize, y: usize| d[y * w + x] >= sea_level;
    (0..w * h)
        .map(|i| {
            let (x, y) = (i % w, i / w);
            land(x, y)
                && ((x > 0 && !land(x - 1, y))
                    || (x + 1 < w && !land(x + 1, y))
                    || (y > 0 && !land(x, y - 1))
                    || (y + 1 < h && !land(x, y + 1)))
        })
        .collect()
}

/// Fractal dimension of the coastline by box counting over [`BOX_SIZES`] (Thorimbert & Chopard 2016 §5.3):
/// `log L(ε) = (1 − D)·log ε + C` with `L(ε) = N(ε)·ε`, fitted by least squares.
#[must_use]
pub fn coastline_dimension(field: &Field, sea_level: f32) -> Option<Coastline> {
    let (w, h) = (field.width(), field.height());
    let coast = coastline_pixels(field, sea_level);
    if !coast.iter().any(|&c| c) {
        return None;
    }
    let counts: Vec<(usize, usize)> = BOX_SIZES
        .iter()
        .filter(|&&e| e <= w.min(h))
        .map(|&e| {
            let (bw, bh) = (w.div_ceil(e), h.div_ceil(e));
            let mut boxes = vec![false; bw * bh];
            for (i, _) in coast.iter().enumerate().filter(|(_, c)| **c) {
                boxes[(i / w / e) * bw + (i % w) / e] = true;
            }
            (e, boxes.iter().filter(|&&b| b).count())
        })
        .collect();
    if counts.len() < 2 {
        return None;
    }
    let pts: Vec<(f64, f64)> = counts
        .iter()
        .map(|&(e, n)| (libm::log(e as f64), libm::log((n * e) as f64)))
        .collect();
    let k = pts.len() as f64;
    let mx = pts.iter().map(|p| p.0).sum::<f64>() / k;
    let my = pts.iter().map(|p| p.1).sum::<f64>() / k;
    let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx).powi(2)).sum();
    Some(Coastline {
        dimension: 1.0 - sxy / sxx,
        counts,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn straight_coast_has_dimension_one_and_tilted_plane_has_its_slope() {
        // Left half land, right half sea: a straight coastline.
        let f = Field::from_fn(256, 256, |x, _| if x < 128 { 1.0 } else { 0.0 });
        let c = coastline_dimension(&f, 0.5).expect("coast");
        assert!((c.dimension - 1.0).abs() < 1e-9, "{}", c.dimension);
        // A plane rising 1 m per 1 m cell: 45°.
        let plane = Field::from_fn(64, 64, |x, _| x as f32);
        assert!((mean_slope_deg(&plane, 1.0) - 45.0).abs() < 1e-9);
        // Its slope percentiles are 45° too, and a linear ramp's heights are spread evenly:
        // hypsometric integral 1/2.
        let world = World {
            size_m: 64.0,
            height_min_m: 0.0,
            height_max_m: 63.0,
        };
        let s = stats(&plane, &world, 8, None);
        for p in s.slope_percentiles_deg {
            assert!((p - 45.0).abs() < 1e-4, "{p}");
        }
        assert!((s.hypsometric_integral - 0.5).abs() < 1e-9);
        // A single peak over a plain: most of the area low, the integral small.
        let peak = Field::from_fn(64, 64, |x, y| if (x, y) == (32, 32) { 63.0 } else { 0.0 });
        assert!(stats(&peak, &world, 8, None).hypsometric_integral < 0.001);
        let world = World {
            size_m: 64.0,
            height_min_m: 0.0,
            height_max_m: 64.0,
        };
        let s = stats(&plane, &world, 8, None);
        assert_eq!(s.histogram.iter().sum::<u64>(), 64 * 64);
        assert_eq!((s.min, s.max), (0.0, 63.0));
        assert!((s.mean - 31.5).abs() < 1e-9);
    }

    #[test]
    fn space_filling_coast_approaches_two() {
        // A checkerboard of single pixels: coastline everywhere, N(ε) ∝ ε⁻², so D = 2.
        let f = Field::from_fn(256, 256, |x, y| ((x + y) % 2) as f32);
        let c = coastline_dimension(&f, 0.5).expect("coast");
        assert!((c.dimension - 2.0).abs() < 1e-9, "{}", c.dimension);
    }
}

/// The frequency of DFT bin `i` of `n`, in cycles per `n` samples: `i` up to `n / 2`, the
/// negative frequencies `i − n` above.
fn signed_frequency(i: usize, n: usize) -> f64 {
    if i <= n / 2 {
        i as f64
    } else {
        i as f64 - n as f64
    }
}

/// The power of the 2D discrete Fourier transform of `prep(x, y, sample)` over a one-plane
/// field, column-major (`x · height + y`).
fn power_2d(field: &Field, prep: impl Fn(usize, usize, f64) -> f64 + Sync) -> Vec<f64> {
    use rustfft::num_complex::Complex;
    let (w, h) = (field.width(), field.height());
    let mut rows: Vec<Complex<f64>> = field
        .data()
        .iter()
        .enumerate()
        .map(|(i, &v)| Complex::new(prep(i % w, i / w, f64::from(v)), 0.0))
        .collect();
    let mut planner = rustfft::FftPlanner::<f64>::new();
    let fft_w = planner.plan_fft_forward(w);
    let fft_h = planner.plan_fft_forward(h);
    rows.par_chunks_mut(w).for_each(|r| fft_w.process(r));
    let mut cols = vec![Complex::new(0.0, 0.0); w * h];
    for y in 0..h {
        for x in 0..w {
            cols[x * h + y] = rows[y * w + x];
        }
    }
    cols.par_chunks_mut(h).for_each(|c| fft_h.process(c));
    cols.iter().map(Complex::norm_sqr).collect()
}

/// How much of a field's variation is fine detail: the power of its 2D spectrum (mean
/// removed, 2D Hann window) at wavenumbers above `cutoff` cycles per map side, and in all.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BandPower {
    pub fine: f64,
    pub total: f64,
}

impl BandPower {
    /// The fine band's share of the power.
    #[must_use]
    pub fn share(&self) -> f64 {
        if self.total > 0.0 {
            self.fine / self.total
        } else {
            0.0
        }
    }
}

/// [`BandPower`] of `field` above `cutoff` cycles per map side. The fine band of an erosion
/// node's change at a build resolution is what `orogen parity --detail` compares between
/// `detail = consistent` and `native` (cutoff 128: features shorter than two cells of a 256²
/// preview). Power is normalised per sample, so fields of different sizes compare.
#[must_use]
pub fn band_power(field: &Field, cutoff: f64) -> BandPower {
    let (w, h) = (field.width(), field.height());
    if w < 2 || h < 2 {
        return BandPower {
            fine: 0.0,
            total: 0.0,
        };
    }
    let n = (w * h) as f64;
    let mean = field.data().iter().map(|&v| f64::from(v)).sum::<f64>() / n;
    let hann = |i: usize, len: usize| {
        0.5 - 0.5 * (2.0 * std::f64::consts::PI * i as f64 / (len - 1) as f64).cos()
    };
    let power = power_2d(field, |x, y, v| (v - mean) * hann(x, w) * hann(y, h));
    let (mut fine, mut total) = (0.0, 0.0);
    for x in 0..w {
        let kx = signed_frequency(x, w) * (w.min(h) as f64 / w as f64);
        for y in 0..h {
            let ky = signed_frequency(y, h) * (w.min(h) as f64 / h as f64);
            let p = power[x * h + y];
            total += p;
            if kx.hypot(ky) > cutoff {
                fine += p;
            }
        }
    }
    // Parseval: the sum of |X|² is n × the sum of squares; per sample, n².
    BandPower {
        fine: fine / (n * n),
        total: total / (n * n),
    }
}

/// Log-spaced wavenumber bins of [`spectrum`].
const BINS: usize = 16;

/// The radially averaged power spectrum of a height field and the exponent of its power law.
#[derive(Clone, Debug, PartialEq)]
pub struct Spectrum {
    /// `β` of the fit `P(k) ∝ k^−β` over the band.
    pub beta: f64,
    /// The band fitted: wavelengths from `4` cells to a quarter of the map, in metres.
    pub band_m: (f64, f64),
    /// `(wavelength in metres, mean power)` of each log-spaced bin with samples, long
    /// wavelengths first.
    pub bins: Vec<(f64, f64)>,
}

/// The height spectrum of `field` (cells `cell_m` wide): the best-fit plane removed, a 2D
/// Hann window applied, the 2D discrete Fourier transform's power averaged over rings of
/// wavenumber in 16 log-spaced bins between a quarter of the map and 4 cells, and `β` fitted
/// by least squares in log–log. Real landscapes fall off steeply (most of their relief is
/// in the long wavelengths); a white-noise field has `β = 0`. `None` below 32² samples.
#[must_use]
pub fn spectrum(field: &Field, cell_m: f64) -> Option<Spectrum> {
    let (w, h) = (field.width(), field.height());
    if w < 32 || h < 32 {
        return None;
    }
    // Best-fit plane: on a full grid x and y are uncorrelated, so each slope is its own
    // regression.
    let data = field.data();
    let n = (w * h) as f64;
    let mean = data.iter().map(|&v| f64::from(v)).sum::<f64>() / n;
    let (cx, cy) = ((w as f64 - 1.0) / 2.0, (h as f64 - 1.0) / 2.0);
    let (mut sx, mut sy, mut sxx, mut syy) = (0.0, 0.0, 0.0, 0.0);
    for (i, &v) in data.iter().enumerate() {
        let (x, y) = ((i % w) as f64 - cx, (i / w) as f64 - cy);
        let d = f64::from(v) - mean;
        sx += x * d;
        sy += y * d;
        sxx += x * x;
        syy += y * y;
    }
    let (bx, by) = (sx / sxx, sy / syy);
    let hann = |i: usize, len: usize| {
        0.5 - 0.5 * (2.0 * std::f64::consts::PI * i as f64 / (len - 1) as f64).cos()
    };
    let cols = power_2d(field, |x, y, v| {
        let d = v - mean - bx * (x as f64 - cx) - by * (y as f64 - cy);
        d * hann(x, w) * hann(y, h)
    });
    // Wavenumbers in cycles per metre; bins between a quarter of the map and 4 cells.
    let (lx, ly) = (w as f64 * cell_m, h as f64 * cell_m);
    let k_lo = 4.0 / lx.min(ly);
    let k_hi = 1.0 / (4.0 * cell_m);
    let per_bin = (k_hi / k_lo).ln() / BINS as f64;
    let mut sum = [0.0f64; BINS];
    let mut count = [0usize; BINS];
    for x in 0..w {
        let kx = signed_frequency(x, w) / lx;
        for y in 0..h {
            let ky = signed_frequency(y, h) / ly;
            let k = (kx * kx + ky * ky).sqrt();
            if k < k_lo || k >= k_hi {
                continue;
            }
            let b = (((k / k_lo).ln() / per_bin) as usize).min(BINS - 1);
            sum[b] += cols[x * h + y];
            count[b] += 1;
        }
    }
    let bins: Vec<(f64, f64)> = (0..BINS)
        .filter(|&b| count[b] > 0)
        .map(|b| {
            let k = k_lo * ((b as f64 + 0.5) * per_bin).exp();
            (1.0 / k, sum[b] / count[b] as f64)
        })
        .collect();
    let pts: Vec<(f64, f64)> = bins
        .iter()
        .filter(|(_, p)| *p > 0.0)
        .map(|&(l, p)| ((1.0 / l).log10(), p.log10()))
        .collect();
    if pts.len() < 3 {
        return None;
    }
    let m = pts.len() as f64;
    let (mx, my) = (
        pts.iter().map(|p| p.0).sum::<f64>() / m,
        pts.iter().map(|p| p.1).sum::<f64>() / m,
    );
    let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx).powi(2)).sum();
    Some(Spectrum {
        beta: -sxy / sxx,
        band_m: (1.0 / k_lo, 1.0 / k_hi),
        bins,
    })
}

#[cfg(test)]
mod band_tests {
    use super::*;

    /// A wave of `k` cycles per map along x.
    fn wave(n: usize, k: f64) -> Field {
        let data = (0..n * n)
            .map(|i| (2.0 * std::f64::consts::PI * k * (i % n) as f64 / n as f64).sin() as f32)
            .collect();
        Field::from_vec(n, n, data).unwrap_or_else(|| Field::filled(n, n, 0.0))
    }

    #[test]
    fn a_wave_falls_on_its_side_of_the_cutoff_and_power_is_per_sample() {
        let fine = band_power(&wave(512, 200.0), 128.0);
        let coarse = band_power(&wave(512, 40.0), 128.0);
        assert!(fine.share() > 0.99, "{fine:?}");
        assert!(coarse.share() < 0.01, "{coarse:?}");
        // The same wave at twice the samples has the same power per sample.
        let big = band_power(&wave(1024, 200.0), 128.0);
        assert!(
            (big.fine / fine.fine - 1.0).abs() < 0.02,
            "{big:?} {fine:?}"
        );
    }
}

#[cfg(test)]
mod spectrum_tests {
    use super::*;
    use rustfft::num_complex::Complex;

    /// A random surface whose power falls as k^−β: random phases, amplitudes k^(−β/2),
    /// transformed back.
    fn fractal(n: usize, beta: f64, seed: u64) -> Field {
        let mut planner = rustfft::FftPlanner::<f64>::new();
        let inv = planner.plan_fft_inverse(n);
        let mut spec = vec![Complex::new(0.0, 0.0); n * n];
        for y in 0..n {
            for x in 0..n {
                let (kx, ky) = (signed_frequency(x, n), signed_frequency(y, n));
                let k = (kx * kx + ky * ky).sqrt();
                if k == 0.0 {
                    continue;
                }
                let r = crate::node::splitmix64(seed ^ (y * n + x) as u64);
                let phase = (r % 1_000_000) as f64 / 1_000_000.0 * std::f64::consts::TAU;
                let a = k.powf(-beta / 2.0);
                spec[y * n + x] = Complex::from_polar(a, phase);
            }
        }
        for row in spec.chunks_mut(n) {
            inv.process(row);
        }
        let mut t = vec![Complex::new(0.0, 0.0); n * n];
        for y in 0..n {
            for x in 0..n {
                t[x * n + y] = spec[y * n + x];
            }
        }
        for col in t.chunks_mut(n) {
            inv.process(col);
        }
        Field::from_fn(n, n, |x, y| (t[x * n + y].re * 1000.0) as f32)
    }

    #[test]
    fn the_spectral_exponent_of_a_synthetic_surface_is_recovered() {
        for beta in [0.0, 2.0, 3.0] {
            let s = spectrum(&fractal(256, beta, 7), 10.0).expect("spectrum");
            assert!((s.beta - beta).abs() < 0.2, "β {beta}: measured {}", s.beta);
            assert_eq!(s.band_m, (640.0, 40.0));
        }
        // A tilted plane has no spectrum left after the plane is removed: no power to fit.
        let plane = Field::from_fn(64, 64, |x, y| (3 * x + 2 * y) as f32);
        let s = spectrum(&plane, 1.0);
        assert!(
            s.as_ref()
                .is_none_or(|s| s.bins.iter().all(|&(_, p)| p < 1e-12)),
            "{s:?}"
        );
        assert!(spectrum(&Field::filled(16, 16, 0.0), 1.0).is_none());
    }
}
