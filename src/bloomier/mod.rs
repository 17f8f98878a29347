//! [`BloomierFilter`]: a static map from keys to small values (Chazelle et al.'s Bloomier
//! filter), built as a 3-wise xor table with the segmented "binary fuse" layout (Graf and
//! Lemire, *Binary Fuse Filters: Fast and Smaller Than Xor Filters*, 2022).
//!
//! Every key hashes (the crate's seeded XXH3, [`crate::hash`]) to three slots, one in each of
//! three consecutive segments, and the table is solved so that the xor of a key's three slots
//! is `fingerprint(key) << value_bits | value`. A query xors three slots, compares the
//! fingerprint part (a mismatch means "absent") and returns the value part. A key that was not
//! in the map is reported absent with probability `1 - 2^-fingerprint_bits`; with
//! `fingerprint_bits = 0` the filter is a pure static function (any value for other keys).
//!
//! Each slot holds exactly `value_bits + fingerprint_bits` bits (packed across `u64` words), and
//! there are about 1.125 slots per key for large maps (more for small ones: the slot count
//! follows the paper's size factor `max(1.125, 0.875 + 0.25 ln(10^6) / ln n)`, and a segment
//! count is rounded up to whole segments).
//!
//! ```
//! use blockbloom::BloomierFilter;
//!
//! let flows: Vec<(u64, u64)> = (0..1000).map(|flow| (flow, flow % 7)).collect();
//! let labels = BloomierFilter::build(&flows, 3, 8)?; // 3-bit labels, 8-bit fingerprints
//! assert_eq!(labels.get(&42u64), Some(0));
//! assert_eq!(labels.get(&43u64), Some(1));
//! let absent = (1000..11_000u64).filter(|k| labels.get(k).is_none()).count();
//! assert!(absent > 9_900); // about 1 - 1/256 of non-keys
//! # Ok::<(), blockbloom::Error>(())
//! ```

mod codec;

use std::hash::Hash;

use crate::filter::BatchKey;
use crate::hashing::{hash_bytes, hash_key, seed_flip};
use crate::kernel::{CACHE_RESIDENT_BYTES, Kernel, Keys, prefetch};
use crate::{Error, Isa};

/// Seeds tried before a build gives up. A seed rarely fails (`few_seeds_fail` in
/// `tests/bloomier.rs` prints how often, per size, with `--nocapture`), so running out means
/// something is wrong.
pub const MAX_ATTEMPTS: u32 = 64;
/// The largest number of entries (indices are `u32` during the build).
pub const MAX_ENTRIES: u64 = u32::MAX as u64;

/// Keys hashed (and their slots prefetched) together by the batch lookups.
const CHUNK: usize = 64;
/// The step between the seeds of successive attempts (odd, so no seed repeats).
const SEED_STEP: u64 = 0x9e37_79b9_7f4a_7c15;
/// An odd multiplier whose product's top bits make the fingerprint: they depend on every bit
/// of the hash, not only on those that pick the slots.
const FINGERPRINT_MUL: u64 = 0xd6e8_feb8_6659_fd93;
/// Segment lengths are powers of two in `2^MIN_SEGMENT_LOG2..=2^MAX_SEGMENT_LOG2`: the third
/// slot's offset comes from the hash's low 18 bits and the second's from bits 18..36.
const MIN_SEGMENT_LOG2: u32 = 2;
const MAX_SEGMENT_LOG2: u32 = 18;

/// Where a key's slots may fall: `segments + 2` segments of `2^segment_log2` slots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Geometry {
    segment_log2: u32,
    segments: u64,
    /// `segments * segment length`: the range of the first slot.
    span: u64,
    /// Segment length minus one.
    mask: u64,
}

impl Geometry {
    fn new(segment_log2: u32, segments: u64) -> Geometry {
        Geometry {
            segment_log2,
            segments,
            span: segments << segment_log2,
            mask: (1u64 << segment_log2) - 1,
        }
    }

    /// The binary fuse sizing for `n` keys: segments get longer with `n` (so that three
    /// consecutive segments hold a key's slots without wasting space at small `n`), and the
    /// slot count is `n` times the size factor, rounded up to whole segments.
    fn for_entries(n: u64) -> Geometry {
        if n < 2 {
            return Geometry::new(MIN_SEGMENT_LOG2, 1);
        }
        let ln = (n as f64).ln();
        let log2 = (ln / 3.33f64.ln() + 2.25).floor() as u32;
        let log2 = log2.clamp(MIN_SEGMENT_LOG2, MAX_SEGMENT_LOG2);
        let factor = (0.875 + 0.25 * 1e6f64.ln() / ln).max(1.125);
        let slots = (n as f64 * factor).round() as u64;
        let segments = slots.div_ceil(1 << log2).saturating_sub(2).max(1);
        Geometry::new(log2, segments)
    }

    fn slots(&self) -> u64 {
        (self.segments + 2) << self.segment_log2
    }

    /// The three slots of hash `h`: one in segment `s`, one in `s + 1`, one in `s + 2`.
    #[inline(always)]
    fn positions(&self, h: u64) -> [usize; 3] {
        let first = ((h as u128 * self.span as u128) >> 64) as u64;
        let len = self.mask + 1;
        let second = (first + len) ^ ((h >> 18) & self.mask);
        let third = (first + 2 * len) ^ (h & self.mask);
        [first as usize, second as usize, third as usize]
    }
}

/// `u64::MAX` cut to its low `bits` bits (`bits` in `0..=64`).
const fn low_mask(bits: u32) -> u64 {
    match u64::MAX.checked_shr(64 - bits) {
        Some(m) if bits > 0 => m,
        _ => 0,
    }
}

/// 64-bit words that hold `slots` fields of `width` bits.
fn words_for(slots: u64, width: u32) -> u128 {
    (slots as u128 * width as u128).div_ceil(64)
}

/// A static map from keys to `value_bits`-bit values, with `fingerprint_bits` of fingerprint
/// per key to tell keys that were not in the map apart (see the [module](self) docs).
///
/// ```
/// use blockbloom::BloomierFilter;
///
/// let pairs = [("10.0.0.1:443", 2u64), ("10.0.0.2:53", 1), ("10.0.0.3:22", 3)];
/// let f = BloomierFilter::build(&pairs, 2, 16)?;
/// assert_eq!(f.get("10.0.0.2:53"), Some(1));
/// assert_eq!(f.get("10.9.9.9:80"), None); // absent, except with probability 2^-16
/// assert_eq!(f.len(), 3);
/// # Ok::<(), blockbloom::Error>(())
/// ```
#[derive(Clone)]
pub struct BloomierFilter {
    /// The packed slots, plus one zero word so a field read may always load two words.
    words: Vec<u64>,
    len: u64,
    seed: u64,
    flip: u64,
    value_bits: u32,
    fingerprint_bits: u32,
    geometry: Geometry,
    kernel: &'static Kernel,
    /// Whether batches prefetch their slots (the table is larger than a core's L2).
    prefetch: bool,
}

/// Options of a [`BloomierFilter`] build: value and fingerprint widths and the first seed.
///
/// ```
/// let pairs: Vec<(u64, u64)> = (0..100).map(|k| (k, k * 3)).collect();
/// let f = blockbloom::BloomierFilter::builder(9, 12).seed(7).build(&pairs)?;
/// assert_eq!(f.get(&33u64), Some(99));
/// # Ok::<(), blockbloom::Error>(())
/// ```
#[derive(Debug, Clone, Copy)]
#[must_use]
pub struct BloomierBuilder {
    value_bits: u32,
    fingerprint_bits: u32,
    seed: u64,
}

impl BloomierBuilder {
    /// The first seed tried (default 0). A build whose table cannot be solved with a seed
    /// tries the next one (`seed + i * 0x9e3779b97f4a7c15`), up to [`MAX_ATTEMPTS`];
    /// [`BloomierFilter::seed`] tells which one worked.
    ///
    /// ```
    /// let f = blockbloom::BloomierFilter::builder(1, 8).seed(5).build(&[(1u64, 1)])?;
    /// assert_eq!(f.get(&1u64), Some(1));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn seed(mut self, seed: u64) -> BloomierBuilder {
        self.seed = seed;
        self
    }

    /// Builds from `(key, value)` pairs of any hashable key (hashed like
    /// [`BloomFilter::insert`](crate::BloomFilter::insert)).
    ///
    /// # Errors
    /// [`Error::InvalidOptions`] for widths whose sum is outside `1..=64` or more than
    /// [`MAX_ENTRIES`] pairs; [`Error::ValueTooLarge`]; [`Error::ConflictingValues`] for a key
    /// given twice with different values (the same value twice is one entry);
    /// [`Error::ConstructionFailed`]; [`Error::AllocationFailed`]; a kernel error from
    /// `BLOCKBLOOM_ISA`.
    ///
    /// ```
    /// let f = blockbloom::BloomierFilter::builder(4, 0).build(&[("a", 1u64), ("b", 2), ("a", 1)])?;
    /// assert_eq!((f.get("a"), f.get("b"), f.len()), (Some(1), Some(2), 2));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn build<K: Hash + Eq>(self, pairs: &[(K, u64)]) -> Result<BloomierFilter, Error> {
        self.construct(
            pairs.len(),
            &mut |seed, out| {
                for (o, (k, _)) in out.iter_mut().zip(pairs) {
                    *o = hash_key(k, seed);
                }
            },
            &|i, j| pairs[i].0 == pairs[j].0,
            &|i| pairs[i].1,
        )
    }

    /// Builds from `(bytes, value)` pairs, each key hashed exactly as its bytes (for
    /// [`BloomierFilter::get_bytes`]).
    ///
    /// # Errors
    /// As [`build`](Self::build).
    ///
    /// ```
    /// let f = blockbloom::BloomierFilter::builder(8, 8).build_bytes(&[(b"k1", 10u64), (b"k2", 20)])?;
    /// assert_eq!(f.get_bytes(b"k2"), Some(20));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn build_bytes<B: AsRef<[u8]>>(self, pairs: &[(B, u64)]) -> Result<BloomierFilter, Error> {
        self.construct(
            pairs.len(),
            &mut |seed, out| {
                for (o, (k, _)) in out.iter_mut().zip(pairs) {
                    *o = hash_bytes(k.as_ref(), seed);
                }
            },
            &|i, j| pairs[i].0.as_ref() == pairs[j].0.as_ref(),
            &|i| pairs[i].1,
        )
    }

    /// Builds from integer keys and their values (`values[i]` for `keys[i]`), hashing the
    /// keys in SIMD lanes. The same filter as [`build`](Self::build) of the pairs.
    ///
    /// # Errors
    /// As [`build`](Self::build), and [`Error::InvalidOptions`] if the slices differ in
    /// length.
    ///
    /// ```
    /// let keys: Vec<u64> = (0..1000).collect();
    /// let values: Vec<u64> = keys.iter().map(|k| k % 16).collect();
    /// let f = blockbloom::BloomierFilter::builder(4, 8).build_batch(&keys, &values)?;
    /// assert_eq!(f.get(&999u64), Some(999 % 16));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn build_batch<K: BatchKey + Eq>(
        self,
        keys: &[K],
        values: &[u64],
    ) -> Result<BloomierFilter, Error> {
        if keys.len() != values.len() {
            return Err(Error::InvalidOptions(
                "build_batch: keys and values differ in length",
            ));
        }
        let kernel = Kernel::get(Isa::active()?)?;
        let batch = K::as_keys(keys).0;
        self.construct(
            keys.len(),
            &mut |seed, out| kernel.hash_keys(seed_flip(seed), batch, 0, out),
            &|i, j| keys[i] == keys[j],
            &|i| values[i],
        )
    }

    /// The build: check widths and values, then per seed hash, sort, deduplicate, peel and
    /// assign; the first seed whose table peels wins.
    fn construct(
        self,
        n: usize,
        hash_all: &mut dyn FnMut(u64, &mut [u64]),
        same_key: &dyn Fn(usize, usize) -> bool,
        value: &dyn Fn(usize) -> u64,
    ) -> Result<BloomierFilter, Error> {
        let (vb, fb) = (self.value_bits, self.fingerprint_bits);
        if vb > 64 || fb > 64 || !(1..=64).contains(&(vb + fb)) {
            return Err(Error::InvalidOptions(
                "value_bits + fingerprint_bits must be in 1..=64",
            ));
        }
        if n as u64 > MAX_ENTRIES {
            return Err(Error::InvalidOptions(
                "a Bloomier filter holds at most 2^32 - 1 entries",
            ));
        }
        let kernel = Kernel::get(Isa::active()?)?;
        let vmask = low_mask(vb);
        if let Some(index) = (0..n).find(|&i| value(i) & !vmask != 0) {
            return Err(Error::ValueTooLarge {
                index,
                value: value(index),
                value_bits: vb,
            });
        }
        let mut hashes = try_vec(n, 0u64)?;
        let mut sorted: Vec<(u64, u32)> = try_vec(n, (0, 0))?;
        let mut seed = self.seed;
        for _ in 0..MAX_ATTEMPTS {
            hash_all(seed, &mut hashes);
            sort_by_hash(&hashes, &mut sorted)?;
            // Equal hashes: the same key (one entry, or a conflict) or a collision of two
            // keys, which no table can hold: try the next seed.
            let Some(unique) = dedup(&mut sorted, same_key, value)? else {
                seed = seed.wrapping_add(SEED_STEP);
                continue;
            };
            // From here on `hashes` holds the unique hashes in sorted order.
            hashes.truncate(unique);
            for (h, &(s, _)) in hashes.iter_mut().zip(&sorted) {
                *h = s;
            }
            let geometry = Geometry::for_entries(unique as u64);
            if let Some(stack) = peel(&geometry, &hashes)? {
                let values: Vec<u64> = sorted[..unique]
                    .iter()
                    .map(|&(_, i)| value(i as usize))
                    .collect();
                drop(sorted);
                let mut f = BloomierFilter {
                    words: Vec::new(),
                    len: unique as u64,
                    seed,
                    flip: seed_flip(seed),
                    value_bits: vb,
                    fingerprint_bits: fb,
                    geometry,
                    kernel,
                    prefetch: false,
                };
                f.words = f.assign(&stack, &values)?;
                f.prefetch = f.size_in_bytes() as u64 > CACHE_RESIDENT_BYTES;
                return Ok(f);
            }
            hashes.resize(n, 0);
            seed = seed.wrapping_add(SEED_STEP);
        }
        Err(Error::ConstructionFailed {
            attempts: MAX_ATTEMPTS,
        })
    }
}

/// A zero-filled vector of `n` elements; a refused allocation is an error.
fn try_vec<T: Clone>(n: usize, zero: T) -> Result<Vec<T>, Error> {
    let mut v = Vec::new();
    v.try_reserve_exact(n)
        .map_err(|_| Error::AllocationFailed {
            bytes: n as u128 * std::mem::size_of::<T>() as u128,
        })?;
    v.resize(n, zero);
    Ok(v)
}

/// Fills `sorted` with `(hash, index)` of every key, sorted by hash: one counting pass on the
/// top bits into about `n` buckets, then each (tiny) bucket sorted. Sorted by hash is sorted
/// by first segment, which keeps the peeling's memory accesses near each other.
fn sort_by_hash(hashes: &[u64], sorted: &mut [(u64, u32)]) -> Result<(), Error> {
    let n = hashes.len();
    let bits = (usize::BITS - n.saturating_sub(1).leading_zeros()).min(24);
    let bucket = |h: u64| h.checked_shr(64 - bits).unwrap_or(0) as usize;
    let mut starts: Vec<u32> = try_vec((1 << bits) + 1, 0)?;
    for &h in hashes {
        starts[bucket(h) + 1] += 1;
    }
    for b in 1..starts.len() {
        starts[b] += starts[b - 1];
    }
    let mut next = starts.clone();
    for (i, &h) in hashes.iter().enumerate() {
        let b = bucket(h);
        sorted[next[b] as usize] = (h, i as u32);
        next[b] += 1;
    }
    for w in starts.windows(2) {
        let (a, b) = (w[0] as usize, w[1] as usize);
        if b - a > 1 {
            sorted[a..b].sort_unstable_by_key(|e| e.0);
        }
    }
    Ok(())
}

/// Drops repeated keys from the hash-sorted entries (keeping one of each), returning how many
/// are left at the front, or `None` if two different keys have the same hash.
fn dedup(
    sorted: &mut [(u64, u32)],
    same_key: &dyn Fn(usize, usize) -> bool,
    value: &dyn Fn(usize) -> u64,
) -> Result<Option<usize>, Error> {
    let mut kept = 0;
    for r in 0..sorted.len() {
        let (h, i) = sorted[r];
        if kept > 0 {
            let (g, j) = sorted[kept - 1];
            if h == g {
                let (i, j) = (i as usize, j as usize);
                if !same_key(i, j) {
                    return Ok(None);
                }
                if value(i) != value(j) {
                    let (first, second) = (i.min(j), i.max(j));
                    return Err(Error::ConflictingValues {
                        first,
                        second,
                        first_value: value(first),
                        second_value: value(second),
                    });
                }
                continue;
            }
        }
        sorted[kept] = (h, i);
        kept += 1;
    }
    Ok(Some(kept))
}

/// One key peeled: its hash, its index in the sorted entries and the slot it owns.
#[derive(Clone, Copy)]
struct Peeled {
    hash: u64,
    key: u32,
    slot: u32,
}

/// A slot during peeling: how many keys still use it and the xor of their hashes and
/// indices (the only one's, once the count is 1). One 16-byte record, so a step of the
/// peeling reads one cache line per slot and never looks the hash up elsewhere.
#[derive(Clone, Copy, Default)]
struct Degree {
    hashes: u64,
    keys: u32,
    count: u32,
}

/// Peels the 3-hypergraph of the keys' slots: repeatedly takes a slot that only one key
/// still uses and removes that key. Returns the keys in peeling order, or `None` if a core
/// remains (this seed cannot be solved).
fn peel(geometry: &Geometry, hashes: &[u64]) -> Result<Option<Vec<Peeled>>, Error> {
    let slots = geometry.slots() as usize;
    let mut degree: Vec<Degree> = try_vec(slots, Degree::default())?;
    for (k, &h) in hashes.iter().enumerate() {
        for p in geometry.positions(h) {
            let d = &mut degree[p];
            d.count += 1;
            d.hashes ^= h;
            d.keys ^= k as u32;
        }
    }
    let mut queue: Vec<u32> = Vec::new();
    queue
        .try_reserve(hashes.len())
        .map_err(|_| Error::AllocationFailed {
            bytes: hashes.len() as u128 * 4,
        })?;
    queue.extend((0..slots as u32).filter(|&s| degree[s as usize].count == 1));
    let mut stack: Vec<Peeled> = Vec::new();
    stack
        .try_reserve_exact(hashes.len())
        .map_err(|_| Error::AllocationFailed {
            bytes: hashes.len() as u128 * 16,
        })?;
    while let Some(s) = queue.pop() {
        let Degree {
            hashes: h,
            keys: k,
            count,
        } = degree[s as usize];
        if count != 1 {
            continue;
        }
        stack.push(Peeled {
            hash: h,
            key: k,
            slot: s,
        });
        for p in geometry.positions(h) {
            let d = &mut degree[p];
            d.count -= 1;
            d.hashes ^= h;
            d.keys ^= k;
            if d.count == 1 {
                queue.push(p as u32);
            }
        }
    }
    Ok((stack.len() == hashes.len()).then_some(stack))
}

impl BloomierFilter {
    /// Builds the map from `(key, value)` pairs with seed 0: values of `value_bits` bits
    /// and `fingerprint_bits` of fingerprint (`value_bits + fingerprint_bits` in `1..=64`).
    /// A key given twice with the same value is one entry.
    ///
    /// # Errors
    /// As [`BloomierBuilder::build`]: bad widths, a value wider than `value_bits`
    /// ([`Error::ValueTooLarge`]), a key with two values ([`Error::ConflictingValues`]).
    ///
    /// ```
    /// use blockbloom::{BloomierFilter, Error};
    ///
    /// let f = BloomierFilter::build(&[(1u64, 5u64), (2, 6)], 3, 8)?;
    /// assert_eq!(f.get(&2u64), Some(6));
    /// let err = BloomierFilter::build(&[(1u64, 8u64)], 3, 8).unwrap_err();
    /// assert!(matches!(err, Error::ValueTooLarge { index: 0, value: 8, value_bits: 3 }));
    /// let err = BloomierFilter::build(&[(1u64, 1u64), (1, 2)], 3, 8).unwrap_err();
    /// assert!(matches!(err, Error::ConflictingValues { first: 0, second: 1, .. }));
    /// # Ok::<(), Error>(())
    /// ```
    pub fn build<K: Hash + Eq>(
        pairs: &[(K, u64)],
        value_bits: u32,
        fingerprint_bits: u32,
    ) -> Result<BloomierFilter, Error> {
        BloomierFilter::builder(value_bits, fingerprint_bits).build(pairs)
    }

    /// A [`BloomierBuilder`] for these widths (seed 0 unless set).
    ///
    /// ```
    /// let f = blockbloom::BloomierFilter::builder(16, 0).build(&[(7u32, 65_535u64)])?;
    /// assert_eq!(f.get(&7u32), Some(65_535));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn builder(value_bits: u32, fingerprint_bits: u32) -> BloomierBuilder {
        BloomierBuilder {
            value_bits,
            fingerprint_bits,
            seed: 0,
        }
    }

    /// Solves the table: in reverse peeling order, each key's free slot is set so that its
    /// three slots xor to its fingerprint and value.
    fn assign(&self, stack: &[Peeled], values: &[u64]) -> Result<Vec<u64>, Error> {
        let words = words_for(self.geometry.slots(), self.width()) as usize + 1;
        let mut table = try_vec(words, 0u64)?;
        let mask = low_mask(self.width());
        for e in stack.iter().rev() {
            let mut x = self.target(e.hash, values[e.key as usize]);
            for p in self.geometry.positions(e.hash) {
                x ^= read_field(&table, p, self.width(), mask);
            }
            // The key's own slot is still zero, so xoring sets it.
            xor_field(&mut table, e.slot as usize, self.width(), x);
        }
        Ok(table)
    }

    /// Bits per slot.
    #[inline(always)]
    fn width(&self) -> u32 {
        self.value_bits + self.fingerprint_bits
    }

    #[inline(always)]
    fn fingerprint(&self, h: u64) -> u64 {
        h.wrapping_mul(FINGERPRINT_MUL)
            .checked_shr(64 - self.fingerprint_bits)
            .unwrap_or(0)
    }

    /// What a key's three slots xor to.
    #[inline(always)]
    fn target(&self, h: u64, value: u64) -> u64 {
        self.fingerprint(h)
            .checked_shl(self.value_bits)
            .unwrap_or(0)
            | value
    }

    #[inline(always)]
    fn lookup(&self, h: u64) -> Option<u64> {
        let (w, mask) = (self.width(), low_mask(self.width()));
        let [a, b, c] = self.geometry.positions(h);
        let x = read_field(&self.words, a, w, mask)
            ^ read_field(&self.words, b, w, mask)
            ^ read_field(&self.words, c, w, mask);
        let fp = x.checked_shr(self.value_bits).unwrap_or(0);
        (fp == self.fingerprint(h)).then_some(x & low_mask(self.value_bits))
    }

    /// The value of `key`, or `None` if the key was not in the map (detected with
    /// probability `1 - 2^-fingerprint_bits`; otherwise an arbitrary value).
    ///
    /// ```
    /// let f = blockbloom::BloomierFilter::build(&[(10u64, 3u64)], 2, 12)?;
    /// assert_eq!(f.get(&10u64), Some(3));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    #[inline]
    pub fn get<K: Hash + ?Sized>(&self, key: &K) -> Option<u64> {
        self.lookup(hash_key(key, self.seed))
    }

    /// The value of a key built with [`BloomierBuilder::build_bytes`] (hashed as exactly
    /// these bytes).
    ///
    /// ```
    /// let f = blockbloom::BloomierFilter::builder(4, 8).build_bytes(&[("host-a", 9u64)])?;
    /// assert_eq!(f.get_bytes(b"host-a"), Some(9));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    #[inline]
    pub fn get_bytes(&self, bytes: &[u8]) -> Option<u64> {
        self.lookup(hash_bytes(bytes, self.seed))
    }

    /// The 64-bit hash this filter uses for `key` (its build seed's XXH3).
    ///
    /// ```
    /// let f = blockbloom::BloomierFilter::build(&[(1u64, 1u64)], 1, 8)?;
    /// assert_eq!(f.hash(&1u64), blockbloom::hash::hash_u64(1, f.seed()));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    #[inline]
    pub fn hash<K: Hash + ?Sized>(&self, key: &K) -> u64 {
        hash_key(key, self.seed)
    }

    /// The value of a key given its hash from [`hash`](Self::hash).
    ///
    /// ```
    /// let f = blockbloom::BloomierFilter::build(&[("a", 1u64)], 1, 8)?;
    /// assert_eq!(f.get_hash(f.hash("a")), Some(1));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    #[inline]
    pub fn get_hash(&self, hash: u64) -> Option<u64> {
        self.lookup(hash)
    }

    /// Looks up a batch of integer keys into `out` (`out[i]` for `keys[i]`), hashing in SIMD
    /// lanes and, for tables larger than a core's L2 cache, prefetching each chunk's slots a
    /// chunk ahead.
    ///
    /// # Panics
    /// If `out.len() != keys.len()`.
    ///
    /// ```
    /// let pairs: Vec<(u64, u64)> = (0..100).map(|k| (k, k % 4)).collect();
    /// let f = blockbloom::BloomierFilter::build(&pairs, 2, 8)?;
    /// let mut out = [None; 3];
    /// f.get_batch(&[1u64, 2, 3], &mut out);
    /// assert_eq!(out, [Some(1), Some(2), Some(3)]);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn get_batch<K: BatchKey>(&self, keys: &[K], out: &mut [Option<u64>]) {
        self.lookup_keys(K::as_keys(keys).0, out)
    }

    /// Looks up a batch of hashes from [`hash`](Self::hash) into `out`.
    ///
    /// # Panics
    /// If `out.len() != hashes.len()`.
    ///
    /// ```
    /// let f = blockbloom::BloomierFilter::build(&[("a", 1u64), ("b", 0)], 1, 8)?;
    /// let mut out = [None; 2];
    /// f.get_hash_batch(&[f.hash("a"), f.hash("b")], &mut out);
    /// assert_eq!(out, [Some(1), Some(0)]);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn get_hash_batch(&self, hashes: &[u64], out: &mut [Option<u64>]) {
        self.lookup_keys(Keys::Hashes(hashes), out)
    }

    fn lookup_keys(&self, keys: Keys<'_>, out: &mut [Option<u64>]) {
        assert_eq!(
            keys.len(),
            out.len(),
            "output slice length must equal key count"
        );
        // 64 keys per chunk whatever the size: with 3 lines per key, the plain filter's short
        // out-of-cache chunks (16) measured slower here at 1M and 4M keys (tables in L3).
        let chunk = CHUNK;
        let n = keys.len();
        let (mut cur, mut next) = ([0u64; CHUNK], [0u64; CHUNK]);
        let first = chunk.min(n);
        self.kernel.hash_keys(self.flip, keys, 0, &mut cur[..first]);
        self.prefetch_slots(&cur[..first]);
        let mut start = 0;
        while start < n {
            let end = (start + chunk).min(n);
            let ahead = (end + chunk).min(n);
            self.kernel
                .hash_keys(self.flip, keys, end, &mut next[..ahead - end]);
            self.prefetch_slots(&next[..ahead - end]);
            for (o, &h) in out[start..end].iter_mut().zip(&cur) {
                *o = self.lookup(h);
            }
            std::mem::swap(&mut cur, &mut next);
            start = end;
        }
    }

    #[inline(always)]
    fn prefetch_slots(&self, hashes: &[u64]) {
        if !self.prefetch {
            return;
        }
        let w = self.width() as usize;
        for &h in hashes {
            for p in self.geometry.positions(h) {
                prefetch(self.words.as_ptr().wrapping_add(p * w / 64));
            }
        }
    }

    /// Distinct keys in the map.
    ///
    /// ```
    /// let f = blockbloom::BloomierFilter::build(&[(1u8, 0u64), (2, 1), (1, 0)], 1, 4)?;
    /// assert_eq!(f.len(), 2);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the map holds no keys.
    ///
    /// ```
    /// let f = blockbloom::BloomierFilter::build::<u64>(&[], 1, 4)?;
    /// assert!(f.is_empty());
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bits of each value.
    ///
    /// ```
    /// assert_eq!(blockbloom::BloomierFilter::build(&[(1u64, 1u64)], 5, 3)?.value_bits(), 5);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn value_bits(&self) -> u32 {
        self.value_bits
    }

    /// Bits of fingerprint per slot (0: a pure static function, no absent answers).
    ///
    /// ```
    /// assert_eq!(blockbloom::BloomierFilter::build(&[(1u64, 1u64)], 5, 3)?.fingerprint_bits(), 3);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn fingerprint_bits(&self) -> u32 {
        self.fingerprint_bits
    }

    /// Slots in the table (each `value_bits + fingerprint_bits` bits): about 1.125 per key
    /// for large maps, more for small ones.
    ///
    /// ```
    /// let pairs: Vec<(u64, u64)> = (0..1_000_000).map(|k| (k, 0)).collect();
    /// let f = blockbloom::BloomierFilter::build(&pairs, 1, 0)?;
    /// assert!((f.slots() as f64) < 1.14 * 1e6);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn slots(&self) -> u64 {
        self.geometry.slots()
    }

    /// The seed the table was solved with (the builder's seed, or a later one if that seed's
    /// table could not be solved).
    ///
    /// ```
    /// let f = blockbloom::BloomierFilter::builder(1, 1).seed(3).build(&[(0u64, 0u64)])?;
    /// assert!(f.seed() == 3 || f.seed() == 3u64.wrapping_add(0x9e37_79b9_7f4a_7c15));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Bytes of packed slots (the encoding's body; memory holds 8 bytes more).
    ///
    /// ```
    /// let f = blockbloom::BloomierFilter::build(&[(1u64, 1u64)], 4, 4)?;
    /// assert_eq!(f.size_in_bytes() as u64, (f.slots() * 8).div_ceil(64) * 8);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn size_in_bytes(&self) -> usize {
        (self.words.len() - 1) * 8
    }

    /// Bits of table per key ([`size_in_bytes`](Self::size_in_bytes) × 8 / [`len`](Self::len);
    /// infinite for an empty map).
    ///
    /// ```
    /// let pairs: Vec<(u64, u64)> = (0..100_000).map(|k| (k, k & 0xff)).collect();
    /// let f = blockbloom::BloomierFilter::build(&pairs, 8, 8)?;
    /// assert!(f.bits_per_entry() > 16.0 && f.bits_per_entry() < 16.0 * 1.2);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn bits_per_entry(&self) -> f64 {
        self.size_in_bytes() as f64 * 8.0 / self.len as f64
    }

    /// The probability that a key not in the map gets a value instead of `None`:
    /// `2^-fingerprint_bits`.
    ///
    /// ```
    /// assert_eq!(blockbloom::BloomierFilter::build(&[(1u64, 1u64)], 1, 8)?.false_positive_rate(), 1.0 / 256.0);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn false_positive_rate(&self) -> f64 {
        (-(self.fingerprint_bits as f64)).exp2()
    }

    /// The kernel tier that hashes batches.
    ///
    /// ```
    /// let f = blockbloom::BloomierFilter::build(&[(1u64, 1u64)], 1, 8)?;
    /// assert_eq!(f.isa(), blockbloom::Isa::active()?);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn isa(&self) -> Isa {
        self.kernel.isa()
    }
}

/// The `width`-bit field of slot `slot` (it may straddle two words; the table's extra zero
/// word makes the second load always valid).
#[inline(always)]
fn read_field(words: &[u64], slot: usize, width: u32, mask: u64) -> u64 {
    let bit = slot * width as usize;
    let (i, s) = (bit / 64, bit % 64);
    let pair = words[i] as u128 | (words[i + 1] as u128) << 64;
    (pair >> s) as u64 & mask
}

/// Xors `x` (at most `width` bits) into the field of slot `slot`.
fn xor_field(words: &mut [u64], slot: usize, width: u32, x: u64) {
    let bit = slot * width as usize;
    let (i, s) = (bit / 64, bit % 64);
    let pair = (x as u128) << s;
    words[i] ^= pair as u64;
    words[i + 1] ^= (pair >> 64) as u64;
}

impl PartialEq for BloomierFilter {
    /// Same widths, seed, shape, entry count and slots; the kernel does not matter.
    fn eq(&self, other: &BloomierFilter) -> bool {
        self.value_bits == other.value_bits
            && self.fingerprint_bits == other.fingerprint_bits
            && self.seed == other.seed
            && self.len == other.len
            && self.geometry == other.geometry
            && self.words == other.words
    }
}

impl Eq for BloomierFilter {}

impl std::fmt::Debug for BloomierFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BloomierFilter")
            .field("len", &self.len)
            .field("value_bits", &self.value_bits)
            .field("fingerprint_bits", &self.fingerprint_bits)
            .field("slots", &self.slots())
            .field("seed", &self.seed)
            .field("isa", &self.isa())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_round_trip_at_every_width_and_offset() {
        for width in 1..=64u32 {
            let slots = 70;
            let mut words = vec![0u64; words_for(slots, width) as usize + 1];
            let mask = low_mask(width);
            let val = |s: usize| (s as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) & mask;
            for s in 0..slots as usize {
                xor_field(&mut words, s, width, val(s));
            }
            for s in 0..slots as usize {
                assert_eq!(read_field(&words, s, width, mask), val(s), "width {width}");
            }
            assert_eq!(*words.last().unwrap(), 0, "width {width}: pad word touched");
        }
    }

    #[test]
    fn positions_stay_in_three_consecutive_segments() {
        for n in [0u64, 1, 2, 3, 10, 100, 1000, 100_000, 10_000_000] {
            let g = Geometry::for_entries(n);
            assert!(g.slots() >= n, "{n}");
            for i in 0..1000u64 {
                let h = crate::hashing::hash_u64(i, n);
                let p = g.positions(h);
                let seg = p.map(|x| x as u64 >> g.segment_log2);
                assert_eq!([seg[0] + 1, seg[0] + 2], [seg[1], seg[2]], "{n}");
                assert!((p[2] as u64) < g.slots());
            }
        }
    }

    #[test]
    fn large_maps_use_about_1_125_slots_per_key() {
        let g = Geometry::for_entries(10_000_000);
        let ratio = g.slots() as f64 / 1e7;
        assert!((1.125..1.14).contains(&ratio), "{ratio}");
    }
}
