//! Improved Perlin gradient noise in 2D (Perlin 2002; seed 002 §3.2, Eqs. 16–18).
//!
//! The lattice is a seeded permutation of 0..256; each lattice corner picks one of eight
//! gradients; the corner contributions `g · (p − corner)` are blended with the S3
//! (`3t² − 2t³`, Eq. 17) or S5 (`6t⁵ − 15t⁴ + 10t³`, Eq. 18) interpolant.

use crate::node::splitmix64;

/// The smoothstep used to blend lattice contributions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Smoothstep {
    /// `3t² − 2t³` (seed 002 Eq. 17): C¹ continuous.
    S3,
    /// `6t⁵ − 15t⁴ + 10t³` (seed 002 Eq. 18): C² continuous, Perlin's improved choice.
    S5,
}

impl Smoothstep {
    #[inline]
    #[must_use]
    pub fn apply(self, t: f32) -> f32 {
        match self {
            Smoothstep::S3 => t * t * (3.0 - 2.0 * t),
            Smoothstep::S5 => t * t * t * (t * (t * 6.0 - 15.0) + 10.0),
        }
    }
}

/// One seeded Perlin lattice.
#[derive(Clone, Debug)]
pub struct Perlin {
    perm: [u8; 512],
}

const GRADS: [(f32, f32); 8] = [
    (1.0, 1.0),
    (-1.0, 1.0),
    (1.0, -1.0),
    (-1.0, -1.0),
    (1.0, 0.0),
    (-1.0, 0.0),
    (0.0, 1.0),
    (0.0, -1.0),
];

impl Perlin {
    /// A lattice whose permutation is shuffled by `seed` (Fisher–Yates, SplitMix64).
    #[must_use]
    pub fn new(seed: u64) -> Self {
        let mut p: [u8; 256] = std::array::from_fn(|i| i as u8);
        let mut state = seed;
        for i in (1..256).rev() {
            state = splitmix64(state);
            let j = (state % (i as u64 + 1)) as usize;
            p.swap(i, j);
        }
        let mut perm = [0u8; 512];
        for i in 0..512 {
            perm[i] = p[i & 255];
        }
        Self { perm }
    }

    #[inline]
    fn grad(hash: u8, dx: f32, dy: f32) -> f32 {
        let (gx, gy) = GRADS[usize::from(hash & 7)];
        gx * dx + gy * dy
    }

    /// Noise at `(x, y)` in lattice units; roughly in `[-1, 1]`, 0 on every lattice point.
    #[inline]
    #[must_use]
    pub fn sample(&self, x: f64, y: f64, s: Smoothstep) -> f32 {
        let xf = x.floor();
        let yf = y.floor();
        let dx = (x - xf) as f32;
        let dy = (y - yf) as f32;
        let xi = (xf as i64 & 255) as usize;
        let yi = (yf as i64 & 255) as usize;
        let a = usize::from(self.perm[xi]) + yi;
        let b = usize::from(self.perm[xi + 1]) + yi;
        let g00 = Self::grad(self.perm[a], dx, dy);
        let g10 = Self::grad(self.perm[b], dx - 1.0, dy);
        let g01 = Self::grad(self.perm[a + 1], dx, dy - 1.0);
        let g11 = Self::grad(self.perm[b + 1], dx - 1.0, dy - 1.0);
        let u = s.apply(dx);
        let v = s.apply(dy);
        let top = g00 + u * (g10 - g00);
        let bottom = g01 + u * (g11 - g01);
        top + v * (bottom - top)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_on_lattice_points_and_bounded() {
        let p = Perlin::new(7);
        for i in -5..5 {
            for j in -5..5 {
                assert_eq!(p.sample(f64::from(i), f64::from(j), Smoothstep::S5), 0.0);
            }
        }
        let mut max = 0.0f32;
        for i in 0..10_000 {
            let v = p.sample(f64::from(i) * 0.0137, f64::from(i) * 0.0291, Smoothstep::S3);
            max = max.max(v.abs());
        }
        assert!(max <= 1.0 && max > 0.3, "{max}");
    }

    #[test]
    fn seeds_differ() {
        let a = Perlin::new(1).sample(0.3, 0.7, Smoothstep::S5);
        let b = Perlin::new(2).sample(0.3, 0.7, Smoothstep::S5);
        assert_ne!(a, b);
    }

    #[test]
    fn smoothsteps_hit_endpoints() {
        for s in [Smoothstep::S3, Smoothstep::S5] {
            assert_eq!(s.apply(0.0), 0.0);
            assert_eq!(s.apply(1.0), 1.0);
            assert!((s.apply(0.5) - 0.5).abs() < 1e-6);
        }
    }
}
