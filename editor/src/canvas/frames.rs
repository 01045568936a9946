//! Comment frames: titled rectangles drawn behind the nodes (the graph file's `frames`).
//! Dragging a frame's title bar moves it and every node whose centre lies inside it (one undo
//! step); double- or right-clicking the title bar renames it (the title field takes the keys)
//! or deletes it. *Edit › Frame selection* (G) puts a frame around the selected nodes.

use crate::doc::Document;
use egui::{Color32, Pos2, Rect, Ui, Vec2};
use orogen::graph::{Frame, Graph};
use std::collections::BTreeMap;

/// Height of a frame's title bar, in canvas units.
pub const HEADER: f32 = 30.0;
/// Space between a new frame's edge and the nodes it surrounds.
const MARGIN: f32 = 24.0;

/// A frame's rectangle in canvas units.
#[must_use]
pub fn rect(f: &Frame) -> Rect {
    Rect::from_min_size(
        Pos2::new(f.rect[0] as f32, f.rect[1] as f32),
        Vec2::new(f.rect[2] as f32, f.rect[3] as f32),
    )
}

/// A frame's title as drawn: "Comment" until the user names it.
#[must_use]
pub fn title(f: &Frame) -> &str {
    if f.title.is_empty() {
        "Comment"
    } else {
        &f.title
    }
}

/// Draws the frames in canvas units (behind the nodes: snarl's background painter).
pub fn draw(frames: &[Frame], painter: &egui::Painter, style: &egui::Style) {
    let fill = Color32::from_rgba_unmultiplied(90, 120, 170, 28);
    let bar = Color32::from_rgba_unmultiplied(90, 120, 170, 90);
    let edge = egui::Stroke::new(1.5, Color32::from_rgb(110, 140, 190));
    for f in frames {
        let r = rect(f);
        painter.rect_filled(r, 8.0, fill);
        painter.rect_stroke(r, 8.0, edge, egui::StrokeKind::Inside);
        let header = Rect::from_min_size(r.min, Vec2::new(r.width(), HEADER));
        painter.rect_filled(
            header,
            egui::CornerRadius {
                nw: 8,
                ne: 8,
                sw: 0,
                se: 0,
            },
            bar,
        );
        painter.text(
            header.left_center() + Vec2::new(12.0, 0.0),
            egui::Align2::LEFT_CENTER,
            title(f),
            egui::FontId::proportional(17.0),
            style.visuals.strong_text_color(),
        );
    }
}

/// The nodes whose centre lies inside frame `f`, by the drawn `rects` (canvas units).
fn inside(f: &Frame, g: &Graph, sizes: &BTreeMap<String, Vec2>) -> Vec<String> {
    let r = rect(f);
    g.nodes
        .iter()
        .filter(|n| {
            let size = sizes.get(&n.id).copied().unwrap_or(Vec2::new(180.0, 120.0));
            let c = Pos2::new(n.position[0] as f32, n.position[1] as f32) + size / 2.0;
            r.contains(c)
        })
        .map(|n| n.id.clone())
        .collect()
}

/// Moves frame `i` and the nodes inside it by `d` canvas units.
pub fn move_frame(g: &mut Graph, i: usize, d: Vec2, sizes: &BTreeMap<String, Vec2>) {
    let Some(f) = g.frames.get(i).cloned() else {
        return;
    };
    let ids = inside(&f, g, sizes);
    for n in g.nodes.iter_mut().filter(|n| ids.contains(&n.id)) {
        n.position[0] += f64::from(d.x);
        n.position[1] += f64::from(d.y);
    }
    if let Some(f) = g.frames.get_mut(i) {
        f.rect[0] += f64::from(d.x);
        f.rect[1] += f64::from(d.y);
    }
}

/// A frame around the nodes `ids` (their drawn `sizes`), titled "Comment"; `None` when none
/// of them is on the canvas.
#[must_use]
pub fn around(g: &Graph, ids: &[String], sizes: &BTreeMap<String, Vec2>) -> Option<Frame> {
    let bb = g
        .nodes
        .iter()
        .filter(|n| ids.contains(&n.id))
        .map(|n| {
            let size = sizes.get(&n.id).copied().unwrap_or(Vec2::new(180.0, 120.0));
            Rect::from_min_size(Pos2::new(n.position[0] as f32, n.position[1] as f32), size)
        })
        .reduce(Rect::union)?;
    let r = Rect::from_min_max(
        bb.min - Vec2::new(MARGIN, MARGIN + HEADER),
        bb.max + Vec2::splat(MARGIN),
    );
    Some(Frame {
        title: "Comment".to_owned(),
        rect: [
            f64::from(r.min.x).round(),
            f64::from(r.min.y).round(),
            f64::from(r.width()).round(),
            f64::from(r.height()).round(),
        ],
    })
}

/// The frames' title bars on screen: drag to move a frame with its nodes, right-click to
/// rename or delete it. `to_screen` maps canvas units to the screen; `view` is the canvas.
pub fn interact(
    ui: &Ui,
    doc: &mut Document,
    to_screen: egui::emath::TSTransform,
    view: Rect,
    sizes: &BTreeMap<String, Vec2>,
    id: egui::Id,
) {
    let frames = doc.graph().frames.clone();
    for (i, f) in frames.iter().enumerate() {
        let r = rect(f);
        let bar = to_screen
            .mul_rect(Rect::from_min_size(r.min, Vec2::new(r.width(), HEADER)))
            .intersect(view);
        if !bar.is_positive() {
            continue;
        }
        let bar_id = id.with(("frame", i));
        let resp = ui.interact(bar, bar_id, egui::Sense::click_and_drag());
        if resp.drag_started() {
            ui.data_mut(|m| m.remove::<Vec2>(bar_id));
        }
        if resp.dragged() {
            // The frame follows the pointer from where it was pressed: the whole way since the
            // press, less what is already applied. Summing each frame's drag delta lost the
            // movement made before egui decided it was a drag (a loaded machine, one slow
            // frame: the frame ended 7% short of the pointer).
            let origin = ui.input(|inp| inp.pointer.press_origin());
            let now = resp.interact_pointer_pos();
            if let (Some(origin), Some(now)) = (origin, now) {
                let total = (now - origin) / to_screen.scaling;
                let moved = ui
                    .data(|m| m.get_temp::<Vec2>(bar_id))
                    .unwrap_or(Vec2::ZERO);
                let d = total - moved;
                if d != Vec2::ZERO {
                    doc.apply(Some(&format!("frame {i}")), |g| move_frame(g, i, d, sizes));
                    ui.data_mut(|m| m.insert_temp(bar_id, total));
                }
            }
        }
        if resp.drag_stopped() {
            ui.data_mut(|m| m.remove::<Vec2>(bar_id));
        }
        let resp = resp.on_hover_cursor(egui::CursorIcon::Grab);
        // Double-click or right-click: the menu opens with its title field focused, and stays
        // open while the field is clicked and typed into (the default closes a menu on any
        // click, and the keys then reached the canvas: Space opened the add-node search).
        let opened = resp.secondary_clicked() || resp.double_clicked();
        let mut menu = egui::Popup::context_menu(&resp)
            .close_behavior(egui::PopupCloseBehavior::CloseOnClickOutside);
        if resp.double_clicked() {
            menu = menu.open_memory(egui::SetOpenCommand::Bool(true));
        }
        menu.show(|ui| {
            let mut title = f.title.clone();
            ui.horizontal(|ui| {
                ui.label("Title");
                let field = ui.text_edit_singleline(&mut title);
                if opened {
                    field.request_focus();
                }
                if field.changed() {
                    let t: String = title.chars().take(200).collect();
                    doc.apply(Some(&format!("frame title {i}")), |g| {
                        if let Some(f) = g.frames.get_mut(i) {
                            f.title = t;
                        }
                    });
                }
                if field.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter)) {
                    ui.close();
                }
            });
            if ui.button("Delete frame (keeps its nodes)").clicked() {
                doc.apply(None, |g| {
                    if i < g.frames.len() {
                        g.frames.remove(i);
                    }
                });
                ui.close();
            }
        });
    }
}
