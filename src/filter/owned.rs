//! The owned filter, [`BloomFilter`]: construction, inserts, and what only owned bits can do.

use super::{BatchKey, Builder, ByteColumn, Filter, KeySource, Meta};
use crate::error::Error;
use crate::kernel::{InsertNew, Keys, Sink};
use crate::key::Key;
use crate::layout::Block;
use crate::memory::PageBuf;

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
/// more than it saves); the batch calls make one dispatched call per batch. The queries and
/// accessors are [`Filter`]'s, shared with [`FilterRef`](crate::FilterRef) and
/// [`AtomicBloomFilter`](crate::AtomicBloomFilter).
///
/// `Send` and `Sync`: share it across threads for queries; inserts take `&mut self` (for
/// concurrent inserts use [`AtomicBloomFilter`](crate::AtomicBloomFilter)).
pub type BloomFilter = Filter<PageBuf<Block>>;

impl BloomFilter {
    /// A filter of `blocks` with `meta` (which must describe them).
    pub(crate) fn from_parts(blocks: PageBuf<Block>, meta: Meta) -> BloomFilter {
        assert_eq!(blocks.len() as u64, meta.shape.num_blocks, "filter shape");
        Filter {
            store: blocks,
            meta,
        }
    }

    /// The blocks, for the kinds built on a plain filter that set bits their own way.
    pub(crate) fn blocks_mut(&mut self) -> &mut [Block] {
        &mut self.store
    }

    /// A filter that holds `capacity` keys at a false-positive rate at or below `fpr`, sized by
    /// the exact model of its layout ([`crate::sizing`]), seed 0, hash id 3
    /// ([`KeyHash::Mx32`](crate::KeyHash::Mx32)), on the active kernel
    /// ([`Isa::active`](crate::Isa::active)). The layout is [`Layout::Sectors8x32`] (one
    /// register per key) where that costs at most 5% more memory than the smallest filter for
    /// the rate, else the smallest ([`sizing::plan_default`](crate::sizing::plan_default));
    /// [`Builder::least_memory`] asks for the smallest always.
    ///
    /// [`Layout::Sectors8x32`]: crate::Layout::Sectors8x32
    ///
    /// ```
    /// let f = blockbloom::BloomFilter::with_capacity(1_000_000, 0.01)?;
    /// assert!(f.size_in_bytes() < 1_330_000); // 10.55 bits per key in 8x32 (10.12 in 8x64)
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

    /// Inserts a key: any [`Key`] type, hashed from its canonical form, so it lands exactly
    /// where every other method looks for it: `insert("text")`, `insert_batch(&["text"])`,
    /// [`insert_bytes`](Self::insert_bytes)`(b"text")` and a CLI-built file's line `text` are
    /// one key, as are `insert(&7u64)` and `insert_batch(&[7u64])`. Types the crate does not
    /// know go through [`ByHash`](crate::ByHash).
    ///
    /// ```
    /// use blockbloom::{BloomFilter, ByHash};
    ///
    /// let mut f = BloomFilter::with_capacity(100, 0.01)?;
    /// f.insert(&7u64);
    /// f.insert("text");
    /// f.insert(&[7u8; 16]);
    /// f.insert(&ByHash((1u8, 'x')));
    /// assert!(f.contains(&7u64) && f.contains(&String::from("text")));
    /// assert!(f.count_batch(&["text"]) == 1 && f.count_batch(&[[7u8; 16]]) == 1);
    /// assert!(f.contains_bytes(b"text") && f.contains(&ByHash((1u8, 'x'))));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    #[inline]
    pub fn insert<K: Key + ?Sized>(&mut self, key: &K) {
        self.insert_hash(self.meta.hash_of(key))
    }

    /// Inserts a raw byte string, hashed exactly: the same key as `insert(bytes)`, kept for
    /// callers that hold bytes and want to say so.
    ///
    /// ```
    /// let mut f = blockbloom::BloomFilter::with_capacity(100, 0.01)?;
    /// f.insert_bytes(b"10.0.0.1");
    /// assert!(f.contains_bytes(b"10.0.0.1"));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    #[inline]
    pub fn insert_bytes(&mut self, bytes: &[u8]) {
        self.insert_hash(self.meta.hash_of(bytes))
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
        let block = self.meta.block_of_mut(&mut self.store, hash);
        self.meta.one.insert(block, hash as u32)
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
        let keys = K::as_keys(keys).0;
        match self.meta.burst(keys) {
            Some((k, at)) => self.meta.one.burst_insert(&mut self.store, at, k),
            None => self
                .meta
                .kernel
                .insert(&self.meta.shape, &mut self.store, keys),
        }
    }

    /// Inserts every key of a [`ByteColumn`] (Arrow's offsets and values), each hashed as
    /// [`insert_bytes`](Self::insert_bytes) of its bytes, without copying the column.
    ///
    /// ```
    /// let col = blockbloom::ByteColumn::new(&[0i64, 3, 6], b"foobar")?;
    /// let mut f = blockbloom::BloomFilter::with_capacity(100, 0.01)?;
    /// f.insert_column(&col);
    /// assert!(f.contains_bytes(b"foo") && f.contains_bytes(b"bar"));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn insert_column(&mut self, column: &ByteColumn<'_>) {
        self.meta
            .kernel
            .insert(&self.meta.shape, &mut self.store, column.key_slice().0)
    }

    /// Inserts `key` and answers whether it is new: `true` when some bit of its pattern was
    /// not set before (so the key was certainly not in the filter), `false` when every bit was
    /// (the key was probably in it already; wrongly so at the false-positive rate). The
    /// check-and-insert of a dedup stream in one probe.
    ///
    /// ```
    /// let mut seen = blockbloom::BloomFilter::with_capacity(1000, 0.01)?;
    /// assert!(seen.insert_new(&"flow-1"));
    /// assert!(!seen.insert_new(&"flow-1"));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    #[inline]
    pub fn insert_new<K: Key + ?Sized>(&mut self, key: &K) -> bool {
        self.insert_hash_new(self.meta.hash_of(key))
    }

    /// [`insert_new`](Self::insert_new) for a pre-computed hash.
    #[inline]
    pub fn insert_hash_new(&mut self, hash: u64) -> bool {
        let block = self.meta.block_of_mut(&mut self.store, hash);
        self.meta.one.insert_new(block, hash as u32)
    }

    /// Inserts a batch and answers for each key whether it was new ([`insert_new`]), into
    /// `out`; returns how many were. The batch behaves as if its keys were inserted one after
    /// another, so a key repeated inside it is new at most once. Takes any [`KeySource`]:
    /// a slice of integer, 16-byte or string keys, or a [`ByteColumn`].
    ///
    /// [`insert_new`]: Self::insert_new
    ///
    /// # Panics
    /// If `out.len()` is not the number of keys.
    ///
    /// ```
    /// let mut seen = blockbloom::BloomFilter::with_capacity(1000, 0.01)?;
    /// let mut new = [false; 4];
    /// assert_eq!(seen.insert_batch_new(&[7u64, 8, 7, 9], &mut new), 3);
    /// assert_eq!(new, [true, true, false, true]);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn insert_batch_new<Q: KeySource + ?Sized>(&mut self, keys: &Q, out: &mut [bool]) -> usize {
        self.insert_keys_new(keys.key_slice().0, out)
    }

    // Not generic, so the kernel's batch is compiled once, here, and not again in every
    // crate that calls the generic front-end (see `Kernel::blocks`).
    fn insert_keys_new(&mut self, keys: Keys<'_>, out: &mut [bool]) -> usize {
        let op = InsertNew(&mut self.store);
        self.meta
            .kernel
            .blocks(&self.meta.shape, keys, op, Sink::Each(out));
        out.iter().filter(|&&new| new).count()
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
            .insert(&self.meta.shape, &mut self.store, Keys::Hashes(hashes))
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
        self.store.fill(Block::ZERO)
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
        &self.store
    }
}

impl PartialEq for BloomFilter {
    /// Same shape, seed and bits; the kernel does not matter (every tier builds the same bits).
    fn eq(&self, other: &BloomFilter) -> bool {
        self.meta.shape == other.meta.shape
            && self.meta.seed == other.meta.seed
            && self.store == other.store
    }
}

impl Eq for BloomFilter {}

impl core::fmt::Debug for BloomFilter {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
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

impl<K: Key> Extend<K> for BloomFilter {
    /// Inserts every key, hashing in chunks and inserting each chunk as one batch.
    fn extend<I: IntoIterator<Item = K>>(&mut self, iter: I) {
        let mut hashes = [0u64; 256];
        let mut n = 0;
        for key in iter {
            hashes[n] = self.meta.hash_of(&key);
            n += 1;
            if n == hashes.len() {
                self.insert_hash_batch(&hashes);
                n = 0;
            }
        }
        self.insert_hash_batch(&hashes[..n]);
    }
}
