//! The classic (unblocked) Bloom filter's batches on the same tiers: one array of `m` bits,
//! `k` positions per key by double hashing (Kirsch and Mitzenmacher 2006),
//! `g_i = h1 + i * h2 mod m`.
//!
//! A key's probes land on `k` different cache lines, so the batch is pipelined by lines, not
//! blocks: a chunk of keys is hashed in lanes and, for an array larger than the caches, its
//! lines prefetched while the chunk before it is probed. An insert prefetches all `k` lines
//! of every key. A query there is screened ([`ClassicBatch::screened`]): the first two lines
//! of every key are prefetched and read, and the other `k - 2` only for the keys that pass,
//! so an absent key costs about `2 + (k - 2) / 4` misses instead of `k` (a member still `k`).
//! In cache a query reads every position without an early exit (the loads overlap and
//! nothing mispredicts), one load each, or eight per gather where the tier has one
//! ([`Lanes::GATHERS`]) and the filter asks for it. On tiers with a vector variable shift,
//! eight keys walk their positions side by side in lanes ([`Walk`]), leaving only the loads
//! and stores to scalar code. Every tier sets and tests the same positions as the scalar
//! reference.

use crate::kernel::probe::pipeline::{CHUNK, hash_chunk, prefetch};
use crate::kernel::{Keys, Sink, Takes};
use crate::simd::{Batch, Lanes};

/// Most probes a key may have.
pub(crate) const MAX_PROBES: u32 = 64;

/// Lines a chunk prefetches (the chunk holds `PREFETCH_LINES / k` keys): the best of 16 to
/// 256 for a DRAM-sized array on the CPU this was developed on (measured at 21dbed6).
const PREFETCH_LINES: usize = 64;

/// Arrays above this many bits (16 MiB) are prefetched. Below it the loads' own overlap wins:
/// prefetching slowed arrays of a few MB, broke even near this size and sped up a DRAM-sized
/// one (the same measurements, at 21dbed6).
const PREFETCH_ABOVE_BITS: u64 = 8 << 24;

/// The geometry every probe needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ClassicShape {
    /// Bits of the array (`m`).
    pub num_bits: u64,
    /// The `m` the positions are drawn from: `num_bits` times a power of two (larger once
    /// the filter was halved; a position is then reduced mod `num_bits`).
    pub design_bits: u64,
    /// Probes per key (`k`).
    pub probes: u32,
    /// The seed's XXH3 constant.
    pub flip: u64,
}

impl ClassicShape {
    /// The `k` positions of the key hashing to `h`: `h1` from the hash's high bits and `h2`
    /// from its low bits (each reduced to `0..design_bits` by a multiply and shift), then
    /// `h1 + i * h2 mod m` by additions.
    #[inline(always)]
    pub fn positions(&self, h: u64) -> Positions {
        let m0 = self.design_bits;
        let m = self.num_bits;
        let mut x = reduce(h, m0);
        let mut d = reduce(h.rotate_left(32), m0);
        if m != m0 {
            // m divides m0, so (a mod m0) mod m = a mod m.
            x %= m;
            d %= m;
        }
        Positions {
            x,
            d,
            m,
            left: self.probes,
        }
    }

    /// Words of the array.
    pub fn num_words(&self) -> usize {
        self.num_bits.div_ceil(64) as usize
    }
}

/// One key's positions, in probe order.
#[derive(Clone)]
pub(crate) struct Positions {
    x: u64,
    d: u64,
    m: u64,
    left: u32,
}

impl Positions {
    /// The first `j` positions only.
    #[inline(always)]
    fn first(&self, j: u32) -> Positions {
        Positions {
            left: self.left.min(j),
            ..self.clone()
        }
    }

    /// The positions after the first `j`.
    #[inline(always)]
    fn after(mut self, j: u32) -> Positions {
        for _ in 0..j.min(self.left) {
            self.next();
        }
        self
    }
}

impl ExactSizeIterator for Positions {}

impl Iterator for Positions {
    type Item = u64;

    #[inline(always)]
    fn next(&mut self) -> Option<u64> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let p = self.x;
        let x = self.x + self.d;
        // A select, not a branch: `x >= m` holds for about half the probes, so a branch
        // mispredicts every other one (much slower inserts, measured at 21dbed6; LLVM turns a
        // mask trick back into that branch).
        self.x = core::hint::select_unpredictable(x >= self.m, x.wrapping_sub(self.m), x);
        Some(p)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left as usize, Some(self.left as usize))
    }
}

/// `h` scaled to `0..m` (Lemire's multiply-shift reduction).
#[inline(always)]
fn reduce(h: u64, m: u64) -> u64 {
    ((h as u128 * m as u128) >> 64) as u64
}

/// What one key's positions do to the array.
pub(crate) trait ClassicOp {
    /// The array, for prefetch addresses.
    fn words(&self) -> *const u64;
    /// Applies one key's positions, one word at a time.
    fn key(&mut self, positions: Positions) -> bool;
    /// The same on a SIMD tier (which may gather).
    #[inline(always)]
    fn key_lanes<L: Lanes>(&mut self, _: L, positions: Positions) -> bool {
        self.key(positions)
    }
    /// Whether [`group`](Self::group) may take this batch's keys eight at a time (otherwise
    /// [`key_lanes`](Self::key_lanes) takes them one by one).
    fn groups(&self) -> bool;
    /// Applies eight keys' positions, walked in lanes (see [`Walk`]); bit `j` of the result
    /// is key `j`'s answer.
    fn group<L: Lanes>(&mut self, l: L, walk: Walk<L::V>) -> u8;
    /// Whether a key's answer may come from its first positions alone when one of them is
    /// clear (a query), so that a batch beyond the caches can fetch the rest only for the
    /// keys that pass ([`ClassicBatch::screened`]).
    fn screens(&self) -> bool {
        false
    }
}

/// Eight keys' positions walked side by side, lane `j` holding key `j`'s: one vector
/// addition and one conditional subtraction per probe for all eight, where a key on its own
/// pays a scalar add, compare, select, shifts and the loop around them for each probe:
/// walked, a query key takes far fewer instructions (callgrind over
/// `blockbloom-perf classic-batch`; docs/guide/family.md).
pub(crate) struct Walk<V> {
    /// The next position of each key.
    x: V,
    /// Each key's step.
    d: V,
    /// `m`, and `2^64 - m` (adding it subtracts `m`).
    m: V,
    neg_m: V,
    /// `m`, for the bounds check.
    bits: u64,
    probes: u32,
}

impl<V: Copy> Walk<V> {
    /// The walk of the eight keys hashing to `hashes`.
    #[inline(always)]
    fn new<L: Lanes<V = V>>(l: L, shape: &ClassicShape, hashes: &[u64]) -> Walk<V> {
        let (mut x, mut d) = ([0u64; 8], [0u64; 8]);
        for ((x, d), &h) in x.iter_mut().zip(&mut d).zip(&hashes[..8]) {
            let p = shape.positions(h);
            (*x, *d) = (p.x, p.d);
        }
        Walk {
            x: l.loadu(&x),
            d: l.loadu(&d),
            m: l.splat(shape.num_bits),
            neg_m: l.splat(shape.num_bits.wrapping_neg()),
            bits: shape.num_bits,
            probes: shape.probes,
        }
    }

    /// Calls `probe` with each round's positions (eight per call), in probe order.
    #[inline(always)]
    fn each<L: Lanes<V = V>>(self, l: L, mut probe: impl FnMut(V)) {
        let mut x = self.x;
        for _ in 0..self.probes {
            probe(x);
            // x + d < 2m (both below m), so one conditional subtraction reduces it.
            x = l.sub_if_ge(l.add(x, self.d), self.m, self.neg_m);
        }
    }
}

/// Whether a shape's positions can be walked in lanes: `x + d` (below `2m`) must keep its
/// top bit clear for [`Lanes::sub_if_ge`].
#[inline(always)]
fn walkable(shape: &ClassicShape) -> bool {
    shape.num_bits < 1 << 62
}

/// Sets each position. (No tier has a scatter-OR that survives two probes in one word.)
pub(crate) struct ClassicInsert<'a>(&'a mut [u64]);

impl<'a> ClassicInsert<'a> {
    pub fn new(words: &'a mut [u64]) -> Self {
        ClassicInsert(words)
    }
}

/// Checks once per key that its positions fall inside `words` (a key's positions are all
/// below its `m`), so the probes themselves need no bounds checks.
#[inline(always)]
fn check_fits(positions: &Positions, words: &[u64]) {
    assert!(
        positions.m <= words.len() as u64 * 64,
        "classic filter: positions past the array"
    );
}

impl ClassicOp for ClassicInsert<'_> {
    fn words(&self) -> *const u64 {
        self.0.as_ptr()
    }

    #[inline(always)]
    fn key(&mut self, positions: Positions) -> bool {
        check_fits(&positions, self.0);
        for p in positions {
            // SAFETY: `p < positions.m <= 64 * len` (`Positions` keeps `x < m`, and
            // `check_fits` checked `m`), so the word index is in bounds.
            unsafe { *self.0.get_unchecked_mut((p / 64) as usize) |= 1 << (p % 64) };
        }
        true
    }

    fn groups(&self) -> bool {
        true
    }

    #[inline(always)]
    fn group<L: Lanes>(&mut self, l: L, walk: Walk<L::V>) -> u8 {
        assert!(
            walk.bits <= self.0.len() as u64 * 64,
            "classic filter: positions past the array"
        );
        let words = &mut *self.0;
        let (mut idx, mut bit) = ([0u64; 8], [0u64; 8]);
        walk.each(l, |x| {
            l.storeu(&mut idx, l.shr::<6>(x));
            l.storeu(&mut bit, l.bit_mod64(x));
            for (&i, &b) in idx.iter().zip(&bit) {
                // SAFETY: every position is below `m <= 64 * len` (asserted above), so
                // every word index is in bounds.
                unsafe { *words.get_unchecked_mut(i as usize) |= b };
            }
        });
        u8::MAX
    }
}

/// Whether every position is set: by loads, or by the tier's gather when `gather` is set
/// (and the tier has one).
pub(crate) struct ClassicQuery<'a> {
    pub words: &'a [u64],
    pub gather: bool,
}

impl ClassicOp for ClassicQuery<'_> {
    fn words(&self) -> *const u64 {
        self.words.as_ptr()
    }

    #[inline(always)]
    fn key(&mut self, positions: Positions) -> bool {
        check_fits(&positions, self.words);
        // Every word is read, without an early exit: the loads overlap, and an exit taken at
        // a random probe would mispredict.
        let mut all = 1;
        for p in positions {
            // SAFETY: as in `ClassicInsert::key`: `p < positions.m <= 64 * len`.
            all &= unsafe { *self.words.get_unchecked((p / 64) as usize) } >> (p % 64);
        }
        all & 1 != 0
    }

    fn groups(&self) -> bool {
        // The gather variant keeps its one-key-per-gather probes (an option to compare).
        !self.gather
    }

    fn screens(&self) -> bool {
        !self.gather
    }

    #[inline(always)]
    fn group<L: Lanes>(&mut self, l: L, walk: Walk<L::V>) -> u8 {
        assert!(
            walk.bits <= self.words.len() as u64 * 64,
            "classic filter: positions past the array"
        );
        let words = self.words;
        let ones = l.splat(u64::MAX);
        // The bits each key finds clear, OR-ed over its probes: no early exit, as `key`.
        let mut clear = l.splat(0);
        let mut idx = [0u64; 8];
        walk.each(l, |x| {
            l.storeu(&mut idx, l.shr::<6>(x));
            // SAFETY: every position is below `m <= 64 * len` (asserted above), so every
            // word index is in bounds. Eight loads, not the tier's gather, which measured
            // slower on the CPU this was developed on (see `with_gather`).
            let w = idx.map(|i| unsafe { *words.get_unchecked(i as usize) });
            let missing = l.and(l.xor(l.loadu(&w), ones), l.bit_mod64(x));
            clear = l.or(clear, missing);
        });
        let mut out = [0u64; 8];
        l.storeu(&mut out, clear);
        out.iter()
            .enumerate()
            .fold(0, |a, (j, &c)| a | (((c == 0) as u8) << j))
    }

    #[inline(always)]
    fn key_lanes<L: Lanes>(&mut self, l: L, positions: Positions) -> bool {
        if !(L::GATHERS && self.gather) {
            return self.key(positions);
        }
        // Eight positions per gather; the last group padded with the first position.
        check_fits(&positions, self.words);
        let k = positions.len();
        let mut padded = [0u64; MAX_PROBES as usize];
        for (o, p) in padded.iter_mut().zip(positions) {
            *o = p;
        }
        let stride = k.next_multiple_of(8);
        let first = padded[0];
        padded[k..stride].fill(first);
        let mut all = true;
        for eight in padded[..stride].chunks_exact(8) {
            let p = l.loadu(eight);
            // SAFETY: every position is below `positions.m <= 64 * words.len()` (checked
            // above), so every word index is in bounds of the array.
            let w = unsafe { l.gather(self.words.as_ptr(), l.shr::<6>(p)) };
            all &= l.covers(w, l.bit_mod64(p));
        }
        all
    }
}

/// One key of a batch on a SIMD tier: a function, not a closure, so that it inherits the
/// tier's target features (a closure would turn the intrinsics into calls).
#[inline(always)]
fn probe<L: Lanes, O: ClassicOp>(l: L, op: &mut O, shape: &ClassicShape, h: u64) -> bool {
    op.key_lanes(l, shape.positions(h))
}

/// A batch of keys applying `op` to the array of `shape`.
pub(crate) struct ClassicBatch<'k, 'o, O> {
    shape: ClassicShape,
    keys: Keys<'k>,
    op: O,
    sink: Sink<'o>,
}

impl<'k, 'o, O: ClassicOp> ClassicBatch<'k, 'o, O> {
    /// # Panics
    /// As [`Sink::prepare`]: an answer slice whose length does not fit `keys`.
    pub fn new(shape: ClassicShape, keys: Keys<'k>, op: O, mut sink: Sink<'o>) -> Self {
        sink.prepare(keys.len(), Takes::Any);
        ClassicBatch {
            shape,
            keys,
            op,
            sink,
        }
    }
}

/// One chunk's hashes, computed (and their lines prefetched) a chunk ahead of use.
struct Stage {
    hashes: [u64; CHUNK],
    len: usize,
}

impl Stage {
    const EMPTY: Stage = Stage {
        hashes: [0; CHUNK],
        len: 0,
    };

    /// Hashes keys `start..start + n` ([`hash_chunk`]) and, if asked, prefetches the lines of each
    /// key's first `j` positions (computed here for that alone: recomputing them at the probe
    /// is cheaper than storing and reloading them, measured).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn load<L: Lanes>(
        &mut self,
        l: L,
        shape: &ClassicShape,
        keys: Keys<'_>,
        start: usize,
        n: usize,
        base: Option<*const u64>,
        j: u32,
    ) {
        let hashes = &mut self.hashes[..n];
        hash_chunk(l, keys, shape.flip, start, hashes);
        if let Some(base) = base {
            for &h in hashes.iter() {
                prefetch_lines(base, shape.positions(h).first(j));
            }
        }
        self.len = n;
    }
}

/// Prefetches the line of each of `positions` in the array at `base`.
#[inline(always)]
fn prefetch_lines(base: *const u64, positions: Positions) {
    for p in positions {
        // Address arithmetic only; a prefetch never faults.
        prefetch(base.wrapping_add((p / 64) as usize));
    }
}

/// Positions a query beyond the caches reads before fetching the rest of a key's lines
/// ([`ClassicBatch::screened`]).
const SCREEN_PROBES: u32 = 2;

/// One chunk of a screened query through its three rounds: hashed with its first lines
/// prefetched, screened (the rest prefetched for the keys that pass), finished.
struct Screen {
    /// The chunk's hashes (and its length).
    stage: Stage,
    /// Its first key's index in the batch.
    start: usize,
    answers: [bool; CHUNK],
    /// Indices of the keys that passed the screen.
    passed: [u8; CHUNK],
    passed_len: usize,
}

impl Screen {
    const EMPTY: Screen = Screen {
        stage: Stage::EMPTY,
        start: 0,
        answers: [false; CHUNK],
        passed: [0; CHUNK],
        passed_len: 0,
    };

    /// Reads each key's first `j` positions: a key with one clear is answered, and the rest
    /// of the lines of a key that passed are prefetched.
    #[inline(always)]
    fn screen<O: ClassicOp>(&mut self, op: &mut O, shape: &ClassicShape, base: *const u64, j: u32) {
        let mut passed = 0;
        for (i, &h) in self.stage.hashes[..self.stage.len].iter().enumerate() {
            let positions = shape.positions(h);
            let pass = op.key(positions.first(j));
            self.answers[i] = pass;
            if pass {
                self.passed[passed] = i as u8;
                passed += 1;
                prefetch_lines(base, positions.after(j));
            }
        }
        self.passed_len = passed;
    }

    /// Reads the rest of the positions of the keys that passed.
    #[inline(always)]
    fn finish<O: ClassicOp>(&mut self, op: &mut O, shape: &ClassicShape, j: u32) {
        for &i in &self.passed[..self.passed_len] {
            let i = i as usize;
            self.answers[i] = op.key(shape.positions(self.stage.hashes[i]).after(j));
        }
    }
}

impl<O: ClassicOp> ClassicBatch<'_, '_, O> {
    /// A query of an array beyond the caches, in three rounds per chunk: its first
    /// [`SCREEN_PROBES`] lines are prefetched, then read; only the keys whose positions there
    /// are all set (every member, and about one absent key in four at the designed fill) have
    /// their other `k - 2` lines prefetched and read a round later. Where every line is
    /// prefetched at once, an absent key costs `k` misses; screened, about `2 + (k - 2) / 4`.
    #[inline(always)]
    fn screened<L: Lanes>(
        l: L,
        shape: ClassicShape,
        keys: Keys<'_>,
        mut op: O,
        mut sink: Sink<'_>,
        base: *const u64,
    ) {
        let len = keys.len();
        let k = shape.probes as usize;
        let j = SCREEN_PROBES.min(shape.probes);
        // As many lines per round as the unscreened pipeline for members (every key passes).
        let chunk = (PREFETCH_LINES / k).clamp(1, CHUNK);
        let mut slots = [Screen::EMPTY, Screen::EMPTY, Screen::EMPTY];
        let mut loaded = 0;
        // Round r loads chunk r, screens chunk r - 1 and finishes chunk r - 2: each prefetch
        // has a round of other work to hide behind.
        for round in 0.. {
            let [load, screen, finish] = [round % 3, (round + 2) % 3, (round + 1) % 3];
            if loaded < len {
                let n = chunk.min(len - loaded);
                let s = &mut slots[load];
                s.stage.load(l, &shape, keys, loaded, n, Some(base), j);
                (s.start, s.passed_len) = (loaded, 0);
                loaded += n;
            } else {
                slots[load].stage.len = 0;
            }
            slots[screen].screen(&mut op, &shape, base, j);
            let f = &mut slots[finish];
            if f.stage.len > 0 {
                f.finish(&mut op, &shape, j);
                sink.reborrow()
                    .fill(f.start, f.answers[..f.stage.len].iter().copied());
                f.stage.len = 0;
            }
            if loaded == len && slots.iter().all(|s| s.stage.len == 0) {
                break;
            }
        }
    }
}

impl<O: ClassicOp> Batch for ClassicBatch<'_, '_, O> {
    fn scalar(self) {
        let ClassicBatch {
            shape,
            keys,
            mut op,
            sink,
        } = self;
        let mut hashes = [0u64; CHUNK];
        let mut sink = sink;
        let len = keys.len();
        let mut start = 0;
        while start < len {
            let n = CHUNK.min(len - start);
            keys.slice(start, start + n)
                .hash_scalar(shape.flip, &mut hashes[..n]);
            let answers = hashes[..n].iter().map(|&h| op.key(shape.positions(h)));
            // `fill` drains the answers whatever the sink: an insert's are its side effects.
            sink.reborrow().fill(start, answers);
            start += n;
        }
    }

    #[inline(always)]
    fn lanes<L: Lanes>(self, l: L) {
        let ClassicBatch {
            shape,
            keys,
            mut op,
            mut sink,
        } = self;
        let len = keys.len();
        if len == 0 {
            return;
        }
        let k = shape.probes as usize;
        let base = (shape.num_bits > PREFETCH_ABOVE_BITS).then(|| op.words());
        if let Some(base) = base
            && op.screens()
        {
            return Self::screened(l, shape, keys, op, sink, base);
        }
        // A key touches k lines: a prefetched chunk of them is k times the misses of a blocked
        // filter's. Without prefetches a chunk only amortizes the hashing in lanes: the full
        // one (a 9-key chunk at k = 7 left one key of every chunk to the scalar tail).
        let chunk = match base {
            Some(_) => (PREFETCH_LINES / k).clamp(1, CHUNK),
            None => CHUNK,
        };
        // Without a vector variable shift (`portable`) the walk measured slower than
        // one key at a time.
        let grouped = L::VARIABLE_SHIFT && op.groups() && walkable(&shape);
        let mut stage = [Stage::EMPTY, Stage::EMPTY];
        let (mut start, mut cur) = (0, 0);
        stage[0].load(l, &shape, keys, 0, chunk.min(len), base, shape.probes);
        while start < len {
            let next = start + stage[cur].len;
            if next < len {
                stage[cur ^ 1].load(
                    l,
                    &shape,
                    keys,
                    next,
                    chunk.min(len - next),
                    base,
                    shape.probes,
                );
            }
            let s = &stage[cur];
            let hashes = &s.hashes[..s.len];
            if grouped {
                let mut answers = [false; CHUNK];
                let answers = &mut answers[..s.len];
                let mut hc = hashes.chunks_exact(8);
                let mut ac = answers.chunks_exact_mut(8);
                for (h, a) in (&mut hc).zip(&mut ac) {
                    let bits = op.group(l, Walk::new(l, &shape, h));
                    for (j, a) in a.iter_mut().enumerate() {
                        *a = bits >> j & 1 != 0;
                    }
                }
                for (a, &h) in ac.into_remainder().iter_mut().zip(hc.remainder()) {
                    *a = probe(l, &mut op, &shape, h);
                }
                sink.reborrow().fill(start, answers.iter().copied());
                start = next;
                cur ^= 1;
                continue;
            }
            match &mut sink {
                Sink::Discard => {
                    for &h in hashes {
                        probe(l, &mut op, &shape, h);
                    }
                }
                Sink::Each(out) => {
                    for (o, &h) in out[start..next].iter_mut().zip(hashes) {
                        *o = probe(l, &mut op, &shape, h);
                    }
                }
                Sink::Count(c) => {
                    let mut found = 0;
                    for &h in hashes {
                        found += probe(l, &mut op, &shape, h) as usize;
                    }
                    **c += found;
                }
                Sink::Bitmap(words) => {
                    for (i, &h) in (start..).zip(hashes) {
                        words[i / 64] |= (probe(l, &mut op, &shape, h) as u64) << (i % 64);
                    }
                }
                Sink::Select(out) => {
                    for (i, &h) in (start as u32..).zip(hashes) {
                        if probe(l, &mut op, &shape, h) {
                            out.push(i);
                        }
                    }
                }
            }
            start = next;
            cur ^= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use alloc::vec::Vec;

    use super::ClassicShape;

    /// The screen's two halves, `first(j)` then `after(j)`, are the key's positions in order,
    /// for every split (including past `k`) and for a halved shape (`design_bits > num_bits`).
    #[test]
    fn screen_halves_make_the_whole() {
        for (num_bits, design_bits, probes) in
            [(1_000_003, 1_000_003, 7), (500, 4_000, 13), (1, 1, 1)]
        {
            let shape = ClassicShape {
                num_bits,
                design_bits,
                probes,
                flip: 0,
            };
            for h in [0u64, 1, u64::MAX, 0x9e37_79b9_7f4a_7c15] {
                let all: Vec<u64> = shape.positions(h).collect();
                assert_eq!(all.len(), probes as usize);
                for j in 0..=probes + 1 {
                    let p = shape.positions(h);
                    let mut split: Vec<u64> = p.first(j).collect();
                    split.extend(p.after(j));
                    assert_eq!(split, all, "m={num_bits} k={probes} j={j}");
                }
            }
        }
    }
}
