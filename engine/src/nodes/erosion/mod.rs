//! Erosion: nodes that move material over the terrain.

pub mod thermal;

use crate::node::Registry;

pub fn register(reg: &mut Registry) {
    reg.register::<thermal::Thermal>();
}
