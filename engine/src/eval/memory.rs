//! Peak-memory estimate of an evaluation, computed from the graph before anything runs, so a
//! build that cannot fit is refused with a number instead of dying in the allocator.
//!
//! The model follows the evaluator: nodes run wave by wave; a node's outputs stay alive until
//! its last consumer has run (targets until the end); while a wave runs, each of its nodes also
//! holds its scratch buffers ([`crate::node::Node::SCRATCH_FIELDS`], measured per node type with
//! `/usr/bin/time` at 1024², see docs/reliability.md) and a converted copy of every input that needs a
//! mask → height coercion. Every buffer is one full-resolution `f32` field.

use super::{Demand, Targets};
use crate::graph::{Diagnostic, Graph};
use crate::node::Coercion;

/// Bytes of one `f32` field at `resolution`² (saturating, so hostile sizes cannot overflow).
#[must_use]
pub fn field_bytes(resolution: usize) -> u64 {
    (resolution as u64)
        .saturating_mul(resolution as u64)
        .saturating_mul(4)
}

/// Estimated peak bytes of evaluating `targets` of `graph` at `resolution`² without
/// `keep_all` (a headless build). Invalid graphs return their diagnostics.
pub fn estimate_peak_bytes(
    graph: &Graph,
    resolution: usize,
    targets: &Targets,
) -> Result<u64, Vec<Diagnostic>> {
    let flat = graph.flattened();
    let graph: &Graph = &flat;
    let plan = graph.plan()?;
    let Demand {
        sources,
        target,
        needed,
        mut consumers,
    } = Demand::new(graph, targets);
    let field = field_bytes(resolution);
    let outputs = |i: usize| graph.nodes[i].def.spec.outputs.len() as u64;
    let (mut live, mut peak) = (0u64, 0u64);
    for wave in &plan.waves {
        let wave: Vec<usize> = wave.iter().copied().filter(|&i| needed[i]).collect();
        let mut transient = 0u64;
        for &i in &wave {
            let n = &graph.nodes[i];
            let coerced = n
                .def
                .spec
                .inputs
                .iter()
                .zip(&n.inputs)
                .filter(|(port, r)| {
                    r.as_ref()
                        .and_then(|r| graph.output_kind(r))
                        .and_then(|k| Coercion::between(k, port.kind))
                        == Some(Coercion::MaskToHeight)
                })
                .count() as u64;
            transient = transient
                .saturating_add((u64::from(n.def.scratch_fields) + coerced).saturating_mul(field));
            live = live.saturating_add(outputs(i).saturating_mul(field));
        }
        peak = peak.max(live.saturating_add(transient));
        for &i in &wave {
            for &s in &sources[i] {
                consumers[s] = consumers[s].saturating_sub(1);
                if consumers[s] == 0 && !target[s] {
                    live = live.saturating_sub(outputs(s).saturating_mul(field));
                }
            }
        }
    }
    // Writing outputs encodes one at a time (16-bit samples, PNG bytes, preview RGB: about two
    // fields) while every target is still alive; then 20% for the allocator and the process
    // itself (code, thread stacks, libraries). Measured against peak RSS in docs/reliability.md
    // (at 4096² the model alone was 4% under the measured peak; with the margin 3% over).
    let writing = live.saturating_add(field.saturating_mul(2));
    let model = peak.max(writing);
    Ok(model
        .saturating_add(model / 5)
        .saturating_add(PROCESS_BYTES))
}

/// Memory of the process before any field exists.
const PROCESS_BYTES: u64 = 48 << 20;

/// Bytes as a short human string (`3.2 GiB`).
#[must_use]
pub fn human_bytes(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// Parses `512M`, `8G`, `1.5GiB`, `2000000` (bytes).
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let v: f64 = num
        .parse()
        .map_err(|_| format!("\"{s}\": expected a size such as 8G, 512M or 1500000000"))?;
    let mult: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kb" | "kib" => 1024.0,
        "m" | "mb" | "mib" => 1024.0 * 1024.0,
        "g" | "gb" | "gib" => 1024.0 * 1024.0 * 1024.0,
        "t" | "tb" | "tib" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        other => {
            return Err(format!(
                "\"{s}\": unknown unit \"{other}\" (use K, M, G or T)"
            ))
        }
    };
    let bytes = v * mult;
    if !(1.0..=1.0e18).contains(&bytes) {
        return Err(format!("\"{s}\": out of range"));
    }
    Ok(bytes as u64)
}

/// Physical memory of this machine (Linux `/proc/meminfo`), if known.
#[must_use]
pub fn physical_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The default memory budget: three quarters of physical memory (4 GiB where unknown).
#[must_use]
pub fn default_budget() -> u64 {
    physical_memory().map_or(4 << 30, |m| m / 4 * 3)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{NodeInstance, PortRef};
    use crate::node::Registry;
    use crate::World;

    fn chain(n: usize) -> Graph {
        let reg = Registry::builtin();
        let world = World {
            size_m: 1000.0,
            height_min_m: 0.0,
            height_max_m: 100.0,
        };
        let mut g = Graph::new("chain", world, 256, 1);
        g.nodes.push(NodeInstance::new(
            "n0",
            reg.get("perlin_fbm").expect("perlin"),
        ));
        for i in 1..n {
            let mut b = NodeInstance::new(format!("n{i}"), reg.get("blur").expect("blur"));
            b.inputs[0] = Some(PortRef::new(format!("n{}", i - 1), "out"));
            g.nodes.push(b);
        }
        g.outputs
            .insert("h".into(), PortRef::new(format!("n{}", n - 1), "out"));
        g
    }

    #[test]
    fn a_chain_holds_two_fields_and_scratch_not_all_of_them() {
        let g = chain(20);
        let est = estimate_peak_bytes(&g, 1024, &Targets::Outputs).expect("valid");
        let f = field_bytes(1024);
        // A blur wave: its input, its output and its scratch — independent of chain length.
        assert!(
            est >= 2 * f && est <= 6 * f + PROCESS_BYTES,
            "{}",
            human_bytes(est)
        );
        let all = estimate_peak_bytes(&g, 1024, &Targets::All).expect("valid");
        assert!(all >= 20 * f, "keeping every node keeps every field");
    }

    #[test]
    fn hostile_resolutions_do_not_overflow() {
        let g = chain(3);
        let est = estimate_peak_bytes(&g, usize::MAX, &Targets::Outputs).expect("valid");
        assert_eq!(est, u64::MAX);
    }

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_bytes("512M"), Ok(512 << 20));
        assert_eq!(parse_bytes("8G"), Ok(8 << 30));
        assert_eq!(parse_bytes("1.5GiB"), Ok(1_610_612_736));
        assert_eq!(parse_bytes("1000"), Ok(1000));
        assert!(
            parse_bytes("lots").is_err() && parse_bytes("5X").is_err() && parse_bytes("0").is_err()
        );
        assert_eq!(human_bytes(3 << 30), "3.0 GiB");
    }
}
