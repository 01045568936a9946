//! Export throughput for a 4096² build: encoding each file format and building meshes.
//!
//! Run: `cargo bench -p orogen --features bench --bench exports`

use criterion::{criterion_group, criterion_main, Criterion};
use orogen::field::Field;
use orogen::io::heightmap::{encode, Format};
use orogen::io::mesh::Mesh;
use orogen::io::render::{normals, preview_rgb, Colormap, NormalY};
use orogen::World;
use std::hint::black_box;
use std::time::Duration;

const N: usize = 4096;

fn exports(c: &mut Criterion) {
    let world = World {
        size_m: 4096.0,
        height_min_m: 0.0,
        height_max_m: 1000.0,
    };
    let f = Field::from_fn(N, N, |x, y| {
        500.0
            + 400.0 * ((x as f32 * 0.003).sin() * (y as f32 * 0.002).cos())
            + (x * 7 + y * 13) as f32 % 17.0
    });
    let mut group = c.benchmark_group("exports_4096");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(8));
    for format in [
        Format::Png16,
        Format::Tiff16,
        Format::Exr,
        Format::R16,
        Format::F32,
    ] {
        group.bench_function(format.name(), |b| {
            b.iter(|| black_box(encode(&f, &world, format).expect("encode").len()));
        });
    }
    group.bench_function("glb_full", |b| {
        b.iter(|| black_box(Mesh::from_field(&f, 1.0, 1).to_glb().len()));
    });
    group.bench_function("glb_step4", |b| {
        b.iter(|| black_box(Mesh::from_field(&f, 1.0, 4).to_glb().len()));
    });
    group.bench_function("obj_step4", |b| {
        b.iter(|| {
            let mut out = Vec::new();
            Mesh::from_field(&f, 1.0, 4)
                .write_obj(&mut out)
                .expect("obj");
            black_box(out.len())
        });
    });
    group.bench_function("normal_map_values", |b| {
        b.iter(|| black_box(normals(&f, 1.0, NormalY::Opengl).len()));
    });
    group.bench_function("preview_rgb", |b| {
        b.iter(|| {
            black_box(preview_rgb(&f, 0.0, 1000.0, Colormap::Terrain, Some((&f, 1.0))).len())
        });
    });
    group.finish();
}

criterion_group!(benches, exports);
criterion_main!(benches);
