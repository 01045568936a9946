//! Times the stream-power node's core on the fastscapelib "Mountain" setup (see
//! `engine/benches/peers/fastscape_mountain.py`): `cargo run --release --example spl_probe [size] [steps]`.
use orogen::nodes::erosion::stream_power::{SplSettings, StreamPower};

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let size = args.first().copied().unwrap_or(1024);
    let steps = args.get(1).copied().unwrap_or(100);
    let n = size * size;
    let z: Vec<f32> = (0..n)
        .map(|i| (orogen::node::splitmix64(i as u64) >> 40) as f32 / (1u64 << 24) as f32)
        .collect();
    let k = SplSettings {
        k: 2e-4,
        m: 0.4,
        n: 1.0,
        dt: 2e4,
        jitter: 0.0,
    };
    let mut sim = StreamPower::new(z, vec![1e-3; n], size, size, 100e3 / size as f64, 1, 0.0);
    let t = std::time::Instant::now();
    for s in 0..steps {
        let t0 = std::time::Instant::now();
        sim.step(&k);
        if s < 3 || s % 20 == 0 {
            let lakes = sim.lake_cells;
            eprintln!(
                "step {s}: {:.1} ms, lake cells {lakes}",
                t0.elapsed().as_secs_f64() * 1e3
            );
        }
    }
    let total = t.elapsed().as_secs_f64();
    let (lo, hi) = sim
        .z
        .iter()
        .fold((f32::MAX, f32::MIN), |(a, b), &v| (a.min(v), b.max(v)));
    println!("orogen {size}^2 x {steps} steps: {total:.3} s ({:.1} ns/node/step), heights {lo:.1}..{hi:.1} m", total * 1e9 / (n * steps) as f64);
}
