//! Kernels of the split block Bloom filter and their run-time dispatch.
//!
//! The tiers mirror the main filter's ([`Isa`]): a scalar reference (one bit at a time, no
//! SIMD, no prefetch, no `unsafe`), portable `wide::u32x8` lanes, AVX2 and AVX-512. A 256-bit
//! block is one eight-lane vector of 32-bit words, so every SIMD tier runs the same four
//! steps per key: multiply the key's low hash half by the salts, keep the top five bits of
//! each product, shift a one by them, and `or` (insert) or test (query) the block.
//!
//! Each SIMD tier implements [`Lanes`] on a zero-sized token that exists only once the CPU is
//! known to support the tier; one generic driver ([`insert_hashes`], [`query_hashes`]),
//! inlined into each tier's `#[target_feature]` entry points, prefetches a chunk of blocks
//! ahead of probing them when the filter is larger than the cache. A [`Kernel`] is a table
//! of those entry points that only [`Kernel::get`] hands out, after checking the CPU.

use std::fmt;

use crate::Isa;
use crate::error::Error;

#[cfg(target_arch = "x86_64")]
mod x86;

/// The eight odd constants of the Parquet format's split block Bloom filter, one per word.
pub(super) const SALT: [u32; 8] = [
    0x47b6_137b,
    0x4497_4d91,
    0x8824_ad5b,
    0xa2b7_289d,
    0x7054_95c7,
    0x2df1_424b,
    0x9efc_4947,
    0x5c6b_fb31,
];

/// One 256-bit block: eight 32-bit words, each stored little-endian, so a slice of blocks
/// is, byte for byte, the bitset Parquet stores. Aligned to 32 bytes so that a block never
/// straddles two cache lines and the AVX2 tier can use aligned loads.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
#[repr(C, align(32))]
pub(super) struct Block(pub(super) [u32; 8]);

impl Block {
    pub(super) const ZERO: Block = Block([0; 8]);
    pub(super) const BYTES: usize = 32;

    /// Word `i` as a number (the stored word is little-endian).
    #[inline(always)]
    pub(super) fn word(&self, i: usize) -> u32 {
        u32::from_le(self.0[i])
    }

    /// The block of 32 little-endian bytes `b`.
    #[inline]
    pub(super) fn from_le_bytes(b: &[u8; 32]) -> Block {
        let mut block = Block::ZERO;
        for (w, c) in block.0.iter_mut().zip(b.chunks_exact(4)) {
            // Keep the stored form little-endian: the bytes, as they are.
            *w = u32::from_ne_bytes([c[0], c[1], c[2], c[3]]);
        }
        block
    }
}

/// The block a hash belongs to: the high 32 bits scaled to `0..num_blocks` by multiply-shift.
#[inline(always)]
pub(super) const fn block_index(hash: u64, num_blocks: u64) -> usize {
    (((hash >> 32) * num_blocks) >> 32) as usize
}

/// The bit that key hash `lo` (the hash's low 32 bits) sets in word `i`.
#[inline(always)]
pub(super) const fn mask_bit(lo: u32, i: usize) -> u32 {
    lo.wrapping_mul(SALT[i]) >> 27
}

/// Where a batch query's answers go.
pub(super) enum Sink<'a> {
    Each(&'a mut [bool]),
    Count(&'a mut usize),
}

/// A tier's dispatch table. Obtainable only through [`Kernel::get`], which checks the CPU.
pub(super) struct Kernel {
    isa: Isa,
    insert: unsafe fn(&mut [Block], &[u64]),
    query: unsafe fn(&[Block], &[u64], Sink<'_>),
    /// XXH64 (seed 0) of each value's 8 little-endian bytes.
    hash_u64: unsafe fn(&[u64], &mut [u64]),
}

impl fmt::Debug for Kernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Kernel({})", self.isa)
    }
}

static SCALAR: Kernel = Kernel {
    isa: Isa::Scalar,
    insert: scalar::insert,
    query: scalar::query,
    hash_u64: scalar::hash_u64,
};

static PORTABLE: Kernel = Kernel {
    isa: Isa::Portable,
    insert: portable::insert,
    query: portable::query,
    hash_u64: scalar::hash_u64,
};

impl Kernel {
    /// The table of `isa`, if this CPU supports it.
    pub(super) fn get(isa: Isa) -> Result<&'static Kernel, Error> {
        isa.require()?;
        Ok(match isa {
            Isa::Scalar => &SCALAR,
            Isa::Portable => &PORTABLE,
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => &x86::AVX2,
            // The AVX-512 tier probes with the AVX2 code: check that too (every AVX-512 CPU
            // has AVX2, so this never fails in practice).
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => {
                Isa::Avx2.require()?;
                &x86::AVX512
            }
            #[cfg(not(target_arch = "x86_64"))]
            Isa::Avx2 | Isa::Avx512 => unreachable!("require() rejects x86 tiers elsewhere"),
        })
    }

    pub(super) fn isa(&self) -> Isa {
        self.isa
    }

    pub(super) fn insert(&self, blocks: &mut [Block], hashes: &[u64]) {
        // SAFETY: `self` came from `Kernel::get`, which checked that the CPU supports the tier.
        unsafe { (self.insert)(blocks, hashes) }
    }

    pub(super) fn query(&self, blocks: &[Block], hashes: &[u64], sink: Sink<'_>) {
        if let Sink::Each(out) = &sink {
            assert_eq!(
                out.len(),
                hashes.len(),
                "output slice length must equal hash count"
            );
        }
        // SAFETY: `self` came from `Kernel::get`, which checked that the CPU supports the tier.
        unsafe { (self.query)(blocks, hashes, sink) }
    }

    pub(super) fn hash_u64(&self, values: &[u64], out: &mut [u64]) {
        assert_eq!(
            values.len(),
            out.len(),
            "output slice length must equal count"
        );
        // SAFETY: `self` came from `Kernel::get`, which checked that the CPU supports the tier.
        unsafe { (self.hash_u64)(values, out) }
    }
}

/// XXH64's primes.
pub(super) const P1: u64 = 0x9e37_79b1_85eb_ca87;
pub(super) const P2: u64 = 0xc2b2_ae3d_27d4_eb4f;
pub(super) const P3: u64 = 0x1656_67b1_9e37_79f9;
pub(super) const P4: u64 = 0x85eb_ca77_c2b2_ae63;
pub(super) const P5: u64 = 0x27d4_eb2f_1656_67c5;

/// XXH64 with seed 0 of `v.to_le_bytes()` (XXH64's 8-byte input path, unrolled).
#[inline(always)]
pub(super) const fn xxh64_u64(v: u64) -> u64 {
    let mut h = P5.wrapping_add(8);
    let k = v.wrapping_mul(P2).rotate_left(31).wrapping_mul(P1);
    h ^= k;
    h = h.rotate_left(27).wrapping_mul(P1).wrapping_add(P4);
    avalanche(h)
}

/// XXH64 with seed 0 of `v.to_le_bytes()` (XXH64's 4-byte input path, unrolled).
#[inline(always)]
pub(super) const fn xxh64_u32(v: u32) -> u64 {
    let mut h = P5.wrapping_add(4);
    h ^= (v as u64).wrapping_mul(P1);
    h = h.rotate_left(23).wrapping_mul(P2).wrapping_add(P3);
    avalanche(h)
}

#[inline(always)]
const fn avalanche(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(P2);
    h ^= h >> 29;
    h = h.wrapping_mul(P3);
    h ^ (h >> 32)
}

/// The reference tier: one hash at a time, one bit at a time, no SIMD, no prefetch.
mod scalar {
    use super::{Block, Sink, block_index, mask_bit, xxh64_u64};

    pub(in crate::parquet) fn insert_one(block: &mut Block, lo: u32) {
        for i in 0..8 {
            let word = block.word(i) | (1 << mask_bit(lo, i));
            block.0[i] = word.to_le();
        }
    }

    pub(in crate::parquet) fn contains_one(block: &Block, lo: u32) -> bool {
        (0..8).all(|i| (block.word(i) >> mask_bit(lo, i)) & 1 == 1)
    }

    pub(super) fn insert(blocks: &mut [Block], hashes: &[u64]) {
        let n = blocks.len() as u64;
        for &h in hashes {
            insert_one(&mut blocks[block_index(h, n)], h as u32);
        }
    }

    pub(super) fn query(blocks: &[Block], hashes: &[u64], sink: Sink<'_>) {
        let n = blocks.len() as u64;
        let test = |h: u64| contains_one(&blocks[block_index(h, n)], h as u32);
        match sink {
            Sink::Each(out) => {
                for (o, &h) in out.iter_mut().zip(hashes) {
                    *o = test(h);
                }
            }
            Sink::Count(c) => *c += hashes.iter().filter(|&&h| test(h)).count(),
        }
    }

    pub(super) fn hash_u64(values: &[u64], out: &mut [u64]) {
        for (o, &v) in out.iter_mut().zip(values) {
            *o = xxh64_u64(v);
        }
    }
}

pub(super) use scalar::{contains_one as contains_scalar, insert_one as insert_scalar};

/// One SIMD tier's block primitives. Implementors are zero-sized tokens that exist only once
/// the CPU is known to support the tier, so their safe methods may use its intrinsics.
pub(super) trait Lanes: Copy {
    /// Sets the eight bits of key hash `lo` in `block`.
    fn insert(self, block: &mut Block, lo: u32);
    /// Whether all eight bits of key hash `lo` are set in `block`.
    fn contains(self, block: &Block, lo: u32) -> bool;
}

/// Hashes between a block's prefetch and its probe, for filters beyond the cache.
const PREFETCH_AHEAD: usize = 16;

use crate::arch::prefetch;

/// Whether batches on `blocks` should prefetch (the filter is larger than the cache).
#[inline(always)]
fn prefetching(blocks: usize) -> bool {
    blocks.saturating_mul(Block::BYTES) > crate::arch::CACHE_RESIDENT_BYTES as usize
}

/// Prefetches the block of each hash (address arithmetic only; a prefetch never faults).
#[inline(always)]
fn prefetch_all(base: *const Block, num_blocks: u64, hashes: &[u64]) {
    for &h in hashes {
        prefetch(base.wrapping_add(block_index(h, num_blocks)));
    }
}

// The drivers are software-pipelined: the blocks of chunk `c + 1` are prefetched before chunk
// `c` is probed. No intrinsic may sit inside a closure here: a closure is a function of its
// own, without the caller's target features, so its intrinsics would become calls.

/// The batch insert of every SIMD tier.
#[inline(always)]
pub(super) fn insert_hashes<L: Lanes>(l: L, blocks: &mut [Block], hashes: &[u64]) {
    let n = blocks.len() as u64;
    if !prefetching(blocks.len()) {
        for &h in hashes {
            l.insert(&mut blocks[block_index(h, n)], h as u32);
        }
        return;
    }
    let base = blocks.as_ptr();
    let mut chunks = hashes.chunks(PREFETCH_AHEAD).peekable();
    if let Some(first) = chunks.peek() {
        prefetch_all(base, n, first);
    }
    while let Some(chunk) = chunks.next() {
        if let Some(next) = chunks.peek() {
            prefetch_all(base, n, next);
        }
        for &h in chunk {
            l.insert(&mut blocks[block_index(h, n)], h as u32);
        }
    }
}

/// The batch query of every SIMD tier.
#[inline(always)]
pub(super) fn query_hashes<L: Lanes>(l: L, blocks: &[Block], hashes: &[u64], sink: Sink<'_>) {
    let n = blocks.len() as u64;
    let ahead = if prefetching(blocks.len()) {
        PREFETCH_AHEAD
    } else {
        hashes.len().max(1)
    };
    let base = blocks.as_ptr();
    let mut chunks = hashes.chunks(ahead).enumerate().peekable();
    if ahead == PREFETCH_AHEAD
        && let Some((_, first)) = chunks.peek()
    {
        prefetch_all(base, n, first);
    }
    let mut found = 0;
    let mut sink = sink;
    while let Some((c, chunk)) = chunks.next() {
        if ahead == PREFETCH_AHEAD
            && let Some((_, next)) = chunks.peek()
        {
            prefetch_all(base, n, next);
        }
        match &mut sink {
            Sink::Each(out) => {
                for (o, &h) in out[c * ahead..].iter_mut().zip(chunk) {
                    *o = l.contains(&blocks[block_index(h, n)], h as u32);
                }
            }
            Sink::Count(_) => {
                for &h in chunk {
                    found += l.contains(&blocks[block_index(h, n)], h as u32) as usize;
                }
            }
        }
    }
    if let Sink::Count(c) = sink {
        *c += found;
    }
}

/// The baseline tier: `wide::u32x8` lanes, compiled for the target's baseline (SSE2 on
/// x86-64, NEON on aarch64), so always available.
mod portable {
    use wide::u32x8;

    use super::{Block, Lanes, SALT, Sink};

    #[derive(Clone, Copy)]
    pub(super) struct Portable;

    #[inline(always)]
    fn load(block: &Block) -> u32x8 {
        u32x8::new(block.0.map(u32::from_le))
    }

    #[inline(always)]
    fn mask(lo: u32) -> u32x8 {
        let bits = (u32x8::splat(lo) * u32x8::new(SALT)).unbounded_shr_scalar(27);
        u32x8::splat(1).unbounded_shl(bits)
    }

    impl Lanes for Portable {
        #[inline(always)]
        fn insert(self, block: &mut Block, lo: u32) {
            block.0 = (load(block) | mask(lo)).to_array().map(u32::to_le);
        }

        #[inline(always)]
        fn contains(self, block: &Block, lo: u32) -> bool {
            let m = mask(lo);
            (load(block) & m) == m
        }
    }

    pub(super) fn insert(blocks: &mut [Block], hashes: &[u64]) {
        super::insert_hashes(Portable, blocks, hashes)
    }

    pub(super) fn query(blocks: &[Block], hashes: &[u64], sink: Sink<'_>) {
        super::query_hashes(Portable, blocks, hashes, sink)
    }
}
