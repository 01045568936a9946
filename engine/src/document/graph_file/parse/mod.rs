//! Building the runtime graph from a migrated file value: world, nodes, wires, outputs,
//! every problem collected as a diagnostic.

pub(super) mod subgraph;

use super::{
    check_keys, error, kind_of, number, params::param_value, params::parse_bindings,
    params::parse_parameters, string_field, suggest, unknown_name, Ctx, GEOREF_KEYS,
    MAX_RESOLUTION, NODE_KEYS, TOP_KEYS, WORLD_KEYS,
};
use crate::field::World;
use crate::graph::{
    is_valid_id, Diagnostic, Graph, GraphParam, NodeInstance, PortRef, SUBGRAPH_TYPE,
};
use crate::io::trust::{self};
use crate::node::Registry;
use serde_json::Map;
use serde_json::Value;
use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use subgraph::{chain_summary, load_subgraph};

/// Builds the runtime graph from a (migrated) value, pushing every problem into `diags`.
pub(super) fn from_value(
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
            error(
                diags,
                None,
                "seed",
                format!("expected an integer in [0, {}], found {v}", u64::MAX),
            );
            0
        }),
    };
    let resolution = match root.get("resolution") {
        None => 512,
        Some(v) => match v.as_u64() {
            Some(r) if (2..=MAX_RESOLUTION).contains(&r) => r as usize,
            _ => {
                error(
                    diags,
                    None,
                    "resolution",
                    format!("expected an integer in [2, {MAX_RESOLUTION}], found {v}"),
                );
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
        Some(other) => error(
            diags,
            None,
            "nodes",
            format!("expected an array of nodes, found {}", kind_of(other)),
        ),
        None => error(diags, None, "nodes", "missing; expected an array of nodes"),
    }

    let mut outputs = parse_outputs(root.get("outputs"), diags);
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
        frames: parse_frames(root.get("frames"), diags),
        georef: root
            .get("world")
            .and_then(|w| w.get("georef"))
            .and_then(|v| parse_georef(v, diags)),
        nodata: root
            .get("nodata")
            .and_then(|v| parse_ref(v, None, "nodata", diags)),
    };
    graph.apply_parameters();
    diags.extend(graph.validate_refs(&|id| broken.contains(id)));
    check_expansion(&graph, ctx, diags);
    Some(graph)
}

/// The graph's named `outputs`: valid names, each a reference.
fn parse_outputs(v: Option<&Value>, diags: &mut Vec<Diagnostic>) -> BTreeMap<String, PortRef> {
    let mut outputs = BTreeMap::new();
    match v {
        None => {}
        Some(Value::Object(map)) => {
            for (name, r) in map {
                let field = format!("outputs.{name}");
                if !is_valid_id(name) {
                    error(diags, None, field.clone(), "output names use only letters, digits, '_' and '-' (they become file names)");
                }
                if let Some(r) = parse_ref(r, None, &field, diags) {
                    outputs.insert(name.clone(), r);
                }
            }
        }
        Some(other) => error(
            diags,
            None,
            "outputs",
            format!(
                "expected an object mapping output names to \"node.port\", found {}",
                kind_of(other)
            ),
        ),
    }
    outputs
}

/// Refuses a graph whose subgraphs expand past the node limit.
fn check_expansion(graph: &Graph, ctx: &Ctx, diags: &mut Vec<Diagnostic>) {
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
        error(diags, None, "nodes", format!(
                "with its subgraphs expanded this graph{chain} has more than {} nodes: Orogen refuses graphs that large (a subgraph used more than once at each of several levels multiplies)",
                trust::MAX_EXPANDED_NODES
            ));
        return;
    }
    // Bytes, not only nodes: a build copy, a plan and a recovery file embed every use of a
    // subgraph, so a large `doc` used 2ⁿ times makes a copy of gigabytes from kilobytes.
    let cap = MAX_EMBEDDED_BYTES;
    let len = subgraph::embedded_len(graph, cap);
    if len > cap {
        error(diags, None, "nodes", format!(
            "with its subgraphs embedded this graph is more than {} of text (a build copy holds every use of a subgraph): Orogen refuses graphs that large (a subgraph used more than once at each of several levels multiplies)",
            trust::human_bytes(cap)
        ));
    }
}

/// Most bytes a graph's compact text may have with every subgraph embedded: a quarter of
/// [`trust::MAX_GRAPH_BYTES`], so the pretty-printed copies Orogen writes stay readable.
pub const MAX_EMBEDDED_BYTES: u64 = trust::MAX_GRAPH_BYTES / 4;

/// Fills in omitted ports (`"node"` means the node's first output).
pub(super) fn resolve_default_ports(
    nodes: &mut [NodeInstance],
    outputs: &mut BTreeMap<String, PortRef>,
) {
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

/// `world.georef`: `{"crs": "EPSG:n" (optional), "geographic": bool, "west", "south", "east",
/// "north"}`.
fn parse_georef(v: &Value, diags: &mut Vec<Diagnostic>) -> Option<crate::graph::Georef> {
    let Some(obj) = v.as_object() else {
        error(
            diags,
            None,
            "world.georef",
            format!(
                "expected an object with west, south, east, north (and crs), found {}",
                kind_of(v)
            ),
        );
        return None;
    };
    check_keys(obj, GEOREF_KEYS, None, "world.georef.", diags);
    let epsg = match obj.get("crs") {
        None | Some(Value::Null) => None,
        Some(c) => match c
            .as_str()
            .and_then(|c| c.strip_prefix("EPSG:"))
            .map(str::parse::<u32>)
        {
            Some(Ok(code)) if code > 0 => Some(code),
            _ => {
                error(
                    diags,
                    None,
                    "world.georef.crs",
                    format!("expected \"EPSG:<code>\", found {c}"),
                );
                return None;
            }
        },
    };
    let geographic = match obj.get("geographic") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            error(
                diags,
                None,
                "world.georef.geographic",
                format!("expected true or false, found {}", kind_of(other)),
            );
            return None;
        }
    };
    let mut side = |k: &str| number(obj.get(k), &format!("world.georef.{k}"), f64::NAN, diags);
    let (west, south, east, north) = (side("west"), side("south"), side("east"), side("north"));
    if !(west < east
        && south < north
        && west.is_finite()
        && east.is_finite()
        && south.is_finite()
        && north.is_finite())
    {
        error(
            diags,
            None,
            "world.georef",
            format!("bounds west {west}, south {south}, east {east}, north {north}: expected finite numbers with west < east and south < north"),
        );
        return None;
    }
    Some(crate::graph::Georef {
        epsg,
        geographic,
        west,
        south,
        east,
        north,
    })
}

pub(super) fn parse_world(v: Option<&Value>, diags: &mut Vec<Diagnostic>) -> World {
    let mut world = World {
        size_m: 4096.0,
        height_min_m: 0.0,
        height_max_m: 1000.0,
    };
    let Some(v) = v else { return world };
    let Some(obj) = v.as_object() else {
        error(
            diags,
            None,
            "world",
            format!(
                "expected an object with size_m, height_min_m, height_max_m, found {}",
                kind_of(v)
            ),
        );
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
        error(
            diags,
            None,
            "world.size_m",
            format!(
                "expected a size in metres in (0, 10000000], found {}",
                world.size_m
            ),
        );
    }
    for (f, h) in [
        ("world.height_min_m", world.height_min_m),
        ("world.height_max_m", world.height_max_m),
    ] {
        if h.abs() > 1.0e6 {
            error(
                diags,
                None,
                f,
                format!("expected a height in metres in [-1000000, 1000000], found {h}"),
            );
        }
    }
    if world.height_max_m <= world.height_min_m {
        error(
            diags,
            None,
            "world.height_max_m",
            format!(
                "must be above height_min_m ({} m), found {} m",
                world.height_min_m, world.height_max_m
            ),
        );
    }
    world
}

pub(super) fn parse_ref(
    v: &Value,
    node: Option<&str>,
    field: &str,
    diags: &mut Vec<Diagnostic>,
) -> Option<PortRef> {
    let Some(s) = v.as_str() else {
        error(
            diags,
            node,
            field,
            format!(
                "expected a reference \"node\" or \"node.port\", found {}",
                kind_of(v)
            ),
        );
        return None;
    };
    let (n, p) = match s.split_once('.') {
        Some((n, p)) => (n, Some(p)),
        None => (s, None),
    };
    if !is_valid_id(n) || p.is_some_and(|p| !is_valid_id(p)) {
        error(
            diags,
            node,
            field,
            format!("\"{s}\" is not a reference; expected \"node\" or \"node.port\""),
        );
        return None;
    }
    // The port is filled in by `resolve_default_ports` when omitted.
    Some(PortRef::new(n, p.unwrap_or("")))
}

/// Node ids seen so far, and those whose node could not be built (their wires are not
/// reported again).
pub(super) struct Seen<'a> {
    declared: &'a mut HashSet<String>,
    broken: &'a mut HashSet<String>,
}

pub(super) fn parse_node(
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
        error(
            diags,
            None,
            at,
            format!("expected a node object, found {}", kind_of(nv)),
        );
        return None;
    };
    let id = node_id(obj, &at, diags)?;
    if !declared.insert(id.clone()) {
        error(
            diags,
            Some(&id),
            "id",
            format!("duplicate node id (again at {at}); ids must be unique"),
        );
        return None;
    }
    let nid = Some(id.as_str());
    check_keys(obj, NODE_KEYS, nid, "", diags);
    let type_name = match obj.get("type") {
        Some(Value::String(s)) => s.as_str(),
        other => {
            error(
                diags,
                nid,
                "type",
                format!(
                    "expected a node type name, found {}",
                    other.map_or("nothing", kind_of)
                ),
            );
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
                error(
                    diags,
                    nid,
                    k,
                    format!("only subgraph nodes (\"type\": \"{SUBGRAPH_TYPE}\") have \"{k}\""),
                );
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
        error(
            diags,
            nid,
            "type",
            format!(
                "unknown node type \"{type_name}\"{}; `orogen nodes` lists them all",
                suggest(type_name, &ids)
            ),
        );
        broken.insert(id);
        return None;
    };
    let mut node = NodeInstance::new(id.clone(), def);
    node.subgraph = subgraph;
    node.bindings = parse_bindings(obj.get("bind"), def, nid, parameters, diags);

    parse_values(obj.get("params"), &mut node, nid, diags);
    parse_inputs(obj.get("inputs"), &mut node, nid, diags);
    parse_position(obj.get("position"), &mut node, nid, diags);
    parse_canvas_fields(obj, &mut node, nid, diags);
    Some(node)
}

/// Longest node label kept.
const MAX_LABEL_CHARS: usize = 200;

/// A node's `bypass` (a boolean) and `label` (text for the canvas, at most
/// [`MAX_LABEL_CHARS`] characters).
fn parse_canvas_fields(
    obj: &Map<String, Value>,
    node: &mut NodeInstance,
    nid: Option<&str>,
    diags: &mut Vec<Diagnostic>,
) {
    match obj.get("bypass") {
        None => {}
        Some(Value::Bool(b)) => node.bypass = *b,
        Some(other) => error(
            diags,
            nid,
            "bypass",
            format!("expected true or false, found {other}"),
        ),
    }
    match obj.get("label") {
        None => {}
        Some(Value::String(s)) if s.chars().count() <= MAX_LABEL_CHARS => node.label.clone_from(s),
        Some(Value::String(_)) => error(
            diags,
            nid,
            "label",
            format!("a label has at most {MAX_LABEL_CHARS} characters"),
        ),
        Some(other) => error(
            diags,
            nid,
            "label",
            format!("expected text, found {}", kind_of(other)),
        ),
    }
}

/// A node's `id`: present, a string, a valid id.
fn node_id(obj: &Map<String, Value>, at: &str, diags: &mut Vec<Diagnostic>) -> Option<String> {
    match obj.get("id") {
        Some(Value::String(s)) if is_valid_id(s) => Some(s.clone()),
        Some(Value::String(s)) => {
            error(
                diags,
                None,
                format!("{at}.id"),
                format!("\"{s}\" is not a valid node id: use 1 to 128 letters, digits, '_' or '-'"),
            );
            None
        }
        Some(other) => {
            error(
                diags,
                None,
                format!("{at}.id"),
                format!("expected a string, found {}", kind_of(other)),
            );
            None
        }
        None => {
            error(
                diags,
                None,
                format!("{at}.id"),
                "missing; every node needs a unique id",
            );
            None
        }
    }
}

/// A node's `params`: each a known parameter with a valid value (bound ones are skipped: they
/// take their graph parameter's value).
fn parse_values(
    v: Option<&Value>,
    node: &mut NodeInstance,
    nid: Option<&str>,
    diags: &mut Vec<Diagnostic>,
) {
    let def = node.def;
    match v {
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
                    None => error(
                        diags,
                        nid,
                        field,
                        unknown_name("parameter", "parameters", def.spec.id, k, &names),
                    ),
                    Some(pi) => match param_value(&def.params[pi], v) {
                        Ok(pv) => node.params[pi] = pv,
                        Err(msg) => error(diags, nid, field, msg),
                    },
                }
            }
        }
        Some(other) => error(
            diags,
            nid,
            "params",
            format!(
                "expected an object of parameter values, found {}",
                kind_of(other)
            ),
        ),
    }
}

/// A node's `inputs`: each a known port wired to `"node"` or `"node.port"`.
fn parse_inputs(
    v: Option<&Value>,
    node: &mut NodeInstance,
    nid: Option<&str>,
    diags: &mut Vec<Diagnostic>,
) {
    let def = node.def;
    match v {
        None => {}
        Some(Value::Object(inputs)) => {
            let names: Vec<&str> = def.spec.inputs.iter().map(|p| p.name).collect();
            for (k, v) in inputs {
                let field = format!("inputs.{k}");
                match def.input_index(k) {
                    None => error(
                        diags,
                        nid,
                        field,
                        unknown_name("input port", "inputs", def.spec.id, k, &names),
                    ),
                    Some(pi) => {
                        if let Some(r) = parse_ref(v, nid, &field, diags) {
                            node.inputs[pi] = Some(r);
                        }
                    }
                }
            }
        }
        Some(other) => error(
            diags,
            nid,
            "inputs",
            format!(
                "expected an object mapping input ports to \"node.port\", found {}",
                kind_of(other)
            ),
        ),
    }
}

/// A node's `position` on the canvas: two finite numbers.
fn parse_position(
    v: Option<&Value>,
    node: &mut NodeInstance,
    nid: Option<&str>,
    diags: &mut Vec<Diagnostic>,
) {
    match v {
        None => {}
        Some(Value::Array(a))
            if a.len() == 2 && a.iter().all(|v| v.as_f64().is_some_and(f64::is_finite)) =>
        {
            node.position = [a[0].as_f64().unwrap_or(0.0), a[1].as_f64().unwrap_or(0.0)];
        }
        Some(other) => error(
            diags,
            nid,
            "position",
            format!("expected [x, y] with two numbers, found {other}"),
        ),
    }
}

/// Most comment frames kept.
const MAX_FRAMES: usize = 10_000;

/// `frames`: comment frames, each `{ "title": text, "rect": [x, y, width, height] }` with a
/// positive size.
fn parse_frames(v: Option<&Value>, diags: &mut Vec<Diagnostic>) -> Vec<crate::graph::Frame> {
    let Some(v) = v else {
        return Vec::new();
    };
    let Some(list) = v.as_array() else {
        error(
            diags,
            None,
            "frames",
            format!("expected a list of frames, found {}", kind_of(v)),
        );
        return Vec::new();
    };
    if list.len() > MAX_FRAMES {
        error(
            diags,
            None,
            "frames",
            format!("more than {MAX_FRAMES} frames"),
        );
        return Vec::new();
    }
    let mut frames = Vec::new();
    for (i, f) in list.iter().enumerate() {
        let at = format!("frames[{i}]");
        let title = match f.get("title") {
            Some(Value::String(t)) if t.chars().count() <= MAX_LABEL_CHARS => t.clone(),
            None => String::new(),
            Some(_) => {
                error(
                    diags,
                    None,
                    format!("{at}.title"),
                    format!("expected text of at most {MAX_LABEL_CHARS} characters"),
                );
                continue;
            }
        };
        let rect = f.get("rect").and_then(Value::as_array).and_then(|a| {
            let n: Vec<f64> = a
                .iter()
                .filter_map(Value::as_f64)
                .filter(|x| x.is_finite())
                .collect();
            (a.len() == 4 && n.len() == 4 && n[2] > 0.0 && n[3] > 0.0)
                .then(|| [n[0], n[1], n[2], n[3]])
        });
        let Some(rect) = rect else {
            error(
                diags,
                None,
                format!("{at}.rect"),
                "expected [x, y, width, height] with a positive width and height".to_owned(),
            );
            continue;
        };
        frames.push(crate::graph::Frame { title, rect });
    }
    frames
}
