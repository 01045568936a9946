//! `invert`: mirror heights within the graph's height range (peaks become valleys).

use crate::node::{EvalCtx, NoParams, Node, NodeError};

crate::node! {
    /// Turns the terrain upside down: peaks become pits and valleys become ridges.
    /// Mirrors heights within the graph's height range: h' = height_min_m + height_max_m − h.
    pub struct Invert {
        id: "invert",
        label: "Invert",
        category: Filter,
        version: 1,
        params: NoParams,
        inputs: InvertIn {
            /// Terrain to invert.
            r#in: height,
        },
        outputs: InvertOut {
            /// Inverted terrain.
            out: height,
        },
    }
}

impl Node for Invert {
    fn eval(ctx: &EvalCtx, inputs: InvertIn, _: &NoParams) -> Result<InvertOut, NodeError> {
        let sum = (ctx.world.height_min_m + ctx.world.height_max_m) as f32;
        Ok(InvertOut {
            out: inputs.r#in.map(|h| sum - h),
        })
    }
}
