//! What a build writes: the outputs' formats, game-engine presets, meshes, normal and splat
//! maps ([`Exports`], shared by the CLI and the editor's Build dialog, with the flags that
//! give it back), and the numbers a preset records for its engine.

use crate::graph::Graph;
use crate::io::heightmap::Format;
use crate::io::render::{Colormap, NormalY};

/// A game-engine preset: sizes, formats and the numbers to type into the engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preset {
    /// Unity terrain: 2ⁿ + 1 samples (33 … 4097), RAW16 little-endian, rows south to north.
    Unity,
    /// Unreal landscape: recommended sizes (127 … 8129), 16-bit PNG, Z scale in the manifest.
    Unreal,
    /// Godot: 2ⁿ + 1 samples, 32-bit float EXR in metres.
    Godot,
}

impl Preset {
    /// Sizes the engine accepts, ascending.
    #[must_use]
    pub fn sizes(self) -> &'static [usize] {
        match self {
            Preset::Unity | Preset::Godot => &[33, 65, 129, 257, 513, 1025, 2049, 4097],
            Preset::Unreal => &[127, 253, 505, 1009, 2017, 4033, 8129],
        }
    }

    /// The accepted size closest to `n` (ties go up).
    #[must_use]
    pub fn size_for(self, n: usize) -> usize {
        let s = self.sizes();
        s.iter()
            .copied()
            .min_by_key(|&v| (v.abs_diff(n), std::cmp::Reverse(v)))
            .unwrap_or(s[0])
    }
}

pub use crate::io::mesh::MeshFormat;

impl Exports {
    /// The mesh to write per height output, if any.
    #[must_use]
    pub fn mesh_spec(&self) -> Option<crate::io::mesh::MeshSpec> {
        self.mesh.map(|(format, step)| crate::io::mesh::MeshSpec {
            format,
            step,
            max_error_m: self.mesh_error_m,
        })
    }
}

/// Which heights integer formats (PNG16, TIFF16, RAW16) map onto 0 … 65535.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Range {
    /// The graph's height range (heights outside it are clamped); the same for every output.
    #[default]
    Graph,
    /// Each output's own minimum … maximum: full 16-bit precision, never clamped.
    Data,
}

/// Everything a build writes besides the graph evaluation itself.
#[derive(Clone, Debug, PartialEq)]
pub struct Exports {
    /// Heightmap formats written for every output (ignored with a preset).
    pub formats: Vec<Format>,
    /// Height range mapped by integer formats (recorded per output as `range_m`).
    pub range: Range,
    pub preset: Option<Preset>,
    /// A colormapped, hillshaded `<output>.preview.png` per output.
    pub preview: Option<Colormap>,
    /// A tangent-space `<output>.normal.png` per height output: (bits 8 or 16, Y convention).
    pub normal_map: Option<(u8, NormalY)>,
    /// A mesh per height output, keeping every `step`-th sample.
    pub mesh: Option<(MeshFormat, usize)>,
    /// Simplify each mesh to this largest vertical error in metres (`--mesh-error-m`;
    /// `io::mesh::simplify`) instead of keeping every `step`-th sample.
    pub mesh_error_m: Option<f32>,
    /// Splat maps: `(file stem, up to four mask outputs)`.
    pub splats: Vec<(String, Vec<String>)>,
    /// Scale each splat map's weights to sum to 1 where any is positive.
    pub splat_normalize: bool,
}

impl Default for Exports {
    /// What `orogen build` writes with no export flags: 16-bit PNG over the graph's height
    /// range and a terrain-coloured preview per output.
    fn default() -> Self {
        Self {
            formats: vec![Format::Png16],
            range: Range::Graph,
            preset: None,
            preview: Some(Colormap::Terrain),
            normal_map: None,
            mesh: None,
            mesh_error_m: None,
            splats: Vec::new(),
            splat_normalize: false,
        }
    }
}

impl Exports {
    /// The `orogen build` flags that ask for these exports; none for the defaults.
    #[must_use]
    pub fn to_args(&self) -> Vec<String> {
        use crate::node::choice_name;
        let d = Exports::default();
        let mut a = Vec::new();
        let mut flag = |k: &str, v: Option<String>| {
            a.push(format!("--{k}"));
            a.extend(v);
        };
        if self.formats != d.formats {
            let names: Vec<&str> = self.formats.iter().map(|f| f.name()).collect();
            flag("format", Some(names.join(",")));
        }
        if self.range != d.range {
            flag("range", Some(choice_name(self.range).to_owned()));
        }
        if let Some(p) = self.preset {
            flag("preset", Some(choice_name(p).to_owned()));
        }
        match self.preview {
            None => flag("no-preview", None),
            Some(m) if Some(m) != d.preview => flag("preview", Some(choice_name(m).to_owned())),
            Some(_) => {}
        }
        if let Some((bits, y)) = self.normal_map {
            flag("normal-map", None);
            if bits != 8 {
                flag("normal-bits", Some(bits.to_string()));
            }
            if y != NormalY::Opengl {
                flag("normal-y", Some(choice_name(y).to_owned()));
            }
        }
        if let Some((m, step)) = self.mesh {
            flag("mesh", Some(choice_name(m).to_owned()));
            if step != 1 {
                flag("mesh-step", Some(step.to_string()));
            }
            if let Some(e) = self.mesh_error_m {
                flag("mesh-error-m", Some(e.to_string()));
            }
        }
        for (stem, masks) in &self.splats {
            flag("splat", Some(format!("{stem}={}", masks.join(","))));
        }
        if self.splat_normalize {
            flag("splat-normalize", None);
        }
        a
    }
}

/// The heightmap formats written: the preset's, else the chosen ones.
pub(super) fn formats_for(ex: &Exports) -> Vec<Format> {
    match ex.preset {
        Some(Preset::Unity) => vec![Format::R16],
        Some(Preset::Unreal) => vec![Format::Png16],
        Some(Preset::Godot) => vec![Format::Exr],
        None => ex.formats.clone(),
    }
}

/// The numbers to enter in the engine, recorded in the manifest.
pub(super) fn preset_info(p: Preset, graph: &Graph, resolution: usize) -> serde_json::Value {
    let w = graph.world;
    let span = w.height_span_m();
    match p {
        Preset::Unity => serde_json::json!({
            "engine": "unity",
            "heightmap_resolution": resolution,
            "file_format": "RAW16, little-endian (Windows byte order), rows from south (z = 0) to north",
            "terrain_size_m": { "width": w.size_m, "height": span, "length": w.size_m },
            "terrain_position_y_m": w.height_min_m,
        }),
        Preset::Unreal => serde_json::json!({
            "engine": "unreal",
            "landscape_resolution": resolution,
            "file_format": "16-bit grayscale PNG, top row = north",
            // Unreal maps the 16-bit range to 512 m at Z scale 100 (cm units): scale = span / 5.12.
            "scale_cm": { "x": w.cell_size_m(resolution) * 100.0, "y": w.cell_size_m(resolution) * 100.0, "z": span * 100.0 / 512.0 },
            "location_z_cm": f64::midpoint(w.height_min_m, w.height_max_m) * 100.0,
        }),
        Preset::Godot => serde_json::json!({
            "engine": "godot",
            "heightmap_resolution": resolution,
            "file_format": "OpenEXR, one 32-bit float channel Y, metres (import with height scale 1)",
            "cell_size_m": w.cell_size_m(resolution),
        }),
    }
}

crate::impl_choice!(Preset {
    Unity = "unity",
    Unreal = "unreal",
    Godot = "godot",
});
crate::impl_choice!(MeshFormat {
    Obj = "obj",
    Glb = "glb",
});
crate::impl_choice!(Range {
    Graph = "graph",
    Data = "data",
});
