//! Tiled builds: seamless (bit-identical to the whole map for local graphs, shared borders
//! identical for every example graph, global nodes within the parity tolerance), resumable,
//! and the same through `orogen plan` + `orogen run-task` as through `orogen build --tiles`.

use crate::common;

use common::{load, repo};
use orogen::build::evaluate_outputs;
use orogen::graph::Graph;
use orogen::node::PortKind;
use orogen::tiles::{
    run_all, run_task, Grid, Layout, Plan, RunOptions, TaskOutcome, TileExports, TileRequest,
};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

fn exports(layout: &str, formats: &[&str], stitch: &[&str]) -> TileExports {
    TileExports {
        layout: layout.into(),
        formats: formats.iter().map(|s| (*s).to_owned()).collect(),
        stitch: stitch.iter().map(|s| (*s).to_owned()).collect(),
        preview: Some("terrain".into()),
        normal_map: None,
        mesh: None,
    }
}

/// Plans and runs a tiled build of `rel` into `dir`; returns the graph.
fn tiled(rel: &str, dir: &Path, grid: Grid, coarse: usize, ex: TileExports) -> Graph {
    let g = load(rel);
    let plan = Plan::new(&g, &repo().join(rel), grid, coarse, ex).expect("plan");
    plan.write(dir, &g).expect("write plan");
    run_all(dir, &RunOptions::default(), |_, _, _| {}).expect("run");
    g
}

fn read_f32(path: &Path) -> Vec<f32> {
    std::fs::read(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// Every file the manifest lists, with its bytes.
fn listed_files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).expect("manifest"))
            .expect("json");
    let mut out = BTreeMap::new();
    for f in m["files"].as_array().expect("files") {
        let name = f["file"].as_str().expect("file").to_owned();
        let bytes = std::fs::read(dir.join(&name)).expect("listed file");
        assert_eq!(
            blake3::hash(&bytes).to_hex().to_string(),
            f["hash"].as_str().expect("hash"),
            "{name}: hash in the manifest"
        );
        out.insert(name, bytes);
    }
    out.insert(
        "manifest.json".into(),
        std::fs::read(dir.join("manifest.json")).expect("manifest"),
    );
    out
}

/// Colour outputs tile too: the stitched f32 and r16 files of every colour output of
/// tests/data/color.json are the whole-map build's bytes (channels interleaved), each tile's
/// RGB PNG16 reads back as the whole map's colours there, and the preview is an RGB picture.
#[test]
fn a_tiled_build_writes_colour_outputs_like_the_whole_map() {
    let dir = tempfile::tempdir().expect("tempdir");
    let n = 200;
    let grid = Grid::new(n, Layout::Plain, TileRequest::Count(3, 3)).expect("grid");
    let g = tiled(
        "tests/data/color.json",
        dir.path(),
        grid,
        2048,
        exports("plain", &["png16"], &["f32", "r16"]),
    );
    let whole = evaluate_outputs(&g, Some(n)).expect("whole map");
    let world = g.world;
    let mut colours = 0;
    for (name, field) in &whole {
        if g.output_kind(&g.outputs[name]) != Some(PortKind::Color) {
            continue;
        }
        colours += 1;
        for f in [
            orogen::io::heightmap::Format::F32,
            orogen::io::heightmap::Format::R16,
        ] {
            let want = orogen::io::heightmap::encode(field, &world, f).expect("encode");
            let got = std::fs::read(dir.path().join(format!("{name}.{}", f.extension())))
                .expect("stitched file");
            assert!(
                got == want,
                "{name}.{}: differs from the whole map",
                f.extension()
            );
        }
        let w = grid.window(1, 2);
        let tile =
            orogen::io::heightmap::read_color(&dir.path().join(format!("tiles/{name}_x1_y2.png")))
                .expect("tile");
        assert_eq!(
            (tile.width(), tile.height(), tile.channels()),
            (w.width, w.height, 3)
        );
        for c in 0..3 {
            for y in 0..w.height {
                for x in 0..w.width {
                    let a = field.plane(c)[(w.y0 + y) * n + w.x0 + x];
                    let b = tile.plane(c)[y * w.width + x];
                    let code = |v: f32| (orogen::io::heightmap::srgb_encode(v) * 65535.0).round();
                    assert!((code(a) - code(b)).abs() <= 1.0, "{name} ({x}, {y})");
                }
            }
        }
        let preview = image::open(dir.path().join(format!("{name}.preview.png"))).expect("preview");
        assert_eq!(preview.color(), image::ColorType::Rgb8);
    }
    assert!(colours >= 7, "{colours}");
}

/// Scalar outputs (a drainage area in m²) tile in float formats: the stitched f32 of
/// tests/data/water.json's `flow_area` is the whole map's, its preview is drawn once every
/// tile is in, and an integer format (whose range would be the unknown whole-map range) is
/// refused with the reason.
#[test]
fn a_tiled_build_writes_scalar_outputs_in_float_formats() {
    let rel = "tests/data/water.json";
    let n = 192;
    let grid = Grid::new(n, Layout::Plain, TileRequest::Count(3, 3)).expect("grid");
    let g = load(rel);
    let err = Plan::new(
        &g,
        &repo().join(rel),
        grid,
        2048,
        exports("plain", &["png16"], &[]),
    )
    .expect_err("png16 scalar tiles");
    assert_eq!(
        err,
        "output \"flow_area\" is a scalar (a quantity in its own unit): tiled builds write it as exr or f32 only, not png16 (an integer format spans the output's whole-map range, unknown until every tile is built)"
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let g = tiled(
        rel,
        dir.path(),
        grid,
        2048,
        exports("plain", &["exr"], &["f32"]),
    );
    let whole = evaluate_outputs(&g, Some(n)).expect("whole map");
    let area = &whole["flow_area"];
    assert_eq!(read_f32(&dir.path().join("flow_area.f32")), area.data());
    let (lo, hi) = area.min_max().expect("values");
    assert!(
        lo > 0.0 && hi > 1.0e4 * lo,
        "drainage areas span decades: {lo} … {hi}"
    );
    let preview = image::open(dir.path().join("flow_area.preview.png")).expect("preview");
    assert_eq!(preview.color(), image::ColorType::Rgb8);
}

/// A tiled build of a graph of local nodes (generators, combiners, warps, blurs, slope and
/// curvature masks: `shaping.json`) stitches to the very bits of the whole-map build, on
/// uneven tiles (200 = 3 × 67 − 1).
#[test]
fn a_tiled_build_of_a_local_graph_is_bit_identical_to_the_whole_map() {
    let dir = tempfile::tempdir().expect("tempdir");
    let n = 200;
    let grid = Grid::new(n, Layout::Plain, TileRequest::Count(3, 3)).expect("grid");
    assert_eq!((grid.size, grid.window(2, 2).width), (67, 66));
    let g = tiled(
        "graphs/shaping.json",
        dir.path(),
        grid,
        2048,
        exports("plain", &["png16"], &["f32"]),
    );
    let whole = evaluate_outputs(&g, Some(n)).expect("whole map");
    assert!(whole.len() >= 20);
    for (name, field) in &whole {
        let got = read_f32(&dir.path().join(format!("{name}.f32")));
        assert_eq!(got.len(), n * n, "{name}");
        let diffs = got
            .iter()
            .zip(field.data())
            .filter(|(a, b)| a.to_bits() != b.to_bits())
            .count();
        assert_eq!(
            diffs, 0,
            "{name}: {diffs} samples differ from the whole-map build"
        );
    }
}

/// Normal maps of tiles are computed with a one-sample margin, so together they are the
/// whole-map build's normal map, pixel for pixel — no seam of lighting at tile edges.
#[test]
fn tiled_normal_maps_equal_the_whole_map_normal_map() {
    use orogen::build::{build, BuildOptions, Exports};
    use orogen::io::render::NormalY;
    let n = 200;
    let tiles_dir = tempfile::tempdir().expect("tempdir");
    let whole_dir = tempfile::tempdir().expect("tempdir");
    let grid = Grid::new(n, Layout::Plain, TileRequest::Count(3, 3)).expect("grid");
    let mut ex = exports("plain", &["png16"], &[]);
    ex.normal_map = Some((16, "directx".into()));
    let g = tiled("graphs/shaping.json", tiles_dir.path(), grid, 2048, ex);
    build(
        &g,
        &BuildOptions {
            out_dir: whole_dir.path().to_path_buf(),
            exports: Exports {
                normal_map: Some((16, NormalY::Directx)),
                preview: None,
                ..Exports::default()
            },
            resolution: Some(n),
            graph_file: None,
            allow_outside: &[],
            keep_going: false,
            cancel: orogen::eval::CancelToken::new(),
            progress: None,
            cache: None,
            arrays: None,
        },
    )
    .expect("whole-map build");
    let mut checked = 0;
    for (name, r) in &g.outputs {
        if g.output_kind(r) != Some(PortKind::Height) {
            continue;
        }
        let whole = image::open(whole_dir.path().join(format!("{name}.normal.png")))
            .expect("whole normal map")
            .into_rgb16();
        for k in 0..grid.count() {
            let (i, j) = grid.coords(k);
            let w = grid.window(i, j);
            let p = tiles_dir
                .path()
                .join(format!("tiles/{name}_x{i}_y{j}.normal.png"));
            let tile = image::open(&p)
                .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
                .into_rgb16();
            assert_eq!(
                (tile.width() as usize, tile.height() as usize),
                (w.width, w.height)
            );
            for (x, y, px) in tile.enumerate_pixels() {
                let want = whole.get_pixel(w.x0 as u32 + x, w.y0 as u32 + y);
                assert_eq!(px, want, "{name} tile {k} at ({x}, {y})");
            }
        }
        checked += 1;
    }
    assert!(checked >= 10, "{checked} height outputs");
}

/// Unreal-layout tiles of every example graph share their border rows and columns exactly
/// (erosion and normalisation included), and the manifest lists every tile with its extent.
#[test]
fn neighbouring_tiles_share_identical_borders_for_every_example_graph() {
    let mut graphs: Vec<String> = std::fs::read_dir(repo().join("graphs"))
        .expect("graphs/")
        .filter_map(|e| {
            let p = e.ok()?.path();
            let name = p.file_name()?.to_str()?.to_owned();
            (p.extension()? == "json").then(|| format!("graphs/{name}"))
        })
        .collect();
    graphs.sort();
    assert!(graphs.len() >= 8);
    for rel in graphs {
        let dir = tempfile::tempdir().expect("tempdir");
        // 2 × 2 tiles of 127 samples sharing a row: 253².
        let grid = Grid::new(253, Layout::Unreal, TileRequest::Count(2, 2)).expect("grid");
        let g = tiled(
            &rel,
            dir.path(),
            grid,
            64,
            exports("unreal", &["png16"], &[]),
        );
        let m: serde_json::Value = serde_json::from_slice(
            &std::fs::read(dir.path().join("manifest.json")).expect("manifest"),
        )
        .expect("json");
        assert_eq!(
            m["tiles"].as_array().expect("tiles").len(),
            4 * g.outputs.len(),
            "{rel}"
        );
        for name in g.outputs.keys() {
            let tile = |i: usize, j: usize| -> Vec<u16> {
                let p = dir.path().join(format!("tiles/{name}_x{i}_y{j}.png"));
                let img = image::open(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
                assert_eq!((img.width(), img.height()), (127, 127));
                img.into_luma16().into_raw()
            };
            let t: Vec<Vec<u16>> = vec![tile(0, 0), tile(1, 0), tile(0, 1), tile(1, 1)];
            let col = |v: &[u16], x: usize| (0..127).map(|y| v[y * 127 + x]).collect::<Vec<_>>();
            let row = |v: &[u16], y: usize| v[y * 127..(y + 1) * 127].to_vec();
            assert_eq!(
                col(&t[0], 126),
                col(&t[1], 0),
                "{rel} {name}: x0_y0 | x1_y0"
            );
            assert_eq!(
                col(&t[2], 126),
                col(&t[3], 0),
                "{rel} {name}: x0_y1 | x1_y1"
            );
            assert_eq!(
                row(&t[0], 126),
                row(&t[2], 0),
                "{rel} {name}: x0_y0 / x0_y1"
            );
            assert_eq!(
                row(&t[1], 126),
                row(&t[3], 0),
                "{rel} {name}: x1_y0 / x1_y1"
            );
            // A border that is constant everywhere would pass trivially.
            let border = col(&t[0], 126);
            assert!(
                border.iter().any(|&v| v != border[0])
                    || g.output_kind(&g.outputs[name]) == Some(PortKind::Mask),
                "{rel} {name}: flat border"
            );
        }
    }
}

/// Global nodes in tiles see the world at the coarse size and add their change to each
/// tile's own detail: with a coarse grid 4× coarser than the build, every height output of
/// an eroded graph stays within `orogen parity`'s tolerance of the whole-map build.
#[test]
fn a_tiled_build_with_erosion_agrees_with_the_whole_map_within_the_parity_tolerance() {
    let n = 512;
    for rel in ["graphs/olsen2004.json", "graphs/lim2022.json"] {
        let dir = tempfile::tempdir().expect("tempdir");
        let grid = Grid::new(n, Layout::Plain, TileRequest::Count(4, 4)).expect("grid");
        let g = tiled(
            rel,
            dir.path(),
            grid,
            128,
            exports("plain", &["r16"], &["f32"]),
        );
        let whole = evaluate_outputs(&g, Some(n)).expect("whole map");
        let span = g.world.height_span_m() as f32;
        let mut checked = 0;
        for (name, field) in &whole {
            let r = &g.outputs[name];
            let node = g.node(&r.node).expect("node");
            let first = node.def.output_index(&r.output) == Some(0);
            let Some(tol) = orogen::parity::tolerance(&node.def.spec, first) else {
                continue;
            };
            if g.output_kind(r) != Some(PortKind::Height) {
                continue;
            }
            let got = read_f32(&dir.path().join(format!("{name}.f32")));
            let mean = got
                .iter()
                .zip(field.data())
                .map(|(a, b)| f64::from((a - b).abs() / span))
                .sum::<f64>()
                / got.len() as f64;
            eprintln!("{rel} {name}: mean |tiled − whole| = {mean:.5} of the height range");
            assert!(
                mean <= tol.mean_abs_diff,
                "{rel} {name}: mean |tiled − whole| = {mean:.5} of the height range, tolerance {}",
                tol.mean_abs_diff
            );
            checked += 1;
        }
        assert!(checked >= 2, "{rel}: only {checked} outputs compared");
    }
}

/// Stream power refined on pieces aligned with its base's cells does what the whole map's
/// build does there, up to the pieces' own edges (their outlets, inside the halo): `uplift.json`
/// at 2048² from a 256² coarse pass in 4 × 4 tiles, 2.2e-4 of the height range. A piece that
/// started its outlets from its input, as if they were the map's edge, drifted 1.5e-3.
#[test]
fn stream_power_refined_on_pieces_equals_the_whole_map() {
    let n = 2048;
    let rel = "graphs/uplift.json";
    let dir = tempfile::tempdir().expect("tempdir");
    let grid = Grid::new(n, Layout::Plain, TileRequest::Count(4, 4)).expect("grid");
    let g = load(rel);
    // A 1 MiB stage: stream power cannot run whole-map and is refined on pieces.
    let ex = exports("plain", &["r16"], &["f32"]);
    let plan =
        Plan::new_with_budget(&g, &repo().join(rel), grid, 256, ex, Some(1 << 20)).expect("plan");
    plan.write(dir.path(), &g).expect("write plan");
    run_all(dir.path(), &RunOptions::default(), |_, _, _| {}).expect("run");
    let whole = evaluate_outputs(&g, Some(n)).expect("whole map");
    let span = g.world.height_span_m() as f32;
    let got = read_f32(&dir.path().join("height.f32"));
    let mean = got
        .iter()
        .zip(whole["height"].data())
        .map(|(a, b)| f64::from((a - b).abs() / span))
        .sum::<f64>()
        / got.len() as f64;
    eprintln!("{rel}: mean |tiled − whole| = {mean:.3e} of the height range");
    assert!(mean < 5e-4, "{rel}: mean |tiled − whole| = {mean:.3e}");
}

/// A build stopped part-way resumes: the tasks already done are skipped (their files match
/// their records), a tile whose file was damaged is redone, and the result is byte for byte
/// that of an uninterrupted build.
#[test]
fn a_stopped_tiled_build_resumes_and_gives_the_same_files() {
    let rel = "graphs/olsen2004.json";
    let grid = Grid::new(256, Layout::Plain, TileRequest::Count(3, 3)).expect("grid");
    let ex = || exports("plain", &["png16", "exr"], &["r16"]);
    let full = tempfile::tempdir().expect("tempdir");
    tiled(rel, full.path(), grid, 64, ex());

    let part = tempfile::tempdir().expect("tempdir");
    let g = load(rel);
    let plan = Plan::new(&g, &repo().join(rel), grid, 64, ex()).expect("plan");
    plan.write(part.path(), &g).expect("write");
    let opts = RunOptions::default();
    // Every stage task, then the first four output tiles.
    let first: Vec<String> = plan
        .tasks
        .iter()
        .map(|t| t.id.clone())
        .take_while(|id| id != "tile-4")
        .collect();
    assert!(first.iter().any(|id| id.starts_with("s0.")), "{first:?}");
    for t in &first {
        assert_eq!(run_task(part.path(), t, &opts), Ok(TaskOutcome::Ran), "{t}");
    }
    // The stitch refuses to run before every tile is there, naming the missing one.
    let e = run_task(part.path(), "stitch", &opts).expect_err("stitch too early");
    assert!(e.contains("the stitch needs task tile-4"), "{e}");
    // A damaged tile file (a disk error, an edit) makes its task run again.
    let name = g.outputs.keys().next().expect("an output");
    std::fs::write(
        part.path().join(format!("tiles/{name}_x1_y0.png")),
        b"damaged",
    )
    .expect("damage");
    let mut outcomes = BTreeMap::new();
    run_all(part.path(), &opts, |id, o, _| {
        outcomes.insert(id.to_owned(), o);
    })
    .expect("resume");
    for t in first.iter().filter(|t| *t != "tile-1") {
        assert_eq!(outcomes[t], TaskOutcome::AlreadyDone, "{t}");
    }
    assert_eq!(outcomes["tile-1"], TaskOutcome::Ran, "the damaged tile");
    assert_eq!(outcomes["tile-3"], TaskOutcome::AlreadyDone);
    assert_eq!(outcomes["tile-8"], TaskOutcome::Ran);
    assert_eq!(listed_files(part.path()), listed_files(full.path()));
}

fn orogen(args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_orogen"))
        .env("OROGEN_CACHE", "off")
        .args(args)
        .current_dir(repo())
        .output()
        .expect("run orogen");
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

/// `orogen plan` + `orogen run-task` for every task (as a scheduler would run them, each in
/// its own process, one twice) give byte for byte what `orogen build --tiles` gives; the plan
/// is a task graph with the dependencies and the Slurm scripts a job array needs.
#[test]
fn plan_and_run_task_give_the_same_files_as_the_local_runner() {
    let a = tempfile::tempdir().expect("tempdir");
    let b = tempfile::tempdir().expect("tempdir");
    let common = [
        "graphs/olsen2004.json",
        "--size",
        "300",
        "--tile-size",
        "128",
        "--coarse-size",
        "96",
        "--stitch",
        "r16",
    ];
    let (ok, text) = orogen(
        &[
            &["build"],
            &common[..],
            &["-o", a.path().to_str().expect("utf-8")],
        ]
        .concat(),
    );
    assert!(ok, "{text}");
    let (ok, text) = orogen(
        &[
            &["plan"],
            &common[..],
            &["-o", b.path().to_str().expect("utf-8")],
        ]
        .concat(),
    );
    assert!(ok, "{text}");
    // olsen2004's two erosion nodes refine finer than the coarse pass (300 > 256): each is a
    // stage of 1 piece (a 300² world is one piece) and 9 tiles.
    assert!(
        text.contains(
            "31 tasks (the coarse task at 96², 3×3 tiles of 128 samples, then the stitch)"
        ) && text
            .contains("stages: s0 thermal (refined in pieces); s1 hydraulic (refined in pieces)"),
        "{text}"
    );
    let plan: serde_json::Value =
        serde_json::from_slice(&std::fs::read(b.path().join("plan.json")).expect("plan"))
            .expect("json");
    let tasks = plan["tasks"].as_array().expect("tasks");
    assert_eq!(tasks.len(), 31);
    assert_eq!(tasks[0]["id"], "coarse");
    assert_eq!(tasks[1]["id"], "s0.piece-0");
    assert_eq!(tasks[1]["deps"], serde_json::json!(["coarse"]));
    assert_eq!(tasks[2]["id"], "s0.tile-0");
    assert_eq!(tasks[2]["deps"], serde_json::json!(["s0.piece-*"]));
    // The grid hydraulic stage reads the thermal one; the output tiles read both.
    assert_eq!(
        tasks[11]["deps"],
        serde_json::json!(["coarse", "s0.tile-*"])
    );
    assert_eq!(tasks[21]["id"], "tile-0");
    assert_eq!(
        tasks[21]["deps"],
        serde_json::json!(["s0.tile-*", "s1.tile-*"])
    );
    assert_eq!(tasks[29]["window"], serde_json::json!([256, 256, 44, 44]));
    assert_eq!(tasks[30]["deps"], serde_json::json!(["tile-*"]));
    let array = std::fs::read_to_string(b.path().join("slurm/array.sbatch")).expect("sbatch");
    assert!(
        array.contains("run-task") && array.contains("\"$OROGEN_TASK$SLURM_ARRAY_TASK_ID\""),
        "{array}"
    );
    let submit = std::fs::read_to_string(b.path().join("slurm/submit.sh")).expect("submit");
    for line in [
        "prev=$(one coarse \"$@\")",
        "prev=$(array s0.piece- 1 \"$@\")",
        "prev=$(array s1.tile- 9 \"$@\")",
        "prev=$(array tile- 9 \"$@\")",
        "prev=$(one stitch \"$@\")",
    ] {
        assert!(submit.contains(line), "{line} not in {submit}");
    }
    let plan_dir = b.path().to_str().expect("utf-8");
    for t in tasks {
        let id = t["id"].as_str().expect("id");
        let (ok, text) = orogen(&["run-task", plan_dir, id]);
        assert!(ok && text.contains(&format!("{id}: done")), "{text}");
    }
    // A retried task is harmless.
    let (ok, text) = orogen(&["run-task", plan_dir, "tile-4"]);
    assert!(ok && text.contains("tile-4: already done"), "{text}");
    let (ok, text) = orogen(&["run-task", plan_dir, "tile-9"]);
    assert!(
        !ok && text.contains("no task \"tile-9\" (tasks: coarse, s<i>.piece-<j> | s<i>.tile-<k> | s<i>.whole | s<i>.water for each stage, tile-0 … tile-8, stitch)"),
        "{text}"
    );
    let (fa, fb) = (listed_files(a.path()), listed_files(b.path()));
    assert!(fa.len() > 20, "{:?}", fa.keys());
    assert_eq!(fa.keys().collect::<Vec<_>>(), fb.keys().collect::<Vec<_>>());
    for (k, v) in &fa {
        assert!(
            fb[k] == *v,
            "{k} differs between the local runner and run-task"
        );
    }
}

#[test]
fn a_plan_an_older_orogen_wrote_is_refused_by_its_version() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plan_dir = dir.path().to_str().expect("utf-8");
    let (ok, text) = orogen(&[
        "plan",
        "graphs/island.json",
        "--size",
        "128",
        "--tile-size",
        "64",
        "-o",
        plan_dir,
    ]);
    assert!(ok, "{text}");
    // Version 1 had no stages: it must be named by its version, not as a broken file.
    let path = dir.path().join("plan.json");
    let mut plan: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).expect("plan")).expect("json");
    plan["version"] = 1.into();
    plan.as_object_mut().expect("object").remove("stages");
    std::fs::write(&path, serde_json::to_vec(&plan).expect("json")).expect("write");
    let (ok, text) = orogen(&["run-task", plan_dir, "tile-0"]);
    assert!(!ok);
    assert!(
        text.contains(
            "expected format \"orogen-plan\" version 2, found \"orogen-plan\" version 1 (plan it again with this orogen)"
        ),
        "{text}"
    );
}

/// Unreal and Unity tiles share borders, so only some world sizes fit: the error says which.
#[test]
fn engine_tile_layouts_name_the_sizes_that_fit() {
    let e =
        Grid::new(4096, Layout::Unreal, TileRequest::Count(4, 4)).expect_err("4096 does not fit");
    assert!(
        e.contains("--size 4033 for tiles of 1009; --size 8065 for tiles of 2017"),
        "{e}"
    );
    let e =
        Grid::new(10, Layout::Plain, TileRequest::Count(6, 6)).expect_err("5 tiles of 2, not 6");
    assert!(e.contains("does not cut into 6 equal tiles"), "{e}");
    let e = Grid::new(10, Layout::Plain, TileRequest::Size(0)).expect_err("no empty tiles");
    assert!(e.contains("--tile-size 0: expected 1 to 10 samples"), "{e}");
    let e = Grid::new(10, Layout::Unity, TileRequest::Size(0)).expect_err("no empty tiles");
    assert!(e.contains("unity tiles share"), "{e}");
    let g = Grid::new(8193, Layout::Unity, TileRequest::Size(1025)).expect("8 × 8 Unity tiles");
    assert_eq!(
        (g.tiles_x, g.step, g.window(7, 7).x0 + g.window(7, 7).width),
        (8, 1024, 8193)
    );
    let (ok, text) = orogen(&[
        "build",
        "graphs/island.json",
        "--size",
        "4096",
        "--tiles",
        "4x4",
        "--preset",
        "unity",
        "-o",
        "/nonexistent",
    ]);
    assert!(
        !ok && text.contains("unity tiles share their border samples"),
        "{text}"
    );
    let (ok, text) = orogen(&["build", "graphs/island.json", "--stitch", "r16"]);
    assert!(
        !ok && text.contains("--stitch needs --tiles or --tile-size"),
        "{text}"
    );
}

/// Erosion refines tiles finer than the coarse pass (world-anchored pieces blended by a
/// partition of unity, `eval::pieces`): `graphs/droplets.json` with its base at 64², built at
/// 256² in 2 × 2 tiles over a 64² coarse pass, keeps within 25% of the whole map's
/// cell-to-cell roughness of the erosion's change (the coarse change brought up alone has
/// a fifth of it or less) and stays within the parity tolerance; in Unreal tiles over the same
/// coarse pass, neighbours share their borders exactly.
#[test]
fn tiles_refine_erosion_finer_than_the_coarse_pass_and_still_share_borders() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(repo().join("graphs/droplets.json")).expect("graph"))
            .expect("json");
    for n in json["nodes"].as_array_mut().expect("nodes") {
        if n["id"] == "rain" {
            n["params"]["base_resolution"] = 64.into();
        }
    }
    let path = dir.path().join("droplets64.json");
    std::fs::write(&path, serde_json::to_vec(&json).expect("json")).expect("write");
    let rel = path.to_str().expect("utf-8");
    let g = load(rel);
    // Cell-to-cell roughness of the change.
    let rough = |c: &[f32], n: usize| {
        common::roughness(&orogen::field::Field::from_vec(n, n, c.to_vec()).expect("field"))
    };
    let n = 256;
    let whole = evaluate_outputs(&g, Some(n)).expect("whole map");
    let change = |o: &[f32], i: &[f32]| o.iter().zip(i).map(|(o, i)| o - i).collect::<Vec<_>>();
    let w_change = change(whole["height"].data(), whole["uneroded"].data());
    let out = dir.path().join("plain");
    let grid = Grid::new(n, Layout::Plain, TileRequest::Count(2, 2)).expect("grid");
    let plan = Plan::new(&g, &path, grid, 64, exports("plain", &["r16"], &["f32"])).expect("plan");
    plan.write(&out, &g).expect("write plan");
    run_all(&out, &RunOptions::default(), |_, _, _| {}).expect("run");
    let (t_out, t_in) = (
        read_f32(&out.join("height.f32")),
        read_f32(&out.join("uneroded.f32")),
    );
    assert_eq!(t_in, whole["uneroded"].data(), "uneroded input");
    let t_change = change(&t_out, &t_in);
    let (rw, rt) = (rough(&w_change, n), rough(&t_change, n));
    // The coarse change alone, brought up bilinearly as a tile carries it without refining.
    let coarse = evaluate_outputs(&g, Some(64)).expect("coarse");
    let c_change = orogen::field::Field::from_vec(
        64,
        64,
        change(coarse["height"].data(), coarse["uneroded"].data()),
    )
    .expect("field")
    .resample_bilinear(n, n);
    let rc = rough(c_change.data(), n);
    eprintln!("roughness of the change: whole {rw:.4}, tiled {rt:.4}, coarse brought up {rc:.4}");
    assert!(rc < 0.2 * rw, "coarse {rc} vs whole {rw}");
    assert!((rt / rw - 1.0).abs() <= 0.25, "tiled {rt} vs whole {rw}");
    let span = g.world.height_span_m() as f32;
    let mean = t_out
        .iter()
        .zip(whole["height"].data())
        .map(|(a, b)| f64::from((a - b).abs() / span))
        .sum::<f64>()
        / t_out.len() as f64;
    assert!(mean <= 0.015, "mean |tiled − whole| = {mean}");
    // Unreal tiles sharing a row and a column, refined on the same pieces.
    let out = dir.path().join("unreal");
    let grid = Grid::new(253, Layout::Unreal, TileRequest::Count(2, 2)).expect("grid");
    let plan = Plan::new(&g, &path, grid, 64, exports("unreal", &["png16"], &[])).expect("plan");
    plan.write(&out, &g).expect("write plan");
    run_all(&out, &RunOptions::default(), |_, _, _| {}).expect("run");
    let tile = |i: usize, j: usize| -> Vec<u16> {
        let p = out.join(format!("tiles/height_x{i}_y{j}.png"));
        image::open(&p)
            .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
            .into_luma16()
            .into_raw()
    };
    let (a, b, c) = (tile(0, 0), tile(1, 0), tile(0, 1));
    let col = |v: &[u16], x: usize| (0..127).map(|y| v[y * 127 + x]).collect::<Vec<_>>();
    assert_eq!(col(&a, 126), col(&b, 0), "x0_y0 | x1_y0");
    assert_eq!(a[126 * 127..], c[..127], "x0_y0 / x0_y1");
}

/// The stitched result of one node, given to a whole-map evaluation as that node's output.
struct Stitched {
    id: String,
    fields: Vec<orogen::field::Field>,
}

impl orogen::eval::StoredFields for Stitched {
    fn has(&self, id: &str) -> bool {
        id == self.id
    }
    fn read(&self, _: &str, w: orogen::node::Window) -> Result<Vec<orogen::field::Field>, String> {
        let full = orogen::node::Window::full(self.fields[0].width());
        Ok(self.fields.iter().map(|f| full.crop(f, &w)).collect())
    }
    fn tag(&self) -> [u8; 16] {
        [7; 16]
    }
}

/// A graph whose water nodes read an eroded terrain the tiles refine in pieces, with an
/// output for every port of every water node and for the terrain under them.
fn water_over_erosion(dir: &Path, rel: &str, erode: Option<&str>) -> (std::path::PathBuf, Graph) {
    let mut json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(repo().join(rel)).expect("graph")).expect("json");
    let nodes = json["nodes"].as_array_mut().expect("nodes");
    if let Some(src) = erode {
        // Thermal erosion between the terrain and every node that read it: refined in pieces
        // at these sizes (base 64, coarse 64).
        for n in nodes.iter_mut() {
            if n["inputs"]["in"] == src {
                n["inputs"]["in"] = "scree.out".into();
            }
        }
        nodes.push(serde_json::json!({"id": "scree", "type": "thermal_erosion",
            "inputs": {"in": src}, "params": {"base_resolution": 64, "iterations": 20}}));
        // And `normalize` on it, the other global node a stage runs tile by tile.
        nodes.push(serde_json::json!({"id": "stretch", "type": "normalize",
            "inputs": {"in": "scree.out"}, "params": {"low": 0.1, "high": 0.9}}));
    }
    json["outputs"] = serde_json::json!({});
    let path = dir.join("water.json");
    std::fs::write(&path, serde_json::to_vec(&json).expect("json")).expect("write");
    let g = load(path.to_str().expect("utf-8"));
    let mut outputs = serde_json::Map::new();
    for n in &g.nodes {
        if n.def.spec.category != orogen::node::Category::Water && n.def.spec.id != "normalize" {
            continue;
        }
        for p in n.def.spec.outputs {
            outputs.insert(
                format!("{}_{}", n.id, p.name),
                format!("{}.{}", n.id, p.name).into(),
            );
        }
        if let Some(Some(r)) = n.inputs.first() {
            outputs.insert(
                format!("under_{}", n.id),
                format!("{}.{}", r.node, r.output).into(),
            );
        }
    }
    json["outputs"] = outputs.into();
    std::fs::write(&path, serde_json::to_vec(&json).expect("json")).expect("write");
    let g = load(path.to_str().expect("utf-8"));
    (path, g)
}

/// Node `id` of `flat` run whole-map at `n`² on `under` (its first input's terrain, as a tiled
/// build stitched it): its output fields.
fn run_on_stitched(
    flat: &Graph,
    id: &str,
    under: Vec<f32>,
    n: usize,
) -> Vec<std::sync::Arc<orogen::field::Field>> {
    let node = flat.node(id).expect("node");
    let Some(Some(r)) = node.inputs.first() else {
        panic!("{id} has no input")
    };
    let src = flat.node(&r.node).expect("source");
    let mut fields = vec![orogen::field::Field::filled(n, n, 0.0); src.def.spec.outputs.len()];
    fields[src.def.output_index(&r.output).expect("port")] =
        orogen::field::Field::from_vec(n, n, under).expect("field");
    let store = Stitched {
        id: r.node.clone(),
        fields,
    };
    let mut whole = orogen::eval::Evaluator::new()
        .evaluate(
            flat,
            &orogen::eval::EvalOptions {
                resolution: Some(n),
                targets: orogen::eval::Targets::Nodes(vec![id.to_owned()]),
                stored: Some(&store),
                ..orogen::eval::EvalOptions::default()
            },
        )
        .expect("whole map");
    whole.fields.remove(id).expect("the node's fields").to_vec()
}

/// The water of a tiled build is exact: every output of every water node equals, bit for bit,
/// the same node run whole-map on the terrain the tiles stitched together under it — lakes,
/// sea, MFD and D8 flow, rivers and snow over thermal erosion refined in pieces for tile sizes
/// of 512, 256 and 128 (3 × 3, 5 × 5 and 10 × 10 tiles) — and the whole result does not
/// depend on the tile size (the pieces are the world's, not the tiles'). The flagship's water
/// is checked tile by tile below.
#[test]
fn tiled_water_equals_the_water_nodes_run_whole_map_on_the_stitched_terrain() {
    water_is_exact(
        "tests/data/water.json",
        Some("hills.out"),
        1280,
        &[512, 256, 128],
        64,
        None,
    );
}

/// The flagship at 1024² with every water node run tile by tile (a stage memory of one byte:
/// the stage kind a world too large for whole-map water takes), in tiles of 512, 256 and 200
/// (2 × 2, 4 × 4, and 6 × 6 with a last column and row of 24): its rivers, lakes, MFD flow and
/// snow equal the nodes run whole-map on the stitched terrain, whatever the tile size.
#[test]
fn flagship_water_tile_by_tile_is_exact_at_1024() {
    water_is_exact(
        "graphs/alpine_valley.json",
        None,
        1024,
        &[512, 256, 200],
        128,
        Some(1),
    );
}

/// Plans and runs `rel` (with thermal erosion under `erode`, if given) at `n`² in each tile
/// size of `tiles`, with the stage memory `budget`, and checks every water output against the
/// node run whole-map on the stitched terrain (and each tile size's against the first's).
fn water_is_exact(
    rel: &str,
    erode: Option<&str>,
    n: usize,
    tiles: &[usize],
    coarse: usize,
    budget: Option<u64>,
) {
    let dir = tempfile::tempdir().expect("tempdir");
    let (path, g) = water_over_erosion(dir.path(), rel, erode);
    // The tile sizes build side by side (the tests' longest runs: on their own threads they use
    // every core when the rest of the suite has finished), then are checked in order.
    let builds: Vec<BTreeMap<String, Vec<f32>>> = std::thread::scope(|scope| {
        let handles: Vec<_> = tiles
            .iter()
            .map(|&tile| {
                let (g, path, out) = (&g, &path, dir.path().join(format!("t{tile}")));
                scope.spawn(move || build_in_tiles(rel, g, path, &out, (n, tile, coarse), budget))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a tile size's build panicked"))
            .collect()
    });
    let mut first: Option<BTreeMap<String, Vec<f32>>> = None;
    for (&tile, stitched) in tiles.iter().zip(builds) {
        if let Some(f) = &first {
            for (k, v) in f {
                assert!(
                    v.iter()
                        .map(|x| x.to_bits())
                        .eq(stitched[k].iter().map(|x| x.to_bits())),
                    "{rel}: {k} differs between tiles of 512 and {tile}"
                );
            }
            continue;
        }
        // Each water node run whole-map on the stitched terrain under it.
        let flat = g.flattened();
        let mut checked = 0;
        for w in flat
            .nodes
            .iter()
            .filter(|x| x.def.spec.category == orogen::node::Category::Water)
        {
            let Some(Some(_)) = w.inputs.first() else {
                continue;
            };
            let whole = run_on_stitched(
                &flat,
                &w.id,
                stitched[&format!("under_{}", w.id)].clone(),
                n,
            );
            for (k, p) in w.def.spec.outputs.iter().enumerate() {
                let want = &whole[k];
                let got = &stitched[&format!("{}_{}", w.id, p.name)];
                let same = want
                    .data()
                    .iter()
                    .map(|x| x.to_bits())
                    .eq(got.iter().map(|x| x.to_bits()));
                assert!(
                    same,
                    "{rel}: {}.{} is not the node run whole-map on the stitched terrain",
                    w.id, p.name
                );
                checked += 1;
            }
        }
        eprintln!("{rel}: {checked} water outputs bit-identical to the whole-map nodes on the stitched terrain");
        assert!(
            checked >= 14,
            "{rel}: only {checked} water outputs compared"
        );
        first = Some(stitched);
    }
}

/// Plans and runs `rel` at `n`² in tiles of `tile` into `out` (checking that the plan runs
/// water in stages of its own when a `budget` is given, and refines erosion in pieces), and
/// returns every output, stitched.
fn build_in_tiles(
    rel: &str,
    g: &Graph,
    path: &Path,
    out: &Path,
    (n, tile, coarse): (usize, usize, usize),
    budget: Option<u64>,
) -> BTreeMap<String, Vec<f32>> {
    let grid = Grid::new(n, Layout::Plain, TileRequest::Size(tile)).expect("grid");
    let ex = exports("plain", &[], &["f32"]);
    let plan = Plan::new_with_budget(g, path, grid, coarse, ex, budget).expect("plan");
    if budget.is_some() {
        let water: Vec<_> = plan
            .stages
            .iter()
            .filter(|s| {
                g.node(&s.node)
                    .is_some_and(|x| x.def.spec.category == orogen::node::Category::Water)
            })
            .map(|s| (s.node.as_str(), s.kind))
            .collect();
        assert!(
            water
                .iter()
                .all(|(_, k)| *k == orogen::tiles::StageKind::Water),
            "{rel}: water not run tile by tile: {water:?}"
        );
    }
    assert!(
        plan.stages
            .iter()
            .any(|s| s.kind == orogen::tiles::StageKind::Pieces),
        "{rel}: nothing refined in pieces: {:?}",
        plan.stages
    );
    plan.write(out, g).expect("write plan");
    run_all(out, &RunOptions::default(), |_, _, _| {}).expect("run");
    g.outputs
        .keys()
        .map(|k| (k.clone(), read_f32(&out.join(format!("{k}.f32")))))
        .collect()
}

/// Water run tile by tile, only the tiles' perimeters exchanged (Barnes 2016, 2017: what a
/// stage does when the node's whole-map fields would not fit its memory), gives the very bits
/// of the node run whole-map on the stitched terrain: `rivers`, `lakes`, d8 and mfd
/// `flow_accumulation`, `snow`, `sea` and `normalize` (its extremes over every tile, then the
/// stretch) over thermal erosion refined in pieces, tiles of 128 (5 × 5) and 200 (4 × 4, the last column and row 40
/// wide), against the same plan with whole-map stages and against the nodes run on the
/// stitched terrain. The pieces are freed once blended, and a second run redoes nothing.
#[test]
fn water_run_tile_by_tile_equals_the_whole_map_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (path, g) = water_over_erosion(dir.path(), "tests/data/water.json", Some("hills.out"));
    let n = 640;
    let nodes: [(&str, &[&str]); 7] = [
        ("stretch", &["out"]),
        ("rivers", &["out", "river", "surface"]),
        ("lakes", &["surface", "depth", "mask"]),
        ("channels", &["flow", "dir_x", "dir_y", "wetness", "area"]),
        ("flow", &["flow", "dir_x", "dir_y", "wetness", "area"]),
        ("snow", &["out", "depth", "mask"]),
        ("sea", &["surface", "sea", "shore", "beach"]),
    ];
    let mut runs: Vec<(String, BTreeMap<String, Vec<f32>>)> = Vec::new();
    for (tile, budget) in [(128, None), (128, Some(1)), (200, Some(1))] {
        let out = dir.path().join(format!("t{tile}-{budget:?}"));
        let grid = Grid::new(n, Layout::Plain, TileRequest::Size(tile)).expect("grid");
        let plan =
            Plan::new_with_budget(&g, &path, grid, 64, exports("plain", &[], &["f32"]), budget)
                .expect("plan");
        let want = if budget.is_some() {
            orogen::tiles::StageKind::Water
        } else {
            orogen::tiles::StageKind::Whole
        };
        let mut water = Vec::new();
        for (id, _) in nodes {
            let si = plan
                .stages
                .iter()
                .position(|s| s.node == id)
                .expect("a stage");
            assert_eq!(
                plan.stages[si].kind, want,
                "{id}: tiles of {tile}, budget {budget:?}"
            );
            water.push(si);
        }
        plan.write(&out, &g).expect("write plan");
        run_all(&out, &RunOptions::default(), |_, _, _| {}).expect("run");
        let work = out.join(".work").join(&plan.key);
        let pieces = std::fs::read_dir(&work)
            .expect("work")
            .flatten()
            .filter(|e| e.path().is_dir())
            .flat_map(|e| std::fs::read_dir(e.path()).expect("stage").flatten())
            .filter(|e| e.file_name().to_string_lossy().starts_with("piece-"))
            .count();
        assert_eq!(pieces, 0, "piece files left after their tiles were blended");
        for si in water {
            let stage = work.join(format!("s{si}"));
            assert!(stage.is_dir(), "{} holds the stage", stage.display());
            assert!(
                !stage.join("water").exists(),
                "the tile-by-tile scratch files are removed"
            );
        }
        let mut again = Vec::new();
        run_all(&out, &RunOptions::default(), |id, o, _| {
            again.push((id.to_owned(), o));
        })
        .expect("run again");
        let redone: Vec<_> = again
            .iter()
            .filter(|(id, o)| *o != orogen::tiles::TaskOutcome::AlreadyDone && id != "stitch")
            .collect();
        assert!(
            redone.is_empty(),
            "a second run redid {redone:?} (the stitch always runs)"
        );
        let mut stitched = BTreeMap::new();
        for (id, ports) in nodes {
            for name in ports
                .iter()
                .map(|p| format!("{id}_{p}"))
                .chain([format!("under_{id}")])
            {
                let v = read_f32(&out.join(format!("{name}.f32")));
                stitched.insert(name, v);
            }
        }
        runs.push((format!("tiles of {tile}, budget {budget:?}"), stitched));
    }
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    let (_, first) = &runs[0];
    for (what, run) in &runs[1..] {
        for (k, v) in first {
            assert!(
                bits(v) == bits(&run[k]),
                "{k}: {what} differs from the whole-map stage"
            );
        }
    }
    // And the nodes run whole-map on the stitched terrain.
    let flat = g.flattened();
    let (_, last) = &runs[2];
    for (id, ports) in nodes {
        let whole = run_on_stitched(&flat, id, last[&format!("under_{id}")].clone(), n);
        for (k, p) in ports.iter().enumerate() {
            let want = whole[k].data();
            assert!(
                bits(want) == bits(&last[&format!("{id}_{p}")]),
                "{id}.{p} run tile by tile is not the node run whole-map on the stitched terrain"
            );
        }
    }
    let wet = |k: &str| last[k].iter().filter(|&&v| v > 0.5).count();
    assert!(wet("rivers_river") > 1000, "the terrain has rivers");
    assert!(wet("lakes_mask") > 100, "the terrain has lakes");
    assert!(wet("sea_sea") > 1000, "the terrain has a sea");
    assert!(wet("sea_shore") > 1000, "the sea has a shore");
}

/// The editor's region preview computes a region as a tiled build does
/// (`evaluate_region_as_built`: the global nodes in their stages, then the window): rivers,
/// lakes, MFD flow and snow over thermal erosion refined in pieces equal, bit for bit, the same
/// window of a tiled build's outputs.
#[test]
fn a_region_evaluated_as_built_equals_the_tiled_build_there() {
    use orogen::eval::{EvalOptions, Targets};
    let dir = tempfile::tempdir().expect("tempdir");
    let (path, g) = water_over_erosion(dir.path(), "tests/data/water.json", Some("hills.out"));
    let n = 320;
    let grid = Grid::new(n, Layout::Plain, TileRequest::Size(128)).expect("grid");
    let ex = exports("plain", &[], &["f32"]);
    let plan = Plan::new(&g, &path, grid, orogen::tiles::COARSE_MAX, ex).expect("plan");
    let out = dir.path().join("built");
    plan.write(&out, &g).expect("write plan");
    run_all(&out, &RunOptions::default(), |_, _, _| {}).expect("run");
    let window = orogen::node::Window {
        x0: 70,
        y0: 150,
        width: 120,
        height: 90,
    };
    let ids = ["rivers", "lakes", "flow", "snow"];
    let opts = EvalOptions {
        targets: Targets::Nodes(ids.iter().map(|s| (*s).to_owned()).collect()),
        base_dir: path.parent(),
        ..EvalOptions::default()
    };
    let work = dir.path().join("region");
    let res = orogen::tiles::evaluate_region_as_built(
        &g,
        Some(&path),
        n,
        orogen::tiles::COARSE_MAX,
        window,
        &work,
        &opts,
    )
    .expect("region");
    let mut compared = 0;
    for id in ids {
        let node = g.node(id).expect("node");
        for (k, p) in node.def.spec.outputs.iter().enumerate() {
            let built = read_f32(&out.join(format!("{id}_{}.f32", p.name)));
            let want: Vec<u32> = (window.y0..window.y0 + window.height)
                .flat_map(|y| built[y * n + window.x0..y * n + window.x0 + window.width].to_vec())
                .map(f32::to_bits)
                .collect();
            let got: Vec<u32> = res.fields[id][k]
                .data()
                .iter()
                .map(|v| v.to_bits())
                .collect();
            assert!(
                got == want,
                "{id}.{}: the region is not the build's",
                p.name
            );
            compared += 1;
        }
    }
    assert_eq!(compared, 14);
}

/// `orogen parity --as-built` compares the preview against what a tiled build computes
/// (`parity::Fine::AsBuilt`, the region preview's code over the whole world). Over a coarse
/// pass of 64² (`--coarse-size 64`) droplet erosion is refined in 2 × 2 pieces at 1152², so a
/// tiled build differs from the whole map; every output of the water nodes and of the terrains
/// under them equals, bit for bit, a tiled build's in 3 × 3 tiles of 512 samples (the last
/// ones cut short), and the eroded terrain is not the whole map's.
#[test]
fn parity_as_built_compares_against_the_tiled_build() {
    use orogen::parity::{compare_with, evaluate_fine, Fine};
    let dir = tempfile::tempdir().expect("tempdir");
    let (path, _) = water_over_erosion(dir.path(), "tests/data/water.json", Some("hills.out"));
    // Droplets instead of thermal erosion (whose pieces give the whole map's bits).
    let mut json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).expect("graph")).expect("json");
    for x in json["nodes"].as_array_mut().expect("nodes") {
        if x["id"] == "scree" {
            x["type"] = "droplet_erosion".into();
            x["params"] = serde_json::json!({"base_resolution": 64});
        }
    }
    std::fs::write(&path, serde_json::to_vec(&json).expect("json")).expect("write");
    let g = load(path.to_str().expect("utf-8"));
    let (n, coarse) = (1152, 64);
    let grid = Grid::new(n, Layout::Plain, TileRequest::Size(512)).expect("grid");
    let plan = Plan::new(&g, &path, grid, coarse, exports("plain", &[], &["f32"])).expect("plan");
    let out = dir.path().join("built");
    plan.write(&out, &g).expect("write plan");
    run_all(&out, &RunOptions::default(), |_, _, _| {}).expect("run");
    let work = dir.path().join("parity");
    let fine = Fine::AsBuilt {
        graph_file: Some(&path),
        coarse,
        work: &work,
    };
    let res = evaluate_fine(&g, path.parent(), n, &[], fine).expect("as built");
    let mut compared = 0;
    for (name, r) in &g.outputs {
        let k = g
            .node(&r.node)
            .expect("node")
            .def
            .output_index(&r.output)
            .expect("port");
        let built = read_f32(&out.join(format!("{name}.f32")));
        let got: Vec<u32> = res.fields[&r.node][k]
            .data()
            .iter()
            .map(|v| v.to_bits())
            .collect();
        let want: Vec<u32> = built.iter().map(|v| v.to_bits()).collect();
        assert!(got == want, "{name}: parity's build is not the tiled build");
        compared += 1;
    }
    assert!(compared >= 18, "{compared} outputs compared");
    let nodes = ["scree".to_owned()];
    let whole = evaluate_fine(&g, path.parent(), n, &nodes, Fine::WholeMap).expect("whole");
    assert!(
        whole.fields["scree"][0] != res.fields["scree"][0],
        "the pieces do not show"
    );
    // The report: the erosion's outputs, within their tolerances against the tiled build (the
    // same targets as above, so the plan's finished stages are reused, not run again).
    let rows = compare_with(&g, path.parent(), 288, n, &[], fine).expect("parity");
    let rows: Vec<_> = rows.into_iter().filter(|r| r.node == "scree").collect();
    let outputs: Vec<&str> = rows.iter().map(|r| r.output).collect();
    assert_eq!(outputs, ["out", "erosion", "deposition"]);
    assert!(rows.iter().all(orogen::parity::Row::ok), "{rows:#?}");
}
