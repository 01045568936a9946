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
        let (depth, mask) = finish(z, &level, p);
        let size = || NodeError::Failed("internal error: field size".into());
        Ok(LakesOut {
            surface: Field::from_vec(w, h, level).ok_or_else(size)?,
            depth: Field::from_vec(w, h, depth).ok_or_else(size)?,
            mask: Field::from_vec(w, h, mask).ok_or_else(size)?,
        })
    }
}

/// The depth and mask outputs of terrain `z` under the water surface `level` (cell by cell).
fn finish(z: &[f32], level: &[f32], p: &LakesParams) -> (Vec<f32>, Vec<f32>) {
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
    (depth, mask)
}

/// `lakes` run tile by tile (`super::tiled`): the flood's levels from the tiles' perimeters,
/// each lake's deepest point and size joined across the seams, the small ones left dry as the
/// whole map leaves them: the very bits of the whole-map run.
pub(super) fn tiled(
    run: &super::TileRun,
    emit: &mut dyn FnMut(usize, Vec<Field>) -> Result<(), String>,
) -> Result<(), String> {
    use super::tiled::{fill_levels, join_lakes, LEVEL};
    use crate::node::Params as _;
    let p = LakesParams::from_values(run.values);
    let t = run.tiling;
    fill_levels(t, run.scratch, run.read, run.cancelled)?;
    let lakes = join_lakes(
        run,
        |k| {
            let (z, _) = (run.read)(t.window(k))?;
            let level: Vec<f32> = run.scratch.get(t, k, LEVEL)?;
            Ok((z, level))
        },
        |(z, level), lake| {
            let deepest = lake
                .iter()
                .map(|&c| f64::from(level[c] - z[c]))
                .fold(0.0, f64::max);
            (deepest, lake.len() as u64)
        },
        |a, b| (a.0.max(b.0), a.1 + b.1),
    )?;
    let min_cells = p.min_area_m2 / (run.cell_m * run.cell_m);
    for k in 0..t.count() {
        run.check()?;
        let win = t.window(k);
        let (z, _) = (run.read)(win)?;
        let mut level: Vec<f32> = run.scratch.get(t, k, LEVEL)?;
        for ((v, &zc), lake) in level.iter_mut().zip(&z).zip(lakes.of_tile(run, k)?) {
            if let Some((deepest, cells)) = lake {
                if deepest < p.min_depth_m || (cells as f64) < min_cells {
                    *v = zc;
                }
            }
        }
        let (depth, mask) = finish(&z, &level, &p);
        let field = |v: Vec<f32>| {
            Field::from_vec(win.width, win.height, v).ok_or_else(|| "field size".to_owned())
        };
        emit(k, vec![field(level)?, field(depth)?, field(mask)?])?;
    }
    Ok(())
}

/// Sets `level` back to the terrain on every lake shallower than `min_depth` or of fewer
/// than `min_cells` cells.
pub(super) fn drop_small_lakes(
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

#[cfg(test)]
mod tests {
    use super::super::tiled::{Scratch, Tiling};
    use super::super::{priority_flood, TileRun};
    use super::*;
    use crate::node::{ParamValue, Params as _, Window};

    /// Bowls of every size, some split by tile borders, some joined only across them.
    fn terrain(n: usize) -> Vec<f32> {
        (0..n * n)
            .map(|i| {
                let (x, y) = ((i % n) as f32, (i / n) as f32);
                let r = crate::node::splitmix64(i as u64) % 7;
                (x * 0.37).sin() * 4.0
                    + (y * 0.23).cos() * 5.0
                    + (x * y * 0.001).sin()
                    + r as f32 * 0.2
            })
            .collect()
    }

    #[test]
    fn lakes_run_tile_by_tile_equal_the_whole_map() {
        let n = 150;
        let z = terrain(n);
        let cell = 2.0;
        for (min_depth, min_area) in [(0.5, 40.0), (2.0, 400.0), (0.0, 0.0)] {
            let values = [
                ParamValue::Float(min_depth),
                ParamValue::Float(min_area),
                ParamValue::Float(3.0),
            ];
            let p = LakesParams::from_values(&values);
            let mut level = priority_flood(&z, n, n).level;
            let before = level.iter().zip(&z).filter(|(l, z)| l > z).count();
            drop_small_lakes(
                &z,
                &mut level,
                n,
                n,
                p.min_depth_m,
                p.min_area_m2 / (cell * cell),
            );
            let after = level.iter().zip(&z).filter(|(l, z)| l > z).count();
            let (depth, mask) = finish(&z, &level, &p);
            if min_area > 0.0 {
                assert!(
                    after < before && after > 0,
                    "some lakes dry, some kept ({before} → {after})"
                );
            }
            for size in [17usize, 32, 64] {
                let t = Tiling::uniform(n, size);
                let s = Scratch::in_memory();
                let read = |w: Window| {
                    let v: Vec<f32> = (w.y0..w.y0 + w.height)
                        .flat_map(|y| z[y * n + w.x0..y * n + w.x0 + w.width].to_vec())
                        .collect();
                    Ok((v, None))
                };
                let run = TileRun {
                    tiling: &t,
                    scratch: &s,
                    read: &read,
                    values: &values,
                    cell_m: cell,
                    world: crate::field::World {
                        size_m: cell * n as f64,
                        height_min_m: 0.0,
                        height_max_m: 1.0,
                    },
                    cancelled: &|| false,
                };
                let mut got = vec![vec![0.0f32; n * n]; 3];
                tiled(&run, &mut |k, fields| {
                    let w = t.window(k);
                    for (g, f) in got.iter_mut().zip(&fields) {
                        for y in 0..w.height {
                            g[(w.y0 + y) * n + w.x0..][..w.width]
                                .copy_from_slice(&f.data()[y * w.width..][..w.width]);
                        }
                    }
                    Ok(())
                })
                .expect("tiles");
                let what = format!("tiles of {size}, min depth {min_depth}, min area {min_area}");
                assert!(got[0] == level, "surface: {what}");
                assert!(got[1] == depth, "depth: {what}");
                assert!(got[2] == mask, "mask: {what}");
            }
        }
    }
}
