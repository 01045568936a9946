//! Sharing graphs (issue 26): graph parameters, subgraphs, content hashes, the v1 → v2
//! migration.

use crate::common;

use common::repo;
use orogen::build::evaluate_outputs;
use orogen::document::graph_file::{self, LoadOptions};
use orogen::eval::{EvalOptions, Evaluator, Targets};
use orogen::node::ParamValue;
use orogen::Graph;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn orogen() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_orogen"));
    c.env("OROGEN_CACHE", "off");
    c.current_dir(repo());
    c
}

fn temp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("orogen-sharing-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

fn load_with(path: &Path, params: &[(String, serde_json::Value)]) -> Graph {
    graph_file::load(
        graph_file::Source::File(path),
        &LoadOptions {
            params,
            ..LoadOptions::default()
        },
    )
    .unwrap_or_else(|d| panic!("{d}"))
}

fn bits(outputs: &BTreeMap<String, orogen::field::Field>) -> BTreeMap<String, Vec<u32>> {
    outputs
        .iter()
        .map(|(k, f)| (k.clone(), f.data().iter().map(|v| v.to_bits()).collect()))
        .collect()
}

fn param_of(g: &Graph, node: &str, param: &str) -> ParamValue {
    g.node(node)
        .and_then(|n| n.param(param))
        .cloned()
        .expect("param")
}

#[test]
fn a_parameter_bound_at_two_places_changes_both() {
    let lib = repo().join("graphs/lib/mountain_range.json");
    let g = load_with(&lib, &[]);
    assert_eq!(param_of(&g, "ridges", "octaves"), ParamValue::Int(8));
    assert_eq!(param_of(&g, "foothills", "octaves"), ParamValue::Int(8));
    let base = bits(&evaluate_outputs(&g, Some(64)).expect("eval"));

    // --param sets it in both nodes…
    let g5 = load_with(&lib, &[("detail".into(), serde_json::json!(5))]);
    assert_eq!(param_of(&g5, "ridges", "octaves"), ParamValue::Int(5));
    assert_eq!(param_of(&g5, "foothills", "octaves"), ParamValue::Int(5));
    // … and so does the editor's path, set_parameter; the terrain follows.
    let mut g3 = g.clone();
    g3.set_parameter("detail", ParamValue::Int(3)).expect("set");
    assert_eq!(param_of(&g3, "ridges", "octaves"), ParamValue::Int(3));
    assert_eq!(param_of(&g3, "foothills", "octaves"), ParamValue::Int(3));
    assert_ne!(bits(&evaluate_outputs(&g3, Some(64)).expect("eval")), base);
    assert_eq!(
        g3.set_parameter("detail", ParamValue::Int(40)),
        Err("graph parameter \"detail\": expected an integer in [1, 16], found 40".to_owned())
    );
    // Saved, a bound parameter is the binding, not a copy of the value.
    let text = graph_file::to_string(&g3);
    let v: serde_json::Value = serde_json::from_str(&text).expect("json");
    let ridges = v["nodes"]
        .as_array()
        .and_then(|a| a.iter().find(|n| n["id"] == "ridges"))
        .expect("ridges");
    assert_eq!(ridges["bind"]["octaves"], "detail");
    assert!(ridges["params"].get("octaves").is_none());
    assert_eq!(v["parameters"]["detail"]["default"], 3);
}

#[test]
fn param_flag_errors_name_the_parameter_and_its_range() {
    let run = |arg: &str| {
        let o = orogen()
            .args([
                "build",
                "graphs/lib/mountain_range.json",
                "--size",
                "32",
                "-o",
            ])
            .arg(temp("param-flag"))
            .args(["--param", arg])
            .output()
            .expect("run");
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    assert_eq!(
        run("detail=40"),
        (
            Some(2),
            "graphs/lib/mountain_range.json: --param detail: value 40 is outside the allowed range [1, 16]\n"
                .to_owned()
        )
    );
    assert_eq!(
        run("detial=3"),
        (
            Some(2),
            "graphs/lib/mountain_range.json: --param detial: no graph parameter \"detial\" (did you mean \"detail\"?); the graph's parameters are \"detail\", \"feature_size_m\", \"talus_deg\" or \"variant\"\n"
                .to_owned()
        )
    );
    assert_eq!(
        run("talus_deg=steep"),
        (
            Some(2),
            "graphs/lib/mountain_range.json: --param talus_deg: expected a number in [5, 80], found a string\n"
                .to_owned()
        )
    );
    let (code, _) = run("talus_deg=30");
    assert_eq!(code, Some(0));
}

/// The same nodes written out by hand (`tests/data/subgraphs/inlined.json`) give the same
/// bytes as the graph that uses them as a subgraph (`outer.json`), with its parameters set
/// and its input wired.
#[test]
fn a_subgraph_node_equals_the_same_nodes_inlined() {
    let dir = repo().join("tests/data/subgraphs");
    let outer = load_with(&dir.join("outer.json"), &[]);
    let inlined = load_with(&dir.join("inlined.json"), &[]);
    for n in [64, 97] {
        let a = bits(&evaluate_outputs(&outer, Some(n)).expect("outer"));
        let b = bits(&evaluate_outputs(&inlined, Some(n)).expect("inlined"));
        assert_eq!(a.keys().collect::<Vec<_>>(), ["height", "scree"]);
        assert_eq!(a, b, "at {n}²");
    }
    // Region evaluation through the subgraph: the coarse pass covers the inner erosion node.
    let region = orogen::tiles::evaluate_region(
        &outer,
        96,
        orogen::node::Window {
            x0: 10,
            y0: 20,
            width: 40,
            height: 30,
        },
        48,
        &EvalOptions::default(),
    )
    .expect("region");
    assert!(region.fields.contains_key("range"));
}

fn write_outer(dir: &Path) {
    std::fs::create_dir_all(dir.join("lib")).expect("lib");
    std::fs::copy(
        repo().join("graphs/lib/coastline.json"),
        dir.join("lib/coastline.json"),
    )
    .expect("copy");
    std::fs::write(
        dir.join("outer.json"),
        r#"{
  "format": "orogen-graph", "version": 2, "name": "coast test", "seed": 4,
  "world": { "size_m": 8000.0, "height_min_m": -200.0, "height_max_m": 1200.0 },
  "resolution": 48,
  "nodes": [
    { "id": "land", "type": "noise", "params": { "feature_size_m": 3000.0, "base": 0.3 } },
    { "id": "coast", "type": "subgraph", "graph": "lib/coastline.json",
      "params": { "beach_width_m": 200.0 }, "inputs": { "terrain": "land" } }
  ],
  "outputs": { "height": "coast.height", "beach": "coast.beach" }
}
"#,
    )
    .expect("write");
}

fn evaluated(ev: &mut Evaluator, g: &Graph) -> Vec<String> {
    ev.evaluate(
        g,
        &EvalOptions {
            targets: Targets::Outputs,
            ..EvalOptions::default()
        },
    )
    .expect("eval")
    .evaluated()
    .into_iter()
    .map(str::to_owned)
    .collect()
}

#[test]
fn editing_the_inner_file_recomputes_exactly_what_depends_on_it() {
    let dir = temp("recompute");
    write_outer(&dir);
    let outer = dir.join("outer.json");
    let mut ev = Evaluator::with_cache(512 << 20);
    let first = evaluated(&mut ev, &load_with(&outer, &[]));
    assert_eq!(
        first,
        [
            "coast",
            "coast/beach_soft",
            "coast/graded",
            "coast/sand_level",
            "coast/sea",
            "coast/terrain",
            "land"
        ]
    );
    assert!(evaluated(&mut ev, &load_with(&outer, &[])).is_empty());
    // The sea node's beach slope: the sea and everything downstream of it in the subgraph.
    let lib = dir.join("lib/coastline.json");
    let text = std::fs::read_to_string(&lib).expect("read");
    std::fs::write(
        &lib,
        text.replace("\"beach_slope_deg\": 12.0", "\"beach_slope_deg\": 20.0"),
    )
    .expect("edit");
    assert_eq!(
        evaluated(&mut ev, &load_with(&outer, &[])),
        ["coast", "coast/beach_soft", "coast/graded", "coast/sea"]
    );
    // Words only: nothing to recompute.
    let text = std::fs::read_to_string(&lib).expect("read");
    std::fs::write(&lib, text.replace("Floods a terrain", "Floods any terrain")).expect("edit");
    assert!(evaluated(&mut ev, &load_with(&outer, &[])).is_empty());
    // A parameter of the subgraph node set from outside: the nodes bound to it.
    let mut g = load_with(&outer, &[]);
    g.set_param("coast", "beach_width_m", ParamValue::Float(90.0))
        .expect("set");
    g.apply_parameters();
    let flat = g.flattened();
    assert_eq!(
        param_of(&flat, "coast/sea", "shore_width_m"),
        ParamValue::Float(90.0)
    );
    assert_eq!(
        evaluated(&mut ev, &g),
        ["coast", "coast/beach_soft", "coast/graded", "coast/sea"]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_changed_subgraph_file_is_reported_until_accepted() {
    let dir = temp("stale");
    write_outer(&dir);
    let outer = dir.join("outer.json");
    let check = |accept: bool| {
        let mut c = orogen();
        c.arg("check");
        if accept {
            c.arg("--accept");
        }
        let o = c.arg(&outer).output().expect("run");
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let (code, _, err) = check(false);
    assert_eq!(code, Some(0));
    assert!(
        err.contains(
            "node \"coast\": subgraph file \"lib/coastline.json\" has no content hash recorded"
        ),
        "{err}"
    );
    let (code, out, _) = check(true);
    assert_eq!(code, Some(0));
    assert!(out.contains("accepted: node \"coast\""), "{out}");
    let (_, _, err) = check(false);
    assert!(!err.contains("warning"), "{err}");
    let g = load_with(&outer, &[]);
    let recorded = g
        .node("coast")
        .and_then(|n| n.subgraph.clone())
        .expect("sub");
    assert!(!recorded.is_stale() && recorded.hash.starts_with("blake3:"));

    let lib = dir.join("lib/coastline.json");
    let text = std::fs::read_to_string(&lib).expect("read");
    std::fs::write(
        &lib,
        text.replace("\"beach_slope_deg\": 12.0", "\"beach_slope_deg\": 14.0"),
    )
    .expect("edit");
    let (code, _, err) = check(false);
    assert_eq!(
        code,
        Some(0),
        "a changed subgraph is a warning, not an error"
    );
    assert!(
        err.contains("node \"coast\": subgraph file \"lib/coastline.json\" changed since this graph recorded it")
            && err.contains("orogen check --accept"),
        "{err}"
    );
    // Reformatting the file is no change: the hash is of the graph, not of its bytes.
    let (_, _, _) = check(true);
    let g: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&lib).expect("read")).expect("json");
    std::fs::write(&lib, serde_json::to_string(&g).expect("compact")).expect("write");
    let (_, _, err) = check(false);
    assert!(!err.contains("warning"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A build writes the graph as built with its subgraphs embedded: the copy builds again, on
/// its own, to the same bytes; the manifest lists the parameters' values.
#[test]
fn a_build_copy_is_self_contained_and_lists_the_parameters() {
    let dir = temp("copy");
    let graph = repo().join("graphs/coast_range.json");
    let o = orogen()
        .args([
            "build",
            "graphs/coast_range.json",
            "--size",
            "64",
            "--format",
            "r16",
            "--param",
            "sea_level_m=300",
            "-o",
        ])
        .arg(dir.join("a"))
        .output()
        .expect("run");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let manifest: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("a/manifest.json")).expect("manifest"),
    )
    .expect("json");
    assert_eq!(manifest["parameters"]["sea_level_m"], 300.0);
    // The copy, moved away from graphs/lib, builds the same bytes.
    std::fs::create_dir_all(dir.join("elsewhere")).expect("dir");
    std::fs::copy(dir.join("a/graph.json"), dir.join("elsewhere/copy.json")).expect("copy");
    let o = orogen()
        .args(["build", "--format", "r16", "-o"])
        .arg(dir.join("b"))
        .arg(dir.join("elsewhere/copy.json"))
        .output()
        .expect("run");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    for name in ["height.r16", "beach.r16", "rivers.r16"] {
        assert_eq!(
            std::fs::read(dir.join("a").join(name)).expect("a"),
            std::fs::read(dir.join("b").join(name)).expect("b"),
            "{name}"
        );
    }
    // And --param changed the terrain.
    let o = orogen()
        .args(["build", "--size", "64", "--format", "r16", "-o"])
        .arg(dir.join("c"))
        .arg(&graph)
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(0));
    assert_ne!(
        std::fs::read(dir.join("a/height.r16")).expect("a"),
        std::fs::read(dir.join("c/height.r16")).expect("c")
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_v1_file_migrates_to_v2_and_back_to_the_same_graph() {
    let v1 = repo().join("tests/data/v1/island_v1.json");
    let text = std::fs::read_to_string(&v1).expect("read");
    assert!(text.contains("\"version\": 1"));
    let g1 = load_with(&v1, &[]);
    let saved = graph_file::to_string(&g1);
    assert!(saved.contains("\"version\": 2"), "{saved}");
    let g2 = graph_file::load_str(&saved, "saved").expect("v2 loads");
    assert_eq!(graph_file::to_string(&g2), saved, "v2 save → load → save");
    assert_eq!(
        bits(&evaluate_outputs(&g1, Some(48)).expect("v1")),
        bits(&evaluate_outputs(&g2, Some(48)).expect("v2"))
    );
    // A v2 file without the new fields is the v1 file renumbered.
    let renumbered: serde_json::Value =
        serde_json::from_str(&text.replace("\"version\": 1", "\"version\": 2")).expect("json");
    let original: serde_json::Value = serde_json::from_str(&saved).expect("json");
    assert_eq!(
        renumbered["nodes"].as_array().map(Vec::len),
        original["nodes"].as_array().map(Vec::len)
    );
    assert!(original.get("parameters").is_none());
}

#[test]
fn every_library_graph_is_documented_with_parameters_and_a_golden() {
    let mut names = Vec::new();
    for entry in std::fs::read_dir(repo().join("graphs/lib")).expect("lib") {
        let path = entry.expect("entry").path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let name = path
            .file_stem()
            .expect("stem")
            .to_string_lossy()
            .into_owned();
        let g = load_with(&path, &[]);
        assert!(!g.doc.is_empty(), "{name} has no doc");
        assert!(!g.parameters.is_empty(), "{name} exposes no parameter");
        for p in &g.parameters {
            assert!(
                !p.spec.doc.is_empty(),
                "{name}: parameter {} has no doc",
                p.spec.name
            );
        }
        common::check_goldens(&g, &format!("lib/{name}"));
        names.push(name);
    }
    names.sort();
    assert_eq!(names, ["coastline", "mountain_range", "river_valley"]);
}

// ---- Bundles ----

use orogen::document::bundle;

#[test]
fn pack_then_build_equals_the_original_build_and_unpack_restores_the_files() {
    let dir = temp("pack");
    let b1 = dir.join("coast.orogen");
    let m = bundle::pack(&repo().join("graphs/coast_range.json"), &b1, None).expect("pack");
    assert_eq!(m.graph, "coast_range.json");
    let paths: Vec<&str> = m.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "coast_range.json",
            "lib/coastline.json",
            "lib/mountain_range.json",
            "lib/river_valley.json"
        ]
    );
    // The same files packed from another folder give the same bytes.
    let copy = dir.join("elsewhere/deeper");
    std::fs::create_dir_all(copy.join("lib")).expect("dir");
    for p in &paths {
        std::fs::copy(repo().join("graphs").join(p), copy.join(p)).expect("copy");
    }
    let b2 = dir.join("again.orogen");
    bundle::pack(&copy.join("coast_range.json"), &b2, None).expect("pack again");
    assert_eq!(
        std::fs::read(&b1).expect("b1"),
        std::fs::read(&b2).expect("b2")
    );

    // Building the bundle gives the original build's bytes.
    let build = |input: &Path, out: &str| {
        let o = orogen()
            .args(["build", "--size", "64", "--format", "r16", "-o"])
            .arg(dir.join(out))
            .arg(input)
            .output()
            .expect("run");
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
    };
    build(&b1, "from_bundle");
    build(&repo().join("graphs/coast_range.json"), "from_files");
    for name in ["height.r16", "beach.r16", "rivers.r16"] {
        assert_eq!(
            std::fs::read(dir.join("from_bundle").join(name)).expect("a"),
            std::fs::read(dir.join("from_files").join(name)).expect("b"),
            "{name}"
        );
    }
    // Unpacking restores identical files; unpacking again over them is harmless.
    let out = dir.join("unpacked");
    for _ in 0..2 {
        let main = bundle::unpack(&b1, &out, false, None).expect("unpack");
        assert_eq!(main, out.join("coast_range.json"));
    }
    for p in &paths {
        assert_eq!(
            std::fs::read(out.join(p)).expect("unpacked"),
            std::fs::read(repo().join("graphs").join(p)).expect("original"),
            "{p}"
        );
    }
    // A file changed since is not silently replaced.
    std::fs::write(out.join("lib/coastline.json"), "edited").expect("edit");
    let err = bundle::unpack(&b1, &out, false, None).expect_err("refuses");
    assert!(
        err.contains("exists with other content") && err.contains("--force"),
        "{err}"
    );
    bundle::unpack(&b1, &out, true, None).expect("force");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_bundle_refuses_absolute_import_paths() {
    let dir = temp("abs-import");
    std::fs::write(
        dir.join("g.json"),
        r#"{"format": "orogen-graph", "version": 2, "nodes": [
            {"id": "i", "type": "import", "params": {"path": "/etc/hosts.png"}}],
            "outputs": {"h": "i"}}"#,
    )
    .expect("write");
    let err = bundle::pack(&dir.join("g.json"), &dir.join("g.orogen"), None).expect_err("refused");
    assert!(
        err.ends_with("node \"i\": params.path: \"/etc/hosts.png\" is absolute; a bundle holds files by their place relative to the graph, so use a path relative to the graph's folder"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A tar entry with any name and type, written byte by byte (the tar crate refuses to
/// write the hostile names these tests need).
fn raw_entry(name: &[u8], kind: tar::EntryType, content: &[u8], claimed: Option<u64>) -> Vec<u8> {
    let mut h = tar::Header::new_ustar();
    h.as_old_mut().name[..name.len()].copy_from_slice(name);
    h.set_size(claimed.unwrap_or(content.len() as u64));
    h.set_mode(0o644);
    h.set_entry_type(kind);
    if kind == tar::EntryType::Symlink {
        h.set_link_name("/etc").expect("link");
    }
    h.set_cksum();
    let mut out = h.as_bytes().to_vec();
    out.extend_from_slice(content);
    out.resize(out.len().div_ceil(512) * 512, 0);
    out
}

fn manifest_for(files: &[(&str, &[u8])], graph: &str) -> Vec<u8> {
    let m = bundle::BundleManifest {
        format: bundle::FORMAT_TAG.into(),
        version: bundle::VERSION,
        graph: graph.into(),
        files: files
            .iter()
            .map(|(p, b)| bundle::BundleFile {
                path: (*p).into(),
                size: b.len() as u64,
                blake3: blake3::hash(b).to_hex().to_string(),
            })
            .collect(),
    };
    serde_json::to_vec(&m).expect("json")
}

fn gz(tar: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut e, tar).expect("gz");
    e.finish().expect("gz")
}

#[test]
fn hostile_bundles_are_refused_and_never_write_outside_their_folder() {
    let dir = temp("hostile");
    let graph: &[u8] = br#"{"format": "orogen-graph", "version": 2, "nodes": []}"#;
    let good_manifest = manifest_for(&[("g.json", graph)], "g.json");
    let entry =
        |name: &[u8], content: &[u8]| raw_entry(name, tar::EntryType::Regular, content, None);
    let end = vec![0u8; 1024];
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "traversal",
            [
                entry(
                    b"bundle.json",
                    &manifest_for(&[("../evil.json", graph), ("g.json", graph)], "g.json"),
                ),
                entry(b"g.json", graph),
                entry(b"../evil.json", graph),
                end.clone(),
            ]
            .concat(),
            "entry \"../evil.json\": a bundle may only hold paths inside its folder",
        ),
        (
            "absolute",
            [
                entry(b"bundle.json", &good_manifest),
                entry(b"/tmp/evil.json", graph),
                end.clone(),
            ]
            .concat(),
            "entry \"/tmp/evil.json\": a bundle may only hold paths inside its folder",
        ),
        (
            "symlink",
            [
                entry(b"bundle.json", &good_manifest),
                raw_entry(b"g.json", tar::EntryType::Symlink, b"", None),
                end.clone(),
            ]
            .concat(),
            "entry \"g.json\": only regular files may be in a bundle",
        ),
        (
            "altered",
            [
                entry(b"bundle.json", &good_manifest),
                entry(
                    b"g.json",
                    &graph.iter().map(u8::to_ascii_uppercase).collect::<Vec<_>>(),
                ),
                end.clone(),
            ]
            .concat(),
            "entry \"g.json\": its content does not match the hash in bundle.json",
        ),
        (
            "unlisted",
            [
                entry(b"bundle.json", &good_manifest),
                entry(b"g.json", graph),
                entry(b"extra.bin", b"x"),
                end.clone(),
            ]
            .concat(),
            "entry \"extra.bin\" is not listed in bundle.json",
        ),
        (
            "missing",
            [entry(b"bundle.json", &good_manifest), end.clone()].concat(),
            "\"g.json\" is listed in bundle.json but missing (truncated bundle?)",
        ),
        (
            "hostile-size",
            [
                entry(b"bundle.json", &good_manifest),
                raw_entry(b"g.json", tar::EntryType::Regular, graph, Some(1 << 60)),
            ]
            .concat(),
            // The manifest's own totals are checked before any entry; an entry claiming more
            // than its listed size is refused from its header.
            "entry \"g.json\": 1152921504606846976 bytes, but bundle.json lists",
        ),
        (
            "no-manifest",
            [entry(b"g.json", graph), end.clone()].concat(),
            "not a bundle: the first entry is \"g.json\", expected \"bundle.json\"",
        ),
    ];
    for (name, tar_bytes, want) in &cases {
        let case = dir.join(name);
        let target = case.join("into");
        std::fs::create_dir_all(&case).expect("dir");
        let file = case.join("b.orogen");
        std::fs::write(&file, gz(tar_bytes)).expect("write");
        let err = bundle::unpack(&file, &target, true, None).expect_err(name);
        assert!(err.contains(want), "{name}: {err}");
        // Nothing was written: not outside, not inside (not even the target folder: an
        // unpack is all or nothing).
        let mut left: Vec<String> = walk(&case);
        left.sort();
        assert_eq!(left, ["b.orogen"], "{name}");
        assert!(walk(&target).is_empty(), "{name}: {:?}", walk(&target));
    }
    // Truncated: every prefix of a real bundle is refused with a message (or, for the
    // whole file, unpacks).
    let real = dir.join("real.orogen");
    bundle::pack(&repo().join("graphs/coast_range.json"), &real, None).expect("pack");
    let bytes = std::fs::read(&real).expect("read");
    // Every 97th prefix, and the whole bundle but its gzip trailer (CRC and length: every
    // file is complete and matches its hash, yet the file was cut).
    let cuts = (0..bytes.len())
        .step_by(97)
        .chain([bytes.len() - 8, bytes.len() - 1]);
    for cut in cuts {
        let file = dir.join("cut.orogen");
        std::fs::write(&file, &bytes[..cut]).expect("write");
        let target = dir.join("cut");
        let err = bundle::unpack(&file, &target, true, None).expect_err("truncated");
        assert!(err.starts_with(&file.display().to_string()), "{err}");
        assert!(walk(&target).is_empty(), "cut at {cut}");
    }
    // Not a bundle at all.
    let file = dir.join("plain.orogen");
    std::fs::write(&file, b"{\"format\": \"orogen-graph\"}").expect("write");
    let err = bundle::unpack(&file, &dir.join("plain"), false, None).expect_err("not gzip");
    assert!(
        err.contains("not a bundle") || err.contains("damaged"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Files and folders under `dir`, relative, `/`-separated (empty when `dir` is missing).
fn walk(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if e.path().is_dir() {
            let inner = walk(&e.path());
            if inner.is_empty() {
                out.push(name);
            } else {
                out.extend(inner.into_iter().map(|i| format!("{name}/{i}")));
            }
        } else {
            out.push(name);
        }
    }
    out
}

/// Collapsing several nodes (one bound to a graph parameter) into a subgraph file keeps the
/// terrain byte for byte, and the binding: the inner graph declares the parameter and the
/// subgraph node is bound to the outer one.
#[test]
fn collapsing_nodes_keeps_the_terrain_and_the_bindings() {
    let dir = temp("collapse");
    let file = dir.join("g.json");
    std::fs::write(
        &file,
        r#"{
  "format": "orogen-graph", "version": 2, "seed": 9,
  "world": { "size_m": 5000.0, "height_min_m": 0.0, "height_max_m": 900.0 },
  "parameters": { "detail": { "type": "int", "default": 5, "min": 1, "max": 12 } },
  "nodes": [
    { "id": "mask", "type": "radial_gradient" },
    { "id": "hills", "type": "noise", "bind": { "octaves": "detail" } },
    { "id": "steps", "type": "terrace", "inputs": { "in": "hills" } },
    { "id": "mix", "type": "lerp", "inputs": { "a": "hills", "b": "steps", "mask": "mask" } }
  ],
  "outputs": { "height": "mix.out", "raw": "hills.out" }
}
"#,
    )
    .expect("write");
    let mut g = load_with(&file, &[]);
    let want = bits(&evaluate_outputs(&g, Some(40)).expect("eval"));
    let c = orogen::document::subgraphs::collapse(
        &mut g,
        &["hills".into(), "steps".into(), "mix".into()],
        &dir,
        &dir.join("lib/shaped.json"),
    )
    .expect("collapse");
    assert_eq!(c.node, "shaped");
    assert_eq!(bits(&evaluate_outputs(&g, Some(40)).expect("eval")), want);
    let inner = load_with(&dir.join("lib/shaped.json"), &[]);
    assert!(inner.parameter("detail").is_some());
    assert_eq!(
        inner
            .nodes
            .iter()
            .filter(|n| n.def.spec.id == "graph_input_mask")
            .count(),
        1
    );
    assert_eq!(
        inner.outputs.keys().collect::<Vec<_>>(),
        ["hills_out", "mix_out"]
    );
    let node = g.node("shaped").expect("node");
    assert_eq!(
        node.bindings.get("detail").map(String::as_str),
        Some("detail")
    );
    // Saved and loaded again, it is the same terrain; the graph parameter still drives it.
    orogen::document::graph_file::save_file(&file, &g).expect("save");
    let again = load_with(&file, &[("detail".into(), serde_json::json!(2))]);
    assert_ne!(
        bits(&evaluate_outputs(&again, Some(40)).expect("eval")),
        want
    );
    let again = load_with(&file, &[]);
    assert_eq!(
        bits(&evaluate_outputs(&again, Some(40)).expect("eval")),
        want
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Parity follows fields, not nodes, through subgraphs: in graphs/coast_range.json the
/// coast's sea is computed from the valleys subgraph's eroded height — judged at the
/// erosion's 1.5% — although that subgraph also hands on a grid-defined rivers mask (shown
/// for information); a pass-through's own share is that of the node it hands on.
#[test]
fn parity_judges_what_a_subgraph_output_is_computed_from() {
    let path = repo().join("graphs/coast_range.json");
    let g = load_with(&path, &[]);
    let rows = orogen::parity::compare(&g, path.parent(), 128, 256, &[]).expect("parity");
    let find = |node: &str, out: &str| {
        rows.iter()
            .find(|r| r.node == node && r.output == out)
            .unwrap_or_else(|| panic!("no row {node}.{out}"))
    };
    for out in ["surface", "sea", "shore", "beach"] {
        let r = find("coast/sea", out);
        assert_eq!(r.tolerance.map(|t| t.mean_abs_diff), Some(0.015), "{out}");
    }
    assert_eq!(find("valleys/eroded", "rivers").tolerance, None);
    assert_eq!(find("valleys", "rivers").tolerance, None);
    assert_eq!(find("coast", "sea").own, find("coast/sea", "sea").own);
    assert!(find("coast/sea", "sea").own.is_some());
}

/// Preview–build parity holds through a subgraph (its erosion node judged as erosion, the
/// subgraph's results as what they hand on).
#[test]
fn a_subgraph_previews_what_it_builds() {
    let path = repo().join("tests/data/subgraphs/outer.json");
    let g = load_with(&path, &[]);
    let rows = orogen::parity::compare(&g, path.parent(), 256, 1024, &[]).expect("parity");
    assert!(rows
        .iter()
        .any(|r| r.node == "range/weathered" && r.change.is_some()));
    let range = rows
        .iter()
        .find(|r| r.node == "range" && r.output == "height")
        .expect("the subgraph's own row");
    assert_eq!(range.tolerance.map(|t| t.mean_abs_diff), Some(0.015));
    for r in &rows {
        assert!(r.ok(), "{} {}.{}: {r:?}", r.kind, r.node, r.output);
    }
}

const BYPASS_GRAPH: &str = r#"{
  "format": "orogen-graph", "version": 2, "name": "bypass", "seed": 3,
  "world": { "size_m": 6000.0, "height_min_m": 0.0, "height_max_m": 1500.0 },
  "resolution": 64,
  "nodes": [
    { "id": "hills", "type": "noise", "params": { "octaves": 6 } },
    { "id": "scree", "type": "thermal_erosion", "inputs": { "in": "hills" }, "bypass": true,
      "label": "Scree (off for now)" },
    { "id": "soft", "type": "blur", "inputs": { "in": "scree" } },
    { "id": "steps", "type": "terrace", "inputs": { "in": "soft" }, "bypass": true }
  ],
  "outputs": { "height": "steps", "direct": "scree" }
}"#;

/// A bypassed node hands on its input: a build with two bypassed nodes (one in the middle of a
/// chain, one writing an output) gives the very bytes of the graph wired around them, at every
/// output (a bypassed node's own output is its input); bypass and label survive save → load,
/// bypass changes the content hash and a label does not.
#[test]
fn bypass_builds_the_same_bytes_as_wiring_around_the_node() {
    let g = graph_file::load_str(BYPASS_GRAPH, "bypass.json").unwrap_or_else(|d| panic!("{d}"));
    let around = BYPASS_GRAPH
        .replace(
            r#""inputs": { "in": "scree" }"#,
            r#""inputs": { "in": "hills" }"#,
        )
        .replace(
            r#""height": "steps", "direct": "scree""#,
            r#""height": "soft", "direct": "hills""#,
        );
    let around = graph_file::load_str(&around, "around.json").unwrap_or_else(|d| panic!("{d}"));
    for res in [64, 96] {
        let a = bits(&evaluate_outputs(&g, Some(res)).expect("bypassed"));
        let b = bits(&evaluate_outputs(&around, Some(res)).expect("wired around"));
        assert_eq!(a.len(), 2);
        assert_eq!(a, b, "at {res}²");
    }
    // Not bypassed, the nodes change the terrain.
    let mut on = g.clone();
    for n in &mut on.nodes {
        n.bypass = false;
    }
    assert_ne!(
        bits(&evaluate_outputs(&on, Some(64)).expect("on")),
        bits(&evaluate_outputs(&g, Some(64)).expect("bypassed"))
    );

    let text = graph_file::to_string(&g);
    assert!(
        text.contains("\"bypass\": true") && text.contains("\"label\": \"Scree (off for now)\"")
    );
    let again = graph_file::load_str(&text, "saved").unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(graph_file::to_string(&again), text);
    let scree = again.node("scree").expect("scree");
    assert!(scree.bypass && scree.label == "Scree (off for now)");
    let hash = graph_file::content_hash(&g);
    let mut relabelled = g.clone();
    if let Some(n) = relabelled.node_mut("scree") {
        n.label = "Another name".into();
        n.position = [500.0, 20.0];
    }
    assert_eq!(
        graph_file::content_hash(&relabelled),
        hash,
        "label and position are layout"
    );
    assert_ne!(graph_file::content_hash(&on), hash, "bypass is content");

    let bad = BYPASS_GRAPH.replace(r#""bypass": true,"#, r#""bypass": "yes","#);
    let err = graph_file::load_str(&bad, "bad.json")
        .expect_err("refused")
        .to_string();
    assert!(
        err.contains("node \"scree\"")
            && err.contains("bypass: expected true or false, found \"yes\""),
        "{err}"
    );
}

/// Comment frames round-trip through the file, are layout (not content) and a bad one is
/// refused with the field named.
#[test]
fn comment_frames_round_trip_and_bad_ones_are_named() {
    let with = BYPASS_GRAPH.replace(
        r#""outputs": {"#,
        r#""frames": [ { "title": "Erosion", "rect": [-20, -50, 400, 260] } ],
  "outputs": {"#,
    );
    let g = graph_file::load_str(&with, "framed.json").unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(g.frames.len(), 1);
    assert_eq!(g.frames[0].title, "Erosion");
    assert_eq!(g.frames[0].rect, [-20.0, -50.0, 400.0, 260.0]);
    let text = graph_file::to_string(&g);
    let again = graph_file::load_str(&text, "saved").unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(again.frames, g.frames);
    let plain = graph_file::load_str(BYPASS_GRAPH, "plain.json").unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(
        graph_file::content_hash(&g),
        graph_file::content_hash(&plain)
    );
    let bad = with.replace("[-20, -50, 400, 260]", "[0, 0, -5, 10]");
    let err = graph_file::load_str(&bad, "bad.json")
        .expect_err("refused")
        .to_string();
    assert!(
        err.contains(
            "frames[0].rect: expected [x, y, width, height] with a positive width and height"
        ),
        "{err}"
    );
}
