//! Colour: a colour port type (linear RGB, three planes) and the nodes that make and mix
//! colour maps for texturing: `colorize`, `color_blend`, `solid_color`.

pub mod blend;
pub mod colorize;
pub mod palette;
pub mod solid;

use crate::field::Field;
use crate::node::Registry;
use rayon::prelude::*;

pub fn register(reg: &mut Registry) {
    reg.register::<colorize::Colorize>();
    reg.register::<blend::ColorBlend>();
    reg.register::<solid::SolidColor>();
}

/// A colour field of `w × h` whose row `y` is written by `f(y, [r, g, b])`, rows in
/// parallel, the three planes side by side (one pass, no copies).
pub fn color_rows(w: usize, h: usize, f: impl Fn(usize, [&mut [f32]; 3]) + Sync) -> Field {
    let n = w * h;
    let mut data = vec![0.0f32; 3 * n];
    let (r, rest) = data.split_at_mut(n);
    let (g, b) = rest.split_at_mut(n);
    let w1 = w.max(1);
    r.par_chunks_mut(w1)
        .zip(g.par_chunks_mut(w1))
        .zip(b.par_chunks_mut(w1))
        .enumerate()
        .for_each(|(y, ((r, g), b))| f(y, [r, g, b]));
    Field::from_channels(w, h, 3, data).unwrap_or_else(|| Field::filled(w, h, 0.0))
}
