//! `orogen-editor [GRAPH.json]`: opens the editor window.

use orogen_editor::{EditorApp, Options};
use std::path::PathBuf;
use std::process::ExitCode;

const HELP: &str = "orogen-editor — Orogen's node-graph editor

usage: orogen-editor [OPTIONS] [GRAPH.json]

options:
  --config-dir DIR    where recent files and the recovery copy live
                      (default: $XDG_CONFIG_HOME/orogen or ~/.config/orogen)
  --frame-log FILE    write one line per frame: seconds since start, ms since the previous
                      frame, ms the previous frame spent building its UI, nodes evaluating
  --layout-report FILE
                      write the canvas and every node's rectangle on screen (JSON) whenever
                      they change once the graph is framed
  --cache DIR         the disk cache of node results shared with `orogen build`
                      (default: $OROGEN_CACHE, else ~/.cache/orogen)
  --no-cache          neither read nor write the disk cache
  --preview-res N     quick preview resolution (default 256)
  --refine-res N      resolution previews refine to (default 512)
  -h, --help          this text";

fn main() -> ExitCode {
    let mut options = Options {
        cache_dir: orogen::eval::DiskCache::default_dir(),
        ..Options::default()
    };
    let mut args = std::env::args_os().skip(1);
    while let Some(a) = args.next() {
        match a.to_str() {
            Some("-h" | "--help") => {
                println!("{HELP}");
                return ExitCode::SUCCESS;
            }
            Some("--config-dir") => match args.next() {
                Some(d) => options.config_dir = PathBuf::from(d),
                None => return usage("--config-dir needs a folder"),
            },
            Some("--frame-log") => match args.next() {
                Some(f) => options.frame_log = Some(PathBuf::from(f)),
                None => return usage("--frame-log needs a file"),
            },
            Some("--cache") => match args.next() {
                Some(d) => options.cache_dir = Some(PathBuf::from(d)),
                None => return usage("--cache needs a folder"),
            },
            Some("--no-cache") => options.cache_dir = None,
            Some("--layout-report") => match args.next() {
                Some(f) => options.layout_report = Some(PathBuf::from(f)),
                None => return usage("--layout-report needs a file"),
            },
            Some(flag @ ("--preview-res" | "--refine-res")) => {
                let Some(n) = args
                    .next()
                    .and_then(|v| v.to_str().and_then(|v| v.parse::<usize>().ok()))
                    .filter(|n| (16..=8192).contains(n))
                else {
                    return usage(&format!("{flag} needs a size from 16 to 8192"));
                };
                if flag == "--preview-res" {
                    options.preview_resolution = n;
                } else {
                    options.refine_resolution = n;
                }
            }
            Some(s) if s.starts_with('-') => return usage(&format!("unknown option {s}")),
            _ => options.open = Some(PathBuf::from(a)),
        }
    }
    let native = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_inner_size([1280.0, 800.0])
            .with_title("Orogen"),
        depth_buffer: 24,
        ..Default::default()
    };
    match eframe::run_native(
        "Orogen",
        native,
        Box::new(move |cc| Ok(Box::new(EditorApp::new(cc, options)))),
    ) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("orogen-editor: cannot open the window: {e}");
            ExitCode::FAILURE
        }
    }
}

fn usage(msg: &str) -> ExitCode {
    eprintln!("orogen-editor: {msg}\n\n{HELP}");
    ExitCode::from(2)
}
