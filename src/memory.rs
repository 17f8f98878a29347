//! Large arrays on transparent huge pages (Linux), in a storage type of the crate's own:
//! [`PageBuf`].
//!
//! A probe into a filter larger than the caches misses the TLB as well as the cache, and on
//! 4 KiB pages pays a page walk for it. Backed by 2 MiB pages, the same memory needs a 512th
//! of the TLB entries, and prefetched random reads of one line over a large buffer run
//! markedly faster (the memory ceiling with and without huge pages:
//! perf-reports/2026-11-21-intel-r-xeon-r-processor-sweep.md).
//!
//! So an array of at least [`HUGE_PAGES_FROM_BYTES`] gets an anonymous mapping of its own
//! (`mmap`), rounded up to whole 2 MiB pages and 2 MiB aligned (mapped 2 MiB larger, then the
//! unaligned head and tail unmapped), advised `MADV_HUGEPAGE` before anything touches it.
//! Nothing zeroes it: a fresh anonymous mapping reads as zeros, and the kernel fills each huge
//! page with zeros at its first touch, which is then the filter's first write or the load's
//! copy, not a pass of our own. Dropping the array unmaps it. With the system setting `always`
//! or `madvise` the kernel backs the whole array with huge pages when it has them free; with
//! `never` (or when it has none) it uses 4 KiB pages, which is not an error. A size the
//! kernel cannot map is [`Error::AllocationFailed`](crate::Error::AllocationFailed), never an
//! abort. [`huge_page_bytes`] says how much of an array the kernel actually gave huge pages,
//! from `/proc/self/smaps`, and [`transparent_huge_pages`] reads the setting.
//!
//! Who asks: the builders of the plain, atomic and counting filters (and so the deletable
//! filter and the scalable filter's stages, which hold plain filters), folds, snapshots and
//! projections, the Parquet split-block filter, the classic filter (whose loader copies the
//! words it read into one), and the blocked filters' loaders: `from_bytes` (which knows the
//! array's size from the bytes at hand) and `read_from`. `read_from` must not reserve more
//! than the bytes that arrived justify (a header may lie about its size), so it grows the
//! array geometrically as they arrive; each larger mapping is fresh, aligned and advised, and
//! the pages already written move into it with `mremap` (the kernel moves page-table entries,
//! whole 2 MiB entries for huge pages, and copies no data). So a loaded array is on huge pages
//! from its first write, as a built one is. Clones of a large array take the same path (the
//! copy is the first touch). Converting between the plain and the atomic filter keeps the
//! same mapping.
//!
//! Not on huge pages: arrays below the threshold and those built with
//! [`Builder::huge_pages(false)`](crate::Builder::huge_pages) (the global allocator holds
//! them), and filters over memory the caller owns ([`FilterRef`]), which usually cannot get
//! huge pages from a file mapping.
//!
//! [`FilterRef`]: crate::FilterRef
//!
//! Other systems, builds without `std`, and Miri (which has no `mmap`) keep the global
//! allocator for every size; the arrays are then zeroed by `alloc_zeroed`.

use core::alloc::Layout;
use core::marker::PhantomData;
use core::mem::ManuallyDrop;
use core::ptr::NonNull;

/// Arrays at least this large (4 MiB) are put on huge pages. Smaller ones fit in a few 2 MiB
/// pages, where rounding up to whole huge pages would waste a large part of the memory.
pub const HUGE_PAGES_FROM_BYTES: usize = 4 << 20;

/// The huge page size the alignment assumes (x86-64 and aarch64 with 4 KiB base pages).
pub const HUGE_PAGE_BYTES: usize = 2 << 20;

/// An owned array of `T` (a filter's blocks or words): on a 2 MiB-aligned anonymous mapping
/// advised onto transparent huge pages when it is large and huge pages are wanted (Linux with
/// `std`), else in the global allocator. See the [module docs](self).
///
/// It dereferences to `[T]`; clones are arrays of the same kind (a large one maps fresh
/// huge pages). `Send` and `Sync` when `T` is.
pub struct PageBuf<T> {
    /// The first value: dangling when `cap == 0`, else the start of the global allocation
    /// (`Layout::array::<T>(cap)`) or of the mapping (`mapped` bytes, 2 MiB aligned).
    ptr: NonNull<T>,
    /// Values initialised, from the start.
    len: usize,
    /// Values there is room for.
    cap: usize,
    /// Bytes of the anonymous mapping holding the array; 0 when it is not one.
    mapped: usize,
    /// Whether huge pages are wanted (kept by growth and clones).
    huge: bool,
    _owns: PhantomData<T>,
}

// SAFETY: a `PageBuf<T>` owns its values as a `Vec<T>` does (nothing else refers to its
// memory), so sending it sends the values and sharing it shares `&[T]`.
unsafe impl<T: Send> Send for PageBuf<T> {}
// SAFETY: as above; `&PageBuf<T>` gives out only `&[T]`.
unsafe impl<T: Sync> Sync for PageBuf<T> {}

/// Where an array of `bytes` (not 0) goes: a mapping of its own, or the global allocator.
fn wants_mapping(bytes: usize, huge: bool) -> bool {
    map::AVAILABLE && huge && bytes >= HUGE_PAGES_FROM_BYTES
}

impl<T> PageBuf<T> {
    /// The values are plain data: dropping them does nothing (so the array never drops them),
    /// they have a size, and a page aligns them.
    const PLAIN: () = assert!(
        !core::mem::needs_drop::<T>()
            && core::mem::size_of::<T>() > 0
            && core::mem::align_of::<T>() <= 4096
    );

    /// An empty array that allocates nothing yet.
    pub(crate) const fn new(huge: bool) -> PageBuf<T> {
        let () = Self::PLAIN;
        PageBuf {
            ptr: NonNull::dangling(),
            len: 0,
            cap: 0,
            mapped: 0,
            huge,
            _owns: PhantomData,
        }
    }

    /// Memory for `cap` values: `(start, mapped bytes)`, a mapping when large and `huge`
    /// (untouched, so reading zeros), else the global allocator's (zeroed if `zeroed`).
    fn allocate(cap: usize, huge: bool, zeroed: bool) -> Option<(NonNull<T>, usize)> {
        let layout = Layout::array::<T>(cap).ok()?;
        if layout.size() == 0 {
            return Some((NonNull::dangling(), 0));
        }
        if wants_mapping(layout.size(), huge) {
            let (start, mapped) = map::map(layout.size())?;
            return Some((start.cast(), mapped));
        }
        // SAFETY: the layout's size is not zero.
        let ptr = unsafe {
            if zeroed {
                alloc::alloc::alloc_zeroed(layout)
            } else {
                alloc::alloc::alloc(layout)
            }
        };
        Some((NonNull::new(ptr)?.cast(), 0))
    }

    /// An empty array with room for `cap` values (on huge pages when large and `huge`; the
    /// values written later are their first touch). `None` when the memory is refused.
    pub(crate) fn with_capacity(cap: usize, huge: bool) -> Option<PageBuf<T>> {
        let (ptr, mapped) = Self::allocate(cap, huge, false)?;
        Some(PageBuf {
            ptr,
            cap,
            mapped,
            ..Self::new(huge)
        })
    }

    /// `len` values of all-zero bytes (on huge pages when large and `huge`, zeroed by the
    /// kernel as they are first touched). `None` when the memory is refused.
    ///
    /// # Safety
    /// The all-zero bit pattern must be a valid `T` (plain integers, arrays of them, atomics).
    pub(crate) unsafe fn zeroed(len: usize, huge: bool) -> Option<PageBuf<T>> {
        let (ptr, mapped) = Self::allocate(len, huge, true)?;
        Some(PageBuf {
            ptr,
            len,
            cap: len,
            mapped,
            ..Self::new(huge)
        })
    }

    /// The values of an iterator that yields exactly its `len()` (on huge pages when large and
    /// `huge`). Memory refused is [`handle_alloc_error`](alloc::alloc::handle_alloc_error), as
    /// for a `Vec` collected or cloned: for copies that cannot return an error.
    ///
    /// # Panics
    /// If the iterator yields more than its length said.
    pub(crate) fn collect(values: impl ExactSizeIterator<Item = T>, huge: bool) -> PageBuf<T> {
        let n = values.len();
        let Some(mut out) = Self::with_capacity(n, huge) else {
            alloc::alloc::handle_alloc_error(Self::layout(n));
        };
        values.for_each(|v| out.push(v));
        out
    }

    /// How many values there is room for without growing.
    pub(crate) fn capacity(&self) -> usize {
        self.cap
    }

    /// Whether huge pages are wanted for this array when it is large.
    pub(crate) fn huge(&self) -> bool {
        self.huge
    }

    /// Whether the array is an anonymous mapping of its own (large, huge pages wanted, Linux),
    /// rather than the global allocator's.
    pub fn is_mapped(&self) -> bool {
        self.mapped > 0
    }

    /// Appends `value` in the room reserved.
    ///
    /// # Panics
    /// If there is no room left ([`capacity`](Self::capacity) values are there).
    #[inline]
    pub(crate) fn push(&mut self, value: T) {
        assert!(self.len < self.cap, "PageBuf::push beyond its capacity");
        // SAFETY: `len < cap`, so the slot lies inside the memory for `cap` values; it holds
        // no value yet, so nothing is overwritten that needed a drop.
        unsafe { self.ptr.as_ptr().add(self.len).write(value) };
        self.len += 1;
    }

    /// Makes room for `additional` more values beyond `len`, exactly; `None` (the array
    /// unchanged) when the memory is refused. An array that becomes large moves to a fresh
    /// advised mapping (see the [module docs](self)): a mapping's pages move into the larger
    /// one without a copy; the global allocator's values are copied (they are below
    /// [`HUGE_PAGES_FROM_BYTES`], unless huge pages are not wanted, when they are reallocated).
    pub(crate) fn try_reserve_exact(&mut self, additional: usize) -> Option<()> {
        let cap = self.len.checked_add(additional)?;
        if cap <= self.cap {
            return Some(());
        }
        let layout = Layout::array::<T>(cap).ok()?;
        if layout.size() <= self.mapped {
            // The mapping (whole huge pages) has the room already.
            self.cap = cap;
            return Some(());
        }
        if wants_mapping(layout.size(), self.huge) {
            let (start, mapped) = map::map(layout.size())?;
            if self.mapped > 0 {
                // SAFETY: `self.ptr` starts our mapping of `self.mapped` bytes and `start` the
                // new one, of `mapped > self.mapped` bytes (the array outgrew the old one):
                // both are ours, 2 MiB aligned and apart; nothing refers into the old one while
                // `self` is borrowed mutably, nor into the new one yet.
                let moved = unsafe { map::move_pages(self.ptr.cast(), self.mapped, start) };
                if !moved {
                    // SAFETY: the old mapping holds `len` values and the new one room for more;
                    // they are distinct mappings, and the old one is ours to unmap (it is not
                    // used again).
                    unsafe {
                        core::ptr::copy_nonoverlapping(
                            self.ptr.as_ptr(),
                            start.as_ptr().cast::<T>(),
                            self.len,
                        );
                        map::unmap(self.ptr.cast(), self.mapped);
                    }
                }
            } else if self.cap > 0 {
                // SAFETY: the global allocation holds `len` values and the new mapping room for
                // more, apart; the allocation was made with `Layout::array::<T>(self.cap)`
                // and is not used again.
                unsafe {
                    core::ptr::copy_nonoverlapping(
                        self.ptr.as_ptr(),
                        start.as_ptr().cast::<T>(),
                        self.len,
                    );
                    alloc::alloc::dealloc(self.ptr.as_ptr().cast(), Self::layout(self.cap));
                }
            }
            self.ptr = start.cast();
            self.mapped = mapped;
        } else if self.cap == 0 {
            let (ptr, mapped) = Self::allocate(cap, self.huge, false)?;
            self.ptr = ptr;
            self.mapped = mapped;
        } else {
            // Not a mapping: one grows only into a larger one, which is a mapping again.
            debug_assert_eq!(self.mapped, 0);
            // SAFETY: the allocation was made by the global allocator with
            // `Layout::array::<T>(self.cap)`; the new size is not zero and fits a layout.
            let ptr = unsafe {
                alloc::alloc::realloc(
                    self.ptr.as_ptr().cast(),
                    Self::layout(self.cap),
                    layout.size(),
                )
            };
            self.ptr = NonNull::new(ptr)?.cast();
        }
        self.cap = cap;
        Some(())
    }

    /// The layout of a global allocation of `cap` values (one that was made).
    fn layout(cap: usize) -> Layout {
        Layout::array::<T>(cap).expect("the layout of an allocation made")
    }

    /// The same memory as an array of `U`, without copying (the atomic and plain filters
    /// convert into each other this way).
    ///
    /// # Safety
    /// `U` must have the size and alignment of `T` (checked at compile time) and every value
    /// of `T` in the array must, as bytes, be a valid `U`; the caller owns `self`, so nothing
    /// else refers to the values.
    pub(crate) unsafe fn cast<U>(self) -> PageBuf<U> {
        const {
            assert!(
                core::mem::size_of::<T>() == core::mem::size_of::<U>()
                    && core::mem::align_of::<T>() == core::mem::align_of::<U>()
            )
        };
        let me = ManuallyDrop::new(self);
        PageBuf {
            ptr: me.ptr.cast(),
            len: me.len,
            cap: me.cap,
            mapped: me.mapped,
            huge: me.huge,
            _owns: PhantomData,
        }
    }
}

impl<T> Drop for PageBuf<T> {
    fn drop(&mut self) {
        // The values need no drop (`PLAIN`); only the memory is given back.
        if self.mapped > 0 {
            // SAFETY: `ptr` starts our mapping of `mapped` bytes, not used again.
            unsafe { map::unmap(self.ptr.cast(), self.mapped) };
        } else if self.cap > 0 {
            // SAFETY: the global allocator made this memory with `Layout::array::<T>(cap)`;
            // it is not used again.
            unsafe { alloc::alloc::dealloc(self.ptr.as_ptr().cast(), Self::layout(self.cap)) };
        }
    }
}

impl<T> core::ops::Deref for PageBuf<T> {
    type Target = [T];

    #[inline]
    fn deref(&self) -> &[T] {
        // SAFETY: `ptr` is aligned, not null, and its first `len` values are initialised and
        // owned by `self`, borrowed here for as long as `self` is.
        unsafe { core::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T> core::ops::DerefMut for PageBuf<T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`, and `&mut self` makes the borrow unique.
        unsafe { core::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Copy> Clone for PageBuf<T> {
    /// An array of the same kind: a large one with huge pages wanted is a fresh advised
    /// mapping, written once by the copy.
    fn clone(&self) -> PageBuf<T> {
        let Some(mut out) = Self::with_capacity(self.len, self.huge) else {
            alloc::alloc::handle_alloc_error(Self::layout(self.len));
        };
        // SAFETY: `out` has room for `len` values, in memory apart from `self`'s; they are
        // `Copy`, so a copy of their bytes is a copy of them, and all `len` are then
        // initialised.
        unsafe {
            core::ptr::copy_nonoverlapping(self.ptr.as_ptr(), out.ptr.as_ptr(), self.len);
            out.len = self.len;
        }
        out
    }
}

impl<T: PartialEq> PartialEq for PageBuf<T> {
    fn eq(&self, other: &PageBuf<T>) -> bool {
        **self == **other
    }
}

impl<T: Eq> Eq for PageBuf<T> {}

impl<T: core::fmt::Debug> core::fmt::Debug for PageBuf<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// Anonymous mappings: Linux with `std` (for `libc`), not under Miri.
#[cfg(all(feature = "std", target_os = "linux", not(miri)))]
mod map {
    use super::HUGE_PAGE_BYTES;
    use core::ptr::NonNull;
    use libc::c_void;

    /// Whether arrays can have mappings of their own here.
    pub(super) const AVAILABLE: bool = true;

    /// A fresh private anonymous mapping of `bytes` rounded up to whole huge pages, 2 MiB
    /// aligned, advised `MADV_HUGEPAGE`, untouched (it reads as zeros): its start and length.
    /// `None` when the kernel refuses it.
    pub(super) fn map(bytes: usize) -> Option<(NonNull<u8>, usize)> {
        let len = bytes.checked_next_multiple_of(HUGE_PAGE_BYTES)?;
        // A page-aligned mapping 2 MiB longer holds a 2 MiB-aligned range of `len`.
        let over = len.checked_add(HUGE_PAGE_BYTES)?;
        // SAFETY: a new private anonymous mapping where the kernel chooses; it replaces
        // nothing.
        let raw = unsafe {
            libc::mmap(
                core::ptr::null_mut(),
                over,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if raw == libc::MAP_FAILED {
            return None;
        }
        let head = (raw as usize).next_multiple_of(HUGE_PAGE_BYTES) - raw as usize;
        let tail = over - head - len;
        let start = raw.cast::<u8>().wrapping_add(head);
        // SAFETY: the head `[raw, start)` and the tail `[start + len, raw + over)` are
        // page-aligned parts of the mapping just made (`raw` is page aligned, `start`, `len`
        // and `over` multiples of 2 MiB), outside the range kept, and nothing refers to them.
        // A failed unmap would only leave untouched address space mapped. The advice comes
        // before the first touch, so each page faulted in is a huge page when the kernel has
        // one; a refusal (THP compiled out) leaves ordinary pages, so its result is ignored.
        unsafe {
            if head > 0 {
                libc::munmap(raw, head);
            }
            if tail > 0 {
                libc::munmap(start.wrapping_add(len).cast::<c_void>(), tail);
            }
            libc::madvise(start.cast::<c_void>(), len, libc::MADV_HUGEPAGE);
        }
        Some((NonNull::new(start)?, len))
    }

    /// Unmaps a mapping made by [`map`].
    ///
    /// # Safety
    /// `start` and `len` must be a mapping [`map`] returned (or one [`move_pages`] filled),
    /// not used afterwards.
    pub(super) unsafe fn unmap(start: NonNull<u8>, len: usize) {
        // SAFETY: by the caller's promise, the range is a whole mapping of ours, unused after.
        unsafe { libc::munmap(start.as_ptr().cast(), len) };
    }

    /// Moves the pages of the mapping `[old, old + old_len)` to the start of the larger
    /// mapping `new` (from [`map`]), replacing what was there, without copying data: the
    /// kernel moves the page-table entries (whole 2 MiB ones, as both are 2 MiB aligned), and
    /// the old range is unmapped. `false` when the kernel refuses (nothing changed then).
    ///
    /// # Safety
    /// Both must be mappings of ours from [`map`], apart, the new one longer than `old_len`;
    /// nothing may refer into `old` afterwards, nor into the new one's first `old_len` bytes
    /// before this.
    pub(super) unsafe fn move_pages(old: NonNull<u8>, old_len: usize, new: NonNull<u8>) -> bool {
        // SAFETY: by the caller's promise, the old range is a whole mapping of ours and the
        // target range `[new, new + old_len)` lies inside another mapping of ours, unused.
        let moved = unsafe {
            libc::mremap(
                old.as_ptr().cast(),
                old_len,
                old_len,
                libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED,
                new.as_ptr().cast::<c_void>(),
            )
        };
        moved != libc::MAP_FAILED
    }
}

/// No mappings of our own: every array is the global allocator's.
#[cfg(not(all(feature = "std", target_os = "linux", not(miri))))]
mod map {
    use core::ptr::NonNull;

    /// Whether arrays can have mappings of their own here.
    pub(super) const AVAILABLE: bool = false;

    /// Never called (`AVAILABLE` is false).
    pub(super) fn map(_: usize) -> Option<(NonNull<u8>, usize)> {
        None
    }

    /// Never called: no array is a mapping here.
    ///
    /// # Safety
    /// None needed; it does nothing.
    pub(super) unsafe fn unmap(_: NonNull<u8>, _: usize) {}

    /// Never called: no array is a mapping here.
    ///
    /// # Safety
    /// None needed; it does nothing.
    pub(super) unsafe fn move_pages(_: NonNull<u8>, _: usize, _: NonNull<u8>) -> bool {
        false
    }
}

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

    /// The global allocator's path, small enough for Miri: reserve, push, grow by `realloc`,
    /// clone, cast and free.
    #[test]
    fn small_arrays_grow_by_reallocation() {
        let mut v = PageBuf::<u64>::new(true);
        for round in 0..4u64 {
            v.try_reserve_exact(v.len() + 3).unwrap();
            while v.len() < v.capacity() {
                v.push(round);
            }
        }
        assert_eq!(v.len(), 3 * 15);
        assert!(!v.is_mapped());
        let c = v.clone();
        // SAFETY: i64 has u64's size, alignment and every bit pattern.
        let d = unsafe { v.cast::<i64>() };
        assert_eq!(
            d.iter().map(|&x| x as u64).collect::<alloc::vec::Vec<_>>(),
            *c
        );
        // SAFETY: zero is a valid u64.
        let z = unsafe { PageBuf::<u64>::zeroed(5, true) }.unwrap();
        assert_eq!(*z, [0; 5]);
        assert_eq!(
            alloc::format!("{:?}", PageBuf::<u64>::collect([1u64].into_iter(), false)),
            "[1]"
        );
    }

    #[test]
    fn arrays_are_zero_droppable_clonable_and_grow() {
        for len in [0usize, 1, 1000, (HUGE_PAGES_FROM_BYTES / 8) + 3] {
            for huge in [false, true] {
                // SAFETY: zero is a valid u64.
                let mut v = unsafe { PageBuf::<u64>::zeroed(len, huge) }.unwrap();
                assert_eq!(v.len(), len);
                assert!(v.iter().all(|&x| x == 0));
                assert_eq!(v.is_mapped(), huge && map::AVAILABLE && len > 1000);
                if v.is_mapped() {
                    assert!((v.as_ptr() as usize).is_multiple_of(HUGE_PAGE_BYTES));
                }
                v.iter_mut().for_each(|x| *x = 1);
                let c = v.clone();
                assert_eq!(c.is_mapped(), v.is_mapped());
                drop(v);
                assert!(c.iter().all(|&x| x == 1));
                // SAFETY: i64 has u64's size, alignment and every bit pattern.
                let d = unsafe { c.cast::<i64>() };
                assert!(d.iter().all(|&x| x == 1));
            }
        }
        // Growth across the threshold: global allocation, reallocation, mapping, moved pages.
        for huge in [false, true] {
            let mut v = PageBuf::<u64>::new(huge);
            let mut n = 0u64;
            while v.len() < HUGE_PAGES_FROM_BYTES / 2 {
                let more = v.len().max(1000);
                v.try_reserve_exact(more).unwrap();
                assert_eq!(v.capacity(), v.len() + more);
                for _ in 0..more {
                    v.push(n);
                    n += 1;
                }
            }
            assert!(v.iter().enumerate().all(|(i, &x)| x == i as u64));
            assert_eq!(v.is_mapped(), huge && map::AVAILABLE);
            let c: PageBuf<u64> = PageBuf::collect(v.iter().copied(), huge);
            assert_eq!(c, v);
        }
    }
}
