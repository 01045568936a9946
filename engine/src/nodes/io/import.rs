//! `import`: read a heightmap file (8/16-bit PNG, EXR or a GeoTIFF DEM) and resample it to the
//! build resolution.

use crate::field::Field;
use crate::io::heightmap::{self, SampleScale};
use crate::io::trust::Project;
use crate::node::{EvalCtx, Node, NodeError};
use std::path::{Path, PathBuf};

crate::choice_enum! {
    /// How float (EXR) samples are read.
    pub enum ExrValues { Metres = "metres", Relative = "relative" }
}

crate::params! {
    pub struct ImportParams {
        /// Path of the heightmap (PNG, EXR or GeoTIFF DEM), relative to the graph file's folder (absolute paths work too); it must be inside the graph's project folder (docs/security.md).
        path: String = text(""),
        /// EXR samples are metres (as `orogen build --format exr` writes them) or fractions of the height range. PNG samples always span the height range (0 → height_min_m, full white → height_max_m). GeoTIFF DEMs (float or signed samples, or GeoTIFF tags) are metres after their scale and offset.
        exr_values: ExrValues = choice(ExrValues::Metres) as "EXR values",
    }
}

crate::node! {
    /// Loads a heightmap from a file, such as a painted PNG or a real-world elevation model
    /// (GeoTIFF).
    /// Reads an 8/16-bit PNG (luma), an OpenEXR heightmap (channel Y, else R) or a GeoTIFF DEM
    /// (float32/64, int8/16/32, uint8/16/32; striped or tiled; no-data cells filled from the data
    /// around them by a push–pull pyramid; GDAL's band scale and offset applied) and resamples it
    /// bilinearly to the build resolution, stretched over the whole world. PNG values map 0..max
    /// onto the graph's height range. orogen new --from-dem makes a graph whose world matches a
    /// DEM.
    pub struct Import {
        id: "import",
        label: "Import heightmap",
        category: Io,
        version: 1,
        params: ImportParams,
        inputs: ImportIn {
        },
        outputs: ImportOut {
            /// The imported terrain, in metres.
            out: height,
            /// 1 where the file had data, 0 where a DEM's no-data cells were filled.
            valid: mask,
        },
        traits: crate::node::Traits {
            file_param: Some("path"),
            ..crate::node::Traits::DEFAULT
        },
    }
}

fn resolve(base: Option<&Path>, path: &str) -> PathBuf {
    let p = Path::new(path);
    match base {
        Some(b) if p.is_relative() => b.join(p),
        _ => p.to_path_buf(),
    }
}

impl Node for Import {
    fn eval(ctx: &EvalCtx, _: ImportIn, p: &ImportParams) -> Result<ImportOut, NodeError> {
        if p.path.is_empty() {
            return Err(NodeError::Failed(
                "parameter \"path\" is empty: name a PNG or EXR file".into(),
            ));
        }
        let base = ctx.base_dir.unwrap_or(Path::new(""));
        let project = Project::of_folder(base, ctx.allow_outside);
        let path = project
            .resolve(base, &p.path)
            .map_err(|e| NodeError::Failed(format!("params.path: {e}")))?;
        let read = heightmap::read_with_valid(&path, Some(ctx.cancel));
        ctx.check_cancel()?;
        let (field, scale, valid) = read.map_err(|e| NodeError::Failed(e.to_string()))?;
        let w = ctx.window;
        let window = (w.x0, w.y0, w.width, w.height);
        let mut out = field.resample_bilinear_window(ctx.resolution, window);
        drop(field);
        let valid = match valid {
            Some(v) => v.resample_bilinear_window(ctx.resolution, window),
            None => Field::filled(w.width, w.height, 1.0),
        };
        let lo = ctx.world.height_min_m as f32;
        let span = ctx.world.height_span_m() as f32;
        match (scale, p.exr_values) {
            (SampleScale::Raw, ExrValues::Metres) => {}
            _ => out.map_in_place(|v| lo + v * span),
        }
        Ok(ImportOut { out, valid })
    }

    /// The file's resolved path, size and modification time: editing the file re-runs the node.
    fn key_extra(base: Option<&Path>, p: &ImportParams) -> Vec<u8> {
        let path = resolve(base, &p.path);
        let mut key = path.to_string_lossy().into_owned().into_bytes();
        if let Ok(meta) = std::fs::metadata(&path) {
            key.extend_from_slice(&meta.len().to_le_bytes());
            if let Ok(t) = meta.modified().and_then(|t| {
                t.duration_since(std::time::UNIX_EPOCH)
                    .map_err(std::io::Error::other)
            }) {
                key.extend_from_slice(&t.as_nanos().to_le_bytes());
            }
            // A copy that kept the old modification time (`cp -p`, `rsync -t`, tar) is still
            // a new file: its inode and change time are new (results now outlive the process
            // in the disk cache).
            #[cfg(unix)]
            {
                use std::os::unix::fs::MetadataExt;
                for v in [
                    meta.dev(),
                    meta.ino(),
                    meta.ctime() as u64,
                    meta.ctime_nsec() as u64,
                ] {
                    key.extend_from_slice(&v.to_le_bytes());
                }
            }
        }
        key
    }
}
