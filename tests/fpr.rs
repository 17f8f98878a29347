//! Measured false-positive rates against the exact model, with fixed seeds and statistical
//! bounds (never exact equality).

use blockbloom::{BloomFilter, Isa};

/// SplitMix64: a fixed, reproducible key stream.
struct Keys(u64);
impl Iterator for Keys {
    type Item = u64;
    fn next(&mut self) -> Option<u64> {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        Some(z ^ (z >> 31))
    }
}

/// Members have the top bit clear, queries have it set: disjoint by construction.
fn members(seed: u64, n: u64) -> Vec<u64> {
    Keys(seed).take(n as usize).map(|k| k >> 1).collect()
}
fn non_members(seed: u64, n: u64) -> Vec<u64> {
    Keys(seed ^ 0x5555)
        .take(n as usize)
        .map(|k| k | 1 << 63)
        .collect()
}

/// Five standard deviations of a binomial count with mean `mean`, plus a little slack for
/// tiny means.
fn bound(mean: f64) -> f64 {
    5.0 * mean.sqrt() + 5.0
}

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
        f.insert_batch(&members(seed, n));
        // Enough queries for about 500 expected false positives.
        let q = ((500.0 / target) as u64).min(50_000_000);
        let fp = f.count_batch(&non_members(seed, q)) as f64;
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
    f.insert_batch(&members(7, 2 * n));
    let q = 1_000_000u64;
    let fp = f.count_batch(&non_members(7, q)) as f64;
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
    let counts: Vec<usize> = Isa::supported()
        .into_iter()
        .map(|isa| {
            let mut f = BloomFilter::builder()
                .capacity(n)
                .fpr(0.01)
                .isa(isa)
                .build()
                .unwrap();
            f.insert_batch(&members(3, n));
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
