//! `stream_power_erosion`: tectonic uplift against river incision, after Cordonnier et al.
//! 2016 as summarised in Lim, Tan & Bhojan 2022 §2.3, solved with the implicit scheme of Braun & Willett
//! 2013 (as FastScape does).
//!
//! Per time step Δt (years):
//! 1. uplift: `h += U·Δt` (U = `uplift_m_per_yr` × the uplift map; the map border is the
//!    fixed base level and does not rise; a finer level of a consistent build holds the cells
//!    inside the base's border cells, see `base_border_strip`);
//! 2. depressions: steepest descent on the heights finds the inner pits and their basins;
//!    basins are joined at the lowest pass between each adjacent pair and spilled towards
//!    the map edge along the minimum spanning tree of that basin graph (Cordonnier et al.
//!    2016; the tree built by Kruskal's algorithm, the spill levels by a search along it from
//!    the outside) —
//!    the same lake levels a priority flood from the border (Barnes et al. 2014) gives,
//!    which the tests check cell for cell — so every river reaches the map edge; cells below
//!    their spill level are lakes: not incised while under water, and a lake's level falls
//!    with its outlet within the step (see step 5);
//! 3. every cell is a node at a jittered position inside it (Lim, Tan & Bhojan 2022 §2.3 "a point with a
//!    random position within it") and drains to the neighbour with the steepest descent on
//!    the filled surface; inside a lake the water runs down to the pit and out along the
//!    reversed descent from the lake's pass (fastscapelib's "carve"), so the outflow crosses
//!    the pass and cuts it;
//! 4. drainage area `A`: each cell's area plus everything upstream of it (counted in cells,
//!    exact, per drainage tree in parallel);
//! 5. incision `∂h/∂t = −k·A^m·s^n` with `s` the slope to the receiver (Lim, Tan & Bhojan 2022 §2.3 gives
//!    k·s·√A, i.e. m = 0.5, n = 1), integrated implicitly from the outlets upstream:
//!    for n = 1, `h_i ← (h_i + F·h_r)/(1 + F)` with `F = k·Δt·A^m/d` (Braun & Willett 2013,
//!    Eq. 23), unconditionally stable; for n ≠ 1, Newton iterations on the same equation.
//!    Receivers before donors, so a lake meets its outlet's new height: its level becomes
//!    that height, and lake floor the fall exposes is incised like any ground. (Holding the
//!    floor until the next step's routing drained a lake one cell per step along its way
//!    out, so a lake of the same size in metres lasted twice as many steps at twice the
//!    resolution, rising with the uplift meanwhile: at 2048² a closed basin on
//!    `tests/data/parity/hills.json` stood 2 km high after 100 steps, at 1024² it drained.)
//! 6. optionally, hillslope diffusion `∂h/∂t = κ·∇²h` ([`super::diffusion`]; not in the
//!    seed texts — FastScape's hillslope term), implicit, the border fixed. Off by default:
//!    rivers are one cell wide, so diffusion fills them at a rate that grows as 1/Δx², and
//!    a graph stops looking the same at every resolution once κ·Δt nears the cell area
//!    (`graphs/uplift.json` with κ = 0.01 m²/yr: 256² and 512² agree, 1024² — 50 m cells —
//!    keeps an uneroded plateau; BENCHMARKS.md).
//!
//! The routing is [`super::flow`]'s: receivers from a vectorised D8 kernel, each pit's basin its
//! tree upstream, the lowest pass between adjacent basins found per basin, Kruskal's tree searched
//! from the outside for the spill levels. Drainage and the implicit update run per drainage tree,
//! breadth first, in parallel, counting upstream cells as exact integers.

mod rows;

use super::diffusion::Diffusion;
use super::flow::{self, NONE};
use super::levels::{self, Extra};
use crate::field::Field;
use crate::node::{EvalCtx, Node, NodeError};
use rayon::prelude::*;
use rows::{pack, pack_row_uniform, write_row};
use std::sync::atomic::{AtomicU32, Ordering};

levels::erosion_params! {
    pub struct StreamPowerParams {
        /// Seed of the jittered node positions, combined with the graph seed.
        seed: u32 = seed(0),
        /// How far node positions wander inside their cells: 0 = cell centres, 1 = anywhere in the cell.
        jitter: f64 = float(1.0, [0.0, 1.0], [0.0, 1.0], ""),
        /// Uplift rate U where the uplift map is 1 (or everywhere when it is not connected).
        uplift_m_per_yr: f64 = float(0.001, [0.0, 0.01], [0.0, 1.0], "m/yr") as "Uplift rate (U)",
        /// Erodibility k in ∂h/∂t = −k·A^m·s^n (A in m²).
        k: f64 = float(0.0002, [0.00001, 0.001], [0.0, 1.0], "") as "Erodibility (k)",
        /// Drainage-area exponent m (Lim, Tan & Bhojan 2022 §2.3: 0.5).
        m: f64 = float(0.4, [0.3, 0.6], [0.0, 2.0], "") as "Area exponent (m)",
        /// Slope exponent n (1 = closed-form implicit update; otherwise Newton iterations).
        n: f64 = float(1.0, [0.5, 2.0], [0.1, 4.0], "") as "Slope exponent (n)",
        /// Hillslope diffusivity κ in ∂h/∂t = κ·∇²h (soil creep, FastScape's hillslope term;
        /// 0 = rivers only). Rivers are one cell wide, so κ fills them in proportion to
        /// 1/Δx²: keep κ·Δt well below the cell area for a map that looks the same at every
        /// resolution (BENCHMARKS.md).
        diffusivity_m2_per_yr: f64 = float(0.0, [0.0, 0.1], [0.0, 100.0], "m²/yr"),
        /// Time step Δt.
        dt_years: f64 = float(20_000.0, [1000.0, 100_000.0], [1.0, 10_000_000.0], "yr") as "Time step (Δt)",
        /// Number of time steps.
        steps: u32 = int(100, [1, 500], [0, 100_000], ""),
        /// Drainage area from which the rivers mask reaches 1 (it fades in from a quarter of it).
        river_area_km2: f64 = float(2.0, [0.1, 50.0], [0.0, 1_000_000.0], "km²"),
    }
    native: "the stream-power law run once at the resolution being built (drainage areas and slopes are counted over cells, so hillslope-scale results depend on the resolution).",
    finer: "Finer builds refine from it (two fifths of the steps, once, at the build's resolution), coarser previews average it.",
}

/// The constants of one run.
#[derive(Clone, Copy, Debug)]
pub struct SplSettings {
    pub k: f64,
    pub m: f64,
    pub n: f64,
    pub dt: f64,
    /// Hillslope diffusivity κ (m²/yr); 0 = none.
    pub kd: f64,
}

impl SplSettings {
    /// fastscapelib's "Mountain" example without diffusion: k 2e-4, m 0.4, n 1, Δt 2e4 yr.
    #[must_use]
    pub fn mountain() -> Self {
        Self {
            k: 2e-4,
            m: 0.4,
            n: 1.0,
            dt: 2e4,
            kd: 0.0,
        }
    }
}

/// A stream-power simulation on a square grid: heights, uplift, routing scratch.
pub struct StreamPower {
    pub w: usize,
    pub h: usize,
    /// Cell size in metres.
    pub cell: f64,
    /// Heights in metres.
    pub z: Vec<f32>,
    /// Uplift rate per cell (m/yr).
    pub uplift: Vec<f32>,
    /// Receivers of the last step.
    pub rcv: Vec<u32>,
    /// Filled surface of the last step: each cell's height, or the spill level of the
    /// depression it lies in (> `z` under lakes).
    pub filled: Vec<f32>,
    /// Cells under a lake in the last step.
    pub lake_cells: usize,
    /// Checked between the phases of a step, so a cancelled step ends early (its partial
    /// result is thrown away by the caller).
    pub cancel: crate::node::CancelToken,
    d8: flow::D8Distances,
    /// The border cells: the outlets, roots of the drainage trees.
    roots: Vec<u32>,
    /// How many cells along each side (left, top, right, bottom) are held as the base level:
    /// never uplifted, cut or diffused. 1, the border ring, unless [`Self::hold_edges`] says
    /// more.
    held: [usize; 4],
    dist: Vec<f32>,
    donors: Vec<u8>,
    depressions: flow::Depressions,
    diffusion: Diffusion,
    /// Each thread's scratch for the tree walks.
    scratch: flow::PerThread<TreeScratch>,
    /// Wall time of the phases of the last step's drainage and incision.
    pub laps: flow::Laps,
    /// What the update reads of each cell, packed so a walk gathers one value per cell:
    /// the ground height's bits in the high half; in the low half the node distance's
    /// bits, negated under a lake.
    packed: Vec<u64>,
    /// Per-step results written by the tree walks (each cell belongs to one tree): the new
    /// height's bits, and with [`Self::keep_areas`] the upstream cell count.
    heights: Vec<AtomicU32>,
    counts: Vec<AtomicU32>,
    /// Whether a step keeps the drainage areas for [`Self::area`] (true unless set
    /// otherwise: a run that reads them only after its last step need not write them at
    /// every step).
    pub keep_areas: bool,
    /// `c^m` for small upstream cell counts `c`, and the `m` it was made for.
    pow_table: (f64, Vec<f64>),
    /// `c0·c^m` for the same counts, single precision (see [`Trees::c32`]), and the `c0`
    /// and `m` it was made for.
    c_table: ((f64, f64), Vec<f32>),
}

/// Scratch of one drainage-tree walk.
#[derive(Default)]
struct TreeScratch {
    order: Vec<u32>,
    parent: Vec<u32>,
    count: Vec<u32>,
    surface: Vec<f32>,
    /// Each cell's packed filled height and distance ([`StreamPower`]`::packed`), in `order`.
    cell: Vec<u64>,
}

impl TreeScratch {
    /// Each cell's count of cells upstream of it and itself (exact integers).
    #[inline(never)]
    fn count_upstream(&mut self) {
        let len = self.order.len();
        self.count.clear();
        self.count.resize(len, 1);
        for p in (1..len).rev() {
            let q = self.parent[p] as usize;
            self.count[q] += self.count[p];
        }
    }
}

/// Upstream cell counts below this take `c^m` from a table.
const POW_TABLE: usize = 4096;

impl StreamPower {
    #[must_use]
    pub fn new(
        z: Vec<f32>,
        uplift: Vec<f32>,
        w: usize,
        h: usize,
        cell: f64,
        seed: u64,
        jitter: f32,
    ) -> Self {
        let n = w * h;
        let off = flow::jittered_offsets(seed, n, jitter);
        let roots = (0..n as u32)
            .filter(|&i| {
                let (x, y) = (i as usize % w, i as usize / w);
                x == 0 || y == 0 || x + 1 == w || y + 1 == h
            })
            .collect();
        Self {
            w,
            h,
            cell,
            filled: z.clone(),
            z,
            uplift,
            rcv: vec![NONE; n],
            lake_cells: 0,
            cancel: crate::node::CancelToken::new(),
            d8: flow::D8Distances::new(&off, w, h),
            roots,
            held: [1; 4],
            dist: vec![1.0; n],
            donors: vec![0; n],
            depressions: flow::Depressions::default(),
            diffusion: Diffusion::default(),
            laps: flow::Laps::default(),
            scratch: flow::PerThread::default(),
            packed: vec![0; n],
            heights: (0..n).map(|_| AtomicU32::new(0)).collect(),
            counts: (0..n).map(|_| AtomicU32::new(1)).collect(),
            keep_areas: true,
            pow_table: (f64::NAN, Vec::new()),
            c_table: ((f64::NAN, f64::NAN), Vec::new()),
        }
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
        let off = flow::jittered_offsets_in(seed, window, resolution, jitter);
        self.d8 = flow::D8Distances::new(&off, self.w, self.h);
    }

    /// Holds `held` cells along each side (left, top, right, bottom; at least the border ring)
    /// as the base level: never uplifted, cut or diffused. A finer level of a consistent build
    /// holds the cells inside the base's border cells where its window meets the map's edge,
    /// so the edge stays where the base put it.
    pub fn hold_edges(&mut self, held: [usize; 4]) {
        self.held = held.map(|k| k.max(1));
    }

    /// Whether more than the border ring is held.
    fn holds_a_strip(&self) -> bool {
        self.held != [1; 4]
    }

    /// The held cells, border ring included, in row order: whole rows at the top and bottom,
    /// the ends of the rows between.
    fn strip_cells(&self) -> impl Iterator<Item = usize> + '_ {
        let (w, h) = (self.w, self.h);
        let [l, t, r, b] = self.held;
        (0..h).flat_map(move |y| {
            let whole = y < t || y + b >= h;
            let (a, c) = if whole { (w, 0) } else { (l.min(w), r.min(w)) };
            (y * w..y * w + a).chain((y * w + w - c).max(y * w + a)..y * w + w)
        })
    }

    /// fastscapelib's "Mountain" example without diffusion, the erosion bench's setup: a
    /// `size`² grid over 100 km, a uniform random 0–1 m start, uplift 1e-3 m/yr (the border
    /// fixed), k 2e-4, m 0.4, n 1, Δt 2e4 yr, nodes at cell centres.
    #[must_use]
    pub fn mountain(size: usize) -> (Self, SplSettings) {
        let n = size * size;
        let z = (0..n)
            .map(|i| (crate::node::splitmix64(i as u64) >> 40) as f32 / (1u64 << 24) as f32)
            .collect();
        let settings = SplSettings::mountain();
        let sim = Self::new(z, vec![1e-3; n], size, size, 100e3 / size as f64, 1, 0.0);
        (sim, settings)
    }

    /// Wall time of the phases of the last step (ms): depression routing, then drainage
    /// and incision.
    #[must_use]
    pub fn laps(&self) -> Vec<(&'static str, f64)> {
        let mut all = self.depressions.laps.laps.clone();
        all.extend_from_slice(&self.laps.laps);
        all
    }

    /// Cells draining to an inner pit in the last step (the basins the depression routing
    /// had to resolve).
    #[must_use]
    pub fn pit_basin_cells(&self) -> usize {
        self.depressions.region_cells
    }

    /// Drainage area (m²) of cell `i` in the last step that kept them ([`Self::keep_areas`]):
    /// its cell and every cell upstream.
    #[must_use]
    pub fn area(&self, i: usize) -> f64 {
        f64::from(self.counts[i].load(Ordering::Relaxed).max(1)) * self.cell * self.cell
    }

    /// Distance (cell units) from cell `i`'s node to its receiver's in the last step.
    #[must_use]
    pub fn distance(&self, i: usize) -> f64 {
        let d = if self.d8.uniform() {
            self.d8.to_receiver(self.w, i, self.rcv[i])
        } else {
            self.dist[i]
        };
        f64::from(d)
    }

    /// One time step of `k.dt` years.
    pub fn step(&mut self, k: &SplSettings) {
        let (w, h) = (self.w, self.h);
        // 1. Uplift (the border, or the held strip, is the base level).
        let dt = k.dt as f32;
        let [l, t, r, b] = self.held;
        self.z
            .par_chunks_mut(w)
            .zip(self.uplift.par_chunks(w))
            .enumerate()
            .for_each(|(y, (z, u))| {
                if y < t || y + b >= h {
                    return;
                }
                for x in l..w.saturating_sub(r) {
                    z[x] += u[x] * dt;
                }
            });
        if w < 3 || h < 3 {
            // Every cell is on the border: an outlet, never eroded.
            self.filled.clone_from(&self.z);
            self.lake_cells = 0;
            return;
        }
        // 2–3. Depressions, then receivers on the filled surface.
        self.route();
        if self.cancel.is_cancelled() {
            return;
        }
        // 4–5. Drainage area and the implicit incision, one drainage tree at a time.
        self.erode(k);
        // 6. Hillslope diffusion (implicit, the border fixed); lakes keep their level, or
        // end where the ground now reaches above it.
        if k.kd > 0.0 && !self.cancel.is_cancelled() {
            // Cells that are not under a lake take the new height; mark them.
            self.filled.par_iter_mut().zip(&self.z).for_each(|(f, &z)| {
                if z >= *f {
                    *f = f32::NEG_INFINITY;
                }
            });
            let r = k.kd * k.dt / (self.cell * self.cell);
            // The solve fixes only the border ring; a held strip is put back after it, so the
            // cells beside the strip diffused against a strip that moved within the step (not
            // conservative there; only with diffusivity > 0, off by default).
            let held: Vec<(usize, f32)> = if self.holds_a_strip() {
                self.strip_cells().map(|i| (i, self.z[i])).collect()
            } else {
                Vec::new()
            };
            self.diffusion.step(&mut self.z, w, h, r);
            for (i, v) in held {
                self.z[i] = v;
            }
            self.filled
                .par_iter_mut()
                .zip(&self.z)
                .for_each(|(f, &z)| *f = f.max(z));
            self.laps.lap("diffusion");
        }
    }

    /// Receivers by steepest descent on the surface with its depressions filled to their
    /// spill level ([`flow::Depressions`]).
    fn route(&mut self) {
        self.depressions.route(
            &self.z,
            self.w,
            self.h,
            &self.d8,
            &mut self.donors,
            &mut self.rcv,
            &mut self.dist,
            &mut self.filled,
            &|| self.cancel.is_cancelled(),
        );
    }

    /// Drainage area and implicit incision over the receiver forest, in parallel over its
    /// trees (one per border cell; a tree's cells depend on nothing outside it, so the
    /// result is the same whatever thread walks it). Per tree: the cells breadth first
    /// (upstream over the donor masks), upstream cell counts summed leaves first (exact
    /// integers: A = count × cell area), then the update outlets first.
    fn erode(&mut self, k: &SplSettings) {
        let w = self.w;
        self.laps.start();
        if self.pow_table.0.to_bits() != k.m.to_bits() {
            self.pow_table = (
                k.m,
                (0..POW_TABLE).map(|c| libm::pow(c as f64, k.m)).collect(),
            );
        }
        flow::donors_d8(&self.rcv, w, &mut self.donors);
        // What the walks gather, packed.
        if self.d8.uniform() {
            let (z, filled, rcv) = (&self.z, &self.filled, &self.rcv);
            self.packed
                .par_chunks_mut(w)
                .enumerate()
                .for_each(|(y, out)| {
                    let row = y * w..y * w + w;
                    pack_row_uniform(
                        &z[row.clone()],
                        &filled[row.clone()],
                        &rcv[row],
                        y * w,
                        w,
                        out,
                    );
                });
        } else {
            self.packed
                .par_iter_mut()
                .zip(self.z.par_iter().zip(&self.filled).zip(&self.dist))
                .for_each(|(c, ((&z, &f), &d))| *c = pack(z, f, d));
        }
        if self.holds_a_strip() {
            // A held cell drains over an endless distance: the update leaves it as it is
            // (F = 0), under a lake or not (the sign).
            let strip: Vec<usize> = self.strip_cells().collect();
            for i in strip {
                let c = self.packed[i];
                let d = f32::INFINITY.copysign(f32::from_bits(c as u32));
                self.packed[i] = (c & !0xffff_ffff) | u64::from(d.to_bits());
            }
        }
        if self.cancel.is_cancelled() {
            return;
        }
        self.laps.lap("donors");
        let cell_area = self.cell * self.cell;
        // F = k·Δt·A^m/d^n = c0·count^m/(d·cell)^n.
        let c0 = k.k * k.dt * libm::pow(cell_area, k.m);
        if self.c_table.0 != (c0, k.m) {
            let table = self.pow_table.1.iter().map(|&am| (c0 * am) as f32);
            self.c_table = ((c0, k.m), table.collect());
        }
        let trees = Trees {
            cells: &self.packed,
            donors: &self.donors,
            steps: flow::DonorSteps::new(w),
            table: &self.pow_table.1,
            c32: &self.c_table.1,
            c0,
            cell: self.cell,
            cell32: self.cell as f32,
            m: k.m,
            n: k.n,
            linear: (k.n - 1.0).abs() < 1e-9,
            heights: &self.heights,
            counts: self.keep_areas.then_some(&self.counts[..]),
        };
        let scratch = &self.scratch;
        let visited: usize = self
            .roots
            .par_iter()
            .map(|&root| trees.walk(&mut scratch.get(), root))
            .sum();
        self.laps.lap("trees");
        // Every cell is in one tree when all drain to the border (the walks visited them
        // all); else (heights that are not numbers) only the visited cells are written.
        let reached = (visited < self.z.len()).then(|| {
            let mut reached = vec![false; self.z.len()];
            let mut cells = Vec::new();
            for &root in &self.roots {
                flow::upstream_cells(&self.donors, &trees.steps, root, &mut cells);
                for &c in &cells {
                    reached[c as usize] = true;
                }
            }
            reached
        });
        self.lake_cells = self
            .z
            .par_chunks_mut(w)
            .zip(self.filled.par_chunks_mut(w))
            .zip(self.heights.par_chunks_mut(w))
            .enumerate()
            .map(|(y, ((z, f), h))| {
                let reached = reached.as_ref().map(|r| &r[y * w..y * w + w]);
                write_row(z, f, h, reached)
            })
            .sum();
        self.laps.lap("write");
    }
}

/// What the walks of the drainage trees read and write.
struct Trees<'a> {
    cells: &'a [u64],
    donors: &'a [u8],
    steps: flow::DonorSteps,
    table: &'a [f64],
    /// `c0·c^m` for small counts `c`, in single precision (the update for n = 1).
    c32: &'a [f32],
    c0: f64,
    cell: f64,
    cell32: f32,
    m: f64,
    n: f64,
    linear: bool,
    heights: &'a [AtomicU32],
    counts: Option<&'a [AtomicU32]>,
}

impl Trees<'_> {
    /// The tree of `root`: its cells breadth first, upstream cell counts leaves first, then
    /// the implicit update outlet first; results into `heights` (and `counts`). Returns the
    /// tree's size.
    fn walk(&self, t: &mut TreeScratch, root: u32) -> usize {
        flow::upstream_bfs(self.donors, &self.steps, root, &mut t.order, &mut t.parent);
        t.count_upstream();
        self.update(t);
        t.order.len()
    }

    /// The implicit update, receivers before donors. Each cell's filled height and node
    /// distance are gathered in tree order first: a loop of loads only keeps many misses in
    /// flight, which the update's branches and division would hold up.
    #[inline(never)]
    fn update(&self, t: &mut TreeScratch) {
        t.cell.clear();
        t.cell
            .extend(t.order.iter().map(|&i| self.cells[i as usize]));
        // The loop for each case, so none tests the case per cell.
        match (self.linear, self.counts.is_some()) {
            (true, false) => self.update_cells::<true, false>(t),
            (true, true) => self.update_cells::<true, true>(t),
            (false, false) => self.update_cells::<false, false>(t),
            (false, true) => self.update_cells::<false, true>(t),
        }
    }

    /// [`Self::update`] for n = 1 (`LINEAR`) or not, keeping the upstream counts or not.
    fn update_cells<const LINEAR: bool, const KEEP: bool>(&self, t: &mut TreeScratch) {
        let TreeScratch {
            order,
            parent,
            count,
            surface,
            cell,
        } = t;
        surface.clear();
        surface.resize(order.len(), 0.0);
        let cells = cell
            .iter()
            .zip(parent.iter())
            .zip(count.iter())
            .zip(order.iter());
        for (p, (((&c, &q), &count), &i)) in cells.enumerate() {
            // The ground and the distance to the receiver (negative under a lake).
            let (zi, d) = (f32::from_bits((c >> 32) as u32), f32::from_bits(c as u32));
            let d = d.abs();
            // The outlet is not incised; nor is ground at or below the surface it drains to.
            let mut new = zi;
            // The receiver's surface after this step: its new height, or the level of the
            // lake it lies under. A lake's level is its outlet's, so it falls as fast as the
            // outlet is cut, and ground the fall exposes is incised in the same step as any
            // other (the lake drains in one step, not a cell per step along its way out).
            let zr = surface[q as usize];
            if LINEAR {
                // (zi + F·zr)/(1 + F) with F = c/d as zi − c·(zi − zr)/(d + c): one
                // division, exactly zi when c = 0, never below zr; in single precision,
                // as the heights are. Computed for every cell and kept where the cell is
                // cut (lakes are data, not a pattern).
                let c = self
                    .c32
                    .get(count as usize)
                    .copied()
                    .unwrap_or_else(|| (self.c0 * libm::pow(f64::from(count), self.m)) as f32);
                let d = d * self.cell32;
                let cut = (zi - c * (zi - zr) / (d + c)).max(zr);
                // `&`, not `&&`: two flags, no branch between them.
                #[expect(clippy::needless_bitwise_bool)]
                let keep = (p != 0) & (zi > zr);
                new = if keep { cut } else { zi };
            } else if p != 0 && zi > zr {
                let am = self
                    .table
                    .get(count as usize)
                    .copied()
                    .unwrap_or_else(|| libm::pow(f64::from(count), self.m));
                let (c, d) = (self.c0 * am, f64::from(d) * self.cell);
                new = incise(f64::from(zi), f64::from(zr), c, d, self.n) as f32;
            }
            // A lake's ground below its level passes the level on. What is stored is this
            // surface: the ground is the lower of it and the old ground (see `write_row`).
            // (`>`, not `max`: a height that is not a number stays one.)
            let top = if p != 0 && zr > new { zr } else { new };
            surface[p] = top;
            self.heights[i as usize].store(top.to_bits(), Ordering::Relaxed);
            if KEEP {
                if let Some(counts) = self.counts {
                    counts[i as usize].store(count, Ordering::Relaxed);
                }
            }
        }
    }
}

/// The implicit update of one cell of height `zi` draining over a distance `d` to a
/// surface at `zr < zi`, with `c = k·Δt·A^m` and `F = c/d^n`, for n ≠ 1: x − zi + F·(x −
/// zr)^n = 0 solved for x in (zr, zi] by Newton from zi. (For n = 1 the closed form
/// `(zi + F·zr)/(1 + F)` of Braun & Willett 2013, Eq. 23, is used instead, as
/// `zi − c·(zi − zr)/(d + c)` in single precision.)
fn incise(zi: f64, zr: f64, c: f64, d: f64, n: f64) -> f64 {
    let f = c / libm::pow(d, n);
    let mut x = zi;
    for _ in 0..20 {
        let s = (x - zr).max(0.0);
        let g = x - zi + f * libm::pow(s, n);
        let dg = 1.0 + f * n * libm::pow(s, n - 1.0);
        let next = (x - g / dg).max(zr);
        if (next - x).abs() < 1e-6 {
            return next;
        }
        x = next;
    }
    x
}

crate::node! {
    /// Grows mountain ranges cut by branching river valleys, balancing uplift against river erosion
    /// over time.
    /// Uplift against river incision (Cordonnier et al. 2016, as summarised by Lim, Tan & Bhojan
    /// 2022 §2.3), solved implicitly (Braun & Willett 2013, unconditionally stable, as FastScape).
    /// Per step: uplift U·Δt (U = uplift_m_per_yr × uplift map; the border is the fixed base
    /// level, and a finer build holds the base's border cells, so the map's edge stays
    /// where the preview puts it); depressions resolved over the graph of pit basins joined at their lowest passes
    /// (Cordonnier et al. 2016's basin tree; the lake levels equal a priority flood's), so every
    /// river reaches the map edge; jittered node per cell, steepest-descent receiver among 8
    /// neighbours on the filled surface (cells under a spill level are lakes: not cut while under
    /// water, their water routed to the pit and out over the pass; a lake's level falls with its
    /// outlet within the step, and the floor it exposes is cut); drainage area A accumulated downstream; incision
    /// k·A^m·s^n with the implicit update h ← (h + F·h_r)/(1 + F), F = k·Δt·A^m/d (Newton
    /// iterations when n ≠ 1); optional hillslope diffusion κ·∇²h (FastScape's hillslope term, not
    /// in Lim, Tan & Bhojan 2022), implicit one direction at a time, the border fixed. The uplift
    /// input is read as a factor (input − height_min)/(height span): a mask gives its own value, a
    /// height map its relative height. Outputs: height (m), drainage (log of the area, 1 = the
    /// largest), rivers (1 where the area exceeds river_area_km2, fading in from a quarter of it; 0
    /// under lakes). Resolution: by default (detail = consistent) the process runs in full at
    /// base_resolution (256²), where every parameter means what it does in Cordonnier et al. 2016
    /// and Braun & Willett 2013, and a finer build adds only detail below those cells (two
    /// fifths of the steps, once, at the build's resolution, its drift over the base's cells taken out exactly: its change averaged down to them is the base's), so a preview and a
    /// build show the same terrain (orogen parity); detail = native runs it once at the resolution
    /// being built.
    pub struct StreamPowerErosion {
        id: "stream_power_erosion",
        label: "Stream power + uplift",
        category: Erosion,
        version: 7,
        params: StreamPowerParams,
        inputs: StreamPowerErosionIn {
            /// Initial terrain.
            r#in: height,
            /// Uplift map (mask or height); uniform when not connected.
            uplift: height (optional),
        },
        outputs: StreamPowerErosionOut {
            /// Eroded terrain (m).
            out: height,
            /// log(drainage area) / log(largest), in [0, 1].
            drainage: mask,
            /// 1 where the drainage area exceeds river_area_km2.
            rivers: mask,
        },
    }
}

impl Node for StreamPowerErosion {
    const TILE_REFINE: Option<crate::node::TileRefineFn> = levels::tile::<Self>();
    /// Routing over the basin graph keeps more per cell than the old priority flood: node
    /// distances to four neighbours (4 fields; one row each when the nodes are not
    /// jittered), new heights and counts written by the tree walks (2), what the walks
    /// gather, packed (2), basin labels and the heights' receivers (3), basin cell lists and
    /// passes (up to ~5 on white noise, where one cell in nine is a pit: the passes are
    /// sorted in two halves and merged). The estimate against measured peaks:
    /// docs/reliability.md.
    const SCRATCH_FIELDS: u32 = 20 + 4; // + 4: the levels' start, change, drift, delta

    fn eval(
        ctx: &EvalCtx,
        inputs: StreamPowerErosionIn,
        p: &StreamPowerParams,
    ) -> Result<StreamPowerErosionOut, NodeError> {
        levels::evaluate::<Self>(ctx, inputs, p)
    }
}

impl levels::Multiscale for StreamPowerErosion {
    const SCHEDULE: levels::Schedule = levels::Schedule::Direct;
    /// Where a window is not aligned with the base's cells: the band below the coarse pass.
    const TILE_FROM_COARSE: bool = true;
    /// Exactly: every node below stream power (thermal, water, snow) reads its valleys'
    /// slopes, and a threshold amplifies what a Gaussian leaves of the drift at the base's
    /// cells (narrow valleys incised deeper), so a thermal node below moves more than its
    /// preview predicts; exact costs some fine band (docs/perf-log.md).
    const DRIFT_EXACT: bool = true;
    const EXTRA: &'static [Extra] = &[Extra::State, Extra::State];

    fn resolution(p: &StreamPowerParams) -> (levels::Detail, usize) {
        (p.detail, p.base_resolution as usize)
    }

    fn native(
        ctx: &EvalCtx,
        inputs: StreamPowerErosionIn,
        p: &StreamPowerParams,
    ) -> Result<StreamPowerErosionOut, NodeError> {
        native(ctx, inputs, p)
    }

    /// Refinement: two fifths of the steps, once at the target ([`levels::Schedule::Direct`]).
    /// Channels finer than the base's cells need time to cut in on graphs short of steady
    /// state: two fifths of the steps, once at the target, keep most of native's fine band
    /// for what the steps cost (a refinement step costs a native one; the trade-off measured
    /// in docs/perf-log.md). The drainage network is the
    /// whole map's at the target as at the base, so one refinement connects it across scales.
    fn refine(p: &StreamPowerParams, _previous: usize) -> StreamPowerParams {
        StreamPowerParams {
            steps: (p.steps * 2 / 5).max(1),
            ..p.clone()
        }
    }

    /// The base held its border cells, so their change is nothing: the change brought up
    /// smoothly would lean the edge's cliff into the cells a finer level holds there
    /// ([`base_border_strip`]), and they start from the build's input instead.
    fn hold_coarse(ctx: &EvalCtx, p: &StreamPowerParams, coarse: &Field) -> Option<Field> {
        let [l, t, r, b] = base_border_strip(ctx, p);
        if [l, t, r, b] == [0; 4] {
            return None;
        }
        let mut coarse = coarse.clone();
        let h = coarse.height();
        coarse.rows_mut().for_each(|(y, row)| {
            let w = row.len();
            if y < t || y + b >= h {
                row.fill(0.0);
            } else {
                row[..l.min(w)].fill(0.0);
                row[w - r.min(w)..].fill(0.0);
            }
        });
        Some(coarse)
    }
}

/// How many cells along each side (left, top, right, bottom) of the context's window lie inside
/// the base's border cells on a finer level of a consistent build: where the window meets the
/// map's edge, the cells whose centres lie in the base's outer ring of cells; 0 elsewhere, and
/// at the base or with `detail = native`. The base holds its border ring as the base level, and
/// a finer level holds these cells ([`StreamPower::hold_edges`]) started from its input
/// ([`levels::Multiscale::hold_coarse`]). Holding only its own ring, a finer level cut the rows
/// inside the base's border cell, and the exact drift removal then raised the ring to keep
/// that cell's mean: a one-cell rim around the map (about 500 m on
/// `tests/data/parity/ridges.json` at 2048²).
fn base_border_strip(ctx: &EvalCtx, p: &StreamPowerParams) -> [usize; 4] {
    let (detail, base) = <StreamPowerErosion as levels::Multiscale>::resolution(p);
    border_strip(ctx.resolution, ctx.window, detail, base)
}

/// [`base_border_strip`] for a window `w` of an `n`² build whose base is `base`² (`detail`).
fn border_strip(
    n: usize,
    w: crate::node::Window,
    detail: levels::Detail,
    base: usize,
) -> [usize; 4] {
    if detail != levels::Detail::Consistent || n <= base || base == 0 {
        return [0; 4];
    }
    // The cells whose centres lie in the base's first cell: x + ½ < n / base.
    let s = ((n as f64 / base as f64) - 0.5).ceil().max(1.0) as usize;
    let near = |from: usize| s.saturating_sub(from);
    let far = |end: usize| (end + s).saturating_sub(n);
    [
        near(w.x0),
        near(w.y0),
        far(w.x0 + w.width),
        far(w.y0 + w.height),
    ]
}

/// The process run once at the context's resolution (`detail = native`, and each level of
/// the consistent mode).
fn native(
    ctx: &EvalCtx,
    inputs: StreamPowerErosionIn,
    p: &StreamPowerParams,
) -> Result<StreamPowerErosionOut, NodeError> {
    let src = inputs.r#in;
    let (w, h) = (src.width(), src.height());
    let (lo, span) = (
        ctx.world.height_min_m as f32,
        ctx.world.height_span_m() as f32,
    );
    let u = p.uplift_m_per_yr as f32;
    let uplift: Vec<f32> = match inputs.uplift {
        Some(f) => f
            .data()
            .iter()
            .map(|&v| u * ((v - lo) / span).max(0.0))
            .collect(),
        None => vec![u; w * h],
    };
    let settings = SplSettings {
        k: p.k,
        m: p.m,
        n: p.n,
        dt: p.dt_years,
        kd: p.diffusivity_m2_per_yr,
    };
    let mut sim = StreamPower::new(
        src.data().to_vec(),
        uplift,
        w,
        h,
        ctx.cell_size_m(),
        ctx.rng_seed(p.seed),
        p.jitter as f32,
    );
    if (w, h) != (ctx.resolution, ctx.resolution) {
        sim.place_nodes(
            ctx.rng_seed(p.seed),
            p.jitter as f32,
            ctx.window,
            ctx.resolution,
        );
    }
    sim.hold_edges(base_border_strip(ctx, p));
    sim.cancel = ctx.cancel.clone();
    for s in 0..p.steps {
        ctx.check_cancel()?;
        // The drainage areas are read for the outputs only.
        sim.keep_areas = s + 1 == p.steps;
        sim.step(&settings);
        ctx.check_cancel()?;
        ctx.report((s + 1) as f32 / p.steps.max(1) as f32);
    }
    let size = || NodeError::shape(w, h);
    let cell_area = sim.cell * sim.cell;
    let area: Vec<f64> = (0..w * h).map(|i| sim.area(i)).collect();
    let top = area.iter().copied().fold(cell_area, f64::max);
    let log_top = libm::log(top / cell_area).max(1e-9);
    let drainage: Vec<f32> = area
        .iter()
        .map(|&a| crate::node::unit((libm::log(a / cell_area) / log_top) as f32))
        .collect();
    let threshold = (p.river_area_km2 * 1e6).max(cell_area);
    // Rivers run on land: cells under a lake are water bodies, not channels.
    let rivers: Vec<f32> = area
        .iter()
        .zip(sim.z.iter().zip(&sim.filled))
        .map(|(&a, (z, level))| {
            if z < level {
                0.0
            } else {
                crate::node::unit((1.0 + libm::log2(a / threshold) / 2.0) as f32)
            }
        })
        .collect();
    Ok(StreamPowerErosionOut {
        out: Field::from_vec(w, h, sim.z).ok_or_else(size)?,
        drainage: Field::from_vec(w, h, drainage).ok_or_else(size)?,
        rivers: Field::from_vec(w, h, rivers).ok_or_else(size)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::node::Window;

    /// The cells a finer level holds: those inside the base's border cells, on the sides where
    /// the window meets the map's edge only (a piece's other sides are its own outlets).
    #[test]
    fn a_finer_level_holds_the_base_border_cells_where_the_map_ends() {
        let c = levels::Detail::Consistent;
        let win = |x0, y0, width, height| Window {
            x0,
            y0,
            width,
            height,
        };
        assert_eq!(border_strip(2048, Window::full(2048), c, 256), [8; 4]);
        // A piece in the top left corner, and one in the bottom right.
        assert_eq!(
            border_strip(2048, win(0, 0, 1088, 1088), c, 256),
            [8, 8, 0, 0]
        );
        assert_eq!(
            border_strip(2048, win(960, 960, 1088, 1088), c, 256),
            [0, 0, 8, 8]
        );
        // A window starting inside the strip holds the rest of it.
        assert_eq!(
            border_strip(2048, win(3, 500, 100, 100), c, 256),
            [5, 0, 0, 0]
        );
        // 640 / 256 = 2.5: the cells whose centres lie in the base's first cell, 0 and 1.
        assert_eq!(border_strip(640, Window::full(640), c, 256), [2; 4]);
        // The base itself, a preview and `detail = native` hold only their ring.
        assert_eq!(border_strip(256, Window::full(256), c, 256), [0; 4]);
        assert_eq!(border_strip(128, Window::full(128), c, 256), [0; 4]);
        let native = levels::Detail::Native;
        assert_eq!(border_strip(2048, Window::full(2048), native, 256), [0; 4]);
    }
}
