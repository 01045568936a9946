//! `blur`: Gaussian blur with a radius in metres, at a cost that does not grow with the radius.

use crate::field::blur::gaussian_at;
use crate::node::{EvalCtx, Node, NodeError};

crate::params! {
    pub struct BlurParams {
        /// Blur radius in metres: twice the Gaussian's standard deviation (≈95% of the weight lies within it).
        radius_m: f64 = float(50.0, [0.0, 1000.0], [0.0, 10_000_000.0], "m"),
    }
}

crate::node! {
    /// Softens the terrain, smoothing away bumps and detail smaller than the blur radius.
    /// Gaussian blur with σ = radius_m / 2, in metres, so every resolution blurs alike. Separable;
    /// below 2 pixels a sampled Gaussian, above that three box filters of matched variance
    /// (Kovesi 2010) computed with prefix sums — the cost per sample does not depend on the radius.
    /// Mirrored borders: the mean height is preserved exactly.
    pub struct Blur {
        id: "blur",
        label: "Blur",
        category: Filter,
        version: 1,
        params: BlurParams,
        inputs: BlurIn {
            /// Terrain to blur.
            r#in: height,
        },
        outputs: BlurOut {
            /// Blurred terrain.
            out: height,
        },
    }
}

impl Node for Blur {
    fn footprint(p: &BlurParams, cell_m: f64, _n: usize) -> crate::node::Footprint {
        crate::node::Footprint::Stencil(crate::field::blur::support_px(p.radius_m / 2.0 / cell_m))
    }

    fn eval(ctx: &EvalCtx, inputs: BlurIn, p: &BlurParams) -> Result<BlurOut, NodeError> {
        Ok(BlurOut {
            out: gaussian_at(
                inputs.r#in,
                p.radius_m / 2.0 / ctx.cell_size_m(),
                ctx.origin(),
            ),
        })
    }
}
