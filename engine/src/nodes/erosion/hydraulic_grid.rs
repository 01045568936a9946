//! `grid_hydraulic_erosion`: seed 004's hydraulic erosion on the grid — rain, dissolve,
//! transport by levelling water + terrain, evaporation, deposition above capacity.

use super::NEIGHBOURS;
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

/// The in-map neighbours of cell `(x, y)`: their indices.
#[inline]
fn neighbours(x: usize, y: usize, width: usize, height: usize) -> impl Iterator<Item = usize> {
    NEIGHBOURS.iter().filter_map(move |&(dx, dy, _)| {
        let (nx, ny) = (x as isize + dx, y as isize + dy);
        (nx >= 0 && ny >= 0 && nx < width as isize && ny < height as isize)
            .then(|| ny as usize * width + nx as usize)
    })
}

/// Pass 1 of the transport (seed 004 step 3): with a = h + w, the lower neighbours' drops
/// d_i = a − a_i, d_total their sum and Δa = a − mean(a over the cell and its lower
/// neighbours), the cell sends Δw_i = min(w, Δa)·d_i/d_total to each. Stored per cell, not
/// per neighbour: `moved` = min(w, Δa) and `share` = moved/d_total.
///
/// Interior cells go through whole-row loops per direction ([`send_interior`], vectorised);
/// the map's border ring, whose neighbourhoods are clipped, through [`send_cell`]. Both do
/// the same operations in the same order, so the result is the same bit for bit.
fn send(a: &[f32], w: &[f32], width: usize, height: usize, share: &mut [f32], moved: &mut [f32]) {
    share
        .par_chunks_mut(width.max(1))
        .zip(moved.par_chunks_mut(width.max(1)))
        .enumerate()
        .for_each_init(
            || {
                [
                    vec![0.0f32; width],
                    vec![0.0f32; width],
                    vec![0.0f32; width],
                ]
            },
            |[total, sum_a, count], (y, (share, moved))| {
                if y == 0 || y + 1 >= height || width < 3 {
                    for x in 0..width {
                        send_cell(a, w, width, height, x, y, share, moved);
                    }
                    return;
                }
                send_interior(a, w, width, y, share, moved, total, sum_a, count);
                for x in [0, width - 1] {
                    send_cell(a, w, width, height, x, y, share, moved);
                }
            },
        );
}

/// [`send`] for one cell, any position (the clipped neighbourhood of the border ring).
#[allow(clippy::too_many_arguments)]
#[inline]
fn send_cell(
    a: &[f32],
    w: &[f32],
    width: usize,
    height: usize,
    x: usize,
    y: usize,
    share: &mut [f32],
    moved: &mut [f32],
) {
    let i = y * width + x;
    let (mut total, mut sum_a, mut count) = (0.0f32, a[i], 1.0f32);
    for j in neighbours(x, y, width, height) {
        let lower = a[j] < a[i];
        let d = a[i] - a[j];
        total += if d > 0.0 { d } else { 0.0 };
        sum_a += if lower { a[j] } else { 0.0 };
        count += if lower { 1.0 } else { 0.0 };
    }
    (moved[x], share[x]) = settle(a[i], w[i], total, sum_a, count);
}

/// The amount a cell sends and its share per unit of drop, from its accumulated drops.
#[allow(clippy::inline_always)]
#[inline(always)]
fn settle(a: f32, w: f32, total: f32, sum_a: f32, count: f32) -> (f32, f32) {
    let excess = a - sum_a / count;
    let m = if excess < w { excess } else { w };
    let m = if m > 0.0 { m } else { 0.0 };
    let m = if total > 0.0 { m } else { 0.0 };
    (m, if total > 0.0 { m / total } else { 0.0 })
}

/// [`send`] for the interior cells `1..width − 1` of interior row `y`: one loop per
/// direction over equal-length slices (no bounds checks or edge cases inside), with the
/// running sums kept in per-task rows.
#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512vl+avx2+fma+sse4.1",
    "x86_64+avx2+fma+sse4.1"
))]
#[allow(clippy::too_many_arguments)]
fn send_interior(
    a: &[f32],
    w: &[f32],
    width: usize,
    y: usize,
    share: &mut [f32],
    moved: &mut [f32],
    total: &mut [f32],
    sum_a: &mut [f32],
    count: &mut [f32],
) {
    let n = width - 2;
    let at = y * width + 1;
    let centre = &a[at..at + n];
    let (total, sum_a, count) = (&mut total[..n], &mut sum_a[..n], &mut count[..n]);
    total.fill(0.0);
    sum_a.copy_from_slice(centre);
    count.fill(1.0);
    for &(dx, dy, _) in &NEIGHBOURS {
        let from = (at as isize + dy * width as isize + dx) as usize;
        let nb = &a[from..from + n];
        for ((((t, s), k), &c), &b) in total
            .iter_mut()
            .zip(sum_a.iter_mut())
            .zip(count.iter_mut())
            .zip(centre)
            .zip(nb)
        {
            let lower = b < c;
            let d = c - b;
            *t += if d > 0.0 { d } else { 0.0 };
            *s += if lower { b } else { 0.0 };
            *k += if lower { 1.0 } else { 0.0 };
        }
    }
    let (share, moved) = (&mut share[1..=n], &mut moved[1..=n]);
    let water = &w[at..at + n];
    for i in 0..n {
        (moved[i], share[i]) = settle(centre[i], water[i], total[i], sum_a[i], count[i]);
    }
}

/// Pass 2: each cell's new water and sediment = own − sent + what its higher neighbours
/// sent to it, recomputed from their shares with the same comparison they made; sediment
/// travels with the water at its sender's concentration s/w. Interior and border cells as in
/// [`send`].
#[allow(clippy::too_many_arguments)]
fn receive(
    a: &[f32],
    w: &[f32],
    s: &[f32],
    share: &[f32],
    moved: &[f32],
    ratio: &[f32],
    width: usize,
    height: usize,
    w2: &mut [f32],
    s2: &mut [f32],
) {
    let f = Fields {
        a,
        w,
        s,
        share,
        moved,
        ratio,
    };
    w2.par_chunks_mut(width.max(1))
        .zip(s2.par_chunks_mut(width.max(1)))
        .enumerate()
        .for_each(|(y, (w2, s2))| {
            if y == 0 || y + 1 >= height || width < 3 {
                for x in 0..width {
                    receive_cell(&f, width, height, x, y, w2, s2);
                }
                return;
            }
            receive_interior(&f, width, y, w2, s2);
            for x in [0, width - 1] {
                receive_cell(&f, width, height, x, y, w2, s2);
            }
        });
}

/// The fields pass 2 reads.
struct Fields<'a> {
    a: &'a [f32],
    w: &'a [f32],
    s: &'a [f32],
    share: &'a [f32],
    moved: &'a [f32],
    ratio: &'a [f32],
}

/// [`receive`] for one cell, any position.
#[inline]
fn receive_cell(
    f: &Fields,
    width: usize,
    height: usize,
    x: usize,
    y: usize,
    w2: &mut [f32],
    s2: &mut [f32],
) {
    let i = y * width + x;
    let (mut wi, mut si) = (f.w[i] - f.moved[i], f.s[i] - f.moved[i] * f.ratio[i]);
    for j in neighbours(x, y, width, height) {
        // (a_j − a_i)⁺: exactly the drop the sender used, or 0 when it sent nothing here.
        let d = f.a[j] - f.a[i];
        let flow = (if d > 0.0 { d } else { 0.0 }) * f.share[j];
        wi += flow;
        si += flow * f.ratio[j];
    }
    w2[x] = wi;
    s2[x] = si;
}

/// [`receive`] for the interior cells of interior row `y`, one loop per direction.
#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512vl+avx2+fma+sse4.1",
    "x86_64+avx2+fma+sse4.1"
))]
fn receive_interior(f: &Fields, width: usize, y: usize, w2: &mut [f32], s2: &mut [f32]) {
    let n = width - 2;
    let at = y * width + 1;
    let centre = &f.a[at..at + n];
    let (wo, so) = (&mut w2[1..=n], &mut s2[1..=n]);
    let (moved, ratio) = (&f.moved[at..at + n], &f.ratio[at..at + n]);
    for i in 0..n {
        wo[i] = f.w[at + i] - moved[i];
        so[i] = f.s[at + i] - moved[i] * ratio[i];
    }
    for &(dx, dy, _) in &NEIGHBOURS {
        let from = (at as isize + dy * width as isize + dx) as usize;
        let (nb, sh, ra) = (
            &f.a[from..from + n],
            &f.share[from..from + n],
            &f.ratio[from..from + n],
        );
        for (((((wv, sv), &c), &b), &shv), &rv) in wo
            .iter_mut()
            .zip(so.iter_mut())
            .zip(centre)
            .zip(nb)
            .zip(sh)
            .zip(ra)
        {
            let d = b - c;
            let flow = (if d > 0.0 { d } else { 0.0 }) * shv;
            *wv += flow;
            *sv += flow * rv;
        }
    }
}

impl Node for GridHydraulic {
    type Params = GridHydraulicParams;
    /// Measured: 5.6 fields of scratch at 1024² (peak RSS, docs/reliability.md), rounded up.
    const SCRATCH_FIELDS: u32 = 6;
    const SPEC: NodeSpec = NodeSpec {
        id: "grid_hydraulic_erosion",
        label: "Hydraulic erosion (grid)",
        category: Category::Erosion,
        version: 2,
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
        let (mut w2, mut s2) = (vec![0.0f32; n], vec![0.0f32; n]);
        let (mut a, mut share, mut moved, mut ratio) = (
            vec![0.0f32; n],
            vec![0.0f32; n],
            vec![0.0f32; n],
            vec![0.0f32; n],
        );
        for it in 0..p.iterations {
            ctx.check_cancel()?;
            // 1–2: rain, then dissolve; the surface a = h + w and the concentration s/w.
            h.par_iter_mut()
                .zip(w.par_iter_mut())
                .zip(s.par_iter_mut())
                .zip(a.par_iter_mut().zip(ratio.par_iter_mut()))
                .for_each(|(((h, w), s), (a, r))| {
                    *w += kr;
                    let d = ks * *w;
                    *h -= d;
                    *s += d;
                    *a = *h + *w;
                    *r = if *w > 0.0 { *s / *w } else { 0.0 };
                });
            // 3: transport water, and sediment with it.
            send(&a, &w, width, height, &mut share, &mut moved);
            receive(
                &a, &w, &s, &share, &moved, &ratio, width, height, &mut w2, &mut s2,
            );
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
