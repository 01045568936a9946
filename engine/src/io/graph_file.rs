//! Graph files (JSON, format v2): loading with complete diagnostics, migrations from v1, graph
//! parameters, subgraph references, and deterministic saving.
//! The format is documented in `docs/graph-format.md`.
//!
//! Loading works on a loosely typed `serde_json::Value` so that every problem in a file can
//! be reported at once (a derived deserializer stops at the first), and so that migrations
//! from older versions run before any runtime type is built.

use crate::field::World;
use crate::graph::{
    is_valid_id, Diagnostic, Diagnostics, Graph, GraphParam, NodeInstance, PortRef, Subgraph,
    SUBGRAPH_TYPE,
};
use crate::io::trust::{self, Project};
use crate::node::{intern, nearest, quoted_list, ParamKind, ParamSpec, ParamValue, Registry};
use serde_json::{Map, Value};
use std::cell::RefCell;
use std::collections::{BTreeMap, HashSet};
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
pub const MAX_RESOLUTION: u64 = 65_536;

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
];
const WORLD_KEYS: &[&str] = &["size_m", "height_min_m", "height_max_m"];
const NODE_KEYS: &[&str] = &[
    "id", "type", "params", "inputs", "position", "bind", "graph", "hash", "embedded",
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

/// Reads and validates a graph file. The error lists every problem found; a graph whose only
/// problems are warnings (incomplete nodes) loads.
pub fn load_file(path: &Path) -> Result<Graph, Diagnostics> {
    load_file_with(path, &[])
}

/// Reads a graph file, applies `--set`-style overrides `(node, param, value)`, and validates it.
pub fn load_file_with(
    path: &Path,
    overrides: &[(String, String, Value)],
) -> Result<Graph, Diagnostics> {
    load_file_opts(
        path,
        &LoadOptions {
            set: overrides,
            ..LoadOptions::default()
        },
    )
}

/// Reads a graph file, applies `--set` and `--param` overrides, and validates it.
pub fn load_file_opts(path: &Path, opts: &LoadOptions) -> Result<Graph, Diagnostics> {
    let label = path.display().to_string();
    let text = trust::read_text(path, trust::MAX_GRAPH_BYTES, None).map_err(|e| Diagnostics {
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
    };
    load_text(&text, &label, opts, &ctx)
}

/// Parses graph JSON whose subgraph paths are relative to `base` (the folder of the file it
/// came from), applies overrides, validates.
pub fn load_str_in(
    text: &str,
    label: &str,
    base: Option<&Path>,
    opts: &LoadOptions,
) -> Result<Graph, Diagnostics> {
    let ctx = Ctx {
        base: base.map(Path::to_path_buf),
        chain: Vec::new(),
        root: base.map(Path::to_path_buf),
        project: base.map(|b| Arc::new(Project::of_folder(b, opts.allow_outside))),
        loaded: Rc::default(),
    };
    load_text(text, label, opts, &ctx)
}

/// Parses and validates graph JSON. `label` names the source in diagnostics.
pub fn load_str(text: &str, label: &str) -> Result<Graph, Diagnostics> {
    load_str_with(text, label, &[])
}

/// Parses graph JSON, applies overrides, validates. Subgraphs must be embedded (there is
/// no folder to find their files in; see [`load_str_in`]).
pub fn load_str_with(
    text: &str,
    label: &str,
    overrides: &[(String, String, Value)],
) -> Result<Graph, Diagnostics> {
    load_str_in(
        text,
        label,
        None,
        &LoadOptions {
            set: overrides,
            ..LoadOptions::default()
        },
    )
}

fn load_text(text: &str, label: &str, opts: &LoadOptions, ctx: &Ctx) -> Result<Graph, Diagnostics> {
    let fail = |items: Vec<Diagnostic>| Diagnostics {
        file: label.to_owned(),
        items,
    };
    // A UTF-8 byte-order mark (some Windows editors write one) is not part of the document.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
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
fn parse_json(text: &str) -> Result<(Value, Vec<(String, String)>), serde_json::Error> {
    use serde::de::{DeserializeSeed, MapAccess, SeqAccess, Visitor};
    struct Seed<'a> {
        path: String,
        dups: &'a std::cell::RefCell<Vec<(String, String)>>,
    }
    impl<'de> DeserializeSeed<'de> for Seed<'_> {
        type Value = Value;
        fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
            d.deserialize_any(self)
        }
    }
    impl<'de> Visitor<'de> for Seed<'_> {
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
                path: format!("{}[{}]", self.path, out.len()),
                dups: self.dups,
            })? {
                out.push(v);
            }
            Ok(Value::Array(out))
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
            let mut out = Map::new();
            while let Some(key) = map.next_key::<String>()? {
                let path = if self.path.is_empty() {
                    key.clone()
                } else {
                    format!("{}.{key}", self.path)
                };
                let v = map.next_value_seed(Seed {
                    path,
                    dups: self.dups,
                })?;
                if out.insert(key.clone(), v).is_some() {
                    self.dups.borrow_mut().push((self.path.clone(), key));
                }
            }
            Ok(Value::Object(out))
        }
    }
    let dups = std::cell::RefCell::new(Vec::new());
    let mut de = serde_json::Deserializer::from_str(text);
    let value = Seed {
        path: String::new(),
        dups: &dups,
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
            None => diags.push(Diagnostic::at(
                Some(node),
                format!("--set {node}.{param}"),
                "no node with this id in the graph".into(),
            )),
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
            diags.push(Diagnostic::at(
                node,
                format!("{prefix}{k}"),
                format!(
                    "unknown field{}; expected one of {}",
                    suggest(k, allowed),
                    quoted_list(allowed)
                ),
            ));
        }
    }
}

fn number(v: Option<&Value>, field: &str, default: f64, diags: &mut Vec<Diagnostic>) -> f64 {
    match v {
        None => default,
        Some(Value::Number(n)) => n.as_f64().unwrap_or(default),
        Some(other) => {
            diags.push(Diagnostic::at(
                None,
                field.into(),
                format!("expected a number, found {}", kind_of(other)),
            ));
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
            diags.push(Diagnostic::at(
                None,
                key.into(),
                format!("expected a string, found {}", kind_of(other)),
            ));
            String::new()
        }
    }
}

/// Builds the runtime graph from a (migrated) value, pushing every problem into `diags`.
fn from_value(
    value: &Value,
    diags: &mut Vec<Diagnostic>,
    ctx: &Ctx,
    param_overrides: &[(String, Value)],
) -> Option<Graph> {
    let root = value.as_object()?;
    check_keys(root, TOP_KEYS, None, "", diags);
    let doc = string_field(root, "doc", diags);
    let parameters = parse_parameters(root.get("parameters"), param_overrides, diags);

    let name = string_field(root, "name", diags);
    let seed = match root.get("seed") {
        None => 0,
        Some(v) => v.as_u64().unwrap_or_else(|| {
            diags.push(Diagnostic::at(
                None,
                "seed".into(),
                format!("expected an integer in [0, {}], found {v}", u64::MAX),
            ));
            0
        }),
    };
    let resolution = match root.get("resolution") {
        None => 512,
        Some(v) => match v.as_u64() {
            Some(r) if (2..=MAX_RESOLUTION).contains(&r) => r as usize,
            _ => {
                diags.push(Diagnostic::at(
                    None,
                    "resolution".into(),
                    format!("expected an integer in [2, {MAX_RESOLUTION}], found {v}"),
                ));
                512
            }
        },
    };
    let world = parse_world(root.get("world"), diags);

    let reg = Registry::builtin();
    let mut nodes = Vec::new();
    let mut declared: HashSet<String> = HashSet::new();
    let mut broken: HashSet<String> = HashSet::new();
    match root.get("nodes") {
        Some(Value::Array(list)) => {
            let mut seen = Seen {
                declared: &mut declared,
                broken: &mut broken,
            };
            for (i, nv) in list.iter().enumerate() {
                if let Some(n) = parse_node(i, nv, reg, &mut seen, &parameters, ctx, diags) {
                    nodes.push(n);
                }
            }
        }
        Some(other) => diags.push(Diagnostic::at(
            None,
            "nodes".into(),
            format!("expected an array of nodes, found {}", kind_of(other)),
        )),
        None => diags.push(Diagnostic::at(
            None,
            "nodes".into(),
            "missing; expected an array of nodes".into(),
        )),
    }

    let mut outputs = BTreeMap::new();
    match root.get("outputs") {
        None => {}
        Some(Value::Object(map)) => {
            for (name, r) in map {
                let field = format!("outputs.{name}");
                if !is_valid_id(name) {
                    diags.push(Diagnostic::at(None, field.clone(), "output names use only letters, digits, '_' and '-' (they become file names)".into()));
                }
                if let Some(r) = parse_ref(r, None, &field, diags) {
                    outputs.insert(name.clone(), r);
                }
            }
        }
        Some(other) => diags.push(Diagnostic::at(
            None,
            "outputs".into(),
            format!(
                "expected an object mapping output names to \"node.port\", found {}",
                kind_of(other)
            ),
        )),
    }

    resolve_default_ports(&mut nodes, &mut outputs);
    let mut graph = Graph {
        name,
        doc,
        seed,
        world,
        resolution,
        nodes,
        outputs,
        parameters,
    };
    graph.apply_parameters();
    diags.extend(graph.validate_refs(&|id| broken.contains(id)));
    // Each level checks its own expansion (bounded work: the count stops at the limit), so a
    // subgraph used twice at each of many levels is refused where it crosses the limit.
    if graph.expanded_len(trust::MAX_EXPANDED_NODES) > trust::MAX_EXPANDED_NODES {
        let here = ctx.chain.last().cloned().unwrap_or_default();
        let chain = if ctx.chain.len() > 1 {
            let outer = Ctx {
                chain: ctx.chain[..ctx.chain.len() - 1].to_vec(),
                ..ctx.clone()
            };
            format!(" ({})", chain_summary(&outer, &here))
        } else {
            String::new()
        };
        diags.push(Diagnostic::at(
            None,
            "nodes".into(),
            format!(
                "with its subgraphs expanded this graph{chain} has more than {} nodes: Orogen refuses graphs that large (a subgraph used more than once at each of several levels multiplies)",
                trust::MAX_EXPANDED_NODES
            ),
        ));
    }
    Some(graph)
}

/// Fills in omitted ports (`"node"` means the node's first output).
fn resolve_default_ports(nodes: &mut [NodeInstance], outputs: &mut BTreeMap<String, PortRef>) {
    let first: std::collections::HashMap<String, &'static str> = nodes
        .iter()
        .filter_map(|n| n.def.spec.outputs.first().map(|p| (n.id.clone(), p.name)))
        .collect();
    let fix = |r: &mut PortRef| {
        if r.output.is_empty() {
            if let Some(p) = first.get(&r.node) {
                r.output = (*p).to_owned();
            }
        }
    };
    nodes
        .iter_mut()
        .flat_map(|n| n.inputs.iter_mut().flatten())
        .for_each(fix);
    outputs.values_mut().for_each(fix);
}

fn parse_world(v: Option<&Value>, diags: &mut Vec<Diagnostic>) -> World {
    let mut world = World {
        size_m: 4096.0,
        height_min_m: 0.0,
        height_max_m: 1000.0,
    };
    let Some(v) = v else { return world };
    let Some(obj) = v.as_object() else {
        diags.push(Diagnostic::at(
            None,
            "world".into(),
            format!(
                "expected an object with size_m, height_min_m, height_max_m, found {}",
                kind_of(v)
            ),
        ));
        return world;
    };
    check_keys(obj, WORLD_KEYS, None, "world.", diags);
    world.size_m = number(obj.get("size_m"), "world.size_m", world.size_m, diags);
    world.height_min_m = number(
        obj.get("height_min_m"),
        "world.height_min_m",
        world.height_min_m,
        diags,
    );
    world.height_max_m = number(
        obj.get("height_max_m"),
        "world.height_max_m",
        world.height_max_m,
        diags,
    );
    if !(world.size_m > 0.0 && world.size_m <= 1.0e7) {
        diags.push(Diagnostic::at(
            None,
            "world.size_m".into(),
            format!(
                "expected a size in metres in (0, 10000000], found {}",
                world.size_m
            ),
        ));
    }
    for (f, h) in [
        ("world.height_min_m", world.height_min_m),
        ("world.height_max_m", world.height_max_m),
    ] {
        if h.abs() > 1.0e6 {
            diags.push(Diagnostic::at(
                None,
                f.into(),
                format!("expected a height in metres in [-1000000, 1000000], found {h}"),
            ));
        }
    }
    if world.height_max_m <= world.height_min_m {
        diags.push(Diagnostic::at(
            None,
            "world.height_max_m".into(),
            format!(
                "must be above height_min_m ({} m), found {} m",
                world.height_min_m, world.height_max_m
            ),
        ));
    }
    world
}

fn parse_ref(
    v: &Value,
    node: Option<&str>,
    field: &str,
    diags: &mut Vec<Diagnostic>,
) -> Option<PortRef> {
    let Some(s) = v.as_str() else {
        diags.push(Diagnostic::at(
            node,
            field.into(),
            format!(
                "expected a reference \"node\" or \"node.port\", found {}",
                kind_of(v)
            ),
        ));
        return None;
    };
    let (n, p) = match s.split_once('.') {
        Some((n, p)) => (n, Some(p)),
        None => (s, None),
    };
    if !is_valid_id(n) || p.is_some_and(|p| !is_valid_id(p)) {
        diags.push(Diagnostic::at(
            node,
            field.into(),
            format!("\"{s}\" is not a reference; expected \"node\" or \"node.port\""),
        ));
        return None;
    }
    // The port is filled in by `resolve_default_ports` when omitted.
    Some(PortRef::new(n, p.unwrap_or("")))
}

/// Node ids seen so far, and those whose node could not be built (their wires are not
/// reported again).
struct Seen<'a> {
    declared: &'a mut HashSet<String>,
    broken: &'a mut HashSet<String>,
}

fn parse_node(
    i: usize,
    nv: &Value,
    reg: &'static Registry,
    seen: &mut Seen,
    parameters: &[GraphParam],
    ctx: &Ctx,
    diags: &mut Vec<Diagnostic>,
) -> Option<NodeInstance> {
    let Seen { declared, broken } = seen;
    let at = format!("nodes[{i}]");
    let Some(obj) = nv.as_object() else {
        diags.push(Diagnostic::at(
            None,
            at,
            format!("expected a node object, found {}", kind_of(nv)),
        ));
        return None;
    };
    let id = match obj.get("id") {
        Some(Value::String(s)) if is_valid_id(s) => s.clone(),
        Some(Value::String(s)) => {
            diags.push(Diagnostic::at(
                None,
                format!("{at}.id"),
                format!("\"{s}\" is not a valid node id: use 1 to 128 letters, digits, '_' or '-'"),
            ));
            return None;
        }
        Some(other) => {
            diags.push(Diagnostic::at(
                None,
                format!("{at}.id"),
                format!("expected a string, found {}", kind_of(other)),
            ));
            return None;
        }
        None => {
            diags.push(Diagnostic::at(
                None,
                format!("{at}.id"),
                "missing; every node needs a unique id".into(),
            ));
            return None;
        }
    };
    if !declared.insert(id.clone()) {
        diags.push(Diagnostic::at(
            Some(&id),
            "id".into(),
            format!("duplicate node id (again at {at}); ids must be unique"),
        ));
        return None;
    }
    let nid = Some(id.as_str());
    check_keys(obj, NODE_KEYS, nid, "", diags);
    let type_name = match obj.get("type") {
        Some(Value::String(s)) => s.as_str(),
        other => {
            diags.push(Diagnostic::at(
                nid,
                "type".into(),
                format!(
                    "expected a node type name, found {}",
                    other.map_or("nothing", kind_of)
                ),
            ));
            broken.insert(id);
            return None;
        }
    };
    let sub_keys = ["graph", "hash", "embedded"];
    let mut subgraph = None;
    if type_name == SUBGRAPH_TYPE {
        let Some(sg) = load_subgraph(obj, nid, ctx, diags) else {
            broken.insert(id);
            return None;
        };
        subgraph = Some(Arc::new(sg));
    } else {
        for k in sub_keys {
            if obj.contains_key(k) {
                diags.push(Diagnostic::at(
                    nid,
                    k.into(),
                    format!("only subgraph nodes (\"type\": \"{SUBGRAPH_TYPE}\") have \"{k}\""),
                ));
            }
        }
    }
    let def = match &subgraph {
        Some(sg) => Some(sg.interface()),
        None => reg.get(type_name),
    };
    let Some(def) = def else {
        let mut ids: Vec<&str> = reg.defs().iter().map(|d| d.spec.id).collect();
        ids.push(SUBGRAPH_TYPE);
        diags.push(Diagnostic::at(
            nid,
            "type".into(),
            format!(
                "unknown node type \"{type_name}\"{}; `orogen nodes` lists them all",
                suggest(type_name, &ids)
            ),
        ));
        broken.insert(id);
        return None;
    };
    let mut node = NodeInstance::new(id.clone(), def);
    node.subgraph = subgraph;
    node.bindings = parse_bindings(obj.get("bind"), def, nid, parameters, diags);

    match obj.get("params") {
        None => {}
        Some(Value::Object(params)) => {
            let names: Vec<&str> = def.params.iter().map(|p| p.name).collect();
            for (k, v) in params {
                let field = format!("params.{k}");
                if node.bindings.contains_key(k) {
                    // A bound parameter takes the graph parameter's value.
                    continue;
                }
                match def.param_index(k) {
                    None => diags.push(Diagnostic::at(
                        nid,
                        field,
                        unknown_name("parameter", "parameters", def.spec.id, k, &names),
                    )),
                    Some(pi) => match param_value(&def.params[pi], v) {
                        Ok(pv) => node.params[pi] = pv,
                        Err(msg) => diags.push(Diagnostic::at(nid, field, msg)),
                    },
                }
            }
        }
        Some(other) => diags.push(Diagnostic::at(
            nid,
            "params".into(),
            format!(
                "expected an object of parameter values, found {}",
                kind_of(other)
            ),
        )),
    }

    match obj.get("inputs") {
        None => {}
        Some(Value::Object(inputs)) => {
            let names: Vec<&str> = def.spec.inputs.iter().map(|p| p.name).collect();
            for (k, v) in inputs {
                let field = format!("inputs.{k}");
                match def.input_index(k) {
                    None => diags.push(Diagnostic::at(
                        nid,
                        field,
                        unknown_name("input port", "inputs", def.spec.id, k, &names),
                    )),
                    Some(pi) => {
                        if let Some(r) = parse_ref(v, nid, &field, diags) {
                            node.inputs[pi] = Some(r);
                        }
                    }
                }
            }
        }
        Some(other) => diags.push(Diagnostic::at(
            nid,
            "inputs".into(),
            format!(
                "expected an object mapping input ports to \"node.port\", found {}",
                kind_of(other)
            ),
        )),
    }

    match obj.get("position") {
        None => {}
        Some(Value::Array(a))
            if a.len() == 2 && a.iter().all(|v| v.as_f64().is_some_and(f64::is_finite)) =>
        {
            node.position = [a[0].as_f64().unwrap_or(0.0), a[1].as_f64().unwrap_or(0.0)];
        }
        Some(other) => diags.push(Diagnostic::at(
            nid,
            "position".into(),
            format!("expected [x, y] with two numbers, found {other}"),
        )),
    }
    Some(node)
}

/// The graph's `parameters`, each declaration checked, then the `--param` overrides applied
/// (checked like a value in the file). Sorted by name.
fn parse_parameters(
    v: Option<&Value>,
    overrides: &[(String, Value)],
    diags: &mut Vec<Diagnostic>,
) -> Vec<GraphParam> {
    let mut out = Vec::new();
    match v {
        None => {}
        Some(Value::Object(map)) => {
            for (name, decl) in map {
                if let Some(p) = parse_parameter(name, decl, diags) {
                    out.push(p);
                }
            }
        }
        Some(other) => diags.push(Diagnostic::at(
            None,
            "parameters".into(),
            format!(
                "expected an object mapping parameter names to declarations, found {}",
                kind_of(other)
            ),
        )),
    }
    out.sort_by(|a, b| a.spec.name.cmp(b.spec.name));
    let names: Vec<&str> = out.iter().map(|p| p.spec.name).collect();
    let mut set = Vec::new();
    for (name, v) in overrides {
        let field = format!("--param {name}");
        match out.iter().position(|p| p.spec.name == name) {
            None => diags.push(Diagnostic::at(
                None,
                field,
                if names.is_empty() {
                    "this graph has no parameters".to_owned()
                } else {
                    format!(
                        "no graph parameter \"{name}\"{}; the graph's parameters are {}",
                        suggest(name, &names),
                        quoted_list(&names)
                    )
                },
            )),
            Some(i) => match param_value(out[i].spec, v) {
                Ok(pv) => set.push((i, pv)),
                Err(msg) => diags.push(Diagnostic::at(None, field, msg)),
            },
        }
    }
    for (i, pv) in set {
        out[i].value = pv;
    }
    out
}

/// One graph parameter declaration: `{"type": "float", "default": 0.5, "min": 0, "max": 1,
/// "soft_min": …, "soft_max": …, "unit": "m", "doc": "…"}` (`options` for a choice).
fn parse_parameter(name: &str, decl: &Value, diags: &mut Vec<Diagnostic>) -> Option<GraphParam> {
    let at = format!("parameters.{name}");
    if !is_valid_id(name) {
        diags.push(Diagnostic::at(
            None,
            at,
            "parameter names use 1 to 128 letters, digits, '_' or '-'".into(),
        ));
        return None;
    }
    let Some(obj) = decl.as_object() else {
        diags.push(Diagnostic::at(
            None,
            at,
            format!(
                "expected a declaration {{\"type\": …, \"default\": …}}, found {}",
                kind_of(decl)
            ),
        ));
        return None;
    };
    check_keys(obj, PARAM_KEYS, None, &format!("{at}."), diags);
    let text = |key: &str, diags: &mut Vec<Diagnostic>| match obj.get(key) {
        None => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => {
            diags.push(Diagnostic::at(
                None,
                format!("{at}.{key}"),
                format!("expected a string, found {}", kind_of(other)),
            ));
            String::new()
        }
    };
    let doc = text("doc", diags);
    let unit = text("unit", diags);
    let ty = match obj.get("type") {
        Some(Value::String(t)) if PARAM_TYPES.contains(&t.as_str()) => t.as_str(),
        other => {
            diags.push(Diagnostic::at(
                None,
                format!("{at}.type"),
                format!(
                    "expected one of {}, found {}",
                    quoted_list(PARAM_TYPES),
                    other.map_or_else(|| "nothing".to_owned(), ToString::to_string)
                ),
            ));
            return None;
        }
    };
    let bound = |key: &str, diags: &mut Vec<Diagnostic>| -> Option<f64> {
        match obj.get(key) {
            Some(Value::Number(n)) => n.as_f64(),
            Some(other) => {
                diags.push(Diagnostic::at(
                    None,
                    format!("{at}.{key}"),
                    format!("expected a number, found {}", kind_of(other)),
                ));
                None
            }
            None => None,
        }
    };
    let range = |diags: &mut Vec<Diagnostic>| -> Option<((f64, f64), (f64, f64))> {
        let (Some(lo), Some(hi)) = (bound("min", diags), bound("max", diags)) else {
            diags.push(Diagnostic::at(
                None,
                at.clone(),
                format!("a {ty} parameter needs \"min\" and \"max\" (its allowed range)"),
            ));
            return None;
        };
        if lo.partial_cmp(&hi) != Some(std::cmp::Ordering::Less) {
            diags.push(Diagnostic::at(
                None,
                format!("{at}.max"),
                format!("must be above min ({lo}), found {hi}"),
            ));
            return None;
        }
        let slo = bound("soft_min", diags).unwrap_or(lo).clamp(lo, hi);
        let shi = bound("soft_max", diags).unwrap_or(hi).clamp(slo, hi);
        Some(((lo, hi), (slo, shi)))
    };
    let placeholder = |kind| intern::param_spec(name, &doc, &unit, kind);
    // The declaration with a placeholder default, to check the default against.
    let kind = match ty {
        "float" => {
            let (hard, soft) = range(diags)?;
            ParamKind::Float {
                default: hard.0,
                soft,
                hard,
            }
        }
        "int" => {
            let (hard, soft) = range(diags)?;
            let int = |x: f64| x.clamp(-9.0e15, 9.0e15).round() as i64;
            ParamKind::Int {
                default: int(hard.0),
                soft: (int(soft.0), int(soft.1)),
                hard: (int(hard.0), int(hard.1)),
            }
        }
        "bool" => ParamKind::Bool { default: false },
        "seed" => ParamKind::Seed { default: 0 },
        "text" => ParamKind::Text { default: "" },
        _ => {
            let options: Vec<String> = match obj.get("options") {
                Some(Value::Array(a))
                    if !a.is_empty()
                        && a.iter().all(|o| o.as_str().is_some_and(|s| !s.is_empty())) =>
                {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                }
                other => {
                    diags.push(Diagnostic::at(
                        None,
                        format!("{at}.options"),
                        format!(
                            "a choice parameter needs \"options\": a non-empty array of names, found {}",
                            other.map_or("nothing", kind_of)
                        ),
                    ));
                    return None;
                }
            };
            ParamKind::Choice {
                default: 0,
                options: intern::strs(&options),
            }
        }
    };
    let Some(default) = obj.get("default") else {
        diags.push(Diagnostic::at(
            None,
            format!("{at}.default"),
            format!("missing; expected {}", placeholder(kind).expected()),
        ));
        return None;
    };
    let value = match param_value(placeholder(kind), default) {
        Ok(v) => v,
        Err(msg) => {
            diags.push(Diagnostic::at(None, format!("{at}.default"), msg));
            return None;
        }
    };
    let kind = match (kind, &value) {
        (ParamKind::Float { soft, hard, .. }, ParamValue::Float(x)) => ParamKind::Float {
            default: *x,
            soft,
            hard,
        },
        (ParamKind::Int { soft, hard, .. }, ParamValue::Int(x)) => ParamKind::Int {
            default: *x,
            soft,
            hard,
        },
        (ParamKind::Seed { .. }, ParamValue::Int(x)) => ParamKind::Seed {
            default: u32::try_from(*x).unwrap_or(0),
        },
        (ParamKind::Bool { .. }, ParamValue::Bool(b)) => ParamKind::Bool { default: *b },
        (ParamKind::Choice { options, .. }, ParamValue::Choice(i)) => ParamKind::Choice {
            default: *i,
            options,
        },
        (ParamKind::Text { .. }, ParamValue::Text(t)) => ParamKind::Text {
            default: intern::str(t),
        },
        (k, _) => k,
    };
    Some(GraphParam {
        spec: placeholder(kind),
        value,
    })
}

/// A node's `bind`: `{"node parameter": "graph parameter"}`, each checked (both exist, the
/// kinds match, every value the graph parameter allows is valid for the node's).
fn parse_bindings(
    v: Option<&Value>,
    def: &crate::node::NodeDef,
    nid: Option<&str>,
    parameters: &[GraphParam],
    diags: &mut Vec<Diagnostic>,
) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let map = match v {
        None => return out,
        Some(Value::Object(map)) => map,
        Some(other) => {
            diags.push(Diagnostic::at(
                nid,
                "bind".into(),
                format!(
                    "expected an object mapping parameters to graph parameters, found {}",
                    kind_of(other)
                ),
            ));
            return out;
        }
    };
    let names: Vec<&str> = def.params.iter().map(|p| p.name).collect();
    let graph_names: Vec<&str> = parameters.iter().map(|p| p.spec.name).collect();
    for (k, g) in map {
        let field = format!("bind.{k}");
        let Some(pi) = def.param_index(k) else {
            diags.push(Diagnostic::at(
                nid,
                field,
                unknown_name("parameter", "parameters", def.spec.id, k, &names),
            ));
            continue;
        };
        let Some(g) = g.as_str() else {
            diags.push(Diagnostic::at(
                nid,
                field,
                format!("expected a graph parameter's name, found {}", kind_of(g)),
            ));
            continue;
        };
        let Some(gp) = parameters.iter().find(|p| p.spec.name == g) else {
            diags.push(Diagnostic::at(
                nid,
                field,
                if graph_names.is_empty() {
                    format!("no graph parameter \"{g}\": the graph declares none (add it under \"parameters\")")
                } else {
                    format!(
                        "no graph parameter \"{g}\"{}; the graph's parameters are {}",
                        suggest(g, &graph_names),
                        quoted_list(&graph_names)
                    )
                },
            ));
            continue;
        };
        if let Some(problem) = crate::graph::binding_problem(gp.spec, &def.params[pi]) {
            diags.push(Diagnostic::at(nid, field, problem));
            continue;
        }
        out.insert(k.clone(), g.to_owned());
    }
    out
}

/// The content hash of a graph as a subgraph: BLAKE3 of its canonical text in which each
/// subgraph node carries its own graph's content hash (a Merkle tree), so reformatting a file
/// changes nothing, editing anything it uses (at any depth) does, and hashing costs the size
/// of the graph itself however deep or often its subgraphs are used.
#[must_use]
pub fn content_hash(g: &Graph) -> String {
    let text =
        serde_json::to_string(&canonical(to_value_as(g, SubgraphsAs::Current))).unwrap_or_default();
    format!("blake3:{}", blake3::hash(text.as_bytes()).to_hex())
}

/// Loads the graph a subgraph node uses: its `embedded` copy if it has one, else the file
/// `graph` names (relative to the including file's folder). Errors name the file and, for an
/// include cycle, the chain of files.
fn load_subgraph(
    obj: &Map<String, Value>,
    nid: Option<&str>,
    ctx: &Ctx,
    diags: &mut Vec<Diagnostic>,
) -> Option<Subgraph> {
    let err = |field: &str, msg: String, diags: &mut Vec<Diagnostic>| {
        diags.push(Diagnostic::at(nid, field.into(), msg));
    };
    let path = match obj.get("graph") {
        Some(Value::String(p)) if valid_relative_path(p) => p.clone(),
        Some(Value::String(p)) => {
            err("graph", format!("\"{p}\" is not a relative path with '/' separators (like \"lib/coastline.json\")"), diags);
            return None;
        }
        other => {
            err(
                "graph",
                format!(
                    "a subgraph node names its graph file, relative to this file's folder; found {}",
                    other.map_or("nothing", kind_of)
                ),
                diags,
            );
            return None;
        }
    };
    let recorded_hash = match obj.get("hash") {
        None => String::new(),
        Some(Value::String(h)) => h.clone(),
        Some(other) => {
            err(
                "hash",
                format!("expected \"blake3:<hex>\", found {}", kind_of(other)),
                diags,
            );
            String::new()
        }
    };
    let inner_diags = |d: Diagnostics, diags: &mut Vec<Diagnostic>| {
        err("graph", load_failure(&path, &d), diags);
    };
    let (graph, hash) = if let Some(embedded) = obj.get("embedded") {
        let value = match migrate(embedded.clone()) {
            Ok(v) => v,
            Err(d) => {
                err("embedded", d.to_string(), diags);
                return None;
            }
        };
        let mut inner = Vec::new();
        let g = from_value(&value, &mut inner, ctx, &[]);
        if inner.iter().any(Diagnostic::is_error) {
            inner_diags(
                Diagnostics {
                    file: path.clone(),
                    items: inner,
                },
                diags,
            );
            return None;
        }
        let g = g?;
        let hash = content_hash(&g);
        (g, hash)
    } else {
        // A folder to look in and its project come together (both from the file's folder).
        let (Some(base), Some(project)) = (&ctx.base, &ctx.project) else {
            err(
                "graph",
                format!("subgraph \"{path}\" cannot be found: this graph was not loaded from a file, so it has no folder to look in (embed the subgraph, or load the graph from its file)"),
                diags,
            );
            return None;
        };
        let file = base.join(&path);
        let canonical = match std::fs::canonicalize(&file) {
            Ok(c) => c,
            Err(e) => {
                err(
                    "graph",
                    format!(
                        "cannot read subgraph file \"{path}\" ({}): {e}",
                        ctx.show(&file)
                    ),
                    diags,
                );
                return None;
            }
        };
        if let Err(e) = project.check(&path, &canonical) {
            err("graph", format!("subgraph file {e}"), diags);
            return None;
        }
        if let Some(k) = ctx.chain.iter().position(|c| *c == canonical) {
            let names: Vec<String> = ctx.chain[k..]
                .iter()
                .chain(std::iter::once(&canonical))
                .map(|p| ctx.show(p))
                .collect();
            err(
                "graph",
                format!(
                    "include cycle: {} (a graph cannot use itself as a subgraph, directly or not)",
                    names.join(" → ")
                ),
                diags,
            );
            return None;
        }
        if ctx.chain.len() >= trust::MAX_SUBGRAPH_DEPTH {
            err(
                "graph",
                format!(
                    "subgraphs nested more than {} deep: {} (Orogen refuses deeper nesting)",
                    trust::MAX_SUBGRAPH_DEPTH,
                    chain_summary(ctx, &canonical)
                ),
                diags,
            );
            return None;
        }
        let memo = ctx.loaded.borrow().get(&canonical).cloned();
        let loaded = if let Some(l) = memo {
            // Said once: a file used many times that fails would otherwise repeat its
            // message at every use, multiplying at every level.
            l.map_err(|_| {
                format!("subgraph \"{path}\" cannot be loaded (the same file is refused for another node: see its message)")
            })
        } else {
            let l = load_subgraph_file(&canonical, &path, ctx);
            ctx.loaded.borrow_mut().insert(canonical.clone(), l.clone());
            l
        };
        match loaded {
            Ok(l) => l,
            Err(e) => {
                err("graph", e, diags);
                return None;
            }
        }
    };
    Some(Subgraph {
        path,
        recorded_hash,
        hash,
        graph,
    })
}

/// Reads, parses and hashes one subgraph file (already resolved inside the project), its own
/// subgraphs included. The error is the message for the node using it.
fn load_subgraph_file(canonical: &Path, path: &str, ctx: &Ctx) -> Loaded {
    let text = trust::read_text(canonical, trust::MAX_GRAPH_BYTES, None)
        .map_err(|e| format!("cannot read subgraph file \"{path}\": {e}"))?;
    let mut chain = ctx.chain.clone();
    chain.push(canonical.to_path_buf());
    let inner_ctx = Ctx {
        base: Some(
            canonical
                .parent()
                .map_or_else(PathBuf::new, Path::to_path_buf),
        ),
        chain,
        root: ctx.root.clone(),
        project: ctx.project.clone(),
        loaded: Rc::clone(&ctx.loaded),
    };
    match load_text(&text, path, &LoadOptions::default(), &inner_ctx) {
        Ok(g) => {
            let hash = content_hash(&g);
            Ok((g, hash))
        }
        Err(d) => Err(load_failure(path, &d)),
    }
}

/// What a subgraph node says when its graph cannot be loaded: the graph's errors.
fn load_failure(path: &str, d: &Diagnostics) -> String {
    let problems: Vec<String> = d
        .items
        .iter()
        .filter(|x| x.is_error())
        .map(ToString::to_string)
        .collect();
    format!(
        "subgraph \"{path}\" cannot be loaded: {}",
        problems.join("; ")
    )
}

/// The chain of files from the outermost to `last`, the middle elided when long.
fn chain_summary(ctx: &Ctx, last: &Path) -> String {
    let names: Vec<String> = ctx
        .chain
        .iter()
        .map(PathBuf::as_path)
        .chain(std::iter::once(last))
        .map(|p| ctx.show(p))
        .collect();
    if names.len() <= 8 {
        return names.join(" → ");
    }
    format!(
        "{} → … ({} more) … → {}",
        names[..3].join(" → "),
        names.len() - 6,
        names[names.len() - 3..].join(" → ")
    )
}

/// A relative path with `/` separators, no empty or `.` parts (`..` allowed: a library next
/// to the graph's folder).
fn valid_relative_path(p: &str) -> bool {
    !p.is_empty()
        && p.len() <= 1024
        && !p.starts_with('/')
        && !p.contains('\\')
        && !p.contains(':')
        && p.split('/').all(|c| !c.is_empty() && c != ".")
}

/// Checks one JSON value against a parameter declaration.
pub fn param_value(spec: &ParamSpec, v: &Value) -> Result<ParamValue, String> {
    let found = || format!("expected {}, found {}", spec.expected(), kind_of(v));
    match spec.kind {
        ParamKind::Float { hard, .. } => {
            let x = v.as_f64().ok_or_else(found)?;
            if x.is_finite() && x >= hard.0 && x <= hard.1 {
                Ok(ParamValue::Float(x))
            } else {
                Err(format!(
                    "value {x} is outside the allowed range [{}, {}]",
                    hard.0, hard.1
                ))
            }
        }
        ParamKind::Int { hard, .. } => {
            let x = as_integer(v).ok_or_else(found)?;
            if x >= i128::from(hard.0) && x <= i128::from(hard.1) {
                Ok(ParamValue::Int(x as i64))
            } else {
                Err(format!(
                    "value {x} is outside the allowed range [{}, {}]",
                    hard.0, hard.1
                ))
            }
        }
        ParamKind::Seed { .. } => {
            let x = as_integer(v).ok_or_else(found)?;
            if (0..=i128::from(u32::MAX)).contains(&x) {
                Ok(ParamValue::Int(x as i64))
            } else {
                Err(format!(
                    "seed {x} is outside the allowed range [0, {}]",
                    u32::MAX
                ))
            }
        }
        ParamKind::Bool { .. } => v.as_bool().map(ParamValue::Bool).ok_or_else(found),
        ParamKind::Choice { options, .. } => {
            let s = v.as_str().ok_or_else(found)?;
            options
                .iter()
                .position(|o| *o == s)
                .map(ParamValue::Choice)
                .ok_or_else(|| {
                    format!(
                        "\"{s}\" is not one of {}{}",
                        quoted_list(options),
                        suggest(s, options)
                    )
                })
        }
        ParamKind::Text { .. } => v
            .as_str()
            .map(|s| ParamValue::Text(s.to_owned()))
            .ok_or_else(found),
    }
}

/// An integer JSON value (also `3.0`), widened so that huge values can be range-checked.
fn as_integer(v: &Value) -> Option<i128> {
    if let Some(i) = v.as_i64() {
        return Some(i128::from(i));
    }
    if let Some(u) = v.as_u64() {
        return Some(i128::from(u));
    }
    let f = v.as_f64()?;
    (f.fract() == 0.0 && f.abs() < 1.0e30).then_some(f as i128)
}

/// The JSON value of a parameter, as files store it.
#[must_use]
pub fn param_to_json(spec: &ParamSpec, v: &ParamValue) -> Value {
    match (v, spec.kind) {
        (ParamValue::Float(x), _) => {
            serde_json::Number::from_f64(*x).map_or(Value::Null, Value::Number)
        }
        (ParamValue::Int(x), _) => Value::from(*x),
        (ParamValue::Bool(b), _) => Value::Bool(*b),
        (ParamValue::Choice(i), ParamKind::Choice { options, .. }) => {
            Value::String(options.get(*i).copied().unwrap_or_default().to_owned())
        }
        (ParamValue::Choice(i), _) => Value::from(*i),
        (ParamValue::Text(s), _) => Value::String(s.clone()),
    }
}

fn number_value(x: f64) -> Value {
    serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
}

/// The graph as a JSON value with every parameter written out and nodes sorted by id;
/// subgraph nodes reference their files.
#[must_use]
pub fn to_value(g: &Graph) -> Value {
    to_value_with(g, false)
}

/// The JSON of one graph parameter's declaration, its value as the default.
fn parameter_to_json(p: &GraphParam) -> Value {
    let mut m = Map::new();
    let (ty, range) = match p.spec.kind {
        ParamKind::Float { soft, hard, .. } => ("float", Some((hard, soft))),
        ParamKind::Int { soft, hard, .. } => (
            "int",
            Some((
                (hard.0 as f64, hard.1 as f64),
                (soft.0 as f64, soft.1 as f64),
            )),
        ),
        ParamKind::Bool { .. } => ("bool", None),
        ParamKind::Seed { .. } => ("seed", None),
        ParamKind::Text { .. } => ("text", None),
        ParamKind::Choice { options, .. } => {
            m.insert("options".into(), Value::from(options.to_vec()));
            ("choice", None)
        }
    };
    m.insert("type".into(), Value::from(ty));
    m.insert("default".into(), param_to_json(p.spec, &p.value));
    if let Some((hard, soft)) = range {
        let num = |x: f64| {
            if ty == "int" {
                Value::from(x as i64)
            } else {
                number_value(x)
            }
        };
        m.insert("min".into(), num(hard.0));
        m.insert("max".into(), num(hard.1));
        if soft != hard {
            m.insert("soft_min".into(), num(soft.0));
            m.insert("soft_max".into(), num(soft.1));
        }
    }
    if !p.spec.unit.is_empty() {
        m.insert("unit".into(), Value::from(p.spec.unit));
    }
    if !p.spec.doc.is_empty() {
        m.insert("doc".into(), Value::from(p.spec.doc));
    }
    Value::Object(m)
}

/// [`to_value`], with every subgraph's graph `embedded` when `embed` (a self-contained
/// document: build copies, tiled plans, recovery files).
#[must_use]
pub fn to_value_with(g: &Graph, embed: bool) -> Value {
    to_value_as(
        g,
        if embed {
            SubgraphsAs::Embedded
        } else {
            SubgraphsAs::Recorded
        },
    )
}

/// How [`to_value_as`] writes a subgraph node.
#[derive(Clone, Copy, PartialEq, Eq)]
enum SubgraphsAs {
    /// Its path and the hash the file recorded (the file as saved).
    Recorded,
    /// Its path, the recorded hash and the whole graph embedded.
    Embedded,
    /// Its path and the content hash of the graph as loaded now: what [`content_hash`] hashes,
    /// so a graph's hash covers its subgraphs at any depth without serialising them again.
    Current,
}

fn to_value_as(g: &Graph, how: SubgraphsAs) -> Value {
    let mut nodes: Vec<&NodeInstance> = g.nodes.iter().collect();
    nodes.sort_by(|a, b| a.id.cmp(&b.id));
    let nodes: Vec<Value> = nodes
        .into_iter()
        .map(|n| {
            let params: Map<String, Value> = n
                .def
                .params
                .iter()
                .zip(&n.params)
                .filter(|(s, _)| !n.bindings.contains_key(s.name))
                .map(|(s, v)| (s.name.to_owned(), param_to_json(s, v)))
                .collect();
            let inputs: Map<String, Value> = n
                .def
                .spec
                .inputs
                .iter()
                .zip(&n.inputs)
                .filter_map(|(s, r)| {
                    r.as_ref()
                        .map(|r| (s.name.to_owned(), Value::String(r.to_string())))
                })
                .collect();
            let mut v = serde_json::json!({
                "id": n.id,
                "type": n.def.spec.id,
                "params": params,
                "inputs": inputs,
                "position": [number_value(n.position[0]), number_value(n.position[1])],
            });
            if let Some(o) = v.as_object_mut() {
                if !n.bindings.is_empty() {
                    let bind: Map<String, Value> = n
                        .bindings
                        .iter()
                        .map(|(k, g)| (k.clone(), Value::from(g.as_str())))
                        .collect();
                    o.insert("bind".into(), Value::Object(bind));
                }
                if let Some(sg) = &n.subgraph {
                    o.insert("graph".into(), Value::from(sg.path.as_str()));
                    let hash = if how == SubgraphsAs::Current {
                        &sg.hash
                    } else {
                        &sg.recorded_hash
                    };
                    o.insert("hash".into(), Value::from(hash.as_str()));
                    if how == SubgraphsAs::Embedded {
                        o.insert("embedded".into(), to_value_as(&sg.graph, how));
                    }
                }
            }
            v
        })
        .collect();
    let outputs: Map<String, Value> = g
        .outputs
        .iter()
        .map(|(k, r)| (k.clone(), Value::String(r.to_string())))
        .collect();
    let mut v = serde_json::json!({
        "format": FORMAT_TAG,
        "version": CURRENT_VERSION,
        "name": g.name,
        "seed": g.seed,
        "world": {
            "size_m": number_value(g.world.size_m),
            "height_min_m": number_value(g.world.height_min_m),
            "height_max_m": number_value(g.world.height_max_m),
        },
        "resolution": g.resolution,
        "nodes": nodes,
        "outputs": outputs,
    });
    if let Some(o) = v.as_object_mut() {
        if !g.doc.is_empty() {
            o.insert("doc".into(), Value::from(g.doc.as_str()));
        }
        if !g.parameters.is_empty() {
            let ps: Map<String, Value> = g
                .parameters
                .iter()
                .map(|p| (p.spec.name.to_owned(), parameter_to_json(p)))
                .collect();
            o.insert("parameters".into(), Value::Object(ps));
        }
    }
    v
}

/// The text of [`to_value_with`]`(g, true)`: a self-contained copy of the graph.
#[must_use]
pub fn to_string_embedded(g: &Graph) -> String {
    let mut s =
        serde_json::to_string_pretty(&canonical(to_value_with(g, true))).unwrap_or_default();
    s.push('\n');
    s
}

/// The file text: pretty JSON with sorted keys and a final newline. Same graph, same bytes.
#[must_use]
pub fn to_string(g: &Graph) -> String {
    // serde_json's map is a BTreeMap (no `preserve_order`), so keys come out sorted.
    let mut s = serde_json::to_string_pretty(&canonical(to_value(g))).unwrap_or_default();
    s.push('\n');
    s
}

/// Sorts object keys recursively, whatever map type serde_json was built with.
fn canonical(v: Value) -> Value {
    match v {
        Value::Object(map) => {
            let mut entries: Vec<(String, Value)> = map.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k, canonical(v)))
                    .collect(),
            )
        }
        Value::Array(a) => Value::Array(a.into_iter().map(canonical).collect()),
        other => other,
    }
}

/// Saves a graph atomically.
pub fn save_file(path: &Path, g: &Graph) -> std::io::Result<()> {
    super::atomic::write_bytes_atomic(path, to_string(g).as_bytes())
}
