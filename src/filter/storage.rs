//! How a filter's blocks are held, and how each way is read: the one thing the front-end's
//! shared queries ([`Filter`](super::Filter)) need from its storage: owned, borrowed and
//! atomic blocks here; counters in [`super::counting`].

use super::Meta;
use super::Striped;
use crate::filter::shared_ops;
use crate::kernel::{Keys, Sink};
use crate::layout::Block;
use crate::memory::PageBuf;

mod sealed {
    use crate::memory::PageBuf;

    pub trait Sealed {}
    impl Sealed for PageBuf<crate::layout::Block> {}
    impl Sealed for &[crate::layout::Block] {}
    impl Sealed for crate::filter::Striped {}
}

pub(crate) use sealed::Sealed;

/// The storage of a [`Filter`](super::Filter): owned blocks (`PageBuf<Block>`), borrowed
/// blocks (`&[Block]`), atomic words with their stripe locks ([`Striped`]) or counters
/// ([`Counters`](crate::filter::Counters)). Sealed: the crate's front-ends are its
/// only implementors, and its methods are the crate's own.
pub trait Storage: sealed::Sealed {
    /// Answers a batch on the filter's kernel.
    #[doc(hidden)]
    fn query(&self, meta: &Meta, keys: Keys<'_>, sink: Sink<'_>);
    /// Whether every probe of `hash` is set (the scalar reference).
    #[doc(hidden)]
    fn contains_hash(&self, meta: &Meta, hash: u64) -> bool;
    /// The model's false-positive rate once `keys` distinct keys are in the filter.
    #[doc(hidden)]
    fn model_fpr(&self, meta: &Meta, keys: u64) -> f64 {
        crate::sizing::false_positive_rate(
            keys,
            meta.shape.num_blocks,
            meta.shape.layout,
            meta.probes(),
        )
    }
}

/// Storage that is plain bits in memory, readable without atomics: the owned and borrowed
/// filters (for the statistics that read every block).
pub trait Bits: Storage {
    /// The blocks.
    #[doc(hidden)]
    fn bits(&self) -> &[Block];
}

/// Plain blocks, however they are held.
#[inline]
fn query_blocks(blocks: &[Block], meta: &Meta, keys: Keys<'_>, sink: Sink<'_>) {
    match meta.burst(keys) {
        Some((k, at)) => meta.one.burst_query(blocks, at, k, sink),
        None => meta.kernel.query(&meta.shape, blocks, keys, sink),
    }
}

/// The filter's single-key probe (its tier's, chosen when the filter was made).
#[inline(always)]
fn contains_in(blocks: &[Block], meta: &Meta, hash: u64) -> bool {
    meta.one.contains(meta.block_of(blocks, hash), hash as u32)
}

impl Storage for PageBuf<Block> {
    #[inline]
    fn query(&self, meta: &Meta, keys: Keys<'_>, sink: Sink<'_>) {
        query_blocks(self, meta, keys, sink)
    }

    #[inline]
    fn contains_hash(&self, meta: &Meta, hash: u64) -> bool {
        contains_in(self, meta, hash)
    }
}

impl Bits for PageBuf<Block> {
    fn bits(&self) -> &[Block] {
        self
    }
}

impl Storage for &[Block] {
    #[inline]
    fn query(&self, meta: &Meta, keys: Keys<'_>, sink: Sink<'_>) {
        query_blocks(self, meta, keys, sink)
    }

    #[inline]
    fn contains_hash(&self, meta: &Meta, hash: u64) -> bool {
        contains_in(self, meta, hash)
    }
}

impl Bits for &[Block] {
    fn bits(&self) -> &[Block] {
        self
    }
}

/// Atomic words are read with relaxed atomic loads only, never plain or vector loads (which
/// would race with writers).
impl Storage for Striped {
    #[inline]
    fn query(&self, meta: &Meta, keys: Keys<'_>, sink: Sink<'_>) {
        shared_ops::query(meta.kernel, &meta.shape, &self.blocks, keys, sink)
    }

    #[inline]
    fn contains_hash(&self, meta: &Meta, hash: u64) -> bool {
        meta.block_of(&self.blocks, hash)
            .has(&meta.one.pattern(hash as u32))
    }
}
