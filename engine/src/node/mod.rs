//! What a node type is: its declaration (`NodeSpec`, `PortSpec`, `ParamSpec`), the
//! context it evaluates in (`EvalCtx`), its errors, and the `Registry` of all node types.

pub mod arrays;
mod context;
mod decl;
pub mod intern;
mod param;
mod ports;
mod registry;
mod traits;

pub use arrays::{ArrayInput, ArrayInputs};
pub use context::{
    finite_relative, splitmix64, unit, CancelToken, EvalCtx, Footprint, Inputs, NodeError,
    Upstream, Window, MAX_RELATIVE,
};
pub use decl::{port_doc, port_name, InputPorts, OutputPorts};
pub use ports::{luminance, Coercion, PortKind, PortSpec, LUMINANCE};
pub use registry::{nearest, Registry};
pub use traits::{Parity, Swatch, Traits};

pub use param::kinds as param_kinds;

pub use param::{
    choice_from_name, choice_name, clean_doc, quoted_list, ChoiceEnum, NoParams, ParamKind,
    ParamSpec, ParamType, ParamValue, Params,
};

use crate::field::Field;
use std::path::Path;
use std::sync::Arc;

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

    /// How a tiled build refines this global node finer than its coarse pass, on one window
    /// (see `eval::pieces`): `None` for nodes that only carry the coarse change.
    const TILE_REFINE: Option<TileRefineFn> = None;
}

/// A global node's refinement on a window finer than the coarse pass: given the context (its
/// `window` the piece's), the inputs over that window, the parameter values, the coarse
/// change brought up to the window's cells and the coarse resolution, the node's height change
/// there — or `None` when the node does not refine with these parameters (`detail = native`).
pub type TileRefineFn =
    fn(&EvalCtx, &Inputs, &[ParamValue], &Field, usize) -> Option<Result<Field, NodeError>>;

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
    /// A derivative (slope, aspect, curvature) measured, or rivers routed, over the grid's own
    /// cells (`scale_m` 0): a finer build resolves steeper small faces, and bumps a river
    /// follows across a gentle floor, that its preview's cells do not hold.
    PerCell,
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
    /// [`Node::TILE_REFINE`].
    pub tile_refine: Option<TileRefineFn>,
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
            tile_refine: None,
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
            tile_refine: N::TILE_REFINE,
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
    /// a derivative mask whose `scale_m` is 0 measures over the grid's own cells; every other
    /// node samples functions of world coordinates and is independent of it (checked for
    /// every example graph by `orogen parity` and the tests).
    #[must_use]
    pub fn resolution(&self, values: &[ParamValue]) -> ResolutionBehaviour {
        let per_cell = self.param_index("scale_m").is_some_and(|k| {
            self.params[k].applies(self.params, values)
                && matches!(values.get(k), Some(ParamValue::Float(v)) if *v == 0.0)
        });
        if per_cell {
            return ResolutionBehaviour::PerCell;
        }
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
