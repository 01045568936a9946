//! The 2D preview: colormapped, hillshaded pictures of any node output, masks as overlays,
//! a histogram with min/max/mean and a height probe under the cursor.

use egui::{Color32, ColorImage, Rect, Sense, Stroke, TextureHandle, TextureOptions, Vec2};
use orogen::io::heightmap::srgb_encode;
use orogen::io::render::{color_rgb8, hillshade, preview_rgb, Colormap};
use orogen::node::{luminance, PortKind};
use orogen::{Field, World};
use std::sync::Arc;

/// How pictures are drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Look {
    pub colormap: Colormap,
    pub hillshade: bool,
    /// Draw masks over the terrain (the previewed node's height input, or the graph's first
    /// height output) instead of on their own.
    pub overlay: bool,
}

impl Default for Look {
    fn default() -> Self {
        Self {
            colormap: Colormap::Terrain,
            hillshade: true,
            overlay: true,
        }
    }
}

/// What is being previewed.
#[derive(Clone)]
pub struct Shown {
    pub field: Arc<Field>,
    pub kind: PortKind,
    /// Terrain to draw a mask over, or to shade and (in 3D) carry a colour map.
    pub base: Option<Arc<Field>>,
    /// The world the field covers: `size_m` is its width in metres (a region's, or the map's).
    pub world: World,
    /// Where its north-west corner lies in the map, in metres (0, 0 for the whole map).
    pub origin_m: [f64; 2],
    /// The graph's sea level (m, `Graph::sea_level_m`): the terrain colours draw water at and
    /// below it, and none without one.
    pub sea_m: Option<f32>,
}

/// Summary statistics of a field.
#[derive(Clone, Debug, PartialEq)]
pub struct Stats {
    pub min: f32,
    pub max: f32,
    pub mean: f64,
    /// Counts over `[min, max]` in equal bins.
    pub bins: Vec<u32>,
}

/// Min, max, mean and a histogram of the finite samples over their own range.
#[must_use]
pub fn stats(f: &Field, bins: usize) -> Stats {
    stats_over(f, bins, None)
}

/// Like [`stats`], with the histogram over `range` when given (masks: [0, 1], so bars mean
/// the same weights whatever the mask's own extremes).
#[must_use]
pub fn stats_over(f: &Field, bins: usize, range: Option<(f32, f32)>) -> Stats {
    let (min, max) = range.or_else(|| f.min_max()).unwrap_or((0.0, 0.0));
    let mut counts = vec![0u32; bins.max(1)];
    let mut sum = 0.0f64;
    let mut n = 0usize;
    let scale = if max > min {
        counts.len() as f32 / (max - min)
    } else {
        0.0
    };
    for &v in f.data().iter().filter(|v| v.is_finite()) {
        sum += f64::from(v);
        n += 1;
        let b = (((v - min) * scale) as usize).min(counts.len() - 1);
        counts[b] += 1;
    }
    Stats {
        min,
        max,
        mean: if n > 0 { sum / n as f64 } else { 0.0 },
        bins: counts,
    }
}

/// The picture of `shown` drawn with `look`.
#[must_use]
pub fn picture(shown: &Shown, look: Look) -> ColorImage {
    let f = &*shown.field;
    let (w, h) = (f.width(), f.height());
    let cell = shown.world.size_m / w.max(1) as f64;
    let rgb = match shown.kind {
        PortKind::Height => {
            let (lo, hi) = orogen::io::render::display_range(&shown.world);
            let shade = look.hillshade.then_some((f, cell));
            orogen::io::render::height_rgb(f, (lo, hi), shown.sea_m, look.colormap, shade)
        }
        PortKind::Mask => match shown
            .base
            .as_deref()
            .filter(|b| look.overlay && b.width() == w)
        {
            Some(base) => mask_over(f, base, cell),
            None => preview_rgb(f, 0.0, 1.0, look.colormap, None),
        },
        PortKind::Color => {
            let base = shown.base.as_deref().filter(|b| b.width() == w);
            color_rgb8(f, base.filter(|_| look.hillshade).map(|b| (b, cell)))
        }
        PortKind::Scalar => scalar_rgb(f, look.colormap),
    };
    ColorImage::from_rgb([w, h], &rgb)
}

/// A scalar over its own range (on a log scale when it spans decades, as drainage areas do).
fn scalar_rgb(f: &Field, map: Colormap) -> Vec<u8> {
    let (lo, hi) = f.min_max().unwrap_or((0.0, 1.0));
    let (shown, lo, hi) = orogen::io::render::scalar_display(f, lo, hi);
    preview_rgb(&shown, lo, hi, map, None)
}

/// A mask in orange over the grey hillshade of `base`.
fn mask_over(mask: &Field, base: &Field, cell: f64) -> Vec<u8> {
    let shade = hillshade(base, cell, 315.0, 45.0);
    let mut out = Vec::with_capacity(mask.data().len() * 3);
    for (&m, &s) in mask.data().iter().zip(shade.data()) {
        let g = 0.25 + 0.6 * s;
        let a = m.clamp(0.0, 1.0) * 0.8;
        for (k, c) in [1.0f32, 0.45, 0.05].into_iter().enumerate() {
            let v = g * (1.0 - a) + c * a * (0.5 + 0.5 * s);
            let _ = k;
            out.push((v * 255.0).round().clamp(0.0, 255.0) as u8);
        }
    }
    out
}

/// Cached texture of the current picture.
#[derive(Default)]
pub struct Picture {
    texture: Option<TextureHandle>,
    /// What the texture shows: (result generation, node, output, look).
    key: Option<(u64, String, usize, Look)>,
    pub stats: Option<Stats>,
    /// A hash of the pixels shown (lets tests see the picture change).
    pub checksum: u64,
}

impl Picture {
    /// The texture shown, if any.
    #[must_use]
    pub fn texture(&self) -> Option<&TextureHandle> {
        self.texture.as_ref()
    }

    /// Updates the texture when what is shown changed. Returns true when it did.
    pub fn update(
        &mut self,
        ctx: &egui::Context,
        key: (u64, String, usize, Look),
        shown: &Shown,
    ) -> bool {
        if self.key.as_ref() == Some(&key) {
            return false;
        }
        let image = picture(shown, key.3);
        self.checksum = {
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            image.pixels.hash(&mut h);
            h.finish()
        };
        let options = TextureOptions::NEAREST;
        match &mut self.texture {
            Some(t) => t.set(image, options),
            None => self.texture = Some(ctx.load_texture("orogen-preview", image, options)),
        }
        self.stats = Some(match shown.kind {
            PortKind::Height | PortKind::Scalar => stats(&shown.field, 64),
            PortKind::Mask => stats_over(&shown.field, 32, Some((0.0, 1.0))),
            PortKind::Color => stats_over(&luminance(&shown.field), 32, Some((0.0, 1.0))),
        });
        self.key = Some(key);
        true
    }

    /// Which (generation, node, output, look) the texture shows.
    #[must_use]
    pub fn key(&self) -> Option<&(u64, String, usize, Look)> {
        self.key.as_ref()
    }

    pub fn clear(&mut self) {
        self.key = None;
        self.stats = None;
        self.texture = None;
    }

    /// Draws the picture fitted into the available space, keeping its proportions, and the
    /// probe under the cursor. A rectangle dragged on it is returned once released, as
    /// `[u0, v0, u1, v1]` in 0…1 of the picture.
    pub fn show(&self, ui: &mut egui::Ui, shown: Option<&Shown>) -> Option<[f32; 4]> {
        let Some(tex) = &self.texture else {
            ui.weak("No preview yet: select a node.");
            return None;
        };
        let [w, h] = tex.size();
        let avail = ui.available_size() - Vec2::new(0.0, 20.0);
        let scale = (avail.x / w.max(1) as f32)
            .min(avail.y / h.max(1) as f32)
            .max(64.0 / w.max(h).max(1) as f32);
        let size = Vec2::new(w as f32, h as f32) * scale;
        let (rect, resp) = ui.allocate_exact_size(size, Sense::click_and_drag());
        ui.painter().image(
            tex.id(),
            rect,
            Rect::from_min_max(egui::pos2(0.0, 0.0), egui::pos2(1.0, 1.0)),
            Color32::WHITE,
        );
        let uv = |p: egui::Pos2| {
            (
                ((p.x - rect.min.x) / rect.width()).clamp(0.0, 1.0),
                ((p.y - rect.min.y) / rect.height()).clamp(0.0, 1.0),
            )
        };
        // The rectangle being dragged: from where the drag began (kept across frames: egui
        // forgets the press origin on release) to the pointer.
        let origin_id = resp.id.with("drag-origin");
        if resp.drag_started() {
            if let Some(p) = ui.input(|i| i.pointer.press_origin()) {
                ui.data_mut(|d| d.insert_temp(origin_id, p));
            }
        }
        let dragged = (resp.dragged() || resp.drag_stopped())
            .then(|| {
                let a = ui.data(|d| d.get_temp::<egui::Pos2>(origin_id))?;
                let b = ui.input(|i| i.pointer.latest_pos())?;
                Some(Rect::from_two_pos(a, b).intersect(rect))
            })
            .flatten();
        if let Some(r) = dragged.filter(|_| resp.dragged()) {
            ui.painter().rect_stroke(
                r,
                0.0,
                Stroke::new(1.5, Color32::WHITE),
                egui::StrokeKind::Middle,
            );
        }
        let chosen = dragged.filter(|_| resp.drag_stopped()).map(|r| {
            let (u0, v0) = uv(r.min);
            let (u1, v1) = uv(r.max);
            [u0, v0, u1, v1]
        });
        let probe = resp.hover_pos().zip(shown).map(|(p, s)| {
            let f = &s.field;
            let (u, v) = uv(p);
            let (u, v) = (u.min(0.999_999), v.min(0.999_999));
            let (x, y) = (
                (u * f.width() as f32) as usize,
                (v * f.height() as f32) as usize,
            );
            let i = y * f.width() + x;
            let value = f.data()[i];
            let cell = s.world.size_m / f.width().max(1) as f64;
            let (xm, ym) = (
                s.origin_m[0] + f64::from(u) * f.width() as f64 * cell,
                s.origin_m[1] + f64::from(v) * f.height() as f64 * cell,
            );
            match s.kind {
                PortKind::Height => format!("x {xm:.0} m, y {ym:.0} m: height {value:.2} m"),
                PortKind::Mask => format!("x {xm:.0} m, y {ym:.0} m: mask {value:.3}"),
                PortKind::Scalar => format!("x {xm:.0} m, y {ym:.0} m: value {value}"),
                PortKind::Color => {
                    let rgb: [f32; 3] =
                        std::array::from_fn(|c| f.plane(c.min(f.channels() - 1))[i]);
                    let [r, g, b] = rgb.map(|v| (srgb_encode(v) * 255.0).round() as u8);
                    let hex = format!("{r:02x}{g:02x}{b:02x}");
                    format!(
                        "x {xm:.0} m, y {ym:.0} m: colour #{hex} (linear {:.3}, {:.3}, {:.3})",
                        rgb[0], rgb[1], rgb[2]
                    )
                }
            }
        });
        ui.label(probe.unwrap_or_else(|| {
            "Hover the picture to probe heights; drag a rectangle to see that region at the build resolution.".to_owned()
        }));
        chosen
    }
}

/// Draws a histogram with min / max / mean under it. With `log`, bar heights follow
/// log(1 + count): masks pile most cells at 0 and 1, and a linear scale would hide the rest.
pub fn histogram(ui: &mut egui::Ui, stats: &Stats, unit: &str, log: bool) {
    let (rect, _) = ui.allocate_exact_size(
        Vec2::new(ui.available_width().max(64.0), 48.0),
        Sense::hover(),
    );
    let painter = ui.painter_at(rect);
    painter.rect_filled(rect, 2.0, ui.visuals().extreme_bg_color);
    let scale = |c: u32| if log { (c as f32).ln_1p() } else { c as f32 };
    let peak = scale(stats.bins.iter().copied().max().unwrap_or(1).max(1));
    let bw = rect.width() / stats.bins.len().max(1) as f32;
    for (i, &c) in stats.bins.iter().enumerate() {
        let h = rect.height() * scale(c) / peak;
        let x0 = rect.min.x + i as f32 * bw;
        painter.rect_filled(
            Rect::from_min_max(
                egui::pos2(x0, rect.max.y - h),
                egui::pos2(x0 + bw.max(1.0) - 0.5, rect.max.y),
            ),
            0.0,
            ui.visuals().selection.bg_fill,
        );
    }
    if stats.max > stats.min {
        let t = ((stats.mean as f32 - stats.min) / (stats.max - stats.min)).clamp(0.0, 1.0);
        let x = rect.min.x + t * rect.width();
        painter.line_segment(
            [egui::pos2(x, rect.min.y), egui::pos2(x, rect.max.y)],
            Stroke::new(1.5, Color32::YELLOW),
        );
    }
    if log {
        ui.label(format!(
            "0 … 1 (log scale)   mean {:.3}   {:.1}% above 0.5",
            stats.mean,
            100.0 * stats.bins[stats.bins.len() / 2..].iter().sum::<u32>() as f64
                / stats.bins.iter().sum::<u32>().max(1) as f64
        ));
    } else {
        ui.label(format!(
            "min {:.2}{unit}   max {:.2}{unit}   mean {:.2}{unit}",
            stats.min, stats.max, stats.mean
        ));
    }
}

/// Side of the canvas thumbnails, in pixels.
pub const THUMB: usize = 64;

/// The small picture of one node output shown on the canvas: terrain colours with a
/// hillshade for heights, magma for masks.
#[must_use]
pub fn thumbnail(field: &Field, kind: PortKind, world: &World, sea_m: Option<f32>) -> ColorImage {
    let small = if field.width() == THUMB && field.height() == THUMB {
        field.clone()
    } else if field.channels() > 1 {
        field.resample(THUMB, THUMB)
    } else {
        let (sx, sy) = (
            field.width() as f32 / THUMB as f32,
            field.height() as f32 / THUMB as f32,
        );
        Field::from_fn(THUMB, THUMB, |x, y| {
            field.sample_bilinear((x as f32 + 0.5) * sx - 0.5, (y as f32 + 0.5) * sy - 0.5)
        })
    };
    let rgb = match kind {
        PortKind::Height => {
            let (lo, hi) = orogen::io::render::display_range(world);
            let cell = world.size_m / THUMB as f64;
            let relief = Some((&small, cell));
            orogen::io::render::height_rgb(&small, (lo, hi), sea_m, Colormap::Terrain, relief)
        }
        PortKind::Mask => preview_rgb(&small, 0.0, 1.0, Colormap::Magma, None),
        PortKind::Color => color_rgb8(&small, None),
        PortKind::Scalar => scalar_rgb(&small, Colormap::Magma),
    };
    ColorImage::from_rgb([THUMB, THUMB], &rgb)
}

/// Thumbnails of every evaluated node's first output, each redrawn only when the node's
/// cache key changes (so only what an edit recomputed is redrawn).
#[derive(Default)]
pub struct Thumbnails {
    by_node: std::collections::HashMap<String, (orogen::eval::Key, Option<u32>, TextureHandle)>,
}

impl Thumbnails {
    /// Takes the thumbnails of a finished evaluation.
    pub fn update(
        &mut self,
        ctx: &egui::Context,
        graph: &orogen::Graph,
        result: &orogen::eval::EvalResult,
    ) {
        self.by_node.retain(|id, _| graph.node(id).is_some());
        // Drawn with the graph's sea level: a changed level redraws every thumbnail.
        let sea = graph.sea_level_m();
        let drawn = sea.map(f32::to_bits);
        for (id, fields) in &result.fields {
            let (Some(node), Some(key)) = (graph.node(id), result.keys.get(id)) else {
                continue;
            };
            // The node's first height output, else its first: a subgraph whose first output
            // is a thin beach mask shows its terrain, not a black square.
            let outputs = node.def.spec.outputs;
            let at = outputs
                .iter()
                .position(|p| p.kind == PortKind::Height)
                .unwrap_or(0);
            let Some(field) = fields.get(at) else {
                continue;
            };
            if self
                .by_node
                .get(id)
                .is_some_and(|(k, s, _)| k == key && *s == drawn)
            {
                continue;
            }
            let kind = outputs.get(at).map_or(PortKind::Height, |p| p.kind);
            let image = thumbnail(field, kind, &graph.world, sea);
            let options = TextureOptions::LINEAR;
            if let Some((k, s, tex)) = self.by_node.get_mut(id) {
                tex.set(image, options);
                *k = *key;
                *s = drawn;
            } else {
                let tex = ctx.load_texture(format!("orogen-thumb-{id}"), image, options);
                self.by_node.insert(id.clone(), (*key, drawn, tex));
            }
        }
    }

    /// The thumbnail of node `id`, if it has been evaluated.
    #[must_use]
    pub fn get(&self, id: &str) -> Option<egui::TextureId> {
        self.by_node.get(id).map(|(_, _, t)| t.id())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_of_a_ramp() {
        let f = Field::from_fn(4, 1, |x, _| x as f32);
        let s = stats(&f, 4);
        assert_eq!((s.min, s.max), (0.0, 3.0));
        assert!((s.mean - 1.5).abs() < 1e-12);
        assert_eq!(s.bins, vec![1, 1, 1, 1]);
    }

    /// `coast_range`'s sea lies inside a subgraph whose level is bound to the graph's
    /// `sea_level_m` (420 m): every preview of that graph draws water below 420 m.
    #[test]
    fn the_sea_level_of_a_subgraph_bound_to_a_graph_parameter() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../graphs/coast_range.json");
        let g = orogen::document::graph_file::load_file(&path).expect("loads");
        assert_eq!(g.sea_level_m(), Some(420.0));
    }

    /// With a sea at 650 m in a −300…2600 m world, the terrain colours draw water below it and
    /// land above it (the ramp alone put the shoreline at 30% of the range, 570 m).
    #[test]
    fn terrain_colours_put_the_water_at_the_graphs_sea_level() {
        let world = World {
            size_m: 1000.0,
            height_min_m: -300.0,
            height_max_m: 2600.0,
        };
        // 600 m (under the sea) on the left, 700 m (land) on the right.
        let f = Arc::new(Field::from_fn(
            8,
            8,
            |x, _| if x < 4 { 600.0 } else { 700.0 },
        ));
        let mut shown = Shown {
            field: f,
            kind: PortKind::Height,
            base: None,
            world,
            origin_m: [0.0, 0.0],
            sea_m: Some(650.0),
        };
        let look = Look {
            hillshade: false,
            ..Look::default()
        };
        let img = picture(&shown, look);
        let (sea, land) = (img.pixels[9], img.pixels[14]);
        assert!(
            sea.b() > sea.g() && sea.b() > sea.r(),
            "water is blue: {sea:?}"
        );
        assert!(land.g() > land.b(), "land is not blue: {land:?}");
        shown.sea_m = None;
        let img = picture(&shown, look);
        let under = img.pixels[9];
        assert!(
            under.g() > under.b(),
            "without the sea level, 600 m is land-coloured: {under:?}"
        );
    }

    /// `coast_range`'s coast node puts the sea's surface at the sea level (420 m): its 2D
    /// preview draws every cell at or below it as water and the land above it as land (the
    /// surface was drawn as beach-coloured land).
    #[test]
    fn the_coast_nodes_preview_draws_its_sea_as_water() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../graphs/coast_range.json");
        let g = orogen::document::graph_file::load_file(&path).expect("loads");
        let heights = orogen::build::evaluate_outputs(&g, Some(64)).expect("evaluates");
        let field = Arc::new(heights["height"].clone());
        let sea = g.sea_level_m().expect("a sea");
        let shown = Shown {
            field: Arc::clone(&field),
            kind: PortKind::Height,
            base: None,
            world: g.world,
            origin_m: [0.0, 0.0],
            sea_m: Some(sea),
        };
        let look = Look {
            hillshade: false,
            ..Look::default()
        };
        let img = picture(&shown, look);
        let (mut water, mut land) = (0, 0);
        for (v, px) in field.data().iter().zip(&img.pixels) {
            let blue = px.b() > px.g() && px.b() > px.r();
            if *v <= sea {
                assert!(blue, "{v} m at or below the sea ({sea} m) is water: {px:?}");
                water += 1;
            } else {
                assert!(!blue, "{v} m above the sea is land: {px:?}");
                land += 1;
            }
        }
        assert!(water > 200 && land > 200, "{water} water, {land} land");
    }

    #[test]
    fn masks_overlay_the_terrain() {
        let world = World {
            size_m: 1000.0,
            height_min_m: 0.0,
            height_max_m: 100.0,
        };
        let base = Arc::new(Field::from_fn(8, 8, |x, _| x as f32 * 10.0));
        let mask = Arc::new(Field::from_fn(8, 8, |x, _| if x < 4 { 0.0 } else { 1.0 }));
        let shown = Shown {
            field: mask,
            kind: PortKind::Mask,
            base: Some(base),
            world,
            origin_m: [0.0, 0.0],
            sea_m: None,
        };
        let img = picture(&shown, Look::default());
        let (off, on) = (img.pixels[9], img.pixels[14]);
        assert_eq!(off.r(), off.g(), "unmasked cells are grey");
        assert!(on.r() > on.b() + 60, "masked cells are orange: {on:?}");
    }
}
