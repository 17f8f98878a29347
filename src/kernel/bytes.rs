//! Byte-string and 16-byte keys hashed eight at a time in lanes: XXH3's closed forms for
//! inputs of 4 to 8 bytes and of 9 to 16 bytes (the lengths of IPv4/IPv6 addresses, UUIDs,
//! flow keys, short codes and names), equal bit for bit to `xxh3_64_with_seed`.
//!
//! Keys go [`STAGE`] at a time through a [`Stage`]: a scalar pass ([`Stage::fill`]) copies
//! each key's first and last words and its length into small arrays and hashes keys of other
//! lengths on the spot; the lanes then hash eight staged keys at a time, with the formula
//! their lengths need (both, and a blend, for a group that mixes the two). The scalar pass
//! is a function of its own, compiled without the tier's features: inside an AVX-512
//! function LLVM turned its loads into gathers and its copies into chains of masked
//! broadcasts, which measured twice as slow as plain loads and stores. `u128` keys are
//! loaded straight into lanes.

use super::keys::ByteKeys;
use super::{Keys, Lanes};
use crate::hashing::{
    PRIME_AVALANCHE, PRIME_MX2, bytes_with_seed, len9to16_keys, seed_flip, seed_from_flip,
    u128_with_seed,
};

/// XXH3 of byte-string and 16-byte keys (`Keys::Bytes`, `U128`, `Fixed16`) in lanes,
/// `out.len() == keys.len()`: the routine a tier's [`Lanes::hash_staged`] compiles once, out
/// of line, with its features, where it beats hashing one key at a time.
#[inline(always)]
pub(crate) fn hash_keys<L: Lanes>(l: L, flip: u64, keys: Keys<'_>, out: &mut [u64]) {
    assert_eq!(
        out.len(),
        keys.len(),
        "output slice length must equal key count"
    );
    let seed = seed_from_flip(flip);
    match keys {
        Keys::U128(k) => hash_u128(l, seed, k, out),
        Keys::Fixed16(k) => staged(l, seed, |i| &k[i][..], out),
        Keys::Bytes(ByteKeys::Slices(k)) => staged(l, seed, |i| k[i], out),
        Keys::Bytes(ByteKeys::Strs(k)) => staged(l, seed, |i| k[i].as_bytes(), out),
        Keys::Bytes(ByteKeys::Offsets32 { offsets, values }) => staged(
            l,
            seed,
            |i| &values[offsets[i] as usize..offsets[i + 1] as usize],
            out,
        ),
        Keys::Bytes(ByteKeys::Offsets64 { offsets, values }) => staged(
            l,
            seed,
            |i| &values[offsets[i] as usize..offsets[i + 1] as usize],
            out,
        ),
        // Hashed in lanes by their own routines; here for completeness.
        Keys::U64(_) | Keys::U32(_) | Keys::Hashes(_) => keys.hash_scalar(flip, out),
    }
}

/// Keys staged per pass: a pipeline chunk in cache.
const STAGE: usize = 64;

/// What lengths a group of eight staged keys has, as bits.
const SHORT: u8 = 1;
const LONG: u8 = 2;
const OTHER: u8 = 4;

/// Up to [`STAGE`] keys prepared for the lanes. Key `j` of 4 to 8 bytes stages its first and
/// last four bytes as `first[j]` and `last[j]` (little-endian); of 9 to 16 bytes, its first
/// and last eight. `lengths[g]` says which of these group `g` (keys `8g..8g + 8`) holds, and
/// whether it holds keys of other lengths, which [`fill`](Stage::fill) has hashed already.
struct Stage {
    first: [u64; STAGE],
    last: [u64; STAGE],
    len: [u64; STAGE],
    lengths: [u8; STAGE / 8],
}

impl Stage {
    /// Stages keys `key(start)..key(start + out.len())`, `out.len() <= STAGE`, and hashes
    /// those of other lengths into `out`. Not inlined, so that it compiles without the
    /// tier's features (see the module docs).
    #[inline(never)]
    fn fill<'k>(
        &mut self,
        key: &impl Fn(usize) -> &'k [u8],
        start: usize,
        seed: u64,
        out: &mut [u64],
    ) {
        let n = out.len().min(STAGE);
        let mut at = 0;
        while at + 8 <= n {
            self.lengths[at / 8] = self.group(key, start + at, at, seed, &mut out[at..at + 8]);
            at += 8;
        }
        if at < n {
            self.lengths[at / 8] = self.mixed(key, start + at, at, seed, &mut out[at..n]);
        }
    }

    /// Stages a group of eight keys from `key(i)` at `at`.
    #[inline(always)]
    fn group<'k>(
        &mut self,
        key: &impl Fn(usize) -> &'k [u8],
        i: usize,
        at: usize,
        seed: u64,
        out: &mut [u64],
    ) -> u8 {
        // The lengths first: a group of one length class then loads without a branch per
        // key (a branch per key measured a third slower on a column of one length).
        let (mut long, mut short) = (true, true);
        for j in 0..8 {
            let n = key(i + j).len();
            long &= n.wrapping_sub(9) < 8;
            short &= n.wrapping_sub(4) < 5;
        }
        if long {
            for j in 0..8 {
                let k = key(i + j);
                self.len[at + j] = k.len() as u64;
                self.first[at + j] = le64(k, 0);
                self.last[at + j] = le64(k, k.len() - 8);
            }
            LONG
        } else if short {
            for j in 0..8 {
                let k = key(i + j);
                self.len[at + j] = k.len() as u64;
                self.first[at + j] = le32(k, 0);
                self.last[at + j] = le32(k, k.len() - 4);
            }
            SHORT
        } else {
            self.mixed(key, i, at, seed, out)
        }
    }

    /// Stages `out.len()` keys of any lengths from `key(i)` at `at`, hashing those of other
    /// lengths into `out`.
    #[inline(always)]
    fn mixed<'k>(
        &mut self,
        key: &impl Fn(usize) -> &'k [u8],
        i: usize,
        at: usize,
        seed: u64,
        out: &mut [u64],
    ) -> u8 {
        let mut lengths = 0;
        for (j, o) in out.iter_mut().enumerate() {
            let k = key(i + j);
            let n = k.len();
            self.len[at + j] = n as u64;
            lengths |= if (9..=16).contains(&n) {
                (self.first[at + j], self.last[at + j]) = (le64(k, 0), le64(k, n - 8));
                LONG
            } else if (4..=8).contains(&n) {
                (self.first[at + j], self.last[at + j]) = (le32(k, 0), le32(k, n - 4));
                SHORT
            } else {
                *o = bytes_with_seed(k, seed);
                OTHER
            };
        }
        lengths
    }
}

/// Hashes keys `key(0)..key(out.len())` into `out`, a stage at a time. `key` only computes an
/// index into the caller's slices.
#[inline(always)]
fn staged<'k, L: Lanes>(l: L, seed: u64, key: impl Fn(usize) -> &'k [u8], out: &mut [u64]) {
    let k = Constants::new(l, seed);
    let mut stage = Stage {
        first: [0; STAGE],
        last: [0; STAGE],
        len: [0; STAGE],
        lengths: [0; STAGE / 8],
    };
    for (s, out) in out.chunks_mut(STAGE).enumerate() {
        stage.fill(&key, s * STAGE, seed, out);
        for (g, out) in out.chunks_mut(8).enumerate() {
            let lengths = stage.lengths[g];
            if lengths & (SHORT | LONG) == 0 {
                continue;
            }
            let at = g * 8;
            // A partial last group reads stale lanes of the stage, whose hashes are dropped.
            let first = l.loadu(&stage.first[at..]);
            let last = l.loadu(&stage.last[at..]);
            let len = l.loadu(&stage.len[at..]);
            let h = match lengths & (SHORT | LONG) {
                LONG => long(l, first, last, len, &k),
                SHORT => short(l, first, last, len, &k),
                _ => {
                    // Keep `long` where the length is 9 to 16: (len + 7) >> 4 is 1 there and
                    // 0 for 4 to 8 (other lengths are not kept), and its negation is all ones.
                    let is_long = l.shr::<4>(l.add(len, l.splat(7)));
                    let mask = l.add(l.xor(is_long, l.splat(u64::MAX)), l.splat(1));
                    let s = short(l, first, last, len, &k);
                    l.xor(s, l.and(l.xor(s, long(l, first, last, len, &k)), mask))
                }
            };
            if lengths & OTHER == 0 && out.len() == 8 {
                l.storeu(out, h);
            } else {
                let mut lanes = [0u64; 8];
                l.storeu(&mut lanes, h);
                for ((o, h), n) in out.iter_mut().zip(lanes).zip(&stage.len[at..]) {
                    if (4..=16).contains(n) {
                        *o = h;
                    }
                }
            }
        }
    }
}

#[inline(always)]
fn le64(key: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(key[at..at + 8].try_into().expect("8 bytes"))
}

#[inline(always)]
fn le32(key: &[u8], at: usize) -> u64 {
    u32::from_le_bytes(key[at..at + 4].try_into().expect("4 bytes")) as u64
}

/// The seed's constants, in lanes.
struct Constants<V> {
    /// What the 9-to-16-byte path xors into the first and the last eight bytes.
    first: V,
    last: V,
    /// What the 4-to-8-byte path xors into its word.
    flip: V,
}

impl<V> Constants<V> {
    #[inline(always)]
    fn new<L: Lanes<V = V>>(l: L, seed: u64) -> Constants<V> {
        let (first, last) = len9to16_keys(seed);
        Constants {
            first: l.splat(first),
            last: l.splat(last),
            flip: l.splat(seed_flip(seed)),
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
fn long<L: Lanes>(l: L, first: L::V, last: L::V, len: L::V, k: &Constants<L::V>) -> L::V {
    let lo = l.xor(first, k.first);
    let hi = l.xor(last, k.last);
    let fold = l.mul_fold64(lo, hi);
    let acc = l.add(l.add(len, l.bswap64(lo)), l.add(hi, fold));
    avalanche(l, acc)
}

/// XXH3's 4-to-8-byte path: `first`/`last` are the key's first and last four bytes.
#[inline(always)]
fn short<L: Lanes>(l: L, first: L::V, last: L::V, len: L::V, k: &Constants<L::V>) -> L::V {
    let x = l.xor(l.add(last, l.shl::<32>(first)), k.flip);
    rrmxmx(l, x, len)
}

/// XXH3's `rrmxmx` with a length per lane.
#[inline(always)]
fn rrmxmx<L: Lanes>(l: L, h: L::V, len: L::V) -> L::V {
    let mx2 = l.splat(PRIME_MX2);
    let h = l.xor(h, l.xor(l.rotl::<49, 15>(h), l.rotl::<24, 40>(h)));
    let h = l.mul64(h, mx2);
    let h = l.xor(h, l.add(l.shr::<35>(h), len));
    let h = l.mul64(h, mx2);
    l.xor(h, l.shr::<28>(h))
}

/// XXH3's avalanche.
#[inline(always)]
fn avalanche<L: Lanes>(l: L, h: L::V) -> L::V {
    let h = l.xor(h, l.shr::<37>(h));
    let h = l.mul64(h, l.splat(PRIME_AVALANCHE));
    l.xor(h, l.shr::<32>(h))
}

#[cfg(test)]
mod tests {
    use alloc::vec::Vec;

    use super::super::{Kernel, Keys};
    use crate::hashing::seed_flip;
    use crate::isa::Isa;
    use crate::kernel::keys::ByteKeys;
    use xxhash_rust::xxh3::xxh3_64_with_seed;

    /// SplitMix64.
    fn mix(x: &mut u64) -> u64 {
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

    fn check(keys: &[Vec<u8>], seed: u64, what: &str) {
        let slices: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        let want: Vec<u64> = slices.iter().map(|k| xxh3_64_with_seed(k, seed)).collect();
        let mut offsets = alloc::vec![0i64];
        let mut values = Vec::new();
        for k in keys {
            values.extend_from_slice(k);
            offsets.push(values.len() as i64);
        }
        for isa in Isa::supported() {
            let kernel = Kernel::get(isa).unwrap();
            // From every start, so that stages begin at every offset of a key list.
            for start in [0, 1, 7, 8, 63, 65] {
                if start > keys.len() {
                    continue;
                }
                let mut out = alloc::vec![0u64; keys.len() - start];
                kernel.hash_keys(
                    seed_flip(seed),
                    Keys::Bytes(ByteKeys::Slices(&slices)),
                    start,
                    &mut out,
                );
                assert_eq!(out, want[start..], "{isa}, slices, {what}, from {start}");
                out.fill(0);
                let col = ByteKeys::Offsets64 {
                    offsets: &offsets,
                    values: &values,
                };
                kernel.hash_keys(seed_flip(seed), Keys::Bytes(col), start, &mut out);
                assert_eq!(out, want[start..], "{isa}, offsets, {what}, from {start}");
            }
        }
    }

    #[test]
    fn every_length_hashes_as_xxh3_on_every_tier() {
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
            check(&keys(300, &[16, 100, 16, 16], &mut state), seed, "16/100");
        }
    }

    #[test]
    fn sixteen_byte_keys_hash_as_their_bytes_on_every_tier() {
        let mut state = 5;
        let wide: Vec<u128> = (0..777)
            .map(|_| (mix(&mut state) as u128) << 64 | mix(&mut state) as u128)
            .collect();
        let fixed: Vec<[u8; 16]> = wide.iter().map(|k| k.to_le_bytes()).collect();
        for seed in [0, 99] {
            let want: Vec<u64> = fixed.iter().map(|k| xxh3_64_with_seed(k, seed)).collect();
            for isa in Isa::supported() {
                let kernel = Kernel::get(isa).unwrap();
                let mut out = alloc::vec![0u64; wide.len()];
                kernel.hash_keys(seed_flip(seed), Keys::U128(&wide), 0, &mut out);
                assert_eq!(out, want, "{isa}: u128");
                kernel.hash_keys(seed_flip(seed), Keys::Fixed16(&fixed), 0, &mut out);
                assert_eq!(out, want, "{isa}: [u8; 16]");
            }
        }
    }
}
