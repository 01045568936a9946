//! Times `droplet_erosion`'s engine at 1024² with 65 536 droplets on the erosion bench's
//! terrain (for profiling; the criterion bench compares it with the reference loop).
//!
//! Run: `cargo run --release -p orogen --example droplet_probe -- [repeats] [droplets]`

use orogen::build::evaluate_outputs;
use orogen::graph::{Graph, NodeInstance, PortRef};
use orogen::node::{ParamValue, Registry};
use orogen::nodes::erosion::droplet;
use orogen::World;

fn main() {
    let repeats: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    let count: u64 = std::env::args()
        .nth(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(65_536);
    let n = 1024;
    let world = World {
        size_m: 8192.0,
        height_min_m: 0.0,
        height_max_m: 1000.0,
    };
    let Some(noise) = Registry::builtin().get("noise") else {
        return;
    };
    let mut g = Graph::new("probe", world, n, 1);
    g.nodes.push(NodeInstance::new("n", noise));
    if let Err(e) = g.set_param("n", "feature_size_m", ParamValue::Float(3000.0)) {
        eprintln!("{e}");
        return;
    }
    g.outputs.insert("h".into(), PortRef::new("n", "out"));
    let start: Vec<f32> = match evaluate_outputs(&g, None) {
        Ok(out) => out["h"].data().iter().map(|v| v / 8.0).collect(),
        Err(e) => {
            eprintln!("{e:?}");
            return;
        }
    };
    for _ in 0..repeats {
        let mut h = start.clone();
        let t = std::time::Instant::now();
        let r = droplet::erode(
            &mut h,
            n,
            count,
            7,
            &droplet::Settings::seed001(),
            &|| false,
            &|_| {},
        );
        let s = t.elapsed().as_secs_f64();
        match r {
            Ok(r) => println!(
                "{:.0} ms, {} droplets parked, {} steps",
                s * 1e3,
                r.parked,
                r.steps
            ),
            Err(e) => eprintln!("{e}"),
        }
    }
}
