//! How snarl draws and edits each node: titles, ports, previews, menus, wires refused with
//! a reason; every change applied to the document.

use super::kind_color;
use super::picker::node_picker;
use super::sync::add_node;
use super::Badge;
use super::Dragging;
use super::Looks;
use super::ACCENT;
use super::BYPASSED;
use super::MAX_ZOOM;
use super::MIN_ZOOM;
use crate::doc;
use crate::doc::Document;
use egui::emath::TSTransform;
use egui::Color32;
use egui::Pos2;
use egui::Rect;
use egui::Ui;
use egui::Vec2;
use egui_snarl::ui::PinInfo;
use egui_snarl::ui::SnarlViewer;
use egui_snarl::InPin;
use egui_snarl::NodeId;
use egui_snarl::OutPin;
use egui_snarl::Snarl;
use orogen::graph::NodeInstance;
use orogen::graph::PortRef;
use orogen::node::PortKind;
use std::collections::BTreeMap;
use std::collections::HashMap;

pub(super) struct Viewer<'a> {
    pub(super) doc: &'a mut Document,
    pub(super) looks: &'a Looks<'a>,
    pub(super) dragging: Option<Dragging>,
    pub(super) search: &'a mut String,
    pub(super) search_shown: bool,
    pub(super) refusal: Option<String>,
    /// The view to fit all nodes into, when asked.
    pub(super) frame: Option<Rect>,
    pub(super) framed: bool,
    pub(super) rects: &'a mut HashMap<NodeId, Rect>,
    pub(super) rows: &'a mut BTreeMap<(NodeId, bool, usize), f32>,
    pub(super) transform: TSTransform,
    /// A node added from a menu in this frame.
    pub(super) added: Option<String>,
    /// The nodes' bounds when the view was last fitted to them.
    pub(super) last_bounds: Option<Rect>,
    /// Zoom by this factor about this screen point in this frame (the mouse wheel).
    pub(super) zoom: Option<(f32, Pos2)>,
    /// The transform the canvas had at the end of the last frame.
    pub(super) last_transform: TSTransform,
    /// Put this graph point at the centre of this canvas rectangle (a minimap click).
    pub(super) centre_on: Option<(Pos2, Rect)>,
    /// The least zoom a fit may use: readable on opening, anything for Frame all (F).
    pub(super) least_zoom: f32,
    /// Set when the user zoomed or panned in this frame.
    pub(super) moved: bool,
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

impl SnarlViewer<String> for Viewer<'_> {
    /// The node's label if the user named it, else its type's.
    fn title(&mut self, node: &String) -> String {
        self.node(node).map_or_else(
            || node.clone(),
            |n| {
                if n.label.is_empty() {
                    n.def.spec.label.to_owned()
                } else {
                    n.label.clone()
                }
            },
        )
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
        let bypassed = self.node(&id).is_some_and(|n| n.bypass);
        ui.vertical(|ui| {
            ui.horizontal(|ui| {
                ui.strong(label);
                if bypassed {
                    ui.colored_label(BYPASSED, egui::RichText::new("⏸ bypassed").strong())
                        .on_hover_text(
                            "Hands its input on unchanged (B or its menu turns it back on)",
                        );
                }
                match self.looks.badges.get(&id) {
                    Some(Badge::Error(msg)) => {
                        ui.colored_label(Color32::from_rgb(235, 70, 60), "⚠ error")
                            .on_hover_text(msg);
                    }
                    Some(Badge::Incomplete(msg)) => {
                        ui.weak("○ needs input").on_hover_text(msg);
                    }
                    // Running shows in the body (a progress bar), which keeps its size.
                    Some(Badge::Running(_)) | None => {}
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
        let frame = if self.node(&snarl[node]).is_some_and(|n| n.bypass) {
            // Bypassed: greyed out, as muted nodes are in other node editors, and outlined in
            // amber so it reads at any zoom (dimming alone looked like an idle node).
            default
                .multiply_with_opacity(0.45)
                .stroke(egui::Stroke::new(2.0, BYPASSED))
        } else {
            default
        };
        if self.looks.previewed == Some(snarl[node].as_str()) {
            frame.stroke(egui::Stroke::new(2.5, ACCENT))
        } else {
            frame
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
        // A box of fixed size, whatever the node is doing: its thumbnail, with a progress bar
        // over its foot while it runs, or its message in place of the picture. A node never
        // grows over its neighbours when it starts running, fails or finishes.
        let side = crate::preview::THUMB as f32 * 1.25;
        let (rect, _) = ui.allocate_exact_size(Vec2::new(BODY_WIDTH, side), egui::Sense::hover());
        let thumb = Rect::from_center_size(rect.center(), Vec2::splat(side));
        let badge = self.looks.badges.get(&id);
        let message = match badge {
            Some(Badge::Error(msg)) => Some((msg, Color32::from_rgb(255, 120, 110))),
            Some(Badge::Incomplete(msg)) => Some((msg, ui.visuals().weak_text_color())),
            _ => None,
        };
        if let Some((msg, colour)) = message {
            let mut job = egui::text::LayoutJob::single_section(
                short_message(msg),
                egui::TextFormat::simple(egui::TextStyle::Small.resolve(ui.style()), colour),
            );
            job.wrap = egui::text::TextWrapping {
                max_width: rect.width(),
                max_rows: 6,
                break_anywhere: false,
                overflow_character: Some('…'),
            };
            ui.put(rect, egui::Label::new(job)).on_hover_text(msg);
        } else if let Some(tex) = self.looks.thumbnails.and_then(|t| t.get(&id)) {
            ui.put(
                thumb,
                egui::Image::new((tex, Vec2::splat(side))).corner_radius(3.0),
            );
        }
        if let Some(Badge::Running(f)) = badge {
            let bar = Rect::from_min_max(rect.left_bottom() - Vec2::new(0.0, 18.0), rect.max);
            ui.put(bar, egui::ProgressBar::new(*f).show_percentage());
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

    fn draw_background(
        &mut self,
        background: Option<&egui_snarl::ui::BackgroundPattern>,
        viewport: &Rect,
        snarl_style: &egui_snarl::ui::SnarlStyle,
        style: &egui::Style,
        painter: &egui::Painter,
        _snarl: &Snarl<String>,
    ) {
        if let Some(b) = background {
            b.draw(viewport, snarl_style, style, painter);
        }
        super::frames::draw(&self.doc.graph().frames, painter, style);
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
        let (has_inputs, bypassed) = (!n.def.spec.inputs.is_empty(), n.bypass);
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
        if has_inputs {
            let on = bypassed;
            let text = if on {
                "Turn on (un-bypass)   B"
            } else {
                "Bypass   B"
            };
            if ui
                .button(text)
                .on_hover_text("A bypassed node hands its input on unchanged; builds honour it")
                .clicked()
            {
                self.doc
                    .apply(None, |g| doc::set_bypass(g, std::slice::from_ref(&id), !on));
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
        // The minimap asked to show this graph point in the middle of the canvas.
        if let Some((p, view)) = self.centre_on {
            self.moved = true;
            to_global.translation = view.center().to_vec2() - p.to_vec2() * to_global.scaling;
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
            *to_global = fit(bb.expand(40.0), view, self.least_zoom);
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

/// The view of graph bounds `bb` in canvas `view` when a graph opens: all of it if it fits at
/// a zoom where the overview keeps names legible ([`OPEN_ZOOM`](super::OPEN_ZOOM)), else at that zoom, showing where the
/// graph starts (its left, and its top when too tall); the minimap shows the rest. `least` is
/// that zoom (far less for View › Frame all: all of it, however small).
pub(super) fn fit(bb: Rect, view: Rect, least: f32) -> TSTransform {
    let scale = (view.width() / bb.width())
        .min(view.height() / bb.height())
        .clamp(least, 1.5);
    let axis = |lo: f32, hi: f32, v_lo: f32, v_hi: f32| {
        if (hi - lo) * scale <= v_hi - v_lo {
            f32::midpoint(v_lo, v_hi) - f32::midpoint(lo, hi) * scale
        } else {
            v_lo - lo * scale
        }
    };
    TSTransform {
        scaling: scale,
        translation: Vec2::new(
            axis(bb.min.x, bb.max.x, view.min.x, view.max.x),
            axis(bb.min.y, bb.max.y, view.min.y, view.max.y),
        ),
    }
}

/// Width of a node's body (its thumbnail, progress bar or message).
const BODY_WIDTH: f32 = 120.0;

pub(super) fn pin_info(kind: PortKind) -> PinInfo {
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
pub(super) fn short_message(msg: &str) -> String {
    const MAX: usize = 140;
    if msg.chars().count() <= MAX {
        return msg.to_owned();
    }
    let cut: String = msg.chars().take(MAX).collect();
    format!("{}…", cut.trim_end())
}
