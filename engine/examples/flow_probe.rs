//! Phase times of flow routing (the `water` bench's "priority flood + d8 + drainage area")
//! on the bench's noise terrain: the flood, the receivers, the accumulation; best of three.
//!
//! Run: `cargo run --release -p orogen --example flow_probe -- [size]` (default 4096)

use orogen::eval::{EvalOptions, Evaluator};
use orogen::graph::{Graph, NodeInstance, PortRef};
use orogen::node::{ParamValue, Registry};
use orogen::nodes::water::flow_accumulation::Routes;
use orogen::nodes::water::priority_flood;
use orogen::World;
use std::time::Instant;

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(4096);
    let world = World {
        size_m: 8192.0,
        height_min_m: 0.0,
        height_max_m: 1000.0,
    };
    let mut g = Graph::new("src", world, n, 1);
    let Some(noise) = Registry::builtin().get("noise") else {
        return;
    };
    g.nodes.push(NodeInstance::new("n", noise));
    if let Err(e) = g.set_param("n", "feature_size_m", ParamValue::Float(3000.0)) {
        eprintln!("{e}");
        return;
    }
    g.outputs.insert("h".into(), PortRef::new("n", "out"));
    let field = match Evaluator::new().evaluate(&g, &EvalOptions::default()) {
        Ok(r) => r.field(&g, &g.outputs["h"]),
        Err(e) => {
            eprintln!("{e:?}");
            return;
        }
    };
    let Some(z) = field else { return };
    let cell = world.cell_size_m(n);
    let mut best = [f64::MAX; 4];
    for _ in 0..3 {
        let t = Instant::now();
        let flood = priority_flood(z.data(), n, n);
        let t1 = t.elapsed().as_secs_f64();
        let routes = Routes::new(&flood, n, n, None);
        let r = routes.receivers();
        let t2 = t.elapsed().as_secs_f64();
        let area = routes.accumulate(cell * cell, None);
        let t3 = t.elapsed().as_secs_f64();
        std::hint::black_box((r, area));
        for (b, v) in best.iter_mut().zip([t1, t2 - t1, t3 - t2, t3 - (t2 - t1)]) {
            *b = b.min(v);
        }
    }
    println!(
        "{n}²: flood {:.3} s, receivers {:.3} s, accumulate (receivers + sums) {:.3} s; flood + accumulate {:.3} s",
        best[0], best[1], best[2], best[3]
    );
}
