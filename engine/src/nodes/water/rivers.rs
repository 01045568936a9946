//! `rivers`: a river network carved into the terrain, sized by its drainage area.

use super::flow_accumulation::Routes;
use super::{priority_flood, NONE};
use crate::field::blur::gaussian_at;
use crate::field::Field;
use crate::node::{EvalCtx, Node, NodeError};
use crate::nodes::mask::terrain_masks::measured_over;
use rayon::prelude::*;

/// What a negative `scale_m` (the default, "auto") routes the water over: the terrain smoothed
/// over a 128th of the world's side, two cells of a 256² preview. On a gentle valley floor a
/// finer grid resolves bumps a coarser one does not, and single-direction routes follow them;
/// over the smoothed terrain a river takes the same way at every resolution (the figures:
/// docs/perf-log.md, "rivers over the smoothed terrain").
pub(crate) const ROUTE_AUTO_PARTS: f64 = 128.0;

/// The largest share of the world's side the water is routed over: past it rivers would
/// follow little of the terrain, and a tile run tile by tile would read most of the map.
const ROUTE_MOST_PARTS: f64 = 32.0;

/// The σ, in cells of `cell_m`, of the Gaussian the water is routed over (0: the grid's own
/// cells), on a world `world_m` across.
fn routing_sigma_px(p: &RiversParams, world_m: f64, cell_m: f64) -> f64 {
    let scale = measured_over(p.scale_m, world_m, ROUTE_AUTO_PARTS).min(world_m / ROUTE_MOST_PARTS);
    scale / 2.0 / cell_m
}

/// Each cell's water surface along single-direction routes (`receiver`, [`NONE`]: none): the
/// lowest filled `level` of the cell and of every cell whose water passes through it. Routes
/// over a smoothed terrain may climb a bump of the real one; the water does not, so a river's
/// surface never rises downstream. Where the routes follow the filled level itself, it is that
/// level. A minimum does not depend on the order it is taken in, so tiles give the same bits
/// ([`SurfaceRule`]).
fn lowest_on_the_way(level: &[f32], receiver: &[u32]) -> Vec<f32> {
    let mut pending = vec![0u8; level.len()];
    for &r in receiver.iter().filter(|&&r| r != NONE) {
        pending[r as usize] += 1;
    }
    let mut surface = level.to_vec();
    super::flow_accumulation::down_the_routes(receiver, pending, &mut surface, f32::min);
    surface
}

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
        /// Distance over which rivers find their way, in metres: the water is routed over the terrain smoothed by a Gaussian of σ = scale_m / 2 (at most a 32nd of the world's side), so the network follows the same valleys at every resolution. −1 (auto, the default): a 128th of the world's side; 0: the grid's own cells (rivers then follow detail only a finer build holds, and move with the resolution).
        scale_m: f64 = float(-1.0, [-1.0, 1000.0], [-1.0, 1.0e7], "m") as "Routing scale",
    }
}

crate::node! {
    /// Carves a river network into the terrain, its rivers widening and deepening as they gather
    /// water.
    /// A river wherever the drainage area (single-direction routes over the priority-flooded terrain,
    /// Barnes, Lehman & Mulla 2014; times the optional rain mask) exceeds threshold_km2, except under
    /// lakes deeper than its channel and, with sea on, below sea_level_m (rivers end at the sea). The
    /// water is routed over the terrain smoothed over scale_m (by default a 128th of the world's side),
    /// so a river takes the same way across a gentle valley floor at every resolution instead of
    /// following whichever small bumps the grid resolves, in D8-LTD steps (Orlandini et al. 2003, least
    /// transversal deviation) that follow the smoothed terrain's flow lines rather than the grid's
    /// eight directions; with scale_m 0, flow_accumulation's d8 routes over the terrain itself.
    /// Hydraulic geometry (Leopold & Maddock 1953, downstream): width = width_m · (A / 10 km²)^0.5,
    /// depth = depth_m · (A / 10 km²)^0.4. The water surface is the filled terrain's level, lowered to
    /// the lowest level upstream on the river's way, so it never rises downstream and rivers run
    /// through lakes to the map edge. Each river cell cuts a parabolic channel (its depth at the centre
    /// line, 0 at the banks) below that surface and banks rising at bank_slope_deg, fading out over
    /// bank_width_m; the terrain keeps the lower of itself and every cut. Outputs: out = the carved
    /// terrain, river = the share of each cell under a channel's water (antialiased, so the network
    /// covers the same area at every resolution), surface = the water surface on rivers and lakes, the
    /// carved terrain elsewhere. All sizes are in metres, so a river keeps its width at every
    /// resolution.
    pub struct Rivers {
        id: "rivers",
        label: "Rivers",
        category: Water,
        version: 2,
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
    /// The flood's levels and flat parents (2), receivers and counts (~2), the area (f64: 2);
    /// routing over the smoothed terrain: that terrain, its flood's levels and receivers, the
    /// water surface (4).
    const SCRATCH_FIELDS: u32 = 10;

    fn eval(ctx: &EvalCtx, inputs: RiversIn, p: &RiversParams) -> Result<RiversOut, NodeError> {
        let src = inputs.r#in;
        let (w, h) = (src.width(), src.height());
        let z = src.data();
        let flood = priority_flood(z, w, h);
        ctx.check_cancel()?;
        let cell = ctx.cell_size_m();
        let sigma = routing_sigma_px(p, ctx.world.size_m, cell);
        let smoothed = (sigma > 0.0).then(|| {
            let mut routed = priority_flood(gaussian_at(src, sigma, ctx.origin()).data(), w, h);
            routed.receiver = super::ltd::receivers(&routed.level, &routed.receiver, w, h).0;
            let surface = lowest_on_the_way(&flood.level, &routed.receiver);
            (routed, surface)
        });
        ctx.check_cancel()?;
        let (routed, surface) = match &smoothed {
            Some((routed, surface)) => (routed, surface.as_slice()),
            None => (&flood, flood.level.as_slice()),
        };
        let routes = Routes::new(routed, w, h, None);
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
                surface,
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
/// level, the water surface along the routes (the filled level, lowered to the lowest on the
/// way: [`lowest_on_the_way`]), each cell's drainage area (m²) and whether its step downstream
/// is diagonal.
pub(super) struct Drainage<'a> {
    pub z: &'a [f32],
    pub level: &'a [f32],
    pub surface: &'a [f32],
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
                surface: d.surface[i],
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
    // The water surface: the river's surface under rivers, the flood's level under lakes.
    let surface = out
        .iter()
        .zip(&river)
        .zip(d.level.iter().zip(d.surface))
        .zip(z)
        .map(|(((&o, &r), (&l, &s)), &z)| {
            if r > 0.0 {
                s.max(o)
            } else if l > z {
                l.max(o)
            } else {
                o
            }
        })
        .collect();
    (out, river, surface)
}

/// Scratch field of a tiled run routed over the smoothed terrain: the real terrain's filled
/// level (the routes' own flood then holds [`super::tiled::LEVEL`]).
const TERRAIN_LEVEL: &str = "rivers-terrain-level";
/// Scratch field: the water surface along the routes ([`lowest_on_the_way`]; f64 bits).
const SURFACE: &str = "rivers-surface";

/// `rivers` run tile by tile (`super::tiled`): the real terrain's flood; the flood, routes and
/// drainage of the terrain smoothed over `scale_m` (each tile smoothed with the halo the
/// Gaussian reaches, so it holds the whole map's values); the water surface along the routes,
/// swept over the tiles (`super::sweep`); then each tile finished as the whole map is. The very
/// bits of the whole-map run.
pub(super) fn tiled(
    run: &super::TileRun,
    emit: &mut dyn FnMut(usize, Vec<Field>) -> Result<(), String>,
) -> Result<(), String> {
    use super::tiled::{drainage, fill_levels, hydrology, levels_and_receivers, LEVEL, RECEIVER};
    use crate::node::Params as _;
    let p = RiversParams::from_values(run.values);
    let t = run.tiling;
    let area = run.cell_m * run.cell_m;
    let sigma = routing_sigma_px(&p, run.world.size_m, run.cell_m);
    let found = if sigma > 0.0 {
        fill_levels(t, run.scratch, run.read, run.cancelled)?;
        for k in 0..t.count() {
            let level: Vec<f32> = run.scratch.get(t, k, LEVEL)?;
            run.scratch.put(k, TERRAIN_LEVEL, &level)?;
        }
        let halo = crate::field::blur::support_px(sigma);
        let smoothed = |win: crate::node::Window| {
            let big = win.expand(halo, t.n);
            let (z, rain) = (run.read)(big)?;
            let field = |v: Vec<f32>| Field::from_vec(big.width, big.height, v).ok_or("field size");
            let z = gaussian_at(&field(z)?, sigma, (big.x0, big.y0));
            let rain = rain.map(|r| field(r).map(|f| big.crop(&f, &win).into_vec()));
            Ok((big.crop(&z, &win).into_vec(), rain.transpose()?))
        };
        let check = || run.check();
        levels_and_receivers(t, run.scratch, &smoothed, &check)?;
        super::sweep::sweep(t, run.scratch, ROUTE, &LtdRule { run }, &check)?;
        for k in 0..t.count() {
            let packed: Vec<u64> = run.scratch.get(t, k, ROUTE)?;
            let codes: Vec<u8> = packed.iter().map(|&v| super::ltd::unpack(v).1).collect();
            run.scratch.put(k, RECEIVER, &codes)?;
        }
        run.scratch.remove(t, ROUTE);
        // The drainage reads only the rain, which smoothing leaves alone.
        let found = drainage(t, run.scratch, run.read, area, &check)?;
        super::sweep::sweep(t, run.scratch, SURFACE, &SurfaceRule { run }, &check)?;
        found
    } else {
        hydrology(t, run.scratch, run.read, area, run.cancelled)?
    };
    for k in 0..t.count() {
        run.check()?;
        emit(k, tile(run, &p, found, sigma > 0.0, k)?)?;
    }
    run.scratch.remove(t, TERRAIN_LEVEL);
    run.scratch.remove(t, SURFACE);
    Ok(())
}

/// Scratch field: each cell's D8-LTD step and deviation ([`LtdRule`]).
const ROUTE: &str = "rivers-route";

/// How the D8-LTD routes ([`super::ltd`]) are swept over the tiles: each cell is routed once
/// every neighbour that may send it water is, from what those routed into it bring. A cell's value is its
/// route [`packed`](super::ltd::pack).
struct LtdRule<'a, 'b> {
    run: &'a super::TileRun<'b>,
}

/// What [`LtdRule`] reads over a window: its size, the smoothed terrain's filled level and the
/// flood's receivers (kept where no facet falls away).
struct LtdData {
    w: usize,
    h: usize,
    level: Vec<f32>,
    flood: Vec<u8>,
}

/// Whether step `code` (a [`D8`](crate::nodes::erosion::flow::D8) index; 8 or more: none)
/// takes cell `i` of a window `w` cells wide to its cell `j`.
fn steps_to(w: usize, i: usize, code: u8, j: usize) -> bool {
    super::tiled::follow(i % w, i / w, code) == Some((j % w, j / w))
}

impl super::sweep::Pull for LtdRule<'_, '_> {
    type Data = LtdData;

    fn load(&self, e: crate::node::Window) -> Result<LtdData, String> {
        let t = self.run.tiling;
        Ok(LtdData {
            w: e.width,
            h: e.height,
            level: self.run.scratch.window(t, super::tiled::LEVEL, e)?,
            flood: self.run.scratch.window(t, super::tiled::RECEIVER, e)?,
        })
    }

    fn sends(&self, d: &LtdData, i: usize, j: usize) -> bool {
        // `ltd::may_send`, the flood's step decoded only between cells level with each other.
        let (from, to) = (d.level[i], d.level[j]);
        from > to || (from == to && steps_to(d.w, i, d.flood[i], j))
    }

    fn pull(&self, d: &LtdData, c: usize, known: impl Fn(usize) -> f64) -> f64 {
        let (x, y) = (c % d.w, c / d.w);
        let (inflow, upstream) = super::ltd::inflow(x, y, d.w, d.h, |i| {
            if d.level[i] < d.level[c] {
                return None;
            }
            let (cells, code, deviation) = super::ltd::unpack(known(i).to_bits());
            steps_to(d.w, i, code, c).then_some((deviation, cells))
        });
        let at = |dx: i32, dy: i32| {
            let (nx, ny) = (x as i64 + i64::from(dx), y as i64 + i64::from(dy));
            (nx >= 0 && ny >= 0 && (nx as usize) < d.w && (ny as usize) < d.h)
                .then(|| d.level[ny as usize * d.w + nx as usize])
        };
        let (code, deviation) =
            super::ltd::step(d.level[c], inflow, at).unwrap_or((d.flood[c], 0.0));
        let cells = upstream.saturating_add(1).min(super::ltd::MOST_CELLS);
        // The sweep keeps values as f64 bits; a packed route may read as a NaN, whose bits
        // `from_bits` and `to_bits` carry unchanged on the targets built (x86-64, AArch64).
        f64::from_bits(super::ltd::pack(cells, code, deviation))
    }
}

/// How [`lowest_on_the_way`] is swept over the tiles: each cell pulls the lowest of its own
/// filled level and the surfaces of the cells routed into it.
struct SurfaceRule<'a, 'b> {
    run: &'a super::TileRun<'b>,
}

/// What [`SurfaceRule`] reads over a window: its width, the real terrain's filled level and
/// each cell's receiver (a [`D8`](crate::nodes::erosion::flow::D8) index; 8: none).
struct SurfaceData {
    w: usize,
    level: Vec<f32>,
    receiver: Vec<u8>,
}

impl super::sweep::Pull for SurfaceRule<'_, '_> {
    type Data = SurfaceData;

    fn load(&self, e: crate::node::Window) -> Result<SurfaceData, String> {
        let t = self.run.tiling;
        Ok(SurfaceData {
            w: e.width,
            level: self.run.scratch.window(t, TERRAIN_LEVEL, e)?,
            receiver: self.run.scratch.window(t, super::tiled::RECEIVER, e)?,
        })
    }

    fn sends(&self, d: &SurfaceData, i: usize, j: usize) -> bool {
        steps_to(d.w, i, d.receiver[i], j)
    }

    fn pull(&self, d: &SurfaceData, c: usize, known: impl Fn(usize) -> f64) -> f64 {
        let mut lowest = f64::from(d.level[c]);
        let (cells, len) = super::Grid::new(d.w, d.level.len() / d.w).around(c % d.w, c / d.w);
        for &i in &cells[..len] {
            if self.sends(d, i, c) {
                lowest = lowest.min(known(i));
            }
        }
        lowest
    }
}

/// Tile `k`'s outputs in a build run tile by tile: the drainage of [`super::tiled`] over the
/// tile and the reach of its largest river around it, finished as the whole map is (`smoothed`:
/// routed over the smoothed terrain, so the real terrain's level and the surface are fields of
/// their own).
fn tile(
    job: &super::TileRun,
    p: &RiversParams,
    hydrology: super::tiled::Hydrology,
    smoothed: bool,
    k: usize,
) -> Result<Vec<Field>, String> {
    use super::tiled::{AREA, LEVEL, RECEIVER};
    let t = job.tiling;
    let win = t.window(k);
    let margin = (reach_m(p, hydrology.max_area_m2) / job.cell_m).ceil();
    let f = win.expand(margin.clamp(0.0, t.n as f64) as usize + 2, t.n);
    let (z, _) = (job.read)(f)?;
    let (level, surface): (Vec<f32>, Vec<f32>) = if smoothed {
        let surface: Vec<u64> = job.scratch.window(t, SURFACE, f)?;
        (
            job.scratch.window(t, TERRAIN_LEVEL, f)?,
            surface.iter().map(|&s| f64::from_bits(s) as f32).collect(),
        )
    } else {
        let level: Vec<f32> = job.scratch.window(t, LEVEL, f)?;
        (level.clone(), level)
    };
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
            surface: &surface,
            area: &area,
            diagonal: &diagonal,
        },
        (f.width, f.height),
        p,
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
