//! `lakes`: fill the terrain's closed depressions with water.

use super::{for_each_lake, priority_flood};
use crate::field::Field;
use crate::node::{unit, EvalCtx, Node, NodeError};

crate::params! {
    pub struct LakesParams {
        /// Lakes whose deepest point is shallower than this are left dry, in metres.
        min_depth_m: f64 = float(0.5, [0.0, 20.0], [0.0, 1.0e6], "m") as "Min depth",
        /// Lakes smaller than this are left dry, in m².
        min_area_m2: f64 = float(5_000.0, [0.0, 1.0e6], [0.0, 1.0e12], "m²") as "Min area",
        /// Water depth at which the depth mask reaches 1, in metres.
        depth_range_m: f64 = float(10.0, [0.1, 100.0], [0.001, 1.0e6], "m") as "Depth range",
    }
}

crate::node! {
    /// Fills the hollows and basins of the terrain with lakes, up to the level where they would
    /// overflow.
    /// Fills every depression that has no way out to the map edge up to the level where it would
    /// spill (Barnes, Lehman & Mulla 2014's priority flood: the filled level of a cell is the
    /// lowest, over all paths to the edge, of the highest cell on the path). A lake is a connected
    /// set of flooded cells (8-neighbours); lakes shallower than min_depth_m at their deepest point
    /// or smaller than min_area_m2 are left dry. Outputs: surface = the water surface (the terrain
    /// where there is no lake), depth = (surface − terrain) / depth_range_m clamped to [0, 1] (0 on
    /// land, 1 from depth_range_m down), mask = 1 on lakes.
    pub struct Lakes {
        id: "lakes",
        label: "Lakes",
        category: Water,
        version: 1,
        params: LakesParams,
        inputs: LakesIn {
            /// Terrain to fill.
            r#in: height,
        },
        outputs: LakesOut {
            /// Water surface where there are lakes, the terrain elsewhere (m).
            surface: height,
            /// Water depth ÷ depth_range_m, in [0, 1] (0 on land).
            depth: mask,
            /// 1 on lakes, 0 elsewhere.
            mask: mask,
        },
    }
}

impl Node for Lakes {
    /// Levels and flat parents of the flood (2), strip labels and queues (~2), lake labels (1).
    const SCRATCH_FIELDS: u32 = 5;

    fn eval(ctx: &EvalCtx, inputs: LakesIn, p: &LakesParams) -> Result<LakesOut, NodeError> {
        let src = inputs.r#in;
        let (w, h) = (src.width(), src.height());
        let z = src.data();
        let mut level = priority_flood(z, w, h).level;
        ctx.check_cancel()?;
        let cell_area = ctx.cell_size_m() * ctx.cell_size_m();
        drop_small_lakes(
            z,
            &mut level,
            w,
            h,
            p.min_depth_m,
            p.min_area_m2 / cell_area,
        );
        let inv = (1.0 / p.depth_range_m) as f32;
        let depth = level
            .iter()
            .zip(z)
            .map(|(l, z)| unit((l - z) * inv))
            .collect();
        let mask = level
            .iter()
            .zip(z)
            .map(|(l, z)| f32::from(u8::from(l > z)))
            .collect();
        let size = || NodeError::Failed("internal error: field size".into());
        Ok(LakesOut {
            surface: Field::from_vec(w, h, level).ok_or_else(size)?,
            depth: Field::from_vec(w, h, depth).ok_or_else(size)?,
            mask: Field::from_vec(w, h, mask).ok_or_else(size)?,
        })
    }
}

/// Sets `level` back to the terrain on every lake shallower than `min_depth` or of fewer
/// than `min_cells` cells.
fn drop_small_lakes(
    z: &[f32],
    level: &mut [f32],
    w: usize,
    h: usize,
    min_depth: f64,
    min_cells: f64,
) {
    let mut dry = Vec::new();
    for_each_lake(z, level, w, h, |lake| {
        let deepest = lake
            .iter()
            .map(|&c| f64::from(level[c] - z[c]))
            .fold(0.0, f64::max);
        if deepest < min_depth || (lake.len() as f64) < min_cells {
            dry.extend_from_slice(lake);
        }
    });
    for c in dry {
        level[c] = z[c];
    }
}
