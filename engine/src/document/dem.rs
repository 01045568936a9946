//! A graph whose world is a real DEM's: its size, height range and place on the Earth, one
//! `import` node reading the DEM (`orogen new --from-dem`, Python's `orogen.from_dem`).

use crate::io::{geotiff, owned::escape_path, trust};
use std::path::Path;

/// A graph made from a DEM: its JSON text, the DEM as read and the note to show when its
/// ground is not square.
pub struct FromDem {
    pub text: String,
    pub json: serde_json::Value,
    pub dem: geotiff::Dem,
    pub resolution: usize,
    pub note: Option<String>,
}

/// Reads the GeoTIFF DEM at `dem_path` and makes the graph that imports it, to be saved in
/// `folder` (the DEM must lie inside it: a graph reads files inside its project only),
/// at `resolution` samples per side (default: the DEM's longer side, at most 16384). `label`
/// names the graph file in messages. The graph is loaded as `orogen check` would before it is
/// returned: a DEM that makes no valid graph is refused.
///
/// # Errors
/// A message naming the DEM and what is wrong with it.
pub fn from_dem(
    dem_path: &Path,
    folder: &Path,
    resolution: Option<usize>,
    label: &str,
) -> Result<FromDem, String> {
    let bytes = trust::read_file(dem_path, trust::MAX_IMAGE_BYTES, None)?;
    if !geotiff::is_dem(&bytes) {
        return Err(format!(
            "{}: not a GeoTIFF DEM (no GeoTIFF tags, and neither float nor signed samples)",
            escape_path(dem_path)
        ));
    }
    let dem = geotiff::read(&bytes, None).map_err(|e| format!("{}: {e}", escape_path(dem_path)))?;
    // The graph refers to the DEM by its path from the graph's folder, inside it.
    let (Ok(folder), Ok(file)) = (folder.canonicalize(), dem_path.canonicalize()) else {
        return Err(format!(
            "cannot resolve {} or the folder {}",
            escape_path(dem_path),
            escape_path(folder)
        ));
    };
    let Ok(rel) = file.strip_prefix(&folder) else {
        return Err(format!(
            "{} is outside the graph's folder {}: a graph reads files inside its project only (docs/security.md); write the graph beside the DEM or in a folder above it",
            escape_path(dem_path),
            escape_path(&folder)
        ));
    };
    let (w, h) = (dem.field.width(), dem.field.height());
    let resolution = resolution.unwrap_or(w.max(h)).clamp(16, 16384);
    let name = dem_path
        .file_stem()
        .map_or_else(|| "DEM".to_owned(), |s| s.to_string_lossy().into_owned());
    let json = graph_json(&dem, &rel.to_string_lossy(), resolution, &name);
    let text = serde_json::to_string_pretty(&json).unwrap_or_default() + "\n";
    // Never a graph that `orogen check` would refuse (a DEM's cell size of 1e300 m, a height
    // range that is not finite): load it as check does first.
    if let Err(d) = super::graph_file::load(
        super::graph_file::Source::Text {
            text: &text,
            label,
            base: Some(&folder),
        },
        &super::graph_file::LoadOptions::default(),
    ) {
        return Err(format!(
            "{}: this DEM does not make a valid graph, nothing was written:\n{d}",
            escape_path(dem_path)
        ));
    }
    let note = shape_note(&dem, dem_path);
    Ok(FromDem {
        text,
        json,
        dem,
        resolution,
        note,
    })
}

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
    let mut graph = serde_json::json!({
        "format": "orogen-graph",
        "version": 2,
        "name": name,
        "resolution": resolution,
        "seed": 0,
        "world": world,
        "nodes": [{
            "id": "dem",
            "type": <crate::nodes::io::import::Import as crate::node::NodeDecl>::SPEC.id,
            "inputs": {},
            "params": { "path": rel, "exr_values": "metres" },
            "position": [0, 0]
        }],
        "outputs": { "height": "dem.out" }
    });
    if let (true, Some(o)) = (dem.filled > 0, graph.as_object_mut()) {
        // GeoTIFF exports say where the DEM had no data (its holes are filled to build on).
        o.insert("nodata".into(), "dem.valid".into());
    }
    graph
}

/// A note when the DEM's ground is not square (pixels or cells in metres): the world is square,
/// so import stretches the DEM over it, and erosion runs on the stretched ground. Says by how
/// much and gives the GDAL command that makes it square without stretching: a centred crop of a
/// projected DEM, a reprojection to its UTM zone with square cells for a geographic one.
#[must_use]
pub fn shape_note(dem: &geotiff::Dem, path: &Path) -> Option<String> {
    let (w, h) = (dem.field.width(), dem.field.height());
    let (sx, sy) = dem.size_m().unwrap_or((w as f64, h as f64));
    if (sx / sy - 1.0).abs() < 0.005 {
        return None;
    }
    let file = escape_path(path);
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
