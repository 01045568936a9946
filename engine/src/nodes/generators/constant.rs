//! `constant`: a flat terrain at a given height.

use crate::node::{EvalCtx, Node, NodeError};

crate::params! {
    pub struct ConstantParams {
        /// Height of the flat terrain, in metres.
        height_m: f64 = float(0.0, [0.0, 2000.0], [-100_000.0, 100_000.0], "m"),
    }
}

crate::node! {
    /// A flat terrain at `height_m` metres.
    pub struct Constant {
        id: "constant",
        label: "Constant",
        category: Generator,
        version: 1,
        params: ConstantParams,
        inputs: ConstantIn {
        },
        outputs: ConstantOut {
            /// The flat terrain.
            out: height,
        },
    }
}

impl Node for Constant {
    fn eval(ctx: &EvalCtx, _: ConstantIn, p: &ConstantParams) -> Result<ConstantOut, NodeError> {
        Ok(ConstantOut {
            out: ctx.new_field(p.height_m as f32),
        })
    }
}
