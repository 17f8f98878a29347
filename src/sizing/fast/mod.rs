//! The planner's search, fast: the answers of bisecting with the exact model, from a
//! handful of evaluations of an approximation instead of a few hundred exact ones.
//!
//! * [`Shape::eval`] approximates the goal's value (`mean + margin * sd`) of the exact
//!   model, [`super::block_moments_of`], and its slope in `ln num_blocks`: `ln C(n, mode)`
//!   by Stirling differences instead of `mode` logarithms, and the binomial sum sampled
//!   every `h`-th key count where the summand is wide (the error of sampling a smooth bell
//!   falls like `exp(-2 pi^2 (width / h)^2)`). Three [`Level`]s, each with an error bound
//!   that the tests check with a factor 20 to spare over random shapes, loads and sizes.
//! * The process's shared shapes keep a block's moments per key count in a table filled on
//!   first use ([`Shape::counts`]): they depend on the shape and the count alone, and plan
//!   after plan evaluates the same few dozen counts, so an evaluation's per-count work is a
//!   load instead of stepping `2b + 1` powers and two dot products.
//! * A decision "`num_blocks` meets the goal" is taken from a coarse evaluation, or a fine
//!   one if the coarse value lies within its error of the target, or a pinned one (the
//!   mode's pmf as the exact model rounds it) if the fine one is in doubt too, or the exact
//!   model (for one block, first from a floor under its mean, which settles most "no"s).
//! * A search takes safeguarded Newton steps on `ln value` against `ln num_blocks` (nearly a
//!   straight line) to the root, and bounds the fewest blocks by the integers above the root
//!   moved by the model's error (over the slope) and Newton's: [`Bounds`]. The planner
//!   narrows bounds to the exact count only where a comparison needs it; narrowing searches
//!   again at the fine level, then decides single block counts within the fine bounds. The
//!   exact model's rate falls with the block count, so this is the count the reference's
//!   bisection finds.

// Without `std`, `f64` lacks `ln`, `exp`, ... (with it, or in tests, std's own are found).
#[cfg(not(any(feature = "std", test)))]
use crate::math::F64Math as _;

use super::exact::{BINOM, InBlock, MAX_POWER};
use alloc::boxed::Box;
#[cfg(feature = "std")]
use alloc::vec::Vec;
use core::ops::Deref;
#[cfg(feature = "std")]
use core::sync::atomic::AtomicU64;

use crate::layout::Layout;
#[cfg(feature = "std")]
use crate::layout::MAX_PROBES;

mod decide;
mod eval;
mod newton;
mod one_block;
mod search;
mod sums;
mod tables;

pub(super) use decide::Probe;
pub(super) use eval::Level;
pub(super) use search::Bounds;

/// The model of one (layout, probes, unit) shape, prepared for repeated evaluation.
pub(super) struct Shape {
    model: InBlock,
    probes: u32,
    sectors: u32,
    /// `a` in a sector's mean fill `1 - e^(-a load)`: `-b ln(1 - 1/W)`, for [`Shape::guess`].
    fill_rate: f64,
    step: [f64; MAX_POWER + 1],
    /// `ln step[i]`, for the powers at any key count in one `exp` each.
    ln_step: [f64; MAX_POWER + 1],
    /// The coarse level's moments as one dot product with the powers each: the Stirling
    /// and inclusion-exclusion sums folded into `direct[row][i] = (-1)^i sum_t coef[row][t]
    /// C(t, i)` (O(b) per key count instead of O(b^2); the rounding differs from the exact
    /// model's, within the coarse error bound the tests check).
    direct: [[f64; MAX_POWER + 1]; 2],
    /// Whether [`Shape::direct`] may stand in for the exact sums: not where a power's step
    /// is zero (`2b >= W`), since stepping down then divides by it and the exact sums drop
    /// the resulting NaN term by term (their clamp at zero), which one dot product cannot.
    direct_ok: bool,
    /// `sum_t |coef[row][t]| 2^t`, at least `sum_i |direct[row][i]|`: what the roundings of
    /// the sector's moments scale with (all powers are at most 1), for
    /// [`Shape::one_block_verdict`].
    direct_l1: [f64; 2],
    /// The block moments per key count below [`TABLED_COUNTS`] as the exact model computes
    /// them, filled a chunk at a time on first use; empty but for the process's shared
    /// shapes, which plan after plan evaluate at the same few dozen counts (the moments
    /// depend on the shape and the count alone). Both levels read it: a coarse table by
    /// [`Shape::direct`] was tried, and its fill cost a first plan little less, while every
    /// later plan took more instructions (its sparse counts round to small nonzero rates, which
    /// lengthen the walks down; docs/PERFORMANCE.md, "Planning time").
    #[cfg(feature = "std")]
    counts: Box<[std::sync::OnceLock<Box<CountChunk>>]>,
    /// A floor under one block's mean rate per key count below [`TABLED_COUNTS`], the one
    /// [`Shape::one_block_verdict`] tests first, each computed on first use (its bits, or
    /// [`UNSET`]): up to 128 keys a plan asks every shape whether one block holds its keys,
    /// most fail on this floor alone, and computing it costs powers by squaring and a dot
    /// product per shape and plan. One at a time, not a chunk (as [`Shape::counts`]): a
    /// plan reads one count per shape, and a chunk's sixteen made a tiny filter's first
    /// plan in a process cost far more instructions
    /// (perf-reports/2026-11-27-plan-floor-and-search.md).
    #[cfg(feature = "std")]
    mean_floors: Box<[std::sync::OnceLock<Box<[AtomicU64; COUNT_CHUNK]>>]>,
}

/// A floor of [`Shape::mean_floors`] not yet computed (a NaN's bits; floors are never NaN).
#[cfg(feature = "std")]
const UNSET: u64 = u64::MAX;

/// Key counts per chunk of [`Shape::counts`].
#[cfg(feature = "std")]
const COUNT_CHUNK: usize = 16;

/// Key counts [`Shape::counts`] covers (a block holds about `512 / bits per key`; past this,
/// at rates near 1/2, the moments are computed as needed).
#[cfg(feature = "std")]
const TABLED_COUNTS: usize = 1024;

/// A block's rate and its square's expectation at [`COUNT_CHUNK`] consecutive key counts.
#[cfg(feature = "std")]
type CountChunk = [(f64, f64); COUNT_CHUNK];

/// The prepared model of a shape: from a table built once per process (with `std`) for the
/// plain filter's and the counting filters' units, else made now. Preparing one takes
/// logarithms and powers, a cost a small filter's whole plan would otherwise pay a handful of
/// times (measured at 213ee65).
pub(super) fn shape(layout: Layout, probes: u32, unit_bits: u32) -> Prepared {
    #[cfg(feature = "std")]
    {
        const UNITS: [u32; 3] = [1, 4, 8];
        static TABLE: std::sync::OnceLock<Vec<Shape>> = std::sync::OnceLock::new();
        let per_unit = (MAX_PROBES / 4 + 2 * (MAX_PROBES / 8)) as usize;
        if let Some(u) = UNITS.iter().position(|&u| u == unit_bits) {
            let table = TABLE.get_or_init(|| {
                let mut t = Vec::with_capacity(UNITS.len() * per_unit);
                for u in UNITS {
                    for l in Layout::ALL {
                        for k in l.probe_counts() {
                            t.push(Shape::new(l, k, u).with_count_table());
                        }
                    }
                }
                t
            });
            // Layout::ALL is 8x64 (MAX_PROBES / 8 counts), 4x128 (MAX_PROBES / 4), then 8x32.
            let index = match layout {
                Layout::Sectors8x64 => (probes / 8 - 1) as usize,
                Layout::Sectors4x128 => (MAX_PROBES / 8 + probes / 4 - 1) as usize,
                Layout::Sectors8x32 => (MAX_PROBES / 8 + MAX_PROBES / 4 + probes / 8 - 1) as usize,
            };
            let s = &table[u * per_unit + index];
            debug_assert!(s.probes == probes && s.sectors == layout.sectors());
            return Prepared::Shared(s);
        }
    }
    Prepared::Own(Box::new(Shape::new(layout, probes, unit_bits)))
}

/// A prepared [`Shape`], shared from the table or made for one plan: a pointer either way, so
/// the planner's candidates stay small.
pub(super) enum Prepared {
    #[cfg_attr(not(feature = "std"), allow(dead_code))]
    Shared(&'static Shape),
    Own(Box<Shape>),
}

impl Deref for Prepared {
    type Target = Shape;
    fn deref(&self) -> &Shape {
        match self {
            Prepared::Shared(s) => s,
            Prepared::Own(s) => s,
        }
    }
}

impl Shape {
    pub(super) fn new(layout: Layout, probes: u32, unit_bits: u32) -> Shape {
        let model = InBlock::new(layout, probes, unit_bits);
        let w = (layout.sector_bits() / unit_bits) as f64;
        let step = model.step();
        let mut ln_step = [0.0; MAX_POWER + 1];
        for (l, s) in ln_step.iter_mut().zip(&step).take(model.len()) {
            *l = s.ln();
        }
        let mut direct = [[0.0; MAX_POWER + 1]; 2];
        for (row, e) in [model.b, 2 * model.b].into_iter().enumerate() {
            for (i, d) in direct[row].iter_mut().enumerate().take(e + 1) {
                let sum: f64 = (i.max(1)..=e)
                    .map(|t| model.coef[row][t] * BINOM[t][i])
                    .sum();
                *d = if i % 2 == 0 { sum } else { -sum };
            }
        }
        let direct_ok = 2 * model.b < model.w as usize;
        let direct_l1 = [0, 1].map(|row| {
            (1..=(row + 1) * model.b)
                .map(|t| model.coef[row][t].abs() * BINOM[t].iter().sum::<f64>())
                .sum()
        });
        Shape {
            model,
            probes,
            sectors: layout.sectors(),
            fill_rate: -((probes / layout.sectors()) as f64) * (-1.0 / w).ln_1p(),
            step,
            ln_step,
            direct,
            direct_ok,
            direct_l1,
            #[cfg(feature = "std")]
            counts: Box::new([]),
            #[cfg(feature = "std")]
            mean_floors: Box::new([]),
        }
    }

    /// A first guess of the blocks `keys` keys need for `fpr`: every sector filled to its
    /// mean, `fill(load)^k = fpr` with `fill = 1 - (1 - 1/W)^(b load)`, then one Newton step
    /// for the spread of block loads (Poisson, to second order: `E g(C) = g (1 + load
    /// ((ln g)'' + (ln g)'^2) / 2)`), which needs a lower load.
    pub(super) fn guess(&self, keys: u64, fpr: f64) -> f64 {
        let k = self.probes as f64;
        let a = self.fill_rate;
        let fill = fpr.powf(1.0 / k);
        let load = -(-fill).ln_1p() / a;
        // (ln g)' = k a e / f and (ln g)'' = -k a^2 e / f^2 with e = e^(-a load) = 1 - f.
        let e = 1.0 - fill;
        let d1 = k * a * e / fill;
        let d2 = -k * a * a * e / (fill * fill);
        let corr = (load * (d2 + d1 * d1) / 2.0).max(0.0);
        let load = (load - corr.ln_1p() / d1).max(load * 0.5);
        (keys as f64 / load.max(1e-3)).max(2.0)
    }
}

/// `x.powi(e)` for each of the first `len` entries of `x` (the rest 1.0): square and
/// multiply in the order `powi` does, the same bits, but one pass over the exponent's bits
/// for all of them (instead of a call each).
#[inline(always)]
#[allow(clippy::needless_range_loop)]
fn powi_each(x: &[f64; MAX_POWER + 1], mut e: u32, len: usize) -> [f64; MAX_POWER + 1] {
    let (mut a, mut out) = (*x, [1.0; MAX_POWER + 1]);
    loop {
        if e & 1 != 0 {
            for i in 0..len {
                out[i] *= a[i];
            }
        }
        e >>= 1;
        if e == 0 {
            return out;
        }
        for i in 0..len {
            a[i] *= a[i];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::eval::ln_choose;
    #[cfg(feature = "std")]
    use super::sums::{CountSource, Tabled};
    use super::*;
    use crate::sizing::Goal;
    use crate::sizing::exact::block_moments_of;

    /// Wherever [`Shape::one_block_verdict`] gives a verdict it is the exact model's, at
    /// targets just around the exact value (where the roundings could tip it) and far from
    /// it, with and without the margin; and it gives one for most targets off the value.
    #[test]
    fn one_block_verdicts_are_the_exact_models() {
        let (mut decided, mut asked) = (0u32, 0u32);
        for unit in [1, 4, 8] {
            for l in Layout::ALL {
                for k in l.probe_counts() {
                    // Made for one plan, and shared (with its table of floors).
                    let own = Shape::new(l, k, unit);
                    #[cfg(feature = "std")]
                    let shared = shape(l, k, unit);
                    #[allow(unused_mut)]
                    let mut shapes = alloc::vec![&own];
                    #[cfg(feature = "std")]
                    shapes.push(&*shared);
                    for (s, keys) in shapes.into_iter().flat_map(|s| {
                        (1..=300)
                            .chain((301..=4096).step_by(97))
                            .map(move |keys| (s, keys))
                    }) {
                        let (mean, var) = block_moments_of(&s.model, keys, 1);
                        for margin_sd in [0.0, super::super::MARGIN_SD] {
                            let value = mean + margin_sd * var.sqrt();
                            for d in [-0.5, -1e-3, -1e-9, 0.0, 1e-9, 1e-3, 0.5] {
                                let fpr = value * (1.0 + d);
                                let goal = Goal {
                                    fpr,
                                    margin_sd,
                                    unit_bits: unit,
                                };
                                let exact = value <= fpr;
                                let verdict = s.one_block_verdict(keys, goal);
                                assert!(
                                    verdict.is_none_or(|v| v == exact),
                                    "{l}/{k}/{unit}, {keys} keys, margin {margin_sd}, \
                                     target {fpr:e}: {verdict:?}, exact {exact} ({value:e})"
                                );
                                if d.abs() >= 1e-3 && value > 1e-300 {
                                    asked += 1;
                                    decided += verdict.is_some() as u32;
                                }
                            }
                        }
                    }
                }
            }
        }
        assert!(decided > asked / 2, "{decided} of {asked}");
    }

    /// A walk's reads match the table's chunks (and the computed moments past them) whichever
    /// count comes first, stepping by one or more up and down across chunk edges: the
    /// placeholder chunk of a fresh `Tabled` is never read.
    #[cfg(feature = "std")]
    #[test]
    fn tabled_reads_are_the_table() {
        let shape = shape(Layout::Sectors8x64, 16, 1);
        assert!(shape.tabled(100, Level::Coarse));
        let want = |c: u64| match shape.table_chunk::<2>(c / COUNT_CHUNK as u64) {
            Some(chunk) => chunk[(c % COUNT_CHUNK as u64) as usize],
            None => shape.computed_moments::<2>(c),
        };
        let last = TABLED_COUNTS as u64 + 40;
        for first in [0, 1, 15, 16, 17, 100, 1023, 1024, 1030] {
            for h in [1, 3, 16, 37] {
                let mut t = Tabled::<2>::new(&shape);
                assert_eq!(t.at(first), want(first), "first {first}");
                let (mut up, mut down) = (first, first);
                while up + h <= last || down >= h {
                    if up + h <= last {
                        up += h;
                        assert_eq!(t.up(up), want(up), "first {first}, h {h}, up {up}");
                    }
                    if down >= h {
                        down -= h;
                        assert_eq!(t.down(down), want(down), "first {first}, h {h}");
                    }
                }
            }
        }
        // No evaluation reads the table within a chunk of 2^64 keys.
        assert!(!shape.tabled(u64::MAX - 3, Level::Coarse));
    }

    #[test]
    fn ln_choose_matches_a_sum_of_logs() {
        for n in [
            1.0f64, 2.0, 7.0, 60.0, 256.0, 257.0, 1e3, 12_345.0, 1e6, 1e10, 1e18,
        ] {
            for c in [0.0f64, 1.0, 2.0, 29.0, 30.0, 31.0, 100.0, 5000.0] {
                if c > n {
                    continue;
                }
                let c_min = c.min(n - c);
                let want: f64 = (1..=c_min as u64)
                    .map(|i| ((n - c_min + i as f64) / i as f64).ln())
                    .sum();
                let got = ln_choose(n, c);
                // Up to 256 keys the table's three entries, each within a few units in the
                // last place of `ln n!` at most.
                let table = if n <= 256.0 {
                    2e-15 * (1..=n as u64).map(|i| (i as f64).ln()).sum::<f64>()
                } else {
                    0.0
                };
                assert!(
                    (got - want).abs() <= 1e-13 * want.abs().max(1.0) + table,
                    "C({n}, {c}): {got} vs {want}"
                );
            }
        }
    }
}
