//! `laplacian_smooth`: diffusion smoothing by repeated neighbour averaging.

use crate::field::Field;
use crate::node::{EvalCtx, Node, NodeError};
use rayon::prelude::*;

crate::params! {
    pub struct SmoothParams {
        /// Diffusion length in metres: the spread (σ) of the equivalent Gaussian.
        distance_m: f64 = float(20.0, [1.0, 200.0], [0.0, 10_000_000.0], "m"),
    }
}

crate::node! {
    /// Gently smooths the terrain, rounding off small bumps and sharp edges.
    /// Repeats h ← h + ½·(mean of the 4 neighbours − h) (explicit diffusion, mirrored borders, mean
    /// preserved). Each pass spreads heights by σ² = cell²/4 per axis, so the pass count is
    /// (2·distance_m / cell)², making the result the same at every resolution — up to 2000 passes,
    /// beyond which the distance is clamped (use `blur` for large radii).
    pub struct LaplacianSmooth {
        id: "laplacian_smooth",
        label: "Laplacian smooth",
        category: Filter,
        version: 1,
        params: SmoothParams,
        inputs: LaplacianSmoothIn {
            /// Terrain to smooth.
            r#in: height,
        },
        outputs: LaplacianSmoothOut {
            /// Smoothed terrain.
            out: height,
        },
    }
}

/// Most iterations one evaluation runs (longer distances are clamped, see the doc).
pub const MAX_ITERATIONS: usize = 2000;

impl Node for LaplacianSmooth {
    fn footprint(p: &SmoothParams, cell_m: f64, _n: usize) -> crate::node::Footprint {
        crate::node::Footprint::Stencil(
            ((2.0 * p.distance_m / cell_m).powi(2).round() as usize).min(MAX_ITERATIONS),
        )
    }

    fn eval(
        ctx: &EvalCtx,
        inputs: LaplacianSmoothIn,
        p: &SmoothParams,
    ) -> Result<LaplacianSmoothOut, NodeError> {
        let mut cur = inputs.r#in.clone();
        let passes =
            ((2.0 * p.distance_m / ctx.cell_size_m()).powi(2).round() as usize).min(MAX_ITERATIONS);
        let (w, h) = (cur.width(), cur.height());
        let mut next = Field::filled(w, h, 0.0);
        for i in 0..passes {
            ctx.check_cancel()?;
            {
                let src = &cur;
                next.rows_mut().for_each(|(y, row)| {
                    for (x, v) in row.iter_mut().enumerate() {
                        let (xi, yi) = (x as isize, y as isize);
                        let c = src.get_clamped(xi, yi);
                        let s = src.get_clamped(xi - 1, yi)
                            + src.get_clamped(xi + 1, yi)
                            + src.get_clamped(xi, yi - 1)
                            + src.get_clamped(xi, yi + 1);
                        *v = c + 0.5 * (0.25 * s - c);
                    }
                });
            }
            std::mem::swap(&mut cur, &mut next);
            ctx.report((i + 1) as f32 / passes as f32);
        }
        Ok(LaplacianSmoothOut { out: cur })
    }
}
