//! `constant`: a flat terrain at a given height.

use crate::field::Field;
use crate::node::{Category, EvalCtx, Inputs, Node, NodeError, NodeSpec, PortSpec};

crate::params! {
    pub struct ConstantParams {
        /// Height of the flat terrain, in metres.
        height_m: f64 = float(0.0, [0.0, 2000.0], [-100_000.0, 100_000.0], "m"),
    }
}

/// A flat terrain.
pub struct Constant;

impl Node for Constant {
    type Params = ConstantParams;
    const SPEC: NodeSpec = NodeSpec {
        id: "constant",
        label: "Constant",
        category: Category::Generator,
        version: 1,
        doc: "A flat terrain at `height_m` metres.",
        inputs: &[],
        outputs: &[PortSpec::height("out", "The flat terrain.")],
    };

    fn eval(ctx: &EvalCtx, _: &Inputs, p: &ConstantParams) -> Result<Vec<Field>, NodeError> {
        Ok(vec![ctx.new_field(p.height_m as f32)])
    }
}
