//! Tests of the lattice-noise engine: every kernel path against the portable one, bit for bit.
use super::kernel::{self, Coeffs};
use super::*;

/// Evaluates `h(x, y) = Σ c_ij xⁱ yʲ` and its two partial derivatives.
fn poly(c: &[[f32; 4]; 4], x: f32, y: f32) -> (f32, f32, f32) {
    let (mut h, mut fx, mut gy) = (0.0, 0.0, 0.0);
    for (i, row) in c.iter().enumerate() {
        for (j, &cij) in row.iter().enumerate() {
            h += cij * x.powi(i as i32) * y.powi(j as i32);
            if i > 0 {
                fx += i as f32 * cij * x.powi(i as i32 - 1) * y.powi(j as i32);
            }
            if j > 0 {
                gy += j as f32 * cij * x.powi(i as i32) * y.powi(j as i32 - 1);
            }
        }
    }
    (h, fx, gy)
}

#[test]
fn d2m1n3_meets_all_twelve_corner_constraints_exactly() {
    // Dyadic values keep every f32 operation exact, so the constraints hold to the bit.
    let mut state = 12345u32;
    let mut next = || {
        state = hash2(state, 1, 2);
        ((state >> 24) as i32 - 128) as f32 / 32.0
    };
    for _ in 0..200 {
        let h = [next(), next(), next(), next()];
        let f = [next(), next(), next(), next()];
        let g = [next(), next(), next(), next()];
        let c = d2m1n3_coefficients(h, f, g);
        for (k, (x, y)) in [(0.0, 0.0), (1.0, 0.0), (0.0, 1.0), (1.0, 1.0)]
            .into_iter()
            .enumerate()
        {
            let (hv, fv, gv) = poly(&c, x, y);
            assert_eq!(hv, h[k], "height at corner {k}");
            assert_eq!(fv, f[k], "x-gradient at corner {k}");
            assert_eq!(gv, g[k], "y-gradient at corner {k}");
        }
    }
}

fn one_row(basis: Basis, xs: &[f64], y: f64, seed: u32) -> Vec<f32> {
    let mut out = vec![0.0; xs.len()];
    if basis == Basis::Simplex {
        simplex::row(xs, y, seed, &mut out);
    } else {
        let ox = OctaveX::new(xs, basis.q_of());
        let mut s = Scratch::new(xs.len(), &[ox.columns()]);
        basis.lattice_row(&ox, y, seed, 0, &mut s, &mut out, kernel::Write::Store);
    }
    out
}

#[test]
fn zero_gradient_d2m1n3_hits_corner_heights_with_flat_corners() {
    // Samples exactly on lattice points return the corner height h00 (Eq. 19 at x = y = 0).
    let xs: Vec<f64> = (0..40).map(f64::from).collect();
    for yi in 0..5 {
        let row = one_row(Basis::D2m1n3Zero, &xs, f64::from(yi), 9);
        for (x, v) in row.iter().enumerate() {
            assert_eq!(*v, unit_f32(hash2(9, x as i32, yi)), "({x}, {yi})");
        }
    }
    // Zero gradient at corners: moving a tiny step away from a lattice point changes the
    // height only to second order.
    let eps = 1e-3;
    let xs: Vec<f64> = (0..40).map(|i| f64::from(i) + eps).collect();
    let here = one_row(
        Basis::D2m1n3Zero,
        &(0..40).map(f64::from).collect::<Vec<_>>(),
        2.0,
        9,
    );
    let moved = one_row(Basis::D2m1n3Zero, &xs, 2.0 + eps, 9);
    for (a, b) in here.iter().zip(&moved) {
        assert!((a - b).abs() < 2e-4, "{a} vs {b}");
    }
}

#[test]
fn generic_d2m1n3_row_matches_corner_heights() {
    let xs: Vec<f64> = (0..40).map(f64::from).collect();
    let row = one_row(
        Basis::D2m1n3 {
            gradient_weight: 0.5,
        },
        &xs,
        3.0,
        4,
    );
    for (x, v) in row.iter().enumerate() {
        assert!((v - unit_f32(hash2(4, x as i32, 3))).abs() < 1e-6);
    }
}

/// A direct, per-sample Perlin evaluation (Eqs. 16–18), the reference for the row kernel.
fn perlin_reference(x: f64, y: f64, seed: u32, s: Smooth) -> f32 {
    let (xf, yf) = (x.floor(), y.floor());
    let (xi, yi) = (xf as i32, yf as i32);
    let (dx, dy) = ((x - xf) as f32, (y - yf) as f32);
    let v = |cx: i32, cy: i32, ox: f32, oy: f32| {
        let (gx, gy) = gradient(hash2(seed, cx, cy));
        gx * ox + gy * oy
    };
    let h0 = v(xi, yi, dx, dy) + s.apply(dx) * (v(xi + 1, yi, dx - 1.0, dy) - v(xi, yi, dx, dy));
    let h1 = v(xi, yi + 1, dx, dy - 1.0)
        + s.apply(dx) * (v(xi + 1, yi + 1, dx - 1.0, dy - 1.0) - v(xi, yi + 1, dx, dy - 1.0));
    h0 + s.apply(dy) * (h1 - h0)
}

#[test]
fn perlin_row_kernel_matches_per_sample_reference() {
    for s in [Smooth::S3, Smooth::S5] {
        let xs: Vec<f64> = (0..3000).map(|i| f64::from(i) * 0.0137 - 7.3).collect();
        for y in [0.25, 3.7, -12.01] {
            let row = one_row(Basis::Perlin(s), &xs, y, 77);
            for (x, v) in xs.iter().zip(&row) {
                let r = perlin_reference(*x, y, 77, s);
                assert!((v - r).abs() < 2e-6, "{s:?} at ({x}, {y}): {v} vs {r}");
            }
        }
    }
}

#[test]
fn every_basis_is_bounded_and_continuous() {
    let bases = [
        Basis::Perlin(Smooth::S3),
        Basis::Perlin(Smooth::S5),
        Basis::Value(Smooth::S5),
        Basis::D2m1n3 {
            gradient_weight: 1.0,
        },
        Basis::D2m1n3Zero,
        Basis::Simplex,
    ];
    for b in bases {
        let xs: Vec<f64> = (0..4000).map(|i| f64::from(i) * 0.01).collect();
        let mut max = 0.0f32;
        for k in 0..20 {
            let row = one_row(b, &xs, f64::from(k) * 0.37, 5);
            for w in row.windows(2) {
                assert!((w[1] - w[0]).abs() < 0.2, "{b:?}: jump {} → {}", w[0], w[1]);
            }
            max = row.iter().fold(max, |m, v| m.max(v.abs()));
        }
        let bound = if matches!(b, Basis::D2m1n3 { .. }) {
            2.0
        } else {
            1.0
        };
        assert!(max <= bound && max > 0.2, "{b:?}: max |n| = {max}");
    }
}

#[test]
fn dispatched_kernels_equal_portable_kernels_bit_for_bit() {
    type Kernel = fn(&[u32], &[f32], &[f32], &Coeffs, &mut [f32], kernel::Write);
    let n = 1000;
    let fx: Vec<f32> = (0..n).map(|i| (i % 7) as f32 / 7.0 + 0.013).collect();
    let q: Vec<f32> = fx.iter().map(|&t| Smooth::S5.apply(t)).collect();
    let mut k = Coeffs::new();
    for j in 0..kernel::TABLE {
        k.k0[j] = unit_f32(hash2(1, j as i32, 0));
        k.k1[j] = unit_f32(hash2(2, j as i32, 0));
        k.k2[j] = unit_f32(hash2(3, j as i32, 0));
        k.k3[j] = unit_f32(hash2(4, j as i32, 0));
    }
    let (mut a, mut b) = (vec![0.0; n], vec![0.0; n]);
    // Every path the machine can run against the portable body: the dispatched kernel (the
    // AVX-512 permutes, else the AVX2 permutes), the AVX2 permutes themselves, and the
    // autovectorised body (gathers); over windows of < 8 cells, 8–15 cells (two loads and a
    // blend) and wider (the scalar fallback).
    let mut paths4: Vec<(&str, Kernel)> = vec![
        ("dispatched", kernel::kernel4),
        ("autovectorised", kernel::kernel4_auto),
    ];
    let mut paths3: Vec<(&str, Kernel)> = vec![
        ("dispatched", kernel::kernel3),
        ("autovectorised", kernel::kernel3_auto),
    ];
    #[cfg(target_arch = "x86_64")]
    if kernel::avx2::available() {
        paths4.push(("avx2", |i, f, q, k, o, w| {
            kernel::avx2::kernel(i, f, q, k, o, true, w);
        }));
        paths3.push(("avx2", |i, f, q, k, o, w| {
            kernel::avx2::kernel(i, f, q, k, o, false, w);
        }));
    }
    for step in [1.0 / 7.0, 1.5, 2.5] {
        let idx: Vec<u32> = (0..n).map(|i| (i as f64 * step) as u32 % 1900).collect();
        // Keep it non-decreasing (the kernels' contract): restart only at chunk-like breaks.
        let idx: Vec<u32> = idx
            .iter()
            .scan(0u32, |m, &v| {
                *m = (*m).max(v);
                Some(*m)
            })
            .collect();
        for w in [kernel::Write::Store, kernel::Write::Accumulate(0.37)] {
            b.fill(0.25);
            kernel::kernel4_portable(&idx, &fx, &q, &k, &mut b, w);
            for (name, f) in &paths4 {
                a.fill(0.25);
                f(&idx, &fx, &q, &k, &mut a, w);
                assert!(
                    a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()),
                    "kernel4 {name} step {step} {w:?}"
                );
            }
            b.fill(0.25);
            kernel::kernel3_portable(&idx, &fx, &q, &k, &mut b, w);
            for (name, f) in &paths3 {
                a.fill(0.25);
                f(&idx, &fx, &q, &k, &mut a, w);
                assert!(
                    a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()),
                    "kernel3 {name} step {step} {w:?}"
                );
            }
        }
    }
    for h in [
        0u32,
        1 << 29,
        2 << 29,
        3 << 29,
        4 << 29,
        5 << 29,
        6 << 29,
        7 << 29,
    ] {
        assert_eq!(kernel::gradient_xy_for_test(h), gradient(h));
    }
    let xs: Vec<f64> = (0..n).map(|i| i as f64 * 0.031).collect();
    simplex::row(&xs, 2.5, 3, &mut a);
    simplex::row_portable(&xs, 2.5, 3, &mut b);
    assert!(a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()));
}

#[test]
fn chunks_cover_every_sample_and_respect_the_table() {
    // Very high frequency: several cells per sample.
    let xs: Vec<f64> = (0..5000).map(|i| f64::from(i) * 3.7).collect();
    let ox = OctaveX::new(&xs, |t| t);
    let mut next = 0;
    for &(s, e) in &ox.chunks {
        assert_eq!(s, next);
        assert!(e > s);
        assert!(((ox.cell[e - 1] - ox.cell[s]) as usize) < kernel::TABLE - 2);
        next = e;
    }
    assert_eq!(next, xs.len());
}

#[test]
fn cached_rows_equal_fresh_rows_bit_for_bit() {
    // Walking down image rows reuses (same lattice row) or shifts (next lattice row) the
    // cache; each row must equal a row computed with a fresh cache.
    for basis in [
        Basis::Perlin(Smooth::S5),
        Basis::Value(Smooth::S3),
        Basis::D2m1n3Zero,
        Basis::D2m1n3 {
            gradient_weight: 0.7,
        },
    ] {
        let xs: Vec<f64> = (0..2500).map(|i| f64::from(i) * 0.173 + 3.3).collect();
        let ox = OctaveX::new(&xs, basis.q_of());
        let mut walking = Scratch::new(xs.len(), &[ox.columns()]);
        for k in 0..60 {
            let y = f64::from(k) * 0.37 - 4.0;
            let mut a = vec![0.0; xs.len()];
            basis.lattice_row(&ox, y, 21, 0, &mut walking, &mut a, kernel::Write::Store);
            let b = one_row(basis, &xs, y, 21);
            assert!(
                a.iter().zip(&b).all(|(p, q)| p.to_bits() == q.to_bits()),
                "{basis:?} row {k}"
            );
        }
    }
}
