//! Everything that touches files: graph files (versioned, with migrations), heightmap
//! formats, the build manifest, and atomic writes. Only `io` types are serialised.

pub mod atomic;
pub mod bundle;
pub mod catalogue;
pub mod coarse_file;
pub mod diff;
pub mod explain;
pub mod geotiff;
pub mod graph_file;
pub mod heightmap;
pub mod manifest;
pub mod mesh;
pub mod mesh_simplify;
pub mod owned;
pub mod plan;
pub mod render;
pub mod subgraphs;
pub mod trust;
