//! The editor as a user starts it: the real binary in a virtual X server (Mesa's software
//! OpenGL), on an example graph, checked by a screenshot that must not be blank.
//! Runs `scripts/editor-smoke.sh`; CI installs Xvfb and imagemagick for it.

use std::path::Path;
use std::process::Command;

#[test]
fn the_editor_opens_an_example_graph_under_xvfb() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let have = |tool: &str| {
        Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !(have("xvfb-run") && have("import")) {
        eprintln!(
            "SKIPPED: xvfb-run or imagemagick missing (apt-get install xvfb xauth imagemagick); \
             CI installs them"
        );
        return;
    }
    let shot = root.join("target/editor-smoke-test.png");
    let out = Command::new(root.join("scripts/editor-smoke.sh"))
        .arg(env!("CARGO_BIN_EXE_orogen-editor"))
        .arg(root.join("graphs/island.json"))
        .arg(&shot)
        .output()
        .expect("run scripts/editor-smoke.sh");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "editor smoke check failed:\n{text}");
    assert!(text.contains("distinct colours"), "{text}");
}
