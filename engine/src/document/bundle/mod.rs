//! Bundles (`.orogen`): one self-contained file holding a graph, the subgraph files it uses
//! and the images it imports, for sharing (`orogen pack`, `orogen unpack`, and `orogen build`
//! and the editor open them directly).
//!
//! A bundle is a gzip-compressed tar archive (POSIX ustar) whose first entry is
//! `bundle.json`: `{"format": "orogen-bundle", "version": 1, "graph": "<main graph>",
//! "files": [{"path", "size", "blake3"}]}`. Files keep their layout relative to the folder
//! that holds them all, so the references inside them (subgraph paths, import paths) resolve
//! unchanged after unpacking. Headers are fixed (mode 0644, owner 0, time 0) and entries
//! sorted, so packing the same files gives the same bytes on any machine.
//!
//! Unpacking trusts nothing: only regular files with plain relative paths (no `..`, no
//! absolute paths, no links or devices), at most [`MAX_ENTRIES`] entries and
//! [`MAX_TOTAL_BYTES`] in all, each matching the size and hash `bundle.json` lists, and every
//! listed file present. A bundle can never write outside the folder it is unpacked into;
//! files are written only once all of them have been checked.

use crate::document::graph_file;
use crate::graph::Graph;
use crate::io::owned;
use crate::io::trust::{self, Project};
use crate::node::CancelToken;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

mod unpack;
pub use unpack::{open, unpack, verify, Opened};

/// The `format` tag of `bundle.json`.
pub const FORMAT_TAG: &str = "orogen-bundle";
/// The bundle version this build writes and reads.
pub const VERSION: u64 = 1;
/// The file name bundles have.
pub const EXTENSION: &str = "orogen";
/// Most entries a bundle may hold.
pub const MAX_ENTRIES: usize = 10_000;
/// Most bytes a bundle may unpack to, all files together (64 GiB).
pub const MAX_TOTAL_BYTES: u64 = 64 << 30;
pub(super) const MANIFEST: &str = "bundle.json";

/// `bundle.json`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct BundleManifest {
    pub format: String,
    pub version: u64,
    /// The main graph's path inside the bundle.
    pub graph: String,
    pub files: Vec<BundleFile>,
}

/// One file of a bundle.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct BundleFile {
    /// `/`-separated path relative to the bundle's root.
    pub path: String,
    pub size: u64,
    /// BLAKE3 of the bytes, hex.
    pub blake3: String,
}

/// Whether `path` names a bundle (by its extension).
#[must_use]
pub fn is_bundle(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == EXTENSION)
}

/// A file a bundle holds, and which nodes need it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Needed {
    /// Canonical path.
    pub file: PathBuf,
    /// Why it is packed: "the main graph", or the nodes referring to it (saying when no
    /// output uses a node: an unwired scratch node's file is packed too).
    pub why: Vec<String>,
}

/// The files a graph needs (itself, its subgraph files at any depth, its imported images),
/// sorted by canonical path. Every reference must stay inside the graph's project (see
/// `io::trust`; packing takes no opt-in: a bundle holds only the project's own files);
/// absolute import paths and missing files are errors naming the node.
pub fn needed_files(graph_file: &Path) -> Result<Vec<Needed>, String> {
    let graph = graph_file::load_file(graph_file).map_err(|d| d.to_string())?;
    let main =
        std::fs::canonicalize(graph_file).map_err(|e| format!("{}: {e}", graph_file.display()))?;
    let dir = main.parent().map(Path::to_path_buf).unwrap_or_default();
    let project = Project::of_folder(&dir, &[]);
    let mut out = BTreeMap::new();
    out.insert(main.clone(), vec!["the main graph".to_owned()]);
    collect(
        &graph,
        &dir,
        &graph_file.display().to_string(),
        &project,
        true,
        &mut out,
    )?;
    Ok(out
        .into_iter()
        .map(|(file, mut why)| {
            why.dedup();
            Needed { file, why }
        })
        .collect())
}

fn collect(
    g: &Graph,
    dir: &Path,
    label: &str,
    project: &Project,
    wired: bool,
    out: &mut BTreeMap<PathBuf, Vec<String>>,
) -> Result<(), String> {
    let feeding: std::collections::BTreeSet<String> = g
        .outputs
        .values()
        .flat_map(|r| g.upstream(&r.node))
        .collect();
    for n in &g.nodes {
        let used = wired && feeding.contains(&n.id);
        let why = |what: &str| {
            format!(
                "{what} of node \"{}\" in {label}{}",
                n.id,
                if used { "" } else { " (no output uses it)" }
            )
        };
        if let Some(sg) = &n.subgraph {
            let file = project
                .resolve(dir, &sg.path)
                .map_err(|e| format!("{label}: node \"{}\": graph: subgraph file {e}", n.id))?;
            let inner_dir = file.parent().map(Path::to_path_buf).unwrap_or_default();
            out.entry(file).or_default().push(why("subgraph"));
            collect(&sg.graph, &inner_dir, &sg.path, project, used, out)?;
        }
        if let Some(param) = n.def.spec.traits.file_param {
            let Some(crate::node::ParamValue::Text(p)) = n.param(param) else {
                continue;
            };
            if p.is_empty() {
                continue;
            }
            if Path::new(p).is_absolute() {
                return Err(format!(
                    "{label}: node \"{}\": params.{param}: \"{p}\" is absolute; a bundle holds files by their place relative to the graph, so use a path relative to the graph's folder",
                    n.id
                ));
            }
            let file = project
                .resolve(dir, p)
                .map_err(|e| format!("{label}: node \"{}\": params.{param}: {e}", n.id))?;
            out.entry(file).or_default().push(why("image imported"));
        }
    }
    Ok(())
}

/// The deepest folder holding every path.
fn common_root(paths: &[PathBuf]) -> PathBuf {
    let mut root: PathBuf = paths
        .first()
        .and_then(|p| p.parent())
        .map(Path::to_path_buf)
        .unwrap_or_default();
    for p in paths {
        while !p.starts_with(&root) {
            if !root.pop() {
                break;
            }
        }
    }
    root
}

fn slash_path(p: &Path) -> String {
    p.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

fn header(path: &str, size: u64) -> Result<tar::Header, String> {
    let mut h = tar::Header::new_ustar();
    h.set_path(path).map_err(|e| format!("{path}: {e}"))?;
    h.set_size(size);
    h.set_mode(0o644);
    h.set_uid(0);
    h.set_gid(0);
    h.set_mtime(0);
    h.set_entry_type(tar::EntryType::Regular);
    h.set_cksum();
    Ok(h)
}

/// Packs `graph_file` and everything it uses into the bundle `out` (written atomically).
/// Returns the manifest.
pub fn pack(
    graph_file: &Path,
    out: &Path,
    cancel: Option<&CancelToken>,
) -> Result<BundleManifest, String> {
    pack_needed(graph_file, &needed_files(graph_file)?, out, cancel)
}

/// The size limit of a file a bundle may hold: a graph's or an image's.
pub(super) fn file_limit(path: &str) -> u64 {
    if Path::new(path).extension().is_some_and(|e| e == "json") {
        trust::MAX_GRAPH_BYTES
    } else {
        trust::MAX_IMAGE_BYTES
    }
}

/// Opens a regular file of at most `limit` bytes for streaming (devices, FIFOs and links
/// swapped in are refused as `trust::read_file` refuses them); returns it with its length.
pub(super) fn open_regular(path: &Path, limit: u64) -> Result<(std::fs::File, u64), String> {
    let shown = || owned::escape_path(path);
    let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", shown()))?;
    trust::check_regular(path, &meta, limit)?;
    let file = trust::open_nonblocking(path).map_err(|e| format!("{}: {e}", shown()))?;
    let meta = file.metadata().map_err(|e| format!("{}: {e}", shown()))?;
    trust::check_regular(path, &meta, limit)?;
    Ok((file, meta.len()))
}

/// Packs the files [`needed_files`] listed for `graph_file` into the bundle `out`. Paths in
/// the bundle are relative to the deepest folder holding them all, which is inside the
/// project: never a folder name from above it. Files are streamed (hashed first, then copied
/// into the archive and hashed again: a file that changed in between fails the pack), so
/// memory does not grow with their size; `cancel` is polled between 1 MiB chunks.
pub fn pack_needed(
    graph_file: &Path,
    needed: &[Needed],
    out: &Path,
    cancel: Option<&CancelToken>,
) -> Result<BundleManifest, String> {
    let files: Vec<PathBuf> = needed.iter().map(|n| n.file.clone()).collect();
    let root = common_root(&files);
    let mut entries = Vec::new();
    for f in &files {
        let rel = f
            .strip_prefix(&root)
            .map_err(|_| format!("{}: outside the bundle's root", owned::escape_path(f)))?;
        let path = slash_path(rel);
        let (mut file, len) = open_regular(f, file_limit(&path))?;
        let blake3 = copy_hashed(&mut file, &mut std::io::sink(), len, cancel)
            .map_err(|e| format!("{}: {e}", owned::escape_path(f)))?;
        entries.push((
            f.clone(),
            BundleFile {
                path,
                size: len,
                blake3,
            },
        ));
    }
    entries.sort_by(|a, b| a.1.path.cmp(&b.1.path));
    let main = std::fs::canonicalize(graph_file).map_err(|e| e.to_string())?;
    let manifest = BundleManifest {
        format: FORMAT_TAG.to_owned(),
        version: VERSION,
        graph: slash_path(main.strip_prefix(&root).map_err(|e| e.to_string())?),
        files: entries.iter().map(|(_, b)| b.clone()).collect(),
    };
    let mut json = serde_json::to_string_pretty(&manifest).map_err(|e| e.to_string())?;
    json.push('\n');
    crate::io::atomic::write_atomic(out, |w| {
        let gz = flate2::GzBuilder::new()
            .mtime(0)
            .write(w, flate2::Compression::default());
        let mut tar = tar::Builder::new(gz);
        tar.mode(tar::HeaderMode::Deterministic);
        let h = header(MANIFEST, json.len() as u64).map_err(std::io::Error::other)?;
        tar.append(&h, json.as_bytes())?;
        for (file, listed) in &entries {
            let (f, _) =
                open_regular(file, file_limit(&listed.path)).map_err(std::io::Error::other)?;
            let h = header(&listed.path, listed.size).map_err(std::io::Error::other)?;
            let mut r = HashRead::new(trust::CancelRead::new(f.take(listed.size), cancel));
            tar.append(&h, &mut r)?;
            if r.read != listed.size || r.finish() != listed.blake3 {
                return Err(std::io::Error::other(format!(
                    "{} changed while it was packed",
                    owned::escape_path(file)
                )));
            }
        }
        tar.into_inner()?.finish()?.flush()
    })
    .map_err(|e| format!("cannot write {}: {e}", owned::escape_path(out)))?;
    Ok(manifest)
}

/// A reader that hashes and counts what passes through it.
struct HashRead<R> {
    inner: R,
    hasher: blake3::Hasher,
    read: u64,
}

impl<R> HashRead<R> {
    fn new(inner: R) -> Self {
        Self {
            inner,
            hasher: blake3::Hasher::new(),
            read: 0,
        }
    }

    fn finish(&self) -> String {
        self.hasher.finalize().to_hex().to_string()
    }
}

impl<R: Read> Read for HashRead<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hasher.update(&buf[..n]);
        self.read += n as u64;
        Ok(n)
    }
}

/// Copies `size` bytes from `r` to `w`, hashing them; fewer bytes is an error. `cancel` is
/// polled between chunks.
pub(super) fn copy_hashed(
    r: &mut dyn Read,
    w: &mut dyn Write,
    size: u64,
    cancel: Option<&CancelToken>,
) -> Result<String, String> {
    let mut h = blake3::Hasher::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut left = size;
    while left > 0 {
        if cancel.is_some_and(CancelToken::is_cancelled) {
            return Err("cancelled".into());
        }
        let want = usize::try_from(left.min(buf.len() as u64)).unwrap_or(buf.len());
        let n = r.read(&mut buf[..want]).map_err(|e| e.to_string())?;
        if n == 0 {
            return Err("truncated entry".into());
        }
        h.update(&buf[..n]);
        w.write_all(&buf[..n]).map_err(|e| e.to_string())?;
        left -= n as u64;
    }
    Ok(h.finalize().to_hex().to_string())
}
