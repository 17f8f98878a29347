//! The split block filter's batches on the engine's tiers. A key's eight bits are one vector
//! of 32-bit lanes (multiply the low hash half by the salts, keep the top five bits, shift a
//! one by them), run through the shared pipeline and dispatch as the main layout's blocks;
//! insert and query are [`SplitOp`]s; the value hash (XXH64, seed 0) is a [`Batch`] that a
//! tier with a faster lane form (AVX-512) overrides.

use crate::kernel::probe::pipeline::{PerKey, Walk, chunking, pipeline, prefetch_depth};
use crate::kernel::{Keys, Takes};
use crate::layout::split::{SPLIT_SALTS, SplitBlock, split_contains_scalar, split_insert_scalar};
use crate::simd::{Batch, Lanes};

pub(super) use crate::hashing::{xxh64_u32, xxh64_u64};
pub(super) use crate::kernel::{Kernel, Sink};
pub(super) use crate::layout::block_index;
pub(super) use crate::layout::split::{
    SPLIT_SALT as SALT, SplitBlock as Block, split_contains_scalar as contains_scalar,
    split_insert_scalar as insert_scalar,
};

/// One key's eight bits, as the tier computes them.
pub(crate) trait SplitProbes: Copy {
    /// Sets them in `block`.
    fn set_in(self, block: &mut SplitBlock);
    /// Whether all of them are set in `block`.
    fn all_in(self, block: &SplitBlock) -> bool;
}

/// The bits of `lo`, one at a time (the reference).
#[derive(Clone, Copy)]
struct ScalarSplit(u32);

impl SplitProbes for ScalarSplit {
    #[inline(always)]
    fn set_in(self, block: &mut SplitBlock) {
        split_insert_scalar(block, self.0)
    }

    #[inline(always)]
    fn all_in(self, block: &SplitBlock) -> bool {
        split_contains_scalar(block, self.0)
    }
}

/// The bits of `lo` in `L`'s 32-bit lanes.
#[derive(Clone, Copy)]
struct LaneSplit<L> {
    l: L,
    lo: u32,
}

impl<L: Lanes> LaneSplit<L> {
    #[inline(always)]
    fn mask(self) -> L::H {
        let l = self.l;
        let bits = l.shr32::<27>(l.mul32x32(l.splat32(self.lo), l.load32(&SPLIT_SALTS.0)));
        l.shl32_var(l.splat32(1), bits)
    }
}

impl<L: Lanes> SplitProbes for LaneSplit<L> {
    #[inline(always)]
    fn set_in(self, block: &mut SplitBlock) {
        let l = self.l;
        let b = l.or32(l.load32(&block.0), self.mask());
        l.store32(&mut block.0, b);
    }

    #[inline(always)]
    fn all_in(self, block: &SplitBlock) -> bool {
        let l = self.l;
        l.covers32(l.load32(&block.0), self.mask())
    }
}

/// What one key does to its split block.
pub(crate) trait SplitOp {
    /// The kinds of sink its batches take (see [`PerKey::TAKES`]).
    const TAKES: Takes = Takes::Any;
    /// Blocks the op indexes.
    fn num_blocks(&self) -> usize;
    /// Address of block 0 (for prefetch address arithmetic only).
    fn base(&self) -> *const SplitBlock;
    /// Applies one key's bits `p` to block `i`; the answer goes to the batch's sink.
    ///
    /// # Safety
    /// `i < self.num_blocks()`.
    unsafe fn apply<P: SplitProbes>(&mut self, i: usize, p: P) -> bool;
}

/// A batch of hashes, each applying `op` to its split block.
pub(crate) struct SplitBatch<'h, 'o, O> {
    hashes: &'h [u64],
    op: O,
    sink: Sink<'o>,
}

impl<'h, 'o, O: SplitOp> SplitBatch<'h, 'o, O> {
    /// # Panics
    /// As [`Sink::prepare`]: an answer slice whose length does not fit `hashes`.
    pub fn new(hashes: &'h [u64], op: O, mut sink: Sink<'o>) -> Self {
        sink.prepare(hashes.len(), O::TAKES);
        SplitBatch { hashes, op, sink }
    }
}

impl<O: SplitOp> Batch for SplitBatch<'_, '_, O> {
    fn scalar(self) {
        let n = self.op.num_blocks() as u64;
        let mut op = self.op;
        let mut apply = |h: u64| {
            // SAFETY: `block_index(h, n) < n == op.num_blocks()`.
            unsafe { op.apply(block_index(h, n), ScalarSplit(h as u32)) }
        };
        // The arms an op does not take are not compiled for it (as in `scalar::drive`).
        match self.sink {
            Sink::Discard if const { O::TAKES.discard() } => self.hashes.iter().for_each(|&h| {
                apply(h);
            }),
            Sink::Each(out) if const { O::TAKES.each() } => {
                for (o, &h) in out.iter_mut().zip(self.hashes) {
                    *o = apply(h);
                }
            }
            Sink::Count(c) if const { O::TAKES.count() } => {
                *c += self.hashes.iter().filter(|&&h| apply(h)).count()
            }
            other if const { O::TAKES.any() } => {
                other.fill(0, self.hashes.iter().map(|&h| apply(h)))
            }
            _ => unreachable!("a sink its operation does not take"),
        }
    }

    #[inline(always)]
    fn lanes<L: Lanes>(self, l: L) {
        // The stored words are little-endian and lanes load native words.
        if cfg!(target_endian = "big") {
            return self.scalar();
        }
        let n = self.op.num_blocks() as u64;
        let (chunk, prefetch) = chunking(prefetch_depth(
            n.saturating_mul(SplitBlock::BYTES as u64),
            L::ISA,
        ));
        let walk = Walk {
            flip: 0,
            num_blocks: n,
            chunk,
            prefetch,
            base: self.op.base().cast(),
            stride: SplitBlock::BYTES,
            halves: false,
        };
        let mut per_key = SplitLanes { l, op: self.op };
        pipeline(l, &walk, Keys::Hashes(self.hashes), &mut per_key, self.sink);
    }
}

struct SplitLanes<L, O> {
    l: L,
    op: O,
}

impl<L: Lanes, O: SplitOp> PerKey for SplitLanes<L, O> {
    const TAKES: Takes = O::TAKES;

    #[inline(always)]
    unsafe fn key(&mut self, i: usize, lo: u32) -> bool {
        // SAFETY: the caller guarantees `i < num_blocks` of the walk, which is
        // `op.num_blocks()`.
        unsafe { self.op.apply(i, LaneSplit { l: self.l, lo }) }
    }
}

/// Sets each hash's bits.
struct Insert<'a>(&'a mut [Block]);

impl SplitOp for Insert<'_> {
    const TAKES: Takes = Takes::Discard;

    fn num_blocks(&self) -> usize {
        self.0.len()
    }

    fn base(&self) -> *const Block {
        self.0.as_ptr()
    }

    #[inline(always)]
    unsafe fn apply<P: SplitProbes>(&mut self, i: usize, p: P) -> bool {
        // SAFETY: the caller guarantees `i < num_blocks()`.
        p.set_in(unsafe { self.0.get_unchecked_mut(i) });
        false
    }
}

/// Whether each hash's bits are all set.
struct Query<'a>(&'a [Block]);

impl SplitOp for Query<'_> {
    fn num_blocks(&self) -> usize {
        self.0.len()
    }

    fn base(&self) -> *const Block {
        self.0.as_ptr()
    }

    #[inline(always)]
    unsafe fn apply<P: SplitProbes>(&mut self, i: usize, p: P) -> bool {
        // SAFETY: the caller guarantees `i < num_blocks()`.
        p.all_in(unsafe { self.0.get_unchecked(i) })
    }
}

/// XXH64 (seed 0) of each value's 8 little-endian bytes.
struct Xxh64<'v, 'o> {
    values: &'v [u64],
    out: &'o mut [u64],
}

impl Batch for Xxh64<'_, '_> {
    fn scalar(self) {
        for (o, &v) in self.out.iter_mut().zip(self.values) {
            *o = xxh64_u64(v);
        }
    }

    #[inline(always)]
    fn lanes<L: Lanes>(self, l: L) {
        crate::kernel::plan::xxh64_u64(l, self.values, self.out)
    }
}

/// The split block filter's batches on a kernel.
pub(super) trait SplitKernel {
    fn split_insert(&self, blocks: &mut [Block], hashes: &[u64]);
    /// # Panics
    /// If `sink` holds a slice of another length than `hashes`.
    fn split_query(&self, blocks: &[Block], hashes: &[u64], sink: Sink<'_>);
    /// # Panics
    /// If `out.len() != values.len()`.
    fn xxh64_u64(&self, values: &[u64], out: &mut [u64]);
}

impl SplitKernel for Kernel {
    fn split_insert(&self, blocks: &mut [Block], hashes: &[u64]) {
        self.run(SplitBatch::new(hashes, Insert(blocks), Sink::Discard))
    }

    fn split_query(&self, blocks: &[Block], hashes: &[u64], sink: Sink<'_>) {
        self.run(SplitBatch::new(hashes, Query(blocks), sink))
    }

    fn xxh64_u64(&self, values: &[u64], out: &mut [u64]) {
        assert_eq!(
            values.len(),
            out.len(),
            "output slice length must equal count"
        );
        self.run(Xxh64 { values, out })
    }
}
