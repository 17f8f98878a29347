//! Bursts: a block operation on each of at most [`BURST`] `u64` keys (a NIC's receive burst),
//! hashed and placed in lanes and probed in one loop, without the batch pipeline; the entries
//! a filter's single-key table chose when it was made (`one_key.rs`, the layer above).

use super::block::{self, BlockOp, Shape, Sink, rows_of};
use super::pipeline::{Blocked, CHUNK, Halved, PerKey, probe_staged};
use super::scalar;
use crate::hashing::WordHashKind;
use crate::kernel::plan;
use crate::kernel::shapes::Keys;
use crate::layout::{Block, Layout, ROWS_8X32};
use crate::simd::Lanes;

/// How a burst walks its filter: the integer hash its keys take (the filter's own,
/// `plan::burst_keys`), the seed's XXH3 constant, and whether to ask for every key's block
/// before the first is probed (filters beyond the L2, as batches prefetch).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Burst {
    pub words: WordHashKind,
    pub flip: u64,
    pub prefetch: bool,
}

/// The most keys a burst entry takes (`OneKey::burst_query`, in the single-key layer above
/// this one): a NIC's receive burst.
/// At 32, calls of 64 keys (through the pipeline) ran slower per key than calls of 32; at 64
/// they ran faster than through the pipeline, measured against sbbf-rs's per-key loop
/// (`blockbloom-perf burst-pairs`: perf-reports/2026-12-01-bursts.md, the calls of 64 keys).
pub(crate) const BURST: usize = 64;

/// `op` on each of a burst of at most [`BURST`] `u64` keys under a hash with an integer hash of
/// its own (`KeyHash::word_hash`) in the layout of `WORDS`
/// ([`layout_of`](super::block::layout_of)) with `R` rounds: the keys hashed and placed in
/// lanes, then probed in one loop. The filter chose this entry when it was made, so a call
/// pays no dispatch on the tier, layout, rounds or key kind, and no batch pipeline: an 8-key
/// `contains_batch` takes about half the instructions it took through the pipeline
/// (`blockbloom-perf burst-instructions 8`, callgrind: perf-reports/2026-12-01-bursts.md).
///
/// # Panics
/// If `keys` holds more than [`BURST`] keys or `sink` does not fit them ([`Sink::prepare`]).
#[inline(always)]
pub(crate) fn burst_blocked<L: Lanes, O: BlockOp, const WORDS: bool, const R: usize>(
    l: L,
    op: O,
    at: Burst,
    keys: &[u64],
    sink: Sink<'_>,
) {
    let (num_blocks, base) = (op.num_blocks() as u64, op.base().cast());
    let mut per_key = Blocked::<L, O, WORDS> {
        l,
        op,
        rows: rows_of::<WORDS, R>(),
    };
    // SAFETY: `num_blocks` and `base` are the op's.
    unsafe { burst::<L, _, false>(l, at, keys, sink, &mut per_key, num_blocks, base) }
}

/// [`burst_blocked`] in `Sectors8x32`. A filter of more than 2^31 blocks (whose half indices
/// do not fit the entries) takes the scalar reference, as its batches do.
///
/// # Panics
/// As [`burst_blocked`].
#[inline(always)]
pub(crate) fn burst_halved<L: Lanes, O: BlockOp, const R: usize>(
    l: L,
    op: O,
    at: Burst,
    keys: &[u64],
    sink: Sink<'_>,
) {
    let (num_blocks, base) = (op.num_blocks() as u64, op.base().cast());
    if num_blocks > 1 << 31 || cfg!(target_endian = "big") {
        return burst_scalar(Layout::Sectors8x32, R, op, at, keys, sink);
    }
    let mut per_key = Halved::<L, O> {
        l,
        op,
        rows: &ROWS_8X32[..R],
    };
    // SAFETY: `num_blocks` (at most 2^31) and `base` are the op's.
    unsafe { burst::<L, _, true>(l, at, keys, sink, &mut per_key, num_blocks, base) }
}

/// The burst entries' shared body: hashes the keys in lanes, places them (block entries, or
/// half entries where `HALVES`), asks for the key stream ahead and, where `at` says, for every
/// key's block (or half) from `base`, then probes them with `per_key`.
///
/// # Safety
/// `num_blocks` is the block count of `per_key`'s op (at most 2^31 where `HALVES`), and `base`
/// its block 0 (prefetch addresses only).
#[inline(always)]
unsafe fn burst<L: Lanes, A: PerKey, const HALVES: bool>(
    l: L,
    at: Burst,
    keys: &[u64],
    mut sink: Sink<'_>,
    per_key: &mut A,
    num_blocks: u64,
    base: *const u8,
) {
    let n = keys.len();
    sink.prepare(n, A::TAKES);
    let mut hashes = [0u64; BURST];
    let hashes = &mut hashes[..n];
    plan::burst_hash(l, at.words, at.flip, keys, hashes);
    let unit = if HALVES {
        block::entries_halves(l, hashes, num_blocks);
        size_of::<Block>() / 2
    } else {
        block::entries(l, hashes, num_blocks);
        size_of::<Block>()
    };
    let blocks = at.prefetch.then_some((base, unit));
    // SAFETY: `entries` made every index `block_index(h, num_blocks)`, and `entries_halves`
    // every entry `2 * block + half` of such a block, of the op's block count (the caller's
    // guarantee).
    unsafe { probe_staged(Keys::U64(keys), hashes, blocks, per_key, sink) };
}

/// The scalar reference's burst: `op` on each key, one probe at a time, as its batches do.
///
/// # Panics
/// If `sink` does not fit the keys ([`Sink::prepare`]).
pub(crate) fn burst_scalar<O: BlockOp>(
    layout: Layout,
    rounds: usize,
    op: O,
    at: Burst,
    keys: &[u64],
    mut sink: Sink<'_>,
) {
    sink.prepare(keys.len(), O::TAKES);
    let (hash, keys) = (at.words.key_hash(), plan::burst_scalar_keys(at.words, keys));
    let shape = Shape {
        num_blocks: op.num_blocks() as u64,
        layout,
        rounds,
        flip: at.flip,
        hash,
        chunk: CHUNK,
        prefetch: false,
    };
    scalar::run_blocks(&shape, keys, op, sink)
}
