//! Heightmap file formats: 16-bit PNG, 32-bit float OpenEXR, RAW16 and raw f32 (all written
//! atomically), and reading 8/16-bit PNG and EXR for the `import` node.
//!
//! Integer formats (PNG16, RAW16) map the graph's height range linearly onto 0..=65535:
//! `v = round(clamp((h − height_min_m) / (height_max_m − height_min_m), 0, 1) · 65535)`.
//! Float formats (EXR, F32) store metres unchanged.
//!
//! Colour fields (three planes, linear RGB) are written as RGB: integer formats (PNG8,
//! PNG16, TIFF16, RAW16) store the sRGB encoding of each channel (IEC 61966-2-1, what image
//! viewers and engines expect of an albedo texture), interleaved R, G, B; float formats (EXR
//! channels `R`, `G`, `B`; F32 interleaved) store the linear values unchanged.

use super::atomic::write_atomic;
use super::trust;
use crate::field::{Field, World};
use crate::node::CancelToken;
use std::io::{self, Write};
use std::path::Path;

/// An output file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// 16-bit grayscale PNG over the graph's height range.
    Png16,
    /// OpenEXR, one 32-bit float channel `Y`, metres.
    Exr,
    /// Headerless 16-bit little-endian unsigned, row-major, over the graph's height range.
    R16,
    /// Headerless 32-bit little-endian IEEE float, row-major, metres.
    F32,
    /// 16-bit grayscale TIFF over the graph's height range.
    Tiff16,
    /// 8-bit grayscale PNG over the graph's height range (previews, masks, colour albedo;
    /// 256 levels are too few for terrain heights).
    Png8,
    /// Tiled, Deflate-compressed 32-bit float GeoTIFF, metres, in a local metric frame
    /// (`io::geotiff`): GDAL, QGIS and Houdini read it with its cell size and extent.
    GeoTiff,
}

crate::impl_choice!(Format {
    Png16 = "png16",
    Exr = "exr",
    R16 = "r16",
    F32 = "f32",
    Tiff16 = "tiff16",
    Png8 = "png8",
    GeoTiff = "geotiff",
});

impl Format {
    #[must_use]
    pub fn extension(self) -> &'static str {
        match self {
            Format::Png16 => "png",
            // Beside a 16-bit PNG of the same output, not over it.
            Format::Png8 => "8bit.png",
            Format::Exr => "exr",
            Format::R16 => "r16",
            Format::F32 => "f32",
            Format::Tiff16 => "tif",
            // Beside a 16-bit TIFF of the same output, not over it.
            Format::GeoTiff => "geo.tif",
        }
    }

    #[must_use]
    pub fn name(self) -> &'static str {
        crate::node::choice_name(self)
    }
}

/// Errors reading or writing heightmaps.
#[derive(Debug, thiserror::Error)]
pub enum HeightmapError {
    #[error("{path}: {source}")]
    Io { path: String, source: io::Error },
    #[error("{path}: cannot decode image: {message}")]
    Decode { path: String, message: String },
    /// Refused before decoding (not a regular file, too large, outside limits) or cancelled.
    #[error("{0}")]
    Refused(String),
}

/// Quantises metres to 16 bits over the world's height range.
#[must_use]
pub fn to_u16(h: f32, world: &World) -> u16 {
    let span = world.height_span_m();
    let t = if span > 0.0 {
        ((f64::from(h) - world.height_min_m) / span).clamp(0.0, 1.0)
    } else {
        0.0
    };
    // NaN clamps to NaN; `as` maps NaN to 0.
    (t * 65535.0).round() as u16
}

/// The sRGB encoding of a linear value, clamped to `[0, 1]` (IEC 61966-2-1).
#[must_use]
pub fn srgb_encode(c: f32) -> f32 {
    let c = if c.is_nan() { 0.0 } else { c.clamp(0.0, 1.0) };
    if c >= 1.0 {
        1.0
    } else if c <= 0.003_130_8 {
        12.92 * c
    } else {
        1.055 * c.powf(1.0 / 2.4) - 0.055
    }
}

/// The linear value of an sRGB-encoded one in `[0, 1]` (IEC 61966-2-1).
#[must_use]
pub fn srgb_decode(v: f32) -> f32 {
    if v <= 0.040_45 {
        v / 12.92
    } else {
        ((v + 0.055) / 1.055).powf(2.4)
    }
}

/// Writes `img` (`None`: its size did not match its pixels) as a PNG or TIFF.
fn encode_image(
    img: Option<image::DynamicImage>,
    format: image::ImageFormat,
) -> io::Result<Vec<u8>> {
    let img = img.ok_or_else(|| io::Error::other("image size mismatch"))?;
    let mut buf = Vec::new();
    img.write_to(&mut io::Cursor::new(&mut buf), format)
        .map_err(io::Error::other)?;
    Ok(buf)
}

/// The samples of `field` pixel by pixel (channels interleaved), each through `f`.
fn interleaved<T>(field: &Field, f: impl Fn(f32) -> T) -> Vec<T> {
    let n = field.width() * field.height();
    let c = field.channels();
    if c == 1 {
        return field.data().iter().map(|&v| f(v)).collect();
    }
    let data = field.data();
    (0..n * c).map(|k| f(data[(k % c) * n + k / c])).collect()
}

/// The bytes of a field in `format` (everything but EXR, which needs a seekable writer).
fn encode_into(w: &mut impl Write, field: &Field, world: &World, format: Format) -> io::Result<()> {
    if field.channels() == 3 {
        return encode_color(w, field, world, format);
    }
    if field.channels() != 1 {
        return Err(io::Error::other(format!(
            "cannot write a field of {} channels",
            field.channels()
        )));
    }
    match format {
        Format::Png8 => {
            let pixels: Vec<u8> = field
                .data()
                .iter()
                .map(|&h| (f32::from(to_u16(h, world)) / 257.0).round() as u8)
                .collect();
            let img =
                image::GrayImage::from_raw(field.width() as u32, field.height() as u32, pixels);
            w.write_all(&encode_image(img.map(Into::into), image::ImageFormat::Png)?)
        }
        Format::R16 => {
            let bytes: Vec<u8> = field
                .data()
                .iter()
                .flat_map(|&h| to_u16(h, world).to_le_bytes())
                .collect();
            w.write_all(&bytes)
        }
        Format::F32 => {
            let bytes: Vec<u8> = field.data().iter().flat_map(|h| h.to_le_bytes()).collect();
            w.write_all(&bytes)
        }
        Format::Png16 | Format::Tiff16 => {
            let pixels: Vec<u16> = field.data().iter().map(|&h| to_u16(h, world)).collect();
            let img = image::ImageBuffer::<image::Luma<u16>, Vec<u16>>::from_raw(
                field.width() as u32,
                field.height() as u32,
                pixels,
            )
            .ok_or_else(|| io::Error::other("image size mismatch"))?;
            let kind = if format == Format::Png16 {
                image::ImageFormat::Png
            } else {
                image::ImageFormat::Tiff
            };
            let mut buf = Vec::new();
            img.write_to(&mut io::Cursor::new(&mut buf), kind)
                .map_err(io::Error::other)?;
            w.write_all(&buf)
        }
        Format::GeoTiff => {
            // The whole map in the local metric frame (a build places it on the graph's
            // georeference with `encode_geotiff`).
            let frame = super::geotiff::Frame::of(world, None, field.width(), (0, 0));
            w.write_all(&encode_geotiff(field, &frame, None)?)
        }
        Format::Exr => {
            use exr::prelude::{Image, SpecificChannels};
            let width = field.width();
            let data = field.data();
            let channels = SpecificChannels::build()
                .with_channel("Y")
                .with_pixel_fn(|pos: exr::math::Vec2<usize>| (data[pos.y() * width + pos.x()],));
            let image = Image::from_channels((field.width(), field.height()), channels);
            write_exr(&image, w)
        }
    }
}

/// A linear colour channel as the 16-bit sRGB value colour PNGs, RAW16 and GeoTIFFs hold.
fn srgb_u16(v: f32) -> u16 {
    (srgb_encode(v) * 65535.0).round() as u16
}

/// A colour field (linear RGB planes) in `format`: sRGB-encoded integers or linear floats.
fn encode_color(
    w: &mut impl Write,
    field: &Field,
    world: &World,
    format: Format,
) -> io::Result<()> {
    let (width, height) = (field.width(), field.height());
    let (w32, h32) = (width as u32, height as u32);
    match format {
        Format::Png8 => {
            let px = interleaved(field, |v| (srgb_encode(v) * 255.0).round() as u8);
            let img = image::RgbImage::from_raw(w32, h32, px).map(Into::into);
            w.write_all(&encode_image(img, image::ImageFormat::Png)?)
        }
        Format::Png16 | Format::Tiff16 => {
            let kind = if format == Format::Png16 {
                image::ImageFormat::Png
            } else {
                image::ImageFormat::Tiff
            };
            let px = interleaved(field, srgb_u16);
            let img = image::ImageBuffer::<image::Rgb<u16>, Vec<u16>>::from_raw(w32, h32, px);
            w.write_all(&encode_image(img.map(Into::into), kind)?)
        }
        Format::R16 => {
            let bytes: Vec<u8> = interleaved(field, srgb_u16)
                .into_iter()
                .flat_map(u16::to_le_bytes)
                .collect();
            w.write_all(&bytes)
        }
        Format::F32 => {
            let bytes: Vec<u8> = interleaved(field, |v| v)
                .into_iter()
                .flat_map(f32::to_le_bytes)
                .collect();
            w.write_all(&bytes)
        }
        Format::Exr => {
            use exr::prelude::{Image, SpecificChannels};
            let (r, g, b) = (field.plane(0), field.plane(1), field.plane(2));
            let channels = SpecificChannels::rgb(|pos: exr::math::Vec2<usize>| {
                let i = pos.y() * width + pos.x();
                (r[i], g[i], b[i])
            });
            let image = Image::from_channels((width, height), channels);
            write_exr(&image, w)
        }
        Format::GeoTiff => w.write_all(&encode_geotiff(
            field,
            &super::geotiff::Frame::of(world, None, width, (0, 0)),
            None,
        )?),
    }
}

/// Any output as a GeoTIFF placed by `frame`: one float32 band of its values (no data where
/// `nodata` is below one half), or, for colour, three 16-bit bands of the sRGB values its
/// 16-bit PNG holds.
pub fn encode_geotiff(
    field: &Field,
    frame: &super::geotiff::Frame,
    nodata: Option<&Field>,
) -> io::Result<Vec<u8>> {
    match nodata {
        _ if field.channels() == 3 => {
            let rgb = interleaved(field, srgb_u16);
            super::geotiff::encode_rgb16(field.width(), field.height(), &rgb, frame)
        }
        Some(mask) => super::geotiff::encode_with_nodata(field, mask, frame),
        None => super::geotiff::encode(field, frame),
    }
}

/// Writes an EXR image into `w` (encoded in memory first: EXR needs a seekable writer).
fn write_exr<'img, L>(image: &'img exr::prelude::Image<L>, w: &mut impl Write) -> io::Result<()>
where
    L: exr::image::write::layers::WritableLayers<'img>,
{
    use exr::prelude::WritableImage;
    let mut buf = io::Cursor::new(Vec::new());
    image
        .write()
        .non_parallel()
        .to_buffered(&mut buf)
        .map_err(io::Error::other)?;
    w.write_all(buf.get_ref())
}

/// Encodes a field into bytes.
pub fn encode(field: &Field, world: &World, format: Format) -> io::Result<Vec<u8>> {
    let mut out = Vec::new();
    encode_into(&mut out, field, world, format)?;
    Ok(out)
}

/// Writes a field to `path` atomically. Returns the bytes written (for hashing).
pub fn write(
    path: &Path,
    field: &Field,
    world: &World,
    format: Format,
) -> Result<Vec<u8>, HeightmapError> {
    let bytes = encode(field, world, format).map_err(|source| HeightmapError::Io {
        path: path.display().to_string(),
        source,
    })?;
    write_atomic(path, |w| w.write_all(&bytes)).map_err(|source| HeightmapError::Io {
        path: path.display().to_string(),
        source,
    })?;
    Ok(bytes)
}

/// What a heightmap file's samples mean.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SampleScale {
    /// Integer images: samples normalised to [0, 1].
    Normalized,
    /// Float images: samples as stored.
    Raw,
}

/// Writes any bytes atomically, mapping the error to this module's.
pub fn write_bytes(path: &Path, bytes: &[u8]) -> Result<(), HeightmapError> {
    write_atomic(path, |w| w.write_all(bytes)).map_err(|source| HeightmapError::Io {
        path: path.display().to_string(),
        source,
    })
}

/// Reads an 8/16-bit PNG or TIFF (grayscale or colour: the luma is used), an EXR (channel `Y`,
/// else `R`, else the first channel) or a GeoTIFF DEM (metres; see `io::geotiff`).
pub fn read(path: &Path) -> Result<(Field, SampleScale), HeightmapError> {
    read_with(path, None)
}

/// [`read`], stopping when `cancel` is tripped (between chunks of the file and between the
/// decoder's reads). Only a regular file of at most [`trust::MAX_IMAGE_BYTES`] is read, and
/// an image of more than [`trust::MAX_IMAGE_PIXELS`] pixels is refused from its header.
pub fn read_with(
    path: &Path,
    cancel: Option<&CancelToken>,
) -> Result<(Field, SampleScale), HeightmapError> {
    read_with_valid(path, cancel).map(|(f, s, _)| (f, s))
}

/// [`read_with`], and for a DEM with no-data cells which cells had data (1) and which were
/// filled (0).
pub fn read_with_valid(
    path: &Path,
    cancel: Option<&CancelToken>,
) -> Result<(Field, SampleScale, Option<Field>), HeightmapError> {
    let p = path.display().to_string();
    let bytes =
        trust::read_file(path, trust::MAX_IMAGE_BYTES, cancel).map_err(HeightmapError::Refused)?;
    let decode = |message: String| HeightmapError::Decode {
        path: p.clone(),
        message,
    };
    if bytes.starts_with(&[0x76, 0x2f, 0x31, 0x01]) {
        return read_exr(&bytes, cancel)
            .map(|f| (f, SampleScale::Raw, None))
            .map_err(decode);
    }
    if super::geotiff::is_dem(&bytes) {
        // A DEM (GeoTIFF tags, or signed or float samples): metres, as stored.
        let dem = super::geotiff::read(&bytes, cancel).map_err(decode)?;
        let (w, h) = (dem.field.width(), dem.field.height());
        let valid = dem.valid.and_then(|v| {
            Field::from_vec(
                w,
                h,
                v.into_iter().map(|b| f32::from(u8::from(b))).collect(),
            )
        });
        return Ok((dem.field, SampleScale::Raw, valid));
    }
    let img = decode_image(&bytes, cancel).map_err(decode)?;
    let luma = img.to_luma32f();
    let (w, h) = (luma.width() as usize, luma.height() as usize);
    let field = Field::from_vec(w, h, luma.into_raw())
        .ok_or_else(|| decode("image size mismatch".into()))?;
    Ok((field, SampleScale::Normalized, None))
}

/// Decodes a PNG or TIFF after checking its size from the header, with the decoder's own
/// allocation limit, through a reader that stops on `cancel`.
fn decode_image(bytes: &[u8], cancel: Option<&CancelToken>) -> Result<image::DynamicImage, String> {
    let reader = || {
        image::ImageReader::new(io::BufReader::new(trust::CancelRead::new(
            io::Cursor::new(bytes),
            cancel,
        )))
        .with_guessed_format()
        .map_err(|e| e.to_string())
    };
    // Decoded samples and their f32 copy, budgeted from the header before decoding: an
    // RGBA16 image holds eight bytes a pixel, not one.
    check_decode_cost(image_cost(bytes)?)?;
    let mut r = reader()?;
    let mut limits = image::Limits::default();
    limits.max_image_width = Some(trust::MAX_IMAGE_SIDE);
    limits.max_image_height = Some(trust::MAX_IMAGE_SIDE);
    // Four 16-bit channels of the largest image accepted.
    limits.max_alloc = Some(trust::MAX_IMAGE_PIXELS * 8);
    r.limits(limits);
    r.decode().map_err(|e| e.to_string())
}

/// Reads a colour image as linear RGB planes: 8/16-bit PNG or TIFF (sRGB-decoded; grey
/// images give three equal planes) or EXR (channels `R`, `G`, `B` as stored).
pub fn read_color(path: &Path) -> Result<Field, HeightmapError> {
    let p = path.display().to_string();
    let bytes =
        trust::read_file(path, trust::MAX_IMAGE_BYTES, None).map_err(HeightmapError::Refused)?;
    let decode = |message: String| HeightmapError::Decode {
        path: p.clone(),
        message,
    };
    let (w, h, planes) = if bytes.starts_with(&[0x76, 0x2f, 0x31, 0x01]) {
        read_exr_rgb(&bytes, None).map_err(decode)?
    } else {
        let img = decode_image(&bytes, None).map_err(decode)?;
        let rgb = img.to_rgb32f();
        let (w, h) = (rgb.width() as usize, rgb.height() as usize);
        let raw = rgb.into_raw();
        let planes: [Vec<f32>; 3] = std::array::from_fn(|c| {
            raw.iter()
                .skip(c)
                .step_by(3)
                .map(|&v| srgb_decode(v))
                .collect()
        });
        (w, h, planes)
    };
    let planes: Option<Vec<Field>> = planes
        .into_iter()
        .map(|d| Field::from_vec(w, h, d))
        .collect();
    planes
        .and_then(|p| Field::from_planes(&p))
        .ok_or_else(|| decode("image size mismatch".into()))
}

/// The EXR channels to read for a heightmap (`Y`, else `R`, else the first channel of the
/// first layer) or a colour image (`R`, `G`, `B`), chosen from the header, and the layer's
/// size: only those channels are kept while decoding (a file with 128 channels costs what
/// one costs), so the decoded size is known before decoding.
fn exr_channels(bytes: &[u8], color: bool) -> Result<(usize, usize, Vec<String>), String> {
    let meta = exr::meta::MetaData::read_from_buffered(io::Cursor::new(bytes), false)
        .map_err(|e| e.to_string())?;
    let header = meta.headers.first().ok_or("the EXR file has no layers")?;
    let (w, h) = (header.layer_size.0, header.layer_size.1);
    if let Some(problem) = trust::image_size_problem(w as u64, h as u64) {
        return Err(problem);
    }
    let names: Vec<String> = header
        .channels
        .list
        .iter()
        .map(|c| c.name.to_string())
        .collect();
    let pick = if color {
        for n in ["R", "G", "B"] {
            if !names.iter().any(|c| c == n) {
                return Err(format!("the EXR file has no channel {n}"));
            }
        }
        vec!["R".to_owned(), "G".to_owned(), "B".to_owned()]
    } else {
        let name = ["Y", "R"]
            .iter()
            .find(|n| names.iter().any(|c| c == *n))
            .map(|n| (*n).to_owned())
            .or_else(|| names.first().cloned())
            .ok_or("the EXR file has no channels")?;
        vec![name]
    };
    Ok((w, h, pick))
}

/// Reads channels `names` (1 or 3) of the first EXR layer holding them, as f32 planes.
fn read_exr_planes(
    bytes: &[u8],
    w: usize,
    h: usize,
    names: &[String],
    cancel: Option<&CancelToken>,
) -> Result<Vec<Vec<f32>>, String> {
    use exr::prelude::{ReadChannels, ReadLayers, ReadSpecificChannel};
    let source = || trust::CancelRead::new(io::Cursor::new(bytes), cancel);
    let size = |s: exr::math::Vec2<usize>| (s.width(), s.height());
    if let [name] = names {
        let image = exr::prelude::read()
            .no_deep_data()
            .largest_resolution_level()
            .specific_channels()
            .required::<f32>(name.as_str())
            .collect_pixels(
                |s, _| {
                    let (sw, sh) = size(s);
                    (sw, vec![0.0f32; sw * sh])
                },
                |(sw, v): &mut (usize, Vec<f32>), p, (y,): (f32,)| v[p.y() * *sw + p.x()] = y,
            )
            .first_valid_layer()
            .all_attributes()
            .from_buffered(source())
            .map_err(|e| e.to_string())?;
        let (sw, plane) = image.layer_data.channel_data.pixels;
        if sw != w || plane.len() != w * h {
            return Err("channel size mismatch".into());
        }
        return Ok(vec![plane]);
    }
    let [r, g, b] = names else {
        return Err("expected one or three channels".into());
    };
    let image = exr::prelude::read()
        .no_deep_data()
        .largest_resolution_level()
        .specific_channels()
        .required::<f32>(r.as_str())
        .required::<f32>(g.as_str())
        .required::<f32>(b.as_str())
        .collect_pixels(
            |s, _| {
                let (sw, sh) = size(s);
                (
                    sw,
                    [
                        vec![0.0f32; sw * sh],
                        vec![0.0f32; sw * sh],
                        vec![0.0f32; sw * sh],
                    ],
                )
            },
            |(sw, v): &mut (usize, [Vec<f32>; 3]), p, (r, g, b): (f32, f32, f32)| {
                let i = p.y() * *sw + p.x();
                v[0][i] = r;
                v[1][i] = g;
                v[2][i] = b;
            },
        )
        .first_valid_layer()
        .all_attributes()
        .from_buffered(source())
        .map_err(|e| e.to_string())?;
    let (sw, planes) = image.layer_data.channel_data.pixels;
    if sw != w || planes[0].len() != w * h {
        return Err("channel size mismatch".into());
    }
    Ok(planes.into())
}

/// The `R`, `G`, `B` channels of an EXR file.
fn read_exr_rgb(
    bytes: &[u8],
    cancel: Option<&CancelToken>,
) -> Result<(usize, usize, [Vec<f32>; 3]), String> {
    let (w, h, names) = exr_channels(bytes, true)?;
    check_decode_cost(exr_cost(w, h, 3))?;
    let planes = read_exr_planes(bytes, w, h, &names, cancel)?;
    let [r, g, b]: [Vec<f32>; 3] = planes
        .try_into()
        .map_err(|_| "expected three channels".to_owned())?;
    Ok((w, h, [r, g, b]))
}

/// A heightmap from an EXR file: its channel `Y`, else `R`, else the first.
fn read_exr(bytes: &[u8], cancel: Option<&CancelToken>) -> Result<Field, String> {
    let (w, h, names) = exr_channels(bytes, false)?;
    check_decode_cost(exr_cost(w, h, 1))?;
    let mut planes = read_exr_planes(bytes, w, h, &names, cancel)?;
    Field::from_vec(w, h, planes.swap_remove(0)).ok_or_else(|| "channel size mismatch".to_owned())
}

/// Bytes reading `planes` f32 channels of a `w × h` EXR holds (one decompressed block on
/// top, which the format bounds).
fn exr_cost(w: usize, h: usize, planes: u64) -> u64 {
    (w as u64)
        .saturating_mul(h as u64)
        .saturating_mul(4 * planes)
}

/// Refuses a decode that would hold more than [`trust::MAX_DECODE_BYTES`].
fn check_decode_cost(bytes: u64) -> Result<(), String> {
    if bytes > trust::MAX_DECODE_BYTES {
        return Err(format!(
            "decoding this image needs about {}, more than the {} Orogen allows one import",
            trust::human_bytes(bytes),
            trust::human_bytes(trust::MAX_DECODE_BYTES)
        ));
    }
    Ok(())
}

/// Bytes decoding the image file at `path` would hold at its peak (decoded samples, the f32
/// heights and any copy in between), read from its header only — for `--max-memory`, which
/// counts imports. Only a regular file is opened.
pub fn decode_cost(path: &Path) -> Result<u64, String> {
    use std::io::Read as _;
    let (file, len) = {
        let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
        trust::check_regular(path, &meta, trust::MAX_IMAGE_BYTES)?;
        let f = trust::open_nonblocking(path).map_err(|e| format!("{}: {e}", path.display()))?;
        (f, meta.len())
    };
    let mut head = Vec::new();
    // Headers are near the start of a PNG or EXR; a TIFF's may be anywhere (then the whole
    // file, which import reads anyway, is in the cost).
    file.take(1 << 20)
        .read_to_end(&mut head)
        .map_err(|e| e.to_string())?;
    let held = len;
    if head.starts_with(&[0x76, 0x2f, 0x31, 0x01]) {
        let (w, h, _) = exr_channels(&head, false)?;
        return Ok(held.saturating_add(exr_cost(w, h, 1)));
    }
    if head.starts_with(b"II") || head.starts_with(b"MM") {
        // A TIFF's directory may lie anywhere in the file: read it through a seeking reader,
        // not the whole file. Whether it is a DEM or an image, the larger cost counts.
        let file = trust::open_nonblocking(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut d = tiff::decoder::Decoder::new(io::BufReader::new(file))
            .map_err(|e| format!("not a readable TIFF: {e}"))?;
        let (w, h) = d.dimensions().map_err(|e| e.to_string())?;
        let (w, h) = (w as usize, h as usize);
        if let Some(problem) = trust::image_size_problem(w as u64, h as u64) {
            return Err(problem);
        }
        let samples = d
            .find_tag_unsigned::<u16>(tiff::tags::Tag::SamplesPerPixel)
            .ok()
            .flatten()
            .unwrap_or(1)
            .max(1);
        let bits = d
            .find_tag_unsigned_vec::<u16>(tiff::tags::Tag::BitsPerSample)
            .ok()
            .flatten()
            .and_then(|v| v.into_iter().max())
            .unwrap_or(8)
            .max(8);
        let pixels = (w as u64).saturating_mul(h as u64);
        let image = pixels
            .saturating_mul(u64::from(samples) * u64::from(bits) / 8)
            .saturating_add(pixels * 4);
        return Ok(held.saturating_add(image.max(super::geotiff::decode_bytes(w, h))));
    }
    image_cost(&head).map(|c| held.saturating_add(c))
}

/// Bytes decoding a PNG or TIFF holds: the decoded samples and their f32 luma.
fn image_cost(bytes: &[u8]) -> Result<u64, String> {
    use image::ImageDecoder as _;
    let decoder = image::ImageReader::new(io::Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|e| e.to_string())?
        .into_decoder()
        .map_err(|e| e.to_string())?;
    let (w, h) = decoder.dimensions();
    if let Some(problem) = trust::image_size_problem(u64::from(w), u64::from(h)) {
        return Err(problem);
    }
    Ok(decoder
        .total_bytes()
        .saturating_add(u64::from(w) * u64::from(h) * 4))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn world() -> World {
        World {
            size_m: 1000.0,
            height_min_m: -100.0,
            height_max_m: 900.0,
        }
    }

    #[test]
    fn u16_mapping_endpoints_and_clamp() {
        let w = world();
        assert_eq!(to_u16(-100.0, &w), 0);
        assert_eq!(to_u16(900.0, &w), 65535);
        assert_eq!(to_u16(5000.0, &w), 65535);
        assert_eq!(to_u16(-5000.0, &w), 0);
        assert_eq!(to_u16(f32::NAN, &w), 0);
        assert_eq!(to_u16(400.0, &w), 32768);
    }

    #[test]
    fn png16_and_exr_round_trip() {
        let w = world();
        let f = Field::from_fn(17, 9, |x, y| -100.0 + ((x * 37 + y * 91) % 1000) as f32);
        let dir = tempfile::tempdir().expect("tempdir");
        for fmt in [Format::Png16, Format::Exr, Format::Tiff16] {
            let p = dir.path().join(format!("h.{}", fmt.extension()));
            write(&p, &f, &w, fmt).expect("write");
            let (back, scale) = read(&p).expect("read");
            assert_eq!((back.width(), back.height()), (17, 9));
            for (a, b) in f.data().iter().zip(back.data()) {
                let b = match scale {
                    SampleScale::Raw => *b,
                    SampleScale::Normalized => (w.relative_to_m(f64::from(*b))) as f32,
                };
                // PNG16 quantises 1000 m into 65535 steps: half a step is 0.0077 m.
                assert!((a - b).abs() < 0.008, "{fmt:?}: {a} vs {b}");
            }
        }
    }

    #[test]
    fn raw_formats_are_little_endian_row_major() {
        let w = world();
        let f = Field::from_vec(2, 1, vec![-100.0, 900.0]).expect("size");
        assert_eq!(
            encode(&f, &w, Format::R16).expect("r16"),
            vec![0, 0, 0xff, 0xff]
        );
        let f32b = encode(&f, &w, Format::F32).expect("f32");
        assert_eq!(&f32b[0..4], &(-100.0f32).to_le_bytes());
        assert_eq!(&f32b[4..8], &900.0f32.to_le_bytes());
    }
}
