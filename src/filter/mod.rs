//! The filter front-end: [`BloomFilter`] (owned), [`FilterRef`] (borrowed) and their
//! [`Builder`].

// Without `std`, `f64` lacks `ln`, `exp`, ... (with it, or in tests, std's own are found).
#[cfg(not(any(feature = "std", test)))]
use crate::math::F64Math as _;

use alloc::vec::Vec;

mod algebra;
#[cfg(any(feature = "arrow-59", feature = "arrow-60"))]
mod arrow;
mod atomic;
mod builder;
mod counting;
pub(crate) mod keys;
mod owned;
#[cfg(feature = "parallel")]
mod parallel;
mod shared_ops;
mod storage;
mod view;
mod writer;

pub use atomic::{AtomicBloomFilter, Striped};
pub use builder::Builder;
pub(crate) use builder::Options;
pub use counting::{CounterBits, Counters, CountingBloomFilter, CountingBuilder};
pub use keys::{BatchKey, ByteColumn, KeySource, Offset};
pub use owned::BloomFilter;
#[cfg(feature = "parallel")]
pub use parallel::ParallelBuild;
pub use storage::{Bits, Storage};
pub use view::FilterRef;
pub use writer::AtomicWriter;

use crate::error::Error;
use crate::hashing::{KeyHash, seed_flip};
use crate::isa::Isa;
use crate::kernel::{BURST, Burst, Kernel, Keys, OneKey, Shape, Sink, plan};
use crate::key::Key;
use crate::layout::{BLOCK_BITS, Block, Layout, MAX_BLOCKS, block_index};
use crate::memory::PageBuf;

/// The filter front-end, generic over how its blocks are held ([`Storage`]): the queries,
/// batch queries and accessors are written once here. Use it through its aliases:
/// [`BloomFilter`] (owned), [`FilterRef`] (borrowed, zero-copy) and [`AtomicBloomFilter`]
/// (atomic words, many writers).
///
/// ```
/// use blockbloom::{BloomFilter, FilterRef};
///
/// let mut f = BloomFilter::with_capacity(1000, 0.01)?;
/// f.insert(&7u64);
/// let a = f.clone().into_atomic();
/// assert!(f.contains(&7u64) && a.contains(&7u64));
/// assert_eq!(f.num_blocks(), a.num_blocks());
/// # Ok::<(), blockbloom::Error>(())
/// ```
///
/// `Send` and `Sync` when its storage `S` is, as it is for every storage the crate defines.
#[derive(Clone, Copy)]
pub struct Filter<S> {
    store: S,
    meta: Meta,
}

/// Everything about a filter but its bits: shared by [`BloomFilter`] and
/// [`AtomicBloomFilter`], which convert into each other.
#[derive(Clone, Copy)]
pub struct Meta {
    pub(crate) shape: Shape,
    pub(crate) seed: u64,
    pub(crate) capacity: u64,
    pub(crate) target_fpr: Option<f64>,
    pub(crate) kernel: &'static Kernel,
    /// The single-key probe of this layout and rounds on `kernel`'s tier, chosen once.
    pub(crate) one: OneKey,
}

impl Meta {
    /// The metadata of a filter of this shape.
    pub(crate) fn new(
        num_blocks: u64,
        layout: Layout,
        probes: u32,
        seed: u64,
        capacity: u64,
        target_fpr: Option<f64>,
        kernel: &'static Kernel,
    ) -> Meta {
        let (chunk, prefetch) = crate::kernel::chunking(crate::kernel::prefetch_depth(
            num_blocks.saturating_mul(64),
            kernel.isa(),
        ));
        // The single-key paths index blocks unchecked on this (see `block_of`).
        assert!((1..=MAX_BLOCKS).contains(&num_blocks), "block count");
        let rounds = (probes / layout.sectors()) as usize;
        Meta {
            shape: Shape {
                num_blocks,
                layout,
                rounds,
                flip: seed_flip(seed),
                hash: KeyHash::Xxh3,
                chunk,
                prefetch,
            },
            seed,
            capacity,
            target_fpr,
            kernel,
            one: kernel.one_key(layout, rounds),
        }
    }

    /// This metadata with keys hashed by `hash` (a new [`Meta`] hashes with
    /// [`KeyHash::Xxh3`], hash id 1).
    pub(crate) fn with_hash(mut self, hash: KeyHash) -> Meta {
        self.shape.hash = hash;
        self
    }

    /// The keys of a batch that takes the filter's burst entries ([`OneKey::burst_query`]),
    /// at most [`BURST`] `u64` keys whose hash the entries compute (the hash plan's
    /// `burst_keys`), and how the burst walks this filter.
    #[inline(always)]
    pub(crate) fn burst<'k>(&self, keys: Keys<'k>) -> Option<(&'k [u64], Burst)> {
        let (words, keys) = plan::burst_keys(self.shape.hash, keys, BURST)?;
        let at = Burst {
            words,
            flip: self.shape.flip,
            prefetch: self.shape.prefetch,
        };
        Some((keys, at))
    }

    pub(crate) fn probes(&self) -> u32 {
        self.shape.probes() as u32
    }

    /// The block of `blocks` that `hash` lands in, without a bounds check on the hot path.
    ///
    /// `blocks` must be the store of the filter this describes: every filter is made by a
    /// `from_parts` (or from another filter's store) that checks its length is `num_blocks`.
    #[inline(always)]
    pub(crate) fn block_of<'b, T>(&self, blocks: &'b [T], hash: u64) -> &'b T {
        let i = block_index(hash, self.shape.num_blocks);
        debug_assert!(i < blocks.len(), "store of another shape");
        // SAFETY: `num_blocks` is in `1..=MAX_BLOCKS` (checked in `new`), so
        // `block_index(hash, num_blocks) < num_blocks`, which is `blocks.len()` (above).
        unsafe { blocks.get_unchecked(i) }
    }

    /// [`block_of`](Self::block_of), mutably.
    #[inline(always)]
    pub(crate) fn block_of_mut<'b, T>(&self, blocks: &'b mut [T], hash: u64) -> &'b mut T {
        let i = block_index(hash, self.shape.num_blocks);
        debug_assert!(i < blocks.len(), "store of another shape");
        // SAFETY: as in `block_of`.
        unsafe { blocks.get_unchecked_mut(i) }
    }

    /// The filter hash of `key` (its seed's constant precomputed).
    #[inline(always)]
    pub(crate) fn hash_of<K: Key + ?Sized>(&self, key: &K) -> u64 {
        key.key_form()
            .hash_by(self.shape.hash, self.seed, self.shape.flip)
    }
}

impl<S: Storage> Filter<S> {
    /// Everything about the filter but its bits.
    pub(crate) fn meta(&self) -> &Meta {
        &self.meta
    }

    /// Whether the key may have been inserted (no false negatives; false positives at about
    /// [`expected_fpr`](BloomFilter::expected_fpr)).
    ///
    /// ```
    /// let mut f = blockbloom::BloomFilter::with_capacity(100, 0.01)?;
    /// f.insert(&1u32);
    /// assert!(f.contains(&1u32));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    #[inline]
    pub fn contains<K: Key + ?Sized>(&self, key: &K) -> bool {
        self.contains_hash(self.meta.hash_of(key))
    }

    /// Whether a raw byte string may have been inserted with [`insert_bytes`](Self::insert_bytes).
    ///
    /// ```
    /// let mut f = blockbloom::BloomFilter::with_capacity(100, 0.01)?;
    /// f.insert_bytes(b"k");
    /// assert!(f.contains_bytes(b"k"));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    #[inline]
    pub fn contains_bytes(&self, bytes: &[u8]) -> bool {
        self.contains_hash(self.meta.hash_of(bytes))
    }

    /// The 64-bit hash this filter uses for `key` (its [`key_hash`](Self::key_hash) with its
    /// seed, [`KeyForm::hash_with`](crate::KeyForm::hash_with)), for callers that hash once
    /// and use [`insert_hash`](Self::insert_hash)/[`contains_hash`](Self::contains_hash).
    ///
    /// ```
    /// let f = blockbloom::BloomFilter::builder().capacity(100).seed(3).build()?;
    /// assert_eq!(f.hash(&9u64), blockbloom::hash::hash_u64_mx32(9, 3)); // hash id 3
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    #[inline]
    pub fn hash<K: Key + ?Sized>(&self, key: &K) -> u64 {
        self.meta.hash_of(key)
    }

    /// Whether a pre-computed hash may have been inserted.
    ///
    /// ```
    /// let mut f = blockbloom::BloomFilter::with_capacity(100, 0.01)?;
    /// f.insert_hash(0x0123_4567_89ab_cdef);
    /// assert!(f.contains_hash(0x0123_4567_89ab_cdef));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    #[inline]
    pub fn contains_hash(&self, hash: u64) -> bool {
        self.store.contains_hash(&self.meta, hash)
    }

    /// Answers a batch of keys into `out` (`out[i]` for `keys[i]`): integers, 16-byte keys or
    /// byte strings ([`BatchKey`]).
    ///
    /// # Panics
    /// If `out.len() != keys.len()`.
    ///
    /// ```
    /// let mut f = blockbloom::BloomFilter::with_capacity(100, 0.01)?;
    /// f.insert_batch(&[1u64, 2]);
    /// let mut out = [false; 3];
    /// f.contains_batch(&[1u64, 2, 3], &mut out);
    /// assert!(out[0] && out[1]);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn contains_batch<K: BatchKey>(&self, keys: &[K], out: &mut [bool]) {
        self.store
            .query(&self.meta, K::as_keys(keys).0, Sink::Each(out))
    }

    /// How many keys of the batch may have been inserted.
    ///
    /// ```
    /// let mut f = blockbloom::BloomFilter::with_capacity(100, 0.01)?;
    /// f.insert_batch(&[10u32, 20, 30]);
    /// assert!(f.count_batch(&[10u32, 20, 30, 40]) >= 3);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn count_batch<K: BatchKey>(&self, keys: &[K]) -> usize {
        let mut n = 0;
        self.store
            .query(&self.meta, K::as_keys(keys).0, Sink::Count(&mut n));
        n
    }

    /// Answers every key of a [`ByteColumn`] into `out` (`out[i]` for key `i`), each hashed as
    /// [`contains_bytes`](Self::contains_bytes) of its bytes.
    ///
    /// # Panics
    /// If `out.len() != column.len()`.
    ///
    /// ```
    /// let col = blockbloom::ByteColumn::new(&[0i32, 1, 2], b"xy")?;
    /// let mut f = blockbloom::BloomFilter::with_capacity(100, 0.01)?;
    /// f.insert_bytes(b"x");
    /// let mut out = [false; 2];
    /// f.contains_column(&col, &mut out);
    /// assert!(out[0]);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn contains_column(&self, column: &ByteColumn<'_>, out: &mut [bool]) {
        self.store
            .query(&self.meta, column.key_slice().0, Sink::Each(out))
    }

    /// Answers a batch as a bitmap, the way Arrow's validity buffers and databases' filter
    /// masks hold it: bit `i % 64` of `out[i / 64]` (least significant first) for key `i`,
    /// set when the key may be present; the bits after the last key are 0. Takes any
    /// [`KeySource`] (a slice of any batch key type, or a [`ByteColumn`]).
    ///
    /// # Panics
    /// If `out.len()` is not the key count divided by 64, rounded up.
    ///
    /// ```
    /// let mut f = blockbloom::BloomFilter::with_capacity(1000, 0.001)?;
    /// f.insert_batch(&[1u64, 3]);
    /// let mut bits = [0u64; 1];
    /// f.contains_bitmap(&[0u64, 1, 2, 3], &mut bits);
    /// assert_eq!(bits[0] & 0b1010, 0b1010);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn contains_bitmap<Q: KeySource + ?Sized>(&self, keys: &Q, out: &mut [u64]) {
        self.store
            .query(&self.meta, keys.key_slice().0, Sink::Bitmap(out))
    }

    /// Appends to `out` the indices of the keys that may be present, in order (a selection
    /// vector); returns how many it appended. Takes any [`KeySource`].
    ///
    /// # Panics
    /// If the batch holds more than 2^32 keys (indices are `u32`).
    ///
    /// ```
    /// let mut f = blockbloom::BloomFilter::with_capacity(1000, 0.001)?;
    /// f.insert_batch(&["b", "d"]);
    /// let mut rows = Vec::new();
    /// f.select(&["a", "b", "c", "d"], &mut rows);
    /// assert!(rows.contains(&1) && rows.contains(&3));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn select<Q: KeySource + ?Sized>(&self, keys: &Q, out: &mut Vec<u32>) -> usize {
        let before = out.len();
        self.store
            .query(&self.meta, keys.key_slice().0, Sink::Select(out));
        out.len() - before
    }

    /// Answers a batch of pre-computed hashes into `out`.
    ///
    /// # Panics
    /// If `out.len() != hashes.len()`.
    ///
    /// ```
    /// let mut f = blockbloom::BloomFilter::with_capacity(100, 0.01)?;
    /// let h = f.hash(&"a");
    /// f.insert_hash(h);
    /// let mut out = [false];
    /// f.contains_hash_batch(&[h], &mut out);
    /// assert!(out[0]);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn contains_hash_batch(&self, hashes: &[u64], out: &mut [bool]) {
        self.store
            .query(&self.meta, Keys::Hashes(hashes), Sink::Each(out))
    }

    /// How many of the pre-computed hashes may have been inserted.
    ///
    /// ```
    /// let mut f = blockbloom::BloomFilter::with_capacity(100, 0.01)?;
    /// let h = f.hash(&"a");
    /// f.insert_hash(h);
    /// assert!(f.count_hash_batch(&[h, h]) == 2);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn count_hash_batch(&self, hashes: &[u64]) -> usize {
        let mut n = 0;
        self.store
            .query(&self.meta, Keys::Hashes(hashes), Sink::Count(&mut n));
        n
    }

    /// Bytes of filter (blocks only).
    ///
    /// ```
    /// let f = blockbloom::BloomFilter::builder().capacity(1000).bits_per_key(16.0).build()?;
    /// assert_eq!(f.size_in_bytes(), 32 * 64);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn size_in_bytes(&self) -> usize {
        self.meta.shape.num_blocks as usize * core::mem::size_of::<Block>()
    }

    /// Number of 512-bit blocks.
    ///
    /// ```
    /// let f = blockbloom::BloomFilter::builder().capacity(1000).bits_per_key(16.0).build()?;
    /// assert_eq!(f.num_blocks(), 32); // 1000 keys * 16 bits / 512 bits per block
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn num_blocks(&self) -> u64 {
        self.meta.shape.num_blocks
    }

    /// Bits set per key (a multiple of 4).
    ///
    /// ```
    /// let f = blockbloom::BloomFilter::with_capacity(1000, 0.0001)?;
    /// assert_eq!(f.probes(), 12); // the best k for 0.01%
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn probes(&self) -> u32 {
        self.meta.shape.probes() as u32
    }

    /// How the probes spread over a block: chosen by the default's rule
    /// ([`sizing::plan_default`](crate::sizing::plan_default)) unless forced.
    ///
    /// ```
    /// use blockbloom::{BloomFilter, Layout};
    /// assert_eq!(BloomFilter::with_capacity(1000, 0.01)?.layout(), Layout::Sectors8x32);
    /// assert_eq!(BloomFilter::with_capacity(1000, 0.0001)?.layout(), Layout::Sectors4x128);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn layout(&self) -> Layout {
        self.meta.shape.layout
    }

    /// Bits of filter per key of [`capacity`](Self::capacity).
    ///
    /// ```
    /// let f = blockbloom::BloomFilter::builder().capacity(1000).bits_per_key(16.0).build()?;
    /// assert_eq!(f.bits_per_key(), 16.384); // rounded up to 32 whole blocks
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn bits_per_key(&self) -> f64 {
        self.size_in_bytes() as f64 * 8.0 / self.meta.capacity.max(1) as f64
    }

    /// The hash this filter gives its keys ([`KeyHash`], the format's hash id): what it was
    /// built with, or what the bytes it was read from say.
    ///
    /// ```
    /// use blockbloom::{BloomFilter, KeyHash};
    /// let f = BloomFilter::builder().capacity(10).key_hash(KeyHash::Xxh3).build()?;
    /// let g = BloomFilter::from_bytes(&f.to_bytes())?;
    /// assert_eq!(g.key_hash(), KeyHash::Xxh3);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn key_hash(&self) -> KeyHash {
        self.meta.shape.hash
    }

    /// The hash seed.
    ///
    /// ```
    /// let f = blockbloom::BloomFilter::builder().capacity(10).seed(5).build()?;
    /// assert_eq!(f.seed(), 5);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn seed(&self) -> u64 {
        self.meta.seed
    }

    /// The key count the filter was sized for.
    ///
    /// ```
    /// let f = blockbloom::BloomFilter::with_capacity(1000, 0.01)?;
    /// assert_eq!(f.capacity(), 1000);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn capacity(&self) -> u64 {
        self.meta.capacity
    }

    /// The false-positive target the filter was sized for, if it was sized by one.
    ///
    /// ```
    /// let f = blockbloom::BloomFilter::with_capacity(1000, 0.01)?;
    /// assert_eq!(f.target_fpr(), Some(0.01));
    /// let g = blockbloom::BloomFilter::builder().capacity(1000).bits_per_key(8.0).build()?;
    /// assert_eq!(g.target_fpr(), None);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn target_fpr(&self) -> Option<f64> {
        self.meta.target_fpr
    }

    /// The kernel tier the batch methods run on.
    ///
    /// ```
    /// let f = blockbloom::BloomFilter::builder().capacity(10).isa(blockbloom::Isa::Scalar).build()?;
    /// assert_eq!(f.isa(), blockbloom::Isa::Scalar);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn isa(&self) -> Isa {
        self.meta.kernel.isa()
    }

    /// The model's false-positive rate once `keys` distinct keys are in the filter.
    ///
    /// ```
    /// let f = blockbloom::BloomFilter::with_capacity(10_000, 0.01)?;
    /// assert!(f.model_fpr(10_000) <= 0.01);
    /// assert!(f.model_fpr(20_000) > 0.01);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn model_fpr(&self, keys: u64) -> f64 {
        self.store.model_fpr(&self.meta, keys)
    }

    /// How many keys a batch hashes and prefetches ahead of the ones it probes; 0 when it
    /// does not prefetch (filters that fit in a core's L2 cache). Chosen from the filter's
    /// size when it is made; see [`set_prefetch_depth`](Self::set_prefetch_depth).
    ///
    /// ```
    /// let small = blockbloom::BloomFilter::with_capacity(10_000, 0.01)?;
    /// assert_eq!(small.prefetch_depth(), 0); // 12 KB: in cache, no prefetches
    /// let large = blockbloom::BloomFilter::with_capacity(10_000_000, 0.01)?;
    /// assert!(large.prefetch_depth() > 0);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn prefetch_depth(&self) -> usize {
        if self.meta.shape.prefetch {
            self.meta.shape.chunk
        } else {
            0
        }
    }

    /// Sets how many keys batches prefetch ahead: 0 turns prefetching off, 1 to
    /// [`MAX_PREFETCH_DEPTH`](crate::MAX_PREFETCH_DEPTH) (128) sets the distance. Answers do
    /// not change, only speed; the default comes from a sweep over filter sizes (see the
    /// [memory](crate::guide::memory) guide), and a machine whose memory has more (or fewer)
    /// misses in flight than the ones measured may want another.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] (named `depth`) above 128; the filter is unchanged.
    ///
    /// ```
    /// let mut f = blockbloom::BloomFilter::with_capacity(10_000_000, 0.01)?;
    /// f.set_prefetch_depth(32)?;
    /// assert_eq!(f.prefetch_depth(), 32);
    /// assert!(f.set_prefetch_depth(129).is_err());
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn set_prefetch_depth(&mut self, depth: usize) -> Result<(), Error> {
        if depth > crate::kernel::MAX_PREFETCH_DEPTH {
            return Err(Error::InvalidParameter {
                name: "depth",
                value: depth as f64,
                expected: "0 (no prefetch) to 128 keys",
            });
        }
        let s = &mut self.meta.shape;
        (s.chunk, s.prefetch) = crate::kernel::chunking(depth);
        Ok(())
    }
}

impl<S: Bits> Filter<S> {
    /// Bytes of the blocks the kernel backs with transparent huge pages now
    /// ([`memory::huge_page_bytes`](crate::memory::huge_page_bytes)); `None` where the system
    /// cannot say. A filter over a read-only file mapping ([`FilterRef`]) usually has none:
    /// load it owned (`from_bytes`, `read_from`) for hot use.
    pub fn huge_page_bytes(&self) -> Option<u64> {
        crate::memory::huge_page_bytes(self.store.bits())
    }

    /// Fraction of bits set, in `[0, 1]`.
    ///
    /// ```
    /// let mut f = blockbloom::BloomFilter::with_capacity(10_000, 0.01)?;
    /// f.insert_batch(&(0..10_000u64).collect::<Vec<_>>());
    /// assert!(f.fill_ratio() > 0.4 && f.fill_ratio() < 0.6); // about half full at capacity
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn fill_ratio(&self) -> f64 {
        let ones: u64 = self
            .store
            .bits()
            .iter()
            .flat_map(|b| b.0)
            .map(|w| w.count_ones() as u64)
            .sum();
        ones as f64 / (self.store.bits().len() as f64 * BLOCK_BITS as f64)
    }

    /// An estimate of the number of distinct keys inserted, from each sector's fill
    /// (`c = ln(1 - X/W) / (b ln(1 - 1/W))` per sector of `W` bits with `X` set and `b` probes
    /// per key, averaged per block, summed).
    ///
    /// ```
    /// let mut f = blockbloom::BloomFilter::with_capacity(100_000, 0.01)?;
    /// f.insert_batch(&(0..50_000u64).collect::<Vec<_>>());
    /// let est = f.estimated_len();
    /// assert!((est - 50_000.0).abs() < 1_000.0, "{est}");
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn estimated_len(&self) -> f64 {
        let b = self.meta.shape.rounds as f64;
        let w = self.meta.shape.layout.sector_bits() as f64;
        let per_probe = (1.0 - 1.0 / w).ln();
        let sectors = self.meta.shape.layout.sectors() as f64;
        let mut total = 0.0;
        for block in self.store.bits() {
            let mut keys = 0.0;
            let layout = self.meta.shape.layout;
            let counts = sector_popcounts(block, layout);
            for &x in &counts[..(layout.sectors() * layout.parts()) as usize] {
                // A full sector says "at least this many": cap at half a bit short of full.
                keys += (1.0 - (x as f64).min(w - 0.5) / w).ln() / (b * per_probe);
            }
            total += keys / sectors;
        }
        total
    }

    /// The false-positive probability of this filter as it is now, for a key not in it:
    /// the mean over blocks of the product over sectors of `(set bits / sector bits)^b`. Exact
    /// for an ideal hash; it reads every block once.
    ///
    /// ```
    /// let mut f = blockbloom::BloomFilter::with_capacity(100_000, 0.01)?;
    /// assert_eq!(f.expected_fpr(), 0.0);
    /// f.insert_batch(&(0..100_000u64).collect::<Vec<_>>());
    /// assert!(f.expected_fpr() > 0.005 && f.expected_fpr() < 0.011);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn expected_fpr(&self) -> f64 {
        let b = self.meta.shape.rounds as i32;
        let w = self.meta.shape.layout.sector_bits() as f64;
        let layout = self.meta.shape.layout;
        let (sectors, parts) = (layout.sectors() as usize, layout.parts() as f64);
        let total: f64 = self
            .store
            .bits()
            .iter()
            .map(|block| {
                // The mean over the block's parts (a key's probes lie in one) of the product
                // over the part's sectors.
                let counts: [u32; 16] = sector_popcounts(block, layout);
                counts[..sectors * layout.parts() as usize]
                    .chunks_exact(sectors)
                    .map(|part| {
                        part.iter()
                            .map(|&x| (x as f64 / w).powi(b))
                            .product::<f64>()
                    })
                    .sum::<f64>()
                    / parts
            })
            .sum();
        total / self.store.bits().len() as f64
    }
}

/// Set bits per sector of `block`, in sector order (part by part, for `Sectors8x32` its
/// sixteen 32-bit sectors), in the first `sectors * parts` entries.
fn sector_popcounts(block: &Block, layout: Layout) -> [u32; 16] {
    let mut out = [0; 16];
    match layout {
        Layout::Sectors8x32 => {
            for (pair, w) in out.chunks_exact_mut(2).zip(&block.0) {
                pair[0] = (*w as u32).count_ones();
                pair[1] = ((*w >> 32) as u32).count_ones();
            }
        }
        Layout::Sectors8x64 | Layout::Sectors4x128 => {
            let words = 8 / layout.sectors() as usize;
            for (o, s) in out.iter_mut().zip(block.0.chunks_exact(words)) {
                *o = s.iter().map(|w| w.count_ones()).sum();
            }
        }
    }
    out
}

/// Zeroed blocks, on huge pages when large ([`crate::memory`]); a size that cannot be
/// mapped or allocated is an error, never an abort.
pub(crate) fn allocate(num_blocks: u64) -> Result<PageBuf<Block>, Error> {
    allocate_pages(num_blocks, true)
}

/// [`allocate`], with huge pages asked for only if `huge_pages`.
pub(crate) fn allocate_pages(num_blocks: u64, huge_pages: bool) -> Result<PageBuf<Block>, Error> {
    let bytes = num_blocks as u128 * 64;
    let n = usize::try_from(num_blocks).map_err(|_| Error::AllocationFailed { bytes })?;
    // SAFETY: a block of zero words is the empty block.
    unsafe { PageBuf::<Block>::zeroed(n, huge_pages) }.ok_or(Error::AllocationFailed { bytes })
}
