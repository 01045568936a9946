//! `orogen check`: every problem of a graph file, and `--accept` of changed subgraph files.

use orogen::document::graph_file;
use std::path::PathBuf;

/// `orogen check` of one file: errors, warnings (incomplete nodes, saying whether they feed an
/// output), outputs that cannot be built, the memory estimate. True when every output builds.
pub(super) fn check_one(path: &std::path::Path, accept: bool, allow_outside: &[PathBuf]) -> bool {
    let opts = graph_file::LoadOptions {
        allow_outside,
        ..graph_file::LoadOptions::default()
    };
    let mut g = match graph_file::load(graph_file::Source::File(path), &opts) {
        Ok(g) => g,
        Err(d) => {
            eprintln!("{d}");
            let n = d.items.len();
            eprintln!(
                "{}: {n} problem{}",
                orogen::io::owned::escape_path(path),
                if n == 1 { "" } else { "s" }
            );
            return false;
        }
    };
    for p in &g.parameters {
        let unit = if p.spec.unit.is_empty() {
            String::new()
        } else {
            format!(" {}", p.spec.unit)
        };
        println!(
            "{}: parameter {} = {}{unit} ({}){}",
            orogen::io::owned::escape_path(path),
            p.spec.name,
            p.value.display(p.spec),
            p.spec.expected(),
            if p.spec.doc.is_empty() {
                String::new()
            } else {
                format!(": {}", p.spec.doc)
            }
        );
    }
    let stale: Vec<String> = g
        .stale_subgraphs()
        .into_iter()
        .map(|(id, sg, uses)| stale_message(&id, sg, uses))
        .collect();
    if !stale.is_empty() && accept {
        accept_subgraphs(&mut g);
        if let Err(e) = graph_file::save_file(path, &g) {
            eprintln!(
                "{}: error: cannot write: {e}",
                orogen::io::owned::escape_path(path)
            );
            return false;
        }
        for s in &stale {
            println!("{}: accepted: {s}", orogen::io::owned::escape_path(path));
        }
    } else {
        for s in &stale {
            eprintln!(
                "{}: warning: {s}; the build uses the file as it is now — review the change, then `orogen check --accept {}` records it",
                orogen::io::owned::escape_path(path),
                orogen::io::owned::escape_path(path)
            );
        }
    }
    let feeding = orogen::eval::Targets::Outputs.node_set(&g);
    let warnings = g.validate();
    for w in &warnings {
        let scratch = w.node.as_ref().is_some_and(|n| !feeding.contains(n));
        let note = if scratch { " (it feeds no output)" } else { "" };
        eprintln!("{}: {w}{note}", orogen::io::owned::escape_path(path));
    }
    let blocked = g.blocked_outputs();
    for b in &blocked {
        eprintln!("{}: error: {b}", orogen::io::owned::escape_path(path));
    }
    if !blocked.is_empty() {
        eprintln!(
            "{}: {} of {} output{} cannot be built",
            orogen::io::owned::escape_path(path),
            blocked.len(),
            g.outputs.len(),
            if g.outputs.len() == 1 { "" } else { "s" }
        );
        return false;
    }
    let mem = orogen::eval::memory::estimate_peak_bytes(
        &g,
        g.resolution,
        &orogen::eval::Targets::Outputs,
    )
    .map(orogen::eval::memory::human_bytes)
    .unwrap_or_default();
    let warned = match warnings.len() {
        0 => String::new(),
        1 => ", 1 warning".to_owned(),
        n => format!(", {n} warnings"),
    };
    println!(
        "{}: ok ({} nodes, {} outputs{warned}; estimated peak memory at {}²: {mem})",
        orogen::io::owned::escape_path(path),
        g.nodes.len(),
        g.outputs.len(),
        g.resolution
    );
    true
}

/// What `orogen check` and `build` say about a subgraph whose file changed since the graph
/// recorded its hash (or that has none recorded).
pub(super) fn stale_message(id: &str, sg: &orogen::graph::Subgraph, uses: usize) -> String {
    let more = if uses > 1 {
        format!(" (and {} more references to it)", uses - 1)
    } else {
        String::new()
    };
    let msg = if sg.recorded_hash.is_empty() {
        format!(
            "node \"{id}\": subgraph file \"{}\" has no content hash recorded (it is {} now)",
            sg.path,
            short_hash(&sg.hash)
        )
    } else {
        format!(
            "node \"{id}\": subgraph file \"{}\" changed since this graph recorded it ({} recorded, {} now)",
            sg.path,
            short_hash(&sg.recorded_hash),
            short_hash(&sg.hash)
        )
    };
    orogen::io::owned::escape(&format!("{msg}{more}"))
}

/// `blake3:0123456789ab` (the first 12 hex digits).
pub(super) fn short_hash(h: &str) -> &str {
    h.get(..19).unwrap_or(h)
}

/// Records every subgraph's current content hash as the accepted one (nested ones are
/// recorded by their own files: this rewrites only the graph given).
pub(super) fn accept_subgraphs(g: &mut orogen::Graph) {
    for n in &mut g.nodes {
        if let Some(sg) = &n.subgraph {
            if sg.is_stale() {
                n.subgraph = Some(std::sync::Arc::new(orogen::graph::Subgraph {
                    path: sg.path.clone(),
                    recorded_hash: sg.hash.clone(),
                    hash: sg.hash.clone(),
                    graph: sg.graph.clone(),
                }));
            }
        }
    }
}
