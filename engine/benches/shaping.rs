//! Shaping benches: pointwise nodes against this machine's memory bandwidth (measured in
//! the same run with a plain parallel copy), blur cost against its radius, and a slope mask
//! at its default scale (the sampled Gaussian) against the box blur of the same σ.
//!
//! Run: `cargo bench -p orogen --features bench --bench shaping`
//!
//! Both at 4096² on the default pool (2 threads here). A pointwise node reads one field and
//! writes one: 2 × 64 MiB of traffic, like the copy. Throughput = 128 MiB / time.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use orogen::field::Field;
use orogen::node::ParamValue;
use orogen::World;
use rayon::prelude::*;
use std::hint::black_box;
use std::sync::Arc;

const N: usize = 4096;

mod common;

const WORLD: World = World {
    size_m: 4096.0,
    height_min_m: 0.0,
    height_max_m: 1000.0,
};

fn node_runner(ty: &str, params: &[(&str, ParamValue)]) -> impl Fn(&Arc<Field>) -> usize {
    common::node_runner(ty, params, N, WORLD)
}

fn input_field() -> Arc<Field> {
    common::noise_field(N, WORLD, &[])
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

/// `slope_mask` at its default scale (a 48th of the world: σ ≈ 43 px at 4096², smoothed by the
/// sampled Gaussian, O(σ) per sample) against the three-box `blur` of the same σ (O(1)) and
/// the mask over the grid's own cells (`scale_m` 0), in the same run.
fn slope_mask_scale(c: &mut Criterion) {
    let input = input_field();
    let mut group = c.benchmark_group("slope_mask_4096");
    group.sample_size(10);
    let auto = node_runner("slope_mask", &[]);
    group.bench_function("auto_sampled_gaussian", |b| {
        b.iter(|| black_box(auto(&input)));
    });
    let radius = WORLD.size_m / 48.0;
    let boxes = node_runner("blur", &[("radius_m", ParamValue::Float(radius))]);
    group.bench_function("blur_boxes_same_sigma", |b| {
        b.iter(|| black_box(boxes(&input)));
    });
    let cells = node_runner("slope_mask", &[("scale_m", ParamValue::Float(0.0))]);
    group.bench_function("grid_cells", |b| b.iter(|| black_box(cells(&input))));
    group.finish();
}

criterion_group!(benches, pointwise, blur_radius, slope_mask_scale);
criterion_main!(benches);
