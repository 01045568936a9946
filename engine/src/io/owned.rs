//! Folders Orogen writes and reads back (an output folder and its build journal, a plan folder,
//! the disk cache): their contents may have been planted by someone else — a shared bundle
//! can carry `out/.orogen-commit`, a cluster's cache folder is writable by many users. What
//! Orogen reads back from such a folder is data, never instructions: it acts only on bare
//! names of the kinds it writes itself, never resolves a path outside the folder, never reads
//! anything but a regular file (a link is not followed) and never deletes through a link.

use std::path::{Path, PathBuf};

/// Largest state file (journal, record) read back from a folder Orogen owns.
pub const MAX_STATE_BYTES: u64 = 16 << 20;

/// Checks that `name` is a bare file name: not empty, no path separator, not `.` or `..`, no
/// control characters, at most 255 bytes. The error says what was wrong.
pub fn bare_name(name: &str) -> Result<&str, String> {
    let why = if name.is_empty() {
        "an empty name"
    } else if name.len() > 255 {
        "longer than 255 bytes"
    } else if name == "." || name == ".." {
        "a reference to a folder"
    } else if name.contains('/') || name.contains('\\') {
        "a path, not a bare file name"
    } else if name.chars().any(char::is_control) {
        "a name with control characters"
    } else {
        return Ok(name);
    };
    Err(format!("\"{}\" is {why}", escape(name)))
}

/// `dir/name` for a bare `name` (see [`bare_name`]).
pub fn join_bare(dir: &Path, name: &str) -> Result<PathBuf, String> {
    Ok(dir.join(bare_name(name)?))
}

/// Reads a state file Orogen wrote into a folder it owns, as UTF-8: only a regular file (a
/// link, a device or a FIFO is refused without being opened or followed), at most `limit`
/// bytes. `Ok(None)` when there is no such file.
pub fn read_state(path: &Path, limit: u64) -> Result<Option<String>, String> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        // No such file, or its folder is not a folder (yet): nothing to read back.
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            return Ok(None)
        }
        Err(e) => return Err(format!("{}: {e}", escape_path(path))),
    };
    if meta.file_type().is_symlink() {
        return Err(format!(
            "{} is a symbolic link: Orogen writes a regular file there and does not follow links in folders it owns",
            escape_path(path)
        ));
    }
    super::trust::read_text(path, limit, None).map(Some)
}

/// Creates folder `dir` (and its parents) if missing and checks that `dir` itself is a real
/// folder, not a link to one elsewhere: writing through a planted link would put files
/// outside the folder Orogen owns.
pub fn ensure_dir(dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", escape_path(dir)))?;
    match std::fs::symlink_metadata(dir) {
        Ok(m) if m.file_type().is_dir() => Ok(()),
        Ok(_) => Err(format!(
            "{} is a link, not a folder: Orogen does not follow links in folders it owns",
            escape_path(dir)
        )),
        Err(e) => Err(format!("{}: {e}", escape_path(dir))),
    }
}

/// Whether `path` is a real folder, not followed through a link.
#[must_use]
pub fn is_real_dir(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_dir())
}

/// The BLAKE3 hash (hex) of the regular file at `path`, streamed in 1 MiB chunks; `None` for
/// anything else (a link, a device, a FIFO: never opened or followed), an unreadable file,
/// or when `cancel` trips.
#[must_use]
pub fn hash_regular_file(path: &Path, cancel: Option<&crate::node::CancelToken>) -> Option<String> {
    use std::io::Read;
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.file_type().is_file() {
        return None;
    }
    let file = super::trust::open_nonblocking(path).ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() {
        return None;
    }
    let mut r = file.take(meta.len());
    let mut h = blake3::Hasher::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        if cancel.is_some_and(crate::node::CancelToken::is_cancelled) {
            return None;
        }
        let n = r.read(&mut buf).ok()?;
        if n == 0 {
            return Some(h.finalize().to_hex().to_string());
        }
        h.update(&buf[..n]);
    }
}

/// Reads a file Orogen wrote into a folder it owns: only a regular file (never a link, a
/// device or a FIFO), at most `limit` bytes.
pub fn read_regular(path: &Path, limit: u64) -> Result<Vec<u8>, String> {
    let meta =
        std::fs::symlink_metadata(path).map_err(|e| format!("{}: {e}", escape_path(path)))?;
    if !meta.file_type().is_file() {
        return Err(format!(
            "{} is not a regular file: Orogen does not follow links in folders it owns",
            escape_path(path)
        ));
    }
    super::trust::read_file(path, limit, None)
}

/// Whether `path` is a regular file, not followed through a link.
#[must_use]
pub fn is_regular_file(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_file())
}

/// Removes `path` if it is a regular file or a link (the link itself, never what it points
/// to); anything else (a folder, a device) is left alone. Returns whether something was
/// removed.
#[must_use = "whether something was removed"]
pub fn remove_file_no_follow(path: &Path) -> bool {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_file() || m.file_type().is_symlink() => {
            std::fs::remove_file(path).is_ok()
        }
        _ => false,
    }
}

/// Removes a folder Orogen made and everything in it without following a link: a link inside
/// is removed itself, never what it points to; a link in place of the folder is removed
/// itself. (`std::fs::remove_dir_all` does not follow links inside the tree, which this
/// relies on.)
pub fn remove_tree_no_follow(path: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_dir() => std::fs::remove_dir_all(path),
        Ok(_) => std::fs::remove_file(path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// `text` with control characters (terminal escape sequences among them, line breaks too)
/// escaped, for echoing names and paths a stranger chose.
#[must_use]
pub fn escape(text: &str) -> String {
    crate::graph::escape_control(&text.replace('\n', "\\n")).into_owned()
}

/// A path for a message, with control characters escaped (see [`escape`]).
#[must_use]
pub fn escape_path(path: &Path) -> String {
    escape(&path.display().to_string())
}

/// Bytes free for an unprivileged writer on the file system holding `dir`, where known.
#[cfg(unix)]
#[must_use]
pub fn free_bytes(dir: &Path) -> Option<u64> {
    let s = rustix::fs::statvfs(dir).ok()?;
    Some(s.f_bavail.saturating_mul(s.f_frsize))
}

#[cfg(not(unix))]
#[must_use]
pub fn free_bytes(_dir: &Path) -> Option<u64> {
    None
}

/// Bytes in binary units, for messages: "1.5 GiB".
#[must_use]
pub fn human(bytes: u64) -> String {
    let b = bytes as f64;
    match bytes {
        0..1024 => format!("{bytes} B"),
        1024..1_048_576 => format!("{:.1} KiB", b / 1024.0),
        1_048_576..1_073_741_824 => format!("{:.1} MiB", b / 1_048_576.0),
        _ => format!("{:.1} GiB", b / 1_073_741_824.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_bare_names_pass() {
        for ok in [
            "height.png",
            "a-b_c.preview.png",
            ".orogen-old-1-2",
            "manifest.json",
        ] {
            assert_eq!(bare_name(ok), Ok(ok));
        }
        for bad in [
            "",
            ".",
            "..",
            "../x",
            "/etc/passwd",
            "a/b",
            "a\\b",
            "x\u{1b}[2J",
        ] {
            assert!(bare_name(bad).is_err(), "{bad:?} accepted");
        }
        assert_eq!(
            bare_name("../../victim/b.txt"),
            Err("\"../../victim/b.txt\" is a path, not a bare file name".to_owned())
        );
    }

    #[test]
    fn escape_makes_terminal_sequences_visible() {
        assert_eq!(escape("a\u{1b}[31mb\n"), "a\\u{1b}[31mb\\n");
        assert_eq!(escape("plain é"), "plain é");
    }

    #[cfg(unix)]
    #[test]
    fn links_are_removed_not_followed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let victim = dir.path().join("victim");
        std::fs::create_dir(&victim).expect("mkdir");
        std::fs::write(victim.join("keep"), "KEEP").expect("write");
        let owned = dir.path().join("owned");
        std::fs::create_dir(&owned).expect("mkdir");
        std::os::unix::fs::symlink(&victim, owned.join("v1")).expect("link");
        std::os::unix::fs::symlink(victim.join("keep"), owned.join("f")).expect("link");
        assert!(read_state(&owned.join("f"), 100).is_err());
        assert!(remove_file_no_follow(&owned.join("f")));
        remove_tree_no_follow(&owned).expect("remove");
        assert_eq!(
            std::fs::read_to_string(victim.join("keep")).expect("read"),
            "KEEP"
        );
        assert!(!owned.exists());
    }
}
