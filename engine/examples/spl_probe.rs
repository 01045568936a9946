//! Times stream power + uplift on the erosion bench's setup (fastscapelib's "Mountain"
//! example, [`StreamPower::mountain`]), prints how many cells drained to pits and lay
//! under lakes every tenth step, and the time of each phase summed over the steps.
//!
//! Run: `cargo run --release -p orogen --example spl_probe -- [size] [steps] [diffusivity m²/yr]`.

use orogen::nodes::erosion::stream_power::StreamPower;
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let size: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(1024);
    let steps: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(100);
    // Hillslope diffusivity (m²/yr); the bench's setup has none.
    let kd: f64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(0.0);
    let n = size * size;
    let (mut sim, mut k) = StreamPower::mountain(size);
    k.kd = kd;
    let start = Instant::now();
    let mut phases: Vec<(&'static str, f64)> = Vec::new();
    for s in 0..steps {
        let t = Instant::now();
        // As the node does: the drainage areas are read after the last step only.
        sim.keep_areas = s + 1 == steps;
        sim.step(&k);
        for (name, ms) in sim.laps() {
            match phases.iter_mut().find(|p| p.0 == name) {
                Some(p) => p.1 += ms,
                None => phases.push((name, ms)),
            }
        }
        if s % 50 == 0 || s + 1 == steps {
            let laps: Vec<String> = sim
                .laps()
                .iter()
                .map(|(name, ms)| format!("{name} {ms:.1}"))
                .collect();
            println!("  step {s} phases (ms): {}", laps.join(", "));
        }
        if s % 10 == 0 || s + 1 == steps {
            println!(
                "step {s:3}: {:6.1} ms, pit basins {:7} cells, lakes {:7} cells",
                t.elapsed().as_secs_f64() * 1e3,
                sim.pit_basin_cells(),
                sim.lake_cells
            );
        }
    }
    let total = start.elapsed().as_secs_f64();
    let top = sim.z.iter().copied().fold(f32::MIN, f32::max);
    let mean = sim.z.iter().map(|&v| f64::from(v)).sum::<f64>() / n as f64;
    println!(
        "{size}² × {steps} steps: {total:.2} s ({:.1} ms per step); highest {top:.1} m, mean {mean:.2} m",
        total * 1e3 / steps as f64
    );
    println!("summed over the steps (ms; phases of steps without pits are not timed):");
    for (name, ms) in phases {
        println!("  {name:20} {ms:8.0}");
    }
}
