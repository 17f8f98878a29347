//! Block operations: what one key does to its 512-bit block, written once for every tier.
//!
//! A [`BlockOp`] receives the key's block index and its probes ([`Probes`]), which it can set
//! in a block, test against a block, or take as a pattern block. On a SIMD tier the probes are
//! computed in lanes when the op asks for them; on the scalar reference, one bit at a time.
//! [`BlockBatch`] runs an op over a batch of keys: on a SIMD tier through the pipeline,
//! instantiated per layout and (for ops that ask) per round count so the round loop unrolls;
//! on the scalar tier through the reference loop. The base filter's operations live here;
//! the family kinds define theirs next to their storage.

use super::pipeline::{CHUNK, PerKey, Sink, Takes, Walk, pipeline, probe_staged};
use super::{pattern, scalar};
use crate::hashing::KeyHash;
use crate::kernel::keys::Keys;
use crate::kernel::plan;
use crate::kernel::simd::{Batch, Lanes};
use crate::layout::stripes::Held;
use crate::layout::{AtomicBlock, Block, Layout, ROWS_8X32, Row, Row32};
use core::sync::atomic::AtomicU64;

/// What a filter needs to place a hash: block count, layout, probe rounds, and the seed's
/// XXH3 constant; and how its batches walk memory (chunk and prefetch), which changes speed
/// only, so equality ignores it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Shape {
    pub num_blocks: u64,
    pub layout: Layout,
    /// Probes per key divided by the layout's sectors (one round sets one probe per sector).
    pub rounds: usize,
    pub flip: u64,
    /// The filter's hash ([`KeyHash`]): hash id 2 turns byte strings and 16-byte keys into
    /// [`Keys::Aesh`] as a batch starts ([`BlockBatch::new`]).
    pub hash: KeyHash,
    /// Keys per pipelined chunk, from [`chunking`](super::pipeline::chunking).
    pub chunk: usize,
    /// Whether batches prefetch their blocks (filters beyond the cache).
    pub prefetch: bool,
}

impl PartialEq for Shape {
    fn eq(&self, other: &Shape) -> bool {
        (
            self.num_blocks,
            self.layout,
            self.rounds,
            self.flip,
            self.hash,
        ) == (
            other.num_blocks,
            other.layout,
            other.rounds,
            other.flip,
            other.hash,
        )
    }
}

impl Eq for Shape {}

impl Shape {
    /// Probes per key.
    pub fn probes(&self) -> usize {
        self.rounds * self.layout.sectors() as usize
    }

    /// The SIMD round table of this shape.
    pub fn rows(&self) -> &'static [Row] {
        &self.layout.rows()[..self.rounds]
    }
}

/// One key's probes, as the tier computes them.
pub(crate) trait Probes: Copy {
    /// Sets them in `block`.
    fn set_in(self, block: &mut Block);
    /// Whether all of them are set in `block`.
    fn all_in(self, block: &Block) -> bool;
    /// Them, as a block.
    fn pattern(self) -> Block;
    /// Sets them in `block` of a shared filter, in the stripe `guard` locks, answering
    /// whether some was not set before.
    #[inline(always)]
    fn or_locked(self, block: &AtomicBlock, guard: &impl Held) -> bool {
        block.or_locked(&self.pattern(), guard)
    }
}

/// The probes of `lo` computed in `L`'s lanes over `rows`.
#[derive(Clone, Copy)]
pub(crate) struct LaneProbes<L, const WORDS: bool> {
    l: L,
    lo: u32,
    rows: &'static [Row],
}

/// The `Sectors8x32` probes of `lo` computed in `L`'s 32-bit lanes over `rows`, in `half`
/// (`lo >> 31`, read from the entry).
#[derive(Clone, Copy)]
pub(crate) struct HalfProbes<L> {
    l: L,
    lo: u32,
    half: usize,
    rows: &'static [Row32],
}

impl<L: Lanes> Probes for HalfProbes<L> {
    #[inline(always)]
    fn set_in(self, block: &mut Block) {
        pattern::insert_8x32(self.l, block, self.lo, self.half, self.rows)
    }

    #[inline(always)]
    fn all_in(self, block: &Block) -> bool {
        pattern::contains_8x32(self.l, block, self.lo, self.half, self.rows)
    }

    #[inline(always)]
    fn pattern(self) -> Block {
        pattern::pattern_8x32(self.l, self.lo, self.half, self.rows)
    }
}

impl<L: Lanes> HalfProbes<L> {
    /// Sets them in `half`, a block's half given by its address.
    #[inline(always)]
    fn set_in_half(self, half: &mut [u32; 8]) {
        pattern::insert_in_half(self.l, half, self.lo, self.rows)
    }

    /// Whether all of them are set in `half`.
    #[inline(always)]
    fn all_in_half(self, half: &[u32; 8]) -> bool {
        pattern::contains_in_half(self.l, half, self.lo, self.rows)
    }

    /// Sets them in `half`, a half of a shared filter's block in the stripe `_guard` locks,
    /// answering whether some was not set before (see [`pattern::or_in_half_locked`]).
    ///
    /// # Safety
    /// `half` is 32-byte aligned (a half of an `AtomicBlock`) and inside `_guard`'s stripe.
    #[inline(always)]
    pub(crate) unsafe fn or_in_half_locked(
        self,
        half: &[AtomicU64; 4],
        _guard: &impl Held,
    ) -> bool {
        // SAFETY: aligned (the caller); every writer of the half holds its stripe's lock,
        // which `_guard` is (the caller).
        unsafe { pattern::or_in_half_locked(self.l, half, self.lo, self.rows) }
    }
}

/// Half `j % 2` of block `j / 2` of `blocks`, from its address (`32 j` bytes in).
///
/// # Safety
/// `j / 2 < blocks.len()`.
#[inline(always)]
unsafe fn half_at(blocks: *const Block, j: usize) -> *const [u32; 8] {
    // SAFETY: the caller guarantees block `j / 2` exists; its halves are two `[u32; 8]` of 32
    // bytes, 32-byte aligned (a block is 64 bytes, 64-byte aligned, of plain integers).
    unsafe { blocks.cast::<[u32; 8]>().add(j) }
}

/// [`half_at`], to write: from a pointer that may write (the slice's `as_mut_ptr`).
///
/// # Safety
/// As [`half_at`].
#[inline(always)]
unsafe fn half_at_mut(blocks: *mut Block, j: usize) -> *mut [u32; 8] {
    // SAFETY: as in `half_at`.
    unsafe { blocks.cast::<[u32; 8]>().add(j) }
}

impl<L: Lanes, const WORDS: bool> Probes for LaneProbes<L, WORDS> {
    #[inline(always)]
    fn set_in(self, block: &mut Block) {
        pattern::insert::<L, WORDS>(self.l, block, self.lo, self.rows)
    }

    #[inline(always)]
    fn all_in(self, block: &Block) -> bool {
        pattern::contains::<L, WORDS>(self.l, block, self.lo, self.rows)
    }

    #[inline(always)]
    fn pattern(self) -> Block {
        pattern::pattern_block::<L, WORDS>(self.l, self.lo, self.rows)
    }

    /// In registers: one vector load of the block, and (when it gains a bit) its vector
    /// stores.
    #[inline(always)]
    fn or_locked(self, block: &AtomicBlock, _guard: &impl Held) -> bool {
        // SAFETY: an `AtomicBlock` is 64-byte aligned; its writers all hold its stripe's
        // lock, which `_guard` is (the block is in it: `LockedInsert`).
        unsafe { pattern::or_locked::<L, WORDS>(self.l, &block.0, self.lo, self.rows) }
    }
}

/// What one key does to its block.
pub(crate) trait BlockOp {
    /// Whether batches instantiate this op per round count as well as per layout (unrolled
    /// round loops; more code) on the tiers that do ([`Lanes::UNROLL_BATCHES`]). Worth it for
    /// the base filter's hot operations.
    const UNROLL: bool = false;

    /// The kinds of sink its batches take (see [`PerKey::TAKES`]).
    const TAKES: Takes = Takes::Any;

    /// Blocks the op indexes; a batch checks it against the shape, which makes every block
    /// index it hands to [`apply`](Self::apply) valid.
    fn num_blocks(&self) -> usize;

    /// Address of block 0 (for prefetch address arithmetic only).
    fn base(&self) -> *const Block;

    /// Applies one key's probes `p` to block `i`; the answer goes to the batch's sink.
    ///
    /// # Safety
    /// `i < self.num_blocks()`.
    unsafe fn apply<P: Probes>(&mut self, i: usize, p: P) -> bool;

    /// Applies one key's `Sectors8x32` probes `p` (whose half is `j % 2`) to half `j % 2` of
    /// block `j / 2`. The base
    /// filter's batch operations override it to address the half directly, `32 j` bytes from
    /// block 0: one shift, where a block index and a half within it took several instructions
    /// a key (the compiler does not merge the two; counted at 737bf97).
    ///
    /// # Safety
    /// `j / 2 < self.num_blocks()`.
    #[inline(always)]
    unsafe fn apply_half<L: Lanes>(&mut self, j: usize, p: HalfProbes<L>) -> bool {
        // SAFETY: the caller's guarantee; `p` holds the half, `j % 2`.
        unsafe { self.apply(j >> 1, p) }
    }
}

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

    /// `j` is `2 * block + half` ([`pattern::entries_halves`]).
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

/// The layout whose rows are `Sectors8x64` rows when `WORDS` (see `pattern::pattern`).
pub(crate) const fn layout_of<const WORDS: bool>() -> Layout {
    if WORDS {
        Layout::Sectors8x64
    } else {
        Layout::Sectors4x128
    }
}

/// The first `R` rounds of the layout's row table.
#[inline(always)]
pub(crate) fn rows_of<const WORDS: bool, const R: usize>() -> &'static [Row] {
    &layout_of::<WORDS>().rows()[..R]
}

/// Sets each key's probes.
pub(crate) struct Insert<'a>(pub &'a mut [Block]);

impl BlockOp for Insert<'_> {
    const UNROLL: bool = true;
    const TAKES: Takes = Takes::Discard;

    fn num_blocks(&self) -> usize {
        self.0.len()
    }

    fn base(&self) -> *const Block {
        self.0.as_ptr()
    }

    #[inline(always)]
    unsafe fn apply<P: Probes>(&mut self, i: usize, p: P) -> bool {
        // SAFETY: the caller guarantees `i < num_blocks()`.
        p.set_in(unsafe { self.0.get_unchecked_mut(i) });
        false
    }

    #[inline(always)]
    unsafe fn apply_half<L: Lanes>(&mut self, j: usize, p: HalfProbes<L>) -> bool {
        // SAFETY: the caller guarantees `j / 2 < num_blocks()`; the slice is borrowed
        // mutably, so the half may be written.
        p.set_in_half(unsafe { &mut *half_at_mut(self.0.as_mut_ptr(), j) });
        false
    }
}

/// Sets each key's probes, answering whether some of them were not set before (the key is
/// new). Keys take effect one after another, so a key repeated in a batch is new once.
pub(crate) struct InsertNew<'a>(pub &'a mut [Block]);

impl BlockOp for InsertNew<'_> {
    const UNROLL: bool = true;
    const TAKES: Takes = Takes::Each;

    fn num_blocks(&self) -> usize {
        self.0.len()
    }

    fn base(&self) -> *const Block {
        self.0.as_ptr()
    }

    #[inline(always)]
    unsafe fn apply<P: Probes>(&mut self, i: usize, p: P) -> bool {
        // SAFETY: the caller guarantees `i < num_blocks()`.
        let block = unsafe { self.0.get_unchecked_mut(i) };
        let new = !p.all_in(block);
        p.set_in(block);
        new
    }
}

/// Whether each key's probes are all set.
pub(crate) struct Query<'a>(pub &'a [Block]);

impl BlockOp for Query<'_> {
    const UNROLL: bool = true;

    fn num_blocks(&self) -> usize {
        self.0.len()
    }

    fn base(&self) -> *const Block {
        self.0.as_ptr()
    }

    #[inline(always)]
    unsafe fn apply<P: Probes>(&mut self, i: usize, p: P) -> bool {
        // SAFETY: the caller guarantees `i < num_blocks()`.
        p.all_in(unsafe { self.0.get_unchecked(i) })
    }

    #[inline(always)]
    unsafe fn apply_half<L: Lanes>(&mut self, j: usize, p: HalfProbes<L>) -> bool {
        // SAFETY: the caller guarantees `j / 2 < num_blocks()`.
        p.all_in_half(unsafe { &*half_at(self.0.as_ptr(), j) })
    }
}

#[cfg(test)]
mod tests {
    use super::{BlockBatch, Insert, InsertNew, Query, Shape};
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

/// How a burst walks its filter: the seed's XXH3 constant, and whether to ask for every
/// key's block before the first is probed (filters beyond the L2, as batches prefetch).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Burst {
    pub flip: u64,
    pub prefetch: bool,
}

/// The most keys a burst entry takes
/// ([`OneKey::burst_query`](super::one_key::OneKey::burst_query)): a NIC's receive burst.
/// At 32, calls of 64 keys (through the pipeline) ran slower per key than calls of 32; at 64
/// they ran faster than through the pipeline, measured against sbbf-rs's per-key loop
/// (`examples/burst_pairs`: perf-reports/2026-12-01-bursts.md, the calls of 64 keys).
pub(crate) const BURST: usize = 64;

/// `op` on each of a burst of at most [`BURST`] `u64` keys under hash id 3 (MX32-64) in the
/// layout of `WORDS` ([`layout_of`]) with `R` rounds: the keys
/// hashed and placed in lanes, then probed in one loop. The filter chose this entry when it
/// was made, so a call pays no dispatch on the tier, layout, rounds or key kind, and no batch
/// pipeline: an 8-key `contains_batch` takes about half the instructions it took through the
/// pipeline (`examples/burst_instructions 8`, callgrind: perf-reports/2026-12-01-bursts.md).
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
    plan::burst_hash(l, at.flip, keys, hashes);
    let unit = if HALVES {
        pattern::entries_halves(l, hashes, num_blocks);
        size_of::<Block>() / 2
    } else {
        pattern::entries(l, hashes, num_blocks);
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
    let (hash, keys) = plan::burst_scalar_keys(keys);
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
