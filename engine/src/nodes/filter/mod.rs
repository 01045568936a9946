//! Filters: nodes that reshape one terrain's heights.

pub mod blur;
pub mod clamp;
pub mod invert;
pub mod levels;
pub mod normalize;
pub mod remap;
pub mod sharpen;
pub mod smooth;

use crate::node::Registry;

pub fn register(reg: &mut Registry) {
    reg.register::<blur::Blur>();
    reg.register::<clamp::Clamp>();
    reg.register::<invert::Invert>();
    reg.register::<levels::Levels>();
    reg.register::<normalize::Normalize>();
    reg.register::<remap::Terrace>();
    reg.register::<remap::Curve>();
    reg.register::<remap::Gamma>();
    reg.register::<remap::Quantize>();
    reg.register::<remap::Abs>();
    reg.register::<sharpen::Sharpen>();
    reg.register::<smooth::LaplacianSmooth>();
}
