//! The integer hashes' quality, shown: MX32-64 (hash id 3) and MM64 (hash id 4), each the
//! hash of keys of 4, 8 and 16 bytes under its id. Avalanche and bit independence of `u64`,
//! `u32` and 16-byte keys within the noise of their samples, no 64-bit collisions on
//! sequential, strided and sparse key sets, and the false-positive rate of filters of each id
//! fed those sets through their batch path at 1%, 0.1% and 0.01%, on every tier, within the
//! bounds the other hashes meet (`tests/fpr.rs`, `tests/aes_hash.rs`).

mod common;

use common::{SplitMix64, bound};

use std::collections::HashSet;

use blockbloom::hash::{
    hash_u32_moremur, hash_u32_mx32, hash_u64_moremur, hash_u64_mx32, hash_u128_moremur,
    hash_u128_mx32,
};
use blockbloom::{BloomFilter, KeyHash};

/// A width's hash of a 128-bit input (its low bits) and a seed.
type Hash = fn(u128, u64) -> u64;

/// A width of a hash: name, input bits, hash.
type Width = (&'static str, u32, Hash);

/// The hash ids with an integer hash of their own, and its three widths.
fn hashes() -> [(KeyHash, [Width; 3]); 2] {
    [
        (
            KeyHash::Mx32,
            [
                ("u32", 32, |k, s| hash_u32_mx32(k as u32, s)),
                ("u64", 64, |k, s| hash_u64_mx32(k as u64, s)),
                ("16 bytes", 128, hash_u128_mx32),
            ],
        ),
        (
            KeyHash::Moremur,
            [
                ("u32", 32, |k, s| hash_u32_moremur(k as u32, s)),
                ("u64", 64, |k, s| hash_u64_moremur(k as u64, s)),
                ("16 bytes", 128, hash_u128_moremur),
            ],
        ),
    ]
}

/// Every width of every integer hash: the hash's name and width's, input bits, hash.
fn widths() -> Vec<(String, u32, Hash)> {
    hashes()
        .into_iter()
        .flat_map(|(h, w)| w.map(|(name, bits, f)| (format!("{h} {name}"), bits, f)))
        .collect()
}

fn random_input(state: &mut SplitMix64, bits: u32) -> u128 {
    let k = state.next_u64() as u128 | (state.next_u64() as u128) << 64;
    if bits == 128 {
        k
    } else {
        k & ((1 << bits) - 1)
    }
}

/// Flipping any one input bit flips each output bit with probability 1/2: over `samples`
/// random keys and seeds, every (input bit, output bit) cell's flip rate lies within six
/// standard deviations of 1/2 (a cell of a biased hash lands far outside; the largest of
/// thousands of unbiased cells stays under five). Over sequential keys (the low-entropy case,
/// not independent samples: XXH3's largest cell reaches six deviations there too, without a
/// bias, as the deviation does not grow with the sample) within eight.
#[test]
fn every_input_bit_flips_every_output_bit_half_the_time() {
    let mut state = SplitMix64::new(1);
    for (name, bits, hash) in widths() {
        for (sequential, samples, sigmas) in [(false, 4000, 6.0), (true, 16_000, 8.0)] {
            let tolerance = sigmas * (0.25 / samples as f64).sqrt();
            let mut flips = vec![[0u32; 64]; bits as usize];
            for i in 0..samples {
                let (key, seed) = if sequential {
                    (i as u128, 0)
                } else {
                    (random_input(&mut state, bits), state.next_u64())
                };
                let h = hash(key, seed);
                for (bit, row) in flips.iter_mut().enumerate() {
                    let d = h ^ hash(key ^ 1 << bit, seed);
                    for (out, count) in row.iter_mut().enumerate() {
                        *count += ((d >> out) & 1) as u32;
                    }
                }
            }
            for (bit, row) in flips.iter().enumerate() {
                for (out, &count) in row.iter().enumerate() {
                    let rate = count as f64 / samples as f64;
                    assert!(
                        (rate - 0.5).abs() <= tolerance,
                        "{name} (sequential: {sequential}): input bit {bit} flips output bit \
                         {out} at rate {rate}"
                    );
                }
            }
        }
    }
}

/// Bit independence: for each input bit flipped, any two output bits flip independently, so
/// their flips differ half the time (every pair of the 64 output bits, per input bit).
#[test]
fn output_bits_flip_independently() {
    let samples = 600;
    let tolerance = 6.0 * (0.25 / samples as f64).sqrt();
    let mut state = SplitMix64::new(2);
    for (name, bits, hash) in widths() {
        for bit in 0..bits {
            let mut differ = vec![0u32; 64 * 64];
            for _ in 0..samples {
                let key = random_input(&mut state, bits);
                let d = hash(key, 0) ^ hash(key ^ 1 << bit, 0);
                for j in 0..64 {
                    let dj = (d >> j) & 1;
                    for k in j + 1..64 {
                        differ[64 * j + k] += (dj ^ ((d >> k) & 1)) as u32;
                    }
                }
            }
            for j in 0..64 {
                for k in j + 1..64 {
                    let rate = differ[64 * j + k] as f64 / samples as f64;
                    assert!(
                        (rate - 0.5).abs() <= tolerance,
                        "{name}, input bit {bit}: output bits {j} and {k} differ at {rate}"
                    );
                }
            }
        }
    }
}

/// The low-entropy key sets, `n` keys each where they have as many.
#[derive(Clone)]
enum Set {
    U64(&'static str, Vec<u64>),
    U32(&'static str, Vec<u32>),
    U128(&'static str, Vec<u128>),
}

fn key_sets(n: usize) -> Vec<Set> {
    let n64 = n as u64;
    let mut sets = vec![
        Set::U64("u64 0..n", (0..n64).collect()),
        Set::U32("u32 0..n", (0..n as u32).collect()),
        // IPv4 addresses of one /16 (10.1.0.0/16): 65,536 keys, the low 16 bits varying.
        Set::U32(
            "IPv4 addresses of one /16",
            (0..1 << 16).map(|i| 0x0a01_0000 | i).collect(),
        ),
        // IPv6 addresses of one /64, the interface id counting up.
        Set::U128(
            "IPv6 addresses of one /64",
            (0..n as u128)
                .map(|i| 0x2001_0db8_0000_0001 << 64 | i)
                .collect(),
        ),
    ];
    for k in [8, 16, 32, 44] {
        let name = match k {
            8 => "u64 multiples of 2^8",
            16 => "u64 multiples of 2^16",
            32 => "u64 multiples of 2^32",
            _ => "u64 multiples of 2^44",
        };
        sets.push(Set::U64(name, (0..n64).map(|i| i << k).collect()));
    }
    // Sparse: two random bytes (bytes 0 and 4), the rest zero: at most 65,536 keys.
    let mut state = SplitMix64::new(3);
    sets.push(Set::U64(
        "u64 of two random bytes, the rest zero",
        (0..n)
            .map(|_| state.next_u64() & 0x0000_00ff_0000_00ff)
            .collect::<HashSet<_>>()
            .into_iter()
            .collect(),
    ));
    sets
}

#[test]
fn low_entropy_sets_have_no_64_bit_collisions() {
    for (hash, [(_, _, h32), (_, _, h64), (_, _, h128)]) in hashes() {
        for seed in [0, 1, u64::MAX] {
            for set in key_sets(100_000) {
                let (name, hashes): (_, Vec<u64>) = match &set {
                    Set::U64(name, k) => (name, k.iter().map(|&k| h64(k.into(), seed)).collect()),
                    Set::U32(name, k) => (name, k.iter().map(|&k| h32(k.into(), seed)).collect()),
                    Set::U128(name, k) => (name, k.iter().map(|&k| h128(k, seed)).collect()),
                };
                let distinct: HashSet<u64> = hashes.iter().copied().collect();
                assert_eq!(
                    distinct.len(),
                    hashes.len(),
                    "{hash} {name}, seed {seed}: a collision"
                );
            }
        }
    }
}

/// Filters of hash ids 3 and 4 fed every other key of each low-entropy set through their own batch
/// path, queried with the keys between, count the false positives their own bits predict and
/// stay at their target, at 1%, 0.1% and 0.01%, on every tier (which must count the same and
/// agree with the single-key path).
#[test]
fn low_entropy_sets_meet_the_target_rate_on_every_tier() {
    fn halves<T: Copy>(keys: &[T]) -> (Vec<T>, Vec<T>) {
        let members = keys.iter().step_by(2).copied().collect();
        let queries = keys.iter().skip(1).step_by(2).copied().collect();
        (members, queries)
    }
    for (set, hash) in key_sets(200_000)
        .into_iter()
        .flat_map(|set| [(set.clone(), KeyHash::Mx32), (set, KeyHash::Moremur)])
    {
        for target in [1e-2, 1e-3, 1e-4] {
            let mut counts = Vec::new();
            let name = match &set {
                Set::U64(name, _) | Set::U32(name, _) | Set::U128(name, _) => *name,
            };
            for isa in common::tiers() {
                let build = |n: usize| {
                    BloomFilter::builder()
                        .capacity(n as u64)
                        .fpr(target)
                        .seed(42)
                        .key_hash(hash)
                        .isa(isa)
                        .build()
                        .unwrap()
                };
                // (false positives, single-key false positives, queries, the filter's own
                // expected rate)
                let (fp, single, q, expected) = match &set {
                    Set::U64(_, keys) => {
                        let (m, q) = halves(keys);
                        let mut f = build(m.len());
                        f.insert_batch(&m);
                        let single = q.iter().filter(|&&k| f.contains(&k)).count();
                        (f.count_batch(&q), single, q.len(), f.expected_fpr())
                    }
                    Set::U32(_, keys) => {
                        let (m, q) = halves(keys);
                        let mut f = build(m.len());
                        f.insert_batch(&m);
                        let single = q.iter().filter(|&&k| f.contains(&k)).count();
                        (f.count_batch(&q), single, q.len(), f.expected_fpr())
                    }
                    Set::U128(_, keys) => {
                        let (m, q) = halves(keys);
                        let mut f = build(m.len());
                        f.insert_batch(&m);
                        let single = q.iter().filter(|&&k| f.contains(&k)).count();
                        (f.count_batch(&q), single, q.len(), f.expected_fpr())
                    }
                };
                let name = format!("{hash}, {name}");
                assert_eq!(single, fp, "{name} at {target} ({isa}): single keys");
                let (fp, q) = (fp as f64, q as f64);
                let realized = expected * q;
                assert!(
                    (fp - realized).abs() <= bound(realized),
                    "{name} at {target} ({isa}): {fp} false positives, the bits predict {realized}"
                );
                let at_target = target * q;
                assert!(
                    fp <= at_target + bound(at_target),
                    "{name} at {target} ({isa}): {fp} false positives, > {at_target}"
                );
                counts.push(fp as usize);
            }
            assert!(
                counts.windows(2).all(|w| w[0] == w[1]),
                "{name}: {counts:?}"
            );
        }
    }
}

/// A keyed filter of hash id 3 or 4 (a secret random seed) takes integer keys by batch and one by
/// one, persists, and answers after loading; two keyed filters hash the same key apart.
#[cfg(feature = "std")]
#[test]
fn keyed_filters_of_hash_ids_3_and_4_work() {
    for hash in [KeyHash::Mx32, KeyHash::Moremur] {
        keyed_filter_works(hash);
    }
}

#[cfg(feature = "std")]
fn keyed_filter_works(hash: KeyHash) {
    let keys: Vec<u64> = (0..20_000).collect();
    let mut f = BloomFilter::builder()
        .capacity(40_000)
        .fpr(0.01)
        .keyed()
        .key_hash(hash)
        .build()
        .unwrap();
    f.insert_batch(&keys);
    f.insert(&u64::MAX);
    f.insert(&0xfeed_u128);
    let g = BloomFilter::from_bytes(&f.to_bytes()).unwrap();
    assert_eq!(g.key_hash(), hash);
    assert_eq!(g.count_batch(&keys), keys.len());
    assert!(g.contains(&u64::MAX) && g.contains(&0xfeed_u128));
    let other = BloomFilter::builder()
        .capacity(40_000)
        .keyed()
        .key_hash(hash)
        .build()
        .unwrap();
    assert_ne!(f.hash(&7u64), other.hash(&7u64));
}

/// Both parallel builds of a filter of hash id 3 or 4 hash its `u64` keys with MX32-64 or
/// MM64, as its batch does: the same bits.
#[cfg(feature = "parallel")]
#[test]
fn parallel_builds_hash_as_the_batch_does() {
    use blockbloom::ParallelBuild;
    let keys: Vec<u64> = (0..60_000u64)
        .map(|i| i.wrapping_mul(0x9e37_79b9))
        .collect();
    for hash in [KeyHash::Mx32, KeyHash::Moremur] {
        let build = || {
            BloomFilter::builder()
                .capacity(60_000)
                .fpr(0.01)
                .key_hash(hash)
                .build()
                .unwrap()
        };
        let mut batch = build();
        batch.insert_batch(&keys);
        for how in [ParallelBuild::SharedAtomic, ParallelBuild::Partitioned] {
            let mut f = build();
            f.par_insert_batch_with(&keys, how);
            assert!(f == batch, "{hash}, {how:?}");
        }
    }
}
