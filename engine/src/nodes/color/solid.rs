//! `solid_color`: one colour everywhere.

use super::palette::parse_hex;
use crate::field::Field;
use crate::node::{EvalCtx, Node, NodeError};

crate::params! {
    pub struct SolidColorParams {
        /// The colour, sRGB hex "#rrggbb" as a colour picker shows it.
        color: String = text("#f4f6f8") as "Colour",
    }
}

crate::node! {
    /// One colour everywhere (given in sRGB hex, output in linear RGB): snow, water or a tint to
    /// blend over another colour map by a mask.
    pub struct SolidColor {
        id: "solid_color",
        label: "Solid colour",
        category: Color,
        version: 1,
        params: SolidColorParams,
        inputs: SolidColorIn {},
        outputs: SolidColorOut {
            /// The colour, linear RGB.
            out: color,
        },
    }
}

impl Node for SolidColor {
    fn eval(
        ctx: &EvalCtx,
        _: SolidColorIn,
        p: &SolidColorParams,
    ) -> Result<SolidColorOut, NodeError> {
        let c = parse_hex(p.color.trim())
            .map_err(|e| NodeError::Failed(format!("parameter \"color\": {e}")))?;
        let planes = c.map(|v| ctx.new_field(v));
        let out = Field::from_planes(&planes)
            .ok_or_else(|| NodeError::Failed("internal error: colour planes differ".into()))?;
        Ok(SolidColorOut { out })
    }
}
