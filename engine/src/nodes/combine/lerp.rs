//! `lerp`: from terrain a to terrain b by a mask.

use crate::field::Field;
use crate::node::{Category, EvalCtx, Inputs, NoParams, Node, NodeError, NodeSpec, PortSpec};

/// `a + m·(b − a)` with the mask clamped to [0, 1], exactly `a` at 0 and exactly `b` at 1.
#[inline]
#[must_use]
pub fn lerp(a: f32, b: f32, m: f32) -> f32 {
    let m = m.clamp(0.0, 1.0);
    if m >= 1.0 {
        b
    } else {
        a + m * (b - a)
    }
}

/// Lerp by mask.
pub struct Lerp;

impl Node for Lerp {
    type Params = NoParams;
    const SPEC: NodeSpec = NodeSpec {
        id: "lerp",
        label: "Lerp by mask",
        category: Category::Combine,
        version: 1,
        doc: "out = a + m·(b − a): exactly a where the mask is 0, exactly b where it is 1, a linear mix between.",
        inputs: &[
            PortSpec::height("a", "Terrain where the mask is 0."),
            PortSpec::height("b", "Terrain where the mask is 1."),
            PortSpec::mask("mask", "Mix factor in [0, 1]."),
        ],
        outputs: &[PortSpec::height("out", "The mix, in metres.")],
    };

    fn eval(_: &EvalCtx, inputs: &Inputs, _: &NoParams) -> Result<Vec<Field>, NodeError> {
        let (a, b, m) = (
            inputs.required(0)?,
            inputs.required(1)?,
            inputs.required(2)?,
        );
        Ok(vec![Field::zip3_map(a, b, m, lerp)])
    }
}
