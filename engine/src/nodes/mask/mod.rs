//! Masks: nodes whose output is a weight in [0, 1].

pub mod to_mask;

use crate::node::Registry;

pub fn register(reg: &mut Registry) {
    reg.register::<to_mask::ToMask>();
}
