//! [`CountingBloomFilter`]: the front-end over counter storage (the design is in its docs),
//! and its [`CountingBuilder`]. Its encoding is the family's (`crate::family::counting`).

// Without `std`, `f64` lacks `ln`, `exp`, ... (with it, or in tests, std's own are found).
#[cfg(not(any(feature = "std", test)))]
use crate::math::F64Math as _;

mod builder;
mod counters;

pub use builder::CountingBuilder;

use counters::{
    Decrement, Has, Increment, block_decrement, block_has, block_increment, block_min,
    block_min_increase, counter_mask, field_sum, full, project, run_op,
};

use super::storage::{Sealed, Storage};
use super::{BatchKey, Filter, Meta};
use crate::error::Error;
use crate::filter::BloomFilter;
use crate::hashing::hash_bytes;
use crate::kernel::{Keys, Sink};
use crate::key::Key;
use crate::layout::{Block, block_index, pattern_scalar};
use crate::memory::PageBuf;
use crate::sizing;

/// Width of a counting filter's counters.
///
/// Four bits is the classic choice (a counter overflows only after 15 increments, which for
/// a set of distinct keys is vanishingly rare); eight bits hold multisets with repeats at
/// twice the memory. `blockbloom-perf family` measures both.
///
/// ```
/// use blockbloom::CounterBits;
/// assert_eq!((CounterBits::Four.bits(), CounterBits::Four.max()), (4, 15));
/// assert_eq!((CounterBits::Eight.bits(), CounterBits::Eight.max()), (8, 255));
/// ```
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CounterBits {
    /// 4-bit counters, 16 per word, saturating at 15.
    Four,
    /// 8-bit counters, 8 per word, saturating at 255.
    Eight,
}

impl CounterBits {
    /// Both widths.
    pub const ALL: [CounterBits; 2] = [CounterBits::Four, CounterBits::Eight];

    /// Bits per counter.
    pub const fn bits(self) -> u32 {
        match self {
            CounterBits::Four => 4,
            CounterBits::Eight => 8,
        }
    }

    /// The largest count a counter holds; a counter at it is saturated (sticky).
    pub const fn max(self) -> u32 {
        (1 << self.bits()) - 1
    }
}

impl core::fmt::Display for CounterBits {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}-bit", self.bits())
    }
}

/// Runs `$f::<4>` or `$f::<8>` for the counter width.
macro_rules! by_width {
    ($bits:expr, $f:ident ( $($arg:expr),* )) => {
        match $bits {
            CounterBits::Four => $f::<4>($($arg),*),
            CounterBits::Eight => $f::<8>($($arg),*),
        }
    };
}

/// A counting Bloom filter: blocked like [`BloomFilter`] (one 64-byte block per key), with a
/// small saturating counter where the plain filter has a bit, so keys can be removed, and the
/// smallest of a key's counters estimates how often it was inserted.
///
/// The filter is the plain engine with wider positions. A key's hash picks one 64-byte
/// [`Block`] and `k` probe positions in it exactly as the plain filter does
/// ([`crate::layout::probe`]); probe `j` at bit `b` of word `w` owns the counter in the
/// `c`-bit field of word `w` that contains bit `b`, i.e. bits `[b & !(c - 1), + c)`, for a
/// counter width `c` of 4 or 8 bits ([`CounterBits`]). So a word holds `64 / c` counters, a
/// key's counters are a *set* (two probes in one field count once), and the projection to a
/// plain filter ([`CountingBloomFilter::to_bloom`]) is "every nonzero field becomes all ones",
/// which answers exactly as the counting filter does.
///
/// Every block operation works on whole words: a key's probes become a mask with the low bit
/// of each of its fields set, and "which fields are nonzero / full" is a few shifts and ORs
/// per word, so insert, remove and query are branch-free over the 8 words of the block (which
/// the compiler vectorises). Batches run in the engine's kernel tiers: the tier builds each
/// key's probe pattern in its lanes and applies these word operations inside its
/// `#[target_feature]` function, so they compile to that tier's vectors; single-key calls
/// compute the pattern one probe at a time, to the same result.
///
/// * A counter that reaches its maximum (15 or 255) stays there ("sticky"): it is never
///   incremented past it nor decremented, so removing a key that was inserted can never make
///   another inserted key disappear.
/// * `remove` of a key with a zero counter is [`Error::NotPresent`] and changes nothing. A key
///   that was never inserted but whose counters are all nonzero (a false positive, about
///   [`model_fpr`](CountingBloomFilter::model_fpr) of them) cannot be told apart from a member;
///   removing it takes one count from other keys' counters, as in every counting filter.
///
/// Sizing is the plain filter's exact model with `sector_bits / c` positions per sector
/// ([`crate::sizing`]), with the same margin rule.
///
/// Use it for a set that changes, such as the live flows of a packet filter or the keys of
/// a cache that evicts: insert on arrival, remove on expiry, and every query reads one cache
/// line.
///
/// ```
/// use blockbloom::{CountingBloomFilter, Error};
///
/// let mut f = CountingBloomFilter::with_capacity(100_000, 0.01)?; // 4-bit counters
/// f.insert(&"flow-1");
/// f.insert_batch(&[1u64, 2, 3]);
/// assert!(f.contains(&"flow-1") && f.contains(&2u64));
/// f.remove(&"flow-1")?;
/// assert!(!f.contains(&"flow-1"));
/// assert_eq!(f.remove(&"never inserted"), Err(Error::NotPresent));
/// let plain = f.to_bloom(); // the same answers from a plain filter
/// assert!(plain.contains(&3u64));
/// # Ok::<(), blockbloom::Error>(())
/// ```
///
/// The queries and accessors are [`Filter`]'s, shared with the plain filters; the counters
/// answer them ([`Counters`]).
///
/// `Send` and `Sync`: share it across threads for queries; inserts and removals take
/// `&mut self`.
pub type CountingBloomFilter = Filter<Counters>;

/// The storage of a [`CountingBloomFilter`]: blocks of `c`-bit counters.
#[derive(Clone)]
pub struct Counters {
    blocks: PageBuf<Block>,
    bits: CounterBits,
    min_increase: bool,
}

impl Sealed for Counters {}

impl Storage for Counters {
    fn query(&self, meta: &Meta, keys: Keys<'_>, sink: Sink<'_>) {
        by_width!(self.bits, run_op(*meta, keys, Has(&self.blocks), sink))
    }

    #[inline]
    fn contains_hash(&self, meta: &Meta, hash: u64) -> bool {
        fn go<const C: u32>(blocks: &[Block], meta: &Meta, hash: u64) -> bool {
            let i = block_index(hash, meta.shape.num_blocks);
            block_has::<C>(&blocks[i], &mask::<C>(meta, hash))
        }
        by_width!(self.bits, go(&self.blocks, meta, hash))
    }

    /// The plain filter's exact model with `sector_bits / counter_bits` positions per sector.
    fn model_fpr(&self, meta: &Meta, keys: u64) -> f64 {
        sizing::false_positive_rate_units(
            keys,
            meta.shape.num_blocks,
            meta.shape.layout,
            meta.probes(),
            self.bits.bits(),
        )
    }
}

/// The counter mask of `hash`'s probes.
#[inline(always)]
fn mask<const C: u32>(meta: &Meta, hash: u64) -> [u64; 8] {
    let shape = &meta.shape;
    counter_mask::<C>(&pattern_scalar(shape.layout, hash as u32, shape.probes()))
}

impl CountingBloomFilter {
    /// A filter of these counters with `meta` (which must describe them).
    pub(crate) fn from_counters(
        blocks: PageBuf<Block>,
        meta: Meta,
        bits: CounterBits,
        min_increase: bool,
    ) -> CountingBloomFilter {
        assert_eq!(blocks.len() as u64, meta.shape.num_blocks, "filter shape");
        Filter {
            store: Counters {
                blocks,
                bits,
                min_increase,
            },
            meta,
        }
    }

    /// The smallest filter of 4-bit counters that holds `capacity` keys at a false-positive
    /// rate at or below `fpr` (the exact model of this layout, margin included), seed 0.
    ///
    /// ```
    /// let f = blockbloom::CountingBloomFilter::with_capacity(1_000_000, 0.01)?;
    /// assert_eq!(f.counter_bits(), blockbloom::CounterBits::Four);
    /// assert!(f.model_fpr(1_000_000) <= 0.01);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidFpr`], [`Error::TooManyBlocks`], [`Error::AllocationFailed`], or a
    /// kernel error if `BLOCKBLOOM_ISA` is invalid.
    pub fn with_capacity(capacity: u64, fpr: f64) -> Result<CountingBloomFilter, Error> {
        CountingBuilder::new().capacity(capacity).fpr(fpr).build()
    }

    /// A [`CountingBuilder`] for counter width, layout, probe count, seed and kernel.
    ///
    /// ```
    /// use blockbloom::{CounterBits, CountingBloomFilter};
    /// let f = CountingBloomFilter::builder()
    ///     .capacity(10_000)
    ///     .fpr(0.001)
    ///     .counter_bits(CounterBits::Eight)
    ///     .seed(7)
    ///     .build()?;
    /// assert_eq!((f.counter_bits(), f.seed()), (CounterBits::Eight, 7));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn builder() -> CountingBuilder {
        CountingBuilder::new()
    }

    #[inline(always)]
    fn slot(&self, hash: u64) -> usize {
        block_index(hash, self.meta.shape.num_blocks)
    }

    #[inline(always)]
    fn mask<const C: u32>(&self, hash: u64) -> [u64; 8] {
        mask::<C>(&self.meta, hash)
    }

    /// Adds one to each of the key's counters (a saturated counter stays at its maximum).
    ///
    /// ```
    /// let mut f = blockbloom::CountingBloomFilter::with_capacity(100, 0.01)?;
    /// f.insert(&7u64);
    /// f.insert(&7u64);
    /// assert_eq!(f.estimate_count(&7u64), 2);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    #[inline]
    pub fn insert<K: Key + ?Sized>(&mut self, key: &K) {
        self.insert_hash(self.hash(key))
    }

    /// Inserts a raw byte string, hashed exactly as [`BloomFilter::insert_bytes`] does.
    ///
    /// ```
    /// let mut f = blockbloom::CountingBloomFilter::with_capacity(100, 0.01)?;
    /// f.insert_bytes(b"10.0.0.1");
    /// assert!(f.contains_bytes(b"10.0.0.1"));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    #[inline]
    pub fn insert_bytes(&mut self, bytes: &[u8]) {
        self.insert_hash(hash_bytes(bytes, self.meta.seed))
    }

    /// Inserts a pre-computed 64-bit hash (well mixed in all 64 bits).
    ///
    /// ```
    /// let mut f = blockbloom::CountingBloomFilter::with_capacity(100, 0.01)?;
    /// let h = f.hash(&"key");
    /// f.insert_hash(h);
    /// assert!(f.contains(&"key"));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    #[inline]
    pub fn insert_hash(&mut self, hash: u64) {
        fn go<const C: u32>(f: &mut CountingBloomFilter, hash: u64) {
            let m = f.mask::<C>(hash);
            let i = f.slot(hash);
            block_increment::<C>(&mut f.store.blocks[i], &m);
        }
        by_width!(self.store.bits, go(self, hash))
    }

    /// Takes one from each of the key's counters that is not saturated.
    ///
    /// # Errors
    /// [`Error::NotPresent`] if one of the key's counters is zero (it was never inserted, or
    /// already removed as often as inserted); [`Error::RemoveAfterMinIncrease`] after any
    /// [`insert_min_increase`](Self::insert_min_increase). Either way nothing changes.
    ///
    /// ```
    /// use blockbloom::{CountingBloomFilter, Error};
    /// let mut f = CountingBloomFilter::with_capacity(100, 0.01)?;
    /// f.insert(&"a");
    /// f.remove(&"a")?;
    /// assert_eq!(f.remove(&"a"), Err(Error::NotPresent));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    #[inline]
    pub fn remove<K: Key + ?Sized>(&mut self, key: &K) -> Result<(), Error> {
        self.remove_hash(self.hash(key))
    }

    /// Removes a raw byte string inserted with [`insert_bytes`](Self::insert_bytes).
    ///
    /// # Errors
    /// As [`remove`](Self::remove).
    ///
    /// ```
    /// let mut f = blockbloom::CountingBloomFilter::with_capacity(100, 0.01)?;
    /// f.insert_bytes(b"k");
    /// f.remove_bytes(b"k")?;
    /// assert!(!f.contains_bytes(b"k"));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    #[inline]
    pub fn remove_bytes(&mut self, bytes: &[u8]) -> Result<(), Error> {
        self.remove_hash(hash_bytes(bytes, self.meta.seed))
    }

    /// Removes a pre-computed hash.
    ///
    /// # Errors
    /// As [`remove`](Self::remove).
    ///
    /// ```
    /// let mut f = blockbloom::CountingBloomFilter::with_capacity(100, 0.01)?;
    /// f.insert_hash(42);
    /// f.remove_hash(42)?;
    /// assert!(f.remove_hash(42).is_err());
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    #[inline]
    pub fn remove_hash(&mut self, hash: u64) -> Result<(), Error> {
        fn go<const C: u32>(f: &mut CountingBloomFilter, hash: u64) -> bool {
            let m = f.mask::<C>(hash);
            let i = f.slot(hash);
            block_decrement::<C>(&mut f.store.blocks[i], &m)
        }
        if self.store.min_increase {
            return Err(Error::RemoveAfterMinIncrease);
        }
        if by_width!(self.store.bits, go(self, hash)) {
            Ok(())
        } else {
            Err(Error::NotPresent)
        }
    }

    /// The spectral estimate of the key's multiplicity: the smallest of its counters. It is
    /// never below the number of times the key was inserted and not removed (an upper bound);
    /// it is above it when other keys share all of the key's counters. A saturated minimum
    /// ([`CounterBits::max`]) means "at least that many".
    ///
    /// ```
    /// let mut f = blockbloom::CountingBloomFilter::with_capacity(1000, 0.01)?;
    /// for _ in 0..3 {
    ///     f.insert(&"x");
    /// }
    /// assert_eq!(f.estimate_count(&"x"), 3);
    /// assert_eq!(f.estimate_count(&"y"), 0); // or more, with probability about model_fpr
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    #[inline]
    pub fn estimate_count<K: Key + ?Sized>(&self, key: &K) -> u32 {
        self.estimate_count_hash(self.hash(key))
    }

    /// [`estimate_count`](Self::estimate_count) of a pre-computed hash.
    ///
    /// ```
    /// let mut f = blockbloom::CountingBloomFilter::with_capacity(100, 0.01)?;
    /// f.insert_hash(5);
    /// assert_eq!(f.estimate_count_hash(5), 1);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    #[inline]
    pub fn estimate_count_hash(&self, hash: u64) -> u32 {
        fn go<const C: u32>(f: &CountingBloomFilter, hash: u64) -> u32 {
            block_min::<C>(&f.store.blocks[f.slot(hash)], &f.mask::<C>(hash))
        }
        by_width!(self.store.bits, go(self, hash))
    }

    /// Minimum-increase insert (conservative update; Estan and Varghese 2002, Cohen and
    /// Matias 2003): raises only the key's counters that equal its current minimum. Its
    /// [`estimate_count`](Self::estimate_count) still never falls below the true count, and
    /// overestimates far less than after [`insert`](Self::insert), but counters no longer add
    /// up per key, so after it `remove` is [`Error::RemoveAfterMinIncrease`] (the flag is
    /// persisted; [`clear`](Self::clear) resets it).
    ///
    /// ```
    /// use blockbloom::{CountingBloomFilter, Error};
    /// let mut f = CountingBloomFilter::with_capacity(1000, 0.01)?;
    /// f.insert_min_increase(&"x");
    /// f.insert_min_increase(&"x");
    /// assert_eq!(f.estimate_count(&"x"), 2);
    /// assert_eq!(f.remove(&"x"), Err(Error::RemoveAfterMinIncrease));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    #[inline]
    pub fn insert_min_increase<K: Key + ?Sized>(&mut self, key: &K) {
        self.insert_min_increase_hash(self.hash(key))
    }

    /// [`insert_min_increase`](Self::insert_min_increase) of a pre-computed hash.
    ///
    /// ```
    /// let mut f = blockbloom::CountingBloomFilter::with_capacity(100, 0.01)?;
    /// f.insert_min_increase_hash(9);
    /// assert!(f.contains_hash(9) && f.min_increase_used());
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    #[inline]
    pub fn insert_min_increase_hash(&mut self, hash: u64) {
        fn go<const C: u32>(f: &mut CountingBloomFilter, hash: u64) {
            let m = f.mask::<C>(hash);
            let i = f.slot(hash);
            block_min_increase::<C>(&mut f.store.blocks[i], &m);
        }
        self.store.min_increase = true;
        by_width!(self.store.bits, go(self, hash))
    }

    /// Inserts a batch of integer keys, hashed in SIMD lanes; the same counters as inserting
    /// each with [`insert`](Self::insert).
    ///
    /// ```
    /// let mut f = blockbloom::CountingBloomFilter::with_capacity(1000, 0.01)?;
    /// f.insert_batch(&[1u64, 2, 2]);
    /// assert_eq!(f.estimate_count(&2u64), 2);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn insert_batch<K: BatchKey>(&mut self, keys: &[K]) {
        self.insert_keys(K::as_keys(keys).0)
    }

    /// Inserts a batch of pre-computed hashes.
    ///
    /// ```
    /// let mut f = blockbloom::CountingBloomFilter::with_capacity(100, 0.01)?;
    /// let hs = [f.hash(&"a"), f.hash(&"b")];
    /// f.insert_hash_batch(&hs);
    /// assert!(f.contains(&"a") && f.contains(&"b"));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn insert_hash_batch(&mut self, hashes: &[u64]) {
        self.insert_keys(Keys::Hashes(hashes))
    }

    fn insert_keys(&mut self, keys: Keys<'_>) {
        let meta = self.meta;
        let blocks = &mut self.store.blocks[..];
        by_width!(
            self.store.bits,
            run_op(meta, keys, Increment(blocks), Sink::Discard)
        );
    }

    /// Removes each key of the batch that is present, in order, as [`remove`](Self::remove)
    /// would; a key reported absent changes nothing and the batch goes on. Returns how many
    /// keys were removed (fewer than `keys.len()` means some were absent).
    ///
    /// # Errors
    /// [`Error::RemoveAfterMinIncrease`] (before anything changes).
    ///
    /// ```
    /// let mut f = blockbloom::CountingBloomFilter::with_capacity(100, 0.01)?;
    /// f.insert_batch(&[1u64, 2, 3]);
    /// assert_eq!(f.remove_batch(&[1u64, 2, 2])?, 2); // the second 2 is absent by then
    /// assert!(!f.contains(&1u64) && f.contains(&3u64));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn remove_batch<K: BatchKey>(&mut self, keys: &[K]) -> Result<usize, Error> {
        self.remove_keys(K::as_keys(keys).0)
    }

    /// [`remove_batch`](Self::remove_batch) of pre-computed hashes.
    ///
    /// # Errors
    /// As [`remove_batch`](Self::remove_batch).
    ///
    /// ```
    /// let mut f = blockbloom::CountingBloomFilter::with_capacity(100, 0.01)?;
    /// f.insert_hash_batch(&[1, 2]);
    /// assert_eq!(f.remove_hash_batch(&[1, 2])?, 2);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn remove_hash_batch(&mut self, hashes: &[u64]) -> Result<usize, Error> {
        self.remove_keys(Keys::Hashes(hashes))
    }

    fn remove_keys(&mut self, keys: Keys<'_>) -> Result<usize, Error> {
        if self.store.min_increase {
            return Err(Error::RemoveAfterMinIncrease);
        }
        let meta = self.meta;
        let mut removed = 0;
        let blocks = &mut self.store.blocks[..];
        by_width!(
            self.store.bits,
            run_op(meta, keys, Decrement(blocks), Sink::Count(&mut removed))
        );
        Ok(removed)
    }

    /// The plain filter with the same shape, seed and kernel whose bits are set exactly where
    /// this filter's counters are nonzero: its `contains` answers equal this filter's for
    /// every key, in the counters' memory size (a counting filter is sized for its wider
    /// positions, so the projection is a sparse plain filter).
    ///
    /// ```
    /// let mut f = blockbloom::CountingBloomFilter::with_capacity(1000, 0.01)?;
    /// f.insert_batch(&(0..1000u64).collect::<Vec<_>>());
    /// let plain = f.to_bloom();
    /// assert!((0..2000u64).all(|k| plain.contains(&k) == f.contains(&k)));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn to_bloom(&self) -> BloomFilter {
        fn go<const C: u32>(blocks: &PageBuf<Block>) -> PageBuf<Block> {
            let projected = blocks.iter().map(|b| Block(b.0.map(project::<C>)));
            PageBuf::collect(projected, blocks.huge())
        }
        let meta = Meta {
            target_fpr: None,
            ..self.meta
        };
        BloomFilter::from_parts(by_width!(self.store.bits, go(&self.store.blocks)), meta)
    }

    /// Sets every counter to zero and clears the minimum-increase flag, keeping the shape.
    ///
    /// ```
    /// let mut f = blockbloom::CountingBloomFilter::with_capacity(100, 0.01)?;
    /// f.insert_min_increase(&1u64);
    /// f.clear();
    /// assert!(!f.contains(&1u64) && !f.min_increase_used());
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn clear(&mut self) {
        self.store.blocks.fill(Block::ZERO);
        self.store.min_increase = false;
    }

    /// Counter width.
    ///
    /// ```
    /// let f = blockbloom::CountingBloomFilter::with_capacity(100, 0.01)?;
    /// assert_eq!(f.counter_bits().bits(), 4);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn counter_bits(&self) -> CounterBits {
        self.store.bits
    }

    /// Whether an [`insert_min_increase`](Self::insert_min_increase) happened (so `remove`
    /// is refused).
    ///
    /// ```
    /// let f = blockbloom::CountingBloomFilter::with_capacity(100, 0.01)?;
    /// assert!(!f.min_increase_used());
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn min_increase_used(&self) -> bool {
        self.store.min_increase
    }

    /// Bytes of the counters the kernel backs with transparent huge pages now (see
    /// [`BloomFilter::huge_page_bytes`](crate::BloomFilter::huge_page_bytes)).
    pub fn huge_page_bytes(&self) -> Option<u64> {
        crate::memory::huge_page_bytes(self.blocks())
    }

    /// The counters, as blocks of words (counter `i` of a word is bits `[c i, c (i + 1))`).
    ///
    /// ```
    /// let mut f = blockbloom::CountingBloomFilter::with_capacity(10, 0.01)?;
    /// f.insert(&1u64);
    /// assert!(f.blocks().iter().any(|b| b.0.iter().any(|&w| w != 0)));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn blocks(&self) -> &[Block] {
        &self.store.blocks
    }

    /// Counters at their maximum (sticky: no remove takes them down again).
    ///
    /// ```
    /// let mut f = blockbloom::CountingBloomFilter::with_capacity(100, 0.01)?;
    /// for _ in 0..20 {
    ///     f.insert(&"hot");
    /// }
    /// assert!(f.saturated_counters() > 0);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn saturated_counters(&self) -> u64 {
        fn go<const C: u32>(blocks: &[Block]) -> u64 {
            blocks
                .iter()
                .flat_map(|b| b.0)
                .map(|x| full::<C>(x).count_ones() as u64)
                .sum()
        }
        by_width!(self.store.bits, go(&self.store.blocks))
    }

    /// Sum of all counters (saturated ones count their maximum).
    ///
    /// ```
    /// let mut f = blockbloom::CountingBloomFilter::builder().capacity(100).probes(8).build()?;
    /// f.insert(&1u64);
    /// assert!((1..=8).contains(&f.total_count())); // 8 probes, merged where they share a counter
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn total_count(&self) -> u64 {
        fn go<const C: u32>(blocks: &[Block]) -> u64 {
            blocks.iter().flat_map(|b| b.0).map(field_sum::<C>).sum()
        }
        by_width!(self.store.bits, go(&self.store.blocks))
    }

    /// An estimate of the keys in the filter counted with multiplicity (inserts minus
    /// removes): [`total_count`](Self::total_count) over the expected number of distinct
    /// counters a key takes. It undercounts once counters saturate, and after
    /// minimum-increase inserts it counts less than the keys inserted.
    ///
    /// ```
    /// let mut f = blockbloom::CountingBloomFilter::with_capacity(100_000, 0.01)?;
    /// f.insert_batch(&(0..50_000u64).collect::<Vec<_>>());
    /// let est = f.estimated_len();
    /// assert!((est - 50_000.0).abs() < 500.0, "{est}");
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn estimated_len(&self) -> f64 {
        let layout = self.meta.shape.layout;
        let positions = (layout.sector_bits() / self.store.bits.bits()) as f64;
        let b = self.meta.shape.rounds as i32;
        let per_key = layout.sectors() as f64 * positions * (1.0 - (1.0 - 1.0 / positions).powi(b));
        self.total_count() as f64 / per_key
    }
}

impl PartialEq for CountingBloomFilter {
    /// Same shape, seed, counter width, flag and counters (the kernel does not matter).
    fn eq(&self, other: &CountingBloomFilter) -> bool {
        self.meta.shape == other.meta.shape
            && self.meta.seed == other.meta.seed
            && self.store.bits == other.store.bits
            && self.store.min_increase == other.store.min_increase
            && self.store.blocks == other.store.blocks
    }
}

impl Eq for CountingBloomFilter {}

impl core::fmt::Debug for CountingBloomFilter {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("CountingBloomFilter")
            .field("counter_bits", &self.store.bits)
            .field("num_blocks", &self.meta.shape.num_blocks)
            .field("layout", &self.meta.shape.layout)
            .field("probes", &self.probes())
            .field("seed", &self.meta.seed)
            .field("capacity", &self.meta.capacity)
            .field("min_increase", &self.store.min_increase)
            .finish_non_exhaustive()
    }
}
