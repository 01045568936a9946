//! `orogen pack`, `unpack` and `diff`: graphs passed between people.

use super::args::{cancel_on_signal, exit_after};
use super::EXIT_FAILED;
use super::EXIT_INVALID;
use orogen::document::graph_file;
use std::path::PathBuf;
use std::process::ExitCode;

/// `orogen pack`.
pub(super) fn run_pack(graph: &std::path::Path, out: &std::path::Path) -> ExitCode {
    let packed = orogen::document::bundle::needed_files(graph).and_then(|needed| {
        orogen::document::bundle::pack_needed(graph, &needed, out, Some(&cancel_on_signal()))
            .map(|m| (m, needed))
    });
    match packed {
        Ok((m, mut needed)) => {
            let bytes: u64 = m.files.iter().map(|f| f.size).sum();
            // The bundle lists its files by path text below one root: the same order.
            needed.sort_by_key(|n| n.file.to_string_lossy().into_owned());
            for (f, n) in m.files.iter().zip(&needed) {
                println!("  {} ({} bytes): {}", f.path, f.size, n.why.join("; "));
            }
            println!(
                "{}: {} files, {bytes} bytes before compression; main graph {}",
                orogen::io::owned::escape_path(out),
                m.files.len(),
                m.graph
            );
            ExitCode::SUCCESS
        }
        Err(e) => exit_after(&e, EXIT_INVALID),
    }
}

/// `orogen unpack`.
pub(super) fn run_unpack(bundle: &std::path::Path, out: Option<PathBuf>, force: bool) -> ExitCode {
    let dir = out.unwrap_or_else(|| bundle.with_extension(""));
    match orogen::document::bundle::unpack(bundle, &dir, force, Some(&cancel_on_signal())) {
        Ok(main) => {
            println!(
                "{}: unpacked; the graph is {}",
                orogen::io::owned::escape_path(&dir),
                orogen::io::owned::escape_path(&main)
            );
            ExitCode::SUCCESS
        }
        Err(e) => exit_after(&e, EXIT_INVALID),
    }
}

/// `orogen diff A B`, or as git's external diff driver (seven arguments).
pub(super) fn run_diff(files: &[PathBuf]) -> ExitCode {
    let (a, b, header) = match files {
        [a, b] => (a, b, None),
        [path, old, _, _, new, _, _] => (old, new, Some(path)),
        _ => {
            eprintln!(
                "error: orogen diff takes two graph files (or git's seven diff-driver arguments)"
            );
            return ExitCode::from(EXIT_INVALID);
        }
    };
    let load = |p: &PathBuf| {
        // git passes /dev/null for a file that does not exist on one side.
        if p.as_os_str() == "/dev/null" {
            return Ok(None);
        }
        graph_file::load_file(p).map(Some).map_err(|d| {
            eprintln!("{d}");
        })
    };
    let (Ok(ga), Ok(gb)) = (load(a), load(b)) else {
        return ExitCode::from(EXIT_INVALID);
    };
    if let Some(p) = header {
        println!("orogen diff a/{0} b/{0}", orogen::io::owned::escape_path(p));
    }
    let changes = match (&ga, &gb) {
        (Some(x), Some(y)) => orogen::document::diff::diff(x, y)
            .iter()
            .map(ToString::to_string)
            .collect(),
        (None, Some(_)) => vec!["+ new graph file".to_owned()],
        (Some(_), None) => vec!["- graph file deleted".to_owned()],
        (None, None) => Vec::new(),
    };
    for c in &changes {
        println!("{c}");
    }
    if changes.is_empty() {
        println!("same graph");
        ExitCode::SUCCESS
    } else {
        // git treats a non-zero exit of a diff driver as a failure; only plain use says 1.
        ExitCode::from(if header.is_some() { 0 } else { EXIT_FAILED })
    }
}
