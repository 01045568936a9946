//! Sharing and reuse in the editor: the graph's parameters, the library of subgraphs,
//! opening a subgraph node to edit its file (with a breadcrumb back), collapsing a selection
//! into a new subgraph file, and bundles.

use super::{Document, EditorApp, Pending, Purpose};
use egui::Ui;
use orogen::document::subgraphs;
use std::path::{Path, PathBuf};

/// What leaving an edited subgraph does with its file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Leave {
    /// Write the edits to the subgraph's file (every graph using it changes).
    Save,
    /// Write them to this new file and make only the opened node use it.
    SaveAs(PathBuf),
    /// Drop them: nothing is written.
    Discard,
}

/// A graph file of the library: where it is, its name and what it makes.
#[derive(Clone, Debug)]
pub struct LibraryEntry {
    pub path: PathBuf,
    pub name: String,
    pub doc: String,
}

/// The library folders for a graph in `base_dir`: its `lib/` folder, and `graphs/lib/` of
/// the folder the editor was started in.
#[must_use]
pub fn library_dirs(base_dir: Option<&Path>) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = base_dir.map(|b| b.join("lib")).into_iter().collect();
    if let Ok(cwd) = std::env::current_dir() {
        dirs.push(cwd.join("graphs/lib"));
    }
    let mut seen = Vec::new();
    dirs.retain(|d| {
        let c = std::fs::canonicalize(d).ok();
        let keep = c.is_some() && !seen.contains(&c);
        seen.push(c);
        keep
    });
    dirs
}

/// The graphs in the library folders, by name.
#[must_use]
pub fn library(base_dir: Option<&Path>) -> Vec<LibraryEntry> {
    let mut out = Vec::new();
    for dir in library_dirs(base_dir) {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in rd.flatten() {
            let path = e.path();
            if path.extension().is_none_or(|x| x != "json") {
                continue;
            }
            if let Ok(g) = orogen::document::graph_file::load_file(&path) {
                let name = if g.name.is_empty() {
                    path.file_stem()
                        .map(|s| s.to_string_lossy().into_owned())
                        .unwrap_or_default()
                } else {
                    g.name.clone()
                };
                out.push(LibraryEntry {
                    path,
                    name,
                    doc: g.doc,
                });
            }
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

impl EditorApp {
    /// The graph parameters: one row each (value, range, unit, doc), with remove buttons.
    pub(super) fn graph_parameters(&mut self, ui: &mut Ui) {
        let params = self.doc.graph().parameters.clone();
        egui::CollapsingHeader::new(format!("Graph parameters ({})", params.len()))
            .id_salt("orogen-graph-parameters")
            .default_open(!params.is_empty())
            .show(ui, |ui| {
                if params.is_empty() {
                    ui.weak("None yet: ⤴ next to a node's parameter promotes it to a graph parameter, which `orogen build --param` and a subgraph's users can set.");
                    return;
                }
                let mut remove = None;
                egui::Grid::new("orogen-graph-params")
                    .num_columns(3)
                    .striped(true)
                    .show(ui, |ui| {
                        for p in &params {
                            crate::params::graph_param_row(ui, &mut self.doc, p);
                            if ui
                                .small_button("🗑")
                                .on_hover_text("Remove this graph parameter (bound node parameters keep its value)")
                                .clicked()
                            {
                                remove = Some(p.spec.name);
                            }
                            ui.end_row();
                        }
                    });
                if let Some(name) = remove {
                    self.doc.apply(None, |g| g.remove_parameter(name));
                    self.status = format!("Removed graph parameter \"{name}\".");
                }
            });
    }

    /// The library panel: the graphs of the library folders, with their docs; "Add" puts one
    /// on the canvas as a subgraph node.
    pub(super) fn library_panel(&mut self, ui: &mut Ui) {
        egui::CollapsingHeader::new("Library")
            .id_salt("orogen-library")
            .default_open(false)
            .show(ui, |ui| {
                let entries = library(self.doc.base_dir());
                if entries.is_empty() {
                    ui.weak(
                        "No library graphs: put graph files in a lib/ folder next to this graph.",
                    );
                    return;
                }
                for e in entries {
                    ui.horizontal(|ui| {
                        if ui
                            .button("Add")
                            .on_hover_text(format!("Add {} as a subgraph node", e.path.display()))
                            .clicked()
                        {
                            self.add_subgraph(&e.path);
                        }
                        ui.strong(&e.name);
                    });
                    if !e.doc.is_empty() {
                        ui.add(egui::Label::new(egui::RichText::new(&e.doc).small()).wrap());
                    }
                    ui.separator();
                }
            });
    }

    /// Adds the graph file `file` as a subgraph node (its path relative to this graph's file).
    pub fn add_subgraph(&mut self, file: &Path) {
        let Some(base) = self.doc.base_dir().map(Path::to_path_buf) else {
            self.status =
                "Save the graph first: a subgraph's path is relative to the graph's file.".into();
            self.canvas.notify(self.status.clone());
            return;
        };
        let made = subgraphs::relative_path(&base, file)
            .ok_or_else(|| {
                format!(
                    "{} cannot be reached from {}",
                    file.display(),
                    base.display()
                )
            })
            .and_then(|rel| subgraphs::load_subgraph(&base, &rel));
        match made {
            Ok(sub) => {
                let stem = file.file_stem().map_or_else(
                    || "subgraph".to_owned(),
                    |s| s.to_string_lossy().into_owned(),
                );
                let id = subgraphs::fresh_id(self.doc.graph(), &stem);
                let mut node = subgraphs::subgraph_node(&id, sub);
                let p = self.canvas.paste_point();
                node.position = [f64::from(p.x), f64::from(p.y)];
                self.doc.apply(None, |g| g.nodes.push(node));
                self.status = format!("Added subgraph \"{id}\".");
                self.select(Some(id));
            }
            Err(e) => {
                self.status = format!("Cannot add subgraph: {e}");
                self.canvas.notify(self.status.clone());
            }
        }
    }

    /// What a subgraph node's panel adds: its file, whether it changed, and "Open".
    pub(super) fn subgraph_panel(&mut self, ui: &mut Ui, id: &str) {
        let Some(sub) = self.doc.graph().node(id).and_then(|n| n.subgraph.clone()) else {
            return;
        };
        ui.separator();
        ui.label(format!("Subgraph file: {}", sub.path));
        if sub.is_stale() {
            ui.colored_label(
                egui::Color32::from_rgb(230, 170, 60),
                "⚠ The file changed since this graph recorded it; the preview uses it as it is now.",
            );
            if ui
                .button("Accept the change")
                .on_hover_text(
                    "Record the file's new content in this graph (as `orogen check --accept` does)",
                )
                .clicked()
            {
                let id = id.to_owned();
                self.doc.apply(None, |g| {
                    if let Some(n) = g.node_mut(&id) {
                        if let Some(s) = &n.subgraph {
                            n.subgraph = Some(std::sync::Arc::new(orogen::graph::Subgraph {
                                path: s.path.clone(),
                                recorded_hash: s.hash.clone(),
                                hash: s.hash.clone(),
                                graph: s.graph.clone(),
                            }));
                        }
                    }
                });
            }
        }
        if ui
            .button("Open subgraph")
            .on_hover_text("Edit the subgraph's file; the breadcrumb above the canvas leads back")
            .clicked()
        {
            self.open_subgraph(id);
        }
    }

    /// Opens subgraph node `id`'s file for editing; this document waits in the breadcrumb.
    pub fn open_subgraph(&mut self, id: &str) {
        let Some(sub) = self.doc.graph().node(id).and_then(|n| n.subgraph.clone()) else {
            return;
        };
        let Some(base) = self.doc.base_dir().map(Path::to_path_buf) else {
            return;
        };
        match Document::open(&base.join(&sub.path)) {
            Ok(inner) => {
                let outer = std::mem::take(&mut self.doc);
                let mut parents = std::mem::take(&mut self.parents);
                parents.push((outer, id.to_owned()));
                self.replace(inner);
                self.parents = parents;
                self.status = format!("Editing subgraph {} (of \"{id}\").", sub.path);
            }
            Err(e) => {
                self.status = format!("Cannot open the subgraph: {e}");
                self.canvas.notify(self.status.clone());
            }
        }
    }

    /// ⬅ Back: straight back to the graph that opened this subgraph when it is unchanged;
    /// otherwise the editor asks what to do with the edited file (it may be shared), and
    /// nothing is written until the user chooses.
    pub fn back(&mut self) {
        if self.parents.is_empty() {
            return;
        }
        if !self.doc.dirty() {
            self.leave_subgraph(&Leave::Discard);
            return;
        }
        let outer = self.parents.first().and_then(|(d, _)| d.base_dir());
        let users = match (self.doc.path(), outer) {
            (Some(file), Some(outer)) => {
                let mut found = subgraphs::users_of(outer, file);
                if let Some(own) = file.parent() {
                    found.extend(subgraphs::users_of(own, file));
                }
                found.sort();
                found.dedup();
                found
                    .iter()
                    .map(|p| {
                        subgraphs::relative_path(outer, p)
                            .unwrap_or_else(|| p.display().to_string())
                    })
                    .collect()
            }
            _ => Vec::new(),
        };
        self.pending = Some(Pending::LeaveSubgraph { users });
    }

    /// Goes back to the graph that opened this subgraph, doing `how` with its edits, and
    /// reloads the file in the parent (recording its new content there, an undoable step).
    /// Returns false when a save failed (the subgraph stays open).
    pub fn leave_subgraph(&mut self, how: &Leave) -> bool {
        if self.parents.is_empty() {
            return false;
        }
        let copy = match how {
            Leave::Save => {
                if self.doc.dirty() && !self.save() {
                    return false;
                }
                None
            }
            Leave::SaveAs(p) => {
                if !self.save_as(p) {
                    return false;
                }
                Some(p.clone())
            }
            Leave::Discard => None,
        };
        let Some((parent, id)) = self.parents.pop() else {
            return false;
        };
        let parents = std::mem::take(&mut self.parents);
        self.replace(parent);
        self.parents = parents;
        if let Some(base) = self.doc.base_dir().map(Path::to_path_buf) {
            let mut g = self.doc.graph().clone();
            if let Some(file) = copy {
                let used = subgraphs::relative_path(&base, &file)
                    .ok_or_else(|| {
                        format!("{} has no path from {}", file.display(), base.display())
                    })
                    .and_then(|rel| {
                        subgraphs::repoint_subgraph(&mut g, &id, &base, &rel).map(|()| rel)
                    });
                match used {
                    Ok(rel) => {
                        self.doc.apply(None, |doc_graph| *doc_graph = g);
                        self.status = format!("\"{id}\" now uses {rel}.");
                    }
                    Err(e) => {
                        self.status =
                            format!("Saved {}, but \"{id}\" cannot use it: {e}", file.display());
                        self.canvas.notify(self.status.clone());
                    }
                }
            } else {
                let changed = subgraphs::refresh_subgraphs(&mut g, &base, true);
                if !changed.is_empty() {
                    self.doc.apply(None, |doc_graph| *doc_graph = g);
                    self.status = format!("Updated {} from the edited file.", changed.join(", "));
                }
            }
        }
        self.canvas.reveal(&id);
        self.select(Some(id));
        true
    }

    /// The question ⬅ Back asks about an edited subgraph: save to its file (naming the graphs
    /// that use it), save as a new file for this node only, discard, or stay.
    pub(super) fn leave_dialog(&mut self, ctx: &egui::Context, users: &[String]) {
        let file = self.doc.path().and_then(Path::file_name).map_or_else(
            || "the subgraph's file".to_owned(),
            |f| f.to_string_lossy().into_owned(),
        );
        egui::Modal::new(egui::Id::new("orogen-leave-subgraph")).show(ctx, |ui| {
            ui.heading("Save the changes to this subgraph?");
            ui.label(format!("{file} is a file of its own: saving it changes every graph that uses it."));
            if users.is_empty() {
                ui.label("No other graph next to this one uses it.");
            } else {
                ui.label(format!(
                    "Used by: {} (each reports that the file changed until it accepts the change).",
                    users.join(", ")
                ));
            }
            ui.horizontal(|ui| {
                if ui
                    .button(format!("Save to {file}"))
                    .on_hover_text("Write the edits to the shared file")
                    .clicked()
                {
                    self.pending = None;
                    self.leave_subgraph(&Leave::Save);
                }
                if ui
                    .button("Save as a new file…")
                    .on_hover_text("Write the edits to a new file and make only this node use it; the shared file is not changed")
                    .clicked()
                {
                    self.pending = None;
                    let start = self.doc.path().map(copy_name).unwrap_or_default();
                    self.chooser = Some(crate::files::Chooser::new(Purpose::SubgraphCopy, &start));
                }
                if ui
                    .button("Discard changes")
                    .on_hover_text("Go back without writing anything")
                    .clicked()
                {
                    self.pending = None;
                    self.leave_subgraph(&Leave::Discard);
                }
                if ui.button("Cancel").on_hover_text("Stay in the subgraph").clicked() {
                    self.pending = None;
                }
            });
        });
    }

    /// The bar over the canvas while a subgraph is open: where it came from, and back.
    pub(super) fn breadcrumb(&mut self, ui: &mut Ui) {
        ui.horizontal(|ui| {
            if ui
                .button("⬅ Back")
                .on_hover_text(
                    "Return to the graph that uses this subgraph (asks first if it was edited)",
                )
                .clicked()
            {
                self.back();
            }
            let mut crumbs: Vec<String> = self
                .parents
                .iter()
                .map(|(d, id)| {
                    let file = d.path().and_then(Path::file_name).map_or_else(
                        || "untitled".to_owned(),
                        |f| f.to_string_lossy().into_owned(),
                    );
                    format!("{file} › {id}")
                })
                .collect();
            crumbs.push(
                self.doc
                    .path()
                    .and_then(Path::file_name)
                    .map_or_else(String::new, |f| f.to_string_lossy().into_owned()),
            );
            ui.label(crumbs.join(" › "));
        });
    }

    /// "Collapse to subgraph": asks where to save the new subgraph file.
    pub(super) fn start_collapse(&mut self, ctx: &egui::Context) {
        let ids = self.selection(ctx);
        if ids.is_empty() {
            self.status = "Select the nodes to collapse first.".into();
            return;
        }
        if self.doc.base_dir().is_none() {
            self.status =
                "Save the graph first: a subgraph's path is relative to the graph's file.".into();
            self.canvas.notify(self.status.clone());
            return;
        }
        self.collapsing = ids;
        self.choose(Purpose::Collapse);
        if let (Some(ch), Some(base)) = (&mut self.chooser, self.doc.base_dir()) {
            ch.dir = base.join("lib");
            if !ch.dir.is_dir() {
                ch.dir = base.to_path_buf();
            }
            ch.name = "subgraph.json".into();
        }
    }

    /// Collapses the nodes chosen by [`start_collapse`] into `file` (one undoable step; the
    /// file stays written).
    pub fn collapse_into(&mut self, file: &Path) {
        let ids = std::mem::take(&mut self.collapsing);
        let Some(base) = self.doc.base_dir().map(Path::to_path_buf) else {
            return;
        };
        let mut result = None;
        let done = self.doc.edit(None, |g| {
            let r = subgraphs::collapse(g, &ids, &base, file);
            result = r.as_ref().ok().map(|c| c.node.clone());
            r.map(|_| ())
        });
        if let (Ok(()), Some(node)) = (done, result) {
            self.status = format!(
                "Collapsed {} into \"{node}\" ({}).",
                ids.join(", "),
                file.display()
            );
            self.select(Some(node));
        }
    }

    /// Sets the nodes to collapse (the tests' path to [`collapse_into`], without the chooser).
    pub fn set_collapsing(&mut self, ids: Vec<String>) {
        self.collapsing = ids;
    }
}

/// A free name beside `file` for a copy of it: `coastline_2.json`, `coastline_3.json`, …
fn copy_name(file: &Path) -> PathBuf {
    let stem = file.file_stem().map_or_else(
        || "subgraph".to_owned(),
        |s| s.to_string_lossy().into_owned(),
    );
    let dir = file.parent().unwrap_or(Path::new("."));
    let name = orogen::graph::unique_name(&stem, |c| dir.join(format!("{c}.json")).exists());
    dir.join(format!("{name}.json"))
}
