//! The registry of node types (built-in and made at run time), looked up by id, with
//! suggestions for a mistyped one.

use super::Node;
use super::NodeDef;
use std::collections::HashMap;

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
