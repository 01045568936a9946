//! Running a plan's tasks: each reads its inputs from the plan folder and writes its outputs
//! there atomically, and a task whose record is present with matching hashes is skipped.

use super::preview::preview_patch;
use super::task::{hash_file, rel, valid_record, Ctx, RunOptions, TaskError, TaskOutcome};
use super::{Grid, Layout, Parsed, Plan};
use crate::document::coarse_file;
use crate::eval::{Coarse, EvalOptions, Evaluator, Targets};
use crate::field::Field;
use crate::io::atomic::{write_atomic, write_bytes_atomic};
use crate::io::heightmap::{self, Format};
use crate::io::manifest::{FileEntry, GraphInfo, Manifest, OutputEntry, TileEntry, WorldInfo};
use crate::io::plan::TileRecord as Record;
use crate::io::render;
use crate::node::{choice_name, PortKind, Window};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// Runs every task of the plan in `dir`, skipping those already done: tasks that do not
/// depend on each other (the pieces of a stage, its tiles, stages that do not read each other,
/// the output tiles) side by side on the thread pool, the rest in order. Calls `each` after
/// every task, in the plan's order, with its id, outcome and wall time.
pub fn run_all(
    dir: &Path,
    opts: &RunOptions,
    mut each: impl FnMut(&str, TaskOutcome, std::time::Duration),
) -> Result<(), TaskError> {
    use rayon::prelude::*;
    let plan = Plan::read(dir)?;
    let work = plan.work_dir(dir);
    // Whether every tile of pieces stage `si` is blended: its pieces are then not needed.
    let blended = |si: usize| {
        (0..plan.grid.count())
            .all(|k| valid_record(dir, &plan, &work.join(format!("s{si}.tile-{k}.json"))).is_some())
    };
    let mut skip: BTreeMap<usize, bool> = BTreeMap::new();
    for batch in super::batches(&plan.tasks) {
        for t in &batch {
            if let Some((si, super::stages::StageTask::Piece(_))) = super::stages::parse(&t.id) {
                skip.entry(si).or_insert_with(|| blended(si));
            }
        }
        // The output tiles are what holds a tile's worth of every local node; pieces, stage
        // tiles and water passes hold a few fields of a tile (or of a piece) and run freely.
        let heavy = batch.iter().any(|t| t.id.starts_with("tile-"));
        let group = if opts.side_by_side == 0 || !heavy {
            batch.len().max(1)
        } else {
            opts.side_by_side
        };
        let done: Vec<(&str, Result<TaskOutcome, TaskError>, std::time::Duration)> = batch
            .chunks(group)
            .flat_map(|chunk| {
                chunk
                    .par_iter()
                    .map(|t| {
                        let start = std::time::Instant::now();
                        if let Some((si, super::stages::StageTask::Piece(_))) =
                            super::stages::parse(&t.id)
                        {
                            if skip.get(&si) == Some(&true) {
                                return (
                                    t.id.as_str(),
                                    Ok(TaskOutcome::AlreadyDone),
                                    start.elapsed(),
                                );
                            }
                        }
                        (t.id.as_str(), run_task(dir, &t.id, opts), start.elapsed())
                    })
                    .collect::<Vec<_>>()
            })
            .collect();
        let mut finished = Vec::new();
        for (id, outcome, took) in done {
            each(id, outcome?, took);
            if let Some((si, super::stages::StageTask::Tile(_))) = super::stages::parse(id) {
                finished.push(si);
            }
        }
        // A pieces stage's pieces are read only by its tiles: once every tile is blended,
        // their files (1.27 × the world's cells, twice per height output) go.
        finished.dedup();
        for si in finished {
            let is_pieces = plan
                .stages
                .get(si)
                .is_some_and(|s| s.kind == super::StageKind::Pieces);
            if is_pieces && blended(si) {
                super::stages::free_pieces(&work, si);
                skip.insert(si, true);
            }
        }
    }
    Ok(())
}

/// Runs one task (`coarse`, `tile-K` or `stitch`) of the plan in `dir`.
pub fn run_task(dir: &Path, task: &str, opts: &RunOptions) -> Result<TaskOutcome, TaskError> {
    let plan = Plan::read(dir)?;
    let copy = dir.join(&plan.graph_copy);
    let graph = crate::document::graph_file::load_file(&copy).map_err(|d| d.to_string())?;
    let work = plan.work_dir(dir);
    // `.work` and the plan's own folder in it must be real folders: a link planted in their
    // place would make the task write outside the plan folder.
    crate::io::owned::ensure_dir(&dir.join(".work"))?;
    crate::io::owned::ensure_dir(&work)?;
    let ctx = Ctx {
        dir,
        plan: &plan,
        graph: &graph,
        work: &work,
        opts,
    };
    if task == "coarse" {
        return ctx.coarse();
    }
    if task == "stitch" {
        return ctx.stitch();
    }
    if let Some((si, t)) = super::stages::parse(task) {
        return ctx.stage(si, t);
    }
    let k = task
        .strip_prefix("tile-")
        .and_then(|k| k.parse::<usize>().ok())
        .filter(|&k| k < plan.grid.count())
        .ok_or_else(|| {
            format!(
                "{}: no task \"{}\" (tasks: coarse, s<i>.piece-<j> | s<i>.tile-<k> | s<i>.whole | s<i>.water for each stage, tile-0 … tile-{}, stitch)",
                dir.join(super::PLAN_FILE).display(),
                crate::io::owned::escape(task),
                plan.grid.count() - 1
            )
        })?;
    ctx.tile(k)
}

impl Ctx<'_> {
    pub(super) fn base_dir(&self) -> Option<PathBuf> {
        Path::new(&self.plan.graph_file)
            .parent()
            .map(Path::to_path_buf)
    }

    pub(super) fn eval_opts<'b>(&'b self, base: Option<&'b Path>) -> EvalOptions<'b> {
        EvalOptions {
            resolution: Some(self.plan.grid.resolution),
            targets: Targets::Outputs,
            cancel: self.opts.cancel.clone(),
            progress: self.opts.progress,
            base_dir: base,
            allow_outside: &self.plan.allow_outside,
            ..EvalOptions::default()
        }
    }

    fn coarse(&self) -> Result<TaskOutcome, TaskError> {
        let Some(res) = self.plan.coarse_resolution else {
            return Ok(TaskOutcome::AlreadyDone);
        };
        let rec_path = self.work.join("coarse.json");
        if valid_record(self.dir, self.plan, &rec_path).is_some() {
            return Ok(TaskOutcome::AlreadyDone);
        }
        let base = self.base_dir();
        let coarse = Coarse::evaluate_with(
            self.graph,
            res,
            &Targets::Outputs,
            &self.eval_opts(base.as_deref()),
            self.opts.cache.clone(),
        )?;
        let path = self.work.join("coarse.bin");
        coarse_file::write(&path, &coarse).map_err(|e| TaskError::io("write", &path, e))?;
        let hash = hash_file(&path).ok_or_else(|| format!("cannot read {}", path.display()))?;
        Self::write_record(
            &rec_path,
            &Record {
                key: self.plan.key.clone(),
                files: vec![(rel(self.plan, "coarse.bin"), hash)],
                range: BTreeMap::new(),
                preview: BTreeMap::new(),
                mesh: BTreeMap::new(),
            },
        )?;
        Ok(TaskOutcome::Ran)
    }

    pub(super) fn write_record(path: &Path, rec: &Record) -> Result<(), TaskError> {
        let text = serde_json::to_vec(rec).map_err(|e| e.to_string())?;
        write_bytes_atomic(path, &text).map_err(|e| TaskError::io("write", path, e))
    }

    fn tile(&self, k: usize) -> Result<TaskOutcome, TaskError> {
        let rec_path = self.work.join(format!("tile-{k}.json"));
        if valid_record(self.dir, self.plan, &rec_path).is_some() {
            return Ok(TaskOutcome::AlreadyDone);
        }
        let parsed = self.plan.exports.parsed()?;
        let grid = self.plan.grid;
        let (i, j) = grid.coords(k);
        let tile = grid.window(i, j);
        let owned = grid.owned(i, j);
        let w = tile.expand(parsed.margin(), grid.resolution);
        let Parsed {
            layout,
            formats,
            stitch,
            normal_map,
            mesh,
            ..
        } = parsed;
        let eval = self.evaluate_tile(k, w)?;
        let tiles_dir = self.dir.join("tiles");
        crate::io::owned::ensure_dir(&tiles_dir)?;
        let mut rec = Record {
            key: self.plan.key.clone(),
            files: Vec::new(),
            range: BTreeMap::new(),
            preview: BTreeMap::new(),
            mesh: BTreeMap::new(),
        };
        let mut meshes = BTreeMap::new();
        let mut put = |path: PathBuf, relname: String, bytes: &[u8]| -> Result<(), TaskError> {
            write_bytes_atomic(&path, bytes).map_err(|e| TaskError::io("write", &path, e))?;
            rec.files
                .push((relname, blake3::hash(bytes).to_hex().to_string()));
            Ok(())
        };
        let mut ranges = BTreeMap::new();
        let mut previews = BTreeMap::new();
        let nodata = self
            .graph
            .nodata
            .as_ref()
            .and_then(|r| eval.field(self.graph, r));
        let nodata = nodata.map(|m| w.crop(&m, &tile));
        for (name, r) in &self.graph.outputs {
            let field = eval.field(self.graph, r).ok_or_else(|| {
                format!(
                    "tile-{k}: output \"{name}\" was not computed: {:?}",
                    eval.status.get(&r.node)
                )
            })?;
            let kind = self.graph.output_kind(r).unwrap_or(PortKind::Height);
            let frame =
                crate::build::output_frame(self.graph, kind, crate::build::Range::Graph, &field);
            if let (Some((bits, y)), PortKind::Height) = (normal_map, kind) {
                let cell = self.graph.world.cell_size_m(grid.resolution);
                let n = render::normals(&field, cell, y);
                let (dx, dy) = (tile.x0 - w.x0, tile.y0 - w.y0);
                let mine: Vec<[f32; 3]> = (0..tile.height)
                    .flat_map(|r| {
                        let at = (dy + r) * w.width + dx;
                        n[at..at + tile.width].iter().copied()
                    })
                    .collect();
                let file = normal_file(layout, grid, name, i, j);
                let bytes = crate::build::encode_normal_png(tile.width, tile.height, &mine, bits)
                    .map_err(|e| format!("{file}: {e}"))?;
                put(tiles_dir.join(&file), format!("tiles/{file}"), &bytes)?;
            }
            if let (Some(spec), PortKind::Height) = (mesh, kind) {
                let cell = self.graph.world.cell_size_m(grid.resolution);
                let m = mesh_window(grid, i, j);
                let part = [m.x0 - w.x0, m.y0 - w.y0, m.width, m.height];
                let (bytes, info) =
                    crate::io::mesh::mesh_file(&field, part, (m.x0, m.y0), cell, spec);
                let file = named_file(layout, grid, name, i, j, spec.extension());
                put(tiles_dir.join(&file), format!("tiles/{file}"), &bytes)?;
                if let Some(info) = info {
                    meshes.insert(name.clone(), info);
                }
            }
            let field = w.crop(&field, &tile);
            let w = tile;
            for &f in &formats {
                let file = tile_file(layout, grid, name, i, j, f);
                let bytes = if layout == Layout::Unity {
                    heightmap::encode(&field.flipped_vertically(), &frame, f)
                } else if f == Format::GeoTiff {
                    // Placed where the tile lies in the world's frame (see the VRT).
                    heightmap::encode_geotiff(&field, &self.geo_frame(w.x0, w.y0), nodata.as_ref())
                } else {
                    heightmap::encode(&field, &frame, f)
                }
                .map_err(|e| format!("{file}: {e}"))?;
                put(tiles_dir.join(&file), format!("tiles/{file}"), &bytes)?;
            }
            let mine = w.crop(&field, &owned);
            if let Some(mm) = mine.min_max() {
                ranges.insert(name.clone(), mm);
            }
            for &f in &stitch {
                let file = format!("tile-{k}.{name}.{}", f.extension());
                let bytes =
                    heightmap::encode(&mine, &frame, f).map_err(|e| format!("{file}: {e}"))?;
                put(self.work.join(&file), rel(self.plan, &file), &bytes)?;
            }
            if self.plan.exports.preview.is_some() {
                let (rect, patch) = preview_patch(grid, owned, &mine);
                let file = format!("tile-{k}.{name}.preview");
                let bytes: Vec<u8> = patch.iter().flat_map(|v| v.to_le_bytes()).collect();
                put(self.work.join(&file), rel(self.plan, &file), &bytes)?;
                previews.insert(name.clone(), rect);
            }
        }
        rec.range = ranges;
        rec.preview = previews;
        rec.mesh = meshes;
        Self::write_record(&rec_path, &rec)?;
        Ok(TaskOutcome::Ran)
    }

    /// Tile `k`'s outputs over window `w`, every global node read from its stage.
    fn evaluate_tile(&self, k: usize, w: Window) -> Result<crate::eval::EvalResult, TaskError> {
        let flat = self.graph.flattened();
        let store = super::store::Store::new(self.plan, &flat, self.work, self.plan.stages.len())
            .map_err(|e| format!("tile-{k}: {e}"))?;
        let base = self.base_dir();
        let eval = Evaluator::new()
            .with_disk(self.opts.cache.clone())
            .evaluate(
                &flat,
                &EvalOptions {
                    window: Some(w),
                    stored: Some(&store),
                    ..self.eval_opts(base.as_deref())
                },
            )
            .map_err(|d| crate::graph::diagnostic_lines(&d))?;
        if self.opts.cancel.is_cancelled() {
            return Err("cancelled".into());
        }
        Ok(eval)
    }

    fn stitch(&self) -> Result<TaskOutcome, TaskError> {
        let parsed = self.plan.exports.parsed()?;
        let Parsed {
            formats,
            stitch,
            preview,
            ..
        } = &parsed;
        let (stitch, preview) = (stitch.clone(), *preview);
        let grid = self.plan.grid;
        let n = grid.resolution;
        let mut records = Vec::with_capacity(grid.count());
        for k in 0..grid.count() {
            let p = self.work.join(format!("tile-{k}.json"));
            let rec = valid_record(self.dir, self.plan, &p).ok_or_else(|| {
                format!("the stitch needs task tile-{k}: its record {} is missing or its files changed; run it first", p.display())
            })?;
            records.push(rec);
        }
        let mut files: Vec<FileEntry> = Vec::new();
        let graph_copy = self.dir.join(&self.plan.graph_copy);
        let graph_hash = hash_file(&graph_copy)
            .ok_or_else(|| format!("cannot read {}", graph_copy.display()))?;
        files.push(FileEntry {
            file: self.plan.graph_copy.clone(),
            role: "graph".into(),
            hash: graph_hash.clone(),
        });
        let mut tiles = Vec::new();
        let mut outputs = Vec::new();
        for (name, r) in &self.graph.outputs {
            let kind = self.graph.output_kind(r).unwrap_or(PortKind::Height);
            self.tile_entries(&records, name, kind, &parsed, &mut files, &mut tiles);
            let (min, max) = records
                .iter()
                .filter_map(|rec| rec.range.get(name))
                .fold((f32::INFINITY, f32::NEG_INFINITY), |(a, b), &(lo, hi)| {
                    (a.min(lo), b.max(hi))
                });
            let frame = crate::build::output_frame(
                self.graph,
                kind,
                crate::build::Range::Graph,
                &Field::filled(1, 1, 0.0),
            );
            let mut primary = None;
            if formats.contains(&Format::GeoTiff) && parsed.layout == Layout::Plain {
                // One raster for GDAL over the tiles' GeoTIFFs.
                let bands = match kind {
                    PortKind::Color => crate::io::geotiff::VrtBands::Colour,
                    _ if self.graph.nodata.is_some() => {
                        crate::io::geotiff::VrtBands::ValuesWithNodata
                    }
                    _ => crate::io::geotiff::VrtBands::Values,
                };
                let (file, hash) = self.write_vrt(name, bands)?;
                files.push(FileEntry {
                    file: file.clone(),
                    role: "vrt (whole map over the tiles' GeoTIFFs)".into(),
                    hash: hash.clone(),
                });
                primary.get_or_insert((file, hash));
            }
            for &f in &stitch {
                let file = format!("{name}.{}", f.extension());
                let path = self.dir.join(&file);
                self.stitch_file(&path, name, f, kind.channels())?;
                let hash =
                    hash_file(&path).ok_or_else(|| format!("cannot read {}", path.display()))?;
                files.push(FileEntry {
                    file: file.clone(),
                    role: format!("{} (whole map)", f.name()),
                    hash: hash.clone(),
                });
                primary.get_or_insert((file, hash));
            }
            if let Some(map) = preview {
                let file = format!("{name}.preview.png");
                let bytes = self.preview(&records, name, kind, &frame, map)?;
                let path = self.dir.join(&file);
                write_bytes_atomic(&path, &bytes).map_err(|e| TaskError::io("write", &path, e))?;
                files.push(FileEntry {
                    file,
                    role: "preview".into(),
                    hash: blake3::hash(&bytes).to_hex().to_string(),
                });
            }
            let (file, hash) = primary.unwrap_or_default();
            outputs.push(OutputEntry {
                name: name.clone(),
                source: r.to_string(),
                kind: kind.name().to_owned(),
                file,
                width: n,
                height: n,
                min,
                max,
                range_m: [frame.height_min_m, frame.height_max_m],
                hash,
                mesh: records
                    .iter()
                    .filter_map(|rec| rec.mesh.get(name))
                    .copied()
                    .reduce(|a, b| crate::io::manifest::MeshInfo {
                        triangles: a.triangles + b.triangles,
                        full_triangles: a.full_triangles + b.full_triangles,
                        max_error_m: a.max_error_m.max(b.max_error_m),
                    }),
            });
        }
        self.write_manifest(graph_hash, parsed.layout, formats, outputs, tiles, files)?;
        Ok(TaskOutcome::Ran)
    }

    /// Where the samples from `(x0, y0)` lie in GeoTIFF exports: on the graph's georeference,
    /// else in the local metric frame.
    fn geo_frame(&self, x0: usize, y0: usize) -> crate::io::geotiff::Frame {
        let g = self.graph;
        crate::io::geotiff::Frame::of(&g.world, g.georef, self.plan.grid.resolution, (x0, y0))
    }

    /// `NAME.vrt`: a GDAL virtual raster mosaicking output `name`'s tile GeoTIFFs.
    fn write_vrt(
        &self,
        name: &str,
        bands: crate::io::geotiff::VrtBands,
    ) -> Result<(String, String), TaskError> {
        let grid = self.plan.grid;
        let mut tiles = Vec::with_capacity(grid.count());
        for k in 0..grid.count() {
            let (i, j) = grid.coords(k);
            let t = grid.window(i, j);
            let file = tile_file(Layout::Plain, grid, name, i, j, Format::GeoTiff);
            tiles.push((format!("tiles/{file}"), t.x0, t.y0, t.width, t.height));
        }
        let n = grid.resolution;
        let text = crate::io::geotiff::vrt(n, n, &self.geo_frame(0, 0), &tiles, bands);
        let file = format!("{name}.vrt");
        let path = self.dir.join(&file);
        write_bytes_atomic(&path, text.as_bytes()).map_err(|e| TaskError::io("write", &path, e))?;
        Ok((file, blake3::hash(text.as_bytes()).to_hex().to_string()))
    }

    /// The manifest's entries for output `name`'s files in every tile (and its normal maps).
    fn tile_entries(
        &self,
        records: &[Record],
        name: &str,
        kind: PortKind,
        parsed: &Parsed,
        files: &mut Vec<FileEntry>,
        tiles: &mut Vec<TileEntry>,
    ) {
        let Parsed {
            layout,
            formats,
            normal_map,
            mesh,
            ..
        } = parsed;
        let (layout, grid) = (*layout, self.plan.grid);
        let cell = self.graph.world.cell_size_m(grid.resolution);
        let hash_of = |rec: &Record, file: &str| {
            rec.files
                .iter()
                .find(|(f, _)| f == file)
                .map(|(_, h)| h.clone())
                .unwrap_or_default()
        };
        for (k, rec) in records.iter().enumerate() {
            let (i, j) = grid.coords(k);
            let w = grid.window(i, j);
            if normal_map.is_some() && kind == PortKind::Height {
                let file = format!("tiles/{}", normal_file(layout, grid, name, i, j));
                let hash = hash_of(rec, &file);
                files.push(FileEntry {
                    file,
                    role: "normal map".into(),
                    hash,
                });
            }
            if let (Some(spec), PortKind::Height) = (mesh, kind) {
                let file = format!(
                    "tiles/{}",
                    named_file(layout, grid, name, i, j, spec.extension())
                );
                let hash = hash_of(rec, &file);
                files.push(FileEntry {
                    file,
                    role: "mesh".into(),
                    hash,
                });
            }
            for &f in formats {
                let file = tile_file(layout, grid, name, i, j, f);
                let hash = hash_of(rec, &format!("tiles/{file}"));
                files.push(FileEntry {
                    file: format!("tiles/{file}"),
                    role: f.name().to_owned(),
                    hash: hash.clone(),
                });
                tiles.push(TileEntry {
                    output: name.to_owned(),
                    file: format!("tiles/{file}"),
                    x: i,
                    y: if layout == Layout::Unity {
                        grid.tiles_y - 1 - j
                    } else {
                        j
                    },
                    window: [w.x0, w.y0, w.width, w.height],
                    extent_m: [
                        w.x0 as f64 * cell,
                        w.y0 as f64 * cell,
                        (w.x0 + w.width) as f64 * cell,
                        (w.y0 + w.height) as f64 * cell,
                    ],
                    hash,
                });
            }
        }
    }

    /// The tiled build's manifest.json, written last: the build is complete once it is there.
    fn write_manifest(
        &self,
        graph_hash: String,
        layout: Layout,
        formats: &[Format],
        outputs: Vec<OutputEntry>,
        tiles: Vec<TileEntry>,
        files: Vec<FileEntry>,
    ) -> Result<(), TaskError> {
        let grid = self.plan.grid;
        let n = grid.resolution;
        let cell = self.graph.world.cell_size_m(n);
        let g = self.graph;
        let manifest = Manifest {
            orogen_version: env!("CARGO_PKG_VERSION").to_owned(),
            graph: GraphInfo {
                name: g.name.clone(),
                file: self.plan.graph_file.clone(),
                copy: self.plan.graph_copy.clone(),
                hash: graph_hash,
            },
            seed: g.seed,
            parameters: crate::document::graph_file::parameter_values(g),
            resolution: n,
            world: WorldInfo {
                size_m: g.world.size_m,
                height_min_m: g.world.height_min_m,
                height_max_m: g.world.height_max_m,
                cell_size_m: cell,
            },
            formats: formats.iter().map(|f| f.name().to_owned()).collect(),
            preset: None,
            tiling: Some(serde_json::json!({
                "layout": choice_name(layout),
                "tiles_x": grid.tiles_x,
                "tiles_y": grid.tiles_y,
                "tile_samples": grid.size,
                "tile_step": grid.step,
                "coarse_resolution": self.plan.coarse_resolution,
                "plan_key": self.plan.key,
            })),
            outputs,
            tiles,
            files,
            errors: BTreeMap::new(),
            timings_ms: BTreeMap::new(),
            cache: None,
        };
        let path = self.dir.join("manifest.json");
        let mut text = serde_json::to_string_pretty(&manifest).map_err(|e| e.to_string())?;
        text.push('\n');
        write_bytes_atomic(&path, text.as_bytes()).map_err(|e| TaskError::io("write", &path, e))
    }

    /// Streams the whole map of `name` in `format` into `path`, row by row from the tiles'
    /// stitch sources (only one band of tiles' file handles open, one row in memory).
    fn stitch_file(
        &self,
        path: &Path,
        name: &str,
        format: Format,
        channels: usize,
    ) -> Result<(), TaskError> {
        let grid = self.plan.grid;
        // Bytes per sample: colours interleave their channels.
        let bps = if format == Format::R16 { 2 } else { 4 } * channels;
        let err = |p: &Path, e: std::io::Error| format!("{}: {e}", p.display());
        write_atomic(path, |out| {
            let mut row = Vec::new();
            for j in 0..grid.tiles_y {
                let mut sources = Vec::with_capacity(grid.tiles_x);
                for i in 0..grid.tiles_x {
                    let k = j * grid.tiles_x + i;
                    let p = self
                        .work
                        .join(format!("tile-{k}.{name}.{}", format.extension()));
                    let f =
                        std::fs::File::open(&p).map_err(|e| std::io::Error::other(err(&p, e)))?;
                    sources.push((std::io::BufReader::new(f), grid.owned(i, j).width * bps));
                }
                for _ in 0..grid.owned(0, j).height {
                    for (src, bytes) in &mut sources {
                        row.resize(*bytes, 0);
                        src.read_exact(&mut row)?;
                        out.write_all(&row)?;
                    }
                }
            }
            Ok(())
        })
        .map_err(|e| TaskError::Failed(err(path, e)))
    }
}

/// The samples tile `(i, j)`'s mesh covers: its own and, where it has an east or south
/// neighbour, up to that neighbour's first column or row (plain tiles do not share samples;
/// Unreal's share one), so neighbouring meshes share that edge's vertices and leave no gap.
fn mesh_window(grid: Grid, i: usize, j: usize) -> Window {
    let tile = grid.window(i, j);
    let east = if i + 1 < grid.tiles_x {
        grid.window(i + 1, j).x0 + 1
    } else {
        tile.x0 + tile.width
    };
    let south = if j + 1 < grid.tiles_y {
        grid.window(i, j + 1).y0 + 1
    } else {
        tile.y0 + tile.height
    };
    Window {
        width: east.max(tile.x0 + tile.width) - tile.x0,
        height: south.max(tile.y0 + tile.height) - tile.y0,
        ..tile
    }
}

/// A tile's normal map's file name in `layout` (16- or 8-bit PNG, top row north).
fn normal_file(layout: Layout, grid: Grid, name: &str, i: usize, j: usize) -> String {
    named_file(layout, grid, name, i, j, "normal.png")
}

/// A tile's file name in `layout` with `extension` (a mesh's `obj` or `glb`).
fn named_file(
    layout: Layout,
    grid: Grid,
    name: &str,
    i: usize,
    j: usize,
    extension: &str,
) -> String {
    let stem = tile_file(layout, grid, name, i, j, Format::Png16);
    let stem = stem.rsplit_once('.').map_or(stem.as_str(), |(s, _)| s);
    format!("{stem}.{extension}")
}

/// A tile's file name in `layout`.
fn tile_file(layout: Layout, grid: Grid, name: &str, i: usize, j: usize, f: Format) -> String {
    match layout {
        Layout::Plain => format!("{name}_x{i}_y{j}.{}", f.extension()),
        Layout::Unreal => format!("{name}_x{i}_y{j}.png"),
        // Unity counts tiles from the south-west.
        Layout::Unity => format!("{name}_{i}_{}.raw", grid.tiles_y - 1 - j),
    }
}
