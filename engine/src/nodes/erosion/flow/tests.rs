//! Tests of the flow routing: every kernel against the generic search, walks, basins and
//! spill levels against a priority flood.

use super::*;
// The tests reach into every phase.
use super::{depressions::*, receivers::*, spill::*, upstream::*};

/// A breadth-first walk lists every donor, with its receiver's place, for every number of
/// donors from none to eight (five and more take the walk's rare path): a cell with
/// donors in the directions of mask `m`, each of them with one donor further out; walked
/// again after a list's first entries, it leaves them alone.
#[test]
fn walks_list_every_donor_count() {
    let w = 9;
    let steps = DonorSteps::new(w);
    let dir = d8_steps(w);
    for m in 0..=255u8 {
        let mut donors = vec![0u8; w * w];
        let centre = 4 * w + 4;
        donors[centre] = m;
        for d in (0..8).filter(|d| m >> d & 1 == 1) {
            // The donor at direction d has its own donor one step further out.
            donors[(centre as isize + dir[d]) as usize] = 1 << d;
        }
        let (mut order, mut parent) = (Vec::new(), Vec::new());
        upstream_bfs(&donors, &steps, centre as u32, &mut order, &mut parent);
        let k = m.count_ones() as usize;
        assert_eq!(order.len(), 1 + 2 * k, "mask {m:08b}");
        for (p, &c) in order.iter().enumerate().skip(1) {
            let r = order[parent[p] as usize] as isize;
            let step = c as isize - r;
            let d = dir.iter().position(|&s| s == step).expect("a neighbour");
            assert!(
                donors[r as usize] >> d & 1 == 1,
                "mask {m:08b}: {c} drains to {r}"
            );
        }
        let mut cells = Vec::new();
        upstream_cells(&donors, &steps, centre as u32, &mut cells);
        assert_eq!(cells, order, "mask {m:08b}");
        // Appended after what a list holds, which stays as it was.
        let mut list = vec![7u32; usize::from(m)];
        append_upstream_cells(&donors, &steps, centre as u32, &mut list);
        assert!(
            list[..usize::from(m)].iter().all(|&c| c == 7),
            "mask {m:08b}"
        );
        assert_eq!(list[usize::from(m)..], order[..], "mask {m:08b}");
    }
}

/// A row's pits are its inner cells without a receiver, in order, at their map index;
/// the end cells (the border) never are.
#[test]
fn row_pits_lists_the_inner_cells_without_receivers() {
    assert_eq!(row_pits(&[NONE, 5, NONE, 7, NONE, NONE], 60), vec![62, 64]);
    assert_eq!(row_pits(&[NONE, 3, 4, NONE], 0), Vec::<u32>::new());
    assert_eq!(row_pits(&[NONE, NONE], 0), Vec::<u32>::new());
    assert_eq!(row_pits(&[NONE], 0), Vec::<u32>::new());
    assert_eq!(row_pits(&[NONE, NONE, NONE], 9), vec![10]);
}

/// The passes of many lists come out as a stable sort of their concatenation would
/// give them (ties in listing order), whatever the lists' sizes — empty, one, uneven.
#[test]
fn passes_sort_stably_across_lists() {
    let mut s = Spill::default();
    for (case, sizes) in [
        vec![],
        vec![0, 0],
        vec![1],
        vec![5, 0, 3],
        vec![1000, 1, 1, 1],
        vec![17; 40],
        vec![0, 3000, 2, 999],
    ]
    .into_iter()
    .enumerate()
    {
        let mut at = 0u32;
        let lists: Vec<Vec<Pass>> = sizes
            .iter()
            .map(|&n| {
                (0..n)
                    .map(|_| {
                        at += 1;
                        // Few distinct heights: many ties.
                        let key = (splitmix64(u64::from(at) ^ case as u64) % 23) as u32;
                        Pass {
                            key,
                            b: at,
                            ..Pass::default()
                        }
                    })
                    .collect()
            })
            .collect();
        let mut want: Vec<(u32, u32)> = lists.iter().flatten().map(|p| (p.key, p.b)).collect();
        want.sort_by_key(|&(key, _)| key);
        sort_passes(&lists, &mut s);
        let got: Vec<(u32, u32)> = s.sorted[..s.len].iter().map(|p| (p.key, p.b)).collect();
        assert_eq!(got, want, "case {case}");
    }
}

/// `order_key` orders floats as numbers (−0 and +0 apart, as their bits are) and
/// `from_order_key` inverts it bit for bit.
#[test]
fn order_keys_sort_floats_and_invert() {
    let v = [
        f32::NEG_INFINITY,
        -1e30,
        -2.5,
        -1e-40,
        -0.0,
        0.0,
        1e-40,
        0.5,
        2000.25,
        f32::INFINITY,
    ];
    for pair in v.windows(2) {
        assert!(order_key(pair[0]) < order_key(pair[1]), "{pair:?}");
    }
    for x in v {
        assert_eq!(from_order_key(order_key(x)).to_bits(), x.to_bits());
    }
}

/// The vectorised D8 kernel picks the receivers the generic search picks at every inner
/// cell (border cells are outlets), with the distance `between` gives; where rounding of
/// the two ways of computing a distance makes them part, both slopes agree to 1e-5. The
/// donor masks invert the receivers. With jittered nodes and with nodes at the centres.
#[test]
fn d8_kernel_matches_the_generic_search() {
    // Jittered nodes, and nodes at the cell centres (the kernel without distances).
    let sizes = [(37usize, 23usize), (3, 9), (64, 3), (128, 128)];
    for ((w, h), jitter) in sizes.into_iter().flat_map(|s| [(s, 1.0), (s, 0.0)]) {
        let n = w * h;
        let z: Vec<f32> = (0..n)
            .map(|i| (splitmix64(i as u64 ^ 0xD8) >> 40) as f32 / 1000.0)
            .collect();
        let off = jittered_offsets(9, n, jitter);
        let d8 = D8Distances::new(&off, w, h);
        assert_eq!(d8.uniform, jitter == 0.0);
        let (mut r1, mut d1) = (vec![0; n], vec![0.0; n]);
        receivers_d8(&z, w, h, &d8, &mut r1, &mut d1);
        let (r2, d2) = generic_receivers(&z, w, h, &off, &D8);
        for i in 0..n {
            let (x, y) = (i % w, i / w);
            if x == 0 || y == 0 || x + 1 == w || y + 1 == h {
                assert_eq!(r1[i], NONE, "{w}×{h} border cell {i}");
                continue;
            }
            if r1[i] != NONE {
                assert_eq!(d1[i], d8.between(w, i, r1[i] as usize), "{w}×{h} cell {i}");
            }
            assert_same_choice(&z, i, (r1[i], d1[i]), (r2[i], d2[i]), &format!("{w}×{h}"));
        }
        let mut donors = vec![0u8; n];
        donors_d8(&r1, w, &mut donors);
        let steps = d8_steps(w);
        for (i, &m) in donors.iter().enumerate() {
            for (d, step) in steps.iter().enumerate() {
                let j = i as isize + step;
                let drains_here = (0..n as isize).contains(&j)
                    && r1[j as usize] == i as u32
                    && (j as usize % w).abs_diff(i % w) <= 1;
                assert_eq!(m >> d & 1 == 1, drains_here, "{w}×{h} cell {i} dir {d}");
            }
        }
    }
}

/// The vectorised D4 kernel picks the receivers the generic search picks, at every cell
/// of random maps with map edges and rows of one and two cells; where rounding of the
/// two ways of computing a distance makes them part, both slopes agree to 1e-5.
#[test]
fn d4_kernel_matches_the_generic_search() {
    for (w, h) in [(37usize, 23usize), (1, 9), (2, 5), (64, 1), (128, 128)] {
        let n = w * h;
        let z: Vec<f32> = (0..n)
            .map(|i| (splitmix64(i as u64 ^ 0x4D) >> 40) as f32 / 1000.0)
            .collect();
        let off = jittered_offsets(5, n, 1.0);
        let d4 = D4Distances::new(&off, w, h);
        let (mut r1, mut d1) = (vec![0; n], vec![0.0; n]);
        receivers_d4(&z, w, &d4, &mut r1, &mut d1);
        let (r2, d2) = generic_receivers(&z, w, h, &off, &D4);
        for i in 0..n {
            assert_same_choice(&z, i, (r1[i], d1[i]), (r2[i], d2[i]), &format!("{w}×{h}"));
        }
    }
}

/// A window of a map draws its nodes where the whole map does (a tiled build's piece of
/// stream power or Lim–Tan–Bhojan places them as the whole map's build).
#[test]
fn a_windows_nodes_are_the_whole_maps() {
    let n = 40;
    let whole = jittered_offsets(17, n * n, 1.0);
    let window = crate::node::Window {
        x0: 7,
        y0: 12,
        width: 20,
        height: 9,
    };
    let part = super::jittered_offsets_in(17, window, n, 1.0);
    assert_eq!(part.len(), 20 * 9);
    for (i, o) in part.iter().enumerate() {
        let (x, y) = (window.x0 + i % 20, window.y0 + i / 20);
        assert_eq!(*o, whole[y * n + x], "cell {x},{y}");
    }
    // The whole map as a window is the whole map.
    assert_eq!(
        super::jittered_offsets_in(17, crate::node::Window::full(n), n, 1.0),
        whole
    );
}
