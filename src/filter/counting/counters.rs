//! Counter words: `c`-bit saturating counters, whole words at a time (branch-free), and the
//! block operations that run them on the kernel tiers.

use super::Meta;
use crate::kernel::{BlockOp, Keys, Probes, Sink, Takes};
use crate::layout::Block;

/// The low bit of every `C`-bit field of a word.
#[inline(always)]
pub(super) const fn lows_of<const C: u32>() -> u64 {
    u64::MAX / ((1u64 << C) - 1)
}

/// The low bit of each nonzero field of `x`.
#[inline(always)]
pub(super) fn nonzero<const C: u32>(x: u64) -> u64 {
    let mut y = x | x >> 1;
    y |= y >> 2;
    if C == 8 {
        y |= y >> 4;
    }
    y & lows_of::<C>()
}

/// The low bit of each saturated (all ones) field of `x`.
#[inline(always)]
pub(super) fn full<const C: u32>(x: u64) -> u64 {
    let mut y = x & x >> 1;
    y &= y >> 2;
    if C == 8 {
        y &= y >> 4;
    }
    y & lows_of::<C>()
}

#[inline(always)]
pub(crate) fn block_has<const C: u32>(block: &Block, m: &[u64; 8]) -> bool {
    let mut missing = 0;
    for (x, &m) in block.0.iter().zip(m) {
        missing |= m & !nonzero::<C>(*x);
    }
    missing == 0
}

#[inline(always)]
pub(crate) fn block_increment<const C: u32>(block: &mut Block, m: &[u64; 8]) {
    for (x, &m) in block.0.iter_mut().zip(m) {
        // A field below its maximum takes +1 without carrying into the next one.
        *x += m & !full::<C>(*x);
    }
}

/// Decrements the key's unsaturated counters if all of them are nonzero; else nothing.
#[inline(always)]
pub(crate) fn block_decrement<const C: u32>(block: &mut Block, m: &[u64; 8]) -> bool {
    if !block_has::<C>(block, m) {
        return false;
    }
    for (x, &m) in block.0.iter_mut().zip(m) {
        // Every targeted field is nonzero, so -1 never borrows from the next one.
        *x -= m & !full::<C>(*x);
    }
    true
}

/// The smallest of the key's counters.
#[inline(always)]
pub(super) fn block_min<const C: u32>(block: &Block, m: &[u64; 8]) -> u32 {
    let field = (1u64 << C) - 1;
    let mut min = field;
    for (x, &m) in block.0.iter().zip(m) {
        let mut bits = m;
        while bits != 0 {
            min = min.min(x >> bits.trailing_zeros() & field);
            bits &= bits - 1;
        }
    }
    min as u32
}

/// Conservative update: increments only the key's counters that equal its minimum.
#[inline(always)]
pub(super) fn block_min_increase<const C: u32>(block: &mut Block, m: &[u64; 8]) {
    let field = (1u64 << C) - 1;
    let min = block_min::<C>(block, m) as u64;
    if min == field {
        return;
    }
    for (x, &m) in block.0.iter_mut().zip(m) {
        let mut bits = m;
        while bits != 0 {
            let s = bits.trailing_zeros();
            if *x >> s & field == min {
                *x += 1 << s;
            }
            bits &= bits - 1;
        }
    }
}

/// The plain filter's word for a counting word: every nonzero field all ones.
#[inline(always)]
pub(super) fn project<const C: u32>(x: u64) -> u64 {
    nonzero::<C>(x) * ((1u64 << C) - 1)
}

/// Sum of the fields of `x`.
#[inline(always)]
pub(super) fn field_sum<const C: u32>(x: u64) -> u64 {
    (0..C)
        .map(|t| ((x & lows_of::<C>() << t).count_ones() as u64) << t)
        .sum()
}

/// A key's counter masks from its plain pattern: the low bit of each field holding a set bit.
#[inline(always)]
pub(crate) fn counter_mask<const C: u32>(pattern: &Block) -> [u64; 8] {
    pattern.0.map(nonzero::<C>)
}

/// Runs a counter operation over a batch on the filter's kernel tier.
pub(super) fn run_op<const C: u32>(
    meta: Meta,
    keys: Keys<'_>,
    op: impl BlockOp + CounterOp<C>,
    sink: Sink<'_>,
) {
    meta.kernel.blocks(&meta.shape, keys, op, sink)
}

/// A block operation on `C`-bit counters (ties the op to its width for [`run_op`]).
pub(super) trait CounterOp<const C: u32> {}

/// Increments each key's unsaturated counters.
pub(super) struct Increment<'a, const C: u32>(pub(super) &'a mut [Block]);

/// Decrements each key's counters where all are nonzero; answers whether it did.
pub(super) struct Decrement<'a, const C: u32>(pub(super) &'a mut [Block]);

/// Whether all of each key's counters are nonzero.
pub(super) struct Has<'a, const C: u32>(pub(super) &'a [Block]);

impl<const C: u32> CounterOp<C> for Increment<'_, C> {}
impl<const C: u32> CounterOp<C> for Decrement<'_, C> {}
impl<const C: u32> CounterOp<C> for Has<'_, C> {}

impl<const C: u32> BlockOp for Increment<'_, C> {
    const TAKES: Takes = Takes::Discard;

    fn num_blocks(&self) -> usize {
        self.0.len()
    }

    fn base(&self) -> *const Block {
        self.0.as_ptr()
    }

    #[inline(always)]
    unsafe fn apply<P: Probes>(&mut self, i: usize, p: P) -> bool {
        let m = counter_mask::<C>(&p.pattern());
        // SAFETY: the caller guarantees `i < num_blocks()`.
        block_increment::<C>(unsafe { self.0.get_unchecked_mut(i) }, &m);
        false
    }
}

impl<const C: u32> BlockOp for Decrement<'_, C> {
    const TAKES: Takes = Takes::Count;

    fn num_blocks(&self) -> usize {
        self.0.len()
    }

    fn base(&self) -> *const Block {
        self.0.as_ptr()
    }

    #[inline(always)]
    unsafe fn apply<P: Probes>(&mut self, i: usize, p: P) -> bool {
        let m = counter_mask::<C>(&p.pattern());
        // SAFETY: the caller guarantees `i < num_blocks()`.
        block_decrement::<C>(unsafe { self.0.get_unchecked_mut(i) }, &m)
    }
}

impl<const C: u32> BlockOp for Has<'_, C> {
    fn num_blocks(&self) -> usize {
        self.0.len()
    }

    fn base(&self) -> *const Block {
        self.0.as_ptr()
    }

    #[inline(always)]
    unsafe fn apply<P: Probes>(&mut self, i: usize, p: P) -> bool {
        let m = counter_mask::<C>(&p.pattern());
        // SAFETY: the caller guarantees `i < num_blocks()`.
        block_has::<C>(unsafe { self.0.get_unchecked(i) }, &m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference: one counter at a time.
    fn field(x: u64, i: u32, c: u32) -> u64 {
        x >> (i * c) & ((1 << c) - 1)
    }

    fn check_word_ops<const C: u32>() {
        let mut x = 0x0123_4567_89ab_cdefu64;
        for _ in 0..10_000 {
            x = x.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(17) ^ 0xf0f0;
            for i in 0..64 / C {
                let v = field(x, i, C);
                let low = 1u64 << (i * C);
                assert_eq!(nonzero::<C>(x) & low != 0, v != 0);
                assert_eq!(full::<C>(x) & low != 0, v == (1 << C) - 1);
                assert_eq!(
                    field(project::<C>(x), i, C),
                    if v != 0 { (1 << C) - 1 } else { 0 }
                );
            }
            let sum: u64 = (0..64 / C).map(|i| field(x, i, C)).sum();
            assert_eq!(field_sum::<C>(x), sum);
        }
    }

    #[test]
    fn word_ops_match_per_field_reference() {
        check_word_ops::<4>();
        check_word_ops::<8>();
    }

    #[test]
    fn increment_and_decrement_touch_only_their_fields() {
        let mut b = Block([0xffff_0000_0000_000f; 8]);
        let mut m = [0u64; 8];
        m[0] = 1 | 1 << 4 | 1 << 60; // a saturated field, an empty one, a saturated top one
        block_increment::<4>(&mut b, &m);
        assert_eq!(b.0[0], 0xffff_0000_0000_001f);
        assert!(block_decrement::<4>(&mut b, &m));
        assert_eq!(b.0[0], 0xffff_0000_0000_000f);
        assert!(!block_decrement::<4>(&mut b, &m));
        assert_eq!(b.0[0], 0xffff_0000_0000_000f);
        assert_eq!(b.0[1..], [0xffff_0000_0000_000f; 7]);
    }
}
