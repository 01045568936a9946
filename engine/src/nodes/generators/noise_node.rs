//! `noise`: every noise basis (Perlin S3/S5, value, generic and zero-gradient D2M1N3,
//! simplex) under every fractal mode (fBm, ridged, billow, hybrid multifractal).

use super::noise::{fractal::fractal_field, Basis, FractalMode, FractalSpec, Smooth};
use crate::field::Field;
use crate::node::{EvalCtx, Node, NodeError};

crate::choice_enum! {
    /// The noise of one octave.
    pub enum BasisChoice {
        Perlin = "perlin",
        Value = "value",
        D2m1n3 = "d2m1n3",
        D2m1n3Zero = "d2m1n3_zero",
        Simplex = "simplex",
    }
}

crate::choice_enum! {
    /// How octaves are combined.
    pub enum ModeChoice { Fbm = "fbm", Ridged = "ridged", Billow = "billow", Hybrid = "hybrid" }
}

crate::choice_enum! {
    /// Smoothstep across a lattice cell (Perlin and value noise).
    pub enum Interp { S5 = "s5", S3 = "s3" }
}

impl Interp {
    #[must_use]
    pub fn smooth(self) -> Smooth {
        match self {
            Interp::S3 => Smooth::S3,
            Interp::S5 => Smooth::S5,
        }
    }
}

impl ModeChoice {
    #[must_use]
    pub fn mode(self) -> FractalMode {
        match self {
            ModeChoice::Fbm => FractalMode::Fbm,
            ModeChoice::Ridged => FractalMode::Ridged,
            ModeChoice::Billow => FractalMode::Billow,
            ModeChoice::Hybrid => FractalMode::Hybrid,
        }
    }
}

crate::params! {
    pub struct NoiseParams {
        /// Seed of this node, combined with the graph seed.
        seed: u32 = seed(0),
        /// Noise of one octave: perlin (Thorimbert & Chopard 2016 §3.2), value, d2m1n3 (generic polynomial, Thorimbert & Chopard 2016 §3.1), d2m1n3_zero (zero-gradient polynomial, Thorimbert & Chopard 2016 §3.3 Eq. 19) or simplex.
        basis: BasisChoice = choice(BasisChoice::Perlin),
        /// How octaves are combined: fbm, ridged, billow or hybrid (multifractal).
        mode: ModeChoice = choice(ModeChoice::Fbm),
        /// Wavelength of the first (largest) octave, in metres.
        feature_size_m: f64 = float(2000.0, [50.0, 10_000.0], [0.01, 10_000_000.0], "m"),
        /// Number of octaves summed.
        octaves: u32 = int(8, [1, 12], [1, 16], ""),
        /// Frequency ratio between successive octaves.
        lacunarity: f64 = float(2.0, [1.5, 3.0], [1.01, 8.0], ""),
        /// Amplitude ratio between successive octaves (p in Thorimbert & Chopard 2016 §5.3).
        persistence: f64 = float(0.5, [0.2, 0.8], [0.0, 1.0], ""),
        /// Ridged and hybrid modes: the offset added before shaping (ridges: offset − |n|).
        offset: f64 = float(1.0, [0.0, 1.5], [0.0, 4.0], "") if mode in ["ridged", "hybrid"],
        /// Perlin and value noise: S3 (3t² − 2t³, Eq. 17) or S5 (6t⁵ − 15t⁴ + 10t³, Eq. 18). D2M1N3 always uses S3.
        interp: Interp = choice(Interp::S5) as "Interpolant" if basis in ["perlin", "value"],
        /// Generic D2M1N3 only: weight w of the random corner gradients, in octave amplitude per lattice cell (Thorimbert & Chopard 2016 §3.4 uses w = h0/100 per pixel).
        gradient_weight: f64 = float(0.5, [0.0, 2.0], [0.0, 10.0], "") if basis in ["d2m1n3"],
        /// Half the peak-to-trough amplitude, as a fraction of the graph's height range.
        amplitude: f64 = float(0.5, [0.0, 1.0], [0.0, 100.0], ""),
        /// Mean height, as a fraction of the graph's height range (0 = bottom, 1 = top).
        base: f64 = float(0.5, [0.0, 1.0], [-100.0, 100.0], ""),
    }
}

impl NoiseParams {
    #[must_use]
    pub fn basis(&self) -> Basis {
        match self.basis {
            BasisChoice::Perlin => Basis::Perlin(self.interp.smooth()),
            BasisChoice::Value => Basis::Value(self.interp.smooth()),
            BasisChoice::D2m1n3 => Basis::D2m1n3 {
                gradient_weight: self.gradient_weight as f32,
            },
            BasisChoice::D2m1n3Zero => Basis::D2m1n3Zero,
            BasisChoice::Simplex => Basis::Simplex,
        }
    }

    #[must_use]
    pub fn fractal(&self) -> FractalSpec {
        FractalSpec {
            mode: self.mode.mode(),
            octaves: self.octaves,
            lacunarity: self.lacunarity,
            persistence: self.persistence,
            offset: self.offset as f32,
            feature_size_m: self.feature_size_m,
        }
    }
}

/// The affine map from values v (about [−1, 1]) to heights: `base + amplitude · v` of the
/// height range, as `(scale, shift)` in metres.
#[must_use]
pub fn height_map(ctx: &EvalCtx, amplitude: f64, base: f64) -> (f32, f32) {
    let span = ctx.world.height_span_m();
    (
        (amplitude * span) as f32,
        (ctx.world.height_min_m + base * span) as f32,
    )
}

/// Values v (about [−1, 1]) to heights: `base + amplitude · v` of the height range.
#[must_use]
pub fn to_heights(ctx: &EvalCtx, mut v: Field, amplitude: f64, base: f64) -> Field {
    let (a, b) = height_map(ctx, amplitude, base);
    v.map_in_place(|x| b + a * x);
    v
}

crate::node! {
    /// Natural-looking random terrain (rolling hills, ridged mountains, puffy billows) at any
    /// feature size.
    /// Fractal noise over a choice of basis — Perlin with S3/S5 (Thorimbert & Chopard 2016 §3.2,
    /// Eqs. 16–18), value noise, generic D2M1N3 polynomial noise (Thorimbert & Chopard 2016 §3.1,
    /// Eqs. 5–15, gradient weight w), zero-gradient D2M1N3 (Thorimbert & Chopard 2016 §3.3, Eq. 19,
    /// with the space-dependent terms tabulated once per octave as §3.3 suggests), or 2D simplex —
    /// combined as fBm (Thorimbert & Chopard 2016 §4), ridged (Thorimbert & Chopard 2016 Fig. 5),
    /// billow or hybrid multifractal. Sampled at cell centres in world metres, so every resolution
    /// shows the same terrain. Height = base + amplitude · v with v about [−1, 1], both relative to
    /// the graph's height range.
    pub struct Noise {
        id: "noise",
        label: "Fractal noise",
        category: Generator,
        version: 1,
        params: NoiseParams,
        inputs: NoiseIn {
        },
        outputs: NoiseOut {
            /// Heights in metres.
            out: height,
        },
    }
}

impl Node for Noise {
    fn eval(ctx: &EvalCtx, _: NoiseIn, p: &NoiseParams) -> Result<NoiseOut, NodeError> {
        let heights = height_map(ctx, p.amplitude, p.base);
        Ok(NoiseOut {
            out: fractal_field(ctx, p.basis(), &p.fractal(), ctx.rng_seed(p.seed), heights)?,
        })
    }
}
