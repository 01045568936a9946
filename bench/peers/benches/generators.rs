//! Generators against the Rust noise crates, side by side in one run.
//!
//! Run: `cargo bench --manifest-path bench/peers/Cargo.toml --bench generators`
//!
//! Single thread, 1024² samples, 8 octaves of fBm unless named otherwise; divide the time
//! by 1024² × 8 for nanoseconds per sample per octave. Our nodes are timed through the
//! engine (a one-node graph), so their figures include everything a build pays.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use orogen::eval::{EvalOptions, Evaluator};
use orogen::graph::{Graph, NodeInstance, PortRef};
use orogen::node::{ParamValue, Registry};
use orogen::World;
use std::hint::black_box;

const N: usize = 1024;
const OCTAVES: u32 = 8;
/// Lattice cells across the map at octave 0 (the same for every library).
const CELLS: f64 = 8.0;

fn node_graph(ty: &str, resolution: usize, params: &[(&str, ParamValue)]) -> Graph {
    let world = World {
        size_m: 4096.0,
        height_min_m: 0.0,
        height_max_m: 1000.0,
    };
    let mut g = Graph::new("bench", world, resolution, 1);
    g.nodes.push(NodeInstance::new(
        "n",
        Registry::builtin().get(ty).expect("node type"),
    ));
    for (k, v) in params {
        g.set_param("n", k, v.clone()).expect("param");
    }
    if g.node("n").expect("n").param("feature_size_m").is_some() {
        g.set_param("n", "feature_size_m", ParamValue::Float(4096.0 / CELLS))
            .expect("feature size");
    }
    g.outputs.insert("h".into(), PortRef::new("n", "out"));
    g
}

fn run(g: &Graph) -> usize {
    let r = Evaluator::new()
        .evaluate(g, &EvalOptions::default())
        .expect("eval");
    r.fields.len()
}

fn single<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("pool")
        .install(f)
}

/// Samples `f(x, y)` on the N × N grid, row by row, as a peer library would be used.
fn sample_grid(f: impl Fn(usize, usize) -> f32) -> Vec<f32> {
    let mut out = vec![0.0f32; N * N];
    for y in 0..N {
        for x in 0..N {
            out[y * N + x] = f(x, y);
        }
    }
    out
}

fn fbm(c: &mut Criterion) {
    let mut group = c.benchmark_group("fbm_1024_8oct_1thread");
    group.sample_size(10);
    let step = CELLS / N as f64;

    let perlin = node_graph(
        "noise",
        N,
        &[
            ("octaves", ParamValue::Int(8)),
            ("basis", ParamValue::Choice(0)),
        ],
    );
    group.bench_function("orogen_perlin", |b| {
        b.iter(|| single(|| black_box(run(&perlin))));
    });
    let zero = node_graph(
        "noise",
        N,
        &[
            ("octaves", ParamValue::Int(8)),
            ("basis", ParamValue::Choice(3)),
        ],
    );
    group.bench_function("orogen_d2m1n3_zero", |b| {
        b.iter(|| single(|| black_box(run(&zero))));
    });
    let generic = node_graph(
        "noise",
        N,
        &[
            ("octaves", ParamValue::Int(8)),
            ("basis", ParamValue::Choice(2)),
        ],
    );
    group.bench_function("orogen_d2m1n3", |b| {
        b.iter(|| single(|| black_box(run(&generic))));
    });
    let value = node_graph(
        "noise",
        N,
        &[
            ("octaves", ParamValue::Int(8)),
            ("basis", ParamValue::Choice(1)),
        ],
    );
    group.bench_function("orogen_value", |b| {
        b.iter(|| single(|| black_box(run(&value))));
    });
    let simplex = node_graph(
        "noise",
        N,
        &[
            ("octaves", ParamValue::Int(8)),
            ("basis", ParamValue::Choice(4)),
        ],
    );
    group.bench_function("orogen_simplex", |b| {
        b.iter(|| single(|| black_box(run(&simplex))));
    });

    group.bench_function("noise_0.9_fbm_perlin", |b| {
        use noise::{Fbm, MultiFractal, NoiseFn, Perlin};
        let f = Fbm::<Perlin>::new(1).set_octaves(OCTAVES as usize);
        b.iter(|| {
            black_box(sample_grid(|x, y| {
                f.get([x as f64 * step, y as f64 * step]) as f32
            }))
        });
    });
    let fnl = |ty: fastnoise_lite::NoiseType| {
        use fastnoise_lite::{FastNoiseLite, FractalType};
        let mut n = FastNoiseLite::with_seed(1);
        n.set_noise_type(Some(ty));
        n.set_fractal_type(Some(FractalType::FBm));
        n.set_fractal_octaves(Some(OCTAVES as i32));
        n.set_frequency(Some(step as f32));
        n
    };
    for (name, ty) in [
        (
            "fastnoise_lite_1.1_fbm_perlin",
            fastnoise_lite::NoiseType::Perlin,
        ),
        (
            "fastnoise_lite_1.1_fbm_opensimplex2",
            fastnoise_lite::NoiseType::OpenSimplex2,
        ),
    ] {
        let n = fnl(ty);
        group.bench_function(name, |b| {
            b.iter(|| black_box(sample_grid(|x, y| n.get_noise_2d(x as f32, y as f32))));
        });
    }
    group.bench_function("libnoise_1.2_fbm_perlin", |b| {
        use libnoise::prelude::*;
        let g = Source::<2>::perlin(1).fbm(OCTAVES, 1.0, 2.0, 0.5);
        b.iter(|| {
            black_box(sample_grid(|x, y| {
                g.sample([x as f64 * step, y as f64 * step]) as f32
            }))
        });
    });
    group.bench_function("simdnoise_3.1_fbm_simplex", |b| {
        b.iter(|| {
            let r = simdnoise::NoiseBuilder::fbm_2d(N, N)
                .with_freq(step as f32)
                .with_octaves(OCTAVES as u8)
                .with_seed(1)
                .generate();
            black_box(r)
        });
    });
    group.finish();
}

/// Worley d2 − d1 (Olsen 2004's c1 = −1, c2 = 1), Euclidean, jitter 1, 8 × 8 feature cells over
/// the map, against FastNoise Lite's cellular noise with the same settings (Distance2Sub).
fn worley(c: &mut Criterion) {
    let mut group = c.benchmark_group("worley_1024_1thread");
    group.sample_size(10);
    let g = node_graph("worley", N, &[("n_peaks", ParamValue::Float(64.0))]);
    group.bench_function("orogen_worley", |b| {
        b.iter(|| single(|| black_box(run(&g))));
    });
    group.bench_function("fastnoise_lite_1.1_cellular_distance2sub", |b| {
        use fastnoise_lite::{
            CellularDistanceFunction, CellularReturnType, FastNoiseLite, NoiseType,
        };
        let mut n = FastNoiseLite::with_seed(1);
        n.set_noise_type(Some(NoiseType::Cellular));
        n.set_cellular_distance_function(Some(CellularDistanceFunction::Euclidean));
        n.set_cellular_return_type(Some(CellularReturnType::Distance2Sub));
        n.set_cellular_jitter(Some(1.0));
        n.set_frequency(Some(8.0 / N as f32));
        b.iter(|| black_box(sample_grid(|x, y| n.get_noise_2d(x as f32, y as f32))));
    });
    group.finish();
}

fn scaling(c: &mut Criterion) {
    let mut group = c.benchmark_group("perlin_fbm_2048_8oct_threads");
    group.sample_size(10);
    let g = node_graph("noise", 2048, &[("octaves", ParamValue::Int(8))]);
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("pool");
        group.bench_with_input(BenchmarkId::from_parameter(threads), &threads, |b, _| {
            b.iter(|| pool.install(|| black_box(run(&g))));
        });
    }
    group.finish();
}

criterion_group!(benches, fbm, worley, scaling);
criterion_main!(benches);
