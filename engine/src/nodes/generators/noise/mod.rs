//! The lattice-noise engine behind every noise generator: Perlin (Thorimbert & Chopard 2016 §3.2), value
//! noise, generic and zero-gradient D2M1N3 polynomial noise (Thorimbert & Chopard 2016 §3.1, §3.3), simplex
//! noise, and the fractal modes (fBm, ridged, billow, hybrid multifractal) over any of them.
//!
//! # How a field is computed fast
//! For one octave, the lattice coordinate of sample `i` along x is the same on every row.
//! So, as Thorimbert & Chopard 2016 §3.3 suggests for the space-dependent terms, the x-terms — lattice cell,
//! `fx` and the smoothstep `S(fx)` — are tabulated once per octave for the whole field
//! ([`OctaveX`]). On each row the y-terms are constant, so each lattice cell reduces to at
//! most four coefficients and every sample is one small polynomial,
//! `n = K0 + K1·fx + q·(K2 + K3·fx)` (or `K0 + K1·fx + K2·q` for the cheaper bases),
//! evaluated by a branch-free kernel ([`kernel`]) that the compiler vectorises. The kernel is
//! compiled for AVX-512, AVX2 and the x86-64 baseline and picked at run time; all versions
//! use the same IEEE additions and multiplications in the same order (no fused
//! multiply-add), so they give bit-identical results.
//!
//! # Three levels of reuse
//! Every lattice noise (Perlin, value, both D2M1N3 polynomials) is evaluated the same way. Per
//! octave, once per field: each sample's lattice column, `fx` and `S(fx)` (or `fx²`), in
//! `OctaveX`. Per lattice row, cached across image rows: each column's random data (gradient or
//! height) from a stateless hash of (octave seed, column, row), in a `RowCache`; image rows inside
//! the same lattice row reuse it, and the next lattice row reuses its lower half. Per image row:
//! each lattice cell's coefficients, then the kernel over every sample.
//!
//! # Permutes instead of gathers
//! `vgatherdps` is slow under the gather-data-sampling microcode mitigation (figures in
//! docs/perf-log.md, "Generators"), so the AVX-512 kernel replaces the four coefficient gathers with `vpermps`/`vpermt2ps` table permutes: sample
//! indices are non-decreasing, so 16 samples touch at most 32 table entries. The AVX2 kernel does
//! the same on 8 lanes (at most 16 entries: one `vpermps`, or two and a blend), about twice as
//! fast as its gathers (docs/perf-log.md). These two kernels are the engine's only `unsafe` code.
//!
//! # Checking the narrower paths on a wider CPU
//! `multiversion` picks the widest clone the CPU runs and offers no run-time override, so the cap
//! is at compile time: the features `simd-max-avx2` (no AVX-512 clone or kernel) and
//! `simd-portable` (no clones, no hand-written kernels) are one `cfg_attr` pair at every
//! multiversioned kernel of the crate. `cargo bench -p orogen --features bench,simd-max-avx2`
//! measures the AVX2 path on an AVX-512 machine, and `scripts/simd-paths.sh` runs the pinned hashes of every node
//! type and the noise path test under both features, so every path is checked for the same bits.
//! The two `cfg_attr` lines stand at each kernel rather than behind one `macro_rules!` wrapper:
//! rustfmt does not format the inside of a macro invocation, and these are the hottest, most
//! edited loops; a small attribute proc-macro would fold them if the target lists ever change.

pub mod fractal;
pub mod kernel;
pub mod lattice;
pub mod simplex;

pub use fractal::{FractalMode, FractalSpec};
pub use lattice::{hash2, unit_f32};

/// Smoothstep used across a lattice cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Smooth {
    /// `3t² − 2t³` (Thorimbert & Chopard 2016 Eq. 17, the D1M1N3 polynomial of §3.4).
    S3,
    /// `6t⁵ − 15t⁴ + 10t³` (Thorimbert & Chopard 2016 Eq. 18).
    S5,
}

impl Smooth {
    #[inline]
    #[must_use]
    pub fn apply(self, t: f32) -> f32 {
        match self {
            Smooth::S3 => t * t * (3.0 - 2.0 * t),
            Smooth::S5 => t * t * t * (t * (t * 6.0 - 15.0) + 10.0),
        }
    }
}

/// A noise basis: what one octave looks like.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Basis {
    /// Improved Perlin gradient noise with the chosen smoothstep (Thorimbert & Chopard 2016 §3.2, Eqs. 16–18).
    Perlin(Smooth),
    /// Value noise: random heights at lattice points, blended with the smoothstep.
    Value(Smooth),
    /// Generic D2M1N3 polynomial (Thorimbert & Chopard 2016 §3.1, Eqs. 5–15): random corner heights in
    /// [−1, 1] and corner gradients in [−w, w] (w in octave amplitude per lattice cell).
    D2m1n3 { gradient_weight: f32 },
    /// Zero-gradient D2M1N3 polynomial (Thorimbert & Chopard 2016 §3.3, Eq. 19).
    D2m1n3Zero,
    /// 2D simplex noise on the skewed triangular lattice (the 2D form of OpenSimplex2's
    /// fast variant: skew (√3−1)/2, radius² 1/2, quartic falloff).
    Simplex,
}

/// Per-octave x tables, shared by every row.
#[derive(Clone, Debug)]
pub struct OctaveX {
    /// Absolute lattice column of each sample (wrapping `i32`).
    pub cell: Vec<i32>,
    /// Position inside the cell, `[0, 1)`.
    pub fx: Vec<f32>,
    /// `S(fx)` for smoothstep bases, `fx²` for the generic D2M1N3 cubic.
    pub q: Vec<f32>,
    /// Sample ranges processed together: each spans at most `kernel::TABLE − 2` lattice columns.
    pub chunks: Vec<(usize, usize)>,
    /// `cell[i] − cell[chunk start]` for each sample: the index into the chunk's coefficient tables.
    pub idx: Vec<u32>,
}

impl OctaveX {
    /// Lattice columns needed by all chunks together (each chunk needs its span + 1).
    #[must_use]
    pub fn columns(&self) -> usize {
        self.chunks
            .iter()
            .map(|&(s, e)| self.cell[e - 1].wrapping_sub(self.cell[s]) as usize + 2)
            .sum()
    }

    /// Tabulates lattice coordinates `xs[i]` (already scaled to lattice units).
    #[must_use]
    pub fn new(xs: &[f64], q_of: impl Fn(f32) -> f32) -> Self {
        let n = xs.len();
        let mut cell = Vec::with_capacity(n);
        let mut fx = Vec::with_capacity(n);
        for &x in xs {
            let f = x.floor();
            cell.push(f as i64 as i32);
            // Clamp: (x − floor) can round to 1.0 in f32 for x just below an integer.
            fx.push(((x - f) as f32).min(1.0 - f32::EPSILON));
        }
        let q = fx.iter().map(|&t| q_of(t)).collect();
        let mut chunks = Vec::new();
        let mut idx = vec![0u32; n];
        let mut start = 0;
        while start < n {
            let base = cell[start];
            let mut end = start;
            while end < n && end - start < kernel::CHUNK {
                let span = cell[end].wrapping_sub(base);
                if !(0..(kernel::TABLE as i32 - 2)).contains(&span) {
                    break;
                }
                idx[end] = span as u32;
                end += 1;
            }
            let end = end.max(start + 1);
            chunks.push((start, end));
            start = end;
        }
        Self {
            cell,
            fx,
            q,
            chunks,
            idx,
        }
    }
}

/// One octave's per-column lattice data on two consecutive lattice rows, kept from one
/// image row to the next: image rows in the same lattice row reuse it, and moving down one
/// lattice row reuses the lower half. Up to three values per lattice point: Perlin keeps
/// the gradient (x, y); value and zero-gradient D2M1N3 the height; generic D2M1N3 the height
/// and both gradients.
#[derive(Default)]
pub struct RowCache {
    /// Lattice row of `row0`; `row1` is the row below.
    yi: Option<i32>,
    seed: u32,
    row0: [Vec<f32>; 3],
    row1: [Vec<f32>; 3],
}

impl RowCache {
    fn new(columns: usize) -> Self {
        Self {
            row0: std::array::from_fn(|_| vec![0.0; columns]),
            row1: std::array::from_fn(|_| vec![0.0; columns]),
            ..Self::default()
        }
    }

    /// Makes the cache hold lattice rows `yi` and `yi + 1` for every chunk of `ox`.
    fn update(&mut self, basis: Basis, ox: &OctaveX, yi: i32, seed: u32) {
        if self.seed == seed && self.yi == Some(yi) {
            return;
        }
        let shifted = self.seed == seed && self.yi == Some(yi.wrapping_sub(1));
        if shifted {
            std::mem::swap(&mut self.row0, &mut self.row1);
        }
        let mut col0 = 0;
        for &(start, end) in &ox.chunks {
            let base = ox.cell[start];
            let span = (ox.cell[end - 1].wrapping_sub(base) + 2) as usize;
            let r = col0..col0 + span;
            if !shifted {
                basis.fill_lattice_row(base, yi, seed, &mut self.row0, r.clone());
            }
            basis.fill_lattice_row(base, yi.wrapping_add(1), seed, &mut self.row1, r);
            col0 += span;
        }
        self.yi = Some(yi);
        self.seed = seed;
    }
}

/// Scratch buffers for one row worker.
pub struct Scratch {
    pub coeffs: kernel::Coeffs,
    /// Per-octave lattice row caches.
    pub rows: Vec<RowCache>,
    pub noise: Vec<f32>,
    pub weight: Vec<f32>,
}

impl Scratch {
    /// Buffers for rows of `width` samples; `columns[i]` is octave i's [`OctaveX::columns`].
    #[must_use]
    pub fn new(width: usize, columns: &[usize]) -> Self {
        Self {
            coeffs: kernel::Coeffs::new(),
            rows: columns.iter().map(|&c| RowCache::new(c)).collect(),
            noise: vec![0.0; width],
            weight: vec![0.0; width],
        }
    }
}

/// The gradient for a lattice hash: one of eight directions (Perlin 2002's 2D set).
#[inline]
#[must_use]
pub fn gradient(h: u32) -> (f32, f32) {
    const G: [(f32, f32); 8] = [
        (1.0, 1.0),
        (-1.0, 1.0),
        (1.0, -1.0),
        (-1.0, -1.0),
        (1.0, 0.0),
        (-1.0, 0.0),
        (0.0, 1.0),
        (0.0, -1.0),
    ];
    G[(h >> 29) as usize]
}

impl Basis {
    /// The `q` term tabulated per sample for this basis.
    #[must_use]
    pub fn q_of(self) -> fn(f32) -> f32 {
        match self {
            Basis::Perlin(Smooth::S5) | Basis::Value(Smooth::S5) => |t| Smooth::S5.apply(t),
            Basis::Perlin(Smooth::S3) | Basis::Value(Smooth::S3) | Basis::D2m1n3Zero => {
                |t| Smooth::S3.apply(t)
            }
            Basis::D2m1n3 { .. } | Basis::Simplex => |t| t * t,
        }
    }

    /// Computes one octave of noise for one row of a lattice basis into `out`.
    ///
    /// `y` is the row's lattice coordinate, `seed` the octave seed, `octave` the index of
    /// the octave's cache in `s` (built with [`OctaveX::columns`] columns); `w` stores the
    /// noise or adds `amp·noise` to `out`.
    #[expect(clippy::too_many_arguments)]
    pub fn lattice_row(
        self,
        ox: &OctaveX,
        y: f64,
        seed: u32,
        octave: usize,
        s: &mut Scratch,
        out: &mut [f32],
        w: kernel::Write,
    ) {
        let yf = y.floor();
        let yi = yf as i64 as i32;
        let fy = ((y - yf) as f32).min(1.0 - f32::EPSILON);
        let Some(cache) = s.rows.get_mut(octave) else {
            return;
        };
        cache.update(self, ox, yi, seed);
        let mut col0 = 0;
        for &(start, end) in &ox.chunks {
            let span = (ox.cell[end - 1].wrapping_sub(ox.cell[start]) + 2) as usize;
            let c = col0..col0 + span;
            let [a0, b0, c0] = &cache.row0;
            let [a1, b1, c1] = &cache.row1;
            let k = &mut s.coeffs;
            let r = start..end;
            match self {
                Basis::Perlin(smooth) => {
                    kernel::perlin_cells(
                        [&a0[c.clone()], &b0[c.clone()], &a1[c.clone()], &b1[c]],
                        fy,
                        smooth.apply(fy),
                        k,
                    );
                    kernel::kernel4(
                        &ox.idx[r.clone()],
                        &ox.fx[r.clone()],
                        &ox.q[r.clone()],
                        k,
                        &mut out[r],
                        w,
                    );
                }
                Basis::Value(smooth) => {
                    kernel::value_cells(&a0[c.clone()], &a1[c], smooth.apply(fy), k);
                    kernel::kernel3(
                        &ox.idx[r.clone()],
                        &ox.fx[r.clone()],
                        &ox.q[r.clone()],
                        k,
                        &mut out[r],
                        w,
                    );
                }
                Basis::D2m1n3Zero => {
                    kernel::zero_gradient_cells(&a0[c.clone()], &a1[c], fy, k);
                    kernel::kernel3(
                        &ox.idx[r.clone()],
                        &ox.fx[r.clone()],
                        &ox.q[r.clone()],
                        k,
                        &mut out[r],
                        w,
                    );
                }
                Basis::D2m1n3 { .. } => {
                    generic_cells(
                        [&a0[c.clone()], &a1[c.clone()]],
                        [&b0[c.clone()], &b1[c.clone()]],
                        [&c0[c.clone()], &c1[c]],
                        fy,
                        k,
                    );
                    kernel::kernel4(
                        &ox.idx[r.clone()],
                        &ox.fx[r.clone()],
                        &ox.q[r.clone()],
                        k,
                        &mut out[r],
                        w,
                    );
                }
                Basis::Simplex => {}
            }
            col0 += span;
        }
    }

    /// Fills the cached values of lattice row `yi`, columns `base ..`, into `row[..][range]`.
    fn fill_lattice_row(
        self,
        base: i32,
        yi: i32,
        seed: u32,
        row: &mut [Vec<f32>; 3],
        range: std::ops::Range<usize>,
    ) {
        let [a, b, c] = row;
        match self {
            Basis::Perlin(_) => {
                kernel::gradients(base, yi, seed, &mut a[range.clone()], &mut b[range]);
            }
            Basis::Value(_) | Basis::D2m1n3Zero => kernel::heights(base, yi, seed, &mut a[range]),
            Basis::D2m1n3 { gradient_weight: w } => {
                for (i, col) in range.enumerate() {
                    let h = hash2(seed, base.wrapping_add(i as i32), yi);
                    a[col] = unit_f32(h);
                    b[col] = w * unit_f32(lattice::rehash(h, 1));
                    c[col] = w * unit_f32(lattice::rehash(h, 2));
                }
            }
            Basis::Simplex => {}
        }
    }
}

/// Generic D2M1N3 cell coefficients from corner heights `h`, x-gradients `f` and
/// y-gradients `g` on rows yi (`[0]`) and yi + 1 (`[1]`).
fn generic_cells(h: [&[f32]; 2], f: [&[f32]; 2], g: [&[f32]; 2], y: f32, k: &mut kernel::Coeffs) {
    let span = h[0].len().min(kernel::TABLE);
    let (y2, y3) = (y * y, y * y * y);
    for c in 0..span.saturating_sub(1) {
        let coef = d2m1n3_coefficients(
            [h[0][c], h[0][c + 1], h[1][c], h[1][c + 1]],
            [f[0][c], f[0][c + 1], f[1][c], f[1][c + 1]],
            [g[0][c], g[0][c + 1], g[1][c], g[1][c + 1]],
        );
        // C_i(y) = Σ_j c_ij y^j, so n = C0 + C1·fx + fx²·(C2 + C3·fx).
        k.k0[c] = coef[0][0] + coef[0][1] * y + coef[0][2] * y2 + coef[0][3] * y3;
        k.k1[c] = coef[1][0] + coef[1][1] * y + coef[1][2] * y2 + coef[1][3] * y3;
        k.k2[c] = coef[2][0] + coef[2][1] * y;
        k.k3[c] = coef[3][0] + coef[3][1] * y;
    }
}

/// The coefficients `c[i][j]` of `h(x, y) = Σ c_ij xⁱ yʲ` (Thorimbert & Chopard 2016 Eq. 5) for the generic
/// D2M1N3 polynomial, from corner heights `h = [h00, h10, h01, h11]`, x-gradients
/// `f = [f00, f10, f01, f11]` and y-gradients `g = [g00, g10, g01, g11]`.
///
/// Eqs. 8–15 give c00, c10, c20, c30, c21, c31, c11 and c22 = c23 = c32 = c33 = 0; the text
/// leaves out c01, c02, c03, c12 and c13, which follow from the same equations with x and y
/// (and f and g) swapped.
#[must_use]
pub fn d2m1n3_coefficients(h: [f32; 4], f: [f32; 4], g: [f32; 4]) -> [[f32; 4]; 4] {
    let [h00, h10, h01, h11] = h;
    let [f00, f10, f01, f11] = f;
    let [g00, g10, g01, g11] = g;
    let c00 = h00; // Eq. 8
    let c10 = f00; // Eq. 9
    let c20 = 3.0 * (h10 - h00) - 2.0 * f00 - f10; // Eq. 11
    let c30 = f10 + f00 - 2.0 * (h10 - h00); // Eq. 12
    let c21 = 3.0 * (h11 - h01) - 2.0 * f01 - f11 - c20; // Eq. 13
    let c31 = f11 + f01 - 2.0 * (h11 - h01) - c30; // Eq. 14
    let c11 = h01 + h10 - h00 - h11 + f01 + g10 - g00 - f00; // Eq. 15
    let c01 = g00; // Eq. 9 with x ↔ y
    let c02 = 3.0 * (h01 - h00) - 2.0 * g00 - g01; // Eq. 11 with x ↔ y
    let c03 = g01 + g00 - 2.0 * (h01 - h00); // Eq. 12 with x ↔ y
    let c12 = 3.0 * (h11 - h10) - 2.0 * g10 - g11 - c02; // Eq. 13 with x ↔ y
    let c13 = g11 + g10 - 2.0 * (h11 - h10) - c03; // Eq. 14 with x ↔ y
                                                   // Eq. 10: c22 = c33 = c32 = c23 = 0.
    [
        [c00, c01, c02, c03],
        [c10, c11, c12, c13],
        [c20, c21, 0.0, 0.0],
        [c30, c31, 0.0, 0.0],
    ]
}

#[cfg(test)]
mod tests;
