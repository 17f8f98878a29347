//! [`AtomicWriter`]: one thread's buffered writes into an [`AtomicBloomFilter`].

use alloc::boxed::Box;
use alloc::vec::Vec;

use super::{AtomicBloomFilter, BatchKey, ByteColumn, KeySource};
use crate::error::Error;
use crate::kernel::{Keys, Sink};
use crate::key::Key;
use crate::layout::block_index;

/// A writer handle: one thread's buffered inserts into a shared [`AtomicBloomFilter`], made
/// by [`AtomicBloomFilter::writer`].
///
/// It hashes its keys (in SIMD lanes for batches) and puts each hash in the slots of its
/// block's stripe (the filter's lock regions), so the buffer is partitioned by stripe as it
/// fills, with no sort. When a stripe's slots are full, on [`flush`](Self::flush) and when the
/// handle is dropped, it applies every pending hash with the filter's batch kernel (patterns
/// in vector registers, blocks prefetched), taking each stripe's lock once for all its keys
/// and writing each block half that gains a bit with one vector store: no locked instruction
/// per key. Other handles, shared batches, single-key inserts and readers can run at the same
/// time.
///
/// **When a key becomes visible.** A key written through a handle is in the filter once the
/// buffer holding it has been applied: when [`flush`](Self::flush) returns, when the handle's
/// drop returns, or when an insert that filled a stripe's slots returns (at most [`capacity`]
/// keys wait; [`pending`](Self::pending) says how many do). Until then no query finds it, not
/// even one on the same thread. After it, every query that happens after (on this thread,
/// or on one that synchronised with it) finds it.
///
/// Flushing never allocates and never fails: the buffer is allocated when the handle is
/// made. A handle is `Send` (move it into the thread that writes) and borrows its filter,
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
    /// `per` slots for each stripe, in stripe order: stripe `s`'s pending hashes are
    /// `slots[s * per..][..fill[s]]`, placed there as they are hashed (no sort at flush).
    slots: Box<[u64]>,
    per: usize,
    /// Per stripe, how many of its slots are taken.
    fill: Box<[u32]>,
    /// Where a batch is hashed, [`STAGE`] keys at a time, before its hashes go to their
    /// stripes' slots (empty for a filter of one stripe, whose slots take the hashes
    /// directly).
    stage: Box<[u64]>,
}

/// Keys hashed at a time before they are placed in their stripes' slots: 4 KiB, in L1
/// between the hashing and the placing.
const STAGE: usize = 512;

impl<'f> AtomicWriter<'f> {
    /// Slots of a handle from [`AtomicBloomFilter::writer`]: 128 KiB of hashes; once a filter
    /// has its full 256 stripes, 64 slots per stripe, and about 40 keys per stripe lock
    /// taken (a stripe's slots fill first when the 256 hold about 10,000 keys in all).
    pub const DEFAULT_BUFFER: usize = 16384;

    /// A handle with `buffer` slots; aborts if the allocator refuses them.
    pub(super) fn new(filter: &'f AtomicBloomFilter, buffer: usize) -> AtomicWriter<'f> {
        match Self::try_new(filter, buffer) {
            Ok(w) => w,
            Err(Error::AllocationFailed { .. }) => alloc::alloc::handle_alloc_error(
                core::alloc::Layout::array::<u64>(buffer).expect("a buffer's layout"),
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
        Ok(AtomicWriter {
            filter,
            slots: zeroed(per * stripes)?,
            per,
            fill: zeroed(stripes)?,
            stage: zeroed(if stripes > 1 { STAGE } else { 0 })?,
        })
    }

    /// The filter it writes into.
    pub fn filter(&self) -> &'f AtomicBloomFilter {
        self.filter
    }

    /// How many hashes the handle has room for: the `buffer` it was made with, as a whole
    /// number of slots for each of the filter's stripes (at least one each). A filter of one
    /// stripe (64 blocks, 4 KiB, or fewer) applies them when they are all taken; a larger one
    /// when one stripe's slots are, which with evenly spread hashes is when roughly half to
    /// two thirds of all of them are.
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// How many keys wait in the buffer, not yet visible in the filter.
    pub fn pending(&self) -> usize {
        self.fill.iter().map(|&f| f as usize).sum()
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
        self.place(&[hash])
    }

    /// Inserts a batch of keys (see [`AtomicBloomFilter::insert_batch`]), hashed in SIMD
    /// lanes into the buffer: buffered, except when a stripe's slots fill, which applies the
    /// buffer.
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

    /// Hashes `keys` and places each hash in its stripe's slots, applying the buffer when a
    /// stripe's slots fill. The partition by stripe is done here, as the hashes come out of
    /// the SIMD hash (in L1, [`STAGE`] at a time), not as a sort when the buffer is applied.
    pub(super) fn push(&mut self, keys: Keys<'_>) {
        let meta = &self.filter.meta;
        let keys = keys.under(meta.shape.hash);
        let total = keys.len();
        let mut start = 0;
        if self.fill.len() == 1 {
            // One stripe: its slots are the whole buffer, filled in arrival order.
            while start < total {
                let len = self.fill[0] as usize;
                let take = (self.slots.len() - len).min(total - start);
                let out = &mut self.slots[len..len + take];
                meta.kernel.hash_keys(meta.shape.flip, keys, start, out);
                self.fill[0] = (len + take) as u32;
                start += take;
                if len + take == self.slots.len() {
                    self.flush();
                }
            }
            return;
        }
        let mut stage = core::mem::take(&mut self.stage);
        while start < total {
            let take = stage.len().min(total - start);
            meta.kernel
                .hash_keys(meta.shape.flip, keys, start, &mut stage[..take]);
            start += take;
            self.place(&stage[..take]);
        }
        self.stage = stage;
    }

    /// Puts each hash in its stripe's slots, applying the buffer whenever that fills them.
    #[inline(always)]
    fn place(&mut self, hashes: &[u64]) {
        let (filter, per) = (self.filter, self.per);
        let (slots, fill) = (&mut *self.slots, &mut *self.fill);
        let num_blocks = filter.meta.shape.num_blocks;
        let stripes = &filter.store.stripes;
        for &h in hashes {
            let s = stripes.stripe_of(block_index(h, num_blocks));
            debug_assert!(s < fill.len());
            // SAFETY: `block_index` is below `num_blocks`, and `fill` has an entry for each
            // of the stripes that cover them (`try_new`).
            let taken = unsafe { fill.get_unchecked_mut(s) };
            let f = *taken as usize;
            debug_assert!(f < per);
            // SAFETY: `s * per + f < stripes * per = slots.len()`: `f < per`, as a stripe
            // whose slots fill is applied at once, below.
            unsafe { *slots.get_unchecked_mut(s * per + f) = h };
            *taken += 1;
            if f + 1 == per {
                apply(filter, slots, fill, per);
            }
        }
    }

    /// Applies every buffered key to the filter; when it returns, they are visible to every
    /// query that happens after it. Never allocates, never fails.
    pub fn flush(&mut self) {
        apply(self.filter, &mut self.slots, &mut self.fill, self.per)
    }
}

/// Applies the pending hashes of `slots` (`per` for each stripe, `fill` of them taken) to
/// `filter` and empties them. The stripes' runs are moved together, in stripe order, so that
/// one pass of the batch kernel takes each stripe's lock once; each run moves to an offset no
/// later than its own, so moving them in order overwrites only runs already moved.
#[cold]
#[inline(never)]
fn apply(filter: &AtomicBloomFilter, slots: &mut [u64], fill: &mut [u32], per: usize) {
    let mut at = 0;
    for (s, taken) in fill.iter_mut().enumerate() {
        let f = core::mem::take(taken) as usize;
        let from = s * per;
        if from != at {
            slots.copy_within(from..from + f, at);
        }
        at += f;
    }
    if at > 0 {
        filter.apply(Keys::Hashes(&slots[..at]), Sink::Discard);
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
fn zeroed<T: Copy + Default>(len: usize) -> Result<Box<[T]>, Error> {
    let mut v = Vec::new();
    v.try_reserve_exact(len)
        .map_err(|_| Error::AllocationFailed {
            bytes: (len as u128) * core::mem::size_of::<T>() as u128,
        })?;
    v.resize(len, T::default());
    Ok(v.into_boxed_slice())
}

#[cfg(all(test, feature = "std"))]
mod tests {
    use crate::{BloomFilter, Isa, Layout};

    fn keys(n: u64) -> Vec<u64> {
        (0..n)
            .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
            .collect()
    }

    /// Every tier's locked insert (a half in one vector store, a block in its stores) sets
    /// the bits a plain build sets, in every layout, through a handle whose stripes' slots
    /// fill many times and through shared batches.
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
                shared.insert_batch(&keys[10_000..]);
                let got = shared.into_filter();
                assert!(got.blocks() == plain.blocks(), "{isa} {layout:?}");
            }
        }
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
}
