//! The codec: the 64-byte header, its checksum, the framing and the kind registry, written
//! once for every filter kind (`docs/FORMAT.md`). [`crate::format`] is its public face.
//!
//! A kind implements [`Encoded`]: its layout id, its header fields ([`Envelope`]), its body as
//! a stream of chunks, and how to rebuild itself from a validated header and body. The
//! provided functions do the rest: `to_bytes`, `write_to`, `from_bytes` and `read_from`, with
//! the same checks and typed errors for every kind.
//!
//! Decoding never panics and never allocates more than the input justifies: the declared
//! size is checked against the bytes present before anything is allocated, and a reader is
//! consumed in bounded chunks.

use alloc::vec;
use alloc::vec::Vec;

mod envelope;
mod plain;

use alloc::collections::TryReserveError;

use crate::io::{self, Read, Write};

use xxhash_rust::xxh3::Xxh3;

use crate::error::Error;
use crate::hashing::KeyHash;
use crate::layout::Block;
use crate::memory::PageBuf;

pub(crate) use envelope::Envelope;

/// `try_to_bytes` on a kind: its encoding ([`Encoded::try_to_bytes`]), for sizes a user gave.
macro_rules! try_to_bytes {
    ($($kind:ty),* $(,)?) => {$(
        impl $kind {
            /// The encoding as [`to_bytes`](Self::to_bytes) gives it, in a buffer reserved
            /// fallibly: for a filter whose size came from a user or a query, where a refused
            /// allocation must be an error, not an abort.
            ///
            /// # Errors
            /// [`Error::AllocationFailed`] if the allocator refuses the buffer.
            pub fn try_to_bytes(&self) -> Result<Vec<u8>, Error> {
                <Self as Encoded>::try_to_bytes(self)
            }
        }
    )*};
}
pub(crate) use try_to_bytes;

/// The magic number every encoded filter starts with.
pub const MAGIC: [u8; 8] = *b"BLKBLOOM";
/// The format version this build writes (and the only one it reads).
pub const VERSION: u16 = crate::limits::FORMAT_VERSION;
/// Bytes of header before the blocks.
pub const HEADER_BYTES: usize = 64;
/// The hash id of seeded XXH3-64 over canonical little-endian bytes ([`KeyHash::Xxh3`]).
pub const HASH_XXH3: u8 = KeyHash::Xxh3.id();
/// The hash id of XXH3-64 for 4- and 8-byte keys and AESH-64 for every other key
/// ([`KeyHash::Aesh`]).
pub const HASH_AESH: u8 = KeyHash::Aesh.id();
/// The hash id of MX32-64 for keys of 4, 8 and 16 bytes, AESH-64 for the others
/// ([`KeyHash::Mx32`]).
pub const HASH_MX32: u8 = KeyHash::Mx32.id();
/// The hash id of MM64 for keys of 4, 8 and 16 bytes, AESH-64 for the others
/// ([`KeyHash::Moremur`]).
pub const HASH_MOREMUR: u8 = KeyHash::Moremur.id();

/// The bits of the target-FPR field for a filter sized by a budget: the canonical quiet NaN.
pub const NO_TARGET_FPR: u64 = 0x7ff8_0000_0000_0000;

/// Layout ids: which kind of filter an encoding holds (byte 10 of the header).
///
/// Ids 1, 2 and 3 are the plain [`BloomFilter`](crate::BloomFilter)'s layouts. The other kinds
/// share the header's magic, version, hash id, seed and checksum, and state their body's
/// length in bytes 56..64 (`docs/FORMAT.md`, "The format family"). Decoding one kind from
/// another's bytes is an [`Error::WrongKind`].
pub mod kind {
    /// A plain filter, layout 8x64.
    pub const PLAIN_8X64: u8 = 1;
    /// A plain filter, layout 4x128.
    pub const PLAIN_4X128: u8 = 2;
    /// A plain filter, layout 8x32.
    pub const PLAIN_8X32: u8 = 3;
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
    /// A classic (unblocked) Bloom filter.
    pub const CLASSIC: u8 = 21;

    /// The name of a known layout id.
    ///
    /// ```
    /// use blockbloom::format::kind;
    /// assert_eq!(kind::name(kind::COUNTING), Some("counting filter"));
    /// assert_eq!(kind::name(99), None);
    /// ```
    pub const fn name(id: u8) -> Option<&'static str> {
        Some(match id {
            PLAIN_8X64 | PLAIN_4X128 | PLAIN_8X32 => "plain Bloom filter",
            COUNTING => "counting filter",
            DELETABLE => "deletable Bloom filter",
            SCALABLE => "scalable filter",
            COMPRESSED => "compressed filter",
            BLOOMIER => "Bloomier filter",
            CLASSIC => "classic Bloom filter",
            _ => return None,
        })
    }
}

pub(crate) const BLOCK_BYTES: usize = 64;
/// Bytes a reader is consumed in, and a body is produced in: what a lying header can make us
/// allocate ahead of data, and the most an encoder buffers.
const CHUNK: usize = 1 << 20;

/// Where encoded bytes go, a chunk at a time.
pub(crate) type Out<'a> = dyn FnMut(&[u8]) -> Result<(), Error> + 'a;

/// A filter kind in the format: what it contributes; the provided functions are the codec.
pub(crate) trait Encoded: Sized {
    /// The layout id (header byte 10) this kind writes and reads.
    const KIND: u8;
    /// Whether header bytes 56..64 state the body length (the family) or are zero (the plain
    /// filter, whose block count implies it).
    const STATES_LEN: bool = true;

    /// The key hashes this kind can be built with (header byte 12): the family's kinds hash
    /// with XXH3 alone (hash id 1).
    const HASHES: &'static [KeyHash] = &[KeyHash::Xxh3];

    /// The header's fields.
    fn envelope(&self) -> Envelope;

    /// Bytes of the body.
    fn body_len(&self) -> usize;

    /// Feeds the body, `body_len` bytes, to `out` in chunks of bounded size. An encoding runs
    /// it twice (checksum, then write), so no copy of a large body is ever made.
    fn body(&self, out: &mut Out<'_>) -> Result<(), Error>;

    /// Builds the value from a header that passed [`parse_header`](Self::parse_header) and
    /// its checksummed body, checking the kind's fields and the body against each other.
    /// Allocates only what the body's length justifies.
    fn from_parts(env: Envelope, body: &[u8]) -> Result<Self, Error>;

    /// Whether `id` (header byte 10) is this kind's.
    fn is_kind(id: u8) -> bool {
        id == Self::KIND
    }

    /// Validates a header of this kind: its envelope and the body length it declares.
    /// Everything a header alone can show is checked here, before the body is read.
    fn parse_header(h: &[u8; HEADER_BYTES]) -> Result<(Envelope, u64), Error> {
        envelope::parse_family::<Self>(h)
    }

    /// Bytes of the encoding: header plus body.
    fn encoded_len(&self) -> usize {
        HEADER_BYTES + self.body_len()
    }

    /// Feeds the whole encoding, header then body, to `out` (also how a kind nests another's
    /// encoding in its body).
    fn encode_to(&self, out: &mut Out<'_>) -> Result<(), Error> {
        let stated = if Self::STATES_LEN {
            self.body_len() as u64
        } else {
            0
        };
        let mut h = self.envelope().header(stated);
        let mut x = checksum_start(&h);
        self.body(&mut |chunk| {
            x.update(chunk);
            Ok(())
        })?;
        h[48..56].copy_from_slice(&x.digest().to_le_bytes());
        out(&h)?;
        self.body(out)
    }

    /// The encoding as one buffer, reserved fallibly: [`Error::AllocationFailed`] where the
    /// allocator refuses it, never an abort.
    fn try_to_bytes(&self) -> Result<Vec<u8>, Error> {
        let len = self.encoded_len();
        let mut out = Vec::new();
        out.try_reserve_exact(len)
            .map_err(|_| Error::AllocationFailed { bytes: len as u128 })?;
        self.write_to(&mut out)?;
        debug_assert_eq!(out.len(), len, "body_len disagrees with body");
        Ok(out)
    }

    /// The encoding as one buffer.
    fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.encoded_len());
        self.write_to(&mut out)
            .expect("writing to a Vec cannot fail");
        debug_assert_eq!(
            out.len(),
            self.encoded_len(),
            "body_len disagrees with body"
        );
        out
    }

    /// Writes the encoding to `w` in chunks (`w` need not be buffered).
    fn write_to<W: Write>(&self, mut w: W) -> Result<(), Error> {
        self.encode_to(&mut |chunk| Ok(w.write_all(chunk)?))
    }

    /// Decodes exactly one value of this kind from `bytes`.
    fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        let (env, body) = split::<Self>(bytes)?;
        Self::from_parts(env, body)
    }

    /// Reads exactly one value of this kind from `r` (which may hold more after it); the body
    /// buffer grows with the bytes actually read.
    fn read_from<R: Read>(r: R) -> Result<Self, Error> {
        let mut body = Vec::new();
        let env = read_framed::<Self, R>(r, |chunk, declared| {
            reserve_geometric(&mut body, chunk.len(), declared).ok()?;
            body.extend_from_slice(chunk);
            Some(())
        })?;
        Self::from_parts(env, &body)
    }
}

/// Splits exactly one encoding of kind `T` into its validated envelope and its body, after
/// checking the length and the checksum; the body stays borrowed (zero-copy views use it).
pub(crate) fn split<T: Encoded>(bytes: &[u8]) -> Result<(Envelope, &[u8]), Error> {
    let Some(head) = bytes.first_chunk::<HEADER_BYTES>() else {
        return Err(short_header(bytes));
    };
    let (env, body_len) = T::parse_header(head)?;
    let total = HEADER_BYTES as u128 + body_len as u128;
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
    let body = &bytes[HEADER_BYTES..];
    let mut x = checksum_start(head);
    x.update(body);
    verify(head, x)?;
    Ok((env, body))
}

/// Reads exactly one encoding of kind `T` from `r`, handing the body to `take` in chunks of
/// at most 1 MiB as they arrive, then checks the checksum. Beyond one chunk, memory is
/// `take`'s, so a header that lies about its size costs at most one chunk.
pub(crate) fn read_framed<T: Encoded, R: Read>(
    mut r: R,
    mut take: impl FnMut(&[u8], u64) -> Option<()>,
) -> Result<Envelope, Error> {
    let mut head = [0u8; HEADER_BYTES];
    let got = read_full(&mut r, &mut head)?;
    if got < HEADER_BYTES {
        return Err(short_header(&head[..got]));
    }
    let (env, body_len) = T::parse_header(&head)?;
    let total = HEADER_BYTES as u128 + body_len as u128;
    let mut x = checksum_start(&head);
    let mut buf = vec![0u8; (CHUNK as u64).min(body_len) as usize];
    let mut left = body_len;
    while left > 0 {
        let n = (buf.len() as u64).min(left) as usize;
        let got = read_full(&mut r, &mut buf[..n])?;
        if got < n {
            return Err(Error::Truncated {
                needed: total,
                got: total - left as u128 + got as u128,
            });
        }
        x.update(&buf[..n]);
        take(&buf[..n], body_len).ok_or(Error::AllocationFailed { bytes: total })?;
        left -= n as u64;
    }
    verify(&head, x)?;
    Ok(env)
}

/// Reads exactly one encoding of kind `T` from `r`, handing its body to `decode` as a reader
/// (with the length the header declares) so the kind can read straight into its final
/// storage: memory is the value plus whatever buffer `decode` uses, never a copy of the body.
///
/// The errors are `from_bytes`'s, in its order: whatever `decode` leaves unread is still read
/// and checksummed, so a short input is [`Error::Truncated`] and a corrupt one
/// [`Error::ChecksumMismatch`] before any error `decode` found in the content.
pub(crate) fn read_streamed<T: Encoded, R: Read>(
    mut r: R,
    decode: impl FnOnce(Envelope, u64, &mut Body<'_, R>) -> Result<T, Error>,
) -> Result<T, Error> {
    let mut head = [0u8; HEADER_BYTES];
    let got = read_full(&mut r, &mut head)?;
    if got < HEADER_BYTES {
        return Err(short_header(&head[..got]));
    }
    let (env, body_len) = T::parse_header(&head)?;
    let mut body = Body {
        r: &mut r,
        left: body_len,
        x: checksum_start(&head),
    };
    let decoded = decode(env, body_len, &mut body);
    #[cfg(feature = "std")]
    if let Err(e @ Error::Io { .. }) = decoded {
        return Err(e);
    }
    let unread = body.left;
    let mut buf = vec![0u8; (CHUNK as u64).min(unread) as usize];
    while body.left > 0 {
        let n = (buf.len() as u64).min(body.left) as usize;
        if read_full(&mut body, &mut buf[..n])? < n {
            let total = HEADER_BYTES as u128 + body_len as u128;
            return Err(Error::Truncated {
                needed: total,
                got: total - body.left as u128,
            });
        }
    }
    verify(&head, body.x)?;
    let value = decoded?;
    if unread != 0 {
        return Err(Error::InvalidHeader("body longer than its contents"));
    }
    Ok(value)
}

/// Runs a streaming `decode` over a body already in memory (checked by [`split`]): the same
/// validation as [`read_streamed`], so `from_bytes` and `read_from` cannot drift apart.
pub(crate) fn decode_slice<T>(
    body: &[u8],
    decode: impl FnOnce(u64, &mut &[u8]) -> Result<T, Error>,
) -> Result<T, Error> {
    let mut rest = body;
    let value = decode(body.len() as u64, &mut rest)?;
    if !rest.is_empty() {
        return Err(Error::InvalidHeader("body longer than its contents"));
    }
    Ok(value)
}

/// The body of an encoding being read: at most the length its header declares, checksummed
/// as it passes. Reads past the end return 0 bytes, so a nested decoder that wants more sees a
/// short input.
pub(crate) struct Body<'r, R> {
    r: &'r mut R,
    left: u64,
    x: Xxh3,
}

impl<R: Read> Read for Body<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = (buf.len() as u64).min(self.left) as usize;
        if n == 0 {
            return Ok(0);
        }
        let got = self.r.read(&mut buf[..n])?;
        self.x.update(&buf[..got]);
        self.left -= got as u64;
        Ok(got)
    }
}

/// Reads exactly `buf.len()` bytes of a body whose declared length guarantees them; a short
/// input is reported as `short` (the outer reader turns it into [`Error::Truncated`]).
pub(crate) fn read_exact_body<R: Read>(r: &mut R, buf: &mut [u8]) -> Result<(), Error> {
    if read_full(r, buf)? < buf.len() {
        // Only an input that ends early gets here; `read_streamed` reports it as truncation.
        return Err(Error::InvalidHeader("body cut short"));
    }
    Ok(())
}

/// Reads `n` little-endian words from a body into a vector that grows geometrically with the
/// bytes actually delivered (a lying length costs at most one step), reserving `extra` more at
/// the end for the caller.
pub(crate) fn read_words<R: Read>(r: &mut R, n: u64, extra: usize) -> Result<Vec<u64>, Error> {
    let mut words = Vec::new();
    let declared = n.saturating_add(extra as u64);
    let refused = || Error::AllocationFailed {
        bytes: declared as u128 * 8,
    };
    read_word_chunks(r, n, |chunk| {
        reserve_geometric(&mut words, chunk.len() / 8, declared).map_err(|_| refused())?;
        words.extend(chunk.chunks_exact(8).map(u64_le));
        Ok(())
    })?;
    words.try_reserve_exact(extra).map_err(|_| refused())?;
    Ok(words)
}

/// [`read_words`] straight into a [`PageBuf`] (on huge pages when large and `huge`), growing
/// as it does: a large array is read once into its final pages, never copied from a vector.
pub(crate) fn read_words_paged<R: Read>(
    r: &mut R,
    n: u64,
    huge: bool,
) -> Result<PageBuf<u64>, Error> {
    let mut words = PageBuf::new(huge);
    read_word_chunks(r, n, |chunk| {
        reserve_pages_geometric(&mut words, chunk.len() / 8, n).ok_or(Error::AllocationFailed {
            bytes: n as u128 * 8,
        })?;
        chunk.chunks_exact(8).for_each(|c| words.push(u64_le(c)));
        Ok(())
    })?;
    Ok(words)
}

/// Reads the `n` words of a body in chunks of at most [`CHUNK`] bytes, each handed to `take`.
fn read_word_chunks<R: Read>(
    r: &mut R,
    n: u64,
    mut take: impl FnMut(&[u8]) -> Result<(), Error>,
) -> Result<(), Error> {
    let mut buf = vec![0u8; (CHUNK as u64).min(n.saturating_mul(8)) as usize];
    let mut left = n;
    while left > 0 {
        let words = (buf.len() as u64 / 8).min(left) as usize;
        read_exact_body(r, &mut buf[..words * 8])?;
        take(&buf[..words * 8])?;
        left -= words as u64;
    }
    Ok(())
}

fn u64_le(bytes: &[u8]) -> u64 {
    u64::from_le_bytes(bytes.try_into().expect("8 bytes"))
}

/// Makes room for `more` elements in `v`, which will hold `declared` in all (the size the
/// header states). The capacity doubles with what has been read (so a read costs linear time:
/// at most about twice the final size is ever copied), is never more than twice what the input
/// has delivered (so a lying header costs at most one step), and is capped at the declared
/// size (so the final vector is exactly the filter).
pub(crate) fn reserve_geometric<T>(
    v: &mut Vec<T>,
    more: usize,
    declared: u64,
) -> Result<(), TryReserveError> {
    v.try_reserve_exact(geometric_room(v.len(), v.capacity(), more, declared))
}

/// [`reserve_geometric`] for a [`PageBuf`] (a large one on huge pages, its pages moved, not
/// copied, as it grows); `None` when the memory is refused.
pub(crate) fn reserve_pages_geometric<T>(
    v: &mut PageBuf<T>,
    more: usize,
    declared: u64,
) -> Option<()> {
    v.try_reserve_exact(geometric_room(v.len(), v.capacity(), more, declared))
}

/// The room beyond `len` that [`reserve_geometric`] reserves for `more` elements (0 when
/// `capacity` holds them).
fn geometric_room(len: usize, capacity: usize, more: usize, declared: u64) -> usize {
    let need = len + more;
    if need <= capacity {
        return 0;
    }
    let declared = usize::try_from(declared).unwrap_or(usize::MAX);
    let target = need.max(capacity.saturating_mul(2)).min(declared.max(need));
    target - len
}

/// A checksum in progress: header bytes without the checksum field; the body follows.
fn checksum_start(header: &[u8; HEADER_BYTES]) -> Xxh3 {
    let mut x = Xxh3::new();
    x.update(&header[..48]);
    x.update(&header[56..]);
    x
}

/// Compares the checksum stored in `header` with the one computed.
fn verify(header: &[u8; HEADER_BYTES], x: Xxh3) -> Result<(), Error> {
    let stored = u64_at(header, 48);
    let computed = x.digest();
    if computed == stored {
        Ok(())
    } else {
        Err(Error::ChecksumMismatch { stored, computed })
    }
}

/// The error for an input that ends after `head.len() < HEADER_BYTES` bytes: a bad magic if
/// enough of it shows, else truncation.
fn short_header(head: &[u8]) -> Error {
    if head.len() >= 8 && head[..8] != MAGIC {
        Error::BadMagic
    } else {
        Error::Truncated {
            needed: HEADER_BYTES as u128,
            got: head.len() as u128,
        }
    }
}

/// Reads until `buf` is full or the input ends; returns the bytes read.
fn read_full<R: Read>(r: &mut R, buf: &mut [u8]) -> Result<usize, Error> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if io::interrupted(&e) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(n)
}

/// The little-endian `u64` at byte `i` of a header.
pub(crate) fn u64_at(h: &[u8; HEADER_BYTES], i: usize) -> u64 {
    u64::from_le_bytes(h[i..i + 8].try_into().expect("8 bytes"))
}

/// Feeds `words` to `out` little-endian, in chunks of at most 1 MiB.
pub(crate) fn words_le(words: &[u64], out: &mut Out<'_>) -> Result<(), Error> {
    let mut buf = Vec::with_capacity(CHUNK.min(words.len() * 8));
    for chunk in words.chunks(CHUNK / 8) {
        buf.extend(chunk.iter().flat_map(|w| w.to_le_bytes()));
        out(&buf)?;
        buf.clear();
    }
    Ok(())
}

/// Feeds `blocks` to `out` as little-endian words, in chunks of at most 1 MiB.
pub(crate) fn blocks_le(blocks: &[Block], out: &mut Out<'_>) -> Result<(), Error> {
    let mut buf = Vec::with_capacity(CHUNK.min(blocks.len() * BLOCK_BYTES));
    for chunk in blocks.chunks(CHUNK / BLOCK_BYTES) {
        buf.extend(chunk.iter().flat_map(|b| b.0).flat_map(u64::to_le_bytes));
        out(&buf)?;
        buf.clear();
    }
    Ok(())
}

/// Appends the blocks of `bytes` (whole 64-byte blocks of little-endian words) to `out`, in
/// the room reserved there.
///
/// # Panics
/// If `out` has no room for them.
pub(crate) fn blocks_from_le(bytes: &[u8], out: &mut PageBuf<Block>) {
    for b in bytes.chunks_exact(BLOCK_BYTES) {
        out.push(Block(core::array::from_fn(|w| {
            u64::from_le_bytes(b[8 * w..8 * w + 8].try_into().expect("8 bytes"))
        })));
    }
}
