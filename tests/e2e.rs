//! End-to-end tests over `graphs/`, `tests/data/` and the `orogen` CLI.

use orogen::build::{build, evaluate_outputs, BuildOptions, Exports};
use orogen::document::graph_file;
use orogen::eval::{CancelToken, EvalOptions, Evaluator, NodeStatus, Targets};
use orogen::graph::{Graph, NodeInstance, PortRef};
use orogen::io::heightmap::Format;
use orogen::node::{ParamKind, ParamValue, Registry};
use orogen::World;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

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
    assert!(v.len() >= 2, "expected at least two example graphs");
    v
}

fn load(path: &Path) -> Graph {
    graph_file::load_file(path).unwrap_or_else(|d| panic!("{d}"))
}

fn orogen() -> Command {
    // Hermetic: no reads or writes of the user's disk cache (tests/cache.rs covers it).
    let mut c = Command::new(env!("CARGO_BIN_EXE_orogen"));
    c.env("OROGEN_CACHE", "off");
    c
}

fn world() -> World {
    World {
        size_m: 1000.0,
        height_min_m: 0.0,
        height_max_m: 100.0,
    }
}

fn node(id: &str, ty: &str) -> NodeInstance {
    NodeInstance::new(id, Registry::builtin().get(ty).expect("node type"))
}

fn wire(g: &mut Graph, to: &str, port: &str, from: &str) {
    let n = g.node_mut(to).expect("node");
    let i = n.def.input_index(port).expect("port");
    let out = Registry::builtin()
        .get(g.node(from).expect("from").def.spec.id)
        .expect("def")
        .spec
        .outputs[0]
        .name;
    g.node_mut(to).expect("node").inputs[i] = Some(PortRef::new(from, out));
}

/// The default lies in the hard range, and the slider range is non-empty and inside it.
fn check_ranges<T: PartialOrd + Copy>(default: T, soft: (T, T), hard: (T, T), what: &str) {
    assert!(hard.0 <= default && default <= hard.1, "{what}");
    assert!(
        hard.0 <= soft.0 && soft.0 < soft.1 && soft.1 <= hard.1,
        "{what}: soft range outside hard"
    );
}

#[test]
fn registry_ids_unique_documented_and_defaults_in_range() {
    let reg = Registry::builtin();
    assert!(reg.duplicate_ids().is_empty(), "{:?}", reg.duplicate_ids());
    // The catalogue is a promise: ids are never renamed or removed (graph files name them).
    // Adding a node adds its id here (`OROGEN_BLESS=1`); anything else is a mistake.
    let ids: String = reg.defs().iter().fold(String::new(), |mut s, d| {
        s.push_str(d.spec.id);
        s.push('\n');
        s
    });
    let snapshot = repo().join("tests/data/node_ids.txt");
    if std::env::var_os("OROGEN_BLESS").is_some() {
        std::fs::write(&snapshot, &ids).expect("bless");
    }
    let want = std::fs::read_to_string(&snapshot).expect("tests/data/node_ids.txt");
    for id in want.lines() {
        assert!(
            reg.get(id).is_some(),
            "node type \"{id}\" disappeared: old graph files name it"
        );
    }
    assert_eq!(
        ids, want,
        "the node catalogue changed: OROGEN_BLESS=1 records additions"
    );
    for d in reg.defs() {
        let id = d.spec.id;
        assert!(orogen::graph::is_valid_id(id), "{id}");
        assert!(!d.spec.doc.trim().is_empty(), "{id}: no doc");
        assert!(!d.spec.label.is_empty(), "{id}: no label");
        assert!(!d.spec.outputs.is_empty(), "{id}: no outputs");
        for p in d.spec.inputs.iter().chain(d.spec.outputs) {
            assert!(!p.doc.trim().is_empty(), "{id}.{}: no doc", p.name);
        }
        let mut names: Vec<_> = d.params.iter().map(|p| p.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(
            names.len(),
            d.params.len(),
            "{id}: duplicate parameter names"
        );
        let mut labels: Vec<String> = d
            .params
            .iter()
            .map(orogen::node::ParamSpec::label)
            .collect();
        labels.sort_unstable();
        labels.dedup();
        assert_eq!(
            labels.len(),
            d.params.len(),
            "{id}: duplicate parameter labels"
        );
        for p in d.params {
            assert!(!p.doc_text().is_empty(), "{id}.{}: no doc", p.name);
            // A symbol needs a label a user can read ("kr" → "Rain (K_r)").
            assert!(
                p.name.len() > 2 || !p.label_text.is_empty(),
                "{id}.{}: a symbol needs a label",
                p.name
            );
            // A condition names a choice parameter of the same node and options it has.
            if let Some((param, one_of)) = p.applies_when {
                let options = d.params.iter().find(|q| q.name == param).map(|q| q.kind);
                let Some(ParamKind::Choice { options, .. }) = options else {
                    panic!(
                        "{id}.{}: applies_when names {param}, not a choice of {id}",
                        p.name
                    );
                };
                for o in one_of {
                    assert!(
                        options.contains(o),
                        "{id}.{}: {param} has no option {o}",
                        p.name
                    );
                }
            }
            // The default must pass the same validation as a value from a file.
            let json = graph_file::param_to_json(p, &p.default_value());
            assert_eq!(
                graph_file::param_value(p, &json),
                Ok(p.default_value()),
                "{id}.{}",
                p.name
            );
            match p.kind {
                ParamKind::Float {
                    default,
                    soft,
                    hard,
                } => check_ranges(default, soft, hard, &format!("{id}.{}", p.name)),
                ParamKind::Int {
                    default,
                    soft,
                    hard,
                } => check_ranges(default, soft, hard, &format!("{id}.{}", p.name)),
                ParamKind::Choice { default, options } => assert!(default < options.len()),
                _ => {}
            }
        }
    }
}

/// Every file under tests/data/invalid/ yields exactly the diagnostics in its `.err` file.
/// Set `OROGEN_BLESS=1` to rewrite the expectations (then review the diff).
#[test]
fn malformed_graphs_report_every_problem_exactly() {
    let dir = repo().join("tests/data/invalid");
    let mut count = 0;
    for entry in std::fs::read_dir(&dir).expect("dir") {
        let path = entry.expect("entry").path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        count += 1;
        let name = path
            .file_name()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        let label = format!("tests/data/invalid/{name}");
        let text = std::fs::read_to_string(&path).expect("read");
        let err = match graph_file::load(
            graph_file::Source::Text {
                text: &text,
                label: &label,
                base: Some(&dir),
            },
            &graph_file::LoadOptions::default(),
        ) {
            Ok(_) => panic!("{label} loaded but is invalid"),
            Err(d) => format!("{d}\n"),
        };
        let expected_path = path.with_extension("err");
        if std::env::var_os("OROGEN_BLESS").is_some() {
            std::fs::write(&expected_path, &err).expect("bless");
        }
        let expected = std::fs::read_to_string(&expected_path).unwrap_or_default();
        assert_eq!(err, expected, "{label}");
        // Every message names the file, and node problems name node and field.
        for line in err.lines() {
            assert!(line.starts_with(&label), "{line}");
        }
    }
    assert!(count >= 15, "only {count} malformed graphs");
}

/// Incomplete graphs (tests/data/incomplete/) are documents: they load, save and load again
/// to the same bytes; `orogen check` prints exactly the `.check` file next to each (warnings,
/// and the outputs they block) and exits 0 only when every output can be built.
/// `OROGEN_BLESS=1` rewrites the expectations.
#[test]
fn incomplete_graphs_load_round_trip_and_check_names_what_they_block() {
    let dir = repo().join("tests/data/incomplete");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert!(files.len() >= 5, "{files:?}");
    for path in files {
        let name = path
            .file_name()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        let label = format!("tests/data/incomplete/{name}");
        let text = std::fs::read_to_string(&path).expect("read");
        let g = graph_file::load_str(&text, &label).unwrap_or_else(|d| panic!("{d}"));
        assert!(g.errors().is_empty(), "{label}");
        assert!(!g.validate().is_empty(), "{label} has warnings");
        let saved = graph_file::to_string(&g);
        let again = graph_file::load_str(&saved, &label).expect("reload");
        assert_eq!(
            graph_file::to_string(&again),
            saved,
            "{label}: save → load → save"
        );
        if name == "scratch_node.json" {
            assert_eq!(
                saved, text,
                "an editor-written file round-trips byte for byte"
            );
        }
        let out = orogen()
            .current_dir(repo())
            .args(["check", &label])
            .output()
            .expect("run");
        let shown = format!(
            "exit {}\n{}{}",
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        // The memory estimate depends on the machine's thread count.
        let shown: String = shown
            .lines()
            .map(|l| match l.find("; estimated peak memory") {
                Some(i) => format!("{})", &l[..i]),
                None => l.to_owned(),
            })
            .collect::<Vec<_>>()
            .join("\n")
            + "\n";
        let expected_path = path.with_extension("check");
        if std::env::var_os("OROGEN_BLESS").is_some() {
            std::fs::write(&expected_path, &shown).expect("bless");
        }
        let expected = std::fs::read_to_string(&expected_path).unwrap_or_default();
        assert_eq!(shown, expected, "{label}");
        let blocked = g.blocked_outputs();
        assert_eq!(
            out.status.code(),
            Some(if blocked.is_empty() { 0 } else { 2 }),
            "{label}"
        );
    }
}

#[test]
fn loader_never_panics_on_mutated_files() {
    // Every prefix and many single-byte corruptions of a real graph: Ok or a clear error.
    let text = std::fs::read_to_string(repo().join("graphs/island.json")).expect("read");
    let bytes = text.as_bytes();
    for cut in (0..bytes.len()).step_by(7) {
        let s = String::from_utf8_lossy(&bytes[..cut]);
        let _ = graph_file::load_str(&s, "prefix");
    }
    for (i, _) in bytes.iter().enumerate().step_by(3) {
        for c in [b'"', b'{', b'9', b'-', b'x', b']'] {
            let mut b = bytes.to_vec();
            b[i] = c;
            if let Err(d) = graph_file::load_str(&String::from_utf8_lossy(&b), "mutated") {
                assert!(!d.items.is_empty());
            }
        }
    }
}

#[test]
fn every_example_graph_builds() {
    for path in example_graphs() {
        let graph = load(&path);
        let dir = tempfile::tempdir().expect("tempdir");
        let report = build(
            &graph,
            &BuildOptions {
                out_dir: dir.path().to_path_buf(),
                exports: Exports::default(),
                resolution: Some(128),
                graph_file: Some(&path),
                allow_outside: &[],
                keep_going: false,
                cancel: CancelToken::new(),
                progress: None,
                cache: None,
                arrays: None,
            },
        )
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(
            report.complete(),
            "{}: {:?}",
            path.display(),
            report.manifest.errors
        );
        assert_eq!(report.manifest.outputs.len(), graph.outputs.len());
        for o in &report.manifest.outputs {
            assert!(dir.path().join(&o.file).is_file());
            assert!(
                o.min.is_finite() && o.max.is_finite() && o.min <= o.max,
                "{o:?}"
            );
            assert!(
                o.max > o.min,
                "{}: output {} is flat",
                path.display(),
                o.name
            );
        }
        let manifest: serde_json::Value = serde_json::from_slice(
            &std::fs::read(dir.path().join("manifest.json")).expect("manifest"),
        )
        .expect("json");
        assert_eq!(manifest["resolution"], 128);
        // No temporary files are left behind.
        for e in std::fs::read_dir(dir.path()).expect("dir") {
            let name = e.expect("e").file_name().to_string_lossy().into_owned();
            assert!(!name.starts_with(".orogen-tmp"), "{name}");
        }
    }
}

/// A build writes the graph exactly as built next to its outputs (with `--set`, `--seed` and
/// the built size); building that copy gives the same files, and the manifest's hash is the
/// copy's.
#[test]
fn the_graph_copy_in_a_build_rebuilds_the_same_bytes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let st = orogen()
        .args([
            "build",
            "../graphs/island.json",
            "--size",
            "40",
            "--seed",
            "9",
        ])
        .args(["--set", "hills.octaves=4", "-o"])
        .arg(&a)
        .status()
        .expect("run");
    assert!(st.success());
    let copy = a.join("graph.json");
    let text = std::fs::read(&copy).expect("graph.json");
    let m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(a.join("manifest.json")).expect("m")).expect("json");
    assert_eq!(m["graph"]["copy"], "graph.json");
    assert_eq!(m["graph"]["hash"], blake3::hash(&text).to_hex().to_string());
    let g = load(&copy);
    assert_eq!((g.resolution, g.seed), (40, 9));
    let st = orogen()
        .arg("build")
        .arg(&copy)
        .arg("-o")
        .arg(&b)
        .status()
        .expect("run");
    assert!(st.success());
    for f in [
        "height.png",
        "falloff.png",
        "height.preview.png",
        "graph.json",
    ] {
        assert_eq!(
            std::fs::read(a.join(f)).expect("a"),
            std::fs::read(b.join(f)).expect("b"),
            "{f}"
        );
    }
}

#[test]
fn a_byte_order_mark_is_accepted() {
    let text = std::fs::read_to_string(repo().join("graphs/island.json")).expect("read");
    let with_bom = format!("\u{feff}{text}");
    let a = graph_file::load_str(&with_bom, "bom.json").unwrap_or_else(|d| panic!("{d}"));
    let b = graph_file::load_str(&text, "plain.json").expect("plain");
    assert_eq!(graph_file::to_string(&a), graph_file::to_string(&b));
}

#[test]
fn save_load_save_is_byte_identical() {
    for path in example_graphs() {
        let g1 = load(&path);
        let s1 = graph_file::to_string(&g1);
        let g2 = graph_file::load(
            graph_file::Source::Text {
                text: &s1,
                label: "saved",
                base: path.parent(),
            },
            &graph_file::LoadOptions::default(),
        )
        .unwrap_or_else(|d| panic!("{d}"));
        let s2 = graph_file::to_string(&g2);
        assert_eq!(s1, s2, "{}", path.display());
        // And the reloaded graph computes the same terrain.
        assert_eq!(
            evaluate_outputs(&g1, Some(32)).expect("g1"),
            evaluate_outputs(&g2, Some(32)).expect("g2")
        );
    }
}

/// The example and library graphs are stored in the writer's canonical form, so saving one
/// unchanged (the editor's Save, ⬅ Back from a subgraph) gives the very bytes on disk, and a
/// one-value edit is a one-line diff. `OROGEN_BLESS=1` rewrites them in that form.
#[test]
fn example_and_library_files_are_stored_as_the_writer_writes_them() {
    let lib: Vec<PathBuf> = std::fs::read_dir(repo().join("graphs/lib"))
        .expect("graphs/lib/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    assert!(!lib.is_empty());
    let bless = std::env::var_os("OROGEN_BLESS").is_some();
    let mut differ = Vec::new();
    for path in example_graphs().into_iter().chain(lib) {
        let text = std::fs::read_to_string(&path).expect("read");
        let written = graph_file::to_string(&load(&path));
        if text != written {
            if bless {
                std::fs::write(&path, &written).expect("bless");
            }
            differ.push(path.display().to_string());
        }
    }
    assert!(
        differ.is_empty() || bless,
        "not in the writer's form (OROGEN_BLESS=1 rewrites them): {differ:?}"
    );
}

#[test]
fn stored_v1_file_keeps_loading() {
    // A frozen copy of a version-1 file: never edit it; it must load in every later version.
    let g = load(&repo().join("tests/data/v1/island_v1.json"));
    assert_eq!(g.nodes.len(), 6);
    let out = evaluate_outputs(&g, Some(16)).expect("eval");
    assert!(out["height"].data().iter().all(|v| v.is_finite()));
}

fn eval_bytes(graph: &Graph, res: usize) -> BTreeMap<String, Vec<u8>> {
    evaluate_outputs(graph, Some(res))
        .expect("eval")
        .into_iter()
        .map(|(k, f)| (k, f.data().iter().flat_map(|v| v.to_le_bytes()).collect()))
        .collect()
}

#[test]
fn one_thread_and_many_threads_give_identical_bytes() {
    for path in example_graphs() {
        let g = load(&path);
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .expect("pool")
            .install(|| eval_bytes(&g, 96));
        let many = rayon::ThreadPoolBuilder::new()
            .num_threads(5)
            .build()
            .expect("pool")
            .install(|| eval_bytes(&g, 96));
        assert_eq!(one, many, "{}", path.display());
    }
}

#[test]
fn cli_output_files_identical_with_1_and_2_threads() {
    let dirs: Vec<_> = ["1", "2"]
        .iter()
        .map(|threads| {
            let dir = tempfile::tempdir().expect("tempdir");
            let st = orogen()
                .args([
                    "build",
                    "../graphs/ridges.json",
                    "--size",
                    "200",
                    "--format",
                    "f32",
                    "-o",
                ])
                .arg(dir.path())
                .env("RAYON_NUM_THREADS", threads)
                .status()
                .expect("run");
            assert!(st.success());
            dir
        })
        .collect();
    for f in ["height.f32", "snow.f32"] {
        let a = std::fs::read(dirs[0].path().join(f)).expect("a");
        let b = std::fs::read(dirs[1].path().join(f)).expect("b");
        assert_eq!(a.len(), 200 * 200 * 4);
        assert!(a == b, "{f} differs between 1 and 2 threads");
    }
}

/// hills → warp(invert) → mix(blend with flat) → out ; side: ramp → ramp_mask (independent)
fn diamond_graph() -> Graph {
    let mut g = Graph::new("t", world(), 32, 5);
    g.nodes.push(node("hills", "perlin_fbm"));
    g.nodes.push(node("flip", "invert"));
    g.nodes.push(node("flat", "constant"));
    g.nodes.push(node("mix", "blend"));
    g.nodes.push(node("out", "clamp"));
    g.nodes.push(node("ramp", "linear_gradient"));
    g.nodes.push(node("ramp_height", "levels"));
    wire(&mut g, "flip", "in", "hills");
    wire(&mut g, "mix", "a", "flip");
    wire(&mut g, "mix", "b", "flat");
    wire(&mut g, "out", "in", "mix");
    wire(&mut g, "ramp_height", "in", "ramp");
    g.outputs.insert("h".into(), PortRef::new("out", "out"));
    g.outputs
        .insert("r".into(), PortRef::new("ramp_height", "out"));
    g
}

#[test]
fn editing_a_parameter_reruns_exactly_its_downstream() {
    let mut g = diamond_graph();
    let mut ev = Evaluator::with_cache(1 << 30);
    let opts = EvalOptions {
        targets: Targets::All,
        ..EvalOptions::default()
    };
    let first = ev.evaluate(&g, &opts).expect("eval");
    assert_eq!(
        first.evaluated(),
        vec!["flat", "flip", "hills", "mix", "out", "ramp", "ramp_height"]
    );

    let again = ev.evaluate(&g, &opts).expect("eval");
    assert!(again.evaluated().is_empty(), "{:?}", again.evaluated());

    g.set_param("flip", "unused", ParamValue::Float(1.0))
        .expect_err("invert has no params");
    g.set_param("flat", "height_m", ParamValue::Float(42.0))
        .expect("set");
    let edit = ev.evaluate(&g, &opts).expect("eval");
    assert_eq!(edit.evaluated(), vec!["flat", "mix", "out"]);

    g.set_param("hills", "octaves", ParamValue::Int(3))
        .expect("set");
    let edit = ev.evaluate(&g, &opts).expect("eval");
    assert_eq!(edit.evaluated(), vec!["flip", "hills", "mix", "out"]);

    // Setting a value back hits the cache: keys are content hashes, not dirty flags.
    g.set_param("hills", "octaves", ParamValue::Int(6))
        .expect("set");
    assert!(ev.evaluate(&g, &opts).expect("eval").evaluated().is_empty());

    // Resolution and seed are part of every key.
    let res = ev
        .evaluate(
            &g,
            &EvalOptions {
                resolution: Some(16),
                targets: Targets::All,
                ..EvalOptions::default()
            },
        )
        .expect("eval");
    assert_eq!(res.evaluated().len(), 7);
    g.seed = 6;
    assert_eq!(ev.evaluate(&g, &opts).expect("eval").evaluated().len(), 7);
}

#[test]
fn cached_result_equals_fresh_result() {
    let g = diamond_graph();
    let mut cached = Evaluator::with_cache(1 << 30);
    let opts = EvalOptions::default();
    let _ = cached.evaluate(&g, &opts).expect("warm");
    let a = cached.evaluate(&g, &opts).expect("cached");
    let b = Evaluator::new().evaluate(&g, &opts).expect("fresh");
    for r in g.outputs.values() {
        assert_eq!(a.field(&g, r), b.field(&g, r));
    }
}

#[test]
fn failing_node_skips_its_downstream_and_the_rest_completes() {
    let mut g = diamond_graph();
    // Make `flip`'s upstream fail at evaluation time: a file that does not exist.
    g.nodes.push(node("broken", "import"));
    g.set_param(
        "broken",
        "path",
        ParamValue::Text("no/such/heightmap.png".into()),
    )
    .expect("set");
    wire(&mut g, "flip", "in", "broken");
    let res = Evaluator::new()
        .evaluate(&g, &EvalOptions::default())
        .expect("eval");
    match &res.status["broken"] {
        NodeStatus::Failed(e) => assert!(e.to_string().contains("no/such/heightmap.png"), "{e}"),
        s => panic!("{s:?}"),
    }
    for id in ["flip", "mix", "out"] {
        assert_eq!(
            res.status[id],
            NodeStatus::Skipped {
                upstream: "broken".into()
            },
            "{id}"
        );
    }
    assert_eq!(res.status["ramp_height"], NodeStatus::Computed);
    assert!(res.field(&g, &g.outputs["r"]).is_some());
    assert!(res.field(&g, &g.outputs["h"]).is_none());
    assert!(
        !res.status.contains_key("hills"),
        "hills is no longer needed"
    );
}

#[test]
fn chain_frees_intermediates() {
    // constant → 19 × invert: peak live memory stays at two fields, not twenty.
    let mut g = Graph::new("chain", world(), 64, 0);
    g.nodes.push(node("n0", "constant"));
    for i in 1..20 {
        g.nodes.push(node(&format!("n{i}"), "invert"));
        wire(&mut g, &format!("n{i}"), "in", &format!("n{}", i - 1));
    }
    g.outputs.insert("h".into(), PortRef::new("n19", "out"));
    let res = Evaluator::new()
        .evaluate(&g, &EvalOptions::default())
        .expect("eval");
    let field_bytes = 64 * 64 * 4;
    assert_eq!(res.evaluated().len(), 20);
    assert!(
        res.peak_live_bytes <= 2 * field_bytes,
        "peak {} bytes",
        res.peak_live_bytes
    );
    assert_eq!(res.fields.len(), 1);
}

#[test]
fn cancelled_evaluation_stops_and_reports() {
    let g = diamond_graph();
    let cancel = CancelToken::new();
    cancel.cancel();
    let res = Evaluator::new()
        .evaluate(
            &g,
            &EvalOptions {
                cancel,
                ..EvalOptions::default()
            },
        )
        .expect("eval");
    assert!(res.evaluated().is_empty());
    assert!(res
        .failures()
        .iter()
        .all(|(_, e)| **e == orogen::node::NodeError::Cancelled));
}

#[test]
fn same_terrain_at_every_resolution() {
    // 1024² box-downsampled to 256² matches the 256² build: the graph is defined in world units.
    let g = load(&repo().join("graphs/ridges.json"));
    let lo = evaluate_outputs(&g, Some(256)).expect("256");
    let hi = evaluate_outputs(&g, Some(1024)).expect("1024");
    let span = g.world.height_span_m() as f32;
    let a = &lo["height"];
    let b = hi["height"].downsample_box(4);
    let n = a.data().len() as f32;
    let mean = a
        .data()
        .iter()
        .zip(b.data())
        .map(|(x, y)| (x - y).abs())
        .sum::<f32>()
        / n;
    let max = a
        .data()
        .iter()
        .zip(b.data())
        .map(|(x, y)| (x - y).abs())
        .fold(0.0f32, f32::max);
    // Small octaves that 256² cannot resolve are averaged out by the downsampling, which
    // the point-sampled 256² build cannot do: tolerance 1% mean, 5% max of the height span.
    assert!(mean < 0.01 * span, "mean abs diff {mean} m");
    assert!(max < 0.05 * span, "max abs diff {max} m");
}

#[test]
fn import_reads_back_a_built_heightmap() {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = load(&repo().join("graphs/ridges.json"));
    for format in [Format::Png16, Format::Exr] {
        let out = dir.path().join(format.name());
        build(
            &src,
            &BuildOptions {
                out_dir: out.clone(),
                exports: Exports {
                    formats: vec![format],
                    ..Exports::default()
                },
                resolution: Some(64),
                graph_file: None,
                allow_outside: &[],
                keep_going: false,
                cancel: CancelToken::new(),
                progress: None,
                cache: None,
                arrays: None,
            },
        )
        .expect("build");
        let mut g = Graph::new("import", src.world, 64, 0);
        g.nodes.push(node("in", "import"));
        g.set_param(
            "in",
            "path",
            ParamValue::Text(format!("{}/height.{}", format.name(), format.extension())),
        )
        .expect("set");
        g.outputs.insert("h".into(), PortRef::new("in", "out"));
        let res = Evaluator::new()
            .evaluate(
                &g,
                &EvalOptions {
                    base_dir: Some(dir.path()),
                    ..EvalOptions::default()
                },
            )
            .expect("eval");
        let imported = res
            .field(&g, &g.outputs["h"])
            .unwrap_or_else(|| panic!("{:?}", res.failures()));
        let original = &evaluate_outputs(&src, Some(64)).expect("src")["height"];
        for (a, b) in imported.data().iter().zip(original.data()) {
            assert!((a - b).abs() < 0.02, "{format:?}: {a} vs {b}");
        }
    }
}

#[test]
fn cli_check_build_and_exit_codes() {
    let ok = orogen()
        .args(["check", "../graphs/island.json"])
        .output()
        .expect("run");
    assert_eq!(ok.status.code(), Some(0));

    let bad = orogen()
        .args(["check", "../tests/data/invalid/many_problems.json"])
        .output()
        .expect("run");
    assert_eq!(bad.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(
        stderr.contains("node \"m2\": type: unknown node type \"mystery\""),
        "{stderr}"
    );
    assert!(stderr.contains("3 problems"), "{stderr}");

    let dir = tempfile::tempdir().expect("tempdir");
    let set = orogen()
        .args([
            "build",
            "../graphs/island.json",
            "--size",
            "48",
            "--set",
            "hills.octaves=40",
            "-o",
        ])
        .arg(dir.path())
        .output()
        .expect("run");
    assert_eq!(set.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&set.stderr)
        .contains("node \"hills\": params.octaves: value 40 is outside the allowed range [1, 16]"));

    // An unwired scratch node feeding no output: check passes with a warning, build builds.
    let scratch = dir.path().join("scratch.json");
    let mut g = load(&repo().join("graphs/island.json"));
    g.nodes.push(node("terrace", "terrace"));
    graph_file::save_file(&scratch, &g).expect("save");
    let check = orogen().arg("check").arg(&scratch).output().expect("run");
    assert_eq!(check.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&check.stderr).contains(
        "warning: node \"terrace\": inputs.in: required height input is not connected (it feeds no output)"
    ));
    let run = orogen()
        .arg("build")
        .arg(&scratch)
        .args(["--size", "32", "-o"])
        .arg(dir.path().join("scratch_out"))
        .output()
        .expect("run");
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );

    // The same node on an output's chain: check and build name the output and the node (exit
    // 2, nothing written); --keep-going writes the other outputs (exit 1).
    g.outputs.insert("t".into(), PortRef::new("terrace", "out"));
    graph_file::save_file(&scratch, &g).expect("save");
    let check = orogen().arg("check").arg(&scratch).output().expect("run");
    assert_eq!(check.status.code(), Some(2));
    let blocked = "output \"t\" cannot be built: it depends on node \"terrace\", which is incomplete (inputs.in: required height input is not connected)";
    assert!(String::from_utf8_lossy(&check.stderr).contains(blocked));
    let out = dir.path().join("blocked_out");
    let run = orogen()
        .arg("build")
        .arg(&scratch)
        .args(["--size", "32", "-o"])
        .arg(&out)
        .output()
        .expect("run");
    assert_eq!(run.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&run.stderr).contains(blocked));
    assert!(!out.exists(), "nothing written");
    let run = orogen()
        .arg("build")
        .arg(&scratch)
        .args(["--size", "32", "--keep-going", "-o"])
        .arg(&out)
        .output()
        .expect("run");
    assert_eq!(run.status.code(), Some(1));
    assert!(out.join("height.png").is_file() && !out.join("t.png").exists());
    assert!(String::from_utf8_lossy(&run.stderr).contains("not built: t"));

    // A failing node: exit 1 and nothing written; with --keep-going the other outputs are
    // written and the manifest names the error.
    let graph = dir.path().join("g.json");
    let mut g = load(&repo().join("graphs/island.json"));
    g.nodes.push(node("clamped", "clamp"));
    g.set_param("clamped", "low", ParamValue::Float(0.8))
        .expect("set");
    g.set_param("clamped", "high", ParamValue::Float(0.2))
        .expect("set");
    wire(&mut g, "clamped", "in", "hills");
    g.outputs
        .insert("broken".into(), PortRef::new("clamped", "out"));
    graph_file::save_file(&graph, &g).expect("save");
    let out = dir.path().join("out");
    let run = orogen()
        .arg("build")
        .arg(&graph)
        .args(["--size", "32", "-o"])
        .arg(&out)
        .output()
        .expect("run");
    assert_eq!(run.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains(
            "output \"broken\" not built: node \"clamped\": low (0.8) is above high (0.2)"
        ),
        "{stderr}"
    );
    assert!(!out.exists(), "without --keep-going nothing is written");
    let run = orogen()
        .arg("build")
        .arg(&graph)
        .args(["--size", "32", "--keep-going", "-o"])
        .arg(&out)
        .output()
        .expect("run");
    assert_eq!(run.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains("node \"clamped\": low (0.8) is above high (0.2)"),
        "{stderr}"
    );
    assert!(out.join("height.png").is_file());
    assert!(!out.join("broken.png").exists());
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("manifest.json")).expect("m"))
            .expect("json");
    assert!(manifest["errors"]["clamped"]
        .as_str()
        .is_some_and(|s| s.contains("above high")));

    // --seed changes the terrain; the same seed gives the same hash.
    let hash = |seed: &str| {
        let o = dir.path().join(format!("s{seed}"));
        let st = orogen()
            .args([
                "build",
                "../graphs/island.json",
                "--size",
                "32",
                "--seed",
                seed,
                "-o",
            ])
            .arg(&o)
            .status()
            .expect("run");
        assert!(st.success());
        let m: serde_json::Value =
            serde_json::from_slice(&std::fs::read(o.join("manifest.json")).expect("m"))
                .expect("json");
        m["outputs"][1]["hash"].as_str().expect("hash").to_owned()
    };
    assert_eq!(hash("1"), hash("1"));
    assert_ne!(hash("1"), hash("2"));

    let nodes = orogen().args(["nodes", "--json"]).output().expect("run");
    let cat: serde_json::Value = serde_json::from_slice(&nodes.stdout).expect("catalogue json");
    assert_eq!(
        cat.as_array().map(Vec::len),
        Some(Registry::builtin().defs().len())
    );
}

/// Region evaluation: a window of the grid, evaluated alone (each node over what its
/// consumers read, its footprint added), gives the very bits of the whole-map build there —
/// for every example graph whose nodes are all local (generators, combiners, warps, blurs,
/// slopes: `shaping.json` has them all), on uneven windows, interior and at the map's edges.
#[test]
fn a_window_of_a_local_graph_is_bit_identical_to_the_whole_map() {
    use orogen::node::{Footprint, Window};
    let n = 200;
    let windows = [
        Window {
            x0: 0,
            y0: 0,
            width: 70,
            height: 90,
        },
        Window {
            x0: 70,
            y0: 37,
            width: 61,
            height: 80,
        },
        Window {
            x0: 131,
            y0: 117,
            width: 69,
            height: 83,
        },
        Window {
            x0: 13,
            y0: 150,
            width: 187,
            height: 11,
        },
    ];
    let mut checked = Vec::new();
    let mut failures = Vec::new();
    for path in example_graphs() {
        let g = load(&path);
        let cell = g.world.cell_size_m(n);
        if g.flattened()
            .nodes
            .iter()
            .any(|x| x.def.footprint(&x.params, cell, n) == Footprint::Global)
        {
            continue;
        }
        checked.push(
            path.file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_default(),
        );
        let whole = Evaluator::new()
            .evaluate(
                &g,
                &EvalOptions {
                    resolution: Some(n),
                    base_dir: path.parent(),
                    ..EvalOptions::default()
                },
            )
            .expect("whole map");
        for w in windows {
            let part = Evaluator::new()
                .evaluate(
                    &g,
                    &EvalOptions {
                        resolution: Some(n),
                        base_dir: path.parent(),
                        window: Some(w),
                        ..EvalOptions::default()
                    },
                )
                .expect("window");
            for (name, r) in &g.outputs {
                let a = whole.field(&g, r).expect("whole");
                let b = part.field(&g, r).expect("part");
                let want = Window::full(n).crop(&a, &w);
                let same = want
                    .data()
                    .iter()
                    .zip(b.data())
                    .all(|(x, y)| x.to_bits() == y.to_bits());
                if !(same && b.width() == w.width && b.height() == w.height) {
                    let diffs = want
                        .data()
                        .iter()
                        .zip(b.data())
                        .filter(|(x, y)| x.to_bits() != y.to_bits())
                        .count();
                    let maxd = want
                        .data()
                        .iter()
                        .zip(b.data())
                        .map(|(x, y)| (x - y).abs())
                        .fold(0.0f32, f32::max);
                    failures.push(format!(
                        "{}: {name} in {w:?}: {diffs} cells, max {maxd}",
                        path.display()
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
    assert!(
        checked.len() >= 3 && checked.iter().any(|c| c == "shaping.json"),
        "local example graphs checked: {checked:?}"
    );
}

/// `orogen stats` describes a scalar (a drainage area in m²) by its values only — no slope,
/// hypsometry, spectrum or coastline, which would read it as a terrain — and a height with them.
#[test]
fn stats_treats_a_scalar_as_a_quantity_not_a_terrain() {
    let graph = repo().join("tests/data/water.json");
    let run = |output: &str| {
        let out = orogen()
            .args([
                "stats",
                graph.to_str().expect("path"),
                output,
                "--size",
                "64",
            ])
            .output()
            .expect("run orogen");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let area = run("flow_area");
    assert!(area.contains("min 3906.250"), "{area}");
    assert!(
        area.contains("a scalar in its own unit: no slope, hypsometry, spectrum or coastline"),
        "{area}"
    );
    assert!(
        !area.contains("slope mean") && !area.contains("coastline fractal"),
        "{area}"
    );
    let lake = run("lake_surface");
    assert!(
        lake.contains("slope mean") && lake.contains("hypsometric integral"),
        "{lake}"
    );
}
