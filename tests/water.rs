//! Water tests: flow accumulation against a reference computed from its definition, lakes
//! against an independent priority flood, the sea's masks, golden images, and preview–build
//! parity.

use crate::common;

use orogen::field::Field;
use orogen::node::{splitmix64, CancelToken, EvalCtx, ParamValue, Registry, Window};
use orogen::nodes::erosion::flow::D8;
use orogen::nodes::water::flow_accumulation::Routes;
use orogen::nodes::water::{is_edge, priority_flood, NONE};
use orogen::World;
use std::sync::Arc;

/// A rough random terrain of `w × h` cells: value noise at two scales plus white noise, with
/// plenty of pits, flats after filling, and ties.
fn terrain(w: usize, h: usize, seed: u64) -> Vec<f32> {
    let r = |i: u64| (splitmix64(seed ^ splitmix64(i)) % 10_000) as f32 / 10_000.0;
    (0..w * h)
        .map(|i| {
            let (x, y) = (i % w, i / w);
            let coarse = r(((x / 6) * 1000 + y / 6) as u64 + 1_000_000);
            // Quantised: equal heights (ties and flats) on purpose.
            (coarse * 40.0 + (r(i as u64) * 8.0).floor()).round()
        })
        .collect()
}

/// Runs node type `id` on `field` (its first input) over `world`, with `params` set over
/// the defaults; its outputs in port order, or its error.
fn try_run(
    id: &str,
    field: &Field,
    world: World,
    params: &[(&str, ParamValue)],
) -> Result<Vec<Field>, orogen::node::NodeError> {
    let def = Registry::builtin().get(id).expect("node type");
    let mut values = def.default_values();
    for (name, v) in params {
        values[def.param_index(name).expect("param")] = v.clone();
    }
    let mut inputs = vec![None; def.spec.inputs.len()];
    inputs[0] = Some(Arc::new(field.clone()));
    let n = field.width();
    let cancel = CancelToken::new();
    let progress = |_: f32| {};
    let ctx = EvalCtx {
        resolution: n,
        window: Window::full(n),
        world,
        graph_seed: 1,
        node_id: "test",
        base_dir: None,
        allow_outside: &[],
        cancel: &cancel,
        progress: &progress,
        upstream: None,
        arrays: None,
    };
    def.eval(&ctx, &inputs, &values)
}

/// [`try_run`] that must succeed.
fn run(id: &str, field: &Field, world: World, params: &[(&str, ParamValue)]) -> Vec<Field> {
    try_run(id, field, world, params).expect("eval")
}

/// One cell's drainage area by recursion over its senders (see [`area_by_definition`]).
fn visit(i: usize, s: &[Vec<(usize, f64)>], memo: &mut [Option<f64>], a0: f64) -> f64 {
    if let Some(v) = memo[i] {
        return v;
    }
    let mut a = a0;
    for &(j, share) in &s[i] {
        a += visit(j, s, memo, a0) * share;
    }
    memo[i] = Some(a);
    a
}

/// Drainage area by its definition: a cell's own area plus, for every cell that sends it a
/// share, that share of the sender's drainage area — computed by recursion with memoisation
/// over the senders (no flood order involved).
fn area_by_definition(routes: &Routes, n: usize, cell_area: f64) -> Vec<f64> {
    let mut senders: Vec<Vec<(usize, f64)>> = vec![Vec::new(); n];
    for i in 0..n {
        let t = routes.targets(i);
        for k in 0..t.len {
            senders[t.cells[k] as usize].push((i, t.shares[k]));
        }
    }
    let mut memo: Vec<Option<f64>> = vec![None; n];
    (0..n)
        .map(|i| visit(i, &senders, &mut memo, cell_area))
        .collect()
}

/// Filled levels equal an independent priority flood (Dijkstra-style relaxation, not the
/// engine's queue-and-pit algorithm), and every cell's routing is what the definition says:
/// the steepest lower neighbour for d8, every lower neighbour by slope^p for mfd, towards the
/// outlet on a flat; following the routes from any cell leaves the map.
#[test]
fn routing_follows_its_definition_on_random_terrains() {
    for (seed, w, h) in [(1u64, 37usize, 29usize), (2, 64, 64), (3, 13, 51)] {
        let z = terrain(w, h, seed);
        let flood = priority_flood(&z, w, h);
        assert_eq!(flood.level, common::priority_flood(&z, w, h), "seed {seed}");
        let level = &flood.level;
        for exponent in [None, Some(1.1)] {
            let routes = Routes::new(&flood, w, h, exponent);
            for i in 0..w * h {
                let (x, y) = ((i % w) as i64, (i / w) as i64);
                let lower: Vec<(usize, f64)> = D8
                    .iter()
                    .filter_map(|&(dx, dy)| {
                        let (nx, ny) = (x + i64::from(dx), y + i64::from(dy));
                        if nx < 0 || ny < 0 || nx >= w as i64 || ny >= h as i64 {
                            return None;
                        }
                        let j = (ny * w as i64 + nx) as usize;
                        let d = if dx != 0 && dy != 0 { 2f64.sqrt() } else { 1.0 };
                        let s = (f64::from(level[i]) - f64::from(level[j])) / d;
                        (s > 0.0).then_some((j, s))
                    })
                    .collect();
                let t = routes.targets(i);
                let got: Vec<(usize, f64)> = (0..t.len)
                    .map(|k| (t.cells[k] as usize, t.shares[k]))
                    .collect();
                if lower.is_empty() {
                    let p = flood.receiver[i];
                    if p == NONE {
                        assert!(got.is_empty(), "an outlet sends nothing");
                    } else {
                        assert_eq!(got, vec![(p as usize, 1.0)], "flat cell {i}");
                        assert_eq!(level[p as usize], level[i]);
                    }
                    continue;
                }
                match exponent {
                    None => {
                        let best = lower.iter().fold((usize::MAX, 0.0f64), |b, &(j, s)| {
                            if s > b.1 {
                                (j, s)
                            } else {
                                b
                            }
                        });
                        assert_eq!(got, vec![(best.0, 1.0)], "d8 cell {i}");
                    }
                    Some(p) => {
                        let total: f64 = lower.iter().map(|&(_, s)| s.powf(p)).sum();
                        assert_eq!(got.len(), lower.len(), "mfd cell {i}");
                        for (&(j, share), &(lj, s)) in got.iter().zip(&lower) {
                            assert_eq!(j, lj);
                            assert!((share - s.powf(p) / total).abs() < 1e-12);
                        }
                    }
                }
            }
            // The single-direction receivers (computed without `targets`) agree with it.
            if exponent.is_none() {
                let r = routes.receivers();
                for (i, &ri) in r.iter().enumerate() {
                    let t = routes.targets(i);
                    assert_eq!(ri, if t.len == 0 { NONE } else { t.cells[0] }, "cell {i}");
                }
            }
            // Every route leaves the map: no cycles, no dead ends inside.
            for start in 0..w * h {
                let mut c = start;
                let mut steps = 0;
                loop {
                    let t = routes.targets(c);
                    if t.len == 0 {
                        assert!(is_edge(c, w, h), "dead end at {c}");
                        break;
                    }
                    c = t.cells[0] as usize;
                    steps += 1;
                    assert!(steps <= w * h, "cycle from {start}");
                }
            }
        }
    }
}

/// The accumulated drainage area equals the definition computed by recursion: exactly for
/// d8 (sums of whole cells), within 1e-9 relative for mfd; and all of it leaves the map: the
/// outlets receive the whole area.
#[test]
fn flow_accumulation_equals_its_definition_and_conserves_area() {
    for (seed, w, h) in [(4u64, 48usize, 40usize), (5, 96, 96)] {
        let z = terrain(w, h, seed);
        let flood = priority_flood(&z, w, h);
        let cell_area = 12.5 * 12.5;
        for exponent in [None, Some(1.1), Some(4.0)] {
            let routes = Routes::new(&flood, w, h, exponent);
            let fast = routes.accumulate(cell_area, None);
            let reference = area_by_definition(&routes, w * h, cell_area);
            for (i, (a, b)) in fast.iter().zip(&reference).enumerate() {
                match exponent {
                    None => assert_eq!(a, b, "d8 cell {i}"),
                    Some(_) => assert!((a - b).abs() <= 1e-9 * b, "mfd cell {i}: {a} vs {b}"),
                }
            }
            let out: f64 = (0..w * h)
                .filter(|&i| routes.targets(i).len == 0)
                .map(|i| fast[i])
                .sum();
            let total = cell_area * (w * h) as f64;
            assert!(
                (out - total).abs() <= 1e-9 * total,
                "{exponent:?}: {out} leaves, {total} fell"
            );
        }
    }
}

/// On a plane falling to the east, d8 water runs straight east: the drainage area at column
/// x is x + 1 cells, and the node's mask is ln(A / a0) / ln(world area / a0). The flow map
/// points east (dir_x = 1, dir_y = 0.5); the wetness index is ln(a / tan β) in closed form.
#[test]
fn a_tilted_plane_drains_along_its_rows() {
    let n = 64;
    let world = World {
        size_m: 640.0,
        height_min_m: 0.0,
        height_max_m: 100.0,
    };
    let plane =
        Field::from_vec(n, n, (0..n * n).map(|i| 90.0 - (i % n) as f32).collect()).expect("size");
    let out = run(
        "flow_accumulation",
        &plane,
        world,
        &[
            ("routing", ParamValue::Choice(1)),
            ("min_area_m2", ParamValue::Float(50.0)),
        ],
    );
    let (flow, dir_x, dir_y, wetness, area) = (&out[0], &out[1], &out[2], &out[3], &out[4]);
    let scale = (640.0f64 * 640.0 / 50.0).ln();
    // The raw drainage area in m², and the documented inversion of the mask through
    // scalar_to_mask (log from min_area_m2 to the world's area) gives the mask back.
    let remapped = &run(
        "scalar_to_mask",
        area,
        world,
        &[
            ("low", ParamValue::Float(50.0)),
            ("high", ParamValue::Float(640.0 * 640.0)),
            ("scale", ParamValue::Choice(1)),
        ],
    )[0];
    for y in 1..n - 1 {
        for x in 0..n {
            let i = y * n + x;
            assert_eq!(area.data()[i], 100.0 * (x + 1) as f32, "area ({x}, {y})");
            let (a, b) = (remapped.data()[i], flow.data()[i]);
            assert!(
                (a - b).abs() < 1e-6,
                "scalar_to_mask ({x}, {y}): {a} vs {b}"
            );
        }
    }
    for y in 1..n - 1 {
        for x in 0..n {
            let a = 100.0 * (x + 1) as f64;
            let want = ((a / 50.0).ln() / scale).clamp(0.0, 1.0) as f32;
            let got = flow.data()[y * n + x];
            assert!((got - want).abs() < 1e-6, "({x}, {y}): {got} vs {want}");
            // Wetness: ln(a / tan β) with a = A / 10 m and tan β = 1 m / 10 m, mapped from the
            // defaults 6 → 0 to 16 → 1 (central differences: exact inside the map).
            if x > 0 && x + 1 < n {
                let twi = (a / 10.0 / 0.1).ln();
                let want = ((twi - 6.0) / 10.0).clamp(0.0, 1.0) as f32;
                let got = wetness.data()[y * n + x];
                assert!(
                    (got - want).abs() < 1e-5,
                    "wetness ({x}, {y}): {got} vs {want}"
                );
            }
            if x + 1 < n {
                assert_eq!(dir_x.data()[y * n + x], 1.0);
                assert_eq!(dir_y.data()[y * n + x], 0.5);
            }
        }
    }
}

/// `scalar_to_mask`: linear and log maps onto [0, 1], a step when low == high, and a log scale
/// over values that are not all positive refused with the parameter named.
#[test]
fn scalar_to_mask_maps_a_quantity_onto_a_mask() {
    let world = World {
        size_m: 100.0,
        height_min_m: 0.0,
        height_max_m: 1.0,
    };
    let values = Field::from_vec(4, 1, vec![-5.0, 10.0, 1_000.0, 1.0e5]).expect("size");
    let map = |low: f64, high: f64, log: bool| {
        run(
            "scalar_to_mask",
            &values,
            world,
            &[
                ("low", ParamValue::Float(low)),
                ("high", ParamValue::Float(high)),
                ("scale", ParamValue::Choice(usize::from(log))),
            ],
        )[0]
        .data()
        .to_vec()
    };
    assert_eq!(map(0.0, 1_000.0, false), [0.0, 0.01, 1.0, 1.0]);
    let log = map(10.0, 1.0e5, true);
    assert_eq!(log[0], 0.0);
    assert_eq!(log[1], 0.0);
    assert!((log[2] - 0.5).abs() < 1e-6, "{log:?}");
    assert_eq!(log[3], 1.0);
    assert_eq!(map(1_000.0, 1_000.0, false), [0.0, 0.0, 1.0, 1.0]);
    let err = try_run(
        "scalar_to_mask",
        &values,
        world,
        &[("scale", ParamValue::Choice(1))],
    )
    .expect_err("log from 0");
    assert_eq!(
        err.to_string(),
        "parameter \"low\": scale log needs low and high above 0 (got low 0, high 1)"
    );
}

/// With no minimum depth or area, the lakes' water surface is exactly a priority flood
/// (the independent reference), has no depression left inside (flooding it again changes
/// nothing), and lies on or above the terrain; depth and mask agree with it.
#[test]
fn lakes_fill_exactly_what_a_priority_flood_fills() {
    let world = World {
        size_m: 1000.0,
        height_min_m: 0.0,
        height_max_m: 100.0,
    };
    for (seed, n) in [(6u64, 40usize), (7, 97)] {
        let z = terrain(n, n, seed);
        let f = Field::from_vec(n, n, z.clone()).expect("size");
        let out = run(
            "lakes",
            &f,
            world,
            &[
                ("min_depth_m", ParamValue::Float(0.0)),
                ("min_area_m2", ParamValue::Float(0.0)),
                ("depth_range_m", ParamValue::Float(10.0)),
            ],
        );
        let (surface, depth, mask) = (out[0].data(), out[1].data(), out[2].data());
        assert_eq!(surface, common::priority_flood(&z, n, n).as_slice());
        assert_eq!(common::priority_flood(surface, n, n), surface);
        for i in 0..n * n {
            assert!(surface[i] >= z[i]);
            let d = surface[i] - z[i];
            assert!((depth[i] - (d / 10.0).min(1.0)).abs() < 1e-6);
            assert_eq!(mask[i], f32::from(u8::from(d > 0.0)));
        }
        assert!(mask.contains(&1.0), "the test terrain has lakes");
    }
}

/// A round pit 6 m deep and a small one 0.4 m deep in a plane: the pit fills to its rim
/// (the plane's height), the shallow one stays dry with min_depth_m 0.5, and the big one
/// too once min_area_m2 exceeds its area.
#[test]
fn lakes_below_the_minimum_depth_or_area_stay_dry() {
    let n = 64;
    let world = World {
        size_m: 640.0,
        height_min_m: 0.0,
        height_max_m: 100.0,
    };
    let z: Vec<f32> = (0..n * n)
        .map(|i| {
            let (x, y) = ((i % n) as f32, (i / n) as f32);
            let big = ((x - 20.0).powi(2) + (y - 30.0).powi(2)).sqrt();
            let small = ((x - 48.0).powi(2) + (y - 30.0).powi(2)).sqrt();
            if big < 8.0 {
                44.0 + big * 0.75
            } else if small < 3.0 {
                49.6
            } else {
                50.0
            }
        })
        .collect();
    let f = Field::from_vec(n, n, z.clone()).expect("size");
    let lakes = |depth: f64, area: f64| {
        run(
            "lakes",
            &f,
            world,
            &[
                ("min_depth_m", ParamValue::Float(depth)),
                ("min_area_m2", ParamValue::Float(area)),
            ],
        )
    };
    let at = |x: usize, y: usize| y * n + x;
    let out = lakes(0.5, 0.0);
    assert_eq!(out[0].data()[at(20, 30)], 50.0, "the pit fills to its rim");
    assert_eq!(out[2].data()[at(20, 30)], 1.0);
    assert_eq!(out[0].data()[at(48, 30)], 49.6, "the shallow pit stays dry");
    assert_eq!(out[2].data()[at(48, 30)], 0.0);
    // The big pit: about π·8² cells of 10 m × 10 m ≈ 20 000 m².
    let out = lakes(0.5, 25_000.0);
    assert_eq!(out[0].data()[at(20, 30)], z[at(20, 30)]);
    assert!(out[2].data().iter().all(|&m| m == 0.0));
}

/// The sea is what lies below its level and reaches the map edge; an inland basin below the
/// level is sea only with `connected` off. The shore is 0 on the sea and beyond shore_width_m,
/// falls linearly with distance from the waterline (placed within the coast cells, as the
/// sea's coverage is) over the land share of each cell, and keeps its width in metres at
/// every resolution; beaches lie on the shore, low and gentle.
#[test]
fn sea_shore_and_beach_masks() {
    let world = World {
        size_m: 2000.0,
        height_min_m: -50.0,
        height_max_m: 200.0,
    };
    // A slope rising from the west edge (below sea level there) with an inland basin.
    let field = |n: usize| {
        let c = 2000.0 / n as f32;
        let z: Vec<f32> = (0..n * n)
            .map(|i| {
                let (x, y) = ((i % n) as f32 * c, (i / n) as f32 * c);
                let basin = ((x - 1500.0).powi(2) + (y - 1000.0).powi(2)).sqrt();
                if basin < 150.0 {
                    -20.0
                } else {
                    -30.0 + x * 0.05
                }
            })
            .collect();
        Field::from_vec(n, n, z).expect("size")
    };
    let params = |connected: bool| {
        vec![
            ("level_m", ParamValue::Float(0.0)),
            ("connected", ParamValue::Bool(connected)),
            ("shore_width_m", ParamValue::Float(200.0)),
            ("beach_height_m", ParamValue::Float(5.0)),
            ("beach_slope_deg", ParamValue::Float(10.0)),
        ]
    };
    let n = 128;
    let f = field(n);
    let out = run("sea", &f, world, &params(true));
    let (surface, sea, shore, beach) = (out[0].data(), out[1].data(), out[2].data(), out[3].data());
    let cell = 2000.0 / n as f32;
    let basin = (n * 3 / 4) + (n / 2) * n;
    for i in 0..n * n {
        let x = (i % n) as f32 * cell;
        let below = f.data()[i] < 0.0;
        let west = x < 600.0;
        let is_sea = below && west;
        // Antialiased along the coast (x = 600 m on this plane): the share of the cell west of
        // the waterline, exactly; 0 or 1 elsewhere.
        let (col, row) = (i % n, i / n);
        let coastal = (col > 0 && col + 1 < n)
            && [col - 1, col + 1]
                .iter()
                .any(|&c| (f.data()[row * n + c] < 0.0 && (c as f32 * cell) < 600.0) != is_sea);
        let want = if coastal {
            (0.5 - (x - 600.0) / cell).clamp(0.0, 1.0)
        } else {
            f32::from(u8::from(is_sea))
        };
        assert!(
            (sea[i] - want).abs() < 1e-4,
            "cell {i}: sea {} vs {want}",
            sea[i]
        );
        assert_eq!(surface[i], if is_sea { 0.0 } else { f.data()[i] });
        // The shore over the land share of the cell, from the waterline itself (x = 600 m,
        // placed within the coast cells): exact on a plane.
        let band = (1.0 - (x - 600.0).max(0.0) / 200.0).clamp(0.0, 1.0);
        let shore_want = (1.0 - want) * band;
        assert!(
            (shore[i] - shore_want).abs() < 1e-4,
            "cell {i} (x = {x} m): shore {} vs {shore_want}",
            shore[i]
        );
        assert!((0.0..=1.0).contains(&shore[i]) && (0.0..=1.0).contains(&beach[i]));
        if is_sea && !coastal {
            assert_eq!(shore[i], 0.0);
        }
        // The coast is at x = 600 m; 200 m inland the shore is gone.
        if x > 600.0 + 200.0 + cell {
            assert_eq!(shore[i], 0.0);
        }
        assert!(beach[i] <= shore[i] + 1e-6);
        // Beach: 5 m above the sea (+ half the fade) is x = 700 m (+ 12.5 m).
        if x > 600.0 + 100.0 + 13.0 + cell {
            assert_eq!(beach[i], 0.0, "too high for a beach at x = {x}");
        }
    }
    assert_eq!(sea[basin], 0.0, "the inland basin is not sea");
    // Along a row, the shore falls with the distance from the coast.
    let row = &shore[10 * n..11 * n];
    for x in 1..n {
        if row[x - 1] > 0.0 && sea[10 * n + x - 1] == 0.0 {
            assert!(row[x] <= row[x - 1]);
        }
    }
    let open = run("sea", &f, world, &params(false));
    assert_eq!(
        open[1].data()[basin],
        1.0,
        "not connected: the basin is sea too"
    );

    // The shore band keeps its width in metres: its area (Σ shore × cell area) at 64² and
    // 256² agrees within 5%.
    let area = |n: usize| {
        let out = run("sea", &field(n), world, &params(true));
        let c = f64::from(2000.0 / n as f32);
        out[2].data().iter().map(|&v| f64::from(v)).sum::<f64>() * c * c
    };
    let (coarse, fine) = (area(64), area(256));
    assert!(
        (coarse / fine - 1.0).abs() < 0.05,
        "shore area {coarse} m² at 64², {fine} m² at 256²"
    );
}

/// Each water node's outputs in tests/data/water.json at 256² match their golden PNGs in
/// tests/golden/water/.
#[test]
fn golden_images_of_the_water_nodes() {
    common::check_goldens(&common::load("tests/data/water.json"), "water");
}

/// `orogen parity` 256² → 1024² on tests/data/water.json: every checked row within its
/// tolerance (lake and sea surfaces within 1.5% of the height range).
#[test]
fn water_previews_predict_builds() {
    let path = common::repo().join("tests/data/water.json");
    let g = common::load("tests/data/water.json");
    let rows = orogen::parity::compare(&g, path.parent(), 256, 1024, &[]).expect("parity");
    let checked: Vec<_> = rows.iter().filter(|r| r.tolerance.is_some()).collect();
    assert!(checked.iter().any(|r| r.kind == "lakes"));
    assert!(checked.iter().any(|r| r.kind == "sea"));
    for r in &rows {
        assert!(r.ok(), "{} {}.{}: {r:?}", r.kind, r.node, r.output);
        // Every node with inputs also gets its own share, run on the build's inputs.
        assert_eq!(
            r.own.is_some(),
            r.kind != "noise",
            "{}.{}",
            r.node,
            r.output
        );
    }
    // A mask computed from a per-cell drainage area is grid-defined like the area itself.
    let basins = rows
        .iter()
        .find(|r| r.node == "large_basins")
        .expect("large_basins row");
    assert_eq!(basins.tolerance, None);
    assert_eq!(basins.verdict(), orogen::parity::Verdict::Info);
}

/// The test graph's terrain (`hills`: smooth noise with depressions) at `n²`.
fn hills(n: usize) -> Field {
    let mut g = common::load("tests/data/water.json");
    g.outputs = [(
        "hills".to_string(),
        orogen::graph::PortRef::new("hills", "out"),
    )]
    .into();
    orogen::build::evaluate_outputs(&g, Some(n)).expect("eval")["hills"].clone()
}

/// Rivers run downhill to the map edge: from every river cell the routes reach the edge, the
/// water surface never rises along them, and the channel bed (surface − depth) never rises
/// from one river cell to the next. The carve only lowers the terrain, reaches the bed at every
/// river cell, and leaves the terrain untouched beyond the banks. The network covers the same
/// area (Σ coverage × cell area) at 256² and 1024², within 15%. All of it with the water routed
/// over the grid's own cells (`scale_m` 0) and over the terrain smoothed by default, where the
/// surface is the filled level lowered to the lowest on the way (computed here by relaxation).
#[test]
fn rivers_run_downhill_to_the_edge_and_carve_their_beds() {
    for scale_m in [0.0, -1.0] {
        rivers_run_downhill_over(scale_m);
    }
}

fn rivers_run_downhill_over(scale_m: f64) {
    let world = World {
        size_m: 4000.0,
        height_min_m: -60.0,
        height_max_m: 400.0,
    };
    let params = [
        ("threshold_km2", ParamValue::Float(0.2)),
        ("width_m", ParamValue::Float(25.0)),
        ("depth_m", ParamValue::Float(3.0)),
        ("bank_width_m", ParamValue::Float(30.0)),
        ("scale_m", ParamValue::Float(scale_m)),
    ];
    let n = 256;
    let z = hills(n);
    let out = run("rivers", &z, world, &params);
    let (carved, river) = (out[0].data(), out[1].data());
    let (w, h) = (n, n);
    let cell = 4000.0 / n as f64;
    let terrain = priority_flood(z.data(), w, h);
    // Routed over the terrain smoothed over a 128th of the world (σ = half of it) by default,
    // along D8-LTD's steps.
    let flood = if scale_m < 0.0 {
        let sigma = 4000.0 / 128.0 / 2.0 / cell;
        let mut f = priority_flood(orogen::field::blur::gaussian(&z, sigma).data(), w, h);
        f.receiver = orogen::nodes::water::ltd::receivers(&f.level, &f.receiver, w, h).0;
        f
    } else {
        priority_flood(z.data(), w, h)
    };
    let routes = Routes::new(&flood, w, h, None);
    let area = routes.accumulate(cell * cell, None);
    // The surface: the lowest filled level on the way, by relaxation to a fixed point.
    let mut surface = terrain.level.clone();
    loop {
        let mut changed = false;
        for i in 0..w * h {
            let r = routes.receivers()[i];
            if r != NONE && surface[i] < surface[r as usize] {
                surface[r as usize] = surface[i];
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    if scale_m == 0.0 {
        assert_eq!(
            surface, terrain.level,
            "over the grid the surface is the level"
        );
    } else {
        let lowered = (0..w * h)
            .filter(|&i| surface[i] < terrain.level[i])
            .count();
        assert!(
            lowered > 0,
            "smoothed routes cross bumps the surface is lowered past"
        );
    }
    let depth = |a: f64| 3.0 * (a / 1.0e7).powf(0.4);
    let half = |a: f64| 0.5 * 25.0 * (a / 1.0e7).sqrt();
    let is_river =
        |i: usize| area[i] >= 0.2e6 && f64::from(terrain.level[i] - z.data()[i]) <= depth(area[i]);
    let rivers: Vec<usize> = (0..w * h).filter(|&i| is_river(i)).collect();
    assert!(
        rivers.len() > 200,
        "the test terrain has rivers ({})",
        rivers.len()
    );
    for &start in &rivers {
        let mut c = start;
        let mut bed = f64::from(surface[c]) - depth(area[c]);
        loop {
            // At least the share of the cell its own channel covers: the whole cell for a
            // channel wider than a cell, 2 · half width ÷ cell size for a narrower one.
            let own = (2.0 * half(area[c]) / cell).min(1.0) as f32;
            assert!(
                !is_river(c) || (river[c] > 0.0 && river[c] >= own - 1e-6),
                "river cell {c} shows in the mask ({} < {own})",
                river[c]
            );
            let t = routes.targets(c);
            if t.len == 0 {
                assert!(is_edge(c, w, h), "ends inside at {c}");
                break;
            }
            let next = t.cells[0] as usize;
            assert!(surface[next] <= surface[c], "surface rises at {c} → {next}");
            if is_river(next) {
                let b = f64::from(surface[next]) - depth(area[next]);
                assert!(b <= bed + 1e-4, "bed rises at {c} → {next}: {bed} → {b}");
                bed = b;
            }
            c = next;
        }
    }
    for (c, z) in carved.iter().zip(z.data()) {
        assert!(c <= z, "the carve only lowers");
    }
    for &i in &rivers {
        assert_eq!(
            out[2].data()[i],
            surface[i].max(carved[i]),
            "river cell {i}'s water surface"
        );
        let bed = f64::from(surface[i]) - depth(area[i]);
        // A river cell's terrain lies at or above its bed (a deeper pit is a lake).
        assert!(f64::from(z.data()[i]) >= bed - 1e-3);
        assert!(
            f64::from(carved[i]) <= bed + 1e-3,
            "cell {i} is cut to its bed"
        );
    }
    // Far from every river (beyond the widest channel and its banks) nothing changes.
    let reach = rivers.iter().map(|&i| half(area[i])).fold(0.0, f64::max) + 30.0;
    let far = ((reach / cell).ceil() as usize) + 1;
    let near: std::collections::HashSet<(usize, usize)> = rivers
        .iter()
        .flat_map(|&i| {
            let (x, y) = (i % w, i / w);
            (y.saturating_sub(far)..=(y + far).min(h - 1)).flat_map(move |yy| {
                (x.saturating_sub(far)..=(x + far).min(w - 1)).map(move |xx| (xx, yy))
            })
        })
        .collect();
    for i in 0..w * h {
        if !near.contains(&(i % w, i / w)) {
            assert_eq!(carved[i], z.data()[i]);
            assert_eq!(river[i], 0.0);
        }
    }
    // With the sea on, no channel lies below sea level (they end at the coast).
    let sea_level = {
        let mut v = z.data().to_vec();
        v.sort_by(f32::total_cmp);
        v[v.len() / 4]
    };
    let mut with_sea = params.to_vec();
    with_sea.push(("sea", ParamValue::Bool(true)));
    with_sea.push(("sea_level_m", ParamValue::Float(f64::from(sea_level))));
    let coast = run("rivers", &z, world, &with_sea);
    let mut ending = 0;
    for &i in &rivers {
        if z.data()[i] < sea_level {
            // No channel of its own: nothing carved here beyond what reaches from land.
            assert!(coast[1].data()[i] < 0.5, "river cell {i} below sea level");
        } else if (coast[1].data()[i]) >= 0.5 {
            ending += 1;
        }
    }
    assert!(ending > 0, "rivers remain on land");
    let covered = |n: usize| {
        let out = run("rivers", &hills(n), world, &params);
        let c = 4000.0 / n as f64;
        out[1].data().iter().map(|&v| f64::from(v)).sum::<f64>() * c * c
    };
    // Antialiased: the mask covers what the channels do — 2 · half width along each river
    // cell's step downstream (√2 cells on a diagonal) — within 10%.
    let channels: f64 = rivers
        .iter()
        .map(|&i| {
            let r = routes.receivers()[i] as usize;
            let step = if r % w != i % w && r / w != i / w {
                2f64.sqrt()
            } else {
                1.0
            };
            2.0 * half(area[i]) * step * cell
        })
        .sum();
    let (coarse, fine) = (covered(256), covered(1024));
    assert!(
        (coarse / channels - 1.0).abs() < 0.1,
        "river mask {coarse} m², channels {channels} m² at 256²"
    );
    // Between resolutions the network itself differs: a 256² grid's d8 paths cannot follow
    // the bends a finer grid resolves (measured on tests/data/water.json: 10.3 km of river at
    // 256², 11.8–12.1 km at 512²–2048²), so the area is compared within 25%.
    assert!(
        (coarse / fine - 1.0).abs() < 0.25,
        "river area {coarse} m² at 256², {fine} m² at 1024²"
    );
}

/// Over the terrain smoothed by default the flagship's rivers take the same way across its
/// gentle valley floor at 256² and 1024². Routed over the grid's own cells (`scale_m` 0) they
/// follow bumps only the finer grid holds, and `orogen parity` flags the node (measured: mask
/// mean |Δ| 0.73% against 1.17%, correlation 0.61 against 0.40).
#[test]
fn rivers_take_the_same_way_at_every_resolution() {
    let mut g = common::load("graphs/alpine_valley.json");
    let only = ["rivers".to_owned()];
    let river = |g: &orogen::Graph| {
        let rows = orogen::parity::compare(g, None, 256, 1024, &only).expect("parity");
        rows.into_iter()
            .find(|r| r.node == "rivers" && r.output == "river")
            .expect("a rivers.river row")
    };
    let smoothed = river(&g);
    g.set_param("rivers", "scale_m", ParamValue::Float(0.0))
        .expect("scale_m");
    let per_cell = river(&g);
    assert!(
        smoothed.mean_abs_diff <= 0.0085 && smoothed.correlation >= 0.55,
        "smoothed routes: mean |Δ| {:.4}, correlation {:.3}",
        smoothed.mean_abs_diff,
        smoothed.correlation
    );
    assert!(
        per_cell.mean_abs_diff > 1.4 * smoothed.mean_abs_diff
            && per_cell.correlation < smoothed.correlation - 0.1,
        "over the grid's cells: mean |Δ| {:.4}, correlation {:.3}",
        per_cell.mean_abs_diff,
        per_cell.correlation
    );
    let node = g.node("rivers").expect("node");
    assert_eq!(
        node.def.resolution(&node.params),
        orogen::node::ResolutionBehaviour::PerCell
    );
}
