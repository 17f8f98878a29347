// The exact model: a sector's moments by the Stirling expansion (its constant tables), a
// block's by the binomial sum over its key counts, walked outward from the mode.

// Without `std`, `f64` lacks `ln`, `exp`, ... (with it, or in tests, std's own are found).
#[cfg(not(any(feature = "std", test)))]
use crate::math::F64Math as _;

use crate::layout::{Layout, MAX_PROBES};

/// Most exponent any moment needs: `2b` with `b = MAX_PROBES / 4`.
pub(super) const MAX_POWER: usize = 2 * (MAX_PROBES / 4) as usize;

/// Stirling numbers of the second kind, `STIRLING[n][t]`, for `n <= MAX_POWER`.
pub(super) const STIRLING: [[f64; MAX_POWER + 1]; MAX_POWER + 1] = {
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

/// `(-1)^i C(t, i)`: an inclusion-exclusion term `(-1)^i (C(t, i) p)` by one multiply, the
/// same bits (rounding is symmetric in sign).
const SIGNED_BINOM: [[f64; MAX_POWER + 1]; MAX_POWER + 1] = {
    let mut c = BINOM;
    let mut t = 0;
    while t <= MAX_POWER {
        let mut i = 1;
        while i <= t {
            c[t][i] = -c[t][i];
            i += 2;
        }
        t += 1;
    }
    c
};

/// `C(t, i)` for `t <= MAX_POWER`: exact integers, the same values the running product
/// `binom * (t - i) / (i + 1)` gives.
pub(super) const BINOM: [[f64; MAX_POWER + 1]; MAX_POWER + 1] = {
    let mut c = [[0.0; MAX_POWER + 1]; MAX_POWER + 1];
    let mut t = 0;
    while t <= MAX_POWER {
        c[t][0] = 1.0;
        let mut i = 1;
        while i <= t {
            c[t][i] = c[t - 1][i - 1] + c[t - 1][i];
            i += 1;
        }
        t += 1;
    }
    c
};

/// The in-block model of one layout and probe count, with the per-shape factors of the
/// Stirling expansion precomputed (same operations, same order, so the same bits as
/// computing them per term).
#[derive(Clone)]
pub(crate) struct InBlock {
    sectors: u32,
    pub(super) b: usize,
    pub(super) w: f64,
    /// `S(e, t) * (W)_t / W^t / W^(e - t)` for `e` in `{b, 2b}` (rows 0 and 1), `t <= e`.
    /// `W` is a power of two, so the last factor scales exactly: `coef * a` is the bits of
    /// `S(e, t) * (W)_t / W^t * a / W^(e - t)` without a division per term.
    pub(super) coef: [[f64; MAX_POWER + 1]; 2],
}

impl InBlock {
    /// The model of `layout` with `probes` probes whose positions are `unit_bits`-bit fields
    /// (1 for the plain filter, the counter width for a counting filter): a sector then has
    /// `sector_bits / unit_bits` positions.
    pub(crate) fn new(layout: Layout, probes: u32, unit_bits: u32) -> InBlock {
        let b = (probes / layout.sectors()) as usize;
        let w = (layout.sector_bits() / unit_bits) as f64;
        debug_assert!((w as u64).is_power_of_two());
        let mut coef = [[0.0; MAX_POWER + 1]; 2];
        for (row, e) in [b, 2 * b].into_iter().enumerate() {
            let mut falling = 1.0; // (W)_t / W^t
            for t in 1..=e {
                falling *= (w - (t as f64 - 1.0)) / w;
                coef[row][t] = STIRLING[e][t] * falling / w.powi((e - t) as i32);
            }
        }
        InBlock {
            sectors: layout.sectors(),
            b,
            w,
            coef,
        }
    }

    /// Entries of the power arrays the moments read: `0..=2b`.
    pub(super) fn len(&self) -> usize {
        2 * self.b + 1
    }

    /// `(1 - i/W)^b` for `i` in `0..=2b`: the factor one more key multiplies `pw[i]` by.
    pub(super) fn step(&self) -> [f64; MAX_POWER + 1] {
        let mut out = [1.0; MAX_POWER + 1];
        for (i, o) in out.iter_mut().enumerate().take(self.len()) {
            *o = (1.0 - i as f64 / self.w).powi(self.b as i32);
        }
        out
    }

    /// `x^sectors` by squaring (4 or 8 sectors: what `powi` computes, bit for bit).
    pub(super) fn pow_sectors(&self, x: f64) -> f64 {
        let x4 = (x * x) * (x * x);
        if self.sectors == 8 { x4 * x4 } else { x4 }
    }

    /// A block's false-positive rate and its square's expectation, given its powers
    /// `pw[i] = (1 - i/W)^m` after `m` probes per sector: `E[(X/W)^e]` for `e = b, 2b` by the
    /// Stirling expansion over `t` distinct bits, each term the inclusion-exclusion
    /// probability that `t` given bits are all set (shared by both exponents).
    #[inline(always)]
    pub(crate) fn moments_b<const B: usize>(&self, pw: &[f64; MAX_POWER + 1]) -> (f64, f64) {
        let (m1, m2) = self.sector_moments_b::<B>(pw);
        (self.pow_sectors(m1), self.pow_sectors(m2))
    }

    /// [`InBlock::moments_b`] at `L` key counts at once, `pw[i][lane]`: each lane the same
    /// operations in the same order as one count, so the same bits. One count's work is a
    /// chain of adds (`t + 1` per `all_set[t]`, then `2b` per moment) that leaves the core
    /// idle between them; lanes side by side fill it, and vectorize.
    #[inline(always)]
    fn moments_lanes_b<const B: usize, const L: usize>(
        &self,
        pw: &[[f64; L]; MAX_POWER + 1],
    ) -> [(f64, f64); L] {
        let (m1, m2) = self.sector_moments_lanes_b::<B, L>(pw);
        core::array::from_fn(|l| (self.pow_sectors(m1[l]), self.pow_sectors(m2[l])))
    }

    /// `E[(X/W)^b]` and `E[(X/W)^2b]` of one sector, given its powers.
    #[cfg(test)]
    pub(super) fn sector_moments(&self, pw: &[f64; MAX_POWER + 1]) -> (f64, f64) {
        match self.b {
            1 => self.sector_moments_b::<1>(pw),
            2 => self.sector_moments_b::<2>(pw),
            4 => self.sector_moments_b::<4>(pw),
            _ => unreachable!("the tests use b = 1, 2, 4"),
        }
    }

    /// `E[(X/W)^b]` and `E[(X/W)^2b]` of one sector for `b = B` (one lane of
    /// [`InBlock::sector_moments_lanes_b`]).
    #[inline(always)]
    fn sector_moments_b<const B: usize>(&self, pw: &[f64; MAX_POWER + 1]) -> (f64, f64) {
        let (m1, m2) = self.sector_moments_lanes_b::<B, 1>(&pw.map(|x| [x]));
        (m1[0], m2[0])
    }

    /// `E[(X/W)^b]` and `E[(X/W)^2b]` of one sector for `b = B` at `L` key counts,
    /// `pw[i][lane]`: the Stirling expansion over `t` distinct bits, each term the
    /// inclusion-exclusion probability that `t` given bits are all set (shared by both
    /// exponents), each lane on its own.
    #[inline(always)]
    // Index loops over half-open ranges with constant ends: they unroll fully per `B`, where
    // the iterator forms (and `..=`) did not and ran slower (measured at 53b591a).
    #[allow(clippy::needless_range_loop)]
    fn sector_moments_lanes_b<const B: usize, const L: usize>(
        &self,
        pw: &[[f64; L]; MAX_POWER + 1],
    ) -> ([f64; L], [f64; L]) {
        let mut all_set = [[0.0; L]; MAX_POWER + 1];
        // One call per `t` with `t` a constant, so that each sum unrolls: a loop over `t`
        // around them did not from `b = 6`, and ran each sum as a loop with a branch per term.
        const { assert!(MAX_POWER == 16, "one call per t <= MAX_POWER") };
        macro_rules! sums {
            ($($t:literal)*) => {$(
                if $t < 2 * B + 1 {
                    all_set[$t] = all_set_lanes::<$t, L>(pw);
                }
            )*};
        }
        sums!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16);
        let moment = |row: usize, e: usize| {
            let mut total = [0.0; L];
            for t in 1..e + 1 {
                for l in 0..L {
                    total[l] += self.coef[row][t] * all_set[t][l];
                }
            }
            total.map(|x| x.clamp(0.0, 1.0))
        };
        (moment(0, B), moment(1, 2 * B))
    }
}

/// The inclusion-exclusion probability that `T` given bits of a sector are all set, at `L`
/// key counts, `pw[i][lane]`: `sum_i (-1)^i C(T, i) pw[i]` in increasing `i`, clamped at
/// zero. Two terms need no multiply, `C(T, 0) = C(T, T) = 1`: the sum starts at `pw[0]` (the
/// reference's `0 + 1 pw[0]`, the same bits for any power, which is never `-0`), and adds
/// `(-1)^T pw[T]` last. The other terms and the order of the sum are the reference's, so the
/// same bits. (`pw[0] = (1 - 0/W)^m` is 1 on every platform's libm, but not under Miri, which
/// perturbs `powf` and `powi`: nothing here assumes it.)
#[inline(always)]
#[allow(clippy::needless_range_loop)]
fn all_set_lanes<const T: usize, const L: usize>(pw: &[[f64; L]; MAX_POWER + 1]) -> [f64; L] {
    let mut s = pw[0];
    for i in 1..T {
        for l in 0..L {
            s[l] += SIGNED_BINOM[T][i] * pw[i][l];
        }
    }
    for l in 0..L {
        s[l] += if T.is_multiple_of(2) {
            pw[T][l]
        } else {
            -pw[T][l]
        };
    }
    s.map(|x| x.max(0.0))
}

/// Mean and variance, over blocks, of the per-block false-positive rate of a filter of
/// `num_blocks` blocks holding `keys` keys. A block of a layout with [`Layout::parts`] above
/// 1 is that many blocks of the model (a key's probes lie in one part).
pub(super) fn block_moments(
    keys: u64,
    num_blocks: u64,
    layout: Layout,
    probes: u32,
    unit_bits: u32,
) -> (f64, f64) {
    assert!(
        layout.supports_probes(probes),
        "{probes} probes do not fit {layout}"
    );
    let units = num_blocks * layout.parts() as u64;
    block_moments_of(&InBlock::new(layout, probes, unit_bits), keys, units)
}

/// Calls `$f::<b>($args)` for the model's `b` (one copy of the hot loops per `b`, so that
/// their inner loops have constant trip counts).
macro_rules! with_b {
    ($b:expr, $f:ident ( $($arg:expr),* )) => {
        match $b {
            1 => $f::<1>($($arg),*),
            2 => $f::<2>($($arg),*),
            3 => $f::<3>($($arg),*),
            4 => $f::<4>($($arg),*),
            5 => $f::<5>($($arg),*),
            6 => $f::<6>($($arg),*),
            7 => $f::<7>($($arg),*),
            _ => $f::<8>($($arg),*),
        }
    };
}
pub(crate) use with_b;

/// [`block_moments`] for a prepared model.
pub(super) fn block_moments_of(model: &InBlock, keys: u64, num_blocks: u64) -> (f64, f64) {
    with_b!(model.b, block_moments_b(model, keys, num_blocks))
}

/// [`block_moments_in`] with the counts of a walk taken eight at a time from `b = 5` (20
/// probes in 4x128), one at a time below: eight side by side run 20 to 32 probes faster than
/// one at a time, four (the SSE2 baseline's vectorizer split them into scalar work) no faster,
/// and eight for fewer probes slower (`exact_model_timing` in the tests; the same bits either
/// way; measured: perf-reports/2026-11-28-plan-pinned.md).
fn block_moments_b<const B: usize>(model: &InBlock, keys: u64, num_blocks: u64) -> (f64, f64) {
    if B >= 5 {
        block_moments_in::<B, 8>(model, keys, num_blocks)
    } else {
        block_moments_in::<B, 1>(model, keys, num_blocks)
    }
}

/// The exact model's moments, the walks over key counts taking `LANES` counts at a time.
fn block_moments_in<const B: usize, const LANES: usize>(
    model: &InBlock,
    keys: u64,
    num_blocks: u64,
) -> (f64, f64) {
    assert!(num_blocks > 0, "a filter has at least one block");
    if keys == 0 {
        return (0.0, 0.0);
    }
    let step = model.step();
    let powers_at = |c: u64| {
        let mut pw = [1.0; MAX_POWER + 1];
        for (x, s) in pw[..2 * B + 1].iter_mut().zip(&step[..2 * B + 1]) {
            *x = s.powf(c as f64);
        }
        pw
    };
    if num_blocks == 1 {
        let (m1, m2) = model.moments_b::<B>(&powers_at(keys));
        return (m1, m2 - m1 * m1);
    }
    // Binomial(keys, 1/num_blocks), summed outward from the mode until terms vanish; the
    // powers move by one `step` per key.
    let n = keys as f64;
    let p = 1.0 / num_blocks as f64;
    let ratio = p / (1.0 - p);
    let mode = ((n + 1.0) * p).floor().min(n) as u64;
    let pmf_mode = pmf_at_mode(n, p, mode);
    let pw_mode = powers_at(mode);
    let (mut s1, mut s2) = model.moments_b::<B>(&pw_mode);
    s1 *= pmf_mode;
    s2 *= pmf_mode;
    let small = |pmf: f64| pmf < 1e-18 * pmf_mode || pmf == 0.0;
    let mut sums = (s1, s2);
    let start = (pmf_mode, mode, pw_mode);
    // Upward to `keys`, then downward to 0.
    let up = |pmf: &mut f64, c: &mut u64, pw: &mut [f64; MAX_POWER + 1]| {
        *pmf *= (n - *c as f64) / (*c as f64 + 1.0) * ratio;
        *c += 1;
        for i in 0..2 * B + 1 {
            pw[i] *= step[i];
        }
    };
    walk::<B, LANES>(
        model,
        start,
        |c| keys - c,
        up,
        |pmf, _| small(pmf),
        &mut sums,
    );
    let down = |pmf: &mut f64, c: &mut u64, pw: &mut [f64; MAX_POWER + 1]| {
        *pmf *= *c as f64 / (n - *c as f64 + 1.0) / ratio;
        *c -= 1;
        for i in 0..2 * B + 1 {
            pw[i] /= step[i];
        }
    };
    let ends = |pmf: f64, m1: f64| small(pmf) || pmf * m1 < 1e-24;
    walk::<B, LANES>(model, start, |c| c, down, ends, &mut sums);
    let (s1, s2) = sums;
    let mean = s1.min(1.0);
    (mean, (s2 - mean * mean).max(0.0))
}

/// Binomial(`n`, `p`)'s pmf at `mode`, as the exact model computes it: `ln C(n, mode)` as a
/// sum of logs (exact enough, and the mode is a few thousand at most), then one `exp`.
pub(super) fn pmf_at_mode(n: f64, p: f64, mode: u64) -> f64 {
    let mut ln_pmf = mode as f64 * p.ln() + (n - mode as f64) * (-p).ln_1p();
    for i in 1..=mode {
        ln_pmf += ((n - mode as f64 + i as f64) / i as f64).ln();
    }
    ln_pmf.exp()
}

/// One walk of [`block_moments_in`] outward from `start` (the mode's pmf, count and powers):
/// `next` steps them to the next count, `left` counts the counts still ahead, and the walk
/// ends after the first term `ends` says (given its pmf and mean). Adds each term to `sums`.
///
/// It takes `LANES` counts at a time where that many are left: their factors stepped one by
/// one, their moments side by side (`moments_lanes_b`), then added in order up to the first
/// that ends the walk (the counts after it go unused). The same terms in the same order as
/// one count at a time, so the same bits.
#[inline(always)]
#[allow(clippy::needless_range_loop)]
fn walk<const B: usize, const LANES: usize>(
    model: &InBlock,
    start: (f64, u64, [f64; MAX_POWER + 1]),
    left: impl Fn(u64) -> u64,
    next: impl Fn(&mut f64, &mut u64, &mut [f64; MAX_POWER + 1]),
    ends: impl Fn(f64, f64) -> bool,
    sums: &mut (f64, f64),
) {
    let (mut pmf, mut c, mut pw) = start;
    let mut pmfs = [0.0; LANES];
    let mut cols = [[0.0; LANES]; MAX_POWER + 1];
    while left(c) > 0 {
        let lanes = if left(c) >= LANES as u64 { LANES } else { 1 };
        for l in 0..lanes {
            next(&mut pmf, &mut c, &mut pw);
            for i in 0..2 * B + 1 {
                cols[i][l] = pw[i];
            }
            pmfs[l] = pmf;
        }
        let moments: [(f64, f64); LANES] = if lanes == LANES {
            model.moments_lanes_b::<B, LANES>(&cols)
        } else {
            [model.moments_b::<B>(&pw); LANES]
        };
        for ((m1, m2), pmf) in moments.into_iter().zip(pmfs).take(lanes) {
            sums.0 += pmf * m1;
            sums.1 += pmf * m2;
            if ends(pmf, m1) {
                return;
            }
        }
    }
}
