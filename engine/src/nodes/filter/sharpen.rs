//! `sharpen`: unsharp masking — add back the detail a blur removes.

use crate::field::blur::gaussian_at;
use crate::field::Field;
use crate::node::{EvalCtx, Node, NodeError};

crate::params! {
    pub struct SharpenParams {
        /// Radius of the blur that defines "detail", in metres (2σ).
        radius_m: f64 = float(50.0, [1.0, 500.0], [0.0, 10_000_000.0], "m"),
        /// How much detail to add: out = h + amount·(h − blur(h)).
        amount: f64 = float(1.0, [0.0, 3.0], [0.0, 100.0], ""),
    }
}

crate::node! {
    /// Crisps up the terrain, exaggerating the bumps and edges finer than the radius.
    /// Unsharp masking: out = h + amount·(h − blur(h)), with the blur of the `blur` node (σ =
    /// radius_m / 2). Preserves the mean height.
    pub struct Sharpen {
        id: "sharpen",
        label: "Sharpen",
        category: Filter,
        version: 1,
        params: SharpenParams,
        inputs: SharpenIn {
            /// Terrain to sharpen.
            r#in: height,
        },
        outputs: SharpenOut {
            /// Sharpened terrain.
            out: height,
        },
    }
}

impl Node for Sharpen {
    fn footprint(p: &SharpenParams, cell_m: f64, _n: usize) -> crate::node::Footprint {
        crate::node::Footprint::Stencil(crate::field::blur::support_px(p.radius_m / 2.0 / cell_m))
    }

    fn eval(ctx: &EvalCtx, inputs: SharpenIn, p: &SharpenParams) -> Result<SharpenOut, NodeError> {
        let h = inputs.r#in;
        let b = gaussian_at(h, p.radius_m / 2.0 / ctx.cell_size_m(), ctx.origin());
        let k = p.amount as f32;
        Ok(SharpenOut {
            out: Field::zip_map(h, &b, |v, s| v + k * (v - s)),
        })
    }
}
