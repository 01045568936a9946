//! `thermal_erosion`: material above the talus angle slides to lower neighbours
//! (Olsen 2004, "Thermal Erosion"), and Olsen's speed-optimised variant.
//!
//! The whole map stays in a padded layout between sub-steps (`kernel::Padded`, rows read in
//! place), and only blocks where material moves are computed: per row, a bitset of 16-cell blocks
//! with a sender and one of blocks it recomputed; pass 1 revisits only blocks next to a block that
//! changed in the last sub-step, pass 2 only blocks next to a sender. This is exact (the same bits
//! as computing everything, tested), and a relaxed map, which is most iterations of a real run,
//! costs almost nothing. Inner loops are 16-lane register blocks in `multiversion` clones
//! (AVX-512, AVX2).

use super::kernel::{dilate, runs, words, Bits, Padded};
use super::levels::{self, Extra};
use super::{around, blocks, blocks_mut, LANES, NEIGHBOURS};
use crate::field::Field;
use crate::node::{EvalCtx, Node, NodeError};
use rayon::prelude::*;

crate::choice_enum! {
    /// Which neighbours receive material: `classic` = every neighbour steeper than the talus,
    /// in proportion to its drop (Olsen 2004's formula); `olsen` = only the steepest neighbour,
    /// half the excess (Olsen 2004's speed-optimised version); `isotropic` = Olsen's classic
    /// exchange with the excess read from the slope in any direction, so talus slopes settle
    /// at the same angle whichever way they face (no planar facets along the grid).
    pub enum Variant { Classic = "classic", Olsen = "olsen", Isotropic = "isotropic" }
}

levels::erosion_params! {
    pub struct ThermalParams {
        /// Talus angle T in degrees: slopes steeper than this shed material. Converted to a height drop with the real distance to each neighbour, so the result does not depend on the resolution.
        talus_deg: f64 = float(35.0, [10.0, 60.0], [0.0, 89.0], "°"),
        /// Erosion magnitude c in (0, 1]: the fraction of the excess drop moved per iteration (Olsen 2004's c), moved in sub-steps of at most 1/8 so that simultaneous updates never overshoot.
        strength: f64 = float(0.5, [0.1, 1.0], [0.0, 1.0], ""),
        /// Number of iterations (at the base resolution, and again, in consistent mode, at a quarter and half of the build's resolution where those are finer than the base, and a quarter of them at the build's resolution, where they settle the build's own detail).
        iterations: u32 = int(50, [1, 500], [0, 100_000], ""),
        /// classic (Olsen 2004: all steeper neighbours, in proportion), olsen (only the steepest neighbour) or isotropic (classic's exchange, the excess from the slope in any direction: no grid-aligned facets).
        variant: Variant = choice(Variant::Classic),
    }
    native: "Olsen 2004's rule run once at the resolution being built (iterations count cells, so the result depends on the resolution).",
    finer: "A finer build refines from it at its own resolution (through a quarter and half of it); coarser previews average it.",
}

crate::node! {
    /// Crumbles slopes steeper than the talus angle into scree that settles at their foot.
    /// Thermal erosion (Olsen 2004, "Thermal Erosion"): for each cell, with d_i = h − h_i to its 8
    /// neighbours and T the talus angle turned into a height drop with the real distance to each
    /// neighbour (tan(talus_deg) · cell size, ×√2 diagonally), d_max the largest excess d_i − T and
    /// d_total the sum of the d_i > T, each such neighbour receives h_i += c·(d_max −
    /// T)·d_i/d_total and the cell loses the same. The olsen variant (Olsen 2004's speed-optimised
    /// version, only named in Olsen 2004) sends half the excess to the steepest neighbour only. The
    /// isotropic variant (not in Olsen 2004) takes the excess from the cell's slope instead —
    /// the larger of its steepest directional drop and its downhill (upwind) gradient √(g_x² +
    /// g_y²), g_x the larger drop to its left and right neighbours and g_y likewise, both per
    /// cell, minus T per cell — and shares c times it among every lower neighbour in proportion to
    /// its drop: Olsen's rule holds a slope once each of the eight drops is within the talus, which
    /// lets a slope facing between two grid directions stand 8% steeper and relaxes a cone to an
    /// octagonal pyramid of planar facets; this one holds it once the slope is, whichever way it
    /// faces. All
    /// cells update together (two parallel passes) in sub-steps of at most c = 1/8 (a larger
    /// simultaneous step overshoots and leaves ripples on every talus slope); material is
    /// conserved, nothing leaves the map. Resolution: by default (detail = consistent) the rule
    /// runs in full at base_resolution (256²) and a finer build relaxes its own detail again at a
    /// quarter and half of its resolution (where finer than the base; the same iterations each)
    /// and at all of it (a quarter of them), so previews and
    /// builds show the same terrain with talus slopes at the build's cells; detail = native runs it once at the resolution
    /// being built (Olsen's literal rule: its iterations count cells). Outputs the eroded height, a
    /// deposition mask (where material accumulated, 1 at the largest deposit) and an erosion mask
    /// (where it was shed, 1 at the largest loss).
    pub struct Thermal {
        id: "thermal_erosion",
        label: "Thermal erosion",
        category: Erosion,
        version: 7,
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

/// The largest share of the excess moved in one simultaneous update (see `native`): the
/// exchange with up to eight neighbours at once is free of overshoot below it.
const MAX_SUB_STRENGTH: f64 = 0.125;
/// Height beyond the map edge: never lower than a real cell, so it takes nothing (finite,
/// so that `pad − h` times a zero share stays zero).
const PAD: f32 = f32::MAX;

/// The simultaneous update's state from sub-step to sub-step, kept in the padded layout so
/// that every pass reads its rows in place.
///
/// Only where something moves is computed. A cell's outflow (pass 1) depends only on the
/// heights of its 3 × 3 neighbourhood, and a cell's new height (pass 2) only on the outflows
/// of its own; so, per block of `LANES` cells of a row:
/// - pass 2 computes the blocks within one block and one row of a block with a sender
///   (`changed`); every other cell keeps its height exactly;
/// - pass 1 recomputes the blocks within one block and one row of a block pass 2 computed
///   in the previous sub-step; every other block's heights around it are the ones its last
///   outflow (nothing: it was not a sender, or pass 2 would have computed it) came from.
///
/// Outflows of blocks not recomputed stay zero in `share` / `out` (they were written when
/// the block was last recomputed and sent nothing), and a height not recomputed is copied
/// into the other buffer only if that buffer's copy is stale (the block changed in the
/// previous sub-step). The result is the same as computing every cell every time, bit for
/// bit; on a map whose slopes have mostly relaxed below the talus angle (the usual case after
/// the first iterations) almost nothing is touched.
struct State {
    h: Padded,
    next: Padded,
    /// Classic: c·(d_max − T)/d_total, the share of each drop sent. Olsen: the amount sent.
    share: Padded,
    /// Total outflow of the cell.
    out: Padded,
    /// Olsen: direction index of the steepest neighbour (−1 = none); classic: unused (one
    /// block wide).
    dir: Padded,
    /// Per row (`words(nb)` words) and block: does a cell of it send anything (after
    /// pass 1)?
    active: Vec<u64>,
    /// Per row and block: did pass 2 compute it in the last sub-step (a superset of the
    /// blocks whose heights changed)? All set before the first sub-step.
    changed: Vec<u64>,
    /// `changed` of the sub-step being computed.
    changed_next: Vec<u64>,
    w: usize,
    /// Blocks per row.
    nb: usize,
    /// Compute every block every time (tests: the reference the skipping is checked against).
    everywhere: bool,
}

impl State {
    fn new(src: &[f32], w: usize, rows: usize, variant: Variant) -> Self {
        let nb = w.div_ceil(LANES);
        let mut h = Padded::new(w, rows, PAD);
        h.fill_from(src, w);
        let dir_w = if variant == Variant::Olsen { w } else { 0 };
        Self {
            h,
            next: Padded::new(w, rows, PAD),
            share: Padded::new(w, rows, 0.0),
            out: Padded::new(w, rows, 0.0),
            dir: Padded::new(dir_w, rows, -1.0),
            active: vec![0; words(nb) * rows],
            changed: vec![!0; words(nb) * rows],
            changed_next: vec![0; words(nb) * rows],
            w,
            nb,
            everywhere: false,
        }
    }

    /// Flags of row `y` of `flags`, `n` words per row (`none` off the map).
    fn flags<'a>(flags: &'a Bits, n: usize, y: isize, none: &'a Bits) -> &'a Bits {
        let rows = (flags.len() / n.max(1)) as isize;
        if y < 0 || y >= rows {
            none
        } else {
            &flags[y as usize * n..(y as usize + 1) * n]
        }
    }

    /// `out` = the blocks of row `r` within one block and one row of a block set in
    /// `flags` (all of them when computing everywhere).
    fn near(&self, flags: &Bits, r: isize, none: &Bits, out: &mut Bits) {
        if self.everywhere {
            out.fill(!0);
        } else {
            let f = |y| Self::flags(flags, none.len(), y, none);
            dilate([f(r - 1), f(r), f(r + 1)], out);
        }
    }

    /// One simultaneous update moving `c` of the excess: pass 1 (outflows) over all rows,
    /// then pass 2 (new heights), each parallel over rows. Every row is computed by the same
    /// code from the same inputs whatever the thread count.
    fn step(&mut self, talus: &[f32; 8], c: f32, variant: Variant) {
        let (w, nb, n) = (self.w, self.nb, words(self.nb));
        let none = vec![0u64; n];
        let stride = self.h.stride();
        // Pass 1 writes the outflows and `active`; the flags and heights it reads are moved
        // out for the loop (a cheap swap of buffers) so the borrows stay simple.
        let mut active = std::mem::take(&mut self.active);
        let (mut share, mut out, mut dir) = (
            std::mem::replace(&mut self.share, Padded::new(0, 0, 0.0)),
            std::mem::replace(&mut self.out, Padded::new(0, 0, 0.0)),
            std::mem::replace(&mut self.dir, Padded::new(0, 0, 0.0)),
        );
        let dir_stride = dir.stride();
        {
            let this = &*self;
            share
                .rows_mut()
                .par_chunks_mut(stride)
                .zip(out.rows_mut().par_chunks_mut(stride))
                .zip(dir.rows_mut().par_chunks_mut(dir_stride))
                .zip(active.par_chunks_mut(n))
                .enumerate()
                .for_each_init(
                    || vec![0u64; n],
                    |need, (r, (((sh, ou), di), ac))| {
                        let r = r as isize;
                        this.near(&this.changed, r, &none, need);
                        let h = around_rows(&this.h, r);
                        send_row(h, w, nb, talus, c, variant, need, sh, ou, di, ac);
                    },
                );
        }
        (self.share, self.out, self.dir, self.active) = (share, out, dir, active);
        let mut next = std::mem::replace(&mut self.next, Padded::new(0, 0, 0.0));
        let mut changed_next = std::mem::take(&mut self.changed_next);
        {
            let this = &*self;
            next.rows_mut()
                .par_chunks_mut(stride)
                .zip(changed_next.par_chunks_mut(n))
                .enumerate()
                .for_each_init(
                    || vec![0u64; n],
                    |copy, (r, (dst, computed))| {
                        let r = r as isize;
                        this.near(&this.active, r, &none, computed);
                        // Blocks not computed keep their height: copied where `dst` holds an
                        // older one (they changed in the last sub-step).
                        let stale = Self::flags(&this.changed, n, r, &none);
                        for ((c, &s), &m) in copy.iter_mut().zip(stale).zip(&*computed) {
                            *c = s & !m;
                        }
                        receive_row(
                            around_rows(&this.h, r),
                            around_rows(&this.share, r),
                            this.out.row(r),
                            around_rows(&this.dir, r),
                            w,
                            nb,
                            talus,
                            variant,
                            computed,
                            copy,
                            &mut dst[1..=w],
                        );
                    },
                );
        }
        self.next = std::mem::replace(&mut self.h, next);
        self.changed_next = std::mem::replace(&mut self.changed, changed_next);
    }
}

/// Padded rows `r − 1`, `r` and `r + 1` of `p`.
fn around_rows(p: &Padded, r: isize) -> [&[f32]; 3] {
    [p.row(r - 1), p.row(r), p.row(r + 1)]
}

/// Pass 1 for one row, on the runs of blocks marked in `need`: how much each cell sends
/// (Olsen 2004: h_i += c·(d_max − T)·d_i/d_total to every neighbour with d_i > T; Olsen:
/// half the excess to the steepest one). Stored per cell, not per neighbour: `out` = total
/// sent, `share` = c·(d_max − T)/d_total (classic) or the amount sent (Olsen), `dir` = the
/// steepest direction (Olsen). Sets `active` for the blocks with a sender. Rows are padded
/// (cell x at index x + 1).
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
    nb: usize,
    talus: &[f32; 8],
    c: f32,
    variant: Variant,
    need: &Bits,
    share: &mut [f32],
    out: &mut [f32],
    dir: &mut [f32],
    active: &mut Bits,
) {
    active.fill(0);
    runs(need, nb, |b0, b1| {
        let (x0, count) = (b0 * LANES, b1 - b0);
        let rs = rows.map(|r| &r[x0..]);
        let (sh, ou) = (&mut share[x0..], &mut out[x0..]);
        match variant {
            Variant::Classic => send_blocks::<CLASSIC>(rs, count, talus, c, sh, ou, &mut []),
            Variant::Olsen => send_blocks::<OLSEN>(rs, count, talus, c, sh, ou, &mut dir[x0..]),
            Variant::Isotropic => {
                send_blocks::<ISOTROPIC>(rs, count, talus, c, sh, ou, &mut []);
            }
        }
        if b1 == nb {
            // Cells past the map edge send nothing.
            for v in [&mut *share, &mut *out] {
                v[w + 1..].fill(0.0);
            }
            if variant == Variant::Olsen {
                dir[w + 1..].fill(-1.0);
            }
        }
        for k in b0..b1 {
            let run = &out[k * LANES + 1..=(k + 1) * LANES];
            // Amounts are ≥ 0: any non-zero bit pattern is a sender (an integer OR vectorises).
            if run.iter().fold(0u32, |m, &v| m | v.to_bits()) != 0 {
                active[k / 64] |= 1 << (k % 64);
            }
        }
    });
}

/// [`send_blocks`]' variants ([`Variant`]).
const CLASSIC: u8 = 0;
/// See [`CLASSIC`].
const OLSEN: u8 = 1;
/// See [`CLASSIC`].
const ISOTROPIC: u8 = 2;
/// Directions (indices into [`NEIGHBOURS`]) of the left and right, and the upper and lower,
/// neighbours: the isotropic variant's gradient.
const ACROSS_X: [usize; 2] = [3, 4];
/// See [`ACROSS_X`].
const ACROSS_Y: [usize; 2] = [1, 6];

/// [`send_row`]'s block loop for one run of `count` blocks and one variant (`MODE`, inlined
/// into each of its target clones): rows start one cell left of the run, branch-free over
/// blocks of `LANES` cells kept in registers across the eight directions.
#[expect(clippy::inline_always)]
#[inline(always)]
fn send_blocks<const MODE: u8>(
    rows: [&[f32]; 3],
    count: usize,
    talus: &[f32; 8],
    c: f32,
    share: &mut [f32],
    out: &mut [f32],
    dir: &mut [f32],
) {
    let (nbrs, centres) = (around(rows, count), blocks(&rows[1][1..], count));
    let (share, out) = (
        blocks_mut(&mut share[1..], count),
        blocks_mut(&mut out[1..], count),
    );
    let dir = if MODE == OLSEN {
        blocks_mut(&mut dir[1..], count)
    } else {
        &mut []
    };
    // Isotropic: the talus drop per cell, and each direction's cells of distance inverted.
    let per_cell = talus[ACROSS_X[0]];
    let inv: [f32; 8] = std::array::from_fn(|k| 1.0 / NEIGHBOURS[k].2);
    for b in 0..count {
        let centre = centres[b];
        let mut total = [0.0f32; LANES];
        let mut most = [0.0f32; LANES];
        let mut steepest = [-1.0f32; LANES];
        let (mut gx, mut gy) = ([0.0f32; LANES], [0.0f32; LANES]);
        for (k, rows) in nbrs.iter().enumerate() {
            let nb = rows[b];
            let (t, kf) = (talus[k], k as f32);
            if MODE == ISOTROPIC {
                let (across_x, across_y) = (ACROSS_X.contains(&k), ACROSS_Y.contains(&k));
                for l in 0..LANES {
                    let d = centre[l] - nb[l];
                    total[l] += if d > 0.0 { d } else { 0.0 };
                    let slope = d * inv[k];
                    most[l] = if slope > most[l] { slope } else { most[l] };
                    if across_x {
                        gx[l] = if d > gx[l] { d } else { gx[l] };
                    }
                    if across_y {
                        gy[l] = if d > gy[l] { d } else { gy[l] };
                    }
                }
                continue;
            }
            for l in 0..LANES {
                let d = centre[l] - nb[l];
                let e = d - t;
                if MODE == OLSEN {
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
        if MODE == ISOTROPIC {
            // The excess: the slope per cell (the steeper of the largest directional drop
            // and the downhill gradient) above the talus drop per cell.
            for l in 0..LANES {
                let g = (gx[l] * gx[l] + gy[l] * gy[l]).sqrt();
                let e = (if g > most[l] { g } else { most[l] }) - per_cell;
                most[l] = if e > 0.0 { e } else { 0.0 };
            }
        }
        let (sh, ou) = (&mut share[b], &mut out[b]);
        if MODE == OLSEN {
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

/// Pass 2 for one row: on the runs of blocks marked in `computed`, new height = old − what
/// the cell sent + what its neighbours sent to it (recomputed from their shares: a neighbour
/// j at direction k sends (h_j − h)·share_j when h_j − h exceeds the talus drop; Olsen: its
/// amount when its steepest direction points here, 7 − k). Elsewhere the height stays and is
/// copied where `dst` holds an older one (`stale`). `dst` holds the row's `w` cells.
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
    nb: usize,
    talus: &[f32; 8],
    variant: Variant,
    computed: &Bits,
    copy: &Bits,
    dst: &mut [f32],
) {
    runs(computed, nb, |b0, b1| {
        let (x0, x1) = (b0 * LANES, (b1 * LANES).min(w));
        receive_run(rows, share, out, dir, x0, talus, variant, &mut dst[x0..x1]);
    });
    let centre = &rows[1][1..=w];
    runs(copy, nb, |b0, b1| {
        let (x0, x1) = (b0 * LANES, (b1 * LANES).min(w));
        dst[x0..x1].copy_from_slice(&centre[x0..x1]);
    });
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
        if variant == Variant::Olsen {
            let towards = (7 - k) as f32;
            let di = &dir[r][at..at + n];
            for ((o, &d), &s) in dst.iter_mut().zip(di).zip(sh) {
                *o += if d == towards { s } else { 0.0 };
            }
        } else {
            // Isotropic: every lower neighbour takes its share.
            let t = if variant == Variant::Isotropic {
                0.0
            } else {
                talus[k]
            };
            let nb = &rows[r][at..at + n];
            for (((o, &n), &c), &s) in dst.iter_mut().zip(nb).zip(centre).zip(sh) {
                let d = n - c;
                *o += if d - t > 0.0 { d * s } else { 0.0 };
            }
        }
    }
}

impl Node for Thermal {
    const TILE_REFINE: Option<crate::node::TileRefineFn> = levels::tile::<Self>();
    // The two height buffers, the outflows (share, total; Olsen: direction), + 4 for the
    // coarse-to-fine levels at the target size.
    // + 2 for the multigrid's start and change at the target, + 1 for the coarse change.
    const SCRATCH_FIELDS: u32 = 5 + 4 + 3;

    fn eval(ctx: &EvalCtx, inputs: ThermalIn, p: &ThermalParams) -> Result<ThermalOut, NodeError> {
        levels::evaluate::<Self>(ctx, inputs, p)
    }
}

impl levels::Multiscale for Thermal {
    const SCHEDULE: levels::Schedule = levels::Schedule::Direct;
    const EXTRA: &'static [Extra] = &[Extra::Deposit, Extra::Wear];

    fn resolution(p: &ThermalParams) -> (levels::Detail, usize) {
        (p.detail, p.base_resolution as usize)
    }

    fn native(
        ctx: &EvalCtx,
        inputs: ThermalIn,
        p: &ThermalParams,
    ) -> Result<ThermalOut, NodeError> {
        native(ctx, inputs, p)
    }

    /// Refinement, once at the target: the talus rule again with as many iterations.
    fn refine(p: &ThermalParams, _previous: usize) -> ThermalParams {
        p.clone()
    }

    /// The talus rule relaxes towards a state in degrees (slopes at the talus angle), and
    /// taking its drift out puts back, as a smooth field, the material the relaxation moved
    /// downhill across the base's cells. Smoothed over less than a base cell, that steepens
    /// the slopes the relaxation had settled; over more, the change averaged down drifts from
    /// the preview's. Taken out exactly (`DRIFT_EXACT`), the preview's peaks — relaxed at its
    /// own cells — come back steeper than the build's cells can hold at the talus. One base
    /// cell is the compromise; the figures behind it are in docs/perf-log.md.
    const DRIFT_SMOOTHING: f64 = 1.0;

    /// The refinement relaxes the start at a quarter and half of the target's resolution
    /// (where finer than the base; each time with the node's iterations, its change brought
    /// up by a cubic), then at the target (with a quarter of them after a coarser grid): `iterations` relax about √iterations cells, so each grid settles the
    /// slopes a few of its cells long and the next finer one starts from them (a multigrid
    /// cycle). Relaxed at the target alone, slopes longer than that stay above the talus
    /// (docs/perf-log.md).
    fn refined(
        ctx: &EvalCtx,
        inputs: ThermalIn,
        p: &ThermalParams,
        _coarse: &Field,
    ) -> Result<ThermalOut, NodeError> {
        let map = inputs.r#in.width();
        let mut start = inputs.r#in.clone();
        let base = p.base_resolution as usize;
        let mut relaxed_coarser = false;
        // (`map` is the window's side: a tiled build's piece is a window, `eval::pieces`; the
        // grids' cell sizes follow the resolution.)
        for div in [4, 2] {
            let r = map / div;
            if ctx.resolution / div <= base || !map.is_multiple_of(div) {
                continue;
            }
            relaxed_coarser = true;
            let report = |_f: f32| {};
            let lctx = levels::at_level(ctx, ctx.resolution / div, &report);
            let s = start.resample_area(r, r);
            let relaxed = native(
                &lctx,
                ThermalIn {
                    r#in: &s,
                    raw: inputs.raw,
                },
                p,
            )?;
            let change = Field::zip_map(&relaxed.out, &s, |a, b| a - b).resample_cubic(map, map);
            start = Field::zip_map(&start, &change, |a, c| a + c);
        }
        // After a coarser grid, what is left is a few of the target's cells long: a quarter
        // of the iterations settle it (the flagship's p90 35.5° / 35.4° / 35.6° at 1024² /
        // 2048² / 4096²; 35.2° / 35.1° / 35.2° with half of them, 35.1° / 35.0° / 35.0°
        // with all), and the refinement costs well under native's one run (with half of
        // them, graphs/olsen2004.json at 4096² took 6.3–7.2 s against native's 6.5 s).
        let pt = ThermalParams {
            iterations: if relaxed_coarser {
                p.iterations.div_ceil(4)
            } else {
                p.iterations
            },
            ..p.clone()
        };
        let mut out = native(
            ctx,
            ThermalIn {
                r#in: &start,
                raw: inputs.raw,
            },
            &pt,
        )?;
        let (wear, deposit) = super::change_masks(inputs.r#in, &out.out);
        out.erosion = wear;
        out.deposition = deposit;
        Ok(out)
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
        let mut state = State::new(src.data(), w, rows, p.variant);
        // All cells update at once, so a cell can receive from several neighbours while it
        // sends: moving more than 1/8 of the excess at a time overshoots and leaves a fine
        // checkerboard on every talus slope (roughness up 2.5× at 11°). Each iteration moves
        // `strength` of the excess in sub-steps of at most 1/8.
        let sub = (p.strength / MAX_SUB_STRENGTH).ceil().max(1.0) as u32;
        let c = (p.strength / f64::from(sub)) as f32;
        for i in 0..p.iterations {
            ctx.check_cancel()?;
            for _ in 0..sub {
                state.step(&talus, c, p.variant);
            }
            ctx.report((i + 1) as f32 / p.iterations.max(1) as f32);
        }
        let h =
            Field::from_vec(w, rows, state.h.to_vec(w)).ok_or_else(|| NodeError::shape(w, rows))?;
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
                if v == Variant::Isotropic {
                    // The slope per cell: the steepest directional drop, or the downhill
                    // gradient from the larger drop across x and across y.
                    let per_cell = talus[3];
                    let drop = |k: usize| {
                        let (dx, dy, _) = NEIGHBOURS[k];
                        let (nx, ny) = (x as isize + dx, y as isize + dy);
                        let inside = nx >= 0 && ny >= 0 && nx < w as isize && ny < rows as isize;
                        if inside {
                            (h[i] - h[ny as usize * w + nx as usize]).max(0.0)
                        } else {
                            0.0
                        }
                    };
                    let gx = drop(3).max(drop(4));
                    let gy = drop(1).max(drop(6));
                    let steepest = (0..8)
                        .map(|k| drop(k) / NEIGHBOURS[k].2)
                        .fold(0.0f32, f32::max);
                    let e = (gx * gx + gy * gy).sqrt().max(steepest) - per_cell;
                    if e <= 0.0 {
                        continue;
                    }
                    let total: f32 = nbs.iter().filter(|n| n.1 > 0.0).map(|n| n.1).sum();
                    for &(j, d, _) in &nbs {
                        if d > 0.0 {
                            let amount = c * e * d / total;
                            next[i] -= amount;
                            next[j] += amount;
                        }
                    }
                    continue;
                }
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
                    Variant::Isotropic => unreachable!("handled above"),
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

    /// The kernel is Olsen 2004's rule cell for cell (every variant, a map whose width is not
    /// a multiple of the block), within float rounding.
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
        for v in [Variant::Classic, Variant::Olsen, Variant::Isotropic] {
            let mut state = State::new(&h, w, rows, v);
            state.step(&talus, 0.4, v);
            let got = state.h.to_vec(w);
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

    /// Skipping the blocks where nothing moves gives the same bits as computing every block
    /// every sub-step: a map with a few steep spots in flat ground (most blocks idle, spots
    /// on the map edges and on block and word boundaries, 70 blocks per row = two words),
    /// over many sub-steps while the spots relax and spread, every variant.
    #[test]
    fn skipping_idle_blocks_changes_no_bit() {
        let (w, rows) = (70 * LANES - 5, 90);
        let mut h = vec![100.0f32; w * rows];
        let mut seed = 5u64;
        for (x, y) in [
            (0, 0),
            (15, 40),
            (16, 41),
            (w - 1, rows - 1),
            (64 * LANES, 3),
            (500, 89),
        ] {
            for dy in 0..3 {
                for dx in 0..3 {
                    let (px, py) = ((x + dx).min(w - 1), (y + dy).min(rows - 1));
                    seed = crate::node::splitmix64(seed);
                    h[py * w + px] += 40.0 + (seed >> 40) as f32 / (1u64 << 24) as f32 * 30.0;
                }
            }
        }
        let talus: [f32; 8] = std::array::from_fn(|k| 2.0 * NEIGHBOURS[k].2);
        for v in [Variant::Classic, Variant::Olsen, Variant::Isotropic] {
            let mut sparse = State::new(&h, w, rows, v);
            let mut dense = State::new(&h, w, rows, v);
            dense.everywhere = true;
            let mut idle = 0;
            for step in 0..60 {
                sparse.step(&talus, 0.125, v);
                dense.step(&talus, 0.125, v);
                let (a, b) = (sparse.h.to_vec(w), dense.h.to_vec(w));
                let same = a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits());
                assert!(same, "{v:?}: sub-step {step} differs");
                let n = words(sparse.nb);
                idle += (0..rows * sparse.nb)
                    .filter(|i| {
                        let (r, b) = (i / sparse.nb, i % sparse.nb);
                        sparse.changed[r * n + b / 64] & (1 << (b % 64)) == 0
                    })
                    .count();
            }
            let end = sparse.h.to_vec(w);
            let moved = h.iter().zip(&end).filter(|(a, b)| a != b).count();
            assert!(moved > 100, "{v:?}: the spots must spread ({moved} cells)");
            // Most of the map is flat and is never touched.
            let all = 60 * rows * sparse.nb;
            assert!(idle > all / 2, "{v:?}: {idle} of {all} blocks skipped");
        }
    }
}
