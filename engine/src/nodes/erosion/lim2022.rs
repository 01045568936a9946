//! `lim_tan_bhojan_erosion`: the graph-based fluvial erosion of Lim, Tan & Bhojan,
//! *Visually Improved Erosion Algorithm for the Procedural Generation of Tile-based Terrain*
//! (GRAPP 2022, seed 000), the whole of its Algorithm 1 (§3.1).
//!
//! Per simulation tick:
//! 1. (§3.2) every tile drains to the one of its four neighbours with the steepest descent
//!    in *total* height (land + water) divided by the distance between the tiles' jittered
//!    nodes; a tile with no lower neighbour is a local minimum (minima under water are
//!    discarded);
//! 2. (§3.3) total drainage `D = moisture + k_d·Σ D(tributaries)`, computed in one pass over
//!    a topological order of the drainage forest;
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

use super::flow::{self, NONE};
use crate::field::Field;
use crate::node::{splitmix64, Category, EvalCtx, Inputs, Node, NodeError, NodeSpec, PortSpec};
use rayon::prelude::*;

crate::params! {
    pub struct LimParams {
        /// Seed of the node offsets and of the initial noise, combined with the graph seed.
        seed: u32 = seed(0),
        /// Number of simulation ticks (the paper shows 50–100).
        iterations: u32 = int(100, [1, 300], [0, 100_000], ""),
        /// Value-constraint strength s_v (§3.6: 0.02), × the value-strength mask when connected.
        value_strength: f64 = float(0.02, [0.0, 0.2], [0.0, 1.0], ""),
        /// Gradient-constraint strength s_g (§3.6: 0.8 for a detailed constraint map, 0.02 for a smooth one), × the gradient-strength mask when connected.
        gradient_strength: f64 = float(0.8, [0.0, 1.0], [0.0, 1.0], ""),
        /// Drainage loss k_d: the share of the tributaries' drainage that arrives (§3.3: 0.68).
        kd: f64 = float(0.68, [0.0, 1.0], [0.0, 1.0], ""),
        /// Gorge-carving constant k_g in w = min(k_g·D, 1) (§3.4: 0.1).
        kg: f64 = float(0.1, [0.0, 1.0], [0.0, 100.0], ""),
        /// Erosion constant k_e in Δh = k_e·D^n·s^m (§3.5: 0.5).
        ke: f64 = float(0.5, [0.0, 2.0], [0.0, 100.0], ""),
        /// Drainage exponent n (§3.5: 1).
        n: f64 = float(1.0, [0.5, 2.0], [0.0, 4.0], ""),
        /// Slope exponent m (§3.5: 2; the paper finds n/m = 1/2 best).
        m: f64 = float(2.0, [1.0, 4.0], [0.0, 8.0], ""),
        /// Sea level as a fraction of the graph's height range (0 = its bottom).
        sea_level: f64 = float(0.0, [0.0, 1.0], [-10.0, 10.0], ""),
        /// Rain on every tile (× the moisture mask when connected; §3.1 "a uniform high value").
        moisture: f64 = float(1.0, [0.0, 2.0], [0.0, 100.0], ""),
        /// Amplitude of the random noise added to the constraint map (§3.1), in metres.
        noise_m: f64 = float(0.01, [0.0, 1.0], [0.0, 1000.0], "m"),
        /// How far node positions wander inside their tiles: 1 = the paper's uniform [0, 1]².
        jitter: f64 = float(1.0, [0.0, 1.0], [0.0, 1.0], ""),
    }
}

/// `x^e`, with the paper's exponents 1 and 2 as plain products (`powf` dominated the tick).
#[inline]
fn pow(x: f32, e: f32) -> f32 {
    if e == 1.0 {
        x
    } else if e == 2.0 {
        x * x
    } else {
        x.powf(e)
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
    dist: Vec<f32>,
    order: Vec<u32>,
    count: Vec<u32>,
    root: Vec<u32>,
    scratch: Vec<f32>,
}

impl Lim {
    /// Initialises land = constraint, water from the sea level (§3.1).
    #[must_use]
    #[allow(clippy::too_many_arguments)]
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
            off: flow::jittered_offsets(seed, n, jitter),
            dist: vec![1.0; n],
            order: Vec::with_capacity(n),
            count: Vec::new(),
            root: Vec::new(),
            scratch: vec![0.0; n],
        };
        s.sea_level(sea);
        s
    }

    /// Step 6 (§3.7): water fills every tile below sea level up to it; others are dry.
    fn sea_level(&mut self, sea: f32) {
        self.water
            .par_iter_mut()
            .zip(self.land.par_iter())
            .for_each(|(w, &h)| *w = (sea - h).max(0.0));
    }

    /// Total drainage (§3.3) over the current receivers, in a topological order.
    pub fn total_drainage(&mut self, kd: f32) {
        flow::upstream_first(&self.rcv, &mut self.order, &mut self.count);
        self.drainage.copy_from_slice(&self.moisture);
        for &i in &self.order {
            let r = self.rcv[i as usize];
            if r != NONE {
                let add = kd * self.drainage[i as usize];
                self.drainage[r as usize] += add;
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
        let (w, h) = (self.w, self.h);
        let n = w * h;
        // 1. Drainage directions by total height, four neighbours.
        let total: Vec<f32> = self
            .land
            .par_iter()
            .zip(self.water.par_iter())
            .map(|(a, b)| a + b)
            .collect();
        flow::receivers(
            &total,
            w,
            h,
            &self.off,
            &flow::D4,
            &|_| false,
            &mut self.rcv,
            &mut self.dist,
        );
        // 2. Total drainage (also leaves `order` and the donor counts).
        self.total_drainage(k.kd);
        // Donor counts were consumed by the ordering; recount the tributaries.
        self.count.clear();
        self.count.resize(n, 0);
        for &r in &self.rcv {
            if r != NONE {
                self.count[r as usize] += 1;
            }
        }
        // 3. Gorges between adjacent minima.
        flow::roots(&self.rcv, &self.order, &mut self.root);
        self.carve_gorges(&total, k);
    }

    /// Steps 4–6 of a tick: fluvial erosion, height constraints, sea level.
    fn erode_and_constrain(&mut self, k: &LimSettings) {
        let (w, h) = (self.w, self.h);
        // 4. Fluvial erosion, all tiles at once from the heights after carving.
        let (land, water, rcv, dist, drainage) = (
            &self.land,
            &self.water,
            &self.rcv,
            &self.dist,
            &self.drainage,
        );
        self.scratch
            .par_iter_mut()
            .enumerate()
            .for_each(|(i, out)| {
                let r = rcv[i];
                *out = land[i];
                if r == NONE || water[i] > 0.0 {
                    return;
                }
                let r = r as usize;
                let drop = (land[i] + water[i]) - (land[r] + water[r]);
                if drop <= 0.0 {
                    return;
                }
                let s = drop / dist[i];
                let dh = k.ke * pow(drainage[i], k.n) * pow(s, k.m);
                *out = land[i] - dh.min(drop);
            });
        std::mem::swap(&mut self.land, &mut self.scratch);
        // 5. Height constraints: value, then gradient (both from the current heights).
        self.land
            .par_iter_mut()
            .zip(
                self.constraint
                    .par_iter()
                    .zip(self.value_strength.par_iter()),
            )
            .for_each(|(h, (&c, &sv))| *h = (1.0 - sv) * *h + sv * c);
        let (land, c, sg) = (&self.land, &self.constraint, &self.gradient_strength);
        self.scratch
            .par_chunks_mut(w)
            .enumerate()
            .for_each(|(y, row)| {
                for (x, out) in row.iter_mut().enumerate() {
                    let i = y * w + x;
                    let (mut sum, mut count) = (0.0f32, 0.0f32);
                    for &(dx, dy) in &flow::D4 {
                        let (nx, ny) = (x as i32 + dx, y as i32 + dy);
                        if nx < 0 || ny < 0 || nx >= w as i32 || ny >= h as i32 {
                            continue;
                        }
                        let j = ny as usize * w + nx as usize;
                        sum += land[j] + c[i] - c[j];
                        count += 1.0;
                    }
                    let ideal = if count > 0.0 { sum / count } else { land[i] };
                    *out = (1.0 - sg[i]) * land[i] + sg[i] * ideal;
                }
            });
        std::mem::swap(&mut self.land, &mut self.scratch);
        // 6. Sea level.
        self.sea_level(k.sea);
    }

    /// Step 3 (§3.4): for each dry local minimum, carve a gorge to the adjacent minimum
    /// reached through the lowest leaf of its drainage tree.
    fn carve_gorges(&mut self, total: &[f32], k: &LimSettings) {
        let (w, h) = (self.w, self.h);
        let n = w * h;
        self.gorges.clear();
        // Lowest leaf (tile without tributaries) of every tree, by total height.
        let mut lowest_leaf = vec![NONE; n];
        for i in 0..n {
            if self.count[i] != 0 || self.rcv[i] == NONE {
                continue;
            }
            let m = self.root[i] as usize;
            let cur = lowest_leaf[m];
            if cur == NONE || total[i] < total[cur as usize] {
                lowest_leaf[m] = i as u32;
            }
        }
        // Every gorge is computed from the heights the drainage network of this tick was
        // routed on (steps 1–2), so one gorge never sees another's cut.
        let snapshot = self.land.clone();
        let mut path: Vec<u32> = Vec::new();
        let mut carved: Vec<f32> = Vec::new();
        for m in 0..n {
            if self.rcv[m] != NONE || self.water[m] > 0.0 || lowest_leaf[m] == NONE {
                continue;
            }
            let leaf = lowest_leaf[m] as usize;
            // The neighbour opposite the leaf's drainage direction.
            let r = self.rcv[leaf] as usize;
            let (lx, ly) = ((leaf % w) as i32, (leaf / w) as i32);
            let (dx, dy) = ((r % w) as i32 - lx, (r / w) as i32 - ly);
            let (ox, oy) = (lx - dx, ly - dy);
            if ox < 0 || oy < 0 || ox >= w as i32 || oy >= h as i32 {
                continue;
            }
            let o = oy as usize * w + ox as usize;
            let m2 = self.root[o] as usize;
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
                // Where gorges cross, the deepest cut stays.
                self.land[t] = self.land[t].min(cut);
                self.gradient_strength[t] *= 1.0 - wgt;
            }
            if self.record_gorges {
                self.gorges.push((path.clone(), carved.clone()));
            }
        }
    }
}

/// Lim–Tan–Bhojan erosion.
pub struct LimTanBhojan;

impl Node for LimTanBhojan {
    type Params = LimParams;
    /// Measured: 11.6 fields of scratch at 1024² (peak RSS, docs/reliability.md), rounded up.
    const SCRATCH_FIELDS: u32 = 12;
    const SPEC: NodeSpec = NodeSpec {
        id: "lim_tan_bhojan_erosion",
        label: "Lim–Tan–Bhojan erosion",
        category: Category::Erosion,
        version: 1,
        doc: "Seed 000 §3 (Lim, Tan & Bhojan 2022), Algorithm 1 per tick: 4-neighbour steepest drainage by total height between jittered nodes (§3.2); total drainage D = moisture + k_d·Σ D(tributaries) (§3.3); gorges carved between adjacent local minima through each minimum's lowest leaf, w = min(k_g·D, 1) (Eq. 1; the paper's max is a typo), gradient-constraint strength × (1 − w) along the gorge (§3.4); fluvial erosion Δh = k_e·D^n·s^m capped at the drop to the receiver (Eq. 2, §3.5); value constraint then gradient constraint towards the constraint map (§3.6); water reset to sea level (§3.7). The input is the height-constraint map (land starts equal to it plus small noise); value strength, gradient strength and moisture are constants, each multiplied by its mask input when connected. Heights in tile units (metres / cell size). Outputs: height, water (sea depth relative to the deepest), drainage (log-scaled, 1 = the largest).",
        inputs: &[
            PortSpec::height("constraint", "Height-constraint map: the terrain the result stays close to."),
            PortSpec::mask("value_strength", "Value-constraint strength map (× value_strength).").optional(),
            PortSpec::mask("gradient_strength", "Gradient-constraint strength map (× gradient_strength).").optional(),
            PortSpec::mask("moisture", "Rainfall map (× moisture); uniform when not connected.").optional(),
        ],
        outputs: &[
            PortSpec::height("out", "Eroded terrain."),
            PortSpec::mask("water", "Sea depth, 1 = deepest."),
            PortSpec::mask("drainage", "log(1 + total drainage) / log(1 + largest)."),
        ],
    };

    fn eval(ctx: &EvalCtx, inputs: &Inputs, p: &LimParams) -> Result<Vec<Field>, NodeError> {
        let src = inputs.required(0)?;
        let (w, h) = (src.width(), src.height());
        let cell = ctx.cell_size_m() as f32;
        let seed = ctx.rng_seed(p.seed);
        let noise = p.noise_m as f32 / cell;
        let constraint: Vec<f32> = src
            .data()
            .par_iter()
            .enumerate()
            .map(|(i, &v)| {
                let u = (splitmix64(seed ^ 0xA5A5 ^ splitmix64(i as u64)) >> 40) as f32
                    / (1u64 << 24) as f32;
                v / cell + noise * (u - 0.5)
            })
            .collect();
        let field_or = |index: usize, scale: f64| -> Vec<f32> {
            match inputs.get(index) {
                Some(f) => f.data().iter().map(|&m| m * scale as f32).collect(),
                None => vec![scale as f32; w * h],
            }
        };
        let sea = (ctx.world.height_min_m + p.sea_level * ctx.world.height_span_m()) as f32 / cell;
        let mut sim = Lim::new(
            constraint,
            field_or(1, p.value_strength),
            field_or(2, p.gradient_strength),
            field_or(3, p.moisture),
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
        let size = || NodeError::Failed("size".into());
        let out =
            Field::from_vec(w, h, sim.land.iter().map(|v| v * cell).collect()).ok_or_else(size)?;
        let water = Field::from_vec(w, h, sim.water).ok_or_else(size)?;
        let top = sim
            .drainage
            .iter()
            .copied()
            .fold(0.0f32, f32::max)
            .ln_1p()
            .max(1e-9);
        let drainage = Field::from_vec(
            w,
            h,
            sim.drainage
                .iter()
                .map(|d| crate::node::unit(d.ln_1p() / top))
                .collect(),
        )
        .ok_or_else(size)?;
        Ok(vec![out, super::relative(water), drainage])
    }
}
