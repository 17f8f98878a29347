//! The block layout: the specification every kernel must match bit for bit.
//!
//! A key's 64-bit hash `h` picks one 512-bit [`Block`] by multiply-shift on its high half,
//! `((h >> 32) * num_blocks) >> 32`, and sets `k` bits in it derived from its low half
//! `lo = h as u32`. The block is split into four 128-bit *sectors* (words `2s` and `2s+1`);
//! probe `j` (for `j` in `0..k`, `k` a multiple of 4) lands in sector `j % 4` at bit
//! `(lo * SALT[j]) >> 25` (wrapping 32-bit multiply, top 7 bits) of that sector.
//!
//! Why 128-bit sectors and `k = 4b`: one bit per 64-bit word (k = 8, 16, …) wastes words when
//! the best `k` is below 8 and is 4% over the best-k bound at 0.01%; four 128-bit sectors stay
//! within 1.6% of the unsectorized 512-bit bound at every target from 10% to 0.001% (see
//! [`crate::sizing`]), and a probe still costs one multiply and one variable shift per SIMD
//! lane: shifting a one by a count of 64 or more yields zero, which selects the sector's word.

/// One cache line of filter: 512 bits as eight little-endian-ordered `u64` words.
///
/// ```
/// use blockbloom::layout::{block_index, contains_scalar, insert_scalar, probe, Block};
///
/// let h = blockbloom::hash::hash_u64(42, 0);
/// let num_blocks = 1000;
/// let i = block_index(h, num_blocks);
/// assert!(i < 1000);
/// let mut block = Block::ZERO;
/// insert_scalar(&mut block, h as u32, 8);
/// assert!(contains_scalar(&block, h as u32, 8));
/// let (word, bit) = probe(h as u32, 0);   // probe 0 lands in sector 0: word 0 or 1
/// assert!(word < 2 && block.0[word] & (1 << bit) != 0);
/// assert!(block.0.iter().map(|w| w.count_ones()).sum::<u32>() <= 8);
/// ```
#[repr(C, align(64))]
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Block(pub [u64; 8]);

impl Block {
    /// A block with no bit set.
    pub const ZERO: Block = Block([0; 8]);
}

impl std::fmt::Debug for Block {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
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
///
/// ```
/// use blockbloom::layout::*;
/// assert_eq!(BLOCK_BITS, SECTORS * SECTOR_BITS);
/// assert_eq!(std::mem::size_of::<Block>(), 64);
/// assert_eq!(std::mem::align_of::<Block>(), 64);
/// assert!(SALT.len() == MAX_PROBES as usize && SALT.iter().all(|s| s % 2 == 1));
/// assert_eq!(MAX_BLOCKS, 1 << 32);
/// ```
pub const BLOCK_BITS: u32 = 512;
/// Sectors per block.
pub const SECTORS: u32 = 4;
/// Bits per sector.
pub const SECTOR_BITS: u32 = BLOCK_BITS / SECTORS;
/// Most probes (bits per key) a filter may use.
pub const MAX_PROBES: u32 = 32;
/// Most blocks a filter may have: the block index is a 32-bit multiply-shift.
pub const MAX_BLOCKS: u64 = 1 << 32;

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

/// Position of probe `j` of `lo`: `(word, bit)` within the block.
///
/// ```
/// let (word, bit) = blockbloom::layout::probe(0xdead_beef, 5); // probe 5: sector 1
/// assert!((2..4).contains(&word) && bit < 64);
/// ```
#[inline(always)]
pub const fn probe(lo: u32, j: usize) -> (usize, u32) {
    let idx = lo.wrapping_mul(SALT[j]) >> (32 - 7);
    (2 * (j % SECTORS as usize) + (idx >> 6) as usize, idx & 63)
}

/// Sets the `k` bits of `lo` in `block`, one probe at a time. The reference for every kernel.
///
/// ```
/// use blockbloom::layout::{block_index, contains_scalar, insert_scalar, probe, Block};
///
/// let h = blockbloom::hash::hash_u64(42, 0);
/// let num_blocks = 1000;
/// let i = block_index(h, num_blocks);
/// assert!(i < 1000);
/// let mut block = Block::ZERO;
/// insert_scalar(&mut block, h as u32, 8);
/// assert!(contains_scalar(&block, h as u32, 8));
/// let (word, bit) = probe(h as u32, 0);   // probe 0 lands in sector 0: word 0 or 1
/// assert!(word < 2 && block.0[word] & (1 << bit) != 0);
/// assert!(block.0.iter().map(|w| w.count_ones()).sum::<u32>() <= 8);
/// ```
#[inline(always)]
pub fn insert_scalar(block: &mut Block, lo: u32, k: usize) {
    for j in 0..k {
        let (w, b) = probe(lo, j);
        block.0[w] |= 1 << b;
    }
}

/// Whether all `k` bits of `lo` are set in `block`. The reference for every kernel.
///
/// ```
/// use blockbloom::layout::{contains_scalar, Block};
/// assert!(contains_scalar(&Block([u64::MAX; 8]), 12345, 32));
/// assert!(!contains_scalar(&Block::ZERO, 12345, 4));
/// ```
#[inline(always)]
pub fn contains_scalar(block: &Block, lo: u32, k: usize) -> bool {
    (0..k).all(|j| {
        let (w, b) = probe(lo, j);
        block.0[w] & (1 << b) != 0
    })
}

/// Lane `w` of round `r` (probes `4r..4r+4`) serves sector `w / 2`: both its words multiply by
/// `SALT[4r + w/2]`. Laid out as one 512-bit row per round for the SIMD kernels.
#[repr(C, align(64))]
pub(crate) struct RoundSalts(pub [[u64; 8]; (MAX_PROBES / SECTORS) as usize]);

pub(crate) static ROUND_SALTS: RoundSalts = {
    let mut rows = [[0u64; 8]; (MAX_PROBES / SECTORS) as usize];
    let mut r = 0;
    while r < rows.len() {
        let mut w = 0;
        while w < 8 {
            rows[r][w] = SALT[4 * r + w / 2] as u64;
            w += 1;
        }
        r += 1;
    }
    RoundSalts(rows)
};

/// Odd lanes hold a sector's upper word: xor its 7-bit index with 64 so that indices `64..128`
/// become shifts `0..64` and indices `0..64` become shifts `>= 64`, which give zero.
pub(crate) const LANE_XOR: [u64; 8] = [0, 64, 0, 64, 0, 64, 0, 64];

/// The pattern of one round as the SIMD kernels compute it, lane by lane (for tests).
#[cfg(test)]
pub(crate) fn round_lanes(lo: u32, r: usize) -> [u64; 8] {
    let mut out = [0; 8];
    for (w, o) in out.iter_mut().enumerate() {
        let count = (((lo as u64 * ROUND_SALTS.0[r][w]) >> 25) & 127) ^ LANE_XOR[w];
        *o = 1u64.checked_shl(count as u32).unwrap_or(0);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

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
            for k in (4..=MAX_PROBES as usize).step_by(4) {
                let mut reference = Block::ZERO;
                insert_scalar(&mut reference, x, k);
                let mut lanes = [0u64; 8];
                for r in 0..k / 4 {
                    for (l, v) in lanes.iter_mut().zip(round_lanes(x, r)) {
                        *l |= v;
                    }
                }
                assert_eq!(Block(lanes), reference);
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
