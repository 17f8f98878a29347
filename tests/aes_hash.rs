//! AESH-64's quality, shown: avalanche and bit independence over short and long keys, no
//! 64-bit collisions on low-entropy key sets (decimal numbers, URLs that differ in one byte,
//! keys that differ only in length, IPv6 text), and the false-positive rate of filters of hash
//! id 2 fed those sets through their batch path at 1%, 0.1% and 0.01%, on every tier, within
//! the bounds the `u64` keys meet (`tests/fpr.rs`).

mod common;

use common::{SplitMix64, bound};

use std::collections::HashSet;

use blockbloom::hash::{hash_bytes_aes, hash_bytes_aes_batch};
use blockbloom::{BloomFilter, KeyHash};

fn random_key(state: &mut SplitMix64, len: usize) -> Vec<u8> {
    (0..len).map(|_| state.next_u64() as u8).collect()
}

/// Flipping any one input bit flips each output bit with probability 1/2: over `samples`
/// random keys of each length, every (input bit, output bit) cell's flip rate lies within six
/// standard deviations of 1/2 (a cell of a biased hash lands far outside; the largest of
/// tens of thousands of unbiased cells stays under five).
#[test]
fn every_input_bit_flips_every_output_bit_half_the_time() {
    let samples = 1200;
    let tolerance = 6.0 * (0.25 / samples as f64).sqrt();
    let mut state = SplitMix64::new(1);
    for len in [1, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 24, 32, 33, 48, 100] {
        let mut flips = vec![[0u32; 64]; 8 * len];
        for _ in 0..samples {
            let mut key = random_key(&mut state, len);
            let seed = state.next_u64();
            let h = hash_bytes_aes(&key, seed);
            for bit in 0..8 * len {
                key[bit / 8] ^= 1 << (bit % 8);
                let d = h ^ hash_bytes_aes(&key, seed);
                key[bit / 8] ^= 1 << (bit % 8);
                for (out, count) in flips[bit].iter_mut().enumerate() {
                    *count += ((d >> out) & 1) as u32;
                }
            }
        }
        for (bit, row) in flips.iter().enumerate() {
            for (out, &count) in row.iter().enumerate() {
                let rate = count as f64 / samples as f64;
                assert!(
                    (rate - 0.5).abs() <= tolerance,
                    "length {len}: input bit {bit} flips output bit {out} at rate {rate}"
                );
            }
        }
    }
}

/// Bit independence: for each input bit flipped, any two output bits flip independently, so
/// their flips differ half the time (every pair of the 64 output bits, per input bit).
#[test]
fn output_bits_flip_independently() {
    let samples = 500;
    let tolerance = 6.0 * (0.25 / samples as f64).sqrt();
    let mut state = SplitMix64::new(2);
    for len in [8, 16] {
        for bit in 0..8 * len {
            let mut differ = vec![0u32; 64 * 64];
            for _ in 0..samples {
                let mut key = random_key(&mut state, len);
                let h = hash_bytes_aes(&key, 0);
                key[bit / 8] ^= 1 << (bit % 8);
                let d = h ^ hash_bytes_aes(&key, 0);
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
                        "length {len}, input bit {bit}: output bits {j} and {k} differ at {rate}"
                    );
                }
            }
        }
    }
}

/// The low-entropy key sets: name and keys.
fn key_sets(n: usize) -> Vec<(&'static str, Vec<Vec<u8>>)> {
    let decimal = (0..n).map(|i| i.to_string().into_bytes()).collect();
    let urls = (0..n)
        .map(|i| {
            // One byte differs among keys of one page of 256: the others by the page number.
            let mut u =
                format!("https://example.com/catalog/items/{:08}/view?x=", i / 256).into_bytes();
            u.push((i % 256) as u8);
            u.extend_from_slice(b"&lang=en");
            u
        })
        .collect();
    // Keys that differ only in length: as many as 4096 (their bytes grow as the square).
    let short = n.min(4096);
    let base: Vec<u8> = (0..short).map(|i| (i % 7) as u8 + b'a').collect();
    let lengths = (0..short).map(|i| base[..i].to_vec()).collect();
    let zeros = (0..short).map(|i| vec![0u8; i]).collect();
    let ipv6 = (0..n)
        .map(|i| format!("2001:db8:{:x}::{:x}", i >> 16, i & 0xffff).into_bytes())
        .collect();
    vec![
        ("decimal numbers", decimal),
        ("URLs one byte apart", urls),
        ("prefixes of one string", lengths),
        ("runs of zero bytes", zeros),
        ("IPv6 text", ipv6),
    ]
}

#[test]
fn low_entropy_sets_have_no_64_bit_collisions() {
    for seed in [0, 1, u64::MAX] {
        for (name, keys) in key_sets(20_000) {
            let slices: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
            let mut out = vec![0u64; slices.len()];
            hash_bytes_aes_batch(&slices, seed, &mut out);
            let distinct: HashSet<u64> = out.iter().copied().collect();
            assert_eq!(
                distinct.len(),
                out.len(),
                "{name}, seed {seed}: a collision"
            );
        }
    }
}

/// Filters of hash id 2 ([`KeyHash::Aesh`]: AESH-64, XXH3 for keys of 4 and 8 bytes) fed
/// every other key of each low-entropy set through their own batch path, queried with the keys
/// between, count the false positives their own bits predict and stay at their target, at 1%,
/// 0.1% and 0.01%, on every tier (which must count the same, and agree with the single-key
/// path).
#[test]
fn low_entropy_sets_meet_the_target_rate_on_every_tier() {
    for (name, keys) in key_sets(400_000) {
        let slices: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        let members: Vec<&[u8]> = slices.iter().step_by(2).copied().collect();
        let queries: Vec<&[u8]> = slices.iter().skip(1).step_by(2).copied().collect();
        let n = members.len();
        for target in [1e-2, 1e-3, 1e-4] {
            let mut counts = Vec::new();
            for isa in common::tiers() {
                let mut f = BloomFilter::builder()
                    .capacity(n as u64)
                    .fpr(target)
                    .seed(42)
                    .key_hash(KeyHash::Aesh)
                    .isa(isa)
                    .build()
                    .unwrap();
                f.insert_batch(&members);
                let fp = f.count_batch(&queries) as f64;
                let single = queries.iter().filter(|&&k| f.contains(k)).count();
                assert_eq!(
                    single, fp as usize,
                    "{name} at {target} ({isa}): single keys"
                );
                let q = queries.len() as f64;
                let realized = f.expected_fpr() * q;
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
