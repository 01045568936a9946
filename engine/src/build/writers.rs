//! Writing a build's outputs: each evaluated output encoded in its formats (heightmaps,
//! colour PNGs, meshes, normal maps, renders) and staged, with its manifest entry.

use super::staging::Staging;
use super::{splat, BuildError, BuildOptions, Exports, Preset, Range};
use crate::eval::EvalResult;
use crate::field::Field;
use crate::graph::Graph;
use crate::io::heightmap::{self, Format};
use crate::io::manifest::OutputEntry;
use crate::io::render;
use crate::node::PortKind;
use crate::World;

/// Every evaluated output (and splat map) staged in its formats; the manifest entries, and
/// the names of those that could not be written (not evaluated, or cancelled).
pub(super) fn write_outputs(
    stage: &mut Staging,
    graph: &Graph,
    eval: &EvalResult,
    opts: &BuildOptions,
    formats: &[Format],
) -> Result<(Vec<OutputEntry>, Vec<String>), BuildError> {
    let ex = &opts.exports;
    let mut outputs = Vec::new();
    let mut failed_outputs = Vec::new();
    let nodata = graph.nodata.as_ref().and_then(|r| eval.field(graph, r));
    for (name, r) in &graph.outputs {
        match eval.field(graph, r) {
            Some(field) if !opts.cancel.is_cancelled() => {
                let kind = graph.output_kind(r).unwrap_or(PortKind::Height);
                let ground = (kind == PortKind::Color)
                    .then(|| eval.terrain_under(graph, &r.node))
                    .flatten();
                let out = Output {
                    name,
                    source: r.to_string(),
                    kind,
                    field: &field,
                    ground: ground.as_deref(),
                    nodata: nodata.as_deref(),
                };
                outputs.push(write_output(stage, graph, &out, ex, formats)?);
            }
            _ => failed_outputs.push(name.clone()),
        }
    }
    for (stem, names) in &ex.splats {
        let fields: Vec<_> = names
            .iter()
            .filter_map(|n| eval.field(graph, &graph.outputs[n]))
            .collect();
        if fields.len() == names.len() {
            splat::write(stage, stem, &fields, ex.splat_normalize)?;
        } else {
            failed_outputs.push(stem.clone());
        }
    }
    Ok((outputs, failed_outputs))
}

/// One output about to be written.
struct Output<'a> {
    name: &'a str,
    source: String,
    kind: PortKind,
    field: &'a Field,
    /// Colour outputs: the terrain under them, which lights their preview.
    ground: Option<&'a Field>,
    /// The graph's no-data mask (GeoTIFF writes no data where it is below one half).
    nodata: Option<&'a Field>,
}

/// Writes one output's heightmaps, preview, normal map and mesh; returns its manifest entry.
fn write_output(
    stage: &mut Staging,
    graph: &Graph,
    out: &Output,
    ex: &Exports,
    formats: &[Format],
) -> Result<OutputEntry, BuildError> {
    let (name, field, kind) = (out.name, out.field, out.kind);
    let cell = graph.world.cell_size_m(field.width());
    let frame = output_frame(graph, kind, ex.range, field);
    let write_err = |source| BuildError::Write {
        path: name.to_owned(),
        source,
    };
    let mut primary = None;
    let mut mesh_info = None;
    for &format in formats {
        let (file, bytes) = if ex.preset == Some(Preset::Unity) {
            // Unity reads row 0 of a RAW heightmap as z = 0 (south): rows south to north.
            let flipped = field.flipped_vertically();
            let bytes = heightmap::encode(&flipped, &frame, format).map_err(write_err)?;
            (format!("{name}.raw"), bytes)
        } else if format == Format::GeoTiff {
            // Placed on the graph's georeference, if it has one (heights, masks and colour).
            let at =
                crate::io::geotiff::Frame::of(&graph.world, graph.georef, field.width(), (0, 0));
            let bytes = heightmap::encode_geotiff(field, &at, out.nodata).map_err(write_err)?;
            (format!("{name}.{}", format.extension()), bytes)
        } else {
            let bytes = heightmap::encode(field, &frame, format).map_err(write_err)?;
            (format!("{name}.{}", format.extension()), bytes)
        };
        let hash = stage.add(file.clone(), format.name(), &bytes)?;
        primary.get_or_insert((file, hash));
    }
    if let Some(map) = ex.preview {
        // Previews of heights keep the graph's range so colours mean the same heights.
        let (lo, hi) = render::display_range(if kind == PortKind::Height {
            &graph.world
        } else {
            &frame
        });
        let relief = (kind == PortKind::Height).then_some((field, cell));
        let rgb = if kind == PortKind::Color {
            let ground = out.ground.filter(|g| g.width() == field.width());
            render::color_rgb8(field, ground.map(|g| (g, cell)))
        } else if kind == PortKind::Scalar {
            let (shown, lo, hi) = render::scalar_display(field, lo, hi);
            render::preview_rgb(&shown, lo, hi, map, None)
        } else if kind == PortKind::Height {
            render::height_rgb(field, (lo, hi), graph.sea_level_m(), map, relief)
        } else {
            render::preview_rgb(field, lo, hi, map, relief)
        };
        let png = encode_png_rgb8(field.width(), field.height(), rgb)?;
        stage.add(format!("{name}.preview.png"), "preview", &png)?;
    }
    if kind == PortKind::Height {
        if let Some((bits, y)) = ex.normal_map {
            let n = render::normals(field, cell, y);
            let bytes = encode_normal_png(field.width(), field.height(), &n, bits)?;
            stage.add(format!("{name}.normal.png"), "normal map", &bytes)?;
        }
        if let Some(spec) = ex.mesh_spec() {
            let part = [0, 0, field.width(), field.height()];
            let (bytes, info) = crate::io::mesh::mesh_file(field, part, (0, 0), cell, spec);
            mesh_info = info;
            stage.add(format!("{name}.{}", spec.extension()), "mesh", &bytes)?;
        }
    }
    let (min, max) = field.min_max().unwrap_or((f32::NAN, f32::NAN));
    let (file, hash) = primary.unwrap_or_default();
    Ok(OutputEntry {
        name: name.to_owned(),
        source: out.source.clone(),
        kind: kind.name().to_owned(),
        file,
        width: field.width(),
        height: field.height(),
        min,
        max,
        range_m: [frame.height_min_m, frame.height_max_m],
        hash,
        mesh: mesh_info,
    })
}

/// The heights integer formats map onto 0 … 65535: masks over [0, 1], heights over the
/// graph's height range or (with [`Range::Data`]) the output's own, scalars always over their
/// own (the manifest's `range_m` decodes them).
pub(crate) fn output_frame(graph: &Graph, kind: PortKind, range: Range, field: &Field) -> World {
    match (kind, range, field.min_max()) {
        (PortKind::Height, Range::Data, Some((lo, hi))) if hi > lo => World {
            height_min_m: f64::from(lo),
            height_max_m: f64::from(hi),
            ..graph.world
        },
        (PortKind::Height, _, _) => graph.world,
        (PortKind::Mask | PortKind::Color, _, _) => World {
            height_min_m: 0.0,
            height_max_m: 1.0,
            ..graph.world
        },
        // A quantity has no graph range: integer formats always span its own values.
        (PortKind::Scalar, _, range) => {
            let (lo, hi) = range.unwrap_or((0.0, 1.0));
            World {
                height_min_m: f64::from(lo),
                height_max_m: if hi > lo {
                    f64::from(hi)
                } else {
                    f64::from(lo) + 1.0
                },
                ..graph.world
            }
        }
    }
}

fn encode_png_rgb8(w: usize, h: usize, rgb: Vec<u8>) -> Result<Vec<u8>, BuildError> {
    let img =
        image::RgbImage::from_raw(w as u32, h as u32, rgb).ok_or_else(|| BuildError::Write {
            path: "preview".into(),
            source: std::io::Error::other("size mismatch"),
        })?;
    let mut bytes = Vec::new();
    img.write_to(
        &mut std::io::Cursor::new(&mut bytes),
        image::ImageFormat::Png,
    )
    .map_err(|e| BuildError::Write {
        path: "preview".into(),
        source: std::io::Error::other(e),
    })?;
    Ok(bytes)
}

pub(crate) fn encode_normal_png(
    w: usize,
    h: usize,
    n: &[[f32; 3]],
    bits: u8,
) -> Result<Vec<u8>, BuildError> {
    let err = |e: String| BuildError::Write {
        path: "normal map".into(),
        source: std::io::Error::other(e),
    };
    let mut bytes = Vec::new();
    let cursor = &mut std::io::Cursor::new(&mut bytes);
    if bits == 16 {
        let px: Vec<u16> = n
            .iter()
            .flat_map(|v| v.map(|c| render::encode_unit(c, 65535.0)))
            .collect();
        let img = image::ImageBuffer::<image::Rgb<u16>, Vec<u16>>::from_raw(w as u32, h as u32, px)
            .ok_or_else(|| err("size".into()))?;
        img.write_to(cursor, image::ImageFormat::Png)
            .map_err(|e| err(e.to_string()))?;
    } else {
        let px: Vec<u8> = n
            .iter()
            .flat_map(|v| v.map(|c| render::encode_unit(c, 255.0) as u8))
            .collect();
        let img =
            image::RgbImage::from_raw(w as u32, h as u32, px).ok_or_else(|| err("size".into()))?;
        img.write_to(cursor, image::ImageFormat::Png)
            .map_err(|e| err(e.to_string()))?;
    }
    Ok(bytes)
}
