//! Splat maps: up to four mask outputs packed into the channels of one `<stem>.splat.png`,
//! checked against the graph's outputs before anything is evaluated.

use super::staging::Staging;
use super::{BuildError, Exports};
use crate::field::Field;
use crate::graph::Graph;
use crate::io::render;
use crate::node::PortKind;

/// Refuses splat maps that cannot be made from the graph's outputs.
pub(super) fn check(graph: &Graph, ex: &Exports) -> Result<(), BuildError> {
    for (stem, names) in &ex.splats {
        let fail = |msg: String| Err(BuildError::Splat(crate::io::owned::escape(stem), msg));
        if !crate::graph::is_valid_id(stem) {
            return fail(
                "a splat map's name becomes a file name in the output folder: use only letters, digits, '_' and '-'"
                    .to_owned(),
            );
        }
        if names.is_empty() || names.len() > 4 {
            return fail(format!("needs 1 to 4 mask outputs, got {}", names.len()));
        }
        for n in names {
            match graph.outputs.get(n).map(|r| graph.output_kind(r)) {
                Some(Some(PortKind::Mask) | None) => {}
                Some(Some(k @ (PortKind::Height | PortKind::Color | PortKind::Scalar))) => {
                    return fail(format!("output \"{n}\" is a {}, not a mask", k.name()));
                }
                None => return fail(format!("no output \"{n}\"")),
            }
        }
    }
    Ok(())
}

/// Packs up to four mask outputs into `<stem>.splat.png`.
pub(super) fn write(
    stage: &mut Staging,
    stem: &str,
    fields: &[std::sync::Arc<Field>],
    normalize: bool,
) -> Result<(), BuildError> {
    let refs: Vec<&Field> = fields.iter().map(|f| &**f).collect();
    let rgba = render::splat_rgba(&refs, normalize);
    let img = image::RgbaImage::from_raw(refs[0].width() as u32, refs[0].height() as u32, rgba)
        .ok_or_else(|| BuildError::Splat(stem.to_owned(), "size mismatch".into()))?;
    let mut bytes = Vec::new();
    img.write_to(
        &mut std::io::Cursor::new(&mut bytes),
        image::ImageFormat::Png,
    )
    .map_err(|e| BuildError::Splat(stem.to_owned(), e.to_string()))?;
    stage.add(format!("{stem}.splat.png"), "splat map", &bytes)?;
    Ok(())
}
