//! The variable-increment counting Bloom filter (Rottenstreich, Kanizo and Keslassy, "The
//! Variable-Increment Counting Bloom Filter", INFOCOM 2012).
//!
//! Like a counting filter, `k` counters per key; unlike it, each probe adds its own increment
//! `v`, drawn per key and probe from `D_L = {L, ..., 2L-1}`. Every other key adds at least `L`
//! to a counter, so a counter `c` can hold the key only if `c == v` or `c >= v + L`: a counter
//! that one other key raised (`c` in `L..2L`) still rules the key out unless that key's
//! increment happened to equal `v`. For the same counters this gives fewer false positives
//! than the counting filter, whose counters answer "maybe" whenever they are non-zero.
//!
//! The array is unblocked, with the classic filter's positions (double hashing of the
//! crate's seeded hash); the increments come from a second mix of the same hash.

use alloc::vec::Vec;

use super::classic::{check_probes, check_target};
use crate::error::Error;
use crate::family::classic::kernel::ClassicShape;
use crate::filter::CounterBits;
use crate::hashing::{hash_bytes, seed_flip};
use crate::key::{Key, hash_key};
#[cfg(not(any(feature = "std", test)))]
use crate::math::F64Math as _;

/// Most counters a filter may have (2^40).
pub const MAX_COUNTERS: u64 = 1 << 40;

/// A counting Bloom filter whose counters are raised by variable increments from
/// `D_L = {L, ..., 2L-1}`.
///
/// ```
/// use blockbloom::VariableIncrementBloomFilter;
///
/// let mut f = VariableIncrementBloomFilter::with_capacity(10_000, 0.01)?;
/// f.insert(&"apple");
/// assert!(f.contains(&"apple"));
/// f.remove(&"apple")?;
/// assert!(!f.contains(&"apple"));
/// assert!(f.remove(&"pear").is_err()); // not present: nothing changes
/// # Ok::<(), blockbloom::Error>(())
/// ```
///
/// Counters saturate at their maximum (15 or 255): a saturated counter stays there, is never
/// decremented, and answers "maybe" for every key, so a saturation can raise the
/// false-positive rate but never lose a key. Inserts alone never change an answer through
/// saturation (a counter three keys raised answers "maybe" anyway, since three increments
/// sum to at least `3L`), but with 4-bit counters at the load `with_capacity` designs for,
/// three or more keys share about one counter in eight, and under removals the saturated
/// ones stay: a filter with heavy churn wants [`CounterBits::Eight`] through
/// [`new`](Self::new). `Send` and `Sync`.
#[derive(Clone, PartialEq, Eq)]
pub struct VariableIncrementBloomFilter {
    counters: Vec<u8>,
    shape: ClassicShape,
    l: u32,
    bits: CounterBits,
    seed: u64,
}

impl core::fmt::Debug for VariableIncrementBloomFilter {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("VariableIncrementBloomFilter")
            .field("counters", &self.shape.num_bits)
            .field("probes", &self.shape.probes)
            .field("l", &self.l)
            .field("counter_bits", &self.bits)
            .field("seed", &self.seed)
            .finish_non_exhaustive()
    }
}

impl VariableIncrementBloomFilter {
    /// The filter with the fewest 4-bit counters whose modelled false-positive rate
    /// ([`model_fpr`]) after `n` keys is at most `p`, with `L = 4` (`D = {4, 5, 6, 7}`, the
    /// paper's configuration for 4-bit counters) and the best `k` for that size.
    ///
    /// # Errors
    /// [`Error::InvalidFpr`] unless `0 < p < 1`; [`Error::InvalidParameter`] for `n = 0` or a
    /// filter above [`MAX_COUNTERS`]; [`Error::AllocationFailed`].
    ///
    /// ```
    /// let f = blockbloom::VariableIncrementBloomFilter::with_capacity(1000, 0.01)?;
    /// assert!(f.model_fpr(1000) <= 0.01);
    /// assert_eq!((f.increment_base(), f.counter_bits().bits()), (4, 4));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn with_capacity(n: u64, p: f64) -> Result<VariableIncrementBloomFilter, Error> {
        check_target(n, p)?;
        let l = 4;
        let (m, k) = smallest_design(n, p, l).ok_or(Error::InvalidParameter {
            name: "n",
            value: n as f64,
            expected: "a filter of at most 2^40 counters",
        })?;
        Self::new(m, k, l, CounterBits::Four, 0)
    }

    /// A filter of `counters` counters of `bits` bits, `k` probes and increments from
    /// `D_L = {L, ..., 2L-1}`, hashed with `seed`.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for `counters` outside `1..=2^40`, `k` outside `1..=64`,
    /// or an `L` whose set `D_L` is not valid for the counters: `L >= 1`, and `2L - 1` (the
    /// largest increment) must fit in a counter; [`Error::AllocationFailed`].
    ///
    /// ```
    /// use blockbloom::{CounterBits, Error, VariableIncrementBloomFilter as Vi};
    /// assert!(Vi::new(1000, 5, 8, CounterBits::Four, 0).is_ok()); // D = {8..15}
    /// assert!(matches!(Vi::new(1000, 5, 9, CounterBits::Four, 0), Err(Error::InvalidParameter { name: "l", .. })));
    /// assert!(matches!(Vi::new(1000, 5, 0, CounterBits::Eight, 0), Err(Error::InvalidParameter { name: "l", .. })));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn new(
        counters: u64,
        k: u32,
        l: u32,
        bits: CounterBits,
        seed: u64,
    ) -> Result<VariableIncrementBloomFilter, Error> {
        if counters == 0 || counters > MAX_COUNTERS {
            return Err(Error::InvalidParameter {
                name: "counters",
                value: counters as f64,
                expected: "1..=2^40 counters",
            });
        }
        check_probes(k)?;
        if l == 0 || 2 * l - 1 > bits.max() {
            return Err(Error::InvalidParameter {
                name: "l",
                value: l as f64,
                expected: "1 <= L with 2L - 1 at most the counter maximum (L <= 8 for 4-bit, 128 for 8-bit counters)",
            });
        }
        let bytes = match bits {
            CounterBits::Four => counters.div_ceil(2),
            _ => counters,
        } as usize;
        Ok(VariableIncrementBloomFilter {
            counters: super::try_vec(bytes, 0u8)?,
            shape: ClassicShape {
                num_bits: counters,
                design_bits: counters,
                probes: k,
                flip: seed_flip(seed),
            },
            l,
            bits,
            seed,
        })
    }

    /// Counters in the array.
    pub fn num_counters(&self) -> u64 {
        self.shape.num_bits
    }

    /// Probes per key (`k`).
    pub fn probes(&self) -> u32 {
        self.shape.probes
    }

    /// `L`: increments are drawn from `{L, ..., 2L-1}`.
    pub fn increment_base(&self) -> u32 {
        self.l
    }

    /// Bits per counter.
    pub fn counter_bits(&self) -> CounterBits {
        self.bits
    }

    /// The hash seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Bytes of the counters.
    pub fn size_in_bytes(&self) -> usize {
        self.counters.len()
    }

    /// Adds `key`.
    pub fn insert<K: Key + ?Sized>(&mut self, key: &K) {
        self.insert_hash(hash_key(key, self.seed))
    }

    /// Adds a byte-string key.
    pub fn insert_bytes(&mut self, bytes: &[u8]) {
        self.insert_hash(hash_bytes(bytes, self.seed))
    }

    /// Adds the key hashing to `hash`: each of its counters grows by that probe's increment
    /// (saturating).
    pub fn insert_hash(&mut self, hash: u64) {
        let max = self.bits.max();
        for (p, v) in self.probes_of(hash) {
            let c = self.get(p);
            if c != max {
                self.set(p, (c + v).min(max));
            }
        }
    }

    /// Whether `key` may have been inserted (and not removed).
    pub fn contains<K: Key + ?Sized>(&self, key: &K) -> bool {
        self.contains_hash(hash_key(key, self.seed))
    }

    /// [`contains`](Self::contains) of a byte-string key.
    pub fn contains_bytes(&self, bytes: &[u8]) -> bool {
        self.contains_hash(hash_bytes(bytes, self.seed))
    }

    /// Whether every counter of the key hashing to `hash` can hold it: equal to its
    /// increment `v`, at least `v + L`, or saturated.
    pub fn contains_hash(&self, hash: u64) -> bool {
        let max = self.bits.max();
        self.probes_of(hash).all(|(p, v)| {
            let c = self.get(p);
            c == v || c >= v + self.l || c == max
        })
    }

    /// Removes `key`: subtracts its increments (a saturated counter stays).
    ///
    /// # Errors
    /// [`Error::NotPresent`] if the filter cannot hold the key (it was never inserted, or
    /// was removed); nothing is changed. Removing a key that was never inserted but answers
    /// `contains` (a false positive) corrupts the counters of other keys, as in any
    /// counting filter.
    pub fn remove<K: Key + ?Sized>(&mut self, key: &K) -> Result<(), Error> {
        self.remove_hash(hash_key(key, self.seed))
    }

    /// [`remove`](Self::remove) of a byte-string key.
    ///
    /// # Errors
    /// As [`remove`](Self::remove).
    pub fn remove_bytes(&mut self, bytes: &[u8]) -> Result<(), Error> {
        self.remove_hash(hash_bytes(bytes, self.seed))
    }

    /// [`remove`](Self::remove) of the key hashing to `hash`.
    ///
    /// # Errors
    /// As [`remove`](Self::remove).
    pub fn remove_hash(&mut self, hash: u64) -> Result<(), Error> {
        if !self.contains_hash(hash) {
            return Err(Error::NotPresent);
        }
        let max = self.bits.max();
        for (p, v) in self.probes_of(hash) {
            let c = self.get(p);
            // `contains` held: every counter is saturated or at least `v`.
            if c != max {
                self.set(p, c - v);
            }
        }
        Ok(())
    }

    /// The model's false-positive rate after `n` keys ([`model_fpr`]).
    pub fn model_fpr(&self, n: u64) -> f64 {
        model_fpr(self.shape.num_bits, self.shape.probes, self.l, n)
    }

    /// Removes every key.
    pub fn clear(&mut self) {
        self.counters.fill(0);
    }

    /// `(position, increment)` of each probe of the key hashing to `hash`.
    fn probes_of(&self, hash: u64) -> impl Iterator<Item = (u64, u32)> + use<> {
        let l = self.l as u64;
        // A second mix of the hash (SplitMix64's finaliser) draws the increments.
        let mut state = hash ^ 0x243f_6a88_85a3_08d3;
        self.shape.positions(hash).map(move |p| {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            // Lemire's reduction of the top bits to 0..L.
            let offset = ((z as u128 * l as u128) >> 64) as u64;
            (p, (l + offset) as u32)
        })
    }

    fn get(&self, p: u64) -> u32 {
        match self.bits {
            CounterBits::Four => {
                let b = self.counters[(p / 2) as usize];
                (if p.is_multiple_of(2) { b & 0xf } else { b >> 4 }) as u32
            }
            _ => self.counters[p as usize] as u32,
        }
    }

    fn set(&mut self, p: u64, c: u32) {
        match self.bits {
            CounterBits::Four => {
                let b = &mut self.counters[(p / 2) as usize];
                *b = if p.is_multiple_of(2) {
                    (*b & 0xf0) | c as u8
                } else {
                    (*b & 0x0f) | (c as u8) << 4
                };
            }
            _ => self.counters[p as usize] = c as u8,
        }
    }
}

/// The variable-increment filter's false-positive rate after `n` keys in `m` counters with
/// `k` probes and increments from `D_L`, ignoring saturation (the paper's analysis, for
/// `D_L`): a counter that `t` other keys raised lets a query through with probability `1/L`
/// when `t = 1` (the one increment must equal the query's), `P(a + b >= c)` for `a, b, c`
/// uniform on `0..L` when `t = 2` (the sum must reach `v + L`), and always when `t >= 3`
/// (the sum is at least `3L > v + L - 1`); `t` is binomial with `nk` trials of `1/m`; the
/// rate is that probability to the `k`-th power.
///
/// ```
/// use blockbloom::variable::model_fpr;
/// // With L = 1 (D = {1}) every increment is 1: a counter lets a query through once it is
/// // non-zero, exactly the counting (and classic) filter's rate.
/// let (m, k, n) = (10_000u64, 5, 1_000u64);
/// let classic = (1.0 - (1.0 - 1.0 / m as f64).powf((k as u64 * n) as f64)).powi(k as i32);
/// assert!((model_fpr(m, k, 1, n) - classic).abs() < 1e-12);
/// assert!(model_fpr(m, k, 4, n) < classic / 4.0);
/// ```
pub fn model_fpr(m: u64, k: u32, l: u32, n: u64) -> f64 {
    let (m, trials) = (m as f64, k as f64 * n as f64);
    let miss = 1.0 - 1.0 / m;
    let p0 = miss.powf(trials);
    let p1 = trials * (1.0 / m) * miss.powf(trials - 1.0);
    let p2 = trials * (trials - 1.0) / 2.0 * (1.0 / (m * m)) * miss.powf(trials - 2.0);
    let p3 = (1.0 - p0 - p1 - p2).max(0.0);
    let q = p1 / l as f64 + p2 * two_reach(l) + p3;
    q.powi(k as i32)
}

/// `P(a + b >= c)` for `a, b, c` independent and uniform on `0..L`.
fn two_reach(l: u32) -> f64 {
    let l = l as u64;
    // For each c, the pairs with a + b < c number c(c+1)/2.
    let below: u64 = (0..l).map(|c| c * (c + 1) / 2).sum();
    1.0 - below as f64 / (l * l * l) as f64
}

/// The fewest counters (and the best `k` for them) whose model rate after `n` keys is at
/// most `p`, or `None` above [`MAX_COUNTERS`].
fn smallest_design(n: u64, p: f64, l: u32) -> Option<(u64, u32)> {
    let mut best: Option<(u64, u32)> = None;
    for k in 1..=32u32 {
        // Rates fall as m grows: bisect for the smallest m that meets p.
        let (mut lo, mut hi) = (1u64, MAX_COUNTERS);
        if model_fpr(hi, k, l, n) > p {
            continue;
        }
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if model_fpr(mid, k, l, n) <= p {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        if best.is_none_or(|(m, _)| lo < m) {
            best = Some((lo, k));
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_reach_matches_enumeration() {
        for l in 1..=8u32 {
            let mut hits = 0;
            for a in 0..l {
                for b in 0..l {
                    for c in 0..l {
                        hits += (a + b >= c) as u32;
                    }
                }
            }
            let want = hits as f64 / (l * l * l) as f64;
            assert!((two_reach(l) - want).abs() < 1e-12, "L={l}");
        }
    }

    #[test]
    fn increments_are_in_d_l_and_uniform() {
        let f = VariableIncrementBloomFilter::new(1000, 8, 4, CounterBits::Four, 3).unwrap();
        let mut seen = [0u32; 8];
        for h in 0..10_000u64 {
            for (p, v) in f.probes_of(crate::hashing::hash_u64(h, 0)) {
                assert!(p < 1000 && (4..8).contains(&v));
                seen[v as usize] += 1;
            }
        }
        for v in 4..8 {
            assert!((seen[v] as f64 - 20_000.0).abs() < 1_000.0, "{seen:?}");
        }
    }
}
