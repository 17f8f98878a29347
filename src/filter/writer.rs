//! [`AtomicWriter`]: one thread's buffered writes into an [`AtomicBloomFilter`].

use alloc::boxed::Box;
use alloc::vec::Vec;

use super::{AtomicBloomFilter, BatchKey, ByteColumn, KeySource};
use crate::error::Error;
use crate::kernel::{Keys, Sink};
use crate::key::Key;
use crate::layout::block_index;
use crate::layout::stripes::MAX_STRIPES_LOG2;

// A writer notes each pending key's stripe in a byte.
const _: () = assert!(MAX_STRIPES_LOG2 <= 8);

/// A writer handle: one thread's buffered inserts into a shared [`AtomicBloomFilter`], made
/// by [`AtomicBloomFilter::writer`].
///
/// It hashes its keys into a buffer (in SIMD lanes for batches). When the buffer is full, on
/// [`flush`](Self::flush) and when the handle is dropped, it sorts the buffered hashes by the
/// filter's stripe and applies them with the filter's batch kernel (patterns in vector
/// registers, blocks prefetched), taking each stripe's lock once for all its keys and
/// writing with plain relaxed stores: no locked instruction per key. Other handles, shared
/// batches, single-key inserts and readers can run at the same time.
///
/// **When a key becomes visible.** A key written through a handle is in the filter once the
/// buffer holding it has been applied: when [`flush`](Self::flush) returns, when the handle's
/// drop returns, or when an insert that filled the buffer returns (every [`capacity`]
/// keys; [`pending`](Self::pending) says how many wait). Until then no query finds it, not
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
    /// Hashes in arrival order; the first `len` are pending.
    buf: Box<[u64]>,
    len: usize,
    /// The pending hashes sorted by stripe, when they are applied.
    sorted: Box<[u64]>,
    /// Each pending hash's stripe, while they are sorted.
    stripe: Box<[u8]>,
    /// Per stripe, its count, then where its run starts in `sorted` (one more than stripes).
    starts: Box<[u32]>,
}

impl<'f> AtomicWriter<'f> {
    /// Keys a handle from [`AtomicBloomFilter::writer`] buffers: 128 KiB of buffers, and 32
    /// keys per stripe lock on average once a filter has its full 256 stripes.
    pub const DEFAULT_BUFFER: usize = 8192;

    /// A handle with a buffer of `buffer` hashes; aborts if the allocator refuses it.
    pub(super) fn new(filter: &'f AtomicBloomFilter, buffer: usize) -> AtomicWriter<'f> {
        match Self::try_new(filter, buffer) {
            Ok(w) => w,
            Err(Error::AllocationFailed { .. }) => alloc::alloc::handle_alloc_error(
                core::alloc::Layout::array::<u64>(buffer).expect("a buffer's layout"),
            ),
            Err(e) => panic!("{e}"),
        }
    }

    /// A handle with a buffer of `buffer` hashes.
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
        Ok(AtomicWriter {
            filter,
            buf: zeroed(buffer)?,
            len: 0,
            sorted: zeroed(if stripes > 1 { buffer } else { 0 })?,
            stripe: zeroed(if stripes > 1 { buffer } else { 0 })?,
            starts: zeroed::<u32>(stripes + 1)?,
        })
    }

    /// The filter it writes into.
    pub fn filter(&self) -> &'f AtomicBloomFilter {
        self.filter
    }

    /// How many keys the buffer holds before it is applied.
    pub fn capacity(&self) -> usize {
        self.buf.len()
    }

    /// How many keys wait in the buffer, not yet visible in the filter.
    pub fn pending(&self) -> usize {
        self.len
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
        // `len < buf.len()` always holds here: a full buffer is applied at once.
        self.buf[self.len] = hash;
        self.len += 1;
        if self.len == self.buf.len() {
            self.flush();
        }
    }

    /// Inserts a batch of keys (see [`AtomicBloomFilter::insert_batch`]), hashed in SIMD
    /// lanes into the buffer: buffered, except for every buffer it fills, which is applied.
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

    /// Hashes `keys` into the buffer, applying it each time it fills.
    pub(super) fn push(&mut self, keys: Keys<'_>) {
        let meta = &self.filter.meta;
        let total = keys.len();
        let mut start = 0;
        while start < total {
            let take = (self.buf.len() - self.len).min(total - start);
            let out = &mut self.buf[self.len..self.len + take];
            meta.kernel
                .hash_keys(meta.shape.flip, keys.under(meta.shape.hash), start, out);
            self.len += take;
            start += take;
            if self.len == self.buf.len() {
                self.flush();
            }
        }
    }

    /// Applies every buffered key to the filter; when it returns, they are visible to every
    /// query that happens after it. Never allocates, never fails.
    pub fn flush(&mut self) {
        let n = core::mem::take(&mut self.len);
        if n == 0 {
            return;
        }
        let store = &self.filter.store;
        let (stripes, num_blocks) = (&store.stripes, self.filter.meta.shape.num_blocks);
        if stripes.len() == 1 {
            return self
                .filter
                .apply(Keys::Hashes(&self.buf[..n]), Sink::Discard);
        }
        // A counting sort by stripe: count (noting each key's stripe), turn counts into
        // starts, place.
        self.starts.fill(0);
        for (&h, s) in self.buf[..n].iter().zip(&mut self.stripe[..n]) {
            let stripe = stripes.stripe_of(block_index(h, num_blocks));
            // At most 256 stripes (`Stripes::new`): the index fits a byte.
            *s = stripe as u8;
            self.starts[stripe + 1] += 1;
        }
        for s in 1..self.starts.len() {
            self.starts[s] += self.starts[s - 1];
        }
        for (&h, &s) in self.buf[..n].iter().zip(&self.stripe[..n]) {
            let at = &mut self.starts[s as usize];
            self.sorted[*at as usize] = h;
            *at += 1;
        }
        self.filter
            .apply(Keys::Hashes(&self.sorted[..n]), Sink::Discard);
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
