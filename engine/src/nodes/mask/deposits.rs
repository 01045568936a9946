//! What erosion leaves lying on the terrain: the depth of the material it moved (soil,
//! sediment) and the scree slopes where loose rock rests at its angle of repose.

use super::terrain_masks::{band, slope_over, SLOPE_AUTO_PARTS};
use crate::field::Field;
use crate::node::{unit, EvalCtx, Node, NodeError};

crate::params! {
    pub struct SedimentDepthParams {
        /// Depth of deposited material that reads 1 (full), in metres: the mask is depth ÷ this, clamped to [0, 1].
        full_depth_m: f64 = float(5.0, [0.1, 100.0], [0.0001, 100_000.0], "m") as "Full depth",
    }
}

crate::node! {
    /// Masks where erosion laid down sediment or wore the ground away, by the depth in metres.
    /// The depth of material an erosion node (or any edit) laid down or took away, in metres, as
    /// masks: depth = max(after − before, 0), worn = max(before − after, 0), each divided by
    /// full_depth_m and clamped to [0, 1]. Wire the erosion node's input into `before` and its
    /// output into `after`: the deposits of thermal erosion are its scree, those of the hydraulic
    /// nodes their sediment fans and valley fill. Unlike an erosion node's own deposition and
    /// erosion outputs (relative to the largest change in view, so their scale depends on the map),
    /// these are absolute depths in metres: the same at every resolution and in every tile of a
    /// tiled build.
    pub struct SedimentDepth {
        id: "sediment_depth",
        label: "Soil / sediment depth",
        category: Mask,
        version: 1,
        params: SedimentDepthParams,
        inputs: SedimentDepthIn {
            /// Terrain before erosion.
            before: height,
            /// Terrain after erosion.
            after: height,
        },
        outputs: SedimentDepthOut {
            /// Deposited depth ÷ full_depth_m, in [0, 1].
            depth: mask,
            /// Removed depth ÷ full_depth_m, in [0, 1].
            worn: mask,
        },
        traits: crate::node::Traits {
            parity: crate::node::Parity::Within(0.015),
            ..crate::node::Traits::DEFAULT
        },
    }
}

impl Node for SedimentDepth {
    fn eval(
        _ctx: &EvalCtx,
        inputs: SedimentDepthIn,
        p: &SedimentDepthParams,
    ) -> Result<SedimentDepthOut, NodeError> {
        let inv = (1.0 / p.full_depth_m) as f32;
        let (before, after) = (inputs.before, inputs.after);
        Ok(SedimentDepthOut {
            depth: Field::zip_map(before, after, |b, a| unit((a - b) * inv)),
            worn: Field::zip_map(before, after, |b, a| unit((b - a) * inv)),
        })
    }
}

crate::params! {
    pub struct TalusMaskParams {
        /// Angle of repose of the loose rock, in degrees (thermal erosion's talus angle: use the same value).
        talus_deg: f64 = float(35.0, [10.0, 60.0], [0.0, 89.0], "°") as "Talus angle",
        /// How far below the talus angle a slope still reads as scree, in degrees (the foot of a scree slope flattens out).
        below_deg: f64 = float(12.0, [0.0, 45.0], [0.0, 89.0], "°") as "Range below",
        /// How far above the talus angle a slope still reads as scree, in degrees (steeper is bare rock).
        above_deg: f64 = float(3.0, [0.0, 30.0], [0.0, 89.0], "°") as "Range above",
        /// Width of the fade at both ends of the range, in degrees.
        falloff_deg: f64 = float(4.0, [0.0, 20.0], [0.0, 89.0], "°"),
        /// Distance the slope is measured over, in metres: the terrain is smoothed over about this distance first (0 = the grid's own cells). At least the preview's cell size lets the preview predict the build; smaller reads finer scree at finer resolutions.
        scale_m: f64 = float(30.0, [0.0, 200.0], [0.0, 10_000_000.0], "m") as "Scale",
    }
}

crate::node! {
    /// Marks scree: loose rock lying at its angle of repose, as thermal erosion leaves it.
    /// The mask is 1 where the slope lies in [talus_deg − below_deg, talus_deg + above_deg], fading
    /// over falloff_deg (smoothstep) — the slopes thermal erosion (Olsen 2004) relaxes material to
    /// — times the `deposit` mask when it is wired (e.g. sediment_depth's depth between a thermal
    /// erosion node's input and output: scree is where material came to rest, not bare rock that
    /// happens to have the angle). Slopes are measured in metres over the real cell size after
    /// smoothing the terrain over scale_m (a Gaussian of σ = scale_m / 2, as curvature_mask), so
    /// the angle reads the same at every resolution; with scale_m below the preview's cell size a
    /// finer build resolves steeper detail than the preview, as slope_mask does.
    pub struct TalusMask {
        id: "talus_mask",
        label: "Talus / scree",
        category: Mask,
        version: 2,
        params: TalusMaskParams,
        inputs: TalusMaskIn {
            /// Terrain to measure.
            r#in: height,
            /// Where material was deposited (1 = fully); every slope in the range when not connected.
            deposit: mask (optional),
        },
        outputs: TalusMaskOut {
            /// Scree, in [0, 1].
            out: mask,
        },
    }
}

impl Node for TalusMask {
    fn footprint(p: &TalusMaskParams, cell_m: f64, n: usize) -> crate::node::Footprint {
        super::terrain_masks::footprint_over(p.scale_m, SLOPE_AUTO_PARTS, cell_m, n, 2)
    }

    fn eval(
        ctx: &EvalCtx,
        inputs: TalusMaskIn,
        p: &TalusMaskParams,
    ) -> Result<TalusMaskOut, NodeError> {
        let s = slope_over(ctx, inputs.r#in, p.scale_m);
        let lo = (p.talus_deg - p.below_deg) as f32;
        let hi = (p.talus_deg + p.above_deg) as f32;
        let f = p.falloff_deg as f32;
        let range = s.map(|v| band(v, lo, hi, f));
        let out = match inputs.deposit {
            Some(d) => Field::zip_map(&range, d, |r, d| unit(r * d)),
            None => range,
        };
        Ok(TalusMaskOut { out })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::field::World;
    use crate::node::{CancelToken, ParamValue, Registry, Window};
    use std::sync::Arc;

    fn world() -> World {
        World {
            size_m: 640.0,
            height_min_m: 0.0,
            height_max_m: 500.0,
        }
    }

    /// Runs node type `id` on `inputs` with `params` over the defaults; outputs in port order.
    fn run(id: &str, inputs: &[Option<&Field>], params: &[(&str, f64)]) -> Vec<Field> {
        let def = Registry::builtin().get(id).expect("node type");
        let mut values = def.default_values();
        for &(name, v) in params {
            values[def.param_index(name).expect("param")] = ParamValue::Float(v);
        }
        let inputs: Vec<Option<Arc<Field>>> = inputs
            .iter()
            .map(|f| f.map(|f| Arc::new(f.clone())))
            .collect();
        let n = inputs[0].as_ref().map_or(1, |f| f.width());
        let cancel = CancelToken::new();
        let progress = |_: f32| {};
        let ctx = EvalCtx {
            resolution: n,
            window: Window::full(n),
            world: world(),
            graph_seed: 1,
            node_id: "test",
            base_dir: None,
            allow_outside: &[],
            cancel: &cancel,
            progress: &progress,
            upstream: None,
            arrays: None,
        };
        def.eval(&ctx, &inputs, &values).expect("eval")
    }

    /// A plane rising `tan(deg)` metres per metre eastwards, `n²` cells over 640 m.
    fn ramp(n: usize, deg: f64) -> Field {
        let cell = 640.0 / n as f64;
        let rise = libm::tan(deg.to_radians());
        let data = (0..n * n)
            .map(|i| (100.0 + (i % n) as f64 * cell * rise) as f32)
            .collect();
        Field::from_vec(n, n, data).expect("size")
    }

    #[test]
    fn sediment_depth_is_the_change_in_metres_over_the_full_depth() {
        let before = Field::from_vec(2, 2, vec![10.0, 10.0, 10.0, 10.0]).expect("size");
        let after = Field::from_vec(2, 2, vec![12.0, 30.0, 9.0, 10.0]).expect("size");
        let out = run(
            "sediment_depth",
            &[Some(&before), Some(&after)],
            &[("full_depth_m", 4.0)],
        );
        assert_eq!(out[0].data(), &[0.5, 1.0, 0.0, 0.0]);
        assert_eq!(out[1].data(), &[0.0, 0.0, 0.25, 0.0]);
    }

    /// On planes: 1 at the talus angle and within the range below it, 0 on gentle ground and
    /// on cliffs, the same at two resolutions; a deposit mask multiplies it.
    #[test]
    fn talus_mask_selects_the_angle_of_repose_at_every_resolution() {
        for n in [64, 256] {
            let at = |deg: f64, deposit: Option<&Field>| {
                let z = ramp(n, deg);
                let out = run("talus_mask", &[Some(&z), deposit], &[]);
                // An interior cell (the smoothing leans on the map edge).
                out[0].data()[n / 2 * n + n / 2]
            };
            assert!(
                (at(35.0, None) - 1.0).abs() < 1e-4,
                "{n}²: at the talus angle"
            );
            assert!(
                (at(28.0, None) - 1.0).abs() < 1e-4,
                "{n}²: within range_below"
            );
            assert_eq!(at(10.0, None), 0.0, "{n}²: gentle ground is not scree");
            assert_eq!(at(55.0, None), 0.0, "{n}²: cliffs are not scree");
            let half = Field::from_vec(n, n, vec![0.5; n * n]).expect("size");
            assert!(
                (at(35.0, Some(&half)) - 0.5).abs() < 1e-4,
                "{n}²: times the deposit"
            );
        }
    }

    /// slope_mask over a scale: a plane reads its angle whatever the scale and resolution
    /// (the smoothing leaves a plane a plane away from the map edge).
    #[test]
    fn slope_mask_over_a_scale_reads_a_plane_at_every_resolution() {
        for n in [64, 256] {
            for scale in [0.0, 40.0, 100.0] {
                let at = |deg: f64| {
                    let params = [("min_deg", 30.0), ("falloff_deg", 4.0), ("scale_m", scale)];
                    let out = run("slope_mask", &[Some(&ramp(n, deg))], &params);
                    out[0].data()[n / 2 * n + n / 2]
                };
                assert!((at(40.0) - 1.0).abs() < 1e-4, "{n}², scale {scale}: 40°");
                assert_eq!(at(20.0), 0.0, "{n}², scale {scale}: 20°");
            }
        }
    }
}
