//! `Serialize` and `Deserialize` (cargo feature `serde`) through the crate's own encoding.
//!
//! Every filter kind serializes as one byte string: exactly the bytes of its `to_bytes`
//! (header, body and checksum, [`format`](crate::format)), and deserializes through its
//! `from_bytes`. So a payload is checked as a file is: a corrupt, truncated or foreign one
//! fails with the same [`Error`](crate::Error) that `from_bytes` gives, carried as the
//! format's error (`serde::de::Error::custom`, whose message is the error's `Display`).
//! Formats with a native byte string (bincode, CBOR, MessagePack) store the encoding as it
//! is; JSON writes it as an array of numbers, which deserializes too.
//!
//! [`AtomicBloomFilter`] serializes a snapshot of its words and deserializes as a plain
//! filter turned atomic. [`FilterRef`] only serializes, as the filter it views (it borrows its
//! bytes, so it cannot be made from a payload that does not outlive it). The Parquet
//! [`SplitBlockFilter`](crate::parquet::SplitBlockFilter) has no header of its own: it
//! serializes as its bitset, as Parquet stores it, validated by `from_bitset` on the way in.

use alloc::vec::Vec;
use core::fmt;
use core::marker::PhantomData;

use serde::de::{self, Deserialize, Deserializer, SeqAccess, Visitor};
use serde::ser::{Serialize, Serializer};

use crate::family::bloomier::BloomierFilter;
use crate::family::deletable::DeletableBloomFilter;
use crate::family::scalable::ScalableBloomFilter;
use crate::filter::{AtomicBloomFilter, BloomFilter, CountingBloomFilter, FilterRef};

/// Most bytes a sequence's size hint may reserve up front: a hostile hint costs no more,
/// and a longer payload grows the buffer as its bytes arrive.
const MAX_PREALLOCATION: usize = 1 << 20;

/// Hands the payload's bytes to `decode`, borrowed where the format can lend them.
struct EncodedBytes<T, F>(F, PhantomData<T>);

impl<'de, T, F: FnOnce(&[u8]) -> Result<T, crate::Error>> Visitor<'de> for EncodedBytes<T, F> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the bytes of a blockbloom filter's encoding")
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<T, E> {
        (self.0)(v).map_err(E::custom)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<T, A::Error> {
        let mut bytes = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(MAX_PREALLOCATION));
        while let Some(b) = seq.next_element::<u8>()? {
            bytes.push(b);
        }
        (self.0)(&bytes).map_err(de::Error::custom)
    }
}

fn decode<'de, D, T>(d: D, from_bytes: fn(&[u8]) -> Result<T, crate::Error>) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
{
    d.deserialize_bytes(EncodedBytes(from_bytes, PhantomData))
}

/// `Serialize` as `to_bytes`, `Deserialize` through `from_bytes`.
macro_rules! through_encoding {
    ($($t:ty),* $(,)?) => {$(
        impl Serialize for $t {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_bytes(&self.to_bytes())
            }
        }

        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                decode(d, <$t>::from_bytes)
            }
        }
    )*};
}

through_encoding!(
    BloomFilter,
    CountingBloomFilter,
    DeletableBloomFilter,
    ScalableBloomFilter,
    BloomierFilter,
);

impl Serialize for AtomicBloomFilter {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(&self.snapshot().to_bytes())
    }
}

impl<'de> Deserialize<'de> for AtomicBloomFilter {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        decode(d, |b| {
            BloomFilter::from_bytes(b).map(BloomFilter::into_atomic)
        })
    }
}

impl Serialize for FilterRef<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(&self.to_filter().to_bytes())
    }
}

#[cfg(feature = "std")]
impl Serialize for crate::parquet::SplitBlockFilter {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(self.as_bitset())
    }
}

#[cfg(feature = "std")]
impl<'de> Deserialize<'de> for crate::parquet::SplitBlockFilter {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        decode(d, crate::parquet::SplitBlockFilter::from_bitset)
    }
}
