//! Measured false-positive rates against the exact model, with fixed seeds and statistical
//! bounds (never exact equality).

mod common;

use common::bound;

use blockbloom::BloomFilter;
use common::{members, non_members};

#[test]
fn measured_fpr_matches_model_and_target() {
    let n = 100_000u64;
    for (i, &target) in [1e-1, 1e-2, 1e-3, 1e-4, 1e-5].iter().enumerate() {
        let seed = 1000 + i as u64;
        let mut f = BloomFilter::builder()
            .capacity(n)
            .fpr(target)
            .seed(seed)
            .build()
            .unwrap();
        f.insert_batch(&members(seed, n as usize));
        // Enough queries for about 500 expected false positives.
        let q = ((500.0 / target) as u64).min(50_000_000);
        let fp = f.count_batch(&non_members(seed, q as usize)) as f64;
        // 1. The measured count agrees with this filter's exact rate (from its bits).
        let realized = f.expected_fpr() * q as f64;
        assert!(
            (fp - realized).abs() <= bound(realized),
            "{target}: {fp} vs realized {realized}"
        );
        // 2. The model of the layout predicts this filter's rate: the realized rate of one
        //    filter scatters around the model by far less than 10% at this size.
        let model = f.model_fpr(n);
        assert!(model <= target, "{target}: model {model} above target");
        assert!(
            (f.expected_fpr() / model - 1.0).abs() < 0.1,
            "{target}: realized {} vs model {model}",
            f.expected_fpr()
        );
        // 3. Measured at or below the target, within statistical noise.
        let at_target = target * q as f64;
        assert!(
            fp <= at_target + bound(at_target),
            "{target}: {fp} false positives, > {at_target}"
        );
    }
}

#[test]
fn overfilled_filter_degrades_as_the_model_says() {
    // Twice the capacity: the rate must follow the model, not the target.
    let n = 50_000u64;
    let mut f = BloomFilter::with_capacity(n, 0.01).unwrap();
    f.insert_batch(&members(7, 2 * n as usize));
    let q = 1_000_000u64;
    let fp = f.count_batch(&non_members(7, q as usize)) as f64;
    let model = f.model_fpr(2 * n) * q as f64;
    assert!(model > 0.02 * q as f64);
    assert!(
        (fp - model).abs() <= bound(model) + 0.05 * model,
        "{fp} vs model {model}"
    );
}

#[test]
fn every_tier_measures_the_same_rate() {
    // Tiers build identical bits, so they must count the identical number of false positives.
    let n = 20_000;
    let q = non_members(3, 200_000);
    let counts: Vec<usize> = common::tiers()
        .into_iter()
        .map(|isa| {
            let mut f = BloomFilter::builder()
                .capacity(n)
                .fpr(0.01)
                .isa(isa)
                .build()
                .unwrap();
            f.insert_batch(&members(3, n as usize));
            f.count_batch(&q)
        })
        .collect();
    assert!(counts.windows(2).all(|w| w[0] == w[1]), "{counts:?}");
}

#[test]
fn string_keys_reach_the_target_too() {
    let n = 50_000;
    let mut f = BloomFilter::with_capacity(n, 0.01).unwrap();
    for i in 0..n {
        f.insert(&format!("user:{i}"));
    }
    for i in 0..n {
        assert!(f.contains(&format!("user:{i}")));
    }
    let q = 500_000;
    let fp = (0..q).filter(|i| f.contains(&format!("other:{i}"))).count() as f64;
    let at_target = 0.01 * q as f64;
    assert!(fp <= at_target + bound(at_target), "{fp}");
}

/// The shared key streams are pinned (SplitMix64's published outputs for seed 0), so the seeds
/// these rate checks were tuned with keep meaning the same keys.
#[test]
fn key_streams_are_pinned() {
    let seed0 = [
        0xe220_a839_7b1d_cdaf,
        0x6e78_9e6a_a1b9_65f4,
        0x06c4_5d18_8009_454f,
    ];
    assert_eq!(common::keys(0, 3), seed0);
    assert_eq!(common::keys_in(0, 1..3), seed0[1..]);
    assert_eq!(common::key_at(0, 2), seed0[2]);
    assert_eq!(common::members(0, 3), seed0.map(|k| k >> 1));
    assert!(common::non_members(0, 3).iter().all(|k| k >> 63 == 1));
    assert_eq!(common::keys_xor_indexed(7, 3)[2], 0xa70e_d1d4_8cd2_f00d);
}

/// Layout 8x32 (a key's probes in one 256-bit half): the measured rate agrees with the filter's
/// own rate and the model of its halves, and meets the target, at 1%, 0.1% and 0.01%, on every
/// tier this CPU runs, for `u64` keys on hash id 3 (the pairing it is built for) and id 2.
#[test]
fn layout_8x32_meets_its_model_on_every_tier() {
    use blockbloom::KeyHash;
    use blockbloom::layout::Layout;
    let n = 100_000u64;
    for (i, &target) in [1e-2, 1e-3, 1e-4].iter().enumerate() {
        for hash in [KeyHash::Mx32, KeyHash::Aesh] {
            let seed = 2000 + i as u64;
            let mut f = BloomFilter::builder()
                .capacity(n)
                .fpr(target)
                .seed(seed)
                .layout(Layout::Sectors8x32)
                .key_hash(hash)
                .build()
                .unwrap();
            assert_eq!(f.layout(), Layout::Sectors8x32);
            f.insert_batch(&members(seed, n as usize));
            let q = ((500.0 / target) as u64).min(20_000_000);
            let queries = non_members(seed, q as usize);
            let fp = f.count_batch(&queries);
            let realized = f.expected_fpr() * q as f64;
            assert!(
                (fp as f64 - realized).abs() <= bound(realized),
                "{target} {hash:?}: {fp} vs realized {realized}"
            );
            let model = f.model_fpr(n);
            assert!(model <= target, "{target}: model {model} above target");
            assert!(
                (f.expected_fpr() / model - 1.0).abs() < 0.1,
                "{target} {hash:?}: realized {} vs model {model}",
                f.expected_fpr()
            );
            let at_target = target * q as f64;
            assert!(
                fp as f64 <= at_target + bound(at_target),
                "{target} {hash:?}: {fp} false positives, > {at_target}"
            );
            // The same bits and answers on every tier this CPU runs, batch and single-key.
            for isa in common::tiers() {
                let mut g = BloomFilter::builder()
                    .capacity(n)
                    .fpr(target)
                    .seed(seed)
                    .layout(Layout::Sectors8x32)
                    .key_hash(hash)
                    .isa(isa)
                    .build()
                    .unwrap();
                g.insert_batch(&members(seed, n as usize));
                assert_eq!(g.to_bytes(), f.to_bytes(), "{isa}");
                assert_eq!(g.count_batch(&queries), fp, "{isa}");
            }
            let single = queries[..20_000].iter().filter(|k| f.contains(*k)).count();
            assert_eq!(single, f.count_batch(&queries[..20_000]));
        }
    }
}
