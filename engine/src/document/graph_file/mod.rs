//! Graph files (JSON, format v2): loading with complete diagnostics, migrations from v1, graph
//! parameters, subgraph references, and deterministic saving.
//! The format is documented in `docs/graph-format.md`.
//!
//! Loading works on a loosely typed `serde_json::Value` so that every problem in a file can
//! be reported at once (a derived deserializer stops at the first), and so that migrations
//! from older versions run before any runtime type is built.

mod params;
mod parse;
mod save;

use crate::graph::{Diagnostic, Diagnostics, Graph};
use crate::io::trust::{self, Project};
use crate::node::{nearest, quoted_list};
pub use params::{param_to_json, param_value};
use parse::from_value;
pub use parse::subgraph::content_hash;
pub use save::{save_file, to_string, to_string_embedded, to_value, to_value_with};
use serde_json::{Map, Value};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;

/// The `format` tag of graph files.
pub const FORMAT_TAG: &str = "orogen-graph";
/// The version this build writes, and the newest it reads.
pub const CURRENT_VERSION: u64 = 2;
/// The oldest version this build reads (through migrations).
pub const OLDEST_VERSION: u64 = 1;

/// Largest accepted resolution (samples per side) in a file.
pub use crate::field::MAX_RESOLUTION;

const TOP_KEYS: &[&str] = &[
    "format",
    "version",
    "name",
    "doc",
    "parameters",
    "seed",
    "world",
    "resolution",
    "nodes",
    "outputs",
    "nodata",
    "frames",
];
const WORLD_KEYS: &[&str] = &["size_m", "height_min_m", "height_max_m", "georef"];
const GEOREF_KEYS: &[&str] = &["crs", "geographic", "west", "south", "east", "north"];
const NODE_KEYS: &[&str] = &[
    "id", "type", "params", "inputs", "position", "bind", "graph", "hash", "embedded", "bypass",
    "label",
];
const PARAM_KEYS: &[&str] = &[
    "type", "default", "min", "max", "soft_min", "soft_max", "unit", "doc", "options",
];
/// The `type`s of graph parameters, as files name them.
pub const PARAM_TYPES: &[&str] = &["float", "int", "bool", "choice", "seed", "text"];

/// What a load applies besides the file: `--set` and `--param` overrides, and the folders
/// outside the project the user allowed references into (`--allow-outside`).
#[derive(Clone, Copy, Debug, Default)]
pub struct LoadOptions<'a> {
    /// `(node, param, value)`: a node parameter's value (`--set node.param=value`).
    pub set: &'a [(String, String, Value)],
    /// `(name, value)`: a graph parameter's value (`--param name=value`).
    pub params: &'a [(String, Value)],
    /// Folders outside the project that subgraph references may reach (see [`Project`]).
    pub allow_outside: &'a [PathBuf],
}

/// A subgraph file loaded once in this load: its graph and content hash, or why it failed.
/// A file used many times (at any depth) is read, parsed and hashed once.
type Loaded = Result<(Graph, String), String>;

/// Where a file being loaded sits: its folder (subgraph paths are relative to it) and the
/// files including it, outermost first (to refuse include cycles and bound the depth).
#[derive(Clone, Debug, Default)]
struct Ctx {
    base: Option<PathBuf>,
    chain: Vec<PathBuf>,
    /// The outermost file's folder: messages name files relative to it.
    root: Option<PathBuf>,
    /// Where references may point; `None` when there is no file (nothing can be read).
    project: Option<Arc<Project>>,
    /// Subgraph files already loaded in this load, by canonical path.
    loaded: Rc<RefCell<BTreeMap<PathBuf, Loaded>>>,
    /// Subgraph levels above this graph, files and embedded copies alike (a build copy embeds
    /// what were files, so both count against [`trust::MAX_SUBGRAPH_DEPTH`]).
    depth: usize,
}

impl Ctx {
    /// `path` relative to the outermost file's folder where it is inside it.
    fn show(&self, path: &Path) -> String {
        let Some(root) = &self.root else {
            return path.display().to_string();
        };
        // A file named without a folder sits in the current one.
        let root = if root.as_os_str().is_empty() {
            Path::new(".")
        } else {
            root.as_path()
        };
        let canonical = std::fs::canonicalize(root).ok();
        [Some(root.to_path_buf()), canonical]
            .into_iter()
            .flatten()
            .find_map(|r| path.strip_prefix(r).ok().map(|p| p.display().to_string()))
            .unwrap_or_else(|| path.display().to_string())
    }
}

/// Where a graph comes from: a file (its subgraph paths are relative to its folder, which
/// bounds the project), or JSON text with an optional folder standing for the file's.
#[derive(Clone, Copy, Debug)]
pub enum Source<'a> {
    /// A graph file on disk.
    File(&'a Path),
    /// Graph JSON; `label` names it in diagnostics. Without `base` subgraphs must be embedded
    /// (there is no folder to find their files in).
    Text {
        text: &'a str,
        label: &'a str,
        base: Option<&'a Path>,
    },
}

/// Loads a graph: reads it, migrates it, applies the options' overrides and validates it.
/// The error lists every problem found; a graph whose only problems are warnings (incomplete
/// nodes) loads.
pub fn load(source: Source, opts: &LoadOptions) -> Result<Graph, Diagnostics> {
    match source {
        Source::File(path) => {
            let label = path.display().to_string();
            let text =
                trust::read_text(path, trust::MAX_GRAPH_BYTES, None).map_err(|e| Diagnostics {
                    file: label.clone(),
                    items: vec![Diagnostic::at(
                        None,
                        String::new(),
                        format!("cannot read file: {e}"),
                    )],
                })?;
            let base = path.parent().map_or_else(PathBuf::new, Path::to_path_buf);
            let ctx = Ctx {
                root: Some(base.clone()),
                project: Some(Arc::new(Project::of_folder(&base, opts.allow_outside))),
                base: Some(base),
                chain: vec![std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())],
                loaded: Rc::default(),
                depth: 0,
            };
            load_text(&text, &label, opts, &ctx)
        }
        Source::Text { text, label, base } => {
            let ctx = Ctx {
                base: base.map(Path::to_path_buf),
                chain: Vec::new(),
                root: base.map(Path::to_path_buf),
                project: base.map(|b| Arc::new(Project::of_folder(b, opts.allow_outside))),
                loaded: Rc::default(),
                depth: 0,
            };
            load_text(text, label, opts, &ctx)
        }
    }
}

/// [`load`] of a file with no options.
pub fn load_file(path: &Path) -> Result<Graph, Diagnostics> {
    load(Source::File(path), &LoadOptions::default())
}

/// [`load`] of JSON text with no options and no folder (subgraphs must be embedded).
pub fn load_str(text: &str, label: &str) -> Result<Graph, Diagnostics> {
    load(
        Source::Text {
            text,
            label,
            base: None,
        },
        &LoadOptions::default(),
    )
}

fn load_text(text: &str, label: &str, opts: &LoadOptions, ctx: &Ctx) -> Result<Graph, Diagnostics> {
    let fail = |items: Vec<Diagnostic>| Diagnostics {
        file: label.to_owned(),
        items,
    };
    // A UTF-8 byte-order mark (some Windows editors write one) is not part of the document.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    // A graph is an object: an array is refused before it is parsed (64 MiB of `[0,0,…`
    // would otherwise be built into a value first).
    if text.trim_start().starts_with('[') {
        return Err(fail(vec![Diagnostic::at(
            None,
            String::new(),
            "expected a JSON object at the top level, found an array".to_owned(),
        )]));
    }
    let (mut value, duplicates) = parse_json(text).map_err(|e| {
        fail(vec![Diagnostic::at(
            None,
            String::new(),
            format!(
                "malformed JSON at line {}, column {}: {}",
                e.line(),
                e.column(),
                strip_position(&e.to_string())
            ),
        )])
    })?;
    value = migrate(value).map_err(|d| fail(vec![d]))?;
    let mut diags = apply_overrides(&mut value, opts.set);
    // serde_json keeps the last of two equal keys; a file that says `"seed": 7, "seed": 8`
    // is ambiguous, and saying so beats guessing.
    diags.extend(duplicates.into_iter().map(|(path, key)| {
        Diagnostic::at(
            None,
            if path.is_empty() {
                key.clone()
            } else {
                format!("{path}.{key}")
            },
            format!("duplicate key \"{key}\": each key may appear once in an object"),
        )
    }));
    let graph = from_value(&value, &mut diags, ctx, opts.params);
    // Warnings (an unwired scratch node, say) leave the graph usable: it loads, and the
    // warnings are there again in `Graph::validate` for whoever reports them.
    if !diags.iter().any(Diagnostic::is_error) {
        if let Some(g) = graph {
            return Ok(g);
        }
    }
    diags.sort_by(|a, b| (&a.node, &a.field).cmp(&(&b.node, &b.field)));
    Err(fail(diags))
}

/// Parses JSON like `serde_json::from_str`, also listing keys that appear twice in one
/// object as `(path of the object, key)` (serde_json would keep the last silently).
/// Most JSON values a graph file may hold (a 100 000-node graph has about 2 million): a
/// 64 MiB array of numbers would otherwise become a gigabyte of values before it is refused.
const MAX_JSON_VALUES: usize = 4_000_000;

fn parse_json(text: &str) -> Result<(Value, Vec<(String, String)>), serde_json::Error> {
    use serde::de::{DeserializeSeed, MapAccess, SeqAccess, Visitor};
    /// Where a value sits, as a chain of parents: spelled out (`nodes[3].params`) only when a
    /// duplicate key is found, never per value (64 MiB of array elements would otherwise
    /// format a path string each).
    #[derive(Clone, Copy)]
    enum Loc<'p> {
        Root,
        Key(&'p Loc<'p>, &'p str),
        Index(&'p Loc<'p>, usize),
    }
    impl Loc<'_> {
        fn render(&self) -> String {
            match self {
                Loc::Root => String::new(),
                Loc::Key(parent, key) => {
                    let p = parent.render();
                    if p.is_empty() {
                        (*key).to_owned()
                    } else {
                        format!("{p}.{key}")
                    }
                }
                Loc::Index(parent, i) => format!("{}[{i}]", parent.render()),
            }
        }
    }
    struct Seed<'a, 'p> {
        loc: Loc<'p>,
        dups: &'a std::cell::RefCell<Vec<(String, String)>>,
        /// Values left before the document is refused as too large.
        left: &'a std::cell::Cell<usize>,
    }
    impl<'de> DeserializeSeed<'de> for Seed<'_, '_> {
        type Value = Value;
        fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
            let left = self.left.get();
            if left == 0 {
                return Err(serde::de::Error::custom(format!(
                    "more than {MAX_JSON_VALUES} values: a graph file is not that large (the largest graphs have a few hundred thousand)"
                )));
            }
            self.left.set(left - 1);
            d.deserialize_any(self)
        }
    }
    impl<'de> Visitor<'de> for Seed<'_, '_> {
        type Value = Value;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a JSON value")
        }
        fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
            Ok(Value::Bool(v))
        }
        fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
            Ok(Value::from(v))
        }
        fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
            Ok(Value::from(v))
        }
        fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
            Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
        }
        fn visit_str<E>(self, v: &str) -> Result<Value, E> {
            Ok(Value::String(v.to_owned()))
        }
        fn visit_string<E>(self, v: String) -> Result<Value, E> {
            Ok(Value::String(v))
        }
        fn visit_unit<E>(self) -> Result<Value, E> {
            Ok(Value::Null)
        }
        fn visit_none<E>(self) -> Result<Value, E> {
            Ok(Value::Null)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
            let mut out = Vec::new();
            while let Some(v) = seq.next_element_seed(Seed {
                loc: Loc::Index(&self.loc, out.len()),
                dups: self.dups,
                left: self.left,
            })? {
                out.push(v);
            }
            Ok(Value::Array(out))
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
            let mut out = Map::new();
            while let Some(key) = map.next_key::<String>()? {
                let v = map.next_value_seed(Seed {
                    loc: Loc::Key(&self.loc, &key),
                    dups: self.dups,
                    left: self.left,
                })?;
                if out.insert(key.clone(), v).is_some() {
                    self.dups.borrow_mut().push((self.loc.render(), key));
                }
            }
            Ok(Value::Object(out))
        }
    }
    let dups = std::cell::RefCell::new(Vec::new());
    let mut de = serde_json::Deserializer::from_str(text);
    let left = std::cell::Cell::new(MAX_JSON_VALUES);
    let value = Seed {
        loc: Loc::Root,
        dups: &dups,
        left: &left,
    }
    .deserialize(&mut de)?;
    de.end()?;
    Ok((value, dups.into_inner()))
}

fn strip_position(msg: &str) -> String {
    msg.find(" at line ").map_or(msg, |i| &msg[..i]).to_owned()
}

/// Checks the format tag and version, and upgrades older versions step by step.
///
/// Policy: every released version keeps loading forever. A change to the format bumps
/// `CURRENT_VERSION` and adds one `migrate_vN_to_vN+1` step here, working on JSON values,
/// with a stored file of the old version under `tests/data/` that must keep loading.
pub fn migrate(mut value: Value) -> Result<Value, Diagnostic> {
    let Some(obj) = value.as_object() else {
        return Err(Diagnostic::at(
            None,
            String::new(),
            format!(
                "expected a JSON object at the top level, found {}",
                kind_of(&value)
            ),
        ));
    };
    match obj.get("format") {
        Some(Value::String(s)) if s == FORMAT_TAG => {}
        Some(other) => {
            return Err(Diagnostic::at(
                None,
                "format".into(),
                format!(
                    "expected \"{FORMAT_TAG}\", found {other}: this is not an Orogen graph file"
                ),
            ))
        }
        None => {
            return Err(Diagnostic::at(
                None,
                "format".into(),
                format!("missing; an Orogen graph file starts with \"format\": \"{FORMAT_TAG}\""),
            ))
        }
    }
    let version = match obj.get("version") {
        Some(v) => v.as_u64().ok_or_else(|| {
            Diagnostic::at(
                None,
                "version".into(),
                format!("expected a positive integer, found {v}"),
            )
        })?,
        None => {
            return Err(Diagnostic::at(
                None,
                "version".into(),
                format!("missing; this build writes version {CURRENT_VERSION}"),
            ))
        }
    };
    if !(OLDEST_VERSION..=CURRENT_VERSION).contains(&version) {
        return Err(Diagnostic::at(
            None,
            "version".into(),
            format!(
                "unsupported format version {version}: this build of orogen reads versions {OLDEST_VERSION} to {CURRENT_VERSION}{}",
                if version > CURRENT_VERSION { "; the file was written by a newer orogen" } else { "" }
            ),
        ));
    }
    // v1 → v2: v2 adds graph parameters, bindings, subgraph nodes and a graph doc, all
    // optional, so a v1 file is a v2 file without them; the step only renumbers it. Later
    // steps go here: `if version == 2 { value = migrate_v2_to_v3(value); version = 3; }`.
    let _ = version;
    if let Some(o) = value.as_object_mut() {
        o.insert("version".into(), Value::from(CURRENT_VERSION));
    }
    Ok(value)
}

/// Applies `(node, param, value)` overrides to the JSON before validation, so an override
/// is checked exactly like a value in the file.
fn apply_overrides(value: &mut Value, overrides: &[(String, String, Value)]) -> Vec<Diagnostic> {
    let mut diags = Vec::new();
    for (node, param, v) in overrides {
        let target = value
            .get_mut("nodes")
            .and_then(Value::as_array_mut)
            .and_then(|nodes| {
                nodes
                    .iter_mut()
                    .find(|n| n.get("id").and_then(Value::as_str) == Some(node.as_str()))
            });
        match target.and_then(Value::as_object_mut) {
            Some(obj) => {
                let params = obj
                    .entry("params")
                    .or_insert_with(|| Value::Object(Map::new()));
                if let Some(p) = params.as_object_mut() {
                    p.insert(param.clone(), v.clone());
                }
            }
            None => error(
                &mut diags,
                Some(node),
                format!("--set {node}.{param}"),
                "no node with this id in the graph",
            ),
        }
    }
    diags
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "an integer",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn suggest(name: &str, options: &[&str]) -> String {
    nearest(name, options.iter().copied())
        .map(|s| format!(" (did you mean \"{s}\"?)"))
        .unwrap_or_default()
}

/// `unknown parameter for "noise" (did you mean "octaves"?); its parameters are …`
fn unknown_name(what: &str, plural: &str, node_type: &str, name: &str, names: &[&str]) -> String {
    if names.is_empty() {
        format!("unknown {what} for \"{node_type}\"; it has no {plural}")
    } else {
        format!(
            "unknown {what} for \"{node_type}\"{}; its {plural} are {}",
            suggest(name, names),
            quoted_list(names)
        )
    }
}

fn check_keys(
    obj: &Map<String, Value>,
    allowed: &[&str],
    node: Option<&str>,
    prefix: &str,
    diags: &mut Vec<Diagnostic>,
) {
    for k in obj.keys() {
        if !allowed.contains(&k.as_str()) {
            error(
                diags,
                node,
                format!("{prefix}{k}"),
                format!(
                    "unknown field{}; expected one of {}",
                    suggest(k, allowed),
                    quoted_list(allowed)
                ),
            );
        }
    }
}

fn number(v: Option<&Value>, field: &str, default: f64, diags: &mut Vec<Diagnostic>) -> f64 {
    match v {
        None => default,
        Some(Value::Number(n)) => n.as_f64().unwrap_or(default),
        Some(other) => {
            error(
                diags,
                None,
                field,
                format!("expected a number, found {}", kind_of(other)),
            );
            default
        }
    }
}

/// A top-level string field (`""` when absent; an error when not a string).
fn string_field(root: &Map<String, Value>, key: &str, diags: &mut Vec<Diagnostic>) -> String {
    match root.get(key) {
        None => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => {
            error(
                diags,
                None,
                key,
                format!("expected a string, found {}", kind_of(other)),
            );
            String::new()
        }
    }
}

/// Records an error about `node` (or the file), at `field`.
fn error(
    diags: &mut Vec<Diagnostic>,
    node: Option<&str>,
    field: impl Into<String>,
    message: impl Into<String>,
) {
    diags.push(Diagnostic::at(node, field.into(), message.into()));
}
/// The graph parameters' values, as files write them, by name.
#[must_use]
pub fn parameter_values(g: &crate::Graph) -> std::collections::BTreeMap<String, serde_json::Value> {
    g.parameters
        .iter()
        .map(|p| (p.spec.name.to_owned(), param_to_json(p.spec, &p.value)))
        .collect()
}
