//! The 3D preview: the heightfield as a lit, colormapped triangle mesh drawn with OpenGL inside
//! an egui paint callback (the pattern of egui's `custom3d_glow` demo). Drag to orbit, scroll
//! to zoom.
//!
//! Every call into OpenGL goes through `glow`, whose functions are `unsafe` because they talk to
//! the driver: this module is the only place in the project that allows `unsafe`, and each block
//! states why it is sound.
#![expect(unsafe_code)]

use eframe::egui_glow;
use eframe::glow::{self, HasContext};
use egui::{Sense, Vec2};
use orogen::io::render::Colormap;
use orogen::node::PortKind;
use orogen::{Field, World};
use std::sync::{Arc, Mutex, PoisonError};

/// Largest grid drawn (vertices per side); bigger fields are resampled to it.
const MAX_GRID: usize = 256;

/// Orbit camera and GL resources.
pub struct View3d {
    yaw: f32,
    pitch: f32,
    /// Camera distance as a multiple of [`fit_distance`] (1: the whole terrain in view).
    distance: f32,
    /// Vertical exaggeration.
    pub exaggeration: f32,
    gpu: Arc<Mutex<Gpu>>,
    /// What the uploaded mesh shows.
    key: Option<(u64, String, usize, Colormap, u32)>,
}

#[derive(Default)]
struct Gpu {
    program: Option<glow::Program>,
    vao: Option<glow::VertexArray>,
    vbo: Option<glow::Buffer>,
    ebo: Option<glow::Buffer>,
    index_count: i32,
    /// Vertex data waiting to be uploaded on the GL thread.
    pending: Option<(Vec<f32>, Vec<u32>)>,
    error: Option<String>,
}

impl Default for View3d {
    fn default() -> Self {
        Self {
            yaw: 0.6,
            pitch: 0.55,
            distance: 1.0,
            exaggeration: 1.0,
            gpu: Arc::new(Mutex::new(Gpu::default())),
            key: None,
        }
    }
}

/// Interleaved vertices (position xyz, normal xyz, colour rgb) and triangle indices for a
/// field: x and z span [−1, 1], y is height relative to the world size times `exaggeration`.
/// With `albedo` (a colour map, linear RGB) the surface is painted with it instead of the
/// colormap.
#[must_use]
pub fn mesh(
    f: &Field,
    kind: PortKind,
    world: &World,
    map: Colormap,
    exaggeration: f32,
    albedo: Option<&Field>,
) -> (Vec<f32>, Vec<u32>) {
    let n = f.width().clamp(2, MAX_GRID);
    // A scalar is drawn like a mask: its own range (log when it spans decades) onto [0, 1].
    let scaled;
    let (f, kind) = if kind == PortKind::Scalar {
        let (lo, hi) = f.min_max().unwrap_or((0.0, 1.0));
        let (shown, lo, hi) = orogen::io::render::scalar_display(f, lo, hi);
        let inv = if hi > lo { 1.0 / (hi - lo) } else { 0.0 };
        scaled = shown.map(|v| (v - lo) * inv);
        (&scaled, PortKind::Mask)
    } else {
        (f, kind)
    };
    let g = if f.width() == n {
        f.clone()
    } else {
        f.resample_bilinear(n, n)
    };
    let albedo = albedo.map(|a| {
        if a.width() == n {
            a.clone()
        } else {
            a.resample(n, n)
        }
    });
    let (lo, hi) = match kind {
        PortKind::Height => orogen::io::render::display_range(world),
        PortKind::Mask | PortKind::Color | PortKind::Scalar => (0.0, 1.0),
    };
    // Masks are drawn as a relief one tenth of the world wide.
    let metres = |v: f32| match kind {
        PortKind::Height => f64::from(v - lo),
        PortKind::Mask | PortKind::Color | PortKind::Scalar => f64::from(v) * world.size_m * 0.1,
    };
    let scale = (2.0 / world.size_m) as f32 * exaggeration;
    let y = |i: usize| metres(g.data()[i]) as f32 * scale;
    let step = 2.0 / (n - 1) as f32;
    let mut verts = Vec::with_capacity(n * n * 9);
    for r in 0..n {
        for c in 0..n {
            let i = r * n + c;
            let (l, rr) = (r * n + c.saturating_sub(1), r * n + (c + 1).min(n - 1));
            let (u, d) = (r.saturating_sub(1) * n + c, (r + 1).min(n - 1) * n + c);
            let dx = (y(rr) - y(l)) / (step * (((c + 1).min(n - 1) - c.saturating_sub(1)) as f32));
            let dz = (y(d) - y(u)) / (step * (((r + 1).min(n - 1) - r.saturating_sub(1)) as f32));
            let len = (dx * dx + dz * dz + 1.0).sqrt();
            let t = if hi > lo {
                (g.data()[i] - lo) / (hi - lo)
            } else {
                0.0
            };
            let col = match &albedo {
                Some(a) => std::array::from_fn(|k| {
                    orogen::io::heightmap::srgb_encode(a.plane(k.min(a.channels() - 1))[i])
                }),
                None => map.color(t),
            };
            verts.extend_from_slice(&[
                -1.0 + c as f32 * step,
                y(i),
                -1.0 + r as f32 * step,
                -dx / len,
                1.0 / len,
                -dz / len,
                col[0],
                col[1],
                col[2],
            ]);
        }
    }
    let mut idx = Vec::with_capacity((n - 1) * (n - 1) * 6);
    for r in 0..n as u32 - 1 {
        for c in 0..n as u32 - 1 {
            let i = r * n as u32 + c;
            let j = i + n as u32;
            idx.extend_from_slice(&[i, j, i + 1, i + 1, j, j + 1]);
        }
    }
    (verts, idx)
}

impl View3d {
    /// Shows the view; `gl` is `None` where there is no OpenGL (the UI tests).
    pub fn show(
        &mut self,
        ui: &mut egui::Ui,
        gl: Option<&Arc<glow::Context>>,
        key: (u64, String, usize, Colormap),
        shown: Option<(&Field, PortKind, &World)>,
        albedo: Option<&Field>,
    ) {
        ui.horizontal(|ui| {
            ui.add(
                egui::Slider::new(&mut self.exaggeration, 0.5..=10.0)
                    .text("vertical exaggeration")
                    .suffix("×"),
            );
            if ui.button("Reset view").clicked() {
                let e = self.exaggeration;
                *self = Self {
                    gpu: Arc::clone(&self.gpu),
                    exaggeration: e,
                    ..Self::default()
                };
            }
        });
        if gl.is_none() {
            ui.weak("The 3D view needs OpenGL, which this window does not have.");
            return;
        }
        let Some((field, kind, world)) = shown else {
            ui.weak("No preview yet: select a node.");
            return;
        };
        let full_key = (key.0, key.1, key.2, key.3, self.exaggeration.to_bits());
        if self.key.as_ref() != Some(&full_key) {
            let m = mesh(field, kind, world, key.3, self.exaggeration, albedo);
            self.gpu
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .pending = Some(m);
            self.key = Some(full_key);
        }
        let size = ui.available_size() - Vec2::new(0.0, 4.0);
        let (rect, resp) = ui.allocate_exact_size(size.max(Vec2::splat(64.0)), Sense::drag());
        if resp.dragged() {
            let d = resp.drag_delta();
            self.yaw += d.x * 0.01;
            self.pitch = (self.pitch + d.y * 0.01).clamp(0.05, 1.5);
        }
        if resp.hovered() {
            let scroll = ui.input(|i| i.smooth_scroll_delta.y);
            self.distance = (self.distance * (-scroll * 0.002).exp()).clamp(0.25, 3.0);
        }
        if let Some(e) = &self
            .gpu
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .error
        {
            ui.colored_label(egui::Color32::RED, e);
        }
        let aspect = rect.width() / rect.height().max(1.0);
        let d = self.distance * fit_distance(aspect);
        let mvp = mul(
            &perspective(FOV_Y, aspect, 0.05, 50.0),
            &look_at(
                [
                    d * self.pitch.cos() * self.yaw.sin(),
                    d * self.pitch.sin(),
                    d * self.pitch.cos() * self.yaw.cos(),
                ],
                [0.0, 0.0, 0.0],
            ),
        );
        let gpu = Arc::clone(&self.gpu);
        let callback = egui::PaintCallback {
            rect,
            callback: Arc::new(egui_glow::CallbackFn::new(move |_info, painter| {
                gpu.lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .paint(painter.gl(), &mvp);
            })),
        };
        ui.painter().with_clip_rect(rect).add(callback);
    }
}

/// Vertical field of view of the 3D view (radians).
const FOV_Y: f32 = 0.8;

/// How far the camera stands so that the whole terrain is in view at any yaw and pitch, in a
/// view `aspect` wide per unit of height: the terrain (x and z in [−1, 1], heights a fraction
/// of that) lies within a sphere of radius 1.5, which must fit the narrower of the two fields
/// of view. `View3d::distance` is a multiple of it (1 when the view opens; the wheel zooms).
fn fit_distance(aspect: f32) -> f32 {
    let half_v = FOV_Y / 2.0;
    let half_h = (aspect * half_v.tan()).atan();
    1.5 / half_v.min(half_h).sin()
}

const VERTEX: &str = r"
in vec3 a_pos;
in vec3 a_normal;
in vec3 a_color;
uniform mat4 u_mvp;
out vec3 v_normal;
out vec3 v_color;
void main() {
    v_normal = a_normal;
    v_color = a_color;
    gl_Position = u_mvp * vec4(a_pos, 1.0);
}
";

const FRAGMENT: &str = r"
precision mediump float;
in vec3 v_normal;
in vec3 v_color;
out vec4 out_color;
void main() {
    vec3 light = normalize(vec3(-0.5, 0.8, -0.4));
    float diffuse = max(dot(normalize(v_normal), light), 0.0);
    out_color = vec4(v_color * (0.3 + 0.7 * diffuse), 1.0);
}
";

impl Gpu {
    fn paint(&mut self, gl: &glow::Context, mvp: &[f32; 16]) {
        if self.error.is_some() {
            return;
        }
        if let Err(e) = self.prepare(gl) {
            self.error = Some(format!("3D view unavailable: {e}"));
            return;
        }
        let (Some(program), Some(vao)) = (self.program, self.vao) else {
            return;
        };
        // SAFETY: called on the GL thread inside egui_glow's paint callback with its current
        // context; the program and vertex array were created on that context by `prepare`, the
        // element buffer bound to the VAO holds `index_count` u32 indices, and the state changed
        // here (depth test, program, VAO) is reset below and by egui_glow after the callback.
        unsafe {
            gl.enable(glow::DEPTH_TEST);
            gl.depth_func(glow::LESS);
            gl.clear_color(0.11, 0.12, 0.14, 1.0);
            gl.clear(glow::COLOR_BUFFER_BIT | glow::DEPTH_BUFFER_BIT);
            gl.use_program(Some(program));
            gl.uniform_matrix_4_f32_slice(
                gl.get_uniform_location(program, "u_mvp").as_ref(),
                false,
                mvp,
            );
            gl.bind_vertex_array(Some(vao));
            gl.draw_elements(glow::TRIANGLES, self.index_count, glow::UNSIGNED_INT, 0);
            gl.bind_vertex_array(None);
            gl.disable(glow::DEPTH_TEST);
        }
    }

    /// Compiles the program once and uploads pending mesh data.
    fn prepare(&mut self, gl: &glow::Context) -> Result<(), String> {
        if self.program.is_none() {
            self.program = Some(compile(gl)?);
        }
        let Some((verts, idx)) = self.pending.take() else {
            return Ok(());
        };
        // SAFETY: on the GL thread with the context current (see `paint`); buffers are created
        // before use, the slices outlive the upload calls, and the attribute layout (9 f32 per
        // vertex: position, normal, colour) matches `mesh`.
        unsafe {
            let vao = match self.vao {
                Some(v) => v,
                None => gl.create_vertex_array()?,
            };
            let vbo = match self.vbo {
                Some(b) => b,
                None => gl.create_buffer()?,
            };
            let ebo = match self.ebo {
                Some(b) => b,
                None => gl.create_buffer()?,
            };
            gl.bind_vertex_array(Some(vao));
            gl.bind_buffer(glow::ARRAY_BUFFER, Some(vbo));
            gl.buffer_data_u8_slice(glow::ARRAY_BUFFER, bytes_f32(&verts), glow::STATIC_DRAW);
            gl.bind_buffer(glow::ELEMENT_ARRAY_BUFFER, Some(ebo));
            gl.buffer_data_u8_slice(
                glow::ELEMENT_ARRAY_BUFFER,
                bytes_u32(&idx),
                glow::STATIC_DRAW,
            );
            let program = self.program.ok_or("no program")?;
            for (name, offset) in [("a_pos", 0), ("a_normal", 3), ("a_color", 6)] {
                if let Some(loc) = gl.get_attrib_location(program, name) {
                    gl.enable_vertex_attrib_array(loc);
                    gl.vertex_attrib_pointer_f32(loc, 3, glow::FLOAT, false, 36, offset * 4);
                }
            }
            gl.bind_vertex_array(None);
            gl.bind_buffer(glow::ARRAY_BUFFER, None);
            self.vao = Some(vao);
            self.vbo = Some(vbo);
            self.ebo = Some(ebo);
        }
        self.index_count = i32::try_from(idx.len()).map_err(|e| e.to_string())?;
        Ok(())
    }
}

fn compile(gl: &glow::Context) -> Result<glow::Program, String> {
    let version = "#version 330 core\n";
    // SAFETY: on the GL thread with the context current; every object created here is either
    // returned (the program) or deleted before returning.
    unsafe {
        let program = gl.create_program()?;
        let mut shaders = Vec::new();
        for (kind, src) in [
            (glow::VERTEX_SHADER, VERTEX),
            (glow::FRAGMENT_SHADER, FRAGMENT),
        ] {
            let s = gl.create_shader(kind)?;
            gl.shader_source(s, &format!("{version}{src}"));
            gl.compile_shader(s);
            if !gl.get_shader_compile_status(s) {
                let log = gl.get_shader_info_log(s);
                gl.delete_shader(s);
                gl.delete_program(program);
                return Err(log);
            }
            gl.attach_shader(program, s);
            shaders.push(s);
        }
        gl.link_program(program);
        let linked = gl.get_program_link_status(program);
        for s in shaders {
            gl.detach_shader(program, s);
            gl.delete_shader(s);
        }
        if !linked {
            let log = gl.get_program_info_log(program);
            gl.delete_program(program);
            return Err(log);
        }
        Ok(program)
    }
}

fn bytes_f32(v: &[f32]) -> &[u8] {
    bytemuck_cast(v)
}

fn bytes_u32(v: &[u32]) -> &[u8] {
    bytemuck_cast(v)
}

/// Views a slice of plain numbers as bytes.
fn bytemuck_cast<T: bytemuck::Pod>(v: &[T]) -> &[u8] {
    bytemuck::cast_slice(v)
}

/// Column-major 4×4 product `a · b`.
fn mul(a: &[f32; 16], b: &[f32; 16]) -> [f32; 16] {
    std::array::from_fn(|k| {
        let (c, r) = (k / 4, k % 4);
        (0..4).map(|i| a[i * 4 + r] * b[c * 4 + i]).sum()
    })
}

fn perspective(fov_y: f32, aspect: f32, near: f32, far: f32) -> [f32; 16] {
    let f = 1.0 / (fov_y / 2.0).tan();
    let mut m = [0.0; 16];
    m[0] = f / aspect;
    m[5] = f;
    m[10] = (far + near) / (near - far);
    m[11] = -1.0;
    m[14] = 2.0 * far * near / (near - far);
    m
}

fn look_at(eye: [f32; 3], target: [f32; 3]) -> [f32; 16] {
    let sub = |a: [f32; 3], b: [f32; 3]| [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
    let norm = |a: [f32; 3]| {
        let l = (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt().max(1e-9);
        [a[0] / l, a[1] / l, a[2] / l]
    };
    let cross = |a: [f32; 3], b: [f32; 3]| {
        [
            a[1] * b[2] - a[2] * b[1],
            a[2] * b[0] - a[0] * b[2],
            a[0] * b[1] - a[1] * b[0],
        ]
    };
    let dot = |a: [f32; 3], b: [f32; 3]| a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    let f = norm(sub(target, eye));
    let s = norm(cross(f, [0.0, 1.0, 0.0]));
    let u = cross(s, f);
    [
        s[0],
        u[0],
        -f[0],
        0.0,
        s[1],
        u[1],
        -f[1],
        0.0,
        s[2],
        u[2],
        -f[2],
        0.0,
        -dot(s, eye),
        -dot(u, eye),
        dot(f, eye),
        1.0,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mesh_of_a_flat_field_faces_up() {
        let world = World {
            size_m: 1000.0,
            height_min_m: 0.0,
            height_max_m: 100.0,
        };
        let f = Field::filled(8, 8, 50.0);
        let (v, i) = mesh(&f, PortKind::Height, &world, Colormap::Terrain, 1.0, None);
        assert_eq!(v.len(), 64 * 9);
        assert_eq!(i.len(), 7 * 7 * 6);
        assert!(i.iter().all(|&k| (k as usize) < 64));
        for vert in v.chunks(9) {
            assert!(
                (vert[1] - 0.1).abs() < 1e-6,
                "50 m of a 1 km world = 0.1 of the half-width 1"
            );
            assert_eq!(&vert[3..6], &[0.0, 1.0, 0.0]);
        }
    }

    #[test]
    fn camera_maps_the_target_to_the_centre() {
        let m = mul(
            &perspective(0.8, 1.0, 0.1, 10.0),
            &look_at([0.0, 1.0, 2.0], [0.0, 0.0, 0.0]),
        );
        let p = [0.0f32, 0.0, 0.0, 1.0];
        let clip: Vec<f32> = (0..4)
            .map(|r| (0..4).map(|c| m[c * 4 + r] * p[c]).sum())
            .collect();
        assert!(clip[0].abs() < 1e-5 && clip[1].abs() < 1e-5 && clip[3] > 0.0);
    }
}
