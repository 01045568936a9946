//! Perturb and warp: nodes that move terrain sideways by a displacement field.

pub mod domain_warp;
pub mod perturb;
pub mod slope_warp;

use crate::field::Field;
use crate::node::{EvalCtx, NodeError, Registry};
use crate::nodes::generators::noise::fractal::fractal_field;
use crate::nodes::generators::noise::{Basis, FractalMode, FractalSpec, Smooth};
use rayon::prelude::*;

pub fn register(reg: &mut Registry) {
    reg.register::<perturb::Perturb>();
    reg.register::<domain_warp::DomainWarp>();
    reg.register::<slope_warp::SlopeWarp>();
}

/// `src` sampled at every cell centre moved by `(dx, dy)` pixels (bilinear, clamped borders).
#[must_use]
pub fn displace(src: &Field, dx: &Field, dy: &Field) -> Field {
    let (w, h) = (src.width(), src.height());
    let mut out = Field::filled(w, h, 0.0);
    out.rows_mut().for_each(|(y, row)| {
        for (x, v) in row.iter_mut().enumerate() {
            let i = y * w + x;
            *v = src.sample_bilinear(x as f32 + 0.5 + dx.data()[i], y as f32 + 0.5 + dy.data()[i]);
        }
    });
    out
}

/// Moves `src` by two independent Perlin fBm fields (one per axis) of amplitude
/// `amplitude_m` metres: the displacement of each cell is amplitude·(n₁, n₂), n about [−1, 1].
pub fn warp_by_noise(
    ctx: &EvalCtx,
    src: &Field,
    amplitude_m: f64,
    spec: &FractalSpec,
    seed: u32,
) -> Result<Field, NodeError> {
    if amplitude_m == 0.0 {
        return Ok(src.clone());
    }
    let px = (amplitude_m / ctx.cell_size_m()) as f32;
    let base = ctx.rng_seed(seed);
    let dx = fractal_field(ctx, Basis::Perlin(Smooth::S5), spec, base, (px, 0.0))?;
    let dy = fractal_field(
        ctx,
        Basis::Perlin(Smooth::S5),
        spec,
        crate::node::splitmix64(base),
        (px, 0.0),
    )?;
    ctx.check_cancel()?;
    Ok(displace(src, &dx, &dy))
}

/// An fBm spec for displacement fields.
#[must_use]
pub fn fbm(feature_size_m: f64, octaves: u32, persistence: f64) -> FractalSpec {
    FractalSpec {
        mode: FractalMode::Fbm,
        octaves,
        lacunarity: 2.0,
        persistence,
        offset: 1.0,
        feature_size_m,
    }
}
