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

// Without `std`, `f64` lacks `ln`, `exp`, ... (with it, or in tests, std's own are found).
#[cfg(not(any(feature = "std", test)))]
use crate::math::F64Math as _;

use alloc::vec::Vec;

mod build;
mod codec;

use crate::family::try_vec;
use crate::filter::BatchKey;
use crate::hashing::hash_bytes;
use crate::isa::Isa;
use crate::kernel::{Kernel, Keys, prefetch};
use crate::key::{Key, hash_key};

pub use build::BloomierBuilder;

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
///
/// `Send` and `Sync`: it is immutable once built, so any number of threads may query it.
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

impl BloomierFilter {
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
    pub fn get<K: Key + ?Sized>(&self, key: &K) -> Option<u64> {
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
    pub fn hash<K: Key + ?Sized>(&self, key: &K) -> u64 {
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
            core::mem::swap(&mut cur, &mut next);
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

impl core::fmt::Debug for BloomierFilter {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
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
