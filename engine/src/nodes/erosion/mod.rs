//! Erosion: nodes that move material over the terrain.

pub mod droplet;
pub mod flow;
pub mod hydraulic_grid;
pub mod hydraulic_pipe;
pub mod lim2022;
pub mod stream_power;
pub mod thermal;

use crate::field::Field;
use crate::node::Registry;
use rayon::prelude::*;

/// Moore neighbourhood: offsets and distances in cells.
pub const NEIGHBOURS: [(isize, isize, f32); 8] = [
    (-1, -1, std::f32::consts::SQRT_2),
    (0, -1, 1.0),
    (1, -1, std::f32::consts::SQRT_2),
    (-1, 0, 1.0),
    (1, 0, 1.0),
    (-1, 1, std::f32::consts::SQRT_2),
    (0, 1, 1.0),
    (1, 1, std::f32::consts::SQRT_2),
];

/// Applies per-cell outflows `flow[i][k]` (towards neighbour k) to a quantity `v`:
/// `out[i] = v[i] − Σ_k flow[i][k]·scale[i] + Σ inflows·(sender's scale)`. Order-independent
/// and parallel over rows; every moved amount is subtracted and added exactly once, and
/// nothing flows off the map, so the total of `v` is conserved up to rounding.
pub fn gather(
    v: &[f32],
    flow: &[[f32; 8]],
    scale: &[f32],
    width: usize,
    height: usize,
    out: &mut [f32],
) {
    out.par_chunks_mut(width.max(1))
        .enumerate()
        .for_each(|(y, row)| {
            for (x, o) in row.iter_mut().enumerate() {
                let i = y * width + x;
                let mut n = v[i] - flow[i].iter().sum::<f32>() * scale[i];
                for (k, &(dx, dy, _)) in NEIGHBOURS.iter().enumerate() {
                    // The neighbour at (x − dx, y − dy) sends towards this cell along direction k.
                    let (sx, sy) = (x as isize - dx, y as isize - dy);
                    if sx >= 0 && sy >= 0 && sx < width as isize && sy < height as isize {
                        let j = sy as usize * width + sx as usize;
                        n += flow[j][k] * scale[j];
                    }
                }
                *o = n;
            }
        });
}

/// A non-negative field scaled so its largest value is 1 (all zeros stay zeros).
#[must_use]
pub fn relative(f: Field) -> Field {
    let top = f.min_max().map_or(0.0, |(_, hi)| hi);
    if top > 0.0 {
        f.map(|v| crate::node::unit(v / top))
    } else {
        f.map(|_| 0.0)
    }
}

/// Wear (where the terrain went down) and deposition (where it went up) masks, each
/// relative to its largest change.
#[must_use]
pub fn change_masks(before: &Field, after: &Field) -> (Field, Field) {
    let wear = Field::zip_map(before, after, |b, a| (b - a).max(0.0));
    let deposit = Field::zip_map(before, after, |b, a| (a - b).max(0.0));
    (relative(wear), relative(deposit))
}

pub fn register(reg: &mut Registry) {
    reg.register::<thermal::Thermal>();
    reg.register::<hydraulic_grid::GridHydraulic>();
    reg.register::<droplet::Droplet>();
    reg.register::<hydraulic_pipe::PipeHydraulic>();
    reg.register::<stream_power::StreamPowerErosion>();
    reg.register::<lim2022::LimTanBhojan>();
}
