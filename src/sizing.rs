//! Exact sizing of the blocked layout.
//!
//! The classic formulas (`m = -n ln p / (ln 2)^2`) describe an unblocked filter. A blocked
//! filter is worse at the same size and has a different best `k`, so sizing here uses the
//! model of this exact layout (Putze, Sanders, Singler 2007, adapted to sectors):
//!
//! * the number of keys `c` in a block is Binomial(n, 1/num_blocks) (Poisson in the limit);
//! * given `c`, each of the four 128-bit sectors received exactly `b·c` uniform probes
//!   (`b = k/4`), independently of the other sectors;
//! * a non-member's `b` probes in a sector all hit set bits with probability
//!   `E[(X/128)^b]`, `X` the sector's set bits, computed exactly from the occupancy
//!   distribution's factorial moments (no "expected fill" shortcut);
//! * the false-positive rate is the binomial-weighted mean of the in-block rate.
//!
//! ```
//! use blockbloom::sizing;
//!
//! // 1% needs about 10.06 bits per key with the best k (k = 8).
//! let plan = sizing::plan(1_000_000, 0.01).unwrap();
//! assert_eq!(plan.probes, 8);
//! assert!(plan.bits_per_key() < 10.2);
//! assert!(sizing::false_positive_rate(1_000_000, plan.num_blocks, plan.probes) <= 0.01);
//! ```

use crate::error::Error;
use crate::layout::{BLOCK_BITS, MAX_BLOCKS, MAX_PROBES, SECTOR_BITS, SECTORS};

/// The smallest target false-positive rate `with_capacity` accepts.
pub const MIN_FPR: f64 = 1e-9;

/// A filter shape chosen by the model.
///
/// ```
/// use blockbloom::sizing::{self, MIN_FPR};
///
/// let plan = sizing::plan(50_000, 0.001)?;
/// assert_eq!(plan.capacity, 50_000);
/// assert!(plan.bits_per_key() < 16.0 && plan.probes % 4 == 0);
/// let k12 = sizing::plan_with_probes(50_000, 0.001, 12)?;
/// assert!(k12.num_blocks >= plan.num_blocks);           // the free choice is never worse
/// assert_eq!(sizing::best_probes(50_000, plan.num_blocks), plan.probes);
/// let (bits, k) = sizing::asymptotic_bits_per_key(0.01)?;
/// assert!(bits > 9.9 && bits < 10.2 && k == 8);
/// assert!(sizing::plan(10, MIN_FPR / 2.0).is_err());
/// # Ok::<(), blockbloom::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    /// Blocks of 512 bits.
    pub num_blocks: u64,
    /// Bits set per key (a multiple of 4).
    pub probes: u32,
    /// The key count the plan was made for.
    pub capacity: u64,
}

impl Plan {
    /// Bits of filter per planned key.
    pub fn bits_per_key(&self) -> f64 {
        self.num_blocks as f64 * BLOCK_BITS as f64 / self.capacity.max(1) as f64
    }
}

/// Probability that a sector of 128 bits which received `m` uniform probes has all of a
/// non-member's `b` independent uniform probes set: `E[(X/W)^b]` through Stirling numbers of
/// the second kind and the probability that `t` given bits are all set.
fn sector_hit(m: f64, b: u32) -> f64 {
    let w = SECTOR_BITS as f64;
    // Stirling numbers S(b, t) for b <= MAX_PROBES / SECTORS.
    let mut s = [[0f64; 9]; 9];
    s[0][0] = 1.0;
    for n in 1..=b as usize {
        for t in 1..=n {
            s[n][t] = t as f64 * s[n - 1][t] + s[n - 1][t - 1];
        }
    }
    let mut total = 0.0;
    let mut falling = 1.0; // (W)_t / W^t
    for (t, &stirling) in s[b as usize]
        .iter()
        .enumerate()
        .take(b as usize + 1)
        .skip(1)
    {
        falling *= (w - (t as f64 - 1.0)) / w;
        // P(t given distinct bits all set after m probes), inclusion-exclusion.
        let mut all_set = 0.0;
        let mut binom = 1.0;
        for i in 0..=t {
            let term = binom * (1.0 - i as f64 / w).powf(m);
            all_set += if i % 2 == 0 { term } else { -term };
            binom = binom * (t - i) as f64 / (i + 1) as f64;
        }
        total += stirling * falling * all_set.max(0.0) / w.powi((b as usize - t) as i32);
    }
    total.clamp(0.0, 1.0)
}

/// False-positive rate of a block holding `c` keys with `k` probes each.
fn in_block_fpr(c: u64, k: u32) -> f64 {
    let b = k / SECTORS;
    sector_hit((b as u64 * c) as f64, b).powi(SECTORS as i32)
}

/// The model's false-positive rate of a filter of `num_blocks` blocks, `probes` bits per key,
/// holding `keys` distinct keys, for a key not in it (ideal hash assumed).
///
/// ```
/// let p = blockbloom::sizing::false_positive_rate(10_000, 200, 8);
/// assert!(p > 0.0 && p < 0.05);
/// ```
pub fn false_positive_rate(keys: u64, num_blocks: u64, probes: u32) -> f64 {
    assert!(num_blocks > 0, "a filter has at least one block");
    if keys == 0 {
        return 0.0;
    }
    if num_blocks == 1 {
        return in_block_fpr(keys, probes);
    }
    // Binomial(keys, 1/num_blocks), summed outward from the mode until terms vanish.
    let n = keys as f64;
    let p = 1.0 / num_blocks as f64;
    let ln_q = (-p).ln_1p();
    let ratio = p / (1.0 - p);
    let mode = ((n + 1.0) * p).floor().min(n) as u64;
    // ln C(n, mode) as a sum of logs: exact enough, and mode is at most a few thousand.
    let mut ln_pmf = mode as f64 * p.ln() + (n - mode as f64) * ln_q;
    for i in 1..=mode {
        ln_pmf += ((n - mode as f64 + i as f64) / i as f64).ln();
    }
    let pmf_mode = ln_pmf.exp();
    let mut total = pmf_mode * in_block_fpr(mode, probes);
    let mut pmf = pmf_mode;
    let mut c = mode;
    while c < keys {
        pmf *= (n - c as f64) / (c as f64 + 1.0) * ratio;
        c += 1;
        total += pmf * in_block_fpr(c, probes);
        if pmf < 1e-20 * pmf_mode.max(1e-300) || pmf == 0.0 {
            break;
        }
    }
    let mut pmf = pmf_mode;
    let mut c = mode;
    while c > 0 {
        pmf *= c as f64 / (n - c as f64 + 1.0) / ratio;
        c -= 1;
        let f = in_block_fpr(c, probes);
        total += pmf * f;
        if pmf * f < 1e-22 || pmf == 0.0 {
            break;
        }
    }
    total.min(1.0)
}

/// `Ok` if `probes` is a multiple of 4 in `4..=MAX_PROBES`.
pub(crate) fn check_probes(probes: u32) -> Result<(), Error> {
    if probes == 0 || !probes.is_multiple_of(SECTORS) || probes > MAX_PROBES {
        return Err(Error::InvalidProbes(probes));
    }
    Ok(())
}

fn check_fpr(fpr: f64) -> Result<(), Error> {
    if fpr.is_nan() || !(MIN_FPR..1.0).contains(&fpr) {
        return Err(Error::InvalidFpr(fpr));
    }
    Ok(())
}

/// Fewest blocks for which `probes` bits per key keep `keys` keys at or below `fpr`.
fn min_blocks(keys: u64, fpr: f64, probes: u32) -> Result<u64, Error> {
    // Exponential search for a size that meets the target, then bisect.
    let mut lo = 0u64; // fails (or is zero blocks)
    let mut hi = ((keys as f64 * 8.0 / BLOCK_BITS as f64).ceil() as u64).max(1);
    while false_positive_rate(keys, hi, probes) > fpr {
        lo = hi;
        hi = hi.saturating_mul(2);
        if hi > MAX_BLOCKS * 4 {
            return Err(too_many(keys, fpr));
        }
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if false_positive_rate(keys, mid, probes) <= fpr {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Ok(hi)
}

fn too_many(keys: u64, fpr: f64) -> Error {
    // What the unsectorized bound would ask for, to report an honest order of magnitude.
    let bits = -(keys as f64) * fpr.ln() / (std::f64::consts::LN_2 * std::f64::consts::LN_2);
    Error::TooManyBlocks {
        requested: (bits / BLOCK_BITS as f64).ceil() as u128,
        max: MAX_BLOCKS,
    }
}

/// The smallest filter (and its best probe count) that holds `capacity` keys at a measured
/// false-positive rate at or below `fpr`, by the exact model. A capacity of 0 plans for 1 key.
///
/// # Errors
/// [`Error::InvalidFpr`] unless `fpr` is in `[MIN_FPR, 1)`; [`Error::TooManyBlocks`] if the
/// filter would need more than 2^32 blocks.
///
/// ```
/// use blockbloom::sizing::{self, MIN_FPR};
///
/// let plan = sizing::plan(50_000, 0.001)?;
/// assert_eq!(plan.capacity, 50_000);
/// assert!(plan.bits_per_key() < 16.0 && plan.probes % 4 == 0);
/// let k12 = sizing::plan_with_probes(50_000, 0.001, 12)?;
/// assert!(k12.num_blocks >= plan.num_blocks);           // the free choice is never worse
/// assert_eq!(sizing::best_probes(50_000, plan.num_blocks), plan.probes);
/// let (bits, k) = sizing::asymptotic_bits_per_key(0.01)?;
/// assert!(bits > 9.9 && bits < 10.2 && k == 8);
/// assert!(sizing::plan(10, MIN_FPR / 2.0).is_err());
/// # Ok::<(), blockbloom::Error>(())
/// ```
pub fn plan(capacity: u64, fpr: f64) -> Result<Plan, Error> {
    check_fpr(fpr)?;
    let keys = capacity.max(1);
    let mut best: Option<Plan> = None;
    for probes in (SECTORS..=MAX_PROBES).step_by(SECTORS as usize) {
        let Ok(num_blocks) = min_blocks(keys, fpr, probes) else {
            continue;
        };
        if best.is_none_or(|b| num_blocks < b.num_blocks) {
            best = Some(Plan {
                num_blocks,
                probes,
                capacity: keys,
            });
        }
    }
    match best {
        Some(p) if p.num_blocks <= MAX_BLOCKS => Ok(p),
        Some(p) => Err(Error::TooManyBlocks {
            requested: p.num_blocks as u128,
            max: MAX_BLOCKS,
        }),
        None => Err(too_many(keys, fpr)),
    }
}

/// The smallest filter with exactly `probes` bits per key that meets `fpr` at `capacity` keys.
///
/// # Errors
/// As [`plan`], plus [`Error::InvalidProbes`].
///
/// ```
/// let p = blockbloom::sizing::plan_with_probes(10_000, 0.01, 4)?;
/// assert_eq!(p.probes, 4);
/// assert!(p.bits_per_key() > 10.5); // k = 4 is not the best for 1%
/// # Ok::<(), blockbloom::Error>(())
/// ```
pub fn plan_with_probes(capacity: u64, fpr: f64, probes: u32) -> Result<Plan, Error> {
    check_fpr(fpr)?;
    check_probes(probes)?;
    let keys = capacity.max(1);
    let num_blocks = min_blocks(keys, fpr, probes)?;
    if num_blocks > MAX_BLOCKS {
        return Err(Error::TooManyBlocks {
            requested: num_blocks as u128,
            max: MAX_BLOCKS,
        });
    }
    Ok(Plan {
        num_blocks,
        probes,
        capacity: keys,
    })
}

/// The best probe count for a filter of `num_blocks` blocks holding `capacity` keys.
///
/// ```
/// // 20 bits per key: 12 probes beat 8 and 16.
/// assert_eq!(blockbloom::sizing::best_probes(2560, 100), 12);
/// ```
pub fn best_probes(capacity: u64, num_blocks: u64) -> u32 {
    let keys = capacity.max(1);
    (SECTORS..=MAX_PROBES)
        .step_by(SECTORS as usize)
        .map(|k| (k, false_positive_rate(keys, num_blocks, k)))
        .fold((SECTORS, f64::INFINITY), |best, (k, p)| {
            if p < best.1 { (k, p) } else { best }
        })
        .0
}

/// Bits per key the layout needs for `fpr` as the filter grows large (Poisson limit), with the
/// best probe count: the figures quoted in the README.
///
/// ```
/// let (bits, k) = blockbloom::sizing::asymptotic_bits_per_key(0.001)?;
/// assert!(bits < 15.49 * 1.03 && k == 8);
/// # Ok::<(), blockbloom::Error>(())
/// ```
pub fn asymptotic_bits_per_key(fpr: f64) -> Result<(f64, u32), Error> {
    let keys = 1u64 << 26;
    let p = plan(keys, fpr)?;
    Ok((p.bits_per_key(), p.probes))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The unsectorized 512-bit best-k bound (DESIGN.md, from Putze et al.).
    const BOUND: [(f64, f64); 3] = [(1e-2, 9.90), (1e-3, 15.49), (1e-4, 21.9)];

    #[test]
    fn within_three_percent_of_best_k_bound() {
        for (fpr, bound) in BOUND {
            let (bits, _) = asymptotic_bits_per_key(fpr).unwrap();
            assert!(
                bits <= bound * 1.03,
                "fpr {fpr}: {bits} bits/key vs bound {bound}"
            );
            assert!(
                bits >= bound * 0.99,
                "fpr {fpr}: {bits} below the bound {bound}?"
            );
        }
    }

    #[test]
    fn sector_hit_matches_brute_force_for_small_cases() {
        // b = 1: E[X/W] = 1 - (1 - 1/W)^m exactly.
        for m in [0.0, 1.0, 10.0, 200.0] {
            let expect = 1.0 - (1.0 - 1.0 / 128.0f64).powf(m);
            assert!((sector_hit(m, 1) - expect).abs() < 1e-12);
        }
        // b = 2 with m = 1: X = 1, so E[(X/W)^2] = 1/W^2.
        assert!((sector_hit(1.0, 2) - 1.0 / 128.0f64.powi(2)).abs() < 1e-15);
    }

    #[test]
    fn plan_is_monotone_and_meets_target() {
        for fpr in [1e-1, 1e-2, 1e-3, 1e-4, 1e-5] {
            let p = plan(100_000, fpr).unwrap();
            assert!(false_positive_rate(100_000, p.num_blocks, p.probes) <= fpr);
            assert!(false_positive_rate(100_000, p.num_blocks - 1, p.probes) > fpr);
        }
    }

    #[test]
    fn rejects_bad_fpr() {
        for fpr in [0.0, -0.1, 1.0, 1.5, f64::NAN, f64::INFINITY, 1e-12] {
            assert!(matches!(plan(10, fpr), Err(Error::InvalidFpr(_))), "{fpr}");
        }
    }

    #[test]
    fn too_many_blocks_is_an_error() {
        assert!(matches!(
            plan(u64::MAX / 2, 0.01),
            Err(Error::TooManyBlocks { .. })
        ));
        assert!(matches!(
            plan(1 << 40, 0.01),
            Err(Error::TooManyBlocks { .. })
        ));
    }
}
