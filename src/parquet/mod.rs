//! Parquet's split block Bloom filter, byte-compatible with the format and run on this
//! crate's SIMD kernels.
//!
//! Apache Parquet stores an optional Bloom filter per column chunk, specified in the
//! parquet-format repository's `BloomFilter.md` ("Split Block Bloom Filter", SBBF). Its
//! layout differs from [`BloomFilter`](crate::BloomFilter)'s, so it has its own type,
//! [`SplitBlockFilter`]:
//!
//! * The bitset is an array of **256-bit blocks**, each eight 32-bit words, stored as
//!   little-endian words; its length is a multiple of 32 bytes (writers use a power of two
//!   between [`BITSET_MIN_BYTES`] and [`BITSET_MAX_BYTES`]).
//! * A value's hash is **XXH64 with seed 0 of its plain encoding**: 4 little-endian bytes for
//!   `INT32` (and `FLOAT`'s bits), 8 for `INT64` (and `DOUBLE`), the bytes themselves for
//!   `BYTE_ARRAY` and `FIXED_LEN_BYTE_ARRAY`, one byte for `BOOLEAN` ([`ParquetValue`]).
//!   Keys here follow Parquet's rules on every path of [`SplitBlockFilter`] (single value,
//!   batch, Arrow), not the crate's [`Key`](crate::Key): a value is its plain encoding, so a
//!   `str` is its bytes and an `i32` is 4 bytes, as every Parquet engine hashes them.
//! * The **block** is picked by the high 32 bits of the hash, by multiply-shift:
//!   `((hash >> 32) * num_blocks) >> 32`.
//! * The **mask** sets one bit in each of the block's eight words, from the low 32 bits `lo`:
//!   bit `(lo * SALT[i]) >> 27` (wrapping 32-bit multiply) of word `i`, with the spec's eight
//!   [`SALT`] constants. A value may be present when all eight bits are set.
//!
//! [`SplitBlockFilter::as_bitset`] is exactly the bytes a Parquet file stores after the
//! filter's Thrift header, and [`SplitBlockFilter::from_bitset`] takes them back; the
//! crate's tests check both against the reference implementation, the `parquet` crate's
//! `bloom_filter::Sbbf`. With the `parquet` cargo feature, `read_column_filter` reads a
//! column's filter out of a Parquet file; with the `arrow` feature, `insert_array` and
//! `contains_array` take Arrow arrays, hashed as a Parquet writer hashes the column's values.
//!
//! Batches run on the active kernel tier ([`Isa::active`]): a block is one eight-lane vector,
//! so insert is a multiply, a shift, a variable shift and an `or`, and a query the same with a
//! test; batches of filters larger than the cache prefetch their blocks. Every tier gives the
//! same bits and answers.
//!
//! ```
//! use blockbloom::parquet::SplitBlockFilter;
//!
//! // What a Parquet writer allocates for 10,000 distinct values at 1% false positives.
//! let mut f = SplitBlockFilter::new_with_ndv_fpp(10_000, 0.01)?;
//! f.insert(&42i64);            // an INT64 column value
//! f.insert("Paris");           // a BYTE_ARRAY (string) column value
//! f.insert_batch(&[1i64, 2, 3]);
//! assert!(f.contains(&42i64) && f.contains("Paris") && f.contains(&2i64));
//!
//! // The bytes a Parquet file stores, and back.
//! let g = SplitBlockFilter::from_bitset(f.as_bitset())?;
//! assert!(g.contains(&3i64));
//! # Ok::<(), blockbloom::Error>(())
//! ```

// Without `std`, `f64` lacks `ln`, `exp`, ... (with it, or in tests, std's own are found).
#[cfg(not(any(feature = "std", test)))]
use crate::math::F64Math as _;

use alloc::string::String;
use alloc::vec::Vec;

use crate::error::Error;
use crate::isa::Isa;
use crate::memory::PageBuf;

#[cfg(any(feature = "arrow-59", feature = "arrow-60"))]
mod arrow;
mod kernel;

use kernel::{Block, Kernel, Sink, SplitKernel, block_index, contains_scalar, insert_scalar};

/// The eight salt constants of the Parquet split block Bloom filter: word `i` of a block gets
/// bit `(lo * SALT[i]) >> 27` of a value whose hash has low half `lo`.
///
/// ```
/// assert_eq!(blockbloom::parquet::SALT[0], 0x47b6137b);
/// assert!(blockbloom::parquet::SALT.iter().all(|s| s % 2 == 1));
/// ```
pub const SALT: [u32; 8] = kernel::SALT;

/// Bytes in one block (eight 32-bit words).
///
/// ```
/// assert_eq!(blockbloom::parquet::BLOCK_BYTES, 32);
/// ```
pub const BLOCK_BYTES: usize = Block::BYTES;

/// The smallest bitset a Parquet writer makes (one block), as in the `parquet` crate.
///
/// ```
/// assert_eq!(blockbloom::parquet::BITSET_MIN_BYTES, 32);
/// ```
pub const BITSET_MIN_BYTES: usize = 32;

/// The largest bitset a Parquet writer makes, and [`SplitBlockFilter::from_bitset`] accepts
/// (128 MiB), as in the `parquet` crate.
///
/// ```
/// assert_eq!(blockbloom::parquet::BITSET_MAX_BYTES, 128 << 20);
/// ```
pub const BITSET_MAX_BYTES: usize = 128 * 1024 * 1024;

/// XXH64 with seed 0 of `bytes`: the Parquet Bloom filter hash of a value whose plain
/// encoding is `bytes`.
///
/// ```
/// use blockbloom::parquet::hash_bytes;
/// assert_eq!(hash_bytes(b""), 0xef46db3751d8e999);
/// assert_eq!(hash_bytes(&7i64.to_le_bytes()), blockbloom::parquet::hash_u64(7));
/// ```
#[inline]
pub fn hash_bytes(bytes: &[u8]) -> u64 {
    xxhash_rust::xxh64::xxh64(bytes, 0)
}

/// The Parquet Bloom filter hash of an 8-byte value (`INT64`, or `DOUBLE`'s bits): XXH64 with
/// seed 0 of its 8 little-endian bytes.
///
/// ```
/// use blockbloom::parquet::{hash_bytes, hash_u64};
/// assert_eq!(hash_u64(u64::MAX), hash_bytes(&u64::MAX.to_le_bytes()));
/// ```
#[inline]
pub const fn hash_u64(value: u64) -> u64 {
    kernel::xxh64_u64(value)
}

/// The Parquet Bloom filter hash of a 4-byte value (`INT32`, or `FLOAT`'s bits): XXH64 with
/// seed 0 of its 4 little-endian bytes.
///
/// ```
/// use blockbloom::parquet::{hash_bytes, hash_u32};
/// assert_eq!(hash_u32(123), hash_bytes(&123u32.to_le_bytes()));
/// ```
#[inline]
pub const fn hash_u32(value: u32) -> u64 {
    kernel::xxh64_u32(value)
}

/// A value a Parquet Bloom filter can hold: hashed as XXH64 (seed 0) of its plain encoding,
/// exactly as Parquet writers hash column values.
///
/// | Rust type | Parquet physical type | bytes hashed |
/// | --- | --- | --- |
/// | `i32`, `u32` | `INT32` (also `INT_8/16`, `UINT_8/16/32`, `DATE`, ...) | 4, little-endian |
/// | `i64`, `u64` | `INT64` (also `UINT_64`, `TIMESTAMP`, ...) | 8, little-endian |
/// | `f32` / `f64` | `FLOAT` / `DOUBLE` | 4 / 8, IEEE bits little-endian |
/// | `bool` | `BOOLEAN` | 1 (`0` or `1`) |
/// | `str`, `String`, `[u8]`, `Vec<u8>`, `[u8; N]` | `BYTE_ARRAY`, `FIXED_LEN_BYTE_ARRAY` | the bytes |
///
/// Small integer columns are stored as `INT32`, so an `INT_16` value must be queried as an
/// `i32`, not an `i16`: no impl exists for the narrower types to avoid exactly that mistake.
///
/// ```
/// use blockbloom::parquet::{ParquetValue, hash_bytes};
///
/// assert_eq!(5i32.parquet_hash(), hash_bytes(&5i32.to_le_bytes()));
/// assert_eq!("abc".parquet_hash(), hash_bytes(b"abc"));
/// assert_eq!(1.5f64.parquet_hash(), hash_bytes(&1.5f64.to_le_bytes()));
/// assert_eq!(true.parquet_hash(), hash_bytes(&[1]));
/// ```
pub trait ParquetValue {
    /// XXH64 with seed 0 of this value's plain encoding.
    ///
    /// ```
    /// use blockbloom::parquet::ParquetValue;
    /// assert_eq!(7u64.parquet_hash(), blockbloom::parquet::hash_u64(7));
    /// ```
    fn parquet_hash(&self) -> u64;
}

impl ParquetValue for i32 {
    #[inline]
    fn parquet_hash(&self) -> u64 {
        hash_u32(*self as u32)
    }
}
impl ParquetValue for u32 {
    #[inline]
    fn parquet_hash(&self) -> u64 {
        hash_u32(*self)
    }
}
impl ParquetValue for i64 {
    #[inline]
    fn parquet_hash(&self) -> u64 {
        hash_u64(*self as u64)
    }
}
impl ParquetValue for u64 {
    #[inline]
    fn parquet_hash(&self) -> u64 {
        hash_u64(*self)
    }
}
impl ParquetValue for f32 {
    #[inline]
    fn parquet_hash(&self) -> u64 {
        hash_u32(self.to_bits())
    }
}
impl ParquetValue for f64 {
    #[inline]
    fn parquet_hash(&self) -> u64 {
        hash_u64(self.to_bits())
    }
}
impl ParquetValue for bool {
    #[inline]
    fn parquet_hash(&self) -> u64 {
        hash_bytes(&[*self as u8])
    }
}
impl ParquetValue for [u8] {
    #[inline]
    fn parquet_hash(&self) -> u64 {
        hash_bytes(self)
    }
}
impl<const N: usize> ParquetValue for [u8; N] {
    #[inline]
    fn parquet_hash(&self) -> u64 {
        hash_bytes(self)
    }
}
impl ParquetValue for Vec<u8> {
    #[inline]
    fn parquet_hash(&self) -> u64 {
        hash_bytes(self)
    }
}
impl ParquetValue for str {
    #[inline]
    fn parquet_hash(&self) -> u64 {
        hash_bytes(self.as_bytes())
    }
}
impl ParquetValue for String {
    #[inline]
    fn parquet_hash(&self) -> u64 {
        hash_bytes(self.as_bytes())
    }
}
impl<T: ParquetValue + ?Sized> ParquetValue for &T {
    #[inline]
    fn parquet_hash(&self) -> u64 {
        (**self).parquet_hash()
    }
}

/// Integer value types whose batches [`SplitBlockFilter::insert_batch`] and friends hash in
/// bulk: `i64`, `u64` (8-byte `INT64` values, hashed in SIMD lanes on the AVX-512 tier) and
/// `i32`, `u32` (4-byte `INT32` values). A batch gives the same bits as inserting each value
/// with [`SplitBlockFilter::insert`].
///
/// ```
/// use blockbloom::parquet::SplitBlockFilter;
///
/// let mut a = SplitBlockFilter::new_with_num_bytes(1024)?;
/// let mut b = a.clone();
/// a.insert_batch(&[-1i32, 7]);
/// b.insert(&-1i32);
/// b.insert(&7i32);
/// assert_eq!(a, b);
/// # Ok::<(), blockbloom::Error>(())
/// ```
pub trait BatchValue: Copy + ParquetValue + private::Sealed {
    #[doc(hidden)]
    fn hash_into(kernel: private::KernelRef, values: &[Self], out: &mut [u64]);
}

mod private {
    pub trait Sealed {}
    /// Opaque to users: the filter's kernel table.
    #[derive(Clone, Copy)]
    pub struct KernelRef(pub(super) &'static super::Kernel);
}

use private::KernelRef;

impl private::Sealed for i64 {}
impl private::Sealed for u64 {}
impl private::Sealed for i32 {}
impl private::Sealed for u32 {}

impl BatchValue for u64 {
    fn hash_into(kernel: KernelRef, values: &[u64], out: &mut [u64]) {
        kernel.0.xxh64_u64(values, out)
    }
}
impl BatchValue for i64 {
    fn hash_into(kernel: KernelRef, values: &[i64], out: &mut [u64]) {
        let mut buf = [0u64; CHUNK];
        for (v, o) in values.chunks(CHUNK).zip(out.chunks_mut(CHUNK)) {
            let b = &mut buf[..v.len()];
            for (b, &x) in b.iter_mut().zip(v) {
                *b = x as u64;
            }
            kernel.0.xxh64_u64(b, o);
        }
    }
}
impl BatchValue for u32 {
    fn hash_into(_: KernelRef, values: &[u32], out: &mut [u64]) {
        for (o, &v) in out.iter_mut().zip(values) {
            *o = hash_u32(v);
        }
    }
}
impl BatchValue for i32 {
    fn hash_into(_: KernelRef, values: &[i32], out: &mut [u64]) {
        for (o, &v) in out.iter_mut().zip(values) {
            *o = hash_u32(v as u32);
        }
    }
}

/// Values hashed per kernel call in the value batches.
const CHUNK: usize = 256;

/// The bitset size, in bytes, that the Parquet format's sizing rule (and the `parquet`
/// crate's `Sbbf::new_with_ndv_fpp`) gives for `ndv` distinct values at false-positive
/// probability `fpp`: `-8 * ndv / ln(1 - fpp^(1/8))` bits, in whole bytes, clamped to
/// [`BITSET_MIN_BYTES`]`..=`[`BITSET_MAX_BYTES`] and rounded up to a power of two.
///
/// # Errors
/// [`Error::InvalidFpr`] unless `0 < fpp < 1`. (The `parquet` crate also accepts `fpp = 0`,
/// for which the formula degenerates and it returns the minimum size.)
///
/// ```
/// use blockbloom::parquet::num_bytes_for_ndv_fpp;
/// assert_eq!(num_bytes_for_ndv_fpp(1_000_000, 0.01)?, 2 << 20);
/// assert_eq!(num_bytes_for_ndv_fpp(0, 0.5)?, 32);
/// assert!(num_bytes_for_ndv_fpp(10, 1.0).is_err());
/// # Ok::<(), blockbloom::Error>(())
/// ```
pub fn num_bytes_for_ndv_fpp(ndv: u64, fpp: f64) -> Result<usize, Error> {
    if !(fpp > 0.0 && fpp < 1.0) {
        return Err(Error::InvalidFpr(fpp));
    }
    // Exactly the reference's arithmetic, so the size matches to the byte: f64 bits,
    // truncated to an integer (saturating), then whole bytes.
    let bits = -8.0 * ndv as f64 / (1.0 - fpp.powf(1.0 / 8.0)).ln();
    Ok(round_num_bytes(bits as usize / 8))
}

/// Clamps to the writer's bounds and rounds up to a power of two, as the `parquet` crate does.
fn round_num_bytes(num_bytes: usize) -> usize {
    num_bytes
        .clamp(BITSET_MIN_BYTES, BITSET_MAX_BYTES)
        .next_power_of_two()
}

/// A Parquet split block Bloom filter: 256-bit blocks, eight bits per value, XXH64 hashes.
/// Byte-compatible with the format (see the [module docs](self)); batches run on the fastest
/// kernel tier of the CPU.
///
/// ```
/// use blockbloom::parquet::SplitBlockFilter;
///
/// let mut f = SplitBlockFilter::new_with_ndv_fpp(1000, 0.01)?;
/// let ids: Vec<i64> = (0..1000).collect();
/// f.insert_batch(&ids);
/// assert_eq!(f.count_batch(&ids), 1000);
/// assert!(!f.contains(&-5i64) || f.count_batch(&[-5i64]) == 1); // no false negatives
/// assert_eq!(f.num_bytes(), 2048);
/// # Ok::<(), blockbloom::Error>(())
/// ```
///
/// Single-value calls run the scalar reference inline; batch calls make one dispatched call
/// per batch (per chunk of values for the value batches).
///
/// `Send` and `Sync`: share it across threads for queries; inserts take `&mut self`.
#[derive(Clone)]
pub struct SplitBlockFilter {
    blocks: PageBuf<Block>,
    kernel: &'static Kernel,
}

impl SplitBlockFilter {
    /// A zeroed filter of the size a Parquet writer picks for `ndv` distinct values at
    /// false-positive probability `fpp` ([`num_bytes_for_ndv_fpp`]: the same number of bytes
    /// as the `parquet` crate's `Sbbf::new_with_ndv_fpp`), on the active kernel
    /// ([`Isa::active`]).
    ///
    /// ```
    /// let f = blockbloom::parquet::SplitBlockFilter::new_with_ndv_fpp(1_000_000, 0.01)?;
    /// assert_eq!(f.num_bytes(), 2 << 20);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidFpr`] unless `0 < fpp < 1`; a kernel error if `BLOCKBLOOM_ISA` is
    /// invalid.
    pub fn new_with_ndv_fpp(ndv: u64, fpp: f64) -> Result<SplitBlockFilter, Error> {
        let bytes = num_bytes_for_ndv_fpp(ndv, fpp)?;
        SplitBlockFilter::zeroed(bytes / BLOCK_BYTES, Kernel::get(Isa::active()?)?)
    }

    /// A zeroed filter of about `num_bytes` bytes, rounded like the `parquet` crate's
    /// `Sbbf::new_with_num_of_bytes`: clamped to
    /// [`BITSET_MIN_BYTES`]`..=`[`BITSET_MAX_BYTES`], then up to a power of two.
    ///
    /// ```
    /// use blockbloom::parquet::SplitBlockFilter;
    /// assert_eq!(SplitBlockFilter::new_with_num_bytes(1000)?.num_bytes(), 1024);
    /// assert_eq!(SplitBlockFilter::new_with_num_bytes(0)?.num_bytes(), 32);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    ///
    /// # Errors
    /// A kernel error if `BLOCKBLOOM_ISA` is invalid.
    pub fn new_with_num_bytes(num_bytes: usize) -> Result<SplitBlockFilter, Error> {
        let bytes = round_num_bytes(num_bytes);
        SplitBlockFilter::zeroed(bytes / BLOCK_BYTES, Kernel::get(Isa::active()?)?)
    }

    /// The filter whose bitset is `bitset`: the bytes a Parquet file stores after the
    /// filter's header (little-endian 32-bit words, 32 bytes per block).
    ///
    /// ```
    /// use blockbloom::parquet::SplitBlockFilter;
    ///
    /// let mut f = SplitBlockFilter::new_with_num_bytes(64)?;
    /// f.insert("x");
    /// let g = SplitBlockFilter::from_bitset(f.as_bitset())?;
    /// assert_eq!(f, g);
    /// assert!(SplitBlockFilter::from_bitset(&[0; 40]).is_err()); // not whole blocks
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidBitset`] if the length is zero, not a multiple of [`BLOCK_BYTES`], or
    /// above [`BITSET_MAX_BYTES`]; a kernel error if `BLOCKBLOOM_ISA` is invalid.
    pub fn from_bitset(bitset: &[u8]) -> Result<SplitBlockFilter, Error> {
        if bitset.is_empty() {
            return Err(Error::InvalidBitset {
                len: 0,
                why: "it is empty",
            });
        }
        if !bitset.len().is_multiple_of(BLOCK_BYTES) {
            return Err(Error::InvalidBitset {
                len: bitset.len(),
                why: "not a whole number of 32-byte blocks",
            });
        }
        if bitset.len() > BITSET_MAX_BYTES {
            return Err(Error::InvalidBitset {
                len: bitset.len(),
                why: "larger than 128 MiB",
            });
        }
        let kernel = Kernel::get(Isa::active()?)?;
        let n = bitset.len() / BLOCK_BYTES;
        let mut blocks = PageBuf::with_capacity(n, true).ok_or(Error::AllocationFailed {
            bytes: bitset.len() as u128,
        })?;
        for c in bitset.chunks_exact(BLOCK_BYTES) {
            blocks.push(Block::from_le_bytes(c.try_into().expect("32-byte chunk")));
        }
        Ok(SplitBlockFilter { blocks, kernel })
    }

    /// Zeroed blocks, on huge pages when large ([`crate::memory`]).
    fn zeroed(num_blocks: usize, kernel: &'static Kernel) -> Result<SplitBlockFilter, Error> {
        // SAFETY: a block of zero words is the empty block.
        let blocks = unsafe { PageBuf::<Block>::zeroed(num_blocks, true) }.ok_or(
            Error::AllocationFailed {
                bytes: (num_blocks * BLOCK_BYTES) as u128,
            },
        )?;
        Ok(SplitBlockFilter { blocks, kernel })
    }

    /// Bytes of the bitset the kernel backs with transparent huge pages now (see
    /// [`BloomFilter::huge_page_bytes`](crate::BloomFilter::huge_page_bytes)); `None` where
    /// the system cannot say.
    pub fn huge_page_bytes(&self) -> Option<u64> {
        crate::memory::huge_page_bytes(&self.blocks)
    }

    /// This filter on kernel tier `isa` (the bits are the same on every tier).
    ///
    /// ```
    /// use blockbloom::{Isa, parquet::SplitBlockFilter};
    /// let f = SplitBlockFilter::new_with_num_bytes(32)?.with_isa(Isa::Scalar)?;
    /// assert_eq!(f.isa(), Isa::Scalar);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::UnsupportedIsa`] if the CPU lacks the tier.
    pub fn with_isa(mut self, isa: Isa) -> Result<SplitBlockFilter, Error> {
        self.kernel = Kernel::get(isa)?;
        Ok(self)
    }

    /// The kernel tier the batch calls run on.
    ///
    /// ```
    /// let f = blockbloom::parquet::SplitBlockFilter::new_with_num_bytes(32)?;
    /// assert!(f.isa().is_supported());
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn isa(&self) -> Isa {
        self.kernel.isa()
    }

    /// The bitset, exactly as a Parquet file stores it: little-endian 32-bit words, 32 bytes
    /// per block.
    ///
    /// ```
    /// let mut f = blockbloom::parquet::SplitBlockFilter::new_with_num_bytes(32)?;
    /// assert_eq!(f.as_bitset(), &[0u8; 32][..]);
    /// f.insert(&1i64);
    /// assert_eq!(f.as_bitset().iter().map(|b| b.count_ones()).sum::<u32>(), 8);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn as_bitset(&self) -> &[u8] {
        // SAFETY: `Block` is `repr(C)`, 32 bytes of eight `u32` with no padding, so the
        // blocks are `len * 32` initialised bytes that any `u8` may view; the slice borrows
        // `self`. The words are stored little-endian, so these are Parquet's bytes on every
        // platform.
        unsafe {
            core::slice::from_raw_parts(
                self.blocks.as_ptr().cast::<u8>(),
                self.blocks.len() * BLOCK_BYTES,
            )
        }
    }

    /// The bitset as an owned vector ([`as_bitset`](Self::as_bitset), copied).
    ///
    /// ```
    /// let f = blockbloom::parquet::SplitBlockFilter::new_with_num_bytes(100)?;
    /// assert_eq!(f.to_bitset().len(), 128);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn to_bitset(&self) -> Vec<u8> {
        self.as_bitset().to_vec()
    }

    /// The bitset's size in bytes.
    ///
    /// ```
    /// let f = blockbloom::parquet::SplitBlockFilter::new_with_num_bytes(4096)?;
    /// assert_eq!(f.num_bytes(), 4096);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn num_bytes(&self) -> usize {
        self.blocks.len() * BLOCK_BYTES
    }

    /// The number of 256-bit blocks.
    ///
    /// ```
    /// let f = blockbloom::parquet::SplitBlockFilter::new_with_num_bytes(4096)?;
    /// assert_eq!(f.num_blocks(), 128);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn num_blocks(&self) -> usize {
        self.blocks.len()
    }

    /// The false-positive probability the current fill implies, `fill^8` (as the `parquet`
    /// crate's `Sbbf::estimated_fpp`): the chance that eight random bits are all set.
    ///
    /// ```
    /// let mut f = blockbloom::parquet::SplitBlockFilter::new_with_num_bytes(32)?;
    /// assert_eq!(f.estimated_fpp(), 0.0);
    /// f.insert(&1i64);
    /// assert_eq!(f.estimated_fpp(), (8.0f64 / 256.0).powi(8));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn estimated_fpp(&self) -> f64 {
        let ones: u64 = self
            .as_bitset()
            .iter()
            .map(|b| u64::from(b.count_ones()))
            .sum();
        (ones as f64 / (self.num_bytes() as f64 * 8.0)).powi(8)
    }

    /// Inserts a value (hashed as XXH64 of its plain encoding, [`ParquetValue`]).
    ///
    /// ```
    /// let mut f = blockbloom::parquet::SplitBlockFilter::new_with_num_bytes(1024)?;
    /// f.insert(&9i64);
    /// f.insert("nine");
    /// f.insert(&b"\x00\x01"[..]);
    /// assert!(f.contains(&9i64) && f.contains("nine") && f.contains(&b"\x00\x01"[..]));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    #[inline]
    pub fn insert<T: ParquetValue + ?Sized>(&mut self, value: &T) {
        self.insert_hash(value.parquet_hash())
    }

    /// Whether the value may have been inserted (no false negatives).
    ///
    /// ```
    /// let mut f = blockbloom::parquet::SplitBlockFilter::new_with_num_bytes(1024)?;
    /// f.insert(&1.5f64);
    /// assert!(f.contains(&1.5f64));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    #[inline]
    pub fn contains<T: ParquetValue + ?Sized>(&self, value: &T) -> bool {
        self.contains_hash(value.parquet_hash())
    }

    /// Inserts a value given its 64-bit XXH64 hash (as [`hash_bytes`] computes it).
    ///
    /// ```
    /// use blockbloom::parquet::{SplitBlockFilter, hash_bytes};
    /// let mut f = SplitBlockFilter::new_with_num_bytes(1024)?;
    /// f.insert_hash(hash_bytes(b"k"));
    /// assert!(f.contains("k"));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    #[inline]
    pub fn insert_hash(&mut self, hash: u64) {
        let i = block_index(hash, self.blocks.len() as u64);
        insert_scalar(&mut self.blocks[i], hash as u32);
    }

    /// Whether a value with this hash may have been inserted.
    ///
    /// ```
    /// use blockbloom::parquet::{SplitBlockFilter, hash_u64};
    /// let mut f = SplitBlockFilter::new_with_num_bytes(1024)?;
    /// f.insert(&3u64);
    /// assert!(f.contains_hash(hash_u64(3)));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    #[inline]
    pub fn contains_hash(&self, hash: u64) -> bool {
        let i = block_index(hash, self.blocks.len() as u64);
        contains_scalar(&self.blocks[i], hash as u32)
    }

    /// Inserts a batch of hashes on the filter's kernel tier.
    ///
    /// ```
    /// use blockbloom::parquet::{SplitBlockFilter, hash_u64};
    /// let mut f = SplitBlockFilter::new_with_num_bytes(1024)?;
    /// let hashes: Vec<u64> = (0..100).map(hash_u64).collect();
    /// f.insert_hash_batch(&hashes);
    /// assert!(f.contains(&42u64));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn insert_hash_batch(&mut self, hashes: &[u64]) {
        self.kernel.split_insert(&mut self.blocks, hashes);
    }

    /// For each hash, whether a value with it may have been inserted.
    ///
    /// # Panics
    /// If `out.len() != hashes.len()`.
    ///
    /// ```
    /// use blockbloom::parquet::{SplitBlockFilter, hash_u64};
    /// let mut f = SplitBlockFilter::new_with_num_bytes(1024)?;
    /// f.insert(&1u64);
    /// let mut out = [false; 2];
    /// f.contains_hash_batch(&[hash_u64(1), hash_u64(1)], &mut out);
    /// assert_eq!(out, [true, true]);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn contains_hash_batch(&self, hashes: &[u64], out: &mut [bool]) {
        self.kernel
            .split_query(&self.blocks, hashes, Sink::Each(out));
    }

    /// How many of the hashes may have been inserted.
    ///
    /// ```
    /// use blockbloom::parquet::{SplitBlockFilter, hash_u64};
    /// let mut f = SplitBlockFilter::new_with_num_bytes(1024)?;
    /// f.insert(&1u64);
    /// assert!(f.count_hash_batch(&[hash_u64(1), hash_u64(2)]) >= 1);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn count_hash_batch(&self, hashes: &[u64]) -> usize {
        let mut n = 0;
        self.kernel
            .split_query(&self.blocks, hashes, Sink::Count(&mut n));
        n
    }

    /// Inserts a batch of integer values (`i64`, `u64`, `i32`, `u32`; see [`BatchValue`]),
    /// hashed in chunks and inserted on the filter's kernel tier.
    ///
    /// ```
    /// let mut f = blockbloom::parquet::SplitBlockFilter::new_with_num_bytes(1024)?;
    /// f.insert_batch(&[10i64, 20, 30]);
    /// assert!(f.contains(&20i64));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn insert_batch<V: BatchValue>(&mut self, values: &[V]) {
        let mut hashes = [0u64; CHUNK];
        for chunk in values.chunks(CHUNK) {
            let h = &mut hashes[..chunk.len()];
            V::hash_into(KernelRef(self.kernel), chunk, h);
            self.kernel.split_insert(&mut self.blocks, h);
        }
    }

    /// For each value, whether it may have been inserted.
    ///
    /// # Panics
    /// If `out.len() != values.len()`.
    ///
    /// ```
    /// let mut f = blockbloom::parquet::SplitBlockFilter::new_with_num_bytes(1024)?;
    /// f.insert_batch(&[1u32, 2]);
    /// let mut out = [false; 2];
    /// f.contains_batch(&[2u32, 1], &mut out);
    /// assert_eq!(out, [true, true]);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn contains_batch<V: BatchValue>(&self, values: &[V], out: &mut [bool]) {
        assert_eq!(
            out.len(),
            values.len(),
            "output slice length must equal value count"
        );
        let mut hashes = [0u64; CHUNK];
        for (chunk, o) in values.chunks(CHUNK).zip(out.chunks_mut(CHUNK)) {
            let h = &mut hashes[..chunk.len()];
            V::hash_into(KernelRef(self.kernel), chunk, h);
            self.kernel.split_query(&self.blocks, h, Sink::Each(o));
        }
    }

    /// How many of the values may have been inserted.
    ///
    /// ```
    /// let mut f = blockbloom::parquet::SplitBlockFilter::new_with_num_bytes(1024)?;
    /// f.insert_batch(&[1i64, 2, 3]);
    /// assert!(f.count_batch(&[1i64, 2, 3, 4]) >= 3);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn count_batch<V: BatchValue>(&self, values: &[V]) -> usize {
        let mut hashes = [0u64; CHUNK];
        let mut n = 0;
        for chunk in values.chunks(CHUNK) {
            let h = &mut hashes[..chunk.len()];
            V::hash_into(KernelRef(self.kernel), chunk, h);
            self.kernel
                .split_query(&self.blocks, h, Sink::Count(&mut n));
        }
        n
    }
}

/// Two filters are equal when their bitsets are (whatever their kernel tiers).
///
/// ```
/// use blockbloom::{Isa, parquet::SplitBlockFilter};
/// let a = SplitBlockFilter::new_with_num_bytes(64)?;
/// assert_eq!(a, a.clone().with_isa(Isa::Scalar)?);
/// # Ok::<(), blockbloom::Error>(())
/// ```
impl PartialEq for SplitBlockFilter {
    fn eq(&self, other: &SplitBlockFilter) -> bool {
        self.blocks == other.blocks
    }
}

impl Eq for SplitBlockFilter {}

impl core::fmt::Debug for SplitBlockFilter {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SplitBlockFilter")
            .field("num_bytes", &self.num_bytes())
            .field("isa", &self.isa())
            .finish_non_exhaustive()
    }
}

#[cfg(feature = "parquet")]
mod reader;
#[cfg(feature = "parquet")]
pub use reader::{read_column_filter, read_column_filters};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unrolled_xxh64_matches_the_library() {
        for v in [0u64, 1, 42, u64::MAX, 0x0123_4567_89ab_cdef] {
            assert_eq!(hash_u64(v), hash_bytes(&v.to_le_bytes()));
            assert_eq!(hash_u32(v as u32), hash_bytes(&(v as u32).to_le_bytes()));
        }
    }

    #[test]
    fn every_tier_hashes_u64_alike() {
        let values: Vec<u64> = (0..1000u64).map(|i| i.wrapping_mul(0x9e37_79b9)).collect();
        let want: Vec<u64> = values.iter().map(|&v| hash_u64(v)).collect();
        for isa in Isa::supported() {
            let mut out = vec![0; values.len()];
            Kernel::get(isa).unwrap().xxh64_u64(&values, &mut out);
            assert_eq!(out, want, "{isa}");
        }
    }
}
