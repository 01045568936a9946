//! `rivers`: a river network carved into the terrain, sized by its drainage area.

use super::flow_accumulation::Routes;
use super::{priority_flood, NONE};
use crate::field::Field;
use crate::node::{EvalCtx, Node, NodeError};
use rayon::prelude::*;

crate::params! {
    pub struct RiversParams {
        /// Drainage area where a river begins, in km².
        threshold_km2: f64 = float(1.0, [0.01, 100.0], [1.0e-6, 1.0e6], "km²") as "Threshold",
        /// Channel width where the drainage area is 10 km², in metres; it grows as the area^0.5
        /// (Leopold & Maddock 1953).
        width_m: f64 = float(20.0, [1.0, 200.0], [0.0, 1.0e5], "m") as "Width at 10 km²",
        /// Channel depth where the drainage area is 10 km², in metres; it grows as the area^0.4
        /// (Leopold & Maddock 1953).
        depth_m: f64 = float(2.0, [0.0, 20.0], [0.0, 1.0e4], "m") as "Depth at 10 km²",
        /// How far beyond the channel's edge the banks reach into the terrain, in metres.
        bank_width_m: f64 = float(30.0, [0.0, 300.0], [0.0, 1.0e5], "m") as "Bank width",
        /// Steepest slope of the banks, in degrees: higher terrain within bank_width_m is cut
        /// down to it.
        bank_slope_deg: f64 = float(25.0, [1.0, 80.0], [0.1, 89.0], "°") as "Bank slope",
        /// Rivers end where they reach the sea: no channel below sea_level_m.
        sea: bool = flag(false) as "Stop at the sea",
        /// Sea level, in metres (with `sea` on).
        sea_level_m: f64 = float(0.0, [-1000.0, 3000.0], [-1.0e6, 1.0e6], "m") as "Sea level",
    }
}

crate::node! {
    /// Carves a river network into the terrain, its rivers widening and deepening as they gather
    /// water.
    /// A river wherever the drainage area (as flow_accumulation computes it with d8 routing: over
    /// the priority-flooded terrain, Barnes, Lehman & Mulla 2014; times the optional rain mask)
    /// exceeds threshold_km2, except under lakes deeper than its channel and, with sea on, below
    /// sea_level_m (rivers end at the sea). Hydraulic geometry (Leopold & Maddock 1953,
    /// downstream): width = width_m · (A / 10 km²)^0.5, depth = depth_m · (A / 10 km²)^0.4. The
    /// water surface is the filled terrain's level, so it never rises downstream and rivers run
    /// through lakes to the map edge. Each river cell cuts a parabolic channel (its depth at the
    /// centre line, 0 at the banks) below that surface and banks rising at bank_slope_deg, fading
    /// out over bank_width_m; the terrain keeps the lower of itself and every cut. Outputs: out =
    /// the carved terrain, river = the share of each cell under a channel's water (antialiased, so
    /// the network covers the same area at every resolution), surface = the water surface on rivers
    /// and lakes, the carved terrain elsewhere. All sizes are in metres, so a river keeps its width
    /// at every resolution.
    pub struct Rivers {
        id: "rivers",
        label: "Rivers",
        category: Water,
        version: 1,
        params: RiversParams,
        inputs: RiversIn {
            /// Terrain the rivers run over.
            r#in: height,
            /// Rain per cell (1 = every square metre counts); uniform when not connected.
            rain: mask (optional),
        },
        outputs: RiversOut {
            /// The terrain with the river channels and banks carved in (m).
            out: height,
            /// Share of the cell under a river's water, in [0, 1].
            river: mask,
            /// Water surface on rivers and lakes; the carved terrain elsewhere (m).
            surface: height,
        },
    }
}

/// A river cell: its position, water surface, half width and depth (metres), and the length
/// of its step to the next cell downstream in cells (1 along a row or column, √2 diagonally).
#[derive(Clone, Copy, Debug)]
struct Reach {
    x: usize,
    y: usize,
    surface: f32,
    half_width: f64,
    depth: f64,
    step: f64,
}

impl Node for Rivers {
    /// The flood's levels and flat parents (2), receivers and counts (~2), the area (f64: 2).
    const SCRATCH_FIELDS: u32 = 6;

    fn eval(ctx: &EvalCtx, inputs: RiversIn, p: &RiversParams) -> Result<RiversOut, NodeError> {
        let src = inputs.r#in;
        let (w, h) = (src.width(), src.height());
        let z = src.data();
        let flood = priority_flood(z, w, h);
        ctx.check_cancel()?;
        let cell = ctx.cell_size_m();
        let routes = Routes::new(&flood, w, h, None);
        let area = routes.accumulate(cell * cell, inputs.rain.map(Field::data));
        ctx.check_cancel()?;
        let receivers = routes.receivers();
        let diagonal = |i: usize| {
            let r = receivers[i];
            r != NONE && r as usize % w != i % w && r as usize / w != i / w
        };
        let (out, river, surface) = finish(
            &Drainage {
                z,
                level: &flood.level,
                area: &area,
                diagonal: &diagonal,
            },
            (w, h),
            p,
            cell,
        );
        ctx.check_cancel()?;
        let size = || NodeError::Failed("internal error: field size".into());
        Ok(RiversOut {
            out: Field::from_vec(w, h, out).ok_or_else(size)?,
            river: Field::from_vec(w, h, river).ok_or_else(size)?,
            surface: Field::from_vec(w, h, surface).ok_or_else(size)?,
        })
    }
}

/// What a river network is carved from, over a window of the map: the terrain, its filled
/// level, each cell's drainage area (m²) and whether its step downstream is diagonal.
pub(super) struct Drainage<'a> {
    pub z: &'a [f32],
    pub level: &'a [f32],
    pub area: &'a [f64],
    pub diagonal: &'a (dyn Fn(usize) -> bool + Sync),
}

/// How far, in metres, a river draining at most `max_area` m² cuts into the terrain around
/// its centre line (half its width and the banks): what a window needs around the cells it
/// keeps to carve them as the whole map does.
pub(super) fn reach_m(p: &RiversParams, max_area: f64) -> f64 {
    0.5 * p.width_m * (max_area / 1.0e7).sqrt() + p.bank_width_m.max(0.0)
}

/// The carved terrain, the river coverage and the water surface over a `w × h` window: a
/// function of `d` on the window alone, so a window reaching [`reach_m`] past the cells it
/// keeps gives them the whole map's values.
pub(super) fn finish(
    d: &Drainage,
    (w, h): (usize, usize),
    p: &RiversParams,
    cell: f64,
) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    let (z, area) = (d.z, d.area);
    let threshold = p.threshold_km2 * 1.0e6;
    // A river cell: enough drainage area, and not under a lake deeper than its channel
    // (a shallow pit on its way is part of the channel).
    let reaches: Vec<Reach> = (0..w * h)
        .filter(|&i| area[i] >= threshold && !(p.sea && f64::from(z[i]) < p.sea_level_m))
        .filter_map(|i| {
            let q = area[i] / 1.0e7;
            let depth = p.depth_m * q.powf(0.4);
            (f64::from(d.level[i] - z[i]) <= depth).then(|| Reach {
                x: i % w,
                y: i / w,
                surface: d.level[i],
                half_width: 0.5 * p.width_m * q.sqrt(),
                depth,
                step: if (d.diagonal)(i) {
                    std::f64::consts::SQRT_2
                } else {
                    1.0
                },
            })
        })
        .collect();
    let carve = Carve {
        cell,
        bank: p.bank_width_m.max(0.0),
        bank_slope: p.bank_slope_deg.to_radians().tan(),
    };
    let (out, river) = carve.run(z, w, h, &reaches);
    // The water surface: the flood's level under rivers and lakes.
    let surface = out
        .iter()
        .zip(&river)
        .zip(d.level)
        .zip(z)
        .map(|(((&o, &r), &l), &z)| if r > 0.0 || l > z { l.max(o) } else { o })
        .collect();
    (out, river, surface)
}

/// Tile `k`'s outputs in a build run tile by tile: the drainage of [`super::tiled`] over the
/// tile and the reach of its largest river around it, finished as the whole map is.
pub(super) fn tile(
    job: &super::TileRun,
    hydrology: super::tiled::Hydrology,
    k: usize,
) -> Result<Vec<Field>, String> {
    use super::tiled::{AREA, LEVEL, RECEIVER};
    use crate::node::Params as _;
    let p = RiversParams::from_values(job.values);
    let t = job.tiling;
    let win = t.window(k);
    let margin = (reach_m(&p, hydrology.max_area_m2) / job.cell_m).ceil();
    let f = win.expand(margin.clamp(0.0, t.n as f64) as usize + 2, t.n);
    let (z, _) = (job.read)(f)?;
    let level: Vec<f32> = job.scratch.window(t, LEVEL, f)?;
    let unit = hydrology.unit_m2;
    let area: Vec<f64> = job
        .scratch
        .window::<u64>(t, AREA, f)?
        .iter()
        .map(|&a| a as f64 * unit)
        .collect();
    let receiver: Vec<u8> = job.scratch.window(t, RECEIVER, f)?;
    let diagonal = |i: usize| matches!(receiver[i], 0 | 2 | 5 | 7);
    let (out, river, surface) = finish(
        &Drainage {
            z: &z,
            level: &level,
            area: &area,
            diagonal: &diagonal,
        },
        (f.width, f.height),
        &p,
        job.cell_m,
    );
    [out, river, surface]
        .into_iter()
        .map(|v| {
            let field = Field::from_vec(f.width, f.height, v).ok_or("field size")?;
            Ok(f.crop(&field, &win))
        })
        .collect()
}

/// How a river cuts the terrain around it.
struct Carve {
    cell: f64,
    bank: f64,
    bank_slope: f64,
}

impl Carve {
    /// The carved terrain and the river coverage. Each output row gathers the reaches within
    /// reach of it (bucketed by row), so rows run in parallel and the result — a minimum and a
    /// maximum over the reaches — does not depend on their order.
    fn run(&self, z: &[f32], w: usize, h: usize, reaches: &[Reach]) -> (Vec<f32>, Vec<f32>) {
        let mut by_row: Vec<Vec<usize>> = vec![Vec::new(); h];
        let mut reach_cells = 0usize;
        for (k, r) in reaches.iter().enumerate() {
            by_row[r.y].push(k);
            reach_cells = reach_cells.max(((r.half_width + self.bank) / self.cell).ceil() as usize);
        }
        let mut out = z.to_vec();
        let mut river = vec![0.0f32; w * h];
        out.par_chunks_mut(w)
            .zip(river.par_chunks_mut(w))
            .enumerate()
            .for_each(|(y, (row, cover))| {
                let (y0, y1) = (y.saturating_sub(reach_cells), (y + reach_cells).min(h - 1));
                let terrain = &z[y * w..(y + 1) * w];
                for row_reaches in &by_row[y0..=y1] {
                    for &k in row_reaches {
                        self.apply(&reaches[k], y, terrain, row, cover);
                    }
                }
            });
        (out, river)
    }

    /// One reach's cut across row `y` of `terrain`, lowering `row` to it where it is lower:
    /// each cut is measured from the uncut terrain, so overlapping cuts give their minimum
    /// in any order.
    fn apply(&self, r: &Reach, y: usize, terrain: &[f32], row: &mut [f32], cover: &mut [f32]) {
        let extent = r.half_width + self.bank;
        let cells = (extent / self.cell).ceil() as usize;
        let dy = (y as f64 - r.y as f64) * self.cell;
        if dy.abs() > extent + self.cell {
            return;
        }
        let (x0, x1) = (r.x.saturating_sub(cells), (r.x + cells).min(row.len() - 1));
        let surface = f64::from(r.surface);
        for (x, ((v, c), &z)) in row[x0..=x1]
            .iter_mut()
            .zip(&mut cover[x0..=x1])
            .zip(&terrain[x0..=x1])
            .enumerate()
        {
            let dx = ((x0 + x) as f64 - r.x as f64) * self.cell;
            let d = (dx * dx + dy * dy).sqrt();
            // Coverage: the share of the cell's width, across the river, that lies within
            // the half width, times the river's length in the cell (its step downstream, √2
            // on a diagonal) — a one-cell ramp at the edges of a wide river, 2 · half width ·
            // step ÷ cell size for a river narrower than a cell, so a coarse preview's river
            // covers as much land as the finer build's.
            let half_cell = 0.5 * self.cell;
            let across = (d + half_cell).min(r.half_width) - (d - half_cell).max(-r.half_width);
            let share = (across * r.step / self.cell).clamp(0.0, 1.0) as f32;
            *c = c.max(share);
            let target = if d <= r.half_width {
                let t = if r.half_width > 0.0 {
                    d / r.half_width
                } else {
                    1.0
                };
                surface - r.depth * (1.0 - t * t)
            } else if d <= extent {
                surface + (d - r.half_width) * self.bank_slope
            } else {
                continue;
            };
            // Full cut up to the channel's edge, fading out across the banks.
            let fade = if d <= r.half_width || self.bank <= 0.0 {
                1.0
            } else {
                let t = (d - r.half_width) / self.bank;
                1.0 - t * t * (3.0 - 2.0 * t)
            };
            let z = f64::from(z);
            if target < z {
                *v = v.min((z - (z - target) * fade) as f32);
            }
        }
    }
}
