// The block moments per key count that the process's shared shapes keep, filled a chunk at a
// time on first use, and the moments computed where no table holds them.

#[cfg(feature = "std")]
use alloc::boxed::Box;

use super::eval::Level;
#[cfg(feature = "std")]
use super::{COUNT_CHUNK, CountChunk, TABLED_COUNTS};
use super::{Shape, powi_each};
// Named in doc comments only.
#[cfg(doc)]
use super::sums::Tabled;

impl Shape {
    /// This shape with an (empty) table of its moments per key count.
    #[cfg(feature = "std")]
    pub(super) fn with_count_table(mut self) -> Shape {
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
    pub(super) fn tabled(&self, keys: u64, level: Level) -> bool {
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
    pub(super) fn table_chunk<const B: usize>(&self, index: u64) -> Option<&CountChunk> {
        let cell = self.counts.get(index as usize)?;
        Some(cell.get_or_init(|| self.count_chunk::<B>(index as usize)))
    }

    /// A block's moments at `c` keys as the exact model computes them (where no table
    /// holds them).
    pub(super) fn computed_moments<const B: usize>(&self, c: u64) -> (f64, f64) {
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
}
