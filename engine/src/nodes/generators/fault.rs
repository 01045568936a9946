//! `fault_formation`: terrain from many random straight faults, each lifting one side.

use super::noise::lattice::octave_seed;
use super::noise::{hash2, unit_f32};
use super::noise_node::to_heights;
use crate::node::{EvalCtx, Node, NodeError};
use rayon::prelude::*;

crate::params! {
    pub struct FaultParams {
        /// Seed of this node, combined with the graph seed.
        seed: u32 = seed(0),
        /// Number of faults.
        iterations: u32 = int(200, [10, 1000], [1, 10_000], ""),
        /// Each fault's displacement is the previous one's times this (1 = all equal).
        decay: f64 = float(0.99, [0.9, 1.0], [0.5, 1.0], ""),
        /// Width of the transition across a fault, in metres (0 = a sharp step).
        softness_m: f64 = float(20.0, [0.0, 500.0], [0.0, 1_000_000.0], "m"),
        /// Half the peak-to-trough amplitude, as a fraction of the graph's height range.
        amplitude: f64 = float(0.5, [0.0, 1.0], [0.0, 100.0], ""),
        /// Mean height, as a fraction of the graph's height range.
        base: f64 = float(0.5, [0.0, 1.0], [-100.0, 100.0], ""),
    }
}

crate::node! {
    /// Terrain built from many random straight faults, each raising the land on one side and
    /// lowering the other.
    /// Fault formation: for i = 0 … iterations−1 a random line through the world (seeded point and
    /// direction) raises one side by d_i and lowers the other by d_i, with d_i = decay^i and a
    /// linear transition softness_m wide. The sum is divided by 3·sqrt(Σ d_i²) (a random walk's
    /// spread) to about [−1, 1]. Lines are in world metres, so every resolution shows the same
    /// faults.
    pub struct FaultFormation {
        id: "fault_formation",
        label: "Fault formation",
        category: Generator,
        version: 1,
        params: FaultParams,
        inputs: FaultFormationIn {
        },
        outputs: FaultFormationOut {
            /// Heights in metres.
            out: height,
        },
    }
}

impl Node for FaultFormation {
    fn eval(
        ctx: &EvalCtx,
        _: FaultFormationIn,
        p: &FaultParams,
    ) -> Result<FaultFormationOut, NodeError> {
        let seed = ctx.rng_seed(p.seed);
        let size = ctx.world.size_m;
        // Each fault: unit normal (c, s), offset o = (c, s)·point, displacement d.
        let faults: Vec<(f64, f64, f64, f32)> = (0..p.iterations)
            .map(|i| {
                let h = octave_seed(seed, i);
                let px = (f64::from(unit_f32(hash2(h, 1, 0))) * 0.5 + 0.5) * size;
                let py = (f64::from(unit_f32(hash2(h, 2, 0))) * 0.5 + 0.5) * size;
                let angle = f64::from(unit_f32(hash2(h, 3, 0))) * std::f64::consts::PI;
                let (s, c) = libm::sincos(angle);
                (c, s, c * px + s * py, p.decay.powi(i as i32) as f32)
            })
            .collect();
        let norm: f32 = 3.0 * faults.iter().map(|f| f.3 * f.3).sum::<f32>().sqrt();
        let inv_soft = if p.softness_m > 0.0 {
            1.0 / p.softness_m
        } else {
            1.0e12
        };
        let (xs, ys) = (ctx.xs_m(), ctx.ys_m());
        let mut field = ctx.new_field(0.0);
        field.rows_mut().try_for_each(|(y, row)| {
            ctx.check_cancel()?;
            let ym = ys[y];
            for &(c, s, o, d) in &faults {
                let k = (c * inv_soft) as f32;
                let b = ((s * ym - o) * inv_soft) as f32;
                for (v, &xm) in row.iter_mut().zip(&xs) {
                    *v += d * (k * xm as f32 + b).clamp(-1.0, 1.0);
                }
            }
            for v in row.iter_mut() {
                *v /= norm;
            }
            Ok(())
        })?;
        Ok(FaultFormationOut {
            out: to_heights(ctx, field, p.amplitude, p.base),
        })
    }
}
