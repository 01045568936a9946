//! `snow`: snow cover by altitude, slope and aspect, settling in hollows.

use crate::field::blur::gaussian_at;
use crate::field::Field;
use crate::node::{unit, EvalCtx, Node, NodeError};
use crate::nodes::mask::terrain_masks::{
    gradient_in, gradient_over, measured_over, SLOPE_AUTO_PARTS,
};

crate::params! {
    pub struct SnowParams {
        /// Altitude where snow begins, in metres (on a flat, or a slope facing neither towards
        /// nor away from the sun).
        snow_line_m: f64 = float(1500.0, [-500.0, 8000.0], [-1.0e6, 1.0e6], "m") as "Snow line",
        /// Height above the snow line over which the cover builds up to its full depth, in
        /// metres (below it, the snow has melted away).
        fade_m: f64 = float(300.0, [1.0, 2000.0], [0.001, 1.0e6], "m") as "Melt band",
        /// Full snow depth, in metres.
        depth_m: f64 = float(1.5, [0.0, 20.0], [0.0, 1.0e4], "m") as "Depth",
        /// Snow slides off slopes this steep or steeper, in degrees.
        max_slope_deg: f64 = float(45.0, [5.0, 89.0], [0.0, 90.0], "°") as "Max slope",
        /// The cover thins over this many degrees below max_slope_deg.
        slope_fade_deg: f64 = float(10.0, [0.0, 45.0], [0.0, 90.0], "°") as "Slope fade",
        /// Where the sun comes from, in degrees clockwise from north (up the map): 180 is the
        /// midday sun of the northern hemisphere.
        sun_azimuth_deg: f64 = float(180.0, [0.0, 360.0], [-360.0, 720.0], "°") as "Sun azimuth",
        /// How far the snow line rises on a steep slope facing the sun (and falls on one facing
        /// away), in metres, scaled by the sine of the slope.
        aspect_m: f64 = float(200.0, [0.0, 1000.0], [0.0, 1.0e5], "m") as "Aspect shift",
        /// Radius over which hollows gather snow, in metres.
        hollow_radius_m: f64 = float(60.0, [0.0, 500.0], [0.0, 1.0e5], "m") as "Hollow radius",
        /// Extra snow per metre a cell lies below its surroundings (averaged over
        /// hollow_radius_m), in metres of snow; at most twice the full depth in all.
        hollow_gain: f64 = float(0.5, [0.0, 2.0], [0.0, 100.0], "") as "Hollow gain",
        /// The distance slope and aspect are measured over, in metres: the terrain is first
        /// smoothed by a Gaussian of σ = scale_m / 2. −1 (auto, the default): a 48th of the
        /// world's side, as slope_mask; 0 measures over the grid's own cells (crisper, but a
        /// finer build then resolves steep detail its preview cannot see).
        scale_m: f64 = float(-1.0, [-1.0, 500.0], [-1.0, 10_000_000.0], "m") as "Slope scale",
    }
}

crate::node! {
    /// Covers the terrain in snow above a snow line, shedding it from steep faces and gathering it
    /// in hollows.
    /// By altitude: none below the snow line, building up (smoothstep) over fade_m above it to
    /// depth_m. By aspect: the line rises by aspect_m · sin(slope) on slopes facing the sun
    /// (sun_azimuth_deg, clockwise from north) and falls as much on slopes facing away, so shaded
    /// faces hold snow lower. By slope: snow slides off slopes of max_slope_deg and more (none
    /// stays there) and only part of it stays over the slope_fade_deg below (smoothstep); what
    /// cannot stay slides down the steepest descent, cell by cell from the highest down, and
    /// settles where the ground lets it, up to twice depth_m per cell (the rest slides on; what
    /// slides below the snow line melts): avalanche cones at the foot of steep faces and filled
    /// gullies. Hollows gather snow: where snow falls, hollow_gain metres of snow per metre the
    /// cell lies below its surroundings' mean (a Gaussian over hollow_radius_m), up to twice
    /// depth_m of snowfall. Slopes come from the real cell size and every distance is in metres;
    /// slope and aspect are measured after smoothing the terrain over scale_m (a Gaussian of
    /// σ = scale_m / 2; by default a 48th of the world's side, five cells of a 256² preview), the
    /// same stretch of land at every resolution, so the preview's snow predicts the build's (with
    /// 0, a finer grid resolves steep detail, and sheds snow from it, that the preview cannot
    /// see).
    /// Outputs: out = terrain + snow, depth = snow depth ÷ depth_m (at most 1), mask = 1 where the
    /// snow is at least a tenth of depth_m deep (smoothstep from 0).
    pub struct Snow {
        id: "snow",
        label: "Snow",
        category: Water,
        version: 2,
        params: SnowParams,
        inputs: SnowIn {
            /// Terrain.
            r#in: height,
        },
        outputs: SnowOut {
            /// The terrain with its snow (m).
            out: height,
            /// Snow depth ÷ depth_m, in [0, 1].
            depth: mask,
            /// Snow cover: 1 where it lies at least a tenth of depth_m deep.
            mask: mask,
        },
    }
}

/// 3t² − 2t³ on t clamped to [0, 1].
fn smooth01(t: f64) -> f64 {
    let t = t.clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

/// The snow model's parameters in the units its formula uses.
struct Model {
    line: f64,
    fade: f64,
    depth: f64,
    max_tan_slope: f64,
    /// Slope angles (radians) where the thinning starts and ends.
    slope_band: (f64, f64),
    /// The sun's direction in (east, down the rows).
    sun: (f64, f64),
    aspect: f64,
    gain: f64,
}

impl Model {
    fn new(p: &SnowParams) -> Self {
        let max = p.max_slope_deg.to_radians();
        let az = p.sun_azimuth_deg.to_radians();
        Self {
            line: p.snow_line_m,
            fade: p.fade_m.max(1e-6),
            depth: p.depth_m,
            max_tan_slope: max.tan(),
            slope_band: ((max - p.slope_fade_deg.to_radians()).max(0.0), max),
            sun: (az.sin(), -az.cos()),
            aspect: p.aspect_m,
            gain: p.hollow_gain,
        }
    }

    /// Snowfall (m, before sliding) on a cell at altitude `z` with gradient `(gx, gy)` (m/m)
    /// lying `hollow` metres below its surroundings' mean; the share of it the slope lets stay
    /// (1 on gentle ground, 0 from max_slope_deg up); and the share of snow sliding in that
    /// survives the cell's altitude (0 below the snow line, 1 a melt band above it).
    fn fall(&self, z: f64, (gx, gy): (f64, f64), hollow: f64) -> (f64, f64, f64) {
        let tan = (gx * gx + gy * gy).sqrt();
        let slope = tan.atan();
        // Facing the sun: the downhill direction (−∇z) along the sun's, times sin(slope).
        let facing = if tan > 0.0 {
            -(gx * self.sun.0 + gy * self.sun.1) / tan * slope.sin()
        } else {
            0.0
        };
        let line = self.line + self.aspect * facing;
        let altitude = smooth01((z - line) / self.fade);
        let fall = if altitude <= 0.0 {
            0.0
        } else {
            (self.depth * altitude + self.gain * hollow.max(0.0)).min(2.0 * self.depth)
        };
        let (s0, s1) = self.slope_band;
        let stays = if tan >= self.max_tan_slope {
            0.0
        } else if s1 > s0 {
            1.0 - smooth01((slope - s0) / (s1 - s0))
        } else {
            1.0
        };
        (fall, stays, altitude)
    }

    /// The snow that stays where it falls (before any slides in from above).
    #[cfg(test)]
    fn depth(&self, z: f64, g: (f64, f64), hollow: f64) -> f64 {
        let (fall, stays, _) = self.fall(z, g, hollow);
        fall * stays
    }
}

/// Slides the snow that cannot stay downhill: cells are taken from the highest down (ties by
/// index); each keeps what its slope lets stay of what fell on it and slid into it, up to `cap`
/// metres, and passes the rest to its steepest lower neighbour, where the share `survives`
/// of that cell arrives (the rest melts: snow sliding below the snow line) — so snow shed by
/// steep faces comes to rest at their foot and fills the gullies below. A cell with no lower
/// neighbour keeps everything. Where all of it survives, the snow kept adds up to the snow
/// that fell.
fn slide(
    z: &[f32],
    (fall, stays, survives): (&[f64], &[f64], &[f64]),
    w: usize,
    h: usize,
    cap: f64,
) -> Vec<f64> {
    use crate::nodes::erosion::flow::order_key;
    let n = w * h;
    let mut order: Vec<u32> = (0..n as u32).collect();
    order.sort_unstable_by_key(|&i| (std::cmp::Reverse(order_key(z[i as usize])), i));
    let mut load = fall.to_vec();
    let mut kept = vec![0.0f64; n];
    for &i in &order {
        let i = i as usize;
        let l = load[i];
        if l <= 0.0 {
            continue;
        }
        match steepest(z, i, w, h) {
            Some(j) => {
                let keep = (l * stays[i]).min(cap);
                kept[i] = keep;
                load[j] += (l - keep) * survives[j];
            }
            None => kept[i] = l,
        }
    }
    kept
}

/// Where snow leaving cell `i` of a `w × h` window of heights `z` slides: its steepest lower
/// neighbour (drop over distance; the first in D8 order on a tie), if any.
fn steepest(z: &[f32], i: usize, w: usize, h: usize) -> Option<usize> {
    use crate::nodes::water::neighbours;
    let (x, y) = (i % w, i / w);
    neighbours(i, w, h)
        .filter(|&j| z[j] < z[i])
        .map(|j| {
            let diagonal = j % w != x && j / w != y;
            let d = if diagonal {
                std::f32::consts::SQRT_2
            } else {
                1.0
            };
            (j, (z[i] - z[j]) / d)
        })
        .fold(None, |best: Option<(usize, f32)>, c| match best {
            Some(b) if b.1 >= c.1 => Some(b),
            _ => Some(c),
        })
        .map(|(j, _)| j)
}

/// The snow sliding into each cell, pulled from the cells above it (`super::sweep`): the
/// model over a window (slope and hollows read with their margin) and the slides, in the order
/// [`slide`] takes the cells.
struct SnowRule<'a> {
    run: &'a super::TileRun<'a>,
    p: &'a SnowParams,
    model: Model,
    /// How far past a window the slope and hollow measures read.
    margin: usize,
    cap: f64,
}

/// What [`SnowRule`] reads over a window: heights, snowfall, the share that stays and the share
/// that survives, and where each cell's snow slides (`u32::MAX`: nowhere).
struct SnowData {
    e: crate::node::Window,
    z: Vec<f32>,
    fall: Vec<f64>,
    stays: Vec<f64>,
    survives: Vec<f64>,
    to: Vec<u32>,
}

impl super::sweep::Pull for SnowRule<'_> {
    type Data = SnowData;

    fn load(&self, e: crate::node::Window) -> Result<SnowData, String> {
        let cell = self.run.cell_m;
        let big = e.expand(self.margin, self.run.tiling.n);
        let (z, _) = (self.run.read)(big)?;
        let terrain = Field::from_vec(big.width, big.height, z).ok_or("field size")?;
        let origin = (big.x0, big.y0);
        let (gx, gy) = gradient_in(
            &terrain,
            cell,
            self.run.world.size_m,
            self.p.scale_m,
            SLOPE_AUTO_PARTS,
        );
        let around = gaussian_at(&terrain, self.p.hollow_radius_m / 2.0 / cell, origin);
        let cells = e.width * e.height;
        let mut d = SnowData {
            e,
            z: Vec::with_capacity(cells),
            fall: Vec::with_capacity(cells),
            stays: Vec::with_capacity(cells),
            survives: Vec::with_capacity(cells),
            to: Vec::with_capacity(cells),
        };
        for i in 0..cells {
            let (x, y) = (e.x0 + i % e.width, e.y0 + i / e.width);
            let b = (y - big.y0) * big.width + (x - big.x0);
            let z = terrain.data()[b];
            let g = (f64::from(gx.data()[b]), f64::from(gy.data()[b]));
            let hollow = f64::from(around.data()[b]) - f64::from(z);
            let (fall, stays, survives) = self.model.fall(f64::from(z), g, hollow);
            d.z.push(z);
            d.fall.push(fall);
            d.stays.push(stays);
            d.survives.push(survives);
        }
        d.to = (0..cells)
            .map(|i| steepest(&d.z, i, e.width, e.height).map_or(u32::MAX, |j| j as u32))
            .collect();
        Ok(d)
    }

    fn sends(&self, d: &SnowData, i: usize, j: usize) -> bool {
        d.to[i] == j as u32
    }

    /// What fell on `c` plus, from the highest sender down (ties by the map's index, as
    /// [`slide`] orders them), what each passes on and survives at `c`.
    fn pull(&self, d: &SnowData, c: usize, known: impl Fn(usize) -> f64) -> f64 {
        use crate::nodes::erosion::flow::order_key;
        use crate::nodes::water::neighbours;
        let (w, h, n) = (d.e.width, d.e.height, self.run.tiling.n);
        let global = |i: usize| (d.e.y0 + i / w) * n + d.e.x0 + i % w;
        let mut from = [(0u32, 0usize, 0usize); 8];
        let mut len = 0;
        for i in neighbours(c, w, h).filter(|&i| d.to[i] == c as u32) {
            from[len] = (order_key(d.z[i]), global(i), i);
            len += 1;
        }
        from[..len].sort_unstable_by_key(|&(key, g, _)| (std::cmp::Reverse(key), g));
        let mut load = d.fall[c];
        for &(_, _, i) in &from[..len] {
            let l = known(i);
            if l <= 0.0 {
                continue;
            }
            let keep = (l * d.stays[i]).min(self.cap);
            load += (l - keep) * d.survives[c];
        }
        load
    }
}

/// Scratch field: the snow each cell holds before it keeps its share (f64 bits).
const LOAD: &str = "snow-load";

/// `snow` run tile by tile (`super::tiled`): the slides swept over the tiles
/// (`super::sweep`), then each cell keeps what [`slide`] lets it — the very bits of the
/// whole-map run.
pub(super) fn tiled(
    run: &super::TileRun,
    emit: &mut dyn FnMut(usize, Vec<Field>) -> Result<(), String>,
) -> Result<(), String> {
    use super::sweep::Pull as _;
    use crate::field::blur::{support_px, support_sampled_px};
    use crate::node::Params as _;
    let p = SnowParams::from_values(run.values);
    let (t, cell) = (run.tiling, run.cell_m);
    let scale = measured_over(p.scale_m, run.world.size_m, SLOPE_AUTO_PARTS);
    let margin = support_px(p.hollow_radius_m / 2.0 / cell)
        .max(support_sampled_px(scale / 2.0 / cell) + 2)
        + 1;
    let rule = SnowRule {
        run,
        p: &p,
        model: Model::new(&p),
        margin,
        cap: 2.0 * p.depth_m,
    };
    super::sweep::sweep(t, run.scratch, LOAD, &rule, &|| run.check())?;
    let full = p.depth_m.max(1e-9);
    for k in 0..t.count() {
        run.check()?;
        let win = t.window(k);
        let d = rule.load(win.expand(1, t.n))?;
        let load: Vec<u64> = run.scratch.get(t, k, LOAD)?;
        let (mut out, mut relative, mut mask) = (Vec::new(), Vec::new(), Vec::new());
        for (i, &bits) in load.iter().enumerate() {
            let (x, y) = (win.x0 + i % win.width, win.y0 + i / win.width);
            let c = (y - d.e.y0) * d.e.width + (x - d.e.x0);
            let l = f64::from_bits(bits);
            let kept = if l <= 0.0 {
                0.0
            } else if d.to[c] == u32::MAX {
                l
            } else {
                (l * d.stays[c]).min(rule.cap)
            };
            out.push((f64::from(d.z[c]) + kept) as f32);
            relative.push(unit((kept / full) as f32));
            mask.push(smooth01(kept / (0.1 * full)) as f32);
        }
        let field = |v: Vec<f32>| {
            Field::from_vec(win.width, win.height, v).ok_or_else(|| "field size".to_owned())
        };
        emit(k, vec![field(out)?, field(relative)?, field(mask)?])?;
    }
    run.scratch.remove(t, LOAD);
    Ok(())
}

impl Node for Snow {
    /// The gradient (2), the smoothed terrain (1), snowfall, shares, load and depth (f64: 8)
    /// and the order (1), besides the outputs.
    const SCRATCH_FIELDS: u32 = 12;

    fn eval(ctx: &EvalCtx, inputs: SnowIn, p: &SnowParams) -> Result<SnowOut, NodeError> {
        let src = inputs.r#in;
        let cell = ctx.cell_size_m();
        let model = Model::new(p);
        let (gx, gy) = gradient_over(ctx, src, p.scale_m, SLOPE_AUTO_PARTS);
        let around = gaussian_at(src, p.hollow_radius_m / 2.0 / cell, ctx.origin());
        ctx.check_cancel()?;
        let n = src.data().len();
        let (mut fall, mut stays, mut survives) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
        for i in 0..n {
            let z = f64::from(src.data()[i]);
            let g = (f64::from(gx.data()[i]), f64::from(gy.data()[i]));
            (fall[i], stays[i], survives[i]) = model.fall(z, g, f64::from(around.data()[i]) - z);
        }
        let (w, h) = (src.width(), src.height());
        let depth = slide(
            src.data(),
            (&fall, &stays, &survives),
            w,
            h,
            2.0 * p.depth_m,
        );
        ctx.check_cancel()?;
        let size = || NodeError::Failed("internal error: field size".into());
        let full = p.depth_m.max(1e-9);
        let out = src
            .data()
            .iter()
            .zip(&depth)
            .map(|(&z, &d)| (f64::from(z) + d) as f32)
            .collect();
        let relative = depth.iter().map(|&d| unit((d / full) as f32)).collect();
        let mask = depth
            .iter()
            .map(|&d| smooth01(d / (0.1 * full)) as f32)
            .collect();
        Ok(SnowOut {
            out: Field::from_vec(w, h, out).ok_or_else(size)?,
            depth: Field::from_vec(w, h, relative).ok_or_else(size)?,
            mask: Field::from_vec(w, h, mask).ok_or_else(size)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model() -> Model {
        Model::new(&SnowParams {
            snow_line_m: 1000.0,
            fade_m: 200.0,
            depth_m: 2.0,
            max_slope_deg: 40.0,
            slope_fade_deg: 10.0,
            sun_azimuth_deg: 180.0,
            aspect_m: 300.0,
            hollow_radius_m: 50.0,
            hollow_gain: 0.5,
            scale_m: 0.0,
        })
    }

    /// Depth ≥ 0 everywhere; zero at and above the slope limit; at a fixed altitude and an
    /// aspect across the sun (east-facing, sun in the south), never deeper on a steeper slope;
    /// deeper higher up; deeper on a shaded (north-facing) slope than on a sunny one.
    #[test]
    fn depth_by_altitude_slope_and_aspect() {
        let m = model();
        for z in (800..2000).step_by(25) {
            let z = f64::from(z);
            let mut last = f64::INFINITY;
            for deg in 0..90 {
                let tan = f64::from(deg).to_radians().tan();
                // East-facing: downhill towards +x, so ∂z/∂x < 0.
                let d = m.depth(z, (-tan, 0.0), 0.0);
                assert!(d >= 0.0);
                if deg >= 40 {
                    assert_eq!(d, 0.0, "{deg}° at {z} m");
                }
                assert!(
                    d <= last + 1e-12,
                    "deeper on a steeper slope: {deg}° at {z} m"
                );
                last = d;
            }
        }
        assert!(m.depth(1300.0, (0.0, 0.0), 0.0) > m.depth(1100.0, (0.0, 0.0), 0.0));
        assert_eq!(m.depth(999.0, (0.0, 0.0), 0.0), 0.0);
        assert_eq!(m.depth(1250.0, (0.0, 0.0), 0.0), 2.0);
        // North-facing (downhill towards −y, so ∂z/∂y > 0) against south-facing, 25°.
        let t = 25f64.to_radians().tan();
        assert!(m.depth(1100.0, (0.0, t), 0.0) > m.depth(1100.0, (0.0, -t), 0.0));
        // Hollows gather snow, up to twice the depth.
        assert!(m.depth(1100.0, (0.0, 0.0), 2.0) > m.depth(1100.0, (0.0, 0.0), 0.0));
        assert_eq!(m.depth(1300.0, (0.0, 0.0), 100.0), 4.0);
    }

    /// Sliding conserves snow (what is kept adds up to what fell), leaves nothing on cells
    /// whose slope lets none stay, keeps at most the cap where snow can move on, and piles
    /// what a steep face sheds at its foot.
    #[test]
    fn sliding_conserves_snow_and_piles_it_below_steep_faces() {
        let (w, h) = (40, 30);
        let z: Vec<f32> = (0..w * h)
            .map(|i| (crate::node::splitmix64(i as u64) % 1000) as f32 * 0.1 + (i % w) as f32)
            .collect();
        let fall: Vec<f64> = (0..w * h).map(|i| 0.5 + (i % 7) as f64 * 0.1).collect();
        let stays: Vec<f64> = (0..w * h).map(|i| [0.0, 0.3, 1.0][i % 3]).collect();
        let all = vec![1.0; w * h];
        let kept = slide(&z, (&fall, &stays, &all), w, h, 1.5);
        let (a, b): (f64, f64) = (kept.iter().sum(), fall.iter().sum());
        assert!((a - b).abs() <= 1e-9 * b, "kept {a}, fell {b}");
        for i in 0..w * h {
            let lower = crate::nodes::water::neighbours(i, w, h).any(|j| z[j] < z[i]);
            assert!(kept[i] >= 0.0);
            if lower {
                assert!(kept[i] <= 1.5 + 1e-12);
                if stays[i] == 0.0 {
                    assert_eq!(kept[i], 0.0, "cell {i}");
                }
            }
        }
        // A face too steep to hold snow above a flat floor: its snow rests on the floor.
        let (w, h) = (20, 5);
        let z: Vec<f32> = (0..w * h)
            .map(|i| {
                if i % w < 10 {
                    100.0 - 10.0 * (i % w) as f32
                } else {
                    0.0
                }
            })
            .collect();
        let fall = vec![1.0; w * h];
        let stays: Vec<f64> = (0..w * h)
            .map(|i| if i % w < 10 { 0.0 } else { 1.0 })
            .collect();
        let all = vec![1.0; w * h];
        let kept = slide(&z, (&fall, &stays, &all), w, h, 4.0);
        let foot = 2 * w + 10;
        assert!(
            kept[foot] > 1.0,
            "the foot gets more than its own snowfall: {}",
            kept[foot]
        );
        assert!((0..10).all(|x| kept[2 * w + x] == 0.0));
        // Below the snow line the sliding snow melts: a floor where none survives keeps only
        // its own snowfall.
        let melt: Vec<f64> = (0..w * h)
            .map(|i| if i % w < 10 { 1.0 } else { 0.0 })
            .collect();
        let kept = slide(&z, (&fall, &stays, &melt), w, h, 4.0);
        assert_eq!(kept[foot], 1.0);
    }
}
