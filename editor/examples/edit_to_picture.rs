//! Edit-to-picture time on the flagship, as the editor sees it: a parameter of `rain`
//! (droplets), of `orogeny` (stream power) and of a colour node (`ground`) changes, the graph
//! goes to the evaluation worker, and the time is taken until the 256² and then the 512²
//! picture of the edited node are ready (the colormapped, hillshaded picture the preview
//! draws, made from the worker's field), and until the whole graph's 512² pass is done (every
//! thumbnail). Each cell: 256² / 512² / whole graph at 512², the best of RUNS edits.
//!
//! Three starts: *while editing* (the editor evaluated the graph before the edit: memory cache
//! warm), *disk cache warm* (a fresh editor whose disk cache holds an earlier run's
//! results of the unedited graph) and *cold* (a fresh editor, no cache). Prints a markdown
//! table for docs/editor.md.
//!
//! `cargo run --release -p orogen-editor --example edit_to_picture [RUNS]`

use orogen::eval::DiskCache;
use orogen::node::ParamValue;
use orogen::Graph;
use orogen_editor::preview::{picture, Look, Shown};
use orogen_editor::worker::Worker;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The edits: node, parameter, and its value before the edit.
const EDITS: [(&str, &str, &str); 3] = [
    ("rain", "kr", "droplets: `rain` erosion rate kr"),
    ("orogeny", "k", "stream power: `orogeny` erodibility k"),
    ("ground", "shift", "colour: `ground` palette shift"),
];

/// Times until the edited node's 256² and 512² pictures are ready after `graph` is submitted
/// (the editor previews the edited node, so it goes first), and until the whole graph's 512²
/// pass is done (every thumbnail); with the nodes that pass ran and their times, slowest first.
fn time_to_pictures(
    worker: &mut Worker,
    graph: &Graph,
    node: &str,
) -> ([Duration; 3], Vec<(String, Duration)>) {
    let t = Instant::now();
    let generation = worker.submit_focused(graph, None, &[256, 512], Some(node));
    let mut times = [Duration::ZERO; 3];
    let mut ran: Vec<(String, Duration)> = Vec::new();
    loop {
        let s = worker
            .wait(Duration::from_secs(600))
            .expect("the worker answers within 10 minutes");
        if s.generation != generation {
            continue;
        }
        if s.resolution == 512 {
            ran.extend(s.result.timings.iter().map(|(n, d)| (n.clone(), *d)));
        }
        if !s.partial {
            if s.resolution == 512 {
                times[2] = t.elapsed();
                ran.sort_by_key(|r| std::cmp::Reverse(r.1));
                return (times, ran);
            }
            continue;
        }
        let field = s.result.fields[node][0].clone();
        let kind = s.graph.node(node).expect("edited node").def.spec.outputs[0].kind;
        let shown = Shown {
            field,
            kind,
            base: None,
            world: s.graph.world,
            origin_m: [0.0, 0.0],
            sea_m: s.sea_m,
        };
        let img = picture(&shown, Look::default());
        assert_eq!(img.size, [s.resolution; 2]);
        times[usize::from(s.resolution == 512)] = t.elapsed();
    }
}

/// Evaluates `graph` until its 512² pass is done (the editing before the edit).
fn settle(worker: &mut Worker, graph: &Graph) {
    let generation = worker.submit(graph, None, &[256, 512]);
    while let Some(s) = worker.wait(Duration::from_secs(600)) {
        if s.generation == generation && s.resolution == 512 {
            return;
        }
    }
    panic!("the worker did not finish the graph");
}

fn edited(graph: &Graph, node: &str, param: &str, run: u32) -> Graph {
    let mut g = graph.clone();
    let value = match g.node(node).expect("node").param(param) {
        Some(ParamValue::Float(v)) => *v,
        other => panic!("{node}.{param} is not a float: {other:?}"),
    };
    let step = 0.01 * f64::from(run + 1);
    let next = if value == 0.0 {
        step
    } else {
        value * (1.0 + step)
    };
    g.set_param(node, param, ParamValue::Float(next))
        .expect("the edited value is in range");
    g
}

fn ms(d: Duration) -> String {
    format!("{:.2} s", d.as_secs_f64())
}

fn main() {
    let runs: u32 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(3);
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../graphs/alpine_valley.json");
    let graph = orogen::document::graph_file::load_file(&path).expect("the flagship loads");
    let scratch = tempfile::tempdir().expect("a temporary folder");
    println!("| edit | while editing | disk cache warm | cold |");
    println!("|---|---|---|---|");
    let mut breakdown = Vec::new();
    for (node, param, label) in EDITS {
        let mut cells = Vec::new();
        // While editing: the unedited graph evaluated first, then each edit.
        let mut worker = Worker::spawn(None, None);
        settle(&mut worker, &graph);
        let mut best = [Duration::MAX; 3];
        let mut ran = Vec::new();
        for run in 0..runs {
            let (t, r) = time_to_pictures(&mut worker, &edited(&graph, node, param, run), node);
            best = [best[0].min(t[0]), best[1].min(t[1]), best[2].min(t[2])];
            ran = r;
        }
        cells.push(best);
        let slowest: Vec<String> = ran
            .iter()
            .take(6)
            .map(|(n, d)| format!("{n} {:.0} ms", d.as_secs_f64() * 1e3))
            .collect();
        breakdown.push(format!(
            "- {label}, while editing, 512² passes ({} nodes ran): {}",
            ran.len(),
            slowest.join(", ")
        ));
        // Disk cache warm: an earlier run evaluated the unedited graph into the cache;
        // a fresh editor (empty memory cache) opens it and makes the edit.
        let mut best = [Duration::MAX; 3];
        for run in 0..runs {
            let dir = scratch.path().join(format!("{node}-{run}"));
            let disk = Arc::new(DiskCache::open(&dir, 4 << 30).expect("disk cache"));
            let mut earlier = Worker::spawn(None, Some(disk.clone()));
            settle(&mut earlier, &graph);
            drop(earlier);
            let mut fresh = Worker::spawn(None, Some(disk));
            let (t, _) = time_to_pictures(&mut fresh, &edited(&graph, node, param, run), node);
            best = [best[0].min(t[0]), best[1].min(t[1]), best[2].min(t[2])];
        }
        cells.push(best);
        // Cold: a fresh editor without a cache.
        let mut best = [Duration::MAX; 3];
        for run in 0..runs {
            let mut fresh = Worker::spawn(None, None);
            let (t, _) = time_to_pictures(&mut fresh, &edited(&graph, node, param, run), node);
            best = [best[0].min(t[0]), best[1].min(t[1]), best[2].min(t[2])];
        }
        cells.push(best);
        let row: Vec<String> = cells
            .iter()
            .map(|[a, b, c]| format!("{} / {} / {}", ms(*a), ms(*b), ms(*c)))
            .collect();
        println!("| {label} | {} |", row.join(" | "));
    }
    println!();
    for line in breakdown {
        println!("{line}");
    }
}
