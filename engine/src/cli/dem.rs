//! `orogen new --from-dem`: a graph whose world is a real DEM's.

use super::{EXIT_FAILED, EXIT_INVALID};
use orogen::io::{geotiff, trust};
use std::path::Path;
use std::process::ExitCode;

/// The graph for `dem` (read from `dem_path`), importing it from `rel` (the DEM's path from
/// the graph's folder), at `resolution` samples per side.
fn graph_json(dem: &geotiff::Dem, rel: &str, resolution: usize, name: &str) -> serde_json::Value {
    let (lo, hi) = dem.field.min_max().unwrap_or((0.0, 1.0));
    let (lo, hi) = (f64::from(lo).floor(), f64::from(hi).ceil());
    let hi = if hi > lo { hi } else { lo + 1.0 };
    let size_m = dem
        .size_m()
        .map_or(dem.field.width() as f64, |(x, y)| x.max(y));
    let mut world = serde_json::json!({ "size_m": size_m, "height_min_m": lo, "height_max_m": hi });
    if let (Some(g), Some(w)) = (dem.georef, world.as_object_mut()) {
        // Exports are placed where the DEM lies, in its coordinate system.
        let b = g.bounds(dem.field.width(), dem.field.height());
        let mut geo = serde_json::json!({
            "geographic": b.geographic,
            "west": b.west, "south": b.south, "east": b.east, "north": b.north,
        });
        if let (Some(code), Some(o)) = (b.epsg, geo.as_object_mut()) {
            o.insert("crs".into(), format!("EPSG:{code}").into());
        }
        w.insert("georef".into(), geo);
    }
    serde_json::json!({
        "format": "orogen-graph",
        "version": 2,
        "name": name,
        "resolution": resolution,
        "seed": 0,
        "world": world,
        "nodes": [{
            "id": "dem",
            "type": <orogen::nodes::io::import::Import as orogen::node::NodeDecl>::SPEC.id,
            "inputs": {},
            "params": { "path": rel, "exr_values": "metres" },
            "position": [0, 0]
        }],
        "outputs": { "height": "dem.out" }
    })
}

/// `orogen new --from-dem DEM -o GRAPH [--resolution N]`.
pub(super) fn run_new_from_dem(dem_path: &Path, out: &Path, resolution: Option<usize>) -> ExitCode {
    let fail = |e: String| {
        eprintln!("error: {e}");
        ExitCode::from(EXIT_INVALID)
    };
    let bytes = match trust::read_file(dem_path, trust::MAX_IMAGE_BYTES, None) {
        Ok(b) => b,
        Err(e) => return fail(e),
    };
    if !geotiff::is_dem(&bytes) {
        return fail(format!(
            "{}: not a GeoTIFF DEM (no GeoTIFF tags, and neither float nor signed samples)",
            orogen::io::owned::escape_path(dem_path)
        ));
    }
    let dem = match geotiff::read(&bytes, None) {
        Ok(d) => d,
        Err(e) => return fail(format!("{}: {e}", orogen::io::owned::escape_path(dem_path))),
    };
    // The graph refers to the DEM by its path from the graph's folder, inside it.
    let folder = out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let (Ok(folder), Ok(file)) = (folder.canonicalize(), dem_path.canonicalize()) else {
        return fail(format!(
            "cannot resolve {} or the folder of {}",
            orogen::io::owned::escape_path(dem_path),
            orogen::io::owned::escape_path(out)
        ));
    };
    let Ok(rel) = file.strip_prefix(&folder) else {
        return fail(format!(
            "{} is outside the graph's folder {}: a graph reads files inside its project only (docs/security.md); write the graph beside the DEM or in a folder above it",
            orogen::io::owned::escape_path(dem_path),
            orogen::io::owned::escape_path(&folder)
        ));
    };
    let (w, h) = (dem.field.width(), dem.field.height());
    let resolution = resolution.unwrap_or(w.max(h)).clamp(16, 16384);
    let name = dem_path
        .file_stem()
        .map_or_else(|| "DEM".to_owned(), |s| s.to_string_lossy().into_owned());
    let json = graph_json(&dem, &rel.to_string_lossy(), resolution, &name);
    let text = serde_json::to_string_pretty(&json).unwrap_or_default() + "\n";
    // Never write a graph that `orogen check` would refuse (a DEM's cell size of 1e300 m, a
    // height range that is not finite): load it as check does first.
    if let Err(d) = orogen::document::graph_file::load(
        orogen::document::graph_file::Source::Text {
            text: &text,
            label: &orogen::io::owned::escape_path(out).clone(),
            base: Some(&folder),
        },
        &orogen::document::graph_file::LoadOptions::default(),
    ) {
        return fail(format!(
            "{}: this DEM does not make a valid graph, nothing was written:\n{d}",
            orogen::io::owned::escape_path(dem_path)
        ));
    }
    if let Err(e) =
        orogen::io::atomic::write_atomic(out, |f| std::io::Write::write_all(f, text.as_bytes()))
    {
        eprintln!("error: {}: {e}", orogen::io::owned::escape_path(out));
        return ExitCode::from(EXIT_FAILED);
    }
    let world = &json["world"];
    println!(
        "{}: {w} × {h} DEM{}; world {:.1} m across, heights {}…{} m, resolution {resolution}{}",
        orogen::io::owned::escape_path(out),
        match dem.size_m() {
            Some((x, y)) => format!(" of {x:.1} × {y:.1} m"),
            None => " without a georeference (1 m cells assumed)".to_owned(),
        },
        world["size_m"].as_f64().unwrap_or(0.0),
        world["height_min_m"],
        world["height_max_m"],
        if dem.filled > 0 {
            format!("; {} no-data cells filled", dem.filled)
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
    if let Some(note) = shape_note(&dem, dem_path) {
        println!("{note}");
    }
    ExitCode::SUCCESS
}

/// A note when the DEM's ground is not square (pixels or cells in metres): the world is square,
/// so import stretches the DEM over it, and erosion runs on the stretched ground. Says by how
/// much and gives the GDAL command that makes it square without stretching: a centred crop of a
/// projected DEM, a reprojection to its UTM zone with square cells for a geographic one.
fn shape_note(dem: &geotiff::Dem, path: &Path) -> Option<String> {
    let (w, h) = (dem.field.width(), dem.field.height());
    let (sx, sy) = dem.size_m().unwrap_or((w as f64, h as f64));
    if (sx / sy - 1.0).abs() < 0.005 {
        return None;
    }
    let file = orogen::io::owned::escape_path(path);
    let fix = if let Some(g) = dem.georef.filter(|g| g.geographic) {
        let lon = g.origin.0 + g.pixel.0 * w as f64 / 2.0;
        let lat = g.origin.1 - g.pixel.1.abs() * h as f64 / 2.0;
        let zone = (((lon + 180.0) / 6.0).floor() as i64).clamp(0, 59) + 1;
        let epsg = if lat >= 0.0 { 32600 } else { 32700 } + zone;
        let cell = (sy / h as f64).min(sx / w as f64);
        format!(
            "reproject it to its UTM zone with square cells, then crop it square: gdalwarp -t_srs EPSG:{epsg} -tr {cell:.0} {cell:.0} {file} dem_utm.tif"
        )
    } else {
        let side = w.min(h);
        format!(
            "crop it square first (the middle {side} × {side} pixels): gdal_translate -srcwin {} {} {side} {side} {file} dem_square.tif",
            (w - side) / 2,
            (h - side) / 2
        )
    };
    Some(format!(
        "note: the DEM's ground is {sx:.0} × {sy:.0} m on {w} × {h} pixels, not square: the world is square, and import stretches the DEM over all of it (its ground's width to height of {:.3} becomes 1), so erosion runs on stretched ground (GeoTIFF exports are placed back on the DEM's extent). To keep its shape, {fix}",
        sx / sy,
    ))
}
