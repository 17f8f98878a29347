//! [`AtomicWriter`]: one thread's buffered writes into an [`AtomicBloomFilter`].

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::mem::MaybeUninit;

use super::{AtomicBloomFilter, BatchKey, ByteColumn, KeySource};
use crate::error::Error;
use crate::kernel::{Keys, Sink};
use crate::key::Key;
use crate::layout::{Block, block_index};
use crate::memory::PageBuf;

/// A writer handle: one thread's buffered inserts into a shared [`AtomicBloomFilter`], made
/// by [`AtomicBloomFilter::writer`].
///
/// A handle is one of two kinds ([`writer`](AtomicBloomFilter::writer) picks by the filter's
/// size; [`is_private`](Self::is_private) says which):
///
/// * **buffering** ([`try_writer`](AtomicBloomFilter::try_writer)): it hashes its keys (in
///   SIMD lanes for batches) and puts each hash in the slots of its block's stripe (the
///   filter's lock regions), so the buffer is partitioned by stripe as it fills, with no sort.
///   When a stripe's slots are full, on [`flush`](Self::flush) and when the handle is dropped,
///   it applies every pending hash with the filter's batch kernel (patterns in vector
///   registers, blocks prefetched), taking each stripe's lock once for all its keys and
///   writing each block half that gains a bit with one vector store: no locked instruction
///   per key;
/// * **private** ([`try_private_writer`](AtomicBloomFilter::try_private_writer)): it sets its
///   keys in its own copy of the filter with the plain filter's kernels and ORs the copy into
///   the filter when it fills, flushes or drops.
///
/// Other handles, shared batches, single-key inserts and readers can run at the same time.
///
/// **When a key becomes visible.** A key written through a handle is in the filter once the
/// buffer holding it has been applied: when [`flush`](Self::flush) returns, when the handle's
/// drop returns, or when an insert that filled the handle returns (at most [`capacity`] keys
/// wait; [`pending`](Self::pending) says how many do). Until then no query finds it, not
/// even one on the same thread. After it, every query that happens after (on this thread,
/// or on one that synchronised with it) finds it.
///
/// Flushing never allocates and never fails: the buffer or copy is allocated when the handle
/// is made. A handle is `Send` (move it into the thread that writes) and borrows its filter,
/// so the filter cannot be consumed while a handle lives.
///
/// **A handle that is never dropped loses its unflushed keys.** Its drop is what applies the
/// last buffer: a handle leaked with [`mem::forget`](core::mem::forget) or
/// [`Box::leak`](alloc::boxed::Box::leak), or alive when the process ends without unwinding
/// (`std::process::exit`, a `panic = "abort"` build, a signal), never applies
/// the up to [`capacity`] keys it holds. Call [`flush`](Self::flush) before any of those; the
/// type is `#[must_use]`, so a handle made and not used is a warning.
///
/// [`capacity`]: Self::capacity
///
/// ```
/// use blockbloom::AtomicBloomFilter;
///
/// let f = AtomicBloomFilter::with_capacity(1_000_000, 0.01)?;
/// std::thread::scope(|s| {
///     for t in 0..2u64 {
///         let mut w = f.writer();
///         s.spawn(move || {
///             let keys: Vec<u64> = (t * 500_000..(t + 1) * 500_000).collect();
///             for chunk in keys.chunks(4096) {
///                 w.insert_batch(chunk);
///             }
///         }); // `w` is dropped at the end of the thread: flushed
///     }
/// });
/// assert_eq!(f.count_batch(&(0..1_000_000u64).collect::<Vec<_>>()), 1_000_000);
/// # Ok::<(), blockbloom::Error>(())
/// ```
///
/// A handle made and dropped unused is a warning (an error under `deny(unused_must_use)`):
///
/// ```compile_fail
/// #![deny(unused_must_use)]
/// let f = blockbloom::AtomicBloomFilter::with_capacity(10, 0.01).unwrap();
/// f.writer();
/// ```
#[must_use = "a writer applies its keys as it fills, on flush and on drop; unused, it does nothing"]
pub struct AtomicWriter<'f> {
    filter: &'f AtomicBloomFilter,
    pending: Pending,
}

/// Where a handle keeps its keys until it applies them.
enum Pending {
    Slots(Slots),
    Private(Private),
}

/// Hashes in slots per stripe, applied under the stripes' locks.
struct Slots {
    /// `per` slots for each stripe, in stripe order: stripe `s`'s pending hashes are
    /// `slots[s * per..][..fill[s]]`, placed there as they are hashed (no sort at flush).
    /// Left uninitialised when allocated (a batch's handle would otherwise zero 16 bytes per
    /// key it buffers): only slots below a stripe's fill are ever read.
    slots: Box<[MaybeUninit<u64>]>,
    per: usize,
    /// Per stripe, how many of its slots are taken.
    fill: Box<[u32]>,
    /// Where a batch is hashed, [`STAGE`] keys at a time, before its hashes go to their
    /// stripes' slots.
    stage: Box<[u64]>,
    /// The stripe its applies start from, going round: handles take different ones
    /// ([`first_stripe`]), so that writers applying at the same time do not walk the stripes
    /// in step, each waiting at the lock the one ahead of it holds.
    first: usize,
}

/// Handles made so far, for [`first_stripe`].
static HANDLES: core::sync::atomic::AtomicU32 = core::sync::atomic::AtomicU32::new(0);

/// The stripe of `stripes` a new handle starts its applies from: the handle's number times
/// 2^32 / the golden ratio, scaled to the stripes, which spreads any number of handles
/// evenly over them.
fn first_stripe(stripes: usize) -> usize {
    let n = HANDLES.fetch_add(1, core::sync::atomic::Ordering::Relaxed);
    let spread = n.wrapping_mul(0x9e37_79b9) as u64;
    ((spread * stripes as u64) >> 32) as usize
}

/// A private copy of the filter's blocks, set with the plain filter's kernels (no line shared
/// with another core while it is written) and OR'd into the filter when published.
struct Private {
    copy: PageBuf<Block>,
    /// The stripe its publishes start from (see [`Slots::first`]).
    first: usize,
    /// Keys set in `copy` since it was last published.
    keys: usize,
    /// Keys after which it is published: [`PRIVATE_KEYS_PER_BLOCK`] per block.
    cap: usize,
}

/// Keys hashed at a time before they are placed in their stripes' slots: 4 KiB, in L1
/// between the hashing and the placing.
const STAGE: usize = 512;

/// A private handle publishes after this many keys per block of the filter, so that its
/// OR pass (a read and a write of the filter) costs at most 2 bytes of the copy per key: at
/// 1% (about 50 keys a block at capacity), once for a filter filled from empty and once more
/// when it drops. At 8, a handle that filled a 1M-key filter from empty published six times
/// and ran well behind the plain filter; at 32 much closer (`blockbloom-perf ingest-pairs`:
/// `perf-reports/2026-12-03-shared-batch.md`).
const PRIVATE_KEYS_PER_BLOCK: usize = 32;

impl<'f> AtomicWriter<'f> {
    /// Slots of a handle from [`AtomicBloomFilter::writer`] on a filter larger than
    /// [`PRIVATE_MAX_BYTES`](Self::PRIVATE_MAX_BYTES): 128 KiB of hashes; once a filter has
    /// its full 64 stripes, 256 slots per stripe.
    pub const DEFAULT_BUFFER: usize = 16384;

    /// The largest filter for which [`AtomicBloomFilter::writer`] makes a private handle
    /// (see [`AtomicBloomFilter::try_private_writer`]): 4 MiB. Below it, two cores writing
    /// one filter's lines pass them back and forth for more than the second core brings (at
    /// 1.2 MiB two threads storing into one buffer were slower than one thread alone:
    /// perf-reports/2026-12-02-ingest-floor.md); above it (19 MiB) sharing pays, and a copy
    /// per handle would cost more memory than its speed is worth.
    pub const PRIVATE_MAX_BYTES: usize = 4 << 20;

    /// The handle [`AtomicBloomFilter::writer`] makes; aborts if the allocator refuses it.
    pub(super) fn chosen(filter: &'f AtomicBloomFilter) -> AtomicWriter<'f> {
        let made = if filter.size_in_bytes() <= Self::PRIVATE_MAX_BYTES {
            Self::try_private(filter)
        } else {
            Self::try_new(filter, Self::DEFAULT_BUFFER)
        };
        match made {
            Ok(w) => w,
            Err(Error::AllocationFailed { bytes }) => alloc::alloc::handle_alloc_error(
                core::alloc::Layout::from_size_align(bytes as usize, 64)
                    .unwrap_or(core::alloc::Layout::new::<Block>()),
            ),
            Err(e) => panic!("{e}"),
        }
    }

    /// A handle with `buffer` slots, shared evenly by the filter's stripes (at least one
    /// each).
    pub(super) fn try_new(
        filter: &'f AtomicBloomFilter,
        buffer: usize,
    ) -> Result<AtomicWriter<'f>, Error> {
        if buffer == 0 || buffer > u32::MAX as usize {
            return Err(Error::InvalidParameter {
                name: "buffer",
                value: buffer as f64,
                expected: "1 to 2^32 - 1 keys",
            });
        }
        let stripes = filter.store.stripes.len();
        let per = (buffer / stripes).max(1);
        let slots = Slots {
            slots: uninit(per * stripes)?,
            per,
            fill: zeroed(stripes)?,
            stage: zeroed(STAGE)?,
            first: first_stripe(stripes),
        };
        Ok(AtomicWriter {
            filter,
            pending: Pending::Slots(slots),
        })
    }

    /// A handle with a private copy of the filter's blocks.
    pub(super) fn try_private(filter: &'f AtomicBloomFilter) -> Result<AtomicWriter<'f>, Error> {
        let num_blocks = filter.meta.shape.num_blocks;
        let private = Private {
            copy: super::allocate_pages(num_blocks, filter.store.blocks.huge())?,
            first: first_stripe(filter.store.stripes.len()),
            keys: 0,
            cap: (num_blocks as usize).saturating_mul(PRIVATE_KEYS_PER_BLOCK),
        };
        Ok(AtomicWriter {
            filter,
            pending: Pending::Private(private),
        })
    }

    /// The filter it writes into.
    pub fn filter(&self) -> &'f AtomicBloomFilter {
        self.filter
    }

    /// Whether the handle writes a private copy of the filter (see
    /// [`AtomicBloomFilter::try_private_writer`]) rather than buffering hashes.
    pub fn is_private(&self) -> bool {
        matches!(self.pending, Pending::Private(_))
    }

    /// At most how many keys wait before the handle applies them by itself.
    ///
    /// A buffering handle: the `buffer` it was made with, as a whole number of slots for each
    /// of the filter's stripes (at least one each). A filter of one stripe (64 blocks, 4 KiB,
    /// or fewer) applies them when they are all taken; a larger one when one stripe's slots
    /// are, which with evenly spread hashes is when roughly half to two thirds of all of them
    /// are. A private handle: 32 keys per block of the filter.
    pub fn capacity(&self) -> usize {
        match &self.pending {
            Pending::Slots(s) => s.slots.len(),
            Pending::Private(p) => p.cap,
        }
    }

    /// How many keys wait in the handle, not yet visible in the filter.
    pub fn pending(&self) -> usize {
        match &self.pending {
            Pending::Slots(s) => s.fill.iter().map(|&f| f as usize).sum(),
            Pending::Private(p) => p.keys,
        }
    }

    /// Inserts a key (see [`AtomicBloomFilter::insert`]): buffered until the next flush.
    #[inline]
    pub fn insert<K: Key + ?Sized>(&mut self, key: &K) {
        self.insert_hash(self.filter.meta.hash_of(key))
    }

    /// Inserts a raw byte string (see [`AtomicBloomFilter::insert_bytes`]): buffered.
    #[inline]
    pub fn insert_bytes(&mut self, bytes: &[u8]) {
        self.insert_hash(self.filter.meta.hash_of(bytes))
    }

    /// Inserts a pre-computed hash: buffered.
    #[inline]
    pub fn insert_hash(&mut self, hash: u64) {
        let filter = self.filter;
        match &mut self.pending {
            Pending::Slots(s) => s.place(filter, &[hash]),
            Pending::Private(p) => p.insert_hash(filter, hash),
        }
    }

    /// Inserts a batch of keys (see [`AtomicBloomFilter::insert_batch`]), hashed in SIMD
    /// lanes: buffered, except when the handle fills, which applies what it holds.
    pub fn insert_batch<K: BatchKey>(&mut self, keys: &[K]) {
        self.push(K::as_keys(keys).0)
    }

    /// Inserts every key of a [`ByteColumn`] (as [`insert_batch`](Self::insert_batch)).
    pub fn insert_column(&mut self, column: &ByteColumn<'_>) {
        self.push(column.key_slice().0)
    }

    /// Inserts a batch of pre-computed hashes (as [`insert_batch`](Self::insert_batch)).
    pub fn insert_hash_batch(&mut self, hashes: &[u64]) {
        self.push(Keys::Hashes(hashes))
    }

    pub(super) fn push(&mut self, keys: Keys<'_>) {
        let filter = self.filter;
        match &mut self.pending {
            Pending::Slots(s) => s.push(filter, keys),
            Pending::Private(p) => p.push(filter, keys),
        }
    }

    /// Applies every key the handle holds to the filter; when it returns, they are visible
    /// to every query that happens after it. Never allocates, never fails. A private handle's
    /// flush is a pass over the filter (see
    /// [`try_private_writer`](AtomicBloomFilter::try_private_writer)).
    pub fn flush(&mut self) {
        let filter = self.filter;
        match &mut self.pending {
            Pending::Slots(s) => s.apply(filter),
            Pending::Private(p) => p.publish(filter),
        }
    }
}

impl Slots {
    /// Hashes `keys` and places each hash in its stripe's slots, applying them when a
    /// stripe's slots fill. The partition by stripe is done here, as the hashes come out of
    /// the SIMD hash (in L1, [`STAGE`] at a time), not as a sort when they are applied. The
    /// stage stays in the handle (borrowed beside the slots, never moved out), so a panic
    /// caught mid-way leaves a handle that works.
    fn push(&mut self, filter: &AtomicBloomFilter, keys: Keys<'_>) {
        let meta = &filter.meta;
        let keys = keys.under(meta.shape.hash);
        let total = keys.len();
        let Slots {
            slots,
            per,
            fill,
            stage,
            first,
        } = self;
        let mut start = 0;
        while start < total {
            let take = stage.len().min(total - start);
            meta.kernel
                .hash_keys(meta.shape.flip, keys, start, &mut stage[..take]);
            start += take;
            if fill.len() == 1 {
                append(filter, slots, fill, *first, &stage[..take]);
            } else {
                place(filter, slots, fill, *per, *first, &stage[..take]);
            }
        }
    }

    /// Places `hashes` (see [`place`]).
    #[inline(always)]
    fn place(&mut self, filter: &AtomicBloomFilter, hashes: &[u64]) {
        place(
            filter,
            &mut self.slots,
            &mut self.fill,
            self.per,
            self.first,
            hashes,
        )
    }

    fn apply(&mut self, filter: &AtomicBloomFilter) {
        apply(
            filter,
            &mut self.slots,
            &mut self.fill,
            self.per,
            self.first,
        )
    }
}

/// [`place`] for a filter of one stripe, whose slots are the whole buffer, filled in arrival
/// order.
fn append(
    filter: &AtomicBloomFilter,
    slots: &mut [MaybeUninit<u64>],
    fill: &mut [u32],
    first: usize,
    mut hashes: &[u64],
) {
    while !hashes.is_empty() {
        let len = fill[0] as usize;
        let take = (slots.len() - len).min(hashes.len());
        for (slot, &h) in slots[len..len + take].iter_mut().zip(hashes) {
            *slot = MaybeUninit::new(h);
        }
        fill[0] = (len + take) as u32;
        hashes = &hashes[take..];
        if len + take == slots.len() {
            apply(filter, slots, fill, slots.len(), first);
        }
    }
}

/// Puts each hash in its stripe's slots (`per` for each stripe, `fill` of them taken),
/// applying them whenever that fills a stripe's.
///
/// The two halves of `hashes` are placed in turns, one hash of each, for the reason
/// [`Stripes::partition`](crate::layout::stripes::Stripes::partition) gives: placing a hash
/// reads its stripe's fill and stores it bumped, and two interleaved streams of those steps
/// wait less on each other than one (perf-reports/2026-12-06-partition.md). A stripe's slots
/// then hold its hashes in another order than the keys came, which changes nothing the
/// filter answers.
#[inline(always)]
fn place(
    filter: &AtomicBloomFilter,
    slots: &mut [MaybeUninit<u64>],
    fill: &mut [u32],
    per: usize,
    first: usize,
    hashes: &[u64],
) {
    let (num_blocks, stripes) = (filter.meta.shape.num_blocks, &filter.store.stripes);
    let mut place_one = |h: u64| {
        let s = stripes.stripe_of_hash(h, num_blocks);
        debug_assert_eq!(s, stripes.stripe_of(block_index(h, num_blocks)));
        debug_assert!(s < fill.len());
        // SAFETY: `block_index` is below `num_blocks`, and `fill` has an entry for each of
        // the stripes that cover them (`try_new`).
        let taken = unsafe { fill.get_unchecked_mut(s) };
        let f = *taken as usize;
        debug_assert!(f < per);
        // SAFETY: `s * per + f < stripes * per = slots.len()`: `f < per`, as a stripe whose
        // slots fill is applied at once, below.
        unsafe { *slots.get_unchecked_mut(s * per + f) = MaybeUninit::new(h) };
        *taken += 1;
        if f + 1 == per {
            apply(filter, slots, fill, per, first);
        }
    };
    let (front, back) = hashes.split_at(hashes.len() / 2);
    for (&f, &b) in front.iter().zip(back) {
        place_one(f);
        place_one(b);
    }
    // The back half has the odd hash out, if any.
    if let Some(&b) = back.get(front.len()) {
        place_one(b);
    }
}

/// Applies the pending hashes of `slots` (`per` for each stripe, `fill` of them taken) to
/// `filter` and empties them. The stripes' runs are moved together, in stripe order, so that
/// the batch kernel takes each stripe's lock once; each run moves to an offset no later than
/// its own, so moving them in order overwrites only runs already moved. The kernel then
/// applies them from stripe `first` to the last, and then from the first stripe to `first`.
/// The fills are zeroed only once every run is applied: if the kernel unwinds, [`Restore`]
/// moves the runs back, and the handle still holds every key (some perhaps set already,
/// which setting again leaves as it is).
#[cold]
#[inline(never)]
fn apply(
    filter: &AtomicBloomFilter,
    slots: &mut [MaybeUninit<u64>],
    fill: &mut [u32],
    per: usize,
    first: usize,
) {
    let (mut at, mut split) = (0, 0);
    for (s, &taken) in fill.iter().enumerate() {
        if s == first {
            split = at;
        }
        let f = taken as usize;
        let from = s * per;
        if from != at {
            slots.copy_within(from..from + f, at);
        }
        at += f;
    }
    let restore = Restore { slots, fill, per };
    // SAFETY: `MaybeUninit<u64>` has `u64`'s layout, and the first `at` slots hold hashes:
    // the runs moved there are each stripe's first `fill` slots, which `place` and `append`
    // wrote. Nothing writes the slots while `hashes` is used (`restore` only does when it is
    // dropped, after the last use or while unwinding out of it).
    let hashes = unsafe { core::slice::from_raw_parts(restore.slots.as_ptr().cast::<u64>(), at) };
    for run in [&hashes[split..], &hashes[..split]] {
        if !run.is_empty() {
            filter.apply(Keys::Hashes(run), Sink::Discard);
            #[cfg(all(test, feature = "std"))]
            tests::trap();
        }
    }
    restore.fill.fill(0);
    core::mem::forget(restore);
}

/// The slots of [`apply`] with their stripes' runs moved together: dropped (only while
/// unwinding), it moves each run back to its stripe's slots, the last first (each moves to an
/// offset no earlier than its own, past every run before it).
struct Restore<'a> {
    slots: &'a mut [MaybeUninit<u64>],
    fill: &'a mut [u32],
    per: usize,
}

impl Drop for Restore<'_> {
    fn drop(&mut self) {
        let mut at: usize = self.fill.iter().map(|&f| f as usize).sum();
        for (s, &f) in self.fill.iter().enumerate().rev() {
            let f = f as usize;
            at -= f;
            let to = s * self.per;
            if to != at {
                self.slots.copy_within(at..at + f, to);
            }
        }
    }
}

impl Private {
    /// Sets `keys` in the copy with the plain filter's batch kernel, publishing each time
    /// [`cap`](Self::cap) keys have been set.
    fn push(&mut self, filter: &AtomicBloomFilter, keys: Keys<'_>) {
        let meta = &filter.meta;
        let total = keys.len();
        let mut start = 0;
        while start < total {
            if self.keys >= self.cap {
                // A publish that unwound left the count full.
                self.publish(filter);
            }
            let take = (self.cap - self.keys).min(total - start);
            let part = keys.slice(start, start + take);
            meta.kernel.insert(&meta.shape, &mut self.copy, part);
            start += take;
            self.counted(filter, take);
        }
    }

    /// Sets one hash in the copy, publishing if that makes [`cap`](Self::cap) keys.
    fn insert_hash(&mut self, filter: &AtomicBloomFilter, hash: u64) {
        let block = filter.meta.block_of_mut(&mut self.copy, hash);
        filter.meta.one.insert(block, hash as u32);
        self.counted(filter, 1);
    }

    /// Counts `n` keys set in the copy, publishing once they make [`cap`](Self::cap).
    #[inline(always)]
    fn counted(&mut self, filter: &AtomicBloomFilter, n: usize) {
        self.keys += n;
        if self.keys >= self.cap {
            self.publish(filter);
        }
    }

    /// ORs the copy into the filter, a stripe at a time under its lock (skipping blocks the
    /// copy has nothing in, so their lines stay shared), and zeroes it.
    /// The count is zeroed only once the pass is done: a pass that unwinds leaves the blocks
    /// it had not OR'd in the copy, and the next publish ORs them.
    fn publish(&mut self, filter: &AtomicBloomFilter) {
        if self.keys == 0 {
            return;
        }
        let stripes = &filter.store.stripes;
        let per = stripes.blocks_per_stripe();
        for s in (self.first..stripes.len()).chain(0..self.first) {
            let blocks = s * per..((s + 1) * per).min(self.copy.len());
            let (mine, theirs) = (&mut self.copy[blocks.clone()], &filter.store.blocks[blocks]);
            let mut guard = None;
            for (m, t) in mine.iter_mut().zip(theirs) {
                if *m == Block::ZERO {
                    continue;
                }
                let g = guard.get_or_insert_with(|| stripes.lock(s));
                t.or_locked(m, g);
                *m = Block::ZERO;
            }
            #[cfg(all(test, feature = "std"))]
            if guard.is_some() {
                tests::trap();
            }
        }
        self.keys = 0;
    }
}

impl Drop for AtomicWriter<'_> {
    /// Flushes the buffer.
    fn drop(&mut self) {
        self.flush();
    }
}

impl core::fmt::Debug for AtomicWriter<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("AtomicWriter")
            .field("capacity", &self.capacity())
            .field("pending", &self.pending())
            .finish_non_exhaustive()
    }
}

/// `len` zeros, or the allocator's refusal as an error.
pub(super) fn zeroed<T: Copy + Default>(len: usize) -> Result<Box<[T]>, Error> {
    let mut v = reserved(len)?;
    v.resize(len, T::default());
    Ok(v.into_boxed_slice())
}

/// `len` uninitialised values, allocated fallibly.
fn uninit<T>(len: usize) -> Result<Box<[MaybeUninit<T>]>, Error> {
    let mut v = reserved(len)?;
    // SAFETY: `len` is within the capacity just reserved, and a `MaybeUninit` needs no
    // initialisation.
    unsafe { v.set_len(len) };
    Ok(v.into_boxed_slice())
}

/// An empty vector with room for `len` values, or the error of an allocation that failed.
fn reserved<T>(len: usize) -> Result<Vec<T>, Error> {
    let mut v = Vec::new();
    v.try_reserve_exact(len)
        .map_err(|_| Error::AllocationFailed {
            bytes: (len as u128) * core::mem::size_of::<T>() as u128,
        })?;
    Ok(v)
}

#[cfg(all(test, feature = "std"))]
mod tests {
    use crate::{AtomicBloomFilter, BloomFilter, Isa, Layout};
    use std::cell::Cell;
    use std::panic::{AssertUnwindSafe, catch_unwind};

    std::thread_local! {
        /// The hook that injects a panic: when it is `n > 0`, the `n`-th [`trap`] from now on
        /// this thread panics (after a run of a buffering handle's apply, or a stripe of a
        /// private handle's publish, was written to the filter).
        static TRAP: Cell<u32> = const { Cell::new(0) };
    }

    pub(super) fn trap() {
        TRAP.with(|t| match t.get() {
            0 => {}
            1 => {
                t.set(0);
                panic!("injected: a writer handle fails mid-way");
            }
            n => t.set(n - 1),
        });
    }

    /// Runs `f` with the `n`-th trap armed; answers whether it panicked (and disarms).
    fn trapped(n: u32, f: impl FnOnce()) -> bool {
        TRAP.with(|t| t.set(n));
        let panicked = catch_unwind(AssertUnwindSafe(f)).is_err();
        TRAP.with(|t| t.set(0));
        panicked
    }

    /// A buffering handle whose apply unwinds after its first run keeps every key it held
    /// (its fills are restored, its runs moved back), and a push that unwinds leaves a handle
    /// that takes more keys; flushed, the filter has the bits of a plain build.
    #[test]
    fn a_buffering_handle_that_unwinds_keeps_its_keys_and_works() {
        let keys = keys(6_000);
        let b = || BloomFilter::builder().capacity(20_000).fpr(0.01);
        let mut plain = b().build().unwrap();
        plain.insert_batch(&keys);
        let f: AtomicBloomFilter = b().build_atomic().unwrap();
        assert!(f.store.stripes.len() > 2);
        let mut w = f.try_writer(20_000).unwrap();
        w.insert_batch(&keys[..3_000]);
        let held = w.pending();
        assert_eq!(held, 3_000);
        // The writer starts at a stripe of its own: two runs, and the trap after the first.
        let first = match &w.pending {
            super::Pending::Slots(s) => s.first,
            super::Pending::Private(_) => unreachable!(),
        };
        assert!(trapped(1, || w.flush()));
        assert_eq!(w.pending(), held);
        if first > 0 {
            assert!(
                f.count_batch(&keys[..3_000]) < 3_000,
                "the second run was not applied"
            );
        }
        w.flush();
        assert_eq!(w.pending(), 0);
        assert_eq!(f.count_batch(&keys[..3_000]), 3_000);
        // A push whose stripe fills applies; it unwinds there.
        let mut small = f.try_writer(f.store.stripes.len() * 2).unwrap();
        assert!(trapped(1, || small.insert_batch(&keys[3_000..])));
        small.insert_batch(&keys[3_000..]);
        drop(small);
        drop(w);
        assert!(f.into_filter().blocks() == plain.blocks());
    }

    /// A private handle whose publish unwinds after its first stripe keeps its count and the
    /// blocks it had not OR'd; the next publish sets every key, and it still publishes by
    /// itself when full.
    #[test]
    fn a_private_handle_that_unwinds_keeps_its_keys() {
        let keys = keys(8_000);
        let b = || BloomFilter::builder().capacity(20_000).fpr(0.01);
        let mut plain = b().build().unwrap();
        plain.insert_batch(&keys);
        let f: AtomicBloomFilter = b().build_atomic().unwrap();
        let mut w = f.try_private_writer().unwrap();
        w.insert_batch(&keys[..4_000]);
        assert!(trapped(1, || w.flush()));
        assert_eq!(w.pending(), 4_000);
        assert!(
            f.count_batch(&keys[..4_000]) < 4_000,
            "the pass stopped part way"
        );
        w.flush();
        assert_eq!(w.pending(), 0);
        assert_eq!(f.count_batch(&keys[..4_000]), 4_000);
        // A publish by itself (the handle full) that unwinds: the next push publishes.
        let cap = w.capacity();
        let many = self::keys(cap as u64 + 10);
        assert!(trapped(1, || w.insert_batch(&many)));
        w.insert_batch(&keys[4_000..]);
        w.flush();
        assert_eq!(f.count_batch(&many[..cap]), cap);
        let mut plain_all = plain;
        plain_all.insert_batch(&many[..cap]);
        drop(w);
        assert!(f.into_filter().blocks() == plain_all.blocks());
    }

    fn keys(n: u64) -> Vec<u64> {
        (0..n)
            .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
            .collect()
    }

    /// Every tier's locked insert (a half in one vector store, a block in its stores) sets
    /// the bits a plain build sets, in every layout, through a handle whose stripes' slots
    /// fill many times, a private handle published twice, and shared batches.
    #[test]
    fn handles_set_the_plain_filters_bits_on_every_tier_and_layout() {
        let keys = keys(20_000);
        for isa in Isa::supported() {
            for layout in [
                Layout::Sectors8x32,
                Layout::Sectors8x64,
                Layout::Sectors4x128,
            ] {
                let b = || {
                    BloomFilter::builder()
                        .capacity(20_000)
                        .fpr(0.01)
                        .layout(layout)
                        .isa(isa)
                };
                let mut plain = b().build().unwrap();
                plain.insert_batch(&keys);
                let shared = b().build_atomic().unwrap();
                assert!(shared.store.stripes.len() > 1, "several stripes");
                {
                    let mut w = shared.try_writer(300).unwrap();
                    w.insert_batch(&keys[..10_000]);
                    assert!(w.pending() < w.capacity());
                }
                {
                    let mut w = shared.try_private_writer().unwrap();
                    assert!(w.is_private());
                    w.insert_batch(&keys[10_000..12_000]);
                    keys[12_000..12_100].iter().for_each(|k| w.insert(k));
                    assert_eq!(w.pending(), 2_100);
                    w.flush();
                    assert_eq!(w.pending(), 0);
                    w.insert_batch(&keys[12_100..15_000]);
                }
                shared.insert_batch(&keys[15_000..]);
                let got = shared.into_filter();
                assert!(got.blocks() == plain.blocks(), "{isa} {layout:?}");
            }
        }
    }

    /// A shared batch into a filter of at most `PRIVATE_MAX_BYTES` (every stripe's lock held,
    /// 4,096 keys at a time) and into a larger one (partitioned by stripe) sets the plain
    /// build's bits on every tier, for batches of one run, several runs and a partial one.
    #[test]
    fn shared_batches_set_the_plain_filters_bits_held_and_partitioned() {
        use crate::filter::AtomicWriter;
        let keys = keys(12_000);
        for isa in Isa::supported() {
            for capacity in [50_000, 4_000_000] {
                let b = || BloomFilter::builder().capacity(capacity).fpr(0.01).isa(isa);
                let mut plain = b().build().unwrap();
                plain.insert_batch(&keys);
                let shared = b().build_atomic().unwrap();
                let held = shared.size_in_bytes() <= AtomicWriter::PRIVATE_MAX_BYTES;
                assert_eq!(held, capacity == 50_000);
                shared.insert_batch(&keys[..100]);
                shared.insert_batch(&keys[100..4_196]);
                shared.insert_batch(&keys[4_196..]);
                assert!(
                    shared.into_filter().blocks() == plain.blocks(),
                    "{isa} {capacity}"
                );
            }
        }
    }

    /// A filter of one stripe fills its handle's slots in arrival order: a handle that fills
    /// many times, and shared batches, set the plain build's bits.
    #[test]
    fn one_stripe_handles_set_the_plain_filters_bits() {
        let keys = keys(3_000);
        let b = || BloomFilter::builder().capacity(300).fpr(0.01);
        let mut plain = b().build().unwrap();
        plain.insert_batch(&keys);
        let shared = b().build_atomic().unwrap();
        assert_eq!(shared.store.stripes.len(), 1);
        {
            let mut w = shared.try_writer(70).unwrap();
            w.insert_batch(&keys[..1_000]);
            assert!(w.pending() < 70);
            keys[1_000..1_100].iter().for_each(|k| w.insert(k));
        }
        shared.insert_batch(&keys[1_100..]);
        assert!(shared.into_filter().blocks() == plain.blocks());
    }

    /// A buffer smaller than the stripe count still gives each stripe a slot, and a stripe
    /// whose slots fill applies the buffer before the insert returns.
    #[test]
    fn one_slot_per_stripe_applies_every_key_at_once() {
        let f = BloomFilter::builder()
            .capacity(100_000)
            .build_atomic()
            .unwrap();
        let stripes = f.store.stripes.len();
        assert!(stripes > 2);
        let mut w = f.try_writer(1).unwrap();
        assert_eq!(w.capacity(), stripes);
        for k in keys(1000) {
            w.insert(&k);
            assert_eq!(w.pending(), 0);
            assert!(f.contains(&k));
        }
        let mut w = f.try_writer(stripes * 4).unwrap();
        w.insert_batch(&keys(2)[..]);
        assert_eq!(w.pending(), 2);
        w.flush();
        assert_eq!(w.pending(), 0);
    }

    /// `writer` makes a private handle up to `PRIVATE_MAX_BYTES` and a buffering one above;
    /// a private handle publishes by itself every `capacity` keys.
    #[test]
    fn writer_picks_by_size_and_a_private_handle_publishes_when_full() {
        use crate::AtomicBloomFilter;
        use crate::filter::AtomicWriter;
        let small = AtomicBloomFilter::with_capacity(1_000, 0.01).unwrap();
        let w = small.writer();
        assert!(w.is_private());
        assert_eq!(w.capacity(), 32 * small.num_blocks() as usize);
        drop(w);
        let big = AtomicBloomFilter::with_capacity(4_000_000, 0.01).unwrap();
        assert!(big.size_in_bytes() > AtomicWriter::PRIVATE_MAX_BYTES);
        assert!(!big.writer().is_private());

        let mut w = small.try_private_writer().unwrap();
        let keys = keys(w.capacity() as u64 + 3);
        w.insert_batch(&keys);
        assert_eq!(w.pending(), 3);
        assert_eq!(small.count_batch(&keys[..keys.len() - 3]), keys.len() - 3);
    }
}
