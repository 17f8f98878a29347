//! MM64 (`hashing::moremur`, the integer hash of `KeyHash::Moremur`) on eight lanes: two
//! 64-bit multiplies and three xorshifts a key. The tier's [`Lanes::mul64`] is one
//! instruction on AVX-512 (`vpmullq`) and three 32-bit products on AVX2 and NEON. The loops
//! over keys are [`words`](super::words)'.

use super::words::WordHash;
use crate::hashing::{KeyHash, moremur};
use crate::simd::Lanes;

/// MM64 ([`WordHash`]).
pub(crate) struct Moremur;

/// `first` (`hashing::moremur`) on eight lanes: a xorshift and the first multiply.
#[inline(always)]
fn first<L: Lanes>(l: L, x: L::V) -> L::V {
    l.mul64(l.xor(x, l.shr::<27>(x)), l.splat(moremur::M1))
}

/// `last` (`hashing::moremur`) on eight lanes: a xorshift, the second multiply, a xorshift.
#[inline(always)]
fn last<L: Lanes>(l: L, x: L::V) -> L::V {
    let y = l.mul64(l.xor(x, l.shr::<33>(x)), l.splat(moremur::M2));
    l.xor(y, l.shr::<27>(y))
}

impl WordHash for Moremur {
    const HASH: KeyHash = KeyHash::Moremur;
    const MUL64: bool = true;

    #[inline(always)]
    fn key(seed: u64) -> u64 {
        moremur::key(seed)
    }

    #[inline(always)]
    fn u64_with_key(v: u64, k: u64) -> u64 {
        moremur::u64_with_key(v, k)
    }

    #[inline(always)]
    fn u128_with_key(v: u128, k: u64) -> u64 {
        moremur::u128_with_key(v, k)
    }

    #[inline(always)]
    fn lanes<L: Lanes>(l: L, keyed: L::V) -> L::V {
        last(l, first(l, keyed))
    }

    #[inline(always)]
    fn lanes16<L: Lanes>(l: L, lo_keyed: L::V, hi: L::V) -> L::V {
        let x = l.xor(l.xor(first(l, lo_keyed), hi), l.splat(moremur::T16));
        last(l, first(l, x))
    }
}
