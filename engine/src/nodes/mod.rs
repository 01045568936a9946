//! Every built-in node type, one file per node, grouped by category.
//! Each category module has a `register` function; `register_all` calls them all.
//!
//! # Units
//! Parameters are in world units (metres) or relative units (fractions of the world size or of
//! the height range), never pixels, so any resolution shows the same terrain. Filters and
//! combiners that are naturally defined on normalised values (multiply, screen, terrace, curve,
//! gamma…) work on heights relative to the graph's height range,
//! `r = (h − height_min_m) / (height_max_m − height_min_m)`, and map back to metres; lengths (blur
//! radius, warp amplitude, slope) are in metres with the real cell size. That keeps every
//! parameter meaningful whatever the world's height range and resolution.

pub mod color;
pub mod combine;
pub mod erosion;
pub mod filter;
pub mod generators;
pub mod io;
pub mod mask;
pub mod warp;
pub mod water;

use crate::node::Registry;
use std::sync::OnceLock;

impl Registry {
    /// The registry of every built-in node, built once.
    #[must_use]
    pub fn builtin() -> &'static Registry {
        static REG: OnceLock<Registry> = OnceLock::new();
        REG.get_or_init(|| {
            let mut reg = Registry::new();
            register_all(&mut reg);
            reg.finish();
            reg
        })
    }
}

/// Registers every built-in node type.
pub fn register_all(reg: &mut Registry) {
    generators::register(reg);
    combine::register(reg);
    filter::register(reg);
    mask::register(reg);
    warp::register(reg);
    erosion::register(reg);
    water::register(reg);
    color::register(reg);
    io::register(reg);
}
