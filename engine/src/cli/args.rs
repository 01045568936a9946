//! The arguments several subcommands share (the graph and how to evaluate it, exports,
//! tiles) and what they do with them: load the graph with its overrides, check memory,
//! open bundles, cancel on a signal.

use super::check::stale_message;
use super::choice;
use super::EXIT_INTERRUPTED;
use super::EXIT_INVALID;
use anyhow::anyhow;
use orogen::build::Exports;
use orogen::build::MeshFormat;
use orogen::build::Preset;
use orogen::build::Range;
use orogen::document::graph_file;
use orogen::eval::CancelToken;
use orogen::io::heightmap::Format;
use orogen::io::render::Colormap;
use orogen::io::render::NormalY;
use std::path::PathBuf;
use std::process::ExitCode;

/// What `build` writes besides the heightmaps' evaluation.
#[derive(clap::Args)]
pub(super) struct ExportArgs {
    /// Heightmap formats, comma-separated (png16, exr, r16, f32, tiff16).
    #[arg(long, value_parser = choice::<Format>(), value_delimiter = ',', default_value = "png16")]
    pub(super) format: Vec<Format>,
    /// Heights mapped onto 0…65535 by 16-bit formats: the graph's height range, or each output's own min…max (unclamped; recorded as range_m in the manifest).
    #[arg(long, value_parser = choice::<Range>(), default_value = "graph")]
    pub(super) range: Range,
    /// Game-engine preset: size, format and manifest numbers for unity, unreal or godot (overrides --format and rounds --size to a size the engine accepts).
    #[arg(long, value_parser = choice::<Preset>())]
    pub(super) preset: Option<Preset>,
    /// Colormap of the rendered, hillshaded preview written per output (`<output>.preview.png`).
    #[arg(long, value_parser = choice::<Colormap>(), default_value = "terrain")]
    pub(super) preview: Colormap,
    /// Do not write previews.
    #[arg(long)]
    pub(super) no_preview: bool,
    /// Write a tangent-space normal map per height output (`<output>.normal.png`).
    #[arg(long)]
    pub(super) normal_map: bool,
    /// Normal map bit depth: 8 or 16.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u8).range(8..=16))]
    pub(super) normal_bits: u8,
    /// Normal map green channel: opengl (Y up: Unity, Godot, Blender) or directx (Y down: Unreal).
    #[arg(long, value_parser = choice::<NormalY>(), default_value = "opengl")]
    pub(super) normal_y: NormalY,
    /// Write a mesh per height output.
    #[arg(long, value_parser = choice::<MeshFormat>())]
    pub(super) mesh: Option<MeshFormat>,
    /// Mesh decimation: keep every N-th sample (1 = full resolution).
    #[arg(long, default_value_t = 1)]
    pub(super) mesh_step: usize,
    /// Simplify each mesh (meshoptimizer, border kept) to the fewest triangles whose largest
    /// vertical error over the heightmap's samples is at most this many metres (measured;
    /// recorded with the triangle count in manifest.json).
    #[arg(long, value_name = "METRES")]
    pub(super) mesh_error_m: Option<f32>,
    /// Splat map: NAME=MASK1,MASK2[,MASK3[,MASK4]] packs up to four mask outputs into NAME.splat.png (RGBA). Repeatable.
    #[arg(long = "splat", value_name = "NAME=MASKS")]
    pub(super) splat: Vec<String>,
    /// Normalise splat weights to sum to 1 where any is positive.
    #[arg(long)]
    pub(super) splat_normalize: bool,
}

impl ExportArgs {
    pub(super) fn exports(&self) -> anyhow::Result<Exports> {
        let splats = self
            .splat
            .iter()
            .map(|s| {
                let (name, masks) = s
                    .split_once('=')
                    .ok_or_else(|| anyhow!("--splat {s}: expected NAME=MASK1,MASK2,…"))?;
                Ok((
                    name.to_owned(),
                    masks.split(',').map(str::to_owned).collect(),
                ))
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        if self.normal_bits != 8 && self.normal_bits != 16 {
            return Err(anyhow!(
                "--normal-bits must be 8 or 16, got {}",
                self.normal_bits
            ));
        }
        if self.mesh_step == 0 {
            return Err(anyhow!("--mesh-step must be at least 1"));
        }
        if let Some(e) = self.mesh_error_m {
            if !(e.is_finite() && e >= 0.0) {
                return Err(anyhow!("--mesh-error-m {e}: expected metres, 0 or more"));
            }
            if self.mesh.is_none() {
                return Err(anyhow!("--mesh-error-m needs --mesh obj or --mesh glb"));
            }
            if self.mesh_step != 1 {
                return Err(anyhow!("--mesh-error-m and --mesh-step are alternatives: the simplified mesh starts from every sample"));
            }
        }
        Ok(Exports {
            formats: self.format.clone(),
            range: self.range,
            preset: self.preset,
            preview: (!self.no_preview).then_some(self.preview),
            normal_map: self.normal_map.then_some((self.normal_bits, self.normal_y)),
            mesh: self.mesh.map(|m| (m, self.mesh_step)),
            mesh_error_m: self.mesh_error_m,
            splats,
            splat_normalize: self.splat_normalize,
        })
    }
}

/// Tiled, out-of-core builds (see the README's "Large worlds").
#[derive(clap::Args)]
pub(super) struct TileArgs {
    /// Build in tiles, AxB across and down (e.g. 8x8): no whole-map field is held in memory.
    /// With --preset unreal or unity the tiles share their borders and are named as those
    /// engines import them.
    #[arg(long, value_name = "AxB", conflicts_with = "tile_size")]
    pub(super) tiles: Option<orogen::tiles::TileRequest>,
    /// Build in tiles of this many samples per side.
    #[arg(long, value_name = "SAMPLES")]
    pub(super) tile_size: Option<usize>,
    /// With tiles: also write each output as one whole-map file (r16 or f32), streamed row by
    /// row from the tiles.
    #[arg(long, value_parser = choice::<Format>(), value_delimiter = ',')]
    pub(super) stitch: Vec<Format>,
    /// With tiles: the size of the coarse pass over the whole world, which a global node's
    /// stage reads when its own whole-map run would not fit the memory budget (its change is
    /// then upsampled onto each tile).
    #[arg(long, value_name = "SAMPLES", default_value_t = orogen::tiles::COARSE_MAX)]
    pub(super) coarse_size: usize,
    /// With tiles: the most memory one stage may hold for a global node's whole-map fields
    /// (e.g. 4G; default half of --max-memory, else of three quarters of this machine's
    /// memory). Past it, water runs
    /// tile by tile with the same result and other nodes are carried from the coarse pass.
    /// Set it to a cluster node's memory when planning on another machine.
    #[arg(long, value_name = "SIZE")]
    pub(super) stage_memory: Option<String>,
}

impl TileArgs {
    pub(super) fn request(&self) -> Option<orogen::tiles::TileRequest> {
        use orogen::tiles::TileRequest;
        self.tiles.or(self.tile_size.map(TileRequest::Size))
    }
}

/// Which graph, with what seed, overrides and permissions: shared by `build`, `plan`, `stats`
/// and `parity`.
#[derive(clap::Args)]
pub(super) struct GraphSource {
    /// The graph file (JSON) or bundle (.orogen).
    pub(super) graph: PathBuf,
    /// Graph seed (default: the graph's seed).
    #[arg(long)]
    pub(super) seed: Option<u64>,
    /// Override a parameter: NODE.PARAM=VALUE (VALUE is JSON, or a plain string). Repeatable.
    #[arg(long = "set", value_name = "NODE.PARAM=VALUE")]
    pub(super) set: Vec<String>,
    /// Set a graph parameter: NAME=VALUE (VALUE is JSON, or a plain string), checked against
    /// its declared range like a value in the file. Repeatable.
    #[arg(long = "param", value_name = "NAME=VALUE")]
    pub(super) param: Vec<String>,
    /// Let the graph's references (subgraph files, imported images) reach into FOLDER although
    /// it is outside the graph's project (docs/security.md). Repeatable. Only for files you trust.
    #[arg(long = "allow-outside", value_name = "FOLDER")]
    pub(super) allow_outside: Vec<PathBuf>,
}

/// The graph to evaluate and how: shared by `build`, `plan` and `stats`.
#[derive(clap::Args)]
pub(super) struct GraphArgs {
    #[command(flatten)]
    pub(super) source: GraphSource,
    /// Samples per side (default: the graph's resolution).
    #[arg(long)]
    pub(super) size: Option<usize>,
    /// Refuse to run when the estimated peak memory exceeds this (e.g. 8G, 512M; default:
    /// three quarters of physical memory).
    #[arg(long, value_name = "SIZE")]
    pub(super) max_memory: Option<String>,
}

/// When `path` is a bundle, unpacks it into a temporary folder (kept while the returned
/// value lives) and points `path` at its main graph.
pub(super) fn open_bundle(
    path: &mut PathBuf,
) -> Result<Option<orogen::document::bundle::Opened>, ExitCode> {
    if !orogen::document::bundle::is_bundle(path) {
        return Ok(None);
    }
    match orogen::document::bundle::open(path, Some(&cancel_on_signal())) {
        Ok(o) => {
            path.clone_from(&o.graph);
            Ok(Some(o))
        }
        Err(e) => Err(exit_after(&e, EXIT_INVALID)),
    }
}

/// Parses `NAME=VALUE` of `--param`.
pub(super) fn parse_param(s: &str) -> anyhow::Result<(String, serde_json::Value)> {
    let (name, value) = s
        .split_once('=')
        .ok_or_else(|| anyhow!("--param {s}: expected NAME=VALUE"))?;
    let value =
        serde_json::from_str(value).unwrap_or_else(|_| serde_json::Value::String(value.to_owned()));
    Ok((name.to_owned(), value))
}

/// Parses `NODE.PARAM=VALUE`.
pub(super) fn parse_set(s: &str) -> anyhow::Result<(String, String, serde_json::Value)> {
    let (key, value) = s
        .split_once('=')
        .ok_or_else(|| anyhow!("--set {s}: expected NODE.PARAM=VALUE"))?;
    let (node, param) = key
        .split_once('.')
        .ok_or_else(|| anyhow!("--set {s}: expected NODE.PARAM=VALUE (no '.' in \"{key}\")"))?;
    let value =
        serde_json::from_str(value).unwrap_or_else(|_| serde_json::Value::String(value.to_owned()));
    Ok((node.to_owned(), param.to_owned(), value))
}

/// Loads a graph with `--set` overrides, `--size` check and `--seed`; on failure prints the
/// problems and returns the exit code. The memory check is at `--size`, or at `memory_side`²
/// when given (a tiled build's largest evaluation).
pub(super) fn load_graph(
    args: &GraphArgs,
    memory_side: Option<usize>,
) -> Result<orogen::Graph, ExitCode> {
    let GraphSource {
        graph: graph_path,
        seed,
        set,
        param,
        allow_outside,
    } = &args.source;
    let size = &args.size;
    let overrides: Result<Vec<_>, _> = set.iter().map(|s| parse_set(s)).collect();
    let overrides = overrides.map_err(|e| {
        eprintln!("error: {e}");
        ExitCode::from(EXIT_INVALID)
    })?;
    let params: Result<Vec<_>, _> = param.iter().map(|s| parse_param(s)).collect();
    let params = params.map_err(|e| {
        eprintln!("error: {e}");
        ExitCode::from(EXIT_INVALID)
    })?;
    if let Some(s) = *size {
        if !(2..=graph_file::MAX_RESOLUTION as usize).contains(&s) {
            eprintln!(
                "error: --size {s}: expected a resolution in [2, {}]",
                graph_file::MAX_RESOLUTION
            );
            return Err(ExitCode::from(EXIT_INVALID));
        }
    }
    let opts = graph_file::LoadOptions {
        set: &overrides,
        params: &params,
        allow_outside,
    };
    let mut graph = graph_file::load(graph_file::Source::File(graph_path), &opts).map_err(|d| {
        eprintln!("{d}");
        ExitCode::from(EXIT_INVALID)
    })?;
    if let Some(s) = *seed {
        graph.seed = s;
    }
    for (id, sg, uses) in graph.stale_subgraphs() {
        eprintln!(
            "{}: warning: {}; building with it as it is now (`orogen check --accept {}` records it)",
            orogen::io::owned::escape_path(graph_path),
            stale_message(&id, sg, uses),
            orogen::io::owned::escape_path(graph_path)
        );
    }
    check_memory(
        &graph,
        memory_side.unwrap_or(size.unwrap_or(graph.resolution)),
        args.max_memory.as_deref(),
        &Imports {
            base: graph_path.parent(),
            allow_outside,
        },
    )?;
    Ok(graph)
}

/// Where a graph's imports are read from, for counting what decoding them costs.
pub(super) struct Imports<'a> {
    pub base: Option<&'a std::path::Path>,
    pub allow_outside: &'a [PathBuf],
}

impl Imports<'_> {
    /// The largest decode cost of the images the outputs need (they are decoded one node at
    /// a time per wave, but two may share a wave: the two largest are counted), and the
    /// node of the largest. Files that cannot be resolved or read cost nothing here: the
    /// evaluation reports them.
    fn cost(&self, graph: &orogen::Graph) -> (u64, String) {
        let flat = graph.flattened();
        let needed = orogen::eval::Targets::Outputs.node_set(&flat);
        let base = self.base.unwrap_or(std::path::Path::new(""));
        let project = orogen::io::trust::Project::of_folder(base, self.allow_outside);
        let mut costs: Vec<(u64, String)> = flat
            .nodes
            .iter()
            .filter(|n| needed.contains(&n.id))
            .filter_map(|n| {
                let param = n.def.spec.traits.file_param?;
                let Some(orogen::node::ParamValue::Text(p)) = n.param(param) else {
                    return None;
                };
                let path = project.resolve(base, p).ok()?;
                let cost = orogen::io::heightmap::decode_cost(&path).ok()?;
                Some((cost, n.id.clone()))
            })
            .collect();
        costs.sort_by_key(|c| std::cmp::Reverse(c.0));
        let total = costs.iter().take(2).map(|c| c.0).sum();
        (
            total,
            costs.first().map(|c| c.1.clone()).unwrap_or_default(),
        )
    }
}

/// Refuses (exit 2, with the estimate) a graph whose estimated peak memory exceeds the budget.
/// The estimate counts what decoding its imported images holds (from their headers).
pub(super) fn check_memory(
    graph: &orogen::Graph,
    resolution: usize,
    max: Option<&str>,
    imports: &Imports,
) -> Result<(), ExitCode> {
    use orogen::eval::memory::{default_budget, estimate_peak_bytes, human_bytes, parse_bytes};
    let budget = match max.map(parse_bytes) {
        None => default_budget(),
        Some(Ok(b)) => b,
        Some(Err(e)) => {
            eprintln!("error: --max-memory {e}");
            return Err(ExitCode::from(EXIT_INVALID));
        }
    };
    // An invalid graph is reported by the evaluation with every diagnostic.
    let Ok(estimate) = estimate_peak_bytes(graph, resolution, &orogen::eval::Targets::Outputs)
    else {
        return Ok(());
    };
    let (decode, largest) = imports.cost(graph);
    let estimate = estimate.saturating_add(decode);
    if estimate > budget {
        let imported = if decode > 0 {
            format!(
                " (decoding its imports holds {} of it, the largest node \"{}\")",
                human_bytes(decode),
                orogen::io::owned::escape(&largest)
            )
        } else {
            String::new()
        };
        eprintln!(
            "error: building \"{}\" at {resolution}² needs an estimated {}{imported} of memory, more than the limit of {}{}; \
             use a smaller --size or raise --max-memory",
            orogen::io::owned::escape(&graph.name),
            human_bytes(estimate),
            human_bytes(budget),
            if max.is_none() { " (three quarters of this machine's memory)" } else { "" },
        );
        return Err(ExitCode::from(EXIT_INVALID));
    }
    Ok(())
}

/// A cancel token that Ctrl-C (SIGINT) or SIGTERM trips: running nodes stop within ~100 ms,
/// nothing half-written is left, and the exit code is 130. A second signal exits at once.
pub(super) fn cancel_on_signal() -> CancelToken {
    // One token for the process, its handler installed once (a second `set_handler` fails,
    // and a token made then would never trip).
    static CANCEL: std::sync::OnceLock<CancelToken> = std::sync::OnceLock::new();
    CANCEL
        .get_or_init(|| {
            let cancel = CancelToken::new();
            let on_signal = cancel.clone();
            let _ = ctrlc::set_handler(move || {
                if on_signal.is_cancelled() {
                    std::process::exit(i32::from(EXIT_INTERRUPTED));
                }
                on_signal.cancel();
            });
            cancel
        })
        .clone()
}

/// The exit code of a command that failed with `message`: interrupted (130) when the user
/// cancelled, else `code`; the message is printed either way.
pub(super) fn exit_after(message: &str, code: u8) -> ExitCode {
    eprintln!("error: {message}");
    if cancel_on_signal().is_cancelled() {
        ExitCode::from(EXIT_INTERRUPTED)
    } else {
        ExitCode::from(code)
    }
}
