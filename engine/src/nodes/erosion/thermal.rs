//! `thermal_erosion`: material above the talus angle slides to lower neighbours
//! (seed 004, "Thermal Erosion"), and Olsen's speed-optimised variant.

use super::NEIGHBOURS;
use crate::field::Field;
use crate::node::{Category, EvalCtx, Inputs, Node, NodeError, NodeSpec, PortSpec};
use rayon::prelude::*;

crate::choice_enum! {
    /// Which neighbours receive material: `classic` = every neighbour steeper than the talus,
    /// in proportion to its drop (seed 004's formula); `olsen` = only the steepest neighbour,
    /// half the excess (Olsen 2004's speed-optimised version).
    pub enum Variant { Classic = "classic", Olsen = "olsen" }
}

crate::params! {
    pub struct ThermalParams {
        /// Talus angle T in degrees: slopes steeper than this shed material. Converted to a height drop with the real distance to each neighbour, so the result does not depend on the resolution.
        talus_deg: f64 = float(35.0, [10.0, 60.0], [0.0, 89.0], "°"),
        /// Erosion magnitude c in (0, 1]: the fraction of the excess drop moved per iteration (seed 004's c). Above 0.5 the classic variant can overshoot.
        strength: f64 = float(0.5, [0.1, 1.0], [0.0, 1.0], ""),
        /// Number of iterations. Relaxation spreads about one cell per iteration, so a finer grid needs proportionally more to reach the same state.
        iterations: u32 = int(50, [1, 500], [0, 100_000], ""),
        /// classic (seed 004: all steeper neighbours, in proportion) or olsen (only the steepest neighbour).
        variant: Variant = choice(Variant::Classic),
    }
}

/// Thermal erosion.
pub struct Thermal;

/// One iteration: outflows of every cell to each neighbour (pass 1), then each cell's new
/// height = old − its outflows + its neighbours' outflows towards it (pass 2). Both passes
/// are parallel over rows and order-independent, so the result does not depend on the
/// thread count, and every moved amount is subtracted and added exactly once (material is
/// conserved up to float rounding). Off-map neighbours take nothing.
fn step(
    h: &Field,
    next: &mut Field,
    flow: &mut [[f32; 8]],
    ones: &[f32],
    talus: &[f32; 8],
    c: f32,
    variant: Variant,
) {
    let (w, hh) = (h.width(), h.height());
    let d = h.data();
    // Pass 1: each cell's outflow towards each neighbour.
    flow.par_chunks_mut(w.max(1))
        .enumerate()
        .for_each(|(y, outs)| {
            for (x, out) in outs.iter_mut().enumerate() {
                let hc = d[y * w + x];
                let mut drops = [0.0f32; 8];
                let (mut total, mut max_excess, mut steepest) = (0.0f32, 0.0f32, usize::MAX);
                for (k, &(dx, dy, _)) in NEIGHBOURS.iter().enumerate() {
                    let (nx, ny) = (x as isize + dx, y as isize + dy);
                    if nx < 0 || ny < 0 || nx >= w as isize || ny >= hh as isize {
                        continue;
                    }
                    let di = hc - d[ny as usize * w + nx as usize];
                    let excess = di - talus[k];
                    if excess > 0.0 {
                        drops[k] = di;
                        total += di;
                        if excess > max_excess {
                            max_excess = excess;
                            steepest = k;
                        }
                    }
                }
                for (k, o) in out.iter_mut().enumerate() {
                    *o = match variant {
                        // h_i += c·(d_max − T)·d_i / d_total for every d_i > T (seed 004).
                        Variant::Classic if total > 0.0 => c * max_excess * drops[k] / total,
                        // Olsen: half the excess, to the steepest neighbour only.
                        Variant::Olsen if k == steepest => 0.5 * c * max_excess,
                        _ => 0.0,
                    };
                }
            }
        });
    // Pass 2: new height = old − own outflows + neighbours' outflows towards this cell.
    super::gather(d, flow, ones, w, hh, next.data_mut());
}

impl Node for Thermal {
    type Params = ThermalParams;
    const SPEC: NodeSpec = NodeSpec {
        id: "thermal_erosion",
        label: "Thermal erosion",
        category: Category::Erosion,
        version: 1,
        doc: "Thermal erosion (seed 004, \"Thermal Erosion\"): for each cell, with d_i = h − h_i to its 8 neighbours and T the talus angle turned into a height drop with the real distance to each neighbour (tan(talus_deg) · cell size, ×√2 diagonally), d_max the largest excess d_i − T and d_total the sum of the d_i > T, each such neighbour receives h_i += c·(d_max − T)·d_i/d_total and the cell loses the same. The olsen variant (Olsen 2004's speed-optimised version, only named in seed 004) sends half the excess to the steepest neighbour only. All cells update together (two parallel passes), material is conserved, nothing leaves the map. Outputs the eroded height and a deposition mask (where material accumulated, 1 at the largest deposit).",
        inputs: &[PortSpec::height("in", "Terrain to erode.")],
        outputs: &[
            PortSpec::height("out", "Eroded terrain."),
            PortSpec::mask("deposition", "Where material came to rest, in [0, 1]."),
        ],
    };

    fn eval(ctx: &EvalCtx, inputs: &Inputs, p: &ThermalParams) -> Result<Vec<Field>, NodeError> {
        let src = inputs.required(0)?;
        let cell = ctx.cell_size_m() as f32;
        let t = p.talus_deg.to_radians().tan() as f32 * cell;
        let talus: [f32; 8] = std::array::from_fn(|k| t * NEIGHBOURS[k].2);
        let n = src.data().len();
        let mut h = src.clone();
        let mut next = src.clone();
        let mut flow = vec![[0.0f32; 8]; n];
        let ones = vec![1.0f32; n];
        for i in 0..p.iterations {
            ctx.check_cancel()?;
            step(
                &h,
                &mut next,
                &mut flow,
                &ones,
                &talus,
                p.strength as f32,
                p.variant,
            );
            std::mem::swap(&mut h, &mut next);
            ctx.report((i + 1) as f32 / p.iterations.max(1) as f32);
        }
        let (_, mask) = super::change_masks(src, &h);
        Ok(vec![h, mask])
    }
}
