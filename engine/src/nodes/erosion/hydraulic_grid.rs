//! `grid_hydraulic_erosion`: seed 004's hydraulic erosion on the grid — rain, dissolve,
//! transport by levelling water + terrain, evaporation, deposition above capacity.

use super::{gather, NEIGHBOURS};
use crate::field::Field;
use crate::node::{Category, EvalCtx, Inputs, Node, NodeError, NodeSpec, PortSpec};
use rayon::prelude::*;

crate::params! {
    pub struct GridHydraulicParams {
        /// Rain K_r added to every cell's water each iteration, as a fraction of the height range (seed 004: 0.01).
        kr: f64 = float(0.01, [0.0, 0.05], [0.0, 1.0], ""),
        /// Solubility K_s: terrain dissolved per unit of water each iteration (seed 004: 0.01).
        ks: f64 = float(0.01, [0.0, 0.05], [0.0, 1.0], ""),
        /// Evaporation K_e: fraction of the water that evaporates each iteration (seed 004: 0.5).
        ke: f64 = float(0.5, [0.05, 1.0], [0.0, 1.0], ""),
        /// Sediment capacity K_c per unit of water (seed 004: 0.01).
        kc: f64 = float(0.01, [0.0, 0.05], [0.0, 1.0], ""),
        /// Number of iterations.
        iterations: u32 = int(50, [1, 500], [0, 100_000], ""),
    }
}

/// Grid hydraulic erosion.
pub struct GridHydraulic;

/// Water sent from every cell to each neighbour (seed 004 step 4): with a = h + w, the lower
/// neighbours' drops d_i = a − a_i, d_total their sum and Δa = a − mean(a over the cell and
/// its lower neighbours), each receives Δw_i = min(w, Δa)·d_i/d_total.
fn water_flows(h: &[f32], w: &[f32], width: usize, height: usize, flow: &mut [[f32; 8]]) {
    flow.par_chunks_mut(width.max(1))
        .enumerate()
        .for_each(|(y, row)| {
            for (x, out) in row.iter_mut().enumerate() {
                let i = y * width + x;
                let a = h[i] + w[i];
                let mut drops = [0.0f32; 8];
                let (mut total, mut sum_a, mut count) = (0.0f32, a, 1.0f32);
                for (k, &(dx, dy, _)) in NEIGHBOURS.iter().enumerate() {
                    let (nx, ny) = (x as isize + dx, y as isize + dy);
                    if nx < 0 || ny < 0 || nx >= width as isize || ny >= height as isize {
                        continue;
                    }
                    let j = ny as usize * width + nx as usize;
                    let ai = h[j] + w[j];
                    if ai < a {
                        drops[k] = a - ai;
                        total += a - ai;
                        sum_a += ai;
                        count += 1.0;
                    }
                }
                let moved = if total > 0.0 {
                    w[i].min(a - sum_a / count).max(0.0)
                } else {
                    0.0
                };
                for (k, o) in out.iter_mut().enumerate() {
                    *o = if total > 0.0 {
                        moved * drops[k] / total
                    } else {
                        0.0
                    };
                }
            }
        });
}

impl Node for GridHydraulic {
    type Params = GridHydraulicParams;
    const SPEC: NodeSpec = NodeSpec {
        id: "grid_hydraulic_erosion",
        label: "Hydraulic erosion (grid)",
        category: Category::Erosion,
        version: 1,
        doc: "Seed 004's grid hydraulic erosion, per iteration: 1 rain W += K_r; 2 erosion H −= K_s·W, S += K_s·W; 3 transport: with a = h + w, water moves to lower neighbours Δw_i = min(w, Δa)·d_i/d_total (Δa = a − mean of a over the cell and its lower neighbours) and carries sediment Δs_i = s·Δw_i/w; 4 evaporation W := (1 − K_e)·W; 5 deposition of what exceeds the capacity K_c·W back into H. Seed 004 works on heights in [0, 1]; here K_r, K_s and K_c act on heights relative to the graph's height range, so the constants keep their meaning in metres. All cells update together (parallel, deterministic); water and sediment never leave the map, so terrain + suspended sediment is conserved. Outputs: height (with the remaining suspended sediment deposited), water (relative to the deepest), deposition (where terrain rose, relative to the largest rise).",
        inputs: &[PortSpec::height("in", "Terrain to erode.")],
        outputs: &[
            PortSpec::height("out", "Eroded terrain."),
            PortSpec::mask("water", "Water depth after the last iteration, 1 = deepest."),
            PortSpec::mask("deposition", "Where terrain rose, 1 = largest rise."),
        ],
    };

    fn eval(
        ctx: &EvalCtx,
        inputs: &Inputs,
        p: &GridHydraulicParams,
    ) -> Result<Vec<Field>, NodeError> {
        let src = inputs.required(0)?;
        let (width, height) = (src.width(), src.height());
        let n = width * height;
        let span = ctx.world.height_span_m() as f32;
        let (kr, ks, ke, kc) = (p.kr as f32 * span, p.ks as f32, p.ke as f32, p.kc as f32);
        let mut h = src.data().to_vec();
        let mut w = vec![0.0f32; n];
        let mut s = vec![0.0f32; n];
        let mut flow = vec![[0.0f32; 8]; n];
        let (mut w2, mut s2) = (vec![0.0f32; n], vec![0.0f32; n]);
        let ones = vec![1.0f32; n];
        let mut ratio = vec![0.0f32; n];
        for it in 0..p.iterations {
            ctx.check_cancel()?;
            // 1–2: rain, then dissolve.
            h.par_iter_mut()
                .zip(w.par_iter_mut())
                .zip(s.par_iter_mut())
                .for_each(|((h, w), s)| {
                    *w += kr;
                    let d = ks * *w;
                    *h -= d;
                    *s += d;
                });
            // 3: transport water, and sediment in proportion.
            water_flows(&h, &w, width, height, &mut flow);
            ratio
                .par_iter_mut()
                .zip(s.par_iter().zip(w.par_iter()))
                .for_each(|(r, (&s, &w))| *r = if w > 0.0 { s / w } else { 0.0 });
            gather(&w, &flow, &ones, width, height, &mut w2);
            gather(&s, &flow, &ratio, width, height, &mut s2);
            std::mem::swap(&mut w, &mut w2);
            std::mem::swap(&mut s, &mut s2);
            // 4–5: evaporate, deposit what exceeds the capacity.
            h.par_iter_mut()
                .zip(w.par_iter_mut())
                .zip(s.par_iter_mut())
                .for_each(|((h, w), s)| {
                    *w *= 1.0 - ke;
                    let excess = (*s - kc * *w).max(0.0);
                    *s -= excess;
                    *h += excess;
                });
            ctx.report((it + 1) as f32 / p.iterations.max(1) as f32);
        }
        // The suspended sediment settles where it is.
        for (h, s) in h.iter_mut().zip(&s) {
            *h += s;
        }
        let out =
            Field::from_vec(width, height, h).ok_or_else(|| NodeError::Failed("size".into()))?;
        let water =
            Field::from_vec(width, height, w).ok_or_else(|| NodeError::Failed("size".into()))?;
        let (_, rise) = super::change_masks(src, &out);
        Ok(vec![out, super::relative(water), rise])
    }
}
