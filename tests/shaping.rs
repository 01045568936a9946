//! Shaping tests (combine, warp, filter, mask): golden images per category, blur mean and
//! radius consistency, true slope angles at two resolutions, idempotent normalize, exact
//! lerp endpoints, identity warps. Masks staying in [0, 1] for any parameters is checked for
//! every mask node by `tests/node_properties.rs`.

use crate::common;

use orogen::build::evaluate_outputs;
use orogen::field::Field;
use orogen::graph::{Graph, NodeInstance, PortRef};
use orogen::node::{ParamValue, Registry};
use orogen::World;

/// One node of a test graph: (id, type, parameters, inputs as (port, source node)).
type Step = (
    &'static str,
    &'static str,
    Vec<(&'static str, ParamValue)>,
    Vec<(&'static str, &'static str)>,
);

fn world() -> World {
    World {
        size_m: 4096.0,
        height_min_m: 0.0,
        height_max_m: 1000.0,
    }
}

/// A graph of `steps` = [(id, type, params, inputs)] with outputs named after `outputs`.
fn graph(steps: &[Step], outputs: &[&str]) -> Graph {
    let reg = Registry::builtin();
    let mut g = Graph::new("t", world(), 256, 3);
    for (id, ty, params, inputs) in steps {
        let def = reg.get(ty).unwrap_or_else(|| panic!("no node type {ty}"));
        let mut n = NodeInstance::new(*id, def);
        for (port, src) in inputs {
            let i = def
                .input_index(port)
                .unwrap_or_else(|| panic!("{ty} has no input {port}"));
            n.inputs[i] = Some(PortRef::new(*src, "out"));
        }
        g.nodes.push(n);
        for (k, v) in params {
            g.set_param(id, k, v.clone())
                .unwrap_or_else(|e| panic!("{e}"));
        }
    }
    for o in outputs {
        g.outputs.insert((*o).into(), PortRef::new(*o, "out"));
    }
    g
}

fn noise() -> Step {
    noise_of(6, 800.0)
}

/// A noise node `src` of `octaves` octaves and features of `feature_m` metres.
fn noise_of(octaves: i64, feature_m: f64) -> Step {
    (
        "src",
        "noise",
        vec![
            ("octaves", ParamValue::Int(octaves)),
            ("feature_size_m", ParamValue::Float(feature_m)),
        ],
        vec![],
    )
}

fn mean(f: &Field) -> f64 {
    f.data().iter().map(|&v| f64::from(v)).sum::<f64>() / f.data().len() as f64
}

#[test]
fn golden_images_per_shaping_category() {
    common::check_goldens(&common::load("graphs/shaping.json"), "shaping");
}

#[test]
fn blur_preserves_the_mean_and_is_the_same_at_every_resolution() {
    for radius in [10.0, 80.0, 400.0, 5000.0] {
        let g = graph(
            &[
                noise(),
                (
                    "blur",
                    "blur",
                    vec![("radius_m", ParamValue::Float(radius))],
                    vec![("in", "src")],
                ),
            ],
            &["src", "blur"],
        );
        let lo = evaluate_outputs(&g, Some(256)).expect("256");
        let hi = evaluate_outputs(&g, Some(1024)).expect("1024");
        for out in [&lo, &hi] {
            let (m0, m1) = (mean(&out["src"]), mean(&out["blur"]));
            assert!((m0 - m1).abs() < 1e-3, "radius {radius}: mean {m0} → {m1}");
        }
        // 1024² blurred then box-downsampled vs 256² blurred: the blur is in metres.
        let a = &lo["blur"];
        let b = hi["blur"].downsample_box(4);
        let diff = a
            .data()
            .iter()
            .zip(b.data())
            .map(|(x, y)| f64::from((x - y).abs()))
            .sum::<f64>()
            / a.data().len() as f64;
        // Mean |Δ| under 0.3% of the height range (box approximations and the 256² input
        // lacking the finest octave detail account for the rest).
        assert!(diff < 3.0, "radius {radius}: mean |Δ| {diff} m");
    }
}

#[test]
fn slope_of_a_tilted_plane_is_its_true_angle_at_256_and_2048() {
    // A ramp over the whole 1000 m height range across the 4096 m world: atan(1000/4096).
    let angle = (1000.0f64 / 4096.0).atan().to_degrees() as f32;
    for res in [256, 2048] {
        let g = graph(
            &[
                (
                    "ramp",
                    "linear_gradient",
                    vec![
                        ("start", ParamValue::Float(-0.5)),
                        ("end", ParamValue::Float(0.5)),
                    ],
                    vec![],
                ),
                ("plane", "levels", vec![], vec![("in", "ramp")]),
                (
                    "inside",
                    "slope_mask",
                    vec![
                        ("min_deg", ParamValue::Float(f64::from(angle) - 0.01)),
                        ("max_deg", ParamValue::Float(f64::from(angle) + 0.01)),
                        ("falloff_deg", ParamValue::Float(0.0)),
                        // The grid's own cells: smoothed, the plane's slope falls at the map's
                        // edge, where the blur meets no land.
                        ("scale_m", ParamValue::Float(0.0)),
                    ],
                    vec![("in", "plane")],
                ),
            ],
            &["plane", "inside"],
        );
        let out = evaluate_outputs(&g, Some(res)).expect("eval");
        let cell = world().cell_size_m(res);
        let s = orogen::field::derive::slope_deg(&out["plane"], cell);
        assert!(
            s.data().iter().all(|&v| (v - angle).abs() < 0.01),
            "{res}²: slopes {:?} vs {angle}",
            s.min_max()
        );
        assert!(
            out["inside"].data().iter().all(|&m| m == 1.0),
            "{res}²: slope mask misses the plane"
        );
    }
}

/// Slope, aspect and curvature masks at their default scale (auto: a fixed share of the
/// world) are the same masks in a 256² preview and a 1024² build of a seven-octave noise —
/// within parity's 1.5%, correlated ≥ 0.95 — while a slope mask over the grid's own cells
/// (scale_m 0) reads the build's finer, steeper octaves, misses it, and is named per cell.
#[test]
fn derivative_masks_at_their_default_scale_hold_across_resolutions() {
    let fine = noise_of(7, 1600.0);
    let per_cell = vec![("scale_m", ParamValue::Float(0.0))];
    let g = graph(
        &[
            fine,
            ("slope", "slope_mask", vec![], vec![("in", "src")]),
            ("aspect", "aspect_mask", vec![], vec![("in", "src")]),
            ("curvature", "curvature_mask", vec![], vec![("in", "src")]),
            ("slope0", "slope_mask", per_cell, vec![("in", "src")]),
        ],
        &["slope", "aspect", "curvature", "slope0"],
    );
    let rows = orogen::parity::compare(&g, None, 256, 1024, &[]).expect("parity");
    let row = |node: &str| {
        rows.iter()
            .find(|r| r.node == node)
            .unwrap_or_else(|| panic!("no row {node}"))
    };
    for node in ["slope", "aspect", "curvature"] {
        let r = row(node);
        assert!(
            r.mean_abs_diff <= 0.015 && r.correlation >= 0.95,
            "{node}: mean |Δ| {:.4}, correlation {:.3}",
            r.mean_abs_diff,
            r.correlation
        );
        assert_eq!(r.verdict(), orogen::parity::Verdict::Ok, "{node}");
    }
    let r = row("slope0");
    assert!(r.mean_abs_diff > 0.03, "slope0: {:.4}", r.mean_abs_diff);
    assert_ne!(r.verdict(), orogen::parity::Verdict::Ok);
    let behaviour = |id: &str| {
        let n = g.node(id).expect("node");
        n.def.resolution(&n.params)
    };
    assert_eq!(
        behaviour("slope0"),
        orogen::node::ResolutionBehaviour::PerCell
    );
    assert_eq!(
        behaviour("slope"),
        orogen::node::ResolutionBehaviour::Independent
    );
}

/// `mask_grow` moves a hard edge by exactly distance_m at every resolution: a half-plane
/// mask (its edge at the world's centre) grown or shrunk by 100 m covers 2148 m or 1948 m of
/// the 4096 m world's width at 256² (16 m cells: 6.25 cells, the last covered by a quarter)
/// and at 2048² (2 m cells: 50 cells) alike.
#[test]
fn mask_grow_moves_an_edge_by_its_distance_at_every_resolution() {
    for (distance, width) in [(100.0, 2148.0), (-100.0, 1948.0)] {
        let g = graph(
            &[
                (
                    "edge",
                    "linear_gradient",
                    vec![
                        ("start", ParamValue::Float(-1e-4)),
                        ("end", ParamValue::Float(1e-4)),
                    ],
                    vec![],
                ),
                (
                    "grown",
                    "mask_grow",
                    vec![("distance_m", ParamValue::Float(distance))],
                    vec![("in", "edge")],
                ),
            ],
            &["grown"],
        );
        for res in [256, 2048] {
            let out = &evaluate_outputs(&g, Some(res)).expect("eval")["grown"];
            let area = mean(out) * 4096.0 * 4096.0;
            let want = width * 4096.0;
            assert!(
                (area / want - 1.0).abs() < 1e-5,
                "{res}², {distance} m: {area} m² vs {want} m²"
            );
        }
    }
}

#[test]
fn normalize_is_idempotent() {
    let g = graph(
        &[
            noise(),
            (
                "n1",
                "normalize",
                vec![
                    ("low", ParamValue::Float(0.1)),
                    ("high", ParamValue::Float(0.9)),
                ],
                vec![("in", "src")],
            ),
            (
                "n2",
                "normalize",
                vec![
                    ("low", ParamValue::Float(0.1)),
                    ("high", ParamValue::Float(0.9)),
                ],
                vec![("in", "n1")],
            ),
        ],
        &["n1", "n2"],
    );
    let out = evaluate_outputs(&g, Some(128)).expect("eval");
    for (a, b) in out["n1"].data().iter().zip(out["n2"].data()) {
        assert!((a - b).abs() <= 1e-4 * 1000.0, "{a} vs {b}");
    }
    assert_eq!(out["n1"].min_max(), Some((100.0, 900.0)));
}

#[test]
fn lerp_with_a_zero_or_one_mask_picks_exactly_a_or_b() {
    for (mask, pick) in [(0.0, "a"), (1.0, "b")] {
        let g = graph(
            &[
                noise(),
                ("other", "worley", vec![], vec![]),
                (
                    "m",
                    "radial_gradient",
                    vec![("radius", ParamValue::Float(100.0))],
                    vec![],
                ),
                (
                    "mask",
                    "levels",
                    vec![
                        ("out_low", ParamValue::Float(mask)),
                        ("out_high", ParamValue::Float(mask)),
                    ],
                    vec![("in", "m")],
                ),
                ("mm", "to_mask", vec![], vec![("in", "mask")]),
                (
                    "lerp",
                    "lerp",
                    vec![],
                    vec![("a", "src"), ("b", "other"), ("mask", "mm")],
                ),
            ],
            &["src", "other", "mm", "lerp"],
        );
        let out = evaluate_outputs(&g, Some(64)).expect("eval");
        assert!(out["mm"].data().iter().all(|&m| m == mask as f32));
        let want = if pick == "a" {
            &out["src"]
        } else {
            &out["other"]
        };
        assert_eq!(out["lerp"].data(), want.data(), "mask {mask}");
    }
}

#[test]
fn warps_with_zero_amplitude_are_the_identity() {
    let g = graph(
        &[
            noise(),
            (
                "perturb",
                "perturb",
                vec![("magnitude", ParamValue::Float(0.0))],
                vec![("in", "src")],
            ),
            (
                "domain",
                "domain_warp",
                vec![("amplitude_m", ParamValue::Float(0.0))],
                vec![("in", "src")],
            ),
            (
                "slope",
                "slope_warp",
                vec![("amount_m", ParamValue::Float(0.0))],
                vec![("in", "src")],
            ),
        ],
        &["src", "perturb", "domain", "slope"],
    );
    let out = evaluate_outputs(&g, Some(128)).expect("eval");
    for w in ["perturb", "domain", "slope"] {
        assert_eq!(out[w].data(), out["src"].data(), "{w}");
    }
    // And a non-zero warp does move things.
    let mut g2 = g.clone();
    g2.set_param("domain", "amplitude_m", ParamValue::Float(100.0))
        .expect("set");
    assert_ne!(
        evaluate_outputs(&g2, Some(128)).expect("eval")["domain"].data(),
        out["src"].data()
    );
}

#[test]
fn combine_modes_follow_their_formulas() {
    // Two flat terrains at 20% and 60% of the range: every mode is a known number.
    let flat = |id: &'static str, h: f64| {
        (
            id,
            "constant",
            vec![("height_m", ParamValue::Float(h))],
            vec![],
        )
    };
    let modes: [(usize, f32); 10] = [
        (0, 0.8),
        (1, -0.4),
        (2, 0.12),
        (3, 1.0 / 3.0),
        (4, 0.2),
        (5, 0.6),
        (6, 0.4),
        (7, 0.68),
        (8, 0.24),
        (9, 0.2f32.powf(0.6)),
    ];
    for (mode, want) in modes {
        let g = graph(
            &[
                flat("a", 200.0),
                flat("b", 600.0),
                (
                    "c",
                    "combine",
                    vec![("mode", ParamValue::Choice(mode))],
                    vec![("a", "a"), ("b", "b")],
                ),
            ],
            &["c"],
        );
        let out = evaluate_outputs(&g, Some(8)).expect("eval");
        let got = out["c"].data()[0] / 1000.0;
        assert!((got - want).abs() < 1e-5, "mode {mode}: {got} vs {want}");
    }
}
