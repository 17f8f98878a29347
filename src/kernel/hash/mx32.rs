//! MX32-64 (`hashing::mx32`, the integer hash of `KeyHash::Mx32`) on eight lanes: four rounds
//! of two 32x32->64-bit products, so the x86-64 and NEON tiers need no 64-bit multiply. The
//! loops over keys are [`words`](super::words)'.

use super::words::WordHash;
use crate::hashing::{KeyHash, mx32};
use crate::simd::Lanes;

/// MX32-64 ([`WordHash`]).
pub(crate) struct Mx32;

/// One MX32-64 round (`hashing::mx32`) on eight lanes: two 32x32->64-bit products, a shift,
/// a swap of halves and an xor.
#[inline(always)]
fn round<L: Lanes>(l: L, x: L::V, r: usize) -> L::V {
    let p = l.mul_halves(x, l.splat(mx32::A[r]));
    let q = l.mul_halves(l.shr::<32>(x), l.splat(mx32::B[r]));
    l.xor(p, l.rotl::<32, 32>(q))
}

/// MX32-64's rounds 1 to 3 with the width's tweak, on eight lanes.
#[inline(always)]
fn finish<L: Lanes>(l: L, x: L::V, tweak: u64) -> L::V {
    let x = l.xor(round(l, x, 1), l.splat(tweak));
    round(l, round(l, x, 2), 3)
}

impl WordHash for Mx32 {
    const HASH: KeyHash = KeyHash::Mx32;
    const MUL64: bool = false;

    #[inline(always)]
    fn key(seed: u64) -> u64 {
        mx32::key(seed)
    }

    #[inline(always)]
    fn u64_with_key(v: u64, k: u64) -> u64 {
        mx32::u64_with_key(v, k)
    }

    #[inline(always)]
    fn u128_with_key(v: u128, k: u64) -> u64 {
        mx32::u128_with_key(v, k)
    }

    #[inline(always)]
    fn lanes<L: Lanes>(l: L, keyed: L::V) -> L::V {
        finish(l, keyed, mx32::T8)
    }

    #[inline(always)]
    fn lanes16<L: Lanes>(l: L, lo_keyed: L::V, hi: L::V) -> L::V {
        finish(l, l.xor(round(l, lo_keyed, 0), hi), mx32::T16)
    }
}
