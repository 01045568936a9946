//! `grid_hydraulic_erosion`: Olsen 2004's hydraulic erosion on the grid — rain, dissolve,
//! transport by levelling water + terrain, evaporation, deposition above capacity.
//!
//! The map is processed per band of rows, in task-local rings of rows padded with a ghost cell
//! (an off-map neighbour is a surface that sends nothing), and a band is carried through eight
//! iterations at once (temporal blocking), so an iteration reads and writes the map once. Inner
//! loops are 16-lane register blocks in `multiversion` clones (AVX-512, AVX2).

use super::flow::PerThread;
use super::levels::{self, Extra};
use super::{around, blocks, blocks_mut, ring_slot as slot, Block, Row, LANES, NEIGHBOURS};
use crate::field::Field;
use crate::node::{EvalCtx, Node, NodeError};
use rayon::prelude::*;

levels::erosion_params! {
    pub struct GridHydraulicParams {
        /// Rain K_r added to every cell's water each iteration, as a fraction of the height range (Olsen 2004: 0.01).
        kr: f64 = float(0.01, [0.0, 0.05], [0.0, 1.0], "") as "Rain (K_r)",
        /// Solubility K_s: terrain dissolved per unit of water each iteration (Olsen 2004: 0.01).
        ks: f64 = float(0.01, [0.0, 0.05], [0.0, 1.0], "") as "Solubility (K_s)",
        /// Evaporation K_e: fraction of the water that evaporates each iteration (Olsen 2004: 0.5).
        ke: f64 = float(0.5, [0.05, 1.0], [0.0, 1.0], "") as "Evaporation (K_e)",
        /// Sediment capacity K_c per unit of water (Olsen 2004: 0.01).
        kc: f64 = float(0.01, [0.0, 0.05], [0.0, 1.0], "") as "Capacity (K_c)",
        /// Number of iterations.
        iterations: u32 = int(50, [1, 500], [0, 100_000], ""),
    }
    native: "Olsen 2004's rain, dissolve, transport, evaporate and deposit run once at the resolution being built (water moves a cell per iteration, so the result depends on the resolution).",
    finer: "Finer builds refine from it once, at their own resolution (a quarter of the iterations), coarser previews average it.",
}

crate::node! {
    /// Rain dissolves the ground and carries it downhill into hollows, wearing slopes and filling
    /// valleys.
    /// Olsen 2004's grid hydraulic erosion, per iteration: 1 rain W += K_r; 2 erosion H −= K_s·W,
    /// S += K_s·W; 3 transport: with a = h + w, water moves to lower neighbours Δw_i = min(w,
    /// Δa)·d_i/d_total (Δa = a − mean of a over the cell and its lower neighbours) and carries
    /// sediment Δs_i = s·Δw_i/w; 4 evaporation W := (1 − K_e)·W; 5 deposition of what exceeds the
    /// capacity K_c·W back into H. Olsen 2004 works on heights in [0, 1]; here K_r, K_s and K_c act
    /// on heights relative to the graph's height range, so the constants keep their meaning in
    /// metres. All cells update together (parallel, deterministic); water and sediment never leave
    /// the map, so terrain + suspended sediment is conserved. Outputs: height (with the remaining
    /// suspended sediment deposited), water (relative to the deepest), deposition (where terrain
    /// rose, relative to the largest rise), erosion (where it went down, relative to the largest
    /// loss). Resolution: by default (detail = consistent) the process runs in full at
    /// base_resolution (256²), where every parameter means what it does in Olsen 2004, and a finer
    /// build adds only detail below those cells (once at the build's resolution with a quarter of the iterations, its drift
    /// over the coarser cells taken out), so a preview and a build show the same terrain (orogen
    /// parity); detail = native runs it once at the resolution being built.
    pub struct GridHydraulic {
        id: "grid_hydraulic_erosion",
        label: "Hydraulic erosion (grid)",
        category: Erosion,
        version: 4,
        params: GridHydraulicParams,
        inputs: GridHydraulicIn {
            /// Terrain to erode.
            r#in: height,
        },
        outputs: GridHydraulicOut {
            /// Eroded terrain.
            out: height,
            /// Water depth after the last iteration, 1 = deepest.
            water: mask,
            /// Where terrain rose, 1 = largest rise.
            deposition: mask,
            /// Where the terrain went down (dissolved), relative to the largest loss.
            erosion: mask,
        },
    }
}

/// Rows of output per parallel task, at most (large maps) and at least (small maps). Tall
/// bands: each level of a band recomputes rows at its edges (see `DEPTH`), so the taller
/// the band, the less is done twice (1024²: 1.03–1.09 ns per cell-iteration with bands of
/// 128 rows and 4 iterations per pass, 0.97–0.99 ns with 256 and 8).
const BAND: usize = 256;
const MIN_BAND: usize = 32;
/// Iterations per pass over the map (temporal blocking): a band carries its rows through
/// this many iterations, each iteration's rows feeding the next one's as soon as they are
/// final, so the map is read and written once per `DEPTH` iterations instead of once per
/// iteration. Each level recomputes 2 rows on either side for the level after it. (Deeper
/// rings lowered the marginal cost a little but slowed short evaluations, their rings being
/// set up per evaluation; docs/perf-log.md.)
const DEPTH: usize = 8;
/// Surface height off the map: above every real cell, so nothing flows there and it sends
/// nothing (its share is 0). Finite, so `PAD − a` times a zero share stays zero.
const PAD: f32 = f32::MAX;

/// The constants of one run.
#[derive(Clone, Copy)]
struct Rates {
    /// Rain K_r and solubility K_s (steps 1–2).
    rain: Rain,
    ke: f32,
    kc: f32,
}

/// The rows one iteration works on for one band, padded with one cell on the left and at
/// least one on the right (cell x at index x + 1, rows of `LANES·blocks + 2`): surface
/// `PAD` and zero water, sediment and shares there, written once here and never again, so
/// the block loops need no edge cases (the cells past the map's width compute a zero share
/// and their results are never written out). Stage A rows (after rain and dissolving) live
/// in a ring of four — written by the level before (its stage C) or, for the first level,
/// from the map — and stage B rows (what each cell sends and keeps) in a ring of three.
struct Level {
    h: [Row; 4],
    w: [Row; 4],
    s: [Row; 4],
    /// Surface a = h + w.
    a: [Row; 4],
    /// Water sent per unit of drop to a lower neighbour (moved / d_total).
    share: [Row; 3],
    /// Sediment sent per unit of drop (share × s/w: it travels at the sender's concentration).
    sshare: [Row; 3],
    /// Water and sediment the cell keeps after sending.
    wrem: [Row; 3],
    srem: [Row; 3],
    /// Output rows of this level in the current band: `lo..hi`.
    lo: isize,
    hi: isize,
    /// Rows of the map.
    height: isize,
}

impl Level {
    fn new(width: usize) -> Self {
        let padded = width.div_ceil(LANES) * LANES + 2;
        let row = |v: f32| Row::new(padded, v, 1);
        Self {
            h: std::array::from_fn(|_| row(0.0)),
            w: std::array::from_fn(|_| row(0.0)),
            s: std::array::from_fn(|_| row(0.0)),
            a: std::array::from_fn(|_| row(PAD)),
            share: std::array::from_fn(|_| row(0.0)),
            sshare: std::array::from_fn(|_| row(0.0)),
            wrem: std::array::from_fn(|_| row(0.0)),
            srem: std::array::from_fn(|_| row(0.0)),
            lo: 0,
            hi: 0,
            height: 0,
        }
    }

    fn on_map(&self, row: isize) -> bool {
        (0..self.height).contains(&row)
    }

    /// The stage A rows of row `q`: (h, w, s, a) from cell 0 on.
    fn stage_a_rows(&mut self, q: isize) -> [&mut [f32]; 4] {
        let t = slot(q, 4);
        [
            &mut self.h[t][1..],
            &mut self.w[t][1..],
            &mut self.s[t][1..],
            &mut self.a[t][1..],
        ]
    }

    /// Stage B for row `p` (stage A rows p − 1 … p + 1 are there).
    fn send(&mut self, p: isize, width: usize) {
        let t = slot(p, 3);
        if self.on_map(p) {
            let c = slot(p, 4);
            send_row(
                [slot(p - 1, 4), c, slot(p + 1, 4)].map(|i| &self.a[i][..]),
                [&self.w[c][..], &self.s[c][..]],
                width.div_ceil(LANES),
                [
                    &mut self.share[t],
                    &mut self.sshare[t],
                    &mut self.wrem[t],
                    &mut self.srem[t],
                ],
            );
        } else {
            // Off the map: sends nothing.
            self.share[t].fill(0.0);
            self.sshare[t].fill(0.0);
        }
    }

    /// Stage C for on-map row `y` (stage B rows y − 1 … y + 1 are there), followed by the
    /// next iteration's stage A with `rain`, into `out` (h, w, s, a, from cell 0 on).
    fn receive(&self, y: isize, k: Rates, rain: Rain, width: usize, out: [&mut [f32]; 4]) {
        let (r4, r3) = ([slot(y - 1, 4), slot(y, 4), slot(y + 1, 4)], slot(y, 3));
        let r3s = [slot(y - 1, 3), r3, slot(y + 1, 3)];
        receive_row(
            r4.map(|i| &self.a[i][..]),
            r3s.map(|i| &self.share[i][..]),
            r3s.map(|i| &self.sshare[i][..]),
            [&self.h[r4[1]][..], &self.wrem[r3][..], &self.srem[r3][..]],
            (k, rain),
            width,
            out,
        );
    }
}

/// Olsen 2004 steps 1–2 as applied right after an iteration's stage C: the next iteration's
/// rain K_r and solubility K_s, or zeros after the last iteration of a pass (w + 0, h − 0·w
/// and s + 0 leave the values as they are).
#[derive(Clone, Copy)]
struct Rain {
    kr: f32,
    ks: f32,
}

impl Rain {
    const NONE: Rain = Rain { kr: 0.0, ks: 0.0 };
}

/// Stage A for one row (Olsen 2004 steps 1–2): rain W += K_r, dissolve H −= K_s·W,
/// S += K_s·W, and the surface a = h + w.
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
fn rain_row(
    h: &[f32],
    w: &[f32],
    s: &[f32],
    rain: Rain,
    ho: &mut [f32],
    wo: &mut [f32],
    so: &mut [f32],
    ao: &mut [f32],
) {
    let n = h.len();
    let (w, s, ho, wo, so, ao) = (
        &w[..n],
        &s[..n],
        &mut ho[..n],
        &mut wo[..n],
        &mut so[..n],
        &mut ao[..n],
    );
    for i in 0..n {
        (ho[i], wo[i], so[i], ao[i]) = rain_cell(h[i], w[i], s[i], rain.kr, rain.ks);
    }
}

/// Olsen 2004 steps 1–2 for one cell: (h, w, s, a = h + w) after rain `kr` and dissolving
/// `ks`. Stage A from the map and stage A fused into the previous iteration's stage C both
/// use this, so a row's bits do not depend on which of them made it.
#[expect(clippy::inline_always)]
#[inline(always)]
fn rain_cell(h: f32, w: f32, s: f32, kr: f32, ks: f32) -> (f32, f32, f32, f32) {
    let wi = w + kr;
    let d = ks * wi;
    let hi = h - d;
    (hi, wi, s + d, hi + wi)
}

/// Stage B for one row (Olsen 2004 step 3, first half): with a = h + w, the lower neighbours'
/// drops d_i = a − a_i, d_total their sum and Δa = a − mean(a over the cell and its lower
/// neighbours), the cell sends Δw_i = min(w, Δa)·d_i/d_total to each, with sediment
/// Δs_i = s·Δw_i/w. With k cells in that mean, k·Δa = Σ(a − a_i) over the lower neighbours
/// = d_total, so the amount sent is m = min(w, d_total/k) and only d_total and k are summed.
/// Stored per cell, not per neighbour: the water and sediment sent per unit of drop
/// (m/d_total and m·s/(w·d_total)) and what the cell keeps; one division per cell, by
/// k·d_total·w, gives all four. Blocks of `LANES` cells stay in registers across the eight
/// directions.
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
fn send_row(a: [&[f32]; 3], [w, s]: [&[f32]; 2], nb: usize, out: [&mut [f32]; 4]) {
    let nbrs = around(a, nb);
    let (centre, w, s) = (
        blocks(&a[1][1..], nb),
        blocks(&w[1..], nb),
        blocks(&s[1..], nb),
    );
    let [share, sshare, wrem, srem] = out;
    let (share, sshare) = (
        blocks_mut(&mut share[1..], nb),
        blocks_mut(&mut sshare[1..], nb),
    );
    let (wrem, srem) = (
        blocks_mut(&mut wrem[1..], nb),
        blocks_mut(&mut srem[1..], nb),
    );
    for j in 0..nb {
        let c = centre[j];
        let (mut total, mut count) = ([0.0f32; LANES], [1.0f32; LANES]);
        for rows in &nbrs {
            let b = rows[j];
            for l in 0..LANES {
                // Written as selects of the sums so that they compile to masked adds.
                let d = c[l] - b[l];
                let lower = d > 0.0;
                total[l] = if lower { total[l] + d } else { total[l] };
                count[l] = if lower { count[l] + 1.0 } else { count[l] };
            }
        }
        let (w, s) = (w[j], s[j]);
        let (mut sh, mut ss, mut wr, mut sr) = ([0.0f32; LANES], [0.0f32; LANES], w, s);
        for l in 0..LANES {
            // k·m = min(k·w, d_total).
            let wk = w[l] * count[l];
            let m = if total[l] < wk { total[l] } else { wk };
            let den = count[l] * total[l] * w[l];
            // Sends when it has water and lower neighbours; `den` is then > 0 (a normal
            // number, so 1/den is finite; a cell with less would move nothing).
            let sends = m > 0.0 && den >= f32::MIN_POSITIVE;
            let inv = 1.0 / if sends { den } else { 1.0 };
            let m = if sends { m } else { 0.0 };
            sh[l] = m * w[l] * inv;
            ss[l] = m * s[l] * inv;
            wr[l] -= sh[l] * total[l];
            sr[l] -= ss[l] * total[l];
        }
        (share[j], sshare[j], wrem[j], srem[j]) = (sh, ss, wr, sr);
    }
}

/// Stage C for one row (Olsen 2004 step 3, second half, then steps 4–5): new water and
/// sediment = what the cell kept + what the higher neighbours sent here, recomputed from
/// their shares with the comparison they made; then evaporation W := (1 − K_e)·W and
/// deposition of what exceeds K_c·W; then the next iteration's steps 1–2 with `rain`.
/// Writes (h, w, s, a) for the row's `width` cells into `out`.
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
fn receive_row(
    a: [&[f32]; 3],
    share: [&[f32]; 3],
    sshare: [&[f32]; 3],
    [h, wrem, srem]: [&[f32]; 3],
    (k, rain): (Rates, Rain),
    width: usize,
    out: [&mut [f32]; 4],
) {
    let nb = width.div_ceil(LANES);
    let rows = Incoming {
        a: around(a, nb),
        share: around(share, nb),
        sshare: around(sshare, nb),
        centre: blocks(&a[1][1..], nb),
        h: blocks(&h[1..], nb),
        wrem: blocks(&wrem[1..], nb),
        srem: blocks(&srem[1..], nb),
    };
    let full = width / LANES;
    let [ho, wo, so, ao] = out;
    let ((ho, ht), (wo, wt)) = (ho.split_at_mut(full * LANES), wo.split_at_mut(full * LANES));
    let ((so, st), (ao, at)) = (so.split_at_mut(full * LANES), ao.split_at_mut(full * LANES));
    let (ho, wo) = (blocks_mut(ho, full), blocks_mut(wo, full));
    let (so, ao) = (blocks_mut(so, full), blocks_mut(ao, full));
    for j in 0..full {
        [ho[j], wo[j], so[j], ao[j]] = rows.block(j, k, rain);
    }
    if full < nb {
        // The last, partial block: only the row's own cells are written.
        let o = rows.block(full, k, rain);
        let rest = width - full * LANES;
        for (row, block) in [ht, wt, st, at].into_iter().zip(&o) {
            row[..rest].copy_from_slice(&block[..rest]);
        }
    }
}

/// What stage C reads for a row, as blocks: the neighbours' surfaces and shares, and the
/// row's own surface, height and kept water and sediment.
struct Incoming<'a> {
    a: [&'a [Block]; 8],
    share: [&'a [Block]; 8],
    sshare: [&'a [Block]; 8],
    centre: &'a [Block],
    h: &'a [Block],
    wrem: &'a [Block],
    srem: &'a [Block],
}

impl Incoming<'_> {
    /// Stage C and the next stage A for block `j`: (h, w, s, a).
    #[expect(clippy::inline_always)]
    #[inline(always)]
    fn block(&self, j: usize, k: Rates, rain: Rain) -> [Block; 4] {
        let c = self.centre[j];
        let (mut wa, mut sa) = (self.wrem[j], self.srem[j]);
        for d in 0..NEIGHBOURS.len() {
            let (b, sh, ss) = (self.a[d][j], self.share[d][j], self.sshare[d][j]);
            for l in 0..LANES {
                // (a_j − a_i)⁺: exactly the drop the sender used, or 0 when it sent nothing here.
                let drop = b[l] - c[l];
                let drop = if drop > 0.0 { drop } else { 0.0 };
                // Fused multiply-adds: one rounding, the same on every machine (IEEE 754;
                // without FMA hardware, the default version calls a software fma: slow, same bits).
                wa[l] = drop.mul_add(sh[l], wa[l]);
                sa[l] = drop.mul_add(ss[l], sa[l]);
            }
        }
        let (h, mut o) = (self.h[j], [[0.0f32; LANES]; 4]);
        for l in 0..LANES {
            let wi = wa[l] * (1.0 - k.ke);
            let excess = sa[l] - k.kc * wi;
            let excess = if excess > 0.0 { excess } else { 0.0 };
            let (hn, wn, sn, an) = rain_cell(h[l] + excess, wi, sa[l] - excess, rain.kr, rain.ks);
            (o[0][l], o[1][l], o[2][l], o[3][l]) = (hn, wn, sn, an);
        }
        o
    }
}

/// A row entering a level: from the map (stage A still to do), already written into the
/// level's stage A ring by the level before, or off the map.
enum Input<'a> {
    Map([&'a [f32]; 3]),
    Ready,
    Off,
}

/// Feeds row `q` to the first of `levels`; when that finishes a row, its stage C writes it
/// straight into the next level's stage A ring, rained on for the next iteration, and feeds
/// it on; rows that finish the last level go, as they are, to `dest`.
fn feed(levels: &mut [Level], q: isize, input: Input, k: Rates, width: usize, dest: &mut Dest) {
    let Some((level, rest)) = levels.split_first_mut() else {
        return;
    };
    match input {
        Input::Map([h, w, s]) => {
            let [ho, wo, so, ao] = level.stage_a_rows(q);
            rain_row(h, w, s, k.rain, ho, wo, so, ao);
        }
        Input::Ready => {}
        Input::Off => level.a[slot(q, 4)].fill(PAD),
    }
    if q >= level.lo {
        // Rows lo − 1 … hi of stage B: what stage C for rows lo … hi − 1 reads.
        level.send(q - 1, width);
    }
    let y = q - 2;
    if y < level.lo || y >= level.hi {
        return;
    }
    if !level.on_map(y) {
        feed(rest, y, Input::Off, k, width, dest);
    } else if let Some(next) = rest.first_mut() {
        level.receive(y, k, k.rain, width, next.stage_a_rows(y));
        feed(rest, y, Input::Ready, k, width, dest);
    } else {
        level.receive(y, k, Rain::NONE, width, dest.row(y, width));
    }
}

/// A band of the next pass's h, w and s, from map row `y0` on, and a scratch row for the
/// surface stage C also writes.
struct Dest<'a> {
    h: &'a mut [f32],
    w: &'a mut [f32],
    s: &'a mut [f32],
    a: Vec<f32>,
    y0: isize,
}

impl Dest<'_> {
    fn row(&mut self, y: isize, width: usize) -> [&mut [f32]; 4] {
        let at = (y - self.y0) as usize * width..(y - self.y0 + 1) as usize * width;
        [
            &mut self.h[at.clone()],
            &mut self.w[at.clone()],
            &mut self.s[at],
            &mut self.a[..],
        ]
    }
}

/// `depth` iterations in one pass: each band of output rows streams its input rows through
/// `depth` levels (stages A → B → C each) on task-local rows, so the whole map is read once
/// (h, w, s) and written once (h2, w2, s2). Level i of a band makes its rows and 2·(depth −
/// 1 − i) more on either side for the levels after it. Every row of every level is computed
/// by the same code from the same inputs whichever band asks, so the result depends neither
/// on the thread count nor on `depth`. What a cell sends is subtracted from it once and added
/// to its receivers once, from the same shares: water and sediment are conserved.
fn pass(
    (h, w, s): (&[f32], &[f32], &[f32]),
    (h2, w2, s2): (&mut [f32], &mut [f32], &mut [f32]),
    width: usize,
    height: usize,
    k: Rates,
    depth: usize,
    scratch: &PerThread<Vec<Level>>,
) {
    // At least two bands per thread where the map allows (which task makes a row does not
    // change its bits, so this does not depend on the thread count in any way that shows).
    let rows = (height / (2 * rayon::current_num_threads())).clamp(MIN_BAND, BAND);
    let band = width * rows;
    let depth = depth.max(1) as isize;
    h2.par_chunks_mut(band)
        .zip(w2.par_chunks_mut(band))
        .zip(s2.par_chunks_mut(band))
        .enumerate()
        .for_each(|(b, ((ho, wo), so))| {
            // The levels' rows are kept from pass to pass (every row a band reads is written
            // in the band first, or keeps the padding it was made with).
            let mut levels = scratch.get();
            let levels = &mut *levels;
            levels.resize_with(depth as usize, || Level::new(width));
            let y0 = (b * rows) as isize;
            let y1 = y0 + (ho.len() / width) as isize;
            for (i, level) in levels.iter_mut().enumerate() {
                let margin = 2 * (depth - 1 - i as isize);
                (level.lo, level.hi) = (y0 - margin, y1 + margin);
                level.height = height as isize;
            }
            let a = vec![0.0; width];
            let mut dest = Dest {
                h: ho,
                w: wo,
                s: so,
                a,
                y0,
            };
            for q in (y0 - 2 * depth)..(y1 + 2 * depth) {
                let input = if q >= 0 && q < height as isize {
                    let r = q as usize * width..(q as usize + 1) * width;
                    Input::Map([&h[r.clone()], &w[r.clone()], &s[r]])
                } else {
                    Input::Off
                };
                feed(levels, q, input, k, width, &mut dest);
            }
        });
}

/// Runs `iterations` of the model on `h` (water and sediment start at zero), `depth`
/// iterations per pass over the map; returns (h, w, s). `between` runs before each pass
/// with the iterations done so far (cancellation, progress).
fn run<E>(
    h: Vec<f32>,
    (width, height): (usize, usize),
    k: Rates,
    iterations: u32,
    depth: usize,
    mut between: impl FnMut(u32) -> Result<(), E>,
) -> Result<[Vec<f32>; 3], E> {
    let n = h.len();
    let (mut h, mut w, mut s) = (h, vec![0.0f32; n], vec![0.0f32; n]);
    let (mut h2, mut w2, mut s2) = (vec![0.0f32; n], vec![0.0f32; n], vec![0.0f32; n]);
    let scratch = PerThread::default();
    let mut done = 0;
    while done < iterations {
        between(done)?;
        let d = (iterations - done).min(depth as u32);
        pass(
            (&h, &w, &s),
            (&mut h2, &mut w2, &mut s2),
            width,
            height,
            k,
            d as usize,
            &scratch,
        );
        std::mem::swap(&mut h, &mut h2);
        std::mem::swap(&mut w, &mut w2);
        std::mem::swap(&mut s, &mut s2);
        done += d;
    }
    Ok([h, w, s])
}

impl Node for GridHydraulic {
    const TILE_REFINE: Option<crate::node::TileRefineFn> = levels::tile::<Self>();
    /// h, w, s and their next-iteration buffers (the fused pass keeps only rows besides;
    /// docs/reliability.md).
    // + 4 for the coarse-to-fine levels at the target size (start, change, drift, delta).
    const SCRATCH_FIELDS: u32 = 6 + 4;

    fn eval(
        ctx: &EvalCtx,
        inputs: GridHydraulicIn,
        p: &GridHydraulicParams,
    ) -> Result<GridHydraulicOut, NodeError> {
        levels::evaluate::<Self>(ctx, inputs, p)
    }
}

impl levels::Multiscale for GridHydraulic {
    const SCHEDULE: levels::Schedule = levels::Schedule::Direct;
    const EXTRA: &'static [Extra] = &[Extra::State, Extra::Deposit, Extra::Wear];

    fn resolution(p: &GridHydraulicParams) -> (levels::Detail, usize) {
        (p.detail, p.base_resolution as usize)
    }

    fn native(
        ctx: &EvalCtx,
        inputs: GridHydraulicIn,
        p: &GridHydraulicParams,
    ) -> Result<GridHydraulicOut, NodeError> {
        native(ctx, inputs, p)
    }

    /// Refinement, once at the build's resolution (see `refined` for its iterations).
    fn refine(p: &GridHydraulicParams, _previous: usize) -> GridHydraulicParams {
        p.clone()
    }

    /// The refinement's water moves a cell per iteration and the base already carried it
    /// across the base's cells, so the refinement is local: all the iterations up to a jump
    /// of 4× from the base, then fewer in proportion (a quarter at 16×), the features it adds
    /// being a few of the build's cells long: all of them at every doubling cost far more than
    /// the native run, and fewer lose fine detail (docs/perf-log.md).
    fn refined(
        ctx: &EvalCtx,
        inputs: GridHydraulicIn,
        p: &GridHydraulicParams,
        _coarse: &Field,
    ) -> Result<GridHydraulicOut, NodeError> {
        let p = GridHydraulicParams {
            iterations: levels::iterations_past(
                p.iterations,
                ctx.resolution,
                p.base_resolution,
                4.0,
            ),
            ..p.clone()
        };
        native(ctx, inputs, &p)
    }
}

/// The process run once at the context's resolution (`detail = native`, and each level of
/// the consistent mode).
fn native(
    ctx: &EvalCtx,
    inputs: GridHydraulicIn,
    p: &GridHydraulicParams,
) -> Result<GridHydraulicOut, NodeError> {
    let src = inputs.r#in;
    let (width, height) = (src.width(), src.height());
    let span = ctx.world.height_span_m() as f32;
    let (kr, ks, ke, kc) = (p.kr as f32 * span, p.ks as f32, p.ke as f32, p.kc as f32);
    let k = Rates {
        rain: Rain { kr, ks },
        ke,
        kc,
    };
    let [mut h, w, s] = run(
        src.data().to_vec(),
        (width, height),
        k,
        p.iterations,
        DEPTH,
        |done| {
            ctx.report(done as f32 / p.iterations.max(1) as f32);
            ctx.check_cancel()
        },
    )?;
    // The suspended sediment settles where it is.
    for (h, s) in h.iter_mut().zip(&s) {
        *h += s;
    }
    let out = Field::from_vec(width, height, h).ok_or_else(|| NodeError::shape(width, height))?;
    let water = Field::from_vec(width, height, w).ok_or_else(|| NodeError::shape(width, height))?;
    let (wear, rise) = super::change_masks(src, &out);
    Ok(GridHydraulicOut {
        out,
        water: super::relative(water),
        deposition: rise,
        erosion: wear,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A rough `width × height` map in metres (0–100), from a fixed LCG.
    fn terrain(width: usize, height: usize) -> Vec<f32> {
        let mut seed = 7u32;
        (0..width * height)
            .map(|i| {
                seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                let (x, y) = ((i % width) as f32, (i / width) as f32);
                50.0 + 30.0 * (x * 0.21).sin() * (y * 0.17).cos() + (seed >> 8) as f32 / 1e6
            })
            .collect()
    }

    const K: Rates = Rates {
        rain: Rain { kr: 1.0, ks: 0.01 },
        ke: 0.5,
        kc: 0.01,
    };

    fn run_ok(h: Vec<f32>, size: (usize, usize), iterations: u32, depth: usize) -> [Vec<f32>; 3] {
        match run::<()>(h, size, K, iterations, depth, |_| Ok(())) {
            Ok(r) => r,
            Err(()) => unreachable!(),
        }
    }

    /// Several iterations per pass give the same bits as one per pass: every row of every
    /// iteration is computed from the same inputs whichever pass and band make it. The map
    /// is several bands tall and not a whole number of blocks wide.
    #[test]
    fn iterations_per_pass_do_not_change_the_result() {
        let size = (45, 150);
        let h = terrain(size.0, size.1);
        let one = run_ok(h.clone(), size, 9, 1);
        for depth in [2, 4, 9] {
            assert!(run_ok(h.clone(), size, 9, depth) == one, "depth {depth}");
        }
    }

    /// The kernel against a direct reading of Olsen 2004 (cell by cell, neighbour by
    /// neighbour, in f64, Δa from the mean as printed): within 1e-4 m after 12 iterations
    /// on a 0–100 m map, with water and sediment conserved.
    #[test]
    fn matches_a_direct_reading_of_seed_004() {
        let (width, height) = (37, 29);
        let h0 = terrain(width, height);
        let [h, w, s] = run_ok(h0.clone(), (width, height), 12, DEPTH);
        let mut rh: Vec<f64> = h0.iter().map(|&v| f64::from(v)).collect();
        let (mut rw, mut rs) = (vec![0.0f64; rh.len()], vec![0.0f64; rh.len()]);
        let k = |v: f32| f64::from(v);
        for _ in 0..12 {
            for i in 0..rh.len() {
                rw[i] += k(K.rain.kr);
                let d = k(K.rain.ks) * rw[i];
                rh[i] -= d;
                rs[i] += d;
            }
            let a: Vec<f64> = rh.iter().zip(&rw).map(|(h, w)| h + w).collect();
            let (mut dw, mut ds) = (vec![0.0f64; a.len()], vec![0.0f64; a.len()]);
            for y in 0..height as isize {
                for x in 0..width as isize {
                    let i = (y as usize) * width + x as usize;
                    let lower: Vec<usize> = NEIGHBOURS
                        .iter()
                        .map(|&(dx, dy, _)| (x + dx, y + dy))
                        .filter(|&(nx, ny)| {
                            nx >= 0 && ny >= 0 && nx < width as isize && ny < height as isize
                        })
                        .map(|(nx, ny)| ny as usize * width + nx as usize)
                        .filter(|&j| a[j] < a[i])
                        .collect();
                    if lower.is_empty() {
                        continue;
                    }
                    let total: f64 = lower.iter().map(|&j| a[i] - a[j]).sum();
                    let mean = (a[i] + lower.iter().map(|&j| a[j]).sum::<f64>())
                        / (lower.len() + 1) as f64;
                    let m = rw[i].min(a[i] - mean);
                    if m <= 0.0 {
                        continue;
                    }
                    for &j in &lower {
                        let f = m * (a[i] - a[j]) / total;
                        dw[j] += f;
                        dw[i] -= f;
                        ds[j] += rs[i] * f / rw[i];
                        ds[i] -= rs[i] * f / rw[i];
                    }
                }
            }
            for i in 0..a.len() {
                rw[i] = (rw[i] + dw[i]) * (1.0 - k(K.ke));
                rs[i] += ds[i];
                let excess = (rs[i] - k(K.kc) * rw[i]).max(0.0);
                rs[i] -= excess;
                rh[i] += excess;
            }
        }
        let worst = |ours: &[f32], reference: &[f64]| {
            ours.iter()
                .zip(reference)
                .map(|(&o, &r)| (f64::from(o) - r).abs())
                .fold(0.0f64, f64::max)
        };
        let spread =
            rw.iter().fold(0.0f64, |m, &v| m.max(v)) - rw.iter().fold(f64::MAX, |m, &v| m.min(v));
        assert!(spread > 0.5, "water moved (spread {spread} m)");
        println!(
            "off by h {} w {} s {}, water spread {spread}",
            worst(&h, &rh),
            worst(&w, &rw),
            worst(&s, &rs)
        );
        assert!(worst(&h, &rh) < 1e-4, "height off by {}", worst(&h, &rh));
        assert!(worst(&w, &rw) < 1e-4, "water off by {}", worst(&w, &rw));
        assert!(worst(&s, &rs) < 1e-4, "sediment off by {}", worst(&s, &rs));
        let sum = |v: &[f32]| v.iter().map(|&x| f64::from(x)).sum::<f64>();
        let before: f64 = sum(&h0);
        let after = sum(&h) + sum(&s);
        assert!(
            ((after - before) / before).abs() < 1e-6,
            "{before} → {after}"
        );
    }
}
