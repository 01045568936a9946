//! Files below the graph documents: raster formats (heightmaps, GeoTIFF, renders, meshes),
//! the build manifest and tiled plans, atomic writes, the limits on what a graph may read
//! (`trust`) and what Orogen reads back from its own folders (`owned`). Nodes read files
//! through this layer; it knows nothing of evaluation or node types. Only `io` and
//! `document` types are serialised.

pub mod atomic;
pub mod geotiff;
pub mod heightmap;
pub mod manifest;
pub mod mesh;
pub mod owned;
pub mod plan;
pub mod render;
pub mod trust;
