//! Times one noise node at 1024² × 8 octaves on one thread (for profiling).
//!
//! Run: `cargo run --release -p orogen --example noise_probe -- [basis] [repeats]`

use orogen::eval::{EvalOptions, Evaluator};
use orogen::graph::{Graph, NodeInstance, PortRef};
use orogen::node::{ChoiceEnum, ParamValue, Registry};
use orogen::nodes::generators::noise_node::BasisChoice;
use orogen::World;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let basis = args.get(1).map_or("perlin", String::as_str);
    let repeats: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(20);
    let Some(b) = BasisChoice::NAMES.iter().position(|n| *n == basis) else {
        eprintln!("unknown basis {basis}; one of {:?}", BasisChoice::NAMES);
        std::process::exit(2);
    };
    let world = World {
        size_m: 4096.0,
        height_min_m: 0.0,
        height_max_m: 1000.0,
    };
    let mut g = Graph::new("probe", world, 1024, 1);
    let Some(def) = Registry::builtin().get("noise") else {
        return;
    };
    g.nodes.push(NodeInstance::new("n", def));
    let set = |g: &mut Graph, k: &str, v: ParamValue| {
        if let Err(e) = g.set_param("n", k, v) {
            eprintln!("{e}");
        }
    };
    set(&mut g, "basis", ParamValue::Choice(b));
    set(&mut g, "octaves", ParamValue::Int(8));
    set(&mut g, "feature_size_m", ParamValue::Float(512.0));
    g.outputs.insert("h".into(), PortRef::new("n", "out"));
    let pool = match rayon::ThreadPoolBuilder::new().num_threads(1).build() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("{e}");
            return;
        }
    };
    let t0 = std::time::Instant::now();
    for _ in 0..repeats {
        let r = pool.install(|| Evaluator::new().evaluate(&g, &EvalOptions::default()));
        std::hint::black_box(r.is_ok());
    }
    let per = t0.elapsed().as_secs_f64() / repeats as f64;
    println!(
        "{basis}: {:.2} ms per 1024² × 8 octaves = {:.2} ns per sample per octave",
        per * 1e3,
        per * 1e9 / (1024.0 * 1024.0 * 8.0)
    );
}
