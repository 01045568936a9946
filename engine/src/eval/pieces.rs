//! How a tile refines a global (erosion) node finer than the coarse pass: the world is cut
//! into square *pieces* on a grid anchored to the world (never to the tiles), each piece
//! refined on its own window, and the pieces blended by a partition of unity.
//!
//! A piece's result depends only on its window of the node's inputs (which a windowed
//! evaluation gives bit for bit whatever the tile, see `tiles`) and the coarse pass, and a
//! cell's weights only on its global position, so every tile that covers a cell gives it the
//! same value: shared tile borders stay identical, and tiles meet without seams by
//! construction. What a tile pays for it is refining the pieces that straddle its borders,
//! which its neighbours refine too.
//!
//! Geometry along each axis (cells): piece `k`'s core is `[kP − P/2, kP + P/2)` (so tile
//! borders at multiples of `P` run through piece middles, not along piece edges); its weight
//! is 1 inside the core, ramps (smoothstep) to 0 over `BLEND` cells on either side of each core
//! edge, and the neighbouring piece's weight is one minus it there, so the weights of a cell
//! sum to exactly 1. Its window is its support (core ± `BLEND`) grown by `HALO`, moved inside
//! the map where it would cross the edge (so it stays square: droplets and stream power run on
//! square grids).

use crate::node::Window;

/// The pieces' pitch (core side), in cells of the build.
pub(super) const PITCH: usize = 1024;
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
pub(super) struct Piece {
    pub kx: i64,
    pub ky: i64,
}

/// The start of piece `k`'s core along an axis.
fn core_start(k: i64) -> i64 {
    k * PITCH as i64 - (PITCH / 2) as i64
}

/// `smoothstep` of `t` clamped to [0, 1].
fn ramp(t: f64) -> f64 {
    let t = t.clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

/// Piece `k`'s weight at cell `i` along one axis.
pub(super) fn weight(k: i64, i: usize) -> f32 {
    let c = i as f64 + 0.5;
    let (a, b) = (core_start(k) as f64, core_start(k + 1) as f64);
    let up = ramp((c - (a - BLEND as f64)) / (2 * BLEND) as f64);
    let down = ramp((c - (b - BLEND as f64)) / (2 * BLEND) as f64);
    (up * (1.0 - down)) as f32
}

/// The pieces along one axis whose support meets `[lo, lo + len)`.
fn range(lo: usize, len: usize) -> std::ops::RangeInclusive<i64> {
    let (lo, hi) = (lo as i64, (lo + len) as i64);
    let (p, b, half) = (PITCH as i64, BLEND as i64, (PITCH / 2) as i64);
    // Support of k: [kP − P/2 − B, kP + P/2 + B).
    let first = (lo - half - b).div_euclid(p);
    let last = (hi - 1 + half + b).div_euclid(p);
    let first = (first..=last)
        .find(|&k| core_start(k + 1) + b > lo)
        .unwrap_or(first);
    let last = (first..=last)
        .rev()
        .find(|&k| core_start(k) - b < hi)
        .unwrap_or(last);
    first..=last
}

/// The pieces whose weights are not zero somewhere in `w`.
pub(super) fn covering(w: Window) -> Vec<Piece> {
    let mut out = Vec::new();
    for ky in range(w.y0, w.height) {
        for kx in range(w.x0, w.width) {
            out.push(Piece { kx, ky });
        }
    }
    out
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
    pub(super) fn window(self, n: usize) -> Window {
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
    covering(w)
        .into_iter()
        .map(|p| p.window(n))
        .fold(w, |a, b| a.union(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_sum_to_one_and_pieces_cover_what_they_weigh() {
        let n = 1000;
        for i in 0..n {
            let ks = range(i, 1);
            let sum: f32 = ks.clone().map(|k| weight(k, i)).sum();
            assert!((sum - 1.0).abs() < 1e-6, "cell {i}: {sum}");
            for k in ks {
                let (s, len) = span(k, n);
                if weight(k, i) > 0.0 {
                    assert!(s <= i && i < s + len, "cell {i} piece {k}");
                }
            }
            // Pieces outside the range weigh nothing there.
            let r = range(i, 1);
            for k in [r.start() - 1, r.end() + 1] {
                assert_eq!(weight(k, i), 0.0, "cell {i} piece {k}");
            }
        }
        // Square windows inside the map, the same for any caller.
        let w = Window {
            x0: 300,
            y0: 0,
            width: 200,
            height: 120,
        };
        for p in covering(w) {
            let pw = p.window(n);
            assert_eq!(pw.width, pw.height);
            assert!(pw.x0 + pw.width <= n && pw.y0 + pw.height <= n);
        }
    }
}
