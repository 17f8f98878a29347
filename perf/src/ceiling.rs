//! The memory ceiling: one random 64-byte line per key, prefetched ahead like the filter's
//! batch kernels, over a buffer of the filter's size on 4 KiB or huge pages. What a filter
//! that reads one line per key cannot beat.

use std::hint::black_box;
use std::time::Instant;

use blockbloom_measure::format;
use blockbloom_measure::keys;
use blockbloom_measure::timing::{Timing, per_key};

/// Keys per timed pass of [`ceiling`].
const QUERIES: usize = 4 << 20;

/// Seed of the line stream.
const SEED: u64 = 0x5EED;

/// A 2 MiB-aligned buffer from the global allocator.
pub struct Buffer {
    ptr: *mut u8,
    layout: std::alloc::Layout,
}

impl Buffer {
    pub fn new(bytes: usize, thp: bool) -> Result<Buffer, String> {
        let layout = std::alloc::Layout::from_size_align(bytes, 2 << 20)
            .map_err(|e| format!("buffer layout: {e}"))?;
        // SAFETY: the layout has a non-zero size (every sweep size is at least 32 KiB).
        let ptr = unsafe { std::alloc::alloc(layout) };
        if ptr.is_null() {
            return Err(format!("could not allocate {bytes} bytes"));
        }
        #[cfg(target_os = "linux")]
        {
            let advice = if thp {
                libc::MADV_HUGEPAGE
            } else {
                libc::MADV_NOHUGEPAGE
            };
            // SAFETY: ptr..ptr+bytes is one allocation we own; madvise only changes how the
            // kernel backs it (a failure is harmless: the buffer just keeps small pages).
            unsafe { libc::madvise(ptr.cast(), bytes, advice) };
        }
        #[cfg(not(target_os = "linux"))]
        let _ = thp;
        // Faults every page in (with huge pages where the kernel grants them).
        // SAFETY: writes within the allocation.
        unsafe { std::ptr::write_bytes(ptr, 1, bytes) };
        Ok(Buffer { ptr, layout })
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) }
    }
}

/// `AnonHugePages` of this process in KiB (0 where unknown).
pub fn anon_huge_kib() -> u64 {
    std::fs::read_to_string("/proc/self/smaps_rollup")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("AnonHugePages:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// Prefetch distances the ceiling tries; it is the fastest of them (the filter's own depth
/// varies with its size, and the memory system decides which distance keeps most misses in
/// flight).
pub const DISTANCES: [usize; 4] = [16, 32, 64, 128];

/// The deepest prefetch distance [`random_lines`] takes.
pub const MAX_AHEAD: usize = 128;

#[inline(always)]
fn prefetch(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetch never faults, whatever the address.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(p.cast())
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Line index of key `i`: a SplitMix64 output mapped onto `0..lines` by multiply-shift.
#[inline(always)]
fn line(i: usize, lines: usize) -> usize {
    ((keys::key(SEED, i as u64) as u128 * lines as u128) >> 64) as usize
}

/// Reads (or read-modify-writes) one random line per key for `n` keys, prefetching `ahead`
/// keys ahead (1 to [`MAX_AHEAD`]); ns per key.
pub fn random_lines(buf: &Buffer, bytes: usize, n: usize, write: bool, ahead: usize) -> f64 {
    assert!(
        (1..=MAX_AHEAD).contains(&ahead),
        "prefetch distance out of range"
    );
    let lines = bytes / 64;
    let base = buf.ptr;
    let mut ring = [0usize; MAX_AHEAD];
    for (j, r) in ring[..ahead].iter_mut().enumerate() {
        *r = line(j, lines);
        // SAFETY (all pointer arithmetic below): every index is < lines, so the line lies
        // inside the `bytes`-byte buffer.
        prefetch(unsafe { base.add(*r * 64) });
    }
    let mut acc = 0u64;
    let t = Instant::now();
    for i in 0..n {
        let cur = ring[i % ahead];
        let next = line(i + ahead, lines);
        prefetch(unsafe { base.add(next * 64) });
        ring[i % ahead] = next;
        let p = unsafe { base.add(cur * 64) }.cast::<u64>();
        if write {
            // SAFETY: in bounds, 64-byte aligned, and the buffer is ours alone.
            unsafe { *p |= 1 << (i & 63) };
        } else {
            // SAFETY: in bounds and aligned.
            acc = acc.wrapping_add(unsafe { *p });
        }
    }
    black_box(acc);
    per_key(t, n)
}

/// The fastest over [`DISTANCES`] of the median ns/key of `reps` passes of `n` keys of
/// [`random_lines`], and the distance that gave it.
pub fn best_random_lines(
    buf: &Buffer,
    bytes: usize,
    n: usize,
    write: bool,
    reps: usize,
) -> (f64, usize) {
    DISTANCES
        .iter()
        .map(|&ahead| {
            let mut t = Timing::default();
            for _ in 0..reps {
                t.samples.push(random_lines(buf, bytes, n, write, ahead));
            }
            (t.median(), ahead)
        })
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .expect("DISTANCES is not empty")
}

/// The ceilings over one buffer: ns per line, the prefetch distance that gave each, and
/// how much of the buffer the kernel backed with huge pages.
pub struct Ceiling {
    pub read: f64,
    pub rmw: f64,
    pub read_ahead: usize,
    pub rmw_ahead: usize,
    /// "X of Y" bytes on huge pages.
    pub backed: String,
}

/// The read and read-modify-write ceilings over a `bytes` buffer on huge pages (`thp`) or
/// 4 KiB pages ([`best_random_lines`] of `QUERIES` keys).
pub fn ceiling(bytes: usize, thp: bool, reps: usize) -> Result<Ceiling, String> {
    let before = anon_huge_kib();
    let buf = Buffer::new(bytes, thp)?;
    let huge = anon_huge_kib().saturating_sub(before) * 1024;
    let backed = format!(
        "{} of {}",
        format::bytes(huge.min(bytes as u64)),
        format::bytes(bytes as u64)
    );
    let (read, read_ahead) = best_random_lines(&buf, bytes, QUERIES, false, reps);
    let (rmw, rmw_ahead) = best_random_lines(&buf, bytes, QUERIES, true, reps);
    Ok(Ceiling {
        read,
        rmw,
        read_ahead,
        rmw_ahead,
        backed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ceiling_loops_run_at_every_distance() {
        let buf = Buffer::new(64 << 10, false).unwrap();
        for ahead in [1, 16, MAX_AHEAD] {
            assert!(random_lines(&buf, 64 << 10, 10_000, false, ahead) > 0.0);
            assert!(random_lines(&buf, 64 << 10, 10_000, true, ahead) > 0.0);
        }
        let (ns, ahead) = best_random_lines(&buf, 64 << 10, 10_000, false, 1);
        assert!(ns > 0.0 && DISTANCES.contains(&ahead));
    }
}
