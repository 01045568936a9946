//! Reading bundles: every entry checked against `bundle.json` (sizes, hashes, plain relative
//! paths, regular files), the decompressed stream held to what the manifest lists, and
//! unpacking all or nothing into a folder that becomes the bundle's own project.

use super::{
    copy_hashed, file_limit, open_regular, BundleFile, BundleManifest, FORMAT_TAG, MANIFEST,
    MAX_ENTRIES, MAX_TOTAL_BYTES, VERSION,
};
use crate::io::owned;
use crate::io::trust;
use crate::node::CancelToken;
use std::io::Read;
use std::path::{Component, Path, PathBuf};

/// A reader of the decompressed archive that refuses to give more than a budget (raised once
/// the manifest says how much the files are) and stops when cancelled: a small bundle cannot
/// make the tar reader allocate or read gigabytes (a GNU long-name or PAX entry is read whole
/// into memory by the tar crate), nor run on after Ctrl-C.
struct Budget<'a, R> {
    inner: R,
    left: std::rc::Rc<std::cell::Cell<u64>>,
    cancel: Option<&'a CancelToken>,
}

impl<R: Read> Read for Budget<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.cancel.is_some_and(CancelToken::is_cancelled) {
            return Err(trust::cancelled_error());
        }
        let left = self.left.get();
        if left == 0 {
            return Err(std::io::Error::other(
                "the archive holds more than its bundle.json lists",
            ));
        }
        let want = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..want])?;
        self.left.set(left - n as u64);
        Ok(n)
    }
}

/// An entry name for a message: control characters escaped, at most 200 characters.
fn show(name: &str) -> String {
    let mut s: String = name.chars().take(200).collect();
    if s.len() < name.len() {
        s.push('…');
    }
    owned::escape(&s)
}

/// A bundle entry's path, checked: relative, `/`-separated plain names only.
fn safe_path(name: &str) -> Result<PathBuf, String> {
    if name.is_empty() || name.len() > 4096 || name.contains('\\') || name.contains('\0') {
        return Err(format!(
            "entry \"{}\": not a plain relative path",
            show(name)
        ));
    }
    let p = Path::new(name);
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::Normal(s) => out.push(s),
            _ => {
                return Err(format!(
                    "entry \"{}\": a bundle may only hold paths inside its folder (no \"..\", no absolute paths)",
                    show(name)
                ))
            }
        }
    }
    if out.as_os_str().is_empty() {
        return Err(format!("entry \"{}\": empty path", show(name)));
    }
    Ok(out)
}

/// Header, padding and end-of-archive bytes a tar archive may add around its files.
const TAR_OVERHEAD_PER_ENTRY: u64 = 1024;

/// Checks a manifest's own promises before any file is read: a plain path for every file,
/// no path twice, at most [`MAX_ENTRIES`] files, each within its kind's size limit and all
/// within [`MAX_TOTAL_BYTES`]. Returns their total size.
fn check_manifest(m: &BundleManifest) -> Result<u64, String> {
    if m.format != FORMAT_TAG {
        return Err(format!(
            "{MANIFEST}: format \"{}\", expected \"{FORMAT_TAG}\"",
            show(&m.format)
        ));
    }
    if m.version != VERSION {
        return Err(format!(
            "{MANIFEST}: bundle version {} (this build of orogen reads version {VERSION})",
            m.version
        ));
    }
    if m.files.len() > MAX_ENTRIES {
        return Err(format!(
            "{MANIFEST}: lists {} files, more than the {MAX_ENTRIES} a bundle may hold",
            m.files.len()
        ));
    }
    safe_path(&m.graph)?;
    let mut by_path = std::collections::HashSet::with_capacity(m.files.len());
    let mut total = 0u64;
    for f in &m.files {
        safe_path(&f.path)?;
        let limit = file_limit(&f.path);
        if f.size > limit {
            return Err(format!(
                "{MANIFEST}: \"{}\" is {} bytes, more than the {} such a file may have",
                show(&f.path),
                f.size,
                trust::human_bytes(limit)
            ));
        }
        total = total.saturating_add(f.size);
        if !by_path.insert(f.path.as_str()) {
            return Err(format!("{MANIFEST}: \"{}\" is listed twice", show(&f.path)));
        }
    }
    if total > MAX_TOTAL_BYTES {
        return Err(format!(
            "{MANIFEST}: the files add up to {total} bytes, more than {} GiB",
            MAX_TOTAL_BYTES >> 30
        ));
    }
    if !by_path.contains(m.graph.as_str()) {
        return Err(format!(
            "{MANIFEST}: the main graph \"{}\" is not among the files",
            show(&m.graph)
        ));
    }
    Ok(total)
}

/// The manifest from the archive's first entry `name` of `size` bytes.
fn manifest_entry(name: &str, size: u64, entry: &mut dyn Read) -> Result<BundleManifest, String> {
    if name != MANIFEST {
        return Err(format!(
            "not a bundle: the first entry is \"{}\", expected \"{MANIFEST}\"",
            show(name)
        ));
    }
    if size > 16 << 20 {
        return Err(format!("{MANIFEST} is {size} bytes: too large"));
    }
    let mut text = String::new();
    entry
        .read_to_string(&mut text)
        .map_err(|e| format!("{MANIFEST}: {e}"))?;
    serde_json::from_str(&text).map_err(|e| format!("{MANIFEST}: {e}"))
}

/// Reads only a bundle's manifest (its first entry), checked, without reading the files.
fn read_manifest(bundle: &Path, cancel: Option<&CancelToken>) -> Result<BundleManifest, String> {
    let mut m = None;
    let r = read_entries(
        bundle,
        cancel,
        |manifest| {
            m = Some(manifest.clone());
            false
        },
        |_, _, _| Ok(String::new()),
    );
    match (r, m) {
        (_, Some(m)) => Ok(m),
        (Err(e), None) => Err(e),
        (Ok(_), None) => Err(format!(
            "{}: empty archive: not a bundle",
            owned::escape_path(bundle)
        )),
    }
}

/// Reads and checks a bundle, calling `file(path, bytes reader, size)` for every file entry
/// and returning the manifest. `on_manifest` sees the checked manifest first and says whether
/// to go on. Nothing is written here.
fn read_checked(
    bundle: &Path,
    cancel: Option<&CancelToken>,
    on_file: impl FnMut(&Path, &mut dyn Read, u64) -> Result<String, String>,
) -> Result<BundleManifest, String> {
    read_entries(bundle, cancel, |_| true, on_file)
}

fn read_entries(
    bundle: &Path,
    cancel: Option<&CancelToken>,
    mut on_manifest: impl FnMut(&BundleManifest) -> bool,
    mut on_file: impl FnMut(&Path, &mut dyn Read, u64) -> Result<String, String>,
) -> Result<BundleManifest, String> {
    let label = owned::escape_path(bundle);
    let fail = |msg: String| format!("{label}: {msg}");
    // A regular file only: a FIFO named x.orogen would block the open forever.
    let (f, _) = open_regular(bundle, u64::MAX).map_err(&fail)?;
    // Until the manifest says how much the files are, the archive may hold only the manifest.
    let left = std::rc::Rc::new(std::cell::Cell::new(
        (16 << 20) + 4 * TAR_OVERHEAD_PER_ENTRY,
    ));
    let budget = Budget {
        inner: flate2::read::GzDecoder::new(std::io::BufReader::new(f)),
        left: left.clone(),
        cancel,
    };
    let mut archive = tar::Archive::new(budget);
    let entries = archive
        .entries()
        .map_err(|e| fail(format!("not a bundle (a gzip-compressed tar): {e}")))?;
    let mut manifest: Option<BundleManifest> = None;
    let mut index: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut seen: std::collections::HashSet<String> = std::collections::HashSet::new();
    for (k, entry) in entries.enumerate() {
        if k > MAX_ENTRIES {
            return Err(fail(format!("more than {MAX_ENTRIES} entries")));
        }
        if cancel.is_some_and(CancelToken::is_cancelled) {
            return Err(fail("cancelled".into()));
        }
        let mut entry =
            entry.map_err(|e| fail(format!("damaged, truncated or oversized archive: {e}")))?;
        let name = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
        if entry.header().entry_type() != tar::EntryType::Regular {
            return Err(fail(format!(
                "entry \"{}\": only regular files may be in a bundle (found {:?})",
                show(&name),
                entry.header().entry_type()
            )));
        }
        let size = entry
            .header()
            .size()
            .map_err(|e| fail(format!("entry \"{}\": bad size: {e}", show(&name))))?;
        let path = safe_path(&name).map_err(&fail)?;
        let Some(m) = &manifest else {
            let m = manifest_entry(&name, size, &mut entry).map_err(&fail)?;
            let total = check_manifest(&m).map_err(&fail)?;
            // From here the archive may hold the listed files and their headers, no more.
            left.set(
                total
                    .saturating_add(TAR_OVERHEAD_PER_ENTRY * (m.files.len() as u64 + 4))
                    .saturating_add(64 << 10),
            );
            if !on_manifest(&m) {
                return Ok(m);
            }
            index = m
                .files
                .iter()
                .enumerate()
                .map(|(i, f)| (f.path.clone(), i))
                .collect();
            manifest = Some(m);
            continue;
        };
        // Looked up by path in a map: a linear search per entry would be quadratic.
        let Some(listed) = index.get(&name).map(|&i| &m.files[i]) else {
            return Err(fail(format!(
                "entry \"{}\" is not listed in {MANIFEST}",
                show(&name)
            )));
        };
        if listed.size != size {
            return Err(fail(format!(
                "entry \"{}\": {size} bytes, but {MANIFEST} lists {}",
                show(&name),
                listed.size
            )));
        }
        if !seen.insert(name.clone()) {
            return Err(fail(format!("entry \"{}\" appears twice", show(&name))));
        }
        let hash = on_file(&path, &mut entry, size).map_err(&fail)?;
        if hash != listed.blake3 {
            return Err(fail(format!(
                "entry \"{}\": its content does not match the hash in {MANIFEST} (damaged or altered)",
                show(&name)
            )));
        }
    }
    // The end of the archive and the gzip trailer (its CRC and length) must be there too: a
    // bundle cut after its last file is still a truncated file. What follows the archive is
    // bounded by the budget like the rest.
    std::io::copy(&mut archive.into_inner(), &mut std::io::sink())
        .map_err(|e| fail(format!("damaged or truncated archive: {e}")))?;
    let m = manifest.ok_or_else(|| fail("empty archive: not a bundle".into()))?;
    for f in &m.files {
        if !seen.contains(&f.path) {
            return Err(fail(format!(
                "\"{}\" is listed in {MANIFEST} but missing (truncated bundle?)",
                show(&f.path)
            )));
        }
    }
    Ok(m)
}

/// The note a bundle's folder gets as its project marker.
const MARKER_TEXT: &str =
    "This folder was unpacked from an Orogen bundle: its graphs may read only files inside it.\n";

/// Unpacks `bundle` into `dir` and returns the main graph's path there. All or nothing:
/// everything is checked (see the module docs) and written to a staging folder first; into a
/// new `dir` the staging folder is renamed whole, into an existing one every destination is
/// checked before the first file is moved in. An existing file with other content is an
/// error unless `overwrite`. The folder gets a project marker ([`trust::PROJECT_MARKER`]), so
/// the bundle's graphs reach only the bundle's files whatever folder it lands in. `cancel`
/// is polled throughout; a cancelled unpack leaves nothing behind.
pub fn unpack(
    bundle: &Path,
    dir: &Path,
    overwrite: bool,
    cancel: Option<&CancelToken>,
) -> Result<PathBuf, String> {
    let fresh = std::fs::symlink_metadata(dir).is_err();
    let parent = match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let staging_in = if fresh { parent } else { dir.to_path_buf() };
    if fresh {
        std::fs::create_dir_all(&staging_in)
            .map_err(|e| format!("cannot create {}: {e}", owned::escape_path(&staging_in)))?;
    } else if !owned::is_real_dir(dir) {
        return Err(format!(
            "{} is not a folder (a link or a file): unpack into a new or an existing folder",
            owned::escape_path(dir)
        ));
    }
    // Before reading the files: they must fit on the disk with room to spare.
    let m = read_manifest(bundle, cancel)?;
    let total: u64 = m.files.iter().map(|f| f.size).sum();
    if let Some(free) = owned::free_bytes(&staging_in) {
        if total.saturating_add(64 << 20) > free {
            return Err(format!(
                "{}: its files need {} and {} has {} free",
                owned::escape_path(bundle),
                owned::human(total),
                owned::escape_path(&staging_in),
                owned::human(free)
            ));
        }
    }
    // A first pass checks every file's size and hash without writing anything, so a bundle
    // whose content does not match its manifest costs reading, never disk space.
    verify(bundle, cancel)?;
    let staging = tempfile::Builder::new()
        .prefix(".orogen-unpack-")
        .tempdir_in(&staging_in)
        .map_err(|e| format!("cannot write in {}: {e}", owned::escape_path(&staging_in)))?;
    let m = read_checked(bundle, cancel, |path, r, size| {
        let target = staging.path().join(path);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
        }
        let mut f = std::fs::File::create(&target).map_err(|e| e.to_string())?;
        copy_hashed(r, &mut f, size, cancel)
    })?;
    let marker = staging.path().join(trust::PROJECT_MARKER);
    if !marker.exists() {
        std::fs::write(&marker, MARKER_TEXT).map_err(|e| e.to_string())?;
    }
    let main = dir.join(safe_path(&m.graph)?);
    if cancel.is_some_and(CancelToken::is_cancelled) {
        return Err(format!("{}: cancelled", owned::escape_path(bundle)));
    }
    if fresh {
        let staged = staging.keep();
        if let Err(e) = std::fs::rename(&staged, dir) {
            let _ = std::fs::remove_dir_all(&staged);
            return Err(format!("cannot write {}: {e}", owned::escape_path(dir)));
        }
        return Ok(main);
    }
    move_into_existing(dir, staging.path(), &m, overwrite, cancel)?;
    Ok(main)
}

/// Moves a checked bundle's files from `staging` into the existing folder `dir`: every
/// destination is checked first (no link on the way, a regular file or nothing, the same
/// content unless `overwrite`), and only then are the files moved in.
fn move_into_existing(
    dir: &Path,
    staging: &Path,
    m: &BundleManifest,
    overwrite: bool,
    cancel: Option<&CancelToken>,
) -> Result<(), String> {
    let mut moves = Vec::new();
    let marker_file = BundleFile {
        path: trust::PROJECT_MARKER.to_owned(),
        size: 0,
        blake3: String::new(),
    };
    let has_marker = m.files.iter().any(|f| f.path == trust::PROJECT_MARKER);
    for f in m.files.iter().chain((!has_marker).then_some(&marker_file)) {
        let rel = safe_path(&f.path)?;
        let dest = dir.join(&rel);
        // No link anywhere below `dir` on the way to the file: a planted link would move the
        // file elsewhere.
        let mut at = dir.to_path_buf();
        for c in rel.components() {
            at.push(c);
            if std::fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_symlink()) {
                return Err(format!(
                    "{} is a link: a bundle is unpacked only into real folders and files",
                    owned::escape_path(&at)
                ));
            }
        }
        match std::fs::symlink_metadata(&dest) {
            Err(_) => {}
            Ok(meta) if !meta.file_type().is_file() => {
                return Err(format!(
                    "{} exists and is not a regular file; unpack into an empty folder",
                    owned::escape_path(&dest)
                ));
            }
            Ok(_) if f.path == trust::PROJECT_MARKER && !has_marker => continue,
            Ok(_) => {
                let same =
                    owned::hash_regular_file(&dest, cancel).as_deref() == Some(f.blake3.as_str());
                if same {
                    continue;
                }
                if !overwrite {
                    return Err(format!(
                        "{} exists with other content; unpack into an empty folder, or pass --force to replace it (nothing was written)",
                        owned::escape_path(&dest)
                    ));
                }
            }
        }
        moves.push((rel, dest));
    }
    for (rel, dest) in moves {
        if let Some(parent) = dest.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("cannot create {}: {e}", owned::escape_path(parent)))?;
        }
        std::fs::rename(staging.join(&rel), &dest)
            .map_err(|e| format!("cannot write {}: {e}", owned::escape_path(&dest)))?;
    }
    Ok(())
}

/// Reads a bundle's manifest, checking the whole bundle (hashes included) without writing.
pub fn verify(bundle: &Path, cancel: Option<&CancelToken>) -> Result<BundleManifest, String> {
    read_checked(bundle, cancel, |_, r, size| {
        copy_hashed(r, &mut std::io::sink(), size, cancel)
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
pub fn open(bundle: &Path, cancel: Option<&CancelToken>) -> Result<Opened, String> {
    let dir = tempfile::Builder::new()
        .prefix("orogen-bundle-")
        .tempdir()
        .map_err(|e| format!("cannot create a temporary folder: {e}"))?;
    let graph = unpack(bundle, dir.path(), false, cancel)?;
    Ok(Opened { dir, graph })
}
