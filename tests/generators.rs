//! Generator tests: golden images, resolution consistency, output ranges, and the fractal
//! dimension trend of Thorimbert & Chopard 2016 Fig. 15.

use crate::common;

use orogen::build::evaluate_outputs;
use orogen::graph::{Graph, NodeInstance, PortRef};
use orogen::node::{ParamValue, Registry};
use orogen::World;

fn gallery() -> Graph {
    common::load("graphs/gallery.json")
}

/// Each generator in graphs/gallery.json at 256² matches its golden PNG in
/// tests/golden/generators/ (tolerances in `common::check_goldens`).
#[test]
fn golden_image_per_generator() {
    common::check_goldens(&gallery(), "generators");
}

/// The same graph at 256² and at 1024² box-downsampled to 256² agrees: mean absolute
/// difference under 1% of the height range for every generator, and under 3% at the 99th
/// percentile. Not zero: 1024² resolves octaves finer than a 256² cell, which the
/// downsampling averages while the 256² build point-samples them; Worley ridges and fault
/// steps are sharp, so their few edge pixels differ most.
#[test]
fn every_generator_shows_the_same_terrain_at_every_resolution() {
    let g = gallery();
    let lo = evaluate_outputs(&g, Some(256)).expect("256");
    let hi = evaluate_outputs(&g, Some(1024)).expect("1024");
    let mut report = Vec::new();
    for (name, a) in &lo {
        let kind = g.output_kind(&g.outputs[name]).expect("kind");
        let span = match kind {
            orogen::node::PortKind::Height => g.world.height_span_m() as f32,
            orogen::node::PortKind::Mask | orogen::node::PortKind::Color => 1.0,
            orogen::node::PortKind::Scalar => {
                let (lo, hi) = a.min_max().expect("values");
                (hi - lo).max(f32::MIN_POSITIVE)
            }
        };
        let b = hi[name].downsample_box(4);
        let mut d: Vec<f32> = a
            .data()
            .iter()
            .zip(b.data())
            .map(|(x, y)| (x - y).abs() / span)
            .collect();
        let mean = d.iter().sum::<f32>() / d.len() as f32;
        d.sort_by(f32::total_cmp);
        let p99 = d[d.len() * 99 / 100];
        report.push(format!(
            "{name}: mean {:.3}%, p99 {:.3}%",
            mean * 100.0,
            p99 * 100.0
        ));
        assert!(
            mean < 0.01 && p99 < 0.03,
            "{name}: mean {mean}, p99 {p99}\n{report:#?}"
        );
        // Diamond-square's cells are exact area means of one lattice surface: a preview is
        // what the build averages to, to float rounding.
        if name == "diamond" {
            assert!(mean < 1e-5 && p99 < 1e-4, "diamond: mean {mean}, p99 {p99}");
        }
    }
    println!("{report:#?}");
}

fn noise_graph(params: &[(&str, ParamValue)], resolution: usize) -> Graph {
    let world = World {
        size_m: 8192.0,
        height_min_m: 0.0,
        height_max_m: 1000.0,
    };
    let mut g = Graph::new("t", world, resolution, 1);
    g.nodes.push(NodeInstance::new(
        "n",
        Registry::builtin().get("noise").expect("noise"),
    ));
    g.set_param("n", "amplitude", ParamValue::Float(0.5))
        .expect("amplitude");
    g.set_param("n", "base", ParamValue::Float(0.5))
        .expect("base");
    for (k, v) in params {
        g.set_param("n", k, v.clone()).expect("param");
    }
    g.outputs.insert("h".into(), PortRef::new("n", "out"));
    g
}

/// Documented range: noise values v stay within about [−1, 1], so heights stay within
/// base ± amplitude (checked with 5% slack) for every basis and mode.
#[test]
fn noise_values_stay_in_their_documented_range() {
    for basis in 0..5 {
        for mode in 0..4 {
            for seed in 0..3 {
                let g = noise_graph(
                    &[
                        ("basis", ParamValue::Choice(basis)),
                        ("mode", ParamValue::Choice(mode)),
                        ("seed", ParamValue::Int(seed)),
                        ("feature_size_m", ParamValue::Float(1500.0)),
                    ],
                    128,
                );
                let f = &evaluate_outputs(&g, None).expect("eval")["h"];
                let (lo, hi) = f.min_max().expect("values");
                assert!(
                    lo >= -25.0 && hi <= 1025.0,
                    "basis {basis} mode {mode} seed {seed}: [{lo}, {hi}]"
                );
                assert!(
                    hi - lo > 100.0,
                    "basis {basis} mode {mode}: nearly flat [{lo}, {hi}]"
                );
            }
        }
    }
}

/// Thorimbert & Chopard 2016 Fig. 15: the coastline's fractal dimension grows with the number of octaves,
/// and with the persistence. Mean over three seeds, Perlin fBm at 512², sea level = median.
#[test]
fn coastline_dimension_grows_with_octaves_and_persistence() {
    let dim = |octaves: i64, persistence: f64| -> f64 {
        (0..3)
            .map(|seed| {
                let g = noise_graph(
                    &[
                        ("octaves", ParamValue::Int(octaves)),
                        ("persistence", ParamValue::Float(persistence)),
                        ("feature_size_m", ParamValue::Float(8192.0)),
                        ("seed", ParamValue::Int(seed)),
                    ],
                    512,
                );
                let f = &evaluate_outputs(&g, None).expect("eval")["h"];
                orogen::analysis::stats(f, &g.world, 16, None)
                    .coastline
                    .expect("coast")
                    .dimension
            })
            .sum::<f64>()
            / 3.0
    };
    let by_octaves: Vec<f64> = [1, 3, 5, 8].iter().map(|&o| dim(o, 0.6)).collect();
    for w in by_octaves.windows(2) {
        assert!(w[1] > w[0], "D by octaves (p = 0.6): {by_octaves:?}");
    }
    let by_persistence: Vec<f64> = [0.3, 0.5, 0.7].iter().map(|&p| dim(8, p)).collect();
    for w in by_persistence.windows(2) {
        assert!(
            w[1] > w[0],
            "D by persistence (8 octaves): {by_persistence:?}"
        );
    }
    assert!(
        by_octaves[3] > 1.05 && by_octaves[3] < 1.6,
        "{by_octaves:?}"
    );
}
