//! Water over a map too large to hold at once: the priority flood, every cell's receiver and
//! the single-direction drainage area, computed tile by tile with only the tiles' perimeters
//! exchanged — bit for bit what the whole-map functions give ([`super::priority_flood`],
//! [`super::flow_accumulation::Routes`] with d8 routing) on the same terrain.
//!
//! The passes, each over one tile at a time (tiles in parallel), a small global step between:
//!
//! 1. **Flood** (Barnes 2016, "Parallel priority-flood depression filling for trillion cell
//!    digital elevation models", §3): each tile is flooded from its own perimeter, every
//!    perimeter cell off the map edge starting a watershed label, the map edge the ocean; the
//!    tile keeps its levels and labels and sends its perimeter (label, height) and the spill
//!    elevations between its labels. The global step adds the edges across tile seams (a
//!    perimeter cell and each of its 8-neighbours in another tile, at the higher of their
//!    heights) and floods that label graph from the ocean (a minimax Dijkstra): each label's
//!    spill level. A cell's level is the larger of its tile's level and its label's spill. The
//!    filled surface is unique, so this is the whole map's.
//! 2. **Receivers**: the steepest lower neighbour needs the levels one cell around the tile
//!    (read from the neighbours' tiles). Flats — connected cells of one level with nothing
//!    lower — are routed breadth first from their rims as the whole map does; a flat that
//!    stays inside the tile is routed there; a flat reaching over a tile border is sent, cell
//!    by cell, to one small global breadth-first pass over every such flat, seeded in the map's
//!    row order as the whole map seeds it (each flat's routing depends on that flat alone).
//! 3. **Drainage area** (Barnes 2017, "Parallel non-divergent flow accumulation for trillion
//!    cell digital elevation models on desktops or clusters", §2): each tile accumulates what
//!    falls on it, in integer units ([`super::units`]); it sends where water
//!    leaving it goes and how much (its exits), and, for each perimeter cell, where water
//!    entering there leaves the tile (its link). The global step resolves what enters each
//!    perimeter cell in topological order over those links; a second local pass adds it on
//!    the way down. Integer sums do not depend on their order: the same bits as the whole map.
//!
//! Memory per tile pass: a few fields of the tile (and a one- or two-cell ring around it);
//! the global steps hold the perimeters (a few MB at 4096² tiles) and the cells of flats that
//! cross a tile border. Fields between passes live in a [`Scratch`]: in memory or in files.

use super::flood::{flood_window, solve, steepest, OCEAN};
use super::{units, Grid, NONE};
use crate::node::Window;
use crate::nodes::erosion::flow::D8;
use rayon::prelude::*;
use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// "No cell" among global cell indices (`usize`: every index of a 65536² map is a cell).
const NOWHERE: usize = usize::MAX;

/// A square `n × n` map cut into tiles: column bounds `xs` and row bounds `ys` (each from 0 to
/// `n`), tile `k` at column `k mod cols`, row `k div cols`.
#[derive(Clone, Debug)]
pub struct Tiling {
    pub n: usize,
    pub xs: Vec<usize>,
    pub ys: Vec<usize>,
}

impl Tiling {
    /// Tiles of `size` (the last ones smaller) over an `n × n` map.
    #[must_use]
    pub fn uniform(n: usize, size: usize) -> Self {
        let size = size.max(1);
        let mut xs: Vec<usize> = (0..n).step_by(size).collect();
        xs.push(n);
        Self {
            n,
            ys: xs.clone(),
            xs,
        }
    }

    fn cols(&self) -> usize {
        self.xs.len() - 1
    }

    /// How many tiles.
    #[must_use]
    pub fn count(&self) -> usize {
        self.cols() * (self.ys.len() - 1)
    }

    /// Tile `k`'s window.
    #[must_use]
    pub fn window(&self, k: usize) -> Window {
        let (i, j) = (k % self.cols(), k / self.cols());
        Window {
            x0: self.xs[i],
            y0: self.ys[j],
            width: self.xs[i + 1] - self.xs[i],
            height: self.ys[j + 1] - self.ys[j],
        }
    }

    /// The tile holding cell `(x, y)`.
    fn tile_of(&self, x: usize, y: usize) -> usize {
        let i = self.xs[1..].partition_point(|&b| b <= x);
        let j = self.ys[1..].partition_point(|&b| b <= y);
        j * self.cols() + i
    }

    pub(super) fn on_map_edge(&self, x: usize, y: usize) -> bool {
        x == 0 || y == 0 || x + 1 == self.n || y + 1 == self.n
    }
}

/// A value kept in [`Scratch`] (little-endian).
pub trait Plain: Copy + Default + Send + Sync {
    const SIZE: usize;
    fn read(b: &[u8]) -> Self;
    fn write(self, out: &mut Vec<u8>);
}

macro_rules! plain {
    ($($t:ty),*) => {$(
        impl Plain for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            fn read(b: &[u8]) -> Self {
                let mut a = [0u8; std::mem::size_of::<$t>()];
                a.copy_from_slice(&b[..Self::SIZE]);
                <$t>::from_le_bytes(a)
            }
            fn write(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
        }
    )*};
}
plain!(u8, u32, u64, f32);

/// Where the tile passes keep a tile's fields between passes: in memory, or as files in a
/// folder the caller owns (`tile-<k>.<name>`, raw little-endian, read back row by row).
pub struct Scratch {
    dir: Option<PathBuf>,
    mem: Mutex<Held>,
}

/// Fields held in memory, by tile and name.
type Held = HashMap<(usize, &'static str), Arc<Vec<u8>>>;

impl Scratch {
    #[must_use]
    pub fn in_memory() -> Self {
        Self {
            dir: None,
            mem: Mutex::default(),
        }
    }

    /// Files in `dir` (which must exist and belong to the caller).
    #[must_use]
    pub fn in_folder(dir: PathBuf) -> Self {
        Self {
            dir: Some(dir),
            mem: Mutex::default(),
        }
    }

    fn path(&self, k: usize, name: &str) -> Option<PathBuf> {
        self.dir
            .as_ref()
            .map(|d| d.join(format!("tile-{k}.{name}")))
    }

    /// Stores tile `k`'s field `name`.
    pub fn put<T: Plain>(&self, k: usize, name: &'static str, data: &[T]) -> Result<(), String> {
        let mut bytes = Vec::with_capacity(data.len() * T::SIZE);
        for &v in data {
            v.write(&mut bytes);
        }
        if let Some(p) = self.path(k, name) {
            // A scratch file is read back only by this run: no rename needed, but never
            // through a link planted in its place (removed, then created anew).
            use std::io::Write;
            let fail = |e: std::io::Error| format!("cannot write {}: {e}", p.display());
            match std::fs::remove_file(&p) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(fail(e)),
                _ => {}
            }
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&p)
                .map_err(fail)?;
            return f.write_all(&bytes).map_err(fail);
        }
        let mut m = self.mem.lock().map_err(|_| "scratch lock poisoned")?;
        m.insert((k, name), Arc::new(bytes));
        Ok(())
    }

    /// Tile `k`'s field `name` over `want` (a part of the tile's window `tile`), rows of `want`
    /// into `out`.
    fn read_part<T: Plain>(
        &self,
        k: usize,
        name: &'static str,
        tile: Window,
        want: Window,
        out: &mut [T],
        stride: usize,
    ) -> Result<(), String> {
        let (x0, x1, y0, y1) = tile.overlap(&want);
        if x0 >= x1 || y0 >= y1 {
            return Ok(());
        }
        let expected = (tile.width * tile.height * T::SIZE) as u64;
        let mut copy_row = |y: usize, bytes: &[u8]| {
            let dst = &mut out[(y - want.y0) * stride + (x0 - want.x0)..][..x1 - x0];
            for (d, b) in dst.iter_mut().zip(bytes.chunks_exact(T::SIZE)) {
                *d = T::read(b);
            }
        };
        if let Some(p) = self.path(k, name) {
            use std::io::{Read, Seek, SeekFrom};
            let fail = |e: std::io::Error| format!("cannot read {}: {e}", p.display());
            // Never through a link or into a FIFO planted in its place: opened without
            // following links or blocking, then checked on the open handle.
            let mut o = std::fs::OpenOptions::new();
            o.read(true);
            #[cfg(unix)]
            {
                use std::os::unix::fs::OpenOptionsExt;
                o.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
            }
            let mut f = o.open(&p).map_err(fail)?;
            let meta = f.metadata().map_err(fail)?;
            if !meta.file_type().is_file() || meta.len() != expected {
                return Err(format!(
                    "{} is not the {expected} bytes this pass wrote",
                    p.display()
                ));
            }
            let mut row = vec![0u8; (x1 - x0) * T::SIZE];
            for y in y0..y1 {
                let at = ((y - tile.y0) * tile.width + (x0 - tile.x0)) * T::SIZE;
                f.seek(SeekFrom::Start(at as u64)).map_err(fail)?;
                f.read_exact(&mut row).map_err(fail)?;
                copy_row(y, &row);
            }
            return Ok(());
        }
        let bytes = {
            let m = self.mem.lock().map_err(|_| "scratch lock poisoned")?;
            Arc::clone(
                m.get(&(k, name))
                    .ok_or_else(|| format!("tile {k} has no {name} yet"))?,
            )
        };
        if bytes.len() as u64 != expected {
            return Err(format!("tile {k}'s {name} has the wrong size"));
        }
        for y in y0..y1 {
            let at = ((y - tile.y0) * tile.width + (x0 - tile.x0)) * T::SIZE;
            copy_row(y, &bytes[at..at + (x1 - x0) * T::SIZE]);
        }
        Ok(())
    }

    /// Field `name` over `want`, from every tile it overlaps.
    pub fn window<T: Plain>(
        &self,
        t: &Tiling,
        name: &'static str,
        want: Window,
    ) -> Result<Vec<T>, String> {
        let mut out = vec![T::default(); want.width * want.height];
        for k in 0..t.count() {
            self.read_part(k, name, t.window(k), want, &mut out, want.width)?;
        }
        Ok(out)
    }

    /// Tile `k`'s field `name`.
    pub fn get<T: Plain>(
        &self,
        t: &Tiling,
        k: usize,
        name: &'static str,
    ) -> Result<Vec<T>, String> {
        let w = t.window(k);
        let mut out = vec![T::default(); w.width * w.height];
        self.read_part(k, name, w, w, &mut out, w.width)?;
        Ok(out)
    }

    /// Forgets every field of every tile (the files of a folder: those named `tile-*`).
    pub fn clear(&self) {
        if let Some(dir) = &self.dir {
            if let Ok(entries) = std::fs::read_dir(dir) {
                for e in entries.flatten() {
                    if e.file_name().to_string_lossy().starts_with("tile-") {
                        let _ = std::fs::remove_file(e.path());
                    }
                }
            }
        } else if let Ok(mut m) = self.mem.lock() {
            m.clear();
        }
    }

    /// Forgets field `name` of every tile.
    pub fn remove(&self, t: &Tiling, name: &'static str) {
        for k in 0..t.count() {
            match self.path(k, name) {
                Some(p) => {
                    let _ = std::fs::remove_file(p);
                }
                None => {
                    if let Ok(mut m) = self.mem.lock() {
                        m.remove(&(k, name));
                    }
                }
            }
        }
    }
}

/// The terrain (and the optional rain mask) over a window of the map.
pub type Reader<'a> = dyn Fn(Window) -> Result<(Vec<f32>, Option<Vec<f32>>), String> + Sync + 'a;

/// Scratch fields the passes leave for the caller, per tile over its window: the filled level.
pub const LEVEL: &str = "level";
/// Each cell's receiver as its [`D8`] index (8: none).
pub const RECEIVER: &str = "receiver";
/// The drainage area in integer units (see [`Hydrology::unit_m2`]).
pub const AREA: &str = "area";

/// What [`hydrology`] found: the area of one unit of [`AREA`] and the largest drainage area.
#[derive(Clone, Copy, Debug)]
pub struct Hydrology {
    pub unit_m2: f64,
    pub max_area_m2: f64,
}

/// The D8 index of the step from `(x, y)` to `(nx, ny)`.
fn code(x: usize, y: usize, nx: usize, ny: usize) -> u8 {
    let d = (nx as i64 - x as i64, ny as i64 - y as i64);
    D8.iter()
        .position(|&(dx, dy)| (i64::from(dx), i64::from(dy)) == d)
        .map_or(8, |k| k as u8)
}

/// The cell a receiver code leads to from `(x, y)` (`None`: no receiver).
pub(super) fn follow(x: usize, y: usize, c: u8) -> Option<(usize, usize)> {
    let (dx, dy) = *D8.get(c as usize)?;
    Some((
        x.wrapping_add_signed(dx as isize),
        y.wrapping_add_signed(dy as isize),
    ))
}

/// The cells of a window's perimeter, as indices into the window.
fn perimeter(w: usize, h: usize) -> impl Iterator<Item = usize> {
    (0..w * h).filter(move |&i| {
        let (x, y) = (i % w, i / w);
        x == 0 || y == 0 || x + 1 == w || y + 1 == h
    })
}

/// Runs the three passes over the terrain `read` gives, on cells of `cell_area` m², leaving
/// [`LEVEL`], [`RECEIVER`] and [`AREA`] for every tile in `scratch`. `cancelled` is polled
/// between tiles.
pub fn hydrology(
    t: &Tiling,
    scratch: &Scratch,
    read: &Reader,
    cell_area: f64,
    cancelled: &(dyn Fn() -> bool + Sync),
) -> Result<Hydrology, String> {
    let check = || {
        if cancelled() {
            Err("cancelled".to_owned())
        } else {
            Ok(())
        }
    };
    fill(t, scratch, read, &check)?;
    route(t, scratch, &check)?;
    drainage(t, scratch, read, cell_area, &check)
}

/// Pass 3 alone: [`AREA`] over the [`RECEIVER`]s every tile holds (what routes of one's own,
/// written over the flood's, drain).
///
/// # Errors
/// A scratch field that cannot be read or written, or cancellation.
pub fn drainage(
    t: &Tiling,
    scratch: &Scratch,
    read: &Reader,
    cell_area: f64,
    check: &(dyn Fn() -> Result<(), String> + Sync),
) -> Result<Hydrology, String> {
    let (rain, max_units) = accumulate(t, scratch, read, check)?;
    let unit_m2 = super::unit_area(cell_area, rain);
    Ok(Hydrology {
        unit_m2,
        max_area_m2: max_units as f64 * unit_m2,
    })
}

/// Passes 1 and 2: [`LEVEL`] and [`RECEIVER`] for every tile (what multiple-direction
/// drainage, [`super::sweep`], starts from).
///
/// # Errors
/// A scratch field that cannot be read or written, or cancellation.
pub fn levels_and_receivers(
    t: &Tiling,
    scratch: &Scratch,
    read: &Reader,
    check: &(dyn Fn() -> Result<(), String> + Sync),
) -> Result<(), String> {
    fill(t, scratch, read, check)?;
    route(t, scratch, check)
}

/// Pass 1 alone: [`LEVEL`] for every tile (what `lakes` needs).
pub fn fill_levels(
    t: &Tiling,
    scratch: &Scratch,
    read: &Reader,
    cancelled: &(dyn Fn() -> bool + Sync),
) -> Result<(), String> {
    fill(t, scratch, read, &|| {
        if cancelled() {
            Err("cancelled".to_owned())
        } else {
            Ok(())
        }
    })
}

/// Cells `(global index, value)` on tile `k`'s perimeter for which `value` gives one, and for
/// each its 8-neighbours in other tiles: calls `f(a, b)` for every such pair that `seam`
/// holds (`seam`: every tile's perimeter entries).
fn across_seams<V: Copy>(
    t: &Tiling,
    k: usize,
    mine: &[(usize, V)],
    seam: &HashMap<usize, V>,
    mut f: impl FnMut(V, V),
) {
    let n = t.n;
    for &(a, va) in mine {
        let (x, y) = (a % n, a / n);
        for &(dx, dy) in &D8 {
            let (nx, ny) = (x as isize + dx as isize, y as isize + dy as isize);
            if nx < 0 || ny < 0 || nx >= n as isize || ny >= n as isize {
                continue;
            }
            let (nx, ny) = (nx as usize, ny as usize);
            if t.tile_of(nx, ny) == k {
                continue;
            }
            if let Some(&vb) = seam.get(&(ny * n + nx)) {
                f(va, vb);
            }
        }
    }
}

/// The region of each perimeter cell of window `win` (of an `n × n` map) that has one
/// (`ids`: a region per cell of the window, `u32::MAX` for none), by global index.
pub(super) fn rim(win: Window, n: usize, ids: &[u32]) -> Vec<(usize, u32)> {
    perimeter(win.width, win.height)
        .filter(|&i| ids[i] != u32::MAX)
        .map(|i| {
            (
                (win.y0 + i / win.width) * n + win.x0 + i % win.width,
                ids[i],
            )
        })
        .collect()
}

/// Regions of the tiles joined across their seams: `tiles[k]` is how many regions tile `k`
/// has and the region of each of its perimeter cells that has one (global index, region); two
/// regions are one when cells of theirs are 8-neighbours across a seam. Returns each tile's
/// first global region id and the union–find forest over them, the smallest id of a joined
/// region its root ([`root`]): the same whatever order the seams are visited in.
pub(super) fn join_regions(
    t: &Tiling,
    tiles: &[(usize, &[(usize, u32)])],
) -> (Vec<usize>, Vec<usize>) {
    let mut base = Vec::with_capacity(tiles.len());
    let mut total = 0usize;
    for &(count, _) in tiles {
        base.push(total);
        total += count;
    }
    let mut parent: Vec<usize> = (0..total).collect();
    let global = |k: usize, rim: &[(usize, u32)]| -> Vec<(usize, usize)> {
        rim.iter()
            .map(|&(c, r)| (c, base[k] + r as usize))
            .collect()
    };
    let seam: HashMap<usize, usize> = tiles
        .iter()
        .enumerate()
        .flat_map(|(k, &(_, rim))| global(k, rim))
        .collect();
    for (k, &(_, rim)) in tiles.iter().enumerate() {
        across_seams(t, k, &global(k, rim), &seam, |a, b| {
            let (ra, rb) = (root(&mut parent, a), root(&mut parent, b));
            if ra != rb {
                parent[ra.max(rb)] = ra.min(rb);
            }
        });
    }
    (base, parent)
}

/// Each lake of a map run tile by tile ([`super::for_each_lake`] over the filled [`LEVEL`]s:
/// flooded cells that touch share one level, so they are one lake, across tile seams too) and
/// a value per lake, combined over its parts in every tile.
pub struct Joined<V> {
    base: Vec<usize>,
    value: Vec<V>,
}

impl<V: Copy> Joined<V> {
    /// Per cell of tile `k`: its lake's value (`None` off lakes).
    pub fn of_tile(&self, run: &super::TileRun, k: usize) -> Result<Vec<Option<V>>, String> {
        let ids: Vec<u32> = run.scratch.get(run.tiling, k, LAKE)?;
        Ok(ids
            .iter()
            .map(|&l| (l != u32::MAX).then(|| self.value[self.base[k] + l as usize]))
            .collect())
    }
}

/// A tile's lakes' values and the lake of each flooded cell on its perimeter (global index).
type Part<V> = (Vec<V>, Vec<(usize, u32)>);

/// The root of `a`'s set in a union–find forest (halving the path on the way).
pub(super) fn root(parent: &mut [usize], mut a: usize) -> usize {
    while parent[a] != a {
        parent[a] = parent[parent[a]];
        a = parent[a];
    }
    a
}

/// Scratch field: each cell's lake within its tile (`u32::MAX`: none).
const LAKE: &str = "lake";

/// The lakes over the tiles of `run` (after [`fill_levels`] or [`hydrology`]): for each tile,
/// `data(k)` once, and for each of its lakes (cells as indices into the tile's window)
/// `value(&data, cells)`; the parts of one lake across tiles combined with `combine`.
pub fn join_lakes<D, V: Copy + Send + Sync>(
    run: &super::TileRun,
    data: impl Fn(usize) -> Result<D, String> + Sync,
    value: impl Fn(&D, &[usize]) -> V + Sync,
    combine: impl Fn(V, V) -> V,
) -> Result<Joined<V>, String> {
    let t = run.tiling;
    let n = t.n;
    let parts: Vec<Part<V>> = (0..t.count())
        .into_par_iter()
        .map(|k| {
            run.check()?;
            let win = t.window(k);
            let (z, _) = (run.read)(win)?;
            let level: Vec<f32> = run.scratch.get(t, k, LEVEL)?;
            let d = data(k)?;
            let mut ids = vec![u32::MAX; win.width * win.height];
            let mut values = Vec::new();
            super::for_each_lake(&z, &level, win.width, win.height, |lake| {
                for &c in lake {
                    ids[c] = values.len() as u32;
                }
                values.push(value(&d, lake));
            });
            let edge = rim(win, n, &ids);
            run.scratch.put(k, LAKE, &ids)?;
            Ok((values, edge))
        })
        .collect::<Result<_, String>>()?;
    // Lakes touching across a seam are one lake.
    let (base, mut parent) = join_regions(
        t,
        &parts
            .iter()
            .map(|(values, edge)| (values.len(), edge.as_slice()))
            .collect::<Vec<_>>(),
    );
    let total = parent.len();
    let mut joined: Vec<Option<V>> = vec![None; total];
    for (k, (values, _)) in parts.iter().enumerate() {
        for (l, &v) in values.iter().enumerate() {
            let r = root(&mut parent, base[k] + l);
            joined[r] = Some(joined[r].map_or(v, |j| combine(j, v)));
        }
    }
    let mut value = Vec::with_capacity(total);
    for g in 0..total {
        let r = root(&mut parent, g);
        value.push(joined[r].ok_or("internal error: a lake without a value")?);
    }
    Ok(Joined { base, value })
}

/// One tile's flood: its labels' spill edges, how many labels, its perimeter cells (global
/// index, label, height).
struct Flooded {
    edges: Vec<(u32, u32, f32)>,
    count: u32,
    perimeter: Vec<(usize, u32, f32)>,
}

/// Pass 1: [`LEVEL`] for every tile.
fn fill(
    t: &Tiling,
    s: &Scratch,
    read: &Reader,
    check: &(dyn Fn() -> Result<(), String> + Sync),
) -> Result<(), String> {
    let n = t.n;
    let floods: Vec<Flooded> = (0..t.count())
        .into_par_iter()
        .map(|k| {
            check()?;
            let win = t.window(k);
            let (z, _) = read(win)?;
            // −0 as +0, as the whole map's flood takes it (`super::flood::canonical`).
            let z: Vec<f32> = z.iter().map(|&v| super::flood::canonical(v)).collect();
            let mut level = z.clone();
            let ww = win.width;
            let mut f = flood_window(&mut level, ww, win.height, |i| {
                t.on_map_edge(win.x0 + i % ww, win.y0 + i / ww)
            });
            // One edge per pair of labels, at its lowest spill: the global step then holds
            // what the perimeters hold, not every cell of every watershed boundary.
            for e in &mut f.edges {
                if e.0 > e.1 {
                    *e = (e.1, e.0, e.2);
                }
            }
            f.edges.sort_unstable_by(|a, b| {
                (a.0, a.1, a.2)
                    .partial_cmp(&(b.0, b.1, b.2))
                    .unwrap_or(std::cmp::Ordering::Equal)
            });
            f.edges.dedup_by_key(|e| (e.0, e.1));
            let perimeter = perimeter(ww, win.height)
                .map(|i| ((win.y0 + i / ww) * n + win.x0 + i % ww, f.labels[i], z[i]))
                .collect();
            s.put(k, "local", &level)?;
            s.put(k, "label", &f.labels)?;
            Ok(Flooded {
                edges: f.edges,
                count: f.count,
                perimeter,
            })
        })
        .collect::<Result<_, String>>()?;
    // Global labels: the ocean 0, then each tile's after the last tile's.
    let mut base = Vec::with_capacity(floods.len());
    let mut total = 1u32;
    for f in &floods {
        base.push(total - 1);
        total = total
            .checked_add(f.count)
            .ok_or("too many watersheds on the tiles' perimeters")?;
    }
    let global = |k: usize, l: u32| if l == OCEAN { OCEAN } else { base[k] + l };
    let mut edges: Vec<(u32, u32, f32)> = Vec::new();
    let mut seam: HashMap<usize, (u32, f32)> = HashMap::new();
    for (k, f) in floods.iter().enumerate() {
        edges.extend(
            f.edges
                .iter()
                .map(|&(a, b, e)| (global(k, a), global(k, b), e)),
        );
        seam.extend(f.perimeter.iter().map(|&(i, l, z)| (i, (global(k, l), z))));
    }
    // The seams: a perimeter cell and its 8-neighbours in other tiles (their perimeters),
    // at the higher of their heights.
    for (k, f) in floods.iter().enumerate() {
        let mine: Vec<(usize, (u32, f32))> = f
            .perimeter
            .iter()
            .map(|&(a, l, z)| (a, (global(k, l), z)))
            .collect();
        across_seams(t, k, &mine, &seam, |(la, za), (lb, zb)| {
            if la != lb {
                edges.push((la, lb, za.max(zb)));
            }
        });
    }
    drop(seam);
    let spill = solve(&edges, total as usize);
    drop(edges);
    (0..t.count()).into_par_iter().try_for_each(|k| {
        check()?;
        let mut level: Vec<f32> = s.get(t, k, "local")?;
        let labels: Vec<u32> = s.get(t, k, "label")?;
        for (v, &l) in level.iter_mut().zip(&labels) {
            *v = v.max(spill[global(k, l) as usize]);
        }
        s.put(k, LEVEL, &level)
    })?;
    s.remove(t, "local");
    s.remove(t, "label");
    Ok(())
}

/// A flat cell of a flat that reaches over its tile's border: global index, level, and its
/// rim receiver (global index) when it has one.
type CrossingCell = (usize, f32, usize);

/// Pass 2: [`RECEIVER`] for every tile.
fn route(
    t: &Tiling,
    s: &Scratch,
    check: &(dyn Fn() -> Result<(), String> + Sync),
) -> Result<(), String> {
    let crossing: Vec<Vec<CrossingCell>> = (0..t.count())
        .into_par_iter()
        .map(|k| {
            check()?;
            route_tile(t, s, k)
        })
        .collect::<Result<_, String>>()?;
    // The flats across tile borders, routed breadth first from their rims in the map's row
    // order, as the whole map routes every flat.
    let mut cells: Vec<CrossingCell> = crossing.into_iter().flatten().collect();
    if cells.is_empty() {
        return Ok(());
    }
    cells.sort_unstable_by_key(|c| c.0);
    let at: HashMap<usize, usize> = cells.iter().enumerate().map(|(p, c)| (c.0, p)).collect();
    let n = t.n;
    let mut to = vec![NOWHERE; cells.len()];
    let mut queue = VecDeque::new();
    for (p, c) in cells.iter().enumerate() {
        if c.2 != NOWHERE {
            to[p] = c.2;
            queue.push_back(p);
        }
    }
    while let Some(p) = queue.pop_front() {
        let (c, lc, _) = cells[p];
        for j in super::neighbours(c, n, n) {
            if let Some(&q) = at.get(&j) {
                if to[q] == NOWHERE && cells[q].1 == lc {
                    to[q] = c;
                    queue.push_back(q);
                }
            }
        }
    }
    // Written back, tile by tile.
    let mut by_tile: Vec<Vec<(usize, usize)>> = vec![Vec::new(); t.count()];
    for (p, c) in cells.iter().enumerate() {
        if to[p] == NOWHERE {
            return Err("internal error: a flat cell across tiles found no way out".into());
        }
        by_tile[t.tile_of(c.0 % n, c.0 / n)].push((c.0, to[p]));
    }
    by_tile
        .into_par_iter()
        .enumerate()
        .filter(|(_, v)| !v.is_empty())
        .try_for_each(|(k, v)| {
            let win = t.window(k);
            let mut rcv: Vec<u8> = s.get(t, k, RECEIVER)?;
            for (c, r) in v {
                let (x, y) = (c % n, c / n);
                rcv[(y - win.y0) * win.width + (x - win.x0)] = code(x, y, r % n, r / n);
            }
            s.put(k, RECEIVER, &rcv)
        })
}

/// Tile `k`'s receivers: steepest descent over the levels around it, its own flats routed,
/// and the cells of flats crossing its border returned for the global pass.
fn route_tile(t: &Tiling, s: &Scratch, k: usize) -> Result<Vec<CrossingCell>, String> {
    let n = t.n;
    let win = t.window(k);
    let e = win.expand(2, n);
    let ring = win.expand(1, n);
    let level: Vec<f32> = s.window(t, LEVEL, e)?;
    let grid = Grid::new(e.width, e.height);
    let ew = e.width;
    // Receivers (indices into `e`) and flatness over the tile and one cell around it.
    let mut rcv = vec![NONE; e.width * e.height];
    let mut flat = vec![false; e.width * e.height];
    for y in ring.y0..ring.y0 + ring.height {
        for x in ring.x0..ring.x0 + ring.width {
            let (ex, ey) = (x - e.x0, y - e.y0);
            let i = ey * ew + ex;
            rcv[i] = steepest(&level, &grid, ex, ey);
            flat[i] = rcv[i] == NONE && !t.on_map_edge(x, y);
        }
    }
    let inside = |i: usize| {
        let (x, y) = (e.x0 + i % ew, e.y0 + i / ew);
        x >= win.x0 && x < win.x0 + win.width && y >= win.y0 && y < win.y0 + win.height
    };
    // Rims: the first neighbour of a flat cell's level that drains.
    let cells_of = |i: usize| grid.around(i % ew, i / ew);
    let tile_cells = || {
        (win.y0..win.y0 + win.height).flat_map(move |y| {
            (win.x0..win.x0 + win.width).map(move |x| (y - e.y0) * ew + x - e.x0)
        })
    };
    for i in tile_cells() {
        if flat[i] {
            let (cells, count) = cells_of(i);
            if let Some(&j) = cells[..count]
                .iter()
                .find(|&&j| !flat[j] && level[j] == level[i])
            {
                rcv[i] = j as u32;
            }
        }
    }
    // The tile's flats: connected flat cells of one level; those reaching a flat cell of
    // their level outside the tile cross its border.
    let mut comp = vec![u32::MAX; e.width * e.height];
    let mut crosses = Vec::new();
    let mut stack = Vec::new();
    for i in tile_cells() {
        if !flat[i] || comp[i] != u32::MAX {
            continue;
        }
        let id = crosses.len() as u32;
        let mut crossing = false;
        comp[i] = id;
        stack.push(i);
        while let Some(c) = stack.pop() {
            let (cells, count) = cells_of(c);
            for &j in &cells[..count] {
                if !flat[j] || level[j] != level[c] {
                    continue;
                }
                if !inside(j) {
                    crossing = true;
                } else if comp[j] == u32::MAX {
                    comp[j] = id;
                    stack.push(j);
                }
            }
        }
        crosses.push(crossing);
    }
    // Flats inside the tile: breadth first from their rims in row order.
    let mut queue: VecDeque<usize> = tile_cells()
        .filter(|&i| flat[i] && rcv[i] != NONE && !crosses[comp[i] as usize])
        .collect();
    while let Some(c) = queue.pop_front() {
        let (cells, count) = cells_of(c);
        for &j in &cells[..count] {
            if flat[j] && rcv[j] == NONE && level[j] == level[c] && inside(j) {
                rcv[j] = c as u32;
                queue.push_back(j);
            }
        }
    }
    let global = |i: usize| (e.y0 + i / ew) * n + e.x0 + i % ew;
    let mut out = Vec::with_capacity(win.width * win.height);
    let mut crossing = Vec::new();
    for i in tile_cells() {
        let (x, y) = (e.x0 + i % ew, e.y0 + i / ew);
        if flat[i] && crosses[comp[i] as usize] {
            let rim = if rcv[i] == NONE {
                NOWHERE
            } else {
                global(rcv[i] as usize)
            };
            crossing.push((global(i), level[i], rim));
        }
        out.push(if rcv[i] == NONE {
            8
        } else {
            let j = rcv[i] as usize;
            code(x, y, e.x0 + j % ew, e.y0 + j / ew)
        });
    }
    s.put(k, RECEIVER, &out)?;
    Ok(crossing)
}

/// One tile's accumulation: what leaves it (the cell outside it water goes to, how many
/// units) and, for each perimeter cell, the cell outside the tile its water leaves to.
struct Drained {
    exits: Vec<(usize, u64)>,
    links: Vec<(usize, usize)>,
}

/// Accumulates tile `k` with `inflow` added at the cells where water enters it (global index,
/// units): the units per cell, and what [`Drained`] reports.
fn accumulate_tile(
    t: &Tiling,
    s: &Scratch,
    read: &Reader,
    k: usize,
    inflow: &[(usize, u64)],
) -> Result<(Vec<u64>, Drained, bool), String> {
    let n = t.n;
    let win = t.window(k);
    let (w, h) = (win.width, win.height);
    let rcv: Vec<u8> = s.get(t, k, RECEIVER)?;
    let (_, rain) = read(win)?;
    let mut acc = units(rain.as_deref(), w * h);
    for &(c, v) in inflow {
        acc[(c / n - win.y0) * w + (c % n - win.x0)] += v;
    }
    // The receiver of each cell: inside the tile (its index) or outside (global index).
    let target = |i: usize| -> Option<Result<usize, usize>> {
        let (x, y) = (win.x0 + i % w, win.y0 + i / w);
        let (nx, ny) = follow(x, y, rcv[i])?;
        Some(
            if nx >= win.x0 && nx < win.x0 + w && ny >= win.y0 && ny < win.y0 + h {
                Ok((ny - win.y0) * w + (nx - win.x0))
            } else {
                Err(ny * n + nx)
            },
        )
    };
    let mut pending = vec![0u8; w * h];
    for i in 0..w * h {
        if let Some(Ok(j)) = target(i) {
            pending[j] += 1;
        }
    }
    let mut exits = Vec::new();
    for start in 0..w * h {
        if pending[start] != 0 {
            continue;
        }
        let mut c = start;
        loop {
            pending[c] = u8::MAX;
            match target(c) {
                None => break,
                Some(Err(g)) => {
                    exits.push((g, acc[c]));
                    break;
                }
                Some(Ok(r)) => {
                    acc[r] += acc[c];
                    pending[r] -= 1;
                    if pending[r] != 0 {
                        break;
                    }
                    c = r;
                }
            }
        }
    }
    // Where water entering at each perimeter cell leaves the tile (memoised down the paths).
    let unknown = usize::MAX - 1;
    let mut leaves = vec![unknown; w * h];
    let mut path = Vec::new();
    let mut links = Vec::new();
    for p in perimeter(w, h) {
        let mut c = p;
        let end = loop {
            if leaves[c] != unknown {
                break leaves[c];
            }
            path.push(c);
            match target(c) {
                None => break NOWHERE,
                Some(Err(g)) => break g,
                Some(Ok(r)) => c = r,
            }
        };
        for q in path.drain(..) {
            leaves[q] = end;
        }
        links.push(((win.y0 + p / w) * n + win.x0 + p % w, end));
    }
    Ok((acc, Drained { exits, links }, rain.is_some()))
}

/// Pass 3: [`AREA`] for every tile; whether a rain mask was read, and the largest area.
fn accumulate(
    t: &Tiling,
    s: &Scratch,
    read: &Reader,
    check: &(dyn Fn() -> Result<(), String> + Sync),
) -> Result<(bool, u64), String> {
    let drained: Vec<Drained> = (0..t.count())
        .into_par_iter()
        .map(|k| {
            check()?;
            accumulate_tile(t, s, read, k, &[]).map(|(_, d, _)| d)
        })
        .collect::<Result<_, String>>()?;
    // What enters each cell from other tiles: its own exits' water, plus what entered the
    // tiles upstream and left through them — in topological order over the links.
    let mut inflow: HashMap<usize, u64> = HashMap::new();
    for d in &drained {
        for &(g, v) in &d.exits {
            *inflow.entry(g).or_insert(0) += v;
        }
    }
    let link: HashMap<usize, usize> = drained
        .iter()
        .flat_map(|d| d.links.iter().copied())
        .filter(|(c, _)| inflow.contains_key(c))
        .collect();
    let mut indegree: HashMap<usize, u32> = HashMap::new();
    for &to in link.values() {
        if to != NOWHERE {
            *indegree.entry(to).or_insert(0) += 1;
        }
    }
    let mut ready: Vec<usize> = inflow
        .keys()
        .copied()
        .filter(|c| !indegree.contains_key(c))
        .collect();
    ready.sort_unstable();
    let mut resolved = 0usize;
    while let Some(c) = ready.pop() {
        resolved += 1;
        let Some(&to) = link.get(&c) else {
            return Err("internal error: water enters a tile at a cell off its perimeter".into());
        };
        if to == NOWHERE {
            continue;
        }
        let v = inflow[&c];
        *inflow
            .get_mut(&to)
            .ok_or("internal error: water leaves a tile to a cell nothing enters")? += v;
        let d = indegree.get_mut(&to).ok_or("internal error: link count")?;
        *d -= 1;
        if *d == 0 {
            ready.push(to);
        }
    }
    if resolved != inflow.len() {
        return Err("internal error: the water crossing tiles runs in a loop".into());
    }
    let mut by_tile: Vec<Vec<(usize, u64)>> = vec![Vec::new(); t.count()];
    for (&c, &v) in &inflow {
        by_tile[t.tile_of(c % t.n, c / t.n)].push((c, v));
    }
    let done: Vec<(bool, u64)> = by_tile
        .into_par_iter()
        .enumerate()
        .map(|(k, v)| {
            check()?;
            let (acc, _, rain) = accumulate_tile(t, s, read, k, &v)?;
            s.put(k, AREA, &acc)?;
            Ok((rain, acc.iter().copied().max().unwrap_or(0)))
        })
        .collect::<Result<_, String>>()?;
    Ok((
        done.iter().any(|d| d.0),
        done.iter().map(|d| d.1).max().unwrap_or(0),
    ))
}

#[cfg(test)]
mod tests {
    use super::super::flow_accumulation::Routes;
    use super::super::priority_flood;
    use super::*;

    /// Rough terrain with pits, ties, long flats after filling and lakes across tiles.
    fn terrain(n: usize, seed: u64) -> Vec<f32> {
        let r = |i: u64| (crate::node::splitmix64(seed ^ crate::node::splitmix64(i)) % 1000) as f32;
        (0..n * n)
            .map(|i| {
                let (x, y) = ((i % n) as f32, (i / n) as f32);
                let bowl = ((x - n as f32 * 0.4).powi(2) + (y - n as f32 * 0.55).powi(2)).sqrt();
                let v = (r(i as u64) + r(((i % n) / 6 + (i / n) / 6 * 1000) as u64 + 99)) / 90.0;
                (v + bowl * 0.3).round()
            })
            .collect()
    }

    fn whole(z: &[f32], n: usize, rain: Option<&[f32]>) -> (Vec<f32>, Vec<u8>, Vec<f64>) {
        let f = priority_flood(z, n, n);
        let routes = Routes::new(&f, n, n, None);
        let area = routes.accumulate(4.0, rain);
        let rcv = (0..n * n)
            .map(|i| {
                let r = f.receiver[i];
                if r == NONE {
                    8
                } else {
                    let r = r as usize;
                    code(i % n, i / n, r % n, r / n)
                }
            })
            .collect();
        (f.level, rcv, area)
    }

    fn stitched<T: Plain>(t: &Tiling, s: &Scratch, name: &'static str) -> Vec<T> {
        s.window(t, name, Window::full(t.n)).expect("read")
    }

    #[test]
    fn tiled_water_equals_the_whole_map_for_every_tile_size() {
        for (seed, n) in [(1u64, 97usize), (2, 128), (3, 61)] {
            let z = terrain(n, seed);
            let rain: Vec<f32> = (0..n * n)
                .map(|i| ((i * 7919) % 101) as f32 / 100.0)
                .collect();
            for with_rain in [false, true] {
                let rain = with_rain.then_some(rain.as_slice());
                let (level, rcv, area) = whole(&z, n, rain);
                let flats = (0..n * n)
                    .filter(|&i| {
                        rcv[i] != 8
                            && super::super::neighbours(i, n, n).all(|j| level[j] >= level[i])
                    })
                    .count();
                assert!(flats > 100, "the terrain has flats ({flats})");
                for size in [16usize, 25, 32, 40, n] {
                    let t = Tiling::uniform(n, size);
                    let s = Scratch::in_memory();
                    let read = |w: Window| {
                        let crop = |f: &[f32]| {
                            (w.y0..w.y0 + w.height)
                                .flat_map(|y| f[y * n + w.x0..y * n + w.x0 + w.width].to_vec())
                                .collect::<Vec<f32>>()
                        };
                        Ok((crop(&z), rain.map(crop)))
                    };
                    let hyd = hydrology(&t, &s, &read, 4.0, &|| false).expect("tiles");
                    let what = format!("seed {seed}, {n}², tiles of {size}, rain {with_rain}");
                    assert_eq!(stitched::<f32>(&t, &s, LEVEL), level, "level: {what}");
                    assert_eq!(stitched::<u8>(&t, &s, RECEIVER), rcv, "receivers: {what}");
                    let tiled: Vec<f64> = stitched::<u64>(&t, &s, AREA)
                        .iter()
                        .map(|&a| a as f64 * hyd.unit_m2)
                        .collect();
                    assert!(tiled == area, "area: {what}");
                    let max = area.iter().copied().fold(0.0, f64::max);
                    assert_eq!(hyd.max_area_m2, max, "{what}");
                }
            }
        }
    }
}
