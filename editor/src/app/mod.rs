//! The editor window: the app's state, menus, shortcuts, files, the evaluation loop; the
//! side panels are in `panels`, the modal windows in `dialogs`.
//!
//! Running nodes do not ask for frames of their own. While nodes run, the app redraws every
//! 100 ms (progress bars, and a spinner of ours that turns on those redraws); input redraws at
//! once as always. egui's spinner asks for every frame, and with a software GL driver every
//! frame is CPU the evaluation lacks: under Xvfb + llvmpipe a 512² stream-power preview took
//! 3.7 s with it (4.0–5.5 s at 30 redraws a second) against under 1 s without.

mod dialogs;
mod evaluation;
mod menu;
mod panels;
mod sharing;

pub use sharing::Leave;

use crate::build_dialog::BuildDialog;
use crate::canvas::{Badge, Canvas, Looks};
use crate::doc::{self, Document};
use crate::files::{Chooser, Purpose, Recovery, Store};
use crate::preview::{self, Look, Picture, Shown};
use crate::view3d::View3d;
use crate::worker::{Snapshot, Worker};
use eframe::glow;
use egui::Ui;
use orogen::eval::NodeStatus;
use orogen::graph::NodeInstance;
use orogen::io::render::Colormap;
use orogen::node::PortKind;
use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The parameter panel's width until the user drags it: a parameter row (label, slider,
/// value, reset and promote buttons) fits.
const PANEL_WIDTH: f32 = 360.0;

/// How the editor starts.
#[derive(Clone, Debug)]
pub struct Options {
    /// Where recent files and the recovery file live.
    pub config_dir: PathBuf,
    /// A graph to open at start.
    pub open: Option<PathBuf>,
    /// Quick preview resolution (while dragging, and first after every edit).
    pub preview_resolution: usize,
    /// Resolution previews refine to once the user lets go.
    pub refine_resolution: usize,
    /// How often (at most) unsaved work is written to the recovery file.
    pub autosave_every: Duration,
    /// Append one line per frame (time, frame ms, running nodes) to this file.
    pub frame_log: Option<PathBuf>,
    /// Write the canvas layout (the canvas and every node's rectangle on screen, as JSON)
    /// to this file whenever it changes once the graph is framed (the smoke test reads it).
    pub layout_report: Option<PathBuf>,
    /// The disk cache previews and builds share with the command line (`None`: none; the
    /// editor's own start-up passes `DiskCache::default_dir()`).
    pub cache_dir: Option<PathBuf>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            config_dir: crate::files::default_config_dir(),
            open: None,
            preview_resolution: 256,
            refine_resolution: 512,
            autosave_every: Duration::from_secs(1),
            frame_log: None,
            layout_report: None,
            cache_dir: None,
        }
    }
}

/// 2D picture or 3D mesh.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    TwoD,
    ThreeD,
}

/// Something that replaces the document, waiting for the user to confirm losing changes.
#[derive(Clone, Debug)]
enum Pending {
    New,
    Open(PathBuf),
    Quit,
    /// ⬅ Back from an edited subgraph: what to do with its file. The graph files that use
    /// the file (found when the question is asked), for the question's text.
    LeaveSubgraph {
        users: Vec<String>,
    },
}

/// The editor.
pub struct EditorApp {
    pub doc: Document,
    pub canvas: Canvas,
    worker: Worker,
    /// The disk cache shared with the command line (previews and builds).
    disk: Option<Arc<orogen::eval::DiskCache>>,
    gl: Option<Arc<glow::Context>>,
    store: Store,
    options: Options,
    /// Document revision last sent to the worker, and whether that job refines.
    submitted: Option<(u64, bool)>,
    /// The evaluation shown.
    pub snapshot: Option<Snapshot>,
    /// Node whose parameters are shown, and whose output is previewed unless one is pinned.
    pub selected: Option<String>,
    /// The output previewed, of the pinned node when one is pinned, else of the selected one.
    pub output: usize,
    /// The node whose output the preview keeps showing while others are selected and edited.
    pub pinned: Option<String>,
    pub look: Look,
    pub mode: Mode,
    pub picture: Picture,
    /// A region of the previewed output at the build resolution, while one is shown.
    pub region: Option<crate::region::Region>,
    /// The plan folder of the region preview's stages, and the graph revision it was made for:
    /// the next region of the same revision reuses the stages already computed.
    region_work: Option<(u64, std::sync::Arc<tempfile::TempDir>)>,
    /// Asks for a frame when background work (a region) finishes.
    repaint: Option<egui::Context>,
    /// The small pictures on the canvas's nodes.
    pub thumbnails: crate::preview::Thumbnails,
    /// Fit the canvas to the graph again when the first preview arrives (its thumbnails make
    /// the nodes taller).
    frame_on_preview: bool,
    /// The layout last written to `Options::layout_report`.
    last_layout: Option<String>,
    view3d: View3d,
    clipboard: Vec<NodeInstance>,
    chooser: Option<Chooser>,
    recovery: Option<Recovery>,
    pending: Option<Pending>,
    build: Option<BuildDialog>,
    /// Last message for the status bar.
    pub status: String,
    /// Writes the recovery file on a timer of its own.
    autosaver: crate::autosave::Autosaver,
    /// The document revision last handed to the autosaver.
    autosave_sent: Option<u64>,
    /// Help › Keyboard shortcuts is open.
    /// The Help windows open.
    help: Help,
    /// The node and file parameter the file chooser is choosing for.
    browsing: Option<(String, &'static str)>,
    /// The parameter panel's width: the user's, remembered in the config folder.
    pub panel_width: f32,
    title: String,
    last_frame: Option<Instant>,
    /// Recent frame times in milliseconds.
    pub frame_ms: VecDeque<f32>,
    frame_log: Option<std::fs::File>,
    /// Time spent in the last `ui` call.
    ui_ms: f32,
    started: Instant,
    allow_close: bool,
    /// The documents "Open subgraph" came from, outermost first, each with the id of the
    /// subgraph node that was opened (the breadcrumb).
    pub parents: Vec<(Document, String)>,
    /// The nodes "Collapse to subgraph" is about to move into the file being chosen.
    collapsing: Vec<String>,
}

/// The Help windows that are open.
#[derive(Default)]
struct Help {
    shortcuts: bool,
    guide: bool,
    /// Node catalogue, with its search text.
    catalogue: Option<String>,
    /// The catalogue's search takes the keys when it opens (once: after that the canvas's
    /// shortcuts work while it stays open).
    focus_search: bool,
}

impl EditorApp {
    /// The app inside eframe (with OpenGL for the 3D view).
    #[must_use]
    pub fn new(cc: &eframe::CreationContext<'_>, options: Options) -> Self {
        Self::with_context(&cc.egui_ctx, cc.gl.clone(), options)
    }

    /// The app for a given egui context; `gl` is `None` in the UI tests.
    #[must_use]
    pub fn with_context(
        ctx: &egui::Context,
        gl: Option<Arc<glow::Context>>,
        options: Options,
    ) -> Self {
        // Node docs write updates as `h ← …`: the proportional font (Ubuntu Light) has no
        // arrows and egui would draw a box; its bundled monospace font (Hack) has them, so it
        // comes last in the proportional fallback list.
        let mut fonts = egui::FontDefinitions::default();
        if let Some(mono) = fonts
            .families
            .get(&egui::FontFamily::Monospace)
            .and_then(|f| f.first())
            .cloned()
        {
            fonts
                .families
                .entry(egui::FontFamily::Proportional)
                .or_default()
                .push(mono);
        }
        ctx.set_fonts(fonts);
        let store = Store::new(options.config_dir.clone());
        let panel_width = store.panel_width().unwrap_or(PANEL_WIDTH);
        let autosaver = crate::autosave::Autosaver::new(store.clone(), options.autosave_every);
        let recovery = store.recovery();
        let disk = options.cache_dir.as_ref().and_then(|dir| {
            orogen::eval::DiskCache::open(dir, orogen::eval::disk::DEFAULT_LIMIT_BYTES)
                .map_err(|e| eprintln!("cache folder {}: {e}; previews without it", dir.display()))
                .ok()
                .map(std::sync::Arc::new)
        });
        let frame_log = options.frame_log.as_ref().and_then(|p| {
            std::fs::File::create(p)
                .map_err(|e| eprintln!("cannot write the frame log {}: {e}", p.display()))
                .ok()
        });
        let mut app = Self {
            doc: Document::default(),
            canvas: Canvas::default(),
            worker: Worker::spawn(Some(ctx.clone()), disk.clone()),
            disk,
            gl,
            store,
            options: options.clone(),
            submitted: None,
            snapshot: None,
            selected: None,
            pinned: None,
            output: 0,
            look: Look::default(),
            mode: Mode::TwoD,
            picture: Picture::default(),
            region: None,
            region_work: None,
            repaint: Some(ctx.clone()),
            thumbnails: crate::preview::Thumbnails::default(),
            frame_on_preview: false,
            last_layout: None,
            view3d: View3d::default(),
            clipboard: Vec::new(),
            chooser: None,
            recovery,
            pending: None,
            build: None,
            status: "Right-click the canvas to add a node.".to_owned(),
            autosaver,
            autosave_sent: None,
            panel_width,
            help: Help::default(),
            browsing: None,
            title: String::new(),
            last_frame: None,
            frame_ms: VecDeque::new(),
            frame_log,
            ui_ms: 0.0,
            started: Instant::now(),
            allow_close: false,
            parents: Vec::new(),
            collapsing: Vec::new(),
        };
        if let Some(p) = &options.open {
            app.open(p);
        }
        app
    }

    /// Opens a graph file, replacing the document. A bundle (`.orogen`) is unpacked into a
    /// folder of its name next to it (files already there with the same content are kept,
    /// others are never replaced) and its graph opened from there.
    pub fn open(&mut self, path: &Path) {
        let unpacked;
        let path = if orogen::document::bundle::is_bundle(path) {
            match orogen::document::bundle::unpack(path, &path.with_extension(""), false, None) {
                Ok(p) => {
                    unpacked = p;
                    unpacked.as_path()
                }
                Err(e) => {
                    self.status = format!("Cannot open the bundle: {e}");
                    self.canvas.notify(self.status.clone());
                    return;
                }
            }
        } else {
            path
        };
        self.parents.clear();
        match Document::open(path) {
            Ok(d) => {
                self.replace(d);
                // Preview what the graph builds first.
                // (the one named "height" if there is one).
                let outs = &self.doc.graph().outputs;
                let first = outs
                    .get("height")
                    .or_else(|| outs.values().next())
                    .map(|r| (r.node.clone(), r.output.clone()));
                if let Some((node, out)) = first {
                    self.output = self
                        .doc
                        .graph()
                        .node(&node)
                        .and_then(|n| n.def.output_index(&out))
                        .unwrap_or(0);
                    self.selected = Some(node);
                }
                // Keyed by the document's own path (as `toggle_pin` saves it).
                let doc_path = self.doc.path().unwrap_or(path).to_path_buf();
                if let Some((node, output)) = self.store.pinned(&doc_path) {
                    if self.doc.graph().node(&node).is_some() {
                        self.pinned = Some(node);
                        self.output = output;
                    }
                }
                let _ = self.store.add_recent(path);
                self.status = format!("Opened {}", path.display());
            }
            Err(e) => {
                self.status = format!("Cannot open: {e}");
                self.canvas.notify(self.status.clone());
            }
        }
    }

    fn replace(&mut self, d: Document) {
        self.doc = d;
        self.autosave_sent = None;
        self.canvas.reset();
        // An opened graph is refitted once its thumbnails arrive; an empty one never (the view
        // must not jump under the first node the user adds).
        self.frame_on_preview = !self.doc.graph().nodes.is_empty();
        self.snapshot = None;
        self.selected = None;
        self.pinned = None;
        self.output = 0;
        self.picture.clear();
        self.submitted = None;
    }

    /// Saves to the current file, or asks for one. Returns true when written.
    pub fn save(&mut self) -> bool {
        if let Some(p) = self.doc.path().map(Path::to_path_buf) {
            self.save_as(&p)
        } else {
            self.choose(Purpose::SaveAs);
            false
        }
    }

    /// Saves to `path`.
    pub fn save_as(&mut self, path: &Path) -> bool {
        match self.doc.save_as(path) {
            Ok(()) => {
                let _ = self.store.add_recent(path);
                self.autosaver.clear();
                self.status = format!("Saved {}", path.display());
                true
            }
            Err(e) => {
                self.status.clone_from(&e);
                self.canvas.notify(e);
                false
            }
        }
    }

    fn choose(&mut self, purpose: Purpose) {
        let start = self
            .doc
            .path()
            .map(Path::to_path_buf)
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_default();
        self.chooser = Some(Chooser::new(purpose, &start));
    }

    /// Runs `p` now, or asks first when there are unsaved changes.
    fn request(&mut self, p: Pending) {
        if self.doc.dirty() {
            self.pending = Some(p);
        } else {
            self.perform(p);
        }
    }

    fn perform(&mut self, p: Pending) {
        match p {
            Pending::New => {
                self.replace(Document::default());
                self.autosaver.clear();
                self.set_status("New graph.");
            }
            Pending::Open(path) => self.open(&path),
            Pending::Quit => self.allow_close = true,
            Pending::LeaveSubgraph { .. } => {
                self.leave_subgraph(&sharing::Leave::Discard);
            }
        }
    }

    /// "Browse…" on a node that reads a file: the file chooser, starting at the file it names
    /// now (or the graph's folder); the choice goes into parameter `param` of node `id`.
    pub fn browse_for(&mut self, id: &str, param: &'static str) {
        let base = self
            .doc
            .base_dir()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let current = self
            .doc
            .graph()
            .node(id)
            .and_then(|n| n.param(param))
            .and_then(|v| match v {
                orogen::node::ParamValue::Text(t) if !t.is_empty() => Some(base.join(t)),
                _ => None,
            })
            .unwrap_or_else(|| base.clone());
        self.browsing = Some((id.to_owned(), param));
        self.chooser = Some(crate::files::Chooser::new(Purpose::NodeFile, &current));
    }

    /// The file chosen for a node's file parameter: written relative to the graph's folder
    /// (as files are shared), one undo step.
    fn use_node_file(&mut self, file: &Path) {
        let Some((id, param)) = self.browsing.take() else {
            return;
        };
        let text = self
            .doc
            .base_dir()
            .and_then(|b| orogen::document::subgraphs::relative_path(b, file))
            .unwrap_or_else(|| file.display().to_string());
        let value = orogen::node::ParamValue::Text(text.clone());
        match self.doc.edit(None, |g| g.set_param(&id, param, value)) {
            Ok(()) => self.status = format!("\"{id}\" reads {text}."),
            Err(e) => {
                self.status = format!("Cannot use {}: {e}", file.display());
                self.canvas.notify(self.status.clone());
            }
        }
    }

    /// B: bypasses the selected nodes (or the previewed one), or turns them back on when all
    /// of them are bypassed; one undo step.
    pub fn toggle_bypass(&mut self, ctx: &egui::Context) {
        let ids = self.selection(ctx);
        let g = self.doc.graph();
        let with_inputs: Vec<String> = ids
            .into_iter()
            .filter(|id| g.node(id).is_some_and(|n| !n.def.spec.inputs.is_empty()))
            .collect();
        if with_inputs.is_empty() {
            return;
        }
        let on = !with_inputs
            .iter()
            .all(|id| g.node(id).is_some_and(|n| n.bypass));
        self.doc
            .apply(None, |g| doc::set_bypass(g, &with_inputs, on));
        self.status = format!(
            "{} {}.",
            if on { "Bypassed" } else { "Turned on" },
            with_inputs.join(", ")
        );
    }

    /// Edit › Frame selection (G).
    pub fn frame_selection(&mut self, ctx: &egui::Context) {
        let ids = self.selection(ctx);
        if self.canvas.frame_nodes(&ids, &mut self.doc) {
            self.set_status(
                "Framed the selected nodes: drag the frame's title bar to move them together.",
            );
        } else {
            self.set_status("Select nodes to frame (Shift+click or Shift+drag).");
        }
    }

    /// Edit › Arrange: lays the graph out left to right with no overlaps (one undo step) and
    /// frames it.
    pub fn arrange(&mut self) {
        let sizes = self.canvas.node_sizes();
        let (pos, frames) = crate::canvas::arrange::arrange_with_frames(self.doc.graph(), &sizes);
        self.doc.apply(None, |g| {
            for n in &mut g.nodes {
                if let Some(p) = pos.get(&n.id) {
                    n.position = [f64::from(p.x), f64::from(p.y)];
                }
            }
            for (f, r) in g.frames.iter_mut().zip(frames) {
                f.rect = r;
            }
        });
        self.canvas.refit();
        self.set_status("Arranged the graph.");
    }

    /// Keeps the panel width the user dragged to (written once the drag ends).
    fn remember_panel_width(&mut self, ctx: &egui::Context, width: f32) {
        if (width - self.panel_width).abs() > 0.5 && !ctx.input(|i| i.pointer.any_down()) {
            self.panel_width = width;
            if let Err(e) = self.store.set_panel_width(width) {
                self.status = e;
            }
        }
    }

    fn set_status(&mut self, msg: &str) {
        msg.clone_into(&mut self.status);
    }

    pub fn undo(&mut self) {
        let msg = if self.doc.undo() {
            "Undone."
        } else {
            "Nothing to undo."
        };
        self.set_status(msg);
    }

    pub fn redo(&mut self) {
        let msg = if self.doc.redo() {
            "Redone."
        } else {
            "Nothing to redo."
        };
        self.set_status(msg);
    }

    /// The nodes selected on the canvas (Shift+click, Shift+drag), else the clicked node.
    #[must_use]
    pub fn selection(&self, ctx: &egui::Context) -> Vec<String> {
        let ids = self.canvas.selected(ctx);
        if ids.is_empty() {
            self.selected
                .iter()
                .filter(|id| self.doc.graph().node(id).is_some())
                .cloned()
                .collect()
        } else {
            ids
        }
    }

    /// Copies the selected nodes.
    pub fn copy(&mut self, ctx: &egui::Context) {
        let ids = self.selection(ctx);
        self.clipboard = doc::copy_nodes(self.doc.graph(), &ids);
        if !self.clipboard.is_empty() {
            let g = orogen::Graph {
                nodes: self.clipboard.clone(),
                outputs: BTreeMap::new(),
                nodata: None,
                ..self.doc.graph().clone()
            };
            ctx.copy_text(orogen::document::graph_file::to_string(&g));
        }
        self.status = format!("Copied {} node(s).", self.clipboard.len());
    }

    /// Pastes the clipboard at the pointer (its top-left node there), or the view's centre.
    pub fn paste(&mut self) {
        if self.clipboard.is_empty() {
            return;
        }
        let c = self.canvas.paste_point();
        let (mut x0, mut y0) = (f64::INFINITY, f64::INFINITY);
        for n in &self.clipboard {
            x0 = x0.min(n.position[0]);
            y0 = y0.min(n.position[1]);
        }
        let offset = [f64::from(c.x) - x0, f64::from(c.y) - y0];
        let clip = self.clipboard.clone();
        let ids = self.doc.apply(None, |g| doc::paste_nodes(g, &clip, offset));
        self.status = format!("Pasted {}.", ids.join(", "));
        // The copy becomes the active node (Delete removes it again).
        self.select(ids.first().cloned());
    }

    /// Deletes the selected nodes.
    pub fn delete_selected(&mut self, ctx: &egui::Context) {
        let ids = self.selection(ctx);
        if ids.is_empty() {
            return;
        }
        self.canvas.delete(&mut self.doc, &ids);
        if self.selected.as_ref().is_some_and(|s| ids.contains(s)) {
            self.selected = None;
        }
        self.status = format!("Deleted {}.", ids.join(", "));
    }

    /// The node chosen for parameters, and for the preview unless one is pinned.
    pub fn select(&mut self, id: Option<String>) {
        let id = id.filter(|id| self.doc.graph().node(id).is_some());
        if self.selected != id {
            self.selected = id;
            if self.pinned.is_none() {
                self.output = 0;
            }
        }
    }

    /// The node whose output the preview shows: the pinned one, else the selection.
    #[must_use]
    pub fn previewed(&self) -> Option<&String> {
        self.pinned.as_ref().or(self.selected.as_ref())
    }

    /// Pins the previewed output (P, the preview's pin), or unpins it: the preview then
    /// follows the selection again. Remembered per graph file in the editor's settings.
    pub fn toggle_pin(&mut self) {
        if self.pinned.take().is_some() {
            // The output index belonged to the pinned node.
            self.output = 0;
            self.set_status("Unpinned: the preview follows the selection.");
        } else if let Some(id) = self.selected.clone() {
            self.status = format!("Pinned {id}: the preview keeps showing it (P to unpin).");
            self.pinned = Some(id);
        }
        if let Some(path) = self.doc.path().map(Path::to_path_buf) {
            let pin = self.pinned.as_deref().map(|id| (id, self.output));
            if let Err(e) = self.store.set_pinned(&path, pin) {
                self.status = e;
            }
        }
    }

    /// Draws one frame.
    pub fn ui(&mut self, ui: &mut Ui) {
        let ctx = ui.ctx().clone();
        let start = Instant::now();
        self.frame_timing(&ctx);
        self.receive(&ctx);
        self.shortcuts(&ctx);
        self.close_guard(&ctx);

        egui::Panel::top("orogen-menu").show(ui, |ui| self.menu(ui));
        if !self.parents.is_empty() {
            egui::Panel::top("orogen-breadcrumb").show(ui, |ui| self.breadcrumb(ui));
        }
        egui::Panel::bottom("orogen-status").show(ui, |ui| self.status_bar(ui));
        // The panel's width is the user's (dragged, remembered across sessions), never the
        // content's: a scroll area in both directions takes whatever does not fit, so
        // selecting another node or opening the library does not move the canvas.
        let side = egui::Panel::left("orogen-params")
            .default_size(self.panel_width)
            .size_range(220.0..=640.0)
            .resizable(true)
            .show(ui, |ui| {
                ui.spacing_mut().slider_width = 72.0;
                egui::ScrollArea::both()
                    .auto_shrink([false, false])
                    .show(ui, |ui| {
                        ui.set_max_width(ui.available_width());
                        self.params(ui);
                    });
            });
        self.remember_panel_width(&ctx, side.response.rect.width());
        egui::Panel::right("orogen-preview")
            .default_size(400.0)
            .resizable(true)
            .show(ui, |ui| self.preview(ui));
        let looks = Looks {
            badges: self.badges(),
            thumbnails: Some(&self.thumbnails),
            previewed: self.pinned.as_deref().or(self.selected.as_deref()),
        };
        egui::CentralPanel::default().show(ui, |ui| {
            self.canvas.show(ui, &mut self.doc, &looks);
        });
        if let Some(id) = self.canvas.take_clicked() {
            self.select(Some(id));
        }
        self.report_layout();
        self.dialogs(&ctx);
        if let Some(e) = self.doc.take_error() {
            self.canvas.notify(e.clone());
            self.status = e;
        }
        self.doc.end_frame();
        // A node gone from the document (an undone paste, a delete) is no longer previewed.
        if self
            .selected
            .as_ref()
            .is_some_and(|id| self.doc.graph().node(id).is_none())
        {
            self.select(None);
        }
        if self
            .pinned
            .as_ref()
            .is_some_and(|id| self.doc.graph().node(id).is_none())
        {
            self.pinned = None;
            self.output = 0;
        }
        self.submit(&ctx);
        self.autosave();
        self.update_title(&ctx);
        self.ui_ms = start.elapsed().as_secs_f32() * 1000.0;
    }

    /// The canvas layout as JSON: `{"canvas": [x0, y0, x1, y1], "nodes": {id: [x0, y0, x1, y1]}}`.
    #[must_use]
    pub fn layout_json(&self) -> serde_json::Value {
        let r = |r: egui::Rect| serde_json::json!([r.min.x, r.min.y, r.max.x, r.max.y]);
        let nodes: serde_json::Map<String, serde_json::Value> = self
            .canvas
            .node_rects()
            .into_iter()
            .map(|(id, rect)| (id, r(rect)))
            .collect();
        let titles: serde_json::Map<String, serde_json::Value> = self
            .canvas
            .overview_titles()
            .iter()
            .map(|(id, rect)| (id.clone(), r(*rect)))
            .collect();
        serde_json::json!({
            "canvas": self.canvas.view().map(r),
            "framed": self.snapshot.is_some() && !self.canvas.framing(),
            "zoom": self.canvas.zoom(),
            // Zoomed out, names are the overview's titles, drawn at body size.
            "text_px": if titles.is_empty() {
                self.canvas.zoom() * crate::canvas::BODY_TEXT_PX
            } else {
                crate::canvas::BODY_TEXT_PX
            },
            "titles": titles,
            "minimap": self.canvas.minimap().map(r),
            "nodes": nodes,
        })
    }

    fn report_layout(&mut self) {
        let Some(path) = &self.options.layout_report else {
            return;
        };
        if self.snapshot.is_none() || self.canvas.framing() {
            return;
        }
        let text = self.layout_json().to_string();
        if self.last_layout.as_deref() != Some(text.as_str()) {
            if let Err(e) = orogen::io::atomic::write_bytes_atomic(path, text.as_bytes()) {
                eprintln!("cannot write the layout report {}: {e}", path.display());
            }
            self.last_layout = Some(text);
        }
    }

    /// Hands unsaved work to the autosaver at the end of every frame that changed it; the
    /// autosaver's thread writes it within `autosave_every`, input or not.
    fn autosave(&mut self) {
        if let Some(e) = self.autosaver.take_error() {
            self.status = e;
        }
        let rev = self.doc.revision();
        if self.autosave_sent == Some(rev) {
            return;
        }
        if self.doc.dirty() {
            self.autosaver.update(
                rev,
                self.doc.path().map(Path::to_path_buf),
                self.doc.graph(),
            );
            self.autosave_sent = Some(rev);
        } else if self.autosave_sent.is_some() {
            // Edited back to the saved file: the recovery copy would restore an edit the user
            // undid, so it goes (as after a save).
            self.autosaver.clear();
            self.autosave_sent = None;
        }
    }

    /// Waits until the recovery file reflects what was handed to the autosaver (tests).
    pub fn flush_autosave(&self) -> Result<(), String> {
        self.autosaver.flush()
    }

    /// The revision the recovery file holds (tests).
    #[must_use]
    pub fn autosaved_revision(&self) -> u64 {
        self.autosaver.written()
    }

    fn update_title(&mut self, ctx: &egui::Context) {
        let name = self.doc.path().and_then(Path::file_name).map_or_else(
            || "untitled".to_owned(),
            |n| n.to_string_lossy().into_owned(),
        );
        let title = format!(
            "{}{name} — Orogen",
            if self.doc.dirty() { "● " } else { "" }
        );
        if title != self.title {
            ctx.send_viewport_cmd(egui::ViewportCommand::Title(title.clone()));
            self.title = title;
        }
    }

    /// The window title.
    #[must_use]
    pub fn title(&self) -> &str {
        &self.title
    }

    /// Forces the autosave now (tests).
    pub fn autosave_now(&mut self) -> Result<(), String> {
        self.autosaver.update(
            self.doc.revision(),
            self.doc.path().map(Path::to_path_buf),
            self.doc.graph(),
        );
        self.autosave_sent = Some(self.doc.revision());
        self.autosaver.flush()
    }

    /// A recovery offer is showing.
    #[must_use]
    pub fn offers_recovery(&self) -> bool {
        self.recovery.is_some()
    }
}

impl eframe::App for EditorApp {
    fn ui(&mut self, ui: &mut Ui, _frame: &mut eframe::Frame) {
        EditorApp::ui(self, ui);
    }

    fn on_exit(&mut self, _gl: Option<&glow::Context>) {
        if self.allow_close || !self.doc.dirty() {
            // Nothing unsaved, or the user answered the unsaved-changes question.
            self.autosaver.clear();
            let _ = self.autosaver.flush();
        } else {
            // Closing with unsaved changes the user chose to discard still leaves nothing behind;
            // any other exit path keeps the recovery copy.
            let _ = self.autosave_now();
        }
    }
}
