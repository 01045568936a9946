//! `perlin_fbm`: fractal Brownian motion over improved Perlin noise (Thorimbert & Chopard 2016 §3.2 and §4);
//! the common case of `noise`, with fewer parameters.

use super::noise::{fractal::fractal_field, Basis, FractalMode, FractalSpec};
use super::noise_node::{height_map, Interp};
use crate::node::{EvalCtx, Node, NodeError};

crate::params! {
    pub struct PerlinFbmParams {
        /// Seed of this node, combined with the graph seed.
        seed: u32 = seed(0),
        /// Wavelength of the first (largest) octave, in metres.
        feature_size_m: f64 = float(2000.0, [50.0, 10_000.0], [0.01, 10_000_000.0], "m"),
        /// Number of octaves summed.
        octaves: u32 = int(6, [1, 12], [1, 16], ""),
        /// Frequency ratio between successive octaves.
        lacunarity: f64 = float(2.0, [1.5, 3.0], [1.01, 8.0], ""),
        /// Amplitude ratio between successive octaves.
        persistence: f64 = float(0.5, [0.2, 0.8], [0.0, 1.0], ""),
        /// Half the peak-to-trough amplitude, as a fraction of the graph's height range.
        amplitude: f64 = float(0.5, [0.0, 1.0], [0.0, 100.0], ""),
        /// Mean height, as a fraction of the graph's height range (0 = bottom, 1 = top).
        base: f64 = float(0.5, [0.0, 1.0], [-100.0, 100.0], ""),
        /// Smoothstep between lattice points: s5 (Eq. 18) or s3 (Eq. 17).
        interp: Interp = choice(Interp::S5) as "Interpolant",
    }
}

crate::node! {
    /// Rolling, natural-looking hills and mountains from layered noise, the usual starting point
    /// for a terrain.
    /// Fractal Brownian motion: the sum over octaves i of persistence^i · perlin(lacunarity^i · p /
    /// feature_size_m), normalised by the sum of the octave amplitudes (Thorimbert & Chopard 2016
    /// §4). Perlin noise with the S3 or S5 interpolant (Thorimbert & Chopard 2016 §3.2, Eqs.
    /// 16–18). The same as `noise` with basis perlin and mode fbm. Sampled at cell centres in world
    /// metres, so every resolution shows the same terrain. Height = base + amplitude · noise, both
    /// relative to the graph's height range.
    pub struct PerlinFbm {
        id: "perlin_fbm",
        label: "Perlin fBm",
        category: Generator,
        version: 2,
        params: PerlinFbmParams,
        inputs: PerlinFbmIn {
        },
        outputs: PerlinFbmOut {
            /// Heights in metres.
            out: height,
        },
    }
}

impl Node for PerlinFbm {
    fn eval(ctx: &EvalCtx, _: PerlinFbmIn, p: &PerlinFbmParams) -> Result<PerlinFbmOut, NodeError> {
        let spec = FractalSpec {
            mode: FractalMode::Fbm,
            octaves: p.octaves,
            lacunarity: p.lacunarity,
            persistence: p.persistence,
            offset: 1.0,
            feature_size_m: p.feature_size_m,
        };
        let heights = height_map(ctx, p.amplitude, p.base);
        Ok(PerlinFbmOut {
            out: fractal_field(
                ctx,
                Basis::Perlin(p.interp.smooth()),
                &spec,
                ctx.rng_seed(p.seed),
                heights,
            )?,
        })
    }
}
