//! Droplets in parallel without races: the map cut into tiles run in four interleaved
//! phases, each droplet spawned from its stable index (so the result does not depend on the
//! thread count), a droplet leaving its tile parked and finished after the phases.

use super::run_all;
use super::Drop;
use super::Outcome;
use super::Rect;
use super::Report;
use super::Settings;
use super::View;
use crate::node::splitmix64;
use crate::node::NodeError;
use rayon::prelude::*;

/// A fixed grid of tiles and the region each may touch (the tile plus a margin around it),
/// coloured like a 2 × 2 checkerboard so that the regions of one colour never overlap.
pub(super) struct Tiling {
    /// Tile boundaries along x and y, from 0 to the map's side.
    xs: Vec<usize>,
    ys: Vec<usize>,
    /// Checkerboard parity of the first tile column and row.
    odd: (usize, usize),
    pub(super) tiles: Vec<(Rect, Rect)>,
}

impl Tiling {
    /// About 4 × 4 tiles of at least 32 cells over the map, each region the tile plus half a
    /// tile around it. The shifted grid has its boundaries half a tile further on
    /// (half-width tiles along the map edges), so a droplet parked near a boundary of the
    /// first grid sits near the middle of a tile of the second.
    pub(super) fn new(map: usize, shifted: bool) -> Self {
        let t = map.div_ceil(4).max(32);
        let shift = if shifted { t / 2 } else { 0 };
        let mut bounds = vec![0];
        let mut b = if shift == 0 { t } else { shift };
        while b < map {
            bounds.push(b);
            b += t;
        }
        bounds.push(map);
        Self::from_bounds(map, bounds.clone(), bounds, (0, 0), t / 2)
    }

    /// Tiles of `t` cells on a grid anchored to the world, for a window of side `map` at
    /// `origin` in it: the tiles, their order and their colours are the world's wherever
    /// the window lies (clipped at its edges), each region the tile plus `t / 2`.
    pub(super) fn anchored(map: usize, origin: (usize, usize), t: usize) -> Self {
        let bounds = |o: usize| {
            let mut b = vec![0];
            let mut k = o / t + 1;
            while k * t < o + map {
                b.push(k * t - o);
                k += 1;
            }
            b.push(map);
            b
        };
        let odd = ((origin.0 / t) % 2, (origin.1 / t) % 2);
        Self::from_bounds(map, bounds(origin.0), bounds(origin.1), odd, t / 2)
    }

    fn from_bounds(
        map: usize,
        xs: Vec<usize>,
        ys: Vec<usize>,
        odd: (usize, usize),
        margin: usize,
    ) -> Self {
        let mut tiles = Vec::with_capacity((xs.len() - 1) * (ys.len() - 1));
        for yb in ys.windows(2) {
            for xb in xs.windows(2) {
                let tile = Rect {
                    x0: xb[0],
                    y0: yb[0],
                    x1: xb[1],
                    y1: yb[1],
                };
                let region = Rect {
                    x0: tile.x0.saturating_sub(margin),
                    y0: tile.y0.saturating_sub(margin),
                    x1: (tile.x1 + margin).min(map),
                    y1: (tile.y1 + margin).min(map),
                };
                tiles.push((tile, region));
            }
        }
        Self { xs, ys, odd, tiles }
    }

    /// Tiles per row.
    fn across(&self) -> usize {
        self.xs.len() - 1
    }

    /// The tile holding a droplet's cell.
    fn index(&self, d: &Drop) -> usize {
        let axis = |b: &[usize], v: i32| {
            b[1..]
                .partition_point(|&e| e <= v as usize)
                .min(b.len() - 2)
        };
        axis(&self.ys, d.yi) * self.across() + axis(&self.xs, d.xi)
    }

    /// Checkerboard colour of tile `j`: tiles of one colour are two tiles apart, so their
    /// regions (tile ± half a tile) never overlap.
    fn colour(&self, j: usize) -> usize {
        (j % self.across() + self.odd.0) % 2 + 2 * ((j / self.across() + self.odd.1) % 2)
    }
}

/// What one tile's task hands back: its region's heights, the droplets it parked, and what
/// the droplets that ended there add to the report.
pub(super) struct TileRun {
    pub(super) tile: usize,
    pub(super) heights: Vec<f32>,
    pub(super) parked: Vec<Drop>,
    pub(super) report: Report,
}

/// `drops` bucketed by the tile of `grid` they stand in (index order kept).
pub(super) fn buckets(grid: &Tiling, drops: &[Drop]) -> Vec<Vec<Drop>> {
    let mut buckets: Vec<Vec<Drop>> = vec![Vec::new(); grid.tiles.len()];
    for d in drops {
        buckets[grid.index(d)].push(*d);
    }
    buckets
}

/// Droplet `i`'s starting state.
pub(super) fn spawn(seed: u64, i: u64, map: usize) -> Drop {
    let rng = splitmix64(seed ^ splitmix64(i));
    let span = (map - 1) as u64;
    let xi = (splitmix64(rng) % span) as usize;
    let yi = (splitmix64(rng ^ 0x5851_F42D_4C95_7F2D) % span) as usize;
    Drop::at(xi, yi, splitmix64(rng ^ 0x1405_7B7E_F767_814F))
}

/// Runs the droplets on the tiles of `grid`, one checkerboard colour at a time (from colour
/// `first`) with the tiles of a colour in parallel, tile `j` running `drops(j)` in order, and
/// returns the droplets that had to leave their tile's region, in tile order then droplet
/// order (fixed by the droplets and the grid, never by the thread count). `phase(c)` is
/// called after the `c`-th colour.
#[expect(clippy::too_many_arguments)]
pub(super) fn run_tiled(
    heights: &mut [f32],
    allow: &[f32],
    map: usize,
    grid: &Tiling,
    drops: &(dyn Fn(usize) -> Vec<Drop> + Sync),
    first: usize,
    (k, max_steps): (&Settings, u32),
    cancelled: &(dyn Fn() -> bool + Sync),
    report: &mut Report,
    phase: &dyn Fn(usize),
) -> Result<Vec<Drop>, NodeError> {
    let mut parked = Vec::new();
    for c in 0..4 {
        let colour = (first + c) % 4;
        let jobs: Vec<usize> = (0..grid.tiles.len())
            .filter(|&j| grid.colour(j) == colour)
            .collect();
        let done: Vec<TileRun> = jobs
            .par_iter()
            .filter_map(|&j| {
                let list = drops(j);
                if list.is_empty() {
                    return None;
                }
                let r = grid.tiles[j].1;
                let mut local = Vec::with_capacity((r.x1 - r.x0) * (r.y1 - r.y0));
                for y in r.y0..r.y1 {
                    local.extend_from_slice(&heights[y * map + r.x0..y * map + r.x1]);
                }
                let mut view = View::new(&mut local, r, map, allow);
                let (mut park, mut tally) = (Vec::new(), Report::default());
                run_all(
                    &mut view,
                    list,
                    k,
                    map,
                    max_steps,
                    cancelled,
                    |d, o| match o {
                        Outcome::Parked => park.push(d),
                        o => tally.count(&d, o),
                    },
                );
                Some(TileRun {
                    tile: j,
                    heights: local,
                    parked: park,
                    report: tally,
                })
            })
            .collect();
        if cancelled() {
            return Err(NodeError::Cancelled);
        }
        for TileRun {
            tile: j,
            heights: local,
            parked: park,
            report: tally,
        } in done
        {
            let r = grid.tiles[j].1;
            let w = r.x1 - r.x0;
            for (y, row) in (r.y0..r.y1).zip(local.chunks_exact(w)) {
                heights[y * map + r.x0..y * map + r.x1].copy_from_slice(row);
            }
            parked.extend(park);
            report.add(&tally);
        }
        phase(c);
    }
    Ok(parked)
}
