//! The edited document: the engine's [`Graph`], its file, and undo/redo over graph snapshots.
//!
//! Every change to the graph — wiring, parameters, node positions, graph settings — goes through
//! [`Document::edit`], which records the previous graph for undo. Graphs are small (the fields
//! live in the evaluator's cache, not here), so a snapshot per step is cheap and undo can never
//! drift from what the engine sees.

use orogen::document::graph_file;
use orogen::graph::NodeInstance;
use orogen::Graph;
use std::path::{Path, PathBuf};

/// Undo history depth.
const MAX_UNDO: usize = 500;

/// The graph being edited.
pub struct Document {
    graph: Graph,
    path: Option<PathBuf>,
    undo: Vec<Graph>,
    redo: Vec<Graph>,
    /// Bumped on every change (edits, undo, redo, load).
    revision: u64,
    /// The file text of the graph as last loaded or saved (`None`: never saved, or a
    /// restored recovery copy): the document is dirty while its text differs.
    saved: Option<String>,
    /// `(revision, dirty)` of the last comparison with `saved`.
    dirty_at: std::cell::Cell<(u64, bool)>,
    /// Key of the gesture the last edit belonged to (e.g. one slider drag); further edits with
    /// the same key while it stays open merge into one undo step.
    gesture: Option<String>,
    gesture_alive: bool,
    /// The last failed edit's message.
    failed: Option<String>,
}

impl Default for Document {
    fn default() -> Self {
        Self::new(new_graph())
    }
}

/// An empty graph with sensible world settings (10 km, 0–1500 m, 1024²).
#[must_use]
pub fn new_graph() -> Graph {
    Graph::new(
        "untitled",
        orogen::World {
            size_m: 10_000.0,
            height_min_m: 0.0,
            height_max_m: 1500.0,
        },
        1024,
        1,
    )
}

impl Document {
    /// A document holding `graph` that has never been saved.
    #[must_use]
    pub fn new(graph: Graph) -> Self {
        Self {
            saved: Some(graph_file::to_string(&graph)),
            graph,
            path: None,
            undo: Vec::new(),
            redo: Vec::new(),
            revision: 1,
            dirty_at: std::cell::Cell::new((0, false)),
            gesture: None,
            gesture_alive: false,
            failed: None,
        }
    }

    /// Loads a graph file.
    pub fn open(path: &Path) -> Result<Self, String> {
        let graph = graph_file::load_file(path).map_err(|d| d.to_string())?;
        // Absolute, so relative parameter paths and the build folder do not depend on where
        // the editor was started.
        let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        let path = path.as_path();
        let mut doc = Self::new(graph);
        doc.path = Some(path.to_path_buf());
        Ok(doc)
    }

    #[must_use]
    pub fn graph(&self) -> &Graph {
        &self.graph
    }

    #[must_use]
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The folder relative parameter paths resolve against.
    #[must_use]
    pub fn base_dir(&self) -> Option<&Path> {
        self.path.as_deref().and_then(Path::parent)
    }

    #[must_use]
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// True when the graph differs from the file it was loaded from or saved to, byte for
    /// byte: setting a value back to what was saved clears it.
    #[must_use]
    pub fn dirty(&self) -> bool {
        let (rev, dirty) = self.dirty_at.get();
        if rev == self.revision {
            return dirty;
        }
        let dirty = self
            .saved
            .as_ref()
            .is_none_or(|s| *s != graph_file::to_string(&self.graph));
        self.dirty_at.set((self.revision, dirty));
        dirty
    }

    /// A restored recovery copy: belongs to `path` (if any) and counts as saved only where it
    /// equals that file as it is on disk.
    pub fn mark_restored(&mut self, path: Option<&Path>) {
        self.path = path.map(Path::to_path_buf);
        self.saved = path.and_then(|p| {
            let g = graph_file::load_file(p).ok()?;
            Some(graph_file::to_string(&g))
        });
        self.dirty_at.set((0, false));
    }

    /// Writes the graph (atomically, in the engine's format) and remembers the path.
    pub fn save_as(&mut self, path: &Path) -> Result<(), String> {
        graph_file::save_file(path, &self.graph)
            .map_err(|e| format!("cannot save {}: {e}", path.display()))?;
        self.path = Some(path.to_path_buf());
        self.saved = Some(graph_file::to_string(&self.graph));
        self.dirty_at.set((0, false));
        Ok(())
    }

    /// Applies an edit that cannot fail as one undo step (see [`Document::edit`]).
    pub fn apply<R>(&mut self, gesture: Option<&str>, f: impl FnOnce(&mut Graph) -> R) -> R {
        match self.edit::<R, std::convert::Infallible>(gesture, |g| Ok(f(g))) {
            Ok(r) => r,
            Err(never) => match never {},
        }
    }

    /// The message of the last edit that failed, if not taken yet (the app shows it).
    pub fn take_error(&mut self) -> Option<String> {
        self.failed.take()
    }

    /// Applies `f` to the graph as one undo step. With a `gesture` key, consecutive edits with
    /// the same key (a slider drag, typing in a field) merge into one step while the gesture is
    /// kept alive with [`Document::keep_gesture`]. Returns what `f` returns; when `f` fails
    /// the graph is restored, nothing is recorded, and the error is kept for
    /// [`Document::take_error`].
    pub fn edit<R, E: std::fmt::Display>(
        &mut self,
        gesture: Option<&str>,
        f: impl FnOnce(&mut Graph) -> Result<R, E>,
    ) -> Result<R, E> {
        let before = self.graph.clone();
        match f(&mut self.graph) {
            Ok(r) => {
                let merge = gesture.is_some() && self.gesture.as_deref() == gesture;
                if !merge {
                    self.undo.push(before);
                    if self.undo.len() > MAX_UNDO {
                        self.undo.remove(0);
                    }
                }
                self.gesture = gesture.map(str::to_owned);
                self.gesture_alive = gesture.is_some();
                self.redo.clear();
                self.revision += 1;
                Ok(r)
            }
            Err(e) => {
                self.graph = before;
                self.failed = Some(e.to_string());
                Err(e)
            }
        }
    }

    /// Keeps the current gesture open for this frame (call while its widget is dragged or focused).
    pub fn keep_gesture(&mut self, key: &str) {
        if self.gesture.as_deref() == Some(key) {
            self.gesture_alive = true;
        }
    }

    /// Called once per frame after the UI: closes the gesture unless something kept it alive.
    pub fn end_frame(&mut self) {
        if !self.gesture_alive {
            self.gesture = None;
        }
        self.gesture_alive = false;
    }

    #[must_use]
    pub fn can_undo(&self) -> bool {
        !self.undo.is_empty()
    }

    #[must_use]
    pub fn can_redo(&self) -> bool {
        !self.redo.is_empty()
    }

    pub fn undo(&mut self) -> bool {
        let Some(g) = self.undo.pop() else {
            return false;
        };
        self.redo.push(std::mem::replace(&mut self.graph, g));
        self.gesture = None;
        self.revision += 1;
        true
    }

    pub fn redo(&mut self) -> bool {
        let Some(g) = self.redo.pop() else {
            return false;
        };
        self.undo.push(std::mem::replace(&mut self.graph, g));
        self.gesture = None;
        self.revision += 1;
        true
    }

    /// A node id not used yet, derived from `base` (`perlin`, `perlin_2`, …).
    #[must_use]
    pub fn fresh_id(&self, base: &str) -> String {
        fresh_id(&self.graph, base)
    }
}

/// A node id not used in `graph`, derived from `base`.
#[must_use]
pub fn fresh_id(graph: &Graph, base: &str) -> String {
    unique_name(base, |id| graph.node(id).is_some())
}

pub use orogen::graph::unique_name;

/// Why a wire from `from` (node, output) into `to` (node, input) is refused, if it is.
#[must_use]
pub fn wire_refusal(graph: &Graph, from: (&str, usize), to: (&str, usize)) -> Option<String> {
    let (Some(src), Some(dst)) = (graph.node(from.0), graph.node(to.0)) else {
        return Some("unknown node".to_owned());
    };
    let (Some(out), Some(inp)) = (
        src.def.spec.outputs.get(from.1),
        dst.def.spec.inputs.get(to.1),
    ) else {
        return Some("unknown port".to_owned());
    };
    if orogen::node::Coercion::between(out.kind, inp.kind).is_none() {
        return Some(format!(
            "cannot wire {} output \"{}.{}\" into {} input \"{}.{}\": {}",
            out.kind.name(),
            src.id,
            out.name,
            inp.kind.name(),
            dst.id,
            inp.name,
            orogen::node::Coercion::refusal_hint(out.kind, inp.kind)
        ));
    }
    if from.0 == to.0 || reaches(graph, to.0, from.0) {
        return Some(format!(
            "wiring \"{}.{}\" into \"{}.{}\" would make a cycle",
            src.id, out.name, dst.id, inp.name
        ));
    }
    None
}

/// True when `to` is downstream of (or equal to) `from`.
fn reaches(graph: &Graph, from: &str, to: &str) -> bool {
    let mut stack = vec![from.to_owned()];
    let mut seen = std::collections::BTreeSet::new();
    while let Some(id) = stack.pop() {
        if id == to {
            return true;
        }
        if !seen.insert(id.clone()) {
            continue;
        }
        for n in &graph.nodes {
            if n.inputs.iter().flatten().any(|r| r.node == id) {
                stack.push(n.id.clone());
            }
        }
    }
    false
}

/// Bypasses (or turns back on) the nodes `ids` that have inputs: a bypassed node hands its
/// input on unchanged (a node without inputs has nothing to hand on and is left alone).
pub fn set_bypass(g: &mut Graph, ids: &[String], on: bool) {
    for n in g.nodes.iter_mut().filter(|n| ids.contains(&n.id)) {
        if !n.def.spec.inputs.is_empty() {
            n.bypass = on;
        }
    }
}

/// Removes nodes and every wire, output and no-data mask that refers to them.
pub fn remove_nodes(graph: &mut Graph, ids: &[String]) {
    graph.nodes.retain(|n| !ids.contains(&n.id));
    for n in &mut graph.nodes {
        for i in &mut n.inputs {
            if i.as_ref().is_some_and(|r| ids.contains(&r.node)) {
                *i = None;
            }
        }
    }
    graph.outputs.retain(|_, r| !ids.contains(&r.node));
    if graph.nodata.as_ref().is_some_and(|r| ids.contains(&r.node)) {
        graph.nodata = None;
    }
}

/// Copies of `ids` for the clipboard (wires to nodes outside the selection are dropped).
#[must_use]
pub fn copy_nodes(graph: &Graph, ids: &[String]) -> Vec<NodeInstance> {
    graph
        .nodes
        .iter()
        .filter(|n| ids.contains(&n.id))
        .map(|n| {
            let mut n = n.clone();
            for i in &mut n.inputs {
                if i.as_ref().is_some_and(|r| !ids.contains(&r.node)) {
                    *i = None;
                }
            }
            n
        })
        .collect()
}

/// Inserts clipboard nodes under fresh ids, shifted by `offset`, keeping their inner wires.
/// Returns the new ids.
pub fn paste_nodes(graph: &mut Graph, nodes: &[NodeInstance], offset: [f64; 2]) -> Vec<String> {
    let mut renamed = std::collections::BTreeMap::new();
    for n in nodes {
        let id = fresh_id(graph, &n.id);
        // Reserve the id before the next one is chosen.
        let mut copy = n.clone();
        copy.id.clone_from(&id);
        copy.position = [n.position[0] + offset[0], n.position[1] + offset[1]];
        graph.nodes.push(copy);
        renamed.insert(n.id.clone(), id);
    }
    let new_ids: Vec<String> = renamed.values().cloned().collect();
    for n in graph.nodes.iter_mut().filter(|n| new_ids.contains(&n.id)) {
        for r in n.inputs.iter_mut().flatten() {
            if let Some(id) = renamed.get(&r.node) {
                r.node.clone_from(id);
            }
        }
    }
    new_ids
}

#[cfg(test)]
mod tests {
    use super::*;
    use orogen::node::ParamValue;
    use orogen::node::Registry;

    fn add(doc: &mut Document, ty: &str) -> String {
        let def = Registry::builtin().get(ty).expect("registered");
        let id = doc.fresh_id(ty);
        let id2 = id.clone();
        doc.apply(None, move |g| {
            g.nodes.push(NodeInstance::new(id2, def));
        });
        id
    }

    #[test]
    fn a_drag_is_one_undo_step_and_undo_redo_round_trip() {
        let mut doc = Document::default();
        let id = add(&mut doc, "perlin_fbm");
        let key = format!("{id}.octaves");
        for v in 2..8 {
            doc.edit::<_, String>(Some(&key), |g| {
                g.set_param(&id, "octaves", ParamValue::Int(v))
            })
            .expect("set");
            doc.keep_gesture(&key);
            doc.end_frame();
        }
        doc.end_frame();
        assert_eq!(
            doc.graph().node(&id).and_then(|n| n.param("octaves")),
            Some(&ParamValue::Int(7))
        );
        assert!(doc.undo());
        let default = doc
            .graph()
            .node(&id)
            .and_then(|n| n.param("octaves"))
            .cloned();
        assert_ne!(
            default,
            Some(ParamValue::Int(7)),
            "one undo reverts the whole drag"
        );
        assert!(doc.undo());
        assert!(doc.graph().nodes.is_empty());
        assert!(doc.redo() && doc.redo());
        assert_eq!(
            doc.graph().node(&id).and_then(|n| n.param("octaves")),
            Some(&ParamValue::Int(7))
        );
    }

    #[test]
    fn failed_edits_change_nothing() {
        let mut doc = Document::default();
        let rev = doc.revision();
        let r = doc.edit(None, |g| g.set_param("nope", "x", ParamValue::Int(1)));
        assert!(r.is_err());
        assert_eq!(doc.revision(), rev);
        assert!(!doc.can_undo());
    }

    #[test]
    fn wires_are_type_checked_and_acyclic() {
        let mut doc = Document::default();
        let a = add(&mut doc, "perlin_fbm");
        let b = add(&mut doc, "blur");
        assert_eq!(wire_refusal(doc.graph(), (&a, 0), (&b, 0)), None);
        doc.apply(None, |g| {
            let n = g.node_mut(&b).expect("b");
            n.inputs[0] = Some(orogen::graph::PortRef::new(a.clone(), "out"));
        });
        let cycle = wire_refusal(doc.graph(), (&b, 0), (&b, 0)).expect("refused");
        assert!(cycle.contains("cycle"), "{cycle}");
    }

    #[test]
    fn paste_keeps_inner_wires_under_new_ids() {
        let mut doc = Document::default();
        let a = add(&mut doc, "perlin_fbm");
        let b = add(&mut doc, "blur");
        doc.apply(None, |g| {
            g.node_mut(&b).expect("b").inputs[0] =
                Some(orogen::graph::PortRef::new(a.clone(), "out"));
        });
        let clip = copy_nodes(doc.graph(), &[a.clone(), b.clone()]);
        let ids = doc.apply(None, |g| paste_nodes(g, &clip, [40.0, 40.0]));
        assert_eq!(ids.len(), 2);
        let g = doc.graph();
        let new_b = ids
            .iter()
            .find(|i| i.starts_with("blur"))
            .expect("blur copy");
        let src = g.node(new_b).expect("node").inputs[0]
            .as_ref()
            .expect("wired");
        assert!(ids.contains(&src.node) && src.node != a);
        assert!(g.validate().is_empty(), "{:?}", g.validate());
    }
}
