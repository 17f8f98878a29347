//! [`AtomicBloomFilter`]: the same filter over atomic words, for many concurrent writers.

use super::writer::AtomicWriter;
use super::{BatchKey, Builder, ByteColumn, Filter, KeySource};
use crate::error::Error;
use crate::filter::BloomFilter;
use crate::filter::shared_ops::{HeldInsert, LockedInsert};
use crate::kernel::{Keys, Sink};
use crate::key::Key;
use crate::layout::stripes::Stripes;
use crate::layout::{AtomicBlock, Block, block_index};
use crate::memory::PageBuf;

/// The storage of an [`AtomicBloomFilter`]: its blocks as atomic words, and the stripe locks
/// its writers take (`layout::stripes`).
pub struct Striped {
    pub(super) blocks: PageBuf<AtomicBlock>,
    pub(super) stripes: Stripes,
}

impl Striped {
    fn new(blocks: PageBuf<AtomicBlock>) -> Striped {
        let stripes = Stripes::new(blocks.len());
        Striped { blocks, stripes }
    }
}

/// A [`BloomFilter`] that many threads can insert into at once, through `&self`, with no lock.
///
/// Same block layout, hash, sizing and answers as `BloomFilter`; the words are `AtomicU64`.
///
/// **How writers share it.** The blocks are cut into stripes of consecutive blocks (at most
/// 64), each with a lock on its own cache line. A writer sets a block's bits only while it
/// holds that block's stripe lock, with relaxed loads and plain relaxed stores: one locked
/// instruction per lock taken instead of one per word written, and no bit is ever lost
/// whatever mix of writers runs. Readers take no lock: queries read the words with relaxed
/// atomic loads (never plain or SIMD loads, which would race with the writers), so a reader
/// never waits for a writer. Three ways to write, fastest first:
///
/// * a **writer handle** per thread ([`writer`](Self::writer)): into a filter of at most
///   [`PRIVATE_MAX_BYTES`](AtomicWriter::PRIVATE_MAX_BYTES), it sets its keys in a private
///   copy and ORs the copy in when it publishes; above it, it buffers its keys' hashes,
///   partitioned by stripe as it fills, and applies them taking each stripe's lock once,
///   through the same pipelined, prefetching batch kernel as the plain filter;
/// * a **shared batch** ([`insert_batch`](Self::insert_batch) and the other batch inserts):
///   into a filter of at most [`PRIVATE_MAX_BYTES`](AtomicWriter::PRIVATE_MAX_BYTES), it
///   hashes 4,096 keys at a time and sets them holding every stripe's lock, or hands them to
///   the writer that holds them, which sets them with its own (one core writes the lines,
///   where two would pass them back and forth); above it, it hashes up to 16,384 keys at a
///   time, groups them by stripe and sets them taking each stripe's lock once;
/// * a **single key** ([`insert`](Self::insert), [`insert_new`](Self::insert_new)): one lock,
///   the block's words, the unlock.
///
/// Any of them can run at once with any other and with readers. The bits of the filter are
/// the same as a single-threaded build from the same keys.
///
/// **Every writer finishes.** The stripe locks are FIFO (ticket locks): with W writers at
/// once, of any kind, a writer waits for at most W - 1 holds of a lock before it gets it. A
/// hold of one stripe is one writer's keys of that stripe; a hold of every stripe takes the
/// other stripes in order and applies the holder's run and at most one run of each other
/// writer. A shared batch's run of up to 4,096 keys returns after at most 2(W - 1) runs of
/// other writers applied holding every lock. A waiting writer next in line pauses, then
/// yields to the scheduler (one with another waiter ahead of it yields at once): with `std`,
/// or through the hook given to [`set_yield_hook`](crate::set_yield_hook) (without `std` and
/// without a hook it backs off but never yields, so keep the writers no more than the cores:
/// docs/guide/many-writers.md). If a writer panics while it applies
/// another writer's run, that run goes back to its writer, which applies it itself: no
/// writer waits for a panicked one.
///
/// **What a reader is guaranteed.** If an insert of a key *happens-before* a query of it (the
/// insert returned and the writer's thread was joined, or the writer released a flag the
/// reader acquired, or any other synchronisation), the query finds it: the insert's stores
/// come before its unlock, and words only gain bits. For a writer handle, "the insert" is the
/// [`flush`](AtomicWriter::flush) (or drop) that applied the key, not the call that buffered
/// it. A query racing with the insert of the same key may or may not find it yet. Nothing
/// else is promised about ordering between different keys; filters need nothing else.
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
/// With a writer handle per thread:
///
/// ```
/// use blockbloom::AtomicBloomFilter;
///
/// let f = AtomicBloomFilter::with_capacity(100_000, 0.01)?;
/// std::thread::scope(|s| {
///     for t in 0..4u64 {
///         let f = &f;
///         s.spawn(move || {
///             let mut w = f.writer();
///             for k in t * 25_000..(t + 1) * 25_000 {
///                 w.insert(&k);
///             }
///             // Dropping `w` flushes what it still buffers.
///         });
///     }
/// });
/// assert_eq!(f.count_batch(&(0..100_000u64).collect::<Vec<_>>()), 100_000);
/// # Ok::<(), blockbloom::Error>(())
/// ```
///
/// The queries and accessors are [`Filter`]'s, shared with [`BloomFilter`] and
/// [`FilterRef`](crate::FilterRef).
///
/// `Send` and `Sync`: any number of threads insert and query through `&self`.
pub type AtomicBloomFilter = Filter<Striped>;

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
            store: Striped::new(blocks),
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
        let blocks = unsafe { self.store.blocks.cast::<Block>() };
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
        let huge = self.store.blocks.huge();
        Filter {
            store: PageBuf::collect(self.store.blocks.iter().map(AtomicBlock::load), huge),
            meta: self.meta,
        }
    }

    /// Bytes of the words the kernel backs with transparent huge pages now (see
    /// [`BloomFilter::huge_page_bytes`](crate::BloomFilter::huge_page_bytes)).
    pub fn huge_page_bytes(&self) -> Option<u64> {
        crate::memory::huge_page_bytes(&self.store.blocks[..])
    }

    /// Inserts a key: any [`Key`] type, hashed from its canonical form exactly as the batch,
    /// byte and column methods hash it (see [`BloomFilter::insert`](crate::BloomFilter::insert)).
    #[inline]
    pub fn insert<K: Key + ?Sized>(&self, key: &K) {
        self.insert_hash(self.meta.hash_of(key))
    }

    /// Inserts a raw byte string, hashed exactly: the same key as `insert(bytes)`.
    #[inline]
    pub fn insert_bytes(&self, bytes: &[u8]) {
        self.insert_hash(self.meta.hash_of(bytes))
    }

    /// Inserts a pre-computed hash.
    #[inline]
    pub fn insert_hash(&self, hash: u64) {
        self.insert_hash_new(hash);
    }

    /// Inserts a batch of keys (integers, 16-byte keys, byte strings): hashed in SIMD lanes
    /// and set with blocks prefetched, every key set when it returns. Into a filter of at most
    /// [`AtomicWriter::PRIVATE_MAX_BYTES`] its keys are set holding every stripe's lock (or
    /// handed to the writer holding them); into a larger one they are grouped by stripe and
    /// set taking each stripe's lock once. Many threads can call it at once; calls of a few
    /// hundred keys cost about what long ones do per key, where a [writer
    /// handle](Self::writer) also buffers across calls. With `std`, each calling thread keeps
    /// the buffer its calls hash into, up to 64 KiB, for its next call (freed when the thread
    /// ends).
    pub fn insert_batch<K: BatchKey>(&self, keys: &[K]) {
        self.insert_keys(K::as_keys(keys).0)
    }

    /// Inserts every key of a [`ByteColumn`], each hashed as
    /// [`insert_bytes`](Self::insert_bytes) of its bytes (as [`insert_batch`](Self::insert_batch)).
    pub fn insert_column(&self, column: &ByteColumn<'_>) {
        self.insert_keys(column.key_slice().0)
    }

    /// A writer handle for one thread (see [`AtomicWriter`]), the fastest way to feed the
    /// filter from many threads. Its keys become visible when it applies them: when it fills,
    /// on [`flush`](AtomicWriter::flush), and when it is dropped. Which handle depends on
    /// the filter's size:
    ///
    /// * up to [`AtomicWriter::PRIVATE_MAX_BYTES`] (4 MiB, about 3.4 million keys at 1%), a
    ///   **private** handle ([`try_private_writer`](Self::try_private_writer)): it sets its
    ///   keys in its own copy of the filter, as fast as a plain filter, and ORs the copy in
    ///   when it fills (32 keys per block), flushes or drops. It costs a copy of the filter
    ///   (at most 4 MiB) per handle, and each flush a pass over the filter: flush when keys
    ///   must be visible, not after every batch;
    /// * above it, a **buffering** handle ([`try_writer`](Self::try_writer) with 16,384 slots,
    ///   128 KiB): it buffers hashes by stripe and applies them under the stripes' locks when
    ///   a stripe's slots fill, flushes or drops; a flush costs only what it holds.
    ///
    /// ```
    /// let f = blockbloom::AtomicBloomFilter::with_capacity(1000, 0.01)?;
    /// let mut w = f.writer();
    /// w.insert_batch(&[1u64, 2, 3]);
    /// w.insert(&"four");
    /// w.flush();
    /// assert!(f.contains(&2u64) && f.contains(&"four"));
    /// assert!(w.is_private()); // a small filter
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    ///
    /// The handle borrows the filter, so the filter cannot be turned into a plain one while a
    /// handle lives:
    ///
    /// ```compile_fail
    /// let f = blockbloom::AtomicBloomFilter::with_capacity(1000, 0.01).unwrap();
    /// let mut w = f.writer();
    /// let plain = f.into_filter(); // error: `f` is borrowed by `w`
    /// w.insert(&1u64);
    /// ```
    ///
    /// Allocating the copy or the buffer aborts on lack of memory, as `Vec` does;
    /// [`try_private_writer`](Self::try_private_writer) and [`try_writer`](Self::try_writer)
    /// return an error instead.
    pub fn writer(&self) -> AtomicWriter<'_> {
        AtomicWriter::chosen(self)
    }

    /// A private writer handle: it sets its keys in its own zeroed copy of the filter's
    /// blocks with the plain filter's kernels, sharing no cache line with another core while
    /// it writes, and *publishes* the copy (ORs it into the filter a stripe at a time under
    /// the stripe's lock, skipping the blocks it has nothing in, and zeroes it) when it has
    /// set 32 keys per block of the filter ([`capacity`](AtomicWriter::capacity)), on
    /// [`flush`](AtomicWriter::flush) and when it is dropped.
    ///
    /// **Memory:** one copy of the filter, [`size_in_bytes`](Self::size_in_bytes), per
    /// handle, for as long as it lives: 64 handles on a 4 MiB filter hold 256 MiB. Where that
    /// is too much, [`try_writer`](Self::try_writer) makes a buffering handle of any size. **Time:** a key costs what it costs in a plain
    /// `BloomFilter`; each publish reads and writes the whole filter once. That is what
    /// [`writer`](Self::writer) picks for filters up to
    /// [`AtomicWriter::PRIVATE_MAX_BYTES`], where the cores would otherwise pass the same
    /// lines back and forth; for a larger filter it suits writers that insert many keys per
    /// block between flushes.
    ///
    /// ```
    /// let f = blockbloom::AtomicBloomFilter::with_capacity(100_000, 0.01)?;
    /// std::thread::scope(|s| {
    ///     for t in 0..2u64 {
    ///         let mut w = f.try_private_writer().expect("memory for a copy");
    ///         s.spawn(move || w.insert_batch(&(t * 50_000..(t + 1) * 50_000).collect::<Vec<_>>()));
    ///     }
    /// });
    /// assert_eq!(f.count_batch(&(0..100_000u64).collect::<Vec<_>>()), 100_000);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::AllocationFailed`] if the copy cannot be allocated; nothing is written to the
    /// filter.
    pub fn try_private_writer(&self) -> Result<AtomicWriter<'_>, Error> {
        AtomicWriter::try_private(self)
    }

    /// A writer handle whose buffer holds `buffer` keys' hashes (8 bytes of memory per key,
    /// shared evenly by the filter's stripes, at least one each): larger buffers take each
    /// stripe lock for more keys at once; smaller ones make keys visible sooner.
    ///
    /// ```
    /// let f = blockbloom::AtomicBloomFilter::with_capacity(1000, 0.01)?;
    /// let mut w = f.try_writer(2)?;
    /// w.insert(&1u64);
    /// assert_eq!(w.pending(), 1);
    /// w.insert(&2u64); // the buffer is full: applied now
    /// assert_eq!(w.pending(), 0);
    /// assert!(f.contains(&1u64));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] if `buffer` is 0; [`Error::AllocationFailed`] if the
    /// allocator refuses the buffer. Nothing is written to the filter either way.
    pub fn try_writer(&self, buffer: usize) -> Result<AtomicWriter<'_>, Error> {
        AtomicWriter::try_new(self, buffer)
    }

    /// Batches shorter than this go key by key (a lock per key) rather than through a
    /// buffer: a few keys do not pay for its allocation and partition. A judgement, not measured.
    const SORT_MIN: usize = 64;

    /// Keys a shared batch into a filter of at most
    /// [`PRIVATE_MAX_BYTES`](AtomicWriter::PRIVATE_MAX_BYTES) sets each time it holds every
    /// stripe's lock. Taking and releasing them costs a locked instruction per stripe (up to
    /// 256), which a run of this length spreads thin (a trial at 1M keys found runs of 1,024
    /// keys clearly slower and of 16,384 no faster; not kept as a report). It is also the
    /// unit of the wait: with W writers at once, a run's call sees at most 2(W - 1) runs of
    /// other writers applied holding every lock before it returns (the bound and its
    /// argument are in `layout::stripes`).
    const HELD_RUN: usize = 4096;

    /// Keys a shared batch into a larger filter hashes and groups by stripe at a time: 128 KiB
    /// of hashes and as much for their grouped copy, so that with 64 stripes about 256 keys
    /// share each lock taken.
    const PARTITIONED_RUN: usize = 16384;

    /// The shared batch. Into a filter of at most
    /// [`PRIVATE_MAX_BYTES`](AtomicWriter::PRIVATE_MAX_BYTES), [`HELD_RUN`](Self::HELD_RUN)
    /// keys at a time are hashed into a buffer ([`with_scratch`]) and set, in their order, while
    /// every stripe's lock is held, by this writer or, when another holds them, by that one
    /// ([`apply_held`](Self::apply_held)). Above that size,
    /// [`PARTITIONED_RUN`](Self::PARTITIONED_RUN) keys at a time are hashed, grouped by
    /// stripe and set taking each stripe's lock once
    /// ([`apply_partitioned`](Self::apply_partitioned)). Either way, key by key when the
    /// batch is short or the buffer cannot be allocated (slower, never lossy).
    ///
    /// Why not a writer handle for the call, as before: its slots, twice the call's keys
    /// shared by the 256 stripes of then, filled a stripe's after a few keys in calls of
    /// 1,000, so a call applied its buffer two or three times, each taking most stripes'
    /// locks, and cost 2 to 10 times a call of 4,096 per key
    /// (perf-reports/2026-12-05-small-calls.md).
    ///
    /// Why two ways: in a small filter two cores writing the same lines pass them back and
    /// forth (perf-reports/2026-12-02-ingest-floor.md); one core writing every batch keeps
    /// them, and the partition and the locked per-key path cost more than it (measured at 1M
    /// keys, one and two threads: perf-reports/2026-12-03-handover.md). In a large one, writers
    /// of different stripes run at once, which a batch holding every lock would forbid.
    // Not generic: compiled once, here (see `Kernel::blocks`).
    pub(super) fn insert_keys(&self, keys: Keys<'_>) {
        let n = keys.len();
        if n >= Self::SORT_MIN {
            let done = if self.size_in_bytes() <= AtomicWriter::PRIVATE_MAX_BYTES {
                with_scratch(n.min(Self::HELD_RUN), |hashes| {
                    self.apply_held(keys, hashes)
                })
            } else {
                let len = n.min(Self::PARTITIONED_RUN).saturating_mul(2);
                with_scratch(len, |buffer| self.apply_partitioned(keys, buffer))
            };
            if done.is_ok() {
                return;
            }
        }
        self.apply(keys, Sink::Discard);
    }

    /// Sets `keys` in their order, `hashes.len()` at a time: hashed into `hashes` with no
    /// lock held, then set while every stripe's lock is held ([`HeldInsert`]), so that
    /// another writer's keys are hashed while these are set. A run that finds the locks
    /// taken is handed to their holder, which sets it with its own ([`Stripes::apply_all`]):
    /// every line stays in the holder's cache, where two writers taking turns would each
    /// fetch from the other's cache about half the lines they write.
    fn apply_held(&self, keys: Keys<'_>, hashes: &mut [u64]) {
        let (meta, blocks, stripes) = (&self.meta, &self.store.blocks[..], &self.store.stripes);
        let keys = keys.under(meta.shape.hash);
        let (n, most) = (keys.len(), hashes.len());
        let mut start = 0;
        while start < n {
            let run = &mut hashes[..most.min(n - start)];
            meta.kernel.hash_keys(meta.shape.flip, keys, start, run);
            start += run.len();
            let run: &[u64] = run;
            stripes.apply_all(run, |all, hashes| {
                #[cfg(all(test, feature = "std"))]
                tests::trap(run, hashes);
                let op = HeldInsert::new(blocks, stripes, all);
                meta.kernel
                    .blocks(&meta.shape, Keys::Hashes(hashes), op, Sink::Discard);
            });
        }
    }

    /// Sets `keys` [`PARTITIONED_RUN`](Self::PARTITIONED_RUN) at a time: hashed into the
    /// first half of `buffer`, grouped by stripe into the second ([`Stripes::partition`]),
    /// and applied taking each stripe's lock once ([`apply`](Self::apply)).
    fn apply_partitioned(&self, keys: Keys<'_>, buffer: &mut [u64]) {
        let (meta, stripes) = (&self.meta, &self.store.stripes);
        let keys = keys.under(meta.shape.hash);
        let (hashes, grouped) = buffer.split_at_mut(buffer.len() / 2);
        let n = keys.len();
        let mut start = 0;
        while start < n {
            let take = hashes.len().min(n - start);
            let (run, out) = (&mut hashes[..take], &mut grouped[..take]);
            meta.kernel.hash_keys(meta.shape.flip, keys, start, run);
            start += take;
            stripes.partition(run, meta.shape.num_blocks, out);
            self.apply(Keys::Hashes(out), Sink::Discard);
        }
    }

    /// Applies `keys` in their order under their stripes' locks.
    #[inline]
    pub(super) fn apply(&self, keys: Keys<'_>, sink: Sink<'_>) {
        let (blocks, stripes) = (&self.store.blocks[..], &self.store.stripes);
        match sink {
            Sink::Discard => self.meta.kernel.blocks(
                &self.meta.shape,
                keys,
                LockedInsert::<false>::new(blocks, stripes),
                sink,
            ),
            _ => self.meta.kernel.blocks(
                &self.meta.shape,
                keys,
                LockedInsert::<true>::new(blocks, stripes),
                sink,
            ),
        }
    }

    /// Inserts `key` and answers whether it is new: `true` when some bit of its pattern was
    /// not set before, judged from the words it read under its stripe's lock (no window
    /// between check and insert).
    ///
    /// When threads insert the same key at the same time, **at most one of them gets
    /// `true`**: the lock orders them, and the first sets the bits the others then find. None
    /// gets `true` where every bit of the key's pattern was set already: by a false positive
    /// (other keys set those bits), or by an insert of the key through a path that does not
    /// answer ([`insert`](Self::insert), [`insert_batch`](Self::insert_batch), a writer
    /// handle) that ran first.
    ///
    /// ```
    /// let seen = blockbloom::AtomicBloomFilter::with_capacity(1000, 0.01)?;
    /// assert!(seen.insert_new(&42u64));
    /// assert!(!seen.insert_new(&42u64));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    #[inline]
    pub fn insert_new<K: Key + ?Sized>(&self, key: &K) -> bool {
        self.insert_hash_new(self.meta.hash_of(key))
    }

    /// [`insert_new`](Self::insert_new) for a pre-computed hash.
    #[inline]
    pub fn insert_hash_new(&self, hash: u64) -> bool {
        let i = block_index(hash, self.meta.shape.num_blocks);
        let guard = self.store.stripes.lock(self.store.stripes.stripe_of(i));
        let block = self.meta.block_of(&self.store.blocks, hash);
        self.meta.one.or_locked(block, hash as u32, &guard)
    }

    /// Inserts a batch, answering for each key whether it was new
    /// ([`insert_new`](Self::insert_new), with its guarantee under concurrent writers) into
    /// `out`; returns how many were. Within the batch keys take effect in order, so a key
    /// repeated inside it is new at most once. Key by key (a lock per key, kept while
    /// consecutive keys fall in one stripe): the answers need the order.
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
        self.apply(keys, Sink::Each(out));
        out.iter().filter(|&&new| new).count()
    }

    /// Inserts a batch of pre-computed hashes.
    pub fn insert_hash_batch(&self, hashes: &[u64]) {
        self.insert_keys(Keys::Hashes(hashes))
    }

    /// What the writers holding every stripe's lock have counted, for tests of the hand-over:
    /// (runs applied holding every lock, runs of those applied for another writer, the most
    /// such runs one shared batch's run saw from its ticket on stripe 0 to its release, its
    /// own included). Not a stable interface.
    #[doc(hidden)]
    pub fn hold_stats(&self) -> (u64, u64, u64) {
        let s = self.store.stripes.stats();
        (s.held_runs, s.handed, s.longest)
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

/// Most `u64`s of a shared batch's buffer a thread keeps for its next call (64 KiB): the
/// whole buffer of a call of up to [`HELD_RUN`](AtomicBloomFilter::HELD_RUN) keys into a
/// filter of either size (a partitioned run takes twice its keys).
#[cfg(feature = "std")]
const SCRATCH_MAX: usize = 2 * AtomicBloomFilter::HELD_RUN;

#[cfg(feature = "std")]
std::thread_local! {
    /// This thread's buffer for the hashes of its shared batches ([`with_scratch`]).
    static SCRATCH: core::cell::RefCell<alloc::vec::Vec<u64>> =
        const { core::cell::RefCell::new(alloc::vec::Vec::new()) };
}

/// Runs `f` on a buffer of `len` `u64`s for a shared batch's hashes, or answers the
/// allocator's refusal. Up to [`SCRATCH_MAX`] it is this thread's, kept from call to call
/// (with `std`): a buffer allocated and zeroed for each call cost calls into a 1M-key filter
/// a visible share of their time (perf-reports/2026-12-07-scratch.md). Its contents are
/// whatever the last call left; `f` writes before it reads.
fn with_scratch<R>(len: usize, f: impl FnOnce(&mut [u64]) -> R) -> Result<R, Error> {
    #[cfg(feature = "std")]
    let f = {
        let mut f = Some(f);
        if len <= SCRATCH_MAX {
            let reused = SCRATCH.try_with(|scratch| {
                // Busy only if `f` came back here on this thread (nothing it calls does).
                let mut scratch = scratch.try_borrow_mut().ok()?;
                let have = scratch.len();
                if have < len {
                    scratch.try_reserve_exact(len - have).ok()?;
                    scratch.resize(len, 0);
                }
                f.take().map(|f| f(&mut scratch[..len]))
            });
            if let Ok(Some(done)) = reused {
                return Ok(done);
            }
        }
        f.expect("taken only by a call that returned")
    };
    Ok(f(&mut super::writer::zeroed(len)?))
}

#[cfg(all(test, feature = "std"))]
mod tests {
    use super::AtomicBloomFilter;
    use std::panic::{AssertUnwindSafe, catch_unwind};
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
    use std::time::{Duration, Instant};
    use std::vec::Vec;

    /// The hook that injects a panic into a holder: when it is `n > 0`, the next holder that
    /// applies another writer's run of `n` hashes panics first (once).
    static TRAP_LEN: AtomicUsize = AtomicUsize::new(0);

    pub(super) fn trap(own: &[u64], applying: &[u64]) {
        let n = applying.len();
        if n != 0
            && applying.as_ptr() != own.as_ptr()
            && TRAP_LEN.compare_exchange(n, 0, Relaxed, Relaxed).is_ok()
        {
            panic!("injected: the holder fails applying a handed-over run");
        }
    }

    /// A holder that panics while it applies a run handed to it: the poster's call returns
    /// with every key of its run set (it applied the run itself), the holder's panic reaches
    /// its caller, and the filter goes on working.
    #[test]
    fn a_holder_that_panics_applying_a_handed_over_run_hangs_no_one() {
        // A length no other test's shared batch has.
        const POSTED: usize = 777;
        let f = AtomicBloomFilter::with_capacity(50_000, 0.01).unwrap();
        TRAP_LEN.store(POSTED, Relaxed);
        let fired = AtomicBool::new(false);
        let deadline = Instant::now() + Duration::from_secs(20);
        std::thread::scope(|s| {
            let (f, fired) = (&f, &fired);
            s.spawn(move || {
                let big: Vec<u64> = (0..4096u64).map(|k| k.wrapping_mul(0x9E37_79B9)).collect();
                while !fired.load(Relaxed) && Instant::now() < deadline {
                    if catch_unwind(AssertUnwindSafe(|| f.insert_batch(&big))).is_err() {
                        fired.store(true, Relaxed);
                    }
                }
            });
            s.spawn(move || {
                for round in 1u64.. {
                    if fired.load(Relaxed) || Instant::now() >= deadline {
                        break;
                    }
                    let keys: Vec<u64> = (0..POSTED as u64).map(|k| (round << 32) | k).collect();
                    f.insert_batch(&keys);
                    assert_eq!(f.count_batch(&keys), POSTED, "round {round}: keys lost");
                }
            });
        });
        TRAP_LEN.store(0, Relaxed);
        assert!(
            fired.load(Relaxed),
            "no run of the poster was handed over in time"
        );
        f.insert_batch(&[1u64, 2, 3].repeat(30));
        assert!(f.contains(&2u64));
    }

    /// Shared batches into a filter larger than a private handle's limit (grouped by stripe
    /// before they are applied), of lengths around the key-by-key limit and past one
    /// partitioned run, from two threads at once, on every tier: the filter equals the
    /// single-threaded build bit for bit.
    #[test]
    fn partitioned_shared_batches_equal_the_sequential_build_on_every_tier() {
        use crate::{BloomFilter, Isa};
        let mut s = 7u64;
        let keys: Vec<u64> = (0..60_000)
            .map(|_| {
                s = s.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                s ^ s >> 31
            })
            .collect();
        let lengths = [
            AtomicBloomFilter::SORT_MIN - 1,
            AtomicBloomFilter::SORT_MIN,
            1000,
            AtomicBloomFilter::PARTITIONED_RUN + 7,
        ];
        for isa in Isa::supported() {
            let build = || {
                BloomFilter::builder()
                    .capacity(5_000_000)
                    .fpr(0.01)
                    .isa(isa)
            };
            let f = build().build_atomic().unwrap();
            assert!(f.size_in_bytes() > super::AtomicWriter::PRIVATE_MAX_BYTES);
            std::thread::scope(|sc| {
                for (t, half) in keys.chunks(keys.len() / 2).enumerate() {
                    let f = &f;
                    sc.spawn(move || {
                        let mut rest = half;
                        for len in lengths.iter().cycle().skip(t) {
                            let (run, more) = rest.split_at((*len).min(rest.len()));
                            f.insert_batch(run);
                            rest = more;
                            if rest.is_empty() {
                                break;
                            }
                        }
                    });
                }
            });
            let mut want = build().build().unwrap();
            want.insert_batch(&keys);
            assert!(f.into_filter().blocks() == want.blocks(), "{isa}");
        }
    }

    /// A thread's buffer for its shared batches: the next call gets it back, whatever the
    /// last call left in it, and sets exactly its own keys, into a filter of either size;
    /// a call that comes back while it is lent, or wants more than it keeps, gets a buffer
    /// of its own.
    #[test]
    fn a_threads_scratch_is_kept_and_lent_once() {
        use super::{SCRATCH_MAX, with_scratch};
        use crate::BloomFilter;
        with_scratch(100, |a| {
            a.fill(7);
            let inner = with_scratch(100, |b| {
                b.fill(9);
                b.as_ptr()
            });
            assert_ne!(inner.unwrap(), a.as_ptr(), "lent twice at once");
            assert!(
                a.iter().all(|&x| x == 7),
                "another call wrote into a lent buffer"
            );
        })
        .unwrap();
        assert_eq!(with_scratch(SCRATCH_MAX, |a| a[0]).unwrap(), 7, "not kept");
        let kept = with_scratch(50, |a| a.as_ptr()).unwrap();
        assert_eq!(with_scratch(SCRATCH_MAX, |a| a.as_ptr()).unwrap(), kept);
        assert_ne!(with_scratch(SCRATCH_MAX + 1, |a| a.as_ptr()).unwrap(), kept);

        let small = AtomicBloomFilter::with_capacity(100_000, 0.01).unwrap();
        let large = AtomicBloomFilter::with_capacity(5_000_000, 0.01).unwrap();
        assert!(large.size_in_bytes() > super::AtomicWriter::PRIVATE_MAX_BYTES);
        let (mut want_small, mut want_large) = (small.snapshot(), large.snapshot());
        for call in 0..40u64 {
            let len = [64, 4096, 700, 2000][call as usize % 4];
            let keys: Vec<u64> = (0..len).map(|k| (call << 40) ^ (k * 0x9E37)).collect();
            let (f, want): (&AtomicBloomFilter, &mut BloomFilter) = if call % 2 == 0 {
                (&small, &mut want_small)
            } else {
                (&large, &mut want_large)
            };
            f.insert_batch(&keys);
            want.insert_batch(&keys);
            assert!(f.snapshot() == *want, "call {call} of {len} keys");
        }
    }
}
