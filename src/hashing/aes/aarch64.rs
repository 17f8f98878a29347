//! AESH-64 on aarch64: `AESE` with a zero key then `AESMC` is x86's `AESENC` before its key
//! xor (`AESE` xors its key first, `AESENC` last), so the rounds give the same bits.

use core::arch::aarch64::*;

use super::{AesKeys, ByteSource, Round, hash, length_bit};

/// Whether this CPU has the AES extension (std: detected once and cached by std; no_std: the
/// build's target features).
#[inline]
pub(crate) fn has_aes() -> bool {
    #[cfg(feature = "std")]
    {
        std::arch::is_aarch64_feature_detected!("aes")
    }
    #[cfg(not(feature = "std"))]
    {
        cfg!(target_feature = "aes")
    }
}

/// AESE/AESMC on NEON registers. Only made inside functions compiled with the `aes` feature.
#[derive(Clone, Copy)]
struct Ce;

impl Round for Ce {
    type V = uint8x16_t;

    #[inline(always)]
    fn words(self, lo: u64, hi: u64) -> uint8x16_t {
        let w = [lo, hi];
        // SAFETY: NEON is part of aarch64; `w` is 16 readable bytes.
        unsafe { vreinterpretq_u8_u64(vld1q_u64(w.as_ptr())) }
    }

    #[inline(always)]
    fn chunk(self, c: &[u8; 16]) -> uint8x16_t {
        // SAFETY: `c` is 16 readable bytes.
        unsafe { vld1q_u8(c.as_ptr()) }
    }

    #[inline(always)]
    fn xor(self, a: uint8x16_t, b: uint8x16_t) -> uint8x16_t {
        // SAFETY: NEON is part of aarch64.
        unsafe { veorq_u8(a, b) }
    }

    #[inline(always)]
    fn round(self, s: uint8x16_t, k: uint8x16_t) -> uint8x16_t {
        // SAFETY: `Ce` is only used inside functions compiled with `aes` (see the type's doc),
        // which their callers enable after checking the CPU.
        unsafe { aes_round(s, k) }
    }

    #[inline(always)]
    fn fold(self, s: uint8x16_t) -> u64 {
        // SAFETY: NEON is part of aarch64.
        unsafe {
            let w = vreinterpretq_u64_u8(s);
            vgetq_lane_u64::<0>(w) ^ vgetq_lane_u64::<1>(w)
        }
    }
}

/// `AESMC(AESE(s, 0)) ^ k`: x86's `AESENC(s, k)`. (Out of the trait method so that the
/// intrinsics are called where `aes` is enabled; inlined into the callers, which enable it.)
///
/// # Safety
///
/// The CPU must have the AES extension.
#[target_feature(enable = "aes")]
#[inline]
unsafe fn aes_round(s: uint8x16_t, k: uint8x16_t) -> uint8x16_t {
    veorq_u8(vaesmcq_u8(vaeseq_u8(s, vdupq_n_u8(0))), k)
}

/// AESH-64 of one key with `seed`.
///
/// # Safety
///
/// The CPU must have the AES extension.
#[target_feature(enable = "aes")]
pub(crate) unsafe fn hash_one(seed: u64, b: &[u8]) -> u64 {
    // The round keys made here, in registers: built in memory by the caller, each 16-byte
    // load of two 8-byte stores missed store forwarding (measured on x86-64:
    // perf-reports/2026-11-29-aesh.md).
    hash(Ce, &AesKeys::new(seed).load(Ce), b)
}

/// AESH-64 of each key, one at a time; the keys' lengths as a set ([`length_bit`]).
///
/// # Safety
///
/// The CPU must have the AES extension.
#[target_feature(enable = "aes")]
pub(crate) unsafe fn hash_batch<'k, S: ByteSource<'k>>(
    keys: &AesKeys,
    src: S,
    out: &mut [u64],
) -> u64 {
    let k = keys.load(Ce);
    let mut seen = 0;
    for (i, o) in out.iter_mut().enumerate() {
        let key = src.key(i);
        seen |= length_bit(key.len());
        *o = hash(Ce, &k, key);
    }
    seen
}
