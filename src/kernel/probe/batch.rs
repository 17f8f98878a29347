//! Batches of block operations: [`BlockBatch`] runs a [`BlockOp`] over a batch of keys, on
//! a SIMD tier through the pipeline (instantiated per layout and, for ops that ask, per round
//! count so the round loop unrolls), on the scalar tier through the reference loop; and the
//! burst entries run one over at most [`BURST`] keys without the pipeline.

use super::block::{self, BlockOp, HalfProbes, LaneProbes, Shape, Takes, rows_of};
use super::pipeline::{CHUNK, PerKey, Sink, Walk, pipeline, probe_staged};
use super::scalar;
use crate::hashing::WordHashKind;
use crate::kernel::plan;
use crate::kernel::shapes::Keys;
use crate::layout::{Block, Layout, ROWS_8X32, Row, Row32};
use crate::simd::{Batch, Lanes};

/// A batch of keys, each applying `op` to its block.
pub(crate) struct BlockBatch<'s, 'k, 'o, O> {
    shape: &'s Shape,
    keys: Keys<'k>,
    op: O,
    sink: Sink<'o>,
}

impl<'s, 'k, 'o, O: BlockOp> BlockBatch<'s, 'k, 'o, O> {
    /// # Panics
    /// If the op's blocks disagree with `shape` (the unchecked block accesses rely on this:
    /// multiply-shift yields indices below `num_blocks`), or `sink` does not fit `keys`
    /// ([`Sink::prepare`]).
    #[inline]
    pub fn new(shape: &'s Shape, keys: Keys<'k>, op: O, mut sink: Sink<'o>) -> Self {
        assert_eq!(
            shape.num_blocks,
            op.num_blocks() as u64,
            "filter shape and blocks disagree"
        );
        sink.prepare(keys.len(), O::TAKES);
        BlockBatch {
            shape,
            keys: keys.under(shape.hash),
            op,
            sink,
        }
    }
}

impl<O: BlockOp> Batch for BlockBatch<'_, '_, '_, O> {
    fn scalar(self) {
        scalar::run_blocks(self.shape, self.keys, self.op, self.sink)
    }

    #[inline(always)]
    fn lanes<L: Lanes>(self, l: L) {
        // The unrolled arms behind `const` guards: decided per instance before code
        // generation, so an op or tier that does not unroll never compiles them.
        match (self.shape.layout, self.shape.rounds) {
            (Layout::Sectors8x64, 1) if const { O::UNROLL && L::UNROLL_BATCHES } => {
                self.pipelined::<L, true, 1>(l)
            }
            (Layout::Sectors8x64, 2) if const { O::UNROLL && L::UNROLL_BATCHES } => {
                self.pipelined::<L, true, 2>(l)
            }
            (Layout::Sectors8x64, _) => self.pipelined::<L, true, 0>(l),
            (Layout::Sectors4x128, 1) if const { O::UNROLL && L::UNROLL_BATCHES } => {
                self.pipelined::<L, false, 1>(l)
            }
            (Layout::Sectors4x128, 2) if const { O::UNROLL && L::UNROLL_BATCHES } => {
                self.pipelined::<L, false, 2>(l)
            }
            (Layout::Sectors4x128, 3) if const { O::UNROLL && L::UNROLL_BATCHES } => {
                self.pipelined::<L, false, 3>(l)
            }
            (Layout::Sectors4x128, _) => self.pipelined::<L, false, 0>(l),
            (Layout::Sectors8x32, 1) if const { O::UNROLL && L::UNROLL_BATCHES } => {
                self.halved::<L, 1>(l)
            }
            (Layout::Sectors8x32, _) => self.halved::<L, 0>(l),
        }
    }
}

impl<O: BlockOp> BlockBatch<'_, '_, '_, O> {
    /// The pipeline for one layout (`WORDS`: `Sectors8x64`) and round count (`R = 0`: any,
    /// counted at run time).
    #[inline(always)]
    fn pipelined<L: Lanes, const WORDS: bool, const R: usize>(self, l: L) {
        let shape = self.shape;
        let rows = if R > 0 {
            &shape.layout.rows()[..R]
        } else {
            shape.rows()
        };
        let walk = self.walk();
        let mut per_key = Blocked::<L, O, WORDS> {
            l,
            op: self.op,
            rows,
        };
        pipeline(l, &walk, self.keys, &mut per_key, self.sink);
    }

    /// The `Sectors8x32` pipeline for `R` rounds (0: any, counted at run time). Its entries
    /// index halves, `2 * block + half`, which fit 32 bits up to 2^31 blocks; a filter past
    /// that (over 128 GiB, whose probes wait on memory anyway) takes the scalar reference, as
    /// a big-endian target does (its 32-bit sectors are not in memory order).
    #[inline(always)]
    fn halved<L: Lanes, const R: usize>(self, l: L) {
        if self.shape.num_blocks > 1 << 31 || cfg!(target_endian = "big") {
            return self.scalar();
        }
        let rounds = if R > 0 { R } else { self.shape.rounds };
        let walk = Walk {
            stride: size_of::<Block>() / 2,
            halves: true,
            ..self.walk()
        };
        let mut per_key = Halved::<L, O> {
            l,
            op: self.op,
            rows: &ROWS_8X32[..rounds],
        };
        pipeline(l, &walk, self.keys, &mut per_key, self.sink);
    }

    fn walk(&self) -> Walk {
        let shape = self.shape;
        Walk {
            flip: shape.flip,
            num_blocks: shape.num_blocks,
            chunk: shape.chunk,
            prefetch: shape.prefetch,
            base: self.op.base().cast(),
            stride: size_of::<Block>(),
            halves: false,
        }
    }
}

struct Halved<L, O> {
    l: L,
    op: O,
    rows: &'static [Row32],
}

impl<L: Lanes, O: BlockOp> PerKey for Halved<L, O> {
    const TAKES: Takes = O::TAKES;

    /// `j` is `2 * block + half` ([`block::entries_halves`]).
    #[inline(always)]
    unsafe fn key(&mut self, j: usize, lo: u32) -> bool {
        let p = HalfProbes {
            l: self.l,
            lo,
            half: j & 1,
            rows: self.rows,
        };
        // SAFETY: as in `Blocked::key`: `j / 2` is the block index below `num_blocks`.
        unsafe { self.op.apply_half(j, p) }
    }
}

struct Blocked<L, O, const WORDS: bool> {
    l: L,
    op: O,
    rows: &'static [Row],
}

impl<L: Lanes, O: BlockOp, const WORDS: bool> PerKey for Blocked<L, O, WORDS> {
    const TAKES: Takes = O::TAKES;

    #[inline(always)]
    unsafe fn key(&mut self, i: usize, lo: u32) -> bool {
        let p = LaneProbes::<L, WORDS> {
            l: self.l,
            lo,
            rows: self.rows,
        };
        // SAFETY: the caller guarantees `i < num_blocks` of the walk, which equals
        // `op.num_blocks()` (checked in `BlockBatch::new`).
        unsafe { self.op.apply(i, p) }
    }
}

/// How a burst walks its filter: the integer hash its keys take (the filter's own,
/// `plan::burst_keys`), the seed's XXH3 constant, and whether to ask for every key's block
/// before the first is probed (filters beyond the L2, as batches prefetch).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Burst {
    pub words: WordHashKind,
    pub flip: u64,
    pub prefetch: bool,
}

/// The most keys a burst entry takes (`OneKey::burst_query`, in the single-key layer above
/// this one): a NIC's receive burst.
/// At 32, calls of 64 keys (through the pipeline) ran slower per key than calls of 32; at 64
/// they ran faster than through the pipeline, measured against sbbf-rs's per-key loop
/// (`blockbloom-perf burst-pairs`: perf-reports/2026-12-01-bursts.md, the calls of 64 keys).
pub(crate) const BURST: usize = 64;

/// `op` on each of a burst of at most [`BURST`] `u64` keys under `KeyHash::Mx32` (MX32-64) or
/// `KeyHash::Moremur` (MM64) in the
/// layout of `WORDS` ([`layout_of`](super::block::layout_of)) with `R` rounds: the keys
/// hashed and placed in lanes, then probed in one loop. The filter chose this entry when it
/// was made, so a call pays no dispatch on the tier, layout, rounds or key kind, and no batch
/// pipeline: an 8-key `contains_batch` takes about half the instructions it took through the
/// pipeline (`blockbloom-perf burst-instructions 8`, callgrind: perf-reports/2026-12-01-bursts.md).
///
/// # Panics
/// If `keys` holds more than [`BURST`] keys or `sink` does not fit them ([`Sink::prepare`]).
#[inline(always)]
pub(crate) fn burst_blocked<L: Lanes, O: BlockOp, const WORDS: bool, const R: usize>(
    l: L,
    op: O,
    at: Burst,
    keys: &[u64],
    sink: Sink<'_>,
) {
    let (num_blocks, base) = (op.num_blocks() as u64, op.base().cast());
    let mut per_key = Blocked::<L, O, WORDS> {
        l,
        op,
        rows: rows_of::<WORDS, R>(),
    };
    // SAFETY: `num_blocks` and `base` are the op's.
    unsafe { burst::<L, _, false>(l, at, keys, sink, &mut per_key, num_blocks, base) }
}

/// [`burst_blocked`] in `Sectors8x32`. A filter of more than 2^31 blocks (whose half indices
/// do not fit the entries) takes the scalar reference, as its batches do.
///
/// # Panics
/// As [`burst_blocked`].
#[inline(always)]
pub(crate) fn burst_halved<L: Lanes, O: BlockOp, const R: usize>(
    l: L,
    op: O,
    at: Burst,
    keys: &[u64],
    sink: Sink<'_>,
) {
    let (num_blocks, base) = (op.num_blocks() as u64, op.base().cast());
    if num_blocks > 1 << 31 || cfg!(target_endian = "big") {
        return burst_scalar(Layout::Sectors8x32, R, op, at, keys, sink);
    }
    let mut per_key = Halved::<L, O> {
        l,
        op,
        rows: &ROWS_8X32[..R],
    };
    // SAFETY: `num_blocks` (at most 2^31) and `base` are the op's.
    unsafe { burst::<L, _, true>(l, at, keys, sink, &mut per_key, num_blocks, base) }
}

/// The burst entries' shared body: hashes the keys in lanes, places them (block entries, or
/// half entries where `HALVES`), asks for the key stream ahead and, where `at` says, for every
/// key's block (or half) from `base`, then probes them with `per_key`.
///
/// # Safety
/// `num_blocks` is the block count of `per_key`'s op (at most 2^31 where `HALVES`), and `base`
/// its block 0 (prefetch addresses only).
#[inline(always)]
unsafe fn burst<L: Lanes, A: PerKey, const HALVES: bool>(
    l: L,
    at: Burst,
    keys: &[u64],
    mut sink: Sink<'_>,
    per_key: &mut A,
    num_blocks: u64,
    base: *const u8,
) {
    let n = keys.len();
    sink.prepare(n, A::TAKES);
    let mut hashes = [0u64; BURST];
    let hashes = &mut hashes[..n];
    plan::burst_hash(l, at.words, at.flip, keys, hashes);
    let unit = if HALVES {
        block::entries_halves(l, hashes, num_blocks);
        size_of::<Block>() / 2
    } else {
        block::entries(l, hashes, num_blocks);
        size_of::<Block>()
    };
    let blocks = at.prefetch.then_some((base, unit));
    // SAFETY: `entries` made every index `block_index(h, num_blocks)`, and `entries_halves`
    // every entry `2 * block + half` of such a block, of the op's block count (the caller's
    // guarantee).
    unsafe { probe_staged(Keys::U64(keys), hashes, blocks, per_key, sink) };
}

/// The scalar reference's burst: `op` on each key, one probe at a time, as its batches do.
///
/// # Panics
/// If `sink` does not fit the keys ([`Sink::prepare`]).
pub(crate) fn burst_scalar<O: BlockOp>(
    layout: Layout,
    rounds: usize,
    op: O,
    at: Burst,
    keys: &[u64],
    mut sink: Sink<'_>,
) {
    sink.prepare(keys.len(), O::TAKES);
    let (hash, keys) = (at.words.key_hash(), plan::burst_scalar_keys(at.words, keys));
    let shape = Shape {
        num_blocks: op.num_blocks() as u64,
        layout,
        rounds,
        flip: at.flip,
        hash,
        chunk: CHUNK,
        prefetch: false,
    };
    scalar::run_blocks(&shape, keys, op, sink)
}

#[cfg(test)]
mod tests {
    use super::BlockBatch;
    use crate::kernel::probe::block::{Insert, InsertNew, Query, Shape};
    use crate::kernel::{Keys, Sink, Takes};
    use crate::layout::{Block, Layout};

    fn shape(num_blocks: u64) -> Shape {
        Shape {
            num_blocks,
            layout: Layout::Sectors8x64,
            rounds: 1,
            flip: 0,
            hash: crate::hashing::KeyHash::Xxh3,
            chunk: 64,
            prefetch: false,
        }
    }

    fn panics(f: impl FnOnce()) -> bool {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).is_err()
    }

    /// An op is made only with a sink it takes: its other arms are not compiled, so a wrong
    /// sink would otherwise lose its answers.
    #[test]
    fn batches_take_only_their_sinks() {
        let (mut out, mut n) = ([false; 3], 0);
        let kinds = [Takes::Any, Takes::Discard, Takes::Each, Takes::Count];
        for takes in kinds {
            let allowed = [
                !panics(|| Sink::Discard.prepare(3, takes)),
                !panics(|| Sink::Each(&mut out).prepare(3, takes)),
                !panics(|| Sink::Count(&mut n).prepare(3, takes)),
                !panics(|| Sink::Bitmap(&mut [0]).prepare(3, takes)),
                !panics(|| Sink::Select(&mut alloc::vec::Vec::new()).prepare(3, takes)),
            ];
            let expected = match takes {
                Takes::Any => [true; 5],
                Takes::Discard => [true, false, false, false, false],
                Takes::Each => [false, true, false, false, false],
                Takes::Count => [false, false, true, false, false],
            };
            assert_eq!(allowed, expected, "{takes:?}");
        }
        // A batch checks its op's kinds.
        let (s, keys) = (shape(4), [1u64, 2, 3]);
        let mut blocks = [Block::ZERO; 4];
        assert!(panics(|| {
            BlockBatch::new(
                &s,
                Keys::U64(&keys),
                Insert(&mut blocks),
                Sink::Each(&mut out),
            );
        }));
        assert!(panics(|| {
            BlockBatch::new(
                &s,
                Keys::U64(&keys),
                InsertNew(&mut blocks),
                Sink::Count(&mut n),
            );
        }));
        assert!(!panics(|| {
            BlockBatch::new(&s, Keys::U64(&keys), Query(&blocks), Sink::Count(&mut n));
        }));
    }
}
