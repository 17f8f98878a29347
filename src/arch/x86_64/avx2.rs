//! AVX2 tier: 4 hash lanes per vector, a block as two 256-bit halves.

use std::arch::x86_64::*;

use crate::arch::{Keys, Lanes, Shape, Sink};
use crate::hash::PRIME_MX2;
use crate::layout::{Block, Row};

/// Proof that the CPU supports AVX2: only [`Avx2::new_unchecked`] makes one.
#[derive(Clone, Copy)]
pub(super) struct Avx2(());

impl Avx2 {
    /// # Safety
    /// The CPU must support AVX2.
    #[inline(always)]
    unsafe fn new_unchecked() -> Avx2 {
        Avx2(())
    }
}

// Every `unsafe` block below relies on the same fact: an `Avx2` value exists, so the CPU
// supports AVX2 (see `new_unchecked`), and loads and stores go through pointers derived from
// slices or blocks of at least the width read or written.

#[inline(always)]
fn rotl<const L: i32, const R: i32>(_: Avx2, x: __m256i) -> __m256i {
    // SAFETY: AVX2 is present (token); register-only operations.
    unsafe { _mm256_or_si256(_mm256_slli_epi64::<L>(x), _mm256_srli_epi64::<R>(x)) }
}

/// Low 64 bits of `a * c` per lane, from three 32x32->64 multiplies.
#[inline(always)]
fn mul64(_: Avx2, a: __m256i, c: u64) -> __m256i {
    // SAFETY: AVX2 is present (token); register-only operations.
    unsafe {
        let c_lo = _mm256_set1_epi64x((c & 0xffff_ffff) as i64);
        let c_hi = _mm256_set1_epi64x((c >> 32) as i64);
        let lo_lo = _mm256_mul_epu32(a, c_lo);
        let hi_lo = _mm256_mul_epu32(_mm256_srli_epi64::<32>(a), c_lo);
        let lo_hi = _mm256_mul_epu32(a, c_hi);
        _mm256_add_epi64(
            lo_lo,
            _mm256_slli_epi64::<32>(_mm256_add_epi64(hi_lo, lo_hi)),
        )
    }
}

#[inline(always)]
fn rrmxmx(t: Avx2, h: __m256i, len: u64) -> __m256i {
    // SAFETY: AVX2 is present (token); register-only operations.
    unsafe {
        let h = _mm256_xor_si256(
            h,
            _mm256_xor_si256(rotl::<49, 15>(t, h), rotl::<24, 40>(t, h)),
        );
        let h = mul64(t, h, PRIME_MX2);
        let s = _mm256_add_epi64(_mm256_srli_epi64::<35>(h), _mm256_set1_epi64x(len as i64));
        let h = mul64(t, _mm256_xor_si256(h, s), PRIME_MX2);
        _mm256_xor_si256(h, _mm256_srli_epi64::<28>(h))
    }
}

/// Pattern half `half` (words `4*half..4*half+4`) of `lo` over `rows`.
#[inline(always)]
fn pattern_half<const WORDS: bool>(_: Avx2, lo: __m256i, rows: &[Row], half: usize) -> __m256i {
    // SAFETY: AVX2 is present (token); the loads read 4 words inside 8-word row fields.
    unsafe {
        let one = _mm256_set1_epi64x(1);
        let mut p = _mm256_setzero_si256();
        for row in rows {
            let salts = _mm256_loadu_si256(row.salt[4 * half..].as_ptr().cast());
            let idx = _mm256_srli_epi64::<25>(_mm256_mul_epu32(lo, salts));
            let count = if WORDS {
                _mm256_and_si256(idx, _mm256_set1_epi64x(63))
            } else {
                let xor = _mm256_loadu_si256(row.xor[4 * half..].as_ptr().cast());
                _mm256_xor_si256(_mm256_and_si256(idx, _mm256_set1_epi64x(127)), xor)
            };
            p = _mm256_or_si256(p, _mm256_sllv_epi64(one, count));
        }
        p
    }
}

impl Lanes for Avx2 {
    #[inline(always)]
    fn hash_u64(self, flip: u64, keys: &[u64], out: &mut [u64]) {
        let mut kc = keys.chunks_exact(4);
        let mut oc = out.chunks_exact_mut(4);
        // SAFETY: AVX2 is present (token); each chunk holds exactly 4 u64.
        unsafe {
            let f = _mm256_set1_epi64x(flip as i64);
            for (k, o) in (&mut kc).zip(&mut oc) {
                let x = _mm256_loadu_si256(k.as_ptr().cast());
                // Swapping the 32-bit halves is XXH3's rotate of the two LE32 reads by 32.
                let x = _mm256_xor_si256(_mm256_shuffle_epi32::<0b10_11_00_01>(x), f);
                _mm256_storeu_si256(o.as_mut_ptr().cast(), rrmxmx(self, x, 8));
            }
        }
        for (o, &k) in oc.into_remainder().iter_mut().zip(kc.remainder()) {
            *o = crate::hash::u64_with_flip(k, flip);
        }
    }

    #[inline(always)]
    fn hash_u32(self, flip: u64, keys: &[u32], out: &mut [u64]) {
        let mut kc = keys.chunks_exact(4);
        let mut oc = out.chunks_exact_mut(4);
        // SAFETY: AVX2 is present (token); each key chunk holds 4 u32 (16 bytes), each output
        // chunk 4 u64.
        unsafe {
            let f = _mm256_set1_epi64x(flip as i64);
            for (k, o) in (&mut kc).zip(&mut oc) {
                let x = _mm256_cvtepu32_epi64(_mm_loadu_si128(k.as_ptr().cast()));
                let x = _mm256_xor_si256(_mm256_or_si256(x, _mm256_slli_epi64::<32>(x)), f);
                _mm256_storeu_si256(o.as_mut_ptr().cast(), rrmxmx(self, x, 4));
            }
        }
        for (o, &k) in oc.into_remainder().iter_mut().zip(kc.remainder()) {
            *o = crate::hash::u32_with_flip(k, flip);
        }
    }

    #[inline(always)]
    fn insert<const WORDS: bool>(self, block: &mut Block, lo: u32, rows: &[Row]) {
        // SAFETY: AVX2 is present (token); a Block is 64-byte aligned and 64 bytes long, so
        // both aligned 32-byte halves are in bounds.
        unsafe {
            let lo = _mm256_set1_epi64x(lo as i64);
            let ptr = block.0.as_mut_ptr().cast::<__m256i>();
            let a = _mm256_or_si256(
                _mm256_load_si256(ptr),
                pattern_half::<WORDS>(self, lo, rows, 0),
            );
            let b = _mm256_or_si256(
                _mm256_load_si256(ptr.add(1)),
                pattern_half::<WORDS>(self, lo, rows, 1),
            );
            _mm256_store_si256(ptr, a);
            _mm256_store_si256(ptr.add(1), b);
        }
    }

    #[inline(always)]
    fn pattern<const WORDS: bool>(self, lo: u32, rows: &[Row]) -> Block {
        let mut b = Block::ZERO;
        // SAFETY: AVX2 is present (token); a Block is 64-byte aligned and 64 bytes long.
        unsafe {
            let lo = _mm256_set1_epi64x(lo as i64);
            let ptr = b.0.as_mut_ptr().cast::<__m256i>();
            _mm256_store_si256(ptr, pattern_half::<WORDS>(self, lo, rows, 0));
            _mm256_store_si256(ptr.add(1), pattern_half::<WORDS>(self, lo, rows, 1));
        }
        b
    }

    #[inline(always)]
    fn contains<const WORDS: bool>(self, block: &Block, lo: u32, rows: &[Row]) -> bool {
        // SAFETY: as in `insert`, reading only.
        unsafe {
            let lo = _mm256_set1_epi64x(lo as i64);
            let ptr = block.0.as_ptr().cast::<__m256i>();
            // testc(a, b) is 1 when every bit of b is set in a.
            _mm256_testc_si256(
                _mm256_load_si256(ptr),
                pattern_half::<WORDS>(self, lo, rows, 0),
            ) & _mm256_testc_si256(
                _mm256_load_si256(ptr.add(1)),
                pattern_half::<WORDS>(self, lo, rows, 1),
            ) != 0
        }
    }
}

crate::arch::entry_points!(
    #[target_feature(enable = "avx2")]
    // SAFETY: every entry point is an `unsafe fn` whose caller guarantees the CPU features.
    token: unsafe { Avx2::new_unchecked() }
);

/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn hash_u64(flip: u64, keys: &[u64], out: &mut [u64]) {
    // SAFETY: the caller guarantees AVX2.
    unsafe { Avx2::new_unchecked() }.hash_u64(flip, keys, out)
}

/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn hash_u32(flip: u64, keys: &[u32], out: &mut [u64]) {
    // SAFETY: the caller guarantees AVX2.
    unsafe { Avx2::new_unchecked() }.hash_u32(flip, keys, out)
}
