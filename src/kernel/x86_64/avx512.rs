//! AVX-512 tier (F + DQ): a block is one 512-bit register. Split blocks (256 bits) use the
//! AVX2 primitives, which every AVX-512 CPU has.

use core::arch::x86_64::*;
use core::sync::atomic::AtomicU64;

use super::avx2::Avx2;
use crate::hashing::PRIME_MX2;
use crate::kernel::keys::Word;
use crate::kernel::lanes::Place;
use crate::kernel::{Batch, Keys, Lanes};

/// Proof that the CPU supports AVX-512 F and DQ, and AVX2: only [`Avx512::new_unchecked`]
/// makes one.
#[derive(Clone, Copy)]
pub(crate) struct Avx512(());

impl Avx512 {
    /// # Safety
    /// The CPU must support AVX-512 F and DQ, and AVX2.
    #[inline(always)]
    unsafe fn new_unchecked() -> Avx512 {
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
// halves are zero, which makes the pattern rounds port-0 bound. The hash, which needs a full
// 64-bit multiply, runs in its own DQ function, called once per chunk of keys.

/// Runs `batch` on this tier.
///
/// # Safety
/// The CPU must support AVX-512 F and DQ, and AVX2.
#[target_feature(enable = "avx2,avx512f")]
pub(crate) unsafe fn run<B: Batch>(batch: B) {
    // SAFETY: the caller guarantees the features.
    batch.lanes(unsafe { Avx512::new_unchecked() })
}

// The single-key entries take the probe loops' features (AVX-512F, not DQ; see above). A
// `Sectors8x32` block is two 256-bit halves, which AVX2 probes in one register: its single-key
// and burst entries are AVX2's. Compiled here, they had no 512-bit probe to gain and ran
// calls of 8 keys 1.1-1.5x slower than AVX2's on an Intel Xeon with AVX-512; hashing those
// bursts in 256-bit lanes inside them did not help, so the cause is not the hash
// (`perf-reports/2026-12-02-avx512.md`).
crate::kernel::one_key::one_key_blocks!(Avx512, Avx512::new_unchecked(), "avx2,avx512f");
pub(crate) static ONE_KEY: crate::kernel::one_key::OneKeyTable = [
    one_key_blocks::BLOCKS[0],
    one_key_blocks::BLOCKS[1],
    super::avx2::ONE_KEY[2],
];

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
        let [a, b] = crate::kernel::lanes::shared_halves(words);
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
    fn hash_words<W: Word>(self, flip: u64, keys: &[W], out: &mut [u64]) {
        // SAFETY: the token proves AVX-512 F and DQ.
        unsafe { hash_words(self, flip, keys, out) }
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
    #[inline(always)]
    fn hash_aesh(self, flip: u64, keys: Keys<'_>, out: &mut [u64]) {
        // VAES or AES-NI, as this CPU has them (the AES code checks and enables its features).
        crate::kernel::lanes::hash_aesh(self, flip, keys, true, out)
    }
    #[inline(always)]
    fn hash_keys16(self, flip: u64, keys: Keys<'_>, out: &mut [u64]) {
        // SAFETY: the token proves AVX-512 F and DQ, and AVX2.
        unsafe { hash_keys16(self, flip, keys, out) }
    }
    #[inline(always)]
    fn hash_bytes(self, flip: u64, keys: Keys<'_>, out: &mut [u64]) {
        // SAFETY: the token proves AVX-512 F and DQ, and AVX2.
        unsafe { hash_bytes(self, flip, keys, out) }
    }
    #[inline(always)]
    fn stage(self, keys: Keys<'_>, flip: u64, start: usize, out: &mut [u64], place: Place) {
        // SAFETY: the token proves AVX-512 F and DQ, and AVX2.
        unsafe { stage(self, keys, flip, start, out, place) }
    }
    #[inline(always)]
    fn hash_fixed_mx32(self, flip: u64, keys: Keys<'_>, out: &mut [u64]) {
        // SAFETY: the token proves AVX-512 F and AVX2.
        unsafe { hash_fixed_mx32(self, flip, keys, out) }
    }
    #[inline(always)]
    fn xxh64_u64(self, values: &[u64], out: &mut [u64]) {
        // SAFETY: the token proves AVX-512 F and DQ.
        unsafe { xxh64_u64(values, out) }
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

/// [`Lanes::hash_keys16`]: the shared routine, out of line, where `vpmullq` is enabled.
///
/// # Safety
/// The CPU must support AVX-512 F and DQ, and AVX2.
#[inline(never)]
#[target_feature(enable = "avx2,avx512f,avx512dq,avx512vl,avx512bw")]
unsafe fn hash_keys16(l: Avx512, flip: u64, keys: Keys<'_>, out: &mut [u64]) {
    crate::kernel::key16::hash_keys(l, flip, keys, out)
}

/// [`Lanes::hash_fixed_mx32`]: the shared routine, out of line (F alone: MX32 multiplies
/// 32 by 32 bits, which DQ would turn into `vpmullq`).
///
/// # Safety
/// The CPU must support AVX-512 F and AVX2.
#[inline(never)]
#[target_feature(enable = "avx2,avx512f")]
unsafe fn hash_fixed_mx32(l: Avx512, flip: u64, keys: Keys<'_>, out: &mut [u64]) {
    crate::kernel::lanes::hash_fixed_mx32(l, flip, keys, out)
}

/// [`Lanes::hash_bytes`]: the shared routine, out of line, where `vpmullq` is enabled.
///
/// # Safety
/// The CPU must support AVX-512 F and DQ, and AVX2.
#[inline(never)]
#[target_feature(enable = "avx2,avx512f,avx512dq,avx512vl,avx512bw")]
unsafe fn hash_bytes(l: Avx512, flip: u64, keys: Keys<'_>, out: &mut [u64]) {
    crate::kernel::bytes::hash_keys(l, flip, keys, out)
}

/// XXH3 of each integer key's 64-bit value, 8 lanes at a time.
///
/// # Safety
/// The CPU must support AVX-512 F and DQ.
#[target_feature(enable = "avx512f,avx512dq")]
unsafe fn hash_words<W: Word>(l: Avx512, flip: u64, keys: &[W], out: &mut [u64]) {
    let f = _mm512_set1_epi64(flip as i64);
    // Two vectors per step: each lane's hash is a chain of two 15-cycle `vpmullq`s, and
    // interleaving independent chains keeps the multiplier busy.
    let mut kc = keys.chunks_exact(16);
    let mut oc = out.chunks_exact_mut(16);
    for (k, o) in (&mut kc).zip(&mut oc) {
        let (a, b) = (W::lanes(l, k), W::lanes(l, &k[8..]));
        // SAFETY: each output chunk holds exactly 16 u64; the caller guarantees the features.
        unsafe {
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
        let x = W::lanes(l, k);
        // SAFETY: each output chunk holds exactly 8 u64; the caller guarantees the features.
        unsafe {
            let x = _mm512_xor_si512(_mm512_rol_epi64::<32>(x), f);
            _mm512_storeu_si512(o.as_mut_ptr().cast(), rrmxmx(x, 8));
        }
    }
    for (o, &k) in oc.into_remainder().iter_mut().zip(kc.remainder()) {
        *o = crate::hashing::u64_with_flip(k.value(), flip);
    }
}

/// XXH64 (seed 0) of each value's 8 little-endian bytes, 8 lanes at a time.
///
/// # Safety
/// The CPU must support AVX-512 F and DQ.
#[target_feature(enable = "avx512f,avx512dq")]
unsafe fn xxh64_u64(values: &[u64], out: &mut [u64]) {
    use crate::hashing::xxh64::{P1, P2, P3, P4, P5};
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
        *o = crate::hashing::xxh64_u64(v);
    }
}

/// [`Lanes::stage`]: the shared routine, out of line (one copy for every operation), with the
/// probe loops' features (F, not DQ: the XXH3 hashes call their own DQ functions).
///
/// # Safety
/// The CPU must support AVX-512 F and DQ, and AVX2.
#[inline(never)]
#[target_feature(enable = "avx2,avx512f")]
unsafe fn stage(l: Avx512, keys: Keys<'_>, flip: u64, start: usize, out: &mut [u64], p: Place) {
    crate::kernel::lanes::stage(l, keys, flip, start, out, p)
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
