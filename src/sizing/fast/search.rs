// The fewest blocks of one shape: bounds from a coarse search, narrowed by a fine one where a
// comparison needs it, and single decisions walking and bisecting between block counts.

// Without `std`, `f64` lacks `ln`, `exp`, ... (with it, or in tests, std's own are found).
#[cfg(not(any(feature = "std", test)))]
use crate::math::F64Math as _;

use super::Shape;
use super::decide::Probe;
use super::eval::{Eval, Level};
use super::newton::Root;
use crate::layout::MAX_BLOCKS;
use crate::sizing::Goal;

impl Shape {
    /// Bounds on the fewest blocks that meet `goal` at `keys` keys, from a coarse search
    /// started at `guess`.
    pub(in crate::sizing) fn bound(&self, keys: u64, goal: Goal, guess: f64) -> Bounds {
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

    /// [`Shape::bound_known`] at `known`, the search starting from `probe`'s evaluation if
    /// one was made there.
    pub(in crate::sizing) fn bound_probed(
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
    pub(in crate::sizing) fn bound_from(
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
    pub(in crate::sizing) fn bound_at(&self, keys: u64, goal: Goal, start: f64) -> Bounds {
        let u = start.ln();
        let first = self.eval_ln(keys, start, u, goal.margin_sd, Level::Coarse);
        self.search(keys, goal, Level::Coarse, u, Some(first), f64::INFINITY)
    }

    /// Bounds on the fewest blocks given that `known` meets the goal (decided exactly).
    pub(in crate::sizing) fn bound_known(&self, keys: u64, goal: Goal, known: u64) -> Bounds {
        let u = (known.max(1) as f64).ln();
        if known < 2 {
            return Bounds::exact(known, u);
        }
        self.search(keys, goal, Level::Coarse, u, None, u)
    }

    /// The fewest blocks that meet the goal (`NONE` above [`MAX_BLOCKS`]), settling
    /// `bounds` to it: a fine search from the coarse root, then single decisions if need be.
    pub(in crate::sizing) fn refine(&self, keys: u64, goal: Goal, bounds: &mut Bounds) -> u64 {
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
                // target, a fine decision there would be in doubt too (often, below rates of
                // 1e-4 at a billion blocks): it starts at the pinned level. (At twice the bound
                // it also took decisions the fine level makes, at a higher cost:
                // perf-reports/2026-11-28-plan-probes-kept.md.)
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

/// A block count standing for "more than [`MAX_BLOCKS`]".
pub(super) const NONE: u64 = MAX_BLOCKS + 1;

/// What is known of one shape's fewest blocks: `lo..=hi` (`NONE` for too many), the root of
/// the model's equation in `u = ln blocks` it came from, and a `u` known to meet the goal.
#[derive(Clone, Copy, Debug)]
pub(in crate::sizing) struct Bounds {
    pub(in crate::sizing) lo: u64,
    pub(in crate::sizing) hi: u64,
    root: f64,
    known: f64,
}

impl Bounds {
    pub(in crate::sizing) fn exact(b: u64, root: f64) -> Bounds {
        Bounds {
            lo: b,
            hi: b,
            root,
            known: f64::INFINITY,
        }
    }

    /// Bounds given only that `blocks` fails the goal: more, perhaps too many.
    pub(in crate::sizing) fn failing_at(blocks: u64) -> Bounds {
        Bounds {
            lo: blocks + 1,
            hi: NONE,
            root: (blocks as f64).ln(),
            known: f64::INFINITY,
        }
    }

    /// These bounds, given that `blocks` (within them) meets the goal.
    pub(in crate::sizing) fn meeting_at(self, blocks: u64) -> Bounds {
        Bounds {
            hi: self.hi.min(blocks),
            known: (blocks as f64).ln(),
            ..self
        }
    }

    /// The root in blocks (to scale the next shape's guess by).
    pub(in crate::sizing) fn root_blocks(&self) -> f64 {
        self.root.exp()
    }
}
