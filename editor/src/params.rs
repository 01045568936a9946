//! The parameter panel, derived from the node declarations: sliders over the soft range with
//! typed entry up to the hard range, units, seeds with a randomise button, choices as combo
//! boxes, the docs as tooltips and a reset-to-default button. Also the graph's own settings.
//!
//! Each widget edits the document through [`Document::edit`] with a gesture key, so one slider
//! drag or one typed number is one undo step.

use crate::doc::Document;
use egui::Ui;
use orogen::node::{ParamKind, ParamSpec, ParamValue};

/// Shows the parameters of node `id`.
pub fn node_panel(ui: &mut Ui, doc: &mut Document, id: &str) -> Option<&'static str> {
    let Some(node) = doc.graph().node(id) else {
        ui.weak("Select a node to edit its parameters.");
        return None;
    };
    let def = node.def;
    let values = node.params.clone();
    let (mut label, mut bypass) = (node.label.clone(), node.bypass);
    ui.heading(if label.is_empty() {
        def.spec.label
    } else {
        &label
    });
    ui.label(egui::RichText::new(format!("{id}  ·  {}", def.spec.id)).weak());
    ui.horizontal(|ui| {
        let name = ui.label("Name");
        let r = ui
            .add(
                egui::TextEdit::singleline(&mut label)
                    .hint_text(def.spec.label)
                    .desired_width(150.0),
            )
            .labelled_by(name.id)
            .on_hover_text(
                "What the canvas calls this node (kept in the file; empty: its type's name)",
            );
        if r.changed() {
            let text: String = label.chars().take(200).collect();
            doc.apply(Some(&format!("label {id}")), |g| {
                if let Some(n) = g.node_mut(id) {
                    n.label = text;
                }
            });
        }
        if !def.spec.inputs.is_empty()
            && ui
                .checkbox(&mut bypass, "Bypass")
                .on_hover_text("Hand the input on unchanged (B); builds honour it")
                .changed()
        {
            doc.apply(None, |g| {
                crate::doc::set_bypass(g, &[id.to_owned()], bypass);
            });
        }
    });
    description(ui, def.spec.doc).on_hover_text(format!(
        "node type \"{}\", version {}",
        def.spec.id, def.spec.version
    ));
    resolution_badge(ui, def.resolution(&values));
    ui.separator();
    if def.params.is_empty() {
        ui.weak("This node has no parameters.");
    }
    egui::Grid::new("orogen-params")
        .num_columns(3)
        .striped(true)
        .show(ui, |ui| {
            for (spec, value) in def.params.iter().zip(values.iter().cloned()) {
                // Parameters that do not apply to the chosen mode are hidden, not greyed.
                if spec.applies(def.params, &values) {
                    let bound = doc
                        .graph()
                        .node(id)
                        .and_then(|n| n.bindings.get(spec.name).cloned());
                    match bound {
                        Some(g) => bound_row(ui, doc, id, spec, &value, &g),
                        None => param_row(ui, doc, Target::Node(id), spec, value),
                    }
                    ui.end_row();
                }
            }
        });
    if let Some(swatch) = def.spec.traits.swatch {
        gradient_swatch(ui, swatch, &values);
    }
    // A node that reads a file: choose it with the file chooser.
    def.spec.traits.file_param.filter(|_| {
        ui.button("Browse…")
            .on_hover_text("Choose the file with the file chooser (its path is kept relative to the graph's folder)")
            .clicked()
    })
}

/// Characters of a node's description shown before "more".
const SUMMARY_CHARS: usize = 160;

/// A node's description above its parameters: its first sentence (at most
/// [`SUMMARY_CHARS`] characters, cut at a word) with "more", which shows all of it for every
/// node until "less"; the parameters come first on the screen, not the paper.
fn description(ui: &mut Ui, doc: &str) -> egui::Response {
    let text = orogen::node::clean_doc(doc);
    let short = summary(&text, SUMMARY_CHARS);
    let id = egui::Id::new("orogen-node-doc-expanded");
    let mut expanded = ui.data(|d| d.get_temp::<bool>(id)).unwrap_or(false);
    let r = ui.add(egui::Label::new(if expanded { &text } else { &short }).wrap());
    if short.len() < text.len() {
        let label = if expanded { "less" } else { "more…" };
        if ui.link(label).clicked() {
            expanded = !expanded;
            ui.data_mut(|d| d.insert_temp(id, expanded));
        }
    }
    r
}

/// The first sentence of `text` (a full stop followed by a space and a capital, outside
/// brackets), cut at a word boundary with "…" when longer than `max` characters.
#[must_use]
pub fn summary(text: &str, max: usize) -> String {
    let mut depth = 0i32;
    let mut end = text.len();
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    for (k, &(i, c)) in chars.iter().enumerate() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            '.' if depth <= 0
                && chars.get(k + 1).is_some_and(|&(_, n)| n == ' ')
                && chars.get(k + 2).is_some_and(|&(_, n)| n.is_uppercase()) =>
            {
                end = i + 1;
                break;
            }
            _ => {}
        }
    }
    let first = &text[..end];
    if first.chars().count() <= max {
        return first.to_owned();
    }
    let cut: String = first.chars().take(max).collect();
    let at_word = cut.rfind(' ').map_or(cut.as_str(), |i| &cut[..i]);
    format!("{}…", at_word.trim_end_matches([',', ';', ':']))
}

/// The colour ramp a node's parameters choose (its declared swatch, e.g. `colorize`'s
/// gradient), drawn as a bar from its start (left) to its end (a ramp that does not parse
/// draws nothing: the node's error line under the parameters says why).
fn gradient_swatch(ui: &mut Ui, swatch: orogen::node::Swatch, values: &[ParamValue]) {
    const STEPS: usize = 96;
    let Some(colours) = swatch(values, STEPS) else {
        return;
    };
    let size = egui::vec2(ui.available_width().clamp(64.0, 240.0), 14.0);
    let (rect, resp) = ui.allocate_exact_size(size, egui::Sense::hover());
    let w = rect.width() / STEPS as f32;
    for (k, c) in colours.into_iter().enumerate() {
        let [r, gr, b] = c.map(|v| (orogen::io::heightmap::srgb_encode(v) * 255.0).round() as u8);
        let x = rect.left() + k as f32 * w;
        let cell = egui::Rect::from_min_max(
            egui::pos2(x, rect.top()),
            egui::pos2(x + w + 0.5, rect.bottom()),
        );
        ui.painter()
            .rect_filled(cell, 0.0, egui::Color32::from_rgb(r, gr, b));
    }
    resp.on_hover_text("The gradient: position 0 on the left, 1 on the right.");
}

/// Width of the parameter-name column.
const LABEL_WIDTH: f32 = 110.0;

/// How long a refused value's message stays under its parameter.
const REFUSAL_TIME: f64 = 6.0;

/// Whether the node's preview predicts the build, from its declaration and parameters.
fn resolution_badge(ui: &mut Ui, r: orogen::node::ResolutionBehaviour) {
    use orogen::node::ResolutionBehaviour as R;
    let (text, tip, colour) = match r {
        R::Independent => (
            "✔ same terrain at every resolution".to_owned(),
            "This node samples functions of world coordinates: the preview is the build, only sharper.".to_owned(),
            egui::Color32::from_rgb(120, 200, 120),
        ),
        R::CoarseToFine { base } => (
            format!("✔ same terrain at every resolution (runs at {base}², refines finer builds)"),
            format!(
                "The process runs in full at {base}²; a finer build adds detail below those cells \
                 and a coarser preview averages it, so the preview is the build, only sharper \
                 (`orogen parity` measures it)."
            ),
            egui::Color32::from_rgb(120, 200, 120),
        ),
        R::Dependent => (
            "⚠ depends on the resolution (detail = native)".to_owned(),
            "The process runs once at the resolution evaluated, so a 256² preview and a 2048² build \
             differ. Set Resolution handling to consistent for the same terrain at every size."
                .to_owned(),
            egui::Color32::from_rgb(230, 170, 60),
        ),
        R::PerCell => (
            "⚠ measured over the grid's cells (scale 0)".to_owned(),
            "Measured over the grid's own cells: a finer build resolves steeper small faces (and \
             bumps a river follows across a gentle floor) than the preview's cells hold, so the \
             result changes with the resolution. Set the scale to −1 (auto: a fixed share of the \
             world) for a result the preview predicts."
                .to_owned(),
            egui::Color32::from_rgb(230, 170, 60),
        ),
    };
    ui.add(egui::Label::new(egui::RichText::new(text).small().color(colour)).wrap())
        .on_hover_text(tip);
}

/// What a parameter row edits.
#[derive(Clone, Copy)]
pub enum Target<'a> {
    /// A node's parameter.
    Node(&'a str),
    /// A graph parameter.
    Graph,
}

/// A node parameter bound to graph parameter `g`: its value, read-only, and "unbind".
fn bound_row(
    ui: &mut Ui,
    doc: &mut Document,
    id: &str,
    spec: &ParamSpec,
    value: &ParamValue,
    g: &str,
) {
    ui.scope(|ui| {
        ui.set_max_width(LABEL_WIDTH);
        ui.add(egui::Label::new(spec.label()).wrap())
    })
    .inner
    .on_hover_text(spec.doc_text());
    ui.label(format!(
        "{}{}  ⇐ {g}",
        value.display(spec),
        suffix(spec.unit)
    ))
    .on_hover_text(format!(
        "Bound to the graph parameter \"{g}\": set it under Graph parameters."
    ));
    if ui
        .small_button("⛓")
        .on_hover_text("Unbind: this node keeps the value as its own")
        .clicked()
    {
        let (id, name) = (id.to_owned(), spec.name);
        doc.apply(None, |g| {
            if let Some(n) = g.node_mut(&id) {
                n.bindings.remove(name);
            }
        });
    }
}

/// One graph parameter's row: the value widget of its kind and range.
pub fn graph_param_row(ui: &mut Ui, doc: &mut Document, p: &orogen::graph::GraphParam) {
    param_row(ui, doc, Target::Graph, p.spec, p.value.clone());
}

fn param_row(ui: &mut Ui, doc: &mut Document, target: Target, spec: &ParamSpec, value: ParamValue) {
    let doc_text = spec.doc_text();
    // Long labels wrap in a column of their own width, so the panel keeps its size.
    ui.scope(|ui| {
        ui.set_max_width(LABEL_WIDTH);
        ui.add(egui::Label::new(spec.label()).wrap())
    })
    .inner
    .on_hover_text(format!(
        "{doc_text}\n\n\"{}\" in graph files; accepts {}; default {}.",
        spec.name,
        spec.expected(),
        spec.default_text()
    ));
    let key = match target {
        Target::Node(id) => format!("{id}.{}", spec.name),
        Target::Graph => format!("graph-parameter.{}", spec.name),
    };
    let refusal_id = egui::Id::new(("orogen-param-refused", &key));
    let (resp, mut new, refused) = value_widget(ui, spec, &value, &key);
    let editing = resp.dragged() || resp.has_focus();
    if editing {
        doc.keep_gesture(&key);
    } else {
        // Never over the widget while it is being dragged or typed into.
        resp.on_hover_text(format!("{doc_text}\n\nAccepts {}.", spec.expected()));
    }
    let default = spec.default_value();
    let mut reset = false;
    let mut promote = false;
    ui.horizontal(|ui| {
        reset = ui
            .add_enabled(value != default, egui::Button::new("⟲").small())
            .on_hover_text(format!("Reset to {}", spec.default_text()))
            .clicked();
        if let Target::Node(_) = target {
            promote = ui
                .small_button("⤴")
                .on_hover_text("Promote to a graph parameter: `orogen build --param` and a subgraph's users can set it")
                .clicked();
        }
    });
    if reset {
        new = Some(default);
    }
    if let Some(v) = new {
        let gesture = (!reset).then_some(key.as_str());
        // A failure is kept by the document and shown in the status bar.
        let _ = match target {
            Target::Node(id) => doc.edit(gesture, |g| g.set_param(id, spec.name, v)),
            Target::Graph => doc.edit(gesture, |g| g.set_parameter(spec.name, v)),
        };
    }
    if let (true, Target::Node(id)) = (promote, target) {
        let _ = doc.edit(None, |g| g.promote_parameter(id, spec.name));
    }
    // A typed value outside the hard range is not applied: the range is shown instead.
    let now = ui.input(|i| i.time);
    if let Some(msg) = refused {
        ui.data_mut(|d| d.insert_temp(refusal_id, (msg, now)));
    }
    if let Some((msg, at)) = ui.data(|d| d.get_temp::<(String, f64)>(refusal_id)) {
        if now - at < REFUSAL_TIME {
            ui.end_row();
            ui.label("");
            ui.colored_label(egui::Color32::from_rgb(235, 70, 60), format!("⚠ {msg}"));
            ui.ctx()
                .request_repaint_after(std::time::Duration::from_millis(500));
        } else {
            ui.data_mut(|d| d.remove::<(String, f64)>(refusal_id));
        }
    }
}

/// The widget for a parameter's value (slider, seed, checkbox, menu, text): its response, the
/// new value when the user changed it, and why a typed value was refused (outside the hard
/// range).
fn value_widget(
    ui: &mut Ui,
    spec: &ParamSpec,
    value: &ParamValue,
    key: &str,
) -> (egui::Response, Option<ParamValue>, Option<String>) {
    let mut refused: Option<String> = None;
    let mut new = None;
    let resp = match (spec.kind, value) {
        (ParamKind::Float { soft, hard, .. }, ParamValue::Float(v)) => {
            let mut x = *v;
            let slider = egui::Slider::new(&mut x, soft.0..=soft.1)
                .clamping(egui::SliderClamping::Never)
                .logarithmic(soft.0 > 0.0 && soft.1 / soft.0 > 100.0);
            // A measuring scale whose negative values mean "auto" (a share of the world):
            // shown and typed as the word, the unit only beside a distance.
            let slider = if spec.name == "scale_m" && hard.0 < 0.0 {
                let unit = suffix(spec.unit);
                slider
                    .custom_formatter(move |v, decimals| {
                        if v < 0.0 {
                            "auto".to_owned()
                        } else {
                            let v = egui::emath::format_with_decimals_in_range(v, decimals);
                            format!("{v}{unit}")
                        }
                    })
                    .custom_parser(|t| {
                        let t = t.trim();
                        if t.eq_ignore_ascii_case("auto") {
                            return Some(-1.0);
                        }
                        // The unit, and the minus sign the tooltips print (U+2212).
                        let t = t.trim_end_matches('m').trim().replace('\u{2212}', "-");
                        t.parse().ok()
                    })
            } else {
                slider.suffix(suffix(spec.unit))
            };
            let r = ui.add(slider);
            if !(hard.0..=hard.1).contains(&x) {
                refused = Some(format!(
                    "{x} is outside the allowed range [{}, {}]",
                    hard.0, hard.1
                ));
            } else if x != *v {
                new = Some(ParamValue::Float(x));
            }
            r
        }
        (ParamKind::Int { soft, hard, .. }, ParamValue::Int(v)) => {
            let mut x = *v;
            let r = ui.add(
                egui::Slider::new(&mut x, soft.0..=soft.1)
                    .clamping(egui::SliderClamping::Never)
                    .suffix(suffix(spec.unit)),
            );
            if !(hard.0..=hard.1).contains(&x) {
                refused = Some(format!(
                    "{x} is outside the allowed range [{}, {}]",
                    hard.0, hard.1
                ));
            } else if x != *v {
                new = Some(ParamValue::Int(x));
            }
            r
        }
        (ParamKind::Seed { .. }, ParamValue::Int(v)) => {
            let mut x = *v;
            let r = ui
                .horizontal(|ui| {
                    let r = ui.add(egui::DragValue::new(&mut x).range(0..=i64::from(u32::MAX)));
                    if ui.button("🎲").on_hover_text("Random seed").clicked() {
                        x = i64::from(random_seed());
                    }
                    r
                })
                .inner;
            if x != *v {
                new = Some(ParamValue::Int(x.clamp(0, i64::from(u32::MAX))));
            }
            r
        }
        (ParamKind::Bool { .. }, ParamValue::Bool(v)) => {
            let mut x = *v;
            let r = ui.checkbox(&mut x, "");
            if x != *v {
                new = Some(ParamValue::Bool(x));
            }
            r
        }
        (ParamKind::Choice { options, .. }, ParamValue::Choice(v)) => {
            let mut x = *v;
            let r = egui::ComboBox::from_id_salt(key)
                .selected_text(options.get(x).copied().unwrap_or("?"))
                .show_ui(ui, |ui| {
                    for (i, o) in options.iter().enumerate() {
                        ui.selectable_value(&mut x, i, *o);
                    }
                })
                .response;
            if x != *v {
                new = Some(ParamValue::Choice(x));
            }
            r
        }
        (ParamKind::Text { .. }, ParamValue::Text(v)) => {
            let mut x = v.clone();
            let r = ui.text_edit_singleline(&mut x);
            if x != *v {
                new = Some(ParamValue::Text(x));
            }
            r
        }
        _ => ui.colored_label(egui::Color32::RED, format!("{value:?}")),
    };
    (resp, new, refused)
}

fn suffix(unit: &str) -> String {
    if unit.is_empty() {
        String::new()
    } else {
        format!(" {unit}")
    }
}

/// A seed from the clock (randomising needs no reproducibility; the chosen value is stored).
fn random_seed() -> u32 {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    (orogen::node::splitmix64(t) >> 32) as u32
}

/// The graph's own settings: name, seed, world size, height range, build resolution.
pub fn graph_panel(ui: &mut Ui, doc: &mut Document) {
    let g = doc.graph().clone();
    ui.heading("Graph");
    egui::Grid::new("orogen-graph-settings")
        .num_columns(2)
        .show(ui, |ui| {
            ui.label("name");
            let mut name = g.name.clone();
            let r = ui.text_edit_singleline(&mut name);
            if r.has_focus() {
                doc.keep_gesture("graph.name");
            }
            if name != g.name {
                doc.apply(Some("graph.name"), |g| {
                    g.name = name;
                });
            }
            ui.end_row();

            ui.label("seed")
                .on_hover_text("Graph seed: every node's randomness derives from it.");
            let mut seed = g.seed;
            ui.horizontal(|ui| {
                let r = ui.add(egui::DragValue::new(&mut seed));
                if r.dragged() || r.has_focus() {
                    doc.keep_gesture("graph.seed");
                }
                if ui.button("🎲").on_hover_text("Random seed").clicked() {
                    seed = u64::from(random_seed());
                }
            });
            if seed != g.seed {
                doc.apply(Some("graph.seed"), |g| {
                    g.seed = seed;
                });
            }
            ui.end_row();

            let mut w = g.world;
            world_row(
                ui,
                doc,
                "world size",
                "world.size",
                &mut w.size_m,
                10.0..=1.0e6,
                " m",
                "Side length of the square world.",
            );
            world_row(
                ui,
                doc,
                "lowest height",
                "world.min",
                &mut w.height_min_m,
                -1.0e4..=1.0e4,
                " m",
                "Height of mask value 0 and the bottom of the display range.",
            );
            world_row(
                ui,
                doc,
                "highest height",
                "world.max",
                &mut w.height_max_m,
                -1.0e4..=1.0e4,
                " m",
                "Height of mask value 1 and the top of the display range.",
            );
            if w != g.world && w.height_max_m > w.height_min_m && w.size_m > 0.0 {
                doc.apply(Some("graph.world"), |g| {
                    g.world = w;
                });
            }

            ui.label("build resolution")
                .on_hover_text("Samples per side written by builds (previews use their own).");
            let mut res = g.resolution;
            egui::ComboBox::from_id_salt("orogen-build-res")
                .selected_text(format!("{res}²"))
                .show_ui(ui, |ui| {
                    for r in [256, 512, 1024, 2048, 4096, 8192] {
                        ui.selectable_value(&mut res, r, format!("{r}²"));
                    }
                });
            if res != g.resolution {
                doc.apply(None, |g| {
                    g.resolution = res;
                });
            }
            ui.end_row();
        });
    if !g.outputs.is_empty() {
        ui.separator();
        ui.label("Outputs written by builds:");
        for (name, r) in &g.outputs {
            ui.label(format!("  {name} = {r}"));
        }
    }
}

#[expect(clippy::too_many_arguments)]
fn world_row(
    ui: &mut Ui,
    doc: &mut Document,
    label: &str,
    key: &str,
    v: &mut f64,
    range: std::ops::RangeInclusive<f64>,
    suffix: &str,
    tip: &str,
) {
    ui.label(label).on_hover_text(tip);
    let r = ui.add(
        egui::DragValue::new(v)
            .range(range)
            .suffix(suffix)
            .speed(1.0),
    );
    if r.dragged() || r.has_focus() {
        doc.keep_gesture("graph.world");
    }
    let _ = key;
    ui.end_row();
}

#[cfg(test)]
mod summary_tests {
    use super::summary;

    #[test]
    fn the_first_sentence_outside_brackets_cut_at_a_word() {
        assert_eq!(summary("One. Two.", 100), "One.");
        assert_eq!(
            summary("Blur (Smith et al. 2004. See). Then more.", 100),
            "Blur (Smith et al. 2004. See)."
        );
        assert_eq!(summary("no full stop here", 100), "no full stop here");
        assert_eq!(
            summary("e.g. this is one sentence", 100),
            "e.g. this is one sentence"
        );
        assert_eq!(summary("alpha beta gamma delta. Next.", 12), "alpha beta…");
        assert_eq!(summary("alpha, beta gamma", 7), "alpha…");
    }
}
