//! The deletable Bloom filter: a `HashSet` oracle over arbitrary insert/remove sequences,
//! batch == single, measured deletability against the blocked model, the format (round trips,
//! golden file, every decoding error) and parameter errors.

mod common;

use std::collections::HashSet;

use blockbloom::deletable::{RemoveCounts, blocked_deletability};
use blockbloom::{BloomFilter, ByHash, DeletableBloomFilter, Error, KeyHash, ScalableBloomFilter};
use quickcheck::{TestResult, quickcheck};

const REGIONS: [u32; 7] = [8, 16, 32, 64, 128, 256, 512];

fn filter(capacity: u64, fpr: f64, region_bits: u32, seed: u64) -> DeletableBloomFilter {
    let plain = BloomFilter::builder()
        .capacity(capacity)
        .fpr(fpr)
        .seed(seed)
        .least_memory()
        .build()
        .unwrap();
    DeletableBloomFilter::from_filter(plain, region_bits).unwrap()
}

/// Keys `range` of stream `seed`, offset to keep the keys this file's measured rates were
/// checked with.
fn keys(seed: u64, range: std::ops::Range<u64>) -> Vec<u64> {
    common::keys_in(seed.wrapping_add(0x1234_5678), range)
}

quickcheck! {
    /// Arbitrary inserts and removes of inserted keys: every key still in the oracle is found,
    /// a successful remove makes the key absent, a refused one changes nothing.
    fn oracle(ops: Vec<(bool, u8)>, region: u8, capacity: u8, tight: bool) -> TestResult {
        let region_bits = REGIONS[region as usize % REGIONS.len()];
        // 1%: layout 8x64, k = 8; 0.01%: layout 4x128, several probes per sector.
        let fpr = if tight { 0.0001 } else { 0.01 };
        let mut f = filter(capacity as u64 % 64 + 16, fpr, region_bits, 7);
        let mut oracle = HashSet::new();
        for (insert, k) in ops {
            if insert {
                f.insert(&k);
                oracle.insert(k);
            } else if oracle.contains(&k) {
                let before = f.clone();
                match f.remove(&k) {
                    Ok(()) => {
                        oracle.remove(&k);
                        if f.contains(&k) {
                            return TestResult::error(format!("{k} still found after remove"));
                        }
                    }
                    Err(Error::NotDeletable) => {
                        if f != before {
                            return TestResult::error("a refused remove changed the filter");
                        }
                    }
                    Err(e) => return TestResult::error(format!("remove({k}) of a member: {e}")),
                }
            } else if !f.contains(&k) {
                // Removing a false positive is the documented hazard; absent keys are refused.
                if f.remove(&k) != Err(Error::NotPresent) {
                    return TestResult::error(format!("{k} absent but not refused"));
                }
            }
            if let Some(lost) = oracle.iter().find(|k| !f.contains(*k)) {
                return TestResult::error(format!("false negative for {lost}"));
            }
        }
        TestResult::passed()
    }

    /// The batch methods equal the single-key ones, marks and counts included.
    fn batch_equals_single(inserted: Vec<u64>, removed: Vec<u64>, region: u8, tight: bool) -> bool {
        let region_bits = REGIONS[region as usize % REGIONS.len()];
        let mut a = filter(500, if tight { 0.0001 } else { 0.01 }, region_bits, 3);
        let mut b = a.clone();
        a.insert_batch(&inserted);
        for k in &inserted {
            b.insert(k);
        }
        let counts = a.remove_batch(&removed);
        let mut single = RemoveCounts::default();
        for k in &removed {
            match b.remove(k) {
                Ok(()) => single.removed += 1,
                Err(Error::NotPresent) => single.not_present += 1,
                Err(_) => single.not_deletable += 1,
            }
        }
        a == b && counts == single
    }

    /// Decoding arbitrary bytes, or a valid encoding with one byte changed, never panics.
    fn decoding_never_panics(bytes: Vec<u8>, at: usize, value: u8) -> bool {
        let _ = DeletableBloomFilter::from_bytes(&bytes);
        let _ = DeletableBloomFilter::read_from(&bytes[..]);
        let mut f = filter(50, 0.01, 64, 1);
        f.insert_batch(&[1u64, 2, 3]);
        let mut good = f.to_bytes();
        let i = at % good.len();
        good[i] = value;
        let _ = DeletableBloomFilter::from_bytes(&good);
        true
    }
}

#[test]
fn batches_beyond_the_cache_equal_single_inserts() {
    // 2.5 MB of filter: the batch methods prefetch blocks ahead.
    let mut a = filter(2_000_000, 0.01, 64, 8);
    let mut b = a.clone();
    let k = keys(9, 0..100_000);
    a.insert_batch(&k);
    k.iter().for_each(|x| b.insert(x));
    assert!(a == b);
    let counts = a.remove_batch(&k[..50_000]);
    let removed = k[..50_000].iter().filter(|x| b.remove(*x).is_ok()).count();
    assert_eq!(counts.removed, removed);
    assert!(a == b);
}

#[test]
fn measured_deletability_follows_the_blocked_model() {
    // One probe per 64-bit sector (8x64, k = 8, the planner's choice at 1%): the model is
    // exact for every region size.
    let capacity = 40_000u64;
    for region_bits in [8, 64, 512] {
        for load in [0.05, 0.25, 1.0] {
            let n = (capacity as f64 * load) as u64;
            let mut f = filter(capacity, 0.01, region_bits, 11);
            assert_eq!(f.filter().probes(), 8);
            let members = keys(1, 0..n);
            f.insert_batch(&members);
            let deletable = members.iter().filter(|k| f.is_deletable(*k)).count() as f64 / n as f64;
            let model = f.expected_deletability(n);
            assert_eq!(
                model,
                blocked_deletability(
                    n,
                    f.filter().num_blocks(),
                    f.filter().layout(),
                    8,
                    region_bits
                )
            );
            // Keys of one block are correlated: allow well beyond the binomial spread.
            let sd = (model * (1.0 - model) / n as f64).sqrt();
            assert!(
                (deletable - model).abs() <= 8.0 * sd + 0.005,
                "regions {region_bits}, load {load}: measured {deletable}, model {model}"
            );
        }
    }
}

#[test]
fn deleting_keeps_members_and_lowers_the_false_positive_rate() {
    let n = 20_000u64;
    let mut f = filter(2 * n, 0.01, 8, 5);
    let members = keys(2, 0..n);
    f.insert_batch(&members);
    let probes = keys(3, 0..200_000);
    let before = f.count_batch(&probes);
    let counts = f.remove_batch(&members[..n as usize / 2]);
    assert_eq!(counts.not_present, 0);
    assert!(counts.removed > 0);
    assert_eq!(
        f.count_batch(&members[n as usize / 2..]),
        n as usize / 2,
        "a kept key was lost"
    );
    let after = f.count_batch(&probes);
    assert!(after < before, "fpr before {before}, after {after}");
    // Removed keys are absent; refused ones stay.
    let still = f.count_batch(&members[..n as usize / 2]);
    assert!(still >= counts.not_deletable);
}

#[test]
fn wrapping_a_filled_filter_protects_its_keys() {
    let mut plain = BloomFilter::with_capacity(1000, 0.01).unwrap();
    plain.insert_batch(&[1u64, 2, 3]);
    let mut f = DeletableBloomFilter::from_filter(plain, 8).unwrap();
    for k in [1u64, 2, 3] {
        assert_eq!(f.remove(&k), Err(Error::NotDeletable));
    }
    f.insert(&4u64);
    assert!(f.is_deletable(&4u64) || f.collided_regions() > 0);
    assert!([1u64, 2, 3].iter().all(|k| f.contains(k)));
}

#[test]
fn region_size_is_validated() {
    for bad in [0, 1, 4, 12, 1024, 3] {
        let plain = BloomFilter::with_capacity(100, 0.01).unwrap();
        let err = DeletableBloomFilter::from_filter(plain, bad).unwrap_err();
        assert!(
            matches!(
                err,
                Error::InvalidParameter {
                    name: "region size in bits",
                    ..
                }
            ),
            "{bad}: {err}"
        );
    }
    for good in REGIONS {
        let f = filter(1000, 0.01, good, 0);
        assert_eq!(f.region_bits(), good);
        assert_eq!(f.num_regions(), f.filter().num_blocks() * 512 / good as u64);
    }
}

/// The golden filter: hash id 1, every filter's hash before id 2 (what the file pins).
fn golden() -> DeletableBloomFilter {
    let plain = BloomFilter::builder()
        .capacity(100)
        .fpr(0.01)
        .seed(0x0123_4567_89ab_cdef)
        .key_hash(KeyHash::Xxh3)
        .least_memory()
        .build()
        .unwrap();
    let mut f = DeletableBloomFilter::from_filter(plain, 16).unwrap();
    f.insert_batch(&(0..100u64).collect::<Vec<_>>());
    // What `insert("golden")` hashed before the `Key` trait (the `Hash` route, now `ByHash`).
    f.insert(&ByHash("golden"));
    f.remove_batch(&(0..20u64).collect::<Vec<_>>());
    f
}

#[test]
fn golden_file_pins_version_1() {
    let f = golden();
    let stored = common::golden_file("deletable-v1.bin", &f.to_bytes());
    let g = DeletableBloomFilter::from_bytes(&stored).unwrap();
    assert_eq!(f, g);
    assert_eq!(stored[10], 17);
    assert_eq!(stored[11], 4); // 2^4-bit regions
}

#[test]
fn round_trips() {
    for region_bits in REGIONS {
        let mut f = filter(3000, 0.001, region_bits, region_bits as u64);
        f.insert_batch(&keys(4, 0..3000));
        f.remove_batch(&keys(4, 0..1000));
        let bytes = f.to_bytes();
        assert_eq!(bytes.len(), f.encoded_len());
        assert_eq!(bytes.len() % 8, 0);
        // The inner filter's own encoding follows the envelope, so its blocks start at 128.
        assert_eq!(&bytes[64..72], b"BLKBLOOM");
        let g = DeletableBloomFilter::from_bytes(&bytes).unwrap();
        assert_eq!(f, g);
        let mut stream = bytes.clone();
        stream.extend_from_slice(&bytes);
        let mut r = &stream[..];
        assert_eq!(DeletableBloomFilter::read_from(&mut r).unwrap(), f);
        assert_eq!(DeletableBloomFilter::read_from(&mut r).unwrap(), f);
        assert!(r.is_empty());
    }
}

#[test]
fn every_decoding_error_is_typed() {
    let mut f = filter(1000, 0.01, 64, 9);
    f.insert_batch(&keys(5, 0..1000));
    let good = f.to_bytes();
    let edited = |edit: &dyn Fn(&mut Vec<u8>)| {
        let mut b = good.clone();
        edit(&mut b);
        common::reseal(&mut b);
        DeletableBloomFilter::from_bytes(&b).unwrap_err()
    };
    let header = |e: Error| matches!(e, Error::InvalidHeader(_));
    // Region size outside 2^3..=2^9.
    assert!(header(edited(&|b| b[11] = 2)));
    assert!(header(edited(&|b| b[11] = 10)));
    // Region count, collided count, reserved field.
    assert!(header(edited(&|b| b[24] ^= 1)));
    assert!(header(edited(&|b| b[32] ^= 1)));
    assert!(header(edited(&|b| b[40] = 1)));
    // Seed of the envelope differs from the inner filter's.
    assert!(header(edited(&|b| b[16] ^= 1)));
    // A bitmap word flipped: the collided count no longer matches.
    assert!(header(edited(&|b| {
        let n = b.len();
        b[n - 1] ^= 0x80;
    })));
    // Body one word short: not filter plus bitmap.
    assert!(header(edited(&|b| {
        b.truncate(b.len() - 8);
        let body = (b.len() - 64) as u64;
        b[56..64].copy_from_slice(&body.to_le_bytes());
    })));
    // Inner filter corrupted (its own checksum).
    assert!(matches!(
        edited(&|b| b[64 + 64 + 5] ^= 1),
        Error::ChecksumMismatch { .. }
    ));
    common::envelope_errors(&good, DeletableBloomFilter::from_bytes);
    let scalable = ScalableBloomFilter::new(100, 0.01).unwrap().to_bytes();
    assert!(matches!(
        DeletableBloomFilter::from_bytes(&scalable),
        Err(Error::WrongKind { .. })
    ));
}

#[test]
fn bitmap_bits_past_the_last_region_are_rejected() {
    // One block with 512-bit regions: one region, so bits 1.. of the bitmap word are spare.
    let plain = BloomFilter::builder()
        .capacity(10)
        .size_in_bytes(64)
        .build()
        .unwrap();
    let f = DeletableBloomFilter::from_filter(plain, 512).unwrap();
    let mut b = f.to_bytes();
    let n = b.len();
    b[n - 8] |= 2;
    b[32] = 1; // the collided count the spare bit would add
    common::reseal(&mut b);
    assert!(matches!(
        DeletableBloomFilter::from_bytes(&b),
        Err(Error::InvalidHeader(_))
    ));
}
