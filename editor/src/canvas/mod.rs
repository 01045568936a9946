//! The graph canvas: egui-snarl showing the document's graph.
//!
//! The engine [`Graph`](orogen::Graph) in the [`Document`] is the truth; the `Snarl` only holds
//! node ids, positions and wires for drawing and interaction. Every interaction that changes
//! the graph (wire, unwire, add, delete, move) is applied to the document as an undoable edit,
//! and after any document change (undo, open, paste…) the snarl is reconciled with the graph
//! so that the node ids snarl knows stay stable — its selection and view survive edits.

pub mod arrange;
pub mod frames;
mod framing;
pub mod overview;
pub(crate) mod picker;
mod sync;
mod viewer;

use framing::Framing;
use picker::{node_picker, Search};
use sync::{add_node, sync};
use viewer::Viewer;

use crate::doc::{self, Document};
use egui::emath::TSTransform;
use egui::{Color32, Id, Pos2, Rect, Ui, Vec2};
use egui_snarl::ui::{PinPlacement, SnarlStyle, SnarlWidget};
use egui_snarl::{NodeId, Snarl};
use orogen::node::PortKind;
use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

/// How long a refusal message stays on the canvas.
const NOTICE_TIME: Duration = Duration::from_secs(5);

/// Colour of wires and pins of a port kind.
#[must_use]
pub fn kind_color(kind: PortKind) -> Color32 {
    match kind {
        PortKind::Height => Color32::from_rgb(222, 172, 92),
        PortKind::Mask => Color32::from_rgb(168, 122, 236),
        PortKind::Color => Color32::from_rgb(96, 200, 140),
        PortKind::Scalar => Color32::from_rgb(96, 170, 230),
    }
}

/// What the canvas shows on a node besides its pins.
#[derive(Clone, Debug, PartialEq)]
pub enum Badge {
    /// Running, with the fraction done.
    Running(f32),
    /// Failed, with the reason.
    Error(String),
    /// Not run yet because something is not wired (its own input, or upstream): a normal state
    /// of a graph being built, shown neutrally.
    Incomplete(String),
}

/// What the canvas draws on nodes besides the graph itself.
#[derive(Default)]
pub struct Looks<'a> {
    pub badges: BTreeMap<String, Badge>,
    pub thumbnails: Option<&'a crate::preview::Thumbnails>,
    /// The node whose preview and parameters are shown (framed in the accent colour).
    pub previewed: Option<&'a str>,
}

/// A wire being dragged from a pin: `(node, output)` or `(node, input)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Dragging {
    FromOutput(String, usize),
    FromInput(String, usize),
}

/// Zoom limits of the canvas: far enough out that Frame all shows a long graph whole.
const MIN_ZOOM: f32 = 0.05;
/// The least zoom a graph opens at: the whole graph in view down to this zoom (the flagship's
/// 25 nodes in a 1280×800 window), with the overview's titles ([`overview`]) keeping every name legible once the
/// nodes' own text (egui's body text, 12.5 px at zoom 1) falls below 11 px. A graph larger
/// than the canvas even at this zoom opens showing where it starts; the minimap shows the
/// rest.
pub const OPEN_ZOOM: f32 = 0.1;
/// Body text height at zoom 1 (egui's default body font).
pub const BODY_TEXT_PX: f32 = 12.5;
const MAX_ZOOM: f32 = 2.0;

/// Accent colour of the previewed node and of pins a dragged wire can connect to.
const ACCENT: Color32 = Color32::from_rgb(90, 170, 255);

/// Outline and tag of a bypassed node: amber, unlike any port or state colour.
const BYPASSED: Color32 = Color32::from_rgb(240, 170, 40);

/// Screen positions of pins seen in the last frame (for tests driving the canvas with a mouse).
#[derive(Clone, Debug, Default)]
pub struct PinSpots {
    pub inputs: BTreeMap<(String, usize), Pos2>,
    pub outputs: BTreeMap<(String, usize), Pos2>,
}

/// Canvas state kept across frames.
pub struct Canvas {
    snarl: Snarl<String>,
    /// Which document this view is of: egui-snarl keeps its view (zoom, pan, selection) in egui
    /// memory under the widget's id, so each new document gets a new id and starts at the
    /// default zoom instead of the previous graph's.
    generation: u64,
    synced: u64,
    view: Option<Rect>,
    /// Node rectangles in graph space, from the last frame.
    rects: HashMap<NodeId, Rect>,
    /// Row centres (graph space) of input and output pins, from the last frame.
    rows: BTreeMap<(NodeId, bool, usize), f32>,
    /// The add-node search and the Space popup.
    search: Search,
    notice: Option<(String, Instant)>,
    /// The last refused wire's reason (kept for tests and the status bar).
    pub last_refusal: Option<String>,
    pub spots: PinSpots,
    transform: TSTransform,
    /// The node the user last pressed the primary button on, or just added.
    clicked: Option<String>,
    /// The pointer's last position over the canvas, in graph space (where pastes land).
    pointer: Option<Pos2>,
    /// The wire being dragged, from the pin it started at (for highlighting targets).
    pub dragging: Option<Dragging>,
    /// The minimap's rectangle on screen in the last frame, when it was shown.
    minimap: Option<Rect>,
    /// When and how the view fits the graph by itself.
    framing: Framing,
    /// The overview's titles painted in the last frame (node id, screen rectangle); empty
    /// when the nodes' own titles are legible.
    overview: Vec<(String, Rect)>,
}

impl Default for Canvas {
    fn default() -> Self {
        Self {
            snarl: Snarl::new(),
            generation: 0,
            synced: 0,
            view: None,
            rects: HashMap::new(),
            rows: BTreeMap::new(),
            search: Search::default(),
            notice: None,
            last_refusal: None,
            spots: PinSpots::default(),
            transform: TSTransform::IDENTITY,
            clicked: None,
            pointer: None,
            dragging: None,
            minimap: None,
            framing: Framing::default(),
            overview: Vec::new(),
        }
    }
}

impl Canvas {
    /// Fits the graph again at the next frame as on opening (readable; the minimap shows the
    /// rest): when the first thumbnails make the nodes taller, after Arrange.
    pub fn refit(&mut self) {
        self.framing.refit();
    }

    /// Fits every node into view at the next frame (View › Frame all, F): at whatever zoom
    /// that takes, unlike opening, which keeps text readable.
    pub fn frame_all(&mut self) {
        self.framing.frame_all();
    }

    /// Forgets everything about the previous document (after New/Open).
    pub fn reset(&mut self) {
        let generation = self.generation + 1;
        *self = Self::default();
        self.generation = generation;
    }

    /// The canvas widget's id (its view and selection live in egui memory under it).
    #[must_use]
    pub fn id(&self) -> Id {
        Id::new(("orogen-canvas", self.generation))
    }

    /// Ids of the selected nodes.
    #[must_use]
    pub fn selected(&self, ctx: &egui::Context) -> Vec<String> {
        egui_snarl::ui::get_selected_nodes(self.id(), ctx)
            .into_iter()
            .filter_map(|n| self.snarl.get_node(n).cloned())
            .collect()
    }

    /// The node the user pressed on since the last call (a click selects it for preview).
    pub fn take_clicked(&mut self) -> Option<String> {
        self.clicked.take()
    }

    /// Shows a message on the canvas for a few seconds.
    pub fn notify(&mut self, msg: String) {
        self.notice = Some((msg, Instant::now()));
    }

    /// Where node `id` was drawn in the last frame, in screen coordinates.
    #[must_use]
    pub fn node_rect(&self, id: &str) -> Option<Rect> {
        let (n, _) = self.snarl.nodes_ids_data().find(|(_, n)| n.value == id)?;
        self.rects.get(&n).map(|r| self.transform.mul_rect(*r))
    }

    /// Every node's rectangle in screen coordinates as drawn in the last frame, by id.
    #[must_use]
    pub fn node_rects(&self) -> BTreeMap<String, Rect> {
        self.snarl
            .nodes_ids_data()
            .filter_map(|(n, node)| {
                let r = self.rects.get(&n)?;
                Some((node.value.clone(), self.transform.mul_rect(*r)))
            })
            .collect()
    }

    /// A comment frame around nodes `ids` (one undo step). Returns false when there are none.
    pub fn frame_nodes(&mut self, ids: &[String], doc: &mut Document) -> bool {
        let Some(f) = frames::around(doc.graph(), ids, &self.node_sizes()) else {
            return false;
        };
        doc.apply(None, |g| g.frames.push(f));
        true
    }

    /// Every node's drawn size in graph units (unscaled), by id.
    #[must_use]
    pub fn node_sizes(&self) -> BTreeMap<String, Vec2> {
        self.snarl
            .nodes_ids_data()
            .filter_map(|(n, node)| Some((node.value.clone(), self.rects.get(&n)?.size())))
            .collect()
    }

    /// A canvas point (graph units) on the screen, as drawn in the last frame.
    #[must_use]
    pub fn to_screen(&self, p: Pos2) -> Pos2 {
        self.transform * p
    }

    /// The canvas area on screen in the last frame.
    #[must_use]
    pub fn view(&self) -> Option<Rect> {
        self.view
    }

    /// The add-node search opened by Space is showing.
    #[must_use]
    pub fn space_search_open(&self) -> bool {
        self.search.space_menu.is_some()
    }

    /// The canvas zoom: screen pixels per graph unit (1 = nodes at their natural size).
    #[must_use]
    pub fn zoom(&self) -> f32 {
        self.transform.scaling
    }

    /// True while the canvas is still fitting the graph into view.
    #[must_use]
    pub fn framing(&self) -> bool {
        self.framing.request > 0
    }

    /// The node under a screen position, if any.
    #[must_use]
    pub fn node_at(&self, screen: Pos2) -> Option<String> {
        let p = self.transform.inverse() * screen;
        self.rects
            .iter()
            .find(|(_, r)| r.contains(p))
            .and_then(|(n, _)| self.snarl.get_node(*n).cloned())
    }

    /// Draws the canvas and applies the user's interactions to `doc`.
    pub fn show(&mut self, ui: &mut Ui, doc: &mut Document, looks: &Looks) {
        if self.synced != doc.revision() {
            sync(doc.graph(), &mut self.snarl);
            self.synced = doc.revision();
        }
        let view = ui.available_rect_before_wrap();
        // The canvas changed size (a side panel grew) before the user moved the view: fit the
        // graph again, so what opened framed stays framed.
        if self.view.is_some_and(|v| v != view) && !self.framing.user_moved_view {
            self.framing.request = self.framing.request.max(1);
        }
        self.track_wire_drag(ui, view);
        let modifiers = self.plain_click_selects(ui, doc, view);
        let zoom = self.take_wheel_zoom(ui, view);
        // Selectable labels would swallow drags meant to move nodes.
        ui.style_mut().interaction.selectable_labels = false;
        let style = snarl_style();
        let id = self.id();
        let mut viewer = Viewer {
            doc,
            looks,
            dragging: self.dragging.clone(),
            search: &mut self.search.text,
            search_shown: false,
            refusal: None,
            // Fit into this frame's canvas, not the last one (a side panel may have just resized it).
            frame: (self.framing.request > 0).then_some(view),
            framed: false,
            rects: &mut self.rects,
            rows: &mut self.rows,
            transform: TSTransform::IDENTITY,
            added: None,
            last_bounds: self.framing.last_bounds,
            zoom,
            last_transform: self.transform,
            centre_on: self.framing.centre_on.take().map(|p| (p, view)),
            least_zoom: if self.framing.fit_all {
                MIN_ZOOM
            } else {
                OPEN_ZOOM
            },
            moved: false,
        };
        SnarlWidget::new()
            .id(id)
            .style(style)
            .show(&mut self.snarl, &mut viewer, ui);
        if let Some(m) = modifiers {
            ui.ctx().input_mut(|i| i.modifiers = m);
        }
        let Viewer {
            search_shown,
            refusal,
            framed,
            transform,
            added,
            last_bounds,
            moved,
            ..
        } = viewer;
        self.framing.last_bounds = last_bounds;
        self.framing.user_moved_view |= moved;
        self.transform = transform;
        // A node added from the menu is selected (and so previewed) at once.
        if added.is_some() {
            self.clicked = added;
        }
        if let Some(p) = ui
            .input(|i| i.pointer.hover_pos())
            .filter(|p| view.contains(*p))
        {
            self.pointer = Some(self.transform.inverse() * p);
        }
        if framed {
            self.framing.request = self.framing.request.saturating_sub(1);
            if self.framing.request == 0 {
                self.framing.fit_all = false;
            }
        }
        if !search_shown && self.search.space_menu.is_none() {
            self.search.text.clear();
        }
        if let Some(r) = refusal {
            self.last_refusal = Some(r.clone());
            self.notify(r);
        }
        self.view = Some(view);
        let unedited =
            *self.framing.opened_revision.get_or_insert(doc.revision()) == doc.revision();
        // Nor while the user holds a button down (dragging a frame or a node): the view must
        // not move under the pointer when a thumbnail arrives mid-drag.
        let holding = ui.input(|i| i.pointer.any_down());
        self.framing
            .refit_on_resized_nodes(&self.rects, unedited && !holding);
        let (pressed, at) = ui.input(|i| (i.pointer.primary_pressed(), i.pointer.interact_pos()));
        if let Some(p) = at.filter(|p| pressed && view.contains(*p)) {
            // A press that closes a menu (or picks from it) is not a click on the canvas.
            let on_minimap = self.minimap.is_some_and(|m| m.expand(4.0).contains(p));
            if !egui::Popup::is_any_open(ui.ctx()) && !on_minimap {
                if let Some(id) = self.node_at(p) {
                    self.clicked = Some(id);
                }
            }
        }
        self.commit_moves(ui, doc);
        self.spots = self.pin_spots();
        if doc.graph().nodes.is_empty() {
            ui.painter().text(
                view.center(),
                egui::Align2::CENTER_CENTER,
                "Right-click or press Space to add a node",
                egui::FontId::proportional(18.0),
                ui.visuals().weak_text_color(),
            );
        }
        self.space_menu_ui(ui, doc, view);
        self.over_nodes_ui(ui, doc, view, looks);
        self.notice_ui(ui, view);
    }

    /// A plain click on a node selects that node alone, and on the canvas's background
    /// clears the selection, as in other node editors. egui-snarl only changes its selection
    /// with Shift (add) and Ctrl (remove, or clear on the background), and keeps it private,
    /// so a plain click left an older Shift selection in place and Delete or G then acted on
    /// nodes other than the one the panel showed. In the frame where a plain click is released
    /// the click is handed to egui-snarl as Ctrl+Shift on a node (select it alone) and as Ctrl
    /// on the background (clear): a click frame has no drag, so nothing else reads them. Returns
    /// the modifiers to put back once egui-snarl has run (egui keeps them for later frames).
    fn plain_click_selects(&self, ui: &Ui, doc: &Document, view: Rect) -> Option<egui::Modifiers> {
        let (clicked, at, m) = ui.input(|i| {
            (
                i.pointer.primary_clicked(),
                i.pointer.interact_pos(),
                i.modifiers,
            )
        });
        let p = at.filter(|p| clicked && view.contains(*p))?;
        if m.shift || m.command || m.ctrl || m.alt || egui::Popup::is_any_open(ui.ctx()) {
            return None;
        }
        // Only what lands on the nodes or the background: not the minimap, a frame's title
        // bar (both above the nodes) or a window over the canvas.
        let on_minimap = self.minimap.is_some_and(|r| r.expand(4.0).contains(p));
        let graph_p = self.transform.inverse() * p;
        let on_frame_title = doc.graph().frames.iter().any(|f| {
            let r = frames::rect(f);
            Rect::from_min_size(r.min, Vec2::new(r.width(), frames::HEADER)).contains(graph_p)
        });
        let over_window = ui
            .ctx()
            .layer_id_at(p)
            .is_some_and(|l| l.order != ui.layer_id().order);
        if on_minimap || on_frame_title || over_window {
            return None;
        }
        let on_node = self.node_at(p).is_some();
        ui.ctx().input_mut(|i| {
            i.modifiers.command = true;
            i.modifiers.ctrl = true;
            i.modifiers.shift = on_node;
        });
        Some(m)
    }

    /// What lies over the nodes: the frames' title bars, the minimap; and a node waiting to
    /// be brought into view.
    fn over_nodes_ui(&mut self, ui: &mut Ui, doc: &mut Document, view: Rect, looks: &Looks) {
        // The frames' title bars and the minimap take input (and the minimap is drawn) above
        // the nodes: in a layer of their own over egui-snarl's (which is a sublayer of this
        // one, named by the canvas id).
        let sizes = self.node_sizes();
        let snarl_layer = egui::LayerId::new(ui.layer_id().order, self.id());
        let over_layer = egui::LayerId::new(ui.layer_id().order, self.id().with("over"));
        ui.ctx().set_sublayer(snarl_layer, over_layer);
        let over = ui.new_child(egui::UiBuilder::new().layer_id(over_layer).max_rect(view));
        frames::interact(&over, doc, self.transform, view, &sizes, self.id());
        self.overview_ui(&over, doc, view, looks);
        self.minimap_ui(&over, view);
        if let Some(id) = self
            .framing
            .reveal_pending
            .clone()
            .filter(|_| !self.framing())
        {
            if doc.graph().node(&id).is_none() {
                self.framing.reveal_pending = None;
            } else {
                self.reveal(&id);
                ui.ctx().request_repaint();
            }
        }
    }

    /// Zoomed out below legible text: every node's name and id over it at a legible size.
    fn overview_ui(&mut self, ui: &Ui, doc: &Document, view: Rect, looks: &Looks) {
        self.overview.clear();
        if !overview::titles_shown(self.zoom()) {
            return;
        }
        let nodes: Vec<Rect> = self
            .rects
            .values()
            .map(|r| self.transform.mul_rect(*r))
            .collect();
        let titles: Vec<overview::Title> = self
            .snarl
            .nodes_ids_data()
            .filter_map(|(n, node)| {
                let rect = self.transform.mul_rect(*self.rects.get(&n)?);
                let inst = doc.graph().node(&node.value)?;
                Some(overview::Title {
                    rect,
                    id: inst.id.clone(),
                    name: if inst.label.is_empty() {
                        inst.id.clone()
                    } else {
                        inst.label.clone()
                    },
                    bypassed: inst.bypass,
                    previewed: looks.previewed == Some(inst.id.as_str()),
                })
            })
            .filter(|t| t.rect.intersects(view))
            .collect();
        let painter = ui.painter().with_clip_rect(view);
        let frames: Vec<(String, Rect)> = doc
            .graph()
            .frames
            .iter()
            .map(|f| {
                (
                    frames::title(f).to_owned(),
                    self.transform.mul_rect(frames::rect(f)),
                )
            })
            .filter(|(_, r)| r.intersects(view))
            .collect();
        overview::paint_frames(&painter, ui.visuals(), &frames);
        let painted = overview::paint(&painter, ui.visuals(), &titles, &nodes, self.zoom());
        self.overview = titles.into_iter().map(|t| t.id).zip(painted).collect();
    }

    /// The overview's titles drawn in the last frame: node id and screen rectangle (none
    /// when the canvas is zoomed in enough for the nodes' own titles).
    #[must_use]
    pub fn overview_titles(&self) -> &[(String, Rect)] {
        &self.overview
    }

    /// Brings node `id` into view (centred) when it is not wholly on the canvas: the node a
    /// subgraph was opened from, on coming back; what a click on the minimap does for a spot.
    pub fn reveal(&mut self, id: &str) {
        let (Some(r), Some(view), false) = (self.node_rect(id), self.view, self.framing()) else {
            // Not drawn yet (a document just opened): once it is and the view is settled.
            self.framing.reveal_pending = Some(id.to_owned());
            return;
        };
        self.framing.reveal_pending = None;
        if !view.contains_rect(r) {
            self.framing.centre_on = Some(self.transform.inverse() * r.center());
        }
    }

    /// The minimap's rectangle on screen in the last frame, if shown.
    #[must_use]
    pub fn minimap(&self) -> Option<Rect> {
        self.minimap
    }

    /// The minimap, in the canvas's bottom-right corner whenever a node lies outside the
    /// view: every node as a small box, the view as a frame; clicking or dragging in it moves
    /// the view there.
    fn minimap_ui(&mut self, ui: &Ui, view: Rect) {
        self.minimap = None;
        let inv = self.transform.inverse();
        let seen = inv.mul_rect(view);
        let bounds = self.rects.values().fold(Rect::NOTHING, |b, r| b.union(*r));
        if !bounds.is_positive() || self.rects.values().all(|r| seen.contains_rect(*r)) {
            return;
        }
        // The map shows the nodes only (not the view): a drag that leaves the map would
        // otherwise grow the map's bounds with the view, frame after frame, without end.
        let bounds = bounds.expand(20.0);
        let max = Vec2::new(220.0, 150.0).min(view.size() * 0.35);
        let k = (max.x / bounds.width()).min(max.y / bounds.height());
        let size = bounds.size() * k;
        let map = Rect::from_min_size(view.max - size - Vec2::splat(12.0), size);
        let to_map = |p: Pos2| map.min + (p - bounds.min) * k;
        let painter = ui.painter().with_clip_rect(view);
        let visuals = ui.visuals();
        painter.rect_filled(
            map.expand(4.0),
            4.0,
            visuals.extreme_bg_color.gamma_multiply(0.92),
        );
        painter.rect_stroke(
            map.expand(4.0),
            4.0,
            visuals.widgets.noninteractive.bg_stroke,
            egui::StrokeKind::Outside,
        );
        for r in self.rects.values() {
            painter.rect_filled(
                Rect::from_min_max(to_map(r.min), to_map(r.max)),
                1.0,
                visuals.widgets.inactive.bg_fill,
            );
        }
        painter.rect_stroke(
            Rect::from_min_max(to_map(seen.min), to_map(seen.max)).intersect(map.expand(4.0)),
            1.0,
            egui::Stroke::new(1.5, visuals.selection.stroke.color),
            egui::StrokeKind::Middle,
        );
        let r = ui.interact(
            map.expand(4.0),
            self.id().with("minimap"),
            egui::Sense::click_and_drag(),
        );
        if let Some(p) = r
            .interact_pointer_pos()
            .filter(|_| r.clicked() || r.dragged())
        {
            let p = p.clamp(map.min, map.max);
            self.framing.centre_on = Some(bounds.min + (p - map.min) / k);
            ui.ctx().request_repaint();
        }
        self.minimap = Some(map);
    }

    /// A refusal or other notice, at the bottom of the canvas for a few seconds.
    fn notice_ui(&mut self, ui: &Ui, view: Rect) {
        if let Some((msg, at)) = &self.notice {
            if at.elapsed() < NOTICE_TIME {
                let pos = view.left_bottom() + Vec2::new(12.0, -12.0);
                egui::Area::new(Id::new("orogen-canvas-notice"))
                    .fixed_pos(pos)
                    .pivot(egui::Align2::LEFT_BOTTOM)
                    .show(ui.ctx(), |ui| {
                        egui::Frame::popup(ui.style()).show(ui, |ui| {
                            ui.set_max_width(view.width() - 40.0);
                            ui.colored_label(Color32::from_rgb(255, 120, 110), msg);
                        });
                    });
                ui.ctx().request_repaint_after(Duration::from_millis(250));
            } else {
                self.notice = None;
            }
        }
    }

    /// The mouse wheel over the canvas zooms about the pointer, as in other node editors (egui
    /// would pan). egui's wheel delta is already smoothed over a few frames, so the zoom
    /// glides. Consumed here so the canvas does not also scroll.
    fn take_wheel_zoom(&mut self, ui: &Ui, view: Rect) -> Option<(f32, Pos2)> {
        if egui::Popup::is_any_open(ui.ctx()) || self.search.space_menu.is_some() {
            return None;
        }
        ui.ctx().input_mut(|i| {
            let at = i.pointer.hover_pos().filter(|p| view.contains(*p))?;
            let dy = i.smooth_scroll_delta.y + i.smooth_scroll_delta.x;
            if dy == 0.0 || !i.modifiers.is_none() {
                return None;
            }
            i.smooth_scroll_delta = Vec2::ZERO;
            Some(((dy * 0.0015).exp(), at))
        })
    }

    /// Notices a wire being dragged out of a pin (a press on a pin seen last frame) and
    /// forgets it when the button is released.
    fn track_wire_drag(&mut self, ui: &Ui, view: Rect) {
        let (pressed, down, at) = ui.input(|i| {
            (
                i.pointer.primary_pressed(),
                i.pointer.primary_down(),
                i.pointer.press_origin(),
            )
        });
        if !down && !pressed {
            self.dragging = None;
            return;
        }
        let Some(at) = at.filter(|p| pressed && view.contains(*p)) else {
            return;
        };
        let reach = 10.0 * self.transform.scaling.max(0.5);
        let near = |p: &Pos2| p.distance(at) <= reach;
        self.dragging = self
            .spots
            .outputs
            .iter()
            .find(|(_, p)| near(p))
            .map(|((n, o), _)| Dragging::FromOutput(n.clone(), *o))
            .or_else(|| {
                self.spots
                    .inputs
                    .iter()
                    .find(|(_, p)| near(p))
                    .map(|((n, i), _)| Dragging::FromInput(n.clone(), *i))
            });
    }

    /// Space over the canvas opens the add-node list at the pointer (as right-click does).
    fn space_menu_ui(&mut self, ui: &mut Ui, doc: &mut Document, view: Rect) {
        let ctx = ui.ctx().clone();
        if self.search.space_menu.is_none() && !ctx.egui_wants_keyboard_input() {
            let pointer = ctx
                .input(|i| i.pointer.hover_pos())
                .filter(|p| view.contains(*p));
            if let Some(p) = pointer {
                if ctx.input_mut(|i| i.consume_key(egui::Modifiers::NONE, egui::Key::Space)) {
                    self.search.space_menu = Some(p);
                    self.search.text.clear();
                }
            }
        }
        let Some(at) = self.search.space_menu else {
            return;
        };
        let mut chosen = None;
        let area = egui::Area::new(Id::new("orogen-space-menu"))
            .fixed_pos(at)
            .order(egui::Order::Foreground)
            .show(&ctx, |ui| {
                egui::Frame::popup(ui.style()).show(ui, |ui| {
                    ui.set_max_width(260.0);
                    chosen = node_picker(ui, &mut self.search.text);
                });
            });
        let clicked_away = ctx.input(|i| i.pointer.any_pressed())
            && ctx
                .input(|i| i.pointer.interact_pos())
                .is_some_and(|p| !area.response.rect.contains(p))
            && !egui::Popup::is_any_open(&ctx);
        if ctx.input(|i| i.key_pressed(egui::Key::Escape)) || clicked_away {
            self.search.space_menu = None;
        }
        if let Some(ty) = chosen {
            let pos = self.transform.inverse() * at;
            if let Some(id) = add_node(doc, &mut self.snarl, ty, pos) {
                self.clicked = Some(id);
            }
            self.synced = doc.revision();
            self.search.space_menu = None;
            self.search.text.clear();
        }
    }

    /// After a drag ends, stores moved node positions in the document (one undo step).
    fn commit_moves(&mut self, ui: &Ui, doc: &mut Document) {
        if ui.input(|i| i.pointer.any_down()) {
            return;
        }
        let moved: Vec<(String, [f64; 2])> = self
            .snarl
            .nodes_pos()
            .filter_map(|(pos, id)| {
                let n = doc.graph().node(id)?;
                // Whole graph units keep files tidy.
                let p = [f64::from(pos.x.round()), f64::from(pos.y.round())];
                ((p[0] - n.position[0]).abs() > 0.5 || (p[1] - n.position[1]).abs() > 0.5)
                    .then(|| (id.clone(), p))
            })
            .collect();
        if moved.is_empty() {
            return;
        }
        doc.apply(None, |g| {
            for (id, p) in &moved {
                if let Some(n) = g.node_mut(id) {
                    n.position = *p;
                }
            }
        });
        self.synced = doc.revision();
    }

    fn pin_spots(&self) -> PinSpots {
        let mut spots = PinSpots::default();
        for (&(node, is_input, index), &y) in &self.rows {
            let (Some(rect), Some(id)) = (self.rects.get(&node), self.snarl.get_node(node)) else {
                continue;
            };
            let x = if is_input { rect.left() } else { rect.right() };
            let p = self.transform * Pos2::new(x, y);
            if is_input {
                spots.inputs.insert((id.clone(), index), p);
            } else {
                spots.outputs.insert((id.clone(), index), p);
            }
        }
        spots
    }

    /// Adds a node of type `ty` at graph position `pos`; returns its id.
    pub fn add_node(&mut self, doc: &mut Document, ty: &str, pos: Pos2) -> Option<String> {
        add_node(doc, &mut self.snarl, ty, pos)
    }

    /// Deletes nodes (one undo step).
    pub fn delete(&mut self, doc: &mut Document, ids: &[String]) {
        if ids.is_empty() {
            return;
        }
        doc.apply(None, |g| {
            doc::remove_nodes(g, ids);
        });
    }

    /// The centre of the view in graph space.
    #[must_use]
    pub fn view_centre(&self) -> Pos2 {
        self.view
            .map_or(Pos2::ZERO, |v| self.transform.inverse() * v.center())
    }

    /// Where pasted nodes go, in graph space: at the pointer when it was last over the canvas,
    /// else the view's centre.
    #[must_use]
    pub fn paste_point(&self) -> Pos2 {
        self.pointer.unwrap_or_else(|| self.view_centre())
    }
}

/// How the canvas draws nodes: pins on the edges, no collapsing, a soft accent selection.
fn snarl_style() -> SnarlStyle {
    let selection = egui_snarl::ui::SelectionStyle {
        margin: egui::Margin::same(6),
        rounding: egui::CornerRadius::same(8),
        fill: ACCENT.gamma_multiply(0.12),
        stroke: egui::Stroke::new(2.0, ACCENT.gamma_multiply(0.8)),
    };
    SnarlStyle {
        pin_placement: Some(PinPlacement::Edge),
        collapsible: Some(false),
        select_style: Some(selection),
        min_scale: Some(MIN_ZOOM),
        max_scale: Some(MAX_ZOOM),
        ..SnarlStyle::new()
    }
}
