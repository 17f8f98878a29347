//! Building a Bloomier filter: hash, sort, deduplicate, peel the keys' 3-hypergraph and
//! solve the table, retrying with the next seed when a table does not peel.

use alloc::vec::Vec;

use super::{
    BloomierFilter, Geometry, MAX_ATTEMPTS, MAX_ENTRIES, SEED_STEP, low_mask, read_field, try_vec,
    words_for, xor_field,
};
use crate::cpu::l2_bytes;
use crate::error::Error;
use crate::filter::BatchKey;
use crate::hashing::{hash_bytes, seed_flip};
use crate::isa::Isa;
use crate::kernel::Kernel;
use crate::key::{Key, hash_key};

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
    pub fn build<K: Key + Eq>(
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

    /// A secret random first seed, as [`Builder::keyed`](crate::Builder::keyed): keys crafted
    /// to make construction fail (or to collide with a chosen key's slots) need the seed.
    #[cfg(feature = "std")]
    pub fn keyed(self) -> BloomierBuilder {
        self.seed(crate::hashing::random_seed())
    }

    /// Builds from `(key, value)` pairs of any [`Key`] type (hashed like
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
    pub fn build<K: Key + Eq>(self, pairs: &[(K, u64)]) -> Result<BloomierFilter, Error> {
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
                f.prefetch = f.size_in_bytes() as u64 > l2_bytes();
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
