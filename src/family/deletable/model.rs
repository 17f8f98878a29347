//! The analytic model of deletability: how likely a key can be removed, for the blocked
//! layout and under the paper's unblocked assumptions.

// Without `std`, `f64` lacks `ln`, `exp`, ... (with it, or in tests, std's own are found).
#[cfg(not(any(feature = "std", test)))]
use crate::math::F64Math as _;

use crate::layout::Layout;
use crate::sizing::ln_gamma;

/// `(W)_t / W^t`: the probability that `t` uniform probes into `W` bits hit `t` distinct bits.
fn all_distinct(w: f64, t: u64) -> f64 {
    let mut p = 1.0;
    for i in 0..t {
        if i as f64 >= w {
            return 0.0;
        }
        p *= 1.0 - i as f64 / w;
    }
    p
}

/// The probability that a key is deletable, for the blocked layout, once `keys` distinct keys
/// were inserted into an empty filter of `num_blocks` blocks with `probes` probes per key in
/// `layout` and regions of `region_bits` bits.
///
/// Derivation. A key `x` shares its block with `c - 1` others, `c - 1 ~ Binomial(keys - 1,
/// 1 / num_blocks)`. Each of the block's `S` sectors of `W` bits then holds `t = b c` uniform
/// probes (`b = probes / S`), independently of the other sectors, and `x` is deletable when
/// one of its probes lies in a region where no two probes met:
///
/// * regions of `g >= W` bits hold `g / W` whole sectors, collision-free with probability
///   `q = ((W)_t / W^t)^(g/W)`, and `x` touches `S W / g` of them:
///   `D(c) = 1 - (1 - q)^(S W / g)` (exact);
/// * regions of `g < W` bits: the region of one of `x`'s probes receives `u ~ Binomial(t - 1,
///   g / W)` of the sector's other probes and is collision-free with probability
///   `prod_{i=1..u} (1 - i/g)`; with `phi` that probability's mean,
///   `D(c) = 1 - (1 - phi)^probes` (exact for one probe per sector, as the 8x64 layout at
///   `k = 8`; for more it treats a key's probes in one sector as independent).
///
/// The result is the binomial mean of `D(c)`. The model counts two probes of the same key on
/// one bit as a collision; the filter does not (such a bit is still one key's), so with more
/// than one probe per sector the model is slightly pessimistic.
///
/// ```
/// use blockbloom::{deletable::blocked_deletability, layout::Layout};
///
/// // 1000 blocks, 8 probes, one-word regions: deletable while blocks are nearly empty.
/// let light = blocked_deletability(1_000, 1000, Layout::Sectors8x64, 8, 64);
/// let full = blocked_deletability(50_000, 1000, Layout::Sectors8x64, 8, 64);
/// assert!(light > 0.99 && full < 0.001);
/// assert!(blocked_deletability(50_000, 1000, Layout::Sectors8x64, 8, 8) > 0.2);
/// ```
pub fn blocked_deletability(
    keys: u64,
    num_blocks: u64,
    layout: Layout,
    probes: u32,
    region_bits: u32,
) -> f64 {
    if keys == 0 || num_blocks == 0 {
        return 0.0;
    }
    let sectors = layout.sectors() as u64;
    let w = layout.sector_bits() as f64;
    let b = (probes as u64 / sectors).max(1);
    let g = region_bits as f64;
    let given_load = |c: u64| -> f64 {
        let t = b * c;
        if g >= w {
            let per_region = (g / w) as i32;
            let q = all_distinct(w, t).powi(per_region);
            let touched = (sectors as f64 * w / g).max(1.0) as i32;
            1.0 - (1.0 - q).powi(touched)
        } else {
            // Mean over u ~ Binomial(t - 1, g / W) of prod_{i=1..u} (1 - i/g).
            let others = t - 1;
            let p = g / w;
            let mut phi = 0.0;
            let mut free = 1.0; // prod_{i=1..u} (1 - i/g)
            for u in 0..=others.min(g as u64) {
                if u > 0 {
                    free *= 1.0 - u as f64 / g;
                }
                phi += binomial_pmf(others, u, p) * free;
            }
            1.0 - (1.0 - phi).powi(probes as i32)
        }
    };
    // Mean over the load of x's block: c - 1 ~ Binomial(keys - 1, 1 / num_blocks); in 8x32,
    // of x's half where regions lie within halves (at 512-bit regions, which span both halves,
    // the block's load, an approximation).
    let others = keys - 1;
    let part_bits = layout.sectors() * layout.sector_bits();
    let parts = if region_bits <= part_bits {
        layout.parts()
    } else {
        1
    };
    let p = 1.0 / (num_blocks * parts as u64) as f64;
    let mean = others as f64 * p;
    let top = (mean + 12.0 * mean.sqrt() + 30.0).min(others as f64) as u64;
    let mut total = 0.0;
    let mut weight = 0.0;
    for j in 0..=top {
        let pmf = binomial_pmf(others, j, p);
        if pmf == 0.0 && (j as f64) < mean {
            continue;
        }
        total += pmf * given_load(j + 1);
        weight += pmf;
    }
    if weight > 0.0 { total / weight } else { 0.0 }
}

/// `P[X = j]` for `X ~ Binomial(n, p)`, computed in the log domain (no underflow for large
/// `n`).
fn binomial_pmf(n: u64, j: u64, p: f64) -> f64 {
    if j > n {
        return 0.0;
    }
    if p >= 1.0 {
        return if j == n { 1.0 } else { 0.0 };
    }
    let (n, j) = (n as f64, j as f64);
    let ln_choose = ln_gamma(n + 1.0) - ln_gamma(j + 1.0) - ln_gamma(n - j + 1.0);
    (ln_choose + j * p.ln() + (n - j) * (-p).ln_1p()).exp()
}

/// The probability that a key is deletable under the paper's unblocked assumptions: `keys`
/// keys with `probes` uniform probes each over all `bits` bits, regions of `region_bits` bits,
/// bits treated as independent. (Derived here under those assumptions, conditioning on the
/// key's own bit; not transcribed from the paper.)
///
/// A region holding one of `x`'s bits is collision-free when that bit receives none of the
/// other `probes * keys - 1` probes and each other bit of the region at most one:
/// `P_cf = p0 * (p0 + p1)^(g - 1)` with `p0 = (1 - 1/m)^(kn - 1)` and
/// `p1 = (kn - 1)/m (1 - 1/m)^(kn - 2)`; `x` is deletable when one of its `k` regions is:
/// `1 - (1 - P_cf)^k`.
///
/// ```
/// use blockbloom::deletable::unblocked_deletability;
/// let m = 1_000_000.0;
/// assert!(unblocked_deletability(m, 8, 1_000, 64) > 0.99);
/// assert!(unblocked_deletability(m, 8, 100_000, 64) < 0.01);
/// ```
pub fn unblocked_deletability(bits: f64, probes: u32, keys: u64, region_bits: u32) -> f64 {
    if keys == 0 || bits <= 0.0 {
        return 0.0;
    }
    let others = (probes as f64 * keys as f64 - 1.0).max(0.0);
    let miss = (-1.0 / bits).ln_1p(); // ln(1 - 1/m)
    let p0 = (others * miss).exp();
    let p1 = if others >= 1.0 {
        others / bits * ((others - 1.0) * miss).exp()
    } else {
        0.0
    };
    let cf = p0 * (p0 + p1).min(1.0).powf(region_bits as f64 - 1.0);
    1.0 - (1.0 - cf).powi(probes as i32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binomial_pmf_sums_to_one() {
        for (n, p) in [(10u64, 0.3), (1_000_000, 1.0 / 20_000.0), (5, 0.5)] {
            let total: f64 = (0..=n.min(2000)).map(|j| binomial_pmf(n, j, p)).sum();
            assert!((total - 1.0).abs() < 1e-9, "{n} {p}: {total}");
        }
    }

    #[test]
    fn model_limits() {
        // One key alone in its block: every region collision-free.
        assert!((blocked_deletability(1, 100, Layout::Sectors8x64, 8, 64) - 1.0).abs() < 1e-12);
        // Whole-block regions with 8 probes: a key alone in its block is deletable, and more
        // keys are only sometimes.
        let n = 200;
        let blocks = 100u64;
        let alone = (1.0 - 1.0 / blocks as f64).powi(n - 1);
        let d = blocked_deletability(n as u64, blocks, Layout::Sectors8x64, 8, 512);
        assert!(d > alone && d < 1.0, "{d} vs {alone}");
        // Smaller regions are never worse.
        let mut last = 0.0;
        for g in [512, 256, 128, 64, 32, 16, 8] {
            let d = blocked_deletability(20_000, 1000, Layout::Sectors8x64, 8, g);
            assert!(d >= last, "{g}: {d} < {last}");
            last = d;
        }
    }
}
