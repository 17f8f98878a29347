//! The shape every integer hash of 64-bit values and 16-byte keys has ([`WordHash`]): what it
//! does to one key, and to eight keys' values in SIMD lanes. Each such hash's file (`mx32.rs`,
//! `moremur.rs`) implements it beside its scalar definition; the loops in lanes over integer
//! keys of one type ([`hash_words`]) and over 16-byte keys ([`hash_keys16`]) are written here
//! once for all of them, with what every such hash does to a byte string of 4, 8 or 16 bytes
//! and, by default, to one key; the table of them is beside `KeyHash` (`hashing/mod.rs`); the
//! loops over every key shape, the scalar reference's loop and the choice of where to run them
//! are the kernel's hash plan's (`kernel::plan`).

use super::{WordHashKind, seed_from_flip};
#[cfg(target_arch = "x86_64")]
use crate::simd::Key16;
use crate::simd::{Lanes, Word};

/// An integer hash of 64-bit values and 16-byte keys, in lanes and one key at a time, equal
/// bit for bit on each key.
pub(crate) trait WordHash {
    /// Which one it is.
    const KIND: WordHashKind;

    /// Whether its lanes multiply 64-bit values ([`Lanes::mul64`]), so that a batch runs them
    /// where the tier's 64-bit multiply is best ([`Lanes::with_mul64`]).
    const MUL64: bool;

    /// The key xored into every key's value, from the filter's seed.
    fn key(seed: u64) -> u64;

    /// One 4-byte key's hash, given [`key`](Self::key)'s result.
    fn u32_with_key(v: u32, k: u64) -> u64;

    /// One 64-bit value's hash, given [`key`](Self::key)'s result: the scalar reference.
    fn u64_with_key(v: u64, k: u64) -> u64;

    /// One 16-byte key's hash (its little-endian bytes), given [`key`](Self::key)'s result.
    fn u128_with_key(v: u128, k: u64) -> u64;

    /// [`u64_with_key`](Self::u64_with_key) as a single-key call computes it: the same bits,
    /// in whatever shape is quickest for one key (a hash with a quicker shape than its scalar
    /// form overrides it, as MX32-64 does on x86-64 with one SSE2 register).
    #[inline(always)]
    fn u64_one(v: u64, k: u64) -> u64 {
        Self::u64_with_key(v, k)
    }

    /// [`u128_with_key`](Self::u128_with_key) as a single-key call computes it.
    #[inline(always)]
    fn u128_one(v: u128, k: u64) -> u64 {
        Self::u128_with_key(v, k)
    }

    /// A byte string of 4, 8 or 16 bytes (read little-endian) hashed as the key of that
    /// width; `None` for other lengths, which its filter hash gives AESH-64.
    #[inline]
    fn bytes(b: &[u8], seed: u64) -> Option<u64> {
        let k = Self::key(seed);
        Some(match b.len() {
            4 => Self::u32_with_key(u32::from_le_bytes(b.try_into().ok()?), k),
            8 => Self::u64_one(u64::from_le_bytes(b.try_into().ok()?), k),
            16 => Self::u128_one(u128::from_le_bytes(b.try_into().ok()?), k),
            _ => return None,
        })
    }

    /// Eight values' hashes, from the values xored with the key.
    fn lanes<L: Lanes>(l: L, keyed: L::V) -> L::V;

    /// Eight 16-byte keys' hashes, from their low halves xored with the key and their high
    /// halves.
    // Only x86-64's tiers split 16-byte keys in registers (`Lanes::KEYS16_IN_LANES`).
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    fn lanes16<L: Lanes>(l: L, lo_keyed: L::V, hi: L::V) -> L::V;
}

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

/// `H` of 16-byte keys of one form, eight lanes at a time (the rest one at a time), on the
/// tiers that split them in registers ([`Lanes::KEYS16_IN_LANES`]).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn hash_keys16<H: WordHash, L: Lanes, T: Key16>(
    l: L,
    flip: u64,
    keys: &[T],
    out: &mut [u64],
) {
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
