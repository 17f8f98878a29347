//! The exact planner as it was before the fast search (issue 12 part 6), kept verbatim as
//! the reference the tests compare [`super::plan_for`] and [`super::block_moments`] with.

use alloc::vec::Vec;

use super::exact::{MAX_POWER, STIRLING};
use super::{Goal, Plan, ROUNDS_PREMIUM, check_fpr, check_probes, too_many};
use crate::error::Error;
use crate::layout::{BLOCK_BITS, Layout, MAX_BLOCKS};

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
pub(crate) fn block_moments(
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

/// Whether `num_blocks` blocks meet the goal at `keys` keys.
pub(crate) fn meets(keys: u64, num_blocks: u64, layout: Layout, probes: u32, goal: Goal) -> bool {
    let units = num_blocks * layout.parts() as u64;
    let (mean, var) = block_moments(keys, units, layout, probes, goal.unit_bits);
    mean + goal.margin_sd * (var / units as f64).sqrt() <= goal.fpr
}

/// Fewest blocks for which `layout` with `probes` keeps `keys` keys at or below `fpr`, or
/// `None` beyond the addressable maximum.
pub(crate) fn min_blocks(keys: u64, goal: Goal, layout: Layout, probes: u32) -> Option<u64> {
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

pub(crate) fn plan_for(
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
        .filter(|l| layout.map_or(Layout::PLANNED.contains(l), |x| x == *l))
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
