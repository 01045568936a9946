//! Error-bounded simplification of heightfield meshes (`--mesh-error-m`): meshoptimizer's
//! quadric simplifier (Garland & Heckbert's edge collapses, through the `meshopt` bindings)
//! with the mesh's border locked, checked against the heightfield itself.
//!
//! meshoptimizer bounds a 3D distance to the original surface; what an engine's terrain needs
//! is the vertical error at every sample. So each result is measured: every sample of the
//! field is located in the simplified triangles that hold it (each triangle must face up with
//! an area, and every sample must be held) and the height interpolated there compared with the
//! sample's, the largest difference over the triangles holding it (on a shared edge they agree;
//! where they did not, that was a crack the importer would show). A result above the bound
//! keeps the vertices of the samples above it and is redone, until it holds (at worst the full
//! mesh, error 0). The border vertices are the full mesh's, so two meshes of neighbouring parts
//! that share their border samples meet without cracks.
//!
//! A locked border vertex can be left by meshoptimizer in a zero-area triangle (the vertex
//! between two neighbours on the border, the triangle inside spanning both): a vertical sliver
//! with a T-junction, which importers that drop degenerate triangles open into a crack. Each
//! such sliver is removed by splitting the triangle across its long edge at the middle vertex
//! ([`split_slivers`]), so the mesh is conforming and every triangle has an area.

use super::Mesh;
use crate::field::Field;
use rayon::prelude::*;

/// A simplified mesh and what it measured.
#[derive(Clone, Debug)]
pub struct Simplified {
    pub mesh: Mesh,
    /// The largest |mesh − field| at the field's samples (m).
    pub max_error_m: f32,
}

/// The largest vertical error of triangles `indices` over `positions` (vertices at the
/// world's samples, `cell` metres apart, the first at half a cell) against `f` (whose first
/// sample is the world's sample `origin`), each sample's error the largest of the triangles that
/// hold it; `None` when a triangle faces down (a fold) or has no area (a sliver), or a sample of
/// `f` is in none (a gap).
#[must_use]
pub fn vertical_error(
    f: &Field,
    cell: f32,
    origin: (usize, usize),
    positions: &[[f32; 3]],
    indices: &[u32],
) -> Option<f32> {
    let e = sample_errors(f, cell, origin, positions, indices)?;
    Some(e.par_iter().copied().reduce(|| 0.0f32, f32::max))
}

/// A sample no triangle has held yet (no error's bits are all ones: that is a NaN).
const UNSEEN: u32 = u32::MAX;

/// Each sample's vertical error (see [`vertical_error`]), row-major like `f`.
fn sample_errors(
    f: &Field,
    cell: f32,
    (ox, oy): (usize, usize),
    positions: &[[f32; 3]],
    indices: &[u32],
) -> Option<Vec<f32>> {
    use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
    let (w, h) = (f.width(), f.height());
    // Each sample's largest error so far, as bits (non-negative floats order as their bits);
    // `UNSEEN` until a triangle holds it.
    let most: Vec<AtomicU32> = (0..w * h).map(|_| AtomicU32::new(UNSEEN)).collect();
    let folded = AtomicBool::new(false);
    // Sample (i, j) of the map sits at ((i + 0.5)·cell, (j + 0.5)·cell); `f` starts at
    // sample (ox, oy). Grid units of `f` from here on.
    let at = |v: u32| {
        let p = positions[v as usize];
        (
            p[0] / cell - 0.5 - ox as f32,
            p[2] / cell - 0.5 - oy as f32,
            p[1],
        )
    };
    let put = |i: usize, j: usize, e: f32| {
        let cell = &most[j * w + i];
        let _ = cell.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |old| {
            (old == UNSEEN || e.to_bits() > old).then_some(e.to_bits())
        });
    };
    indices.par_chunks_exact(3).for_each(|t| {
        let (a, b, c) = (at(t[0]), at(t[1]), at(t[2]));
        // Seen from above (+Y) with +Z south, counter-clockwise is a negative cross in (x, z).
        let area = (b.0 - a.0) * (c.1 - a.1) - (b.1 - a.1) * (c.0 - a.0);
        // Facing down (a fold), or upright in plan (a sliver: no area).
        if area > -1e-6 {
            folded.store(true, Ordering::Relaxed);
            return;
        }
        let (x0, x1) = (a.0.min(b.0).min(c.0), a.0.max(b.0).max(c.0));
        let (y0, y1) = (a.1.min(b.1).min(c.1), a.1.max(b.1).max(c.1));
        for j in (y0.ceil().max(0.0) as usize)..=(y1.floor().max(0.0) as usize).min(h - 1) {
            for i in (x0.ceil().max(0.0) as usize)..=(x1.floor().max(0.0) as usize).min(w - 1) {
                let (px, py) = (i as f32, j as f32);
                // Barycentric weights of (px, py).
                let wa = ((b.0 - px) * (c.1 - py) - (b.1 - py) * (c.0 - px)) / area;
                let wb = ((c.0 - px) * (a.1 - py) - (c.1 - py) * (a.0 - px)) / area;
                let wc = 1.0 - wa - wb;
                let eps = -1e-4;
                if wa < eps || wb < eps || wc < eps {
                    continue;
                }
                let z = wa * a.2 + wb * b.2 + wc * c.2;
                put(i, j, (z - f.data()[j * w + i]).abs());
            }
        }
    });
    if folded.load(Ordering::Relaxed) {
        return None;
    }
    most.par_iter()
        .map(|e| {
            let e = e.load(Ordering::Relaxed);
            (e != UNSEEN).then(|| f32::from_bits(e))
        })
        .collect()
}

/// Samples per side of the blocks simplified on their own (their borders locked, so blocks
/// meet without cracks): meshoptimizer's collapses cost more than linear time in a mesh's
/// size, and blocks simplify in parallel.
const BLOCK: usize = 256;

/// `full` (the mesh of `f` at every sample, `cell` metres apart: vertex `k` is sample `k`)
/// simplified by meshoptimizer to the fewest triangles it finds whose vertical error over `f`'s
/// samples is at most `max_error_m`, its border kept; the vertices it no longer uses are
/// dropped. The map is simplified in blocks of [`BLOCK`] cells whose borders are locked. `f`'s
/// first sample is sample `origin` of the world's grid, where `full`'s positions are.
#[must_use]
pub fn simplify(
    full: &Mesh,
    f: &Field,
    cell: f32,
    max_error_m: f32,
    origin: (usize, usize),
) -> Simplified {
    let (w, h) = (f.width(), f.height());
    if full.positions.len() != w * h || w < 2 || h < 2 {
        return Simplified {
            mesh: full.clone(),
            max_error_m: 0.0,
        };
    }
    let starts = |n: usize| -> Vec<usize> { (0..n - 1).step_by(BLOCK).collect() };
    let blocks: Vec<(usize, usize)> = starts(h)
        .into_iter()
        .flat_map(|y| starts(w).into_iter().map(move |x| (x, y)))
        .collect();
    let parts: Vec<(Vec<u32>, f32)> = blocks
        .par_iter()
        .map(|&(x0, y0)| {
            let (x1, y1) = ((x0 + BLOCK).min(w - 1), (y0 + BLOCK).min(h - 1));
            simplify_block(full, f, cell, max_error_m, origin, (x0, y0), (x1, y1))
        })
        .collect();
    let max_error = parts.iter().fold(0.0f32, |m, p| m.max(p.1));
    let indices: Vec<u32> = parts.into_iter().flat_map(|p| p.0).collect();
    Simplified {
        mesh: compact(full, &indices),
        max_error_m: max_error,
    }
}

/// The block of samples `(x0, y0)…=(x1, y1)` simplified (see [`simplify`]): its triangles as
/// indices into `full`, and their largest vertical error.
fn simplify_block(
    full: &Mesh,
    f: &Field,
    cell: f32,
    max_error_m: f32,
    (ox, oy): (usize, usize),
    (x0, y0): (usize, usize),
    (x1, y1): (usize, usize),
) -> (Vec<u32>, f32) {
    let (w, bw, bh) = (f.width(), x1 - x0 + 1, y1 - y0 + 1);
    let global = |i: usize| ((y0 + i / bw) * w + x0 + i % bw) as u32;
    let positions: Vec<[f32; 3]> = (0..bw * bh)
        .map(|i| full.positions[global(i) as usize])
        .collect();
    let local = Field::from_fn(bw, bh, |x, y| f.data()[(y0 + y) * w + x0 + x]);
    // The grid's triangles, as `Mesh::from_field` makes them.
    let mut grid = Vec::with_capacity((bw - 1) * (bh - 1) * 6);
    for j in 0..bh as u32 - 1 {
        for i in 0..bw as u32 - 1 {
            let a = j * bw as u32 + i;
            let (b, c, d) = (a + 1, a + bw as u32, a + bw as u32 + 1);
            grid.extend_from_slice(&[a, c, b, b, c, d]);
        }
    }
    let options = meshopt::SimplifyOptions::LockBorder | meshopt::SimplifyOptions::ErrorAbsolute;
    let mut target = max_error_m.max(0.0);
    let mut lock = vec![false; positions.len()];
    // meshoptimizer's error is a 3D distance estimated from quadrics, which a slope turns into
    // a larger vertical error: each round keeps (locks) the vertices of the samples still
    // above the bound and simplifies again, until none is.
    let mut unfit = 0;
    for _ in 0..12 {
        let indices = meshopt::simplify_with_locks_decoder(
            &grid, &positions, &lock, 0, target, options, None,
        );
        let indices = split_slivers(bw, indices);
        let Some(errors) = sample_errors(&local, cell, (ox + x0, oy + y0), &positions, &indices)
        else {
            // A fold (a collapse that turned a triangle over) or a sliver left: keep the
            // samples of those triangles and their neighbours and simplify again; when that
            // keeps nothing new, or has not helped twice, simplify less everywhere.
            unfit += 1;
            let mut kept = false;
            for v in unfit_vertices(&positions, &indices, cell) {
                let (x, y) = (v as usize % bw, v as usize / bw);
                for ny in y.saturating_sub(1)..=(y + 1).min(bh - 1) {
                    for nx in x.saturating_sub(1)..=(x + 1).min(bw - 1) {
                        kept |= !std::mem::replace(&mut lock[ny * bw + nx], true);
                    }
                }
            }
            if !kept || unfit > 2 {
                target *= 0.5;
            }
            continue;
        };
        let mut above = false;
        for (l, &e) in lock.iter_mut().zip(&errors) {
            if e > max_error_m {
                *l = true;
                above = true;
            }
        }
        if !above {
            let e = errors.iter().copied().fold(0.0f32, f32::max);
            return (indices.iter().map(|&i| global(i as usize)).collect(), e);
        }
    }
    (grid.iter().map(|&i| global(i as usize)).collect(), 0.0)
}

/// The vertices of the triangles of `indices` that face down or have no area in plan (what
/// [`sample_errors`] refuses), `positions` `cell` metres apart.
fn unfit_vertices(positions: &[[f32; 3]], indices: &[u32], cell: f32) -> Vec<u32> {
    let plan = |v: u32| {
        let p = positions[v as usize];
        (p[0] / cell, p[2] / cell)
    };
    indices
        .chunks_exact(3)
        .filter(|t| {
            let (a, b, c) = (plan(t[0]), plan(t[1]), plan(t[2]));
            (b.0 - a.0) * (c.1 - a.1) - (b.1 - a.1) * (c.0 - a.0) > -1e-6
        })
        .flatten()
        .copied()
        .collect()
}

/// Removes the slivers of `indices` (triangles of a block `bw` samples wide, vertex `k` its
/// sample `(k % bw, k / bw)`): a triangle whose three vertices lie on a line, one between the
/// other two, is dropped and the triangle on the other side of its long edge split at that
/// middle vertex (its winding kept), so no vertex lies inside another triangle's edge. Integer
/// plan coordinates: the test is exact. A sliver with nothing across its long edge (or a chain
/// that does not resolve) is left, and the measurement then refuses the result.
fn split_slivers(bw: usize, mut indices: Vec<u32>) -> Vec<u32> {
    use std::collections::HashMap;
    let xy = |v: u32| ((v as usize % bw) as i64, (v as usize / bw) as i64);
    let cross = |a: u32, b: u32, c: u32| {
        let (a, b, c) = (xy(a), xy(b), xy(c));
        (b.0 - a.0) * (c.1 - a.1) - (b.1 - a.1) * (c.0 - a.0)
    };
    // Strictly between p and q on their segment (given collinear).
    let between = |v: u32, p: u32, q: u32| {
        let (v, p, q) = (xy(v), xy(p), xy(q));
        let d = (v.0 - p.0) * (q.0 - p.0) + (v.1 - p.1) * (q.1 - p.1);
        let len = (q.0 - p.0).pow(2) + (q.1 - p.1).pow(2);
        d > 0 && d < len
    };
    for _ in 0..64 {
        let slivers: Vec<usize> = (0..indices.len() / 3)
            .filter(|&t| {
                let k = &indices[3 * t..3 * t + 3];
                k[0] != k[1] && cross(k[0], k[1], k[2]) == 0
            })
            .collect();
        if slivers.is_empty() {
            break;
        }
        // Directed edge → the triangle it belongs to.
        let mut edge: HashMap<(u32, u32), usize> = HashMap::with_capacity(indices.len());
        for (t, k) in indices.chunks_exact(3).enumerate() {
            for e in 0..3 {
                edge.insert((k[e], k[(e + 1) % 3]), t);
            }
        }
        let mut changed = false;
        let mut dead = vec![false; indices.len() / 3];
        for t in slivers {
            if dead[t] {
                continue;
            }
            let k = [indices[3 * t], indices[3 * t + 1], indices[3 * t + 2]];
            // The long edge p → q (in this triangle's winding) and the vertex v inside it.
            let Some((p, q, v)) = (0..3)
                .map(|e| (k[e], k[(e + 1) % 3], k[(e + 2) % 3]))
                .find(|&(p, q, v)| between(v, p, q))
            else {
                continue;
            };
            let Some(&n) = edge.get(&(q, p)) else {
                continue;
            };
            if dead[n] || n == t {
                continue;
            }
            // Triangle n has the edge q → p; its third vertex c. Split it at v: q → v → c and
            // v → p → c.
            let m = [indices[3 * n], indices[3 * n + 1], indices[3 * n + 2]];
            let Some(c) = m.iter().copied().find(|&x| x != p && x != q) else {
                continue;
            };
            indices[3 * n..3 * n + 3].copy_from_slice(&[q, v, c]);
            indices[3 * t..3 * t + 3].copy_from_slice(&[v, p, c]);
            dead[n] = true;
            dead[t] = true;
            changed = true;
        }
        if !changed {
            break;
        }
    }
    indices
}

/// The mesh of `indices` into `full`'s vertices, with only the vertices they use (in their
/// original order, so the result does not depend on the triangles' order).
fn compact(full: &Mesh, indices: &[u32]) -> Mesh {
    let mut used = vec![false; full.positions.len()];
    for &i in indices {
        used[i as usize] = true;
    }
    let mut remap = vec![u32::MAX; used.len()];
    let mut m = Mesh {
        positions: Vec::new(),
        normals: Vec::new(),
        uvs: Vec::new(),
        indices: Vec::with_capacity(indices.len()),
    };
    for (i, &u) in used.iter().enumerate() {
        if u {
            remap[i] = m.positions.len() as u32;
            m.positions.push(full.positions[i]);
            m.normals.push(full.normals[i]);
            m.uvs.push(full.uvs[i]);
        }
    }
    m.indices.extend(indices.iter().map(|&i| remap[i as usize]));
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hills(n: usize) -> Field {
        Field::from_fn(n, n, |x, y| {
            let (x, y) = (x as f32 / 9.0, y as f32 / 13.0);
            40.0 * x.sin() * y.cos() + 15.0 * (x * 3.1 + y * 1.7).sin()
        })
    }

    #[test]
    fn the_measured_error_is_within_the_bound_and_the_mesh_is_smaller() {
        // 2 × 2 blocks: their seams are covered once and within the bound too.
        let f = hills(300);
        let full = Mesh::from_field(&f, 5.0, 1);
        assert_eq!(
            vertical_error(&f, 5.0, (0, 0), &full.positions, &full.indices),
            Some(0.0)
        );
        for e in [0.1f32, 0.5, 2.0] {
            let s = simplify(&full, &f, 5.0, e, (0, 0));
            assert!(s.max_error_m <= e, "{e}: {}", s.max_error_m);
            assert!(
                s.mesh.indices.len() < full.indices.len(),
                "{e}: not simplified"
            );
            // Measured again on the compacted mesh: the same.
            let again = vertical_error(&f, 5.0, (0, 0), &s.mesh.positions, &s.mesh.indices);
            assert_eq!(again, Some(s.max_error_m));
        }
        // A looser bound gives fewer triangles.
        let (a, b) = (
            simplify(&full, &f, 5.0, 0.1, (0, 0)),
            simplify(&full, &f, 5.0, 2.0, (0, 0)),
        );
        assert!(b.mesh.indices.len() < a.mesh.indices.len());
    }

    #[test]
    fn the_border_vertices_are_the_full_meshs() {
        let f = hills(65);
        let full = Mesh::from_field(&f, 2.0, 1);
        let s = simplify(&full, &f, 2.0, 1.0, (0, 0));
        let on_border = |p: &[f32; 3]| {
            let (x, z) = (p[0] / 2.0 - 0.5, p[2] / 2.0 - 0.5);
            x == 0.0 || z == 0.0 || x == 64.0 || z == 64.0
        };
        let mut border: Vec<[u32; 3]> = s
            .mesh
            .positions
            .iter()
            .filter(|p| on_border(p))
            .map(|p| p.map(f32::to_bits))
            .collect();
        let mut want: Vec<[u32; 3]> = full
            .positions
            .iter()
            .filter(|p| on_border(p))
            .map(|p| p.map(f32::to_bits))
            .collect();
        border.sort_unstable();
        want.sort_unstable();
        assert_eq!(border.len(), 4 * 64);
        assert_eq!(border, want);
    }

    #[test]
    fn a_fold_or_a_gap_is_not_a_cover() {
        let f = hills(3);
        let full = Mesh::from_field(&f, 1.0, 1);
        // One triangle fewer: a gap.
        assert_eq!(
            vertical_error(&f, 1.0, (0, 0), &full.positions, &full.indices[3..]),
            None
        );
        // One triangle flipped: a fold.
        let mut flipped = full.indices.clone();
        flipped.swap(0, 1);
        assert_eq!(
            vertical_error(&f, 1.0, (0, 0), &full.positions, &flipped),
            None
        );
    }
}
