//! MX32-64: `KeyHash::Mx32`'s hash of keys of 4, 8 and 16 bytes, built from the one multiply every
//! SIMD tier has in its lanes, 32 by 32 bits into 64 (`vpmuludq` on AVX2 and AVX-512, `umull`
//! on NEON), with shifts and xors. XXH3's 8-byte path multiplies 64 by 64 bits, which AVX2 and
//! NEON build from three 32-bit products and their shifts; this hash does a round in two.
//!
//! # Definition
//!
//! A round mixes a 64-bit state `x` with two odd 32-bit multipliers `a` and `b`: the 64-bit
//! product of its low half and `a`, xored with the 64-bit product of its high half and `b`
//! with that product's halves swapped:
//!
//! ```text
//! round(x, a, b) = (lo32(x) * a) ^ rotl64(hi32(x) * b, 32)
//! ```
//!
//! Each output half takes one half of each product, so three rounds make every output bit
//! depend on every input bit. With `K = seed ^ 0x243f6a8885a308d3` (and the constants below):
//!
//! * a key of 4 bytes `v` (little-endian): `fin(v ^ K, T4)`;
//! * a key of 8 bytes `v`: `fin(v ^ K, T8)`;
//! * a key of 16 bytes, words `lo` and `hi`: `fin(round(lo ^ K, A0, B0) ^ hi, T16)`;
//!
//! where `fin(x, t) = round(round(round(x, A1, B1) ^ t, A2, B2), A3, B3)`. The tweak `t`
//! after the first round sets the widths apart, so that which keys of different widths share
//! a hash depends on the seed, as for any two keys.
//!
//! A filter takes the block from the hash's high half and the probes from its low half, as
//! under every hash id. Its quality is shown by `tests/integer_hashes.rs`: avalanche and bit
//! independence within the noise of their samples, and the false-positive rate of
//! sequential, strided and sparse key sets at the filter's target.

use crate::hashing::WordHash;

/// The multipliers of the 16-byte pre-round and of rounds 1 to 3: odd 32-bit constants from
/// xxHash32 and MurmurHash3.
pub(crate) const A: [u64; 4] = [0x85eb_ca6b, 0x9e37_79b1, 0xc2b2_ae3d, 0x1656_67b1];
pub(crate) const B: [u64; 4] = [0xc2b2_ae35, 0x85eb_ca77, 0x27d4_eb2f, 0xcc9e_2d51];

/// What the seed is xored with (the first hexadecimal digits of pi's fraction).
const SEED_MASK: u64 = 0x243f_6a88_85a3_08d3;

/// The tweaks of keys of 4, 8 and 16 bytes (the next digits of pi).
pub(crate) const T4: u64 = 0x1319_8a2e_0370_7344;
pub(crate) const T8: u64 = 0xa409_3822_299f_31d0;
pub(crate) const T16: u64 = 0x082e_fa98_ec4e_6c89;

/// The seed's key `K`, which starts the state. The kernels carry XXH3's constant of the seed
/// (its flip) and derive this from it once per chunk.
#[inline(always)]
pub(crate) const fn key(seed: u64) -> u64 {
    seed ^ SEED_MASK
}

/// One round (see the module docs) with multipliers `A[r]` and `B[r]`.
#[inline(always)]
pub(crate) const fn round(x: u64, r: usize) -> u64 {
    ((x & 0xffff_ffff) * A[r]) ^ ((x >> 32) * B[r]).rotate_left(32)
}

/// Rounds 1 to 3, with the width's tweak after the first.
#[inline(always)]
pub(crate) const fn finish(x: u64, tweak: u64) -> u64 {
    round(round(round(x, 1) ^ tweak, 2), 3)
}

/// MX32-64 of a 4-byte key, given the seed's [`key`].
#[inline(always)]
pub(crate) const fn u32_with_key(v: u32, k: u64) -> u64 {
    finish(v as u64 ^ k, T4)
}

/// MX32-64 of an 8-byte key, given the seed's [`key`].
#[inline(always)]
pub(crate) const fn u64_with_key(v: u64, k: u64) -> u64 {
    finish(v ^ k, T8)
}

/// MX32-64 of a 16-byte key (its little-endian bytes), given the seed's [`key`].
#[inline(always)]
pub(crate) const fn u128_with_key(v: u128, k: u64) -> u64 {
    finish(round(v as u64 ^ k, 0) ^ (v >> 64) as u64, T16)
}

// `u64_one` and `u128_one`: `u64_with_key` and `u128_with_key` as a single-key call computes
// them. On x86-64, in one SSE2 register (`one_register`), where a round is one multiply of
// both halves and three shuffles and xors instead of two scalar multiplies, four moves and
// shifts and two 64-bit constants; elsewhere the scalar rounds. (On an Intel Xeon the scalar
// rounds ran faster in cache and slower at 64M keys:
// perf-reports/2026-12-03-single-key-shapes.md.)
#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
pub(crate) use self::{u64_with_key as u64_one, u128_with_key as u128_one};
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
pub(crate) use one_register::{u64_with_key as u64_one, u128_with_key as u128_one};

/// MX32-64 of one key in one 128-bit register, with SSE2 (which every x86-64 CPU has): the
/// state `x` sits as `[lo32, lo32, hi32, hi32]`, so one `pmuludq` makes a round's two
/// products, and two shuffles and an xor put the next state back in the same shape. The
/// batch kernels hash many keys in lanes; a single key would leave seven of eight lanes idle,
/// so this is the shape for one.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
mod one_register {
    use core::arch::x86_64::{
        __m128i, _mm_cvtsi64_si128, _mm_cvtsi128_si64, _mm_mul_epu32, _mm_set_epi64x,
        _mm_shuffle_epi32, _mm_xor_si128,
    };

    /// `v` (64 bits) as a state: its low half in lane 0 and its high half in lane 1's low
    /// 32 bits (both lanes' high 32 bits are don't-cares).
    #[inline(always)]
    fn state(v: u64) -> __m128i {
        // SAFETY: register-only SSE2 operations, and the module is compiled only where the
        // target has SSE2 (`cfg(target_feature = "sse2")`, every x86-64 target).
        unsafe { _mm_shuffle_epi32::<0b01_01_00_00>(_mm_cvtsi64_si128(v as i64)) }
    }

    /// The state back as 64 bits.
    #[inline(always)]
    fn value(x: __m128i) -> u64 {
        // SAFETY: as in `state`.
        unsafe { _mm_cvtsi128_si64(_mm_shuffle_epi32::<0b00_00_10_00>(x)) as u64 }
    }

    /// `round(x, r)`: `[lo * A, hi * B]` in one multiply; the new low half is the first
    /// product's low half xor the second's high half, the new high half the other two.
    #[inline(always)]
    fn round(x: __m128i, r: usize) -> __m128i {
        // SAFETY: as in `state`.
        unsafe {
            let p = _mm_mul_epu32(x, _mm_set_epi64x(super::B[r] as i64, super::A[r] as i64));
            let first = _mm_shuffle_epi32::<0b01_01_00_00>(p);
            let second = _mm_shuffle_epi32::<0b10_10_11_11>(p);
            _mm_xor_si128(first, second)
        }
    }

    /// Rounds 1 to 3, with `tweak` after the first.
    #[inline(always)]
    fn finish(x: __m128i, tweak: u64) -> u64 {
        // SAFETY: as in `state`.
        let x = unsafe { _mm_xor_si128(round(x, 1), state(tweak)) };
        value(round(round(x, 2), 3))
    }

    #[inline(always)]
    pub(crate) fn u64_with_key(v: u64, k: u64) -> u64 {
        finish(state(v ^ k), super::T8)
    }

    #[inline(always)]
    pub(crate) fn u128_with_key(v: u128, k: u64) -> u64 {
        // SAFETY: as in `state`.
        let x = unsafe { _mm_xor_si128(round(state(v as u64 ^ k), 0), state((v >> 64) as u64)) };
        finish(x, super::T16)
    }
}

/// MX32-64 on eight lanes ([`WordHash`]), over the SIMD primitives: four
/// rounds of two 32x32->64-bit products, so the x86-64 and NEON tiers need no 64-bit multiply. Equal bit for
/// bit to the scalar functions above on every key (`tests/integer_hashes.rs`, every tier);
/// the loops over keys are [`hash_words`](super::hash_words)'s.
mod lanes {
    use crate::hashing::{WordHash, WordHashKind};
    use crate::simd::Lanes;

    /// MX32-64 ([`WordHash`]).
    pub(crate) struct Mx32;

    /// One MX32-64 round (the scalar `round` above) on eight lanes: two 32x32->64-bit products, a shift,
    /// a swap of halves and an xor.
    #[inline(always)]
    fn round<L: Lanes>(l: L, x: L::V, r: usize) -> L::V {
        let p = l.mul_halves(x, l.splat(super::A[r]));
        let q = l.mul_halves(l.shr::<32>(x), l.splat(super::B[r]));
        l.xor(p, l.rotl::<32, 32>(q))
    }

    /// MX32-64's rounds 1 to 3 (the scalar `finish` above) with the width's tweak, on eight lanes.
    #[inline(always)]
    fn finish<L: Lanes>(l: L, x: L::V, tweak: u64) -> L::V {
        let x = l.xor(round(l, x, 1), l.splat(tweak));
        round(l, round(l, x, 2), 3)
    }

    impl WordHash for Mx32 {
        const KIND: WordHashKind = WordHashKind::Mx32;
        const MUL64: bool = false;

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
        fn u64_one(v: u64, k: u64) -> u64 {
            super::u64_one(v, k)
        }

        #[inline(always)]
        fn u128_one(v: u128, k: u64) -> u64 {
            super::u128_one(v, k)
        }

        #[inline(always)]
        fn lanes<L: Lanes>(l: L, keyed: L::V) -> L::V {
            finish(l, keyed, super::T8)
        }

        #[inline(always)]
        fn lanes16<L: Lanes>(l: L, lo_keyed: L::V, hi: L::V) -> L::V {
            finish(l, l.xor(round(l, lo_keyed, 0), hi), super::T16)
        }
    }
}

pub(crate) use lanes::Mx32;

/// MX32-64 of `key.to_le_bytes()` with `seed`: `KeyHash::Mx32`'s hash of a 4-byte key.
///
/// ```
/// use blockbloom::hash::{hash_u32_mx32, hash_bytes_mx32};
/// assert_eq!(hash_u32_mx32(7, 1), hash_bytes_mx32(&7u32.to_le_bytes(), 1).unwrap());
/// assert_ne!(hash_u32_mx32(7, 1), hash_u32_mx32(7, 2));
/// ```
#[inline]
pub const fn hash_u32_mx32(key: u32, seed: u64) -> u64 {
    u32_with_key(key, self::key(seed))
}

/// MX32-64 of `key.to_le_bytes()` with `seed`: `KeyHash::Mx32`'s hash of an 8-byte key.
///
/// ```
/// use blockbloom::hash::{hash_u64_mx32, hash_bytes_mx32};
/// assert_eq!(hash_u64_mx32(7, 1), hash_bytes_mx32(&7u64.to_le_bytes(), 1).unwrap());
/// // Not the 4-byte key of the same value.
/// assert_ne!(hash_u64_mx32(7, 1), blockbloom::hash::hash_u32_mx32(7, 1));
/// ```
#[inline]
pub const fn hash_u64_mx32(key: u64, seed: u64) -> u64 {
    u64_with_key(key, self::key(seed))
}

/// MX32-64 of `key.to_le_bytes()` with `seed`: `KeyHash::Mx32`'s hash of a 16-byte key.
///
/// ```
/// use blockbloom::hash::{hash_u128_mx32, hash_bytes_mx32};
/// let k = 0x0123_4567_89ab_cdef_0011_2233_4455_6677u128;
/// assert_eq!(hash_u128_mx32(k, 0), hash_bytes_mx32(&k.to_le_bytes(), 0).unwrap());
/// ```
#[inline]
pub const fn hash_u128_mx32(key: u128, seed: u64) -> u64 {
    u128_with_key(key, self::key(seed))
}

/// MX32-64 of a byte string of 4, 8 or 16 bytes (read little-endian) with `seed`; `None` for
/// other lengths, which `KeyHash::Mx32` hashes with AESH-64
/// ([`hash_bytes_aes`](crate::hash::hash_bytes_aes)).
///
/// ```
/// use blockbloom::hash::hash_bytes_mx32;
/// assert!(hash_bytes_mx32(b"abcd", 0).is_some());
/// assert_eq!(hash_bytes_mx32(b"abc", 0), None);
/// ```
#[inline]
pub fn hash_bytes_mx32(bytes: &[u8], seed: u64) -> Option<u64> {
    <Mx32 as WordHash>::bytes(bytes, seed)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pinned values: the definition in the module docs, computed by hand from its steps,
    /// so that a change to the constants or the order of the steps fails here.
    #[test]
    fn definition_is_pinned() {
        let k = key(0);
        assert_eq!(k, SEED_MASK);
        let by_steps = |x: u64, t: u64| {
            let r = |x: u64, a: u64, b: u64| {
                let p = (x & 0xffff_ffff) * a;
                let q = (x >> 32) * b;
                p ^ q.rotate_right(32)
            };
            let x = r(x, 0x9e37_79b1, 0x85eb_ca77) ^ t;
            let x = r(x, 0xc2b2_ae3d, 0x27d4_eb2f);
            r(x, 0x1656_67b1, 0xcc9e_2d51)
        };
        assert_eq!(hash_u64_mx32(5, 0), by_steps(5 ^ k, T8));
        assert_eq!(hash_u32_mx32(5, 0), by_steps(5 ^ k, T4));
        let wide = 5u128 | 9 << 64;
        let pre = (((5 ^ k) & 0xffff_ffff) * 0x85eb_ca6b)
            ^ (((5 ^ k) >> 32) * 0xc2b2_ae35).rotate_left(32);
        assert_eq!(hash_u128_mx32(wide, 0), by_steps(pre ^ 9, T16));
        // Values computed by an independent program from the definition.
        assert_eq!(hash_u64_mx32(0, 0), 0xadd6_843e_fc9b_dde3);
        assert_eq!(hash_u32_mx32(0xdead_beef, 0), 0x4826_c84b_51fe_1b9f);
        assert_eq!(
            hash_u128_mx32(0x0123_4567_89ab_cdef_0011_2233_4455_6677, 0),
            0xc035_3e88_205d_8853
        );
    }

    /// The single-key shape computes the definition, on keys whose halves reach every
    /// carry and swap.
    #[test]
    fn one_register_equals_the_definition() {
        let mut x = 0x0123_4567_89ab_cdefu64;
        let edges = [0, 1, u64::MAX, 0xffff_ffff, 1 << 32, 1 << 63];
        for i in 0..20_000u64 {
            x = x.wrapping_mul(0x9e37_79b9_7f4a_7c15).wrapping_add(i);
            let v = if (i as usize) < edges.len() {
                edges[i as usize]
            } else {
                x
            };
            for k in [key(0), key(v.rotate_left(17)), u64::MAX] {
                assert_eq!(u64_one(v, k), u64_with_key(v, k), "{v:#x} {k:#x}");
                let wide = (v as u128) << 64 | x.rotate_left(29) as u128;
                assert_eq!(
                    u128_one(wide, k),
                    u128_with_key(wide, k),
                    "{wide:#x} {k:#x}"
                );
            }
        }
    }

    #[test]
    fn byte_strings_of_the_three_widths_hash_as_their_integers() {
        for seed in [0, 3, u64::MAX] {
            for v in [0u64, 1, 0xdead_beef, u64::MAX] {
                let v32 = v as u32;
                let wide = (v as u128) << 64 | v.rotate_left(7) as u128;
                assert_eq!(
                    hash_bytes_mx32(&v32.to_le_bytes(), seed),
                    Some(hash_u32_mx32(v32, seed))
                );
                assert_eq!(
                    hash_bytes_mx32(&v.to_le_bytes(), seed),
                    Some(hash_u64_mx32(v, seed))
                );
                assert_eq!(
                    hash_bytes_mx32(&wide.to_le_bytes(), seed),
                    Some(hash_u128_mx32(wide, seed))
                );
            }
            for len in [0, 1, 3, 5, 7, 9, 15, 17, 32] {
                assert_eq!(hash_bytes_mx32(&[1; 32][..len], seed), None, "{len}");
            }
        }
    }
}
