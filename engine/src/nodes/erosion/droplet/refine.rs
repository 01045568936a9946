//! How droplet erosion refines a coarse-to-fine build (see `levels`): short droplets at the
//! build's resolution that erode only where the coarse levels eroded and lay their deposits
//! down again.

use super::{native, run, Droplet, DropletIn, DropletOut, DropletParams};
use crate::field::Field;
use crate::node::{EvalCtx, NodeError};
use crate::nodes::erosion::levels::{self, Extra};

/// How far a refinement droplet runs, in cells of the grid it runs on.
const REFINE_PATH_CELLS: f64 = 32.0;

impl levels::Multiscale for Droplet {
    const SCHEDULE: levels::Schedule = levels::Schedule::Direct;
    /// Half a base cell: smoothed less, the coarse pass's own short droplets, kept sharper,
    /// are refined a second time and a tile carries more fine detail than the whole map
    /// (docs/perf-log.md).
    const TILE_START_SMOOTHING: f64 = 0.5;
    const EXTRA: &'static [Extra] = &[Extra::Wear, Extra::Deposit];

    fn resolution(p: &DropletParams) -> (levels::Detail, usize) {
        (p.detail, p.base_resolution as usize)
    }

    fn native(
        ctx: &EvalCtx,
        inputs: DropletIn,
        p: &DropletParams,
    ) -> Result<DropletOut, NodeError> {
        native(ctx, inputs, p)
    }

    /// Refinement, once at the target: the base's droplets per cell at full strength (their
    /// path limit is set in `refined`, which knows the target).
    fn refine(p: &DropletParams, _previous: usize) -> DropletParams {
        p.clone()
    }

    /// The refinement's droplets run at most [`REFINE_PATH_CELLS`] of the target's cells (or
    /// the node's path_limit, if shorter):
    /// E-DOG's rule works in cell units, so a droplet of 32 cells carves at 4096² the
    /// gullies one of 32 cells carves at 256², 16× smaller: two base cells, the longest
    /// feature of the band the refinement adds (longer paths add little detail for their
    /// cost: docs/perf-log.md). Droplets that short start
    /// unloaded wherever they are, so on a valley floor the coarser levels filled they
    /// would cut gullies, where native droplets arriving loaded fill it. Hence, with the
    /// coarser levels' change smoothed over a base cell:
    /// - where it is a deposit, a droplet takes none of the erosion E-DOG's rule gives it
    ///   (ramping to all where it is a loss), and
    /// - that deposit is taken off the start and carried by the droplets starting there
    ///   (each its share), so the refinement lays it down again: into the pits and along
    ///   the floor, where droplets slow down, as native droplets do.
    fn refined(
        ctx: &EvalCtx,
        inputs: DropletIn,
        p: &DropletParams,
        coarse: &Field,
    ) -> Result<DropletOut, NodeError> {
        let map = inputs.r#in.width().max(1);
        let p = DropletParams {
            path_limit: p.path_limit.min(REFINE_PATH_CELLS / map as f64),
            ..p.clone()
        };
        // Ramp from all (the coarse levels lowered the cell) to none (they raised it by
        // min_slope of a base cell or more).
        let jump = ctx.resolution as f64 / f64::from(p.base_resolution.max(1));
        let ramp = (p.min_slope * ctx.cell_size_m() * jump).max(1e-6) as f32;
        let smooth = crate::field::blur::gaussian(coarse, jump);
        let allow: Vec<f32> = smooth
            .data()
            .iter()
            .map(|&d| (1.0 - d / ramp).clamp(0.0, 1.0))
            .collect();
        // The deposit taken off the start: not on the border ring, which is held fixed and
        // where no droplet starts.
        let inner = |i: usize| {
            let (x, y) = (i % map, i / map);
            x > 0 && y > 0 && x + 1 < map && y + 1 < map
        };
        let taken: Vec<f32> = smooth
            .data()
            .iter()
            .zip(&allow)
            .enumerate()
            .map(|(i, (&s, &a))| {
                if inner(i) {
                    (1.0 - a) * s.max(0.0)
                } else {
                    0.0
                }
            })
            .collect();
        // Per droplet starting on a cell, in cell units.
        let per = 1.0 / (p.density.max(1e-9) as f32 * ctx.cell_size_m() as f32);
        let load: Vec<f32> = taken.iter().map(|t| t * per).collect();
        let data: Vec<f32> = inputs
            .r#in
            .data()
            .iter()
            .zip(&taken)
            .map(|(&z, &t)| z - t)
            .collect();
        let start = Field::from_vec(map, map, data).ok_or_else(|| NodeError::shape(map, map))?;
        run(ctx, &start, &p, (&allow, &load), true)
    }
}
