//! Block operations: what one key does to its 512-bit block, written once for every tier.
//!
//! A [`BlockOp`] receives the key's block index and its probes ([`Probes`]), which it can set
//! in a block, test against a block, or take as a pattern block. On a SIMD tier the probes are
//! computed in lanes when the op asks for them; on the scalar reference, one bit at a time.
//! [`batch`](super::batch) runs an op over a batch of keys. The base filter's operations live
//! here; the family kinds define theirs next to their storage.

use super::pattern;
use super::pipeline::Takes;
use crate::hashing::KeyHash;
use crate::layout::stripes::Held;
use crate::layout::{AtomicBlock, Block, Layout, Row, Row32};
use crate::simd::Lanes;
use core::sync::atomic::AtomicU64;

/// What a filter needs to place a hash: block count, layout, probe rounds, and the seed's
/// XXH3 constant; and how its batches walk memory (chunk and prefetch), which changes speed
/// only, so equality ignores it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Shape {
    pub num_blocks: u64,
    pub layout: Layout,
    /// Probes per key divided by the layout's sectors (one round sets one probe per sector).
    pub rounds: usize,
    pub flip: u64,
    /// The filter's hash ([`KeyHash`]): `KeyHash::Aesh` turns byte strings and 16-byte keys into
    /// [`Keys::Aesh`](crate::kernel::shapes::Keys::Aesh) as a batch starts
    /// ([`BlockBatch::new`](super::batch::BlockBatch::new)).
    pub hash: KeyHash,
    /// Keys per pipelined chunk, from [`chunking`](super::pipeline::chunking).
    pub chunk: usize,
    /// Whether batches prefetch their blocks (filters beyond the cache).
    pub prefetch: bool,
}

impl PartialEq for Shape {
    fn eq(&self, other: &Shape) -> bool {
        (
            self.num_blocks,
            self.layout,
            self.rounds,
            self.flip,
            self.hash,
        ) == (
            other.num_blocks,
            other.layout,
            other.rounds,
            other.flip,
            other.hash,
        )
    }
}

impl Eq for Shape {}

impl Shape {
    /// Probes per key.
    pub fn probes(&self) -> usize {
        self.rounds * self.layout.sectors() as usize
    }

    /// The SIMD round table of this shape.
    pub fn rows(&self) -> &'static [Row] {
        &self.layout.rows()[..self.rounds]
    }
}

/// One key's probes, as the tier computes them.
pub(crate) trait Probes: Copy {
    /// Sets them in `block`.
    fn set_in(self, block: &mut Block);
    /// Whether all of them are set in `block`.
    fn all_in(self, block: &Block) -> bool;
    /// Them, as a block.
    fn pattern(self) -> Block;
    /// Sets them in `block` of a shared filter, in the stripe `guard` locks, answering
    /// whether some was not set before.
    #[inline(always)]
    fn or_locked(self, block: &AtomicBlock, guard: &impl Held) -> bool {
        block.or_locked(&self.pattern(), guard)
    }
}

/// The probes of `lo` computed in `L`'s lanes over `rows`.
#[derive(Clone, Copy)]
pub(crate) struct LaneProbes<L, const WORDS: bool> {
    pub(super) l: L,
    pub(super) lo: u32,
    pub(super) rows: &'static [Row],
}

/// The `Sectors8x32` probes of `lo` computed in `L`'s 32-bit lanes over `rows`, in `half`
/// (`lo >> 31`, read from the entry).
#[derive(Clone, Copy)]
pub(crate) struct HalfProbes<L> {
    pub(super) l: L,
    pub(super) lo: u32,
    pub(super) half: usize,
    pub(super) rows: &'static [Row32],
}

impl<L: Lanes> Probes for HalfProbes<L> {
    #[inline(always)]
    fn set_in(self, block: &mut Block) {
        pattern::insert_8x32(self.l, block, self.lo, self.half, self.rows)
    }

    #[inline(always)]
    fn all_in(self, block: &Block) -> bool {
        pattern::contains_8x32(self.l, block, self.lo, self.half, self.rows)
    }

    #[inline(always)]
    fn pattern(self) -> Block {
        pattern::pattern_8x32(self.l, self.lo, self.half, self.rows)
    }
}

impl<L: Lanes> HalfProbes<L> {
    /// Sets them in `half`, a block's half given by its address.
    #[inline(always)]
    fn set_in_half(self, half: &mut [u32; 8]) {
        pattern::insert_in_half(self.l, half, self.lo, self.rows)
    }

    /// Whether all of them are set in `half`.
    #[inline(always)]
    fn all_in_half(self, half: &[u32; 8]) -> bool {
        pattern::contains_in_half(self.l, half, self.lo, self.rows)
    }

    /// Sets them in `half`, a half of a shared filter's block in the stripe `_guard` locks,
    /// answering whether some was not set before (see [`pattern::or_in_half_locked`]).
    ///
    /// # Safety
    /// `half` is 32-byte aligned (a half of an `AtomicBlock`) and inside `_guard`'s stripe.
    #[inline(always)]
    pub(crate) unsafe fn or_in_half_locked(
        self,
        half: &[AtomicU64; 4],
        _guard: &impl Held,
    ) -> bool {
        // SAFETY: aligned (the caller); every writer of the half holds its stripe's lock,
        // which `_guard` is (the caller).
        unsafe { pattern::or_in_half_locked(self.l, half, self.lo, self.rows) }
    }
}

/// Half `j % 2` of block `j / 2` of `blocks`, from its address (`32 j` bytes in).
///
/// # Safety
/// `j / 2 < blocks.len()`.
#[inline(always)]
unsafe fn half_at(blocks: *const Block, j: usize) -> *const [u32; 8] {
    // SAFETY: the caller guarantees block `j / 2` exists; its halves are two `[u32; 8]` of 32
    // bytes, 32-byte aligned (a block is 64 bytes, 64-byte aligned, of plain integers).
    unsafe { blocks.cast::<[u32; 8]>().add(j) }
}

/// [`half_at`], to write: from a pointer that may write (the slice's `as_mut_ptr`).
///
/// # Safety
/// As [`half_at`].
#[inline(always)]
unsafe fn half_at_mut(blocks: *mut Block, j: usize) -> *mut [u32; 8] {
    // SAFETY: as in `half_at`.
    unsafe { blocks.cast::<[u32; 8]>().add(j) }
}

impl<L: Lanes, const WORDS: bool> Probes for LaneProbes<L, WORDS> {
    #[inline(always)]
    fn set_in(self, block: &mut Block) {
        pattern::insert::<L, WORDS>(self.l, block, self.lo, self.rows)
    }

    #[inline(always)]
    fn all_in(self, block: &Block) -> bool {
        pattern::contains::<L, WORDS>(self.l, block, self.lo, self.rows)
    }

    #[inline(always)]
    fn pattern(self) -> Block {
        pattern::pattern_block::<L, WORDS>(self.l, self.lo, self.rows)
    }

    /// In registers: one vector load of the block, and (when it gains a bit) its vector
    /// stores.
    #[inline(always)]
    fn or_locked(self, block: &AtomicBlock, _guard: &impl Held) -> bool {
        // SAFETY: an `AtomicBlock` is 64-byte aligned; its writers all hold its stripe's
        // lock, which `_guard` is (the block is in it: `LockedInsert`).
        unsafe { pattern::or_locked::<L, WORDS>(self.l, &block.0, self.lo, self.rows) }
    }
}

/// What one key does to its block.
pub(crate) trait BlockOp {
    /// Whether batches instantiate this op per round count as well as per layout (unrolled
    /// round loops; more code) on the tiers that do ([`Lanes::UNROLL_BATCHES`]). Worth it for
    /// the base filter's hot operations.
    const UNROLL: bool = false;

    /// The kinds of sink its batches take (see [`PerKey::TAKES`](super::pipeline::PerKey::TAKES)).
    const TAKES: Takes = Takes::Any;

    /// Blocks the op indexes; a batch checks it against the shape, which makes every block
    /// index it hands to [`apply`](Self::apply) valid.
    fn num_blocks(&self) -> usize;

    /// Address of block 0 (for prefetch address arithmetic only).
    fn base(&self) -> *const Block;

    /// Applies one key's probes `p` to block `i`; the answer goes to the batch's sink.
    ///
    /// # Safety
    /// `i < self.num_blocks()`.
    unsafe fn apply<P: Probes>(&mut self, i: usize, p: P) -> bool;

    /// Applies one key's `Sectors8x32` probes `p` (whose half is `j % 2`) to half `j % 2` of
    /// block `j / 2`. The base
    /// filter's batch operations override it to address the half directly, `32 j` bytes from
    /// block 0: one shift, where a block index and a half within it took several instructions
    /// a key (the compiler does not merge the two; counted at 737bf97).
    ///
    /// # Safety
    /// `j / 2 < self.num_blocks()`.
    #[inline(always)]
    unsafe fn apply_half<L: Lanes>(&mut self, j: usize, p: HalfProbes<L>) -> bool {
        // SAFETY: the caller's guarantee; `p` holds the half, `j % 2`.
        unsafe { self.apply(j >> 1, p) }
    }
}

/// The layout whose rows are `Sectors8x64` rows when `WORDS` (see `pattern::pattern`).
pub(crate) const fn layout_of<const WORDS: bool>() -> Layout {
    if WORDS {
        Layout::Sectors8x64
    } else {
        Layout::Sectors4x128
    }
}

/// The first `R` rounds of the layout's row table.
#[inline(always)]
pub(crate) fn rows_of<const WORDS: bool, const R: usize>() -> &'static [Row] {
    &layout_of::<WORDS>().rows()[..R]
}

/// Sets each key's probes.
pub(crate) struct Insert<'a>(pub &'a mut [Block]);

impl BlockOp for Insert<'_> {
    const UNROLL: bool = true;
    const TAKES: Takes = Takes::Discard;

    fn num_blocks(&self) -> usize {
        self.0.len()
    }

    fn base(&self) -> *const Block {
        self.0.as_ptr()
    }

    #[inline(always)]
    unsafe fn apply<P: Probes>(&mut self, i: usize, p: P) -> bool {
        // SAFETY: the caller guarantees `i < num_blocks()`.
        p.set_in(unsafe { self.0.get_unchecked_mut(i) });
        false
    }

    #[inline(always)]
    unsafe fn apply_half<L: Lanes>(&mut self, j: usize, p: HalfProbes<L>) -> bool {
        // SAFETY: the caller guarantees `j / 2 < num_blocks()`; the slice is borrowed
        // mutably, so the half may be written.
        p.set_in_half(unsafe { &mut *half_at_mut(self.0.as_mut_ptr(), j) });
        false
    }
}

/// Sets each key's probes, answering whether some of them were not set before (the key is
/// new). Keys take effect one after another, so a key repeated in a batch is new once.
pub(crate) struct InsertNew<'a>(pub &'a mut [Block]);

impl BlockOp for InsertNew<'_> {
    const UNROLL: bool = true;
    const TAKES: Takes = Takes::Each;

    fn num_blocks(&self) -> usize {
        self.0.len()
    }

    fn base(&self) -> *const Block {
        self.0.as_ptr()
    }

    #[inline(always)]
    unsafe fn apply<P: Probes>(&mut self, i: usize, p: P) -> bool {
        // SAFETY: the caller guarantees `i < num_blocks()`.
        let block = unsafe { self.0.get_unchecked_mut(i) };
        let new = !p.all_in(block);
        p.set_in(block);
        new
    }
}

/// Whether each key's probes are all set.
pub(crate) struct Query<'a>(pub &'a [Block]);

impl BlockOp for Query<'_> {
    const UNROLL: bool = true;

    fn num_blocks(&self) -> usize {
        self.0.len()
    }

    fn base(&self) -> *const Block {
        self.0.as_ptr()
    }

    #[inline(always)]
    unsafe fn apply<P: Probes>(&mut self, i: usize, p: P) -> bool {
        // SAFETY: the caller guarantees `i < num_blocks()`.
        p.all_in(unsafe { self.0.get_unchecked(i) })
    }

    #[inline(always)]
    unsafe fn apply_half<L: Lanes>(&mut self, j: usize, p: HalfProbes<L>) -> bool {
        // SAFETY: the caller guarantees `j / 2 < num_blocks()`.
        p.all_in_half(unsafe { &*half_at(self.0.as_ptr(), j) })
    }
}
