//! The pinned outputs (unit tests of the whole crate, so that `scripts/simd-paths.sh` checks
//! them on each SIMD path by compiling the crate once per path): every output of every
//! example graph and of the test graphs holding every node type, at 256², hashed.

use crate::document::graph_file;
use crate::eval::{DiskCache, EvalOptions, Evaluator};
use crate::node::Registry;
use crate::Graph;
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn example_graphs() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(repo().join("graphs"))
        .expect("graphs/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    v.sort();
    v
}

fn load(path: &Path) -> Graph {
    graph_file::load_file(path).unwrap_or_else(|d| panic!("{d}"))
}

/// The graphs whose outputs `tests/golden/hashes.txt` pins: the examples, and the test graphs
/// that hold every erosion, water and colour node.
fn pinned_graphs() -> Vec<PathBuf> {
    let extra = ["parity/hills", "water", "color", "deposits", "pinned"]
        .map(|n| repo().join(format!("tests/data/{n}.json")));
    example_graphs().into_iter().chain(extra).collect()
}

/// The bytes are pinned: every output of every example graph at 256², hashed (BLAKE3 of its
/// f32 samples, little-endian), must equal `tests/golden/hashes.txt` — on every machine CI
/// runs on, whatever its instruction set. A change of output is a deliberate, reviewed update:
/// `OROGEN_BLESS=1` rewrites the file (then read the diff). Transcendental functions come from
/// the `libm` crate, not the C library (glibc picks its code by CPU features).
#[test]
fn example_graph_outputs_are_pinned_to_the_byte() {
    // The examples, and the test graphs that hold every erosion, water and colour node: run
    // with `--features simd-max-avx2` or `simd-portable`, this checks that the AVX2 and the
    // baseline code paths give the very bits the widest path gives.
    let (text, _) = pinned_lines(None);
    let pinned = repo().join("tests/golden/hashes.txt");
    if std::env::var_os("OROGEN_BLESS").is_some() {
        std::fs::write(&pinned, &text).expect("bless");
    }
    assert_pinned(&text);
}

/// The pinned outputs through the disk cache: a cold cache (every result written) and then a
/// warm one (results read back) give the pinned bytes, and the warm run computes nothing.
#[test]
fn pinned_outputs_are_the_same_through_the_disk_cache() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut disk = DiskCache::open(dir.path(), u64::MAX).expect("cache");
    disk.store = crate::eval::disk::Store::All;
    disk.reserve_bytes = 0;
    let disk = Arc::new(disk);
    let (cold, computed) = pinned_lines(Some(Arc::clone(&disk)));
    assert_pinned(&cold);
    assert!(computed > 0);
    let (warm, computed) = pinned_lines(Some(disk));
    assert_pinned(&warm);
    assert_eq!(computed, 0, "a warm cache recomputed nodes");
}

fn assert_pinned(text: &str) {
    let pinned = repo().join("tests/golden/hashes.txt");
    let want = std::fs::read_to_string(&pinned)
        .expect("tests/golden/hashes.txt (OROGEN_BLESS=1 writes it)");
    let changed: Vec<String> = want
        .lines()
        .zip(text.lines())
        .filter(|(a, b)| a != b)
        .map(|(a, b)| format!("pinned {a}\n   got {b}"))
        .collect();
    assert!(
        changed.is_empty() && want.lines().count() == text.lines().count(),
        "outputs changed at 256² (OROGEN_BLESS=1 accepts them):\n{}",
        changed.join("\n")
    );
}

/// The array the pinned graphs' `array_input` nodes read ("pinned"): 37 × 23 samples in
/// 0..1, not square and not the build's size, so that resampling is pinned too.
fn pinned_arrays() -> crate::node::ArrayInputs {
    let (w, h) = (37, 23);
    let data = (0..w * h)
        .map(|k| {
            // Integer arithmetic only: the same bits on every machine.
            let (x, y) = (k % w, k / w);
            0.1 + 0.8 * ((x * x + 3 * y) % 29) as f32 / 28.0
        })
        .collect();
    let mut a = crate::node::ArrayInputs::new();
    a.insert("pinned", w, h, data).expect("the pinned array");
    a
}

/// Every pinned output's hash line, and how many nodes were computed (not taken from `disk`).
fn pinned_lines(disk: Option<Arc<DiskCache>>) -> (String, usize) {
    let arrays = pinned_arrays();
    let mut lines = Vec::new();
    let mut computed = 0;
    for path in pinned_graphs() {
        let graph = load(&path);
        let name = path
            .file_stem()
            .expect("stem")
            .to_string_lossy()
            .into_owned();
        let res = Evaluator::new()
            .with_disk(disk.clone())
            .evaluate(
                &graph,
                &EvalOptions {
                    resolution: Some(256),
                    base_dir: path.parent(),
                    arrays: Some(&arrays),
                    ..EvalOptions::default()
                },
            )
            .unwrap_or_else(|d| panic!("{name}: {d:?}"));
        computed += res.evaluated().len();
        for (out, r) in &graph.outputs {
            let f = res
                .field(&graph, r)
                .unwrap_or_else(|| panic!("{name}.{out}"));
            let mut h = blake3::Hasher::new();
            for v in f.data() {
                h.update(&v.to_le_bytes());
            }
            lines.push(format!("{name} {out} {}", &h.finalize().to_hex()[..32]));
        }
    }
    (lines.join("\n") + "\n", computed)
}

/// The new-node recipe (ARCHITECTURE.md, "Adding a node") holds for every node type: it is
/// in the id snapshot (`tests/data/node_ids.txt`, checked above), documented (checked above),
/// and used by a graph whose outputs are pinned to the byte (`tests/golden/hashes.txt`) — so
/// its output cannot change, on any SIMD path, without a reviewed re-bless. Its parity rule
/// is part of its declaration (`traits:`, or its category's).
#[test]
fn every_node_type_is_pinned_by_a_graph() {
    let mut used = std::collections::BTreeSet::new();
    for path in pinned_graphs() {
        for n in &load(&path).flattened().nodes {
            used.insert(n.def.spec.id);
        }
    }
    let missing: Vec<&str> = Registry::builtin()
        .defs()
        .iter()
        .map(|d| d.spec.id)
        .filter(|id| !used.contains(id))
        .collect();
    assert!(
        missing.is_empty(),
        "node types no pinned graph uses (add one to an example or tests/data graph, then \
         OROGEN_BLESS=1): {missing:?}"
    );
}
