//! Per-iteration cost of one iterated erosion node at 1024² (for profiling and for the
//! "per cell per iteration" figures in BENCHMARKS.md): evaluates noise → node with `n` and
//! with `2n` iterations (best of five each) and reports the difference, so the input and the
//! node's per-evaluation setup (copies, output masks) are left out.
//!
//! Run: `cargo run --release -p orogen --example erosion_probe -- [node type] [n] [params…]`
//! (`PROBE_SIZE=256` for a map that fits in cache; default 1024)
//! e.g. `-- thermal_erosion 50 variant=1`

use orogen::eval::{EvalOptions, Evaluator};
use orogen::graph::{Graph, NodeInstance, PortRef};
use orogen::node::{ParamValue, Registry};
use orogen::World;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let ty = args.get(1).map_or("thermal_erosion", String::as_str);
    let n: i64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(40);
    // PROBE_SIZE=256 measures a map that stays in cache.
    let size: usize = std::env::var("PROBE_SIZE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1024);
    let world = World {
        size_m: 8192.0,
        height_min_m: 0.0,
        height_max_m: 1000.0,
    };
    let reg = Registry::builtin();
    let (Some(noise), Some(def)) = (reg.get("noise"), reg.get(ty)) else {
        eprintln!("unknown node type {ty}");
        std::process::exit(2);
    };
    let mut g = Graph::new("probe", world, size, 1);
    g.nodes.push(NodeInstance::new("src", noise));
    g.nodes.push(NodeInstance::new("e", def));
    let mut set = |node: &str, k: &str, v: ParamValue| {
        if let Err(e) = g.set_param(node, k, v) {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    set("src", "feature_size_m", ParamValue::Float(3000.0));
    // The published algorithm at the probe's size (`detail=0` for the coarse-to-fine run).
    set("e", "detail", ParamValue::Choice(1));
    for kv in args.iter().skip(3) {
        let Some((k, v)) = kv.split_once('=') else {
            eprintln!("expected key=value, got {kv}");
            std::process::exit(2);
        };
        let value = match v.parse::<i64>() {
            Ok(i) if k == "variant" || k == "mode" || k == "detail" => {
                ParamValue::Choice(i as usize)
            }
            Ok(i) => ParamValue::Int(i),
            Err(_) => ParamValue::Float(v.parse().unwrap_or(0.0)),
        };
        set("e", k, value);
    }
    g.nodes[1].inputs[0] = Some(PortRef::new("src", "out"));
    g.outputs.insert("h".into(), PortRef::new("e", "out"));
    let time = |g: &mut Graph, iterations: i64| {
        if let Err(e) = g.set_param("e", "iterations", ParamValue::Int(iterations)) {
            eprintln!("{e}");
            std::process::exit(2);
        }
        let t = Instant::now();
        let r = Evaluator::new().evaluate(g, &EvalOptions::default());
        let s = t.elapsed().as_secs_f64();
        match r {
            Err(e) => {
                eprintln!("{e:?}");
                std::process::exit(1);
            }
            Ok(r) if r.field(g, &g.outputs["h"]).is_none() => {
                eprintln!("no output: {:?}", r.status);
                std::process::exit(1);
            }
            Ok(_) => {}
        }
        s
    };
    time(&mut g, 1); // pages warmed
    let (mut best_n, mut best_2n) = (f64::MAX, f64::MAX);
    for _ in 0..5 {
        best_n = best_n.min(time(&mut g, n));
        best_2n = best_2n.min(time(&mut g, 2 * n));
    }
    let per = (best_2n - best_n) / n as f64;
    println!(
        "{ty} {size}²: {n} iterations {:.1} ms, {} iterations {:.1} ms → {:.2} ns per cell per iteration, noise + setup {:.1} ms ({} threads)",
        best_n * 1e3,
        2 * n,
        best_2n * 1e3,
        per / (size * size) as f64 * 1e9,
        (best_n - per * n as f64) * 1e3,
        rayon::current_num_threads()
    );
}
