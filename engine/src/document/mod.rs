//! Graph documents, above evaluation: the graph file format (versioned, with migrations),
//! subgraph libraries and their edits, bundles, the semantic diff, the node catalogue, the
//! `explain` report of an evaluation and the coarse-pass file of a tiled build.

pub mod bundle;
pub mod catalogue;
pub mod coarse_file;
pub mod dem;
pub mod diff;
pub mod explain;
pub mod graph_file;
pub mod subgraphs;
