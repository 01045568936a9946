//! GeoTIFF elevation data: digital elevation models in (as GDAL, QGIS and the national
//! mapping agencies write them) and heights, masks and colour out.
//!
//! Reading goes through the `tiff` crate (striped and tiled, uncompressed, LZW, Deflate;
//! little- and big-endian; BigTIFF); only the GeoTIFF tags a DEM needs are parsed here:
//! `ModelPixelScale` + `ModelTiepoint` (or a `ModelTransformation` without rotation) for the
//! grid, three GeoKeys (model type, raster type, linear units), GDAL's `GDAL_NODATA` and the
//! band's scale and offset in `GDAL_METADATA`.
//!
//! Writing produces a tiled (256 × 256), Deflate-compressed, float32 GeoTIFF of heights in
//! metres, north up, in a local metric frame: `ModelPixelScale` of one cell in metres and the
//! north-west corner at (0, `size_m`), so GDAL reports the world's extent in metres.

use crate::field::Field;
use crate::node::CancelToken;
use std::fmt::Write as _;
use std::io::{self, Cursor, Write};
use tiff::decoder::{Decoder, DecodingResult, Limits};
use tiff::tags::Tag;

/// GDAL's band metadata (scale, offset) tag.
const GDAL_METADATA: u16 = 42112;
/// Side of an exported tile.
const TILE: usize = 256;

/// A DEM's grid in its coordinate reference system.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GeoRef {
    /// Cell size along x and y, in the CRS's units (degrees for a geographic CRS).
    pub pixel: (f64, f64),
    /// The north-west corner of the north-west cell, in the CRS's units.
    pub origin: (f64, f64),
    /// Whether the CRS is geographic (longitude, latitude in degrees).
    pub geographic: bool,
    /// Metres per unit of a projected CRS (1 for metres, 0.3048 for feet).
    pub unit_m: f64,
    /// The CRS's EPSG code (GeographicTypeGeoKey or ProjectedCSTypeGeoKey); `None` for a
    /// user-defined CRS or none named.
    pub epsg: Option<u32>,
}

impl GeoRef {
    /// The rectangle of a `width × height` raster on this grid, as a graph's georeference.
    #[must_use]
    pub fn bounds(&self, width: usize, height: usize) -> crate::graph::Georef {
        crate::graph::Georef {
            epsg: self.epsg,
            geographic: self.geographic,
            west: self.origin.0,
            north: self.origin.1,
            east: self.origin.0 + self.pixel.0 * width as f64,
            south: self.origin.1 - self.pixel.1 * height as f64,
        }
    }

    /// The cell size in metres `(x, y)` of a raster `height` cells tall: for a geographic CRS,
    /// degrees converted at the raster's middle latitude on the WGS 84 ellipsoid.
    #[must_use]
    pub fn cell_m(&self, height: usize) -> (f64, f64) {
        if !self.geographic {
            return (self.pixel.0 * self.unit_m, self.pixel.1 * self.unit_m);
        }
        let lat = (self.origin.1 - self.pixel.1 * height as f64 / 2.0).to_radians();
        // WGS 84: the lengths of a degree of latitude and of longitude at `lat`.
        let (a, e2) = (6_378_137.0f64, 0.006_694_379_990_14f64);
        let s2 = 1.0 - e2 * lat.sin().powi(2);
        let per_deg_lat = std::f64::consts::PI / 180.0 * a * (1.0 - e2) / s2.powf(1.5);
        let per_deg_lon = std::f64::consts::PI / 180.0 * a * lat.cos() / s2.sqrt();
        (self.pixel.0 * per_deg_lon, self.pixel.1 * per_deg_lat)
    }
}

/// A DEM read from a GeoTIFF.
#[derive(Clone, Debug)]
pub struct Dem {
    /// Elevations in metres (scale and offset applied, no-data cells filled).
    pub field: Field,
    pub georef: Option<GeoRef>,
    /// How many cells had no data (filled; see [`crate::field::holes::fill_holes`]).
    pub filled: usize,
    /// Which cells had data, row-major; `None` when every cell had.
    pub valid: Option<Vec<bool>>,
}

impl Dem {
    /// The DEM's extent in metres `(x, y)`; `None` without a georeference.
    #[must_use]
    pub fn size_m(&self) -> Option<(f64, f64)> {
        let g = self.georef?;
        let (cx, cy) = g.cell_m(self.field.height());
        Some((
            cx * self.field.width() as f64,
            cy * self.field.height() as f64,
        ))
    }
}

/// Whether `bytes` are a TIFF to read as a DEM rather than as an image: one with GeoTIFF
/// tags, or with signed or floating-point samples.
#[must_use]
pub fn is_dem(bytes: &[u8]) -> bool {
    let tiff = bytes.starts_with(b"II*\0")
        || bytes.starts_with(b"MM\0*")
        || bytes.starts_with(b"II+\0")
        || bytes.starts_with(b"MM\0+");
    if !tiff {
        return false;
    }
    let Ok(mut d) = Decoder::new(Cursor::new(bytes)) else {
        return false;
    };
    let geo = [
        Tag::ModelPixelScaleTag,
        Tag::ModelTiepointTag,
        Tag::ModelTransformationTag,
    ]
    .into_iter()
    .any(|t| matches!(d.find_tag(t), Ok(Some(_))));
    // SampleFormat 2 (signed) or 3 (IEEE float).
    let format = d
        .find_tag_unsigned_vec::<u16>(Tag::SampleFormat)
        .ok()
        .flatten()
        .is_some_and(|v| v.iter().any(|&f| f == 2 || f == 3));
    geo || format
}

/// Reads a DEM: the first band of the first image, in metres.
///
/// # Errors
/// A message naming what the file lacks or what could not be decoded.
pub fn read(bytes: &[u8], cancel: Option<&CancelToken>) -> Result<Dem, String> {
    let mut limits = Limits::default();
    // The largest image `import` accepts, as f64 samples.
    limits.decoding_buffer_size = (super::trust::MAX_IMAGE_PIXELS * 8) as usize;
    // Ctrl-C stops the decoder between its reads.
    let reader = super::trust::CancelRead::new(Cursor::new(bytes), cancel);
    let mut d = Decoder::new(reader)
        .map_err(|e| format!("not a readable TIFF: {e}"))?
        .with_limits(limits);
    let (w, h) = d.dimensions().map_err(|e| e.to_string())?;
    let (w, h) = (w as usize, h as usize);
    if let Some(problem) = super::trust::image_size_problem(w as u64, h as u64) {
        return Err(problem);
    }
    let bands = d
        .find_tag_unsigned::<u16>(Tag::SamplesPerPixel)
        .ok()
        .flatten()
        .unwrap_or(1)
        .max(1) as usize;
    let nodata = match d.find_tag(Tag::GdalNodata) {
        Ok(Some(v)) => v
            .into_string()
            .ok()
            .and_then(|s| s.trim().trim_end_matches('\0').parse::<f64>().ok()),
        _ => None,
    };
    let (scale, offset) = match d.find_tag(Tag::Unknown(GDAL_METADATA)) {
        Ok(Some(v)) => v.into_string().map_or((1.0, 0.0), |s| scale_offset(&s)),
        _ => (1.0, 0.0),
    };
    let georef = georef(&mut d)?;
    if cancel.is_some_and(CancelToken::is_cancelled) {
        return Err("cancelled".into());
    }
    // Chunk by chunk (a strip or a tile at a time), straight into the f32 heights: a float64
    // raster never exists whole, so decoding holds the heights, their validity and one chunk.
    let cost = decode_bytes(w, h);
    if cost > super::trust::MAX_DECODE_BYTES {
        return Err(format!(
            "decoding this {w} × {h} raster needs about {}, more than the {} Orogen allows one import",
            super::trust::human_bytes(cost),
            super::trust::human_bytes(super::trust::MAX_DECODE_BYTES)
        ));
    }
    let mut valid = vec![true; w * h];
    let mut data = vec![0.0f32; w * h];
    let values = Band {
        bands,
        nodata,
        scale,
        offset,
    };
    read_chunks(&mut d, (w, h), &values, cancel, &mut valid, &mut data)?;
    let filled = valid.iter().filter(|&&v| !v).count();
    if filled == w * h {
        return Err("every cell is no-data".into());
    }
    if filled > 0 {
        crate::field::holes::fill_holes(&mut data, &valid, w, h);
    }
    let field = Field::from_vec(w, h, data).ok_or("raster size mismatch")?;
    Ok(Dem {
        field,
        georef,
        filled,
        valid: (filled > 0).then_some(valid),
    })
}

/// How a DEM's first band becomes metres: interleaved bands, GDAL's no-data value, scale and
/// offset.
struct Band {
    bands: usize,
    nodata: Option<f64>,
    scale: f64,
    offset: f64,
}

/// Decodes the image chunk by chunk (a strip or a tile at a time) into `data` (metres) and
/// `valid` (false for no-data), `w × h` row-major.
fn read_chunks<R: io::Read + io::Seek>(
    d: &mut Decoder<R>,
    (w, h): (usize, usize),
    v: &Band,
    cancel: Option<&CancelToken>,
    valid: &mut [bool],
    data: &mut [f32],
) -> Result<(), String> {
    let (cw, ch) = d.chunk_dimensions();
    let (cw, ch) = (cw as usize, ch as usize);
    let tiled = d.get_chunk_type() == tiff::decoder::ChunkType::Tile;
    let across = if tiled { w.div_ceil(cw.max(1)) } else { 1 };
    let per_plane = if tiled {
        across * h.div_ceil(ch.max(1))
    } else {
        h.div_ceil(ch.max(1))
    };
    // GDAL writes a file with SPARSE_OK leaving out the blocks that are all no-data (or all 0
    // without a no-data value): offset and byte count 0, which GDAL reads as that value.
    let counts = d
        .get_tag_u64_vec(if tiled {
            Tag::TileByteCounts
        } else {
            Tag::StripByteCounts
        })
        .map_err(|e| format!("no chunk byte counts: {e}"))?;
    for k in 0..per_plane {
        if cancel.is_some_and(CancelToken::is_cancelled) {
            return Err("cancelled".into());
        }
        let (x0, y0) = if tiled {
            ((k % across) * cw, (k / across) * ch)
        } else {
            (0, k * ch)
        };
        let (dw, dh) = (cw.min(w - x0), ch.min(h - y0));
        if counts.get(k) == Some(&0) {
            // Without a no-data value the left-out samples are 0, in metres the offset.
            let zero = if v.nodata.is_some() {
                0.0
            } else {
                v.offset as f32
            };
            for y in y0..y0 + dh {
                valid[y * w + x0..y * w + x0 + dw].fill(v.nodata.is_none());
                data[y * w + x0..y * w + x0 + dw].fill(zero);
            }
            continue;
        }
        let index = u32::try_from(k).map_err(|_| "too many chunks".to_owned())?;
        let chunk = d.read_chunk(index).map_err(|e| e.to_string())?;
        let mut put = |i: usize, s: f64| {
            let (x, y) = (x0 + i % dw, y0 + i / dw);
            if i >= dw * dh || x >= w || y >= h {
                return;
            }
            // GDAL compares no-data as the band's own type: a float32 band's -3.4028235e38
            // is the f32 rounding of the tag's text.
            let missing =
                !s.is_finite() || v.nodata.is_some_and(|n| s == n || (s as f32) == (n as f32));
            let at = y * w + x;
            valid[at] = !missing;
            data[at] = if missing {
                0.0
            } else {
                (s * v.scale + v.offset) as f32
            };
        };
        let n =
            match &chunk {
                DecodingResult::U8(x) => first_band(x, v.bands, f64::from, &mut put),
                DecodingResult::U16(x) => first_band(x, v.bands, f64::from, &mut put),
                DecodingResult::U32(x) => first_band(x, v.bands, f64::from, &mut put),
                DecodingResult::I8(x) => first_band(x, v.bands, f64::from, &mut put),
                DecodingResult::I16(x) => first_band(x, v.bands, f64::from, &mut put),
                DecodingResult::I32(x) => first_band(x, v.bands, f64::from, &mut put),
                DecodingResult::F32(x) => first_band(x, v.bands, f64::from, &mut put),
                DecodingResult::F64(x) => first_band(x, v.bands, |s| s, &mut put),
                _ => return Err(
                    "unsupported sample type (expected 8/16/32-bit integers or 32/64-bit floats)"
                        .into(),
                ),
            };
        if n != dw * dh {
            return Err(format!(
                "{n} samples in a {dw} × {dh} chunk (planar bands are not supported)"
            ));
        }
    }
    Ok(())
}

/// Gives `put` the first of `bands` interleaved samples of each pixel, as f64, with the
/// pixel's index; returns how many pixels there were.
fn first_band<T: Copy>(
    v: &[T],
    bands: usize,
    f: impl Fn(T) -> f64,
    put: &mut impl FnMut(usize, f64),
) -> usize {
    let mut n = 0;
    for (i, &x) in v.iter().step_by(bands).enumerate() {
        put(i, f(x));
        n = i + 1;
    }
    n
}

/// Bytes reading a `w × h` DEM holds at most: the f32 heights, a validity flag per cell and,
/// when cells are missing, the hole filling's pyramid of values and weights (its first level
/// 8 bytes a cell, the rest a third of that, and one coarser level copied).
#[must_use]
pub fn decode_bytes(w: usize, h: usize) -> u64 {
    (w as u64)
        .saturating_mul(h as u64)
        .saturating_mul(4 + 1 + 12)
}

/// The first band's scale and offset in GDAL's metadata XML (`<Item name="SCALE" …>`).
fn scale_offset(xml: &str) -> (f64, f64) {
    let item = |role: &str| -> Option<f64> {
        xml.split("<Item")
            .filter(|i| i.contains(&format!("role=\"{role}\"")))
            .find(|i| !i.contains("sample=") || i.contains("sample=\"0\""))
            .and_then(|i| i.split('>').nth(1))
            .and_then(|v| v.split('<').next())
            .and_then(|v| v.trim().parse().ok())
    };
    (item("scale").unwrap_or(1.0), item("offset").unwrap_or(0.0))
}

/// The GeoKey `id`'s short value in a GeoKeyDirectory.
fn geokey(dir: &[u16], id: u16) -> Option<u16> {
    dir.get(4..)?
        .chunks_exact(4)
        .find(|k| k[0] == id && k[1] == 0)
        .map(|k| k[3])
}

/// The raster's grid from its GeoTIFF tags; `None` for a plain TIFF.
fn georef<R: io::Read + io::Seek>(d: &mut Decoder<R>) -> Result<Option<GeoRef>, String> {
    let doubles = |d: &mut Decoder<R>, t: Tag| -> Option<Vec<f64>> {
        d.find_tag(t)
            .ok()
            .flatten()
            .and_then(|v| v.into_f64_vec().ok())
    };
    let (pixel, mut origin) = if let (Some(s), Some(t)) = (
        doubles(d, Tag::ModelPixelScaleTag),
        doubles(d, Tag::ModelTiepointTag),
    ) {
        if s.len() < 2 || t.len() < 6 {
            return Err("malformed ModelPixelScale or ModelTiepoint tag".into());
        }
        // The tie point maps raster (i, j) to model (x, y).
        ((s[0], s[1]), (t[3] - t[0] * s[0], t[4] + t[1] * s[1]))
    } else if let Some(m) = doubles(d, Tag::ModelTransformationTag) {
        if m.len() < 16 || m[1] != 0.0 || m[4] != 0.0 {
            return Err("a rotated or sheared ModelTransformation is not supported".into());
        }
        ((m[0], -m[5]), (m[3], m[7]))
    } else {
        return Ok(None);
    };
    if !(pixel.0 > 0.0 && pixel.1 > 0.0 && pixel.0.is_finite() && pixel.1.is_finite()) {
        return Err(format!(
            "cell size {} × {} in the GeoTIFF tags: expected positive numbers (north up)",
            pixel.0, pixel.1
        ));
    }
    let keys = d
        .find_tag(Tag::GeoKeyDirectoryTag)
        .ok()
        .flatten()
        .and_then(|v| v.into_u16_vec().ok())
        .unwrap_or_default();
    // GTModelTypeGeoKey: 2 = geographic. GTRasterTypeGeoKey: 2 = the tie point is a cell's
    // centre, not its corner. ProjLinearUnitsGeoKey: 9001 metre, 9002 foot, 9003 US foot.
    let geographic = geokey(&keys, 1024) == Some(2);
    if geokey(&keys, 1025) == Some(2) {
        origin = (origin.0 - pixel.0 / 2.0, origin.1 + pixel.1 / 2.0);
    }
    let unit_m = match geokey(&keys, 3076) {
        Some(9002) => 0.3048,
        Some(9003) => 1200.0 / 3937.0,
        _ => 1.0,
    };
    let epsg = geokey(&keys, if geographic { 2048 } else { 3072 })
        .filter(|&c| (1..32767).contains(&c))
        .map(u32::from);
    Ok(Some(GeoRef {
        pixel,
        origin,
        geographic,
        unit_m,
        epsg,
    }))
}

/// Where an exported raster lies: its cells and north-west corner in a coordinate reference
/// system's units, and that system (the graph's georeference), or a local metric frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Frame {
    /// Cell size along x and y.
    pub pixel: (f64, f64),
    /// The north-west corner of the north-west cell.
    pub corner: (f64, f64),
    /// The graph's georeference (its CRS); `None`: metres in a local frame, no CRS named.
    pub georef: Option<crate::graph::Georef>,
}

impl Frame {
    /// The frame of the samples from `(x0, y0)` of `world` built at `n` samples per side: on
    /// `georef`'s rectangle, else in the local metric frame whose north-west corner of the
    /// world is at (0, size_m).
    #[must_use]
    pub fn of(
        world: &crate::World,
        georef: Option<crate::graph::Georef>,
        n: usize,
        (x0, y0): (usize, usize),
    ) -> Self {
        let n = n.max(1) as f64;
        let (west, north, px, py) = match georef {
            Some(g) => (
                g.west,
                g.north,
                (g.east - g.west) / n,
                (g.north - g.south) / n,
            ),
            None => (0.0, world.size_m, world.size_m / n, world.size_m / n),
        };
        Self {
            pixel: (px, py),
            corner: (west + x0 as f64 * px, north - y0 as f64 * py),
            georef,
        }
    }

    /// The GeoKeyDirectory: version 1.1.0; the model (projected 1 or geographic 2), cells as
    /// areas, and the EPSG code of a georeference that has one (GeographicTypeGeoKey 2048 or
    /// ProjectedCSTypeGeoKey 3072).
    fn geokeys(&self) -> Vec<u16> {
        let geographic = self.georef.is_some_and(|g| g.geographic);
        let mut keys = vec![1024, 0, 1, if geographic { 2 } else { 1 }, 1025, 0, 1, 1];
        if let Some(code) = self
            .georef
            .and_then(|g| g.epsg)
            .and_then(|c| u16::try_from(c).ok())
        {
            keys.extend_from_slice(&[if geographic { 2048 } else { 3072 }, 0, 1, code]);
        }
        let mut dir = vec![1, 1, 0, (keys.len() / 4) as u16];
        dir.extend(keys);
        dir
    }
}

/// Encodes `field` (metres) as a tiled, Deflate-compressed float32 GeoTIFF placed by `frame`.
///
/// # Errors
/// Only the writer's.
pub fn encode(field: &Field, frame: &Frame) -> io::Result<Vec<u8>> {
    let (w, data) = (field.width(), field.data());
    encode_tiled(w, field.height(), Samples::F32, frame, |x, y, raw| {
        raw.extend_from_slice(&data[y * w + x].to_le_bytes());
    })
}

/// [`encode`], with no data (NaN, named by GDAL's no-data tag) where `mask` is below one half.
///
/// # Errors
/// The writer's, or a mask of another size than `field`.
pub fn encode_with_nodata(field: &Field, mask: &Field, frame: &Frame) -> io::Result<Vec<u8>> {
    let (w, data, m) = (field.width(), field.data(), mask.data());
    if (mask.width(), mask.height()) != (w, field.height()) {
        return Err(io::Error::other(format!(
            "no-data mask of {}×{} for a {w}×{} raster",
            mask.width(),
            mask.height(),
            field.height()
        )));
    }
    encode_tiled(w, field.height(), Samples::F32Nodata, frame, |x, y, raw| {
        let i = y * w + x;
        let v = if m[i] < 0.5 { f32::NAN } else { data[i] };
        raw.extend_from_slice(&v.to_le_bytes());
    })
}

/// A colour raster as a GeoTIFF on `frame`: RGB, 16 bits per channel, from `rgb` — the
/// sRGB-encoded samples of `width × height` pixels interleaved (`r, g, b` per pixel, rows
/// north to south), the very values a 16-bit PNG of the same colour output holds.
pub fn encode_rgb16(
    width: usize,
    height: usize,
    rgb: &[u16],
    frame: &Frame,
) -> io::Result<Vec<u8>> {
    if rgb.len() != width * height * 3 {
        return Err(io::Error::other(format!(
            "{} colour samples for a {width}×{height} raster (expected {})",
            rgb.len(),
            width * height * 3
        )));
    }
    encode_tiled(width, height, Samples::Rgb16, frame, |x, y, raw| {
        let i = (y * width + x) * 3;
        for v in &rgb[i..i + 3] {
            raw.extend_from_slice(&v.to_le_bytes());
        }
    })
}

/// What a pixel of an exported GeoTIFF holds.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Samples {
    /// One float32 band: heights, masks, quantities.
    F32,
    /// One float32 band with NaN for no data.
    F32Nodata,
    /// Three 16-bit bands, RGB: colour.
    Rgb16,
}

/// A tiled, deflate-compressed GeoTIFF of `w × h` pixels on `frame`; `pixel(x, y, raw)`
/// appends the little-endian bytes of pixel `(x, y)`.
fn encode_tiled(
    w: usize,
    h: usize,
    samples: Samples,
    frame: &Frame,
    pixel: impl Fn(usize, usize, &mut Vec<u8>),
) -> io::Result<Vec<u8>> {
    use tiff::encoder::TiffEncoder;
    let ((px, py), (x0, y0)) = (frame.pixel, frame.corner);
    let err = |e: tiff::TiffError| io::Error::other(e.to_string());
    let mut out = Cursor::new(Vec::new());
    {
        let mut enc = TiffEncoder::new(&mut out).map_err(err)?;
        let mut dir = enc.image_directory().map_err(err)?;
        let (tx, ty) = (w.div_ceil(TILE), h.div_ceil(TILE));
        let (mut offsets, mut counts) = (Vec::new(), Vec::new());
        let mut raw = Vec::with_capacity(TILE * TILE * 6);
        for j in 0..ty {
            for i in 0..tx {
                raw.clear();
                // Tiles past the raster's edge are padded with the edge's samples.
                for y in 0..TILE {
                    let sy = (j * TILE + y).min(h - 1);
                    for x in 0..TILE {
                        pixel((i * TILE + x).min(w - 1), sy, &mut raw);
                    }
                }
                let mut z =
                    flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::new(6));
                z.write_all(&raw)?;
                let packed = z.finish()?;
                offsets.push(
                    u32::try_from(dir.write_data(&packed[..]).map_err(err)?)
                        .map_err(io::Error::other)?,
                );
                counts.push(packed.len() as u32);
            }
        }
        let (bands, photometric) = match samples {
            Samples::F32 | Samples::F32Nodata => (1, 1),
            Samples::Rgb16 => (3, 2),
        };
        let tags: [(Tag, u32); 8] = [
            (Tag::ImageWidth, w as u32),
            (Tag::ImageLength, h as u32),
            (Tag::Compression, 8),
            (Tag::PhotometricInterpretation, photometric),
            (Tag::SamplesPerPixel, bands),
            (Tag::PlanarConfiguration, 1),
            (Tag::TileWidth, TILE as u32),
            (Tag::TileLength, TILE as u32),
        ];
        for (t, v) in tags {
            dir.write_tag(t, v).map_err(err)?;
        }
        match samples {
            Samples::F32 | Samples::F32Nodata => {
                dir.write_tag(Tag::BitsPerSample, 32u16).map_err(err)?;
                dir.write_tag(Tag::SampleFormat, 3u16).map_err(err)?;
                if samples == Samples::F32Nodata {
                    dir.write_tag(Tag::GdalNodata, "nan").map_err(err)?;
                }
            }
            Samples::Rgb16 => {
                dir.write_tag(Tag::BitsPerSample, &[16u16, 16, 16][..])
                    .map_err(err)?;
                dir.write_tag(Tag::SampleFormat, &[1u16, 1, 1][..])
                    .map_err(err)?;
            }
        }
        dir.write_tag(Tag::TileOffsets, &offsets[..]).map_err(err)?;
        dir.write_tag(Tag::TileByteCounts, &counts[..])
            .map_err(err)?;
        dir.write_tag(Tag::ModelPixelScaleTag, &[px, py, 0.0][..])
            .map_err(err)?;
        dir.write_tag(Tag::ModelTiepointTag, &[0.0, 0.0, 0.0, x0, y0, 0.0][..])
            .map_err(err)?;
        dir.write_tag(Tag::GeoKeyDirectoryTag, &frame.geokeys()[..])
            .map_err(err)?;
        dir.finish().map_err(err)?;
    }
    Ok(out.into_inner())
}

/// What the tiles a VRT mosaics hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VrtBands {
    /// One float32 band.
    Values,
    /// One float32 band, NaN for no data (the graph's no-data mask).
    ValuesWithNodata,
    /// Three 16-bit bands, RGB.
    Colour,
}

/// A GDAL virtual raster (VRT) that mosaics `tiles` — `(file name, x offset, y offset,
/// width, height)` in cells — into one `width × height` raster of `bands` placed by `frame`
/// (the whole map's).
#[must_use]
pub fn vrt(
    width: usize,
    height: usize,
    frame: &Frame,
    tiles: &[(String, usize, usize, usize, usize)],
    bands: VrtBands,
) -> String {
    let colour = bands == VrtBands::Colour;
    let srs = frame
        .georef
        .and_then(|g| g.epsg)
        .map_or_else(String::new, |c| format!("  <SRS>EPSG:{c}</SRS>\n"));
    let mut s = format!(
        "<VRTDataset rasterXSize=\"{width}\" rasterYSize=\"{height}\">\n{srs}  <GeoTransform>{:?}, {:?}, 0, {:?}, 0, {:?}</GeoTransform>\n",
        frame.corner.0, frame.pixel.0, frame.corner.1, -frame.pixel.1
    );
    // Colour tiles hold three 16-bit bands (red, green, blue), the rest one float32 band.
    let (count, data_type) = if colour {
        (3, "UInt16")
    } else {
        (1, "Float32")
    };
    let colours = ["Red", "Green", "Blue"];
    for band in 1..=count {
        let interp = match bands {
            VrtBands::Colour => format!("    <ColorInterp>{}</ColorInterp>\n", colours[band - 1]),
            VrtBands::Values => String::new(),
            VrtBands::ValuesWithNodata => "    <NoDataValue>nan</NoDataValue>\n".to_owned(),
        };
        let _ = write!(
            s,
            "  <VRTRasterBand dataType=\"{data_type}\" band=\"{band}\">\n{interp}"
        );
        for (name, x, y, w, h) in tiles {
            let _ = write!(
                s,
                "    <SimpleSource>\n      <SourceFilename relativeToVRT=\"1\">{name}</SourceFilename>\n      <SourceBand>{band}</SourceBand>\n      <SrcRect xOff=\"0\" yOff=\"0\" xSize=\"{w}\" ySize=\"{h}\"/>\n      <DstRect xOff=\"{x}\" yOff=\"{y}\" xSize=\"{w}\" ySize=\"{h}\"/>\n    </SimpleSource>\n"
            );
        }
        s.push_str("  </VRTRasterBand>\n");
    }
    s.push_str("</VRTDataset>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_export_reads_back_with_its_values_and_frame() {
        let f = Field::from_fn(300, 270, |x, y| x as f32 * 0.5 - y as f32 * 0.25 + 100.0);
        let world = crate::World {
            size_m: 3000.0,
            height_min_m: 0.0,
            height_max_m: 1000.0,
        };
        let bytes = encode(&f, &Frame::of(&world, None, 300, (0, 0))).expect("encode");
        assert!(is_dem(&bytes));
        let dem = read(&bytes, None).expect("read");
        assert_eq!(dem.field, f);
        let g = dem.georef.expect("georeferenced");
        assert_eq!(g.pixel, (10.0, 10.0));
        assert_eq!(g.origin, (0.0, 3000.0));
        assert!(!g.geographic);
        assert_eq!(dem.size_m(), Some((3000.0, 2700.0)));
        // On a georeference: its cells, corner and EPSG code come back.
        let utm = crate::graph::Georef {
            epsg: Some(32633),
            geographic: false,
            west: 500_000.0,
            south: 4_100_000.0,
            east: 506_000.0,
            north: 4_103_000.0,
        };
        let bytes = encode(&f, &Frame::of(&world, Some(utm), 300, (0, 30))).expect("encode");
        let g = read(&bytes, None)
            .expect("read")
            .georef
            .expect("georeferenced");
        assert_eq!(
            (g.pixel, g.origin, g.epsg),
            ((20.0, 10.0), (500_000.0, 4_102_700.0), Some(32633))
        );
        assert_eq!(g.bounds(300, 270).east, 506_000.0);
    }

    #[test]
    fn gdal_metadata_gives_the_first_bands_scale_and_offset() {
        let xml = "<GDALMetadata>\n  <Item name=\"OFFSET\" sample=\"0\" role=\"offset\">-10.5</Item>\n  <Item name=\"SCALE\" sample=\"0\" role=\"scale\">0.1</Item>\n</GDALMetadata>";
        assert_eq!(scale_offset(xml), (0.1, -10.5));
        assert_eq!(scale_offset("<GDALMetadata/>"), (1.0, 0.0));
    }

    #[test]
    fn a_degree_is_about_111_km_north_and_shrinks_east_with_latitude() {
        let g = |lat: f64| GeoRef {
            pixel: (1.0, 1.0),
            origin: (0.0, lat),
            geographic: true,
            unit_m: 1.0,
            epsg: Some(4326),
        };
        let (x, y) = g(0.0).cell_m(0);
        assert!(
            (x - 111_319.5).abs() < 1.0 && (y - 110_574.4).abs() < 1.0,
            "{x} {y}"
        );
        let (x, y) = g(60.0).cell_m(0);
        assert!(
            (x - 55_799.9).abs() < 2.0 && (y - 111_412.3).abs() < 2.0,
            "{x} {y}"
        );
    }
}
