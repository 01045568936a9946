//! Shaping benches: pointwise nodes against this machine's memory bandwidth (measured in
//! the same run with a plain parallel copy), and blur cost against its radius.
//!
//! Run: `cargo bench -p orogen --bench shaping`
//!
//! Both at 4096² on the default pool (2 threads here). A pointwise node reads one field and
//! writes one: 2 × 64 MiB of traffic, like the copy. Throughput = 128 MiB / time.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use orogen::eval::{EvalOptions, Evaluator};
use orogen::field::Field;
use orogen::graph::{Graph, NodeInstance, PortRef};
use orogen::node::{ParamValue, Registry};
use orogen::World;
use rayon::prelude::*;
use std::hint::black_box;
use std::sync::Arc;

const N: usize = 4096;

/// Runs node `ty` on a precomputed input field, through the engine's node API only (the
/// input is not recomputed per iteration).
fn node_runner(ty: &str, params: &[(&str, ParamValue)]) -> impl Fn(&Arc<Field>) -> usize {
    let reg = Registry::builtin();
    let def = reg.get(ty).expect("node type");
    let world = World {
        size_m: 4096.0,
        height_min_m: 0.0,
        height_max_m: 1000.0,
    };
    let mut g = Graph::new("b", world, N, 1);
    g.nodes.push(NodeInstance::new("n", def));
    for (k, v) in params {
        g.set_param("n", k, v.clone()).expect("param");
    }
    let values = g.nodes[0].params.clone();
    move |input: &Arc<Field>| {
        let cancel = orogen::eval::CancelToken::new();
        let ctx = orogen::node::EvalCtx {
            resolution: N,
            world,
            graph_seed: 1,
            node_id: "n",
            base_dir: None,
            cancel: &cancel,
            progress: &|_| {},
        };
        let mut inputs: Vec<Option<Arc<Field>>> = vec![None; def.spec.inputs.len()];
        for (i, port) in def.spec.inputs.iter().enumerate() {
            if port.required {
                inputs[i] = Some(Arc::clone(input));
            }
        }
        def.eval(&ctx, &inputs, &values).expect("eval").len()
    }
}

fn input_field() -> Arc<Field> {
    let world = World {
        size_m: 4096.0,
        height_min_m: 0.0,
        height_max_m: 1000.0,
    };
    let mut g = Graph::new("src", world, N, 1);
    g.nodes.push(NodeInstance::new(
        "n",
        Registry::builtin().get("noise").expect("noise"),
    ));
    g.outputs.insert("h".into(), PortRef::new("n", "out"));
    let r = Evaluator::new()
        .evaluate(&g, &EvalOptions::default())
        .expect("eval");
    r.field(&g, &g.outputs["h"]).expect("field")
}

fn pointwise(c: &mut Criterion) {
    let input = input_field();
    let mut group = c.benchmark_group("pointwise_4096");
    group.sample_size(20);
    group.throughput(Throughput::Bytes((2 * N * N * 4) as u64));
    group.bench_function("plain_parallel_copy", |b| {
        b.iter(|| {
            let mut out = vec![0.0f32; N * N];
            out.par_chunks_mut(N)
                .zip(input.data().par_chunks(N))
                .for_each(|(o, i)| o.copy_from_slice(i));
            black_box(out)
        });
    });
    for (name, ty, params) in [
        ("invert", "invert", vec![]),
        (
            "clamp",
            "clamp",
            vec![
                ("low", ParamValue::Float(0.2)),
                ("high", ParamValue::Float(0.8)),
            ],
        ),
        ("levels", "levels", vec![("in_low", ParamValue::Float(0.1))]),
        ("terrace", "terrace", vec![]),
        ("curve", "curve", vec![("y2", ParamValue::Float(0.3))]),
        ("height_mask", "height_mask", vec![]),
    ] {
        let run = node_runner(ty, &params);
        group.bench_function(name, |b| b.iter(|| black_box(run(&input))));
    }
    group.finish();
}

fn blur_radius(c: &mut Criterion) {
    let input = input_field();
    let mut group = c.benchmark_group("blur_4096_radius");
    group.sample_size(10);
    for radius in [2.0, 20.0, 200.0] {
        let run = node_runner("blur", &[("radius_m", ParamValue::Float(radius))]);
        group.bench_function(format!("{radius}m"), |b| b.iter(|| black_box(run(&input))));
    }
    group.finish();
}

criterion_group!(benches, pointwise, blur_radius);
criterion_main!(benches);
