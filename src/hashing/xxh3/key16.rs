//! 16-byte keys (`u128` and `[u8; 16]`: IPv6 addresses, UUIDs, flow keys) hashed eight at a
//! time in lanes: XXH3's closed form for inputs of 9 to 16 bytes, equal bit for bit to
//! `xxh3_64_with_seed` of the key's 16 little-endian bytes.
//!
//! The keys are loaded straight into lanes (the low and the high words of eight keys), so
//! nothing is staged, and faster than one key at a time on AVX2 and AVX-512
//! (`blockbloom-perf key-types`; docs/guide/keys.md, "Hashed in lanes"). Byte strings of 4 to 16
//! bytes use the same path from `kernel::hash::xxh3::bytes`.

use super::{PRIME_AVALANCHE, len9to16_keys, seed_from_flip, u128_with_seed};
use crate::simd::Lanes;

/// XXH3 of `u128` keys in lanes, `out.len() == keys.len()`: the routine the hash plan runs
/// out of line with the tier's features ([`Lanes::KEYS16_IN_LANES`]).
#[inline(always)]
pub(crate) fn hash_u128s<L: Lanes>(l: L, flip: u64, keys: &[u128], out: &mut [u64]) {
    assert_eq!(
        out.len(),
        keys.len(),
        "output slice length must equal key count"
    );
    hash_u128(l, seed_from_flip(flip), keys, out)
}

/// [`hash_u128s`] of keys given as their 16 little-endian bytes.
#[inline(always)]
pub(crate) fn hash_fixed16<L: Lanes>(l: L, flip: u64, keys: &[[u8; 16]], out: &mut [u64]) {
    assert_eq!(
        out.len(),
        keys.len(),
        "output slice length must equal key count"
    );
    let seed = seed_from_flip(flip);
    let mut kc = keys.chunks_exact(8);
    let mut oc = out.chunks_exact_mut(8);
    for (keys, o) in (&mut kc).zip(&mut oc) {
        let wide: [u128; 8] = core::array::from_fn(|j| u128::from_le_bytes(keys[j]));
        hash_u128(l, seed, &wide, o);
    }
    for (o, x) in oc.into_remainder().iter_mut().zip(kc.remainder()) {
        *o = u128_with_seed(u128::from_le_bytes(*x), seed);
    }
}

/// The seed's constants, in lanes: what the 9-to-16-byte path xors into the first and the
/// last eight bytes.
pub(crate) struct Constants<V> {
    first: V,
    last: V,
}

impl<V> Constants<V> {
    #[inline(always)]
    pub(crate) fn new<L: Lanes<V = V>>(l: L, seed: u64) -> Constants<V> {
        let (first, last) = len9to16_keys(seed);
        Constants {
            first: l.splat(first),
            last: l.splat(last),
        }
    }
}

/// XXH3 of `u128` keys (their 16 little-endian bytes), loaded straight into lanes.
#[inline(always)]
fn hash_u128<L: Lanes>(l: L, seed: u64, keys: &[u128], out: &mut [u64]) {
    let k = Constants::new(l, seed);
    let sixteen = l.splat(16);
    let mut kc = keys.chunks_exact(8);
    let mut oc = out.chunks_exact_mut(8);
    for (keys, o) in (&mut kc).zip(&mut oc) {
        let (lo, hi) = l.split_u128(keys);
        l.storeu(o, long(l, lo, hi, sixteen, &k));
    }
    for (o, &x) in oc.into_remainder().iter_mut().zip(kc.remainder()) {
        *o = u128_with_seed(x, seed);
    }
}

/// XXH3's 9-to-16-byte path: `first`/`last` are the key's first and last eight bytes.
#[inline(always)]
pub(crate) fn long<L: Lanes>(
    l: L,
    first: L::V,
    last: L::V,
    len: L::V,
    k: &Constants<L::V>,
) -> L::V {
    let lo = l.xor(first, k.first);
    let hi = l.xor(last, k.last);
    let fold = l.mul_fold64(lo, hi);
    let acc = l.add(l.add(len, l.bswap64(lo)), l.add(hi, fold));
    avalanche(l, acc)
}

/// XXH3's avalanche.
#[inline(always)]
fn avalanche<L: Lanes>(l: L, h: L::V) -> L::V {
    let h = l.xor(h, l.shr::<37>(h));
    let h = l.mul64(h, l.splat(PRIME_AVALANCHE));
    l.xor(h, l.shr::<32>(h))
}
