//! `diamond_square`: the diamond-square algorithm with persistence (Olsen 2004), on a lattice
//! fixed in world space so that the graph's resolution does not change the terrain.

use super::noise::{hash2, unit_f32};
use super::noise_node::to_heights;
use crate::field::Field;
use crate::node::{EvalCtx, Node, NodeError};
use rayon::prelude::*;

crate::params! {
    pub struct DiamondSquareParams {
        /// Seed of this node, combined with the graph seed.
        seed: u32 = seed(0),
        /// Persistence in (0, 1): the random offset range is multiplied by it after each halving (Olsen 2004 step 7). Higher is rougher.
        persistence: f64 = float(0.6, [0.3, 0.85], [0.0, 1.0], ""),
        /// Finest lattice spacing, in metres. The lattice has 2^L + 1 points per side with L = ceil(log2(world size / cell_m)), at most 2^12.
        cell_m: f64 = float(8.0, [1.0, 64.0], [0.01, 1_000_000.0], "m") as "Finest cell",
        /// Half the peak-to-trough amplitude, as a fraction of the graph's height range.
        amplitude: f64 = float(0.5, [0.0, 1.0], [0.0, 100.0], ""),
        /// Mean height, as a fraction of the graph's height range.
        base: f64 = float(0.5, [0.0, 1.0], [-100.0, 100.0], ""),
    }
}

crate::node! {
    /// Rough, fractal mountain terrain with random peaks and valleys at every scale.
    /// The diamond-square algorithm of Olsen 2004: random corners, then alternating diamond steps
    /// (square centres = mean of 4 corners + random offset) and square steps (edge midpoints = mean
    /// of their neighbours + offset), halving the step and multiplying the offset range by
    /// `persistence` each time. Resolution independence: the algorithm is non-local, so it runs on
    /// a lattice fixed in world space — 2^L + 1 points per side spanning the world, L =
    /// ceil(log2(world size / cell_m)) capped at 12 — never on the output grid; its random offsets
    /// are hashed from each point's position on a 2^16 master lattice, so coarse levels do not
    /// change with cell_m either. The lattice is stretched so its lowest point is −1 and its
    /// highest +1. The output samples that lattice bilinearly at the cell centres where cells are
    /// no wider than the lattice's; wider cells take the mean of the bilinear surface over their
    /// area (exactly, by the hat functions' integrals), so a 256² preview is what a 4096² build
    /// averages to.
    pub struct DiamondSquare {
        id: "diamond_square",
        label: "Diamond-square",
        category: Generator,
        version: 1,
        params: DiamondSquareParams,
        inputs: DiamondSquareIn {
        },
        outputs: DiamondSquareOut {
            /// Heights in metres.
            out: height,
        },
    }
}

/// Levels of the master lattice used for hashing (so coarse levels do not depend on `cell_m`).
const MASTER_LEVELS: u32 = 16;
/// Largest lattice: 2^12 + 1 points per side (about 64 MiB).
const MAX_LEVELS: u32 = 12;

/// The lattice values, `(2^levels + 1)²`, stretched to exactly [−1, 1].
fn lattice(levels: u32, persistence: f32, seed: u32, ctx: &EvalCtx) -> Result<Vec<f32>, NodeError> {
    let m = 1usize << levels;
    let w = m + 1;
    let mut g = vec![0.0f32; w * w];
    let shift = MASTER_LEVELS - levels;
    let rnd = |i: usize, j: usize| unit_f32(hash2(seed, (i << shift) as i32, (j << shift) as i32));
    for (i, j) in [(0, 0), (m, 0), (0, m), (m, m)] {
        g[j * w + i] = rnd(i, j);
    }
    let mut range = 1.0f32;
    let mut step = m;
    while step > 1 {
        ctx.check_cancel()?;
        let half = step / 2;
        // Diamond step (Olsen 2004 step 4): square centres = mean of 4 corners + offset.
        let rows: Vec<(usize, Vec<f32>)> = (0..m / step)
            .into_par_iter()
            .map(|bj| {
                let j = bj * step + half;
                let vals = (0..m / step)
                    .map(|bi| {
                        let i = bi * step + half;
                        let mean = 0.25
                            * (g[(j - half) * w + i - half]
                                + g[(j - half) * w + i + half]
                                + g[(j + half) * w + i - half]
                                + g[(j + half) * w + i + half]);
                        mean + range * rnd(i, j)
                    })
                    .collect();
                (j, vals)
            })
            .collect();
        for (j, vals) in rows {
            for (bi, v) in vals.into_iter().enumerate() {
                g[j * w + bi * step + half] = v;
            }
        }
        // Square step (Olsen 2004 step 5): edge midpoints = mean of their (3 or 4) neighbours + offset.
        let rows: Vec<(usize, Vec<(usize, f32)>)> = (0..=m / half)
            .into_par_iter()
            .map(|rj| {
                let j = rj * half;
                let first = if rj % 2 == 0 { half } else { 0 };
                let vals = (first..=m)
                    .step_by(step)
                    .map(|i| {
                        let mut sum = 0.0;
                        let mut count = 0.0;
                        if i >= half {
                            sum += g[j * w + i - half];
                            count += 1.0;
                        }
                        if i + half <= m {
                            sum += g[j * w + i + half];
                            count += 1.0;
                        }
                        if j >= half {
                            sum += g[(j - half) * w + i];
                            count += 1.0;
                        }
                        if j + half <= m {
                            sum += g[(j + half) * w + i];
                            count += 1.0;
                        }
                        (i, sum / count + range * rnd(i, j))
                    })
                    .collect();
                (j, vals)
            })
            .collect();
        for (j, vals) in rows {
            for (i, v) in vals {
                g[j * w + i] = v;
            }
        }
        // Olsen 2004 steps 6–7: halve the step, multiply the offset range by the persistence.
        range *= persistence;
        step = half;
        ctx.report(1.0 - step as f32 / m as f32);
    }
    // Stretch the lattice's own extremes to ±1, as diamond-square implementations usually
    // do. The lattice does not depend on the output resolution, so neither does this.
    let (lo, hi) = g
        .iter()
        .fold((f32::MAX, f32::MIN), |(a, b), &v| (a.min(v), b.max(v)));
    let scale = if hi > lo { 2.0 / (hi - lo) } else { 0.0 };
    for v in &mut g {
        *v = (*v - lo) * scale - 1.0;
    }
    Ok(g)
}

impl Node for DiamondSquare {
    fn eval(
        ctx: &EvalCtx,
        _: DiamondSquareIn,
        p: &DiamondSquareParams,
    ) -> Result<DiamondSquareOut, NodeError> {
        let seed = ctx.rng_seed(p.seed);
        let seed32 = (seed >> 32) as u32 ^ seed as u32;
        let levels = libm::log2(ctx.world.size_m / p.cell_m)
            .ceil()
            .clamp(1.0, f64::from(MAX_LEVELS)) as u32;
        let g = lattice(levels, p.persistence as f32, seed32, ctx)?;
        let m = 1usize << levels;
        let lat = Field::from_vec(m + 1, m + 1, g)
            .ok_or_else(|| NodeError::Failed("lattice size".into()))?;
        let scale = m as f64 / ctx.world.size_m;
        let span = ctx.cell_size_m() * scale;
        let v = if span > 1.0 {
            // Cells wider than the lattice's: each cell is the mean of the bilinear surface
            // over its area, so a coarse preview is what a finer build averages to.
            let weights = |c: Vec<f64>| -> Vec<(usize, Vec<f32>)> {
                c.iter()
                    .map(|c| hat_means(c * scale - span / 2.0, c * scale + span / 2.0, m))
                    .collect()
            };
            area_means(&lat, &weights(ctx.xs_m()), &weights(ctx.ys_m()))
        } else {
            let at =
                |c: Vec<f64>| -> Vec<f32> { c.iter().map(|c| (c * scale) as f32 + 0.5).collect() };
            let (xs, ys) = (at(ctx.xs_m()), at(ctx.ys_m()));
            // Lattice point k sits at world k / scale; sample_bilinear puts pixel centres at
            // k + 0.5.
            Field::from_fn(ctx.width(), ctx.height(), |x, y| {
                lat.sample_bilinear(xs[x], ys[y])
            })
        };
        Ok(DiamondSquareOut {
            out: to_heights(ctx, v, p.amplitude, p.base),
        })
    }
}

/// The means over `[a, b]` (lattice units, within `[0, m]`) of the hat functions of lattice
/// points `first, first + 1, …`: the weights that average a piecewise-linear interpolant of
/// the points over the interval exactly.
fn hat_means(a: f64, b: f64, m: usize) -> (usize, Vec<f32>) {
    let (a, b) = (a.clamp(0.0, m as f64), b.clamp(0.0, m as f64));
    // The integral of the hat centred at 0 from −∞ to t.
    let integral = |t: f64| {
        if t <= -1.0 {
            0.0
        } else if t <= 0.0 {
            0.5 * (t + 1.0) * (t + 1.0)
        } else if t <= 1.0 {
            1.0 - 0.5 * (1.0 - t) * (1.0 - t)
        } else {
            1.0
        }
    };
    let first = (a.floor() as usize).min(m);
    let last = (b.ceil() as usize).min(m);
    let len = (b - a).max(f64::MIN_POSITIVE);
    let w = (first..=last)
        .map(|k| ((integral(b - k as f64) - integral(a - k as f64)) / len) as f32)
        .collect();
    (first, w)
}

/// `lat` averaged with per-column weights `wx` and per-row weights `wy` (see [`hat_means`]):
/// the rows the output needs first, then the columns, rows in parallel.
fn area_means(lat: &Field, wx: &[(usize, Vec<f32>)], wy: &[(usize, Vec<f32>)]) -> Field {
    let lw = lat.width();
    let g = lat.data();
    let top = wy.iter().map(|(f, _)| *f).min().unwrap_or(0);
    let bottom = wy.iter().map(|(f, w)| f + w.len()).max().unwrap_or(0);
    let rows: Vec<Vec<f32>> = (top..bottom)
        .into_par_iter()
        .map(|j| {
            let row = &g[j * lw..(j + 1) * lw];
            wx.iter()
                .map(|(f, w)| w.iter().zip(&row[*f..]).map(|(a, b)| a * b).sum())
                .collect()
        })
        .collect();
    let width = wx.len();
    let data: Vec<f32> = wy
        .par_iter()
        .flat_map_iter(|(f, w)| {
            let rows = &rows;
            (0..width).map(move |x| {
                w.iter()
                    .enumerate()
                    .map(|(k, a)| a * rows[f + k - top][x])
                    .sum::<f32>()
            })
        })
        .collect();
    Field::from_vec(width, wy.len(), data).unwrap_or_else(|| Field::filled(width, wy.len(), 0.0))
}
