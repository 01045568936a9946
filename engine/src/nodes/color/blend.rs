//! `color_blend`: one colour map over another, by a mask.

use crate::node::{EvalCtx, Node, NodeError};

crate::choice_enum! {
    /// How b combines with a before the mask mixes it in.
    pub enum BlendMode {
        Mix = "mix",
        Multiply = "multiply",
        Screen = "screen",
        Overlay = "overlay",
    }
}

crate::params! {
    pub struct ColorBlendParams {
        /// mix: b; multiply: a·b (darkens: shade with a mask wired into b); screen:
        /// 1 − (1 − a)(1 − b) (lightens); overlay: multiply where a < 0.5, screen above.
        mode: BlendMode = choice(BlendMode::Mix),
        /// Strength of the blend, multiplied with the mask.
        opacity: f64 = float(1.0, [0.0, 1.0], [0.0, 1.0], ""),
    }
}

crate::node! {
    /// Lays one colour map over another by a mask, with mix, multiply, screen or overlay as in
    /// image editors.
    /// Formula: out = a + m·opacity·(f(a, b) − a), channel by channel in linear RGB, with f the
    /// mode (mix: b; multiply: a·b; screen: 1 − (1 − a)(1 − b); overlay: 2ab below a = 0.5, 1 − 2(1
    /// − a)(1 − b) above). The mask defaults to 1. A mask wired into a or b is used as a grey.
    pub struct ColorBlend {
        id: "color_blend",
        label: "Blend colours",
        category: Color,
        version: 1,
        params: ColorBlendParams,
        inputs: ColorBlendIn {
            /// The base colours.
            a: color,
            /// The colours laid over a.
            b: color,
            /// Where b goes (1) and where a stays (0).
            mask: mask (optional),
        },
        outputs: ColorBlendOut {
            /// The blend, linear RGB.
            out: color,
        },
    }
}

/// `f(a, b)` of a blend mode, per channel.
#[inline]
#[must_use]
pub fn apply(mode: BlendMode, a: f32, b: f32) -> f32 {
    match mode {
        BlendMode::Mix => b,
        BlendMode::Multiply => a * b,
        BlendMode::Screen => 1.0 - (1.0 - a) * (1.0 - b),
        BlendMode::Overlay => {
            if a < 0.5 {
                2.0 * a * b
            } else {
                1.0 - 2.0 * (1.0 - a) * (1.0 - b)
            }
        }
    }
}

impl Node for ColorBlend {
    fn eval(
        _: &EvalCtx,
        inputs: ColorBlendIn,
        p: &ColorBlendParams,
    ) -> Result<ColorBlendOut, NodeError> {
        let (a, b) = (inputs.a, inputs.b);
        if a.channels() != 3 || b.channels() != 3 {
            return Err(NodeError::Failed(
                "internal error: a colour input without three channels".into(),
            ));
        }
        let (mode, opacity) = (p.mode, p.opacity as f32);
        let w = a.width();
        let n = w * a.height();
        let out = super::color_rows(w, a.height(), |y, planes| {
            let row = y * w..(y + 1) * w;
            let mask = inputs.mask.map(|m| &m.data()[row.clone()]);
            for (c, out) in planes.into_iter().enumerate() {
                let pa = &a.data()[c * n..][row.clone()];
                let pb = &b.data()[c * n..][row.clone()];
                for x in 0..w {
                    let m = mask.map_or(1.0, |m| m[x].clamp(0.0, 1.0)) * opacity;
                    out[x] = pa[x] + m * (apply(mode, pa[x], pb[x]) - pa[x]);
                }
            }
        });
        Ok(ColorBlendOut { out })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_match_their_formulas() {
        assert_eq!(apply(BlendMode::Mix, 0.2, 0.7), 0.7);
        assert!((apply(BlendMode::Multiply, 0.5, 0.5) - 0.25).abs() < 1e-7);
        assert!((apply(BlendMode::Screen, 0.5, 0.5) - 0.75).abs() < 1e-7);
        assert!((apply(BlendMode::Overlay, 0.25, 0.5) - 0.25).abs() < 1e-7);
        assert!((apply(BlendMode::Overlay, 0.75, 0.5) - 0.75).abs() < 1e-7);
        // White is the identity of multiply, black of screen.
        for a in [0.0, 0.3, 1.0] {
            assert_eq!(apply(BlendMode::Multiply, a, 1.0), a);
            assert_eq!(apply(BlendMode::Screen, a, 0.0), a);
        }
    }
}
