//! What a key is to the filter: one canonical form per key type ([`KeyForm`]), and so one hash,
//! whichever method inserts or queries it.
//!
//! Every path reads a key through [`Key`]: the single-key methods (`insert`, `contains`,
//! `insert_new`, `remove`, ...), the batch methods (whose [`BatchKey`](crate::BatchKey) types
//! are `Key` types with the same form), the byte and column methods, Arrow arrays, Python and
//! the CLI. A `str` is its UTF-8 bytes everywhere, an integer its little-endian bytes. A type
//! the crate does not know goes through [`ByHash`], which says at the call site that it hashes
//! through [`Hash`](core::hash::Hash) (and so matches no batch form).

use alloc::borrow::{Cow, ToOwned};
use alloc::boxed::Box;
use alloc::rc::Rc;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::hash::{Hash, Hasher};

use xxhash_rust::xxh3::xxh3_64_with_seed;

use crate::hashing::aes::hash_bytes_aes;
use crate::hashing::mx32::{hash_u32_mx32, hash_u64_mx32, hash_u128_mx32};
use crate::hashing::{
    KeyHash, StableHasher, bytes_with_seed, hash_u32, hash_u64, u32_with_flip, u64_with_flip,
    u128_with_seed,
};

/// The canonical form of a key: what the filter hashes (XXH3-64 with the filter's seed of the
/// form's little-endian bytes). Two keys with the same form are the same key to every filter
/// method.
///
/// | form | bytes hashed | batch twin |
/// | :--- | :--- | :--- |
/// | `U8`, `U16` | 1 or 2 | none (single-key only) |
/// | `U32` | 4 | `&[u32]`, `&[i32]` |
/// | `U64` | 8 | `&[u64]`, `&[i64]` |
/// | `U128` | 16 | `&[u128]`, `&[[u8; 16]]` |
/// | `Bytes(b)` | `b`, exactly (no length, no terminator) | `&[&[u8]]`, `&[&str]`, [`ByteColumn`](crate::ByteColumn), Arrow |
///
/// `U128(x)` and `Bytes(&x.to_le_bytes())` are the same key, as are `U64(x)` and
/// `Bytes(&x.to_le_bytes())`: the form only says how the bytes are held.
///
/// ```
/// use blockbloom::{Key, KeyForm, hash::hash_key};
///
/// assert_eq!(hash_key(&KeyForm::U64(7), 1), hash_key(&KeyForm::Bytes(&7u64.to_le_bytes()), 1));
/// assert_eq!(hash_key(&KeyForm::Bytes(b"ab"), 1), hash_key("ab", 1));
/// ```
#[derive(Clone, Copy)]
pub enum KeyForm<'a> {
    /// One byte.
    U8(u8),
    /// Two little-endian bytes.
    U16(u16),
    /// Four little-endian bytes.
    U32(u32),
    /// Eight little-endian bytes.
    U64(u64),
    /// Sixteen little-endian bytes (IPv6 addresses, UUIDs, flow keys).
    U128(u128),
    /// These bytes, exactly.
    Bytes(&'a [u8]),
    /// A value hashed through its [`Hash`] impl into a [`StableHasher`] (what [`ByHash`] gives).
    ByHash(&'a dyn HashInto),
}

impl core::fmt::Debug for KeyForm<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            KeyForm::U8(v) => f.debug_tuple("U8").field(v).finish(),
            KeyForm::U16(v) => f.debug_tuple("U16").field(v).finish(),
            KeyForm::U32(v) => f.debug_tuple("U32").field(v).finish(),
            KeyForm::U64(v) => f.debug_tuple("U64").field(v).finish(),
            KeyForm::U128(v) => f.debug_tuple("U128").field(v).finish(),
            KeyForm::Bytes(b) => f.debug_tuple("Bytes").field(b).finish(),
            KeyForm::ByHash(_) => f.write_str("ByHash(..)"),
        }
    }
}

impl KeyForm<'_> {
    /// XXH3-64 of the form's bytes with `seed`: the one hash every method uses for this key.
    #[inline(always)]
    pub fn hash(self, seed: u64) -> u64 {
        match self {
            KeyForm::U8(v) => xxh3_64_with_seed(&[v], seed),
            KeyForm::U16(v) => xxh3_64_with_seed(&v.to_le_bytes(), seed),
            KeyForm::U32(v) => hash_u32(v, seed),
            KeyForm::U64(v) => hash_u64(v, seed),
            KeyForm::U128(v) => u128_with_seed(v, seed),
            KeyForm::Bytes(b) => bytes_with_seed(b, seed),
            KeyForm::ByHash(v) => {
                let mut h = StableHasher::new(seed);
                v.hash_into(&mut h);
                h.finish()
            }
        }
    }
}

impl KeyForm<'_> {
    /// The hash of this key under `hash` with `seed` ([`KeyHash`]): [`hash`](Self::hash)
    /// under [`KeyHash::Xxh3`]; under [`KeyHash::Aesh`], the same for the `U32`, `U64` and
    /// `ByHash` forms and byte strings of 4 and 8 bytes, and AESH-64 of the form's bytes for
    /// every other key; under [`KeyHash::Mx32`], MX32-64 for the `U32`, `U64` and `U128`
    /// forms and byte strings of 4, 8 and 16 bytes, XXH3 for `ByHash`, and AESH-64 for every
    /// other key. What a filter of that hash computes for the key.
    ///
    /// ```
    /// use blockbloom::{KeyForm, KeyHash, hash::hash_bytes_aes};
    ///
    /// let aesh = |k: KeyForm<'_>| k.hash_with(KeyHash::Aesh, 3);
    /// assert_eq!(aesh(KeyForm::U64(7)), KeyForm::U64(7).hash(3));
    /// assert_eq!(aesh(KeyForm::Bytes(&7u64.to_le_bytes())), aesh(KeyForm::U64(7)));
    /// assert_eq!(aesh(KeyForm::U128(7)), hash_bytes_aes(&7u128.to_le_bytes(), 3));
    /// assert_eq!(aesh(KeyForm::Bytes(b"user:17")), hash_bytes_aes(b"user:17", 3));
    ///
    /// let mx32 = |k: KeyForm<'_>| k.hash_with(KeyHash::Mx32, 3);
    /// assert_eq!(mx32(KeyForm::U64(7)), blockbloom::hash::hash_u64_mx32(7, 3));
    /// assert_eq!(mx32(KeyForm::Bytes(&7u128.to_le_bytes())), mx32(KeyForm::U128(7)));
    /// assert_eq!(mx32(KeyForm::Bytes(b"user:17")), aesh(KeyForm::Bytes(b"user:17")));
    /// ```
    #[inline(always)]
    pub fn hash_with(self, hash: KeyHash, seed: u64) -> u64 {
        match hash {
            KeyHash::Xxh3 => self.hash(seed),
            KeyHash::Aesh => self.hash_aesh(seed),
            KeyHash::Mx32 => self.hash_mx32(seed),
        }
    }

    /// The hash under [`KeyHash::Mx32`].
    #[inline(always)]
    fn hash_mx32(self, seed: u64) -> u64 {
        match self {
            KeyForm::U32(v) => hash_u32_mx32(v, seed),
            KeyForm::U64(v) => hash_u64_mx32(v, seed),
            KeyForm::U128(v) => hash_u128_mx32(v, seed),
            KeyForm::Bytes(b) => KeyHash::Mx32.bytes(b, seed),
            // The other widths as under hash id 2, the `Hash` stream as under both.
            other @ (KeyForm::U8(_) | KeyForm::U16(_) | KeyForm::ByHash(_)) => {
                other.hash_aesh(seed)
            }
        }
    }

    /// The hash under [`KeyHash::Aesh`].
    #[inline(always)]
    fn hash_aesh(self, seed: u64) -> u64 {
        match self {
            KeyForm::U8(v) => hash_bytes_aes(&[v], seed),
            KeyForm::U16(v) => hash_bytes_aes(&v.to_le_bytes(), seed),
            KeyForm::U128(v) => hash_bytes_aes(&v.to_le_bytes(), seed),
            KeyForm::Bytes(b) => KeyHash::Aesh.bytes(b, seed),
            // 4 and 8 bytes, and the `Hash` stream: as under hash id 1.
            other @ (KeyForm::U32(_) | KeyForm::U64(_) | KeyForm::ByHash(_)) => other.hash(seed),
        }
    }

    /// [`hash_with`](Self::hash_with), given the seed's XXH3 constant as well (a filter keeps
    /// it), so an integer key skips deriving it.
    #[inline(always)]
    pub(crate) fn hash_by(self, hash: KeyHash, seed: u64, flip: u64) -> u64 {
        match (hash, self) {
            (KeyHash::Xxh3 | KeyHash::Aesh, KeyForm::U32(v)) => u32_with_flip(v, flip),
            (KeyHash::Xxh3 | KeyHash::Aesh, KeyForm::U64(v)) => u64_with_flip(v, flip),
            (hash, other) => other.hash_with(hash, seed),
        }
    }
}

/// A value that writes itself into a [`StableHasher`] through [`Hash`]: every `T: Hash`.
/// Object-safe, so [`KeyForm::ByHash`] can carry it.
pub trait HashInto {
    /// Feeds the value to `h` as its `Hash` impl does.
    fn hash_into(&self, h: &mut StableHasher);
}

impl<T: Hash + ?Sized> HashInto for T {
    #[inline]
    fn hash_into(&self, h: &mut StableHasher) {
        self.hash(h)
    }
}

/// A key type: how a value becomes the bytes the filter hashes. The crate implements it for
/// integers, `bool`, `char`, IP addresses, byte strings and strings (and references, boxes
/// and `Cow`s of them); implement it for your own types by returning the form of the field
/// that identifies them, so a batch of that field finds them too:
///
/// | type | form |
/// | :--- | :--- |
/// | `u8`, `i8`, `bool` | `U8` |
/// | `u16`, `i16` | `U16` |
/// | `u32`, `i32`, `char`, `Ipv4Addr` (as `u32::from(addr)`) | `U32` |
/// | `u64`, `i64`, `usize`, `isize` (widened to 64 bits on every platform) | `U64` |
/// | `u128`, `i128`, `Ipv6Addr` (as `u128::from(addr)`) | `U128` |
/// | `[u8]`, `[u8; N]`, `Vec<u8>`, `str`, `String` | `Bytes` |
/// | `&K`, `&mut K`, `Box<K>`, `Rc<K>`, `Arc<K>`, `Cow<K>` | `K`'s |
/// | [`ByHash<T>`] for any `T: Hash` | `T`'s `Hash` byte stream |
///
/// ```
/// use blockbloom::{BloomFilter, ByHash, Key, KeyForm};
///
/// struct UserId(u64);
/// impl Key for UserId {
///     fn key_form(&self) -> KeyForm<'_> {
///         KeyForm::U64(self.0)
///     }
/// }
///
/// let mut f = BloomFilter::with_capacity(1000, 0.01)?;
/// f.insert(&UserId(17));
/// f.insert("user:17");
/// f.insert(&ByHash((3u8, 'x'))); // a tuple: only through `Hash`, said at the call site
/// assert!(f.contains(&17u64) && f.count_batch(&[17u64]) == 1);
/// assert!(f.contains(&String::from("user:17")) && f.count_batch(&["user:17"]) == 1);
/// assert!(f.contains_bytes(b"user:17") && f.contains(&ByHash((3u8, 'x'))));
/// # Ok::<(), blockbloom::Error>(())
/// ```
pub trait Key {
    /// The key's canonical form.
    fn key_form(&self) -> KeyForm<'_>;
}

/// A key hashed through its [`Hash`] impl: XXH3-64 (seeded) of the canonical byte stream the
/// impl writes ([`StableHasher`]). For types the crate does not know (tuples, structs, enums)
/// that only single-key methods see.
///
/// It hashes other bytes than the plain form of a type that is also a [`Key`]: `Hash` appends
/// `0xff` to a `str` and writes a length before a slice, so `ByHash("a")` and `"a"` are two
/// different keys. Filters written before the `Key` trait hashed single-key `str`, `[u8]` and
/// array keys this way: query those keys with `ByHash` (see the crate docs, "Keys").
///
/// ```
/// use blockbloom::{BloomFilter, ByHash};
///
/// #[derive(Hash)]
/// struct Flow { src: u32, dst: u32, port: u16 }
///
/// let mut f = BloomFilter::with_capacity(1000, 0.01)?;
/// f.insert(&ByHash(Flow { src: 1, dst: 2, port: 80 }));
/// assert!(f.contains(&ByHash(&Flow { src: 1, dst: 2, port: 80 })));
/// # Ok::<(), blockbloom::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ByHash<T>(pub T);

impl<T: Hash> Key for ByHash<T> {
    #[inline]
    fn key_form(&self) -> KeyForm<'_> {
        KeyForm::ByHash(&self.0)
    }
}

impl Key for KeyForm<'_> {
    #[inline]
    fn key_form(&self) -> KeyForm<'_> {
        *self
    }
}

macro_rules! word_keys {
    ($($t:ty => $form:ident as $as:ty),* $(,)?) => {$(
        impl Key for $t {
            #[inline]
            fn key_form(&self) -> KeyForm<'_> {
                KeyForm::$form(*self as $as)
            }
        }
    )*};
}

word_keys! {
    u8 => U8 as u8, i8 => U8 as u8, bool => U8 as u8,
    u16 => U16 as u16, i16 => U16 as u16,
    u32 => U32 as u32, i32 => U32 as u32, char => U32 as u32,
    u64 => U64 as u64, i64 => U64 as u64, usize => U64 as u64,
    u128 => U128 as u128, i128 => U128 as u128,
}

impl Key for isize {
    #[inline]
    fn key_form(&self) -> KeyForm<'_> {
        KeyForm::U64(*self as i64 as u64)
    }
}

impl Key for core::net::Ipv4Addr {
    #[inline]
    fn key_form(&self) -> KeyForm<'_> {
        KeyForm::U32(u32::from(*self))
    }
}

impl Key for core::net::Ipv6Addr {
    #[inline]
    fn key_form(&self) -> KeyForm<'_> {
        KeyForm::U128(u128::from(*self))
    }
}

impl Key for [u8] {
    #[inline]
    fn key_form(&self) -> KeyForm<'_> {
        KeyForm::Bytes(self)
    }
}

impl<const N: usize> Key for [u8; N] {
    #[inline]
    fn key_form(&self) -> KeyForm<'_> {
        KeyForm::Bytes(self)
    }
}

impl Key for str {
    #[inline]
    fn key_form(&self) -> KeyForm<'_> {
        KeyForm::Bytes(self.as_bytes())
    }
}

impl Key for String {
    #[inline]
    fn key_form(&self) -> KeyForm<'_> {
        KeyForm::Bytes(self.as_bytes())
    }
}

impl Key for Vec<u8> {
    #[inline]
    fn key_form(&self) -> KeyForm<'_> {
        KeyForm::Bytes(self)
    }
}

macro_rules! pointer_keys {
    ($($p:ident),*) => {$(
        impl<K: Key + ?Sized> Key for $p<K> {
            #[inline]
            fn key_form(&self) -> KeyForm<'_> {
                (**self).key_form()
            }
        }
    )*};
}

pointer_keys!(Box, Rc, Arc);

impl<K: Key + ?Sized> Key for &K {
    #[inline]
    fn key_form(&self) -> KeyForm<'_> {
        (**self).key_form()
    }
}

impl<K: Key + ?Sized> Key for &mut K {
    #[inline]
    fn key_form(&self) -> KeyForm<'_> {
        (**self).key_form()
    }
}

impl<K: Key + ToOwned + ?Sized> Key for Cow<'_, K> {
    #[inline]
    fn key_form(&self) -> KeyForm<'_> {
        (**self).key_form()
    }
}

/// The filter hash of any [`Key`]: [`KeyForm::hash`] of its form, XXH3-64 with `seed` of
/// the form's bytes. What every filter method computes for the key.
///
/// ```
/// use blockbloom::hash::{hash_bytes, hash_key, hash_u64};
/// assert_eq!(hash_key(&5u64, 1), hash_u64(5, 1));
/// assert_eq!(hash_key("ab", 1), hash_bytes(b"ab", 1));
/// assert_eq!(hash_key(&String::from("ab"), 1), hash_bytes(b"ab", 1));
/// ```
#[inline(always)]
pub fn hash_key<K: Key + ?Sized>(key: &K, seed: u64) -> u64 {
    key.key_form().hash(seed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;
    use xxhash_rust::xxh3::xxh3_64_with_seed as xxh3;

    /// Each form hashes its little-endian bytes, and each type has the form its table says.
    #[test]
    fn forms_hash_their_bytes() {
        for seed in [0, 1, 0x0123_4567_89ab_cdef] {
            assert_eq!(hash_key(&0xabu8, seed), xxh3(&[0xab], seed));
            assert_eq!(hash_key(&-2i16, seed), xxh3(&(-2i16).to_le_bytes(), seed));
            assert_eq!(hash_key(&true, seed), xxh3(&[1], seed));
            assert_eq!(
                hash_key(&'é', seed),
                xxh3(&('é' as u32).to_le_bytes(), seed)
            );
            assert_eq!(hash_key(&-5i32, seed), xxh3(&(-5i32).to_le_bytes(), seed));
            assert_eq!(hash_key(&-5isize, seed), xxh3(&(-5i64).to_le_bytes(), seed));
            assert_eq!(hash_key(&7usize, seed), xxh3(&7u64.to_le_bytes(), seed));
            assert_eq!(hash_key(&-9i128, seed), xxh3(&(-9i128).to_le_bytes(), seed));
            let ip4 = core::net::Ipv4Addr::new(10, 1, 2, 3);
            assert_eq!(
                hash_key(&ip4, seed),
                xxh3(&u32::from(ip4).to_le_bytes(), seed)
            );
            let ip6 = core::net::Ipv6Addr::LOCALHOST;
            assert_eq!(hash_key(&ip6, seed), xxh3(&1u128.to_le_bytes(), seed));
            for s in [
                "",
                "a",
                "user:17",
                "a somewhat longer key of more than sixteen bytes",
            ] {
                let want = xxh3(s.as_bytes(), seed);
                assert_eq!(hash_key(s, seed), want);
                assert_eq!(hash_key(&s, seed), want);
                assert_eq!(hash_key(&s.to_string(), seed), want);
                assert_eq!(hash_key(s.as_bytes(), seed), want);
                assert_eq!(hash_key(&s.as_bytes().to_vec(), seed), want);
                assert_eq!(hash_key(&Box::<str>::from(s), seed), want);
                assert_eq!(hash_key(&Arc::<str>::from(s), seed), want);
                assert_eq!(hash_key(&Cow::Borrowed(s), seed), want);
                assert_eq!(hash_key(&Cow::<[u8]>::Owned(s.into()), seed), want);
            }
            let a = [7u8; 16];
            assert_eq!(hash_key(&a, seed), xxh3(&a, seed));
            assert_eq!(hash_key(&a, seed), hash_key(&u128::from_le_bytes(a), seed));
        }
    }

    /// `ByHash` is the `Hash` route: for a `str` the terminator byte makes it another key.
    #[test]
    fn by_hash_is_the_hash_stream() {
        let mut h = StableHasher::new(3);
        "ab".hash(&mut h);
        assert_eq!(hash_key(&ByHash("ab"), 3), h.finish());
        assert_eq!(hash_key(&ByHash("ab"), 3), xxh3(b"ab\xff", 3));
        assert_ne!(hash_key(&ByHash("ab"), 3), hash_key("ab", 3));
        // Integers write their little-endian bytes through `Hash` too.
        assert_eq!(hash_key(&ByHash(5u64), 3), hash_key(&5u64, 3));
    }
}
