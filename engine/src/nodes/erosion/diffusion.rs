//! Linear hillslope diffusion `∂h/∂t = κ·∇²h` (soil creep), the hillslope term of the
//! FastScape model (Braun & Willett 2013) that stream power uses alongside river incision.
//! It is not in the seed texts; it is what FastScape users expect, and it is what makes
//! stream power agree with itself across resolutions at hillslope scale (BENCHMARKS.md).
//!
//! One step of Δt is solved implicitly, one direction at a time (locally one-dimensional
//! backward Euler): `(1 − r·δx²)·h* = h`, then `(1 − r·δy²)·h' = h*`, with
//! `r = κ·Δt/Δx²` and δ² the second difference. Each factor is an M-matrix, so the scheme is
//! unconditionally stable and makes no new extremes (no oscillation however large `r` is —
//! Peaceman–Rachford's ADI, which fastscapelib uses, rings for large `r`). The map border
//! is the fixed base level. Every row (then every column) is the same constant-coefficient
//! tridiagonal system, so its Thomas factors are computed once per step; rows are solved in
//! parallel, columns in parallel strips swept row by row (row-major reads, vectorised over
//! the strip). The result does not depend on the thread count.

use super::flow::PerThread;
use rayon::prelude::*;

/// Columns per strip of the column solve.
const STRIP: usize = 64;

/// Thomas factors of the `m × m` system `(1 + 2r)·u_i − r·u_{i−1} − r·u_{i+1} = d_i`
/// (its off-diagonal entries are `−r`): per unknown, `c'_i` and `1/(1 + 2r + r·c'_{i−1})`.
struct Factors {
    r: f64,
    c: Vec<f64>,
    inv: Vec<f64>,
}

impl Factors {
    fn new(m: usize, r: f64) -> Self {
        let (mut c, mut inv) = (Vec::with_capacity(m), Vec::with_capacity(m));
        let mut prev = 0.0;
        for _ in 0..m {
            let i = 1.0 / (1.0 + 2.0 * r + r * prev);
            prev = -r * i;
            inv.push(i);
            c.push(prev);
        }
        Self { r, c, inv }
    }
}

/// Rows solved together in the row pass: their recurrences are independent, so the
/// processor overlaps them (one row alone is a chain of dependent multiply-adds).
const ROWS: usize = 8;

/// The solver, with its scratch kept from step to step (one buffer per thread).
#[derive(Default)]
pub struct Diffusion {
    scratch: PerThread<Vec<f64>>,
}

impl Diffusion {
    /// One implicit step of `r = κ·Δt/Δx²` on the `w × h` map `z` (row-major); the border
    /// cells are held fixed. Does nothing when `r` is not positive or the map has no inner
    /// cells.
    pub fn step(&self, z: &mut [f32], w: usize, h: usize, r: f64) {
        if r.is_nan() || r <= 0.0 || w < 3 || h < 3 || z.len() != w * h {
            return;
        }
        // Along rows: each inner row is one system over its inner cells.
        let fx = Factors::new(w - 2, r);
        z[w..(h - 1) * w].par_chunks_mut(ROWS * w).for_each(|band| {
            let mut d = self.scratch.get();
            let mut rows: Vec<&mut [f32]> = band.chunks_mut(w).collect();
            if rows.len() == ROWS {
                solve_rows::<ROWS>(&mut rows, &fx, &mut d);
            } else {
                for row in rows.chunks_mut(1) {
                    solve_rows::<1>(row, &fx, &mut d);
                }
            }
        });
        // Along columns: strips of columns, each swept down the inner rows at once.
        let fy = Factors::new(h - 2, r);
        let mut strips: Vec<Vec<&mut [f32]>> = (0..w.div_ceil(STRIP)).map(|_| Vec::new()).collect();
        for row in z.chunks_mut(w) {
            for (strip, piece) in strips.iter_mut().zip(row.chunks_mut(STRIP)) {
                strip.push(piece);
            }
        }
        strips.par_iter_mut().enumerate().for_each(|(s, rows)| {
            // The map's first and last columns stay as they are.
            let first = usize::from(s == 0);
            let last = if (s + 1) * STRIP >= w {
                rows[0].len() - 1
            } else {
                rows[0].len()
            };
            solve_strip(rows, &fy, &mut self.scratch.get(), first..last);
        });
    }
}

/// The systems of `K` rows (fixed ends, inner cells solved), their recurrences interleaved;
/// `d` holds d' for x-major (K values per column).
fn solve_rows<const K: usize>(rows: &mut [&mut [f32]], f: &Factors, d: &mut Vec<f64>) {
    let w = rows[0].len();
    d.clear();
    d.resize(w * K, 0.0);
    // Forward: d'_x = (d_x + r·d'_{x−1})·inv_x, the fixed ends on the right-hand side.
    let mut prev: [f64; K] = std::array::from_fn(|k| f.r * f64::from(rows[k][0]));
    for x in 1..w - 1 {
        let inv = f.inv[x - 1];
        for k in 0..K {
            let v = (f64::from(rows[k][x]) + prev[k]) * inv;
            d[x * K + k] = v;
            prev[k] = f.r * v;
        }
    }
    let inv = f.inv[w - 3];
    for k in 0..K {
        d[(w - 2) * K + k] += f.r * f64::from(rows[k][w - 1]) * inv;
    }
    // Backward: u_x = d'_x − c'_x·u_{x+1}.
    let mut next = [0.0f64; K];
    for x in (1..w - 1).rev() {
        let c = f.c[x - 1];
        for k in 0..K {
            let u = d[x * K + k] - c * next[k];
            rows[k][x] = u as f32;
            next[k] = u;
        }
    }
}

/// The column systems of one strip (`rows`: the strip's piece of every map row), swept
/// row by row; the columns `keep` of the strip are written back.
fn solve_strip(
    rows: &mut [&mut [f32]],
    f: &Factors,
    d: &mut Vec<f64>,
    keep: std::ops::Range<usize>,
) {
    let (h, sw) = (rows.len(), rows[0].len());
    d.clear();
    d.resize(h * sw, 0.0);
    // Row 0 of `d` holds the fixed top row, so the first inner row needs no special case.
    for (o, &v) in d[..sw].iter_mut().zip(rows[0].iter()) {
        *o = f64::from(v);
    }
    for y in 1..h - 1 {
        let (done, rest) = d.split_at_mut(y * sw);
        let (above, here) = (&done[(y - 1) * sw..], &mut rest[..sw]);
        let inv = f.inv[y - 1];
        for ((o, &a), &v) in here.iter_mut().zip(above).zip(rows[y].iter()) {
            *o = (f64::from(v) + f.r * a) * inv;
        }
    }
    let inv = f.inv[h - 3];
    for (o, &v) in d[(h - 2) * sw..(h - 1) * sw]
        .iter_mut()
        .zip(rows[h - 1].iter())
    {
        *o += f.r * f64::from(v) * inv;
    }
    for y in (1..h - 1).rev() {
        let (top, below) = d.split_at_mut((y + 1) * sw);
        let here = &mut top[y * sw..];
        if y + 2 < h {
            let c = f.c[y - 1];
            for (o, &b) in here.iter_mut().zip(&below[..sw]) {
                *o -= c * b;
            }
        }
        for j in keep.clone() {
            rows[y][j] = here[j] as f32;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A direct dense solve of one direction's system, for checking the Thomas factors.
    fn dense_row(row: &[f64], r: f64) -> Vec<f64> {
        let m = row.len() - 2;
        let mut a = vec![vec![0.0; m + 1]; m];
        for i in 0..m {
            a[i][i] = 1.0 + 2.0 * r;
            if i > 0 {
                a[i][i - 1] = -r;
            }
            if i + 1 < m {
                a[i][i + 1] = -r;
            }
            a[i][m] = row[i + 1];
        }
        a[0][m] += r * row[0];
        a[m - 1][m] += r * row[m + 1];
        // Gaussian elimination (the matrix is diagonally dominant: no pivoting needed).
        for k in 0..m {
            let (done, rest) = a.split_at_mut(k + 1);
            let pivot = &done[k];
            for row in rest {
                let f = row[k] / pivot[k];
                for (v, p) in row[k..].iter_mut().zip(&pivot[k..]) {
                    *v -= f * p;
                }
            }
        }
        let mut u = vec![0.0; m];
        for i in (0..m).rev() {
            let s: f64 = (i + 1..m).map(|j| a[i][j] * u[j]).sum();
            u[i] = (a[i][m] - s) / a[i][i];
        }
        let mut out = vec![row[0]];
        out.extend(u);
        out.push(row[m + 1]);
        out
    }

    #[test]
    fn each_direction_is_the_implicit_system_solved_exactly() {
        let (w, h) = (70, 9);
        let z: Vec<f32> = (0..w * h)
            .map(|i| ((i * 7919) % 101) as f32 - 40.0)
            .collect();
        for r in [0.01, 0.7, 50.0] {
            let mut got = z.clone();
            Diffusion::default().step(&mut got, w, h, r);
            // Rows first, then columns, each against the dense solve.
            let mut want: Vec<f64> = z.iter().map(|&v| f64::from(v)).collect();
            for y in 1..h - 1 {
                let row = dense_row(&want[y * w..(y + 1) * w], r);
                want[y * w..(y + 1) * w].copy_from_slice(&row);
            }
            let rows_done: Vec<f64> = want.iter().map(|&v| f64::from(v as f32)).collect();
            for x in 1..w - 1 {
                let col: Vec<f64> = (0..h).map(|y| rows_done[y * w + x]).collect();
                for (y, v) in dense_row(&col, r).into_iter().enumerate() {
                    want[y * w + x] = v;
                }
            }
            for x in [0, w - 1] {
                for y in 0..h {
                    want[y * w + x] = f64::from(z[y * w + x]);
                }
            }
            for (i, (&g, &e)) in got.iter().zip(&want).enumerate() {
                assert!(
                    (f64::from(g) - e).abs() < 1e-4,
                    "r {r}, cell {i}: {g} vs {e}"
                );
            }
        }
    }

    /// sin(πx/L)·sin(πy/L) is an eigenvector of both directions' systems: one step
    /// multiplies it by 1/(1 + 4r·sin²(π/2(n−1))) per direction, exactly (n cells across,
    /// the border at zero); and a small step follows the heat equation's exp(−2π²κt/L²).
    #[test]
    fn a_sine_mode_decays_as_the_scheme_and_the_heat_equation_say() {
        let (w, h) = (97, 61);
        let mode = |x: usize, y: usize| {
            (std::f64::consts::PI * x as f64 / (w - 1) as f64).sin()
                * (std::f64::consts::PI * y as f64 / (h - 1) as f64).sin()
        };
        let z0: Vec<f32> = (0..w * h)
            .map(|i| (100.0 * mode(i % w, i / w)) as f32)
            .collect();
        let gain = |n: usize, r: f64| {
            let s = (std::f64::consts::PI / (2.0 * (n - 1) as f64)).sin();
            1.0 / (1.0 + 4.0 * r * s * s)
        };
        for r in [0.05, 3.0, 400.0] {
            let mut z = z0.clone();
            let d = Diffusion::default();
            for _ in 0..3 {
                d.step(&mut z, w, h, r);
            }
            let want = (gain(w, r) * gain(h, r)).powi(3);
            for (i, &v) in z.iter().enumerate() {
                let e = 100.0 * want * mode(i % w, i / w);
                assert!(
                    (f64::from(v) - e).abs() < 1e-3,
                    "r {r}, cell {i}: {v} vs {e}"
                );
            }
        }
        // Continuum: a square of side L = 96 cells of 1 m, κ·t = 200 m² in 100 steps.
        let n = 97;
        let z0: Vec<f32> = (0..n * n)
            .map(|i| {
                let (x, y) = ((i % n) as f64, (i / n) as f64);
                let l = (n - 1) as f64;
                (100.0
                    * (std::f64::consts::PI * x / l).sin()
                    * (std::f64::consts::PI * y / l).sin()) as f32
            })
            .collect();
        let mut z = z0.clone();
        let d = Diffusion::default();
        for _ in 0..100 {
            d.step(&mut z, n, n, 2.0);
        }
        let l = (n - 1) as f64;
        let want = (-2.0 * std::f64::consts::PI.powi(2) * 200.0 / (l * l)).exp();
        let centre = f64::from(z[(n / 2) * n + n / 2]) / 100.0;
        assert!((centre / want - 1.0).abs() < 0.01, "{centre} vs {want}");
    }

    #[test]
    fn no_new_extremes_and_the_border_is_fixed() {
        let (w, h) = (131, 67);
        let z: Vec<f32> = (0..w * h)
            .map(|i| {
                if (i * 2_654_435_761) % 7 == 0 {
                    100.0
                } else {
                    0.0
                }
            })
            .collect();
        for r in [0.3, 1e4] {
            let mut d = z.clone();
            Diffusion::default().step(&mut d, w, h, r);
            assert!(d.iter().all(|&v| (-1e-3..=100.001).contains(&v)), "r {r}");
            for i in 0..w * h {
                let (x, y) = (i % w, i / w);
                if x == 0 || y == 0 || x + 1 == w || y + 1 == h {
                    assert_eq!(d[i], z[i], "border cell {i}");
                }
            }
        }
    }
}
