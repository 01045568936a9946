//! Cache keys: what a node's result depends on, hashed ([`node_key`] lists it).

use super::EvalOptions;
use super::Evaluator;
use super::Key;
use super::Targets;
use crate::field::Field;
use crate::graph::Graph;
use crate::node::Coercion;
use crate::node::NodeError;
use crate::node::Window;
use std::path::Path;
use std::sync::Arc;

/// Where a graph's references resolve and what they may reach.
pub(super) struct Scope<'a> {
    pub base_dir: Option<&'a Path>,
    pub allow_outside: &'a [std::path::PathBuf],
    pub arrays: Option<&'a super::ArrayInputs>,
}

/// What a node's result in a windowed evaluation (a tile) depends on besides the graph.
#[derive(Clone, Copy, Debug)]
pub(super) struct Tile {
    /// The part of the grid asked for.
    pub window: Window,
    /// The part this node produces and the part it computes on (its consumers' needs).
    pub span: Option<(Window, Window)>,
    /// The size of the whole-world evaluation global nodes take their result from.
    pub coarse: Option<usize>,
}

/// What identifies the engine's outputs beyond each node's version: the crate version and
/// the pinned hashes of every example output (`tests/golden/hashes.txt`, which a change of
/// any output must re-bless), so disk cache entries written by another build of the engine
/// whose outputs differ are never read.
fn engine_id() -> &'static [u8; 32] {
    static ID: std::sync::OnceLock<[u8; 32]> = std::sync::OnceLock::new();
    ID.get_or_init(|| {
        let mut h = blake3::Hasher::new();
        h.update(env!("CARGO_PKG_VERSION").as_bytes());
        h.update(include_bytes!("../../../tests/golden/hashes.txt"));
        *h.finalize().as_bytes()
    })
}

/// Node `i`'s cache key: BLAKE3, cut to 16 bytes, of
/// - the engine's id ([`engine_id`]: crate version and pinned output hashes);
/// - the node type's id and version, and its output ports' kinds;
/// - the folders `--allow-outside` lets it read;
/// - its canonical parameter values, and the node's `key_extra` (for `import`: the file's
///   resolved path, size, modification time and, on Unix, device, inode and change time);
/// - the content hash of the array an `array_input` reads (or "no array");
/// - for each input port: the source's key (or "unkeyed" for a source outside the
///   evaluation), output index and the coercion to the port's kind, or "unwired";
/// - the resolution; in a windowed evaluation the window, the span the node produces and
///   computes on, and the coarse size;
/// - the graph seed and the world frame.
///
/// The evaluator then salts the key of a node read from a stored stage with the stage's tag
/// (`EvalOptions::stored`). This list is the one statement of what a key holds.
pub(super) fn node_key(
    graph: &Graph,
    i: usize,
    resolution: usize,
    scope: &Scope,
    keys: &[Option<Key>],
    tile: Option<Tile>,
) -> Key {
    let n = &graph.nodes[i];
    let mut h = blake3::Hasher::new();
    h.update(engine_id());
    let spec = &n.def.spec;
    h.update(&(spec.id.len() as u64).to_le_bytes());
    h.update(spec.id.as_bytes());
    h.update(&spec.version.to_le_bytes());
    // The output ports' kinds: a bypassed node's unwired colour output (3 channels) and
    // height output (1) must not share a key.
    for o in spec.outputs {
        h.update(&[o.kind as u8]);
    }
    // What files may be read decides whether a node refuses or reads: a result computed with
    // `--allow-outside` must not serve a build without it.
    for p in scope.allow_outside {
        h.update(p.as_os_str().as_encoded_bytes());
        h.update(&[0]);
    }
    let base_dir = scope.base_dir;
    for v in &n.params {
        v.hash_into(&mut h);
    }
    let extra = n.def.key_extra(base_dir, &n.params);
    h.update(&(extra.len() as u64).to_le_bytes());
    h.update(&extra);
    // An array input's result is its array's: the key holds the array's content hash.
    if let Some(param) = spec.traits.array_param {
        let name = match n.param(param) {
            Some(crate::node::ParamValue::Text(name)) => Some(name.as_str()),
            _ => None,
        };
        match name.and_then(|name| scope.arrays?.get(name)) {
            Some(a) => h.update(&a.hash),
            None => h.update(b"no array"),
        };
    }
    for (port, input) in spec.inputs.iter().zip(&n.inputs) {
        match input
            .as_ref()
            .and_then(|r| Some((r, graph.index_of(&r.node)?)))
        {
            Some((r, src)) => {
                // A source outside the evaluation (upstream of a stored node) has no key:
                // hashed as such, never as a key of zeros.
                match keys[src] {
                    Some(k) => h.update(b"I").update(&k),
                    None => h.update(b"I unkeyed"),
                };
                let sdef = graph.nodes[src].def;
                h.update(
                    &(sdef.output_index(&r.output).unwrap_or(usize::MAX) as u64).to_le_bytes(),
                );
                let coerce = graph
                    .output_kind(r)
                    .and_then(|k| Coercion::between(k, port.kind));
                h.update(&[coerce.map_or(255, |c| c as u8)]);
            }
            None => {
                h.update(b"-");
            }
        }
    }
    h.update(&(resolution as u64).to_le_bytes());
    if let Some(t) = tile {
        // A tile: which part of the grid (a whole-map key has no window, as before), which
        // part of it this node covers, and the coarse evaluation behind its global nodes.
        let (out, eval) = t.span.unwrap_or((t.window, t.window));
        for w in [t.window, out, eval] {
            for v in [w.x0, w.y0, w.width, w.height] {
                h.update(&(v as u64).to_le_bytes());
            }
        }
        h.update(&(t.coarse.unwrap_or(0) as u64).to_le_bytes());
    }
    h.update(&graph.seed.to_le_bytes());
    graph.world.hash_into(&mut h);
    let mut key = [0u8; 16];
    key.copy_from_slice(&h.finalize().as_bytes()[..16]);
    key
}

/// What feeds input `port` of node `i`, evaluated at `resolution` by a fresh evaluation of
/// the graph upstream of it (coerced to the port's kind); `None` when the port is unwired.
/// The nodes' coarse-to-fine evaluation asks for it at its base level (see
/// [`EvalCtx::upstream`]).
pub(super) fn upstream_at(
    graph: &Graph,
    i: usize,
    port: usize,
    resolution: usize,
    opts: &EvalOptions,
) -> Result<Option<Arc<Field>>, NodeError> {
    let n = &graph.nodes[i];
    let (Some(spec), Some(Some(r))) = (n.def.spec.inputs.get(port), n.inputs.get(port)) else {
        return Ok(None);
    };
    // Each failure names the input, the node feeding it and the cause.
    let failed = |why: String| {
        NodeError::Failed(format!(
            "input \"{}\" (from \"{}\") at {resolution}²: {why}",
            spec.name, r.node
        ))
    };
    let sub = Evaluator::new()
        .evaluate(
            graph,
            &EvalOptions {
                resolution: Some(resolution),
                targets: Targets::Nodes(vec![r.node.clone()]),
                cancel: opts.cancel.clone(),
                progress: None,
                base_dir: opts.base_dir,
                allow_outside: opts.allow_outside,
                keep_all: false,
                window: None,
                coarse: None,
                arrays: opts.arrays,
                stored: None,
            },
        )
        .map_err(|d| {
            failed(
                d.iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("; "),
            )
        })?;
    if opts.cancel.is_cancelled() {
        return Err(NodeError::Cancelled);
    }
    let f = sub.field(graph, r).ok_or_else(|| {
        failed(match sub.status.get(&r.node) {
            Some(super::NodeStatus::Failed(NodeError::Cancelled)) => return NodeError::Cancelled,
            Some(super::NodeStatus::Failed(e)) => e.to_string(),
            Some(super::NodeStatus::Incomplete { reason }) => format!("incomplete: {reason}"),
            Some(super::NodeStatus::Skipped { upstream }) => {
                format!("not evaluated: \"{upstream}\" upstream of it failed")
            }
            _ => format!("the node has no output \"{}\"", r.output),
        })
    })?;
    let kind = graph
        .output_kind(r)
        .ok_or_else(|| failed(format!("the node has no output \"{}\"", r.output)))?;
    let coerce = Coercion::between(kind, spec.kind).ok_or_else(|| {
        failed(format!(
            "a {} output cannot feed a {} input",
            kind.name(),
            spec.kind.name()
        ))
    })?;
    Ok(Some(coerce.apply(&f, &graph.world)))
}
