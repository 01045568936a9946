//! Running one node: its inputs gathered and coerced, whole-map or in a window, a global
//! node's coarse change carried onto a window.

use super::key::upstream_at;
use super::window::CoarseNode;
use super::window::Span;
use super::EvalOptions;
use super::Evaluator;
use super::NodeFields;
use super::ProgressEvent;

use crate::field::Field;
use crate::graph::Graph;
use crate::node::Coercion;
use crate::node::EvalCtx;
use crate::node::NodeError;
use std::collections::HashMap;
use std::sync::Arc;

/// The graph upstream of a node at other resolutions: `(port, resolution) → field`.
pub(crate) type UpstreamMemo = HashMap<(usize, usize), Option<Arc<Field>>>;

impl Evaluator {
    /// Node `i`'s inputs from the results of the nodes before it, each coerced to its port's
    /// kind; `cut(src, field)` gives the part of node `src`'s field that node `i` reads (all of
    /// it, or in a windowed evaluation the node's window), `None` when it is not there.
    fn gather_inputs(
        graph: &Graph,
        i: usize,
        live: &HashMap<usize, NodeFields>,
        cut: impl Fn(usize, &Arc<Field>) -> Option<Arc<Field>>,
    ) -> Result<Vec<Option<Arc<Field>>>, NodeError> {
        let n = &graph.nodes[i];
        let spec = &n.def.spec;
        let mut inputs = Vec::with_capacity(spec.inputs.len());
        for (port, r) in spec.inputs.iter().zip(&n.inputs) {
            let Some(r) = r else {
                inputs.push(None);
                continue;
            };
            let missing = || NodeError::MissingInput(port.name);
            let src = graph.index_of(&r.node).ok_or_else(missing)?;
            let oi = graph.nodes[src]
                .def
                .output_index(&r.output)
                .ok_or_else(missing)?;
            let f = live
                .get(&src)
                .and_then(|fs| fs.get(oi))
                .ok_or_else(missing)?;
            let f = cut(src, f).ok_or_else(missing)?;
            let kind = graph.output_kind(r).ok_or_else(missing)?;
            let coerce = Coercion::between(kind, port.kind).ok_or_else(missing)?;
            inputs.push(Some(coerce.apply(&f, &graph.world)));
        }
        Ok(inputs)
    }

    /// A node of a windowed evaluation: its inputs cut to what it reads, the node run on
    /// that, its outputs cut to what its consumers need; a global node carries its
    /// whole-world change at the coarse size onto its inputs here instead.
    pub(super) fn run_windowed(
        graph: &Graph,
        i: usize,
        resolution: usize,
        opts: &EvalOptions,
        live: &HashMap<usize, NodeFields>,
        spans: &[Option<Span>],
        sp: Span,
    ) -> Result<Vec<Field>, NodeError> {
        let n = &graph.nodes[i];
        let spec = &n.def.spec;
        let inputs = Self::gather_inputs(graph, i, live, |src, f| {
            let from = spans[src]?.out;
            Some(Arc::new(from.crop(f, &sp.eval)))
        })?;
        if sp.global {
            return Self::carry_global(graph, i, resolution, opts, &inputs, sp);
        }
        let report = |fraction: f32| {
            if let Some(p) = opts.progress {
                p(ProgressEvent::Progress {
                    node: &n.id,
                    fraction,
                });
            }
        };
        let ctx = EvalCtx {
            resolution,
            window: sp.eval,
            world: graph.world,
            graph_seed: graph.seed,
            node_id: &n.id,
            base_dir: opts.base_dir,
            allow_outside: opts.allow_outside,
            cancel: &opts.cancel,
            progress: &report,
            upstream: None,
            arrays: opts.arrays,
        };
        if let Some(p) = opts.progress {
            p(ProgressEvent::Started { node: &n.id });
        }
        let out = n.def.eval(&ctx, &inputs, &n.params).and_then(|fields| {
            if fields.len() != spec.outputs.len()
                || fields
                    .iter()
                    .any(|f| f.width() != sp.eval.width || f.height() != sp.eval.height)
            {
                return Err(NodeError::Failed(format!(
                    "internal error: {} returned fields of the wrong count or size for a tile",
                    spec.id
                )));
            }
            Ok(fields.iter().map(|f| sp.eval.crop(f, &sp.out)).collect())
        });
        if let Some(p) = opts.progress {
            p(ProgressEvent::Finished {
                node: &n.id,
                ok: out.is_ok(),
            });
        }
        out
    }

    /// A global node in a tile: its height outputs are this tile's input plus the change the
    /// node made over the whole world at the coarse size, upsampled to the tile's cells, and
    /// — for an erosion node finer than the coarse pass — refined on the world-anchored pieces
    /// covering the tile (`eval::pieces`). Either is the same value wherever a cell is
    /// computed, so neighbouring tiles agree on the cells they share. Its other outputs are its
    /// whole-world outputs upsampled.
    fn carry_global(
        graph: &Graph,
        i: usize,
        resolution: usize,
        opts: &EvalOptions,
        inputs: &[Option<Arc<Field>>],
        sp: Span,
    ) -> Result<Vec<Field>, NodeError> {
        let w = sp.out;
        let n = &graph.nodes[i];
        let no_coarse = || {
            NodeError::Failed(format!(
                "internal error: \"{}\" needs the whole map; a tiled build evaluates it at a coarse size first",
                n.id
            ))
        };
        let CoarseNode {
            inputs: c_inputs,
            outputs: c_out,
        } = opts
            .coarse
            .and_then(|c| c.nodes.get(&n.id))
            .ok_or_else(no_coarse)?;
        let up =
            |f: &Field| f.resample_bilinear_window(resolution, (w.x0, w.y0, w.width, w.height));
        // The first height input: what the node changes.
        let first = n
            .def
            .spec
            .inputs
            .iter()
            .position(|p| p.kind == crate::node::PortKind::Height);
        let mut out = Vec::with_capacity(c_out.len());
        for (k, port) in n.def.spec.outputs.iter().enumerate() {
            let c = c_out.get(k).ok_or_else(no_coarse)?;
            let field = match (port.kind, first) {
                (crate::node::PortKind::Height, Some(j)) => {
                    let (Some(tile_in), Some(Some(c_in))) =
                        (inputs.get(j).cloned().flatten(), c_inputs.get(j))
                    else {
                        return Err(NodeError::MissingInput(n.def.spec.inputs[j].name));
                    };
                    let change = Field::zip_map(c, c_in, |o, i| o - i);
                    let refined = if super::window::refines(n, resolution, Some(c_in.width())) {
                        Self::refine_pieces(graph, i, resolution, opts, inputs, sp, &change)?
                    } else {
                        None
                    };
                    let delta = refined.unwrap_or_else(|| up(&change));
                    Field::zip_map(&sp.eval.crop(&tile_in, &w), &delta, |t, d| t + d)
                }
                _ => up(c),
            };
            out.push(field);
        }
        opts.cancel
            .is_cancelled()
            .then_some(())
            .map_or(Ok(out), |()| Err(NodeError::Cancelled))
    }

    /// A global node's change over `sp.out`, refined finer than the coarse pass on every piece
    /// covering it (`eval::pieces`), blended by the pieces' weights; `inputs` are over
    /// `sp.eval` (which holds every such piece's window), `change` the coarse change. `None`
    /// when the node does not refine with its parameters.
    fn refine_pieces(
        graph: &Graph,
        i: usize,
        resolution: usize,
        opts: &EvalOptions,
        inputs: &[Option<Arc<Field>>],
        sp: Span,
        change: &Field,
    ) -> Result<Option<Field>, NodeError> {
        use super::pieces;
        if graph.nodes[i].def.tile_refine.is_none() {
            return Ok(None);
        }
        let out = sp.out;
        let mut acc = vec![0.0f32; out.width * out.height];
        let memo = std::sync::Mutex::new(UpstreamMemo::new());
        // Pieces moved inside a small map share their window (the whole map): refined once.
        let mut last: Option<(crate::node::Window, Arc<Field>)> = None;
        for piece in pieces::covering(out, resolution) {
            opts.cancel
                .is_cancelled()
                .then_some(())
                .map_or(Ok(()), |()| Err(NodeError::Cancelled))?;
            let pw = piece.window(resolution);
            let delta = match &last {
                Some((w, d)) if *w == pw => Arc::clone(d),
                _ => {
                    let cut: Vec<Option<Arc<Field>>> = inputs
                        .iter()
                        .map(|f| f.as_ref().map(|f| Arc::new(sp.eval.crop(f, &pw))))
                        .collect();
                    let Some(d) =
                        Self::refine_piece(graph, i, resolution, opts, &cut, change, pw, &memo)?
                    else {
                        return Ok(None);
                    };
                    let d = Arc::new(d);
                    last = Some((pw, Arc::clone(&d)));
                    d
                }
            };
            pieces::blend_into(&mut acc, out, piece, pw, delta.data(), resolution);
        }
        Ok(Field::from_vec(out.width, out.height, acc))
    }

    /// One piece's refined change over its window `pw` (see [`Evaluator::refine_pieces`]):
    /// `inputs` are node `i`'s inputs over `pw`, `change` its change at the coarse size,
    /// `memo` the graph upstream at other resolutions, shared by the pieces of one node.
    /// `None` when the node does not refine with its parameters.
    #[expect(
        clippy::too_many_arguments,
        reason = "a piece's inputs, as the staged plan and the carried tile both hold them"
    )]
    pub(crate) fn refine_piece(
        graph: &Graph,
        i: usize,
        resolution: usize,
        opts: &EvalOptions,
        inputs: &[Option<Arc<Field>>],
        change: &Field,
        pw: crate::node::Window,
        memo: &std::sync::Mutex<UpstreamMemo>,
    ) -> Result<Option<Field>, NodeError> {
        let Some(refine) = graph.nodes[i].def.tile_refine else {
            return Ok(None);
        };
        let n = &graph.nodes[i];
        let coarse_res = change.width();
        let rect = (pw.x0, pw.y0, pw.width, pw.height);
        // Across a jump of 4× or more, bilinear filtering leaves creases along the coarse
        // cells (as in the whole map's levels).
        let coarse = if resolution >= 4 * coarse_res {
            change.resample_cubic_window(resolution, rect)
        } else {
            change.resample_bilinear_window(resolution, rect)
        };
        let quiet = |_: f32| {};
        // The graph upstream over the whole world at another (a base) resolution: a piece
        // can run the whole map's base level exactly.
        let upstream = |port: usize, res: usize| {
            let known = memo.lock().ok().and_then(|m| m.get(&(port, res)).cloned());
            if let Some(f) = known {
                return Ok(f);
            }
            let f = upstream_at(graph, i, port, res, opts)?;
            if let Ok(mut m) = memo.lock() {
                m.insert((port, res), f.clone());
            }
            Ok(f)
        };
        let ctx = EvalCtx {
            resolution,
            window: pw,
            world: graph.world,
            graph_seed: graph.seed,
            node_id: &n.id,
            base_dir: opts.base_dir,
            allow_outside: opts.allow_outside,
            cancel: &opts.cancel,
            progress: &quiet,
            upstream: Some(&upstream),
            arrays: opts.arrays,
        };
        let ins = crate::node::Inputs {
            spec: &n.def.spec,
            fields: inputs,
        };
        refine(&ctx, &ins, &n.params, &coarse, coarse_res).transpose()
    }

    pub(super) fn run_node(
        graph: &Graph,
        i: usize,
        resolution: usize,
        opts: &EvalOptions,
        live: &HashMap<usize, NodeFields>,
    ) -> Result<Vec<Field>, NodeError> {
        let n = &graph.nodes[i];
        let spec = &n.def.spec;
        let inputs = Self::gather_inputs(graph, i, live, |_, f| Some(Arc::clone(f)))?;
        let report = |fraction: f32| {
            if let Some(p) = opts.progress {
                p(ProgressEvent::Progress {
                    node: &n.id,
                    fraction,
                });
            }
        };
        let upstream = |port: usize, res: usize| upstream_at(graph, i, port, res, opts);
        let ctx = EvalCtx {
            resolution,
            window: crate::node::Window::full(resolution),
            world: graph.world,
            graph_seed: graph.seed,
            node_id: &n.id,
            base_dir: opts.base_dir,
            allow_outside: opts.allow_outside,
            cancel: &opts.cancel,
            progress: &report,
            upstream: Some(&upstream),
            arrays: opts.arrays,
        };
        if let Some(p) = opts.progress {
            p(ProgressEvent::Started { node: &n.id });
        }
        let out = n.def.eval(&ctx, &inputs, &n.params);
        let out = out.and_then(|fields| {
            if fields.len() != spec.outputs.len() {
                return Err(NodeError::Failed(format!(
                    "internal error: {} returned {} outputs, declared {}",
                    spec.id,
                    fields.len(),
                    spec.outputs.len()
                )));
            }
            if let Some(f) = fields
                .iter()
                .find(|f| f.width() != resolution || f.height() != resolution)
            {
                return Err(NodeError::Failed(format!(
                    "internal error: {} returned a {}×{} field at resolution {resolution}",
                    spec.id,
                    f.width(),
                    f.height()
                )));
            }
            Ok(fields)
        });
        if let Some(p) = opts.progress {
            p(ProgressEvent::Finished {
                node: &n.id,
                ok: out.is_ok(),
            });
        }
        out
    }
}
