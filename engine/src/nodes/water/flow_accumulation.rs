//! `flow_accumulation`: how much land drains through each cell, and which way water flows.
//!
//! Each cell routes to its lower neighbours (D8, or Freeman's slope^p shares, computed per cell
//! when needed rather than stored: 33 bytes a cell saved), or along its flat receiver, and
//! accumulates in f64 without a flood order: each cell counts the neighbours that can send it
//! water (rows in parallel), cells are started in row order, and a finished cell goes on
//! downstream to the cells it completes (one sequential pass that only adds). A flood in parallel
//! strips gives no order to accumulate in; counting and walking cost about what the old pass in
//! reverse flood order did, and the strips save more than that in the flood (docs/perf-log.md).

use super::{for_each_lake, priority_flood, unit_area, units, Flood, Grid, NONE};
use crate::field::Field;
use crate::node::{unit, EvalCtx, Node, NodeError};
use crate::nodes::erosion::flow::D8;

crate::choice_enum! {
    /// How a cell's water is shared among its lower neighbours.
    pub enum Routing { Mfd = "mfd", D8 = "d8" }
}

crate::params! {
    pub struct FlowAccumulationParams {
        /// `mfd`: shared among every lower neighbour by slope^exponent (Freeman 1991), smooth
        /// flow maps; `d8`: all to the steepest (O'Callaghan & Mark 1984), one-cell channels.
        routing: Routing = choice(Routing::Mfd),
        /// Freeman 1991's exponent p on the slope (mfd only): 1.1 in the paper; larger
        /// concentrates flow into fewer, sharper channels.
        exponent: f64 = float(1.1, [0.5, 8.0], [0.0, 100.0], "") if routing in ["mfd"],
        /// Drainage area where the log-scaled mask starts above 0, in m²: hillslopes draining
        /// less read 0. The mask reaches 1 at the world's whole area.
        min_area_m2: f64 = float(2_000.0, [10.0, 1_000_000.0], [0.001, 1.0e12], "m²") as "Min area",
        /// Topographic wetness index where the wetness mask starts above 0.
        wetness_low: f64 = float(6.0, [0.0, 20.0], [-100.0, 100.0], "") as "Wetness from",
        /// Topographic wetness index where the wetness mask reaches 1.
        wetness_high: f64 = float(16.0, [0.0, 30.0], [-100.0, 100.0], "") as "Wetness to",
    }
}

crate::node! {
    /// Shows where water gathers as it runs downhill: bright along streams and rivers, dark on
    /// ridges.
    /// Drainage area: the land (m², times the optional rain mask) whose water passes through each
    /// cell. Water runs over the terrain with its depressions filled (Barnes, Lehman & Mulla 2014's
    /// priority flood: flats and lakes drain towards their outlet) and leaves the map at the edge
    /// where nothing is lower; a lake reads everywhere as the flow leaving it. Routing mfd shares
    /// each cell's water among its lower neighbours by slope^p (Freeman 1991, p = exponent); d8
    /// sends it all to the steepest (O'Callaghan & Mark 1984). Outputs: flow = ln(A / min_area_m2)
    /// / ln(world area / min_area_m2), clamped to [0, 1] (invert with A = min_area_m2 · (world area
    /// / min_area_m2)^flow); dir_x, dir_y = 0.5 + 0.5 · the unit direction water leaves the cell (x
    /// to the east/right, y down the image's rows; 0.5, 0.5 where it has nowhere lower to go), the
    /// two channels of an engine's flow map; area = the drainage area itself in m² (a scalar port:
    /// export it as EXR or f32, or turn it into a mask with scalar_to_mask); wetness = the
    /// topographic wetness index ln(a / tan β) (Beven & Kirkby 1979; a = drainage area per metre of
    /// contour, A / cell size, β the local slope, at least 0.1°), mapped from wetness_low to
    /// wetness_high onto [0, 1]: wet valley floors and hollows, dry ridges and steep slopes. Areas
    /// are in m², so a river keeps its drainage area at every resolution; a channel is one cell
    /// wide at any resolution, so the mask is finer at finer resolutions.
    pub struct FlowAccumulation {
        id: "flow_accumulation",
        label: "Flow accumulation",
        category: Water,
        version: 1,
        params: FlowAccumulationParams,
        inputs: FlowAccumulationIn {
            /// Terrain the water runs over.
            r#in: height,
            /// Rain per cell (1 = every square metre counts); uniform when not connected.
            rain: mask (optional),
        },
        outputs: FlowAccumulationOut {
            /// ln(drainage area / min_area_m2) ÷ ln(world area / min_area_m2), in [0, 1].
            flow: mask,
            /// 0.5 + 0.5 · east component of the flow direction.
            dir_x: mask,
            /// 0.5 + 0.5 · south (down the rows) component of the flow direction.
            dir_y: mask,
            /// Topographic wetness ln(a / tan β), from wetness_low (0) to wetness_high (1).
            wetness: mask,
            /// Drainage area in m² (times the rain mask where one is connected).
            area: scalar,
        },
        traits: crate::node::Traits {
            parity: crate::node::Parity::Information,
            ..crate::node::Traits::DEFAULT
        },
    }
}

impl Node for FlowAccumulation {
    /// The flood's levels and flat parents (2), receivers (1), sender counts and queues (~1), the
    /// area (f64: 2).
    const SCRATCH_FIELDS: u32 = 6;

    fn eval(
        ctx: &EvalCtx,
        inputs: FlowAccumulationIn,
        p: &FlowAccumulationParams,
    ) -> Result<FlowAccumulationOut, NodeError> {
        let src = inputs.r#in;
        let (w, h) = (src.width(), src.height());
        let flood = priority_flood(src.data(), w, h);
        ctx.check_cancel()?;
        let cell = ctx.cell_size_m();
        let rain = inputs.rain.map(Field::data);
        let exponent = match p.routing {
            Routing::Mfd => Some(p.exponent),
            Routing::D8 => None,
        };
        let routes = Routes::new(&flood, w, h, exponent);
        let mut area = routes.accumulate(cell * cell, rain);
        // A lake is one body of water: it reads everywhere as the flow leaving it.
        for_each_lake(src.data(), &flood.level, w, h, |lake| {
            let out = lake.iter().map(|&c| area[c]).fold(0.0, f64::max);
            for &c in lake {
                area[c] = out;
            }
        });
        ctx.check_cancel()?;
        let a0 = p.min_area_m2.max(1e-9);
        let world_area = ctx.world.size_m * ctx.world.size_m;
        let scale = 1.0 / (world_area / a0).ln().max(1e-9);
        let flow = area
            .iter()
            .map(|&a| unit(((a.max(1e-30) / a0).ln() * scale) as f32))
            .collect();
        let size = || NodeError::Failed("internal error: field size".into());
        let (dx, dy) = routes.directions();
        let wetness = wetness(&area, src, cell, (p.wetness_low, p.wetness_high));
        let area = area.iter().map(|&a| a as f32).collect();
        Ok(FlowAccumulationOut {
            flow: Field::from_vec(w, h, flow).ok_or_else(size)?,
            dir_x: Field::from_vec(w, h, dx).ok_or_else(size)?,
            dir_y: Field::from_vec(w, h, dy).ok_or_else(size)?,
            wetness: wetness.ok_or_else(size)?,
            area: Field::from_vec(w, h, area).ok_or_else(size)?,
        })
    }
}

/// Where each cell's water goes over a flooded surface: to its lower neighbours by
/// slope^p (`exponent` `Some(p)`, Freeman 1991) or all to the steepest (`None`); a cell with
/// no lower neighbour (on a flat or a lake) sends everything towards its flat parent (towards the outlet); an edge
/// cell without a lower neighbour is an outlet. Computed per cell when asked, so routing
/// holds nothing beyond the flood.
pub struct Routes<'a> {
    flood: &'a Flood,
    w: usize,
    h: usize,
    exponent: Option<f64>,
}

/// The cells one cell sends water to (the first `len`), with their shares (summing to 1).
#[derive(Clone, Copy, Debug, Default)]
pub struct Targets {
    pub cells: [u32; 8],
    pub shares: [f64; 8],
    /// D8 offsets of the targets, for directions.
    pub offsets: [(i32, i32); 8],
    pub len: usize,
}

/// A cell whose water has been passed on.
const DONE: u8 = u8::MAX;

/// Passes `values` down single-direction routes (`receiver`; [`NONE`]: none): each cell, once
/// every cell routed into it has been (`pending`: how many are, per cell), joins its value
/// into its receiver's (`join(receiver's, its own)`). Cells start in row order and each goes
/// on down to the cells it completes, so a join that is not associative in floating point
/// still gives bits that depend only on the routes.
pub(crate) fn down_the_routes<T: Copy>(
    receiver: &[u32],
    mut pending: Vec<u8>,
    values: &mut [T],
    join: impl Fn(T, T) -> T,
) {
    for start in 0..values.len() {
        if pending[start] != 0 {
            continue;
        }
        let mut c = start;
        loop {
            pending[c] = DONE;
            let r = receiver[c];
            if r == NONE {
                break;
            }
            let r = r as usize;
            values[r] = join(values[r], values[c]);
            pending[r] -= 1;
            if pending[r] != 0 {
                break;
            }
            c = r;
        }
    }
}

/// Distance to a D8 neighbour at offset `(dx, dy)`, in cells.
fn distance((dx, dy): (i32, i32)) -> f64 {
    if dx != 0 && dy != 0 {
        std::f64::consts::SQRT_2
    } else {
        1.0
    }
}

/// A cell's own water: `cell_area` times its rain (at least 0), or `cell_area` without rain.
#[must_use]
pub fn own_area(cell_area: f64, rain: Option<f32>) -> f64 {
    rain.map_or(cell_area, |v| cell_area * f64::from(v.max(0.0)))
}

/// Freeman 1991's weights of every cell of a `w × h` window of levels, summed in [`D8`] order:
/// Σ (drop ÷ distance)^`p` over its lower neighbours (0: none lower), rows in parallel.
#[must_use]
pub fn weight_totals(level: &[f32], w: usize, h: usize, p: f64) -> Vec<f64> {
    use rayon::prelude::*;
    let mut totals = vec![0.0f64; w * h];
    totals
        .par_chunks_mut(w.max(1))
        .enumerate()
        .for_each(|(y, row)| {
            for (x, t) in row.iter_mut().enumerate() {
                *t = weight_total(level, w, h, y * w + x, p);
            }
        });
    totals
}

/// Cell `i`'s weights summed, as [`Routes::targets`] sums them (see [`weight_totals`]).
fn weight_total(level: &[f32], w: usize, h: usize, i: usize, p: f64) -> f64 {
    let (x, y) = ((i % w) as isize, (i / w) as isize);
    let mut weights = [0.0f64; 8];
    let mut len = 0;
    for &(dx, dy) in &D8 {
        let (nx, ny) = (x + dx as isize, y + dy as isize);
        if nx < 0 || ny < 0 || nx >= w as isize || ny >= h as isize {
            continue;
        }
        let drop = f64::from(level[i]) - f64::from(level[(ny * w as isize + nx) as usize]);
        if drop > 0.0 {
            weights[len] = (drop / distance((dx, dy))).powf(p);
            len += 1;
        }
    }
    weights[..len].iter().sum()
}

/// Multiple-direction drainage pulled by the cell that receives it: over a `w × h` window of
/// filled levels and their weight totals ([`weight_totals`]), exponent `p`.
pub struct Mfd<'a> {
    pub level: &'a [f32],
    pub totals: &'a [f64],
    pub w: usize,
    pub h: usize,
    pub p: f64,
}

impl Mfd<'_> {
    /// Cell `c`'s drainage area: `own`, plus, in [`D8`] order, each neighbour's share of its
    /// area (`area(i)`): slope^p ÷ its total when it has lower neighbours, else all of it when
    /// `flat(i)` (its receiver on a flat) is `c`. The same bits as [`Routes::targets`]'s shares
    /// pushed, summed in this order; every neighbour of `c` must lie in the window (or off the
    /// map).
    #[inline]
    pub fn pull(
        &self,
        c: usize,
        own: f64,
        flat: &impl Fn(usize) -> Option<usize>,
        area: impl Fn(usize) -> f64,
    ) -> f64 {
        let (w, h) = (self.w as isize, self.h as isize);
        let (x, y) = ((c % self.w) as isize, (c / self.w) as isize);
        let mut a = own;
        for &(dx, dy) in &D8 {
            let (nx, ny) = (x + dx as isize, y + dy as isize);
            if nx < 0 || ny < 0 || nx >= w || ny >= h {
                continue;
            }
            let i = (ny * w + nx) as usize;
            let total = self.totals[i];
            if total > 0.0 {
                let drop = f64::from(self.level[i]) - f64::from(self.level[c]);
                if drop > 0.0 {
                    let weight = (drop / distance((dx, dy))).powf(self.p);
                    a += area(i) * (weight / total);
                }
            } else if flat(i) == Some(c) {
                a += area(i) * 1.0;
            }
        }
        a
    }
}

impl<'a> Routes<'a> {
    #[must_use]
    pub fn new(flood: &'a Flood, w: usize, h: usize, exponent: Option<f64>) -> Self {
        Self {
            flood,
            w,
            h,
            exponent,
        }
    }

    /// Where cell `i`'s water goes.
    #[must_use]
    pub fn targets(&self, i: usize) -> Targets {
        let (w, h) = (self.w as isize, self.h as isize);
        let level = &self.flood.level;
        let (x, y) = ((i % self.w) as isize, (i / self.w) as isize);
        let mut t = Targets::default();
        let mut weights = [0.0f64; 8];
        for &(dx, dy) in &D8 {
            let (nx, ny) = (x + dx as isize, y + dy as isize);
            if nx < 0 || ny < 0 || nx >= w || ny >= h {
                continue;
            }
            let j = (ny * w + nx) as usize;
            let drop = f64::from(level[i]) - f64::from(level[j]);
            if drop <= 0.0 {
                continue;
            }
            let slope = drop / distance((dx, dy));
            weights[t.len] = self.exponent.map_or(0.0, |p| slope.powf(p));
            t.cells[t.len] = j as u32;
            t.offsets[t.len] = (dx, dy);
            t.len += 1;
        }
        let total: f64 = weights[..t.len].iter().sum();
        if self.exponent.is_some() && total > 0.0 {
            for (share, weight) in t.shares.iter_mut().zip(&weights).take(t.len) {
                *share = weight / total;
            }
        } else {
            // One direction: the flood's receiver — the steepest lower neighbour, on a flat
            // the next cell towards the outlet, none for an outlet on the edge.
            t.len = 0;
            let r = self.flood.receiver[i];
            if r != NONE {
                let j = r as usize;
                t.cells[0] = r;
                t.shares[0] = 1.0;
                t.offsets[0] = (
                    ((j % self.w) as isize - x) as i32,
                    ((j / self.w) as isize - y) as i32,
                );
                t.len = 1;
            }
        }
        t
    }

    /// Drainage area per cell: `cell_area` (times `rain`) of its own plus what every cell
    /// upstream passes on, in f64 so that millions of cells add up without loss. A cell passes
    /// its water on once every cell that can send it water has (a count per cell of such
    /// senders); cells are started in row order and each finished cell goes on down to the
    /// cells it has completed, so the sums — and their bits — depend only on the terrain.
    #[must_use]
    pub fn accumulate(&self, cell_area: f64, rain: Option<&[f32]>) -> Vec<f64> {
        if self.exponent.is_none() {
            // Single direction: in integer units (see [`units`]), the receivers and the
            // counts rows in parallel (the per-cell work), then one sequential walk that only
            // adds along the receivers.
            let unit = unit_area(cell_area, rain.is_some());
            let mut acc = units(rain, self.w * self.h);
            let receivers = self.receivers();
            let pending = self.senders(|i, j| receivers[i] == j as u32);
            down_the_routes(receivers, pending, &mut acc, |to, from| to + from);
            return acc.iter().map(|&a| a as f64 * unit).collect();
        }
        let mut area: Vec<f64> = match rain {
            Some(r) => r.iter().map(|&v| own_area(cell_area, Some(v))).collect(),
            None => vec![cell_area; self.w * self.h],
        };
        // Several directions: a cell waits for every higher neighbour (each may send it a
        // share) and, on a flat, for the flat cells whose parent it is; then it pulls their
        // shares in D8 order (an order of its own, so that a tile computes the same sum).
        let (w, h) = (self.w, self.h);
        let level = &self.flood.level;
        let receiver = &self.flood.receiver;
        let p = self.exponent.unwrap_or(1.0);
        let totals = weight_totals(level, w, h, p);
        let flat = |i: usize| (receiver[i] != NONE).then_some(receiver[i] as usize);
        let mfd = Mfd {
            level,
            totals: &totals,
            w,
            h,
            p,
        };
        // A flat cell's receiver is level with it; any other cell's is lower.
        let mut pending = self.senders(|i, j| level[i] > level[j] || receiver[i] == j as u32);
        let mut stack = Vec::new();
        let grid = Grid::new(w, h);
        for start in 0..area.len() {
            if pending[start] != 0 {
                continue;
            }
            stack.push(start);
            while let Some(c) = stack.pop() {
                pending[c] = DONE;
                area[c] = mfd.pull(c, area[c], &flat, |i| area[i]);
                let mut release = |j: usize| {
                    pending[j] -= 1;
                    if pending[j] == 0 {
                        stack.push(j);
                    }
                };
                let r = receiver[c];
                if r != NONE && level[r as usize] == level[c] {
                    release(r as usize);
                } else {
                    let (cells, len) = grid.around(c % w, c / w);
                    for &j in &cells[..len] {
                        if level[j] < level[c] {
                            release(j);
                        }
                    }
                }
            }
        }
        area
    }

    /// For every cell, how many of its neighbours `i` satisfy `sends(i, cell)`, rows in
    /// parallel.
    fn senders(&self, sends: impl Fn(usize, usize) -> bool + Sync) -> Vec<u8> {
        use rayon::prelude::*;
        let (w, h) = (self.w, self.h);
        let mut count = vec![0u8; w * h];
        let grid = Grid::new(w, h);
        count
            .par_chunks_mut(w.max(1))
            .enumerate()
            .for_each(|(y, row)| {
                for (x, v) in row.iter_mut().enumerate() {
                    let j = y * w + x;
                    let (cells, len) = grid.around(x, y);
                    *v = cells[..len].iter().filter(|&&i| sends(i, j)).count() as u8;
                }
            });
        count
    }

    /// Single direction: the one cell each cell sends its water to ([`NONE`] for outlets) —
    /// the flood's receivers.
    #[must_use]
    pub fn receivers(&self) -> &[u32] {
        &self.flood.receiver
    }

    /// The flow-map channels: 0.5 + 0.5 · the unit vector of the shares' weighted direction.
    #[must_use]
    pub fn directions(&self) -> (Vec<f32>, Vec<f32>) {
        use rayon::prelude::*;
        (0..self.w * self.h)
            .into_par_iter()
            .map(|i| direction(&self.targets(i)))
            .unzip()
    }
}

/// A cell's flow-map channels: 0.5 + 0.5 · the unit vector of its targets' weighted direction
/// ((0.5, 0.5) where it sends nothing).
fn direction(t: &Targets) -> (f32, f32) {
    let (mut x, mut y) = (0.0f32, 0.0f32);
    for k in 0..t.len {
        let (dx, dy) = t.offsets[k];
        let d = distance((dx, dy)) as f32;
        x += t.shares[k] as f32 * dx as f32 / d;
        y += t.shares[k] as f32 * dy as f32 / d;
    }
    let len = (x * x + y * y).sqrt();
    if len > 1e-6 {
        (0.5 + 0.5 * x / len, 0.5 + 0.5 * y / len)
    } else {
        (0.5, 0.5)
    }
}

/// The topographic wetness index ln(a / tan β) (Beven & Kirkby 1979) of every cell, with a =
/// `area` per metre of contour (÷ the cell size) and β the terrain's slope (at least 0.1°),
/// mapped from `low` (0) to `high` (1).
fn wetness(area: &[f64], terrain: &Field, cell: f64, band: (f64, f64)) -> Option<Field> {
    let slope = crate::field::derive::slope_deg(terrain, cell);
    let data = area
        .iter()
        .zip(slope.data())
        .map(|(&a, &deg)| wetness_of(a, deg, cell, band))
        .collect();
    Field::from_vec(terrain.width(), terrain.height(), data)
}

/// One cell's wetness mask from its drainage area and slope (degrees); see [`wetness`].
fn wetness_of(a: f64, deg: f32, cell: f64, (low, high): (f64, f64)) -> f32 {
    let min_tan = 0.1f64.to_radians().tan();
    let span = (high - low).max(1e-9);
    let tan = f64::from(deg).to_radians().tan().max(min_tan);
    let twi = (a.max(1e-30) / cell / tan).ln();
    unit(((twi - low) / span) as f32)
}

/// `flow_accumulation` run tile by tile (`super::tiled`): d8 drainage from the tiled passes
/// (integer units), mfd drainage from the sweeps (`super::sweep`), each lake's largest area
/// joined across the seams, directions and slope over the tile and one cell around it — the
/// very bits of the whole-map run.
pub(super) fn tiled(
    run: &super::TileRun,
    emit: &mut dyn FnMut(usize, Vec<Field>) -> Result<(), String>,
) -> Result<(), String> {
    use super::sweep::sweep;
    use super::tiled::{hydrology, join_lakes, levels_and_receivers, AREA, LEVEL, RECEIVER};
    use crate::node::Params as _;
    use rayon::prelude::*;
    let p = FlowAccumulationParams::from_values(run.values);
    let t = run.tiling;
    let n = t.n;
    let cell = run.cell_m;
    let check = || run.check();
    // Per tile: the drainage area as a u64 ordered as the area is (d8: integer units; mfd:
    // the bits of a non-negative f64), and how to read it back in m².
    let (name, to_m2): (&'static str, Box<dyn Fn(u64) -> f64 + Sync>) = match p.routing {
        Routing::D8 => {
            let hyd = hydrology(t, run.scratch, run.read, cell * cell, run.cancelled)?;
            (AREA, Box::new(move |u| u as f64 * hyd.unit_m2))
        }
        Routing::Mfd => {
            levels_and_receivers(t, run.scratch, run.read, &check)?;
            let rule = MfdRule {
                t,
                scratch: run.scratch,
                read: run.read,
                cell_area: cell * cell,
                p: p.exponent,
            };
            sweep(t, run.scratch, MFD_AREA, &rule, &check)?;
            (MFD_AREA, Box::new(f64::from_bits))
        }
    };
    // A lake reads everywhere as the flow leaving it: its largest area, over every tile. An
    // area of 0 (or −0) counts as 0, as the whole map's fold from 0 takes it.
    let ordered = |u: u64| match p.routing {
        Routing::Mfd if f64::from_bits(u) <= 0.0 => 0,
        _ => u,
    };
    let lakes = join_lakes(
        run,
        |k| run.scratch.get::<u64>(t, k, name),
        |area, lake| lake.iter().map(|&c| ordered(area[c])).max().unwrap_or(0),
        u64::max,
    )?;
    let a0 = p.min_area_m2.max(1e-9);
    let scale = 1.0 / ((run.world.size_m * run.world.size_m) / a0).ln().max(1e-9);
    for k in 0..t.count() {
        run.check()?;
        let win = t.window(k);
        let ring = win.expand(1, n);
        let (z1, _) = (run.read)(ring)?;
        let terrain = Field::from_vec(ring.width, ring.height, z1).ok_or("field size")?;
        let slope = ring.crop(&crate::field::derive::slope_deg(&terrain, cell), &win);
        let units: Vec<u64> = run.scratch.get(t, k, name)?;
        let lake = lakes.of_tile(run, k)?;
        // Cell by cell, rows of cells in parallel.
        let area: Vec<f64> = units
            .par_iter()
            .zip(&lake)
            .map(|(&u, l)| to_m2(l.unwrap_or(u)))
            .collect();
        let flow = area
            .par_iter()
            .map(|&a| unit(((a.max(1e-30) / a0).ln() * scale) as f32))
            .collect();
        let (dx, dy) = match p.routing {
            Routing::D8 => {
                let rcv: Vec<u8> = run.scratch.get(t, k, RECEIVER)?;
                rcv.par_iter()
                    .map(|&c| {
                        let mut t = Targets::default();
                        if let Some(&(ox, oy)) = D8.get(c as usize) {
                            t.shares[0] = 1.0;
                            t.offsets[0] = (ox, oy);
                            t.len = 1;
                        }
                        direction(&t)
                    })
                    .unzip()
            }
            Routing::Mfd => {
                let flood = ring_flood(
                    ring,
                    run.scratch.window(t, LEVEL, ring)?,
                    &run.scratch.window::<u8>(t, RECEIVER, ring)?,
                );
                let routes = Routes::new(&flood, ring.width, ring.height, Some(p.exponent));
                (0..win.width * win.height)
                    .into_par_iter()
                    .map(|i| {
                        let (x, y) = (win.x0 + i % win.width, win.y0 + i / win.width);
                        let at = (y - ring.y0) * ring.width + (x - ring.x0);
                        direction(&routes.targets(at))
                    })
                    .unzip()
            }
        };
        let wet = area
            .par_iter()
            .zip(slope.data())
            .map(|(&a, &deg)| wetness_of(a, deg, cell, (p.wetness_low, p.wetness_high)))
            .collect();
        let area = area.iter().map(|&a| a as f32).collect();
        let field = |v: Vec<f32>| {
            Field::from_vec(win.width, win.height, v).ok_or_else(|| "field size".to_owned())
        };
        emit(
            k,
            vec![
                field(flow)?,
                field(dx)?,
                field(dy)?,
                field(wet)?,
                field(area)?,
            ],
        )?;
    }
    Ok(())
}

/// The flood over a window `ring` from the tile passes' levels and receiver codes (receivers
/// leading out of the window: none; only the window's inner cells are asked for targets).
fn ring_flood(ring: crate::node::Window, level: Vec<f32>, codes: &[u8]) -> super::Flood {
    let (w, h) = (ring.width as isize, ring.height as isize);
    let receiver = codes
        .iter()
        .enumerate()
        .map(|(i, &c)| {
            D8.get(c as usize).map_or(NONE, |&(dx, dy)| {
                let (x, y) = (
                    (i as isize % w) + dx as isize,
                    (i as isize / w) + dy as isize,
                );
                if x < 0 || y < 0 || x >= w || y >= h {
                    NONE
                } else {
                    (y * w + x) as u32
                }
            })
        })
        .collect();
    super::Flood { level, receiver }
}

/// Each cell's multiple-direction drainage area in m² (the bits of an f64, as a u64), swept
/// tile by tile.
pub const MFD_AREA: &str = "mfd-area";

/// Multiple-direction drainage area (m²): `cell_area` a cell (times the reader's rain, if
/// any), Freeman 1991's routing with exponent `p` over the [`LEVEL`] and [`RECEIVER`] the tile
/// passes left ([`super::tiled::levels_and_receivers`]).
pub struct MfdRule<'a> {
    pub t: &'a super::tiled::Tiling,
    pub scratch: &'a super::tiled::Scratch,
    pub read: &'a super::tiled::Reader<'a>,
    pub cell_area: f64,
    pub p: f64,
}

/// What [`MfdRule`] reads over a window.
pub struct MfdData {
    level: Vec<f32>,
    codes: Vec<u8>,
    totals: Vec<f64>,
    rain: Option<Vec<f32>>,
    w: usize,
    h: usize,
}

impl MfdData {
    /// Where cell `i`'s receiver code leads, inside the window (or nowhere).
    fn flat(&self, i: usize) -> Option<usize> {
        let (w, h) = (self.w, self.h);
        let (dx, dy) = *D8.get(self.codes[i] as usize)?;
        let (x, y) = (
            (i % w) as isize + dx as isize,
            (i / w) as isize + dy as isize,
        );
        (x >= 0 && y >= 0 && x < w as isize && y < h as isize).then(|| y as usize * w + x as usize)
    }
}

impl super::sweep::Pull for MfdRule<'_> {
    type Data = MfdData;

    fn load(&self, e: crate::node::Window) -> Result<MfdData, String> {
        let level: Vec<f32> = self.scratch.window(self.t, super::tiled::LEVEL, e)?;
        let codes = self.scratch.window(self.t, super::tiled::RECEIVER, e)?;
        let (_, rain) = (self.read)(e)?;
        let totals = weight_totals(&level, e.width, e.height, self.p);
        Ok(MfdData {
            level,
            codes,
            totals,
            rain,
            w: e.width,
            h: e.height,
        })
    }

    /// Every higher neighbour, and on a flat the cells whose receiver it is (as the whole map
    /// waits for them).
    fn sends(&self, d: &MfdData, i: usize, j: usize) -> bool {
        d.level[i] > d.level[j] || d.flat(i) == Some(j)
    }

    fn pull(&self, d: &MfdData, c: usize, known: impl Fn(usize) -> f64) -> f64 {
        let own = own_area(self.cell_area, d.rain.as_ref().map(|r| r[c]));
        let mfd = Mfd {
            level: &d.level,
            totals: &d.totals,
            w: d.w,
            h: d.h,
            p: self.p,
        };
        mfd.pull(c, own, &|i| d.flat(i), known)
    }
}

#[cfg(test)]
mod sweep_tests {
    use super::*;
    use crate::node::Window;
    use crate::nodes::water::priority_flood;
    use crate::nodes::water::sweep::sweep;
    use crate::nodes::water::tiled::{Scratch, Tiling};

    /// A terrain with valleys, pits, flats and a lake, `n × n`.
    fn terrain(n: usize) -> Vec<f32> {
        (0..n * n)
            .map(|i| {
                let (x, y) = ((i % n) as f32, (i / n) as f32);
                let v = 40.0 * (x / 9.0).sin() * (y / 13.0).cos() + 0.3 * x + 0.2 * y
                    - 25.0 * (-((x - 30.0).powi(2) + (y - 40.0).powi(2)) / 90.0).exp();
                // Terraces: flats of equal heights.
                (v / 3.0).round() * 3.0
            })
            .collect()
    }

    /// Tile by tile, for several tile sizes (odd counts and narrow last tiles included) and
    /// with and without rain, the areas are the whole map's, bit for bit.
    #[test]
    fn swept_areas_equal_the_whole_maps() {
        let n = 97;
        let z = terrain(n);
        let rain: Vec<f32> = (0..n * n).map(|i| ((i * 7) % 11) as f32 / 10.0).collect();
        let flood = priority_flood(&z, n, n);
        for with_rain in [false, true] {
            let r = with_rain.then_some(&rain[..]);
            let whole = Routes::new(&flood, n, n, Some(1.1)).accumulate(4.0, r);
            for size in [97, 40, 33, 16, 9] {
                let t = Tiling::uniform(n, size);
                let scratch = Scratch::in_memory();
                let read = |w: Window| -> Result<(Vec<f32>, Option<Vec<f32>>), String> {
                    let cut = |f: &[f32]| {
                        (w.y0..w.y0 + w.height)
                            .flat_map(|y| f[y * n + w.x0..y * n + w.x0 + w.width].to_vec())
                            .collect::<Vec<f32>>()
                    };
                    Ok((cut(&z), with_rain.then(|| cut(&rain))))
                };
                let ok = || Ok(());
                crate::nodes::water::tiled::levels_and_receivers(&t, &scratch, &read, &ok)
                    .expect("passes");
                let rule = MfdRule {
                    t: &t,
                    scratch: &scratch,
                    read: &read,
                    cell_area: 4.0,
                    p: 1.1,
                };
                let sweeps = sweep(&t, &scratch, MFD_AREA, &rule, &ok).expect("sweeps");
                let got: Vec<u64> = scratch
                    .window(&t, MFD_AREA, Window::full(n))
                    .expect("areas");
                let want: Vec<u64> = whole.iter().map(|a| a.to_bits()).collect();
                let wrong = got.iter().zip(&want).filter(|(a, b)| a != b).count();
                assert_eq!(
                    wrong, 0,
                    "tiles of {size}, rain {with_rain}: {sweeps} sweeps"
                );
            }
        }
    }
}
