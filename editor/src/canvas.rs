//! The graph canvas: egui-snarl showing the document's graph.
//!
//! The engine [`Graph`](orogen::Graph) in the [`Document`] is the truth; the `Snarl` only holds
//! node ids, positions and wires for drawing and interaction. Every interaction that changes
//! the graph (wire, unwire, add, delete, move) is applied to the document as an undoable edit,
//! and after any document change (undo, open, paste…) the snarl is reconciled with the graph
//! so that the node ids snarl knows stay stable — its selection and view survive edits.

use crate::doc::{self, Document};
use egui::emath::TSTransform;
use egui::{Color32, Id, Pos2, Rect, Ui, Vec2};
use egui_snarl::ui::{PinInfo, PinPlacement, SnarlStyle, SnarlViewer, SnarlWidget};
use egui_snarl::{InPin, InPinId, NodeId, OutPin, OutPinId, Snarl};
use orogen::graph::{NodeInstance, PortRef};
use orogen::node::{Category, PortKind, Registry};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::{Duration, Instant};

/// How long a refusal message stays on the canvas.
const NOTICE_TIME: Duration = Duration::from_secs(5);

/// The canvas widget's id (its selection lives in egui memory under it).
#[must_use]
pub fn canvas_id() -> Id {
    Id::new("orogen-canvas")
}

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

/// Zoom limits of the canvas (snarl's defaults).
const MIN_ZOOM: f32 = 0.2;
const MAX_ZOOM: f32 = 2.0;

/// Accent colour of the previewed node and of pins a dragged wire can connect to.
const ACCENT: Color32 = Color32::from_rgb(90, 170, 255);

/// Screen positions of pins seen in the last frame (for tests driving the canvas with a mouse).
#[derive(Clone, Debug, Default)]
pub struct PinSpots {
    pub inputs: BTreeMap<(String, usize), Pos2>,
    pub outputs: BTreeMap<(String, usize), Pos2>,
}

/// Canvas state kept across frames.
pub struct Canvas {
    snarl: Snarl<String>,
    synced: u64,
    /// Fit every node into view at the next frame.
    /// Frames left to fit every node into view (node sizes settle over a frame or two).
    frame_request: u8,
    /// The nodes' bounds at the last fit (framing stops once they stay the same).
    last_bounds: Option<Rect>,
    /// The user zoomed or panned since the graph was opened (then the view is theirs).
    user_moved_view: bool,
    view: Option<Rect>,
    /// Node rectangles in graph space, from the last frame.
    rects: HashMap<NodeId, Rect>,
    /// Node sizes (graph space) the frame before: a node that grows or shrinks (a thumbnail,
    /// a badge or a preview message arriving) before the user moved the view refits it.
    sizes: HashMap<NodeId, Vec2>,
    /// The document's revision when it was opened: once the user edits it, a resized node no
    /// longer moves the view (the change is theirs, the view must stay where they work).
    opened_revision: Option<u64>,
    /// Row centres (graph space) of input and output pins, from the last frame.
    rows: BTreeMap<(NodeId, bool, usize), f32>,
    search: String,
    search_open: bool,
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
    /// The add-node popup opened with Space, at this screen position.
    space_menu: Option<Pos2>,
}

impl Default for Canvas {
    fn default() -> Self {
        Self {
            snarl: Snarl::new(),
            synced: 0,
            frame_request: 2,
            last_bounds: None,
            user_moved_view: false,
            view: None,
            rects: HashMap::new(),
            sizes: HashMap::new(),
            opened_revision: None,
            rows: BTreeMap::new(),
            search: String::new(),
            search_open: false,
            notice: None,
            last_refusal: None,
            spots: PinSpots::default(),
            transform: TSTransform::IDENTITY,
            clicked: None,
            pointer: None,
            dragging: None,
            space_menu: None,
        }
    }
}

impl Canvas {
    /// Fits every node into view at the next frame.
    pub fn frame_all(&mut self) {
        self.frame_request = 2;
    }

    /// Asks for a fit when a node changed its size since the last frame (thumbnails, badges and
    /// preview notes arrive at different times, after the first fit) and the view is still the
    /// one the editor chose and the document is as opened (`unedited`). Moving a node keeps
    /// its size, so a user's drag never refits.
    fn refit_on_resized_nodes(&mut self, unedited: bool) {
        let resized = self.rects.iter().any(|(id, r)| {
            self.sizes
                .get(id)
                .is_some_and(|s| (*s - r.size()).length() > 0.5)
        });
        if resized && unedited && !self.user_moved_view {
            self.frame_request = self.frame_request.max(1);
        }
        self.sizes = self.rects.iter().map(|(id, r)| (*id, r.size())).collect();
    }

    /// Forgets everything about the previous document (after New/Open).
    pub fn reset(&mut self) {
        *self = Self::default();
    }

    /// Ids of the selected nodes.
    #[must_use]
    pub fn selected(&self, ctx: &egui::Context) -> Vec<String> {
        egui_snarl::ui::get_selected_nodes(canvas_id(), ctx)
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

    /// The canvas area on screen in the last frame.
    #[must_use]
    pub fn view(&self) -> Option<Rect> {
        self.view
    }

    /// The canvas zoom: screen pixels per graph unit (1 = nodes at their natural size).
    #[must_use]
    pub fn zoom(&self) -> f32 {
        self.transform.scaling
    }

    /// True while the canvas is still fitting the graph into view.
    #[must_use]
    pub fn framing(&self) -> bool {
        self.frame_request > 0
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
        if self.view.is_some_and(|v| v != view) && !self.user_moved_view {
            self.frame_request = self.frame_request.max(1);
        }
        self.track_wire_drag(ui, view);
        let zoom = self.take_wheel_zoom(ui, view);
        // Selectable labels would swallow drags meant to move nodes.
        ui.style_mut().interaction.selectable_labels = false;
        let selection = egui_snarl::ui::SelectionStyle {
            margin: egui::Margin::same(6),
            rounding: egui::CornerRadius::same(8),
            fill: ACCENT.gamma_multiply(0.12),
            stroke: egui::Stroke::new(2.0, ACCENT.gamma_multiply(0.8)),
        };
        let style = SnarlStyle {
            pin_placement: Some(PinPlacement::Edge),
            collapsible: Some(false),
            select_style: Some(selection),
            ..SnarlStyle::new()
        };
        let mut viewer = Viewer {
            doc,
            looks,
            dragging: self.dragging.clone(),
            search: &mut self.search,
            search_shown: false,
            refusal: None,
            // Fit into this frame's canvas, not the last one (a side panel may have just resized it).
            frame: (self.frame_request > 0).then_some(view),
            framed: false,
            rects: &mut self.rects,
            rows: &mut self.rows,
            transform: TSTransform::IDENTITY,
            added: None,
            last_bounds: self.last_bounds,
            zoom,
            last_transform: self.transform,
            moved: false,
        };
        SnarlWidget::new()
            .id(canvas_id())
            .style(style)
            .show(&mut self.snarl, &mut viewer, ui);
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
        self.last_bounds = last_bounds;
        self.user_moved_view |= moved;
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
            self.frame_request = self.frame_request.saturating_sub(1);
        }
        if !search_shown && self.space_menu.is_none() {
            self.search.clear();
        }
        self.search_open = search_shown;
        if let Some(r) = refusal {
            self.last_refusal = Some(r.clone());
            self.notify(r);
        }
        self.view = Some(view);
        let unedited = *self.opened_revision.get_or_insert(doc.revision()) == doc.revision();
        self.refit_on_resized_nodes(unedited);
        let (pressed, at) = ui.input(|i| (i.pointer.primary_pressed(), i.pointer.interact_pos()));
        if let Some(p) = at.filter(|p| pressed && view.contains(*p)) {
            // A press that closes a menu (or picks from it) is not a click on the canvas.
            if !egui::Popup::is_any_open(ui.ctx()) {
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
        // A refusal or other notice, at the bottom of the canvas.
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
        if egui::Popup::is_any_open(ui.ctx()) || self.space_menu.is_some() {
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
        if self.space_menu.is_none() && !ctx.egui_wants_keyboard_input() {
            let pointer = ctx
                .input(|i| i.pointer.hover_pos())
                .filter(|p| view.contains(*p));
            if let Some(p) = pointer {
                if ctx.input_mut(|i| i.consume_key(egui::Modifiers::NONE, egui::Key::Space)) {
                    self.space_menu = Some(p);
                    self.search.clear();
                }
            }
        }
        let Some(at) = self.space_menu else { return };
        let mut chosen = None;
        let area = egui::Area::new(Id::new("orogen-space-menu"))
            .fixed_pos(at)
            .order(egui::Order::Foreground)
            .show(&ctx, |ui| {
                egui::Frame::popup(ui.style()).show(ui, |ui| {
                    ui.set_max_width(260.0);
                    chosen = node_picker(ui, &mut self.search);
                });
            });
        let clicked_away = ctx.input(|i| i.pointer.any_pressed())
            && ctx
                .input(|i| i.pointer.interact_pos())
                .is_some_and(|p| !area.response.rect.contains(p))
            && !egui::Popup::is_any_open(&ctx);
        if ctx.input(|i| i.key_pressed(egui::Key::Escape)) || clicked_away {
            self.space_menu = None;
        }
        if let Some(ty) = chosen {
            let pos = self.transform.inverse() * at;
            if let Some(id) = add_node(doc, &mut self.snarl, ty, pos) {
                self.clicked = Some(id);
            }
            self.synced = doc.revision();
            self.space_menu = None;
            self.search.clear();
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

/// Makes `snarl` show `graph`: removes and adds nodes, moves them, rewires.
fn sync(graph: &orogen::Graph, snarl: &mut Snarl<String>) {
    let present: BTreeSet<&str> = graph.nodes.iter().map(|n| n.id.as_str()).collect();
    let stale: Vec<NodeId> = snarl
        .nodes_ids_data()
        .filter(|(_, n)| !present.contains(n.value.as_str()))
        .map(|(id, _)| id)
        .collect();
    for id in stale {
        snarl.remove_node(id);
    }
    let mut ids: HashMap<String, NodeId> = snarl
        .nodes_ids_data()
        .map(|(id, n)| (n.value.clone(), id))
        .collect();
    for n in &graph.nodes {
        let pos = Pos2::new(n.position[0] as f32, n.position[1] as f32);
        if let Some(&id) = ids.get(&n.id) {
            if let Some(info) = snarl.get_node_info_mut(id) {
                if info.pos.distance(pos) > 0.6 {
                    info.pos = pos;
                }
            }
        } else {
            let id = snarl.insert_node(pos, n.id.clone());
            ids.insert(n.id.clone(), id);
        }
    }
    let mut want = BTreeSet::new();
    for n in &graph.nodes {
        for (j, r) in n.inputs.iter().enumerate() {
            let Some(r) = r else { continue };
            let (Some(&src), Some(&dst)) = (ids.get(&r.node), ids.get(&n.id)) else {
                continue;
            };
            let Some(o) = graph
                .node(&r.node)
                .and_then(|s| s.def.output_index(&r.output))
            else {
                continue;
            };
            want.insert((
                OutPinId {
                    node: src,
                    output: o,
                },
                InPinId {
                    node: dst,
                    input: j,
                },
            ));
        }
    }
    let have: BTreeSet<(OutPinId, InPinId)> = snarl.wires().collect();
    for &(o, i) in have.difference(&want) {
        snarl.disconnect(o, i);
    }
    for &(o, i) in want.difference(&have) {
        snarl.connect(o, i);
    }
}

fn add_node(doc: &mut Document, snarl: &mut Snarl<String>, ty: &str, pos: Pos2) -> Option<String> {
    let def = Registry::builtin().get(ty)?;
    let id = doc.fresh_id(ty);
    let mut node = NodeInstance::new(id.clone(), def);
    node.position = [f64::from(pos.x), f64::from(pos.y)];
    doc.apply(None, |g| g.nodes.push(node));
    snarl.insert_node(pos, id.clone());
    Some(id)
}

struct Viewer<'a> {
    doc: &'a mut Document,
    looks: &'a Looks<'a>,
    dragging: Option<Dragging>,
    search: &'a mut String,
    search_shown: bool,
    refusal: Option<String>,
    /// The view to fit all nodes into, when asked.
    frame: Option<Rect>,
    framed: bool,
    rects: &'a mut HashMap<NodeId, Rect>,
    rows: &'a mut BTreeMap<(NodeId, bool, usize), f32>,
    transform: TSTransform,
    /// A node added from a menu in this frame.
    added: Option<String>,
    /// The nodes' bounds when the view was last fitted to them.
    last_bounds: Option<Rect>,
    /// Zoom by this factor about this screen point in this frame (the mouse wheel).
    zoom: Option<(f32, Pos2)>,
    /// The transform the canvas had at the end of the last frame.
    last_transform: TSTransform,
    /// Set when the user zoomed or panned in this frame.
    moved: bool,
}

impl Viewer<'_> {
    fn node(&self, id: &str) -> Option<&NodeInstance> {
        self.doc.graph().node(id)
    }

    fn set_input(&mut self, node: &str, input: usize, value: Option<PortRef>) {
        // A failure (the node or port gone under the pointer) is kept by the document and
        // shown in the status bar.
        let _ = self.doc.edit(None, |g| {
            let n = g
                .node_mut(node)
                .ok_or_else(|| format!("cannot wire: no node \"{node}\""))?;
            let slot = n
                .inputs
                .get_mut(input)
                .ok_or_else(|| format!("cannot wire: node \"{node}\" has no input {input}"))?;
            *slot = value;
            Ok::<_, String>(())
        });
    }

    /// One pin's row: the port name (with its doc as tooltip), remembered for `PinSpots`;
    /// returns the pin's shape and colour. Exactly one of `input` / `output` is given.
    fn pin_row(
        &mut self,
        ui: &mut Ui,
        node: NodeId,
        id: &str,
        input: Option<usize>,
        output: Option<usize>,
    ) -> PinInfo {
        let spec = self.node(id).map(|n| &n.def.spec);
        let (port, index, side) = match (input, output) {
            (Some(i), _) => (spec.and_then(|s| s.inputs.get(i)), i, "input"),
            (None, Some(o)) => (spec.and_then(|s| s.outputs.get(o)), o, "output"),
            (None, None) => (None, 0, ""),
        };
        let Some(port) = port else {
            return PinInfo::circle();
        };
        let text = if input.is_some() && !port.required {
            format!("{} (optional)", port.name)
        } else {
            port.name.to_owned()
        };
        ui.label(text)
            .on_hover_text(format!("{} {side}: {}", port.kind.name(), port.doc.trim()));
        self.rows
            .insert((node, input.is_some(), index), ui.max_rect().center().y);
        let info = pin_info(port.kind);
        // While a wire is dragged, the pins it could connect to light up and the others dim.
        let g = self.doc.graph();
        let target = match (&self.dragging, input, output) {
            (Some(Dragging::FromOutput(n, o)), Some(i), _) => {
                Some(doc::wire_refusal(g, (n, *o), (id, i)).is_none())
            }
            (Some(Dragging::FromInput(n, i)), _, Some(o)) => {
                Some(doc::wire_refusal(g, (id, o), (n, *i)).is_none())
            }
            _ => None,
        };
        match target {
            Some(true) => info
                .with_fill(ACCENT)
                .with_stroke(egui::Stroke::new(2.0, Color32::WHITE)),
            Some(false) => info.with_fill(kind_color(port.kind).gamma_multiply(0.2)),
            None => info,
        }
    }

    /// The add-node menu: type to search, or browse by category.
    fn node_menu(&mut self, ui: &mut Ui, snarl: &mut Snarl<String>, pos: Pos2) -> Option<String> {
        self.search_shown = true;
        let chosen = node_picker(ui, self.search);
        let id = chosen.and_then(|ty| add_node(self.doc, snarl, ty, pos));
        if id.is_some() {
            self.search.clear();
            self.added.clone_from(&id);
            ui.close();
        }
        id
    }
}

/// The add-node list: type to search (name, id or category; Enter takes the first hit), or
/// browse by category. Returns the chosen node type.
fn node_picker(ui: &mut Ui, search: &mut String) -> Option<&'static str> {
    let r = ui.add(
        egui::TextEdit::singleline(&mut *search)
            .hint_text("Search nodes…")
            .id(Id::new("orogen-node-search")),
    );
    if !r.has_focus() && search.is_empty() {
        r.request_focus();
    }
    let needle = search.to_lowercase();
    let defs = Registry::builtin().defs();
    let mut chosen = None;
    if needle.is_empty() {
        for cat in categories() {
            let mut of_cat: Vec<_> = defs.iter().filter(|d| d.spec.category == cat).collect();
            if of_cat.is_empty() {
                continue;
            }
            of_cat.sort_by_key(|d| d.spec.label);
            ui.menu_button(cat.name(), |ui| {
                for d in of_cat {
                    if ui
                        .button(d.spec.label)
                        .on_hover_text(orogen::node::clean_doc(d.spec.doc))
                        .clicked()
                    {
                        chosen = Some(d.spec.id);
                    }
                }
            });
        }
    } else {
        let mut hits: Vec<_> = defs
            .iter()
            .filter(|d| {
                d.spec.label.to_lowercase().contains(&needle)
                    || d.spec.id.contains(&needle)
                    || d.spec.category.name().to_lowercase().contains(&needle)
            })
            .collect();
        hits.sort_by_key(|d| (d.spec.category as u8, d.spec.label));
        if hits.is_empty() {
            ui.weak("No node matches.");
        }
        let enter = r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
        for (k, d) in hits.iter().enumerate() {
            let text = format!("{}  ·  {}", d.spec.label, d.spec.category.name());
            if ui
                .button(text)
                .on_hover_text(orogen::node::clean_doc(d.spec.doc))
                .clicked()
                || (enter && k == 0)
            {
                chosen = Some(d.spec.id);
            }
        }
    }
    chosen
}

/// Categories in menu order.
fn categories() -> [Category; 9] {
    [
        Category::Generator,
        Category::Combine,
        Category::Warp,
        Category::Filter,
        Category::Mask,
        Category::Erosion,
        Category::Water,
        Category::Color,
        Category::Io,
    ]
}

impl SnarlViewer<String> for Viewer<'_> {
    fn title(&mut self, node: &String) -> String {
        self.node(node)
            .map_or_else(|| node.clone(), |n| n.def.spec.label.to_owned())
    }

    fn show_header(
        &mut self,
        node: NodeId,
        _inputs: &[InPin],
        _outputs: &[OutPin],
        ui: &mut Ui,
        snarl: &mut Snarl<String>,
    ) {
        let id = snarl[node].clone();
        let label = self.title(&id);
        let written: Vec<String> = self
            .doc
            .graph()
            .outputs
            .iter()
            .filter(|(_, r)| r.node == id)
            .map(|(name, _)| name.clone())
            .collect();
        ui.vertical(|ui| {
            ui.horizontal(|ui| {
                ui.strong(label);
                match self.looks.badges.get(&id) {
                    Some(Badge::Error(msg)) => {
                        ui.colored_label(Color32::from_rgb(235, 70, 60), "⚠ error")
                            .on_hover_text(msg);
                    }
                    Some(Badge::Incomplete(msg)) => {
                        ui.weak("○ needs input").on_hover_text(msg);
                    }
                    Some(Badge::Running(_)) => {
                        crate::worker::busy(ui);
                    }
                    None => {}
                }
            });
            ui.horizontal(|ui| {
                ui.label(egui::RichText::new(&id).small().weak());
                if !written.is_empty() {
                    // Nodes whose output a build writes carry the output's name.
                    let text = egui::RichText::new(format!("⬇ {}", written.join(", ")))
                        .small()
                        .color(Color32::from_rgb(120, 210, 120))
                        .strong();
                    ui.label(text).on_hover_text(
                        "Written by builds: a graph output (right-click the node to change)",
                    );
                }
            });
        });
    }

    fn node_frame(
        &mut self,
        default: egui::Frame,
        node: NodeId,
        _inputs: &[InPin],
        _outputs: &[OutPin],
        snarl: &Snarl<String>,
    ) -> egui::Frame {
        if self.looks.previewed == Some(snarl[node].as_str()) {
            default.stroke(egui::Stroke::new(2.5, ACCENT))
        } else {
            default
        }
    }

    fn inputs(&mut self, node: &String) -> usize {
        self.node(node).map_or(0, |n| n.def.spec.inputs.len())
    }

    fn outputs(&mut self, node: &String) -> usize {
        self.node(node).map_or(0, |n| n.def.spec.outputs.len())
    }

    fn show_input(
        &mut self,
        pin: &InPin,
        ui: &mut Ui,
        snarl: &mut Snarl<String>,
    ) -> impl egui_snarl::ui::SnarlPin + 'static {
        self.pin_row(
            ui,
            pin.id.node,
            &snarl[pin.id.node],
            Some(pin.id.input),
            None,
        )
    }

    fn show_output(
        &mut self,
        pin: &OutPin,
        ui: &mut Ui,
        snarl: &mut Snarl<String>,
    ) -> impl egui_snarl::ui::SnarlPin + 'static {
        self.pin_row(
            ui,
            pin.id.node,
            &snarl[pin.id.node],
            None,
            Some(pin.id.output),
        )
    }

    fn has_body(&mut self, _node: &String) -> bool {
        true
    }

    fn show_body(
        &mut self,
        node: NodeId,
        _inputs: &[InPin],
        _outputs: &[OutPin],
        ui: &mut Ui,
        snarl: &mut Snarl<String>,
    ) {
        let id = snarl[node].clone();
        if let Some(tex) = self.looks.thumbnails.and_then(|t| t.get(&id)) {
            let side = crate::preview::THUMB as f32 * 1.25;
            ui.add(egui::Image::new((tex, Vec2::splat(side))).corner_radius(3.0));
        }
        match self.looks.badges.get(&id) {
            Some(Badge::Running(f)) => {
                ui.add(
                    egui::ProgressBar::new(*f)
                        .desired_width(120.0)
                        .show_percentage(),
                );
            }
            Some(Badge::Error(msg)) => {
                ui.set_max_width(160.0);
                let text =
                    egui::RichText::new(short_message(msg)).color(Color32::from_rgb(255, 120, 110));
                ui.add(egui::Label::new(text).wrap()).on_hover_text(msg);
            }
            Some(Badge::Incomplete(msg)) => {
                ui.set_max_width(160.0);
                ui.add(egui::Label::new(egui::RichText::new(short_message(msg)).weak()).wrap())
                    .on_hover_text(msg);
            }
            None => {}
        }
    }

    fn final_node_rect(
        &mut self,
        node: NodeId,
        rect: Rect,
        ui: &mut Ui,
        _snarl: &mut Snarl<String>,
    ) {
        self.rects.insert(node, rect);
        if let Some(t) = ui.ctx().layer_transform_to_global(ui.layer_id()) {
            self.transform = t;
        }
    }

    fn has_graph_menu(&mut self, _pos: Pos2, _snarl: &mut Snarl<String>) -> bool {
        true
    }

    fn show_graph_menu(&mut self, pos: Pos2, ui: &mut Ui, snarl: &mut Snarl<String>) {
        self.node_menu(ui, snarl, pos);
    }

    fn has_dropped_wire_menu(
        &mut self,
        _src: egui_snarl::ui::AnyPins,
        _snarl: &mut Snarl<String>,
    ) -> bool {
        true
    }

    fn show_dropped_wire_menu(
        &mut self,
        pos: Pos2,
        ui: &mut Ui,
        src: egui_snarl::ui::AnyPins,
        snarl: &mut Snarl<String>,
    ) {
        let Some(new) = self.node_menu(ui, snarl, pos) else {
            return;
        };
        // Wire the new node to the dropped wire's pin: the first compatible port.
        let g = self.doc.graph();
        let Some(nn) = g.node(&new) else { return };
        let mut wires: Vec<(String, usize, PortRef)> = Vec::new();
        match src {
            egui_snarl::ui::AnyPins::Out(pins) => {
                for p in pins {
                    let src_id = snarl[p.node].clone();
                    let free = (0..nn.inputs.len())
                        .find(|&j| doc::wire_refusal(g, (&src_id, p.output), (&new, j)).is_none());
                    let out = g
                        .node(&src_id)
                        .and_then(|s| s.def.spec.outputs.get(p.output));
                    if let (Some(j), Some(out)) = (free, out) {
                        wires.push((new.clone(), j, PortRef::new(src_id.clone(), out.name)));
                        break;
                    }
                }
            }
            egui_snarl::ui::AnyPins::In(pins) => {
                for p in pins {
                    let dst = snarl[p.node].clone();
                    if let Some(o) = (0..nn.def.spec.outputs.len())
                        .find(|&o| doc::wire_refusal(g, (&new, o), (&dst, p.input)).is_none())
                    {
                        wires.push((
                            dst,
                            p.input,
                            PortRef::new(new.clone(), nn.def.spec.outputs[o].name),
                        ));
                    }
                }
            }
        }
        for (node, input, r) in wires {
            self.set_input(&node, input, Some(r));
        }
    }

    fn has_node_menu(&mut self, _node: &String) -> bool {
        true
    }

    fn show_node_menu(
        &mut self,
        node: NodeId,
        _inputs: &[InPin],
        _outputs: &[OutPin],
        ui: &mut Ui,
        snarl: &mut Snarl<String>,
    ) {
        let id = snarl[node].clone();
        let Some(n) = self.node(&id) else { return };
        let outs: Vec<&'static str> = n.def.spec.outputs.iter().map(|p| p.name).collect();
        for out in outs {
            let r = PortRef::new(id.clone(), out);
            let named = self
                .doc
                .graph()
                .outputs
                .iter()
                .find(|(_, v)| **v == r)
                .map(|(k, _)| k.clone());
            let text = match &named {
                Some(name) => format!("Stop writing \"{out}\" (output \"{name}\")"),
                None => format!("Write \"{out}\" in builds"),
            };
            if ui.button(text).clicked() {
                self.doc.apply(None, |g| {
                    if let Some(name) = &named {
                        g.outputs.remove(name);
                    } else {
                        let base = if out == "out" {
                            id.clone()
                        } else {
                            format!("{id}_{out}")
                        };
                        let name = doc::unique_name(&base, |k| g.outputs.contains_key(k));
                        g.outputs.insert(name, r.clone());
                    }
                });
                ui.close();
            }
        }
        if ui.button("Delete").clicked() {
            self.doc.apply(None, |g| {
                doc::remove_nodes(g, std::slice::from_ref(&id));
            });
            snarl.remove_node(node);
            ui.close();
        }
    }

    fn connect(&mut self, from: &OutPin, to: &InPin, snarl: &mut Snarl<String>) {
        let (src, dst) = (snarl[from.id.node].clone(), snarl[to.id.node].clone());
        if let Some(why) = doc::wire_refusal(
            self.doc.graph(),
            (&src, from.id.output),
            (&dst, to.id.input),
        ) {
            self.refusal = Some(why);
            return;
        }
        let Some(out) = self
            .node(&src)
            .and_then(|n| n.def.spec.outputs.get(from.id.output))
            .map(|p| p.name)
        else {
            return;
        };
        self.set_input(&dst, to.id.input, Some(PortRef::new(src, out)));
        snarl.drop_inputs(to.id);
        snarl.connect(from.id, to.id);
    }

    fn disconnect(&mut self, from: &OutPin, to: &InPin, snarl: &mut Snarl<String>) {
        let dst = snarl[to.id.node].clone();
        self.set_input(&dst, to.id.input, None);
        snarl.disconnect(from.id, to.id);
    }

    fn drop_inputs(&mut self, pin: &InPin, snarl: &mut Snarl<String>) {
        let dst = snarl[pin.id.node].clone();
        self.set_input(&dst, pin.id.input, None);
        snarl.drop_inputs(pin.id);
    }

    fn drop_outputs(&mut self, pin: &OutPin, snarl: &mut Snarl<String>) {
        let src = snarl[pin.id.node].clone();
        let Some(out) = self
            .node(&src)
            .and_then(|n| n.def.spec.outputs.get(pin.id.output))
            .map(|p| p.name)
        else {
            return;
        };
        self.doc.apply(None, |g| {
            for n in &mut g.nodes {
                for i in &mut n.inputs {
                    if i.as_ref().is_some_and(|r| r.node == src && r.output == out) {
                        *i = None;
                    }
                }
            }
        });
        snarl.drop_outputs(pin.id);
    }

    fn current_transform(&mut self, to_global: &mut TSTransform, snarl: &mut Snarl<String>) {
        // A transform other than the one this viewer left last frame is the user's pan.
        if self.frame.is_none() && *to_global != self.last_transform {
            self.moved = true;
        }
        if let Some((factor, at)) = self.zoom {
            self.moved = true;
            let scale = (to_global.scaling * factor).clamp(MIN_ZOOM, MAX_ZOOM);
            let f = scale / to_global.scaling;
            *to_global = TSTransform::from_translation(at.to_vec2())
                * TSTransform::from_scaling(f)
                * TSTransform::from_translation(-at.to_vec2())
                * *to_global;
        }
        let Some(view) = self.frame else {
            self.transform = *to_global;
            return;
        };
        let mut bb = Rect::NOTHING;
        let mut all_drawn = true;
        for (id, node) in snarl.nodes_ids_data() {
            let r = self.rects.get(&id).map_or_else(
                || {
                    all_drawn = false;
                    Rect::from_min_size(node.pos, Vec2::new(180.0, 90.0))
                },
                |r| *r,
            );
            bb = bb.union(r);
        }
        if bb.is_positive() && view.is_positive() && view.is_finite() {
            let bb = bb.expand(40.0);
            let scale = (view.width() / bb.width())
                .min(view.height() / bb.height())
                .clamp(MIN_ZOOM, 1.5);
            *to_global = TSTransform {
                scaling: scale,
                translation: view.center().to_vec2() - bb.center().to_vec2() * scale,
            };
        }
        // Until every node has been drawn once its size is a guess, and node sizes change for a
        // frame or two when thumbnails arrive: frame again until the bounds stop changing.
        let settled = self
            .last_bounds
            .is_some_and(|b| (b.min - bb.min).length() < 0.5 && (b.max - bb.max).length() < 0.5);
        self.last_bounds = Some(bb);
        // An empty canvas has nothing to fit: done at once (the first node the user adds must
        // stay where it was put).
        self.framed = snarl.nodes_ids_data().next().is_none() || (all_drawn && settled);
        self.transform = *to_global;
    }
}

fn pin_info(kind: PortKind) -> PinInfo {
    let info = match kind {
        PortKind::Height => PinInfo::circle(),
        PortKind::Mask => PinInfo::square(),
        PortKind::Color => PinInfo::star(),
        PortKind::Scalar => PinInfo::triangle(),
    };
    info.with_fill(kind_color(kind))
        .with_wire_color(kind_color(kind))
}

/// A node's message as its body shows it: at most 140 characters, wrapped (the whole message
/// is in the tooltip and the side panel), so a long refusal cannot stretch the node across the
/// canvas.
fn short_message(msg: &str) -> String {
    const MAX: usize = 140;
    if msg.chars().count() <= MAX {
        return msg.to_owned();
    }
    let cut: String = msg.chars().take(MAX).collect();
    format!("{}…", cut.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Space menu lists nodes by category: every registered node's category is in it.
    #[test]
    fn every_node_type_is_in_a_menu_category() {
        let menu = categories();
        for d in Registry::builtin().defs() {
            assert!(
                menu.contains(&d.spec.category),
                "{} ({}) is in no menu category",
                d.spec.id,
                d.spec.category.name()
            );
        }
    }
}
