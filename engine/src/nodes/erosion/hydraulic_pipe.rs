//! `pipe_hydraulic_erosion`: shallow-water erosion with virtual pipes, after Mei, Decaudin &
//! Hu, *Fast Hydraulic Erosion Simulation and Visualization on GPU* (2007) and Šťava et al.
//! (2008), both cited in Lim, Tan & Bhojan 2022 §2.2 — the model Gaea and Hesiod users know as "hydraulic".
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
//! * Erosion never cuts a cell below its lowest neighbour (the rule E-DOG 2011 uses for
//!   droplets): without it a thin, fast film digs one-cell pits that trap water and deepen
//!   every step, and the surface turns to noise.
//! * Deposition never raises a cell above its highest neighbour (no sediment spikes).
//! * The fluxes are damped by `friction` (per unit of time) before each update: the plain
//!   pipe model carries undamped waves, which ring as circular ripples on steep terrain.
//! * Erosion and deposition are rates, scaled by Δt, so halving Δt and doubling the
//!   iterations simulates the same time.
//! * At the end, sediment still in suspension settles where it is.
//!
//! Layout: water, the four fluxes, velocity and sediment per cell in arrays with a ring of ghost
//! cells, updated by per-row vectorised kernels.

use super::levels::{self, Extra};
use crate::field::Field;
use crate::node::{EvalCtx, Node, NodeError};
use rayon::prelude::*;

levels::erosion_params! {
    pub struct PipeParams {
        /// Number of iterations (time steps of length dt).
        iterations: u32 = int(200, [10, 2000], [0, 100_000], ""),
        /// Time step Δt (Mei et al. use 0.02–0.05 on a unit grid; above about 0.25 the flux can oscillate).
        dt: f64 = float(0.05, [0.005, 0.2], [0.0001, 1.0], "s") as "Time step (Δt)",
        /// Rain r per unit of time, in cell units of water depth (× the rain mask when connected).
        rain: f64 = float(0.02, [0.0, 0.1], [0.0, 10.0], ""),
        /// Gravity g in the flux update.
        g: f64 = float(9.81, [1.0, 20.0], [0.0, 100.0], "") as "Gravity (g)",
        /// Sediment capacity constant K_c in C = K_c·sin(α)·|v|.
        kc: f64 = float(0.5, [0.01, 2.0], [0.0, 100.0], "") as "Capacity (K_c)",
        /// Dissolving constant K_s: fraction of the missing load eroded per step.
        ks: f64 = float(0.3, [0.0, 1.0], [0.0, 1.0], "") as "Dissolving (K_s)",
        /// Deposition constant K_d: fraction of the excess load deposited per step.
        kd: f64 = float(0.3, [0.0, 1.0], [0.0, 1.0], "") as "Deposition (K_d)",
        /// Evaporation constant K_e per unit of time.
        ke: f64 = float(0.5, [0.0, 5.0], [0.0, 1000.0], "") as "Evaporation (K_e)",
        /// Smallest sin(α) used in the capacity, so water on flats still carries sediment.
        min_tilt: f64 = float(0.05, [0.0, 0.3], [0.0, 1.0], ""),
        /// Flux damping per unit of time: f ← f·(1 − friction·Δt) before the pressure update. Not in Mei et al.; without it the pipes carry undamped shallow-water waves that ring as ripples on steep terrain.
        friction: f64 = float(10.0, [0.0, 40.0], [0.0, 1000.0], ""),
    }
    native: "Mei et al. 2007's model run once at the resolution being built (its time step is in cell units, so the result depends on the resolution).",
    finer: "Finer builds refine from it (a quarter of the iterations at each finer level), coarser previews average it.",
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

/// The state of a pipe-model simulation on a `w × h` grid. Fields are stored with a ring of
/// ghost cells (`(w + 2) × (h + 2)`, row-major) so every cell runs the same branch-free code:
/// ghost beds repeat the edge cell's bed (the ground outside is dry and level with the
/// edge), ghost water, flux and sediment are zero.
pub struct PipeState {
    pub w: usize,
    pub h: usize,
    /// Bed (terrain) height.
    b: Vec<f32>,
    /// Water depth.
    d: Vec<f32>,
    /// Suspended sediment.
    s: Vec<f32>,
    /// Outflow flux to the left, right, top (y − 1) and bottom (y + 1) neighbours.
    f: [Vec<f32>; 4],
    /// Speed |v| of the last step.
    speed: Vec<f32>,
    /// Total sediment carried off the map so far.
    pub exited: f64,
    // Scratch.
    d1: Vec<f32>,
    surface: Vec<f32>,
    /// Δt / d₁: the share of a cell's water one unit of flux carries in a step.
    inv: Vec<f32>,
    b2: Vec<f32>,
    d2: Vec<f32>,
    s2: Vec<f32>,
}

/// Below this mean depth (cell units) the water is too thin to have a meaningful velocity.
const MIN_DEPTH: f32 = 1e-3;

/// Step 2 for one row: `surface` = the water surface stencil (see `stencil`), `d1` the
/// cells' water; `f` = the four outflow fluxes (updated in place).
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
fn flux_row(k: &PipeSettings, damp: f32, surface: [&[f32]; 5], d1: &[f32], f: [&mut [f32]; 4]) {
    let [c, l, r, u, d] = surface;
    let w = c.len();
    let (l, r, u, d, d1) = (&l[..w], &r[..w], &u[..w], &d[..w], &d1[..w]);
    let [fl, fr, ft, fb] = f;
    let (fl, fr, ft, fb) = (&mut fl[..w], &mut fr[..w], &mut ft[..w], &mut fb[..w]);
    let gain = k.dt * k.g;
    for x in 0..w {
        let s = c[x];
        let a = (fl[x] * damp + gain * (s - l[x])).max(0.0);
        let b = (fr[x] * damp + gain * (s - r[x])).max(0.0);
        let t = (ft[x] * damp + gain * (s - u[x])).max(0.0);
        let o = (fb[x] * damp + gain * (s - d[x])).max(0.0);
        let total = (a + b + t + o) * k.dt;
        let scale = if total > d1[x] && total > 0.0 {
            d1[x] / total
        } else {
            1.0
        };
        fl[x] = a * scale;
        fr[x] = b * scale;
        ft[x] = t * scale;
        fb[x] = o * scale;
    }
}

/// `w` cells of a padded field starting at index `i`.
#[inline]
fn row(v: &[f32], i: usize, w: usize) -> &[f32] {
    &v[i..i + w]
}

/// The five-point stencil of a row of a padded field (`pw` wide) whose first cell is at
/// `c`: the cells, their left, right, upper and lower neighbours.
#[inline]
fn stencil(v: &[f32], c: usize, pw: usize, w: usize) -> [&[f32]; 5] {
    [
        row(v, c, w),
        row(v, c - 1, w),
        row(v, c + 1, w),
        row(v, c - pw, w),
        row(v, c + pw, w),
    ]
}

/// What steps 3–5 read for one row.
struct WaterIn<'a> {
    /// The cells' own fluxes: left, right, top, bottom.
    own: [&'a [f32]; 4],
    /// The fluxes towards the cells: the left neighbour's right pipe, the right neighbour's
    /// left pipe, the upper neighbour's bottom pipe, the lower neighbour's top pipe.
    incoming: [&'a [f32]; 4],
    /// Beds of the cells and of their left, right, upper and lower neighbours.
    bed: [&'a [f32]; 5],
    d1: &'a [f32],
    s: &'a [f32],
}

/// Steps 3–5 for one row (Eqs. 5–12): water, velocity, capacity, erosion or deposition.
/// `out` = new bed, new water, new suspended sediment, speed, Δt/d₁.
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
fn water_row(k: &PipeSettings, inp: &WaterIn, out: [&mut [f32]; 5]) {
    let w = inp.d1.len();
    let [fl, fr, ft, fb] = inp.own.map(|v| &v[..w]);
    let [from_l, from_r, from_u, from_d] = inp.incoming.map(|v| &v[..w]);
    let [bc, bl, br, bu, bd] = inp.bed.map(|v| &v[..w]);
    let (d1, sv) = (&inp.d1[..w], &inp.s[..w]);
    let [b2, d2, s2, speed, inv] = out;
    let (b2, d2, s2, speed, inv) = (
        &mut b2[..w],
        &mut d2[..w],
        &mut s2[..w],
        &mut speed[..w],
        &mut inv[..w],
    );
    for x in 0..w {
        let inflow = from_l[x] + from_r[x] + from_u[x] + from_d[x];
        let own = fl[x] + fr[x] + ft[x] + fb[x];
        let dn = (d1[x] + k.dt * (inflow - own)).max(0.0);
        let wx = 0.5 * (from_l[x] - fl[x] + fr[x] - from_r[x]);
        let wy = 0.5 * (from_u[x] - ft[x] + fb[x] - from_d[x]);
        let mean = 0.5 * (d1[x] + dn);
        let v = if mean > MIN_DEPTH {
            (wx * wx + wy * wy).sqrt() / mean
        } else {
            0.0
        };
        let gx = 0.5 * (br[x] - bl[x]);
        let gy = 0.5 * (bd[x] - bu[x]);
        let tan2 = gx * gx + gy * gy;
        let sin = (tan2 / (1.0 + tan2)).sqrt().max(k.min_tilt);
        let capacity = k.kc * sin * v;
        let (bed, sed) = (bc[x], sv[x]);
        // Never cut below the lowest neighbour (a pit would trap the water and deepen
        // itself every step), never raise above the highest.
        let lowest = bl[x].min(br[x]).min(bu[x]).min(bd[x]);
        let highest = bl[x].max(br[x]).max(bu[x]).max(bd[x]);
        let erode = (k.dt * k.ks * (capacity - sed)).min((bed - lowest).max(0.0));
        let deposit = (k.dt * k.kd * (sed - capacity)).min((highest - bed).max(0.0));
        let change = if capacity > sed { -erode } else { deposit };
        b2[x] = bed + change;
        s2[x] = sed - change;
        d2[x] = dn;
        speed[x] = v;
        inv[x] = if d1[x] > 0.0 { k.dt / d1[x] } else { 0.0 };
    }
}

/// What step 6 reads for one row: suspended sediment and Δt/d₁ of the cells and of their
/// left, right, upper and lower neighbours; the cells' own four fluxes; the neighbours'
/// fluxes towards the cells (as in `WaterIn::incoming`).
struct SedimentIn<'a> {
    s1: [&'a [f32]; 5],
    inv: [&'a [f32]; 5],
    own: [&'a [f32]; 4],
    towards: [&'a [f32]; 4],
}

/// Step 6 for one row: each cell keeps the share of its sediment whose water stays and gains
/// its neighbours' sediment in the share of their water that flows to it.
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
fn sediment_row(inp: &SedimentIn, out: &mut [f32]) {
    let w = out.len();
    let [s, sl, sr, su, sd] = inp.s1.map(|v| &v[..w]);
    let [i0, il, ir, iu, id] = inp.inv.map(|v| &v[..w]);
    let [fl, fr, ft, fb] = inp.own.map(|v| &v[..w]);
    let [tl, tr, tu, td] = inp.towards.map(|v| &v[..w]);
    for x in 0..w {
        let share = |f: f32, inv: f32| (f * inv).min(1.0);
        let leaving =
            (share(fl[x], i0[x]) + share(fr[x], i0[x]) + share(ft[x], i0[x]) + share(fb[x], i0[x]))
                .min(1.0);
        out[x] = s[x] * (1.0 - leaving)
            + sl[x] * share(tl[x], il[x])
            + sr[x] * share(tr[x], ir[x])
            + su[x] * share(tu[x], iu[x])
            + sd[x] * share(td[x], id[x]);
    }
}

impl PipeState {
    /// A dry grid with bed `b` (`w × h`, row-major).
    #[must_use]
    pub fn new(b: Vec<f32>, w: usize, h: usize) -> Self {
        let n = (w + 2) * (h + 2);
        let mut state = Self {
            w,
            h,
            b: vec![0.0; n],
            d: vec![0.0; n],
            s: vec![0.0; n],
            f: std::array::from_fn(|_| vec![0.0; n]),
            speed: vec![0.0; n],
            exited: 0.0,
            d1: vec![0.0; n],
            surface: vec![0.0; n],
            inv: vec![0.0; n],
            b2: vec![0.0; n],
            d2: vec![0.0; n],
            s2: vec![0.0; n],
        };
        let pw = w + 2;
        for (y, row) in b.chunks_exact(w.max(1)).enumerate().take(h) {
            state.b[(y + 1) * pw + 1..(y + 1) * pw + 1 + w].copy_from_slice(row);
        }
        state.b2.clone_from(&state.b);
        state
    }

    /// Index ranges of the map's rows in a padded field (the ghost ring left out).
    fn interior_rows(&self) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
        let pw = self.w + 2;
        (0..self.h).map(move |y| (y + 1) * pw + 1..(y + 1) * pw + 1 + self.w)
    }

    /// A padded field without its ghost ring.
    fn inner(&self, v: &[f32]) -> Vec<f32> {
        self.interior_rows()
            .flat_map(|r| v[r].iter().copied())
            .collect()
    }

    /// Terrain + suspended sediment on the map + sediment that left it, and the sum of
    /// absolute bed heights (the scale to judge a change of the first against).
    #[must_use]
    pub fn mass(&self) -> (f64, f64) {
        let (mut total, mut scale) = (self.exited, 0.0f64);
        for r in self.interior_rows() {
            for (&b, &s) in self.b[r.clone()].iter().zip(&self.s[r]) {
                total += f64::from(b) + f64::from(s);
                scale += f64::from(b.abs()) + f64::from(s.abs());
            }
        }
        (total, scale)
    }

    /// Bed heights (`w × h`).
    #[must_use]
    pub fn bed(&self) -> Vec<f32> {
        self.inner(&self.b)
    }

    /// Water depths (`w × h`).
    #[must_use]
    pub fn water(&self) -> Vec<f32> {
        self.inner(&self.d)
    }

    /// Suspended sediment (`w × h`).
    #[must_use]
    pub fn sediment(&self) -> Vec<f32> {
        self.inner(&self.s)
    }

    /// Flow speed of the last step (`w × h`).
    #[must_use]
    pub fn flow_speed(&self) -> Vec<f32> {
        self.inner(&self.speed)
    }

    /// Ghost beds repeat the edge cells' beds.
    fn refresh_ghost_beds(&mut self) {
        let (w, h, pw) = (self.w, self.h, self.w + 2);
        let b = &mut self.b;
        for y in 1..=h {
            b[y * pw] = b[y * pw + 1];
            b[y * pw + w + 1] = b[y * pw + w];
        }
        let (top, rest) = b.split_at_mut(pw);
        top.copy_from_slice(&rest[..pw]);
        let last = (h + 1) * pw;
        let (body, bottom) = b.split_at_mut(last);
        bottom.copy_from_slice(&body[last - pw..]);
    }

    /// One time step. `rain` is the per-cell rain factor (`w × h`, or empty for uniform rain).
    #[expect(clippy::too_many_lines)]
    pub fn step(&mut self, k: &PipeSettings, rain: &[f32]) {
        let (w, h, pw) = (self.w, self.h, self.w + 2);
        self.refresh_ghost_beds();
        let per_step = k.dt * k.rain;
        let damp = (1.0 - k.friction * k.dt).max(0.0);
        // Step 1 (Eq. 1): d₁ = d + Δt·r, and the water surface b + d₁ (ghosts: d₁ = 0).
        {
            let (b, d) = (&self.b, &self.d);
            self.d1
                .par_chunks_mut(pw)
                .zip(self.surface.par_chunks_mut(pw))
                .enumerate()
                .for_each(|(py, (d1, surf))| {
                    let base = py * pw;
                    if py == 0 || py == h + 1 {
                        d1.fill(0.0);
                        surf.copy_from_slice(&b[base..base + pw]);
                        return;
                    }
                    let y = py - 1;
                    let rain_row = rain.get(y * w..(y + 1) * w);
                    for x in 0..pw {
                        let i = base + x;
                        let r = if x == 0 || x == w + 1 {
                            -1.0
                        } else {
                            rain_row.map_or(1.0, |row| row[x - 1])
                        };
                        d1[x] = if r < 0.0 { 0.0 } else { d[i] + per_step * r };
                        surf[x] = b[i] + d1[x];
                    }
                });
        }
        // Step 2 (Eqs. 2–4): outflow flux through the four pipes, scaled so no cell sends
        // more water than it holds.
        {
            let (surf, d1v) = (&self.surface, &self.d1);
            let [fl, fr, ft, fb] = &mut self.f;
            fl.par_chunks_mut(pw)
                .zip(fr.par_chunks_mut(pw))
                .zip(ft.par_chunks_mut(pw).zip(fb.par_chunks_mut(pw)))
                .enumerate()
                .filter(|(py, _)| *py >= 1 && *py <= h)
                .for_each(|(py, ((fl, fr), (ft, fb)))| {
                    let c = py * pw + 1;
                    flux_row(
                        k,
                        damp,
                        stencil(surf, c, pw, w),
                        row(d1v, c, w),
                        [
                            &mut fl[1..=w],
                            &mut fr[1..=w],
                            &mut ft[1..=w],
                            &mut fb[1..=w],
                        ],
                    );
                });
        }
        // Steps 3–5 (Eqs. 5–12): water, velocity, erosion and deposition.
        {
            let (b, d1v, s) = (&self.b, &self.d1, &self.s);
            let [fl, fr, ft, fb] = &self.f;
            self.b2
                .par_chunks_mut(pw)
                .zip(self.d2.par_chunks_mut(pw))
                .zip(self.s2.par_chunks_mut(pw))
                .zip(
                    self.speed
                        .par_chunks_mut(pw)
                        .zip(self.inv.par_chunks_mut(pw)),
                )
                .enumerate()
                .filter(|(py, _)| *py >= 1 && *py <= h)
                .for_each(|(py, (((b2, d2), s2), (speed, inv)))| {
                    let c = py * pw + 1;
                    water_row(
                        k,
                        &WaterIn {
                            own: [row(fl, c, w), row(fr, c, w), row(ft, c, w), row(fb, c, w)],
                            incoming: [
                                row(fr, c - 1, w),
                                row(fl, c + 1, w),
                                row(fb, c - pw, w),
                                row(ft, c + pw, w),
                            ],
                            bed: stencil(b, c, pw, w),
                            d1: row(d1v, c, w),
                            s: row(s, c, w),
                        },
                        [
                            &mut b2[1..=w],
                            &mut d2[1..=w],
                            &mut s2[1..=w],
                            &mut speed[1..=w],
                            &mut inv[1..=w],
                        ],
                    );
                });
        }
        std::mem::swap(&mut self.b, &mut self.b2);
        // Step 6: sediment leaves with the share of the water each pipe carries (ghost
        // sediment is zero, so nothing comes in from outside).
        {
            let (inv, s1) = (&self.inv, &self.s2);
            let [fl, fr, ft, fb] = &self.f;
            let frac = |i: usize, pipe: &[f32]| (pipe[i] * inv[i]).min(1.0);
            self.s
                .par_chunks_mut(pw)
                .enumerate()
                .filter(|(py, _)| *py >= 1 && *py <= h)
                .for_each(|(py, out)| {
                    let c = py * pw + 1;
                    sediment_row(
                        &SedimentIn {
                            s1: stencil(s1, c, pw, w),
                            inv: stencil(inv, c, pw, w),
                            own: [row(fl, c, w), row(fr, c, w), row(ft, c, w), row(fb, c, w)],
                            towards: [
                                row(fr, c - 1, w),
                                row(fl, c + 1, w),
                                row(fb, c - pw, w),
                                row(ft, c + pw, w),
                            ],
                        },
                        &mut out[1..=w],
                    );
                });
            // What crossed the map edge.
            let mut lost = 0.0f64;
            for y in 0..h {
                let (first, last) = ((y + 1) * pw + 1, (y + 1) * pw + w);
                lost += f64::from(s1[first] * frac(first, fl) + s1[last] * frac(last, fr));
            }
            for x in 1..=w {
                let (top, bottom) = (pw + x, h * pw + x);
                lost += f64::from(s1[top] * frac(top, ft) + s1[bottom] * frac(bottom, fb));
            }
            self.exited += lost;
        }
        // Step 7 (Eq. 14): evaporation.
        let evaporate = (1.0 - k.ke * k.dt).max(0.0);
        self.d
            .par_iter_mut()
            .zip(self.d2.par_iter())
            .for_each(|(d, &d2)| *d = d2 * evaporate);
    }
}

crate::node! {
    /// Rainwater flows over the terrain as a shallow sheet, cutting channels and laying sediment
    /// where it slows.
    /// Shallow-water hydraulic erosion with virtual pipes (Mei et al. 2007, Šťava et al. 2008;
    /// cited in Lim, Tan & Bhojan 2022 §2.2): per step rain d += Δt·r (Eq. 1); flux through four
    /// pipes f ← max(0, f + Δt·A·g·Δh/l), scaled so no cell sends more than it holds (Eqs. 2–4);
    /// water and velocity from the net flux (Eqs. 5–9); capacity C = K_c·sin(α)·|v| (tilt floored
    /// at min_tilt), erosion K_s·(C − s) or deposition K_d·(s − C) (Eqs. 10–12); sediment carried
    /// with the outflowing water (conservative upwind transport instead of Mei's semi-Lagrangian
    /// Eq. 13, which loses mass); evaporation d ← d·(1 − K_e·Δt) (Eq. 14). Grid normalised as in
    /// the paper (l = A = 1, heights in cell units). Water and its sediment may leave through the
    /// map edge. Optional rain mask scales the rain. Outputs: height (with the suspended sediment
    /// settled), water depth, flow speed, erosion and deposition masks (each relative to its
    /// largest value). Resolution: by default (detail = consistent) the process runs in full at
    /// base_resolution (256²), where every parameter means what it does in Mei et al. 2007, and a
    /// finer build adds only detail below those cells (a quarter of the iterations at each
    /// doubling, its drift over the coarser cells taken out), so a preview and a build show the
    /// same terrain (orogen parity); detail = native runs it once at the resolution being built.
    pub struct PipeHydraulic {
        id: "pipe_hydraulic_erosion",
        label: "Hydraulic erosion (pipe model)",
        category: Erosion,
        version: 3,
        params: PipeParams,
        inputs: PipeHydraulicIn {
            /// Terrain to erode.
            r#in: height,
            /// Where it rains (× rain); uniform when not connected.
            rain: mask (optional),
        },
        outputs: PipeHydraulicOut {
            /// Eroded terrain.
            out: height,
            /// Water depth after the last step, 1 = deepest.
            water: mask,
            /// Flow speed of the last step, 1 = fastest.
            flow: mask,
            /// Where the bed went down, 1 = deepest cut.
            erosion: mask,
            /// Where the bed went up, 1 = thickest deposit.
            deposition: mask,
        },
    }
}

impl Node for PipeHydraulic {
    const TILE_REFINE: Option<crate::node::TileRefineFn> = levels::tile::<Self>();
    /// The peak RSS measured at 1024², in fields, rounded up (docs/reliability.md).
    // + 4 for the coarse-to-fine levels at the target size (start, change, drift, delta).
    const SCRATCH_FIELDS: u32 = 13 + 4;

    fn eval(
        ctx: &EvalCtx,
        inputs: PipeHydraulicIn,
        p: &PipeParams,
    ) -> Result<PipeHydraulicOut, NodeError> {
        levels::evaluate::<Self>(ctx, inputs, p)
    }
}

impl levels::Multiscale for PipeHydraulic {
    const SCHEDULE: levels::Schedule = levels::Schedule::Doubling;
    const EXTRA: &'static [Extra] = &[Extra::State, Extra::State, Extra::Wear, Extra::Deposit];

    fn resolution(p: &PipeParams) -> (levels::Detail, usize) {
        (p.detail, p.base_resolution as usize)
    }

    fn native(
        ctx: &EvalCtx,
        inputs: PipeHydraulicIn,
        p: &PipeParams,
    ) -> Result<PipeHydraulicOut, NodeError> {
        native(ctx, inputs, p)
    }

    /// Refinement: a quarter of the iterations at each finer level.
    fn refine(p: &PipeParams, _previous: usize) -> PipeParams {
        PipeParams {
            iterations: (p.iterations / 4).max(1),
            ..p.clone()
        }
    }
}

/// The process run once at the context's resolution (`detail = native`, and each level of
/// the consistent mode).
fn native(
    ctx: &EvalCtx,
    inputs: PipeHydraulicIn,
    p: &PipeParams,
) -> Result<PipeHydraulicOut, NodeError> {
    let src = inputs.r#in;
    let (w, h) = (src.width(), src.height());
    let cell = ctx.cell_size_m() as f32;
    let rain: Vec<f32> = inputs.rain.map(|m| m.data().to_vec()).unwrap_or_default();
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
    let (start, scale) = state.mass();
    let tolerance = 1e-3 * (scale + (w * h) as f64);
    for it in 0..p.iterations {
        ctx.check_cancel()?;
        state.step(&k, &rain);
        ctx.report((it + 1) as f32 / p.iterations.max(1) as f32);
        // The scheme conserves material; when it does not any more, it has gone unstable
        // (extreme Δt·g, K_c, K_s together — found by the random-graph test) and every
        // further step makes the terrain more wrong. Refuse instead of returning it.
        if it % 16 == 15 || it + 1 == p.iterations {
            let (now, _) = state.mass();
            if !now.is_finite() || (now - start).abs() > tolerance {
                return Err(NodeError::Failed(format!(
                        "the pipe model became unstable after {} iterations (material is no longer conserved); \
                         lower dt (now {}), g, kc or ks",
                        it + 1,
                        p.dt
                    )));
            }
        }
    }
    let size = || NodeError::shape(w, h);
    let out: Vec<f32> = state
        .bed()
        .iter()
        .zip(&state.sediment())
        .map(|(b, s)| (b + s) * cell)
        .collect();
    let out = Field::from_vec(w, h, out).ok_or_else(size)?;
    let water = Field::from_vec(w, h, state.water()).ok_or_else(size)?;
    let flow = Field::from_vec(w, h, state.flow_speed()).ok_or_else(size)?;
    let (wear, deposit) = super::change_masks(src, &out);
    Ok(PipeHydraulicOut {
        out,
        water: super::relative(water),
        flow: super::relative(flow),
        erosion: wear,
        deposition: deposit,
    })
}
