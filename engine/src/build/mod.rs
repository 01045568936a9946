//! Headless builds: evaluate a graph's named outputs and write them, plus `manifest.json` and
//! a copy of the graph that was built, atomically into a folder. The CLI's `build` command and
//! the editor's build dialog both call [`build`] with the same [`Exports`], whose defaults are
//! what `orogen build` writes with no flags ([`Exports::to_args`] gives the flags back).
//!
//! # Failure handling
//! A build is a transaction (the `staging` module): every file, the manifest included, is staged
//! as a synced temporary file, and a journaled commit replaces the previous build's files; after a
//! crash the next build into the folder rolls back first, so the folder holds one whole build,
//! never a mix. An output that cannot be built stops the build before anything is written, unless
//! `keep_going`. A cancel (the CLI's Ctrl-C, the editor's Cancel) trips the `CancelToken` that
//! nodes poll; the evaluation returns, the temporaries delete themselves and `build` reports
//! `Cancelled`. The CLI refuses a graph whose memory estimate (`eval::memory`) exceeds its
//! budget before anything runs, and a node whose own invariant breaks (the pipe model's
//! conservation) fails with a message rather than returning a wrong terrain.

use crate::document::graph_file;
use crate::eval::{
    CancelToken, EvalOptions, EvalResult, Evaluator, NodeStatus, ProgressEvent, Targets,
};
use crate::field::Field;
use crate::graph::{Blocked, Diagnostic, Graph};
use crate::io::heightmap::{self, Format};
use crate::io::manifest::{GraphInfo, Manifest, OutputEntry, WorldInfo};
use crate::io::render::{self, Colormap, NormalY};
use crate::node::PortKind;
use crate::World;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

mod splat;
mod staging;

use staging::Staging;

/// A game-engine preset: sizes, formats and the numbers to type into the engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preset {
    /// Unity terrain: 2ⁿ + 1 samples (33 … 4097), RAW16 little-endian, rows south to north.
    Unity,
    /// Unreal landscape: recommended sizes (127 … 8129), 16-bit PNG, Z scale in the manifest.
    Unreal,
    /// Godot: 2ⁿ + 1 samples, 32-bit float EXR in metres.
    Godot,
}

crate::impl_choice!(Preset {
    Unity = "unity",
    Unreal = "unreal",
    Godot = "godot",
});
crate::impl_choice!(MeshFormat {
    Obj = "obj",
    Glb = "glb",
});
crate::impl_choice!(Range {
    Graph = "graph",
    Data = "data",
});

impl Preset {
    /// Sizes the engine accepts, ascending.
    #[must_use]
    pub fn sizes(self) -> &'static [usize] {
        match self {
            Preset::Unity | Preset::Godot => &[33, 65, 129, 257, 513, 1025, 2049, 4097],
            Preset::Unreal => &[127, 253, 505, 1009, 2017, 4033, 8129],
        }
    }

    /// The accepted size closest to `n` (ties go up).
    #[must_use]
    pub fn size_for(self, n: usize) -> usize {
        let s = self.sizes();
        s.iter()
            .copied()
            .min_by_key(|&v| (v.abs_diff(n), std::cmp::Reverse(v)))
            .unwrap_or(s[0])
    }
}

pub use crate::io::mesh::MeshFormat;

impl Exports {
    /// The mesh to write per height output, if any.
    #[must_use]
    pub fn mesh_spec(&self) -> Option<crate::io::mesh::MeshSpec> {
        self.mesh.map(|(format, step)| crate::io::mesh::MeshSpec {
            format,
            step,
            max_error_m: self.mesh_error_m,
        })
    }
}

/// Which heights integer formats (PNG16, TIFF16, RAW16) map onto 0 … 65535.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Range {
    /// The graph's height range (heights outside it are clamped); the same for every output.
    #[default]
    Graph,
    /// Each output's own minimum … maximum: full 16-bit precision, never clamped.
    Data,
}

/// Everything a build writes besides the graph evaluation itself.
#[derive(Clone, Debug, PartialEq)]
pub struct Exports {
    /// Heightmap formats written for every output (ignored with a preset).
    pub formats: Vec<Format>,
    /// Height range mapped by integer formats (recorded per output as `range_m`).
    pub range: Range,
    pub preset: Option<Preset>,
    /// A colormapped, hillshaded `<output>.preview.png` per output.
    pub preview: Option<Colormap>,
    /// A tangent-space `<output>.normal.png` per height output: (bits 8 or 16, Y convention).
    pub normal_map: Option<(u8, NormalY)>,
    /// A mesh per height output, keeping every `step`-th sample.
    pub mesh: Option<(MeshFormat, usize)>,
    /// Simplify each mesh to this largest vertical error in metres (`--mesh-error-m`;
    /// `io::mesh::simplify`) instead of keeping every `step`-th sample.
    pub mesh_error_m: Option<f32>,
    /// Splat maps: `(file stem, up to four mask outputs)`.
    pub splats: Vec<(String, Vec<String>)>,
    /// Scale each splat map's weights to sum to 1 where any is positive.
    pub splat_normalize: bool,
}

impl Default for Exports {
    /// What `orogen build` writes with no export flags: 16-bit PNG over the graph's height
    /// range and a terrain-coloured preview per output.
    fn default() -> Self {
        Self {
            formats: vec![Format::Png16],
            range: Range::Graph,
            preset: None,
            preview: Some(Colormap::Terrain),
            normal_map: None,
            mesh: None,
            mesh_error_m: None,
            splats: Vec::new(),
            splat_normalize: false,
        }
    }
}

impl Exports {
    /// The `orogen build` flags that ask for these exports; none for the defaults.
    #[must_use]
    pub fn to_args(&self) -> Vec<String> {
        use crate::node::choice_name;
        let d = Exports::default();
        let mut a = Vec::new();
        let mut flag = |k: &str, v: Option<String>| {
            a.push(format!("--{k}"));
            a.extend(v);
        };
        if self.formats != d.formats {
            let names: Vec<&str> = self.formats.iter().map(|f| f.name()).collect();
            flag("format", Some(names.join(",")));
        }
        if self.range != d.range {
            flag("range", Some(choice_name(self.range).to_owned()));
        }
        if let Some(p) = self.preset {
            flag("preset", Some(choice_name(p).to_owned()));
        }
        match self.preview {
            None => flag("no-preview", None),
            Some(m) if Some(m) != d.preview => flag("preview", Some(choice_name(m).to_owned())),
            Some(_) => {}
        }
        if let Some((bits, y)) = self.normal_map {
            flag("normal-map", None);
            if bits != 8 {
                flag("normal-bits", Some(bits.to_string()));
            }
            if y != NormalY::Opengl {
                flag("normal-y", Some(choice_name(y).to_owned()));
            }
        }
        if let Some((m, step)) = self.mesh {
            flag("mesh", Some(choice_name(m).to_owned()));
            if step != 1 {
                flag("mesh-step", Some(step.to_string()));
            }
            if let Some(e) = self.mesh_error_m {
                flag("mesh-error-m", Some(e.to_string()));
            }
        }
        for (stem, masks) in &self.splats {
            flag("splat", Some(format!("{stem}={}", masks.join(","))));
        }
        if self.splat_normalize {
            flag("splat-normalize", None);
        }
        a
    }
}

/// What to build.
pub struct BuildOptions<'a> {
    pub out_dir: PathBuf,
    pub exports: Exports,
    /// Samples per side; `None` uses the graph's resolution.
    pub resolution: Option<usize>,
    /// The graph file's folder (for relative paths in parameters) and its name for the manifest.
    pub graph_file: Option<&'a Path>,
    /// Folders outside the graph's project that imports may read (`--allow-outside`).
    pub allow_outside: &'a [PathBuf],
    /// Write the outputs that can be built even when others cannot (an incomplete node on
    /// their chain, a node that fails). Without it a build writes every output or nothing.
    pub keep_going: bool,
    pub cancel: CancelToken,
    pub progress: Option<&'a (dyn Fn(ProgressEvent) + Sync)>,
    /// The disk cache results are read from and written to (`None`: none). Outputs are the
    /// same bytes either way.
    pub cache: Option<std::sync::Arc<crate::eval::DiskCache>>,
    /// Arrays the graph's `array_input` nodes read (from the Python package).
    pub arrays: Option<&'a crate::node::ArrayInputs>,
}

/// The name of the graph copy a build writes next to its outputs.
pub const GRAPH_COPY: &str = "graph.json";

/// Why a build did not complete.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error("the graph is invalid:\n{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
    Invalid(Vec<Diagnostic>),
    #[error("the graph declares no outputs: add an \"outputs\" object naming the nodes to write")]
    NoOutputs,
    #[error("{}\nnothing was written", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
    Incomplete(Vec<Blocked>),
    #[error("{}\nnothing was written", .0.join("\n"))]
    Failed(Vec<String>),
    #[error("build cancelled: no output was written or changed")]
    Cancelled,
    /// The output folder holds a build journal Orogen did not write (see `staging`).
    #[error("{0}")]
    Journal(String),
    #[error("cannot write {path}: {source}")]
    Write {
        path: String,
        source: std::io::Error,
    },
    #[error("{0}")]
    Heightmap(#[from] heightmap::HeightmapError),
    #[error("splat map \"{0}\": {1}")]
    Splat(String, String),
}

/// What a build did.
#[derive(Debug)]
pub struct BuildReport {
    pub manifest: Manifest,
    pub manifest_path: PathBuf,
    pub eval: EvalResult,
    /// Outputs (and splat maps) not written, with `--keep-going`, because a node they need is
    /// incomplete, failed or was skipped.
    pub failed_outputs: Vec<String>,
}

impl BuildReport {
    /// True when every output was written.
    #[must_use]
    pub fn complete(&self) -> bool {
        self.failed_outputs.is_empty()
    }
}

/// Builds every named output of `graph`. An output that cannot be built (an incomplete node
/// on its chain, a node that fails) stops the build before anything is written, unless
/// `keep_going`: then the others are written and the rest listed in the report and in the
/// manifest's `errors`.
pub fn build(graph: &Graph, opts: &BuildOptions) -> Result<BuildReport, BuildError> {
    if graph.outputs.is_empty() {
        return Err(BuildError::NoOutputs);
    }
    splat::check(graph, &opts.exports)?;
    let errors = graph.errors();
    if !errors.is_empty() {
        return Err(BuildError::Invalid(errors));
    }
    let blocked = graph.blocked_outputs();
    if !blocked.is_empty() && !opts.keep_going {
        return Err(BuildError::Incomplete(blocked));
    }
    // A journal Orogen did not write is refused before any work, not after it.
    staging::check(&opts.out_dir)?;
    if opts.cancel.is_cancelled() {
        return Err(BuildError::Cancelled);
    }
    let ex = &opts.exports;
    let resolution = match ex.preset {
        Some(p) => Some(p.size_for(opts.resolution.unwrap_or(graph.resolution))),
        None => opts.resolution,
    };
    let targets = buildable(graph, &blocked);
    let eval = Evaluator::new()
        .with_disk(opts.cache.clone())
        .evaluate(
            graph,
            &EvalOptions {
                resolution,
                targets,
                cancel: opts.cancel.clone(),
                progress: opts.progress,
                base_dir: opts.graph_file.and_then(Path::parent),
                allow_outside: opts.allow_outside,
                keep_all: false,
                window: None,
                coarse: None,
                arrays: opts.arrays,
                stored: None,
            },
        )
        .map_err(BuildError::Invalid)?;
    if opts.cancel.is_cancelled() {
        return Err(BuildError::Cancelled);
    }
    let missing: Vec<String> = graph
        .outputs
        .iter()
        .filter(|(_, r)| eval.field(graph, r).is_none())
        .map(|(name, r)| {
            format!(
                "output \"{name}\" not built: {}",
                why_missing(&eval, &r.node)
            )
        })
        .collect();
    if !missing.is_empty() && !opts.keep_going {
        return Err(BuildError::Failed(missing));
    }
    std::fs::create_dir_all(&opts.out_dir).map_err(|source| BuildError::Write {
        path: opts.out_dir.display().to_string(),
        source,
    })?;
    // A build killed while it switched files last time is rolled back first.
    staging::recover(&opts.out_dir)?;

    let formats = formats_for(ex);
    let mut stage = Staging::new(&opts.out_dir);
    let (outputs, failed_outputs) = write_outputs(&mut stage, graph, &eval, opts, &formats)?;
    let manifest = manifest(graph, opts, &eval, &mut stage, &formats, outputs, &blocked)?;
    let manifest_path = opts.out_dir.join("manifest.json");
    let mut text = serde_json::to_string_pretty(&manifest).map_err(|e| BuildError::Write {
        path: manifest_path.display().to_string(),
        source: std::io::Error::other(e),
    })?;
    text.push('\n');
    stage.add_unlisted(&manifest_path, text.as_bytes())?;
    if opts.cancel.is_cancelled() {
        return Err(BuildError::Cancelled);
    }
    stage.commit()?;
    Ok(BuildReport {
        manifest,
        manifest_path,
        eval,
        failed_outputs,
    })
}

/// The build's manifest (its graph copy staged first): what was built, from what, how.
fn manifest(
    graph: &Graph,
    opts: &BuildOptions,
    eval: &EvalResult,
    stage: &mut Staging,
    formats: &[Format],
    outputs: Vec<OutputEntry>,
    blocked: &[Blocked],
) -> Result<Manifest, BuildError> {
    let ex = &opts.exports;
    // The graph exactly as built (with `--set`, `--seed` and the built resolution), so
    // `orogen build DIR/graph.json` builds the same files again.
    let built = Graph {
        resolution: eval.resolution,
        ..graph.clone()
    };
    let graph_text = graph_file::to_string_embedded(&built);
    if graph_text.len() as u64 > crate::io::trust::MAX_GRAPH_BYTES {
        return Err(BuildError::Write {
            path: opts.out_dir.join(GRAPH_COPY).display().to_string(),
            source: std::io::Error::other(format!(
                "the graph with its subgraphs embedded is {} bytes, more than the {} a graph file may have",
                graph_text.len(),
                crate::io::trust::human_bytes(crate::io::trust::MAX_GRAPH_BYTES)
            )),
        });
    }
    let graph_hash = stage.add(GRAPH_COPY.to_owned(), "graph", graph_text.as_bytes())?;
    Ok(Manifest {
        orogen_version: env!("CARGO_PKG_VERSION").to_owned(),
        graph: GraphInfo {
            name: graph.name.clone(),
            file: opts
                .graph_file
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
            copy: GRAPH_COPY.to_owned(),
            hash: graph_hash,
        },
        seed: graph.seed,
        parameters: crate::document::graph_file::parameter_values(graph),
        resolution: eval.resolution,
        world: WorldInfo {
            size_m: graph.world.size_m,
            height_min_m: graph.world.height_min_m,
            height_max_m: graph.world.height_max_m,
            cell_size_m: graph.world.cell_size_m(eval.resolution),
        },
        formats: formats.iter().map(|f| f.name().to_owned()).collect(),
        preset: ex.preset.map(|p| preset_info(p, graph, eval.resolution)),
        tiling: None,
        outputs,
        tiles: Vec::new(),
        files: std::mem::take(&mut stage.files),
        errors: node_errors(eval, blocked),
        timings_ms: eval
            .timings
            .iter()
            .map(|(k, d)| (k.clone(), (d.as_secs_f64() * 1.0e6).round() / 1.0e3))
            .collect(),
        cache: opts.cache.as_ref().map(|c| crate::io::manifest::CacheInfo {
            dir: c.dir().display().to_string(),
            computed: eval.evaluated().into_iter().map(str::to_owned).collect(),
            read: eval.disk_read.iter().cloned().collect(),
            stored: eval.disk_stored.iter().cloned().collect(),
        }),
    })
}

/// What a build evaluates: the nodes behind its outputs, without the blocked ones.
fn buildable(graph: &Graph, blocked: &[Blocked]) -> Targets {
    if blocked.is_empty() {
        Targets::Outputs
    } else {
        let blocked: Vec<&str> = blocked.iter().map(|b| b.output.as_str()).collect();
        Targets::Nodes(
            graph
                .outputs
                .iter()
                .filter(|(name, _)| !blocked.contains(&name.as_str()))
                .map(|(_, r)| r.node.clone())
                .collect(),
        )
    }
}

/// The heightmap formats written: the preset's, else the chosen ones.
fn formats_for(ex: &Exports) -> Vec<Format> {
    match ex.preset {
        Some(Preset::Unity) => vec![Format::R16],
        Some(Preset::Unreal) => vec![Format::Png16],
        Some(Preset::Godot) => vec![Format::Exr],
        None => ex.formats.clone(),
    }
}

/// Every evaluated output (and splat map) staged in its formats; the manifest entries, and
/// the names of those that could not be written (not evaluated, or cancelled).
fn write_outputs(
    stage: &mut Staging,
    graph: &Graph,
    eval: &EvalResult,
    opts: &BuildOptions,
    formats: &[Format],
) -> Result<(Vec<OutputEntry>, Vec<String>), BuildError> {
    let ex = &opts.exports;
    let mut outputs = Vec::new();
    let mut failed_outputs = Vec::new();
    for (name, r) in &graph.outputs {
        match eval.field(graph, r) {
            Some(field) if !opts.cancel.is_cancelled() => {
                let kind = graph.output_kind(r).unwrap_or(PortKind::Height);
                let ground = (kind == PortKind::Color)
                    .then(|| eval.terrain_under(graph, &r.node))
                    .flatten();
                let out = Output {
                    name,
                    source: r.to_string(),
                    kind,
                    field: &field,
                    ground: ground.as_deref(),
                };
                outputs.push(write_output(stage, graph, &out, ex, formats)?);
            }
            _ => failed_outputs.push(name.clone()),
        }
    }
    for (stem, names) in &ex.splats {
        let fields: Vec<_> = names
            .iter()
            .filter_map(|n| eval.field(graph, &graph.outputs[n]))
            .collect();
        if fields.len() == names.len() {
            splat::write(stage, stem, &fields, ex.splat_normalize)?;
        } else {
            failed_outputs.push(stem.clone());
        }
    }
    Ok((outputs, failed_outputs))
}

/// Why node `id` produced nothing: its own problem, or the one of the node that stopped it.
fn why_missing(eval: &EvalResult, id: &str) -> String {
    let root = match eval.status.get(id) {
        Some(NodeStatus::Skipped { upstream }) => upstream.as_str(),
        _ => id,
    };
    match eval.status.get(root) {
        Some(NodeStatus::Failed(e)) => format!("node \"{root}\": {e}"),
        Some(NodeStatus::Incomplete { reason }) => {
            format!("node \"{root}\" is incomplete ({reason})")
        }
        _ => format!("node \"{root}\" was not evaluated"),
    }
}

/// Failed, incomplete and skipped nodes with their messages, for the manifest: those the
/// evaluation met, and the incomplete nodes that blocked outputs before it.
fn node_errors(eval: &EvalResult, blocked: &[Blocked]) -> BTreeMap<String, String> {
    let before = blocked
        .iter()
        .flat_map(|b| &b.reasons)
        .filter_map(|(node, why)| Some((node.clone()?, format!("incomplete: {why}"))));
    let during = eval.status.iter().filter_map(|(id, s)| match s {
        NodeStatus::Failed(e) => Some((id.clone(), e.to_string())),
        NodeStatus::Incomplete { reason } => Some((id.clone(), format!("incomplete: {reason}"))),
        NodeStatus::Skipped { upstream } => Some((
            id.clone(),
            format!("skipped: upstream node \"{upstream}\" failed or is incomplete"),
        )),
        _ => None,
    });
    before.chain(during).collect()
}

/// One output about to be written.
struct Output<'a> {
    name: &'a str,
    source: String,
    kind: PortKind,
    field: &'a Field,
    /// Colour outputs: the terrain under them, which lights their preview.
    ground: Option<&'a Field>,
}

/// Writes one output's heightmaps, preview, normal map and mesh; returns its manifest entry.
fn write_output(
    stage: &mut Staging,
    graph: &Graph,
    out: &Output,
    ex: &Exports,
    formats: &[Format],
) -> Result<OutputEntry, BuildError> {
    let (name, field, kind) = (out.name, out.field, out.kind);
    let cell = graph.world.cell_size_m(field.width());
    let frame = output_frame(graph, kind, ex.range, field);
    let write_err = |source| BuildError::Write {
        path: name.to_owned(),
        source,
    };
    let mut primary = None;
    let mut mesh_info = None;
    for &format in formats {
        let (file, bytes) = if ex.preset == Some(Preset::Unity) {
            // Unity reads row 0 of a RAW heightmap as z = 0 (south): rows south to north.
            let flipped = field.flipped_vertically();
            let bytes = heightmap::encode(&flipped, &frame, format).map_err(write_err)?;
            (format!("{name}.raw"), bytes)
        } else if format == Format::GeoTiff && kind == PortKind::Height {
            // Placed on the graph's georeference, if it has one.
            let at =
                crate::io::geotiff::Frame::of(&graph.world, graph.georef, field.width(), (0, 0));
            let bytes = crate::io::geotiff::encode(field, &at).map_err(write_err)?;
            (format!("{name}.{}", format.extension()), bytes)
        } else {
            let bytes = heightmap::encode(field, &frame, format).map_err(write_err)?;
            (format!("{name}.{}", format.extension()), bytes)
        };
        let hash = stage.add(file.clone(), format.name(), &bytes)?;
        primary.get_or_insert((file, hash));
    }
    if let Some(map) = ex.preview {
        // Previews of heights keep the graph's range so colours mean the same heights.
        let (lo, hi) = render::display_range(if kind == PortKind::Height {
            &graph.world
        } else {
            &frame
        });
        let relief = (kind == PortKind::Height).then_some((field, cell));
        let rgb = if kind == PortKind::Color {
            let ground = out.ground.filter(|g| g.width() == field.width());
            render::color_rgb8(field, ground.map(|g| (g, cell)))
        } else if kind == PortKind::Scalar {
            let (shown, lo, hi) = render::scalar_display(field, lo, hi);
            render::preview_rgb(&shown, lo, hi, map, None)
        } else {
            render::preview_rgb(field, lo, hi, map, relief)
        };
        let png = encode_png_rgb8(field.width(), field.height(), rgb)?;
        stage.add(format!("{name}.preview.png"), "preview", &png)?;
    }
    if kind == PortKind::Height {
        if let Some((bits, y)) = ex.normal_map {
            let n = render::normals(field, cell, y);
            let bytes = encode_normal_png(field.width(), field.height(), &n, bits)?;
            stage.add(format!("{name}.normal.png"), "normal map", &bytes)?;
        }
        if let Some(spec) = ex.mesh_spec() {
            let part = [0, 0, field.width(), field.height()];
            let (bytes, info) = crate::io::mesh::mesh_file(field, part, (0, 0), cell, spec);
            mesh_info = info;
            stage.add(format!("{name}.{}", spec.extension()), "mesh", &bytes)?;
        }
    }
    let (min, max) = field.min_max().unwrap_or((f32::NAN, f32::NAN));
    let (file, hash) = primary.unwrap_or_default();
    Ok(OutputEntry {
        name: name.to_owned(),
        source: out.source.clone(),
        kind: kind.name().to_owned(),
        file,
        width: field.width(),
        height: field.height(),
        min,
        max,
        range_m: [frame.height_min_m, frame.height_max_m],
        hash,
        mesh: mesh_info,
    })
}

/// The heights integer formats map onto 0 … 65535: masks over [0, 1], heights over the
/// graph's height range or (with [`Range::Data`]) the output's own, scalars always over their
/// own (the manifest's `range_m` decodes them).
pub(crate) fn output_frame(graph: &Graph, kind: PortKind, range: Range, field: &Field) -> World {
    match (kind, range, field.min_max()) {
        (PortKind::Height, Range::Data, Some((lo, hi))) if hi > lo => World {
            height_min_m: f64::from(lo),
            height_max_m: f64::from(hi),
            ..graph.world
        },
        (PortKind::Height, _, _) => graph.world,
        (PortKind::Mask | PortKind::Color, _, _) => World {
            height_min_m: 0.0,
            height_max_m: 1.0,
            ..graph.world
        },
        // A quantity has no graph range: integer formats always span its own values.
        (PortKind::Scalar, _, range) => {
            let (lo, hi) = range.unwrap_or((0.0, 1.0));
            World {
                height_min_m: f64::from(lo),
                height_max_m: if hi > lo {
                    f64::from(hi)
                } else {
                    f64::from(lo) + 1.0
                },
                ..graph.world
            }
        }
    }
}

fn encode_png_rgb8(w: usize, h: usize, rgb: Vec<u8>) -> Result<Vec<u8>, BuildError> {
    let img =
        image::RgbImage::from_raw(w as u32, h as u32, rgb).ok_or_else(|| BuildError::Write {
            path: "preview".into(),
            source: std::io::Error::other("size mismatch"),
        })?;
    let mut bytes = Vec::new();
    img.write_to(
        &mut std::io::Cursor::new(&mut bytes),
        image::ImageFormat::Png,
    )
    .map_err(|e| BuildError::Write {
        path: "preview".into(),
        source: std::io::Error::other(e),
    })?;
    Ok(bytes)
}

pub(crate) fn encode_normal_png(
    w: usize,
    h: usize,
    n: &[[f32; 3]],
    bits: u8,
) -> Result<Vec<u8>, BuildError> {
    let err = |e: String| BuildError::Write {
        path: "normal map".into(),
        source: std::io::Error::other(e),
    };
    let mut bytes = Vec::new();
    let cursor = &mut std::io::Cursor::new(&mut bytes);
    if bits == 16 {
        let px: Vec<u16> = n
            .iter()
            .flat_map(|v| v.map(|c| render::encode_unit(c, 65535.0)))
            .collect();
        let img = image::ImageBuffer::<image::Rgb<u16>, Vec<u16>>::from_raw(w as u32, h as u32, px)
            .ok_or_else(|| err("size".into()))?;
        img.write_to(cursor, image::ImageFormat::Png)
            .map_err(|e| err(e.to_string()))?;
    } else {
        let px: Vec<u8> = n
            .iter()
            .flat_map(|v| v.map(|c| render::encode_unit(c, 255.0) as u8))
            .collect();
        let img =
            image::RgbImage::from_raw(w as u32, h as u32, px).ok_or_else(|| err("size".into()))?;
        img.write_to(cursor, image::ImageFormat::Png)
            .map_err(|e| err(e.to_string()))?;
    }
    Ok(bytes)
}

/// The numbers to enter in the engine, recorded in the manifest.
fn preset_info(p: Preset, graph: &Graph, resolution: usize) -> serde_json::Value {
    let w = graph.world;
    let span = w.height_span_m();
    match p {
        Preset::Unity => serde_json::json!({
            "engine": "unity",
            "heightmap_resolution": resolution,
            "file_format": "RAW16, little-endian (Windows byte order), rows from south (z = 0) to north",
            "terrain_size_m": { "width": w.size_m, "height": span, "length": w.size_m },
            "terrain_position_y_m": w.height_min_m,
        }),
        Preset::Unreal => serde_json::json!({
            "engine": "unreal",
            "landscape_resolution": resolution,
            "file_format": "16-bit grayscale PNG, top row = north",
            // Unreal maps the 16-bit range to 512 m at Z scale 100 (cm units): scale = span / 5.12.
            "scale_cm": { "x": w.cell_size_m(resolution) * 100.0, "y": w.cell_size_m(resolution) * 100.0, "z": span * 100.0 / 512.0 },
            "location_z_cm": f64::midpoint(w.height_min_m, w.height_max_m) * 100.0,
        }),
        Preset::Godot => serde_json::json!({
            "engine": "godot",
            "heightmap_resolution": resolution,
            "file_format": "OpenEXR, one 32-bit float channel Y, metres (import with height scale 1)",
            "cell_size_m": w.cell_size_m(resolution),
        }),
    }
}

/// Convenience for tests and benches: evaluate all outputs in memory.
pub fn evaluate_outputs(
    graph: &Graph,
    resolution: Option<usize>,
) -> Result<BTreeMap<String, Field>, Vec<Diagnostic>> {
    let res = Evaluator::new().evaluate(
        graph,
        &EvalOptions {
            resolution,
            ..EvalOptions::default()
        },
    )?;
    Ok(graph
        .outputs
        .iter()
        .filter_map(|(name, r)| res.field(graph, r).map(|f| (name.clone(), (*f).clone())))
        .collect())
}
