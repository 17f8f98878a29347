//! MX32-64 (`hashing::mx32`, the integer hash of `KeyHash::Mx32`) over a batch: four rounds
//! of two 32x32->64-bit products on eight lanes, so the x86-64 and NEON tiers need no 64-bit
//! multiply; integer keys of every width and 16-byte keys. Equal, bit for bit, to
//! `hashing::mx32` on each key.

use crate::hashing::{mx32, seed_from_flip};
use crate::kernel::keys::Word;
#[cfg(target_arch = "x86_64")]
use crate::kernel::keys::each_width;
#[cfg(target_arch = "x86_64")]
use crate::kernel::keys::{FixedWidth, Key16};
use crate::kernel::simd::Lanes;

/// One MX32-64 round (`hashing::mx32`) on eight lanes: two 32x32->64-bit products, a shift,
/// a swap of halves and an xor.
#[inline(always)]
fn mx32_round<L: Lanes>(l: L, x: L::V, r: usize) -> L::V {
    let p = l.mul_halves(x, l.splat(mx32::A[r]));
    let q = l.mul_halves(l.shr::<32>(x), l.splat(mx32::B[r]));
    l.xor(p, l.rotl::<32, 32>(q))
}

/// MX32-64's rounds 1 to 3 with the width's tweak, on eight lanes.
#[inline(always)]
fn mx32_finish<L: Lanes>(l: L, x: L::V, tweak: u64) -> L::V {
    let x = l.xor(mx32_round(l, x, 1), l.splat(tweak));
    mx32_round(l, mx32_round(l, x, 2), 3)
}

/// MX32-64 of each integer key's 64-bit value, eight lanes at a time (the rest one at a time).
#[inline(always)]
pub(crate) fn hash_words<L: Lanes, W: Word>(l: L, flip: u64, keys: &[W], out: &mut [u64]) {
    let k = mx32::key(seed_from_flip(flip));
    let kv = l.splat(k);
    let mut kc = keys.chunks_exact(8);
    let mut oc = out.chunks_exact_mut(8);
    for (x, o) in (&mut kc).zip(&mut oc) {
        let x = l.xor(W::lanes(l, x), kv);
        l.storeu(o, mx32_finish(l, x, mx32::T8));
    }
    for (o, &x) in oc.into_remainder().iter_mut().zip(kc.remainder()) {
        *o = mx32::u64_with_key(x.value(), k);
    }
}

/// MX32-64 of fixed-width keys, eight lanes at a time (the rest one at a time), 16-byte ones
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
    let k = mx32::key(seed_from_flip(flip));
    let mut kc = keys.chunks_exact(8);
    let mut oc = out.chunks_exact_mut(8);
    for (x, o) in (&mut kc).zip(&mut oc) {
        let (lo, hi) = T::split(l, x);
        let x = l.xor(lo, l.splat(k));
        let x = l.xor(mx32_round(l, x, 0), hi);
        l.storeu(o, mx32_finish(l, x, mx32::T16));
    }
    for (o, x) in oc.into_remainder().iter_mut().zip(kc.remainder()) {
        *o = mx32::u128_with_key(x.value(), k);
    }
}
