//! The Parquet format's split block layout: the same machinery as the main layout at half
//! width. A 256-bit block of eight 32-bit words; a key (its XXH64, seed 0) picks a block by
//! multiply-shift of the hash's high half, and sets one bit in each word from its low half
//! `lo`: bit `(lo * SALT[i]) >> 27` of word `i`. This module is the reference every split
//! block kernel matches.

/// The eight odd constants of the Parquet format's split block Bloom filter, one per word.
pub(crate) const SPLIT_SALT: [u32; 8] = [
    0x47b6_137b,
    0x4497_4d91,
    0x8824_ad5b,
    0xa2b7_289d,
    0x7054_95c7,
    0x2df1_424b,
    0x9efc_4947,
    0x5c6b_fb31,
];

/// The salts as one 32-byte-aligned row, for aligned lane loads.
#[repr(C, align(32))]
pub(crate) struct SplitSalts(pub [u32; 8]);

/// [`SPLIT_SALT`] as a row.
pub(crate) static SPLIT_SALTS: SplitSalts = SplitSalts(SPLIT_SALT);

/// One 256-bit block: eight 32-bit words, each stored little-endian, so a slice of blocks
/// is, byte for byte, the bitset Parquet stores. Aligned to 32 bytes so that a block never
/// straddles two cache lines and the SIMD tiers can use aligned loads.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
#[repr(C, align(32))]
pub(crate) struct SplitBlock(pub(crate) [u32; 8]);

impl SplitBlock {
    pub(crate) const ZERO: SplitBlock = SplitBlock([0; 8]);
    pub(crate) const BYTES: usize = 32;

    /// Word `i` as a number (the stored word is little-endian).
    #[inline(always)]
    pub(crate) fn word(&self, i: usize) -> u32 {
        u32::from_le(self.0[i])
    }

    /// The block of 32 little-endian bytes `b`.
    #[inline]
    pub(crate) fn from_le_bytes(b: &[u8; 32]) -> SplitBlock {
        let mut block = SplitBlock::ZERO;
        for (w, c) in block.0.iter_mut().zip(b.chunks_exact(4)) {
            // Keep the stored form little-endian: the bytes, as they are.
            *w = u32::from_ne_bytes([c[0], c[1], c[2], c[3]]);
        }
        block
    }
}

/// The bit that key hash `lo` (the hash's low 32 bits) sets in word `i`.
#[inline(always)]
pub(crate) const fn split_bit(lo: u32, i: usize) -> u32 {
    lo.wrapping_mul(SPLIT_SALT[i]) >> 27
}

/// Sets the eight bits of `lo` in `block`, one at a time. The reference.
#[inline(always)]
pub(crate) fn split_insert_scalar(block: &mut SplitBlock, lo: u32) {
    for i in 0..8 {
        let word = block.word(i) | (1 << split_bit(lo, i));
        block.0[i] = word.to_le();
    }
}

/// Whether all eight bits of `lo` are set in `block`, one at a time. The reference.
#[inline(always)]
pub(crate) fn split_contains_scalar(block: &SplitBlock, lo: u32) -> bool {
    (0..8).all(|i| (block.word(i) >> split_bit(lo, i)) & 1 == 1)
}
