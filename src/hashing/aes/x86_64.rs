//! AESH-64 on x86-64: one key per `AESENC` on an XMM register, and with VAES two keys per
//! YMM register, eight keys in flight so that the rounds' latency overlaps.

use core::arch::x86_64::*;

use super::{AesKeys, ByteSource, Round, hash, length_bit, short_block};

/// Whether this CPU has AES-NI (std: detected once and cached by std; no_std: the build's
/// target features).
#[inline]
pub(crate) fn has_aes() -> bool {
    #[cfg(feature = "std")]
    {
        std::is_x86_feature_detected!("aes")
    }
    #[cfg(not(feature = "std"))]
    {
        cfg!(target_feature = "aes")
    }
}

/// Whether this CPU has AVX2, AES-NI and VAES.
#[inline]
pub(crate) fn has_vaes() -> bool {
    #[cfg(feature = "std")]
    {
        std::is_x86_feature_detected!("avx2")
            && std::is_x86_feature_detected!("aes")
            && std::is_x86_feature_detected!("vaes")
    }
    #[cfg(not(feature = "std"))]
    {
        cfg!(all(
            target_feature = "avx2",
            target_feature = "aes",
            target_feature = "vaes"
        ))
    }
}

/// AES-NI on XMM registers. Only made inside functions compiled with the `aes` and `sse4.1`
/// features.
#[derive(Clone, Copy)]
struct Ni;

impl Round for Ni {
    type V = __m128i;

    #[inline(always)]
    fn words(self, lo: u64, hi: u64) -> __m128i {
        // SAFETY: SSE2 is part of x86-64.
        unsafe { _mm_set_epi64x(hi as i64, lo as i64) }
    }

    #[inline(always)]
    fn chunk(self, c: &[u8; 16]) -> __m128i {
        // SAFETY: `c` is 16 readable bytes; the load is unaligned.
        unsafe { _mm_loadu_si128(c.as_ptr().cast()) }
    }

    #[inline(always)]
    fn xor(self, a: __m128i, b: __m128i) -> __m128i {
        // SAFETY: SSE2 is part of x86-64.
        unsafe { _mm_xor_si128(a, b) }
    }

    #[inline(always)]
    fn round(self, s: __m128i, k: __m128i) -> __m128i {
        // SAFETY: `Ni` is only used inside functions compiled with `aes` (see the type's doc),
        // which their callers enable after checking the CPU.
        unsafe { _mm_aesenc_si128(s, k) }
    }

    #[inline(always)]
    fn fold(self, s: __m128i) -> u64 {
        // SAFETY: `Ni` is only used inside functions compiled with `sse4.1` (and `aes`).
        unsafe { (_mm_cvtsi128_si64(s) ^ _mm_extract_epi64::<1>(s)) as u64 }
    }
}

/// AESH-64 of one key with `seed`.
///
/// # Safety
///
/// The CPU must have AES-NI.
#[target_feature(enable = "aes,sse4.1")]
pub(crate) unsafe fn hash_one(seed: u64, b: &[u8]) -> u64 {
    // The round keys made here, in registers: built in memory by the caller, each 16-byte
    // load of two 8-byte stores missed store forwarding (perf-reports/2026-11-29-aesh.md).
    hash(Ni, &AesKeys::new(seed).load(Ni), b)
}

/// AESH-64 of each key, one at a time on AES-NI; the keys' lengths as a set ([`length_bit`]).
///
/// # Safety
///
/// The CPU must have AES-NI.
#[target_feature(enable = "aes,sse4.1")]
pub(crate) unsafe fn hash_batch<'k, S: ByteSource<'k>>(
    keys: &AesKeys,
    src: S,
    out: &mut [u64],
) -> u64 {
    let k = keys.load(Ni);
    let mut seen = 0;
    for (i, o) in out.iter_mut().enumerate() {
        let key = src.key(i);
        seen |= length_bit(key.len());
        *o = hash(Ni, &k, key);
    }
    seen
}

/// Keys per group of the VAES path: four YMM states of two keys each.
const GROUP: usize = 8;

/// AESH-64 of each key: groups of eight keys of at most 16 bytes in four YMM registers (two
/// keys each), and groups whose keys all have the same number of 16-byte chunks likewise;
/// any other group one key at a time on XMM. Returns the keys' lengths as a set ([`length_bit`]).
///
/// # Safety
///
/// The CPU must have AVX2, AES-NI and VAES.
#[target_feature(enable = "avx2,aes,vaes,sse4.1")]
pub(crate) unsafe fn hash_batch_vaes<'k, S: ByteSource<'k>>(
    keys: &AesKeys,
    src: S,
    out: &mut [u64],
) -> u64 {
    assert_eq!(src.count(), out.len());
    let xk = keys.load(Ni);
    let yk = |i: usize| {
        let k = keys.0[i];
        // (Safe: the closure has this function's features.)
        _mm256_set_epi64x((k >> 64) as i64, k as i64, (k >> 64) as i64, k as i64)
    };
    let k = [yk(0), yk(1), yk(2), yk(3)];
    // The state before a short key's block, per length: k0 ^ (n << 64).
    let starts: [__m128i; 17] = core::array::from_fn(|n| Ni.xor(xk.0[0], Ni.words(0, n as u64)));
    let mut seen = 0;
    let mut outs = out.chunks_exact_mut(GROUP);
    for (at, o) in (&mut outs).enumerate().map(|(i, o)| (GROUP * i, o)) {
        // Filled in a loop: `core::array::from_fn` stayed a call per group here, which made a
        // 16-byte key much slower (measured at 794a3cd).
        let mut g: [&[u8]; GROUP] = [&[]; GROUP];
        for (j, key) in g.iter_mut().enumerate() {
            *key = src.key(at + j);
            seen |= length_bit(key.len());
        }
        let g = &g;
        let o: &mut [u64; GROUP] = o.try_into().expect("a group");
        let chunks = g[0].len().max(1).div_ceil(16);
        if g.iter().all(|k| k.len() <= 16) {
            // SAFETY: the CPU features are enabled on this function.
            unsafe { short_group(g, &starts, k, o) };
        } else if chunks > 1 && g.iter().all(|k| k.len().div_ceil(16) == chunks) {
            // SAFETY: as above; every key has `chunks` chunks of 16 bytes (checked).
            unsafe { long_group(g, chunks, k, o) };
        } else {
            for (h, key) in o.iter_mut().zip(g) {
                *h = hash(Ni, &xk, key);
            }
        }
    }
    let done = src.count() / GROUP * GROUP;
    for (i, h) in outs.into_remainder().iter_mut().enumerate() {
        let key = src.key(done + i);
        seen |= length_bit(key.len());
        *h = hash(Ni, &xk, key);
    }
    seen
}

/// The hashes of four YMM states (keys 0 and 1 in `s[0]`, 2 and 3 in `s[1]`, ...), folded
/// and stored in key order.
///
/// # Safety
///
/// The CPU must have AVX2.
#[target_feature(enable = "avx2")]
unsafe fn fold_group(s: [__m256i; 4], out: &mut [u64; GROUP]) {
    // Each 128-bit lane's two halves xored: the lane's hash in both halves.
    let f = s.map(|x| _mm256_xor_si256(x, _mm256_shuffle_epi32::<0b01_00_11_10>(x)));
    for (i, o) in out.chunks_exact_mut(4).enumerate() {
        // Keys 4i, 4i + 2 in the low lane, 4i + 1, 4i + 3 in the high lane; then in order.
        let mixed = _mm256_unpacklo_epi64(f[2 * i], f[2 * i + 1]);
        let ordered = _mm256_permute4x64_epi64::<0b11_01_10_00>(mixed);
        // SAFETY: `o` is four u64, 32 writable bytes; the store is unaligned.
        unsafe { _mm256_storeu_si256(o.as_mut_ptr().cast(), ordered) };
    }
}

/// The block of a key of at most 16 bytes (step 3 of the definition), read by two 8-byte
/// loads from 8 bytes up.
///
/// # Safety
///
/// The CPU must have SSE4.1.
#[target_feature(enable = "sse4.1")]
#[inline]
unsafe fn short_xmm(key: &[u8]) -> __m128i {
    let n = key.len();
    if n >= 8 {
        let p = key.as_ptr();
        // SAFETY: `p..p + 8` and `p + n - 8..p + n` lie in the key (8 <= n); the loads are
        // unaligned.
        unsafe {
            let lo = _mm_loadl_epi64(p.cast());
            let hi = _mm_loadl_epi64(p.add(n - 8).cast());
            _mm_unpacklo_epi64(lo, hi)
        }
    } else {
        let (lo, hi) = short_block(key);
        _mm_set_epi64x(hi as i64, lo as i64)
    }
}

/// Eight keys of at most 16 bytes.
///
/// # Safety
///
/// The CPU must have AVX2 and VAES.
#[target_feature(enable = "avx2,aes,vaes,sse4.1")]
unsafe fn short_group(
    g: &[&[u8]; GROUP],
    starts: &[__m128i; 17],
    k: [__m256i; 4],
    out: &mut [u64; GROUP],
) {
    // SAFETY (both calls): SSE4.1 is enabled here.
    let x = |key: &[u8]| _mm_xor_si128(starts[key.len()], unsafe { short_xmm(key) });
    let mut s = [_mm256_setzero_si256(); 4];
    for (i, state) in s.iter_mut().enumerate() {
        let pair = _mm256_set_m128i(x(g[2 * i + 1]), x(g[2 * i]));
        *state = _mm256_aesenc_epi128(pair, k[1]);
    }
    for key in [k[2], k[3]] {
        for state in &mut s {
            *state = _mm256_aesenc_epi128(*state, key);
        }
    }
    // SAFETY: AVX2 is enabled here.
    unsafe { fold_group(s, out) }
}

/// Eight keys of more than 16 bytes, each of `chunks` chunks of 16 bytes.
///
/// # Safety
///
/// The CPU must have AVX2 and VAES, and every key must be `16 * (chunks - 1) + 1` to
/// `16 * chunks` bytes long, with `chunks >= 2`.
#[target_feature(enable = "avx2,aes,vaes")]
unsafe fn long_group(g: &[&[u8]; GROUP], chunks: usize, k: [__m256i; 4], out: &mut [u64; GROUP]) {
    // Chunk `c` of key `key`: the last chunk is the key's last 16 bytes.
    let load = |key: &[u8], c: usize| {
        let at = if c + 1 == chunks {
            key.len() - 16
        } else {
            16 * c
        };
        debug_assert!(at + 16 <= key.len());
        // SAFETY: `at + 16 <= key.len()` by the length contract; the load is unaligned.
        unsafe { _mm_loadu_si128(key.as_ptr().add(at).cast()) }
    };
    let mut s = [_mm256_setzero_si256(); 4];
    for (i, state) in s.iter_mut().enumerate() {
        let (a, b) = (g[2 * i].len() as i64, g[2 * i + 1].len() as i64);
        *state = _mm256_xor_si256(k[0], _mm256_set_epi64x(b, 0, a, 0));
    }
    for c in 0..chunks {
        for (i, state) in s.iter_mut().enumerate() {
            let x = _mm256_set_m128i(load(g[2 * i + 1], c), load(g[2 * i], c));
            *state = _mm256_aesenc_epi128(_mm256_xor_si256(*state, x), k[1]);
        }
    }
    for key in [k[2], k[3]] {
        for state in &mut s {
            *state = _mm256_aesenc_epi128(*state, key);
        }
    }
    // SAFETY: AVX2 is enabled here.
    unsafe { fold_group(s, out) }
}
