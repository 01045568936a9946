//! Colour: a colour port type (linear RGB, three planes) and the nodes that make and mix
//! colour maps for texturing: `colorize`, `color_blend`, `solid_color`.
//!
//! # A colour is a field with three planes
//! A colour is a `Field` with three planes (`channels() == 3`: R, G, B, linear light, one plane
//! after the other), not a new value type. Everything that moves fields around without looking
//! inside (the cache, evaluation, the windows and crops of tiled and region evaluation, hashing,
//! parity) works on colour unchanged; the few operations that look at rows (resampling, flipping,
//! cropping, downsampling) work plane by plane, and the per-sample ones (`map`, `zip_map`,
//! `min_max`) treat every sample alike. The alternatives cost more: a separate value enum would
//! have touched every signature from `Node::eval` to the editor's caches, and packing RGB into
//! one `f32` (R11G11B10) would have made resampling wrong and 16-bit PNG exports banded. Planes
//! rather than interleaved samples keep each plane a plain row-major grid, processed with the
//! same row kernels as heights.
//!
//! `PortKind::Color` carries the rules: mask → colour is grey, colour → mask is the Rec. 709
//! luminance, and heights and colours never convert implicitly (`Coercion::refusal_hint` says
//! which node to insert). Colours are stored and interpolated linear; files that people look at
//! (PNG, TIFF, RAW16) get the sRGB encoding, float files (EXR, F32) the linear values. Palettes
//! are data (`palettes.json`, sRGB hex as a colour picker shows them); a unit test keeps the
//! `palette` choice's options and the file's entries the same set.

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
