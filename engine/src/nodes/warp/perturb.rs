//! `perturb`: Olsen 2004's perturbation filter — every cell displaced by noise, by at most a
//! fraction of the map size.

use crate::node::{EvalCtx, Node, NodeError};

crate::params! {
    pub struct PerturbParams {
        /// Seed of this node, combined with the graph seed.
        seed: u32 = seed(0),
        /// Largest displacement as a fraction of the map size (Olsen 2004's example: 0.02).
        magnitude: f64 = float(0.02, [0.0, 0.1], [0.0, 1.0], ""),
        /// Wavelength of the displacement noise, in metres.
        feature_size_m: f64 = float(1000.0, [50.0, 5000.0], [0.01, 10_000_000.0], "m"),
        /// Octaves of displacement noise.
        octaves: u32 = int(3, [1, 8], [1, 16], ""),
    }
}

crate::node! {
    /// Shifts the terrain sideways by noise, so straight ridges and coasts wander more naturally.
    /// Olsen 2004's perturbation filter: each cell takes the height found at its position moved by
    /// magnitude · world size · (n₁, n₂), where n₁, n₂ are Perlin fBm fields (persistence 0.5)
    /// about [−1, 1] — so no cell moves further than magnitude · N cells (0.02 in Olsen 2004's
    /// figure). Olsen 2004 displaces by 3D Perlin noise sampled at (i, j, h); here the two fields
    /// are 2D in world metres, so the displacement does not depend on height units and is the same
    /// at every resolution. Bilinear sampling, clamped borders.
    pub struct Perturb {
        id: "perturb",
        label: "Perturb",
        category: Warp,
        version: 1,
        params: PerturbParams,
        inputs: PerturbIn {
            /// Terrain to perturb.
            r#in: height,
        },
        outputs: PerturbOut {
            /// Perturbed terrain.
            out: height,
        },
    }
}

impl Node for Perturb {
    fn footprint(p: &PerturbParams, _cell_m: f64, n: usize) -> crate::node::Footprint {
        crate::node::Footprint::Stencil((1.5 * p.magnitude.abs() * n as f64).ceil() as usize + 2)
    }

    fn eval(ctx: &EvalCtx, inputs: PerturbIn, p: &PerturbParams) -> Result<PerturbOut, NodeError> {
        let src = inputs.r#in;
        let spec = super::fbm(p.feature_size_m, p.octaves, 0.5);
        Ok(PerturbOut {
            out: super::warp_by_noise(ctx, src, p.magnitude * ctx.world.size_m, &spec, p.seed)?,
        })
    }
}
