//! The files of a build, and how they replace the previous build's.
//!
//! Every file is written in full to a synced temporary file in the output folder first
//! (`.orogen-tmp-*`). Only when all of them are written does [`Staging::commit`] switch:
//!
//! 1. write a journal (`.orogen-commit`, atomically) naming every destination and where its
//!    previous file will be kept;
//! 2. move the previous files aside (`.orogen-old-*`);
//! 3. rename the new files into place, the manifest last;
//! 4. remove the journal — **the commit point** — and then the previous files.
//!
//! A failure in 2–3 undoes at once. A crash (power loss, `kill -9`) leaves the journal; the
//! next build into the folder first calls [`recover`], which puts every previous file back and
//! removes the new ones, so the folder holds the previous build again. A crash after the commit
//! point leaves only `.orogen-old-*` files, which `recover` deletes. Either way a reader who
//! runs `recover` first (every build does) sees the previous build or the new one, never a mix.

use super::BuildError;
use crate::io::manifest::FileEntry;
use std::path::{Path, PathBuf};

/// The journal of a commit in progress.
const JOURNAL: &str = ".orogen-commit";

/// The files of one build, each written in full to a synced temporary file beside its
/// destination. Only [`Staging::commit`] renames them into place; dropped before that (an
/// error, a cancel) they delete themselves and the folder is as it was.
pub(super) struct Staging {
    dir: PathBuf,
    staged: Vec<(tempfile::TempPath, PathBuf)>,
    /// Manifest entries of the listed files.
    pub(super) files: Vec<FileEntry>,
}

impl Staging {
    pub(super) fn new(dir: &Path) -> Self {
        Self {
            dir: dir.to_path_buf(),
            staged: Vec::new(),
            files: Vec::new(),
        }
    }

    /// Stages `file` (a name in the folder) and lists it in the manifest; returns its hash.
    pub(super) fn add(
        &mut self,
        file: String,
        role: &str,
        bytes: &[u8],
    ) -> Result<String, BuildError> {
        let dest = self.dir.join(&file);
        self.add_unlisted(&dest, bytes)?;
        let hash = blake3::hash(bytes).to_hex().to_string();
        self.files.push(FileEntry {
            file,
            role: role.to_owned(),
            hash: hash.clone(),
        });
        Ok(hash)
    }

    /// Stages a file the manifest does not list (the manifest itself).
    pub(super) fn add_unlisted(&mut self, dest: &Path, bytes: &[u8]) -> Result<(), BuildError> {
        self.staged
            .push((stage(&self.dir, bytes)?, dest.to_path_buf()));
        Ok(())
    }

    pub(super) fn commit(self) -> Result<(), BuildError> {
        commit_until(&self.dir, self.staged, usize::MAX)
    }
}

/// One destination of a commit: the new file and where the previous one is kept, if any.
struct Entry {
    dest: PathBuf,
    backup: Option<PathBuf>,
}

fn journal_text(entries: &[Entry]) -> String {
    let mut s = String::new();
    for e in entries {
        let name = |p: &Path| {
            p.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        };
        s.push_str(&name(&e.dest));
        s.push('\t');
        s.push_str(&e.backup.as_deref().map(name).unwrap_or_default());
        s.push('\n');
    }
    s
}

/// Switches the folder to the staged files (see the module doc). `crash_after` stops dead
/// after that many renames, leaving what a killed process would (tests).
fn commit_until(
    dir: &Path,
    staged: Vec<(tempfile::TempPath, PathBuf)>,
    crash_after: usize,
) -> Result<(), BuildError> {
    let fail = |dest: &Path, source: std::io::Error| BuildError::Write {
        path: dest.display().to_string(),
        source,
    };
    let mut entries = Vec::with_capacity(staged.len());
    for (k, (_, dest)) in staged.iter().enumerate() {
        if dest.is_dir() {
            return Err(fail(
                dest,
                std::io::Error::other("a folder is in the way of this file"),
            ));
        }
        let backup = dest
            .exists()
            .then(|| dir.join(format!(".orogen-old-{}-{k}", std::process::id())));
        entries.push(Entry {
            dest: dest.clone(),
            backup,
        });
    }
    let journal = dir.join(JOURNAL);
    crate::io::atomic::write_bytes_atomic(&journal, journal_text(&entries).as_bytes())
        .map_err(|e| fail(&journal, e))?;
    let mut renames = 0usize;
    let mut crashed = || {
        renames += 1;
        renames > crash_after
    };
    for e in &entries {
        if let Some(b) = &e.backup {
            if crashed() {
                return Ok(());
            }
            if let Err(err) = std::fs::rename(&e.dest, b) {
                roll_back(dir);
                return Err(fail(&e.dest, err));
            }
        }
    }
    for (tmp, dest) in staged {
        if crashed() {
            // A killed process leaves its temporary files behind too.
            let _ = tmp.keep();
            return Ok(());
        }
        if let Err(err) = tmp.persist(&dest) {
            roll_back(dir);
            return Err(fail(&dest, err.error));
        }
    }
    // The commit point.
    std::fs::remove_file(&journal).map_err(|e| fail(&journal, e))?;
    for b in entries.iter().filter_map(|e| e.backup.as_ref()) {
        let _ = std::fs::remove_file(b);
    }
    Ok(())
}

/// Puts the previous build back after an interrupted commit (its journal is still there):
/// previous files renamed back over the new ones, new files that had no predecessor removed.
fn roll_back(dir: &Path) {
    let journal = dir.join(JOURNAL);
    let Ok(text) = std::fs::read_to_string(&journal) else {
        return;
    };
    for line in text.lines() {
        let Some((dest, backup)) = line.split_once('\t') else {
            continue;
        };
        let dest = dir.join(dest);
        if backup.is_empty() {
            let _ = std::fs::remove_file(&dest);
        } else {
            let backup = dir.join(backup);
            if backup.exists() {
                let _ = std::fs::rename(&backup, &dest);
            }
        }
    }
    let _ = std::fs::remove_file(&journal);
}

/// Makes the folder consistent before a build writes into it: an interrupted commit is rolled
/// back (the previous build restored) and leftovers of earlier runs (`.orogen-tmp-*`,
/// `.orogen-old-*`) are removed. Returns whether an interrupted commit was found.
pub(super) fn recover(dir: &Path) -> bool {
    let interrupted = dir.join(JOURNAL).exists();
    if interrupted {
        roll_back(dir);
    }
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let name = e.file_name();
            let name = name.to_string_lossy();
            if name.starts_with(".orogen-tmp-") || name.starts_with(".orogen-old-") {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
    interrupted
}

/// Writes `bytes` to a new temporary file in `dir` (synced), to be renamed into place later.
fn stage(dir: &Path, bytes: &[u8]) -> Result<tempfile::TempPath, BuildError> {
    let err = |source: std::io::Error| BuildError::Write {
        path: dir.display().to_string(),
        source,
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(".orogen-tmp-")
        .tempfile_in(dir)
        .map_err(err)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // Outputs are ordinary files (0644 before the umask), not private temporaries.
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o644))
            .map_err(err)?;
    }
    std::io::Write::write_all(&mut tmp, bytes).map_err(err)?;
    tmp.as_file().sync_all().map_err(err)?;
    Ok(tmp.into_temp_path())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listing(dir: &Path) -> Vec<(String, Vec<u8>)> {
        let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
            .expect("dir")
            .flatten()
            .map(|e| {
                (
                    e.file_name().to_string_lossy().into_owned(),
                    std::fs::read(e.path()).expect("read"),
                )
            })
            .collect();
        v.sort();
        v
    }

    fn staging(dir: &Path, files: &[(&str, &str)]) -> Staging {
        let mut s = Staging::new(dir);
        for (name, text) in files {
            s.add((*name).to_owned(), "test", text.as_bytes())
                .expect("stage");
        }
        s
    }

    /// A process killed at any point of a commit leaves a folder that the next build's
    /// `recover` turns back into exactly the previous build; killed after the commit point,
    /// into exactly the new one.
    #[test]
    fn a_crash_at_any_rename_is_recovered_to_one_whole_build() {
        let old = [
            ("a.png", "old a"),
            ("b.png", "old b"),
            ("manifest.json", "old m"),
        ];
        let new = [
            ("a.png", "new a"),
            ("c.png", "new c"),
            ("manifest.json", "new m"),
        ];
        // Renames: 2 previous files aside (a, manifest) + 3 new files in.
        for crash_after in 0..=5 {
            let dir = tempfile::tempdir().expect("tempdir");
            staging(dir.path(), &old).commit().expect("first build");
            let before = listing(dir.path());
            let s = staging(dir.path(), &new);
            commit_until(dir.path(), s.staged, crash_after).expect("interrupted");
            let interrupted = dir.path().join(JOURNAL).exists();
            assert_eq!(interrupted, crash_after < 5, "crash after {crash_after}");
            assert_eq!(recover(dir.path()), interrupted);
            let after = listing(dir.path());
            if interrupted {
                assert_eq!(
                    after, before,
                    "crash after {crash_after} renames: previous build back"
                );
            } else {
                let want: Vec<(String, Vec<u8>)> = [
                    ("a.png", "new a"),
                    ("b.png", "old b"),
                    ("c.png", "new c"),
                    ("manifest.json", "new m"),
                ]
                .iter()
                .map(|(n, t)| ((*n).to_owned(), t.as_bytes().to_vec()))
                .collect();
                assert_eq!(after, want, "crash after the commit point: new build");
            }
        }
    }
}
