//! A tiled build's whole-world preview: each tile task keeps the preview pixels its own
//! samples fall on; the stitch task puts the patches together and colours them.

use super::task::{Ctx, TaskError};
use super::{Grid, PREVIEW_MAX};
use crate::field::Field;
use crate::io::plan::TileRecord as Record;
use crate::io::render;
use crate::node::{PortKind, Window};
use crate::World;

impl Ctx<'_> {
    /// The whole-world preview of `name` from the tiles' patches.
    pub(super) fn preview(
        &self,
        records: &[Record],
        name: &str,
        kind: PortKind,
        frame: &World,
        map: render::Colormap,
    ) -> Result<Vec<u8>, TaskError> {
        let n = self.plan.grid.resolution;
        let p = n.min(PREVIEW_MAX);
        let channels = kind.channels();
        let mut planes = vec![Field::filled(p, p, 0.0); channels];
        for (k, rec) in records.iter().enumerate() {
            let Some(&[x0, y0, w, h]) = rec.preview.get(name) else {
                continue;
            };
            let path = self.work.join(format!("tile-{k}.{name}.preview"));
            let bytes = std::fs::read(&path).map_err(|e| TaskError::io("read", &path, e))?;
            let vals: Vec<f32> = bytes
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect();
            if vals.len() != w * h * channels {
                return Err(TaskError::Failed(format!(
                    "{}: expected {} samples",
                    path.display(),
                    w * h * channels
                )));
            }
            for y in 0..h {
                for x in 0..w {
                    let at = (y0 + y) * p + x0 + x;
                    for (c, plane) in planes.iter_mut().enumerate() {
                        plane.data_mut()[at] = vals[(y * w + x) * channels + c];
                    }
                }
            }
        }
        let rgb = match kind {
            PortKind::Color => {
                let img = Field::from_planes(&planes).ok_or("preview planes differ")?;
                render::color_rgb8(&img, None)
            }
            PortKind::Scalar => {
                // Every tile's patch is in: the scalar's whole-world range is known here.
                let img = planes.swap_remove(0);
                let (lo, hi) = img.min_max().unwrap_or((0.0, 1.0));
                let (shown, lo, hi) = render::scalar_display(&img, lo, hi);
                render::preview_rgb(&shown, lo, hi, map, None)
            }
            PortKind::Height | PortKind::Mask => {
                let img = planes.swap_remove(0);
                let (lo, hi) = render::display_range(if kind == PortKind::Height {
                    &self.graph.world
                } else {
                    frame
                });
                let cell = self.graph.world.size_m / p as f64;
                if kind == PortKind::Height {
                    let sea = self.graph.sea_level_m();
                    render::height_rgb(&img, (lo, hi), sea, map, Some((&img, cell)))
                } else {
                    render::preview_rgb(&img, lo, hi, map, None)
                }
            }
        };
        let png = image::RgbImage::from_raw(p as u32, p as u32, rgb)
            .ok_or_else(|| "preview size mismatch".to_owned())?;
        let mut out = Vec::new();
        png.write_to(&mut std::io::Cursor::new(&mut out), image::ImageFormat::Png)
            .map_err(|e| e.to_string())?;
        Ok(out)
    }
}

/// The sample a preview pixel `p` of `p_n` shows, on an `n`-sample axis.
fn preview_sample(p: usize, p_n: usize, n: usize) -> usize {
    ((2 * p + 1) * n) / (2 * p_n)
}

/// The preview pixels whose samples lie in `owned` (`[x0, y0, w, h]` in preview pixels) and
/// their values from `mine` (the owned samples; a colour's channels one after the other).
pub(super) fn preview_patch(grid: Grid, owned: Window, mine: &Field) -> ([usize; 4], Vec<f32>) {
    let n = grid.resolution;
    let p_n = n.min(PREVIEW_MAX);
    let span = |lo: usize, len: usize| {
        let ps: Vec<usize> = (0..p_n)
            .filter(|&p| (lo..lo + len).contains(&preview_sample(p, p_n, n)))
            .collect();
        ps
    };
    let xs = span(owned.x0, owned.width);
    let ys = span(owned.y0, owned.height);
    let mut v = Vec::with_capacity(xs.len() * ys.len());
    for &py in &ys {
        let sy = preview_sample(py, p_n, n) - owned.y0;
        for &px in &xs {
            let sx = preview_sample(px, p_n, n) - owned.x0;
            for c in 0..mine.channels() {
                v.push(mine.plane(c)[sy * mine.width() + sx]);
            }
        }
    }
    let rect = [
        xs.first().copied().unwrap_or(0),
        ys.first().copied().unwrap_or(0),
        xs.len(),
        ys.len(),
    ];
    (rect, v)
}
