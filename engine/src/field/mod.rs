//! `Field`: a row-major 2D grid of `f32` samples, and the world frame it is sampled in.
//!
//! This module knows nothing of graphs or evaluation.

pub mod blur;
pub mod conserve;
pub mod derive;
pub mod holes;

/// Largest grid side Orogen evaluates (a graph file's resolution, a build's size, an array).
pub const MAX_RESOLUTION: u64 = 65_536;

use rayon::prelude::*;

// The row loops below are generic over the caller's closure and multiversioned, so each
// node's per-sample closure is inlined into AVX-512, AVX2 and baseline clones (floor, min
// and max become single vector instructions instead of library calls on baseline x86-64).
#[cfg_attr(
    not(any(feature = "simd-max-avx2", feature = "simd-portable")),
    multiversion::multiversion(targets(
        "x86_64+avx512f+avx512vl+avx2+fma+sse4.1",
        "x86_64+avx2+fma+sse4.1"
    ))
)]
#[cfg_attr(
    all(feature = "simd-max-avx2", not(feature = "simd-portable")),
    multiversion::multiversion(targets("x86_64+avx2+fma+sse4.1"))
)]
fn map_row<F: Fn(f32) -> f32>(src: &[f32], dst: &mut [f32], f: &F) {
    for (o, &v) in dst.iter_mut().zip(src) {
        *o = f(v);
    }
}

#[cfg_attr(
    not(any(feature = "simd-max-avx2", feature = "simd-portable")),
    multiversion::multiversion(targets(
        "x86_64+avx512f+avx512vl+avx2+fma+sse4.1",
        "x86_64+avx2+fma+sse4.1"
    ))
)]
#[cfg_attr(
    all(feature = "simd-max-avx2", not(feature = "simd-portable")),
    multiversion::multiversion(targets("x86_64+avx2+fma+sse4.1"))
)]
fn zip_row<F: Fn(f32, f32) -> f32>(a: &[f32], b: &[f32], dst: &mut [f32], f: &F) {
    for ((o, &x), &y) in dst.iter_mut().zip(a).zip(b) {
        *o = f(x, y);
    }
}

#[cfg_attr(
    not(any(feature = "simd-max-avx2", feature = "simd-portable")),
    multiversion::multiversion(targets(
        "x86_64+avx512f+avx512vl+avx2+fma+sse4.1",
        "x86_64+avx2+fma+sse4.1"
    ))
)]
#[cfg_attr(
    all(feature = "simd-max-avx2", not(feature = "simd-portable")),
    multiversion::multiversion(targets("x86_64+avx2+fma+sse4.1"))
)]
fn zip3_row<F: Fn(f32, f32, f32) -> f32>(a: &[f32], b: &[f32], c: &[f32], dst: &mut [f32], f: &F) {
    for (((o, &x), &y), &z) in dst.iter_mut().zip(a).zip(b).zip(c) {
        *o = f(x, y, z);
    }
}

/// Calls `row(y, data_row)` for every row of `data` (rows of `width` samples), rows in
/// parallel.
///
/// Not generic on purpose: rayon's work-splitting code is compiled once, here, instead of once
/// per caller's closure. Instantiated per closure it was a quarter of the engine's machine
/// code, compiled twice by `cargo test` (docs/perf-log.md, 2026-11-29). The row closure is
/// called through a pointer once per row, which costs nothing next to the row's work.
pub fn for_each_row(data: &mut [f32], width: usize, row: &(dyn Fn(usize, &mut [f32]) + Sync)) {
    data.par_chunks_mut(width.max(1))
        .enumerate()
        .for_each(|(y, r)| row(y, r));
}

/// A row-major grid of `f32` samples: `data[y * width + x]`.
///
/// A field has one channel (heights, masks) or several (colour: linear R, G, B), stored as
/// planes one after the other: `data[(c * height + y) * width + x]`. The per-sample
/// operations ([`Field::map`], [`Field::zip_map`], [`Field::min_max`]) treat every sample of
/// every plane alike; the resampling ones work plane by plane; `get_*`, `sample_bilinear`
/// and `rows_mut` see the first plane only.
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    width: usize,
    height: usize,
    channels: usize,
    data: Vec<f32>,
}

impl Field {
    /// A field filled with `value`.
    #[must_use]
    pub fn filled(width: usize, height: usize, value: f32) -> Self {
        Self {
            width,
            height,
            channels: 1,
            data: vec![value; width * height],
        }
    }

    /// Wraps existing row-major data; `None` if the length does not match.
    #[must_use]
    pub fn from_vec(width: usize, height: usize, data: Vec<f32>) -> Option<Self> {
        (data.len() == width * height).then_some(Self {
            width,
            height,
            channels: 1,
            data,
        })
    }

    /// A multi-channel field from single-channel planes of one size; `None` if there are
    /// none, or their sizes or channel counts differ.
    #[must_use]
    pub fn from_planes(planes: &[Field]) -> Option<Self> {
        let first = planes.first()?;
        let (width, height) = (first.width, first.height);
        if planes
            .iter()
            .any(|p| p.channels != 1 || (p.width, p.height) != (width, height))
        {
            return None;
        }
        let mut data = Vec::with_capacity(width * height * planes.len());
        for p in planes {
            data.extend_from_slice(&p.data);
        }
        Some(Self {
            width,
            height,
            channels: planes.len(),
            data,
        })
    }

    /// A field of `channels` planes from their samples one plane after the other; `None` if
    /// the length does not match.
    #[must_use]
    pub fn from_channels(
        width: usize,
        height: usize,
        channels: usize,
        data: Vec<f32>,
    ) -> Option<Self> {
        (channels > 0 && data.len() == width * height * channels).then_some(Self {
            width,
            height,
            channels,
            data,
        })
    }

    /// Number of channels (planes): 1 for heights and masks, 3 for colour.
    #[must_use]
    pub fn channels(&self) -> usize {
        self.channels
    }

    /// The samples of plane `c` (row-major, `width × height`).
    ///
    /// # Panics
    /// If `c >= self.channels()`.
    #[must_use]
    pub fn plane(&self, c: usize) -> &[f32] {
        let n = self.width * self.height;
        &self.data[c * n..(c + 1) * n]
    }

    /// Each plane as a single-channel field.
    #[must_use]
    pub fn planes(&self) -> Vec<Field> {
        (0..self.channels)
            .map(|c| Field {
                width: self.width,
                height: self.height,
                channels: 1,
                data: self.plane(c).to_vec(),
            })
            .collect()
    }

    /// `f` applied to every plane on its own, the results put back together.
    fn per_plane(&self, f: impl Fn(&Field) -> Field) -> Field {
        if self.channels == 1 {
            return f(self);
        }
        let planes: Vec<Field> = self.planes().iter().map(f).collect();
        Field::from_planes(&planes).unwrap_or_else(|| self.clone())
    }

    /// Builds a field by calling `f(x, y)` for every cell, rows in parallel.
    pub fn from_fn(width: usize, height: usize, f: impl Fn(usize, usize) -> f32 + Sync) -> Self {
        let mut field = Self::filled(width, height, 0.0);
        for_each_row(&mut field.data, width, &|y, row| {
            for (x, v) in row.iter_mut().enumerate() {
                *v = f(x, y);
            }
        });
        field
    }

    #[must_use]
    pub fn width(&self) -> usize {
        self.width
    }

    #[must_use]
    pub fn height(&self) -> usize {
        self.height
    }

    #[must_use]
    pub fn data(&self) -> &[f32] {
        &self.data
    }

    pub fn data_mut(&mut self) -> &mut [f32] {
        &mut self.data
    }

    #[must_use]
    pub fn into_vec(self) -> Vec<f32> {
        self.data
    }

    /// Size of the sample buffer in bytes.
    #[must_use]
    pub fn byte_size(&self) -> usize {
        self.data.len() * std::mem::size_of::<f32>()
    }

    /// The sample at `(x, y)`, with coordinates clamped to the border.
    #[must_use]
    pub fn get_clamped(&self, x: isize, y: isize) -> f32 {
        let xi = x.clamp(0, self.width as isize - 1) as usize;
        let yi = y.clamp(0, self.height as isize - 1) as usize;
        self.data[yi * self.width + xi]
    }

    /// The sample at `(x, y)`, positions outside the field reflected back into it at its
    /// border (−1 → 1, width → width − 2), then clamped.
    #[must_use]
    pub fn get_reflected(&self, x: isize, y: isize) -> f32 {
        let reflect = |v: isize, n: isize| {
            let v = if v < 0 { -v } else { v };
            let v = if v > n - 1 { 2 * (n - 1) - v } else { v };
            v.clamp(0, n - 1) as usize
        };
        let (xi, yi) = (
            reflect(x, self.width as isize),
            reflect(y, self.height as isize),
        );
        self.data[yi * self.width + xi]
    }

    /// Parallel iterator over `(row index, row)`.
    pub fn rows_mut(&mut self) -> impl IndexedParallelIterator<Item = (usize, &mut [f32])> {
        self.data.par_chunks_mut(self.width.max(1)).enumerate()
    }

    /// A field of the same size and channels, all zero.
    fn zeroed(&self) -> Field {
        Field {
            data: vec![0.0; self.data.len()],
            ..*self
        }
    }

    /// Applies `f` to every sample in place, rows in parallel.
    pub fn map_in_place(&mut self, f: impl Fn(f32) -> f32 + Sync) {
        for_each_row(&mut self.data, self.width, &|_, row| {
            for v in row {
                *v = f(*v);
            }
        });
    }

    /// A new field `f(v)` sample by sample, in one pass, rows in parallel.
    #[must_use]
    pub fn map(&self, f: impl Fn(f32) -> f32 + Sync) -> Field {
        let mut out = self.zeroed();
        let w = self.width.max(1);
        for_each_row(&mut out.data, w, &|y, o| {
            map_row(&self.data[y * w..][..o.len()], o, &f);
        });
        out
    }

    /// A new field `f(a, b)` sample by sample. Both fields must have the same size.
    #[must_use]
    pub fn zip_map(a: &Field, b: &Field, f: impl Fn(f32, f32) -> f32 + Sync) -> Field {
        debug_assert_eq!(
            (a.width, a.height, a.channels),
            (b.width, b.height, b.channels)
        );
        let mut out = a.zeroed();
        let w = a.width.max(1);
        for_each_row(&mut out.data, w, &|y, o| {
            let n = o.len();
            zip_row(&a.data[y * w..][..n], &b.data[y * w..][..n], o, &f);
        });
        out
    }

    /// A new field `f(a, b, c)` sample by sample, in one pass. All fields must have the same size.
    #[must_use]
    pub fn zip3_map(
        a: &Field,
        b: &Field,
        c: &Field,
        f: impl Fn(f32, f32, f32) -> f32 + Sync,
    ) -> Field {
        debug_assert_eq!((a.width, a.height), (b.width, b.height));
        debug_assert_eq!((a.width, a.height), (c.width, c.height));
        debug_assert_eq!((a.channels, b.channels), (c.channels, c.channels));
        let mut out = a.zeroed();
        let w = a.width.max(1);
        for_each_row(&mut out.data, w, &|y, o| {
            let n = o.len();
            let (ra, rb, rc) = (&a.data[y * w..], &b.data[y * w..], &c.data[y * w..]);
            zip3_row(&ra[..n], &rb[..n], &rc[..n], o, &f);
        });
        out
    }

    /// Minimum and maximum over all finite samples; `None` if there are none.
    #[must_use]
    pub fn min_max(&self) -> Option<(f32, f32)> {
        self.data
            .par_chunks(self.width.max(1))
            .map(|row| {
                row.iter()
                    .filter(|v| v.is_finite())
                    .fold(None, |acc: Option<(f32, f32)>, &v| match acc {
                        None => Some((v, v)),
                        Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
                    })
            })
            .reduce(
                || None,
                |a, b| match (a, b) {
                    (None, x) | (x, None) => x,
                    (Some((a0, a1)), Some((b0, b1))) => Some((a0.min(b0), a1.max(b1))),
                },
            )
    }

    /// Bilinear sample at continuous pixel coordinates (pixel centres at `i + 0.5`), clamped at the border.
    #[must_use]
    pub fn sample_bilinear(&self, px: f32, py: f32) -> f32 {
        let fx = px - 0.5;
        let fy = py - 0.5;
        let x0 = fx.floor();
        let y0 = fy.floor();
        let tx = fx - x0;
        let ty = fy - y0;
        let (x0, y0) = (x0 as isize, y0 as isize);
        let a = self.get_clamped(x0, y0);
        let b = self.get_clamped(x0 + 1, y0);
        let c = self.get_clamped(x0, y0 + 1);
        let d = self.get_clamped(x0 + 1, y0 + 1);
        let top = a + (b - a) * tx;
        let bottom = c + (d - c) * tx;
        top + (bottom - top) * ty
    }

    /// Resamples to `width × height` with bilinear filtering (area-aligned pixel centres).
    #[must_use]
    pub fn resample_bilinear(&self, width: usize, height: usize) -> Field {
        if width == self.width && height == self.height {
            return self.clone();
        }
        if self.channels > 1 {
            return self.per_plane(|p| p.resample_bilinear(width, height));
        }
        let sx = self.width as f32 / width as f32;
        let sy = self.height as f32 / height as f32;
        Field::from_fn(width, height, |x, y| {
            self.sample_bilinear((x as f32 + 0.5) * sx, (y as f32 + 0.5) * sy)
        })
    }

    /// Resamples to `width × height` with a Catmull-Rom cubic (area-aligned pixel centres,
    /// clamped at the border): unlike bilinear filtering, brought up by a large factor it has
    /// no crease along the coarse cells' edges.
    #[must_use]
    pub fn resample_cubic(&self, width: usize, height: usize) -> Field {
        if width == self.width && height == self.height {
            return self.clone();
        }
        if self.channels > 1 {
            return self.per_plane(|p| p.resample_cubic(width, height));
        }
        self.cubic((width, height), (0, 0, width, height))
    }

    /// The part `(x0, y0, width, height)` of this field resampled with a Catmull-Rom cubic to
    /// an `n × n` grid: what [`Field::resample_cubic`]`(n, n)` gives there, without the rest.
    #[must_use]
    pub fn resample_cubic_window(
        &self,
        n: usize,
        (x0, y0, width, height): (usize, usize, usize, usize),
    ) -> Field {
        if self.channels > 1 {
            return self.per_plane(|p| p.resample_cubic_window(n, (x0, y0, width, height)));
        }
        self.cubic((n, n), (x0, y0, width, height))
    }

    /// The part `(x0, y0, width, height)` of this (single-channel) field resampled with a
    /// Catmull-Rom cubic to an `nx × ny` grid.
    fn cubic(
        &self,
        (nx, ny): (usize, usize),
        (x0, y0, width, height): (usize, usize, usize, usize),
    ) -> Field {
        // (The image crate's Catmull-Rom clamps f32 samples to [0, 1].) Per output index along
        // one axis: the four taps around it, those beyond the edge folded onto the edge cell.
        let axis = |from: usize, to: usize, first: usize, count: usize| -> Vec<(usize, Vec<f32>)> {
            let scale = from as f64 / to as f64;
            (first..first + count)
                .map(|o| {
                    let f = (o as f64 + 0.5) * scale - 0.5;
                    let i = f.floor() as isize;
                    let t = (f - i as f64) as f32;
                    let (t2, t3) = (t * t, t * t * t);
                    let taps = [
                        0.5 * (-t3 + 2.0 * t2 - t),
                        0.5 * (3.0 * t3 - 5.0 * t2 + 2.0),
                        0.5 * (-3.0 * t3 + 4.0 * t2 + t),
                        0.5 * (t3 - t2),
                    ];
                    let at = |k: isize| (i + k - 1).clamp(0, from as isize - 1) as usize;
                    let first = at(0);
                    let mut w = vec![0.0f32; at(3) - first + 1];
                    for (k, tap) in taps.iter().enumerate() {
                        w[at(k as isize) - first] += tap;
                    }
                    (first, w)
                })
                .collect()
        };
        self.separable(
            &axis(self.width, nx, x0, width),
            &axis(self.height, ny, y0, height),
        )
    }

    /// The part `(x0, y0, width, height)` of this field resampled bilinearly to an `n × n`
    /// grid: what [`Field::resample_bilinear`]`(n, n)` gives there, without the rest.
    #[must_use]
    pub fn resample_bilinear_window(
        &self,
        n: usize,
        (x0, y0, width, height): (usize, usize, usize, usize),
    ) -> Field {
        if self.channels > 1 {
            return self.per_plane(|p| p.resample_bilinear_window(n, (x0, y0, width, height)));
        }
        let sx = self.width as f32 / n as f32;
        let sy = self.height as f32 / n as f32;
        Field::from_fn(width, height, |x, y| {
            self.sample_bilinear(((x0 + x) as f32 + 0.5) * sx, ((y0 + y) as f32 + 0.5) * sy)
        })
    }

    /// The same field with its rows in reverse order (north ↔ south).
    #[must_use]
    pub fn flipped_vertically(&self) -> Field {
        if self.channels > 1 {
            return self.per_plane(Field::flipped_vertically);
        }
        let mut data = Vec::with_capacity(self.data.len());
        for row in self.data.chunks(self.width.max(1)).rev() {
            data.extend_from_slice(row);
        }
        Field { data, ..*self }
    }

    /// Resamples to `width × height` by exact area weights: every output cell is the mean of
    /// the input it covers (fractions of cells counted by their overlap). For any ratio; the
    /// way to bring a finer field down to a coarser grid without aliasing.
    #[must_use]
    pub fn resample_area(&self, width: usize, height: usize) -> Field {
        if width == self.width && height == self.height {
            return self.clone();
        }
        if self.channels > 1 {
            return self.per_plane(|p| p.resample_area(width, height));
        }
        // Weights of the input cells along one axis for each output cell: (first, weights).
        let axis = |from: usize, to: usize| -> Vec<(usize, Vec<f32>)> {
            let scale = from as f64 / to as f64;
            (0..to)
                .map(|o| {
                    let (a, b) = (o as f64 * scale, (o + 1) as f64 * scale);
                    let first = a.floor() as usize;
                    let last = (b.ceil() as usize).min(from).max(first + 1);
                    let w: Vec<f32> = (first..last)
                        .map(|i| {
                            let lo = a.max(i as f64);
                            let hi = b.min((i + 1) as f64);
                            ((hi - lo).max(0.0) / scale) as f32
                        })
                        .collect();
                    (first, w)
                })
                .collect()
        };
        self.separable(&axis(self.width, width), &axis(self.height, height))
    }

    /// A separable resampling: each output cell of a row is the weighted sum of the inputs
    /// `(first, weights)` names along x, then each output row the weighted sum of those rows
    /// along y (rows in parallel).
    fn separable(&self, ax: &[(usize, Vec<f32>)], ay: &[(usize, Vec<f32>)]) -> Field {
        let (width, height) = (ax.len(), ay.len());
        let mut tmp = vec![0.0f32; width * self.height];
        tmp.par_chunks_mut(width.max(1))
            .zip(self.data.par_chunks(self.width.max(1)))
            .for_each(|(out, row)| {
                for (o, (first, w)) in out.iter_mut().zip(ax) {
                    *o = w.iter().zip(&row[*first..]).map(|(w, v)| w * v).sum();
                }
            });
        let mut data = vec![0.0f32; width * height];
        data.par_chunks_mut(width.max(1))
            .zip(ay.par_iter())
            .for_each(|(out, (first, w))| {
                for (k, wk) in w.iter().enumerate() {
                    let row = &tmp[(first + k) * width..(first + k + 1) * width];
                    for (o, v) in out.iter_mut().zip(row) {
                        *o += wk * v;
                    }
                }
            });
        Field {
            width,
            height,
            channels: 1,
            data,
        }
    }

    /// Resamples to `width × height`: by area when shrinking (no aliasing), bilinear when
    /// growing (no blocks).
    #[must_use]
    pub fn resample(&self, width: usize, height: usize) -> Field {
        if width <= self.width && height <= self.height {
            self.resample_area(width, height)
        } else {
            self.resample_bilinear(width, height)
        }
    }

    /// Box-filter downsampling by an integer factor (used to compare resolutions).
    #[must_use]
    pub fn downsample_box(&self, factor: usize) -> Field {
        if self.channels > 1 {
            return self.per_plane(|p| p.downsample_box(factor));
        }
        let factor = factor.max(1);
        let w = self.width / factor;
        let h = self.height / factor;
        let norm = 1.0 / (factor * factor) as f32;
        Field::from_fn(w, h, |x, y| {
            let mut sum = 0.0;
            for j in 0..factor {
                let row = &self.data[(y * factor + j) * self.width..];
                for i in 0..factor {
                    sum += row[x * factor + i];
                }
            }
            sum * norm
        })
    }
}

/// The physical frame a graph is evaluated in: a square world of `size_m` metres,
/// heights between `height_min_m` and `height_max_m`, sampled on a `resolution²` grid.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct World {
    pub size_m: f64,
    pub height_min_m: f64,
    pub height_max_m: f64,
}

impl World {
    /// Its three numbers, bit for bit, into a content hash (cache and memo keys).
    pub fn hash_into(&self, h: &mut blake3::Hasher) {
        for v in [self.size_m, self.height_min_m, self.height_max_m] {
            h.update(&v.to_bits().to_le_bytes());
        }
    }

    /// Height span in metres (`height_max_m - height_min_m`).
    #[must_use]
    pub fn height_span_m(&self) -> f64 {
        self.height_max_m - self.height_min_m
    }

    /// Cell size in metres at a given resolution.
    #[must_use]
    pub fn cell_size_m(&self, resolution: usize) -> f64 {
        self.size_m / resolution.max(1) as f64
    }

    /// Maps a relative height (0 = `height_min_m`, 1 = `height_max_m`) to metres.
    #[must_use]
    pub fn relative_to_m(&self, r: f64) -> f64 {
        self.height_min_m + r * self.height_span_m()
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn reflected_samples_mirror_about_the_border_cells() {
        let f = Field::from_fn(4, 3, |x, y| (10 * y + x) as f32);
        assert_eq!(f.get_reflected(-1, 0), 1.0);
        assert_eq!(f.get_reflected(-2, 1), 12.0);
        assert_eq!(f.get_reflected(4, 0), 2.0);
        assert_eq!(f.get_reflected(5, 2), 21.0);
        assert_eq!(f.get_reflected(1, -1), 11.0);
        assert_eq!(f.get_reflected(1, 3), 11.0);
        assert_eq!(f.get_reflected(2, 1), 12.0);
        // Far outside: clamped after one reflection.
        assert_eq!(f.get_reflected(-100, 100), 0.0);
    }

    use super::*;

    /// The cubic keeps a constant everywhere (the edges included) and goes through a linear
    /// ramp away from the edges (Catmull-Rom reproduces linear functions).
    #[test]
    fn cubic_resampling_keeps_constants_and_ramps() {
        let c = Field::filled(5, 7, 3.5).resample_cubic(40, 56);
        assert!(c.data().iter().all(|&v| (v - 3.5).abs() < 1e-5));
        let ramp = Field::from_fn(16, 16, |x, y| 2.0 * x as f32 - y as f32);
        let up = ramp.resample_cubic(128, 128);
        for y in 16..112 {
            for x in 16..112 {
                // Output cell centre (x + 0.5) / 8 − 0.5 in input cells.
                let (fx, fy) = ((x as f32 + 0.5) / 8.0 - 0.5, (y as f32 + 0.5) / 8.0 - 0.5);
                let want = 2.0 * fx - fy;
                assert!((up.data()[y * 128 + x] - want).abs() < 1e-4, "({x}, {y})");
            }
        }
    }

    #[test]
    fn from_fn_is_row_major() {
        let f = Field::from_fn(3, 2, |x, y| (y * 10 + x) as f32);
        assert_eq!(f.data(), &[0.0, 1.0, 2.0, 10.0, 11.0, 12.0]);
    }

    #[test]
    fn resample_of_constant_is_constant() {
        let f = Field::filled(7, 7, 3.5);
        let r = f.resample_bilinear(16, 16);
        assert!(r.data().iter().all(|&v| v == 3.5));
    }

    #[test]
    fn resample_linear_ramp_stays_linear_inside() {
        // A ramp in world coordinates resampled to twice the resolution keeps its values at shared centres.
        let f = Field::from_fn(8, 1, |x, _| x as f32 + 0.5);
        let r = f.resample_bilinear(16, 1);
        // Interior samples follow the ramp exactly: value = (x + 0.5) / 2 in source pixel units.
        for x in 1..15 {
            let expect = (x as f32 + 0.5) * 0.5;
            assert!((r.data()[x] - expect).abs() < 1e-5, "{x}: {}", r.data()[x]);
        }
    }

    #[test]
    fn min_max_ignores_nan() {
        let f = Field::from_vec(3, 1, vec![1.0, f32::NAN, -2.0]).expect("size");
        assert_eq!(f.min_max(), Some((-2.0, 1.0)));
    }
}
