//! Confidence intervals of measured rates.
//!
//! A false-positive rate is a binomial proportion: `k` positives in `n` independent
//! non-member lookups. At the 1e-5 and 1e-6 targets a measurement sees a handful of false
//! positives, where the normal approximation (`p ± z sqrt(p(1-p)/n)`) fails: at `k = 0` it is
//! the single point 0, and at small `k` its lower end goes below 0. The Wilson score interval
//! (Wilson 1927; recommended for small counts by Brown, Cai and DasGupta 2001) is the set of
//! rates `p` the score test does not reject, `(k/n - p)^2 <= z^2 p (1 - p) / n`: it stays in
//! [0, 1], is never a point, and has close to its nominal coverage at every count.
//!
//! (Why not Clopper-Pearson: it needs Beta quantiles, and the Rust implementation tried,
//! `statrs` 0.19's `inv_beta_reg`, was 1.3e-4 off in relative terms at `k = 0, n = 1e6`, and
//! one of this module's small-count test cases ran for minutes without returning. Wilson's
//! closed form has no such failure mode.)

/// The two-sided 95% normal quantile, `z` with `P(|Z| > z) = 0.05`.
pub const Z95: f64 = 1.959_963_984_540_054;

/// The Wilson score interval of `successes` in `trials` for normal quantile `z`:
/// `(lower, upper)`, with `0 <= lower <= k/n <= upper <= 1`. With no trials it is `(0, 1)`.
///
/// ```
/// use blockbloom_measure::interval::{Z95, wilson};
///
/// // No false positive in a million lookups: the rate is below about 3.8e-6, not "0".
/// let (lo, hi) = wilson(0, 1_000_000, Z95);
/// assert_eq!(lo, 0.0);
/// assert!(hi > 3.8e-6 && hi < 3.9e-6);
/// ```
pub fn wilson(successes: u64, trials: u64, z: f64) -> (f64, f64) {
    if trials == 0 {
        return (0.0, 1.0);
    }
    let n = trials as f64;
    let p = successes.min(trials) as f64 / n;
    let z2 = z * z;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = z / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    // At k = 0 (k = n) the lower (upper) end is exactly 0 (1); keep rounding from moving it.
    let lower = if successes == 0 {
        0.0
    } else {
        (centre - half).max(0.0)
    };
    let upper = if successes >= trials {
        1.0
    } else {
        (centre + half).min(1.0)
    };
    (lower, upper)
}

/// The 95% interval of `positives` in `trials` ([`wilson`] with [`Z95`]).
pub fn rate_interval95(positives: u64, trials: u64) -> (f64, f64) {
    wilson(positives, trials, Z95)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The score statistic's excess at rate `q`: zero at the interval's ends.
    fn score_gap(k: u64, n: u64, q: f64) -> f64 {
        let p = k as f64 / n as f64;
        (p - q).powi(2) - Z95 * Z95 * q * (1.0 - q) / n as f64
    }

    #[test]
    fn the_ends_are_where_the_score_test_turns() {
        for (k, n) in [
            (1u64, 1_000_000u64),
            (3, 1_000_000),
            (12, 100_000),
            (1000, 100_000),
            (99_990, 100_000),
        ] {
            let (lo, hi) = rate_interval95(k, n);
            let p = k as f64 / n as f64;
            assert!(
                0.0 < lo && lo < p && p < hi && hi < 1.0,
                "{k}/{n}: {lo} {hi}"
            );
            // Relative to the interval's scale, both ends solve the score equation...
            let scale = (hi - lo).powi(2);
            assert!(score_gap(k, n, lo).abs() < 1e-9 * scale, "{k}/{n} lower");
            assert!(score_gap(k, n, hi).abs() < 1e-9 * scale, "{k}/{n} upper");
            // ...and rates just inside are accepted, just outside rejected.
            let eps = (hi - lo) * 1e-3;
            assert!(score_gap(k, n, lo + eps) < 0.0 && score_gap(k, n, hi - eps) < 0.0);
            assert!(score_gap(k, n, lo - eps) > 0.0 && score_gap(k, n, hi + eps) > 0.0);
        }
    }

    #[test]
    fn zero_and_all_have_closed_forms() {
        let n = 1_000_000u64;
        let z2 = Z95 * Z95;
        let (lo, hi) = rate_interval95(0, n);
        assert_eq!(lo, 0.0);
        let want = z2 / (n as f64 + z2);
        assert!((hi - want).abs() < 1e-12 * want, "{hi} vs {want}");
        let (lo, hi) = rate_interval95(n, n);
        assert_eq!(hi, 1.0);
        assert!((lo - n as f64 / (n as f64 + z2)).abs() < 1e-12);
        assert_eq!(rate_interval95(0, 0), (0.0, 1.0));
    }

    #[test]
    fn a_handful_of_positives_is_not_degenerate() {
        let n = 1_000_000u64;
        for k in [0u64, 1, 3] {
            let (lo, hi) = rate_interval95(k, n);
            let p = k as f64 / n as f64;
            // The normal approximation: a point at k = 0, a negative lower end above it.
            let normal = Z95 * (p * (1.0 - p) / n as f64).sqrt();
            assert!(normal == 0.0 || p - normal < 0.0, "{k}");
            assert!(hi > p && hi - lo > 1e-6, "{k}: ({lo}, {hi})");
            assert!(lo >= 0.0 && (k == 0 || lo > 0.0), "{k}: {lo}");
        }
        // With many positives Wilson and the normal approximation agree.
        let (k, n) = (50_000u64, 1_000_000u64);
        let (lo, hi) = rate_interval95(k, n);
        let p = k as f64 / n as f64;
        let normal = Z95 * (p * (1.0 - p) / n as f64).sqrt();
        assert!(((hi - lo) / 2.0 - normal).abs() < 0.01 * normal);
        // More trials, narrower; a larger z, wider.
        let (a, b) = rate_interval95(30, 10_000_000);
        let (c, d) = rate_interval95(3, 1_000_000);
        assert!(b - a < d - c);
        let (e, f) = wilson(3, 1_000_000, 2.576);
        assert!(e < c && f > d);
    }
}
