//! The format family's envelope: the 64-byte header every non-plain filter kind shares with
//! the plain format (magic, version, layout id, hash id, seed and checksum in the same places),
//! followed by a body whose length the header states. `docs/FORMAT.md` specifies it.
//!
//! | offset | bytes | field |
//! |---:|---:|---|
//! | 0 | 8 | magic `BLKBLOOM` |
//! | 8 | 2 | format version, `u16` (1) |
//! | 10 | 1 | layout id: the kind ([`crate::format::kind`]) |
//! | 11 | 1 | a small parameter of the kind |
//! | 12 | 1 | hash id (1 = seeded XXH3-64) |
//! | 13 | 3 | reserved, zero |
//! | 16 | 8 | hash seed |
//! | 24 | 24 | three `u64` fields of the kind |
//! | 48 | 8 | checksum: XXH3-64 (seed 0) of bytes 0..48, 56..64, then the body |
//! | 56 | 8 | body length in bytes, `u64` |
//! | 64 | … | body |
//!
//! Decoding checks everything it can before the kind looks at its body: magic, version, the
//! layout id against the kind asked for (a different known kind is [`Error::WrongKind`]),
//! hash id, reserved bytes, the body length against the bytes present, and the checksum. The
//! kind then validates its fields and body and must not trust either for allocation sizes
//! beyond what the body's length justifies.

use std::io::{Read, Write};

use xxhash_rust::xxh3::Xxh3;

use crate::Error;
use crate::format::{
    HASH_XXH3, HEADER_BYTES, MAGIC, VERSION, checksum_start, kind, read_full, short_header,
};

/// Bytes a reader is consumed in: the most a lying header makes us allocate ahead of data.
const READ_CHUNK: usize = 1 << 20;

/// The header fields of one encoded filter of a non-plain kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Envelope {
    /// The layout id of the kind ([`kind`]).
    pub kind: u8,
    /// A small parameter of the kind (byte 11).
    pub param: u8,
    /// The hash seed.
    pub seed: u64,
    /// Three kind-specific fields (bytes 24..48).
    pub fields: [u64; 3],
}

impl Envelope {
    fn header(&self, body_len: usize) -> [u8; HEADER_BYTES] {
        let mut h = [0u8; HEADER_BYTES];
        h[0..8].copy_from_slice(&MAGIC);
        h[8..10].copy_from_slice(&VERSION.to_le_bytes());
        h[10] = self.kind;
        h[11] = self.param;
        h[12] = HASH_XXH3;
        h[16..24].copy_from_slice(&self.seed.to_le_bytes());
        for (i, f) in self.fields.iter().enumerate() {
            h[24 + 8 * i..32 + 8 * i].copy_from_slice(&f.to_le_bytes());
        }
        h[56..64].copy_from_slice(&(body_len as u64).to_le_bytes());
        h
    }

    /// Header plus `body`, checksummed.
    pub(crate) fn encode(&self, body: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(HEADER_BYTES + body.len());
        self.write_to(body, &mut out)
            .expect("writing to a Vec cannot fail");
        out
    }

    /// Writes header plus `body` to `w`.
    pub(crate) fn write_to<W: Write>(&self, body: &[u8], mut w: W) -> Result<(), Error> {
        let mut h = self.header(body.len());
        let mut x = checksum_start(&h);
        x.update(body);
        h[48..56].copy_from_slice(&x.digest().to_le_bytes());
        w.write_all(&h)?;
        w.write_all(body)?;
        Ok(())
    }

    /// Splits exactly one encoded filter of kind `want` into its envelope and body.
    ///
    /// # Errors
    /// `BadMagic`, `UnsupportedVersion`, `WrongKind` (another known kind),
    /// `UnsupportedLayout` (an unknown id), `UnsupportedHash`, `InvalidHeader` (reserved
    /// bytes), `Truncated`, `TrailingBytes`, `ChecksumMismatch`.
    pub(crate) fn decode(bytes: &[u8], want: u8) -> Result<(Envelope, &[u8]), Error> {
        let Some(head) = bytes.first_chunk::<HEADER_BYTES>() else {
            return Err(short_header(bytes));
        };
        let (env, body_len, stored) = parse(head, want)?;
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
        verify(stored, x)?;
        Ok((env, body))
    }

    /// Reads exactly one encoded filter of kind `want` from `r` (which may hold more after
    /// it). The body buffer grows with the bytes actually read, in 1 MiB steps.
    ///
    /// # Errors
    /// As [`decode`](Self::decode) (but not `TrailingBytes`), plus `Io` and
    /// `AllocationFailed`.
    pub(crate) fn read_from<R: Read>(mut r: R, want: u8) -> Result<(Envelope, Vec<u8>), Error> {
        let mut head = [0u8; HEADER_BYTES];
        let got = read_full(&mut r, &mut head)?;
        if got < HEADER_BYTES {
            return Err(short_header(&head[..got]));
        }
        let (env, body_len, stored) = parse(&head, want)?;
        let total = HEADER_BYTES as u128 + body_len as u128;
        let mut body: Vec<u8> = Vec::new();
        let mut left = body_len as u128;
        while left > 0 {
            let n = (READ_CHUNK as u128).min(left) as usize;
            body.try_reserve_exact(n)
                .map_err(|_| Error::AllocationFailed { bytes: total })?;
            let start = body.len();
            body.resize(start + n, 0);
            let got = read_full(&mut r, &mut body[start..])?;
            if got < n {
                return Err(Error::Truncated {
                    needed: total,
                    got: (HEADER_BYTES + start + got) as u128,
                });
            }
            left -= n as u128;
        }
        let mut x = checksum_start(&head);
        x.update(&body);
        verify(stored, x)?;
        Ok((env, body))
    }
}

/// Validates the header of kind `want`: the envelope, the body length and the stored checksum.
fn parse(h: &[u8; HEADER_BYTES], want: u8) -> Result<(Envelope, u64, u64), Error> {
    let u64_at = |i: usize| u64::from_le_bytes(h[i..i + 8].try_into().expect("8 bytes"));
    if h[0..8] != MAGIC {
        return Err(Error::BadMagic);
    }
    let version = u16::from_le_bytes([h[8], h[9]]);
    if version != VERSION {
        return Err(Error::UnsupportedVersion(version));
    }
    if h[10] != want {
        return Err(match kind::name(h[10]) {
            Some(found) => Error::WrongKind {
                expected: kind::name(want).unwrap_or("unknown"),
                found,
            },
            None => Error::UnsupportedLayout(h[10]),
        });
    }
    if h[12] != HASH_XXH3 {
        return Err(Error::UnsupportedHash(h[12]));
    }
    if h[13..16] != [0; 3] {
        return Err(Error::InvalidHeader("reserved bytes are not zero"));
    }
    let env = Envelope {
        kind: h[10],
        param: h[11],
        seed: u64_at(16),
        fields: [u64_at(24), u64_at(32), u64_at(40)],
    };
    Ok((env, u64_at(56), u64_at(48)))
}

fn verify(stored: u64, x: Xxh3) -> Result<(), Error> {
    let computed = x.digest();
    if computed == stored {
        Ok(())
    } else {
        Err(Error::ChecksumMismatch { stored, computed })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEST_KIND: u8 = kind::COUNTING;

    fn sample() -> (Envelope, Vec<u8>) {
        let env = Envelope {
            kind: TEST_KIND,
            param: 4,
            seed: 7,
            fields: [1, 2, 3],
        };
        (env, (0..200u8).collect())
    }

    #[test]
    fn round_trips_through_bytes_and_readers() {
        let (env, body) = sample();
        let bytes = env.encode(&body);
        assert_eq!(bytes.len(), HEADER_BYTES + body.len());
        let (e2, b2) = Envelope::decode(&bytes, TEST_KIND).unwrap();
        assert_eq!((e2, b2), (env, &body[..]));
        let (e3, b3) = Envelope::read_from(&bytes[..], TEST_KIND).unwrap();
        assert_eq!((e3, b3), (env, body));
    }

    #[test]
    fn rejects_what_it_should() {
        let (env, body) = sample();
        let bytes = env.encode(&body);
        assert!(matches!(
            Envelope::decode(&bytes, kind::SCALABLE),
            Err(Error::WrongKind { .. })
        ));
        assert!(matches!(
            Envelope::decode(&bytes[..100], TEST_KIND),
            Err(Error::Truncated { .. })
        ));
        assert!(matches!(
            Envelope::read_from(&bytes[..100], TEST_KIND),
            Err(Error::Truncated { .. })
        ));
        let mut long = bytes.clone();
        long.push(0);
        assert!(matches!(
            Envelope::decode(&long, TEST_KIND),
            Err(Error::TrailingBytes { .. })
        ));
        let mut flipped = bytes.clone();
        flipped[100] ^= 1;
        assert!(matches!(
            Envelope::decode(&flipped, TEST_KIND),
            Err(Error::ChecksumMismatch { .. })
        ));
        let mut unknown = bytes.clone();
        unknown[10] = 200;
        assert!(matches!(
            Envelope::decode(&unknown, TEST_KIND),
            Err(Error::UnsupportedLayout(200))
        ));
        // A body length near u64::MAX allocates nothing before the input runs out.
        let mut huge = bytes;
        huge[56..64].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(matches!(
            Envelope::read_from(&huge[..], TEST_KIND),
            Err(Error::Truncated { .. })
        ));
    }
}
