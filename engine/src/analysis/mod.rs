//! Terrain statistics: range, moments, histogram, slope (mean and percentiles), the
//! hypsometric integral (Strahler 1952), and the fractal dimension of
//! the coastline by box counting (Thorimbert & Chopard 2016 §5.3) as a measure of realism.

#[cfg(feature = "cli")]
mod spectrum;
#[cfg(feature = "cli")]
pub use spectrum::{band_power, spectrum, BandPower, Spectrum};

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
