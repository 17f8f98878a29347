//! One key against one block: the single-key methods' probe, chosen once per filter.
//!
//! A filter built on a tier holds a [`OneKey`]: four function pointers compiled for that tier
//! and the filter's layout (the pattern in lanes, and the block test or update in a few
//! vector operations, with no branch per probe), and the filter's round table. So a single-key
//! call costs its hash, one block index and one indirect call that always goes to the same
//! place: no tier or layout decision per key, and nothing that stops the caller's loop from
//! overlapping the next keys' cache misses.
//!
//! The entries are written once here ([`one_key_entries!`]) and instantiated in each tier's
//! file, inside a `#[target_feature]` function, as the batch entry points are.

use crate::layout::{Block, Layout, Row, contains_scalar, insert_scalar, pattern_scalar};

/// A tier's single-key entries for one layout.
///
/// Each pointer may only be called on a CPU that supports the tier it was compiled for,
/// which [`OneKey`] guarantees (it is made only by `Kernel::one_key`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct OneKeyFns {
    pub contains: unsafe fn(&Block, u32, &[Row]) -> bool,
    pub insert: unsafe fn(&mut Block, u32, &[Row]),
    pub insert_new: unsafe fn(&mut Block, u32, &[Row]) -> bool,
    pub pattern: unsafe fn(u32, &[Row]) -> Block,
}

/// The single-key probe of one filter: its tier's entries for its layout, and its rounds.
#[derive(Clone, Copy, Debug)]
pub(crate) struct OneKey {
    fns: &'static OneKeyFns,
    rows: &'static [Row],
}

impl OneKey {
    /// # Safety
    /// The CPU must support the tier `fns` was compiled for; `rows` must be the round table
    /// of the layout `fns` was compiled for.
    pub(super) unsafe fn new(fns: &'static OneKeyFns, rows: &'static [Row]) -> OneKey {
        OneKey { fns, rows }
    }

    /// Whether every probe of `lo` is set in `block`.
    #[inline(always)]
    pub fn contains(&self, block: &Block, lo: u32) -> bool {
        // SAFETY: `new`'s contract: the CPU supports the entry's tier, and the rows are its
        // layout's.
        unsafe { (self.fns.contains)(block, lo, self.rows) }
    }

    /// Sets the probes of `lo` in `block`.
    #[inline(always)]
    pub fn insert(&self, block: &mut Block, lo: u32) {
        // SAFETY: as in `contains`.
        unsafe { (self.fns.insert)(block, lo, self.rows) }
    }

    /// Sets the probes of `lo` in `block`; whether some were not set before.
    #[inline(always)]
    pub fn insert_new(&self, block: &mut Block, lo: u32) -> bool {
        // SAFETY: as in `contains`.
        unsafe { (self.fns.insert_new)(block, lo, self.rows) }
    }

    /// The probes of `lo`, as a block.
    #[inline(always)]
    pub fn pattern(&self, lo: u32) -> Block {
        // SAFETY: as in `contains`.
        unsafe { (self.fns.pattern)(lo, self.rows) }
    }
}

/// The scalar reference's entries: one probe at a time, as the scalar tier's batches do.
pub(super) static SCALAR: [OneKeyFns; 2] = [scalar_fns::<true>(), scalar_fns::<false>()];

const fn layout_of<const WORDS: bool>() -> Layout {
    if WORDS {
        Layout::Sectors8x64
    } else {
        Layout::Sectors4x128
    }
}

const fn scalar_fns<const WORDS: bool>() -> OneKeyFns {
    fn k<const WORDS: bool>(rows: &[Row]) -> usize {
        rows.len() * layout_of::<WORDS>().sectors() as usize
    }
    fn contains<const WORDS: bool>(block: &Block, lo: u32, rows: &[Row]) -> bool {
        contains_scalar(block, layout_of::<WORDS>(), lo, k::<WORDS>(rows))
    }
    fn insert<const WORDS: bool>(block: &mut Block, lo: u32, rows: &[Row]) {
        insert_scalar(block, layout_of::<WORDS>(), lo, k::<WORDS>(rows))
    }
    fn insert_new<const WORDS: bool>(block: &mut Block, lo: u32, rows: &[Row]) -> bool {
        let new = !contains::<WORDS>(block, lo, rows);
        insert::<WORDS>(block, lo, rows);
        new
    }
    fn pattern<const WORDS: bool>(lo: u32, rows: &[Row]) -> Block {
        pattern_scalar(layout_of::<WORDS>(), lo, k::<WORDS>(rows))
    }
    OneKeyFns {
        contains: contains::<WORDS>,
        insert: insert::<WORDS>,
        insert_new: insert_new::<WORDS>,
        pattern: pattern::<WORDS>,
    }
}

/// Index of a layout's entries in a tier's table.
pub(super) const fn slot(layout: Layout) -> usize {
    match layout {
        Layout::Sectors8x64 => 0,
        Layout::Sectors4x128 => 1,
    }
}

/// A tier's single-key entries, `ONE_KEY: [OneKeyFns; 2]` (8x64, then 4x128), for the lanes
/// token `$token` made by `$make` (an expression valid where the CPU is known to support the
/// tier), compiled with `#[target_feature(enable = $features)]` (none for `portable`).
macro_rules! one_key_entries {
    ($token:ty, $make:expr $(, $features:literal)?) => {
        mod one_key_entries {
            use super::*;
            use crate::kernel::lanes;
            use crate::kernel::one_key::OneKeyFns;
            use crate::layout::{Block, Row};

            /// # Safety
            /// The CPU must support this tier.
            $(#[target_feature(enable = $features)])?
            unsafe fn contains<const WORDS: bool>(block: &Block, lo: u32, rows: &[Row]) -> bool {
                // SAFETY: the caller guarantees the tier.
                #[allow(unused_unsafe)]
                let l: $token = unsafe { $make };
                lanes::contains::<$token, WORDS>(l, block, lo, rows)
            }

            /// # Safety
            /// The CPU must support this tier.
            $(#[target_feature(enable = $features)])?
            unsafe fn insert<const WORDS: bool>(block: &mut Block, lo: u32, rows: &[Row]) {
                // SAFETY: the caller guarantees the tier.
                #[allow(unused_unsafe)]
                let l: $token = unsafe { $make };
                lanes::insert::<$token, WORDS>(l, block, lo, rows)
            }

            /// # Safety
            /// The CPU must support this tier.
            $(#[target_feature(enable = $features)])?
            unsafe fn insert_new<const WORDS: bool>(
                block: &mut Block,
                lo: u32,
                rows: &[Row],
            ) -> bool {
                // SAFETY: the caller guarantees the tier.
                #[allow(unused_unsafe)]
                let l: $token = unsafe { $make };
                let p = lanes::pattern::<$token, WORDS>(l, lo, rows);
                let b = l.load(&block.0);
                l.store(&mut block.0, l.or(b, p));
                !l.covers(b, p)
            }

            /// # Safety
            /// The CPU must support this tier.
            $(#[target_feature(enable = $features)])?
            unsafe fn pattern<const WORDS: bool>(lo: u32, rows: &[Row]) -> Block {
                // SAFETY: the caller guarantees the tier.
                #[allow(unused_unsafe)]
                let l: $token = unsafe { $make };
                lanes::pattern_block::<$token, WORDS>(l, lo, rows)
            }

            const fn fns<const WORDS: bool>() -> OneKeyFns {
                OneKeyFns {
                    contains: contains::<WORDS>,
                    insert: insert::<WORDS>,
                    insert_new: insert_new::<WORDS>,
                    pattern: pattern::<WORDS>,
                }
            }

            pub(crate) static ONE_KEY: [OneKeyFns; 2] = [fns::<true>(), fns::<false>()];
        }
        pub(crate) use one_key_entries::ONE_KEY;
    };
}

pub(crate) use one_key_entries;
