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
        let existing = std::fs::symlink_metadata(dest).ok();
        if existing.as_ref().is_some_and(std::fs::Metadata::is_dir) {
            return Err(fail(
                dest,
                std::io::Error::other("a folder is in the way of this file"),
            ));
        }
        let backup = existing
            .is_some()
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
                let _ = roll_back(dir);
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
            let _ = roll_back(dir);
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

/// One line of a journal read back, checked: a destination Orogen writes in the output folder
/// and the bare name its previous file was moved to, if any.
struct Line {
    dest: String,
    backup: Option<String>,
}

/// Whether `name` is a file name a build writes: an output name (letters, digits, `_`, `-`)
/// with its extensions (`height.png`, `rivers.preview.png`, `manifest.json`).
fn is_output_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('.')
        && !name.ends_with('.')
        && !name.contains("..")
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

/// Whether `name` is the name of a previous file a commit moved aside: `.orogen-old-PID-K`.
fn is_backup_name(name: &str) -> bool {
    name.strip_prefix(".orogen-old-")
        .and_then(|rest| rest.split_once('-'))
        .is_some_and(|(pid, k)| {
            !pid.is_empty()
                && !k.is_empty()
                && pid.bytes().all(|b| b.is_ascii_digit())
                && k.bytes().all(|b| b.is_ascii_digit())
        })
}

/// Reads the journal in `dir` back and checks every line before anything acts on it: the
/// folder may hold a journal someone else planted (a shared bundle can carry
/// `out/.orogen-commit`), so a line naming anything but a file a build writes there, or a
/// previous file other than `.orogen-old-PID-K`, refuses the whole journal.
fn read_journal(dir: &Path) -> Result<Option<Vec<Line>>, String> {
    let path = dir.join(JOURNAL);
    let Some(text) = crate::io::owned::read_state(&path, 1 << 20)? else {
        return Ok(None);
    };
    let refuse = |k: usize, what: String| {
        format!(
            "{}: line {}: {what}; a build journal names only files a build writes in its output folder, so this one was not written by Orogen and was not acted on: nothing was changed. Look at the folder, then delete {JOURNAL} (or build into another folder)",
            crate::io::owned::escape_path(&path),
            k + 1
        )
    };
    let mut lines = Vec::new();
    for (k, line) in text.lines().enumerate() {
        let Some((dest, backup)) = line.split_once('\t') else {
            return Err(refuse(
                k,
                "expected \"DESTINATION<tab>PREVIOUS\"".to_owned(),
            ));
        };
        crate::io::owned::bare_name(dest).map_err(|e| refuse(k, e))?;
        if !is_output_name(dest) {
            return Err(refuse(
                k,
                format!(
                    "\"{}\" is not the name of a file a build writes",
                    crate::io::owned::escape(dest)
                ),
            ));
        }
        let backup = if backup.is_empty() {
            None
        } else {
            crate::io::owned::bare_name(backup).map_err(|e| refuse(k, e))?;
            if !is_backup_name(backup) {
                return Err(refuse(
                    k,
                    format!(
                        "\"{}\" is not the name of a previous file a build moved aside (.orogen-old-PID-K)",
                        crate::io::owned::escape(backup)
                    ),
                ));
            }
            Some(backup.to_owned())
        };
        lines.push(Line {
            dest: dest.to_owned(),
            backup,
        });
    }
    Ok(Some(lines))
}

/// Refuses a journal in `dir` that Orogen did not write, without acting on anything.
pub(super) fn check(dir: &Path) -> Result<(), BuildError> {
    read_journal(dir).map(drop).map_err(BuildError::Journal)
}

/// Puts the previous build back after an interrupted commit (its journal is still there):
/// previous files renamed back over the new ones, new files that had no predecessor removed.
/// Only regular files in `dir` are moved; a link is removed, never followed.
fn roll_back(dir: &Path) -> Result<(), String> {
    let Some(lines) = read_journal(dir)? else {
        return Ok(());
    };
    for line in lines {
        let dest = dir.join(&line.dest);
        match line.backup {
            None => {
                let _ = crate::io::owned::remove_file_no_follow(&dest);
            }
            Some(backup) => {
                let backup = dir.join(backup);
                if crate::io::owned::is_regular_file(&backup) {
                    let _ = std::fs::rename(&backup, &dest);
                }
            }
        }
    }
    let _ = std::fs::remove_file(dir.join(JOURNAL));
    Ok(())
}

/// Makes the folder consistent before a build writes into it: an interrupted commit is rolled
/// back (the previous build restored) and leftovers of earlier runs (`.orogen-tmp-*`,
/// `.orogen-old-*`) are removed. Returns whether an interrupted commit was found; a journal
/// Orogen did not write is refused (nothing in the folder is touched).
pub(super) fn recover(dir: &Path) -> Result<bool, BuildError> {
    let refused = |msg: String| BuildError::Journal(msg);
    let interrupted = std::fs::symlink_metadata(dir.join(JOURNAL)).is_ok();
    if interrupted {
        roll_back(dir).map_err(refused)?;
    }
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let name = e.file_name();
            let name = name.to_string_lossy();
            if name.starts_with(".orogen-tmp-") || name.starts_with(".orogen-old-") {
                let _ = crate::io::owned::remove_file_no_follow(&e.path());
            }
        }
    }
    Ok(interrupted)
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
            assert_eq!(recover(dir.path()).expect("own journal"), interrupted);
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
