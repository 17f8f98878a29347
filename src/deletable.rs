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

use std::hash::Hash;
use std::io::{Read, Write};

use crate::envelope::Envelope;
use crate::filter::BatchKey;
use crate::format::{HEADER_BYTES, kind};
use crate::hashing::{hash_bytes, hash_key};
use crate::kernel::{BlockOp, Probes, Sink};
use crate::layout::{BLOCK_BITS, Block, Layout, MAX_BLOCKS, block_index, pattern_scalar};
use crate::{BloomFilter, Error};

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
        DeletableBloomFilter::from_filter(
            BloomFilter::with_capacity(capacity, fpr)?,
            DEFAULT_REGION_BITS,
        )
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

    /// Inserts any hashable key (hashed as [`BloomFilter::insert`] hashes it).
    ///
    /// ```
    /// let mut f = blockbloom::DeletableBloomFilter::with_capacity(100, 0.01)?;
    /// f.insert(&7u64);
    /// assert!(f.contains(&7u64));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn insert<K: Hash + ?Sized>(&mut self, key: &K) {
        self.insert_hash(hash_key(key, self.filter.seed()))
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
        self.insert_hash(hash_bytes(bytes, self.filter.seed()))
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
        let shape = self.filter.meta().shape;
        let i = block_index(hash, shape.num_blocks);
        let pattern = pattern_scalar(shape.layout, hash as u32, shape.probes());
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
        let meta = *self.filter.meta();
        let op = Place::new(
            self.filter.blocks_mut(),
            &mut self.collided,
            self.region_shift,
        );
        meta.kernel
            .blocks(&meta.shape, K::as_keys(keys).0, op, Sink::Discard);
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
    pub fn contains<K: Hash + ?Sized>(&self, key: &K) -> bool {
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
    pub fn remove<K: Hash + ?Sized>(&mut self, key: &K) -> Result<(), Error> {
        self.remove_hash(hash_key(key, self.filter.seed()))
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
        self.remove_hash(hash_bytes(bytes, self.filter.seed()))
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
            meta.kernel
                .hash_keys(meta.shape.flip, K::as_keys(chunk).0, 0, h);
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
    pub fn is_deletable<K: Hash + ?Sized>(&self, key: &K) -> bool {
        self.is_deletable_hash(hash_key(key, self.filter.seed()))
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
        let shape = &self.filter.meta().shape;
        (
            block_index(hash, shape.num_blocks),
            pattern_scalar(shape.layout, hash as u32, shape.probes()),
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

impl std::fmt::Debug for DeletableBloomFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
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

/// `(W)_t / W^t`: the probability that `t` uniform probes into `W` bits hit `t` distinct bits.
fn all_distinct(w: f64, t: u64) -> f64 {
    let mut p = 1.0;
    for i in 0..t {
        if i as f64 >= w {
            return 0.0;
        }
        p *= 1.0 - i as f64 / w;
    }
    p
}

/// The probability that a key is deletable, for the blocked layout, once `keys` distinct keys
/// were inserted into an empty filter of `num_blocks` blocks with `probes` probes per key in
/// `layout` and regions of `region_bits` bits.
///
/// Derivation. A key `x` shares its block with `c - 1` others, `c - 1 ~ Binomial(keys - 1,
/// 1 / num_blocks)`. Each of the block's `S` sectors of `W` bits then holds `t = b c` uniform
/// probes (`b = probes / S`), independently of the other sectors, and `x` is deletable when
/// one of its probes lies in a region where no two probes met:
///
/// * regions of `g >= W` bits hold `g / W` whole sectors, collision-free with probability
///   `q = ((W)_t / W^t)^(g/W)`, and `x` touches `S W / g` of them:
///   `D(c) = 1 - (1 - q)^(S W / g)` (exact);
/// * regions of `g < W` bits: the region of one of `x`'s probes receives `u ~ Binomial(t - 1,
///   g / W)` of the sector's other probes and is collision-free with probability
///   `prod_{i=1..u} (1 - i/g)`; with `phi` that probability's mean,
///   `D(c) = 1 - (1 - phi)^probes` (exact for one probe per sector, as the 8x64 layout at
///   `k = 8`; for more it treats a key's probes in one sector as independent).
///
/// The result is the binomial mean of `D(c)`. The model counts two probes of the same key on
/// one bit as a collision; the filter does not (such a bit is still one key's), so with more
/// than one probe per sector the model is slightly pessimistic.
///
/// ```
/// use blockbloom::{deletable::blocked_deletability, layout::Layout};
///
/// // 1000 blocks, 8 probes, one-word regions: deletable while blocks are nearly empty.
/// let light = blocked_deletability(1_000, 1000, Layout::Sectors8x64, 8, 64);
/// let full = blocked_deletability(50_000, 1000, Layout::Sectors8x64, 8, 64);
/// assert!(light > 0.99 && full < 0.001);
/// assert!(blocked_deletability(50_000, 1000, Layout::Sectors8x64, 8, 8) > 0.2);
/// ```
pub fn blocked_deletability(
    keys: u64,
    num_blocks: u64,
    layout: Layout,
    probes: u32,
    region_bits: u32,
) -> f64 {
    if keys == 0 || num_blocks == 0 {
        return 0.0;
    }
    let sectors = layout.sectors() as u64;
    let w = layout.sector_bits() as f64;
    let b = (probes as u64 / sectors).max(1);
    let g = region_bits as f64;
    let given_load = |c: u64| -> f64 {
        let t = b * c;
        if g >= w {
            let per_region = (g / w) as i32;
            let q = all_distinct(w, t).powi(per_region);
            let touched = (sectors as f64 * w / g).max(1.0) as i32;
            1.0 - (1.0 - q).powi(touched)
        } else {
            // Mean over u ~ Binomial(t - 1, g / W) of prod_{i=1..u} (1 - i/g).
            let others = t - 1;
            let p = g / w;
            let mut phi = 0.0;
            let mut free = 1.0; // prod_{i=1..u} (1 - i/g)
            for u in 0..=others.min(g as u64) {
                if u > 0 {
                    free *= 1.0 - u as f64 / g;
                }
                phi += binomial_pmf(others, u, p) * free;
            }
            1.0 - (1.0 - phi).powi(probes as i32)
        }
    };
    // Mean over the load of x's block: c - 1 ~ Binomial(keys - 1, 1 / num_blocks).
    let others = keys - 1;
    let p = 1.0 / num_blocks as f64;
    let mean = others as f64 * p;
    let top = (mean + 12.0 * mean.sqrt() + 30.0).min(others as f64) as u64;
    let mut total = 0.0;
    let mut weight = 0.0;
    for j in 0..=top {
        let pmf = binomial_pmf(others, j, p);
        if pmf == 0.0 && (j as f64) < mean {
            continue;
        }
        total += pmf * given_load(j + 1);
        weight += pmf;
    }
    if weight > 0.0 { total / weight } else { 0.0 }
}

/// `P[X = j]` for `X ~ Binomial(n, p)`, computed in the log domain (no underflow for large
/// `n`).
fn binomial_pmf(n: u64, j: u64, p: f64) -> f64 {
    if j > n {
        return 0.0;
    }
    if p >= 1.0 {
        return if j == n { 1.0 } else { 0.0 };
    }
    let (n, j) = (n as f64, j as f64);
    let ln_choose = ln_gamma(n + 1.0) - ln_gamma(j + 1.0) - ln_gamma(n - j + 1.0);
    (ln_choose + j * p.ln() + (n - j) * (-p).ln_1p()).exp()
}

/// `ln Γ(x)` for `x >= 1` (Lanczos, g = 7, nine terms; relative error below 1e-13).
fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + G + 0.5;
    for (i, &c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// The probability that a key is deletable under the paper's unblocked assumptions: `keys`
/// keys with `probes` uniform probes each over all `bits` bits, regions of `region_bits` bits,
/// bits treated as independent. (Derived here under those assumptions, conditioning on the
/// key's own bit; not transcribed from the paper.)
///
/// A region holding one of `x`'s bits is collision-free when that bit receives none of the
/// other `probes * keys - 1` probes and each other bit of the region at most one:
/// `P_cf = p0 * (p0 + p1)^(g - 1)` with `p0 = (1 - 1/m)^(kn - 1)` and
/// `p1 = (kn - 1)/m (1 - 1/m)^(kn - 2)`; `x` is deletable when one of its `k` regions is:
/// `1 - (1 - P_cf)^k`.
///
/// ```
/// use blockbloom::deletable::unblocked_deletability;
/// let m = 1_000_000.0;
/// assert!(unblocked_deletability(m, 8, 1_000, 64) > 0.99);
/// assert!(unblocked_deletability(m, 8, 100_000, 64) < 0.01);
/// ```
pub fn unblocked_deletability(bits: f64, probes: u32, keys: u64, region_bits: u32) -> f64 {
    if keys == 0 || bits <= 0.0 {
        return 0.0;
    }
    let others = (probes as f64 * keys as f64 - 1.0).max(0.0);
    let miss = (-1.0 / bits).ln_1p(); // ln(1 - 1/m)
    let p0 = (others * miss).exp();
    let p1 = if others >= 1.0 {
        others / bits * ((others - 1.0) * miss).exp()
    } else {
        0.0
    };
    let cf = p0 * (p0 + p1).min(1.0).powf(region_bits as f64 - 1.0);
    1.0 - (1.0 - cf).powi(probes as i32)
}

impl DeletableBloomFilter {
    /// Bytes of this filter's encoding.
    ///
    /// ```
    /// let f = blockbloom::DeletableBloomFilter::with_capacity(1000, 0.01)?;
    /// assert_eq!(f.to_bytes().len(), f.encoded_len());
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn encoded_len(&self) -> usize {
        HEADER_BYTES + self.filter.encoded_len() + self.collided.len() * 8
    }

    fn envelope(&self) -> Envelope {
        Envelope {
            kind: kind::DELETABLE,
            param: self.region_shift as u8,
            seed: self.filter.seed(),
            fields: [self.num_regions(), self.collided_regions(), 0],
        }
    }

    fn body(&self) -> Vec<u8> {
        let mut body = Vec::with_capacity(self.encoded_len() - HEADER_BYTES);
        body.extend_from_slice(&self.filter.to_bytes());
        for w in &self.collided {
            body.extend_from_slice(&w.to_le_bytes());
        }
        body
    }

    /// The filter in the format family (layout id 17, `docs/FORMAT.md`): the envelope, the
    /// plain filter's own encoding (its blocks stay 64-byte aligned), then the bitmap.
    ///
    /// ```
    /// use blockbloom::DeletableBloomFilter;
    ///
    /// let mut f = DeletableBloomFilter::with_capacity(1000, 0.01)?;
    /// f.insert_batch(&[1u64, 2, 3]);
    /// let g = DeletableBloomFilter::from_bytes(&f.to_bytes())?;
    /// assert_eq!(f, g);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn to_bytes(&self) -> Vec<u8> {
        self.envelope().encode(&self.body())
    }

    /// Writes [`to_bytes`](Self::to_bytes) to `w`.
    ///
    /// ```
    /// let f = blockbloom::DeletableBloomFilter::with_capacity(100, 0.01)?;
    /// let mut out = Vec::new();
    /// f.write_to(&mut out)?;
    /// assert_eq!(out, f.to_bytes());
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::Io`] if `w` fails.
    pub fn write_to<W: Write>(&self, w: W) -> Result<(), Error> {
        self.envelope().write_to(&self.body(), w)
    }

    /// Decodes exactly one deletable filter from `bytes`.
    ///
    /// ```
    /// use blockbloom::{DeletableBloomFilter, BloomFilter};
    ///
    /// let plain = BloomFilter::with_capacity(100, 0.01)?.to_bytes();
    /// assert!(matches!(
    ///     DeletableBloomFilter::from_bytes(&plain),
    ///     Err(blockbloom::Error::WrongKind { .. })
    /// ));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    ///
    /// # Errors
    /// The envelope's errors (`BadMagic`, `WrongKind`, `Truncated`, `ChecksumMismatch`, ...),
    /// the inner plain filter's, and [`Error::InvalidHeader`] when the region size, the
    /// bitmap's length or its counts disagree. Never a panic.
    pub fn from_bytes(bytes: &[u8]) -> Result<DeletableBloomFilter, Error> {
        let (env, body) = Envelope::decode(bytes, kind::DELETABLE)?;
        DeletableBloomFilter::from_parts(env, body)
    }

    /// Reads exactly one deletable filter from `r` (which may hold more after it).
    ///
    /// ```
    /// let f = blockbloom::DeletableBloomFilter::with_capacity(100, 0.01)?;
    /// let g = blockbloom::DeletableBloomFilter::read_from(&f.to_bytes()[..])?;
    /// assert_eq!(f, g);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`from_bytes`](Self::from_bytes), plus [`Error::Io`].
    pub fn read_from<R: Read>(r: R) -> Result<DeletableBloomFilter, Error> {
        let (env, body) = Envelope::read_from(r, kind::DELETABLE)?;
        DeletableBloomFilter::from_parts(env, &body)
    }

    fn from_parts(env: Envelope, body: &[u8]) -> Result<DeletableBloomFilter, Error> {
        let shift = env.param as u32;
        if !(MIN_REGION_SHIFT..=MAX_REGION_SHIFT).contains(&shift) {
            return Err(Error::InvalidHeader(
                "deletable filter: region size is not 2^3..=2^9 bits",
            ));
        }
        if env.fields[2] != 0 {
            return Err(Error::InvalidHeader("deletable filter: reserved field"));
        }
        let Some(inner_head) = body.first_chunk::<HEADER_BYTES>() else {
            return Err(Error::InvalidHeader(
                "deletable filter: body shorter than a plain filter",
            ));
        };
        let num_blocks = u64::from_le_bytes(inner_head[24..32].try_into().expect("8 bytes"));
        if num_blocks == 0 || num_blocks > MAX_BLOCKS {
            return Err(Error::InvalidHeader(
                "deletable filter: block count outside 1..=2^32",
            ));
        }
        let inner_len = HEADER_BYTES as u128 + num_blocks as u128 * 64;
        let regions = num_regions(num_blocks, shift);
        let bitmap_len = regions.div_ceil(64) as u128 * 8;
        if inner_len + bitmap_len != body.len() as u128 {
            return Err(Error::InvalidHeader(
                "deletable filter: body length is not filter plus bitmap",
            ));
        }
        let (inner, bitmap) = body.split_at(inner_len as usize);
        let filter = BloomFilter::from_bytes(inner)?;
        if filter.seed() != env.seed {
            return Err(Error::InvalidHeader(
                "deletable filter: inner seed differs from the header's",
            ));
        }
        if env.fields[0] != regions {
            return Err(Error::InvalidHeader(
                "deletable filter: region count does not match the blocks",
            ));
        }
        let mut collided = Vec::new();
        collided
            .try_reserve_exact(bitmap.len() / 8)
            .map_err(|_| Error::AllocationFailed {
                bytes: bitmap.len() as u128,
            })?;
        collided.extend(
            bitmap
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes"))),
        );
        if !regions.is_multiple_of(64) && collided.last().is_some_and(|&w| w >> (regions % 64) != 0)
        {
            return Err(Error::InvalidHeader(
                "deletable filter: bitmap bits past the last region",
            ));
        }
        let f = DeletableBloomFilter {
            filter,
            collided,
            region_shift: shift,
        };
        if f.collided_regions() != env.fields[1] {
            return Err(Error::InvalidHeader(
                "deletable filter: collided-region count does not match the bitmap",
            ));
        }
        Ok(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::probe;

    #[test]
    fn ln_gamma_matches_factorials() {
        let mut fact = 1.0f64;
        for n in 1..30u32 {
            fact *= n as f64;
            let got = ln_gamma(n as f64 + 1.0);
            assert!((got - fact.ln()).abs() < 1e-10 * fact.ln().max(1.0), "{n}");
        }
    }

    #[test]
    fn binomial_pmf_sums_to_one() {
        for (n, p) in [(10u64, 0.3), (1_000_000, 1.0 / 20_000.0), (5, 0.5)] {
            let total: f64 = (0..=n.min(2000)).map(|j| binomial_pmf(n, j, p)).sum();
            assert!((total - 1.0).abs() < 1e-9, "{n} {p}: {total}");
        }
    }

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
                    let p = pattern_scalar(shape.layout, h as u32, shape.probes());
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

    #[test]
    fn model_limits() {
        // One key alone in its block: every region collision-free.
        assert!((blocked_deletability(1, 100, Layout::Sectors8x64, 8, 64) - 1.0).abs() < 1e-12);
        // Whole-block regions with 8 probes: a key alone in its block is deletable, and more
        // keys are only sometimes.
        let n = 200;
        let blocks = 100u64;
        let alone = (1.0 - 1.0 / blocks as f64).powi(n - 1);
        let d = blocked_deletability(n as u64, blocks, Layout::Sectors8x64, 8, 512);
        assert!(d > alone && d < 1.0, "{d} vs {alone}");
        // Smaller regions are never worse.
        let mut last = 0.0;
        for g in [512, 256, 128, 64, 32, 16, 8] {
            let d = blocked_deletability(20_000, 1000, Layout::Sectors8x64, 8, g);
            assert!(d >= last, "{g}: {d} < {last}");
            last = d;
        }
    }
}
