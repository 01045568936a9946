//! What a node evaluates with: its context (`EvalCtx`: resolution, window, world, seed,
//! cancellation, progress), its inputs, its errors, and small numeric helpers nodes share.

use super::NodeSpec;
use crate::field::{Field, World};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Errors a node reports while evaluating.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum NodeError {
    #[error("cancelled")]
    Cancelled,
    #[error("input \"{0}\" is not connected")]
    MissingInput(&'static str),
    #[error("{0}")]
    Failed(String),
}

impl NodeError {
    /// A node's own buffers did not make the `width × height` field it built: a bug in the
    /// node, reported as a failure of that node rather than a panic.
    #[must_use]
    pub fn shape(width: usize, height: usize) -> Self {
        Self::Failed(format!(
            "internal error: the node's samples do not fill a {width} × {height} field"
        ))
    }
}

/// A shared flag that asks running evaluations to stop.
#[derive(Clone, Debug, Default)]
pub struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }
    #[must_use]
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// A rectangle of a square grid of `resolution²` cells: what an evaluation computes (the
/// whole grid, or one tile of it with the margin its consumers need).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Window {
    pub x0: usize,
    pub y0: usize,
    pub width: usize,
    pub height: usize,
}

impl Window {
    /// The whole `n × n` grid.
    #[must_use]
    pub fn full(n: usize) -> Self {
        Self {
            x0: 0,
            y0: 0,
            width: n,
            height: n,
        }
    }

    /// The window grown by `r` cells on every side, clipped to the `n × n` grid.
    #[must_use]
    pub fn expand(&self, r: usize, n: usize) -> Self {
        let (x0, y0) = (self.x0.saturating_sub(r), self.y0.saturating_sub(r));
        let x1 = (self.x0 + self.width + r).min(n);
        let y1 = (self.y0 + self.height + r).min(n);
        Self {
            x0,
            y0,
            width: x1 - x0,
            height: y1 - y0,
        }
    }

    /// The columns `x0..x1` and rows `y0..y1` both windows cover (empty ranges when they do
    /// not meet).
    #[must_use]
    pub fn overlap(&self, o: &Self) -> (usize, usize, usize, usize) {
        let (x0, y0) = (self.x0.max(o.x0), self.y0.max(o.y0));
        let x1 = (self.x0 + self.width).min(o.x0 + o.width).max(x0);
        let y1 = (self.y0 + self.height).min(o.y0 + o.height).max(y0);
        (x0, x1, y0, y1)
    }

    /// The smallest window holding both.
    #[must_use]
    pub fn union(&self, o: &Self) -> Self {
        let (x0, y0) = (self.x0.min(o.x0), self.y0.min(o.y0));
        let x1 = (self.x0 + self.width).max(o.x0 + o.width);
        let y1 = (self.y0 + self.height).max(o.y0 + o.height);
        Self {
            x0,
            y0,
            width: x1 - x0,
            height: y1 - y0,
        }
    }

    /// Whether `o` lies inside this window.
    #[must_use]
    pub fn contains(&self, o: &Self) -> bool {
        o.x0 >= self.x0
            && o.y0 >= self.y0
            && o.x0 + o.width <= self.x0 + self.width
            && o.y0 + o.height <= self.y0 + self.height
    }

    /// The part of `f` (laid out over this window) that covers `inner`.
    #[must_use]
    pub fn crop(&self, f: &Field, inner: &Self) -> Field {
        if self == inner {
            return f.clone();
        }
        if f.channels() > 1 {
            let planes: Vec<Field> = f.planes().iter().map(|p| self.crop(p, inner)).collect();
            return Field::from_planes(&planes).unwrap_or_else(|| f.clone());
        }
        let (dx, dy) = (inner.x0 - self.x0, inner.y0 - self.y0);
        let mut data = Vec::with_capacity(inner.width * inner.height);
        for y in 0..inner.height {
            let row = (dy + y) * f.width() + dx;
            data.extend_from_slice(&f.data()[row..row + inner.width]);
        }
        Field::from_vec(inner.width, inner.height, data).unwrap_or_else(|| f.clone())
    }
}

/// How far a node reads around a cell of its output: what a tile must add around itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Footprint {
    /// Only the same cell of its inputs (or nothing: a generator in world coordinates).
    Pointwise,
    /// Cells up to this many away.
    Stencil(usize),
    /// The whole map (erosion, normalisation): evaluated once over the whole world at a
    /// coarse resolution, its change carried to every tile.
    Global,
}

/// Everything a node may know while it evaluates.
pub struct EvalCtx<'a> {
    /// Samples per side of the whole world's grid (the cell size is `world.size_m / resolution`).
    pub resolution: usize,
    /// The part of that grid to compute (the whole grid outside tiled builds): outputs are
    /// `window.width × window.height`, cell `(i, j)` at global cell `(x0 + i, y0 + j)`.
    pub window: Window,
    pub world: World,
    /// The graph seed (after any `--seed` override).
    pub graph_seed: u64,
    /// The id of the node instance (for messages only: outputs must not depend on it).
    pub node_id: &'a str,
    /// Folder of the graph file; relative paths in parameters resolve against it.
    pub base_dir: Option<&'a Path>,
    /// Folders outside the graph's project that files may be read from (the user's
    /// `--allow-outside`; see `io::trust`).
    pub allow_outside: &'a [PathBuf],
    pub cancel: &'a CancelToken,
    pub progress: &'a (dyn Fn(f32) + Sync),
    /// Evaluates what feeds input `port` at another resolution (the graph upstream of it,
    /// coerced to the port's kind); `None` outside an evaluator (benches, unit tests). The
    /// erosion nodes' coarse-to-fine evaluation reads its base level's input this way, so a
    /// build's base level is exactly the preview at that resolution.
    pub upstream: Option<&'a Upstream<'a>>,
    /// Arrays supplied to the evaluation by name (`array_input`); `None` when there are none.
    pub arrays: Option<&'a crate::node::ArrayInputs>,
}

/// See [`EvalCtx::upstream`]: `(port, resolution) → the field on that port at that resolution`.
pub type Upstream<'a> = dyn Fn(usize, usize) -> Result<Option<Arc<Field>>, NodeError> + Sync + 'a;

impl EvalCtx<'_> {
    /// Cell size in metres.
    #[must_use]
    pub fn cell_size_m(&self) -> f64 {
        self.world.cell_size_m(self.resolution)
    }

    /// World coordinate (metres) of the centre of global cell `i` along either axis.
    #[must_use]
    pub fn cell_centre_m(&self, i: usize) -> f64 {
        (i as f64 + 0.5) * self.cell_size_m()
    }

    /// The global cell the window starts at (what blurs align their running sums to).
    #[must_use]
    pub fn origin(&self) -> (usize, usize) {
        (self.window.x0, self.window.y0)
    }

    /// Columns of the window being evaluated.
    #[must_use]
    pub fn width(&self) -> usize {
        self.window.width
    }

    /// Rows of the window being evaluated.
    #[must_use]
    pub fn height(&self) -> usize {
        self.window.height
    }

    /// World x (metres) of the centres of the window's columns.
    #[must_use]
    pub fn xs_m(&self) -> Vec<f64> {
        (self.window.x0..self.window.x0 + self.window.width)
            .map(|i| self.cell_centre_m(i))
            .collect()
    }

    /// World y (metres) of the centres of the window's rows.
    #[must_use]
    pub fn ys_m(&self) -> Vec<f64> {
        (self.window.y0..self.window.y0 + self.window.height)
            .map(|i| self.cell_centre_m(i))
            .collect()
    }

    /// The field on input `port` evaluated at `resolution` (upstream graph and all), or —
    /// outside an evaluator — `current` resampled to it.
    pub fn input_at(
        &self,
        port: usize,
        resolution: usize,
        current: Option<&Field>,
    ) -> Result<Option<Arc<Field>>, NodeError> {
        match self.upstream {
            Some(f) => f(port, resolution),
            None => Ok(current.map(|f| Arc::new(f.resample(resolution, resolution)))),
        }
    }

    /// `Err(Cancelled)` once cancellation was requested; call it between rows or iterations.
    pub fn check_cancel(&self) -> Result<(), NodeError> {
        if self.cancel.is_cancelled() {
            Err(NodeError::Cancelled)
        } else {
            Ok(())
        }
    }

    /// Reports progress in `[0, 1]`.
    pub fn report(&self, fraction: f32) {
        (self.progress)(fraction.clamp(0.0, 1.0));
    }

    /// A 64-bit RNG seed from the graph seed and the node's own seed parameter.
    #[must_use]
    pub fn rng_seed(&self, node_seed: u32) -> u64 {
        splitmix64(self.graph_seed ^ splitmix64(u64::from(node_seed).wrapping_add(0x9E37)))
    }

    /// An empty field of the output size.
    #[must_use]
    pub fn new_field(&self, value: f32) -> Field {
        Field::filled(self.window.width, self.window.height, value)
    }
}

/// Clamps a mask value to [0, 1], mapping NaN and −0 to +0. Comparisons, not `f32::max`:
/// `max(−0, 0)` may return either zero (IEEE maxNum leaves it open), and which one the
/// compiled code returns changed with the optimisation level — different bytes for the same
/// mask (`curvature_mask` at opt-level 0 vs 1).
#[inline]
#[must_use]
pub fn unit(v: f32) -> f32 {
    if v > 0.0 {
        if v < 1.0 {
            v
        } else {
            1.0
        }
    } else {
        0.0
    }
}

/// Largest relative height (in height ranges from the bottom) an arithmetic node produces.
pub const MAX_RELATIVE: f32 = 1.0e6;

/// Keeps a relative height finite: within ±[`MAX_RELATIVE`] ranges (far beyond any terrain), NaN
/// to 0. Arithmetic on relative heights (powers, quotients) can otherwise overflow — found by
/// the random-graph property test (`gamma` 100 above the range, `combine` power with a
/// negative exponent at 0).
#[inline]
#[must_use]
#[expect(clippy::manual_clamp)] // deliberate: max-then-min sends NaN to the lower bound
pub fn finite_relative(r: f32) -> f32 {
    if r.is_nan() {
        0.0
    } else {
        r.max(-MAX_RELATIVE).min(MAX_RELATIVE)
    }
}

/// The SplitMix64 finaliser: a cheap, well-mixed 64-bit hash.
#[must_use]
pub fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The fields connected to a node's inputs, in port order (already coerced to the port kind).
pub struct Inputs<'a> {
    pub spec: &'a NodeSpec,
    pub fields: &'a [Option<Arc<Field>>],
}

impl Inputs<'_> {
    /// The field on input `index`, if connected.
    #[must_use]
    pub fn get(&self, index: usize) -> Option<&Field> {
        self.fields.get(index).and_then(|f| f.as_deref())
    }

    /// The field on input `index`, or an error naming the port.
    pub fn required(&self, index: usize) -> Result<&Field, NodeError> {
        self.get(index).ok_or(NodeError::MissingInput(
            self.spec.inputs.get(index).map_or("?", |p| p.name),
        ))
    }

    /// The field on the input named `name`, if connected.
    #[must_use]
    pub fn get_port(&self, name: &str) -> Option<&Field> {
        let index = self.spec.inputs.iter().position(|p| p.name == name)?;
        self.get(index)
    }

    /// The field on the input named `name`, or an error naming it.
    pub fn required_port(&self, name: &'static str) -> Result<&Field, NodeError> {
        self.get_port(name).ok_or(NodeError::MissingInput(name))
    }
}
