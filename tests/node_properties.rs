//! Property tests over every registered node: random parameters within the hard ranges
//! never panic, outputs are finite, masks stay in [0, 1], and results do not depend on
//! the thread count.

use orogen::eval::{EvalOptions, Evaluator, NodeStatus, Targets};
use orogen::graph::{Graph, NodeInstance, PortRef};
use orogen::node::{Category, NodeDef, PortKind, Registry};
use orogen::World;
use proptest::prelude::*;

use crate::common;
use common::random_param;

fn graph_for(def: &'static NodeDef, draws: &[(f64, bool)], resolution: usize) -> Graph {
    let reg = Registry::builtin();
    let world = World {
        size_m: 2000.0,
        height_min_m: -50.0,
        height_max_m: 450.0,
    };
    let mut g = Graph::new("prop", world, resolution, 3);
    let mut n = NodeInstance::new("subject", def);
    for (i, spec) in def.params.iter().enumerate() {
        let (r, flag) = draws[i % draws.len()];
        n.params[i] = random_param(spec, r, flag);
        // The erosion nodes' base grid (up to 1024² on a 24² map) and their step counts cost
        // time, not coverage: what the values do is drawn at random, how long they run is not
        // what is tested (a base up to 128², up to 40 steps or iterations).
        let cap = match (def.spec.category, spec.name) {
            (Category::Erosion, "base_resolution") => 128,
            (Category::Erosion, "steps" | "iterations") => 40,
            _ => i64::MAX,
        };
        if let orogen::node::ParamValue::Int(b) = &mut n.params[i] {
            *b = (*b).min(cap);
        }
    }
    for (i, port) in def.spec.inputs.iter().enumerate() {
        let (src_type, id) = match port.kind {
            // A height is a quantity in metres, so it feeds scalar inputs too.
            PortKind::Height | PortKind::Scalar => ("perlin_fbm", format!("src{i}")),
            PortKind::Mask => ("radial_gradient", format!("src{i}")),
            PortKind::Color => ("solid_color", format!("src{i}")),
        };
        g.nodes.push(NodeInstance::new(
            id.clone(),
            reg.get(src_type).expect("source"),
        ));
        n.inputs[i] = Some(PortRef::new(id, "out"));
    }
    for p in def.spec.outputs {
        g.outputs
            .insert(p.name.into(), PortRef::new("subject", p.name));
    }
    g.nodes.push(n);
    g
}

fn check(def: &'static NodeDef, draws: &[(f64, bool)]) -> Result<(), TestCaseError> {
    let g = graph_for(def, draws, 24);
    let opts = EvalOptions {
        targets: Targets::All,
        ..EvalOptions::default()
    };
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("pool")
        .install(|| Evaluator::new().evaluate(&g, &opts));
    let many = Evaluator::new().evaluate(&g, &opts);
    let (Ok(one), Ok(many)) = (one, many) else {
        return Err(TestCaseError::fail(format!(
            "{}: graph should be valid",
            def.spec.id
        )));
    };
    match &one.status["subject"] {
        NodeStatus::Computed => {}
        // A node may refuse a parameter combination, but only with a message.
        NodeStatus::Failed(e) => {
            prop_assert!(!e.to_string().is_empty());
            return Ok(());
        }
        s => return Err(TestCaseError::fail(format!("{}: {s:?}", def.spec.id))),
    }
    for port in def.spec.outputs {
        let r = &g.outputs[port.name];
        let a = one.field(&g, r).expect("field");
        let b = many.field(&g, r).expect("field");
        prop_assert_eq!(
            &a,
            &b,
            "{}.{}: thread count changed the result",
            def.spec.id,
            port.name
        );
        prop_assert!(
            a.data().iter().all(|v| v.is_finite()),
            "{}.{}: non-finite output",
            def.spec.id,
            port.name
        );
        prop_assert_eq!(
            a.channels(),
            port.kind.channels(),
            "{}.{}: wrong channel count",
            def.spec.id,
            port.name
        );
        if matches!(port.kind, PortKind::Mask | PortKind::Color) {
            prop_assert!(
                a.data().iter().all(|v| (0.0..=1.0).contains(v)),
                "{}.{}: {} outside [0, 1]",
                def.spec.id,
                port.name,
                port.kind.name()
            );
        }
    }
    Ok(())
}

// Two tests, so that the slow erosion nodes and the rest run side by side.
proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
    #[test]
    fn every_erosion_node_survives_random_parameters(draws in prop::collection::vec((0.0f64..1.0, any::<bool>()), 1..12)) {
        for def in Registry::builtin().defs().iter().filter(|d| d.spec.category == Category::Erosion) {
            check(def, &draws)?;
        }
    }

    #[test]
    fn every_other_node_survives_random_parameters(draws in prop::collection::vec((0.0f64..1.0, any::<bool>()), 1..12)) {
        for def in Registry::builtin().defs().iter().filter(|d| d.spec.category != Category::Erosion) {
            check(def, &draws)?;
        }
    }
}
