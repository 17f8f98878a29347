//! The reference tier: one key at a time, one bit at a time, no SIMD, no prefetch, no unsafe.

use super::{CountingBatch, Keys, Shape, Sink};
use crate::CounterBits;
use crate::counting::{block_decrement, block_has, block_increment, counter_mask};
use crate::deletable::place;
use crate::hash::{u32_with_flip, u64_with_flip};
use crate::layout::{
    AtomicBlock, Block, block_index, contains_scalar, insert_scalar, pattern_scalar,
};

#[inline(always)]
fn each_hash(shape: &Shape, keys: Keys<'_>, mut f: impl FnMut(usize, u64)) {
    match keys {
        Keys::U64(k) => k
            .iter()
            .enumerate()
            .for_each(|(i, &x)| f(i, u64_with_flip(x, shape.flip))),
        Keys::U32(k) => k
            .iter()
            .enumerate()
            .for_each(|(i, &x)| f(i, u32_with_flip(x, shape.flip))),
        Keys::Hashes(k) => k.iter().enumerate().for_each(|(i, &h)| f(i, h)),
    }
}

pub(super) fn insert(shape: &Shape, blocks: &mut [Block], keys: Keys<'_>) {
    let (k, layout) = (shape.probes(), shape.layout);
    each_hash(shape, keys, |_, h| {
        insert_scalar(
            &mut blocks[block_index(h, shape.num_blocks)],
            layout,
            h as u32,
            k,
        )
    });
}

pub(super) fn query(shape: &Shape, blocks: &[Block], keys: Keys<'_>, sink: Sink<'_>) {
    let (k, layout) = (shape.probes(), shape.layout);
    let test = |h: u64| {
        contains_scalar(
            &blocks[block_index(h, shape.num_blocks)],
            layout,
            h as u32,
            k,
        )
    };
    match sink {
        Sink::Each(out) => each_hash(shape, keys, |i, h| out[i] = test(h)),
        Sink::Count(c) => {
            let mut found = 0;
            each_hash(shape, keys, |_, h| found += test(h) as usize);
            *c += found;
        }
    }
}

pub(super) fn atomic_insert(shape: &Shape, blocks: &[AtomicBlock], keys: Keys<'_>) {
    let (k, layout) = (shape.probes(), shape.layout);
    each_hash(shape, keys, |_, h| {
        blocks[block_index(h, shape.num_blocks)].or(&pattern_scalar(layout, h as u32, k))
    });
}

pub(super) fn atomic_query(shape: &Shape, blocks: &[AtomicBlock], keys: Keys<'_>, sink: Sink<'_>) {
    let (k, layout) = (shape.probes(), shape.layout);
    let test =
        |h: u64| blocks[block_index(h, shape.num_blocks)].has(&pattern_scalar(layout, h as u32, k));
    match sink {
        Sink::Each(out) => each_hash(shape, keys, |i, h| out[i] = test(h)),
        Sink::Count(c) => {
            let mut found = 0;
            each_hash(shape, keys, |_, h| found += test(h) as usize);
            *c += found;
        }
    }
}

pub(super) fn insert_window(shape: &Shape, window: &mut [Block], first: usize, hashes: &[u64]) {
    let (k, layout) = (shape.probes(), shape.layout);
    for &h in hashes {
        let i = block_index(h, shape.num_blocks) - first;
        insert_scalar(&mut window[i], layout, h as u32, k);
    }
}

pub(super) fn counting(
    shape: &Shape,
    bits: CounterBits,
    batch: CountingBatch<'_, '_>,
    keys: Keys<'_>,
) {
    match bits {
        CounterBits::Four => counting_of::<4>(shape, batch, keys),
        CounterBits::Eight => counting_of::<8>(shape, batch, keys),
    }
}

fn counting_of<const C: u32>(shape: &Shape, batch: CountingBatch<'_, '_>, keys: Keys<'_>) {
    let (k, layout, n) = (shape.probes(), shape.layout, shape.num_blocks);
    let mask = |h: u64| counter_mask::<C>(&pattern_scalar(layout, h as u32, k));
    match batch {
        CountingBatch::Insert(blocks) => each_hash(shape, keys, |_, h| {
            block_increment::<C>(&mut blocks[block_index(h, n)], &mask(h))
        }),
        CountingBatch::Remove(blocks, removed) => each_hash(shape, keys, |_, h| {
            *removed += block_decrement::<C>(&mut blocks[block_index(h, n)], &mask(h)) as usize
        }),
        CountingBatch::Query(blocks, sink) => {
            let test = |h: u64| block_has::<C>(&blocks[block_index(h, n)], &mask(h));
            match sink {
                Sink::Each(out) => each_hash(shape, keys, |i, h| out[i] = test(h)),
                Sink::Count(c) => {
                    let mut found = 0;
                    each_hash(shape, keys, |_, h| found += test(h) as usize);
                    *c += found;
                }
            }
        }
    }
}

pub(super) fn deletable_insert(
    shape: &Shape,
    blocks: &mut [Block],
    collided: &mut [u64],
    region_shift: u32,
    keys: Keys<'_>,
) {
    let (k, layout, n) = (shape.probes(), shape.layout, shape.num_blocks);
    each_hash(shape, keys, |_, h| {
        let i = block_index(h, n);
        let p = pattern_scalar(layout, h as u32, k);
        place(&mut blocks[i], collided, i, region_shift, &p);
    });
}

pub(super) fn hash_u64(flip: u64, keys: &[u64], out: &mut [u64]) {
    for (o, &k) in out.iter_mut().zip(keys) {
        *o = u64_with_flip(k, flip);
    }
}

pub(super) fn hash_u32(flip: u64, keys: &[u32], out: &mut [u64]) {
    for (o, &k) in out.iter_mut().zip(keys) {
        *o = u32_with_flip(k, flip);
    }
}
