//! Fuzzing the graph loader (issue 8): arbitrary bytes and random mutations of the example
//! graphs must give `Ok` or a clear error — never a panic, never unbounded memory.
//!
//! `corpus_inputs_give_ok_or_a_clear_error` replays the committed corpus
//! (`tests/data/fuzz/`: one input per distinct kind of outcome found so far). To grow it,
//! run `cargo test -p orogen --test integration fuzz_loader::grow_corpus -- --ignored --nocapture`
//! (`OROGEN_FUZZ_CASES`, default 20 000); new kinds of outcome are written to the corpus.

use crate::common;

use common::repo;
use orogen::document::graph_file;
use orogen::eval::memory::estimate_peak_bytes;
use orogen::eval::Targets;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, TestRng, TestRunner};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Loads `text`; checks the outcome is `Ok` (then valid, round-tripping, estimable) or a
/// clear error. Returns a short description of the outcome kind.
fn load_and_judge(text: &str) -> Result<String, String> {
    match graph_file::load_str(text, "fuzz.json") {
        Ok(g) => {
            // Warnings (incomplete nodes) are allowed; errors are not.
            if !g.errors().is_empty() {
                return Err(format!("loaded but invalid: {:?}", g.errors()));
            }
            // Saved self-contained (subgraphs embedded), as recovery files and build copies are.
            let once = graph_file::to_string_embedded(&g);
            let again = graph_file::load_str(&once, "round trip")
                .map_err(|d| format!("saved graph does not load: {d}"))?;
            if graph_file::to_string_embedded(&again) != once {
                return Err("save → load → save changed the file".into());
            }
            // Must not overflow or allocate, whatever the sizes.
            let _ = estimate_peak_bytes(&g, g.resolution, &Targets::Outputs);
            Ok("ok".into())
        }
        Err(d) => {
            if d.items.is_empty() {
                return Err("an error without any diagnostic".into());
            }
            let shown = d.to_string();
            for line in shown.lines() {
                if !line.starts_with("fuzz.json: ") || line.trim_end() == "fuzz.json:" {
                    return Err(format!(
                        "an error line without the file or a message: {line:?}"
                    ));
                }
            }
            // The kind of problem: where (the field's first part) and what (the message's
            // first words, quoted names left out).
            let first = &d.items[0];
            let place = first
                .field
                .split(['.', '['])
                .next()
                .unwrap_or("")
                .to_owned();
            let mut quoted = false;
            let words: Vec<String> = first
                .message
                .split_whitespace()
                .filter(|w| {
                    let q = w.starts_with('"');
                    let keep = !quoted && !q && w.chars().all(|c| c.is_ascii_alphabetic());
                    if q && !(w.len() > 1 && w.ends_with('"')) {
                        quoted = true;
                    } else if quoted && w.ends_with('"') {
                        quoted = false;
                    }
                    keep
                })
                .take(4)
                .map(str::to_owned)
                .collect();
            Ok(format!("{} | {}", strip_digits(&place), words.join(" ")))
        }
    }
}

fn strip_digits(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_ascii_digit() { '#' } else { c })
        .collect()
}

/// The example graphs and the library's, with subgraphs embedded (the fuzzer loads from
/// memory, so a graph's subgraph files travel inside it: their references, hashes,
/// parameters and bindings are mutated too).
fn examples() -> Vec<Value> {
    let mut v: Vec<Value> = ["graphs", "graphs/lib"]
        .iter()
        .flat_map(|d| {
            std::fs::read_dir(repo().join(d))
                .expect("graphs/")
                .flatten()
        })
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .map(|e| {
            let g = graph_file::load_file(&e.path()).unwrap_or_else(|d| panic!("{d}"));
            graph_file::to_value_with(&g, true)
        })
        .collect();
    v.sort_by_key(|g| g["name"].to_string());
    v
}

/// A hostile JSON value.
fn nasty() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        prop_oneof![
            Just(1e308),
            Just(-1e308),
            Just(0.0),
            Just(-0.0),
            Just(1e-320),
            Just(65537.0),
            Just(4.5)
        ]
        .prop_map(|f| json!(f)),
        Just(json!(u64::MAX)),
        Just(json!(1_000_000_000)),
        "[a-z_.]{0,12}".prop_map(Value::from),
        Just(Value::from("x".repeat(10_000))),
        Just(Value::from("héllo\u{0}\u{202e}")),
        Just(json!([])),
        Just(json!({})),
        Just(json!([1, "a", null])),
        Just(json!({"id": "n", "type": "blur"})),
        // References a stranger's file may make: out of the project, devices, absolute.
        Just(Value::from("../../../../../../etc/hostname")),
        Just(Value::from("../../../../../../dev/zero")),
        Just(Value::from("/dev/urandom")),
    ]
}

/// One mutation of a JSON tree, steered by `picks`.
#[derive(Clone, Debug)]
enum Mutation {
    Replace(Vec<usize>, Value),
    Remove(Vec<usize>),
    DuplicateNode(usize),
    Rewire(usize, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let path = prop::collection::vec(0usize..64, 1..5);
    prop_oneof![
        (path.clone(), nasty()).prop_map(|(p, v)| Mutation::Replace(p, v)),
        path.prop_map(Mutation::Remove),
        (0usize..64).prop_map(Mutation::DuplicateNode),
        (0usize..64, 0usize..64).prop_map(|(a, b)| Mutation::Rewire(a, b)),
    ]
}

/// The JSON pointer reached by following `path` (each step picks a child modulo the size),
/// as deep as the document goes.
fn pointer(doc: &Value, path: &[usize]) -> String {
    let mut ptr = String::new();
    let mut cur = doc;
    for &k in path {
        let next = match cur {
            Value::Object(m) if !m.is_empty() => m
                .iter()
                .nth(k % m.len())
                .map(|(key, v)| (key.replace('~', "~0").replace('/', "~1"), v)),
            Value::Array(a) if !a.is_empty() => Some(((k % a.len()).to_string(), &a[k % a.len()])),
            _ => None,
        };
        let Some((seg, v)) = next else { break };
        ptr.push('/');
        ptr.push_str(&seg);
        cur = v;
    }
    ptr
}

fn apply(doc: &mut Value, m: &Mutation) {
    match m {
        Mutation::Replace(path, new) => {
            let ptr = pointer(doc, path);
            if let Some(c) = doc.pointer_mut(&ptr) {
                *c = new.clone();
            }
        }
        Mutation::Remove(path) => {
            let ptr = pointer(doc, &path[..path.len() - 1]);
            let k = path[path.len() - 1];
            match doc.pointer_mut(&ptr) {
                Some(Value::Object(o)) if !o.is_empty() => {
                    if let Some(key) = o.keys().nth(k % o.len()).cloned() {
                        o.remove(&key);
                    }
                }
                Some(Value::Array(a)) if !a.is_empty() => {
                    let n = a.len();
                    a.remove(k % n);
                }
                _ => {}
            }
        }
        Mutation::DuplicateNode(k) => {
            if let Some(a) = doc.get_mut("nodes").and_then(Value::as_array_mut) {
                if !a.is_empty() {
                    let n = a[k % a.len()].clone();
                    a.push(n);
                }
            }
        }
        Mutation::Rewire(a, b) => {
            let ids: Vec<String> = doc["nodes"]
                .as_array()
                .map(|v| {
                    v.iter()
                        .filter_map(|n| n["id"].as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default();
            if ids.is_empty() {
                return;
            }
            let target = ids[b % ids.len()].clone();
            if let Some(nodes) = doc.get_mut("nodes").and_then(Value::as_array_mut) {
                let n = nodes.len();
                if let Some(obj) = nodes[a % n].as_object_mut() {
                    let inputs = obj.entry("inputs").or_insert_with(|| json!({}));
                    if let Some(m) = inputs.as_object_mut() {
                        let key = m.keys().next().cloned().unwrap_or_else(|| "in".into());
                        m.insert(key, Value::from(format!("{target}.out")));
                    }
                }
            }
        }
    }
}

fn mutated_case() -> impl Strategy<Value = (usize, Vec<Mutation>)> {
    (0usize..64, prop::collection::vec(mutation(), 1..6))
}

fn run_mutated(
    examples: &[Value],
    (which, muts): &(usize, Vec<Mutation>),
) -> (String, Result<String, String>) {
    let mut doc = examples[which % examples.len()].clone();
    for m in muts {
        apply(&mut doc, m);
    }
    let text = serde_json::to_string_pretty(&doc).unwrap_or_default();
    let outcome = load_and_judge(&text);
    (text, outcome)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_give_ok_or_a_clear_error(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        let text = String::from_utf8_lossy(&bytes);
        let r = load_and_judge(&text);
        prop_assert!(r.is_ok(), "{:?}", r);
    }

    #[test]
    fn mutated_examples_give_ok_or_a_clear_error(case in mutated_case()) {
        let (text, r) = run_mutated(&examples(), &case);
        prop_assert!(r.is_ok(), "{:?}\n{}", r, text);
    }
}

#[test]
fn pathological_documents_are_refused_quickly() {
    let deep = "[".repeat(100_000) + &"]".repeat(100_000);
    for text in [
        deep.as_str(),
        "",
        "\u{feff}{}",
        "{\"format\": \"orogen-graph\", \"version\": 1e400}",
        "{\"format\": \"orogen-graph\", \"version\": 1, \"nodes\": {}}",
    ] {
        let r = load_and_judge(text);
        assert!(r.is_ok(), "{r:?} for {text:.40}");
    }
}

fn corpus_dir() -> PathBuf {
    repo().join("tests/data/fuzz")
}

#[test]
fn corpus_inputs_give_ok_or_a_clear_error() {
    let mut n = 0;
    for e in std::fs::read_dir(corpus_dir())
        .expect("tests/data/fuzz")
        .flatten()
    {
        let bytes = std::fs::read(e.path()).expect("read");
        let text = String::from_utf8_lossy(&bytes);
        let r = load_and_judge(&text);
        assert!(r.is_ok(), "{}: {r:?}", e.path().display());
        n += 1;
    }
    assert!(n >= 10, "the corpus has {n} inputs");
}

#[test]
#[ignore = "grows tests/data/fuzz; run on demand"]
fn grow_corpus() {
    let cases: u32 = std::env::var("OROGEN_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000);
    let ex = examples();
    let dir = corpus_dir();
    std::fs::create_dir_all(&dir).expect("dir");
    let mut seen: BTreeMap<String, PathBuf> = BTreeMap::new();
    for e in std::fs::read_dir(&dir).expect("dir").flatten() {
        let text = std::fs::read_to_string(e.path()).unwrap_or_default();
        if let Ok(kind) = load_and_judge(&text) {
            seen.insert(kind, e.path());
        }
    }
    let before = seen.len();
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::deterministic_rng(Config::default().rng_algorithm),
    );
    let strategy = mutated_case();
    let mut failures = 0;
    for i in 0..cases {
        let case = strategy.new_tree(&mut runner).expect("case").current();
        let (text, r) = run_mutated(&ex, &case);
        match r {
            Ok(kind) => {
                // Small inputs only: the corpus stays a few hundred kilobytes.
                if !seen.contains_key(&kind) && text.len() < 12_000 {
                    // The first free name (two committed inputs may share a kind).
                    let path = (0..100_000)
                        .map(|k| dir.join(format!("case-{k:03}.json")))
                        .find(|p| !p.exists())
                        .expect("a free name");
                    std::fs::write(&path, &text).expect("write");
                    seen.insert(kind, path);
                }
            }
            Err(e) => {
                failures += 1;
                let path = dir.join(format!("failure-{i}.json"));
                std::fs::write(&path, &text).expect("write");
                eprintln!("FAILURE {e}: {}", path.display());
            }
        }
    }
    println!(
        "{cases} mutated inputs: {} kinds of outcome ({} new), {failures} failures",
        seen.len(),
        seen.len() - before
    );
    assert_eq!(failures, 0);
    let _ = Path::new("");
}
