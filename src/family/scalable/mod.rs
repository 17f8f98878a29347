//! The scalable Bloom filter (Almeida, Baquero, Preguiça, Hutchison, "Scalable Bloom
//! Filters", Information Processing Letters 101(6), 2007): a chain of plain blocked filters
//! that grows with the keys, keeping the compound false-positive rate under a target however
//! many keys arrive.
//!
//! Stage `i` (from 0) is a plain [`BloomFilter`] sized by the engine's planner for
//! `n0 * s^i` keys at false-positive rate `P (1 - r) r^i`. The targets sum to at most
//! `P (1 - r) / (1 - r) = P`, and a non-member is a false positive of the chain only if it is
//! one of some stage, so by the union bound the chain's rate is at most the sum of the
//! stages' rates, at most `P`. The union bound needs no independence between stages, which
//! is why every stage can use the same seed and a key is hashed once for all of them.
//!
//! Are the stages' answers independent anyway? A key's 64-bit hash picks its block in each
//! stage by multiply-shift over that stage's block count, and its bit pattern in the block
//! from the hash's low half, the same pattern in every stage. The stages hold disjoint keys
//! (each key goes to one stage), so given a non-member's pattern, its blocks in different
//! stages are filled by different, independently hashed keys: the events are independent
//! given the pattern. The pattern is shared, though; with one probe per 64-bit sector (the
//! 8x64 layout at `k = 8`, the planner's choice from 1% up) every pattern has the same chance
//! in a block of a given load and the dependence vanishes; otherwise patterns whose probes
//! coincide are likelier false positives everywhere, a positive correlation that only makes
//! the union smaller than the sum. `tests/scalable.rs` measures the compound rate against
//! the sum of the stages' exact expected rates.
//!
//! Almeida et al. recommend a tightening ratio `r` of 0.8 to 0.9 and a growth factor `s` of
//! 2 (slow growth) or 4 (fast); the defaults here are `r = 0.85` and `s = 2`.
//!
//! ```
//! use blockbloom::ScalableBloomFilter;
//!
//! let mut f = ScalableBloomFilter::new(1000, 0.01)?;
//! let keys: Vec<u64> = (0..100_000).collect(); // 100 times the initial capacity
//! f.insert_batch(&keys)?;
//! assert_eq!(f.count_batch(&keys), keys.len());
//! assert!(f.stages().len() > 1 && f.expected_fpr() <= 0.01);
//! # Ok::<(), blockbloom::Error>(())
//! ```

// Without `std`, `f64` lacks `ln`, `exp`, ... (with it, or in tests, std's own are found).
#[cfg(not(any(feature = "std", test)))]
use crate::math::F64Math as _;

use alloc::vec::Vec;

mod codec;

use crate::error::Error;
use crate::filter::BatchKey;
use crate::filter::BloomFilter;
use crate::hashing::{KeyHash, hash_bytes};
use crate::isa::Isa;
use crate::key::{Key, hash_key};

/// Default growth factor of stage capacities (Almeida et al.: 2 for slow growth, 4 for fast).
pub const DEFAULT_GROWTH: f64 = 2.0;
/// Default tightening ratio of stage false-positive targets (Almeida et al.: 0.8 to 0.9).
pub const DEFAULT_RATIO: f64 = 0.85;
/// The largest growth factor accepted.
pub const MAX_GROWTH: f64 = 16.0;
/// Hashes per step of a batch (on the stack).
const CHUNK: usize = 1024;
/// Bytes of the schedule that opens the encoded body.
const SCHEDULE_BYTES: usize = 64;

/// A Bloom filter that grows: a chain of plain blocked filters, each larger by a growth
/// factor and with a tighter false-positive target, so the compound rate stays at or below
/// the target however many keys arrive. See the [module docs](self).
///
/// ```
/// use blockbloom::ScalableBloomFilter;
///
/// let mut f = ScalableBloomFilter::builder()
///     .initial_capacity(1000) // stage 0's keys
///     .fpr(0.001)             // compound target
///     .growth(4.0)            // each stage 4x the previous
///     .ratio(0.9)             // each stage's target 0.9x the previous
///     .build()?;
/// assert!(f.insert(&"first")?);   // new
/// assert!(!f.insert(&"first")?);  // already there: uses no capacity
/// assert!(f.contains(&"first"));
/// assert_eq!(f.len(), 1);
/// # Ok::<(), blockbloom::Error>(())
/// ```
///
/// `Send` and `Sync`: share it across threads for queries; inserts take `&mut self`.
#[derive(Clone, PartialEq)]
pub struct ScalableBloomFilter {
    /// Oldest first; never empty.
    stages: Vec<BloomFilter>,
    initial_capacity: u64,
    growth: f64,
    ratio: f64,
    target_fpr: f64,
    seed: u64,
    /// Keys inserted (each counted once: duplicates are not inserted).
    len: u64,
    /// Keys in the newest stage.
    newest_len: u64,
}

/// Options of a [`ScalableBloomFilter`].
///
/// ```
/// let f = blockbloom::ScalableBloomFilter::builder().initial_capacity(100).seed(9).build()?;
/// assert_eq!((f.seed(), f.growth(), f.ratio()), (9, 2.0, 0.85));
/// # Ok::<(), blockbloom::Error>(())
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct ScalableBuilder {
    initial_capacity: u64,
    fpr: f64,
    growth: f64,
    ratio: f64,
    seed: u64,
    isa: Option<Isa>,
}

impl Default for ScalableBuilder {
    fn default() -> ScalableBuilder {
        ScalableBuilder {
            initial_capacity: 1024,
            fpr: 0.01,
            growth: DEFAULT_GROWTH,
            ratio: DEFAULT_RATIO,
            seed: 0,
            isa: None,
        }
    }
}

impl ScalableBuilder {
    /// Keys of the first stage (default 1024).
    ///
    /// ```
    /// let f = blockbloom::ScalableBloomFilter::builder().initial_capacity(10).build()?;
    /// assert_eq!(f.stages()[0].capacity(), 10);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn initial_capacity(mut self, keys: u64) -> ScalableBuilder {
        self.initial_capacity = keys;
        self
    }

    /// Compound false-positive target `P` (default 0.01).
    ///
    /// ```
    /// let f = blockbloom::ScalableBloomFilter::builder().fpr(0.001).build()?;
    /// assert_eq!(f.target_fpr(), 0.001);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn fpr(mut self, fpr: f64) -> ScalableBuilder {
        self.fpr = fpr;
        self
    }

    /// Growth factor `s` of stage capacities, in `[1, 16]` (default 2).
    ///
    /// ```
    /// assert!(blockbloom::ScalableBloomFilter::builder().growth(0.5).build().is_err());
    /// ```
    pub fn growth(mut self, s: f64) -> ScalableBuilder {
        self.growth = s;
        self
    }

    /// Tightening ratio `r` of stage targets, in `(0, 1)` (default 0.85).
    ///
    /// ```
    /// assert!(blockbloom::ScalableBloomFilter::builder().ratio(1.0).build().is_err());
    /// ```
    pub fn ratio(mut self, r: f64) -> ScalableBuilder {
        self.ratio = r;
        self
    }

    /// Hash seed of every stage (default 0).
    ///
    /// ```
    /// let f = blockbloom::ScalableBloomFilter::builder().seed(4).build()?;
    /// assert_eq!(f.stages()[0].seed(), 4);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn seed(mut self, seed: u64) -> ScalableBuilder {
        self.seed = seed;
        self
    }

    /// A secret random seed for every stage, as [`Builder::keyed`](crate::Builder::keyed).
    #[cfg(feature = "std")]
    pub fn keyed(self) -> ScalableBuilder {
        self.seed(crate::hashing::random_seed())
    }

    /// Kernel tier of every stage (default: [`Isa::active`]).
    ///
    /// ```
    /// use blockbloom::Isa;
    /// let f = blockbloom::ScalableBloomFilter::builder().isa(Isa::Scalar).build()?;
    /// assert_eq!(f.stages()[0].isa(), Isa::Scalar);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn isa(mut self, isa: Isa) -> ScalableBuilder {
        self.isa = Some(isa);
        self
    }

    /// Validates the parameters and builds the first stage.
    ///
    /// # Errors
    /// [`Error::InvalidFpr`] unless `0 < fpr < 1`; [`Error::InvalidParameter`] for an initial
    /// capacity of 0, a growth factor outside `[1, 16]` or a ratio outside `(0, 1)`; the
    /// planner's and allocator's errors for the first stage.
    ///
    /// ```
    /// use blockbloom::{Error, ScalableBloomFilter};
    /// let err = ScalableBloomFilter::builder().ratio(f64::NAN).build().unwrap_err();
    /// assert!(matches!(err, Error::InvalidParameter { name: "ratio", .. }));
    /// ```
    pub fn build(self) -> Result<ScalableBloomFilter, Error> {
        validate(self.initial_capacity, self.fpr, self.growth, self.ratio)?;
        let isa = match self.isa {
            Some(isa) => isa,
            None => Isa::active()?,
        };
        let mut f = ScalableBloomFilter {
            stages: Vec::new(),
            initial_capacity: self.initial_capacity,
            growth: self.growth,
            ratio: self.ratio,
            target_fpr: self.fpr,
            seed: self.seed,
            len: 0,
            newest_len: 0,
        };
        f.open_stage(isa)?;
        Ok(f)
    }
}

fn validate(initial_capacity: u64, fpr: f64, growth: f64, ratio: f64) -> Result<(), Error> {
    if !(fpr > 0.0 && fpr < 1.0) {
        return Err(Error::InvalidFpr(fpr));
    }
    if initial_capacity == 0 {
        return Err(Error::InvalidParameter {
            name: "initial capacity",
            value: 0.0,
            expected: "at least 1 key",
        });
    }
    if !(1.0..=MAX_GROWTH).contains(&growth) {
        return Err(Error::InvalidParameter {
            name: "growth factor",
            value: growth,
            expected: "a number in [1, 16]",
        });
    }
    if !(ratio > 0.0 && ratio < 1.0) {
        return Err(Error::InvalidParameter {
            name: "ratio",
            value: ratio,
            expected: "a number in (0, 1)",
        });
    }
    Ok(())
}

impl ScalableBloomFilter {
    /// A filter whose first stage holds `initial_capacity` keys, for a compound
    /// false-positive target `fpr`, with the default growth (2) and ratio (0.85), seed 0.
    ///
    /// ```
    /// let f = blockbloom::ScalableBloomFilter::new(10_000, 0.01)?;
    /// assert_eq!(f.stages().len(), 1);
    /// assert_eq!(f.stages()[0].target_fpr(), Some(0.01 * (1.0 - 0.85)));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`ScalableBuilder::build`].
    pub fn new(initial_capacity: u64, fpr: f64) -> Result<ScalableBloomFilter, Error> {
        ScalableBuilder::default()
            .initial_capacity(initial_capacity)
            .fpr(fpr)
            .build()
    }

    /// A [`ScalableBuilder`] for growth, ratio, seed and kernel.
    ///
    /// ```
    /// let f = blockbloom::ScalableBloomFilter::builder().initial_capacity(50).build()?;
    /// assert_eq!(f.initial_capacity(), 50);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn builder() -> ScalableBuilder {
        ScalableBuilder::default()
    }

    /// Capacity and false-positive target of stage `i`: `ceil(n0 s^i)` and `P (1 - r) r^i`,
    /// by repeated multiplication (exact IEEE operations, so every platform computes the same
    /// schedule and a decoder can check it bit for bit).
    fn schedule(&self, i: usize) -> (u64, f64) {
        schedule(
            self.initial_capacity,
            self.growth,
            self.ratio,
            self.target_fpr,
            i,
        )
    }

    /// Opens the next stage. On error nothing changes.
    fn open_stage(&mut self, isa: Isa) -> Result<(), Error> {
        let (capacity, fpr) = self.schedule(self.stages.len());
        // Stages hash as the scalable filter does: XXH3 (`KeyHash::Xxh3`), its only hash, in the
        // layout of the least memory (its schedule of rates is sized on it).
        let stage = BloomFilter::builder()
            .capacity(capacity)
            .fpr(fpr)
            .least_memory()
            .key_hash(KeyHash::Xxh3)
            .seed(self.seed)
            .isa(isa)
            .build()?;
        self.stages
            .try_reserve(1)
            .map_err(|_| Error::AllocationFailed {
                bytes: core::mem::size_of::<BloomFilter>() as u128,
            })?;
        self.stages.push(stage);
        self.newest_len = 0;
        Ok(())
    }

    fn newest(&mut self) -> &mut BloomFilter {
        self.stages.last_mut().expect("never empty")
    }

    /// Inserts any [`Key`] unless the filter already contains it (then no capacity is
    /// used); returns whether it was new. Opens a stage when the newest is full.
    ///
    /// ```
    /// let mut f = blockbloom::ScalableBloomFilter::new(2, 0.01)?;
    /// for k in 0..10u64 {
    ///     assert!(f.insert(&k)?);
    /// }
    /// assert!(f.stages().len() >= 3); // 2 + 4 + 8 keys of capacity
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    ///
    /// # Errors
    /// The planner's or allocator's error when a new stage cannot be built (the key is then
    /// not inserted and nothing changes): [`Error::InvalidFpr`] once a stage's target falls
    /// below [`MIN_FPR`](crate::sizing::MIN_FPR), [`Error::TooManyBlocks`],
    /// [`Error::AllocationFailed`].
    pub fn insert<K: Key + ?Sized>(&mut self, key: &K) -> Result<bool, Error> {
        self.insert_hash(hash_key(key, self.seed))
    }

    /// Inserts a raw byte string, hashed exactly; returns whether it was new.
    ///
    /// ```
    /// let mut f = blockbloom::ScalableBloomFilter::new(100, 0.01)?;
    /// assert!(f.insert_bytes(b"k")?);
    /// assert!(f.contains_bytes(b"k"));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`insert`](Self::insert).
    pub fn insert_bytes(&mut self, bytes: &[u8]) -> Result<bool, Error> {
        self.insert_hash(hash_bytes(bytes, self.seed))
    }

    /// Inserts a pre-computed hash ([`hash`](Self::hash)); returns whether it was new.
    ///
    /// ```
    /// let mut f = blockbloom::ScalableBloomFilter::new(100, 0.01)?;
    /// let h = f.hash(&"k");
    /// assert!(f.insert_hash(h)?);
    /// assert!(f.contains(&"k"));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`insert`](Self::insert).
    pub fn insert_hash(&mut self, hash: u64) -> Result<bool, Error> {
        if self.contains_hash(hash) {
            return Ok(false);
        }
        self.add_new(hash)?;
        Ok(true)
    }

    /// Adds a hash known to be absent from every stage to the newest, opening one if full.
    fn add_new(&mut self, hash: u64) -> Result<(), Error> {
        // A stage's capacity is its schedule's (checked on decode).
        if self.newest_len >= self.stages.last().map_or(0, BloomFilter::capacity) {
            let isa = self.stages[0].isa();
            self.open_stage(isa)?;
        }
        self.newest().insert_hash(hash);
        self.newest_len += 1;
        self.len += 1;
        Ok(())
    }

    /// Inserts a batch of integer keys, each unless already contained, in order: the same
    /// result as inserting them one by one. The keys are hashed once in SIMD lanes and looked
    /// up in the full stages with the batch kernels. Returns how many were new.
    ///
    /// ```
    /// let mut f = blockbloom::ScalableBloomFilter::new(100, 0.01)?;
    /// assert_eq!(f.insert_batch(&[1u64, 2, 2, 3])?, 3);
    /// assert_eq!(f.len(), 3);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`insert`](Self::insert); the keys before the one that failed stay inserted.
    pub fn insert_batch<K: BatchKey>(&mut self, keys: &[K]) -> Result<usize, Error> {
        let mut hashes = [0u64; CHUNK];
        let mut found = [false; CHUNK];
        let mut new = 0;
        for chunk in keys.chunks(CHUNK) {
            let h = &mut hashes[..chunk.len()];
            let meta = self.stages[0].meta();
            meta.kernel
                .hash_keys(meta.shape.flip, K::as_keys(chunk).0, 0, h);
            let found = &mut found[..chunk.len()];
            found.fill(false);
            // Stages below the newest do not change during the chunk: batch their lookups.
            let full = self.stages.len() - 1;
            resolve(&self.stages[..full], h, found);
            for (&x, &f) in h.iter().zip(found.iter()) {
                if f || self.stages[full..].iter().rev().any(|s| s.contains_hash(x)) {
                    continue;
                }
                self.add_new(x)?;
                new += 1;
            }
        }
        Ok(new)
    }

    /// Whether the key may have been inserted (no false negatives; false positives at most
    /// about [`target_fpr`](Self::target_fpr)). Stages are checked newest (largest) first.
    ///
    /// ```
    /// let mut f = blockbloom::ScalableBloomFilter::new(100, 0.01)?;
    /// f.insert(&"x")?;
    /// assert!(f.contains(&"x"));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn contains<K: Key + ?Sized>(&self, key: &K) -> bool {
        self.contains_hash(hash_key(key, self.seed))
    }

    /// Whether a raw byte string may have been inserted.
    ///
    /// ```
    /// let f = blockbloom::ScalableBloomFilter::new(100, 0.01)?;
    /// assert!(!f.contains_bytes(b"never"));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn contains_bytes(&self, bytes: &[u8]) -> bool {
        self.contains_hash(hash_bytes(bytes, self.seed))
    }

    /// Whether a pre-computed hash may have been inserted.
    ///
    /// ```
    /// let mut f = blockbloom::ScalableBloomFilter::new(100, 0.01)?;
    /// f.insert_hash(77)?;
    /// assert!(f.contains_hash(77));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    #[inline]
    pub fn contains_hash(&self, hash: u64) -> bool {
        self.stages.iter().rev().any(|s| s.contains_hash(hash))
    }

    /// The hash every stage uses for `key` (seeded XXH3, as [`BloomFilter::hash`]).
    ///
    /// ```
    /// let f = blockbloom::ScalableBloomFilter::new(100, 0.01)?;
    /// assert_eq!(f.hash(&1u64), f.stages()[0].hash(&1u64));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn hash<K: Key + ?Sized>(&self, key: &K) -> u64 {
        hash_key(key, self.seed)
    }

    /// Answers a batch of integer keys into `out`: hashed once in SIMD lanes, then each stage,
    /// newest first, answers with its batch kernel only the keys still unresolved.
    ///
    /// # Panics
    /// If `out.len() != keys.len()`.
    ///
    /// ```
    /// let mut f = blockbloom::ScalableBloomFilter::new(10, 0.01)?;
    /// f.insert_batch(&(0..100u64).collect::<Vec<_>>())?;
    /// let mut out = [false; 3];
    /// f.contains_batch(&[0u64, 50, 99], &mut out);
    /// assert_eq!(out, [true; 3]);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn contains_batch<K: BatchKey>(&self, keys: &[K], out: &mut [bool]) {
        assert_eq!(
            keys.len(),
            out.len(),
            "output slice length must equal key count"
        );
        let mut hashes = [0u64; CHUNK];
        for (chunk, found) in keys.chunks(CHUNK).zip(out.chunks_mut(CHUNK)) {
            let h = &mut hashes[..chunk.len()];
            let meta = self.stages[0].meta();
            meta.kernel
                .hash_keys(meta.shape.flip, K::as_keys(chunk).0, 0, h);
            found.fill(false);
            resolve(&self.stages, h, found);
        }
    }

    /// How many keys of the batch may have been inserted.
    ///
    /// ```
    /// let mut f = blockbloom::ScalableBloomFilter::new(10, 0.01)?;
    /// f.insert_batch(&(0..100u32).collect::<Vec<_>>())?;
    /// assert_eq!(f.count_batch(&(0..100u32).collect::<Vec<_>>()), 100);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn count_batch<K: BatchKey>(&self, keys: &[K]) -> usize {
        let mut hashes = [0u64; CHUNK];
        let mut found = [false; CHUNK];
        let mut n = 0;
        for chunk in keys.chunks(CHUNK) {
            let h = &mut hashes[..chunk.len()];
            let meta = self.stages[0].meta();
            meta.kernel
                .hash_keys(meta.shape.flip, K::as_keys(chunk).0, 0, h);
            let found = &mut found[..chunk.len()];
            found.fill(false);
            resolve(&self.stages, h, found);
            n += found.iter().filter(|&&f| f).count();
        }
        n
    }

    /// Keys inserted (duplicates and keys already reported present are not counted).
    ///
    /// ```
    /// let mut f = blockbloom::ScalableBloomFilter::new(100, 0.01)?;
    /// f.insert(&1u64)?;
    /// f.insert(&1u64)?;
    /// assert_eq!(f.len(), 1);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether no key was inserted.
    ///
    /// ```
    /// assert!(blockbloom::ScalableBloomFilter::new(100, 0.01)?.is_empty());
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The stages, oldest (smallest) first.
    ///
    /// ```
    /// let f = blockbloom::ScalableBloomFilter::new(100, 0.01)?;
    /// assert_eq!(f.stages()[0].capacity(), 100);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn stages(&self) -> &[BloomFilter] {
        &self.stages
    }

    /// Keys the current stages hold before another is opened.
    ///
    /// ```
    /// let f = blockbloom::ScalableBloomFilter::new(100, 0.01)?;
    /// assert_eq!(f.capacity(), 100);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn capacity(&self) -> u64 {
        self.stages
            .iter()
            .map(BloomFilter::capacity)
            .fold(0u64, u64::saturating_add)
    }

    /// Bytes of all stages' blocks.
    ///
    /// ```
    /// let f = blockbloom::ScalableBloomFilter::new(1000, 0.01)?;
    /// assert_eq!(f.size_in_bytes(), f.stages()[0].size_in_bytes());
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn size_in_bytes(&self) -> usize {
        self.stages.iter().map(BloomFilter::size_in_bytes).sum()
    }

    /// Bits of filter per inserted key (of the first stage's capacity while empty).
    ///
    /// ```
    /// let f = blockbloom::ScalableBloomFilter::new(1000, 0.01)?;
    /// assert!(f.bits_per_key() > 10.0);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn bits_per_key(&self) -> f64 {
        let keys = if self.len == 0 {
            self.initial_capacity
        } else {
            self.len
        };
        self.size_in_bytes() as f64 * 8.0 / keys as f64
    }

    /// The compound false-positive rate as the filter is now: the sum of the stages' exact
    /// expected rates ([`BloomFilter::expected_fpr`]), an upper bound on the chance that a
    /// non-member is a false positive of some stage. Reads every block once.
    ///
    /// ```
    /// let mut f = blockbloom::ScalableBloomFilter::new(100, 0.01)?;
    /// f.insert_batch(&(0..10_000u64).collect::<Vec<_>>())?;
    /// assert!(f.expected_fpr() > 0.0 && f.expected_fpr() <= 0.01);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn expected_fpr(&self) -> f64 {
        self.stages.iter().map(BloomFilter::expected_fpr).sum()
    }

    /// The compound target `P`.
    ///
    /// ```
    /// assert_eq!(blockbloom::ScalableBloomFilter::new(1, 0.02)?.target_fpr(), 0.02);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn target_fpr(&self) -> f64 {
        self.target_fpr
    }

    /// The first stage's capacity `n0`.
    ///
    /// ```
    /// assert_eq!(blockbloom::ScalableBloomFilter::new(7, 0.01)?.initial_capacity(), 7);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn initial_capacity(&self) -> u64 {
        self.initial_capacity
    }

    /// The growth factor `s`.
    ///
    /// ```
    /// assert_eq!(blockbloom::ScalableBloomFilter::new(7, 0.01)?.growth(), 2.0);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn growth(&self) -> f64 {
        self.growth
    }

    /// The tightening ratio `r`.
    ///
    /// ```
    /// assert_eq!(blockbloom::ScalableBloomFilter::new(7, 0.01)?.ratio(), 0.85);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn ratio(&self) -> f64 {
        self.ratio
    }

    /// The hash seed of every stage.
    ///
    /// ```
    /// assert_eq!(blockbloom::ScalableBloomFilter::new(7, 0.01)?.seed(), 0);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn seed(&self) -> u64 {
        self.seed
    }
}

/// Stage `i`'s capacity and target.
fn schedule(n0: u64, growth: f64, ratio: f64, target: f64, i: usize) -> (u64, f64) {
    let mut capacity = n0 as f64;
    let mut fpr = target * (1.0 - ratio);
    for _ in 0..i {
        capacity *= growth;
        fpr *= ratio;
    }
    // `as` saturates: a capacity past u64 becomes u64::MAX, which the planner refuses.
    (capacity.ceil() as u64, fpr)
}

/// Marks `found[j]` for the hashes some stage contains, asking the stages newest first and
/// each only about the hashes still unresolved, with the batch kernels.
fn resolve(stages: &[BloomFilter], hashes: &[u64], found: &mut [bool]) {
    let mut pending = [0u64; CHUNK];
    let mut index = [0u16; CHUNK];
    let mut answer = [false; CHUNK];
    let mut n = 0;
    for (j, (&h, &f)) in hashes.iter().zip(found.iter()).enumerate() {
        if !f {
            pending[n] = h;
            index[n] = j as u16;
            n += 1;
        }
    }
    for stage in stages.iter().rev() {
        if n == 0 {
            return;
        }
        stage.contains_hash_batch(&pending[..n], &mut answer[..n]);
        let mut kept = 0;
        for t in 0..n {
            if answer[t] {
                found[index[t] as usize] = true;
            } else {
                pending[kept] = pending[t];
                index[kept] = index[t];
                kept += 1;
            }
        }
        n = kept;
    }
}

impl core::fmt::Debug for ScalableBloomFilter {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ScalableBloomFilter")
            .field("stages", &self.stages.len())
            .field("len", &self.len)
            .field("initial_capacity", &self.initial_capacity)
            .field("growth", &self.growth)
            .field("ratio", &self.ratio)
            .field("target_fpr", &self.target_fpr)
            .field("seed", &self.seed)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedule_targets_sum_below_p() {
        let (p, r) = (0.01, 0.85);
        let total: f64 = (0..200).map(|i| schedule(1, 2.0, r, p, i).1).sum();
        assert!(total <= p && total > 0.99 * p, "{total}");
        assert_eq!(schedule(1000, 2.0, r, p, 3).0, 8000);
        assert_eq!(schedule(3, 1.5, r, p, 1).0, 5); // ceil(4.5)
    }

    #[test]
    fn resolve_marks_exactly_the_contained() {
        let mut a = BloomFilter::with_capacity(100, 0.001).unwrap();
        let mut b = BloomFilter::with_capacity(200, 0.001).unwrap();
        let ha: Vec<u64> = (0..50u64).map(|k| a.hash(&k)).collect();
        let hb: Vec<u64> = (50..100u64).map(|k| b.hash(&k)).collect();
        a.insert_hash_batch(&ha);
        b.insert_hash_batch(&hb);
        let all: Vec<u64> = (0..200u64).map(|k| a.hash(&k)).collect();
        let mut found = vec![false; all.len()];
        resolve(&[a.clone(), b.clone()], &all, &mut found);
        for (k, &h) in all.iter().enumerate() {
            assert_eq!(found[k], a.contains_hash(h) || b.contains_hash(h), "{k}");
        }
    }
}
