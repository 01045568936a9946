//! Heightfield meshes: Wavefront OBJ and binary glTF 2.0 (`.glb`), in metres, with
//! normals and UVs, optionally decimated to every `step`-th sample.
//!
//! Axes follow glTF: +Y up, +X east, +Z south (image rows run north to south), which is
//! right-handed. Vertices sit at the samples' cell centres; UV (0, 0) is the north-west
//! corner, matching the image files. Triangles wind counter-clockwise seen from above.

pub mod simplify;

use crate::field::derive::gradient;
use crate::field::Field;
use std::io::Write;

/// A triangle mesh of a heightfield.
#[derive(Clone, Debug, PartialEq)]
pub struct Mesh {
    pub positions: Vec<[f32; 3]>,
    pub normals: Vec<[f32; 3]>,
    pub uvs: Vec<[f32; 2]>,
    pub indices: Vec<u32>,
}

/// The sample indices kept along one axis: 0, step, 2·step, … and always the last.
fn kept(n: usize, step: usize) -> Vec<usize> {
    let mut v: Vec<usize> = (0..n).step_by(step.max(1)).collect();
    if v.last() != Some(&(n - 1)) {
        v.push(n - 1);
    }
    v
}

/// A mesh file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MeshFormat {
    Obj,
    Glb,
}

/// The mesh a build writes per height output: its format, and either every `step`-th sample
/// or (with `max_error_m`, at step 1) an error-bounded simplification (`io::mesh::simplify`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MeshSpec {
    pub format: MeshFormat,
    pub step: usize,
    pub max_error_m: Option<f32>,
}

impl MeshSpec {
    /// The file's extension.
    #[must_use]
    pub fn extension(&self) -> &'static str {
        match self.format {
            MeshFormat::Obj => "obj",
            MeshFormat::Glb => "glb",
        }
    }
}

/// The mesh file of part `[x0, y0, width, height]` of heightfield `f` (the rest of `f` is a
/// margin for the normals, so that neighbouring parts' normals agree), its first sample at
/// sample `origin` of the world's grid of `cell_m`-metre cells, and what simplification
/// measured. Vertices sit where the world's samples are, so two parts sharing border samples
/// share those vertices exactly (the simplifier keeps every border sample).
#[must_use]
pub fn mesh_file(
    f: &Field,
    part: [usize; 4],
    origin: (usize, usize),
    cell_m: f64,
    spec: MeshSpec,
) -> (Vec<u8>, Option<crate::io::manifest::MeshInfo>) {
    let mut mesh = Mesh::from_field_part(f, cell_m, spec.step, part, origin);
    let mut info = None;
    if let Some(e) = spec.max_error_m {
        let [x0, y0, w, h] = part;
        let mine = Field::from_fn(w, h, |x, y| f.data()[(y0 + y) * f.width() + x0 + x]);
        let s = simplify::simplify(&mesh, &mine, cell_m as f32, e, origin);
        info = Some(crate::io::manifest::MeshInfo {
            triangles: s.mesh.indices.len() / 3,
            full_triangles: mesh.indices.len() / 3,
            max_error_m: s.max_error_m,
        });
        mesh = s.mesh;
    }
    let bytes = match spec.format {
        MeshFormat::Glb => mesh.to_glb(),
        MeshFormat::Obj => {
            let mut text = Vec::new();
            // Writing to memory cannot fail.
            let _ = mesh.write_obj(&mut text);
            text
        }
    };
    (bytes, info)
}

impl Mesh {
    /// The mesh of `f` (cell size `cell_size_m`), keeping every `step`-th sample.
    #[must_use]
    pub fn from_field(f: &Field, cell_size_m: f64, step: usize) -> Self {
        Self::from_field_part(f, cell_size_m, step, [0, 0, f.width(), f.height()], (0, 0))
    }

    /// The mesh of part `[x0, y0, width, height]` of `f`, keeping every `step`-th sample of it,
    /// its first sample at sample `origin` of the world's grid (positions are the world's;
    /// UVs span the part; normals use `f`'s samples around the part).
    #[must_use]
    pub fn from_field_part(
        f: &Field,
        cell_size_m: f64,
        step: usize,
        [x0, y0, w, h]: [usize; 4],
        (ox, oy): (usize, usize),
    ) -> Self {
        let fw = f.width();
        let (gx, gy) = gradient(f, cell_size_m);
        let (xs, ys) = (kept(w, step), kept(h, step));
        let mut m = Mesh {
            positions: Vec::with_capacity(xs.len() * ys.len()),
            normals: Vec::with_capacity(xs.len() * ys.len()),
            uvs: Vec::with_capacity(xs.len() * ys.len()),
            indices: Vec::with_capacity((xs.len() - 1) * (ys.len() - 1) * 6),
        };
        let c = cell_size_m as f32;
        let (du, dv) = (1.0 / (w.max(2) - 1) as f32, 1.0 / (h.max(2) - 1) as f32);
        for &y in &ys {
            for &x in &xs {
                let i = (y0 + y) * fw + x0 + x;
                m.positions.push([
                    ((ox + x) as f32 + 0.5) * c,
                    f.data()[i],
                    ((oy + y) as f32 + 0.5) * c,
                ]);
                let (a, b) = (gx.data()[i], gy.data()[i]);
                let k = 1.0 / (a * a + b * b + 1.0).sqrt();
                m.normals.push([-a * k, k, -b * k]);
                m.uvs.push([x as f32 * du, y as f32 * dv]);
            }
        }
        let cols = xs.len() as u32;
        for j in 0..ys.len() as u32 - 1 {
            for i in 0..cols - 1 {
                let a = j * cols + i;
                let (b, c, d) = (a + 1, a + cols, a + cols + 1);
                m.indices.extend_from_slice(&[a, c, b, b, c, d]);
            }
        }
        m
    }

    /// `(min, max)` of the positions.
    #[must_use]
    pub fn bounds(&self) -> ([f32; 3], [f32; 3]) {
        self.positions
            .iter()
            .fold(([f32::MAX; 3], [f32::MIN; 3]), |(lo, hi), p| {
                (
                    std::array::from_fn(|k| lo[k].min(p[k])),
                    std::array::from_fn(|k| hi[k].max(p[k])),
                )
            })
    }

    /// Wavefront OBJ text (1-based indices; OBJ's v axis points up, so v' = 1 − v).
    pub fn write_obj(&self, w: &mut impl Write) -> std::io::Result<()> {
        writeln!(
            w,
            "# Orogen heightfield mesh: metres, +Y up, +X east, +Z south"
        )?;
        for p in &self.positions {
            writeln!(w, "v {} {} {}", p[0], p[1], p[2])?;
        }
        for t in &self.uvs {
            writeln!(w, "vt {} {}", t[0], 1.0 - t[1])?;
        }
        for n in &self.normals {
            writeln!(w, "vn {} {} {}", n[0], n[1], n[2])?;
        }
        for t in self.indices.chunks(3) {
            let [a, b, c] = [t[0] + 1, t[1] + 1, t[2] + 1];
            writeln!(w, "f {a}/{a}/{a} {b}/{b}/{b} {c}/{c}/{c}")?;
        }
        Ok(())
    }

    /// Binary glTF 2.0: one mesh, one primitive with POSITION, NORMAL, TEXCOORD_0 and u32 indices.
    #[must_use]
    pub fn to_glb(&self) -> Vec<u8> {
        let mut bin = Vec::new();
        let mut views = Vec::new();
        let mut push = |bytes: Vec<u8>, target: u32| {
            let offset = bin.len();
            bin.extend_from_slice(&bytes);
            while bin.len() % 4 != 0 {
                bin.push(0);
            }
            views.push(serde_json::json!({ "buffer": 0, "byteOffset": offset, "byteLength": bytes.len(), "target": target }));
        };
        let f32s =
            |v: &mut dyn Iterator<Item = f32>| v.flat_map(f32::to_le_bytes).collect::<Vec<u8>>();
        push(f32s(&mut self.positions.iter().flatten().copied()), 34962);
        push(f32s(&mut self.normals.iter().flatten().copied()), 34962);
        push(f32s(&mut self.uvs.iter().flatten().copied()), 34962);
        push(
            self.indices.iter().flat_map(|i| i.to_le_bytes()).collect(),
            34963,
        );
        let (lo, hi) = self.bounds();
        let n = self.positions.len();
        let json = serde_json::json!({
            "asset": { "version": "2.0", "generator": concat!("orogen ", env!("CARGO_PKG_VERSION")) },
            "scene": 0,
            "scenes": [{ "nodes": [0] }],
            "nodes": [{ "mesh": 0, "name": "terrain" }],
            "meshes": [{ "name": "terrain", "primitives": [{
                "attributes": { "POSITION": 0, "NORMAL": 1, "TEXCOORD_0": 2 },
                "indices": 3, "mode": 4
            }]}],
            "accessors": [
                { "bufferView": 0, "componentType": 5126, "count": n, "type": "VEC3", "min": lo, "max": hi },
                { "bufferView": 1, "componentType": 5126, "count": n, "type": "VEC3" },
                { "bufferView": 2, "componentType": 5126, "count": n, "type": "VEC2" },
                { "bufferView": 3, "componentType": 5125, "count": self.indices.len(), "type": "SCALAR" }
            ],
            "bufferViews": views,
            "buffers": [{ "byteLength": bin.len() }]
        });
        let mut json = serde_json::to_vec(&json).unwrap_or_default();
        while !json.len().is_multiple_of(4) {
            json.push(b' ');
        }
        let total = 12 + 8 + json.len() + 8 + bin.len();
        let mut out = Vec::with_capacity(total);
        out.extend_from_slice(b"glTF");
        out.extend_from_slice(&2u32.to_le_bytes());
        out.extend_from_slice(&(total as u32).to_le_bytes());
        out.extend_from_slice(&(json.len() as u32).to_le_bytes());
        out.extend_from_slice(b"JSON");
        out.extend_from_slice(&json);
        out.extend_from_slice(&(bin.len() as u32).to_le_bytes());
        out.extend_from_slice(b"BIN\0");
        out.extend_from_slice(&bin);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_counts_and_upward_faces() {
        let f = Field::from_fn(9, 5, |x, y| (x + y) as f32);
        let m = Mesh::from_field(&f, 2.0, 3);
        // Kept columns 0, 3, 6, 8 and rows 0, 3, 4.
        assert_eq!(m.positions.len(), 4 * 3);
        assert_eq!(m.indices.len(), 3 * 2 * 6);
        for t in m.indices.chunks(3) {
            let [a, b, c] = [
                m.positions[t[0] as usize],
                m.positions[t[1] as usize],
                m.positions[t[2] as usize],
            ];
            let (u, v) = (
                [b[0] - a[0], b[1] - a[1], b[2] - a[2]],
                [c[0] - a[0], c[1] - a[1], c[2] - a[2]],
            );
            let ny = u[2] * v[0] - u[0] * v[2];
            assert!(ny > 0.0, "triangle faces down");
        }
    }
}
