//! The filter front-end: [`BloomFilter`] (owned), [`FilterRef`] (borrowed) and their
//! [`Builder`].

mod algebra;
mod atomic;
mod builder;
mod view;

pub use atomic::{AtomicBloomFilter, ParallelBuild};
pub use builder::Builder;
pub(crate) use builder::Options;
pub use view::FilterRef;

use std::hash::Hash;

use crate::Isa;
use crate::error::Error;
use crate::hashing::{hash_bytes, hash_key, seed_flip};
use crate::kernel::{Kernel, Keys, Shape, Sink};
use crate::layout::{BLOCK_BITS, Block, Layout, block_index, contains_scalar, insert_scalar};
use crate::sizing;

/// A cache-line-blocked Bloom filter: each key sets `k` bits in one 64-byte block, so a query
/// costs at most one cache miss, and batches run on the fastest SIMD tier of the CPU.
///
/// ```
/// use blockbloom::BloomFilter;
///
/// let mut f = BloomFilter::with_capacity(1_000_000, 0.01)?;
/// f.insert(&42u64);
/// f.insert("a string key");
/// assert!(f.contains(&42u64));
/// assert!(f.contains("a string key"));
///
/// let keys: Vec<u64> = (0..1000).collect();
/// f.insert_batch(&keys);
/// let mut found = vec![false; keys.len()];
/// f.contains_batch(&keys, &mut found);
/// assert!(found.iter().all(|&x| x));
/// assert_eq!(f.count_batch(&keys), 1000);
/// # Ok::<(), blockbloom::Error>(())
/// ```
///
/// Single-key calls run the scalar reference inline (a dispatched call per key would cost
/// more than it saves); the batch calls make one dispatched call per batch.
#[derive(Clone)]
pub struct BloomFilter {
    blocks: Vec<Block>,
    meta: Meta,
}

/// Everything about a filter but its bits: shared by [`BloomFilter`] and
/// [`AtomicBloomFilter`](crate::AtomicBloomFilter), which convert into each other.
#[derive(Clone, Copy)]
pub(crate) struct Meta {
    pub shape: Shape,
    pub seed: u64,
    pub capacity: u64,
    pub target_fpr: Option<f64>,
    pub kernel: &'static Kernel,
}

impl Meta {
    /// The metadata of a filter of this shape.
    pub fn new(
        num_blocks: u64,
        layout: Layout,
        probes: u32,
        seed: u64,
        capacity: u64,
        target_fpr: Option<f64>,
        kernel: &'static Kernel,
    ) -> Meta {
        Meta {
            shape: Shape {
                num_blocks,
                layout,
                rounds: (probes / layout.sectors()) as usize,
                flip: seed_flip(seed),
                chunk: crate::kernel::chunk_len(num_blocks),
                prefetch: !crate::kernel::cache_resident(num_blocks),
            },
            seed,
            capacity,
            target_fpr,
            kernel,
        }
    }

    pub fn probes(&self) -> u32 {
        self.shape.probes() as u32
    }
}

/// Key types that the batch methods hash in SIMD lanes: `u64`, `i64`, `u32`, `i32`.
///
/// A batch of these keys gives the same filter as inserting each with
/// [`BloomFilter::insert`], because both hash the key's little-endian bytes with XXH3.
///
/// ```
/// let mut a = blockbloom::BloomFilter::with_capacity(100, 0.01)?;
/// let mut b = a.clone();
/// a.insert_batch(&[-1i64, 5]);
/// b.insert(&-1i64);
/// b.insert(&5i64);
/// assert_eq!(a, b);
/// # Ok::<(), blockbloom::Error>(())
/// ```
pub trait BatchKey: Copy + private::Sealed {
    #[doc(hidden)]
    fn as_keys(keys: &[Self]) -> private::KeySlice<'_>;
}

mod private {
    pub trait Sealed {}
    /// Opaque to users; carries the crate's internal key slice.
    pub struct KeySlice<'a>(pub(crate) crate::kernel::Keys<'a>);
}

impl private::Sealed for u64 {}
impl private::Sealed for u32 {}
impl private::Sealed for i64 {}
impl private::Sealed for i32 {}

impl BatchKey for u64 {
    fn as_keys(keys: &[u64]) -> private::KeySlice<'_> {
        private::KeySlice(Keys::U64(keys))
    }
}
impl BatchKey for u32 {
    fn as_keys(keys: &[u32]) -> private::KeySlice<'_> {
        private::KeySlice(Keys::U32(keys))
    }
}
impl BatchKey for i64 {
    fn as_keys(keys: &[i64]) -> private::KeySlice<'_> {
        // SAFETY: i64 and u64 have the same size and alignment and every bit pattern is valid
        // for both; the new slice borrows the same memory for the same lifetime.
        let u = unsafe { std::slice::from_raw_parts(keys.as_ptr().cast::<u64>(), keys.len()) };
        private::KeySlice(Keys::U64(u))
    }
}
impl BatchKey for i32 {
    fn as_keys(keys: &[i32]) -> private::KeySlice<'_> {
        // SAFETY: i32 and u32 have the same size and alignment and every bit pattern is valid
        // for both; the new slice borrows the same memory for the same lifetime.
        let u = unsafe { std::slice::from_raw_parts(keys.as_ptr().cast::<u32>(), keys.len()) };
        private::KeySlice(Keys::U32(u))
    }
}

impl BloomFilter {
    /// A filter of `blocks` with `meta` (which must describe them).
    pub(crate) fn from_parts(blocks: Vec<Block>, meta: Meta) -> BloomFilter {
        assert_eq!(blocks.len() as u64, meta.shape.num_blocks, "filter shape");
        BloomFilter { blocks, meta }
    }

    /// Everything about the filter but its bits.
    pub(crate) fn meta(&self) -> &Meta {
        &self.meta
    }

    /// The blocks, for the kinds built on a plain filter that set bits their own way.
    pub(crate) fn blocks_mut(&mut self) -> &mut [Block] {
        &mut self.blocks
    }

    /// The smallest filter that holds `capacity` keys at a false-positive rate at or below
    /// `fpr`, sized by the exact model of this layout ([`crate::sizing`]), seed 0, on the
    /// active kernel ([`Isa::active`]).
    ///
    /// ```
    /// let f = blockbloom::BloomFilter::with_capacity(1_000_000, 0.01)?;
    /// assert!(f.size_in_bytes() < 1_300_000); // about 10.06 bits per key
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidFpr`], [`Error::TooManyBlocks`], [`Error::AllocationFailed`], or a
    /// kernel error if `BLOCKBLOOM_ISA` is invalid.
    pub fn with_capacity(capacity: u64, fpr: f64) -> Result<BloomFilter, Error> {
        Builder::new().capacity(capacity).fpr(fpr).build()
    }

    /// A [`Builder`] for seed, explicit bit budget, probe count and kernel.
    ///
    /// ```
    /// use blockbloom::{BloomFilter, Isa};
    ///
    /// let f = BloomFilter::builder().capacity(10_000).fpr(0.001).seed(7).build()?;
    /// assert_eq!(f.seed(), 7);
    /// let g = BloomFilter::builder().capacity(10_000).bits_per_key(12.0).isa(Isa::Scalar).build()?;
    /// assert_eq!(g.isa(), Isa::Scalar);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn builder() -> Builder {
        Builder::new()
    }

    /// Inserts any hashable key. `u64`/`u32` keys land exactly where [`insert_batch`]
    /// puts them.
    ///
    /// [`insert_batch`]: BloomFilter::insert_batch
    ///
    /// ```
    /// let mut f = blockbloom::BloomFilter::with_capacity(100, 0.01)?;
    /// f.insert(&7u64);
    /// f.insert("text");
    /// f.insert(&(1u8, 'x'));
    /// assert!(f.contains(&7u64) && f.contains("text") && f.contains(&(1u8, 'x')));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    #[inline]
    pub fn insert<K: Hash + ?Sized>(&mut self, key: &K) {
        self.insert_hash(hash_key(key, self.meta.seed))
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
    pub fn contains<K: Hash + ?Sized>(&self, key: &K) -> bool {
        self.contains_hash(hash_key(key, self.meta.seed))
    }

    /// Inserts a raw byte string, hashed exactly (no length prefix): the form for keys read
    /// from files or the network.
    ///
    /// ```
    /// let mut f = blockbloom::BloomFilter::with_capacity(100, 0.01)?;
    /// f.insert_bytes(b"10.0.0.1");
    /// assert!(f.contains_bytes(b"10.0.0.1"));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    #[inline]
    pub fn insert_bytes(&mut self, bytes: &[u8]) {
        self.insert_hash(hash_bytes(bytes, self.meta.seed))
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
        self.contains_hash(hash_bytes(bytes, self.meta.seed))
    }

    /// The 64-bit hash this filter uses for `key` (seeded XXH3), for callers that hash once
    /// and use [`insert_hash`](Self::insert_hash)/[`contains_hash`](Self::contains_hash).
    ///
    /// ```
    /// let f = blockbloom::BloomFilter::builder().capacity(100).seed(3).build()?;
    /// assert_eq!(f.hash(&9u64), blockbloom::hash::hash_u64(9, 3));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    #[inline]
    pub fn hash<K: Hash + ?Sized>(&self, key: &K) -> u64 {
        hash_key(key, self.meta.seed)
    }

    /// Inserts a pre-computed 64-bit hash. The hash must be well mixed in all 64 bits.
    ///
    /// ```
    /// let mut f = blockbloom::BloomFilter::with_capacity(100, 0.01)?;
    /// let h = f.hash(&"key");
    /// f.insert_hash(h);
    /// assert!(f.contains_hash(h) && f.contains(&"key"));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    #[inline]
    pub fn insert_hash(&mut self, hash: u64) {
        let (i, k) = (
            block_index(hash, self.meta.shape.num_blocks),
            self.meta.shape.probes(),
        );
        insert_scalar(&mut self.blocks[i], self.meta.shape.layout, hash as u32, k)
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
        let i = block_index(hash, self.meta.shape.num_blocks);
        contains_scalar(
            &self.blocks[i],
            self.meta.shape.layout,
            hash as u32,
            self.meta.shape.probes(),
        )
    }

    /// Inserts a batch of integer keys, hashed in SIMD lanes.
    ///
    /// ```
    /// let mut f = blockbloom::BloomFilter::with_capacity(1000, 0.01)?;
    /// f.insert_batch(&[1u64, 2, 3]);
    /// f.insert_batch(&[7u32, 8]);
    /// assert!(f.contains(&2u64) && f.contains(&8u32));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn insert_batch<K: BatchKey>(&mut self, keys: &[K]) {
        self.meta
            .kernel
            .insert(&self.meta.shape, &mut self.blocks, K::as_keys(keys).0)
    }

    /// Answers a batch of integer keys into `out` (`out[i]` for `keys[i]`).
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
        self.meta.kernel.query(
            &self.meta.shape,
            &self.blocks,
            K::as_keys(keys).0,
            Sink::Each(out),
        )
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
        self.meta.kernel.query(
            &self.meta.shape,
            &self.blocks,
            K::as_keys(keys).0,
            Sink::Count(&mut n),
        );
        n
    }

    /// Inserts a batch of pre-computed hashes.
    ///
    /// ```
    /// let mut f = blockbloom::BloomFilter::with_capacity(100, 0.01)?;
    /// let hashes = [f.hash(&"a"), f.hash(&"b")];
    /// f.insert_hash_batch(&hashes);
    /// assert!(f.contains(&"a") && f.contains(&"b"));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn insert_hash_batch(&mut self, hashes: &[u64]) {
        self.meta
            .kernel
            .insert(&self.meta.shape, &mut self.blocks, Keys::Hashes(hashes))
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
        self.meta.kernel.query(
            &self.meta.shape,
            &self.blocks,
            Keys::Hashes(hashes),
            Sink::Each(out),
        )
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
        self.meta.kernel.query(
            &self.meta.shape,
            &self.blocks,
            Keys::Hashes(hashes),
            Sink::Count(&mut n),
        );
        n
    }

    /// Removes every key, keeping the shape, seed and kernel.
    ///
    /// ```
    /// let mut f = blockbloom::BloomFilter::with_capacity(100, 0.01)?;
    /// f.insert(&1u64);
    /// f.clear();
    /// assert_eq!(f.fill_ratio(), 0.0);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn clear(&mut self) {
        self.blocks.fill(Block::ZERO)
    }

    /// Bytes of filter (blocks only).
    ///
    /// ```
    /// let f = blockbloom::BloomFilter::builder().capacity(1000).bits_per_key(16.0).build()?;
    /// assert_eq!(f.size_in_bytes(), 32 * 64);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn size_in_bytes(&self) -> usize {
        self.blocks.len() * std::mem::size_of::<Block>()
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

    /// How the probes spread over a block (chosen by the sizing model unless forced).
    ///
    /// ```
    /// use blockbloom::{layout::Layout, BloomFilter};
    /// assert_eq!(BloomFilter::with_capacity(1000, 0.01)?.layout(), Layout::Sectors8x64);
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

    /// The filter's blocks, in order.
    ///
    /// ```
    /// let mut f = blockbloom::BloomFilter::with_capacity(10, 0.01)?;
    /// f.insert(&1u64);
    /// let ones: u32 = f.blocks().iter().flat_map(|b| b.0).map(u64::count_ones).sum();
    /// assert!(ones > 0 && ones <= f.probes());
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn blocks(&self) -> &[Block] {
        &self.blocks
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
            .blocks
            .iter()
            .flat_map(|b| b.0)
            .map(|w| w.count_ones() as u64)
            .sum();
        ones as f64 / (self.blocks.len() as f64 * BLOCK_BITS as f64)
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
        for block in &self.blocks {
            let mut keys = 0.0;
            for x in sector_popcounts(block, self.meta.shape.layout) {
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
        let total: f64 = self
            .blocks
            .iter()
            .map(|block| {
                sector_popcounts(block, self.meta.shape.layout)
                    .map(|x| (x as f64 / w).powi(b))
                    .product::<f64>()
            })
            .sum();
        total / self.blocks.len() as f64
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
        sizing::false_positive_rate(
            keys,
            self.meta.shape.num_blocks,
            self.meta.shape.layout,
            self.probes(),
        )
    }
}

impl PartialEq for BloomFilter {
    /// Same shape, seed and bits; the kernel does not matter (every tier builds the same bits).
    fn eq(&self, other: &BloomFilter) -> bool {
        self.meta.shape == other.meta.shape
            && self.meta.seed == other.meta.seed
            && self.blocks == other.blocks
    }
}

impl Eq for BloomFilter {}

impl std::fmt::Debug for BloomFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BloomFilter")
            .field("num_blocks", &self.meta.shape.num_blocks)
            .field("layout", &self.meta.shape.layout)
            .field("probes", &self.probes())
            .field("seed", &self.meta.seed)
            .field("capacity", &self.meta.capacity)
            .field("target_fpr", &self.meta.target_fpr)
            .field("isa", &self.isa())
            .finish_non_exhaustive()
    }
}

impl<K: Hash> Extend<K> for BloomFilter {
    /// Inserts every key, hashing in chunks and inserting each chunk as one batch.
    fn extend<I: IntoIterator<Item = K>>(&mut self, iter: I) {
        let mut hashes = [0u64; 256];
        let mut n = 0;
        for key in iter {
            hashes[n] = hash_key(&key, self.meta.seed);
            n += 1;
            if n == hashes.len() {
                self.insert_hash_batch(&hashes);
                n = 0;
            }
        }
        self.insert_hash_batch(&hashes[..n]);
    }
}

/// Set bits per sector of `block`.
fn sector_popcounts(block: &Block, layout: Layout) -> impl Iterator<Item = u32> + '_ {
    let words = 8 / layout.sectors() as usize;
    block
        .0
        .chunks_exact(words)
        .map(|s| s.iter().map(|w| w.count_ones()).sum())
}

/// Zeroed blocks; a size the allocator refuses is an error, never an abort.
pub(crate) fn allocate(num_blocks: u64) -> Result<Vec<Block>, Error> {
    let bytes = num_blocks as u128 * 64;
    let n = usize::try_from(num_blocks).map_err(|_| Error::AllocationFailed { bytes })?;
    let mut v = Vec::new();
    v.try_reserve_exact(n)
        .map_err(|_| Error::AllocationFailed { bytes })?;
    v.resize(n, Block::ZERO);
    Ok(v)
}
