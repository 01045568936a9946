//! Files around the document: recent files, the crash-recovery autosave, and a small
//! in-app file chooser (it needs no desktop portal, so it works everywhere the editor runs,
//! including under Xvfb and in the UI tests).

use orogen::io::atomic;
use std::path::{Path, PathBuf};

/// How many recent files are remembered.
const RECENT: usize = 10;

/// The editor's settings folder: `$OROGEN_EDITOR_HOME`, else `$XDG_CONFIG_HOME/orogen`, else
/// `~/.config/orogen`.
#[must_use]
pub fn default_config_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("OROGEN_EDITOR_HOME") {
        return PathBuf::from(d);
    }
    if let Some(d) = std::env::var_os("XDG_CONFIG_HOME") {
        return PathBuf::from(d).join("orogen");
    }
    std::env::var_os("HOME").map_or_else(
        || PathBuf::from(".orogen"),
        |h| PathBuf::from(h).join(".config/orogen"),
    )
}

/// Recent files and the recovery file, in one folder.
#[derive(Clone, Debug)]
pub struct Store {
    dir: PathBuf,
}

/// What the recovery file holds besides the graph.
#[derive(serde::Serialize, serde::Deserialize, Debug, Clone, PartialEq)]
pub struct Recovery {
    /// The file the unsaved graph belongs to, if it had one.
    pub path: Option<PathBuf>,
    /// Seconds since the Unix epoch when it was written.
    pub saved_at: u64,
    /// The graph in the engine's file format.
    pub graph: String,
}

impl Store {
    #[must_use]
    pub fn new(dir: PathBuf) -> Self {
        Self { dir }
    }

    #[must_use]
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn recent_path(&self) -> PathBuf {
        self.dir.join("recent.json")
    }

    fn recovery_path(&self) -> PathBuf {
        self.dir.join("recovery.json")
    }

    /// Recently opened or saved files, newest first (missing files are left out).
    #[must_use]
    pub fn recent(&self) -> Vec<PathBuf> {
        std::fs::read_to_string(self.recent_path())
            .ok()
            .and_then(|s| serde_json::from_str::<Vec<PathBuf>>(&s).ok())
            .unwrap_or_default()
            .into_iter()
            .filter(|p| p.exists())
            .collect()
    }

    /// Puts `path` first in the recent list.
    pub fn add_recent(&self, path: &Path) -> Result<(), String> {
        let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        let mut list = self.recent();
        list.retain(|p| *p != path);
        list.insert(0, path);
        list.truncate(RECENT);
        self.write(
            &self.recent_path(),
            &serde_json::to_string_pretty(&list).unwrap_or_default(),
        )
    }

    /// Writes the recovery file (atomically).
    pub fn autosave(&self, path: Option<&Path>, graph: &orogen::Graph) -> Result<(), String> {
        let r = Recovery {
            path: path.map(Path::to_path_buf),
            saved_at: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            graph: orogen::document::graph_file::to_string_embedded(graph),
        };
        self.write(
            &self.recovery_path(),
            &serde_json::to_string(&r).unwrap_or_default(),
        )
    }

    fn layout_path(&self) -> PathBuf {
        self.dir.join("layout.json")
    }

    /// The parameter panel's width the user last chose, if any.
    #[must_use]
    pub fn panel_width(&self) -> Option<f32> {
        let text = std::fs::read_to_string(self.layout_path()).ok()?;
        let v: serde_json::Value = serde_json::from_str(&text).ok()?;
        v["panel_width"]
            .as_f64()
            .map(|w| w as f32)
            .filter(|w| w.is_finite())
    }

    /// Remembers the parameter panel's width for the next session.
    pub fn set_panel_width(&self, width: f32) -> Result<(), String> {
        self.write(
            &self.layout_path(),
            &serde_json::json!({ "panel_width": width }).to_string(),
        )
    }

    fn pins_path(&self) -> PathBuf {
        self.dir.join("pins.json")
    }

    /// The node output pinned in the preview of the graph file `doc`, if any: `(node, output)`.
    #[must_use]
    pub fn pinned(&self, doc: &Path) -> Option<(String, usize)> {
        let text = std::fs::read_to_string(self.pins_path()).ok()?;
        let v: serde_json::Value = serde_json::from_str(&text).ok()?;
        let pin = &v[doc.to_string_lossy().as_ref()];
        Some((
            pin["node"].as_str()?.to_owned(),
            usize::try_from(pin["output"].as_u64()?).ok()?,
        ))
    }

    /// Remembers (or forgets, with `None`) the pinned output of the graph file `doc`: an
    /// editor setting per document, never written into the graph file.
    pub fn set_pinned(&self, doc: &Path, pin: Option<(&str, usize)>) -> Result<(), String> {
        let mut v = std::fs::read_to_string(self.pins_path())
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .filter(serde_json::Value::is_object)
            .unwrap_or_else(|| serde_json::json!({}));
        let key = doc.to_string_lossy().into_owned();
        if let Some(map) = v.as_object_mut() {
            match pin {
                Some((node, output)) => {
                    map.insert(key, serde_json::json!({ "node": node, "output": output }));
                }
                None => {
                    map.remove(&key);
                }
            }
        }
        self.write(&self.pins_path(), &v.to_string())
    }

    /// The recovery file left by a session that did not end cleanly, if any.
    #[must_use]
    pub fn recovery(&self) -> Option<Recovery> {
        let text = std::fs::read_to_string(self.recovery_path()).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// Moves the recovery file out of the way (to `recovery-<seconds>.json` beside it) so
    /// that later autosaves cannot overwrite work that could not be restored; returns where.
    pub fn set_recovery_aside(&self) -> Result<PathBuf, String> {
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let to = self.dir.join(format!("recovery-{secs}.json"));
        std::fs::rename(self.recovery_path(), &to)
            .map_err(|e| format!("cannot move {}: {e}", self.recovery_path().display()))?;
        Ok(to)
    }

    /// Removes the recovery file (after a save, a discard or a clean exit).
    pub fn clear_recovery(&self) {
        let _ = std::fs::remove_file(self.recovery_path());
    }

    fn write(&self, path: &Path, text: &str) -> Result<(), String> {
        std::fs::create_dir_all(&self.dir)
            .map_err(|e| format!("cannot create {}: {e}", self.dir.display()))?;
        atomic::write_bytes_atomic(path, text.as_bytes())
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
    }
}

/// Files a node can read, as the file chooser lists them for [`Purpose::NodeFile`].
const IMAGE_EXTENSIONS: &[&str] = &["png", "tif", "tiff", "exr", "raw", "r16", "r32", "f32"];

/// What the file chooser is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    Open,
    SaveAs,
    BuildFolder,
    /// The file a selection is collapsed into.
    Collapse,
    /// A new file for the subgraph being left (its node then uses that file).
    SubgraphCopy,
    /// The file a node reads (`import`'s heightmap).
    NodeFile,
}

/// A minimal file chooser: a folder listing plus a path field.
pub struct Chooser {
    pub purpose: Purpose,
    pub dir: PathBuf,
    pub name: String,
    error: Option<String>,
}

impl Chooser {
    #[must_use]
    pub fn new(purpose: Purpose, start: &Path) -> Self {
        let (dir, name) = if start.is_dir() {
            (start.to_path_buf(), String::new())
        } else {
            (
                start
                    .parent()
                    .map_or_else(|| PathBuf::from("."), Path::to_path_buf),
                start
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
            )
        };
        Self {
            purpose,
            dir,
            name,
            error: None,
        }
    }

    /// The chosen path, once the user confirms; `Some(None)` when cancelled.
    pub fn show(&mut self, ctx: &egui::Context) -> Option<Option<PathBuf>> {
        let title = match self.purpose {
            Purpose::Open => "Open graph",
            Purpose::SaveAs => "Save graph as",
            Purpose::BuildFolder => "Choose build folder",
            Purpose::Collapse => "Save the new subgraph as",
            Purpose::SubgraphCopy => "Save the edited subgraph as a new file",
            Purpose::NodeFile => "Choose the file this node reads",
        };
        let mut result = None;
        egui::Window::new(title)
            .collapsible(false)
            .default_size([460.0, 380.0])
            .show(ctx, |ui| {
                ui.horizontal(|ui| {
                    if ui.button("⬆").on_hover_text("Parent folder").clicked() {
                        if let Some(p) = self.dir.parent() {
                            self.dir = p.to_path_buf();
                        }
                    }
                    // The folder is typed or pasted as well as browsed.
                    let mut dir = self.dir.display().to_string();
                    let r = ui.add(
                        egui::TextEdit::singleline(&mut dir)
                            .desired_width(f32::INFINITY)
                            .id(egui::Id::new("orogen-chooser-folder")),
                    );
                    if r.changed() {
                        self.dir = PathBuf::from(dir);
                    }
                });
                ui.separator();
                let mut entries: Vec<(bool, String)> = std::fs::read_dir(&self.dir)
                    .map(|rd| {
                        rd.flatten()
                            .filter_map(|e| {
                                let name = e.file_name().to_string_lossy().into_owned();
                                let is_dir = e.file_type().ok()?.is_dir();
                                let wanted: &[&str] = match self.purpose {
                                    Purpose::BuildFolder => &[],
                                    Purpose::NodeFile => IMAGE_EXTENSIONS,
                                    _ => &["json", "orogen"],
                                };
                                let show = !name.starts_with('.')
                                    && (is_dir
                                        || Path::new(&name).extension().is_some_and(|e| {
                                            wanted.iter().any(|w| e.eq_ignore_ascii_case(w))
                                        }));
                                show.then_some((is_dir, name))
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                entries.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
                egui::ScrollArea::vertical()
                    .max_height(240.0)
                    .show(ui, |ui| {
                        for (is_dir, name) in entries {
                            let label = if is_dir {
                                format!("📁 {name}")
                            } else {
                                name.clone()
                            };
                            let r = ui.selectable_label(!is_dir && name == self.name, label);
                            if r.double_clicked() && !is_dir {
                                self.name.clone_from(&name);
                                result = Some(Some(self.dir.join(&self.name)));
                            } else if r.clicked() {
                                if is_dir {
                                    self.dir = self.dir.join(&name);
                                } else {
                                    self.name = name;
                                }
                            }
                        }
                    });
                ui.separator();
                let mut enter = false;
                if self.purpose != Purpose::BuildFolder {
                    ui.horizontal(|ui| {
                        let label = ui.label("File:");
                        let r = ui
                            .text_edit_singleline(&mut self.name)
                            .labelled_by(label.id);
                        // Enter in the name field confirms, as in every file dialog.
                        enter = r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
                    });
                }
                if let Some(e) = &self.error {
                    ui.colored_label(egui::Color32::RED, e);
                }
                ui.horizontal(|ui| {
                    let ok = match self.purpose {
                        Purpose::Open => "Open",
                        Purpose::SaveAs => "Save",
                        Purpose::BuildFolder => "Use this folder",
                        Purpose::Collapse => "Collapse",
                        Purpose::SubgraphCopy => "Save copy",
                        Purpose::NodeFile => "Use this file",
                    };
                    if ui.button(ok).clicked() || enter {
                        result = Some(self.confirm());
                        if matches!(result, Some(None)) {
                            result = None;
                        }
                    }
                    if ui.button("Cancel").clicked() {
                        result = Some(None);
                    }
                });
            });
        result
    }

    fn confirm(&mut self) -> Option<PathBuf> {
        if self.purpose == Purpose::BuildFolder {
            return Some(self.dir.clone());
        }
        let name = self.name.trim();
        if name.is_empty() {
            self.error = Some("Type a file name.".to_owned());
            return None;
        }
        let mut p = if Path::new(name).is_absolute() {
            PathBuf::from(name)
        } else {
            self.dir.join(name)
        };
        if matches!(self.purpose, Purpose::SaveAs | Purpose::Collapse) && p.extension().is_none() {
            p.set_extension("json");
        }
        if self.purpose == Purpose::Open && !p.is_file() {
            self.error = Some(format!("{} is not a file.", p.display()));
            return None;
        }
        Some(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recent_files_and_recovery_round_trip() {
        let dir = std::env::temp_dir().join(format!("orogen-store-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let store = Store::new(dir.clone());
        assert!(store.recent().is_empty() && store.recovery().is_none());
        let a = dir.join("a.json");
        std::fs::create_dir_all(&dir).expect("dir");
        std::fs::write(&a, "{}").expect("write");
        store.add_recent(&a).expect("recent");
        store.add_recent(&a).expect("recent");
        assert_eq!(store.recent().len(), 1);
        let g = crate::doc::new_graph();
        store.autosave(Some(&a), &g).expect("autosave");
        let r = store.recovery().expect("recovery");
        assert_eq!(r.path.as_deref(), Some(a.as_path()));
        assert_eq!(
            r.graph,
            orogen::document::graph_file::to_string_embedded(&g)
        );
        store.clear_recovery();
        assert!(store.recovery().is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
