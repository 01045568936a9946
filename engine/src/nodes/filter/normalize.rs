//! `normalize`: stretch a terrain so its lowest and highest points fill a band of the height range.

use crate::field::World;
use crate::node::{EvalCtx, Node, NodeError};

crate::params! {
    pub struct NormalizeParams {
        /// Where the lowest point lands, as a fraction of the graph's height range.
        low: f64 = float(0.0, [0.0, 1.0], [-100.0, 100.0], ""),
        /// Where the highest point lands, as a fraction of the graph's height range.
        high: f64 = float(1.0, [0.0, 1.0], [-100.0, 100.0], ""),
    }
}

crate::node! {
    /// Stretches the terrain so its lowest and highest points land exactly at chosen heights.
    /// Linearly maps the input's minimum to `low` and maximum to `high` (fractions of the graph's
    /// height range). A flat input becomes flat at `low`. Note: depends on the whole field, so
    /// different resolutions can differ slightly where extremes are sampled differently.
    pub struct Normalize {
        id: "normalize",
        label: "Normalize",
        category: Filter,
        version: 1,
        params: NormalizeParams,
        inputs: NormalizeIn {
            /// Terrain to normalise.
            r#in: height,
        },
        outputs: NormalizeOut {
            /// Normalised terrain.
            out: height,
        },
    }
}

impl Node for Normalize {
    fn footprint(_p: &NormalizeParams, _cell_m: f64, _n: usize) -> crate::node::Footprint {
        // The whole map: evaluated once over the whole world at a coarse size in tiled builds.
        crate::node::Footprint::Global
    }

    fn eval(
        ctx: &EvalCtx,
        inputs: NormalizeIn,
        p: &NormalizeParams,
    ) -> Result<NormalizeOut, NodeError> {
        let input = inputs.r#in;
        let stretch = Stretch::new(&ctx.world, p, input.min_max());
        Ok(NormalizeOut {
            out: input.map(|h| stretch.apply(h)),
        })
    }
}

/// The linear map from the input's extremes onto `[low, high]` of the height range
/// (`from`: the input's minimum and the scale; `None` for a flat input, mapped to `low`).
pub(crate) struct Stretch {
    lo: f32,
    from: Option<(f32, f32)>,
}

impl Stretch {
    /// From the input's finite extremes (`None`: no finite value).
    pub(crate) fn new(world: &World, p: &NormalizeParams, extremes: Option<(f32, f32)>) -> Self {
        let lo = world.relative_to_m(p.low) as f32;
        let hi = world.relative_to_m(p.high) as f32;
        let from = match extremes {
            Some((mn, mx)) if mx > mn => Some((mn, (hi - lo) / (mx - mn))),
            _ => None,
        };
        Self { lo, from }
    }

    pub(crate) fn apply(&self, h: f32) -> f32 {
        match self.from {
            Some((mn, scale)) => self.lo + (h - mn) * scale,
            None => self.lo,
        }
    }
}
