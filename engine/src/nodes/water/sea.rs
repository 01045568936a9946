//! `sea`: the sea below a level in metres, its shore and its beaches.
//!
//! The sea's coverage of a coast cell is the share of the cell seaward of a waterline placed from
//! (z − level) / |∇z|. The shore measures the distance to that waterline itself: each cell's
//! exact distance to the nearest of the points placed within the coast cells, within the shore's
//! reach. (Felzenszwalb & Huttenlocher 2012's transform measures to cell centres, which moved the
//! band by up to half a preview cell; Grevera 2004's dead reckoning, used before, carried the
//! points in two raster passes over the whole map, a fraction of a cell off and not computable
//! tile by tile.) A tiled build runs it tile by tile ([`tiled`]).

use super::{is_edge, neighbours};
use crate::field::derive::{angle, gradient};
use crate::field::Field;
use crate::node::{unit, EvalCtx, Node, NodeError, Window};
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
    /// distance to the waterline itself, placed within the coast cells as for the sea; exact on
    /// a plane); beach = the shore where the land
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
        let all = Window {
            x0: 0,
            y0: 0,
            width: w,
            height: h,
        };
        let [surface, sea, shore, beach] = outputs(src, &sea, all, all, ctx.cell_size_m(), p);
        let size = || NodeError::Failed("internal error: field size".into());
        Ok(SeaOut {
            surface: Field::from_vec(w, h, surface).ok_or_else(size)?,
            sea: Field::from_vec(w, h, sea).ok_or_else(size)?,
            shore: Field::from_vec(w, h, shore).ok_or_else(size)?,
            beach: Field::from_vec(w, h, beach).ok_or_else(size)?,
        })
    }
}

/// How far beyond a window the sea's outputs there read the terrain and the sea, in cells: the
/// shore's reach (plus the 2 cells [`waterline_distance`] is given beyond it), the 1.5 cells a
/// waterline point lies from its coast cell, and one cell for that cell's gradient and
/// neighbours.
fn halo(p: &SeaParams, cell: f64) -> usize {
    (p.shore_width_m / cell).max(0.0).ceil() as usize + 6
}

/// The sea's outputs (surface, sea, shore, beach) over `dst`, from the terrain `z` and the sea
/// `sea` over `src`: a window of the map (global cells) holding `dst` and, where the map goes
/// on, [`halo`] cells around it. Every value depends only on what lies within the halo, in
/// global coordinates, so a tile's outputs are the very bits of the whole map's.
fn outputs(
    z: &Field,
    sea: &[bool],
    src: Window,
    dst: Window,
    cell: f64,
    p: &SeaParams,
) -> [Vec<f32>; 4] {
    let (w, h) = (src.width, src.height);
    let level = p.level_m as f32;
    // Signed distance from each cell's centre to the waterline, in metres (positive
    // inland), for the sea's coverage: at the coast — a cell with a neighbour on the other
    // side — the waterline is placed within the cell from its height and slope,
    // (z − level) / |∇z| (exact on a plane); elsewhere the cell is wholly sea or land.
    let (gx, gy) = gradient(z, cell);
    let zd = z.data();
    let signed: Vec<f64> = (0..w * h)
        .map(|i| {
            let coast = neighbours(i, w, h).any(|j| sea[j] != sea[i]);
            if coast {
                let g = f64::from(gx.data()[i]).hypot(f64::from(gy.data()[i]));
                let d = f64::from(zd[i] - level) / g.max(1e-9);
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
    let inner = |v: Vec<f32>| crop(&v, w, src, dst);
    // The sea's share of each cell: the box filter of the waterline across it.
    let cover: Vec<f32> = inner(
        signed
            .iter()
            .map(|&d| (0.5 - d / cell).clamp(0.0, 1.0) as f32)
            .collect(),
    );
    let shore: Vec<f32> = if reach <= 0.0 {
        // A zero-width shore is the waterline: the land cells touching the sea.
        inner(
            (0..w * h)
                .map(|i| f32::from(u8::from(!sea[i] && neighbours(i, w, h).any(|j| sea[j]))))
                .collect(),
        )
    } else {
        // 1 at the waterline, falling linearly to 0 at shore_width_m inland, over the land
        // share of each cell; distances to the waterline itself, placed within the coast
        // cells as for the sea's coverage, so the band does not move with the grid.
        let dist = waterline_distance(&signed, (&gx, &gy), cell, reach + 2.0, (src, dst));
        dist.iter()
            .zip(&cover)
            .map(|(&d, &c)| (1.0 - c) * unit((1.0 - f64::from(d) / reach) as f32))
            .collect()
    };
    let slope = inner(angle(&gx, &gy).into_vec());
    let zc = crop(zd, w, src, dst);
    let sea_c = crop(sea, w, src, dst);
    let (bh, bs) = (p.beach_height_m as f32, p.beach_slope_deg as f32);
    let beach: Vec<f32> = shore
        .iter()
        .zip(&zc)
        .zip(&slope)
        .map(|((&s, &v), &a)| {
            let low = 1.0 - step(v - level, bh, 0.25 * bh);
            let gentle = 1.0 - step(a, bs + 2.0, 4.0);
            unit(s * low * gentle)
        })
        .collect();
    let surface = zc
        .iter()
        .zip(&sea_c)
        .map(|(&v, &s)| if s { level } else { v })
        .collect();
    [surface, cover, shore, beach]
}

/// The part of `v` (rows of `w` values over `src`) over `dst`.
fn crop<T: Copy>(v: &[T], w: usize, src: Window, dst: Window) -> Vec<T> {
    let (dx, dy) = (dst.x0 - src.x0, dst.y0 - src.y0);
    (0..dst.height)
        .flat_map(|y| v[(dy + y) * w + dx..][..dst.width].iter().copied())
        .collect()
}

/// Each cell of `dst`'s distance (in cells) from its centre to the nearest waterline point,
/// up to `reach` cells (beyond: infinity); 0 for centres on the sea side of the waterline. The
/// waterline points are placed within the coast cells of `src` (finite `signed`, metres,
/// positive inland) at `signed` down the terrain's gradient (`gx`, `gy`), in global cell
/// coordinates. The distance is exact: the least over the points within reach of the cell,
/// each point's disc visited row by row. A minimum does not depend on the order it is taken
/// in, so any window holding `dst` and [`halo`] cells around it gives the whole map's bits.
/// (Grevera 2004's dead reckoning, used before, carries points along two raster passes over
/// the whole map: a result that depends on the whole scan, and a fraction of a cell off.)
fn waterline_distance(
    signed: &[f64],
    (gx, gy): (&Field, &Field),
    cell: f64,
    reach: f64,
    (src, dst): (Window, Window),
) -> Vec<f32> {
    let w = src.width;
    let (gx, gy) = (gx.data(), gy.data());
    // Each row's waterline points, in global cell coordinates.
    let points: Vec<Vec<(f64, f64)>> = (0..src.height)
        .into_par_iter()
        .map(|y| {
            (0..w)
                .filter_map(|x| {
                    let i = y * w + x;
                    let d = signed[i];
                    if !d.is_finite() {
                        return None;
                    }
                    let (x, y) = ((src.x0 + x) as f64, (src.y0 + y) as f64);
                    let (a, b) = (f64::from(gx[i]), f64::from(gy[i]));
                    let g = a.hypot(b);
                    Some(if g <= 1e-12 {
                        (x, y)
                    } else {
                        let t = d / cell / g;
                        (x - a * t, y - b * t)
                    })
                })
                .collect()
        })
        .collect();
    let r2 = reach * reach;
    // A point lies within 1.5 cells of its coast cell.
    let rows = reach.ceil() as usize + 2;
    let mut out = vec![0.0f32; dst.width * dst.height];
    crate::field::for_each_row(&mut out, dst.width, &|j, row| {
        let y = dst.y0 + j;
        let fy = y as f64;
        let sy = y - src.y0;
        let mut best = vec![f64::INFINITY; dst.width];
        for pts in &points[sy.saturating_sub(rows)..(sy + rows + 1).min(src.height)] {
            for &(px, py) in pts {
                let dy = fy - py;
                let dy2 = dy * dy;
                if dy2 > r2 {
                    continue;
                }
                // The disc's columns on this row, a cell wider each side than its rounding.
                let half = (r2 - dy2).sqrt();
                let lo = ((px - half).floor() - 1.0).max(dst.x0 as f64);
                let hi = ((px + half).ceil() + 1.0).min((dst.x0 + dst.width) as f64 - 1.0);
                if lo > hi {
                    continue;
                }
                for x in lo as usize..=hi as usize {
                    let dx = x as f64 - px;
                    let d = dx * dx + dy2;
                    let b = &mut best[x - dst.x0];
                    if d < *b {
                        *b = d;
                    }
                }
            }
        }
        for (x, (o, &d2)) in row.iter_mut().zip(&best).enumerate() {
            let s = signed[sy * w + dst.x0 - src.x0 + x];
            *o = if s < 0.0 {
                0.0
            } else if d2 <= r2 {
                d2.sqrt() as f32
            } else {
                f32::INFINITY
            };
        }
    });
    out
}

/// Scratch fields of a tiled run: each cell's sea flag (1: sea), and its below-level region
/// within its tile (`u32::MAX`: at or above the level).
const SEA: &str = "sea";
const BELOW: &str = "below";

/// The sea run tile by tile (`tiles::run_tiled`): the very bits of [`Sea::eval`] on the whole
/// map. The sea — cells below the level connected to the map edge — is joined across tiles in
/// Barnes' manner: each tile labels its regions below the level (8-neighbours) and sends
/// which touch the map edge and the region of each perimeter cell; a union–find over the
/// seams joins them, and a region is sea when any of its parts touches the edge. Then each
/// tile computes its outputs over itself grown by [`halo`] cells (the shore's reach), reading
/// the terrain and the joined sea there.
pub(super) fn tiled(
    run: &super::TileRun,
    emit: &mut dyn FnMut(usize, Vec<Field>) -> Result<(), String>,
) -> Result<(), String> {
    use crate::node::Params as _;
    let p = SeaParams::from_values(run.values);
    let t = run.tiling;
    let level = p.level_m as f32;
    if p.connected {
        join_sea(run, level)?;
    } else {
        (0..t.count()).into_par_iter().try_for_each(|k| {
            run.check()?;
            let (z, _) = (run.read)(t.window(k))?;
            let sea: Vec<u8> = z.iter().map(|&v| u8::from(v < level)).collect();
            run.scratch.put(k, SEA, &sea)
        })?;
    }
    let margin = halo(&p, run.cell_m);
    for k in 0..t.count() {
        run.check()?;
        let win = t.window(k);
        let src = win.expand(margin, t.n);
        let (z, _) = (run.read)(src)?;
        let z = Field::from_vec(src.width, src.height, z).ok_or("field size")?;
        let sea: Vec<bool> = run
            .scratch
            .window::<u8>(t, SEA, src)?
            .into_iter()
            .map(|s| s != 0)
            .collect();
        let fields = outputs(&z, &sea, src, win, run.cell_m, &p)
            .into_iter()
            .map(|v| Field::from_vec(win.width, win.height, v).ok_or_else(|| "field size".into()))
            .collect::<Result<Vec<_>, String>>()?;
        emit(k, fields)?;
    }
    Ok(())
}

/// Each tile's sea flags ([`SEA`]) over a tiled map: the cells below `level` connected to the
/// map edge through cells below it, as [`flood_from_edge`] finds them on the whole map.
fn join_sea(run: &super::TileRun, level: f32) -> Result<(), String> {
    use super::tiled::{join_regions, rim, root};
    // Per tile: whether each region touches the map edge, and the region of each perimeter
    // cell (global index).
    type Part = (Vec<bool>, Vec<(usize, u32)>);
    let t = run.tiling;
    let n = t.n;
    let parts: Vec<Part> = (0..t.count())
        .into_par_iter()
        .map(|k| {
            run.check()?;
            let win = t.window(k);
            let (w, h) = (win.width, win.height);
            let (z, _) = (run.read)(win)?;
            let mut id = vec![u32::MAX; w * h];
            let mut edge = Vec::new();
            let mut stack = Vec::new();
            for s in 0..w * h {
                // At or above the level (NaN included: `flood_from_edge` asks `z < level`).
                if id[s] != u32::MAX || z[s].is_nan() || z[s] >= level {
                    continue;
                }
                let region = edge.len() as u32;
                let mut touches = false;
                id[s] = region;
                stack.push(s);
                while let Some(i) = stack.pop() {
                    touches |= t.on_map_edge(win.x0 + i % w, win.y0 + i / w);
                    for j in neighbours(i, w, h) {
                        if id[j] == u32::MAX && z[j] < level {
                            id[j] = region;
                            stack.push(j);
                        }
                    }
                }
                edge.push(touches);
            }
            let rim = rim(win, n, &id);
            run.scratch.put(k, BELOW, &id)?;
            Ok((edge, rim))
        })
        .collect::<Result<_, String>>()?;
    let (base, mut parent) = join_regions(
        t,
        &parts
            .iter()
            .map(|(edge, rim)| (edge.len(), rim.as_slice()))
            .collect::<Vec<_>>(),
    );
    let mut sea = vec![false; parent.len()];
    for (k, (edge, _)) in parts.iter().enumerate() {
        for (r, &e) in edge.iter().enumerate() {
            let g = root(&mut parent, base[k] + r);
            sea[g] |= e;
        }
    }
    for k in 0..t.count() {
        run.check()?;
        let id: Vec<u32> = run.scratch.get(t, k, BELOW)?;
        let flags: Vec<u8> = id
            .iter()
            .map(|&r| u8::from(r != u32::MAX && sea[root(&mut parent, base[k] + r as usize)]))
            .collect();
        run.scratch.put(k, SEA, &flags)?;
    }
    run.scratch.remove(t, BELOW);
    Ok(())
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

    /// The waterline distance against the brute-force distance to the nearest waterline
    /// point, on random scattered points (flat terrain: each point at its cell's centre):
    /// exact within the reach and infinite beyond it; and over any window grown by the halo,
    /// the whole map's bits.
    #[test]
    fn waterline_distance_equals_brute_force_in_any_window() {
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
        let all = Window {
            x0: 0,
            y0: 0,
            width: w,
            height: h,
        };
        let d = waterline_distance(&signed, (&flat, &flat), 1.0, reach, (all, all));
        for (i, &got) in d.iter().enumerate() {
            let (x, y) = ((i % w) as f64, (i / w) as f64);
            let best = (0..w * h)
                .filter(|&j| signed[j].is_finite())
                .map(|j| ((j % w) as f64 - x).hypot((j / w) as f64 - y))
                .fold(f64::INFINITY, f64::min);
            if best <= reach {
                assert!(
                    (f64::from(got) - best).abs() < 1e-6,
                    "cell {i}: {got} for {best}"
                );
            } else {
                assert!(got.is_infinite(), "cell {i}: {got} beyond the reach");
            }
        }
        let dst = Window {
            x0: 13,
            y0: 7,
            width: 11,
            height: 9,
        };
        let src = dst.expand(reach as usize + 3, w.max(h));
        let src = Window {
            width: src.width.min(w - src.x0),
            height: src.height.min(h - src.y0),
            ..src
        };
        let part = crop(&signed, w, all, src);
        let pf = Field::filled(src.width, src.height, 0.0);
        let got = waterline_distance(&part, (&pf, &pf), 1.0, reach, (src, dst));
        assert!(
            got == crop(&d, w, all, dst),
            "a window's distances are not the map's"
        );
    }
}
