//! `lerp`: from terrain a to terrain b by a mask.

use crate::field::Field;
use crate::node::{EvalCtx, NoParams, Node, NodeError};

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

crate::node! {
    /// Mixes two terrains by a mask: the first where the mask is black, the second where it is
    /// white.
    /// Formula: out = a + m·(b − a): exactly a where the mask is 0, exactly b where it is 1, a
    /// linear mix between.
    pub struct Lerp {
        id: "lerp",
        label: "Lerp by mask",
        category: Combine,
        version: 1,
        params: NoParams,
        inputs: LerpIn {
            /// Terrain where the mask is 0.
            a: height,
            /// Terrain where the mask is 1.
            b: height,
            /// Mix factor in [0, 1].
            mask: mask,
        },
        outputs: LerpOut {
            /// The mix, in metres.
            out: height,
        },
    }
}

impl Node for Lerp {
    fn eval(_: &EvalCtx, inputs: LerpIn, _: &NoParams) -> Result<LerpOut, NodeError> {
        let (a, b, m) = (inputs.a, inputs.b, inputs.mask);
        Ok(LerpOut {
            out: Field::zip3_map(a, b, m, lerp),
        })
    }
}
