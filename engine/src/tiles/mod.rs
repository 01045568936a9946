//! Tiled, out-of-core builds of worlds larger than one machine's memory, as a plan of tasks
//! that any scheduler can run.
//!
//! A plan ([`Plan`], `plan.json` in its folder) splits an `N × N` world into tiles and lists
//! three kinds of task:
//!
//! - `coarse` — the graph's global nodes (erosion, normalisation: [`Footprint::Global`])
//!   evaluated once over the whole world at a capped resolution ([`COARSE_MAX`]²), kept in
//!   `.work/<key>/coarse.bin`. Absent when the graph has no global node.
//! - `tile-K` — one tile: the graph evaluated over the tile's window only (each node over
//!   what its consumers read plus its footprint, see [`crate::eval::EvalOptions::window`]),
//!   global nodes taking their whole-world change from the coarse task. Writes the tile files
//!   and a record of their hashes.
//! - `stitch` — the whole-map files streamed row by row from the tiles (never the whole map
//!   in memory), one downsampled preview per output, `manifest.json` and the graph copy.
//!
//! Every task reads its inputs from and writes its outputs to the plan folder, each file
//! atomically, and names its work files by the plan's key (a hash of the graph as built and
//! every option): a retried or duplicated task rewrites the same bytes, and a task whose
//! record is present with matching file hashes is done ([`run_task`] skips it), so a killed
//! build resumes where it stopped. `orogen build --tiles` is the local runner (every task in
//! order, in one process); `orogen plan` writes the same plan plus Slurm job-array scripts.
//!
//! # Windows
//! A node declares its footprint (`Node::footprint`): pointwise, a stencil of r cells, or global.
//! A windowed evaluation (`EvalOptions::window`) walks back from the targets: each node gets the
//! union of what its consumers read grown by its footprint (clipped to the map), evaluates over
//! it with `EvalCtx::window` giving the global sample origin, and is cropped to what its
//! consumers need. Generators and warps are written in world or global coordinates (the blur
//! restarts its passes every 256 cells at global multiples; simplex lattice bands are fixed in
//! world space), so a window of a local graph is bit-identical to the whole map: that is the
//! invariant the tiled tests hold, not a tolerance. [`evaluate_region`] (also the editor's region
//! preview) is a tile's evaluation over any window.
//!
//! # Global nodes
//! Global nodes are not given growing halos: an erosion node's halo grows with its work without a
//! useful bound (a river's drainage area is the whole upstream basin). Instead the whole graph is
//! evaluated once at a capped resolution (the coarse task), and a windowed global node returns its
//! tile input plus its coarse change, bilinearly upsampled at the tile's global sample positions,
//! so shared tile borders are identical by construction and memory per tile is bounded. This is
//! the decomposition of the coarse-to-fine erosion (the base process on a coarse grid, detail on
//! top). An erosion node then refines the tile finer than the coarse pass on world-anchored
//! pieces blended by a partition of unity (`eval::pieces`), so tiles still agree on every cell
//! they share (docs/large-worlds.md).
//!
//! Scheduling is left to real schedulers: a plan is a task graph in JSON, every task an idempotent
//! `orogen run-task` on a shared folder, and the local runner is the same tasks in one process.
//! There is no scheduler of our own. The files' types (`plan.json`, task records, `coarse.bin`)
//! are in `io::plan` and `document::coarse_file`: only `io` and `document` types are serialised.

mod plan;
mod preview;
mod run;
mod stages;
mod store;
mod task;

pub use crate::io::plan::{Grid, Plan, Task, TileExports};

pub use run::{run_all, run_task};
pub use task::{RunOptions, TaskError, TaskOutcome};

use crate::document::graph_file;
use crate::graph::Graph;
use crate::io::heightmap::Format;
pub use crate::io::plan::{Stage, StageKind};
use crate::io::render::Colormap;
use crate::node::{choice_from_name, choice_name, Footprint, Window};
pub(crate) use plan::batches;
pub use plan::{Staging, PLAN_VERSION};
use std::path::{Path, PathBuf};

/// The default largest resolution of the coarse (global-node) evaluation (`--coarse-size`).
/// Global nodes see the world at this resolution at most; finer builds add their change,
/// upsampled, to each tile.
pub const COARSE_MAX: usize = 2048;

/// The largest whole-world preview a tiled build writes per output.
pub const PREVIEW_MAX: usize = 2048;

/// The plan file in a plan folder.
pub const PLAN_FILE: &str = "plan.json";

/// How tiles cut the world and are named.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Disjoint tiles `<output>_x<i>_y<j>.<ext>`, `y0` the northern row, in every format asked.
    Plain,
    /// Unreal Engine landscape / World Partition import: `<output>_x<i>_y<j>.png` (16-bit),
    /// neighbours share their border row and column, tile sizes Unreal recommends.
    Unreal,
    /// Unity Terrain Tools: `<output>_<x>_<y>.raw` (RAW16 little-endian, rows south to north,
    /// `y` counted from the south), neighbours share their border, 2ⁿ + 1 samples per tile.
    Unity,
}

crate::impl_choice!(Layout {
    Plain = "plain",
    Unreal = "unreal",
    Unity = "unity",
});

/// How the user asked for tiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TileRequest {
    /// `--tiles AxB`: this many tiles across and down.
    Count(usize, usize),
    /// `--tile-size T`: samples per tile side.
    Size(usize),
}

impl std::str::FromStr for TileRequest {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (a, b) = s
            .split_once(['x', 'X', '×'])
            .ok_or_else(|| format!("--tiles {s}: expected AxB, e.g. 8x8"))?;
        let parse = |v: &str| {
            v.trim()
                .parse::<usize>()
                .ok()
                .filter(|&n| n >= 1)
                .ok_or_else(|| format!("--tiles {s}: \"{v}\" is not a positive whole number"))
        };
        Ok(TileRequest::Count(parse(a)?, parse(b)?))
    }
}

/// Most tiles a plan may have (256×256): a plan's task list, scripts and records grow with the
/// count, so a tile size of one sample on a large world is refused before anything is made.
pub const MAX_TILES: usize = 1 << 16;

impl Grid {
    /// The grid for `layout` or a clear message why the numbers do not fit it.
    pub fn new(resolution: usize, layout: Layout, req: TileRequest) -> Result<Self, String> {
        let grid = Self::new_unbounded(resolution, layout, req)?;
        if grid.tiles_x.saturating_mul(grid.tiles_y) > MAX_TILES {
            let least = resolution.div_ceil(256);
            return Err(match req {
                TileRequest::Count(a, b) => format!(
                    "--tiles {a}x{b}: expected at most 256x256 tiles ({MAX_TILES} in all)"
                ),
                TileRequest::Size(t) => format!(
                    "--tile-size {t}: a {resolution}×{resolution} world would have {}×{} tiles; expected at most {MAX_TILES} tiles (a tile size of at least {least})",
                    grid.tiles_x, grid.tiles_y
                ),
            });
        }
        Ok(grid)
    }

    fn new_unbounded(resolution: usize, layout: Layout, req: TileRequest) -> Result<Self, String> {
        let n = resolution;
        match layout {
            Layout::Plain => {
                let (tx, ty, size) = match req {
                    TileRequest::Count(a, b) if a != b => {
                        return Err(format!(
                            "--tiles {a}x{b}: tiles are square and the world is {n}×{n}; use the same count across and down"
                        ));
                    }
                    TileRequest::Count(a, _) if a > n || n.div_ceil(n.div_ceil(a)) != a => {
                        return Err(format!(
                            "--tiles {a}x{a}: a {n}×{n} world does not cut into {a} equal tiles a side (try --tile-size)"
                        ));
                    }
                    TileRequest::Count(a, _) => (a, a, n.div_ceil(a)),
                    TileRequest::Size(t) if t == 0 || t > n => {
                        return Err(format!(
                            "--tile-size {t}: expected 1 to {n} samples (the world is {n}×{n})"
                        ));
                    }
                    TileRequest::Size(t) => (n.div_ceil(t), n.div_ceil(t), t),
                };
                Ok(Self {
                    resolution: n,
                    tiles_x: tx,
                    tiles_y: ty,
                    step: size,
                    size,
                })
            }
            Layout::Unreal | Layout::Unity => {
                let valid: &[usize] = if layout == Layout::Unreal {
                    &[127, 253, 505, 1009, 2017, 4033, 8129]
                } else {
                    &[33, 65, 129, 257, 513, 1025, 2049, 4097]
                };
                let name = choice_name(layout);
                let (count, size) = match req {
                    TileRequest::Count(a, b) if a == b => {
                        n.saturating_sub(1).is_multiple_of(a).then(|| (a, (n - 1) / a + 1)).unzip()
                    }
                    TileRequest::Count(a, b) => {
                        return Err(format!("--tiles {a}x{b}: {name} tiles of a square world need the same count across and down"))
                    }
                    TileRequest::Size(t) => (t >= 2 && n.saturating_sub(1).is_multiple_of(t - 1))
                        .then(|| ((n - 1) / (t - 1), t))
                        .unzip(),
                };
                let ok = size.filter(|s| valid.contains(s)).zip(count);
                let Some((size, count)) = ok else {
                    let a = match req {
                        TileRequest::Count(a, _) => a,
                        TileRequest::Size(t) => n.div_ceil(t.max(2) - 1).max(1),
                    };
                    let suggest: Vec<String> = valid
                        .iter()
                        .map(|&t| format!("--size {} for tiles of {t}", a * (t - 1) + 1))
                        .collect();
                    return Err(format!(
                        "{name} tiles share their border samples and are {} samples wide, so a world of {a}×{a} tiles has {a}·(tile − 1) + 1 samples a side: {}",
                        valid.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "),
                        suggest.join("; ")
                    ));
                };
                Ok(Self {
                    resolution: n,
                    tiles_x: count,
                    tiles_y: count,
                    step: size - 1,
                    size,
                })
            }
        }
    }

    /// Number of tiles.
    #[must_use]
    pub fn count(&self) -> usize {
        self.tiles_x * self.tiles_y
    }

    /// Tile `k`'s column and row (row 0 is the north).
    #[must_use]
    pub fn coords(&self, k: usize) -> (usize, usize) {
        (k % self.tiles_x, k / self.tiles_x)
    }

    /// The samples tile `(i, j)` covers.
    #[must_use]
    pub fn window(&self, i: usize, j: usize) -> Window {
        let (x0, y0) = (i * self.step, j * self.step);
        Window {
            x0,
            y0,
            width: self.size.min(self.resolution - x0),
            height: self.size.min(self.resolution - y0),
        }
    }

    /// The samples tile `(i, j)` owns in the stitched map: its window without the border it
    /// shares with its eastern and southern neighbours.
    #[must_use]
    pub fn owned(&self, i: usize, j: usize) -> Window {
        let w = self.window(i, j);
        Window {
            width: if i + 1 < self.tiles_x {
                self.step
            } else {
                w.width
            },
            height: if j + 1 < self.tiles_y {
                self.step
            } else {
                w.height
            },
            ..w
        }
    }
}

/// Evaluates `targets` of `graph` over `window` of the `n × n` grid only — the region
/// evaluation a tile uses, for a region preview at build resolution. Nodes that need the whole
/// world are first evaluated over it at `min(n, coarse_max)`², as in a tiled build.
pub fn evaluate_region(
    graph: &Graph,
    n: usize,
    window: Window,
    coarse_max: usize,
    opts: &crate::eval::EvalOptions,
) -> Result<crate::eval::EvalResult, String> {
    let flat = graph.flattened();
    let graph: &Graph = &flat;
    let cell = graph.world.cell_size_m(n);
    let needed = opts.targets.node_set(graph);
    let global = graph.nodes.iter().any(|x| {
        needed.contains(&x.id) && x.def.footprint(&x.params, cell, n) == Footprint::Global
    });
    let coarse = if global {
        Some(crate::eval::Coarse::evaluate(
            graph,
            n.min(coarse_max),
            &opts.targets,
            opts,
        )?)
    } else {
        None
    };
    evaluate_window(graph, n, window, opts, (coarse.as_ref(), None))
}

/// `opts` over `window` of the `n × n` grid, global nodes from the coarse pass or from the
/// stored stages given.
fn evaluate_window(
    graph: &Graph,
    n: usize,
    window: Window,
    opts: &crate::eval::EvalOptions,
    (coarse, stored): (
        Option<&crate::eval::Coarse>,
        Option<&dyn crate::eval::StoredFields>,
    ),
) -> Result<crate::eval::EvalResult, String> {
    crate::eval::Evaluator::new()
        .evaluate(
            graph,
            &crate::eval::EvalOptions {
                resolution: Some(n),
                window: Some(window),
                coarse,
                stored,
                targets: opts.targets.clone(),
                cancel: opts.cancel.clone(),
                progress: opts.progress,
                base_dir: opts.base_dir,
                allow_outside: opts.allow_outside,
                keep_all: opts.keep_all,
                arrays: opts.arrays,
            },
        )
        .map_err(|d| crate::graph::diagnostic_lines(&d))
}

/// [`evaluate_region`] as a tiled build at `n` computes it: every global node the targets need
/// runs in a stage of its own over the whole world — erosion on the world's pieces, water over
/// the whole map or tile by tile — in the plan folder `work` (the caller's; a plan already there
/// for the same graph and size is reused, its finished tasks skipped), and the window is then
/// evaluated from those stages, as an output tile is: the values a build at `n` has there,
/// rivers included. Without a global node this is [`evaluate_region`]. `graph_file` names the
/// graph's file (relative paths in parameters resolve beside it); `coarse` is the build's
/// coarse pass (`--coarse-size`, [`COARSE_MAX`] by default): erosion nodes are refined in pieces
/// above it, and run over the whole map at or below it.
///
/// # Errors
/// The plan's or a task's message, naming the task.
pub fn evaluate_region_as_built(
    graph: &Graph,
    graph_file: Option<&Path>,
    n: usize,
    coarse: usize,
    window: Window,
    work: &Path,
    opts: &crate::eval::EvalOptions,
) -> Result<crate::eval::EvalResult, String> {
    use rayon::prelude::*;
    let flat = graph.flattened();
    let needed = opts.targets.node_set(&flat);
    let cell = graph.world.cell_size_m(n);
    let global = flat.nodes.iter().any(|x| {
        needed.contains(&x.id) && x.def.footprint(&x.params, cell, n) == Footprint::Global
    });
    if !global {
        return evaluate_region(graph, n, window, coarse, opts);
    }
    // The plan is made for the targets: a graph whose outputs are their first ports.
    let mut g = graph.clone();
    if let crate::eval::Targets::Nodes(ids) = &opts.targets {
        g.outputs = ids
            .iter()
            .filter_map(|id| {
                let port = graph.node(id)?.def.spec.outputs.first()?;
                Some(crate::graph::PortRef::new(id.clone(), port.name))
            })
            .enumerate()
            .map(|(k, r)| (format!("t{k}"), r))
            .collect();
    }
    let grid = Grid::new(n, Layout::Plain, TileRequest::Size(n.min(1024)))?;
    let exports = TileExports {
        layout: "plain".into(),
        formats: vec!["f32".into()],
        stitch: Vec::new(),
        preview: None,
        normal_map: None,
        mesh: None,
    };
    let file = graph_file.map_or_else(
        || PathBuf::from(format!("{}.json", g.name)),
        Path::to_path_buf,
    );
    let mut plan = Plan::new(&g, &file, grid, coarse, exports)?;
    plan.allow_outside = opts.allow_outside.to_vec();
    plan.write(work, &g)?;
    let run = RunOptions {
        cancel: opts.cancel.clone(),
        progress: opts.progress,
        cache: None,
        side_by_side: 0,
    };
    // Every task but the output tiles and the stitch: the stages the window reads.
    for batch in plan::batches(&plan.tasks) {
        let stage: Vec<&Task> = batch
            .into_iter()
            .filter(|t| !t.id.starts_with("tile-") && t.id != "stitch")
            .collect();
        let done: Vec<Result<TaskOutcome, TaskError>> = stage
            .par_iter()
            .map(|t| run_task(work, &t.id, &run))
            .collect();
        for (t, r) in stage.iter().zip(done) {
            r.map_err(|e| format!("{}: {e}", t.id))?;
        }
        if opts.cancel.is_cancelled() {
            return Err("cancelled".into());
        }
    }
    let built = Graph { resolution: n, ..g };
    let flat = built.flattened();
    let store = store::Store::new(&plan, &flat, &plan.work_dir(work), plan.stages.len())?;
    evaluate_window(&flat, n, window, opts, (None, Some(&store)))
}

/// [`TileExports`] as the engine's types.
pub(crate) struct Parsed {
    pub layout: Layout,
    pub formats: Vec<Format>,
    pub stitch: Vec<Format>,
    pub preview: Option<Colormap>,
    pub normal_map: Option<(u8, crate::io::render::NormalY)>,
    pub mesh: Option<crate::io::mesh::MeshSpec>,
}

impl Parsed {
    /// The samples a tile task evaluates beyond its tile on each side. Normal maps need the
    /// neighbours' samples at the tile's edge: one more all round. A mesh reaches the first
    /// samples of its east and south neighbours (so meshes meet), whose normals need one more.
    pub(crate) fn margin(&self) -> usize {
        if self.mesh.is_some() {
            2
        } else {
            usize::from(self.normal_map.is_some())
        }
    }
}

impl TileExports {
    /// The layout, formats and colormap as the engine's types.
    pub(crate) fn parsed(&self) -> Result<Parsed, String> {
        let layout = choice_from_name::<Layout>(&self.layout)?;
        let formats = self
            .formats
            .iter()
            .map(|f| choice_from_name::<Format>(f))
            .collect::<Result<Vec<_>, _>>()?;
        let stitch = self
            .stitch
            .iter()
            .map(|f| choice_from_name::<Format>(f))
            .collect::<Result<Vec<_>, _>>()?;
        let preview = self
            .preview
            .as_deref()
            .map(choice_from_name::<Colormap>)
            .transpose()?;
        let normal_map = match &self.normal_map {
            Some((bits @ (8 | 16), y)) => Some((*bits, choice_from_name(y)?)),
            Some((bits, _)) => return Err(format!("normal map bits must be 8 or 16, got {bits}")),
            None => None,
        };
        let mesh = match &self.mesh {
            Some(m) if m.step >= 1 && m.max_error_m.is_none_or(|e| e.is_finite() && e >= 0.0) => {
                Some(crate::io::mesh::MeshSpec {
                    format: choice_from_name(&m.format)?,
                    step: m.step,
                    max_error_m: m.max_error_m,
                })
            }
            Some(m) => {
                return Err(format!(
                    "mesh: step {} and error bound {:?}: expected a step of 1 or more and a finite error of 0 m or more",
                    m.step, m.max_error_m
                ))
            }
            None => None,
        };
        Ok(Parsed {
            layout,
            formats,
            stitch,
            preview,
            normal_map,
            mesh,
        })
    }

    fn check(&self) -> Result<(), String> {
        let Parsed {
            layout,
            formats,
            stitch,
            ..
        } = self.parsed()?;
        if formats.is_empty() && stitch.is_empty() {
            return Err("a tiled build needs a tile format or a stitched format".into());
        }
        if let Some(f) = stitch
            .iter()
            .find(|f| !matches!(f, Format::R16 | Format::F32))
        {
            return Err(format!(
                "--stitch {}: a whole-map file is streamed row by row, so r16 or f32 (PNG, TIFF and EXR tiles are written per tile; GeoTIFF tiles come with a VRT that GDAL opens as one raster)",
                f.name()
            ));
        }
        let want = match layout {
            Layout::Unreal => Some(Format::Png16),
            Layout::Unity => Some(Format::R16),
            Layout::Plain => None,
        };
        if let Some(w) = want {
            if formats != [w] {
                return Err(format!(
                    "{} tiles are {} only",
                    choice_name(layout),
                    w.name()
                ));
            }
        }
        Ok(())
    }
}
