//! The counting filter's encoding (layout id 16, `docs/FORMAT.md`): the family's envelope
//! around the counter words. The filter itself is in the front-end
//! (`crate::filter::counting`).

use alloc::vec::Vec;

use crate::io::Read;
#[cfg(feature = "std")]
use crate::io::Write;

use crate::codec::{
    Encoded, Envelope, Out, blocks_from_le, blocks_le, kind, read_framed, reserve_pages_geometric,
};
use crate::error::Error;
use crate::filter::CounterBits;
use crate::filter::CountingBloomFilter;
use crate::filter::Meta;
use crate::hashing::KeyHash;
use crate::isa::Isa;
use crate::kernel::Kernel;
use crate::layout::{Block, Layout, MAX_BLOCKS};
use crate::memory::PageBuf;

impl CountingBloomFilter {
    /// Bytes of this filter's encoding: the 64-byte header plus the counters.
    ///
    /// ```
    /// let f = blockbloom::CountingBloomFilter::with_capacity(100, 0.01)?;
    /// assert_eq!(f.encoded_len(), f.to_bytes().len());
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn encoded_len(&self) -> usize {
        <Self as Encoded>::encoded_len(self)
    }

    /// The filter in the format family's envelope (layout id 16, `docs/FORMAT.md`).
    ///
    /// ```
    /// use blockbloom::CountingBloomFilter;
    /// let mut f = CountingBloomFilter::with_capacity(1000, 0.01)?;
    /// f.insert(&"k");
    /// let g = CountingBloomFilter::from_bytes(&f.to_bytes())?;
    /// assert_eq!(f, g);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn to_bytes(&self) -> Vec<u8> {
        <Self as Encoded>::to_bytes(self)
    }

    /// Writes the encoding to `w`.
    ///
    /// # Errors
    /// [`Error::Io`] if `w` fails.
    ///
    /// ```
    /// let f = blockbloom::CountingBloomFilter::with_capacity(100, 0.01)?;
    /// let mut file = Vec::new();
    /// f.write_to(&mut file)?;
    /// assert_eq!(file, f.to_bytes());
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    #[cfg(feature = "std")]
    pub fn write_to<W: Write>(&self, w: W) -> Result<(), Error> {
        <Self as Encoded>::write_to(self, w)
    }

    /// Decodes exactly one counting filter from `bytes`, on the active kernel.
    ///
    /// # Errors
    /// The envelope's errors ([`Error::BadMagic`], [`Error::UnsupportedVersion`],
    /// [`Error::WrongKind`], [`Error::UnsupportedLayout`], [`Error::UnsupportedHash`],
    /// [`Error::Truncated`], [`Error::TrailingBytes`], [`Error::ChecksumMismatch`]), then
    /// [`Error::InvalidHeader`] for a counter width, flag, block count, layout or probe count
    /// out of range or a body that is not the blocks; [`Error::AllocationFailed`]. Never a
    /// panic.
    ///
    /// ```
    /// use blockbloom::{BloomFilter, CountingBloomFilter, Error};
    /// let plain = BloomFilter::with_capacity(100, 0.01)?.to_bytes();
    /// assert!(matches!(CountingBloomFilter::from_bytes(&plain), Err(Error::WrongKind { .. })));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<CountingBloomFilter, Error> {
        <Self as Encoded>::from_bytes(bytes)
    }

    /// Reads exactly one counting filter from `r` (which may hold more after it); memory
    /// grows with the bytes actually read.
    ///
    /// # Errors
    /// As [`from_bytes`](Self::from_bytes) (but not `TrailingBytes`), plus [`Error::Io`].
    ///
    /// ```
    /// let f = blockbloom::CountingBloomFilter::with_capacity(100, 0.01)?;
    /// let bytes = f.to_bytes();
    /// let g = blockbloom::CountingBloomFilter::read_from(&bytes[..])?;
    /// assert_eq!(f, g);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    #[cfg(feature = "std")]
    pub fn read_from<R: Read>(r: R) -> Result<CountingBloomFilter, Error> {
        <Self as Encoded>::read_from(r)
    }
}

impl Encoded for CountingBloomFilter {
    const KIND: u8 = kind::COUNTING;

    fn envelope(&self) -> Envelope {
        let layout_id = match self.meta().shape.layout {
            Layout::Sectors8x64 => kind::PLAIN_8X64,
            Layout::Sectors4x128 => kind::PLAIN_4X128,
            // The sizing model refuses a counting filter in 8x32 (`plan_for`), the only way
            // to make one with a layout.
            Layout::Sectors8x32 => unreachable!("counting filters are never 8x32"),
        };
        Envelope {
            kind: kind::COUNTING,
            param: self.counter_bits().bits() as u8
                | if self.min_increase_used() {
                    FLAG_MIN_INCREASE
                } else {
                    0
                },
            hash: KeyHash::Xxh3,
            seed: self.meta().seed,
            fields: [
                self.meta().shape.num_blocks,
                layout_id as u64 | (self.probes() as u64) << 8,
                self.meta().capacity,
            ],
        }
    }

    fn body_len(&self) -> usize {
        self.size_in_bytes()
    }

    fn body(&self, out: &mut Out<'_>) -> Result<(), Error> {
        blocks_le(self.blocks(), out)
    }

    fn from_parts(env: Envelope, body: &[u8]) -> Result<CountingBloomFilter, Error> {
        let mut blocks = PageBuf::new(true);
        if body.len() as u128 == env.fields[0] as u128 * 64 {
            blocks
                .try_reserve_exact(env.fields[0] as usize)
                .ok_or(Error::AllocationFailed {
                    bytes: body.len() as u128,
                })?;
            blocks_from_le(body, &mut blocks);
        }
        assemble(env, body.len() as u64, blocks)
    }

    /// Reads straight into the counters (as the plain filter does), so memory is the filter
    /// plus one chunk, not the body and the filter.
    fn read_from<R: Read>(r: R) -> Result<CountingBloomFilter, Error> {
        let mut blocks = PageBuf::new(true);
        let mut body_len = 0;
        let env = read_framed::<CountingBloomFilter, R>(r, |chunk, declared| {
            body_len = declared;
            if declared % 64 == 0 {
                reserve_pages_geometric(&mut blocks, chunk.len() / 64, declared / 64)?;
                blocks_from_le(chunk, &mut blocks);
            }
            Some(())
        })?;
        assemble(env, body_len, blocks)
    }
}

/// The filter of a validated envelope whose body (of `body_len` bytes) was decoded into
/// `blocks` when its length was whole blocks. The checks, in order, are the format's.
fn assemble(
    env: Envelope,
    body_len: u64,
    blocks: PageBuf<Block>,
) -> Result<CountingBloomFilter, Error> {
    let bits = match env.param & !FLAG_MIN_INCREASE {
        4 => CounterBits::Four,
        8 => CounterBits::Eight,
        _ => {
            return Err(Error::InvalidHeader(
                "counting filter: the parameter byte must be 4 or 8 counter bits, plus \
                 flag 0x80",
            ));
        }
    };
    let [num_blocks, shape, capacity] = env.fields;
    if num_blocks == 0 || num_blocks > MAX_BLOCKS {
        return Err(Error::InvalidHeader(
            "counting filter: block count must be in 1..=2^32",
        ));
    }
    let layout = match shape & 0xff {
        x if x == kind::PLAIN_8X64 as u64 => Layout::Sectors8x64,
        x if x == kind::PLAIN_4X128 as u64 => Layout::Sectors4x128,
        _ => {
            return Err(Error::InvalidHeader(
                "counting filter: layout must be 1 (8x64) or 2 (4x128)",
            ));
        }
    };
    let probes = (shape >> 8) & 0xff;
    if shape >> 16 != 0 || !layout.supports_probes(probes as u32) {
        return Err(Error::InvalidHeader(
            "counting filter: probe count does not fit the layout",
        ));
    }
    if body_len as u128 != num_blocks as u128 * 64 || blocks.len() as u64 != num_blocks {
        return Err(Error::InvalidHeader(
            "counting filter: body length is not 64 bytes per block",
        ));
    }
    let kernel = Kernel::get(Isa::active()?)?;
    let meta = Meta::new(
        num_blocks,
        layout,
        probes as u32,
        env.seed,
        capacity,
        None,
        kernel,
    );
    let min_increase = env.param & FLAG_MIN_INCREASE != 0;
    Ok(CountingBloomFilter::from_counters(
        blocks,
        meta,
        bits,
        min_increase,
    ))
}

/// Parameter-byte flag: the filter has had minimum-increase inserts.
const FLAG_MIN_INCREASE: u8 = 0x80;

crate::codec::try_to_bytes!(CountingBloomFilter);
