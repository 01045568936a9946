//! Subgraph references: loading a referenced file once per load (inside the project,
//! bounded in depth and size), and the Merkle content hash a graph records for it.
//!
//! Content hashes are a Merkle hash (`content_hash`): BLAKE3 of the graph's canonical text in
//! which each subgraph node carries its own graph's content hash. That makes them
//! whitespace-insensitive, depth-sensitive, and linear in the file: hashing never re-serialises
//! what lies below, so 25 files each using the next twice cost 25 hashes, not 2²⁴. A load reads,
//! parses and hashes each subgraph file once (a per-load table by canonical path) and bounds
//! depth and expanded node count while it goes (docs/security.md). Build copies, tiled plans and
//! recovery files embed subgraphs (`to_string_embedded`), so they stand alone.

use super::super::{
    error, kind_of, load_text, migrate, save::canonical, save::to_value_as, save::SubgraphsAs, Ctx,
    LoadOptions, Loaded,
};
use super::from_value;
use crate::graph::{Diagnostic, Diagnostics, Graph, Subgraph};
use crate::io::trust::{self};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// The content hash of a graph as a subgraph: BLAKE3 of its canonical text in which each
/// subgraph node carries its own graph's content hash (a Merkle tree), so reformatting a file
/// changes nothing, editing anything it uses (at any depth) does, and hashing costs the size
/// of the graph itself however deep or often its subgraphs are used. Where nodes sit on the
/// canvas, what they are called there and its comment frames (`position`, `label`, `frames`)
/// are left out: arranging a library file does not make every graph using it report a change.
#[must_use]
pub fn content_hash(g: &Graph) -> String {
    let mut v = to_value_as(g, SubgraphsAs::Current);
    if let Some(o) = v.as_object_mut() {
        o.remove("frames");
    }
    if let Some(nodes) = v.get_mut("nodes").and_then(Value::as_array_mut) {
        for n in nodes.iter_mut().filter_map(Value::as_object_mut) {
            n.remove("position");
            n.remove("label");
        }
    }
    let text = serde_json::to_string(&canonical(v)).unwrap_or_default();
    format!("blake3:{}", blake3::hash(text.as_bytes()).to_hex())
}

/// Loads the graph a subgraph node uses: its `embedded` copy if it has one, else the file
/// `graph` names (relative to the including file's folder). Errors name the file and, for an
/// include cycle, the chain of files.
pub(super) fn load_subgraph(
    obj: &Map<String, Value>,
    nid: Option<&str>,
    ctx: &Ctx,
    diags: &mut Vec<Diagnostic>,
) -> Option<Subgraph> {
    let err = |field: &str, msg: String, diags: &mut Vec<Diagnostic>| {
        error(diags, nid, field, msg);
    };
    let path = match obj.get("graph") {
        Some(Value::String(p)) if valid_relative_path(p) => p.clone(),
        Some(Value::String(p)) => {
            err("graph", format!("\"{p}\" is not a relative path with '/' separators (like \"lib/coastline.json\")"), diags);
            return None;
        }
        other => {
            err(
                "graph",
                format!(
                    "a subgraph node names its graph file, relative to this file's folder; found {}",
                    other.map_or("nothing", kind_of)
                ),
                diags,
            );
            return None;
        }
    };
    let recorded_hash = match obj.get("hash") {
        None => String::new(),
        Some(Value::String(h)) => h.clone(),
        Some(other) => {
            err(
                "hash",
                format!("expected \"blake3:<hex>\", found {}", kind_of(other)),
                diags,
            );
            String::new()
        }
    };
    let loaded = match obj.get("embedded") {
        Some(embedded) => embedded_subgraph(embedded, &path, ctx),
        None => file_subgraph(&path, ctx).map_err(|e| ("graph", e)),
    };
    let (graph, hash) = match loaded {
        Ok(l) => l,
        Err((field, e)) => {
            err(field, e, diags);
            return None;
        }
    };
    Some(Subgraph {
        path,
        recorded_hash,
        hash,
        graph,
    })
}

/// Bytes of the compact text of `g` with every subgraph embedded (what a build copy holds
/// before pretty-printing), counted only up to just past `cap`. Each distinct subgraph (path
/// and content) is measured once, so the work is linear in the files however often they are
/// used.
pub(crate) fn embedded_len(g: &Graph, cap: u64) -> u64 {
    fn go<'a>(
        g: &'a Graph,
        cap: u64,
        memo: &mut std::collections::HashMap<(&'a str, &'a str), u64>,
    ) -> u64 {
        let own = serde_json::to_string(&to_value_as(g, SubgraphsAs::Recorded))
            .map_or(0, |t| t.len() as u64);
        let mut n = own;
        for node in &g.nodes {
            let Some(sg) = &node.subgraph else { continue };
            let key = (sg.path.as_str(), sg.hash.as_str());
            let sub = if let Some(&v) = memo.get(&key) {
                v
            } else {
                let v = go(&sg.graph, cap, memo);
                memo.insert(key, v);
                v
            };
            n = n.saturating_add(sub);
            if n > cap {
                return n;
            }
        }
        n
    }
    go(g, cap, &mut std::collections::HashMap::new())
}

/// A subgraph embedded in its node (build copies, bundles, recovery files): its graph and
/// content hash, or the field and message of why not.
fn embedded_subgraph(
    embedded: &Value,
    path: &str,
    ctx: &Ctx,
) -> Result<(Graph, String), (&'static str, String)> {
    if ctx.depth + 1 >= trust::MAX_SUBGRAPH_DEPTH {
        return Err((
            "embedded",
            format!(
                "subgraphs nested more than {} deep (embedded copies count like files): Orogen refuses deeper nesting",
                trust::MAX_SUBGRAPH_DEPTH
            ),
        ));
    }
    let value = migrate(embedded.clone()).map_err(|d| ("embedded", d.to_string()))?;
    let mut inner = Vec::new();
    let inner_ctx = Ctx {
        depth: ctx.depth + 1,
        ..ctx.clone()
    };
    let g = from_value(&value, &mut inner, &inner_ctx, &[]);
    if inner.iter().any(Diagnostic::is_error) {
        let d = Diagnostics {
            file: path.to_owned(),
            items: inner,
        };
        return Err(("graph", load_failure(path, &d)));
    }
    let g = g.ok_or_else(|| ("graph", format!("subgraph \"{path}\" cannot be loaded")))?;
    let hash = content_hash(&g);
    Ok((g, hash))
}

/// A subgraph file `path` (relative to the including file's folder): inside the project, not
/// a cycle, not too deep, loaded once per load; its graph and content hash, or why not.
fn file_subgraph(path: &str, ctx: &Ctx) -> Result<(Graph, String), String> {
    // A folder to look in and its project come together (both from the file's folder).
    let (Some(base), Some(project)) = (&ctx.base, &ctx.project) else {
        return Err(format!("subgraph \"{path}\" cannot be found: this graph was not loaded from a file, so it has no folder to look in (embed the subgraph, or load the graph from its file)"));
    };
    let file = base.join(path);
    let canonical = std::fs::canonicalize(&file).map_err(|e| {
        format!(
            "cannot read subgraph file \"{path}\" ({}): {e}",
            ctx.show(&file)
        )
    })?;
    project
        .check(path, &canonical)
        .map_err(|e| format!("subgraph file {e}"))?;
    if let Some(k) = ctx.chain.iter().position(|c| *c == canonical) {
        let names: Vec<String> = ctx.chain[k..]
            .iter()
            .chain(std::iter::once(&canonical))
            .map(|p| ctx.show(p))
            .collect();
        return Err(format!(
            "include cycle: {} (a graph cannot use itself as a subgraph, directly or not)",
            names.join(" → ")
        ));
    }
    if ctx.chain.len() >= trust::MAX_SUBGRAPH_DEPTH || ctx.depth + 1 >= trust::MAX_SUBGRAPH_DEPTH {
        return Err(format!(
            "subgraphs nested more than {} deep: {} (Orogen refuses deeper nesting)",
            trust::MAX_SUBGRAPH_DEPTH,
            chain_summary(ctx, &canonical)
        ));
    }
    let memo = ctx.loaded.borrow().get(&canonical).cloned();
    if let Some(l) = memo {
        // Said once: a file used many times that fails would otherwise repeat its message at
        // every use, multiplying at every level.
        return l.map_err(|_| {
            format!("subgraph \"{path}\" cannot be loaded (the same file is refused for another node: see its message)")
        });
    }
    let l = load_subgraph_file(&canonical, path, ctx);
    ctx.loaded.borrow_mut().insert(canonical, l.clone());
    l
}

/// Reads, parses and hashes one subgraph file (already resolved inside the project), its own
/// subgraphs included. The error is the message for the node using it.
pub(super) fn load_subgraph_file(canonical: &Path, path: &str, ctx: &Ctx) -> Loaded {
    let text = trust::read_text(canonical, trust::MAX_GRAPH_BYTES, None)
        .map_err(|e| format!("cannot read subgraph file \"{path}\": {e}"))?;
    let mut chain = ctx.chain.clone();
    chain.push(canonical.to_path_buf());
    let inner_ctx = Ctx {
        base: Some(
            canonical
                .parent()
                .map_or_else(PathBuf::new, Path::to_path_buf),
        ),
        chain,
        root: ctx.root.clone(),
        project: ctx.project.clone(),
        loaded: Rc::clone(&ctx.loaded),
        depth: ctx.depth + 1,
    };
    match load_text(&text, path, &LoadOptions::default(), &inner_ctx) {
        Ok(g) => {
            let hash = content_hash(&g);
            Ok((g, hash))
        }
        Err(d) => Err(load_failure(path, &d)),
    }
}

/// What a subgraph node says when its graph cannot be loaded: the graph's errors.
pub(super) fn load_failure(path: &str, d: &Diagnostics) -> String {
    let problems: Vec<String> = d
        .items
        .iter()
        .filter(|x| x.is_error())
        .map(ToString::to_string)
        .collect();
    format!(
        "subgraph \"{path}\" cannot be loaded: {}",
        problems.join("; ")
    )
}

/// The chain of files from the outermost to `last`, the middle elided when long.
pub(super) fn chain_summary(ctx: &Ctx, last: &Path) -> String {
    let names: Vec<String> = ctx
        .chain
        .iter()
        .map(PathBuf::as_path)
        .chain(std::iter::once(last))
        .map(|p| ctx.show(p))
        .collect();
    if names.len() <= 8 {
        return names.join(" → ");
    }
    format!(
        "{} → … ({} more) … → {}",
        names[..3].join(" → "),
        names.len() - 6,
        names[names.len() - 3..].join(" → ")
    )
}

/// A relative path with `/` separators, no empty or `.` parts (`..` allowed: a library next
/// to the graph's folder).
pub(super) fn valid_relative_path(p: &str) -> bool {
    !p.is_empty()
        && p.len() <= 1024
        && !p.starts_with('/')
        && !p.contains('\\')
        && !p.contains(':')
        && p.split('/').all(|c| !c.is_empty() && c != ".")
}
