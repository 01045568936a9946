//! Generators: nodes without inputs that create terrain from parameters and seeds.

pub mod constant;
pub mod gradient;
pub mod noise;
pub mod noise_node;
pub mod perlin_fbm;
pub mod radial;

use crate::node::Registry;

pub fn register(reg: &mut Registry) {
    reg.register::<constant::Constant>();
    reg.register::<gradient::LinearGradient>();
    reg.register::<radial::RadialGradient>();
    reg.register::<perlin_fbm::PerlinFbm>();
    reg.register::<noise_node::Noise>();
}
