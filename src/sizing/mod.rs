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
//! Planning picks the same shape as bisecting with that model for every candidate, but
//! searches with a close approximation of it (Newton steps, a few evaluations per candidate)
//! and evaluates the model exactly only where the approximation cannot decide, far faster
//! than bisecting (measured at 25e2906; the times now: docs/PERFORMANCE.md, "Planning time").
//! With `std`, the constructors (`with_capacity` and the builders of every filter kind) also
//! remember the last few plans and shapes per thread, so a writer that builds filters of one
//! shape by the thousand plans once; the functions here always plan.
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

// Without `std`, `f64` lacks `ln`, `exp`, ... (with it, or in tests, std's own are found).
#[cfg(not(any(feature = "std", test)))]
use crate::math::F64Math as _;

use alloc::vec::Vec;

use crate::error::Error;

mod exact;
mod fast;
#[cfg(feature = "std")]
mod memo;
mod probes;
#[cfg(test)]
mod reference;
#[cfg(test)]
mod tests;
use crate::layout::{BLOCK_BITS, Layout, MAX_BLOCKS, MAX_PROBES};
use exact::block_moments;
// Named in doc comments only.
#[cfg(doc)]
use exact::block_moments_of;
use probes::{ONE_BLOCK_FIRST, above, ascend, predicted_probes, scaled};

/// The smallest target false-positive rate the planner accepts.
pub const MIN_FPR: f64 = crate::limits::MIN_FPR;

/// The largest explicit budget `Builder::bits_per_key` accepts: one whole block (512 bits) per
/// key. A larger budget is refused with [`Error::InvalidBitsPerKey`].
pub const MAX_BITS_PER_KEY: f64 = crate::limits::MAX_BITS_PER_KEY;

/// A filter whose model false-positive rate at its capacity is at or above this filters
/// nothing: `Builder::build` refuses it with [`Error::FiltersNothing`].
pub const USELESS_FPR: f64 = crate::limits::USELESS_FPR;

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
/// [`false_positive_rate`]: the block-to-block spread divided by the square root of the
/// model's blocks (`num_blocks` times [`Layout::parts`]).
///
/// ```
/// use blockbloom::{layout::Layout, sizing::fpr_std_dev};
/// // The spread shrinks as the filter grows.
/// assert!(fpr_std_dev(50_000, 1_000, Layout::Sectors8x64, 8)
///     > fpr_std_dev(5_000_000, 100_000, Layout::Sectors8x64, 8));
/// ```
pub fn fpr_std_dev(keys: u64, num_blocks: u64, layout: Layout, probes: u32) -> f64 {
    let units = num_blocks * layout.parts() as u64;
    (block_moments(keys, num_blocks, layout, probes, 1).1 / units as f64).sqrt()
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

/// `Error::InvalidFpr` unless `fpr` is in `[MIN_FPR, 1)`.
pub(crate) fn check_fpr(fpr: f64) -> Result<(), Error> {
    if fpr.is_nan() || !(MIN_FPR..1.0).contains(&fpr) {
        return Err(Error::InvalidFpr(fpr));
    }
    Ok(())
}

fn too_many(keys: u64, fpr: f64) -> Error {
    // What the unsectorized bound would ask for, to report an honest order of magnitude.
    let bits = -(keys as f64) * fpr.ln() / (core::f64::consts::LN_2 * core::f64::consts::LN_2);
    Error::TooManyBlocks {
        requested: (bits / BLOCK_BITS as f64).ceil() as u128,
        max: MAX_BLOCKS,
        sized_by: crate::error::SizedBy::Fpr,
    }
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

/// How much more memory than the planned layouts' best a filter that names no layout takes
/// to be in [`Layout::Sectors8x32`]: 5%. That layout tests a key with one register (two in
/// 8x64) and measured the fastest on every SIMD tier (`docs/PERFORMANCE.md`); it costs 3.8% to
/// 4.9% more memory from 0.6% to 2% and more outside (7.4% at 0.1%, 14% at 5%).
pub const DEFAULT_LAYOUT_MEMORY: f64 = 1.05;

/// The rates outside which [`Layout::Sectors8x32`] costs more than [`DEFAULT_LAYOUT_MEMORY`]
/// for every filter of [`DEFAULT_LAYOUT_MIN_SIZED`] keys or more (`tests` checks a grid), so
/// [`plan_default`] plans it only inside them, or for fewer keys (whose rounding can make it
/// free).
const DEFAULT_LAYOUT_RATES: core::ops::RangeInclusive<f64> = 0.003..=0.025;
const DEFAULT_LAYOUT_MIN_SIZED: u64 = 1000;

/// The plan of a filter that names neither a layout nor a probe count
/// (`BloomFilter::with_capacity`, a builder with `fpr` and no `layout`): the smallest filter
/// in [`Layout::Sectors8x32`] if it takes at most [`DEFAULT_LAYOUT_MEMORY`] times the memory of
/// [`plan`]'s, else [`plan`]'s. Both are exact: the measured rate is at or below `fpr` either
/// way.
///
/// ```
/// use blockbloom::{layout::Layout, sizing};
/// let p = sizing::plan_default(1_000_000, 0.01)?;        // +4.3% memory: 8x32
/// assert_eq!(p.layout, Layout::Sectors8x32);
/// let q = sizing::plan_default(1_000_000, 0.001)?;       // +7.4%: the smallest
/// assert_eq!(q, sizing::plan(1_000_000, 0.001)?);
/// assert!(p.num_blocks as f64 <= 1.05 * sizing::plan(1_000_000, 0.01)?.num_blocks as f64);
/// # Ok::<(), blockbloom::Error>(())
/// ```
///
/// # Errors
/// As [`plan`].
pub fn plan_default(capacity: u64, fpr: f64) -> Result<Plan, Error> {
    default_of(capacity, fpr, |layout| {
        plan_with(capacity, fpr, layout, None)
    })
}

/// [`plan_default`]'s choice with `plan_of` planning a layout (or the planned ones).
fn default_of(
    capacity: u64,
    fpr: f64,
    mut plan_of: impl FnMut(Option<Layout>) -> Result<Plan, Error>,
) -> Result<Plan, Error> {
    let least = plan_of(None)?;
    if capacity >= DEFAULT_LAYOUT_MIN_SIZED && !DEFAULT_LAYOUT_RATES.contains(&fpr) {
        return Ok(least);
    }
    match plan_of(Some(Layout::Sectors8x32)) {
        Ok(fast) if fast.num_blocks as f64 <= DEFAULT_LAYOUT_MEMORY * least.num_blocks as f64 => {
            Ok(fast)
        }
        _ => Ok(least),
    }
}

/// [`plan_default`] for the constructors, both plans remembered per thread with `std`.
pub(crate) fn plan_default_for_constructor(capacity: u64, fpr: f64) -> Result<Plan, Error> {
    default_of(capacity, fpr, |layout| {
        plan_for_constructor(capacity, fpr, layout, None, 1)
    })
}

/// [`plan_with`] for the constructors, remembered per thread with `std` (see `memo`): the
/// same plan, and the same errors. `unit_bits` is 1 for the plain filter, the counter width
/// for a counting filter (the same model and margin with `sector_bits / unit_bits` positions
/// per sector).
pub(crate) fn plan_for_constructor(
    capacity: u64,
    fpr: f64,
    layout: Option<Layout>,
    probes: Option<u32>,
    unit_bits: u32,
) -> Result<Plan, Error> {
    let goal = Goal {
        fpr,
        margin_sd: MARGIN_SD,
        unit_bits,
    };
    #[cfg(feature = "std")]
    {
        let key = (capacity, fpr.to_bits(), unit_bits, layout, probes);
        PLANS.with(|recent| recent.get_or(key, || plan_for(capacity, goal, layout, probes)))
    }
    #[cfg(not(feature = "std"))]
    plan_for(capacity, goal, layout, probes)
}

/// [`best_shape`] for the constructors, remembered per thread with `std` (see `memo`).
pub(crate) fn best_shape_for_constructor(
    capacity: u64,
    num_blocks: u64,
    layout: Option<Layout>,
    probes: Option<u32>,
) -> (Layout, u32) {
    let shape = || best_shape(capacity, num_blocks, layout, probes);
    #[cfg(feature = "std")]
    {
        let key = (capacity, num_blocks, layout, probes);
        let Ok(remembered) = SHAPES
            .with(|recent| recent.get_or(key, || Ok::<_, core::convert::Infallible>(shape())));
        remembered
    }
    #[cfg(not(feature = "std"))]
    shape()
}

/// Plans by (capacity, rate's bits, unit bits, layout, probes).
#[cfg(feature = "std")]
type PlanKey = (u64, u64, u32, Option<Layout>, Option<u32>);

/// Shapes by (capacity, blocks, layout, probes).
#[cfg(feature = "std")]
type ShapeKey = (u64, u64, Option<Layout>, Option<u32>);

#[cfg(feature = "std")]
std::thread_local! {
    static PLANS: memo::Recent<PlanKey, Plan> = const { memo::Recent::new() };
    static SHAPES: memo::Recent<ShapeKey, (Layout, u32)> = const { memo::Recent::new() };
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
    if goal.unit_bits != 1 && layout == Some(Layout::Sectors8x32) {
        return Err(Error::InvalidOptions(
            "counting filters take the 8x64 and 4x128 layouts only",
        ));
    }
    let keys = capacity.max(1);
    // The candidates of the exact planner, each with bounds on its block count that are
    // narrowed to the exact count only where a comparison needs it.
    let mut cands: Vec<Candidate> = Vec::with_capacity(12);
    // The last root found and the closed-form guess for its shape: the next shape's guess
    // is scaled by it (the closed form's error changes slowly from shape to shape).
    let mut anchor: Option<(f64, f64)> = None;
    if let Some(l) = layout.filter(|l| l.parts() > 1) {
        return plan_in_parts(keys, goal, l, probes).ok_or_else(|| too_many(keys, fpr));
    }
    for l in Layout::ALL
        .into_iter()
        .filter(|l| layout.map_or(Layout::PLANNED.contains(l), |x| x == *l))
    {
        let mut counts = [0u32; (MAX_PROBES / 4) as usize];
        let mut len = 0;
        for k in l.probe_counts().filter(|k| probes.is_none_or(|x| x == *k)) {
            counts[len] = k;
            len += 1;
        }
        let ks = &counts[..len];
        // A shape and its closed-form guess, made when the walk reaches it.
        let make = |k: u32| {
            let shape = fast::shape(l, k, goal.unit_bits);
            let formula = shape.guess(keys, fpr);
            (shape, formula)
        };
        if keys <= ONE_BLOCK_FIRST {
            let all = ks.iter().map(|&k| (k, make(k)));
            ascend(keys, goal, l, all, &mut anchor, &mut cands);
            continue;
        }
        // Blocks needed are unimodal in k. Start at the count the table predicts (else where
        // the closed form is smallest) and walk outward: upward until a count needs more
        // blocks than the one below it, downward until one needs more than the smallest found
        // by over [`ROUNDS_PREMIUM`] (fewer rounds could win within it). Every count left out
        // is then larger than a kept one with no more rounds, or too large to be allowed: it
        // cannot be chosen.
        let predicted =
            predicted_probes(l, goal.unit_bits, fpr).and_then(|k| ks.iter().position(|&x| x == k));
        let Some(start) = predicted.or_else(|| {
            (0..len).min_by(|&a, &b| {
                let (ga, gb) = (make(ks[a]).1, make(ks[b]).1);
                ga.partial_cmp(&gb).expect("guesses are finite")
            })
        }) else {
            continue;
        };
        let (shape, formula) = make(ks[start]);
        let mut first = shape.bound(keys, goal, scaled(formula, anchor));
        if first.hi > MAX_BLOCKS && shape.refine(keys, goal, &mut first) > MAX_BLOCKS {
            // Too many blocks at the predicted count: every other count is asked, each from
            // a guess scaled by this root (where the closed form is far off, as for sparse
            // 8-bit counters, an unscaled guess cost each count a search up past the limit
            // instead of one evaluation at it).
            anchor = Some((first.root_blocks(), formula));
            let rest = ks.iter().filter(|&&k| k != ks[start]);
            ascend(
                keys,
                goal,
                l,
                rest.map(|&k| (k, make(k))),
                &mut anchor,
                &mut cands,
            );
            continue;
        }
        anchor = Some((first.root_blocks(), formula));
        let first_index = cands.len();
        cands.push(Candidate {
            shape,
            layout: l,
            probes: ks[start],
            bounds: first,
        });
        // Downward: fewer rounds, kept while they could be within the premium.
        let mut least_hi = first.hi;
        for i in (0..start).rev() {
            let (shape, formula) = make(ks[i]);
            let line = (least_hi as f64 * (1.0 + ROUNDS_PREMIUM)).floor();
            let bounds = if line < MAX_BLOCKS as f64 {
                match shape.probe(keys, goal, line as u64) {
                    // More blocks than any allowed plan can have: nor can lower counts.
                    fast::Probe::Fails => break,
                    fast::Probe::Meets(e) => {
                        let t = line as u64;
                        shape.bound_from(keys, goal, t, e, t)
                    }
                    fast::Probe::Doubt(_) => shape.bound(keys, goal, scaled(formula, anchor)),
                }
            } else {
                shape.bound(keys, goal, scaled(formula, anchor))
            };
            let mut bounds = bounds;
            if bounds.hi > MAX_BLOCKS && shape.refine(keys, goal, &mut bounds) > MAX_BLOCKS {
                // Too many blocks, and more below: past the fewest, counts only grow.
                break;
            }
            anchor = Some((bounds.root_blocks(), formula));
            least_hi = least_hi.min(bounds.hi);
            cands.push(Candidate {
                shape,
                layout: l,
                probes: ks[i],
                bounds,
            });
        }
        // Upward: more rounds, kept while smaller than the count below.
        let mut previous = first_index;
        for &k in &ks[start + 1..] {
            let (shape, formula) = make(k);
            let Some(bounds) = above(keys, goal, &shape, &mut cands[previous]) else {
                break;
            };
            anchor = Some((bounds.root_blocks(), formula));
            previous = cands.len();
            cands.push(Candidate {
                shape,
                layout: l,
                probes: k,
                bounds,
            });
        }
    }
    choose_bounded(keys, goal, &mut cands).ok_or_else(|| too_many(keys, fpr))
}

/// The plan for a layout whose blocks hold several parts ([`Layout::parts`]), by the exact
/// model alone: for each probe count the fewest blocks (a search on whole filter blocks,
/// each `parts` blocks of the model), then the smallest, unless fewer rounds need at most
/// [`ROUNDS_PREMIUM`] more. The fast search's shortcuts count blocks of the model, and a
/// one-block model filter (which has no spread to keep a margin for) is no filter of such a
/// layout, so every evaluation is exact; what keeps them few is where each search starts.
/// `Sectors8x32` is the defaults' layout at common rates, so every new shape a constructor
/// plans pays this (plans are remembered per thread).
///
/// The first probe count's search starts at the closed form's guess and gallops away from it
/// (a first step of a 128th of it, then doubling) until the fewest is bracketed, then
/// bisects; a count after it starts at the fewest blocks of the count before, where one
/// evaluation says whether it needs more (blocks needed are unimodal in the count: then the
/// walk stops). Where the model's rate falls as blocks grow, every bracket bisects to the same
/// fewest, so the plans are those of the exponential search from zero this replaced
/// (`fast_planner_matches_reference_on_grid` checks them against `reference::min_blocks`),
/// for a fraction of the evaluations (perf-reports/2026-12-07-parts-plan.md).
fn plan_in_parts(keys: u64, goal: Goal, layout: Layout, probes: Option<u32>) -> Option<Plan> {
    const STEP_FRACTION: u64 = 128;
    let units = layout.parts() as u64;
    let meets = |blocks: u64, k: u32| {
        let (mean, var) = block_moments(keys, blocks, layout, k, goal.unit_bits);
        mean + goal.margin_sd * (var / (blocks * units) as f64).sqrt() <= goal.fpr
    };
    // The fewest blocks in `(lo, hi]`, given that `lo` fails (or is no block) and `hi` meets.
    let bisect = |mut lo: u64, mut hi: u64, k: u32| {
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if meets(mid, k) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        hi
    };
    // The fewest blocks at or below `hi`, which meets: down from it in steps from `step`.
    let down_from = |mut hi: u64, mut step: u64, k: u32| {
        loop {
            let lo = hi.saturating_sub(step);
            if lo == 0 || !meets(lo, k) {
                return bisect(lo, hi, k);
            }
            (hi, step) = (lo, step * 2);
        }
    };
    // The fewest blocks for `k` from nothing known: from the guess, whichever way it is off.
    let fewest = |k: u32| {
        let guess = fast::shape(layout, k, goal.unit_bits).guess(keys, goal.fpr) / units as f64;
        let start = (guess.ceil() as u64).clamp(1, MAX_BLOCKS);
        // The guess is within a few percent of the fewest: a first step of a small part of it.
        let step = (start / STEP_FRACTION).max(1);
        if meets(start, k) {
            return Some(down_from(start, step, k));
        }
        let (mut lo, mut step) = (start, step);
        loop {
            if lo >= MAX_BLOCKS {
                return None;
            }
            let hi = lo.saturating_add(step).min(MAX_BLOCKS);
            if meets(hi, k) {
                return Some(bisect(lo, hi, k));
            }
            (lo, step) = (hi, step * 2);
        }
    };
    let mut plans: Vec<Plan> = Vec::new();
    for k in layout
        .probe_counts()
        .filter(|k| probes.is_none_or(|x| x == *k))
    {
        let num_blocks = match plans.last() {
            // More blocks than the count before: the walk is past its low point.
            Some(p) if !meets(p.num_blocks, k) => break,
            Some(p) => down_from(p.num_blocks, 1, k),
            None => match fewest(k) {
                Some(n) => n,
                None => continue,
            },
        };
        plans.push(Plan {
            num_blocks,
            layout,
            probes: k,
            capacity: keys,
        });
    }
    let smallest = plans.iter().map(|p| p.num_blocks).min()?;
    let allowed = smallest as f64 * (1.0 + ROUNDS_PREMIUM);
    plans
        .into_iter()
        .filter(|p| p.num_blocks as f64 <= allowed)
        .min_by_key(|p| (p.rounds(), p.num_blocks))
}

/// One shape the planner keeps as a candidate, with bounds on its fewest blocks.
struct Candidate {
    shape: fast::Prepared,
    layout: Layout,
    probes: u32,
    bounds: fast::Bounds,
}

impl Candidate {
    /// Its exact fewest blocks.
    fn exact(&mut self, keys: u64, goal: Goal) -> u64 {
        self.shape.refine(keys, goal, &mut self.bounds)
    }

    fn rounds(&self) -> u32 {
        self.probes / self.layout.sectors()
    }
}

/// Among the candidates, the smallest; but one with fewer SIMD rounds wins if it needs at
/// most [`ROUNDS_PREMIUM`] more memory. Candidates are known by bounds, and only the ones a
/// comparison needs are narrowed to their exact block counts:
/// the ones that could be smallest, the ones that could be on either side of the allowance,
/// and the ones with the fewest rounds among the allowed.
fn choose_bounded(keys: u64, goal: Goal, cands: &mut [Candidate]) -> Option<Plan> {
    let allowance = |blocks: u64| blocks as f64 * (1.0 + ROUNDS_PREMIUM);
    // Whether each candidate is within the allowance of the smallest: decided from bounds
    // (the smallest lies between the least lower and the least upper bound), narrowing an
    // undecided candidate, or else the ones that could be smallest, until all are decided.
    let allowed = loop {
        let min_lo = cands.iter().map(|c| c.bounds.lo).min()?;
        let min_hi = cands.iter().map(|c| c.bounds.hi).min()?;
        if min_lo > MAX_BLOCKS {
            return None;
        }
        let (line_lo, line_hi) = (allowance(min_lo), allowance(min_hi));
        let undecided = cands
            .iter()
            .position(|c| c.bounds.hi as f64 > line_lo && c.bounds.lo as f64 <= line_hi);
        match undecided {
            None => break line_lo,
            Some(i) if cands[i].bounds.lo != cands[i].bounds.hi => {
                cands[i].exact(keys, goal);
            }
            Some(_) => {
                // The line itself is in doubt: narrow the ones that could be smallest.
                for c in cands.iter_mut() {
                    if c.bounds.lo <= min_hi && c.bounds.lo != c.bounds.hi {
                        c.exact(keys, goal);
                    }
                }
            }
        }
    };
    let is_allowed = |c: &Candidate| c.bounds.hi as f64 <= allowed;
    let fewest = cands
        .iter()
        .filter(|c| is_allowed(c))
        .map(Candidate::rounds)
        .min()?;
    // Among those, the fewest blocks (then the layout): exact for every one that could be.
    let least_hi = cands
        .iter()
        .filter(|c| is_allowed(c) && c.rounds() == fewest)
        .map(|c| c.bounds.hi)
        .min()?;
    let mut best: Option<Plan> = None;
    for c in cands.iter_mut() {
        if is_allowed(c) && c.rounds() == fewest && c.bounds.lo <= least_hi {
            let plan = Plan {
                num_blocks: c.exact(keys, goal),
                layout: c.layout,
                probes: c.probes,
                capacity: keys,
            };
            if best.is_none_or(|b| (plan.num_blocks, plan.layout) < (b.num_blocks, b.layout)) {
                best = Some(plan);
            }
        }
    }
    best
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
    // Each shape's rate as an interval: a coarse evaluation and its error bound (doubled),
    // narrowed to the exact model only where a comparison below cannot tell.
    let err = 2.0 * fast::Level::Coarse.error();
    let mut rated: Vec<(Layout, u32, f64, f64)> = Layout::ALL
        .into_iter()
        .filter(|l| layout.map_or(Layout::PLANNED.contains(l), |x| x == *l))
        .flat_map(|l| l.probe_counts().map(move |k| (l, k)))
        .filter(|(_, k)| probes.is_none_or(|x| x == *k))
        .map(|(l, k)| {
            let shape = fast::shape(l, k, 1);
            let approx = (num_blocks >= 2)
                .then(|| {
                    shape
                        .eval(
                            keys,
                            (num_blocks * l.parts() as u64) as f64,
                            0.0,
                            fast::Level::Coarse,
                        )
                        .value
                })
                // Where the error bound is tested.
                .filter(|v| (MIN_FPR / 10.0..=0.9).contains(v));
            match approx {
                Some(v) => (l, k, v * (1.0 - err), v * (1.0 + err)),
                None => {
                    let r = false_positive_rate(keys, num_blocks, l, k);
                    (l, k, r, r)
                }
            }
        })
        .collect();
    let exact = |r: &mut (Layout, u32, f64, f64)| {
        if r.2 != r.3 {
            let v = false_positive_rate(keys, num_blocks, r.0, r.1);
            (r.2, r.3) = (v, v);
        }
    };
    // The lowest rate: exact for every shape that could have it.
    let min_hi = rated.iter().map(|r| r.3).fold(f64::INFINITY, f64::min);
    rated.iter_mut().filter(|r| r.2 <= min_hi).for_each(exact);
    let lowest = rated.iter().map(|r| r.3).fold(f64::INFINITY, f64::min);
    // Which shapes are within 5% of it: exact where the interval straddles the line.
    let line = lowest * 1.05;
    rated
        .iter_mut()
        .filter(|r| r.2 <= line && r.3 > line)
        .for_each(exact);
    let allowed = |r: &(Layout, u32, f64, f64)| r.3 <= line;
    let rounds = |r: &(Layout, u32, f64, f64)| r.1 / r.0.sectors();
    let Some(fewest) = rated.iter().filter(|r| allowed(r)).map(rounds).min() else {
        return (Layout::Sectors8x64, 8);
    };
    // Among the fewest rounds, the lowest rate: exact for every shape that could have it.
    let best_hi = rated
        .iter()
        .filter(|r| allowed(r) && rounds(r) == fewest)
        .map(|r| r.3)
        .fold(f64::INFINITY, f64::min);
    rated
        .iter_mut()
        .filter(|r| r.3 <= line && r.1 / r.0.sectors() == fewest && r.2 <= best_hi)
        .for_each(exact);
    rated
        .iter()
        .filter(|r| allowed(r) && rounds(r) == fewest)
        .min_by(|a, b| a.3.partial_cmp(&b.3).expect("rates are finite"))
        .map(|r| (r.0, r.1))
        .unwrap_or((Layout::Sectors8x64, 8))
}

/// Bits per key a layout needs for `fpr` as the filter grows large (the mean model, no
/// margin), with its best probe count: the figures quoted in the
/// [sizing](crate::guide::sizing) guide.
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
    0.5 * (2.0 * core::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}
