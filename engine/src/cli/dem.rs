//! `orogen new --from-dem`: a graph whose world is a real DEM's (`document::dem`).

use super::{EXIT_FAILED, EXIT_INVALID};
use orogen::io::owned::escape_path;
use std::path::Path;
use std::process::ExitCode;

/// `orogen new --from-dem DEM -o GRAPH [--resolution N]`.
pub(super) fn run_new_from_dem(dem_path: &Path, out: &Path, resolution: Option<usize>) -> ExitCode {
    let folder = out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let made =
        match orogen::document::dem::from_dem(dem_path, folder, resolution, &escape_path(out)) {
            Ok(m) => m,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(EXIT_INVALID);
            }
        };
    if let Err(e) = orogen::io::atomic::write_atomic(out, |f| {
        std::io::Write::write_all(f, made.text.as_bytes())
    }) {
        eprintln!("error: {}: {e}", escape_path(out));
        return ExitCode::from(EXIT_FAILED);
    }
    let (dem, resolution) = (&made.dem, made.resolution);
    let (w, h) = (dem.field.width(), dem.field.height());
    let world = &made.json["world"];
    println!(
        "{}: {w} × {h} DEM{}; world {:.1} m across, heights {}…{} m, resolution {resolution}{}",
        escape_path(out),
        match dem.size_m() {
            Some((x, y)) => format!(" of {x:.1} × {y:.1} m"),
            None => " without a georeference (1 m cells assumed)".to_owned(),
        },
        world["size_m"].as_f64().unwrap_or(0.0),
        world["height_min_m"],
        world["height_max_m"],
        if dem.filled > 0 {
            format!(
                "; {} no-data cells filled (GeoTIFF exports mark them no data: the graph's \"nodata\")",
                dem.filled
            )
        } else {
            String::new()
        }
    );
    if let Some(g) = dem.georef {
        println!(
            "georeference: {}; GeoTIFF exports are placed on the DEM's extent",
            g.epsg.map_or_else(
                || "a CRS without an EPSG code (exports name no CRS)".to_owned(),
                |c| format!("EPSG:{c}")
            )
        );
    }
    if let Some(note) = &made.note {
        println!("{note}");
    }
    ExitCode::SUCCESS
}
