//! The Bloomier filter in the codec: the envelope (layout id 20), then the packed slot words,
//! little-endian.

use alloc::vec::Vec;

use crate::io::Read;
#[cfg(feature = "std")]
use crate::io::Write;

use super::{BloomierFilter, Geometry, MAX_ENTRIES, MAX_SEGMENT_LOG2, MIN_SEGMENT_LOG2, words_for};
use crate::codec::{
    Encoded, Envelope, Out, decode_slice, kind, read_streamed, read_words, words_le,
};
use crate::cpu::l2_bytes;
use crate::error::Error;
use crate::hashing::KeyHash;
use crate::hashing::seed_flip;
use crate::isa::Isa;
use crate::kernel::Kernel;

impl BloomierFilter {
    /// The map in the format family (`docs/FORMAT.md`, "Bloomier filter"): the envelope,
    /// then the packed slot words, little-endian.
    ///
    /// ```
    /// let f = blockbloom::BloomierFilter::build(&[(1u64, 1u64)], 1, 8)?;
    /// let bytes = f.to_bytes();
    /// assert_eq!(blockbloom::BloomierFilter::from_bytes(&bytes)?, f);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn to_bytes(&self) -> Vec<u8> {
        <Self as Encoded>::to_bytes(self)
    }

    /// Writes [`to_bytes`](Self::to_bytes)'s encoding to `w`.
    ///
    /// # Errors
    /// [`Error::Io`] if `w` fails.
    ///
    /// ```
    /// let f = blockbloom::BloomierFilter::build(&[(1u64, 1u64)], 1, 8)?;
    /// let mut buf = Vec::new();
    /// f.write_to(&mut buf)?;
    /// assert_eq!(buf, f.to_bytes());
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    #[cfg(feature = "std")]
    pub fn write_to<W: Write>(&self, w: W) -> Result<(), Error> {
        <Self as Encoded>::write_to(self, w)
    }

    /// Decodes exactly one map from `bytes`.
    ///
    /// # Errors
    /// The envelope's errors ([`Error::BadMagic`], [`Error::WrongKind`], [`Error::Truncated`],
    /// [`Error::ChecksumMismatch`], ...), [`Error::InvalidHeader`] for fields out of range or a
    /// body length that does not match them, [`Error::AllocationFailed`], or a kernel error
    /// from `BLOCKBLOOM_ISA`. Never a panic.
    ///
    /// ```
    /// let bytes = blockbloom::BloomierFilter::build(&[(1u64, 1u64)], 1, 8)?.to_bytes();
    /// assert!(blockbloom::BloomierFilter::from_bytes(&bytes[..70]).is_err());
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<BloomierFilter, Error> {
        <Self as Encoded>::from_bytes(bytes)
    }

    /// Reads exactly one map from `r` (which may hold more after it), allocating only as the
    /// bytes arrive.
    ///
    /// # Errors
    /// As [`from_bytes`](Self::from_bytes), plus [`Error::Io`].
    ///
    /// ```
    /// let f = blockbloom::BloomierFilter::build(&[(1u64, 1u64)], 1, 8)?;
    /// let bytes = f.to_bytes();
    /// assert_eq!(blockbloom::BloomierFilter::read_from(&bytes[..])?, f);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    #[cfg(feature = "std")]
    pub fn read_from<R: Read>(r: R) -> Result<BloomierFilter, Error> {
        <Self as Encoded>::read_from(r)
    }
}

impl Encoded for BloomierFilter {
    const KIND: u8 = kind::BLOOMIER;

    fn envelope(&self) -> Envelope {
        Envelope {
            kind: kind::BLOOMIER,
            param: self.value_bits as u8,
            hash: KeyHash::Xxh3,
            seed: self.seed,
            fields: [
                self.len,
                self.fingerprint_bits as u64 | (self.geometry.segment_log2 as u64) << 8,
                self.geometry.segments,
            ],
        }
    }

    fn body_len(&self) -> usize {
        (self.words.len() - 1) * 8
    }

    fn body(&self, out: &mut Out<'_>) -> Result<(), Error> {
        // Not the table's trailing pad word.
        words_le(&self.words[..self.words.len() - 1], out)
    }

    fn from_parts(env: Envelope, body: &[u8]) -> Result<BloomierFilter, Error> {
        decode_slice(body, |len, r| decode(env, len, r))
    }

    /// Reads the slot words straight into the table: memory is the map plus one chunk.
    fn read_from<R: Read>(r: R) -> Result<BloomierFilter, Error> {
        read_streamed::<Self, R>(r, |env, len, body| decode(env, len, body))
    }
}

/// Decodes a body of `body_len` bytes (as the header declares) from `body`.
fn decode<R: Read>(env: Envelope, body_len: u64, body: &mut R) -> Result<BloomierFilter, Error> {
    let value_bits = env.param as u32;
    let [len, shape, segments] = env.fields;
    if shape >> 16 != 0 {
        return Err(Error::InvalidHeader(
            "Bloomier shape field has bits above 16 set",
        ));
    }
    let fingerprint_bits = (shape & 0xff) as u32;
    let segment_log2 = (shape >> 8) as u32;
    if value_bits > 64
        || fingerprint_bits > 64
        || !(1..=64).contains(&(value_bits + fingerprint_bits))
    {
        return Err(Error::InvalidHeader(
            "Bloomier value bits plus fingerprint bits outside 1..=64",
        ));
    }
    if !(MIN_SEGMENT_LOG2..=MAX_SEGMENT_LOG2).contains(&segment_log2) {
        return Err(Error::InvalidHeader(
            "Bloomier segment length outside 2^2..=2^18",
        ));
    }
    if segments == 0 || segments > u64::MAX >> 20 {
        return Err(Error::InvalidHeader(
            "Bloomier segment count outside 1..=2^44",
        ));
    }
    let width = value_bits + fingerprint_bits;
    let slots = (segments + 2) << segment_log2;
    let words = words_for(slots, width);
    if words * 8 != body_len as u128 {
        return Err(Error::InvalidHeader(
            "Bloomier body length does not match its slot count and width",
        ));
    }
    if len > slots || len > MAX_ENTRIES {
        return Err(Error::InvalidHeader(
            "Bloomier entry count above its slot count",
        ));
    }
    // Grows with the words delivered, plus the table's trailing pad word.
    let mut table = read_words(body, words as u64, 1)?;
    table.push(0);
    let used = (slots as u128 * width as u128 % 64) as u32;
    if used != 0 && table[words as usize - 1] >> used != 0 {
        return Err(Error::InvalidHeader(
            "Bloomier bits after the last slot are not zero",
        ));
    }
    let kernel = Kernel::get(Isa::active()?)?;
    let size = words as u64 * 8;
    Ok(BloomierFilter {
        words: table,
        len,
        seed: env.seed,
        flip: seed_flip(env.seed),
        value_bits,
        fingerprint_bits,
        geometry: Geometry::new(segment_log2, segments),
        kernel,
        prefetch: size > l2_bytes(),
    })
}

crate::codec::try_to_bytes!(BloomierFilter);
