//! Peak memory of a headless build of a 20-node chain (constant → 19 × invert) at 4096².
//!
//! Run: `cargo run --release -p orogen --example chain_memory`
//! Prints the engine's own count of live node results at peak and the process's peak
//! resident set (VmHWM, Linux), against the size of one field.

use orogen::eval::{EvalOptions, Evaluator};
use orogen::graph::{Graph, NodeInstance, PortRef};
use orogen::node::Registry;
use orogen::World;

fn vm_hwm_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn main() {
    let n = 4096;
    let reg = Registry::builtin();
    let world = World {
        size_m: 4096.0,
        height_min_m: 0.0,
        height_max_m: 1000.0,
    };
    let mut g = Graph::new("chain", world, n, 1);
    let Some(constant) = reg.get("constant") else {
        return;
    };
    let Some(invert) = reg.get("invert") else {
        return;
    };
    g.nodes.push(NodeInstance::new("n0", constant));
    for i in 1..20 {
        let mut node = NodeInstance::new(format!("n{i}"), invert);
        node.inputs[0] = Some(PortRef::new(format!("n{}", i - 1), "out"));
        g.nodes.push(node);
    }
    g.outputs.insert("h".into(), PortRef::new("n19", "out"));
    let before = vm_hwm_kib().unwrap_or(0);
    let t0 = std::time::Instant::now();
    let res = match Evaluator::new().evaluate(&g, &EvalOptions::default()) {
        Ok(r) => r,
        Err(d) => {
            eprintln!("{d:?}");
            std::process::exit(1);
        }
    };
    let field_mib = (n * n * 4) as f64 / (1024.0 * 1024.0);
    println!(
        "20-node chain at {n}²: {} nodes evaluated in {:.2?}",
        res.evaluated().len(),
        t0.elapsed()
    );
    println!("one field: {field_mib:.0} MiB");
    println!(
        "engine peak of live node results: {:.0} MiB ({:.1} fields)",
        res.peak_live_bytes as f64 / 1_048_576.0,
        res.peak_live_bytes as f64 / 1_048_576.0 / field_mib
    );
    if let Some(hwm) = vm_hwm_kib() {
        println!(
            "process peak RSS (VmHWM): {:.0} MiB ({:.1} fields; {:.0} MiB before evaluating)",
            hwm as f64 / 1024.0,
            hwm as f64 / 1024.0 / field_mib,
            before as f64 / 1024.0
        );
    }
}
