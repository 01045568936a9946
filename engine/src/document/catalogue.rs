//! The node catalogue (`orogen nodes`, `orogen nodes --json`), derived from the registry.

use crate::node::{clean_doc, ParamKind, ParamSpec, PortSpec, Registry};
use serde_json::{json, Value};

fn port_json(p: &PortSpec) -> Value {
    json!({ "name": p.name, "kind": p.kind.name(), "required": p.required, "doc": p.doc })
}

fn param_json(p: &ParamSpec) -> Value {
    let mut v = json!({
        "name": p.name,
        "label": p.label(),
        "doc": p.doc_text(),
        "unit": p.unit,
        "default": super::graph_file::param_to_json(p, &p.default_value()),
    });
    let (kind, extra) = match p.kind {
        ParamKind::Float { soft, hard, .. } => (
            "float",
            json!({ "soft": [soft.0, soft.1], "hard": [hard.0, hard.1] }),
        ),
        ParamKind::Int { soft, hard, .. } => (
            "int",
            json!({ "soft": [soft.0, soft.1], "hard": [hard.0, hard.1] }),
        ),
        ParamKind::Seed { .. } => ("seed", json!({ "hard": [0, u32::MAX] })),
        ParamKind::Bool { .. } => ("bool", json!({})),
        ParamKind::Choice { options, .. } => ("choice", json!({ "options": options })),
        ParamKind::Text { .. } => ("text", json!({})),
    };
    if let (Some(o), Some(e)) = (v.as_object_mut(), extra.as_object()) {
        o.insert("kind".into(), kind.into());
        o.extend(e.clone());
        if let Some((param, options)) = p.applies_when {
            o.insert(
                "applies_when".into(),
                json!({ "param": param, "one_of": options }),
            );
        }
    }
    v
}

/// The machine-readable catalogue: one object per node type, sorted by id.
#[must_use]
pub fn to_json(reg: &Registry) -> Value {
    Value::Array(
        reg.defs()
            .iter()
            .map(|d| {
                json!({
                    "id": d.spec.id,
                    "label": d.spec.label,
                    "category": d.spec.category.name(),
                    "version": d.spec.version,
                    "doc": clean_doc(d.spec.doc),
                    "inputs": d.spec.inputs.iter().map(port_json).collect::<Vec<_>>(),
                    "outputs": d.spec.outputs.iter().map(port_json).collect::<Vec<_>>(),
                    "params": d.params.iter().map(param_json).collect::<Vec<_>>(),
                })
            })
            .collect(),
    )
}

/// The human-readable catalogue, grouped by category.
#[must_use]
pub fn to_text(reg: &Registry) -> String {
    use std::fmt::Write;
    let mut defs: Vec<_> = reg.defs().iter().collect();
    defs.sort_by_key(|d| (d.spec.category, d.spec.id));
    let mut s = String::new();
    let mut category = None;
    for d in defs {
        if category != Some(d.spec.category) {
            category = Some(d.spec.category);
            let _ = writeln!(s, "== {} ==\n", d.spec.category.name());
        }
        let _ = writeln!(s, "{} — {}", d.spec.id, d.spec.label);
        let _ = writeln!(s, "  {}", clean_doc(d.spec.doc));
        for p in d.spec.inputs {
            let _ = writeln!(
                s,
                "  in  {}: {}{} — {}",
                p.name,
                p.kind.name(),
                if p.required { "" } else { " (optional)" },
                p.doc
            );
        }
        for p in d.spec.outputs {
            let _ = writeln!(s, "  out {}: {} — {}", p.name, p.kind.name(), p.doc);
        }
        for p in d.params {
            let unit = unit_suffix(p);
            let when = p.applies_when.map_or_else(String::new, |(param, options)| {
                format!(
                    " [only when {param} is {}]",
                    crate::node::quoted_list(options)
                )
            });
            let _ = writeln!(
                s,
                "  param {} = {}{unit}  ({}; \"{}\"){when} — {}",
                p.name,
                p.default_text(),
                p.expected(),
                p.label(),
                p.doc_text()
            );
        }
        s.push('\n');
    }
    s
}

/// " m", " °", or nothing for a relative value.
fn unit_suffix(p: &ParamSpec) -> String {
    if p.unit.is_empty() {
        String::new()
    } else {
        format!(" {}", p.unit)
    }
}

/// A table cell: one line, `|` escaped.
fn cell(s: &str) -> String {
    s.replace('\n', " ").replace('|', "\\|")
}

/// The catalogue as a Markdown page (`orogen nodes --markdown`, saved as `docs/nodes.md`;
/// a test fails when the saved page differs from this).
#[must_use]
pub fn to_markdown(reg: &Registry) -> String {
    use std::fmt::Write;
    let mut defs: Vec<_> = reg.defs().iter().collect();
    defs.sort_by_key(|d| (d.spec.category, d.spec.id));
    let mut s = String::from(
        "# Node catalogue\n\n\
         Generated from the node declarations by `orogen nodes --markdown > docs/nodes.md` \
         (a test fails when this page is stale). Parameters are in world units (metres, \
         degrees) or relative units (fractions of the world size or of the height range); \
         *soft* is the slider's range, *hard* what a file may hold.\n\n",
    );
    let mut category = None;
    for d in &defs {
        if category != Some(d.spec.category) {
            category = Some(d.spec.category);
            let _ = write!(s, "\n- **{}:**", d.spec.category.name());
        }
        let _ = write!(s, " [`{}`](#{})", d.spec.id, d.spec.id);
    }
    s.push_str("\n\n");
    category = None;
    for d in defs {
        if category != Some(d.spec.category) {
            category = Some(d.spec.category);
            let _ = writeln!(s, "## {}\n", d.spec.category.name());
        }
        let _ = writeln!(
            s,
            "<a id=\"{id}\"></a>\n### `{id}` — {}\n\n{}\n",
            d.spec.label,
            clean_doc(d.spec.doc),
            id = d.spec.id
        );
        if !d.spec.inputs.is_empty() || !d.spec.outputs.is_empty() {
            s.push_str("| port | kind | |\n|---|---|---|\n");
            for p in d.spec.inputs {
                let opt = if p.required { "" } else { " (optional)" };
                let _ = writeln!(
                    s,
                    "| in `{}` | {}{opt} | {} |",
                    p.name,
                    p.kind.name(),
                    cell(p.doc)
                );
            }
            for p in d.spec.outputs {
                let _ = writeln!(
                    s,
                    "| out `{}` | {} | {} |",
                    p.name,
                    p.kind.name(),
                    cell(p.doc)
                );
            }
            s.push('\n');
        }
        if !d.params.is_empty() {
            s.push_str("| parameter | default | range | |\n|---|---|---|---|\n");
            for p in d.params {
                let unit = unit_suffix(p);
                let when = p.applies_when.map_or_else(String::new, |(param, options)| {
                    format!(
                        " Only when `{param}` is {}.",
                        crate::node::quoted_list(options)
                    )
                });
                let _ = writeln!(
                    s,
                    "| `{}` ({}) | {}{unit} | {} | {}{when} |",
                    p.name,
                    cell(&p.label()),
                    cell(&p.default_text()),
                    cell(&p.expected()),
                    cell(&p.doc_text())
                );
            }
            s.push('\n');
        }
    }
    s
}

/// `s` inside a Python triple-quoted string.
fn py_doc(s: &str) -> String {
    s.replace('\\', "\\\\").replace("\"\"\"", "\\\"\\\"\\\"")
}

/// `Word` for `word_word` ids.
fn py_class(id: &str) -> String {
    id.split('_')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_uppercase().chain(c).collect::<String>())
                .unwrap_or_default()
        })
        .collect()
}

/// The Python type of a parameter's values.
fn py_type(p: &ParamSpec) -> String {
    match p.kind {
        ParamKind::Float { .. } => "float".into(),
        ParamKind::Int { .. } | ParamKind::Seed { .. } => "int".into(),
        ParamKind::Bool { .. } => "bool".into(),
        ParamKind::Text { .. } => "str".into(),
        ParamKind::Choice { options, .. } => format!(
            "Literal[{}]",
            options
                .iter()
                .map(|o| format!("{o:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The catalogue as the Python module `orogen.nodes` (`orogen nodes --python`, saved as
/// `python/orogen/nodes.py`; a test fails when the saved module differs from this): one
/// `TypedDict` of parameters per node type, documented from the declarations, `NodeType`
/// (the ids) and `PARAMS` (id → its `TypedDict`).
#[must_use]
pub fn to_python(reg: &Registry) -> String {
    use std::fmt::Write;
    let mut defs: Vec<_> = reg.defs().iter().collect();
    defs.sort_by_key(|d| d.spec.id);
    let mut s = String::from(
        "\"\"\"Orogen's node types and their parameters, for type checkers and editors' completion.\n\n\
         Generated from the node declarations by ``orogen nodes --python > python/orogen/nodes.py``\n\
         (a test fails when this file is stale); docs/nodes.md is the same catalogue as a page. Each\n\
         node type has a ``TypedDict`` of its parameters (values as a graph file holds them; a\n\
         parameter left out keeps its default)::\n\n    \
         from orogen.nodes import ThermalErosion\n    \
         scree: ThermalErosion = {\"talus_deg\": 32.0}\n    \
         for name, value in scree.items():\n        \
         graph.set(f\"scree.{name}\", value)\n\"\"\"\n\n\
         # fmt: off\n\
         from typing import Dict, Literal, TypedDict\n\n",
    );
    for d in &defs {
        let _ = writeln!(
            s,
            "\nclass {}(TypedDict, total=False):\n    \"\"\"``{}`` — {} ({}).\n\n    {}\n",
            py_class(d.spec.id),
            d.spec.id,
            py_doc(d.spec.label),
            d.spec.category.name(),
            py_doc(&clean_doc(d.spec.doc)).replace('\n', "\n    ")
        );
        for p in d.spec.inputs {
            let opt = if p.required { "" } else { ", optional" };
            let _ = writeln!(
                s,
                "    Input ``{}`` ({}{opt}): {}",
                p.name,
                p.kind.name(),
                py_doc(p.doc)
            );
        }
        for p in d.spec.outputs {
            let _ = writeln!(
                s,
                "    Output ``{}`` ({}): {}",
                p.name,
                p.kind.name(),
                py_doc(p.doc)
            );
        }
        s.push_str("    \"\"\"\n");
        if d.params.is_empty() {
            s.push_str("    pass\n");
        }
        for p in d.params {
            let when = p.applies_when.map_or_else(String::new, |(param, options)| {
                format!(
                    " Only when {param} is {}.",
                    crate::node::quoted_list(options)
                )
            });
            let _ = writeln!(
                s,
                "    {}: {}\n    \"\"\"{}: default {}{}; {}. {}{when}\"\"\"",
                p.name,
                py_type(p),
                py_doc(&p.label()),
                py_doc(&p.default_text()),
                unit_suffix(p),
                py_doc(&p.expected()),
                py_doc(&p.doc_text()).replace('\n', " ")
            );
        }
    }
    s.push_str("\n\nNodeType = Literal[\n");
    for d in &defs {
        let _ = writeln!(s, "    {:?},", d.spec.id);
    }
    s.push_str("]\n\"\"\"The id of a node type (a graph file's ``\"type\"``).\"\"\"\n\nPARAMS: Dict[str, type] = {\n");
    for d in &defs {
        let _ = writeln!(s, "    {:?}: {},", d.spec.id, py_class(d.spec.id));
    }
    s.push_str("}\n\"\"\"Node type id → the ``TypedDict`` of its parameters.\"\"\"\n");
    s
}
