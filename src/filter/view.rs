//! [`FilterRef`]: a read-only filter over borrowed blocks (its constructor, which validates
//! the encoded bytes, is in [`crate::format`]).

use std::hash::Hash;

use super::{BatchKey, BloomFilter, Meta};
use crate::Isa;
use crate::hashing::{hash_bytes, hash_key};
use crate::kernel::{Keys, Sink};
use crate::layout::{Block, Layout, block_index, contains_scalar};

/// A read-only filter over borrowed bytes in the [format](crate::format), for memory-mapped
/// files: the header and checksum are validated once, then queries run on the SIMD kernels
/// directly from the borrowed blocks, with no copy.
///
/// The blocks must be 64-byte aligned in memory, which they are whenever the buffer starts
/// 64-byte aligned (a memory map starts on a page). A misaligned buffer is an
/// [`Error::Misaligned`], never a silent copy: use [`BloomFilter::from_bytes`] to copy.
/// Little-endian targets only (elsewhere `from_bytes` is an [`Error::InvalidHeader`]).
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
#[derive(Clone, Copy)]
pub struct FilterRef<'a> {
    blocks: &'a [Block],
    meta: Meta,
}

impl<'a> FilterRef<'a> {
    /// A view of `blocks` with `meta` (which must describe them).
    pub(crate) fn from_parts(blocks: &'a [Block], meta: Meta) -> FilterRef<'a> {
        assert_eq!(blocks.len() as u64, meta.shape.num_blocks, "view shape");
        FilterRef { blocks, meta }
    }

    /// Whether the key may have been inserted.
    pub fn contains<K: Hash + ?Sized>(&self, key: &K) -> bool {
        self.contains_hash(hash_key(key, self.meta.seed))
    }

    /// Whether a raw byte string may have been inserted.
    pub fn contains_bytes(&self, bytes: &[u8]) -> bool {
        self.contains_hash(hash_bytes(bytes, self.meta.seed))
    }

    /// Whether a pre-computed hash may have been inserted.
    pub fn contains_hash(&self, hash: u64) -> bool {
        let s = &self.meta.shape;
        contains_scalar(
            &self.blocks[block_index(hash, s.num_blocks)],
            s.layout,
            hash as u32,
            s.probes(),
        )
    }

    /// Answers a batch of integer keys into `out`, on the SIMD kernels.
    ///
    /// # Panics
    /// If `out.len() != keys.len()`.
    pub fn contains_batch<K: BatchKey>(&self, keys: &[K], out: &mut [bool]) {
        self.meta.kernel.query(
            &self.meta.shape,
            self.blocks,
            K::as_keys(keys).0,
            Sink::Each(out),
        )
    }

    /// How many keys of the batch may have been inserted.
    pub fn count_batch<K: BatchKey>(&self, keys: &[K]) -> usize {
        let mut n = 0;
        self.meta.kernel.query(
            &self.meta.shape,
            self.blocks,
            K::as_keys(keys).0,
            Sink::Count(&mut n),
        );
        n
    }

    /// Answers a batch of pre-computed hashes into `out`.
    ///
    /// # Panics
    /// If `out.len() != hashes.len()`.
    pub fn contains_hash_batch(&self, hashes: &[u64], out: &mut [bool]) {
        self.meta.kernel.query(
            &self.meta.shape,
            self.blocks,
            Keys::Hashes(hashes),
            Sink::Each(out),
        )
    }

    /// An owned copy.
    pub fn to_filter(&self) -> BloomFilter {
        BloomFilter::from_parts(self.blocks.to_vec(), self.meta)
    }

    /// The borrowed blocks.
    pub fn blocks(&self) -> &'a [Block] {
        self.blocks
    }

    /// Number of 512-bit blocks.
    pub fn num_blocks(&self) -> u64 {
        self.meta.shape.num_blocks
    }

    /// Bits set per key.
    pub fn probes(&self) -> u32 {
        self.meta.probes()
    }

    /// The block layout.
    pub fn layout(&self) -> Layout {
        self.meta.shape.layout
    }

    /// The hash seed.
    pub fn seed(&self) -> u64 {
        self.meta.seed
    }

    /// The capacity stored in the header.
    pub fn capacity(&self) -> u64 {
        self.meta.capacity
    }

    /// The target false-positive rate stored in the header, if any.
    pub fn target_fpr(&self) -> Option<f64> {
        self.meta.target_fpr
    }

    /// The kernel tier the batch queries run on.
    pub fn isa(&self) -> Isa {
        self.meta.kernel.isa()
    }
}

impl std::fmt::Debug for FilterRef<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FilterRef")
            .field("num_blocks", &self.num_blocks())
            .field("layout", &self.layout())
            .field("probes", &self.probes())
            .field("seed", &self.seed())
            .finish_non_exhaustive()
    }
}
