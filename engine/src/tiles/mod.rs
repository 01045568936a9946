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
//! are in `io::plan` and `io::coarse_file`: only `io` types are serialised.

mod preview;
mod run;
mod stages;
mod store;

pub use crate::io::plan::{Grid, Plan, Task, TileExports};

pub use run::{run_all, run_task, RunOptions, TaskError, TaskOutcome};

use crate::graph::Graph;
use crate::io::graph_file;
use crate::io::heightmap::Format;
pub use crate::io::plan::{Stage, StageKind};
use crate::io::render::Colormap;
use crate::node::{choice_from_name, choice_name, Footprint, Window};
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

/// Refuses a scalar output (a quantity in its own unit, such as a drainage area) written by
/// tiles in an integer format: whole-map builds span its own minimum and maximum, which a
/// tile does not know before every tile is built (the stitched preview, made after them all,
/// does).
fn scalars_in_float(graph: &Graph, exports: &TileExports) -> Result<(), String> {
    let integer: Vec<&str> = exports
        .formats
        .iter()
        .chain(&exports.stitch)
        .map(String::as_str)
        .filter(|f| !matches!(*f, "exr" | "f32"))
        .collect();
    for (name, r) in &graph.outputs {
        if graph.output_kind(r) != Some(crate::node::PortKind::Scalar) {
            continue;
        }
        if let Some(f) = integer.first() {
            return Err(format!("output \"{name}\" is a scalar (a quantity in its own unit): tiled builds write it as exr or f32 only, not {f} (an integer format spans the output's whole-map range, unknown until every tile is built)"));
        }
    }
    Ok(())
}

impl Plan {
    /// Plans `orogen build --tiles` with a whole build's [`Exports`](crate::build::Exports):
    /// `--preset unreal|unity` picks that layout (and its format), `godot` plain EXR tiles,
    /// no preset plain tiles in every format asked. What tiled builds do not write (meshes,
    /// splat maps, `--range data`) is refused with the reason. The CLI and the editor's build
    /// dialog both plan through here.
    pub fn for_build(
        graph: &Graph,
        graph_file: Option<&Path>,
        resolution: usize,
        req: TileRequest,
        exports: &crate::build::Exports,
        stitch: &[Format],
        coarse_size: usize,
    ) -> Result<Self, String> {
        use crate::build::{Preset, Range};
        if !exports.splats.is_empty() {
            return Err("splat maps are not written by tiled builds yet (build them from a whole-map build)".into());
        }
        if exports.range == Range::Data {
            return Err("--range data needs every output's whole-map minimum and maximum before the first tile is written; tiled builds use the graph's height range".into());
        }
        let (layout, formats) = match exports.preset {
            Some(Preset::Unreal) => (Layout::Unreal, vec![Format::Png16]),
            Some(Preset::Unity) => (Layout::Unity, vec![Format::R16]),
            Some(Preset::Godot) => (Layout::Plain, vec![Format::Exr]),
            None => (Layout::Plain, exports.formats.clone()),
        };
        let grid = Grid::new(resolution, layout, req)?;
        let names = |v: &[Format]| v.iter().map(|f| f.name().to_owned()).collect();
        let tile_exports = TileExports {
            layout: choice_name(layout).to_owned(),
            formats: names(&formats),
            stitch: names(stitch),
            preview: exports.preview.map(|m| choice_name(m).to_owned()),
            normal_map: exports
                .normal_map
                .map(|(bits, y)| (bits, choice_name(y).to_owned())),
            mesh: exports.mesh_spec().map(|m| crate::io::plan::TileMesh {
                format: choice_name(m.format).to_owned(),
                step: m.step,
                max_error_m: m.max_error_m,
            }),
        };
        let file = graph_file.map_or_else(
            || PathBuf::from(format!("{}.json", graph.name)),
            Path::to_path_buf,
        );
        Self::new(graph, &file, grid, coarse_size, tile_exports)
    }

    /// Plans a tiled build of `graph` at `grid`. Refuses graphs with an output that cannot be
    /// built (an incomplete node on its chain) or errors, naming them.
    pub fn new(
        graph: &Graph,
        graph_file: &Path,
        grid: Grid,
        coarse_max: usize,
        exports: TileExports,
    ) -> Result<Self, String> {
        let flat = graph.flattened();
        let graph: &Graph = &flat;
        if graph.outputs.is_empty() {
            return Err("the graph declares no outputs".into());
        }
        let errors = graph.errors();
        if !errors.is_empty() {
            return Err(errors
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("\n"));
        }
        let blocked = graph.blocked_outputs();
        if !blocked.is_empty() {
            return Err(format!(
                "{}\na tiled build writes every output (wire the missing inputs)",
                blocked
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("\n")
            ));
        }
        exports.check()?;
        scalars_in_float(graph, &exports)?;
        let n = grid.resolution;
        if coarse_max < 16 {
            return Err(format!("--coarse-size {coarse_max}: expected at least 16"));
        }
        let coarse = n.min(coarse_max);
        let stages = stages_of(graph, n, coarse)?;
        let coarse_resolution = stages
            .iter()
            .any(|s| s.kind != StageKind::Whole)
            .then_some(coarse);
        let built = Graph {
            resolution: n,
            ..graph.clone()
        };
        let text = graph_file::to_string(&built);
        let mut h = blake3::Hasher::new();
        for part in [
            text.as_str(),
            env!("CARGO_PKG_VERSION"),
            &serde_json::to_string(&(grid, &exports, coarse_resolution, &stages))
                .unwrap_or_default(),
        ] {
            h.update(part.as_bytes());
            h.update(&[0]);
        }
        let key = h.finalize().to_hex()[..32].to_owned();
        let tasks = tasks_of(grid, coarse_resolution.is_some(), &stages);
        Ok(Self {
            format: "orogen-plan".into(),
            version: PLAN_VERSION,
            key,
            graph_file: std::path::absolute(graph_file)
                .unwrap_or_else(|_| graph_file.to_path_buf())
                .display()
                .to_string(),
            graph_copy: crate::build::GRAPH_COPY.into(),
            grid,
            coarse_resolution,
            exports,
            stages,
            tasks,
            allow_outside: Vec::new(),
        })
    }

    /// Writes the plan folder: `plan.json`, the graph copy and Slurm scripts.
    pub fn write(&self, dir: &Path, graph: &Graph) -> Result<(), String> {
        let io = |p: &Path, e: std::io::Error| format!("cannot write {}: {e}", p.display());
        std::fs::create_dir_all(dir.join("slurm")).map_err(|e| io(dir, e))?;
        let built = Graph {
            resolution: self.grid.resolution,
            ..graph.clone()
        };
        let copy = dir.join(&self.graph_copy);
        crate::io::atomic::write_bytes_atomic(
            &copy,
            graph_file::to_string_embedded(&built).as_bytes(),
        )
        .map_err(|e| io(&copy, e))?;
        let mut text = serde_json::to_string_pretty(self).map_err(|e| e.to_string())?;
        text.push('\n');
        let p = dir.join(PLAN_FILE);
        crate::io::atomic::write_bytes_atomic(&p, text.as_bytes()).map_err(|e| io(&p, e))?;
        // Work files of other plans in this folder are never used again.
        // `.work` is walked only when it is a real folder, and an entry that is a link is
        // removed itself: nothing behind a planted link is ever deleted.
        let work = dir.join(".work");
        let entries = if crate::io::owned::is_real_dir(&work) {
            std::fs::read_dir(&work).ok()
        } else {
            None
        };
        for e in entries.into_iter().flatten().flatten() {
            if e.file_name() != std::ffi::OsStr::new(&self.key) {
                let _ = crate::io::owned::remove_tree_no_follow(&e.path());
            }
        }
        for (name, body) in self.slurm_scripts(dir) {
            let p = dir.join("slurm").join(name);
            crate::io::atomic::write_bytes_atomic(&p, body.as_bytes()).map_err(|e| io(&p, e))?;
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                let _ = std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755));
            }
        }
        Ok(())
    }

    /// Reads `plan.json` from a plan folder.
    pub fn read(dir: &Path) -> Result<Self, String> {
        let p = dir.join(PLAN_FILE);
        let shown = crate::io::owned::escape_path(&p);
        let text = crate::io::owned::read_state(&p, crate::io::owned::MAX_STATE_BYTES)
            .map_err(|e| format!("cannot read {e}"))?
            .ok_or_else(|| format!("cannot read {shown}: no such file (run orogen plan first)"))?;
        let plan: Self =
            serde_json::from_str(&text).map_err(|e| format!("{shown}: not an Orogen plan: {e}"))?;
        if plan.format != "orogen-plan" || plan.version != PLAN_VERSION {
            return Err(format!(
                "{shown}: expected format \"orogen-plan\" version {PLAN_VERSION}, found \"{}\" version {} (plan it again with this orogen)",
                crate::io::owned::escape(&plan.format),
                plan.version
            ));
        }
        plan.check().map_err(|e| {
            format!(
                "{shown}: {e}; this plan was not written by orogen plan (run orogen plan again)"
            )
        })?;
        Ok(plan)
    }

    /// Checks what a plan read back says against what `orogen plan` writes: the folder may
    /// hold a `plan.json` someone else planted, and its key names folders, its graph copy a
    /// file, its grid allocations.
    fn check(&self) -> Result<(), String> {
        if self.key.len() != 32
            || !self
                .key
                .bytes()
                .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        {
            return Err(format!(
                "key \"{}\": expected 32 lowercase hexadecimal digits",
                crate::io::owned::escape(&self.key)
            ));
        }
        if self.graph_copy != crate::build::GRAPH_COPY {
            return Err(format!(
                "graph_copy \"{}\": expected \"{}\"",
                crate::io::owned::escape(&self.graph_copy),
                crate::build::GRAPH_COPY
            ));
        }
        let g = self.grid;
        let layout = choice_from_name::<Layout>(&self.exports.layout)?;
        if !(2..=crate::io::graph_file::MAX_RESOLUTION as usize).contains(&g.resolution)
            || Grid::new(g.resolution, layout, TileRequest::Size(g.size)).ok() != Some(g)
        {
            return Err(format!(
                "grid {}×{} tiles of {} samples (step {}) over {}²: not a grid orogen plan makes",
                g.tiles_x, g.tiles_y, g.size, g.step, g.resolution
            ));
        }
        if let Some(c) = self.coarse_resolution {
            if !(16..=g.resolution).contains(&c) {
                return Err(format!(
                    "coarse_resolution {c}: expected 16 to {} (the grid's resolution)",
                    g.resolution
                ));
            }
        }
        if self.stages.len() > crate::io::trust::MAX_EXPANDED_NODES
            || self.tasks != tasks_of(g, self.coarse_resolution.is_some(), &self.stages)
        {
            return Err(format!(
                "{} tasks: not the tasks of its {} stages over {} tiles",
                self.tasks.len(),
                self.stages.len(),
                g.count()
            ));
        }
        if let Some(p) = self.allow_outside.iter().find(|p| !p.is_absolute()) {
            return Err(format!(
                "allow_outside \"{}\": expected an absolute path",
                crate::io::owned::escape_path(p)
            ));
        }
        Ok(())
    }

    /// The work folder of this plan inside `dir`.
    #[must_use]
    pub fn work_dir(&self, dir: &Path) -> PathBuf {
        dir.join(".work").join(&self.key)
    }

    /// Slurm batch scripts: the coarse task, each stage as a job array (or one job), the
    /// output tiles as a job array and the stitch, chained by `submit.sh` with
    /// `--dependency=afterok` (on an array: every element).
    fn slurm_scripts(&self, dir: &Path) -> Vec<(&'static str, String)> {
        use std::fmt::Write as _;
        let abs = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
        let plan = shell_quote(&abs.display().to_string());
        let head = |name: &str| {
            format!(
                "#!/bin/bash\n#SBATCH --job-name=orogen-{name}\n#SBATCH --output={plan}/slurm/{name}-%A_%a.log\n\
                 # OROGEN: the orogen binary on the compute nodes (default: orogen on PATH).\nset -euo pipefail\n"
            )
        };
        let run = "exec \"${OROGEN:-orogen}\" run-task";
        let mut v = vec![
            (
                "one.sbatch",
                format!(
                    "{}# OROGEN_TASK: the task (coarse, s<i>.whole, stitch).\n{run} {plan} \"$OROGEN_TASK\"\n",
                    head("one")
                ),
            ),
            (
                "array.sbatch",
                format!(
                    "{}# OROGEN_TASK: the tasks' prefix (s<i>.piece-, s<i>.tile-, tile-); the array index ends it.\n\
                     {run} {plan} \"$OROGEN_TASK$SLURM_ARRAY_TASK_ID\"\n",
                    head("array")
                ),
            ),
        ];
        let mut submit = String::from(
            "#!/bin/bash\n# Submits this plan to Slurm: the coarse task, each global node's stage, one array task\n\
             # per output tile, then the stitch, each waiting for the one before. Extra arguments go to\n\
             # every sbatch (e.g. --partition=…, --cpus-per-task=8). Prints the stitch job's id; wait\n\
             # for it with: squeue -j ID, or sbatch --wait.\nset -euo pipefail\nhere=$(cd \"$(dirname \"$0\")\" && pwd)\n\
             prev=\"\"\n\
             one() { sbatch --parsable ${prev:+--dependency=afterok:$prev} --export=ALL,OROGEN_TASK=\"$1\" \"${@:2}\" \"$here/one.sbatch\"; }\n\
             array() { sbatch --parsable ${prev:+--dependency=afterok:$prev} --array=0-$(($2 - 1)) --export=ALL,OROGEN_TASK=\"$1\" \"${@:3}\" \"$here/array.sbatch\"; }\n",
        );
        if self.coarse_resolution.is_some() {
            submit.push_str("prev=$(one coarse \"$@\")\n");
        }
        let pieces = crate::eval::pieces_of(self.grid.resolution).len();
        let tiles = self.grid.count();
        for (si, st) in self.stages.iter().enumerate() {
            let _ = writeln!(submit, "# s{si}: {} ({:?})", st.node, st.kind);
            let _ = match st.kind {
                StageKind::Pieces => writeln!(
                    submit,
                    "prev=$(array s{si}.piece- {pieces} \"$@\")\nprev=$(array s{si}.tile- {tiles} \"$@\")"
                ),
                StageKind::Whole => writeln!(submit, "prev=$(one s{si}.whole \"$@\")"),
                StageKind::Carried => writeln!(submit, "prev=$(array s{si}.tile- {tiles} \"$@\")"),
            };
        }
        let _ = writeln!(
            submit,
            "prev=$(array tile- {tiles} \"$@\")\nprev=$(one stitch \"$@\")\necho \"$prev\""
        );
        v.push(("submit.sh", submit));
        v
    }
}

/// The version of `plan.json` this build writes and reads.
pub const PLAN_VERSION: u32 = 2;

/// The stages of a tiled build of `graph` (flattened) at `n`²: one per global node its outputs
/// need, in evaluation order. A coarse-to-fine erosion node finer than its base is refined in
/// pieces; any other global node runs once over the whole map at `n`² on its stitched input
/// when its fields there (inputs, outputs, scratch) fit half the default memory budget (three
/// quarters of this machine's memory), and is carried from the coarse pass otherwise.
fn stages_of(graph: &Graph, n: usize, coarse: usize) -> Result<Vec<Stage>, String> {
    let cell = graph.world.cell_size_m(n);
    let needed = crate::eval::Targets::Outputs.node_set(graph);
    let plan = graph.plan().map_err(|d| {
        d.iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    })?;
    let budget = crate::eval::memory::default_budget() / 2;
    let mut stages = Vec::new();
    for &i in plan.waves.iter().flatten() {
        let x = &graph.nodes[i];
        if !needed.contains(&x.id) || x.def.footprint(&x.params, cell, n) != Footprint::Global {
            continue;
        }
        let kind = if crate::eval::refines(x, n, Some(coarse)) {
            StageKind::Pieces
        } else {
            let fields = x.def.spec.inputs.len()
                + x.def.spec.outputs.len()
                + x.def.scratch_fields as usize
                + 2;
            let bytes = crate::eval::memory::field_bytes(n).saturating_mul(fields as u64);
            if bytes.saturating_add(bytes / 5) <= budget {
                StageKind::Whole
            } else {
                StageKind::Carried
            }
        };
        stages.push(Stage {
            node: x.id.clone(),
            kind,
        });
    }
    Ok(stages)
}

/// The tasks of a plan, in an order that runs: the coarse pass, each stage's tasks, the
/// output tiles, the stitch. Dependencies name whole stages (`s0.piece-*`).
fn tasks_of(grid: Grid, coarse: bool, stages: &[Stage]) -> Vec<Task> {
    let n = grid.resolution;
    let task = |id: String, deps: Vec<String>, window: Option<Window>| Task {
        id,
        deps,
        window: window.map(|w| [w.x0, w.y0, w.width, w.height]),
    };
    let mut tasks = Vec::new();
    let mut prev: Vec<String> = Vec::new();
    if coarse {
        tasks.push(task("coarse".into(), Vec::new(), None));
        prev = vec!["coarse".into()];
    }
    let owned = |k: usize| {
        let (i, j) = grid.coords(k);
        grid.owned(i, j)
    };
    for (si, st) in stages.iter().enumerate() {
        let mut deps = prev.clone();
        if coarse && !deps.iter().any(|d| d == "coarse") && st.kind != StageKind::Whole {
            deps.push("coarse".into());
        }
        match st.kind {
            StageKind::Pieces => {
                for (j, p) in crate::eval::pieces_of(n).into_iter().enumerate() {
                    tasks.push(task(format!("s{si}.piece-{j}"), deps.clone(), Some(p)));
                }
                for k in 0..grid.count() {
                    let d = vec![format!("s{si}.piece-*")];
                    tasks.push(task(format!("s{si}.tile-{k}"), d, Some(owned(k))));
                }
                prev = vec![format!("s{si}.tile-*")];
            }
            StageKind::Whole => {
                tasks.push(task(format!("s{si}.whole"), deps, None));
                prev = vec![format!("s{si}.whole")];
            }
            StageKind::Carried => {
                for k in 0..grid.count() {
                    tasks.push(task(
                        format!("s{si}.tile-{k}"),
                        deps.clone(),
                        Some(owned(k)),
                    ));
                }
                prev = vec![format!("s{si}.tile-*")];
            }
        }
    }
    for k in 0..grid.count() {
        let (i, j) = grid.coords(k);
        tasks.push(task(
            format!("tile-{k}"),
            prev.clone(),
            Some(grid.window(i, j)),
        ));
    }
    tasks.push(task("stitch".into(), vec!["tile-*".into()], None));
    tasks
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
    crate::eval::Evaluator::new()
        .evaluate(
            graph,
            &crate::eval::EvalOptions {
                resolution: Some(n),
                window: Some(window),
                coarse: coarse.as_ref(),
                targets: opts.targets.clone(),
                cancel: opts.cancel.clone(),
                progress: opts.progress,
                base_dir: opts.base_dir,
                allow_outside: opts.allow_outside,
                keep_all: opts.keep_all,
                arrays: opts.arrays,
                stored: None,
            },
        )
        .map_err(|d| {
            d.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("\n")
        })
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
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
