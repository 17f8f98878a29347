//! [`AtomicBloomFilter`]: the same filter over atomic words, for many concurrent writers.

use super::{BatchKey, Builder, ByteColumn, Filter, KeySource};
use crate::error::Error;
use crate::filter::BloomFilter;
use crate::hashing::hash_bytes;
use crate::kernel::{AtomicInsertNew, Keys, Sink};
use crate::key::Key;
use crate::layout::{AtomicBlock, Block};
use crate::memory::PageBuf;

/// A [`BloomFilter`] that many threads can insert into at once, through `&self`, with no lock.
///
/// Same block layout, hash, sizing and answers as `BloomFilter`; the words are `AtomicU64`.
/// An insert reads each word of its block that its pattern touches and `fetch_or`s
/// (`Relaxed`) only the words that lack some of its bits, so no insert is ever lost and
/// re-inserting a present key writes nothing. Queries read the words with relaxed atomic
/// loads, never with plain or SIMD loads, which would race with the writers. Batches still
/// hash their keys in SIMD lanes, build each key's pattern in a vector register and prefetch
/// their blocks, like the plain filter's.
///
/// **What a reader is guaranteed.** If an insert of a key *happens-before* a query of it (the
/// writer's thread was joined, or the writer released a flag the reader acquired, or any
/// other synchronisation), the query finds it: every word it reads is at least as new as the
/// insert's `fetch_or`. A query racing with the insert of the same key may or may not find it
/// yet. Nothing else is promised about ordering between different keys; filters need nothing
/// else.
///
/// When the writers are done, [`into_filter`](Self::into_filter) turns it into a plain
/// `BloomFilter` without copying, bit-identical to one built single-threaded from the same
/// keys, with the full-speed SIMD queries.
///
/// ```
/// use blockbloom::AtomicBloomFilter;
///
/// let f = AtomicBloomFilter::with_capacity(100_000, 0.01)?;
/// std::thread::scope(|s| {
///     for t in 0..4u64 {
///         let f = &f;
///         s.spawn(move || {
///             let keys: Vec<u64> = (t * 25_000..(t + 1) * 25_000).collect();
///             f.insert_batch(&keys);
///         });
///     }
/// });
/// assert_eq!(f.count_batch(&(0..100_000u64).collect::<Vec<_>>()), 100_000);
/// let plain = f.into_filter();
/// assert!(plain.contains(&99_999u64));
/// # Ok::<(), blockbloom::Error>(())
/// ```
///
/// The queries and accessors are [`Filter`]'s, shared with [`BloomFilter`] and
/// [`FilterRef`](crate::FilterRef).
///
/// `Send` and `Sync`: any number of threads insert and query through `&self`.
pub type AtomicBloomFilter = Filter<PageBuf<AtomicBlock>>;

impl BloomFilter {
    /// Turns the filter into an [`AtomicBloomFilter`] with the same bits, without copying.
    ///
    /// ```
    /// let mut f = blockbloom::BloomFilter::with_capacity(1000, 0.01)?;
    /// f.insert(&1u64);
    /// let a = f.into_atomic();
    /// a.insert(&2u64);
    /// assert!(a.contains(&1u64) && a.contains(&2u64));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn into_atomic(self) -> AtomicBloomFilter {
        // SAFETY: `AtomicBlock` has the size and alignment of `Block` (asserted at compile time
        // in `layout`, and again by `cast`) and `AtomicU64` the in-memory representation of
        // `u64`, so every initialised `u64` is a valid `AtomicU64`; the memory (a mapping or
        // an allocation) stays where it is and is freed as it was made. `self` is owned, so
        // nothing else refers to the blocks.
        let blocks = unsafe { self.store.cast::<AtomicBlock>() };
        Filter {
            store: blocks,
            meta: self.meta,
        }
    }
}

impl Builder {
    /// Builds an [`AtomicBloomFilter`] (same options as [`Builder::build`]).
    ///
    /// ```
    /// let f = blockbloom::BloomFilter::builder().capacity(1000).fpr(0.001).build_atomic()?;
    /// f.insert(&"shared");
    /// assert!(f.contains(&"shared"));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Builder::build`].
    pub fn build_atomic(self) -> Result<AtomicBloomFilter, Error> {
        Ok(self.build()?.into_atomic())
    }
}

impl AtomicBloomFilter {
    /// The filter [`BloomFilter::with_capacity`] would build, over atomic words.
    ///
    /// # Errors
    /// As [`BloomFilter::with_capacity`].
    pub fn with_capacity(capacity: u64, fpr: f64) -> Result<AtomicBloomFilter, Error> {
        Ok(BloomFilter::with_capacity(capacity, fpr)?.into_atomic())
    }

    /// Turns the filter back into a plain [`BloomFilter`] without copying (the writers are
    /// done: `self` is owned). Its queries then run on the SIMD kernels directly.
    pub fn into_filter(self) -> BloomFilter {
        // SAFETY: the reverse of `BloomFilter::into_atomic`: same size, alignment and
        // representation; owning `self` means no thread can still reach the atomics.
        let blocks = unsafe { self.store.cast::<Block>() };
        Filter {
            store: blocks,
            meta: self.meta,
        }
    }

    /// A plain copy of the filter as it is now (relaxed loads; writers may go on).
    ///
    /// ```
    /// let f = blockbloom::AtomicBloomFilter::with_capacity(1000, 0.01)?;
    /// f.insert(&7u64);
    /// let snapshot = f.snapshot();
    /// f.insert(&8u64);
    /// assert!(snapshot.contains(&7u64));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn snapshot(&self) -> BloomFilter {
        let huge = self.store.huge();
        Filter {
            store: PageBuf::collect(self.store.iter().map(AtomicBlock::load), huge),
            meta: self.meta,
        }
    }

    /// Bytes of the words the kernel backs with transparent huge pages now (see
    /// [`BloomFilter::huge_page_bytes`](crate::BloomFilter::huge_page_bytes)).
    pub fn huge_page_bytes(&self) -> Option<u64> {
        crate::memory::huge_page_bytes(&self.store[..])
    }

    /// Inserts a key: any [`Key`] type, hashed from its canonical form exactly as the batch,
    /// byte and column methods hash it (see [`BloomFilter::insert`](crate::BloomFilter::insert)).
    #[inline]
    pub fn insert<K: Key + ?Sized>(&self, key: &K) {
        self.insert_hash(self.meta.key_hash(key))
    }

    /// Inserts a raw byte string, hashed exactly: the same key as `insert(bytes)`.
    #[inline]
    pub fn insert_bytes(&self, bytes: &[u8]) {
        self.insert_hash(hash_bytes(bytes, self.meta.seed))
    }

    /// Inserts a pre-computed hash.
    #[inline]
    pub fn insert_hash(&self, hash: u64) {
        let p = self.meta.one.pattern(hash as u32);
        self.meta.block_of(&self.store, hash).or(&p)
    }

    /// Inserts a batch of integer keys: hashed in SIMD lanes, blocks prefetched, one relaxed
    /// `fetch_or` per word that lacks bits.
    pub fn insert_batch<K: BatchKey>(&self, keys: &[K]) {
        self.meta
            .kernel
            .atomic_insert(&self.meta.shape, &self.store, K::as_keys(keys).0)
    }

    /// Inserts every key of a [`ByteColumn`], each hashed as
    /// [`insert_bytes`](Self::insert_bytes) of its bytes.
    pub fn insert_column(&self, column: &ByteColumn<'_>) {
        self.meta
            .kernel
            .atomic_insert(&self.meta.shape, &self.store, column.key_slice().0)
    }

    /// Inserts `key` and answers whether it is new: `true` when some bit of its pattern was
    /// not set before, judged from the old words that the `fetch_or`s return (no separate
    /// read, so no window between check and insert).
    ///
    /// When threads insert the same new key at the same time, **at least one of them gets
    /// `true`**: the first `fetch_or` on each word of the pattern sees the word without its
    /// bits. More than one can get `true` (each first on a different word), so count a key as
    /// new where any thread says so, not where exactly one does.
    ///
    /// ```
    /// let seen = blockbloom::AtomicBloomFilter::with_capacity(1000, 0.01)?;
    /// assert!(seen.insert_new(&42u64));
    /// assert!(!seen.insert_new(&42u64));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    #[inline]
    pub fn insert_new<K: Key + ?Sized>(&self, key: &K) -> bool {
        self.insert_hash_new(self.meta.key_hash(key))
    }

    /// [`insert_new`](Self::insert_new) for a pre-computed hash.
    #[inline]
    pub fn insert_hash_new(&self, hash: u64) -> bool {
        let p = self.meta.one.pattern(hash as u32);
        self.meta.block_of(&self.store, hash).or_new(&p)
    }

    /// Inserts a batch, answering for each key whether it was new
    /// ([`insert_new`](Self::insert_new), with its guarantee under concurrent writers) into
    /// `out`; returns how many were. Within the batch keys take effect in order, so a key
    /// repeated inside it is new at most once.
    ///
    /// # Panics
    /// If `out.len()` is not the number of keys.
    ///
    /// ```
    /// let seen = blockbloom::AtomicBloomFilter::with_capacity(1000, 0.01)?;
    /// let mut new = [false; 3];
    /// assert_eq!(seen.insert_batch_new(&["a", "b", "a"], &mut new), 2);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn insert_batch_new<Q: KeySource + ?Sized>(&self, keys: &Q, out: &mut [bool]) -> usize {
        self.insert_keys_new(keys.key_slice().0, out)
    }

    // Not generic: compiled once, here (see `Kernel::blocks`).
    fn insert_keys_new(&self, keys: Keys<'_>, out: &mut [bool]) -> usize {
        let op = AtomicInsertNew(&self.store);
        self.meta
            .kernel
            .blocks(&self.meta.shape, keys, op, Sink::Each(out));
        out.iter().filter(|&&new| new).count()
    }

    /// Inserts a batch of pre-computed hashes.
    pub fn insert_hash_batch(&self, hashes: &[u64]) {
        self.meta
            .kernel
            .atomic_insert(&self.meta.shape, &self.store, Keys::Hashes(hashes))
    }
}

impl core::fmt::Debug for AtomicBloomFilter {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("AtomicBloomFilter")
            .field("num_blocks", &self.num_blocks())
            .field("layout", &self.layout())
            .field("probes", &self.probes())
            .field("seed", &self.seed())
            .field("isa", &self.isa())
            .finish_non_exhaustive()
    }
}
