//! Helpers shared by the test files: repository paths and golden-image comparison.

use orogen::build::{build, evaluate_outputs, BuildOptions, BuildReport, Exports};
use orogen::document::graph_file;
use orogen::graph::Graph;
use orogen::io::heightmap::{self, Format};
use orogen::node::{ParamKind, ParamValue, PortKind};
use orogen::World;
use std::path::{Path, PathBuf};

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Builds `graph` at `size`² into `dir` with `exports` (all outputs or nothing); panics if
/// the build fails.
pub fn build_into(graph: &Graph, dir: &Path, exports: Exports, size: usize) -> BuildReport {
    build(
        graph,
        &BuildOptions {
            out_dir: dir.to_path_buf(),
            exports,
            resolution: Some(size),
            graph_file: None,
            allow_outside: &[],
            keep_going: false,
            cancel: orogen::eval::CancelToken::new(),
            progress: None,
            cache: None,
            arrays: None,
        },
    )
    .expect("build")
}

pub fn load(rel: &str) -> Graph {
    graph_file::load_file(&repo().join(rel)).unwrap_or_else(|d| panic!("{d}"))
}

/// Every output of `graph` at 256² matches `tests/golden/<dir>/<output>.png` within 0.1% of
/// the range at any pixel and 0.01% on average (room for libm differences between machines;
/// on one machine results are bit-exact; `tests/golden/hashes.txt` pins the exact bytes).
/// `OROGEN_BLESS=1` writes them all; without it a missing golden fails (a test that writes
/// its own expectation cannot fail); a mismatch writes `<output>.new.png` beside the golden.
pub fn check_goldens(graph: &Graph, dir: &str) {
    let outputs = evaluate_outputs(graph, Some(256)).expect("eval");
    let bless = std::env::var_os("OROGEN_BLESS").is_some();
    let mut failures = Vec::new();
    for (name, field) in &outputs {
        let kind = graph.output_kind(&graph.outputs[name]).expect("kind");
        // Scalars are compared as they are shown: over their own range, on a log scale
        // when they span decades (a drainage area), so small values count too.
        let scalar;
        let (field, frame) = match kind {
            PortKind::Height => (field, graph.world),
            PortKind::Mask | PortKind::Color => (
                field,
                World {
                    height_min_m: 0.0,
                    height_max_m: 1.0,
                    ..graph.world
                },
            ),
            PortKind::Scalar => {
                let (lo, hi) = field.min_max().expect("values");
                let (shown, lo, hi) = orogen::io::render::scalar_display(field, lo, hi);
                scalar = shown;
                (
                    &scalar,
                    World {
                        height_min_m: f64::from(lo),
                        height_max_m: f64::from(hi),
                        ..graph.world
                    },
                )
            }
        };
        let path = repo().join(format!("tests/golden/{dir}/{name}.png"));
        // Colours: 16-bit sRGB codes, plane by plane.
        let code = |v: f32| match kind {
            PortKind::Color => (heightmap::srgb_encode(v) * 65535.0).round() as u16,
            _ => heightmap::to_u16(v, &frame),
        };
        let got: Vec<u16> = field.data().iter().map(|&v| code(v)).collect();
        if bless {
            heightmap::write(&path, field, &frame, Format::Png16).expect("write golden");
            continue;
        }
        if !path.exists() {
            failures.push(format!(
                "{name}: no golden at {} (OROGEN_BLESS=1 writes it; review it before committing)",
                path.display()
            ));
            continue;
        }
        let want: Vec<u16> = if kind == PortKind::Color {
            let golden = heightmap::read_color(&path).expect("read golden");
            golden.data().iter().map(|&v| code(v)).collect()
        } else {
            let (golden, _) = heightmap::read(&path).expect("read golden");
            golden
                .data()
                .iter()
                .map(|v| (v * 65535.0).round() as u16)
                .collect()
        };
        let diffs: Vec<u32> = got
            .iter()
            .zip(&want)
            .map(|(a, b)| u32::from(a.abs_diff(*b)))
            .collect();
        let max = diffs.iter().copied().max().unwrap_or(0);
        let mean = diffs.iter().map(|&d| f64::from(d)).sum::<f64>() / diffs.len().max(1) as f64;
        if want.len() != got.len() || max > 66 || mean > 6.6 {
            let new = path.with_extension("new.png");
            let _ = heightmap::write(&new, field, &frame, Format::Png16);
            failures.push(format!(
                "{name}: max diff {max}, mean {mean:.2} (wrote {})",
                new.display()
            ));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// [`random_value`] for a parameter, except that an erosion node's coarse-to-fine base grid
/// is drawn small: on the tests' small maps a base of 4096² would test nothing more than 32²
/// and cost minutes per case (32² is above the tests' 24² maps, so the base and the
/// averaging down are both exercised).
pub fn random_param(spec: &orogen::node::ParamSpec, r: f64, flag: bool) -> ParamValue {
    match random_value(spec.kind, r, flag) {
        ParamValue::Int(v) if spec.name == "base_resolution" => ParamValue::Int(v.min(32)),
        v => v,
    }
}

/// A parameter value drawn from `r` in [0, 1) and `flag`: half the draws inside the slider
/// range, half anywhere in the hard range, and the hard limits themselves.
pub fn random_value(kind: ParamKind, r: f64, flag: bool) -> ParamValue {
    match kind {
        // Half the cases inside the slider range, half anywhere in the hard range, and the
        // hard limits themselves.
        ParamKind::Float { soft, hard, .. } => {
            let (lo, hi) = if flag { soft } else { hard };
            let v = if r < 0.05 {
                hard.0
            } else if r > 0.95 {
                hard.1
            } else {
                lo + (hi - lo) * r
            };
            ParamValue::Float(v.clamp(hard.0, hard.1))
        }
        ParamKind::Int { soft, hard, .. } => {
            // Integers are mostly counts (octaves, iterations, steps): draws from the hard range
            // stop at 4× the slider's top, so a case costs milliseconds, not minutes. Huge
            // counts are the hardening issue's memory/time guards, not a correctness question.
            let (lo, hi) = if flag {
                soft
            } else {
                (hard.0, hard.1.min(soft.1.saturating_mul(4)))
            };
            let v = lo as f64 + ((hi - lo) as f64 * r).round();
            ParamValue::Int((v as i64).clamp(hard.0, hard.1))
        }
        ParamKind::Seed { .. } => ParamValue::Int((r * f64::from(u32::MAX)) as i64),
        ParamKind::Bool { .. } => ParamValue::Bool(flag),
        ParamKind::Choice { options, .. } => {
            ParamValue::Choice(((r * options.len() as f64) as usize).min(options.len() - 1))
        }
        ParamKind::Text { .. } => ParamValue::Text(if flag {
            String::new()
        } else {
            format!("missing-{r}.png")
        }),
    }
}

/// The lake levels of a priority flood from the border (Barnes et al. 2014), the reference
/// for stream power's basin-graph routing and the lakes node: each cell's filled level is the lowest, over all
/// paths to the border, of the highest cell on the path.
pub fn priority_flood(z: &[f32], w: usize, h: usize) -> Vec<f32> {
    use std::cmp::Reverse;
    let key = |v: f32| Reverse(orogen::nodes::erosion::flow::order_key(v));
    let mut filled = vec![f32::INFINITY; w * h];
    let mut heap = std::collections::BinaryHeap::new();
    for i in 0..w * h {
        let (x, y) = (i % w, i / w);
        if x == 0 || y == 0 || x + 1 == w || y + 1 == h {
            filled[i] = z[i];
            heap.push((key(z[i]), i));
        }
    }
    while let Some((Reverse(k), c)) = heap.pop() {
        if k != orogen::nodes::erosion::flow::order_key(filled[c]) {
            continue;
        }
        let (x, y) = ((c % w) as i64, (c / w) as i64);
        for (dx, dy) in orogen::nodes::erosion::flow::D8 {
            let (nx, ny) = (x + i64::from(dx), y + i64::from(dy));
            if nx < 0 || ny < 0 || nx >= w as i64 || ny >= h as i64 {
                continue;
            }
            let j = ny as usize * w + nx as usize;
            let level = z[j].max(filled[c]);
            if level < filled[j] {
                filled[j] = level;
                heap.push((key(level), j));
            }
        }
    }
    filled
}

/// Mean |h − mean of its four neighbours| over the inner cells: the cell-to-cell roughness
/// (a checkerboard of overshooting updates raises it; erosion detail at the cells makes it).
pub fn roughness(f: &orogen::field::Field) -> f64 {
    let (w, h, d) = (f.width(), f.height(), f.data());
    let mut s = 0.0f64;
    for y in 1..h - 1 {
        for x in 1..w - 1 {
            let i = y * w + x;
            let m = (d[i - 1] + d[i + 1] + d[i - w] + d[i + w]) / 4.0;
            s += f64::from((d[i] - m).abs());
        }
    }
    s / ((w - 2) * (h - 2)) as f64
}
