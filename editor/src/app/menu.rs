//! The menu bar, keyboard shortcuts and the close guard.

use super::EditorApp;
use crate::files::Purpose;
use egui::Key;
use egui::KeyboardShortcut;
use egui::Modifiers;
use egui::Ui;

use super::Pending;

impl EditorApp {
    pub(super) fn shortcuts(&mut self, ctx: &egui::Context) {
        if ctx.egui_wants_keyboard_input() {
            return;
        }
        let cmd = |k| KeyboardShortcut::new(Modifiers::COMMAND, k);
        let cmd_shift = |k| KeyboardShortcut::new(Modifiers::COMMAND | Modifiers::SHIFT, k);
        let (
            redo,
            undo,
            save_as,
            save,
            open,
            new,
            copy,
            paste,
            delete,
            frame,
            arrange,
            bypass,
            group,
            pin,
        ) = ctx.input_mut(|i| {
            (
                i.consume_shortcut(&cmd_shift(Key::Z)) || i.consume_shortcut(&cmd(Key::Y)),
                i.consume_shortcut(&cmd(Key::Z)),
                i.consume_shortcut(&cmd_shift(Key::S)),
                i.consume_shortcut(&cmd(Key::S)),
                i.consume_shortcut(&cmd(Key::O)),
                i.consume_shortcut(&cmd(Key::N)),
                i.consume_shortcut(&cmd(Key::C))
                    || i.events.iter().any(|e| matches!(e, egui::Event::Copy)),
                i.consume_shortcut(&cmd(Key::V))
                    || i.events.iter().any(|e| matches!(e, egui::Event::Paste(_))),
                i.consume_key(Modifiers::NONE, Key::Delete)
                    || i.consume_key(Modifiers::NONE, Key::Backspace),
                i.consume_key(Modifiers::NONE, Key::F),
                i.consume_key(Modifiers::NONE, Key::L),
                i.consume_key(Modifiers::NONE, Key::B),
                i.consume_key(Modifiers::NONE, Key::G),
                i.consume_key(Modifiers::NONE, Key::P),
            )
        });
        if pin {
            self.toggle_pin();
        }
        if group {
            self.frame_selection(ctx);
        }
        if bypass {
            self.toggle_bypass(ctx);
        }
        if arrange {
            self.arrange();
        }
        if redo {
            self.redo();
        } else if undo {
            self.undo();
        }
        if save_as {
            self.choose(Purpose::SaveAs);
        } else if save {
            self.save();
        }
        if open {
            self.choose(Purpose::Open);
        }
        if new {
            self.request(Pending::New);
        }
        if copy {
            self.copy(ctx);
        }
        if paste {
            self.paste();
        }
        if delete {
            self.delete_selected(ctx);
        }
        if frame {
            self.canvas.frame_all();
        }
    }

    pub(super) fn close_guard(&mut self, ctx: &egui::Context) {
        if ctx.input(|i| i.viewport().close_requested()) {
            if self.allow_close || !self.doc.dirty() {
                self.autosaver.clear();
            } else {
                ctx.send_viewport_cmd(egui::ViewportCommand::CancelClose);
                self.pending = Some(Pending::Quit);
            }
        }
        if self.allow_close {
            ctx.send_viewport_cmd(egui::ViewportCommand::Close);
        }
    }

    pub(super) fn menu(&mut self, ui: &mut Ui) {
        let ctx = ui.ctx().clone();
        egui::MenuBar::new().ui(ui, |ui| {
            ui.menu_button("File", |ui| {
                if ui.button("New            Ctrl+N").clicked() {
                    self.request(Pending::New);
                    ui.close();
                }
                if ui.button("Open…          Ctrl+O").clicked() {
                    self.choose(Purpose::Open);
                    ui.close();
                }
                ui.menu_button("Open recent", |ui| {
                    let recent = self.store.recent();
                    if recent.is_empty() {
                        ui.weak("No recent files.");
                    }
                    for p in recent {
                        if ui.button(p.display().to_string()).clicked() {
                            self.request(Pending::Open(p));
                            ui.close();
                        }
                    }
                });
                if ui.button("Save           Ctrl+S").clicked() {
                    self.save();
                    ui.close();
                }
                if ui.button("Save as…  Ctrl+Shift+S").clicked() {
                    self.choose(Purpose::SaveAs);
                    ui.close();
                }
                ui.separator();
                if ui.button("Build outputs…").clicked() {
                    self.open_build_dialog();
                    ui.close();
                }
                ui.separator();
                if ui.button("Quit").clicked() {
                    self.request(Pending::Quit);
                    ui.close();
                }
            });
            ui.menu_button("Edit", |ui| self.edit_menu(ui, &ctx));
            ui.menu_button("View", |ui| {
                if ui.button("Frame all   F").clicked() {
                    self.canvas.frame_all();
                    ui.close();
                }
                ui.separator();
                ui.label("Preview refines to");
                for r in [512, 1024] {
                    if ui
                        .radio_value(&mut self.options.refine_resolution, r, format!("{r}²"))
                        .changed()
                    {
                        // Applies now, not at the next edit.
                        self.submitted = None;
                    }
                }
            });
            if ui.button("Build…").clicked() {
                self.open_build_dialog();
            }
            ui.menu_button("Help", |ui| {
                if ui.button("User guide").clicked() {
                    self.help.guide = true;
                    ui.close();
                }
                if ui.button("Node catalogue").clicked() {
                    self.help.catalogue.get_or_insert_with(String::new);
                    self.help.focus_search = true;
                    ui.close();
                }
                if ui.button("Keyboard shortcuts").clicked() {
                    self.help.shortcuts = true;
                    ui.close();
                }
            });
        });
    }

    /// The Edit menu.
    fn edit_menu(&mut self, ui: &mut Ui, ctx: &egui::Context) {
        if ui
            .add_enabled(self.doc.can_undo(), egui::Button::new("Undo        Ctrl+Z"))
            .clicked()
        {
            self.undo();
            ui.close();
        }
        if ui
            .add_enabled(self.doc.can_redo(), egui::Button::new("Redo  Ctrl+Shift+Z"))
            .clicked()
        {
            self.redo();
            ui.close();
        }
        ui.separator();
        if ui.button("Copy        Ctrl+C").clicked() {
            self.copy(ctx);
            ui.close();
        }
        if ui.button("Paste       Ctrl+V").clicked() {
            self.paste();
            ui.close();
        }
        if ui.button("Delete      Del").clicked() {
            self.delete_selected(ctx);
            ui.close();
        }
        ui.separator();
        if ui
            .button("Arrange   L")
            .on_hover_text("Lay the graph out in columns, left to right, with no node over another (one undo step)")
            .clicked()
        {
            self.arrange();
            ui.close();
        }
        if ui
            .button("Frame selection   G")
            .on_hover_text("A titled comment frame around the selected nodes; drag its title bar to move them together, right-click it to rename or delete")
            .clicked()
        {
            self.frame_selection(ctx);
            ui.close();
        }
        if ui.button("Collapse to subgraph…").clicked() {
            self.start_collapse(ctx);
            ui.close();
        }
    }

    /// Help › Node catalogue: every node type by category with what it is for (its first
    /// sentence; the rest, with the maths, behind *more*), searchable, each with *Add* to put
    /// it in the middle of the canvas.
    pub(super) fn catalogue_window(&mut self, ctx: &egui::Context) {
        let Some(mut search) = self.help.catalogue.take() else {
            return;
        };
        let mut open = true;
        let mut add = None;
        egui::Window::new("Node catalogue")
            .open(&mut open)
            .default_size([520.0, 560.0])
            .show(ctx, |ui| {
                let field = ui.add(
                    egui::TextEdit::singleline(&mut search)
                        .hint_text("Search: name, id, category or words of the description"),
                );
                if std::mem::take(&mut self.help.focus_search) {
                    field.request_focus();
                }
                let needle = search.to_lowercase();
                egui::ScrollArea::vertical().show(ui, |ui| {
                    let defs = orogen::node::Registry::builtin().defs();
                    for cat in crate::canvas::picker::categories() {
                        let mut of: Vec<_> = defs
                            .iter()
                            .filter(|d| d.spec.category == cat)
                            .filter(|d| {
                                needle.is_empty()
                                    || d.spec.label.to_lowercase().contains(&needle)
                                    || d.spec.id.contains(&needle)
                                    || cat.name().to_lowercase().contains(&needle)
                                    || d.spec.doc.to_lowercase().contains(&needle)
                            })
                            .collect();
                        if of.is_empty() {
                            continue;
                        }
                        of.sort_by_key(|d| d.spec.label);
                        ui.heading(cat.name());
                        for d in of {
                            let doc = orogen::node::clean_doc(d.spec.doc);
                            ui.horizontal(|ui| {
                                ui.strong(d.spec.label);
                                ui.weak(d.spec.id);
                                if ui.small_button("Add").clicked() {
                                    add = Some(d.spec.id);
                                }
                            });
                            ui.label(crate::params::summary(&doc, 400));
                            egui::CollapsingHeader::new("more")
                                .id_salt(("orogen-catalogue", d.spec.id))
                                .show(ui, |ui| {
                                    ui.label(&doc);
                                });
                            ui.add_space(6.0);
                        }
                    }
                });
            });
        if let Some(ty) = add {
            let at = self.canvas.view_centre();
            if let Some(id) = self.canvas.add_node(&mut self.doc, ty, at) {
                self.select(Some(id));
            }
        }
        if open {
            self.help.catalogue = Some(search);
        }
    }

    /// Help › User guide: docs/editor.md, shown in the editor (no browser or network needed).
    pub(super) fn guide_window(&mut self, ctx: &egui::Context) {
        let mut open = self.help.guide;
        egui::Window::new("User guide")
            .open(&mut open)
            .pivot(egui::Align2::CENTER_CENTER)
            .default_pos(ctx.content_rect().center())
            .default_size([620.0, 560.0])
            .show(ctx, |ui| {
                egui::ScrollArea::vertical().show(ui, |ui| guide(ui, GUIDE));
            });
        self.help.guide = open;
    }

    /// Help › Keyboard shortcuts.
    pub(super) fn shortcuts_window(&mut self, ctx: &egui::Context) {
        let mut open = self.help.shortcuts;
        egui::Window::new("Keyboard shortcuts")
            .open(&mut open)
            .collapsible(false)
            .resizable(false)
            .show(ctx, |ui| {
                egui::Grid::new("orogen-shortcuts")
                    .striped(true)
                    .show(ui, |ui| {
                        for (keys, what) in SHORTCUTS {
                            ui.strong(*keys);
                            ui.label(*what);
                            ui.end_row();
                        }
                    });
            });
        self.help.shortcuts = open;
    }
}

/// Every shortcut, as Help › Keyboard shortcuts lists it (keys act on the canvas, not while
/// typing in a field).
pub const SHORTCUTS: &[(&str, &str)] = &[
    (
        "Ctrl+Z / Ctrl+Shift+Z, Ctrl+Y",
        "undo / redo (one slider drag is one step)",
    ),
    (
        "Ctrl+C / Ctrl+V",
        "copy / paste the selected nodes (wires between them kept)",
    ),
    (
        "Delete, Backspace",
        "delete the selected (or clicked) nodes",
    ),
    ("Space, right-click", "add a node at the pointer"),
    ("F", "frame all nodes"),
    ("L", "arrange the graph (columns, left to right)"),
    ("B", "bypass the selected nodes, or turn them back on"),
    (
        "G",
        "frame the selected nodes (drag the frame's title to move them together)",
    ),
    (
        "P",
        "pin the preview to the selected node's output while you edit others, or unpin",
    ),
    ("Mouse wheel", "zoom about the pointer"),
    (
        "Drag the background",
        "pan (or click and drag in the minimap)",
    ),
    ("Shift+click, Shift+drag", "select several nodes"),
    ("Ctrl+S / Ctrl+Shift+S", "save / save as"),
    ("Ctrl+O / Ctrl+N", "open / new"),
    ("Esc", "back from a region preview to the whole map"),
];

/// The user guide, as the repository has it.
const GUIDE: &str = include_str!("../../../docs/editor.md");

/// Markdown shown plainly: headings as headings, paragraphs and list items joined into
/// wrapped labels, code blocks in monospace, emphasis and code marks dropped, pictures left
/// out.
fn guide(ui: &mut Ui, text: &str) {
    let plain = |s: &str| s.replace(['*', '`'], "");
    let mut para = String::new();
    let flush = |ui: &mut Ui, para: &mut String| {
        if !para.is_empty() {
            ui.label(plain(para));
            para.clear();
        }
    };
    let mut code = false;
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with("```") {
            flush(ui, &mut para);
            code = !code;
        } else if code {
            ui.monospace(line);
        } else if let Some(h) = t.strip_prefix('#') {
            flush(ui, &mut para);
            ui.add_space(6.0);
            ui.heading(plain(h.trim_start_matches('#').trim()));
        } else if t.is_empty() || t.starts_with("![") {
            flush(ui, &mut para);
        } else if let Some(item) = t.strip_prefix("- ") {
            flush(ui, &mut para);
            para.push_str("• ");
            para.push_str(item);
        } else {
            if !para.is_empty() {
                para.push(' ');
            }
            para.push_str(t);
        }
    }
    flush(ui, &mut para);
}
