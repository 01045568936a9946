//! `stream_power_erosion`: tectonic uplift against river incision, after Cordonnier et al.
//! 2016 as summarised in seed 000 §2.3, solved with the implicit scheme of Braun & Willett
//! 2013 (as FastScape does).
//!
//! Per time step Δt (years):
//! 1. uplift: `h += U·Δt` (U = `uplift_m_per_yr` × the uplift map; the map border is the
//!    fixed base level and does not rise);
//! 2. depressions: a priority flood from the border (Barnes et al. 2014) gives every cell
//!    its spill level — the same lake levels as Cordonnier et al. 2016's basin graph, whose
//!    minimum spanning tree joins basins at their lowest passes — so every river reaches
//!    the map edge; cells below their spill level are lakes and are not incised;
//! 3. every cell is a node at a jittered position inside it (seed 000 §2.3 "a point with a
//!    random position within it") and drains to the neighbour with the steepest descent on
//!    the filled surface (inside a lake: towards its outlet, along the flood);
//! 4. drainage area `A`: each cell's area plus everything upstream of it;
//! 5. incision `∂h/∂t = −k·A^m·s^n` with `s` the slope to the receiver (seed 000 §2.3 gives
//!    k·s·√A, i.e. m = 0.5, n = 1), integrated implicitly from the outlets upstream:
//!    for n = 1, `h_i ← (h_i + F·h_r)/(1 + F)` with `F = k·Δt·A^m/d` (Braun & Willett 2013,
//!    Eq. 23), unconditionally stable; for n ≠ 1, Newton iterations on the same equation.

use super::flow::{self, NONE};
use crate::field::Field;
use crate::node::{Category, EvalCtx, Inputs, Node, NodeError, NodeSpec, PortSpec};
use rayon::prelude::*;

crate::params! {
    pub struct StreamPowerParams {
        /// Seed of the jittered node positions, combined with the graph seed.
        seed: u32 = seed(0),
        /// How far node positions wander inside their cells: 0 = cell centres, 1 = anywhere in the cell.
        jitter: f64 = float(1.0, [0.0, 1.0], [0.0, 1.0], ""),
        /// Uplift rate U where the uplift map is 1 (or everywhere when it is not connected).
        uplift_m_per_yr: f64 = float(0.001, [0.0, 0.01], [0.0, 1.0], "m/yr"),
        /// Erodibility k in ∂h/∂t = −k·A^m·s^n (A in m²).
        k: f64 = float(0.0002, [0.00001, 0.001], [0.0, 1.0], ""),
        /// Drainage-area exponent m (seed 000 §2.3: 0.5).
        m: f64 = float(0.4, [0.3, 0.6], [0.0, 2.0], ""),
        /// Slope exponent n (1 = closed-form implicit update; otherwise Newton iterations).
        n: f64 = float(1.0, [0.5, 2.0], [0.1, 4.0], ""),
        /// Time step Δt.
        dt_years: f64 = float(20_000.0, [1000.0, 100_000.0], [1.0, 10_000_000.0], "yr"),
        /// Number of time steps.
        steps: u32 = int(100, [1, 500], [0, 100_000], ""),
        /// Drainage area from which the rivers mask reaches 1 (it fades in from a quarter of it).
        river_area_km2: f64 = float(2.0, [0.1, 50.0], [0.0, 1_000_000.0], "km²"),
    }
}

/// The constants of one run.
#[derive(Clone, Copy, Debug)]
pub struct SplSettings {
    pub k: f64,
    pub m: f64,
    pub n: f64,
    pub dt: f64,
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
    /// Drainage area of the last step (m²).
    pub area: Vec<f64>,
    /// Receivers of the last step.
    pub rcv: Vec<u32>,
    /// Priority flood of the last step (`flood.filled` > `z` under lakes).
    pub flood: flow::Flood,
    /// Cells under a lake in the last step.
    pub lake_cells: usize,
    /// Checked between the phases of a step, so a cancelled step ends early (its partial
    /// result is thrown away by the caller).
    pub cancel: crate::node::CancelToken,
    off: Vec<[f32; 2]>,
    dist: Vec<f32>,
    /// Per-step implicit-update factor F of every cell.
    factor: Vec<f64>,
}

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
        Self {
            w,
            h,
            cell,
            z,
            uplift,
            area: vec![0.0; n],
            rcv: vec![NONE; n],
            flood: flow::Flood::default(),
            lake_cells: 0,
            cancel: crate::node::CancelToken::new(),
            off: flow::jittered_offsets(seed, n, jitter),
            dist: vec![1.0; n],
            factor: vec![0.0; n],
        }
    }

    /// Distance (cell units) from cell `i`'s node to its receiver's in the last step.
    #[must_use]
    pub fn distance(&self, i: usize) -> f64 {
        f64::from(self.dist[i])
    }

    fn is_border(w: usize, h: usize, i: usize) -> bool {
        let (x, y) = (i % w, i / w);
        x == 0 || y == 0 || x + 1 == w || y + 1 == h
    }

    /// One time step of `k.dt` years.
    pub fn step(&mut self, k: &SplSettings) {
        let (w, h) = (self.w, self.h);
        let outlet = move |i: usize| Self::is_border(w, h, i);
        // 1. Uplift (the border is the base level).
        let dt = k.dt as f32;
        self.z
            .par_chunks_mut(w)
            .zip(self.uplift.par_chunks(w))
            .enumerate()
            .for_each(|(y, (z, u))| {
                if y == 0 || y + 1 == h {
                    return;
                }
                for x in 1..w - 1 {
                    z[x] += u[x] * dt;
                }
            });
        // 2–3. Depressions (priority flood), then receivers on the filled surface.
        self.flood.run(&self.z, w, h, &flow::D8, &outlet);
        if self.cancel.is_cancelled() {
            return;
        }
        flow::routed_receivers(
            &self.flood,
            w,
            h,
            &self.off,
            &flow::D8,
            &mut self.rcv,
            &mut self.dist,
        );
        self.lake_cells = self
            .z
            .iter()
            .zip(&self.flood.filled)
            .filter(|(z, f)| z < f)
            .count();
        // 4. Drainage area.
        let cell_area = self.cell * self.cell;
        self.area.fill(cell_area);
        for &i in self.flood.order.iter().rev() {
            let r = self.rcv[i as usize];
            if r != NONE {
                self.area[r as usize] += self.area[i as usize];
            }
        }
        if self.cancel.is_cancelled() {
            return;
        }
        // 5. Implicit incision, outlets first. The factors F = k·Δt·A^m/d^n depend on this
        // step's areas and distances only: computed for all cells in parallel first (the
        // two `powf` per cell were most of this phase), so the sequential walk upstream does
        // only the update.
        let (area, dist, cell) = (&self.area, &self.dist, self.cell);
        self.factor.par_iter_mut().enumerate().for_each(|(i, f)| {
            let d = f64::from(dist[i]) * cell;
            *f = k.k * k.dt * area[i].powf(k.m) / d.powf(k.n);
        });
        let linear = (k.n - 1.0).abs() < 1e-9;
        for &i in &self.flood.order {
            let i = i as usize;
            let r = self.rcv[i];
            if r == NONE {
                continue;
            }
            let r = r as usize;
            let zi = f64::from(self.z[i]);
            if self.z[i] < self.flood.filled[i] {
                continue; // under a lake
            }
            // The receiver's surface: its new height, or the level of the lake it lies in
            // (a river entering a lake meets its surface, not its bed).
            let zr = f64::from(self.flood.filled[r]);
            if zi <= zr {
                continue;
            }
            let f = self.factor[i];
            let new = if linear {
                (zi + f * zr) / (1.0 + f)
            } else {
                // Solve x − zi + f·(x − zr)^n = 0 for x in (zr, zi] (Newton, from zi).
                let mut x = zi;
                for _ in 0..20 {
                    let s = (x - zr).max(0.0);
                    let g = x - zi + f * s.powf(k.n);
                    let dg = 1.0 + f * k.n * s.powf(k.n - 1.0);
                    let next = (x - g / dg).max(zr);
                    if (next - x).abs() < 1e-6 {
                        x = next;
                        break;
                    }
                    x = next;
                }
                x
            };
            self.z[i] = new as f32;
            self.flood.filled[i] = new as f32;
        }
    }
}

/// Stream-power erosion with uplift.
pub struct StreamPowerErosion;

impl Node for StreamPowerErosion {
    type Params = StreamPowerParams;
    /// Measured: 7.0 fields of scratch at 1024² (peak RSS, docs/reliability.md), plus the
    /// per-step factor array added since (f64: two fields), rounded up.
    const SCRATCH_FIELDS: u32 = 10;
    const SPEC: NodeSpec = NodeSpec {
        id: "stream_power_erosion",
        label: "Stream power + uplift",
        category: Category::Erosion,
        version: 1,
        doc: "Uplift against river incision (Cordonnier et al. 2016, seed 000 §2.3), solved implicitly (Braun & Willett 2013, unconditionally stable, as FastScape). Per step: uplift U·Δt (U = uplift_m_per_yr × uplift map; the border is the fixed base level); depressions filled by a priority flood from the border, giving each basin the spill level of its lowest pass (the lake levels of Cordonnier's basin tree), so every river reaches the map edge; jittered node per cell, steepest-descent receiver among 8 neighbours on the filled surface (cells under a spill level are lakes: routed to their outlet, not cut); drainage area A accumulated downstream; incision k·A^m·s^n with the implicit update h ← (h + F·h_r)/(1 + F), F = k·Δt·A^m/d (Newton iterations when n ≠ 1). The uplift input is read as a factor (input − height_min)/(height span): a mask gives its own value, a height map its relative height. Outputs: height (m), drainage (log of the area, 1 = the largest), rivers (1 where the area exceeds river_area_km2, fading in from a quarter of it; 0 under lakes).",
        inputs: &[
            PortSpec::height("in", "Initial terrain."),
            PortSpec::height("uplift", "Uplift map (mask or height); uniform when not connected.").optional(),
        ],
        outputs: &[
            PortSpec::height("out", "Eroded terrain (m)."),
            PortSpec::mask("drainage", "log(drainage area) / log(largest), in [0, 1]."),
            PortSpec::mask("rivers", "1 where the drainage area exceeds river_area_km2."),
        ],
    };

    fn eval(
        ctx: &EvalCtx,
        inputs: &Inputs,
        p: &StreamPowerParams,
    ) -> Result<Vec<Field>, NodeError> {
        let src = inputs.required(0)?;
        let (w, h) = (src.width(), src.height());
        let (lo, span) = (
            ctx.world.height_min_m as f32,
            ctx.world.height_span_m() as f32,
        );
        let u = p.uplift_m_per_yr as f32;
        let uplift: Vec<f32> = match inputs.get(1) {
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
        sim.cancel = ctx.cancel.clone();
        for s in 0..p.steps {
            ctx.check_cancel()?;
            sim.step(&settings);
            ctx.check_cancel()?;
            ctx.report((s + 1) as f32 / p.steps.max(1) as f32);
        }
        let size = || NodeError::Failed("size".into());
        let cell_area = sim.cell * sim.cell;
        let top = sim.area.iter().copied().fold(cell_area, f64::max);
        let log_top = (top / cell_area).ln().max(1e-9);
        let drainage: Vec<f32> = sim
            .area
            .iter()
            .map(|&a| crate::node::unit(((a / cell_area).ln() / log_top) as f32))
            .collect();
        let threshold = (p.river_area_km2 * 1e6).max(cell_area);
        // Rivers run on land: cells under a lake are water bodies, not channels.
        let rivers: Vec<f32> = sim
            .area
            .iter()
            .zip(sim.z.iter().zip(&sim.flood.filled))
            .map(|(&a, (z, level))| {
                if z < level {
                    0.0
                } else {
                    crate::node::unit((1.0 + (a / threshold).log2() / 2.0) as f32)
                }
            })
            .collect();
        Ok(vec![
            Field::from_vec(w, h, sim.z).ok_or_else(size)?,
            Field::from_vec(w, h, drainage).ok_or_else(size)?,
            Field::from_vec(w, h, rivers).ok_or_else(size)?,
        ])
    }
}
