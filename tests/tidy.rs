//! Tidy checks (rust-analyzer's `tidy.rs` style): the layering rules and conventions that
//! ARCHITECTURE.md states, checked on the source text so that breaking one fails a test
//! instead of waiting for a reviewer.

use std::path::{Path, PathBuf};

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

/// The code of a file without `//` comments (so rules apply to code, not prose).
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
fn the_engine_never_depends_on_egui_and_only_io_types_are_serialised() {
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
            !serialises || file.starts_with("engine/src/io/"),
            "{file}: only io:: types are serialised (a runtime type would become a format promise)"
        );
    }
}

#[test]
fn every_module_says_what_it_is_for() {
    for dir in ["engine/src", "editor/src"] {
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
    let want = orogen::io::catalogue::to_markdown(orogen::node::Registry::builtin());
    let path = repo().join("docs/nodes.md");
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "docs/nodes.md is stale: regenerate it with \
         `cargo run -p orogen -- nodes --markdown > docs/nodes.md`"
    );
}
