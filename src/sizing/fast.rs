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

use super::{BINOM, Goal, InBlock, MAX_POWER, block_moments_of, pmf_at_mode, with_b};
use alloc::boxed::Box;
#[cfg(feature = "std")]
use alloc::vec::Vec;
use core::ops::Deref;
#[cfg(feature = "std")]
use core::sync::atomic::{AtomicU64, Ordering};

#[cfg(feature = "std")]
use crate::layout::MAX_PROBES;
use crate::layout::{Layout, MAX_BLOCKS};

/// How closely [`Shape::eval`] follows the exact model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Level {
    /// Sampled at about the summand's width, tails cut at `1e-8` of the sum.
    Coarse,
    /// Sampled at half the width, tails cut where the exact model cuts them.
    Fine,
    /// [`Level::Fine`] with the mode's pmf as the exact model computes it (its `mode`
    /// logarithms) and the moments from powers stepped from the mode's, as the exact model
    /// steps them (never a table): what is left is the rounding of a sampled sum against a
    /// full one. Decides most of what a fine evaluation cannot, for a third of the exact
    /// model's cost or less. Only where [`Level::pinned_serves`].
    Pinned,
}

impl Level {
    /// A bound on `|eval / exact - 1|` for the goal's value: the tests check that the
    /// evaluations stay 20 times inside it.
    pub(super) const fn error(self) -> f64 {
        match self {
            Level::Coarse => 2e-6,
            Level::Fine => 1e-9,
            Level::Pinned => 1e-12,
        }
    }

    /// Whether [`Level::Pinned`] decides at `keys` keys: from 4,096, where its bound was
    /// measured. Over 300,000 random shapes and sizes there, at rates from `1e-10` to 0.95,
    /// the worst `|eval / exact - 1|` was `1.8e-14`, 55 times inside the bound
    /// (`pinned_error_by_rate` in the tests). The fine level's `pmf_mode` alone differs from
    /// the exact model's by up to `2.8e-14 (load + 16)`, and a table's moments from the
    /// exact model's by up to `1e-11` where sparse sectors cancel.
    pub(super) fn pinned_serves(keys: u64) -> bool {
        keys >= 4096
    }

    /// The bound a decision uses on `|eval / exact - 1|` of an evaluation at this level that
    /// came to `value` at `keys` keys in `blocks` blocks: [`Level::error`], or for a fine one
    /// tighter where the tests measured it so (checked 20 times inside, as the levels'
    /// bounds).
    ///
    /// What is left of a fine evaluation's error there is rounding: both ways reach
    /// `pmf_mode` by an `exp` of a sum of terms near `mode |ln q|`, whose roundings grow with
    /// the load, so the bound does too. Over 100,000 random shapes and sizes with at least
    /// 4,096 keys and rates from `1e-4`, the worst was `2.8e-14 (load + 16)`. Not below:
    /// sparse sectors cancel in the inclusion-exclusion sums (up to `4.9e-13 (load + 16)`
    /// near `1e-9`), and with few keys tables and powers differ. (`fine_error_by_rate` in
    /// the tests.) At 1e8 blocks and more, neighbouring counts differ by about `1e-8` of the
    /// rate or less, so with `1e-9` one decision in five or more fell to the exact model, 7
    /// µs at 28 probes and 80 keys per block.
    pub(super) fn bound(self, keys: u64, blocks: f64, value: f64) -> f64 {
        match self {
            Level::Fine if keys >= 4096 && value >= 1e-4 => {
                (1e-12 * (keys as f64 / blocks + 16.0)).min(self.error())
            }
            _ => self.error(),
        }
    }
}

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
    /// later plan took 2-7% more instructions (its sparse counts round to small nonzero
    /// rates, which lengthen the walks down).
    #[cfg(feature = "std")]
    counts: Box<[std::sync::OnceLock<Box<CountChunk>>]>,
    /// A floor under one block's mean rate per key count below [`TABLED_COUNTS`], the one
    /// [`Shape::one_block_verdict`] tests first, each computed on first use (its bits, or
    /// [`UNSET`]): up to 128 keys a plan asks every shape whether one block holds its keys,
    /// most fail on this floor alone, and computing it costs powers by squaring and a dot
    /// product per shape and plan. One at a time, not a chunk (as [`Shape::counts`]): a
    /// plan reads one count per shape, and a chunk's sixteen made a tiny filter's first
    /// plan in a process cost twice the instructions.
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

/// The goal's left-hand side `mean + margin_sd * sd` at some block count, and its slope
/// `d ln value / d ln num_blocks`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Eval {
    pub(super) value: f64,
    pub(super) slope: f64,
}

/// `ln n!` for `n >= 30` (Stirling's series; the first omitted term is below `2e-16`).
fn ln_factorial_series(x: f64) -> f64 {
    let r = 1.0 / x;
    let r2 = r * r;
    (x + 0.5) * x.ln() - x
        + 0.5 * (2.0 * core::f64::consts::PI).ln()
        + r * (1.0 / 12.0 - r2 * (1.0 / 360.0 - r2 * (1.0 / 1260.0 - r2 / 1680.0)))
}

/// The series part of [`ln_factorial_series`] alone (`1/12x - ...`).
fn stirling_tail(x: f64) -> f64 {
    let r = 1.0 / x;
    let r2 = r * r;
    r * (1.0 / 12.0 - r2 * (1.0 / 360.0 - r2 * (1.0 / 1260.0 - r2 / 1680.0)))
}

/// Key counts up to which [`ln_choose`] reads `ln i!` from a table (with `std`).
#[cfg(feature = "std")]
const TABLED_FACTORIALS: usize = 256;

/// `ln i!` for `i <= TABLED_FACTORIALS`, made on first use: the logarithm of the product
/// below 30 (at most 29 roundings before it), [`ln_factorial_series`] above; each within
/// about `1e-15` of `ln i!` relative.
#[cfg(feature = "std")]
fn ln_factorials() -> &'static [f64; TABLED_FACTORIALS + 1] {
    static TABLE: std::sync::OnceLock<Box<[f64; TABLED_FACTORIALS + 1]>> =
        std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t = Box::new([0.0; TABLED_FACTORIALS + 1]);
        let mut product = 1.0f64;
        for (i, l) in t.iter_mut().enumerate().skip(2) {
            product *= i as f64;
            *l = if i < 30 {
                product.ln()
            } else {
                ln_factorial_series(i as f64)
            };
        }
        t
    })
}

/// `ln C(n, c)` for integers `0 <= c <= n`, to about `1e-15 * c ln n` absolute (`2e-15 *
/// ln n!` up to [`TABLED_FACTORIALS`] keys, where three table reads replace a loop of up to
/// 29 divisions or the series: a small filter's plan evaluates it a few dozen times, and
/// the evaluations' error bounds, `1e-9` of the rate at the finest, leave room to spare).
fn ln_choose(n: f64, c: f64) -> f64 {
    #[cfg(feature = "std")]
    if n <= TABLED_FACTORIALS as f64 {
        let t = ln_factorials();
        // Through `u32` (both at most 256): a float-to-`usize` conversion is a branchy
        // sequence on the x86-64 baseline.
        let (n, c) = (n as u32 as usize, c as u32 as usize);
        return t[n] - t[c] - t[n - c];
    }
    let c = c.min(n - c);
    if c < 30.0 {
        // Few factors: the numerators' and the denominators' products apart, one division at
        // the end (a division per factor, up to 29 per evaluation, cost large filters' plans
        // about 2% of their time), the numerators folded into a logarithm before they
        // overflow. `c! < 2^103`, far from overflow.
        let (mut acc, mut num, mut den) = (0.0, 1.0, 1.0);
        let mut i = 1.0;
        while i <= c {
            num *= n - c + i;
            den *= i;
            if num > 1e250 {
                acc += num.ln();
                num = 1.0;
            }
            i += 1.0;
        }
        return acc + (num / den).ln();
    }
    // ln n!/(n-c)! - ln c!, the first difference taken without cancellation:
    // (m + 1/2) ln(n/m) + c ln n - c + tail(n) - tail(m), m = n - c.
    let m = n - c;
    let falling =
        (m + 0.5) * (c / m).ln_1p() + c * n.ln() - c + (stirling_tail(n) - stirling_tail(m));
    falling - ln_factorial_series(c)
}

/// The prepared model of a shape: from a table built once per process (with `std`) for the
/// plain filter's and the counting filters' units, else made now. Preparing one costs about
/// 0.1 us (logarithms and powers), which a small filter's whole plan would otherwise pay a
/// handful of times.
pub(super) fn shape(layout: Layout, probes: u32, unit_bits: u32) -> Prepared {
    #[cfg(feature = "std")]
    {
        const UNITS: [u32; 3] = [1, 4, 8];
        static TABLE: std::sync::OnceLock<Vec<Shape>> = std::sync::OnceLock::new();
        let per_unit = (MAX_PROBES / 4 + MAX_PROBES / 8) as usize;
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
            // Layout::ALL is 8x64 (MAX_PROBES / 8 counts), then 4x128.
            let index = match layout {
                Layout::Sectors8x64 => (probes / 8 - 1) as usize,
                Layout::Sectors4x128 => (MAX_PROBES / 8 + probes / 4 - 1) as usize,
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

    /// This shape with an (empty) table of its moments per key count.
    #[cfg(feature = "std")]
    fn with_count_table(mut self) -> Shape {
        // Not where the exact model's downward steps divide by a zero step (see
        // `direct_ok`): its sums then depend on where the walk starts, which a table cannot.
        if !self.direct_ok {
            return self;
        }
        self.counts = (0..TABLED_COUNTS / COUNT_CHUNK)
            .map(|_| std::sync::OnceLock::new())
            .collect();
        self.mean_floors = (0..TABLED_COUNTS / COUNT_CHUNK)
            .map(|_| std::sync::OnceLock::new())
            .collect();
        self
    }

    /// Whether evaluations with `keys` keys read [`Shape::counts`] (coarse ones always, fine
    /// ones from 64 keys, pinned ones never; not within a chunk of `2^64` keys, see
    /// [`Tabled`]).
    fn tabled(&self, keys: u64, level: Level) -> bool {
        #[cfg(feature = "std")]
        return !self.counts.is_empty()
            && (level == Level::Coarse || (level == Level::Fine && keys >= 64))
            && keys < u64::MAX - COUNT_CHUNK as u64;
        #[cfg(not(feature = "std"))]
        {
            let _ = (keys, level);
            false
        }
    }

    /// Chunk `index` of [`Shape::counts`], filled on first use (`None` past
    /// [`TABLED_COUNTS`] and for shapes without a table).
    #[cfg(feature = "std")]
    #[inline(always)]
    fn table_chunk<const B: usize>(&self, index: u64) -> Option<&CountChunk> {
        let cell = self.counts.get(index as usize)?;
        Some(cell.get_or_init(|| self.count_chunk::<B>(index as usize)))
    }

    /// A block's moments at `c` keys as the exact model computes them (where no table
    /// holds them).
    fn computed_moments<const B: usize>(&self, c: u64) -> (f64, f64) {
        let pw = powi_each(&self.step, c.min(u32::MAX as u64) as u32, 2 * B + 1);
        self.model.moments_b::<B>(&pw)
    }

    /// Chunk `index` of [`Shape::counts`]: powers by squaring at its first count, then
    /// stepped (at most [`COUNT_CHUNK`] roundings more).
    #[cfg(feature = "std")]
    #[cold]
    #[allow(clippy::needless_range_loop)]
    fn count_chunk<const B: usize>(&self, index: usize) -> Box<CountChunk> {
        let mut pw = powi_each(&self.step, (index * COUNT_CHUNK) as u32, 2 * B + 1);
        let mut out = Box::new([(0.0, 0.0); COUNT_CHUNK]);
        for m in out.iter_mut() {
            *m = self.model.moments_b::<B>(&pw);
            for i in 0..2 * B + 1 {
                pw[i] *= self.step[i];
            }
        }
        out
    }

    /// [`Shape::mean_floor`], from [`Shape::mean_floors`] where the shape keeps one for
    /// `keys` (computed and kept there on the first ask).
    fn kept_mean_floor(&self, keys: u64) -> f64 {
        #[cfg(feature = "std")]
        if let Some(cell) = self.mean_floors.get((keys / COUNT_CHUNK as u64) as usize) {
            let chunk =
                cell.get_or_init(|| Box::new([const { AtomicU64::new(UNSET) }; COUNT_CHUNK]));
            let slot = &chunk[(keys % COUNT_CHUNK as u64) as usize];
            // Relaxed: a floor is a function of the shape and the count alone, so a racing
            // thread stores the same bits.
            let bits = slot.load(Ordering::Relaxed);
            if bits != UNSET {
                return f64::from_bits(bits);
            }
            let floor = self.mean_floor(keys);
            slot.store(floor.to_bits(), Ordering::Relaxed);
            return floor;
        }
        self.mean_floor(keys)
    }

    /// A floor under one block's mean at `keys` keys: the lower end of the sector's mean
    /// ([`Shape::moment_ends`] with powers by squaring), at the block.
    fn mean_floor(&self, keys: u64) -> f64 {
        let pw = powi_each(&self.step, keys as u32, self.model.b + 1);
        self.model
            .pow_sectors(self.moment_ends(0, keys, &pw)[0].min(1.0))
    }

    /// A sector's moment `row` (0: the mean, 1: the square's) at `keys` keys, as its dot
    /// product by [`Shape::direct`] with powers `pw`, each within `keys` roundings of
    /// `step^keys`, less and plus a bound on the roundings of both that and the exact model's
    /// sums (see [`Shape::one_block_verdict`]).
    fn moment_ends(&self, row: usize, keys: u64, pw: &[f64; MAX_POWER + 1]) -> [f64; 2] {
        let slack = f64::EPSILON * (100.0 + 2.0 * keys as f64);
        let m: f64 = (0..=(row + 1) * self.model.b)
            .map(|i| self.direct[row][i] * pw[i])
            .sum();
        let bound = self.direct_l1[row] * slack;
        [(m - bound).max(0.0), (m + bound).min(1.0)]
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

    /// A block's rate and its square's expectation from the powers, as
    /// [`InBlock::moments_b`] computes them but by [`Shape::direct`]: two dot products,
    /// each summed in two interleaved halves (shorter add chains; the rounding differs
    /// within the coarse error bound).
    #[inline(always)]
    // Index loops with constant ends unroll fully per `B` (as in `sector_moments_lanes_b`).
    #[allow(clippy::needless_range_loop)]
    fn direct_moments<const B: usize>(&self, pw: &[f64; MAX_POWER + 1]) -> (f64, f64) {
        let (d1, d2) = (&self.direct[0], &self.direct[1]);
        // B >= 1: both rows have at least two terms.
        let mut s = [d1[0] * pw[0], d1[1] * pw[1], d2[0] * pw[0], d2[1] * pw[1]];
        for i in 2..B + 1 {
            s[i % 2] += d1[i] * pw[i];
        }
        for i in 2..2 * B + 1 {
            s[2 + i % 2] += d2[i] * pw[i];
        }
        let m1 = (s[0] + s[1]).clamp(0.0, 1.0);
        let m2 = (s[2] + s[3]).clamp(0.0, 1.0);
        (self.model.pow_sectors(m1), self.model.pow_sectors(m2))
    }

    /// The goal's value at a real block count `blocks >= 2` (see [`Eval`]).
    pub(super) fn eval(&self, keys: u64, blocks: f64, margin_sd: f64, level: Level) -> Eval {
        self.eval_ln(keys, blocks, blocks.ln(), margin_sd, level)
    }

    /// [`Shape::eval`] where `ln blocks` is known: the searches step in it.
    fn eval_ln(
        &self,
        keys: u64,
        blocks: f64,
        ln_blocks: f64,
        margin_sd: f64,
        level: Level,
    ) -> Eval {
        let b = (self.probes / self.sectors) as usize;
        with_b!(b, eval_b(self, keys, blocks, ln_blocks, margin_sd, level))
    }
}

/// `prod_{i < h} r * (a - i) / (b + i)`, given `r8 = r^8` and `r_last = r^(h mod 8)`: one
/// division per eight factors. Each factor is an integer below 2^53 (exact in `f64`, so
/// stepping it by 1.0 is exact, and cheaper than converting a `u64`), a product of eight
/// stays far from overflow, and `r` enters per chunk, as the factors' ratios do, so the
/// running product neither overflows nor underflows where the whole stride's `r^h` would.
#[inline(always)]
fn step_ratio(h: u64, r8: f64, r_last: f64, mut a: f64, mut b: f64) -> f64 {
    let mut f = 1.0;
    let mut i = 0;
    while i < h {
        let end = h.min(i + 8);
        let (mut num, mut den) = (if end - i == 8 { r8 } else { r_last }, 1.0);
        for _ in i..end {
            num *= a;
            den *= b;
            a -= 1.0;
            b += 1.0;
        }
        f *= num / den;
        i = end;
    }
    f
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

/// Adds one sampled key count's terms (weight `w`, moments `m`, offset `d` from the mean
/// count) to the sums `[w m1, w m2, w m1 d, w m2 d]`; true once the weight has vanished or
/// both terms fall below `cut` of their sums.
#[inline(always)]
fn accumulate(acc: &mut [f64; 4], w: f64, (m1, m2): (f64, f64), d: f64, cut: f64) -> bool {
    acc[0] += w * m1;
    acc[1] += w * m2;
    acc[2] += w * m1 * d;
    acc[3] += w * m2 * d;
    w < 1e-18 || (w * m1 <= cut * acc[0] && w * m2 <= cut * acc[1])
}

/// What [`Walk::sums`] needs of [`eval_b`]'s setup.
#[derive(Clone, Copy)]
struct Walk {
    keys: u64,
    n: f64,
    /// The mode, where both directions start.
    c0: u64,
    h: u64,
    /// `q / (1 - q)`, the binomial's odds.
    ratio: f64,
    mean_c: f64,
    cut: f64,
    pmf_mode: f64,
}

/// Where [`Walk::sums`] takes a block's moments at each sampled key count from: the powers
/// stepped along with the count, or a shape's table.
trait CountSource {
    /// The moments at the walk's next count upward (`c`, one stride above the last).
    fn up(&mut self, c: u64) -> (f64, f64);
    /// The moments at the walk's next count downward (`c`, one stride below the last).
    fn down(&mut self, c: u64) -> (f64, f64);
}

/// The powers `step^c` stepped by the stride from the mode both ways, the moments from them:
/// by [`Shape::direct`] if `DIRECT` (the downward steps by reciprocals, a multiplication per
/// power instead of a division), else as the exact model computes them.
struct Stepped<'a, const B: usize, const DIRECT: bool> {
    shape: &'a Shape,
    up: [f64; MAX_POWER + 1],
    down: [f64; MAX_POWER + 1],
    step_h: [f64; MAX_POWER + 1],
    inv_h: [f64; MAX_POWER + 1],
}

impl<'a, const B: usize, const DIRECT: bool> Stepped<'a, B, DIRECT> {
    #[inline(always)]
    #[allow(clippy::needless_range_loop)]
    fn new(shape: &'a Shape, pw0: [f64; MAX_POWER + 1], step_h: [f64; MAX_POWER + 1]) -> Self {
        let mut inv_h = [1.0; MAX_POWER + 1];
        if DIRECT {
            for i in 0..2 * B + 1 {
                inv_h[i] = 1.0 / step_h[i];
            }
        }
        Stepped {
            shape,
            up: pw0,
            down: pw0,
            step_h,
            inv_h,
        }
    }

    #[inline(always)]
    fn moments(&self, pw: &[f64; MAX_POWER + 1]) -> (f64, f64) {
        if DIRECT {
            self.shape.direct_moments::<B>(pw)
        } else {
            self.shape.model.moments_b::<B>(pw)
        }
    }

    /// At the mode.
    #[inline(always)]
    fn first(&self) -> (f64, f64) {
        self.moments(&self.up)
    }
}

impl<const B: usize, const DIRECT: bool> CountSource for Stepped<'_, B, DIRECT> {
    #[inline(always)]
    #[allow(clippy::needless_range_loop)]
    fn up(&mut self, _: u64) -> (f64, f64) {
        for i in 0..2 * B + 1 {
            self.up[i] *= self.step_h[i];
        }
        self.moments(&self.up)
    }

    #[inline(always)]
    #[allow(clippy::needless_range_loop)]
    fn down(&mut self, _: u64) -> (f64, f64) {
        for i in 0..2 * B + 1 {
            if DIRECT {
                self.down[i] *= self.inv_h[i];
            } else {
                self.down[i] /= self.step_h[i];
            }
        }
        self.moments(&self.down)
    }
}

/// The moments read from [`Shape::counts`] at each count, the last chunk read kept at hand
/// (a walk reads up to [`COUNT_CHUNK`] neighbouring counts from each).
struct Tabled<'a, const B: usize> {
    shape: &'a Shape,
    /// The first count of the chunk at hand, and the chunk; before the first, `2^64 -
    /// COUNT_CHUNK` and [`NO_CHUNK`]. A hit is then one subtraction and compare, and no count
    /// hits the placeholder: `c - start` wraps to `c + COUNT_CHUNK`, at least `COUNT_CHUNK`
    /// for every count below `2^64 - COUNT_CHUNK` (a table serves only fewer keys, see
    /// [`Shape::tabled`]).
    #[cfg(feature = "std")]
    chunk: (u64, &'a CountChunk),
}

/// The placeholder of [`Tabled`]'s chunk (never read).
#[cfg(feature = "std")]
static NO_CHUNK: CountChunk = [(0.0, 0.0); COUNT_CHUNK];

impl<'a, const B: usize> Tabled<'a, B> {
    fn new(shape: &'a Shape) -> Self {
        Tabled {
            shape,
            #[cfg(feature = "std")]
            chunk: (0u64.wrapping_sub(COUNT_CHUNK as u64), &NO_CHUNK),
        }
    }

    /// A block's moments at `c` keys: from [`Shape::counts`] below [`TABLED_COUNTS`].
    #[inline(always)]
    fn at(&mut self, c: u64) -> (f64, f64) {
        #[cfg(feature = "std")]
        {
            let offset = c.wrapping_sub(self.chunk.0);
            if offset < COUNT_CHUNK as u64 {
                return self.chunk.1[offset as usize];
            }
            let index = c / COUNT_CHUNK as u64;
            if let Some(chunk) = self.shape.table_chunk::<B>(index) {
                self.chunk = (index * COUNT_CHUNK as u64, chunk);
                return chunk[(c % COUNT_CHUNK as u64) as usize];
            }
        }
        self.shape.computed_moments::<B>(c)
    }
}

impl<const B: usize> CountSource for Tabled<'_, B> {
    #[inline(always)]
    fn up(&mut self, c: u64) -> (f64, f64) {
        self.at(c)
    }

    #[inline(always)]
    fn down(&mut self, c: u64) -> (f64, f64) {
        self.at(c)
    }
}

impl Walk {
    /// The sums `[w m1, w m2, w m1 d, w m2 d]` of [`accumulate`] over the sampled key
    /// counts, from the mode (moments `first`) upward, then downward, `w = pmf / pmf_mode`,
    /// the moments from `source`. One copy per `B` and source, so that the per-count work
    /// is straight-line code.
    #[inline(always)]
    fn sums(self, first: (f64, f64), mut source: impl CountSource) -> [f64; 4] {
        let Walk {
            keys,
            n,
            c0,
            h,
            ratio,
            mean_c,
            cut,
            pmf_mode,
        } = self;
        // The key count as a float too, stepped by the stride: exact for counts below 2^53,
        // and cheaper than converting a `u64` per count.
        let (c0f, hf) = (c0 as f64, h as f64);
        let (m1, m2) = first;
        let d0 = c0f - mean_c;
        let mut acc = [m1, m2, m1 * d0, m2 * d0];
        // Per chunk of eight key counts (see `step_ratio`), up and down; a stride of one
        // (the narrow bells of few keys per block) as its single factor, the same bits.
        let (up8, up_last) = (ratio.powi(8), ratio.powi((h % 8) as i32));
        let (down8, down_last) = (1.0 / up8, 1.0 / up_last);
        // Upward.
        let (mut w, mut c, mut cf) = (1.0f64, c0, c0f);
        while c + h <= keys {
            // Factors (n - c - i) / (c + i + 1).
            w *= if h == 1 {
                up_last * (n - cf) / (cf + 1.0)
            } else {
                step_ratio(h, up8, up_last, n - cf, cf + 1.0)
            };
            c += h;
            cf += hf;
            let m = source.up(c);
            if accumulate(&mut acc, w, m, cf - mean_c, cut) {
                break;
            }
        }
        // Downward.
        let (mut w, mut c, mut cf) = (1.0f64, c0, c0f);
        while c >= h {
            // Factors (c - i) / (n - c + i + 1).
            w *= if h == 1 {
                down_last * cf / (n - cf + 1.0)
            } else {
                step_ratio(h, down8, down_last, cf, n - cf + 1.0)
            };
            c -= h;
            cf -= hf;
            let m = source.down(c);
            if accumulate(&mut acc, w, m, cf - mean_c, cut) || w * pmf_mode * m.0 < 1e-24 {
                break;
            }
        }
        acc
    }
}

/// [`Walk::sums`] with the powers stepped along the walk from the mode (where no table
/// serves: shapes made for one plan or without one, and the fine level below 64 keys).
#[inline(always)]
#[allow(clippy::needless_range_loop)]
fn stepped_sums<const B: usize>(shape: &Shape, walk: Walk, mode: f64, fine: bool) -> [f64; 4] {
    let h = walk.h;
    // The powers' factors per stride.
    let step_h = if h == 1 {
        shape.step
    } else {
        powi_each(&shape.step, h as u32, 2 * B + 1)
    };
    let mut pw0 = [1.0; MAX_POWER + 1];
    if fine {
        // As the exact model: its sparse sectors cancel, so the powers must match.
        for i in 0..2 * B + 1 {
            pw0[i] = shape.step[i].powf(mode);
        }
    } else if mode > 0.0 && mode < i32::MAX as f64 {
        // By squaring: a few dozen roundings at most, closer than `exp(mode ln s)` (whose
        // argument's rounding grows with `mode`), and a fraction of its cost.
        pw0 = powi_each(&shape.step, mode as u32, 2 * B + 1);
    } else if mode > 0.0 {
        for i in 0..2 * B + 1 {
            pw0[i] = (mode * shape.ln_step[i]).exp();
        }
    }
    // The coarse level's moments by one dot product each, and its downward steps by
    // reciprocals (not where a step is so small that its reciprocal would overflow or lose
    // bits).
    if !fine && shape.direct_ok && step_h[2 * B] > 1e-290 {
        let source = Stepped::<B, true>::new(shape, pw0, step_h);
        walk.sums(source.first(), source)
    } else {
        let source = Stepped::<B, false>::new(shape, pw0, step_h);
        walk.sums(source.first(), source)
    }
}

fn eval_b<const B: usize>(
    shape: &Shape,
    keys: u64,
    blocks: f64,
    ln_blocks: f64,
    margin_sd: f64,
    level: Level,
) -> Eval {
    let n = keys as f64;
    let q = 1.0 / blocks;
    let ratio = q / (1.0 - q);
    // `floor` by truncation (the same for a finite value from 0 to n + 1 < 2^64): `floor` is
    // a call on the x86-64 baseline.
    let mode = (((n + 1.0) * q) as u64 as f64).min(n);
    let ln_q = -ln_blocks;
    let ln_1mq = (-q).ln_1p();
    let ln_pmf_mode = ln_choose(n, mode) + mode * ln_q + (n - mode) * ln_1mq;
    // Pinned: the exact model's own rounding of the mode's pmf, the largest part of what
    // tells the fine level from it.
    let pmf_mode = if level == Level::Pinned {
        pmf_at_mode(n, q, mode as u64)
    } else {
        ln_pmf_mode.exp()
    };
    // Sampling stride: a fraction of the summand's width. The rate grows about like c^k,
    // which narrows the bell: 1/width^2 = 1/var + k/mode^2. Full steps where the bell
    // reaches c = n (the sampled sum would miss the cut) and for few keys; at c = 0 the
    // summand vanishes (no key, no bit set) to high order.
    let var_c = n * q * (1.0 - q);
    let k = shape.probes as f64;
    let width = (1.0 / var_c + k / (mode * mode).max(1.0)).sqrt().recip();
    let near_end = n * ln_q - ln_pmf_mode > -46.0 || keys < 64;
    let fine = level != Level::Coarse;
    let h = if near_end {
        1
    } else {
        // Coarse: the full width where the bell is wide enough to be smooth at that stride
        // (narrower ones measured past the error bound at a stride of 2).
        let fraction = match level {
            Level::Fine | Level::Pinned => 0.5,
            Level::Coarse if width >= 5.0 => 1.0,
            Level::Coarse => 0.8,
        };
        ((fraction * width) as u64).max(1)
    };
    // Tails: where the exact model stops (fine), or once terms fall below 1e-8 of the
    // sums so far (coarse; past the summand's peak they only shrink).
    let cut = if fine { 0.0 } else { 1e-8 };
    let walk = Walk {
        keys,
        n,
        c0: mode as u64,
        h,
        ratio,
        mean_c: n * q,
        cut,
        pmf_mode,
    };
    // A table serves the fine level too, but not for few keys: where sparse sectors cancel,
    // the fine level must round as the exact model does (its powers stepped from the mode).
    // Over 200,000 random cases, tabled fine values differed from the exact model's by up
    // to 1.6e-9 of the rate at 24 keys or fewer (rates near 1e-10), by under 5e-12 above.
    let acc = if shape.tabled(keys, level) {
        let mut source = Tabled::<B>::new(shape);
        walk.sums(source.at(mode as u64), source)
    } else {
        stepped_sums::<B>(shape, walk, mode, fine)
    };
    let scale = pmf_mode * h as f64;
    let s1 = acc[0] * scale;
    let s2 = acc[1] * scale;
    // d pmf_c / d ln B = -pmf_c (c - nq) / (1 - q).
    let ds1 = -acc[2] * scale / (1.0 - q);
    let ds2 = -acc[3] * scale / (1.0 - q);
    let mean = s1.min(1.0);
    let var = (s2 - mean * mean).max(0.0);
    let sd = (var * q).sqrt();
    let value = mean + margin_sd * sd;
    // d sd / d ln B = (q dvar - q var) / (2 sd), dvar = ds2 - 2 mean ds1.
    let dsd = if sd > 0.0 {
        q * (ds2 - 2.0 * mean * ds1 - var) / (2.0 * sd)
    } else {
        0.0
    };
    let slope = (ds1 + margin_sd * dsd) / value;
    Eval { value, slope }
}

impl Shape {
    /// The exact model's verdict on `blocks` blocks: from a coarse evaluation unless it is
    /// within its error of the target, then a fine one, then the exact model.
    pub(super) fn meets(&self, keys: u64, blocks: u64, goal: Goal) -> bool {
        self.meets_from(keys, blocks, goal, Level::Coarse)
    }

    /// [`Shape::meets`] starting at `first` (`Fine` where a coarse evaluation cannot tell
    /// neighbouring block counts apart, `Pinned` where a fine one is expected in doubt).
    fn meets_from(&self, keys: u64, blocks: u64, goal: Goal, first: Level) -> bool {
        if blocks >= 2 {
            let levels: &[Level] = match first {
                Level::Coarse => &[Level::Coarse, Level::Fine, Level::Pinned],
                Level::Fine => &[Level::Fine, Level::Pinned],
                Level::Pinned => &[Level::Pinned],
            };
            for &level in levels {
                if level == Level::Pinned && !Level::pinned_serves(keys) {
                    break;
                }
                let e = self.eval(keys, blocks as f64, goal.margin_sd, level);
                let error = level.bound(keys, blocks as f64, e.value);
                if e.value <= goal.fpr * (1.0 - error) {
                    return true;
                }
                if e.value > goal.fpr * (1.0 + error) {
                    return false;
                }
            }
        }
        if blocks == 1
            && let Some(verdict) = self.one_block_verdict(keys, goal)
        {
            return verdict;
        }
        let (mean, var) = block_moments_of(&self.model, keys, blocks);
        mean + goal.margin_sd * (var / blocks as f64).sqrt() <= goal.fpr
    }

    /// The exact model's verdict on one block holding `keys` keys where cheaper sums settle
    /// it (`None`: ask the exact model, and past the few keys where one block is asked). A
    /// small filter's plan asks every shape whether one block holds its keys, and the exact
    /// model's powers cost a `powf` each.
    ///
    /// The sector's moments by [`Shape::direct`] with powers by squaring, each widened to an
    /// interval by a bound on the roundings of both ways of computing it: squaring compounds
    /// the powers' relative error to at most `keys` roundings, the sums and the exact model's
    /// powers, clamps and weights add a few dozen more, each scaled by at most `direct_l1`;
    /// the bound takes twice that. The block's rate and spread then follow from either end
    /// by the exact model's own operations, each monotone under rounding, so a verdict that
    /// holds at both ends is the exact model's. A negative variance (rounding, at rates near
    /// zero) makes the exact model's value NaN, which fails: only a failing mean decides then.
    fn one_block_verdict(&self, keys: u64, goal: Goal) -> Option<bool> {
        if keys == 0 || keys > 4096 || goal.margin_sd < 0.0 {
            return None;
        }
        let b = self.model.b;
        // A moment's ends at the sector, at the block by `pow_sectors`.
        let ends = |row: usize, pw: &[f64; MAX_POWER + 1]| self.moment_ends(row, keys, pw);
        let block = |x: f64| self.model.pow_sectors(x.min(1.0));
        // The mean's lower end first: most shapes a plan asks fail on it alone (the margin
        // only adds), so a shared shape keeps it per key count.
        let low = self.kept_mean_floor(keys);
        let fails = low > goal.fpr;
        // The second moment only where the dot product may stand in for the exact sums.
        if !self.direct_ok || fails {
            return fails.then_some(false);
        }
        // Both rows' powers at once (the mean's are the floor's, bit for bit).
        let pw = powi_each(&self.step, keys as u32, 2 * b + 1);
        let mean = [low, block(ends(0, &pw)[1].max(0.0))];
        let square = ends(1, &pw).map(|x| block(x.max(0.0)));
        let var = [square[0] - mean[1] * mean[1], square[1] - mean[0] * mean[0]];
        if var[0] < 0.0 {
            return None;
        }
        if mean[1] + goal.margin_sd * var[1].sqrt() <= goal.fpr {
            Some(true)
        } else if mean[0] + goal.margin_sd * var[0].sqrt() > goal.fpr {
            Some(false)
        } else {
            None
        }
    }

    /// The real root of `ln value(u) = ln fpr` in `u = ln blocks` by safeguarded Newton steps
    /// at `level`, from `u` (already evaluated as `first` if given), below `hi` (known to
    /// meet the goal). `Ok(None)` above the ceiling, `Err(())` if two blocks meet.
    fn root(
        &self,
        keys: u64,
        goal: Goal,
        level: Level,
        mut u: f64,
        mut first: Option<Eval>,
        mut hi: f64,
    ) -> Result<Option<Root>, ()> {
        let mut lo = f64::NEG_INFINITY;
        // `e^u` where it is known: the next point is usually Newton's, whose `e^u` the test
        // for enough precision has already computed.
        let mut blocks_at_u: Option<f64> = None;
        let floor = 2f64.ln();
        let ceiling = (4.0 * MAX_BLOCKS as f64).ln();
        // The last point and slope, for the curvature.
        let mut last: Option<(f64, f64)> = None;
        for _ in 0..64 {
            let e = match first.take() {
                Some(e) => e,
                None => {
                    let blocks = blocks_at_u.take().unwrap_or_else(|| u.exp());
                    self.eval_ln(keys, blocks, u, goal.margin_sd, level)
                }
            };
            // Newton's error factor `|f''| / 2|f'|`, from the slopes of the last two points.
            // The 0.3 assumed below holds for targets up to 0.5 (the tests' grid); near
            // saturation it does not, so there a root needs two points to be accepted.
            let (curvature, measured) = match last.replace((u, e.slope)) {
                Some((lu, ls)) if lu != u => (
                    ((e.slope - ls) / (u - lu)).abs() / (2.0 * e.slope.abs()),
                    true,
                ),
                _ if goal.fpr > 0.5 => (f64::INFINITY, false),
                _ => (0.0, false),
            };
            // `ln value - ln fpr`, in one logarithm.
            let f = (e.value / goal.fpr).ln();
            if f > 0.0 {
                if u >= ceiling {
                    return Ok(None);
                }
                lo = u;
            } else {
                if u <= floor {
                    return Err(());
                }
                hi = u;
            }
            let newton = u - f / e.slope;
            let usable = e.slope < 0.0 && newton.is_finite();
            // Newton's error is about (curvature / 2 slope) * step^2. With one point, that
            // factor is taken as its largest wherever the tests look, 0.3, and step^2 (over
            // three times it) bounds the error; with two, as three times the factor measured
            // between them, at least 0.05 (the measured factors are near 0.01: `ln value` is
            // nearly a straight line in `ln blocks`). Good enough once it is a tenth of the
            // gap between neighbouring block counts or of the model's own doubt.
            let step2 = match (newton - u) * (newton - u) {
                0.0 => 0.0,
                d2 if measured => d2 * (3.0 * curvature).max(0.05),
                d2 => d2 * (curvature / 0.3).max(1.0),
            };
            let newton_blocks = newton.exp();
            let enough = (0.1 / newton_blocks).max(match level {
                // Coarse bounds only need to tell shapes apart; the fine search or the
                // decisions settle the integer where it matters.
                Level::Coarse => 1e-6,
                // (Searches run at the coarse and fine levels only.)
                Level::Fine | Level::Pinned => 0.1 * Level::Fine.error() / -e.slope,
            });
            if usable && (step2 < enough || step2 < 1e-16) {
                return Ok(Some(Root {
                    u: newton,
                    blocks: newton_blocks,
                    slope: e.slope,
                    error: step2,
                }));
            }
            let next = if usable && newton > lo && newton < hi {
                newton
            } else if lo.is_finite() && hi.is_finite() {
                0.5 * (lo + hi)
            } else if f > 0.0 {
                u + 1.0
            } else {
                u - 1.0
            }
            .clamp(floor, ceiling);
            if next == newton {
                blocks_at_u = Some(newton_blocks);
            }
            u = next;
            if hi - lo < 1e-13 {
                return Ok(Some(Root::at(hi, e.slope, 1e-13)));
            }
        }
        Ok(Some(Root::at(hi.min(ceiling), f64::NAN, 0.0)))
    }

    /// Bounds on the fewest blocks that meet `goal` at `keys` keys, from a coarse search
    /// started at `guess`.
    pub(super) fn bound(&self, keys: u64, goal: Goal, guess: f64) -> Bounds {
        let ceiling = (4.0 * MAX_BLOCKS as f64).ln();
        if guess > MAX_BLOCKS as f64 / 2.0 {
            // Near the limit: settle "too many blocks" with one evaluation when clear, else
            // search on from there (Newton's first step from the limit).
            let max = MAX_BLOCKS as f64;
            let e = self.eval(keys, max, goal.margin_sd, Level::Coarse);
            if e.value > goal.fpr * (1.0 + Level::Coarse.error()) {
                return Bounds::exact(NONE, guess.ln());
            }
            return self.search(keys, goal, Level::Coarse, max.ln(), Some(e), f64::INFINITY);
        }
        let u = guess.max(2.0).ln().min(ceiling);
        self.search(keys, goal, Level::Coarse, u, None, f64::INFINITY)
    }

    /// One coarse evaluation at `blocks`, and what it says of the exact model there.
    pub(super) fn probe(&self, keys: u64, goal: Goal, blocks: u64) -> Probe {
        if blocks < 2 {
            return Probe::Doubt(None);
        }
        let e = self.eval(keys, blocks as f64, goal.margin_sd, Level::Coarse);
        let err = Level::Coarse.error();
        if e.value > goal.fpr * (1.0 + err) {
            Probe::Fails
        } else if e.value <= goal.fpr * (1.0 - err) {
            Probe::Meets(e)
        } else {
            Probe::Doubt(Some(e))
        }
    }

    /// [`Shape::meets`] at `blocks`, going on from `probe` if one was made there: its coarse
    /// evaluation is not made again (a walk often asks the count it probed).
    pub(super) fn meets_probed(
        &self,
        keys: u64,
        blocks: u64,
        goal: Goal,
        probe: Option<Probe>,
    ) -> bool {
        match probe {
            Some(Probe::Meets(_)) => true,
            Some(Probe::Fails) => false,
            Some(Probe::Doubt(Some(_))) => self.meets_from(keys, blocks, goal, Level::Fine),
            Some(Probe::Doubt(None)) | None => self.meets(keys, blocks, goal),
        }
    }

    /// [`Shape::bound_known`] at `known`, the search starting from `probe`'s evaluation if
    /// one was made there.
    pub(super) fn bound_probed(
        &self,
        keys: u64,
        goal: Goal,
        known: u64,
        probe: Option<Probe>,
    ) -> Bounds {
        match probe {
            Some(Probe::Meets(e) | Probe::Doubt(Some(e))) => {
                self.bound_from(keys, goal, known, e, known)
            }
            _ => self.bound_known(keys, goal, known),
        }
    }

    /// Bounds on the fewest blocks from a coarse search started at `start` blocks (already
    /// evaluated as `first`), `known` blocks known to meet the goal.
    pub(super) fn bound_from(
        &self,
        keys: u64,
        goal: Goal,
        start: u64,
        first: Eval,
        known: u64,
    ) -> Bounds {
        let (u, known) = ((start as f64).ln(), (known as f64).ln());
        self.search(keys, goal, Level::Coarse, u, Some(first), known)
    }

    /// Bounds on the fewest blocks from a coarse search started at a real block count
    /// `start >= 2`, where nothing is known to meet the goal.
    pub(super) fn bound_at(&self, keys: u64, goal: Goal, start: f64) -> Bounds {
        let u = start.ln();
        let first = self.eval_ln(keys, start, u, goal.margin_sd, Level::Coarse);
        self.search(keys, goal, Level::Coarse, u, Some(first), f64::INFINITY)
    }

    /// Bounds on the fewest blocks given that `known` meets the goal (decided exactly).
    pub(super) fn bound_known(&self, keys: u64, goal: Goal, known: u64) -> Bounds {
        let u = (known.max(1) as f64).ln();
        if known < 2 {
            return Bounds::exact(known, u);
        }
        self.search(keys, goal, Level::Coarse, u, None, u)
    }

    /// The fewest blocks that meet the goal (`NONE` above [`MAX_BLOCKS`]), settling
    /// `bounds` to it: a fine search from the coarse root, then single decisions if need be.
    pub(super) fn refine(&self, keys: u64, goal: Goal, bounds: &mut Bounds) -> u64 {
        if bounds.lo != bounds.hi {
            *bounds = self.search(keys, goal, Level::Fine, bounds.root, None, bounds.known);
        }
        bounds.lo
    }

    /// A search at `level` from `u = ln blocks` (evaluated as `first` if given), `known` a
    /// `u` known to meet the goal. The integer above the root of a model with relative
    /// error `e` is the exact model's answer unless the root could move past an integer:
    /// by `e / |slope|` in `u` (doubled for safety) plus Newton's error. At the fine level
    /// an interval left in doubt is settled by single decisions, bisecting it.
    fn search(
        &self,
        keys: u64,
        goal: Goal,
        level: Level,
        u: f64,
        first: Option<Eval>,
        known: f64,
    ) -> Bounds {
        match self.root(keys, goal, level, u, first, known) {
            Err(()) => Bounds::exact(self.walk(keys, goal, 2, Level::Coarse), 2f64.ln()),
            Ok(None) => Bounds::exact(NONE, (4.0 * MAX_BLOCKS as f64).ln()),
            Ok(Some(Root {
                u: r,
                blocks: r_blocks,
                slope,
                error: newton_error,
            })) => {
                let doubt = 2.0 * level.error() / -slope + newton_error;
                let doubt = if doubt.is_finite() { doubt } else { 1.0 };
                // The integer at or above `b`, at least 1 (by truncation: `ceil` is a call on
                // the x86-64 baseline).
                let block = |b: f64| {
                    let b = b.max(1.0);
                    if b > MAX_BLOCKS as f64 {
                        NONE
                    } else {
                        let t = b as u64;
                        t + ((t as f64) < b) as u64
                    }
                };
                // `e^(r -+ doubt)` from `e^r`, moved outward: `1 - d <= e^-d` and, for
                // `d <= 1`, `e^d <= 1 + d + d^2`, each widened by a few roundings.
                let (lo, mut hi) = if doubt <= 1.0 {
                    let widen = 4.0 * f64::EPSILON;
                    (
                        block(r_blocks * (1.0 - doubt) * (1.0 - widen)),
                        block(r_blocks * (1.0 + doubt * (1.0 + doubt)) * (1.0 + widen)),
                    )
                } else {
                    (block((r - doubt).exp()), block((r + doubt).exp()))
                };
                if known.is_finite() {
                    hi = hi.min(known.exp().round() as u64);
                }
                if lo == hi || level == Level::Coarse {
                    return Bounds {
                        lo,
                        hi,
                        root: r,
                        known,
                    };
                }
                // A coarse decision needs the rate to move by more than its error between
                // neighbours; at billions of blocks it never does.
                let first = if -slope / r_blocks > 4.0 * Level::Coarse.error() {
                    Level::Coarse
                } else {
                    Level::Fine
                };
                // Where this fine root puts a count's rate within the fine level's bound of the
                // target, a fine decision there would be in doubt too (one in five or more below
                // rates of 1e-4 at a billion blocks): it starts at the pinned level. (At twice
                // the bound it also took decisions the fine level makes, at five times the cost.)
                let first_at = |b: u64| {
                    let off = (slope * ((b as f64).ln() - r)).abs();
                    let doubtful = off < Level::Fine.bound(keys, b as f64, goal.fpr);
                    if first == Level::Fine && doubtful && Level::pinned_serves(keys) {
                        Level::Pinned
                    } else {
                        first
                    }
                };
                if lo < hi && hi <= MAX_BLOCKS {
                    // The fewest blocks lie in `lo..=hi` (as where `lo == hi` above): bisect
                    // there, one decision for the usual two neighbours.
                    return Bounds::exact(self.bisect(keys, goal, first_at, lo - 1, hi), r);
                }
                let start = block(r_blocks).min(MAX_BLOCKS);
                Bounds::exact(self.walk(keys, goal, start, first), r)
            }
        }
    }

    /// The fewest blocks that meet the goal (`NONE` above [`MAX_BLOCKS`]), by single
    /// decisions from `start`, expected next to it: steps doubling away from it until the
    /// answer changes, then bisection (the exact model's rate falls with the block count).
    fn walk(&self, keys: u64, goal: Goal, start: u64, first: Level) -> u64 {
        let start = start.clamp(1, MAX_BLOCKS);
        let meets = |b| self.meets_from(keys, b, goal, first);
        // `lo` fails (0: nothing fails yet), `hi` meets.
        let (lo, hi) = if meets(start) {
            let mut step = 1;
            let mut hi = start;
            loop {
                let b = hi.saturating_sub(step);
                if b == 0 {
                    break (0, hi);
                }
                if !meets(b) {
                    break (b, hi);
                }
                hi = b;
                step *= 2;
            }
        } else {
            let mut step = 1;
            let mut lo = start;
            loop {
                if lo == MAX_BLOCKS {
                    return NONE;
                }
                let b = (lo + step).min(MAX_BLOCKS);
                if meets(b) {
                    break (lo, b);
                }
                lo = b;
                step *= 2;
            }
        };
        self.bisect(keys, goal, |_| first, lo, hi)
    }

    /// The fewest blocks that meet the goal, given that `hi` meets and `lo` fails (0: nothing
    /// below `hi` is known to fail), by bisection with single decisions, each starting at the
    /// level `first` gives for its count.
    fn bisect(
        &self,
        keys: u64,
        goal: Goal,
        first: impl Fn(u64) -> Level,
        mut lo: u64,
        mut hi: u64,
    ) -> u64 {
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if self.meets_from(keys, mid, goal, first(mid)) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        hi
    }
}

/// A root of [`Shape::root`]: `u = ln blocks`, `blocks` (`e^u`, rounded), the slope there and a
/// bound on the root's error in `u`.
struct Root {
    u: f64,
    blocks: f64,
    slope: f64,
    error: f64,
}

impl Root {
    fn at(u: f64, slope: f64, error: f64) -> Root {
        Root {
            u,
            blocks: u.exp(),
            slope,
            error,
        }
    }
}

/// What one coarse evaluation says of the exact model at some block count.
#[derive(Clone, Copy)]
pub(super) enum Probe {
    Meets(Eval),
    Fails,
    /// Within the coarse level's error of the target (no evaluation below two blocks).
    Doubt(Option<Eval>),
}

/// A block count standing for "more than [`MAX_BLOCKS`]".
pub(super) const NONE: u64 = MAX_BLOCKS + 1;

/// What is known of one shape's fewest blocks: `lo..=hi` (`NONE` for too many), the root of
/// the model's equation in `u = ln blocks` it came from, and a `u` known to meet the goal.
#[derive(Clone, Copy, Debug)]
pub(super) struct Bounds {
    pub(super) lo: u64,
    pub(super) hi: u64,
    root: f64,
    known: f64,
}

impl Bounds {
    pub(super) fn exact(b: u64, root: f64) -> Bounds {
        Bounds {
            lo: b,
            hi: b,
            root,
            known: f64::INFINITY,
        }
    }

    /// Bounds given only that `blocks` fails the goal: more, perhaps too many.
    pub(super) fn failing_at(blocks: u64) -> Bounds {
        Bounds {
            lo: blocks + 1,
            hi: NONE,
            root: (blocks as f64).ln(),
            known: f64::INFINITY,
        }
    }

    /// These bounds, given that `blocks` (within them) meets the goal.
    pub(super) fn meeting_at(self, blocks: u64) -> Bounds {
        Bounds {
            hi: self.hi.min(blocks),
            known: (blocks as f64).ln(),
            ..self
        }
    }

    /// The root in blocks (to scale the next shape's guess by).
    pub(super) fn root_blocks(&self) -> f64 {
        self.root.exp()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
