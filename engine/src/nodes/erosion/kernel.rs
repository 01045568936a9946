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
