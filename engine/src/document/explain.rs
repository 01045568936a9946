//! Why a node was computed again (`orogen build --explain`): each build records, beside the
//! disk cache, what every node's key was made of (type, parameters, inputs, resolution, seed,
//! world); the next build of the same graph file compares its nodes with that record and
//! names what changed — a parameter (old → new), an input whose node changed, the resolution —
//! or, when nothing did, why the result was not at hand (not stored, evicted, damaged).

use crate::eval::disk::hex;
use crate::eval::{EvalResult, NodeStatus, Targets};
use crate::graph::Graph;
use crate::node::{ParamKind, ParamValue};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What one build's keys were made of.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Record {
    pub resolution: usize,
    pub seed: u64,
    pub world: [f64; 3],
    pub nodes: BTreeMap<String, NodeRecord>,
}

/// One node's key and what went into it.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct NodeRecord {
    pub key: String,
    #[serde(rename = "type")]
    pub node_type: String,
    pub params: BTreeMap<String, String>,
    /// Input port → the source node's key (`-` when unwired).
    pub inputs: BTreeMap<String, String>,
    /// Source node of each wired input (for the message).
    pub from: BTreeMap<String, String>,
    /// Whether its result went to the cache.
    pub stored: bool,
}

/// Where the record of `graph_file`'s builds lives in cache folder `dir`.
#[must_use]
pub fn record_path(dir: &Path, graph_file: &Path) -> PathBuf {
    let abs = std::path::absolute(graph_file).unwrap_or_else(|_| graph_file.to_path_buf());
    let h = blake3::hash(abs.to_string_lossy().as_bytes());
    dir.join("builds")
        .join(format!("{}.json", &h.to_hex()[..32]))
}

/// Reads a record; a missing or unreadable one is `None` (the explanation says so).
#[must_use]
pub fn load(path: &Path) -> Option<Record> {
    let text = crate::io::owned::read_state(path, crate::io::owned::MAX_STATE_BYTES).ok()??;
    serde_json::from_str(&text).ok()
}

/// Writes a record atomically; a failure only costs the next explanation.
pub fn save(path: &Path, record: &Record) {
    if let Some(dir) = path.parent() {
        // The records' folder must be the cache's own, not a link planted in its place.
        if crate::io::owned::ensure_dir(dir).is_err() {
            return;
        }
    }
    if let Ok(text) = serde_json::to_string(record) {
        let _ = crate::io::atomic::write_bytes_atomic(path, text.as_bytes());
    }
}

/// The record of an evaluation of `graph` (nodes it did not need keep their entry in
/// `previous`).
#[must_use]
pub fn record(graph: &Graph, result: &EvalResult, previous: Option<&Record>) -> Record {
    let flat = graph.flattened();
    let mut nodes = previous.map(|p| p.nodes.clone()).unwrap_or_default();
    for n in &flat.nodes {
        let Some(key) = result.keys.get(&n.id) else {
            continue;
        };
        let mut inputs = BTreeMap::new();
        let mut from = BTreeMap::new();
        for (port, r) in n.def.spec.inputs.iter().zip(&n.inputs) {
            let k = r
                .as_ref()
                .and_then(|r| result.keys.get(&r.node))
                .map_or_else(|| "-".to_owned(), |k| hex(k));
            inputs.insert(port.name.to_owned(), k);
            if let Some(r) = r {
                from.insert(port.name.to_owned(), r.node.clone());
            }
        }
        let params = n
            .def
            .params
            .iter()
            .zip(&n.params)
            .map(|(p, v)| {
                let text = match (&p.kind, v) {
                    (ParamKind::Choice { options, .. }, ParamValue::Choice(i)) => options
                        .get(*i)
                        .map_or_else(|| v.to_string(), |o| (*o).to_owned()),
                    _ => v.to_string(),
                };
                (p.name.to_owned(), text)
            })
            .collect();
        nodes.insert(
            n.id.clone(),
            NodeRecord {
                key: hex(key),
                node_type: n.def.spec.id.to_owned(),
                params,
                inputs,
                from,
                stored: result.disk_stored.contains(&n.id)
                    || (result.status.get(&n.id) == Some(&NodeStatus::Cached)),
            },
        );
    }
    Record {
        resolution: result.resolution,
        seed: graph.seed,
        world: [
            graph.world.size_m,
            graph.world.height_min_m,
            graph.world.height_max_m,
        ],
        nodes,
    }
}

/// Why node `id` of `now` was computed, against the `previous` build's record.
#[must_use]
pub fn why(id: &str, now: &Record, previous: Option<&Record>, result: &EvalResult) -> String {
    let Some(prev) = previous else {
        return "no earlier build of this graph file is recorded in the cache".into();
    };
    let (Some(n), Some(p)) = (now.nodes.get(id), prev.nodes.get(id)) else {
        return "a node the earlier build did not have".into();
    };
    if let Some(damage) = result.disk_damaged.get(id) {
        return format!("its cache entry was damaged ({damage}) and was recomputed");
    }
    if n.key == p.key {
        return if p.stored {
            "unchanged, but its stored result is gone (trimmed to the cache's size limit, or cleared)".into()
        } else {
            "unchanged; its result was not stored (computing it is faster than reading it back)"
                .into()
        };
    }
    let mut reasons = Vec::new();
    if n.node_type != p.node_type {
        reasons.push(format!("type {} → {}", p.node_type, n.node_type));
    }
    for (name, v) in &n.params {
        match p.params.get(name) {
            Some(old) if old != v => reasons.push(format!("parameter {name} {old} → {v}")),
            None => reasons.push(format!("parameter {name} = {v} (new)")),
            _ => {}
        }
    }
    for (port, k) in &n.inputs {
        if p.inputs.get(port) != Some(k) {
            let src = n.from.get(port).map_or("unwired", String::as_str);
            let was = p.from.get(port).map_or("unwired", String::as_str);
            if src == was {
                reasons.push(format!("input {port} ({src}) changed"));
            } else {
                reasons.push(format!("input {port} rewired: {was} → {src}"));
            }
        }
    }
    if now.resolution != prev.resolution {
        reasons.push(format!(
            "resolution {} → {}",
            prev.resolution, now.resolution
        ));
    }
    if now.seed != prev.seed {
        reasons.push(format!("graph seed {} → {}", prev.seed, now.seed));
    }
    if now.world != prev.world {
        reasons.push("world frame changed".into());
    }
    if reasons.is_empty() {
        reasons.push("a file it reads changed".into());
    }
    reasons.join("; ")
}

/// The explanation of a whole evaluation: one line per computed node with its reason, then
/// the nodes read from the cache and those not needed because of them.
#[must_use]
pub fn lines(
    graph: &Graph,
    result: &EvalResult,
    previous: Option<&Record>,
    now: &Record,
) -> Vec<String> {
    let flat = graph.flattened();
    let mut computed = Vec::new();
    let mut read = Vec::new();
    let mut memory = Vec::new();
    let mut skipped = Vec::new();
    let wanted = Targets::Outputs.node_set(&flat);
    for n in flat.nodes.iter().filter(|n| wanted.contains(&n.id)) {
        match result.status.get(&n.id) {
            Some(NodeStatus::Computed) => computed.push(n.id.as_str()),
            Some(NodeStatus::Cached) if result.disk_read.contains(&n.id) => {
                read.push(n.id.as_str());
            }
            Some(NodeStatus::Cached) => memory.push(n.id.as_str()),
            Some(_) => {}
            None => skipped.push(n.id.as_str()),
        }
    }
    let mut out = vec![format!(
        "{} computed, {} read from the cache, {} not needed",
        computed.len(),
        read.len() + memory.len(),
        skipped.len()
    )];
    for id in &computed {
        out.push(format!(
            "  computed {id}: {}",
            why(id, now, previous, result)
        ));
    }
    if !read.is_empty() {
        out.push(format!("  read from the cache: {}", read.join(", ")));
    }
    if !memory.is_empty() {
        out.push(format!("  already in memory: {}", memory.join(", ")));
    }
    if !skipped.is_empty() {
        out.push(format!(
            "  not needed (only read by results taken from the cache): {}",
            skipped.join(", ")
        ));
    }
    out
}
