//! `slope_warp`: push terrain along its own (smoothed) gradient.

use crate::field::blur::gaussian_at;
use crate::field::derive::gradient;
use crate::field::Field;
use crate::node::{EvalCtx, Node, NodeError};

crate::params! {
    pub struct SlopeWarpParams {
        /// Largest displacement, in metres (reached on steep slopes).
        amount_m: f64 = float(50.0, [0.0, 500.0], [-1_000_000.0, 1_000_000.0], "m"),
        /// Radius of the smoothing applied before taking the gradient, in metres.
        smoothing_m: f64 = float(40.0, [0.0, 500.0], [0.0, 1_000_000.0], "m"),
    }
}

crate::node! {
    /// Slides the terrain along its own slopes, softening ridges and widening valleys (or the
    /// reverse).
    /// Each cell takes the height found amount_m · sin(θ) metres uphill of it, where θ and the
    /// uphill direction come from the gradient of the terrain (or of the optional guide) blurred
    /// with radius smoothing_m. Ridges creep downhill and valleys widen; a negative amount pulls
    /// the other way. Zero amount returns the input unchanged.
    pub struct SlopeWarp {
        id: "slope_warp",
        label: "Slope warp",
        category: Warp,
        version: 1,
        params: SlopeWarpParams,
        inputs: SlopeWarpIn {
            /// Terrain to warp.
            r#in: height,
            /// Terrain whose slopes drive the warp (default: the input).
            guide: height (optional),
        },
        outputs: SlopeWarpOut {
            /// Warped terrain.
            out: height,
        },
    }
}

impl Node for SlopeWarp {
    /// The peak RSS measured at 1024², in fields, rounded up (docs/reliability.md).
    const SCRATCH_FIELDS: u32 = 4;

    fn footprint(p: &SlopeWarpParams, cell_m: f64, _n: usize) -> crate::node::Footprint {
        crate::node::Footprint::Stencil(
            crate::field::blur::support_px(p.smoothing_m / 2.0 / cell_m)
                + 1
                + (1.5 * p.amount_m.abs() / cell_m).ceil() as usize
                + 2,
        )
    }

    fn eval(
        ctx: &EvalCtx,
        inputs: SlopeWarpIn,
        p: &SlopeWarpParams,
    ) -> Result<SlopeWarpOut, NodeError> {
        let src = inputs.r#in;
        if p.amount_m == 0.0 {
            return Ok(SlopeWarpOut { out: src.clone() });
        }
        let guide = inputs.guide.unwrap_or(src);
        let cell = ctx.cell_size_m();
        let smooth = gaussian_at(guide, p.smoothing_m / 2.0 / cell, ctx.origin());
        let (gx, gy) = gradient(&smooth, cell);
        let px = (p.amount_m / cell) as f32;
        // g / sqrt(1 + |g|²) = sin(θ) · (unit uphill direction).
        let norm = Field::zip_map(&gx, &gy, |a, b| px / (1.0 + a * a + b * b).sqrt());
        let dx = Field::zip_map(&gx, &norm, |g, k| g * k);
        let dy = Field::zip_map(&gy, &norm, |g, k| g * k);
        ctx.check_cancel()?;
        Ok(SlopeWarpOut {
            out: super::displace(src, &dx, &dy),
        })
    }
}
