//! Node definitions made at run time: a subgraph's interface (its inputs, outputs and
//! parameters come from a graph file) and graph parameters' declarations. The rest of the
//! engine holds node and parameter declarations as `&'static`; these are leaked once per
//! distinct declaration and reused (a map from the declaration's text to the leaked value),
//! so reopening the same files does not grow memory.
//!
//! A subgraph node is a node type made at run time because everything downstream of loading
//! (validation, the canvas, the parameter panel, the node docs, the diff) reads a node through its
//! `&'static NodeDef`; the alternative, a per-instance port list beside `def`, would have touched
//! every consumer.

use super::{Category, NodeDef, NodeSpec, ParamKind, ParamSpec, PortSpec};
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

type Table<T> = OnceLock<Mutex<HashMap<String, T>>>;

fn intern<T: Copy>(table: &'static Table<T>, key: String, make: impl FnOnce() -> T) -> T {
    let mut t = table
        .get_or_init(|| Mutex::new(HashMap::new()))
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    *t.entry(key).or_insert_with(make)
}

/// A `&'static str` equal to `s`.
#[must_use]
pub fn str(s: &str) -> &'static str {
    static T: Table<&'static str> = OnceLock::new();
    intern(&T, s.to_owned(), || {
        Box::leak(s.to_owned().into_boxed_str()) as &'static str
    })
}

/// A `&'static [&'static str]` equal to `v`.
#[must_use]
pub fn strs(v: &[String]) -> &'static [&'static str] {
    static T: Table<&'static [&'static str]> = OnceLock::new();
    intern(&T, format!("{v:?}"), || {
        Box::leak(
            v.iter()
                .map(|s| str(s))
                .collect::<Vec<_>>()
                .into_boxed_slice(),
        ) as &'static [&'static str]
    })
}

/// A leaked parameter declaration equal to `p` (its strings must already be interned).
#[must_use]
pub fn param(p: ParamSpec) -> &'static ParamSpec {
    static T: Table<&'static ParamSpec> = OnceLock::new();
    intern(&T, format!("{p:?}"), || {
        Box::leak(Box::new(p)) as &'static ParamSpec
    })
}

/// The declaration of a node type made at run time.
pub struct Dynamic {
    pub id: &'static str,
    pub label: String,
    pub doc: String,
    pub category: Category,
    pub inputs: Vec<PortSpec>,
    pub outputs: Vec<PortSpec>,
    pub params: Vec<ParamSpec>,
    pub eval: super::EvalFn,
}

/// A leaked node definition for `d`, the same one for equal declarations.
#[must_use]
pub fn node_def(d: Dynamic) -> &'static NodeDef {
    static T: Table<&'static NodeDef> = OnceLock::new();
    let key = format!(
        "{}|{}|{}|{:?}|{:?}|{:?}|{:?}|{:p}",
        d.id, d.label, d.doc, d.category, d.inputs, d.outputs, d.params, d.eval as *const ()
    );
    intern(&T, key, || {
        let spec = NodeSpec {
            id: d.id,
            label: str(&d.label),
            category: d.category,
            version: 1,
            doc: str(&d.doc),
            inputs: Box::leak(d.inputs.into_boxed_slice()),
            outputs: Box::leak(d.outputs.into_boxed_slice()),
            traits: super::Traits::DEFAULT,
        };
        let params: &'static [ParamSpec] = Box::leak(d.params.into_boxed_slice());
        Box::leak(Box::new(NodeDef::custom(spec, params, d.eval))) as &'static NodeDef
    })
}

/// A parameter declaration with interned strings.
#[must_use]
pub fn param_spec(name: &str, doc: &str, unit: &str, kind: ParamKind) -> &'static ParamSpec {
    param(ParamSpec {
        name: str(name),
        doc: str(doc),
        unit: str(unit),
        kind,
        label_text: "",
        applies_when: None,
    })
}
