//! Mask algebra and morphology: `mask_combine`, `mask_grow`, `mask_blur`.

use crate::field::blur::{gaussian_at, transpose};
use crate::field::Field;
use crate::node::{EvalCtx, Node, NodeError};
use rayon::prelude::*;

crate::choice_enum! {
    /// The operation.
    pub enum MaskOp { And = "and", Or = "or", Not = "not", Multiply = "multiply", Add = "add", Subtract = "subtract", Xor = "xor" }
}

crate::params! {
    pub struct MaskCombineParams {
        /// and = min(a, b), or = max(a, b), not = 1 − a, multiply = a·b, add = min(a + b, 1), subtract = max(a − b, 0), xor = |a − b|.
        op: MaskOp = choice(MaskOp::And) as "Operation",
    }
}

crate::node! {
    /// Joins, overlaps, subtracts or inverts masks, for example to pick steep ground that is also
    /// high up.
    /// Fuzzy mask algebra on [0, 1]: and = min, or = max, not = 1 − a (b unused), multiply, add
    /// (clamped), subtract (clamped), xor = |a − b|. Inputs are clamped to [0, 1] first, so the
    /// output always is in [0, 1].
    pub struct MaskCombine {
        id: "mask_combine",
        label: "Mask algebra",
        category: Mask,
        version: 1,
        params: MaskCombineParams,
        inputs: MaskCombineIn {
            /// First mask.
            a: mask,
            /// Second mask (not needed by `not`).
            b: mask (optional),
        },
        outputs: MaskCombineOut {
            /// The result, in [0, 1].
            out: mask,
        },
    }
}

impl Node for MaskCombine {
    fn eval(
        _: &EvalCtx,
        inputs: MaskCombineIn,
        p: &MaskCombineParams,
    ) -> Result<MaskCombineOut, NodeError> {
        let a = inputs.a;
        if p.op == MaskOp::Not {
            return Ok(MaskCombineOut {
                out: a.map(|x| 1.0 - x.clamp(0.0, 1.0)),
            });
        }
        let b = inputs.b.ok_or(NodeError::MissingInput("b"))?;
        let op: fn(f32, f32) -> f32 = match p.op {
            MaskOp::And => f32::min,
            MaskOp::Or => f32::max,
            MaskOp::Multiply => |a, b| a * b,
            MaskOp::Add => |a, b| (a + b).min(1.0),
            MaskOp::Subtract => |a, b| (a - b).max(0.0),
            MaskOp::Xor | MaskOp::Not => |a, b| (a - b).abs(),
        };
        Ok(MaskCombineOut {
            out: Field::zip_map(a, b, |x, y| {
                op(x.clamp(0.0, 1.0), y.clamp(0.0, 1.0)).clamp(0.0, 1.0)
            }),
        })
    }
}

/// Running maximum (or minimum, with `max = false`) over windows of half-width `r` along
/// each row, windows clipped at the borders; O(n) per row with a monotone deque.
fn extremum_rows(f: &Field, r: usize, max: bool) -> Field {
    let w = f.width();
    let mut out = Field::filled(w, f.height(), 0.0);
    out.data_mut()
        .par_chunks_mut(w.max(1))
        .zip(f.data().par_chunks(w.max(1)))
        .for_each(|(o, row)| {
            let better = |a: f32, b: f32| if max { a >= b } else { a <= b };
            let mut dq: std::collections::VecDeque<usize> = std::collections::VecDeque::new();
            let mut next = 0;
            for (i, v) in o.iter_mut().enumerate() {
                while next < w && next <= i + r {
                    while dq.back().is_some_and(|&j| better(row[next], row[j])) {
                        dq.pop_back();
                    }
                    dq.push_back(next);
                    next += 1;
                }
                while dq.front().is_some_and(|&j| j + r < i) {
                    dq.pop_front();
                }
                *v = dq.front().map_or(row[i], |&j| row[j]);
            }
        });
    out
}

crate::params! {
    pub struct MaskGrowParams {
        /// Distance to grow by, in metres; negative shrinks.
        distance_m: f64 = float(50.0, [-500.0, 500.0], [-10_000_000.0, 10_000_000.0], "m"),
    }
}

crate::node! {
    /// Grows a mask outwards (positive distance) or shrinks it inwards (negative), by a distance in
    /// metres.
    /// Morphological dilation (distance_m > 0) or erosion (< 0) by a square of
    /// half-side |distance_m| in metres: each cell takes the maximum (minimum) of the mask around it. A
    /// distance that is not a whole number of cells r blends the results at ⌊r⌋ and ⌊r⌋ + 1 cells
    /// by the fraction, so a hard edge moves by exactly distance_m (the last cell covered by the
    /// fraction it reaches) at every resolution. Separable running extremum, O(1) per cell whatever
    /// the distance.
    pub struct MaskGrow {
        id: "mask_grow",
        label: "Grow / shrink mask",
        category: Mask,
        version: 1,
        params: MaskGrowParams,
        inputs: MaskGrowIn {
            /// Mask to grow or shrink.
            r#in: mask,
        },
        outputs: MaskGrowOut {
            /// The grown or shrunk mask, in [0, 1].
            out: mask,
        },
    }
}

impl Node for MaskGrow {
    fn footprint(p: &MaskGrowParams, cell_m: f64, _n: usize) -> crate::node::Footprint {
        crate::node::Footprint::Stencil((p.distance_m.abs() / cell_m).ceil() as usize)
    }

    fn eval(
        ctx: &EvalCtx,
        inputs: MaskGrowIn,
        p: &MaskGrowParams,
    ) -> Result<MaskGrowOut, NodeError> {
        let m = inputs.r#in.map(|v| v.clamp(0.0, 1.0));
        let cells = p.distance_m.abs() / ctx.cell_size_m();
        let grow = p.distance_m > 0.0;
        let square = |r: usize| {
            if r == 0 {
                return m.clone();
            }
            let rows = extremum_rows(&m, r, grow);
            transpose(&extremum_rows(&transpose(&rows), r, grow))
        };
        let r0 = cells.floor() as usize;
        let t = (cells - r0 as f64) as f32;
        let inner = square(r0);
        if t <= 0.0 {
            return Ok(MaskGrowOut { out: inner });
        }
        let outer = square(r0 + 1);
        Ok(MaskGrowOut {
            out: Field::zip_map(&inner, &outer, |a, b| a + t * (b - a)),
        })
    }
}

crate::params! {
    pub struct MaskBlurParams {
        /// Blur radius in metres (2σ).
        radius_m: f64 = float(50.0, [0.0, 1000.0], [0.0, 10_000_000.0], "m"),
    }
}

crate::node! {
    /// Softens a mask's edges so that effects fade in gradually instead of stopping at a hard line.
    /// The `blur` node's Gaussian (σ = radius_m / 2, cost independent of the radius, mirrored
    /// borders) on a mask; the result is clamped to [0, 1].
    pub struct MaskBlur {
        id: "mask_blur",
        label: "Blur mask",
        category: Mask,
        version: 1,
        params: MaskBlurParams,
        inputs: MaskBlurIn {
            /// Mask to blur.
            r#in: mask,
        },
        outputs: MaskBlurOut {
            /// Blurred mask, in [0, 1].
            out: mask,
        },
    }
}

impl Node for MaskBlur {
    fn footprint(p: &MaskBlurParams, cell_m: f64, _n: usize) -> crate::node::Footprint {
        crate::node::Footprint::Stencil(crate::field::blur::support_px(p.radius_m / 2.0 / cell_m))
    }

    fn eval(
        ctx: &EvalCtx,
        inputs: MaskBlurIn,
        p: &MaskBlurParams,
    ) -> Result<MaskBlurOut, NodeError> {
        let b = gaussian_at(
            inputs.r#in,
            p.radius_m / 2.0 / ctx.cell_size_m(),
            ctx.origin(),
        );
        Ok(MaskBlurOut {
            out: b.map(crate::node::unit),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::extremum_rows;
    use crate::field::Field;

    #[test]
    fn running_max_matches_naive() {
        let f = Field::from_fn(23, 1, |x, _| ((x * 7919) % 13) as f32);
        for r in [1, 2, 5, 30] {
            let got = extremum_rows(&f, r, true);
            for i in 0..23usize {
                let lo = i.saturating_sub(r);
                let hi = (i + r).min(22);
                let want = f.data()[lo..=hi].iter().copied().fold(f32::MIN, f32::max);
                assert_eq!(got.data()[i], want, "r={r} i={i}");
            }
        }
    }
}
