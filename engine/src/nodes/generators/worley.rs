//! `worley`: heights from the distances to the nearest feature points, h = c1·d1 + … + c4·d4
//! (Olsen 2004, "Voronoi diagrams"; c1 = −1, c2 = 1 gives ridged mountains).

#![expect(clippy::inline_always)] // kernel bodies are inlined into each multiversioned clone

use super::noise::{hash2, unit_f32};
use super::noise_node::to_heights;
use crate::node::{EvalCtx, Node, NodeError};
use rayon::prelude::*;

/// A run kernel: nine candidate points, positions in the cell, weights c1…c4, output.
type RunKernel = fn(&[(f32, f32); 9], &[f32], [f32; 4], &mut [f32]);

crate::choice_enum! {
    /// Distance metric.
    pub enum Metric { Euclidean = "euclidean", Manhattan = "manhattan", Chebyshev = "chebyshev" }
}

crate::params! {
    pub struct WorleyParams {
        /// Seed of this node, combined with the graph seed.
        seed: u32 = seed(0),
        /// Number of feature points over the whole world (n_peaks in Olsen 2004, 20 in its example). Points sit one per cell of a grid with cells of world_size/√n_peaks, so the count is exact on average.
        n_peaks: f64 = float(20.0, [2.0, 500.0], [1.0, 1_000_000.0], "") as "Feature points",
        /// Weight c1 of the distance to the nearest point.
        c1: f64 = float(-1.0, [-2.0, 2.0], [-100.0, 100.0], "") as "Weight c1 (nearest)",
        /// Weight c2 of the distance to the second nearest point.
        c2: f64 = float(1.0, [-2.0, 2.0], [-100.0, 100.0], "") as "Weight c2 (2nd nearest)",
        /// Weight c3 of the distance to the third nearest point.
        c3: f64 = float(0.0, [-2.0, 2.0], [-100.0, 100.0], "") as "Weight c3 (3rd nearest)",
        /// Weight c4 of the distance to the fourth nearest point.
        c4: f64 = float(0.0, [-2.0, 2.0], [-100.0, 100.0], "") as "Weight c4 (4th nearest)",
        /// How far each point may stray from its grid cell's centre: 0 = a regular grid, 1 = anywhere in the cell.
        jitter: f64 = float(1.0, [0.0, 1.0], [0.0, 1.0], ""),
        /// Distance metric: euclidean, manhattan or chebyshev.
        metric: Metric = choice(Metric::Euclidean),
        /// Height of h = 1 (distances are in grid cells), as a fraction of the graph's height range.
        amplitude: f64 = float(0.8, [0.0, 1.0], [0.0, 100.0], ""),
        /// Height of h = 0, as a fraction of the graph's height range.
        base: f64 = float(0.1, [0.0, 1.0], [-100.0, 100.0], ""),
    }
}

/// Inserts `d` into the ascending list `best` (branch-free: min/max network).
#[inline(always)]
fn insert<const K: usize>(best: &mut [f32; K], d: f32) {
    let mut t = d;
    for b in best.iter_mut() {
        let lo = b.min(t);
        t = b.max(t);
        *b = lo;
    }
}

/// Metric 0 = Euclidean (compared squared, rooted at the end), 1 = Manhattan, 2 = Chebyshev.
#[inline(always)]
fn run_body<const K: usize, const METRIC: u8>(
    cand: &[(f32, f32); 9],
    fxs: &[f32],
    c: [f32; 4],
    out: &mut [f32],
) {
    for (o, &fx) in out.iter_mut().zip(fxs) {
        let mut best = [f32::MAX; K];
        for &(px, py) in cand {
            let dx = px - fx;
            let d = match METRIC {
                0 => dx * dx + py * py,
                1 => dx.abs() + py.abs(),
                _ => dx.abs().max(py.abs()),
            };
            insert(&mut best, d);
        }
        let mut h = 0.0;
        for (k, &d) in best.iter().enumerate() {
            h += c[k] * if METRIC == 0 { d.sqrt() } else { d };
        }
        *o = h;
    }
}

/// Heights of one run of samples that share a grid cell (`fxs`: positions inside the cell).
#[cfg_attr(
    not(any(feature = "simd-max-avx2", feature = "simd-portable")),
    multiversion::multiversion(targets("x86_64+avx512f+avx512vl+avx2+fma", "x86_64+avx2+fma"))
)]
#[cfg_attr(
    all(feature = "simd-max-avx2", not(feature = "simd-portable")),
    multiversion::multiversion(targets("x86_64+avx2+fma"))
)]
fn run<const K: usize, const METRIC: u8>(
    cand: &[(f32, f32); 9],
    fxs: &[f32],
    c: [f32; 4],
    out: &mut [f32],
) {
    run_body::<K, METRIC>(cand, fxs, c, out);
}

crate::node! {
    /// Terrain made of cells around scattered points; the default weights raise sharp ridged
    /// mountains.
    /// Cellular heights from Olsen 2004's Voronoi section: h = c1·d1 + c2·d2 + c3·d3 + c4·d4, where
    /// di is the distance to the i-th nearest feature point, in grid cells. n_peaks points over the
    /// world (one jittered point per grid cell, grid-accelerated: each sample looks at the 3×3
    /// cells around it, so distances beyond one cell may be missed for the 3rd and 4th points). c1
    /// = −1, c2 = 1 gives Olsen 2004's ridged mountains. Euclidean, Manhattan or Chebyshev metric.
    /// Height = base + amplitude·h of the height range.
    pub struct Worley {
        id: "worley",
        label: "Worley / Voronoi",
        category: Generator,
        version: 1,
        params: WorleyParams,
        inputs: WorleyIn {
        },
        outputs: WorleyOut {
            /// Heights in metres.
            out: height,
        },
    }
}

impl Node for Worley {
    fn eval(ctx: &EvalCtx, _: WorleyIn, p: &WorleyParams) -> Result<WorleyOut, NodeError> {
        let seed = ctx.rng_seed(p.seed);
        let seed32 = (seed >> 32) as u32 ^ seed as u32;
        let cell_m = ctx.world.size_m / p.n_peaks.sqrt();
        let xs: Vec<f64> = ctx.xs_m().iter().map(|x| x / cell_m).collect();
        let ys: Vec<f64> = ctx.ys_m().iter().map(|y| y / cell_m).collect();
        let n = ctx.width();
        let c = [p.c1 as f32, p.c2 as f32, p.c3 as f32, p.c4 as f32];
        let jitter = p.jitter as f32;
        let point = |cx: i32, cy: i32| -> (f32, f32) {
            let h = hash2(seed32, cx, cy);
            let u = unit_f32(h) * 0.5;
            let v = unit_f32(super::noise::lattice::rehash(h, 1)) * 0.5;
            (0.5 + jitter * u, 0.5 + jitter * v)
        };
        // Cell column and position inside it, per sample: the same on every row.
        let cells: Vec<i32> = xs.iter().map(|x| x.floor() as i32).collect();
        let fxs: Vec<f32> = xs
            .iter()
            .zip(&cells)
            .map(|(x, &cx)| (x - f64::from(cx)) as f32)
            .collect();
        // Keep only as many nearest distances as the weights use.
        let used = c.iter().rposition(|&w| w != 0.0).map_or(1, |i| i + 1);
        let kernel: RunKernel = match (used, p.metric) {
            (1, Metric::Euclidean) => run::<1, 0>,
            (1, Metric::Manhattan) => run::<1, 1>,
            (1, Metric::Chebyshev) => run::<1, 2>,
            (2, Metric::Euclidean) => run::<2, 0>,
            (2, Metric::Manhattan) => run::<2, 1>,
            (2, Metric::Chebyshev) => run::<2, 2>,
            (_, Metric::Euclidean) => run::<4, 0>,
            (_, Metric::Manhattan) => run::<4, 1>,
            (_, Metric::Chebyshev) => run::<4, 2>,
        };
        let mut field = ctx.new_field(0.0);
        field.rows_mut().try_for_each(|(y, row)| {
            ctx.check_cancel()?;
            let yc = ys[y];
            let cy = yc.floor() as i32;
            let fy = (yc - f64::from(cy)) as f32;
            // Runs of samples that share a grid column see the same nine candidate points.
            let mut start = 0;
            while start < n {
                let cx = cells[start];
                let end = start + cells[start..].iter().take_while(|&&c| c == cx).count();
                // Candidate points relative to the cell (cx, cy), in cell units.
                let mut cand = [(0.0f32, 0.0f32); 9];
                for (k, (dx, dy)) in (-1..=1)
                    .flat_map(|dy| (-1..=1).map(move |dx| (dx, dy)))
                    .enumerate()
                {
                    let (px, py) = point(cx + dx, cy + dy);
                    cand[k] = (dx as f32 + px, dy as f32 + py - fy);
                }
                kernel(&cand, &fxs[start..end], c, &mut row[start..end]);
                start = end;
            }
            Ok(())
        })?;
        Ok(WorleyOut {
            out: to_heights(ctx, field, p.amplitude, p.base),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::insert;

    #[test]
    fn insertion_keeps_four_smallest_sorted() {
        let mut b = [f32::MAX; 4];
        let mut two = [f32::MAX; 2];
        for d in [5.0, 1.0, 4.0, 2.0] {
            insert(&mut two, d);
        }
        assert_eq!(two, [1.0, 2.0]);
        for d in [5.0, 1.0, 4.0, 2.0, 9.0, 0.5, 3.0] {
            insert(&mut b, d);
        }
        assert_eq!(b, [0.5, 1.0, 2.0, 3.0]);
    }
}
