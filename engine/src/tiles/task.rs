//! What every task shares: its context (the plan folder, the plan, the graph, the run's
//! options), its outcome and errors, and the records that make a finished task skippable.

use super::Plan;
use crate::eval::{CancelToken, ProgressEvent};
use crate::graph::Graph;
use crate::io::plan::TileRecord as Record;
use std::path::{Path, PathBuf};

/// Why a task could not run: a file it could not read or write, or a problem with the plan,
/// the graph or the evaluation (already said in words).
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum TaskError {
    #[error("cannot {action} {}: {message}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        /// The system's error, as text (so the error compares and clones).
        message: String,
    },
    #[error("{0}")]
    Failed(String),
}

impl TaskError {
    pub(super) fn io(
        action: &'static str,
        path: impl AsRef<Path>,
        e: impl std::fmt::Display,
    ) -> Self {
        Self::Io {
            action,
            path: path.as_ref().to_path_buf(),
            message: e.to_string(),
        }
    }

    /// Whether the message contains `s` (what tests and callers look for).
    #[must_use]
    pub fn contains(&self, s: &str) -> bool {
        self.to_string().contains(s)
    }
}

impl From<&str> for TaskError {
    fn from(message: &str) -> Self {
        Self::Failed(message.to_owned())
    }
}

impl From<String> for TaskError {
    fn from(message: String) -> Self {
        Self::Failed(message)
    }
}

/// What running a task did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskOutcome {
    /// The task ran and wrote its outputs.
    Ran,
    /// Its outputs were already there with the hashes its record gives (a resumed build, a
    /// duplicated task): nothing was done.
    AlreadyDone,
}

/// How to run tasks.
#[derive(Default)]
pub struct RunOptions<'a> {
    pub cancel: CancelToken,
    pub progress: Option<&'a (dyn Fn(ProgressEvent) + Sync)>,
    /// The disk cache tiles' node results are read from and written to (under keys that
    /// name the tile's window and the coarse size), so a re-run after a late edit reuses
    /// every upstream tile result.
    pub cache: Option<std::sync::Arc<crate::eval::DiskCache>>,
    /// At most this many output tiles side by side in [`super::run_all`] (0: as many as the
    /// thread pool runs): what keeps a run under a memory limit when one tile holds a
    /// sizeable share of it (the other tasks hold a few fields of a tile or a piece).
    pub side_by_side: usize,
}

pub(super) fn hash_file(path: &Path) -> Option<String> {
    crate::io::owned::hash_regular_file(path, None)
}

/// Whether `file` (as a record lists it) names a file a task writes: `tiles/NAME`,
/// `.work/KEY/NAME` or `.work/KEY/s<i>/NAME` (a stage's) with a bare `NAME`. A record is read
/// back from the plan folder, whose contents may have been planted: nothing else is ever
/// opened.
fn record_file_ok(plan: &Plan, file: &str) -> bool {
    let bare = |n: &str| crate::io::owned::bare_name(n).is_ok() && !n.starts_with('.');
    if let Some(n) = file.strip_prefix("tiles/") {
        return bare(n);
    }
    let Some(rest) = file.strip_prefix(&format!(".work/{}/", plan.key)) else {
        return false;
    };
    match rest.split_once('/') {
        None => bare(rest),
        Some((stage, n)) => {
            stage
                .strip_prefix('s')
                .is_some_and(|i| !i.is_empty() && i.bytes().all(|b| b.is_ascii_digit()))
                && bare(n)
        }
    }
}

/// The record at `path` when it belongs to this plan and every file it lists is intact: a
/// regular file of bounded size whose every listed file is one a task writes, a regular file
/// (never a link or a device) with the listed hash.
pub(super) fn valid_record(dir: &Path, plan: &Plan, path: &Path) -> Option<Record> {
    let text = crate::io::owned::read_state(path, crate::io::owned::MAX_STATE_BYTES).ok()??;
    let rec: Record = serde_json::from_str(&text).ok()?;
    let intact = rec.key == plan.key
        && rec.files.iter().all(|(f, h)| {
            record_file_ok(plan, f) && hash_file(&dir.join(f)).as_deref() == Some(h.as_str())
        });
    intact.then_some(rec)
}

pub(super) struct Ctx<'a> {
    pub(super) dir: &'a Path,
    pub(super) plan: &'a Plan,
    pub(super) graph: &'a Graph,
    pub(super) work: &'a Path,
    pub(super) opts: &'a RunOptions<'a>,
}

/// Relative path of a work file of this plan, as records list it.
pub(super) fn rel(plan: &Plan, name: &str) -> String {
    format!(".work/{}/{name}", plan.key)
}
