//! `droplet_erosion`: particle (droplet) hydraulic erosion after E-DOG, *Water erosion on
//! heightmap terrain* (2011, E-DOG 2011).
//!
//! Each droplet starts on a random cell with no speed and no sediment, follows the height
//! gradient (with inertia `Ki`), and at every step compares its sediment with the carry
//! capacity `q = max(slope, minSlope)·v·w·Kq` (E-DOG 2011, "Understanding water erosion"):
//! below capacity it erodes `Kr·(q − s)` with a bell-shaped brush of radius 2, never more than
//! the drop to the next position; above it deposits `Kd·(s − q)` bilinearly. A droplet that
//! meets a rise fills the pit it sits in and goes on with zero speed, or dies there when its
//! sediment cannot fill it. Speed grows with the drop, `v = √(v² + 2g·Δh)`, and water
//! evaporates, `w ← w·(1 − Kw)`. Heights are handled in cell units (metres / cell size), so
//! `slope` is a true tangent as in the seed's unit-spaced grid.
//!
//! # Parallel and deterministic
//! Droplet `i` starts on a cell drawn from `hash(seed, i)`, so the set of droplets depends on
//! the seed only. Droplets run in rounds; in each round the map is cut into a fixed 4 × 4 grid
//! of tiles (fixed by the resolution, never by the thread count) coloured like a 2 × 2
//! checkerboard. Tiles of one colour run in parallel, each on its own copy of the tile plus a
//! margin of half a tile: same-coloured regions never overlap, so no two threads touch the
//! same cell. The four-cell band along a region's inner edge is frozen for the pass (neither
//! eroded nor deposited on; see `View::erodable`). A droplet about to leave its region, or
//! to deposit on that band, is parked; the parked droplets go on in a
//! second grid shifted by half a tile (where they sit near a tile's middle), and the few
//! parked again are finished afterwards on the whole map. Within a tile (and in the parked phase) eight droplets advance in lockstep, one
//! step each in turn, so the core overlaps their independent chains of arithmetic; a finished
//! droplet's lane takes the next one in index order. Every step happens in an order fixed by
//! (seed, resolution), so the output is bit-identical for any number of threads.
//!
//! # The refinement's rain is the world's
//! A coarse-to-fine build's refinement (`refine.rs`) draws its droplets from the world's cells
//! instead (`erode_anchored`): each cell's count (Poisson, mean `density`) and round (one of
//! 16) from a hash of its world index, the rounds run on tiles of 128 cells anchored to the
//! world, each tile's droplets in an order drawn from their hashes. A tiled build's piece, a
//! window of the world, therefore runs the whole map's droplets there in the whole map's
//! order, and differs from it only by what crosses its edge and spreads from droplet to
//! droplet, where a piece drawing its own droplets gave another realisation of the same rain
//! (figures in docs/large-worlds.md).
//!
//! # Where this departs from E-DOG 2011 (and why)
//! * The seed's brush weights `(1 − r²/4)/(2π)` only sum to about 1; here they are normalised
//!   to sum to exactly 1 (and renormalised where the brush is clipped by the map edge), so the
//!   soil taken from the map is exactly what the droplet picks up — material is conserved.
//! * The seed's map wraps around; here a droplet that flows off the map takes its sediment
//!   with it (reported as `exited`); one that reaches the path limit (`path_limit` map sides,
//!   4 as in the seed) ends with its load still suspended, as in the seed, and that load is
//!   reported (`suspended`), so conservation is checked to the last grain.

mod refine;
mod tiles;

use tiles::{run_tiled, spawn, Tiling};

use super::levels;
use crate::field::Field;
use crate::node::{splitmix64, EvalCtx, Node, NodeError};

levels::erosion_params! {
    pub struct DropletParams {
        /// Seed of this node (droplet start cells and random directions), combined with the graph seed.
        seed: u32 = seed(0),
        /// Droplets per cell of the map (so a 512² preview and a 2048² build see the same rain: 1.0 = one droplet per cell, 262 144 at 512²).
        density: f64 = float(1.0, [0.05, 4.0], [0.0, 64.0], "per cell"),
        /// Carry capacity factor Kq in q = max(slope, minSlope)·v·w·Kq (E-DOG 2011: 10).
        kq: f64 = float(10.0, [1.0, 50.0], [0.0, 1000.0], "") as "Capacity (K_q)",
        /// Evaporation Kw: fraction of the water lost per step (E-DOG 2011: 0.001).
        kw: f64 = float(0.001, [0.0, 0.05], [0.0, 1.0], "") as "Evaporation (K_w)",
        /// Erosion speed Kr: fraction of the missing load picked up per step (E-DOG 2011: 0.9).
        kr: f64 = float(0.9, [0.0, 1.0], [0.0, 1.0], "") as "Erosion speed (K_r)",
        /// Deposition speed Kd: fraction of the excess load dropped per step (E-DOG 2011: 0.02).
        kd: f64 = float(0.02, [0.0, 0.5], [0.0, 1.0], "") as "Deposition speed (K_d)",
        /// Direction inertia Ki: higher values make channel turns smoother (E-DOG 2011: 0.1).
        ki: f64 = float(0.1, [0.0, 0.9], [0.0, 1.0], "") as "Inertia (K_i)",
        /// Minimum slope in the capacity formula, so flat runs still carry soil (E-DOG 2011: 0.05).
        min_slope: f64 = float(0.05, [0.0, 0.2], [0.0, 10.0], "") as "Minimum slope",
        /// Gravity g accelerating the flow: v = √(v² + 2g·Δh) (E-DOG 2011: 20).
        g: f64 = float(20.0, [1.0, 50.0], [0.0, 1000.0], "") as "Gravity (g)",
        /// Longest droplet path, in map sides: a droplet still running after it is stopped and drops its load (E-DOG 2011: 4).
        path_limit: f64 = float(4.0, [0.25, 8.0], [0.001, 64.0], "map sides") as "Path limit",
    }
    native: "E-DOG 2011's droplets run once at the resolution being built (a droplet's path and brush are in cells, so the result depends on the resolution).",
    finer: "A finer build refines from it once, at its own resolution: as many droplets per cell as the base, each running at most 32 of the build's cells (the base already routed the water farther), eroding only where the base eroded and carrying the base's deposits to lay them down again, their drift over the base's cells taken out; coarser previews average it.",
}

/// The constants of one run, in cell units.
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    pub kq: f32,
    pub kw: f32,
    pub kr: f32,
    pub kd: f32,
    pub ki: f32,
    pub min_slope: f32,
    /// 2·g, the seed's `Kg`.
    pub kg: f32,
    /// Longest path, in map sides (E-DOG 2011: 4).
    pub path_limit: f32,
}

impl Settings {
    /// The steps a droplet may take on a map of side `map` (`path_limit` map sides).
    fn max_steps(&self, map: usize) -> u32 {
        (f64::from(self.path_limit) * map as f64)
            .round()
            .clamp(1.0, f64::from(u32::MAX)) as u32
    }

    /// E-DOG 2011's defaults.
    #[must_use]
    pub fn seed001() -> Self {
        Self {
            kq: 10.0,
            kw: 0.001,
            kr: 0.9,
            kd: 0.02,
            ki: 0.1,
            min_slope: 0.05,
            kg: 40.0,
            path_limit: 4.0,
        }
    }
}

/// What happened to the material during a run.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Report {
    /// Sediment (in the height unit of the map × one cell) carried off the map, or dropped on
    /// its border ring (which stays fixed).
    pub exited: f64,
    /// Sediment still suspended in droplets stopped by the path limit (`path_limit` map
    /// sides, 4 as in E-DOG 2011), which the seed discards with the droplet.
    pub suspended: f64,
    /// Droplets finished on the whole map after leaving their tile's region.
    pub parked: u64,
    /// Steps walked by all the droplets.
    pub steps: u64,
}

impl Report {
    /// Counts a droplet that ended here (a parked one goes on later and counts then).
    fn count(&mut self, d: &Drop, outcome: Outcome) {
        match outcome {
            Outcome::Done => {
                self.exited += f64::from(d.lost);
                self.suspended += f64::from(d.suspended);
            }
            Outcome::Exited(s) => self.exited += f64::from(s),
            Outcome::Parked => return,
        }
        self.steps += u64::from(d.steps);
    }

    fn add(&mut self, other: &Report) {
        self.exited += other.exited;
        self.suspended += other.suspended;
        self.parked += other.parked;
        self.steps += other.steps;
    }
}

/// A droplet's state between steps: it stands at `(xi + fx, yi + fy)` in map cells (the
/// position kept relative to its cell, so no step has to find the cell again).
#[derive(Clone, Copy, Debug)]
struct Drop {
    xi: i32,
    yi: i32,
    /// Offset in the cell, in [0, 1].
    fx: f32,
    fy: f32,
    dx: f32,
    dy: f32,
    v: f32,
    w: f32,
    s: f32,
    steps: u32,
    rng: u64,
    /// Sediment dropped on the border ring so far (it leaves the map).
    lost: f32,
    /// Sediment still carried when the path limit was reached.
    suspended: f32,
}

impl Drop {
    /// A droplet at rest on cell `(x, y)`, unloaded, drawing its random directions from `rng`.
    fn at(x: usize, y: usize, rng: u64) -> Self {
        Self {
            xi: x as i32,
            yi: y as i32,
            fx: 0.0,
            fy: 0.0,
            dx: 0.0,
            dy: 0.0,
            v: 0.0,
            w: 1.0,
            s: 0.0,
            steps: 0,
            rng,
            lost: 0.0,
            suspended: 0.0,
        }
    }
}

/// A rectangle of the map held in `data` (row-major, `w` wide), at `(ox, oy)` in the map.
struct View<'a> {
    data: &'a mut [f32],
    ox: usize,
    oy: usize,
    w: usize,
    /// Side of the whole map.
    map: i32,
    /// Cells a droplet may stand on (its cell's x and y): inside this range every cell the
    /// droplet reads or writes lies in the view.
    safe: (i32, i32, i32, i32),
    /// Cells the erosion brush may lower (x0, y0 inclusive, x1, y1 exclusive): not the map's
    /// border ring (the fixed base level), and not the four-cell band along a view edge that
    /// lies inside the map. That band is frozen for the pass — neither lowered nor raised —
    /// and is eroded later, when it lies inside another region:
    /// - lowered, it would sink without bound: droplets heading out are parked standing on
    ///   it, before they can fill the holes the brush dug under them (1 km pits at 1024²);
    /// - raised, it grows into a dam: droplets that may not lower it fill the valley behind
    ///   it, and the lake and the dam rise together (a straight 16 m step along the edge).
    erodable: (i32, i32, i32, i32),
    /// Cells a droplet may stand on and still deposit (x0, y0 inclusive, x1, y1 exclusive):
    /// those whose four corners lie in the erodable range, unbounded along the map's edges
    /// (what lands on the border ring leaves the map). A droplet outside it that would
    /// deposit is parked instead.
    fillable: (i32, i32, i32, i32),
    /// Per cell of the whole map, the share of its erosion a droplet standing on it may
    /// take (empty: all of it); see [`erode_where`].
    allow: &'a [f32],
}

impl<'a> View<'a> {
    fn new(data: &'a mut [f32], rect: Rect, map: usize, allow: &'a [f32]) -> Self {
        let Rect { x0, y0, x1, y1 } = rect;
        // The bilinear cell needs x and x + 1; the brush x − 1 ..= x + 2, clipped at the map edge.
        let lo = |a: usize| if a == 0 { 0 } else { a as i32 + 1 };
        let hi = |b: usize| if b == map { b as i32 - 1 } else { b as i32 - 2 };
        let elo = |a: usize| if a == 0 { 1 } else { a as i32 + 3 };
        let ehi = |b: usize| if b == map { b as i32 - 1 } else { b as i32 - 4 };
        let flo = |a: usize| if a == 0 { i32::MIN } else { a as i32 + 3 };
        let fhi = |b: usize| if b == map { i32::MAX } else { b as i32 - 5 };
        Self {
            data,
            ox: x0,
            oy: y0,
            w: x1 - x0,
            safe: (lo(x0), lo(y0), hi(x1), hi(y1)),
            erodable: (elo(x0), elo(y0), ehi(x1), ehi(y1)),
            fillable: (flo(x0), flo(y0), fhi(x1), fhi(y1)),
            map: map as i32,
            allow,
        }
    }

    /// The share of its erosion a droplet standing on cell `(x, y)` may take.
    #[inline]
    fn allowed(&self, x: i32, y: i32) -> f32 {
        if self.allow.is_empty() {
            1.0
        } else {
            self.allow[y as usize * self.map as usize + x as usize]
        }
    }

    #[inline]
    fn idx(&self, x: i32, y: i32) -> usize {
        (y as usize - self.oy) * self.w + (x as usize - self.ox)
    }

    #[inline]
    fn corners(&self, x: i32, y: i32) -> [f32; 4] {
        let (i, w) = (self.idx(x, y), self.w);
        let c = &self.data[i..i + w + 2];
        [c[0], c[1], c[w], c[w + 1]]
    }

    /// Whether a cell is on the map's border ring, which is held fixed as the base level.
    #[inline]
    fn border(&self, x: i32, y: i32) -> bool {
        x == 0 || y == 0 || x == self.map - 1 || y == self.map - 1
    }

    /// Adds `amount` at a position with bilinear weights (the seed's `DEPOSIT`). Shares
    /// that fall on the border ring leave the map; their total is returned.
    #[expect(clippy::inline_always)]
    #[inline(always)]
    fn deposit(&mut self, x: i32, y: i32, fx: f32, fy: f32, amount: f32) -> f32 {
        if within(x, 1, self.map - 2) && within(y, 1, self.map - 2) {
            // All four corners inside the border ring (nearly always): one slice.
            let (i, w) = (self.idx(x, y), self.w);
            let (a, b) = ((1.0 - fx) * (1.0 - fy), fx * (1.0 - fy));
            let (c, d) = ((1.0 - fx) * fy, fx * fy);
            let cell = &mut self.data[i..i + w + 2];
            cell[0] += amount * a;
            cell[1] += amount * b;
            cell[w] += amount * c;
            cell[w + 1] += amount * d;
            return 0.0;
        }
        let mut lost = 0.0;
        for (cx, cy, wgt) in [
            (x, y, (1.0 - fx) * (1.0 - fy)),
            (x + 1, y, fx * (1.0 - fy)),
            (x, y + 1, (1.0 - fx) * fy),
            (x + 1, y + 1, fx * fy),
        ] {
            if self.border(cx, cy) {
                lost += amount * wgt;
            } else {
                let i = self.idx(cx, cy);
                self.data[i] += amount * wgt;
            }
        }
        lost
    }

    /// Removes `amount` with the bell-shaped brush centred on `(xi + fx, yi + fy)` (the
    /// seed's `ERODE` loop, weights normalised to sum to 1 over the cells it may touch) and
    /// returns what was removed (0 when no cell of the brush may be eroded). Not inlined: in
    /// the step it made the whole loop slower (more instructions per step by cachegrind).
    #[inline(never)]
    fn erode(&mut self, xi: i32, yi: i32, fx: f32, fy: f32, amount: f32) -> f32 {
        let (vx0, vy0, vx1, vy1) = self.erodable;
        let mut wx = [0.0f32; 4];
        let mut wy = [0.0f32; 4];
        for (k, o) in [-1.0f32, 0.0, 1.0, 2.0].into_iter().enumerate() {
            let (ox, oy) = (o - fx, o - fy);
            wx[k] = ox * ox * 0.25;
            wy[k] = oy * oy * 0.25;
        }
        if within(xi, vx0 + 1, vx1 - 2) && within(yi, vy0 + 1, vy1 - 2) {
            // The whole 4 × 4 brush may be eroded (nearly always): branch-free, one slice
            // per row, each row one 4-lane vector; the total is summed column by column,
            // then the columns pairwise.
            let mut weights = [[0.0f32; 4]; 4];
            let mut columns = [0.0f32; 4];
            for (j, row) in weights.iter_mut().enumerate() {
                for k in 0..4 {
                    let b = 1.0 - wx[k] - wy[j];
                    row[k] = if b > 0.0 { b } else { 0.0 };
                    columns[k] += row[k];
                }
            }
            let total = (columns[0] + columns[1]) + (columns[2] + columns[3]);
            if total <= 0.0 {
                return 0.0;
            }
            let scale = amount / total;
            let (i, w) = (self.idx(xi - 1, yi - 1), self.w);
            let block = &mut self.data[i..i + 3 * w + 4];
            for (j, row) in weights.iter().enumerate() {
                let cells = &mut block[j * w..j * w + 4];
                for (cell, &wgt) in cells.iter_mut().zip(row) {
                    *cell -= wgt * scale;
                }
            }
            return amount;
        }
        self.erode_clipped(xi, yi, (wx, wy), amount)
    }

    /// [`View::erode`] where the brush is clipped by the erodable range.
    #[cold]
    #[inline(never)]
    fn erode_clipped(
        &mut self,
        xi: i32,
        yi: i32,
        (wx, wy): ([f32; 4], [f32; 4]),
        amount: f32,
    ) -> f32 {
        let (vx0, vy0, vx1, vy1) = self.erodable;
        let mut weights = [[0.0f32; 4]; 4];
        let mut total = 0.0f32;
        for (j, row) in weights.iter_mut().enumerate() {
            let y = yi - 1 + j as i32;
            if y < vy0 || y >= vy1 {
                continue;
            }
            for (k, wgt) in row.iter_mut().enumerate() {
                let x = xi - 1 + k as i32;
                let b = 1.0 - wx[k] - wy[j];
                if b > 0.0 && x >= vx0 && x < vx1 {
                    *wgt = b;
                    total += b;
                }
            }
        }
        if total <= 0.0 {
            return 0.0;
        }
        let scale = amount / total;
        for (j, row) in weights.iter().enumerate() {
            for (k, &wgt) in row.iter().enumerate() {
                if wgt > 0.0 {
                    let i = self.idx(xi - 1 + k as i32, yi - 1 + j as i32);
                    self.data[i] -= wgt * scale;
                }
            }
        }
        amount
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Rect {
    x0: usize,
    y0: usize,
    x1: usize,
    y1: usize,
}

enum Outcome {
    /// Came to rest; `Drop::lost` says what it dropped on the border.
    Done,
    /// Flowed off the map carrying this much sediment.
    Exited(f32),
    /// About to leave the view: finish it later on the whole map.
    Parked,
}

/// Bilinear interpolation between the corners `[h00, h10, h01, h11]` of a cell.
#[inline]
fn bilinear(c: [f32; 4], fx: f32, fy: f32) -> f32 {
    (c[0] * (1.0 - fx) + c[1] * fx) * (1.0 - fy) + (c[2] * (1.0 - fx) + c[3] * fx) * fy
}

/// Whether `lo <= v < hi` (one unsigned comparison; `lo` may be `i32::MIN`).
#[inline]
fn within(v: i32, lo: i32, hi: i32) -> bool {
    (v.wrapping_sub(lo) as u32) < (hi.wrapping_sub(lo) as u32)
}

/// The cell and offset on one axis after a move from cell `i` to offset `a` (in [−1, 2]).
#[inline]
fn move_on(i: i32, a: f32) -> (i32, f32) {
    // Branch-free: which way a droplet crosses a cell edge is anybody's guess.
    let step = i32::from(a >= 1.0) - i32::from(a < 0.0);
    (i + step, (a - step as f32).clamp(0.0, 1.0))
}

/// A uniform number in [0, 1) from a SplitMix64 stream.
#[inline]
fn next_unit(rng: &mut u64) -> f32 {
    *rng = rng.wrapping_add(0x9E37_79B9_7F4A_7C15);
    (splitmix64(*rng) >> 40) as f32 / (1u64 << 24) as f32
}

/// Droplets moved in lockstep by [`run_all`]: their steps are independent chains of
/// dependent arithmetic, so interleaving them keeps the core busy while each one waits on
/// its own square roots, divisions and loads.
const INTERLEAVE: usize = 8;

/// Runs `drops` in order, `INTERLEAVE` at a time, one step each in turn (a fixed schedule:
/// the result depends on the droplets and the map only), handing each droplet and its
/// outcome to `finish` as it ends.
fn run_all(
    view: &mut View,
    drops: impl IntoIterator<Item = Drop>,
    k: &Settings,
    map: usize,
    max_steps: u32,
    cancelled: &(dyn Fn() -> bool + Sync),
    mut finish: impl FnMut(Drop, Outcome),
) {
    let mut queue = drops.into_iter();
    let mut lanes: [Option<Drop>; INTERLEAVE] = [None; INTERLEAVE];
    let mut live = 0usize;
    for lane in &mut lanes {
        *lane = queue.next();
        live += usize::from(lane.is_some());
    }
    while live > 0 {
        for lane in &mut lanes {
            let Some(d) = lane else { continue };
            if let Some(outcome) = advance(view, d, k, map, max_steps) {
                finish(*d, outcome);
                *lane = if cancelled() { None } else { queue.next() };
                live -= usize::from(lane.is_none());
            }
        }
    }
}

/// One step of a droplet (E-DOG 2011's loop body); `Some` when the droplet ends here.
#[expect(clippy::many_single_char_names, clippy::inline_always)]
#[inline(always)]
fn advance(
    view: &mut View,
    d: &mut Drop,
    k: &Settings,
    map: usize,
    max_steps: u32,
) -> Option<Outcome> {
    let (sx0, sy0, sx1, sy1) = view.safe;
    let (xi, yi, fx, fy) = (d.xi, d.yi, d.fx, d.fy);
    if d.steps >= max_steps {
        // Path too long: the seed drops the droplet with its load still suspended.
        d.suspended = d.s;
        return Some(Outcome::Done);
    }
    // Corners and height read fresh: the seed reuses the ones sampled before its last
    // erosion or deposit, which overstates the drop ahead once the brush has lowered the
    // droplet's own cell, and lets a loaded droplet bounce between two cells.
    let c = view.corners(xi, yi);
    let mut h = bilinear(c, fx, fy);
    let [h00, h10, h01, h11] = c;
    // Gradient of the cell and the new direction with inertia.
    let gx = h00 + h01 - h10 - h11;
    let gy = h00 + h10 - h01 - h11;
    let mut dx = (d.dx - gx) * k.ki + gx;
    let mut dy = (d.dy - gy) * k.ki + gy;
    let mut rng = d.rng;
    let dl = (dx * dx + dy * dy).sqrt();
    if dl <= f32::EPSILON {
        let a = next_unit(&mut rng) * std::f32::consts::TAU;
        (dx, dy) = (libm::cosf(a), libm::sinf(a));
    } else {
        dx /= dl;
        dy /= dl;
    }
    // The next position: one cell on at most (|dx|, |dy| ≤ 1), so the new cell and offset
    // come from comparisons. Adding 1 to a tiny negative offset may round to exactly 1,
    // which names the same point as offset 0 in the next cell; the clamp keeps the ulp by
    // which a normalised direction may exceed 1 from pushing an offset out of [0, 1].
    let (ax, ay) = (fx + dx, fy + dy);
    let (nxi, nfx) = move_on(xi, ax);
    let (nyi, nfy) = move_on(yi, ay);
    if !within(nxi, sx0, sx1) || !within(nyi, sy0, sy1) {
        // (The safe range reaches the map's edges where the view does.)
        if nxi < 0 || nyi < 0 || nxi >= map as i32 - 1 || nyi >= map as i32 - 1 {
            return Some(Outcome::Exited(d.s + d.lost));
        }
        return Some(Outcome::Parked);
    }
    let nh = bilinear(view.corners(nxi, nyi), nfx, nfy);
    let (fx0, fy0, fx1, fy1) = view.fillable;
    if !(within(xi, fx0, fx1) && within(yi, fy0, fy1))
        && (nh >= h || d.s - (h - nh).max(k.min_slope) * d.v * d.w * k.kq >= 0.0)
    {
        // It would deposit on the band along the view's edge: go on later, where the band
        // is inside a region (see `View::erodable`).
        return Some(Outcome::Parked);
    }
    d.dx = dx;
    d.dy = dy;
    d.rng = rng;
    d.steps += 1;
    // A rise ahead: fill the pit up to it, or die trying.
    if nh >= h {
        let ds = (nh - h) + 0.001;
        if ds >= d.s {
            d.lost += view.deposit(xi, yi, fx, fy, d.s);
            d.s = 0.0;
            return Some(Outcome::Done);
        }
        d.lost += view.deposit(xi, yi, fx, fy, ds);
        h += ds;
        d.s -= ds;
        d.v = 0.0;
    }
    let mut dh = h - nh;
    let q = dh.max(k.min_slope) * d.v * d.w * k.kq;
    let ds = d.s - q;
    if ds >= 0.0 {
        let ds = ds * k.kd;
        d.lost += view.deposit(xi, yi, fx, fy, ds);
        dh += ds;
        d.s -= ds;
    } else {
        let ds = (-ds * k.kr).min(dh * 0.99) * view.allowed(xi, yi);
        let ds = view.erode(xi, yi, fx, fy, ds);
        dh -= ds;
        d.s += ds;
    }
    d.v = (d.v * d.v + k.kg * dh).max(0.0).sqrt();
    d.w *= 1.0 - k.kw;
    (d.xi, d.yi, d.fx, d.fy) = (nxi, nyi, nfx, nfy);
    None
}

/// Runs `count` droplets on a square `map × map` height field given in cell units
/// (metres / cell size). `cancelled` is polled between droplets; `progress` gets the fraction
/// done after each phase of a round. Deterministic for a given `seed` whatever the thread count.
///
/// # Errors
/// `Cancelled` when `cancelled()` turned true.
pub fn erode(
    heights: &mut [f32],
    map: usize,
    count: u64,
    seed: u64,
    k: &Settings,
    cancelled: &(dyn Fn() -> bool + Sync),
    progress: &dyn Fn(f32),
) -> Result<Report, NodeError> {
    erode_where(
        heights,
        (&[], &[]),
        map,
        count,
        seed,
        k,
        cancelled,
        progress,
    )
}

/// Parked droplets finish one at a time on the whole map.
fn finish_parked(
    heights: &mut [f32],
    allow: &[f32],
    map: usize,
    parked: Vec<Drop>,
    (k, max_steps): (&Settings, u32),
    cancelled: &(dyn Fn() -> bool + Sync),
    report: &mut Report,
) -> Result<(), NodeError> {
    report.parked += parked.len() as u64;
    let whole = Rect {
        x0: 0,
        y0: 0,
        x1: map,
        y1: map,
    };
    let mut view = View::new(heights, whole, map, allow);
    // (`advance` samples the droplet's cell afresh, so the map having changed since it
    // was parked needs nothing more.)
    run_all(
        &mut view,
        parked,
        k,
        map,
        max_steps,
        cancelled,
        |d, o| match o {
            Outcome::Parked => unreachable!("the whole map has no region to leave"),
            o => report.count(&d, o),
        },
    );
    if cancelled() {
        return Err(NodeError::Cancelled);
    }
    Ok(())
}

/// The side of the world-anchored tiles [`erode_anchored`] runs on, in cells: their regions
/// (the tile and half a tile around it) hold the whole path of a refinement's droplet (at most
/// 32 cells, its brush and the frozen band of `View::erodable`), so none is parked.
const ANCHORED_TILE: usize = 128;

/// Where a refinement's droplets fall: `density` per cell of a window of side `map` at
/// `origin` in a world of `world` cells per side, each cell's droplets drawn from its world
/// index and `seed`.
struct Rain {
    origin: (usize, usize),
    world: usize,
    density: f64,
    seed: u64,
}

/// Rounds of [`erode_anchored`]: each cell's droplets fall in one of them (drawn from its
/// hash), so a tile runs a sixteenth of its rain before its neighbours take their turn, as
/// [`erode_where`]'s rounds do — a tile's whole rain at once would leave its edges visible.
const ANCHORED_ROUNDS: u64 = 16;

/// How many droplets fall on a cell: Poisson-distributed with mean `density` (what
/// `density × cells` droplets on uniformly random cells give each cell), from `u` in [0, 1).
fn poisson(density: f64, u: f64) -> u64 {
    let mut p = (-density).exp();
    let (mut k, mut cdf) = (0u64, p);
    while u > cdf && k < 1024 {
        k += 1;
        p *= density / k as f64;
        cdf += p;
    }
    k
}

/// [`erode_where`] with the droplets tied to the world rather than to the map: each cell
/// draws its own from its world index (how many, by [`poisson`], and in which of
/// [`ANCHORED_ROUNDS`] they fall), and each round runs on world-anchored tiles of
/// [`ANCHORED_TILE`], each tile's droplets in an order drawn from their hashes (the colours
/// taking turns to go first). A window of the world (a tiled build's piece,
/// `eval::pieces`) thus runs the very droplets the whole map runs there, on the same tiles in
/// the same order: only what crosses the window's edge differs.
fn erode_anchored(
    heights: &mut [f32],
    (allow, load): (&[f32], &[f32]),
    map: usize,
    rain: &Rain,
    k: &Settings,
    cancelled: &(dyn Fn() -> bool + Sync),
    progress: &dyn Fn(f32),
) -> Result<Report, NodeError> {
    let mut report = Report::default();
    if map < 2 || rain.density <= 0.0 {
        return Ok(report);
    }
    let max_steps = k.max_steps(map);
    let grid = Tiling::anchored(map, rain.origin, ANCHORED_TILE);
    for round in 0..ANCHORED_ROUNDS {
        let drops = |j: usize| {
            let t = grid.tiles[j].0;
            let mut list: Vec<(u64, u64, Drop)> = Vec::new();
            // As `spawn`: no droplet starts on the last row or column.
            for y in t.y0..t.y1.min(map - 1) {
                for x in t.x0..t.x1.min(map - 1) {
                    let g = ((rain.origin.1 + y) * rain.world + rain.origin.0 + x) as u64;
                    let cell = splitmix64(rain.seed ^ splitmix64(g));
                    if cell % ANCHORED_ROUNDS != round {
                        continue;
                    }
                    let u = (splitmix64(cell) >> 11) as f64 / (1u64 << 53) as f64;
                    for m in 0..poisson(rain.density, u) {
                        let key = splitmix64(cell ^ splitmix64(m + 1));
                        let mut d = Drop::at(x, y, key);
                        if let Some(&s) = load.get(y * map + x) {
                            d.s = s;
                        }
                        list.push((key, (g << 10) | m, d));
                    }
                }
            }
            list.sort_unstable_by_key(|e| (e.0, e.1));
            list.into_iter().map(|e| e.2).collect()
        };
        let done = |c: usize| {
            progress((round as f32 + (c + 1) as f32 / 5.0) / ANCHORED_ROUNDS as f32);
        };
        let parked = run_tiled(
            heights,
            allow,
            map,
            &grid,
            &drops,
            round as usize,
            (k, max_steps),
            cancelled,
            &mut report,
            &done,
        )?;
        finish_parked(
            heights,
            allow,
            map,
            parked,
            (k, max_steps),
            cancelled,
            &mut report,
        )?;
    }
    progress(1.0);
    Ok(report)
}

/// [`erode`] where a droplet standing on cell `i` takes only `allow[i]` (in [0, 1]) of the
/// erosion E-DOG's rule gives it (`allow` empty: all of it); deposition is unchanged.
#[expect(clippy::too_many_arguments)]
fn erode_where(
    heights: &mut [f32],
    (allow, load): (&[f32], &[f32]),
    map: usize,
    count: u64,
    seed: u64,
    k: &Settings,
    cancelled: &(dyn Fn() -> bool + Sync),
    progress: &dyn Fn(f32),
) -> Result<Report, NodeError> {
    let mut report = Report::default();
    if map < 2 || count == 0 {
        return Ok(report);
    }
    let max_steps = k.max_steps(map);
    let grids = [Tiling::new(map, false), Tiling::new(map, true)];
    // Droplets per round: a sixteenth of the cells (at least 16 384), so the per-round
    // copies of the tile regions stay small next to the droplets' own work.
    let round = ((map * map / 16) as u64).max(1 << 14);
    let mut start = 0u64;
    while start < count {
        let end = (start + round).min(count);
        let mut parked: Vec<Drop> = (start..end)
            .map(|i| {
                let mut d = spawn(seed, i, map);
                if let Some(&s) = load.get(d.yi as usize * map + d.xi as usize) {
                    d.s = s;
                }
                d
            })
            .collect();
        // Two tiled passes: the droplets parked by the first go on in the shifted grid.
        for (pass, grid) in grids.iter().enumerate() {
            let phase = |colour: usize| {
                let done = (pass * 4 + colour + 1) as f32 / 9.0;
                progress((start as f32 + (end - start) as f32 * done) / count as f32);
            };
            let lists = tiles::buckets(grid, &parked);
            parked = run_tiled(
                heights,
                allow,
                map,
                grid,
                &|j| lists[j].clone(),
                0,
                (k, max_steps),
                cancelled,
                &mut report,
                &phase,
            )?;
        }
        finish_parked(
            heights,
            allow,
            map,
            parked,
            (k, max_steps),
            cancelled,
            &mut report,
        )?;
        start = end;
        progress(start as f32 / count as f32);
    }
    Ok(report)
}

crate::node! {
    /// Carves gullies by rolling simulated raindrops downhill, each wearing the ground and dropping
    /// sediment.
    /// Particle erosion after E-DOG 2011 ("Water erosion on heightmap terrain"): droplets start on
    /// random cells and run downhill along the gradient with inertia Ki; carry capacity q =
    /// max(slope, minSlope)·v·w·Kq ("Understanding water erosion"); below capacity they erode Kr·(q
    /// − s) with a bell-shaped brush of radius 2 but never more than the drop ahead, above it they
    /// deposit Kd·(s − q) bilinearly; a droplet facing a rise fills the pit and goes on with zero
    /// speed, or dies there; v = √(v² + 2g·Δh), w ← w·(1 − Kw) ("Code sample"). Defaults are
    /// E-DOG's: Kq 10, Kw 0.001, Kr 0.9, Kd 0.02, Ki 0.1, minSlope 0.05, g 20. Heights are in cell
    /// units (metres / cell size) so slopes are true tangents. The droplet count is density ×
    /// cells. Deterministic and parallel (tiles of one checkerboard colour run at once; droplets
    /// that would leave their tile's region go on in a grid shifted by half a tile, the rest on the
    /// whole map; eight droplets advance in lockstep). Brush weights are normalised (E-DOG's only
    /// sum to about 1), so material is conserved except what droplets carry off the map edge.
    /// Outputs: height, erosion (wear) and deposition masks, 1 = the largest change. Resolution: by
    /// default (detail = consistent) the process runs in full at base_resolution (256²), where
    /// every parameter means what it does in E-DOG 2011, and a finer build adds only detail below
    /// those cells (one refinement at the build's resolution: as many droplets per cell, each
    /// running at most 32 of its cells, eroding only where the base eroded and carrying the
    /// base's deposits to lay them down again, its drift over the base's cells taken out), so a preview and
    /// a build show the same terrain (orogen parity); the refinement's droplets are drawn from
    /// the world's cells, so a tiled build runs the whole map's droplets in every tile.
    /// detail = native runs it once at the resolution being built.
    pub struct Droplet {
        id: "droplet_erosion",
        label: "Hydraulic erosion (droplets)",
        category: Erosion,
        version: 6,
        params: DropletParams,
        inputs: DropletIn {
            /// Terrain to erode.
            r#in: height,
        },
        outputs: DropletOut {
            /// Eroded terrain.
            out: height,
            /// Where soil was removed (wear), 1 = deepest.
            erosion: mask,
            /// Where sediment settled, 1 = thickest.
            deposition: mask,
        },
        traits: crate::node::Traits {
            parity: crate::node::Parity::ErosionCorrelation(0.85),
            ..crate::node::Traits::DEFAULT
        },
    }
}

impl Node for Droplet {
    const TILE_REFINE: Option<crate::node::TileRefineFn> = levels::tile::<Self>();
    /// The peak RSS measured at 1024², in fields, rounded up (docs/reliability.md).
    // + 4 for the coarse-to-fine levels at the target size (start, change, drift, delta).
    // + 4 for the refinement's smoothed change, erosion share, loads and start, + 1 for the
    // coarse change kept beside them.
    const SCRATCH_FIELDS: u32 = 2 + 4 + 5;

    fn eval(ctx: &EvalCtx, inputs: DropletIn, p: &DropletParams) -> Result<DropletOut, NodeError> {
        levels::evaluate::<Self>(ctx, inputs, p)
    }
}

/// The process run once at the context's resolution (`detail = native`, and the base level
/// of the consistent mode).
fn native(ctx: &EvalCtx, inputs: DropletIn, p: &DropletParams) -> Result<DropletOut, NodeError> {
    run(ctx, inputs.r#in, p, (&[], &[]), false)
}

/// [`native`] on `src` with [`erode_where`]'s `allow` and the droplets' starting `load`;
/// `anchored`: the droplets of [`erode_anchored`], tied to the world's cells.
fn run(
    ctx: &EvalCtx,
    src: &Field,
    p: &DropletParams,
    guide: (&[f32], &[f32]),
    anchored: bool,
) -> Result<DropletOut, NodeError> {
    if src.width() != src.height() {
        return Err(NodeError::Failed(
            "droplet erosion needs a square map".into(),
        ));
    }
    let map = src.width();
    let cell = ctx.cell_size_m() as f32;
    let mut h: Vec<f32> = src.data().iter().map(|v| v / cell).collect();
    let k = Settings {
        kq: p.kq as f32,
        kw: p.kw as f32,
        kr: p.kr as f32,
        kd: p.kd as f32,
        ki: p.ki as f32,
        min_slope: p.min_slope as f32,
        kg: 2.0 * p.g as f32,
        path_limit: p.path_limit as f32,
    };
    let cancel = ctx.cancel;
    let cancelled = move || cancel.is_cancelled();
    let w = ctx.window;
    let mut seed = ctx.rng_seed(p.seed);
    if anchored {
        let rain = Rain {
            origin: (w.x0, w.y0),
            world: ctx.resolution,
            density: p.density,
            seed,
        };
        erode_anchored(&mut h, guide, map, &rain, &k, &cancelled, &|f| {
            ctx.report(f);
        })?;
    } else {
        let count = (p.density * (map * map) as f64).round() as u64;
        // A window of the map (a piece of `detail = native`, `eval::pieces`) draws its own
        // droplets: the same seed everywhere would repeat one pattern from piece to piece.
        if (w.x0, w.y0, w.width, w.height) != (0, 0, ctx.resolution, ctx.resolution) {
            seed = splitmix64(seed ^ splitmix64(((w.x0 as u64) << 32) | w.y0 as u64));
        }
        erode_where(&mut h, guide, map, count, seed, &k, &cancelled, &|f| {
            ctx.report(f);
        })?;
    }
    let out = Field::from_vec(map, map, h.iter().map(|v| v * cell).collect())
        .ok_or_else(|| NodeError::shape(map, map))?;
    let (wear, deposit) = super::change_masks(src, &out);
    Ok(DropletOut {
        out,
        erosion: wear,
        deposition: deposit,
    })
}

#[cfg(test)]
mod tests {
    use super::{erode_anchored, Rain, Settings};

    /// Rolling hills on a tilt, in cell units (slopes up to about 0.3).
    fn terrain(world: usize) -> Vec<f32> {
        (0..world * world)
            .map(|i| {
                let (x, y) = ((i % world) as f32, (i / world) as f32);
                0.05 * (x + 0.5 * y)
                    + 6.0 * (x / 23.0).sin() * (y / 31.0).cos()
                    + 3.0 * ((x + y) / 13.0).sin()
            })
            .collect()
    }

    /// A refinement's droplets run at most 32 cells of the map they run on.
    fn settings(map: usize) -> Settings {
        Settings {
            path_limit: 32.0 / map as f32,
            ..Settings::seed001()
        }
    }

    /// The refinement's droplets on a window of the world (a tiled build's piece) are the whole
    /// map's there: 64 cells in from the window's edge (a piece's halo and blend band) the
    /// result differs from the whole map's only by what crossed the edge and spread from
    /// droplet to droplet, a fraction of what droplets drawn for the window alone change
    /// (docs/perf-log.md). Any thread count gives the same bits.
    #[test]
    fn a_windows_droplets_are_the_whole_maps() {
        let (world, side, origin) = (384usize, 256usize, (64usize, 96usize));
        let start = terrain(world);
        let rain = |origin, seed| Rain {
            origin,
            world,
            density: 1.0,
            seed,
        };
        let run = |h: &mut Vec<f32>, map, rain: &Rain, threads| {
            let k = settings(map);
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .expect("pool")
                .install(|| erode_anchored(h, (&[], &[]), map, rain, &k, &|| false, &|_| {}))
                .expect("erode")
        };
        let mut whole = start.clone();
        run(&mut whole, world, &rain((0, 0), 7), 2);
        let mut again = start.clone();
        run(&mut again, world, &rain((0, 0), 7), 1);
        assert_eq!(whole, again, "thread count changed the bits");
        let cut = |f: &[f32]| -> Vec<f32> {
            (0..side * side)
                .map(|i| f[(origin.1 + i / side) * world + origin.0 + i % side])
                .collect()
        };
        let compare = |window: &[f32]| {
            // The core: 64 cells (a piece's halo and blend band) in from the window's edge.
            let (mut diff, mut change) = (0.0f64, 0.0f64);
            let w0 = cut(&start);
            let ww = cut(&whole);
            for y in 64..side - 64 {
                for x in 64..side - 64 {
                    let i = y * side + x;
                    diff += f64::from((window[i] - ww[i]).abs());
                    change += f64::from((ww[i] - w0[i]).abs());
                }
            }
            diff / change
        };
        let mut window = cut(&start);
        run(&mut window, side, &rain(origin, 7), 2);
        let same = compare(&window);
        let mut other = cut(&start);
        run(&mut other, side, &rain(origin, 8), 2);
        let independent = compare(&other);
        println!("core |Δ| ÷ |change|: same rain {same:.4}, other rain {independent:.4}");
        assert!(same < 0.2, "{same}");
        assert!(independent > 3.0 * same, "{independent} against {same}");
    }
}
