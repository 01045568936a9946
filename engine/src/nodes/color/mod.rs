//! Colour: a colour port type (linear RGB, three planes) and the nodes that make and mix
//! colour maps for texturing: `colorize`, `color_blend`, `solid_color`.

pub mod blend;
pub mod colorize;
pub mod palette;
pub mod solid;

use crate::node::Registry;

pub fn register(reg: &mut Registry) {
    reg.register::<colorize::Colorize>();
    reg.register::<blend::ColorBlend>();
    reg.register::<solid::SolidColor>();
}
