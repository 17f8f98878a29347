//! The variable-increment counting filter (Rottenstreich, Kanizo, Keslassy 2012): no false
//! negatives through inserts and removals, the paper's false-positive model checked by
//! measurement, fewer false positives than the counting filter at equal memory, typed errors.

mod common;

use blockbloom::variable::model_fpr;
use blockbloom::{ClassicBloomFilter, CounterBits, Error, VariableIncrementBloomFilter as Vi};
use common::{members, non_members};
use quickcheck::quickcheck;

quickcheck! {
    fn no_false_negatives_through_removals(keys: Vec<u32>, remove_every: u8, l: u8) -> bool {
        let l = (l % 8 + 1) as u32; // 4-bit counters take L in 1..=8
        let mut f = Vi::new(2_000, 4, l, CounterBits::Four, 9).unwrap();
        for k in &keys {
            f.insert(k);
        }
        let step = remove_every as usize % 4 + 2;
        let mut kept = Vec::new();
        for (i, k) in keys.iter().enumerate() {
            if i % step == 0 {
                if f.remove(k).is_err() {
                    return false; // an inserted key must be removable
                }
            } else {
                kept.push(*k);
            }
        }
        // A key inserted twice and removed once is still there.
        kept.iter().all(|k| f.contains(k))
    }
}

#[test]
fn remove_of_an_absent_key_changes_nothing() {
    // 8-bit counters: at this load none saturates, so removal restores them exactly.
    let mut f = Vi::new(5_000, 5, 4, CounterBits::Eight, 0).unwrap();
    f.insert_batch_for_test(&members(1, 500));
    let before = f.clone();
    let absent = non_members(1, 2_000);
    let mut refused = 0;
    for k in &absent {
        if !f.contains(k) {
            assert_eq!(f.remove(k), Err(Error::NotPresent));
            refused += 1;
        }
    }
    assert!(refused > 1_900);
    assert_eq!(f, before);
    // Insert then remove restores the counters exactly.
    for k in &members(2, 200) {
        f.insert(k);
    }
    for k in &members(2, 200) {
        f.remove(k).unwrap();
    }
    assert_eq!(f, before);
}

trait Fill {
    fn insert_batch_for_test(&mut self, keys: &[u64]);
}

impl Fill for Vi {
    fn insert_batch_for_test(&mut self, keys: &[u64]) {
        for k in keys {
            self.insert(k);
        }
    }
}

/// Measured rates agree with the paper's model (8-bit counters, so nothing saturates) for
/// several loads, probe counts and `L`; with `L = 1` it is the counting filter's rate.
#[test]
fn measured_fpr_agrees_with_the_model() {
    let n = 20_000usize;
    let queries = 300_000;
    for (ratio, k, l) in [
        (4u64, 3u32, 1u32),
        (4, 3, 4),
        (8, 4, 4),
        (8, 6, 2),
        (12, 5, 8),
        (6, 4, 16),
    ] {
        let seed = ratio * 1000 + k as u64 * 10 + l as u64;
        let mut f = Vi::new(ratio * n as u64, k, l, CounterBits::Eight, seed).unwrap();
        f.insert_batch_for_test(&members(seed, n));
        let fp = non_members(seed, queries)
            .iter()
            .filter(|q| f.contains(*q))
            .count() as f64;
        let model = model_fpr(ratio * n as u64, k, l, n as u64) * queries as f64;
        // Binomial spread, plus 4% for the scatter of one filter's counters around the
        // model (the rate is a k-th power of a per-counter probability).
        let tol = 5.0 * model.sqrt() + 0.04 * model + 5.0;
        println!("m/n={ratio} k={k} L={l}: measured {fp} model {model:.1}");
        assert!(
            (fp - model).abs() <= tol,
            "m/n={ratio} k={k} L={l}: {fp} vs model {model}"
        );
    }
}

/// At equal memory (the same number of 4-bit counters) the variable-increment filter answers
/// fewer false positives than the counting filter, as the paper reports. An (unblocked)
/// counting filter answers exactly as the classic Bloom filter of its non-zero counters, so
/// its rate is measured with a `ClassicBloomFilter` of one bit per counter and the best `k`
/// for that size.
#[test]
fn fewer_false_positives_than_the_counting_filter_at_equal_memory() {
    let n = 50_000usize;
    let vi = {
        let mut f = Vi::with_capacity(n as u64, 0.01).unwrap();
        f.insert_batch_for_test(&members(5, n));
        f
    };
    let m = vi.num_counters();
    let k = ((m as f64 / n as f64) * std::f64::consts::LN_2).round() as u32;
    let mut counting = ClassicBloomFilter::with_seed(m, k, 5).unwrap();
    counting.insert_batch(&members(5, n));
    let q = non_members(5, 1_000_000);
    let vi_fp = q.iter().filter(|key| vi.contains(*key)).count();
    let counting_fp = counting.count_batch(&q);
    println!(
        "{m} 4-bit counters: variable-increment (k = {}) {vi_fp} vs counting (k = {k}) \
         {counting_fp} false positives in 1M",
        vi.probes()
    );
    assert!(vi_fp * 2 < counting_fp, "{vi_fp} vs {counting_fp}");
    assert!((vi_fp as f64) < 0.012 * q.len() as f64);
}

#[test]
fn invalid_parameters_are_typed_errors() {
    let name = |r: Result<Vi, Error>| match r {
        Err(Error::InvalidParameter { name, .. }) => name,
        other => panic!("{other:?}"),
    };
    assert_eq!(name(Vi::new(0, 3, 4, CounterBits::Four, 0)), "counters");
    assert_eq!(name(Vi::new(10, 0, 4, CounterBits::Four, 0)), "k");
    assert_eq!(name(Vi::new(10, 65, 4, CounterBits::Four, 0)), "k");
    assert_eq!(name(Vi::new(10, 3, 0, CounterBits::Four, 0)), "l");
    assert_eq!(name(Vi::new(10, 3, 9, CounterBits::Four, 0)), "l");
    assert_eq!(name(Vi::new(10, 3, 129, CounterBits::Eight, 0)), "l");
    assert_eq!(name(Vi::with_capacity(0, 0.01)), "n");
    assert!(matches!(
        Vi::with_capacity(10, 1.0),
        Err(Error::InvalidFpr(_))
    ));
    assert!(Vi::new(10, 3, 128, CounterBits::Eight, 0).is_ok());
}

#[test]
fn saturated_counters_never_lose_a_key() {
    // One counter, L = 8: the second insert saturates it (8..15 + 8..15 > 15).
    let mut f = Vi::new(1, 1, 8, CounterBits::Four, 0).unwrap();
    for k in 0..10u64 {
        f.insert(&k);
    }
    for k in 0..10u64 {
        assert!(f.contains(&k));
        f.remove(&k).unwrap();
        assert!(f.contains(&k)); // saturated: stays
    }
}
