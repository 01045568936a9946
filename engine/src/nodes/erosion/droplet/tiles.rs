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

/// A fixed grid of tiles (about 4 × 4, at least 32 cells each) and the region each may
/// touch (the tile plus half a tile around it). The shifted grid has its boundaries half a
/// tile further on (half-width tiles along the map edges), so a droplet parked near a
/// boundary of the first grid sits near the middle of a tile of the second.
pub(super) struct Tiling {
    pub(super) t: usize,
    pub(super) shift: usize,
    /// Tiles per side.
    pub(super) n: usize,
    pub(super) tiles: Vec<(Rect, Rect)>,
}

impl Tiling {
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
        let n = bounds.len() - 1;
        let margin = t / 2;
        let mut tiles = Vec::with_capacity(n * n);
        for ys in bounds.windows(2) {
            for xs in bounds.windows(2) {
                let tile = Rect {
                    x0: xs[0],
                    y0: ys[0],
                    x1: xs[1],
                    y1: ys[1],
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
        Self { t, shift, n, tiles }
    }

    /// The tile holding a droplet's cell.
    fn index(&self, d: &Drop) -> usize {
        let axis = |v: i32| {
            let v = v as usize;
            let i = if v < self.shift {
                0
            } else {
                (v - self.shift) / self.t + usize::from(self.shift > 0)
            };
            i.min(self.n - 1)
        };
        axis(d.yi) * self.n + axis(d.xi)
    }

    /// Checkerboard colour of tile `j`: tiles of one colour are two tiles apart, so their
    /// regions (tile ± half a tile) never overlap.
    fn colour(&self, j: usize) -> usize {
        (j % self.n) % 2 + 2 * ((j / self.n) % 2)
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

/// Droplet `i`'s starting state.
pub(super) fn spawn(seed: u64, i: u64, map: usize) -> Drop {
    let mut rng = splitmix64(seed ^ splitmix64(i));
    let span = (map - 1) as u64;
    let xi = (splitmix64(rng) % span) as usize;
    let yi = (splitmix64(rng ^ 0x5851_F42D_4C95_7F2D) % span) as usize;
    rng = splitmix64(rng ^ 0x1405_7B7E_F767_814F);
    Drop {
        xi: xi as i32,
        yi: yi as i32,
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

/// Runs `drops` (each from where it stands) on the tiles of `grid`, one checkerboard colour
/// at a time with the tiles of a colour in parallel, and returns the droplets that had to
/// leave their tile's region, in tile order then droplet order (fixed by the droplets and the
/// grid, never by the thread count). `phase(colour)` is called after each colour.
#[expect(clippy::too_many_arguments)]
pub(super) fn run_tiled(
    heights: &mut [f32],
    allow: &[f32],
    map: usize,
    grid: &Tiling,
    drops: &[Drop],
    (k, max_steps): (&Settings, u32),
    cancelled: &(dyn Fn() -> bool + Sync),
    report: &mut Report,
    phase: &dyn Fn(usize),
) -> Result<Vec<Drop>, NodeError> {
    // Bucketed by the tile they stand in (index order kept).
    let mut buckets: Vec<Vec<Drop>> = vec![Vec::new(); grid.tiles.len()];
    for d in drops {
        buckets[grid.index(d)].push(*d);
    }
    let mut parked = Vec::new();
    for colour in 0..4 {
        let jobs: Vec<usize> = (0..grid.tiles.len())
            .filter(|&j| grid.colour(j) == colour && !buckets[j].is_empty())
            .collect();
        let done: Vec<TileRun> = jobs
            .par_iter()
            .map(|&j| {
                let r = grid.tiles[j].1;
                let mut local = Vec::with_capacity((r.x1 - r.x0) * (r.y1 - r.y0));
                for y in r.y0..r.y1 {
                    local.extend_from_slice(&heights[y * map + r.x0..y * map + r.x1]);
                }
                let mut view = View::new(&mut local, r, map, allow);
                let (mut park, mut tally) = (Vec::new(), Report::default());
                let drops = buckets[j].iter().copied();
                run_all(
                    &mut view,
                    drops,
                    k,
                    map,
                    max_steps,
                    cancelled,
                    |d, o| match o {
                        Outcome::Parked => park.push(d),
                        o => tally.count(&d, o),
                    },
                );
                TileRun {
                    tile: j,
                    heights: local,
                    parked: park,
                    report: tally,
                }
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
        phase(colour);
    }
    Ok(parked)
}
