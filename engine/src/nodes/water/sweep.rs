//! Multiple-direction drainage over a map too large to hold at once, computed tile by tile in
//! sweeps — bit for bit what [`super::flow_accumulation::Routes::accumulate`] gives the whole
//! map with mfd routing.
//!
//! Barnes 2017 ("Parallel non-divergent flow accumulation for trillion cell digital elevation
//! models on desktops or clusters", §2) exchanges only the tiles' perimeters because D8 water
//! entering a tile leaves it by one cell, so a tile's effect is a set of links and integer sums
//! add up in any order. Multiple-direction water spreads: what enters a tile leaves it over many
//! cells in shares, and the sums are floating point. So each cell *pulls* its area — its own
//! plus each higher neighbour's share, in D8 order ([`super::flow_accumulation::Mfd`]): the sum
//! depends on the cell's neighbours alone, not on the order cells are visited, and the whole
//! map sums the same way.
//!
//! A cell is known once every neighbour that sends it water is. Each sweep visits every tile
//! not yet complete: it reads the levels and receivers over the tile grown by a halo (and two
//! cells more), the areas known so far there (its own and its neighbours', from the earlier
//! visits), and computes every cell of that region whose senders are known, in topological
//! order; it keeps its own cells. A river that wanders back and forth across a tile border
//! within the halo is resolved in one visit; one that leaves the halo and comes back waits for
//! the next sweep. Tiles are visited in four colours (column and row parity), the tiles of a
//! colour in parallel: no tile reads what another of its colour writes. Each sweep completes
//! at least the cells whose senders the previous one completed, so the sweeps end; on the
//! examples two or three do.
//!
//! Memory per visit: about 30 bytes a cell over the tile and its halo (levels, receivers,
//! areas, weight totals, counts, rain); between visits the areas are kept per tile in the
//! [`Scratch`] (8 bytes a cell).

use super::flow_accumulation::{own_area, weight_totals, Mfd};
use super::tiled::{Reader, Scratch, Tiling, LEVEL, RECEIVER};
use super::Grid;
use crate::node::Window;
use crate::nodes::erosion::flow::D8;
use rayon::prelude::*;

/// Each cell's multiple-direction drainage area in m² (the bits of an f64, as a u64).
pub const MFD_AREA: &str = "mfd-area";

/// An area not known yet (a NaN's bits: no area is NaN).
const UNKNOWN: u64 = u64::MAX;

/// The cells a visit computes around its tile, past the tile's border, at most.
const HALO: usize = 32;

/// Fills [`MFD_AREA`] for every tile: the drainage area (`cell_area` m² a cell, times the rain
/// the reader gives, if any) under Freeman 1991's routing with exponent `p`, over the
/// [`LEVEL`] and [`RECEIVER`] the tile passes left ([`super::tiled::levels_and_receivers`]).
/// Returns how many sweeps it took.
///
/// # Errors
/// A scratch field that cannot be read or written, or cancellation.
pub fn mfd_area(
    t: &Tiling,
    scratch: &Scratch,
    read: &Reader,
    cell_area: f64,
    p: f64,
    check: &(dyn Fn() -> Result<(), String> + Sync),
) -> Result<usize, String> {
    let count = t.count();
    for k in 0..count {
        let w = t.window(k);
        scratch.put(k, MFD_AREA, &vec![UNKNOWN; w.width * w.height])?;
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
                    visit(t, scratch, read, k, halo, (cell_area, p))
                })
                .collect();
            for (&k, r) in ks.iter().zip(done) {
                let (all, any) = r?;
                complete[k] = all;
                moved |= any;
            }
        }
        if !moved && complete.contains(&false) {
            return Err("internal error: multiple-direction drainage stopped short".into());
        }
    }
    Ok(sweeps)
}

/// One visit of tile `k`: every cell within `halo` of it whose senders are known gets its
/// area; the tile's own are stored. Returns whether the tile is complete and whether any of
/// its cells became known.
fn visit(
    t: &Tiling,
    scratch: &Scratch,
    read: &Reader,
    k: usize,
    halo: usize,
    (cell_area, p): (f64, f64),
) -> Result<(bool, bool), String> {
    let n = t.n;
    let tile = t.window(k);
    let region = tile.expand(halo, n);
    // Levels two cells past the region: a sender's weights need its own neighbours.
    let e = region.expand(2, n);
    let level: Vec<f32> = scratch.window(t, LEVEL, e)?;
    let codes: Vec<u8> = scratch.window(t, RECEIVER, e)?;
    let mut area: Vec<u64> = scratch.window(t, MFD_AREA, e)?;
    let (_, rain) = read(region)?;
    let (w, h) = (e.width, e.height);
    let local = |x: usize, y: usize| (y - e.y0) * w + (x - e.x0);
    let inside = |r: &Window, i: usize| {
        let (x, y) = (e.x0 + i % w, e.y0 + i / w);
        x >= r.x0 && y >= r.y0 && x < r.x0 + r.width && y < r.y0 + r.height
    };
    // A receiver code leads to a neighbour inside the window (or nowhere).
    let flat = |i: usize| -> Option<usize> {
        let (dx, dy) = *D8.get(codes[i] as usize)?;
        let (x, y) = (
            (i % w) as isize + dx as isize,
            (i / w) as isize + dy as isize,
        );
        (x >= 0 && y >= 0 && x < w as isize && y < h as isize).then(|| y as usize * w + x as usize)
    };
    let totals = weight_totals(&level, w, h, p);
    let mfd = Mfd {
        level: &level,
        totals: &totals,
        w,
        h,
        p,
    };
    let grid = Grid::new(w, h);
    // Which neighbours a cell waits for: every higher one, and on a flat the cells whose
    // receiver it is (as the whole map counts them).
    let sends = |i: usize, j: usize| level[i] > level[j] || flat(i) == Some(j);
    let mut pending = vec![0u8; w * h];
    let mut ready = Vec::new();
    for i in (0..w * h).filter(|&i| inside(&region, i) && area[i] == UNKNOWN) {
        let (cells, len) = grid.around(i % w, i / w);
        pending[i] = cells[..len]
            .iter()
            .filter(|&&s| sends(s, i) && area[s] == UNKNOWN)
            .count() as u8;
        if pending[i] == 0 {
            ready.push(i);
        }
    }
    let mut gained = 0usize;
    while let Some(c) = ready.pop() {
        let (x, y) = (e.x0 + c % w, e.y0 + c / w);
        let at = (y - region.y0) * region.width + (x - region.x0);
        let own = own_area(cell_area, rain.as_ref().map(|r| r[at]));
        let a = mfd.pull(c, own, &flat, |i| f64::from_bits(area[i]));
        area[c] = a.to_bits();
        gained += usize::from(inside(&tile, c));
        let (cells, len) = grid.around(c % w, c / w);
        for &j in &cells[..len] {
            if sends(c, j) && inside(&region, j) && area[j] == UNKNOWN {
                pending[j] -= 1;
                if pending[j] == 0 {
                    ready.push(j);
                }
            }
        }
    }
    let mut mine = Vec::with_capacity(tile.width * tile.height);
    for y in tile.y0..tile.y0 + tile.height {
        let row = local(tile.x0, y);
        mine.extend_from_slice(&area[row..row + tile.width]);
    }
    let complete = !mine.contains(&UNKNOWN);
    if gained > 0 {
        scratch.put(k, MFD_AREA, &mine)?;
    }
    Ok((complete, gained > 0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nodes::water::flow_accumulation::Routes;
    use crate::nodes::water::priority_flood;

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
                let sweeps = mfd_area(&t, &scratch, &read, 4.0, 1.1, &ok).expect("sweeps");
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
