//! Erosion benches, each against the peer the erosion issue names, in the same run.
//!
//! Run: `cargo bench -p orogen --features bench --bench erosion` (set `OROGEN_SKIP_PEERS=1` to leave out the
//! fastscapelib run, which creates a virtualenv with pip on first use).
//!
//! * `erosion_1024_per_iteration`: thermal, grid hydraulic and pipe-model hydraulic at 1024²
//!   on the default pool (2 threads here); throughput in cell-iterations per second.
//! * `droplets_1024`: E-DOG 2011's droplets — a plain single-threaded loop written from the
//!   seed's code sample (wrapping map, its `Point2` erosion buffer, its brush) against
//!   `droplet_erosion`'s engine, equal droplet counts on the same terrain.
//! * After the criterion groups, whole runs that are too long for criterion's sampling:
//!   stream power 1024² × 100 steps against fastscapelib 0.3.0 (the script in
//!   `benches/peers/`, same grid, constants and step count; three runs of each, the best
//!   and the median compared), and Lim–Tan–Bhojan at 256²,
//!   512², 1024² × 100 iterations against the paper's Table 1.

use criterion::{Criterion, Throughput};
use orogen::field::Field;
use orogen::node::ParamValue;
use orogen::nodes::erosion::droplet;
use orogen::World;
use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

mod common;

const N: usize = 1024;
const WORLD: World = World {
    size_m: 8192.0,
    height_min_m: 0.0,
    height_max_m: 1000.0,
};

fn terrain() -> Arc<Field> {
    common::noise_field(N, WORLD, &[("feature_size_m", ParamValue::Float(3000.0))])
}

fn per_iteration(c: &mut Criterion) {
    let input = terrain();
    let iterations = 20;
    let mut group = c.benchmark_group("erosion_1024_per_iteration");
    group.sample_size(10);
    group.throughput(Throughput::Elements((N * N * iterations) as u64));
    for (name, ty, key) in [
        ("thermal", "thermal_erosion", "iterations"),
        ("thermal_olsen", "thermal_erosion", "iterations"),
        ("grid_hydraulic", "grid_hydraulic_erosion", "iterations"),
        ("pipe_hydraulic", "pipe_hydraulic_erosion", "iterations"),
    ] {
        let mut params = vec![(key, ParamValue::Int(iterations as i64))];
        if name == "thermal_olsen" {
            params.push(("variant", ParamValue::Choice(1)));
        }
        let run = common::node_runner(ty, &params, N, WORLD);
        group.bench_function(name, |b| b.iter(|| black_box(run(&input))));
    }
    group.finish();
}

/// E-DOG 2011's droplet loop as published (`genDropletErosion`), in plain Rust: one thread, a
/// wrapping power-of-two map, the `Point2` erosion/deposition buffer, the 4 × 4 bell brush.
fn reference_droplets(hmap: &mut [f32], size: usize, count: u32, seed: u64) {
    let (kq, kw, kr, kd, ki, min_slope, kg) =
        (10.0f32, 0.001f32, 0.9f32, 0.02f32, 0.1f32, 0.05f32, 40.0f32);
    let mask = size - 1;
    let idx = |x: i32, z: i32| ((z as usize) & mask) * size + ((x as usize) & mask);
    let mut erosion = vec![[0.0f32; 2]; size * size];
    let mut rng = seed | 1;
    let mut rnd = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let max_path = (size * 4) as u32;
    for _ in 0..count {
        let mut xi = (rnd() as usize & mask) as i32;
        let mut zi = (rnd() as usize & mask) as i32;
        let (mut xp, mut zp) = (xi as f32, zi as f32);
        let (mut xf, mut zf) = (0.0f32, 0.0f32);
        let mut h = hmap[idx(xi, zi)];
        let (mut s, mut v, mut w) = (0.0f32, 0.0f32, 1.0f32);
        let mut h00 = h;
        let mut h10 = hmap[idx(xi + 1, zi)];
        let mut h01 = hmap[idx(xi, zi + 1)];
        let mut h11 = hmap[idx(xi + 1, zi + 1)];
        let (mut dx, mut dz) = (0.0f32, 0.0f32);
        for _ in 0..max_path {
            let gx = h00 + h01 - h10 - h11;
            let gz = h00 + h10 - h01 - h11;
            dx = (dx - gx) * ki + gx;
            dz = (dz - gz) * ki + gz;
            let dl = (dx * dx + dz * dz).sqrt();
            if dl <= f32::EPSILON {
                let a = (rnd() >> 40) as f32 / (1u64 << 24) as f32 * std::f32::consts::TAU;
                dx = a.cos();
                dz = a.sin();
            } else {
                dx /= dl;
                dz /= dl;
            }
            let (nxp, nzp) = (xp + dx, zp + dz);
            let (nxi, nzi) = (nxp.floor() as i32, nzp.floor() as i32);
            let (nxf, nzf) = (nxp - nxi as f32, nzp - nzi as f32);
            let nh00 = hmap[idx(nxi, nzi)];
            let nh10 = hmap[idx(nxi + 1, nzi)];
            let nh01 = hmap[idx(nxi, nzi + 1)];
            let nh11 = hmap[idx(nxi + 1, nzi + 1)];
            let nh = (nh00 * (1.0 - nxf) + nh10 * nxf) * (1.0 - nzf)
                + (nh01 * (1.0 - nxf) + nh11 * nxf) * nzf;
            let deposit = |ds: f32, hmap: &mut [f32], erosion: &mut [[f32; 2]]| {
                for (x, z, wgt) in [
                    (xi, zi, (1.0 - xf) * (1.0 - zf)),
                    (xi + 1, zi, xf * (1.0 - zf)),
                    (xi, zi + 1, (1.0 - xf) * zf),
                    (xi + 1, zi + 1, xf * zf),
                ] {
                    let delta = ds * wgt;
                    erosion[idx(x, z)][1] += delta;
                    hmap[idx(x, z)] += delta;
                }
            };
            if nh >= h {
                let ds = (nh - h) + 0.001;
                if ds >= s {
                    deposit(s, hmap, &mut erosion);
                    break;
                }
                deposit(ds, hmap, &mut erosion);
                h += ds;
                s -= ds;
                v = 0.0;
            }
            let mut dh = h - nh;
            let q = dh.max(min_slope) * v * w * kq;
            let mut ds = s - q;
            if ds >= 0.0 {
                ds *= kd;
                deposit(ds, hmap, &mut erosion);
                dh += ds;
                s -= ds;
            } else {
                ds = (-ds * kr).min(dh * 0.99);
                for z in zi - 1..=zi + 2 {
                    let zo = z as f32 - zp;
                    for x in xi - 1..=xi + 2 {
                        let xo = x as f32 - xp;
                        let mut wgt = 1.0 - (xo * xo + zo * zo) * 0.25;
                        if wgt <= 0.0 {
                            continue;
                        }
                        wgt *= 0.159_154_94;
                        let delta = ds * wgt;
                        hmap[idx(x, z)] -= delta;
                        let e = &mut erosion[idx(x, z)];
                        if delta <= e[1] {
                            e[1] -= delta;
                        } else {
                            e[0] += delta - e[1];
                            e[1] = 0.0;
                        }
                    }
                }
                dh -= ds;
                s += ds;
            }
            v = (v * v + kg * dh).max(0.0).sqrt();
            w *= 1.0 - kw;
            (xp, zp, xi, zi, xf, zf, h) = (nxp, nzp, nxi, nzi, nxf, nzf, nh);
            (h00, h10, h01, h11) = (nh00, nh10, nh01, nh11);
        }
    }
    black_box(&erosion);
}

fn droplets(c: &mut Criterion) {
    let cell = (WORLD.size_m / N as f64) as f32;
    let start: Vec<f32> = terrain().data().iter().map(|v| v / cell).collect();
    let count = 65_536u32;
    let mut group = c.benchmark_group("droplets_1024");
    group.sample_size(10);
    group.throughput(Throughput::Elements(u64::from(count)));
    group.bench_function("seed001_reference_1_thread", |b| {
        b.iter(|| {
            let mut h = start.clone();
            reference_droplets(&mut h, N, count, 7);
            black_box(h)
        });
    });
    group.bench_function("orogen", |b| {
        b.iter(|| {
            let mut h = start.clone();
            let r = droplet::erode(
                &mut h,
                N,
                u64::from(count),
                7,
                &droplet::Settings::seed001(),
                &|| false,
                &|_| {},
            );
            black_box((h, r))
        });
    });
    group.finish();
}

/// Whole runs too long for criterion's sampling, each timed once.
fn whole_runs(peers: bool) {
    use orogen::nodes::erosion::lim2022::{Lim, LimSettings};
    use orogen::nodes::erosion::stream_power::StreamPower;
    println!(
        "\n== whole runs ({} threads) ==",
        rayon::current_num_threads()
    );
    // Stream power on fastscapelib's "Mountain" setup, 100 steps: three runs each of ours
    // and of the peer (one run of either moves by ±10–25% on a busy virtual machine), the
    // best and the median of each compared.
    let mut ours: Vec<f64> = (0..RUNS)
        .map(|_| {
            let (mut sim, k) = StreamPower::mountain(N);
            let t = Instant::now();
            for s in 0..100 {
                // As the node does: the map of drainage areas is kept at the last step only
                // (every step still accumulates them, per tree, for the incision).
                sim.keep_areas = s == 99;
                sim.step(&k);
            }
            t.elapsed().as_secs_f64()
        })
        .collect();
    ours.sort_by(f64::total_cmp);
    println!(
        "stream power 1024² × 100 steps: orogen {} s",
        common::seconds(&ours, 2)
    );
    if peers {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/peers/fastscape.sh");
        common::compare_with_peer(
            "fastscapelib",
            std::process::Command::new(script).args(["1024", "100", &RUNS.to_string()]),
            &ours,
        );
    }
    // Lim–Tan–Bhojan, 100 iterations on a fractal constraint map (paper, Table 1: 7.5 /
    // 31.3 / 115.6 s at 256² / 512² / 1024² on an i5-4690).
    for (size, paper) in [(256usize, 7.5f64), (512, 31.3), (1024, 115.6)] {
        let world = World {
            size_m: 8.0 * size as f64,
            ..WORLD
        };
        let c = common::noise_field(
            size,
            world,
            &[("feature_size_m", ParamValue::Float(2.0 * size as f64))],
        );
        let cell = 8.0f32;
        let mut sim = Lim::uniform(c.data().iter().map(|v| v / cell).collect(), size, 3, 20.0);
        let k = LimSettings::paper(20.0);
        let t = Instant::now();
        for _ in 0..100 {
            sim.step(&k);
        }
        let s = t.elapsed().as_secs_f64();
        println!(
            "lim–tan–bhojan {size}² × 100: orogen {s:.2} s, paper {paper} s → {:.0}×",
            paper / s
        );
    }
}

/// Runs of each side in the stream-power comparison.
const RUNS: usize = 3;

/// Sorted run times as "a / b / c".
fn main() {
    let peers = std::env::var_os("OROGEN_SKIP_PEERS").is_none();
    let mut c = Criterion::default().configure_from_args();
    per_iteration(&mut c);
    droplets(&mut c);
    c.final_summary();
    // A name filter (e.g. `-- thermal`) runs only the matching criterion benches.
    if !std::env::args().skip(1).any(|a| !a.starts_with('-')) {
        whole_runs(peers);
    }
}
