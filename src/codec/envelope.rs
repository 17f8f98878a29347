//! The header every kind shares, and the family's reading of it: the 64 bytes of the plain
//! format (magic, version, layout id, hash id, seed and checksum in the same places), with a
//! body whose length the header states. `docs/FORMAT.md` specifies it.
//!
//! | offset | bytes | field |
//! |---:|---:|---|
//! | 0 | 8 | magic `BLKBLOOM` |
//! | 8 | 2 | format version, `u16` (1) |
//! | 10 | 1 | layout id: the kind ([`kind`]) |
//! | 11 | 1 | a small parameter of the kind |
//! | 12 | 1 | hash id ([`KeyHash`]: 1 = seeded XXH3-64, 2 = AESH-64 but for 4- and 8-byte keys) |
//! | 13 | 3 | reserved, zero |
//! | 16 | 8 | hash seed |
//! | 24 | 24 | three `u64` fields of the kind |
//! | 48 | 8 | checksum: XXH3-64 (seed 0) of bytes 0..48, 56..64, then the body |
//! | 56 | 8 | body length in bytes, `u64` (zero in the plain format, which implies it) |
//! | 64 | … | body |
//!
//! Decoding checks everything it can before the kind looks at its body: magic, version, the
//! layout id against the kind asked for (a different known kind is [`Error::WrongKind`]),
//! hash id, reserved bytes, the body length against the bytes present, and the checksum. The
//! kind then validates its fields and body and must not trust either for allocation sizes
//! beyond what the body's length justifies.

use super::{Encoded, HEADER_BYTES, MAGIC, VERSION, kind, u64_at};
use crate::error::Error;
use crate::hashing::KeyHash;

/// The header fields of one encoded filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Envelope {
    /// The layout id of the kind ([`kind`]).
    pub kind: u8,
    /// A small parameter of the kind (byte 11).
    pub param: u8,
    /// The key hash (byte 12: its hash id).
    pub hash: KeyHash,
    /// The hash seed.
    pub seed: u64,
    /// Three kind-specific fields (bytes 24..48).
    pub fields: [u64; 3],
}

impl Envelope {
    /// The header with bytes 56..64 set to `stated` and the checksum field zero.
    pub(super) fn header(&self, stated: u64) -> [u8; HEADER_BYTES] {
        let mut h = [0u8; HEADER_BYTES];
        h[0..8].copy_from_slice(&MAGIC);
        h[8..10].copy_from_slice(&VERSION.to_le_bytes());
        h[10] = self.kind;
        h[11] = self.param;
        h[12] = self.hash.id();
        h[16..24].copy_from_slice(&self.seed.to_le_bytes());
        for (i, f) in self.fields.iter().enumerate() {
            h[24 + 8 * i..32 + 8 * i].copy_from_slice(&f.to_le_bytes());
        }
        h[56..64].copy_from_slice(&stated.to_le_bytes());
        h
    }
}

/// The checks every kind makes first, in this order: magic, version, layout id (another
/// known kind is [`Error::WrongKind`], an unknown id [`Error::UnsupportedLayout`]). Returns
/// the fields as read.
pub(super) fn preamble<T: Encoded>(h: &[u8; HEADER_BYTES]) -> Result<Envelope, Error> {
    if h[0..8] != MAGIC {
        return Err(Error::BadMagic);
    }
    let version = u16::from_le_bytes([h[8], h[9]]);
    if version != VERSION {
        return Err(Error::UnsupportedVersion(version));
    }
    if !T::is_kind(h[10]) {
        return Err(match kind::name(h[10]) {
            Some(found) => Error::WrongKind {
                expected: kind::name(T::KIND).unwrap_or("unknown"),
                found,
            },
            None => Error::UnsupportedLayout(h[10]),
        });
    }
    Ok(Envelope {
        kind: h[10],
        param: h[11],
        // Read by `check_hash`, which the kinds call next (after their own parameter checks).
        hash: KeyHash::Xxh3,
        seed: u64_at(h, 16),
        fields: [u64_at(h, 24), u64_at(h, 32), u64_at(h, 40)],
    })
}

/// The hash id check: an id this build knows, and one kind `T` hashes with
/// ([`Encoded::HASHES`]); sets `env.hash`.
pub(super) fn check_hash<T: Encoded>(
    h: &[u8; HEADER_BYTES],
    env: &mut Envelope,
) -> Result<(), Error> {
    match KeyHash::from_id(h[12]) {
        Some(hash) if T::HASHES.contains(&hash) => {
            env.hash = hash;
            Ok(())
        }
        _ => Err(Error::UnsupportedHash(h[12])),
    }
}

/// Validates a family header of kind `T`: the envelope and the stated body length.
///
/// # Errors
/// `BadMagic`, `UnsupportedVersion`, `WrongKind` (another known kind), `UnsupportedLayout`
/// (an unknown id), `UnsupportedHash`, `InvalidHeader` (reserved bytes).
pub(super) fn parse_family<T: Encoded>(h: &[u8; HEADER_BYTES]) -> Result<(Envelope, u64), Error> {
    let mut env = preamble::<T>(h)?;
    check_hash::<T>(h, &mut env)?;
    if h[13..16] != [0; 3] {
        return Err(Error::InvalidHeader("reserved bytes are not zero"));
    }
    Ok((env, u64_at(h, 56)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::Out;
    use alloc::vec::Vec;

    /// A kind whose body is raw bytes: the codec alone.
    #[derive(Debug, PartialEq)]
    struct Raw {
        env: Envelope,
        body: Vec<u8>,
    }

    impl Encoded for Raw {
        const KIND: u8 = kind::COUNTING;

        fn envelope(&self) -> Envelope {
            self.env
        }

        fn body_len(&self) -> usize {
            self.body.len()
        }

        fn body(&self, out: &mut Out<'_>) -> Result<(), Error> {
            // Uneven chunks: the checksum and the write must not depend on them.
            for chunk in self.body.chunks(7) {
                out(chunk)?;
            }
            Ok(())
        }

        fn from_parts(env: Envelope, body: &[u8]) -> Result<Raw, Error> {
            Ok(Raw {
                env,
                body: body.to_vec(),
            })
        }
    }

    fn sample() -> Raw {
        let env = Envelope {
            kind: Raw::KIND,
            param: 4,
            hash: KeyHash::Xxh3,
            seed: 7,
            fields: [1, 2, 3],
        };
        Raw {
            env,
            body: (0..200u8).collect(),
        }
    }

    #[test]
    fn round_trips_through_bytes_and_readers() {
        let raw = sample();
        let bytes = raw.to_bytes();
        assert_eq!(bytes.len(), HEADER_BYTES + raw.body.len());
        assert_eq!(u64_at(bytes.first_chunk().unwrap(), 56), 200);
        let (env, body) = super::super::split::<Raw>(&bytes).unwrap();
        assert_eq!((env, body), (raw.env, &raw.body[..]));
        assert_eq!(Raw::from_bytes(&bytes).unwrap(), raw);
        assert_eq!(Raw::read_from(&bytes[..]).unwrap(), raw);
    }

    #[test]
    fn rejects_what_it_should() {
        let bytes = sample().to_bytes();
        let mut other = bytes.clone();
        other[10] = kind::SCALABLE;
        assert!(matches!(
            Raw::from_bytes(&other),
            Err(Error::WrongKind {
                expected: "counting filter",
                found: "scalable filter"
            })
        ));
        assert!(matches!(
            Raw::from_bytes(&bytes[..100]),
            Err(Error::Truncated {
                needed: 264,
                got: 100
            })
        ));
        assert!(matches!(
            Raw::read_from(&bytes[..100]),
            Err(Error::Truncated {
                needed: 264,
                got: 100
            })
        ));
        let mut long = bytes.clone();
        long.push(0);
        assert!(matches!(
            Raw::from_bytes(&long),
            Err(Error::TrailingBytes { .. })
        ));
        let mut flipped = bytes.clone();
        flipped[100] ^= 1;
        assert!(matches!(
            Raw::from_bytes(&flipped),
            Err(Error::ChecksumMismatch { .. })
        ));
        assert!(matches!(
            Raw::read_from(&flipped[..]),
            Err(Error::ChecksumMismatch { .. })
        ));
        let mut unknown = bytes.clone();
        unknown[10] = 200;
        assert!(matches!(
            Raw::from_bytes(&unknown),
            Err(Error::UnsupportedLayout(200))
        ));
        // A body length near u64::MAX allocates nothing before the input runs out.
        let mut huge = bytes;
        huge[56..64].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(matches!(
            Raw::read_from(&huge[..]),
            Err(Error::Truncated { .. })
        ));
    }
}
