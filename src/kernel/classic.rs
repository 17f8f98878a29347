//! The classic (unblocked) Bloom filter's batches on the same tiers: one array of `m` bits,
//! `k` positions per key by double hashing (Kirsch and Mitzenmacher 2006),
//! `g_i = h1 + i * h2 mod m`.
//!
//! A key's probes land on `k` different cache lines, so the batch is pipelined by lines, not
//! blocks: a chunk of keys is hashed in lanes, all `k` positions of each key are computed
//! and their lines prefetched, and the chunk before it is probed meanwhile. A query tests
//! eight positions at a time with one gather where the tier has one ([`Lanes::GATHERS`]),
//! else one word at a time, stopping at the first clear bit. Every tier sets and tests the
//! same positions as the scalar reference.

use super::pipeline::{CHUNK, Sink, cache_resident, prefetch};
use super::{Batch, Keys, Lanes};

/// Most probes a key may have.
pub(crate) const MAX_PROBES: u32 = 64;

/// Positions staged per chunk: the chunk holds `POSITIONS / stride` keys.
const POSITIONS: usize = 512;

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
    /// The `k` positions of the key hashing to `h`, into `out[..k]`: `h1` from the hash's
    /// high bits and `h2` from its low bits (each reduced to `0..design_bits` by a multiply
    /// and shift), then `h1 + i * h2 mod m` by additions.
    #[inline(always)]
    pub fn positions(&self, h: u64, out: &mut [u64]) {
        let m0 = self.design_bits;
        let m = self.num_bits;
        let mut x = reduce(h, m0);
        let mut d = reduce(h.rotate_left(32), m0);
        if m != m0 {
            // m divides m0, so (a mod m0) mod m = a mod m.
            x %= m;
            d %= m;
        }
        for o in &mut out[..self.probes as usize] {
            *o = x;
            x += d;
            x = if x >= m { x - m } else { x };
        }
    }

    /// Words of the array.
    pub fn num_words(&self) -> usize {
        self.num_bits.div_ceil(64) as usize
    }
}

/// `h` scaled to `0..m` (Lemire's multiply-shift reduction).
#[inline(always)]
fn reduce(h: u64, m: u64) -> u64 {
    ((h as u128 * m as u128) >> 64) as u64
}

/// What one key's positions do to the array.
pub(crate) trait ClassicOp {
    /// The array, for prefetch addresses and gathers.
    fn words(&self) -> *const u64;
    /// Applies one key's positions (`k` of them; on the lane path padded to a multiple of 8
    /// by repeating the first), one word at a time.
    fn scalar(&mut self, positions: &[u64]) -> bool;
    /// The same on a SIMD tier; `positions.len()` is a multiple of 8.
    fn lanes<L: Lanes>(&mut self, l: L, positions: &[u64]) -> bool;
}

/// Sets each position.
pub(crate) struct ClassicInsert<'a>(pub &'a mut [u64]);

impl ClassicOp for ClassicInsert<'_> {
    fn words(&self) -> *const u64 {
        self.0.as_ptr()
    }

    #[inline(always)]
    fn scalar(&mut self, positions: &[u64]) -> bool {
        for &p in positions {
            self.0[(p / 64) as usize] |= 1 << (p % 64);
        }
        true
    }

    #[inline(always)]
    fn lanes<L: Lanes>(&mut self, _: L, positions: &[u64]) -> bool {
        // No tier has a scatter-OR that survives two probes in one word.
        self.scalar(positions)
    }
}

/// Whether every position is set.
pub(crate) struct ClassicQuery<'a>(pub &'a [u64]);

impl ClassicOp for ClassicQuery<'_> {
    fn words(&self) -> *const u64 {
        self.0.as_ptr()
    }

    #[inline(always)]
    fn scalar(&mut self, positions: &[u64]) -> bool {
        positions
            .iter()
            .all(|&p| self.0[(p / 64) as usize] & (1 << (p % 64)) != 0)
    }

    #[inline(always)]
    fn lanes<L: Lanes>(&mut self, l: L, positions: &[u64]) -> bool {
        if !L::GATHERS {
            return self.scalar(positions);
        }
        for eight in positions.chunks_exact(8) {
            let p = l.loadu(eight);
            // SAFETY: every position is below `num_bits <= 64 * words.len()`, so every word
            // index is in bounds of the array.
            let w = unsafe { l.gather(self.0.as_ptr(), l.shr::<6>(p)) };
            if !l.covers(w, l.bit_mod64(p)) {
                return false;
            }
        }
        true
    }
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
        sink.prepare(keys.len());
        ClassicBatch {
            shape,
            keys,
            op,
            sink,
        }
    }
}

/// One chunk's keys: their positions, each key's at `stride` apart.
struct Stage {
    positions: [u64; POSITIONS],
    len: usize,
}

impl Stage {
    const EMPTY: Stage = Stage {
        positions: [0; POSITIONS],
        len: 0,
    };

    /// Hashes keys `start..start + n` in lanes, computes their positions (padded to `stride`
    /// with the first) and, if asked, prefetches their lines.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn load<L: Lanes>(
        &mut self,
        l: L,
        shape: &ClassicShape,
        keys: Keys<'_>,
        start: usize,
        n: usize,
        stride: usize,
        base: *const u64,
        fetch: bool,
    ) {
        let mut hashes = [0u64; CHUNK];
        keys.hash_lanes_at(l, shape.flip, start, &mut hashes[..n]);
        let k = shape.probes as usize;
        for (j, &h) in hashes[..n].iter().enumerate() {
            let key = &mut self.positions[j * stride..(j + 1) * stride];
            shape.positions(h, key);
            let first = key[0];
            key[k..].fill(first);
            if fetch {
                for &p in &key[..k] {
                    // Address arithmetic only; a prefetch never faults.
                    prefetch(base.wrapping_add((p / 64) as usize));
                }
            }
        }
        self.len = n;
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
        let mut positions = [0u64; MAX_PROBES as usize];
        let k = shape.probes as usize;
        let mut sink = sink;
        let len = keys.len();
        let mut start = 0;
        while start < len {
            let n = CHUNK.min(len - start);
            keys.slice(start, start + n)
                .hash_scalar(shape.flip, &mut hashes[..n]);
            let answers = hashes[..n].iter().map(|&h| {
                shape.positions(h, &mut positions);
                op.scalar(&positions[..k])
            });
            match &mut sink {
                Sink::Discard => answers.for_each(drop),
                Sink::Each(out) => {
                    for (o, a) in out[start..start + n].iter_mut().zip(answers) {
                        *o = a;
                    }
                }
                Sink::Count(c) => **c += answers.filter(|&a| a).count(),
                Sink::Bitmap(words) => Sink::Bitmap(words).fill(start, answers),
                Sink::Select(out) => Sink::Select(out).fill(start, answers),
            }
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
        let stride = (shape.probes as usize).next_multiple_of(8);
        let chunk = (POSITIONS / stride).clamp(1, 32);
        let fetch = !cache_resident(shape.num_bits.div_ceil(512));
        let base = op.words();
        let mut stage = [Stage::EMPTY, Stage::EMPTY];
        let (mut start, mut cur) = (0, 0);
        let first = chunk.min(len);
        stage[0].load(l, &shape, keys, 0, first, stride, base, fetch);
        while start < len {
            let next = start + stage[cur].len;
            if next < len {
                let n = chunk.min(len - next);
                stage[cur ^ 1].load(l, &shape, keys, next, n, stride, base, fetch);
            }
            let s = &stage[cur];
            let answers = s.positions[..s.len * stride].chunks_exact(stride);
            match &mut sink {
                Sink::Discard => {
                    for p in answers {
                        op.lanes(l, p);
                    }
                }
                Sink::Each(out) => {
                    for (o, p) in out[start..next].iter_mut().zip(answers) {
                        *o = op.lanes(l, p);
                    }
                }
                Sink::Count(c) => {
                    let mut found = 0;
                    for p in answers {
                        found += op.lanes(l, p) as usize;
                    }
                    **c += found;
                }
                Sink::Bitmap(words) => {
                    for (i, p) in (start..).zip(answers) {
                        words[i / 64] |= (op.lanes(l, p) as u64) << (i % 64);
                    }
                }
                Sink::Select(out) => {
                    for (i, p) in (start as u32..).zip(answers) {
                        if op.lanes(l, p) {
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
