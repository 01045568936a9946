//! `perlin_fbm`: fractal Brownian motion over improved Perlin noise (seed 002 §3.2 and §4).

use super::perlin::{Perlin, Smoothstep};
use crate::field::Field;
use crate::node::{splitmix64, Category, EvalCtx, Inputs, Node, NodeError, NodeSpec, PortSpec};
use rayon::prelude::*;

crate::choice_enum! {
    /// Perlin interpolant: S3 (seed 002 Eq. 17) or S5 (Eq. 18).
    pub enum Interp { S5 = "s5", S3 = "s3" }
}

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
        /// Smoothstep between lattice points.
        interp: Interp = choice(Interp::S5),
    }
}

/// Perlin fBm.
pub struct PerlinFbm;

impl Node for PerlinFbm {
    type Params = PerlinFbmParams;
    const SPEC: NodeSpec = NodeSpec {
        id: "perlin_fbm",
        label: "Perlin fBm",
        category: Category::Generator,
        version: 1,
        doc: "Fractal Brownian motion: the sum over octaves i of persistence^i · perlin(lacunarity^i · p / feature_size_m), normalised by the sum of the octave amplitudes (seed 002 §4). Perlin noise with the S3 or S5 interpolant (seed 002 §3.2, Eqs. 16–18). Sampled at cell centres in world metres, so every resolution shows the same terrain. Height = base + amplitude · noise, both relative to the graph's height range.",
        inputs: &[],
        outputs: &[PortSpec::height("out", "Heights in metres.")],
    };

    fn eval(ctx: &EvalCtx, _: &Inputs, p: &PerlinFbmParams) -> Result<Vec<Field>, NodeError> {
        let seed = ctx.rng_seed(p.seed);
        let lattice = Perlin::new(seed);
        let interp = match p.interp {
            Interp::S3 => Smoothstep::S3,
            Interp::S5 => Smoothstep::S5,
        };
        // Each octave gets its own offset so lattice zeros do not line up across octaves.
        let octaves: Vec<(f64, f32, f64, f64)> = (0..p.octaves)
            .scan((1.0 / p.feature_size_m, 1.0f64), |(freq, amp), i| {
                let h = splitmix64(seed ^ u64::from(i + 1));
                let ox = (h & 0xFFFF) as f64 / 65536.0 * 256.0;
                let oy = ((h >> 16) & 0xFFFF) as f64 / 65536.0 * 256.0;
                let o = (*freq, *amp as f32, ox, oy);
                *freq *= p.lacunarity;
                *amp *= p.persistence;
                Some(o)
            })
            .collect();
        let norm: f32 = octaves
            .iter()
            .map(|o| o.1)
            .sum::<f32>()
            .max(f32::MIN_POSITIVE);
        let centres = ctx.cell_centres_m();
        let lo = ctx.world.height_min_m;
        let span = ctx.world.height_span_m();
        let a = (p.amplitude * span) as f32;
        let b = (lo + p.base * span) as f32;
        let mut field = ctx.new_field(0.0);
        let rows = ctx.resolution.max(1);
        let done = std::sync::atomic::AtomicUsize::new(0);
        field.rows_mut().try_for_each(|(y, row)| {
            ctx.check_cancel()?;
            let ym = centres[y];
            for (x, out) in row.iter_mut().enumerate() {
                let xm = centres[x];
                let mut sum = 0.0f32;
                for &(freq, amp, ox, oy) in &octaves {
                    sum += amp * lattice.sample(xm * freq + ox, ym * freq + oy, interp);
                }
                *out = b + a * (sum / norm);
            }
            let d = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            if d % 64 == 0 {
                ctx.report(d as f32 / rows as f32);
            }
            Ok(())
        })?;
        Ok(vec![field])
    }
}
