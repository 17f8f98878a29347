//! The shapes of keys a batch can take ([`Keys`]): integer slices of every width, 16-byte
//! keys, byte strings in their four layouts, and hashes; and, for the filters whose hash
//! treats some shapes apart, the same keys grouped by the hash that takes them
//! ([`FixedWidth`], [`Aesh`], made by the hash plan). Data and its layout only: how a shape
//! becomes hashes is `crate::hashing` and `kernel::hash` (the routines) and `kernel::plan`
//! (which routine). A new key shape is a variant here, and its arms in the plan.

use crate::error::Error;
use crate::hashing::aes::ByteSource;
use crate::hashing::{KeyHash, WordHashKind};
use crate::simd::Word;

/// Integer keys narrower than 64 bits, in place: each is its 64-bit value ([`Word`]), widened
/// in lanes as a chunk is hashed (no copy of the keys).
#[derive(Clone, Copy)]
pub enum Narrow<'a> {
    I8(&'a [i8]),
    U8(&'a [u8]),
    I16(&'a [i16]),
    U16(&'a [u16]),
    I32(&'a [i32]),
    U32(&'a [u32]),
}

/// `$body` for the slice `$k` of whichever width `$n` holds (a generic call per width).
macro_rules! each_width {
    ($n:expr, $k:ident => $body:expr) => {
        match $n {
            $crate::kernel::shapes::Narrow::I8($k) => $body,
            $crate::kernel::shapes::Narrow::U8($k) => $body,
            $crate::kernel::shapes::Narrow::I16($k) => $body,
            $crate::kernel::shapes::Narrow::U16($k) => $body,
            $crate::kernel::shapes::Narrow::I32($k) => $body,
            $crate::kernel::shapes::Narrow::U32($k) => $body,
        }
    };
}

pub(crate) use each_width;

impl<'a> Narrow<'a> {
    pub(crate) fn len(self) -> usize {
        each_width!(self, k => k.len())
    }

    pub(crate) fn slice(self, start: usize, end: usize) -> Narrow<'a> {
        match self {
            Narrow::I8(k) => Narrow::I8(&k[start..end]),
            Narrow::U8(k) => Narrow::U8(&k[start..end]),
            Narrow::I16(k) => Narrow::I16(&k[start..end]),
            Narrow::U16(k) => Narrow::U16(&k[start..end]),
            Narrow::I32(k) => Narrow::I32(&k[start..end]),
            Narrow::U32(k) => Narrow::U32(&k[start..end]),
        }
    }

    fn stream(self) -> (*const u8, usize) {
        fn of<T>(k: &[T]) -> (*const u8, usize) {
            (k.as_ptr().cast(), size_of::<T>())
        }
        each_width!(self, k => of(k))
    }

    /// Key `i`'s 64-bit value.
    #[cfg(any(feature = "arrow-59", feature = "arrow-60"))]
    #[inline]
    pub(crate) fn value(self, i: usize) -> u64 {
        each_width!(self, k => k[i].value())
    }

    /// `f` of each key's value, in order, into `out` (same length).
    #[inline(always)]
    pub(crate) fn values_into(self, out: &mut [u64], f: impl Fn(u64) -> u64) {
        each_width!(self, k => {
            for (o, &x) in out.iter_mut().zip(k) {
                *o = f(x.value());
            }
        })
    }
}

/// Keys of a batch: raw integer keys (hashed in lanes), 16-byte keys, byte strings, or hashes.
#[derive(Clone, Copy)]
pub enum Keys<'a> {
    U64(&'a [u64]),
    /// Integers of 8, 16 and 32 bits, each hashed as its 64-bit value (as `U64`).
    Narrow(Narrow<'a>),
    /// 16-byte keys as integers: their 16 little-endian bytes are the key.
    U128(&'a [u128]),
    /// 16-byte keys as bytes.
    Fixed16(&'a [[u8; 16]]),
    Bytes(ByteKeys<'a>),
    Hashes(&'a [u64]),
    /// Keys of a filter of `KeyHash::Aesh` or of a hash with an integer hash of its own that
    /// AESH-64 hashes ([`Keys::under`]).
    Aesh(Aesh<'a>),
    /// Integer and 16-byte keys of a filter whose hash takes them with an integer hash of its
    /// own ([`KeyHash::word_hash`]), which the kind names.
    Fixed(WordHashKind, FixedWidth<'a>),
}

/// The keys an integer hash of a filter's own ([`KeyHash::word_hash`]) takes: the integer
/// forms of 4, 8 and 16 bytes (byte strings of those lengths are among [`Aesh::Bytes`]).

#[derive(Clone, Copy)]
pub enum FixedWidth<'a> {
    Narrow(Narrow<'a>),
    U64(&'a [u64]),
    U128(&'a [u128]),
    Fixed16(&'a [[u8; 16]]),
}

impl<'a> FixedWidth<'a> {
    /// The same keys as `KeyHash::Xxh3` holds them.
    #[inline(always)]
    pub(crate) fn plain(self) -> Keys<'a> {
        match self {
            FixedWidth::Narrow(k) => Keys::Narrow(k),
            FixedWidth::U64(k) => Keys::U64(k),
            FixedWidth::U128(k) => Keys::U128(k),
            FixedWidth::Fixed16(k) => Keys::Fixed16(k),
        }
    }

    /// Keys `start..end`.
    #[inline(always)]
    pub(crate) fn slice(self, start: usize, end: usize) -> FixedWidth<'a> {
        match self {
            FixedWidth::Narrow(k) => FixedWidth::Narrow(k.slice(start, end)),
            FixedWidth::U64(k) => FixedWidth::U64(&k[start..end]),
            FixedWidth::U128(k) => FixedWidth::U128(&k[start..end]),
            FixedWidth::Fixed16(k) => FixedWidth::Fixed16(&k[start..end]),
        }
    }

    /// Hashes every key into `out` (same length), one at a time, `word` taking each integer's
    /// 64-bit value and `wide` each 16-byte key's: the scalar reference's.
    #[inline(always)]
    pub(crate) fn hash_each(
        self,
        word: impl Fn(u64) -> u64,
        wide: impl Fn(u128) -> u64,
        out: &mut [u64],
    ) {
        match self {
            FixedWidth::Narrow(keys) => keys.values_into(out, word),
            FixedWidth::U64(keys) => {
                for (o, &x) in out.iter_mut().zip(keys) {
                    *o = word(x);
                }
            }
            FixedWidth::U128(keys) => {
                for (o, &x) in out.iter_mut().zip(keys) {
                    *o = wide(x);
                }
            }
            FixedWidth::Fixed16(keys) => {
                for (o, x) in out.iter_mut().zip(keys) {
                    *o = wide(u128::from_le_bytes(*x));
                }
            }
        }
    }
}

/// The keys AESH-64 hashes: the byte strings of every hash but `KeyHash::Xxh3`, and the
/// 16-byte keys of [`KeyHash::Aesh`].
#[derive(Clone, Copy)]
pub enum Aesh<'a> {
    /// Byte strings under the hash: AESH-64 but for the lengths it gives an integer hash
    /// ([`KeyHash::word_width`]): 4 and 8 bytes with XXH3 under `KeyHash::Aesh`, as it does
    /// the integer forms of those widths; 4, 8 and 16 bytes with the hash's own integer hash
    /// under a hash that has one ([`KeyHash::word_hash`]).
    Bytes(KeyHash, ByteKeys<'a>),
    U128(&'a [u128]),
    Fixed16(&'a [[u8; 16]]),
}

impl<'a> Aesh<'a> {
    /// The same keys as `KeyHash::Xxh3` holds them.
    #[inline(always)]
    pub(crate) fn plain(self) -> Keys<'a> {
        match self {
            Aesh::Bytes(_, b) => Keys::Bytes(b),
            Aesh::U128(k) => Keys::U128(k),
            Aesh::Fixed16(k) => Keys::Fixed16(k),
        }
    }

    /// Keys `start..end`.
    #[inline(always)]
    pub(crate) fn slice(self, start: usize, end: usize) -> Aesh<'a> {
        match self {
            Aesh::Bytes(hash, b) => Aesh::Bytes(hash, b.slice(start, end)),
            Aesh::U128(k) => Aesh::U128(&k[start..end]),
            Aesh::Fixed16(k) => Aesh::Fixed16(&k[start..end]),
        }
    }
}

/// String keys, as their UTF-8 bytes.
#[derive(Clone, Copy)]
pub(crate) struct Strs<'a>(pub &'a [&'a str]);

impl<'a> ByteSource<'a> for Strs<'a> {
    #[inline(always)]
    fn count(&self) -> usize {
        self.0.len()
    }
    #[inline(always)]
    fn key(&self, i: usize) -> &'a [u8] {
        self.0[i].as_bytes()
    }
}

/// Arrow's offsets and values (validated by the front-end).
#[derive(Clone, Copy)]
pub(crate) struct Offsets<'a, O> {
    pub offsets: &'a [O],
    pub values: &'a [u8],
}

impl<'a, O: Copy + TryInto<usize>> ByteSource<'a> for Offsets<'a, O> {
    #[inline(always)]
    fn count(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }
    #[inline(always)]
    fn key(&self, i: usize) -> &'a [u8] {
        // In range: the front-end validated the offsets (non-negative, increasing, inside
        // `values`), so the conversions and the slice succeed.
        let at = |j: usize| self.offsets[j].try_into().unwrap_or(usize::MAX);
        &self.values[at(i)..at(i + 1)]
    }
}

/// Byte-string keys: a slice of slices, or Arrow's offsets and values (validated by the
/// front-end, so every range lies inside `values`).
#[derive(Clone, Copy)]
pub enum ByteKeys<'a> {
    Slices(&'a [&'a [u8]]),
    Strs(&'a [&'a str]),
    /// `offsets.len() - 1` keys; key `i` is `values[offsets[i]..offsets[i + 1]]`.
    Offsets32 {
        offsets: &'a [i32],
        values: &'a [u8],
    },
    Offsets64 {
        offsets: &'a [i64],
        values: &'a [u8],
    },
}

/// Checks Arrow offsets against `values_len` bytes of values, in one pass: the first offset
/// that is negative, smaller than the one before it, or past the end of the values is
/// [`Error::InvalidOffsets`]. What `ByteColumn::new` and the Arrow arrays check before their
/// offsets become [`ByteKeys`].
pub(crate) fn check_offsets<O: Copy + Into<i64>>(
    offsets: &[O],
    values_len: usize,
) -> Result<(), Error> {
    let mut prev = 0i64;
    for (index, &o) in offsets.iter().enumerate() {
        let o: i64 = o.into();
        let reason = if o < 0 {
            "negative"
        } else if o < prev {
            "smaller than the offset before it"
        } else if o as u64 > values_len as u64 {
            "past the end of the values"
        } else {
            prev = o;
            continue;
        };
        return Err(Error::InvalidOffsets { index, reason });
    }
    Ok(())
}

impl<'a> ByteKeys<'a> {
    pub(crate) fn len(&self) -> usize {
        match self {
            ByteKeys::Slices(k) => k.len(),
            ByteKeys::Strs(k) => k.len(),
            ByteKeys::Offsets32 { offsets, .. } => offsets.len().saturating_sub(1),
            ByteKeys::Offsets64 { offsets, .. } => offsets.len().saturating_sub(1),
        }
    }

    pub(crate) fn slice(self, start: usize, end: usize) -> ByteKeys<'a> {
        match self {
            ByteKeys::Slices(k) => ByteKeys::Slices(&k[start..end]),
            ByteKeys::Strs(k) => ByteKeys::Strs(&k[start..end]),
            ByteKeys::Offsets32 { offsets, values } => ByteKeys::Offsets32 {
                offsets: &offsets[start..end + 1],
                values,
            },
            ByteKeys::Offsets64 { offsets, values } => ByteKeys::Offsets64 {
                offsets: &offsets[start..end + 1],
                values,
            },
        }
    }
}

impl<'a> Keys<'a> {
    #[inline(always)]
    pub(crate) fn len(&self) -> usize {
        match self.source() {
            Keys::U64(k) | Keys::Hashes(k) => k.len(),
            Keys::Narrow(k) => k.len(),
            Keys::U128(k) => k.len(),
            Keys::Fixed16(k) => k.len(),
            Keys::Bytes(k) => k.len(),
            Keys::Aesh(_) | Keys::Fixed(..) => unreachable!("`source` unwraps the hash's keys"),
        }
    }

    /// Whether the keys are byte strings (whose bytes lie apart from the array
    /// [`stream`](Self::stream) reads).
    #[inline(always)]
    pub(crate) fn is_bytes(&self) -> bool {
        matches!(self.source(), Keys::Bytes(_))
    }

    /// The array a batch reads once per key, in order, as `(address of key 0's entry, bytes
    /// per entry)`: the keys themselves, or for byte strings their slices or offsets (whose
    /// bytes lie elsewhere). For prefetch address arithmetic only.
    #[inline(always)]
    pub(crate) fn stream(&self) -> (*const u8, usize) {
        match self.source() {
            Keys::U64(k) | Keys::Hashes(k) => (k.as_ptr().cast(), 8),
            Keys::Narrow(k) => k.stream(),
            Keys::U128(k) => (k.as_ptr().cast(), 16),
            Keys::Fixed16(k) => (k.as_ptr().cast(), 16),
            Keys::Bytes(ByteKeys::Slices(k)) => (k.as_ptr().cast(), size_of::<&[u8]>()),
            Keys::Bytes(ByteKeys::Strs(k)) => (k.as_ptr().cast(), size_of::<&str>()),
            Keys::Bytes(ByteKeys::Offsets32 { offsets, .. }) => (offsets.as_ptr().cast(), 4),
            Keys::Bytes(ByteKeys::Offsets64 { offsets, .. }) => (offsets.as_ptr().cast(), 8),
            Keys::Aesh(_) | Keys::Fixed(..) => unreachable!("`source` unwraps the hash's keys"),
        }
    }

    /// The keys as `KeyHash::Xxh3` holds them (the hashes' wrappers off): what [`len`] and
    /// [`stream`] read. One level, so both inline into a short batch's fixed cost (through the
    /// wrappers' own methods they were out-of-line recursive calls, costly on short calls;
    /// measured at 38d5f33).
    ///
    /// [`len`]: Self::len
    /// [`stream`]: Self::stream
    #[inline(always)]
    fn source(&self) -> Keys<'a> {
        match *self {
            Keys::Aesh(a) => a.plain(),
            Keys::Fixed(_, m) => m.plain(),
            keys => keys,
        }
    }

    /// Keys `start..end`.
    #[inline(always)]
    pub(crate) fn slice(self, start: usize, end: usize) -> Keys<'a> {
        match self {
            Keys::U64(k) => Keys::U64(&k[start..end]),
            Keys::Narrow(k) => Keys::Narrow(k.slice(start, end)),
            Keys::U128(k) => Keys::U128(&k[start..end]),
            Keys::Fixed16(k) => Keys::Fixed16(&k[start..end]),
            Keys::Bytes(k) => Keys::Bytes(k.slice(start, end)),
            Keys::Hashes(k) => Keys::Hashes(&k[start..end]),
            Keys::Aesh(a) => Keys::Aesh(a.slice(start, end)),
            Keys::Fixed(kind, m) => Keys::Fixed(kind, m.slice(start, end)),
        }
    }
}
