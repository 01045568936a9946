//! Values that flow downhill and spread — multiple-direction drainage, sliding snow — or that
//! depend on what arrives from upstream — `rivers`' D8-LTD routes and water surface — over a
//! map too large to hold at once, computed tile by tile in sweeps: bit for bit what the
//! whole-map functions give (`flow_accumulation::Routes::accumulate` with mfd routing,
//! `snow`'s slides, `ltd::receivers`, the rivers' lowest level on the way), through a [`Pull`]
//! rule each of them supplies.
//!
//! Barnes 2017 ("Parallel non-divergent flow accumulation for trillion cell digital elevation
//! models on desktops or clusters", §2) exchanges only the tiles' perimeters because D8 water
//! entering a tile leaves it by one cell, so a tile's effect is a set of links and integer sums
//! add up in any order. Multiple-direction water spreads: what enters a tile leaves it over many
//! cells in shares, and the sums are floating point. So each cell *pulls* its value from the
//! neighbours that send it theirs, in an order of its own (mfd: D8 order; snow: from the
//! highest sender down): the sum depends on the cell's neighbours alone, not on the order cells
//! are visited, and the whole map sums the same way.
//!
//! A cell is known once every neighbour that sends it water is. Each sweep visits every tile
//! not yet complete: it reads what the rule needs over the tile grown by a halo (and two
//! cells more), the values known so far there (its own and its neighbours', from the earlier
//! visits), and computes every cell of that region whose senders are known, in topological
//! order; it keeps its own cells. A river that wanders back and forth across a tile border
//! within the halo is resolved in one visit; one that leaves the halo and comes back waits for
//! the next sweep. Tiles are visited in four colours (column and row parity), the tiles of a
//! colour in parallel: no tile reads what another of its colour writes. Each sweep completes
//! at least the cells whose senders the previous one completed, so the sweeps end (the unit
//! test's 97² map takes 3 sweeps in tiles of 40, 8 in tiles of 9).
//!
//! Memory per visit: what the rule reads over the tile and its halo (mfd ≈ 25 bytes a cell:
//! levels, receivers, weight totals; snow ≈ 45 with its model's fields), and 9 bytes a cell of
//! values and counts; between visits the values are kept per tile in the [`Scratch`] (8 bytes
//! a cell).

use super::tiled::{Scratch, Tiling};
use super::Grid;
use crate::node::Window;
use rayon::prelude::*;

/// An area not known yet (a NaN's bits: no area is NaN).
const UNKNOWN: u64 = u64::MAX;

/// The cells a visit computes around its tile, past the tile's border, at most.
const HALO: usize = 32;

/// A value each cell pulls from the neighbours that send it theirs, the senders forming a
/// directed acyclic graph (water or snow going downhill).
pub trait Pull: Sync {
    /// What the rule reads over a window.
    type Data;
    /// The data over window `e` (a tile's region grown by two cells).
    ///
    /// # Errors
    /// A field that cannot be read.
    fn load(&self, e: Window) -> Result<Self::Data, String>;
    /// Whether cell `i` sends to its neighbour `j` (indices into the window).
    fn sends(&self, d: &Self::Data, i: usize, j: usize) -> bool;
    /// Cell `c`'s value from the values of its senders (`known(i)`), every neighbour of `c`
    /// inside the window or off the map.
    fn pull(&self, d: &Self::Data, c: usize, known: impl Fn(usize) -> f64) -> f64;
}

/// Fills scratch field `name` of every tile with the values `rule` pulls, tile by tile in
/// sweeps (see the module's comment). Returns how many sweeps it took.
///
/// # Errors
/// A scratch field that cannot be read or written, or cancellation.
pub fn sweep<R: Pull>(
    t: &Tiling,
    scratch: &Scratch,
    name: &'static str,
    rule: &R,
    check: &(dyn Fn() -> Result<(), String> + Sync),
) -> Result<usize, String> {
    let count = t.count();
    for k in 0..count {
        let w = t.window(k);
        scratch.put(k, name, &vec![UNKNOWN; w.width * w.height])?;
    }
    // A halo of at most a quarter of the smallest full tile: a visit then reads only its own
    // tile and its neighbours', never a tile of its own colour.
    let full = (0..count)
        .map(|k| t.window(k))
        .map(|w| w.width.min(w.height))
        .max()
        .unwrap_or(1);
    let halo = HALO.min(full / 4);
    let cols = (0..count).filter(|&k| t.window(k).y0 == 0).count().max(1);
    let colour = |k: usize| (k % cols) % 2 + 2 * ((k / cols) % 2);
    let mut complete = vec![false; count];
    let mut sweeps = 0;
    while complete.contains(&false) {
        sweeps += 1;
        let mut moved = false;
        for c in 0..4 {
            let ks: Vec<usize> = (0..count)
                .filter(|&k| !complete[k] && colour(k) == c)
                .collect();
            let done: Vec<Result<(bool, bool), String>> = ks
                .par_iter()
                .map(|&k| {
                    check()?;
                    visit(t, scratch, name, rule, k, halo)
                })
                .collect();
            for (&k, r) in ks.iter().zip(done) {
                let (all, any) = r?;
                complete[k] = all;
                moved |= any;
            }
        }
        if !moved && complete.contains(&false) {
            return Err(format!(
                "internal error: the sweeps of {name} stopped short"
            ));
        }
    }
    Ok(sweeps)
}

/// One visit of tile `k`: every cell within `halo` of it whose senders are known gets its
/// value; the tile's own are stored. Returns whether the tile is complete and whether any of
/// its cells became known.
fn visit<R: Pull>(
    t: &Tiling,
    scratch: &Scratch,
    name: &'static str,
    rule: &R,
    k: usize,
    halo: usize,
) -> Result<(bool, bool), String> {
    let n = t.n;
    let tile = t.window(k);
    let region = tile.expand(halo, n);
    // Two cells past the region: a sender's own rule may read its neighbours.
    let e = region.expand(2, n);
    let d = rule.load(e)?;
    let mut value: Vec<u64> = scratch.window(t, name, e)?;
    let (w, h) = (e.width, e.height);
    let inside = |r: &Window, i: usize| {
        let (x, y) = (e.x0 + i % w, e.y0 + i / w);
        x >= r.x0 && y >= r.y0 && x < r.x0 + r.width && y < r.y0 + r.height
    };
    let grid = Grid::new(w, h);
    let mut pending = vec![0u8; w * h];
    let mut ready = Vec::new();
    for i in (0..w * h).filter(|&i| inside(&region, i) && value[i] == UNKNOWN) {
        let (cells, len) = grid.around(i % w, i / w);
        pending[i] = cells[..len]
            .iter()
            .filter(|&&s| value[s] == UNKNOWN && rule.sends(&d, s, i))
            .count() as u8;
        if pending[i] == 0 {
            ready.push(i);
        }
    }
    let mut gained = 0usize;
    while let Some(c) = ready.pop() {
        let v = rule.pull(&d, c, |i| f64::from_bits(value[i]));
        value[c] = v.to_bits();
        gained += usize::from(inside(&tile, c));
        let (cells, len) = grid.around(c % w, c / w);
        for &j in &cells[..len] {
            if inside(&region, j) && value[j] == UNKNOWN && rule.sends(&d, c, j) {
                pending[j] -= 1;
                if pending[j] == 0 {
                    ready.push(j);
                }
            }
        }
    }
    let mut mine = Vec::with_capacity(tile.width * tile.height);
    for y in tile.y0..tile.y0 + tile.height {
        let row = (y - e.y0) * w + (tile.x0 - e.x0);
        mine.extend_from_slice(&value[row..row + tile.width]);
    }
    let complete = !mine.contains(&UNKNOWN);
    if gained > 0 {
        scratch.put(k, name, &mine)?;
    }
    Ok((complete, gained > 0))
}
