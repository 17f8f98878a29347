//! The classic Bloom filter (Bloom 1970): one array of `m` bits and `k` positions per key,
//! the filter the literature starts from and the reference the blocked filter is measured
//! against.
//!
//! Positions come from double hashing (Kirsch and Mitzenmacher, "Less hashing, same
//! performance", 2006) of the crate's stable seeded hash `H` (XXH3-64, the same as every
//! other kind): `h1 = H * m >> 64`, `h2 = rotl(H, 32) * m >> 64`, and
//! `g_i = h1 + i * h2 mod m` for `i` in `0..k`. Bit `p` is bit `p % 64` of word `p / 64`.
//!
//! Unlike the blocked filter, every probe is a cache line of its own, so a query costs up to
//! `k` cache misses; the batch methods hide them by prefetching every line of a chunk of keys
//! ahead of use (the module `kernel` beside this one).

mod codec;
pub(crate) mod kernel;

use self::kernel::{
    ClassicBatch, ClassicInsert, ClassicOp as _, ClassicQuery, ClassicShape, MAX_PROBES,
};
use crate::error::Error;
use crate::filter::BatchKey;
use crate::hashing::{hash_bytes, seed_flip};
use crate::isa::Isa;
use crate::kernel::{Kernel, Keys, Sink};
use crate::key::{Key, hash_key};
#[cfg(not(any(feature = "std", test)))]
use crate::math::F64Math as _;
use crate::memory::PageBuf;

/// Most bits a classic filter may have (2^43: one TiB of bits).
pub const MAX_BITS: u64 = 1 << 43;

/// Bloom's filter as the textbooks define it: `m` bits (any `m >= 1`), `k` positions per key
/// (any `k` in `1..=64`) by double hashing.
///
/// ```
/// use blockbloom::ClassicBloomFilter;
///
/// let mut f = ClassicBloomFilter::with_capacity(1000, 0.01)?;
/// assert_eq!((f.num_bits(), f.probes()), (9586, 7)); // m = -n ln p / ln(2)^2, k = (m/n) ln 2
/// f.insert(&"apple");
/// f.insert_batch(&[1u64, 2, 3]);
/// assert!(f.contains(&"apple") && f.contains(&2u64));
/// let mut out = [false; 2];
/// f.contains_batch(&[3u64, 4], &mut out);
/// assert!(out[0]);
/// # Ok::<(), blockbloom::Error>(())
/// ```
///
/// `Send` and `Sync`: a shared reference only reads.
#[derive(Clone)]
pub struct ClassicBloomFilter {
    /// On huge pages when large (see [`crate::memory`]): every probe of a large array is a
    /// TLB miss as well as a cache miss.
    words: PageBuf<u64>,
    shape: ClassicShape,
    seed: u64,
    kernel: &'static Kernel,
    gather: bool,
}

impl core::fmt::Debug for ClassicBloomFilter {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ClassicBloomFilter")
            .field("num_bits", &self.shape.num_bits)
            .field("design_bits", &self.shape.design_bits)
            .field("probes", &self.shape.probes)
            .field("seed", &self.seed)
            .field("isa", &self.kernel.isa())
            .finish_non_exhaustive()
    }
}

/// Equal when the shape, seed and bits are (the kernel is not part of a filter's value).
impl PartialEq for ClassicBloomFilter {
    fn eq(&self, other: &Self) -> bool {
        self.shape == other.shape && self.seed == other.seed && self.words == other.words
    }
}

impl Eq for ClassicBloomFilter {}

impl ClassicBloomFilter {
    /// An empty filter of `m_bits` bits and `k` probes, seed 0, on the active kernel.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for `m_bits` outside `1..=MAX_BITS` or `k` outside
    /// `1..=64`; [`Error::AllocationFailed`]; the kernel errors of
    /// [`Isa::active`](crate::Isa::active).
    ///
    /// ```
    /// use blockbloom::{ClassicBloomFilter, Error};
    /// let f = ClassicBloomFilter::new(1, 1)?; // the smallest filter there is
    /// assert_eq!(f.size_in_bytes(), 8);
    /// assert!(matches!(ClassicBloomFilter::new(0, 3), Err(Error::InvalidParameter { name: "m_bits", .. })));
    /// assert!(matches!(ClassicBloomFilter::new(64, 0), Err(Error::InvalidParameter { name: "k", .. })));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn new(m_bits: u64, k: u32) -> Result<ClassicBloomFilter, Error> {
        Self::with_seed(m_bits, k, 0)
    }

    /// [`new`](Self::new) with a hash seed. Filters must share the seed (and `m`, `k`) to be
    /// combined.
    ///
    /// # Errors
    /// As [`new`](Self::new).
    pub fn with_seed(m_bits: u64, k: u32, seed: u64) -> Result<ClassicBloomFilter, Error> {
        check_design(m_bits, k)?;
        let kernel = Kernel::get(Isa::active()?)?;
        let shape = ClassicShape {
            num_bits: m_bits,
            design_bits: m_bits,
            probes: k,
            flip: seed_flip(seed),
        };
        Ok(ClassicBloomFilter {
            words: zeroed_words(shape.num_words())?,
            shape,
            seed,
            kernel,
            gather: false,
        })
    }

    /// The textbook optimum for `n` keys at false-positive rate `p`:
    /// `m = ceil(-n ln p / (ln 2)^2)` and `k = round((m / n) ln 2)` (at least 1).
    ///
    /// # Errors
    /// [`Error::InvalidFpr`] unless `0 < p < 1`; [`Error::InvalidParameter`] for `n = 0` or
    /// an `m` above [`MAX_BITS`]; as [`new`](Self::new).
    ///
    /// ```
    /// let f = blockbloom::ClassicBloomFilter::with_capacity(1_000_000, 0.001)?;
    /// assert_eq!((f.num_bits(), f.probes()), (14_377_588, 10));
    /// assert!((f.expected_fpr(1_000_000) - 0.001).abs() < 2e-5);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn with_capacity(n: u64, p: f64) -> Result<ClassicBloomFilter, Error> {
        let (m, k) = optimal_design(n, p)?;
        Self::new(m, k)
    }

    /// The same filter on another kernel tier (every tier gives the same answers; this picks
    /// the instructions).
    ///
    /// # Errors
    /// [`Error::UnsupportedIsa`] if this CPU lacks the tier.
    pub fn with_isa(mut self, isa: Isa) -> Result<ClassicBloomFilter, Error> {
        self.kernel = Kernel::get(isa)?;
        Ok(self)
    }

    /// Batch queries test eight positions per gather instruction on the tiers that have one
    /// (AVX2, AVX-512) instead of one load per position. Off by default: gathers made
    /// `contains_batch` slower (`blockbloom-perf classic-pairs`, side `gather`, in `perf/`;
    /// perf-reports/2026-11-25-0cb7c46-keys-classic.md). The answers are the same either way.
    pub fn with_gather(mut self, gather: bool) -> ClassicBloomFilter {
        self.gather = gather;
        self
    }

    /// Bits of the array (`m`).
    pub fn num_bits(&self) -> u64 {
        self.shape.num_bits
    }

    /// Positions per key (`k`).
    pub fn probes(&self) -> u32 {
        self.shape.probes
    }

    /// The hash seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The kernel tier the batch methods run on.
    pub fn isa(&self) -> Isa {
        self.kernel.isa()
    }

    /// How many times the filter was [halved](Self::halve).
    pub fn halvings(&self) -> u32 {
        (self.shape.design_bits / self.shape.num_bits).trailing_zeros()
    }

    /// Bytes of the bit array (`m` rounded up to whole 64-bit words).
    pub fn size_in_bytes(&self) -> usize {
        self.words.len() * 8
    }

    /// The array's words: bit `p` is bit `p % 64` of word `p / 64`.
    pub fn as_words(&self) -> &[u64] {
        &self.words
    }

    /// Adds `key` (any [`Key`], hashed as [`BloomFilter::insert`](crate::BloomFilter::insert) hashes it).
    pub fn insert<K: Key + ?Sized>(&mut self, key: &K) {
        self.insert_hash(hash_key(key, self.seed))
    }

    /// Adds a byte-string key (hashed as its bytes; the single-key twin of the `&[u8]`,
    /// `&str` and `[u8; 16]` batch keys).
    pub fn insert_bytes(&mut self, bytes: &[u8]) {
        self.insert_hash(hash_bytes(bytes, self.seed))
    }

    /// Adds the key whose hash is `hash`.
    pub fn insert_hash(&mut self, hash: u64) {
        ClassicInsert::new(&mut self.words).key(self.shape.positions(hash));
    }

    /// Whether `key` may have been inserted (false positives at the designed rate, never a
    /// false negative).
    pub fn contains<K: Key + ?Sized>(&self, key: &K) -> bool {
        self.contains_hash(hash_key(key, self.seed))
    }

    /// [`contains`](Self::contains) of a byte-string key.
    pub fn contains_bytes(&self, bytes: &[u8]) -> bool {
        self.contains_hash(hash_bytes(bytes, self.seed))
    }

    /// Whether every position of the key hashing to `hash` is set.
    pub fn contains_hash(&self, hash: u64) -> bool {
        self.query().key(self.shape.positions(hash))
    }

    /// Adds a batch of keys on the kernel tier: hashed in lanes, every line of a chunk
    /// prefetched ahead. The same bits as [`insert`](Self::insert) one at a time (for
    /// byte-string keys, [`insert_bytes`](Self::insert_bytes)).
    ///
    /// ```
    /// let mut a = blockbloom::ClassicBloomFilter::with_capacity(100, 0.01)?;
    /// let mut b = a.clone();
    /// a.insert_batch(&["x", "y"]);
    /// b.insert_bytes(b"x");
    /// b.insert_bytes(b"y");
    /// assert_eq!(a, b);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn insert_batch<K: BatchKey>(&mut self, keys: &[K]) {
        self.insert_keys(K::as_keys(keys).0)
    }

    /// Answers a batch into `out` (`out[i]` for `keys[i]`).
    ///
    /// # Panics
    /// If `out.len() != keys.len()`.
    pub fn contains_batch<K: BatchKey>(&self, keys: &[K], out: &mut [bool]) {
        self.query_keys(K::as_keys(keys).0, Sink::Each(out))
    }

    /// How many keys of the batch may have been inserted.
    pub fn count_batch<K: BatchKey>(&self, keys: &[K]) -> usize {
        let mut n = 0;
        self.query_keys(K::as_keys(keys).0, Sink::Count(&mut n));
        n
    }

    // The batches' bodies are not generic, so the kernel's batch is compiled once, here, and
    // not again in every crate that calls the generic front-ends (see `Kernel::blocks`).
    fn insert_keys(&mut self, keys: Keys<'_>) {
        let op = ClassicInsert::new(&mut self.words);
        self.kernel
            .run(ClassicBatch::new(self.shape, keys, op, Sink::Discard))
    }

    fn query_keys(&self, keys: Keys<'_>, sink: Sink<'_>) {
        self.kernel
            .run(ClassicBatch::new(self.shape, keys, self.query(), sink))
    }

    fn query(&self) -> ClassicQuery<'_> {
        ClassicQuery {
            words: &self.words,
            gather: self.gather,
        }
    }

    /// `Ok` when `other` has the same shape and seed, else `Incompatible(what)`.
    fn check_same(&self, other: &ClassicBloomFilter, what: &'static str) -> Result<(), Error> {
        if self.shape != other.shape || self.seed != other.seed {
            return Err(Error::Incompatible(what));
        }
        Ok(())
    }

    /// Adds every key of `other` (bitwise OR): exactly the filter of both key sets.
    ///
    /// # Errors
    /// [`Error::Incompatible`] unless both have the same `m`, `k`, seed and halvings.
    ///
    /// ```
    /// use blockbloom::ClassicBloomFilter;
    /// let mut a = ClassicBloomFilter::with_capacity(100, 0.01)?;
    /// let mut b = a.clone();
    /// a.insert(&1);
    /// b.insert(&2);
    /// a.union(&b)?;
    /// assert!(a.contains(&1) && a.contains(&2));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn union(&mut self, other: &ClassicBloomFilter) -> Result<(), Error> {
        self.check_same(
            other,
            "classic filters combine only with the same m, k, seed and halvings",
        )?;
        for (a, b) in self.words.iter_mut().zip(other.words.iter()) {
            *a |= b;
        }
        Ok(())
    }

    /// Keeps the bits set in both (bitwise AND): every key of both sets still answers true;
    /// the result may answer true for more keys than the filter of the intersection would.
    ///
    /// # Errors
    /// As [`union`](Self::union).
    pub fn intersect(&mut self, other: &ClassicBloomFilter) -> Result<(), Error> {
        self.check_same(
            other,
            "classic filters combine only with the same m, k, seed and halvings",
        )?;
        for (a, b) in self.words.iter_mut().zip(other.words.iter()) {
            *a &= b;
        }
        Ok(())
    }

    /// Halves the array: bit `p` of the result is bit `p` OR bit `p + m/2` of this one, and
    /// every later position is reduced mod `m/2` (positions are still drawn from the original
    /// `m`), so every key inserted before or after answers true. Uses half the memory at a
    /// higher false-positive rate (about that of `m/2` bits holding the same keys).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] when `m` is odd.
    ///
    /// ```
    /// let mut f = blockbloom::ClassicBloomFilter::new(10_000, 5)?;
    /// f.insert_batch(&[1u64, 2, 3]);
    /// f.halve()?;
    /// f.insert(&4u64);
    /// assert_eq!((f.num_bits(), f.halvings()), (5_000, 1));
    /// assert_eq!(f.count_batch(&[1u64, 2, 3, 4]), 4);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn halve(&mut self) -> Result<(), Error> {
        let m = self.shape.num_bits;
        if !m.is_multiple_of(2) {
            return Err(Error::InvalidParameter {
                name: "m_bits",
                value: m as f64,
                expected: "an even bit count to halve",
            });
        }
        let half = m / 2;
        let mut folded = zeroed_words(half.div_ceil(64) as usize)?;
        if half.is_multiple_of(64) {
            let (lo, hi) = self.words.split_at(folded.len());
            for ((f, a), b) in folded.iter_mut().zip(lo).zip(hi) {
                *f = a | b;
            }
        } else {
            for (i, f) in folded.iter_mut().enumerate() {
                let w = i as u64 * 64;
                let lo = self.words[i];
                // Bits half+w .. half+w+64 of the old array, as one word.
                let hi = self.bits_at(half + w);
                let valid = (half - w).min(64);
                let mask = if valid == 64 {
                    u64::MAX
                } else {
                    (1u64 << valid) - 1
                };
                *f = (lo | hi) & mask;
            }
        }
        self.words = folded;
        self.shape.num_bits = half;
        Ok(())
    }

    /// The 64 bits starting at bit `start` (bits past `m` read as 0).
    fn bits_at(&self, start: u64) -> u64 {
        let (w, s) = ((start / 64) as usize, start % 64);
        let lo = self.words.get(w).copied().unwrap_or(0) >> s;
        let hi = if s == 0 {
            0
        } else {
            self.words.get(w + 1).copied().unwrap_or(0) << (64 - s)
        };
        lo | hi
    }

    /// Bits set.
    pub fn count_ones(&self) -> u64 {
        self.words.iter().map(|w| w.count_ones() as u64).sum()
    }

    /// Swamidass and Baldi's estimate of the keys inserted, from the bits set `X`:
    /// `-(m / k) ln(1 - X / m)` (infinite when every bit is set).
    ///
    /// ```
    /// let mut f = blockbloom::ClassicBloomFilter::with_capacity(10_000, 0.01)?;
    /// f.insert_batch(&(0..10_000u64).collect::<Vec<_>>());
    /// assert!((f.estimated_len() - 10_000.0).abs() < 300.0);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn estimated_len(&self) -> f64 {
        let m = self.shape.num_bits as f64;
        -(m / self.shape.probes as f64) * (1.0 - self.count_ones() as f64 / m).ln()
    }

    /// The textbook false-positive rate after `n` distinct keys: `(1 - e^(-kn/m))^k`.
    pub fn expected_fpr(&self, n: u64) -> f64 {
        classic_fpr(self.shape.num_bits, self.shape.probes, n)
    }

    /// Bloom's exact form of the same: `(1 - (1 - 1/m)^(kn))^k`.
    ///
    /// ```
    /// let f = blockbloom::ClassicBloomFilter::new(1000, 3)?;
    /// let (approx, exact) = (f.expected_fpr(100), f.expected_fpr_exact(100));
    /// assert!(approx < exact && exact < 1.01 * approx); // the exact form is a little higher
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn expected_fpr_exact(&self, n: u64) -> f64 {
        exact_fill(self.shape.num_bits, self.shape.probes, n).powf(self.shape.probes as f64)
    }

    /// The false-positive rate measured now, from the fraction of bits set: `(X / m)^k`.
    pub fn fill_fpr(&self) -> f64 {
        (self.count_ones() as f64 / self.shape.num_bits as f64).powi(self.shape.probes as i32)
    }

    /// Removes every key.
    pub fn clear(&mut self) {
        self.words.fill(0);
    }
}

/// The expected fraction of set bits after `n` keys, `1 - (1 - 1/m)^(kn)`, as
/// `1 - exp(kn ln(1 - 1/m))` with `ln_1p` for accuracy at large `m`.
pub(crate) fn exact_fill(m: u64, k: u32, n: u64) -> f64 {
    let per_probe = (-1.0 / m.max(1) as f64).ln_1p();
    1.0 - (n as f64 * k as f64 * per_probe).exp()
}

/// `(1 - e^(-kn/m))^k`.
pub(crate) fn classic_fpr(m: u64, k: u32, n: u64) -> f64 {
    let (m, k) = (m as f64, k as f64);
    (1.0 - (-k * n as f64 / m).exp()).powf(k)
}

/// The textbook `(m, k)` for `n` keys at rate `p`.
pub(crate) fn optimal_design(n: u64, p: f64) -> Result<(u64, u32), Error> {
    check_target(n, p)?;
    let ln2 = core::f64::consts::LN_2;
    let m = (-(n as f64) * p.ln() / (ln2 * ln2)).ceil();
    if m > MAX_BITS as f64 {
        return Err(Error::InvalidParameter {
            name: "m_bits",
            value: m,
            expected: "at most 2^43 bits",
        });
    }
    let m = (m as u64).max(1);
    let k = ((m as f64 / n as f64) * ln2)
        .round()
        .clamp(1.0, MAX_PROBES as f64) as u32;
    Ok((m, k))
}

/// Checks a `with_capacity` target: `0 < p < 1` and at least one key.
pub(crate) fn check_target(n: u64, p: f64) -> Result<(), Error> {
    if !(p > 0.0 && p < 1.0) {
        return Err(Error::InvalidFpr(p));
    }
    if n == 0 {
        return Err(Error::InvalidParameter {
            name: "n",
            value: 0.0,
            expected: "at least 1 key",
        });
    }
    Ok(())
}

/// Checks a probe count: `1..=64`.
pub(crate) fn check_probes(k: u32) -> Result<(), Error> {
    if k == 0 || k > MAX_PROBES {
        return Err(Error::InvalidParameter {
            name: "k",
            value: k as f64,
            expected: "1..=64 probes",
        });
    }
    Ok(())
}

/// Checks an explicit design.
fn check_design(m_bits: u64, k: u32) -> Result<(), Error> {
    if m_bits == 0 || m_bits > MAX_BITS {
        return Err(Error::InvalidParameter {
            name: "m_bits",
            value: m_bits as f64,
            expected: "1..=2^43 bits",
        });
    }
    check_probes(k)
}

/// `n` zero words, on huge pages when large.
fn zeroed_words(n: usize) -> Result<PageBuf<u64>, Error> {
    // SAFETY: all-zero bits are a valid `u64`.
    unsafe { PageBuf::zeroed(n, true) }.ok_or(Error::AllocationFailed {
        bytes: n as u128 * 8,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    #[test]
    fn positions_follow_the_double_hashing_formula() {
        for (m, k) in [(1u64, 1u32), (7, 5), (64, 3), (1000, 20), (1 << 40, 64)] {
            // The shape alone: a 2^40-bit array is not allocated.
            let shape = ClassicShape {
                num_bits: m,
                design_bits: m,
                probes: k,
                flip: 0,
            };
            for h in [0u64, 1, u64::MAX, 0x0123_4567_89ab_cdef, 1 << 63] {
                let p: Vec<u64> = shape.positions(h).collect();
                assert_eq!(p.len(), k as usize);
                let h1 = ((h as u128 * m as u128) >> 64) as u64;
                let h2 = ((h.rotate_left(32) as u128 * m as u128) >> 64) as u64;
                for (i, &got) in p[..k as usize].iter().enumerate() {
                    let want = (h1 as u128 + i as u128 * h2 as u128) % m as u128;
                    assert_eq!(got as u128, want, "m={m} k={k} h={h:x} i={i}");
                }
            }
        }
    }

    #[test]
    fn halved_positions_are_the_design_positions_mod_m() {
        let mut f = ClassicBloomFilter::new(4 * 1000, 9).unwrap();
        f.halve().unwrap();
        f.halve().unwrap();
        let g = ClassicBloomFilter::new(4000, 9).unwrap();
        for h in [3u64, 0xdead_beef_0bad_f00d, u64::MAX] {
            let a: Vec<u64> = f.shape.positions(h).collect();
            let b: Vec<u64> = g.shape.positions(h).collect();
            for i in 0..9 {
                assert_eq!(a[i], b[i] % 1000);
            }
        }
    }
}
