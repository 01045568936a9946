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

/// `src` sampled at every cell centre moved by `(dx, dy)` pixels (bilinear; positions beyond
/// the map are reflected back into it, so the edges show terrain rather than the border row
/// smeared into streaks, as clamping did).
///
/// The offset is split into whole cells and a fraction, and only the fraction enters the
/// arithmetic: a cell's value does not depend on its index's magnitude, so a tile computes
/// the very bits of the whole map (`x + dx` in f32 rounds differently at x = 37 and 1037).
#[must_use]
pub fn displace(src: &Field, dx: &Field, dy: &Field) -> Field {
    let (w, h) = (src.width(), src.height());
    let mut out = Field::filled(w, h, 0.0);
    out.rows_mut().for_each(|(y, row)| {
        for (x, v) in row.iter_mut().enumerate() {
            let i = y * w + x;
            let (ox, oy) = (dx.data()[i], dy.data()[i]);
            let (kx, ky) = (ox.floor(), oy.floor());
            let (tx, ty) = (ox - kx, oy - ky);
            let (x0, y0) = (x as isize + kx as isize, y as isize + ky as isize);
            let a = src.get_reflected(x0, y0);
            let b = src.get_reflected(x0 + 1, y0);
            let c = src.get_reflected(x0, y0 + 1);
            let d = src.get_reflected(x0 + 1, y0 + 1);
            let top = a + (b - a) * tx;
            let bottom = c + (d - c) * tx;
            *v = top + (bottom - top) * ty;
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
