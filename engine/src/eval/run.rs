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
use crate::node::Window;
use std::collections::HashMap;
use std::sync::Arc;

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
            return Self::carry_global(graph, i, resolution, opts, &inputs, sp.out);
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
    /// node made over the whole world at the coarse size (upsampled to the tile's cells: the
    /// same value wherever a cell is computed, so neighbouring tiles agree on the cells they
    /// share); its other outputs are its whole-world outputs upsampled.
    fn carry_global(
        graph: &Graph,
        i: usize,
        resolution: usize,
        opts: &EvalOptions,
        inputs: &[Option<Arc<Field>>],
        w: Window,
    ) -> Result<Vec<Field>, NodeError> {
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
                    Field::zip_map(&tile_in, &up(&change), |t, d| t + d)
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
