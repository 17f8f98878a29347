//! The classic filter in the codec (layout id 21, `docs/FORMAT.md`): the envelope, with `m`,
//! the design `m` and `k` in its fields, then the array's words, little-endian.

use alloc::vec::Vec;

use crate::io::Read;
#[cfg(feature = "std")]
use crate::io::Write;

use super::kernel::ClassicShape;
use super::{ClassicBloomFilter, check_design};
use crate::codec::{
    Encoded, Envelope, Out, decode_slice, kind, read_streamed, read_words_paged, words_le,
};
use crate::error::Error;
use crate::hashing::KeyHash;
use crate::hashing::seed_flip;
use crate::isa::Isa;
use crate::kernel::Kernel;

impl ClassicBloomFilter {
    /// Bytes of this filter's encoding: the 64-byte header plus the array.
    pub fn encoded_len(&self) -> usize {
        <Self as Encoded>::encoded_len(self)
    }

    /// The filter in the format family's envelope (layout id 21, `docs/FORMAT.md`).
    ///
    /// ```
    /// use blockbloom::ClassicBloomFilter;
    /// let mut f = ClassicBloomFilter::new(1000, 4)?;
    /// f.insert(&"k");
    /// assert_eq!(ClassicBloomFilter::from_bytes(&f.to_bytes())?, f);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn to_bytes(&self) -> Vec<u8> {
        <Self as Encoded>::to_bytes(self)
    }

    /// Writes the encoding to `w`.
    ///
    /// # Errors
    /// [`Error::Io`] if `w` fails.
    #[cfg(feature = "std")]
    pub fn write_to<W: Write>(&self, w: W) -> Result<(), Error> {
        <Self as Encoded>::write_to(self, w)
    }

    /// Decodes exactly one classic filter from `bytes`, on the active kernel.
    ///
    /// # Errors
    /// The envelope's errors ([`Error::BadMagic`], [`Error::UnsupportedVersion`],
    /// [`Error::WrongKind`], [`Error::UnsupportedLayout`], [`Error::UnsupportedHash`],
    /// [`Error::Truncated`], [`Error::TrailingBytes`], [`Error::ChecksumMismatch`]), then
    /// [`Error::InvalidHeader`] for `m`, `k` or halvings out of range, a body that is not the
    /// array, or bits set past `m`; [`Error::AllocationFailed`]. Never a panic.
    ///
    /// ```
    /// use blockbloom::{BloomFilter, ClassicBloomFilter, Error};
    /// let plain = BloomFilter::with_capacity(100, 0.01)?.to_bytes();
    /// assert!(matches!(ClassicBloomFilter::from_bytes(&plain), Err(Error::WrongKind { .. })));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<ClassicBloomFilter, Error> {
        <Self as Encoded>::from_bytes(bytes)
    }

    /// Reads exactly one classic filter from `r` (which may hold more after it); memory grows
    /// with the bytes actually read.
    ///
    /// # Errors
    /// As [`from_bytes`](Self::from_bytes) (but not `TrailingBytes`), plus [`Error::Io`].
    #[cfg(feature = "std")]
    pub fn read_from<R: Read>(r: R) -> Result<ClassicBloomFilter, Error> {
        <Self as Encoded>::read_from(r)
    }
}

impl Encoded for ClassicBloomFilter {
    const KIND: u8 = kind::CLASSIC;

    fn envelope(&self) -> Envelope {
        Envelope {
            kind: kind::CLASSIC,
            param: 0,
            hash: KeyHash::Xxh3,
            seed: self.seed,
            fields: [
                self.shape.num_bits,
                self.shape.design_bits,
                self.shape.probes as u64,
            ],
        }
    }

    fn body_len(&self) -> usize {
        self.words.len() * 8
    }

    fn body(&self, out: &mut Out<'_>) -> Result<(), Error> {
        words_le(&self.words, out)
    }

    fn from_parts(env: Envelope, body: &[u8]) -> Result<ClassicBloomFilter, Error> {
        decode_slice(body, |len, r| decode(env, len, r))
    }

    fn read_from<R: Read>(r: R) -> Result<ClassicBloomFilter, Error> {
        read_streamed::<Self, R>(r, |env, len, body| decode(env, len, body))
    }
}

/// Decodes a body of `body_len` bytes from `body`, checking the fields first.
fn decode<R: Read>(
    env: Envelope,
    body_len: u64,
    body: &mut R,
) -> Result<ClassicBloomFilter, Error> {
    let [num_bits, design_bits, probes] = env.fields;
    if env.param != 0 {
        return Err(Error::InvalidHeader(
            "classic filter: parameter byte must be 0",
        ));
    }
    if probes > u32::MAX as u64 || check_design(num_bits, probes as u32).is_err() {
        return Err(Error::InvalidHeader(
            "classic filter: m must be in 1..=2^43 and k in 1..=64",
        ));
    }
    if design_bits < num_bits
        || design_bits > super::MAX_BITS
        || design_bits % num_bits != 0
        || !(design_bits / num_bits).is_power_of_two()
    {
        return Err(Error::InvalidHeader(
            "classic filter: the design m must be m times a power of two",
        ));
    }
    let shape = ClassicShape {
        num_bits,
        design_bits,
        probes: probes as u32,
        flip: seed_flip(env.seed),
    };
    if body_len != shape.num_words() as u64 * 8 {
        return Err(Error::InvalidHeader(
            "classic filter: body is not the ceil(m / 64) words of the array",
        ));
    }
    let kernel = Kernel::get(Isa::active()?)?;
    let words = read_words_paged(body, shape.num_words() as u64, true)?;
    let tail = num_bits % 64;
    if tail != 0 && words.last().is_some_and(|w| w >> tail != 0) {
        return Err(Error::InvalidHeader("classic filter: bits set past m"));
    }
    Ok(ClassicBloomFilter {
        words,
        shape,
        seed: env.seed,
        kernel,
        gather: false,
    })
}

crate::codec::try_to_bytes!(ClassicBloomFilter);
