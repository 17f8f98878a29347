//! One key against one block: the single-key methods' probe, chosen once per filter; and,
//! beside it, the entries of calls of a few `u64` keys (bursts, [`OneKey::burst_query`]).
//!
//! A filter built on a tier holds a [`OneKey`]: four function pointers compiled for that tier
//! and the filter's layout (the pattern in lanes, and the block test or update in a few
//! vector operations, with no branch per probe), and the filter's round table. So a single-key
//! call costs its hash, one block index and one indirect call that always goes to the same
//! place: no tier or layout decision per key, and nothing that stops the caller's loop from
//! overlapping the next keys' cache misses.
//!
//! The entries are written once here ([`one_key_entries!`]: [`one_key_blocks!`] for 8x64 and
//! 4x128, [`one_key_halves!`] for 8x32) and instantiated in each tier's file, inside a
//! `#[target_feature]` function, as the batch entry points are. The AVX-512 tier instantiates
//! the blocks' alone and takes AVX2's 8x32 row.

use super::probe::block::{Insert, Query, Sink, layout_of};
use super::probe::burst::{Burst, burst_scalar};
use crate::layout::stripes::StripeGuard;
use crate::layout::{
    AtomicBlock, Block, Layout, MAX_PROBES, contains_scalar, insert_scalar, pattern_scalar,
};

/// A tier's single-key entries for one layout.
///
/// Each pointer may only be called on a CPU that supports the tier it was compiled for,
/// which [`OneKey`] guarantees (it is made only by `Kernel::one_key`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct OneKeyFns {
    pub contains: unsafe fn(&Block, u32) -> bool,
    pub insert: unsafe fn(&mut Block, u32),
    pub insert_new: unsafe fn(&mut Block, u32) -> bool,
    pub pattern: unsafe fn(u32) -> Block,
    /// The pattern, OR'd into a shared block whose stripe lock the caller holds
    /// ([`AtomicBlock::or_locked`]).
    pub or_locked: unsafe fn(&AtomicBlock, u32, &StripeGuard<'_>) -> bool,
    /// A burst of `u64` keys under a hash with an integer hash of its own queried
    /// ([`burst_blocked`](super::probe::burst::burst_blocked)).
    pub burst_query: unsafe fn(&[Block], Burst, &[u64], Sink<'_>),
    /// A burst of `u64` keys under a hash with an integer hash of its own inserted.
    pub burst_insert: unsafe fn(&mut [Block], Burst, &[u64]),
}

/// A tier's entries: per layout ([`slot`]), per round count (index `rounds - 1`; 8x64 and
/// 8x32 have four, 4x128 eight, and the rest of a row repeats its last entry, never used).
pub(crate) type OneKeyTable = [[OneKeyFns; MAX_ROUNDS]; 3];

/// The most rounds of any layout (4x128 at 32 probes).
pub(crate) const MAX_ROUNDS: usize = (MAX_PROBES / 4) as usize;

/// The single-key probe of one filter: its tier's entries for its layout and rounds.
#[derive(Clone, Copy, Debug)]
pub(crate) struct OneKey {
    fns: &'static OneKeyFns,
}

impl OneKey {
    /// # Safety
    /// The CPU must support the tier `fns` was compiled for.
    pub(super) unsafe fn new(fns: &'static OneKeyFns) -> OneKey {
        OneKey { fns }
    }

    /// Whether every probe of `lo` is set in `block`.
    #[inline(always)]
    pub fn contains(&self, block: &Block, lo: u32) -> bool {
        // SAFETY: `new`'s contract: the CPU supports the entry's tier.
        unsafe { (self.fns.contains)(block, lo) }
    }

    /// Sets the probes of `lo` in `block`.
    #[inline(always)]
    pub fn insert(&self, block: &mut Block, lo: u32) {
        // SAFETY: as in `contains`.
        unsafe { (self.fns.insert)(block, lo) }
    }

    /// Sets the probes of `lo` in `block`; whether some were not set before.
    #[inline(always)]
    pub fn insert_new(&self, block: &mut Block, lo: u32) -> bool {
        // SAFETY: as in `contains`.
        unsafe { (self.fns.insert_new)(block, lo) }
    }

    /// The probes of `lo`, as a block.
    #[inline(always)]
    pub fn pattern(&self, lo: u32) -> Block {
        // SAFETY: as in `contains`.
        unsafe { (self.fns.pattern)(lo) }
    }

    /// Sets the probes of `lo` in a shared `block` whose stripe lock `guard` holds; whether
    /// some were not set before. The pattern stays in the tier's registers.
    #[inline(always)]
    pub fn or_locked(&self, block: &AtomicBlock, lo: u32, guard: &StripeGuard<'_>) -> bool {
        // SAFETY: as in `contains`.
        unsafe { (self.fns.or_locked)(block, lo, guard) }
    }

    /// Answers a burst of at most [`BURST`](super::probe::burst::BURST) `u64` keys of a filter
    /// whose hash has an integer hash of its own (`KeyHash::word_hash`) walked as `at` says, in
    /// its tier's lanes with no dispatch per call. `blocks` are the filter's (any slice is safe:
    /// the keys are placed in it).
    ///
    /// # Panics
    /// If `keys` holds more than [`BURST`](super::probe::burst::BURST) keys or `sink` does not fit
    /// them.
    #[inline(always)]
    pub fn burst_query(&self, blocks: &[Block], at: Burst, keys: &[u64], sink: Sink<'_>) {
        // SAFETY: as in `contains`.
        unsafe { (self.fns.burst_query)(blocks, at, keys, sink) }
    }

    /// Inserts a burst of at most [`BURST`](super::probe::burst::BURST) `u64` keys (see
    /// [`burst_query`](Self::burst_query)).
    ///
    /// # Panics
    /// If `keys` holds more than [`BURST`](super::probe::burst::BURST) keys.
    #[inline(always)]
    pub fn burst_insert(&self, blocks: &mut [Block], at: Burst, keys: &[u64]) {
        // SAFETY: as in `contains`.
        unsafe { (self.fns.burst_insert)(blocks, at, keys) }
    }
}

/// The 8x64 and 4x128 rows of a [`OneKeyTable`]: `$fns::<WORDS, R>()` for every round count.
macro_rules! block_rows {
    ($fns:ident) => {
        [
            [
                $fns::<true, 1>(),
                $fns::<true, 2>(),
                $fns::<true, 3>(),
                $fns::<true, 4>(),
                $fns::<true, 4>(),
                $fns::<true, 4>(),
                $fns::<true, 4>(),
                $fns::<true, 4>(),
            ],
            [
                $fns::<false, 1>(),
                $fns::<false, 2>(),
                $fns::<false, 3>(),
                $fns::<false, 4>(),
                $fns::<false, 5>(),
                $fns::<false, 6>(),
                $fns::<false, 7>(),
                $fns::<false, 8>(),
            ],
        ]
    };
}

/// The 8x32 row of a [`OneKeyTable`]: `$fns32::<R>()` for every round count.
macro_rules! halves_row {
    ($fns32:ident) => {
        [
            $fns32::<1>(),
            $fns32::<2>(),
            $fns32::<3>(),
            $fns32::<4>(),
            $fns32::<4>(),
            $fns32::<4>(),
            $fns32::<4>(),
            $fns32::<4>(),
        ]
    };
}

/// The scalar reference's 8x64 and 4x128 rows.
const SCALAR_BLOCKS: [[OneKeyFns; MAX_ROUNDS]; 2] = block_rows!(scalar_fns);

/// The scalar reference's entries: one probe at a time, as the scalar tier's batches do.
pub(crate) static SCALAR: OneKeyTable = [
    SCALAR_BLOCKS[0],
    SCALAR_BLOCKS[1],
    halves_row!(scalar_fns_8x32),
];

const fn scalar_fns<const WORDS: bool, const R: usize>() -> OneKeyFns {
    const fn k<const WORDS: bool, const R: usize>() -> usize {
        R * layout_of::<WORDS>().sectors() as usize
    }
    fn contains<const WORDS: bool, const R: usize>(block: &Block, lo: u32) -> bool {
        contains_scalar(block, layout_of::<WORDS>(), lo, k::<WORDS, R>())
    }
    fn insert<const WORDS: bool, const R: usize>(block: &mut Block, lo: u32) {
        insert_scalar(block, layout_of::<WORDS>(), lo, k::<WORDS, R>())
    }
    fn insert_new<const WORDS: bool, const R: usize>(block: &mut Block, lo: u32) -> bool {
        let new = !contains::<WORDS, R>(block, lo);
        insert::<WORDS, R>(block, lo);
        new
    }
    fn pattern<const WORDS: bool, const R: usize>(lo: u32) -> Block {
        pattern_scalar(layout_of::<WORDS>(), lo, k::<WORDS, R>())
    }
    fn or_locked<const WORDS: bool, const R: usize>(
        block: &AtomicBlock,
        lo: u32,
        guard: &StripeGuard<'_>,
    ) -> bool {
        block.or_locked(&pattern::<WORDS, R>(lo), guard)
    }
    fn burst_query<const WORDS: bool, const R: usize>(
        blocks: &[Block],
        at: Burst,
        keys: &[u64],
        sink: Sink<'_>,
    ) {
        burst_scalar(layout_of::<WORDS>(), R, Query(blocks), at, keys, sink)
    }
    fn burst_insert<const WORDS: bool, const R: usize>(
        blocks: &mut [Block],
        at: Burst,
        keys: &[u64],
    ) {
        burst_scalar(
            layout_of::<WORDS>(),
            R,
            Insert(blocks),
            at,
            keys,
            Sink::Discard,
        )
    }
    OneKeyFns {
        contains: contains::<WORDS, R>,
        insert: insert::<WORDS, R>,
        insert_new: insert_new::<WORDS, R>,
        pattern: pattern::<WORDS, R>,
        or_locked: or_locked::<WORDS, R>,
        burst_query: burst_query::<WORDS, R>,
        burst_insert: burst_insert::<WORDS, R>,
    }
}

/// The scalar reference's `Sectors8x32` entries for `R` rounds.
const fn scalar_fns_8x32<const R: usize>() -> OneKeyFns {
    const L: Layout = Layout::Sectors8x32;
    fn contains<const R: usize>(block: &Block, lo: u32) -> bool {
        contains_scalar(block, L, lo, 8 * R)
    }
    fn insert<const R: usize>(block: &mut Block, lo: u32) {
        insert_scalar(block, L, lo, 8 * R)
    }
    fn insert_new<const R: usize>(block: &mut Block, lo: u32) -> bool {
        let new = !contains::<R>(block, lo);
        insert::<R>(block, lo);
        new
    }
    fn pattern<const R: usize>(lo: u32) -> Block {
        pattern_scalar(L, lo, 8 * R)
    }
    fn or_locked<const R: usize>(block: &AtomicBlock, lo: u32, guard: &StripeGuard<'_>) -> bool {
        block.or_locked(&pattern::<R>(lo), guard)
    }
    fn burst_query<const R: usize>(blocks: &[Block], at: Burst, keys: &[u64], sink: Sink<'_>) {
        burst_scalar(L, R, Query(blocks), at, keys, sink)
    }
    fn burst_insert<const R: usize>(blocks: &mut [Block], at: Burst, keys: &[u64]) {
        burst_scalar(L, R, Insert(blocks), at, keys, Sink::Discard)
    }
    OneKeyFns {
        contains: contains::<R>,
        insert: insert::<R>,
        insert_new: insert_new::<R>,
        pattern: pattern::<R>,
        or_locked: or_locked::<R>,
        burst_query: burst_query::<R>,
        burst_insert: burst_insert::<R>,
    }
}

/// Index of a layout's entries in a tier's table.
pub(super) const fn slot(layout: Layout) -> usize {
    match layout {
        Layout::Sectors8x64 => 0,
        Layout::Sectors4x128 => 1,
        Layout::Sectors8x32 => 2,
    }
}

/// A tier's single-key entries, a [`OneKeyTable`] (8x64, 4x128, then 8x32) named `ONE_KEY`,
/// for the lanes token `$token` made by `$make` (an expression valid where the CPU is known
/// to support the tier), compiled with `#[target_feature(enable = $features)]` (none for
/// `portable`): [`one_key_blocks!`] and [`one_key_halves!`] together.
macro_rules! one_key_entries {
    ($token:ty, $make:expr $(, $features:literal)?) => {
        crate::kernel::one_key::one_key_blocks!($token, $make $(, $features)?);
        crate::kernel::one_key::one_key_halves!($token, $make $(, $features)?);
        pub(crate) static ONE_KEY: crate::kernel::one_key::OneKeyTable =
            [one_key_blocks::BLOCKS[0], one_key_blocks::BLOCKS[1], one_key_halves::HALVES];
    };
}
pub(crate) use one_key_entries;

/// A tier's 8x64 and 4x128 entries, `one_key_blocks::BLOCKS` (see [`one_key_entries!`]).
macro_rules! one_key_blocks {
    ($token:ty, $make:expr $(, $features:literal)?) => {
        mod one_key_blocks {
            use super::*;
            use crate::kernel::probe::block as lanes;
            use crate::kernel::one_key::{MAX_ROUNDS, OneKeyFns};
            use crate::kernel::probe::block::rows_of;
            use crate::kernel::probe::burst::{Burst, burst_blocked};
            use crate::kernel::probe::block::{Insert, Query};
            use crate::kernel::probe::block::Sink;
            use crate::layout::Block;

            /// # Safety
            /// The CPU must support this tier.
            $(#[target_feature(enable = $features)])?
            unsafe fn contains<const WORDS: bool, const R: usize>(block: &Block, lo: u32) -> bool {
                // SAFETY: the caller guarantees the tier.
                #[allow(unused_unsafe)]
                let l: $token = unsafe { $make };
                lanes::contains::<$token, WORDS>(l, block, lo, rows_of::<WORDS, R>())
            }

            /// # Safety
            /// The CPU must support this tier.
            $(#[target_feature(enable = $features)])?
            unsafe fn insert<const WORDS: bool, const R: usize>(block: &mut Block, lo: u32) {
                // SAFETY: the caller guarantees the tier.
                #[allow(unused_unsafe)]
                let l: $token = unsafe { $make };
                lanes::insert::<$token, WORDS>(l, block, lo, rows_of::<WORDS, R>())
            }

            /// # Safety
            /// The CPU must support this tier.
            $(#[target_feature(enable = $features)])?
            unsafe fn insert_new<const WORDS: bool, const R: usize>(
                block: &mut Block,
                lo: u32,
            ) -> bool {
                // SAFETY: the caller guarantees the tier.
                #[allow(unused_unsafe)]
                let l: $token = unsafe { $make };
                let p = lanes::pattern::<$token, WORDS>(l, lo, rows_of::<WORDS, R>());
                let b = l.load(&block.0);
                l.store(&mut block.0, l.or(b, p));
                !l.covers(b, p)
            }

            /// # Safety
            /// The CPU must support this tier.
            $(#[target_feature(enable = $features)])?
            unsafe fn pattern<const WORDS: bool, const R: usize>(lo: u32) -> Block {
                // SAFETY: the caller guarantees the tier.
                #[allow(unused_unsafe)]
                let l: $token = unsafe { $make };
                lanes::pattern_block::<$token, WORDS>(l, lo, rows_of::<WORDS, R>())
            }

            /// # Safety
            /// The CPU must support this tier.
            $(#[target_feature(enable = $features)])?
            unsafe fn or_locked<const WORDS: bool, const R: usize>(
                block: &crate::layout::AtomicBlock,
                lo: u32,
                guard: &crate::layout::stripes::StripeGuard<'_>,
            ) -> bool {
                // SAFETY: the caller guarantees the tier.
                #[allow(unused_unsafe)]
                let l: $token = unsafe { $make };
                let p = lanes::pattern_block::<$token, WORDS>(l, lo, rows_of::<WORDS, R>());
                block.or_locked(&p, guard)
            }

            /// # Safety
            /// The CPU must support this tier.
            $(#[target_feature(enable = $features)])?
            unsafe fn burst_query<const WORDS: bool, const R: usize>(
                blocks: &[Block],
                at: Burst,
                keys: &[u64],
                sink: Sink<'_>,
            ) {
                // SAFETY: the caller guarantees the tier.
                #[allow(unused_unsafe)]
                let l: $token = unsafe { $make };
                burst_blocked::<$token, _, WORDS, R>(l, Query(blocks), at, keys, sink)
            }

            /// # Safety
            /// The CPU must support this tier.
            $(#[target_feature(enable = $features)])?
            unsafe fn burst_insert<const WORDS: bool, const R: usize>(
                blocks: &mut [Block],
                at: Burst,
                keys: &[u64],
            ) {
                // SAFETY: the caller guarantees the tier.
                #[allow(unused_unsafe)]
                let l: $token = unsafe { $make };
                burst_blocked::<$token, _, WORDS, R>(l, Insert(blocks), at, keys, Sink::Discard)
            }

            const fn fns<const WORDS: bool, const R: usize>() -> OneKeyFns {
                OneKeyFns {
                    contains: contains::<WORDS, R>,
                    insert: insert::<WORDS, R>,
                    insert_new: insert_new::<WORDS, R>,
                    pattern: pattern::<WORDS, R>,
                    or_locked: or_locked::<WORDS, R>,
                    burst_query: burst_query::<WORDS, R>,
                    burst_insert: burst_insert::<WORDS, R>,
                }
            }

            pub(crate) const BLOCKS: [[OneKeyFns; MAX_ROUNDS]; 2] = block_rows!(fns);
        }
    };
}
pub(crate) use one_key_blocks;

/// A tier's `Sectors8x32` entries, `one_key_halves::HALVES` (see [`one_key_entries!`]).
macro_rules! one_key_halves {
    ($token:ty, $make:expr $(, $features:literal)?) => {
        mod one_key_halves {
            use super::*;
            use crate::kernel::probe::block as lanes;
            use crate::kernel::one_key::{MAX_ROUNDS, OneKeyFns};
            use crate::kernel::probe::burst::{Burst, burst_halved};
            use crate::kernel::probe::block::{Insert, Query};
            use crate::kernel::probe::block::Sink;
            use crate::layout::{Block, ROWS_8X32};

            /// # Safety
            /// The CPU must support this tier.
            $(#[target_feature(enable = $features)])?
            unsafe fn contains_8x32<const R: usize>(block: &Block, lo: u32) -> bool {
                // SAFETY: the caller guarantees the tier.
                #[allow(unused_unsafe)]
                let l: $token = unsafe { $make };
                lanes::contains_8x32(l, block, lo, (lo >> 31) as usize, &ROWS_8X32[..R])
            }

            /// # Safety
            /// The CPU must support this tier.
            $(#[target_feature(enable = $features)])?
            unsafe fn insert_8x32<const R: usize>(block: &mut Block, lo: u32) {
                // SAFETY: the caller guarantees the tier.
                #[allow(unused_unsafe)]
                let l: $token = unsafe { $make };
                lanes::insert_8x32(l, block, lo, (lo >> 31) as usize, &ROWS_8X32[..R])
            }

            /// # Safety
            /// The CPU must support this tier.
            $(#[target_feature(enable = $features)])?
            unsafe fn insert_new_8x32<const R: usize>(block: &mut Block, lo: u32) -> bool {
                // SAFETY: the caller guarantees the tier.
                #[allow(unused_unsafe)]
                let l: $token = unsafe { $make };
                lanes::insert_new_8x32(l, block, lo, (lo >> 31) as usize, &ROWS_8X32[..R])
            }

            /// # Safety
            /// The CPU must support this tier.
            $(#[target_feature(enable = $features)])?
            unsafe fn pattern_8x32<const R: usize>(lo: u32) -> Block {
                // SAFETY: the caller guarantees the tier.
                #[allow(unused_unsafe)]
                let l: $token = unsafe { $make };
                lanes::pattern_8x32(l, lo, (lo >> 31) as usize, &ROWS_8X32[..R])
            }

            /// # Safety
            /// The CPU must support this tier.
            $(#[target_feature(enable = $features)])?
            unsafe fn or_locked_8x32<const R: usize>(
                block: &crate::layout::AtomicBlock,
                lo: u32,
                guard: &crate::layout::stripes::StripeGuard<'_>,
            ) -> bool {
                // SAFETY: the caller guarantees the tier.
                #[allow(unused_unsafe)]
                let l: $token = unsafe { $make };
                let p = lanes::pattern_8x32(l, lo, (lo >> 31) as usize, &ROWS_8X32[..R]);
                block.or_locked(&p, guard)
            }

            /// # Safety
            /// The CPU must support this tier.
            $(#[target_feature(enable = $features)])?
            unsafe fn burst_query_8x32<const R: usize>(
                blocks: &[Block],
                at: Burst,
                keys: &[u64],
                sink: Sink<'_>,
            ) {
                // SAFETY: the caller guarantees the tier.
                #[allow(unused_unsafe)]
                let l: $token = unsafe { $make };
                burst_halved::<$token, _, R>(l, Query(blocks), at, keys, sink)
            }

            /// # Safety
            /// The CPU must support this tier.
            $(#[target_feature(enable = $features)])?
            unsafe fn burst_insert_8x32<const R: usize>(blocks: &mut [Block], at: Burst, keys: &[u64]) {
                // SAFETY: the caller guarantees the tier.
                #[allow(unused_unsafe)]
                let l: $token = unsafe { $make };
                burst_halved::<$token, _, R>(l, Insert(blocks), at, keys, Sink::Discard)
            }

            const fn fns_8x32<const R: usize>() -> OneKeyFns {
                OneKeyFns {
                    contains: contains_8x32::<R>,
                    insert: insert_8x32::<R>,
                    insert_new: insert_new_8x32::<R>,
                    pattern: pattern_8x32::<R>,
                    or_locked: or_locked_8x32::<R>,
                    burst_query: burst_query_8x32::<R>,
                    burst_insert: burst_insert_8x32::<R>,
                }
            }

            pub(crate) const HALVES: [OneKeyFns; MAX_ROUNDS] = halves_row!(fns_8x32);
        }
    };
}
pub(crate) use one_key_halves;

// Each tier's entries, instantiated in a module of its own (the macros name theirs), compiled
// with the tier's features.

/// The portable tier's entries.
pub(crate) mod portable {
    use crate::simd::Lanes;
    use crate::simd::portable::Portable;
    super::one_key_entries!(Portable, Portable);
}

/// The AVX2 tier's entries.
#[cfg(target_arch = "x86_64")]
pub(crate) mod avx2 {
    use crate::simd::Lanes;
    use crate::simd::avx2::Avx2;
    super::one_key_entries!(Avx2, Avx2::new_unchecked(), "avx2");
}

/// The AVX-512 tier's entries.
#[cfg(target_arch = "x86_64")]
pub(crate) mod avx512 {
    use crate::simd::Lanes;
    use crate::simd::avx512::Avx512;

    // The single-key entries take the probe loops' features (AVX-512F, not DQ; see
    // `simd/avx512.rs`). A `Sectors8x32` block is two 256-bit halves, which AVX2 probes in one
    // register: its single-key and burst entries are AVX2's. Compiled here, they had no
    // 512-bit probe to gain and ran calls of 8 keys slower than AVX2's on a CPU with AVX-512;
    // hashing those bursts in 256-bit lanes inside them did not help, so the cause is not the
    // hash (`perf-reports/2026-12-02-avx512.md`, section 4).
    one_key_blocks!(Avx512, Avx512::new_unchecked(), "avx2,avx512f");
    pub(crate) static ONE_KEY: super::OneKeyTable = [
        one_key_blocks::BLOCKS[0],
        one_key_blocks::BLOCKS[1],
        super::avx2::ONE_KEY[2],
    ];
}

/// The NEON tier's entries.
#[cfg(target_arch = "aarch64")]
pub(crate) mod neon {
    use crate::simd::Lanes;
    use crate::simd::neon::Neon;
    super::one_key_entries!(Neon, Neon::new_unchecked(), "neon");
}
