//! `grid_hydraulic_erosion`: seed 004's hydraulic erosion on the grid — rain, dissolve,
//! transport by levelling water + terrain, evaporation, deposition above capacity.

use super::{ring_slot as slot, LANES, NEIGHBOURS};
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

/// Rows of output per parallel task. Each band recomputes stages A and B for the two rows
/// on either side it shares with its neighbours (≈ 12% extra work at 32 rows).
const BAND: usize = 32;
/// Surface height off the map: above every real cell, so nothing flows there and it sends
/// nothing (its share is 0). Finite, so `PAD − a` times a zero share stays zero.
const PAD: f32 = f32::MAX;

/// The constants of one run.
#[derive(Clone, Copy)]
struct Rates {
    kr: f32,
    ks: f32,
    ke: f32,
    kc: f32,
}

/// Per-task rows, each padded with one cell on both sides (`PAD` surface, zero share and
/// concentration there, written once here and never again). Stage A rows (after rain and
/// dissolving) live in a ring of four, stage B rows (what each cell sends) in a ring of three.
struct Scratch {
    h: [Vec<f32>; 4],
    w: [Vec<f32>; 4],
    s: [Vec<f32>; 4],
    /// Surface a = h + w.
    a: [Vec<f32>; 4],
    /// Concentration s/w.
    ratio: [Vec<f32>; 4],
    share: [Vec<f32>; 3],
    moved: [Vec<f32>; 3],
}

impl Scratch {
    fn new(width: usize) -> Self {
        let row = |v: f32| vec![v; width + 2];
        Self {
            h: std::array::from_fn(|_| row(0.0)),
            w: std::array::from_fn(|_| row(0.0)),
            s: std::array::from_fn(|_| row(0.0)),
            a: std::array::from_fn(|_| row(PAD)),
            ratio: std::array::from_fn(|_| row(0.0)),
            share: std::array::from_fn(|_| row(0.0)),
            moved: std::array::from_fn(|_| row(0.0)),
        }
    }
}

/// `LANES` values of `row` from `at` (callers stay inside the row).
#[allow(clippy::inline_always)]
#[inline(always)]
fn lanes(row: &[f32], at: usize) -> [f32; LANES] {
    row[at..at + LANES].try_into().unwrap_or([0.0; LANES])
}

/// Stage A for one row (seed 004 steps 1–2): rain W += K_r, dissolve H −= K_s·W,
/// S += K_s·W; the surface a = h + w and the concentration s/w.
#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512vl+avx2+fma+sse4.1",
    "x86_64+avx2+fma+sse4.1"
))]
#[allow(clippy::too_many_arguments)]
fn rain_row(
    h: &[f32],
    w: &[f32],
    s: &[f32],
    k: Rates,
    ho: &mut [f32],
    wo: &mut [f32],
    so: &mut [f32],
    ao: &mut [f32],
    ro: &mut [f32],
) {
    let n = h.len();
    let (ho, wo, so) = (&mut ho[1..=n], &mut wo[1..=n], &mut so[1..=n]);
    let (ao, ro) = (&mut ao[1..=n], &mut ro[1..=n]);
    for i in 0..n {
        let wi = w[i] + k.kr;
        let d = k.ks * wi;
        let hi = h[i] - d;
        let si = s[i] + d;
        ho[i] = hi;
        wo[i] = wi;
        so[i] = si;
        ao[i] = hi + wi;
        ro[i] = if wi > 0.0 { si / wi } else { 0.0 };
    }
}

/// Stage B for one row (seed 004 step 3, first half): with a = h + w, the lower neighbours'
/// drops d_i = a − a_i, d_total their sum and Δa = a − mean(a over the cell and its lower
/// neighbours), the cell sends Δw_i = min(w, Δa)·d_i/d_total to each. Stored per cell, not
/// per neighbour: `moved` = min(w, Δa) and `share` = moved/d_total. One loop per direction
/// over equal-length slices of padded rows (an off-map neighbour is never lower).
#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512vl+avx2+fma+sse4.1",
    "x86_64+avx2+fma+sse4.1"
))]
fn send_row(
    a: [&[f32]; 3],
    w: &[f32],
    total: &mut [f32],
    sum_a: &mut [f32],
    count: &mut [f32],
    share: &mut [f32],
    moved: &mut [f32],
) {
    let n = w.len() - 2;
    let centre = &a[1][1..=n];
    let (total, sum_a, count) = (&mut total[..n], &mut sum_a[..n], &mut count[..n]);
    // Blocks of LANES cells kept in registers across the eight directions; the tail cell by
    // cell below, with the same operations in the same order.
    let full = n / LANES * LANES;
    for x0 in (0..full).step_by(LANES) {
        let c = lanes(centre, x0);
        let mut t = [0.0f32; LANES];
        let mut sa = c;
        let mut k = [1.0f32; LANES];
        for &(dx, dy, _) in &NEIGHBOURS {
            let nb = lanes(a[(dy + 1) as usize], (x0 as isize + 1 + dx) as usize);
            for l in 0..LANES {
                let lower = nb[l] < c[l];
                let d = c[l] - nb[l];
                t[l] += if d > 0.0 { d } else { 0.0 };
                sa[l] += if lower { nb[l] } else { 0.0 };
                k[l] += if lower { 1.0 } else { 0.0 };
            }
        }
        total[x0..x0 + LANES].copy_from_slice(&t);
        sum_a[x0..x0 + LANES].copy_from_slice(&sa);
        count[x0..x0 + LANES].copy_from_slice(&k);
    }
    for x in full..n {
        let c = centre[x];
        let (mut t, mut sa, mut k) = (0.0f32, c, 1.0f32);
        for &(dx, dy, _) in &NEIGHBOURS {
            let b = a[(dy + 1) as usize][(x as isize + 1 + dx) as usize];
            let lower = b < c;
            let d = c - b;
            t += if d > 0.0 { d } else { 0.0 };
            sa += if lower { b } else { 0.0 };
            k += if lower { 1.0 } else { 0.0 };
        }
        (total[x], sum_a[x], count[x]) = (t, sa, k);
    }
    let (share, moved, water) = (&mut share[1..=n], &mut moved[1..=n], &w[1..=n]);
    for i in 0..n {
        let excess = centre[i] - sum_a[i] / count[i];
        let m = if excess < water[i] { excess } else { water[i] };
        let m = if m > 0.0 && total[i] > 0.0 { m } else { 0.0 };
        moved[i] = m;
        share[i] = if total[i] > 0.0 { m / total[i] } else { 0.0 };
    }
}

/// Stage C for one row (seed 004 step 3, second half, then steps 4–5): new water and
/// sediment = own − sent + what the higher neighbours sent here, recomputed from their
/// shares with the comparison they made (sediment travels at the sender's concentration);
/// then evaporation W := (1 − K_e)·W and deposition of what exceeds K_c·W.
#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512vl+avx2+fma+sse4.1",
    "x86_64+avx2+fma+sse4.1"
))]
#[allow(clippy::too_many_arguments)]
fn receive_row(
    a: [&[f32]; 3],
    share: [&[f32]; 3],
    ratio: [&[f32]; 3],
    centre: [&[f32]; 4],
    k: Rates,
    ho: &mut [f32],
    wo: &mut [f32],
    so: &mut [f32],
) {
    let n = ho.len();
    let [h, w, s, moved] = centre.map(|r| &r[1..=n]);
    let (ca, cr) = (&a[1][1..=n], &ratio[1][1..=n]);
    for i in 0..n {
        wo[i] = w[i] - moved[i];
        so[i] = s[i] - moved[i] * cr[i];
    }
    // Blocks of LANES cells kept in registers across the eight directions, then the tail
    // with the same operations in the same order.
    let full = n / LANES * LANES;
    for x0 in (0..full).step_by(LANES) {
        let c = lanes(ca, x0);
        let mut wa = lanes(wo, x0);
        let mut sa = lanes(so, x0);
        for &(dx, dy, _) in &NEIGHBOURS {
            let (at, r) = ((x0 as isize + 1 + dx) as usize, (dy + 1) as usize);
            let (nb, sh, ra) = (lanes(a[r], at), lanes(share[r], at), lanes(ratio[r], at));
            for l in 0..LANES {
                // (a_j − a_i)⁺: exactly the drop the sender used, or 0 when it sent nothing here.
                let d = nb[l] - c[l];
                let flow = (if d > 0.0 { d } else { 0.0 }) * sh[l];
                wa[l] += flow;
                sa[l] += flow * ra[l];
            }
        }
        wo[x0..x0 + LANES].copy_from_slice(&wa);
        so[x0..x0 + LANES].copy_from_slice(&sa);
    }
    for x in full..n {
        for &(dx, dy, _) in &NEIGHBOURS {
            let (at, r) = ((x as isize + 1 + dx) as usize, (dy + 1) as usize);
            let d = a[r][at] - ca[x];
            let flow = (if d > 0.0 { d } else { 0.0 }) * share[r][at];
            wo[x] += flow;
            so[x] += flow * ratio[r][at];
        }
    }
    for i in 0..n {
        let wi = wo[i] * (1.0 - k.ke);
        let excess = so[i] - k.kc * wi;
        let excess = if excess > 0.0 { excess } else { 0.0 };
        wo[i] = wi;
        so[i] -= excess;
        ho[i] = h[i] + excess;
    }
}

/// One iteration, fused: each band of output rows streams through stages A → B → C on
/// task-local rows, so the whole map is read once (h, w, s) and written once (h2, w2, s2).
/// Every row's stages are computed by the same code whichever band asks, so the result
/// does not depend on the thread count. What a cell sends is subtracted from it once and
/// added to its receivers once, from the same shares: water and sediment are conserved.
#[allow(clippy::too_many_arguments)]
fn step(
    (h, w, s): (&[f32], &[f32], &[f32]),
    (h2, w2, s2): (&mut [f32], &mut [f32], &mut [f32]),
    width: usize,
    height: usize,
    k: Rates,
) {
    let band = width * BAND;
    h2.par_chunks_mut(band)
        .zip(w2.par_chunks_mut(band))
        .zip(s2.par_chunks_mut(band))
        .enumerate()
        .for_each_init(
            || {
                (
                    Scratch::new(width),
                    [vec![0.0f32; width], vec![0.0; width], vec![0.0; width]],
                )
            },
            |(sc, [total, sum_a, count]), (b, ((ho, wo), so))| {
                let y0 = (b * BAND) as isize;
                let y1 = y0 + (ho.len() / width) as isize;
                let on_map = |q: isize| q >= 0 && q < height as isize;
                for q in (y0 - 2)..=(y1 + 1) {
                    // Stage A for row q.
                    let t = slot(q, 4);
                    if on_map(q) {
                        let r = q as usize * width..(q as usize + 1) * width;
                        rain_row(
                            &h[r.clone()],
                            &w[r.clone()],
                            &s[r],
                            k,
                            &mut sc.h[t],
                            &mut sc.w[t],
                            &mut sc.s[t],
                            &mut sc.a[t],
                            &mut sc.ratio[t],
                        );
                    } else {
                        sc.a[t].fill(PAD);
                        sc.ratio[t].fill(0.0);
                    }
                    // Stage B for row q − 1.
                    let p = q - 1;
                    if p >= y0 - 1 {
                        let t = slot(p, 3);
                        if on_map(p) {
                            let a =
                                [slot(p - 1, 4), slot(p, 4), slot(p + 1, 4)].map(|i| &sc.a[i][..]);
                            send_row(
                                a,
                                &sc.w[slot(p, 4)],
                                total,
                                sum_a,
                                count,
                                &mut sc.share[t],
                                &mut sc.moved[t],
                            );
                        } else {
                            sc.share[t].fill(0.0);
                            sc.moved[t].fill(0.0);
                        }
                    }
                    // Stage C for row q − 2.
                    let y = q - 2;
                    if y >= y0 && y < y1 {
                        let rows4 = [slot(y - 1, 4), slot(y, 4), slot(y + 1, 4)];
                        let rows3 = [slot(y - 1, 3), slot(y, 3), slot(y + 1, 3)];
                        let (c4, c3) = (slot(y, 4), slot(y, 3));
                        let at = (y - y0) as usize * width..(y - y0 + 1) as usize * width;
                        receive_row(
                            rows4.map(|i| &sc.a[i][..]),
                            rows3.map(|i| &sc.share[i][..]),
                            rows4.map(|i| &sc.ratio[i][..]),
                            [
                                &sc.h[c4][..],
                                &sc.w[c4][..],
                                &sc.s[c4][..],
                                &sc.moved[c3][..],
                            ],
                            k,
                            &mut ho[at.clone()],
                            &mut wo[at.clone()],
                            &mut so[at],
                        );
                    }
                }
            },
        );
}

impl Node for GridHydraulic {
    type Params = GridHydraulicParams;
    /// h, w, s and their next-iteration buffers (the fused pass keeps only rows besides);
    /// 5.6 fields were measured for the earlier unfused version (docs/reliability.md).
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
        let k = Rates { kr, ks, ke, kc };
        let mut h = src.data().to_vec();
        let mut w = vec![0.0f32; n];
        let mut s = vec![0.0f32; n];
        let (mut h2, mut w2, mut s2) = (vec![0.0f32; n], vec![0.0f32; n], vec![0.0f32; n]);
        for it in 0..p.iterations {
            ctx.check_cancel()?;
            step((&h, &w, &s), (&mut h2, &mut w2, &mut s2), width, height, k);
            std::mem::swap(&mut h, &mut h2);
            std::mem::swap(&mut w, &mut w2);
            std::mem::swap(&mut s, &mut s2);
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
