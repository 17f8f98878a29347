// The binomial sum over a block's key counts, sampled at a stride from the mode outward:
// where each count's moments come from (stepped powers or a shape's table), and the
// evaluation that assembles the goal's value and slope from the sums ([`Shape::eval`]).

// Without `std`, `f64` lacks `ln`, `exp`, ... (with it, or in tests, std's own are found).
#[cfg(not(any(feature = "std", test)))]
use crate::math::F64Math as _;

use super::eval::{Eval, Level, ln_choose};
#[cfg(feature = "std")]
use super::{COUNT_CHUNK, CountChunk};
use super::{Shape, powi_each};
use crate::sizing::exact::{MAX_POWER, pmf_at_mode, with_b};
// Named in doc comments only.
#[cfg(all(doc, feature = "std"))]
use super::TABLED_COUNTS;

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
pub(super) trait CountSource {
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
pub(super) struct Tabled<'a, const B: usize> {
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
    pub(super) fn new(shape: &'a Shape) -> Self {
        Tabled {
            shape,
            #[cfg(feature = "std")]
            chunk: (0u64.wrapping_sub(COUNT_CHUNK as u64), &NO_CHUNK),
        }
    }

    /// A block's moments at `c` keys: from [`Shape::counts`] below [`TABLED_COUNTS`].
    #[inline(always)]
    pub(super) fn at(&mut self, c: u64) -> (f64, f64) {
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

pub(super) fn eval_b<const B: usize>(
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
    /// The goal's value at a real block count `blocks >= 2` (see [`Eval`]).
    pub(in crate::sizing) fn eval(
        &self,
        keys: u64,
        blocks: f64,
        margin_sd: f64,
        level: Level,
    ) -> Eval {
        self.eval_ln(keys, blocks, blocks.ln(), margin_sd, level)
    }

    /// [`Shape::eval`] where `ln blocks` is known: the searches step in it.
    pub(super) fn eval_ln(
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
