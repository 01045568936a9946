//! Fractal sums of octaves over any basis: fBm (Thorimbert & Chopard 2016 §4), ridged (Thorimbert & Chopard 2016 Fig. 5,
//! after Musgrave), billow and hybrid multifractal (Musgrave).

use super::kernel::Write;
use super::lattice::{octave_offset, octave_seed};
use super::{simplex, Basis, OctaveX, Scratch};
use crate::field::Field;
use crate::node::{EvalCtx, NodeError};
use rayon::prelude::*;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Rows per parallel work item.
const BAND: usize = 32;

/// How octaves are combined.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FractalMode {
    /// `Σ pⁱ·nᵢ / Σ pⁱ`.
    Fbm,
    /// Ridges: `r = (offset − |n|)²`, each octave weighted by the previous one's
    /// `clamp(2r, 0, 1)` (Musgrave's ridged multifractal, gain 2); divided by the largest
    /// possible sum and mapped to [−1, 1].
    Ridged,
    /// Billows: `Σ pⁱ·(2|nᵢ| − 1) / Σ pⁱ`.
    Billow,
    /// Hybrid multifractal (Musgrave): `result = (n₀ + offset)`, then for each further
    /// octave `w = min(w, 1); s = (nᵢ + offset)·pⁱ; result += w·s; w *= s`; rescaled to about [−1, 1].
    Hybrid,
}

/// The octave stack.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FractalSpec {
    pub mode: FractalMode,
    pub octaves: u32,
    /// Frequency ratio between successive octaves.
    pub lacunarity: f64,
    /// Amplitude ratio between successive octaves.
    pub persistence: f64,
    /// Ridged and hybrid offset.
    pub offset: f32,
    /// Wavelength of octave 0 in metres.
    pub feature_size_m: f64,
}

/// Noise values v (about [−1, 1]) of `basis` summed over octaves, sampled at the cell
/// centres of the build grid in world metres, returned as `scale·v + shift` (applied to
/// each row while it is in cache).
pub fn fractal_field(
    ctx: &EvalCtx,
    basis: Basis,
    spec: &FractalSpec,
    seed: u64,
    (scale, shift): (f32, f32),
) -> Result<Field, NodeError> {
    let (n, height) = (ctx.width(), ctx.height());
    let (xs, ys) = (ctx.xs_m(), ctx.ys_m());
    let octaves: Vec<Octave> = (0..spec.octaves.max(1))
        .map(|i| Octave::new(basis, spec, seed, i, &xs))
        .collect();
    let amps: Vec<f32> = octaves.iter().map(|o| o.amp).collect();
    let amp_sum: f32 = amps.iter().sum::<f32>().max(f32::MIN_POSITIVE);
    let mode = spec.mode;
    let offset = spec.offset;
    let mut field = Field::filled(n, height, 0.0);
    let done = AtomicUsize::new(0);
    let columns: Vec<usize> = octaves
        .iter()
        .map(|o| o.x.as_ref().map_or(0, OctaveX::columns))
        .collect();
    // Fixed bands of rows, each with one scratch: consecutive rows reuse the lattice row
    // caches, whatever the thread count (rayon's `*_init` would re-create the scratch for
    // every piece it splits off).
    field
        .data_mut()
        .par_chunks_mut(n * BAND)
        .enumerate()
        .try_for_each(|(band, rows)| {
            let mut scratch = Scratch::new(n, &columns);
            let s = &mut scratch;
            for (r, row) in rows.chunks_mut(n).enumerate() {
                ctx.check_cancel()?;
                let y = band * BAND + r;
                let ym = ys[y];
                row.fill(0.0);
                for (i, o) in octaves.iter().enumerate() {
                    let yl = ym * o.freq + o.oy;
                    match (&o.x, mode) {
                        // fBm over a lattice basis: the kernel adds amp·n straight into the row.
                        (Some(ox), FractalMode::Fbm) => {
                            basis.lattice_row(ox, yl, o.seed, i, s, row, Write::Accumulate(o.amp));
                        }
                        (x, _) => {
                            let mut noise = std::mem::take(&mut s.noise);
                            match x {
                                Some(ox) => basis.lattice_row(
                                    ox,
                                    yl,
                                    o.seed,
                                    i,
                                    s,
                                    &mut noise,
                                    Write::Store,
                                ),
                                None => simplex::row(&o.xs, yl, o.seed, &mut noise),
                            }
                            combine(mode, i, o.amp, offset, &noise, row, &mut s.weight);
                            s.noise = noise;
                        }
                    }
                }
                finish(mode, amp_sum, offset, &amps, row, scale, shift);
            }
            let d = done.fetch_add(rows.len() / n, Ordering::Relaxed) + rows.len() / n;
            ctx.report(d as f32 / height as f32);
            Ok::<(), NodeError>(())
        })?;
    Ok(field)
}

struct Octave {
    freq: f64,
    oy: f64,
    amp: f32,
    seed: u32,
    /// Lattice bases: the tabulated x terms. Simplex: `None`, with `xs` the lattice x coordinates.
    x: Option<OctaveX>,
    xs: Vec<f64>,
}

impl Octave {
    fn new(basis: Basis, spec: &FractalSpec, seed: u64, i: u32, centres: &[f64]) -> Self {
        let freq = spec.lacunarity.powi(i as i32) / spec.feature_size_m;
        let ox = octave_offset(seed, i, 0);
        let oy = octave_offset(seed, i, 1);
        let xs: Vec<f64> = centres.iter().map(|&x| x * freq + ox).collect();
        let x = (basis != Basis::Simplex).then(|| OctaveX::new(&xs, basis.q_of()));
        Self {
            freq,
            oy,
            amp: spec.persistence.powi(i as i32) as f32,
            seed: octave_seed(seed, i),
            x,
            xs: if basis == Basis::Simplex {
                xs
            } else {
                Vec::new()
            },
        }
    }
}

/// Adds octave `i` (values `noise`, amplitude `amp`) into the row accumulator.
#[cfg_attr(
    not(any(feature = "simd-max-avx2", feature = "simd-portable")),
    multiversion::multiversion(targets("x86_64+avx512f+avx512vl+avx2+fma", "x86_64+avx2+fma"))
)]
#[cfg_attr(
    all(feature = "simd-max-avx2", not(feature = "simd-portable")),
    multiversion::multiversion(targets("x86_64+avx2+fma"))
)]
fn combine(
    mode: FractalMode,
    i: usize,
    amp: f32,
    offset: f32,
    noise: &[f32],
    acc: &mut [f32],
    weight: &mut [f32],
) {
    match mode {
        FractalMode::Fbm => {
            for (a, &v) in acc.iter_mut().zip(noise) {
                *a += amp * v;
            }
        }
        FractalMode::Billow => {
            for (a, &v) in acc.iter_mut().zip(noise) {
                *a += amp * (2.0 * v.abs() - 1.0);
            }
        }
        FractalMode::Ridged => {
            if i == 0 {
                weight.fill(1.0);
            }
            for ((a, w), &v) in acc.iter_mut().zip(weight.iter_mut()).zip(noise) {
                let r = offset - v.abs();
                let r = r * r * *w;
                *a += amp * r;
                *w = (r * 2.0).clamp(0.0, 1.0);
            }
        }
        FractalMode::Hybrid => {
            if i == 0 {
                for ((a, w), &v) in acc.iter_mut().zip(weight.iter_mut()).zip(noise) {
                    *a = v + offset;
                    *w = *a;
                }
            } else {
                for ((a, w), &v) in acc.iter_mut().zip(weight.iter_mut()).zip(noise) {
                    let ww = w.min(1.0);
                    let s = (v + offset) * amp;
                    *a += ww * s;
                    *w = ww * s;
                }
            }
        }
    }
}

/// Rescales the accumulated row to about [−1, 1].
#[cfg_attr(
    not(any(feature = "simd-max-avx2", feature = "simd-portable")),
    multiversion::multiversion(targets("x86_64+avx512f+avx512vl+avx2+fma", "x86_64+avx2+fma"))
)]
#[cfg_attr(
    all(feature = "simd-max-avx2", not(feature = "simd-portable")),
    multiversion::multiversion(targets("x86_64+avx2+fma"))
)]
fn finish(
    mode: FractalMode,
    amp_sum: f32,
    offset: f32,
    amps: &[f32],
    row: &mut [f32],
    scale: f32,
    shift: f32,
) {
    // v = acc·inv + bias maps the accumulated row to about [−1, 1].
    let (inv, bias) = match mode {
        FractalMode::Fbm | FractalMode::Billow => (1.0 / amp_sum, 0.0),
        // r = offset − |n| with |n| ≤ 1, so each octave contributes at most
        // amp·max(offset², (1 − offset)²), which is never below amp/4.
        FractalMode::Ridged => {
            let peak = (offset * offset).max((1.0 - offset) * (1.0 - offset));
            (2.0 / (amp_sum * peak), -1.0)
        }
        FractalMode::Hybrid => {
            // A typical upper bound: octave 0 gives up to 1 + offset, later octaves at most
            // amp·(1 + offset) each (weights ≤ 1).
            let top = (1.0 + offset) * (1.0 + amps.iter().skip(1).sum::<f32>());
            (2.0 / top.max(f32::MIN_POSITIVE), -1.0)
        }
    };
    for v in row.iter_mut() {
        *v = shift + scale * (*v * inv + bias);
    }
}
