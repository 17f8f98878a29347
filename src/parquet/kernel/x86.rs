//! x86-64 tiers of the split block Bloom filter.
//!
//! A 256-bit block is exactly one `__m256i`, so both tiers probe with the same AVX2 code:
//! `vpmulld` by the salt vector, `vpsrld` by 27, `vpsllvd` of ones, then `vpor` (insert) or
//! `vptest` (query). The AVX-512 tier adds an 8-lane XXH64 of `u64` values (it needs
//! AVX-512DQ's 64-bit multiply) for the batches that hash values.

use std::arch::x86_64::*;

use super::{Block, Kernel, Lanes, P1, P2, P3, P4, P5, SALT, Sink, insert_hashes, query_hashes};
use crate::Isa;

/// Proof that the CPU supports AVX2: only [`Avx2::new_unchecked`] makes one.
#[derive(Clone, Copy)]
struct Avx2(());

impl Avx2 {
    /// # Safety
    /// The CPU must support AVX2.
    #[inline(always)]
    unsafe fn new_unchecked() -> Avx2 {
        Avx2(())
    }
}

/// The eight bits of key hash `lo`, one per 32-bit lane.
#[inline(always)]
fn mask(_: Avx2, lo: u32) -> __m256i {
    // SAFETY: AVX2 is present (token); register-only operations.
    unsafe {
        let salt = _mm256_setr_epi32(
            SALT[0] as i32,
            SALT[1] as i32,
            SALT[2] as i32,
            SALT[3] as i32,
            SALT[4] as i32,
            SALT[5] as i32,
            SALT[6] as i32,
            SALT[7] as i32,
        );
        let bits = _mm256_srli_epi32::<27>(_mm256_mullo_epi32(_mm256_set1_epi32(lo as i32), salt));
        _mm256_sllv_epi32(_mm256_set1_epi32(1), bits)
    }
}

impl Lanes for Avx2 {
    #[inline(always)]
    fn insert(self, block: &mut Block, lo: u32) {
        let m = mask(self, lo);
        // SAFETY: AVX2 is present (token); a Block is 32 bytes long and 32-byte aligned, so
        // the aligned load and store stay inside it. Its words are stored little-endian,
        // which is the lane order of x86.
        unsafe {
            let p = block.0.as_mut_ptr().cast::<__m256i>();
            _mm256_store_si256(p, _mm256_or_si256(_mm256_load_si256(p), m));
        }
    }

    #[inline(always)]
    fn contains(self, block: &Block, lo: u32) -> bool {
        let m = mask(self, lo);
        // SAFETY: as in `insert`, reading only. `testc(a, b)` is 1 when every bit of `b` is
        // set in `a`.
        unsafe { _mm256_testc_si256(_mm256_load_si256(block.0.as_ptr().cast()), m) != 0 }
    }
}

/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
unsafe fn avx2_insert(blocks: &mut [Block], hashes: &[u64]) {
    // SAFETY: the caller guarantees AVX2.
    let t = unsafe { Avx2::new_unchecked() };
    insert_hashes(t, blocks, hashes)
}

/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
unsafe fn avx2_query(blocks: &[Block], hashes: &[u64], sink: Sink<'_>) {
    // SAFETY: the caller guarantees AVX2.
    let t = unsafe { Avx2::new_unchecked() };
    query_hashes(t, blocks, hashes, sink)
}

/// # Safety
/// The CPU must support AVX-512 F and DQ, and AVX2 (every AVX-512 CPU has it;
/// [`Kernel::get`] checks it all the same).
#[target_feature(enable = "avx2,avx512f")]
unsafe fn avx512_insert(blocks: &mut [Block], hashes: &[u64]) {
    // SAFETY: the caller guarantees AVX2.
    let t = unsafe { Avx2::new_unchecked() };
    insert_hashes(t, blocks, hashes)
}

/// # Safety
/// As [`avx512_insert`].
#[target_feature(enable = "avx2,avx512f")]
unsafe fn avx512_query(blocks: &[Block], hashes: &[u64], sink: Sink<'_>) {
    // SAFETY: the caller guarantees AVX2.
    let t = unsafe { Avx2::new_unchecked() };
    query_hashes(t, blocks, hashes, sink)
}

/// XXH64 (seed 0) of each value's 8 little-endian bytes, 8 lanes at a time.
///
/// # Safety
/// The CPU must support AVX-512 F and DQ.
#[target_feature(enable = "avx512f,avx512dq")]
unsafe fn avx512_hash_u64(values: &[u64], out: &mut [u64]) {
    let mut vc = values.chunks_exact(8);
    let mut oc = out.chunks_exact_mut(8);
    let (p1, p2, p3) = (
        _mm512_set1_epi64(P1 as i64),
        _mm512_set1_epi64(P2 as i64),
        _mm512_set1_epi64(P3 as i64),
    );
    let (p4, start) = (
        _mm512_set1_epi64(P4 as i64),
        _mm512_set1_epi64(P5.wrapping_add(8) as i64),
    );
    for (v, o) in (&mut vc).zip(&mut oc) {
        // SAFETY: each chunk holds exactly 8 u64 (64 bytes); the caller guarantees the
        // features.
        unsafe {
            let k = _mm512_loadu_si512(v.as_ptr().cast());
            let k = _mm512_mullo_epi64(_mm512_rol_epi64::<31>(_mm512_mullo_epi64(k, p2)), p1);
            let h = _mm512_xor_si512(start, k);
            let h = _mm512_add_epi64(_mm512_mullo_epi64(_mm512_rol_epi64::<27>(h), p1), p4);
            let h = _mm512_xor_si512(h, _mm512_srli_epi64::<33>(h));
            let h = _mm512_mullo_epi64(h, p2);
            let h = _mm512_xor_si512(h, _mm512_srli_epi64::<29>(h));
            let h = _mm512_mullo_epi64(h, p3);
            let h = _mm512_xor_si512(h, _mm512_srli_epi64::<32>(h));
            _mm512_storeu_si512(o.as_mut_ptr().cast(), h);
        }
    }
    for (o, &v) in oc.into_remainder().iter_mut().zip(vc.remainder()) {
        *o = super::xxh64_u64(v);
    }
}

pub(super) static AVX2: Kernel = Kernel {
    isa: Isa::Avx2,
    insert: avx2_insert,
    query: avx2_query,
    hash_u64: super::scalar::hash_u64,
};

pub(super) static AVX512: Kernel = Kernel {
    isa: Isa::Avx512,
    insert: avx512_insert,
    query: avx512_query,
    hash_u64: avx512_hash_u64,
};
