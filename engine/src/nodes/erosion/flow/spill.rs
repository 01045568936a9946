//! Spill levels: the minimum spanning tree of the basin graph (Kruskal over the passes sorted
//! by height), searched from the outside for each basin's level and outlet.

use super::{from_order_key, trim, Laps, Pass, NONE};

/// Scratch of [`spill_levels`], kept from step to step.
#[derive(Default)]
pub(super) struct Spill {
    /// Every pass in order of height: the first `len` entries.
    pub(super) sorted: Vec<Pass>,
    pub(super) len: usize,
    /// The passes of the first and of the second half of the lists, each sorted.
    pub(super) halves: [Vec<Pass>; 2],
    /// Union–find over basins and the outside (the last node): parent, and size of roots.
    pub(super) parent: Vec<u32>,
    pub(super) size: Vec<u32>,
    /// The minimum spanning tree's passes, then its adjacency (offsets into `adj`).
    pub(super) tree: Vec<Pass>,
    pub(super) start: Vec<u32>,
    pub(super) adj: Vec<Link>,
    /// The search's queue: basin, the basin it was reached from, its level.
    pub(super) queue: Vec<(u32, u32, f32)>,
}

/// A link of the spanning tree as seen from one of its basins: the basin across, the pass
/// height's key, and the pass's cells on the far basin's side and on this one's.
#[derive(Clone, Copy, Default)]
pub(super) struct Link {
    pub(super) to: u32,
    pub(super) key: u32,
    pub(super) inside: u32,
    pub(super) across: u32,
}

impl Spill {
    /// The root of `x`'s set (halving the path on the way).
    pub(super) fn find(&mut self, mut x: u32) -> u32 {
        while self.parent[x as usize] != x {
            let up = self.parent[self.parent[x as usize] as usize];
            self.parent[x as usize] = up;
            x = up;
        }
        x
    }
}

/// The passes of all `lists` in order of height, ties in the order they were listed (list
/// by list), into `s.sorted[..s.len]`: the lists split in two halves of about as many
/// passes, each half gathered and radix-sorted (stable) on its own thread, then merged —
/// the merge in two parts too, split where the first part's share of each half ends.
pub(super) fn sort_passes(lists: &[Vec<Pass>], s: &mut Spill) {
    let len: usize = lists.iter().map(Vec::len).sum();
    let mut mid = 0;
    let mut first = 0;
    while mid < lists.len() && 2 * (first + lists[mid].len()) <= len {
        first += lists[mid].len();
        mid += 1;
    }
    let [a, b] = &mut s.halves;
    let sort_half = |half: &mut Vec<Pass>, lists: &[Vec<Pass>]| {
        half.clear();
        for list in lists {
            half.extend_from_slice(list);
        }
        radsort::sort_by_key(half, |j| j.key);
    };
    rayon::join(
        || sort_half(a, &lists[..mid]),
        || sort_half(b, &lists[mid..]),
    );
    if s.sorted.len() < len {
        s.sorted.resize(len, Pass::default());
    }
    // The first part of the merge takes `i` passes of `a` and `len / 2 - i` of `b`.
    let t = len / 2;
    let (mut lo, mut hi) = (t.saturating_sub(b.len()), t.min(a.len()));
    while lo < hi {
        let i = usize::midpoint(lo, hi);
        // Too few of `a` when a[i] still comes before b[t − i − 1] (ties: `a` first).
        if a[i].key <= b[t - i - 1].key {
            lo = i + 1;
        } else {
            hi = i;
        }
    }
    let i = lo;
    let (out1, out2) = s.sorted[..len].split_at_mut(t);
    rayon::join(
        || merge(&a[..i], &b[..t - i], out1),
        || merge(&a[i..], &b[t - i..], out2),
    );
    s.len = len;
    s.halves.iter_mut().for_each(trim);
    if s.sorted.len() > 4 * len + 1024 {
        s.sorted.truncate(2 * len + 256);
        s.sorted.shrink_to_fit();
    }
}

/// The stable merge of `a` and `b` (each in order of height; ties take `a` first) into
/// `out`, as long as both.
pub(super) fn merge(a: &[Pass], b: &[Pass], out: &mut [Pass]) {
    let (mut i, mut j) = (0, 0);
    for o in out.iter_mut() {
        let take_b = i == a.len() || (j < b.len() && b[j].key < a[i].key);
        *o = if take_b { b[j] } else { a[i] };
        j += usize::from(take_b);
        i += usize::from(!take_b);
    }
}

/// Spill levels and outlets of the basins: each basin's level is the lowest, over all ways
/// out to the outside, of the highest pass on the way — the highest pass on its path in the
/// minimum spanning tree of the basin graph (Cordonnier et al. 2016), which Kruskal's
/// algorithm builds (passes in order of height by a radix sort, joined by a union–find;
/// ties in the order they were listed, basin by basin, so the tree does not depend on
/// timing). A search from the outside over the
/// tree then gives every basin its level and the pass it spills over, towards the outside:
/// `outlet[b]` = (its cell in `b`, the cell across). Basins not joined to the outside keep
/// an infinite level and no outlet. `passes` holds the passes of the `nb` basins basin by
/// basin, in lists of consecutive basins.
pub(super) fn spill_levels(
    nb: usize,
    passes: &[Vec<Pass>],
    level: &mut Vec<f32>,
    outlet: &mut Vec<(u32, u32)>,
    s: &mut Spill,
    laps: &mut Laps,
) {
    let outside = nb as u32;
    sort_passes(passes, s);
    laps.lap("sort passes");
    s.parent.clear();
    s.parent.extend(0..=outside);
    s.size.clear();
    s.size.resize(nb + 1, 1);
    s.tree.clear();
    for k in 0..s.len {
        let j = s.sorted[k];
        let (rb, rt) = (s.find(j.b), s.find(j.to));
        if rb == rt {
            continue;
        }
        let (small, big) = if s.size[rb as usize] < s.size[rt as usize] {
            (rb, rt)
        } else {
            (rt, rb)
        };
        s.parent[small as usize] = big;
        s.size[big as usize] += s.size[small as usize];
        s.tree.push(j);
        if s.tree.len() == nb {
            break;
        }
    }
    laps.lap("spanning tree");
    // The tree's adjacency, each link oriented from the basin it is listed under, then a
    // search from the outside along it. A basin's links are its parent's (skipped) and its
    // children's, so no "seen" marks are needed; each queue entry carries its level.
    s.start.clear();
    s.start.resize(nb + 2, 0);
    for j in &s.tree {
        s.start[j.b as usize + 1] += 1;
        s.start[j.to as usize + 1] += 1;
    }
    for i in 0..=nb {
        s.start[i + 1] += s.start[i];
    }
    s.adj.clear();
    s.adj.resize(2 * s.tree.len(), Link::default());
    // `start[x]` is the end of x's entries once they are filled in, so shift by one first.
    s.start.copy_within(0..=nb, 1);
    for j in &s.tree {
        for (x, y, inside, across) in [(j.b, j.to, j.at, j.from), (j.to, j.b, j.from, j.at)] {
            let at = &mut s.start[x as usize + 1];
            s.adj[*at as usize] = Link {
                to: y,
                key: j.key,
                inside,
                across,
            };
            *at += 1;
        }
    }
    level.clear();
    level.resize(nb + 1, f32::INFINITY);
    level[nb] = f32::NEG_INFINITY;
    outlet.clear();
    outlet.resize(nb, (NONE, NONE));
    s.queue.clear();
    s.queue.push((outside, NONE, f32::NEG_INFINITY));
    let mut k = 0;
    while let Some(&(x, from, lx)) = s.queue.get(k) {
        k += 1;
        let (lo, hi) = (
            s.start[x as usize] as usize,
            s.start[x as usize + 1] as usize,
        );
        for l in &s.adj[lo..hi] {
            if l.to == from {
                continue;
            }
            let ly = lx.max(from_order_key(l.key));
            level[l.to as usize] = ly;
            outlet[l.to as usize] = (l.inside, l.across);
            s.queue.push((l.to, x, ly));
        }
    }
    level.truncate(nb);
    laps.lap("spill levels");
}
