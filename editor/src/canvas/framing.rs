//! When the canvas fits the graph into view by itself: on opening (readable, a frame or two
//! while node sizes settle), on *Frame all*, when nodes resize before the user moved the view
//! or edited the document, and to centre on a node or a minimap click.

use egui::{Pos2, Rect, Vec2};
use egui_snarl::NodeId;
use std::collections::HashMap;

/// The canvas's framing state.
pub(super) struct Framing {
    /// Frames left to fit every node into view (node sizes settle over a frame or two).
    pub(super) request: u8,
    /// The nodes' bounds at the last fit (framing stops once they stay the same).
    pub(super) last_bounds: Option<Rect>,
    /// The user zoomed or panned since the graph was opened (then the view is theirs).
    pub(super) user_moved_view: bool,
    /// Node sizes (graph space) the frame before: a node that grows or shrinks (a thumbnail,
    /// a badge or a preview message arriving) before the user moved the view refits it.
    sizes: HashMap<NodeId, Vec2>,
    /// The document's revision when it was opened: once the user edits it, a resized node no
    /// longer moves the view (the change is theirs, the view must stay where they work).
    pub(super) opened_revision: Option<u64>,
    /// A graph point to centre the view on at the next frame (the minimap was clicked).
    pub(super) centre_on: Option<Pos2>,
    /// The next fit shows every node however small (F), not a readable part.
    pub(super) fit_all: bool,
    /// A node to bring into view once it has been drawn (after a document was replaced).
    pub(super) reveal_pending: Option<String>,
}

impl Default for Framing {
    fn default() -> Self {
        Self {
            request: 2,
            last_bounds: None,
            user_moved_view: false,
            sizes: HashMap::new(),
            opened_revision: None,
            centre_on: None,
            fit_all: false,
            reveal_pending: None,
        }
    }
}

impl Framing {
    /// Fits the graph again at the next frame as on opening.
    pub(super) fn refit(&mut self) {
        self.request = 2;
    }

    /// Fits every node into view at the next frame, at whatever zoom that takes.
    pub(super) fn frame_all(&mut self) {
        self.request = 2;
        self.fit_all = true;
    }

    /// Asks for a fit when a node changed its size since the last frame (thumbnails, badges and
    /// preview notes arrive at different times, after the first fit) and the view is still the
    /// one the editor chose and the document is as opened (`unedited`). Moving a node keeps
    /// its size, so a user's drag never refits.
    pub(super) fn refit_on_resized_nodes(&mut self, rects: &HashMap<NodeId, Rect>, unedited: bool) {
        let resized = rects.iter().any(|(id, r)| {
            self.sizes
                .get(id)
                .is_some_and(|s| (*s - r.size()).length() > 0.5)
        });
        if resized && unedited && !self.user_moved_view {
            self.request = self.request.max(1);
        }
        self.sizes = rects.iter().map(|(id, r)| (*id, r.size())).collect();
    }
}
