//! [`CountingBloomFilter`] (the design is in its docs) and its [`CountingBuilder`].

use std::hash::Hash;
use std::io::{Read, Write};

use crate::codec::{Encoded, Envelope, Out, blocks_from_le, blocks_le, kind};
use crate::filter::{BatchKey, Meta, Options, allocate};
use crate::hashing::{hash_bytes, hash_key};
use crate::kernel::{BlockOp, Kernel, Keys, Probes, Sink};
use crate::layout::{Block, Layout, MAX_BLOCKS, block_index, pattern_scalar};
use crate::{BloomFilter, Error, Isa, sizing};

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

impl std::fmt::Display for CounterBits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
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

/// The low bit of every `C`-bit field of a word.
#[inline(always)]
const fn lows_of<const C: u32>() -> u64 {
    u64::MAX / ((1u64 << C) - 1)
}

/// The low bit of each nonzero field of `x`.
#[inline(always)]
fn nonzero<const C: u32>(x: u64) -> u64 {
    let mut y = x | x >> 1;
    y |= y >> 2;
    if C == 8 {
        y |= y >> 4;
    }
    y & lows_of::<C>()
}

/// The low bit of each saturated (all ones) field of `x`.
#[inline(always)]
fn full<const C: u32>(x: u64) -> u64 {
    let mut y = x & x >> 1;
    y &= y >> 2;
    if C == 8 {
        y &= y >> 4;
    }
    y & lows_of::<C>()
}

#[inline(always)]
pub(crate) fn block_has<const C: u32>(block: &Block, m: &[u64; 8]) -> bool {
    let mut missing = 0;
    for (x, &m) in block.0.iter().zip(m) {
        missing |= m & !nonzero::<C>(*x);
    }
    missing == 0
}

#[inline(always)]
pub(crate) fn block_increment<const C: u32>(block: &mut Block, m: &[u64; 8]) {
    for (x, &m) in block.0.iter_mut().zip(m) {
        // A field below its maximum takes +1 without carrying into the next one.
        *x += m & !full::<C>(*x);
    }
}

/// Decrements the key's unsaturated counters if all of them are nonzero; else nothing.
#[inline(always)]
pub(crate) fn block_decrement<const C: u32>(block: &mut Block, m: &[u64; 8]) -> bool {
    if !block_has::<C>(block, m) {
        return false;
    }
    for (x, &m) in block.0.iter_mut().zip(m) {
        // Every targeted field is nonzero, so -1 never borrows from the next one.
        *x -= m & !full::<C>(*x);
    }
    true
}

/// The smallest of the key's counters.
#[inline(always)]
fn block_min<const C: u32>(block: &Block, m: &[u64; 8]) -> u32 {
    let field = (1u64 << C) - 1;
    let mut min = field;
    for (x, &m) in block.0.iter().zip(m) {
        let mut bits = m;
        while bits != 0 {
            min = min.min(x >> bits.trailing_zeros() & field);
            bits &= bits - 1;
        }
    }
    min as u32
}

/// Conservative update: increments only the key's counters that equal its minimum.
#[inline(always)]
fn block_min_increase<const C: u32>(block: &mut Block, m: &[u64; 8]) {
    let field = (1u64 << C) - 1;
    let min = block_min::<C>(block, m) as u64;
    if min == field {
        return;
    }
    for (x, &m) in block.0.iter_mut().zip(m) {
        let mut bits = m;
        while bits != 0 {
            let s = bits.trailing_zeros();
            if *x >> s & field == min {
                *x += 1 << s;
            }
            bits &= bits - 1;
        }
    }
}

/// The plain filter's word for a counting word: every nonzero field all ones.
#[inline(always)]
fn project<const C: u32>(x: u64) -> u64 {
    nonzero::<C>(x) * ((1u64 << C) - 1)
}

/// Sum of the fields of `x`.
#[inline(always)]
fn field_sum<const C: u32>(x: u64) -> u64 {
    (0..C)
        .map(|t| ((x & lows_of::<C>() << t).count_ones() as u64) << t)
        .sum()
}

/// A key's counter masks from its plain pattern: the low bit of each field holding a set bit.
#[inline(always)]
pub(crate) fn counter_mask<const C: u32>(pattern: &Block) -> [u64; 8] {
    pattern.0.map(nonzero::<C>)
}

/// Runs a counter operation over a batch on the filter's kernel tier.
fn run_op<const C: u32>(
    meta: Meta,
    keys: Keys<'_>,
    op: impl BlockOp + CounterOp<C>,
    sink: Sink<'_>,
) {
    meta.kernel.blocks(&meta.shape, keys, op, sink)
}

/// A block operation on `C`-bit counters (ties the op to its width for [`run_op`]).
trait CounterOp<const C: u32> {}

/// Increments each key's unsaturated counters.
struct Increment<'a, const C: u32>(&'a mut [Block]);

/// Decrements each key's counters where all are nonzero; answers whether it did.
struct Decrement<'a, const C: u32>(&'a mut [Block]);

/// Whether all of each key's counters are nonzero.
struct Has<'a, const C: u32>(&'a [Block]);

impl<const C: u32> CounterOp<C> for Increment<'_, C> {}
impl<const C: u32> CounterOp<C> for Decrement<'_, C> {}
impl<const C: u32> CounterOp<C> for Has<'_, C> {}

impl<const C: u32> BlockOp for Increment<'_, C> {
    fn num_blocks(&self) -> usize {
        self.0.len()
    }

    fn base(&self) -> *const Block {
        self.0.as_ptr()
    }

    #[inline(always)]
    unsafe fn apply<P: Probes>(&mut self, i: usize, p: P) -> bool {
        let m = counter_mask::<C>(&p.pattern());
        // SAFETY: the caller guarantees `i < num_blocks()`.
        block_increment::<C>(unsafe { self.0.get_unchecked_mut(i) }, &m);
        false
    }
}

impl<const C: u32> BlockOp for Decrement<'_, C> {
    fn num_blocks(&self) -> usize {
        self.0.len()
    }

    fn base(&self) -> *const Block {
        self.0.as_ptr()
    }

    #[inline(always)]
    unsafe fn apply<P: Probes>(&mut self, i: usize, p: P) -> bool {
        let m = counter_mask::<C>(&p.pattern());
        // SAFETY: the caller guarantees `i < num_blocks()`.
        block_decrement::<C>(unsafe { self.0.get_unchecked_mut(i) }, &m)
    }
}

impl<const C: u32> BlockOp for Has<'_, C> {
    fn num_blocks(&self) -> usize {
        self.0.len()
    }

    fn base(&self) -> *const Block {
        self.0.as_ptr()
    }

    #[inline(always)]
    unsafe fn apply<P: Probes>(&mut self, i: usize, p: P) -> bool {
        let m = counter_mask::<C>(&p.pattern());
        // SAFETY: the caller guarantees `i < num_blocks()`.
        block_has::<C>(unsafe { self.0.get_unchecked(i) }, &m)
    }
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
#[derive(Clone)]
pub struct CountingBloomFilter {
    blocks: Vec<Block>,
    meta: Meta,
    bits: CounterBits,
    min_increase: bool,
}

impl CountingBloomFilter {
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

    /// The 64-bit hash this filter uses for `key` (seeded XXH3), the same as
    /// [`BloomFilter::hash`].
    ///
    /// ```
    /// let f = blockbloom::CountingBloomFilter::builder().capacity(10).seed(3).build()?;
    /// assert_eq!(f.hash(&9u64), blockbloom::hash::hash_u64(9, 3));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    #[inline]
    pub fn hash<K: Hash + ?Sized>(&self, key: &K) -> u64 {
        hash_key(key, self.meta.seed)
    }

    #[inline(always)]
    fn slot(&self, hash: u64) -> usize {
        block_index(hash, self.meta.shape.num_blocks)
    }

    #[inline(always)]
    fn mask<const C: u32>(&self, hash: u64) -> [u64; 8] {
        let shape = &self.meta.shape;
        counter_mask::<C>(&pattern_scalar(shape.layout, hash as u32, shape.probes()))
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
    pub fn insert<K: Hash + ?Sized>(&mut self, key: &K) {
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
            block_increment::<C>(&mut f.blocks[i], &m);
        }
        by_width!(self.bits, go(self, hash))
    }

    /// Whether the key may be in the filter: all its counters are nonzero (no false negatives
    /// for keys inserted and not removed; false positives at about
    /// [`model_fpr`](Self::model_fpr)).
    ///
    /// ```
    /// let mut f = blockbloom::CountingBloomFilter::with_capacity(100, 0.01)?;
    /// f.insert(&1u32);
    /// assert!(f.contains(&1u32));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    #[inline]
    pub fn contains<K: Hash + ?Sized>(&self, key: &K) -> bool {
        self.contains_hash(self.hash(key))
    }

    /// Whether a raw byte string may have been inserted with
    /// [`insert_bytes`](Self::insert_bytes).
    ///
    /// ```
    /// let f = blockbloom::CountingBloomFilter::with_capacity(100, 0.01)?;
    /// assert!(!f.contains_bytes(b"k"));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    #[inline]
    pub fn contains_bytes(&self, bytes: &[u8]) -> bool {
        self.contains_hash(hash_bytes(bytes, self.meta.seed))
    }

    /// Whether a pre-computed hash may be in the filter.
    ///
    /// ```
    /// let mut f = blockbloom::CountingBloomFilter::with_capacity(100, 0.01)?;
    /// f.insert_hash(0x0123_4567_89ab_cdef);
    /// assert!(f.contains_hash(0x0123_4567_89ab_cdef));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    #[inline]
    pub fn contains_hash(&self, hash: u64) -> bool {
        fn go<const C: u32>(f: &CountingBloomFilter, hash: u64) -> bool {
            block_has::<C>(&f.blocks[f.slot(hash)], &f.mask::<C>(hash))
        }
        by_width!(self.bits, go(self, hash))
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
    pub fn remove<K: Hash + ?Sized>(&mut self, key: &K) -> Result<(), Error> {
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
            block_decrement::<C>(&mut f.blocks[i], &m)
        }
        if self.min_increase {
            return Err(Error::RemoveAfterMinIncrease);
        }
        if by_width!(self.bits, go(self, hash)) {
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
    pub fn estimate_count<K: Hash + ?Sized>(&self, key: &K) -> u32 {
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
            block_min::<C>(&f.blocks[f.slot(hash)], &f.mask::<C>(hash))
        }
        by_width!(self.bits, go(self, hash))
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
    pub fn insert_min_increase<K: Hash + ?Sized>(&mut self, key: &K) {
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
            block_min_increase::<C>(&mut f.blocks[i], &m);
        }
        self.min_increase = true;
        by_width!(self.bits, go(self, hash))
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
        let blocks = &mut self.blocks[..];
        by_width!(
            self.bits,
            run_op(meta, keys, Increment(blocks), Sink::Discard)
        );
    }

    /// Answers a batch of integer keys into `out` (`out[i]` for `keys[i]`).
    ///
    /// # Panics
    /// If `out.len() != keys.len()`.
    ///
    /// ```
    /// let mut f = blockbloom::CountingBloomFilter::with_capacity(100, 0.01)?;
    /// f.insert_batch(&[1u64, 2]);
    /// let mut out = [false; 3];
    /// f.contains_batch(&[1u64, 2, 3], &mut out);
    /// assert!(out[0] && out[1]);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn contains_batch<K: BatchKey>(&self, keys: &[K], out: &mut [bool]) {
        assert_eq!(
            out.len(),
            keys.len(),
            "output slice length must equal key count"
        );
        self.query_keys(K::as_keys(keys).0, Sink::Each(out))
    }

    /// How many keys of the batch may be in the filter.
    ///
    /// ```
    /// let mut f = blockbloom::CountingBloomFilter::with_capacity(100, 0.01)?;
    /// f.insert_batch(&[10u32, 20, 30]);
    /// assert!(f.count_batch(&[10u32, 20, 30, 40]) >= 3);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn count_batch<K: BatchKey>(&self, keys: &[K]) -> usize {
        let mut n = 0;
        self.query_keys(K::as_keys(keys).0, Sink::Count(&mut n));
        n
    }

    /// Answers a batch of pre-computed hashes into `out`.
    ///
    /// # Panics
    /// If `out.len() != hashes.len()`.
    ///
    /// ```
    /// let mut f = blockbloom::CountingBloomFilter::with_capacity(100, 0.01)?;
    /// f.insert_hash(7);
    /// let mut out = [false; 1];
    /// f.contains_hash_batch(&[7], &mut out);
    /// assert!(out[0]);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn contains_hash_batch(&self, hashes: &[u64], out: &mut [bool]) {
        assert_eq!(
            out.len(),
            hashes.len(),
            "output slice length must equal key count"
        );
        self.query_keys(Keys::Hashes(hashes), Sink::Each(out))
    }

    fn query_keys(&self, keys: Keys<'_>, sink: Sink<'_>) {
        by_width!(self.bits, run_op(self.meta, keys, Has(&self.blocks), sink));
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
        if self.min_increase {
            return Err(Error::RemoveAfterMinIncrease);
        }
        let meta = self.meta;
        let mut removed = 0;
        let blocks = &mut self.blocks[..];
        by_width!(
            self.bits,
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
        fn go<const C: u32>(blocks: &[Block]) -> Vec<Block> {
            blocks
                .iter()
                .map(|b| Block(b.0.map(project::<C>)))
                .collect()
        }
        let meta = Meta {
            target_fpr: None,
            ..self.meta
        };
        BloomFilter::from_parts(by_width!(self.bits, go(&self.blocks)), meta)
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
        self.blocks.fill(Block::ZERO);
        self.min_increase = false;
    }

    /// Counter width.
    ///
    /// ```
    /// let f = blockbloom::CountingBloomFilter::with_capacity(100, 0.01)?;
    /// assert_eq!(f.counter_bits().bits(), 4);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn counter_bits(&self) -> CounterBits {
        self.bits
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
        self.min_increase
    }

    /// Bytes of counters.
    ///
    /// ```
    /// let f = blockbloom::CountingBloomFilter::with_capacity(1000, 0.01)?;
    /// assert_eq!(f.size_in_bytes() as u64, 64 * f.num_blocks());
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn size_in_bytes(&self) -> usize {
        self.blocks.len() * std::mem::size_of::<Block>()
    }

    /// Number of 64-byte blocks.
    ///
    /// ```
    /// let f = blockbloom::CountingBloomFilter::with_capacity(1000, 0.01)?;
    /// assert!(f.num_blocks() > 0);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn num_blocks(&self) -> u64 {
        self.meta.shape.num_blocks
    }

    /// Probes (counters) per key, before two probes in one counter merge.
    ///
    /// ```
    /// let f = blockbloom::CountingBloomFilter::builder().capacity(1000).probes(8).build()?;
    /// assert_eq!(f.probes(), 8);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn probes(&self) -> u32 {
        self.meta.probes()
    }

    /// How the probes spread over a block.
    ///
    /// ```
    /// use blockbloom::{layout::Layout, CountingBloomFilter};
    /// let f = CountingBloomFilter::builder().capacity(1000).layout(Layout::Sectors4x128).build()?;
    /// assert_eq!(f.layout(), Layout::Sectors4x128);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn layout(&self) -> Layout {
        self.meta.shape.layout
    }

    /// Hash seed.
    ///
    /// ```
    /// let f = blockbloom::CountingBloomFilter::builder().capacity(10).seed(5).build()?;
    /// assert_eq!(f.seed(), 5);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn seed(&self) -> u64 {
        self.meta.seed
    }

    /// The key count the filter was sized for.
    ///
    /// ```
    /// let f = blockbloom::CountingBloomFilter::with_capacity(1234, 0.01)?;
    /// assert_eq!(f.capacity(), 1234);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn capacity(&self) -> u64 {
        self.meta.capacity
    }

    /// The kernel tier batch hashing runs on.
    ///
    /// ```
    /// use blockbloom::{CountingBloomFilter, Isa};
    /// let f = CountingBloomFilter::builder().capacity(10).isa(Isa::Scalar).build()?;
    /// assert_eq!(f.isa(), Isa::Scalar);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn isa(&self) -> Isa {
        self.meta.kernel.isa()
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
        &self.blocks
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
        by_width!(self.bits, go(&self.blocks))
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
        by_width!(self.bits, go(&self.blocks))
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
        let positions = (layout.sector_bits() / self.bits.bits()) as f64;
        let b = self.meta.shape.rounds as i32;
        let per_key = layout.sectors() as f64 * positions * (1.0 - (1.0 - 1.0 / positions).powi(b));
        self.total_count() as f64 / per_key
    }

    /// The model's false-positive rate once `keys` distinct keys are in the filter: the
    /// plain filter's exact model with `sector_bits / counter_bits` positions per sector.
    ///
    /// ```
    /// let f = blockbloom::CountingBloomFilter::with_capacity(10_000, 0.01)?;
    /// assert!(f.model_fpr(10_000) <= 0.01 && f.model_fpr(20_000) > 0.01);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn model_fpr(&self, keys: u64) -> f64 {
        sizing::false_positive_rate_units(
            keys,
            self.meta.shape.num_blocks,
            self.meta.shape.layout,
            self.probes(),
            self.bits.bits(),
        )
    }

    /// Bytes of this filter's encoding: the 64-byte header plus the counters.
    ///
    /// ```
    /// let f = blockbloom::CountingBloomFilter::with_capacity(100, 0.01)?;
    /// assert_eq!(f.encoded_len(), f.to_bytes().len());
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn encoded_len(&self) -> usize {
        <Self as Encoded>::encoded_len(self)
    }

    /// The filter in the format family's envelope (layout id 16, `docs/FORMAT.md`).
    ///
    /// ```
    /// use blockbloom::CountingBloomFilter;
    /// let mut f = CountingBloomFilter::with_capacity(1000, 0.01)?;
    /// f.insert(&"k");
    /// let g = CountingBloomFilter::from_bytes(&f.to_bytes())?;
    /// assert_eq!(f, g);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn to_bytes(&self) -> Vec<u8> {
        <Self as Encoded>::to_bytes(self)
    }

    /// Writes the encoding to `w`.
    ///
    /// # Errors
    /// [`Error::Io`] if `w` fails.
    ///
    /// ```
    /// let f = blockbloom::CountingBloomFilter::with_capacity(100, 0.01)?;
    /// let mut file = Vec::new();
    /// f.write_to(&mut file)?;
    /// assert_eq!(file, f.to_bytes());
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn write_to<W: Write>(&self, w: W) -> Result<(), Error> {
        <Self as Encoded>::write_to(self, w)
    }

    /// Decodes exactly one counting filter from `bytes`, on the active kernel.
    ///
    /// # Errors
    /// The envelope's errors ([`Error::BadMagic`], [`Error::UnsupportedVersion`],
    /// [`Error::WrongKind`], [`Error::UnsupportedLayout`], [`Error::UnsupportedHash`],
    /// [`Error::Truncated`], [`Error::TrailingBytes`], [`Error::ChecksumMismatch`]), then
    /// [`Error::InvalidHeader`] for a counter width, flag, block count, layout or probe count
    /// out of range or a body that is not the blocks; [`Error::AllocationFailed`]. Never a
    /// panic.
    ///
    /// ```
    /// use blockbloom::{BloomFilter, CountingBloomFilter, Error};
    /// let plain = BloomFilter::with_capacity(100, 0.01)?.to_bytes();
    /// assert!(matches!(CountingBloomFilter::from_bytes(&plain), Err(Error::WrongKind { .. })));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<CountingBloomFilter, Error> {
        <Self as Encoded>::from_bytes(bytes)
    }

    /// Reads exactly one counting filter from `r` (which may hold more after it); memory
    /// grows with the bytes actually read.
    ///
    /// # Errors
    /// As [`from_bytes`](Self::from_bytes) (but not `TrailingBytes`), plus [`Error::Io`].
    ///
    /// ```
    /// let f = blockbloom::CountingBloomFilter::with_capacity(100, 0.01)?;
    /// let bytes = f.to_bytes();
    /// let g = blockbloom::CountingBloomFilter::read_from(&bytes[..])?;
    /// assert_eq!(f, g);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn read_from<R: Read>(r: R) -> Result<CountingBloomFilter, Error> {
        <Self as Encoded>::read_from(r)
    }
}

impl Encoded for CountingBloomFilter {
    const KIND: u8 = kind::COUNTING;

    fn envelope(&self) -> Envelope {
        let layout_id = match self.meta.shape.layout {
            Layout::Sectors8x64 => kind::PLAIN_8X64,
            Layout::Sectors4x128 => kind::PLAIN_4X128,
        };
        Envelope {
            kind: kind::COUNTING,
            param: self.bits.bits() as u8
                | if self.min_increase {
                    FLAG_MIN_INCREASE
                } else {
                    0
                },
            seed: self.meta.seed,
            fields: [
                self.meta.shape.num_blocks,
                layout_id as u64 | (self.probes() as u64) << 8,
                self.meta.capacity,
            ],
        }
    }

    fn body_len(&self) -> usize {
        self.size_in_bytes()
    }

    fn body(&self, out: &mut Out<'_>) -> Result<(), Error> {
        blocks_le(&self.blocks, out)
    }

    fn from_parts(env: Envelope, body: &[u8]) -> Result<CountingBloomFilter, Error> {
        let bits = match env.param & !FLAG_MIN_INCREASE {
            4 => CounterBits::Four,
            8 => CounterBits::Eight,
            _ => {
                return Err(Error::InvalidHeader(
                    "counting filter: the parameter byte must be 4 or 8 counter bits, plus \
                     flag 0x80",
                ));
            }
        };
        let [num_blocks, shape, capacity] = env.fields;
        if num_blocks == 0 || num_blocks > MAX_BLOCKS {
            return Err(Error::InvalidHeader(
                "counting filter: block count must be in 1..=2^32",
            ));
        }
        let layout = match shape & 0xff {
            x if x == kind::PLAIN_8X64 as u64 => Layout::Sectors8x64,
            x if x == kind::PLAIN_4X128 as u64 => Layout::Sectors4x128,
            _ => {
                return Err(Error::InvalidHeader(
                    "counting filter: layout must be 1 (8x64) or 2 (4x128)",
                ));
            }
        };
        let probes = (shape >> 8) & 0xff;
        if shape >> 16 != 0 || !layout.supports_probes(probes as u32) {
            return Err(Error::InvalidHeader(
                "counting filter: probe count does not fit the layout",
            ));
        }
        if body.len() as u128 != num_blocks as u128 * 64 {
            return Err(Error::InvalidHeader(
                "counting filter: body length is not 64 bytes per block",
            ));
        }
        let kernel = Kernel::get(Isa::active()?)?;
        let mut blocks = Vec::new();
        blocks
            .try_reserve_exact(num_blocks as usize)
            .map_err(|_| Error::AllocationFailed {
                bytes: body.len() as u128,
            })?;
        blocks_from_le(body, &mut blocks);
        Ok(CountingBloomFilter {
            blocks,
            meta: Meta::new(
                num_blocks,
                layout,
                probes as u32,
                env.seed,
                capacity,
                None,
                kernel,
            ),
            bits,
            min_increase: env.param & FLAG_MIN_INCREASE != 0,
        })
    }
}

/// Parameter-byte flag: the filter has had minimum-increase inserts.
const FLAG_MIN_INCREASE: u8 = 0x80;

impl PartialEq for CountingBloomFilter {
    /// Same shape, seed, counter width, flag and counters (the kernel does not matter).
    fn eq(&self, other: &CountingBloomFilter) -> bool {
        self.meta.shape == other.meta.shape
            && self.meta.seed == other.meta.seed
            && self.bits == other.bits
            && self.min_increase == other.min_increase
            && self.blocks == other.blocks
    }
}

impl Eq for CountingBloomFilter {}

impl std::fmt::Debug for CountingBloomFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CountingBloomFilter")
            .field("counter_bits", &self.bits)
            .field("num_blocks", &self.meta.shape.num_blocks)
            .field("layout", &self.meta.shape.layout)
            .field("probes", &self.probes())
            .field("seed", &self.meta.seed)
            .field("capacity", &self.meta.capacity)
            .field("min_increase", &self.min_increase)
            .finish_non_exhaustive()
    }
}

/// Options for a [`CountingBloomFilter`]: capacity and target false-positive rate, counter
/// width, and optionally layout, probe count, seed and kernel.
///
/// ```
/// use blockbloom::{layout::Layout, CounterBits, CountingBloomFilter};
/// let f = CountingBloomFilter::builder()
///     .capacity(50_000)              // required
///     .fpr(0.001)                    // default 0.01
///     .counter_bits(CounterBits::Eight) // default Four
///     .layout(Layout::Sectors4x128)  // default: the sizing model's choice
///     .seed(1)                       // default 0
///     .build()?;
/// assert!(f.model_fpr(50_000) <= 0.001);
/// # Ok::<(), blockbloom::Error>(())
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct CountingBuilder {
    opts: Options,
    bits: CounterBits,
}

impl Default for CountingBuilder {
    fn default() -> CountingBuilder {
        CountingBuilder::new()
    }
}

impl CountingBuilder {
    /// A builder with the defaults: 1%, 4-bit counters, seed 0.
    ///
    /// ```
    /// assert!(blockbloom::CountingBuilder::new().capacity(10).build().is_ok());
    /// ```
    pub fn new() -> CountingBuilder {
        CountingBuilder {
            opts: Options {
                fpr: Some(0.01),
                ..Options::default()
            },
            bits: CounterBits::Four,
        }
    }

    /// Keys the filter is sized for. Required.
    ///
    /// ```
    /// assert!(blockbloom::CountingBloomFilter::builder().build().is_err());
    /// ```
    pub fn capacity(mut self, keys: u64) -> CountingBuilder {
        self.opts.capacity = Some(keys);
        self
    }

    /// Target false-positive rate at `capacity` keys (default 0.01).
    ///
    /// ```
    /// let f = blockbloom::CountingBloomFilter::builder().capacity(100).fpr(0.1).build()?;
    /// assert!(f.model_fpr(100) <= 0.1);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn fpr(mut self, fpr: f64) -> CountingBuilder {
        self.opts.fpr = Some(fpr);
        self
    }

    /// Counter width (default [`CounterBits::Four`]).
    ///
    /// ```
    /// use blockbloom::{CounterBits, CountingBloomFilter};
    /// let f = CountingBloomFilter::builder().capacity(100).counter_bits(CounterBits::Eight).build()?;
    /// assert_eq!(f.counter_bits(), CounterBits::Eight);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn counter_bits(mut self, bits: CounterBits) -> CountingBuilder {
        self.bits = bits;
        self
    }

    /// Fixes the block layout (default: the sizing model's choice).
    ///
    /// ```
    /// use blockbloom::{layout::Layout, CountingBloomFilter};
    /// let f = CountingBloomFilter::builder().capacity(100).layout(Layout::Sectors8x64).build()?;
    /// assert_eq!(f.layout(), Layout::Sectors8x64);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn layout(mut self, layout: Layout) -> CountingBuilder {
        self.opts.layout = Some(layout);
        self
    }

    /// Probes per key (a multiple of the layout's sectors, at most 32; default: the best).
    ///
    /// ```
    /// let b = blockbloom::CountingBloomFilter::builder().capacity(100);
    /// assert_eq!(b.clone().probes(12).build()?.probes(), 12);
    /// assert!(b.probes(6).build().is_err());
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn probes(mut self, k: u32) -> CountingBuilder {
        self.opts.probes = Some(k);
        self
    }

    /// Hash seed (default 0).
    ///
    /// ```
    /// let f = blockbloom::CountingBloomFilter::builder().capacity(10).seed(9).build()?;
    /// assert_eq!(f.hash(&1u64), blockbloom::hash::hash_u64(1, 9));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn seed(mut self, seed: u64) -> CountingBuilder {
        self.opts.seed = seed;
        self
    }

    /// Kernel tier for batch hashing (default: [`Isa::active`]).
    ///
    /// ```
    /// use blockbloom::{CountingBloomFilter, Isa};
    /// let f = CountingBloomFilter::builder().capacity(10).isa(Isa::Portable).build()?;
    /// assert_eq!(f.isa(), Isa::Portable);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn isa(mut self, isa: Isa) -> CountingBuilder {
        self.opts.isa = Some(isa);
        self
    }

    /// Sizes, allocates (zeroed) and returns the filter.
    ///
    /// # Errors
    /// [`Error::InvalidOptions`] without a capacity; [`Error::InvalidFpr`],
    /// [`Error::InvalidProbes`], [`Error::TooManyBlocks`], [`Error::AllocationFailed`],
    /// [`Error::UnsupportedIsa`], [`Error::UnknownIsa`].
    ///
    /// ```
    /// let err = blockbloom::CountingBloomFilter::builder().capacity(10).fpr(2.0).build();
    /// assert!(matches!(err, Err(blockbloom::Error::InvalidFpr(_))));
    /// ```
    pub fn build(self) -> Result<CountingBloomFilter, Error> {
        let o = &self.opts;
        let kernel = o.kernel()?;
        let capacity = o.capacity()?;
        let fpr = o.fpr.unwrap_or(0.01);
        let plan = sizing::plan_units(capacity.max(1), fpr, o.layout, o.probes, self.bits.bits())?;
        Ok(CountingBloomFilter {
            blocks: allocate(plan.num_blocks)?,
            meta: o.meta(
                plan.num_blocks,
                plan.layout,
                plan.probes,
                capacity,
                Some(fpr),
                kernel,
            ),
            bits: self.bits,
            min_increase: false,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference: one counter at a time.
    fn field(x: u64, i: u32, c: u32) -> u64 {
        x >> (i * c) & ((1 << c) - 1)
    }

    fn check_word_ops<const C: u32>() {
        let mut x = 0x0123_4567_89ab_cdefu64;
        for _ in 0..10_000 {
            x = x.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(17) ^ 0xf0f0;
            for i in 0..64 / C {
                let v = field(x, i, C);
                let low = 1u64 << (i * C);
                assert_eq!(nonzero::<C>(x) & low != 0, v != 0);
                assert_eq!(full::<C>(x) & low != 0, v == (1 << C) - 1);
                assert_eq!(
                    field(project::<C>(x), i, C),
                    if v != 0 { (1 << C) - 1 } else { 0 }
                );
            }
            let sum: u64 = (0..64 / C).map(|i| field(x, i, C)).sum();
            assert_eq!(field_sum::<C>(x), sum);
        }
    }

    #[test]
    fn word_ops_match_per_field_reference() {
        check_word_ops::<4>();
        check_word_ops::<8>();
    }

    #[test]
    fn increment_and_decrement_touch_only_their_fields() {
        let mut b = Block([0xffff_0000_0000_000f; 8]);
        let mut m = [0u64; 8];
        m[0] = 1 | 1 << 4 | 1 << 60; // a saturated field, an empty one, a saturated top one
        block_increment::<4>(&mut b, &m);
        assert_eq!(b.0[0], 0xffff_0000_0000_001f);
        assert!(block_decrement::<4>(&mut b, &m));
        assert_eq!(b.0[0], 0xffff_0000_0000_000f);
        assert!(!block_decrement::<4>(&mut b, &m));
        assert_eq!(b.0[0], 0xffff_0000_0000_000f);
        assert_eq!(b.0[1..], [0xffff_0000_0000_000f; 7]);
    }
}
