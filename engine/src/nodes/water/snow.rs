//! `snow`: snow cover by altitude, slope and aspect, settling in hollows.

use crate::field::blur::{gaussian_at, support_px};
use crate::field::derive::gradient;
use crate::field::Field;
use crate::node::{unit, EvalCtx, Footprint, Node, NodeError};

crate::params! {
    pub struct SnowParams {
        /// Altitude where snow begins, in metres (on a flat, or a slope facing neither towards
        /// nor away from the sun).
        snow_line_m: f64 = float(1500.0, [-500.0, 8000.0], [-1.0e6, 1.0e6], "m") as "Snow line",
        /// Height above the snow line over which the cover builds up to its full depth, in
        /// metres (below it, the snow has melted away).
        fade_m: f64 = float(300.0, [1.0, 2000.0], [0.001, 1.0e6], "m") as "Melt band",
        /// Full snow depth, in metres.
        depth_m: f64 = float(1.5, [0.0, 20.0], [0.0, 1.0e4], "m") as "Depth",
        /// Snow slides off slopes this steep or steeper, in degrees.
        max_slope_deg: f64 = float(45.0, [5.0, 89.0], [0.0, 90.0], "°") as "Max slope",
        /// The cover thins over this many degrees below max_slope_deg.
        slope_fade_deg: f64 = float(10.0, [0.0, 45.0], [0.0, 90.0], "°") as "Slope fade",
        /// Where the sun comes from, in degrees clockwise from north (up the map): 180 is the
        /// midday sun of the northern hemisphere.
        sun_azimuth_deg: f64 = float(180.0, [0.0, 360.0], [-360.0, 720.0], "°") as "Sun azimuth",
        /// How far the snow line rises on a steep slope facing the sun (and falls on one facing
        /// away), in metres, scaled by the sine of the slope.
        aspect_m: f64 = float(200.0, [0.0, 1000.0], [0.0, 1.0e5], "m") as "Aspect shift",
        /// Radius over which hollows gather snow, in metres.
        hollow_radius_m: f64 = float(60.0, [0.0, 500.0], [0.0, 1.0e5], "m") as "Hollow radius",
        /// Extra snow per metre a cell lies below its surroundings (averaged over
        /// hollow_radius_m), in metres of snow; at most twice the full depth in all.
        hollow_gain: f64 = float(0.5, [0.0, 2.0], [0.0, 100.0], "") as "Hollow gain",
    }
}

crate::node! {
    /// Snow.
    pub struct Snow {
        id: "snow",
        label: "Snow",
        category: Water,
        version: 1,
        doc: "Snow cover. By altitude: none below the snow line, building up (smoothstep) over fade_m above it to depth_m. By aspect: the line rises by aspect_m · sin(slope) on slopes facing the sun (sun_azimuth_deg, clockwise from north) and falls as much on slopes facing away, so shaded faces hold snow lower. By slope: snow slides off slopes of max_slope_deg and more (zero there) and thins (smoothstep) over slope_fade_deg below. Hollows gather snow: where snow falls, hollow_gain metres of snow per metre the cell lies below its surroundings' mean (a Gaussian over hollow_radius_m), up to twice depth_m in all. Slopes come from the real cell size and every distance is in metres, so the cover is the same at every resolution. Outputs: out = terrain + snow, depth = snow depth ÷ depth_m (at most 1), mask = 1 where the snow is at least a tenth of depth_m deep (smoothstep from 0).",
        params: SnowParams,
        inputs: SnowIn {
            /// Terrain.
            r#in: height,
        },
        outputs: SnowOut {
            /// The terrain with its snow (m).
            out: height,
            /// Snow depth ÷ depth_m, in [0, 1].
            depth: mask,
            /// Snow cover: 1 where it lies at least a tenth of depth_m deep.
            mask: mask,
        },
    }
}

/// 3t² − 2t³ on t clamped to [0, 1].
fn smooth01(t: f64) -> f64 {
    let t = t.clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

/// The snow model's parameters in the units its formula uses.
struct Model {
    line: f64,
    fade: f64,
    depth: f64,
    max_tan_slope: f64,
    /// Slope angles (radians) where the thinning starts and ends.
    slope_band: (f64, f64),
    /// The sun's direction in (east, down the rows).
    sun: (f64, f64),
    aspect: f64,
    gain: f64,
}

impl Model {
    fn new(p: &SnowParams) -> Self {
        let max = p.max_slope_deg.to_radians();
        let az = p.sun_azimuth_deg.to_radians();
        Self {
            line: p.snow_line_m,
            fade: p.fade_m.max(1e-6),
            depth: p.depth_m,
            max_tan_slope: max.tan(),
            slope_band: ((max - p.slope_fade_deg.to_radians()).max(0.0), max),
            sun: (az.sin(), -az.cos()),
            aspect: p.aspect_m,
            gain: p.hollow_gain,
        }
    }

    /// Snow depth (m) on a cell at altitude `z` with gradient `(gx, gy)` (m/m) lying `hollow`
    /// metres below its surroundings' mean.
    fn depth(&self, z: f64, (gx, gy): (f64, f64), hollow: f64) -> f64 {
        let tan = (gx * gx + gy * gy).sqrt();
        if tan >= self.max_tan_slope {
            return 0.0;
        }
        let slope = tan.atan();
        // Facing the sun: the downhill direction (−∇z) along the sun's, times sin(slope).
        let facing = if tan > 0.0 {
            -(gx * self.sun.0 + gy * self.sun.1) / tan * slope.sin()
        } else {
            0.0
        };
        let line = self.line + self.aspect * facing;
        let altitude = smooth01((z - line) / self.fade);
        if altitude <= 0.0 {
            return 0.0;
        }
        let (s0, s1) = self.slope_band;
        let stays = if s1 > s0 {
            1.0 - smooth01((slope - s0) / (s1 - s0))
        } else {
            1.0
        };
        let gathered = self.gain * hollow.max(0.0);
        ((self.depth * altitude + gathered) * stays).min(2.0 * self.depth)
    }
}

impl Node for Snow {
    /// The gradient (2) and the smoothed terrain (1), besides the outputs.
    const SCRATCH_FIELDS: u32 = 3;

    fn footprint(p: &SnowParams, cell_m: f64, _n: usize) -> Footprint {
        Footprint::Stencil(support_px(p.hollow_radius_m / 2.0 / cell_m) + 1)
    }

    fn eval(ctx: &EvalCtx, inputs: SnowIn, p: &SnowParams) -> Result<SnowOut, NodeError> {
        let src = inputs.r#in;
        let cell = ctx.cell_size_m();
        let model = Model::new(p);
        let (gx, gy) = gradient(src, cell);
        let around = gaussian_at(src, p.hollow_radius_m / 2.0 / cell, ctx.origin());
        ctx.check_cancel()?;
        let depth: Vec<f64> = (0..src.data().len())
            .map(|i| {
                let z = f64::from(src.data()[i]);
                let g = (f64::from(gx.data()[i]), f64::from(gy.data()[i]));
                model.depth(z, g, f64::from(around.data()[i]) - z)
            })
            .collect();
        let (w, h) = (src.width(), src.height());
        let size = || NodeError::Failed("internal error: field size".into());
        let full = p.depth_m.max(1e-9);
        let out = src
            .data()
            .iter()
            .zip(&depth)
            .map(|(&z, &d)| (f64::from(z) + d) as f32)
            .collect();
        let relative = depth.iter().map(|&d| unit((d / full) as f32)).collect();
        let mask = depth
            .iter()
            .map(|&d| smooth01(d / (0.1 * full)) as f32)
            .collect();
        Ok(SnowOut {
            out: Field::from_vec(w, h, out).ok_or_else(size)?,
            depth: Field::from_vec(w, h, relative).ok_or_else(size)?,
            mask: Field::from_vec(w, h, mask).ok_or_else(size)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model() -> Model {
        Model::new(&SnowParams {
            snow_line_m: 1000.0,
            fade_m: 200.0,
            depth_m: 2.0,
            max_slope_deg: 40.0,
            slope_fade_deg: 10.0,
            sun_azimuth_deg: 180.0,
            aspect_m: 300.0,
            hollow_radius_m: 50.0,
            hollow_gain: 0.5,
        })
    }

    /// Depth ≥ 0 everywhere; zero at and above the slope limit; at a fixed altitude and an
    /// aspect across the sun (east-facing, sun in the south), never deeper on a steeper slope;
    /// deeper higher up; deeper on a shaded (north-facing) slope than on a sunny one.
    #[test]
    fn depth_by_altitude_slope_and_aspect() {
        let m = model();
        for z in (800..2000).step_by(25) {
            let z = f64::from(z);
            let mut last = f64::INFINITY;
            for deg in 0..90 {
                let tan = f64::from(deg).to_radians().tan();
                // East-facing: downhill towards +x, so ∂z/∂x < 0.
                let d = m.depth(z, (-tan, 0.0), 0.0);
                assert!(d >= 0.0);
                if deg >= 40 {
                    assert_eq!(d, 0.0, "{deg}° at {z} m");
                }
                assert!(
                    d <= last + 1e-12,
                    "deeper on a steeper slope: {deg}° at {z} m"
                );
                last = d;
            }
        }
        assert!(m.depth(1300.0, (0.0, 0.0), 0.0) > m.depth(1100.0, (0.0, 0.0), 0.0));
        assert_eq!(m.depth(999.0, (0.0, 0.0), 0.0), 0.0);
        assert_eq!(m.depth(1250.0, (0.0, 0.0), 0.0), 2.0);
        // North-facing (downhill towards −y, so ∂z/∂y > 0) against south-facing, 25°.
        let t = 25f64.to_radians().tan();
        assert!(m.depth(1100.0, (0.0, t), 0.0) > m.depth(1100.0, (0.0, -t), 0.0));
        // Hollows gather snow, up to twice the depth.
        assert!(m.depth(1100.0, (0.0, 0.0), 2.0) > m.depth(1100.0, (0.0, 0.0), 0.0));
        assert_eq!(m.depth(1300.0, (0.0, 0.0), 100.0), 4.0);
    }
}
