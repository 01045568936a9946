//! What a graph file may make Orogen read (the trust model of `docs/security.md`): every
//! reference resolves relative to the file that makes it and must stay inside the project
//! (symlinks followed first); only regular files are opened, never devices, FIFOs, sockets or
//! folders; every read is bounded by a limit and by the size the file had when it was opened,
//! and polls the cancel token between chunks.

use crate::node::CancelToken;
use std::io::Read;
use std::path::{Path, PathBuf};

/// A file that marks a project's root folder: a graph's references may reach every file below
/// the nearest folder above it (itself included) that holds one. Its content is ignored.
pub const PROJECT_MARKER: &str = ".orogen-project";
/// Largest graph file (or subgraph file) read: 64 MiB. The largest example graph is 12 KiB.
pub const MAX_GRAPH_BYTES: u64 = 64 << 20;
/// Largest image file an `import` reads: 2 GiB (a 16-bit 32768² PNG stored is 2 GiB).
pub const MAX_IMAGE_BYTES: u64 = 2 << 30;
/// Most pixels an imported image may have: 16384² (its f32 heightmap is 1 GiB). Checked from
/// the file's header, before anything is decoded.
pub const MAX_IMAGE_PIXELS: u64 = 1 << 28;
/// Most bytes decoding one imported image may hold (decoded samples, the f32 heights and any
/// copy in between), computed from its header before decoding: a small file cannot claim
/// gigabytes. A 16384² float DEM with holes needs about 4.3 GiB.
pub const MAX_DECODE_BYTES: u64 = 6 << 30;
/// Longest side an imported image may have (the largest build resolution).
pub const MAX_IMAGE_SIDE: u32 = 65_536;
/// Deepest nesting of subgraph files (a graph using a subgraph using a subgraph …). Build
/// copies, plans and recovery files embed subgraphs, three JSON levels per nesting, and the
/// JSON reader stops at 128 levels: 32 keeps every copy Orogen writes readable.
pub const MAX_SUBGRAPH_DEPTH: usize = 32;
/// Most nodes a graph may have once every subgraph is expanded.
pub const MAX_EXPANDED_NODES: usize = 100_000;
/// Reads go in chunks of this size, polling the cancel token between them.
const CHUNK: usize = 1 << 20;

/// Where a graph's references may point: below its project root, or below a folder the user
/// allowed explicitly (`--allow-outside`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Project {
    /// The project root, canonical.
    root: PathBuf,
    /// Folders outside the root the user opted into, canonical.
    allowed: Vec<PathBuf>,
}

impl Project {
    /// The project of a graph file in `folder`: the nearest folder at or above it holding
    /// [`PROJECT_MARKER`], else `folder` itself. `allow_outside`: folders the user allowed
    /// (ones that do not exist are ignored: nothing can be read from them).
    #[must_use]
    pub fn of_folder(folder: &Path, allow_outside: &[PathBuf]) -> Self {
        let folder = if folder.as_os_str().is_empty() {
            Path::new(".")
        } else {
            folder
        };
        let canonical = std::fs::canonicalize(folder).unwrap_or_else(|_| folder.to_path_buf());
        let root = canonical
            .ancestors()
            .find(|d| d.join(PROJECT_MARKER).is_file())
            .map_or_else(|| canonical.clone(), Path::to_path_buf);
        let allowed = allow_outside
            .iter()
            .filter_map(|p| std::fs::canonicalize(p).ok())
            .collect();
        Self { root, allowed }
    }

    /// The project root (canonical).
    #[must_use]
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Whether a canonical path is inside the project or an allowed folder.
    #[must_use]
    pub fn contains(&self, canonical: &Path) -> bool {
        canonical.starts_with(&self.root) || self.allowed.iter().any(|a| canonical.starts_with(a))
    }

    /// Resolves `written` (a path as a graph file states it) against `base` (the folder of the
    /// file stating it), follows symlinks, and checks the result is inside the project. The
    /// error says what was refused and how to allow it.
    pub fn resolve(&self, base: &Path, written: &str) -> Result<PathBuf, String> {
        let joined = base.join(written);
        let canonical = std::fs::canonicalize(&joined)
            .map_err(|e| format!("\"{written}\" ({}): {e}", joined.display()))?;
        self.check(written, &canonical)?;
        Ok(canonical)
    }

    /// Checks that `canonical` (where the reference `written` resolved to) is inside the
    /// project; the error says what was refused and how to allow it.
    pub fn check(&self, written: &str, canonical: &Path) -> Result<(), String> {
        if self.contains(canonical) {
            Ok(())
        } else {
            Err(format!(
                "\"{written}\" resolves to {}, outside the project {}: a graph may only read files inside its project (the folder of the graph file, or the nearest folder above it holding {PROJECT_MARKER}); if you trust this file, allow the folder with --allow-outside {}",
                canonical.display(),
                self.root.display(),
                canonical.parent().unwrap_or(canonical).display()
            ))
        }
    }
}

/// Reads a whole regular file of at most `limit` bytes. Devices, FIFOs, sockets and folders
/// are refused before anything is read, and so is a file larger than `limit`; a file that
/// grows while being read is read only up to the size it had when opened. Between chunks of
/// 1 MiB the read stops if `cancel` is tripped.
pub fn read_file(path: &Path, limit: u64, cancel: Option<&CancelToken>) -> Result<Vec<u8>, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    check_regular(path, &meta, limit)?;
    let file = open_nonblocking(path).map_err(|e| format!("{}: {e}", path.display()))?;
    // The file may have been replaced between the look and the open: check what was opened.
    let meta = file
        .metadata()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    check_regular(path, &meta, limit)?;
    read_bounded(file, meta.len(), cancel).map_err(|e| format!("{}: {e}", path.display()))
}

/// Reads a whole regular text file of at most `limit` bytes as UTF-8 (see [`read_file`]).
pub fn read_text(path: &Path, limit: u64, cancel: Option<&CancelToken>) -> Result<String, String> {
    let bytes = read_file(path, limit, cancel)?;
    String::from_utf8(bytes).map_err(|_| format!("{}: not UTF-8 text", path.display()))
}

pub(crate) fn check_regular(
    path: &Path,
    meta: &std::fs::Metadata,
    limit: u64,
) -> Result<(), String> {
    if !meta.is_file() {
        return Err(format!(
            "{} is {}: only regular files are read",
            path.display(),
            file_kind(meta)
        ));
    }
    if meta.len() > limit {
        return Err(format!(
            "{} is {} bytes, more than the {} this kind of file may have",
            path.display(),
            meta.len(),
            human_bytes(limit)
        ));
    }
    Ok(())
}

/// "a folder", "a character device", … for messages.
fn file_kind(meta: &std::fs::Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_dir() {
        return "a folder";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    "not a regular file"
}

/// `64 MiB`, `2 GiB`.
#[must_use]
pub fn human_bytes(n: u64) -> String {
    if n >= 1 << 30 && n.is_multiple_of(1 << 30) {
        format!("{} GiB", n >> 30)
    } else if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
        format!("{} MiB", n >> 20)
    } else {
        format!("{n} bytes")
    }
}

/// Opens for reading without blocking on a FIFO swapped in after the check (the check after
/// opening then refuses it).
pub(crate) fn open_nonblocking(path: &Path) -> std::io::Result<std::fs::File> {
    let mut o = std::fs::OpenOptions::new();
    o.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.custom_flags(libc::O_NONBLOCK);
    }
    o.open(path)
}

/// Why a read stopped when the user cancelled: a distinct error, not
/// `ErrorKind::Interrupted` — std's read loops (`read_exact`, `read_to_end`, `io::copy`) and
/// the decoders built on them retry `Interrupted` forever, so a cancelled decode would spin.
#[derive(Debug)]
pub struct Cancelled;

impl std::fmt::Display for Cancelled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("cancelled")
    }
}

impl std::error::Error for Cancelled {}

/// The I/O error a cancelled read returns (see [`Cancelled`]).
#[must_use]
pub fn cancelled_error() -> std::io::Error {
    std::io::Error::other(Cancelled)
}

/// Whether `e` is (or wraps) a cancelled read.
#[must_use]
pub fn is_cancelled_error(e: &std::io::Error) -> bool {
    e.get_ref()
        .is_some_and(<dyn std::error::Error + Send + Sync>::is::<Cancelled>)
}

/// Reads at most `len` bytes from `r`, polling `cancel` between chunks. An endless reader
/// gives `len` bytes; a short one what it had.
pub fn read_bounded(
    r: impl Read,
    len: u64,
    cancel: Option<&CancelToken>,
) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(usize::try_from(len.min(CHUNK as u64 * 64)).unwrap_or(0));
    let mut r = r.take(len);
    loop {
        if cancel.is_some_and(CancelToken::is_cancelled) {
            return Err(cancelled_error());
        }
        let before = out.len();
        (&mut r).take(CHUNK as u64).read_to_end(&mut out)?;
        if out.len() == before {
            return Ok(out);
        }
    }
}

/// A reader that fails once `cancel` is tripped: decoders reading through it stop within one
/// of their reads.
pub struct CancelRead<'a, R> {
    inner: R,
    cancel: Option<&'a CancelToken>,
}

impl<'a, R> CancelRead<'a, R> {
    pub fn new(inner: R, cancel: Option<&'a CancelToken>) -> Self {
        Self { inner, cancel }
    }
}

impl<R: Read> Read for CancelRead<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.cancel.is_some_and(CancelToken::is_cancelled) {
            return Err(cancelled_error());
        }
        self.inner.read(buf)
    }
}

impl<R: std::io::Seek> std::io::Seek for CancelRead<'_, R> {
    fn seek(&mut self, pos: std::io::SeekFrom) -> std::io::Result<u64> {
        self.inner.seek(pos)
    }
}

/// The refusal for an image of `w × h` pixels, if it is too large to import.
pub(crate) fn image_size_problem(w: u64, h: u64) -> Option<String> {
    let side = u64::from(MAX_IMAGE_SIDE);
    (w > side || h > side || w.saturating_mul(h) > MAX_IMAGE_PIXELS).then(|| {
        format!(
            "the image is {w} × {h} pixels; Orogen imports at most {MAX_IMAGE_PIXELS} pixels (16384²) and {side} per side"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endless_reader_gives_only_the_stated_length() {
        let got = read_bounded(std::io::repeat(7), 3 * CHUNK as u64 + 5, None).unwrap_or_default();
        assert_eq!(got.len(), 3 * CHUNK + 5);
    }

    #[test]
    fn a_cancelled_read_stops() {
        let cancel = CancelToken::new();
        cancel.cancel();
        let err = read_bounded(std::io::repeat(0), u64::MAX, Some(&cancel));
        assert!(err.as_ref().is_err_and(is_cancelled_error), "{err:?}");
        // Not `Interrupted`: std's loops would retry it forever. A decoder reading through
        // `CancelRead` stops.
        let mut r = CancelRead::new(std::io::repeat(0), Some(&cancel));
        let mut buf = Vec::new();
        let err = r.read_to_end(&mut buf).expect_err("stops");
        assert!(is_cancelled_error(&err), "{err:?}");
    }

    #[test]
    fn devices_and_folders_are_refused_before_reading() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let err = read_file(dir.path(), 1 << 20, None)
            .err()
            .unwrap_or_default();
        assert!(
            err.ends_with("is a folder: only regular files are read"),
            "{err}"
        );
        #[cfg(unix)]
        {
            let err = read_file(Path::new("/dev/zero"), 1 << 20, None)
                .err()
                .unwrap_or_default();
            assert_eq!(
                err,
                "/dev/zero is a character device: only regular files are read"
            );
        }
    }

    #[test]
    fn files_above_the_limit_are_refused_by_their_size() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let p = dir.path().join("big.json");
        let f = std::fs::File::create(&p).unwrap_or_else(|e| panic!("{e}"));
        f.set_len(65 << 20).unwrap_or_else(|e| panic!("{e}"));
        let err = read_file(&p, MAX_GRAPH_BYTES, None)
            .err()
            .unwrap_or_default();
        assert!(
            err.ends_with("is 68157440 bytes, more than the 64 MiB this kind of file may have"),
            "{err}"
        );
    }

    #[test]
    fn the_root_is_the_nearest_folder_with_the_marker() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let top = std::fs::canonicalize(dir.path()).unwrap_or_else(|e| panic!("{e}"));
        let inner = top.join("a/b");
        std::fs::create_dir_all(&inner).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(Project::of_folder(&inner, &[]).root(), inner);
        std::fs::write(top.join(PROJECT_MARKER), "").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(Project::of_folder(&inner, &[]).root(), top);
        std::fs::write(top.join("a").join(PROJECT_MARKER), "").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(Project::of_folder(&inner, &[]).root(), top.join("a"));
    }
}
