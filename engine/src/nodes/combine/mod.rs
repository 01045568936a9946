//! Combiners: nodes that merge two or more terrains.

pub mod blend;

use crate::node::Registry;

pub fn register(reg: &mut Registry) {
    reg.register::<blend::Blend>();
}
