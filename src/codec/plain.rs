//! The plain filter in the codec: its header fields are the shape (bytes 24..48: block count,
//! capacity, target FPR), bytes 56..64 are zero (the block count implies the body's length),
//! and the body is the blocks, which [`FilterRef`] views in place.

use alloc::vec::Vec;

use crate::io::Read;
#[cfg(feature = "std")]
use crate::io::Write;

use super::envelope::{check_hash, preamble};
use super::{
    BLOCK_BYTES, Encoded, Envelope, HEADER_BYTES, NO_TARGET_FPR, Out, blocks_from_le, blocks_le,
    kind, read_framed, reserve_pages_geometric, split,
};
use crate::error::Error;
use crate::filter::BloomFilter;
use crate::filter::{FilterRef, Meta};
use crate::hashing::KeyHash;
use crate::isa::Isa;
use crate::kernel::Kernel;
use crate::layout::{Block, Layout, MAX_BLOCKS};
use crate::memory::PageBuf;

fn layout_id(layout: Layout) -> u8 {
    match layout {
        Layout::Sectors8x64 => kind::PLAIN_8X64,
        Layout::Sectors4x128 => kind::PLAIN_4X128,
        Layout::Sectors8x32 => kind::PLAIN_8X32,
    }
}

fn layout_of(id: u8) -> Option<Layout> {
    match id {
        kind::PLAIN_8X64 => Some(Layout::Sectors8x64),
        kind::PLAIN_4X128 => Some(Layout::Sectors4x128),
        kind::PLAIN_8X32 => Some(Layout::Sectors8x32),
        _ => None,
    }
}

/// The target FPR of the field's bits: exactly one encoding means "no target", so decoding
/// and re-encoding give the same bytes (found by the `decode_corrupted` fuzz target).
fn target_fpr(bits: u64) -> Result<Option<f64>, Error> {
    let fpr = f64::from_bits(bits);
    if bits == NO_TARGET_FPR {
        Ok(None)
    } else if fpr > 0.0 && fpr < 1.0 {
        Ok(Some(fpr))
    } else {
        Err(Error::InvalidHeader(
            "target false-positive rate neither in (0, 1) nor the canonical NaN",
        ))
    }
}

/// The metadata of a header that passed [`BloomFilter::parse_header`].
fn meta(env: &Envelope, kernel: &'static Kernel) -> Result<Meta, Error> {
    let [num_blocks, capacity, fpr] = env.fields;
    let layout = layout_of(env.kind).ok_or(Error::UnsupportedLayout(env.kind))?;
    Ok(Meta::new(
        num_blocks,
        layout,
        env.param as u32,
        env.seed,
        capacity,
        target_fpr(fpr)?,
        kernel,
    )
    .with_hash(env.hash))
}

/// Bytes of the encoding a header declares.
fn total_bytes(env: &Envelope) -> u128 {
    HEADER_BYTES as u128 + env.fields[0] as u128 * BLOCK_BYTES as u128
}

/// Room for a header's block count (checked against the bytes at hand by the caller), on
/// huge pages when large ([`crate::memory`]), or the typed error.
fn reserve_blocks(env: &Envelope) -> Result<PageBuf<Block>, Error> {
    usize::try_from(env.fields[0])
        .ok()
        .and_then(|n| PageBuf::with_capacity(n, true))
        .ok_or(Error::AllocationFailed {
            bytes: total_bytes(env),
        })
}

impl Encoded for BloomFilter {
    const KIND: u8 = kind::PLAIN_8X64;
    const STATES_LEN: bool = false;
    const HASHES: &'static [KeyHash] = &KeyHash::ALL;

    fn envelope(&self) -> Envelope {
        let m = self.meta();
        Envelope {
            kind: layout_id(m.shape.layout),
            param: m.probes() as u8,
            hash: m.shape.hash,
            seed: m.seed,
            fields: [
                m.shape.num_blocks,
                m.capacity,
                m.target_fpr.map_or(NO_TARGET_FPR, f64::to_bits),
            ],
        }
    }

    fn body_len(&self) -> usize {
        self.blocks().len() * BLOCK_BYTES
    }

    fn body(&self, out: &mut Out<'_>) -> Result<(), Error> {
        blocks_le(self.blocks(), out)
    }

    fn is_kind(id: u8) -> bool {
        layout_of(id).is_some()
    }

    /// The plain header's own checks: its fields are the shape, so they are checked here,
    /// before the body, and imply the body's length.
    fn parse_header(h: &[u8; HEADER_BYTES]) -> Result<(Envelope, u64), Error> {
        let mut env = preamble::<BloomFilter>(h)?;
        let layout = layout_of(env.kind).ok_or(Error::UnsupportedLayout(env.kind))?;
        if !layout.supports_probes(env.param as u32) {
            return Err(Error::InvalidHeader("probe count does not fit the layout"));
        }
        check_hash::<BloomFilter>(h, &mut env)?;
        if h[13..16] != [0; 3] || h[56..64] != [0; 8] {
            return Err(Error::InvalidHeader("reserved bytes are not zero"));
        }
        let [num_blocks, _, fpr] = env.fields;
        if num_blocks == 0 || num_blocks > MAX_BLOCKS {
            return Err(Error::InvalidHeader("block count outside 1..=2^32"));
        }
        target_fpr(fpr)?;
        Ok((env, num_blocks * BLOCK_BYTES as u64))
    }

    fn from_parts(env: Envelope, body: &[u8]) -> Result<BloomFilter, Error> {
        if body.len() as u128 != total_bytes(&env) - HEADER_BYTES as u128 {
            return Err(Error::InvalidHeader(
                "body length is not 64 bytes per block",
            ));
        }
        let kernel = Kernel::get(Isa::active()?)?;
        let meta = meta(&env, kernel)?;
        let mut blocks = reserve_blocks(&env)?;
        blocks_from_le(body, &mut blocks);
        // The filter module's constructor (inherent, not this trait's).
        Ok(BloomFilter::from_parts(blocks, meta))
    }

    /// Reads straight into the blocks, so memory does not double for a large filter.
    fn read_from<R: Read>(r: R) -> Result<BloomFilter, Error> {
        // The blocks grow as the bytes arrive (a header may lie about its size), doubling; once
        // large, each growth is a fresh mapping on huge pages into which the kernel moves the
        // pages already written (no copy, see `crate::memory`).
        let mut blocks = PageBuf::new(true);
        let env = read_framed::<BloomFilter, R>(r, |chunk, declared| {
            // Chunks are whole blocks: the body and the chunk size are multiples of 64.
            let declared_blocks = declared / BLOCK_BYTES as u64;
            reserve_pages_geometric(&mut blocks, chunk.len() / BLOCK_BYTES, declared_blocks)?;
            blocks_from_le(chunk, &mut blocks);
            Some(())
        })?;
        let kernel = Kernel::get(Isa::active()?)?;
        Ok(BloomFilter::from_parts(blocks, meta(&env, kernel)?))
    }
}

impl BloomFilter {
    /// Bytes of this filter's encoding: header plus blocks.
    pub fn encoded_len(&self) -> usize {
        <Self as Encoded>::encoded_len(self)
    }

    /// The filter in the [format](crate::format) (version 1).
    ///
    /// ```
    /// let f = blockbloom::BloomFilter::with_capacity(1000, 0.01)?;
    /// let bytes = f.to_bytes();
    /// assert_eq!(&bytes[..8], b"BLKBLOOM");
    /// assert_eq!(bytes.len(), f.encoded_len());
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn to_bytes(&self) -> Vec<u8> {
        <Self as Encoded>::to_bytes(self)
    }

    /// Writes the encoding to `w` (in chunks; `w` need not be buffered).
    ///
    /// # Errors
    /// [`Error::Io`] if `w` fails.
    #[cfg(feature = "std")]
    pub fn write_to<W: Write>(&self, w: W) -> Result<(), Error> {
        <Self as Encoded>::write_to(self, w)
    }

    /// Decodes exactly one filter from `bytes` (copying the blocks), on the active kernel.
    ///
    /// # Errors
    /// A typed error saying what is wrong: [`Error::BadMagic`],
    /// [`Error::UnsupportedVersion`], [`Error::UnsupportedLayout`], [`Error::UnsupportedHash`],
    /// [`Error::InvalidHeader`], [`Error::Truncated`], [`Error::TrailingBytes`],
    /// [`Error::ChecksumMismatch`], [`Error::AllocationFailed`], or a kernel error from
    /// `BLOCKBLOOM_ISA`. Never a panic.
    pub fn from_bytes(bytes: &[u8]) -> Result<BloomFilter, Error> {
        <Self as Encoded>::from_bytes(bytes)
    }

    /// Reads exactly one filter from `r` (which may hold more after it). Memory grows with the
    /// bytes actually read, in 1 MiB steps, so a header that lies about its size costs at most
    /// one step before the input runs out.
    ///
    /// ```
    /// let f = blockbloom::BloomFilter::with_capacity(1000, 0.01)?;
    /// let mut file = Vec::new();
    /// f.write_to(&mut file)?;
    /// let g = blockbloom::BloomFilter::read_from(&file[..])?;
    /// assert_eq!(f, g);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`from_bytes`](Self::from_bytes) (but not `TrailingBytes`), plus [`Error::Io`].
    #[cfg(feature = "std")]
    pub fn read_from<R: Read>(r: R) -> Result<BloomFilter, Error> {
        <Self as Encoded>::read_from(r)
    }
}

impl<'a> FilterRef<'a> {
    /// Validates `bytes` (header, size, checksum) and views its blocks in place.
    ///
    /// # Errors
    /// As [`BloomFilter::from_bytes`], plus [`Error::Misaligned`].
    pub fn from_bytes(bytes: &'a [u8]) -> Result<FilterRef<'a>, Error> {
        if cfg!(target_endian = "big") {
            return Err(Error::InvalidHeader(
                "zero-copy views need a little-endian target",
            ));
        }
        let (env, raw) = split::<BloomFilter>(bytes)?;
        let address = raw.as_ptr() as usize;
        if !address.is_multiple_of(core::mem::align_of::<Block>()) {
            return Err(Error::Misaligned { address });
        }
        let kernel = Kernel::get(Isa::active()?)?;
        let meta = meta(&env, kernel)?;
        // SAFETY: `raw` holds exactly `num_blocks * 64` bytes (checked by `split` against the
        // header's block count), its start is 64-byte aligned (checked above), a `Block` is 64
        // plain bytes of `u64`s for which every bit pattern is valid, and on a little-endian
        // target those bytes are the words' values. The view borrows `bytes` immutably for
        // `'a`.
        let blocks = unsafe {
            core::slice::from_raw_parts(raw.as_ptr().cast::<Block>(), raw.len() / BLOCK_BYTES)
        };
        Ok(FilterRef::from_parts(blocks, meta))
    }
}

crate::codec::try_to_bytes!(BloomFilter);
