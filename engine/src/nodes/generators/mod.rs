//! Generators: nodes without inputs that create terrain from parameters and seeds.

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
