//! Coarse-to-fine evaluation: how every erosion node gives the same terrain at every
//! resolution.
//!
//! An erosion process run on a grid depends on the grid: water and material move a cell per
//! iteration, drainage areas are counted in cells, slopes are measured over a cell. The same
//! node with the same parameters therefore erodes differently at 256² and at 4096². Here the
//! node runs its process **in full at one base resolution** (`base_resolution`, 256 by
//! default, the same whatever is being built), and a finer build **adds detail** level by
//! level:
//!
//! 1. `z₀` = the input evaluated at the base resolution (the graph upstream at that size:
//!    exactly what a preview there sees); `e₀` = the node on `z₀`; the change `Δ₀ = e₀ − z₀`.
//! 2. At each finer level (the base × 2, × 4, … and finally the target size; or, for a node
//!    whose refinement is local ([`Schedule::Direct`]: droplets), the target size alone): the input
//!    (the build's, averaged down to an intermediate level's grid) plus the previous level's change upsampled (bilinear; cubic across a
//!    jump of 4× or more, which has no crease along the coarse cells) is the terrain the coarser
//!    levels made, with the input's own finer detail; the node runs on it
//!    again with its *refinement* work (a fraction of its iterations, steps or droplets), and
//!    of what that run changes only the part finer than the previous level's cells is kept:
//!    its drift — how far the change averaged over the previous level's cells has moved from
//!    that level's change — is upsampled and taken out again. The coarse levels' change is
//!    not moved, only sharpened, and a node that changes nothing changes nothing.
//! 3. A target coarser than the base gets the base's change averaged down.
//!
//! So a 256² preview *is* the first level of every build; larger scales agree by construction,
//! and what differs between resolutions is the detail below the coarser grid's cells.
//! `detail = native` runs the node once at the target resolution instead (the published
//! algorithm literally, resolution-dependent).
//!
//! Outputs other than the height: change masks (wear, deposition) are recomputed from the
//! final height; state outputs (water, flow, drainage, rivers) come from the last level's run.

use super::change_masks;
use crate::field::Field;
use crate::node::{EvalCtx, InputPorts, Inputs, Node, NodeError, OutputPorts};
use std::sync::Arc;

crate::choice_enum! {
    /// How an erosion node meets the resolution it is evaluated at.
    pub enum Detail { Consistent = "consistent", Native = "native" }
}

/// An erosion node's parameters ([`params!`](crate::params!)): the node's own fields, each
/// ending with a comma, then the two every coarse-to-fine node shares, declared here once —
/// `detail` ([`Detail`]) and `base_resolution` (256 by default). The node says only what
/// differs: `native:` what its literal algorithm does at the resolution being built and why
/// that depends on the resolution, `finer:` how a finer build refines from the base.
macro_rules! erosion_params {
    (
        $(#[$meta:meta])*
        pub struct $name:ident { $($fields:tt)* }
        native: $native:literal,
        finer: $finer:literal $(,)?
    ) => {
        $crate::params! {
            $(#[$meta])*
            pub struct $name {
                $($fields)*
                #[doc = concat!(
                    "consistent: the same terrain at every resolution — the process runs in full ",
                    "at base_resolution and a finer build only adds detail below that grid's ",
                    "cells (a preview at the base resolution is a build's first level). native: ",
                    $native
                )]
                detail: $crate::nodes::erosion::levels::Detail =
                    choice($crate::nodes::erosion::levels::Detail::Consistent)
                    as "Resolution handling",
                #[doc = concat!(
                    "Samples per side of the grid the process runs on in full (consistent ",
                    "only). ",
                    $finer
                )]
                base_resolution: u32 = int(256, [64, 1024], [16, 8192], "")
                    if detail in ["consistent"],
            }
        }
    };
}
pub(crate) use erosion_params;

/// How a node's outputs after the first (the height) are made at the target resolution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Extra {
    /// `change_masks(input, output).0`: where the terrain went down.
    Wear,
    /// `change_masks(input, output).1`: where it went up.
    Deposit,
    /// A state of the process (water, flow, drainage, rivers): from the last level's run.
    State,
}

/// Which grids a consistent run refines through (see [`levels`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Schedule {
    /// The base, then doublings, then the target: each level adds the band just below the
    /// previous level's cells (processes whose refinement reaches far, like stream power).
    Doubling,
    /// The base, then the target: one refinement adds every band below the base's cells at
    /// once (processes whose refinement is local, like droplets with short paths).
    Direct,
}

/// The grids a target of `target` samples per side is built through: the base, then
/// doublings up to three quarters of the target, then the target itself.
#[must_use]
pub fn levels(base: usize, target: usize) -> Vec<usize> {
    let mut out = vec![base];
    let mut r = base;
    while r * 2 * 4 <= target * 3 {
        r *= 2;
        out.push(r);
    }
    if target > base {
        out.push(target);
    }
    out
}

/// A context like `ctx` at another resolution, reporting progress into `[from, to]` of the
/// node's whole run.
pub(super) fn at_level<'a>(
    ctx: &'a EvalCtx<'a>,
    resolution: usize,
    report: &'a (dyn Fn(f32) + Sync),
) -> EvalCtx<'a> {
    EvalCtx {
        resolution,
        window: crate::node::Window::full(resolution),
        world: ctx.world,
        graph_seed: ctx.graph_seed,
        node_id: ctx.node_id,
        base_dir: ctx.base_dir,
        allow_outside: ctx.allow_outside,
        cancel: ctx.cancel,
        progress: report,
        upstream: ctx.upstream,
        arrays: ctx.arrays,
    }
}

/// The node's inputs at `res`², each evaluated there (the graph upstream of it at that
/// resolution: exactly what a preview at `res`² sees).
fn inputs_at(
    ctx: &EvalCtx,
    inputs: &Inputs,
    res: usize,
) -> Result<Vec<Option<Arc<Field>>>, NodeError> {
    inputs
        .fields
        .iter()
        .enumerate()
        .map(|(i, f)| ctx.input_at(i, res, f.as_deref()))
        .collect()
}

/// The node's inputs at the base (see [`inputs_at`]), and the terrain it changes there.
type BaseInputs = (Vec<Option<Arc<Field>>>, Arc<Field>);
fn base_inputs(ctx: &EvalCtx, inputs: &Inputs, base: usize) -> Result<BaseInputs, NodeError> {
    let fields = inputs_at(ctx, inputs, base)?;
    let z0 = fields
        .first()
        .cloned()
        .flatten()
        .ok_or(NodeError::MissingInput("in"))?;
    Ok((fields, z0))
}

/// An erosion node's coarse-to-fine evaluation, declared once per node: its resolution
/// parameters, how the levels follow each other, how a finer level's parameters differ, how
/// its extra outputs are carried. Its `eval` is then [`evaluate`].
pub trait Multiscale: Node {
    /// How the levels above the base follow each other.
    const SCHEDULE: Schedule;
    /// How each output after the height is carried from level to level.
    const EXTRA: &'static [Extra];
    /// The node's `detail` and `base_resolution` parameters.
    fn resolution(p: &Self::Params) -> (Detail, usize);
    /// The literal algorithm at the context's resolution (`detail = native`, and the base level).
    fn native(
        ctx: &EvalCtx,
        inputs: Self::In<'_>,
        p: &Self::Params,
    ) -> Result<Self::Out, NodeError>;
    /// The parameters of a level finer than the base (`previous`: the previous level's
    /// resolution).
    fn refine(p: &Self::Params, previous: usize) -> Self::Params;
    /// How a refinement's drift (its change averaged over the previous level's cells minus
    /// that level's change) is taken out again (see the module doc): smoothed across a jump
    /// of 4× or more by a Gaussian of this σ, in the previous level's cells.
    const DRIFT_SMOOTHING: f64 = 0.5;
    /// Whether the drift is taken out exactly instead: brought up by the area-preserving
    /// histospline ([`crate::field::conserve`]), so the change averaged down to the previous
    /// level's cells is that level's change (up to rounding) and no crease is left.
    const DRIFT_EXACT: bool = false;
    /// How far a tiled build's refinement from the base ([`Schedule::Direct`], see
    /// [`tile_refine`]) smooths the coarse pass's change before starting from it, in base
    /// cells, where its window is not aligned with the base's cells (aligned windows start from
    /// the base's own change, as the whole map does). An eighth by default: smoothed more, a
    /// tile loses the fine band the whole map keeps (docs/perf-log.md).
    const TILE_START_SMOOTHING: f64 = 0.125;
    /// Whether a tiled build's refinement keeps only the band below the coarse pass's cells
    /// (see [`tile_refine`]): by default, nodes that refine at every doubling. A node refined
    /// once from its base redoes the whole map's refinement on a window aligned with the base's
    /// cells whatever this says; on other windows it refines from the base too unless this is
    /// set (stream power: its drainage areas make a refinement from a smoothed start drift
    /// further from the whole map; docs/perf-log.md).
    const TILE_FROM_COARSE: bool = matches!(Self::SCHEDULE, Schedule::Doubling);
    /// What the coarser levels changed, brought up to a finer level's grid (`ctx`: that
    /// level's, or a tile's window of it), before the level starts from it: cells the node
    /// holds fixed there take it as nothing (stream power's border cells): the change to
    /// start from, when it differs from `coarse`. By default `None` (kept, nothing copied).
    fn hold_coarse(ctx: &EvalCtx, p: &Self::Params, coarse: &Field) -> Option<Field> {
        let _ = (ctx, p, coarse);
        None
    }
    /// A refinement level's run, with `refine`'s parameters: `coarse` is what the coarser
    /// levels changed, on this level's grid. By default [`Multiscale::native`].
    fn refined(
        ctx: &EvalCtx,
        inputs: Self::In<'_>,
        p: &Self::Params,
        coarse: &Field,
    ) -> Result<Self::Out, NodeError> {
        let _ = coarse;
        Self::native(ctx, inputs, p)
    }
}

/// A [`Multiscale`] node's evaluation by its `detail` parameter: [`Multiscale::native`]
/// once at the context's resolution, or — consistent — [`run`].
pub fn evaluate<N: Multiscale>(
    ctx: &EvalCtx,
    inputs: N::In<'_>,
    p: &N::Params,
) -> Result<N::Out, NodeError> {
    let (detail, base) = N::resolution(p);
    match detail {
        Detail::Native => N::native(ctx, inputs, p),
        Detail::Consistent => {
            let fields = run::<N>(ctx, inputs.raw(), p, base)?;
            N::Out::from_fields(fields)
                .ok_or_else(|| NodeError::Failed("internal error: missing output".into()))
        }
    }
}

/// A tiled build's refinement of a [`Multiscale`] node on one window finer than the coarse
/// pass (`Node::TILE_REFINE`, see `eval::pieces`): one level from the coarse resolution to
/// the context's, as in [`run`] — the input plus the coarse change is the start, the node's
/// [`Multiscale::refined`] runs on it with [`Multiscale::refine`]'s parameters, and of its
/// change only the part finer than the cells of the level it refines from is kept (the coarse
/// pass's with [`Multiscale::TILE_FROM_COARSE`], else the base's, as in the whole map's
/// build). A node refined once from its base on a window aligned with the base's cells does
/// exactly what the whole map's build does there ([`tile_refine_exact`]); otherwise the start
/// is the coarse change smoothed and the drift is taken out by a Gaussian as wide as the whole
/// map's averaging, up-sampling and smoothing together. `None` when the node does not refine
/// (`detail = native`, or a build no finer than its base).
#[must_use]
pub fn tile_refine<N: Multiscale>(
    ctx: &EvalCtx,
    inputs: &Inputs,
    values: &[crate::node::ParamValue],
    coarse: &Field,
    coarse_res: usize,
) -> Option<Result<Field, NodeError>> {
    use crate::node::Params;
    let p = N::Params::from_values(values);
    let (detail, base) = N::resolution(&p);
    if detail == Detail::Native || ctx.resolution <= base.max(coarse_res) {
        return None;
    }
    // The level refined from: the coarse pass for a node refining at every doubling (or whose
    // refinement reaches across the map, `TILE_FROM_COARSE`); the base for one refining once
    // (as the whole map's build does: its detail below the base's cells is this refinement's
    // alone, so the coarse pass's own is smoothed away first).
    let from = if N::TILE_FROM_COARSE {
        coarse_res
    } else {
        base
    };
    // The whole map's drift is averaged over those cells (a box of `jump` cells), brought up
    // bilinearly (a tent of `jump`) and, across a jump of 4× or more, smoothed by a Gaussian of
    // DRIFT_SMOOTHING of them: one Gaussian of the same spread here.
    let jump = ctx.resolution as f64 / from as f64;
    let smoothing = if jump >= 4.0 {
        N::DRIFT_SMOOTHING * jump
    } else {
        0.0
    };
    let sigma = (jump * jump / 4.0 + smoothing * smoothing).sqrt();
    if N::SCHEDULE == Schedule::Direct && ctx.upstream.is_some() {
        if let Some(r) = tile_refine_exact::<N>(ctx, inputs, (&p, values), base) {
            return Some(r);
        }
    }
    let run = || -> Result<Field, NodeError> {
        let z = inputs.required(0)?;
        let smoothed;
        let coarse = if N::TILE_FROM_COARSE {
            coarse
        } else {
            smoothed = crate::field::blur::gaussian(coarse, N::TILE_START_SMOOTHING * jump);
            &smoothed
        };
        let held = N::hold_coarse(ctx, &p, coarse);
        let coarse = held.as_ref().unwrap_or(coarse);
        let start = Field::zip_map(z, coarse, |z, d| z + d);
        let mut fields = inputs.fields.to_vec();
        fields[0] = Some(Arc::new(start));
        let li = Inputs {
            spec: inputs.spec,
            fields: &fields,
        };
        let last =
            N::refined(ctx, N::In::read(&li)?, &N::refine(&p, coarse_res), coarse)?.into_fields();
        let out = last
            .first()
            .ok_or_else(|| NodeError::Failed("internal error: missing output".into()))?;
        let change = Field::zip_map(out, z, |e, z| e - z);
        let excess = Field::zip_map(&change, coarse, |c, d| c - d);
        let drift = crate::field::blur::gaussian(&excess, sigma);
        Ok(Field::zip_map(&change, &drift, |c, d| c - d))
    };
    Some(run())
}

/// Base levels' changes by what determines them (see [`base_key`]): every piece of a node in a
/// tiled build runs the same whole-world base level, once per process.
static BASE_MEMO: std::sync::Mutex<Vec<([u8; 32], Arc<Field>)>> = std::sync::Mutex::new(Vec::new());
/// How many base levels [`BASE_MEMO`] keeps (a 256² one is 256 KiB).
const BASE_MEMO_LEN: usize = 8;

/// What a node's base level depends on: its type, parameters, the graph seed, the world, the
/// base resolution and its inputs there.
fn base_key(
    ctx: &EvalCtx,
    type_id: &str,
    values: &[crate::node::ParamValue],
    base: usize,
    fields: &[Option<Arc<Field>>],
) -> [u8; 32] {
    let mut h = blake3::Hasher::new();
    h.update(type_id.as_bytes());
    h.update(&ctx.graph_seed.to_le_bytes());
    ctx.world.hash_into(&mut h);
    h.update(&(base as u64).to_le_bytes());
    for v in values {
        v.hash_into(&mut h);
    }
    for f in fields {
        match f {
            Some(f) => {
                h.update(&(f.width() as u64).to_le_bytes());
                h.update(&(f.channels() as u64).to_le_bytes());
                for v in f.data() {
                    h.update(&v.to_bits().to_le_bytes());
                }
            }
            None => {
                h.update(b"-");
            }
        }
    }
    *h.finalize().as_bytes()
}

/// [`tile_refine`] for a node refined once from its base ([`Schedule::Direct`]) on a window
/// aligned with the base's cells: the whole map's build there, step for step — the base level
/// run over the whole world (the preview, from the graph upstream at the base resolution), its
/// change brought up cubically to the window as the start, the refinement, and its drift
/// averaged over the base's cells, brought up bilinearly and smoothed, taken out. Only the
/// window's edge (inside the piece's halo) differs from the whole map. `None` when the window
/// is not aligned with the base's cells.
fn tile_refine_exact<N: Multiscale>(
    ctx: &EvalCtx,
    inputs: &Inputs,
    (p, values): (&N::Params, &[crate::node::ParamValue]),
    base: usize,
) -> Option<Result<Field, NodeError>> {
    let (n, w) = (ctx.resolution, ctx.window);
    if n % base != 0 {
        return None;
    }
    let s = n / base;
    if w.x0 % s != 0 || w.y0 % s != 0 || w.width % s != 0 || w.height % s != 0 {
        return None;
    }
    let run = || -> Result<Field, NodeError> {
        let quiet = |_: f32| {};
        let lctx = at_level(ctx, base, &quiet);
        let (fields, z0) = base_inputs(ctx, inputs, base)?;
        let key = base_key(ctx, N::SPEC.id, values, base, &fields);
        let known = BASE_MEMO
            .lock()
            .ok()
            .and_then(|m| m.iter().find(|e| e.0 == key).map(|e| Arc::clone(&e.1)));
        let delta = if let Some(d) = known {
            d
        } else {
            let li = Inputs {
                spec: inputs.spec,
                fields: &fields,
            };
            let last = native_fields::<N>(&lctx, &li, p)?;
            let d = Arc::new(Field::zip_map(&last[0], &z0, |e, z| e - z));
            if let Ok(mut m) = BASE_MEMO.lock() {
                if m.len() >= BASE_MEMO_LEN {
                    m.remove(0);
                }
                m.push((key, Arc::clone(&d)));
            }
            d
        };
        let rect = (w.x0, w.y0, w.width, w.height);
        let mut coarse = if s >= 4 {
            delta.resample_cubic_window(n, rect)
        } else {
            delta.resample_bilinear_window(n, rect)
        };
        if let Some(held) = N::hold_coarse(ctx, p, &coarse) {
            coarse = held;
        }
        let z = inputs.required(0)?;
        let start = Field::zip_map(z, &coarse, |z, d| z + d);
        let mut fields = inputs.fields.to_vec();
        fields[0] = Some(Arc::new(start));
        let li = Inputs {
            spec: inputs.spec,
            fields: &fields,
        };
        let out = N::refined(ctx, N::In::read(&li)?, &N::refine(p, base), &coarse)?.into_fields();
        let out = out
            .first()
            .ok_or_else(|| NodeError::Failed("internal error: missing output".into()))?;
        let change = Field::zip_map(out, z, |e, z| e - z);
        // The drift over the base's cells in the window.
        let (bw, bh, bx0, by0) = (w.width / s, w.height / s, w.x0 / s, w.y0 / s);
        let drift = Field::from_fn(bw, bh, |bx, by| {
            let mut sum = 0.0f64;
            for y in by * s..(by + 1) * s {
                for x in bx * s..(bx + 1) * s {
                    sum += f64::from(change.data()[y * w.width + x]);
                }
            }
            (sum / (s * s) as f64) as f32 - delta.data()[(by0 + by) * base + bx0 + bx]
        });
        let drift = drift_up::<N>(&drift, w.width, w.height, s as f64);
        Ok(Field::zip_map(&change, &drift, |c, d| c - d))
    };
    Some(run())
}

/// A refinement's iteration count at `resolution` from a base of `base` samples: all of
/// `iterations` up to a jump of `knee`× from the base, then fewer in proportion (`knee/jump`,
/// a quarter at least), never none.
#[must_use]
pub fn iterations_past(iterations: u32, resolution: usize, base: u32, knee: f64) -> u32 {
    let jump = resolution as f64 / f64::from(base.max(1));
    let share = (knee / jump).clamp(0.25, 1.0);
    ((f64::from(iterations) * share).round() as u32).max(1)
}

/// [`tile_refine`] for `Node::TILE_REFINE`.
#[must_use]
pub const fn tile<N: Multiscale>() -> Option<crate::node::TileRefineFn> {
    Some(tile_refine::<N>)
}

/// [`Multiscale::native`] on positional inputs, its outputs in port order.
fn native_fields<N: Multiscale>(
    ctx: &EvalCtx,
    inputs: &Inputs,
    p: &N::Params,
) -> Result<Vec<Field>, NodeError> {
    Ok(N::native(ctx, N::In::read(inputs)?, p)?.into_fields())
}

/// Runs a node coarse to fine (see the module doc): [`Multiscale::native`] at the base,
/// [`Multiscale::refined`] with [`Multiscale::refine`]'s parameters at each finer level.
fn run<N: Multiscale>(
    ctx: &EvalCtx,
    inputs: &Inputs,
    p: &N::Params,
    base: usize,
) -> Result<Vec<Field>, NodeError> {
    let extra = N::EXTRA;
    let input = inputs.required(0)?;
    let target = ctx.resolution;
    let base = base.max(2);
    if target == base {
        return native_fields::<N>(ctx, inputs, p);
    }
    let plan = match N::SCHEDULE {
        Schedule::Doubling => levels(base, target),
        Schedule::Direct => vec![base, target],
    };
    // Progress: each level weighted by its cells (the base counts as full work, a refinement
    // as a quarter; only to move the bar evenly).
    let weights: Vec<f32> = plan
        .iter()
        .enumerate()
        .map(|(k, &r)| (r * r) as f32 * if k == 0 { 1.0 } else { 0.25 })
        .collect();
    let total: f32 = weights.iter().sum();
    let mut done = 0.0f32;

    // The base level, in full.
    let mut res = base;
    let mut last: Vec<Field>;
    // What the levels so far changed, at the last level's resolution.
    let mut delta: Field;
    {
        let (w0, d0) = (weights[0] / total, done);
        let report = move |f: f32| ctx.report(d0 + w0 * f);
        let lctx = at_level(ctx, base, &report);
        let (fields, z0) = base_inputs(ctx, inputs, base)?;
        let li = Inputs {
            spec: inputs.spec,
            fields: &fields,
        };
        last = native_fields::<N>(&lctx, &li, p)?;
        delta = Field::zip_map(&last[0], &z0, |e, z| e - z);
        done += w0;
    }
    if target < base {
        // A preview coarser than the base: the base's change, averaged down.
        let out = Field::zip_map(input, &delta.resample(target, target), |z, d| z + d);
        return finish(input, out, &last, target, extra);
    }
    // Finer levels: sharpen, never move what the coarser levels made.
    for (k, &next) in plan.iter().enumerate().skip(1) {
        ctx.check_cancel()?;
        // An intermediate level's inputs are the build's own, averaged down to its grid:
        // evaluating the graph upstream there again would run every erosion node upstream
        // through its own levels once more for each level of this one (olsen2004's hydraulic
        // step took 2.7× its native time at 4096² that way; docs/perf-log.md).
        let mut fields: Vec<Option<Arc<Field>>> = if next == target {
            inputs.fields.to_vec()
        } else {
            inputs
                .fields
                .iter()
                .map(|f| f.as_ref().map(|f| Arc::new(f.resample_area(next, next))))
                .collect()
        };
        let z = fields
            .first()
            .cloned()
            .flatten()
            .ok_or(NodeError::MissingInput("in"))?;
        // Brought up across a jump of 4× or more (a direct refinement), bilinear filtering
        // leaves a crease along every coarse cell edge, which a refinement that only deposits
        // there (a valley floor) keeps as a grid of squares: a cubic has none.
        let mut coarse = if next >= 4 * res {
            delta.resample_cubic(next, next)
        } else {
            delta.resample(next, next)
        };
        let (wk, dk) = (weights[k] / total, done);
        let report = move |f: f32| ctx.report(dk + wk * f);
        let lctx = at_level(ctx, next, &report);
        if let Some(held) = N::hold_coarse(&lctx, p, &coarse) {
            coarse = held;
        }
        let start = Field::zip_map(&z, &coarse, |z, d| z + d);
        fields[0] = Some(Arc::new(start.clone()));
        let li = Inputs {
            spec: inputs.spec,
            fields: &fields,
        };
        last = N::refined(&lctx, N::In::read(&li)?, &N::refine(p, res), &coarse)?.into_fields();
        // Keep the refinement's detail, not its drift: whatever moved the change's means over
        // the previous level's cells away from that level's change is taken out again (the
        // difference averaged down to those cells, and back up), so this level's change
        // averages down to the previous one's.
        let change = Field::zip_map(&last[0], &z, |e, z| e - z);
        let drift = Field::zip_map(&change.resample(res, res), &delta, |a, b| a - b);
        let drift = drift_up::<N>(&drift, next, next, next as f64 / res as f64);
        delta = Field::zip_map(&change, &drift, |c, d| c - d);
        res = next;
        done += wk;
    }
    let out = Field::zip_map(input, &delta, |z, d| z + d);
    finish(input, out, &last, target, extra)
}

/// A refinement's drift over the previous level's cells brought up to `width × height`, a jump
/// of `jump`×, to be taken out. Exactly with [`Multiscale::DRIFT_EXACT`] (the area-preserving
/// histospline). Otherwise bilinearly, which leaves a crease along every coarse cell edge: a
/// doubling's creases are two cells apart and stay, but across a jump of 4× or more (a direct
/// refinement) a strong drift (a refinement depositing a valley floor) would leave blocks of
/// the coarse grid behind, so a Gaussian of DRIFT_SMOOTHING coarse cells smooths them
/// (mean-preserving).
fn drift_up<N: Multiscale>(drift: &Field, width: usize, height: usize, jump: f64) -> Field {
    if N::DRIFT_EXACT {
        crate::field::conserve::upsample_conservative(drift, width, height)
    } else if jump >= 4.0 {
        crate::field::blur::gaussian(&drift.resample(width, height), N::DRIFT_SMOOTHING * jump)
    } else {
        drift.resample(width, height)
    }
}

/// The node's outputs at the target: the height, then each extra output by its rule.
fn finish(
    input: &Field,
    out: Field,
    last: &[Field],
    target: usize,
    extra: &[Extra],
) -> Result<Vec<Field>, NodeError> {
    let (wear, deposit) = change_masks(input, &out);
    let mut fields = vec![out];
    for (k, e) in extra.iter().enumerate() {
        fields.push(match e {
            Extra::Wear => wear.clone(),
            Extra::Deposit => deposit.clone(),
            Extra::State => last
                .get(k + 1)
                .ok_or_else(|| NodeError::Failed("internal error: missing output".into()))?
                .resample(target, target),
        });
    }
    Ok(fields)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_double_from_the_base_and_end_at_the_target() {
        assert_eq!(levels(256, 256), vec![256]);
        assert_eq!(levels(256, 128), vec![256]);
        assert_eq!(levels(256, 512), vec![256, 512]);
        assert_eq!(levels(256, 2048), vec![256, 512, 1024, 2048]);
        assert_eq!(levels(256, 1009), vec![256, 512, 1009]);
        assert_eq!(levels(256, 513), vec![256, 513]);
    }
}
