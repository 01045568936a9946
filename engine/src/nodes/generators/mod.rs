//! Generators: nodes without inputs that create terrain from parameters and seeds.
//!
//! # Point samples or area means
//! `orogen parity` compares a preview with the build averaged down, so a generator whose detail is
//! finer than a preview cell should give that cell the mean of its surface, not the value at its
//! centre. `diamond_square` does (its lattice is a bilinear surface, and the mean over a cell is a
//! separable sum of hat-function integrals, exact); the noise generators still point-sample: their
//! octaves below a preview cell are small enough to stay within the generators' 0.25% tolerance.

pub mod constant;
pub mod diamond_square;
pub mod fault;
pub mod gradient;
pub mod island;
pub mod noise;
pub mod noise_node;
pub mod perlin_fbm;
pub mod radial;
pub mod worley;

use crate::node::Registry;

pub fn register(reg: &mut Registry) {
    reg.register::<constant::Constant>();
    reg.register::<gradient::LinearGradient>();
    reg.register::<radial::RadialGradient>();
    reg.register::<perlin_fbm::PerlinFbm>();
    reg.register::<noise_node::Noise>();
    reg.register::<worley::Worley>();
    reg.register::<diamond_square::DiamondSquare>();
    reg.register::<fault::FaultFormation>();
    reg.register::<island::IslandMask>();
}
