//! `domain_warp`: move terrain by an fBm vector field with an amplitude in metres.

use crate::node::{EvalCtx, Node, NodeError};

crate::params! {
    pub struct DomainWarpParams {
        /// Seed of this node, combined with the graph seed.
        seed: u32 = seed(0),
        /// Displacement amplitude, in metres.
        amplitude_m: f64 = float(200.0, [0.0, 2000.0], [0.0, 10_000_000.0], "m"),
        /// Wavelength of the largest warp features, in metres.
        feature_size_m: f64 = float(2000.0, [100.0, 10_000.0], [0.01, 10_000_000.0], "m"),
        /// Octaves of the warp field.
        octaves: u32 = int(4, [1, 8], [1, 16], ""),
        /// Amplitude ratio between successive octaves of the warp field.
        persistence: f64 = float(0.5, [0.2, 0.8], [0.0, 1.0], ""),
    }
}

crate::node! {
    /// Twists and swirls the terrain by shifting it along smooth noise, breaking up regular shapes.
    /// Each cell takes the height found at its position moved by amplitude_m · (n₁, n₂), where n₁,
    /// n₂ are Perlin fBm fields (about [−1, 1]) of the given feature size, octaves and persistence.
    /// All lengths in metres, so every resolution warps alike; zero amplitude returns the input
    /// unchanged.
    pub struct DomainWarp {
        id: "domain_warp",
        label: "Domain warp",
        category: Warp,
        version: 1,
        params: DomainWarpParams,
        inputs: DomainWarpIn {
            /// Terrain to warp.
            r#in: height,
        },
        outputs: DomainWarpOut {
            /// Warped terrain.
            out: height,
        },
    }
}

impl Node for DomainWarp {
    fn footprint(p: &DomainWarpParams, cell_m: f64, _n: usize) -> crate::node::Footprint {
        crate::node::Footprint::Stencil((1.5 * p.amplitude_m.abs() / cell_m).ceil() as usize + 2)
    }

    fn eval(
        ctx: &EvalCtx,
        inputs: DomainWarpIn,
        p: &DomainWarpParams,
    ) -> Result<DomainWarpOut, NodeError> {
        let src = inputs.r#in;
        let spec = super::fbm(p.feature_size_m, p.octaves, p.persistence);
        Ok(DomainWarpOut {
            out: super::warp_by_noise(ctx, src, p.amplitude_m, &spec, p.seed)?,
        })
    }
}
