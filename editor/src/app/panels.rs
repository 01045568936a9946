//! The side panels and the status bar: parameters, the 2D/3D preview with its histogram,
//! the badges nodes show.

use super::{preview, Badge, Colormap, EditorApp, Mode, NodeStatus, PortKind, Shown, Ui};
use orogen::node::NodeError;
use orogen::Field;
use std::collections::BTreeMap;
use std::path::PathBuf;

impl EditorApp {
    pub(super) fn status_bar(&mut self, ui: &mut Ui) {
        ui.horizontal(|ui| {
            let running = self.worker.running();
            if running.is_empty() {
                ui.label(&self.status);
            } else {
                crate::worker::busy(ui);
                let names: Vec<String> = running
                    .iter()
                    .map(|(k, f)| format!("{k} {:.0}%", f * 100.0))
                    .collect();
                ui.label(format!("Evaluating {}", names.join(", ")));
            }
            ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                if let Some(ms) = self.frame_ms.back() {
                    let avg = self.frame_ms.iter().sum::<f32>() / self.frame_ms.len() as f32;
                    ui.weak(format!("frame {ms:.1} ms (avg {avg:.1})"));
                }
                if let Some(s) = &self.snapshot {
                    ui.weak(format!("preview {}²", s.resolution));
                }
            });
        });
    }

    pub(super) fn params(&mut self, ui: &mut Ui) {
        egui::CollapsingHeader::new("Graph settings")
            .default_open(self.selected.is_none())
            .show(ui, |ui| crate::params::graph_panel(ui, &mut self.doc));
        self.graph_parameters(ui);
        self.library_panel(ui);
        ui.separator();
        match self.selected.clone() {
            Some(id) if self.doc.graph().node(&id).is_some() => {
                if let Some(param) = crate::params::node_panel(ui, &mut self.doc, &id) {
                    self.browse_for(&id, param);
                }
                self.subgraph_panel(ui, &id);
                match self.badges().get(&id) {
                    Some(Badge::Error(msg)) => {
                        ui.separator();
                        ui.colored_label(egui::Color32::from_rgb(235, 70, 60), format!("⚠ {msg}"));
                        // A reference refused for leaving the project: offer the opt-in,
                        // for this session only (docs/security.md).
                        if let Some(folder) = msg.split("--allow-outside ").nth(1) {
                            let folder = folder.trim().to_owned();
                            if ui
                                .button(format!("Allow reading {folder} (this session only)"))
                                .on_hover_text("Only if you trust this graph: it names a file outside its project folder. Nothing is saved; the next session refuses it again.")
                                .clicked()
                            {
                                self.worker.allow_outside(PathBuf::from(&folder));
                                self.submitted = None;
                                self.status = format!("reading from {folder} allowed for this session");
                            }
                        }
                    }
                    Some(Badge::Incomplete(msg)) => {
                        ui.separator();
                        ui.label(format!("○ {msg}"));
                    }
                    _ => {}
                }
                if let Some(t) = self
                    .snapshot
                    .as_ref()
                    .and_then(|s| s.result.timings.get(&id))
                {
                    let res = self.snapshot.as_ref().map_or(0, |s| s.resolution);
                    let text = format!(
                        "last run {:.1} ms at {res}² (preview resolution)",
                        t.as_secs_f64() * 1000.0
                    );
                    ui.add(egui::Label::new(egui::RichText::new(text).weak()).wrap());
                }
            }
            _ => {
                ui.weak("Click a node to edit its parameters and preview it.");
            }
        }
    }

    /// What the preview shows now.
    #[must_use]
    pub fn shown(&self) -> Option<Shown> {
        let id = self.previewed()?;
        let s = self.snapshot.as_ref()?;
        let node = s.graph.node(id)?;
        let fields = s.result.fields.get(id)?;
        let port = node.def.spec.outputs.get(self.output)?;
        let field = fields.get(self.output)?.clone();
        let base = if port.kind == PortKind::Height {
            None
        } else {
            // The node's own height output, else the nearest terrain upstream of it.
            node.def
                .spec
                .outputs
                .iter()
                .position(|p| p.kind == PortKind::Height)
                .and_then(|i| fields.get(i).cloned())
                .or_else(|| s.result.terrain_under(&s.graph, id))
        };
        Some(Shown {
            field,
            kind: port.kind,
            base,
            world: s.graph.world,
            origin_m: [0.0, 0.0],
            sea_m: s.sea_m,
        })
    }

    /// Evaluates the part `uv` of the previewed output at the build resolution.
    pub fn start_region(&mut self, uv: [f32; 4]) {
        let Some(node) = self.previewed().cloned() else {
            return;
        };
        let revision = self.doc.revision();
        if self
            .region_work
            .as_ref()
            .is_none_or(|(r, _)| *r != revision)
        {
            self.region_work = tempfile::Builder::new()
                .prefix("orogen-region-")
                .tempdir()
                .ok()
                .map(|d| (revision, std::sync::Arc::new(d)));
        }
        let made = crate::region::Region::start(
            self.doc.graph(),
            self.doc.path().map(std::path::Path::to_path_buf),
            self.region_work
                .as_ref()
                .map(|(_, d)| std::sync::Arc::clone(d)),
            (&node, self.output, self.doc.revision()),
            uv,
            self.repaint.clone(),
        );
        match made {
            Ok(mut r) => {
                r.placeholder = self.picture.texture().map(|t| {
                    (
                        t.clone(),
                        egui::Rect::from_min_max(
                            egui::pos2(uv[0], uv[1]),
                            egui::pos2(uv[2], uv[3]),
                        ),
                    )
                });
                self.region = Some(r);
            }
            Err(e) => {
                self.status = format!("Region: {e}");
                self.canvas.notify(self.status.clone());
            }
        }
    }

    pub(super) fn preview(&mut self, ui: &mut Ui) {
        // A region is of one node's output in one version of the graph.
        if self.region.as_ref().is_some_and(|r| {
            Some(&r.node) != self.previewed()
                || r.output != self.output
                || r.revision != self.doc.revision()
                || self.mode != Mode::TwoD
        }) {
            self.region = None;
        }
        self.preview_header(ui);
        let shown = self.shown();
        let generation = self
            .snapshot
            .as_ref()
            .map_or(0, |s| s.generation * 8192 + s.resolution as u64);
        let sel = self.previewed().cloned().unwrap_or_default();
        match &shown {
            Some(sh) => {
                self.picture.update(
                    ui.ctx(),
                    (generation, sel.clone(), self.output, self.look),
                    sh,
                );
            }
            None => self.picture.clear(),
        }
        let unit = match shown.as_ref().map(|s| s.kind) {
            Some(PortKind::Height) => " m",
            _ => "",
        };
        if let Some(st) = &self.picture.stats {
            let mask = shown.as_ref().is_some_and(|s| s.kind == PortKind::Mask);
            preview::histogram(ui, st, unit, mask);
        }
        ui.separator();
        match self.mode {
            Mode::TwoD if shown.is_none() && self.previewed().is_some() => {
                // Say why there is nothing to show.
                let why = self.previewed().and_then(|id| match self.badges().get(id) {
                    Some(Badge::Incomplete(msg) | Badge::Error(msg)) => Some(msg.clone()),
                    Some(Badge::Running(_)) => Some("Evaluating…".to_owned()),
                    None => None,
                });
                ui.weak(why.unwrap_or_else(|| "No preview yet.".to_owned()));
            }
            Mode::TwoD => {
                if let Some(r) = &mut self.region {
                    if r.show(ui, self.look) {
                        self.region = None;
                    }
                } else if let Some(uv) = self.picture.show(ui, shown.as_ref()) {
                    self.start_region(uv);
                }
            }
            Mode::ThreeD => {
                // A colour map is drawn as the albedo of the terrain under it (flat
                // without one).
                let flat;
                let surface = match shown.as_ref() {
                    Some(s) if s.kind == PortKind::Color => {
                        let ground = if let Some(b) = s.base.as_deref() {
                            b
                        } else {
                            flat = Field::filled(2, 2, s.world.height_min_m as f32);
                            &flat
                        };
                        Some((ground, PortKind::Height, &s.world, Some(&*s.field)))
                    }
                    Some(s) => Some((&*s.field, s.kind, &s.world, None)),
                    None => None,
                };
                self.view3d.show(
                    ui,
                    self.gl.as_ref(),
                    (generation, sel, self.output, self.look.colormap),
                    surface.map(|(f, k, w, _)| (f, k, w)),
                    surface.and_then(|(_, _, _, a)| a),
                );
            }
        }
    }

    /// The preview's header: 2D/3D, colour map, hillshade, overlay; the node and its output.
    fn preview_header(&mut self, ui: &mut Ui) {
        ui.horizontal(|ui| {
            ui.selectable_value(&mut self.mode, Mode::TwoD, "2D");
            ui.selectable_value(&mut self.mode, Mode::ThreeD, "3D");
            ui.separator();
            egui::ComboBox::from_id_salt("orogen-colormap")
                .selected_text(colormap_name(self.look.colormap))
                .show_ui(ui, |ui| {
                    for m in [Colormap::Grayscale, Colormap::Terrain, Colormap::Magma] {
                        ui.selectable_value(&mut self.look.colormap, m, colormap_name(m));
                    }
                });
            ui.checkbox(&mut self.look.hillshade, "hillshade");
            ui.checkbox(&mut self.look.overlay, "mask overlay");
        });
        let outputs: Vec<(&'static str, PortKind)> = self
            .previewed()
            .and_then(|id| self.doc.graph().node(id))
            .map(|n| {
                n.def
                    .spec
                    .outputs
                    .iter()
                    .map(|p| (p.name, p.kind))
                    .collect()
            })
            .unwrap_or_default();
        if let Some(id) = self.previewed().cloned() {
            ui.horizontal(|ui| {
                let pinned = self.pinned.is_some();
                let pin = ui
                    .selectable_label(pinned, if pinned { "📌 pinned" } else { "📌 pin" })
                    .on_hover_text(if pinned {
                        "The preview keeps showing this output while you select and edit other nodes. Click (or P) to follow the selection again."
                    } else {
                        "Keep showing this output while you select and edit other nodes (P)."
                    });
                if pin.clicked() {
                    self.toggle_pin();
                }
                ui.strong(&id);
                if outputs.len() > 1 {
                    egui::ComboBox::from_id_salt("orogen-output")
                        .selected_text(outputs.get(self.output).map_or("?", |o| o.0))
                        .show_ui(ui, |ui| {
                            for (i, (name, kind)) in outputs.iter().enumerate() {
                                ui.selectable_value(
                                    &mut self.output,
                                    i,
                                    format!("{name} ({})", kind.name()),
                                );
                            }
                        });
                } else if let Some((name, kind)) = outputs.first() {
                    ui.weak(format!("{name} ({})", kind.name()));
                }
            });
        }
    }

    pub(super) fn badges(&self) -> BTreeMap<String, Badge> {
        let mut b = BTreeMap::new();
        if let Some(s) = &self.snapshot {
            for (id, st) in &s.result.status {
                // A node stopped because a newer edit cancelled its evaluation has not
                // failed (nor has what waited for it): the newer evaluation tells.
                let cancelled = |st: Option<&NodeStatus>| {
                    matches!(st, Some(NodeStatus::Failed(NodeError::Cancelled)))
                };
                let badge = match st {
                    NodeStatus::Failed(NodeError::Cancelled) => continue,
                    NodeStatus::Failed(e) => Badge::Error(e.to_string()),
                    NodeStatus::Incomplete { reason } => Badge::Incomplete(needs(reason)),
                    NodeStatus::Skipped { upstream } => match s.result.status.get(upstream) {
                        Some(NodeStatus::Incomplete { .. }) => Badge::Incomplete(format!(
                            "waits for \"{upstream}\", which needs an input"
                        )),
                        up @ Some(NodeStatus::Failed(_)) if !cancelled(up) => {
                            Badge::Error(format!("waits for \"{upstream}\", which failed"))
                        }
                        _ => continue,
                    },
                    _ => continue,
                };
                if self.doc.graph().node(id).is_some() {
                    b.insert(id.clone(), badge);
                }
            }
        }
        for (id, f) in self.worker.running() {
            b.insert(id, Badge::Running(f));
        }
        b
    }
}

/// What an incomplete node lacks, in words: `needs an input: "in" (height)` for the common
/// case, else the engine's reason.
pub(super) fn needs(reason: &str) -> String {
    let unwired: Vec<String> = reason
        .split("; ")
        .filter_map(|r| {
            let (field, msg) = r.split_once(": ")?;
            let port = field.strip_prefix("inputs.")?;
            let kind = msg
                .strip_prefix("required ")?
                .strip_suffix(" input is not connected")?;
            Some(format!("\"{port}\" ({kind})"))
        })
        .collect();
    if unwired.len() == reason.split("; ").count() {
        format!(
            "needs {}: {}",
            if unwired.len() == 1 {
                "an input"
            } else {
                "inputs"
            },
            unwired.join(", ")
        )
    } else {
        reason.to_owned()
    }
}

pub(super) fn colormap_name(m: Colormap) -> &'static str {
    match m {
        Colormap::Grayscale => "grayscale",
        Colormap::Terrain => "terrain",
        Colormap::Magma => "magma",
    }
}
