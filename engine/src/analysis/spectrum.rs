//! Spectra of height fields (rustfft, behind the `cli` feature): the power-law exponent
//! `orogen stats` reports and the fine-band power `orogen parity --detail` measures.

use crate::field::Field;
use rayon::prelude::*;

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
    let mut planner = rustfft::FftPlannerScalar::<f64>::new();
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
        let mut planner = rustfft::FftPlannerScalar::<f64>::new();
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
