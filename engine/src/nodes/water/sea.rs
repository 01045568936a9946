//! `sea`: the sea below a level in metres, its shore and its beaches.
//!
//! The sea's coverage of a coast cell is the share of the cell seaward of a waterline placed from
//! (z − level) / |∇z|. The shore measures the distance to that waterline itself: points placed
//! within the coast cells are carried inland by Grevera 2004's dead reckoning (two raster passes,
//! each cell keeping its nearest point). Felzenszwalb & Huttenlocher 2012's exact transform
//! measures to cell centres, which moved the band by up to half a preview cell.

use super::{is_edge, neighbours};
use crate::field::derive::{gradient, slope_deg};
use crate::field::Field;
use crate::node::{unit, EvalCtx, Node, NodeError};
use crate::nodes::mask::terrain_masks::step;
use rayon::prelude::*;

crate::params! {
    pub struct SeaParams {
        /// Sea level, in metres (the world's height frame).
        level_m: f64 = float(0.0, [-1000.0, 3000.0], [-1.0e6, 1.0e6], "m") as "Sea level",
        /// Only water connected to the map edge is sea; inland basins below sea level stay
        /// dry land (wire them to `lakes` for water).
        connected: bool = flag(true) as "Connected to the edge",
        /// How far inland the shore mask reaches, in metres.
        shore_width_m: f64 = float(80.0, [0.0, 1000.0], [0.0, 1.0e6], "m") as "Shore width",
        /// Highest a beach rises above the sea, in metres.
        beach_height_m: f64 = float(4.0, [0.0, 50.0], [0.0, 1.0e6], "m") as "Beach height",
        /// Steepest slope that is still beach, in degrees (fading over 4° above).
        beach_slope_deg: f64 = float(10.0, [0.0, 45.0], [0.0, 90.0], "°") as "Beach slope",
    }
}

crate::node! {
    /// Fills everything below sea level with sea, and marks the shore and the beaches along the
    /// coast.
    /// The sea: every cell below level_m (connected to the map edge through such cells, unless
    /// connected is off). Outputs: surface = the sea surface over the sea, the terrain elsewhere;
    /// sea = 1 on the sea, and along the coast the share of the cell seaward of the waterline,
    /// placed within the cell from its height and slope ((z − level) / |∇z|, exact on a plane), so
    /// a coarse preview's sea covers what a finer build's does; shore = 1 at the waterline fading
    /// linearly to 0 at shore_width_m inland, over the land share of each cell (the Euclidean
    /// distance to the waterline itself, placed within the coast cells as for the sea, carried
    /// inland by Grevera 2004's dead reckoning; exact on a plane); beach = the shore where the land
    /// is at most beach_height_m above the sea and no steeper than beach_slope_deg (both with a
    /// smooth fade: 25% of the height, 4° of slope). All distances are in metres, so the bands keep
    /// their width at every resolution.
    pub struct Sea {
        id: "sea",
        label: "Sea",
        category: Water,
        version: 1,
        params: SeaParams,
        inputs: SeaIn {
            /// Terrain.
            r#in: height,
        },
        outputs: SeaOut {
            /// The sea surface over the sea, the terrain elsewhere (m).
            surface: height,
            /// 1 on the sea.
            sea: mask,
            /// 1 at the waterline fading to 0 at shore_width_m inland.
            shore: mask,
            /// Low, gentle shore.
            beach: mask,
        },
        traits: crate::node::Traits {
            sea_level_param: Some("level_m"),
            ..crate::node::Traits::DEFAULT
        },
    }
}

impl Node for Sea {
    /// The sea flags and flood stack (~1), squared distances (1), slopes (3: gradient and angle).
    const SCRATCH_FIELDS: u32 = 5;

    fn eval(ctx: &EvalCtx, inputs: SeaIn, p: &SeaParams) -> Result<SeaOut, NodeError> {
        let src = inputs.r#in;
        let (w, h) = (src.width(), src.height());
        let z = src.data();
        let level = p.level_m as f32;
        let sea = if p.connected {
            flood_from_edge(z, w, h, level)
        } else {
            z.iter().map(|&v| v < level).collect()
        };
        ctx.check_cancel()?;
        let cell = ctx.cell_size_m();
        // Signed distance from each cell's centre to the waterline, in metres (positive
        // inland), for the sea's coverage: at the coast — a cell with a neighbour on the other
        // side — the waterline is placed within the cell from its height and slope,
        // (z − level) / |∇z| (exact on a plane); elsewhere the cell is wholly sea or land.
        let (gx, gy) = gradient(src, cell);
        let signed: Vec<f64> = (0..w * h)
            .map(|i| {
                let coast = neighbours(i, w, h).any(|j| sea[j] != sea[i]);
                if coast {
                    let g = f64::from(gx.data()[i]).hypot(f64::from(gy.data()[i]));
                    let d = f64::from(z[i] - level) / g.max(1e-9);
                    if sea[i] {
                        d.clamp(-1.5 * cell, 0.0)
                    } else {
                        d.clamp(0.0, 1.5 * cell)
                    }
                } else if sea[i] {
                    f64::NEG_INFINITY
                } else {
                    f64::INFINITY
                }
            })
            .collect();
        let reach = p.shore_width_m / cell;
        // The sea's share of each cell: the box filter of the waterline across it.
        let cover: Vec<f32> = signed
            .iter()
            .map(|&d| (0.5 - d / cell).clamp(0.0, 1.0) as f32)
            .collect();
        let shore: Vec<f32> = if reach <= 0.0 {
            // A zero-width shore is the waterline: the land cells touching the sea.
            (0..w * h)
                .map(|i| f32::from(u8::from(!sea[i] && neighbours(i, w, h).any(|j| sea[j]))))
                .collect()
        } else {
            // 1 at the waterline, falling linearly to 0 at shore_width_m inland, over the land
            // share of each cell; distances to the waterline itself, placed within the coast
            // cells as for the sea's coverage, so the band does not move with the grid.
            let dist = waterline_distance(&signed, &gx, &gy, cell, reach + 2.0);
            dist.iter()
                .zip(&cover)
                .map(|(&d, &c)| (1.0 - c) * unit((1.0 - f64::from(d) / reach) as f32))
                .collect()
        };
        ctx.check_cancel()?;
        let slope = slope_deg(src, cell);
        let (bh, bs) = (p.beach_height_m as f32, p.beach_slope_deg as f32);
        let beach: Vec<f32> = shore
            .iter()
            .zip(z)
            .zip(slope.data())
            .map(|((&s, &v), &a)| {
                let low = 1.0 - step(v - level, bh, 0.25 * bh);
                let gentle = 1.0 - step(a, bs + 2.0, 4.0);
                unit(s * low * gentle)
            })
            .collect();
        let surface = z
            .iter()
            .zip(&sea)
            .map(|(&v, &s)| if s { level } else { v })
            .collect();
        let sea = cover;
        let size = || NodeError::Failed("internal error: field size".into());
        Ok(SeaOut {
            surface: Field::from_vec(w, h, surface).ok_or_else(size)?,
            sea: Field::from_vec(w, h, sea).ok_or_else(size)?,
            shore: Field::from_vec(w, h, shore).ok_or_else(size)?,
            beach: Field::from_vec(w, h, beach).ok_or_else(size)?,
        })
    }
}

/// Each cell's distance (in cells) from its centre to the nearest waterline point, up to
/// `reach` cells (beyond: infinity); 0 for centres on the sea side of the waterline. The
/// waterline points are placed within the coast cells (finite `signed`, metres, positive
/// inland) at `signed` down the terrain's gradient (`gx`, `gy`), and carried to every cell
/// by Grevera 2004's dead reckoning: two raster passes, each cell taking the nearer of its
/// own point and its already-visited neighbours' points.
fn waterline_distance(signed: &[f64], gx: &Field, gy: &Field, cell: f64, reach: f64) -> Vec<f32> {
    let (w, h) = (gx.width(), gx.height());
    let (gx, gy) = (gx.data(), gy.data());
    // Each cell's nearest waterline point so far (NaN: none) and its squared distance.
    let mut point: Vec<(f64, f64)> = signed
        .par_iter()
        .enumerate()
        .map(|(i, &d)| {
            if !d.is_finite() {
                return (f64::NAN, f64::NAN);
            }
            let (x, y) = ((i % w) as f64, (i / w) as f64);
            let (a, b) = (f64::from(gx[i]), f64::from(gy[i]));
            let g = a.hypot(b);
            if g <= 1e-12 {
                (x, y)
            } else {
                let t = d / cell / g;
                (x - a * t, y - b * t)
            }
        })
        .collect();
    let mut dist2: Vec<f64> = point
        .par_iter()
        .enumerate()
        .map(|(i, &(px, py))| {
            let (dx, dy) = ((i % w) as f64 - px, (i / w) as f64 - py);
            if px.is_nan() {
                f64::INFINITY
            } else {
                dx * dx + dy * dy
            }
        })
        .collect();
    // Beyond the shore nothing needs a point: carry them only this far.
    let limit = (reach + 2.0) * (reach + 2.0);
    let relax =
        |i: usize, j: usize, x: f64, y: f64, point: &mut [(f64, f64)], dist2: &mut [f64]| {
            let (px, py) = point[j];
            let (dx, dy) = (x - px, y - py);
            let d = dx * dx + dy * dy;
            // NaN (no point) compares false.
            if d < dist2[i] && d <= limit {
                dist2[i] = d;
                point[i] = (px, py);
            }
        };
    for y in 0..h {
        let fy = y as f64;
        for x in 0..w {
            let (i, fx) = (y * w + x, x as f64);
            if y > 0 {
                for nx in x.saturating_sub(1)..(x + 2).min(w) {
                    relax(i, (y - 1) * w + nx, fx, fy, &mut point, &mut dist2);
                }
            }
            if x > 0 {
                relax(i, i - 1, fx, fy, &mut point, &mut dist2);
            }
        }
    }
    for y in (0..h).rev() {
        let fy = y as f64;
        for x in (0..w).rev() {
            let (i, fx) = (y * w + x, x as f64);
            if y + 1 < h {
                for nx in x.saturating_sub(1)..(x + 2).min(w) {
                    relax(i, (y + 1) * w + nx, fx, fy, &mut point, &mut dist2);
                }
            }
            if x + 1 < w {
                relax(i, i + 1, fx, fy, &mut point, &mut dist2);
            }
        }
    }
    signed
        .par_iter()
        .zip(dist2.par_iter())
        .map(|(&s, &d2)| {
            if s < 0.0 {
                0.0
            } else if d2 <= reach * reach {
                d2.sqrt() as f32
            } else {
                f32::INFINITY
            }
        })
        .collect()
}

/// Cells below `level` reachable from the map edge through cells below `level` (8-neighbours).
fn flood_from_edge(z: &[f32], w: usize, h: usize, level: f32) -> Vec<bool> {
    let mut sea = vec![false; w * h];
    let mut stack: Vec<usize> = (0..w * h)
        .filter(|&i| is_edge(i, w, h) && z[i] < level)
        .collect();
    for &i in &stack {
        sea[i] = true;
    }
    while let Some(c) = stack.pop() {
        for j in neighbours(c, w, h) {
            if !sea[j] && z[j] < level {
                sea[j] = true;
                stack.push(j);
            }
        }
    }
    sea
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Dead reckoning against the brute-force distance to the nearest waterline point, on
    /// random scattered points (flat terrain: each point at its cell's centre): the two
    /// passes are approximate (a cell may keep a neighbour's point when another lies a little
    /// nearer, so the test allows a fraction of a cell) and infinite beyond the reach.
    #[test]
    fn waterline_distance_equals_brute_force() {
        let (w, h) = (41, 29);
        let signed: Vec<f64> = (0..w * h)
            .map(|i| {
                if crate::node::splitmix64(i as u64).is_multiple_of(37) {
                    0.0
                } else {
                    f64::INFINITY
                }
            })
            .collect();
        let flat = Field::filled(w, h, 0.0);
        let reach = 6.0;
        let d = waterline_distance(&signed, &flat, &flat, 1.0, reach);
        let (mut worst, mut sum, mut count) = (0.0f64, 0.0f64, 0usize);
        for (i, &got) in d.iter().enumerate() {
            let (x, y) = ((i % w) as f64, (i / w) as f64);
            let best = (0..w * h)
                .filter(|&j| signed[j].is_finite())
                .map(|j| ((j % w) as f64 - x).hypot((j / w) as f64 - y))
                .fold(f64::INFINITY, f64::min);
            if best <= reach - 0.01 {
                let e = (f64::from(got) - best).abs();
                worst = worst.max(e);
                sum += e;
                count += 1;
            } else if best > reach + 0.01 {
                assert!(got.is_infinite(), "cell {i}: {got} beyond the reach");
            }
        }
        let mean = sum / count.max(1) as f64;
        assert!(
            worst < 0.25 && mean < 1e-3,
            "error {worst} cells at worst, {mean} on average"
        );
    }
}
