//! Pieces the erosion kernels share: register blocks and cache-line-aligned task rows of the
//! banded stencil kernels, scratch kept per pool thread from loop to loop, and phase timings
//! for the probes.

/// Scratch for each thread of the pool that outlives one parallel loop (rayon's
/// `for_each_init` makes a fresh one for every split of the work — dozens per loop — and
/// big fresh allocations are page faults). A thread only ever takes its own, so the locks
/// are never contended.
pub struct PerThread<T>(Vec<std::sync::Mutex<T>>);

impl<T: Default> Default for PerThread<T> {
    fn default() -> Self {
        Self(
            (0..rayon::current_num_threads().max(1))
                .map(|_| std::sync::Mutex::default())
                .collect(),
        )
    }
}

impl<T> PerThread<T> {
    /// The calling thread's scratch.
    pub fn get(&self) -> std::sync::MutexGuard<'_, T> {
        let i = rayon::current_thread_index().unwrap_or(0) % self.0.len();
        self.0[i]
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Wall time of the phases of the last call, for the probes (`spl_probe`).
#[derive(Default, Clone, Debug)]
pub struct Laps {
    last: Option<std::time::Instant>,
    /// Each phase's name and milliseconds.
    pub laps: Vec<(&'static str, f64)>,
}

impl Laps {
    /// Forget the last call's laps and start timing.
    pub fn start(&mut self) {
        self.laps.clear();
        self.last = Some(std::time::Instant::now());
    }

    /// The phase `name` ends now.
    pub fn lap(&mut self, name: &'static str) {
        let now = std::time::Instant::now();
        if let Some(last) = self.last.replace(now) {
            self.laps.push((name, (now - last).as_secs_f64() * 1e3));
        }
    }
}

/// Cells per register block in the banded stencil kernels (thermal, grid hydraulic): one
/// AVX-512 vector.
pub(crate) const LANES: usize = 16;

/// `LANES` cells: one register block of the stencil kernels.
pub(crate) type Block = [f32; LANES];

/// The first `count` blocks of `row` (rows are sized so that they have them: an internal
/// invariant, not user data). Slicing to the exact count lets the block loops run without
/// bounds checks.
pub(crate) fn blocks(row: &[f32], count: usize) -> &[Block] {
    &row.as_chunks::<LANES>().0[..count]
}

/// The first `count` blocks of each of the eight neighbours of a padded row's cells, from
/// the padded rows above, at and below it, in `NEIGHBOURS` order. Written out (not
/// `NEIGHBOURS.map`) so the optimiser keeps every slice's length and drops the bounds
/// checks in the block loops.
#[expect(clippy::inline_always)]
#[inline(always)]
pub(crate) fn around(rows: [&[f32]; 3], count: usize) -> [&[Block]; 8] {
    let [up, mid, down] = rows;
    [
        blocks(up, count),
        blocks(&up[1..], count),
        blocks(&up[2..], count),
        blocks(mid, count),
        blocks(&mid[2..], count),
        blocks(down, count),
        blocks(&down[1..], count),
        blocks(&down[2..], count),
    ]
}

pub(crate) fn blocks_mut(row: &mut [f32], count: usize) -> &mut [Block] {
    &mut row.as_chunks_mut::<LANES>().0[..count]
}

/// A task-local row of `len` cells whose index `aligned` starts a cache line, so that the
/// blocks of the row's cells are whole cache lines (a block load straddling two lines costs
/// two). The buffer is never reallocated, so the alignment holds for the row's life.
pub(crate) struct Row {
    buf: Vec<f32>,
    start: usize,
    len: usize,
}

impl Row {
    pub(crate) fn new(len: usize, value: f32, aligned: usize) -> Self {
        const LINE: usize = 64;
        let buf = vec![value; len + LINE / 4];
        let at = (buf.as_ptr() as usize + aligned * 4) % LINE;
        let start = (LINE - at) % LINE / 4;
        Self { buf, start, len }
    }
}

impl std::ops::Deref for Row {
    type Target = [f32];
    fn deref(&self) -> &[f32] {
        &self.buf[self.start..self.start + self.len]
    }
}

impl std::ops::DerefMut for Row {
    fn deref_mut(&mut self) -> &mut [f32] {
        &mut self.buf[self.start..self.start + self.len]
    }
}

/// Slot of map row `row` in a ring of `ring` task-local rows (the banded stencil kernels
/// keep the rows a band is working on in such rings).
#[inline]
pub(crate) fn ring_slot(row: isize, ring: isize) -> usize {
    row.rem_euclid(ring) as usize
}

/// A whole map in the stencil kernels' padded layout: every row holds one cell of padding
/// on the left, the map row from the first cell of a cache line, and padding to a whole
/// number of blocks plus at least one cell on the right; one padding row above and below.
/// Kernels that keep the map in this layout from iteration to iteration read every row in
/// place (no copy into task rows) and never bounds-check a neighbour.
pub(crate) struct Padded {
    buf: Vec<f32>,
    start: usize,
    /// Cells from one row to the next (a whole number of blocks).
    stride: usize,
    rows: usize,
}

impl Padded {
    /// A `w` × `rows` map, every cell (padding included) set to `value`.
    pub(crate) fn new(w: usize, rows: usize, value: f32) -> Self {
        const LINE: usize = 64;
        let stride = w.div_ceil(LANES) * LANES + LANES;
        let buf = vec![value; stride * (rows + 2) + LINE / 4];
        // Index `start + 1` (the first cell of the first row) starts a cache line; the
        // stride is a whole number of lines, so every row's first cell does.
        let at = (buf.as_ptr() as usize + 4) % LINE;
        let start = (LINE - at) % LINE / 4;
        Self {
            buf,
            start,
            stride,
            rows,
        }
    }

    /// Cells from one row to the next.
    pub(crate) fn stride(&self) -> usize {
        self.stride
    }

    /// Padded row `y` (−1 and `rows` are the padding rows): index `x + 1` is cell x.
    pub(crate) fn row(&self, y: isize) -> &[f32] {
        let at = self.start + (y + 1) as usize * self.stride;
        &self.buf[at..at + self.stride]
    }

    /// The map's rows (padding rows left out), `stride` cells each, for parallel writers.
    pub(crate) fn rows_mut(&mut self) -> &mut [f32] {
        let at = self.start + self.stride;
        &mut self.buf[at..at + self.rows * self.stride]
    }

    /// Copies the row-major map `src` (`w` cells per row) into the map's cells.
    pub(crate) fn fill_from(&mut self, src: &[f32], w: usize) {
        let stride = self.stride;
        for (dst, src) in self.rows_mut().chunks_mut(stride).zip(src.chunks(w)) {
            dst[1..=w].copy_from_slice(src);
        }
    }

    /// The map's cells, row-major, `w` per row.
    pub(crate) fn to_vec(&self, w: usize) -> Vec<f32> {
        let mut out = Vec::with_capacity(w * self.rows);
        for y in 0..self.rows as isize {
            out.extend_from_slice(&self.row(y)[1..=w]);
        }
        out
    }
}

/// Flags, one bit per block of a row (bit `b % 64` of word `b / 64`), for the stencil
/// kernels that skip the blocks where nothing moves.
pub(crate) type Bits = [u64];

/// Words holding `n` flags.
pub(crate) fn words(n: usize) -> usize {
    n.div_ceil(64)
}

/// `out` = blocks b − 1 ..= b + 1 of any of the three rows set: the blocks a stencil of
/// radius one cell around `rows`' set blocks reaches. Bits past the row's last block may be
/// set; [`runs`] never looks at them.
pub(crate) fn dilate(rows: [&Bits; 3], out: &mut Bits) {
    let [a, b, c] = rows;
    let column = |i: usize| a[i] | b[i] | c[i];
    let n = out.len();
    let (mut carry, mut here) = (0u64, if n > 0 { column(0) } else { 0 });
    for (i, o) in out.iter_mut().enumerate() {
        let next = if i + 1 < n { column(i + 1) } else { 0 };
        *o = here | (here << 1) | (here >> 1) | carry | (next << 63);
        carry = here >> 63;
        here = next;
    }
}

/// Calls `f(b0, b1)` for every maximal run `b0..b1` of set flags among the first `n`.
#[inline]
pub(crate) fn runs(bits: &Bits, n: usize, mut f: impl FnMut(usize, usize)) {
    let mut b = 0;
    while b < n {
        // The next set flag at or after b.
        let (mut i, mut word) = (b / 64, bits[b / 64] & (!0u64 << (b % 64)));
        while word == 0 {
            i += 1;
            if i * 64 >= n {
                return;
            }
            word = bits[i];
        }
        let b0 = i * 64 + word.trailing_zeros() as usize;
        if b0 >= n {
            return;
        }
        // The next clear flag after b0.
        let (mut j, mut gap) = (b0 / 64, !bits[b0 / 64] & (!0u64 << (b0 % 64)));
        while gap == 0 {
            j += 1;
            if j * 64 >= n {
                break;
            }
            gap = !bits[j];
        }
        let b1 = if gap == 0 {
            n
        } else {
            (j * 64 + gap.trailing_zeros() as usize).min(n)
        };
        f(b0, b1);
        b = b1;
    }
}
