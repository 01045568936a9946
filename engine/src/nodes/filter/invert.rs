//! `invert`: mirror heights within the graph's height range (peaks become valleys).

use crate::field::Field;
use crate::node::{Category, EvalCtx, Inputs, NoParams, Node, NodeError, NodeSpec, PortSpec};

/// Invert heights.
pub struct Invert;

impl Node for Invert {
    type Params = NoParams;
    const SPEC: NodeSpec = NodeSpec {
        id: "invert",
        label: "Invert",
        category: Category::Filter,
        version: 1,
        doc:
            "Mirrors heights within the graph's height range: h' = height_min_m + height_max_m − h.",
        inputs: &[PortSpec::height("in", "Terrain to invert.")],
        outputs: &[PortSpec::height("out", "Inverted terrain.")],
    };

    fn eval(ctx: &EvalCtx, inputs: &Inputs, _: &NoParams) -> Result<Vec<Field>, NodeError> {
        let sum = (ctx.world.height_min_m + ctx.world.height_max_m) as f32;
        Ok(vec![inputs.required(0)?.map(|h| sum - h)])
    }
}
