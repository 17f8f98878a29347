//! The floor of shared ingest (`ingest_pairs`' `floor-*` sides): the keys' hashes, computed
//! before the clock starts, turned into their `Sectors8x32` patterns and OR'd into a buffer
//! of the filter's size with nothing else (no hashing, no batching, no locks), so that what the
//! memory system costs is a number:
//! * `floor-plain`: one thread, a plain buffer, the four words of the key's half OR'd in;
//! * `floor-atomic`: every thread into one shared buffer of `AtomicU64`, four relaxed
//!   `fetch_or`s per key (`lock or` on x86-64), the sharing a lock-free filter pays;
//! * `floor-stores`: as `floor-atomic` with a relaxed load and a relaxed store per word (plain
//!   `mov`s, as the stripe scheme writes under its lock), which may lose a racing bit: what
//!   lines moving between cores cost with no atomic read-modify-write.
//!
//! Each asks for the line of the key [`AHEAD`] keys on (on AVX2), as the filter's batches do,
//! so that a floor is not slower than the filter for want of a prefetch. The pattern is the
//! filter's own: block `block_index(hash, num_blocks)`, half `lo >> 31`,
//! sector `w`'s bit `(lo * SALT[w]) >> 27` (`lo` the hash's low 32 bits; 8 probes, the
//! defaults at 1%); `same_bits_as_the_filter` checks it against `BloomFilter::insert_hash`.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use blockbloom::Block;
use blockbloom::layout::{SALT, block_index};

/// The four 64-bit words of `lo`'s pattern in its half (sector `2j` in word `j`'s low 32
/// bits, sector `2j + 1` in its high 32).
#[inline(always)]
fn pattern(lo: u32) -> [u64; 4] {
    let bit = |w: usize| 1u64 << (lo.wrapping_mul(SALT[w]) >> 27);
    std::array::from_fn(|j| bit(2 * j) | bit(2 * j + 1) << 32)
}

/// The first word of `hash`'s half (`lo >> 31`) of its block in a buffer of `num_blocks`
/// 8-word blocks.
#[inline(always)]
fn half_at(hash: u64, num_blocks: u64) -> usize {
    8 * block_index(hash, num_blocks) + 4 * (hash as u32 >> 31) as usize
}

/// Whether `words` (a floor's buffer) holds every bit of `hash`'s pattern: the floor's answer
/// for one member, as the other sides give theirs.
pub fn covers(words: &[u64], num_blocks: u64, hash: u64) -> bool {
    let at = half_at(hash, num_blocks);
    (words[at..at + 4].iter().zip(pattern(hash as u32))).all(|(w, p)| w & p == p)
}

/// Where a buffer's lines start and how many bytes it holds: what the prefetches need, taken
/// before the buffer is borrowed to write.
#[derive(Clone, Copy)]
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // prefetched on AVX2 only
struct Lines {
    base: *const u8,
    bytes: usize,
}

impl Lines {
    fn of<T>(buf: &[T]) -> Lines {
        Lines {
            base: buf.as_ptr().cast(),
            bytes: std::mem::size_of_val(buf),
        }
    }
}

/// How many keys ahead the floors ask for a key's line, as the filter's batches do.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
const AHEAD: usize = 32;

/// Calls `apply(at, words)` for every hash: `words` its pattern, `at` its half's first word
/// in `buf` (whose lines are asked for [`AHEAD`] keys ahead). On AVX2 the pattern is made in
/// one register, as the filter's kernel makes it.
#[inline(always)]
fn each_pattern(
    buf: Lines,
    num_blocks: u64,
    hashes: &[u64],
    mut apply: impl FnMut(usize, [u64; 4]),
) {
    assert_eq!(
        buf.bytes as u64,
        64 * num_blocks,
        "a buffer of the filter's size"
    );
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: AVX2 was just detected.
        return unsafe { each_pattern_avx2(buf, num_blocks, hashes, apply) };
    }
    for &h in hashes {
        apply(half_at(h, num_blocks), pattern(h as u32));
    }
}

/// [`each_pattern`] on AVX2.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn each_pattern_avx2(
    buf: Lines,
    num_blocks: u64,
    hashes: &[u64],
    mut apply: impl FnMut(usize, [u64; 4]),
) {
    use std::arch::x86_64::*;
    // SAFETY: `SALT` holds at least 8 `u32`s (32 bytes); an unaligned load needs no alignment.
    let salts = unsafe { _mm256_loadu_si256(SALT.as_ptr().cast()) };
    let one = _mm256_set1_epi32(1);
    let base = buf.base.cast::<i8>();
    for (i, &h) in hashes.iter().enumerate() {
        if let Some(&next) = hashes.get(i + AHEAD) {
            let line = 64 * block_index(next, num_blocks);
            // SAFETY: `line` is a block's offset in `buf`, of 64 bytes a block (asserted by
            // the caller), so the pointer stays in its allocation; a prefetch reads nothing.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(base.add(line)) };
        }
        let lo = _mm256_set1_epi32(h as i32);
        let bits = _mm256_srli_epi32::<27>(_mm256_mullo_epi32(lo, salts));
        let mut words = [0u64; 4];
        // SAFETY: `words` is 32 bytes; an unaligned store needs no alignment.
        unsafe { _mm256_storeu_si256(words.as_mut_ptr().cast(), _mm256_sllv_epi32(one, bits)) };
        apply(half_at(h, num_blocks), words);
    }
}

/// `floor-plain`: every hash OR'd into `buf` on this thread.
pub fn plain(buf: &mut [u64], num_blocks: u64, hashes: &[u64]) {
    each_pattern(Lines::of(buf), num_blocks, hashes, |at, words| {
        let half: &mut [u64; 4] = (&mut buf[at..at + 4]).try_into().expect("4 words");
        *half = std::array::from_fn(|j| half[j] | words[j]);
    })
}

/// `floor-atomic` (`RMW`) or `floor-stores` (not `RMW`): this thread's hashes OR'd into the
/// shared `buf`.
pub fn shared<const RMW: bool>(buf: &[AtomicU64], num_blocks: u64, hashes: &[u64]) {
    each_pattern(Lines::of(buf), num_blocks, hashes, |at, words| {
        for (w, p) in buf[at..at + 4].iter().zip(words) {
            if RMW {
                w.fetch_or(p, Relaxed);
            } else {
                w.store(w.load(Relaxed) | p, Relaxed);
            }
        }
    })
}

/// `num_blocks` zeroed blocks, 64-byte aligned as the filter's are (a block that straddled
/// two lines would cost a floor two misses), on huge pages where the kernel gives them, as the
/// filter's array is: the allocation is fresh, and the advice comes before the first touch.
pub fn zeroed(num_blocks: usize) -> Vec<Block> {
    let mut blocks: Vec<Block> = Vec::with_capacity(num_blocks);
    // `libc` is this package's dependency (madvise, as `sweep`'s ceiling).
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let start = (blocks.as_ptr() as usize).next_multiple_of(HUGE);
        let end = (blocks.as_ptr() as usize + 64 * num_blocks) / HUGE * HUGE;
        if end > start {
            // SAFETY: `[start, end)` is page-aligned memory inside `blocks`' allocation, which
            // lives on; the advice changes how it is backed, never its contents.
            unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) };
        }
    }
    blocks.resize(num_blocks, Block::default());
    blocks
}

/// The words of `blocks`, in order.
pub fn words(blocks: &mut [Block]) -> &mut [u64] {
    // SAFETY: a `Block` is `repr(C)` over `[u64; 8]` and 64 bytes (no padding), so `n` blocks
    // are `8 n` initialised, aligned, contiguous `u64`s; the borrow is handed on.
    unsafe { std::slice::from_raw_parts_mut(blocks.as_mut_ptr().cast::<u64>(), 8 * blocks.len()) }
}

/// `words` as atomics, to share between threads.
pub fn as_atomic(words: &mut [u64]) -> &[AtomicU64] {
    assert_eq!(words.as_ptr().align_offset(align_of::<AtomicU64>()), 0);
    // SAFETY: `AtomicU64` has the size and bit validity of `u64`, and `words` is aligned for
    // it (asserted above); the exclusive
    // borrow of `words` lasts as long as the returned slice, so no plain access races it.
    unsafe { std::slice::from_raw_parts(words.as_mut_ptr().cast::<AtomicU64>(), words.len()) }
}
