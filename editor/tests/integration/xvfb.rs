//! The editor as a user starts it: the real binary in a virtual X server (Mesa's software
//! OpenGL), on example graphs, checked by a screenshot that must not be blank and, for
//! `graphs/olsen2004.json`, by the editor's own layout state: at the default window size
//! every node lies inside the canvas. Runs `scripts/editor-smoke.sh`; CI installs Xvfb and
//! imagemagick for it (and under `CI` a missing tool fails the test instead of skipping it).

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Runs the smoke script on `graph`; returns its output.
fn smoke(graph: &str, shot: &str, layout: Option<&Path>) -> String {
    let root = root();
    let mut cmd = Command::new(root.join("scripts/editor-smoke.sh"));
    cmd.arg(env!("CARGO_BIN_EXE_orogen-editor"))
        .arg(root.join(graph))
        .arg(root.join("target").join(shot));
    if let Some(l) = layout {
        cmd.arg(l);
    }
    let out = cmd.output().expect("run scripts/editor-smoke.sh");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "editor smoke check failed:\n{text}");
    assert!(text.contains("distinct colours"), "{text}");
    text
}

fn tools_present() -> bool {
    let have = |tool: &str| {
        Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if have("xvfb-run") && have("import") {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "xvfb-run or imagemagick missing on CI: .ci/run must install xvfb, xauth and imagemagick"
    );
    eprintln!(
        "SKIPPED: xvfb-run or imagemagick missing (apt-get install xvfb xauth imagemagick); \
         CI installs them"
    );
    false
}

#[test]
fn the_editor_opens_an_example_graph_under_xvfb() {
    if tools_present() {
        smoke("graphs/island.json", "editor-smoke-test.png", None);
    }
}

/// Every example graph opens whole and readable at the default window size (1280×800), read
/// from the editor's own layout state: every node inside the canvas, names at least 11 px
/// tall (the nodes' own titles, or the overview's drawn over them when zoomed out, one per
/// node), and no two nodes, nor two overview titles, overlapping.
#[test]
fn every_example_graph_opens_readable_without_overlaps() {
    if !tools_present() {
        return;
    }
    let mut graphs: Vec<String> = std::fs::read_dir(root().join("graphs"))
        .expect("graphs/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .filter_map(|p| Some(p.file_name()?.to_string_lossy().into_owned()))
        .collect();
    graphs.sort();
    for name in graphs {
        let stem = name.trim_end_matches(".json");
        let layout = root().join(format!("target/editor-smoke-{stem}-layout.json"));
        smoke(
            &format!("graphs/{name}"),
            &format!("editor-smoke-{stem}.png"),
            Some(&layout),
        );
        let text = std::fs::read_to_string(&layout).expect("the editor wrote its layout");
        let v: serde_json::Value = serde_json::from_str(&text).expect("layout json");
        assert_eq!(v["framed"], true, "{name}: {text}");
        let rect = |r: &serde_json::Value| -> [f64; 4] {
            let a = r.as_array().expect("rect");
            [0, 1, 2, 3].map(|i| a[i].as_f64().expect("number"))
        };
        let canvas = rect(&v["canvas"]);
        let nodes = v["nodes"].as_object().expect("nodes");
        let graph = orogen::document::graph_file::load_file(&root().join("graphs").join(&name))
            .expect("example graph");
        assert_eq!(nodes.len(), graph.nodes.len(), "{name}: {text}");
        let text_px = v["text_px"].as_f64().expect("text_px");
        assert!(text_px >= 11.0, "{name}: text {text_px:.1} px tall");
        let rects: Vec<(&String, [f64; 4])> = nodes.iter().map(|(id, r)| (id, rect(r))).collect();
        let overlap =
            |a: &[f64; 4], b: &[f64; 4]| a[0] < b[2] && b[0] < a[2] && a[1] < b[3] && b[1] < a[3];
        for (i, (a, ra)) in rects.iter().enumerate() {
            for (b, rb) in &rects[i + 1..] {
                assert!(
                    !overlap(ra, rb),
                    "{name}: nodes {a} {ra:?} and {b} {rb:?} overlap"
                );
            }
        }
        let titles: Vec<(&String, [f64; 4])> = v["titles"]
            .as_object()
            .expect("titles")
            .iter()
            .map(|(id, r)| (id, rect(r)))
            .collect();
        assert!(
            titles.is_empty() || titles.len() == nodes.len(),
            "{name}: an overview title per node: {text}"
        );
        for (i, (a, ra)) in titles.iter().enumerate() {
            for (b, rb) in &titles[i + 1..] {
                assert!(
                    !overlap(ra, rb),
                    "{name}: titles of {a} {ra:?} and {b} {rb:?} overlap"
                );
            }
        }
        let inside = |r: &[f64; 4]| {
            r[0] >= canvas[0] && r[1] >= canvas[1] && r[2] <= canvas[2] && r[3] <= canvas[3]
        };
        for (id, r) in &rects {
            assert!(
                inside(r),
                "{name}: node {id} {r:?} outside the canvas {canvas:?}"
            );
        }
    }
}
