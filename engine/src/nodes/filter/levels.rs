//! `levels`: remap an input band of heights to an output band, with gamma.

use crate::node::{EvalCtx, Node, NodeError};

crate::params! {
    pub struct LevelsParams {
        /// Input height mapped to `out_low`, as a fraction of the graph's height range.
        in_low: f64 = float(0.0, [0.0, 1.0], [-100.0, 100.0], ""),
        /// Input height mapped to `out_high`, as a fraction of the graph's height range.
        in_high: f64 = float(1.0, [0.0, 1.0], [-100.0, 100.0], ""),
        /// Gamma applied between the bands (t' = t^(1/gamma)); 1 is linear, above 1 lifts the middle.
        gamma: f64 = float(1.0, [0.2, 5.0], [0.01, 100.0], ""),
        /// Output height for `in_low`, as a fraction of the graph's height range.
        out_low: f64 = float(0.0, [0.0, 1.0], [-100.0, 100.0], ""),
        /// Output height for `in_high`, as a fraction of the graph's height range.
        out_high: f64 = float(1.0, [0.0, 1.0], [-100.0, 100.0], ""),
    }
}

crate::node! {
    /// Stretches a chosen band of heights over a new band, like the Levels tool of an image editor.
    /// Maps [in_low, in_high] to [out_low, out_high] (fractions of the graph's height range),
    /// clamping input outside the band, with a gamma curve in between: t = clamp((h −
    /// in_low)/(in_high − in_low)), out = out_low + t^(1/gamma)·(out_high − out_low). Fails if
    /// in_low == in_high.
    pub struct Levels {
        id: "levels",
        label: "Levels",
        category: Filter,
        version: 1,
        params: LevelsParams,
        inputs: LevelsIn {
            /// Terrain to remap.
            r#in: height,
        },
        outputs: LevelsOut {
            /// Remapped terrain.
            out: height,
        },
    }
}

impl Node for Levels {
    fn eval(ctx: &EvalCtx, inputs: LevelsIn, p: &LevelsParams) -> Result<LevelsOut, NodeError> {
        if p.in_low == p.in_high {
            return Err(NodeError::Failed(format!(
                "in_low and in_high are both {}: the input band is empty",
                p.in_low
            )));
        }
        let w = ctx.world;
        let il = w.relative_to_m(p.in_low) as f32;
        let inv_span = (1.0 / (w.relative_to_m(p.in_high) - w.relative_to_m(p.in_low))) as f32;
        let ol = w.relative_to_m(p.out_low) as f32;
        let os = (w.relative_to_m(p.out_high) - w.relative_to_m(p.out_low)) as f32;
        let inv_gamma = (1.0 / p.gamma) as f32;
        let input = inputs.r#in;
        // Dispatch outside the per-cell loop: the linear case avoids powf.
        let out = if inv_gamma == 1.0 {
            input.map(|h| ol + ((h - il) * inv_span).clamp(0.0, 1.0) * os)
        } else {
            input.map(|h| ol + libm::powf(((h - il) * inv_span).clamp(0.0, 1.0), inv_gamma) * os)
        };
        Ok(LevelsOut { out })
    }
}
