//! Water benches: the water nodes at 1024² on the default pool, and flow routing against
//! fastscapelib 0.3.0 in the same run.
//!
//! Run: `cargo bench -p orogen --bench water` (set `OROGEN_SKIP_PEERS=1` to leave out the
//! fastscapelib run, which creates a virtualenv with pip on first use).
//!
//! * `water_1024`: `flow_accumulation` (d8 and mfd), `lakes`, `rivers`, `sea`, `snow` and
//!   `sky_view` (radius 300 m) through the node API on one noise terrain.
//! * After the criterion group, whole runs: the priority flood + d8 routing + drainage area
//!   (what `flow_accumulation` with d8 does before its masks) against fastscapelib's
//!   `FlowGraph` with `SingleFlowRouter` + `PFloodSinkResolver` and `accumulate` on the same
//!   terrain, three runs of each, best and median compared.

use criterion::Criterion;
use orogen::node::ParamValue;
use orogen::nodes::water::flow_accumulation::Routes;
use orogen::nodes::water::priority_flood;
use orogen::World;
use std::hint::black_box;
use std::time::Instant;

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
    let runs: [Case; 7] = [
        (
            "flow_accumulation d8",
            "flow_accumulation",
            vec![("routing", ParamValue::Choice(1))],
        ),
        ("flow_accumulation mfd", "flow_accumulation", vec![]),
        ("lakes", "lakes", vec![]),
        ("rivers", "rivers", vec![]),
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

fn whole_runs(peers: bool) {
    let input = common::noise_field(N, WORLD, &[("feature_size_m", ParamValue::Float(3000.0))]);
    let cell = WORLD.cell_size_m(N);
    println!(
        "\n== flow routing {N}² ({} threads) ==",
        rayon::current_num_threads()
    );
    let mut ours: Vec<f64> = (0..RUNS)
        .map(|_| {
            let t = Instant::now();
            let flood = priority_flood(input.data(), N, N);
            let area = Routes::new(&flood, N, N, None).accumulate(cell * cell, None);
            black_box(area);
            t.elapsed().as_secs_f64()
        })
        .collect();
    ours.sort_by(f64::total_cmp);
    println!(
        "priority flood + d8 + drainage area: orogen {} s",
        common::seconds(&ours, 3)
    );
    if !peers {
        return;
    }
    let path = std::env::temp_dir().join("orogen-water-bench.f32");
    let bytes: Vec<u8> = input.data().iter().flat_map(|v| v.to_le_bytes()).collect();
    if let Err(e) = std::fs::write(&path, bytes) {
        println!("fastscapelib peer not run: {e}");
        return;
    }
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/peers/fastscape.sh");
    common::compare_with_peer(
        "fastscapelib",
        std::process::Command::new(script)
            .env("OROGEN_PEER", "fastscape_flow.py")
            .arg(&path)
            .args([N.to_string(), cell.to_string(), RUNS.to_string()]),
        &ours,
    );
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    nodes(&mut c);
    c.final_summary();
    whole_runs(std::env::var_os("OROGEN_SKIP_PEERS").is_none());
}
