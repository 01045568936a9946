//! `sky_view`: how much of the sky a cell sees — ambient occlusion and cavity maps.

use crate::field::blur::{gaussian_at, support_px};
use crate::field::Field;
use crate::node::{unit, EvalCtx, Footprint, Node, NodeError};

/// Samples along each direction, evenly spread over the radius: the same places in metres at
/// every resolution.
const STEPS: usize = 32;

crate::params! {
    pub struct SkyViewParams {
        /// How far a cell looks for a horizon, in metres: small (10–50 m) for a cavity map,
        /// large (200–2000 m) for valley-scale ambient occlusion.
        radius_m: f64 = float(300.0, [5.0, 3000.0], [0.001, 1.0e6], "m") as "Radius",
        /// Directions the horizon is searched in (evenly spaced around the compass).
        directions: i64 = int(16, [4, 64], [1, 256], "") as "Directions",
        /// Contrast: the output is the sky view factor raised to this power.
        contrast: f64 = float(1.0, [0.25, 8.0], [0.0, 100.0], "") as "Contrast",
        /// Relief finer than this is smoothed away before the horizons are searched, in metres
        /// (a Gaussian of σ = detail_m / 2); at least one sample spacing (radius_m / 32), which
        /// is what 0 gives.
        detail_m: f64 = float(0.0, [0.0, 500.0], [0.0, 10_000_000.0], "m") as "Smallest detail",
    }
}

crate::node! {
    /// How much open sky each spot sees: dark in valleys, pits and at cliff feet, for ambient
    /// occlusion.
    /// The sky view factor of every cell (Dozier & Frew 1990): for a horizontal surface, the mean
    /// over directions of cos²(H), where H is the angle of the highest horizon found within
    /// radius_m in that direction (0 when nothing rises above the cell). 1 on open ground and
    /// crests, lower in valleys, pits and at the foot of cliffs: an ambient occlusion map, or with
    /// a small radius a cavity map. Horizons are searched along directions evenly spaced around the
    /// compass, 32 samples evenly spread over the radius (the same places in metres at every
    /// resolution), heights read bilinearly from the terrain smoothed over one sample spacing
    /// (radius_m / 32) or over detail_m if larger (a Gaussian of σ = half of it), so that a finer
    /// grid adds no horizons a coarser one cannot see as long as the coarser grid's cells are no
    /// larger than that distance — set detail_m to a few of the preview's cells for a preview that
    /// predicts the build; beyond the map edge the terrain is mirrored. The horizons are searched
    /// on a grid whose cells are no wider than a quarter of that smoothing distance (the means
    /// of blocks of the map's cells, brought back bilinearly), which leaves nothing finer to
    /// find and costs a 64th at 4096² for 150 m. The output is the factor
    /// raised to contrast. Distances are in metres, so the map is the same at every resolution.
    pub struct SkyView {
        id: "sky_view",
        label: "Sky view (ambient occlusion)",
        category: Mask,
        version: 2,
        params: SkyViewParams,
        inputs: SkyViewIn {
            /// Terrain.
            r#in: height,
        },
        outputs: SkyViewOut {
            /// Sky view factor in [0, 1] (1 = the whole sky), raised to contrast.
            out: mask,
        },
        traits: crate::node::Traits {
            parity: crate::node::Parity::Within(0.01),
            ..crate::node::Traits::DEFAULT
        },
    }
}

impl Node for SkyView {
    /// The smoothed terrain.
    const SCRATCH_FIELDS: u32 = 1;

    fn footprint(p: &SkyViewParams, cell_m: f64, n: usize) -> Footprint {
        let smoothing = support_px(smoothing_m(p) / 2.0 / cell_m);
        // The coarse grid adds up to a block to align on, and a block on each side of the
        // one a cell is brought back from.
        let blocks = 3 * coarse_factor(p, cell_m, n);
        Footprint::Stencil((p.radius_m / cell_m).ceil() as usize + 2 + smoothing + blocks)
    }

    fn eval(ctx: &EvalCtx, inputs: SkyViewIn, p: &SkyViewParams) -> Result<SkyViewOut, NodeError> {
        let cell = ctx.cell_size_m();
        // Detail finer than the samples' spacing is smoothed away first (a Gaussian of radius
        // one spacing), so that a finer grid does not add horizons a coarser one cannot see.
        let src = gaussian_at(inputs.r#in, smoothing_m(p) / 2.0 / cell, ctx.origin());
        let directions = p.directions.max(1) as usize;
        let k = coarse_factor(p, cell, ctx.resolution);
        let out = if k > 1 {
            coarse_sky_view(&src, ctx.origin(), k, cell, (p.radius_m, directions))
        } else {
            sky_view(&src, cell, p.radius_m, directions)
        };
        ctx.check_cancel()?;
        let contrast = p.contrast as f32;
        Ok(SkyViewOut {
            out: if contrast == 1.0 {
                out
            } else {
                out.map(|v| unit(libm::powf(v, contrast)))
            },
        })
    }
}

/// The distance relief is smoothed over before the horizon search: one sample spacing, or
/// detail_m if larger.
fn smoothing_m(p: &SkyViewParams) -> f64 {
    (p.radius_m / STEPS as f64).max(p.detail_m)
}

/// How many cells per side of the grid the horizons are searched on: the largest power of
/// two whose cells are no wider than a quarter of the smoothing distance (half the σ of the
/// Gaussian the terrain was smoothed with, which leaves nothing finer to sample) and that
/// divides the resolution, so the coarse cells line up with the map and with every window.
fn coarse_factor(p: &SkyViewParams, cell_m: f64, resolution: usize) -> usize {
    let mut k = 1;
    while (2 * k) as f64 * cell_m <= smoothing_m(p) / 4.0 && resolution.is_multiple_of(2 * k) {
        k *= 2;
    }
    k
}

/// [`sky_view`] of `f` (a window at `origin` of the map) computed on the means of its
/// `k × k` blocks aligned on the map's grid, brought back bilinearly: the same values, cell
/// for cell, in every window that holds the blocks a cell reads. Cells too close to the
/// window's edges to have them are the ones a window's footprint leaves out.
fn coarse_sky_view(
    f: &Field,
    (ox, oy): (usize, usize),
    k: usize,
    cell_m: f64,
    (radius_m, directions): (f64, usize),
) -> Field {
    let (w, h) = (f.width(), f.height());
    // Where the first whole block starts in the window, and how many there are.
    let (ax, ay) = ((k - ox % k) % k, (k - oy % k) % k);
    let (nx, ny) = (w.saturating_sub(ax) / k, h.saturating_sub(ay) / k);
    if nx < 2 || ny < 2 {
        return sky_view(f, cell_m, radius_m, directions);
    }
    let data = f.data();
    let area = (k * k) as f32;
    let blocks = Field::from_fn(nx, ny, |cx, cy| {
        let (x0, y0) = (ax + cx * k, ay + cy * k);
        let sum: f32 = (y0..y0 + k)
            .map(|y| data[y * w + x0..y * w + x0 + k].iter().sum::<f32>())
            .sum();
        sum / area
    });
    let coarse = sky_view(&blocks, cell_m * k as f64, radius_m, directions);
    // Per cell along one axis: the two blocks around it and the weight of the second.
    // (x − a + 0.5) / k is exact for a power of two k, so every window finds the same.
    let axis = |n: usize, a: usize, blocks: usize| -> Vec<(usize, usize, f32)> {
        (0..n)
            .map(|x| {
                let u =
                    ((x as f64 - a as f64 + 0.5) / k as f64 - 0.5).clamp(0.0, (blocks - 1) as f64);
                let i = u.floor() as usize;
                (i, (i + 1).min(blocks - 1), (u - i as f64) as f32)
            })
            .collect()
    };
    let (bx, by) = (axis(w, ax, nx), axis(h, ay, ny));
    let c = coarse.data();
    Field::from_fn(w, h, |x, y| {
        let ((x0, x1, tx), (y0, y1, ty)) = (bx[x], by[y]);
        let top = c[y0 * nx + x0] + (c[y0 * nx + x1] - c[y0 * nx + x0]) * tx;
        let bottom = c[y1 * nx + x0] + (c[y1 * nx + x1] - c[y1 * nx + x0]) * tx;
        top + (bottom - top) * ty
    })
}

/// One sample along a direction: the cell offset of its bilinear footprint's corner, the
/// weights inside it, and its distance in metres. Offsets depend only on the direction and
/// the step, never on the cell, so a window computes exactly what the whole map does.
#[derive(Clone, Copy)]
struct Tap {
    ix: isize,
    iy: isize,
    tx: f32,
    ty: f32,
    distance_m: f32,
}

/// The sky view factor of every cell of `f` (see the node's doc).
#[must_use]
pub fn sky_view(f: &Field, cell_m: f64, radius_m: f64, directions: usize) -> Field {
    let (w, h) = (f.width(), f.height());
    let reach = (radius_m / cell_m).max(0.0);
    let step = reach / STEPS as f64;
    let taps: Vec<Tap> = (0..directions)
        .flat_map(|k| {
            let a = std::f64::consts::TAU * k as f64 / directions as f64;
            (1..=STEPS).map(move |s| {
                let t = step * s as f64;
                let (ox, oy) = (a.cos() * t, a.sin() * t);
                let (fx, fy) = (ox.floor(), oy.floor());
                Tap {
                    ix: fx as isize,
                    iy: fy as isize,
                    tx: (ox - fx) as f32,
                    ty: (oy - fy) as f32,
                    distance_m: (t * cell_m) as f32,
                }
            })
        })
        .collect();
    // Cells whose every tap lies on the map read the heights directly; the others mirror.
    let margin = taps
        .iter()
        .map(|t| t.ix.abs().max(t.iy.abs()) + 1)
        .max()
        .unwrap_or(1);
    let (wi, hi) = (w as isize, h as isize);
    let data = f.data();
    Field::from_fn(w, h, |x, y| {
        let z0 = data[y * w + x];
        let (x, y) = (x as isize, y as isize);
        let inside = x >= margin && y >= margin && x + margin < wi && y + margin < hi;
        let mut sum = 0.0f32;
        for dir in taps.chunks(STEPS) {
            let best = if inside {
                horizon(dir, z0, |t| {
                    let i = ((y + t.iy) * wi + x + t.ix) as usize;
                    [data[i], data[i + 1], data[i + w], data[i + w + 1]]
                })
            } else {
                horizon(dir, z0, |t| {
                    let (x0, y0) = (x + t.ix, y + t.iy);
                    [
                        f.get_reflected(x0, y0),
                        f.get_reflected(x0 + 1, y0),
                        f.get_reflected(x0, y0 + 1),
                        f.get_reflected(x0 + 1, y0 + 1),
                    ]
                })
            };
            // cos²(H) = 1 / (1 + tan²(H)).
            sum += 1.0 / (1.0 + best * best);
        }
        unit(sum / directions.max(1) as f32)
    })
}

/// The highest tangent of the elevation angle over one direction's taps, seen from height
/// `z0`; `corners` gives the four heights around a tap.
#[inline]
fn horizon(dir: &[Tap], z0: f32, corners: impl Fn(&Tap) -> [f32; 4]) -> f32 {
    let mut best = 0.0f32;
    for t in dir {
        let [a, b, c, d] = corners(t);
        let top = a + (b - a) * t.tx;
        let bottom = c + (d - c) * t.tx;
        let z = top + (bottom - top) * t.ty;
        best = best.max((z - z0) / t.distance_m);
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Flat ground sees the whole sky; the floor of a V-shaped valley with walls at α sees
    /// mean over directions θ of 1 / (1 + tan²α·cos²θ) (the walls rise at tan α·|cos θ| along
    /// a ray at θ to the valley's axis); a crest sees the whole sky.
    #[test]
    fn flat_ground_valleys_and_crests() {
        let n = 41;
        let flat = Field::filled(n, n, 100.0);
        assert!(sky_view(&flat, 10.0, 100.0, 16)
            .data()
            .iter()
            .all(|&v| v == 1.0));
        let tan_a = 30f32.to_radians().tan();
        let valley = Field::from_fn(n, n, |x, _| (x as f32 - 20.0).abs() * 10.0 * tan_a);
        let sv = sky_view(&valley, 10.0, 100.0, 16);
        let want: f32 = (0..16)
            .map(|k| {
                let c = (std::f32::consts::TAU * k as f32 / 16.0).cos();
                1.0 / (1.0 + tan_a * tan_a * c * c)
            })
            .sum::<f32>()
            / 16.0;
        let got = sv.data()[20 * n + 20];
        assert!((got - want).abs() < 1e-4, "valley floor: {got} vs {want}");
        let ridge = Field::from_fn(n, n, |x, _| -(x as f32 - 20.0).abs() * 10.0 * tan_a);
        assert_eq!(sky_view(&ridge, 10.0, 100.0, 16).data()[20 * n + 20], 1.0);
    }

    /// Horizons searched on a coarse grid give, in any window of the map, the whole map's
    /// values bit for bit wherever the window holds what a cell reads (its footprint), the
    /// map's edges included; and they are within 0.01 of the horizons searched on every cell
    /// of a terrain with nothing finer than the coarse cells.
    #[test]
    fn coarse_horizons_are_the_same_in_every_window_and_close_to_fine_ones() {
        let n = 96;
        let f = Field::from_fn(n, n, |x, y| {
            let (x, y) = (x as f32, y as f32);
            (x * 0.09).sin() * 60.0 + (y * 0.07).cos() * 45.0 + x * y * 0.01
        });
        let (k, cell, radius) = (4, 10.0, 100.0);
        let whole = coarse_sky_view(&f, (0, 0), k, cell, (radius, 8));
        // Reach: the radius, and three blocks (see `footprint`).
        let m = 10 + 3 * k;
        for (ox, oy, w, h) in [(13, 22, 61, 58), (37, 41, n - 37, n - 41)] {
            let win = Field::from_fn(w, h, |x, y| f.data()[(oy + y) * n + ox + x]);
            let part = coarse_sky_view(&win, (ox, oy), k, cell, (radius, 8));
            let (x1, y1) = (
                if ox + w == n { w } else { w - m },
                if oy + h == n { h } else { h - m },
            );
            for y in m..y1 {
                for x in m..x1 {
                    let (a, b) = (part.data()[y * w + x], whole.data()[(oy + y) * n + ox + x]);
                    assert_eq!(
                        a.to_bits(),
                        b.to_bits(),
                        "window at ({ox}, {oy}), cell ({x}, {y})"
                    );
                }
            }
        }
        let fine = sky_view(&f, cell, radius, 8);
        let mean = fine
            .data()
            .iter()
            .zip(whole.data())
            .map(|(a, b)| (a - b).abs())
            .sum::<f32>()
            / (n * n) as f32;
        assert!(mean < 0.01, "coarse vs fine: mean |Δ| {mean}");
    }
}
