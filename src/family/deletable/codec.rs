//! The deletable filter in the codec: the envelope (layout id 17), then the plain filter's
//! own encoding, then the collision bitmap.

use alloc::vec::Vec;

use crate::io::Read;
#[cfg(feature = "std")]
use crate::io::Write;

use super::{DeletableBloomFilter, MAX_REGION_SHIFT, MIN_REGION_SHIFT, num_regions};
use crate::codec::{
    Encoded, Envelope, HEADER_BYTES, Out, decode_slice, kind, read_exact_body, read_streamed,
    read_words, words_le,
};
use crate::error::Error;
use crate::filter::BloomFilter;
use crate::hashing::KeyHash;
use crate::layout::MAX_BLOCKS;

impl DeletableBloomFilter {
    /// Bytes of this filter's encoding.
    ///
    /// ```
    /// let f = blockbloom::DeletableBloomFilter::with_capacity(1000, 0.01)?;
    /// assert_eq!(f.to_bytes().len(), f.encoded_len());
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn encoded_len(&self) -> usize {
        <Self as Encoded>::encoded_len(self)
    }

    /// The filter in the format family (layout id 17, `docs/FORMAT.md`): the envelope, the
    /// plain filter's own encoding (its blocks stay 64-byte aligned), then the bitmap.
    ///
    /// ```
    /// use blockbloom::DeletableBloomFilter;
    ///
    /// let mut f = DeletableBloomFilter::with_capacity(1000, 0.01)?;
    /// f.insert_batch(&[1u64, 2, 3]);
    /// let g = DeletableBloomFilter::from_bytes(&f.to_bytes())?;
    /// assert_eq!(f, g);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn to_bytes(&self) -> Vec<u8> {
        <Self as Encoded>::to_bytes(self)
    }

    /// Writes [`to_bytes`](Self::to_bytes) to `w`.
    ///
    /// ```
    /// let f = blockbloom::DeletableBloomFilter::with_capacity(100, 0.01)?;
    /// let mut out = Vec::new();
    /// f.write_to(&mut out)?;
    /// assert_eq!(out, f.to_bytes());
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::Io`] if `w` fails.
    #[cfg(feature = "std")]
    pub fn write_to<W: Write>(&self, w: W) -> Result<(), Error> {
        <Self as Encoded>::write_to(self, w)
    }

    /// Decodes exactly one deletable filter from `bytes`.
    ///
    /// ```
    /// use blockbloom::{DeletableBloomFilter, BloomFilter};
    ///
    /// let plain = BloomFilter::with_capacity(100, 0.01)?.to_bytes();
    /// assert!(matches!(
    ///     DeletableBloomFilter::from_bytes(&plain),
    ///     Err(blockbloom::Error::WrongKind { .. })
    /// ));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    ///
    /// # Errors
    /// The envelope's errors (`BadMagic`, `WrongKind`, `Truncated`, `ChecksumMismatch`, ...),
    /// the inner plain filter's, and [`Error::InvalidHeader`] when the region size, the
    /// bitmap's length or its counts disagree. Never a panic.
    pub fn from_bytes(bytes: &[u8]) -> Result<DeletableBloomFilter, Error> {
        <Self as Encoded>::from_bytes(bytes)
    }

    /// Reads exactly one deletable filter from `r` (which may hold more after it).
    ///
    /// ```
    /// let f = blockbloom::DeletableBloomFilter::with_capacity(100, 0.01)?;
    /// let g = blockbloom::DeletableBloomFilter::read_from(&f.to_bytes()[..])?;
    /// assert_eq!(f, g);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`from_bytes`](Self::from_bytes), plus [`Error::Io`].
    #[cfg(feature = "std")]
    pub fn read_from<R: Read>(r: R) -> Result<DeletableBloomFilter, Error> {
        <Self as Encoded>::read_from(r)
    }
}

impl Encoded for DeletableBloomFilter {
    const KIND: u8 = kind::DELETABLE;
    const HASHES: &'static [KeyHash] = &KeyHash::ALL;

    fn envelope(&self) -> Envelope {
        Envelope {
            kind: kind::DELETABLE,
            param: self.region_shift as u8,
            hash: self.filter.key_hash(),
            seed: self.filter.seed(),
            fields: [self.num_regions(), self.collided_regions(), 0],
        }
    }

    fn body_len(&self) -> usize {
        self.filter.encoded_len() + self.collided.len() * 8
    }

    fn body(&self, out: &mut Out<'_>) -> Result<(), Error> {
        // The plain filter's own encoding (its blocks stay 64-byte aligned), then the bitmap.
        self.filter.encode_to(out)?;
        words_le(&self.collided, out)
    }

    fn from_parts(env: Envelope, body: &[u8]) -> Result<DeletableBloomFilter, Error> {
        decode_slice(body, |len, r| decode(env, len, r))
    }

    /// Reads the inner filter straight into its blocks and the bitmap into its words: memory
    /// is the filter plus one chunk, never a copy of the body.
    fn read_from<R: Read>(r: R) -> Result<DeletableBloomFilter, Error> {
        read_streamed::<Self, R>(r, |env, len, body| decode(env, len, body))
    }
}

/// Decodes a body of `body_len` bytes (as the header declares) from `body`.
fn decode<R: Read>(
    env: Envelope,
    body_len: u64,
    body: &mut R,
) -> Result<DeletableBloomFilter, Error> {
    let shift = env.param as u32;
    if !(MIN_REGION_SHIFT..=MAX_REGION_SHIFT).contains(&shift) {
        return Err(Error::InvalidHeader(
            "deletable filter: region size is not 2^3..=2^9 bits",
        ));
    }
    if env.fields[2] != 0 {
        return Err(Error::InvalidHeader("deletable filter: reserved field"));
    }
    if body_len < HEADER_BYTES as u64 {
        return Err(Error::InvalidHeader(
            "deletable filter: body shorter than a plain filter",
        ));
    }
    let mut inner_head = [0u8; HEADER_BYTES];
    read_exact_body(body, &mut inner_head)?;
    let num_blocks = u64::from_le_bytes(inner_head[24..32].try_into().expect("8 bytes"));
    if num_blocks == 0 || num_blocks > MAX_BLOCKS {
        return Err(Error::InvalidHeader(
            "deletable filter: block count outside 1..=2^32",
        ));
    }
    let inner_len = HEADER_BYTES as u128 + num_blocks as u128 * 64;
    let regions = num_regions(num_blocks, shift);
    let bitmap_words = regions.div_ceil(64);
    if inner_len + bitmap_words as u128 * 8 != body_len as u128 {
        return Err(Error::InvalidHeader(
            "deletable filter: body length is not filter plus bitmap",
        ));
    }
    let filter = <BloomFilter as Encoded>::read_from((&inner_head[..]).chain(&mut *body))?;
    if filter.seed() != env.seed {
        return Err(Error::InvalidHeader(
            "deletable filter: inner seed differs from the header's",
        ));
    }
    if filter.key_hash() != env.hash {
        return Err(Error::InvalidHeader(
            "deletable filter: inner hash id differs from the header's",
        ));
    }
    if env.fields[0] != regions {
        return Err(Error::InvalidHeader(
            "deletable filter: region count does not match the blocks",
        ));
    }
    let collided = read_words(body, bitmap_words, 0)?;
    if !regions.is_multiple_of(64) && collided.last().is_some_and(|&w| w >> (regions % 64) != 0) {
        return Err(Error::InvalidHeader(
            "deletable filter: bitmap bits past the last region",
        ));
    }
    let f = DeletableBloomFilter {
        filter,
        collided,
        region_shift: shift,
    };
    if f.collided_regions() != env.fields[1] {
        return Err(Error::InvalidHeader(
            "deletable filter: collided-region count does not match the bitmap",
        ));
    }
    Ok(f)
}

crate::codec::try_to_bytes!(DeletableBloomFilter);
