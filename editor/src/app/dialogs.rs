//! The windows over the canvas: the file chooser, the recovery offer, the unsaved-changes
//! question and the build dialog.

use super::{BuildDialog, Document, EditorApp, Pending, Purpose};

impl EditorApp {
    pub(super) fn open_build_dialog(&mut self) {
        if self.build.is_none() {
            let mut dialog = BuildDialog::new(self.doc.path());
            dialog.cache.clone_from(&self.disk);
            self.build = Some(dialog);
        }
    }

    pub(super) fn dialogs(&mut self, ctx: &egui::Context) {
        if let Some(ch) = &mut self.chooser {
            if let Some(choice) = ch.show(ctx) {
                let purpose = ch.purpose;
                self.chooser = None;
                if let Some(p) = choice {
                    match purpose {
                        Purpose::Open => self.request(Pending::Open(p)),
                        Purpose::SaveAs => {
                            self.save_as(&p);
                        }
                        Purpose::BuildFolder => {
                            if let Some(b) = &mut self.build {
                                b.folder = p.display().to_string();
                            }
                        }
                        Purpose::Collapse => self.collapse_into(&p),
                        Purpose::SubgraphCopy => {
                            self.leave_subgraph(&super::Leave::SaveAs(p));
                        }
                        Purpose::NodeFile => self.use_node_file(&p),
                    }
                }
            }
        }
        if let Some(r) = self.recovery.clone() {
            egui::Modal::new(egui::Id::new("orogen-recovery")).show(ctx, |ui| {
                ui.heading("Restore unsaved work?");
                let file = r.path.as_ref().map_or_else(|| "an unsaved graph".to_owned(), |p| p.display().to_string());
                ui.label(format!(
                    "The editor did not close normally. A recovery copy of {file} was written {} ago.",
                    ago(r.saved_at)
                ));
                ui.horizontal(|ui| {
                    if ui.button("Restore").clicked() {
                        match orogen::document::graph_file::load_str(&r.graph, "recovery file") {
                            Ok(g) => {
                                let mut d = Document::new(g);
                                d.mark_restored(r.path.as_deref());
                                self.replace(d);
                                self.set_status("Restored unsaved work.");
                            }
                            Err(e) => {
                                // Never lose it: the copy is kept where no autosave writes.
                                let kept = self.store.set_recovery_aside().map_or_else(
                                    |err| format!("it is still in {} ({err})", self.store.dir().display()),
                                    |p| format!("it was kept as {}", p.display()),
                                );
                                self.status = format!("Cannot restore: {e}; {kept}");
                                self.canvas.notify(self.status.clone());
                            }
                        }
                        self.recovery = None;
                    }
                    if ui.button("Discard").clicked() {
                        self.autosaver.clear();
                        self.recovery = None;
                    }
                });
            });
        }
        if let Some(Pending::LeaveSubgraph { users }) = self.pending.clone() {
            self.leave_dialog(ctx, &users);
        } else if let Some(p) = self.pending.clone() {
            egui::Modal::new(egui::Id::new("orogen-unsaved")).show(ctx, |ui| {
                ui.heading("Unsaved changes");
                ui.label("The graph has changes that are not saved.");
                ui.horizontal(|ui| {
                    if ui.button("Save").clicked() {
                        self.pending = None;
                        if self.save() {
                            self.perform(p.clone());
                        }
                    }
                    if ui.button("Discard changes").clicked() {
                        self.pending = None;
                        self.autosaver.clear();
                        self.perform(p.clone());
                    }
                    if ui.button("Cancel").clicked() {
                        self.pending = None;
                    }
                });
            });
        }
        self.build_window(ctx);
        self.shortcuts_window(ctx);
        self.catalogue_window(ctx);
        self.guide_window(ctx);
    }

    pub(super) fn build_window(&mut self, ctx: &egui::Context) {
        let Some(mut b) = self.build.take() else {
            return;
        };
        let (open, chooser) = b.show(ctx, self.doc.graph(), self.doc.path());
        if chooser.is_some() {
            self.chooser = chooser;
        }
        if open {
            self.build = Some(b);
        }
    }

    /// The build dialog, if open (tests drive it).
    pub fn build_dialog(&mut self) -> Option<&mut BuildDialog> {
        self.build.as_mut()
    }
}

pub(super) fn ago(t: u64) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let s = now.saturating_sub(t);
    if s < 120 {
        format!("{s} s")
    } else if s < 7200 {
        format!("{} min", s / 60)
    } else {
        format!("{} h", s / 3600)
    }
}
