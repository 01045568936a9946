//! Lays out every example and library graph with Edit › Arrange, at the sizes the editor
//! draws their nodes (headless, through egui_kittest), and saves them in the writer's
//! canonical form: `cargo run -p orogen-editor --example arrange_examples`. Run it after
//! adding an example graph or changing how nodes are drawn; `tests/integration/xvfb.rs` checks that
//! every example opens without overlapping nodes.

use egui_kittest::Harness;
use orogen_editor::{EditorApp, Options};
use std::path::{Path, PathBuf};
use std::time::Duration;

fn json_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "json"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

fn main() {
    let graphs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../graphs");
    let config = std::env::temp_dir().join(format!("orogen-arrange-{}", std::process::id()));
    for path in json_files(&graphs)
        .into_iter()
        .chain(json_files(&graphs.join("lib")))
    {
        let ctx = egui::Context::default();
        let app = EditorApp::with_context(
            &ctx,
            None,
            Options {
                config_dir: config.clone(),
                open: Some(path.clone()),
                preview_resolution: 64,
                refine_resolution: 64,
                ..Options::default()
            },
        );
        let mut h = Harness::builder()
            .with_size(egui::Vec2::new(1280.0, 800.0))
            .with_max_steps(64)
            .build_ui_state(|ui, app: &mut EditorApp| app.ui(ui), app);
        h.run_steps(3);
        // Thumbnails and messages arrive with the first evaluation; sizes are final then.
        if !h.state_mut().wait_for_preview(Duration::from_secs(120)) {
            eprintln!("{}: no preview within 120 s; skipped", path.display());
            continue;
        }
        h.run_steps(4);
        h.state_mut().arrange();
        h.run_steps(4);
        if h.state_mut().save() {
            println!("arranged {}", path.display());
        } else {
            eprintln!("{}: {}", path.display(), h.state().status);
        }
    }
    let _ = std::fs::remove_dir_all(&config);
}
