//! Derivatives of a height field with the real cell size: gradient, slope, aspect, Laplacian.

use super::Field;
use rayon::prelude::*;

/// The gradient (∂h/∂x, ∂h/∂y) in metres per metre at every cell: central differences
/// inside, one-sided differences on the border.
#[must_use]
pub fn gradient(f: &Field, cell_size_m: f64) -> (Field, Field) {
    let (w, h) = (f.width(), f.height());
    let d = f.data();
    let inv = 1.0 / cell_size_m as f32;
    let mut gx = Field::filled(w, h, 0.0);
    let mut gy = Field::filled(w, h, 0.0);
    if w < 2 || h < 2 {
        return (gx, gy);
    }
    gx.data_mut()
        .par_chunks_mut(w)
        .zip(gy.data_mut().par_chunks_mut(w))
        .enumerate()
        .for_each(|(y, (rx, ry))| {
            let (y0, y1) = (y.saturating_sub(1), (y + 1).min(h - 1));
            let sy = inv / (y1 - y0) as f32;
            for x in 0..w {
                let (x0, x1) = (x.saturating_sub(1), (x + 1).min(w - 1));
                rx[x] = (d[y * w + x1] - d[y * w + x0]) * inv / (x1 - x0) as f32;
                ry[x] = (d[y1 * w + x] - d[y0 * w + x]) * sy;
            }
        });
    (gx, gy)
}

/// Slope angle in degrees at every cell.
#[must_use]
pub fn slope_deg(f: &Field, cell_size_m: f64) -> Field {
    let (gx, gy) = gradient(f, cell_size_m);
    Field::zip_map(&gx, &gy, |a, b| {
        libm::atanf((a * a + b * b).sqrt()).to_degrees()
    })
}

/// The Laplacian ∂²h/∂x² + ∂²h/∂y² in 1/m (positive in hollows, negative on crests), with
/// mirrored borders.
#[must_use]
pub fn laplacian(f: &Field, cell_size_m: f64) -> Field {
    let (w, h) = (f.width(), f.height());
    let inv = 1.0 / (cell_size_m * cell_size_m) as f32;
    Field::from_fn(w, h, |x, y| {
        let c = f.get_clamped(x as isize, y as isize);
        let s = f.get_clamped(x as isize - 1, y as isize)
            + f.get_clamped(x as isize + 1, y as isize)
            + f.get_clamped(x as isize, y as isize - 1)
            + f.get_clamped(x as isize, y as isize + 1);
        (s - 4.0 * c) * inv
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plane_slope_is_exact() {
        // h = tan(30°)·x metres with 2 m cells.
        let t = libm::tan(30f64.to_radians()) as f32;
        let f = Field::from_fn(32, 32, |x, _| t * 2.0 * x as f32);
        let s = slope_deg(&f, 2.0);
        assert!(
            s.data().iter().all(|&v| (v - 30.0).abs() < 1e-3),
            "{:?}",
            &s.data()[..4]
        );
    }
}
