//! `combine`: two terrains combined sample by sample (add, multiply, screen, smooth max…).

use crate::field::Field;
use crate::node::{EvalCtx, Node, NodeError};

crate::choice_enum! {
    /// The operation.
    pub enum Mode {
        Add = "add",
        Subtract = "subtract",
        Multiply = "multiply",
        Divide = "divide",
        Min = "min",
        Max = "max",
        Difference = "difference",
        Screen = "screen",
        Overlay = "overlay",
        Power = "power",
        SmoothMin = "smooth_min",
        SmoothMax = "smooth_max",
    }
}

crate::params! {
    pub struct CombineParams {
        /// The operation, on heights relative to the graph's height range (0 = bottom, 1 = top): add a+b, subtract a−b, multiply a·b, divide a/b (b below 0.001 counts as 0.001), min, max, difference |a−b|, screen 1−(1−a)(1−b), overlay, power a^b, smooth_min, smooth_max.
        mode: Mode = choice(Mode::Add),
        /// Smooth min/max: width of the rounded blend where the inputs cross, in metres of height.
        blend_m: f64 = float(50.0, [1.0, 500.0], [0.0, 100_000.0], "m"),
        /// How much of the result replaces a: 0 keeps a, 1 is the full operation (a mask input overrides it per cell).
        strength: f64 = float(1.0, [0.0, 1.0], [0.0, 1.0], ""),
    }
}

crate::node! {
    /// Merges two terrains with an operation such as add, subtract, keep the higher or keep the
    /// lower.
    /// Combines a and b sample by sample. The operation works on heights relative to the graph's
    /// height range r = (h − height_min_m)/(height_max_m − height_min_m), so multiply, screen,
    /// overlay and power behave as in image editors whatever the range; the result maps back to
    /// metres. smooth_min/smooth_max round the crease where a and b cross over blend_m metres of
    /// height (polynomial smooth minimum). The optional mask (or `strength`) blends from a (0) to
    /// the result (1).
    pub struct Combine {
        id: "combine",
        label: "Combine",
        category: Combine,
        version: 1,
        params: CombineParams,
        inputs: CombineIn {
            /// First terrain.
            a: height,
            /// Second terrain.
            b: height,
            /// Optional strength per cell; overrides `strength`.
            mask: mask (optional),
        },
        outputs: CombineOut {
            /// The combination, in metres.
            out: height,
        },
    }
}

/// Polynomial smooth minimum with blend width `k`: exactly `min(a, b)` where |a − b| ≥ k
/// (and for k = 0), rounded below it near the crease.
#[inline]
#[must_use]
pub fn smooth_min(a: f32, b: f32, k: f32) -> f32 {
    if k <= 0.0 {
        return a.min(b);
    }
    let h = 0.5 + 0.5 * (b - a) / k;
    if h >= 1.0 {
        a
    } else if h <= 0.0 {
        b
    } else {
        b + (a - b) * h - k * h * (1.0 - h)
    }
}

impl Node for Combine {
    fn eval(ctx: &EvalCtx, inputs: CombineIn, p: &CombineParams) -> Result<CombineOut, NodeError> {
        let a = inputs.a;
        let b = inputs.b;
        let lo = ctx.world.height_min_m as f32;
        let span = ctx.world.height_span_m() as f32;
        let inv = 1.0 / span;
        let k = p.blend_m as f32 * inv;
        // Dispatch once, outside the per-sample loop.
        let op: fn(f32, f32, f32) -> f32 = match p.mode {
            Mode::Add => |a, b, _| a + b,
            Mode::Subtract => |a, b, _| a - b,
            Mode::Multiply => |a, b, _| a * b,
            Mode::Divide => |a, b, _| a / b.max(0.001),
            Mode::Min => |a, b, _| a.min(b),
            Mode::Max => |a, b, _| a.max(b),
            Mode::Difference => |a, b, _| (a - b).abs(),
            Mode::Screen => |a, b, _| 1.0 - (1.0 - a) * (1.0 - b),
            Mode::Overlay => |a, b, _| {
                if a < 0.5 {
                    2.0 * a * b
                } else {
                    1.0 - 2.0 * (1.0 - a) * (1.0 - b)
                }
            },
            Mode::Power => |a, b, _| libm::powf(a.max(0.0), b),
            Mode::SmoothMin => smooth_min,
            Mode::SmoothMax => |a, b, k| -smooth_min(-a, -b, k),
        };
        let rel = Field::zip_map(a, b, |x, y| {
            crate::node::finite_relative(op((x - lo) * inv, (y - lo) * inv, k))
        });
        let full = rel.map(|r| lo + r * span);
        let out = match inputs.mask {
            Some(m) => Field::zip3_map(a, &full, m, super::lerp::lerp),
            None if p.strength >= 1.0 => full,
            None => {
                let s = p.strength as f32;
                Field::zip_map(a, &full, |x, f| super::lerp::lerp(x, f, s))
            }
        };
        Ok(CombineOut { out })
    }
}

#[cfg(test)]
mod tests {
    use super::smooth_min;

    #[test]
    fn smooth_min_is_min_far_from_the_crease_and_below_it_near() {
        assert_eq!(smooth_min(0.2, 0.9, 0.1), 0.2);
        assert_eq!(smooth_min(0.9, 0.2, 0.1), 0.2);
        assert!(smooth_min(0.5, 0.5, 0.1) < 0.5);
        assert_eq!(smooth_min(0.3, 0.7, 0.0), 0.3);
    }
}
