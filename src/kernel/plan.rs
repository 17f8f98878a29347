//! The hash plan: the only place a hash is chosen. A filter's hash ([`KeyHash`]) and the
//! shape of its keys ([`Keys`]) pick the routine that hashes them: which hash (XXH3, MX32-64,
//! MM64, AESH-64), in lanes or one key at a time, and in which of the tier's functions (inline, or
//! out of line with its features). The routines themselves are `kernel::hash` (and each
//! integer hash's own file in `crate::hashing`), written once over the primitives; the tier's
//! facts they are chosen by are its [`Lanes`] constants.
//!
//! | hash, keys | integers (`U64`, `Narrow`) | 16 bytes (`U128`, `Fixed16`) | byte strings |
//! |---|---|---|---|
//! | `KeyHash::Xxh3` | XXH3 in lanes | XXH3 in lanes on AVX2 and AVX-512, else one at a time | XXH3: 4-16 bytes in lanes on AVX-512, else one at a time |
//! | `KeyHash::Aesh` | XXH3 in lanes | AESH-64 | AESH-64; 4 and 8 bytes XXH3 |
//! | `KeyHash::Mx32` | MX32-64 in lanes | MX32-64, in lanes on AVX2 and AVX-512 | AESH-64; 4, 8 and 16 bytes MX32-64 |
//! | `KeyHash::Moremur` | MM64 in lanes | MM64, in lanes on AVX2 and AVX-512 | AESH-64; 4, 8 and 16 bytes MM64 |
//!
//! The single-key path chooses the same way: one key, one hash ([`burst_keys`] for the burst
//! entries).

#[cfg(target_arch = "x86_64")]
use crate::hashing::hash_keys16;
use crate::hashing::xxh3;
use crate::hashing::{
    KeyHash, WordHash, WordHashKind, hash_words, seed_from_flip, u64_with_flip, u128_with_seed,
    with_word_hash,
};
use crate::kernel::shapes::{Aesh, ByteKeys, FixedWidth, Keys, each_width};
use crate::simd::{Lanes, Routine, Word};
use core::marker::PhantomData;

impl<'a> Keys<'a> {
    /// These keys as a filter of `hash` hashes them: under a hash with an integer hash of its
    /// own ([`KeyHash::word_hash`]), the integer forms
    /// and 16-byte keys become [`Keys::Fixed`] and byte strings [`Keys::Aesh`]; under
    /// `KeyHash::Aesh`, byte strings and 16-byte keys become [`Keys::Aesh`]; other keys, and
    /// every key under `KeyHash::Xxh3`, as they are.
    #[inline(always)]
    pub(crate) fn under(self, hash: KeyHash) -> Keys<'a> {
        if let Some(kind) = hash.word_hash() {
            return match self {
                Keys::Bytes(b) => Keys::Aesh(Aesh::Bytes(hash, b)),
                Keys::Narrow(k) => Keys::Fixed(kind, FixedWidth::Narrow(k)),
                Keys::U64(k) => Keys::Fixed(kind, FixedWidth::U64(k)),
                Keys::U128(k) => Keys::Fixed(kind, FixedWidth::U128(k)),
                Keys::Fixed16(k) => Keys::Fixed(kind, FixedWidth::Fixed16(k)),
                keys => keys,
            };
        }
        match (hash, self) {
            (KeyHash::Aesh, Keys::Bytes(b)) => Keys::Aesh(Aesh::Bytes(hash, b)),
            (KeyHash::Aesh, Keys::U128(k)) => Keys::Aesh(Aesh::U128(k)),
            (KeyHash::Aesh, Keys::Fixed16(k)) => Keys::Aesh(Aesh::Fixed16(k)),
            (_, keys) => keys,
        }
    }

    /// Hashes every key into `out` (same length), the reference way.
    pub(crate) fn hash_scalar(&self, flip: u64, out: &mut [u64]) {
        assert_eq!(
            out.len(),
            self.len(),
            "output slice length must equal key count"
        );
        match self {
            Keys::U64(k) => {
                for (o, &x) in out.iter_mut().zip(*k) {
                    *o = u64_with_flip(x, flip);
                }
            }
            Keys::Narrow(k) => k.values_into(out, |x| u64_with_flip(x, flip)),
            Keys::U128(k) => {
                let seed = seed_from_flip(flip);
                for (o, &x) in out.iter_mut().zip(*k) {
                    *o = u128_with_seed(x, seed);
                }
            }
            Keys::Fixed16(k) => {
                let seed = seed_from_flip(flip);
                for (o, x) in out.iter_mut().zip(*k) {
                    *o = u128_with_seed(u128::from_le_bytes(*x), seed);
                }
            }
            Keys::Bytes(k) => k.hash(seed_from_flip(flip), out),
            Keys::Hashes(k) => out.copy_from_slice(k),
            Keys::Aesh(a) => aesh_scalar(*a, flip, out),
            Keys::Fixed(kind, m) => {
                with_word_hash!(kind, H => hash_each::<H>(*m, flip, out))
            }
        }
    }

    /// Hashes every key into `out` (same length) in `l`'s lanes.
    #[inline(always)]
    pub(crate) fn hash_lanes<L: Lanes>(&self, l: L, flip: u64, out: &mut [u64]) {
        assert_eq!(
            out.len(),
            self.len(),
            "output slice length must equal key count"
        );
        self.hash_lanes_at(l, flip, 0, out)
    }

    /// Hashes keys `start..start + out.len()` into `out` in `l`'s lanes: the pipeline's
    /// per-chunk step, one match and no re-slicing of the other sources.
    #[inline(always)]
    pub(crate) fn hash_lanes_at<L: Lanes>(&self, l: L, flip: u64, start: usize, out: &mut [u64]) {
        let end = start + out.len();
        match self {
            Keys::U64(k) => xxh3_words(l, flip, &k[start..end], out),
            Keys::Narrow(n) => each_width!(n, k => xxh3_words(l, flip, &k[start..end], out)),
            Keys::Hashes(k) => out.copy_from_slice(&k[start..end]),
            Keys::U128(_) | Keys::Fixed16(_) => xxh3_keys16(l, flip, self.slice(start, end), out),
            Keys::Bytes(b) => xxh3_bytes(l, flip, b.slice(start, end), out),
            Keys::Aesh(a) => aesh(l, flip, a.slice(start, end), out),
            // `u64` keys matched in this match, with the key shape (a second match on the
            // fixed width cost each chunk a few instructions: the instruction gate).
            Keys::Fixed(kind, FixedWidth::U64(k)) => {
                with_word_hash!(kind, H => words_on::<H, L, u64>(l, flip, &k[start..end], out))
            }
            Keys::Fixed(kind, m) => {
                with_word_hash!(kind, H => fixed_at::<H, L>(l, flip, *m, start, end, out))
            }
        }
    }
}

/// What takes a batch's hashes one at a time, in key order: the scalar reference's loop.
pub(crate) trait EachHash {
    fn each(self, hashes: impl Iterator<Item = u64>);
}

/// Hashes `keys` (as [`Keys::under`] gave them) one at a time, the reference way, and hands
/// them in order to `to`: integer keys (and `u64` keys under an integer hash of the filter's
/// own) hashed inline, one loop per width; other keys a chunk at a time (one dispatch per
/// chunk, not per key).
#[inline(always)]
pub(crate) fn each_hash(keys: Keys<'_>, flip: u64, to: impl EachHash) {
    match keys {
        Keys::U64(k) => to.each(k.iter().map(|&x| u64_with_flip(x, flip))),
        Keys::Narrow(n) => each_width!(n, k => {
            to.each(k.iter().map(|&x| u64_with_flip(x.value(), flip)))
        }),
        Keys::Hashes(k) => to.each(k.iter().copied()),
        Keys::Fixed(kind, FixedWidth::U64(k)) => {
            with_word_hash!(kind, H => to.each(each_u64::<H>(k, flip)))
        }
        Keys::U128(_) | Keys::Fixed16(_) | Keys::Bytes(_) | Keys::Aesh(_) | Keys::Fixed(..) => {
            const CHUNK: usize = 64;
            let len = keys.len();
            let hashes = (0..len).step_by(CHUNK).flat_map(move |start| {
                let n = CHUNK.min(len - start);
                let mut buf = [0u64; CHUNK];
                keys.slice(start, start + n)
                    .hash_scalar(flip, &mut buf[..n]);
                buf.into_iter().take(n)
            });
            to.each(hashes)
        }
    }
}

/// The `u64` keys of a burst entry and the integer hash they take, if `keys` is a burst of
/// them under `hash`: the single-key entries hash `u64` keys in lanes with the integer hashes
/// of a filter's own ([`KeyHash::word_hash`]: MX32-64 and MM64).
#[inline(always)]
pub(crate) fn burst_keys<'k>(
    hash: KeyHash,
    keys: Keys<'k>,
    max: usize,
) -> Option<(WordHashKind, &'k [u64])> {
    match keys {
        Keys::U64(k) if k.len() <= max => Some((hash.word_hash()?, k)),
        _ => None,
    }
}

/// A burst's `u64` keys under `kind` as the scalar reference takes them.
#[inline(always)]
pub(crate) fn burst_scalar_keys(kind: WordHashKind, keys: &[u64]) -> Keys<'_> {
    Keys::Fixed(kind, FixedWidth::U64(keys))
}

/// The hashes under `kind` of a burst entry's `u64` keys ([`burst_keys`]), in lanes: inline,
/// or where the tier's 64-bit multiply is best for a hash that multiplies 64-bit values
/// ([`words_on`]).
#[inline(always)]
pub(crate) fn burst_hash<L: Lanes>(
    l: L,
    kind: WordHashKind,
    flip: u64,
    keys: &[u64],
    out: &mut [u64],
) {
    with_word_hash!(kind, H => words_on::<H, L, u64>(l, flip, keys, out))
}

/// XXH3 of integer keys, where the tier's 64-bit multiply is best ([`Lanes::with_mul64`]).
#[inline(always)]
fn xxh3_words<L: Lanes, W: Word>(l: L, flip: u64, keys: &[W], out: &mut [u64]) {
    struct Words<'k, 'o, W> {
        flip: u64,
        keys: &'k [W],
        out: &'o mut [u64],
    }
    impl<W: Word> Routine for Words<'_, '_, W> {
        type Output = ();
        #[inline(always)]
        fn run<L: Lanes>(self, l: L) {
            xxh3::lanes::hash_words(l, self.flip, self.keys, self.out)
        }
    }
    l.with_mul64(Words { flip, keys, out })
}

/// XXH3 of 16-byte keys (`Keys::U128`, `Keys::Fixed16`): in lanes, out of line, where the
/// tier splits them in registers ([`Lanes::KEYS16_IN_LANES`]); else one at a time.
#[inline(always)]
fn xxh3_keys16<L: Lanes>(l: L, flip: u64, keys: Keys<'_>, out: &mut [u64]) {
    #[cfg(target_arch = "x86_64")]
    if L::KEYS16_IN_LANES {
        struct Keys16<'k, 'o> {
            flip: u64,
            keys: Keys<'k>,
            out: &'o mut [u64],
        }
        impl Routine for Keys16<'_, '_> {
            type Output = ();
            #[inline(always)]
            fn run<L: Lanes>(self, l: L) {
                match self.keys {
                    Keys::U128(k) => xxh3::key16::hash_u128s(l, self.flip, k, self.out),
                    Keys::Fixed16(k) => xxh3::key16::hash_fixed16(l, self.flip, k, self.out),
                    other => other.hash_scalar(self.flip, self.out),
                }
            }
        }
        return l.outlined_mul64(Keys16 { flip, keys, out });
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = l;
    one_by_one(flip, keys, out)
}

/// XXH3 of byte strings: 4 to 16 bytes in lanes, out of line, where that pays
/// ([`Lanes::BYTES_IN_LANES`]); else one at a time.
#[inline(always)]
fn xxh3_bytes<L: Lanes>(l: L, flip: u64, keys: ByteKeys<'_>, out: &mut [u64]) {
    #[cfg(target_arch = "x86_64")]
    if L::BYTES_IN_LANES {
        struct Bytes<'k, 'o> {
            flip: u64,
            keys: ByteKeys<'k>,
            out: &'o mut [u64],
        }
        impl Routine for Bytes<'_, '_> {
            type Output = ();
            #[inline(always)]
            fn run<L: Lanes>(self, l: L) {
                crate::kernel::hash::xxh3::bytes::hash_keys(l, self.flip, self.keys, self.out)
            }
        }
        return l.outlined_mul64(Bytes { flip, keys, out });
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = l;
    one_by_one(flip, Keys::Bytes(keys), out)
}

/// `H` of keys `start..end` of fixed-width keys other than `u64` ([`Keys::hash_lanes_at`]
/// matches those): narrow integers in lanes ([`words_on`]), 16-byte keys as [`fixed_on`]
/// places them.
#[inline(always)]
fn fixed_at<H: WordHash, L: Lanes>(
    l: L,
    flip: u64,
    keys: FixedWidth<'_>,
    start: usize,
    end: usize,
    out: &mut [u64],
) {
    match keys {
        FixedWidth::Narrow(n) => {
            each_width!(n, k => words_on::<H, L, _>(l, flip, &k[start..end], out))
        }
        other => fixed_on::<H, L>(l, flip, other.slice(start, end), out),
    }
}

/// `H` of integer keys in lanes: inline, or where the tier's 64-bit multiply is best
/// ([`Lanes::with_mul64`]) for a hash that multiplies 64-bit values ([`WordHash::MUL64`]:
/// MM64).
#[inline(always)]
fn words_on<H: WordHash, L: Lanes, W: Word>(l: L, flip: u64, keys: &[W], out: &mut [u64]) {
    if !H::MUL64 {
        return hash_words::<H, L, W>(l, flip, keys, out);
    }
    struct Words<'k, 'o, H, W> {
        flip: u64,
        keys: &'k [W],
        out: &'o mut [u64],
        hash: PhantomData<H>,
    }
    impl<H: WordHash, W: Word> Routine for Words<'_, '_, H, W> {
        type Output = ();
        #[inline(always)]
        fn run<L: Lanes>(self, l: L) {
            hash_words::<H, L, W>(l, self.flip, self.keys, self.out)
        }
    }
    let hash = PhantomData::<H>;
    l.with_mul64(Words {
        flip,
        keys,
        out,
        hash,
    })
}

/// `H` of fixed-width keys (`u64`, `u128`, `[u8; 16]`): 16-byte ones in lanes, out of line
/// (with the tier's 64-bit multiply for [`WordHash::MUL64`]), where the tier splits them in
/// registers ([`Lanes::KEYS16_IN_LANES`]); else 8-byte ones in lanes here and 16-byte ones one
/// at a time.
#[inline(always)]
fn fixed_on<H: WordHash, L: Lanes>(l: L, flip: u64, keys: FixedWidth<'_>, out: &mut [u64]) {
    #[cfg(target_arch = "x86_64")]
    if L::KEYS16_IN_LANES {
        struct Fixed<'k, 'o, H> {
            flip: u64,
            keys: FixedWidth<'k>,
            out: &'o mut [u64],
            hash: PhantomData<H>,
        }
        impl<H: WordHash> Routine for Fixed<'_, '_, H> {
            type Output = ();
            #[inline(always)]
            fn run<L: Lanes>(self, l: L) {
                hash_fixed::<H, L>(l, self.flip, self.keys, self.out)
            }
        }
        let fixed = Fixed {
            flip,
            keys,
            out,
            hash: PhantomData::<H>,
        };
        return if H::MUL64 {
            l.outlined_mul64(fixed)
        } else {
            l.outlined(fixed)
        };
    }
    match keys {
        FixedWidth::U64(w) => words_on::<H, L, u64>(l, flip, w, out),
        other => one_by_one(flip, Keys::Fixed(H::KIND, other), out),
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
        FixedWidth::U128(keys) => hash_keys16::<H, L, _>(l, flip, keys, out),
        FixedWidth::Fixed16(keys) => hash_keys16::<H, L, _>(l, flip, keys, out),
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

/// [`Aesh::hash`] on the tier: on the CPU's AES rounds where it has them
/// ([`Lanes::AES_ROUNDS`]), else the software round; the strings that take an integer hash
/// back in the tier's lanes. Out of line: one copy per tier.
#[inline(never)]
fn aesh<L: Lanes>(l: L, flip: u64, keys: Aesh<'_>, out: &mut [u64]) {
    // Both closures call out-of-line functions of the tier (no intrinsic in a closure).
    keys.hash(
        flip,
        L::AES_ROUNDS,
        out,
        |k, o| match k {
            Keys::Bytes(b) => xxh3_bytes(l, flip, b, o),
            other => other.hash_scalar(flip, o),
        },
        &mut |k, o| match k {
            Keys::Fixed(kind, m) => with_word_hash!(kind, H => fixed_on::<H, L>(l, flip, m, o)),
            other => other.hash_scalar(flip, o),
        },
    )
}

/// XXH64 (seed 0) of each `u64` value, the Parquet split block filter's hash: in lanes, out
/// of line, where the tier's 64-bit multiply is one instruction ([`Lanes::MUL64_NATIVE`]);
/// else the scalar code.
#[inline(always)]
pub(crate) fn xxh64_u64<L: Lanes>(l: L, values: &[u64], out: &mut [u64]) {
    if L::MUL64_NATIVE {
        struct Xxh64<'v, 'o> {
            values: &'v [u64],
            out: &'o mut [u64],
        }
        impl Routine for Xxh64<'_, '_> {
            type Output = ();
            #[inline(always)]
            fn run<L: Lanes>(self, l: L) {
                crate::hashing::xxh64::u64_lanes(l, self.values, self.out)
            }
        }
        return l.outlined_mul64(Xxh64 { values, out });
    }
    for (o, &v) in out.iter_mut().zip(values) {
        *o = crate::hashing::xxh64_u64(v);
    }
}

/// [`Keys::hash_scalar`], out of line: byte strings, and the tiers' fallback for 16-byte keys.
#[inline(never)]
pub(crate) fn one_by_one(flip: u64, keys: Keys<'_>, out: &mut [u64]) {
    keys.hash_scalar(flip, out)
}

/// [`Aesh::hash`] in software, out of line: the scalar reference's, kept out of
/// [`Keys::hash_scalar`] so that its integer loops stay as small as before `KeyHash::Aesh`.
#[inline(never)]
fn aesh_scalar(keys: Aesh<'_>, flip: u64, out: &mut [u64]) {
    keys.hash(
        flip,
        false,
        out,
        |keys, out| keys.hash_scalar(flip, out),
        &mut |keys, out| keys.hash_scalar(flip, out),
    )
}

#[cfg(test)]
mod tests {
    use alloc::vec::Vec;

    use crate::hashing::{KeyHash, seed_flip};
    use crate::isa::Isa;
    use crate::kernel::Kernel;
    use crate::kernel::shapes::{ByteKeys, Keys, Narrow};
    use crate::key::KeyForm;

    /// `KeyHash::Aesh` on every tier this CPU runs (NEON's AESE on aarch64, VAES or AES-NI on
    /// x86-64, software on scalar and portable): every byte source, mixed lengths with 4- and
    /// 8-byte keys among them, chunks of 4- and 8-byte keys alone, and 16-byte keys, equal to
    /// the single-key hash, from several starts.
    #[test]
    fn hash_id_2_batches_equal_single_keys_on_every_tier() {
        let text: Vec<u8> = (0..200u32).map(|i| (i * 37 % 251) as u8).collect();
        let lengths = [0, 1, 3, 4, 5, 8, 9, 15, 16, 17, 31, 32, 33, 100];
        let mixed: Vec<&[u8]> = (0..300)
            .map(|i| {
                let n = lengths[i % lengths.len()];
                &text[i % 50..i % 50 + n]
            })
            .collect();
        let words: Vec<&[u8]> = (0..100).map(|i| &text[i..i + 4 + 4 * (i % 2)]).collect();
        let wide: Vec<u128> = (0..100u128)
            .map(|i| i * 0x0123_4567_89ab_cdef_0f1e)
            .collect();
        let fixed: Vec<[u8; 16]> = wide.iter().map(|w| w.to_le_bytes()).collect();
        for seed in [0, 0xfeed] {
            let flip = seed_flip(seed);
            let single = |k: &[&[u8]]| -> Vec<u64> {
                k.iter()
                    .map(|b| KeyForm::Bytes(b).hash_with(KeyHash::Aesh, seed))
                    .collect()
            };
            for isa in Isa::supported() {
                let kernel = Kernel::get(isa).unwrap();
                for keys in [&mixed, &words] {
                    let want = single(keys);
                    let mut offsets = alloc::vec![0i64];
                    let mut values = Vec::new();
                    for k in keys.iter() {
                        values.extend_from_slice(k);
                        offsets.push(values.len() as i64);
                    }
                    let offsets32: Vec<i32> = offsets.iter().map(|&o| o as i32).collect();
                    let sources = [
                        ByteKeys::Slices(keys),
                        ByteKeys::Offsets32 {
                            offsets: &offsets32,
                            values: &values,
                        },
                        ByteKeys::Offsets64 {
                            offsets: &offsets,
                            values: &values,
                        },
                    ];
                    for source in sources {
                        for start in [0, 3, 8] {
                            let mut out = alloc::vec![0u64; keys.len() - start];
                            let k = Keys::Bytes(source).under(KeyHash::Aesh);
                            kernel.hash_keys(flip, k, start, &mut out);
                            assert_eq!(out, want[start..], "{isa}, from {start}");
                        }
                    }
                }
                let want: Vec<u64> = wide
                    .iter()
                    .map(|&w| KeyForm::U128(w).hash_with(KeyHash::Aesh, seed))
                    .collect();
                let mut out = alloc::vec![0u64; wide.len()];
                kernel.hash_keys(flip, Keys::U128(&wide).under(KeyHash::Aesh), 0, &mut out);
                assert_eq!(out, want, "{isa}, u128");
                kernel.hash_keys(
                    flip,
                    Keys::Fixed16(&fixed).under(KeyHash::Aesh),
                    0,
                    &mut out,
                );
                assert_eq!(out, want, "{isa}, [u8; 16]");
            }
        }
    }

    /// Every hash with an integer hash of its own (`KeyHash::word_hash`) on every tier this CPU
    /// runs: `u64`, `u32` and 16-byte keys in the hash's lanes and byte strings of every length
    /// (4, 8 and 16 bytes by the integer hash, the rest by AESH), equal to the single-key hash,
    /// from several starts and lengths (whole chunks of eight and remainders), in chunks with
    /// and without keys of those widths.
    #[test]
    fn integer_hash_batches_equal_single_keys_on_every_tier() {
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            s = s.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            s ^ s >> 29
        };
        let words: Vec<u64> = (0..203)
            .map(|i| if i % 5 == 0 { i } else { next() })
            .collect();
        let halves: Vec<u32> = words.iter().map(|&w| (w >> 7) as u32).collect();
        let wide: Vec<u128> = words
            .iter()
            .map(|&w| (w as u128) << 64 | next() as u128)
            .collect();
        let fixed: Vec<[u8; 16]> = wide.iter().map(|w| w.to_le_bytes()).collect();
        let text: Vec<u8> = (0..300u32).map(|i| (i * 37 % 251) as u8).collect();
        let lengths = [4, 8, 16, 0, 3, 5, 9, 17, 32];
        let mixed: Vec<&[u8]> = (0..200).map(|i| &text[i..i + lengths[i % 9]]).collect();
        let only_words: Vec<&[u8]> = (0..90).map(|i| &text[i..i + lengths[i % 3]]).collect();
        // One width (gathered into lanes), and one width but for a key past the first 32.
        let all8: Vec<&[u8]> = (0..70).map(|i| &text[i..i + 8]).collect();
        let all16: Vec<&[u8]> = (0..70).map(|i| &text[i..i + 16]).collect();
        let mut late = all16.clone();
        late[40] = &text[..5];
        // No key of 4, 8 or 16 bytes (the AES pass alone), lengths past 63 among them.
        let others = [0, 3, 5, 9, 17, 32, 63, 64, 72, 80];
        let no_words: Vec<&[u8]> = (0..75).map(|i| &text[i..i + others[i % 10]]).collect();
        let hashes = KeyHash::ALL.into_iter().filter(|h| h.word_hash().is_some());
        assert!(hashes.clone().count() >= 2, "MX32-64 and MM64 at least");
        for (hash, seed) in hashes.flat_map(|h| [0, 0xfeed, u64::MAX].map(|s| (h, s))) {
            let flip = seed_flip(seed);
            let one = |k: KeyForm<'_>| k.hash_with(hash, seed);
            for isa in Isa::supported() {
                let kernel = Kernel::get(isa).unwrap();
                for start in [0, 3, 8, 200] {
                    let check = |keys: Keys<'_>, want: Vec<u64>, what: &str| {
                        let mut out = alloc::vec![0u64; want.len() - start];
                        kernel.hash_keys(flip, keys.under(hash), start, &mut out);
                        assert_eq!(out, want[start..], "{hash}, {isa}, {what}, from {start}");
                    };
                    check(
                        Keys::U64(&words),
                        words.iter().map(|&w| one(KeyForm::U64(w))).collect(),
                        "u64",
                    );
                    check(
                        Keys::Narrow(Narrow::U32(&halves)),
                        halves
                            .iter()
                            .map(|&w| one(KeyForm::U64(w as u64)))
                            .collect(),
                        "u32",
                    );
                    let want: Vec<u64> = wide.iter().map(|&w| one(KeyForm::U128(w))).collect();
                    check(Keys::U128(&wide), want.clone(), "u128");
                    check(Keys::Fixed16(&fixed), want, "[u8; 16]");
                    for keys in [&mixed, &only_words, &all8, &all16, &late, &no_words] {
                        if start < keys.len() {
                            let want = keys.iter().map(|b| one(KeyForm::Bytes(b))).collect();
                            check(Keys::Bytes(ByteKeys::Slices(keys)), want, "bytes");
                        }
                    }
                }
            }
            // The integer forms and their bytes are one key.
            for &w in &words {
                assert_eq!(one(KeyForm::U64(w)), one(KeyForm::Bytes(&w.to_le_bytes())));
            }
        }
    }

    /// Integers of every width are their 64-bit value (sign-extended if signed) on every tier
    /// under every hash id: each narrow batch hashes as the `u64` batch of the widened values,
    /// from several starts (whole chunks of eight and remainders).
    #[test]
    fn narrow_integers_hash_as_their_64_bit_value_on_every_tier() {
        let mut s = 0x0123_4567_89ab_cdefu64;
        let mut next = move || {
            s = s.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            s >> 17
        };
        let raw: Vec<u64> = (0..77).map(|_| next()).collect();
        let i8s: Vec<i8> = raw.iter().map(|&r| r as i8).collect();
        let u8s: Vec<u8> = raw.iter().map(|&r| r as u8).collect();
        let i16s: Vec<i16> = raw.iter().map(|&r| r as i16).collect();
        let u16s: Vec<u16> = raw.iter().map(|&r| r as u16).collect();
        let i32s: Vec<i32> = raw.iter().map(|&r| r as i32).collect();
        let u32s: Vec<u32> = raw.iter().map(|&r| r as u32).collect();
        let sources: [(&str, Narrow<'_>, Vec<u64>); 6] = [
            (
                "i8",
                Narrow::I8(&i8s),
                i8s.iter().map(|&v| v as i64 as u64).collect(),
            ),
            (
                "u8",
                Narrow::U8(&u8s),
                u8s.iter().map(|&v| v as u64).collect(),
            ),
            (
                "i16",
                Narrow::I16(&i16s),
                i16s.iter().map(|&v| v as i64 as u64).collect(),
            ),
            (
                "u16",
                Narrow::U16(&u16s),
                u16s.iter().map(|&v| v as u64).collect(),
            ),
            (
                "i32",
                Narrow::I32(&i32s),
                i32s.iter().map(|&v| v as i64 as u64).collect(),
            ),
            (
                "u32",
                Narrow::U32(&u32s),
                u32s.iter().map(|&v| v as u64).collect(),
            ),
        ];
        for hash in [KeyHash::Xxh3, KeyHash::Aesh, KeyHash::Mx32] {
            for seed in [0, 0xfeed] {
                let flip = seed_flip(seed);
                for isa in Isa::supported() {
                    let kernel = Kernel::get(isa).unwrap();
                    for (name, narrow, values) in &sources {
                        let want: Vec<u64> = values
                            .iter()
                            .map(|&v| KeyForm::U64(v).hash_with(hash, seed))
                            .collect();
                        for start in [0, 5, 8, 70] {
                            let mut out = alloc::vec![0u64; values.len() - start];
                            let keys = Keys::Narrow(*narrow).under(hash);
                            kernel.hash_keys(flip, keys, start, &mut out);
                            assert_eq!(out, want[start..], "{isa}, {hash:?}, {name}, from {start}");
                            let mut wide = alloc::vec![0u64; values.len() - start];
                            let keys = Keys::U64(values).under(hash);
                            kernel.hash_keys(flip, keys, start, &mut wide);
                            assert_eq!(out, wide, "{isa}, {hash:?}, {name} against u64");
                        }
                    }
                }
            }
        }
    }
}
