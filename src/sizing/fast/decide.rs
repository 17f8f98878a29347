// Whether a block count meets the goal: a coarse evaluation, else a fine one, else a pinned
// one, else the exact model; and what a single coarse evaluation (a probe) says.

// Without `std`, `f64` lacks `ln`, `exp`, ... (with it, or in tests, std's own are found).
#[cfg(not(any(feature = "std", test)))]
use crate::math::F64Math as _;

use super::Shape;
use super::eval::{Eval, Level};
use crate::sizing::Goal;
use crate::sizing::exact::block_moments_of;

impl Shape {
    /// The exact model's verdict on `blocks` blocks: from a coarse evaluation unless it is
    /// within its error of the target, then a fine one, then the exact model.
    pub(in crate::sizing) fn meets(&self, keys: u64, blocks: u64, goal: Goal) -> bool {
        self.meets_from(keys, blocks, goal, Level::Coarse)
    }

    /// [`Shape::meets`] starting at `first` (`Fine` where a coarse evaluation cannot tell
    /// neighbouring block counts apart, `Pinned` where a fine one is expected in doubt).
    pub(super) fn meets_from(&self, keys: u64, blocks: u64, goal: Goal, first: Level) -> bool {
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

    /// One coarse evaluation at `blocks`, and what it says of the exact model there.
    pub(in crate::sizing) fn probe(&self, keys: u64, goal: Goal, blocks: u64) -> Probe {
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
    pub(in crate::sizing) fn meets_probed(
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
}

/// What one coarse evaluation says of the exact model at some block count.
#[derive(Clone, Copy)]
pub(in crate::sizing) enum Probe {
    Meets(Eval),
    Fails,
    /// Within the coarse level's error of the target (no evaluation below two blocks).
    Doubt(Option<Eval>),
}
