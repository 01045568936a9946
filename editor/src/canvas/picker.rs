//! The node picker: node types by category, filtered by a search, for the add-node menu.

use egui::Id;
use egui::Ui;
use orogen::node::Category;
use orogen::node::Registry;

/// The add-node search: its text (shared by the canvas's context menu and the Space popup)
/// and where the Space popup is open.
#[derive(Default)]
pub(super) struct Search {
    pub(super) text: String,
    pub(super) space_menu: Option<egui::Pos2>,
}

/// The add-node list: type to search (name, id or category; Enter takes the first hit), or
/// browse by category. Returns the chosen node type.
pub(super) fn node_picker(ui: &mut Ui, search: &mut String) -> Option<&'static str> {
    let r = ui.add(
        egui::TextEdit::singleline(&mut *search)
            .hint_text("Search nodes…")
            .id(Id::new("orogen-node-search")),
    );
    if !r.has_focus() && search.is_empty() {
        r.request_focus();
    }
    let needle = search.to_lowercase();
    let defs = Registry::builtin().defs();
    let mut chosen = None;
    if needle.is_empty() {
        for cat in categories() {
            let mut of_cat: Vec<_> = defs.iter().filter(|d| d.spec.category == cat).collect();
            if of_cat.is_empty() {
                continue;
            }
            of_cat.sort_by_key(|d| d.spec.label);
            ui.menu_button(cat.name(), |ui| {
                for d in of_cat {
                    if ui
                        .button(d.spec.label)
                        .on_hover_text(orogen::node::clean_doc(d.spec.doc))
                        .clicked()
                    {
                        chosen = Some(d.spec.id);
                    }
                }
            });
        }
    } else {
        let mut hits: Vec<_> = defs
            .iter()
            .filter(|d| {
                d.spec.label.to_lowercase().contains(&needle)
                    || d.spec.id.contains(&needle)
                    || d.spec.category.name().to_lowercase().contains(&needle)
            })
            .collect();
        hits.sort_by_key(|d| (d.spec.category as u8, d.spec.label));
        if hits.is_empty() {
            ui.weak("No node matches.");
        }
        let enter = r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
        for (k, d) in hits.iter().enumerate() {
            let text = format!("{}  ·  {}", d.spec.label, d.spec.category.name());
            if ui
                .button(text)
                .on_hover_text(orogen::node::clean_doc(d.spec.doc))
                .clicked()
                || (enter && k == 0)
            {
                chosen = Some(d.spec.id);
            }
        }
    }
    chosen
}

/// Categories in menu order.
pub(crate) fn categories() -> [Category; 9] {
    [
        Category::Generator,
        Category::Combine,
        Category::Warp,
        Category::Filter,
        Category::Mask,
        Category::Erosion,
        Category::Water,
        Category::Color,
        Category::Io,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Space menu lists nodes by category: every registered node's category is in it.
    #[test]
    fn every_node_type_is_in_a_menu_category() {
        let menu = categories();
        for d in Registry::builtin().defs() {
            assert!(
                menu.contains(&d.spec.category),
                "{} ({}) is in no menu category",
                d.spec.id,
                d.spec.category.name()
            );
        }
    }
}
