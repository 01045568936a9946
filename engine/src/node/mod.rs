//! What a node type is: its declaration (`NodeSpec`, `PortSpec`, `ParamSpec`), the
//! context it evaluates in (`EvalCtx`), its errors, and the `Registry` of all node types.

mod decl;
pub mod intern;
mod param;
mod traits;

pub use decl::{port_doc, port_name, InputPorts, OutputPorts};
pub use traits::{Parity, Swatch, Traits};

pub use param::kinds as param_kinds;

pub use param::{
    choice_from_name, choice_name, clean_doc, quoted_list, ChoiceEnum, NoParams, ParamKind,
    ParamSpec, ParamType, ParamValue, Params,
};

use crate::field::{Field, World};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The type of data on a port.
///
/// * `Height`: heights in metres, in the graph's world frame.
/// * `Mask`: weights in `[0, 1]`.
/// * `Color`: linear RGB (not sRGB-encoded), each channel nominally in `[0, 1]`; a field of
///   three planes R, G, B.
/// * `Scalar`: a measured quantity per cell in the unit its port's doc names (drainage area
///   in m², …): not a terrain and not a weight, so it is never drawn as relief, never mapped
///   onto the height range and never clamped.
///
/// Connections: the same kind passes unchanged. `Mask → Height` is coerced implicitly by
/// mapping 0 to the graph's `height_min_m` and 1 to `height_max_m`; `Mask → Color` gives the
/// grey `(m, m, m)`; `Color → Mask` gives the relative luminance
/// `Y = 0.2126 R + 0.7152 G + 0.0722 B` (ITU-R BT.709 primaries, linear), clamped to
/// `[0, 1]`. `Height → Mask` and `Height → Color` are refused: insert a `to_mask` or a
/// `colorize` node to choose how heights become weights or colours. `Color → Height` is
/// refused too: a colour is not a shape. A height (metres) or a mask (a dimensionless weight)
/// passes unchanged into a `Scalar` input; a `Scalar` goes into a height, mask or colour
/// input only through a `scalar_to_mask` node, which says how its units become weights.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PortKind {
    Height,
    Mask,
    Color,
    Scalar,
}

impl PortKind {
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            PortKind::Height => "height",
            PortKind::Mask => "mask",
            PortKind::Color => "color",
            PortKind::Scalar => "scalar",
        }
    }

    /// Number of channels a field of this kind has.
    #[must_use]
    pub fn channels(self) -> usize {
        match self {
            PortKind::Height | PortKind::Mask | PortKind::Scalar => 1,
            PortKind::Color => 3,
        }
    }
}

/// Rec. 709 luminance weights of linear R, G, B.
pub const LUMINANCE: [f32; 3] = [0.2126, 0.7152, 0.0722];

/// How a value travels along a wire from an output of kind `from` into an input of kind `to`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Coercion {
    /// Same kind, or a height or mask into a scalar input: the field is passed as is.
    None,
    /// Mask to height: `h = height_min_m + m · (height_max_m − height_min_m)`.
    MaskToHeight,
    /// Mask to colour: the grey `(m, m, m)`.
    MaskToColor,
    /// Colour to mask: the luminance `0.2126 R + 0.7152 G + 0.0722 B`, clamped to `[0, 1]`.
    ColorToMask,
}

impl Coercion {
    /// The coercion for a wire, or `None` when the connection is not allowed.
    #[must_use]
    pub fn between(from: PortKind, to: PortKind) -> Option<Coercion> {
        use PortKind::{Color, Height, Mask, Scalar};
        match (from, to) {
            (Height, Height) | (Mask, Mask) | (Color, Color) | (Scalar, Scalar) => {
                Some(Coercion::None)
            }
            (Height | Mask, Scalar) => Some(Coercion::None),
            (Mask, Height) => Some(Coercion::MaskToHeight),
            (Mask, Color) => Some(Coercion::MaskToColor),
            (Color, Mask) => Some(Coercion::ColorToMask),
            (Height, Mask | Color) | (Color, Height | Scalar) | (Scalar, Height | Mask | Color) => {
                None
            }
        }
    }

    /// What to do instead of a refused connection from `from` into `to`.
    #[must_use]
    pub fn refusal_hint(from: PortKind, to: PortKind) -> &'static str {
        match (from, to) {
            (PortKind::Height, PortKind::Color) => {
                "insert a \"colorize\" node to turn heights into colours"
            }
            (PortKind::Color, PortKind::Height) => {
                "a colour is not a terrain; wire it into a mask input (its luminance) if that is what you mean"
            }
            (PortKind::Color, PortKind::Scalar) => {
                "a colour is not a measured quantity; wire it into a mask input (its luminance) if that is what you mean"
            }
            (PortKind::Scalar, _) => {
                "insert a \"scalar_to_mask\" node to say which values become 0 and 1"
            }
            _ => "insert a \"to_mask\" node to turn heights into a mask",
        }
    }

    /// Applies the coercion to a field.
    #[must_use]
    pub fn apply(self, field: &Arc<Field>, world: &World) -> Arc<Field> {
        match self {
            Coercion::None => Arc::clone(field),
            Coercion::MaskToHeight => {
                let lo = world.height_min_m as f32;
                let span = world.height_span_m() as f32;
                Arc::new(field.map(|m| lo + m * span))
            }
            Coercion::MaskToColor => {
                let grey = [
                    field.as_ref().clone(),
                    field.as_ref().clone(),
                    field.as_ref().clone(),
                ];
                Arc::new(Field::from_planes(&grey).unwrap_or_else(|| field.as_ref().clone()))
            }
            Coercion::ColorToMask => Arc::new(luminance(field)),
        }
    }
}

/// The luminance of a colour field as a mask (a single-channel field passes through).
#[must_use]
pub fn luminance(color: &Field) -> Field {
    if color.channels() < 3 {
        return color.clone();
    }
    let p = color.planes();
    let [r, g, b] = LUMINANCE;
    Field::zip3_map(&p[0], &p[1], &p[2], |x, y, z| {
        (r * x + g * y + b * z).clamp(0.0, 1.0)
    })
}

/// An input or output port.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PortSpec {
    pub name: &'static str,
    pub kind: PortKind,
    /// Inputs only: evaluation fails validation when a required input is not connected.
    pub required: bool,
    pub doc: &'static str,
}

impl PortSpec {
    #[must_use]
    pub const fn height(name: &'static str, doc: &'static str) -> Self {
        Self {
            name,
            kind: PortKind::Height,
            required: true,
            doc,
        }
    }

    #[must_use]
    pub const fn mask(name: &'static str, doc: &'static str) -> Self {
        Self {
            name,
            kind: PortKind::Mask,
            required: true,
            doc,
        }
    }

    #[must_use]
    pub const fn color(name: &'static str, doc: &'static str) -> Self {
        Self {
            name,
            kind: PortKind::Color,
            required: true,
            doc,
        }
    }

    #[must_use]
    pub const fn scalar(name: &'static str, doc: &'static str) -> Self {
        Self {
            name,
            kind: PortKind::Scalar,
            required: true,
            doc,
        }
    }

    /// The same port, but optional.
    #[must_use]
    pub const fn optional(mut self) -> Self {
        self.required = false;
        self
    }
}

/// Where a node appears in catalogues and menus.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Category {
    Generator,
    Combine,
    Warp,
    Filter,
    Mask,
    Erosion,
    Water,
    Color,
    Io,
}

impl Category {
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Category::Generator => "generator",
            Category::Combine => "combine",
            Category::Warp => "warp",
            Category::Filter => "filter",
            Category::Mask => "mask",
            Category::Erosion => "erosion",
            Category::Water => "water",
            Category::Color => "color",
            Category::Io => "io",
        }
    }
}

/// The static declaration of a node type.
#[derive(Clone, Copy, Debug)]
pub struct NodeSpec {
    /// Stable id used in graph files; never renamed.
    pub id: &'static str,
    pub label: &'static str,
    pub category: Category,
    /// Bumped whenever the node's output for the same inputs changes (invalidates caches).
    pub version: u32,
    /// The node's documentation: its declaration's `///` lines, joined by newlines (show it
    /// through [`clean_doc`]).
    pub doc: &'static str,
    pub inputs: &'static [PortSpec],
    pub outputs: &'static [PortSpec],
    /// What code outside the node's file needs to know about it.
    pub traits: Traits,
}

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

/// Clamps a mask value to [0, 1], mapping NaN to 0 (`f32::clamp` would keep NaN).
#[inline]
#[must_use]
#[expect(clippy::manual_clamp)] // deliberate: max-then-min sends NaN to 0
pub fn unit(v: f32) -> f32 {
    v.max(0.0).min(1.0)
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

/// What [`node!`](crate::node!) declares about a node type: its spec, parameters and named
/// ports.
pub trait NodeDecl {
    type Params: Params;
    /// The inputs by name.
    type In<'a>: InputPorts<'a>;
    /// The outputs by name.
    type Out: OutputPorts;
    const SPEC: NodeSpec;
}

/// A node type: its declaration ([`node!`](crate::node!)) and its evaluation.
pub trait Node: NodeDecl {
    /// Computes the node's outputs.
    fn eval(
        ctx: &EvalCtx,
        inputs: Self::In<'_>,
        params: &Self::Params,
    ) -> Result<Self::Out, NodeError>;

    /// Full-resolution `f32` buffers the node holds while it runs, besides its inputs and
    /// outputs (used by the memory estimate; measured per node type, see docs/reliability.md).
    const SCRATCH_FIELDS: u32 = 1;

    /// Extra bytes for the cache key, for nodes that read outside state (e.g. a file's
    /// size and modification time). Most nodes have none.
    fn key_extra(_base_dir: Option<&Path>, _params: &Self::Params) -> Vec<u8> {
        Vec::new()
    }

    /// How far the node reads around each output cell, with these parameters, on a grid of
    /// `n²` cells of `cell_m` metres: what a tiled build adds around every tile for it. By
    /// default erosion and water nodes need the whole map (a tiled build evaluates them once
    /// over the world at a coarse size) and every other node reads only its own cell.
    fn footprint(_params: &Self::Params, _cell_m: f64, _n: usize) -> Footprint {
        if matches!(Self::SPEC.category, Category::Erosion | Category::Water) {
            Footprint::Global
        } else {
            Footprint::Pointwise
        }
    }
}

pub(crate) type EvalFn = fn(&EvalCtx, &Inputs, &[ParamValue]) -> Result<Vec<Field>, NodeError>;
type KeyExtraFn = fn(Option<&Path>, &[ParamValue]) -> Vec<u8>;
type FootprintFn = fn(&[ParamValue], f64, usize) -> Footprint;

/// How a node's output relates to the resolution ([`NodeDef::resolution`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResolutionBehaviour {
    /// The same terrain at every resolution: it samples functions of world coordinates.
    Independent,
    /// The same terrain at every resolution: the process runs in full at `base`² and finer
    /// evaluations add detail below its cells.
    CoarseToFine { base: usize },
    /// The process runs at the resolution evaluated: a preview and a build differ.
    Dependent,
}

/// A registered node type, with its parameters erased to `ParamValue`s.
#[derive(Clone, Copy)]
pub struct NodeDef {
    pub spec: NodeSpec,
    pub params: &'static [ParamSpec],
    /// [`Node::SCRATCH_FIELDS`].
    pub scratch_fields: u32,
    eval: EvalFn,
    key_extra: KeyExtraFn,
    footprint: FootprintFn,
}

impl std::fmt::Debug for NodeDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NodeDef")
            .field("id", &self.spec.id)
            .finish_non_exhaustive()
    }
}

fn eval_erased<N: Node>(
    ctx: &EvalCtx,
    inputs: &Inputs,
    values: &[ParamValue],
) -> Result<Vec<Field>, NodeError> {
    let named = N::In::read(inputs)?;
    Ok(N::eval(ctx, named, &N::Params::from_values(values))?.into_fields())
}

fn key_extra_erased<N: Node>(base: Option<&Path>, values: &[ParamValue]) -> Vec<u8> {
    N::key_extra(base, &N::Params::from_values(values))
}

fn footprint_erased<N: Node>(values: &[ParamValue], cell_m: f64, n: usize) -> Footprint {
    N::footprint(&N::Params::from_values(values), cell_m, n)
}

/// What a node made at run time reads around each cell: only its own.
fn pointwise(_: &[ParamValue], _: f64, _: usize) -> Footprint {
    Footprint::Pointwise
}

fn no_key_extra(_: Option<&Path>, _: &[ParamValue]) -> Vec<u8> {
    Vec::new()
}

/// An evaluation that hands its inputs on as its outputs, port by port (a subgraph's
/// results in an expanded graph, see `graph::subgraph`).
pub(crate) fn pass_inputs_through(
    _: &EvalCtx,
    inputs: &Inputs,
    _: &[ParamValue],
) -> Result<Vec<Field>, NodeError> {
    (0..inputs.fields.len())
        .map(|i| inputs.required(i).cloned())
        .collect()
}

impl NodeDef {
    /// A node type declared at run time (see [`intern::node_def`]): pointwise, no key extra.
    #[must_use]
    pub(crate) fn custom(spec: NodeSpec, params: &'static [ParamSpec], eval: EvalFn) -> Self {
        Self {
            spec,
            params,
            scratch_fields: 0,
            eval,
            key_extra: no_key_extra,
            footprint: pointwise,
        }
    }

    /// The definition of node type `N`.
    #[must_use]
    pub fn of<N: Node>() -> Self {
        Self {
            spec: N::SPEC,
            params: N::Params::SPECS,
            scratch_fields: N::SCRATCH_FIELDS,
            eval: eval_erased::<N>,
            key_extra: key_extra_erased::<N>,
            footprint: footprint_erased::<N>,
        }
    }

    /// Runs the node on validated parameter values (in spec order).
    pub fn eval(
        &self,
        ctx: &EvalCtx,
        inputs: &[Option<Arc<Field>>],
        values: &[ParamValue],
    ) -> Result<Vec<Field>, NodeError> {
        let inputs = Inputs {
            spec: &self.spec,
            fields: inputs,
        };
        (self.eval)(ctx, &inputs, values)
    }

    /// Extra cache-key bytes (see [`Node::key_extra`]).
    #[must_use]
    pub fn key_extra(&self, base_dir: Option<&Path>, values: &[ParamValue]) -> Vec<u8> {
        (self.key_extra)(base_dir, values)
    }

    /// See [`Node::footprint`].
    #[must_use]
    pub fn footprint(&self, values: &[ParamValue], cell_m: f64, n: usize) -> Footprint {
        (self.footprint)(values, cell_m, n)
    }

    /// Index of a parameter by name.
    #[must_use]
    pub fn param_index(&self, name: &str) -> Option<usize> {
        self.params.iter().position(|p| p.name == name)
    }

    /// Index of an output port by name.
    #[must_use]
    pub fn output_index(&self, name: &str) -> Option<usize> {
        self.spec.outputs.iter().position(|p| p.name == name)
    }

    /// Index of an input port by name.
    #[must_use]
    pub fn input_index(&self, name: &str) -> Option<usize> {
        self.spec.inputs.iter().position(|p| p.name == name)
    }

    /// How this node's output relates to the resolution it is evaluated at, with these
    /// parameter values: erosion nodes declare a `detail` choice (`consistent`, `native`);
    /// every other node samples functions of world coordinates and is independent of it
    /// (checked for every example graph by `orogen parity` and the tests).
    #[must_use]
    pub fn resolution(&self, values: &[ParamValue]) -> ResolutionBehaviour {
        let Some(i) = self
            .param_index("detail")
            .filter(|&i| matches!(self.params[i].kind, ParamKind::Choice { .. }))
        else {
            return ResolutionBehaviour::Independent;
        };
        let base = self
            .param_index("base_resolution")
            .and_then(|b| match values.get(b) {
                Some(ParamValue::Int(v)) => usize::try_from(*v).ok(),
                _ => None,
            })
            .unwrap_or(256);
        match values.get(i) {
            Some(ParamValue::Choice(0)) => ResolutionBehaviour::CoarseToFine { base },
            _ => ResolutionBehaviour::Dependent,
        }
    }

    /// Default values for all parameters, in spec order.
    #[must_use]
    pub fn default_values(&self) -> Vec<ParamValue> {
        self.params.iter().map(ParamSpec::default_value).collect()
    }
}

/// All node types known to the engine, sorted by id.
#[derive(Debug, Default)]
pub struct Registry {
    defs: Vec<NodeDef>,
    by_id: HashMap<&'static str, usize>,
}

impl Registry {
    /// An empty registry.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds node type `N`. A duplicate id is kept out of the lookup table and reported by
    /// [`Registry::duplicate_ids`] (checked by the registry test).
    pub fn register<N: Node>(&mut self) {
        let def = NodeDef::of::<N>();
        self.by_id.entry(def.spec.id).or_insert(self.defs.len());
        self.defs.push(def);
    }

    /// Sorts the definitions by id (the order catalogues and lookups use); call once every
    /// node is registered. (`Registry::builtin`, the registry of every built-in node, lives
    /// with the catalogue in `nodes/`: `node/` declares what a node is and knows none.)
    pub fn finish(&mut self) {
        self.defs.sort_by_key(|d| d.spec.id);
        self.by_id = self
            .defs
            .iter()
            .enumerate()
            .map(|(i, d)| (d.spec.id, i))
            .collect();
    }

    #[must_use]
    pub fn get(&self, id: &str) -> Option<&NodeDef> {
        self.by_id.get(id).map(|&i| &self.defs[i])
    }

    /// All definitions, sorted by id.
    #[must_use]
    pub fn defs(&self) -> &[NodeDef] {
        &self.defs
    }

    /// Ids registered more than once.
    #[must_use]
    pub fn duplicate_ids(&self) -> Vec<&'static str> {
        let mut ids: Vec<_> = self.defs.iter().map(|d| d.spec.id).collect();
        ids.sort_unstable();
        let mut dups: Vec<_> = ids
            .windows(2)
            .filter(|w| w[0] == w[1])
            .map(|w| w[0])
            .collect();
        dups.dedup();
        dups
    }
}

/// The candidate closest to `name` by edit distance, if it is close enough to be a likely typo.
#[must_use]
pub fn nearest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let best = candidates
        .into_iter()
        .map(|c| (levenshtein(name, c), c))
        .min_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(b.1)))?;
    let limit = (name.chars().count() / 2).max(2);
    (best.0 <= limit).then_some(best.1)
}

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        cur[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_suggests_typos_only() {
        let names = ["perlin_fbm", "constant", "blend"];
        assert_eq!(nearest("perlin_fmb", names), Some("perlin_fbm"));
        assert_eq!(nearest("blnd", names), Some("blend"));
        assert_eq!(nearest("zzzzzzzzzz", names), None);
    }

    #[test]
    fn coercions() {
        assert_eq!(
            Coercion::between(PortKind::Mask, PortKind::Height),
            Some(Coercion::MaskToHeight)
        );
        assert_eq!(Coercion::between(PortKind::Height, PortKind::Mask), None);
        // A height or mask is a quantity too; a scalar becomes a weight only explicitly.
        assert_eq!(
            Coercion::between(PortKind::Height, PortKind::Scalar),
            Some(Coercion::None)
        );
        assert_eq!(
            Coercion::between(PortKind::Mask, PortKind::Scalar),
            Some(Coercion::None)
        );
        for to in [PortKind::Height, PortKind::Mask, PortKind::Color] {
            assert_eq!(Coercion::between(PortKind::Scalar, to), None);
            assert!(Coercion::refusal_hint(PortKind::Scalar, to).contains("scalar_to_mask"));
        }
        assert_eq!(Coercion::between(PortKind::Color, PortKind::Scalar), None);
    }
}
