//! Byte-string keys of 4 to 16 bytes hashed eight at a time in lanes (the AVX-512 tier's):
//! XXH3's closed forms for 4 to 8 bytes (`rrmxmx` of the first and last four bytes) and 9 to
//! 16 (see [`key16`](crate::hashing::xxh3::key16)), equal bit for bit to `xxh3_64_with_seed`
//! of the bytes.
//!
//! Scalar code reads each of eight keys' first and last words (four bytes each up to 8
//! bytes, eight above) into arrays that the compiler assembles in registers; the lanes do
//! the mixing, which is most of XXH3's work on a short key (two 64-bit multiplies and a dozen
//! shifts and xors, or a 128-bit product). Eight keys of one path take only that path; eight
//! of mixed lengths take both and pick per lane, and a key outside 4..=16 bytes is hashed on
//! its own. A chunk whose first eight keys do not share a path is hashed one key at a time.
//!
//! Eight keys in lanes hash faster than one at a time for keys of 4 to 16 bytes, and eight
//! mixed lengths gain nothing, hence the chunk test. On AVX2 the whole batch did not gain
//! (its 64-bit multiplies are three 32-bit ones), so AVX2 hashes one key at a time. Gathering
//! the words from the slices' pointers (`_mm512_mask_i64gather_*`) instead of scalar loads
//! measured slower (`blockbloom-perf string-lanes`, hashing alone:
//! perf-reports/2026-11-28-string-lanes.md).

use super::bytes_one_by_one;
use crate::hashing::xxh3::key16::{Constants, long};
use crate::hashing::xxh3::lanes::rrmxmx_var;
use crate::hashing::{bytes_with_seed, seed_from_flip};
use crate::kernel::shapes::ByteKeys;
use crate::simd::Lanes;

/// XXH3 of byte-string keys in lanes into `out`, one hash per key (its callers slice both to
/// one length; a longer `out` panics on the key index): the routine the hash plan runs out of
/// line with the tier's features ([`Lanes::BYTES_IN_LANES`]).
#[inline(always)]
pub(crate) fn hash_keys<L: Lanes>(l: L, flip: u64, keys: ByteKeys<'_>, out: &mut [u64]) {
    match keys {
        ByteKeys::Slices(k) => staged(l, flip, keys, out, |i| k[i]),
        ByteKeys::Strs(k) => staged(l, flip, keys, out, |i| k[i].as_bytes()),
        // In bounds: the front-end validated the offsets against `values`.
        ByteKeys::Offsets32 { offsets, values } => staged(l, flip, keys, out, |i| {
            &values[offsets[i] as usize..offsets[i + 1] as usize]
        }),
        ByteKeys::Offsets64 { offsets, values } => staged(l, flip, keys, out, |i| {
            &values[offsets[i] as usize..offsets[i + 1] as usize]
        }),
    }
}

/// Hashes keys `key(0..out.len())` into `out`, eight at a time in lanes.
#[inline(always)]
fn staged<'k, L: Lanes>(
    l: L,
    flip: u64,
    keys: ByteKeys<'_>,
    out: &mut [u64],
    key: impl Fn(usize) -> &'k [u8],
) {
    // The lanes pay where a column's keys take one path; a chunk whose first eight keys do
    // not (longer keys, or lengths all over 4..=16) is hashed as before, out of line. In this
    // loop, 32-byte keys measured slower (XXH3's calls with vector state kept across them),
    // and eight mixed lengths gained nothing (both paths in lanes; measured at 6deece0).
    if out.len() < 8 || one_path(&core::array::from_fn(|j| key(j).len() as u64)).is_none() {
        return bytes_one_by_one(keys, seed_from_flip(flip), out);
    }
    let seed = seed_from_flip(flip);
    let consts = Constants::new(l, seed);
    let flip_v = l.splat(flip);
    let n = out.len();
    let mut oc = out.chunks_exact_mut(8);
    for (g, o) in (&mut oc).enumerate() {
        let at = g * 8;
        let lens: [u64; 8] = core::array::from_fn(|j| key(at + j).len() as u64);
        // One test for the eight, then no branch or bounds check per key, and words the
        // compiler gathers in registers (staged through memory, they measured slower).
        let path = one_path(&lens);
        let other = if path == Some(Path::Short) {
            let x: [u64; 8] = core::array::from_fn(|j| {
                // SAFETY: `key` is a pure lookup, so this is the key whose length `one_path`
                // found in 4..=8.
                unsafe { short_word(key(at + j)) }
            });
            l.storeu(o, short_path(l, l.loadu(&x), l.loadu(&lens), flip_v));
            0
        } else if path == Some(Path::Long) {
            let (mut first, mut last) = ([0u64; 8], [0u64; 8]);
            for j in 0..8 {
                // SAFETY: `key` is a pure lookup, so this is the key whose length `one_path`
                // found in 9..=16.
                (first[j], last[j]) = unsafe { long_words(key(at + j)) };
            }
            let h = long(l, l.loadu(&first), l.loadu(&last), l.loadu(&lens), &consts);
            l.storeu(o, h);
            0
        } else {
            let keys: [&[u8]; 8] = core::array::from_fn(|j| key(at + j));
            mixed(l, &keys, &lens, flip_v, &consts, o)
        };
        let mut rest = other;
        while rest != 0 {
            let j = rest.trailing_zeros() as usize;
            o[j] = bytes_with_seed(key(at + j), seed);
            rest &= rest - 1;
        }
    }
    let done = n - oc.into_remainder().len();
    for (i, o) in out.iter_mut().enumerate().skip(done) {
        *o = bytes_with_seed(key(i), seed);
    }
}

/// Which of XXH3's closed forms in lanes hashes keys of these lengths.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Path {
    /// 4 to 8 bytes.
    Short,
    /// 9 to 16 bytes.
    Long,
}

/// The one path that takes all eight lengths, if there is one.
#[inline(always)]
fn one_path(lens: &[u64; 8]) -> Option<Path> {
    if lens.iter().all(|&n| (4..=8).contains(&n)) {
        Some(Path::Short)
    } else if lens.iter().all(|&n| (9..=16).contains(&n)) {
        Some(Path::Long)
    } else {
        None
    }
}

/// Eight keys of mixed lengths: both lanes paths, each lane's result picked from the one
/// its length takes. Returns a bit per key that neither path takes (outside 4..=16 bytes),
/// left for the caller to hash one at a time.
#[inline(always)]
fn mixed<L: Lanes>(
    l: L,
    keys: &[&[u8]; 8],
    lens: &[u64; 8],
    flip: L::V,
    consts: &Constants<L::V>,
    out: &mut [u64],
) -> u8 {
    let (mut a, mut b, mut pick) = ([0u64; 8], [0u64; 8], [0u64; 8]);
    let mut other = 0u8;
    for (j, k) in keys.iter().enumerate() {
        match k.len() {
            // SAFETY: the arm's pattern is the length `short_word` needs.
            4..=8 => (a[j], pick[j]) = (unsafe { short_word(k) }, u64::MAX),
            // SAFETY: the arm's pattern is the length `long_words` needs.
            9..=16 => (a[j], b[j]) = unsafe { long_words(k) },
            _ => other |= 1 << j,
        }
    }
    if other != u8::MAX {
        let (x, y, len) = (l.loadu(&a), l.loadu(&b), l.loadu(lens));
        let s = short_path(l, x, len, flip);
        let g = long(l, x, y, len, consts);
        let pick = l.loadu(&pick);
        l.storeu(
            out,
            l.or(l.and(s, pick), l.and(g, l.xor(pick, l.splat(u64::MAX)))),
        );
    }
    other
}

/// XXH3's 4-to-8-byte path, given each key's [`short_word`].
#[inline(always)]
fn short_path<L: Lanes>(l: L, x: L::V, len: L::V, flip: L::V) -> L::V {
    rrmxmx_var(l, l.xor(x, flip), len)
}

/// XXH3's 4-to-8-byte input word: the last four bytes of the key plus its first four
/// shifted up (`hashing::bytes_with_seed`'s arm for these lengths, without its bounds checks).
///
/// # Safety
/// `b` has 4 to 8 bytes.
#[inline(always)]
unsafe fn short_word(b: &[u8]) -> u64 {
    let p = b.as_ptr();
    // SAFETY: `b.len() >= 4` (the caller), so `p..p + 4` and `p + len - 4..p + len` are in it.
    unsafe {
        let first = u32::from_le(p.cast::<u32>().read_unaligned()) as u64;
        let last = u32::from_le(p.add(b.len() - 4).cast::<u32>().read_unaligned()) as u64;
        last + (first << 32)
    }
}

/// The first and the last eight bytes of the key, little-endian: the 9-to-16-byte path's
/// inputs.
///
/// # Safety
/// `b` has 9 to 16 bytes.
#[inline(always)]
unsafe fn long_words(b: &[u8]) -> (u64, u64) {
    let p = b.as_ptr();
    // SAFETY: `b.len() >= 8` (the caller), so `p..p + 8` and `p + len - 8..p + len` are in it.
    unsafe {
        (
            u64::from_le(p.cast::<u64>().read_unaligned()),
            u64::from_le(p.add(b.len() - 8).cast::<u64>().read_unaligned()),
        )
    }
}

#[cfg(test)]
pub(super) mod tests {
    use alloc::vec::Vec;

    use crate::hashing::KeyHash;
    use crate::hashing::aes::hash_bytes_aes;
    use crate::hashing::seed_flip;
    use crate::isa::Isa;
    use crate::kernel::shapes::ByteKeys;
    use crate::kernel::{Kernel, Keys};
    use xxhash_rust::xxh3::xxh3_64_with_seed;

    /// SplitMix64.
    pub(in crate::kernel) fn mix(x: &mut u64) -> u64 {
        *x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = *x;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Keys of `lengths` (cycled) over random bytes, `n` of them.
    fn keys(n: usize, lengths: &[usize], state: &mut u64) -> Vec<Vec<u8>> {
        (0..n)
            .map(|i| {
                let len = lengths[i % lengths.len()];
                (0..len).map(|_| mix(state) as u8).collect()
            })
            .collect()
    }

    /// Every source of `keys`, on every tier, from several starts, under both hash ids: XXH3
    /// (`Xxh3`), and AESH-64 but for 4- and 8-byte keys (`Aesh`).
    fn check(keys: &[Vec<u8>], seed: u64, what: &str) {
        let slices: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        let xxh3: Vec<u64> = slices.iter().map(|k| xxh3_64_with_seed(k, seed)).collect();
        let aesh: Vec<u64> = slices
            .iter()
            .map(|&k| match k.len() {
                4 | 8 => xxh3_64_with_seed(k, seed),
                _ => hash_bytes_aes(k, seed),
            })
            .collect();
        let mut offsets = alloc::vec![0i64];
        let mut values = Vec::new();
        for k in keys {
            values.extend_from_slice(k);
            offsets.push(values.len() as i64);
        }
        let offsets32: Vec<i32> = offsets.iter().map(|&o| o as i32).collect();
        // `&str` keys where the bytes are UTF-8 (the ASCII keys of the test below).
        let strs: Option<Vec<&str>> = slices
            .iter()
            .map(|k| core::str::from_utf8(k).ok())
            .collect();
        let mut sources = alloc::vec![
            ("slices", ByteKeys::Slices(&slices)),
            (
                "offsets64",
                ByteKeys::Offsets64 {
                    offsets: &offsets,
                    values: &values,
                },
            ),
            (
                "offsets32",
                ByteKeys::Offsets32 {
                    offsets: &offsets32,
                    values: &values,
                },
            ),
        ];
        if let Some(strs) = &strs {
            sources.push(("strs", ByteKeys::Strs(strs)));
        }
        for isa in Isa::supported() {
            let kernel = Kernel::get(isa).unwrap();
            // From every start, so that stages begin at every offset of a key list.
            for start in [0, 1, 7, 8, 63, 65] {
                if start > keys.len() {
                    continue;
                }
                for &(name, source) in &sources {
                    for (hash, want) in [(KeyHash::Xxh3, &xxh3), (KeyHash::Aesh, &aesh)] {
                        let mut out = alloc::vec![0u64; keys.len() - start];
                        let keys = Keys::Bytes(source).under(hash);
                        kernel.hash_keys(seed_flip(seed), keys, start, &mut out);
                        assert_eq!(
                            out,
                            want[start..],
                            "{isa}, {hash}, {name}, {what}, from {start}"
                        );
                    }
                }
            }
        }
    }

    /// Every key source (slices, `&str`, 32- and 64-bit offsets) through the lanes and around
    /// them: ASCII keys, so that they are also `&str`.
    #[test]
    fn every_source_hashes_as_its_hash_id_on_every_tier() {
        let mut state = 3;
        let ascii = |k: Vec<Vec<u8>>| -> Vec<Vec<u8>> {
            k.into_iter()
                .map(|k| k.into_iter().map(|b| b'a' + b % 26).collect())
                .collect()
        };
        for len in [3, 4, 8, 9, 16, 17, 32] {
            check(&ascii(keys(100, &[len], &mut state)), 5, "ascii");
        }
        let mut k = ascii(keys(8, &[6], &mut state));
        k.extend(ascii(keys(
            200,
            &[4, 16, 9, 8, 3, 17, 5, 12, 0, 100],
            &mut state,
        )));
        check(&k, 5, "ascii, 6 bytes then mixed");
    }

    #[test]
    fn every_length_hashes_as_its_hash_id_on_every_tier() {
        let mut state = 1;
        for seed in [0, 7, u64::MAX - 3] {
            for len in 0..=200 {
                check(
                    &keys(150, &[len], &mut state),
                    seed,
                    &alloc::format!("{len} bytes"),
                );
            }
            // Mixed lengths in one stage: short and long lanes side by side, and keys hashed
            // while staging between them.
            check(
                &keys(1000, &[4, 16, 9, 8, 3, 17, 5, 12], &mut state),
                seed,
                "4-17",
            );
            let all: Vec<usize> = (0..40).collect();
            check(&keys(1000, &all, &mut state), seed, "0-39");
            // A first eight of one path, so that the lanes take the keys, then every kind of
            // group: mixed paths, lengths no path takes, and each path alone.
            for first in [5, 13] {
                let mut k = keys(8, &[first], &mut state);
                k.extend(keys(400, &[4, 16, 9, 8, 3, 17, 5, 12, 0, 100], &mut state));
                k.extend(keys(16, &[7], &mut state));
                k.extend(keys(16, &[11], &mut state));
                k.extend(keys(16, &[40], &mut state));
                check(&k, seed, &alloc::format!("{first} bytes, then mixed"));
            }
            check(&keys(300, &[16, 100, 16, 16], &mut state), seed, "16/100");
        }
    }
}
