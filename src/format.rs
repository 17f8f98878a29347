//! The persisted format (version 1) and the zero-copy [`FilterRef`] view.
//!
//! A filter is a 64-byte little-endian header followed by its blocks, so that in a buffer
//! that starts 64-byte aligned (a memory-mapped file, say) the blocks are aligned too and can
//! be queried in place. `docs/FORMAT.md` specifies it precisely enough to write a reader in
//! another language.
//!
//! | offset | bytes | field |
//! |---:|---:|---|
//! | 0 | 8 | magic `BLKBLOOM` |
//! | 8 | 2 | format version, `u16` (1) |
//! | 10 | 1 | layout id: 1 = 8x64, 2 = 4x128 |
//! | 11 | 1 | probes per key `k` |
//! | 12 | 1 | hash id: 1 = XXH3-64, seeded, of the key's canonical little-endian bytes |
//! | 13 | 3 | reserved, zero |
//! | 16 | 8 | hash seed, `u64` |
//! | 24 | 8 | block count, `u64`, in `1..=2^32` |
//! | 32 | 8 | capacity the filter was sized for, `u64` (informational) |
//! | 40 | 8 | target false-positive rate, `f64` bits (`0x7ff8000000000000`, NaN: none) |
//! | 48 | 8 | checksum: XXH3-64 (seed 0) of bytes 0..48, 56..64, then every block |
//! | 56 | 8 | reserved, zero |
//! | 64 | 64 × blocks | blocks, each 8 `u64` words |
//!
//! Decoding never panics and never allocates more than the input justifies: the declared
//! size is checked against the bytes present before anything is allocated, and a reader is
//! consumed in bounded chunks.
//!
//! ```
//! use blockbloom::BloomFilter;
//!
//! let mut f = BloomFilter::with_capacity(10_000, 0.01)?;
//! f.insert_batch(&[1u64, 2, 3]);
//! let bytes = f.to_bytes();
//! let g = BloomFilter::from_bytes(&bytes)?;
//! assert_eq!(f, g);
//! assert!(blockbloom::BloomFilter::from_bytes(&bytes[..100]).is_err());
//! # Ok::<(), blockbloom::Error>(())
//! ```

use std::io::{Read, Write};

use xxhash_rust::xxh3::Xxh3;

use crate::filter::{FilterRef, Meta};
use crate::kernel::Kernel;
use crate::layout::{Block, Layout, MAX_BLOCKS};
use crate::{BloomFilter, Error, Isa};

/// The magic number every encoded filter starts with.
pub const MAGIC: [u8; 8] = *b"BLKBLOOM";
/// The format version this build writes (and the only one it reads).
pub const VERSION: u16 = crate::limits::FORMAT_VERSION;
/// Bytes of header before the blocks.
pub const HEADER_BYTES: usize = 64;
/// The hash id of seeded XXH3-64 over canonical little-endian bytes.
pub const HASH_XXH3: u8 = 1;

/// The bits of the target-FPR field for a filter sized by a budget: the canonical quiet NaN.
pub const NO_TARGET_FPR: u64 = 0x7ff8_0000_0000_0000;

const BLOCK_BYTES: usize = 64;
/// Bytes a reader is consumed in: what a lying header can make us allocate ahead of data.
const READ_CHUNK: usize = 1 << 20;

/// Layout ids: which kind of filter an encoding holds (byte 10 of the header).
///
/// Ids 1 and 2 are the plain [`BloomFilter`]'s layouts. The other kinds share the header's
/// magic, version, hash id, seed and checksum, and state their body's length in bytes 56..64
/// (`docs/FORMAT.md`, "The format family"). Decoding one kind from another's bytes is an
/// [`Error::WrongKind`].
pub mod kind {
    /// A plain filter, layout 8x64.
    pub const PLAIN_8X64: u8 = 1;
    /// A plain filter, layout 4x128.
    pub const PLAIN_4X128: u8 = 2;
    /// A counting filter.
    pub const COUNTING: u8 = 16;
    /// A deletable Bloom filter (plain filter plus collision bitmap).
    pub const DELETABLE: u8 = 17;
    /// A scalable filter (a chain of plain filters).
    pub const SCALABLE: u8 = 18;
    /// A plain filter in its compressed transfer form.
    pub const COMPRESSED: u8 = 19;
    /// A Bloomier filter (static key-to-value map).
    pub const BLOOMIER: u8 = 20;

    /// The name of a known layout id.
    ///
    /// ```
    /// use blockbloom::format::kind;
    /// assert_eq!(kind::name(kind::COUNTING), Some("counting filter"));
    /// assert_eq!(kind::name(99), None);
    /// ```
    pub const fn name(id: u8) -> Option<&'static str> {
        Some(match id {
            PLAIN_8X64 | PLAIN_4X128 => "plain Bloom filter",
            COUNTING => "counting filter",
            DELETABLE => "deletable Bloom filter",
            SCALABLE => "scalable filter",
            COMPRESSED => "compressed filter",
            BLOOMIER => "Bloomier filter",
            _ => return None,
        })
    }
}

fn layout_id(layout: Layout) -> u8 {
    match layout {
        Layout::Sectors8x64 => kind::PLAIN_8X64,
        Layout::Sectors4x128 => kind::PLAIN_4X128,
    }
}

/// A decoded and validated header.
struct Header {
    layout: Layout,
    probes: u32,
    seed: u64,
    num_blocks: u64,
    capacity: u64,
    target_fpr: Option<f64>,
    checksum: u64,
}

impl Header {
    fn of(f: &BloomFilter) -> [u8; HEADER_BYTES] {
        let m = f.meta();
        let mut h = [0u8; HEADER_BYTES];
        h[0..8].copy_from_slice(&MAGIC);
        h[8..10].copy_from_slice(&VERSION.to_le_bytes());
        h[10] = layout_id(m.shape.layout);
        h[11] = m.probes() as u8;
        h[12] = HASH_XXH3;
        h[16..24].copy_from_slice(&m.seed.to_le_bytes());
        h[24..32].copy_from_slice(&m.shape.num_blocks.to_le_bytes());
        h[32..40].copy_from_slice(&m.capacity.to_le_bytes());
        let fpr = m.target_fpr.map_or(NO_TARGET_FPR, f64::to_bits);
        h[40..48].copy_from_slice(&fpr.to_le_bytes());
        h
    }

    fn parse(h: &[u8; HEADER_BYTES]) -> Result<Header, Error> {
        let u64_at = |i: usize| u64::from_le_bytes(h[i..i + 8].try_into().expect("8 bytes"));
        if h[0..8] != MAGIC {
            return Err(Error::BadMagic);
        }
        let version = u16::from_le_bytes([h[8], h[9]]);
        if version != VERSION {
            return Err(Error::UnsupportedVersion(version));
        }
        let layout = match h[10] {
            kind::PLAIN_8X64 => Layout::Sectors8x64,
            kind::PLAIN_4X128 => Layout::Sectors4x128,
            other => {
                return Err(match kind::name(other) {
                    Some(found) => Error::WrongKind {
                        expected: "plain Bloom filter",
                        found,
                    },
                    None => Error::UnsupportedLayout(other),
                });
            }
        };
        let probes = h[11] as u32;
        if !layout.supports_probes(probes) {
            return Err(Error::InvalidHeader("probe count does not fit the layout"));
        }
        if h[12] != HASH_XXH3 {
            return Err(Error::UnsupportedHash(h[12]));
        }
        if h[13..16] != [0; 3] || h[56..64] != [0; 8] {
            return Err(Error::InvalidHeader("reserved bytes are not zero"));
        }
        let num_blocks = u64_at(24);
        if num_blocks == 0 || num_blocks > MAX_BLOCKS {
            return Err(Error::InvalidHeader("block count outside 1..=2^32"));
        }
        let fpr = f64::from_bits(u64_at(40));
        // Exactly one encoding means "no target", so decoding and re-encoding give the same
        // bytes (found by the `decode_corrupted` fuzz target).
        let target_fpr = if u64_at(40) == NO_TARGET_FPR {
            None
        } else if fpr > 0.0 && fpr < 1.0 {
            Some(fpr)
        } else {
            return Err(Error::InvalidHeader(
                "target false-positive rate neither in (0, 1) nor the canonical NaN",
            ));
        };
        Ok(Header {
            layout,
            probes,
            seed: u64_at(16),
            num_blocks,
            capacity: u64_at(32),
            target_fpr,
            checksum: u64_at(48),
        })
    }

    /// Total encoded bytes.
    fn total_bytes(&self) -> u128 {
        HEADER_BYTES as u128 + self.num_blocks as u128 * BLOCK_BYTES as u128
    }

    fn meta(&self, kernel: &'static Kernel) -> Meta {
        Meta::new(
            self.num_blocks,
            self.layout,
            self.probes,
            self.seed,
            self.capacity,
            self.target_fpr,
            kernel,
        )
    }
}

/// A checksum in progress: header bytes (without the checksum field), then blocks (or, for
/// the family's other kinds, the body).
pub(crate) fn checksum_start(header: &[u8; HEADER_BYTES]) -> Xxh3 {
    let mut x = Xxh3::new();
    x.update(&header[..48]);
    x.update(&header[56..]);
    x
}

fn check(h: &Header, x: Xxh3) -> Result<(), Error> {
    let computed = x.digest();
    if computed == h.checksum {
        Ok(())
    } else {
        Err(Error::ChecksumMismatch {
            stored: h.checksum,
            computed,
        })
    }
}

/// The error for an input that ends after `head.len() < HEADER_BYTES` bytes: a bad magic if
/// enough of it shows, else truncation.
pub(crate) fn short_header(head: &[u8]) -> Error {
    if head.len() >= 8 && head[..8] != MAGIC {
        Error::BadMagic
    } else {
        Error::Truncated {
            needed: HEADER_BYTES as u128,
            got: head.len() as u128,
        }
    }
}

/// Splits `bytes` into a validated header and exactly the block bytes it declares.
fn split(bytes: &[u8]) -> Result<(Header, &[u8]), Error> {
    let Some(head) = bytes.first_chunk::<HEADER_BYTES>() else {
        return Err(short_header(bytes));
    };
    let h = Header::parse(head)?;
    let total = h.total_bytes();
    let got = bytes.len() as u128;
    if got < total {
        return Err(Error::Truncated { needed: total, got });
    }
    if got > total {
        return Err(Error::TrailingBytes {
            expected: total,
            got,
        });
    }
    let blocks = &bytes[HEADER_BYTES..];
    let mut x = checksum_start(head);
    x.update(blocks);
    check(&h, x)?;
    Ok((h, blocks))
}

fn blocks_from_le(bytes: &[u8], out: &mut Vec<Block>) {
    out.extend(bytes.chunks_exact(BLOCK_BYTES).map(|b| {
        Block(std::array::from_fn(|w| {
            u64::from_le_bytes(b[8 * w..8 * w + 8].try_into().expect("8 bytes"))
        }))
    }));
}

impl BloomFilter {
    /// Bytes of this filter's encoding: header plus blocks.
    pub fn encoded_len(&self) -> usize {
        HEADER_BYTES + self.blocks().len() * BLOCK_BYTES
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
        let mut out = Vec::with_capacity(self.encoded_len());
        self.write_to(&mut out)
            .expect("writing to a Vec cannot fail");
        out
    }

    /// Writes the encoding to `w` (in chunks; `w` need not be buffered).
    ///
    /// # Errors
    /// [`Error::Io`] if `w` fails.
    pub fn write_to<W: Write>(&self, mut w: W) -> Result<(), Error> {
        let mut header = Header::of(self);
        let mut x = checksum_start(&header);
        let mut buf = Vec::with_capacity(READ_CHUNK.min(self.blocks().len() * BLOCK_BYTES));
        for chunk in self.blocks().chunks(READ_CHUNK / BLOCK_BYTES) {
            for b in chunk {
                for word in b.0 {
                    buf.extend_from_slice(&word.to_le_bytes());
                }
            }
            x.update(&buf);
            buf.clear();
        }
        header[48..56].copy_from_slice(&x.digest().to_le_bytes());
        w.write_all(&header)?;
        for chunk in self.blocks().chunks(READ_CHUNK / BLOCK_BYTES) {
            for b in chunk {
                for word in b.0 {
                    buf.extend_from_slice(&word.to_le_bytes());
                }
            }
            w.write_all(&buf)?;
            buf.clear();
        }
        Ok(())
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
        let (h, blocks) = split(bytes)?;
        let kernel = Kernel::get(Isa::active()?)?;
        let mut v = Vec::new();
        v.try_reserve_exact(h.num_blocks as usize)
            .map_err(|_| Error::AllocationFailed {
                bytes: h.total_bytes(),
            })?;
        blocks_from_le(blocks, &mut v);
        Ok(BloomFilter::from_parts(v, h.meta(kernel)))
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
    pub fn read_from<R: Read>(mut r: R) -> Result<BloomFilter, Error> {
        let mut head = [0u8; HEADER_BYTES];
        let got = read_full(&mut r, &mut head)?;
        if got < HEADER_BYTES {
            return Err(short_header(&head[..got]));
        }
        let h = Header::parse(&head)?;
        let kernel = Kernel::get(Isa::active()?)?;
        let mut x = checksum_start(&head);
        let mut blocks = Vec::new();
        let mut buf = vec![0u8; READ_CHUNK.min(h.num_blocks as usize * BLOCK_BYTES)];
        let mut left = h.num_blocks as u128 * BLOCK_BYTES as u128;
        while left > 0 {
            let n = (buf.len() as u128).min(left) as usize;
            let got = read_full(&mut r, &mut buf[..n])?;
            if got < n {
                let read = h.total_bytes() - left + got as u128;
                return Err(Error::Truncated {
                    needed: h.total_bytes(),
                    got: read,
                });
            }
            x.update(&buf[..n]);
            blocks
                .try_reserve_exact(n / BLOCK_BYTES)
                .map_err(|_| Error::AllocationFailed {
                    bytes: h.total_bytes(),
                })?;
            blocks_from_le(&buf[..n], &mut blocks);
            left -= n as u128;
        }
        check(&h, x)?;
        Ok(BloomFilter::from_parts(blocks, h.meta(kernel)))
    }
}

/// Reads until `buf` is full or the input ends; returns the bytes read.
pub(crate) fn read_full<R: Read>(r: &mut R, buf: &mut [u8]) -> Result<usize, Error> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(n)
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
        let (h, raw) = split(bytes)?;
        let address = raw.as_ptr() as usize;
        if !address.is_multiple_of(std::mem::align_of::<Block>()) {
            return Err(Error::Misaligned { address });
        }
        let kernel = Kernel::get(Isa::active()?)?;
        // SAFETY: `raw` holds exactly `num_blocks * 64` bytes (checked by `split`), its start is
        // 64-byte aligned (checked above), a `Block` is 64 plain bytes of `u64`s for which every
        // bit pattern is valid, and on a little-endian target those bytes are the words'
        // values. The view borrows `bytes` immutably for `'a`.
        let blocks = unsafe {
            std::slice::from_raw_parts(raw.as_ptr().cast::<Block>(), h.num_blocks as usize)
        };
        Ok(FilterRef::from_parts(blocks, h.meta(kernel)))
    }
}
