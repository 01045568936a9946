//! Combiners: nodes that merge two or more terrains.

pub mod blend;
#[expect(clippy::module_inception)]
pub mod combine;
pub mod lerp;
pub mod select;

use crate::node::Registry;

pub fn register(reg: &mut Registry) {
    reg.register::<blend::Blend>();
    reg.register::<combine::Combine>();
    reg.register::<lerp::Lerp>();
    reg.register::<select::Select>();
}
