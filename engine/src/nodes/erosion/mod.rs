//! Erosion: nodes that move material over the terrain.

pub mod hydraulic_grid;
pub mod thermal;

use crate::node::Registry;

pub fn register(reg: &mut Registry) {
    reg.register::<thermal::Thermal>();
    reg.register::<hydraulic_grid::GridHydraulic>();
}
