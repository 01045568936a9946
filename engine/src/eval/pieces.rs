//! How a global (erosion) node is refined finer than the coarse pass in pieces: the world is
//! cut into square *pieces* on a grid anchored to the world (never to the tiles), each piece
//! refined on its own window, and the pieces blended by a partition of unity.
//!
//! A piece's result depends only on its window of the node's inputs and the node's base
//! level, and a cell's weights only on its global position, so every computation that covers
//! a cell gives it the same value. A staged tiled build refines each piece once and blends the
//! pieces into every tile (`tiles::stages`): its result is the same for every tile size.
//!
//! Geometry along each axis of `n` cells (cells): piece `k`'s core is `[kP, (k+1)P)` clipped
//! to the map, `k` in `0..ceil(n/P)`; its weight is 1 inside the core, ramps (smoothstep) to 0
//! over `BLEND` cells on either side of each core edge inside the map (not at the map's own
//! edges, where no neighbour takes over), and the neighbouring piece's weight is one minus it
//! there, so the weights of a cell sum to exactly 1. Its window is its support (core ±
//! `BLEND`) grown by `HALO`, moved inside the map where it would cross the edge (so it stays
//! square: droplets and stream power run on square grids). At 4096² that is 16 pieces of
//! 1152²: 1.27× the map's cells.

use crate::node::Window;

/// The pieces' pitch (core side), in cells of the build.
pub(crate) const PITCH: usize = 1024;
/// Half the width of the band over which two neighbouring pieces are blended.
pub(super) const BLEND: usize = 16;
/// What a piece computes beyond its support, so the cells it is weighted on are not at its
/// window's edge: longer than a refinement's reach (droplets run 32 cells plus a brush of 2;
/// grid hydraulic refines with 20 iterations at 4096², each moving water a cell; thermal's
/// multigrid relaxes about √iterations cells of each grid: 9 of a quarter-resolution grid,
/// 36 of the build's).
pub(super) const HALO: usize = 48;

/// One piece: its grid index along x and y.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Piece {
    pub kx: i64,
    pub ky: i64,
}

/// The start of piece `k`'s core along an axis.
fn core_start(k: i64) -> i64 {
    k * PITCH as i64
}

/// How many pieces cover an axis of `n` cells.
fn count(n: usize) -> i64 {
    n.div_ceil(PITCH).max(1) as i64
}

/// `smoothstep` of `t` clamped to [0, 1].
fn ramp(t: f64) -> f64 {
    let t = t.clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

/// Piece `k`'s weight at cell `i` along one axis of `n` cells.
pub(crate) fn weight(k: i64, i: usize, n: usize) -> f32 {
    let c = i as f64 + 0.5;
    let (a, b) = (core_start(k) as f64, core_start(k + 1) as f64);
    let up = if k == 0 {
        1.0
    } else {
        ramp((c - (a - BLEND as f64)) / (2 * BLEND) as f64)
    };
    let down = if k + 1 >= count(n) {
        0.0
    } else {
        ramp((c - (b - BLEND as f64)) / (2 * BLEND) as f64)
    };
    (up * (1.0 - down)) as f32
}

/// The pieces along one axis of `n` cells whose weight is not zero somewhere in
/// `[lo, lo + len)`.
fn range(lo: usize, len: usize, n: usize) -> std::ops::RangeInclusive<i64> {
    let (lo, hi) = (lo as i64, (lo + len) as i64);
    let b = BLEND as i64;
    let last_piece = count(n) - 1;
    // Support of k: [kP − B, (k+1)P + B), without the ramps at the map's edges.
    let first = (0..=last_piece)
        .find(|&k| core_start(k + 1) + b > lo)
        .unwrap_or(last_piece);
    let last = (first..=last_piece)
        .rev()
        .find(|&k| k == 0 || core_start(k) - b < hi)
        .unwrap_or(first);
    first..=last
}

/// The pieces whose weights are not zero somewhere in `w` of an `n × n` map.
pub(crate) fn covering(w: Window, n: usize) -> Vec<Piece> {
    let mut out = Vec::new();
    for ky in range(w.y0, w.height, n) {
        for kx in range(w.x0, w.width, n) {
            out.push(Piece { kx, ky });
        }
    }
    out
}

/// Every piece of an `n × n` map, row by row (piece `j` of a staged plan is the `j`-th).
pub(crate) fn all(n: usize) -> Vec<Piece> {
    covering(Window::full(n), n)
}

/// Adds `delta` (piece `piece`'s result over its window `pw`), weighted, to `acc` over `out`.
pub(crate) fn blend_into(
    acc: &mut [f32],
    out: Window,
    piece: Piece,
    pw: Window,
    delta: &[f32],
    n: usize,
) {
    let (x0, x1, y0, y1) = pw.overlap(&out);
    if x0 >= x1 || y0 >= y1 {
        return;
    }
    let wx: Vec<f32> = (x0..x1).map(|x| weight(piece.kx, x, n)).collect();
    for y in y0..y1 {
        let wy = weight(piece.ky, y, n);
        if wy == 0.0 {
            continue;
        }
        let src = &delta[(y - pw.y0) * pw.width..][..pw.width][x0 - pw.x0..x1 - pw.x0];
        let dst = &mut acc[(y - out.y0) * out.width..][..out.width][x0 - out.x0..x1 - out.x0];
        for ((d, s), wx) in dst.iter_mut().zip(src).zip(&wx) {
            if *wx != 0.0 {
                *d += wy * wx * s;
            }
        }
    }
}

/// Piece `k`'s window along one axis of `n` cells: `(start, len)`.
fn span(k: i64, n: usize) -> (usize, usize) {
    let side = PITCH + 2 * (BLEND + HALO);
    if side >= n {
        return (0, n);
    }
    let start = core_start(k) - (BLEND + HALO) as i64;
    (start.clamp(0, (n - side) as i64) as usize, side)
}

impl Piece {
    /// The square window this piece is refined on, in an `n × n` map.
    pub(crate) fn window(self, n: usize) -> Window {
        let ((x0, width), (y0, height)) = (span(self.kx, n), span(self.ky, n));
        Window {
            x0,
            y0,
            width,
            height,
        }
    }
}

/// The union of the windows of the pieces covering `w`: what a refining node must be given.
pub(super) fn reach(w: Window, n: usize) -> Window {
    covering(w, n)
        .into_iter()
        .map(|p| p.window(n))
        .fold(w, |a, b| a.union(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_sum_to_one_and_pieces_cover_what_they_weigh() {
        for n in [1000, 2048, 3000, 5000] {
            for i in 0..n {
                let ks = range(i, 1, n);
                let sum: f32 = ks.clone().map(|k| weight(k, i, n)).sum();
                assert!((sum - 1.0).abs() < 1e-6, "{n}: cell {i}: {sum}");
                for k in ks {
                    let (s, len) = span(k, n);
                    if weight(k, i, n) > 0.0 {
                        assert!(s <= i && i < s + len, "{n}: cell {i} piece {k}");
                    }
                }
                // Pieces outside the range weigh nothing there.
                let r = range(i, 1, n);
                for k in [r.start() - 1, r.end() + 1] {
                    if (0..count(n)).contains(&k) {
                        assert_eq!(weight(k, i, n), 0.0, "{n}: cell {i} piece {k}");
                    }
                }
            }
        }
        let n = 1000;
        // Square windows inside the map, the same for any caller.
        let w = Window {
            x0: 300,
            y0: 0,
            width: 200,
            height: 120,
        };
        for p in covering(w, n) {
            let pw = p.window(n);
            assert_eq!(pw.width, pw.height);
            assert!(pw.x0 + pw.width <= n && pw.y0 + pw.height <= n);
        }
    }
}
