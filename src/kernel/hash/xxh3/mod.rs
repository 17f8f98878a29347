//! XXH3-64 over a batch, equal bit for bit to `xxh3_64_with_seed` of each key's bytes:
//! integer keys as their 64-bit value (XXH3's closed form for 8 bytes, `rrmxmx`), 16-byte keys
//! ([`key16`]) and byte strings of 4 to 16 bytes ([`bytes`]) in lanes on the tiers where that
//! measured faster, and byte strings one at a time ([`ByteKeys::hash`]).

use crate::hashing::{PRIME_MX2, bytes_with_seed, u64_with_flip};
use crate::kernel::shapes::{ByteKeys, Word};
use crate::simd::Lanes;

// 16-byte keys and short byte strings in lanes: the x86-64 tiers' (NEON and portable hash
// them one at a time).
#[cfg(target_arch = "x86_64")]
pub(crate) mod bytes;
#[cfg(target_arch = "x86_64")]
pub(crate) mod key16;

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

impl ByteKeys<'_> {
    /// XXH3 of each key with `seed` into `out` (same length), one key at a time: the
    /// reference, and every tier's hash of byte strings but AVX-512's short ones
    /// ([`bytes`]).
    #[inline(always)]
    pub(crate) fn hash(&self, seed: u64, out: &mut [u64]) {
        match self {
            ByteKeys::Slices(k) => {
                for (o, b) in out.iter_mut().zip(*k) {
                    *o = bytes_with_seed(b, seed);
                }
            }
            ByteKeys::Strs(k) => {
                for (o, s) in out.iter_mut().zip(*k) {
                    *o = bytes_with_seed(s.as_bytes(), seed);
                }
            }
            ByteKeys::Offsets32 { offsets, values } => {
                for (o, w) in out.iter_mut().zip(offsets.windows(2)) {
                    // In bounds: the front-end validated the offsets against `values`.
                    *o = bytes_with_seed(&values[w[0] as usize..w[1] as usize], seed);
                }
            }
            ByteKeys::Offsets64 { offsets, values } => {
                for (o, w) in out.iter_mut().zip(offsets.windows(2)) {
                    *o = bytes_with_seed(&values[w[0] as usize..w[1] as usize], seed);
                }
            }
        }
    }
}

/// [`ByteKeys::hash`] out of line: a chunk that the lanes do not pay for (`bytes`).
#[cfg(target_arch = "x86_64")]
#[inline(never)]
pub(crate) fn bytes_one_by_one(keys: ByteKeys<'_>, seed: u64, out: &mut [u64]) {
    keys.hash(seed, out)
}
