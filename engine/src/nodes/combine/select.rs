//! `select`: a where a control terrain is low (or flat), b where it is high (or steep).

use crate::field::derive::slope_deg;
use crate::field::Field;
use crate::node::{EvalCtx, Node, NodeError};
use crate::nodes::mask::terrain_masks::step;

crate::choice_enum! {
    /// What the threshold applies to.
    pub enum Criterion { Height = "height", Slope = "slope" }
}

crate::params! {
    pub struct SelectParams {
        /// Select by the control terrain's height or its slope.
        criterion: Criterion = choice(Criterion::Height),
        /// Height criterion: threshold as a fraction of the graph's height range.
        threshold: f64 = float(0.5, [0.0, 1.0], [-100.0, 100.0], "") as "Height threshold" if criterion in ["height"],
        /// Slope criterion: threshold in degrees.
        threshold_deg: f64 = float(30.0, [0.0, 90.0], [0.0, 90.0], "°") as "Slope threshold" if criterion in ["slope"],
        /// Width of the transition: fraction of the height range (height) or degrees (slope).
        falloff: f64 = float(0.05, [0.0, 0.5], [0.0, 100.0], ""),
        /// Slope criterion: distance the slope is measured over, in metres (the control is
        /// smoothed over about this distance first, as in slope_mask). −1 (auto, the default): a
        /// 48th of the world's side, so the preview predicts the build; 0: the grid's own cells.
        scale_m: f64 = float(-1.0, [-1.0, 500.0], [-1.0, 10_000_000.0], "m") as "Slope scale" if criterion in ["slope"],
    }
}

crate::node! {
    /// Takes one terrain where a control is low or gentle, and another where it is high or steep.
    /// Chooses b where the control terrain is above the threshold (height as a fraction of the
    /// height range, or slope in degrees computed with the real cell size, measured over scale_m
    /// metres, by default a 48th of the world's side, or over the grid's own cells at 0) and a
    /// below it, with a smoothstep transition `falloff` wide
    /// centred on the threshold. The control defaults to a.
    pub struct Select {
        id: "select",
        label: "Select",
        category: Combine,
        version: 2,
        params: SelectParams,
        inputs: SelectIn {
            /// Terrain below the threshold.
            a: height,
            /// Terrain above the threshold.
            b: height,
            /// Terrain the threshold is tested on (default: a).
            control: height (optional),
        },
        outputs: SelectOut {
            /// The selection, in metres.
            out: height,
        },
    }
}

impl Node for Select {
    fn footprint(p: &SelectParams, cell_m: f64, n: usize) -> crate::node::Footprint {
        match p.criterion {
            Criterion::Slope if p.scale_m != 0.0 => {
                crate::nodes::mask::terrain_masks::footprint_over(
                    p.scale_m,
                    crate::nodes::mask::terrain_masks::SLOPE_AUTO_PARTS,
                    cell_m,
                    n,
                    2,
                )
            }
            _ => crate::node::Footprint::Stencil(1),
        }
    }

    fn eval(ctx: &EvalCtx, inputs: SelectIn, p: &SelectParams) -> Result<SelectOut, NodeError> {
        let a = inputs.a;
        let b = inputs.b;
        let control = inputs.control.unwrap_or(a);
        let (value, t, w) = match p.criterion {
            Criterion::Height => (
                control.clone(),
                ctx.world.relative_to_m(p.threshold) as f32,
                (p.falloff * ctx.world.height_span_m()) as f32,
            ),
            Criterion::Slope if p.scale_m != 0.0 => (
                crate::nodes::mask::terrain_masks::slope_over(ctx, control, p.scale_m),
                p.threshold_deg as f32,
                p.falloff as f32,
            ),
            Criterion::Slope => (
                slope_deg(control, ctx.cell_size_m()),
                p.threshold_deg as f32,
                p.falloff as f32,
            ),
        };
        let mask = value.map(|v| step(v, t, w));
        Ok(SelectOut {
            out: Field::zip3_map(a, b, &mask, super::lerp::lerp),
        })
    }
}
