//! The parallel bulk builds of [`BloomFilter`] on rayon's pool (feature `parallel`).

use rayon::prelude::*;

use crate::filter::BloomFilter;
use crate::filter::Meta;
use crate::kernel::{BlockOp, Keys, Probes, Sink, Takes};
use crate::layout::{AtomicBlock, Block, block_index};

impl BloomFilter {
    /// Inserts `keys` using every rayon thread, by the faster strategy measured
    /// ([`ParallelBuild::Partitioned`]). A filter small enough to stay in a core's cache is
    /// filled by one thread instead: there a plain insert costs a few nanoseconds, less than
    /// what splitting the work costs. The result is bit-identical to
    /// [`insert_batch`](Self::insert_batch) of the same keys.
    ///
    /// ```
    /// let mut f = blockbloom::BloomFilter::with_capacity(100_000, 0.01)?;
    /// let keys: Vec<u64> = (0..100_000).collect();
    /// f.par_insert_batch(&keys);
    /// let mut g = blockbloom::BloomFilter::with_capacity(100_000, 0.01)?;
    /// g.insert_batch(&keys);
    /// assert_eq!(f, g);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn par_insert_batch(&mut self, keys: &[u64]) {
        if self.meta.shape.num_blocks.saturating_mul(64) <= ONE_THREAD_BYTES
            || keys.len() < PAR_CHUNK
        {
            self.insert_batch(keys)
        } else {
            self.par_insert_batch_with(keys, ParallelBuild::default())
        }
    }

    /// [`par_insert_batch`](Self::par_insert_batch) with a chosen strategy.
    ///
    /// ```
    /// use blockbloom::{BloomFilter, ParallelBuild};
    /// let keys: Vec<u64> = (0..50_000).collect();
    /// let mut a = BloomFilter::with_capacity(50_000, 0.01)?;
    /// a.par_insert_batch_with(&keys, ParallelBuild::SharedAtomic);
    /// let mut b = BloomFilter::with_capacity(50_000, 0.01)?;
    /// b.par_insert_batch_with(&keys, ParallelBuild::Partitioned);
    /// assert_eq!(a, b);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn par_insert_batch_with(&mut self, keys: &[u64], how: ParallelBuild) {
        match how {
            ParallelBuild::SharedAtomic => self.par_insert_shared(keys),
            ParallelBuild::Partitioned => self.par_insert_partitioned(keys),
        }
    }

    fn par_insert_shared(&mut self, keys: &[u64]) {
        let meta = self.meta;
        let blocks = as_atomic(&mut self.store);
        keys.par_chunks(PAR_CHUNK)
            .for_each(|c| atomic_insert(&meta, blocks, Keys::U64(c)));
    }

    fn par_insert_partitioned(&mut self, keys: &[u64]) {
        let meta = self.meta;
        // One contiguous range of blocks per worker; worker `p` owns blocks `b` with
        // `b * parts / num_blocks == p`, i.e. from `ceil(p * num_blocks / parts)`.
        let num_blocks = meta.shape.num_blocks;
        // No more parts than cores: every part hashes every key, so an oversubscribed pool
        // would only multiply that work.
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let parts = (rayon::current_num_threads().min(cores) as u64).clamp(1, num_blocks);
        let mut windows = Vec::with_capacity(parts as usize);
        let mut rest: &mut [Block] = &mut self.store;
        let mut first = 0usize;
        for p in 1..=parts {
            let end = (p as u128 * num_blocks as u128).div_ceil(parts as u128) as usize;
            let (window, tail) = rest.split_at_mut(end - first);
            windows.push((first, window));
            rest = tail;
            first = end;
        }
        // Every worker hashes every key (in SIMD lanes, a fraction of an insert's cost) and
        // keeps the ones in its range: cheaper than materialising all hashes, whose fresh
        // pages cost more to fault in than the hashing itself.
        windows.into_par_iter().for_each(|(first, window)| {
            let end = first + window.len();
            let mut hashed = vec![0u64; PAR_CHUNK];
            let mut mine = vec![0u64; 2 * PAR_CHUNK];
            let mut len = 0;
            for chunk in keys.chunks(PAR_CHUNK) {
                let hashed = &mut hashed[..chunk.len()];
                // The filter's `KeyHash` decides the integer hash (`Keys::under`: XXH3, or its
                // own integer hash, `KeyHash::word_hash`).
                let chunk = Keys::U64(chunk).under(meta.shape.hash);
                meta.kernel.hash_keys(meta.shape.flip, chunk, 0, hashed);
                // Branch-free selection: "is this key mine" is a coin flip per key, and a
                // mispredicted branch would cost more than the insert.
                for &h in hashed.iter() {
                    mine[len] = h;
                    len += (first..end).contains(&block_index(h, num_blocks)) as usize;
                }
                if len >= PAR_CHUNK {
                    insert_window(&meta, window, first, &mine[..len]);
                    len = 0;
                }
            }
            insert_window(&meta, window, first, &mine[..len]);
        });
    }
}

/// Keys per rayon task.
const PAR_CHUNK: usize = 4096;

/// Filters up to this size (2 MiB) are filled on one thread by [`BloomFilter::par_insert_batch`]:
/// at 1M keys (1.2 MiB) one thread measured faster than sharing the work (the many-writer
/// tables of docs/PERFORMANCE.md).
const ONE_THREAD_BYTES: u64 = 2 << 20;

/// How [`BloomFilter::par_insert_batch_with`] splits the work.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ParallelBuild {
    /// Each worker takes one contiguous range of blocks and inserts the keys that fall in it
    /// with plain SIMD stores: no atomics, no shared cache lines. Every worker hashes all the
    /// keys to find its own, which is cheap next to the inserts.
    #[default]
    Partitioned,
    /// Every worker inserts its share of the keys into the whole filter through relaxed
    /// atomic `fetch_or`s (no lock: the workers are the filter's only writers).
    /// [`AtomicBloomFilter::insert_batch`](crate::AtomicBloomFilter::insert_batch) does not
    /// use `fetch_or`: its writers set bits under stripe locks with plain loads and stores.
    SharedAtomic,
}

/// The blocks as atomics, for the duration of an exclusive borrow.
fn as_atomic(blocks: &mut [Block]) -> &[AtomicBlock] {
    // SAFETY: same size, alignment and bit validity as in `BloomFilter::into_atomic`; the exclusive borrow
    // means nothing reads or writes the blocks non-atomically while the atomic view lives.
    unsafe { std::slice::from_raw_parts(blocks.as_mut_ptr().cast::<AtomicBlock>(), blocks.len()) }
}

/// Inserts `keys` into `blocks` with relaxed `fetch_or`s ([`AtomicInsert`]): the shared-atomic
/// build, whose workers are the only writers of their filter.
fn atomic_insert(meta: &Meta, blocks: &[AtomicBlock], keys: Keys<'_>) {
    meta.kernel
        .blocks(&meta.shape, keys, AtomicInsert(blocks), Sink::Discard)
}

/// Inserts `hashes` into `window`, the blocks `first..first + window.len()` of the filter
/// ([`InsertWindow`]). Every hash must select a block inside the window (checked).
fn insert_window(meta: &Meta, window: &mut [Block], first: usize, hashes: &[u64]) {
    let op = InsertWindow {
        window,
        first,
        num_blocks: meta.shape.num_blocks as usize,
    };
    meta.kernel
        .blocks(&meta.shape, Keys::Hashes(hashes), op, Sink::Discard)
}

/// Sets each key's probes with relaxed `fetch_or`s on the words that lack them (never a
/// vector store to shared memory): the shared-atomic parallel build, on blocks no stripe lock
/// guards (its workers are the only writers, and all of them use this).
pub(crate) struct AtomicInsert<'a>(pub &'a [AtomicBlock]);

impl BlockOp for AtomicInsert<'_> {
    const UNROLL: bool = true;
    const TAKES: Takes = Takes::Discard;

    fn num_blocks(&self) -> usize {
        self.0.len()
    }

    fn base(&self) -> *const Block {
        self.0.as_ptr().cast()
    }

    #[inline(always)]
    unsafe fn apply<P: Probes>(&mut self, i: usize, p: P) -> bool {
        // SAFETY: the caller guarantees `i < num_blocks()`.
        unsafe { self.0.get_unchecked(i) }.or(&p.pattern());
        false
    }
}

/// Sets each key's probes in a window of the filter, the blocks `first..first +
/// window.len()` of `num_blocks` (one worker's share of a partitioned parallel build). Every
/// key must select a block inside the window; the index is checked, so a broken promise
/// panics instead of writing elsewhere.
pub(crate) struct InsertWindow<'a> {
    pub window: &'a mut [Block],
    pub first: usize,
    pub num_blocks: usize,
}

impl BlockOp for InsertWindow<'_> {
    const UNROLL: bool = true;
    const TAKES: Takes = Takes::Discard;

    fn num_blocks(&self) -> usize {
        self.num_blocks
    }

    fn base(&self) -> *const Block {
        // Prefetch addresses are computed from the whole filter's start; only the window is
        // touched, and a prefetch never faults.
        self.window.as_ptr().wrapping_sub(self.first)
    }

    #[inline(always)]
    unsafe fn apply<P: Probes>(&mut self, i: usize, p: P) -> bool {
        p.set_in(&mut self.window[i - self.first]);
        false
    }
}
