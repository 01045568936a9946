//! `blend`: the weighted combination α·A + (1 − α)·B of Olsen 2004, optionally per cell by a mask.

use crate::field::Field;
use crate::node::{EvalCtx, Node, NodeError};

crate::params! {
    pub struct BlendParams {
        /// Weight α of input `a` (Olsen 2004 uses α = 0.66 to combine diamond-square and Voronoi). Ignored where the `alpha` mask is connected.
        alpha: f64 = float(0.66, [0.0, 1.0], [0.0, 1.0], ""),
    }
}

crate::node! {
    /// Mixes two whole terrains in a fixed proportion, or by a mask that varies it from place to
    /// place.
    /// Weighted combination out = α·a + (1 − α)·b (Olsen 2004, "combination" of diamond-square and
    /// Voronoi terrains). α is the `alpha` parameter, or the `alpha` mask per cell when that input
    /// is connected.
    pub struct Blend {
        id: "blend",
        label: "Weighted blend",
        category: Combine,
        version: 1,
        params: BlendParams,
        inputs: BlendIn {
            /// Terrain weighted by α.
            a: height,
            /// Terrain weighted by 1 − α.
            b: height,
            /// Optional per-cell α; overrides the parameter.
            alpha: mask (optional),
        },
        outputs: BlendOut {
            /// The blend, in metres.
            out: height,
        },
    }
}

impl Node for Blend {
    fn eval(_: &EvalCtx, inputs: BlendIn, p: &BlendParams) -> Result<BlendOut, NodeError> {
        let a = inputs.a;
        let b = inputs.b;
        let out = if let Some(mask) = inputs.alpha {
            // α·a + (1 − α)·b == b + α·(a − b)
            Field::zip3_map(b, a, mask, super::lerp::lerp)
        } else {
            let alpha = p.alpha as f32;
            Field::zip_map(a, b, |x, y| alpha * x + (1.0 - alpha) * y)
        };
        Ok(BlendOut { out })
    }
}
