//! `thermal_erosion`: material above the talus angle slides to lower neighbours
//! (Olsen 2004, "Thermal Erosion"), and Olsen's speed-optimised variant.

use super::levels::{self, Detail, Extra};
use super::{around, blocks, blocks_mut, ring_slot as slot, Row, LANES, NEIGHBOURS};
use crate::field::Field;
use crate::node::{EvalCtx, Node, NodeError};
use rayon::prelude::*;

crate::choice_enum! {
    /// Which neighbours receive material: `classic` = every neighbour steeper than the talus,
    /// in proportion to its drop (Olsen 2004's formula); `olsen` = only the steepest neighbour,
    /// half the excess (Olsen 2004's speed-optimised version).
    pub enum Variant { Classic = "classic", Olsen = "olsen" }
}

crate::params! {
    pub struct ThermalParams {
        /// Talus angle T in degrees: slopes steeper than this shed material. Converted to a height drop with the real distance to each neighbour, so the result does not depend on the resolution.
        talus_deg: f64 = float(35.0, [10.0, 60.0], [0.0, 89.0], "°"),
        /// Erosion magnitude c in (0, 1]: the fraction of the excess drop moved per iteration (Olsen 2004's c), moved in sub-steps of at most 1/8 so that simultaneous updates never overshoot.
        strength: f64 = float(0.5, [0.1, 1.0], [0.0, 1.0], ""),
        /// Number of iterations (at the base resolution, and again at each finer level in consistent mode, where they settle that level's own detail).
        iterations: u32 = int(50, [1, 500], [0, 100_000], ""),
        /// classic (Olsen 2004: all steeper neighbours, in proportion) or olsen (only the steepest neighbour).
        variant: Variant = choice(Variant::Classic),
        /// consistent: the same terrain at every resolution — the process runs in full at base_resolution and a finer build only adds detail below that grid's cells (a preview at the base resolution is a build's first level). native: Olsen 2004's rule run once at the resolution being built (iterations count cells, so the result depends on the resolution).
        detail: Detail = choice(Detail::Consistent) as "Resolution handling",
        /// Samples per side of the grid the process runs on in full (consistent only). Finer builds refine from it, coarser previews average it.
        base_resolution: u32 = int(256, [64, 1024], [16, 8192], "") if detail in ["consistent"],
    }
}

crate::node! {
    /// Thermal erosion.
    pub struct Thermal {
        id: "thermal_erosion",
        label: "Thermal erosion",
        category: Erosion,
        version: 3,
        doc: "Thermal erosion (Olsen 2004, \"Thermal Erosion\"): for each cell, with d_i = h − h_i to its 8 neighbours and T the talus angle turned into a height drop with the real distance to each neighbour (tan(talus_deg) · cell size, ×√2 diagonally), d_max the largest excess d_i − T and d_total the sum of the d_i > T, each such neighbour receives h_i += c·(d_max − T)·d_i/d_total and the cell loses the same. The olsen variant (Olsen 2004's speed-optimised version, only named in Olsen 2004) sends half the excess to the steepest neighbour only. All cells update together (two parallel passes) in sub-steps of at most c = 1/8 (a larger simultaneous step overshoots and leaves ripples on every talus slope); material is conserved, nothing leaves the map. Resolution: by default (detail = consistent) the rule runs in full at base_resolution (256²) and finer builds add only detail below those cells, so previews and builds show the same terrain; detail = native runs it once at the resolution being built (Olsen's literal rule: its iterations count cells). Outputs the eroded height, a deposition mask (where material accumulated, 1 at the largest deposit) and an erosion mask (where it was shed, 1 at the largest loss).",
        params: ThermalParams,
        inputs: ThermalIn {
            /// Terrain to erode.
            r#in: height,
        },
        outputs: ThermalOut {
            /// Eroded terrain.
            out: height,
            /// Where material came to rest, in [0, 1].
            deposition: mask,
            /// Where the terrain went down (talus shed), relative to the largest loss.
            erosion: mask,
        },
    }
}

/// Rows of output computed by one parallel task (the per-cell shares are recomputed for the
/// two rows bordering each band, about 6% extra work at 32 rows).
const BAND: usize = 32;
/// Cells per run in pass 2: a run whose cells and neighbours send nothing is copied, not
/// computed (most of a map once its slopes have relaxed below the talus angle).
const CHUNK: usize = 128;
/// The largest share of the excess moved in one simultaneous update (see `native`): the
/// exchange with up to eight neighbours at once is free of overshoot below it.
const MAX_SUB_STRENGTH: f64 = 0.125;
/// Height beyond the map edge: never lower than a real cell, so it takes nothing (finite,
/// so that `pad − h` times a zero share stays zero).
const PAD: f32 = f32::MAX;

/// Per-task scratch: a ring of four padded height rows and three rows of each cell's
/// outflow description, so pass 1 runs once per row and pass 2 reads it from cache.
struct Scratch {
    heights: [Row; 4],
    /// Classic: c·(d_max − T)/d_total, the share of each drop sent. Olsen: the amount sent.
    share: [Row; 3],
    /// Total outflow of the cell.
    out: [Row; 3],
    /// Olsen: direction index of the steepest neighbour (−1 = none).
    dir: [Row; 3],
    /// Per run of `CHUNK` cells: does any of them send anything?
    active: [Vec<bool>; 3],
}

impl Scratch {
    /// Rows of `blocks · LANES` cells plus one cell of padding on each side.
    fn new(blocks: usize) -> Self {
        let len = blocks * LANES + 2;
        Self {
            heights: std::array::from_fn(|_| Row::new(len, PAD, 1)),
            share: std::array::from_fn(|_| Row::new(len, 0.0, 1)),
            out: std::array::from_fn(|_| Row::new(len, 0.0, 1)),
            dir: std::array::from_fn(|_| Row::new(len, -1.0, 1)),
            active: std::array::from_fn(|_| vec![false; (len - 2).div_ceil(CHUNK)]),
        }
    }
}

/// Copies map row `y` into a row padded with `PAD` on both sides (`PAD` everywhere off the
/// map).
fn load_row(h: &[f32], w: usize, rows: usize, y: isize, dst: &mut [f32]) {
    if y >= 0 && y < rows as isize {
        let y = y as usize;
        // Only the cells outside the map are padding: filling the whole row first cost a
        // second pass over it.
        dst[0] = PAD;
        dst[1..=w].copy_from_slice(&h[y * w..(y + 1) * w]);
        dst[w + 1..].fill(PAD);
    } else {
        dst.fill(PAD);
    }
}

/// Pass 1 for one row: how much each cell sends (Olsen 2004: h_i += c·(d_max − T)·d_i/d_total
/// to every neighbour with d_i > T; Olsen: half the excess to the steepest one). Stored per
/// cell, not per neighbour: `out` = total sent, `share` = c·(d_max − T)/d_total (classic) or
/// the amount sent (Olsen), `dir` = the steepest direction (Olsen). Branch-free over blocks
/// of `LANES` cells kept in registers across the eight directions; the variant is chosen
/// once per row, outside the loop.
#[cfg_attr(
    not(any(feature = "simd-max-avx2", feature = "simd-portable")),
    multiversion::multiversion(targets(
        "x86_64+avx512f+avx512vl+avx2+fma+sse4.1",
        "x86_64+avx2+fma+sse4.1"
    ))
)]
#[cfg_attr(
    all(feature = "simd-max-avx2", not(feature = "simd-portable")),
    multiversion::multiversion(targets("x86_64+avx2+fma+sse4.1"))
)]
#[expect(clippy::too_many_arguments)]
fn send_row(
    rows: [&[f32]; 3],
    w: usize,
    talus: &[f32; 8],
    c: f32,
    variant: Variant,
    share: &mut [f32],
    out: &mut [f32],
    dir: &mut [f32],
    active: &mut [bool],
) {
    match variant {
        Variant::Classic => send_blocks::<false>(rows, w, talus, c, share, out, dir),
        Variant::Olsen => send_blocks::<true>(rows, w, talus, c, share, out, dir),
    }
    // Cells past the map edge send nothing.
    for v in [share, out] {
        v[w + 1..].fill(0.0);
    }
    dir[w + 1..].fill(-1.0);
    for (j, on) in active.iter_mut().enumerate() {
        let run = &out[1 + j * CHUNK..(1 + (j + 1) * CHUNK).min(w + 1)];
        // Amounts are ≥ 0: any non-zero bit pattern is a sender (an integer OR vectorises).
        *on = run.iter().fold(0u32, |m, &v| m | v.to_bits()) != 0;
    }
}

/// [`send_row`]'s block loop for one variant (inlined into each of its target clones).
#[expect(clippy::inline_always)]
#[inline(always)]
fn send_blocks<const OLSEN: bool>(
    rows: [&[f32]; 3],
    w: usize,
    talus: &[f32; 8],
    c: f32,
    share: &mut [f32],
    out: &mut [f32],
    dir: &mut [f32],
) {
    let count = w.div_ceil(LANES);
    let (nbrs, centres) = (around(rows, count), blocks(&rows[1][1..], count));
    let (share, out) = (
        blocks_mut(&mut share[1..], count),
        blocks_mut(&mut out[1..], count),
    );
    let dir = blocks_mut(&mut dir[1..], count);
    for b in 0..count {
        let centre = centres[b];
        let mut total = [0.0f32; LANES];
        let mut most = [0.0f32; LANES];
        let mut steepest = [-1.0f32; LANES];
        for (k, rows) in nbrs.iter().enumerate() {
            let nb = rows[b];
            let (t, kf) = (talus[k], k as f32);
            for l in 0..LANES {
                let d = centre[l] - nb[l];
                let e = d - t;
                if OLSEN {
                    // The first strictly largest excess wins, as in the scalar rule.
                    let larger = e > most[l];
                    steepest[l] = if larger { kf } else { steepest[l] };
                    most[l] = if larger { e } else { most[l] };
                } else {
                    total[l] += if e > 0.0 { d } else { 0.0 };
                    // A plain compare-select (`f32::max` adds NaN handling).
                    most[l] = if e > most[l] { e } else { most[l] };
                }
            }
        }
        let (sh, ou) = (&mut share[b], &mut out[b]);
        if OLSEN {
            let di = &mut dir[b];
            for l in 0..LANES {
                let amount = 0.5 * c * most[l];
                sh[l] = amount;
                ou[l] = amount;
                di[l] = steepest[l];
            }
        } else if total.iter().fold(0u32, |m, &v| m | v.to_bits()) == 0 {
            // No cell of the block sends (most of a relaxed map): skip the division.
            *sh = [0.0; LANES];
            *ou = [0.0; LANES];
        } else {
            for l in 0..LANES {
                let send = total[l] > 0.0;
                sh[l] = if send { c * most[l] / total[l] } else { 0.0 };
                ou[l] = if send { c * most[l] } else { 0.0 };
            }
        }
    }
}

/// Pass 2 for one row: new height = old − what the cell sent + what its neighbours sent to
/// it (recomputed from their shares: a neighbour j at direction k sends (h_j − h)·share_j
/// when h_j − h exceeds the talus drop; Olsen: its amount when its steepest direction points
/// here, 7 − k).
#[cfg_attr(
    not(any(feature = "simd-max-avx2", feature = "simd-portable")),
    multiversion::multiversion(targets(
        "x86_64+avx512f+avx512vl+avx2+fma+sse4.1",
        "x86_64+avx2+fma+sse4.1"
    ))
)]
#[cfg_attr(
    all(feature = "simd-max-avx2", not(feature = "simd-portable")),
    multiversion::multiversion(targets("x86_64+avx2+fma+sse4.1"))
)]
#[expect(clippy::too_many_arguments)]
fn receive_row(
    rows: [&[f32]; 3],
    share: [&[f32]; 3],
    out: &[f32],
    dir: [&[f32]; 3],
    w: usize,
    talus: &[f32; 8],
    variant: Variant,
    active: [&[bool]; 3],
    dst: &mut [f32],
) {
    let centre = &rows[1][1..=w];
    for (j, run) in dst.chunks_mut(CHUNK).enumerate() {
        let x0 = j * CHUNK;
        let lo = j.saturating_sub(1);
        let hi = (j + 2).min(active[1].len());
        let c = &centre[x0..x0 + run.len()];
        if active.iter().all(|a| a[lo..hi].iter().all(|&on| !on)) {
            run.copy_from_slice(c);
            continue;
        }
        receive_run(rows, share, out, dir, x0, talus, variant, run);
    }
}

/// [`receive_row`] for the run of cells starting at map column `x0`: whole-run loops (one
/// per direction) over at most four streams each, which the loop vectoriser handles (16-lane
/// blocks with a select were left scalar).
#[expect(clippy::inline_always, clippy::too_many_arguments)]
#[inline(always)]
fn receive_run(
    rows: [&[f32]; 3],
    share: [&[f32]; 3],
    out: &[f32],
    dir: [&[f32]; 3],
    x0: usize,
    talus: &[f32; 8],
    variant: Variant,
    dst: &mut [f32],
) {
    let n = dst.len();
    let centre = &rows[1][x0 + 1..x0 + 1 + n];
    for ((o, &c), &own) in dst.iter_mut().zip(centre).zip(&out[x0 + 1..x0 + 1 + n]) {
        *o = c - own;
    }
    for (k, &(dx, dy, _)) in NEIGHBOURS.iter().enumerate() {
        let at = (x0 as isize + 1 + dx) as usize;
        let r = (dy + 1) as usize;
        let sh = &share[r][at..at + n];
        if variant == Variant::Classic {
            let t = talus[k];
            let nb = &rows[r][at..at + n];
            for (((o, &n), &c), &s) in dst.iter_mut().zip(nb).zip(centre).zip(sh) {
                let d = n - c;
                *o += if d - t > 0.0 { d * s } else { 0.0 };
            }
        } else {
            let towards = (7 - k) as f32;
            let di = &dir[r][at..at + n];
            for ((o, &d), &s) in dst.iter_mut().zip(di).zip(sh) {
                *o += if d == towards { s } else { 0.0 };
            }
        }
    }
}

/// One iteration, parallel over bands of rows. Every row's pass 1 is computed by the same
/// code whichever band asks for it, so the result does not depend on the thread count.
/// What a cell sends is subtracted from it once and added to its receivers once (from the
/// same shares), so material is conserved up to rounding; off-map neighbours take nothing.
fn step(
    h: &[f32],
    next: &mut [f32],
    w: usize,
    rows: usize,
    talus: &[f32; 8],
    c: f32,
    variant: Variant,
) {
    let blocks = w.div_ceil(LANES);
    next.par_chunks_mut(w * BAND).enumerate().for_each_init(
        || Scratch::new(blocks),
        |sc, (band, chunk)| {
            let y0 = (band * BAND) as isize;
            let y1 = y0 + (chunk.len() / w) as isize;
            let Scratch {
                heights,
                share,
                out,
                dir,
                active,
            } = sc;
            for y in (y0 - 2)..y0 {
                load_row(h, w, rows, y, &mut heights[slot(y, 4)]);
            }
            for r in (y0 - 1)..=y1 {
                load_row(h, w, rows, r + 1, &mut heights[slot(r + 1, 4)]);
                let s = slot(r, 3);
                if r < 0 || r >= rows as isize {
                    share[s].fill(0.0);
                    out[s].fill(0.0);
                    dir[s].fill(-1.0);
                    active[s].fill(false);
                } else {
                    let hr = [
                        &heights[slot(r - 1, 4)][..],
                        &heights[slot(r, 4)][..],
                        &heights[slot(r + 1, 4)][..],
                    ];
                    let (sh, ou, di) = (&mut share[s], &mut out[s], &mut dir[s]);
                    send_row(hr, w, talus, c, variant, sh, ou, di, &mut active[s]);
                }
                let y = r - 1;
                if y >= y0 && y < y1 {
                    let local = (y - y0) as usize;
                    let hr = [
                        &heights[slot(y - 1, 4)][..],
                        &heights[slot(y, 4)][..],
                        &heights[slot(y + 1, 4)][..],
                    ];
                    let sh = [
                        &share[slot(y - 1, 3)][..],
                        &share[slot(y, 3)][..],
                        &share[slot(y + 1, 3)][..],
                    ];
                    let di = [
                        &dir[slot(y - 1, 3)][..],
                        &dir[slot(y, 3)][..],
                        &dir[slot(y + 1, 3)][..],
                    ];
                    let dst = &mut chunk[local * w..(local + 1) * w];
                    let ac = [
                        &active[slot(y - 1, 3)][..],
                        &active[slot(y, 3)][..],
                        &active[slot(y + 1, 3)][..],
                    ];
                    receive_row(hr, sh, &out[slot(y, 3)], di, w, talus, variant, ac, dst);
                }
            }
        },
    );
}

impl Node for Thermal {
    // The two height buffers, + 4 for the coarse-to-fine levels at the target size.
    const SCRATCH_FIELDS: u32 = 2 + 4;

    fn eval(ctx: &EvalCtx, inputs: ThermalIn, p: &ThermalParams) -> Result<ThermalOut, NodeError> {
        // Refinement: the talus rule again at each finer level, as many iterations
        // (relaxation is local: a level's own detail settles within them).
        levels::by_detail::<Self>(
            ctx,
            inputs,
            p,
            (p.detail, p.base_resolution as usize),
            native,
            ThermalParams::clone,
            &[Extra::Deposit, Extra::Wear],
        )
    }
}

/// Olsen 2004's rule run `iterations` times at the context's resolution.
fn native(ctx: &EvalCtx, inputs: ThermalIn, p: &ThermalParams) -> Result<ThermalOut, NodeError> {
    {
        let src = inputs.r#in;
        let cell = ctx.cell_size_m() as f32;
        let t = libm::tan(p.talus_deg.to_radians()) as f32 * cell;
        let talus: [f32; 8] = std::array::from_fn(|k| t * NEIGHBOURS[k].2);
        let (w, rows) = (src.width(), src.height());
        let mut h = src.data().to_vec();
        let mut next = vec![0.0f32; h.len()];
        // All cells update at once, so a cell can receive from several neighbours while it
        // sends: moving more than 1/8 of the excess at a time overshoots and leaves a fine
        // checkerboard on every talus slope (roughness up 2.5× at 11°). Each iteration moves
        // `strength` of the excess in sub-steps of at most 1/8.
        let sub = (p.strength / MAX_SUB_STRENGTH).ceil().max(1.0) as u32;
        let c = (p.strength / f64::from(sub)) as f32;
        for i in 0..p.iterations {
            ctx.check_cancel()?;
            for _ in 0..sub {
                step(&h, &mut next, w, rows, &talus, c, p.variant);
                std::mem::swap(&mut h, &mut next);
            }
            ctx.report((i + 1) as f32 / p.iterations.max(1) as f32);
        }
        let h = Field::from_vec(w, rows, h).ok_or_else(|| NodeError::Failed("size".into()))?;
        let (wear, deposit) = super::change_masks(src, &h);
        Ok(ThermalOut {
            out: h,
            deposition: deposit,
            erosion: wear,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Olsen 2004's rule written plainly, one cell at a time, all cells from the old heights:
    /// the reference the banded, vectorised kernel is checked against.
    fn naive_step(
        h: &[f32],
        w: usize,
        rows: usize,
        talus: &[f32; 8],
        c: f32,
        v: Variant,
    ) -> Vec<f32> {
        let mut next = h.to_vec();
        for y in 0..rows {
            for x in 0..w {
                let i = y * w + x;
                let nbs: Vec<(usize, f32, f32)> = NEIGHBOURS
                    .iter()
                    .enumerate()
                    .filter_map(|(k, &(dx, dy, _))| {
                        let (nx, ny) = (x as isize + dx, y as isize + dy);
                        if nx < 0 || ny < 0 || nx >= w as isize || ny >= rows as isize {
                            return None;
                        }
                        let j = ny as usize * w + nx as usize;
                        let d = h[i] - h[j];
                        Some((j, d, d - talus[k]))
                    })
                    .collect();
                let most = nbs.iter().map(|n| n.2).fold(0.0f32, f32::max);
                if most <= 0.0 {
                    continue;
                }
                match v {
                    Variant::Classic => {
                        let total: f32 = nbs.iter().filter(|n| n.2 > 0.0).map(|n| n.1).sum();
                        for &(j, d, e) in &nbs {
                            if e > 0.0 {
                                let amount = c * most * d / total;
                                next[i] -= amount;
                                next[j] += amount;
                            }
                        }
                    }
                    Variant::Olsen => {
                        // The first strictly largest excess.
                        let mut best = None;
                        let mut top = 0.0f32;
                        for &(j, _, e) in &nbs {
                            if e > top {
                                top = e;
                                best = Some(j);
                            }
                        }
                        if let Some(j) = best {
                            let amount = 0.5 * c * most;
                            next[i] -= amount;
                            next[j] += amount;
                        }
                    }
                }
            }
        }
        next
    }

    /// The kernel is Olsen 2004's rule cell for cell (both variants, a map whose width is not
    /// a multiple of the block and whose rows span several bands), within float rounding.
    #[test]
    fn the_kernel_is_the_rule_cell_for_cell() {
        let (w, rows) = (37, 70);
        let mut seed = 11u64;
        let h: Vec<f32> = (0..w * rows)
            .map(|_| {
                seed = crate::node::splitmix64(seed);
                (seed >> 40) as f32 / (1u64 << 24) as f32 * 20.0
            })
            .collect();
        let talus: [f32; 8] = std::array::from_fn(|k| 3.0 * NEIGHBOURS[k].2);
        for v in [Variant::Classic, Variant::Olsen] {
            let mut got = vec![0.0f32; h.len()];
            step(&h, &mut got, w, rows, &talus, 0.4, v);
            let want = naive_step(&h, w, rows, &talus, 0.4, v);
            for (i, (g, r)) in got.iter().zip(&want).enumerate() {
                assert!(
                    (g - r).abs() <= 1e-4 * (1.0 + r.abs()),
                    "{v:?} cell {i}: {g} vs {r}"
                );
            }
            let moved = h.iter().zip(&got).filter(|(a, b)| a != b).count();
            assert!(
                moved > w * rows / 4,
                "{v:?}: the test terrain must move ({moved} cells)"
            );
        }
    }
}
