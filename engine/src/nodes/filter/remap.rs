//! Per-sample remapping filters on heights relative to the graph's height range:
//! `terrace`, `curve`, `gamma`, `quantize`, `abs`.

use crate::field::Field;
use crate::node::{finite_relative, EvalCtx, Node, NodeError};

/// Applies `f` to relative heights r = (h − min)/(max − min) and maps the result back to metres.
fn remap_relative(ctx: &EvalCtx, input: &Field, f: impl Fn(f32) -> f32 + Sync) -> Field {
    let lo = ctx.world.height_min_m as f32;
    let span = ctx.world.height_span_m() as f32;
    let inv = 1.0 / span;
    input.map(|h| lo + span * finite_relative(f((h - lo) * inv)))
}

/// A function on [0, 1] tabulated at 4097 points and read back by linear interpolation:
/// per-sample cost of a few loads instead of `powf` or a spline segment search. For the
/// smooth curves used here the error is below 1e-6 of the range (16-bit output steps are
/// 1.5e-5).
pub struct Lut {
    table: Vec<f32>,
}

impl Lut {
    const N: usize = 4096;

    pub fn new(f: impl Fn(f32) -> f32) -> Self {
        Self {
            table: (0..=Self::N)
                .map(|i| f(i as f32 / Self::N as f32))
                .collect(),
        }
    }

    /// `f(u)` for `u` in [0, 1] (clamped).
    #[inline]
    #[must_use]
    pub fn eval(&self, u: f32) -> f32 {
        let x = u.clamp(0.0, 1.0) * Self::N as f32;
        let i = (x as usize).min(Self::N - 1);
        let t = x - i as f32;
        let (a, b) = (self.table[i], self.table[i + 1]);
        a + (b - a) * t
    }
}
crate::params! {
    pub struct TerraceParams {
        /// Number of terraces over the height range.
        steps: u32 = int(8, [2, 32], [1, 1000], ""),
        /// 0 = no terracing (linear), towards 1 = flat treads and sheer risers.
        shape: f64 = float(0.7, [0.0, 1.0], [0.0, 1.0], ""),
    }
}

crate::node! {
    /// Cuts the terrain into flat steps joined by slopes, like rice terraces or eroded mesas.
    /// Terraces: with t = r·steps (r relative height), k = floor(t), u = t − k, the output is (k +
    /// u^p)/steps with p = 1/(1 − 0.99·shape) (u^p read from a 4097-point table). Continuous (each
    /// riser climbs to the next tread); shape 0 is the identity, shape 1 nearly flat treads.
    pub struct Terrace {
        id: "terrace",
        label: "Terrace",
        category: Filter,
        version: 1,
        params: TerraceParams,
        inputs: TerraceIn {
            /// Terrain to remap.
            r#in: height,
        },
        outputs: TerraceOut {
            /// Remapped terrain.
            out: height,
        },
    }
}

impl Node for Terrace {
    fn eval(ctx: &EvalCtx, inputs: TerraceIn, p: &TerraceParams) -> Result<TerraceOut, NodeError> {
        let steps = p.steps as f32;
        let pw = (1.0 / (1.0 - 0.99 * p.shape)) as f32;
        let riser = Lut::new(|u| libm::powf(u, pw));
        Ok(TerraceOut {
            out: remap_relative(ctx, inputs.r#in, |r| {
                let t = r * steps;
                let k = t.floor();
                (k + riser.eval(t - k)) / steps
            }),
        })
    }
}

crate::params! {
    pub struct CurveParams {
        /// Output at relative height 0.
        y0: f64 = float(0.0, [0.0, 1.0], [-10.0, 10.0], "") as "Output at 0",
        /// Output at relative height 0.25.
        y1: f64 = float(0.25, [0.0, 1.0], [-10.0, 10.0], "") as "Output at 0.25",
        /// Output at relative height 0.5.
        y2: f64 = float(0.5, [0.0, 1.0], [-10.0, 10.0], "") as "Output at 0.5",
        /// Output at relative height 0.75.
        y3: f64 = float(0.75, [0.0, 1.0], [-10.0, 10.0], "") as "Output at 0.75",
        /// Output at relative height 1.
        y4: f64 = float(1.0, [0.0, 1.0], [-10.0, 10.0], "") as "Output at 1",
    }
}

crate::node! {
    /// Reshapes heights by a smooth curve through five control points, like an image editor's
    /// Curves.
    /// A curve through five control values (y0 … y4 at relative heights 0, ¼, ½, ¾, 1),
    /// interpolated by a monotone cubic (Fritsch–Carlson): no overshoot, and monotone wherever the
    /// control values are. Heights outside the range are clamped to it first.
    pub struct Curve {
        id: "curve",
        label: "Curve",
        category: Filter,
        version: 1,
        params: CurveParams,
        inputs: CurveIn {
            /// Terrain to remap.
            r#in: height,
        },
        outputs: CurveOut {
            /// Remapped terrain.
            out: height,
        },
    }
}

/// Fritsch–Carlson monotone cubic through `ys` at evenly spaced x in [0, 1]: never
/// overshoots, and is monotone wherever the control values are.
pub fn monotone_curve(ys: &[f32; 5]) -> impl Fn(f32) -> f32 + Sync + use<> {
    let h = 0.25f32;
    let d: Vec<f32> = ys.windows(2).map(|w| (w[1] - w[0]) / h).collect();
    let mut m = [0.0f32; 5];
    m[0] = d[0];
    m[4] = d[3];
    for i in 1..4 {
        m[i] = if d[i - 1] * d[i] <= 0.0 {
            0.0
        } else {
            f32::midpoint(d[i - 1], d[i])
        };
    }
    for i in 0..4 {
        if d[i] == 0.0 {
            m[i] = 0.0;
            m[i + 1] = 0.0;
        } else {
            let (a, b) = (m[i] / d[i], m[i + 1] / d[i]);
            let s = a * a + b * b;
            if s > 9.0 {
                let t = 3.0 / s.sqrt();
                m[i] = t * a * d[i];
                m[i + 1] = t * b * d[i];
            }
        }
    }
    let ys = *ys;
    move |r: f32| {
        let x = r.clamp(0.0, 1.0);
        let i = ((x / h) as usize).min(3);
        let t = (x - i as f32 * h) / h;
        let (t2, t3) = (t * t, t * t * t);
        (2.0 * t3 - 3.0 * t2 + 1.0) * ys[i]
            + (t3 - 2.0 * t2 + t) * h * m[i]
            + (-2.0 * t3 + 3.0 * t2) * ys[i + 1]
            + (t3 - t2) * h * m[i + 1]
    }
}

impl Node for Curve {
    fn eval(ctx: &EvalCtx, inputs: CurveIn, p: &CurveParams) -> Result<CurveOut, NodeError> {
        let f = monotone_curve(&[
            p.y0 as f32,
            p.y1 as f32,
            p.y2 as f32,
            p.y3 as f32,
            p.y4 as f32,
        ]);
        Ok(CurveOut {
            out: remap_relative(ctx, inputs.r#in, f),
        })
    }
}

crate::params! {
    pub struct GammaParams {
        /// Exponent: r' = r^gamma on relative heights (below 1 lifts the lowlands, above 1 deepens them).
        gamma: f64 = float(1.0, [0.2, 5.0], [0.01, 100.0], ""),
    }
}

crate::node! {
    /// Flattens lowlands and sharpens peaks (gamma above 1), or the reverse (below 1).
    /// Per sample, r' = max(r, 0)^gamma on relative heights r (read from a 4097-point table inside
    /// the height range).
    pub struct Gamma {
        id: "gamma",
        label: "Gamma / power",
        category: Filter,
        version: 1,
        params: GammaParams,
        inputs: GammaIn {
            /// Terrain to remap.
            r#in: height,
        },
        outputs: GammaOut {
            /// Remapped terrain.
            out: height,
        },
    }
}

impl Node for Gamma {
    fn eval(ctx: &EvalCtx, inputs: GammaIn, p: &GammaParams) -> Result<GammaOut, NodeError> {
        let g = p.gamma as f32;
        let table = Lut::new(|u| libm::powf(u, g));
        Ok(GammaOut {
            out: remap_relative(ctx, inputs.r#in, |r| {
                if r <= 1.0 {
                    table.eval(r)
                } else {
                    libm::powf(r, g)
                }
            }),
        })
    }
}

crate::params! {
    pub struct QuantizeParams {
        /// Number of levels over the height range.
        steps: u32 = int(16, [2, 64], [1, 65_536], ""),
    }
}

crate::node! {
    /// Snaps heights to a few flat, hard-edged levels, like the layers of a contour model.
    /// Per sample, r' = round(r·steps)/steps on relative heights: hard-edged levels.
    pub struct Quantize {
        id: "quantize",
        label: "Quantize",
        category: Filter,
        version: 1,
        params: QuantizeParams,
        inputs: QuantizeIn {
            /// Terrain to remap.
            r#in: height,
        },
        outputs: QuantizeOut {
            /// Remapped terrain.
            out: height,
        },
    }
}

impl Node for Quantize {
    fn eval(
        ctx: &EvalCtx,
        inputs: QuantizeIn,
        p: &QuantizeParams,
    ) -> Result<QuantizeOut, NodeError> {
        let s = p.steps as f32;
        Ok(QuantizeOut {
            out: remap_relative(ctx, inputs.r#in, |r| (r * s).round() / s),
        })
    }
}

crate::params! {
    pub struct AbsParams {
        /// Relative height that acts as the fold line.
        pivot: f64 = float(0.5, [0.0, 1.0], [-100.0, 100.0], ""),
    }
}

crate::node! {
    /// Flips everything below a pivot height upwards, turning valleys into ridges.
    /// Folds heights around a pivot: r' = pivot + |r − pivot| (relative heights). Valleys below the
    /// pivot become ridges above it — the classic way to turn noise into sharp crests.
    pub struct Abs {
        id: "abs",
        label: "Abs (fold)",
        category: Filter,
        version: 1,
        params: AbsParams,
        inputs: AbsIn {
            /// Terrain to remap.
            r#in: height,
        },
        outputs: AbsOut {
            /// Remapped terrain.
            out: height,
        },
    }
}

impl Node for Abs {
    fn eval(ctx: &EvalCtx, inputs: AbsIn, p: &AbsParams) -> Result<AbsOut, NodeError> {
        let c = p.pivot as f32;
        Ok(AbsOut {
            out: remap_relative(ctx, inputs.r#in, |r| c + (r - c).abs()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::monotone_curve;

    #[test]
    fn lut_matches_the_function() {
        let lut = super::Lut::new(|u| u.powf(7.0));
        for k in 0..=1000 {
            let u = k as f32 / 1000.0;
            assert!((lut.eval(u) - u.powf(7.0)).abs() < 2e-6, "{u}");
        }
    }

    #[test]
    fn curve_passes_through_control_points_and_stays_monotone() {
        let ys = [0.0, 0.1, 0.15, 0.8, 1.0];
        let f = monotone_curve(&ys);
        for (i, &y) in ys.iter().enumerate() {
            assert!((f(i as f32 * 0.25) - y).abs() < 1e-6);
        }
        let mut prev = f(0.0);
        for k in 1..=1000 {
            let v = f(k as f32 / 1000.0);
            assert!(v >= prev - 1e-6, "not monotone at {k}");
            prev = v;
        }
        let id = monotone_curve(&[0.0, 0.25, 0.5, 0.75, 1.0]);
        assert!((id(0.37) - 0.37).abs() < 1e-6);
    }
}
