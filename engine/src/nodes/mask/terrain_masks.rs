//! Masks read from a terrain: height band, slope, curvature, aspect.
//!
//! # Masks that keep the preview promise
//! A mask that thresholds a derivative (slope, aspect, horizon angles) or a waterline amplifies
//! whatever the grids disagree on: a finer build resolves steeper small faces than a preview's
//! cells can hold. Two mechanisms, shared rather than per node. First, `gradient_over`: a
//! Gaussian of σ = scale_m / 2 (its sampled kernel at every σ, `gaussian_sampled`: the
//! three-box stand-in above 4 pixels has other slopes, and a threshold reads them), then
//! four-point central differences (`derive::gradient4`, whose
//! response stays within 1% of the true slope for waves of 9 cells or more, where two-point
//! differences read 7% low), used by `slope_mask`, `aspect_mask`, `talus_mask` and `snow`
//! (`scale_m` 0 keeps the grid's own cells). Second, coverage instead of a flag where a sharp edge
//! crosses a cell (`rivers`: a channel narrower than a cell covers 2 · half width · step ÷ cell;
//! `sea`: the share of the cell seaward of the waterline). `orogen parity` judges anything
//! computed from an eroded terrain at the erosion's 1.5%: a threshold cannot be closer to its
//! build than the terrain it reads.

use crate::field::blur::{gaussian_sampled, support_sampled_px};
use crate::field::derive::{angle, gradient, gradient4, laplacian};
use crate::field::Field;
use crate::node::{EvalCtx, Node, NodeError};

/// Smoothstep from 0 at `t − w/2` to 1 at `t + w/2` (a hard step when `w` is 0).
#[inline]
#[must_use]
pub fn step(v: f32, t: f32, w: f32) -> f32 {
    if w <= 0.0 {
        return f32::from(u8::from(v >= t));
    }
    let x = ((v - t) / w + 0.5).clamp(0.0, 1.0);
    x * x * (3.0 - 2.0 * x)
}

/// 1 inside [lo, hi], 0 beyond `falloff` outside it, smoothstep between.
#[inline]
pub(crate) fn band(v: f32, lo: f32, hi: f32, falloff: f32) -> f32 {
    if falloff <= 0.0 {
        return f32::from(u8::from(v >= lo && v <= hi));
    }
    let up = step(v, lo - falloff / 2.0, falloff);
    let down = 1.0 - step(v, hi + falloff / 2.0, falloff);
    (up * down).clamp(0.0, 1.0)
}

/// What a negative `scale_m` (the default, "auto") measures slope and aspect over: a 48th of
/// the world's side, five cells of a 256² preview. A mask then reads what the preview's
/// terrain holds, so the preview predicts the build; over the grid's own cells a finer build
/// resolves steeper small faces, which erosion multiplies (the figures: docs/engines.md).
pub(crate) const SLOPE_AUTO_PARTS: f64 = 48.0;
/// The same for aspect (a direction: on gentle ground it turns with the least detail) and
/// curvature (a second derivative: it amplifies fine detail more): a 32nd of the world's side.
pub(crate) const ASPECT_AUTO_PARTS: f64 = 32.0;
/// See [`ASPECT_AUTO_PARTS`].
pub(crate) const CURVATURE_AUTO_PARTS: f64 = 32.0;

/// A derivative mask's `scale_m` in metres: as set when ≥ 0 (0: the grid's own cells), and
/// when negative ("auto") the world's side (`world_m`) ÷ `parts`.
#[must_use]
pub(crate) fn measured_over(scale_m: f64, world_m: f64, parts: f64) -> f64 {
    if scale_m < 0.0 {
        world_m / parts
    } else {
        scale_m
    }
}

/// The footprint of a derivative measured over `scale_m` ([`measured_over`]), in cells of
/// `cell_m` on an `n`-cell side, plus `extra` cells of the differences.
pub(crate) fn footprint_over(
    scale_m: f64,
    parts: f64,
    cell_m: f64,
    n: usize,
    extra: usize,
) -> crate::node::Footprint {
    let scale = measured_over(scale_m, cell_m * n as f64, parts);
    crate::node::Footprint::Stencil(support_sampled_px(scale / 2.0 / cell_m) + extra)
}

/// The gradient (m/m) of `terrain` measured over `scale_m` metres ([`measured_over`]): after
/// a Gaussian of σ = `scale_m` / 2, four-point central differences ([`gradient4`]: smooth at
/// the grid's scale, they read the same slope on a coarse preview as on a fine build); at 0,
/// the grid's own cells (two-point differences over the real cell size).
/// `parts`: what a negative `scale_m` divides the world's side by.
pub(crate) fn gradient_over(
    ctx: &EvalCtx,
    terrain: &Field,
    scale_m: f64,
    parts: f64,
) -> (Field, Field) {
    gradient_in(terrain, ctx.cell_size_m(), ctx.world.size_m, scale_m, parts)
}

/// [`gradient_over`] on a grid of `cell` metres in a world `world_m` wide (a tile's window:
/// the same values as the whole map's away from its edge).
pub(crate) fn gradient_in(
    terrain: &Field,
    cell: f64,
    world_m: f64,
    scale_m: f64,
    parts: f64,
) -> (Field, Field) {
    let scale_m = measured_over(scale_m, world_m, parts);
    if scale_m > 0.0 {
        gradient4(&gaussian_sampled(terrain, scale_m / 2.0 / cell), cell)
    } else {
        gradient(terrain, cell)
    }
}

/// Slope angles in degrees of `terrain` measured over `scale_m` metres ([`gradient_over`]).
pub(crate) fn slope_over(ctx: &EvalCtx, terrain: &Field, scale_m: f64) -> Field {
    let (gx, gy) = gradient_over(ctx, terrain, scale_m, SLOPE_AUTO_PARTS);
    angle(&gx, &gy)
}

crate::params! {
    pub struct HeightMaskParams {
        /// Bottom of the band, as a fraction of the graph's height range.
        low: f64 = float(0.3, [0.0, 1.0], [-100.0, 100.0], ""),
        /// Top of the band, as a fraction of the graph's height range.
        high: f64 = float(0.7, [0.0, 1.0], [-100.0, 100.0], ""),
        /// Width of the fade outside the band, as a fraction of the height range.
        falloff: f64 = float(0.05, [0.0, 0.5], [0.0, 100.0], ""),
    }
}

crate::node! {
    /// Selects a band of altitudes, such as the lowlands, a belt of mid-slopes or the summits.
    /// The mask is 1 where the height lies in [low, high] (fractions of the graph's height range),
    /// fading to 0 over `falloff` outside the band (smoothstep).
    pub struct HeightMask {
        id: "height_mask",
        label: "Height mask",
        category: Mask,
        version: 1,
        params: HeightMaskParams,
        inputs: HeightMaskIn {
            /// Terrain to measure.
            r#in: height,
        },
        outputs: HeightMaskOut {
            /// The band, in [0, 1].
            out: mask,
        },
    }
}

impl Node for HeightMask {
    fn eval(
        ctx: &EvalCtx,
        inputs: HeightMaskIn,
        p: &HeightMaskParams,
    ) -> Result<HeightMaskOut, NodeError> {
        let w = ctx.world;
        let (lo, hi) = (
            w.relative_to_m(p.low) as f32,
            w.relative_to_m(p.high) as f32,
        );
        let f = (p.falloff * w.height_span_m()) as f32;
        Ok(HeightMaskOut {
            out: inputs.r#in.map(|h| band(h, lo, hi, f)),
        })
    }
}

crate::params! {
    pub struct SlopeMaskParams {
        /// Lowest slope selected, in degrees.
        min_deg: f64 = float(30.0, [0.0, 90.0], [0.0, 90.0], "°") as "Min slope",
        /// Steepest slope selected, in degrees.
        max_deg: f64 = float(90.0, [0.0, 90.0], [0.0, 90.0], "°") as "Max slope",
        /// Width of the fade outside [min_deg, max_deg], in degrees.
        falloff_deg: f64 = float(5.0, [0.0, 30.0], [0.0, 90.0], "°"),
        /// Distance the slope is measured over, in metres: the terrain is smoothed over about this distance first. −1 (auto, the default): a 48th of the world's side, so the preview predicts the build; 0: the grid's own cells (crisper, but finer builds read steeper detail).
        scale_m: f64 = float(-1.0, [-1.0, 500.0], [-1.0, 10_000_000.0], "m") as "Scale",
    }
}

crate::node! {
    /// Selects ground by steepness, such as cliffs for rock or gentle slopes for grass.
    /// The mask is 1 where the slope angle lies in [min_deg, max_deg], fading over falloff_deg.
    /// Slopes come from central differences of metres over the real cell size (world size /
    /// resolution), so a 30° hillside reads 30° at every resolution; the terrain is first smoothed
    /// over scale_m (a Gaussian of σ = scale_m / 2, as curvature_mask), so the slope is measured
    /// over the same stretch of land at every resolution. By default (−1, auto) that is a 48th of
    /// the world's side, five cells of a 256² preview, and the preview predicts the build; with 0
    /// the grid's own cells, where a finer build resolves steeper detail the preview cannot see.
    pub struct SlopeMask {
        id: "slope_mask",
        label: "Slope mask",
        category: Mask,
        version: 2,
        params: SlopeMaskParams,
        inputs: SlopeMaskIn {
            /// Terrain to measure.
            r#in: height,
        },
        outputs: SlopeMaskOut {
            /// Slope selection, in [0, 1].
            out: mask,
        },
        // A derivative resolves the finer octaves a build adds even after smoothing: held to
        // what a terrain computed from erosion is held to.
        traits: crate::node::Traits {
            parity: crate::node::Parity::Within(0.015),
            ..crate::node::Traits::DEFAULT
        },
    }
}

impl Node for SlopeMask {
    fn footprint(p: &SlopeMaskParams, cell_m: f64, n: usize) -> crate::node::Footprint {
        footprint_over(p.scale_m, SLOPE_AUTO_PARTS, cell_m, n, 2)
    }

    fn eval(
        ctx: &EvalCtx,
        inputs: SlopeMaskIn,
        p: &SlopeMaskParams,
    ) -> Result<SlopeMaskOut, NodeError> {
        let s = slope_over(ctx, inputs.r#in, p.scale_m);
        let (lo, hi, f) = (p.min_deg as f32, p.max_deg as f32, p.falloff_deg as f32);
        Ok(SlopeMaskOut {
            out: s.map(|v| band(v, lo, hi, f)),
        })
    }
}

crate::choice_enum! {
    /// Which curvature is selected.
    pub enum CurvatureKind { Convex = "convex", Concave = "concave" }
}

crate::params! {
    pub struct CurvatureMaskParams {
        /// Convex (crests, ridges) or concave (hollows, valleys).
        kind: CurvatureKind = choice(CurvatureKind::Convex),
        /// Radius of the smoothing applied before measuring, in metres (the scale of the features measured). −1 (auto, the default): a 32nd of the world's side, so the preview predicts the build; 0: the grid's own cells.
        scale_m: f64 = float(-1.0, [-1.0, 500.0], [-1.0, 10_000_000.0], "m"),
        /// Curvature, in degrees of slope change per 100 m, that maps to a full mask.
        full_deg_per_100m: f64 = float(10.0, [1.0, 90.0], [0.001, 100_000.0], "°") as "Full at (° per 100 m)",
    }
}

crate::node! {
    /// Picks out ridges and crests (convex) or hollows and valley floors (concave).
    /// Convex or concave areas: the Laplacian of the terrain blurred with radius scale_m (in 1/m:
    /// change of slope per metre), negative on crests and positive in hollows, scaled so that
    /// full_deg_per_100m degrees of slope change per 100 m gives 1, clamped to [0, 1]. By default
    /// (−1, auto) the radius is a 32nd of the world's side, eight cells of a 256² preview, so the
    /// preview predicts the build.
    pub struct CurvatureMask {
        id: "curvature_mask",
        label: "Curvature mask",
        category: Mask,
        version: 2,
        params: CurvatureMaskParams,
        inputs: CurvatureMaskIn {
            /// Terrain to measure.
            r#in: height,
        },
        outputs: CurvatureMaskOut {
            /// Curvature selection, in [0, 1].
            out: mask,
        },
        // A derivative resolves the finer octaves a build adds even after smoothing: held to
        // what a terrain computed from erosion is held to.
        traits: crate::node::Traits {
            parity: crate::node::Parity::Within(0.015),
            ..crate::node::Traits::DEFAULT
        },
    }
}

impl Node for CurvatureMask {
    fn footprint(p: &CurvatureMaskParams, cell_m: f64, n: usize) -> crate::node::Footprint {
        footprint_over(p.scale_m, CURVATURE_AUTO_PARTS, cell_m, n, 1)
    }

    fn eval(
        ctx: &EvalCtx,
        inputs: CurvatureMaskIn,
        p: &CurvatureMaskParams,
    ) -> Result<CurvatureMaskOut, NodeError> {
        let cell = ctx.cell_size_m();
        let scale = measured_over(p.scale_m, ctx.world.size_m, CURVATURE_AUTO_PARTS);
        let smooth = gaussian_sampled(inputs.r#in, scale / 2.0 / cell);
        let lap = laplacian(&smooth, cell);
        // Slope change per metre that maps to 1.
        let full = (libm::tan(p.full_deg_per_100m.to_radians()) / 100.0) as f32;
        let sign = match p.kind {
            CurvatureKind::Convex => -1.0,
            CurvatureKind::Concave => 1.0,
        };
        Ok(CurvatureMaskOut {
            out: lap.map(|l| crate::node::unit(sign * l / full)),
        })
    }
}

crate::params! {
    pub struct AspectMaskParams {
        /// Direction the selected slopes face, in degrees clockwise from north (0 = north, 90 = east; north is the top of the map).
        direction_deg: f64 = float(180.0, [0.0, 360.0], [-360.0, 720.0], "°"),
        /// Half-width of the selected sector, in degrees.
        spread_deg: f64 = float(45.0, [5.0, 180.0], [0.0, 180.0], "°"),
        /// Slopes flatter than this are ignored (their aspect is noise), in degrees.
        min_slope_deg: f64 = float(2.0, [0.0, 20.0], [0.0, 90.0], "°"),
        /// The distance the aspect is measured over, in metres (a Gaussian of σ = scale_m / 2
        /// first). −1 (auto, the default): a 32nd of the world's side; 0: the grid's own cells.
        scale_m: f64 = float(-1.0, [-1.0, 500.0], [-1.0, 10_000_000.0], "m") as "Scale",
    }
}

crate::node! {
    /// Selects slopes facing one compass direction, such as sunny south faces or shaded north
    /// faces.
    /// Slopes facing a direction (the downhill direction, clockwise from north = top of the map): 1
    /// when facing direction_deg, falling linearly to 0 at ± spread_deg, and faded in between 0 and
    /// min_slope_deg of slope so flats are not selected. The aspect is measured after smoothing the
    /// terrain over scale_m (as slope_mask; by default a 32nd of the world's side), the same
    /// stretch of land at every resolution; with 0, over the grid's own cells, where a finer
    /// build resolves small faces its preview cannot see.
    pub struct AspectMask {
        id: "aspect_mask",
        label: "Aspect mask",
        category: Mask,
        version: 2,
        params: AspectMaskParams,
        inputs: AspectMaskIn {
            /// Terrain to measure.
            r#in: height,
        },
        outputs: AspectMaskOut {
            /// Aspect selection, in [0, 1].
            out: mask,
        },
        // A derivative resolves the finer octaves a build adds even after smoothing: held to
        // what a terrain computed from erosion is held to.
        traits: crate::node::Traits {
            parity: crate::node::Parity::Within(0.015),
            ..crate::node::Traits::DEFAULT
        },
    }
}

impl Node for AspectMask {
    fn footprint(p: &AspectMaskParams, cell_m: f64, n: usize) -> crate::node::Footprint {
        footprint_over(p.scale_m, ASPECT_AUTO_PARTS, cell_m, n, 2)
    }

    fn eval(
        ctx: &EvalCtx,
        inputs: AspectMaskIn,
        p: &AspectMaskParams,
    ) -> Result<AspectMaskOut, NodeError> {
        let (gx, gy) = gradient_over(ctx, inputs.r#in, p.scale_m, ASPECT_AUTO_PARTS);
        let dir = p.direction_deg as f32;
        let spread = p.spread_deg.max(1e-6) as f32;
        let min_t = libm::tan(p.min_slope_deg.to_radians()) as f32;
        Ok(AspectMaskOut {
            out: Field::zip_map(&gx, &gy, |a, b| {
                // Downhill is −∇h; y grows southwards, so north is −y. Bearing clockwise from north.
                let bearing = libm::atan2f(-a, b).to_degrees();
                let diff = ((bearing - dir).rem_euclid(360.0) + 180.0).rem_euclid(360.0) - 180.0;
                let facing = (1.0 - diff.abs() / spread).max(0.0);
                let steep = if min_t > 0.0 {
                    ((a * a + b * b).sqrt() / min_t).min(1.0)
                } else {
                    1.0
                };
                (facing * steep).clamp(0.0, 1.0)
            }),
        })
    }
}
