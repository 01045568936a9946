//! `to_mask`: turn heights into a mask by their position in a band of the height range;
//! `scalar_to_mask`: turn a measured quantity (drainage area in m², …) into a mask.

use crate::node::{EvalCtx, Node, NodeError};

crate::params! {
    pub struct ToMaskParams {
        /// Height that maps to 0, as a fraction of the graph's height range.
        low: f64 = float(0.0, [0.0, 1.0], [-100.0, 100.0], ""),
        /// Height that maps to 1, as a fraction of the graph's height range.
        high: f64 = float(1.0, [0.0, 1.0], [-100.0, 100.0], ""),
    }
}

crate::node! {
    /// Turns heights into a mask: black at a low height, white at a high one, greys between.
    /// Formula: mask = clamp((h − low)/(high − low), 0, 1) with low and high as fractions of the
    /// graph's height range: the explicit way to use heights where a mask is expected. A step at
    /// `low` when low == high.
    pub struct ToMask {
        id: "to_mask",
        label: "Height to mask",
        category: Mask,
        version: 1,
        params: ToMaskParams,
        inputs: ToMaskIn {
            /// Terrain.
            r#in: height,
        },
        outputs: ToMaskOut {
            /// Mask in [0, 1].
            out: mask,
        },
    }
}

impl Node for ToMask {
    fn eval(ctx: &EvalCtx, inputs: ToMaskIn, p: &ToMaskParams) -> Result<ToMaskOut, NodeError> {
        let lo = ctx.world.relative_to_m(p.low) as f32;
        let hi = ctx.world.relative_to_m(p.high) as f32;
        let input = inputs.r#in;
        // `max(0.0)` before `min(1.0)` also maps NaN to 0: masks must stay in [0, 1].
        let out = if hi > lo {
            let inv = 1.0 / (hi - lo);
            input.map(|h| crate::node::unit((h - lo) * inv))
        } else {
            input.map(|h| f32::from(u8::from(h >= lo)))
        };
        Ok(ToMaskOut { out })
    }
}

crate::choice_enum! {
    /// How values between `low` and `high` map onto the mask.
    pub enum ScalarScale { Linear = "linear", Log = "log" }
}

crate::params! {
    pub struct ScalarToMaskParams {
        /// Value that maps to 0, in the input's unit (m² for a drainage area).
        low: f64 = float(0.0, [0.0, 1.0e6], [-1.0e15, 1.0e15], "") as "Low",
        /// Value that maps to 1, in the input's unit.
        high: f64 = float(1.0, [0.0, 1.0e8], [-1.0e15, 1.0e15], "") as "High",
        /// `linear`: (v − low)/(high − low); `log`: ln(v/low)/ln(high/low), for quantities
        /// spanning decades such as drainage area (low and high must then be above 0).
        scale: ScalarScale = choice(ScalarScale::Linear),
    }
}

crate::node! {
    /// Turns a measured quantity, such as a drainage area in m², into a mask for selecting or
    /// blending.
    /// Formula: mask = clamp((v − low)/(high − low), 0, 1), or with scale log
    /// clamp(ln(v/low)/ln(high/low), 0, 1), with low and high in the input's own unit: the explicit
    /// way to use a measured quantity (flow_accumulation's drainage area in m², or a height in
    /// metres) where a mask is expected. A step at `low` when low == high. E.g. channels draining
    /// more than 1 km²: low 0.9e6, high 1.1e6, linear; flow_accumulation's own flow mask: low
    /// min_area_m2, high the world's area, log.
    pub struct ScalarToMask {
        id: "scalar_to_mask",
        label: "Scalar to mask",
        category: Mask,
        version: 1,
        params: ScalarToMaskParams,
        inputs: ScalarToMaskIn {
            /// The quantity (a height or mask passes unchanged).
            r#in: scalar,
        },
        outputs: ScalarToMaskOut {
            /// Mask in [0, 1].
            out: mask,
        },
    }
}

impl Node for ScalarToMask {
    fn eval(
        _: &EvalCtx,
        inputs: ScalarToMaskIn,
        p: &ScalarToMaskParams,
    ) -> Result<ScalarToMaskOut, NodeError> {
        let input = inputs.r#in;
        let (lo, hi) = (p.low, p.high);
        let out = match p.scale {
            ScalarScale::Log => {
                if lo <= 0.0 || hi <= 0.0 {
                    let name = if lo <= 0.0 { "low" } else { "high" };
                    return Err(NodeError::Failed(format!(
                        "parameter \"{name}\": scale log needs low and high above 0 (got low {lo}, high {hi})"
                    )));
                }
                if hi > lo {
                    let (l0, inv) = (lo.ln(), 1.0 / (hi / lo).ln());
                    input.map(|v| {
                        let t = (f64::from(v).max(f64::MIN_POSITIVE).ln() - l0) * inv;
                        crate::node::unit(t as f32)
                    })
                } else {
                    input.map(|v| f32::from(u8::from(f64::from(v) >= lo)))
                }
            }
            ScalarScale::Linear if hi > lo => {
                let inv = 1.0 / (hi - lo);
                input.map(|v| crate::node::unit(((f64::from(v) - lo) * inv) as f32))
            }
            ScalarScale::Linear => input.map(|v| f32::from(u8::from(f64::from(v) >= lo))),
        };
        Ok(ScalarToMaskOut { out })
    }
}
