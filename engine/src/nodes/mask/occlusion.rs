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
    /// predicts the build; beyond the map edge the terrain is mirrored. The output is the factor
    /// raised to contrast. Distances are in metres, so the map is the same at every resolution.
    pub struct SkyView {
        id: "sky_view",
        label: "Sky view (ambient occlusion)",
        category: Mask,
        version: 1,
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

    fn footprint(p: &SkyViewParams, cell_m: f64, _n: usize) -> Footprint {
        let smoothing = support_px(smoothing_m(p) / 2.0 / cell_m);
        Footprint::Stencil((p.radius_m / cell_m).ceil() as usize + 2 + smoothing)
    }

    fn eval(ctx: &EvalCtx, inputs: SkyViewIn, p: &SkyViewParams) -> Result<SkyViewOut, NodeError> {
        let cell = ctx.cell_size_m();
        // Detail finer than the samples' spacing is smoothed away first (a Gaussian of radius
        // one spacing), so that a finer grid does not add horizons a coarser one cannot see.
        let src = gaussian_at(inputs.r#in, smoothing_m(p) / 2.0 / cell, ctx.origin());
        let out = sky_view(&src, cell, p.radius_m, p.directions.max(1) as usize);
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
}
