//! `normalize`: stretch a terrain so its lowest and highest points fill a band of the height range.

use crate::field::{Field, World};
use crate::node::{EvalCtx, Node, NodeError, Params as _};
use crate::nodes::water::TileRun;

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
struct Stretch {
    lo: f32,
    from: Option<(f32, f32)>,
}

impl Stretch {
    /// From the input's finite extremes (`None`: no finite value).
    fn new(world: &World, p: &NormalizeParams, extremes: Option<(f32, f32)>) -> Self {
        let lo = world.relative_to_m(p.low) as f32;
        let hi = world.relative_to_m(p.high) as f32;
        let from = match extremes {
            Some((mn, mx)) if mx > mn => Some((mn, (hi - lo) / (mx - mn))),
            _ => None,
        };
        Self { lo, from }
    }

    fn apply(&self, h: f32) -> f32 {
        match self.from {
            Some((mn, scale)) => self.lo + (h - mn) * scale,
            None => self.lo,
        }
    }
}

/// `normalize` run tile by tile in a tiled build whose whole map would not fit the stage
/// memory: the input's finite extremes over every tile (a minimum and a maximum do not depend
/// on the order they are taken in), then each tile stretched: the whole-map run's bits.
pub(crate) fn tiled(
    run: &TileRun,
    emit: &mut dyn FnMut(usize, Vec<Field>) -> Result<(), String>,
) -> Result<(), String> {
    let p = NormalizeParams::from_values(run.values);
    let t = run.tiling;
    let mut extremes: Option<(f32, f32)> = None;
    for k in 0..t.count() {
        run.check()?;
        let (z, _) = (run.read)(t.window(k))?;
        for v in z.into_iter().filter(|v| v.is_finite()) {
            extremes = Some(extremes.map_or((v, v), |(a, b)| (a.min(v), b.max(v))));
        }
    }
    let stretch = Stretch::new(&run.world, &p, extremes);
    for k in 0..t.count() {
        run.check()?;
        let w = t.window(k);
        let (z, _) = (run.read)(w)?;
        let out = z.into_iter().map(|h| stretch.apply(h)).collect();
        let field = Field::from_vec(w.width, w.height, out).ok_or("field size")?;
        emit(k, vec![field])?;
    }
    Ok(())
}
