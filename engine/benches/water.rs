//! Water benches: the water nodes at 1024² on the default pool, and flow routing against
//! fastscapelib 0.3.0 in the same run.
//!
//! Run: `cargo bench -p orogen --features bench --bench water` (set `OROGEN_SKIP_PEERS=1` to leave out the
//! fastscapelib run, which creates a virtualenv with pip on first use).
//!
//! * `water_1024`: `flow_accumulation` (d8 and mfd), `lakes`, `rivers`, `sea`, `snow` and
//!   `sky_view` (radius 300 m) through the node API on one noise terrain.
//! * After the criterion group, whole runs at 1024² and 4096²: the priority flood + d8
//!   routing + drainage area (what `flow_accumulation` with d8 does before its masks) against
//!   fastscapelib's `FlowGraph` with `SingleFlowRouter` + `PFloodSinkResolver` and
//!   `accumulate` on the same terrain, three runs of each, best and median compared.
//! * With them, depression filling (the priority flood under `lakes`) against richdem 0.3.4's
//!   `PriorityFlood_Barnes2014` and `PriorityFlood_Zhou2016` (C++, built from its PyPI source
//!   by `benches/peers/richdem.sh`), three runs each, and the filled surfaces compared.
//! * Then colour, occlusion and water at 4096²: a graph noise → colorize (by height) →
//!   color_blend (mix with a solid colour by a mask), sky_view, lakes and flow_accumulation
//!   (mfd), evaluated three times; each node's own time from the evaluation's timings.

use criterion::Criterion;
use orogen::node::ParamValue;
use orogen::nodes::water::flow_accumulation::Routes;
use orogen::nodes::water::priority_flood;
use orogen::World;
use std::hint::black_box;

mod common;

const N: usize = 1024;
const RUNS: usize = 3;
const WORLD: World = World {
    size_m: 8192.0,
    height_min_m: 0.0,
    height_max_m: 1000.0,
};

/// A bench case: its name, the node type and the parameters set.
type Case = (&'static str, &'static str, Vec<(&'static str, ParamValue)>);

fn nodes(c: &mut Criterion) {
    let input = common::noise_field(N, WORLD, &[("feature_size_m", ParamValue::Float(3000.0))]);
    let mut g = c.benchmark_group("water_1024");
    g.sample_size(10);
    let runs: [Case; 8] = [
        (
            "flow_accumulation d8",
            "flow_accumulation",
            vec![("routing", ParamValue::Choice(1))],
        ),
        ("flow_accumulation mfd", "flow_accumulation", vec![]),
        ("lakes", "lakes", vec![]),
        ("rivers", "rivers", vec![]),
        (
            "rivers over the grid",
            "rivers",
            vec![("scale_m", ParamValue::Float(0.0))],
        ),
        ("sea", "sea", vec![("level_m", ParamValue::Float(450.0))]),
        (
            "snow",
            "snow",
            vec![("snow_line_m", ParamValue::Float(500.0))],
        ),
        ("sky_view 300 m", "sky_view", vec![]),
    ];
    for (name, ty, params) in runs {
        let run = common::node_runner(ty, &params, N, WORLD);
        g.bench_function(name, |b| b.iter(|| black_box(run(&input))));
    }
    g.finish();
}

fn whole_runs(n: usize, peers: bool) {
    let input = common::noise_field(n, WORLD, &[("feature_size_m", ParamValue::Float(3000.0))]);
    let cell = WORLD.cell_size_m(n);
    println!(
        "\n== flow routing {n}² ({} threads) ==",
        rayon::current_num_threads()
    );
    let ours = common::timed_runs(RUNS, || {
        let flood = priority_flood(input.data(), n, n);
        black_box(Routes::new(&flood, n, n, None).accumulate(cell * cell, None));
    });
    println!(
        "priority flood + d8 + drainage area: orogen {} s",
        common::seconds(&ours, 3)
    );
    if !peers {
        return;
    }
    // The terrain for the peers: f32 little-endian, row-major.
    let path = std::env::temp_dir().join("orogen-water-bench.f32");
    let bytes: Vec<u8> = input.data().iter().flat_map(|v| v.to_le_bytes()).collect();
    if let Err(e) = std::fs::write(&path, bytes) {
        println!("peers not run: {e}");
        return;
    }
    fill_against_richdem(input.data(), n, &path);
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/peers/fastscape.sh");
    common::compare_with_peer(
        "fastscapelib",
        std::process::Command::new(script)
            .env("OROGEN_PEER", "fastscape_flow.py")
            .arg(&path)
            .args([n.to_string(), cell.to_string(), RUNS.to_string()]),
        &ours,
    );
}

/// Depression filling — the priority flood `lakes` is built on — against richdem 0.3.4's
/// `PriorityFlood_Barnes2014` (the same algorithm, Barnes' reference code) and
/// `PriorityFlood_Zhou2016`, three runs each in the same run, and the filled surfaces compared
/// cell for cell. Ours (Barnes 2016's strips, one per thread) also gives every cell its
/// single-direction receiver, flats routed to their outlets (what the routing needs);
/// richdem's only fill, on one thread.
fn fill_against_richdem(z: &[f32], n: usize, raw: &std::path::Path) {
    let ours = common::timed_runs(RUNS, || {
        black_box(priority_flood(z, n, n));
    });
    println!(
        "depression filling {n}²: orogen priority_flood {} s",
        common::seconds(&ours, 3)
    );
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/peers/richdem.sh");
    let filled = std::env::temp_dir().join("orogen-water-bench-filled.f32");
    for algorithm in ["barnes2014", "zhou2016"] {
        let mut cmd = std::process::Command::new(script);
        cmd.arg(raw)
            .args([n.to_string(), RUNS.to_string(), algorithm.to_string()]);
        if algorithm == "barnes2014" {
            cmd.arg(&filled);
        }
        common::compare_with_peer(&format!("richdem {algorithm}"), &mut cmd, &ours);
    }
    // The same water surface: richdem's filled heights against ours, cell for cell.
    if let Ok(bytes) = std::fs::read(&filled) {
        let level = priority_flood(z, n, n).level;
        let theirs = bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        let differ = level.iter().zip(theirs).filter(|(a, b)| **a != *b).count();
        println!(
            "filled surfaces: {differ} of {} cells differ from richdem's",
            n * n
        );
    }
}

/// Colour, occlusion and water nodes at 4096²: each node's own time over three evaluations.
fn colour_and_occlusion() {
    const BIG: usize = 4096;
    let text = r#"{ "format": "orogen-graph", "version": 1, "name": "bench", "seed": 1,
      "world": { "size_m": 8192.0, "height_min_m": 0.0, "height_max_m": 1000.0 },
      "resolution": 4096,
      "nodes": [
        { "id": "terrain", "type": "noise", "params": { "feature_size_m": 3000.0 } },
        { "id": "high", "type": "to_mask", "inputs": { "in": "terrain.out" }, "params": { "low": 0.5, "high": 0.7 } },
        { "id": "colorize", "type": "colorize", "inputs": { "height": "terrain.out" } },
        { "id": "snow", "type": "solid_color" },
        { "id": "color_blend", "type": "color_blend", "inputs": { "a": "colorize.out", "b": "snow.out", "mask": "high.out" } },
        { "id": "sky_view", "type": "sky_view", "inputs": { "in": "terrain.out" } },
        { "id": "lakes", "type": "lakes", "inputs": { "in": "terrain.out" } },
        { "id": "flow_accumulation", "type": "flow_accumulation", "inputs": { "in": "terrain.out" } }
      ],
      "outputs": { "albedo": "color_blend.out", "sky": "sky_view.out", "lakes": "lakes.out", "flow": "flow_accumulation.flow" } }"#;
    let g = orogen::document::graph_file::load_str(text, "bench.json").expect("bench graph");
    println!(
        "\n== colour, occlusion and water nodes {BIG}² ({} threads) ==",
        rayon::current_num_threads()
    );
    let mut times = std::collections::BTreeMap::<String, Vec<f64>>::new();
    for _ in 0..RUNS {
        let r = orogen::eval::Evaluator::new()
            .evaluate(&g, &orogen::eval::EvalOptions::default())
            .expect("evaluate");
        for (id, d) in r.timings {
            times.entry(id).or_default().push(d.as_secs_f64());
        }
    }
    for id in [
        "colorize",
        "color_blend",
        "sky_view",
        "lakes",
        "flow_accumulation",
    ] {
        let mut t = times.remove(id).unwrap_or_default();
        t.sort_by(f64::total_cmp);
        println!("{id} {BIG}²: {} s", common::seconds(&t, 3));
    }
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    nodes(&mut c);
    c.final_summary();
    let peers = std::env::var_os("OROGEN_SKIP_PEERS").is_none();
    whole_runs(N, peers);
    whole_runs(4096, peers);
    colour_and_occlusion();
}
