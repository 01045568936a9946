//! `island_mask`: a radial mask whose coastline is roughened by fractal noise.

use super::noise::fractal::fractal_field;
use super::noise::{Basis, FractalMode, FractalSpec, Smooth};
use crate::field::Field;
use crate::node::{EvalCtx, Node, NodeError};

crate::params! {
    pub struct IslandParams {
        /// Seed of this node, combined with the graph seed.
        seed: u32 = seed(0),
        /// Centre x as a fraction of the world size.
        center_x: f64 = float(0.5, [0.0, 1.0], [-10.0, 10.0], ""),
        /// Centre y as a fraction of the world size.
        center_y: f64 = float(0.5, [0.0, 1.0], [-10.0, 10.0], ""),
        /// Mean radius of the coastline, as a fraction of the world size.
        radius: f64 = float(0.35, [0.05, 0.7], [0.0, 10.0], ""),
        /// Width of the transition from 1 (inland) to 0 (sea), as a fraction of the world size.
        falloff: f64 = float(0.12, [0.01, 0.5], [0.0001, 10.0], ""),
        /// How far the coastline wanders, as a fraction of the world size.
        coast_noise: f64 = float(0.12, [0.0, 0.3], [0.0, 10.0], ""),
        /// Wavelength of the largest coastline features, in metres.
        feature_size_m: f64 = float(2000.0, [100.0, 10_000.0], [0.01, 10_000_000.0], "m"),
        /// Octaves of coastline noise.
        octaves: u32 = int(6, [1, 10], [1, 16], ""),
    }
}

crate::node! {
    /// An island-shaped mask: white land fading to black sea along a ragged, noisy coastline.
    /// Formula: t = (radius + coast_noise·n(p) − r)/falloff, mask = S3(clamp(t, 0, 1)), where r is
    /// the distance to the centre and n is Perlin fBm (persistence 0.5) of the given feature size —
    /// all lengths relative to the world size, so every resolution shows the same coast.
    pub struct IslandMask {
        id: "island_mask",
        label: "Island mask",
        category: Generator,
        version: 1,
        params: IslandParams,
        inputs: IslandMaskIn {
        },
        outputs: IslandMaskOut {
            /// 1 inland, 0 at sea.
            out: mask,
        },
    }
}

impl Node for IslandMask {
    fn eval(ctx: &EvalCtx, _: IslandMaskIn, p: &IslandParams) -> Result<IslandMaskOut, NodeError> {
        let spec = FractalSpec {
            mode: FractalMode::Fbm,
            octaves: p.octaves,
            lacunarity: 2.0,
            persistence: 0.5,
            offset: 1.0,
            feature_size_m: p.feature_size_m,
        };
        let noise = fractal_field(
            ctx,
            Basis::Perlin(Smooth::S5),
            &spec,
            ctx.rng_seed(p.seed),
            (1.0, 0.0),
        )?;
        let size = ctx.world.size_m;
        let rx: Vec<f64> = ctx.xs_m().iter().map(|c| c / size).collect();
        let ry: Vec<f64> = ctx.ys_m().iter().map(|c| c / size).collect();
        let n = ctx.width();
        let (r0, k, f) = (
            p.radius as f32,
            p.coast_noise as f32,
            (1.0 / p.falloff) as f32,
        );
        let out = Field::from_fn(n, ctx.height(), |x, y| {
            let dx = (rx[x] - p.center_x) as f32;
            let dy = (ry[y] - p.center_y) as f32;
            let r = (dx * dx + dy * dy).sqrt();
            let t = ((r0 + k * noise.data()[y * n + x] - r) * f).clamp(0.0, 1.0);
            Smooth::S3.apply(t)
        });
        Ok(IslandMaskOut { out })
    }
}
