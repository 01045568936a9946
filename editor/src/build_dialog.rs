//! The build dialog: `orogen build` with widgets. It holds the same [`Exports`] the command
//! line parses (same defaults: [`Exports::default`]), calls the same [`orogen::build::build`]
//! on the graph being edited, and shows the equivalent command line.

use crate::files::{Chooser, Purpose};
use egui::Ui;
use orogen::build::{BuildOptions, Exports, MeshFormat, Preset, Range};
use orogen::eval::ProgressEvent;
use orogen::io::heightmap::Format;
use orogen::io::render::{Colormap, NormalY};
use orogen::node::{choice_name, CancelToken, ChoiceEnum, PortKind};
use orogen::Graph;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

/// Colour of error text.
const RED: egui::Color32 = egui::Color32::from_rgb(235, 70, 60);

/// A build running in the background.
struct BuildJob {
    cancel: CancelToken,
    progress: Arc<Mutex<BuildProgress>>,
    handle: Option<std::thread::JoinHandle<Result<String, String>>>,
}

impl BuildJob {
    /// Whether its thread has ended (or was never started).
    fn finished(&self) -> bool {
        self.handle
            .as_ref()
            .is_none_or(std::thread::JoinHandle::is_finished)
    }
}

#[derive(Default)]
struct BuildProgress {
    total: usize,
    finished: usize,
    running: BTreeMap<String, f32>,
}

/// The dialog's state: where, at what size, and what to write.
pub struct BuildDialog {
    pub folder: String,
    /// `None`: the graph's resolution (as `orogen build` without `--size`).
    pub resolution: Option<usize>,
    pub exports: Exports,
    pub keep_going: bool,
    /// Tiles per side (`orogen build --tiles AxA`); 0: one whole-map file per output.
    pub tiles: usize,
    /// With tiles: also stream a whole-map RAW16 per output (`--stitch r16`).
    pub stitch: bool,
    job: Option<BuildJob>,
    /// The last build's outcome.
    pub result: Option<Result<String, String>>,
    /// The disk cache builds read and write (the previews' cache).
    pub cache: Option<Arc<orogen::eval::DiskCache>>,
}

impl BuildDialog {
    /// Waits (at most `limit`) until the running build ends and records its result (the next
    /// frame shows it); whether it ended. For tests and scripts: the window never waits.
    pub fn wait(&mut self, limit: std::time::Duration) -> bool {
        let until = std::time::Instant::now() + limit;
        while self.job.as_ref().is_some_and(|j| !j.finished()) {
            if std::time::Instant::now() > until {
                return false;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        self.finish();
        true
    }

    /// Records the ended build's outcome and forgets its job.
    fn finish(&mut self) {
        if let Some(job) = self.job.take() {
            self.result = Some(job.handle.map_or_else(
                || Err("build thread lost".to_owned()),
                |h| {
                    h.join()
                        .unwrap_or_else(|_| Err("the build failed unexpectedly".to_owned()))
                },
            ));
        }
    }

    /// A dialog with `orogen build`'s defaults, writing into `out/NAME` at the graph's project
    /// root (the folder holding `.orogen-project`, else the graph's own folder), as the
    /// README's first command does (`-o out/alpine_valley`), not among the graph files.
    #[must_use]
    pub fn new(graph_file: Option<&Path>) -> Self {
        let folder = graph_file.map_or_else(
            || PathBuf::from("out"),
            |g| {
                let dir = g.parent().unwrap_or_else(|| Path::new(""));
                let stem = g
                    .file_stem()
                    .map_or_else(|| "build".into(), |s| s.to_string_lossy().into_owned());
                orogen::io::trust::Project::of_folder(dir, &[])
                    .root()
                    .join("out")
                    .join(stem)
            },
        );
        Self {
            folder: folder.display().to_string(),
            resolution: None,
            exports: Exports::default(),
            keep_going: false,
            tiles: 0,
            stitch: false,
            job: None,
            result: None,
            cache: None,
        }
    }

    /// A build is running.
    #[must_use]
    pub fn busy(&self) -> bool {
        self.job.is_some()
    }

    /// Cancels a running build.
    pub fn cancel(&self) {
        if let Some(j) = &self.job {
            j.cancel.cancel();
        }
    }

    /// `orogen build …` with the dialog's options, for `graph_file` (or a placeholder).
    #[must_use]
    pub fn command_line(&self, graph_file: Option<&Path>) -> String {
        let mut words = vec![
            "orogen".to_owned(),
            "build".to_owned(),
            graph_file.map_or_else(|| "GRAPH.json".to_owned(), |p| p.display().to_string()),
            "-o".to_owned(),
            self.folder.clone(),
        ];
        if let Some(r) = self.resolution {
            words.extend(["--size".to_owned(), r.to_string()]);
        }
        words.extend(self.exports.to_args());
        if self.tiles > 0 {
            words.extend(["--tiles".to_owned(), format!("{0}x{0}", self.tiles)]);
            if self.stitch {
                words.extend(["--stitch".to_owned(), "r16".to_owned()]);
            }
        }
        if self.keep_going {
            words.push("--keep-going".to_owned());
        }
        words
            .iter()
            .map(|w| shell_quote(w))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Starts building `graph` (the one being edited, saved or not).
    pub fn start(&mut self, graph: &Graph, file: Option<&Path>, ctx: &egui::Context) {
        self.result = None;
        let cancel = CancelToken::new();
        let progress = Arc::new(Mutex::new(BuildProgress {
            total: graph.nodes.len(),
            ..BuildProgress::default()
        }));
        let job = Job {
            graph: graph.clone(),
            file: file.map(Path::to_path_buf),
            out_dir: PathBuf::from(&self.folder),
            resolution: self.resolution,
            exports: self.exports.clone(),
            keep_going: self.keep_going,
            cancel: cancel.clone(),
            progress: Arc::clone(&progress),
            ctx: ctx.clone(),
            cache: self.cache.clone(),
        };
        let (tiles, stitch) = (self.tiles, self.stitch);
        let handle = std::thread::Builder::new()
            .name("orogen-build".into())
            .spawn(move || {
                if tiles > 0 {
                    job.tiled(tiles, stitch)
                } else {
                    job.whole()
                }
            });
        self.job = Some(BuildJob {
            cancel,
            progress,
            handle: handle.ok(),
        });
    }

    /// Shows the dialog. Returns `(still open, asked for the folder chooser)`.
    pub fn show(
        &mut self,
        ctx: &egui::Context,
        graph: &Graph,
        file: Option<&Path>,
    ) -> (bool, Option<Chooser>) {
        let mut open = true;
        let mut chooser = None;
        // Opens over the middle of the window, wide enough for every format on one line, so
        // the parameter panel beside the canvas stays in view.
        egui::Window::new("Build outputs")
            .open(&mut open)
            .collapsible(false)
            .pivot(egui::Align2::CENTER_CENTER)
            .default_pos(ctx.content_rect().center())
            .default_width(560.0)
            .show(ctx, |ui| {
                if graph.outputs.is_empty() {
                    ui.colored_label(
                        RED,
                        "The graph has no outputs: right-click a node and choose \"Write … in builds\".",
                    );
                } else {
                    ui.label(format!(
                        "Writes {} output(s): {}",
                        graph.outputs.len(),
                        graph.outputs.keys().cloned().collect::<Vec<_>>().join(", ")
                    ));
                }
                for b in graph.blocked_outputs() {
                    ui.colored_label(RED, b.to_string());
                }
                ui.horizontal(|ui| {
                    ui.label("Folder");
                    ui.text_edit_singleline(&mut self.folder);
                    if ui.button("Choose…").clicked() {
                        chooser = Some(Chooser::new(Purpose::BuildFolder, Path::new(&self.folder)));
                    }
                });
                self.options_ui(ui, graph);
                ui.separator();
                let cmd = self.command_line(file);
                ui.horizontal(|ui| {
                    ui.weak("Same as");
                    if ui.small_button("Copy").on_hover_text("Copy the command line").clicked() {
                        ui.ctx().copy_text(cmd.clone());
                    }
                });
                ui.add(egui::Label::new(egui::RichText::new(&cmd).monospace()).wrap());
                ui.separator();
                self.run_ui(ui, graph, file);
            });
        (open || self.busy(), chooser)
    }

    /// Every option `orogen build` has, with its widgets.
    fn options_ui(&mut self, ui: &mut Ui, graph: &Graph) {
        let ex = &mut self.exports;
        egui::Grid::new("orogen-build-options")
            .num_columns(2)
            .spacing([12.0, 6.0])
            .show(ui, |ui| {
                ui.label("Resolution");
                let graphs = format!("graph's ({}²)", graph.resolution);
                egui::ComboBox::from_id_salt("orogen-build-res-override")
                    .selected_text(self.resolution.map_or(graphs.clone(), |r| format!("{r}²")))
                    .show_ui(ui, |ui| {
                        ui.selectable_value(&mut self.resolution, None, graphs);
                        for r in [256, 512, 1024, 2048, 4096, 8192] {
                            ui.selectable_value(&mut self.resolution, Some(r), format!("{r}²"));
                        }
                    });
                ui.end_row();

                ui.label("Tiles")
                    .on_hover_text("Build in tiles, never holding the whole map: for worlds larger than memory (orogen build --tiles). With the Unreal or Unity preset, tiles share their borders and are named as those engines import them.");
                ui.horizontal(|ui| {
                    let mut tiled = self.tiles > 0;
                    if ui.checkbox(&mut tiled, "in tiles").changed() {
                        self.tiles = if tiled { 4 } else { 0 };
                    }
                    if tiled {
                        ui.add(
                            egui::DragValue::new(&mut self.tiles)
                                .range(1..=64)
                                .custom_formatter(|n, _| format!("{n} × {n}"))
                                .custom_parser(|t| t.split(['×', 'x']).next()?.trim().parse().ok()),
                        );
                        ui.checkbox(&mut self.stitch, "also a whole-map RAW16");
                    } else {
                        ui.weak("one file per output");
                    }
                });
                ui.end_row();

                formats_ui(ui, ex);
                extras_ui(ui, ex);
                ui.label("Splat maps");
                splats_ui(ui, ex, graph);
                ui.end_row();

                ui.label("");
                ui.checkbox(&mut self.keep_going, "keep going")
                    .on_hover_text(
                        "Write the outputs that can be built even when others cannot. \
                         Without it a build writes every output or nothing.",
                    );
                ui.end_row();
            });
    }

    fn run_ui(&mut self, ui: &mut Ui, graph: &Graph, file: Option<&Path>) {
        match &mut self.job {
            Some(job) => {
                let p = job.progress.lock().unwrap_or_else(PoisonError::into_inner);
                let partial: f32 = p.running.values().sum();
                let frac = if p.total > 0 {
                    (p.finished as f32 + partial) / p.total as f32
                } else {
                    0.0
                };
                let names: Vec<&str> = p.running.keys().map(String::as_str).collect();
                ui.add(
                    egui::ProgressBar::new(frac)
                        .show_percentage()
                        .text(names.join(", ")),
                );
                drop(p);
                if ui.button("Cancel").clicked() {
                    job.cancel.cancel();
                }
                if job.finished() {
                    self.finish();
                }
            }
            None => {
                if ui
                    .add_enabled(!graph.outputs.is_empty(), egui::Button::new("Build"))
                    .clicked()
                {
                    let ctx = ui.ctx().clone();
                    self.start(graph, file, &ctx);
                }
            }
        }
        match &self.result {
            Some(Ok(msg)) => {
                ui.label(msg);
            }
            Some(Err(e)) => {
                ui.colored_label(RED, e);
            }
            None => {}
        }
    }
}

/// Splat maps: each a file stem and up to four of the graph's mask outputs.
fn splats_ui(ui: &mut Ui, ex: &mut Exports, graph: &Graph) {
    let masks: Vec<&String> = graph
        .outputs
        .iter()
        .filter(|(_, r)| graph.output_kind(r) == Some(PortKind::Mask))
        .map(|(n, _)| n)
        .collect();
    ui.vertical(|ui| {
        if masks.is_empty() {
            ui.weak("(the graph has no mask outputs)");
            return;
        }
        let mut remove = None;
        for (k, (stem, chosen)) in ex.splats.iter_mut().enumerate() {
            ui.horizontal(|ui| {
                ui.add(egui::TextEdit::singleline(stem).desired_width(80.0));
                ui.label("=");
                for m in &masks {
                    let mut on = chosen.contains(m);
                    let full = chosen.len() >= 4 && !on;
                    if ui
                        .add_enabled(!full, egui::Checkbox::new(&mut on, m.as_str()))
                        .changed()
                    {
                        if on {
                            chosen.push((*m).clone());
                        } else {
                            chosen.retain(|c| c != *m);
                        }
                    }
                }
                if ui
                    .small_button("✖")
                    .on_hover_text("Remove this splat map")
                    .clicked()
                {
                    remove = Some(k);
                }
            });
        }
        if let Some(k) = remove {
            ex.splats.remove(k);
        }
        ui.horizontal(|ui| {
            if ui.small_button("+ splat map").clicked() {
                let stem =
                    crate::doc::unique_name("splat", |s| ex.splats.iter().any(|(n, _)| n == s));
                let first: Vec<String> = masks.iter().take(4).map(|m| (*m).clone()).collect();
                ex.splats.push((stem, first));
            }
            if !ex.splats.is_empty() {
                ui.checkbox(&mut ex.splat_normalize, "weights sum to 1");
            }
        });
    });
}

/// Every value of a choice enum, in declaration order.
fn all<T: ChoiceEnum + 'static>() -> impl Iterator<Item = T> {
    (0..T::NAMES.len()).filter_map(T::from_index)
}

/// `word` as a POSIX shell reads it back.
fn shell_quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=,:+@%".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// One build, as its thread runs it.
struct Job {
    graph: Graph,
    file: Option<PathBuf>,
    out_dir: PathBuf,
    resolution: Option<usize>,
    exports: Exports,
    keep_going: bool,
    cancel: CancelToken,
    progress: Arc<Mutex<BuildProgress>>,
    ctx: egui::Context,
    cache: Option<Arc<orogen::eval::DiskCache>>,
}

impl Job {
    /// A tiled build (`orogen build --tiles N×N`), resumable: what the user is told.
    fn tiled(&self, tiles: usize, stitch: bool) -> Result<String, String> {
        let (graph, out_dir, c, p, ctx) = (
            &self.graph,
            &self.out_dir,
            &self.cancel,
            &self.progress,
            &self.ctx,
        );
        let stitch = if stitch {
            vec![Format::R16]
        } else {
            Vec::new()
        };
        let n = self.resolution.unwrap_or(graph.resolution);
        let plan = orogen::tiles::Plan::for_build(
            graph,
            self.file.as_deref(),
            n,
            orogen::tiles::TileRequest::Count(tiles, tiles),
            &self.exports,
            &stitch,
            orogen::tiles::Staging::default(),
        )?;
        plan.write(out_dir, graph)?;
        if let Ok(mut pr) = p.lock() {
            pr.total = plan.tasks.len();
        }
        let opts = orogen::tiles::RunOptions {
            cancel: c.clone(),
            progress: None,
            cache: self.cache.clone(),
            side_by_side: 0,
        };
        let r = orogen::tiles::run_all(out_dir, &opts, |_, _, _| {
            if let Ok(mut pr) = p.lock() {
                pr.finished += 1;
            }
            ctx.request_repaint();
        });
        ctx.request_repaint();
        match r {
            Err(_) if c.is_cancelled() => Err(
                "Build cancelled; build again to resume from the tiles already written.".to_owned(),
            ),
            Err(e) => Err(e.to_string()),
            Ok(()) => Ok(format!(
                "Built {tiles}×{tiles} tiles of {} outputs at {n}² into {} (manifest {}).",
                graph.outputs.len(),
                out_dir.display(),
                out_dir.join("manifest.json").display()
            )),
        }
    }

    /// A whole-map build: what the user is told.
    fn whole(&self) -> Result<String, String> {
        let (c, p, ctx, out_dir) = (&self.cancel, &self.progress, &self.ctx, &self.out_dir);
        let on_progress = |e: ProgressEvent| {
            let mut pr = p.lock().unwrap_or_else(PoisonError::into_inner);
            if crate::worker::track(&mut pr.running, e) {
                pr.finished += 1;
            }
            ctx.request_repaint();
        };
        let opts = BuildOptions {
            out_dir: out_dir.clone(),
            exports: self.exports.clone(),
            resolution: self.resolution,
            graph_file: self.file.as_deref(),
            allow_outside: &[],
            keep_going: self.keep_going,
            cancel: c.clone(),
            progress: Some(&on_progress),
            cache: self.cache.clone(),
            arrays: None,
        };
        let r = orogen::build::build(&self.graph, &opts);
        ctx.request_repaint();
        match r {
            Ok(_) if c.is_cancelled() => Err("Build cancelled.".to_owned()),
            Ok(rep) if rep.complete() => Ok(format!(
                "Built {} output(s) at {}² into {} (manifest {}).",
                rep.manifest.outputs.len(),
                rep.manifest.resolution,
                out_dir.display(),
                rep.manifest_path.display()
            )),
            Ok(rep) => Err(format!(
                "Built {} output(s) into {}; not built: {}.\n{}",
                rep.manifest.outputs.len(),
                out_dir.display(),
                rep.failed_outputs.join(", "),
                rep.manifest
                    .errors
                    .iter()
                    .map(|(n, e)| format!("node \"{n}\": {e}"))
                    .collect::<Vec<_>>()
                    .join("\n")
            )),
            Err(e) => Err(e.to_string()),
        }
    }
}

/// The build options' format rows: engine preset, formats, 16-bit range, preview.
fn formats_ui(ui: &mut Ui, ex: &mut Exports) {
    ui.label("Engine preset");
    let text = ex.preset.map_or("none", choice_name);
    egui::ComboBox::from_id_salt("orogen-build-preset")
        .selected_text(text)
        .show_ui(ui, |ui| {
            ui.selectable_value(&mut ex.preset, None, "none");
            for p in all::<Preset>() {
                ui.selectable_value(&mut ex.preset, Some(p), choice_name(p));
            }
        });
    ui.end_row();

    ui.label("Formats");
    ui.add_enabled_ui(ex.preset.is_none(), |ui| {
        ui.horizontal_wrapped(|ui| {
            for f in all::<Format>() {
                let mut on = ex.formats.contains(&f);
                if ui.checkbox(&mut on, f.name()).changed() {
                    if on {
                        ex.formats.push(f);
                        // The command line's order: as the formats are declared.
                        ex.formats
                            .sort_by_key(|x| all::<Format>().position(|y| y == *x));
                    } else if ex.formats.len() > 1 {
                        ex.formats.retain(|x| *x != f);
                    }
                }
            }
        })
        .response
        .on_disabled_hover_text("The preset chooses the format.");
    });
    ui.end_row();

    ui.label("16-bit range");
    ui.horizontal(|ui| {
        ui.radio_value(&mut ex.range, Range::Graph, "graph's height range")
            .on_hover_text("The same heights map to the same values in every output.");
        ui.radio_value(&mut ex.range, Range::Data, "each output's min…max")
            .on_hover_text("Full 16-bit precision; range_m in the manifest.");
    });
    ui.end_row();

    ui.label("Preview PNG");
    egui::ComboBox::from_id_salt("orogen-build-preview")
        .selected_text(ex.preview.map_or("none", choice_name))
        .show_ui(ui, |ui| {
            ui.selectable_value(&mut ex.preview, None, "none");
            for m in all::<Colormap>() {
                ui.selectable_value(&mut ex.preview, Some(m), choice_name(m));
            }
        });
    ui.end_row();
}

/// The build options' extra outputs: normal maps, meshes.
fn extras_ui(ui: &mut Ui, ex: &mut Exports) {
    ui.label("Normal map");
    ui.horizontal(|ui| {
        let mut on = ex.normal_map.is_some();
        if ui.checkbox(&mut on, "write").changed() {
            ex.normal_map = on.then_some((8, NormalY::Opengl));
        }
        if let Some((bits, y)) = &mut ex.normal_map {
            ui.radio_value(bits, 8, "8-bit");
            ui.radio_value(bits, 16, "16-bit");
            ui.radio_value(y, NormalY::Opengl, "OpenGL (Unity, Godot)");
            ui.radio_value(y, NormalY::Directx, "DirectX (Unreal)");
        }
    });
    ui.end_row();

    ui.label("Mesh");
    ui.horizontal(|ui| {
        let text = ex.mesh.map_or("none", |(m, _)| choice_name(m));
        let mut choice = ex.mesh.map(|(m, _)| m);
        egui::ComboBox::from_id_salt("orogen-build-mesh")
            .selected_text(text)
            .show_ui(ui, |ui| {
                ui.selectable_value(&mut choice, None, "none");
                for m in all::<MeshFormat>() {
                    ui.selectable_value(&mut choice, Some(m), choice_name(m));
                }
            });
        let step = ex.mesh.map_or(1, |(_, s)| s);
        ex.mesh = choice.map(|m| (m, step));
        if let Some((_, step)) = &mut ex.mesh {
            ui.label("every");
            ui.add(egui::DragValue::new(step).range(1..=64));
            ui.label("th sample");
        }
    });
    ui.end_row();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_of_the_defaults_has_no_export_flags() {
        let d = BuildDialog::new(Some(Path::new("/g/island.json")));
        assert_eq!(
            d.command_line(Some(Path::new("/g/island.json"))),
            "orogen build /g/island.json -o /g/out/island"
        );
    }

    #[test]
    fn options_become_flags() {
        let mut d = BuildDialog::new(None);
        d.folder = "my out".into();
        d.resolution = Some(1024);
        d.exports.formats = vec![Format::Png16, Format::Exr];
        d.exports.preset = Some(Preset::Unity);
        d.exports.mesh = Some((MeshFormat::Glb, 2));
        d.exports.preview = None;
        d.keep_going = true;
        assert_eq!(
            d.command_line(Some(Path::new("g.json"))),
            "orogen build g.json -o 'my out' --size 1024 --format png16,exr --preset unity \
             --no-preview --mesh glb --mesh-step 2 --keep-going"
        );
        d.exports = Exports::default();
        d.keep_going = false;
        d.tiles = 4;
        d.stitch = true;
        assert_eq!(
            d.command_line(Some(Path::new("g.json"))),
            "orogen build g.json -o 'my out' --size 1024 --tiles 4x4 --stitch r16"
        );
    }
}
