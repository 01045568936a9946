//! Orogen: a node-graph procedural terrain engine.
//!
//! A graph file ([`document::graph_file`]) describes typed nodes ([`node`], [`nodes`]) wired into a DAG
//! ([`graph`]). The [`eval::Evaluator`] computes it with content-hash caching and parallel
//! waves; output depends only on (graph, seed, resolution). [`build`] writes the outputs.

pub mod analysis;
pub mod build;
pub mod document;
pub mod eval;
pub mod field;
pub mod graph;
pub mod io;
pub mod node;
pub mod nodes;
pub mod parity;
#[cfg(test)]
mod pinned;
pub mod tiles;

pub use field::{Field, World};
pub use graph::Graph;
