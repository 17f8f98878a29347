//! The guides: the long-form documentation of the crate, one module per topic.
//!
//! These modules hold no items; each is a chapter, rendered here and kept as markdown under
//! `docs/guide/` in the repository, and every Rust example in them is compiled and run as a
//! doctest. Start with [`keys`]; the rest can be read in any order.
//!
//! * [`keys`]: keys and answers for hot paths: one key, one hash; batches of integers, 16-byte
//!   keys and strings; byte columns, bitmaps, selection vectors, check-and-insert, Arrow arrays.
//! * [`many_writers`]: [`AtomicBloomFilter`](crate::AtomicBloomFilter) and the parallel bulk
//!   loads.
//! * [`files`]: the file format, zero-copy views of memory-mapped files, union, intersection and
//!   folding.
//! * [`parquet`]: Parquet's split-block filters, byte-compatible with what Parquet writers store.
//! * [`family`]: counting, deletable, scalable, compressed and Bloomier filters, the classic
//!   filter and variable increments.
//! * [`sizing`]: how a filter is sized from the exact model of its layout, and what that buys.
//! * [`kernels`]: how a key becomes bits in one block, the kernel tiers and their dispatch.
//! * [`memory`]: huge pages, the prefetch depth, the keys' own memory, many cores and NUMA.
//! * [`threat_model`]: keys crafted against a filter, and what `keyed()` does about them.
//! * [`applications`]: five example programs that put the filters to their classic uses.
//!
//! What is not about the API (the architecture and how to add a kernel tier or a filter kind, how
//! performance is measured and every figure's report, the file format's specification, CI) is
//! in the repository's `docs/` directory.

pub mod keys {
    #![doc = include_str!("../docs/guide/keys.md")]
    //!
    //! **API:** [`Key`](crate::Key), [`KeyForm`](crate::KeyForm), [`ByHash`](crate::ByHash),
    //! [`ByteColumn`](crate::ByteColumn), [`BloomFilter`](crate::BloomFilter),
    //! [`Builder`](crate::Builder), [`Filter`](crate::Filter).
}

pub mod many_writers {
    #![doc = include_str!("../docs/guide/many-writers.md")]
    //!
    //! **API:** [`AtomicBloomFilter`](crate::AtomicBloomFilter),
    //! [`set_yield_hook`](crate::set_yield_hook),
    //! [`BloomFilter`](crate::BloomFilter)'s `par_insert_batch` and `par_insert_batch_with`
    //! (feature `parallel`).
}

pub mod files {
    #![doc = include_str!("../docs/guide/files.md")]
    //!
    //! **API:** [`format`](crate::format), [`FilterRef`](crate::FilterRef),
    //! [`Error`](crate::Error).
}

pub mod parquet {
    #![doc = include_str!("../docs/guide/parquet.md")]
    //!
    //! **API:** [`parquet`](crate::parquet),
    //! [`SplitBlockFilter`](crate::parquet::SplitBlockFilter).
}

pub mod family {
    #![doc = include_str!("../docs/guide/family.md")]
    //!
    //! **API:** [`CountingBloomFilter`](crate::CountingBloomFilter),
    //! [`DeletableBloomFilter`](crate::DeletableBloomFilter),
    //! [`ScalableBloomFilter`](crate::ScalableBloomFilter),
    //! [`BloomierFilter`](crate::BloomierFilter),
    //! [`ClassicBloomFilter`](crate::ClassicBloomFilter),
    //! [`VariableIncrementBloomFilter`](crate::VariableIncrementBloomFilter), and
    //! `blockbloom::compressed` (feature `compress`).
}

pub mod sizing {
    #![doc = include_str!("../docs/guide/sizing.md")]
    //!
    //! **API:** [`sizing`](crate::sizing), [`Builder`](crate::Builder),
    //! [`layout`](crate::layout).
}

pub mod kernels {
    #![doc = include_str!("../docs/guide/kernels.md")]
    //!
    //! **API:** [`Isa`](crate::Isa), [`Builder::isa`](crate::Builder::isa),
    //! [`layout`](crate::layout), [`hash`](crate::hash).
}

pub mod memory {
    #![doc = include_str!("../docs/guide/memory.md")]
    //!
    //! **API:** [`memory`](crate::memory),
    //! [`MAX_PREFETCH_DEPTH`](crate::MAX_PREFETCH_DEPTH).
}

pub mod threat_model {
    #![doc = include_str!("../docs/guide/threat-model.md")]
    //!
    //! **API:** [`Builder`](crate::Builder)'s `keyed()` (feature `std`).
}

pub mod applications {
    #![doc = include_str!("../docs/guide/applications.md")]
}
