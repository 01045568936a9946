//! Crash recovery on a timer of its own: a thread writes the recovery file (atomically) at
//! most once per interval with the latest unsaved document it was handed, whether or not the
//! window repaints. The UI hands it the document at the end of every frame that changed it;
//! a frame comes with the input that made the edit, so the last edit of a slider drag, a
//! wire, a paste or a graph parameter reaches the file within the interval even when the
//! user then leaves mouse and keyboard alone (the paint loop alone waited for more input).
//! Clearing (after a save or a discard) goes through the same thread, so an older write can
//! never land after it.

use crate::files::Store;
use orogen::Graph;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

enum Msg {
    /// The document at this revision (its file, its graph).
    Doc(u64, Option<PathBuf>, Box<Graph>),
    /// Forget what is pending and remove the recovery file.
    Clear,
    /// Write what is pending now and answer.
    Flush(mpsc::Sender<Result<(), String>>),
}

/// The recovery file's writer thread.
pub struct Autosaver {
    tx: mpsc::Sender<Msg>,
    written: Arc<AtomicU64>,
    error: Arc<Mutex<Option<String>>>,
}

impl Autosaver {
    /// Starts the thread: it writes into `store` at most once per `every`.
    #[must_use]
    pub fn new(store: Store, every: Duration) -> Self {
        let (tx, rx) = mpsc::channel();
        let written = Arc::new(AtomicU64::new(0));
        let error = Arc::new(Mutex::new(None));
        let (w, e) = (Arc::clone(&written), Arc::clone(&error));
        let spawned = std::thread::Builder::new()
            .name("orogen-autosave".into())
            .spawn(move || run(&store, every, &rx, &w, &e));
        if let Err(err) = spawned {
            if let Ok(mut slot) = error.lock() {
                *slot = Some(format!("autosave is off: cannot start its thread ({err})"));
            }
        }
        Self { tx, written, error }
    }

    /// The document changed: write it when the interval allows.
    pub fn update(&self, revision: u64, path: Option<PathBuf>, graph: &Graph) {
        let _ = self
            .tx
            .send(Msg::Doc(revision, path, Box::new(graph.clone())));
    }

    /// Removes the recovery file (after a save, a discard, a clean exit), after any pending
    /// write is dropped.
    pub fn clear(&self) {
        let _ = self.tx.send(Msg::Clear);
    }

    /// Writes what is pending now and waits for it (on exit, and tests).
    pub fn flush(&self) -> Result<(), String> {
        let (reply, answer) = mpsc::channel();
        self.tx
            .send(Msg::Flush(reply))
            .map_err(|_| "the autosave thread stopped".to_owned())?;
        answer
            .recv_timeout(Duration::from_secs(30))
            .map_err(|_| "the autosave thread did not answer".to_owned())?
    }

    /// The revision the recovery file holds (0 before the first write).
    #[must_use]
    pub fn written(&self) -> u64 {
        self.written.load(Ordering::Acquire)
    }

    /// The last write's failure, once.
    #[must_use]
    pub fn take_error(&self) -> Option<String> {
        self.error.lock().ok().and_then(|mut e| e.take())
    }
}

type Pending = (u64, Option<PathBuf>, Box<Graph>);

fn run(
    store: &Store,
    every: Duration,
    rx: &mpsc::Receiver<Msg>,
    written: &AtomicU64,
    error: &Mutex<Option<String>>,
) {
    let mut pending: Option<Pending> = None;
    let mut last: Option<Instant> = None;
    let write = |p: Pending| -> Result<(), String> {
        let r = store.autosave(p.1.as_deref(), &p.2);
        match &r {
            Ok(()) => written.store(p.0, Ordering::Release),
            Err(e) => {
                if let Ok(mut slot) = error.lock() {
                    *slot = Some(format!("Autosave failed: {e}"));
                }
            }
        }
        r
    };
    loop {
        let msg = if pending.is_some() {
            let due = last.map_or(Duration::ZERO, |t| every.saturating_sub(t.elapsed()));
            if due.is_zero() {
                if let Some(p) = pending.take() {
                    let _ = write(p);
                }
                last = Some(Instant::now());
                continue;
            }
            match rx.recv_timeout(due) {
                Ok(m) => m,
                Err(RecvTimeoutError::Timeout) => continue,
                // The app is gone without a clean exit: like a crash, nothing more is written.
                Err(RecvTimeoutError::Disconnected) => return,
            }
        } else {
            match rx.recv() {
                Ok(m) => m,
                Err(_) => return,
            }
        };
        match msg {
            Msg::Doc(rev, path, graph) => pending = Some((rev, path, graph)),
            Msg::Clear => {
                pending = None;
                store.clear_recovery();
            }
            Msg::Flush(reply) => {
                let r = pending.take().map_or(Ok(()), |p| {
                    last = Some(Instant::now());
                    write(p)
                });
                let _ = reply.send(r);
            }
        }
    }
}
