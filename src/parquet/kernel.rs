//! The split block filter's batch operations, run on the engine's kernels: insert and query
//! are [`SplitOp`]s on the shared lanes, pipeline and dispatch; the value hash (XXH64, seed 0)
//! is a [`Batch`] that a tier with a faster lane form (AVX-512) overrides.

use crate::kernel::{Batch, Lanes, SplitBatch, SplitOp, SplitProbes, Takes};

pub(super) use crate::hashing::{xxh64_u32, xxh64_u64};
pub(super) use crate::kernel::{Kernel, Sink};
pub(super) use crate::layout::block_index;
pub(super) use crate::layout::split::{
    SPLIT_SALT as SALT, SplitBlock as Block, split_contains_scalar as contains_scalar,
    split_insert_scalar as insert_scalar,
};

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
        l.xxh64_u64(self.values, self.out)
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
