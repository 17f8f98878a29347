//! AVX2 tier: a block is two 256-bit registers, a split block one.

use core::arch::x86_64::*;
use core::sync::atomic::AtomicU64;

use super::{Lanes, Routine};

/// Proof that the CPU supports AVX2: only [`Avx2::new_unchecked`] makes one.
#[derive(Clone, Copy)]
pub(crate) struct Avx2(());

impl Avx2 {
    /// # Safety
    /// The CPU must support AVX2.
    #[inline(always)]
    pub(crate) unsafe fn new_unchecked() -> Avx2 {
        Avx2(())
    }
}

type V = [__m256i; 2];

// Every `unsafe` block below relies on the same fact: an `Avx2` value exists, so the CPU
// supports AVX2 (see `new_unchecked`); loads and stores go through references of at least
// the width read or written, aligned where the aligned forms are used.

/// Low 64 bits of `a * b` per lane, from three 32x32->64 multiplies. A function, not a
/// closure: a closure would not inherit the caller's target features, so its intrinsics would
/// become calls.
#[inline(always)]
fn mul64(_: Avx2, a: __m256i, b: __m256i) -> __m256i {
    // SAFETY: AVX2 is present (token); register-only operations.
    unsafe {
        let lo_lo = _mm256_mul_epu32(a, b);
        let hi_lo = _mm256_mul_epu32(_mm256_srli_epi64::<32>(a), b);
        let lo_hi = _mm256_mul_epu32(a, _mm256_srli_epi64::<32>(b));
        _mm256_add_epi64(
            lo_lo,
            _mm256_slli_epi64::<32>(_mm256_add_epi64(hi_lo, lo_hi)),
        )
    }
}

/// `f` on both halves.
macro_rules! halves {
    ($f:path, $($a:expr),*) => {
        // SAFETY: AVX2 is present (token); register-only operations.
        unsafe { [$f($($a[0]),*), $f($($a[1]),*)] }
    };
}

impl Lanes for Avx2 {
    type V = V;
    type H = __m256i;
    const ISA: crate::isa::Isa = crate::isa::Isa::Avx2;

    #[inline(always)]
    fn splat(self, x: u64) -> V {
        // SAFETY: AVX2 is present (token).
        unsafe { [_mm256_set1_epi64x(x as i64); 2] }
    }
    #[inline(always)]
    fn splat_lo(self, lo: u32) -> V {
        // SAFETY: AVX2 is present (token). `vpbroadcastd`, from memory where `lo` was loaded.
        unsafe { [_mm256_set1_epi32(lo as i32); 2] }
    }
    #[inline(always)]
    fn blend_halves(self, hi: V, lo: V) -> V {
        // SAFETY: AVX2 is present (token). The odd 32-bit elements (upper halves) from `hi`.
        unsafe {
            [
                _mm256_blend_epi32::<0b1010_1010>(lo[0], hi[0]),
                _mm256_blend_epi32::<0b1010_1010>(lo[1], hi[1]),
            ]
        }
    }
    #[inline(always)]
    fn load(self, w: &[u64; 8]) -> V {
        // The aligned form needs 32-byte alignment; blocks and rows have 64.
        debug_assert!(w.as_ptr().cast::<__m256i>().is_aligned());
        let p = w.as_ptr().cast::<__m256i>();
        // SAFETY: AVX2 is present; `w` is 64 bytes, 64-byte aligned (blocks and rows).
        unsafe { [_mm256_load_si256(p), _mm256_load_si256(p.add(1))] }
    }
    #[inline(always)]
    fn store(self, w: &mut [u64; 8], v: V) {
        let p = w.as_mut_ptr().cast::<__m256i>();
        // SAFETY: as in `load`, writing.
        unsafe {
            _mm256_store_si256(p, v[0]);
            _mm256_store_si256(p.add(1), v[1]);
        }
    }
    #[inline(always)]
    fn loadu(self, w: &[u64]) -> V {
        let w = &w[..8];
        let p = w.as_ptr().cast::<__m256i>();
        // SAFETY: AVX2 is present; `w` holds 8 words (64 bytes).
        unsafe { [_mm256_loadu_si256(p), _mm256_loadu_si256(p.add(1))] }
    }
    #[inline(always)]
    fn storeu(self, out: &mut [u64], v: V) {
        let out = &mut out[..8];
        let p = out.as_mut_ptr().cast::<__m256i>();
        // SAFETY: AVX2 is present; `out` holds 8 words (64 bytes).
        unsafe {
            _mm256_storeu_si256(p, v[0]);
            _mm256_storeu_si256(p.add(1), v[1]);
        }
    }
    #[inline(always)]
    fn split_u128(self, keys: &[u128]) -> (V, V) {
        let keys = &keys[..8];
        // SAFETY: AVX2 is present (token); `keys` holds 8 u128 (128 bytes). On x86-64 a u128
        // is little-endian: its low word first.
        unsafe { split16(keys.as_ptr().cast()) }
    }
    #[inline(always)]
    fn split_fixed16(self, keys: &[[u8; 16]]) -> (V, V) {
        let keys = &keys[..8];
        // SAFETY: as in `split_u128`: 128 bytes, each key read as a little-endian u128.
        unsafe { split16(keys.as_ptr().cast()) }
    }
    #[inline(always)]
    fn widen_u32(self, k: &[u32]) -> V {
        let k = &k[..8];
        let p = k.as_ptr().cast::<__m128i>();
        // SAFETY: AVX2 is present; `k` holds 8 u32 (32 bytes).
        unsafe {
            [
                _mm256_cvtepu32_epi64(_mm_loadu_si128(p)),
                _mm256_cvtepu32_epi64(_mm_loadu_si128(p.add(1))),
            ]
        }
    }
    #[inline(always)]
    fn widen_i32(self, k: &[i32]) -> V {
        let k = &k[..8];
        let p = k.as_ptr().cast::<__m128i>();
        // SAFETY: AVX2 is present; `k` holds 8 i32 (32 bytes).
        unsafe {
            [
                _mm256_cvtepi32_epi64(_mm_loadu_si128(p)),
                _mm256_cvtepi32_epi64(_mm_loadu_si128(p.add(1))),
            ]
        }
    }
    #[inline(always)]
    fn widen_u16(self, k: &[u16]) -> V {
        let k = &k[..8];
        let p = k.as_ptr();
        // SAFETY: AVX2 is present; `k` holds 8 u16, and each load reads 4 of them (8 bytes).
        unsafe {
            [
                _mm256_cvtepu16_epi64(_mm_loadl_epi64(p.cast())),
                _mm256_cvtepu16_epi64(_mm_loadl_epi64(p.add(4).cast())),
            ]
        }
    }
    #[inline(always)]
    fn widen_i16(self, k: &[i16]) -> V {
        let k = &k[..8];
        let p = k.as_ptr();
        // SAFETY: AVX2 is present; `k` holds 8 i16, and each load reads 4 of them (8 bytes).
        unsafe {
            [
                _mm256_cvtepi16_epi64(_mm_loadl_epi64(p.cast())),
                _mm256_cvtepi16_epi64(_mm_loadl_epi64(p.add(4).cast())),
            ]
        }
    }
    #[inline(always)]
    fn widen_u8(self, k: &[u8]) -> V {
        let k = &k[..8];
        // SAFETY: AVX2 is present; `k` holds 8 bytes, the load's width.
        unsafe {
            let x = _mm_loadl_epi64(k.as_ptr().cast());
            [
                _mm256_cvtepu8_epi64(x),
                _mm256_cvtepu8_epi64(_mm_srli_si128::<4>(x)),
            ]
        }
    }
    #[inline(always)]
    fn widen_i8(self, k: &[i8]) -> V {
        let k = &k[..8];
        // SAFETY: AVX2 is present; `k` holds 8 bytes, the load's width.
        unsafe {
            let x = _mm_loadl_epi64(k.as_ptr().cast());
            [
                _mm256_cvtepi8_epi64(x),
                _mm256_cvtepi8_epi64(_mm_srli_si128::<4>(x)),
            ]
        }
    }
    #[inline(always)]
    fn or(self, a: V, b: V) -> V {
        halves!(_mm256_or_si256, a, b)
    }
    #[inline(always)]
    fn and(self, a: V, b: V) -> V {
        halves!(_mm256_and_si256, a, b)
    }
    #[inline(always)]
    fn xor(self, a: V, b: V) -> V {
        halves!(_mm256_xor_si256, a, b)
    }
    #[inline(always)]
    fn add(self, a: V, b: V) -> V {
        halves!(_mm256_add_epi64, a, b)
    }
    #[inline(always)]
    fn mul32(self, a: V, b: V) -> V {
        halves!(_mm256_mul_epu32, a, b)
    }
    #[inline(always)]
    fn mul_halves(self, a: V, b: V) -> V {
        // `vpmuludq` reads the low halves only.
        self.mul32(a, b)
    }
    const MUL_LO32: bool = true;
    #[inline(always)]
    fn mul_lo32(self, a: V, b: V) -> V {
        // Per 32-bit half: the low halves' product modulo 2^32, and the upper halves' (both
        // zero), zero. One instruction where the default takes two.
        halves!(_mm256_mullo_epi32, a, b)
    }
    #[inline(always)]
    fn sub_if_ge(self, x: V, _: V, neg_m: V) -> V {
        let t = self.add(x, neg_m);
        // SAFETY: AVX2 is present (token); register-only operations. The blend keeps `x`
        // where `t`'s top bit is set, that is where `x < m` (see the trait).
        unsafe {
            let pick = |t: __m256i, x: __m256i| {
                _mm256_castpd_si256(_mm256_blendv_pd(
                    _mm256_castsi256_pd(t),
                    _mm256_castsi256_pd(x),
                    _mm256_castsi256_pd(t),
                ))
            };
            [pick(t[0], x[0]), pick(t[1], x[1])]
        }
    }
    #[inline(always)]
    fn mul64(self, a: V, b: V) -> V {
        [mul64(self, a[0], b[0]), mul64(self, a[1], b[1])]
    }
    #[inline(always)]
    fn shr<const N: i32>(self, a: V) -> V {
        halves!(_mm256_srli_epi64::<N>, a)
    }
    #[inline(always)]
    fn shl<const N: i32>(self, a: V) -> V {
        halves!(_mm256_slli_epi64::<N>, a)
    }
    #[inline(always)]
    fn rotl<const L: i32, const R: i32>(self, a: V) -> V {
        if L == 32 {
            // Swapping the 32-bit halves is one shuffle.
            halves!(_mm256_shuffle_epi32::<0b10_11_00_01>, a)
        } else {
            self.or(self.shl::<L>(a), self.shr::<R>(a))
        }
    }
    #[inline(always)]
    fn bswap64(self, a: V) -> V {
        // SAFETY: AVX2 is present (token); register-only operations.
        unsafe {
            let order = _mm256_setr_epi8(
                7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 15,
                14, 13, 12, 11, 10, 9, 8,
            );
            [
                _mm256_shuffle_epi8(a[0], order),
                _mm256_shuffle_epi8(a[1], order),
            ]
        }
    }
    const AES_ROUNDS: bool = true;
    const KEYS16_IN_LANES: bool = true;
    #[inline(always)]
    fn outlined<R: Routine>(self, r: R) -> R::Output {
        // SAFETY: the token proves AVX2.
        unsafe { outlined(self, r) }
    }
    #[inline(always)]
    fn shl_var(self, a: V, count: V) -> V {
        halves!(_mm256_sllv_epi64, a, count)
    }
    const GATHERS: bool = true;
    #[inline(always)]
    unsafe fn gather(self, words: *const u64, idx: V) -> V {
        let base = words.cast::<i64>();
        // SAFETY: AVX2 is present (token); the caller guarantees every index is in bounds of
        // the slice at `words`, so each lane reads one of its words (scale 8).
        unsafe {
            [
                _mm256_i64gather_epi64::<8>(base, idx[0]),
                _mm256_i64gather_epi64::<8>(base, idx[1]),
            ]
        }
    }
    #[inline(always)]
    fn covers(self, b: V, p: V) -> bool {
        // SAFETY: AVX2 is present (token). `testc(a, b)` is 1 when every bit of b is set in a.
        unsafe { _mm256_testc_si256(b[0], p[0]) & _mm256_testc_si256(b[1], p[1]) != 0 }
    }

    #[inline(always)]
    fn splat32(self, x: u32) -> __m256i {
        // SAFETY: AVX2 is present (token).
        unsafe { _mm256_set1_epi32(x as i32) }
    }
    #[inline(always)]
    fn load32(self, w: &[u32; 8]) -> __m256i {
        debug_assert!(w.as_ptr().cast::<__m256i>().is_aligned());
        // SAFETY: AVX2 is present; `w` is 32 bytes, 32-byte aligned (split blocks and salts).
        unsafe { _mm256_load_si256(w.as_ptr().cast()) }
    }
    #[inline(always)]
    fn store32(self, w: &mut [u32; 8], v: __m256i) {
        // SAFETY: as in `load32`, writing.
        unsafe { _mm256_store_si256(w.as_mut_ptr().cast(), v) }
    }
    #[inline(always)]
    unsafe fn store_shared(self, words: &[AtomicU64; 8], v: V) {
        let [a, b] = super::shared_halves(words);
        // SAFETY: the halves of an aligned block, under the caller's lock (the caller).
        unsafe {
            self.store32_shared(a, v[0]);
            self.store32_shared(b, v[1]);
        }
    }
    #[inline(always)]
    unsafe fn store32_shared(self, words: &[AtomicU64; 4], v: __m256i) {
        // SAFETY: AVX2 (so AVX) is present (token); the caller's guarantees.
        unsafe { store_shared(words, v) }
    }
    #[inline(always)]
    fn or32(self, a: __m256i, b: __m256i) -> __m256i {
        // SAFETY: AVX2 is present (token).
        unsafe { _mm256_or_si256(a, b) }
    }
    #[inline(always)]
    fn mul32x32(self, a: __m256i, b: __m256i) -> __m256i {
        // SAFETY: AVX2 is present (token).
        unsafe { _mm256_mullo_epi32(a, b) }
    }
    #[inline(always)]
    fn shr32<const N: i32>(self, a: __m256i) -> __m256i {
        // SAFETY: AVX2 is present (token).
        unsafe { _mm256_srli_epi32::<N>(a) }
    }
    #[inline(always)]
    fn shl32_var(self, a: __m256i, count: __m256i) -> __m256i {
        // SAFETY: AVX2 is present (token).
        unsafe { _mm256_sllv_epi32(a, count) }
    }
    #[inline(always)]
    fn covers32(self, b: __m256i, p: __m256i) -> bool {
        // SAFETY: AVX2 is present (token).
        unsafe { _mm256_testc_si256(b, p) != 0 }
    }
}

/// [`Lanes::store32_shared`] in one aligned 256-bit store. Assembly, not
/// `_mm256_store_si256`: to Rust that would be a plain store racing with readers' atomic
/// loads; `asm!` is an opaque access the compiler neither splits, merges nor reorders
/// across the stripe lock's release. On x86 each aligned 8-byte part of it is written whole.
///
/// # Safety
/// The CPU supports AVX; `words` is 32-byte aligned and written only under the stripe lock
/// the caller holds.
#[inline]
#[target_feature(enable = "avx")]
unsafe fn store_shared(words: &[AtomicU64; 4], v: __m256i) {
    // SAFETY: the caller's guarantees; the 32 bytes lie in `UnsafeCell`s (atomics), which
    // may be written through a shared reference.
    unsafe {
        core::arch::asm!(
            "vmovdqa ymmword ptr [{p}], {v}",
            p = in(reg) words.as_ptr(),
            v = in(ymm_reg) v,
            options(nostack, preserves_flags),
        )
    }
}

/// [`Lanes::outlined`]: `r` in a function of its own, with AVX2 enabled.
///
/// # Safety
/// The CPU must support AVX2.
#[inline(never)]
#[target_feature(enable = "avx2")]
unsafe fn outlined<R: Routine>(l: Avx2, r: R) -> R::Output {
    r.run(l)
}

/// The low and the high 64-bit words of eight 16-byte little-endian keys at `p`.
///
/// # Safety
/// AVX2 is present, and `p` points to 128 readable bytes (any alignment).
#[inline(always)]
unsafe fn split16(p: *const u8) -> (V, V) {
    let p = p.cast::<__m128i>();
    // SAFETY: the caller guarantees AVX2 and the 128 bytes, keys 0-3 and 4-7.
    let ((lo0, hi0), (lo1, hi1)) = unsafe { (split4(p), split4(p.add(4))) };
    ([lo0, lo1], [hi0, hi1])
}

/// [`split16`] of four keys: keys 0 and 2 loaded into one register's two 128-bit lanes, keys
/// 1 and 3 into another, so one unpack of the two puts the four keys' words in order, with no
/// cross-lane shuffle.
///
/// # Safety
/// AVX2 is present, and `q` points to 64 readable bytes (any alignment).
#[inline(always)]
unsafe fn split4(q: *const __m128i) -> (__m256i, __m256i) {
    // SAFETY: the caller guarantees AVX2 and four 16-byte keys at `q`.
    unsafe {
        let even = _mm256_loadu2_m128i(q.add(2), q);
        let odd = _mm256_loadu2_m128i(q.add(3), q.add(1));
        (
            _mm256_unpacklo_epi64(even, odd),
            _mm256_unpackhi_epi64(even, odd),
        )
    }
}
