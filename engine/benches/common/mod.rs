//! Helpers shared by the node benches: run one node through the engine's node API on a
//! precomputed input, and make that input.

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
            cancel: &cancel,
            progress: &|_| {},
            upstream: None,
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
