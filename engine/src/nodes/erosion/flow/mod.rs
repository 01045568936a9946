//! Single-direction flow routing shared by the stream-power and Lim–Tan–Bhojan nodes:
//! jittered node positions, steepest-descent receivers (D4 and D8 row kernels), donor masks
//! and upstream walks of the receiver forest, and depression routing over the graph of pit
//! basins (Cordonnier et al. 2016's basin tree, Lim, Tan & Bhojan 2022 §2.3), whose lake levels equal a
//! priority flood's.

/// "No receiver": the cell is a root (outlet, or a pit before depression routing).
pub const NONE: u32 = u32::MAX;

mod depressions;
mod receivers;
mod spill;
#[cfg(test)]
mod tests;
mod upstream;

pub use depressions::Depressions;
pub use receivers::{receivers_d4, receivers_d8, D4Distances, D8Distances};
pub use upstream::{donors_d8, upstream_bfs, upstream_cells, DonorSteps};
// What the submodules share among themselves.
use depressions::Pass;
use receivers::receivers_d8_rows;
use spill::{spill_levels, Spill};
use upstream::append_upstream_cells;

pub use super::kernel::{Laps, PerThread};
use crate::node::splitmix64;
use rayon::prelude::*;

/// Node positions inside their cells, in cell units: `(x + ox, y + oy)` with offsets drawn
/// uniformly in `[0.5 − jitter/2, 0.5 + jitter/2]` from `(seed, cell index)` (Lim, Tan & Bhojan 2022 §3.1
/// "Node Offset"; `jitter = 1` is the paper's full `[0, 1]`).
#[must_use]
pub fn jittered_offsets(seed: u64, n: usize, jitter: f32) -> Vec<[f32; 2]> {
    (0..n)
        .into_par_iter()
        .map(|i| offset(seed, i as u64, jitter))
        .collect()
}

/// [`jittered_offsets`] of a window of an `resolution`² map, drawn from each cell's index in
/// the whole map: a tiled build's window places its nodes where the whole map's build does.
#[must_use]
pub fn jittered_offsets_in(
    seed: u64,
    window: crate::node::Window,
    resolution: usize,
    jitter: f32,
) -> Vec<[f32; 2]> {
    let w = window.width.max(1);
    (0..window.width * window.height)
        .into_par_iter()
        .map(|i| {
            let (x, y) = (window.x0 + i % w, window.y0 + i / w);
            offset(seed, (y * resolution + x) as u64, jitter)
        })
        .collect()
}

/// Cell `i`'s node offset (see [`jittered_offsets`]).
fn offset(seed: u64, i: u64, jitter: f32) -> [f32; 2] {
    let r = splitmix64(seed ^ splitmix64(i));
    let u = (r >> 40) as f32 / (1u64 << 24) as f32;
    let v = ((r >> 16) & 0xFF_FFFF) as f32 / (1u64 << 24) as f32;
    [0.5 + jitter * (u - 0.5), 0.5 + jitter * (v - 0.5)]
}

/// A neighbourhood: offsets `(dx, dy)`.
pub const D8: [(i32, i32); 8] = [
    (-1, -1),
    (0, -1),
    (1, -1),
    (-1, 0),
    (1, 0),
    (-1, 1),
    (0, 1),
    (1, 1),
];
/// The von Neumann neighbourhood (Lim, Tan & Bhojan 2022 §3.2 drains to one of the four adjacent tiles).
pub const D4: [(i32, i32); 4] = [(0, -1), (-1, 0), (1, 0), (0, 1)];

/// Order-preserving map of a float to an unsigned key.
#[inline]
#[must_use]
pub fn order_key(v: f32) -> u32 {
    let b = v.to_bits();
    if b & 0x8000_0000 != 0 {
        !b
    } else {
        b | 0x8000_0000
    }
}

/// The float whose [`order_key`] is `k`.
#[inline]
#[must_use]
pub fn from_order_key(k: u32) -> f32 {
    f32::from_bits(if k & 0x8000_0000 != 0 {
        k & 0x7FFF_FFFF
    } else {
        !k
    })
}

/// Index steps of [`D8`]'s offsets on a row-major grid `w` wide.
#[must_use]
pub fn d8_steps(w: usize) -> [isize; 8] {
    D8.map(|(dx, dy)| dy as isize * w as isize + dx as isize)
}

/// Neighbour masks of row `y` of a grid of `u32` values: bit `d` of a cell's mask is set
/// when `bit(the neighbour's value, the cell's index, the cell's value)` holds for its
/// neighbour at [`D8`]`[d]` (neighbours off the map set none). Inlined into multiversioned
/// wrappers, so the inner rows' loop is vectorised for their targets.
#[expect(clippy::inline_always)]
#[inline(always)]
pub(super) fn mask_d8_row(
    vals: &[u32],
    w: usize,
    y: usize,
    out: &mut [u8],
    bit: impl Fn(u32, u32, u32) -> bool,
) {
    let h = vals.len() / w;
    let row = y * w;
    let slow = |x: usize| {
        let i = row + x;
        let mut m = 0u8;
        for (d, &(dx, dy)) in D8.iter().enumerate() {
            let (nx, ny) = (x as i32 + dx, y as i32 + dy);
            if nx >= 0
                && ny >= 0
                && (nx as usize) < w
                && (ny as usize) < h
                && bit(vals[ny as usize * w + nx as usize], i as u32, vals[i])
            {
                m |= 1 << d;
            }
        }
        m
    };
    if y == 0 || y + 1 == h || w < 3 {
        for (x, o) in out.iter_mut().enumerate() {
            *o = slow(x);
        }
        return;
    }
    out[0] = slow(0);
    out[w - 1] = slow(w - 1);
    let n = w - 2;
    let s = |at: usize| &vals[at..at + n];
    let (up, dn) = (row - w, row + w);
    let nb = [
        s(up),
        s(up + 1),
        s(up + 2),
        s(row),
        s(row + 2),
        s(dn),
        s(dn + 1),
        s(dn + 2),
    ];
    let (own, o) = (s(row + 1), &mut out[1..=n]);
    for k in 0..n {
        let i = (row + 1 + k) as u32;
        let mut m = 0u8;
        for (d, v) in nb.iter().enumerate() {
            m |= u8::from(bit(v[k], i, own[k])) << d;
        }
        o[k] = m;
    }
}

/// Keeps a list's room for the next step, but not room it no longer needs.
pub(super) fn trim<T>(v: &mut Vec<T>) {
    if v.capacity() > 4 * v.len() + 1024 {
        v.shrink_to(2 * v.len() + 256);
    }
}
