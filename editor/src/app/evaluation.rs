//! The evaluation loop: jobs submitted to the worker when the document changes, snapshots
//! received and shown, frame timings.

use super::EditorApp;
use crate::build_dialog::BuildDialog;
use crate::worker::Snapshot;
use orogen::eval::NodeStatus;
use std::path::Path;
use std::time::Duration;
use std::time::Instant;

impl EditorApp {
    pub(super) fn frame_timing(&mut self, ctx: &egui::Context) {
        let now = Instant::now();
        if let Some(last) = self.last_frame.replace(now) {
            let ms = (now - last).as_secs_f32() * 1000.0;
            self.frame_ms.push_back(ms);
            if self.frame_ms.len() > 240 {
                self.frame_ms.pop_front();
            }
            if let Some(f) = &mut self.frame_log {
                use std::io::Write;
                let running = self.worker.running().len();
                // The UI time is that of the previous frame (this one has not been built yet).
                let _ = writeln!(
                    f,
                    "{:.3} {ms:.3} {:.3} {running}",
                    self.started.elapsed().as_secs_f64(),
                    self.ui_ms
                );
            }
        }
        if !self.worker.running().is_empty() || self.build.as_ref().is_some_and(BuildDialog::busy) {
            ctx.request_repaint_after(crate::worker::PROGRESS_FRAME);
        }
    }

    /// Takes finished evaluations from the worker.
    pub(super) fn receive(&mut self, ctx: &egui::Context) {
        for mut s in self.worker.poll() {
            if s.cancelled || s.partial {
                // Keep showing what the stale run, or the previewed node's pass, did not get
                // to (a partial pass's other nodes come with the whole graph's pass next).
                if let Some(old) = &self.snapshot {
                    for (id, f) in &old.result.fields {
                        if s.graph.node(id).is_some() && !s.result.fields.contains_key(id) {
                            s.result.fields.insert(id.clone(), f.clone());
                            if let Some(st) = old.result.status.get(id) {
                                s.result
                                    .status
                                    .entry(id.clone())
                                    .or_insert_with(|| st.clone());
                            }
                        }
                    }
                }
                s.result.status.retain(|_, st| {
                    !matches!(st, NodeStatus::Failed(orogen::node::NodeError::Cancelled))
                });
            }
            let newer = self.is_newer(&s);
            if newer {
                self.thumbnails.update(ctx, &s.graph, &s.result);
                if std::mem::take(&mut self.frame_on_preview) {
                    self.canvas.refit();
                }
                if !s.cancelled {
                    self.status = preview_status(&s);
                }
                self.snapshot = Some(s);
            }
        }
    }

    /// Sends the graph to the worker after every change.
    pub(super) fn submit(&mut self, ctx: &egui::Context) {
        let dragging = ctx.input(|i| i.pointer.any_down());
        let rev = self.doc.revision();
        let refine = !dragging;
        let needed = match self.submitted {
            None => true,
            Some((r, refined)) => r != rev || (refine && !refined),
        };
        if !needed {
            return;
        }
        let mut res = vec![self.options.preview_resolution];
        if refine && self.options.refine_resolution != self.options.preview_resolution {
            res.push(self.options.refine_resolution);
        }
        // The previewed node first: its picture need not wait for the rest of the graph.
        let focus = self.previewed().cloned();
        self.worker.submit_focused(
            self.doc.graph(),
            self.doc.base_dir().map(Path::to_path_buf),
            &res,
            focus.as_deref(),
        );
        self.submitted = Some((rev, refine));
    }

    /// Waits (in tests) until the worker has answered the latest submission.
    pub fn wait_for_preview(&mut self, timeout: Duration) -> bool {
        let end = Instant::now() + timeout;
        loop {
            let target = self.worker.generation();
            let done = self.snapshot.as_ref().is_some_and(|s| {
                s.generation == target
                    && !s.cancelled
                    && !s.partial
                    && s.resolution == self.options.refine_resolution
            });
            if done {
                return true;
            }
            let Some(left) = end.checked_duration_since(Instant::now()) else {
                return false;
            };
            if let Some(s) = self.worker.wait(left) {
                // Put it back through the normal path.
                self.snapshot_in(s);
            }
        }
    }

    /// True when `s` answers a newer edit than the shown snapshot, or the same one at a finer
    /// (or equal) resolution.
    pub(super) fn is_newer(&self, s: &Snapshot) -> bool {
        self.snapshot.as_ref().is_none_or(|o| {
            s.generation > o.generation
                || (s.generation == o.generation && s.resolution >= o.resolution)
        })
    }

    pub(super) fn snapshot_in(&mut self, s: Snapshot) {
        let newer = self.is_newer(&s);
        if newer && !s.cancelled {
            self.status = preview_status(&s);
            self.snapshot = Some(s);
        }
    }
}

/// The status line for a finished preview: its size, latency and disk cache hits.
fn preview_status(s: &crate::worker::Snapshot) -> String {
    format!(
        "Preview {}² ready in {:.0} ms{}.",
        s.resolution,
        s.latency.as_secs_f64() * 1000.0,
        match s.result.disk_read.len() {
            0 => String::new(),
            1 => " (1 node from the disk cache)".to_owned(),
            n => format!(" ({n} nodes from the disk cache)"),
        }
    )
}
