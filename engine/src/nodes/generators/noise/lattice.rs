//! Stateless lattice hashing: every lattice point's random data comes from
//! `(octave seed, column, row)` alone, so rows can be computed in any order on any thread.

/// A well-mixed 32-bit hash of a lattice point (the "lowbias32" finaliser of Chris Wellons).
#[inline]
#[must_use]
pub fn hash2(seed: u32, x: i32, y: i32) -> u32 {
    let mut h = seed ^ (x as u32).wrapping_mul(0x9E37_79B1) ^ (y as u32).wrapping_mul(0x85EB_CA77);
    h ^= h >> 16;
    h = h.wrapping_mul(0x7FEB_352D);
    h ^= h >> 15;
    h = h.wrapping_mul(0x846C_A68B);
    h ^ (h >> 16)
}

/// A further independent hash derived from `h` (for several values per lattice point).
#[inline]
#[must_use]
pub fn rehash(h: u32, k: u32) -> u32 {
    hash2(h, k as i32, 0x5bd1_e995_u32 as i32)
}

/// Maps a hash to `[-1, 1]` (24 high bits, exactly representable).
#[inline]
#[must_use]
pub fn unit_f32(h: u32) -> f32 {
    (h >> 8) as f32 * (2.0 / 16_777_215.0) - 1.0
}

/// A seed for octave `i` of a generator seeded with `seed`.
#[must_use]
pub fn octave_seed(seed: u64, i: u32) -> u32 {
    let s = crate::node::splitmix64(seed ^ u64::from(i).wrapping_mul(0xA076_1D64_78BD_642F));
    (s >> 32) as u32 ^ s as u32
}

/// A fractional offset in `[0, 256)` lattice units for octave `i` (so octaves' lattice points do not line up).
#[must_use]
pub fn octave_offset(seed: u64, i: u32, axis: u32) -> f64 {
    let h = hash2(octave_seed(seed, i), axis as i32, 0x3779);
    f64::from(h) / f64::from(u32::MAX) * 256.0
}
