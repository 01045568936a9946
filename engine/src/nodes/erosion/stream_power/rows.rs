//! Row kernels of [`super::StreamPower`]'s step: what the tree walks gather of each cell,
//! packed, and the write-back of their results.

use std::sync::atomic::AtomicU32;

/// The write-back of a row: the new surfaces `h` (the tree walks' results: the new ground,
/// or over ground still under a lake the lake's new level) into the filled surface `f` and,
/// where lower, the ground `z`, where, when `reached` is given, a walk reached the cell (a
/// cell that is not a number keeps its height). Returns the row's lake cells before it. Branch-free (lakes are data, not a pattern); the new
/// heights are read through `get_mut`, plain loads, so the loop vectorises.
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
pub(super) fn write_row(
    z: &mut [f32],
    f: &mut [f32],
    h: &mut [AtomicU32],
    reached: Option<&[bool]>,
) -> usize {
    let n = z.len();
    let (f, h) = (&mut f[..n], &mut h[..n]);
    let mut lakes = 0u32;
    for x in 0..n {
        let write = reached.is_none_or(|r| r[x]);
        let new = f32::from_bits(*h[x].get_mut());
        lakes += u32::from(z[x] < f[x]);
        let ground = if new < z[x] { new } else { z[x] };
        z[x] = if write { ground } else { z[x] };
        f[x] = if write { new } else { f[x] };
    }
    lakes as usize
}

/// What the update reads of a cell, packed ([`super::StreamPower`]`::packed`): its ground `z`, and
/// the distance `d` to the receiver, negated under a lake (`z < f`, the filled height).
#[expect(clippy::inline_always)]
#[inline(always)]
pub(super) fn pack(z: f32, f: f32, d: f32) -> u64 {
    let d: f32 = if z < f { -d } else { d };
    u64::from(z.to_bits()) << 32 | u64::from(d.to_bits())
}

/// [`pack`] for the row of cells from `at` on, with every node at its cell's centre: the
/// routing left the distances unwritten, 1 to a side neighbour and √2 to a diagonal one
/// (told by the index step to the receiver, in 32-bit arithmetic so that it vectorises; a
/// root's distance is never read).
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
pub(super) fn pack_row_uniform(
    z: &[f32],
    f: &[f32],
    r: &[u32],
    at: usize,
    w: usize,
    out: &mut [u64],
) {
    let n = out.len();
    let (z, f, r, w) = (&z[..n], &f[..n], &r[..n], w as u32);
    for x in 0..n {
        let s = r[x].wrapping_sub((at + x) as u32);
        // `|`, not `||`: four flags, no branch between them.
        #[expect(clippy::needless_bitwise_bool)]
        let side = (s == 1) | (s == w) | (s == 1u32.wrapping_neg()) | (s == w.wrapping_neg());
        let d = if side { 1.0 } else { std::f32::consts::SQRT_2 };
        out[x] = pack(z[x], f[x], d);
    }
}
