//! Engine benches: scheduling overhead per node, cached re-evaluation, one Perlin node,
//! and the example graphs cold and cached.
//!
//! Run: `cargo bench -p orogen --features bench --bench engine`

use criterion::{criterion_group, criterion_main, Criterion};
use orogen::document::graph_file;
use orogen::eval::{EvalOptions, Evaluator, Targets};
use orogen::graph::{Graph, NodeInstance, PortRef};
use orogen::node::Registry;
use orogen::World;
use std::hint::black_box;
use std::path::Path;

fn chain(len: usize, resolution: usize) -> Graph {
    let reg = Registry::builtin();
    let world = World {
        size_m: 4096.0,
        height_min_m: 0.0,
        height_max_m: 1000.0,
    };
    let mut g = Graph::new("chain", world, resolution, 1);
    g.nodes.push(NodeInstance::new(
        "n0",
        reg.get("constant").expect("constant"),
    ));
    for i in 1..len {
        let mut n = NodeInstance::new(format!("n{i}"), reg.get("invert").expect("invert"));
        n.inputs[0] = Some(PortRef::new(format!("n{}", i - 1), "out"));
        g.nodes.push(n);
    }
    g.outputs
        .insert("h".into(), PortRef::new(format!("n{}", len - 1), "out"));
    g
}

fn perlin(resolution: usize) -> Graph {
    let reg = Registry::builtin();
    let world = World {
        size_m: 4096.0,
        height_min_m: 0.0,
        height_max_m: 1000.0,
    };
    let mut g = Graph::new("perlin", world, resolution, 1);
    g.nodes.push(NodeInstance::new(
        "p",
        reg.get("perlin_fbm").expect("perlin_fbm"),
    ));
    g.outputs.insert("h".into(), PortRef::new("p", "out"));
    g
}

fn scheduling(c: &mut Criterion) {
    let mut group = c.benchmark_group("scheduling");
    // 50 trivial nodes on a 2×2 field: almost all of the time is the engine's own work
    // (validation, planning, keys, scheduling, freeing). Divide by 50 for the per-node cost.
    let g = chain(50, 2);
    group.bench_function("chain50_2x2_uncached", |b| {
        b.iter(|| {
            black_box(
                Evaluator::new()
                    .evaluate(&g, &EvalOptions::default())
                    .expect("eval"),
            )
        });
    });
    // The same graph, unchanged, against a warm cache: every node is a hit.
    let mut ev = Evaluator::with_cache(1 << 30);
    let opts = EvalOptions {
        targets: Targets::All,
        ..EvalOptions::default()
    };
    let g1024 = chain(50, 1024);
    ev.evaluate(&g1024, &opts).expect("warm");
    group.bench_function("chain50_1024_cached_reeval", |b| {
        b.iter(|| black_box(ev.evaluate(&g1024, &opts).expect("eval")));
    });
    group.finish();

    let mut group = c.benchmark_group("perlin_node");
    group.sample_size(20);
    let p = perlin(1024);
    group.bench_function("perlin_fbm_6oct_1024", |b| {
        b.iter(|| {
            black_box(
                Evaluator::new()
                    .evaluate(&p, &EvalOptions::default())
                    .expect("eval"),
            )
        });
    });
    group.finish();
}

fn examples(c: &mut Criterion) {
    let mut group = c.benchmark_group("examples");
    group.sample_size(10);
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../graphs");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .expect("graphs")
        .map(|e| e.expect("e").path())
        .collect();
    paths.sort();
    for path in paths
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
    {
        let g = graph_file::load_file(path).expect("graph");
        let name = path
            .file_stem()
            .expect("stem")
            .to_string_lossy()
            .into_owned();
        group.bench_function(format!("{name}_512_cold"), |b| {
            b.iter(|| {
                black_box(
                    Evaluator::new()
                        .evaluate(
                            &g,
                            &EvalOptions {
                                resolution: Some(512),
                                ..EvalOptions::default()
                            },
                        )
                        .expect("eval"),
                )
            });
        });
        let mut ev = Evaluator::with_cache(1 << 30);
        let opts = EvalOptions {
            resolution: Some(512),
            targets: Targets::All,
            ..EvalOptions::default()
        };
        ev.evaluate(&g, &opts).expect("warm");
        group.bench_function(format!("{name}_512_cached"), |b| {
            b.iter(|| black_box(ev.evaluate(&g, &opts).expect("eval")));
        });
    }
    group.finish();
}

criterion_group!(benches, scheduling, examples);
criterion_main!(benches);
