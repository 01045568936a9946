//! Single-direction routes that follow a surface's flow lines instead of the grid's eight
//! directions: D8-LTD, Orlandini, Moretti, Franchini, Aldighieri, Testa & Viganò 2003, "Path-based
//! methods for the determination of nondispersive drainage directions in grid-based digital
//! elevation models" (§2.3, least transversal deviation, λ = 1).
//!
//! Steepest-neighbour D8 sends water on a smooth plane along a grid direction, so rivers over a
//! smoothed terrain run as straight lines at 0° and 45°. Here each cell takes the steepest
//! direction of its eight triangular facets (Tarboton 1997, §2), and of the facet's two
//! neighbours (a side and a corner) steps to the one that keeps the path closest to the true
//! flow line: the signed distance the path has drifted from it (the transversal deviation δ,
//! in cells) is carried downstream, and a cell picks the step whose δ after it is smaller. On
//! a plane the path then stays within two cells of the flow line, whatever its angle.
//!
//! A cell's δ is what the largest of the paths routed into it carries (the most cells upstream;
//! the first in [`D8`] order on a tie): a river keeps its course where a smaller one joins it.
//! That depends on those cells alone, so a cell can be routed once every neighbour that may
//! send it water has been (every higher one, and on a flat the one the flood routes to it):
//! the whole map in topological order ([`receivers`]) and the tiles in sweeps
//! (`rivers::tiled`) give the same bits. Cells with no lower neighbour (flats, outlets) keep
//! the flood's receiver and carry no deviation.

use super::Grid;
use crate::nodes::erosion::flow::D8;

/// Where a cell sends its water and the deviation it passes on, from `at(dx, dy)` — the level
/// of its neighbour at that offset, `None` off the map — its own level `e0`, and the deviation
/// `inflow` the largest path routed into it carries ([`inflow`]). `None` when no facet falls
/// away from it (the caller keeps the flood's receiver).
pub(super) fn step(
    e0: f32,
    inflow: f32,
    at: impl Fn(i32, i32) -> Option<f32>,
) -> Option<(u8, f32)> {
    facet(e0, at)?.choose(inflow)
}

/// A cell's steepest facet: its side and corner steps ([`D8`] indices), how far a step to
/// each drifts from the flow line (in cells, signed) and whether each is lower than the cell.
/// It does not depend on what flows in, so the whole map finds every cell's in parallel.
#[derive(Clone, Copy, Debug)]
pub(super) struct Facet {
    steps: [u8; 2],
    lower: [bool; 2],
    drift: [f32; 2],
}

impl Facet {
    /// The step whose deviation after it (`inflow` plus its drift) is smaller, the side on a
    /// tie, among the lower ones; with that deviation.
    fn choose(&self, inflow: f32) -> Option<(u8, f32)> {
        let inflow = f64::from(inflow);
        let mut chosen: Option<(u8, f64)> = None;
        for k in 0..2 {
            let after = inflow + f64::from(self.drift[k]);
            if self.lower[k] && chosen.is_none_or(|c| after.abs() < c.1.abs()) {
                chosen = Some((self.steps[k], after));
            }
        }
        chosen.map(|(k, after)| (k, after as f32))
    }
}

/// The steepest of the eight triangular facets around a cell of level `e0` (Tarboton 1997,
/// §2; `at` as in [`step`]); `None` when none falls away.
pub(super) fn facet(e0: f32, at: impl Fn(i32, i32) -> Option<f32>) -> Option<Facet> {
    let e = f64::from(e0);
    // The steepest facet: (slope, angle from its side, side, perpendicular).
    let mut best: Option<(f64, f64, Step, Step)> = None;
    for (side, perp) in FACETS {
        let (Some(e1), Some(e2)) = (at(side.0, side.1), at(side.0 + perp.0, side.1 + perp.1))
        else {
            continue;
        };
        let (e1, e2) = (f64::from(e1), f64::from(e2));
        // The steepest direction at angle atan2(s2, s1) from the side, clamped to the facet's
        // edges (the angle itself is taken for the steepest alone).
        let (s1, s2) = (e - e1, e1 - e2);
        let (s, edge) = if s2 <= 0.0 {
            (s1, Some(0.0))
        } else if s2 >= s1 {
            (
                (e - e2) / std::f64::consts::SQRT_2,
                Some(std::f64::consts::FRAC_PI_4),
            )
        } else {
            (s1.hypot(s2), None)
        };
        if s > 0.0 && best.is_none_or(|b| s > b.0) {
            best = Some((s, edge.unwrap_or_else(|| s2.atan2(s1)), side, perp));
        }
    }
    let (_, r, side, perp) = best?;
    // The sign of side × perpendicular: which way a step to the side drifts from the line.
    let turn = f64::from(side.0 * perp.1 - side.1 * perp.0);
    let corner = (side.0 + perp.0, side.1 + perp.1);
    let index = |to: Step| D8.iter().position(|&d| d == to).map_or(8, |k| k as u8);
    let lower = |to: Step| at(to.0, to.1).is_some_and(|v| f64::from(v) < e);
    Some(Facet {
        steps: [index(side), index(corner)],
        lower: [lower(side), lower(corner)],
        drift: [
            (-turn * r.sin()) as f32,
            (turn * (r.cos() - r.sin())) as f32,
        ],
    })
}

/// A step to a neighbour, `(dx, dy)`.
type Step = (i32, i32);

/// The eight facets: a side step and the perpendicular step that, added to it, reaches the
/// corner between them.
const FACETS: [(Step, Step); 8] = [
    ((1, 0), (0, -1)),
    ((0, -1), (1, 0)),
    ((0, -1), (-1, 0)),
    ((-1, 0), (0, -1)),
    ((-1, 0), (0, 1)),
    ((0, 1), (-1, 0)),
    ((0, 1), (1, 0)),
    ((1, 0), (0, 1)),
];

/// The most cells upstream a path counts (they fit [`pack`]ed beside a step and a deviation);
/// paths past it count as many (only which of two is larger depends on it, and then it is the
/// first in [`D8`] order on every grid alike).
pub(super) const MOST_CELLS: u32 = (1 << 28) - 1;

/// A cell's route as one `u64`: its cells upstream (28 bits), its step's [`D8`] index (8:
/// none; 4 bits) and its deviation's `f32` bits. Never `u64::MAX`.
#[must_use]
pub(super) fn pack(cells: u32, code: u8, deviation: f32) -> u64 {
    (u64::from(cells.min(MOST_CELLS)) << 36)
        | (u64::from(code & 15) << 32)
        | u64::from(deviation.to_bits())
}

/// [`pack`] undone: (cells upstream, step, deviation).
#[must_use]
pub(super) fn unpack(v: u64) -> (u32, u8, f32) {
    (
        (v >> 36) as u32,
        ((v >> 32) & 15) as u8,
        f32::from_bits(v as u32),
    )
}

/// Whether a cell at `from` may send its water to a neighbour at `to` (so is routed first):
/// it is higher, or level with it and routed there across a flat by the flood (`flat`).
#[must_use]
pub(super) fn may_send(from: f32, to: f32, flat: bool) -> bool {
    from > to || (from == to && flat)
}

/// Every cell's receiver over the filled surface `level` (`flood`: the flood's receivers, kept
/// where no facet falls away): [`step`] in topological order, every cell after the neighbours
/// that may send it water ([`may_send`]). Returns the receivers and each cell's deviation.
#[must_use]
pub fn receivers(level: &[f32], flood: &[u32], w: usize, h: usize) -> (Vec<u32>, Vec<f32>) {
    use rayon::prelude::*;
    let grid = Grid::new(w, h);
    let feeds = |i: usize, j: usize| may_send(level[i], level[j], flood[i] == j as u32);
    let at = |x: usize, y: usize| {
        move |dx: i32, dy: i32| {
            let (nx, ny) = (x as i64 + i64::from(dx), y as i64 + i64::from(dy));
            (nx >= 0 && ny >= 0 && (nx as usize) < w && (ny as usize) < h)
                .then(|| level[ny as usize * w + nx as usize])
        }
    };
    // What does not depend on the order: each cell's facet and how many cells feed it.
    let (facets, mut higher): (Vec<Option<Facet>>, Vec<u8>) = (0..w * h)
        .into_par_iter()
        .map(|c| {
            let (cells, len) = grid.around(c % w, c / w);
            let count = cells[..len].iter().filter(|&&i| feeds(i, c)).count() as u8;
            (facet(level[c], at(c % w, c / w)), count)
        })
        .unzip();
    let mut receiver = flood.to_vec();
    let mut deviation = vec![0.0f32; w * h];
    let mut cells = vec![0u32; w * h];
    let mut ready: Vec<usize> = (0..w * h).filter(|&c| higher[c] == 0).collect();
    while let Some(c) = ready.pop() {
        let (x, y) = (c % w, c / w);
        let (inflow, upstream) = inflow(x, y, w, h, |i| {
            (level[i] >= level[c] && receiver[i] == c as u32).then_some((deviation[i], cells[i]))
        });
        cells[c] = upstream.saturating_add(1).min(MOST_CELLS);
        if let Some((k, d)) = facets[c].and_then(|f| f.choose(inflow)) {
            let (dx, dy) = D8[k as usize];
            receiver[c] = ((y as i64 + i64::from(dy)) as usize * w
                + (x as i64 + i64::from(dx)) as usize) as u32;
            deviation[c] = d;
        }
        let (around, len) = grid.around(x, y);
        for &j in &around[..len] {
            if feeds(c, j) {
                higher[j] -= 1;
                if higher[j] == 0 {
                    ready.push(j);
                }
            }
        }
    }
    (receiver, deviation)
}

/// What the paths routed into `(x, y)` of a `w × h` window bring (`from(i)`: cell `i`'s
/// deviation and cells upstream when it sends its water here): the deviation of the largest
/// (the first in [`D8`] order on a tie; 0 when none comes) and the cells upstream of them all.
pub(super) fn inflow(
    x: usize,
    y: usize,
    w: usize,
    h: usize,
    from: impl Fn(usize) -> Option<(f32, u32)>,
) -> (f32, u32) {
    let (mut deviation, mut largest, mut cells) = (0.0f32, 0u32, 0u32);
    for &(dx, dy) in &D8 {
        let (nx, ny) = (x as i64 + i64::from(dx), y as i64 + i64::from(dy));
        if nx < 0 || ny < 0 || nx as usize >= w || ny as usize >= h {
            continue;
        }
        if let Some((d, n)) = from(ny as usize * w + nx as usize) {
            if n > largest {
                (deviation, largest) = (d, n);
            }
            cells = cells.saturating_add(n);
        }
    }
    (deviation, cells)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nodes::water::priority_flood;

    /// Follows `receiver` from cell `(x, y)` for `steps` steps on an `n`-cell-wide map: the
    /// largest distance, in cells, of the path from the straight line through its first cell
    /// in direction `theta`.
    fn drift(receiver: &[u32], n: usize, (x, y): (usize, usize), theta: f64, steps: usize) -> f64 {
        let (ux, uy) = (theta.cos(), theta.sin());
        let mut c = y * n + x;
        let mut worst = 0.0f64;
        for _ in 0..steps {
            let r = receiver[c] as usize;
            let (dx, dy) = ((r % n) as f64 - x as f64, (r / n) as f64 - y as f64);
            worst = worst.max((dx * uy - dy * ux).abs());
            c = r;
        }
        worst
    }

    /// On planes falling away in any direction, D8-LTD paths stay within two cells of the
    /// flow line (Orlandini et al. 2003, §4: "parallel" flow on planes), where the steepest
    /// neighbour runs off at 0° or 45°; and the routes are the same whatever order the cells
    /// were ready in (here: the map mirrored).
    #[test]
    fn ltd_paths_follow_the_flow_lines_of_planes() {
        let n = 300;
        for deg in [10.0f64, 30.0, 63.0, 100.0, 200.0, 333.0] {
            let theta = deg.to_radians();
            let level: Vec<f32> = (0..n * n)
                .map(|i| {
                    let (x, y) = ((i % n) as f64, (i / n) as f64);
                    (-(x * theta.cos() + y * theta.sin()) * 0.37) as f32
                })
                .collect();
            let flood = priority_flood(&level, n, n);
            let (ltd, deviation) = receivers(&level, &flood.receiver, n, n);
            let start = (
                (150.0 - 100.0 * theta.cos()) as usize,
                (150.0 - 100.0 * theta.sin()) as usize,
            );
            let along = drift(&ltd, n, start, theta, 180);
            assert!(along <= 2.0, "{deg}°: the LTD path strays {along:.2} cells");
            assert!(
                deviation.iter().all(|d| d.abs() <= 1.5),
                "{deg}°: deviations stay within a cell and a half"
            );
            if deg % 45.0 > 5.0 && deg % 45.0 < 40.0 {
                let d8 = drift(&flood.receiver, n, start, theta, 180);
                assert!(d8 > 10.0, "{deg}°: steepest-neighbour D8 strays {d8:.2}");
            }
        }
    }
}
