//! `blend`: the weighted combination α·A + (1 − α)·B of Olsen 2004, optionally per cell by a mask.

use crate::field::Field;
use crate::node::{Category, EvalCtx, Inputs, Node, NodeError, NodeSpec, PortSpec};

crate::params! {
    pub struct BlendParams {
        /// Weight α of input `a` (Olsen 2004 uses α = 0.66 to combine diamond-square and Voronoi). Ignored where the `alpha` mask is connected.
        alpha: f64 = float(0.66, [0.0, 1.0], [0.0, 1.0], ""),
    }
}

/// Weighted blend of two terrains.
pub struct Blend;

impl Node for Blend {
    type Params = BlendParams;
    const SPEC: NodeSpec = NodeSpec {
        id: "blend",
        label: "Weighted blend",
        category: Category::Combine,
        version: 1,
        doc: "Weighted combination out = α·a + (1 − α)·b (Olsen 2004, \"combination\" of diamond-square and Voronoi terrains). α is the `alpha` parameter, or the `alpha` mask per cell when that input is connected.",
        inputs: &[
            PortSpec::height("a", "Terrain weighted by α."),
            PortSpec::height("b", "Terrain weighted by 1 − α."),
            PortSpec::mask("alpha", "Optional per-cell α; overrides the parameter.").optional(),
        ],
        outputs: &[PortSpec::height("out", "The blend, in metres.")],
    };

    fn eval(_: &EvalCtx, inputs: &Inputs, p: &BlendParams) -> Result<Vec<Field>, NodeError> {
        let a = inputs.required(0)?;
        let b = inputs.required(1)?;
        let out = if let Some(mask) = inputs.get(2) {
            // α·a + (1 − α)·b == b + α·(a − b)
            Field::zip3_map(b, a, mask, super::lerp::lerp)
        } else {
            let alpha = p.alpha as f32;
            Field::zip_map(a, b, |x, y| alpha * x + (1.0 - alpha) * y)
        };
        Ok(vec![out])
    }
}
