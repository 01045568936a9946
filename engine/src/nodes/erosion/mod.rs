//! Erosion: nodes that move material over the terrain.
//!
//! # Invariants
//! Held by every erosion node and tested. **The same bytes for any thread count**, and the nodes
//! that move material **conserve** terrain + suspended sediment + what left the map. **Two
//! passes, no scatter**: a cell first computes what it sends (reading the old state), then sums
//! what it receives (writing only itself); shares are recomputed by the receiver with the
//! sender's very comparison, so what arrives is what was sent. **Fixed partitions**: whatever is
//! cut into bands, tiles or chunks is cut by the resolution, never by the thread count, and
//! partial results are combined in a fixed order.
//!
//! # Resolution
//! Every node runs through [`levels`]: in the default `detail = consistent` it runs in full at
//! its base resolution and a finer build refines. Every node but the pipe model refines once,
//! at the build's resolution (`Schedule::Direct`): one run adds every band below the base's
//! cells, as the literal algorithm would at that size, and its drift (its change averaged over
//! the base's cells minus the base's change) is taken out. Droplets run at most 32 of the
//! build's cells and lay the coarse levels' deposits down again (drift smoothed over half a
//! base cell so no base cells show); thermal relaxes at a quarter and half of the build's
//! resolution first (a multigrid cycle), its drift smoothed over one base cell (taken out
//! sharper, it steepens the slopes just relaxed); grid hydraulic runs a quarter of its
//! iterations; stream power two fifths of its steps, its drift taken out exactly (an
//! area-preserving histospline, [`crate::field::conserve`]: the nodes below it read its
//! valleys' slopes); Lim–Tan–Bhojan a fifth of its ticks. The pipe model refines at every
//! doubling (`Schedule::Doubling`).
//!
//! # Layout
//! One file per node, each saying how it is computed. Here: the shared neighbourhood and the
//! wear/deposition masks. [`kernel`]: what the banded kernels share (register blocks, aligned
//! task rows, per-thread scratch, phase timings). [`flow`]: the single-direction routing shared
//! by stream power and Lim–Tan–Bhojan. What was tried and measured for each algorithm is in
//! docs/perf-log.md (erosion engineering notes).

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
