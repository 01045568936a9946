//! Masks: nodes whose output is a weight in [0, 1].

pub mod algebra;
pub mod deposits;
pub mod occlusion;
pub mod terrain_masks;
pub mod to_mask;

use crate::node::Registry;

pub fn register(reg: &mut Registry) {
    reg.register::<to_mask::ToMask>();
    reg.register::<to_mask::ScalarToMask>();
    reg.register::<terrain_masks::HeightMask>();
    reg.register::<terrain_masks::SlopeMask>();
    reg.register::<terrain_masks::CurvatureMask>();
    reg.register::<terrain_masks::AspectMask>();
    reg.register::<algebra::MaskCombine>();
    reg.register::<algebra::MaskGrow>();
    reg.register::<algebra::MaskBlur>();
    reg.register::<occlusion::SkyView>();
    reg.register::<deposits::SedimentDepth>();
    reg.register::<deposits::TalusMask>();
}
