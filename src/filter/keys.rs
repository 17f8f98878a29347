//! What a batch method takes: slices of a [`BatchKey`] type, or a [`ByteColumn`] (Arrow's
//! offsets and values), each turned into the kernel's key source once, without copying.

use alloc::vec::Vec;

use crate::error::Error;
use crate::kernel::Keys;
use crate::kernel::shapes::{ByteKeys, Narrow, check_offsets};
use crate::key::Key;

/// Key types the batch methods take. Each is a [`Key`] and hashes exactly as the single-key
/// methods hash it (its [`KeyForm`](crate::KeyForm)), so a batch gives the same filter and the
/// same answers as a loop of `insert(&key)`:
///
/// | type | hashed as |
/// | :--- | :--- |
/// | `u64`, `i64`, `u32`, `i32`, `u16`, `i16`, `u8`, `i8`, `usize`, `isize` | the 64-bit value (sign-extended if signed), widened in SIMD lanes |
/// | `u128`, `[u8; 16]` | the 16 little-endian bytes (IPv6, UUID, flow keys) |
/// | `&[u8]`, `&str` | the bytes |
///
/// ```
/// let mut a = blockbloom::BloomFilter::with_capacity(100, 0.01)?;
/// let mut b = a.clone();
/// a.insert_batch(&[-1i64, 5]);
/// b.insert(&-1i64);
/// b.insert(&5i64);
/// assert_eq!(a, b);
///
/// // An integer is its value at every width: a batch of `u8` finds what `u64`s inserted.
/// a.insert_batch(&[-1i32, 5]);
/// assert_eq!(a, b);
/// assert_eq!(a.count_batch(&[5u8]) + a.count_batch(&[5u16]), 2);
///
/// a.insert_batch(&["apple", "pear"]);
/// b.insert("apple");
/// b.insert(&String::from("pear"));
/// assert_eq!(a, b);
///
/// let ip: u128 = 0x2001_0db8_0000_0000_0000_0000_0000_0001;
/// a.insert_batch(&[ip]);
/// b.insert(&ip.to_le_bytes());
/// assert_eq!(a, b);
/// # Ok::<(), blockbloom::Error>(())
/// ```
pub trait BatchKey: Key + Copy + private::Sealed {
    #[doc(hidden)]
    fn as_keys(keys: &[Self]) -> private::KeySlice<'_>;
}

pub(crate) mod private {
    pub trait Sealed {}
    /// Seals [`KeySource`](super::KeySource) apart from [`BatchKey`](super::BatchKey): `[u8; 16]`
    /// is a key type, and `[u8; N]` a source of `u8` keys.
    pub trait SealedSource {}
    /// Opaque to users; carries the crate's internal key slice.
    pub struct KeySlice<'a>(pub(crate) crate::kernel::Keys<'a>);
}

impl private::Sealed for u128 {}
impl private::Sealed for [u8; 16] {}
impl private::Sealed for &[u8] {}
impl private::Sealed for &str {}

impl private::Sealed for u64 {}
impl BatchKey for u64 {
    fn as_keys(keys: &[u64]) -> private::KeySlice<'_> {
        private::KeySlice(Keys::U64(keys))
    }
}
impl private::Sealed for i64 {}
impl BatchKey for i64 {
    fn as_keys(keys: &[i64]) -> private::KeySlice<'_> {
        // SAFETY: i64 and u64 have the same size and alignment and every bit pattern is valid
        // for both; the new slice borrows the same memory for the same lifetime. An `i64`'s
        // 64-bit value is its bits.
        let u = unsafe { core::slice::from_raw_parts(keys.as_ptr().cast::<u64>(), keys.len()) };
        private::KeySlice(Keys::U64(u))
    }
}

/// The narrow integer types: read in place, widened to their 64-bit value in lanes.
macro_rules! narrow_batch_keys {
    ($($t:ty => $v:ident),* $(,)?) => {$(
        impl private::Sealed for $t {}
        impl BatchKey for $t {
            fn as_keys(keys: &[$t]) -> private::KeySlice<'_> {
                private::KeySlice(Keys::Narrow(Narrow::$v(keys)))
            }
        }
    )*};
}

narrow_batch_keys!(i8 => I8, u8 => U8, i16 => I16, u16 => U16, i32 => I32, u32 => U32);

impl private::Sealed for usize {}
impl BatchKey for usize {
    fn as_keys(keys: &[usize]) -> private::KeySlice<'_> {
        // SAFETY: `usize` has the size and alignment of the unsigned integer of the pointer
        // width (`Word`), and every bit pattern is valid for both; the new slice borrows the
        // same memory for the same lifetime. A `usize` zero-extends as that type does.
        let u = unsafe { core::slice::from_raw_parts(keys.as_ptr().cast::<Word>(), keys.len()) };
        Word::as_keys(u)
    }
}
impl private::Sealed for isize {}
impl BatchKey for isize {
    fn as_keys(keys: &[isize]) -> private::KeySlice<'_> {
        // SAFETY: as for `usize`, with the signed integer of the pointer width, which
        // sign-extends as `isize` does.
        let u =
            unsafe { core::slice::from_raw_parts(keys.as_ptr().cast::<SignedWord>(), keys.len()) };
        SignedWord::as_keys(u)
    }
}

/// The integer types of the pointer width.
#[cfg(target_pointer_width = "64")]
type Word = u64;
#[cfg(target_pointer_width = "64")]
type SignedWord = i64;
#[cfg(target_pointer_width = "32")]
type Word = u32;
#[cfg(target_pointer_width = "32")]
type SignedWord = i32;
#[cfg(target_pointer_width = "16")]
type Word = u16;
#[cfg(target_pointer_width = "16")]
type SignedWord = i16;

impl BatchKey for u128 {
    fn as_keys(keys: &[u128]) -> private::KeySlice<'_> {
        private::KeySlice(Keys::U128(keys))
    }
}
impl BatchKey for [u8; 16] {
    fn as_keys(keys: &[[u8; 16]]) -> private::KeySlice<'_> {
        private::KeySlice(Keys::Fixed16(keys))
    }
}
impl BatchKey for &[u8] {
    fn as_keys<'a>(keys: &'a [&[u8]]) -> private::KeySlice<'a> {
        private::KeySlice(Keys::Bytes(ByteKeys::Slices(keys)))
    }
}
impl BatchKey for &str {
    fn as_keys<'a>(keys: &'a [&str]) -> private::KeySlice<'a> {
        private::KeySlice(Keys::Bytes(ByteKeys::Strs(keys)))
    }
}

/// An Arrow offsets type: `i32` (`Utf8`, `Binary`) or `i64` (`LargeUtf8`, `LargeBinary`).
pub trait Offset: Copy + private::Sealed + Into<i64> {
    #[doc(hidden)]
    fn column<'a>(offsets: &'a [Self], values: &'a [u8]) -> private::KeySlice<'a>;
}

impl Offset for i32 {
    fn column<'a>(offsets: &'a [i32], values: &'a [u8]) -> private::KeySlice<'a> {
        private::KeySlice(Keys::Bytes(ByteKeys::Offsets32 { offsets, values }))
    }
}
impl Offset for i64 {
    fn column<'a>(offsets: &'a [i64], values: &'a [u8]) -> private::KeySlice<'a> {
        private::KeySlice(Keys::Bytes(ByteKeys::Offsets64 { offsets, values }))
    }
}

/// A column of byte strings as Arrow stores it (`Utf8`/`Binary` with `i32` offsets,
/// `LargeUtf8`/`LargeBinary` with `i64`): key `i` is `values[offsets[i]..offsets[i + 1]]`.
/// Validated once by [`new`](Self::new), then hashed in place, never copied. Each key hashes
/// as [`insert_bytes`](crate::BloomFilter::insert_bytes) of its bytes.
///
/// ```
/// use blockbloom::{BloomFilter, ByteColumn};
///
/// // "ab", "", "cde": what Arrow's StringArray holds for ["ab", "", "cde"].
/// let col = ByteColumn::new(&[0i32, 2, 2, 5], b"abcde")?;
/// assert_eq!(col.len(), 3);
/// let mut f = BloomFilter::with_capacity(100, 0.01)?;
/// f.insert_column(&col);
/// assert!(f.contains_bytes(b"cde") && f.contains_bytes(b""));
/// let mut out = [false; 3];
/// f.contains_column(&col, &mut out);
/// assert_eq!(out, [true; 3]);
///
/// assert!(ByteColumn::new(&[0i32, 3, 2], b"abc").is_err()); // not monotone
/// # Ok::<(), blockbloom::Error>(())
/// ```
#[derive(Clone, Copy)]
pub struct ByteColumn<'a> {
    keys: Keys<'a>,
}

impl core::fmt::Debug for ByteColumn<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ByteColumn")
            .field("len", &self.len())
            .finish_non_exhaustive()
    }
}

impl<'a> ByteColumn<'a> {
    /// A column over `offsets` (one more than the keys; may start above 0, as a sliced Arrow
    /// array's do; an empty slice is an empty column) and `values`.
    ///
    /// # Errors
    /// [`Error::InvalidOffsets`] naming the first offset that is negative, smaller than the
    /// one before it, or past `values.len()`. Checked once here, in one pass.
    pub fn new<O: Offset>(offsets: &'a [O], values: &'a [u8]) -> Result<ByteColumn<'a>, Error> {
        check_offsets(offsets, values.len())?;
        Ok(ByteColumn {
            keys: O::column(offsets, values).0,
        })
    }

    /// Keys in the column.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether the column holds no keys.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// What the answer-shaped batch methods take ([`contains_bitmap`](crate::Filter::contains_bitmap),
/// [`select`](crate::Filter::select), [`insert_batch_new`](crate::BloomFilter::insert_batch_new)):
/// a slice, array or `Vec` of a [`BatchKey`] type, or a [`ByteColumn`].
pub trait KeySource: private::SealedSource {
    #[doc(hidden)]
    fn key_slice(&self) -> private::KeySlice<'_>;
}

impl<K: BatchKey> private::SealedSource for [K] {}
impl<K: BatchKey> private::SealedSource for Vec<K> {}
impl<K: BatchKey, const N: usize> private::SealedSource for [K; N] {}
impl private::SealedSource for ByteColumn<'_> {}

impl<K: BatchKey> KeySource for [K] {
    fn key_slice(&self) -> private::KeySlice<'_> {
        K::as_keys(self)
    }
}
impl<K: BatchKey> KeySource for Vec<K> {
    fn key_slice(&self) -> private::KeySlice<'_> {
        K::as_keys(self)
    }
}
impl<K: BatchKey, const N: usize> KeySource for [K; N] {
    fn key_slice(&self) -> private::KeySlice<'_> {
        K::as_keys(self)
    }
}
impl KeySource for ByteColumn<'_> {
    fn key_slice(&self) -> private::KeySlice<'_> {
        private::KeySlice(self.keys)
    }
}

/// Hashes a batch of keys of any [`BatchKey`] type with hash id 1 (XXH3-64 with `seed`) on the
/// active kernel: equal, bit for bit, to [`hash_key`](crate::hash::hash_key) of each key, so
/// an integer of any width hashes as its 64-bit value (widened in lanes). The hashes go to
/// [`contains_hash_batch`](crate::Filter::contains_hash_batch) of a filter of hash id 1 and
/// can be kept; for a filter of another hash, [`Filter::hash`](crate::Filter::hash) gives
/// each key's.
///
/// # Panics
/// If `out.len() != keys.len()`.
///
/// ```
/// use blockbloom::hash::{hash_key, hash_key_batch, hash_u64};
///
/// let mut out = [0u64; 2];
/// hash_key_batch(&[4u32, 5], 1, &mut out);
/// assert_eq!(out, [hash_u64(4, 1), hash_key(&5u8, 1)]);
/// hash_key_batch(&[-1i8, 7], 1, &mut out);
/// assert_eq!(out[0], hash_u64(u64::MAX, 1));
/// ```
pub fn hash_key_batch<K: BatchKey>(keys: &[K], seed: u64, out: &mut [u64]) {
    assert_eq!(
        keys.len(),
        out.len(),
        "output slice length must equal key count"
    );
    let flip = crate::hashing::seed_flip(seed);
    crate::kernel::Kernel::fallback_to_best().hash_keys(flip, K::as_keys(keys).0, 0, out);
}
