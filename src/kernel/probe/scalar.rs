//! The reference tier: one key at a time, one bit at a time, no SIMD, no prefetch. Its
//! probes are [`layout`](crate::layout)'s reference functions, so every other tier is tested
//! against the specification itself.

use super::ops::{BlockOp, Probes, Shape};
use super::pipeline::Sink;
use crate::hashing::{mx32, seed_from_flip, u64_with_flip};
use crate::kernel::keys::{Keys, Mx32, Word, each_width};
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

/// Applies `op` to the block of each key, in order.
pub(super) fn run_blocks<O: BlockOp>(shape: &Shape, keys: Keys<'_>, op: O, sink: Sink<'_>) {
    let flip = shape.flip;
    match keys {
        Keys::U64(k) => drive(shape, k.iter().map(|&x| u64_with_flip(x, flip)), op, sink),
        // One loop per width, as the `u64` one.
        Keys::Narrow(n) => each_width!(n, k => {
            drive(shape, k.iter().map(|&x| u64_with_flip(x.value(), flip)), op, sink)
        }),
        Keys::Hashes(k) => drive(shape, k.iter().copied(), op, sink),
        Keys::Mx32(Mx32::U64(k)) => {
            let key = mx32::key(seed_from_flip(flip));
            drive(
                shape,
                k.iter().map(|&x| mx32::u64_with_key(x, key)),
                op,
                sink,
            )
        }
        // Hashed a chunk at a time (one dispatch per chunk, not per key), then driven in order.
        Keys::U128(_) | Keys::Fixed16(_) | Keys::Bytes(_) | Keys::Aesh(_) | Keys::Mx32(_) => {
            const CHUNK: usize = 64;
            let len = keys.len();
            let hashes = (0..len).step_by(CHUNK).flat_map(move |start| {
                let n = CHUNK.min(len - start);
                let mut buf = [0u64; CHUNK];
                keys.slice(start, start + n)
                    .hash_scalar(flip, &mut buf[..n]);
                buf.into_iter().take(n)
            });
            drive(shape, hashes, op, sink)
        }
    }
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
