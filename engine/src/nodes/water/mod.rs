//! Water: where it flows, where it pools, where rivers run, where the sea is, where snow lies —
//! the maps artists texture and place water with. Every node reads the whole map (a lake, a
//! river or an avalanche depends on terrain far away), so in a tiled build they run once over
//! the world at the coarse size.
//!
//! Shared here: the priority flood every water node starts from ([`flood`]: Barnes et al. 2014,
//! in parallel strips after Barnes 2016).
//!
//! Everything here is a function of the terrain alone (ties broken by cell index), so the same
//! bytes on any thread count. Every node starts from the same filled surface and the same
//! single-direction receivers ([`flood`]). Where a sharp edge crosses a cell, `rivers` and `sea`
//! give coverage rather than a flag, so a coarse preview covers what a finer build does (see
//! `nodes::mask::terrain_masks` on masks that keep the preview promise). In a tiled build the water
//! nodes are global: they run once at the coarse size, the water surfaces carried as a change onto
//! each tile's terrain, the masks upsampled.

pub mod flood;
pub mod flow_accumulation;
pub mod lakes;
pub mod ltd;
pub mod rivers;
pub mod sea;
pub mod snow;
pub mod sweep;
pub mod tiled;

pub use flood::{priority_flood, Flood};

use crate::node::Params as _;
use crate::node::Registry;
use crate::nodes::erosion::flow::D8;
use crate::nodes::filter::normalize;

/// Registers the water nodes.
pub fn register(reg: &mut Registry) {
    reg.register::<flow_accumulation::FlowAccumulation>();
    reg.register::<lakes::Lakes>();
    reg.register::<rivers::Rivers>();
    reg.register::<sea::Sea>();
    reg.register::<snow::Snow>();
}

/// Whether a tiled build can run node type `id` tile by tile, giving the very bits of its
/// whole-map run: the water nodes with only the tiles' perimeters exchanged ([`tiled`]), and
/// `normalize` in two passes (its input's extremes over every tile, then the stretch).
#[must_use]
pub fn tiles_exactly(id: &str, _values: &[crate::node::ParamValue]) -> bool {
    matches!(
        id,
        "rivers" | "lakes" | "flow_accumulation" | "snow" | "sea" | "normalize"
    )
}

/// What a water node run tile by tile reads: the tiling, where its fields live between
/// passes, the node's inputs over any window (terrain, rain), its parameter values, the
/// cell size, and whether the run was cancelled.
pub struct TileRun<'a> {
    pub tiling: &'a tiled::Tiling,
    pub scratch: &'a tiled::Scratch,
    pub read: &'a tiled::Reader<'a>,
    pub values: &'a [crate::node::ParamValue],
    pub cell_m: f64,
    /// The world's frame: its side in metres and its height range.
    pub world: crate::field::World,
    pub cancelled: &'a (dyn Fn() -> bool + Sync),
}

impl TileRun<'_> {
    fn check(&self) -> Result<(), String> {
        if (self.cancelled)() {
            Err("cancelled".into())
        } else {
            Ok(())
        }
    }
}

/// Runs node type `id` tile by tile (see [`tiles_exactly`]), handing each tile's outputs
/// (over its window, in port order) to `emit`, tile 0 first.
pub fn run_tiled(
    id: &str,
    run: &TileRun,
    emit: &mut dyn FnMut(usize, Vec<crate::field::Field>) -> Result<(), String>,
) -> Result<(), String> {
    match id {
        "rivers" => rivers::tiled(run, emit),
        "lakes" => lakes::tiled(run, emit),
        "flow_accumulation" => flow_accumulation::tiled(run, emit),
        "snow" => snow::tiled(run, emit),
        "sea" => sea::tiled(run, emit),
        "normalize" => normalize_tiled(run, emit),
        _ => Err(format!("node type \"{id}\" does not run tile by tile")),
    }
}

/// `normalize` (`nodes::filter::normalize`) run tile by tile in a tiled build whose whole map
/// would not fit the stage memory: the input's finite extremes over every tile (a minimum and
/// a maximum do not depend on the order they are taken in), then each tile stretched: the
/// whole-map run's bits.
fn normalize_tiled(
    run: &TileRun,
    emit: &mut dyn FnMut(usize, Vec<crate::field::Field>) -> Result<(), String>,
) -> Result<(), String> {
    let p = normalize::NormalizeParams::from_values(run.values);
    let t = run.tiling;
    let mut extremes: Option<(f32, f32)> = None;
    for k in 0..t.count() {
        run.check()?;
        let (z, _) = (run.read)(t.window(k))?;
        for v in z.into_iter().filter(|v| v.is_finite()) {
            extremes = Some(extremes.map_or((v, v), |(a, b)| (a.min(v), b.max(v))));
        }
    }
    let stretch = normalize::Stretch::new(&run.world, &p, extremes);
    for k in 0..t.count() {
        run.check()?;
        let w = t.window(k);
        let (z, _) = (run.read)(w)?;
        let out = z.into_iter().map(|h| stretch.apply(h)).collect();
        let field = crate::field::Field::from_vec(w.width, w.height, out).ok_or("field size")?;
        emit(k, vec![field])?;
    }
    Ok(())
}

/// Rain's fixed point in single-direction accumulation: a cell under rain 1 counts this many
/// units. Integer sums do not depend on the order they are added in, so a drainage area
/// accumulated tile by tile ([`tiled`]) has the very bits of the whole map's.
pub const RAIN_ONE: f64 = (1u64 << 24) as f64;

/// Each cell's own water in integer units: 1 a cell without a rain mask, rain × [`RAIN_ONE`]
/// (rounded, rain clamped to [0, 10⁶]) with one.
#[must_use]
pub fn units(rain: Option<&[f32]>, cells: usize) -> Vec<u64> {
    match rain {
        Some(r) => r
            .iter()
            .map(|&v| (f64::from(v).clamp(0.0, 1.0e6) * RAIN_ONE).round() as u64)
            .collect(),
        None => vec![1; cells],
    }
}

/// The area, in m², of one unit of [`units`] on cells of `cell_area` m².
#[must_use]
pub fn unit_area(cell_area: f64, rain: bool) -> f64 {
    if rain {
        cell_area / RAIN_ONE
    } else {
        cell_area
    }
}

/// "No cell".
pub const NONE: u32 = u32::MAX;

/// Whether cell `i` of a `w × h` grid lies on the map edge.
#[must_use]
pub fn is_edge(i: usize, w: usize, h: usize) -> bool {
    let (x, y) = (i % w, i / w);
    x == 0 || y == 0 || x + 1 == w || y + 1 == h
}

/// The 8-neighbours of cell `c` of a `w × h` grid that lie on the map, in [`D8`] order.
pub fn neighbours(c: usize, w: usize, h: usize) -> impl Iterator<Item = usize> {
    let (x, y) = ((c % w) as isize, (c / w) as isize);
    D8.iter().filter_map(move |&(dx, dy)| {
        let (nx, ny) = (x + dx as isize, y + dy as isize);
        (nx >= 0 && ny >= 0 && nx < w as isize && ny < h as isize)
            .then(|| ny as usize * w + nx as usize)
    })
}

/// The 8-neighbours of the cells of a `w × h` grid, at fixed offsets off the map edge (the
/// per-cell loops of flat routing and accumulation).
#[derive(Clone, Copy, Debug)]
pub struct Grid {
    w: usize,
    h: usize,
    offsets: [isize; 8],
}

impl Grid {
    #[must_use]
    pub fn new(w: usize, h: usize) -> Self {
        Self {
            w,
            h,
            offsets: D8.map(|(dx, dy)| dy as isize * w as isize + dx as isize),
        }
    }

    /// The neighbours on the map of the cell at `(x, y)`, in [`D8`] order: the first `count`.
    #[inline]
    #[must_use]
    pub fn around(&self, x: usize, y: usize) -> ([usize; 8], usize) {
        let c = y * self.w + x;
        let mut cells = [0usize; 8];
        if x > 0 && y > 0 && x + 1 < self.w && y + 1 < self.h {
            for (n, o) in cells.iter_mut().zip(self.offsets) {
                *n = c.wrapping_add_signed(o);
            }
            return (cells, 8);
        }
        let mut count = 0;
        for j in neighbours(c, self.w, self.h) {
            cells[count] = j;
            count += 1;
        }
        (cells, count)
    }
}

/// Calls `f` with the cells of each lake: each 8-connected set of cells the flood raised
/// (`level > z`), in the order of their first cell.
pub fn for_each_lake(z: &[f32], level: &[f32], w: usize, h: usize, mut f: impl FnMut(&[usize])) {
    let n = w * h;
    let mut seen = vec![false; n];
    let mut lake = Vec::new();
    let mut stack = Vec::new();
    for start in 0..n {
        if seen[start] || level[start] <= z[start] {
            continue;
        }
        lake.clear();
        stack.push(start);
        seen[start] = true;
        while let Some(c) = stack.pop() {
            lake.push(c);
            for j in neighbours(c, w, h) {
                if !seen[j] && level[j] > z[j] {
                    seen[j] = true;
                    stack.push(j);
                }
            }
        }
        f(&lake);
    }
}
