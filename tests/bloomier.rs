//! The Bloomier filter against a `HashMap` oracle: every key's value at every width and many
//! sizes, the measured absent-detection rate against `1 - 2^-fingerprint_bits`, duplicate and
//! bad-value handling, round trips, the golden file and every decoding error.

mod common;

use std::collections::HashMap;

use blockbloom::{BloomierFilter, Error};
use common::keys_xor_indexed;
use quickcheck::{QuickCheck, TestResult};

fn mask(bits: u32) -> u64 {
    if bits == 64 {
        u64::MAX
    } else {
        (1 << bits) - 1
    }
}

/// Builds from the oracle's pairs (in a scrambled order with repeats) and checks every key.
fn agrees(oracle: &HashMap<u64, u64>, vb: u32, fb: u32, seed: u64) -> Result<(), String> {
    let mut pairs: Vec<(u64, u64)> = oracle.iter().map(|(&k, &v)| (k, v)).collect();
    // Repeated pairs are one entry.
    let repeats: Vec<(u64, u64)> = pairs.iter().step_by(3).copied().collect();
    pairs.extend(repeats);
    let f = BloomierFilter::builder(vb, fb)
        .seed(seed)
        .build(&pairs)
        .map_err(|e| e.to_string())?;
    if f.len() != oracle.len() as u64 {
        return Err(format!("len {} != {}", f.len(), oracle.len()));
    }
    for (&k, &v) in oracle {
        if f.get(&k) != Some(v) {
            return Err(format!("key {k}: {:?} != {v}", f.get(&k)));
        }
    }
    let ks: Vec<u64> = oracle.keys().copied().collect();
    let mut out = vec![None; ks.len()];
    f.get_batch(&ks, &mut out);
    for (k, o) in ks.iter().zip(&out) {
        if *o != Some(oracle[k]) {
            return Err(format!("batch key {k}: {o:?} != {}", oracle[k]));
        }
    }
    Ok(())
}

#[test]
fn quickcheck_against_a_hashmap() {
    fn prop(raw: Vec<(u64, u64)>, vb: u8, fb: u8, seed: u64) -> TestResult {
        let (vb, fb) = (1 + vb as u32 % 32, fb as u32 % 17);
        let oracle: HashMap<u64, u64> = raw.into_iter().map(|(k, v)| (k, v & mask(vb))).collect();
        match agrees(&oracle, vb, fb, seed) {
            Ok(()) => TestResult::passed(),
            Err(e) => TestResult::error(e),
        }
    }
    QuickCheck::new()
        .tests(300)
        .quickcheck(prop as fn(Vec<(u64, u64)>, u8, u8, u64) -> TestResult);
}

#[test]
fn every_size_and_width() {
    let sizes = [
        0usize, 1, 2, 3, 4, 5, 7, 8, 13, 31, 64, 100, 257, 1000, 4099, 30_000,
    ];
    for (i, &n) in sizes.iter().enumerate() {
        for vb in [1u32, 2, 7, 8, 13, 32, 33, 48, 64] {
            for fb in [0u32, 1, 5, 8, 16, 31] {
                if vb + fb > 64 {
                    continue;
                }
                let oracle: HashMap<u64, u64> = keys_xor_indexed(i as u64, n)
                    .into_iter()
                    .map(|k| (k, k.rotate_left(vb) & mask(vb)))
                    .collect();
                agrees(&oracle, vb, fb, vb as u64 * 100 + fb as u64)
                    .unwrap_or_else(|e| panic!("n {n} vb {vb} fb {fb}: {e}"));
            }
        }
    }
}

#[test]
fn string_bytes_and_batch_builds_answer_the_same() {
    let ks = keys_xor_indexed(9, 5000);
    let values: Vec<u64> = ks.iter().map(|k| k % 1000).collect();
    let pairs: Vec<(u64, u64)> = ks.iter().copied().zip(values.iter().copied()).collect();
    let a = BloomierFilter::builder(10, 8).build(&pairs).unwrap();
    let b = BloomierFilter::builder(10, 8)
        .build_batch(&ks, &values)
        .unwrap();
    assert_eq!(a, b, "batch hashing must equal scalar hashing");

    let small: Vec<u32> = (0..3000).collect();
    let small_values: Vec<u64> = small.iter().map(|&k| k as u64 % 3).collect();
    let c = BloomierFilter::builder(2, 4)
        .build_batch(&small, &small_values)
        .unwrap();
    let mut out = vec![None; small.len()];
    c.get_batch(&small, &mut out);
    assert!(out.iter().zip(&small_values).all(|(o, v)| *o == Some(*v)));

    let names: Vec<(String, u64)> = (0..2000).map(|i| (format!("flow-{i}"), i % 5)).collect();
    let s = BloomierFilter::build(&names, 3, 12).unwrap();
    for (k, v) in &names {
        assert_eq!(s.get(k.as_str()), Some(*v));
        assert_eq!(s.get_hash(s.hash(k.as_str())), Some(*v));
    }
    let raw: Vec<(&[u8], u64)> = names.iter().map(|(k, v)| (k.as_bytes(), *v)).collect();
    let r = BloomierFilter::builder(3, 12).build_bytes(&raw).unwrap();
    for (k, v) in &raw {
        assert_eq!(r.get_bytes(k), Some(*v));
    }
    let hashes: Vec<u64> = names.iter().map(|(k, _)| s.hash(k.as_str())).collect();
    let mut out = vec![None; hashes.len()];
    s.get_hash_batch(&hashes, &mut out);
    assert!(out.iter().zip(&names).all(|(o, (_, v))| *o == Some(*v)));
}

#[test]
fn absent_keys_are_detected_at_the_fingerprint_rate() {
    let members = keys_xor_indexed(1, 20_000);
    let values: Vec<u64> = members.iter().map(|k| k & 0xf).collect();
    let others = keys_xor_indexed(2, 400_000);
    for fb in [1u32, 4, 8, 12] {
        let f = BloomierFilter::builder(4, fb)
            .build_batch(&members, &values)
            .unwrap();
        let mut out = vec![None; others.len()];
        f.get_batch(&others, &mut out);
        let wrong = out.iter().filter(|o| o.is_some()).count() as f64;
        let n = others.len() as f64;
        let p = f.false_positive_rate();
        assert_eq!(p, (-(fb as f64)).exp2());
        // Binomial(n, p): within 6 standard deviations (plus one for p n near zero).
        let sd = (n * p * (1.0 - p)).sqrt();
        assert!(
            (wrong - n * p).abs() <= 6.0 * sd + 1.0,
            "fb {fb}: {wrong} values for {n} non-keys, expected {}",
            n * p
        );
    }
    // Without fingerprint every key gets some value.
    let f = BloomierFilter::builder(4, 0)
        .build_batch(&members, &values)
        .unwrap();
    assert_eq!(f.false_positive_rate(), 1.0);
    assert!(others[..1000].iter().all(|k| f.get(k).is_some()));
}

#[test]
fn space_is_about_1_125_slots_per_key_for_large_maps() {
    let ks = keys_xor_indexed(3, 200_000);
    let values = vec![0u64; ks.len()];
    let f = BloomierFilter::builder(5, 3)
        .build_batch(&ks, &values)
        .unwrap();
    let per_slot_bits = 8.0;
    let ratio = f.bits_per_entry() / per_slot_bits;
    assert!((1.125..1.2).contains(&ratio), "{ratio}");
    assert_eq!(f.size_in_bytes() as u64, (f.slots() * 8).div_ceil(64) * 8);
}

#[test]
fn duplicates_and_bad_input() {
    // Same value twice: one entry.
    let f = BloomierFilter::build(&[(5u64, 1u64), (6, 2), (5, 1)], 2, 8).unwrap();
    assert_eq!((f.len(), f.get(&5u64), f.get(&6u64)), (2, Some(1), Some(2)));
    // Different values: an error naming both pairs and values, whatever the seed.
    for seed in 0..20 {
        let err = BloomierFilter::builder(3, 8)
            .seed(seed)
            .build(&[(1u64, 0u64), (7, 3), (2, 1), (7, 4)])
            .unwrap_err();
        assert_eq!(
            err,
            Error::ConflictingValues {
                first: 1,
                second: 3,
                first_value: 3,
                second_value: 4
            }
        );
        assert!(err.to_string().contains("pairs 1 and 3"));
    }
    let err = BloomierFilter::build(&[(1u64, 0u64), (2, 16)], 4, 0).unwrap_err();
    assert_eq!(
        err,
        Error::ValueTooLarge {
            index: 1,
            value: 16,
            value_bits: 4
        }
    );
    for (vb, fb) in [(0, 0), (33, 32), (65, 0), (0, 65)] {
        assert!(matches!(
            BloomierFilter::build(&[(1u64, 0u64)], vb, fb),
            Err(Error::InvalidOptions(_))
        ));
    }
    assert!(matches!(
        BloomierFilter::builder(4, 4).build_batch(&[1u64, 2], &[0]),
        Err(Error::InvalidOptions(_))
    ));
    // Full-width values and a pure membership filter (no value bits) work.
    let wide = BloomierFilter::build(&[(1u64, u64::MAX), (2, 0)], 64, 0).unwrap();
    assert_eq!(wide.get(&1u64), Some(u64::MAX));
    let member = BloomierFilter::build(&[(1u64, 0u64), (2, 0)], 0, 16).unwrap();
    assert_eq!(member.get(&2u64), Some(0));
    assert_eq!(member.get(&3u64), None);
}

#[test]
fn an_empty_map_answers_absent() {
    let f = BloomierFilter::build::<u64>(&[], 4, 16).unwrap();
    assert!(f.is_empty());
    let found = keys_xor_indexed(4, 1000)
        .iter()
        .filter(|k| f.get(*k).is_some())
        .count();
    assert!(found <= 2, "{found}");
    assert_eq!(BloomierFilter::from_bytes(&f.to_bytes()).unwrap(), f);
}

fn golden() -> BloomierFilter {
    let pairs: Vec<(u64, u64)> = (0..200u64).map(|k| (k * 3, k % 32)).collect();
    BloomierFilter::builder(5, 7)
        .seed(0x0123_4567_89ab_cdef)
        .build(&pairs)
        .unwrap()
}

#[test]
fn golden_file_pins_version_1() {
    let f = golden();
    let stored = common::golden_file("bloomier-v1.bin", &f.to_bytes());
    let g = BloomierFilter::from_bytes(&stored).unwrap();
    assert_eq!(g, f);
    for k in 0..200u64 {
        assert_eq!(g.get(&(k * 3)), Some(k % 32));
    }
}

#[test]
fn round_trips_through_bytes_and_readers() {
    for (n, vb, fb) in [
        (0usize, 1u32, 0u32),
        (1, 64, 0),
        (10, 3, 9),
        (3000, 17, 13),
        (70_000, 1, 1),
    ] {
        let ks = keys_xor_indexed(5, n);
        let values: Vec<u64> = ks.iter().map(|k| k & mask(vb)).collect();
        let f = BloomierFilter::builder(vb, fb)
            .build_batch(&ks, &values)
            .unwrap();
        let bytes = f.to_bytes();
        assert_eq!(bytes.len(), 64 + f.size_in_bytes());
        let g = BloomierFilter::from_bytes(&bytes).unwrap();
        assert_eq!(g, f);
        let mut stream = bytes.clone();
        stream.extend_from_slice(b"next");
        let h = BloomierFilter::read_from(&stream[..]).unwrap();
        assert_eq!(h, f);
        let mut written = Vec::new();
        f.write_to(&mut written).unwrap();
        assert_eq!(written, bytes);
        assert!(ks.iter().zip(&values).all(|(k, v)| g.get(k) == Some(*v)));
    }
}

/// Rewrites the header fields of an encoding and fixes its checksum (bytes 48..56: XXH3 of
/// 0..48, 56..64 and the body), so the decoder's own checks are what is tested.
fn patch(bytes: &[u8], edit: impl Fn(&mut Vec<u8>)) -> Vec<u8> {
    let mut b = bytes.to_vec();
    edit(&mut b);
    common::reseal(&mut b);
    b
}

fn set_u64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

#[test]
fn decoding_rejects_what_it_should() {
    let f = golden();
    let bytes = f.to_bytes();
    let invalid = |b: &[u8]| matches!(BloomierFilter::from_bytes(b), Err(Error::InvalidHeader(_)));
    // Every strict prefix is an error, never a panic.
    for cut in 0..bytes.len() {
        assert!(BloomierFilter::from_bytes(&bytes[..cut]).is_err(), "{cut}");
        assert!(BloomierFilter::read_from(&bytes[..cut]).is_err(), "{cut}");
    }
    common::envelope_errors(&bytes, BloomierFilter::from_bytes);
    // Widths: value bits (byte 11) and fingerprint bits (field 1, low byte).
    assert!(invalid(&patch(&bytes, |b| b[11] = 65)));
    assert!(invalid(&patch(&bytes, |b| b[11] = 60)));
    assert!(invalid(&patch(&bytes, |b| {
        b[11] = 0;
        b[32] = 0;
    })));
    // Unknown shape bits, segment lengths outside 2^2..=2^18, zero or huge segment counts.
    assert!(invalid(&patch(&bytes, |b| b[34] = 1)));
    assert!(invalid(&patch(&bytes, |b| b[33] = 1)));
    assert!(invalid(&patch(&bytes, |b| b[33] = 19)));
    assert!(invalid(&patch(&bytes, |b| set_u64(b, 40, 0))));
    assert!(invalid(&patch(&bytes, |b| set_u64(b, 40, u64::MAX))));
    // A segment count (or width) that does not match the body length.
    assert!(invalid(&patch(&bytes, |b| {
        let s = u64::from_le_bytes(b[40..48].try_into().unwrap());
        set_u64(b, 40, s + 1)
    })));
    assert!(invalid(&patch(&bytes, |b| b[11] = 6)));
    // More entries than slots.
    assert!(invalid(&patch(&bytes, |b| set_u64(b, 24, 1 << 40))));
    // A body length field that lies (larger than the input): truncated, no allocation.
    let long = patch(&bytes, |b| set_u64(b, 56, 1 << 50));
    assert!(matches!(
        BloomierFilter::read_from(&long[..]),
        Err(Error::Truncated { .. })
    ));
}

#[test]
fn stray_bits_after_the_last_slot_are_rejected() {
    // 12 slots of 7 bits: 84 bits in two words, 44 bits of padding that must stay zero.
    let f = BloomierFilter::build(&[(1u64, 3u64)], 3, 4).unwrap();
    let bytes = f.to_bytes();
    let used = f.slots() * 7;
    assert_ne!(used % 64, 0, "the test needs a partly used last word");
    let last = bytes.len() - 1;
    let bad = patch(&bytes, |b| b[last] |= 0x80);
    assert!(matches!(
        BloomierFilter::from_bytes(&bad),
        Err(Error::InvalidHeader(_))
    ));
}

#[test]
fn arbitrary_bytes_never_panic() {
    fn prop(edits: Vec<(u16, u8)>) -> bool {
        let bytes = golden().to_bytes();
        // With the checksum fixed up, the field checks themselves see the corrupted header.
        let b = patch(&bytes, |b| {
            for &(at, v) in &edits {
                let i = at as usize % 64;
                if !(48..56).contains(&i) {
                    b[i] = v;
                }
            }
        });
        let _ = BloomierFilter::from_bytes(&b);
        let _ = BloomierFilter::read_from(&b[..]);
        true
    }
    QuickCheck::new()
        .tests(500)
        .quickcheck(prop as fn(Vec<(u16, u8)>) -> bool);
}

/// `docs/FORMAT.md`'s query, written from the spec against the raw golden bytes.
#[test]
fn golden_bytes_answer_by_the_written_spec() {
    let b = std::fs::read(common::data("bloomier-v1.bin")).unwrap();
    let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap());
    let (v, seed, shape, s) = (b[11] as u32, u64_at(16), u64_at(32), u64_at(40));
    let (f, log2) = ((shape & 0xff) as u32, (shape >> 8) as u32);
    let (w, l) = (v + f, 1u64 << log2);
    let words: Vec<u64> = b[64..]
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let slot = |i: u64| -> u64 {
        (0..w as u64)
            .map(|j| {
                let bit = i * w as u64 + j;
                (words[(bit / 64) as usize] >> (bit % 64) & 1) << j
            })
            .sum()
    };
    let query = |key: u64| -> Option<u64> {
        let h = xxhash_rust::xxh3::xxh3_64_with_seed(&key.to_le_bytes(), seed);
        let m = l - 1;
        let p0 = ((h as u128 * (s * l) as u128) >> 64) as u64;
        let p1 = (p0 + l) ^ ((h >> 18) & m);
        let p2 = (p0 + 2 * l) ^ (h & m);
        let x = slot(p0) ^ slot(p1) ^ slot(p2);
        let fp = h.wrapping_mul(0xd6e8_feb8_6659_fd93) >> (64 - f);
        (x >> v == fp).then_some(x & ((1 << v) - 1))
    };
    for k in 0..200u64 {
        assert_eq!(query(k * 3), Some(k % 32));
    }
    let f = golden();
    for k in 1000..3000u64 {
        assert_eq!(query(k), f.get(&k));
    }
}

/// A table larger than a core's L2 takes the prefetching batch path; chunk tails of every
/// length must still answer each key.
#[test]
fn large_tables_answer_batches_of_every_length() {
    let ks = keys_xor_indexed(6, 1_100_000);
    let values: Vec<u64> = ks.iter().map(|k| k >> 56).collect();
    let f = BloomierFilter::builder(8, 8)
        .build_batch(&ks, &values)
        .unwrap();
    assert!(f.size_in_bytes() > 2 << 20, "{}", f.size_in_bytes());
    let mut out = vec![None; ks.len()];
    f.get_batch(&ks, &mut out);
    assert!(out.iter().zip(&values).all(|(o, v)| *o == Some(*v)));
    let mut start = 0;
    for len in 0..70 {
        let mut out = vec![None; len];
        f.get_batch(&ks[start..start + len], &mut out);
        assert_eq!(
            out,
            values[start..start + len]
                .iter()
                .map(|&v| Some(v))
                .collect::<Vec<_>>()
        );
        start += len;
    }
}

/// How often a seed's table cannot be peeled (the build then tries the next seed): rare at
/// every size, which is what makes a bounded number of attempts safe.
#[test]
fn few_seeds_fail() {
    for n in [2usize, 3, 5, 10, 20, 50, 200, 1000, 5000] {
        let seeds = 100u64;
        let values = vec![1u64; n];
        let retried = (0..seeds)
            .filter(|&s| {
                let ks = keys_xor_indexed(100 + s, n);
                let start = s << 40;
                let f = BloomierFilter::builder(1, 4)
                    .seed(start)
                    .build_batch(&ks, &values)
                    .unwrap();
                f.seed() != start
            })
            .count();
        eprintln!("{n} keys: {retried} of {seeds} first seeds failed");
        assert!(
            retried <= 20,
            "n {n}: {retried} of {seeds} first seeds failed"
        );
    }
}
