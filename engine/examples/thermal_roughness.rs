//! Roughness before and after thermal erosion (the ripple check): Perlin fBm in a 4 km world,
//! 0–1000 m, 512², talus 11°. `cargo run --release -p orogen --example thermal_roughness -- [talus] [iterations] [native|consistent] [strength]`

use orogen::build::evaluate_outputs;
use orogen::graph::{Graph, NodeInstance, PortRef};
use orogen::node::{ParamValue, Registry};
use orogen::{Field, World};

/// Mean |h − mean of its 4 neighbours| over the inner cells.
fn roughness(f: &Field) -> f64 {
    let (w, h, d) = (f.width(), f.height(), f.data());
    let mut s = 0.0f64;
    for y in 1..h - 1 {
        for x in 1..w - 1 {
            let i = y * w + x;
            let m = (d[i - 1] + d[i + 1] + d[i - w] + d[i + w]) / 4.0;
            s += f64::from((d[i] - m).abs());
        }
    }
    s / ((w - 2) * (h - 2)) as f64
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let talus: f64 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(11.0);
    let iterations: i64 = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(50);
    let detail = args.get(3).map_or("native", String::as_str);
    let strength: f64 = args.get(4).and_then(|a| a.parse().ok()).unwrap_or(0.5);
    let reg = Registry::builtin();
    let world = World {
        size_m: 4000.0,
        height_min_m: 0.0,
        height_max_m: 1000.0,
    };
    let mut g = Graph::new("t", world, 512, 3);
    g.nodes.push(NodeInstance::new(
        "src",
        reg.get("perlin_fbm").expect("perlin"),
    ));
    let mut t = NodeInstance::new("t", reg.get("thermal_erosion").expect("thermal"));
    t.inputs[0] = Some(PortRef::new("src", "out"));
    g.nodes.push(t);
    g.set_param("t", "talus_deg", ParamValue::Float(talus))
        .expect("p");
    g.set_param("t", "iterations", ParamValue::Int(iterations))
        .expect("p");
    g.set_param("t", "strength", ParamValue::Float(strength))
        .expect("p");
    let d = usize::from(detail == "native");
    g.set_param("t", "detail", ParamValue::Choice(d))
        .expect("p");
    g.outputs.insert("src".into(), PortRef::new("src", "out"));
    g.outputs.insert("t".into(), PortRef::new("t", "out"));
    let out = evaluate_outputs(&g, Some(512)).expect("eval");
    println!(
        "talus {talus}°, {iterations} iterations, strength {strength}, {detail}: roughness {:.3} m before, {:.3} m after",
        roughness(&out["src"]),
        roughness(&out["t"])
    );
}
