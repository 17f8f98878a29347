//! AVX-512 tier (F + DQ): 8 hash lanes per vector, a block as one 512-bit register.

use std::arch::x86_64::*;

use crate::arch::{Keys, Lanes, Shape, Sink};
use crate::hash::PRIME_MX2;
use crate::layout::{Block, Row};

/// Proof that the CPU supports AVX-512 F and DQ: only [`Avx512::new_unchecked`] makes one.
#[derive(Clone, Copy)]
pub(super) struct Avx512(());

impl Avx512 {
    /// # Safety
    /// The CPU must support AVX-512 F and DQ.
    #[inline(always)]
    unsafe fn new_unchecked() -> Avx512 {
        Avx512(())
    }
}

// Every `unsafe` block below relies on the same fact: an `Avx512` value exists, so the CPU
// supports AVX-512 F and DQ (see `new_unchecked`), and loads and stores go through pointers
// derived from slices or blocks of at least the width read or written.

/// [`rrmxmx`] on two vectors, interleaved.
#[inline]
#[target_feature(enable = "avx512f,avx512dq")]
fn rrmxmx2(a: __m512i, b: __m512i, len: u64) -> (__m512i, __m512i) {
    let mx2 = _mm512_set1_epi64(PRIME_MX2 as i64);
    let l = _mm512_set1_epi64(len as i64);
    let a = _mm512_xor_si512(
        a,
        _mm512_xor_si512(_mm512_rol_epi64::<49>(a), _mm512_rol_epi64::<24>(a)),
    );
    let b = _mm512_xor_si512(
        b,
        _mm512_xor_si512(_mm512_rol_epi64::<49>(b), _mm512_rol_epi64::<24>(b)),
    );
    let a = _mm512_mullo_epi64(a, mx2);
    let b = _mm512_mullo_epi64(b, mx2);
    let a = _mm512_xor_si512(a, _mm512_add_epi64(_mm512_srli_epi64::<35>(a), l));
    let b = _mm512_xor_si512(b, _mm512_add_epi64(_mm512_srli_epi64::<35>(b), l));
    let a = _mm512_mullo_epi64(a, mx2);
    let b = _mm512_mullo_epi64(b, mx2);
    (
        _mm512_xor_si512(a, _mm512_srli_epi64::<28>(a)),
        _mm512_xor_si512(b, _mm512_srli_epi64::<28>(b)),
    )
}

/// XXH3's `rrmxmx` on eight lanes.
#[inline]
#[target_feature(enable = "avx512f,avx512dq")]
fn rrmxmx(h: __m512i, len: u64) -> __m512i {
    let mx2 = _mm512_set1_epi64(PRIME_MX2 as i64);
    let h = _mm512_xor_si512(
        h,
        _mm512_xor_si512(_mm512_rol_epi64::<49>(h), _mm512_rol_epi64::<24>(h)),
    );
    let h = _mm512_mullo_epi64(h, mx2);
    let s = _mm512_add_epi64(_mm512_srli_epi64::<35>(h), _mm512_set1_epi64(len as i64));
    let h = _mm512_mullo_epi64(_mm512_xor_si512(h, s), mx2);
    _mm512_xor_si512(h, _mm512_srli_epi64::<28>(h))
}

/// The probe pattern of `lo` over `rows`.
#[inline(always)]
fn pattern<const WORDS: bool>(_: Avx512, lo: u32, rows: &[Row]) -> __m512i {
    // SAFETY: AVX-512 F present (token); the loads read whole 64-byte, 64-aligned row fields.
    unsafe {
        let lo = _mm512_set1_epi64(lo as i64);
        let one = _mm512_set1_epi64(1);
        let mut p = _mm512_setzero_si512();
        for row in rows {
            let salts = _mm512_load_si512(row.salt.as_ptr().cast());
            let idx = _mm512_srli_epi64::<25>(_mm512_mul_epu32(lo, salts));
            let bit = if WORDS {
                // A rotate takes its count mod 64: the `& 63` of the 8x64 layout for free.
                _mm512_rolv_epi64(one, idx)
            } else {
                let xor = _mm512_load_si512(row.xor.as_ptr().cast());
                let count = _mm512_xor_si512(_mm512_and_si512(idx, _mm512_set1_epi64(127)), xor);
                _mm512_sllv_epi64(one, count)
            };
            p = _mm512_or_si512(p, bit);
        }
        p
    }
}

impl Lanes for Avx512 {
    #[inline(always)]
    fn hash_u64(self, flip: u64, keys: &[u64], out: &mut [u64]) {
        // SAFETY: the token proves AVX-512 F and DQ.
        unsafe { hash_u64(flip, keys, out) }
    }

    #[inline(always)]
    fn hash_u32(self, flip: u64, keys: &[u32], out: &mut [u64]) {
        // SAFETY: the token proves AVX-512 F and DQ.
        unsafe { hash_u32(flip, keys, out) }
    }

    #[inline(always)]
    fn insert<const WORDS: bool>(self, block: &mut Block, lo: u32, rows: &[Row]) {
        let p = pattern::<WORDS>(self, lo, rows);
        // SAFETY: AVX-512 present (token); a Block is one aligned 64-byte line.
        unsafe {
            let ptr = block.0.as_mut_ptr().cast::<__m512i>();
            _mm512_store_si512(ptr, _mm512_or_si512(_mm512_load_si512(ptr), p));
        }
    }

    #[inline(always)]
    fn pattern<const WORDS: bool>(self, lo: u32, rows: &[Row]) -> Block {
        let p = pattern::<WORDS>(self, lo, rows);
        let mut b = Block::ZERO;
        // SAFETY: AVX-512 present (token); a Block is one aligned 64-byte line.
        unsafe { _mm512_store_si512(b.0.as_mut_ptr().cast::<__m512i>(), p) };
        b
    }

    #[inline(always)]
    fn contains<const WORDS: bool>(self, block: &Block, lo: u32, rows: &[Row]) -> bool {
        let p = pattern::<WORDS>(self, lo, rows);
        // SAFETY: AVX-512 present (token); a Block is one aligned 64-byte line.
        unsafe {
            let b = _mm512_load_si512(block.0.as_ptr().cast::<__m512i>());
            let missing = _mm512_andnot_si512(b, p);
            _mm512_test_epi64_mask(missing, missing) == 0
        }
    }
}

// The probe loops are compiled for AVX-512F alone on purpose: with DQ enabled, LLVM rewrites
// `_mm512_mul_epu32` (1 uop) into `vpmullq` (3 uops on port 0) because it can see the upper
// halves are zero, which makes the pattern rounds port-0 bound. The hash, which needs a full
// 64-bit multiply, runs in its own DQ function, called once per chunk of keys.

crate::arch::entry_points!(
    #[target_feature(enable = "avx512f")]
    // SAFETY: every entry point is an `unsafe fn` whose caller guarantees the CPU features.
    token: unsafe { Avx512::new_unchecked() }
);

/// XXH3 of each `u64` key, 8 lanes at a time.
///
/// # Safety
/// The CPU must support AVX-512 F and DQ.
#[target_feature(enable = "avx512f,avx512dq")]
pub(super) unsafe fn hash_u64(flip: u64, keys: &[u64], out: &mut [u64]) {
    let f = _mm512_set1_epi64(flip as i64);
    // Two vectors per step: each lane's hash is a chain of two 15-cycle `vpmullq`s, and
    // interleaving independent chains keeps the multiplier busy.
    let mut kc = keys.chunks_exact(16);
    let mut oc = out.chunks_exact_mut(16);
    for (k, o) in (&mut kc).zip(&mut oc) {
        // SAFETY: each chunk holds exactly 16 u64; the caller guarantees the features.
        unsafe {
            let a = _mm512_loadu_si512(k.as_ptr().cast());
            let b = _mm512_loadu_si512(k[8..].as_ptr().cast());
            let a = _mm512_xor_si512(_mm512_rol_epi64::<32>(a), f);
            let b = _mm512_xor_si512(_mm512_rol_epi64::<32>(b), f);
            let (a, b) = rrmxmx2(a, b, 8);
            _mm512_storeu_si512(o.as_mut_ptr().cast(), a);
            _mm512_storeu_si512(o[8..].as_mut_ptr().cast(), b);
        }
    }
    let mut kc = kc.remainder().chunks_exact(8);
    let mut oc = oc.into_remainder().chunks_exact_mut(8);
    for (k, o) in (&mut kc).zip(&mut oc) {
        // SAFETY: each chunk holds exactly 8 u64; the caller guarantees the features.
        unsafe {
            let x = _mm512_loadu_si512(k.as_ptr().cast());
            let x = _mm512_xor_si512(_mm512_rol_epi64::<32>(x), f);
            _mm512_storeu_si512(o.as_mut_ptr().cast(), rrmxmx(x, 8));
        }
    }
    for (o, &k) in oc.into_remainder().iter_mut().zip(kc.remainder()) {
        *o = crate::hash::u64_with_flip(k, flip);
    }
}

/// XXH3 of each `u32` key, 8 lanes at a time.
///
/// # Safety
/// The CPU must support AVX-512 F and DQ.
#[target_feature(enable = "avx512f,avx512dq")]
pub(super) unsafe fn hash_u32(flip: u64, keys: &[u32], out: &mut [u64]) {
    let mut kc = keys.chunks_exact(8);
    let mut oc = out.chunks_exact_mut(8);
    let f = _mm512_set1_epi64(flip as i64);
    for (k, o) in (&mut kc).zip(&mut oc) {
        // SAFETY: each key chunk is 8 u32 (32 bytes), each output chunk 8 u64; the caller
        // guarantees the features.
        unsafe {
            let x = _mm512_cvtepu32_epi64(_mm256_loadu_si256(k.as_ptr().cast()));
            let x = _mm512_xor_si512(_mm512_or_si512(x, _mm512_slli_epi64::<32>(x)), f);
            _mm512_storeu_si512(o.as_mut_ptr().cast(), rrmxmx(x, 4));
        }
    }
    for (o, &k) in oc.into_remainder().iter_mut().zip(kc.remainder()) {
        *o = crate::hash::u32_with_flip(k, flip);
    }
}
