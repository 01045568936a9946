//! `linear_gradient`: a mask ramp across the world in a chosen direction.

use crate::field::Field;
use crate::node::{EvalCtx, Node, NodeError};

crate::params! {
    pub struct LinearGradientParams {
        /// Direction the ramp rises towards, in degrees: 0 = +x (east), 90 = +y (south, down the image).
        angle_deg: f64 = float(0.0, [0.0, 360.0], [-360.0, 720.0], "°"),
        /// Where the ramp starts (value 0), as a fraction of the world size along the direction, measured from the world centre: -0.5 is the near edge.
        start: f64 = float(-0.5, [-1.0, 1.0], [-10.0, 10.0], ""),
        /// Where the ramp ends (value 1), same units as `start`.
        end: f64 = float(0.5, [-1.0, 1.0], [-10.0, 10.0], ""),
    }
}

crate::node! {
    /// A straight ramp from black to white across the world, for tilting a terrain or fading an
    /// effect.
    /// A mask that rises linearly from 0 at `start` to 1 at `end` along the direction `angle_deg`;
    /// clamped outside. Positions are fractions of the world size, so every resolution shows the
    /// same ramp.
    pub struct LinearGradient {
        id: "linear_gradient",
        label: "Linear gradient",
        category: Generator,
        version: 1,
        params: LinearGradientParams,
        inputs: LinearGradientIn {
        },
        outputs: LinearGradientOut {
            /// The ramp, in [0, 1].
            out: mask,
        },
    }
}

impl Node for LinearGradient {
    fn eval(
        ctx: &EvalCtx,
        _: LinearGradientIn,
        p: &LinearGradientParams,
    ) -> Result<LinearGradientOut, NodeError> {
        let (s, c) = libm::sincos(p.angle_deg.to_radians());
        let size = ctx.world.size_m;
        let (xs, ys) = (ctx.xs_m(), ctx.ys_m());
        let span = p.end - p.start;
        Ok(LinearGradientOut {
            out: Field::from_fn(ctx.width(), ctx.height(), |x, y| {
                // Position along the direction, as a fraction of the world size from the centre.
                let t = ((xs[x] / size - 0.5) * c + (ys[y] / size - 0.5) * s - p.start) / span;
                if t.is_finite() {
                    t.clamp(0.0, 1.0) as f32
                } else {
                    // start == end: a step.
                    f32::from(u8::from(
                        (xs[x] / size - 0.5) * c + (ys[y] / size - 0.5) * s >= p.start,
                    ))
                }
            }),
        })
    }
}
