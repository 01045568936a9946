//! Donor masks and upstream walks of the receiver forest: every tree breadth first from its
//! root, branch-free over the donor bits.

use super::{d8_steps, mask_d8_row};
use rayon::prelude::*;

/// Donor masks of row `y`: bit `d` of a cell's mask is set when its neighbour at [`D8`]`[d]`
/// drains to it.
#[cfg_attr(
    not(any(feature = "simd-max-avx2", feature = "simd-portable")),
    multiversion::multiversion(targets(
        "x86_64+avx512f+avx512vl+avx2+fma+sse4.1",
        "x86_64+avx2+fma+sse4.1"
    ))
)]
#[cfg_attr(
    all(feature = "simd-max-avx2", not(feature = "simd-portable")),
    multiversion::multiversion(targets("x86_64+avx2+fma+sse4.1"))
)]
pub(super) fn donors_d8_row(rcv: &[u32], w: usize, y: usize, out: &mut [u8]) {
    mask_d8_row(rcv, w, y, out, |r, i, _| r == i);
}

/// Donor masks of every cell (see [`donors_d8_row`]), in parallel over rows.
pub fn donors_d8(rcv: &[u32], w: usize, donors: &mut [u8]) {
    donors
        .par_chunks_mut(w)
        .enumerate()
        .for_each(|(y, row)| donors_d8_row(rcv, w, y, row));
}

/// The tree of `root` in breadth-first order (every cell after its receiver), walked
/// upstream over the donor masks, into `order` (its length is the tree's size afterwards):
/// the queue is `order` itself, and a cell's receiver lies well before it, so the walks over
/// `order` that follow have no chain of dependent cells back to back. With `PARENT`,
/// `parent` gets the position in `order` of each cell's receiver (the root's is its own,
/// 0). Branch-free over the donor bits for up to four donors (how many donors a cell has is
/// data, not a pattern): the first four donors' cells, by a table ([`DonorSteps`]), are
/// written past the queue's end, which moves past the donors only, into a four-slot window
/// of fixed size (no bounds checks inside). Without `PARENT` the tree is written from
/// `order[base]` on (what is before stays), with `PARENT` `base` is 0.
pub(super) fn upstream_walk<const PARENT: bool>(
    donors: &[u8],
    steps: &DonorSteps,
    root: u32,
    (order, base): (&mut Vec<u32>, usize),
    parent: &mut Vec<u32>,
) {
    debug_assert!(!PARENT || base == 0);
    // Room for a window past `len`, growing by what this tree has taken so far (what is
    // before `base` is not zeroed again).
    let room = |v: &mut Vec<u32>, base: usize, len: usize| {
        if v.len() < len + 8 {
            v.resize(len + (len - base).max(8) + 8, 0);
        }
    };
    room(order, base, base);
    order[base] = root;
    if PARENT {
        room(parent, 0, 0);
        parent[0] = 0;
    }
    let (mut k, mut len) = (base, base + 1);
    while k < len {
        room(order, base, len);
        let c = order[k];
        let m = donors[c as usize] as usize;
        let count = steps.count[m] as usize;
        let window: &mut [u32; 4] = (&mut order[len..len + 4]).try_into().expect("4 slots");
        for (slot, &step) in window.iter_mut().zip(&steps.first[m]) {
            *slot = c.wrapping_add_signed(step);
        }
        if count > 4 {
            // Five donors or more: rare, so a branch that is rarely taken.
            let mut rest = m;
            for _ in 0..4 {
                rest &= rest - 1;
            }
            for slot in &mut order[len + 4..len + count] {
                *slot = c.wrapping_add_signed(steps.steps[rest.trailing_zeros() as usize]);
                rest &= rest - 1;
            }
        }
        if PARENT {
            room(parent, 0, len);
            parent[len..len + 4].fill(k as u32);
            if count > 4 {
                parent[len + 4..len + count].fill(k as u32);
            }
        }
        len += count;
        k += 1;
    }
    order.truncate(len);
    if PARENT {
        parent.truncate(len);
    }
}

/// The index steps to a cell's donors by donor mask, for [`upstream_walk`] on a grid `w`
/// wide: the steps of the first four donors (in [`D8`]'s order; 0 where there are fewer,
/// which writes the cell itself past the queue's end, harmless), the donor count, and
/// every direction's step for the rare fifth donor and beyond. Four writes per cell
/// instead of eight: most cells have one donor or none.
pub struct DonorSteps {
    pub(super) first: [[i32; 4]; 256],
    pub(super) count: [u8; 256],
    pub(super) steps: [i32; 8],
}

impl DonorSteps {
    #[must_use]
    pub fn new(w: usize) -> Self {
        let steps = d8_steps(w).map(|s| s as i32);
        let mut first = [[0; 4]; 256];
        let mut count = [0; 256];
        for m in 0..256usize {
            let dirs = (0..8).filter(|d| m >> d & 1 == 1);
            for (slot, d) in first[m].iter_mut().zip(dirs) {
                *slot = steps[d];
            }
            count[m] = m.count_ones() as u8;
        }
        Self {
            first,
            count,
            steps,
        }
    }
}

/// The tree of `root` breadth first into `order`, and in `parent` the position in `order`
/// of each cell's receiver (the root's is its own, 0); see [`upstream_walk`].
pub fn upstream_bfs(
    donors: &[u8],
    steps: &DonorSteps,
    root: u32,
    order: &mut Vec<u32>,
    parent: &mut Vec<u32>,
) {
    upstream_walk::<true>(donors, steps, root, (order, 0), parent);
}

/// The cells of the tree of `root`, breadth first, into `cells` (see [`upstream_walk`]).
pub fn upstream_cells(donors: &[u8], steps: &DonorSteps, root: u32, cells: &mut Vec<u32>) {
    upstream_walk::<false>(donors, steps, root, (cells, 0), &mut Vec::new());
}

/// [`upstream_cells`] appended to what `cells` holds.
pub(super) fn append_upstream_cells(
    donors: &[u8],
    steps: &DonorSteps,
    root: u32,
    cells: &mut Vec<u32>,
) {
    let base = cells.len();
    upstream_walk::<false>(donors, steps, root, (cells, base), &mut Vec::new());
}
