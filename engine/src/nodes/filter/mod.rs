//! Filters: nodes that reshape one terrain's heights.

pub mod clamp;
pub mod invert;
pub mod levels;
pub mod normalize;

use crate::node::Registry;

pub fn register(reg: &mut Registry) {
    reg.register::<clamp::Clamp>();
    reg.register::<invert::Invert>();
    reg.register::<levels::Levels>();
    reg.register::<normalize::Normalize>();
}
