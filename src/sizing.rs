//! Exact sizing of the blocked layouts.
//!
//! The classic formulas (`m = -n ln p / (ln 2)^2`) describe an unblocked filter. A blocked
//! filter is worse at the same size and has a different best `k`, so sizing here uses the
//! model of these exact layouts (Putze, Sanders, Singler 2007, adapted to sectors):
//!
//! * the number of keys `c` in a block is Binomial(n, 1/num_blocks) (Poisson in the limit);
//! * given `c`, each of the `S` sectors of `W` bits received exactly `b·c` uniform probes
//!   (`b = k/S`), independently of the other sectors;
//! * a non-member's `b` probes in a sector all hit set bits with probability
//!   `E[(X/W)^b]`, `X` the sector's set bits, computed exactly from the occupancy
//!   distribution's factorial moments (no "expected fill" shortcut);
//! * the false-positive rate is the binomial-weighted mean of the in-block rate.
//!
//! One filter's own rate scatters around that mean: it averages its blocks, whose rates vary
//! with their load. The model also gives that scatter (from `E[(X/W)^{2b}]`), and a plan keeps
//! the mean plus [`MARGIN_SD`] standard deviations at or below the target, so a small filter
//! meets its target too, not just the average of many. Above about a million keys the margin
//! costs well under 1% of memory.
//!
//! ```
//! use blockbloom::{layout::Layout, sizing};
//!
//! // 1%: about 10.10 bits per key, k = 8 in the cheaper 8x64 layout.
//! let plan = sizing::plan(1_000_000, 0.01).unwrap();
//! assert_eq!((plan.layout, plan.probes), (Layout::Sectors8x64, 8));
//! assert!(plan.bits_per_key() < 10.2);
//! assert!(sizing::false_positive_rate(1_000_000, plan.num_blocks, plan.layout, plan.probes) <= 0.01);
//! ```

use crate::error::Error;
use crate::layout::{BLOCK_BITS, Layout, MAX_BLOCKS, MAX_PROBES};

/// The smallest target false-positive rate the planner accepts.
pub const MIN_FPR: f64 = crate::limits::MIN_FPR;

/// Standard deviations of a filter's own false-positive rate that a plan keeps below the
/// target (about 97.7% of filters then meet it; the rest miss by a hair).
pub const MARGIN_SD: f64 = 2.0;

/// Planners prefer the layout with fewer SIMD rounds per key when it needs at most this much
/// more memory than the smallest plan.
pub const ROUNDS_PREMIUM: f64 = 0.01;

/// A filter shape chosen by the model.
///
/// ```
/// let p = blockbloom::sizing::plan(50_000, 0.001).unwrap();
/// assert_eq!(p.capacity, 50_000);
/// assert!(p.layout.supports_probes(p.probes));
/// assert!(p.bits_per_key() > 15.49); // never below the unsectorized bound
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    /// Blocks of 512 bits.
    pub num_blocks: u64,
    /// How probes spread over a block.
    pub layout: Layout,
    /// Bits set per key.
    pub probes: u32,
    /// The key count the plan was made for.
    pub capacity: u64,
}

impl Plan {
    /// Bits of filter per planned key.
    pub fn bits_per_key(&self) -> f64 {
        self.num_blocks as f64 * BLOCK_BITS as f64 / self.capacity.max(1) as f64
    }

    /// SIMD rounds per key (probes per round = sectors).
    pub fn rounds(&self) -> u32 {
        self.probes / self.layout.sectors()
    }
}

/// Most exponent any moment needs: `2b` with `b = MAX_PROBES / 4`.
const MAX_POWER: usize = 2 * (MAX_PROBES / 4) as usize;

/// Stirling numbers of the second kind, `STIRLING[n][t]`, for `n <= MAX_POWER`.
const STIRLING: [[f64; MAX_POWER + 1]; MAX_POWER + 1] = {
    let mut s = [[0.0; MAX_POWER + 1]; MAX_POWER + 1];
    s[0][0] = 1.0;
    let mut n = 1;
    while n <= MAX_POWER {
        let mut t = 1;
        while t <= n {
            s[n][t] = t as f64 * s[n - 1][t] + s[n - 1][t - 1];
            t += 1;
        }
        n += 1;
    }
    s
};

/// The in-block model of one layout and probe count.
struct InBlock {
    sectors: i32,
    b: usize,
    w: f64,
}

impl InBlock {
    /// The model of `layout` with `probes` probes whose positions are `unit_bits`-bit fields
    /// (1 for the plain filter, the counter width for a counting filter): a sector then has
    /// `sector_bits / unit_bits` positions.
    fn new(layout: Layout, probes: u32, unit_bits: u32) -> InBlock {
        InBlock {
            sectors: layout.sectors() as i32,
            b: (probes / layout.sectors()) as usize,
            w: (layout.sector_bits() / unit_bits) as f64,
        }
    }

    /// `(1 - i/W)^b` for `i` in `0..=2b`: the factor one more key multiplies `pw[i]` by.
    fn step(&self) -> [f64; MAX_POWER + 1] {
        let mut out = [1.0; MAX_POWER + 1];
        for (i, o) in out.iter_mut().enumerate().take(2 * self.b + 1) {
            *o = (1.0 - i as f64 / self.w).powi(self.b as i32);
        }
        out
    }

    /// `E[(X/W)^e]` for a sector after `m` probes, given `pw[i] = (1 - i/W)^m`:
    /// the Stirling expansion over `t` distinct bits, each term the inclusion-exclusion
    /// probability that `t` given bits are all set.
    fn sector_moment(&self, pw: &[f64; MAX_POWER + 1], e: usize) -> f64 {
        let mut total = 0.0;
        let mut falling = 1.0; // (W)_t / W^t
        for (t, &stirling) in STIRLING[e].iter().enumerate().take(e + 1).skip(1) {
            falling *= (self.w - (t as f64 - 1.0)) / self.w;
            let mut all_set = 0.0;
            let mut binom = 1.0;
            for (i, p) in pw.iter().enumerate().take(t + 1) {
                all_set += if i % 2 == 0 { binom * p } else { -binom * p };
                binom = binom * (t - i) as f64 / (i + 1) as f64;
            }
            total += stirling * falling * all_set.max(0.0) / self.w.powi((e - t) as i32);
        }
        total.clamp(0.0, 1.0)
    }

    /// A block's false-positive rate and its square's expectation, given its powers.
    fn moments(&self, pw: &[f64; MAX_POWER + 1]) -> (f64, f64) {
        (
            self.sector_moment(pw, self.b).powi(self.sectors),
            self.sector_moment(pw, 2 * self.b).powi(self.sectors),
        )
    }
}

/// Mean and variance, over blocks, of the per-block false-positive rate of a filter of
/// `num_blocks` blocks holding `keys` keys.
fn block_moments(
    keys: u64,
    num_blocks: u64,
    layout: Layout,
    probes: u32,
    unit_bits: u32,
) -> (f64, f64) {
    assert!(num_blocks > 0, "a filter has at least one block");
    assert!(
        layout.supports_probes(probes),
        "{probes} probes do not fit {layout}"
    );
    if keys == 0 {
        return (0.0, 0.0);
    }
    let model = InBlock::new(layout, probes, unit_bits);
    let step = model.step();
    let powers_at = |c: u64| {
        let mut pw = [1.0; MAX_POWER + 1];
        for (p, s) in pw.iter_mut().zip(&step) {
            *p = s.powf(c as f64);
        }
        pw
    };
    if num_blocks == 1 {
        let (m1, m2) = model.moments(&powers_at(keys));
        return (m1, m2 - m1 * m1);
    }
    // Binomial(keys, 1/num_blocks), summed outward from the mode until terms vanish; the
    // powers move by one `step` per key.
    let n = keys as f64;
    let p = 1.0 / num_blocks as f64;
    let ratio = p / (1.0 - p);
    let mode = ((n + 1.0) * p).floor().min(n) as u64;
    // ln C(n, mode) as a sum of logs: exact enough, and the mode is a few thousand at most.
    let mut ln_pmf = mode as f64 * p.ln() + (n - mode as f64) * (-p).ln_1p();
    for i in 1..=mode {
        ln_pmf += ((n - mode as f64 + i as f64) / i as f64).ln();
    }
    let pmf_mode = ln_pmf.exp();
    let (mut s1, mut s2) = model.moments(&powers_at(mode));
    s1 *= pmf_mode;
    s2 *= pmf_mode;
    let small = |pmf: f64| pmf < 1e-18 * pmf_mode || pmf == 0.0;
    let (mut pmf, mut c, mut pw) = (pmf_mode, mode, powers_at(mode));
    while c < keys {
        pmf *= (n - c as f64) / (c as f64 + 1.0) * ratio;
        c += 1;
        for (x, s) in pw.iter_mut().zip(&step) {
            *x *= s;
        }
        let (m1, m2) = model.moments(&pw);
        s1 += pmf * m1;
        s2 += pmf * m2;
        if small(pmf) {
            break;
        }
    }
    let (mut pmf, mut c, mut pw) = (pmf_mode, mode, powers_at(mode));
    while c > 0 {
        pmf *= c as f64 / (n - c as f64 + 1.0) / ratio;
        c -= 1;
        for (x, s) in pw.iter_mut().zip(&step) {
            *x /= s;
        }
        let (m1, m2) = model.moments(&pw);
        s1 += pmf * m1;
        s2 += pmf * m2;
        if small(pmf) || pmf * m1 < 1e-24 {
            break;
        }
    }
    let mean = s1.min(1.0);
    (mean, (s2 - mean * mean).max(0.0))
}

/// The model's false-positive rate of a filter of `num_blocks` blocks with `probes` bits per
/// key in `layout`, holding `keys` distinct keys, for a key not in it (ideal hash assumed):
/// the mean over all such filters.
///
/// ```
/// use blockbloom::{layout::Layout, sizing::false_positive_rate};
/// let p = false_positive_rate(10_000, 200, Layout::Sectors8x64, 8);
/// assert!(p > 0.0 && p < 0.05);
/// ```
pub fn false_positive_rate(keys: u64, num_blocks: u64, layout: Layout, probes: u32) -> f64 {
    block_moments(keys, num_blocks, layout, probes, 1).0
}

/// [`false_positive_rate`] for probes that land on `unit_bits`-bit fields (a counting
/// filter's counters) instead of single bits.
pub(crate) fn false_positive_rate_units(
    keys: u64,
    num_blocks: u64,
    layout: Layout,
    probes: u32,
    unit_bits: u32,
) -> f64 {
    block_moments(keys, num_blocks, layout, probes, unit_bits).0
}

/// The standard deviation of one filter's false-positive rate around
/// [`false_positive_rate`]: the block-to-block spread divided by `sqrt(num_blocks)`.
///
/// ```
/// use blockbloom::{layout::Layout, sizing::fpr_std_dev};
/// // The spread shrinks as the filter grows.
/// assert!(fpr_std_dev(50_000, 1_000, Layout::Sectors8x64, 8)
///     > fpr_std_dev(5_000_000, 100_000, Layout::Sectors8x64, 8));
/// ```
pub fn fpr_std_dev(keys: u64, num_blocks: u64, layout: Layout, probes: u32) -> f64 {
    (block_moments(keys, num_blocks, layout, probes, 1).1 / num_blocks as f64).sqrt()
}

/// What a plan must satisfy: the target rate, and how many standard deviations of one
/// filter's rate must fit under it.
#[derive(Clone, Copy)]
struct Goal {
    fpr: f64,
    margin_sd: f64,
    /// Bits per probe position: 1 for the plain filter, the counter width when counting.
    unit_bits: u32,
}

/// Whether `num_blocks` blocks meet the goal at `keys` keys.
fn meets(keys: u64, num_blocks: u64, layout: Layout, probes: u32, goal: Goal) -> bool {
    let (mean, var) = block_moments(keys, num_blocks, layout, probes, goal.unit_bits);
    mean + goal.margin_sd * (var / num_blocks as f64).sqrt() <= goal.fpr
}

/// `Ok` if `probes` fits some layout: a multiple of 4 in `4..=MAX_PROBES`.
pub(crate) fn check_probes(probes: u32, layout: Option<Layout>) -> Result<(), Error> {
    let fits = match layout {
        Some(l) => l.supports_probes(probes),
        None => Layout::ALL.iter().any(|l| l.supports_probes(probes)),
    };
    if fits {
        Ok(())
    } else {
        Err(Error::InvalidProbes(probes))
    }
}

fn check_fpr(fpr: f64) -> Result<(), Error> {
    if fpr.is_nan() || !(MIN_FPR..1.0).contains(&fpr) {
        return Err(Error::InvalidFpr(fpr));
    }
    Ok(())
}

/// Fewest blocks for which `layout` with `probes` keeps `keys` keys at or below `fpr`, or
/// `None` beyond the addressable maximum.
fn min_blocks(keys: u64, goal: Goal, layout: Layout, probes: u32) -> Option<u64> {
    // Exponential search for a size that meets the target, then bisect.
    let mut lo = 0u64; // fails (or is zero blocks)
    let mut hi = ((keys as f64 * 4.0 / BLOCK_BITS as f64).ceil() as u64).max(1);
    while !meets(keys, hi, layout, probes, goal) {
        lo = hi;
        hi = hi.saturating_mul(2);
        if hi > MAX_BLOCKS * 2 {
            return None;
        }
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if meets(keys, mid, layout, probes, goal) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    (hi <= MAX_BLOCKS).then_some(hi)
}

fn too_many(keys: u64, fpr: f64) -> Error {
    // What the unsectorized bound would ask for, to report an honest order of magnitude.
    let bits = -(keys as f64) * fpr.ln() / (std::f64::consts::LN_2 * std::f64::consts::LN_2);
    Error::TooManyBlocks {
        requested: (bits / BLOCK_BITS as f64).ceil() as u128,
        max: MAX_BLOCKS,
    }
}

/// Among candidate plans, the smallest; but one with fewer SIMD rounds wins if it needs at
/// most [`ROUNDS_PREMIUM`] more memory.
fn choose(candidates: &[Plan]) -> Option<Plan> {
    let smallest = candidates.iter().map(|p| p.num_blocks).min()?;
    let allowed = smallest as f64 * (1.0 + ROUNDS_PREMIUM);
    candidates
        .iter()
        .filter(|p| p.num_blocks as f64 <= allowed)
        .min_by_key(|p| (p.rounds(), p.num_blocks, p.layout))
        .copied()
}

/// The smallest filter (its layout and probe count) that holds `capacity` keys at a
/// false-positive rate at or below `fpr`, by the exact model, margin included. A capacity of
/// 0 plans for 1 key.
///
/// # Errors
/// [`Error::InvalidFpr`] unless `fpr` is in `[MIN_FPR, 1)`; [`Error::TooManyBlocks`] if the
/// filter would need more than 2^32 blocks.
pub fn plan(capacity: u64, fpr: f64) -> Result<Plan, Error> {
    plan_with(capacity, fpr, None, None)
}

/// [`plan`] with the layout and/or the probe count fixed.
///
/// ```
/// use blockbloom::{layout::Layout, sizing};
/// let p = sizing::plan_with(10_000, 0.01, Some(Layout::Sectors4x128), Some(4))?;
/// assert_eq!((p.layout, p.probes), (Layout::Sectors4x128, 4));
/// assert!(p.bits_per_key() > 10.5); // k = 4 is not the best for 1%
/// # Ok::<(), blockbloom::Error>(())
/// ```
///
/// # Errors
/// As [`plan`], plus [`Error::InvalidProbes`] if the probe count fits no (or not the given)
/// layout.
pub fn plan_with(
    capacity: u64,
    fpr: f64,
    layout: Option<Layout>,
    probes: Option<u32>,
) -> Result<Plan, Error> {
    plan_for(
        capacity,
        Goal {
            fpr,
            margin_sd: MARGIN_SD,
            unit_bits: 1,
        },
        layout,
        probes,
    )
}

/// [`plan_with`] for a counting filter whose probes land on `unit_bits`-bit counters: the
/// same model and margin with `sector_bits / unit_bits` positions per sector.
pub(crate) fn plan_units(
    capacity: u64,
    fpr: f64,
    layout: Option<Layout>,
    probes: Option<u32>,
    unit_bits: u32,
) -> Result<Plan, Error> {
    plan_for(
        capacity,
        Goal {
            fpr,
            margin_sd: MARGIN_SD,
            unit_bits,
        },
        layout,
        probes,
    )
}

fn plan_for(
    capacity: u64,
    goal: Goal,
    layout: Option<Layout>,
    probes: Option<u32>,
) -> Result<Plan, Error> {
    let fpr = goal.fpr;
    check_fpr(fpr)?;
    if let Some(k) = probes {
        check_probes(k, layout)?;
    }
    let keys = capacity.max(1);
    let mut candidates = Vec::new();
    for l in Layout::ALL
        .into_iter()
        .filter(|l| layout.is_none_or(|x| x == *l))
    {
        // Blocks needed are unimodal in k: stop once they start to grow again.
        let mut previous: Option<u64> = None;
        for k in l.probe_counts().filter(|k| probes.is_none_or(|x| x == *k)) {
            let Some(num_blocks) = min_blocks(keys, goal, l, k) else {
                if previous.is_some() {
                    break;
                }
                continue;
            };
            if previous.is_some_and(|p| num_blocks > p) {
                break;
            }
            previous = Some(num_blocks);
            candidates.push(Plan {
                num_blocks,
                layout: l,
                probes: k,
                capacity: keys,
            });
        }
    }
    choose(&candidates).ok_or_else(|| too_many(keys, fpr))
}

/// The best layout and probe count for a filter of `num_blocks` blocks holding `capacity`
/// keys: the lowest model rate, except that fewer SIMD rounds win within 5% of it.
///
/// ```
/// use blockbloom::{layout::Layout, sizing::best_shape};
/// // 20 bits per key: 12 probes in 4x128 beat every 8x64 shape.
/// assert_eq!(best_shape(2560, 100, None, None), (Layout::Sectors4x128, 12));
/// ```
pub fn best_shape(
    capacity: u64,
    num_blocks: u64,
    layout: Option<Layout>,
    probes: Option<u32>,
) -> (Layout, u32) {
    let keys = capacity.max(1);
    let rated: Vec<(Layout, u32, f64)> = Layout::ALL
        .into_iter()
        .filter(|l| layout.is_none_or(|x| x == *l))
        .flat_map(|l| l.probe_counts().map(move |k| (l, k)))
        .filter(|(_, k)| probes.is_none_or(|x| x == *k))
        .map(|(l, k)| (l, k, false_positive_rate(keys, num_blocks, l, k)))
        .collect();
    let lowest = rated.iter().map(|r| r.2).fold(f64::INFINITY, f64::min);
    rated
        .iter()
        .filter(|r| r.2 <= lowest * 1.05)
        .min_by(|a, b| {
            (a.1 / a.0.sectors(), a.2)
                .partial_cmp(&(b.1 / b.0.sectors(), b.2))
                .expect("rates are finite")
        })
        .map(|r| (r.0, r.1))
        .unwrap_or((Layout::Sectors8x64, 8))
}

/// Bits per key a layout needs for `fpr` as the filter grows large (the mean model, no
/// margin), with its best probe count: the figures quoted in the README.
///
/// ```
/// use blockbloom::{layout::Layout, sizing::asymptotic_bits_per_key};
/// let (bits, k) = asymptotic_bits_per_key(0.0001, Layout::Sectors4x128)?;
/// assert!(bits < 21.9 * 1.03 && k == 12);
/// # Ok::<(), blockbloom::Error>(())
/// ```
pub fn asymptotic_bits_per_key(fpr: f64, layout: Layout) -> Result<(f64, u32), Error> {
    let goal = Goal {
        fpr,
        margin_sd: 0.0,
        unit_bits: 1,
    };
    let p = plan_for(1 << 26, goal, Some(layout), None)?;
    Ok((p.bits_per_key(), p.probes))
}

/// `ln Γ(x)` for `x >= 1` (Lanczos, g = 7, nine terms; relative error below 1e-13).
pub(crate) fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + G + 0.5;
    for (i, &c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The unsectorized 512-bit best-k bound (DESIGN.md, from Putze et al.).
    const BOUND: [(f64, f64); 3] = [(1e-2, 9.90), (1e-3, 15.49), (1e-4, 21.9)];

    #[test]
    fn chosen_plans_within_three_percent_of_best_k_bound() {
        for (fpr, bound) in BOUND {
            let p = plan(1 << 26, fpr).unwrap();
            let bits = p.bits_per_key();
            assert!(
                bits <= bound * 1.03,
                "fpr {fpr}: {bits} bits/key vs bound {bound}"
            );
            assert!(
                bits >= bound * 0.995,
                "fpr {fpr}: {bits} below the bound {bound}?"
            );
        }
    }

    #[test]
    fn layouts_against_the_bound() {
        // 4x128 stays within 2% of the bound everywhere; 8x64 only where k = 8 fits.
        for (fpr, bound) in BOUND {
            let (bits, _) = asymptotic_bits_per_key(fpr, Layout::Sectors4x128).unwrap();
            assert!(bits <= bound * 1.02, "4x128 at {fpr}: {bits}");
        }
        let (bits, k) = asymptotic_bits_per_key(1e-2, Layout::Sectors8x64).unwrap();
        assert!(bits <= 9.90 * 1.03 && k == 8, "{bits} {k}");
        let (bits, _) = asymptotic_bits_per_key(1e-4, Layout::Sectors8x64).unwrap();
        assert!(
            bits > 21.9 * 1.03,
            "8x64 at 0.01% should miss the 3% band: {bits}"
        );
    }

    #[test]
    fn chosen_layouts() {
        let l = |fpr| {
            let p = plan(1 << 26, fpr).unwrap();
            (p.layout, p.probes)
        };
        assert_eq!(l(1e-1), (Layout::Sectors4x128, 4));
        assert_eq!(l(1e-2), (Layout::Sectors8x64, 8));
        assert_eq!(l(1e-3), (Layout::Sectors8x64, 8));
        assert_eq!(l(1e-4), (Layout::Sectors4x128, 12));
    }

    fn moment_brute_force(model: &InBlock, m: u32, e: usize) -> f64 {
        // E[(X/W)^e] by dynamic programming over the number of set bits.
        let w = model.w as usize;
        let mut dist = vec![0.0; w + 1];
        dist[0] = 1.0;
        for _ in 0..m {
            let mut next = vec![0.0; w + 1];
            for (x, p) in dist.iter().enumerate() {
                next[x] += p * x as f64 / w as f64;
                if x < w {
                    next[x + 1] += p * (w - x) as f64 / w as f64;
                }
            }
            dist = next;
        }
        dist.iter()
            .enumerate()
            .map(|(x, p)| p * (x as f64 / w as f64).powi(e as i32))
            .sum()
    }

    #[test]
    fn sector_moments_match_brute_force() {
        for (layout, unit) in Layout::ALL
            .into_iter()
            .flat_map(|l| [(l, 1), (l, 4), (l, 8)])
        {
            for k in [layout.sectors(), 2 * layout.sectors()] {
                let model = InBlock::new(layout, k, unit);
                let step = model.step();
                for c in [0u32, 1, 5, 20, 60] {
                    let mut pw = [1.0; MAX_POWER + 1];
                    for (p, s) in pw.iter_mut().zip(&step) {
                        *p = s.powi(c as i32);
                    }
                    for e in [model.b, 2 * model.b] {
                        let m = model.b as u32 * c;
                        let got = model.sector_moment(&pw, e);
                        let want = moment_brute_force(&model, m, e);
                        assert!(
                            (got - want).abs() < 1e-12,
                            "{layout}/{unit} k={k} c={c} e={e}: {got} vs {want}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn plan_is_minimal_and_meets_target_with_margin() {
        for fpr in [1e-1, 1e-2, 1e-3, 1e-4, 1e-5] {
            let p = plan(100_000, fpr).unwrap();
            let mean = false_positive_rate(100_000, p.num_blocks, p.layout, p.probes);
            let sd = fpr_std_dev(100_000, p.num_blocks, p.layout, p.probes);
            assert!(mean + MARGIN_SD * sd <= fpr, "{fpr}: {mean} + 2 x {sd}");
            let goal = Goal {
                fpr,
                margin_sd: MARGIN_SD,
                unit_bits: 1,
            };
            assert!(!meets(100_000, p.num_blocks - 1, p.layout, p.probes, goal));
        }
    }

    #[test]
    fn margin_costs_little_for_large_filters() {
        let small = plan(10_000, 0.01).unwrap().bits_per_key();
        let large = plan(100_000_000, 0.01).unwrap().bits_per_key();
        assert!(small > large, "{small} vs {large}");
        assert!(large < 10.10 * 1.005, "{large}");
    }

    #[test]
    fn rejects_bad_fpr_and_probes() {
        for fpr in [0.0, -0.1, 1.0, 1.5, f64::NAN, f64::INFINITY, 1e-12] {
            assert!(matches!(plan(10, fpr), Err(Error::InvalidFpr(_))), "{fpr}");
        }
        assert_eq!(
            plan_with(10, 0.01, Some(Layout::Sectors8x64), Some(12)),
            Err(Error::InvalidProbes(12))
        );
        assert_eq!(
            plan_with(10, 0.01, None, Some(6)),
            Err(Error::InvalidProbes(6))
        );
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

    #[test]
    fn ln_gamma_matches_factorials() {
        let mut fact = 1.0f64;
        for n in 1..30u32 {
            fact *= n as f64;
            let got = ln_gamma(n as f64 + 1.0);
            assert!((got - fact.ln()).abs() < 1e-10 * fact.ln().max(1.0), "{n}");
        }
    }
}
