//! The loops the integer hashes share: eight keys at a time in lanes, the rest one at a time,
//! over integer keys of every width and 16-byte keys. A hash family ([`WordHash`]: MX32-64
//! in `hashing::mx32`, MM64 in `hashing::moremur`, each beside its scalar definition) says
//! only what it does to one key and to eight keys' values; the loops here, the scalar
//! reference and the hash plan's choice of where to run them are written once for every
//! family.

use crate::hashing::{WordHash, seed_from_flip};
use crate::kernel::shapes::FixedWidth;
#[cfg(target_arch = "x86_64")]
use crate::kernel::shapes::{Key16, each_width};
use crate::simd::{Lanes, Word};

/// `H` of each integer key's 64-bit value, eight lanes at a time (the rest one at a time).
#[inline(always)]
pub(crate) fn hash_words<H: WordHash, L: Lanes, W: Word>(
    l: L,
    flip: u64,
    keys: &[W],
    out: &mut [u64],
) {
    let k = H::key(seed_from_flip(flip));
    let kv = l.splat(k);
    let mut kc = keys.chunks_exact(8);
    let mut oc = out.chunks_exact_mut(8);
    for (x, o) in (&mut kc).zip(&mut oc) {
        l.storeu(o, H::lanes(l, l.xor(W::lanes(l, x), kv)));
    }
    for (o, &x) in oc.into_remainder().iter_mut().zip(kc.remainder()) {
        *o = H::u64_with_key(x.value(), k);
    }
}

/// `H` of fixed-width keys, eight lanes at a time (the rest one at a time), 16-byte ones
/// included: on the tiers that split them in registers ([`Lanes::KEYS16_IN_LANES`]), which
/// the hash plan runs it on in a function with their features.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn hash_fixed<H: WordHash, L: Lanes>(
    l: L,
    flip: u64,
    keys: FixedWidth<'_>,
    out: &mut [u64],
) {
    match keys {
        FixedWidth::U64(keys) => hash_words::<H, L, u64>(l, flip, keys, out),
        FixedWidth::Narrow(n) => each_width!(n, k => hash_words::<H, L, _>(l, flip, k, out)),
        FixedWidth::U128(keys) => keys16::<H, L, _>(l, flip, keys, out),
        FixedWidth::Fixed16(keys) => keys16::<H, L, _>(l, flip, keys, out),
    }
}

/// [`hash_fixed`] of one 16-byte key form.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn keys16<H: WordHash, L: Lanes, T: Key16>(l: L, flip: u64, keys: &[T], out: &mut [u64]) {
    let k = H::key(seed_from_flip(flip));
    let kv = l.splat(k);
    let mut kc = keys.chunks_exact(8);
    let mut oc = out.chunks_exact_mut(8);
    for (x, o) in (&mut kc).zip(&mut oc) {
        let (lo, hi) = T::split(l, x);
        l.storeu(o, H::lanes16(l, l.xor(lo, kv), hi));
    }
    for (o, x) in oc.into_remainder().iter_mut().zip(kc.remainder()) {
        *o = H::u128_with_key(x.value(), k);
    }
}

/// `H` of fixed-width keys one at a time: the scalar reference's.
#[inline(always)]
pub(crate) fn hash_each<H: WordHash>(keys: FixedWidth<'_>, flip: u64, out: &mut [u64]) {
    let k = H::key(seed_from_flip(flip));
    keys.hash_each(|x| H::u64_with_key(x, k), |x| H::u128_with_key(x, k), out)
}

/// `H` of each `u64` key, one at a time, in order: the scalar reference's loop where it takes
/// the hashes as they come.
#[inline(always)]
pub(crate) fn each_u64<H: WordHash>(keys: &[u64], flip: u64) -> impl Iterator<Item = u64> + '_ {
    let k = H::key(seed_from_flip(flip));
    keys.iter().map(move |&x| H::u64_with_key(x, k))
}
