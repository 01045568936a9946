//! Keeping the snarl (node ids, positions, wires) in step with the document's graph.

use crate::doc::Document;
use egui::Pos2;
use egui_snarl::InPinId;
use egui_snarl::NodeId;
use egui_snarl::OutPinId;
use egui_snarl::Snarl;
use orogen::graph::NodeInstance;
use orogen::node::Registry;
use std::collections::BTreeSet;
use std::collections::HashMap;

/// Makes `snarl` show `graph`: removes and adds nodes, moves them, rewires.
pub(super) fn sync(graph: &orogen::Graph, snarl: &mut Snarl<String>) {
    let present: BTreeSet<&str> = graph.nodes.iter().map(|n| n.id.as_str()).collect();
    let stale: Vec<NodeId> = snarl
        .nodes_ids_data()
        .filter(|(_, n)| !present.contains(n.value.as_str()))
        .map(|(id, _)| id)
        .collect();
    for id in stale {
        snarl.remove_node(id);
    }
    let mut ids: HashMap<String, NodeId> = snarl
        .nodes_ids_data()
        .map(|(id, n)| (n.value.clone(), id))
        .collect();
    for n in &graph.nodes {
        let pos = Pos2::new(n.position[0] as f32, n.position[1] as f32);
        if let Some(&id) = ids.get(&n.id) {
            if let Some(info) = snarl.get_node_info_mut(id) {
                if info.pos.distance(pos) > 0.6 {
                    info.pos = pos;
                }
            }
        } else {
            let id = snarl.insert_node(pos, n.id.clone());
            ids.insert(n.id.clone(), id);
        }
    }
    let mut want = BTreeSet::new();
    for n in &graph.nodes {
        for (j, r) in n.inputs.iter().enumerate() {
            let Some(r) = r else { continue };
            let (Some(&src), Some(&dst)) = (ids.get(&r.node), ids.get(&n.id)) else {
                continue;
            };
            let Some(o) = graph
                .node(&r.node)
                .and_then(|s| s.def.output_index(&r.output))
            else {
                continue;
            };
            want.insert((
                OutPinId {
                    node: src,
                    output: o,
                },
                InPinId {
                    node: dst,
                    input: j,
                },
            ));
        }
    }
    let have: BTreeSet<(OutPinId, InPinId)> = snarl.wires().collect();
    for &(o, i) in have.difference(&want) {
        snarl.disconnect(o, i);
    }
    for &(o, i) in want.difference(&have) {
        snarl.connect(o, i);
    }
}

pub(super) fn add_node(
    doc: &mut Document,
    snarl: &mut Snarl<String>,
    ty: &str,
    pos: Pos2,
) -> Option<String> {
    let def = Registry::builtin().get(ty)?;
    let id = doc.fresh_id(ty);
    let mut node = NodeInstance::new(id.clone(), def);
    node.position = [f64::from(pos.x), f64::from(pos.y)];
    doc.apply(None, |g| g.nodes.push(node));
    snarl.insert_node(pos, id.clone());
    Some(id)
}
