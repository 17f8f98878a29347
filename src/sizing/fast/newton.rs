// The root of the goal's equation in `ln num_blocks` by safeguarded Newton steps, with a
// bound on its error.

// Without `std`, `f64` lacks `ln`, `exp`, ... (with it, or in tests, std's own are found).
#[cfg(not(any(feature = "std", test)))]
use crate::math::F64Math as _;

use super::Shape;
use super::eval::{Eval, Level};
use crate::layout::MAX_BLOCKS;
use crate::sizing::Goal;

impl Shape {
    /// The real root of `ln value(u) = ln fpr` in `u = ln blocks` by safeguarded Newton steps
    /// at `level`, from `u` (already evaluated as `first` if given), below `hi` (known to
    /// meet the goal). `Ok(None)` above the ceiling, `Err(())` if two blocks meet.
    pub(super) fn root(
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
}

/// A root of [`Shape::root`]: `u = ln blocks`, `blocks` (`e^u`, rounded), the slope there and a
/// bound on the root's error in `u`.
pub(super) struct Root {
    pub(super) u: f64,
    pub(super) blocks: f64,
    pub(super) slope: f64,
    pub(super) error: f64,
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
