//! `lim_tan_bhojan_erosion`: the graph-based fluvial erosion of Lim, Tan & Bhojan,
//! *Visually Improved Erosion Algorithm for the Procedural Generation of Tile-based Terrain*
//! (GRAPP 2022, Lim, Tan & Bhojan 2022), the whole of its Algorithm 1 (§3.1).
//!
//! Per simulation tick:
//! 1. (§3.2) every tile drains to the one of its four neighbours with the steepest descent
//!    in *total* height (land + water) divided by the distance between the tiles' jittered
//!    nodes; a tile with no lower neighbour is a local minimum (minima under water are
//!    discarded);
//! 2. (§3.3) total drainage `D = moisture + k_d·Σ D(tributaries)`, passed on downstream
//!    once per tile in a topological order of the drainage forest (see `total_drainage`);
//! 3. (§3.4) for each minimum M, the leaf of its tree with the lowest total height is found;
//!    from the leaf's neighbour opposite to its drainage direction the path runs down to the
//!    adjacent minimum M'. Along the path M → leaf → neighbour → M', each tile above the
//!    height interpolated linearly (by path length) between M and M' moves towards it with
//!    weight `w = min(k_g·D(M), 1)` (Eq. 1 — the paper prints `max{k_g·D, 1}`, which would
//!    always be ≥ 1; `min` is what its text describes: 0 without drainage, approaching 1),
//!    and its gradient-constraint strength is multiplied by `1 − w`. Every gorge is computed
//!    from the heights the tick's network was routed on; where gorges cross, the deepest
//!    cut stays (the paper does not say how crossings combine);
//! 4. (§3.5) every tile that drains to another and is not under water is lowered by
//!    `Δh = k_e·D^n·s^m` (Eq. 2, k_e = 0.5, n = 1, m = 2), capped at the drop to its receiver;
//! 5. (§3.6) value constraint `h ← (1 − s_v)·h + s_v·c`, then gradient constraint
//!    `h ← (1 − s_g)·h + s_g·mean_n(h_n + c − c_n)` over the four neighbours;
//! 6. (§3.7) water is reset so that no tile's total height is below sea level.
//!
//! Heights are in tile units (metres / cell size), so the slope `s` is a true gradient and
//! the paper's constants apply to any world size. Initialisation (§3.1): land = constraint
//! map + small random noise; node offsets uniform in the tile.
//!
//! Implementation: no priority flood (the paper's local minima are part of its model). Total
//! drainage comes from walks downstream from every tile without tributaries, in eight fixed
//! bands of rows whose crossings are finished in band order, so the result does not depend on
//! the thread count. Receivers are D4, with the distances between the jittered nodes computed
//! once.

mod rows;

use rows::{donors_row, fluvial_row, gradient_row, pass_on, Tiles, DRAIN_BANDS};

use super::flow::{self, NONE};
use super::levels::{self, Extra};
use crate::field::Field;
use crate::node::{splitmix64, EvalCtx, Node, NodeError};
use rayon::prelude::*;

levels::erosion_params! {
    pub struct LimParams {
        /// Seed of the node offsets and of the initial noise, combined with the graph seed.
        seed: u32 = seed(0),
        /// Number of simulation ticks (the paper shows 50–100).
        iterations: u32 = int(100, [1, 300], [0, 100_000], ""),
        /// Value-constraint strength s_v (§3.6: 0.02), × the value-strength mask when connected.
        value_strength: f64 = float(0.02, [0.0, 0.2], [0.0, 1.0], "") as "Value constraint (s_v)",
        /// Gradient-constraint strength s_g (§3.6: 0.8 for a detailed constraint map, 0.02 for a smooth one), × the gradient-strength mask when connected.
        gradient_strength: f64 = float(0.8, [0.0, 1.0], [0.0, 1.0], "") as "Gradient constraint (s_g)",
        /// Drainage loss k_d: the share of the tributaries' drainage that arrives (§3.3: 0.68).
        kd: f64 = float(0.68, [0.0, 1.0], [0.0, 1.0], "") as "Drainage loss (k_d)",
        /// Gorge-carving constant k_g in w = min(k_g·D, 1) (§3.4: 0.1).
        kg: f64 = float(0.1, [0.0, 1.0], [0.0, 100.0], "") as "Gorge carving (k_g)",
        /// Erosion constant k_e in Δh = k_e·D^n·s^m (§3.5: 0.5).
        ke: f64 = float(0.5, [0.0, 2.0], [0.0, 100.0], "") as "Erosion (k_e)",
        /// Drainage exponent n (§3.5: 1).
        n: f64 = float(1.0, [0.5, 2.0], [0.0, 4.0], "") as "Drainage exponent (n)",
        /// Slope exponent m (§3.5: 2; the paper finds n/m = 1/2 best).
        m: f64 = float(2.0, [1.0, 4.0], [0.0, 8.0], "") as "Slope exponent (m)",
        /// Sea level as a fraction of the graph's height range (0 = its bottom).
        sea_level: f64 = float(0.0, [0.0, 1.0], [-10.0, 10.0], ""),
        /// Rain on every tile (× the moisture mask when connected; §3.1 "a uniform high value").
        moisture: f64 = float(1.0, [0.0, 2.0], [0.0, 100.0], ""),
        /// Amplitude of the random noise added to the constraint map (§3.1), in metres.
        noise_m: f64 = float(0.01, [0.0, 1.0], [0.0, 1000.0], "m"),
        /// How far node positions wander inside their tiles: 1 = the paper's uniform [0, 1]².
        jitter: f64 = float(1.0, [0.0, 1.0], [0.0, 1.0], ""),
    }
    native: "Lim, Tan & Bhojan 2022's Algorithm 1 run once at the resolution being built (its tiles are the grid's cells, so the result depends on the resolution).",
    finer: "Finer builds refine from it (a fifth of the iterations, once, at the build's resolution), coarser previews average it.",
}

/// `x^e`, with the paper's exponents 1 and 2 as plain products (`powf` dominated the tick).
#[inline]
fn pow(x: f32, e: f32) -> f32 {
    if e == 1.0 {
        x
    } else if e == 2.0 {
        x * x
    } else {
        libm::powf(x, e)
    }
}

/// The constants of one run.
#[derive(Clone, Copy, Debug)]
pub struct LimSettings {
    pub kd: f32,
    pub kg: f32,
    pub ke: f32,
    pub n: f32,
    pub m: f32,
    /// Sea level in tile units.
    pub sea: f32,
}

impl LimSettings {
    /// The paper's constants (Lim, Tan & Bhojan 2022 §3.3–3.5: k_d 0.68, k_g 0.1, k_e 0.5, n 1, m 2) with
    /// a sea level in tile units.
    #[must_use]
    pub fn paper(sea: f32) -> Self {
        Self {
            kd: 0.68,
            kg: 0.1,
            ke: 0.5,
            n: 1.0,
            m: 2.0,
            sea,
        }
    }
}

/// A Lim–Tan–Bhojan simulation on a `w × h` grid (tile units).
pub struct Lim {
    pub w: usize,
    pub h: usize,
    /// Land height.
    pub land: Vec<f32>,
    /// Water height (sea fill).
    pub water: Vec<f32>,
    /// Height constraint map.
    pub constraint: Vec<f32>,
    /// Value-constraint strength per tile.
    pub value_strength: Vec<f32>,
    /// Gradient-constraint strength per tile (weakened along gorges).
    pub gradient_strength: Vec<f32>,
    /// Rain per tile.
    pub moisture: Vec<f32>,
    /// Receivers and total drainage of the last tick.
    pub rcv: Vec<u32>,
    pub drainage: Vec<f32>,
    /// Gorges carved in the last tick when `record_gorges` is set: the path (minimum M first,
    /// adjacent minimum M' last) and the carved height profile along it.
    pub gorges: Vec<(Vec<u32>, Vec<f32>)>,
    pub record_gorges: bool,
    /// Checked between the halves of a tick, so a cancelled tick ends early.
    pub cancel: crate::node::CancelToken,
    off: Vec<[f32; 2]>,
    /// Distances between neighbouring nodes (fixed).
    d4: flow::D4Distances,
    /// Distance to the receiver's node.
    dist: Vec<f32>,
    /// Land + water, the surface the tick routes on.
    total: Vec<f32>,
    /// Donors per tile, and the countdown the ordering consumes.
    count: Vec<u32>,
    pending: Vec<u32>,
    /// Per tile: the leaf upstream of it with the lowest total height (at a minimum: its
    /// tree's lowest leaf), as `flow::order_key(total) << 32 | index` so that the smallest
    /// key is the lowest leaf, the lowest index among equals; `u64::MAX` = none.
    lowest_leaf: Vec<u64>,
    /// The gorges' cuts of a tick (tile, carved height), applied once all are found.
    cuts: Vec<(u32, f32)>,
    scratch: Vec<f32>,
}

impl Lim {
    /// Initialises land = constraint, water from the sea level (§3.1).
    #[must_use]
    #[expect(clippy::too_many_arguments)]
    pub fn new(
        constraint: Vec<f32>,
        value_strength: Vec<f32>,
        gradient_strength: Vec<f32>,
        moisture: Vec<f32>,
        w: usize,
        h: usize,
        seed: u64,
        jitter: f32,
        sea: f32,
    ) -> Self {
        let n = w * h;
        let mut s = Self {
            w,
            h,
            land: constraint.clone(),
            water: vec![0.0; n],
            constraint,
            value_strength,
            gradient_strength,
            moisture,
            rcv: vec![NONE; n],
            drainage: vec![0.0; n],
            gorges: Vec::new(),
            record_gorges: false,
            cancel: crate::node::CancelToken::new(),
            off: Vec::new(),
            d4: flow::D4Distances {
                right: Vec::new(),
                down: Vec::new(),
            },
            dist: vec![1.0; n],
            total: vec![0.0; n],
            count: Vec::new(),
            pending: Vec::new(),
            lowest_leaf: Vec::new(),
            cuts: Vec::new(),
            scratch: vec![0.0; n],
        };
        s.off = flow::jittered_offsets(seed, n, jitter);
        s.d4 = flow::D4Distances::new(&s.off, w, h);
        s.sea_level(sea);
        s
    }

    /// Places the nodes where a build of the whole `resolution`² map does, for a grid that is
    /// `window` of it (a tiled build's piece): offsets from the cells' indices in the map.
    pub fn place_nodes(
        &mut self,
        seed: u64,
        jitter: f32,
        window: crate::node::Window,
        resolution: usize,
    ) {
        self.off = flow::jittered_offsets_in(seed, window, resolution, jitter);
        self.d4 = flow::D4Distances::new(&self.off, self.w, self.h);
    }

    /// A square `size × size` simulation with the paper's uniform strengths (value 0.02,
    /// gradient 0.8, §3.6), uniform rain 1 and fully jittered nodes: the setup of the
    /// benchmarks and tests.
    #[must_use]
    pub fn uniform(constraint: Vec<f32>, size: usize, seed: u64, sea: f32) -> Self {
        let m = size * size;
        let strengths = (vec![0.02; m], vec![0.8; m], vec![1.0; m]);
        Self::new(
            constraint,
            strengths.0,
            strengths.1,
            strengths.2,
            size,
            size,
            seed,
            1.0,
            sea,
        )
    }

    /// Step 6 (§3.7): water fills every tile below sea level up to it; others are dry.
    fn sea_level(&mut self, sea: f32) {
        self.water
            .par_iter_mut()
            .zip(self.land.par_iter())
            .for_each(|(w, &h)| *w = (sea - h).max(0.0));
    }

    /// Total drainage (§3.3) over the current receivers, in a topological order of the
    /// drainage forest found on the way: from every tile without tributaries (in index order)
    /// a walk goes downstream, each tile passing `k_d·D` on to its receiver, and stops at a
    /// tile still waiting for another tributary — so each tile passes on exactly once, after
    /// all its tributaries. Each tile also passes on the lowest leaf upstream of it (by total
    /// height, the lowest index among equals), so at every minimum `lowest_leaf` is its
    /// tree's lowest leaf (§3.4). Leaves the donor counts in `count`.
    pub fn total_drainage(&mut self, kd: f32) {
        let (w, h) = (self.w, self.h);
        let n = w * h;
        let rcv = &self.rcv;
        // Donors of every tile (the neighbours that drain to it, a row-parallel gather),
        // with the countdown, the drainage and the leaves set up in the same pass.
        self.count.resize(n, 0);
        self.pending.resize(n, 0);
        self.lowest_leaf.resize(n, u64::MAX);
        let moisture = &self.moisture;
        self.count
            .par_chunks_mut(w)
            .zip(self.pending.par_chunks_mut(w))
            .zip(self.drainage.par_chunks_mut(w))
            .zip(self.lowest_leaf.par_chunks_mut(w))
            .enumerate()
            .for_each(|(y, (((c, p), d), l))| {
                donors_row(rcv, w, y, c);
                p.copy_from_slice(c);
                d.copy_from_slice(&moisture[y * w..(y + 1) * w]);
                l.fill(u64::MAX);
            });
        let (count, pending, drainage) = (&self.count, &mut self.pending, &mut self.drainage);
        let (total, leaf) = (&self.total, &mut self.lowest_leaf);
        // From every source, walk downstream for as long as the tile reached has heard
        // from all its tributaries: each tile is passed on exactly once, by the walk that
        // completes it, and the walks move between neighbours (cache-friendly). First in
        // parallel within fixed bands of rows (a walk stops where it would cross into
        // another band), then the crossings in band order on the whole map — a fixed
        // schedule, whatever the thread count.
        let key = |i: usize| u64::from(flow::order_key(total[i])) << 32 | i as u64;
        let span = h.div_ceil(DRAIN_BANDS).max(1) * w;
        let crossings: Vec<Vec<u32>> = drainage
            .par_chunks_mut(span)
            .zip(leaf.par_chunks_mut(span))
            .zip(pending.par_chunks_mut(span))
            .enumerate()
            .map(|(b, ((dr, lf), pd))| {
                let (base, end) = (b * span, b * span + dr.len());
                let mut out = Vec::new();
                for start in base..end {
                    if count[start] != 0 {
                        continue;
                    }
                    let mut i = start;
                    while let Some(r) = Some(rcv[i]).filter(|&r| r != NONE) {
                        let r = r as usize;
                        if r < base || r >= end {
                            out.push(i as u32);
                            break;
                        }
                        let mine = if count[i] == 0 { key(i) } else { lf[i - base] };
                        if !pass_on(
                            kd,
                            mine,
                            dr[i - base],
                            &mut dr[r - base],
                            &mut lf[r - base],
                            &mut pd[r - base],
                        ) {
                            break;
                        }
                        i = r;
                    }
                }
                out
            })
            .collect();
        for &start in crossings.iter().flatten() {
            let mut i = start as usize;
            while let Some(r) = Some(rcv[i]).filter(|&r| r != NONE) {
                let r = r as usize;
                let mine = if count[i] == 0 { key(i) } else { leaf[i] };
                let d = drainage[i];
                if !pass_on(kd, mine, d, &mut drainage[r], &mut leaf[r], &mut pending[r]) {
                    break;
                }
                i = r;
            }
        }
    }

    /// One simulation tick (Algorithm 1).
    pub fn step(&mut self, k: &LimSettings) {
        self.route_and_carve(k);
        if !self.cancel.is_cancelled() {
            self.erode_and_constrain(k);
        }
    }

    /// Steps 1–3 of a tick: drainage directions, total drainage, gorges.
    pub fn route_and_carve(&mut self, k: &LimSettings) {
        // 1. Drainage directions by total height, four neighbours.
        self.total
            .par_iter_mut()
            .zip(self.land.par_iter().zip(self.water.par_iter()))
            .for_each(|(t, (a, b))| *t = a + b);
        flow::receivers_d4(&self.total, self.w, &self.d4, &mut self.rcv, &mut self.dist);
        // 2. Total drainage (and each minimum's lowest leaf).
        self.total_drainage(k.kd);
        // 3. Gorges between adjacent minima.
        self.carve_gorges(k);
    }

    /// Steps 4–6 of a tick: fluvial erosion, height constraints, sea level.
    pub fn erode_and_constrain(&mut self, k: &LimSettings) {
        let w = self.w;
        // 4. Fluvial erosion, all tiles at once from the heights after carving, then
        // 5a. the value constraint on the result (both per tile).
        let (land, water, rcv, dist, drainage) = (
            &self.land,
            &self.water,
            &self.rcv,
            &self.dist,
            &self.drainage,
        );
        let (c, sv) = (&self.constraint, &self.value_strength);
        self.scratch
            .par_chunks_mut(w)
            .enumerate()
            .for_each(|(y, row)| {
                let at = y * w..(y + 1) * w;
                let tile = Tiles {
                    land,
                    water,
                    rcv: &rcv[at.clone()],
                    dist: &dist[at.clone()],
                    drainage: &drainage[at.clone()],
                    c: &c[at.clone()],
                    sv: &sv[at],
                };
                fluvial_row(&tile, y * w, w, k, row);
            });
        std::mem::swap(&mut self.land, &mut self.scratch);
        // 5b. Gradient constraint (from the heights after 5a), then 6. sea level.
        let (land, sg) = (&self.land, &self.gradient_strength);
        let sea = k.sea;
        self.scratch
            .par_chunks_mut(w)
            .zip(self.water.par_chunks_mut(w))
            .enumerate()
            .for_each(|(y, (row, wet))| gradient_row(land, c, sg, w, y, sea, row, wet));
        std::mem::swap(&mut self.land, &mut self.scratch);
    }

    /// Step 3 (§3.4): for each dry local minimum, carve a gorge to the adjacent minimum
    /// reached through the lowest leaf of its drainage tree.
    fn carve_gorges(&mut self, k: &LimSettings) {
        let (w, h) = (self.w, self.h);
        self.gorges.clear();
        let lowest_leaf = std::mem::take(&mut self.lowest_leaf);
        // Dry minima with a leaf, in index order.
        let (rcv, water) = (&self.rcv, &self.water);
        let per_row: Vec<Vec<u32>> = (0..h)
            .into_par_iter()
            .map(|y| {
                (y * w..(y + 1) * w)
                    .filter(|&m| rcv[m] == NONE && water[m] <= 0.0 && lowest_leaf[m] != u64::MAX)
                    .map(|m| m as u32)
                    .collect()
            })
            .collect();
        // Every gorge is computed from the heights the drainage network of this tick was
        // routed on (steps 1–2), so one gorge never sees another's cut: the cuts are
        // collected and applied at the end (where gorges cross, the deepest cut stays).
        let mut cuts = std::mem::take(&mut self.cuts);
        cuts.clear();
        let snapshot = &self.land;
        let mut path: Vec<u32> = Vec::new();
        let mut carved: Vec<f32> = Vec::new();
        for &m in per_row.iter().flatten() {
            let m = m as usize;
            let leaf = (lowest_leaf[m] & 0xFFFF_FFFF) as usize;
            // The neighbour opposite the leaf's drainage direction.
            let r = self.rcv[leaf] as usize;
            let (lx, ly) = ((leaf % w) as i32, (leaf / w) as i32);
            let (dx, dy) = ((r % w) as i32 - lx, (r / w) as i32 - ly);
            let (ox, oy) = (lx - dx, ly - dy);
            if ox < 0 || oy < 0 || ox >= w as i32 || oy >= h as i32 {
                continue;
            }
            let o = oy as usize * w + ox as usize;
            let mut m2 = o;
            while self.rcv[m2] != NONE {
                m2 = self.rcv[m2] as usize;
            }
            if m2 == m {
                continue;
            }
            // M … leaf (the leaf's drainage path, reversed), then o … M'.
            path.clear();
            let mut c = leaf;
            loop {
                path.push(c as u32);
                if self.rcv[c] == NONE {
                    break;
                }
                c = self.rcv[c] as usize;
            }
            path.reverse();
            let mut c = o;
            loop {
                path.push(c as u32);
                if self.rcv[c] == NONE {
                    break;
                }
                c = self.rcv[c] as usize;
            }
            // Ideal heights: linear between the minima by distance along the path.
            let mut along = Vec::with_capacity(path.len());
            let mut acc = 0.0f32;
            along.push(0.0);
            for pair in path.windows(2) {
                let (a, b) = (pair[0] as usize, pair[1] as usize);
                let (ax, ay) = (a % w, a / w);
                let (bx, by) = (b % w, b / w);
                let ddx = bx as f32 + self.off[b][0] - ax as f32 - self.off[a][0];
                let ddy = by as f32 + self.off[b][1] - ay as f32 - self.off[a][1];
                acc += (ddx * ddx + ddy * ddy).sqrt();
                along.push(acc);
            }
            let (h0, h1) = (snapshot[m], snapshot[m2]);
            let wgt = (k.kg * self.drainage[m]).min(1.0);
            carved.clear();
            for (&t, &s) in path.iter().zip(&along) {
                let t = t as usize;
                let ideal = h0 + (h1 - h0) * s / acc.max(1e-6);
                let before = snapshot[t];
                let cut = if before > ideal {
                    (1.0 - wgt) * before + wgt * ideal
                } else {
                    before
                };
                carved.push(cut);
                cuts.push((t as u32, cut));
                self.gradient_strength[t] *= 1.0 - wgt;
            }
            if self.record_gorges {
                self.gorges.push((path.clone(), carved.clone()));
            }
        }
        for &(t, cut) in &cuts {
            let t = t as usize;
            self.land[t] = self.land[t].min(cut);
        }
        self.cuts = cuts;
        self.lowest_leaf = lowest_leaf;
    }
}

crate::node! {
    /// Carves river valleys and gorges into a terrain while keeping it close to the input's overall
    /// shape.
    /// Lim, Tan & Bhojan 2022 §3, Algorithm 1 per tick: 4-neighbour steepest drainage by total
    /// height between jittered nodes (§3.2); total drainage D = moisture + k_d·Σ D(tributaries)
    /// (§3.3); gorges carved between adjacent local minima through each minimum's lowest leaf, w =
    /// min(k_g·D, 1) (Eq. 1; the paper's max is a typo), gradient-constraint strength × (1 − w)
    /// along the gorge (§3.4); fluvial erosion Δh = k_e·D^n·s^m capped at the drop to the receiver
    /// (Eq. 2, §3.5); value constraint then gradient constraint towards the constraint map (§3.6);
    /// water reset to sea level (§3.7). The input is the height-constraint map (land starts equal
    /// to it plus small noise); value strength, gradient strength and moisture are constants, each
    /// multiplied by its mask input when connected. Heights in tile units (metres / cell size).
    /// Outputs: height, water (sea depth relative to the deepest), drainage (log-scaled, 1 = the
    /// largest). Resolution: by default (detail = consistent) the process runs in full at
    /// base_resolution (256²), where every parameter means what it does in Lim, Tan & Bhojan 2022,
    /// and a finer build adds only detail below those cells (a fifth of the iterations, once, at
    /// the build's resolution, its drift over the base's cells taken out), so a preview and a build show the
    /// same terrain (orogen parity); detail = native runs it once at the resolution being built.
    pub struct LimTanBhojan {
        id: "lim_tan_bhojan_erosion",
        label: "Lim–Tan–Bhojan erosion",
        category: Erosion,
        version: 5,
        params: LimParams,
        inputs: LimTanBhojanIn {
            /// Height-constraint map: the terrain the result stays close to.
            constraint: height,
            /// Value-constraint strength map (× value_strength).
            value_strength: mask (optional),
            /// Gradient-constraint strength map (× gradient_strength).
            gradient_strength: mask (optional),
            /// Rainfall map (× moisture); uniform when not connected.
            moisture: mask (optional),
        },
        outputs: LimTanBhojanOut {
            /// Eroded terrain.
            out: height,
            /// Sea depth, 1 = deepest.
            water: mask,
            /// log(1 + total drainage) / log(1 + largest).
            drainage: mask,
        },
    }
}

impl Node for LimTanBhojan {
    const TILE_REFINE: Option<crate::node::TileRefineFn> = levels::tile::<Self>();
    /// The peak RSS measured at 1024², in fields, rounded up (docs/reliability.md).
    /// It includes the fixed neighbour distances, the drainage countdown and the leaf keys.
    // + 4 for the coarse-to-fine levels at the target size (start, change, drift, delta).
    const SCRATCH_FIELDS: u32 = 17 + 4;

    fn eval(
        ctx: &EvalCtx,
        inputs: LimTanBhojanIn,
        p: &LimParams,
    ) -> Result<LimTanBhojanOut, NodeError> {
        levels::evaluate::<Self>(ctx, inputs, p)
    }
}

impl levels::Multiscale for LimTanBhojan {
    const SCHEDULE: levels::Schedule = levels::Schedule::Direct;
    const EXTRA: &'static [Extra] = &[Extra::State, Extra::State];

    fn resolution(p: &LimParams) -> (levels::Detail, usize) {
        (p.detail, p.base_resolution as usize)
    }

    fn native(
        ctx: &EvalCtx,
        inputs: LimTanBhojanIn,
        p: &LimParams,
    ) -> Result<LimTanBhojanOut, NodeError> {
        native(ctx, inputs, p)
    }

    /// Refinement: a fifth of the iterations, once at the target ([`levels::Schedule::Direct`]).
    /// A tick's erosion and constraints act between neighbouring tiles, so every band below
    /// the base's cells is made at once on a grid that resolves it. Doubling (a refinement at
    /// every doubling) made each band on a grid two cells per wave and lost much of it to the
    /// next level's drift correction and bilinear step: fine band at 2048² 0.47 / 0.46 / 0.65
    /// of native on tests/data/parity hills / mountains / ridges and 0.57 on lim2022.json,
    /// against 0.62 / 0.69 / 0.83 and 1.00 refined once.
    fn refine(p: &LimParams, _previous: usize) -> LimParams {
        LimParams {
            iterations: (p.iterations / 5).max(1),
            ..p.clone()
        }
    }

    /// The refinement's ticks fall past a jump of 8× from the base: × 8/jump (a quarter at
    /// least). Each tick's gradient constraint pulls the tiles towards the start's gradients,
    /// which the base's change brought up lacks below its cells, so every tick also smooths
    /// the fine detail the ticks cut — more of it the finer the grid. On hills at 4096²: 20
    /// ticks 0.48 of native's fine band, 50 ticks 0.41, 10 ticks 0.56 (at 2048² 10 ticks gave
    /// 0.55 against 20 ticks' 0.62, so 2048² keeps 20).
    fn refined(
        ctx: &EvalCtx,
        inputs: LimTanBhojanIn,
        p: &LimParams,
        _coarse: &Field,
    ) -> Result<LimTanBhojanOut, NodeError> {
        let q = LimParams {
            iterations: levels::iterations_past(
                p.iterations,
                ctx.resolution,
                p.base_resolution,
                8.0,
            ),
            ..p.clone()
        };
        native(ctx, inputs, &q)
    }
}

/// The process run once at the context's resolution (`detail = native`, and each level of
/// the consistent mode).
fn native(
    ctx: &EvalCtx,
    inputs: LimTanBhojanIn,
    p: &LimParams,
) -> Result<LimTanBhojanOut, NodeError> {
    let src = inputs.constraint;
    let (w, h) = (src.width(), src.height());
    let cell = ctx.cell_size_m() as f32;
    let seed = ctx.rng_seed(p.seed);
    let noise = p.noise_m as f32 / cell;
    let constraint: Vec<f32> = src
        .data()
        .par_iter()
        .enumerate()
        .map(|(i, &v)| {
            // Drawn from the cell's index in the whole map, so a window's noise is the map's.
            let (x, y) = (ctx.window.x0 + i % w, ctx.window.y0 + i / w);
            let g = (y * ctx.resolution + x) as u64;
            let u = (splitmix64(seed ^ 0xA5A5 ^ splitmix64(g)) >> 40) as f32 / (1u64 << 24) as f32;
            v / cell + noise * (u - 0.5)
        })
        .collect();
    let field_or = |input: Option<&Field>, scale: f64| -> Vec<f32> {
        match input {
            Some(f) => f.data().iter().map(|&m| m * scale as f32).collect(),
            None => vec![scale as f32; w * h],
        }
    };
    let sea = (ctx.world.height_min_m + p.sea_level * ctx.world.height_span_m()) as f32 / cell;
    let mut sim = Lim::new(
        constraint,
        field_or(inputs.value_strength, p.value_strength),
        field_or(inputs.gradient_strength, p.gradient_strength),
        field_or(inputs.moisture, p.moisture),
        w,
        h,
        seed,
        p.jitter as f32,
        sea,
    );
    let k = LimSettings {
        kd: p.kd as f32,
        kg: p.kg as f32,
        ke: p.ke as f32,
        n: p.n as f32,
        m: p.m as f32,
        sea,
    };
    if (w, h) != (ctx.resolution, ctx.resolution) {
        sim.place_nodes(seed, p.jitter as f32, ctx.window, ctx.resolution);
    }
    sim.cancel = ctx.cancel.clone();
    for it in 0..p.iterations {
        ctx.check_cancel()?;
        sim.step(&k);
        ctx.check_cancel()?;
        ctx.report((it + 1) as f32 / p.iterations.max(1) as f32);
    }
    if p.iterations == 0 {
        sim.total_drainage(k.kd);
    }
    let size = || NodeError::shape(w, h);
    let out =
        Field::from_vec(w, h, sim.land.iter().map(|v| v * cell).collect()).ok_or_else(size)?;
    let water = Field::from_vec(w, h, sim.water).ok_or_else(size)?;
    let top = libm::log1pf(sim.drainage.iter().copied().fold(0.0f32, f32::max)).max(1e-9);
    let drainage = Field::from_vec(
        w,
        h,
        sim.drainage
            .iter()
            .map(|&d| crate::node::unit(libm::log1pf(d) / top))
            .collect(),
    )
    .ok_or_else(size)?;
    Ok(LimTanBhojanOut {
        out,
        water: super::relative(water),
        drainage,
    })
}
