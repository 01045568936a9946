//! Every built-in node type, one file per node, grouped by category.
//! Each category module has a `register` function; `register_all` calls them all.

pub mod combine;
pub mod erosion;
pub mod filter;
pub mod generators;
pub mod io;
pub mod mask;
pub mod warp;

use crate::node::Registry;

/// Registers every built-in node type.
pub fn register_all(reg: &mut Registry) {
    generators::register(reg);
    combine::register(reg);
    filter::register(reg);
    mask::register(reg);
    warp::register(reg);
    erosion::register(reg);
    io::register(reg);
}
