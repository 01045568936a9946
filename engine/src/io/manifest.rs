//! The build manifest (`manifest.json`): what a build wrote, from what, with hashes and timings.

use serde::Serialize;
use std::collections::BTreeMap;

/// Top level of `manifest.json`.
#[derive(Debug, Serialize)]
pub struct Manifest {
    pub orogen_version: String,
    /// The graph's name, file, and the copy written next to the outputs with its BLAKE3 hash:
    /// the graph as it was built (after `--set`, `--seed`, at the built resolution).
    pub graph: GraphInfo,
    pub seed: u64,
    /// The graph parameters' values as built (after `--param`), by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub parameters: BTreeMap<String, serde_json::Value>,
    pub resolution: usize,
    pub world: WorldInfo,
    /// Heightmap formats written for every output.
    pub formats: Vec<String>,
    /// Engine preset and the numbers to enter in the engine, if one was chosen.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preset: Option<serde_json::Value>,
    /// A tiled build's layout, tile counts and sizes, coarse resolution and plan key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tiling: Option<serde_json::Value>,
    pub outputs: Vec<OutputEntry>,
    /// A tiled build's tiles: every output's tile files with their world extents and hashes.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tiles: Vec<TileEntry>,
    /// Every file written, with its role and BLAKE3 hash.
    pub files: Vec<FileEntry>,
    /// Failed, incomplete or skipped nodes with their messages.
    pub errors: BTreeMap<String, String>,
    /// Wall time per computed node in milliseconds (varies from run to run).
    pub timings_ms: BTreeMap<String, f64>,
    /// What the disk cache did in this build (absent when the build ran without one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache: Option<CacheInfo>,
}

/// The disk cache in a build: which nodes were computed, read back, or stored.
#[derive(Debug, Serialize)]
pub struct CacheInfo {
    /// The cache folder.
    pub dir: String,
    /// Nodes computed in this build.
    pub computed: Vec<String>,
    /// Nodes whose result was read from the cache.
    pub read: Vec<String>,
    /// Computed nodes whose result was written to the cache (the others compute faster than
    /// they would read back).
    pub stored: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct GraphInfo {
    pub name: String,
    /// The graph file as given to the build (empty when built from memory, e.g. unsaved work
    /// in the editor).
    pub file: String,
    /// The copy of the graph exactly as built, in the build folder (`graph.json`).
    pub copy: String,
    /// BLAKE3 of that copy's bytes.
    pub hash: String,
}

#[derive(Debug, Serialize)]
pub struct WorldInfo {
    pub size_m: f64,
    pub height_min_m: f64,
    pub height_max_m: f64,
    pub cell_size_m: f64,
}

/// One written output.
#[derive(Debug, Serialize)]
pub struct OutputEntry {
    pub name: String,
    /// `node.port` it comes from.
    pub source: String,
    /// `height` or `mask`.
    pub kind: String,
    pub file: String,
    pub width: usize,
    pub height: usize,
    pub min: f32,
    pub max: f32,
    /// Metres mapped to 0 and to the top value (65535) in integer formats; float formats store metres.
    pub range_m: [f64; 2],
    /// BLAKE3 of the first heightmap file's bytes, hex.
    pub hash: String,
    /// A mesh simplified to an error bound (`--mesh-error-m`): what it measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mesh: Option<MeshInfo>,
}

/// An error-bounded mesh's numbers (`io::mesh::simplify`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct MeshInfo {
    pub triangles: usize,
    /// The full grid's triangles, for comparison.
    pub full_triangles: usize,
    /// The largest |mesh − heightmap| at the heightmap's samples, metres.
    pub max_error_m: f32,
}

/// One written file.
#[derive(Debug, Serialize)]
pub struct FileEntry {
    pub file: String,
    /// `png16`, `exr`, `r16`, `f32`, `tiff16`, `preview`, `normal map`, `mesh`, `splat map` or `graph`.
    pub role: String,
    /// BLAKE3 of the file's bytes, hex.
    pub hash: String,
}

/// One tile file of a tiled build.
#[derive(Debug, Serialize)]
pub struct TileEntry {
    pub output: String,
    pub file: String,
    /// The tile's column and row in its layout's naming (Unity counts rows from the south).
    pub x: usize,
    pub y: usize,
    /// The samples it covers in the whole map: `[x0, y0, width, height]`, row 0 the north.
    pub window: [usize; 4],
    /// The world rectangle of those samples' cells in metres: `[x0, y0, x1, y1]` from the
    /// north-west corner.
    pub extent_m: [f64; 4],
    /// BLAKE3 of the file's bytes, hex.
    pub hash: String,
}
