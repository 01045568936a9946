//! `orogen diff`: edited pairs of graphs give the expected change lists, in words a reviewer
//! reads; the same graph saved again is "the same graph"; git's diff-driver form works.

use crate::common;

use common::repo;
use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;

fn olsen() -> Value {
    serde_json::from_slice(&std::fs::read(repo().join("graphs/olsen2004.json")).expect("read"))
        .expect("json")
}

fn node<'a>(g: &'a mut Value, id: &str) -> &'a mut Value {
    g["nodes"]
        .as_array_mut()
        .expect("nodes")
        .iter_mut()
        .find(|n| n["id"] == id)
        .expect("node")
}

/// Runs `orogen diff` on the original and `edit`ed olsen2004.json; returns (exit code, lines).
fn diff_after(edit: impl FnOnce(&mut Value)) -> (i32, Vec<String>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut g = olsen();
    edit(&mut g);
    let b = dir.path().join("b.json");
    std::fs::write(&b, serde_json::to_vec_pretty(&g).expect("json")).expect("write");
    run(&[repo().join("graphs/olsen2004.json").as_path(), b.as_path()])
}

fn run(args: &[&Path]) -> (i32, Vec<String>) {
    let out = Command::new(env!("CARGO_BIN_EXE_orogen"))
        .arg("diff")
        .args(args)
        .output()
        .expect("run orogen diff");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    (
        out.status.code().unwrap_or(-1),
        text.lines().map(str::to_owned).collect(),
    )
}

#[test]
fn the_same_graph_is_the_same_graph() {
    assert_eq!(diff_after(|_| {}), (0, vec!["same graph".to_owned()]));
    // Key order and formatting are not changes.
    let (code, lines) = diff_after(|g| {
        let v = g.clone();
        *g = serde_json::from_str(&serde_json::to_string(&v).expect("compact")).expect("parse");
    });
    assert_eq!((code, lines), (0, vec!["same graph".to_owned()]));
}

#[test]
fn parameters_settings_and_layout_are_reported_with_units() {
    let (code, lines) = diff_after(|g| {
        g["seed"] = json!(g["seed"].as_u64().expect("seed") + 1);
        g["world"]["size_m"] = json!(16000.0);
        node(g, "thermal")["params"]["talus_deg"] = json!(35.0);
        node(g, "thermal")["params"]["iterations"] = json!(80);
        node(g, "perturbed")["position"] = json!([500, 20]);
    });
    assert_eq!(code, 1);
    let seed = olsen()["seed"].as_u64().expect("seed");
    let size = olsen()["world"]["size_m"].as_f64().expect("size");
    assert_eq!(
        lines,
        vec![
            format!("~ seed: {seed} → {}", seed + 1),
            format!("~ world size: {size} m → 16000 m"),
            "~ thermal.talus_deg: 30.0° → 35.0°".to_owned(),
            "~ thermal.iterations: 60 → 80".to_owned(),
            "  1 node moved on the canvas (layout only)".to_owned(),
        ]
    );
}

#[test]
fn nodes_wires_and_outputs_added_removed_and_renamed() {
    let (code, lines) = diff_after(|g| {
        // Insert a blur between the blend and the perturbation.
        g["nodes"].as_array_mut().expect("nodes").push(json!({
            "id": "soften", "type": "blur", "position": [240, 200],
            "inputs": {"in": "combined"}, "params": {"radius_m": 50.0}
        }));
        node(g, "perturbed")["inputs"]["in"] = json!("soften");
        // Rename the Voronoi node (and the wire and output that use it).
        node(g, "voronoi")["id"] = json!("peaks");
        node(g, "combined")["inputs"]["b"] = json!("peaks");
        g["outputs"]["voronoi"] = json!("peaks");
        // Drop an output, add one.
        g["outputs"]
            .as_object_mut()
            .expect("outputs")
            .remove("water");
        g["outputs"]["softened"] = json!("soften");
    });
    assert_eq!(code, 1);
    assert_eq!(
        lines,
        vec![
            "~ node \"voronoi\" renamed to \"peaks\"".to_owned(),
            "+ node \"soften\" (blur)".to_owned(),
            "~ wire into perturbed.in: combined.out → soften.out".to_owned(),
            "+ output \"softened\" = soften.out".to_owned(),
            "- output \"water\" (was hydraulic.water)".to_owned(),
        ],
        "{lines:#?}"
    );
}

#[test]
fn a_removed_node_leaves_its_consumers_unwired_and_the_diff_says_so() {
    let (code, lines) = diff_after(|g| {
        g["nodes"]
            .as_array_mut()
            .expect("nodes")
            .retain(|n| n["id"] != "thermal");
        node(g, "hydraulic")["inputs"] = json!({});
        let outs = g["outputs"].as_object_mut().expect("outputs");
        outs.remove("thermal");
        outs.remove("talus_deposits");
    });
    assert_eq!(code, 1);
    assert_eq!(
        lines,
        vec![
            "- node \"thermal\" (thermal_erosion)".to_owned(),
            "~ wire into hydraulic.in: thermal.out → (none)".to_owned(),
            "- output \"talus_deposits\" (was thermal.deposition)".to_owned(),
            "- output \"thermal\" (was thermal.out)".to_owned(),
        ],
        "{lines:#?}"
    );
}

/// git runs an external diff driver with PATH OLD-FILE OLD-HEX OLD-MODE NEW-FILE NEW-HEX
/// NEW-MODE (docs/graph-format.md gives the .gitattributes line); it must exit 0.
#[test]
fn git_diff_driver_form() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut g = olsen();
    node(&mut g, "thermal")["params"]["strength"] = json!(0.25);
    let b = dir.path().join("new.json");
    std::fs::write(&b, serde_json::to_vec(&g).expect("json")).expect("write");
    let a = repo().join("graphs/olsen2004.json");
    let p = Path::new("graphs/olsen2004.json");
    let (h, m) = (Path::new("abc123"), Path::new("100644"));
    let (code, lines) = run(&[p, a.as_path(), h, m, b.as_path(), h, m]);
    assert_eq!(code, 0);
    assert_eq!(
        lines,
        vec![
            "orogen diff a/graphs/olsen2004.json b/graphs/olsen2004.json".to_owned(),
            "~ thermal.strength: 0.5 → 0.25".to_owned(),
        ]
    );
    let (code, lines) = run(&[p, Path::new("/dev/null"), h, m, b.as_path(), h, m]);
    assert_eq!((code, lines[1].as_str()), (0, "+ new graph file"));
}

/// Graph parameters, bindings and subgraph references (format v2).
#[test]
fn parameters_bindings_and_subgraphs_are_reported() {
    let dir = tempfile::tempdir().expect("tempdir");
    let lib = dir.path().join("lib");
    std::fs::create_dir_all(&lib).expect("lib");
    for f in ["coastline", "mountain_range", "river_valley"] {
        std::fs::copy(
            repo().join(format!("graphs/lib/{f}.json")),
            lib.join(format!("{f}.json")),
        )
        .expect("copy");
    }
    std::fs::copy(
        repo().join("graphs/lib/river_valley.json"),
        lib.join("river_valley_v2.json"),
    )
    .expect("copy");
    let text = std::fs::read_to_string(repo().join("graphs/coast_range.json")).expect("read");
    let a = dir.path().join("a.json");
    std::fs::write(&a, &text).expect("a");
    let mut g: Value = serde_json::from_str(&text).expect("json");
    g["parameters"]["sea_level_m"]["default"] = json!(100.0);
    g["parameters"]["detail"] =
        json!({"type": "int", "default": 6, "min": 1, "max": 16, "doc": "Octaves."});
    node(&mut g, "range")["bind"] = json!({"detail": "detail"});
    node(&mut g, "range")["params"]
        .as_object_mut()
        .expect("params")
        .remove("detail");
    node(&mut g, "coast")["params"]["beach_width_m"] = json!(90.0);
    node(&mut g, "valleys")["graph"] = json!("lib/river_valley_v2.json");
    node(&mut g, "valleys")["hash"] =
        json!("blake3:0000000000000000000000000000000000000000000000000000000000000000");
    let b = dir.path().join("b.json");
    std::fs::write(&b, serde_json::to_vec_pretty(&g).expect("json")).expect("b");
    let (code, lines) = run(&[a.as_path(), b.as_path()]);
    assert_eq!(code, 1);
    let hash = serde_json::from_str::<Value>(&text).expect("json")["nodes"]
        .as_array()
        .and_then(|n| n.iter().find(|n| n["id"] == "valleys"))
        .and_then(|n| n["hash"].as_str())
        .expect("hash")[..19]
        .to_owned();
    assert_eq!(
        lines,
        vec![
            "+ graph parameter \"detail\" = 6 (an integer in [1, 16])".to_owned(),
            "~ graph parameter \"sea_level_m\": 420 m (a number in [-300, 2600]) → 100 m (a number in [-300, 2600])".to_owned(),
            "~ coast.beach_width_m: 150.0 m → 90.0 m".to_owned(),
            "~ range.detail bound to: (its own value) → graph parameter \"detail\"".to_owned(),
            "~ node \"valleys\": subgraph file lib/river_valley.json → lib/river_valley_v2.json".to_owned(),
            format!("~ node \"valleys\": subgraph content {hash} → blake3:000000000000"),
        ]
    );
}
