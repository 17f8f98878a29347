//! One key against its block, written once for every tier: the key's entry (its block index
//! beside the low hash half, [`entries`]), its pattern over the layout's rows in lanes, and
//! the block insert and test, plain, on a shared filter's words under its stripe lock, and in
//! `Sectors8x32` halves; then what a batch does with them. A [`BlockOp`] receives the key's
//! block index and its probes ([`Probes`]), which it can set in a block, test against a
//! block, or take as a pattern block, and its answers go to a [`Sink`]. On a SIMD tier the
//! probes are computed in lanes when the op asks for them; on the scalar reference, one bit at
//! a time. The pipeline (`pipeline.rs`) runs an op over a batch of keys. The base filter's
//! operations live here; the family kinds define theirs next to their storage.

use crate::hashing::KeyHash;
use crate::layout::stripes::Held;
use crate::layout::{AtomicBlock, Block, Layout, Row, Row32, contains_scalar, insert_scalar};
use crate::simd::Lanes;
use alloc::vec::Vec;
use core::sync::atomic::AtomicU64;

// ---------------------------------------------------------------------------------------------
// A key's entry and its pattern in lanes
// ---------------------------------------------------------------------------------------------

/// Turns a chunk's hashes into its entries, in place: each hash's block index over
/// `num_blocks` in the upper half (`layout::block_index`, below 2^32) and its low half kept,
/// so that the probe loop reads both from memory and computes neither. Eight lanes at a time
/// (a shift, a 32x32->64-bit product whose upper half is the index, a blend), the rest one at
/// a time; a filter of 2^32 blocks indexes by the upper half itself, so its entries are its
/// hashes.
#[inline(always)]
pub(crate) fn entries<L: Lanes>(l: L, hashes: &mut [u64], num_blocks: u64) {
    if num_blocks > u32::MAX as u64 {
        return;
    }
    let n = l.splat(num_blocks);
    let mut chunks = hashes.chunks_exact_mut(8);
    for h in &mut chunks {
        let x = l.loadu(h);
        let product = l.mul_halves(l.shr::<32>(x), n);
        l.storeu(h, l.blend_halves(product, x));
    }
    for h in chunks.into_remainder() {
        *h = entry(*h, num_blocks);
    }
}

/// [`entries`] for a `Sectors8x32` filter of at most 2^31 blocks, whose entries index its
/// halves: the upper half `2 * block + (lo >> 31)`, the half the key's probes lie in (its bit
/// 31 moved up into the index), so the probe addresses the half by one load of it. After the
/// index step, `e + (e & HI) + ((e & 2^31) << 1)`: four lane operations more for eight keys,
/// in the same pass over the chunk.
#[inline(always)]
pub(crate) fn entries_halves<L: Lanes>(l: L, hashes: &mut [u64], num_blocks: u64) {
    let n = l.splat(num_blocks);
    let (upper, bit31) = (l.splat(!(u32::MAX as u64)), l.splat(1 << 31));
    let mut chunks = hashes.chunks_exact_mut(8);
    for h in &mut chunks {
        let x = l.loadu(h);
        let e = l.blend_halves(l.mul_halves(l.shr::<32>(x), n), x);
        let moved = l.shl::<1>(l.and(e, bit31));
        l.storeu(h, l.add(l.add(e, l.and(e, upper)), moved));
    }
    for h in chunks.into_remainder() {
        *h = half_entry(entry(*h, num_blocks));
    }
}

/// The half entry of entry `e` (see [`entries_halves`]).
#[inline(always)]
pub(crate) const fn half_entry(e: u64) -> u64 {
    e.wrapping_add(e & !(u32::MAX as u64))
        .wrapping_add((e & (1 << 31)) << 1)
}

/// [`entries`] of one hash.
#[inline(always)]
pub(crate) const fn entry(h: u64, num_blocks: u64) -> u64 {
    if num_blocks > u32::MAX as u64 {
        h
    } else {
        ((h >> 32) * num_blocks) & !(u32::MAX as u64) | h & u32::MAX as u64
    }
}

/// The probe pattern of `lo` over `rows` (see [`Row`]). `WORDS` says the rows are
/// `Sectors8x64` rows (mask 63, no xor), which a tier may exploit.
#[inline(always)]
pub(crate) fn pattern<L: Lanes, const WORDS: bool>(l: L, lo: u32, rows: &[Row]) -> L::V {
    let lo = l.splat_lo(lo);
    let mut p = l.splat(0);
    for row in rows {
        // Taken modulo 2^32, the product's index bits need no mask (see `Row`); a tier
        // without a one-instruction low multiply masks the full product instead.
        let bit = match (WORDS, L::MUL_LO32) {
            (true, true) => {
                let idx = l.shr::<26>(l.mul_lo32(lo, l.load(&row.salt2)));
                l.shl_var(l.splat(1), idx)
            }
            (true, false) => l.bit_mod64(l.shr::<25>(l.mul32(lo, l.load(&row.salt)))),
            (false, lo32) => {
                let idx = if lo32 {
                    l.shr::<25>(l.mul_lo32(lo, l.load(&row.salt)))
                } else {
                    l.and(l.shr::<25>(l.mul32(lo, l.load(&row.salt))), l.splat(127))
                };
                l.shl_var(l.splat(1), l.xor(idx, l.load(&row.xor)))
            }
        };
        p = l.or(p, bit);
    }
    p
}

/// Sets the probes of `lo` in `block`.
#[inline(always)]
pub(crate) fn insert<L: Lanes, const WORDS: bool>(l: L, block: &mut Block, lo: u32, rows: &[Row]) {
    let p = pattern::<L, WORDS>(l, lo, rows);
    let b = l.or(l.load(&block.0), p);
    l.store(&mut block.0, b);
}

/// Whether every probe of `lo` is set in `block`.
#[inline(always)]
pub(crate) fn contains<L: Lanes, const WORDS: bool>(
    l: L,
    block: &Block,
    lo: u32,
    rows: &[Row],
) -> bool {
    let p = pattern::<L, WORDS>(l, lo, rows);
    l.covers(l.load(&block.0), p)
}

/// The probes of `lo` as a block (for storage that must not be touched by vector loads and
/// stores, such as atomics, or that applies them its own way, such as counters).
#[inline(always)]
pub(crate) fn pattern_block<L: Lanes, const WORDS: bool>(l: L, lo: u32, rows: &[Row]) -> Block {
    let mut b = Block::ZERO;
    l.store(&mut b.0, pattern::<L, WORDS>(l, lo, rows));
    b
}

/// `Sectors8x32`: half `half` of `block` (`lo >> 31` of the key's `lo`) as its eight 32-bit
/// sectors (in memory order, which is sector order on a little-endian target only).
#[inline(always)]
fn half_of(block: &Block, half: usize) -> &[u32; 8] {
    debug_assert!(half < 2);
    let halves = (block as *const Block).cast::<[u32; 8]>();
    // SAFETY: a `Block` is 64 bytes, 64-byte aligned, of plain integers: two `[u32; 8]` of 32
    // bytes each, 32-byte aligned, lie inside it; `half` is 0 or 1 (`lo >> 31`, or the low
    // bit of a half entry).
    unsafe { &*halves.add(half & 1) }
}

/// [`half_of`], to write.
#[inline(always)]
fn half_of_mut(block: &mut Block, half: usize) -> &mut [u32; 8] {
    let halves = (block as *mut Block).cast::<[u32; 8]>();
    // SAFETY: as in `half_of`; the borrow of `block` is unique and lives as long.
    unsafe { &mut *halves.add(half & 1) }
}

/// `Sectors8x32`: the probes of `lo` over `rows` in the 32-bit lanes of one register, lane
/// `w` the bits of the half's sector `w`.
#[inline(always)]
pub(crate) fn mask_8x32<L: Lanes>(l: L, lo: u32, rows: &[Row32]) -> L::H {
    let lo = l.splat32(lo);
    let one = l.splat32(1);
    let mut m = l.splat32(0);
    for row in rows {
        let bit = l.shr32::<27>(l.mul32x32(lo, l.load32(&row.0)));
        m = l.or32(m, l.shl32_var(one, bit));
    }
    m
}

/// Sets the `Sectors8x32` probes of `lo` in `half` (little-endian targets only: the batch
/// pipeline's, through [`HalfProbes`]).
#[inline(always)]
pub(crate) fn insert_in_half<L: Lanes>(l: L, half: &mut [u32; 8], lo: u32, rows: &[Row32]) {
    let b = l.or32(l.load32(half), mask_8x32(l, lo, rows));
    l.store32(half, b);
}

/// Sets the `Sectors8x32` probes of `lo` in `half` of a shared filter, whose stripe lock the
/// caller holds, answering whether some was not set before (little-endian targets only). One
/// vector load of the half (no other writer can change it), and, when a
/// probe is missing, one vector store ([`Lanes::store32_shared`]); nothing is written when
/// every probe is set, so the line stays shared in other cores' caches. The protocol is the
/// one `layout::stripes` states and its loom model checks, with a vector for the words.
///
/// # Safety
/// `half` is 32-byte aligned and its writers all hold the stripe lock the caller holds.
#[inline(always)]
pub(crate) unsafe fn or_in_half_locked<L: Lanes>(
    l: L,
    half: &[AtomicU64; 4],
    lo: u32,
    rows: &[Row32],
) -> bool {
    // SAFETY: `AtomicU64` has the size and bit validity of `u64`, so the 32 bytes are eight
    // `u32`s, aligned for the vector load (the caller); they sit in `UnsafeCell`s, and no
    // write to them can happen while the reference lives (the caller holds their lock), so
    // the plain read does not race.
    let old = l.load32(unsafe { &*half.as_ptr().cast::<[u32; 8]>() });
    let mask = mask_8x32(l, lo, rows);
    if l.covers32(old, mask) {
        return false;
    }
    // SAFETY: aligned and written under the caller's lock only (the caller).
    unsafe { l.store32_shared(half, l.or32(old, mask)) };
    true
}

/// Sets the probes of `lo` over `rows` in `block` of a shared filter, whose stripe lock the
/// caller holds, answering whether some was not set before ([`or_in_half_locked`] for a whole
/// block: a vector load, and a vector store when a probe is missing).
///
/// # Safety
/// Every writer of `block` holds the stripe lock the caller holds.
#[inline(always)]
pub(crate) unsafe fn or_locked<L: Lanes, const WORDS: bool>(
    l: L,
    block: &[AtomicU64; 8],
    lo: u32,
    rows: &[Row],
) -> bool {
    // SAFETY: as in `or_in_half_locked`: the words are `u64`s in `UnsafeCell`s, 64-byte
    // aligned (a block), and nothing writes them while the reference lives.
    let old = l.load(unsafe { &*block.as_ptr().cast::<[u64; 8]>() });
    let p = pattern::<L, WORDS>(l, lo, rows);
    if l.covers(old, p) {
        return false;
    }
    // SAFETY: a block, 64-byte aligned, written under the caller's lock only.
    unsafe { l.store_shared(block, l.or(old, p)) };
    true
}

/// Whether every `Sectors8x32` probe of `lo` is set in `half` (little-endian targets only).
#[inline(always)]
pub(crate) fn contains_in_half<L: Lanes>(l: L, half: &[u32; 8], lo: u32, rows: &[Row32]) -> bool {
    l.covers32(l.load32(half), mask_8x32(l, lo, rows))
}

/// Sets the `Sectors8x32` probes of `lo` in half `half` of `block` (a big-endian target,
/// whose 32-bit sectors are not in memory order, takes the reference).
#[inline(always)]
pub(crate) fn insert_8x32<L: Lanes>(l: L, block: &mut Block, lo: u32, half: usize, rows: &[Row32]) {
    if cfg!(target_endian = "big") {
        return insert_scalar(block, Layout::Sectors8x32, lo, 8 * rows.len());
    }
    insert_in_half(l, half_of_mut(block, half), lo, rows)
}

/// Whether every `Sectors8x32` probe of `lo` is set in half `half` of `block`.
#[inline(always)]
pub(crate) fn contains_8x32<L: Lanes>(
    l: L,
    block: &Block,
    lo: u32,
    half: usize,
    rows: &[Row32],
) -> bool {
    if cfg!(target_endian = "big") {
        return contains_scalar(block, Layout::Sectors8x32, lo, 8 * rows.len());
    }
    contains_in_half(l, half_of(block, half), lo, rows)
}

/// Sets the `Sectors8x32` probes of `lo` in half `half` of `block`; whether some were not set
/// before.
#[inline(always)]
pub(crate) fn insert_new_8x32<L: Lanes>(
    l: L,
    block: &mut Block,
    lo: u32,
    half: usize,
    rows: &[Row32],
) -> bool {
    if cfg!(target_endian = "big") {
        let new = !contains_scalar(block, Layout::Sectors8x32, lo, 8 * rows.len());
        insert_scalar(block, Layout::Sectors8x32, lo, 8 * rows.len());
        return new;
    }
    let m = mask_8x32(l, lo, rows);
    let h = half_of_mut(block, half);
    let b = l.load32(h);
    l.store32(h, l.or32(b, m));
    !l.covers32(b, m)
}

/// The `Sectors8x32` probes of `lo` in half `half`, as a block (the other half zero).
#[inline(always)]
pub(crate) fn pattern_8x32<L: Lanes>(l: L, lo: u32, half: usize, rows: &[Row32]) -> Block {
    let mut b = Block::ZERO;
    insert_8x32(l, &mut b, lo, half, rows);
    b
}

// ---------------------------------------------------------------------------------------------
// Block operations: a key's probes, and what an op does with them
// ---------------------------------------------------------------------------------------------

/// The kinds of sink ([`Sink`]) an operation's batches take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Takes {
    /// Every kind (the queries).
    Any,
    /// `Sink::Discard` only (the ops that only write).
    Discard,
    /// `Sink::Each` only.
    Each,
    /// `Sink::Count` only.
    Count,
}

impl Takes {
    /// Whether an op that takes these sinks takes `Sink::Discard`. These tests are `const`
    /// so that a match guard on them, inside `const { }`, is decided per instance before
    /// code generation: the arms an op never takes are not compiled for it.
    pub(crate) const fn discard(self) -> bool {
        matches!(self, Takes::Any | Takes::Discard)
    }

    /// Whether it takes `Sink::Each`.
    pub(crate) const fn each(self) -> bool {
        matches!(self, Takes::Any | Takes::Each)
    }

    /// Whether it takes `Sink::Count`.
    pub(crate) const fn count(self) -> bool {
        matches!(self, Takes::Any | Takes::Count)
    }

    /// Whether it takes every kind (`Sink::Bitmap` and `Sink::Select` too).
    pub(crate) const fn any(self) -> bool {
        matches!(self, Takes::Any)
    }
}

/// Where a batch's answers go.
pub enum Sink<'a> {
    /// Nowhere (inserts).
    Discard,
    /// One answer per key.
    Each(&'a mut [bool]),
    /// Added to the count: how many keys answered `true`.
    Count(&'a mut usize),
    /// One bit per key, least significant first (Arrow's validity layout): bit `i % 64` of
    /// word `i / 64` for key `i`; the bits after the last key are 0.
    Bitmap(&'a mut [u64]),
    /// The indices of the keys that answered `true`, appended in order.
    Select(&'a mut Vec<u32>),
}

impl Sink<'_> {
    /// Whether an operation whose batches take `takes` takes this kind of sink.
    fn taken_by(&self, takes: Takes) -> bool {
        match self {
            Sink::Discard => takes.discard(),
            Sink::Each(_) => takes.each(),
            Sink::Count(_) => takes.count(),
            Sink::Bitmap(_) | Sink::Select(_) => takes.any(),
        }
    }

    /// Checks the sink against a batch of `n` keys of an operation that takes `takes`, and
    /// clears a bitmap (chunks OR their bits in).
    ///
    /// # Panics
    /// If an answer slice has the wrong length (`n` answers, or `n.div_ceil(64)` bitmap
    /// words), a selection of more than 2^32 keys is asked for (indices are `u32`), or the
    /// operation does not take this kind of sink (a bug in the crate: its arm is not compiled).
    #[inline]
    pub(crate) fn prepare(&mut self, n: usize, takes: Takes) {
        assert!(
            self.taken_by(takes),
            "this operation's batches take {takes:?} sinks only"
        );
        match self {
            Sink::Each(out) => assert_eq!(out.len(), n, "output slice length must equal key count"),
            Sink::Bitmap(words) => {
                assert_eq!(
                    words.len(),
                    n.div_ceil(64),
                    "bitmap length must be the key count divided by 64, rounded up"
                );
                words.fill(0);
            }
            Sink::Select(_) => assert!(
                n as u64 <= 1 << 32,
                "a selection indexes at most 2^32 keys (u32 indices)"
            ),
            Sink::Discard | Sink::Count(_) => {}
        }
    }

    /// The same sink, borrowed for one chunk's [`fill`](Self::fill).
    pub(crate) fn reborrow(&mut self) -> Sink<'_> {
        match self {
            Sink::Discard => Sink::Discard,
            Sink::Each(out) => Sink::Each(out),
            Sink::Count(c) => Sink::Count(c),
            Sink::Bitmap(words) => Sink::Bitmap(words),
            Sink::Select(out) => Sink::Select(out),
        }
    }

    /// Takes the answers of keys `start..`, in order, one at a time (the scalar reference's
    /// way; the pipeline writes its own loops so that no closure holds an intrinsic).
    pub(crate) fn fill(self, start: usize, answers: impl Iterator<Item = bool>) {
        match self {
            Sink::Discard => answers.for_each(drop),
            Sink::Each(out) => {
                for (o, a) in out[start..].iter_mut().zip(answers) {
                    *o = a;
                }
            }
            Sink::Count(c) => *c += answers.filter(|&a| a).count(),
            Sink::Bitmap(words) => {
                for (i, a) in (start..).zip(answers) {
                    words[i / 64] |= (a as u64) << (i % 64);
                }
            }
            Sink::Select(out) => out.extend(
                (start as u32..)
                    .zip(answers)
                    .filter(|&(_, a)| a)
                    .map(|(i, _)| i),
            ),
        }
    }
}

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
    /// ([`BlockBatch::new`](super::pipeline::BlockBatch::new)).
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
        insert_8x32(self.l, block, self.lo, self.half, self.rows)
    }

    #[inline(always)]
    fn all_in(self, block: &Block) -> bool {
        contains_8x32(self.l, block, self.lo, self.half, self.rows)
    }

    #[inline(always)]
    fn pattern(self) -> Block {
        pattern_8x32(self.l, self.lo, self.half, self.rows)
    }
}

impl<L: Lanes> HalfProbes<L> {
    /// Sets them in `half`, a block's half given by its address.
    #[inline(always)]
    fn set_in_half(self, half: &mut [u32; 8]) {
        insert_in_half(self.l, half, self.lo, self.rows)
    }

    /// Whether all of them are set in `half`.
    #[inline(always)]
    fn all_in_half(self, half: &[u32; 8]) -> bool {
        contains_in_half(self.l, half, self.lo, self.rows)
    }

    /// Sets them in `half`, a half of a shared filter's block in the stripe `_guard` locks,
    /// answering whether some was not set before (see [`or_in_half_locked`]).
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
        unsafe { or_in_half_locked(self.l, half, self.lo, self.rows) }
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
        insert::<L, WORDS>(self.l, block, self.lo, self.rows)
    }

    #[inline(always)]
    fn all_in(self, block: &Block) -> bool {
        contains::<L, WORDS>(self.l, block, self.lo, self.rows)
    }

    #[inline(always)]
    fn pattern(self) -> Block {
        pattern_block::<L, WORDS>(self.l, self.lo, self.rows)
    }

    /// In registers: one vector load of the block, and (when it gains a bit) its vector
    /// stores.
    #[inline(always)]
    fn or_locked(self, block: &AtomicBlock, _guard: &impl Held) -> bool {
        // SAFETY: an `AtomicBlock` is 64-byte aligned; its writers all hold its stripe's
        // lock, which `_guard` is (the block is in it: `LockedInsert`).
        unsafe { or_locked::<L, WORDS>(self.l, &block.0, self.lo, self.rows) }
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

/// The layout whose rows are `Sectors8x64` rows when `WORDS` (see [`pattern`]).
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
