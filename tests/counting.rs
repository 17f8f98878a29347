//! The counting filter against a multiset oracle, its projection to a plain filter, batch
//! forms, saturation, the spectral estimate, measured false-positive rates and its format.

mod common;

use common::bound;

use std::collections::HashMap;

use blockbloom::layout::Layout;
use blockbloom::{BloomFilter, ByHash, CounterBits, CountingBloomFilter, Error, Isa};
use common::keys;
use quickcheck::{QuickCheck, TestResult, quickcheck};

/// Every counter width and layout, at a small capacity.
fn configs(capacity: u64, fpr: f64) -> Vec<CountingBloomFilter> {
    let mut out = Vec::new();
    for bits in CounterBits::ALL {
        for layout in Layout::PLANNED {
            out.push(
                CountingBloomFilter::builder()
                    .capacity(capacity)
                    .fpr(fpr)
                    .counter_bits(bits)
                    .layout(layout)
                    .seed(layout as u64 * 10 + bits.bits() as u64)
                    .build()
                    .unwrap(),
            );
        }
    }
    out
}

/// A filter of one block, so keys share counters and they saturate quickly.
fn tiny(bits: CounterBits, layout: Layout) -> CountingBloomFilter {
    CountingBloomFilter::builder()
        .capacity(1)
        .fpr(0.5)
        .counter_bits(bits)
        .layout(layout)
        .build()
        .unwrap()
}

/// Runs `ops` (insert or remove of a key from a small space) on `f` and a multiset oracle,
/// checking after every step: no false negatives, estimates at or above the true count,
/// a reported `NotPresent` changes nothing, and the plain projection answers the same.
fn run_against_oracle(mut f: CountingBloomFilter, ops: &[(bool, u8)], space: u8) -> bool {
    let mut oracle: HashMap<u8, u32> = HashMap::new();
    for &(insert, key) in ops {
        let key = key % space;
        let count = oracle.entry(key).or_insert(0);
        if insert {
            f.insert(&key);
            *count += 1;
        } else if *count > 0 {
            if f.remove(&key).is_err() {
                return false; // a member's remove must succeed
            }
            *count -= 1;
        } else if !f.contains(&key) {
            let before = f.clone();
            if f.remove(&key) != Err(Error::NotPresent) || f != before {
                return false;
            }
        }
        // (An absent key that `contains` reports is a false positive: removing it would take
        // counts from other keys, which no counting filter can detect, so the test skips it.)
        for (&k, &c) in &oracle {
            if c > 0 && !f.contains(&k) {
                return false;
            }
            if f.estimate_count(&k) < c.min(f.counter_bits().max()) {
                return false;
            }
        }
    }
    let plain = f.to_bloom();
    (0..=255u8).all(|k| plain.contains(&k) == f.contains(&k))
}

#[test]
fn oracle_small_filters() {
    fn prop(ops: Vec<(bool, u8)>, config: u8) -> bool {
        let f = configs(64, 0.01).swap_remove(config as usize % 4);
        run_against_oracle(f, &ops, 64)
    }
    QuickCheck::new()
        .tests(200)
        .quickcheck(prop as fn(Vec<(bool, u8)>, u8) -> bool);
}

#[test]
fn oracle_one_block_saturating() {
    // Few keys hammered into one block: counters are shared and (at 4 bits) saturate.
    fn prop(ops: Vec<(bool, u8)>, config: u8) -> TestResult {
        let bits = CounterBits::ALL[config as usize % 2];
        let layout = Layout::ALL[config as usize / 2 % 2];
        let ops: Vec<(bool, u8)> = ops.iter().cycle().take(4 * ops.len()).copied().collect();
        TestResult::from_bool(run_against_oracle(tiny(bits, layout), &ops, 6))
    }
    QuickCheck::new()
        .tests(200)
        .quickcheck(prop as fn(Vec<(bool, u8)>, u8) -> TestResult);
}

#[test]
fn saturated_counters_are_sticky() {
    for bits in CounterBits::ALL {
        for layout in Layout::PLANNED {
            let mut f = tiny(bits, layout);
            let max = bits.max();
            for _ in 0..max + 5 {
                f.insert(&"hot");
            }
            assert_eq!(f.estimate_count(&"hot"), max, "{bits} {layout}");
            let saturated = f.saturated_counters();
            assert!(saturated >= 1 && saturated <= f.probes() as u64);
            f.insert(&"cold");
            // More removes than inserts of `hot`: its saturated counters never go down, so
            // `cold` (which may share them) is never lost.
            for _ in 0..max + 5 {
                f.remove(&"hot").unwrap();
                assert!(f.contains(&"cold"));
            }
            assert_eq!(f.saturated_counters(), saturated);
            assert!(f.contains(&"hot"), "saturation is sticky");
            f.remove(&"cold").unwrap();
        }
    }
}

#[test]
fn remove_of_absent_key_changes_nothing() {
    for mut f in configs(1000, 0.01) {
        f.insert_batch(&keys(1, 1000));
        let before = f.to_bytes();
        let mut rejected = 0;
        for k in keys(2, 1000) {
            if !f.contains(&k) {
                assert_eq!(f.remove(&k), Err(Error::NotPresent));
                rejected += 1;
            }
        }
        assert_eq!(f.to_bytes(), before);
        assert!(rejected > 900, "{rejected}");
        let mut g = f.clone();
        let removed = keys(3, 500).iter().filter(|k| g.remove(*k).is_ok()).count();
        assert_eq!(f.remove_batch(&keys(3, 500)).unwrap(), removed);
        assert_eq!(f, g);
    }
}

#[test]
fn batch_equals_single_across_chunks_and_prefetch() {
    // 2 million keys of capacity: beyond the cache threshold, so batches prefetch and use
    // short chunks; the small filter takes long chunks.
    for (capacity, n) in [(2_000u64, 3_000usize), (2_000_000, 20_000)] {
        for bits in CounterBits::ALL {
            let build = || {
                CountingBloomFilter::builder()
                    .capacity(capacity)
                    .counter_bits(bits)
                    .build()
                    .unwrap()
            };
            let members = keys(10, n);
            let (mut a, mut b) = (build(), build());
            a.insert_batch(&members);
            for k in &members {
                b.insert(k);
            }
            assert_eq!(a, b);
            let queries = keys(11, n);
            let mut out = vec![false; n];
            a.contains_batch(&queries, &mut out);
            assert!(queries.iter().zip(&out).all(|(k, &o)| a.contains(k) == o));
            assert_eq!(a.count_batch(&members), n);
            let half = &members[..n / 2];
            assert_eq!(a.remove_batch(half).unwrap(), n / 2);
            for k in half {
                b.remove(k).unwrap();
            }
            assert_eq!(a, b);
            let hashes: Vec<u64> = members.iter().map(|k| a.hash(k)).collect();
            assert_eq!(a.remove_hash_batch(&hashes[n / 2..]).unwrap(), n - n / 2);
            assert!(a.blocks().iter().all(|blk| blk.0 == [0; 8]));
        }
    }
}

#[test]
fn every_kernel_tier_builds_the_same_counters() {
    // Batches take their bit patterns from the filter's SIMD kernel; single calls compute
    // them one probe at a time.
    let members = keys(12, 5_000);
    for bits in CounterBits::ALL {
        for layout in Layout::PLANNED {
            for probes in layout.probe_counts() {
                let build = |isa| {
                    CountingBloomFilter::builder()
                        .capacity(5_000)
                        .counter_bits(bits)
                        .layout(layout)
                        .probes(probes)
                        .isa(isa)
                        .build()
                        .unwrap()
                };
                let mut single = build(Isa::Scalar);
                members.iter().for_each(|k| single.insert(k));
                for isa in common::tiers() {
                    let mut f = build(isa);
                    f.insert_batch(&members);
                    assert_eq!(f, single, "{bits} {layout} k={probes} {isa}");
                    assert_eq!(f.count_batch(&members), members.len());
                }
            }
        }
    }
}

quickcheck! {
    fn batch_forms_equal_single_calls(keys64: Vec<u64>, keys32: Vec<u32>, config: u8) -> bool {
        let mut a = configs(200, 0.01).swap_remove(config as usize % 4);
        let mut b = a.clone();
        a.insert_batch(&keys64);
        a.insert_batch(&keys32);
        keys64.iter().for_each(|k| b.insert(k));
        keys32.iter().for_each(|k| b.insert(k));
        let mut out = vec![false; keys64.len()];
        a.contains_batch(&keys64, &mut out);
        let mut hout = vec![false; keys64.len()];
        let hashes: Vec<u64> = keys64.iter().map(|k| a.hash(k)).collect();
        a.contains_hash_batch(&hashes, &mut hout);
        a == b
            && out.iter().all(|&x| x)
            && out == hout
            && a.count_batch(&keys32) == keys32.len()
            && a.remove_batch(&keys64).unwrap() == keys64.len()
    }

    fn to_bloom_answers_equal(members: Vec<u64>, queries: Vec<u64>, config: u8) -> bool {
        let mut f = configs(100, 0.05).swap_remove(config as usize % 4);
        f.insert_batch(&members);
        let plain = f.to_bloom();
        plain.probes() == f.probes()
            && plain.layout() == f.layout()
            && plain.seed() == f.seed()
            && members.iter().chain(&queries).all(|k| plain.contains(k) == f.contains(k))
    }

    fn arbitrary_bytes_never_panic(bytes: Vec<u8>) -> bool {
        let _ = CountingBloomFilter::from_bytes(&bytes);
        let _ = CountingBloomFilter::read_from(&bytes[..]);
        true
    }

    fn resealed_header_corruption_is_typed(flips: Vec<(u8, u8)>) -> bool {
        let mut bytes = golden().to_bytes();
        for (at, x) in flips {
            let at = at as usize % 64;
            if (48..64).contains(&at) {
                continue; // checksum and body length: covered by the envelope's own tests
            }
            bytes[at] ^= x;
        }
        common::reseal(&mut bytes);
        match CountingBloomFilter::from_bytes(&bytes) {
            Ok(f) => f.to_bytes() == bytes,
            Err(_) => true,
        }
    }
}

#[test]
fn to_bloom_on_a_loaded_filter() {
    for mut f in configs(20_000, 0.01) {
        f.insert_batch(&keys(5, 20_000));
        let plain: BloomFilter = f.to_bloom();
        let q = keys(6, 200_000);
        let mut a = vec![false; q.len()];
        let mut b = vec![false; q.len()];
        f.contains_batch(&q, &mut a);
        plain.contains_batch(&q, &mut b);
        assert_eq!(a, b);
        assert!(a.iter().any(|&x| x), "some false positives are expected");
    }
}

#[test]
fn min_increase_estimates_better_and_refuses_remove() {
    for bits in CounterBits::ALL {
        let build = || {
            CountingBloomFilter::builder()
                .capacity(2_000)
                .counter_bits(bits)
                .build()
                .unwrap()
        };
        let (mut standard, mut conservative) = (build(), build());
        // A skewed multiset: key i appears about 2000 / (i + 1) / 50 times, at least once.
        let mut truth: HashMap<u64, u32> = HashMap::new();
        for i in 0..2_000u64 {
            let reps = (40 / (i + 1)).max(1) as u32;
            for _ in 0..reps {
                standard.insert(&i);
                conservative.insert_min_increase(&i);
            }
            truth.insert(i, reps);
        }
        let (mut over_std, mut over_min) = (0u64, 0u64);
        for (k, &c) in &truth {
            let (s, m) = (standard.estimate_count(k), conservative.estimate_count(k));
            let c = c.min(bits.max());
            assert!(s >= c && m >= c, "{bits}: key {k}: {s}, {m} < {c}");
            assert!(
                m <= s,
                "{bits}: min-increase never estimates above standard"
            );
            over_std += (s - c) as u64;
            over_min += (m - c) as u64;
        }
        assert!(over_min < over_std, "{bits}: {over_min} vs {over_std}");
        let before = conservative.clone();
        assert_eq!(
            conservative.remove(&1u64),
            Err(Error::RemoveAfterMinIncrease)
        );
        assert_eq!(
            conservative.remove_batch(&[1u64]),
            Err(Error::RemoveAfterMinIncrease)
        );
        assert_eq!(conservative, before);
        let mut restored = CountingBloomFilter::from_bytes(&conservative.to_bytes()).unwrap();
        assert!(restored.min_increase_used());
        assert_eq!(
            restored.remove(&1u64).unwrap_err(),
            Error::RemoveAfterMinIncrease
        );
    }
}

#[test]
fn measured_fpr_meets_target_and_model() {
    let n = 100_000u64;
    for bits in CounterBits::ALL {
        for (i, target) in [1e-2, 1e-3].into_iter().enumerate() {
            let seed = 100 + i as u64;
            let mut f = CountingBloomFilter::builder()
                .capacity(n)
                .fpr(target)
                .counter_bits(bits)
                .seed(seed)
                .build()
                .unwrap();
            let members = common::members(seed, n as usize);
            f.insert_batch(&members);
            let q = (500.0 / target) as usize;
            let queries = common::non_members(seed, q);
            let fp = f.count_batch(&queries) as f64;
            // The projection's fill gives this filter's exact rate; the model predicts it.
            let realized = f.to_bloom().expected_fpr();
            let model = f.model_fpr(n);
            assert!(model <= target, "{bits} {target}: model {model}");
            assert!(
                (fp - realized * q as f64).abs() <= bound(realized * q as f64),
                "{bits} {target}: {fp} vs realized {}",
                realized * q as f64
            );
            assert!(
                (realized / model - 1.0).abs() < 0.1,
                "{bits} {target}: realized {realized} vs model {model}"
            );
            let at_target = target * q as f64;
            assert!(fp <= at_target + bound(at_target), "{bits} {target}: {fp}");
        }
    }
}

#[test]
fn sizing_costs_more_per_key_with_wider_counters() {
    let bytes = |bits| {
        CountingBloomFilter::builder()
            .capacity(1_000_000)
            .counter_bits(bits)
            .build()
            .unwrap()
            .size_in_bytes()
    };
    let plain = BloomFilter::with_capacity(1_000_000, 0.01)
        .unwrap()
        .size_in_bytes();
    let (four, eight) = (bytes(CounterBits::Four), bytes(CounterBits::Eight));
    // Four bits per position at least quadruple the plain filter, and the blocked model
    // charges more as positions per block shrink.
    assert!(
        four >= 4 * plain && eight >= 2 * four,
        "{plain} {four} {eight}"
    );
}

#[test]
fn estimated_len_tracks_inserts_minus_removes() {
    for mut f in configs(50_000, 0.01) {
        f.insert_batch(&keys(7, 40_000));
        f.remove_batch(&keys(7, 10_000)).unwrap();
        let est = f.estimated_len();
        assert!((est - 30_000.0).abs() < 600.0, "{est}");
    }
}

/// The golden filter: small, fixed, with a min-increase insert so the flag is pinned too.
fn golden() -> CountingBloomFilter {
    let mut f = CountingBloomFilter::builder()
        .capacity(20)
        .fpr(0.01)
        .counter_bits(CounterBits::Four)
        .layout(Layout::Sectors4x128)
        .seed(0x0123_4567_89ab_cdef)
        .build()
        .unwrap();
    f.insert_batch(&(0..20u64).collect::<Vec<_>>());
    // What `insert(&"golden")` hashed before the `Key` trait (the `Hash` route, now `ByHash`).
    f.insert(&ByHash("golden"));
    f.remove(&3u64).unwrap();
    f.insert_min_increase(&5u64);
    f
}

#[test]
fn golden_file_pins_version_1() {
    let f = golden();
    let stored = common::golden_file("counting-v1.bin", &f.to_bytes());
    let g = CountingBloomFilter::from_bytes(&stored).unwrap();
    assert_eq!(f, g);
    assert_eq!(stored[10], blockbloom::format::kind::COUNTING);
    assert_eq!(stored[11], 4 | 0x80);
}

#[test]
fn round_trips_every_config() {
    for mut f in configs(3_000, 0.001) {
        f.insert_batch(&keys(9, 3_000));
        for bytes in [f.to_bytes(), {
            let mut v = Vec::new();
            f.write_to(&mut v).unwrap();
            v
        }] {
            assert_eq!(bytes.len(), f.encoded_len());
            let g = CountingBloomFilter::from_bytes(&bytes).unwrap();
            assert_eq!(f, g);
            assert_eq!(
                (
                    g.counter_bits(),
                    g.layout(),
                    g.probes(),
                    g.seed(),
                    g.capacity()
                ),
                (
                    f.counter_bits(),
                    f.layout(),
                    f.probes(),
                    f.seed(),
                    f.capacity()
                )
            );
            let mut two = bytes.clone();
            two.extend_from_slice(&bytes);
            let mut r = &two[..];
            assert_eq!(CountingBloomFilter::read_from(&mut r).unwrap(), f);
            assert_eq!(r.len(), bytes.len(), "read_from stops after one filter");
        }
    }
}

fn set_u64(bytes: &mut [u8], at: usize, v: u64) {
    bytes[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

#[test]
fn every_decoding_error_is_typed() {
    let good = golden().to_bytes();
    let edit = |f: &dyn Fn(&mut Vec<u8>)| {
        let mut b = good.clone();
        f(&mut b);
        common::reseal(&mut b);
        CountingBloomFilter::from_bytes(&b).unwrap_err()
    };
    let header = |e: Error| matches!(e, Error::InvalidHeader(_));
    assert!(header(edit(&|b| b[11] = 5)), "counter bits");
    assert!(header(edit(&|b| b[11] = 4 | 0x40)), "unknown flag");
    assert!(header(edit(&|b| set_u64(b, 24, 0))), "zero blocks");
    assert!(
        header(edit(&|b| set_u64(b, 24, 1 + (1 << 32)))),
        "too many blocks"
    );
    assert!(header(edit(&|b| set_u64(b, 24, 2))), "blocks vs body");
    assert!(header(edit(&|b| set_u64(b, 32, 3 | 8 << 8))), "layout id");
    assert!(
        header(edit(&|b| set_u64(b, 32, 1 | 12 << 8))),
        "12 probes in 8x64"
    );
    assert!(header(edit(&|b| set_u64(b, 32, 2))), "zero probes");
    assert!(
        header(edit(&|b| set_u64(b, 32, 2 | 8 << 8 | 1 << 16))),
        "high bits"
    );
    assert!(matches!(edit(&|b| b[12] = 9), Error::UnsupportedHash(9)));
    common::envelope_errors(&good, CountingBloomFilter::from_bytes);
    // The edit helper really re-seals: the unedited bytes still decode.
    let mut same = good.clone();
    common::reseal(&mut same);
    assert_eq!(CountingBloomFilter::from_bytes(&same).unwrap(), golden());
}
