//! Times Lim–Tan–Bhojan ticks at 1024² on the erosion bench's constraint map (a fractal
//! noise, 2048 m features in an 8 km world), split into the tick's two halves: routing,
//! drainage and gorges (steps 1–3) and erosion and constraints (steps 4–6).
//!
//! Run: `cargo run --release -p orogen --example lim_probe -- [size] [ticks]`; add
//! `receivers` to time only the D4 receivers kernel (best of 30 calls).

use orogen::build::evaluate_outputs;
use orogen::graph::{Graph, NodeInstance, PortRef};
use orogen::node::{ParamValue, Registry};
use orogen::nodes::erosion::lim2022::{Lim, LimSettings};
use orogen::World;
use std::time::{Duration, Instant};

fn main() {
    let mut args = std::env::args().skip(1);
    let size: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(1024);
    let ticks: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(100);
    let world = World {
        size_m: 8.0 * size as f64,
        height_min_m: 0.0,
        height_max_m: 1000.0,
    };
    let Some(noise) = Registry::builtin().get("noise") else {
        return;
    };
    let mut g = Graph::new("probe", world, size, 1);
    g.nodes.push(NodeInstance::new("n", noise));
    if let Err(e) = g.set_param("n", "feature_size_m", ParamValue::Float(2.0 * size as f64)) {
        eprintln!("{e}");
        return;
    }
    g.outputs.insert("h".into(), PortRef::new("n", "out"));
    let c: Vec<f32> = match evaluate_outputs(&g, None) {
        Ok(out) => out["h"].data().iter().map(|v| v / 8.0).collect(),
        Err(e) => {
            eprintln!("{e:?}");
            return;
        }
    };
    let m = size * size;
    if std::env::args().any(|a| a == "receivers") {
        use orogen::nodes::erosion::flow;
        let off = flow::jittered_offsets(3, m, 1.0);
        let d4 = flow::D4Distances::new(&off, size, size);
        let (mut rcv, mut dist) = (vec![0u32; m], vec![0.0f32; m]);
        let time = |f: &mut dyn FnMut()| {
            (0..30)
                .map(|_| {
                    let t = Instant::now();
                    f();
                    t.elapsed().as_secs_f64()
                })
                .fold(f64::MAX, f64::min)
        };
        let fast = time(&mut || flow::receivers_d4(&c, size, &d4, &mut rcv, &mut dist));
        println!(
            "receivers at {size}² (best of 30): D4 kernel {:.2} ms",
            fast * 1e3
        );
        return;
    }
    let mut sim = Lim::uniform(c, size, 3, 20.0);
    let k = LimSettings::paper(20.0);
    let (mut route, mut erode) = (Duration::ZERO, Duration::ZERO);
    let start = Instant::now();
    for _ in 0..ticks {
        let t = Instant::now();
        sim.route_and_carve(&k);
        let t2 = Instant::now();
        sim.erode_and_constrain(&k);
        route += t2 - t;
        erode += t2.elapsed();
    }
    println!(
        "{size}² × {ticks}: {:.2} s (steps 1–3 {:.2} s, steps 4–6 {:.2} s)",
        start.elapsed().as_secs_f64(),
        route.as_secs_f64(),
        erode.as_secs_f64()
    );
}
