//! The files of a tiled build's plan: `plan.json` (the task graph, see docs/large-worlds.md)
//! and the records tasks leave behind. The logic that makes and runs plans is in `tiles/`.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The tiles of an `N × N` world: tile `(i, j)` starts at `(i·step, j·step)` and is `size`
/// samples wide (less at the east and south edges of a plain layout).
/// A plan file's format and version, read before the rest: a plan an older orogen wrote lacks
/// fields this one needs.
#[derive(Debug, Deserialize)]
pub struct PlanHeader {
    #[serde(default)]
    pub format: String,
    #[serde(default)]
    pub version: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grid {
    pub resolution: usize,
    pub tiles_x: usize,
    pub tiles_y: usize,
    pub step: usize,
    pub size: usize,
}

/// What a tiled build writes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TileExports {
    pub layout: String,
    /// Per-tile heightmap formats (`png16`, `tiff16`, `exr`, `r16`, `f32`).
    pub formats: Vec<String>,
    /// Whole-map files streamed from the tiles (`r16`, `f32`).
    pub stitch: Vec<String>,
    /// Colormap of the whole-world preview per output, if any.
    pub preview: Option<String>,
    /// A tangent-space normal map per height output and tile: (bits 8 or 16, `opengl` or
    /// `directx`), computed with a one-sample margin so tiles meet without a seam.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub normal_map: Option<(u8, String)>,
    /// A mesh per height output and tile (`obj` or `glb`), with a one-sample margin for the
    /// normals; neighbouring tiles' meshes share their border vertices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mesh: Option<TileMesh>,
}

/// Per-tile meshes: format, every `step`-th sample, or an error bound in metres.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TileMesh {
    pub format: String,
    pub step: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_error_m: Option<f32>,
}

/// One task of a plan.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Task {
    pub id: String,
    /// Tasks whose outputs this one reads.
    pub deps: Vec<String>,
    /// A tile task's samples `[x0, y0, width, height]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<[usize; 4]>,
}

/// How a stage computes one global node over the whole world.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StageKind {
    /// A coarse-to-fine erosion node: refined once on each of the world's pieces
    /// (`s<i>.piece-<j>`), then blended into every tile (`s<i>.tile-<k>`).
    Pieces,
    /// Run once over the whole map at the build's resolution, on its stitched input
    /// (`s<i>.whole`): the same bits as the node in a whole-map build of that input.
    Whole,
    /// Its change at the coarse size carried onto every tile (`s<i>.tile-<k>`): for a node
    /// whose whole-map run would not fit the memory budget.
    Carried,
    /// A node run tile by tile (`s<i>.water`): a water node with only the tiles' perimeters
    /// exchanged (Barnes 2016 and 2017), or `normalize` in two passes. The same bits as
    /// [`StageKind::Whole`], holding a tile at a time, for a node whose whole-map run would
    /// not fit the memory budget.
    Water,
}

/// One global node's stage: what every later stage and tile reads it from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stage {
    /// The node's id in the flattened graph.
    pub node: String,
    pub kind: StageKind,
    /// The earlier stages it reads (their nodes are upstream of it): its tasks wait for
    /// those, and stages that do not read each other can run side by side.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub after: Vec<usize>,
}

/// `plan.json`: the work of a tiled build as a task graph.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// Always `"orogen-plan"`.
    pub format: String,
    pub version: u32,
    /// BLAKE3 (hex, 32 digits) of the graph as built, the grid, the exports and this Orogen
    /// version: names the work files, so nothing from another plan is ever reused.
    pub key: String,
    /// The graph file as given (for messages), and its copy in the plan folder.
    pub graph_file: String,
    pub graph_copy: String,
    pub grid: Grid,
    /// Resolution of the coarse task's evaluation; `None` when no node needs the whole map.
    pub coarse_resolution: Option<usize>,
    pub exports: TileExports,
    /// The global nodes' stages, in the order they run (each reads the earlier ones).
    pub stages: Vec<Stage>,
    pub tasks: Vec<Task>,
    /// Folders outside the graph's project its imports may read (the planner's
    /// `--allow-outside`, absolute), so every task reads what the plan's author allowed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow_outside: Vec<std::path::PathBuf>,
}

/// A task's record (`.work/<key>/<task>.json`): the files it wrote with their hashes, and what the stitch needs.
#[derive(Serialize, Deserialize)]
pub struct TileRecord {
    pub key: String,
    /// Files in the plan folder (tile files) or its work folder (stitch sources), relative
    /// to the plan folder, with their BLAKE3 hashes.
    pub files: Vec<(String, String)>,
    /// Per output: minimum and maximum over the samples the tile owns.
    pub range: BTreeMap<String, (f32, f32)>,
    /// Per output: the preview pixels the tile fills `[x0, y0, width, height]`.
    pub preview: BTreeMap<String, [usize; 4]>,
    /// Per output: the tile's error-bounded mesh's numbers.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub mesh: BTreeMap<String, super::manifest::MeshInfo>,
}
