//! `to_mask`: turn heights into a mask by their position in a band of the height range.

use crate::node::{EvalCtx, Node, NodeError};

crate::params! {
    pub struct ToMaskParams {
        /// Height that maps to 0, as a fraction of the graph's height range.
        low: f64 = float(0.0, [0.0, 1.0], [-100.0, 100.0], ""),
        /// Height that maps to 1, as a fraction of the graph's height range.
        high: f64 = float(1.0, [0.0, 1.0], [-100.0, 100.0], ""),
    }
}

crate::node! {
    /// Height to mask.
    pub struct ToMask {
        id: "to_mask",
        label: "Height to mask",
        category: Mask,
        version: 1,
        doc: "mask = clamp((h − low)/(high − low), 0, 1) with low and high as fractions of the graph's height range: the explicit way to use heights where a mask is expected. A step at `low` when low == high.",
        params: ToMaskParams,
        inputs: ToMaskIn {
            /// Terrain.
            r#in: height,
        },
        outputs: ToMaskOut {
            /// Mask in [0, 1].
            out: mask,
        },
    }
}

impl Node for ToMask {
    fn eval(ctx: &EvalCtx, inputs: ToMaskIn, p: &ToMaskParams) -> Result<ToMaskOut, NodeError> {
        let lo = ctx.world.relative_to_m(p.low) as f32;
        let hi = ctx.world.relative_to_m(p.high) as f32;
        let input = inputs.r#in;
        // `max(0.0)` before `min(1.0)` also maps NaN to 0: masks must stay in [0, 1].
        let out = if hi > lo {
            let inv = 1.0 / (hi - lo);
            input.map(|h| crate::node::unit((h - lo) * inv))
        } else {
            input.map(|h| f32::from(u8::from(h >= lo)))
        };
        Ok(ToMaskOut { out })
    }
}
