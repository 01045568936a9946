//! The stage tasks of a plan: each global node computed once over the whole world and stored
//! per tile (`tiles::store`), so that later stages and the output tiles read it instead of
//! recomputing it.
//!
//! - **Pieces** (a coarse-to-fine erosion node): `s<i>.piece-<j>` refines piece `j` of the
//!   world's pieces (`eval::pieces`) once, from the node's inputs over the piece's window
//!   (evaluated from the earlier stages) and its base level; `s<i>.tile-<k>` blends the
//!   pieces covering tile `k`'s owned samples onto its input there. Work: the node's inputs
//!   over every piece window and one refinement per piece (1.27× the map's cells at 4096²).
//! - **Whole** (water, `normalize`, any other global node): `s<i>.whole` runs the node over the
//!   whole map at the build's resolution on its input stitched from the earlier stages — the
//!   same bits as the node run whole-map on that input. Memory: the node's whole-map fields.
//! - **Water** (water or `normalize`, a whole-map run that would not fit the memory budget):
//!   `s<i>.water` runs the node tile by tile, the same bits as `s<i>.whole`.
//! - **Carried** (any other whole-map run that would not fit the memory budget):
//!   `s<i>.tile-<k>` carries its change at the coarse size onto tile `k`, as a windowed
//!   evaluation does.

use super::store::{self, Store};
use super::task::{rel, Ctx, TaskError, TaskOutcome};
use super::StageKind;
use crate::document::coarse_file;
use crate::eval::{CoarseNode, EvalOptions, Evaluator, Targets};
use crate::field::Field;
use crate::graph::Graph;
use crate::io::plan::TileRecord as Record;
use crate::node::{Coercion, PortKind, Window};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// One task of a stage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum StageTask {
    Piece(usize),
    Tile(usize),
    Whole,
    Water,
}

/// Deletes stage `si`'s piece files (once every tile has blended them; the local runner then
/// skips the pieces while the tiles' records hold).
pub(super) fn free_pieces(work: &std::path::Path, si: usize) {
    let dir = work.join(format!("s{si}"));
    // Never through a link planted in the stage folder's place.
    if !crate::io::owned::is_real_dir(&dir) {
        return;
    }
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        if name.starts_with("piece-") && name.ends_with(".f32") {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Parses `s<i>.piece-<j>`, `s<i>.tile-<k>`, `s<i>.whole`.
pub(super) fn parse(task: &str) -> Option<(usize, StageTask)> {
    let rest = task.strip_prefix('s')?;
    let (si, what) = rest.split_once('.')?;
    let si = si.parse().ok()?;
    let t = if what == "whole" {
        StageTask::Whole
    } else if what == "water" {
        StageTask::Water
    } else if let Some(j) = what.strip_prefix("piece-") {
        StageTask::Piece(j.parse().ok()?)
    } else {
        StageTask::Tile(what.strip_prefix("tile-")?.parse().ok()?)
    };
    Some((si, t))
}

/// The graph upstream of each refining node at its base resolution, kept for the process:
/// the pieces of one node (run in one process by the local runner) evaluate it once.
fn upstream_memo(plan_key: &str, node: &str) -> Arc<Mutex<crate::eval::UpstreamMemo>> {
    type Memos = Mutex<BTreeMap<(String, String), Arc<Mutex<crate::eval::UpstreamMemo>>>>;
    static MEMOS: std::sync::OnceLock<Memos> = std::sync::OnceLock::new();
    let memos = MEMOS.get_or_init(Mutex::default);
    let Ok(mut m) = memos.lock() else {
        return Arc::default();
    };
    // Only the current plan's memos are worth keeping.
    m.retain(|(k, _), _| k == plan_key);
    Arc::clone(m.entry((plan_key.to_owned(), node.to_owned())).or_default())
}

impl Ctx<'_> {
    /// Runs task `t` of stage `si`.
    pub(super) fn stage(&self, si: usize, t: StageTask) -> Result<TaskOutcome, TaskError> {
        let plan = self.plan;
        let Some(stage) = plan.stages.get(si) else {
            return Err(format!("no stage s{si} in this plan").into());
        };
        let n = plan.grid.resolution;
        let valid = match (stage.kind, t) {
            (StageKind::Pieces, StageTask::Piece(j)) => j < crate::eval::pieces_of(n).len(),
            (StageKind::Pieces | StageKind::Carried, StageTask::Tile(k)) => k < plan.grid.count(),
            (StageKind::Whole, StageTask::Whole) | (StageKind::Water, StageTask::Water) => true,
            _ => false,
        };
        if !valid {
            return Err(format!("stage s{si} ({:?}) has no task {t:?}", stage.kind).into());
        }
        let name = match t {
            StageTask::Piece(j) => format!("s{si}.piece-{j}"),
            StageTask::Tile(k) => format!("s{si}.tile-{k}"),
            StageTask::Whole => format!("s{si}.whole"),
            StageTask::Water => format!("s{si}.water"),
        };
        let rec_path = self.work.join(format!("{name}.json"));
        if super::task::valid_record(self.dir, plan, &rec_path).is_some() {
            return Ok(TaskOutcome::AlreadyDone);
        }
        let flat = self.graph.flattened();
        let gi = flat.index_of(&stage.node).ok_or_else(|| {
            format!(
                "stage s{si} is node \"{}\", which the graph does not have",
                stage.node
            )
        })?;
        let dir = self.work.join(format!("s{si}"));
        crate::io::owned::ensure_dir(&dir)?;
        let store = Store::new(plan, &flat, self.work, si)?;
        // Files the task wrote itself (a tile at a time), with their hashes.
        let mut written = Vec::new();
        let files = match t {
            StageTask::Piece(j) => self.piece(&flat, gi, si, j, &store)?,
            StageTask::Tile(k) if stage.kind == StageKind::Pieces => {
                self.blend(&flat, gi, si, k)?
            }
            StageTask::Tile(k) => self.carried(&flat, gi, si, k, &store)?,
            StageTask::Whole => self.whole(&flat, gi, si, &store)?,
            StageTask::Water => {
                written = self.water(&flat, gi, si, &store)?;
                Vec::new()
            }
        };
        if self.opts.cancel.is_cancelled() {
            return Err("cancelled".into());
        }
        let mut rec = Record {
            key: plan.key.clone(),
            files: Vec::new(),
            range: BTreeMap::new(),
            preview: BTreeMap::new(),
            mesh: BTreeMap::new(),
        };
        for (path, bytes) in files {
            crate::io::atomic::write_bytes_atomic(&path, &bytes)
                .map_err(|e| TaskError::io("write", &path, e))?;
            written.push((path, blake3::hash(&bytes).to_hex().to_string()));
        }
        for (path, hash) in written {
            let name = path
                .strip_prefix(self.work)
                .map_err(|_| "a stage file outside the work folder")?
                .to_string_lossy()
                .into_owned();
            rec.files.push((rel(plan, &name), hash));
        }
        Self::write_record(&rec_path, &rec)?;
        Ok(TaskOutcome::Ran)
    }

    fn stage_opts<'b>(
        &'b self,
        base: Option<&'b std::path::Path>,
        store: &'b Store,
    ) -> EvalOptions<'b> {
        EvalOptions {
            stored: Some(store),
            ..self.eval_opts(base)
        }
    }

    /// Node `gi`'s inputs over `w`, each coerced to its port's kind, evaluated from the earlier
    /// stages.
    fn inputs_over(
        &self,
        flat: &Graph,
        gi: usize,
        w: Window,
        store: &Store,
    ) -> Result<Vec<Option<Arc<Field>>>, TaskError> {
        let node = &flat.nodes[gi];
        let sources: Vec<String> = node
            .inputs
            .iter()
            .flatten()
            .map(|r| r.node.clone())
            .collect();
        if sources.is_empty() {
            return Ok(vec![None; node.inputs.len()]);
        }
        let base = self.base_dir();
        let result = Evaluator::new()
            .with_disk(self.opts.cache.clone())
            .evaluate(
                flat,
                &EvalOptions {
                    window: Some(w),
                    targets: Targets::Nodes(sources),
                    ..self.stage_opts(base.as_deref(), store)
                },
            )
            .map_err(|d| crate::graph::diagnostic_lines(&d))?;
        if let Some((id, e)) = result.failures().first() {
            return Err(format!("node \"{id}\": {e}").into());
        }
        let mut inputs = Vec::with_capacity(node.inputs.len());
        for (port, r) in node.def.spec.inputs.iter().zip(&node.inputs) {
            let Some(r) = r else {
                inputs.push(None);
                continue;
            };
            let missing = || format!("input {} of \"{}\" was not computed", port.name, node.id);
            let f = result.field(flat, r).ok_or_else(missing)?;
            let coerce = flat
                .output_kind(r)
                .and_then(|k| Coercion::between(k, port.kind))
                .ok_or_else(missing)?;
            inputs.push(Some(coerce.apply(&f, &flat.world)));
        }
        Ok(inputs)
    }

    fn coarse_node(&self, id: &str) -> Result<CoarseNode, TaskError> {
        let res = self
            .plan
            .coarse_resolution
            .ok_or("this plan has no coarse pass")?;
        let rec = self.work.join("coarse.json");
        if super::task::valid_record(self.dir, self.plan, &rec).is_none() {
            return Err(format!(
                "this task needs the coarse task's result ({}): run task \"coarse\" first",
                rec.display()
            )
            .into());
        }
        Ok(coarse_file::read_node(
            &self.work.join("coarse.bin"),
            res,
            id,
        )?)
    }

    /// The height output ports of node `gi` and the input each changes (its first height
    /// input): `(output port, input port)`.
    fn height_ports(flat: &Graph, gi: usize) -> Vec<(usize, usize)> {
        let spec = &flat.nodes[gi].def.spec;
        let first = spec.inputs.iter().position(|p| p.kind == PortKind::Height);
        spec.outputs
            .iter()
            .enumerate()
            .filter(|(_, p)| p.kind == PortKind::Height)
            .filter_map(|(k, _)| Some((k, first?)))
            .collect()
    }

    /// `s<i>.piece-<j>`: piece `j` refined, one change per height output, over its window.
    fn piece(
        &self,
        flat: &Graph,
        gi: usize,
        si: usize,
        j: usize,
        store: &Store,
    ) -> Result<Vec<(PathBuf, Vec<u8>)>, TaskError> {
        let n = self.plan.grid.resolution;
        let pw = crate::eval::pieces_of(n)[j];
        let inputs = self.inputs_over(flat, gi, pw, store)?;
        let c = self.coarse_node(&flat.nodes[gi].id)?;
        let memo = upstream_memo(&self.plan.key, &flat.nodes[gi].id);
        let base = self.base_dir();
        let opts = self.stage_opts(base.as_deref(), store);
        let mut bytes = Vec::new();
        for (k, i) in Self::height_ports(flat, gi) {
            let (Some(out), Some(Some(input))) = (c.outputs.get(k), c.inputs.get(i)) else {
                return Err("the coarse pass lacks this node's fields".into());
            };
            let change = Field::zip_map(out, input, |o, i| o - i);
            let delta = Evaluator::refine_piece(flat, gi, n, &opts, &inputs, &change, pw, &memo)
                .map_err(|e| format!("node \"{}\": {e}", flat.nodes[gi].id))?
                .unwrap_or_else(|| {
                    change.resample_bilinear_window(n, (pw.x0, pw.y0, pw.width, pw.height))
                });
            bytes.extend(store::encode(&delta));
        }
        // The input each change applies to, over the window: the blending tasks take it from
        // here rather than evaluating it again (every piece covering a cell holds the same
        // bits there: a windowed evaluation of local nodes is exact).
        for (_, i) in Self::height_ports(flat, gi) {
            let input = inputs
                .get(i)
                .cloned()
                .flatten()
                .ok_or("the node's height input is missing")?;
            bytes.extend(store::encode(&input));
        }
        Ok(vec![(
            self.work
                .join(format!("s{si}"))
                .join(format!("piece-{j}.f32")),
            bytes,
        )])
    }

    /// `s<i>.tile-<k>` of a pieces stage: the pieces covering tile `k`'s owned samples blended
    /// onto the node's input there (taken from the piece that weighs most at each cell); its
    /// other outputs carried from the coarse pass.
    fn blend(
        &self,
        flat: &Graph,
        gi: usize,
        si: usize,
        k: usize,
    ) -> Result<Vec<(PathBuf, Vec<u8>)>, TaskError> {
        let grid = self.plan.grid;
        let n = grid.resolution;
        let (i, j) = grid.coords(k);
        let owned = grid.owned(i, j);
        let c = self.coarse_node(&flat.nodes[gi].id)?;
        let heights = Self::height_ports(flat, gi);
        let cells = owned.width * owned.height;
        let mut inputs: Vec<Vec<f32>> = vec![vec![0.0; cells]; heights.len()];
        let mut best = vec![0.0f32; cells];
        let mut deltas: Vec<Vec<f32>> = vec![vec![0.0; cells]; heights.len()];
        for (pj, piece, pw) in crate::eval::pieces_covering(owned, n) {
            let path = self
                .work
                .join(format!("s{si}"))
                .join(format!("piece-{pj}.f32"));
            // Each height output's change, then the input it applies to.
            let plane = pw.width * pw.height;
            let size = plane * 4 * 2 * heights.len();
            let raw = crate::io::owned::read_regular(&path, size as u64).map_err(|e| {
                format!("{e} (stage s{si}'s piece {pj}: run task s{si}.piece-{pj} first)")
            })?;
            if raw.len() != size {
                return Err(format!(
                    "{} is not the piece stage s{si} writes (run it again)",
                    path.display()
                )
                .into());
            }
            let values: Vec<f32> = raw
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect();
            for (h, acc) in deltas.iter_mut().enumerate() {
                crate::eval::blend_piece(acc, owned, piece, pw, &values[h * plane..][..plane], n);
            }
            // The input where this piece weighs most so far (any piece covering a cell holds
            // the same input there; this picks one that covers it).
            let input = &values[heights.len() * plane..];
            let (x0, x1, y0, y1) = pw.overlap(&owned);
            for y in y0..y1 {
                let wy = crate::eval::piece_weight(piece.ky, y, n);
                for x in x0..x1 {
                    let w = wy * crate::eval::piece_weight(piece.kx, x, n);
                    let at = (y - owned.y0) * owned.width + (x - owned.x0);
                    if w > best[at] {
                        best[at] = w;
                        let src = (y - pw.y0) * pw.width + (x - pw.x0);
                        for (h, inp) in inputs.iter_mut().enumerate() {
                            inp[at] = input[h * plane + src];
                        }
                    }
                }
            }
        }
        if best.iter().any(|&w| w <= 0.0) {
            return Err(format!("internal error: tile {k} is not covered by its pieces").into());
        }
        let mut files = Vec::new();
        let up = |f: &Field| {
            f.resample_bilinear_window(n, (owned.x0, owned.y0, owned.width, owned.height))
        };
        for (port, out) in c.outputs.iter().enumerate() {
            let field = match heights.iter().position(|&(k, _)| k == port) {
                Some(h) => {
                    let d = &deltas[h];
                    let data = inputs[h].iter().zip(d).map(|(t, d)| t + d).collect();
                    Field::from_vec(owned.width, owned.height, data).ok_or("size mismatch")?
                }
                None => up(out),
            };
            files.push((
                store::tile_file(self.work, si, k, port),
                store::encode(&field),
            ));
        }
        Ok(files)
    }

    /// `s<i>.tile-<k>` of a carried stage: the node's coarse change carried onto tile `k`'s
    /// owned samples, as a windowed evaluation does.
    fn carried(
        &self,
        flat: &Graph,
        gi: usize,
        si: usize,
        k: usize,
        store: &Store,
    ) -> Result<Vec<(PathBuf, Vec<u8>)>, TaskError> {
        let grid = self.plan.grid;
        let (i, j) = grid.coords(k);
        let owned = grid.owned(i, j);
        let id = flat.nodes[gi].id.clone();
        let c = self.coarse_node(&id)?;
        let coarse = crate::eval::Coarse {
            resolution: c.outputs.first().map_or(0, |f| f.width()),
            nodes: BTreeMap::from([(id.clone(), c)]),
        };
        let base = self.base_dir();
        let fields = self.node_fields(
            flat,
            &id,
            &EvalOptions {
                window: Some(owned),
                coarse: Some(&coarse),
                targets: Targets::Nodes(vec![id.clone()]),
                ..self.stage_opts(base.as_deref(), store)
            },
        )?;
        Ok(fields
            .iter()
            .enumerate()
            .map(|(port, f)| (store::tile_file(self.work, si, k, port), store::encode(f)))
            .collect())
    }

    /// Node `id`'s fields, evaluated with `opts` through the run's disk cache, or why not.
    fn node_fields(
        &self,
        flat: &Graph,
        id: &str,
        opts: &EvalOptions,
    ) -> Result<crate::eval::NodeFields, TaskError> {
        let result = Evaluator::new()
            .with_disk(self.opts.cache.clone())
            .evaluate(flat, opts)
            .map_err(|d| crate::graph::diagnostic_lines(&d))?;
        let fields = result.fields.get(id).cloned();
        fields.ok_or_else(|| {
            format!(
                "node \"{id}\" was not computed: {:?}",
                result.status.get(id)
            )
            .into()
        })
    }

    /// `s<i>.whole`: the node over the whole map on its stitched input, cut into the tiles'
    /// owned samples.
    fn whole(
        &self,
        flat: &Graph,
        gi: usize,
        si: usize,
        store: &Store,
    ) -> Result<Vec<(PathBuf, Vec<u8>)>, TaskError> {
        let id = flat.nodes[gi].id.clone();
        let base = self.base_dir();
        let fields = self.node_fields(
            flat,
            &id,
            &EvalOptions {
                targets: Targets::Nodes(vec![id.clone()]),
                ..self.stage_opts(base.as_deref(), store)
            },
        )?;
        let grid = self.plan.grid;
        let full = Window::full(grid.resolution);
        let mut files = Vec::new();
        for k in 0..grid.count() {
            let (i, j) = grid.coords(k);
            let owned = grid.owned(i, j);
            for (port, f) in fields.iter().enumerate() {
                files.push((
                    store::tile_file(self.work, si, k, port),
                    store::encode(&full.crop(f, &owned)),
                ));
            }
        }
        Ok(files)
    }

    /// `s<i>.water`: the node run tile by tile (a water node with only the tiles' perimeters
    /// exchanged, `nodes::water::tiled`; `normalize` in two passes), its outputs written tile
    /// by tile: the bits of `s<i>.whole`,
    /// holding a few fields of one tile (per thread) and the perimeters.
    fn water(
        &self,
        flat: &Graph,
        gi: usize,
        si: usize,
        store: &Store,
    ) -> Result<Vec<(PathBuf, String)>, TaskError> {
        use crate::nodes::water::{self, tiled};
        let grid = self.plan.grid;
        let n = grid.resolution;
        let tiling = tiled::Tiling {
            n,
            xs: (0..grid.tiles_x)
                .map(|i| grid.owned(i, 0).x0)
                .chain([n])
                .collect(),
            ys: (0..grid.tiles_y)
                .map(|j| grid.owned(0, j).y0)
                .chain([n])
                .collect(),
        };
        let node = &flat.nodes[gi];
        let dir = self.work.join(format!("s{si}")).join("water");
        crate::io::owned::ensure_dir(&dir)?;
        let scratch = tiled::Scratch::in_folder(dir.clone());
        let terrain = node
            .def
            .spec
            .inputs
            .iter()
            .position(|p| p.kind == PortKind::Height)
            .ok_or("the node has no terrain input")?;
        let rain = node.def.input_index("rain");
        let read = |w: Window| -> Result<(Vec<f32>, Option<Vec<f32>>), String> {
            let inputs = self
                .inputs_over(flat, gi, w, store)
                .map_err(|e| e.to_string())?;
            let z = inputs
                .get(terrain)
                .cloned()
                .flatten()
                .ok_or("the node's terrain input is not connected")?;
            let rain = rain
                .and_then(|r| inputs.get(r).cloned().flatten())
                .map(|f| f.data().to_vec());
            Ok((z.data().to_vec(), rain))
        };
        let cell = flat.world.cell_size_m(n);
        let cancel = self.opts.cancel.clone();
        let cancelled = || cancel.is_cancelled();
        let run = water::TileRun {
            tiling: &tiling,
            scratch: &scratch,
            read: &read,
            values: &node.params,
            cell_m: cell,
            world: flat.world,
            cancelled: &cancelled,
        };
        let mut written = Vec::new();
        let result = water::run_tiled(node.def.spec.id, &run, &mut |k, fields| {
            for (port, f) in fields.iter().enumerate() {
                let path = store::tile_file(self.work, si, k, port);
                let bytes = store::encode(f);
                crate::io::atomic::write_bytes_atomic(&path, &bytes)
                    .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
                written.push((path, blake3::hash(&bytes).to_hex().to_string()));
            }
            Ok(())
        });
        scratch.clear();
        let _ = std::fs::remove_dir(&dir);
        result.map_err(|e| format!("node \"{}\": {e}", node.id))?;
        Ok(written)
    }
}
