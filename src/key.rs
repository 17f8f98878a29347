//! What a key is to the filter: one canonical form per key type ([`KeyForm`]), and so one hash,
//! whichever method inserts or queries it.
//!
//! Every path reads a key through [`Key`]: the single-key methods (`insert`, `contains`,
//! `insert_new`, `remove`, ...), the batch methods (whose [`BatchKey`](crate::BatchKey) types
//! are `Key` types with the same form), the byte and column methods, Arrow arrays, Python and
//! the CLI. A `str` is its UTF-8 bytes everywhere; an integer of up to 64 bits is its 64-bit
//! value (sign-extended if signed, zero-extended if not), so `5u8`, `5i32`, `5u64` and SQL's
//! `5` are one key; a 128-bit integer is its 16 bytes. A type the crate does not know goes
//! through [`ByHash`], which says at the call site that it hashes through
//! [`Hash`] (and so matches no batch form).

use alloc::borrow::{Cow, ToOwned};
use alloc::boxed::Box;
use alloc::rc::Rc;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::hash::{Hash, Hasher};

use crate::hashing::aes::hash_bytes_aes;
use crate::hashing::{
    KeyHash, StableHasher, WordHash, bytes_with_seed, hash_u64, u64_with_flip, u128_with_seed,
    with_word_hash,
};

/// The canonical form of a key: what the filter hashes (XXH3-64 with the filter's seed of the
/// form's little-endian bytes). Two keys with the same form are the same key to every filter
/// method.
///
/// | form | bytes hashed | batch twin |
/// | :--- | :--- | :--- |
/// | `U64` | 8: the integer's 64-bit value | `&[u64]`, `&[i64]`, `&[u32]`, `&[i32]`, `&[u16]`, `&[i16]`, `&[u8]`, `&[i8]`, `&[usize]`, `&[isize]`, Arrow's integer arrays |
/// | `U128` | 16 | `&[u128]`, `&[[u8; 16]]` |
/// | `Bytes(b)` | `b`, exactly (no length, no terminator) | `&[&[u8]]`, `&[&str]`, [`ByteColumn`](crate::ByteColumn), Arrow |
///
/// Every integer type of up to 64 bits has the `U64` form of its value, sign-extended if the
/// type is signed and zero-extended if not: `5u8`, `5i32` and `5u64` are one key, as are
/// `-1i8` and `-1i64` (and `u64::MAX`, the same 64 bits). `U128(x)` and
/// `Bytes(&x.to_le_bytes())` are the same key, as are `U64(x)` and
/// `Bytes(&x.to_le_bytes())`: the form only says how the bytes are held. A byte string of
/// another length is another key: `Bytes(&5u32.to_le_bytes())` (4 bytes) is not `5u32`, but
/// it is how a filter written before integers became their value (0.1, where a `u32` key was
/// its 4 bytes) is asked for its 32-bit keys (see the crate docs, "Keys").
///
/// ```
/// use blockbloom::{Key, KeyForm, hash::hash_key};
///
/// assert_eq!(hash_key(&KeyForm::U64(7), 1), hash_key(&KeyForm::Bytes(&7u64.to_le_bytes()), 1));
/// assert_eq!(hash_key(&KeyForm::Bytes(b"ab"), 1), hash_key("ab", 1));
/// assert_eq!(hash_key(&7u8, 1), hash_key(&7u64, 1));
/// assert_eq!(hash_key(&-1i32, 1), hash_key(&u64::MAX, 1));
/// ```
#[derive(Clone, Copy)]
pub enum KeyForm<'a> {
    /// Eight little-endian bytes: every integer of up to 64 bits, as its 64-bit value.
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
    /// under [`KeyHash::Xxh3`]; under [`KeyHash::Aesh`], the same for the `U64` and `ByHash`
    /// forms and byte strings of 4 and 8 bytes, and AESH-64 of the form's bytes for every
    /// other key; under [`KeyHash::Mx32`], MX32-64 for the `U64` and `U128` forms and byte
    /// strings of 4, 8 and 16 bytes, XXH3 for `ByHash`, and AESH-64 for every other key; under
    /// [`KeyHash::Moremur`], the same with MM64 for MX32-64. What a filter of that hash
    /// computes for the key.
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
    ///
    /// let mm = |k: KeyForm<'_>| k.hash_with(KeyHash::Moremur, 3);
    /// assert_eq!(mm(KeyForm::U64(7)), blockbloom::hash::hash_u64_moremur(7, 3));
    /// assert_eq!(mm(KeyForm::Bytes(&7u128.to_le_bytes())), mm(KeyForm::U128(7)));
    /// ```
    #[inline(always)]
    pub fn hash_with(self, hash: KeyHash, seed: u64) -> u64 {
        if let Some(kind) = hash.word_hash() {
            return with_word_hash!(kind, H => self.hash_word::<H>(seed));
        }
        match hash {
            KeyHash::Aesh => self.hash_aesh(seed),
            // `KeyHash::Xxh3`, the other hash without an integer hash of its own.
            _ => self.hash(seed),
        }
    }

    /// The hash under a filter hash with an integer hash of its own, `H`
    /// ([`KeyHash::word_hash`]): `H` for the integer forms, `H` or AESH-64 for byte strings
    /// by their length, XXH3 for the `Hash` stream as under every hash.
    #[inline(always)]
    fn hash_word<H: WordHash>(self, seed: u64) -> u64 {
        match self {
            KeyForm::U64(v) => H::u64_one(v, H::key(seed)),
            KeyForm::U128(v) => H::u128_one(v, H::key(seed)),
            KeyForm::Bytes(b) => H::bytes(b, seed).unwrap_or_else(|| hash_bytes_aes(b, seed)),
            KeyForm::ByHash(_) => self.hash(seed),
        }
    }

    /// The hash under [`KeyHash::Aesh`].
    #[inline(always)]
    fn hash_aesh(self, seed: u64) -> u64 {
        match self {
            KeyForm::U128(v) => hash_bytes_aes(&v.to_le_bytes(), seed),
            KeyForm::Bytes(b) => KeyHash::Aesh.bytes(b, seed),
            // 8 bytes, and the `Hash` stream: as under `KeyHash::Xxh3`.
            other @ (KeyForm::U64(_) | KeyForm::ByHash(_)) => other.hash(seed),
        }
    }

    /// [`hash_with`](Self::hash_with), given the seed's XXH3 constant as well (a filter keeps
    /// it), so an integer key skips deriving it.
    #[inline(always)]
    pub(crate) fn hash_by(self, hash: KeyHash, seed: u64, flip: u64) -> u64 {
        match (hash, self) {
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
/// | `u8`, `u16`, `u32`, `u64`, `usize`, `bool` (0 or 1), `char` (its code point), `Ipv4Addr` (as `u32::from(addr)`) | `U64` of the value, zero-extended |
/// | `i8`, `i16`, `i32`, `i64`, `isize` | `U64` of the value, sign-extended |
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
    ($($t:ty => $via:ty),* $(,)?) => {$(
        impl Key for $t {
            #[inline]
            fn key_form(&self) -> KeyForm<'_> {
                KeyForm::U64(*self as $via as u64)
            }
        }
    )*};
}

// An integer is its 64-bit value: unsigned types zero-extend, signed ones sign-extend.
word_keys! {
    u8 => u8, u16 => u16, u32 => u32, u64 => u64, usize => usize, bool => u8, char => u32,
    i8 => i64, i16 => i64, i32 => i64, i64 => i64, isize => i64,
}

impl Key for u128 {
    #[inline]
    fn key_form(&self) -> KeyForm<'_> {
        KeyForm::U128(*self)
    }
}

impl Key for i128 {
    #[inline]
    fn key_form(&self) -> KeyForm<'_> {
        KeyForm::U128(*self as u128)
    }
}

impl Key for core::net::Ipv4Addr {
    #[inline]
    fn key_form(&self) -> KeyForm<'_> {
        KeyForm::U64(u32::from(*self) as u64)
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
            // An integer of up to 64 bits is its 64-bit value's 8 bytes.
            let value = |v: u64| xxh3(&v.to_le_bytes(), seed);
            assert_eq!(hash_key(&0xabu8, seed), value(0xab));
            assert_eq!(hash_key(&-2i8, seed), value(-2i64 as u64));
            assert_eq!(hash_key(&-2i16, seed), value(-2i64 as u64));
            assert_eq!(hash_key(&0xfffeu16, seed), value(0xfffe));
            assert_eq!(hash_key(&true, seed), value(1));
            assert_eq!(hash_key(&false, seed), value(0));
            assert_eq!(hash_key(&'é', seed), value('é' as u64));
            assert_eq!(hash_key(&-5i32, seed), value(-5i64 as u64));
            assert_eq!(hash_key(&u32::MAX, seed), value(u32::MAX as u64));
            assert_eq!(hash_key(&-5isize, seed), value(-5i64 as u64));
            assert_eq!(hash_key(&7usize, seed), value(7));
            assert_eq!(hash_key(&-1i64, seed), value(u64::MAX));
            assert_ne!(hash_key(&5u32, seed), xxh3(&5u32.to_le_bytes(), seed));
            assert_eq!(hash_key(&-9i128, seed), xxh3(&(-9i128).to_le_bytes(), seed));
            let ip4 = core::net::Ipv4Addr::new(10, 1, 2, 3);
            assert_eq!(hash_key(&ip4, seed), value(u32::from(ip4) as u64));
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
