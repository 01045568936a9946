//! Erosion: nodes that move material over the terrain.

pub mod diffusion;
pub mod droplet;
pub mod flow;
pub mod hydraulic_grid;
pub mod hydraulic_pipe;
pub mod kernel;
pub mod levels;
pub mod lim2022;
pub mod stream_power;
pub mod thermal;

use crate::field::Field;
use crate::node::Registry;

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

pub(crate) use kernel::{around, blocks, blocks_mut, ring_slot, Block, Row, LANES};

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
