//! MM64 (`hashing::moremur`, the integer hash of `KeyHash::Moremur`) over a batch: two 64-bit
//! multiplies and three xorshifts a key on eight lanes, integer keys of every width and
//! 16-byte keys. The tier's [`Lanes::mul64`] is one instruction on AVX-512 (`vpmullq`) and
//! three 32-bit products on AVX2 and NEON. Equal, bit for bit, to `hashing::moremur` on each
//! key.

use crate::hashing::{moremur, seed_from_flip};
use crate::kernel::keys::Word;
#[cfg(target_arch = "x86_64")]
use crate::kernel::keys::{FixedWidth, Key16, each_width};
use crate::kernel::simd::Lanes;

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

/// MM64 of each integer key's 64-bit value, eight lanes at a time (the rest one at a time).
#[inline(always)]
pub(crate) fn hash_words<L: Lanes, W: Word>(l: L, flip: u64, keys: &[W], out: &mut [u64]) {
    let k = moremur::key(seed_from_flip(flip));
    let kv = l.splat(k);
    let mut kc = keys.chunks_exact(8);
    let mut oc = out.chunks_exact_mut(8);
    for (x, o) in (&mut kc).zip(&mut oc) {
        let x = l.xor(W::lanes(l, x), kv);
        l.storeu(o, last(l, first(l, x)));
    }
    for (o, &x) in oc.into_remainder().iter_mut().zip(kc.remainder()) {
        *o = moremur::u64_with_key(x.value(), k);
    }
}

/// MM64 of fixed-width keys, eight lanes at a time (the rest one at a time), 16-byte ones
/// included: on the tiers that split them in registers ([`Lanes::KEYS16_IN_LANES`]), which
/// the hash plan runs it on in a function with their features.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn hash_fixed<L: Lanes>(l: L, flip: u64, keys: FixedWidth<'_>, out: &mut [u64]) {
    match keys {
        FixedWidth::U64(keys) => hash_words(l, flip, keys, out),
        FixedWidth::Narrow(n) => each_width!(n, k => hash_words(l, flip, k, out)),
        FixedWidth::U128(keys) => keys16(l, flip, keys, out),
        FixedWidth::Fixed16(keys) => keys16(l, flip, keys, out),
    }
}

/// [`hash_fixed`] of one 16-byte key form.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn keys16<L: Lanes, T: Key16>(l: L, flip: u64, keys: &[T], out: &mut [u64]) {
    let k = moremur::key(seed_from_flip(flip));
    let mut kc = keys.chunks_exact(8);
    let mut oc = out.chunks_exact_mut(8);
    for (x, o) in (&mut kc).zip(&mut oc) {
        let (lo, hi) = T::split(l, x);
        let x = l.xor(first(l, l.xor(lo, l.splat(k))), hi);
        let x = l.xor(x, l.splat(moremur::T16));
        l.storeu(o, last(l, first(l, x)));
    }
    for (o, x) in oc.into_remainder().iter_mut().zip(kc.remainder()) {
        *o = moremur::u128_with_key(x.value(), k);
    }
}
