//! The module graph of a crate, read from its `use` trees and paths, and its cycles.
//!
//! A module depends on another when its code (outside `#[cfg(test)]` items) names a path into
//! it: `crate::a::b`, `super::b`, `self::b`, in a `use` tree (braces expanded) or inline. A
//! path is resolved to the longest module it names, then through `pub use` re-exports, so a
//! dependency hidden behind a parent's re-export still counts. Cycles are reported per folder:
//! among the children of every module (the crate root included), a child depends on another
//! when any module inside it does. Folder-level cycles are what a crate split would refuse;
//! cycles between sibling files are the same tangle one level down.

use std::collections::{BTreeMap, BTreeSet};

/// A module's path (`["io", "geotiff"]`) from its file's path relative to the crate's `src/`.
pub fn module_of(rel: &str) -> Vec<String> {
    let rel = rel.strip_suffix(".rs").unwrap_or(rel);
    let mut parts: Vec<String> = rel.split('/').map(str::to_owned).collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// `code` (comments and literals already removed) without its `#[cfg(test)]` items.
fn without_test_items(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(i) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..i]);
        let after = &rest[i + "#[cfg(test)]".len()..];
        let b = after.as_bytes();
        // The item's end: its first `;` or `{` outside brackets (`[f32; 2]` is not one).
        let mut depth = 0i32;
        let Some(stop) = b.iter().position(|&c| {
            match c {
                b'(' | b'[' => depth += 1,
                b')' | b']' => depth -= 1,
                _ => {}
            }
            depth == 0 && (c == b';' || c == b'{')
        }) else {
            rest = "";
            break;
        };
        if b[stop] == b';' {
            rest = &after[stop + 1..];
            continue;
        }
        let mut depth = 0usize;
        let mut end = after.len();
        for (k, &c) in b.iter().enumerate().skip(stop) {
            match c {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = k + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

/// Expands the path tree starting at `s` (after its first `::`): `a::b`, `a::{b, c::d}`,
/// `a::*`, `a as b`. Returns the paths and how many bytes were read.
fn path_tree(s: &str) -> (Vec<Vec<String>>, usize) {
    let b = s.as_bytes();
    let mut i = 0;
    let mut prefix: Vec<String> = Vec::new();
    loop {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if b.get(i) == Some(&b'{') {
            i += 1;
            let mut out = Vec::new();
            loop {
                while i < b.len() && (b[i].is_ascii_whitespace() || b[i] == b',') {
                    i += 1;
                }
                if i >= b.len() || b[i] == b'}' {
                    i += 1;
                    break;
                }
                if !s.is_char_boundary(i) {
                    i += 1;
                    continue;
                }
                let (paths, used) = path_tree(&s[i..]);
                if used == 0 {
                    i += 1;
                    continue;
                }
                i += used;
                for p in paths {
                    out.push(prefix.iter().cloned().chain(p).collect());
                }
            }
            if out.is_empty() {
                out.push(prefix);
            }
            return (out, i);
        }
        let start = i;
        while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'*') {
            i += 1;
        }
        if i == start {
            return (vec![prefix], i);
        }
        let ident = &s[start..i];
        if ident != "self" && ident != "*" {
            prefix.push(ident.to_owned());
        }
        if s[i..].starts_with("::") {
            i += 2;
        } else {
            return (vec![prefix], i);
        }
    }
}

/// Every path `code` names from `crate::`, `super::` or `self::`, made absolute for module
/// `me`. `use self::x` in a folder's `mod.rs` is a path into the folder itself.
fn named_paths(code: &str, me: &[String]) -> Vec<Vec<String>> {
    let b = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let at_word = i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
        let head = ["crate::", "super::", "self::"]
            .into_iter()
            .find(|h| at_word && b[i..].starts_with(h.as_bytes()));
        let Some(head) = head else {
            i += 1;
            continue;
        };
        let mut base: Vec<String> = match head {
            "crate::" => Vec::new(),
            "super::" => me[..me.len().saturating_sub(1)].to_vec(),
            _ => me.to_vec(),
        };
        let mut j = i + head.len();
        while b[j..].starts_with(b"super::") {
            base.pop();
            j += "super::".len();
        }
        let (paths, used) = path_tree(&code[j..]);
        for p in paths {
            out.push(base.iter().cloned().chain(p).collect());
        }
        i = j + used.max(1);
    }
    out
}

/// The module graph of the crate whose files (path relative to `src/`, text with comments and
/// literals removed) are `files`: module → the modules it names.
pub fn graph(files: &[(String, String)]) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    // Modules declared `#[cfg(test)] mod name;` are tests, not layers.
    let mut test_only: Vec<Vec<String>> = Vec::new();
    for (p, t) in files {
        let me = module_of(p);
        for part in t.split("#[cfg(test)]").skip(1) {
            let decl = part.trim_start();
            let decl = decl.strip_prefix("pub ").unwrap_or(decl);
            if let Some(name) = decl.strip_prefix("mod ").and_then(|d| d.split(';').next()) {
                if !name.contains('{') {
                    test_only.push(me.iter().cloned().chain([name.trim().to_owned()]).collect());
                }
            }
        }
    }
    let kept = |m: &Vec<String>| !test_only.iter().any(|t| m.starts_with(t));
    let modules: BTreeSet<Vec<String>> = files
        .iter()
        .map(|(p, _)| module_of(p))
        .filter(kept)
        .collect();
    let code: Vec<(Vec<String>, String)> = files
        .iter()
        .map(|(p, t)| (module_of(p), without_test_items(t)))
        .filter(|(m, _)| kept(m))
        .collect();
    // Re-exports: (module, name) → the path it stands for.
    let mut reexports: BTreeMap<(Vec<String>, String), Vec<String>> = BTreeMap::new();
    for (me, text) in &code {
        // Each `pub use` / `pub(…) use` statement, up to its `;`.
        for stmt in text.split(';') {
            let Some(at) = stmt.rfind("pub") else {
                continue;
            };
            let rest = stmt[at + 3..].trim_start();
            let rest = if rest.starts_with('(') {
                rest.split_once(')').map_or("", |(_, r)| r.trim_start())
            } else {
                rest
            };
            let Some(tree) = rest.strip_prefix("use ") else {
                continue;
            };
            let tree = tree.trim_start();
            // `pub use child::X` is relative to this module (2018 paths).
            let relative = !["crate::", "super::", "self::", "std::", "core::"]
                .iter()
                .any(|h| tree.starts_with(h));
            let tree = if relative {
                format!("self::{tree}")
            } else {
                tree.to_owned()
            };
            for p in named_paths(&tree, me) {
                if let Some(name) = p.last() {
                    reexports.insert((me.clone(), name.clone()), p.clone());
                }
            }
        }
    }
    let resolve = |path: &[String]| -> Option<Vec<String>> {
        let mut path = path.to_vec();
        for _ in 0..8 {
            let k = (0..=path.len())
                .rev()
                .find(|&k| modules.contains(&path[..k]))?;
            let module = path[..k].to_vec();
            match path.get(k) {
                Some(name) if reexports.contains_key(&(module.clone(), name.clone())) => {
                    let target = &reexports[&(module.clone(), name.clone())];
                    if target.as_slice() == &path[..=k] {
                        return Some(module);
                    }
                    path = target.iter().chain(&path[k + 1..]).cloned().collect();
                }
                _ => return Some(module),
            }
        }
        None
    };
    let mut out: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for (me, text) in &code {
        let deps = out.entry(me.clone()).or_default();
        for p in named_paths(text, me) {
            if let Some(m) = resolve(&p) {
                if &m != me {
                    deps.insert(m);
                }
            }
        }
    }
    out
}

/// The strongly connected sets of more than one node in `g` (Tarjan), sorted.
fn cycles(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct S<'a> {
        g: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut S<'a>, v: &'a str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on.insert(v);
        if let Some(ws) = s.g.get(v) {
            for w in ws {
                if !s.index.contains_key(w.as_str()) {
                    visit(s, w);
                    let lw = s.low[w.as_str()];
                    let lv = s.low.get_mut(v).expect("visited");
                    *lv = (*lv).min(lw);
                } else if s.on.contains(w.as_str()) {
                    let iw = s.index[w.as_str()];
                    let lv = s.low.get_mut(v).expect("visited");
                    *lv = (*lv).min(iw);
                }
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on.remove(w);
                comp.push(w.to_owned());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                s.out.push(comp);
            }
        }
    }
    let mut s = S {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in g.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out.sort();
    s.out
}

/// Every cycle among the children of one module, as `parent: a → b → … ` lines naming, for
/// each child, which of the others it uses.
pub fn sibling_cycles(g: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Vec<String> {
    let mut parents: BTreeSet<Vec<String>> = BTreeSet::new();
    for m in g.keys() {
        for k in 0..m.len() {
            parents.insert(m[..k].to_vec());
        }
    }
    let mut out = Vec::new();
    for parent in parents {
        let child = |m: &[String]| -> Option<String> {
            (m.len() > parent.len() && m[..parent.len()] == parent[..])
                .then(|| m[parent.len()].clone())
        };
        let mut sg: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (a, bs) in g {
            let Some(ca) = child(a) else { continue };
            for b in bs {
                if let Some(cb) = child(b) {
                    if cb != ca {
                        sg.entry(ca.clone()).or_default().insert(cb);
                    }
                }
            }
        }
        let name = if parent.is_empty() {
            "crate".to_owned()
        } else {
            parent.join("::")
        };
        for comp in cycles(&sg) {
            let uses: Vec<String> = comp
                .iter()
                .map(|a| {
                    let on: Vec<&str> = sg[a]
                        .iter()
                        .filter(|b| comp.contains(b))
                        .map(String::as_str)
                        .collect();
                    format!("{a} uses {}", on.join(", "))
                })
                .collect();
            out.push(format!("in {name}: {}", uses.join("; ")));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(p, t)| ((*p).to_owned(), (*t).to_owned()))
            .collect()
    }

    #[test]
    fn a_cycle_between_folders_is_found_through_braces_super_and_reexports() {
        let src = files(&[
            ("lib.rs", "pub mod a; pub mod b;"),
            ("a/mod.rs", "mod x; pub use self::x::Thing;"),
            ("a/x.rs", "use crate::{b::{y::Other, z}, a};"),
            ("b/mod.rs", "pub mod y; pub mod z;"),
            ("b/y.rs", "pub struct Other;"),
            // b → a only through a's re-export of a::x::Thing.
            ("b/z.rs", "fn f() -> super::super::a::Thing { todo!() }"),
        ]);
        let g = graph(&src);
        assert!(g[&vec!["b".to_owned(), "z".to_owned()]]
            .contains(&vec!["a".to_owned(), "x".to_owned()]));
        assert_eq!(sibling_cycles(&g), ["in crate: a uses b; b uses a"]);
    }

    #[test]
    fn a_reexport_relative_to_its_module_is_followed() {
        let src = files(&[
            ("lib.rs", "pub mod a; pub mod b; pub use a::Thing;"),
            ("a/mod.rs", "mod x; pub use x::Thing;"),
            ("a/x.rs", "use crate::b::f;"),
            ("b.rs", "pub fn f() -> crate::Thing { todo!() }"),
        ]);
        let g = graph(&src);
        assert!(g[&vec!["b".to_owned()]].contains(&vec!["a".to_owned(), "x".to_owned()]));
        assert_eq!(sibling_cycles(&g), ["in crate: a uses b; b uses a"]);
    }

    #[test]
    fn test_items_and_one_way_uses_make_no_cycle() {
        let src = files(&[
            ("lib.rs", "pub mod a; pub mod b;"),
            ("a.rs", "use crate::b::f;"),
            (
                "b.rs",
                "pub fn f() {}\n#[cfg(test)]\nfn t(x: [f32; 2]) { crate::a::g(); }\n#[cfg(test)]\nmod tests { use crate::a; }\n#[cfg(test)]\nuse crate::a::g;\n#[cfg(test)]\nmod more;",
            ),
            ("b/more.rs", "use crate::a::g;"),
        ]);
        assert!(sibling_cycles(&graph(&src)).is_empty());
    }

    #[test]
    fn a_cycle_between_sibling_files_is_named_with_its_folder() {
        let src = files(&[
            ("io/mod.rs", "pub mod p; pub mod q;"),
            ("io/p.rs", "use super::q::A;"),
            ("io/q.rs", "pub struct A; fn g() { super::p::h() }"),
        ]);
        assert_eq!(sibling_cycles(&graph(&src)), ["in io: p uses q; q uses p"]);
    }
}
