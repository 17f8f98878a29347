//! AVX-512 tier (F + DQ): a block is one 512-bit register. Split blocks (256 bits) use the
//! AVX2 primitives, which every AVX-512 CPU has.

use core::arch::x86_64::*;
use core::sync::atomic::AtomicU64;

use super::avx2::Avx2;
use super::{Lanes, Routine};

/// Proof that the CPU supports AVX-512 F and DQ, and AVX2: only [`Avx512::new_unchecked`]
/// makes one.
#[derive(Clone, Copy)]
pub(crate) struct Avx512(());

impl Avx512 {
    /// # Safety
    /// The CPU must support AVX-512 F and DQ, and AVX2.
    #[inline(always)]
    pub(crate) unsafe fn new_unchecked() -> Avx512 {
        Avx512(())
    }

    /// The AVX2 token this one implies.
    #[inline(always)]
    fn avx2(self) -> Avx2 {
        // SAFETY: an `Avx512` exists only where AVX2 was detected as well (`Kernel::get`).
        unsafe { Avx2::new_unchecked() }
    }
}

// The probe loops are compiled for AVX-512F alone on purpose: with DQ enabled, LLVM rewrites
// `_mm512_mul_epu32` (1 uop) into `vpmullq` (3 uops on port 0) because it can see the upper
// halves are zero, which makes the pattern rounds port-0 bound. The hashes that need a full
// 64-bit multiply run in functions of their own with DQ ([`Lanes::with_mul64`]), called once
// per chunk of keys.

// Every `unsafe` block below relies on the same fact: an `Avx512` value exists, so the CPU
// supports AVX-512 F and DQ (see `new_unchecked`); loads and stores go through references of
// at least the width read or written, aligned where the aligned forms are used.

impl Lanes for Avx512 {
    type V = __m512i;
    type H = __m256i;
    const ISA: crate::isa::Isa = crate::isa::Isa::Avx512;

    #[inline(always)]
    fn splat(self, x: u64) -> __m512i {
        // SAFETY: AVX-512 F is present (token).
        unsafe { _mm512_set1_epi64(x as i64) }
    }
    #[inline(always)]
    fn splat_lo(self, lo: u32) -> __m512i {
        // SAFETY: AVX-512 F is present (token). `vpbroadcastd`, from memory where `lo` was
        // loaded.
        unsafe { _mm512_set1_epi32(lo as i32) }
    }
    #[inline(always)]
    fn blend_halves(self, hi: __m512i, lo: __m512i) -> __m512i {
        // SAFETY: AVX-512 F is present (token). The odd 32-bit elements (upper halves) from
        // `hi`.
        unsafe { _mm512_mask_blend_epi32(0xaaaa, lo, hi) }
    }
    #[inline(always)]
    fn load(self, w: &[u64; 8]) -> __m512i {
        debug_assert!(w.as_ptr().cast::<__m512i>().is_aligned());
        // SAFETY: AVX-512 F is present; `w` is 64 bytes, 64-byte aligned (blocks and rows).
        unsafe { _mm512_load_si512(w.as_ptr().cast()) }
    }
    #[inline(always)]
    fn store(self, w: &mut [u64; 8], v: __m512i) {
        // SAFETY: as in `load`, writing.
        unsafe { _mm512_store_si512(w.as_mut_ptr().cast(), v) }
    }
    #[inline(always)]
    fn loadu(self, w: &[u64]) -> __m512i {
        let w = &w[..8];
        // SAFETY: AVX-512 F is present; `w` holds 8 words.
        unsafe { _mm512_loadu_si512(w.as_ptr().cast()) }
    }
    #[inline(always)]
    fn storeu(self, out: &mut [u64], v: __m512i) {
        let out = &mut out[..8];
        // SAFETY: AVX-512 F is present; `out` holds 8 words.
        unsafe { _mm512_storeu_si512(out.as_mut_ptr().cast(), v) }
    }
    #[inline(always)]
    fn widen_u32(self, k: &[u32]) -> __m512i {
        let k = &k[..8];
        // SAFETY: AVX-512 F is present; `k` holds 8 u32 (32 bytes).
        unsafe { _mm512_cvtepu32_epi64(_mm256_loadu_si256(k.as_ptr().cast())) }
    }
    #[inline(always)]
    fn widen_i32(self, k: &[i32]) -> __m512i {
        let k = &k[..8];
        // SAFETY: AVX-512 F is present; `k` holds 8 i32 (32 bytes).
        unsafe { _mm512_cvtepi32_epi64(_mm256_loadu_si256(k.as_ptr().cast())) }
    }
    #[inline(always)]
    fn widen_u16(self, k: &[u16]) -> __m512i {
        let k = &k[..8];
        // SAFETY: AVX-512 F is present; `k` holds 8 u16 (16 bytes).
        unsafe { _mm512_cvtepu16_epi64(_mm_loadu_si128(k.as_ptr().cast())) }
    }
    #[inline(always)]
    fn widen_i16(self, k: &[i16]) -> __m512i {
        let k = &k[..8];
        // SAFETY: AVX-512 F is present; `k` holds 8 i16 (16 bytes).
        unsafe { _mm512_cvtepi16_epi64(_mm_loadu_si128(k.as_ptr().cast())) }
    }
    #[inline(always)]
    fn widen_u8(self, k: &[u8]) -> __m512i {
        let k = &k[..8];
        // SAFETY: AVX-512 F is present; `k` holds 8 bytes, the load's width.
        unsafe { _mm512_cvtepu8_epi64(_mm_loadl_epi64(k.as_ptr().cast())) }
    }
    #[inline(always)]
    fn widen_i8(self, k: &[i8]) -> __m512i {
        let k = &k[..8];
        // SAFETY: AVX-512 F is present; `k` holds 8 bytes, the load's width.
        unsafe { _mm512_cvtepi8_epi64(_mm_loadl_epi64(k.as_ptr().cast())) }
    }
    #[inline(always)]
    fn or(self, a: __m512i, b: __m512i) -> __m512i {
        // SAFETY: AVX-512 F is present (token).
        unsafe { _mm512_or_si512(a, b) }
    }
    #[inline(always)]
    fn and(self, a: __m512i, b: __m512i) -> __m512i {
        // SAFETY: AVX-512 F is present (token).
        unsafe { _mm512_and_si512(a, b) }
    }
    #[inline(always)]
    fn xor(self, a: __m512i, b: __m512i) -> __m512i {
        // SAFETY: AVX-512 F is present (token).
        unsafe { _mm512_xor_si512(a, b) }
    }
    #[inline(always)]
    fn add(self, a: __m512i, b: __m512i) -> __m512i {
        // SAFETY: AVX-512 F is present (token).
        unsafe { _mm512_add_epi64(a, b) }
    }
    #[inline(always)]
    fn sub_if_ge(self, x: __m512i, _: __m512i, neg_m: __m512i) -> __m512i {
        // x - m wraps above x exactly where x < m, so the unsigned minimum picks the answer.
        // SAFETY: AVX-512 F is present (token).
        unsafe { _mm512_min_epu64(x, _mm512_add_epi64(x, neg_m)) }
    }
    #[inline(always)]
    fn mul32(self, a: __m512i, b: __m512i) -> __m512i {
        // SAFETY: AVX-512 F is present (token).
        unsafe { _mm512_mul_epu32(a, b) }
    }
    #[inline(always)]
    fn mul_halves(self, a: __m512i, b: __m512i) -> __m512i {
        // `vpmuludq` reads the low halves only.
        self.mul32(a, b)
    }
    #[inline(always)]
    fn mul64(self, a: __m512i, b: __m512i) -> __m512i {
        // SAFETY: the token proves DQ. Not inlined into the F-only probe loops (see above);
        // the hashes, which need it, run in their own DQ functions.
        unsafe { mullo_dq(a, b) }
    }
    #[inline(always)]
    fn shr<const N: i32>(self, a: __m512i) -> __m512i {
        // The immediate forms take `u32` counts where the trait (like AVX2) has `i32`; LLVM
        // turns a constant count in a register into the immediate form.
        // SAFETY: AVX-512 F is present (token).
        unsafe { _mm512_srl_epi64(a, _mm_set_epi64x(0, N as i64)) }
    }
    #[inline(always)]
    fn shl<const N: i32>(self, a: __m512i) -> __m512i {
        // SAFETY: AVX-512 F is present (token); as in `shr`.
        unsafe { _mm512_sll_epi64(a, _mm_set_epi64x(0, N as i64)) }
    }
    #[inline(always)]
    fn rotl<const L: i32, const R: i32>(self, a: __m512i) -> __m512i {
        // SAFETY: AVX-512 F is present (token).
        unsafe { _mm512_rol_epi64::<L>(a) }
    }
    #[inline(always)]
    fn shl_var(self, a: __m512i, count: __m512i) -> __m512i {
        // SAFETY: AVX-512 F is present (token).
        unsafe { _mm512_sllv_epi64(a, count) }
    }
    #[inline(always)]
    fn bit_mod64(self, idx: __m512i) -> __m512i {
        // A rotate takes its count mod 64: the `& 63` for free.
        // SAFETY: AVX-512 F is present (token).
        unsafe { _mm512_rolv_epi64(_mm512_set1_epi64(1), idx) }
    }
    const GATHERS: bool = true;
    #[inline(always)]
    unsafe fn gather(self, words: *const u64, idx: __m512i) -> __m512i {
        // SAFETY: AVX-512 F is present (token); the caller guarantees every index is in
        // bounds of the slice at `words`, so each lane reads one of its words (scale 8).
        unsafe { _mm512_i64gather_epi64::<8>(idx, words.cast()) }
    }
    #[inline(always)]
    fn covers(self, b: __m512i, p: __m512i) -> bool {
        // SAFETY: AVX-512 F is present (token).
        unsafe {
            let missing = _mm512_andnot_si512(b, p);
            _mm512_test_epi64_mask(missing, missing) == 0
        }
    }

    #[inline(always)]
    fn splat32(self, x: u32) -> __m256i {
        self.avx2().splat32(x)
    }
    #[inline(always)]
    fn load32(self, w: &[u32; 8]) -> __m256i {
        self.avx2().load32(w)
    }
    #[inline(always)]
    fn store32(self, w: &mut [u32; 8], v: __m256i) {
        self.avx2().store32(w, v)
    }
    #[inline(always)]
    unsafe fn store32_shared(self, words: &[AtomicU64; 4], v: __m256i) {
        // SAFETY: the caller's guarantees.
        unsafe { self.avx2().store32_shared(words, v) }
    }
    #[inline(always)]
    unsafe fn store_shared(self, words: &[AtomicU64; 8], v: __m512i) {
        let [a, b] = super::shared_halves(words);
        // SAFETY: AVX-512 F is present (token); the halves of an aligned block, under the
        // caller's lock (the caller).
        unsafe {
            self.avx2()
                .store32_shared(a, _mm512_extracti64x4_epi64::<0>(v));
            self.avx2()
                .store32_shared(b, _mm512_extracti64x4_epi64::<1>(v));
        }
    }
    #[inline(always)]
    fn or32(self, a: __m256i, b: __m256i) -> __m256i {
        self.avx2().or32(a, b)
    }
    #[inline(always)]
    fn mul32x32(self, a: __m256i, b: __m256i) -> __m256i {
        self.avx2().mul32x32(a, b)
    }
    #[inline(always)]
    fn shr32<const N: i32>(self, a: __m256i) -> __m256i {
        self.avx2().shr32::<N>(a)
    }
    #[inline(always)]
    fn shl32_var(self, a: __m256i, count: __m256i) -> __m256i {
        self.avx2().shl32_var(a, count)
    }
    #[inline(always)]
    fn covers32(self, b: __m256i, p: __m256i) -> bool {
        self.avx2().covers32(b, p)
    }

    #[inline(always)]
    fn bswap64(self, a: __m512i) -> __m512i {
        // Without BW (no byte shuffle): swap the 32-bit halves, then the 16-bit halves of
        // each, then the bytes of each 16-bit pair.
        // SAFETY: AVX-512 F is present (token).
        unsafe {
            let a = _mm512_rol_epi32::<16>(_mm512_rol_epi64::<32>(a));
            let m = _mm512_set1_epi16(0x00ff);
            _mm512_or_si512(
                _mm512_slli_epi32::<8>(_mm512_and_si512(a, m)),
                _mm512_and_si512(_mm512_srli_epi32::<8>(a), m),
            )
        }
    }
    #[inline(always)]
    fn split_u128(self, keys: &[u128]) -> (__m512i, __m512i) {
        let keys = &keys[..8];
        // SAFETY: AVX-512 F is present (token); `keys` holds 8 u128 (128 bytes). On x86-64 a
        // u128 is little-endian: its low word first.
        unsafe { split16(keys.as_ptr().cast()) }
    }
    #[inline(always)]
    fn split_fixed16(self, keys: &[[u8; 16]]) -> (__m512i, __m512i) {
        let keys = &keys[..8];
        // SAFETY: as in `split_u128`: 128 bytes, each key read as a little-endian u128.
        unsafe { split16(keys.as_ptr().cast()) }
    }
    const AES_ROUNDS: bool = true;
    const KEYS16_IN_LANES: bool = true;
    const BYTES_IN_LANES: bool = true;
    const MUL64_NATIVE: bool = true;
    #[inline(always)]
    fn outlined<R: Routine>(self, r: R) -> R::Output {
        // SAFETY: the token proves AVX-512 F and AVX2.
        unsafe { outlined(self, r) }
    }
    #[inline(always)]
    fn outlined_mul64<R: Routine>(self, r: R) -> R::Output {
        // SAFETY: the token proves AVX-512 F and DQ, and AVX2.
        unsafe { outlined_mul64(self, r) }
    }
    #[inline(always)]
    fn with_mul64<R: Routine>(self, r: R) -> R::Output {
        self.outlined_mul64(r)
    }
}

/// Wrapping 64-bit product per lane.
///
/// # Safety
/// The CPU must support AVX-512 F and DQ.
#[inline]
#[target_feature(enable = "avx512f,avx512dq")]
unsafe fn mullo_dq(a: __m512i, b: __m512i) -> __m512i {
    _mm512_mullo_epi64(a, b)
}

/// [`Lanes::outlined`]: `r` in a function of its own, with the probe loops' features
/// (AVX-512F, not DQ: see above).
///
/// # Safety
/// The CPU must support AVX-512 F and AVX2.
#[inline(never)]
#[target_feature(enable = "avx2,avx512f")]
unsafe fn outlined<R: Routine>(l: Avx512, r: R) -> R::Output {
    r.run(l)
}

/// [`Lanes::outlined_mul64`]: `r` in a function of its own where `vpmullq` is enabled (DQ),
/// with VL and BW for the byte-string hashes' 256-bit and byte operations.
///
/// # Safety
/// The CPU must support AVX-512 F, DQ, VL and BW, and AVX2.
#[inline(never)]
#[target_feature(enable = "avx2,avx512f,avx512dq,avx512vl,avx512bw")]
unsafe fn outlined_mul64<R: Routine>(l: Avx512, r: R) -> R::Output {
    r.run(l)
}

/// The low and the high 64-bit words of eight 16-byte little-endian keys at `p`: two loads,
/// and a two-source permute for each half.
///
/// # Safety
/// AVX-512 F is present, and `p` points to 128 readable bytes (any alignment).
#[inline(always)]
unsafe fn split16(p: *const u8) -> (__m512i, __m512i) {
    let p = p.cast::<__m512i>();
    // SAFETY: the caller guarantees AVX-512 F and the 128 bytes.
    unsafe {
        let (a, b) = (_mm512_loadu_si512(p), _mm512_loadu_si512(p.add(1)));
        let even = _mm512_set_epi64(14, 12, 10, 8, 6, 4, 2, 0);
        let odd = _mm512_set_epi64(15, 13, 11, 9, 7, 5, 3, 1);
        (
            _mm512_permutex2var_epi64(a, even, b),
            _mm512_permutex2var_epi64(a, odd, b),
        )
    }
}
