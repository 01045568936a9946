//! `clamp`: limit heights to a band of the graph's height range.

use crate::field::Field;
use crate::node::{Category, EvalCtx, Inputs, Node, NodeError, NodeSpec, PortSpec};

crate::params! {
    pub struct ClampParams {
        /// Lowest height kept, as a fraction of the graph's height range.
        low: f64 = float(0.0, [0.0, 1.0], [-100.0, 100.0], ""),
        /// Highest height kept, as a fraction of the graph's height range.
        high: f64 = float(1.0, [0.0, 1.0], [-100.0, 100.0], ""),
    }
}

/// Clamp heights.
pub struct Clamp;

impl Node for Clamp {
    type Params = ClampParams;
    const SPEC: NodeSpec = NodeSpec {
        id: "clamp",
        label: "Clamp",
        category: Category::Filter,
        version: 1,
        doc: "Clamps heights to [low, high] (fractions of the graph's height range). Fails if low > high.",
        inputs: &[PortSpec::height("in", "Terrain to clamp.")],
        outputs: &[PortSpec::height("out", "Clamped terrain.")],
    };

    fn eval(ctx: &EvalCtx, inputs: &Inputs, p: &ClampParams) -> Result<Vec<Field>, NodeError> {
        if p.low > p.high {
            return Err(NodeError::Failed(format!(
                "low ({}) is above high ({})",
                p.low, p.high
            )));
        }
        let lo = ctx.world.relative_to_m(p.low) as f32;
        let hi = ctx.world.relative_to_m(p.high) as f32;
        Ok(vec![inputs.required(0)?.map(|h| h.clamp(lo, hi))])
    }
}
