// One block: the exact model's verdict from cheap sums bounded on both sides, and the floor
// under one block's mean that settles most "no"s (kept per key count by the shared shapes).

// Without `std`, `f64` lacks `ln`, `exp`, ... (with it, or in tests, std's own are found).
#[cfg(not(any(feature = "std", test)))]
use crate::math::F64Math as _;

#[cfg(feature = "std")]
use alloc::boxed::Box;
#[cfg(feature = "std")]
use core::sync::atomic::{AtomicU64, Ordering};

#[cfg(feature = "std")]
use super::{COUNT_CHUNK, UNSET};
use super::{Shape, powi_each};
use crate::sizing::Goal;
use crate::sizing::exact::MAX_POWER;

impl Shape {
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
    pub(super) fn one_block_verdict(&self, keys: u64, goal: Goal) -> Option<bool> {
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
}
