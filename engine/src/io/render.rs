//! Pictures of fields: colormaps, hillshade, rendered previews, tangent-space normal maps
//! and splat (weight) maps. The editor uses the same colormaps.

use crate::field::derive::gradient;
use crate::field::{Field, World};
use rayon::prelude::*;

/// A colormap from [0, 1] to RGB.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Colormap {
    Grayscale,
    /// Deep water, shallows, beach, lowland green, highland brown, rock grey, snow.
    Terrain,
    /// Perceptually uniform black → purple → orange → cream (for masks and data).
    Magma,
}

crate::impl_choice!(Colormap {
    Grayscale = "grayscale",
    Terrain = "terrain",
    Magma = "magma",
});

/// Control points `(t, [r, g, b])` of each colormap, linearly interpolated.
fn stops(map: Colormap) -> &'static [(f32, [f32; 3])] {
    match map {
        Colormap::Grayscale => &[(0.0, [0.0, 0.0, 0.0]), (1.0, [1.0, 1.0, 1.0])],
        Colormap::Terrain => &[
            (0.0, [0.10, 0.20, 0.45]),
            (0.28, [0.25, 0.50, 0.75]),
            (0.30, [0.85, 0.80, 0.60]),
            (0.34, [0.35, 0.60, 0.30]),
            (0.55, [0.45, 0.55, 0.30]),
            (0.70, [0.55, 0.45, 0.35]),
            (0.85, [0.60, 0.58, 0.56]),
            (0.95, [0.95, 0.95, 0.97]),
            (1.0, [1.0, 1.0, 1.0]),
        ],
        Colormap::Magma => &[
            (0.0, [0.0, 0.0, 0.02]),
            (0.25, [0.23, 0.06, 0.44]),
            (0.5, [0.55, 0.16, 0.51]),
            (0.75, [0.92, 0.37, 0.38]),
            (1.0, [0.99, 0.99, 0.75]),
        ],
    }
}

impl Colormap {
    /// The colour at `t` (clamped to [0, 1]).
    #[must_use]
    pub fn color(self, t: f32) -> [f32; 3] {
        let t = if t.is_nan() { 0.0 } else { t.clamp(0.0, 1.0) };
        let s = stops(self);
        let i = s
            .iter()
            .position(|&(x, _)| x >= t)
            .unwrap_or(s.len() - 1)
            .max(1);
        let ((t0, c0), (t1, c1)) = (s[i - 1], s[i]);
        let u = if t1 > t0 { (t - t0) / (t1 - t0) } else { 0.0 };
        std::array::from_fn(|k| c0[k] + (c1[k] - c0[k]) * u)
    }
}

/// Lambertian hillshade in [0, 1] for light from `azimuth_deg` (clockwise from north) at
/// `altitude_deg` above the horizon, slopes from the real cell size.
#[must_use]
pub fn hillshade(f: &Field, cell_size_m: f64, azimuth_deg: f32, altitude_deg: f32) -> Field {
    let (gx, gy) = gradient(f, cell_size_m);
    let (az, alt) = (azimuth_deg.to_radians(), altitude_deg.to_radians());
    // Light direction in (east, south, up): north is −y.
    let l = [
        libm::sinf(az) * libm::cosf(alt),
        -libm::cosf(az) * libm::cosf(alt),
        libm::sinf(alt),
    ];
    Field::zip_map(&gx, &gy, |a, b| {
        // Surface normal (−∂h/∂x, −∂h/∂y, 1), normalised.
        let n = 1.0 / (a * a + b * b + 1.0).sqrt();
        ((-a * l[0] - b * l[1] + l[2]) * n).max(0.0)
    })
}

/// RGB8 pixels of a colormapped, hillshaded picture: `values` in [lo, hi] → colormap,
/// modulated by a hillshade from the north-west (`heights` gives the relief; masks pass
/// `None` and are drawn flat).
#[must_use]
pub fn preview_rgb(
    values: &Field,
    lo: f32,
    hi: f32,
    map: Colormap,
    heights: Option<(&Field, f64)>,
) -> Vec<u8> {
    let shade = heights.map(|(h, cell)| hillshade(h, cell, 315.0, 45.0));
    let inv = if hi > lo { 1.0 / (hi - lo) } else { 0.0 };
    let mut out = vec![0u8; values.data().len() * 3];
    out.par_chunks_mut(3 * values.width().max(1))
        .enumerate()
        .for_each(|(y, row)| {
            for (x, px) in row.chunks_mut(3).enumerate() {
                let i = y * values.width() + x;
                let c = map.color((values.data()[i] - lo) * inv);
                // Ambient 0.35 plus diffuse keeps shadows readable.
                let s = shade.as_ref().map_or(1.0, |s| 0.35 + 0.65 * s.data()[i]);
                for k in 0..3 {
                    px[k] = (c[k] * s * 255.0).round().clamp(0.0, 255.0) as u8;
                }
            }
        });
    out
}

/// RGB8 pixels of a colour field (linear RGB planes), sRGB-encoded, optionally modulated
/// by the hillshade of `heights` like [`preview_rgb`].
#[must_use]
pub fn color_rgb8(color: &Field, heights: Option<(&Field, f64)>) -> Vec<u8> {
    let shade = heights.map(|(h, cell)| hillshade(h, cell, 315.0, 45.0));
    let n = color.width() * color.height();
    let data = color.data();
    let planes = color.channels().min(3);
    let mut out = vec![0u8; n * 3];
    out.par_chunks_mut(3 * color.width().max(1))
        .enumerate()
        .for_each(|(y, row)| {
            for (x, px) in row.chunks_mut(3).enumerate() {
                let i = y * color.width() + x;
                let s = shade.as_ref().map_or(1.0, |s| 0.35 + 0.65 * s.data()[i]);
                for (k, p) in px.iter_mut().enumerate() {
                    let v = data[(k % planes) * n + i] * s;
                    *p = (crate::io::heightmap::srgb_encode(v) * 255.0).round() as u8;
                }
            }
        });
    out
}

/// Which way the green channel of a normal map points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NormalY {
    /// +Y up the texture (OpenGL, Unity, Godot, Blender).
    Opengl,
    /// +Y down the texture (DirectX, Unreal).
    Directx,
}

crate::impl_choice!(NormalY {
    Opengl = "opengl",
    Directx = "directx",
});

/// Tangent-space normals (x, y, z in [−1, 1]) from world-unit slopes: n ∝ (−∂h/∂x, ±∂h/∂y, 1).
///
/// Image rows run north to south (y grows down), so with the OpenGL convention the green
/// channel is +∂h/∂y (pointing up the image), with DirectX it is −∂h/∂y.
#[must_use]
pub fn normals(f: &Field, cell_size_m: f64, y: NormalY) -> Vec<[f32; 3]> {
    let (gx, gy) = gradient(f, cell_size_m);
    let sign = match y {
        NormalY::Opengl => 1.0,
        NormalY::Directx => -1.0,
    };
    gx.data()
        .iter()
        .zip(gy.data())
        .map(|(&a, &b)| {
            let n = 1.0 / (a * a + b * b + 1.0).sqrt();
            [-a * n, sign * b * n, n]
        })
        .collect()
}

/// Encodes a normal component in [−1, 1] to `bits` (8 or 16) unsigned.
#[must_use]
pub fn encode_unit(v: f32, max: f32) -> u16 {
    ((v.clamp(-1.0, 1.0) * 0.5 + 0.5) * max).round() as u16
}

/// RGBA weights from up to four masks; with `normalize`, weights are divided by their sum
/// where it is positive, so they add up to 1 (up to 8-bit rounding).
#[must_use]
pub fn splat_rgba(masks: &[&Field], normalize: bool) -> Vec<u8> {
    let n = masks.first().map_or(0, |m| m.data().len());
    let mut out = vec![0u8; n * 4];
    out.par_chunks_mut(4).enumerate().for_each(|(i, px)| {
        let mut w = [0.0f32; 4];
        for (k, m) in masks.iter().take(4).enumerate() {
            w[k] = crate::node::unit(m.data()[i]);
        }
        let sum: f32 = w.iter().sum();
        if normalize && sum > 0.0 {
            for v in &mut w {
                *v /= sum;
            }
        }
        for k in 0..4 {
            px[k] = (w[k] * 255.0).round() as u8;
        }
    });
    out
}

/// Height range used to scale a field for display: the world's range for heights.
#[must_use]
pub fn display_range(world: &World) -> (f32, f32) {
    (world.height_min_m as f32, world.height_max_m as f32)
}

/// Where the terrain colours' water ends (deep to shallow below it) and their land begins.
const SHALLOWS: f32 = 0.28;
const SHORE: f32 = 0.30;

/// The picture of heights between `lo` and `hi` (the graph's height range) in `map`, lit by
/// `relief`. In the terrain colours water is drawn at and below `sea_m` — the graph's own sea
/// level ([`crate::graph::Graph::sea_level_m`]) — and nowhere without one: the ramp's water
/// colours end at the sea level (a sea surface lies *at* it, so it is water, never beach)
/// and its land colours start just above. Shared by the editor's previews and builds'
/// `*.preview.png`, so both show the same coast.
#[must_use]
pub fn height_rgb(
    field: &Field,
    (lo, hi): (f32, f32),
    sea_m: Option<f32>,
    map: Colormap,
    relief: Option<(&Field, f64)>,
) -> Vec<u8> {
    if map != Colormap::Terrain || hi <= lo {
        return preview_rgb(field, lo, hi, map, relief);
    }
    let t = match sea_m {
        Some(sea) if sea > lo && sea < hi => field.map(|v| {
            if v <= sea {
                SHALLOWS * (v - lo) / (sea - lo)
            } else {
                SHORE + (1.0 - SHORE) * (v - sea) / (hi - sea)
            }
        }),
        // A sea above the whole range: all water.
        Some(sea) if sea >= hi => field.map(|v| SHALLOWS * (v - lo) / (hi - lo)),
        // No sea (or one below everything): the land colours over the whole range.
        _ => field.map(|v| SHORE + (1.0 - SHORE) * (v - lo) / (hi - lo)),
    };
    preview_rgb(&t, 0.0, 1.0, map, relief)
}

/// How a scalar (a quantity in its own unit) between `lo` and `hi` is shown: on a log scale
/// when every value is above 0 and they span more than two decades (drainage areas), else
/// as is. Returns the field to colour and its display range.
#[must_use]
pub fn scalar_display(field: &Field, lo: f32, hi: f32) -> (Field, f32, f32) {
    if lo > 0.0 && hi > 100.0 * lo {
        let shown = field.map(|v| v.max(lo).ln());
        (shown, lo.ln(), hi.ln())
    } else {
        (field.clone(), lo, hi)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colormaps_hit_their_ends() {
        assert_eq!(Colormap::Grayscale.color(0.0), [0.0, 0.0, 0.0]);
        assert_eq!(Colormap::Grayscale.color(1.0), [1.0, 1.0, 1.0]);
        assert_eq!(Colormap::Terrain.color(2.0), [1.0, 1.0, 1.0]);
        assert_eq!(Colormap::Magma.color(f32::NAN), [0.0, 0.0, 0.02]);
    }

    #[test]
    fn flat_ground_faces_up_and_slopes_tilt_the_normal() {
        let flat = Field::filled(4, 4, 5.0);
        assert!(normals(&flat, 1.0, NormalY::Opengl)
            .iter()
            .all(|n| *n == [0.0, 0.0, 1.0]));
        // Rising eastwards 1 m per m: normal leans west, 45°.
        let ramp = Field::from_fn(4, 4, |x, _| x as f32);
        let n = normals(&ramp, 1.0, NormalY::Opengl)[5];
        assert!((n[0] + std::f32::consts::FRAC_1_SQRT_2).abs() < 1e-6 && n[1] == 0.0);
        // Rising southwards (down the image): OpenGL green is positive, DirectX negative.
        let south = Field::from_fn(4, 4, |_, y| y as f32);
        assert!(normals(&south, 1.0, NormalY::Opengl)[5][1] > 0.0);
        assert!(normals(&south, 1.0, NormalY::Directx)[5][1] < 0.0);
    }

    #[test]
    fn normalized_splat_weights_sum_to_one() {
        let a = Field::filled(3, 1, 0.6);
        let b = Field::filled(3, 1, 0.2);
        let c = Field::filled(3, 1, 0.2);
        let px = splat_rgba(&[&a, &b, &c], true);
        let sum: u32 = px[..4].iter().map(|&v| u32::from(v)).sum();
        assert!((254..=256).contains(&sum), "{sum}");
        assert_eq!(px[3], 0);
    }
}
