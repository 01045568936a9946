//! A byte-budgeted cache of node results keyed by content hash, least recently used out first.

use super::{Key, NodeFields};
use std::collections::HashMap;

#[derive(Debug)]
struct Entry {
    fields: NodeFields,
    bytes: usize,
    last_used: u64,
}

/// Node results by key, holding at most `budget_bytes` of fields.
#[derive(Debug)]
pub struct Cache {
    budget_bytes: usize,
    used_bytes: usize,
    tick: u64,
    map: HashMap<Key, Entry>,
}

impl Cache {
    #[must_use]
    pub fn new(budget_bytes: usize) -> Self {
        Self {
            budget_bytes,
            used_bytes: 0,
            tick: 0,
            map: HashMap::new(),
        }
    }

    /// The entry for `key`, marking it recently used.
    pub fn get(&mut self, key: &Key) -> Option<NodeFields> {
        self.tick += 1;
        let tick = self.tick;
        self.map.get_mut(key).map(|e| {
            e.last_used = tick;
            NodeFields::clone(&e.fields)
        })
    }

    /// Stores a result, evicting least recently used entries to stay within the budget.
    /// A result larger than the whole budget is not stored.
    pub fn insert(&mut self, key: Key, fields: NodeFields) {
        let bytes: usize = fields.iter().map(|f| f.byte_size()).sum();
        if bytes > self.budget_bytes {
            return;
        }
        self.tick += 1;
        if let Some(old) = self.map.remove(&key) {
            self.used_bytes -= old.bytes;
        }
        while self.used_bytes + bytes > self.budget_bytes {
            let Some((&oldest, _)) = self.map.iter().min_by_key(|(_, e)| e.last_used) else {
                break;
            };
            if let Some(e) = self.map.remove(&oldest) {
                self.used_bytes -= e.bytes;
            }
        }
        self.used_bytes += bytes;
        self.map.insert(
            key,
            Entry {
                fields,
                bytes,
                last_used: self.tick,
            },
        );
    }

    #[must_use]
    pub fn used_bytes(&self) -> usize {
        self.used_bytes
    }

    #[must_use]
    pub fn len(&self) -> usize {
        self.map.len()
    }

    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    pub fn clear(&mut self) {
        self.map.clear();
        self.used_bytes = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::field::Field;
    use std::sync::Arc;

    fn fields(n: usize) -> NodeFields {
        vec![Arc::new(Field::filled(n, 1, 0.0))].into()
    }

    #[test]
    fn evicts_least_recently_used_within_budget() {
        let mut c = Cache::new(3 * 4 * 10);
        c.insert([1; 16], fields(10));
        c.insert([2; 16], fields(10));
        c.insert([3; 16], fields(10));
        assert!(c.get(&[1; 16]).is_some()); // 1 is now fresher than 2
        c.insert([4; 16], fields(10));
        assert!(c.get(&[2; 16]).is_none());
        assert!(c.get(&[1; 16]).is_some());
        assert!(c.used_bytes() <= 120);
        c.insert([5; 16], fields(1000)); // larger than the budget: not stored
        assert!(c.get(&[5; 16]).is_none());
    }
}
