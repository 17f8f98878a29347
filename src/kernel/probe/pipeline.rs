//! Batches of block operations: [`BlockBatch`] runs a [`BlockOp`] over a batch of keys, on a
//! SIMD tier through the pipeline below (instantiated per layout and, for ops that ask, per
//! round count so the round loop unrolls), on the scalar tier through the reference loop. The
//! burst entries (`burst.rs`) run one over at most 64 keys with this file's per-key steps
//! ([`Blocked`], [`Halved`]) and without the pipeline.
//!
//! The pipeline is the chunked, prefetching batch driver that every SIMD tier and every block
//! operation share. It is software-pipelined: chunk `c + 1` is hashed and its blocks
//! prefetched before chunk `c` is probed, so each prefetch has a whole chunk of work to hide
//! its memory latency. Byte strings are hashed a run of [`BYTES_STAGE`] keys ahead
//! ([`Prehashed`]), so that the keys' bytes are read as one stream rather than a chunk at a
//! time between the probes. No intrinsic may sit inside a closure here: a closure is a
//! function of its own, without the caller's target features, so its intrinsics would become
//! calls (a severe slowdown, seen once; measured at b4e4339). The closures of the probe loops
//! only compute indices and prefetch, which are baseline instructions. The answers go to a
//! [`Sink`], matched once per chunk.

use alloc::vec::Vec;
use core::mem::MaybeUninit;

use super::block::{BlockOp, HalfProbes, LaneProbes, Shape, Sink, Takes, entries, entries_halves};
use super::scalar;
use crate::cpu::l2_bytes;
use crate::isa::Isa;
use crate::kernel::shapes::Keys;
use crate::layout::{Block, Layout, ROWS_8X32, Row, Row32};
use crate::simd::{Batch, Lanes, Routine};

/// Keys per chunk for filters in cache (no prefetches; long chunks amortise the per-chunk
/// work).
pub(crate) const CHUNK: usize = 64;

/// The staging buffer of a batch of at most this many keys (a NIC's receive burst).
const TINY: usize = 32;

/// How far ahead of the chunk being hashed a batch prefetches its keys' memory, in bytes:
/// 2 KiB and 4 KiB measured alike over streamed keys, 1 KiB slower on a small filter
/// (`blockbloom-perf u64-pairs`; `perf-reports/2026-11-27-key-stream.md`, "The distance").
pub(crate) const KEY_STREAM_AHEAD: usize = 2048;

/// Byte strings a batch hashes at a time ([`Prehashed`]) before it places and probes them a
/// chunk at a time: a run reads the keys' bytes as one stream, where a chunk of hashing
/// between chunks of probes was much slower (`blockbloom-perf string-pairs --once`, long keys read
/// once: `perf-reports/2026-12-02-string-runs.md`).
pub(crate) const BYTES_STAGE: usize = 512;

/// The deepest prefetch a filter can be set to: most keys hashed, indexed and prefetched
/// together (the staging buffers' size).
pub const MAX_PREFETCH_DEPTH: usize = 128;

/// Filters up to this size are taken to fit in the last-level cache (32 MiB: a Zen 3 CCX's
/// L3; the depth sweep found 32 and 64 close on either side of it, so the exact size matters
/// little: perf-reports/2026-11-23-30711c7-memory.md).
pub(crate) const LLC_BYTES: u64 = 32 << 20;

/// The prefetch depth (keys hashed and prefetched ahead; 0 for none) for a filter of `bytes`
/// on tier `isa`. In the core's L2 ([`l2_bytes`]), none: out-of-order execution hides L2
/// latency, and a prefetch takes a load slot. Beyond it, enough keys ahead to keep as many
/// misses in flight as the core tracks: 32 in the last-level cache and 64 beyond it, and 64
/// throughout on AVX-512, which does a key's work in fewer instructions, so the same latency
/// spans more keys. From the depth sweep (`blockbloom-perf memory`,
/// `perf-reports/*-memory.md`): each pick was close to the best depth for its size and tier,
/// and the previous fixed 16 well behind the best at DRAM size. AVX-512 took 128 until
/// batches prefetched their keys' memory ([`prefetch_keys_ahead`]): the deeper chunk had been
/// hiding the key stream's misses, and with them prefetched 64 was ahead of or level with
/// 128 from 1 MiB to 16 MiB and level in DRAM (`perf-reports/2026-11-27-key-stream.md`). The
/// L2 is the CPU's own: a 1 MiB filter on a Zen 3 (512 KiB L2) ran faster prefetched at 32
/// than not (`perf-reports/2026-11-27-l2-prefetch.md`; figures: docs/PERFORMANCE.md,
/// "Memory").
pub(crate) fn prefetch_depth(bytes: u64, isa: Isa) -> usize {
    if bytes <= l2_bytes() {
        0
    } else if isa == Isa::Avx512 || bytes > LLC_BYTES {
        64
    } else {
        32
    }
}

/// `(keys per chunk, whether to prefetch)` for a prefetch depth: chunks of [`CHUNK`] keys
/// without prefetches for depth 0, else chunks of `depth` keys, each prefetched one chunk
/// ahead (the pipeline prefetches chunk `c + 1` while it probes chunk `c`).
pub(crate) fn chunking(depth: usize) -> (usize, bool) {
    if depth == 0 {
        (CHUNK, false)
    } else {
        (depth.min(MAX_PREFETCH_DEPTH), true)
    }
}

/// Asks for the cache line at `line` (shared by every filter's batch pipeline).
#[inline(always)]
pub(crate) fn prefetch<T>(line: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint that never faults, whatever the address.
    unsafe {
        use core::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>(line.cast::<i8>());
    }
    #[cfg(target_arch = "aarch64")]
    // SAFETY: `prfm` is a hint that never faults, whatever the address; it reads no memory
    // the program can observe and leaves the flags alone.
    unsafe {
        core::arch::asm!("prfm pldl1keep, [{0}]", in(reg) line, options(nostack, preserves_flags, readonly));
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    let _ = line;
}

/// Asks for the memory of the keys [`KEY_STREAM_AHEAD`] bytes past keys `start..start + n`
/// (the chunk a pipeline has just hashed), so that a batch over a key array larger than the
/// cache finds its keys there: the hardware's own stream prefetch left `u64` batches over a
/// streamed key array well behind the same batches over cached keys, and this closes most of
/// the gap. Every line is asked for: every other line (the hardware fetching the pair) did
/// not close it. Past the last chunk it asks for the memory after the slice, which the
/// caller's next batch often reads; a prefetch of any address is harmless. It adds a few
/// percent to a batch's instructions (measured: `perf-reports/2026-11-27-key-stream.md`).
#[inline(always)]
fn prefetch_keys_ahead(keys: Keys<'_>, start: usize, n: usize) {
    KeyStream::of(keys).prefetch_ahead(start, n)
}

/// The array a batch reads once per key ([`Keys::stream`]): its address and the bytes per key.
/// A pipeline takes it once per batch, so that a chunk's [`prefetch_keys_ahead`] costs no
/// match on the key shape.
#[derive(Clone, Copy)]
struct KeyStream {
    base: *const u8,
    width: usize,
}

impl KeyStream {
    #[inline(always)]
    fn of(keys: Keys<'_>) -> KeyStream {
        let (base, width) = keys.stream();
        KeyStream { base, width }
    }

    /// [`prefetch_keys_ahead`] of keys `start..start + n`.
    #[inline(always)]
    fn prefetch_ahead(self, start: usize, n: usize) {
        let mut at = (start * self.width + KEY_STREAM_AHEAD) & !63;
        let to = (start + n) * self.width + KEY_STREAM_AHEAD;
        while at < to {
            // Address arithmetic only; a prefetch never faults.
            prefetch(self.base.wrapping_add(at));
            at += 64;
        }
    }
}

/// A pipeline's per-chunk hashing step (the blocked and the classic pipelines alike): hashes
/// keys `start..start + out.len()` into `out` in `l`'s lanes and asks for the keys' memory
/// ahead of them ([`prefetch_keys_ahead`]).
#[inline(always)]
pub(crate) fn hash_chunk<L: Lanes>(l: L, keys: Keys<'_>, flip: u64, start: usize, out: &mut [u64]) {
    keys.hash_lanes_at(l, flip, start, out);
    prefetch_keys_ahead(keys, start, out.len());
}

/// How a chunk's hashes become entries: the filter's block count, and whether the entries
/// index the halves of `Sectors8x32` blocks ([`entries_halves`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Place {
    pub num_blocks: u64,
    pub halves: bool,
}

/// A batch's per-chunk step: hashes keys `start..start + out.len()` into `out` (the hash
/// plan's routine, `Keys::hash_lanes_at`) and makes them entries ([`entries`]). Out of line,
/// one copy per tier ([`Lanes::outlined`]) rather than one per operation, layout and sink that
/// a pipeline is compiled for (inlined, the hashes of every key source were most of the
/// crate's unoptimised build); a call per chunk of keys costs next to nothing.
#[inline(always)]
pub(crate) fn hash_and_place<L: Lanes>(
    l: L,
    keys: Keys<'_>,
    flip: u64,
    start: usize,
    out: &mut [u64],
    place: Place,
) {
    struct Stage<'k, 'o> {
        keys: Keys<'k>,
        flip: u64,
        start: usize,
        out: &'o mut [u64],
        place: Place,
    }
    impl Routine for Stage<'_, '_> {
        type Output = ();
        #[inline(always)]
        fn run<L: Lanes>(self, l: L) {
            self.keys.hash_lanes_at(l, self.flip, self.start, self.out);
            if self.place.halves {
                entries_halves(l, self.out, self.place.num_blocks);
            } else {
                entries(l, self.out, self.place.num_blocks);
            }
        }
    }
    l.outlined(Stage {
        keys,
        flip,
        start,
        out,
        place,
    })
}

/// How a batch walks its filter: what the pipeline needs beyond the keys.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Walk {
    /// The seed's XXH3 constant (unused for pre-hashed keys).
    pub flip: u64,
    pub num_blocks: u64,
    /// Keys per chunk (the prefetch distance).
    pub chunk: usize,
    /// Whether to prefetch each key's block a chunk ahead.
    pub prefetch: bool,
    /// Address of block 0 (only ever used to compute prefetch addresses).
    pub base: *const u8,
    /// Bytes per block (per half, where `halves`).
    pub stride: usize,
    /// Whether the entries index `Sectors8x32` halves ([`entries_halves`]).
    pub halves: bool,
}

/// ORs the `n <= 64` answer bits of the keys `start..start + n` into a bitmap.
#[inline(always)]
fn or_bits(words: &mut [u64], start: usize, bits: u64, n: usize) {
    let (w, s) = (start / 64, start % 64);
    words[w] |= bits << s;
    if s + n > 64 {
        words[w + 1] |= bits >> (64 - s);
    }
}

/// Appends `start + j` to `out` for each chunk answer `j` that is `true`, without a branch
/// per key: every index is written to the spare capacity and the length advances by the
/// answer.
#[inline(always)]
fn select_chunk<A: PerKey>(
    out: &mut Vec<u32>,
    start: usize,
    entries: impl Iterator<Item = (usize, u32)>,
    n: usize,
    per_key: &mut A,
) {
    out.reserve(n);
    let len = out.len();
    let spare = out.spare_capacity_mut();
    let mut kept = 0;
    for (j, (i, lo)) in entries.enumerate() {
        // SAFETY: `i` is `block_index(h, num_blocks)`, below the walk's `num_blocks`.
        let hit = unsafe { per_key.key(i, lo) };
        spare[kept].write((start + j) as u32);
        kept += hit as usize;
    }
    // SAFETY: the first `kept <= n <= spare.len()` spare slots were written above (each write
    // at `kept` before it could advance), so `len + kept` elements are initialised.
    unsafe { out.set_len(len + kept) };
}

/// What a pipelined batch does with one key: its block index and low hash half. A trait with
/// an `#[inline(always)]` method rather than a closure, so the probe code inlines into the
/// tier's `#[target_feature]` function.
pub(crate) trait PerKey {
    /// The kinds of sink the operation's batches take. Most take one kind (an insert only
    /// [`Sink::Discard`]): its pipelines then compile one probe loop per chunk walk instead
    /// of one per kind, which every build compiles per tier, layout and round count.
    const TAKES: Takes;

    /// # Safety
    /// `i < num_blocks` of the walk the pipeline runs (`i` is `block_index(h, num_blocks)`).
    unsafe fn key(&mut self, i: usize, lo: u32) -> bool;
}

/// A byte-string batch's hashes, a run of up to [`BYTES_STAGE`] keys at a time, from which
/// [`Staged::load`] places its chunks.
struct Prehashed<'b> {
    hashes: &'b mut [u64],
    /// The key of `hashes[0]`.
    from: usize,
    len: usize,
}

impl Prehashed<'_> {
    /// [`hash_and_place`] of keys `start..start + out.len()` from their hashes, hashing the
    /// next run first if they lie past the one held (runs are a whole number of chunks, so a
    /// chunk never straddles two). Out of line, so that the other keys' pipelines carry only
    /// the call: every step it takes is a call into the tier (byte strings hash out of line).
    #[inline(never)]
    fn stage<L: Lanes>(
        &mut self,
        l: L,
        keys: Keys<'_>,
        flip: u64,
        start: usize,
        out: &mut [u64],
        place: Place,
    ) {
        if start >= self.from + self.len {
            let run = self.hashes.len().min(keys.len() - start);
            hash_chunk(l, keys, flip, start, &mut self.hashes[..run]);
            (self.from, self.len) = (start, run);
        }
        let hashes = &self.hashes[start - self.from..][..out.len()];
        hash_and_place(l, Keys::Hashes(hashes), flip, 0, out, place);
    }
}

/// The first `n` words of `buf`, zeroed; the rest are left unwritten (a byte-string batch's
/// run buffer is 4 KiB, which a short batch would pay to zero whole).
#[inline(always)]
fn zeroed(buf: &mut [MaybeUninit<u64>], n: usize) -> &mut [u64] {
    let buf = &mut buf[..n];
    for w in buf.iter_mut() {
        w.write(0);
    }
    // SAFETY: every element of `buf` was written just above, and `MaybeUninit<u64>` has the
    // layout of `u64`.
    unsafe { &mut *(buf as *mut [MaybeUninit<u64>] as *mut [u64]) }
}

/// One chunk's entries (block index and low hash half of each key, [`entries`]), computed
/// (and their blocks prefetched) a chunk ahead of use, in a buffer of at least the walk's
/// chunk.
struct Staged<'b> {
    hashes: &'b mut [u64],
    len: usize,
}

/// An entry's block index (the upper half) and low hash half.
#[inline(always)]
fn split_entry(e: &u64) -> (usize, u32) {
    if cfg!(target_endian = "little") {
        let halves = (e as *const u64).cast::<u32>();
        // SAFETY: `e` is a valid, aligned `u64`; its two `u32` halves lie inside it, aligned,
        // the low half first on a little-endian target. Read apart, the low half can go from
        // memory straight into a vector broadcast.
        unsafe { (*halves.add(1) as usize, *halves) }
    } else {
        ((*e >> 32) as usize, *e as u32)
    }
}

impl Staged<'_> {
    /// Hashes keys `start..start + chunk` (of `len`) with [`hash_chunk`] (or takes their
    /// hashes from `pre`, for byte strings), makes them entries, and, if `prefetch_now`,
    /// prefetches their blocks at once (the first chunk; later chunks are prefetched one key
    /// at a time while the chunk before them is probed, in [`pipeline`]).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn load<L: Lanes>(
        &mut self,
        l: L,
        walk: &Walk,
        keys: Keys<'_>,
        stream: KeyStream,
        len: usize,
        start: usize,
        prefetch_now: bool,
        pre: &mut Option<Prehashed<'_>>,
    ) {
        let n = walk.chunk.min(self.hashes.len()).min(len - start);
        let out = &mut self.hashes[..n];
        let place = Place {
            num_blocks: walk.num_blocks,
            halves: walk.halves,
        };
        if let Some(pre) = pre {
            pre.stage(l, keys, walk.flip, start, out, place);
        } else {
            hash_and_place(l, keys, walk.flip, start, out, place);
            stream.prefetch_ahead(start, out.len());
        }
        if prefetch_now {
            for e in out.iter() {
                // Address arithmetic only; a prefetch never faults.
                prefetch(walk.base.wrapping_add(split_entry(e).0 * walk.stride));
            }
        }
        self.len = n;
    }

    fn hashes(&self) -> &[u64] {
        &self.hashes[..self.len]
    }
}

/// Runs `per_key` over every key, hashing (and prefetching) one chunk ahead, and sends its
/// answers to `sink`.
///
/// # Panics
/// If `sink` holds a slice shorter than `keys`.
#[inline(always)]
pub(crate) fn pipeline<L: Lanes, A: PerKey>(
    l: L,
    walk: &Walk,
    keys: Keys<'_>,
    per_key: &mut A,
    mut sink: Sink<'_>,
) {
    let len = keys.len();
    if len == 0 {
        return;
    }
    if len <= TINY {
        return small(l, walk, keys, per_key, sink);
    }
    // The staging buffers, zeroed at every call: as small as the batch allows (zeroing what a
    // batch does not use costs more than a short batch's work: two 1 KiB buffers were a large
    // share of an 8-key call's fixed cost under callgrind, measured at 38d5f33). A batch of
    // one chunk needs one buffer, of its length; longer batches two, of the walk's chunk.
    let (mut one, mut two, mut deep);
    let one_chunk = len <= walk.chunk;
    let [b0, b1]: [&mut [u64]; 2] = if one_chunk && len <= CHUNK {
        one = [0u64; CHUNK];
        [&mut one, &mut []]
    } else if walk.chunk <= CHUNK {
        two = [[0u64; CHUNK]; 2];
        let [x, y] = &mut two;
        [x, y]
    } else {
        deep = [[0u64; MAX_PREFETCH_DEPTH]; 2];
        let [x, y] = &mut deep;
        [x, y]
    };
    // Byte strings longer than a chunk are hashed a run at a time ([`BYTES_STAGE`]).
    let mut run;
    let mut pre = if keys.is_bytes() && !one_chunk {
        run = [MaybeUninit::<u64>::uninit(); BYTES_STAGE];
        let n = (BYTES_STAGE / walk.chunk * walk.chunk).min(len);
        Some(Prehashed {
            hashes: zeroed(&mut run, n),
            from: 0,
            len: 0,
        })
    } else {
        None
    };
    let mut stage = [Staged { hashes: b0, len: 0 }, Staged { hashes: b1, len: 0 }];
    let stream = KeyStream::of(keys);
    stage[0].load(l, walk, keys, stream, len, 0, walk.prefetch, &mut pre);
    let (mut start, mut cur) = (0, 0);
    while start < len {
        let next = start + stage[cur].len;
        let more = next < len;
        if more {
            stage[cur ^ 1].load(l, walk, keys, stream, len, next, false, &mut pre);
        }
        let [a, b] = &stage;
        let (this, after) = if cur == 0 { (a, b) } else { (b, a) };
        let cur_hashes = this.hashes();
        // With the next chunk's prefetches spread through the probes, one before each key
        // (each a whole chunk ahead of its use: a burst of a chunk's prefetches at once would
        // ask for more misses than the core tracks, and stall), for as many keys as the next
        // chunk has; then (in cache, and for the last chunk's tail) without. Zipped slices
        // keep one loop bound per key; recomputing an index costs no more than storing it.
        let ahead = if more && walk.prefetch {
            after.hashes()
        } else {
            &[]
        };
        let split = start + ahead.len();
        if !ahead.is_empty() {
            let (base, stride) = (walk.base, walk.stride);
            let entries = cur_hashes.iter().zip(ahead).map(move |(e, a)| {
                // Address arithmetic only; a prefetch never faults.
                prefetch(base.wrapping_add(split_entry(a).0 * stride));
                split_entry(e)
            });
            // SAFETY: the entries of the walk's `num_blocks`, which `BlockBatch::new` checked
            // against the op's.
            unsafe { drain(entries, &mut sink, per_key, start, split) };
        }
        if split < next {
            let entries = cur_hashes[ahead.len()..].iter().map(split_entry);
            // SAFETY: as above.
            unsafe { drain(entries, &mut sink, per_key, split, next) };
        }
        start = next;
        cur ^= 1;
    }
}

/// A batch of at most [`TINY`] keys (a receive burst): hashed and placed in one step, then
/// probed in one loop, without the chunk machinery, which cost an 8-key call most of its
/// instructions (`blockbloom-perf burst-instructions`, callgrind, before the burst entries:
/// perf-reports/2026-12-01-bursts.md).
#[inline(always)]
fn small<L: Lanes, A: PerKey>(l: L, walk: &Walk, keys: Keys<'_>, per_key: &mut A, sink: Sink<'_>) {
    let len = keys.len();
    let mut hashes = [0u64; TINY];
    let hashes = &mut hashes[..len];
    let place = Place {
        num_blocks: walk.num_blocks,
        halves: walk.halves,
    };
    hash_and_place(l, keys, walk.flip, 0, hashes, place);
    let blocks = walk.prefetch.then_some((walk.base, walk.stride));
    // SAFETY: the entries of the walk's `num_blocks`, which `BlockBatch::new` checked
    // against the op's.
    unsafe { probe_staged(keys, hashes, blocks, per_key, sink) };
}

/// Probes a small batch whose `entries` are staged: asks for the key stream after it (bursts
/// are often cut from a longer one) and, given `blocks` (block 0's address and the bytes per
/// entry index), for every entry's block before the first is probed; then sends the answers
/// to `sink`.
///
/// # Safety
/// As [`drain`]'s, for every entry.
#[inline(always)]
pub(crate) unsafe fn probe_staged<A: PerKey>(
    keys: Keys<'_>,
    entries: &[u64],
    blocks: Option<(*const u8, usize)>,
    per_key: &mut A,
    mut sink: Sink<'_>,
) {
    let n = entries.len();
    prefetch_keys_ahead(keys, 0, n);
    if let Some((base, stride)) = blocks {
        for e in entries {
            // Address arithmetic only; a prefetch never faults.
            prefetch(base.wrapping_add(split_entry(e).0 * stride));
        }
    }
    // SAFETY: the caller's guarantee.
    unsafe { drain(entries.iter().map(split_entry), &mut sink, per_key, 0, n) };
}

/// Probes one chunk's `entries` (keys `start..next`) and sends the answers to `sink`. The
/// arms an operation does not take are not compiled for it (see [`Takes`]; [`Sink::prepare`]
/// checked the sink).
///
/// # Safety
/// Every entry's index is one [`PerKey::key`] may take: `block_index(h, num_blocks)` (or its
/// half entry) of the block count of `per_key`'s op.
#[inline(always)]
unsafe fn drain<A: PerKey>(
    entries: impl Iterator<Item = (usize, u32)>,
    sink: &mut Sink<'_>,
    per_key: &mut A,
    start: usize,
    next: usize,
) {
    match sink {
        Sink::Discard if const { A::TAKES.discard() } => discard(entries, per_key),
        Sink::Each(out) if const { A::TAKES.each() } => {
            each(&mut out[start..next], entries, per_key)
        }
        Sink::Count(c) if const { A::TAKES.count() } => **c += count(entries, per_key),
        Sink::Bitmap(words) if const { A::TAKES.any() } => {
            // A chunk may hold more than 64 keys: a word of answers at a time.
            let (mut bits, mut k, mut at) = (0u64, 0, start);
            for (i, lo) in entries {
                // SAFETY: as in `discard`.
                bits |= (unsafe { per_key.key(i, lo) } as u64) << k;
                k += 1;
                if k == 64 {
                    or_bits(words, at, bits, 64);
                    (bits, k, at) = (0, 0, at + 64);
                }
            }
            if k > 0 {
                or_bits(words, at, bits, k);
            }
        }
        Sink::Select(out) if const { A::TAKES.any() } => {
            select_chunk(out, start, entries, next - start, per_key)
        }
        _ => unreachable!("a sink its operation does not take (checked when the batch was made)"),
    }
}

// SAFETY (each `key` call in the probe loops below and in `drain`): `drain`'s callers
// guarantee that every entry's index is `block_index(h, num_blocks)` (or its half entry) of
// the op's block count.

/// Probes `entries`, dropping the answers.
#[inline(always)]
fn discard<A: PerKey>(entries: impl Iterator<Item = (usize, u32)>, per_key: &mut A) {
    for (i, lo) in entries {
        // SAFETY: see above.
        unsafe { per_key.key(i, lo) };
    }
}

/// Probes `entries`, one answer per key into `out` (as long).
#[inline(always)]
fn each<A: PerKey>(out: &mut [bool], entries: impl Iterator<Item = (usize, u32)>, per_key: &mut A) {
    for (o, (i, lo)) in out.iter_mut().zip(entries) {
        // SAFETY: see above.
        *o = unsafe { per_key.key(i, lo) };
    }
}

/// Probes `entries`, counting the `true` answers.
#[inline(always)]
fn count<A: PerKey>(entries: impl Iterator<Item = (usize, u32)>, per_key: &mut A) -> usize {
    let mut found = 0;
    for (i, lo) in entries {
        // SAFETY: see above.
        found += unsafe { per_key.key(i, lo) } as usize;
    }
    found
}

/// A batch of keys, each applying `op` to its block.
pub(crate) struct BlockBatch<'s, 'k, 'o, O> {
    shape: &'s Shape,
    keys: Keys<'k>,
    op: O,
    sink: Sink<'o>,
}

impl<'s, 'k, 'o, O: BlockOp> BlockBatch<'s, 'k, 'o, O> {
    /// # Panics
    /// If the op's blocks disagree with `shape` (the unchecked block accesses rely on this:
    /// multiply-shift yields indices below `num_blocks`), or `sink` does not fit `keys`
    /// ([`Sink::prepare`]).
    #[inline]
    pub fn new(shape: &'s Shape, keys: Keys<'k>, op: O, mut sink: Sink<'o>) -> Self {
        assert_eq!(
            shape.num_blocks,
            op.num_blocks() as u64,
            "filter shape and blocks disagree"
        );
        sink.prepare(keys.len(), O::TAKES);
        BlockBatch {
            shape,
            keys: keys.under(shape.hash),
            op,
            sink,
        }
    }
}

impl<O: BlockOp> Batch for BlockBatch<'_, '_, '_, O> {
    fn scalar(self) {
        scalar::run_blocks(self.shape, self.keys, self.op, self.sink)
    }

    #[inline(always)]
    fn lanes<L: Lanes>(self, l: L) {
        // The unrolled arms behind `const` guards: decided per instance before code
        // generation, so an op or tier that does not unroll never compiles them.
        match (self.shape.layout, self.shape.rounds) {
            (Layout::Sectors8x64, 1) if const { O::UNROLL && L::UNROLL_BATCHES } => {
                self.pipelined::<L, true, 1>(l)
            }
            (Layout::Sectors8x64, 2) if const { O::UNROLL && L::UNROLL_BATCHES } => {
                self.pipelined::<L, true, 2>(l)
            }
            (Layout::Sectors8x64, _) => self.pipelined::<L, true, 0>(l),
            (Layout::Sectors4x128, 1) if const { O::UNROLL && L::UNROLL_BATCHES } => {
                self.pipelined::<L, false, 1>(l)
            }
            (Layout::Sectors4x128, 2) if const { O::UNROLL && L::UNROLL_BATCHES } => {
                self.pipelined::<L, false, 2>(l)
            }
            (Layout::Sectors4x128, 3) if const { O::UNROLL && L::UNROLL_BATCHES } => {
                self.pipelined::<L, false, 3>(l)
            }
            (Layout::Sectors4x128, _) => self.pipelined::<L, false, 0>(l),
            (Layout::Sectors8x32, 1) if const { O::UNROLL && L::UNROLL_BATCHES } => {
                self.halved::<L, 1>(l)
            }
            (Layout::Sectors8x32, _) => self.halved::<L, 0>(l),
        }
    }
}

impl<O: BlockOp> BlockBatch<'_, '_, '_, O> {
    /// The pipeline for one layout (`WORDS`: `Sectors8x64`) and round count (`R = 0`: any,
    /// counted at run time).
    #[inline(always)]
    fn pipelined<L: Lanes, const WORDS: bool, const R: usize>(self, l: L) {
        let shape = self.shape;
        let rows = if R > 0 {
            &shape.layout.rows()[..R]
        } else {
            shape.rows()
        };
        let walk = self.walk();
        let mut per_key = Blocked::<L, O, WORDS> {
            l,
            op: self.op,
            rows,
        };
        pipeline(l, &walk, self.keys, &mut per_key, self.sink);
    }

    /// The `Sectors8x32` pipeline for `R` rounds (0: any, counted at run time). Its entries
    /// index halves, `2 * block + half`, which fit 32 bits up to 2^31 blocks; a filter past
    /// that (over 128 GiB, whose probes wait on memory anyway) takes the scalar reference, as
    /// a big-endian target does (its 32-bit sectors are not in memory order).
    #[inline(always)]
    fn halved<L: Lanes, const R: usize>(self, l: L) {
        if self.shape.num_blocks > 1 << 31 || cfg!(target_endian = "big") {
            return self.scalar();
        }
        let rounds = if R > 0 { R } else { self.shape.rounds };
        let walk = Walk {
            stride: size_of::<Block>() / 2,
            halves: true,
            ..self.walk()
        };
        let mut per_key = Halved::<L, O> {
            l,
            op: self.op,
            rows: &ROWS_8X32[..rounds],
        };
        pipeline(l, &walk, self.keys, &mut per_key, self.sink);
    }

    fn walk(&self) -> Walk {
        let shape = self.shape;
        Walk {
            flip: shape.flip,
            num_blocks: shape.num_blocks,
            chunk: shape.chunk,
            prefetch: shape.prefetch,
            base: self.op.base().cast(),
            stride: size_of::<Block>(),
            halves: false,
        }
    }
}

/// A pipeline's (or a burst's) step for one key of a `Sectors8x32` op: its half's probes.
pub(super) struct Halved<L, O> {
    pub l: L,
    pub op: O,
    pub rows: &'static [Row32],
}

impl<L: Lanes, O: BlockOp> PerKey for Halved<L, O> {
    const TAKES: Takes = O::TAKES;

    /// `j` is `2 * block + half` ([`entries_halves`]).
    #[inline(always)]
    unsafe fn key(&mut self, j: usize, lo: u32) -> bool {
        let p = HalfProbes {
            l: self.l,
            lo,
            half: j & 1,
            rows: self.rows,
        };
        // SAFETY: as in `Blocked::key`: `j / 2` is the block index below `num_blocks`.
        unsafe { self.op.apply_half(j, p) }
    }
}

/// A pipeline's (or a burst's) step for one key of an op in a whole-block layout: its probes
/// in lanes.
pub(super) struct Blocked<L, O, const WORDS: bool> {
    pub l: L,
    pub op: O,
    pub rows: &'static [Row],
}

impl<L: Lanes, O: BlockOp, const WORDS: bool> PerKey for Blocked<L, O, WORDS> {
    const TAKES: Takes = O::TAKES;

    #[inline(always)]
    unsafe fn key(&mut self, i: usize, lo: u32) -> bool {
        let p = LaneProbes::<L, WORDS> {
            l: self.l,
            lo,
            rows: self.rows,
        };
        // SAFETY: the caller guarantees `i < num_blocks` of the walk, which equals
        // `op.num_blocks()` (checked in `BlockBatch::new`).
        unsafe { self.op.apply(i, p) }
    }
}

#[cfg(test)]
mod tests {
    use super::prefetch_depth;
    use crate::isa::Isa;

    /// Filters that fit the detected L2 are not prefetched, the next size up is.
    #[test]
    fn prefetching_starts_past_the_l2() {
        use crate::cpu::{PLAUSIBLE_L2_BYTES, l2_bytes};
        let l2 = l2_bytes();
        assert!(PLAUSIBLE_L2_BYTES.contains(&l2), "{l2}");
        for isa in [Isa::Portable, Isa::Avx2, Isa::Avx512, Isa::Neon] {
            assert_eq!(prefetch_depth(l2, isa), 0, "{isa}");
            assert!(prefetch_depth(l2 + 64, isa) > 0, "{isa}");
        }
    }

    use super::BlockBatch;
    use crate::kernel::probe::block::{Insert, InsertNew, Query, Shape};
    use crate::kernel::{Keys, Sink, Takes};
    use crate::layout::{Block, Layout};

    fn shape(num_blocks: u64) -> Shape {
        Shape {
            num_blocks,
            layout: Layout::Sectors8x64,
            rounds: 1,
            flip: 0,
            hash: crate::hashing::KeyHash::Xxh3,
            chunk: 64,
            prefetch: false,
        }
    }

    fn panics(f: impl FnOnce()) -> bool {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).is_err()
    }

    /// An op is made only with a sink it takes: its other arms are not compiled, so a wrong
    /// sink would otherwise lose its answers.
    #[test]
    fn batches_take_only_their_sinks() {
        let (mut out, mut n) = ([false; 3], 0);
        let kinds = [Takes::Any, Takes::Discard, Takes::Each, Takes::Count];
        for takes in kinds {
            let allowed = [
                !panics(|| Sink::Discard.prepare(3, takes)),
                !panics(|| Sink::Each(&mut out).prepare(3, takes)),
                !panics(|| Sink::Count(&mut n).prepare(3, takes)),
                !panics(|| Sink::Bitmap(&mut [0]).prepare(3, takes)),
                !panics(|| Sink::Select(&mut alloc::vec::Vec::new()).prepare(3, takes)),
            ];
            let expected = match takes {
                Takes::Any => [true; 5],
                Takes::Discard => [true, false, false, false, false],
                Takes::Each => [false, true, false, false, false],
                Takes::Count => [false, false, true, false, false],
            };
            assert_eq!(allowed, expected, "{takes:?}");
        }
        // A batch checks its op's kinds.
        let (s, keys) = (shape(4), [1u64, 2, 3]);
        let mut blocks = [Block::ZERO; 4];
        assert!(panics(|| {
            BlockBatch::new(
                &s,
                Keys::U64(&keys),
                Insert(&mut blocks),
                Sink::Each(&mut out),
            );
        }));
        assert!(panics(|| {
            BlockBatch::new(
                &s,
                Keys::U64(&keys),
                InsertNew(&mut blocks),
                Sink::Count(&mut n),
            );
        }));
        assert!(!panics(|| {
            BlockBatch::new(&s, Keys::U64(&keys), Query(&blocks), Sink::Count(&mut n));
        }));
    }
}
