//! MM64: `KeyHash::Moremur`'s hash of keys of 4, 8 and 16 bytes, a multiply-xorshift hash of
//! the murmur3 finaliser's shape with Pelle Evensen's moremur constants. Two 64-bit multiplies
//! for an 8-byte key: one scalar path of about ten cycles, where MX32-64 takes three rounds of
//! two 32-bit products, so a single key is hashed sooner; in AVX2 and NEON lanes, which have
//! no 64-bit multiply, each product costs three 32-bit ones, so batches pay more than under
//! MX32-64 (the figures are in perf-reports/2026-12-05-xorshift-candidates.md and
//! perf-reports/2026-12-06-moremur-hash-id.md). AVX-512 has the 64-bit multiply in lanes.
//!
//! # Definition
//!
//! With the multipliers `M1 = 0x3c79ac492ba7b653` and `M2 = 0x1c69b3f74ac4ae35`:
//!
//! ```text
//! first(x)  = (x ^ (x >> 27)) * M1
//! last(x)   = y ^ (y >> 27)  where  y = (x ^ (x >> 33)) * M2
//! mix(x)    = last(first(x))
//! ```
//!
//! (products modulo 2^64). Each step is invertible, so `mix` is a bijection: distinct 8-byte
//! keys never share a 64-bit hash under one seed. With `K = seed ^ 0x9e3779b97f4a7c15` and the
//! constants below:
//!
//! * a key of 8 bytes `v` (little-endian): `mix(v ^ K)`;
//! * a key of 4 bytes `v`: `last(first(v ^ K) ^ T4)`;
//! * a key of 16 bytes, words `lo` and `hi`: `mix(first(lo ^ K) ^ hi ^ T16)`.
//!
//! A 16-byte key takes three multiplies: `first` of the low word is a bijection, so keys that
//! differ in one word only reach `mix` apart, and `mix` spreads them.
//!
//! The tweak after the first multiply sets the widths apart, so that which keys of different
//! widths share a hash depends on the seed, as for any two keys. A filter takes the block from
//! the hash's high half and the probes from its low half, as under every hash id. Its quality
//! over structured key families is shown by `tests/integer_hashes.rs` and measured by
//! `blockbloom-perf hash-quality`.

use crate::hashing::WordHash;

/// The multipliers (moremur's, Pelle Evensen, "Better, stronger mixer", 2019).
pub(crate) const M1: u64 = 0x3c79_ac49_2ba7_b653;
pub(crate) const M2: u64 = 0x1c69_b3f7_4ac4_ae35;

/// What the seed is xored with (the golden ratio's fraction), so that key 0 under seed 0 does
/// not start from the fixed point 0.
const SEED_MASK: u64 = 0x9e37_79b9_7f4a_7c15;

/// The tweaks of keys of 4 and 16 bytes (splitmix64's multipliers).
pub(crate) const T4: u64 = 0xbf58_476d_1ce4_e5b9;
pub(crate) const T16: u64 = 0x94d0_49bb_1331_11eb;

/// The seed's key `K`. The kernels carry XXH3's constant of the seed (its flip) and derive
/// this from it once per chunk.
#[inline(always)]
pub(crate) const fn key(seed: u64) -> u64 {
    seed ^ SEED_MASK
}

/// `first` of the module docs: a xorshift and the first multiply.
#[inline(always)]
pub(crate) const fn first(x: u64) -> u64 {
    (x ^ (x >> 27)).wrapping_mul(M1)
}

/// `last` of the module docs: a xorshift, the second multiply and a xorshift.
#[inline(always)]
pub(crate) const fn last(x: u64) -> u64 {
    let y = (x ^ (x >> 33)).wrapping_mul(M2);
    y ^ (y >> 27)
}

/// MM64 of a 4-byte key, given the seed's [`key`].
#[inline(always)]
pub(crate) const fn u32_with_key(v: u32, k: u64) -> u64 {
    last(first(v as u64 ^ k) ^ T4)
}

/// MM64 of an 8-byte key, given the seed's [`key`].
#[inline(always)]
pub(crate) const fn u64_with_key(v: u64, k: u64) -> u64 {
    last(first(v ^ k))
}

/// MM64 of a 16-byte key (its little-endian bytes), given the seed's [`key`].
#[inline(always)]
pub(crate) const fn u128_with_key(v: u128, k: u64) -> u64 {
    u64_with_key(first(v as u64 ^ k) ^ (v >> 64) as u64 ^ T16, 0)
}

/// MM64 on eight lanes ([`WordHash`]), over the SIMD primitives: two 64-bit
/// multiplies and three xorshifts a key. The tier's `Lanes::mul64` is one instruction on AVX-512 (`vpmullq`)
/// and three 32-bit products on AVX2 and NEON. Equal bit for bit to the scalar functions
/// above on every key (`tests/integer_hashes.rs`, every tier); the loops over keys are
/// [`hash_words`](super::hash_words)'s.
mod lanes {
    use crate::hashing::{WordHash, WordHashKind};
    use crate::simd::Lanes;

    /// MM64 ([`WordHash`]).
    pub(crate) struct Moremur;

    /// `first` (the scalar function above) on eight lanes: a xorshift and the first multiply.
    #[inline(always)]
    fn first<L: Lanes>(l: L, x: L::V) -> L::V {
        l.mul64(l.xor(x, l.shr::<27>(x)), l.splat(super::M1))
    }

    /// `last` (the scalar function above) on eight lanes: a xorshift, the second multiply, a xorshift.
    #[inline(always)]
    fn last<L: Lanes>(l: L, x: L::V) -> L::V {
        let y = l.mul64(l.xor(x, l.shr::<33>(x)), l.splat(super::M2));
        l.xor(y, l.shr::<27>(y))
    }

    impl WordHash for Moremur {
        const KIND: WordHashKind = WordHashKind::Moremur;
        const MUL64: bool = true;

        #[inline(always)]
        fn key(seed: u64) -> u64 {
            super::key(seed)
        }

        #[inline(always)]
        fn u32_with_key(v: u32, k: u64) -> u64 {
            super::u32_with_key(v, k)
        }

        #[inline(always)]
        fn u64_with_key(v: u64, k: u64) -> u64 {
            super::u64_with_key(v, k)
        }

        #[inline(always)]
        fn u128_with_key(v: u128, k: u64) -> u64 {
            super::u128_with_key(v, k)
        }

        #[inline(always)]
        fn lanes<L: Lanes>(l: L, keyed: L::V) -> L::V {
            last(l, first(l, keyed))
        }

        #[inline(always)]
        fn lanes16<L: Lanes>(l: L, lo_keyed: L::V, hi: L::V) -> L::V {
            let x = l.xor(l.xor(first(l, lo_keyed), hi), l.splat(super::T16));
            last(l, first(l, x))
        }
    }
}

pub(crate) use lanes::Moremur;

/// MM64 of `key.to_le_bytes()` with `seed`: `KeyHash::Moremur`'s hash of a 4-byte key.
///
/// ```
/// use blockbloom::hash::{hash_u32_moremur, hash_bytes_moremur};
/// assert_eq!(hash_u32_moremur(7, 1), hash_bytes_moremur(&7u32.to_le_bytes(), 1).unwrap());
/// assert_ne!(hash_u32_moremur(7, 1), hash_u32_moremur(7, 2));
/// ```
#[inline]
pub const fn hash_u32_moremur(key: u32, seed: u64) -> u64 {
    u32_with_key(key, self::key(seed))
}

/// MM64 of `key.to_le_bytes()` with `seed`: `KeyHash::Moremur`'s hash of an 8-byte key, and of
/// every integer key of up to 64 bits (its 64-bit value).
///
/// ```
/// use blockbloom::hash::{hash_u64_moremur, hash_bytes_moremur};
/// assert_eq!(hash_u64_moremur(7, 1), hash_bytes_moremur(&7u64.to_le_bytes(), 1).unwrap());
/// // Not the 4-byte key of the same value.
/// assert_ne!(hash_u64_moremur(7, 1), blockbloom::hash::hash_u32_moremur(7, 1));
/// ```
#[inline]
pub const fn hash_u64_moremur(key: u64, seed: u64) -> u64 {
    u64_with_key(key, self::key(seed))
}

/// MM64 of `key.to_le_bytes()` with `seed`: `KeyHash::Moremur`'s hash of a 16-byte key.
///
/// ```
/// use blockbloom::hash::{hash_u128_moremur, hash_bytes_moremur};
/// let k = 0x0123_4567_89ab_cdef_0011_2233_4455_6677u128;
/// assert_eq!(hash_u128_moremur(k, 0), hash_bytes_moremur(&k.to_le_bytes(), 0).unwrap());
/// ```
#[inline]
pub const fn hash_u128_moremur(key: u128, seed: u64) -> u64 {
    u128_with_key(key, self::key(seed))
}

/// MM64 of a byte string of 4, 8 or 16 bytes (read little-endian) with `seed`; `None` for
/// other lengths, which `KeyHash::Moremur` hashes with AESH-64
/// ([`hash_bytes_aes`](crate::hash::hash_bytes_aes)).
///
/// ```
/// use blockbloom::hash::hash_bytes_moremur;
/// assert!(hash_bytes_moremur(b"abcd", 0).is_some());
/// assert_eq!(hash_bytes_moremur(b"abc", 0), None);
/// ```
#[inline]
pub fn hash_bytes_moremur(bytes: &[u8], seed: u64) -> Option<u64> {
    <Moremur as WordHash>::bytes(bytes, seed)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pinned values: the definition in the module docs, written out from its steps, and
    /// the hashes of three keys, so that a change to the constants or the order of the steps
    /// fails here.
    #[test]
    fn definition_is_pinned() {
        let mix = |mut x: u64| {
            x ^= x >> 27;
            x = x.wrapping_mul(0x3c79_ac49_2ba7_b653);
            x ^= x >> 33;
            x = x.wrapping_mul(0x1c69_b3f7_4ac4_ae35);
            x ^ (x >> 27)
        };
        let k = key(5);
        assert_eq!(k, 5 ^ 0x9e37_79b9_7f4a_7c15);
        for v in [0u64, 1, 7, u64::MAX, 0x0123_4567_89ab_cdef] {
            assert_eq!(hash_u64_moremur(v, 5), mix(v ^ k));
        }
        // Computed from the definition by a separate program (Python's integers, modulo 2^64).
        assert_eq!(
            [
                hash_u64_moremur(1, 0),
                hash_u32_moremur(1, 0),
                hash_u128_moremur(1, 0),
                hash_u128_moremur(1 << 64 | 1, 0),
            ],
            [
                0x0871_64d5_c9e6_ae5e,
                0x08bb_c865_f090_8a89,
                0xeafc_4f38_7fa7_e70f,
                0x68df_a22d_dc16_394c
            ],
        );
    }

    /// Distinct 8-byte keys never share a hash (`mix` is invertible): the steps' inverses
    /// recover the key from its hash.
    #[test]
    fn eight_byte_keys_are_a_bijection() {
        fn unxorshift(y: u64, s: u32) -> u64 {
            let mut x = y;
            for _ in 0..64 / s {
                x = y ^ (x >> s);
            }
            x
        }
        fn inverse(m: u64) -> u64 {
            // Newton's iteration for the inverse of an odd number modulo 2^64.
            let mut i = m;
            for _ in 0..6 {
                i = i.wrapping_mul(2u64.wrapping_sub(m.wrapping_mul(i)));
            }
            i
        }
        let k = key(9);
        for v in [0u64, 1, 2, 1 << 63, 0xdead_beef, u64::MAX] {
            let h = hash_u64_moremur(v, 9);
            let y = unxorshift(h, 27).wrapping_mul(inverse(M2));
            let x = unxorshift(unxorshift(y, 33).wrapping_mul(inverse(M1)), 27);
            assert_eq!(x ^ k, v);
        }
    }
}
