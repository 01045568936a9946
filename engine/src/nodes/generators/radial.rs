//! `radial_gradient`: a mask that falls from 1 at a centre to 0 at a radius.

use crate::field::Field;
use crate::node::{EvalCtx, Node, NodeError};

crate::choice_enum! {
    /// Profile of the falloff from centre to radius.
    pub enum Falloff { Cone = "cone", Smooth = "smooth", Dome = "dome" }
}

crate::params! {
    pub struct RadialGradientParams {
        /// Centre x as a fraction of the world size (0 = west edge, 1 = east edge).
        center_x: f64 = float(0.5, [0.0, 1.0], [-10.0, 10.0], ""),
        /// Centre y as a fraction of the world size (0 = north edge, 1 = south edge).
        center_y: f64 = float(0.5, [0.0, 1.0], [-10.0, 10.0], ""),
        /// Radius where the mask reaches 0, as a fraction of the world size.
        radius: f64 = float(0.5, [0.01, 1.0], [0.0001, 100.0], ""),
        /// Profile: cone (linear), smooth (smoothstep) or dome (spherical cap).
        falloff: Falloff = choice(Falloff::Smooth),
    }
}

crate::node! {
    /// A round mask, white at the centre and fading to black at the edge, to place a single peak or
    /// island.
    /// A mask equal to 1 at the centre and 0 at `radius` and beyond, with a cone (linear), smooth
    /// (smoothstep) or dome (sqrt(1 - r²)) profile. Centre and radius are fractions of the world
    /// size.
    pub struct RadialGradient {
        id: "radial_gradient",
        label: "Radial gradient",
        category: Generator,
        version: 1,
        params: RadialGradientParams,
        inputs: RadialGradientIn {
        },
        outputs: RadialGradientOut {
            /// The falloff, in [0, 1].
            out: mask,
        },
    }
}

impl Node for RadialGradient {
    fn eval(
        ctx: &EvalCtx,
        _: RadialGradientIn,
        p: &RadialGradientParams,
    ) -> Result<RadialGradientOut, NodeError> {
        let size = ctx.world.size_m;
        let xs: Vec<f64> = ctx.xs_m().iter().map(|c| c / size).collect();
        let ys: Vec<f64> = ctx.ys_m().iter().map(|c| c / size).collect();
        let profile = match p.falloff {
            Falloff::Cone => |t: f64| 1.0 - t,
            Falloff::Smooth => |t: f64| {
                let u = 1.0 - t;
                u * u * (3.0 - 2.0 * u)
            },
            Falloff::Dome => |t: f64| (1.0 - t * t).max(0.0).sqrt(),
        };
        Ok(RadialGradientOut {
            out: Field::from_fn(ctx.width(), ctx.height(), |x, y| {
                let dx = xs[x] - p.center_x;
                let dy = ys[y] - p.center_y;
                let t = ((dx * dx + dy * dy).sqrt() / p.radius).min(1.0);
                profile(t).clamp(0.0, 1.0) as f32
            }),
        })
    }
}
