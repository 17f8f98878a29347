//! The shared filter's block operations ([`AtomicBloomFilter`](super::AtomicBloomFilter)):
//! inserts under the stripe locks, one stripe at a time ([`LockedInsert`]) or with every lock
//! held ([`HeldInsert`]), and queries from relaxed loads ([`AtomicQuery`]). They run on the
//! kernel's pipeline like the plain filter's; only their writes know about stripes.

use core::sync::atomic::AtomicU64;

use crate::kernel::{BlockOp, HalfProbes, Kernel, Keys, Probes, Shape, Sink, Takes};
use crate::layout::stripes::{AllStripesGuard, StripeGuard, Stripes};
use crate::layout::{AtomicBlock, Block};
use crate::simd::Lanes;

/// Sets each key's probes under its stripe's lock with relaxed loads and stores
/// ([`AtomicBlock::or_locked`]), answering (when `NEW`) whether some probe was new. It keeps a
/// stripe's lock across consecutive keys of that stripe, so a batch sorted by stripe (a
/// writer's buffer) takes each lock once; it never holds two.
pub(crate) struct LockedInsert<'a, const NEW: bool> {
    blocks: &'a [AtomicBlock],
    stripes: &'a Stripes,
    held: Option<StripeGuard<'a>>,
    /// The stripe `held` locks (`usize::MAX` when none): compared without reading the guard.
    held_stripe: usize,
}

impl<'a, const NEW: bool> LockedInsert<'a, NEW> {
    /// # Panics
    /// If `stripes` does not cover `blocks`.
    pub fn new(blocks: &'a [AtomicBlock], stripes: &'a Stripes) -> Self {
        assert!(
            blocks.is_empty() || stripes.stripe_of(blocks.len() - 1) < stripes.len(),
            "stripes of another filter"
        );
        LockedInsert {
            blocks,
            stripes,
            held: None,
            held_stripe: usize::MAX,
        }
    }
}

impl<const NEW: bool> BlockOp for LockedInsert<'_, NEW> {
    const UNROLL: bool = true;
    const TAKES: Takes = if NEW { Takes::Each } else { Takes::Discard };

    fn num_blocks(&self) -> usize {
        self.blocks.len()
    }

    fn base(&self) -> *const Block {
        self.blocks.as_ptr().cast()
    }

    #[inline(always)]
    unsafe fn apply<P: Probes>(&mut self, i: usize, p: P) -> bool {
        let blocks = self.blocks;
        let guard = self.hold(i);
        // SAFETY: the caller guarantees `i < num_blocks()`.
        p.or_locked(unsafe { blocks.get_unchecked(i) }, guard)
    }

    /// The half in registers, one vector load and (when it gains a bit) one vector store.
    #[inline(always)]
    unsafe fn apply_half<L: Lanes>(&mut self, j: usize, p: HalfProbes<L>) -> bool {
        let blocks = self.blocks;
        let guard = self.hold(j >> 1);
        // SAFETY: the caller guarantees `j / 2 < num_blocks()`: half `j % 2` of that block,
        // 32 bytes at `32 j` from the 64-byte aligned start of the blocks, is four atomic
        // words, 32-byte aligned, in the stripe `guard` locks.
        unsafe {
            let half = &*blocks.as_ptr().cast::<[AtomicU64; 4]>().add(j);
            p.or_in_half_locked(half, guard)
        }
    }
}

impl<'a, const NEW: bool> LockedInsert<'a, NEW> {
    /// The lock of block `i`'s stripe: the one held when consecutive keys share it, else
    /// taken after the one held is released (one lock at a time).
    #[inline(always)]
    fn hold(&mut self, i: usize) -> &StripeGuard<'a> {
        let stripe = self.stripes.stripe_of(i);
        if stripe != self.held_stripe {
            self.held = None;
            self.held = Some(self.stripes.lock(stripe));
            self.held_stripe = stripe;
        }
        match &self.held {
            Some(guard) => guard,
            None => unreachable!("a stripe is held once one is taken"),
        }
    }
}

/// Sets each key's probes while every stripe lock is held ([`Stripes::apply_all`]), with the
/// relaxed loads and stores of [`LockedInsert`] and no lock taken per key.
pub(crate) struct HeldInsert<'a> {
    blocks: &'a [AtomicBlock],
    held: &'a AllStripesGuard<'a>,
}

impl<'a> HeldInsert<'a> {
    /// # Panics
    /// If `held` does not hold `stripes`' locks, or `stripes` does not cover `blocks`.
    pub fn new(
        blocks: &'a [AtomicBlock],
        stripes: &Stripes,
        held: &'a AllStripesGuard<'a>,
    ) -> Self {
        assert!(held.holds(stripes), "the locks of another filter");
        assert!(
            blocks.is_empty() || stripes.stripe_of(blocks.len() - 1) < stripes.len(),
            "stripes of another filter"
        );
        HeldInsert { blocks, held }
    }
}

impl BlockOp for HeldInsert<'_> {
    const UNROLL: bool = true;
    const TAKES: Takes = Takes::Discard;

    fn num_blocks(&self) -> usize {
        self.blocks.len()
    }

    fn base(&self) -> *const Block {
        self.blocks.as_ptr().cast()
    }

    #[inline(always)]
    unsafe fn apply<P: Probes>(&mut self, i: usize, p: P) -> bool {
        // SAFETY: the caller guarantees `i < num_blocks()`.
        p.or_locked(unsafe { self.blocks.get_unchecked(i) }, self.held)
    }

    #[inline(always)]
    unsafe fn apply_half<L: Lanes>(&mut self, j: usize, p: HalfProbes<L>) -> bool {
        // SAFETY: as in `LockedInsert::apply_half`; every stripe's lock is held (`new`).
        unsafe {
            let half = &*self.blocks.as_ptr().cast::<[AtomicU64; 4]>().add(j);
            p.or_in_half_locked(half, self.held)
        }
    }
}

/// Answers a batch on the shared filter's words ([`AtomicQuery`]). Not generic: the batch (every
/// tier's pipeline) is compiled once, here, and its callers call it.
pub(crate) fn query(
    kernel: &Kernel,
    shape: &Shape,
    blocks: &[AtomicBlock],
    keys: Keys<'_>,
    sink: Sink<'_>,
) {
    kernel.blocks(shape, keys, AtomicQuery(blocks), sink)
}

/// Whether each key's probes are all set, from relaxed loads.
pub(crate) struct AtomicQuery<'a>(pub &'a [AtomicBlock]);

impl BlockOp for AtomicQuery<'_> {
    const UNROLL: bool = true;

    fn num_blocks(&self) -> usize {
        self.0.len()
    }

    fn base(&self) -> *const Block {
        self.0.as_ptr().cast()
    }

    #[inline(always)]
    unsafe fn apply<P: Probes>(&mut self, i: usize, p: P) -> bool {
        // SAFETY: the caller guarantees `i < num_blocks()`.
        unsafe { self.0.get_unchecked(i) }.has(&p.pattern())
    }
}
