//! Helpers shared by the node benches: run one node through the engine's node API on a
//! precomputed input, and make that input; time whole runs against a peer.

// Each bench uses part of these helpers; `expect` would fail in the benches that use them
// all, so this one exception stays an `allow` (as in `tests/common`).
#![allow(dead_code)]

use orogen::eval::{EvalOptions, Evaluator};
use orogen::field::Field;
use orogen::graph::{Graph, NodeInstance, PortRef};
use orogen::node::{ParamValue, Registry};
use orogen::World;
use std::sync::Arc;

/// Runs node `ty` at `n`² in `world` on a precomputed input field (connected to every
/// required input; the input is not recomputed per call). Returns the number of outputs.
pub fn node_runner(
    ty: &str,
    params: &[(&str, ParamValue)],
    n: usize,
    world: World,
) -> impl Fn(&Arc<Field>) -> usize {
    let reg = Registry::builtin();
    let def = reg.get(ty).expect("node type");
    let mut g = Graph::new("b", world, n, 1);
    g.nodes.push(NodeInstance::new("n", def));
    // Benches time the published algorithm at the bench's size (what the peers run), not the
    // coarse-to-fine evaluation: erosion nodes run with `detail = native` unless told.
    if def.param_index("detail").is_some() {
        g.set_param("n", "detail", orogen::node::ParamValue::Choice(1))
            .expect("detail");
    }
    for (k, v) in params {
        g.set_param("n", k, v.clone()).expect("param");
    }
    let values = g.nodes[0].params.clone();
    move |input: &Arc<Field>| {
        let cancel = orogen::eval::CancelToken::new();
        let ctx = orogen::node::EvalCtx {
            resolution: n,
            window: orogen::node::Window::full(n),
            world,
            graph_seed: 1,
            node_id: "n",
            base_dir: None,
            allow_outside: &[],
            cancel: &cancel,
            progress: &|_| {},
            upstream: None,
            arrays: None,
        };
        let mut inputs: Vec<Option<Arc<Field>>> = vec![None; def.spec.inputs.len()];
        for (i, port) in def.spec.inputs.iter().enumerate() {
            if port.required {
                inputs[i] = Some(Arc::clone(input));
            }
        }
        def.eval(&ctx, &inputs, &values).expect("eval").len()
    }
}

/// The `noise` node's default output at `n`² in `world`, with `params` set.
pub fn noise_field(n: usize, world: World, params: &[(&str, ParamValue)]) -> Arc<Field> {
    let mut g = Graph::new("src", world, n, 1);
    g.nodes.push(NodeInstance::new(
        "n",
        Registry::builtin().get("noise").expect("noise"),
    ));
    for (k, v) in params {
        g.set_param("n", k, v.clone()).expect("param");
    }
    g.outputs.insert("h".into(), PortRef::new("n", "out"));
    let r = Evaluator::new()
        .evaluate(&g, &EvalOptions::default())
        .expect("eval");
    r.field(&g, &g.outputs["h"]).expect("field")
}

/// Wall times in seconds of `runs` calls of `f`, sorted (best first).
pub fn timed_runs(runs: usize, mut f: impl FnMut()) -> Vec<f64> {
    let mut times: Vec<f64> = (0..runs)
        .map(|_| {
            let t = std::time::Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times
}

/// Run times in seconds, `a / b / c`, with `decimals` places.
pub fn seconds(runs: &[f64], decimals: usize) -> String {
    let all: Vec<String> = runs.iter().map(|s| format!("{s:.decimals$}")).collect();
    all.join(" / ")
}

/// Runs a peer command that prints one line per run ending in `<seconds> s`, prints its
/// output and the ratio peer / ours of the best and of the median runs (`ours` sorted).
pub fn compare_with_peer(name: &str, cmd: &mut std::process::Command, ours: &[f64]) {
    match cmd.output() {
        Ok(out) if out.status.success() => {
            let text = String::from_utf8_lossy(&out.stdout);
            print!("{text}");
            let mut peer: Vec<f64> = text
                .lines()
                .filter_map(|l| l.split_whitespace().rev().nth(1)?.parse().ok())
                .collect();
            peer.sort_by(f64::total_cmp);
            if let (Some(&p0), Some(&o0)) = (peer.first(), ours.first()) {
                let (pm, om) = (peer[peer.len() / 2], ours[ours.len() / 2]);
                println!(
                    "{name} {} s; ratio {name} / orogen: best {:.2}×, median {:.2}×",
                    seconds(&peer, 3),
                    p0 / o0,
                    pm / om
                );
            }
        }
        Ok(out) => println!(
            "{name} peer failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(e) => println!("{name} peer not run: {e}"),
    }
}
