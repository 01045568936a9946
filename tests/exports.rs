//! Export tests: every heightmap format read back equals what was written (within its
//! precision), glTF parses back with matching vertex count and bounds, OBJ parses, presets
//! have the engines' sizes and byte layouts, normal and splat maps have the right shape.

use crate::common;

use orogen::build::{
    build, evaluate_outputs, BuildOptions, BuildReport, Exports, MeshFormat, Preset,
};
use orogen::eval::CancelToken;
use orogen::graph::Graph;
use orogen::io::heightmap::{self, Format, SampleScale};
use orogen::io::render::NormalY;

fn small_graph() -> Graph {
    common::load("graphs/alps.json")
}

fn run(g: &Graph, dir: &std::path::Path, exports: Exports, size: usize) -> BuildReport {
    common::build_into(g, dir, exports, size)
}

#[test]
fn every_heightmap_format_reads_back_what_was_written() {
    let g = small_graph();
    let dir = tempfile::tempdir().expect("tempdir");
    let formats = vec![
        Format::Png16,
        Format::Tiff16,
        Format::Exr,
        Format::R16,
        Format::F32,
        Format::Png8,
    ];
    let report = run(
        &g,
        dir.path(),
        Exports {
            formats: formats.clone(),
            ..Exports::default()
        },
        96,
    );
    let truth = &evaluate_outputs(&g, Some(96)).expect("eval")["height"];
    let (lo, span) = (g.world.height_min_m as f32, g.world.height_span_m() as f32);
    // 16-bit formats: half a step of the height range; float formats: exact.
    let step = span / 65535.0;
    for f in formats {
        let path = dir.path().join(format!("height.{}", f.extension()));
        let back: Vec<f32> = match f {
            Format::R16 => std::fs::read(&path)
                .expect("r16")
                .chunks(2)
                .map(|b| lo + f32::from(u16::from_le_bytes([b[0], b[1]])) / 65535.0 * span)
                .collect(),
            Format::F32 => std::fs::read(&path)
                .expect("f32")
                .chunks(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect(),
            _ => {
                let (field, scale) = heightmap::read(&path).expect("read");
                match scale {
                    SampleScale::Raw => field.into_vec(),
                    SampleScale::Normalized => field.data().iter().map(|v| lo + v * span).collect(),
                }
            }
        };
        assert_eq!(back.len(), 96 * 96, "{f:?}");
        let tol = if matches!(f, Format::Exr | Format::F32) {
            0.0
        } else if f == Format::Png8 {
            span / 255.0 * 0.5 + 1e-3
        } else {
            step * 0.5 + 1e-3
        };
        for (a, b) in truth.data().iter().zip(&back) {
            assert!((a - b).abs() <= tol, "{f:?}: {a} vs {b}");
        }
    }
    assert_eq!(
        report
            .manifest
            .files
            .iter()
            .filter(|f| f.role == "tiff16")
            .count(),
        3
    );
}

#[test]
fn data_range_uses_all_16_bits_and_records_its_range() {
    let g = small_graph();
    let dir = tempfile::tempdir().expect("tempdir");
    let r = run(
        &g,
        dir.path(),
        Exports {
            range: orogen::build::Range::Data,
            ..Exports::default()
        },
        64,
    );
    let out = entry(&r, "height");
    assert_eq!(out.range_m, [f64::from(out.min), f64::from(out.max)]);
    let (f, _) = heightmap::read(&dir.path().join("height.png")).expect("png");
    assert_eq!(f.min_max(), Some((0.0, 1.0)), "data range spans 0 … 65535");
    // Back to metres with the recorded range.
    let truth = &evaluate_outputs(&g, Some(64)).expect("eval")["height"];
    assert_decodes(truth, &f, out.range_m);
}

/// The manifest entry of output `name`.
fn entry<'a>(r: &'a BuildReport, name: &str) -> &'a orogen::io::manifest::OutputEntry {
    r.manifest
        .outputs
        .iter()
        .find(|o| o.name == name)
        .unwrap_or_else(|| panic!("no output {name} in the manifest"))
}

/// `png` (16-bit codes read back as 0 … 1) decodes to `truth` within one step of `range`.
fn assert_decodes(truth: &orogen::field::Field, png: &orogen::field::Field, range: [f64; 2]) {
    let span = (range[1] - range[0]) as f32;
    for (a, b) in truth.data().iter().zip(png.data()) {
        assert!((a - (range[0] as f32 + b * span)).abs() <= span / 65535.0);
    }
}

/// A scalar output (flow_accumulation's drainage area in m²) is written in its own unit:
/// exactly by exr and f32, over its own range by png16 (the graph's range means nothing to
/// it), recorded in the manifest; its preview is a colour picture.
#[test]
fn scalar_outputs_keep_their_unit() {
    let g = common::load("tests/data/water.json");
    let dir = tempfile::tempdir().expect("tempdir");
    let r = run(
        &g,
        dir.path(),
        Exports {
            formats: vec![Format::Png16, Format::F32, Format::Exr],
            ..Exports::default()
        },
        64,
    );
    let out = entry(&r, "flow_area");
    assert_eq!(out.kind, "scalar");
    assert_eq!(out.range_m, [f64::from(out.min), f64::from(out.max)]);
    let truth = &evaluate_outputs(&g, Some(64)).expect("eval")["flow_area"];
    // The smallest drainage area is one cell's own: (4000 m / 64)².
    assert_eq!(out.min, 62.5 * 62.5);
    let f32s: Vec<f32> = std::fs::read(dir.path().join("flow_area.f32"))
        .expect("f32")
        .chunks(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    assert_eq!(f32s, truth.data());
    let (exr, _) = heightmap::read(&dir.path().join("flow_area.exr")).expect("exr");
    assert_eq!(exr.data(), truth.data());
    let (png, _) = heightmap::read(&dir.path().join("flow_area.png")).expect("png");
    assert_eq!(
        png.min_max(),
        Some((0.0, 1.0)),
        "its own range spans 0 … 65535"
    );
    assert_decodes(truth, &png, out.range_m);
    let preview = image::open(dir.path().join("flow_area.preview.png")).expect("preview");
    assert_eq!(preview.color(), image::ColorType::Rgb8);
}

#[test]
fn glb_parses_back_with_matching_vertices_and_bounds_and_obj_parses() {
    let g = small_graph();
    let dir = tempfile::tempdir().expect("tempdir");
    run(
        &g,
        dir.path(),
        Exports {
            mesh: Some((MeshFormat::Glb, 3)),
            ..Exports::default()
        },
        64,
    );
    run(
        &g,
        dir.path(),
        Exports {
            mesh: Some((MeshFormat::Obj, 3)),
            ..Exports::default()
        },
        64,
    );
    let truth = &evaluate_outputs(&g, Some(64)).expect("eval")["height"];
    // Kept samples per side: 0, 3, …, 63 → 22.
    let per_side = (0..64).step_by(3).count() + usize::from(63 % 3 != 0);
    let bytes = std::fs::read(dir.path().join("height.glb")).expect("glb");
    let gltf = gltf::Gltf::from_slice(&bytes).expect("valid glTF");
    let prim = gltf
        .meshes()
        .next()
        .expect("mesh")
        .primitives()
        .next()
        .expect("primitive");
    let pos = prim.get(&gltf::Semantic::Positions).expect("positions");
    assert_eq!(pos.count(), per_side * per_side);
    assert!(
        prim.get(&gltf::Semantic::Normals).is_some()
            && prim.get(&gltf::Semantic::TexCoords(0)).is_some()
    );
    assert_eq!(
        prim.indices().expect("indices").count(),
        (per_side - 1) * (per_side - 1) * 6
    );
    let cell = g.world.cell_size_m(64) as f32;
    let as_vec = |v: Option<gltf::json::Value>| -> Vec<f32> {
        serde_json::from_value(serde_json::to_value(v.expect("bound")).expect("json"))
            .expect("floats")
    };
    let (lo, hi) = (as_vec(pos.min()), as_vec(pos.max()));
    assert!(
        (lo[0] - cell / 2.0).abs() < 1e-3 && (hi[0] - (63.5 * cell)).abs() < 1e-2,
        "x {lo:?} {hi:?}"
    );
    let (fmin, fmax) = truth.min_max().expect("range");
    assert!(
        lo[1] >= fmin - 1e-3 && hi[1] <= fmax + 1e-3,
        "heights within the field's range"
    );

    let obj = std::fs::read_to_string(dir.path().join("height.obj")).expect("obj");
    let count = |p: &str| obj.lines().filter(|l| l.starts_with(p)).count();
    assert_eq!(
        (count("v "), count("vt "), count("vn ")),
        (
            per_side * per_side,
            per_side * per_side,
            per_side * per_side
        )
    );
    assert_eq!(count("f "), (per_side - 1) * (per_side - 1) * 2);
    for l in obj.lines().filter(|l| l.starts_with("f ")) {
        for v in l[2..].split(' ') {
            let i: usize = v.split('/').next().expect("index").parse().expect("number");
            assert!(i >= 1 && i <= per_side * per_side);
        }
    }
}

/// Builds `g` with `preset` at about `size` samples into a fresh folder.
fn build_preset(
    g: &Graph,
    preset: Preset,
    size: usize,
) -> (tempfile::TempDir, orogen::build::BuildReport) {
    let dir = tempfile::tempdir().expect("tempdir");
    let report = run(
        g,
        dir.path(),
        Exports {
            preset: Some(preset),
            ..Exports::default()
        },
        size,
    );
    (dir, report)
}

#[test]
fn presets_have_engine_sizes_and_byte_layouts() {
    let g = small_graph();
    // Unity: 2ⁿ + 1, RAW16 little-endian, rows south to north.
    let (dir, r) = build_preset(&g, Preset::Unity, 100);
    assert_eq!(r.eval.resolution, 129);
    let raw = std::fs::read(dir.path().join("height.raw")).expect("raw");
    assert_eq!(raw.len(), 129 * 129 * 2);
    let truth = &evaluate_outputs(&g, Some(129)).expect("eval")["height"];
    let south_west = truth.data()[128 * 129];
    let want = heightmap::to_u16(south_west, &g.world).to_le_bytes();
    assert_eq!(
        &raw[..2],
        &want,
        "first sample is the south-west corner, little-endian"
    );
    // Unreal: recommended size, 16-bit PNG, Z scale in the manifest.
    let (dir, r) = build_preset(&g, Preset::Unreal, 500);
    assert_eq!(r.eval.resolution, 505);
    let (f, _) = heightmap::read(&dir.path().join("height.png")).expect("png");
    assert_eq!((f.width(), f.height()), (505, 505));
    let z = r.manifest.preset.as_ref().expect("preset")["scale_cm"]["z"]
        .as_f64()
        .expect("z");
    assert!((z - g.world.height_span_m() * 100.0 / 512.0).abs() < 1e-9);
    // Godot: 2ⁿ + 1, float EXR in metres.
    let (dir, r) = build_preset(&g, Preset::Godot, 300);
    assert_eq!(r.eval.resolution, 257);
    let (f, scale) = heightmap::read(&dir.path().join("height.exr")).expect("exr");
    assert_eq!((f.width(), scale), (257, SampleScale::Raw));
    assert_eq!(Preset::Unity.size_for(4096), 4097);
    assert_eq!(Preset::Unreal.size_for(2048), 2017);
}

#[test]
fn normal_maps_previews_and_splats_have_the_right_shape() {
    let g = small_graph();
    let dir = tempfile::tempdir().expect("tempdir");
    let exports = Exports {
        preview: Some(orogen::io::render::Colormap::Terrain),
        normal_map: Some((16, NormalY::Directx)),
        splats: vec![("ground".into(), vec!["range".into(), "snow".into()])],
        splat_normalize: true,
        ..Exports::default()
    };
    let r = run(&g, dir.path(), exports, 80);
    let normal = image::open(dir.path().join("height.normal.png")).expect("normal");
    assert_eq!(
        (normal.width(), normal.color()),
        (80, image::ColorType::Rgb16)
    );
    let preview = image::open(dir.path().join("height.preview.png")).expect("preview");
    assert_eq!(preview.color(), image::ColorType::Rgb8);
    let splat = image::open(dir.path().join("ground.splat.png"))
        .expect("splat")
        .to_rgba8();
    for px in splat.pixels() {
        let sum: u32 = px.0[..2].iter().map(|&v| u32::from(v)).sum();
        assert!(
            sum == 0 || (254..=256).contains(&sum),
            "weights sum to 1: {sum}"
        );
    }
    // Every file is listed with its hash.
    for f in &r.manifest.files {
        let bytes = std::fs::read(dir.path().join(&f.file)).expect("file");
        assert_eq!(
            blake3::hash(&bytes).to_hex().to_string(),
            f.hash,
            "{}",
            f.file
        );
    }
    // A splat of a height output is refused with a clear message.
    let bad = Exports {
        splats: vec![("x".into(), vec!["height".into()])],
        ..Exports::default()
    };
    let err = build(
        &g,
        &BuildOptions {
            out_dir: dir.path().to_path_buf(),
            exports: bad,
            resolution: Some(16),
            graph_file: None,
            allow_outside: &[],
            keep_going: false,
            cancel: CancelToken::new(),
            progress: None,
            cache: None,
            arrays: None,
        },
    )
    .expect_err("height in splat");
    assert_eq!(
        err.to_string(),
        "splat map \"x\": output \"height\" is a height, not a mask"
    );
}

/// Runs `orogen ARGS` in `dir` and fails the test with its stderr unless it succeeds.
fn orogen_ok(dir: &std::path::Path, args: &[&str]) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_orogen"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("orogen");
    assert!(
        out.status.success(),
        "orogen {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Runs a GDAL tool (gdal-bin, installed by `.ci/run`), failing with what to install.
fn gdal(tool: &str, args: &[&str], dir: &std::path::Path) -> String {
    let out = std::process::Command::new(tool)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("{tool}: {e} (these tests need GDAL: apt install gdal-bin)"));
    assert!(
        out.status.success(),
        "{tool} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A 120 × 90 DEM of 30 m cells (UTM 33N) with a 5 × 10 hole of no-data, as an ASCII grid
/// GDAL converts to GeoTIFFs; returns the heights (−9999 in the hole).
fn dem_source(dir: &std::path::Path) -> Vec<f32> {
    let (w, h) = (120, 90);
    let mut z = Vec::with_capacity(w * h);
    let mut text = format!(
        "ncols {w}\nnrows {h}\nxllcorner 500000\nyllcorner 4100000\ncellsize 30\nNODATA_value -9999\n"
    );
    for y in 0..h {
        for x in 0..w {
            let hole = (40..45).contains(&y) && (50..60).contains(&x);
            let v = if hole {
                -9999.0
            } else {
                let (xf, yf) = (x as f32, y as f32);
                (500.0 + 200.0 * (xf / 15.0).sin() * (yf / 11.0).cos() + xf * 0.7).round()
            };
            z.push(v);
            text += &v.to_string();
            text.push(' ');
        }
        text.push('\n');
    }
    std::fs::write(dir.join("src.asc"), text).expect("write");
    z
}

/// A DEM whose ground is not square (403 × 344 pixels of 10 m; a geographic one whose degrees
/// are not square metres) gets a note from `orogen new --from-dem` saying how much import
/// stretches it and the GDAL command that keeps its shape; the command as given makes a DEM
/// that needs no note.
#[test]
fn a_dem_that_is_not_square_gets_the_command_that_keeps_its_shape() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let create = |size: [&str; 2], srs: &str, ullr: [&str; 4], file: &str| {
        let mut a = vec![
            "-q", "-outsize", size[0], size[1], "-ot", "Float32", "-burn", "100",
        ];
        a.extend_from_slice(&["-a_srs", srs, "-a_ullr"]);
        a.extend_from_slice(&ullr);
        a.push(file);
        gdal("gdal_create", &a, d);
    };
    let ullr = ["500000", "5000000", "504030", "4996560"];
    create(["403", "344"], "EPSG:32633", ullr, "ns.tif");
    let out = orogen_ok(d, &["new", "--from-dem", "ns.tif", "-o", "ns.json"]);
    assert!(out.contains("4030 × 3440 m on 403 × 344 pixels"), "{out}");
    assert!(out.contains("width to height of 1.172 becomes 1"), "{out}");
    let fix = "gdal_translate -srcwin 29 0 344 344 ns.tif dem_square.tif";
    assert!(out.contains(fix), "{out}");
    let words: Vec<&str> = fix.split(' ').collect();
    gdal(words[0], &words[1..], d);
    let out = orogen_ok(d, &["new", "--from-dem", "dem_square.tif", "-o", "sq.json"]);
    assert!(!out.contains("note:"), "{out}");
    // Geographic: 0.1° × 0.075° at 46° N is 7.75 × 8.34 km.
    create(
        ["120", "90"],
        "EPSG:4326",
        ["10.0", "46.0", "10.1", "45.925"],
        "geo.tif",
    );
    let out = orogen_ok(d, &["new", "--from-dem", "geo.tif", "-o", "geo.json"]);
    assert!(out.contains("width to height of 0.930 becomes 1"), "{out}");
    assert!(
        out.contains("gdalwarp -t_srs EPSG:32632 -tr 65 65 geo.tif dem_utm.tif"),
        "{out}"
    );
}

/// A GeoTIFF GDAL wrote with SPARSE_OK leaves out the blocks that are all no-data (offset and
/// byte count 0): they read as no-data and are filled like any hole; without a no-data value
/// (a file that is all left out) they read as 0 m, as GDAL reads them. Both were refused as
/// "corrupt deflate stream".
#[test]
fn sparse_dems_gdal_wrote_read_their_missing_blocks_as_no_data() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let (w, h) = (64, 48);
    let mut text = format!(
        "ncols {w}\nnrows {h}\nxllcorner 500000\nyllcorner 4100000\ncellsize 30\nNODATA_value -9999\n"
    );
    // No-data over the 16 × 16 blocks of columns 32..64, rows 16..32: two whole blocks.
    let missing = |x: usize, y: usize| x >= 32 && (16..32).contains(&y);
    for y in 0..h {
        for x in 0..w {
            let v = if missing(x, y) {
                -9999.0
            } else {
                100.0 + (x + 2 * y) as f32
            };
            text += &v.to_string();
            text.push(' ');
        }
        text.push('\n');
    }
    std::fs::write(d.join("src.asc"), text).expect("write");
    let sparse = [
        "-q",
        "-a_srs",
        "EPSG:32633",
        "-ot",
        "Float32",
        "-co",
        "TILED=YES",
        "-co",
        "BLOCKXSIZE=16",
        "-co",
        "BLOCKYSIZE=16",
        "-co",
        "COMPRESS=DEFLATE",
        "-co",
        "SPARSE_OK=TRUE",
    ];
    let mut a = sparse.to_vec();
    a.extend_from_slice(&["src.asc", "sparse.tif"]);
    gdal("gdal_translate", &a, d);
    let bytes = std::fs::read(d.join("sparse.tif")).expect("read");
    let dem = orogen::io::geotiff::read(&bytes, None).unwrap_or_else(|e| panic!("sparse: {e}"));
    assert_eq!(dem.filled, 32 * 16, "the left-out blocks are holes");
    for y in 0..h {
        for x in 0..w {
            let got = dem.field.data()[y * w + x];
            if missing(x, y) {
                assert!((100.0..=300.0).contains(&got), "({x}, {y}) filled: {got}");
            } else {
                assert_eq!(got, 100.0 + (x + 2 * y) as f32, "({x}, {y})");
            }
        }
    }
    // Every block left out, no no-data value: 0 m everywhere (GDAL's reading).
    gdal(
        "gdal_create",
        &[
            "-q",
            "-outsize",
            "64",
            "64",
            "-ot",
            "Float32",
            "-a_srs",
            "EPSG:32633",
            "-a_ullr",
            "500000",
            "4101920",
            "501920",
            "4100000",
            "-co",
            "TILED=YES",
            "-co",
            "COMPRESS=DEFLATE",
            "-co",
            "SPARSE_OK=TRUE",
            "empty.tif",
        ],
        d,
    );
    let bytes = std::fs::read(d.join("empty.tif")).expect("read");
    let dem = orogen::io::geotiff::read(&bytes, None).unwrap_or_else(|e| panic!("empty: {e}"));
    assert_eq!(dem.filled, 0);
    assert!(dem.field.data().iter().all(|&v| v == 0.0));
}

/// GeoTIFFs written by GDAL — float32 tiled (Deflate), int16 striped (LZW) with no-data,
/// uint16 with a scale and offset, geographic float32 — read as metres with their no-data
/// filled, and with GDAL's extent (projected: exactly; geographic: degrees at the DEM's
/// latitude, 0.1° of longitude at 45.96° N is 7.75 km).
#[test]
fn dems_written_by_gdal_read_with_their_heights_holes_and_extent() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let truth = dem_source(d);
    let utm = ["-q", "-a_srs", "EPSG:32633"];
    let variants: [(&str, Vec<&str>); 4] = [
        (
            "f32.tif",
            [
                &utm[..],
                &[
                    "-ot",
                    "Float32",
                    "-co",
                    "TILED=YES",
                    "-co",
                    "COMPRESS=DEFLATE",
                ],
            ]
            .concat(),
        ),
        (
            "i16.tif",
            [&utm[..], &["-ot", "Int16", "-co", "COMPRESS=LZW"]].concat(),
        ),
        (
            "u16.tif",
            [
                &utm[..],
                &[
                    "-ot",
                    "UInt16",
                    "-a_nodata",
                    "65535",
                    "-a_scale",
                    "0.1",
                    "-a_offset",
                    "100",
                    "-scale",
                    "0",
                    "1000",
                    "0",
                    "10000",
                ],
            ]
            .concat(),
        ),
        (
            "geo.tif",
            vec![
                "-q",
                "-a_srs",
                "EPSG:4326",
                "-a_ullr",
                "10.0",
                "46.0",
                "10.1",
                "45.925",
                "-ot",
                "Float32",
            ],
        ),
    ];
    for (file, args) in &variants {
        let mut a = args.clone();
        a.extend_from_slice(&["src.asc", file]);
        gdal("gdal_translate", &a, d);
        let bytes = std::fs::read(d.join(file)).expect("read");
        assert!(orogen::io::geotiff::is_dem(&bytes), "{file}");
        let dem = orogen::io::geotiff::read(&bytes, None).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!((dem.field.width(), dem.field.height()), (120, 90), "{file}");
        assert_eq!(dem.filled, 50, "{file}: the hole's cells");
        let offset = if *file == "u16.tif" { 100.0 } else { 0.0 };
        let (mut lo, mut hi) = (f32::MAX, f32::MIN);
        for (i, (&got, &want)) in dem.field.data().iter().zip(&truth).enumerate() {
            if want == -9999.0 {
                lo = lo.min(got);
                hi = hi.max(got);
            } else {
                assert!(
                    (got - (want + offset)).abs() < 1e-3,
                    "{file} cell {i}: {got} vs {want}"
                );
            }
        }
        // The hole is filled from the heights around it.
        let around: Vec<f32> = (38..47)
            .flat_map(|y| (48..62).map(move |x| y * 120 + x))
            .filter(|&i| truth[i] != -9999.0)
            .map(|i| truth[i] + offset)
            .collect();
        let (alo, ahi) = around
            .iter()
            .fold((f32::MAX, f32::MIN), |(a, b), &v| (a.min(v), b.max(v)));
        assert!(
            lo >= alo - 1.0 && hi <= ahi + 1.0,
            "{file}: hole {lo}…{hi}, around {alo}…{ahi}"
        );
        let (sx, sy) = dem.size_m().expect("georeferenced");
        if *file == "geo.tif" {
            let g = dem.georef.expect("georef");
            assert!(g.geographic);
            assert!((g.pixel.0 * 120.0 - 0.1).abs() < 1e-9 && (g.origin.0 - 10.0).abs() < 1e-9);
            assert!(
                (sx / 7751.6 - 1.0).abs() < 1e-3 && (sy / 8336.3 - 1.0).abs() < 1e-3,
                "{sx} × {sy}"
            );
        } else {
            assert_eq!((sx, sy), (3600.0, 2700.0), "{file}");
        }
    }
    // `orogen new --from-dem` makes a graph of the DEM's world that builds.
    orogen_ok(d, &["new", "--from-dem", "f32.tif", "-o", "dem.json"]);
    let g = orogen::document::graph_file::load_file(&d.join("dem.json"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(g.world.size_m, 3600.0);
    assert_eq!((g.world.height_min_m, g.world.height_max_m), (316.0, 783.0));
    assert_eq!(g.resolution, 120);
    // It carries the DEM's place (ASCII grid: lower-left corner 500000, 4100000, 30 m cells).
    let utm33 = orogen::graph::Georef {
        epsg: Some(32633),
        geographic: false,
        west: 500_000.0,
        south: 4_100_000.0,
        east: 503_600.0,
        north: 4_102_700.0,
    };
    assert_eq!(g.georef, Some(utm33));
    let saved = orogen::document::graph_file::to_string(&g);
    let again = orogen::document::graph_file::load(
        orogen::document::graph_file::Source::Text {
            text: &saved,
            label: "saved",
            base: Some(d),
        },
        &orogen::document::graph_file::LoadOptions::default(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        again.georef,
        Some(utm33),
        "the georeference survives a save"
    );
    let valid = Some(orogen::graph::PortRef::new("dem", "valid"));
    assert_eq!(g.nodata, valid, "the DEM's holes name the no-data cells");
    assert_eq!(again.nodata, valid, "the no-data mask survives a save");
    // GeoTIFF exports, whole and tiled, lie where the DEM lies, in its CRS: GDAL says so. The
    // world is square, so the 120 × 90 DEM's extent gives 15 × 11.25 m cells at 240².
    orogen_ok(d, &["new", "--from-dem", "geo.tif", "-o", "geo.json"]);
    for (graph, epsg, gt) in [
        (
            "dem.json",
            32633,
            [500_000.0, 15.0, 0.0, 4_102_700.0, 0.0, -11.25],
        ),
        (
            "geo.json",
            4326,
            [10.0, 0.1 / 240.0, 0.0, 46.0, 0.0, -0.075 / 240.0],
        ),
    ] {
        let stem = graph.trim_end_matches(".json");
        orogen_ok(
            d,
            &[
                "build",
                graph,
                "--size",
                "240",
                "--format",
                "geotiff",
                "--no-preview",
                "--no-cache",
                "-o",
                &format!("{stem}-whole"),
            ],
        );
        orogen_ok(
            d,
            &[
                "build",
                graph,
                "--size",
                "240",
                "--format",
                "geotiff",
                "--no-preview",
                "--no-cache",
                "--tiles",
                "2x2",
                "-o",
                &format!("{stem}-tiled"),
            ],
        );
        for file in [
            format!("{stem}-whole/height.geo.tif"),
            format!("{stem}-tiled/height.vrt"),
        ] {
            let info = gdal("gdalinfo", &["-json", &file], d);
            let json: serde_json::Value = serde_json::from_str(&info).expect("gdalinfo json");
            let wkt = json["coordinateSystem"]["wkt"].as_str().unwrap_or_default();
            assert!(
                wkt.ends_with(&format!("ID[\"EPSG\",{epsg}]]")),
                "{file}: {wkt}"
            );
            let got: Vec<f64> =
                serde_json::from_value(json["geoTransform"].clone()).expect("geotransform");
            for (a, b) in got.iter().zip(gt) {
                assert!(
                    (a - b).abs() <= 1e-9 * b.abs().max(1.0),
                    "{file}: {got:?} vs {gt:?}"
                );
            }
            assert_eq!(
                json["bands"][0]["noDataValue"].as_str(),
                Some("NaN"),
                "{file}: the DEM's holes are no data"
            );
            // The no-data cells are the DEM's hole (columns 50–59, rows 40–44 of 120 × 90,
            // stretched over 240²: x 100–119, y 106.7–120), whole and tiled alike.
            let xyz = d.join(format!("{stem}.xyz"));
            gdal(
                "gdal_translate",
                &["-q", "-of", "XYZ", &file, xyz.to_str().expect("path")],
                d,
            );
            let text = std::fs::read_to_string(&xyz).expect("xyz");
            let values: Vec<f64> = text
                .lines()
                .map(|l| {
                    l.split_whitespace()
                        .nth(2)
                        .expect("z")
                        .parse()
                        .expect("number")
                })
                .collect();
            assert_eq!(values.len(), 240 * 240, "{file}");
            let holes: Vec<(usize, usize)> = (0..values.len())
                .filter(|&i| values[i].is_nan())
                .map(|i| (i % 240, i / 240))
                .collect();
            assert!(
                (200..=320).contains(&holes.len()),
                "{file}: {} holes",
                holes.len()
            );
            assert!(
                holes
                    .iter()
                    .all(|&(x, y)| (99..=120).contains(&x) && (105..=121).contains(&y)),
                "{file}: a no-data cell outside the hole: {holes:?}"
            );
        }
    }
    // A DEM outside the graph's folder is refused, saying why.
    std::fs::create_dir(d.join("sub")).expect("mkdir");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_orogen"))
        .args(["new", "--from-dem", "f32.tif", "-o", "sub/dem.json"])
        .current_dir(d)
        .output()
        .expect("orogen new");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("is outside the graph's folder"),
        "{err}"
    );
    assert!(!d.join("sub/dem.json").exists());
}

/// `--format geotiff` writes float32 GeoTIFFs GDAL reads back byte for byte with the world's
/// extent in metres; a tiled build's VRT opens in GDAL as one raster equal to the stitched
/// whole map.
#[test]
fn geotiff_exports_and_tiled_vrts_read_back_in_gdal() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let graph = common::repo().join("graphs/alps.json");
    let graph = graph.to_str().expect("path");
    let run = |args: &[&str]| {
        let common = [
            "build",
            graph,
            "--no-cache",
            "--no-preview",
            "--size",
            "300",
        ];
        orogen_ok(d, &[&common[..], args].concat());
    };
    let (w, t) = (d.join("whole"), d.join("tiled"));
    run(&["--format", "geotiff,f32", "-o", w.to_str().expect("path")]);
    run(&[
        "--format",
        "geotiff",
        "--tiles",
        "3x3",
        "--stitch",
        "f32",
        "-o",
        t.to_str().expect("path"),
    ]);
    let g = common::load("graphs/alps.json");
    let info = gdal("gdalinfo", &["-json", "whole/height.geo.tif"], d);
    let json: serde_json::Value = serde_json::from_str(&info).expect("gdalinfo json");
    assert_eq!(json["size"], serde_json::json!([300, 300]));
    assert_eq!(json["bands"][0]["type"], "Float32");
    let gt: Vec<f64> = serde_json::from_value(json["geoTransform"].clone()).expect("geotransform");
    let cell = g.world.size_m / 300.0;
    assert_eq!(gt, vec![0.0, cell, 0.0, g.world.size_m, 0.0, -cell]);
    for (src, f32_file) in [
        ("whole/height.geo.tif", "whole/height.f32"),
        ("tiled/height.vrt", "tiled/height.f32"),
    ] {
        gdal("gdal_translate", &["-q", "-of", "ENVI", src, "back.bin"], d);
        let back = std::fs::read(d.join("back.bin")).expect("back");
        let want = std::fs::read(d.join(f32_file)).expect("f32");
        assert!(back == want, "{src}: GDAL's samples differ from {f32_file}");
    }
    let info = gdal("gdalinfo", &["-json", "tiled/height.vrt"], d);
    let json: serde_json::Value = serde_json::from_str(&info).expect("gdalinfo json");
    let vgt: Vec<f64> = serde_json::from_value(json["geoTransform"].clone()).expect("geotransform");
    assert_eq!(vgt, gt);
}

/// An `n × n` raw f32 export as a field.
fn read_f32(path: &std::path::Path, n: usize) -> orogen::Field {
    let heights: Vec<f32> = std::fs::read(path)
        .expect("f32 export")
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    orogen::Field::from_vec(n, n, heights).expect("an n × n field")
}

/// An OBJ file's vertex positions, triangle indices (0-based) and each vertex's `v` and `vn`
/// lines as written.
fn read_obj(path: &std::path::Path) -> (Vec<[f32; 3]>, Vec<u32>, Vec<String>) {
    let obj = std::fs::read_to_string(path).expect("obj");
    let (mut positions, mut indices, mut lines) = (Vec::new(), Vec::new(), Vec::new());
    let mut normals = 0;
    for line in obj.lines() {
        let mut it = line.split_whitespace();
        match it.next() {
            Some("v") => {
                let v: Vec<f32> = it.map(|t| t.parse().expect("number")).collect();
                positions.push([v[0], v[1], v[2]]);
                lines.push(line.to_owned());
            }
            Some("vn") => {
                lines[normals] = format!("{} {line}", lines[normals]);
                normals += 1;
            }
            Some("f") => indices.extend(it.map(|t| {
                t.split('/')
                    .next()
                    .expect("index")
                    .parse::<u32>()
                    .expect("index")
                    - 1
            })),
            _ => {}
        }
    }
    (positions, indices, lines)
}

/// `--mesh-error-m`: the written mesh's largest vertical error over the heightmap's samples
/// (measured here from the OBJ file and the f32 export) is within the bound, with fewer
/// triangles than the grid's (alps.json at 300² has detail at every 55 m cell: 79% of them at
/// 4 m), the manifest says both, and the border vertices are the grid's.
#[test]
fn an_error_bounded_mesh_keeps_its_bound_and_its_border() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let graph = common::repo().join("graphs/alps.json");
    let (graph, out_dir) = (graph.to_str().expect("path"), d.to_str().expect("path"));
    orogen_ok(
        d,
        &[
            "build",
            graph,
            "--no-cache",
            "--no-preview",
            "--size",
            "300",
            "--format",
            "f32",
            "--mesh",
            "obj",
            "--mesh-error-m",
            "4",
            "-o",
            out_dir,
        ],
    );
    let g = common::load("graphs/alps.json");
    let cell = (g.world.size_m / 300.0) as f32;
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("manifest.json")).expect("manifest"))
            .expect("json");
    let mut checked = 0;
    for o in manifest["outputs"].as_array().expect("outputs") {
        let Some(info) = o.get("mesh") else { continue };
        let name = o["name"].as_str().expect("name");
        let field = read_f32(&d.join(format!("{name}.f32")), 300);
        let (positions, indices, _) = read_obj(&d.join(format!("{name}.obj")));
        let e =
            orogen::io::mesh::simplify::vertical_error(&field, cell, (0, 0), &positions, &indices)
                .expect("the triangles cover the map once");
        assert!(e <= 4.0, "{name}: {e} m");
        assert_eq!(
            info["max_error_m"].as_f64().expect("error") as f32,
            e,
            "{name}"
        );
        let tris = info["triangles"].as_u64().expect("triangles") as usize;
        assert_eq!(tris, indices.len() / 3);
        assert!(
            tris < info["full_triangles"].as_u64().expect("full") as usize,
            "{name}: {tris}"
        );
        // Every border sample is a vertex, at its full-grid position.
        let on_border = positions
            .iter()
            .filter(|p| {
                let (x, z) = (p[0] / cell - 0.5, p[2] / cell - 0.5);
                x.abs() < 1e-3
                    || z.abs() < 1e-3
                    || (x - 299.0).abs() < 1e-3
                    || (z - 299.0).abs() < 1e-3
            })
            .count();
        assert_eq!(on_border, 4 * 299, "{name}");
        checked += 1;
    }
    assert!(checked >= 1);
}

/// A tiled build's meshes: every tile's error is within the bound over the stitched heights
/// it covers, and each pair of neighbouring tiles has the same vertices (positions and normals)
/// along its shared edge, byte for byte in the OBJ text (so the meshes stitch without cracks);
/// the manifest adds the tiles' triangles up.
#[test]
fn tiled_meshes_keep_the_bound_and_share_their_border_vertices() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let graph = common::repo().join("graphs/alps.json");
    let (graph, out_dir) = (graph.to_str().expect("path"), d.to_str().expect("path"));
    orogen_ok(
        d,
        &[
            "build",
            graph,
            "--no-cache",
            "--no-preview",
            "--size",
            "300",
            "--tiles",
            "3x3",
            "--format",
            "f32",
            "--stitch",
            "f32",
            "--mesh",
            "obj",
            "--mesh-error-m",
            "4",
            "-o",
            out_dir,
        ],
    );
    let g = common::load("graphs/alps.json");
    let cell = (g.world.size_m / 300.0) as f32;
    let whole = read_f32(&d.join("height.f32"), 300);
    // Per tile: its window (first and last sample column and row) and its vertices' lines.
    let mut tiles = std::collections::BTreeMap::new();
    let mut triangles = 0;
    for i in 0..3 {
        for j in 0..3 {
            let (positions, indices, lines) =
                read_obj(&d.join(format!("tiles/height_x{i}_y{j}.obj")));
            let (part, (x0, x1), (y0, y1)) = mesh_part(&positions, cell, &whole);
            let sample = |v: f32| (v / cell - 0.5).round() as usize;
            let e = orogen::io::mesh::simplify::vertical_error(
                &part,
                cell,
                (x0, y0),
                &positions,
                &indices,
            )
            .expect("a tile's triangles cover its samples once");
            assert!(e <= 4.0, "tile ({i}, {j}): {e} m");
            assert!(
                indices.len() / 3 < 2 * (x1 - x0) * (y1 - y0),
                "tile ({i}, {j}) simplified"
            );
            triangles += indices.len() / 3;
            let edge = |on: &dyn Fn(usize, usize) -> bool| -> Vec<String> {
                let mut v: Vec<String> = positions
                    .iter()
                    .zip(&lines)
                    .filter(|(p, _)| on(sample(p[0]), sample(p[2])))
                    .map(|(_, l)| l.clone())
                    .collect();
                v.sort();
                v
            };
            let (west, east) = (edge(&|x, _| x == x0), edge(&|x, _| x == x1));
            let (north, south) = (edge(&|_, y| y == y0), edge(&|_, y| y == y1));
            assert_eq!(west.len(), y1 - y0 + 1, "every border sample is a vertex");
            assert_eq!(north.len(), x1 - x0 + 1, "every border sample is a vertex");
            tiles.insert((i, j), ((x0, x1, y0, y1), west, east, north, south));
        }
    }
    for ((i, j), ((_, x1, _, y1), _, east, _, south)) in &tiles {
        if let Some(((x0, ..), west, ..)) = tiles.get(&(i + 1, *j)) {
            assert_eq!(
                x0, x1,
                "tiles ({i}, {j}) and its east neighbour share a column"
            );
            assert!(
                east == west,
                "tile ({i}, {j})'s east edge differs from its neighbour's"
            );
        }
        if let Some(((_, _, y0, _), _, _, north, _)) = tiles.get(&(*i, j + 1)) {
            assert_eq!(
                y0, y1,
                "tiles ({i}, {j}) and its south neighbour share a row"
            );
            assert!(
                south == north,
                "tile ({i}, {j})'s south edge differs from its neighbour's"
            );
        }
    }
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("manifest.json")).expect("manifest"))
            .expect("json");
    let height = manifest["outputs"]
        .as_array()
        .expect("outputs")
        .iter()
        .find(|o| o["name"] == "height")
        .expect("height output");
    assert_eq!(height["mesh"]["triangles"].as_u64(), Some(triangles as u64));
    assert!(height["mesh"]["max_error_m"].as_f64().expect("error") <= 4.0);
}

/// `--format geotiff` works for every graph, colour outputs included (it refused the whole
/// build: "GeoTIFF holds heights"): a colour output is an RGB GeoTIFF of 16-bit bands holding
/// the very values of its 16-bit PNG, a height (`luma`) a float32 one of its values; tiled, each tile is
/// one and the VRT mosaics three UInt16 bands. GDAL reads them.
#[test]
fn geotiff_exports_colour_outputs_as_rgb_with_the_pngs_values() {
    let dir = tempfile::tempdir().expect("tempdir");
    let graph = common::repo().join("tests/data/color.json");
    let g = graph.to_string_lossy().into_owned();
    orogen_ok(
        dir.path(),
        &[
            "build",
            &g,
            "--size",
            "96",
            "--format",
            "geotiff,png16",
            "-o",
            "out",
        ],
    );
    let out = dir.path().join("out");
    let png = image::open(out.join("mixed.png"))
        .expect("png")
        .into_rgb16();
    let tif = image::open(out.join("mixed.geo.tif"))
        .expect("tif")
        .into_rgb16();
    assert_eq!((tif.width(), tif.height()), (96, 96));
    assert_eq!(
        tif.as_raw(),
        png.as_raw(),
        "the GeoTIFF holds the PNG's values"
    );
    let info = gdal("gdalinfo", &["out/mixed.geo.tif"], dir.path());
    assert_eq!(info.matches("Type=UInt16").count(), 3, "{info}");
    assert!(info.contains("ColorInterp=Red"), "{info}");
    let mask = gdal("gdalinfo", &["out/luma.geo.tif"], dir.path());
    assert!(mask.contains("Type=Float32"), "{mask}");
    // Tiled: every tile a GeoTIFF, the VRT three bands over them.
    orogen_ok(
        dir.path(),
        &[
            "build", &g, "--size", "96", "--tiles", "2x2", "--format", "geotiff", "-o", "tiled",
        ],
    );
    let vrt = gdal("gdalinfo", &["tiled/mixed.vrt"], dir.path());
    assert_eq!(vrt.matches("Type=UInt16").count(), 3, "{vrt}");
    let whole = dir.path().join("tiled/whole.tif");
    let whole_s = whole.to_string_lossy().into_owned();
    gdal(
        "gdal_translate",
        &["-q", "tiled/mixed.vrt", &whole_s],
        dir.path(),
    );
    let mosaic = image::open(&whole).expect("mosaic").into_rgb16();
    assert_eq!(
        mosaic.as_raw(),
        png.as_raw(),
        "the tiles mosaic to the whole map's values"
    );
}

/// The part of `whole` a mesh covers (its vertices at samples `cell` metres apart, the first
/// at half a cell): the heights there, and its first and last sample column and row.
fn mesh_part(
    positions: &[[f32; 3]],
    cell: f32,
    whole: &orogen::Field,
) -> (orogen::Field, (usize, usize), (usize, usize)) {
    let sample = |v: f32| (v / cell - 0.5).round() as usize;
    let span = |axis: usize| {
        positions.iter().fold((usize::MAX, 0), |(a, b), p| {
            (a.min(sample(p[axis])), b.max(sample(p[axis])))
        })
    };
    let ((x0, x1), (y0, y1)) = (span(0), span(2));
    let w = whole.width();
    let part = orogen::Field::from_fn(x1 - x0 + 1, y1 - y0 + 1, |x, y| {
        whole.data()[(y0 + y) * w + x0 + x]
    });
    (part, (x0, x1), (y0, y1))
}

/// Checks a heightfield mesh independently of the engine's measurement: every vertex on a
/// sample of the grid (`cell` metres apart, the first at half a cell, the part's first sample
/// `origin`), no triangle without an area in plan nor facing down, every edge used once each
/// way inside and the border one closed loop (a 2-manifold disk, no T-junction), every sample
/// of `part` inside some triangle, and the largest vertical distance between a sample and any
/// triangle over it. Returns that distance.
fn independent_mesh_error(
    positions: &[[f32; 3]],
    indices: &[u32],
    part: &orogen::Field,
    cell: f32,
    origin: (usize, usize),
    what: &str,
) -> f32 {
    use std::collections::HashMap;
    let (w, h) = (part.width(), part.height());
    let grid: Vec<(i64, i64)> = positions
        .iter()
        .map(|p| {
            let (x, z) = (
                p[0] / cell - 0.5 - origin.0 as f32,
                p[2] / cell - 0.5 - origin.1 as f32,
            );
            assert!(
                (x - x.round()).abs() < 1e-2 && (z - z.round()).abs() < 1e-2,
                "{what}: vertex off the grid"
            );
            (x.round() as i64, z.round() as i64)
        })
        .collect();
    let mut edges: HashMap<(u32, u32), usize> = HashMap::new();
    let mut worst = vec![f32::NAN; w * h];
    for t in indices.chunks_exact(3) {
        let (a, b, c) = (
            grid[t[0] as usize],
            grid[t[1] as usize],
            grid[t[2] as usize],
        );
        let cross = (b.0 - a.0) * (c.1 - a.1) - (b.1 - a.1) * (c.0 - a.0);
        assert!(
            cross != 0,
            "{what}: a triangle without area (a sliver) at {a:?} {b:?} {c:?}"
        );
        assert!(
            cross < 0,
            "{what}: a triangle facing down at {a:?} {b:?} {c:?}"
        );
        for e in 0..3 {
            *edges.entry((t[e], t[(e + 1) % 3])).or_default() += 1;
        }
        let z = [
            positions[t[0] as usize][1],
            positions[t[1] as usize][1],
            positions[t[2] as usize][1],
        ];
        let (x0, x1) = (a.0.min(b.0).min(c.0), a.0.max(b.0).max(c.0));
        let (y0, y1) = (a.1.min(b.1).min(c.1), a.1.max(b.1).max(c.1));
        for j in y0.max(0)..=y1.min(h as i64 - 1) {
            for i in x0.max(0)..=x1.min(w as i64 - 1) {
                // Exact barycentric numerators (all ≤ 0 inside, as the area).
                let wa = (b.0 - i) * (c.1 - j) - (b.1 - j) * (c.0 - i);
                let wb = (c.0 - i) * (a.1 - j) - (c.1 - j) * (a.0 - i);
                let wc = cross - wa - wb;
                if wa > 0 || wb > 0 || wc > 0 {
                    continue;
                }
                let at = (wa as f64 * f64::from(z[0])
                    + wb as f64 * f64::from(z[1])
                    + wc as f64 * f64::from(z[2]))
                    / cross as f64;
                let k = j as usize * w + i as usize;
                let e = (at as f32 - part.data()[k]).abs();
                worst[k] = if worst[k].is_nan() {
                    e
                } else {
                    worst[k].max(e)
                };
            }
        }
    }
    assert!(
        edges.values().all(|&n| n == 1),
        "{what}: an edge used twice the same way"
    );
    let border: Vec<(u32, u32)> = edges
        .keys()
        .filter(|(a, b)| !edges.contains_key(&(*b, *a)))
        .copied()
        .collect();
    let next: HashMap<u32, u32> = border.iter().copied().collect();
    assert_eq!(
        next.len(),
        border.len(),
        "{what}: a border vertex starts two border edges"
    );
    let start = border[0].0;
    let (mut v, mut steps) = (start, 0);
    loop {
        v = next[&v];
        steps += 1;
        if v == start || steps > border.len() {
            break;
        }
    }
    assert_eq!(steps, border.len(), "{what}: the border is not one loop");
    assert!(
        worst.iter().all(|e| !e.is_nan()),
        "{what}: a sample under no triangle"
    );
    worst.iter().copied().fold(0.0, f32::max)
}

/// Error-bounded meshes of the flagship, whole-map and tiled, checked independently of the
/// engine's own measurement: no sliver nor T-junction, one border loop per mesh, and every
/// sample within the bound of every triangle over it (the manifest's max_error_m no smaller
/// than what is found). Slivers along locked borders once carried errors of 2.95 m past a
/// 0.5 m bound.
#[test]
fn error_bounded_meshes_hold_their_bound_with_no_slivers() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let n = 256;
    let g = common::load("graphs/alpine_valley.json");
    let cell = (g.world.size_m / n as f64) as f32;
    for (bound, tiles) in [("0.5", None), ("5", None), ("5", Some("2x2"))] {
        let out = d.join(format!("m{bound}-{}", tiles.unwrap_or("whole")));
        let out_s = out.to_str().expect("utf-8").to_owned();
        let size = n.to_string();
        let mut args = vec![
            "build",
            "graphs/alpine_valley.json",
            "--size",
            &size,
            "--format",
            "f32",
            "--no-preview",
            "--no-cache",
            "--mesh",
            "obj",
            "--mesh-error-m",
            bound,
            "-o",
            &out_s,
        ];
        if let Some(t) = tiles {
            args.extend_from_slice(&["--tiles", t, "--stitch", "f32"]);
        }
        orogen_ok(&common::repo(), &args);
        let whole = read_f32(&out.join("height.f32"), n);
        let bound: f32 = bound.parse().expect("number");
        let meshes: Vec<std::path::PathBuf> = match tiles {
            None => vec![out.join("height.obj")],
            Some(_) => (0..2)
                .flat_map(|i| (0..2).map(move |j| (i, j)))
                .map(|(i, j)| out.join(format!("tiles/height_x{i}_y{j}.obj")))
                .collect(),
        };
        for m in meshes {
            let (positions, indices, _) = read_obj(&m);
            let (part, (x0, x1), (y0, y1)) = mesh_part(&positions, cell, &whole);
            let what = m.display().to_string();
            let e = independent_mesh_error(&positions, &indices, &part, cell, (x0, y0), &what);
            // The OBJ's text rounds heights to its printed digits.
            assert!(e <= bound + 2e-3, "{what}: {e} m past the {bound} m bound");
            // Fewer triangles than the grid's: at 5 m under half of them for the whole map,
            // under three quarters for a tile (its border kept whole, and the flagship's crags,
            // 76 m a cell at 50° at this size, fill the eastern tiles).
            let grid = 2 * (x1 - x0) * (y1 - y0);
            let most = match (bound >= 5.0, tiles) {
                (true, None) => grid / 2,
                (true, Some(_)) => grid * 3 / 4,
                (false, _) => grid,
            };
            assert!(
                indices.len() / 3 < most,
                "{what}: {} of {grid} triangles",
                indices.len() / 3
            );
        }
    }
}

/// The independent mesh check on a build folder made by hand (large sizes, not run by
/// `cargo test`): `OROGEN_MESH_DIR=out OROGEN_MESH_SIZE=1024 OROGEN_MESH_BOUND=0.5 cargo test
/// -p orogen --test integration -- --ignored build_folder_meshes`, after `orogen build
/// graphs/alpine_valley.json --size 1024 --format f32 --no-preview --mesh obj --mesh-error-m
/// 0.5 [--tiles AxB --stitch f32] -o out`. Prints each mesh's largest error.
#[test]
#[ignore = "needs a build folder: see the doc comment"]
fn build_folder_meshes_hold_their_bound() {
    let var = |k: &str| std::env::var(k).unwrap_or_else(|_| panic!("{k} is not set"));
    let dir = std::path::PathBuf::from(var("OROGEN_MESH_DIR"));
    let n: usize = var("OROGEN_MESH_SIZE").parse().expect("size");
    let bound: f32 = var("OROGEN_MESH_BOUND").parse().expect("bound");
    let g = common::load("graphs/alpine_valley.json");
    let cell = (g.world.size_m / n as f64) as f32;
    let whole = read_f32(&dir.join("height.f32"), n);
    let mut meshes = vec![dir.join("height.obj")];
    if let Ok(tiles) = std::fs::read_dir(dir.join("tiles")) {
        meshes = tiles
            .map(|e| e.expect("entry").path())
            .filter(|p| {
                p.extension().is_some_and(|x| x == "obj")
                    && p.to_string_lossy().contains("height_x")
            })
            .collect();
        meshes.sort();
    }
    for m in meshes {
        let (positions, indices, _) = read_obj(&m);
        let (part, (x0, _), (y0, _)) = mesh_part(&positions, cell, &whole);
        let what = m.display().to_string();
        let e = independent_mesh_error(&positions, &indices, &part, cell, (x0, y0), &what);
        eprintln!(
            "{what}: {} triangles, largest error {e} m",
            indices.len() / 3
        );
        assert!(e <= bound + 2e-3, "{what}: {e} m past the {bound} m bound");
    }
}
