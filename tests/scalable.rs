//! The scalable filter: measured compound false-positive rate at 100x and 1000x growth, a
//! `HashSet` oracle, batch == single, errors that change nothing, the format (round trips,
//! golden file, every decoding error) and parameter errors.

mod common;

use std::collections::HashSet;

use blockbloom::{BloomFilter, ByHash, DeletableBloomFilter, Error, ScalableBloomFilter};
use quickcheck::{TestResult, quickcheck};

/// Keys `range` of stream `seed`, offset to keep the keys this file's measured rates were
/// checked with.
fn keys(seed: u64, range: std::ops::Range<u64>) -> Vec<u64> {
    common::keys_in(seed.wrapping_add(0x5ca1_ab1e), range)
}

/// Grows a filter to `times` its initial capacity, then checks: no false negatives, the
/// measured false-positive rate at or below the target, and within a statistical bound of the
/// sum of the stages' exact expected rates (which it would miss if the stages' answers were
/// strongly correlated).
fn grow_and_measure(f: &mut ScalableBloomFilter, times: u64, queries: u64) {
    let n = f.initial_capacity() * times;
    let members = keys(1, 0..n);
    let new = f.insert_batch(&members).unwrap();
    assert!(new as u64 <= n && new as u64 > n - n / 50, "{new} of {n}");
    assert_eq!(f.len(), new as u64);
    assert_eq!(f.count_batch(&members), n as usize, "false negatives");
    let non_members = keys(2, 0..queries);
    let fp = f.count_batch(&non_members) as f64;
    let measured = fp / queries as f64;
    let expected = f.expected_fpr();
    let sd = (expected / queries as f64).sqrt();
    assert!(
        measured <= f.target_fpr(),
        "{times}x: measured {measured} above target {}",
        f.target_fpr()
    );
    assert!(
        (measured - expected).abs() <= 5.0 * sd,
        "{times}x: measured {measured}, expected {expected} (sd {sd}), {} stages",
        f.stages().len()
    );
}

#[test]
fn fpr_stays_under_target_at_100x() {
    let mut f = ScalableBloomFilter::new(1000, 0.01).unwrap();
    grow_and_measure(&mut f, 100, 1_000_000);
    assert_eq!(f.stages().len(), 7); // 1000 * (1 + 2 + ... + 64) >= 100,000
}

#[test]
fn fpr_stays_under_target_at_1000x() {
    let mut f = ScalableBloomFilter::builder()
        .initial_capacity(200)
        .fpr(0.01)
        .build()
        .unwrap();
    grow_and_measure(&mut f, 1000, 1_000_000);
}

#[test]
fn fpr_stays_under_target_fast_growth_tight_target() {
    let mut f = ScalableBloomFilter::builder()
        .initial_capacity(500)
        .fpr(0.001)
        .growth(4.0)
        .ratio(0.9)
        .seed(77)
        .build()
        .unwrap();
    grow_and_measure(&mut f, 100, 2_000_000);
}

#[test]
fn stages_follow_the_schedule() {
    let mut f = ScalableBloomFilter::builder()
        .initial_capacity(100)
        .fpr(0.02)
        .growth(3.0)
        .ratio(0.8)
        .seed(5)
        .build()
        .unwrap();
    f.insert_batch(&keys(3, 0..10_000)).unwrap();
    let mut capacity = 100.0f64;
    let mut target = 0.02 * (1.0 - 0.8);
    for s in f.stages() {
        assert_eq!(s.capacity(), capacity.ceil() as u64);
        assert_eq!(s.target_fpr(), Some(target));
        assert_eq!(s.seed(), 5);
        assert!(s.model_fpr(s.capacity()) <= target);
        capacity *= 3.0;
        target *= 0.8;
    }
    let full: u64 = f.stages()[..f.stages().len() - 1]
        .iter()
        .map(BloomFilter::capacity)
        .sum();
    assert!(f.len() > full && f.len() <= f.capacity());
}

quickcheck! {
    /// Arbitrary inserts against a `HashSet`: `insert` reports new exactly when the key was
    /// not contained, members are always found, and `len` counts the new ones.
    fn oracle(ops: Vec<u16>, n0: u8, fast: bool) -> TestResult {
        let mut f = ScalableBloomFilter::builder()
            .initial_capacity(n0 as u64 % 8 + 1)
            .growth(if fast { 4.0 } else { 2.0 })
            .build()
            .unwrap();
        let mut oracle = HashSet::new();
        let mut new = 0;
        for k in ops {
            let was = f.contains(&k);
            let added = f.insert(&k).unwrap();
            if added == was || (oracle.contains(&k) && added) {
                return TestResult::error(format!("insert({k}) = {added}, contained before {was}"));
            }
            new += added as u64;
            oracle.insert(k);
            if f.len() != new {
                return TestResult::error("len does not count the new keys");
            }
            if let Some(lost) = oracle.iter().find(|k| !f.contains(*k)) {
                return TestResult::error(format!("false negative for {lost}"));
            }
        }
        TestResult::passed()
    }

    /// Batch insert equals inserting one by one (duplicates within a batch included), and the
    /// batch queries equal the single-key query.
    fn batch_equals_single(batches: Vec<Vec<u32>>, queries: Vec<u32>, n0: u8) -> bool {
        let mut a = ScalableBloomFilter::new(n0 as u64 % 16 + 1, 0.05).unwrap();
        let mut b = a.clone();
        for batch in &batches {
            let new = a.insert_batch(batch).unwrap();
            let mut single = 0;
            for k in batch {
                single += b.insert(k).unwrap() as usize;
            }
            if new != single {
                return false;
            }
        }
        let mut out = vec![false; queries.len()];
        a.contains_batch(&queries, &mut out);
        let each: Vec<bool> = queries.iter().map(|k| a.contains(k)).collect();
        a == b && out == each && a.count_batch(&queries) == each.iter().filter(|&&x| x).count()
    }

    /// Decoding arbitrary bytes, or a valid encoding with one byte changed, never panics.
    fn decoding_never_panics(bytes: Vec<u8>, at: usize, value: u8) -> bool {
        let _ = ScalableBloomFilter::from_bytes(&bytes);
        let _ = ScalableBloomFilter::read_from(&bytes[..]);
        let mut f = ScalableBloomFilter::new(4, 0.01).unwrap();
        f.insert_batch(&(0..20u64).collect::<Vec<_>>()).unwrap();
        let mut good = f.to_bytes();
        let i = at % good.len();
        good[i] = value;
        let _ = ScalableBloomFilter::from_bytes(&good);
        true
    }
}

#[test]
fn batch_lookups_work_on_every_tier() {
    let members = keys(4, 0..5000);
    let queries = keys(5, 0..5000);
    let mut reference: Option<(Vec<bool>, usize)> = None;
    for isa in common::tiers() {
        let mut f = ScalableBloomFilter::builder()
            .initial_capacity(100)
            .isa(isa)
            .build()
            .unwrap();
        f.insert_batch(&members).unwrap();
        let mut out = vec![false; queries.len()];
        f.contains_batch(&queries, &mut out);
        let got = (out, f.count_batch(&queries));
        assert_eq!(f.count_batch(&members), members.len(), "{isa}");
        match &reference {
            None => reference = Some(got),
            Some(r) => assert_eq!(&got, r, "{isa}"),
        }
    }
}

#[test]
fn a_stage_that_cannot_be_built_changes_nothing() {
    // Targets 0.01 (1 - r), then 1e-7-ish, then below the planner's 1e-9 floor.
    let mut f = ScalableBloomFilter::builder()
        .initial_capacity(1)
        .growth(1.0)
        .ratio(1e-5)
        .build()
        .unwrap();
    assert!(f.insert(&0u64).unwrap());
    assert!(f.insert(&1u64).unwrap());
    let before = f.clone();
    assert!(matches!(f.insert(&2u64), Err(Error::InvalidFpr(_))));
    assert_eq!(f, before);
    assert!(matches!(
        f.insert_batch(&[3u64, 4]),
        Err(Error::InvalidFpr(_))
    ));
    assert_eq!(f, before);
    assert!(f.contains(&0u64) && f.contains(&1u64));
}

#[test]
fn parameters_are_validated() {
    let b = ScalableBloomFilter::builder;
    assert!(matches!(b().fpr(0.0).build(), Err(Error::InvalidFpr(_))));
    assert!(matches!(b().fpr(1.0).build(), Err(Error::InvalidFpr(_))));
    assert!(matches!(
        b().fpr(f64::NAN).build(),
        Err(Error::InvalidFpr(_))
    ));
    let param = |r: Result<ScalableBloomFilter, Error>, which: &str| match r {
        Err(Error::InvalidParameter { name, .. }) => assert_eq!(name, which),
        other => panic!("{which}: {other:?}"),
    };
    param(b().initial_capacity(0).build(), "initial capacity");
    param(b().growth(0.99).build(), "growth factor");
    param(b().growth(17.0).build(), "growth factor");
    param(b().growth(f64::INFINITY).build(), "growth factor");
    param(b().ratio(0.0).build(), "ratio");
    param(b().ratio(1.0).build(), "ratio");
    param(b().ratio(-0.5).build(), "ratio");
    assert!(b().growth(1.0).ratio(0.5).build().is_ok());
    assert!(b().growth(16.0).ratio(0.99).build().is_ok());
}

fn golden() -> ScalableBloomFilter {
    let mut f = ScalableBloomFilter::builder()
        .initial_capacity(20)
        .fpr(0.01)
        .seed(0x0123_4567_89ab_cdef)
        .build()
        .unwrap();
    f.insert_batch(&(0..100u64).collect::<Vec<_>>()).unwrap();
    // What `insert("golden")` hashed before the `Key` trait (the `Hash` route, now `ByHash`).
    f.insert(&ByHash("golden")).unwrap();
    f
}

#[test]
fn golden_file_pins_version_1() {
    let f = golden();
    let stored = common::golden_file("scalable-v1.bin", &f.to_bytes());
    let g = ScalableBloomFilter::from_bytes(&stored).unwrap();
    assert_eq!(f, g);
    assert_eq!(g.stages().len(), 3); // 20 + 40 + 80 keys of capacity for 101 keys
    assert_eq!(stored[10], 18);
}

#[test]
fn round_trips_and_keeps_growing() {
    let mut f = ScalableBloomFilter::builder()
        .initial_capacity(50)
        .growth(1.5)
        .ratio(0.8)
        .fpr(0.005)
        .seed(3)
        .build()
        .unwrap();
    f.insert_batch(&keys(6, 0..2000)).unwrap();
    let bytes = f.to_bytes();
    assert_eq!(bytes.len(), f.encoded_len());
    // Every stage's encoding starts 64-byte aligned relative to the buffer.
    let mut at = 128;
    for s in f.stages() {
        assert_eq!(&bytes[at..at + 8], b"BLKBLOOM");
        at += s.encoded_len();
    }
    let mut g = ScalableBloomFilter::from_bytes(&bytes).unwrap();
    assert_eq!(f, g);
    let mut stream = bytes.clone();
    stream.extend_from_slice(&bytes);
    let mut r = &stream[..];
    assert_eq!(ScalableBloomFilter::read_from(&mut r).unwrap(), f);
    assert_eq!(ScalableBloomFilter::read_from(&mut r).unwrap(), f);
    assert!(r.is_empty());
    // The decoded filter continues exactly as the original.
    let more = keys(6, 2000..6000);
    assert_eq!(
        f.insert_batch(&more).unwrap(),
        g.insert_batch(&more).unwrap()
    );
    assert_eq!(f, g);
}

#[test]
fn thousands_of_stages_round_trip() {
    // One key per stage: the decoder's schedule check must stay linear in the stage count.
    let mut f = ScalableBloomFilter::builder()
        .initial_capacity(1)
        .growth(1.0)
        .ratio(0.9999)
        .fpr(0.5)
        .build()
        .unwrap();
    let k = keys(8, 0..3000);
    let new = f.insert_batch(&k).unwrap();
    assert_eq!(f.stages().len(), new);
    assert_eq!(f.count_batch(&k), k.len());
    let g = ScalableBloomFilter::from_bytes(&f.to_bytes()).unwrap();
    assert_eq!(f, g);
}

#[test]
fn every_decoding_error_is_typed() {
    let mut f = ScalableBloomFilter::new(10, 0.01).unwrap();
    f.insert_batch(&keys(7, 0..100)).unwrap();
    let good = f.to_bytes();
    let edited = |edit: &dyn Fn(&mut Vec<u8>)| {
        let mut b = good.clone();
        edit(&mut b);
        common::reseal(&mut b);
        ScalableBloomFilter::from_bytes(&b).unwrap_err()
    };
    let header = |e: Error| matches!(e, Error::InvalidHeader(_));
    let set_u64 =
        |b: &mut Vec<u8>, at: usize, v: u64| b[at..at + 8].copy_from_slice(&v.to_le_bytes());
    let set_f64 =
        |b: &mut Vec<u8>, at: usize, v: f64| b[at..at + 8].copy_from_slice(&v.to_le_bytes());
    assert!(header(edited(&|b| b[11] = 1))); // parameter byte
    assert!(header(edited(&|b| set_u64(b, 24, 0)))); // n0 = 0
    assert!(header(edited(&|b| set_u64(b, 24, 11)))); // n0 off the stages' schedule
    assert!(header(edited(&|b| set_u64(b, 32, 10_000)))); // more keys than capacity
    assert!(header(edited(&|b| set_u64(b, 32, 5)))); // fewer keys than the full stages hold
    assert!(header(edited(&|b| set_u64(b, 40, 0)))); // no stage
    assert!(header(edited(&|b| set_u64(b, 40, 3)))); // fewer stages than stored
    assert!(header(edited(&|b| set_u64(b, 40, 1 << 40)))); // more than the body can hold
    assert!(header(edited(&|b| set_f64(b, 64, 0.5)))); // growth below 1
    assert!(header(edited(&|b| set_f64(b, 64, 2.5)))); // growth off the schedule
    assert!(header(edited(&|b| set_f64(b, 72, 1.0)))); // ratio
    assert!(header(edited(&|b| set_f64(b, 80, 2.0)))); // target
    assert!(header(edited(&|b| set_f64(b, 80, 0.02)))); // target off the schedule
    assert!(header(edited(&|b| b[100] = 1))); // reserved schedule bytes
    assert!(header(edited(&|b| b[16] ^= 1))); // seed differs from the stages'
    // The first stage's block count points past the body.
    assert!(header(edited(&|b| set_u64(b, 128 + 24, 1 << 30))));
    assert!(header(edited(&|b| set_u64(b, 128 + 24, 0))));
    // A stage's own bytes corrupted.
    assert!(matches!(
        edited(&|b| b[128 + 64 + 3] ^= 1),
        Error::ChecksumMismatch { .. }
    ));
    // Bytes after the last stage.
    assert!(header(edited(&|b| {
        b.extend_from_slice(&[0; 128]);
        let body = (b.len() - 64) as u64;
        b[56..64].copy_from_slice(&body.to_le_bytes());
    })));
    common::envelope_errors(&good, ScalableBloomFilter::from_bytes);
    let deletable = DeletableBloomFilter::with_capacity(100, 0.01)
        .unwrap()
        .to_bytes();
    assert!(matches!(
        ScalableBloomFilter::from_bytes(&deletable),
        Err(Error::WrongKind { .. })
    ));
}
