//! Colour tests: the colour port's coercions, colorize / color_blend / solid_color against
//! their formulas, RGB files read back what was written (PNG 8/16-bit, TIFF, EXR, F32),
//! builds write colour outputs and their previews, golden images and preview–build parity.

use crate::common;

use orogen::build::{evaluate_outputs, Exports};
use orogen::document::graph_file;
use orogen::field::Field;
use orogen::io::heightmap::{self, srgb_decode, srgb_encode, Format};
use orogen::node::{splitmix64, PortKind, LUMINANCE};
use orogen::World;

fn graph() -> orogen::graph::Graph {
    common::load("tests/data/color.json")
}

/// A random colour field with values spread over [0, 1], dark values included.
fn random_color(w: usize, h: usize, seed: u64) -> Field {
    let planes: Vec<Field> = (0..3u64)
        .map(|c| {
            Field::from_fn(w, h, |x, y| {
                let r = splitmix64(seed ^ splitmix64(c * 1_000_003 + (y * w + x) as u64));
                let v = (r % 100_000) as f32 / 99_999.0;
                v * v // more dark values, where sRGB and linear differ most
            })
        })
        .collect();
    Field::from_planes(&planes).expect("planes")
}

#[test]
fn srgb_encoding_round_trips_and_matches_the_standard() {
    for k in 0..=1000 {
        let v = k as f32 / 1000.0;
        assert!((srgb_decode(srgb_encode(v)) - v).abs() < 2e-6, "{v}");
    }
    // IEC 61966-2-1: linear 0.5 is sRGB 0.7354; the linear segment below 0.0031308.
    assert!((srgb_encode(0.5) - 0.735_357).abs() < 1e-5);
    assert!((srgb_encode(0.001) - 0.012_92).abs() < 1e-7);
    assert_eq!(srgb_encode(-1.0), 0.0);
    assert_eq!(srgb_encode(2.0), 1.0);
    assert_eq!(srgb_encode(f32::NAN), 0.0);
}

/// Colour fields written as PNG8, PNG16, TIFF16 and EXR read back as what was written:
/// EXR exactly, the integer formats within half a step of their sRGB codes; F32 and R16
/// are interleaved R, G, B.
#[test]
fn colour_round_trips_through_png8_png16_tiff16_exr_f32_and_r16() {
    let (w, h) = (37, 23);
    let c = random_color(w, h, 9);
    let world = World {
        size_m: 1000.0,
        height_min_m: 0.0,
        height_max_m: 1.0,
    };
    let dir = tempfile::tempdir().expect("tempdir");
    for (format, step) in [
        (Format::Exr, 0.0),
        (Format::Png16, 1.0 / 65535.0),
        (Format::Tiff16, 1.0 / 65535.0),
        (Format::Png8, 1.0 / 255.0),
    ] {
        let path = dir.path().join(format!("c.{}", format.name()));
        heightmap::write(&path, &c, &world, format).expect("write");
        let back = heightmap::read_color(&path).expect("read");
        assert_eq!((back.width(), back.height(), back.channels()), (w, h, 3));
        for (a, b) in c.data().iter().zip(back.data()) {
            if format == Format::Exr {
                assert_eq!(a, b);
            } else {
                // Compared as sRGB codes: half a step, plus float noise.
                let d = (srgb_encode(*a) - srgb_encode(*b)).abs();
                assert!(d <= 0.5 * step + 1e-6, "{format:?}: {a} → {b} ({d})");
            }
        }
    }
    let n = w * h;
    let f32s = heightmap::encode(&c, &world, Format::F32).expect("f32");
    let r16 = heightmap::encode(&c, &world, Format::R16).expect("r16");
    assert_eq!((f32s.len(), r16.len()), (n * 12, n * 6));
    for i in [0, 1, 2, 3, 3 * n - 1] {
        let (pixel, ch) = (i / 3, i % 3);
        let want = c.plane(ch)[pixel];
        let f = f32::from_le_bytes(f32s[4 * i..4 * i + 4].try_into().expect("4"));
        assert_eq!(f, want);
        let u = u16::from_le_bytes(r16[2 * i..2 * i + 2].try_into().expect("2"));
        assert_eq!(u, (srgb_encode(want) * 65535.0).round() as u16);
    }
}

/// Mask → colour is the grey (m, m, m); colour → mask the Rec. 709 luminance, clamped;
/// height → colour and colour → height are refused with what to do instead.
#[test]
fn colour_coercions_follow_their_documented_formulas() {
    use orogen::node::Coercion;
    assert_eq!(
        Coercion::between(PortKind::Mask, PortKind::Color),
        Some(Coercion::MaskToColor)
    );
    assert_eq!(
        Coercion::between(PortKind::Color, PortKind::Mask),
        Some(Coercion::ColorToMask)
    );
    assert_eq!(Coercion::between(PortKind::Height, PortKind::Color), None);
    assert_eq!(Coercion::between(PortKind::Color, PortKind::Height), None);

    let g = graph();
    let out = evaluate_outputs(&g, Some(64)).expect("eval");
    // luma = lerp(0, hills, luminance(shaded)).
    let (shaded, hills) = (&out["shaded"], &{
        let mut g2 = g.clone();
        g2.outputs = [("h".into(), orogen::graph::PortRef::new("hills", "out"))].into();
        evaluate_outputs(&g2, Some(64)).expect("eval")["h"].clone()
    });
    for i in 0..64 * 64 {
        let y: f32 = (0..3).map(|c| LUMINANCE[c] * shaded.plane(c)[i]).sum();
        let want = y.clamp(0.0, 1.0) * hills.data()[i];
        assert!((out["luma"].data()[i] - want).abs() < 1e-3, "{i}");
    }
    // shaded = mixed · (1 − 0.5 + 0.5·high) with the mask `high` as a grey.
    let mut g3 = g.clone();
    g3.outputs = [("m".into(), orogen::graph::PortRef::new("high", "out"))].into();
    let high = evaluate_outputs(&g3, Some(64)).expect("eval")["m"].clone();
    for c in 0..3 {
        for i in 0..64 * 64 {
            let (a, m) = (out["mixed"].plane(c)[i], high.data()[i]);
            let want = a + 0.5 * (a * m - a);
            assert!((shaded.plane(c)[i] - want).abs() < 1e-6);
        }
    }

    // A height wired into a colour input is a warning naming colorize.
    let text = std::fs::read_to_string(common::repo().join("tests/data/color.json"))
        .expect("read")
        .replace(
            "\"b\": \"rock.out\" }, \"params\": { \"mode\": \"overlay\" }",
            "\"b\": \"hills.out\" }, \"params\": { \"mode\": \"overlay\" }",
        );
    let g4 = graph_file::load_str(&text, "color.json").expect("a mismatch is a warning");
    let msgs: Vec<String> = g4.validate().iter().map(ToString::to_string).collect();
    assert!(
        msgs.iter().any(|m| m.contains("port type mismatch: \"hills.out\" is a height output but this input expects a color; insert a \"colorize\" node to turn heights into colours")),
        "{msgs:#?}"
    );
}

/// colorize: a grey gradient over the graph's height range gives the height's fraction in
/// every channel; a mask picks the colour at its value; shift moves along the gradient;
/// the custom stops pass through their colours at their positions.
#[test]
fn colorize_reads_the_gradient_at_the_height_or_mask() {
    let text = r#"{ "format": "orogen-graph", "version": 1, "name": "c", "seed": 1,
      "world": { "size_m": 1000.0, "height_min_m": -100.0, "height_max_m": 300.0 }, "resolution": 32,
      "nodes": [
        { "id": "ramp", "type": "linear_gradient", "params": { "angle_deg": 30.0 } },
        { "id": "grey", "type": "colorize", "inputs": { "height": "ramp.out" }, "params": { "palette": "grey" } },
        { "id": "by_mask", "type": "colorize", "inputs": { "height": "ramp.out", "mask": "ramp.out" },
          "params": { "palette": "custom", "stops": "0 #000000, 0.5 #ff0000, 1 #ffffff", "shift": 0.25 } },
        { "id": "metres", "type": "colorize", "inputs": { "height": "ramp.out" },
          "params": { "palette": "grey", "range": "metres", "low_m": 0.0, "high_m": 200.0 } }
      ],
      "outputs": { "ramp": "ramp.out", "grey": "grey.out", "by_mask": "by_mask.out", "metres": "metres.out" } }"#;
    let g = graph_file::load_str(text, "c.json").expect("graph");
    let out = evaluate_outputs(&g, Some(32)).expect("eval");
    // The ramp (a mask) wired into the height input is the height −100 + 400·m.
    let m = &out["ramp"];
    let red = srgb_decode(1.0);
    for i in 0..32 * 32 {
        let h = -100.0 + 400.0 * m.data()[i];
        let t = (h + 100.0) / 400.0;
        let tm = (h / 200.0).clamp(0.0, 1.0);
        for c in 0..3 {
            assert!((out["grey"].plane(c)[i] - t.clamp(0.0, 1.0)).abs() < 1e-5);
            assert!((out["metres"].plane(c)[i] - tm).abs() < 1e-5);
        }
        // Custom: black → red at 0.5 → white, read at mask + 0.25.
        let u = (m.data()[i] + 0.25).clamp(0.0, 1.0);
        let want = if u <= 0.5 {
            [red * u / 0.5, 0.0, 0.0]
        } else {
            let k = (u - 0.5) / 0.5;
            [red, k, k]
        };
        for (c, w) in want.iter().enumerate() {
            assert!((out["by_mask"].plane(c)[i] - w).abs() < 1e-5, "{i} {c}");
        }
    }
}

/// Bad gradients and colours are errors naming the node and the parameter; a colorize
/// without its terrain is incomplete (a document, not an error), like any unwired input.
#[test]
fn bad_colour_parameters_are_errors_naming_the_parameter() {
    let text = r#"{ "format": "orogen-graph", "version": 1, "name": "c", "seed": 1,
      "world": { "size_m": 1000.0, "height_min_m": 0.0, "height_max_m": 100.0 }, "resolution": 16,
      "nodes": [
        { "id": "h", "type": "constant" },
        { "id": "bad_stops", "type": "colorize", "inputs": { "height": "h.out" },
          "params": { "palette": "custom", "stops": "0 #000000, 0.3 #12" } },
        { "id": "bad_colour", "type": "solid_color", "params": { "color": "white" } },
        { "id": "unwired", "type": "colorize" }
      ],
      "outputs": { "a": "bad_stops.out", "b": "bad_colour.out", "c": "unwired.out" } }"#;
    let g = graph_file::load_str(text, "c.json").expect("graph");
    let res = orogen::eval::Evaluator::new()
        .evaluate(&g, &orogen::eval::EvalOptions::default())
        .expect("evaluates");
    let errors: Vec<(String, String)> = res
        .failures()
        .into_iter()
        .map(|(id, e)| (id.to_owned(), e.to_string()))
        .collect();
    assert_eq!(
        errors,
        vec![
            (
                "bad_colour".to_owned(),
                "parameter \"color\": \"white\" is not a colour \"#rrggbb\"".to_owned()
            ),
            (
                "bad_stops".to_owned(),
                "parameter \"stops\": stop 2: \"#12\" is not a colour \"#rrggbb\"".to_owned()
            ),
        ]
    );
    assert_eq!(
        res.status["unwired"],
        orogen::eval::NodeStatus::Incomplete {
            reason: "inputs.height: required height input is not connected".to_owned()
        }
    );
}

/// A build writes a colour output as 16-bit RGB PNG (sRGB) and EXR (linear), records it as
/// kind "color", and writes an 8-bit preview (tiled builds: tests/tiles.rs).
#[test]
fn builds_write_colour_outputs_and_previews() {
    let g = graph();
    let dir = tempfile::tempdir().expect("tempdir");
    let exports = Exports {
        formats: vec![Format::Png16, Format::Exr],
        ..Exports::default()
    };
    let report = common::build_into(&g, dir.path(), exports, 64);
    let truth = &evaluate_outputs(&g, Some(64)).expect("eval")["mixed"];
    let entry = report
        .manifest
        .outputs
        .iter()
        .find(|o| o.name == "mixed")
        .expect("entry");
    assert_eq!(
        (entry.kind.as_str(), entry.file.as_str()),
        ("color", "mixed.png")
    );
    let png = image::open(dir.path().join("mixed.png")).expect("png");
    assert_eq!(png.color(), image::ColorType::Rgb16);
    let exr = heightmap::read_color(&dir.path().join("mixed.exr")).expect("exr");
    assert_eq!(&exr, truth);
    let preview = image::open(dir.path().join("mixed.preview.png")).expect("preview");
    assert_eq!(
        (preview.width(), preview.height(), preview.color()),
        (64, 64, image::ColorType::Rgb8)
    );
    // The preview is the colour (no terrain output to light it here): sRGB codes.
    let rgb = preview.to_rgb8();
    let p = rgb.get_pixel(10, 20);
    for c in 0..3 {
        let want = (srgb_encode(truth.plane(c)[20 * 64 + 10]) * 255.0).round() as u8;
        assert_eq!(p[c], want);
    }
}

/// Each colour node's output in tests/data/color.json at 256² matches its golden PNG in
/// tests/golden/color/ (16-bit sRGB).
#[test]
fn golden_images_of_the_colour_nodes() {
    common::check_goldens(&graph(), "color");
}

/// `orogen parity` 256² → 1024²: the colour nodes read their drivers cell by cell, so a
/// colour map predicts its build as well as its drivers do (0.25%).
#[test]
fn colour_previews_predict_builds() {
    let path = common::repo().join("tests/data/color.json");
    let g = graph();
    let rows = orogen::parity::compare(&g, path.parent(), 256, 1024, &[]).expect("parity");
    for kind in ["colorize", "color_blend", "solid_color"] {
        assert!(
            rows.iter().any(|r| r.kind == kind && r.tolerance.is_some()),
            "{kind}"
        );
    }
    for r in &rows {
        assert!(r.ok(), "{} {}.{}: {r:?}", r.kind, r.node, r.output);
    }
}
