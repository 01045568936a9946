//! `pipe_hydraulic_erosion`: shallow-water erosion with virtual pipes, after Mei, Decaudin &
//! Hu, *Fast Hydraulic Erosion Simulation and Visualization on GPU* (2007) and Šťava et al.
//! (2008), both cited in seed 000 §2.2 — the model Gaea and Hesiod users know as "hydraulic".
//!
//! Per iteration (Mei et al. §3, equation numbers theirs):
//! 1. rain: `d₁ = d + Δt·r` (Eq. 1), `r` = `rain` × the optional rain mask;
//! 2. outflow flux through the four pipes, `f ← max(0, f + Δt·A·g·Δh/l)` with
//!    `Δh = (b + d₁) − (b' + d₁')` (Eqs. 2–3), scaled by `K = min(1, d₁·l²/(Σf·Δt))` (Eq. 4)
//!    so a cell never sends more water than it holds;
//! 3. water: `d₂ = d₁ + Δt·(Σf_in − Σf_out)/l²` (Eqs. 5–6);
//! 4. velocity from the flux through the cell, `u = ΔW_x/(l·d̄)`, `v = ΔW_y/(l·d̄)`,
//!    `d̄ = (d₁ + d₂)/2` (Eqs. 7–9);
//! 5. capacity `C = K_c·sin(α)·|v|` with α the local tilt, floored at `min_tilt` so flats
//!    still carry; below capacity the bed erodes `K_s·(C − s)`, above it deposits
//!    `K_d·(s − C)` (Eqs. 10–12);
//! 6. sediment transport;
//! 7. evaporation `d ← d₂·(1 − K_e·Δt)` (Eq. 14).
//!
//! Units: the grid is normalised as in Mei et al. (l = A = 1, heights and water depths in cell
//! units = metres / cell size), so the constants keep their published meaning at any world size.
//!
//! Departures from the paper, on purpose:
//! * Step 6 moves sediment with the water that leaves each cell (upwind, by the fraction of
//!   the cell's water each pipe carries) instead of Mei's semi-Lagrangian advection (Eq. 13),
//!   which does not conserve mass. Terrain + suspended sediment + what left the map is then
//!   conserved to float rounding.
//! * Water may leave through the map edge (the cell outside is taken as dry ground at the
//!   edge cell's height) instead of meeting a wall, so valleys drain off the map as a user
//!   expects rather than flooding the border; the sediment it carries is counted as exited.
//! * Erosion never cuts a cell below its lowest neighbour (the rule seed 001 uses for
//!   droplets): without it a thin, fast film digs one-cell pits that trap water and deepen
//!   every step, and the surface turns to noise.
//! * Deposition never raises a cell above its highest neighbour (no sediment spikes).
//! * The fluxes are damped by `friction` (per unit of time) before each update: the plain
//!   pipe model carries undamped waves, which ring as circular ripples on steep terrain.
//! * Erosion and deposition are rates, scaled by Δt, so halving Δt and doubling the
//!   iterations simulates the same time.
//! * At the end, sediment still in suspension settles where it is.

use crate::field::Field;
use crate::node::{Category, EvalCtx, Inputs, Node, NodeError, NodeSpec, PortSpec};
use rayon::prelude::*;

crate::params! {
    pub struct PipeParams {
        /// Number of iterations (time steps of length dt).
        iterations: u32 = int(200, [10, 2000], [0, 100_000], ""),
        /// Time step Δt (Mei et al. use 0.02–0.05 on a unit grid; above about 0.25 the flux can oscillate).
        dt: f64 = float(0.05, [0.005, 0.2], [0.0001, 1.0], "s"),
        /// Rain r per unit of time, in cell units of water depth (× the rain mask when connected).
        rain: f64 = float(0.02, [0.0, 0.1], [0.0, 10.0], ""),
        /// Gravity g in the flux update.
        g: f64 = float(9.81, [1.0, 20.0], [0.0, 100.0], ""),
        /// Sediment capacity constant K_c in C = K_c·sin(α)·|v|.
        kc: f64 = float(0.5, [0.01, 2.0], [0.0, 100.0], ""),
        /// Dissolving constant K_s: fraction of the missing load eroded per step.
        ks: f64 = float(0.3, [0.0, 1.0], [0.0, 1.0], ""),
        /// Deposition constant K_d: fraction of the excess load deposited per step.
        kd: f64 = float(0.3, [0.0, 1.0], [0.0, 1.0], ""),
        /// Evaporation constant K_e per unit of time.
        ke: f64 = float(0.5, [0.0, 5.0], [0.0, 1000.0], ""),
        /// Smallest sin(α) used in the capacity, so water on flats still carries sediment.
        min_tilt: f64 = float(0.05, [0.0, 0.3], [0.0, 1.0], ""),
        /// Flux damping per unit of time: f ← f·(1 − friction·Δt) before the pressure update. Not in Mei et al.; without it the pipes carry undamped shallow-water waves that ring as ripples on steep terrain.
        friction: f64 = float(10.0, [0.0, 40.0], [0.0, 1000.0], ""),
    }
}

/// The constants of one run (grid units).
#[derive(Clone, Copy, Debug)]
pub struct PipeSettings {
    pub dt: f32,
    pub rain: f32,
    pub g: f32,
    pub kc: f32,
    pub ks: f32,
    pub kd: f32,
    pub ke: f32,
    pub min_tilt: f32,
    pub friction: f32,
}

/// The state of a pipe-model simulation on a `w × h` grid (all row-major).
pub struct PipeState {
    pub w: usize,
    pub h: usize,
    /// Bed (terrain) height.
    pub b: Vec<f32>,
    /// Water depth.
    pub d: Vec<f32>,
    /// Suspended sediment.
    pub s: Vec<f32>,
    /// Outflow flux to the left, right, top (y − 1) and bottom (y + 1) neighbours.
    f: [Vec<f32>; 4],
    /// Speed |v| of the last step.
    pub speed: Vec<f32>,
    /// Total sediment carried off the map so far.
    pub exited: f64,
    // Scratch.
    d1: Vec<f32>,
    b2: Vec<f32>,
    d2: Vec<f32>,
    s2: Vec<f32>,
}

/// Below this mean depth (cell units) the water is too thin to have a meaningful velocity.
const MIN_DEPTH: f32 = 1e-3;

/// Neighbour offsets of the four pipes: left, right, top, bottom.
const PIPES: [(isize, isize); 4] = [(-1, 0), (1, 0), (0, -1), (0, 1)];

impl PipeState {
    /// A dry grid with bed `b`.
    #[must_use]
    pub fn new(b: Vec<f32>, w: usize, h: usize) -> Self {
        let n = w * h;
        Self {
            w,
            h,
            b,
            d: vec![0.0; n],
            s: vec![0.0; n],
            f: std::array::from_fn(|_| vec![0.0; n]),
            speed: vec![0.0; n],
            exited: 0.0,
            d1: vec![0.0; n],
            b2: vec![0.0; n],
            d2: vec![0.0; n],
            s2: vec![0.0; n],
        }
    }

    /// One time step. `rain` is the per-cell rain factor (or empty for uniform rain).
    pub fn step(&mut self, k: &PipeSettings, rain: &[f32]) {
        let (w, h) = (self.w, self.h);
        // Step 1 (Eq. 1): d₁ = d + Δt·r, once per cell.
        let per_step = k.dt * k.rain;
        if rain.is_empty() {
            self.d1
                .par_iter_mut()
                .zip(self.d.par_iter())
                .for_each(|(d1, &d)| *d1 = d + per_step);
        } else {
            self.d1
                .par_iter_mut()
                .zip(self.d.par_iter().zip(rain.par_iter()))
                .for_each(|(d1, (&d, &r))| *d1 = d + per_step * r);
        }
        let damp = (1.0 - k.friction * k.dt).max(0.0);
        // Steps 1–2: rain and outflow flux (Eqs. 1–4).
        {
            let (b, d1v) = (&self.b, &self.d1);
            let [fl, fr, ft, fb] = &mut self.f;
            fl.par_chunks_mut(w)
                .zip(fr.par_chunks_mut(w))
                .zip(ft.par_chunks_mut(w).zip(fb.par_chunks_mut(w)))
                .enumerate()
                .for_each(|(y, ((fl, fr), (ft, fb)))| {
                    for x in 0..w {
                        let i = y * w + x;
                        let d1 = d1v[i];
                        let surface = b[i] + d1;
                        let mut out = [fl[x], fr[x], ft[x], fb[x]];
                        for (o, &(dx, dy)) in out.iter_mut().zip(&PIPES) {
                            let (nx, ny) = (x as isize + dx, y as isize + dy);
                            // Outside the map: dry ground at this cell's bed height.
                            let other = if nx < 0 || ny < 0 || nx >= w as isize || ny >= h as isize
                            {
                                b[i]
                            } else {
                                let j = ny as usize * w + nx as usize;
                                b[j] + d1v[j]
                            };
                            *o = (*o * damp + k.dt * k.g * (surface - other)).max(0.0);
                        }
                        let total = out.iter().sum::<f32>() * k.dt;
                        let scale = if total > d1 && total > 0.0 {
                            d1 / total
                        } else {
                            1.0
                        };
                        fl[x] = out[0] * scale;
                        fr[x] = out[1] * scale;
                        ft[x] = out[2] * scale;
                        fb[x] = out[3] * scale;
                    }
                });
        }
        // Steps 3–5: water, velocity, erosion and deposition (Eqs. 5–12).
        {
            let (b, d1v, s) = (&self.b, &self.d1, &self.s);
            let [fl, fr, ft, fb] = &self.f;
            let flux = |i: usize| fl[i] + fr[i] + ft[i] + fb[i];
            self.b2
                .par_chunks_mut(w)
                .zip(self.d2.par_chunks_mut(w))
                .zip(self.s2.par_chunks_mut(w).zip(self.speed.par_chunks_mut(w)))
                .enumerate()
                .for_each(|(y, ((b2, d2), (s2, speed)))| {
                    for x in 0..w {
                        let i = y * w + x;
                        let d1 = d1v[i];
                        // Inflow: the right pipe of the left neighbour, etc.
                        let left = (x > 0).then(|| i - 1);
                        let right = (x + 1 < w).then(|| i + 1);
                        let up = (y > 0).then(|| i - w);
                        let down = (y + 1 < h).then(|| i + w);
                        let from = |n: Option<usize>, pipe: &[f32]| n.map_or(0.0, |j| pipe[j]);
                        let inflow =
                            from(left, fr) + from(right, fl) + from(up, fb) + from(down, ft);
                        let dn = (d1 + k.dt * (inflow - flux(i))).max(0.0);
                        // Velocity from the water passing through (Eqs. 7–9).
                        let wx = 0.5 * (from(left, fr) - fl[i] + fr[i] - from(right, fl));
                        let wy = 0.5 * (from(up, fb) - ft[i] + fb[i] - from(down, ft));
                        let mean = 0.5 * (d1 + dn);
                        let v = if mean > MIN_DEPTH {
                            (wx * wx + wy * wy).sqrt() / mean
                        } else {
                            0.0
                        };
                        // Local tilt from central differences of the bed.
                        let bx = |n: Option<usize>| n.map_or(b[i], |j| b[j]);
                        let gx = 0.5 * (bx(right) - bx(left));
                        let gy = 0.5 * (bx(down) - bx(up));
                        let tan2 = gx * gx + gy * gy;
                        let sin = (tan2 / (1.0 + tan2)).sqrt().max(k.min_tilt);
                        let capacity = k.kc * sin * v;
                        let (mut bed, mut sed) = (b[i], s[i]);
                        if capacity > sed {
                            // Never cut below the lowest neighbour: a pit would trap the
                            // water and deepen itself every step.
                            let lowest = bx(left).min(bx(right)).min(bx(up)).min(bx(down));
                            let e = (k.dt * k.ks * (capacity - sed)).min((b[i] - lowest).max(0.0));
                            bed -= e;
                            sed += e;
                        } else {
                            // Never raise a cell above its highest neighbour (no spikes).
                            let highest = bx(left).max(bx(right)).max(bx(up)).max(bx(down));
                            let dep =
                                (k.dt * k.kd * (sed - capacity)).min((highest - b[i]).max(0.0));
                            bed += dep;
                            sed -= dep;
                        }
                        b2[x] = bed;
                        d2[x] = dn;
                        s2[x] = sed;
                        speed[x] = v;
                    }
                });
        }
        std::mem::swap(&mut self.b, &mut self.b2);
        // Step 6: sediment leaves with the fraction of the water each pipe carries; 7: evaporate.
        let mut lost_rows = vec![0.0f64; h];
        {
            let (d1v, s1) = (&self.d1, &self.s2);
            let [fl, fr, ft, fb] = &self.f;
            let frac = |i: usize, pipe: &[f32]| {
                let d1 = d1v[i];
                if d1 > 0.0 {
                    (pipe[i] * k.dt / d1).min(1.0)
                } else {
                    0.0
                }
            };
            self.s
                .par_chunks_mut(w)
                .zip(lost_rows.par_iter_mut())
                .enumerate()
                .for_each(|(y, (row, lost))| {
                    for (x, out) in row.iter_mut().enumerate() {
                        let i = y * w + x;
                        let fractions = [frac(i, fl), frac(i, fr), frac(i, ft), frac(i, fb)];
                        let leaving: f32 = fractions.iter().sum::<f32>().min(1.0);
                        let mut v = s1[i] * (1.0 - leaving);
                        let mut off_map = 0.0f32;
                        if x == 0 {
                            off_map += fractions[0];
                        }
                        if x + 1 == w {
                            off_map += fractions[1];
                        }
                        if y == 0 {
                            off_map += fractions[2];
                        }
                        if y + 1 == h {
                            off_map += fractions[3];
                        }
                        *lost += f64::from(s1[i] * off_map);
                        if x > 0 {
                            v += s1[i - 1] * frac(i - 1, fr);
                        }
                        if x + 1 < w {
                            v += s1[i + 1] * frac(i + 1, fl);
                        }
                        if y > 0 {
                            v += s1[i - w] * frac(i - w, fb);
                        }
                        if y + 1 < h {
                            v += s1[i + w] * frac(i + w, ft);
                        }
                        *out = v;
                    }
                });
        }
        self.exited += lost_rows.iter().sum::<f64>();
        let evaporate = (1.0 - k.ke * k.dt).max(0.0);
        self.d
            .par_iter_mut()
            .zip(self.d2.par_iter())
            .for_each(|(d, &d2)| *d = d2 * evaporate);
    }
}

/// Pipe-model hydraulic erosion.
pub struct PipeHydraulic;

impl Node for PipeHydraulic {
    type Params = PipeParams;
    const SPEC: NodeSpec = NodeSpec {
        id: "pipe_hydraulic_erosion",
        label: "Hydraulic erosion (pipe model)",
        category: Category::Erosion,
        version: 1,
        doc: "Shallow-water hydraulic erosion with virtual pipes (Mei et al. 2007, Šťava et al. 2008; cited in seed 000 §2.2): per step rain d += Δt·r (Eq. 1); flux through four pipes f ← max(0, f + Δt·A·g·Δh/l), scaled so no cell sends more than it holds (Eqs. 2–4); water and velocity from the net flux (Eqs. 5–9); capacity C = K_c·sin(α)·|v| (tilt floored at min_tilt), erosion K_s·(C − s) or deposition K_d·(s − C) (Eqs. 10–12); sediment carried with the outflowing water (conservative upwind transport instead of Mei's semi-Lagrangian Eq. 13, which loses mass); evaporation d ← d·(1 − K_e·Δt) (Eq. 14). Grid normalised as in the paper (l = A = 1, heights in cell units). Water and its sediment may leave through the map edge. Optional rain mask scales the rain. Outputs: height (with the suspended sediment settled), water depth, flow speed, erosion and deposition masks (each relative to its largest value).",
        inputs: &[
            PortSpec::height("in", "Terrain to erode."),
            PortSpec::mask("rain", "Where it rains (× rain); uniform when not connected.").optional(),
        ],
        outputs: &[
            PortSpec::height("out", "Eroded terrain."),
            PortSpec::mask("water", "Water depth after the last step, 1 = deepest."),
            PortSpec::mask("flow", "Flow speed of the last step, 1 = fastest."),
            PortSpec::mask("erosion", "Where the bed went down, 1 = deepest cut."),
            PortSpec::mask("deposition", "Where the bed went up, 1 = thickest deposit."),
        ],
    };

    fn eval(ctx: &EvalCtx, inputs: &Inputs, p: &PipeParams) -> Result<Vec<Field>, NodeError> {
        let src = inputs.required(0)?;
        let (w, h) = (src.width(), src.height());
        let cell = ctx.cell_size_m() as f32;
        let rain: Vec<f32> = inputs.get(1).map(|m| m.data().to_vec()).unwrap_or_default();
        let k = PipeSettings {
            dt: p.dt as f32,
            rain: p.rain as f32,
            g: p.g as f32,
            kc: p.kc as f32,
            ks: p.ks as f32,
            kd: p.kd as f32,
            ke: p.ke as f32,
            min_tilt: p.min_tilt as f32,
            friction: p.friction as f32,
        };
        let mut state = PipeState::new(src.data().iter().map(|v| v / cell).collect(), w, h);
        for it in 0..p.iterations {
            ctx.check_cancel()?;
            state.step(&k, &rain);
            ctx.report((it + 1) as f32 / p.iterations.max(1) as f32);
        }
        let size = || NodeError::Failed("size".into());
        let out: Vec<f32> = state
            .b
            .iter()
            .zip(&state.s)
            .map(|(b, s)| (b + s) * cell)
            .collect();
        let out = Field::from_vec(w, h, out).ok_or_else(size)?;
        let water = Field::from_vec(w, h, state.d).ok_or_else(size)?;
        let flow = Field::from_vec(w, h, state.speed).ok_or_else(size)?;
        let (wear, deposit) = super::change_masks(src, &out);
        Ok(vec![
            out,
            super::relative(water),
            super::relative(flow),
            wear,
            deposit,
        ])
    }
}
