//! `slope_warp`: push terrain along its own (smoothed) gradient.

use crate::field::blur::gaussian_at;
use crate::field::derive::gradient;
use crate::field::Field;
use crate::node::{Category, EvalCtx, Inputs, Node, NodeError, NodeSpec, PortSpec};

crate::params! {
    pub struct SlopeWarpParams {
        /// Largest displacement, in metres (reached on steep slopes).
        amount_m: f64 = float(50.0, [0.0, 500.0], [-1_000_000.0, 1_000_000.0], "m"),
        /// Radius of the smoothing applied before taking the gradient, in metres.
        smoothing_m: f64 = float(40.0, [0.0, 500.0], [0.0, 1_000_000.0], "m"),
    }
}

/// Slope warp.
pub struct SlopeWarp;

impl Node for SlopeWarp {
    type Params = SlopeWarpParams;
    /// Measured: 3.5 fields of scratch at 1024² (peak RSS, docs/reliability.md), rounded up.
    const SCRATCH_FIELDS: u32 = 4;
    const SPEC: NodeSpec = NodeSpec {
        id: "slope_warp",
        label: "Slope warp",
        category: Category::Warp,
        version: 1,
        doc: "Each cell takes the height found amount_m · sin(θ) metres uphill of it, where θ and the uphill direction come from the gradient of the terrain (or of the optional guide) blurred with radius smoothing_m. Ridges creep downhill and valleys widen; a negative amount pulls the other way. Zero amount returns the input unchanged.",
        inputs: &[
            PortSpec::height("in", "Terrain to warp."),
            PortSpec::height("guide", "Terrain whose slopes drive the warp (default: the input).").optional(),
        ],
        outputs: &[PortSpec::height("out", "Warped terrain.")],
    };

    fn footprint(p: &SlopeWarpParams, cell_m: f64, _n: usize) -> crate::node::Footprint {
        crate::node::Footprint::Stencil(
            crate::field::blur::support_px(p.smoothing_m / 2.0 / cell_m)
                + 1
                + (1.5 * p.amount_m.abs() / cell_m).ceil() as usize
                + 2,
        )
    }

    fn eval(ctx: &EvalCtx, inputs: &Inputs, p: &SlopeWarpParams) -> Result<Vec<Field>, NodeError> {
        let src = inputs.required(0)?;
        if p.amount_m == 0.0 {
            return Ok(vec![src.clone()]);
        }
        let guide = inputs.get(1).unwrap_or(src);
        let cell = ctx.cell_size_m();
        let smooth = gaussian_at(guide, p.smoothing_m / 2.0 / cell, ctx.origin());
        let (gx, gy) = gradient(&smooth, cell);
        let px = (p.amount_m / cell) as f32;
        // g / sqrt(1 + |g|²) = sin(θ) · (unit uphill direction).
        let norm = Field::zip_map(&gx, &gy, |a, b| px / (1.0 + a * a + b * b).sqrt());
        let dx = Field::zip_map(&gx, &norm, |g, k| g * k);
        let dy = Field::zip_map(&gy, &norm, |g, k| g * k);
        ctx.check_cancel()?;
        Ok(vec![super::displace(src, &dx, &dy)])
    }
}
