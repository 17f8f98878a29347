//! Large arrays on transparent huge pages (Linux).
//!
//! A probe into a filter larger than the caches misses the TLB as well as the cache, and on
//! 4 KiB pages pays a page walk for it. Backed by 2 MiB pages, the same memory needs a 512th
//! of the TLB entries: the issue that asked for this measured prefetched random reads of one
//! line over 80 MiB at 6.6-7.1 ns on 4 KiB pages and 4.5-5.2 ns on huge pages (Intel Xeon).
//!
//! So arrays of at least [`HUGE_PAGES_FROM_BYTES`] are advised `MADV_HUGEPAGE` (the 2 MiB-
//! aligned part of the range) right after the allocator returns them and before they are
//! zeroed: a fresh mapping then takes huge pages at its first touch. (The global allocator
//! zeroes 64-byte-aligned memory itself, so the kernel's zero-fill cannot replace that pass
//! without a storage type of our own; memory the allocator reuses stays on the pages it has.)
//! With the system setting `always` or `madvise` the kernel then backs it with huge pages
//! when it has them free; with `never` (or when it has none) the request is ignored, which is
//! not an error. [`huge_page_bytes`] says how much of an array the kernel actually gave huge
//! pages, from `/proc/self/smaps`, and [`transparent_huge_pages`] reads the setting.
//!
//! Who asks: the builders of the plain, atomic and counting filters (and so the deletable
//! filter and the scalable filter's stages, which hold plain filters), folds, the Parquet
//! split-block filter, and `from_bytes` (which knows the array's size from the bytes at
//! hand). `read_from` grows its array as the bytes arrive: each growth advises the room not
//! yet written, and the whole array is advised once loaded, for the kernel to collapse the
//! part written before.
//!
//! Not advised: clones (`Clone` copies into an ordinary allocation; build or load a filter
//! for hot use instead), and filters over memory the caller owns ([`FilterRef`]), which
//! usually cannot get huge pages from a file mapping.
//!
//! [`FilterRef`]: crate::FilterRef
//!
//! Other systems, and builds without `std`, keep the ordinary allocation.

/// Arrays at least this large (4 MiB) are advised onto huge pages. Smaller ones fit in a few
/// 2 MiB pages, and an unaligned allocation would have no whole huge page inside it.
pub const HUGE_PAGES_FROM_BYTES: usize = 4 << 20;

/// The huge page size the alignment assumes (x86-64 and aarch64 with 4 KiB base pages).
pub const HUGE_PAGE_BYTES: usize = 2 << 20;

/// `len` zeroed values of `T`, advised onto huge pages when `huge` is set, the array is at
/// least [`HUGE_PAGES_FROM_BYTES`] and the system is Linux; `None` when the allocator refuses.
///
/// # Safety
/// The all-zero bit pattern must be a valid `T` (plain integers, arrays of them, atomics).
pub(crate) unsafe fn zeroed_vec<T>(len: usize, huge: bool) -> Option<alloc::vec::Vec<T>> {
    let layout = core::alloc::Layout::array::<T>(len).ok()?;
    if huge && layout.size() >= HUGE_PAGES_FROM_BYTES {
        // The advice must come before the first touch: zeroed allocations of the alignment
        // of a block (64) are written with zeros by the allocator (only those aligned to 16
        // come from `calloc`'s untouched pages), which would fault in 4 KiB pages first.
        let mut v = reserve_vec::<T>(len, true)?;
        // SAFETY: the vector has room for `len` values, now all zero bytes, which the caller
        // promises are valid values of `T`.
        unsafe {
            v.as_mut_ptr().write_bytes(0, len);
            v.set_len(len);
        }
        return Some(v);
    }
    if layout.size() == 0 {
        return Some(alloc::vec::Vec::new());
    }
    // SAFETY: the layout's size is not zero.
    let ptr = unsafe { alloc::alloc::alloc_zeroed(layout) };
    if ptr.is_null() {
        return None;
    }
    // SAFETY: `ptr` comes from the global allocator with `Layout::array::<T>(len)`, the
    // layout a `Vec<T>` of capacity `len` deallocates with; its `len` values are zero bytes,
    // a valid `T` by the caller's promise.
    Some(unsafe { alloc::vec::Vec::from_raw_parts(ptr.cast::<T>(), len, len) })
}

/// An empty vector with room for `cap` values, its memory advised onto huge pages when
/// `huge` is set and it is at least [`HUGE_PAGES_FROM_BYTES`] (Linux); the values written into
/// it later are its first touch. `None` when the allocator refuses.
pub(crate) fn reserve_vec<T>(cap: usize, huge: bool) -> Option<alloc::vec::Vec<T>> {
    let layout = core::alloc::Layout::array::<T>(cap).ok()?;
    if layout.size() == 0 {
        return Some(alloc::vec::Vec::new());
    }
    // SAFETY: the layout's size is not zero.
    let ptr = unsafe { alloc::alloc::alloc(layout) };
    if ptr.is_null() {
        return None;
    }
    if huge && layout.size() >= HUGE_PAGES_FROM_BYTES {
        advise_huge(ptr, layout.size());
    }
    // SAFETY: `ptr` comes from the global allocator with `Layout::array::<T>(cap)`, the layout
    // a `Vec<T>` of capacity `cap` deallocates with, and no value is claimed initialized.
    Some(unsafe { alloc::vec::Vec::from_raw_parts(ptr.cast::<T>(), 0, cap) })
}

/// Advises the spare capacity of a vector that is filled as bytes arrive (`read_from`), when
/// the vector is large: the values written there next are its first touch, so they land on
/// huge pages at once (the part already written is collapsed later, see
/// [`advise_in_place`]).
pub(crate) fn advise_spare<T>(v: &mut alloc::vec::Vec<T>) {
    let bytes = v.capacity().saturating_mul(core::mem::size_of::<T>());
    if bytes >= HUGE_PAGES_FROM_BYTES {
        let spare = v.spare_capacity_mut();
        let len = core::mem::size_of_val(spare);
        advise_huge(spare.as_mut_ptr().cast::<u8>(), len);
    }
}

/// Advises a large array that is already in use: the kernel's `khugepaged` then collapses
/// it onto huge pages in the background, when it gets to it (pages already touched are not
/// replaced at once).
pub(crate) fn advise_in_place<T>(values: &mut [T]) {
    let len = core::mem::size_of_val(values);
    if len >= HUGE_PAGES_FROM_BYTES {
        advise_huge(values.as_mut_ptr().cast::<u8>(), len);
    }
}

/// Advises the whole huge pages inside `[ptr, ptr + len)`. (Not under Miri, which has no
/// `madvise`.)
#[cfg(all(feature = "std", target_os = "linux", not(miri)))]
fn advise_huge(ptr: *mut u8, len: usize) {
    let start = (ptr as usize).next_multiple_of(HUGE_PAGE_BYTES);
    let end = (ptr as usize + len) / HUGE_PAGE_BYTES * HUGE_PAGE_BYTES;
    if end > start {
        // SAFETY: `[start, end)` lies inside the allocation just made, which nothing else
        // refers to yet; the advice changes only how the kernel backs it. A refusal (an old
        // kernel, THP compiled out) leaves ordinary pages, so its result is ignored.
        unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) };
    }
}

#[cfg(not(all(feature = "std", target_os = "linux", not(miri))))]
fn advise_huge(_: *mut u8, _: usize) {}

/// Bytes of `region` the kernel currently backs with transparent huge pages, from the
/// `AnonHugePages` of the mappings in `/proc/self/smaps` that overlap it (each counted up to
/// its overlap). `None` where that file cannot be read (other systems, no `std`, a sandbox).
///
/// ```
/// let f = blockbloom::BloomFilter::with_capacity(10_000_000, 0.01)?; // 12 MB
/// if let Some(huge) = f.huge_page_bytes() {
///     assert!(huge <= f.size_in_bytes() as u64); // 0 unless the system grants huge pages
/// }
/// # Ok::<(), blockbloom::Error>(())
/// ```
pub fn huge_page_bytes<T>(region: &[T]) -> Option<u64> {
    #[cfg(all(feature = "std", target_os = "linux"))]
    {
        let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
        let start = region.as_ptr() as u64;
        let end = start + core::mem::size_of_val(region) as u64;
        Some(huge_in_smaps(&smaps, start, end))
    }
    #[cfg(not(all(feature = "std", target_os = "linux")))]
    {
        let _ = region;
        None
    }
}

/// The sum over the mappings of `smaps` overlapping `[start, end)` of their `AnonHugePages`,
/// each at most its overlap.
#[cfg_attr(not(all(feature = "std", target_os = "linux")), allow(dead_code))]
fn huge_in_smaps(smaps: &str, start: u64, end: u64) -> u64 {
    let mut total = 0;
    let mut overlap = 0u64;
    for line in smaps.lines() {
        let mut fields = line.split_whitespace();
        let Some(first) = fields.next() else {
            continue;
        };
        if let Some((lo, hi)) = first.split_once('-') {
            // A mapping's header: `start-end perms offset dev inode [path]`.
            if let (Ok(lo), Ok(hi)) = (u64::from_str_radix(lo, 16), u64::from_str_radix(hi, 16)) {
                overlap = hi.min(end).saturating_sub(lo.max(start));
                continue;
            }
        }
        if first == "AnonHugePages:" && overlap > 0 {
            let kib: u64 = fields.next().and_then(|v| v.parse().ok()).unwrap_or(0);
            total += (kib * 1024).min(overlap);
        }
    }
    total
}

/// The system's transparent huge page setting (`always`, `madvise` or `never`: the bracketed
/// word of `/sys/kernel/mm/transparent_hugepage/enabled`), or `None` where there is none.
/// With `never`, large filters stay on 4 KiB pages and pay a page walk per probe.
pub fn transparent_huge_pages() -> Option<&'static str> {
    #[cfg(all(feature = "std", target_os = "linux"))]
    {
        let s = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").ok()?;
        let word = s.split('[').nth(1)?.split(']').next()?;
        ["always", "madvise", "never"]
            .into_iter()
            .find(|w| *w == word)
    }
    #[cfg(not(all(feature = "std", target_os = "linux")))]
    {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smaps_overlaps_are_counted_up_to_the_overlap() {
        let smaps = "\
7f0000000000-7f0000600000 rw-p 00000000 00:00 0
Size:               6144 kB
AnonHugePages:      4096 kB
7f0000600000-7f0000800000 rw-p 00000000 00:00 0
AnonHugePages:      2048 kB
7f0000800000-7f0000a00000 r--p 00000000 08:01 42 /usr/lib/x.so
AnonHugePages:      2048 kB
";
        let base = 0x7f00_0000_0000u64;
        // The first mapping whole, and 1 MiB of the second.
        assert_eq!(
            huge_in_smaps(smaps, base, base + 0x70_0000),
            (4096 + 1024) * 1024
        );
        assert_eq!(huge_in_smaps(smaps, base + 0xa0_0000, base + 0xb0_0000), 0);
    }

    #[test]
    fn zeroed_vectors_are_zero_and_droppable() {
        for len in [0usize, 1, 1000, (HUGE_PAGES_FROM_BYTES / 8) + 3] {
            for huge in [false, true] {
                // SAFETY: zero is a valid u64.
                let mut v = unsafe { zeroed_vec::<u64>(len, huge) }.unwrap();
                assert_eq!(v.len(), len);
                assert!(v.iter().all(|&x| x == 0));
                v.iter_mut().for_each(|x| *x = 1);
                let c = v.clone();
                drop(v);
                assert!(c.iter().all(|&x| x == 1));
            }
        }
    }
}
