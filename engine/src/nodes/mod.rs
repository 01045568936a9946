//! Every built-in node type, one file per node, grouped by category.
//! Each category module has a `register` function; `register_all` calls them all.

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
