//! `orogen stats`: statistics of each output.

use super::args::load_graph;
use super::args::GraphArgs;
use super::EXIT_FAILED;
use super::EXIT_INVALID;
use std::process::ExitCode;

pub(super) fn run_stats(
    input: &GraphArgs,
    only: Option<&str>,
    sea_level: Option<f32>,
    bins: usize,
) -> ExitCode {
    let (graph_path, size) = (input.source.graph.as_path(), input.size);
    if sea_level.is_some_and(|s| !s.is_finite()) {
        eprintln!("error: --sea-level: expected a finite height in metres");
        return ExitCode::from(EXIT_INVALID);
    }
    let graph = match load_graph(input, None) {
        Ok(g) => g,
        Err(code) => return code,
    };
    if let Some(name) = only {
        if !graph.outputs.contains_key(name) {
            let names: Vec<&str> = graph.outputs.keys().map(String::as_str).collect();
            eprintln!(
                "{}: no output \"{name}\"; the outputs are {}",
                orogen::io::owned::escape_path(graph_path),
                orogen::node::quoted_list(&names)
            );
            return ExitCode::from(EXIT_INVALID);
        }
    }
    let result = orogen::eval::Evaluator::new().evaluate(
        &graph,
        &orogen::eval::EvalOptions {
            resolution: size,
            base_dir: graph_path.parent(),
            allow_outside: &input.source.allow_outside,
            ..orogen::eval::EvalOptions::default()
        },
    );
    let result = match result {
        Ok(r) => r,
        Err(d) => {
            for item in d {
                eprintln!("{}: {item}", orogen::io::owned::escape_path(graph_path));
            }
            return ExitCode::from(EXIT_INVALID);
        }
    };
    let mut failed = false;
    for (name, r) in graph
        .outputs
        .iter()
        .filter(|(n, _)| only.is_none_or(|o| o == n.as_str()))
    {
        let Some(field) = result.field(&graph, r) else {
            eprintln!("{name}: not computed ({:?})", result.status.get(&r.node));
            failed = true;
            continue;
        };
        let kind = graph.output_kind(r);
        // Colours are measured by their luminance.
        let field = if kind == Some(orogen::node::PortKind::Color) {
            std::sync::Arc::new(orogen::node::luminance(&field))
        } else {
            field
        };
        let s = orogen::analysis::stats(&field, &graph.world, bins, sea_level);
        println!(
            "{name} ({r}, {}×{}, cell {:.3} m)",
            field.width(),
            field.height(),
            graph.world.cell_size_m(field.width())
        );
        println!(
            "  min {:.3}  max {:.3}  mean {:.3}  std {:.3}  median {:.3}",
            s.min, s.max, s.mean, s.std_dev, s.median
        );
        if kind == Some(orogen::node::PortKind::Scalar) {
            // A quantity in its own unit (a drainage area): slopes, hypsometry and a coastline
            // would describe it as if it were a terrain.
            println!("  a scalar in its own unit: no slope, hypsometry, spectrum or coastline");
        } else {
            let [p50, p90, p99] = s.slope_percentiles_deg;
            println!(
                "  slope mean {:.2}°  p50 {p50:.1}°  p90 {p90:.1}°  p99 {p99:.1}°  hypsometric integral {:.3}",
                s.mean_slope_deg, s.hypsometric_integral
            );
            let cell = graph.world.cell_size_m(field.width());
            let spectrum = (kind == Some(orogen::node::PortKind::Height))
                .then(|| orogen::analysis::spectrum(&field, cell))
                .flatten();
            if let Some(sp) = spectrum {
                println!(
                    "  height spectrum P(k) ∝ k^-β: β = {:.2} over wavelengths {:.0} m … {:.0} m",
                    sp.beta, sp.band_m.0, sp.band_m.1
                );
            }
            match &s.coastline {
                Some(c) => println!(
                    "  coastline fractal dimension at sea level {:.3}: D = {:.4}  (boxes: {})",
                    s.sea_level,
                    c.dimension,
                    c.counts
                        .iter()
                        .map(|(e, n)| format!("ε={e}: {n}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                None => println!("  no coastline at sea level {:.3}", s.sea_level),
            }
        }
        let peak = s.histogram.iter().copied().max().unwrap_or(1).max(1);
        let width = (s.max - s.min) / s.histogram.len() as f32;
        for (i, &count) in s.histogram.iter().enumerate() {
            let lo = s.min + width * i as f32;
            let bar = "#".repeat((count * 40).div_ceil(peak) as usize);
            println!("  {lo:>10.2} … {:>10.2} {count:>9} {bar}", lo + width);
        }
    }
    ExitCode::from(if failed { EXIT_FAILED } else { 0 })
}
