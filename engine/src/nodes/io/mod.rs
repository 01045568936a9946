//! I/O nodes: reading heightmaps from files or from arrays the caller supplies; a graph's
//! inputs when it is used as a subgraph.

pub mod array_input;
pub mod graph_input;
pub mod import;

use crate::node::Registry;

pub fn register(reg: &mut Registry) {
    reg.register::<import::Import>();
    reg.register::<array_input::ArrayInput>();
    reg.register::<graph_input::GraphInput>();
    reg.register::<graph_input::GraphInputMask>();
    reg.register::<graph_input::GraphInputColor>();
    reg.register::<graph_input::GraphInputScalar>();
}
