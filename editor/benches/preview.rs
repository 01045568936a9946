//! Editor responsiveness: from a parameter change on the last node of an example graph to the
//! updated 512² preview picture, with everything upstream cached — the path the editor takes:
//! the graph goes to the evaluation worker, which runs the quick 256² pass and then the 512²
//! pass, and the UI turns the 512² field into the colormapped, hillshaded picture.
//!
//! `cargo bench -p orogen-editor --features bench --bench preview`

use criterion::{criterion_group, criterion_main, Criterion};
use orogen::node::ParamValue;
use orogen_editor::preview::{picture, Look, Shown};
use orogen_editor::worker::Worker;
use std::path::Path;
use std::time::{Duration, Instant};

fn latency(c: &mut Criterion) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../graphs/island.json");
    let mut graph = orogen::document::graph_file::load_file(&path).expect("example graph");
    let last = "eased";
    let mut worker = Worker::spawn(None, None);
    let wait_for = |worker: &Worker, generation: u64| loop {
        let s = worker
            .wait(Duration::from_secs(60))
            .expect("worker answers");
        if s.generation == generation && s.resolution == 512 {
            return s;
        }
    };
    let g = worker.submit(&graph, None, &[256, 512]);
    wait_for(&worker, g);
    let mut k = 0u32;
    let mut group = c.benchmark_group("editor_preview");
    group.sample_size(30);
    group.bench_function("param_change_to_512_picture", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                // A value never used before, so the last node really recomputes.
                k += 1;
                let gamma = 1.4 + f64::from(k) * 1e-6;
                graph
                    .set_param(last, "gamma", ParamValue::Float(gamma))
                    .expect("param");
                let t = Instant::now();
                let g = worker.submit(&graph, None, &[256, 512]);
                let s = wait_for(&worker, g);
                let node = s.graph.node(last).expect("node");
                let shown = Shown {
                    field: s.result.fields[last][0].clone(),
                    kind: node.def.spec.outputs[0].kind,
                    base: None,
                    world: s.graph.world,
                    origin_m: [0.0, 0.0],
                    sea_m: None,
                };
                let img = picture(&shown, Look::default());
                total += t.elapsed();
                assert_eq!(img.size, [512, 512]);
            }
            total
        });
    });
    group.finish();
}

criterion_group!(benches, latency);
criterion_main!(benches);
