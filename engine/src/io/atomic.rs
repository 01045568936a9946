//! Atomic file writes: write to a temporary file in the target folder, then rename over the target.
//! A reader (or a crash) never sees a half-written file, and the previous file survives a failed write.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

/// Writes `path` atomically: `write` fills a buffered temporary file in the same folder,
/// which is flushed, synced and renamed over `path` only if `write` succeeds.
pub fn write_atomic(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<&mut File>) -> io::Result<()>,
) -> io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix(".orogen-tmp-");
    // Temporary files are private (0600) by default; the finished file should be readable
    // like any other output (0644, further limited by the umask on creation).
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o644));
    }
    let mut tmp = builder.tempfile_in(dir)?;
    {
        let mut w = BufWriter::new(tmp.as_file_mut());
        write(&mut w)?;
        w.flush()?;
    }
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Writes bytes atomically.
pub fn write_bytes_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_atomic(path, |w| w.write_all(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn written_files_are_readable_by_others() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("a.txt");
        write_bytes_atomic(&p, b"x").expect("write");
        let mode = std::fs::metadata(&p).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode & 0o044, 0o044, "mode {mode:o}");
    }

    #[test]
    fn failed_write_keeps_previous_file_and_leaves_no_temp() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("a.txt");
        write_bytes_atomic(&p, b"old").expect("write");
        let err = write_atomic(&p, |w| {
            w.write_all(b"partial")?;
            Err(io::Error::other("disk full"))
        });
        assert!(err.is_err());
        assert_eq!(std::fs::read(&p).expect("read"), b"old");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .expect("dir")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }
}
