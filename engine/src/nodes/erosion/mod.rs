//! Erosion: nodes that move material over the terrain.

pub mod diffusion;
pub mod droplet;
pub mod flow;
pub mod hydraulic_grid;
pub mod hydraulic_pipe;
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

/// Cells per register block in the banded stencil kernels (thermal, grid hydraulic): one
/// AVX-512 vector.
const LANES: usize = 16;

/// `LANES` cells: one register block of the stencil kernels.
pub(crate) type Block = [f32; LANES];

/// The first `count` blocks of `row` (rows are sized so that they have them: an internal
/// invariant, not user data). Slicing to the exact count lets the block loops run without
/// bounds checks.
pub(crate) fn blocks(row: &[f32], count: usize) -> &[Block] {
    &row.as_chunks::<LANES>().0[..count]
}

/// The first `count` blocks of each of the eight neighbours of a padded row's cells, from
/// the padded rows above, at and below it, in `NEIGHBOURS` order. Written out (not
/// `NEIGHBOURS.map`) so the optimiser keeps every slice's length and drops the bounds
/// checks in the block loops.
#[expect(clippy::inline_always)]
#[inline(always)]
pub(crate) fn around(rows: [&[f32]; 3], count: usize) -> [&[Block]; 8] {
    let [up, mid, down] = rows;
    [
        blocks(up, count),
        blocks(&up[1..], count),
        blocks(&up[2..], count),
        blocks(mid, count),
        blocks(&mid[2..], count),
        blocks(down, count),
        blocks(&down[1..], count),
        blocks(&down[2..], count),
    ]
}

pub(crate) fn blocks_mut(row: &mut [f32], count: usize) -> &mut [Block] {
    &mut row.as_chunks_mut::<LANES>().0[..count]
}

/// A task-local row of `len` cells whose index `aligned` starts a cache line, so that the
/// blocks of the row's cells are whole cache lines (a block load straddling two lines costs
/// two). The buffer is never reallocated, so the alignment holds for the row's life.
pub(crate) struct Row {
    buf: Vec<f32>,
    start: usize,
    len: usize,
}

impl Row {
    pub(crate) fn new(len: usize, value: f32, aligned: usize) -> Self {
        const LINE: usize = 64;
        let buf = vec![value; len + LINE / 4];
        let at = (buf.as_ptr() as usize + aligned * 4) % LINE;
        let start = (LINE - at) % LINE / 4;
        Self { buf, start, len }
    }
}

impl std::ops::Deref for Row {
    type Target = [f32];
    fn deref(&self) -> &[f32] {
        &self.buf[self.start..self.start + self.len]
    }
}

impl std::ops::DerefMut for Row {
    fn deref_mut(&mut self) -> &mut [f32] {
        &mut self.buf[self.start..self.start + self.len]
    }
}

/// Slot of map row `row` in a ring of `ring` task-local rows (the banded stencil kernels
/// keep the rows a band is working on in such rings).
#[inline]
fn ring_slot(row: isize, ring: isize) -> usize {
    row.rem_euclid(ring) as usize
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
