//! `clamp`: limit heights to a band of the graph's height range.

use crate::node::{EvalCtx, Node, NodeError};

crate::params! {
    pub struct ClampParams {
        /// Lowest height kept, as a fraction of the graph's height range.
        low: f64 = float(0.0, [0.0, 1.0], [-100.0, 100.0], ""),
        /// Highest height kept, as a fraction of the graph's height range.
        high: f64 = float(1.0, [0.0, 1.0], [-100.0, 100.0], ""),
    }
}

crate::node! {
    /// Cuts off everything above a ceiling and fills everything below a floor, leaving flat tops
    /// and bottoms.
    /// Clamps heights to [low, high] (fractions of the graph's height range). Fails if low > high.
    pub struct Clamp {
        id: "clamp",
        label: "Clamp",
        category: Filter,
        version: 1,
        params: ClampParams,
        inputs: ClampIn {
            /// Terrain to clamp.
            r#in: height,
        },
        outputs: ClampOut {
            /// Clamped terrain.
            out: height,
        },
    }
}

impl Node for Clamp {
    fn eval(ctx: &EvalCtx, inputs: ClampIn, p: &ClampParams) -> Result<ClampOut, NodeError> {
        if p.low > p.high {
            return Err(NodeError::Failed(format!(
                "low ({}) is above high ({})",
                p.low, p.high
            )));
        }
        let lo = ctx.world.relative_to_m(p.low) as f32;
        let hi = ctx.world.relative_to_m(p.high) as f32;
        Ok(ClampOut {
            out: inputs.r#in.map(|h| h.clamp(lo, hi)),
        })
    }
}
