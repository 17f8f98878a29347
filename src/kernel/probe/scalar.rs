//! The reference tier: one key at a time, one bit at a time, no SIMD, no prefetch. Its
//! probes are [`layout`](crate::layout)'s reference functions, so every other tier is tested
//! against the specification itself.

use super::block::{BlockOp, Probes, Shape, Sink};
use crate::kernel::plan::{self, EachHash};
use crate::kernel::shapes::Keys;
use crate::layout::{Block, Layout, block_index, contains_scalar, insert_scalar, pattern_scalar};

/// The probes of `lo`, one at a time.
#[derive(Clone, Copy)]
pub(crate) struct ScalarProbes {
    pub layout: Layout,
    pub lo: u32,
    pub k: usize,
}

impl Probes for ScalarProbes {
    #[inline(always)]
    fn set_in(self, block: &mut Block) {
        insert_scalar(block, self.layout, self.lo, self.k)
    }

    #[inline(always)]
    fn all_in(self, block: &Block) -> bool {
        contains_scalar(block, self.layout, self.lo, self.k)
    }

    #[inline(always)]
    fn pattern(self) -> Block {
        pattern_scalar(self.layout, self.lo, self.k)
    }
}

/// Applies `op` to the block of each key, in order, the keys hashed as the hash plan says
/// ([`plan::each_hash`]).
pub(super) fn run_blocks<O: BlockOp>(shape: &Shape, keys: Keys<'_>, op: O, sink: Sink<'_>) {
    struct Drive<'s, 'o, O> {
        shape: &'s Shape,
        op: O,
        sink: Sink<'o>,
    }
    impl<O: BlockOp> EachHash for Drive<'_, '_, O> {
        #[inline(always)]
        fn each(self, hashes: impl Iterator<Item = u64>) {
            drive(self.shape, hashes, self.op, self.sink)
        }
    }
    plan::each_hash(keys, shape.flip, Drive { shape, op, sink })
}

fn drive<O: BlockOp>(shape: &Shape, hashes: impl Iterator<Item = u64>, mut op: O, sink: Sink<'_>) {
    let (layout, k, n) = (shape.layout, shape.probes(), shape.num_blocks);
    let mut apply = |h: u64| {
        let i = block_index(h, n);
        let p = ScalarProbes {
            layout,
            lo: h as u32,
            k,
        };
        // SAFETY: `i = block_index(h, n) < n`, which equals `op.num_blocks()` (checked in
        // `BlockBatch::new`).
        unsafe { op.apply(i, p) }
    };
    // The arms an op does not take are not compiled for it (see `Takes`; `Sink::prepare`
    // checked the sink when the batch was made).
    match sink {
        Sink::Discard if const { O::TAKES.discard() } => hashes.for_each(|h| {
            apply(h);
        }),
        Sink::Each(out) if const { O::TAKES.each() } => {
            for (o, h) in out.iter_mut().zip(hashes) {
                *o = apply(h);
            }
        }
        Sink::Count(c) if const { O::TAKES.count() } => *c += hashes.filter(|&h| apply(h)).count(),
        other if const { O::TAKES.any() } => other.fill(0, hashes.map(apply)),
        _ => unreachable!("a sink its operation does not take"),
    }
}
