//! Level of detail for a zoomed-out canvas: when the nodes' own titles shrink below a legible
//! size (a real graph seen whole), each node's name — its label, else its id, which names
//! what it does in this graph (`rain`, `scree`, `albedo`) where its type's name would not — is
//! drawn over its top at a size that stays legible, cut short before the next node to its
//! right, so a whole graph reads at once, as it opens and at *Frame all*.

use super::{ACCENT, BODY_TEXT_PX, BYPASSED};
use egui::text::{LayoutJob, TextFormat, TextWrapping};
use egui::{Color32, FontId, Painter, Rect, Vec2, Visuals};

/// The least height of text the canvas shows: below it, titles are drawn over the nodes.
pub const LEGIBLE_PX: f32 = 11.0;

/// The overview's text height: the legible size, a little more.
const TITLE_PX: f32 = 11.5;

/// Height of a node's title and id rows at zoom 1, in canvas units.
const HEADER_UNITS: f32 = 40.0;

/// The widest a title gets when nothing lies to its right.
const MAX_WIDTH: f32 = 160.0;

/// Whether node titles at canvas zoom `zoom` are too small to read, so the overview's
/// titles are drawn.
#[must_use]
pub fn titles_shown(zoom: f32) -> bool {
    zoom * BODY_TEXT_PX < LEGIBLE_PX
}

/// One node's title in the overview.
pub(super) struct Title {
    /// The node's rectangle on screen.
    pub rect: Rect,
    /// Its id, and its name: the user's label, else its id.
    pub id: String,
    pub name: String,
    pub bypassed: bool,
    pub previewed: bool,
}

/// The width title `t` may take before it is cut short with an ellipsis: up to the next node
/// to its right whose top band it would cross, and the canvas's right edge `view` (never less
/// than its own node's width, never more than [`MAX_WIDTH`]).
fn width(t: &Title, nodes: &[Rect], height: f32, view: Rect) -> f32 {
    let band = (t.rect.top(), t.rect.top() + height);
    let room = nodes
        .iter()
        .filter(|r| r.left() > t.rect.left() + 1.0 && r.top() < band.1 && r.bottom() > band.0)
        .map(|r| r.left() - t.rect.left() - 3.0)
        .fold(MAX_WIDTH, f32::min);
    // Nor past the canvas's right edge, where the node itself fits.
    let edge = (view.right() - t.rect.left()).max(t.rect.width());
    room.max(t.rect.width()).min(edge)
}

fn line(text: &str, px: f32, color: Color32, max_width: f32) -> LayoutJob {
    let mut job = LayoutJob::single_section(
        text.to_owned(),
        TextFormat::simple(FontId::proportional(px), color),
    );
    job.wrap = TextWrapping::truncate_at_width(max_width);
    job
}

/// Paints the titles over their nodes (`nodes`: every node's rectangle on screen); returns the
/// screen rectangles painted (for tests).
pub(super) fn paint(
    painter: &Painter,
    visuals: &Visuals,
    titles: &[Title],
    nodes: &[Rect],
    zoom: f32,
) -> Vec<Rect> {
    let mut painted = Vec::with_capacity(titles.len());
    let pad = Vec2::new(3.0, 1.0);
    let view = painter.clip_rect();
    for t in titles {
        let name_color = if t.bypassed {
            BYPASSED
        } else {
            visuals.strong_text_color()
        };
        let probe = painter.layout_job(line("Ag", TITLE_PX, name_color, f32::INFINITY));
        let w = width(t, nodes, probe.size().y + pad.y * 2.0, view) - pad.x * 2.0;
        let name = painter.layout_job(line(&t.name, TITLE_PX, name_color, w));
        // The box covers the node's own title and id rows (about 40 units tall) across the
        // node's width, so no smaller text shows around it at middling zooms.
        let size = Vec2::new(
            (name.size().x + pad.x * 2.0).max(t.rect.width().min(w + pad.x * 2.0)),
            (name.size().y + pad.y * 2.0).max((HEADER_UNITS * zoom).min(t.rect.height())),
        );
        let at = t.rect.left_top();
        let back = Rect::from_min_size(at, size);
        let fill = visuals.window_fill.gamma_multiply(0.94);
        painter.rect_filled(back, 3.0, fill);
        let outline = if t.previewed {
            egui::Stroke::new(1.5, ACCENT)
        } else if t.bypassed {
            egui::Stroke::new(1.5, BYPASSED)
        } else {
            visuals.widgets.noninteractive.bg_stroke
        };
        painter.rect_stroke(back, 3.0, outline, egui::StrokeKind::Inside);
        painter.galley(at + pad, name, name_color);
        painted.push(back);
    }
    painted
}

/// Paints comment frames' titles legibly above their frames (a frame's own title bar is a
/// few pixels tall when zoomed out): `frames` are (title, frame rectangle on screen).
pub(super) fn paint_frames(painter: &Painter, visuals: &Visuals, frames: &[(String, Rect)]) {
    let pad = Vec2::new(4.0, 1.0);
    for (title, r) in frames {
        let color = visuals.strong_text_color();
        let job = line(title, TITLE_PX, color, r.width().max(60.0) - pad.x * 2.0);
        let galley = painter.layout_job(job);
        let size = galley.size() + pad * 2.0;
        let back = Rect::from_min_size(r.left_top() - Vec2::new(0.0, size.y), size);
        painter.rect_filled(back, 3.0, Color32::from_rgb(58, 78, 112));
        painter.galley(back.min + pad, galley, color);
    }
}
