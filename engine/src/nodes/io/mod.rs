//! I/O nodes: reading heightmaps from files.

pub mod import;

use crate::node::Registry;

pub fn register(reg: &mut Registry) {
    reg.register::<import::Import>();
}
