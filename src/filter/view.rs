//! [`FilterRef`]: a read-only filter over borrowed blocks (its constructor, which validates
//! the encoded bytes, is in [`crate::format`]).

use super::{BloomFilter, Filter, Meta};
use crate::layout::Block;
use crate::memory::PageBuf;

/// A read-only filter over borrowed bytes in the [format](crate::format), for memory-mapped
/// files: the header and checksum are validated once, then queries run on the SIMD kernels
/// directly from the borrowed blocks, with no copy.
///
/// The blocks must be 64-byte aligned in memory, which they are whenever the buffer starts
/// 64-byte aligned (a memory map starts on a page). A misaligned buffer is an
/// [`Error::Misaligned`](crate::Error::Misaligned), never a silent copy: use [`BloomFilter::from_bytes`] to copy.
/// Little-endian targets only (elsewhere `from_bytes` is an [`Error::InvalidHeader`](crate::Error::InvalidHeader)).
///
/// ```
/// use blockbloom::{BloomFilter, FilterRef};
///
/// let mut f = BloomFilter::with_capacity(100, 0.01)?;
/// f.insert(&42u64);
/// // An aligned buffer, as a memory map would give.
/// #[repr(C, align(64))]
/// struct Aligned([u8; 4096]);
/// let mut buf = Box::new(Aligned([0; 4096]));
/// let bytes = f.to_bytes();
/// assert!(bytes.len() <= 4096);
/// buf.0[..bytes.len()].copy_from_slice(&bytes);
/// let view = FilterRef::from_bytes(&buf.0[..bytes.len()])?;
/// assert!(view.contains(&42u64));
/// # Ok::<(), blockbloom::Error>(())
/// ```
///
/// Pages: a file mapping is backed by the page cache in 4 KiB pages (transparent huge pages
/// cover anonymous memory; file-backed huge pages need filesystem support few setups have),
/// so a large view pays a TLB miss and page walk per probe that an owned filter on huge pages
/// does not (see [`memory`](crate::memory); [`huge_page_bytes`](Filter::huge_page_bytes)
/// says what the view got). For a hot, large filter, load it owned with
/// [`BloomFilter::from_bytes`] or [`BloomFilter::read_from`], which ask for huge pages.
///
/// The queries and accessors are [`Filter`]'s, shared with [`BloomFilter`] and
/// [`AtomicBloomFilter`](crate::AtomicBloomFilter).
///
/// `Send` and `Sync`: it borrows read-only bytes, so any number of threads may query it.
pub type FilterRef<'a> = Filter<&'a [Block]>;

impl<'a> FilterRef<'a> {
    /// A view of `blocks` with `meta` (which must describe them).
    pub(crate) fn from_parts(blocks: &'a [Block], meta: Meta) -> FilterRef<'a> {
        assert_eq!(blocks.len() as u64, meta.shape.num_blocks, "view shape");
        Filter {
            store: blocks,
            meta,
        }
    }

    /// An owned copy.
    pub fn to_filter(&self) -> BloomFilter {
        BloomFilter::from_parts(
            PageBuf::collect(self.store.iter().copied(), true),
            self.meta,
        )
    }

    /// The borrowed blocks.
    pub fn blocks(&self) -> &'a [Block] {
        self.store
    }
}

impl core::fmt::Debug for FilterRef<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("FilterRef")
            .field("num_blocks", &self.num_blocks())
            .field("layout", &self.layout())
            .field("probes", &self.probes())
            .field("seed", &self.seed())
            .finish_non_exhaustive()
    }
}
