//! Tidy checks (rust-analyzer's `tidy.rs` style): the layering rules and conventions that
//! ARCHITECTURE.md states, checked on the source text so that breaking one fails a test
//! instead of waiting for a reviewer.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

#[path = "tidy/layers.rs"]
mod layers;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every `.rs` file under `dir`, sorted, with its text.
fn sources(dir: &str) -> Vec<(String, String)> {
    fn walk(p: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(p).expect("dir").flatten() {
            let path = e.path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|x| x == "rs") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(&repo().join(dir), &mut files);
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("read");
            let rel = p
                .strip_prefix(repo())
                .unwrap_or(&p)
                .to_string_lossy()
                .replace("../", "");
            (rel, text)
        })
        .collect()
}

/// The code of a file without `//` comments (so rules apply to code, not prose); string
/// literals are kept (a rule may look for one). [`code_only`] also empties them.
fn code(text: &str) -> String {
    text.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `crate::a::b` paths used in `text`, as `a` or `a::b`.
fn crate_paths(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let code = code(text);
    let mut rest = code.as_str();
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        let path: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':')
            .collect();
        out.push(path.trim_end_matches(':').to_owned());
    }
    out
}

#[test]
fn nodes_see_only_node_field_and_file_reading_io() {
    let mut bad = Vec::new();
    for (file, text) in sources("engine/src/nodes") {
        for p in crate_paths(&text) {
            let ok = ["node", "field", "nodes", "io::heightmap", "io::trust"]
                .iter()
                .any(|allowed| p == *allowed || p.starts_with(&format!("{allowed}::")))
                // The declaration macros.
                || ["params", "choice_enum", "impl_choice"].contains(&p.as_str());
            if !ok {
                bad.push(format!("{file}: crate::{p}"));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "nodes/* may use only node/, field/, other nodes, io::heightmap and io::trust:\n{}",
        bad.join("\n")
    );
}

#[test]
fn field_knows_nothing_of_graphs_or_evaluation() {
    let mut bad = Vec::new();
    for (file, text) in sources("engine/src/field") {
        for p in crate_paths(&text) {
            if !(p == "field" || p.starts_with("field::") || p.starts_with("node::")) {
                bad.push(format!("{file}: crate::{p}"));
            }
        }
    }
    assert!(bad.is_empty(), "field/ depends on:\n{}", bad.join("\n"));
}

#[test]
fn node_declares_what_a_node_is_and_knows_no_node() {
    for (file, text) in sources("engine/src/node") {
        assert!(
            !crate_paths(&text).iter().any(|p| p.starts_with("nodes")),
            "{file} depends on nodes/ (the catalogue depends on node/, not the reverse)"
        );
    }
}

#[test]
fn no_module_depends_on_one_that_depends_on_it() {
    // ARCHITECTURE.md's layers, as a fact: among the children of every module (the crates'
    // roots included), the `use` graph has no cycle.
    for root in ["engine/src", "editor/src", "python/src"] {
        let files: Vec<(String, String)> = sources(root)
            .into_iter()
            .map(|(p, t)| {
                let rel = p.strip_prefix(&format!("{root}/")).unwrap_or(&p).to_owned();
                // The binary (`main.rs`, `cli/`) reaches the library as `orogen::`.
                let code = if rel == "main.rs" || rel.starts_with("cli/") {
                    code_only(&t).replace("orogen::", "crate::")
                } else {
                    code_only(&t)
                };
                (rel, code)
            })
            .collect();
        let graph = layers::graph(&files);
        let cycles = layers::sibling_cycles(&graph);
        assert!(
            cycles.is_empty(),
            "modules of {root} that depend on each other (move the shared piece down a layer):\n{}",
            cycles.join("\n")
        );
        if root == "engine/src" {
            layers_keep_architecture_md_order(&graph);
        }
    }
}

/// Each top-level module of the engine uses only modules of its own row of ARCHITECTURE.md's
/// layer table or the rows above it.
fn layers_keep_architecture_md_order(
    graph: &std::collections::BTreeMap<Vec<String>, std::collections::BTreeSet<Vec<String>>>,
) {
    let arch = std::fs::read_to_string(repo().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let start = arch
        .find("## Layers (`engine/src/`)")
        .expect("a Layers section");
    let mut row_of = std::collections::BTreeMap::new();
    let rows = arch[start..]
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2);
    for (k, line) in rows.enumerate() {
        let first = line.split('|').nth(1).unwrap_or("");
        for (j, part) in first.split('`').enumerate() {
            if j % 2 == 1 {
                let name = part.trim_end_matches('/').trim_end_matches(".rs");
                row_of.insert(name.to_owned(), k);
            }
        }
    }
    let mut bad = Vec::new();
    for (a, uses) in graph {
        for b in uses {
            let (Some(ta), Some(tb)) = (a.first(), b.first()) else {
                continue;
            };
            match (row_of.get(ta), row_of.get(tb)) {
                (Some(ra), Some(rb)) if rb > ra => {
                    bad.push(format!(
                        "{} uses {} (a later row)",
                        a.join("::"),
                        b.join("::")
                    ));
                }
                (None, _) => bad.push(format!("{ta} is not in the layer table")),
                _ => {}
            }
        }
    }
    bad.sort();
    bad.dedup();
    assert!(
        bad.is_empty(),
        "ARCHITECTURE.md's layers, broken:\n{}",
        bad.join("\n")
    );
}

#[test]
fn unsafe_code_lives_only_where_architecture_md_says() {
    // ARCHITECTURE.md: the AVX-512 noise kernel, and the editor's OpenGL and setpriority FFI.
    let allowed = [
        "engine/src/nodes/generators/noise/kernel.rs",
        "editor/src/view3d.rs",
        "editor/src/worker.rs",
    ];
    let mut found = Vec::new();
    for dir in [
        "engine/src",
        "editor/src",
        "tests",
        "engine/benches",
        "editor/benches",
    ] {
        for (file, text) in sources(dir) {
            let c = code(&text);
            if ["unsafe {", "unsafe fn", "unsafe impl"]
                .iter()
                .any(|k| c.contains(k))
            {
                found.push(file);
            }
        }
    }
    found.retain(|f| !f.ends_with("tests/tidy.rs"));
    assert_eq!(found, allowed, "unsafe code outside the listed files");
    let arch = std::fs::read_to_string(repo().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    for f in allowed {
        let name = Path::new(f).file_name().expect("name").to_string_lossy();
        assert!(
            arch.contains(name.as_ref()),
            "ARCHITECTURE.md does not name {f}"
        );
    }
}

#[test]
fn the_engine_never_depends_on_egui_and_only_file_types_are_serialised() {
    let manifest = std::fs::read_to_string(repo().join("engine/Cargo.toml")).expect("Cargo.toml");
    let deps = manifest.split("[dev-dependencies]").next().unwrap_or("");
    for ui in ["egui", "eframe", "snarl"] {
        assert!(!deps.contains(ui), "engine/Cargo.toml depends on {ui}");
    }
    for (file, text) in sources("engine/src") {
        let serialises = code(&text)
            .lines()
            .any(|l| l.contains("derive(") && l.contains("Serialize"));
        assert!(
            !serialises
                || file.starts_with("engine/src/io/")
                || file.starts_with("engine/src/document/"),
            "{file}: only io:: and document:: types are serialised (a runtime type would become a format promise)"
        );
    }
}

/// The first sentence of a file's `//!` docs, on one line (table cells escaped).
fn first_sentence(text: &str) -> String {
    let para: Vec<&str> = text
        .lines()
        .map_while(|l| l.strip_prefix("//!"))
        .map(str::trim)
        .take_while(|l| !l.is_empty())
        .collect();
    let para = para.join(" ");
    let mut end = para.len();
    for (i, _) in para.match_indices(". ") {
        // Not after an abbreviation such as "e.g." or a version "v1.".
        let word = para[..i].rsplit(' ').next().unwrap_or("");
        if !word.contains('.') && !word.ends_with("vs") {
            end = i + 1;
            break;
        }
    }
    para[..end].replace('|', "\\|")
}

/// docs/code-map.md as the sources say it should be: every module of the engine, the editor
/// and the Python package with the first sentence of its docs.
fn code_map() -> String {
    let mut out = String::from(
        "# Code map\n\nEvery module of the workspace and the first sentence of its docs, \
         generated from the sources: `OROGEN_BLESS=1 cargo test -p orogen --test integration tidy::` \
         rewrites this page, and a test fails while it is stale. Where the layers are and why: \
         [ARCHITECTURE.md](../ARCHITECTURE.md).\n",
    );
    for root in ["engine/src", "editor/src", "python/src"] {
        let _ = write!(
            out,
            "\n## `{root}/`\n\n| module | what it is for |\n|---|---|\n"
        );
        for (file, text) in sources(root) {
            let rel = file.strip_prefix(&format!("{root}/")).unwrap_or(&file);
            let _ = writeln!(out, "| `{rel}` | {} |", first_sentence(&text));
        }
    }
    out
}

#[test]
fn the_code_map_names_every_module_and_nothing_else() {
    let want = code_map();
    let path = repo().join("docs/code-map.md");
    if std::env::var_os("OROGEN_BLESS").is_some() {
        std::fs::write(&path, &want).expect("write docs/code-map.md");
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    let missing: Vec<&str> = want
        .lines()
        .filter(|l| !have.lines().any(|h| h == *l))
        .collect();
    let gone: Vec<&str> = have
        .lines()
        .filter(|l| !want.lines().any(|w| w == *l))
        .collect();
    assert!(
        have == want,
        "docs/code-map.md is stale (OROGEN_BLESS=1 cargo test -p orogen --test integration tidy:: rewrites \
         it)\nnot in the map: {missing:#?}\nin the map, not in the sources: {gone:#?}"
    );
}

#[test]
fn the_tree_holds_no_binaries_but_pictures_and_test_data() {
    // Wheels, archives, libraries and other build products never enter history: every clone
    // would carry them forever. Binary files are allowed only as the documented pictures
    // (docs/*.png, *.jpg) and test data (tests/golden/, tests/data/).
    let Ok(out) = std::process::Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(repo())
        .output()
    else {
        eprintln!("no git: the tracked files cannot be listed; skipped");
        return;
    };
    if !out.status.success() {
        eprintln!("not a git checkout; skipped");
        return;
    }
    let mut bad = Vec::new();
    for name in out.stdout.split(|&b| b == 0).filter(|n| !n.is_empty()) {
        let name = String::from_utf8_lossy(name).into_owned();
        let allowed = name.starts_with("tests/golden/")
            || name.starts_with("tests/data/")
            || (name.starts_with("docs/") && [".png", ".jpg"].iter().any(|x| name.ends_with(x)));
        if allowed {
            continue;
        }
        let Ok(bytes) = std::fs::read(repo().join(&name)) else {
            continue;
        };
        let binary = bytes.iter().take(8192).any(|&b| b == 0)
            || [".whl", ".so", ".zip", ".gz", ".tar", ".exe", ".dll", ".a"]
                .iter()
                .any(|x| name.ends_with(x));
        if binary {
            bad.push(name);
        }
    }
    assert!(
        bad.is_empty(),
        "binary files in the tree outside docs/ pictures and tests/ data:\n{}",
        bad.join("\n")
    );
}

#[test]
fn every_module_says_what_it_is_for() {
    for dir in ["engine/src", "editor/src", "python/src"] {
        for (file, text) in sources(dir) {
            assert!(
                text.starts_with("//!"),
                "{file} does not start with a //! line saying what it is for"
            );
        }
    }
}

#[test]
fn the_node_catalogue_page_is_current() {
    let want = orogen::document::catalogue::to_markdown(orogen::node::Registry::builtin());
    let path = repo().join("docs/nodes.md");
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "docs/nodes.md is stale: regenerate it with \
         `cargo run -p orogen -- nodes --markdown > docs/nodes.md`"
    );
}

#[test]
fn the_python_node_module_is_current() {
    let want = orogen::document::catalogue::to_python(orogen::node::Registry::builtin());
    let path = repo().join("python/orogen/nodes.py");
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "python/orogen/nodes.py is stale: regenerate it with \
         `cargo run -p orogen -- nodes --python > python/orogen/nodes.py`"
    );
}

#[test]
fn graph_depends_on_neither_files_nor_node_types() {
    // graph/ is the runtime model: io/ reads and writes it, nodes/ are evaluated through it.
    // Either edge back would make a cycle (graph ↔ io, graph → nodes → graph).
    let mut bad = Vec::new();
    for (file, text) in sources("engine/src/graph") {
        for p in crate_paths(&text) {
            let top = p.split("::").next().unwrap_or("");
            if ["io", "nodes", "eval", "build", "tiles", "parity", "cli"].contains(&top) {
                bad.push(format!("{file}: crate::{p}"));
            }
        }
    }
    assert!(bad.is_empty(), "graph/ depends on:\n{}", bad.join("\n"));
}

#[test]
fn no_code_outside_a_node_names_its_id() {
    // A fact about a node type lives in its declaration (`traits:` in `node!`), not in an
    // `if id == "…"` elsewhere: every registered id as a string literal, in code outside
    // nodes/ and the tests.
    let defs = orogen::node::Registry::builtin().defs();
    let categories: Vec<&str> = defs.iter().map(|d| d.spec.category.name()).collect();
    // An id that is also a category's name ("combine") cannot be told apart by its text.
    let ids: Vec<&str> = defs
        .iter()
        .map(|d| d.spec.id)
        .filter(|id| !categories.contains(id))
        .collect();
    let mut bad = Vec::new();
    for dir in ["engine/src", "editor/src"] {
        for (file, text) in sources(dir) {
            if file.starts_with("engine/src/nodes/") {
                continue;
            }
            // Unit tests at the end of a file may build graphs by type id.
            let text = text.split("#[cfg(test)]").next().unwrap_or("");
            for (n, line) in code(text).lines().enumerate() {
                for id in &ids {
                    if line.contains(&format!("\"{id}\"")) {
                        bad.push(format!("{file}:{}: \"{id}\"", n + 1));
                    }
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "node ids named outside their node (declare the fact as a trait instead):\n{}",
        bad.join("\n")
    );
}

/// A folder (`name/`) or a Rust file.
fn is_code_path(p: &str) -> bool {
    p.ends_with('/') || Path::new(p).extension().is_some_and(|x| x == "rs")
}

/// The backticked paths (ending in `/` or `.rs`) in the table that follows `heading`.
fn code_map_paths(arch: &str, heading: &str) -> Vec<String> {
    let start = arch.find(heading).unwrap_or_else(|| panic!("no {heading}"));
    let table: Vec<&str> = arch[start..]
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .collect();
    let mut out = Vec::new();
    for line in table {
        for (k, part) in line.split('`').enumerate() {
            if k % 2 == 1 && !part.contains(' ') && is_code_path(part) {
                out.extend(part.split(", ").map(str::to_owned));
            }
        }
    }
    out
}

#[test]
fn architecture_code_map_names_what_exists_and_everything_that_does() {
    let arch = std::fs::read_to_string(repo().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    for (heading, root) in [
        ("## Layers (`engine/src/`)", "engine/src"),
        ("## The editor (`editor/`", "editor/src"),
    ] {
        let named = code_map_paths(&arch, heading);
        for p in &named {
            assert!(
                repo().join(root).join(p).exists(),
                "ARCHITECTURE.md's code map names {root}/{p}, which does not exist"
            );
        }
        let mut entries: Vec<String> = std::fs::read_dir(repo().join(root))
            .expect("dir")
            .flatten()
            .map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                if e.path().is_dir() {
                    format!("{name}/")
                } else {
                    name
                }
            })
            .filter(|n| is_code_path(n))
            .filter(|n| n != "lib.rs" && n != "main.rs")
            .collect();
        if root == "engine/src" {
            // Every node category.
            entries.extend(
                std::fs::read_dir(repo().join("engine/src/nodes"))
                    .expect("nodes")
                    .flatten()
                    .filter(|e| e.path().is_dir())
                    .map(|e| format!("nodes/{}/", e.file_name().to_string_lossy())),
            );
        }
        for e in entries {
            assert!(
                named.contains(&e),
                "ARCHITECTURE.md's code map does not name {root}/{e}"
            );
        }
    }
}

#[test]
fn user_facing_text_carries_no_bookkeeping() {
    // History (which session or issue did what) belongs in git and docs/perf-log.md.
    let mut files: Vec<PathBuf> = [
        "README.md",
        "ARCHITECTURE.md",
        "BENCHMARKS.md",
        "Cargo.toml",
        "engine/Cargo.toml",
        "editor/Cargo.toml",
    ]
    .iter()
    .map(|f| repo().join(f))
    .collect();
    files.extend(
        std::fs::read_dir(repo().join("docs"))
            .expect("docs")
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.extension().is_some_and(|x| x == "md") && !p.ends_with("docs/perf-log.md")
            }),
    );
    let mut bad = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).expect("read");
        for (n, line) in text.lines().enumerate() {
            let l = line.to_lowercase();
            if l.contains("session") || l.contains("issue") {
                bad.push(format!("{}:{}: {line}", f.display(), n + 1));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "\"session\" or \"issue\" in user-facing text:\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_front_pages_stay_short() {
    for (file, max_kb) in [
        ("README.md", 12),
        ("ARCHITECTURE.md", 15),
        ("BENCHMARKS.md", 15),
    ] {
        let len = std::fs::metadata(repo().join(file)).expect(file).len();
        assert!(
            len <= max_kb * 1000,
            "{file} is {len} bytes, over {max_kb} kB: move detail to docs/"
        );
    }
}

/// `text` with string and character literals emptied and comments removed, so braces in
/// them are not counted.
fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            i += 2;
            while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                if b[i] == b'\n' {
                    out.push('\n');
                }
                i += 1;
            }
            i += 2;
        } else if c == b'r' && matches!(b.get(i + 1), Some(b'"' | b'#')) && !is_ident(b, i) {
            // A raw string: r"…", r#"…"#.
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&b'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&b'"') {
                out.push(c as char);
                i += 1;
                continue;
            }
            j += 1;
            let close: Vec<u8> = std::iter::once(b'"')
                .chain(std::iter::repeat_n(b'#', hashes))
                .collect();
            while j < b.len() && !b[j..].starts_with(&close) {
                if b[j] == b'\n' {
                    out.push('\n');
                }
                j += 1;
            }
            out.push_str("\"\"");
            i = j + close.len();
        } else if c == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    i += 1;
                }
                if b.get(i) == Some(&b'\n') {
                    out.push('\n');
                }
                i += 1;
            }
            out.push_str("\"\"");
            i += 1;
        } else if c == b'\'' && (b.get(i + 2) == Some(&b'\'') || b.get(i + 1) == Some(&b'\\')) {
            // A character literal ('{', '\n', '\''), not a lifetime.
            i += if b.get(i + 1) == Some(&b'\\') {
                b[i + 2..]
                    .iter()
                    .position(|&x| x == b'\'')
                    .map_or(2, |p| p + 3)
            } else {
                3
            };
            out.push_str("' '");
        } else {
            out.push(c as char);
            i += 1;
        }
    }
    out
}

fn is_ident(b: &[u8], i: usize) -> bool {
    i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')
}

/// Each function's name, first line and length in lines (outside `#[cfg(test)]` modules).
fn function_lengths(text: &str) -> Vec<(String, usize, usize)> {
    let text = text.split("\n#[cfg(test)]").next().unwrap_or("");
    let code = code_only(text);
    let lines: Vec<&str> = code.lines().collect();
    let mut out = Vec::new();
    for (k, line) in lines.iter().enumerate() {
        let t = line.trim_start();
        let Some(rest) = [
            "fn ",
            "pub fn ",
            "pub(crate) fn ",
            "pub(super) fn ",
            "const fn ",
        ]
        .iter()
        .find_map(|p| t.strip_prefix(p)) else {
            continue;
        };
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let (mut depth, mut opened) = (0i32, false);
        for (j, l) in lines.iter().enumerate().skip(k) {
            if !opened && l.trim_end().ends_with(';') && !l.contains('{') {
                break; // a declaration without a body
            }
            for ch in l.chars() {
                match ch {
                    '{' => {
                        depth += 1;
                        opened = true;
                    }
                    '}' => depth -= 1,
                    _ => {}
                }
            }
            if opened && depth == 0 {
                out.push((name.clone(), k + 1, j - k + 1));
                break;
            }
        }
    }
    out
}

#[test]
fn functions_stay_small() {
    // Files have no line cap: ARCHITECTURE.md says when to split one (by concern).
    const MAX_FN: usize = 120;
    // Each exception with its reason.
    let exceptions: [(&str, &str, &str); 1] = [(
        "engine/src/nodes/erosion/hydraulic_pipe.rs",
        "step",
        "the pipe model's multiversioned row kernel: its four phases share the row slices the \
         compiler keeps in registers; splitting it is a performance change to benchmark first",
    )];
    let mut bad = Vec::new();
    for dir in ["engine/src", "editor/src"] {
        for (file, text) in sources(dir) {
            for (name, line, n) in function_lengths(&text) {
                let excused = exceptions
                    .iter()
                    .any(|(f, fun, why)| *f == file && *fun == name && !why.is_empty());
                if n > MAX_FN && !excused {
                    bad.push(format!(
                        "{file}:{line}: fn {name} is {n} lines (over {MAX_FN})"
                    ));
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "split the function (or name the exception and its reason here):\n{}",
        bad.join("\n")
    );
}
