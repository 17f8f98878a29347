//! The block layout: the specification every kernel must match bit for bit.
//!
//! A key's 64-bit hash `h` picks one 512-bit [`Block`] by multiply-shift on its high half,
//! `((h >> 32) * num_blocks) >> 32`, and sets `k` bits in it derived from its low half
//! `lo = h as u32`. Probe `j` (for `j` in `0..k`) computes the 7-bit index
//! `idx = (lo * SALT[j]) >> 25` (wrapping 32-bit multiply, top 7 bits) and sets one bit in one
//! *sector* of the block, as the filter's [`Layout`] says:
//!
//! * [`Layout::Sectors8x64`]: eight 64-bit sectors, one per word. Probe `j` sets bit
//!   `idx & 63` of word `j % 8`; `k` is a multiple of 8. One SIMD round sets 8 probes.
//! * [`Layout::Sectors4x128`]: four 128-bit sectors (words `2s`, `2s + 1`). Probe `j` sets bit
//!   `idx` of sector `j % 4`, i.e. bit `idx & 63` of word `2 (j % 4) + idx / 64`; `k` is a
//!   multiple of 4. One SIMD round sets 4 probes.
//!
//! * [`Layout::Sectors8x32`]: the block's two 256-bit halves, each eight 32-bit sectors. The
//!   key's probes all lie in half `lo >> 31`; probe `j` sets bit `(lo * SALT[j]) >> 27` (the
//!   index's top 5 bits) of 32-bit sector `j % 8` of that half, i.e. bit
//!   `32 (j % 2) + ((lo * SALT[j]) >> 27)` of word `4 (lo >> 31) + (j % 8) / 2`; `k` is a
//!   multiple of 8. One SIMD round of eight 32-bit lanes (one 256-bit register) sets 8 probes
//!   and one register tests them, where `Sectors8x64` takes two. Parquet's split block
//!   layout, with this crate's hash, salts and block choice.
//!
//! Why these layouts: smaller sectors are cheaper (a round of 8 lanes sets 8 probes instead of
//! 4) but further from the unsectorized 512-bit best-k bound. By the exact model
//! ([`crate::sizing`]), `Sectors8x64` needs 0.2% more memory than `Sectors4x128` at 1% and
//! 0.1% (10.10 and 15.73 bits per key, k = 8) for half the probe work, while `Sectors4x128`
//! stays within 2% of the bound at every target from 10% to 0.001%, where `Sectors8x64` is
//! 4.5% over at 0.01% (22.89 vs 21.9 bits) and wastes words below k = 8. Sizing picks
//! between those two per filter. `Sectors8x32` halves the probe work again (one 256-bit
//! register per key where `Sectors8x64` takes two) for more memory, as its keys spread over
//! half-blocks: 10.53 bits per key at 1% (4% over `Sectors8x64`) and 16.89 at 0.1%
//! (`sizing::asymptotic_bits_per_key`); it is never picked unless asked for.

use core::sync::atomic::{AtomicU64, Ordering::Relaxed};

pub(crate) mod split;
pub(crate) mod stripes;

/// What [`stripes`] takes from its surroundings: atomics, allocation and waiting (the `loom`
/// crate's copy of `stripes.rs` gets the model's instead).
pub(crate) mod sync;

/// One cache line of filter: 512 bits as eight `u64` words.
///
/// ```
/// use blockbloom::layout::{block_index, contains_scalar, insert_scalar, probe, Block, Layout};
///
/// let h = blockbloom::hash::hash_u64(42, 0);
/// let i = block_index(h, 1000);
/// assert!(i < 1000);
/// let mut block = Block::ZERO;
/// insert_scalar(&mut block, Layout::Sectors8x64, h as u32, 8);
/// assert!(contains_scalar(&block, Layout::Sectors8x64, h as u32, 8));
/// let (word, bit) = probe(Layout::Sectors8x64, h as u32, 3); // probe 3 lands in word 3
/// assert!(word == 3 && block.0[3] & (1 << bit) != 0);
/// assert!(block.0.iter().all(|w| w.count_ones() == 1));      // one bit per word at k = 8
/// ```
#[repr(C, align(64))]
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Block(pub [u64; 8]);

impl Block {
    /// A block with no bit set.
    pub const ZERO: Block = Block([0; 8]);
}

impl core::fmt::Debug for Block {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Block(")?;
        for (i, w) in self.0.iter().enumerate() {
            if i > 0 {
                write!(f, " ")?;
            }
            write!(f, "{w:016x}")?;
        }
        write!(f, ")")
    }
}

/// Bits in a block.
pub const BLOCK_BITS: u32 = 512;
/// Most probes (bits per key) a filter may use.
pub const MAX_PROBES: u32 = 32;
/// Most blocks a filter may have: the block index is a 32-bit multiply-shift.
pub const MAX_BLOCKS: u64 = 1 << 32;

/// How a key's probes are spread over its block: see the [module docs](self).
///
/// ```
/// use blockbloom::layout::Layout;
///
/// assert_eq!(Layout::Sectors8x64.sectors() * Layout::Sectors8x64.sector_bits(), 512);
/// assert!(Layout::Sectors8x64.supports_probes(16) && !Layout::Sectors8x64.supports_probes(12));
/// assert!(Layout::Sectors4x128.supports_probes(12));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Layout {
    /// Eight 64-bit sectors, one per word; `k` in 8, 16, 24, 32.
    Sectors8x64,
    /// Four 128-bit sectors of two words each; `k` in 4, 8, …, 32.
    Sectors4x128,
    /// Two 256-bit halves of eight 32-bit sectors; a key's probes lie in one half; `k` in 8,
    /// 16, 24, 32. Never the sizing model's own pick (its smaller sectors take more memory
    /// for a rate): chosen for speed, with [`Builder::layout`](crate::Builder::layout).
    Sectors8x32,
}

impl Layout {
    /// Every layout.
    pub const ALL: [Layout; 3] = [
        Layout::Sectors8x64,
        Layout::Sectors4x128,
        Layout::Sectors8x32,
    ];

    /// The layouts the sizing model picks from when a filter does not name one.
    pub const PLANNED: [Layout; 2] = [Layout::Sectors8x64, Layout::Sectors4x128];

    /// Sectors a key's probes spread over (in one half of the block for `Sectors8x32`),
    /// which is also the number of probes one SIMD round sets.
    pub const fn sectors(self) -> u32 {
        match self {
            Layout::Sectors8x64 | Layout::Sectors8x32 => 8,
            Layout::Sectors4x128 => 4,
        }
    }

    /// The parts of a block that keys pick among, each holding all of a key's probes: 1, and
    /// 2 for `Sectors8x32` (its halves). The sizing model treats a filter of `n` blocks as
    /// `n * parts()` independent blocks of `BLOCK_BITS / parts()` bits.
    pub const fn parts(self) -> u32 {
        match self {
            Layout::Sectors8x32 => 2,
            Layout::Sectors8x64 | Layout::Sectors4x128 => 1,
        }
    }

    /// Bits per sector.
    pub const fn sector_bits(self) -> u32 {
        BLOCK_BITS / self.parts() / self.sectors()
    }

    /// Whether `k` probes per key fit this layout: a multiple of [`sectors`](Self::sectors),
    /// at least one round, at most [`MAX_PROBES`].
    pub const fn supports_probes(self, k: u32) -> bool {
        k > 0 && k.is_multiple_of(self.sectors()) && k <= MAX_PROBES
    }

    /// The probe counts this layout supports, fewest first.
    pub fn probe_counts(self) -> impl Iterator<Item = u32> {
        (self.sectors()..=MAX_PROBES).step_by(self.sectors() as usize)
    }

    /// The per-round lane table the SIMD kernels use (none for `Sectors8x32`, whose rounds
    /// are [`ROWS_8X32`]).
    pub(crate) const fn rows(self) -> &'static [Row] {
        match self {
            Layout::Sectors8x64 => &ROWS_8X64.0,
            Layout::Sectors4x128 => &ROWS_4X128.0,
            Layout::Sectors8x32 => &[],
        }
    }
}

impl core::fmt::Display for Layout {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            Layout::Sectors8x64 => "8x64",
            Layout::Sectors4x128 => "4x128",
            Layout::Sectors8x32 => "8x32",
        })
    }
}

/// One odd 32-bit multiplier per probe, from SplitMix64 of a fixed seed. Generated at compile
/// time so no constant here is typed by hand; changing them changes the format.
pub const SALT: [u32; MAX_PROBES as usize] = make_salts(0x626c_6f63_6b62_6c6f); // "blockblo"

const fn make_salts(mut state: u64) -> [u32; MAX_PROBES as usize] {
    let mut out = [0u32; MAX_PROBES as usize];
    let mut i = 0;
    while i < out.len() {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        out[i] = (z >> 32) as u32 | 1;
        i += 1;
    }
    out
}

/// The block a hash selects among `num_blocks` (multiply-shift of the high 32 bits).
///
/// ```
/// use blockbloom::layout::block_index;
/// assert_eq!(block_index(0x8000_0000_0000_0000, 10), 5);   // half way up the hash range
/// assert_eq!(block_index(u64::MAX, 10), 9);
/// ```
#[inline(always)]
pub const fn block_index(hash: u64, num_blocks: u64) -> usize {
    (((hash >> 32) * num_blocks) >> 32) as usize
}

/// Position of probe `j` of `lo` in `layout`: `(word, bit)` within the block.
///
/// ```
/// use blockbloom::layout::{probe, Layout};
/// let (word, bit) = probe(Layout::Sectors4x128, 0xdead_beef, 5); // probe 5: sector 1
/// assert!((2..4).contains(&word) && bit < 64);
/// assert_eq!(probe(Layout::Sectors8x64, 0xdead_beef, 5).0, 5);   // probe 5: word 5
/// ```
#[inline(always)]
pub const fn probe(layout: Layout, lo: u32, j: usize) -> (usize, u32) {
    let idx = lo.wrapping_mul(SALT[j]) >> (32 - 7);
    match layout {
        Layout::Sectors8x64 => (j % 8, idx & 63),
        Layout::Sectors4x128 => (2 * (j % 4) + (idx >> 6) as usize, idx & 63),
        Layout::Sectors8x32 => (
            4 * (lo >> 31) as usize + (j % 8) / 2,
            32 * (j % 2) as u32 + (idx >> 2),
        ),
    }
}

/// Sets the `k` bits of `lo` in `block`, one probe at a time. The reference for every kernel.
#[inline(always)]
pub fn insert_scalar(block: &mut Block, layout: Layout, lo: u32, k: usize) {
    #[inline(always)]
    fn each(block: &mut Block, layout: Layout, lo: u32, k: usize) {
        for j in 0..k {
            let (w, b) = probe(layout, lo, j);
            block.0[w] |= 1 << b;
        }
    }
    // One loop per layout, its match decided outside it (see `contains_scalar`).
    match layout {
        Layout::Sectors8x64 => each(block, Layout::Sectors8x64, lo, k),
        Layout::Sectors4x128 => each(block, Layout::Sectors4x128, lo, k),
        Layout::Sectors8x32 => each(block, Layout::Sectors8x32, lo, k),
    }
}

/// Whether all `k` bits of `lo` are set in `block`, one probe at a time. The reference for
/// every kernel.
///
/// It reads all `k` bits rather than stopping at the first clear one: for a non-member that
/// exit is a mispredicted branch per key, which costs more than the probes it skips
/// (`blockbloom-perf scalar-exit`, in `perf/`, measures both).
///
/// ```
/// use blockbloom::layout::{contains_scalar, Block, Layout};
/// assert!(contains_scalar(&Block([u64::MAX; 8]), Layout::Sectors4x128, 12345, 32));
/// assert!(!contains_scalar(&Block::ZERO, Layout::Sectors8x64, 12345, 8));
/// ```
#[inline(always)]
pub fn contains_scalar(block: &Block, layout: Layout, lo: u32, k: usize) -> bool {
    #[inline(always)]
    fn each(block: &Block, layout: Layout, lo: u32, k: usize) -> bool {
        let mut all = 1;
        for j in 0..k {
            let (w, b) = probe(layout, lo, j);
            all &= block.0[w] >> b;
        }
        all & 1 == 1
    }
    // One loop per layout, its match decided outside it: with three layouts the compiler no
    // longer lifted it out of the probe loop itself (the scalar tier's count batch took more
    // instructions under the `perf-reports/perf-check` gate; measured at 737bf97).
    match layout {
        Layout::Sectors8x64 => each(block, Layout::Sectors8x64, lo, k),
        Layout::Sectors4x128 => each(block, Layout::Sectors4x128, lo, k),
        Layout::Sectors8x32 => each(block, Layout::Sectors8x32, lo, k),
    }
}

/// A [`Block`] whose words are atomics: the storage of
/// [`AtomicBloomFilter`](crate::AtomicBloomFilter). Same size, alignment and bit layout as
/// `Block`, so one converts into the other without copying.
#[repr(C, align(64))]
#[derive(Default)]
pub struct AtomicBlock(pub [AtomicU64; 8]);

impl core::fmt::Debug for AtomicBlock {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        self.load().fmt(f)
    }
}

impl AtomicBlock {
    /// A copy of the words, each read with a relaxed load.
    #[inline(always)]
    pub fn load(&self) -> Block {
        Block(core::array::from_fn(|w| self.0[w].load(Relaxed)))
    }

    /// Sets the bits of `pattern`: a relaxed `fetch_or` on each word that lacks some of them,
    /// and no write at all to words that have them already (so a shared line is not taken
    /// exclusive for nothing). The words to write are found first, without branching: "is
    /// this bit set yet" is a coin flip in a half-full filter, and a mispredicted branch per
    /// word would cost as much as the atomic it avoids.
    ///
    /// Only for blocks no stripe lock guards (the shared-atomic parallel build, whose workers
    /// all write this way): a striped filter's lock holders read their words as plain memory
    /// and store them back, so a `fetch_or` beside them would race with that read and could
    /// be overwritten. Not public for that reason.
    #[cfg(feature = "parallel")]
    #[inline(always)]
    pub(crate) fn or(&self, pattern: &Block) {
        let mut missing = self.missing(pattern);
        while missing != 0 {
            let w = missing.trailing_zeros() as usize;
            self.0[w].fetch_or(pattern.0[w], Relaxed);
            missing &= missing - 1;
        }
    }

    /// Sets the bits of `pattern` while `guard` holds this block's stripe lock, with relaxed
    /// loads and stores and no locked instruction ([`stripes::or_locked`]); answers whether
    /// some bit was new. Every writer of a striped filter sets bits this way, never with
    /// [`or`](Self::or), whose `fetch_or`s a locked writer's plain store could overwrite.
    #[inline(always)]
    pub(crate) fn or_locked(&self, pattern: &Block, guard: &impl stripes::Held) -> bool {
        stripes::or_locked(&self.0, &pattern.0, guard)
    }

    /// Bit `w` set for each word `w` that lacks some bit of `pattern` (relaxed loads, no
    /// branches).
    #[cfg(feature = "parallel")]
    #[inline(always)]
    fn missing(&self, pattern: &Block) -> u32 {
        let mut missing = 0u32;
        for (w, (word, &p)) in self.0.iter().zip(&pattern.0).enumerate() {
            missing |= ((word.load(Relaxed) & p != p) as u32) << w;
        }
        missing
    }

    /// Whether every bit of `pattern` is set, from relaxed loads.
    #[inline(always)]
    pub fn has(&self, pattern: &Block) -> bool {
        let mut all = true;
        for (word, &p) in self.0.iter().zip(&pattern.0) {
            all &= word.load(Relaxed) & p == p;
        }
        all
    }
}

const _: () = {
    assert!(core::mem::size_of::<AtomicBlock>() == core::mem::size_of::<Block>());
    assert!(core::mem::align_of::<AtomicBlock>() == core::mem::align_of::<Block>());
};

/// The `k`-bit pattern of `lo` as a block, one probe at a time (the reference).
#[inline(always)]
pub fn pattern_scalar(layout: Layout, lo: u32, k: usize) -> Block {
    let mut p = Block::ZERO;
    insert_scalar(&mut p, layout, lo, k);
    p
}

/// One SIMD round: lane `w` computes `count = ((lo * salt[w]) >> 25 & mask[w]) ^ xor[w]` and
/// contributes `1 << count`, or zero when `count >= 64`.
///
/// * `Sectors8x64`, round `r`: lane `w` is probe `8r + w`; mask 63, xor 0. The same count is
///   bits 26..32 of `lo * salt2[w]` modulo 2^32 (`salt2` is the salt doubled modulo 2^32),
///   which a tier with a 32-bit low multiply takes in one shift, without the mask.
/// * `Sectors4x128`, round `r`: lanes `2s`, `2s + 1` are both probe `4r + s`; mask 127, and
///   the upper word's lane xors 64, turning indices `64..128` into shifts `0..64` and indices
///   `0..64` into shifts of 64 or more, which give zero: the index picks its word for free.
#[repr(C, align(64))]
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Row {
    pub salt: [u64; 8],
    pub salt2: [u64; 8],
    pub mask: [u64; 8],
    pub xor: [u64; 8],
}

#[repr(C, align(64))]
struct Rows<const N: usize>([Row; N]);

/// `Sectors8x32`'s rounds: round `r` holds the salts of probes `8r..8r + 8`, one per 32-bit
/// lane; lane `w` sets bit `(lo * salt[w]) >> 27` of the half's 32-bit sector `w`.
#[repr(C, align(32))]
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Row32(pub [u32; 8]);

/// [`Row32`] tables of `Sectors8x32`, for every round count up to [`MAX_PROBES`].
pub(crate) static ROWS_8X32: [Row32; (MAX_PROBES / 8) as usize] = {
    let mut rows = [const { Row32([0; 8]) }; (MAX_PROBES / 8) as usize];
    let mut r = 0;
    while r < rows.len() {
        let mut w = 0;
        while w < 8 {
            rows[r].0[w] = SALT[8 * r + w];
            w += 1;
        }
        r += 1;
    }
    rows
};

static ROWS_8X64: Rows<{ (MAX_PROBES / 8) as usize }> = Rows(make_rows(Layout::Sectors8x64));
static ROWS_4X128: Rows<{ (MAX_PROBES / 4) as usize }> = Rows(make_rows(Layout::Sectors4x128));

const fn make_rows<const N: usize>(layout: Layout) -> [Row; N] {
    let mut rows = [const {
        Row {
            salt: [0; 8],
            salt2: [0; 8],
            mask: [0; 8],
            xor: [0; 8],
        }
    }; N];
    let mut r = 0;
    while r < N {
        let mut w = 0;
        while w < 8 {
            let (probe, mask, xor) = match layout {
                Layout::Sectors8x64 => (8 * r + w, 63, 0),
                Layout::Sectors4x128 => (4 * r + w / 2, 127, 64 * (w as u64 & 1)),
                Layout::Sectors8x32 => panic!("8x32 rounds are Row32 tables"),
            };
            rows[r].salt[w] = SALT[probe] as u64;
            rows[r].salt2[w] = SALT[probe].wrapping_mul(2) as u64;
            rows[r].mask[w] = mask;
            rows[r].xor[w] = xor;
            w += 1;
        }
        r += 1;
    }
    rows
}

/// The pattern of one round as the SIMD kernels compute it, lane by lane (for tests), both
/// ways: from the full product and the mask (tiers without a one-instruction 32-bit low
/// multiply), and from the product modulo 2^32 (`salt2` for `Sectors8x64` rows, `words`;
/// `salt` and `xor` for the others). Panics where the two disagree.
#[cfg(test)]
pub(crate) fn round_lanes(row: &Row, lo: u32, words: bool) -> [u64; 8] {
    let mut out = [0; 8];
    for (w, o) in out.iter_mut().enumerate() {
        let masked = (((lo as u64 * row.salt[w]) >> 25) & row.mask[w]) ^ row.xor[w];
        let low32 = if words {
            (lo.wrapping_mul(row.salt2[w] as u32) >> 26) as u64
        } else {
            (lo.wrapping_mul(row.salt[w] as u32) >> 25) as u64 ^ row.xor[w]
        };
        assert_eq!(masked, low32, "lane {w}, lo {lo:#x}");
        *o = 1u64.checked_shl(low32 as u32).unwrap_or(0);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stripes_cover_every_block_with_at_most_256_locks_of_64_blocks_or_more() {
        for n in [
            1usize,
            2,
            63,
            64,
            65,
            1000,
            16_384,
            16_385,
            1 << 20,
            12_345_677,
        ]
        .into_iter()
        .chain([MAX_BLOCKS as usize])
        {
            let s = stripes::Stripes::new(n);
            assert!(
                (1..=256).contains(&s.len()),
                "{n} blocks: {} stripes",
                s.len()
            );
            assert_eq!(
                s.stripe_of(n - 1),
                s.len() - 1,
                "{n} blocks: the last stripe is used"
            );
            assert!(
                n <= 64 || s.stripe_of(63) == 0,
                "{n} blocks: stripes under 64 blocks"
            );
            drop(s.lock(s.len() - 1));
        }
    }

    #[test]
    fn or_locked_sets_the_pattern_and_answers_whether_it_was_new() {
        let s = stripes::Stripes::new(1);
        let b = AtomicBlock::default();
        let p = pattern_scalar(Layout::Sectors8x64, 0x1234_5678, 8);
        let g = s.lock(0);
        assert!(b.or_locked(&p, &g));
        assert_eq!(b.load(), p);
        assert!(!b.or_locked(&p, &g));
        assert!(b.has(&p));
    }

    #[test]
    fn salts_are_odd_and_distinct() {
        for (i, s) in SALT.iter().enumerate() {
            assert_eq!(s & 1, 1);
            assert!(!SALT[..i].contains(s));
        }
    }

    #[test]
    fn round_lanes_equal_probes() {
        let mut x = 0x1234_5678u32;
        for _ in 0..10_000 {
            x = x.wrapping_mul(0x9e37_79b9).wrapping_add(0x7f4a_7c15);
            for layout in Layout::PLANNED {
                for k in layout.probe_counts() {
                    let mut reference = Block::ZERO;
                    insert_scalar(&mut reference, layout, x, k as usize);
                    let mut lanes = [0u64; 8];
                    let rounds = (k / layout.sectors()) as usize;
                    for row in &layout.rows()[..rounds] {
                        for (l, v) in
                            lanes
                                .iter_mut()
                                .zip(round_lanes(row, x, layout == Layout::Sectors8x64))
                        {
                            *l |= v;
                        }
                    }
                    assert_eq!(Block(lanes), reference, "{layout} k={k}");
                }
            }
        }
    }

    #[test]
    fn row_tables_cover_max_probes() {
        for layout in Layout::PLANNED {
            assert_eq!(layout.rows().len() as u32 * layout.sectors(), MAX_PROBES);
        }
        assert_eq!(ROWS_8X32.len() as u32 * 8, MAX_PROBES);
    }

    /// `Sectors8x32`: each round's lanes are the 32-bit sectors of the half `lo >> 31` picks,
    /// a key sets one bit in each sector of that half per round and nothing in the other.
    #[test]
    fn rows_8x32_equal_probes() {
        let mut x = 0x1234_5678u32;
        for _ in 0..10_000 {
            x = x.wrapping_mul(0x9e37_79b9).wrapping_add(0x7f4a_7c15);
            for k in Layout::Sectors8x32.probe_counts() {
                let mut reference = Block::ZERO;
                insert_scalar(&mut reference, Layout::Sectors8x32, x, k as usize);
                let mut half = [0u32; 8];
                for row in &ROWS_8X32[..(k / 8) as usize] {
                    for (h, s) in half.iter_mut().zip(row.0) {
                        *h |= 1 << (x.wrapping_mul(s) >> 27);
                    }
                }
                let mut lanes = [0u64; 8];
                let at = 4 * (x >> 31) as usize;
                for (w, pair) in half.chunks(2).enumerate() {
                    lanes[at + w] = pair[0] as u64 | (pair[1] as u64) << 32;
                }
                assert_eq!(Block(lanes), reference, "8x32 k={k}");
            }
        }
    }

    #[test]
    fn block_index_in_range() {
        for n in [1u64, 2, 3, 1000, MAX_BLOCKS] {
            assert_eq!(block_index(0, n), 0);
            assert_eq!(block_index(u64::MAX, n), (n - 1) as usize);
        }
    }
}
