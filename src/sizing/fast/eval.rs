// What an evaluation of the goal at a block count is made of: the levels of accuracy and
// their error bounds, its result ([`Eval`]), `ln C(n, c)`, and a block's moments from the
// powers. The evaluation itself, [`Shape::eval`], is `sums`'.

// Without `std`, `f64` lacks `ln`, `exp`, ... (with it, or in tests, std's own are found).
#[cfg(not(any(feature = "std", test)))]
use crate::math::F64Math as _;

#[cfg(feature = "std")]
use alloc::boxed::Box;

use super::Shape;
use crate::sizing::exact::MAX_POWER;
// Named in doc comments only.
#[cfg(doc)]
use crate::sizing::exact::InBlock;

/// How closely [`Shape::eval`] follows the exact model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::sizing) enum Level {
    /// Sampled at about the summand's width, tails cut at `1e-8` of the sum.
    Coarse,
    /// Sampled at half the width, tails cut where the exact model cuts them.
    Fine,
    /// [`Level::Fine`] with the mode's pmf as the exact model computes it (its `mode`
    /// logarithms) and the moments from powers stepped from the mode's, as the exact model
    /// steps them (never a table): what is left is the rounding of a sampled sum against a
    /// full one. Decides most of what a fine evaluation cannot, for a fraction of the exact
    /// model's cost (measured at 009e4df). Only where [`Level::pinned_serves`].
    Pinned,
}

impl Level {
    /// A bound on `|eval / exact - 1|` for the goal's value: the tests check that the
    /// evaluations stay 20 times inside it.
    pub(in crate::sizing) const fn error(self) -> f64 {
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
    pub(in crate::sizing) fn pinned_serves(keys: u64) -> bool {
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
    /// rate or less, so with `1e-9` many decisions fell to the exact model, each costly at many
    /// probes (perf-reports/2026-11-28-plan-exact.md).
    pub(in crate::sizing) fn bound(self, keys: u64, blocks: f64, value: f64) -> f64 {
        match self {
            Level::Fine if keys >= 4096 && value >= 1e-4 => {
                (1e-12 * (keys as f64 / blocks + 16.0)).min(self.error())
            }
            _ => self.error(),
        }
    }
}

/// The goal's left-hand side `mean + margin_sd * sd` at some block count, and its slope
/// `d ln value / d ln num_blocks`.
#[derive(Clone, Copy, Debug)]
pub(in crate::sizing) struct Eval {
    pub(in crate::sizing) value: f64,
    pub(in crate::sizing) slope: f64,
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
pub(super) fn ln_choose(n: f64, c: f64) -> f64 {
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
        // the end (a division per factor, up to 29 per evaluation, slowed large filters' plans:
        // perf-reports/2026-11-28-plan-probes-kept.md), the numerators folded into a logarithm
        // before they overflow. `c! < 2^103`, far from overflow.
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

impl Shape {
    /// A block's rate and its square's expectation from the powers, as
    /// [`InBlock::moments_b`] computes them but by [`Shape::direct`]: two dot products,
    /// each summed in two interleaved halves (shorter add chains; the rounding differs
    /// within the coarse error bound).
    #[inline(always)]
    // Index loops with constant ends unroll fully per `B` (as in `sector_moments_lanes_b`).
    #[allow(clippy::needless_range_loop)]
    pub(super) fn direct_moments<const B: usize>(&self, pw: &[f64; MAX_POWER + 1]) -> (f64, f64) {
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
}
