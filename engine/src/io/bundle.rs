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

use crate::graph::Graph;
use crate::io::graph_file;
use crate::io::trust::{self, Project};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};

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
const MANIFEST: &str = "bundle.json";

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
pub fn pack(graph_file: &Path, out: &Path) -> Result<BundleManifest, String> {
    pack_needed(graph_file, &needed_files(graph_file)?, out)
}

/// Packs the files [`needed_files`] listed for `graph_file` into the bundle `out`. Paths in
/// the bundle are relative to the deepest folder holding them all, which is inside the
/// project: never a folder name from above it.
pub fn pack_needed(
    graph_file: &Path,
    needed: &[Needed],
    out: &Path,
) -> Result<BundleManifest, String> {
    let files: Vec<PathBuf> = needed.iter().map(|n| n.file.clone()).collect();
    let root = common_root(&files);
    let mut entries = Vec::new();
    for f in &files {
        let limit = if f.extension().is_some_and(|e| e == "json") {
            trust::MAX_GRAPH_BYTES
        } else {
            trust::MAX_IMAGE_BYTES
        };
        let bytes = trust::read_file(f, limit, None)?;
        let rel = f
            .strip_prefix(&root)
            .map_err(|_| format!("{}: outside the bundle's root", f.display()))?;
        entries.push((slash_path(rel), bytes));
    }
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    let main = std::fs::canonicalize(graph_file).map_err(|e| e.to_string())?;
    let manifest = BundleManifest {
        format: FORMAT_TAG.to_owned(),
        version: VERSION,
        graph: slash_path(main.strip_prefix(&root).map_err(|e| e.to_string())?),
        files: entries
            .iter()
            .map(|(path, bytes)| BundleFile {
                path: path.clone(),
                size: bytes.len() as u64,
                blake3: blake3::hash(bytes).to_hex().to_string(),
            })
            .collect(),
    };
    let mut json = serde_json::to_string_pretty(&manifest).map_err(|e| e.to_string())?;
    json.push('\n');
    crate::io::atomic::write_atomic(out, |w| {
        let gz = flate2::GzBuilder::new()
            .mtime(0)
            .write(w, flate2::Compression::default());
        let mut tar = tar::Builder::new(gz);
        tar.mode(tar::HeaderMode::Deterministic);
        let add = |tar: &mut tar::Builder<_>, path: &str, bytes: &[u8]| {
            let h = header(path, bytes.len() as u64).map_err(std::io::Error::other)?;
            tar.append(&h, bytes)
        };
        add(&mut tar, MANIFEST, json.as_bytes())?;
        for (path, bytes) in &entries {
            add(&mut tar, path, bytes)?;
        }
        tar.into_inner()?.finish()?.flush()
    })
    .map_err(|e| format!("cannot write {}: {e}", out.display()))?;
    Ok(manifest)
}

/// A bundle entry's path, checked: relative, `/`-separated plain names only.
fn safe_path(name: &str) -> Result<PathBuf, String> {
    if name.is_empty() || name.len() > 4096 || name.contains('\\') || name.contains('\0') {
        return Err(format!("entry \"{name}\": not a plain relative path"));
    }
    let p = Path::new(name);
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::Normal(s) => out.push(s),
            _ => {
                return Err(format!(
                    "entry \"{name}\": a bundle may only hold paths inside its folder (no \"..\", no absolute paths)"
                ))
            }
        }
    }
    if out.as_os_str().is_empty() {
        return Err(format!("entry \"{name}\": empty path"));
    }
    Ok(out)
}

/// Reads and checks a bundle, calling `file(path, bytes reader)` for every entry (the
/// manifest first), and returns the manifest. Nothing is written here.
fn read_checked(
    bundle: &Path,
    mut on_file: impl FnMut(&Path, &mut dyn Read, u64) -> Result<String, String>,
) -> Result<BundleManifest, String> {
    let label = bundle.display().to_string();
    let fail = |msg: String| format!("{label}: {msg}");
    let f = std::fs::File::open(bundle).map_err(|e| fail(format!("cannot open: {e}")))?;
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(std::io::BufReader::new(f)));
    let entries = archive
        .entries()
        .map_err(|e| fail(format!("not a bundle (a gzip-compressed tar): {e}")))?;
    let mut manifest: Option<BundleManifest> = None;
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    let mut total = 0u64;
    for (k, entry) in entries.enumerate() {
        if k > MAX_ENTRIES {
            return Err(fail(format!("more than {MAX_ENTRIES} entries")));
        }
        let mut entry = entry.map_err(|e| fail(format!("damaged or truncated archive: {e}")))?;
        let name = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
        if entry.header().entry_type() != tar::EntryType::Regular {
            return Err(fail(format!(
                "entry \"{name}\": only regular files may be in a bundle (found {:?})",
                entry.header().entry_type()
            )));
        }
        let size = entry
            .header()
            .size()
            .map_err(|e| fail(format!("entry \"{name}\": bad size: {e}")))?;
        total = total.saturating_add(size);
        if total > MAX_TOTAL_BYTES {
            return Err(fail(format!(
                "the files add up to more than {} GiB",
                MAX_TOTAL_BYTES >> 30
            )));
        }
        let path = safe_path(&name).map_err(&fail)?;
        if k == 0 {
            if name != MANIFEST {
                return Err(fail(format!(
                    "not a bundle: the first entry is \"{name}\", expected \"{MANIFEST}\""
                )));
            }
            if size > 16 << 20 {
                return Err(fail(format!("{MANIFEST} is {size} bytes: too large")));
            }
            let mut text = String::new();
            entry
                .read_to_string(&mut text)
                .map_err(|e| fail(format!("{MANIFEST}: {e}")))?;
            let m: BundleManifest =
                serde_json::from_str(&text).map_err(|e| fail(format!("{MANIFEST}: {e}")))?;
            if m.format != FORMAT_TAG {
                return Err(fail(format!(
                    "{MANIFEST}: format \"{}\", expected \"{FORMAT_TAG}\"",
                    m.format
                )));
            }
            if m.version != VERSION {
                return Err(fail(format!(
                    "{MANIFEST}: bundle version {} (this build of orogen reads version {VERSION})",
                    m.version
                )));
            }
            safe_path(&m.graph).map_err(&fail)?;
            for f in &m.files {
                safe_path(&f.path).map_err(&fail)?;
            }
            if !m.files.iter().any(|f| f.path == m.graph) {
                return Err(fail(format!(
                    "{MANIFEST}: the main graph \"{}\" is not among the files",
                    m.graph
                )));
            }
            manifest = Some(m);
            continue;
        }
        let Some(m) = &manifest else {
            return Err(fail("no manifest".into()));
        };
        let Some(listed) = m.files.iter().find(|f| f.path == name) else {
            return Err(fail(format!(
                "entry \"{name}\" is not listed in {MANIFEST}"
            )));
        };
        if listed.size != size {
            return Err(fail(format!(
                "entry \"{name}\": {size} bytes, but {MANIFEST} lists {}",
                listed.size
            )));
        }
        if seen.contains_key(&name) {
            return Err(fail(format!("entry \"{name}\" appears twice")));
        }
        let hash = on_file(&path, &mut entry, size).map_err(&fail)?;
        if hash != listed.blake3 {
            return Err(fail(format!(
                "entry \"{name}\": its content does not match the hash in {MANIFEST} (damaged or altered)"
            )));
        }
        seen.insert(name, hash);
    }
    // The end of the archive and the gzip trailer (its CRC and length) must be there too: a
    // bundle cut after its last file is still a truncated file.
    std::io::copy(&mut archive.into_inner(), &mut std::io::sink())
        .map_err(|e| fail(format!("damaged or truncated archive: {e}")))?;
    let m = manifest.ok_or_else(|| fail("empty archive: not a bundle".into()))?;
    for f in &m.files {
        if !seen.contains_key(&f.path) {
            return Err(fail(format!(
                "\"{}\" is listed in {MANIFEST} but missing (truncated bundle?)",
                f.path
            )));
        }
    }
    Ok(m)
}

/// Copies `size` bytes from `r` to `w`, hashing them; fewer bytes is an error.
fn copy_hashed(r: &mut dyn Read, w: &mut dyn Write, size: u64) -> Result<String, String> {
    let mut h = blake3::Hasher::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut left = size;
    while left > 0 {
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

/// Unpacks `bundle` into `dir` (created if needed) and returns the main graph's path there.
/// Everything is checked (see the module docs) before any file is put in place; an existing
/// file with other content is an error unless `overwrite`.
pub fn unpack(bundle: &Path, dir: &Path, overwrite: bool) -> Result<PathBuf, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let staging = tempfile::Builder::new()
        .prefix(".orogen-unpack-")
        .tempdir_in(dir)
        .map_err(|e| format!("cannot write in {}: {e}", dir.display()))?;
    let m = read_checked(bundle, |path, r, size| {
        let target = staging.path().join(path);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
        }
        let mut f = std::fs::File::create(&target).map_err(|e| e.to_string())?;
        copy_hashed(r, &mut f, size)
    })?;
    // Checked: now put the files in place.
    for f in &m.files {
        let rel = safe_path(&f.path)?;
        let dest = dir.join(&rel);
        if dest.exists() {
            let same = std::fs::read(&dest)
                .is_ok_and(|b| blake3::hash(&b).to_hex().to_string() == f.blake3);
            if same {
                continue;
            }
            if !overwrite {
                return Err(format!(
                    "{} exists with other content; unpack into an empty folder, or pass --force to replace it",
                    dest.display()
                ));
            }
        }
        if let Some(parent) = dest.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        }
        std::fs::rename(staging.path().join(&rel), &dest)
            .map_err(|e| format!("cannot write {}: {e}", dest.display()))?;
    }
    Ok(dir.join(safe_path(&m.graph)?))
}

/// Reads a bundle's manifest, checking the whole bundle (hashes included) without writing.
pub fn verify(bundle: &Path) -> Result<BundleManifest, String> {
    read_checked(bundle, |_, r, size| {
        copy_hashed(r, &mut std::io::sink(), size)
    })
}

/// A bundle unpacked into a temporary folder (removed when dropped), for building or
/// opening a bundle directly.
pub struct Opened {
    pub dir: tempfile::TempDir,
    /// The main graph's path inside `dir`.
    pub graph: PathBuf,
}

/// Unpacks `bundle` into a fresh temporary folder.
pub fn open(bundle: &Path) -> Result<Opened, String> {
    let dir = tempfile::Builder::new()
        .prefix("orogen-bundle-")
        .tempdir()
        .map_err(|e| format!("cannot create a temporary folder: {e}"))?;
    let graph = unpack(bundle, dir.path(), false)?;
    Ok(Opened { dir, graph })
}
