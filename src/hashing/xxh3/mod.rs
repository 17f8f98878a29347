//! XXH3-64 with a seed, the hash of `KeyHash::Xxh3` (and of 4- and 8-byte keys under
//! `KeyHash::Aesh`): one key at a time in closed form for keys of 4 to 16 bytes (the same bits
//! as `xxhash_rust`'s `xxh3_64_with_seed`, which serves every other length), and in SIMD
//! lanes for integer keys ([`lanes`]) and, on x86-64, 16-byte keys ([`key16`]). Byte strings
//! in lanes read the kernel's key shapes and live there (`kernel::hash::xxh3`).

use xxhash_rust::xxh3::xxh3_64_with_seed;

// 16-byte keys in lanes: the x86-64 tiers' (NEON and portable hash them one at a time).
#[cfg(target_arch = "x86_64")]
pub(crate) mod key16;

/// XXH3's default secret, bytes 8..16 and 16..24, read little-endian. The 4-to-8-byte input
/// path mixes exactly these two words with the seed (xxhash.h, `XXH3_len_4to8_64b`).
const SECRET_8: u64 = 0x1cad_21f7_2c81_017c;
const SECRET_16: u64 = 0xdb97_9083_e96d_d4de;
/// XXH3's `PRIME_MX2`, the multiplier of its `rrmxmx` finaliser.
pub(crate) const PRIME_MX2: u64 = 0x9fb2_1c65_1e98_df25;

/// The per-seed constant XXH3 xors into a 4-to-8-byte input. Computed once per filter so a
/// hash lane costs two rotates, two multiplies and a few shifts.
#[inline]
pub(crate) const fn seed_flip(seed: u64) -> u64 {
    let folded = seed ^ (((seed as u32).swap_bytes() as u64) << 32);
    (SECRET_8 ^ SECRET_16).wrapping_sub(folded)
}

/// The seed whose [`seed_flip`] is `flip` (the map is a bijection): the kernels carry the flip,
/// and byte-string keys need the seed itself.
#[inline]
pub(crate) const fn seed_from_flip(flip: u64) -> u64 {
    let folded = (SECRET_8 ^ SECRET_16).wrapping_sub(flip);
    folded ^ (((folded as u32).swap_bytes() as u64) << 32)
}

/// XXH3's default secret at bytes 24..56, as the 9-to-16-byte path reads it.
const SECRET_24: u64 = 0x1f67_b3b7_a4a4_4072;
const SECRET_32: u64 = 0x78e5_c0cc_4ee6_79cb;
const SECRET_40: u64 = 0x2172_ffcc_7dd0_5a82;
const SECRET_48: u64 = 0x8e24_43f7_7446_08b8;

/// What XXH3's 9-to-16-byte path xors into the first and the last eight bytes of a key, for
/// `seed`.
#[inline(always)]
pub(crate) const fn len9to16_keys(seed: u64) -> (u64, u64) {
    (
        (SECRET_24 ^ SECRET_32).wrapping_add(seed),
        (SECRET_40 ^ SECRET_48).wrapping_sub(seed),
    )
}

/// XXH3-64 of a 16-byte key (its little-endian bytes) with `seed`: the closed form of XXH3's
/// 9-to-16-byte path, the same bits as `xxh3_64_with_seed(&key.to_le_bytes(), seed)`.
#[inline(always)]
pub(crate) const fn u128_with_seed(key: u128, seed: u64) -> u64 {
    let (klo, khi) = len9to16_keys(seed);
    let lo = (key as u64) ^ klo;
    let hi = ((key >> 64) as u64) ^ khi;
    let product = lo as u128 * hi as u128;
    let fold = (product as u64) ^ ((product >> 64) as u64);
    let acc = 16u64
        .wrapping_add(lo.swap_bytes())
        .wrapping_add(hi)
        .wrapping_add(fold);
    xxh3_avalanche(acc)
}

/// XXH3-64 of a byte string with `seed`: XXH3's 4-to-16-byte paths in closed form (the same
/// bits as `xxh3_64_with_seed`, which serves every other length), so the short keys that
/// dominate database and network columns skip the general function's length dispatch.
#[inline(always)]
pub(crate) fn bytes_with_seed(b: &[u8], seed: u64) -> u64 {
    let len = b.len();
    let le64 = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
    let le32 = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"));
    match len {
        9..=16 => {
            let (klo, khi) = len9to16_keys(seed);
            let lo = le64(0) ^ klo;
            let hi = le64(len - 8) ^ khi;
            let product = lo as u128 * hi as u128;
            let fold = (product as u64) ^ ((product >> 64) as u64);
            xxh3_avalanche(
                (len as u64)
                    .wrapping_add(lo.swap_bytes())
                    .wrapping_add(hi)
                    .wrapping_add(fold),
            )
        }
        4..=8 => {
            let x = (le32(len - 4) as u64).wrapping_add((le32(0) as u64) << 32);
            rrmxmx(x ^ seed_flip(seed), len as u64)
        }
        _ => xxh3_64_with_seed(b, seed),
    }
}

/// XXH3's avalanche multiplier.
pub(crate) const PRIME_AVALANCHE: u64 = 0x1656_6791_9e37_79f9;

/// XXH3's avalanche.
#[inline(always)]
const fn xxh3_avalanche(mut h: u64) -> u64 {
    h ^= h >> 37;
    h = h.wrapping_mul(PRIME_AVALANCHE);
    h ^ (h >> 32)
}

/// XXH3's `rrmxmx` finaliser for inputs of `len` bytes.
#[inline(always)]
pub(crate) const fn rrmxmx(mut h: u64, len: u64) -> u64 {
    h ^= h.rotate_left(49) ^ h.rotate_left(24);
    h = h.wrapping_mul(PRIME_MX2);
    h ^= (h >> 35).wrapping_add(len);
    h = h.wrapping_mul(PRIME_MX2);
    h ^ (h >> 28)
}

/// XXH3-64 of an 8-byte little-endian key, given `seed_flip(seed)`.
#[inline(always)]
pub(crate) const fn u64_with_flip(key: u64, flip: u64) -> u64 {
    rrmxmx(key.rotate_left(32) ^ flip, 8)
}

/// XXH3-64 of a 4-byte little-endian key, given `seed_flip(seed)`.
#[inline(always)]
pub(crate) const fn u32_with_flip(key: u32, flip: u64) -> u64 {
    let k = key as u64;
    rrmxmx((k | (k << 32)) ^ flip, 4)
}

/// XXH3-64 of `key.to_le_bytes()` with `seed`.
///
/// ```
/// let h = blockbloom::hash::hash_u64(1, 0);
/// assert_eq!(h, xxhash_rust::xxh3::xxh3_64_with_seed(&1u64.to_le_bytes(), 0));
/// ```
#[inline]
pub const fn hash_u64(key: u64, seed: u64) -> u64 {
    u64_with_flip(key, seed_flip(seed))
}

/// XXH3-64 of `key.to_le_bytes()` with `seed`: the hash of a 4-byte string. A `u32` *key* is
/// its 64-bit value ([`hash_u64`]`(key as u64, seed)`); this is what a 4-byte key hashes to,
/// which is how a filter written while a `u32` key was its 4 bytes is asked for one
/// (`contains_bytes(&key.to_le_bytes())`).
///
/// ```
/// use blockbloom::hash::{hash_bytes, hash_key, hash_u32, hash_u64};
/// assert_eq!(hash_u32(7, 1), hash_bytes(&7u32.to_le_bytes(), 1));
/// assert_eq!(hash_key(&7u32, 1), hash_u64(7, 1));
///
/// let h = blockbloom::hash::hash_u32(1, 0);
/// assert_eq!(h, xxhash_rust::xxh3::xxh3_64_with_seed(&1u32.to_le_bytes(), 0));
/// ```
#[inline]
pub const fn hash_u32(key: u32, seed: u64) -> u64 {
    u32_with_flip(key, seed_flip(seed))
}

/// XXH3-64 of exactly these bytes with `seed` (no length prefix, no terminator).
///
/// ```
/// assert_eq!(blockbloom::hash::hash_bytes(b"", 0), xxhash_rust::xxh3::xxh3_64_with_seed(b"", 0));
/// ```
#[inline]
pub fn hash_bytes(bytes: &[u8], seed: u64) -> u64 {
    bytes_with_seed(bytes, seed)
}

/// XXH3 on eight lanes, over the SIMD primitives: its `rrmxmx` finaliser and integer keys,
/// equal bit for bit to the scalar functions above on every key (`tests/kernels.rs`, every
/// tier).
pub(crate) mod lanes {
    use super::{PRIME_MX2, u64_with_flip};
    use crate::simd::{Lanes, Word};

    /// XXH3's `rrmxmx` finaliser on eight lanes of inputs of `len` bytes.
    #[inline(always)]
    pub(crate) fn rrmxmx<L: Lanes>(l: L, h: L::V, len: u64) -> L::V {
        rrmxmx_var(l, h, l.splat(len))
    }

    /// [`rrmxmx`] with each lane's own input length.
    #[inline(always)]
    pub(crate) fn rrmxmx_var<L: Lanes>(l: L, h: L::V, len: L::V) -> L::V {
        let mx2 = l.splat(PRIME_MX2);
        let h = l.xor(h, l.xor(l.rotl::<49, 15>(h), l.rotl::<24, 40>(h)));
        let h = l.mul64(h, mx2);
        let h = l.xor(h, l.add(l.shr::<35>(h), len));
        let h = l.mul64(h, mx2);
        l.xor(h, l.shr::<28>(h))
    }

    /// XXH3-64 of each integer key's 64-bit value, eight lanes at a time (the rest one at a
    /// time). Where the tier's 64-bit multiply is one instruction ([`Lanes::MUL64_NATIVE`]),
    /// sixteen at a time first: each lane's hash is a chain of two dependent multiplies, and two
    /// independent chains keep the multiplier busy. (Elsewhere the multiply is three 32-bit
    /// products, whose chains already overlap, and the longer loop only cost registers.)
    #[inline(always)]
    pub(crate) fn hash_words<L: Lanes, W: Word>(l: L, flip: u64, keys: &[W], out: &mut [u64]) {
        let f = l.splat(flip);
        // XXH3 reads the key as two LE32 halves and rotates by 32: swap the halves.
        let input = |k: &[W]| l.xor(l.rotl::<32, 32>(W::lanes(l, k)), f);
        let (mut keys, mut out) = (keys, out);
        if L::MUL64_NATIVE {
            let whole = keys.len() / 16 * 16;
            let (pairs, rest) = keys.split_at(whole);
            let (pairs_out, rest_out) = out.split_at_mut(whole);
            for (k, o) in pairs.chunks_exact(16).zip(pairs_out.chunks_exact_mut(16)) {
                let (a, b) = (input(k), input(&k[8..]));
                let (a, b) = (rrmxmx(l, a, 8), rrmxmx(l, b, 8));
                l.storeu(o, a);
                l.storeu(&mut o[8..], b);
            }
            (keys, out) = (rest, rest_out);
        }
        let mut kc = keys.chunks_exact(8);
        let mut oc = out.chunks_exact_mut(8);
        for (k, o) in (&mut kc).zip(&mut oc) {
            l.storeu(o, rrmxmx(l, input(k), 8));
        }
        for (o, &k) in oc.into_remainder().iter_mut().zip(kc.remainder()) {
            *o = u64_with_flip(k.value(), flip);
        }
    }
}
