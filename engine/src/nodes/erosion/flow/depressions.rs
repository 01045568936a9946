//! Depression routing over the graph of pit basins (Cordonnier et al. 2016, §4): basins as
//! upstream trees of the pits, the lowest pass between adjacent basins, the filled surface
//! and the way out of each lake. [`Depressions::route`] runs the phases in order.

use super::{
    append_upstream_cells, d8_steps, donors_d8, mask_d8_row, order_key, receivers_d8_rows,
    spill_levels, trim, D8Distances, DonorSteps, Laps, PerThread, Spill, NONE,
};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU32, Ordering};

/// Masks of row `y` of basin labels: bit `d` is set when the neighbour at [`D8`]`[d]` has a
/// higher label (`NONE`, outside every basin, is the highest), so each pair of adjacent
/// cells in different basins is seen once, from the lower label's side.
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
pub(super) fn higher_d8_row(label: &[u32], w: usize, y: usize, out: &mut [u8]) {
    mask_d8_row(label, w, y, out, |l, _, own| l > own);
}

/// The cheapest way out of basin `b` towards basin `to` (the outside of every pit's basin
/// is basin `nb`, after the last): the pass height `max(z_from, z_at)` over the adjacent pair
/// `from` (in `b`) – `at` (in `to`) where it is lowest, as an [`order_key`].
#[derive(Clone, Copy, Default)]
pub(super) struct Pass {
    pub(super) key: u32,
    pub(super) b: u32,
    pub(super) to: u32,
    pub(super) from: u32,
    pub(super) at: u32,
}

/// Scratch of [`lowest_passes`], one per thread.
#[derive(Default)]
pub(super) struct PassScratch {
    /// Per neighbouring basin (the outside: entry `nb`), the lowest pass found so far as
    /// `key << 32 | q << 3 | d`: its height's [`order_key`], the place `q` of its cell in the
    /// basin's list and the direction `d` across. `u64::MAX` when none is found yet.
    pub(super) best: Vec<u64>,
    /// The neighbouring basins in the order they were first found.
    pub(super) touched: Vec<u32>,
}

impl PassScratch {
    pub(super) fn reset(&mut self, nb: usize) {
        if self.best.len() != nb + 1 {
            self.best.clear();
            self.best.resize(nb + 1, u64::MAX);
        }
    }
}

/// The lowest pass from basin `b` (its `cells`) to each neighbour with a higher label (the
/// first found among equals), appended to `out` in the order the neighbours are first found. The
/// search has no branch on the heights (which are data, not a pattern): each candidate is a
/// 64-bit minimum whose low bits, the place of the cell in the list then the direction,
/// keep the first found among equal heights.
#[expect(clippy::too_many_arguments)]
pub(super) fn lowest_passes(
    z: &[f32],
    label: &[u32],
    higher: &[u8],
    steps: &[isize; 8],
    nb: usize,
    s: &mut PassScratch,
    (b, cells): (u32, &[u32]),
    out: &mut Vec<Pass>,
) {
    // The low 32 bits hold `q << 3 | d`.
    assert!(cells.len() < 1 << 29, "basin of 2^29 cells or more");
    let mut len = 0;
    for (q, &u) in cells.iter().enumerate() {
        let m = higher[u as usize];
        if m == 0 {
            continue;
        }
        if s.touched.len() < len + 8 {
            s.touched.resize(2 * (len + 8), 0);
        }
        let zu = z[u as usize];
        let mut m = m;
        while m != 0 {
            let d = m.trailing_zeros() as usize;
            m &= m - 1;
            let v = (u as isize + steps[d]) as usize;
            let to = (label[v] as usize).min(nb);
            let key = u64::from(order_key(zu.max(z[v])));
            let e = &mut s.best[to];
            s.touched[len] = to as u32;
            len += usize::from(*e == u64::MAX);
            *e = (*e).min(key << 32 | (q as u64) << 3 | d as u64);
        }
    }
    for &to in &s.touched[..len] {
        let e = std::mem::replace(&mut s.best[to as usize], u64::MAX);
        let from = cells[(e as u32 >> 3) as usize];
        out.push(Pass {
            key: (e >> 32) as u32,
            b,
            to,
            from,
            at: (from as isize + steps[(e & 7) as usize]) as u32,
        });
    }
}

/// Basins per chunk at most: the basin walks and the pass search work a chunk per task
/// (each task takes its thread's scratch once). A chunk's lists are one allocation each,
/// not one per basin: lists kept from step to step per basin index each held on to the
/// largest basin that index ever had (many times the map's cells in all), and the many
/// small lists left the heap too fragmented to give back.
pub(super) const PASS_CHUNK: usize = 64;

/// The cells of a chunk of consecutive basins, each breadth first from its pit, one after
/// the other.
#[derive(Default)]
pub(super) struct Chunk {
    pub(super) cells: Vec<u32>,
    /// Where each basin's cells start in `cells`, then the end.
    pub(super) start: Vec<u32>,
}

impl Chunk {
    pub(super) fn basin(&self, j: usize) -> &[u32] {
        &self.cells[self.start[j] as usize..self.start[j + 1] as usize]
    }
}

/// Depression routing over the graph of pit basins (Cordonnier et al. 2016, as summarised
/// in Lim, Tan & Bhojan 2022 §2.3: basins joined at their lowest passes, spilled along a minimum spanning
/// tree). Every cell that drains by steepest descent to an inner pit belongs to that pit's
/// basin; every other cell descends to the map border. Basins are nodes, joined at the
/// lowest pass between each adjacent pair (and to the outside); each basin's spill level
/// is the lowest, over all ways out to the outside, of the highest pass on the way — the
/// highest pass on its way out along the minimum spanning tree ([`spill_levels`]). A cell's
/// filled height is the larger of its own and its basin's spill level: exactly the surface
/// a priority flood from the border (Barnes et al. 2014) gives, with work on the map
/// proportional to cells and passes, in parallel, and a sort and a tree search over passes
/// and basins only.
#[derive(Default)]
pub struct Depressions {
    /// Basin (index into `pits`) of every cell draining to a pit; `NONE` elsewhere.
    pub(super) label: Vec<AtomicU32>,
    pub(super) pits: Vec<u32>,
    /// Spill level of each basin.
    pub(super) level: Vec<f32>,
    /// The pass each basin spills over: its cell on the basin's side and the one across.
    pub(super) outlet: Vec<(u32, u32)>,
    /// Cells draining to pits in the last routing.
    pub region_cells: usize,
    pub(super) rcv_z: Vec<u32>,
    pub(super) dist_z: Vec<f32>,
    /// The carve's changes of receiver, `(cell, receiver)`, per chunk of basins.
    pub(super) carved: Vec<Vec<(u32, u32)>>,
    /// Cells of the basins, in chunks of consecutive basins (see [`Chunk`]).
    pub(super) basins: Vec<Chunk>,
    /// Lowest passes out of the basins of each chunk.
    pub(super) passes: Vec<Vec<Pass>>,
    /// `label` read into plain values once the basins are known.
    pub(super) plain: Vec<u32>,
    /// Each thread's map from a neighbouring basin to its place in a basin's passes.
    pub(super) slots: PerThread<PassScratch>,
    /// Scratch of the spill-level search.
    pub(super) spill: Spill,
    /// Wall time of the phases of the last routing.
    pub laps: Laps,
}

impl Depressions {
    /// Receivers that route across depressions, and the filled surface. Steepest descent on
    /// `z` first (border cells are the outlets), which finds the pits and their basins; the
    /// spill levels over the basin graph give `filled`; then steepest descent on `filled`,
    /// and where a cell has no lower neighbour on it (lakes, flat spills) the way out of its
    /// lake: the descent on `z` from the pass cell down to the pit, reversed, ending across
    /// the pass (fastscapelib's "carve"), and elsewhere in the lake the descent on `z`, which
    /// reaches that path or the pit. Along any path the filled height never rises and falls
    /// strictly on a step taken on `filled`; at a constant level the path stays in its
    /// basin until it crosses a pass, to a basin closer to the outside: a forest rooted at the
    /// border. Every receiver is one of the eight neighbours; `dist` gets the distance to
    /// each one's node, unless the nodes are all at their cells' centres
    /// ([`D8Distances::uniform`]: then it is not written, and
    /// [`D8Distances::to_receiver`] tells each distance). Between its phases it returns
    /// early when `cancelled()`; the routing is then incomplete and the step must be thrown
    /// away.
    #[expect(clippy::too_many_arguments)]
    pub fn route(
        &mut self,
        z: &[f32],
        w: usize,
        h: usize,
        d8: &D8Distances,
        donors: &mut [u8],
        rcv: &mut Vec<u32>,
        dist: &mut Vec<f32>,
        filled: &mut [f32],
        cancelled: &dyn Fn() -> bool,
    ) {
        self.laps.start();
        if !self.find_pits(z, w, h, d8, rcv, dist) {
            filled.par_iter_mut().zip(z).for_each(|(f, &z)| *f = z);
            return;
        }
        if cancelled() {
            return;
        }
        self.laps.lap("receivers, pits");
        let per = self.find_basins(w, donors, rcv);
        self.laps.lap("basins");
        if cancelled() {
            return;
        }
        self.mark_borders(w, donors);
        self.laps.lap("labels, masks");
        self.find_passes(z, w, donors, per);
        self.laps.lap("passes");
        if cancelled() {
            return;
        }
        spill_levels(
            self.pits.len(),
            &self.passes,
            &mut self.level,
            &mut self.outlet,
            &mut self.spill,
            &mut self.laps,
        );
        self.fill(z, w, h, d8, filled, rcv, dist);
        self.laps.lap("filled, receivers");
        self.carve(w, d8, rcv, dist);
        self.laps.lap("carve");
        self.lakes(w, d8, rcv, dist);
        self.laps.lap("lakes");
    }

    /// Phase 1: receivers on the heights, and the pits (inner cells without one) row by row.
    /// False when there is no pit (then there is nothing more to do).
    fn find_pits(
        &mut self,
        z: &[f32],
        w: usize,
        h: usize,
        d8: &D8Distances,
        rcv: &mut [u32],
        dist: &mut [f32],
    ) -> bool {
        let pits = receivers_d8_rows(z, w, h, d8, rcv, dist, true, |y, r| {
            if y == 0 || y + 1 == h {
                return Vec::new();
            }
            row_pits(r, y * w)
        });
        self.pits.clear();
        self.pits.extend(pits.into_iter().flatten());
        self.region_cells = 0;
        !self.pits.is_empty()
    }

    /// Phase 2: every pit's tree upstream on the heights' receivers is its basin: the cells
    /// of each basin, a chunk of basins per task (fewer basins, smaller chunks, so that a few
    /// big basins still spread over the threads; the chunking never changes a result), and
    /// each cell's basin label. Returns the chunk size.
    fn find_basins(&mut self, w: usize, donors: &mut [u8], rcv: &[u32]) -> usize {
        let n = rcv.len();
        donors_d8(rcv, w, donors);
        if self.label.len() == n {
            self.label
                .par_iter()
                .for_each(|l| l.store(NONE, Ordering::Relaxed));
        } else {
            self.label = (0..n).map(|_| AtomicU32::new(NONE)).collect();
        }
        let walk_steps = DonorSteps::new(w);
        let label = &self.label;
        let nb = self.pits.len();
        let per = (nb / 32).clamp(1, PASS_CHUNK);
        self.basins.resize_with(nb.div_ceil(per), Chunk::default);
        let donors_now = &*donors;
        self.basins
            .par_iter_mut()
            .zip(self.pits.par_chunks(per))
            .enumerate()
            .for_each(|(c, (chunk, pits))| {
                chunk.cells.clear();
                chunk.start.clear();
                for (j, &p) in pits.iter().enumerate() {
                    let at = chunk.cells.len();
                    chunk.start.push(at as u32);
                    append_upstream_cells(donors_now, &walk_steps, p, &mut chunk.cells);
                    let b = (c * per + j) as u32;
                    for &x in &chunk.cells[at..] {
                        label[x as usize].store(b, Ordering::Relaxed);
                    }
                }
                chunk.start.push(chunk.cells.len() as u32);
                trim(&mut chunk.cells);
            });
        self.region_cells = self.basins.iter().map(|c| c.cells.len()).sum();
        per
    }

    /// Phase 3: the labels as plain values, and for every cell the neighbours with a higher
    /// label (another basin, or outside all of them: `NONE`), in the donor masks' place.
    fn mark_borders(&mut self, w: usize, masks: &mut [u8]) {
        self.plain.resize(self.label.len(), NONE);
        self.plain
            .par_iter_mut()
            .zip(self.label.par_iter())
            .for_each(|(p, l)| *p = l.load(Ordering::Relaxed));
        let plain = &self.plain;
        masks
            .par_chunks_mut(w)
            .enumerate()
            .for_each(|(y, row)| higher_d8_row(plain, w, y, row));
    }

    /// Phase 4: the lowest pass from each basin to each neighbour with a higher label, so
    /// every pair of adjacent basins is joined once. Basin cells are inner cells (border
    /// cells are outlets), so all eight neighbours exist.
    fn find_passes(&mut self, z: &[f32], w: usize, higher: &[u8], per: usize) {
        let (steps, nb) = (d8_steps(w), self.pits.len());
        let (basins, plain, slots) = (&self.basins, &self.plain, &self.slots);
        self.passes.resize_with(basins.len(), Vec::new);
        self.passes
            .par_iter_mut()
            .zip(basins.par_iter())
            .enumerate()
            .for_each(|(c, (out, chunk))| {
                let mut slot = slots.get();
                slot.reset(nb);
                out.clear();
                for j in 0..chunk.start.len() - 1 {
                    let basin = ((c * per + j) as u32, chunk.basin(j));
                    lowest_passes(z, plain, higher, &steps, nb, &mut slot, basin, out);
                }
                trim(out);
            });
    }

    /// Phase 6 (after the spill levels): the filled surface, then the receivers on it; the
    /// heights' receivers and distances are kept for the carve and the lakes.
    #[expect(clippy::too_many_arguments)]
    fn fill(
        &mut self,
        z: &[f32],
        w: usize,
        h: usize,
        d8: &D8Distances,
        filled: &mut [f32],
        rcv: &mut Vec<u32>,
        dist: &mut Vec<f32>,
    ) {
        let (level, plain) = (&self.level, &self.plain);
        filled
            .par_iter_mut()
            .zip(z.par_iter().zip(plain))
            .for_each(|(f, (&zi, &b))| {
                *f = if b == NONE {
                    zi
                } else {
                    zi.max(level[b as usize])
                };
            });
        let n = z.len();
        std::mem::swap(rcv, &mut self.rcv_z);
        std::mem::swap(dist, &mut self.dist_z);
        rcv.resize(n, NONE);
        dist.resize(n, 1.0);
        receivers_d8_rows(filled, w, h, d8, rcv, dist, true, |_, _| ());
    }

    /// Phase 7: the way out of each lake (fastscapelib's "carve"): the descent from the pass
    /// cell to the pit, reversed, so the outflow crosses the lake to the pass and over it.
    /// Each way lies in its own basin, so the ways are walked in parallel (a walk is a chain
    /// of dependent loads), each chunk of basins listing its changes, which are then made in
    /// order.
    fn carve(&mut self, w: usize, d8: &D8Distances, rcv: &mut [u32], dist: &mut [f32]) {
        let (rcv_z, now) = (&self.rcv_z, &*rcv);
        let per = self.outlet.len().div_ceil(64).max(1);
        self.carved
            .resize_with(self.outlet.len().div_ceil(per), Vec::new);
        self.carved
            .par_iter_mut()
            .zip(self.outlet.par_chunks(per))
            .for_each(|(list, outlets)| {
                list.clear();
                for &(inside, across) in outlets {
                    if inside == NONE {
                        // A basin the search never reached (the map is connected, so none
                        // is; with heights that are not numbers it could be): its cells keep
                        // no receiver and are left as they are.
                        continue;
                    }
                    let (mut c, mut to) = (inside as usize, across);
                    loop {
                        if now[c] == NONE {
                            list.push((c as u32, to));
                        }
                        let next = rcv_z[c];
                        if next == NONE {
                            break;
                        }
                        (c, to) = (next as usize, c as u32);
                    }
                }
                trim(list);
            });
        for &(c, to) in self.carved.iter().flatten() {
            rcv[c as usize] = to;
            if !d8.uniform {
                dist[c as usize] = d8.between(w, c as usize, to as usize);
            }
        }
    }

    /// Phase 8: elsewhere in the lakes and on flat spills, the descent on the heights.
    fn lakes(&self, w: usize, d8: &D8Distances, rcv: &mut [u32], dist: &mut [f32]) {
        let (plain, rcv_z, dist_z, uniform) = (&self.plain, &self.rcv_z, &self.dist_z, d8.uniform);
        rcv.par_chunks_mut(w)
            .zip(dist.par_chunks_mut(w))
            .enumerate()
            .for_each(|(y, (r, d))| {
                let row = y * w..y * w + w;
                let (b, rz) = (&plain[row.clone()], &rcv_z[row.clone()]);
                lake_row(r, b, rz, (!uniform).then(|| (d, &dist_z[row])));
            });
    }
}

/// The inner cells of a row of receivers `r` (cells `at…`) that have none: the row's pits.
/// Counted first (vectorised; most rows have few or none), then listed without a branch
/// on which cells they are (that is data, not a pattern).
pub(super) fn row_pits(r: &[u32], at: usize) -> Vec<u32> {
    let inner = &r[1..r.len().saturating_sub(1).max(1)];
    let count = inner.iter().filter(|&&v| v == NONE).count();
    if count == 0 {
        return Vec::new();
    }
    let mut pits = vec![0u32; count + 1];
    let mut len = 0;
    for (x, &v) in inner.iter().enumerate() {
        pits[len] = (at + 1 + x) as u32;
        len += usize::from(v == NONE);
    }
    pits.truncate(count);
    pits
}

/// A row of [`Depressions::route`]'s last phase: where a basin cell (label `b` not `NONE`)
/// still has no receiver `r`, the descent on the heights, `rz` (and its distance, when the
/// distances are kept). Branch-free selects (lakes are data, not a pattern), vectorised.
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
#[expect(clippy::needless_bitwise_bool)] // `&`, not `&&`: no branch between the flags.
pub(super) fn lake_row(r: &mut [u32], b: &[u32], rz: &[u32], dist: Option<(&mut [f32], &[f32])>) {
    let n = r.len();
    let (b, rz) = (&b[..n], &rz[..n]);
    match dist {
        None => {
            for x in 0..n {
                let flat = (r[x] == NONE) & (b[x] != NONE);
                r[x] = if flat { rz[x] } else { r[x] };
            }
        }
        Some((d, dz)) => {
            let (d, dz) = (&mut d[..n], &dz[..n]);
            for x in 0..n {
                let flat = (r[x] == NONE) & (b[x] != NONE);
                r[x] = if flat { rz[x] } else { r[x] };
                d[x] = if flat { dz[x] } else { d[x] };
            }
        }
    }
}
