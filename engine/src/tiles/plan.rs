//! Planning a tiled build: the stages of its global nodes (pieces, whole map, carried), its
//! tasks in an order that runs and their dependencies, the batches the local runner runs side
//! by side, `plan.json` written and read back (checked against what planning makes), and the
//! Slurm scripts.

use super::{
    choice_from_name, choice_name, graph_file, Footprint, Format, Graph, Grid, Layout, Path,
    PathBuf, Plan, Stage, StageKind, Task, TileExports, TileRequest, Window, PLAN_FILE,
};

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

/// How a plan stages its global nodes: the size of the coarse pass, and the memory a
/// whole-map stage may hold (`None`: half of three quarters of this machine's memory; see
/// [`Plan::new_with_budget`]).
#[derive(Clone, Copy, Debug)]
pub struct Staging {
    pub coarse_size: usize,
    pub stage_memory: Option<u64>,
}

impl Default for Staging {
    fn default() -> Self {
        Self {
            coarse_size: super::COARSE_MAX,
            stage_memory: None,
        }
    }
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
        staging: Staging,
    ) -> Result<Self, String> {
        use crate::build::{Preset, Range};
        let Staging {
            coarse_size,
            stage_memory,
        } = staging;
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
        Self::new_with_budget(graph, &file, grid, coarse_size, tile_exports, stage_memory)
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
        Self::new_with_budget(graph, graph_file, grid, coarse_max, exports, None)
    }

    /// [`Plan::new`] with the memory a whole-map stage may hold (`None`: half of three
    /// quarters of this machine's memory): a global node whose whole-map fields would hold
    /// more runs tile by tile (water, `normalize`) or is carried from the coarse pass.
    pub fn new_with_budget(
        graph: &Graph,
        graph_file: &Path,
        grid: Grid,
        coarse_max: usize,
        exports: TileExports,
        stage_budget: Option<u64>,
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
        let stages = stages_of(graph, grid, coarse, stage_budget)?;
        let coarse_resolution = stages
            .iter()
            .any(|s| !matches!(s.kind, StageKind::Whole | StageKind::Water))
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
        // The format and version first: a plan an older orogen wrote lacks fields this one
        // needs, and must be named as such rather than as a broken file.
        let head: crate::io::plan::PlanHeader =
            serde_json::from_str(&text).map_err(|e| format!("{shown}: not an Orogen plan: {e}"))?;
        if head.format != "orogen-plan" || head.version != u64::from(PLAN_VERSION) {
            return Err(format!(
                "{shown}: expected format \"orogen-plan\" version {PLAN_VERSION}, found \"{}\" version {} (plan it again with this orogen)",
                crate::io::owned::escape(&head.format),
                head.version
            ));
        }
        let plan: Self =
            serde_json::from_str(&text).map_err(|e| format!("{shown}: not an Orogen plan: {e}"))?;
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
        if !(2..=crate::document::graph_file::MAX_RESOLUTION as usize).contains(&g.resolution)
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
                StageKind::Water => writeln!(submit, "prev=$(one s{si}.water \"$@\")"),
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

/// The stages of a tiled build of `graph` (flattened) over `grid`: one per global node its
/// outputs need, in evaluation order. A coarse-to-fine erosion node finer than its base is
/// refined in pieces; any other global node runs once over the whole map on its stitched input
/// when its fields there (inputs, outputs, scratch) fit half the default memory budget (three
/// quarters of this machine's memory), and is carried from the coarse pass otherwise. A local
/// node whose reach is an eighth of a tile or more (a wide blur, long Laplacian smoothing, sky
/// view) is a whole-map stage too when it fits: every tile would otherwise compute it over its
/// tile and that reach again, up to the whole map per tile (the same bits either way).
fn stages_of(
    graph: &Graph,
    grid: Grid,
    coarse: usize,
    budget: Option<u64>,
) -> Result<Vec<Stage>, String> {
    let n = grid.resolution;
    let cell = graph.world.cell_size_m(n);
    let needed = crate::eval::Targets::Outputs.node_set(graph);
    let plan = graph
        .plan()
        .map_err(|d| crate::graph::diagnostic_lines(&d))?;
    let budget = budget.unwrap_or(crate::eval::memory::default_budget() / 2);
    let mut stages = Vec::new();
    for &i in plan.waves.iter().flatten() {
        let x = &graph.nodes[i];
        if !needed.contains(&x.id) {
            continue;
        }
        let fits = || {
            let fields = x.def.spec.inputs.len()
                + x.def.spec.outputs.len()
                + x.def.scratch_fields as usize
                + 2;
            let bytes = crate::eval::memory::field_bytes(n).saturating_mul(fields as u64);
            bytes.saturating_add(bytes / 5) <= budget
        };
        let kind = match x.def.footprint(&x.params, cell, n) {
            Footprint::Global if crate::eval::refines(x, n, Some(coarse)) => StageKind::Pieces,
            Footprint::Global if fits() => StageKind::Whole,
            Footprint::Global if crate::nodes::water::tiles_exactly(x.def.spec.id, &x.params) => {
                StageKind::Water
            }
            Footprint::Global => StageKind::Carried,
            Footprint::Stencil(r)
                if r.saturating_mul(8) >= grid.size && grid.count() > 1 && fits() =>
            {
                StageKind::Whole
            }
            _ => continue,
        };
        let upstream = graph.upstream(&x.id);
        let after = stages
            .iter()
            .enumerate()
            .filter(|(_, s): &(usize, &Stage)| upstream.contains(&s.node))
            .map(|(j, _)| j)
            .collect();
        stages.push(Stage {
            node: x.id.clone(),
            kind,
            after,
        });
    }
    Ok(stages)
}

/// The tasks of a plan, in an order that runs: the coarse pass, each stage's tasks, the
/// output tiles, the stitch. Dependencies name whole stages (`s0.piece-*`): the coarse pass
/// (for a stage that reads it) and the earlier stages a stage reads.
fn tasks_of(grid: Grid, coarse: bool, stages: &[Stage]) -> Vec<Task> {
    let n = grid.resolution;
    let task = |id: String, deps: Vec<String>, window: Option<Window>| Task {
        id,
        deps,
        window: window.map(|w| [w.x0, w.y0, w.width, w.height]),
    };
    // The tasks that finish stage `j`.
    let last = |j: usize| match stages[j].kind {
        StageKind::Whole => format!("s{j}.whole"),
        StageKind::Water => format!("s{j}.water"),
        StageKind::Pieces | StageKind::Carried => format!("s{j}.tile-*"),
    };
    let mut tasks = Vec::new();
    if coarse {
        tasks.push(task("coarse".into(), Vec::new(), None));
    }
    let owned = |k: usize| {
        let (i, j) = grid.coords(k);
        grid.owned(i, j)
    };
    for (si, st) in stages.iter().enumerate() {
        let mut deps = Vec::new();
        if coarse && !matches!(st.kind, StageKind::Whole | StageKind::Water) {
            deps.push("coarse".to_owned());
        }
        deps.extend(st.after.iter().filter(|&&j| j < si).map(|&j| last(j)));
        match st.kind {
            StageKind::Pieces => {
                for (j, p) in crate::eval::pieces_of(n).into_iter().enumerate() {
                    tasks.push(task(format!("s{si}.piece-{j}"), deps.clone(), Some(p)));
                }
                for k in 0..grid.count() {
                    let d = vec![format!("s{si}.piece-*")];
                    tasks.push(task(format!("s{si}.tile-{k}"), d, Some(owned(k))));
                }
            }
            StageKind::Whole => tasks.push(task(format!("s{si}.whole"), deps, None)),
            StageKind::Water => tasks.push(task(format!("s{si}.water"), deps, None)),
            StageKind::Carried => {
                for k in 0..grid.count() {
                    tasks.push(task(
                        format!("s{si}.tile-{k}"),
                        deps.clone(),
                        Some(owned(k)),
                    ));
                }
            }
        }
    }
    let every: Vec<String> = (0..stages.len()).map(last).collect();
    for k in 0..grid.count() {
        let (i, j) = grid.coords(k);
        tasks.push(task(
            format!("tile-{k}"),
            every.clone(),
            Some(grid.window(i, j)),
        ));
    }
    tasks.push(task("stitch".into(), vec!["tile-*".into()], None));
    tasks
}

/// The tasks of `tasks` (in order) cut into batches that can run side by side: a batch ends
/// where a task depends on one inside it (a dependency `p*` names every task starting `p`).
pub(crate) fn batches(tasks: &[Task]) -> Vec<Vec<&Task>> {
    let matches = |dep: &str, id: &str| match dep.strip_suffix('*') {
        Some(prefix) => id.starts_with(prefix),
        None => dep == id,
    };
    let mut out: Vec<Vec<&Task>> = Vec::new();
    for t in tasks {
        let joins = out
            .last()
            .is_some_and(|b| !b.iter().any(|u| t.deps.iter().any(|d| matches(d, &u.id))));
        match out.last_mut() {
            Some(b) if joins => b.push(t),
            _ => out.push(vec![t]),
        }
    }
    out
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}
