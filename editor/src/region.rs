//! Region preview: a rectangle dragged on the 2D preview is evaluated at the build
//! resolution as a tiled build computes it ([`orogen::tiles::evaluate_region_as_built`]: the
//! global nodes in their stages over the whole world, erosion on its pieces and water exact,
//! then only the region) — so an artist checks fine detail, and the rivers the build will
//! have, without writing a build.

use crate::preview::{Look, Picture, Shown};
use orogen::eval::{EvalOptions, Targets};
use orogen::node::{CancelToken, PortKind, Window};
use orogen::{Field, Graph, World};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The largest region side, in samples at the build resolution.
pub const MAX_SIDE: usize = 2048;

enum State {
    Running,
    Ready(Arc<Field>, PortKind),
    Failed(String),
}

/// A region being evaluated or shown.
pub struct Region {
    pub node: String,
    pub output: usize,
    /// The document revision it was made from (an edit makes it stale).
    pub revision: u64,
    pub window: Window,
    pub resolution: usize,
    world: World,
    started: Instant,
    took: Option<Duration>,
    state: Arc<Mutex<State>>,
    cancel: CancelToken,
    picture: Picture,
    /// The whole-map picture and the part of it (uv) this region is: shown, enlarged, until
    /// the region's own evaluation arrives.
    pub placeholder: Option<(egui::TextureHandle, egui::Rect)>,
    /// The graph's sea level, for the terrain colours.
    sea_m: Option<f32>,
}

impl Region {
    /// Starts evaluating the part `uv` (`[u0, v0, u1, v1]` in 0…1 of the map) of `node`'s
    /// output `output` at the graph's resolution, on a thread of its own.
    pub fn start(
        graph: &Graph,
        graph_file: Option<PathBuf>,
        work: Option<Arc<tempfile::TempDir>>,
        (node, output, revision): (&str, usize, u64),
        uv: [f32; 4],
        repaint: Option<egui::Context>,
    ) -> Result<Self, String> {
        let n = graph.resolution;
        let edge = |t: f32| ((f64::from(t.clamp(0.0, 1.0)) * n as f64).round() as usize).min(n);
        let (x0, x1) = (edge(uv[0].min(uv[2])), edge(uv[0].max(uv[2])));
        let (y0, y1) = (edge(uv[1].min(uv[3])), edge(uv[1].max(uv[3])));
        if x1 - x0 < 4 || y1 - y0 < 4 {
            return Err("drag a larger rectangle (at least 4 samples a side)".into());
        }
        if x1 - x0 > MAX_SIDE || y1 - y0 > MAX_SIDE {
            return Err(format!(
                "that region is {}×{} samples at the build resolution {n}²; drag one of at most {MAX_SIDE} a side",
                x1 - x0,
                y1 - y0
            ));
        }
        let window = Window {
            x0,
            y0,
            width: x1 - x0,
            height: y1 - y0,
        };
        let cell = graph.world.cell_size_m(n);
        let state = Arc::new(Mutex::new(State::Running));
        let cancel = CancelToken::new();
        let (g, st, c, id) = (
            graph.clone(),
            Arc::clone(&state),
            cancel.clone(),
            node.to_owned(),
        );
        std::thread::Builder::new()
            .name("orogen-region".into())
            .spawn(move || {
                let base_dir = graph_file.as_deref().and_then(std::path::Path::parent);
                let opts = EvalOptions {
                    targets: Targets::Nodes(vec![id.clone()]),
                    cancel: c,
                    base_dir,
                    ..EvalOptions::default()
                };
                // The stages' plan folder: the app's for this revision (shared by its
                // regions, removed when the graph changes), else one for this region alone.
                let own = match work {
                    Some(w) => Ok(w),
                    None => tempfile::Builder::new()
                        .prefix("orogen-region-")
                        .tempdir()
                        .map(Arc::new)
                        .map_err(|e| format!("cannot make a folder for the region's stages: {e}")),
                };
                let result = own.and_then(|work| {
                    orogen::tiles::evaluate_region_as_built(
                        &g,
                        graph_file.as_deref(),
                        g.resolution,
                        orogen::tiles::COARSE_MAX,
                        window,
                        work.path(),
                        &opts,
                    )
                });
                let out = result.and_then(|res| {
                    let n = g.node(&id).ok_or("the node was deleted")?;
                    let port = n.def.spec.outputs.get(output).ok_or("no such output")?;
                    let f = res
                        .fields
                        .get(&id)
                        .and_then(|fs| fs.get(output).cloned())
                        .ok_or_else(|| {
                            res.status
                                .get(&id)
                                .map_or("not evaluated".to_owned(), |s| format!("{s:?}"))
                        })?;
                    Ok((f, port.kind))
                });
                *st.lock().unwrap_or_else(PoisonError::into_inner) = match out {
                    Ok((f, k)) => State::Ready(f, k),
                    Err(e) => State::Failed(e),
                };
                if let Some(ctx) = repaint {
                    ctx.request_repaint();
                }
            })
            .map_err(|e| format!("cannot start the region evaluation: {e}"))?;
        Ok(Self {
            node: node.to_owned(),
            output,
            revision,
            window,
            resolution: n,
            world: World {
                size_m: window.width as f64 * cell,
                ..graph.world
            },
            started: Instant::now(),
            took: None,
            state,
            cancel,
            picture: Picture::default(),
            placeholder: None,
            sea_m: graph.sea_level_m(),
        })
    }

    /// The region's field once it is ready.
    #[must_use]
    pub fn field(&self) -> Option<Arc<Field>> {
        match &*self.state.lock().unwrap_or_else(PoisonError::into_inner) {
            State::Ready(f, _) => Some(Arc::clone(f)),
            _ => None,
        }
    }

    /// Waits up to `timeout` for the evaluation to end; true when it has.
    pub fn wait(&self, timeout: Duration) -> bool {
        let end = Instant::now() + timeout;
        while Instant::now() < end {
            if !matches!(
                *self.state.lock().unwrap_or_else(PoisonError::into_inner),
                State::Running
            ) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        false
    }

    /// Draws the region (or its progress). Returns true when the user asks for the whole map.
    pub fn show(&mut self, ui: &mut egui::Ui, look: Look) -> bool {
        let cell = self.world.size_m / self.window.width as f64;
        let w = self.window;
        let mut back = false;
        ui.horizontal_wrapped(|ui| {
            ui.strong("Region");
            ui.label(format!(
                "x {:.0}–{:.0} m, y {:.0}–{:.0} m: {}×{} samples at the build resolution {}²",
                w.x0 as f64 * cell,
                (w.x0 + w.width) as f64 * cell,
                w.y0 as f64 * cell,
                (w.y0 + w.height) as f64 * cell,
                w.width,
                w.height,
                self.resolution
            ));
            back = ui
                .button("Whole map")
                .on_hover_text("Back to the preview of the whole map (Esc)")
                .clicked();
        });
        back |= ui.input(|i| i.key_pressed(egui::Key::Escape));
        let state = {
            let s = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            match &*s {
                State::Running => None,
                State::Ready(f, k) => Some(Ok((Arc::clone(f), *k))),
                State::Failed(e) => Some(Err(e.clone())),
            }
        };
        match state {
            None => {
                ui.horizontal(|ui| {
                    crate::worker::busy(ui);
                    ui.label(format!(
                        "Evaluating the region… {:.0} s (the preview, enlarged, until then)",
                        self.started.elapsed().as_secs_f32()
                    ));
                });
                if let Some((tex, uv)) = &self.placeholder {
                    let avail = ui.available_size() - egui::Vec2::new(0.0, 20.0);
                    let aspect = w.width as f32 / w.height.max(1) as f32;
                    let width = avail.x.min(avail.y * aspect).max(1.0);
                    ui.add(
                        egui::Image::new((tex.id(), egui::Vec2::new(width, width / aspect)))
                            .uv(*uv),
                    );
                }
                ui.ctx()
                    .request_repaint_after(crate::worker::PROGRESS_FRAME);
            }
            Some(Err(e)) => {
                ui.colored_label(egui::Color32::LIGHT_RED, format!("Cannot evaluate it: {e}"));
            }
            Some(Ok((field, kind))) => {
                let took = *self.took.get_or_insert_with(|| self.started.elapsed());
                let shown = Shown {
                    field,
                    kind,
                    base: None,
                    world: self.world,
                    origin_m: [w.x0 as f64 * cell, w.y0 as f64 * cell],
                    sea_m: self.sea_m,
                };
                self.picture
                    .update(ui.ctx(), (0, self.node.clone(), self.output, look), &shown);
                ui.weak(format!("evaluated in {:.1} s", took.as_secs_f64()));
                let _ = self.picture.show(ui, Some(&shown));
            }
        }
        back
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}
