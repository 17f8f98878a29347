//! The deletable Bloom filter (Rothenberg, Macapuna, Verdi, Magalhães, "The deletable Bloom
//! filter: a new member of the Bloom family", IEEE Communications Letters 14(6), 2010): a plain
//! [`BloomFilter`] plus a *collision bitmap* with one bit per region of the filter's bits.
//!
//! Inserting marks a region when one of the key's bits is already set there (by another key,
//! or by an earlier insert of the same key). A set bit in an unmarked region belongs to
//! exactly one key, so clearing it cannot take a bit from any other key: [`DeletableBloomFilter::remove`] clears the key's bits that
//! lie in unmarked regions, which is enough to make the key absent, and refuses (changing
//! nothing) when it has none. There are never false negatives for keys that were inserted and
//! not removed.
//!
//! How often a key can be removed depends on how crowded its regions are. In a blocked filter
//! a key's `k` bits all lie in one 512-bit block, whose sectors receive the probes of every key
//! of that block, so the chance is the paper's with the block's load in place of the filter's
//! (see [`blocked_deletability`] and [`unblocked_deletability`]; `blockbloom-perf family` measures
//! both against the real structure).
//!
//! ```
//! use blockbloom::{DeletableBloomFilter, Error};
//!
//! // Sized for 10,000 keys; holding 500 of them leaves most keys deletable.
//! let mut f = DeletableBloomFilter::with_capacity(10_000, 0.01)?;
//! f.insert_batch(&(0..500u64).collect::<Vec<_>>());
//! let removed = f.remove_batch(&(0..250u64).collect::<Vec<_>>());
//! assert!(removed.removed > 150);
//! assert!((250..500u64).all(|k| f.contains(&k))); // no false negatives
//! assert_eq!(f.remove(&1_000_000u64), Err(Error::NotPresent));
//! # Ok::<(), blockbloom::Error>(())
//! ```

use alloc::vec::Vec;

mod codec;
mod model;

use crate::error::Error;
use crate::filter::BatchKey;
use crate::filter::BloomFilter;
use crate::kernel::{BlockOp, Keys, Probes, Sink, Takes};
use crate::key::Key;
use crate::layout::{BLOCK_BITS, Block, block_index};

pub use model::{blocked_deletability, unblocked_deletability};

/// Region sizes a filter accepts: powers of two from one byte to one block.
const MIN_REGION_SHIFT: u32 = 3;
const MAX_REGION_SHIFT: u32 = 9;
/// Default region: one 64-bit word, so the bitmap is 1/64 (1.6%) of the filter.
pub const DEFAULT_REGION_BITS: u32 = 64;
/// Hashes computed per step of a batch (on the stack).
const CHUNK: usize = 256;

/// A Bloom filter whose keys can be removed when they have a bit in a collision-free region:
/// see the [module docs](self).
///
/// Queries, batch queries and their SIMD kernels are the plain filter's, unchanged
/// ([`filter`](Self::filter) borrows it). Inserts run one key at a time (batches are hashed in
/// SIMD lanes), because each key checks which of its bits are already set before setting them.
///
/// Removing a key that was never inserted but is a false positive cannot be detected and may
/// clear bits of keys that were inserted, which then become false negatives (the paper's
/// caveat): remove only keys you inserted. Inserting a key twice marks its regions (its probes
/// meet its own bits), so such a key is never deletable afterwards, which is safe.
///
/// ```
/// use blockbloom::{DeletableBloomFilter, Error};
///
/// let mut f = DeletableBloomFilter::with_capacity(1000, 0.01)?;
/// f.insert(&"session-17");
/// assert!(f.contains(&"session-17") && f.is_deletable(&"session-17"));
/// f.remove(&"session-17")?;
/// assert!(!f.contains(&"session-17"));
/// assert_eq!(f.remove(&"session-17"), Err(Error::NotPresent));
/// # Ok::<(), blockbloom::Error>(())
/// ```
///
/// `Send` and `Sync`: share it across threads for queries; inserts and removals take `&mut self`.
#[derive(Clone, PartialEq, Eq)]
pub struct DeletableBloomFilter {
    filter: BloomFilter,
    /// One bit per region, set when two probes met in the region.
    collided: Vec<u64>,
    /// log2 of the region size in bits.
    region_shift: u32,
}

/// What [`DeletableBloomFilter::remove_batch`] did with a batch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RemoveCounts {
    /// Keys removed.
    pub removed: usize,
    /// Keys that were not in the filter ([`Error::NotPresent`]).
    pub not_present: usize,
    /// Keys in the filter that had no bit in a collision-free region ([`Error::NotDeletable`]).
    pub not_deletable: usize,
}

impl DeletableBloomFilter {
    /// An empty filter for `capacity` keys at false-positive rate `fpr` (sized by the plain
    /// filter's planner), with one-word regions ([`DEFAULT_REGION_BITS`]).
    ///
    /// ```
    /// let f = blockbloom::DeletableBloomFilter::with_capacity(1_000_000, 0.01)?;
    /// assert_eq!(f.region_bits(), 64);
    /// let extra = f.size_in_bytes() as f64 / f.filter().size_in_bytes() as f64 - 1.0;
    /// assert!(extra > 0.015 && extra < 0.016); // the bitmap: 1/64 of the filter
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`BloomFilter::with_capacity`].
    pub fn with_capacity(capacity: u64, fpr: f64) -> Result<DeletableBloomFilter, Error> {
        // The layout of least memory: the deletability model is exact there (in 8x32 it
        // approximates 512-bit regions, which span both halves of a block).
        let plain = BloomFilter::builder()
            .capacity(capacity)
            .fpr(fpr)
            .least_memory()
            .build()?;
        DeletableBloomFilter::from_filter(plain, DEFAULT_REGION_BITS)
    }

    /// Wraps a plain filter (built with any [`Builder`](crate::Builder) options) with regions of
    /// `region_bits` bits. Bits already set in `filter` have unknown owners, so every region
    /// holding one starts out collided: keys inserted before the wrap are never deletable.
    ///
    /// Smaller regions make more keys deletable for a larger bitmap (`1 / region_bits` of the
    /// filter): `blockbloom-perf family` measures the trade.
    ///
    /// ```
    /// use blockbloom::{BloomFilter, DeletableBloomFilter};
    ///
    /// let plain = BloomFilter::builder().capacity(10_000).fpr(0.001).seed(3).build()?;
    /// let f = DeletableBloomFilter::from_filter(plain, 8)?; // byte regions: 1/8 more memory
    /// assert_eq!((f.region_bits(), f.filter().seed()), (8, 3));
    /// assert!(DeletableBloomFilter::from_filter(f.into_filter(), 12).is_err());
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] unless `region_bits` is a power of two in `8..=512`;
    /// [`Error::AllocationFailed`] if the bitmap cannot be allocated.
    pub fn from_filter(
        filter: BloomFilter,
        region_bits: u32,
    ) -> Result<DeletableBloomFilter, Error> {
        let shift = region_bits.trailing_zeros();
        if !region_bits.is_power_of_two() || !(MIN_REGION_SHIFT..=MAX_REGION_SHIFT).contains(&shift)
        {
            return Err(Error::InvalidParameter {
                name: "region size in bits",
                value: region_bits as f64,
                expected: "a power of two from 8 to 512",
            });
        }
        let regions = num_regions(filter.num_blocks(), shift);
        let mut collided = Vec::new();
        collided
            .try_reserve_exact(regions.div_ceil(64) as usize)
            .map_err(|_| Error::AllocationFailed {
                bytes: regions.div_ceil(64) as u128 * 8,
            })?;
        collided.resize(regions.div_ceil(64) as usize, 0);
        let mut f = DeletableBloomFilter {
            filter,
            collided,
            region_shift: shift,
        };
        for i in 0..f.filter.blocks().len() {
            let block = f.filter.blocks()[i];
            for (w, &word) in block.0.iter().enumerate() {
                let mut bits = word;
                while bits != 0 {
                    let b = bits.trailing_zeros();
                    f.mark(region_of(i, w, b, shift));
                    bits &= bits - 1;
                }
            }
        }
        Ok(f)
    }

    /// Inserts any [`Key`] (hashed as [`BloomFilter::insert`] hashes it).
    ///
    /// ```
    /// let mut f = blockbloom::DeletableBloomFilter::with_capacity(100, 0.01)?;
    /// f.insert(&7u64);
    /// assert!(f.contains(&7u64));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn insert<K: Key + ?Sized>(&mut self, key: &K) {
        self.insert_hash(self.filter.hash(key))
    }

    /// Inserts a raw byte string, hashed exactly.
    ///
    /// ```
    /// let mut f = blockbloom::DeletableBloomFilter::with_capacity(100, 0.01)?;
    /// f.insert_bytes(b"10.0.0.1");
    /// assert!(f.contains_bytes(b"10.0.0.1"));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn insert_bytes(&mut self, bytes: &[u8]) {
        self.insert_hash(self.filter.hash(bytes))
    }

    /// Inserts a pre-computed hash ([`BloomFilter::hash`] of the inner filter).
    ///
    /// ```
    /// let mut f = blockbloom::DeletableBloomFilter::with_capacity(100, 0.01)?;
    /// let h = f.filter().hash(&"k");
    /// f.insert_hash(h);
    /// assert!(f.contains(&"k"));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn insert_hash(&mut self, hash: u64) {
        let meta = self.filter.meta();
        let i = block_index(hash, meta.shape.num_blocks);
        let pattern = meta.one.pattern(hash as u32);
        place(
            &mut self.filter.blocks_mut()[i],
            &mut self.collided,
            i,
            self.region_shift,
            &pattern,
        );
    }

    /// Inserts a batch of integer keys, hashed in SIMD lanes; the same bits and marks as
    /// inserting them one by one.
    ///
    /// ```
    /// let mut f = blockbloom::DeletableBloomFilter::with_capacity(1000, 0.01)?;
    /// f.insert_batch(&[1u32, 2, 3]);
    /// assert_eq!(f.count_batch(&[1u32, 2, 3]), 3);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn insert_batch<K: BatchKey>(&mut self, keys: &[K]) {
        self.insert_keys(K::as_keys(keys).0)
    }

    // Not generic: compiled once, here (see `Kernel::blocks`).
    fn insert_keys(&mut self, keys: Keys<'_>) {
        let meta = *self.filter.meta();
        let op = Place::new(
            self.filter.blocks_mut(),
            &mut self.collided,
            self.region_shift,
        );
        meta.kernel.blocks(&meta.shape, keys, op, Sink::Discard);
    }

    /// Whether the key may be in the filter (no false negatives for inserted keys that were
    /// not removed).
    ///
    /// ```
    /// let mut f = blockbloom::DeletableBloomFilter::with_capacity(100, 0.01)?;
    /// f.insert(&1u8);
    /// assert!(f.contains(&1u8));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    #[inline]
    pub fn contains<K: Key + ?Sized>(&self, key: &K) -> bool {
        self.filter.contains(key)
    }

    /// Whether a raw byte string may be in the filter.
    ///
    /// ```
    /// let f = blockbloom::DeletableBloomFilter::with_capacity(100, 0.01)?;
    /// assert!(!f.contains_bytes(b"x"));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    #[inline]
    pub fn contains_bytes(&self, bytes: &[u8]) -> bool {
        self.filter.contains_bytes(bytes)
    }

    /// Whether a pre-computed hash may be in the filter.
    ///
    /// ```
    /// let mut f = blockbloom::DeletableBloomFilter::with_capacity(100, 0.01)?;
    /// f.insert_hash(12345);
    /// assert!(f.contains_hash(12345));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    #[inline]
    pub fn contains_hash(&self, hash: u64) -> bool {
        self.filter.contains_hash(hash)
    }

    /// Answers a batch of integer keys into `out`, on the plain filter's SIMD kernels.
    ///
    /// # Panics
    /// If `out.len() != keys.len()`.
    ///
    /// ```
    /// let mut f = blockbloom::DeletableBloomFilter::with_capacity(100, 0.01)?;
    /// f.insert_batch(&[1u64, 2]);
    /// let mut out = [false; 2];
    /// f.contains_batch(&[1u64, 2], &mut out);
    /// assert_eq!(out, [true, true]);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn contains_batch<K: BatchKey>(&self, keys: &[K], out: &mut [bool]) {
        self.filter.contains_batch(keys, out)
    }

    /// How many keys of the batch may be in the filter, on the SIMD kernels.
    ///
    /// ```
    /// let mut f = blockbloom::DeletableBloomFilter::with_capacity(100, 0.01)?;
    /// f.insert_batch(&[5i64, 6]);
    /// assert_eq!(f.count_batch(&[5i64, 6]), 2);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn count_batch<K: BatchKey>(&self, keys: &[K]) -> usize {
        self.filter.count_batch(keys)
    }

    /// Removes a key: clears its bits that lie in collision-free regions.
    ///
    /// Only remove keys that were inserted: a false positive that is "removed" may take bits
    /// from keys that were (see the [type docs](Self)).
    ///
    /// ```
    /// use blockbloom::{DeletableBloomFilter, Error};
    ///
    /// let mut f = DeletableBloomFilter::with_capacity(1000, 0.01)?;
    /// f.insert(&42u64);
    /// assert_eq!(f.remove(&42u64), Ok(()));
    /// assert!(!f.contains(&42u64));
    /// assert_eq!(f.remove(&42u64), Err(Error::NotPresent));
    /// f.insert(&43u64);
    /// f.insert(&43u64); // a second insert collides with the first
    /// assert_eq!(f.remove(&43u64), Err(Error::NotDeletable));
    /// assert!(f.contains(&43u64));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::NotPresent`] if the filter does not contain the key;
    /// [`Error::NotDeletable`] if every bit of the key is in a collided region. Either way
    /// nothing changes.
    pub fn remove<K: Key + ?Sized>(&mut self, key: &K) -> Result<(), Error> {
        self.remove_hash(self.filter.hash(key))
    }

    /// Removes a raw byte string inserted with [`insert_bytes`](Self::insert_bytes).
    ///
    /// ```
    /// let mut f = blockbloom::DeletableBloomFilter::with_capacity(100, 0.01)?;
    /// f.insert_bytes(b"k");
    /// f.remove_bytes(b"k")?;
    /// assert!(!f.contains_bytes(b"k"));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`remove`](Self::remove).
    pub fn remove_bytes(&mut self, bytes: &[u8]) -> Result<(), Error> {
        self.remove_hash(self.filter.hash(bytes))
    }

    /// Removes a pre-computed hash.
    ///
    /// ```
    /// let mut f = blockbloom::DeletableBloomFilter::with_capacity(100, 0.01)?;
    /// f.insert_hash(99);
    /// f.remove_hash(99)?;
    /// assert!(!f.contains_hash(99));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`remove`](Self::remove).
    pub fn remove_hash(&mut self, hash: u64) -> Result<(), Error> {
        let (i, pattern) = self.locate(hash);
        let block = &self.filter.blocks()[i];
        if !block.0.iter().zip(&pattern.0).all(|(&w, &p)| w & p == p) {
            return Err(Error::NotPresent);
        }
        let clear = self.clearable(i, &pattern);
        if clear == Block::ZERO {
            return Err(Error::NotDeletable);
        }
        let block = &mut self.filter.blocks_mut()[i];
        for (word, c) in block.0.iter_mut().zip(clear.0) {
            *word &= !c;
        }
        Ok(())
    }

    /// Removes a batch of integer keys (hashed in SIMD lanes), one at a time in order, and
    /// counts the outcomes; keys that cannot be removed are left as they are.
    ///
    /// ```
    /// let mut f = blockbloom::DeletableBloomFilter::with_capacity(1000, 0.01)?;
    /// f.insert_batch(&[1u64, 2, 3]);
    /// let r = f.remove_batch(&[1u64, 2, 3, 1]);
    /// assert_eq!((r.removed, r.not_present + r.not_deletable), (3, 1));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn remove_batch<K: BatchKey>(&mut self, keys: &[K]) -> RemoveCounts {
        let mut counts = RemoveCounts::default();
        let mut hashes = [0u64; CHUNK];
        for chunk in keys.chunks(CHUNK) {
            let h = &mut hashes[..chunk.len()];
            let meta = self.filter.meta();
            meta.kernel.hash_keys(
                meta.shape.flip,
                K::as_keys(chunk).0.under(meta.shape.hash),
                0,
                h,
            );
            for (j, &x) in h.iter().enumerate() {
                self.prefetch_ahead(h, j);
                match self.remove_hash(x) {
                    Ok(()) => counts.removed += 1,
                    Err(Error::NotPresent) => counts.not_present += 1,
                    Err(_) => counts.not_deletable += 1,
                }
            }
        }
        counts
    }

    /// Whether [`remove`](Self::remove) would succeed: the key is in the filter and has a bit
    /// in a collision-free region. Changes nothing.
    ///
    /// ```
    /// let mut f = blockbloom::DeletableBloomFilter::with_capacity(100, 0.01)?;
    /// assert!(!f.is_deletable(&1u64));
    /// f.insert(&1u64);
    /// assert!(f.is_deletable(&1u64));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn is_deletable<K: Key + ?Sized>(&self, key: &K) -> bool {
        self.is_deletable_hash(self.filter.hash(key))
    }

    /// [`is_deletable`](Self::is_deletable) for a pre-computed hash.
    ///
    /// ```
    /// let mut f = blockbloom::DeletableBloomFilter::with_capacity(100, 0.01)?;
    /// f.insert_hash(5);
    /// assert!(f.is_deletable_hash(5));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn is_deletable_hash(&self, hash: u64) -> bool {
        let (i, pattern) = self.locate(hash);
        let block = &self.filter.blocks()[i];
        block.0.iter().zip(&pattern.0).all(|(&w, &p)| w & p == p)
            && self.clearable(i, &pattern) != Block::ZERO
    }

    /// The hash's block and bit pattern.
    #[inline(always)]
    fn locate(&self, hash: u64) -> (usize, Block) {
        let meta = self.filter.meta();
        (
            block_index(hash, meta.shape.num_blocks),
            meta.one.pattern(hash as u32),
        )
    }

    /// The bits of `pattern` (in block `i`) that lie in collision-free regions.
    fn clearable(&self, i: usize, pattern: &Block) -> Block {
        let shift = self.region_shift;
        let first = region_of(i, 0, 0, shift);
        let marks = self.collided[(first >> 6) as usize] >> (first & 63);
        let mut clear = Block::ZERO;
        for (w, (c, &p)) in clear.0.iter_mut().zip(&pattern.0).enumerate() {
            // The bits of word `w` that lie in collision-free regions.
            let free = if shift >= 6 {
                ((marks >> (w >> (shift - 6))) & 1).wrapping_sub(1)
            } else {
                let group = (1u64 << (1 << shift)) - 1;
                let per_word = 64 >> shift;
                let m = marks >> (w * per_word);
                let mut free = 0;
                for j in 0..per_word {
                    free |= ((m >> j) & 1).wrapping_sub(1) & (group << (j << shift));
                }
                free
            };
            *c = p & free;
        }
        clear
    }

    /// Asks for the block of the hash a few keys ahead of `j`, so one key's miss overlaps the
    /// next keys' work. Done even for filters the engine takes as cache-resident: the batch
    /// kernels overlap their misses by themselves, a key-at-a-time loop does not (measured with
    /// `blockbloom-perf family`).
    #[inline(always)]
    fn prefetch_ahead(&self, hashes: &[u64], j: usize) {
        const AHEAD: usize = 16;
        let n = self.filter.meta().shape.num_blocks;
        let ahead = if j == 0 {
            0..AHEAD
        } else {
            j + AHEAD - 1..j + AHEAD
        };
        for &h in hashes
            .get(ahead.start..ahead.end.min(hashes.len()))
            .unwrap_or(&[])
        {
            crate::kernel::prefetch(&self.filter.blocks()[block_index(h, n)] as *const Block);
        }
    }

    fn mark(&mut self, region: u64) {
        self.collided[(region >> 6) as usize] |= 1 << (region & 63);
    }

    /// Empties the filter and the collision bitmap, keeping shape, seed and regions.
    ///
    /// ```
    /// let mut f = blockbloom::DeletableBloomFilter::with_capacity(100, 0.01)?;
    /// f.insert(&1u64);
    /// f.insert(&1u64);
    /// f.clear();
    /// assert_eq!((f.collided_regions(), f.filter().fill_ratio()), (0, 0.0));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn clear(&mut self) {
        self.filter.clear();
        self.collided.fill(0);
    }

    /// The plain filter inside: every query method of [`BloomFilter`] works on it.
    ///
    /// ```
    /// let mut f = blockbloom::DeletableBloomFilter::with_capacity(100, 0.01)?;
    /// f.insert(&1u64);
    /// assert!(f.filter().contains(&1u64) && f.filter().probes() >= 8);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn filter(&self) -> &BloomFilter {
        &self.filter
    }

    /// The plain filter, dropping the collision bitmap.
    ///
    /// ```
    /// let mut f = blockbloom::DeletableBloomFilter::with_capacity(100, 0.01)?;
    /// f.insert(&1u64);
    /// assert!(f.into_filter().contains(&1u64));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn into_filter(self) -> BloomFilter {
        self.filter
    }

    /// Bits per region.
    ///
    /// ```
    /// let f = blockbloom::DeletableBloomFilter::with_capacity(100, 0.01)?;
    /// assert_eq!(f.region_bits(), blockbloom::deletable::DEFAULT_REGION_BITS);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn region_bits(&self) -> u32 {
        1 << self.region_shift
    }

    /// Regions (bits of the collision bitmap).
    ///
    /// ```
    /// let f = blockbloom::DeletableBloomFilter::with_capacity(100, 0.01)?;
    /// assert_eq!(f.num_regions(), f.filter().num_blocks() * 8); // one per 64-bit word
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn num_regions(&self) -> u64 {
        num_regions(self.filter.num_blocks(), self.region_shift)
    }

    /// Regions marked as collided.
    ///
    /// ```
    /// let mut f = blockbloom::DeletableBloomFilter::with_capacity(100, 0.01)?;
    /// f.insert(&"a");
    /// assert_eq!(f.collided_regions(), 0);
    /// f.insert(&"a");
    /// assert!(f.collided_regions() > 0);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn collided_regions(&self) -> u64 {
        self.collided.iter().map(|w| w.count_ones() as u64).sum()
    }

    /// Bytes of filter plus collision bitmap.
    ///
    /// ```
    /// let f = blockbloom::DeletableBloomFilter::with_capacity(10_000, 0.01)?;
    /// assert!(f.size_in_bytes() > f.filter().size_in_bytes());
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn size_in_bytes(&self) -> usize {
        self.filter.size_in_bytes() + self.collided.len() * 8
    }

    /// The modelled probability that a key is deletable once `keys` distinct keys were
    /// inserted into this (otherwise empty) filter: [`blocked_deletability`] of its shape.
    ///
    /// ```
    /// let f = blockbloom::DeletableBloomFilter::with_capacity(10_000, 0.01)?;
    /// assert!(f.expected_deletability(100) > 0.99);
    /// assert!(f.expected_deletability(10_000) < 0.01); // a full filter's words are crowded
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn expected_deletability(&self, keys: u64) -> f64 {
        blocked_deletability(
            keys,
            self.filter.num_blocks(),
            self.filter.layout(),
            self.filter.probes(),
            self.region_bits(),
        )
    }
}

impl core::fmt::Debug for DeletableBloomFilter {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("DeletableBloomFilter")
            .field("filter", &self.filter)
            .field("region_bits", &self.region_bits())
            .field("collided_regions", &self.collided_regions())
            .finish_non_exhaustive()
    }
}

fn num_regions(num_blocks: u64, shift: u32) -> u64 {
    (num_blocks * BLOCK_BITS as u64) >> shift
}

/// Sets each key's probes and marks the regions where they collide (the batch form of
/// [`place`]).
struct Place<'a> {
    blocks: &'a mut [Block],
    collided: &'a mut [u64],
    region_shift: u32,
}

impl<'a> Place<'a> {
    /// # Panics
    /// If `collided` does not cover every region of `blocks` (regions of `2^region_shift`
    /// bits).
    fn new(blocks: &'a mut [Block], collided: &'a mut [u64], region_shift: u32) -> Place<'a> {
        assert!(
            (region_shift as usize) < 64
                && (collided.len() as u128 * 64) << region_shift >= blocks.len() as u128 * 512,
            "the collision bitmap does not cover the filter"
        );
        Place {
            blocks,
            collided,
            region_shift,
        }
    }
}

impl BlockOp for Place<'_> {
    const TAKES: Takes = Takes::Discard;

    fn num_blocks(&self) -> usize {
        self.blocks.len()
    }

    fn base(&self) -> *const Block {
        self.blocks.as_ptr()
    }

    #[inline(always)]
    unsafe fn apply<P: Probes>(&mut self, i: usize, p: P) -> bool {
        // SAFETY: the caller guarantees `i < num_blocks()`.
        let block = unsafe { self.blocks.get_unchecked_mut(i) };
        place(block, self.collided, i, self.region_shift, &p.pattern());
        false
    }
}

/// Sets `pattern` in block `i` and marks, in the collision bitmap, every region where one of
/// its bits was already set. Branch-free (whether a bit was already set is a coin flip in a
/// half-full filter), and one bitmap update per key: a block's regions are adjacent bits of
/// one bitmap word. The single-key insert and every kernel tier's batch insert run this.
#[inline(always)]
pub(crate) fn place(
    block: &mut Block,
    collided: &mut [u64],
    i: usize,
    shift: u32,
    pattern: &Block,
) {
    let mut marks = 0u64;
    for (w, (word, &p)) in block.0.iter_mut().zip(&pattern.0).enumerate() {
        let overlap = *word & p;
        *word |= p;
        marks |= if shift >= 6 {
            ((overlap != 0) as u64) << (w >> (shift - 6))
        } else {
            let group = (1u64 << (1 << shift)) - 1;
            let mut m = 0;
            for j in 0..(64 >> shift) {
                m |= (((overlap >> (j << shift)) & group != 0) as u64) << j;
            }
            m << (w * (64 >> shift))
        };
    }
    let first = region_of(i, 0, 0, shift);
    collided[(first >> 6) as usize] |= marks << (first & 63);
}

/// The region of bit `b` of word `w` of block `i`.
#[inline(always)]
fn region_of(i: usize, w: usize, b: u32, shift: u32) -> u64 {
    ((i as u64) * BLOCK_BITS as u64 + w as u64 * 64 + b as u64) >> shift
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::probe;

    /// The branch-free marking equals marking the region of every already-set bit.
    #[test]
    fn insert_marks_the_regions_of_overlapping_bits() {
        for fpr in [0.01, 0.0001] {
            for shift in MIN_REGION_SHIFT..=MAX_REGION_SHIFT {
                let plain = BloomFilter::with_capacity(300, fpr).unwrap();
                let mut f = DeletableBloomFilter::from_filter(plain, 1 << shift).unwrap();
                let mut reference = f.collided.clone();
                let mut h = 0x0123_4567_89ab_cdefu64;
                for _ in 0..600 {
                    h = crate::hashing::hash_u64(h, 1);
                    let shape = f.filter.meta().shape;
                    let i = block_index(h, shape.num_blocks);
                    let p = crate::layout::pattern_scalar(shape.layout, h as u32, shape.probes());
                    for w in 0..8 {
                        let mut overlap = f.filter.blocks()[i].0[w] & p.0[w];
                        while overlap != 0 {
                            let r = region_of(i, w, overlap.trailing_zeros(), shift);
                            reference[(r >> 6) as usize] |= 1 << (r & 63);
                            overlap &= overlap - 1;
                        }
                    }
                    f.insert_hash(h);
                    assert_eq!(f.collided, reference, "fpr {fpr}, shift {shift}");
                    // The clearable bits: every probe whose region is unmarked.
                    let mut clear = Block::ZERO;
                    for j in 0..shape.probes() {
                        let (w, b) = probe(shape.layout, h as u32, j);
                        let r = region_of(i, w, b, shift);
                        if reference[(r >> 6) as usize] >> (r & 63) & 1 == 0 {
                            clear.0[w] |= 1 << b;
                        }
                    }
                    assert_eq!(f.clearable(i, &p), clear, "fpr {fpr}, shift {shift}");
                }
                assert!(f.collided_regions() > 0);
            }
        }
    }
}
