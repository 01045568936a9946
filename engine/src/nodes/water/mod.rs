//! Water: where it flows, where it pools, where rivers run, where the sea is, where snow lies —
//! the maps artists texture and place water with. Every node reads the whole map (a lake, a
//! river or an avalanche depends on terrain far away), so in a tiled build they run once over
//! the world at the coarse size.
//!
//! Shared here: the priority flood every water node starts from ([`flood`]: Barnes et al. 2014,
//! in parallel strips after Barnes 2016) and an exact Euclidean distance transform
//! (Felzenszwalb & Huttenlocher 2012).

pub mod flood;
pub mod flow_accumulation;
pub mod lakes;
pub mod rivers;
pub mod sea;
pub mod snow;

pub use flood::{priority_flood, Flood};

use crate::node::Registry;
use crate::nodes::erosion::flow::D8;

/// Registers the water nodes.
pub fn register(reg: &mut Registry) {
    reg.register::<flow_accumulation::FlowAccumulation>();
    reg.register::<lakes::Lakes>();
    reg.register::<rivers::Rivers>();
    reg.register::<sea::Sea>();
    reg.register::<snow::Snow>();
}

/// "No cell".
pub const NONE: u32 = u32::MAX;

/// Whether cell `i` of a `w × h` grid lies on the map edge.
#[must_use]
pub fn is_edge(i: usize, w: usize, h: usize) -> bool {
    let (x, y) = (i % w, i / w);
    x == 0 || y == 0 || x + 1 == w || y + 1 == h
}

/// The 8-neighbours of cell `c` of a `w × h` grid that lie on the map, in [`D8`] order.
pub fn neighbours(c: usize, w: usize, h: usize) -> impl Iterator<Item = usize> {
    let (x, y) = ((c % w) as isize, (c / w) as isize);
    D8.iter().filter_map(move |&(dx, dy)| {
        let (nx, ny) = (x + dx as isize, y + dy as isize);
        (nx >= 0 && ny >= 0 && nx < w as isize && ny < h as isize)
            .then(|| ny as usize * w + nx as usize)
    })
}

/// The 8-neighbours of the cells of a `w × h` grid, at fixed offsets off the map edge (the
/// per-cell loops of flat routing and accumulation).
#[derive(Clone, Copy, Debug)]
pub struct Grid {
    w: usize,
    h: usize,
    offsets: [isize; 8],
}

impl Grid {
    #[must_use]
    pub fn new(w: usize, h: usize) -> Self {
        Self {
            w,
            h,
            offsets: D8.map(|(dx, dy)| dy as isize * w as isize + dx as isize),
        }
    }

    /// The neighbours on the map of the cell at `(x, y)`, in [`D8`] order: the first `count`.
    #[inline]
    #[must_use]
    pub fn around(&self, x: usize, y: usize) -> ([usize; 8], usize) {
        let c = y * self.w + x;
        let mut cells = [0usize; 8];
        if x > 0 && y > 0 && x + 1 < self.w && y + 1 < self.h {
            for (n, o) in cells.iter_mut().zip(self.offsets) {
                *n = c.wrapping_add_signed(o);
            }
            return (cells, 8);
        }
        let mut count = 0;
        for j in neighbours(c, self.w, self.h) {
            cells[count] = j;
            count += 1;
        }
        (cells, count)
    }
}

/// Calls `f` with the cells of each lake: each 8-connected set of cells the flood raised
/// (`level > z`), in the order of their first cell.
pub fn for_each_lake(z: &[f32], level: &[f32], w: usize, h: usize, mut f: impl FnMut(&[usize])) {
    let n = w * h;
    let mut seen = vec![false; n];
    let mut lake = Vec::new();
    let mut stack = Vec::new();
    for start in 0..n {
        if seen[start] || level[start] <= z[start] {
            continue;
        }
        lake.clear();
        stack.push(start);
        seen[start] = true;
        while let Some(c) = stack.pop() {
            lake.push(c);
            for j in neighbours(c, w, h) {
                if !seen[j] && level[j] > z[j] {
                    seen[j] = true;
                    stack.push(j);
                }
            }
        }
        f(&lake);
    }
}

/// Squared Euclidean distance, in cells, from every cell to the nearest cell where `inside`
/// is true (`f32::INFINITY` when there is none): Felzenszwalb & Huttenlocher 2012's exact
/// transform, one pass along the rows and one along the columns.
#[must_use]
pub fn squared_distance(inside: &[bool], w: usize, h: usize) -> Vec<f32> {
    use rayon::prelude::*;
    const FAR: f32 = 1.0e20;
    let mut d: Vec<f32> = inside.iter().map(|&b| if b { 0.0 } else { FAR }).collect();
    d.par_chunks_mut(w).for_each(|row| {
        let mut s = Scratch::new(w);
        s.transform(row);
    });
    let mut cols = vec![0.0f32; w * h];
    // Transpose, transform the columns as rows, transpose back.
    for y in 0..h {
        for x in 0..w {
            cols[x * h + y] = d[y * w + x];
        }
    }
    cols.par_chunks_mut(h).for_each(|col| {
        let mut s = Scratch::new(h);
        s.transform(col);
    });
    for y in 0..h {
        for x in 0..w {
            let v = cols[x * h + y];
            d[y * w + x] = if v >= FAR / 2.0 { f32::INFINITY } else { v };
        }
    }
    d
}

/// The lower envelope of parabolas of one 1-D transform.
struct Scratch {
    v: Vec<usize>,
    z: Vec<f32>,
    f: Vec<f32>,
}

impl Scratch {
    fn new(n: usize) -> Self {
        Self {
            v: vec![0; n],
            z: vec![0.0; n + 1],
            f: vec![0.0; n],
        }
    }

    /// `row[q] ← min_p (q − p)² + row[p]` (Felzenszwalb & Huttenlocher 2012, Algorithm 1).
    fn transform(&mut self, row: &mut [f32]) {
        let n = row.len();
        if n == 0 {
            return;
        }
        self.f[..n].copy_from_slice(row);
        let (v, z, f) = (&mut self.v, &mut self.z, &self.f);
        let mut k = 0usize;
        v[0] = 0;
        z[0] = f32::NEG_INFINITY;
        z[1] = f32::INFINITY;
        let sq = |q: usize| (q * q) as f32;
        for q in 1..n {
            // z[0] is −∞, so this stops at k = 0 at the latest.
            let mut s;
            loop {
                let p = v[k];
                s = ((f[q] + sq(q)) - (f[p] + sq(p))) / (2.0 * (q - p) as f32);
                if s <= z[k] {
                    k -= 1;
                } else {
                    break;
                }
            }
            k += 1;
            v[k] = q;
            z[k] = s;
            z[k + 1] = f32::INFINITY;
        }
        k = 0;
        for (q, out) in row.iter_mut().enumerate() {
            while z[k + 1] < q as f32 {
                k += 1;
            }
            let p = v[k];
            let d = q as f32 - p as f32;
            *out = d * d + f[p];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distance_transform_equals_brute_force() {
        let (w, h) = (23, 17);
        let inside: Vec<bool> = (0..w * h)
            .map(|i| crate::node::splitmix64(i as u64).is_multiple_of(29))
            .collect();
        let d = squared_distance(&inside, w, h);
        for (i, &got) in d.iter().enumerate() {
            let (x, y) = ((i % w) as f32, (i / w) as f32);
            let best = (0..w * h)
                .filter(|&j| inside[j])
                .map(|j| {
                    let (a, b) = ((j % w) as f32 - x, (j / w) as f32 - y);
                    a * a + b * b
                })
                .fold(f32::INFINITY, f32::min);
            assert_eq!(got, best, "cell {i}");
        }
        assert!(squared_distance(&[false; 12], 4, 3)
            .iter()
            .all(|v| v.is_infinite()));
    }
}
