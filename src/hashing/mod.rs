//! The stable key hashes, one key at a time: XXH3-64 with a seed (the filter's hash) and
//! XXH64 with seed 0 (the split block filter's); MX32-64 (`mx32.rs`) and MM64 (`moremur.rs`),
//! each one file with its definition, its scalar form and its form in SIMD lanes
//! ([`WordHash`]); AESH-64 (`aes/`). This file lists them: [`KeyHash`], a filter's hash and
//! its format id, and beside it the table of the integer hashes ([`WordHashKind`],
//! `with_word_hash!`). The public `blockbloom::hash` module (in `lib.rs`) re-exports these
//! beside the kernel tiers' batch forms.

pub(crate) mod aes;
pub(crate) mod moremur;
pub(crate) mod mx32;
mod word_hash;
pub(crate) mod xxh3;
pub(crate) mod xxh64;

#[cfg(target_arch = "x86_64")]
pub(crate) use word_hash::hash_keys16;
pub(crate) use word_hash::{WordHash, hash_words};
pub(crate) use xxh3::{
    bytes_with_seed, seed_flip, seed_from_flip, u32_with_flip, u64_with_flip, u128_with_seed,
};
pub use xxh3::{hash_bytes, hash_u32, hash_u64};
pub(crate) use xxh64::{xxh64_u32, xxh64_u64};

use alloc::boxed::Box;

use core::hash::Hasher;

use xxhash_rust::xxh3::{Xxh3, xxh3_64_with_seed};

/// A seed nobody outside this process can predict: SipHash-1-3 (std's `RandomState`, keyed
/// from the operating system's randomness once per thread, with a fresh key per call) of a
/// process-wide counter. What the builders' `keyed()` draws.
#[cfg(feature = "std")]
pub(crate) fn random_seed() -> u64 {
    use core::sync::atomic::{AtomicU64, Ordering::Relaxed};
    use std::hash::BuildHasher;
    static DRAWN: AtomicU64 = AtomicU64::new(0);
    std::collections::hash_map::RandomState::new().hash_one(DRAWN.fetch_add(1, Relaxed))
}

/// Which hash a filter gives its keys: the format's hash id (header byte 12), chosen when the
/// filter is built ([`Builder::key_hash`](crate::Builder::key_hash)) and kept by its
/// encoding, so a filter read back hashes as the one written.
///
/// | hash | id | keys of 4 and 8 bytes | every other key |
/// | :--- | ---: | :--- | :--- |
/// | [`Xxh3`](KeyHash::Xxh3) | 1 | XXH3-64 | XXH3-64 |
/// | [`Aesh`](KeyHash::Aesh) | 2 | XXH3-64 | AESH-64 ([`hash_bytes_aes`](crate::hash::hash_bytes_aes)) |
/// | [`Mx32`](KeyHash::Mx32) (default) | 3 | MX32-64 ([`hash_u64_mx32`](crate::hash::hash_u64_mx32)), and 16-byte keys | AESH-64 |
/// | [`Moremur`](KeyHash::Moremur) | 4 | MM64 ([`hash_u64_moremur`](crate::hash::hash_u64_moremur)), and 16-byte keys | AESH-64 |
///
/// A key is its form's little-endian bytes ([`KeyForm`](crate::KeyForm)). Every integer of up
/// to 64 bits is the 8 bytes of its 64-bit value, so under either hash an integer key and its
/// 8 bytes stay one key, and integer keys hash alike under ids 1 and 2: hash id 2 changes byte
/// strings of other lengths than 4 and 8 and 16-byte keys, which AES rounds hash in lanes
/// faster than XXH3 (`docs/PERFORMANCE.md`).
/// [`ByHash`](crate::ByHash) keys hash their `Hash` stream with XXH3 under both. Files written
/// before hash id 2 existed carry id 1 and answer as they did.
///
/// Hash id 3 hashes keys of 4, 8 and 16 bytes (the integers, IP addresses, and byte strings
/// of those lengths) with MX32-64, built from the 32-by-32-bit multiplies every SIMD
/// tier has in its lanes, where XXH3 needs 64-by-64-bit ones that AVX2 and NEON build from
/// three (`docs/PERFORMANCE.md` has the figures); other byte strings as under id 2.
///
/// Hash id 4 hashes the same keys with MM64, two 64-bit multiplies and three xorshifts: a
/// single key's hash is ready sooner than MX32-64's, batches in AVX2 and NEON lanes cost more.
/// It is an opt-in for callers of single keys and short calls; the default stays id 3.
///
/// ```
/// use blockbloom::{BloomFilter, KeyHash};
///
/// let new = BloomFilter::with_capacity(1000, 0.01)?;
/// assert_eq!(new.key_hash(), KeyHash::Mx32);
/// let v2 = BloomFilter::builder().capacity(1000).key_hash(KeyHash::Aesh).build()?;
/// let old = BloomFilter::builder().capacity(1000).key_hash(KeyHash::Xxh3).build()?;
/// assert_eq!((old.key_hash().id(), old.key_hash().name()), (1, "xxh3-64"));
/// // Under ids 1 and 2 integer keys hash alike, other byte strings do not.
/// assert_eq!(v2.hash(&7u64), old.hash(&7u64));
/// assert_ne!(v2.hash("user:17"), old.hash("user:17"));
/// // Id 3 hashes integers with MX32-64 and other byte strings as id 2.
/// assert_eq!(new.hash("user:17"), v2.hash("user:17"));
/// assert_eq!(new.hash(&7u64), blockbloom::hash::hash_u64_mx32(7, 0));
/// // Id 4 hashes integers with MM64 and other byte strings as ids 2 and 3.
/// let mm = BloomFilter::builder().capacity(1000).key_hash(KeyHash::Moremur).build()?;
/// assert_eq!(mm.hash(&7u64), blockbloom::hash::hash_u64_moremur(7, 0));
/// assert_eq!(mm.hash("user:17"), v2.hash("user:17"));
/// # Ok::<(), blockbloom::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum KeyHash {
    /// Hash id 1: XXH3-64 with the seed of every key's bytes. Every filter written before hash
    /// id 2.
    Xxh3,
    /// Hash id 2: XXH3-64 for keys of 4 and 8 bytes, AESH-64 for every other key. The default
    /// for new filters before hash id 3.
    Aesh,
    /// Hash id 3: MX32-64 for keys of 4, 8 and 16 bytes (every integer), AESH-64 for every
    /// other key. The default for new filters: the fastest batches and 16-byte keys on the
    /// AVX2 and portable tiers (`docs/PERFORMANCE.md`, "The defaults").
    #[default]
    Mx32,
    /// Hash id 4: MM64 ([`hash_u64_moremur`](crate::hash::hash_u64_moremur), a
    /// multiply-xorshift hash with moremur's constants) for keys of 4, 8 and 16 bytes, AESH-64
    /// for every other key. Opt-in: two 64-bit multiplies hash a single key sooner than
    /// MX32-64, but cost batches more in AVX2 and NEON lanes (`docs/PERFORMANCE.md`,
    /// "Choosing a key hash").
    Moremur,
}

impl KeyHash {
    /// The format's hash id (header byte 12).
    pub const fn id(self) -> u8 {
        match self {
            KeyHash::Xxh3 => 1,
            KeyHash::Aesh => 2,
            KeyHash::Mx32 => 3,
            KeyHash::Moremur => 4,
        }
    }

    /// The hash of a format hash id, if this build knows it.
    ///
    /// ```
    /// use blockbloom::KeyHash;
    /// assert_eq!(KeyHash::from_id(2), Some(KeyHash::Aesh));
    /// assert_eq!(KeyHash::from_id(9), None);
    /// ```
    pub const fn from_id(id: u8) -> Option<KeyHash> {
        match id {
            1 => Some(KeyHash::Xxh3),
            2 => Some(KeyHash::Aesh),
            3 => Some(KeyHash::Mx32),
            4 => Some(KeyHash::Moremur),
            _ => None,
        }
    }

    /// Its name, as `blockbloom info` prints it: `xxh3-64`, `aesh-64`, `mx32-64` or
    /// `moremur-64`.
    pub const fn name(self) -> &'static str {
        match self {
            KeyHash::Xxh3 => "xxh3-64",
            KeyHash::Aesh => "aesh-64",
            KeyHash::Mx32 => "mx32-64",
            KeyHash::Moremur => "moremur-64",
        }
    }

    /// The hash of a [`name`](Self::name), if this build knows it.
    ///
    /// ```
    /// use blockbloom::KeyHash;
    /// assert_eq!(KeyHash::from_name("mx32-64"), Some(KeyHash::Mx32));
    /// assert_eq!(KeyHash::from_name("md5"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<KeyHash> {
        KeyHash::ALL.into_iter().find(|h| h.name() == name)
    }

    /// Every hash this build knows, in id order.
    pub const ALL: [KeyHash; 4] = [
        KeyHash::Xxh3,
        KeyHash::Aesh,
        KeyHash::Mx32,
        KeyHash::Moremur,
    ];

    /// The hash of a byte string: XXH3-64 under `KeyHash::Xxh3`, and under `KeyHash::Aesh`
    /// for 4 and 8 bytes (what the integer forms of those widths hash to), AESH-64 for every
    /// other length; under a hash with an integer hash of its own
    /// ([`word_hash`](Self::word_hash): MX32-64, MM64), that hash for 4, 8 and 16 bytes and
    /// AESH-64 for every other length.
    #[inline]
    pub(crate) fn bytes(self, b: &[u8], seed: u64) -> u64 {
        match (self, b.len()) {
            (KeyHash::Xxh3, _) | (KeyHash::Aesh, 4 | 8) => bytes_with_seed(b, seed),
            (hash, _) => hash
                .word_hash()
                .and_then(|kind| with_word_hash!(kind, H => H::bytes(b, seed)))
                .unwrap_or_else(|| aes::hash_bytes_aes(b, seed)),
        }
    }

    /// The integer hash of its own that this hash takes keys of 4, 8 and 16 bytes with, and
    /// the tiers run in lanes, 16-byte keys included (MX32-64 under `KeyHash::Mx32`, MM64
    /// under `KeyHash::Moremur`); `None` under `KeyHash::Xxh3` and `KeyHash::Aesh`, whose
    /// integers XXH3 hashes. With the table below (`WordHashKind`, `with_word_hash!`), the one
    /// place that says which integer hash a filter hash takes.
    #[inline(always)]
    pub(crate) const fn word_hash(self) -> Option<WordHashKind> {
        match self {
            KeyHash::Mx32 => Some(WordHashKind::Mx32),
            KeyHash::Moremur => Some(WordHashKind::Moremur),
            KeyHash::Xxh3 | KeyHash::Aesh => None,
        }
    }

    /// Whether this hash gives a byte string of `len` bytes another hash than AESH-64: 4 and
    /// 8 bytes under `KeyHash::Aesh` (XXH3), 4, 8 and 16 bytes under a hash with an integer
    /// hash of its own ([`word_hash`](Self::word_hash)); none under `KeyHash::Xxh3`, which
    /// does not use AESH-64. The AES batch hashes the others and leaves these to
    /// [`bytes`](Self::bytes).
    #[inline(always)]
    pub(crate) const fn word_width(self, len: usize) -> bool {
        len < 64 && self.word_lengths() >> len & 1 == 1
    }

    /// [`word_width`](Self::word_width) as a set of lengths: bit `len` for each.
    #[inline(always)]
    pub(crate) const fn word_lengths(self) -> u64 {
        match (self, self.word_hash()) {
            (_, Some(_)) => 1 << 4 | 1 << 8 | 1 << 16,
            (KeyHash::Aesh, None) => 1 << 4 | 1 << 8,
            (_, None) => 0,
        }
    }
}

/// Which integer hash ([`WordHash`]) a filter hash takes keys of 4, 8 and 16 bytes with, in
/// lanes ([`KeyHash::word_hash`]): what a batch of such keys carries to the hash plan, which
/// runs the hash it names.
// The discriminants are `KeyHash`'s own (the order of its variants), so that
// `KeyHash::word_hash` compiles to a range check and no table: it runs on every burst call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum WordHashKind {
    /// MX32-64, under `KeyHash::Mx32` (`mx32.rs`).
    Mx32 = 2,
    /// MM64, under `KeyHash::Moremur` (`moremur.rs`).
    Moremur = 3,
}

impl WordHashKind {
    /// The filter hash that takes its keys of 4, 8 and 16 bytes with this one.
    pub(crate) const fn key_hash(self) -> KeyHash {
        match self {
            WordHashKind::Mx32 => KeyHash::Mx32,
            WordHashKind::Moremur => KeyHash::Moremur,
        }
    }
}

/// `$body` with `$h` the [`WordHash`] that `$kind` ([`WordHashKind`]) names: the one table of
/// the integer hashes, beside the list of hashes ([`KeyHash`]) so that a new one is registered
/// in this file alone, and each place that runs one (the kernel's hash plan, a single key's
/// hash, a byte string's) is written once for all.
macro_rules! with_word_hash {
    ($kind:expr, $h:ident => $body:expr) => {
        match $kind {
            $crate::hashing::WordHashKind::Mx32 => {
                type $h = $crate::hashing::mx32::Mx32;
                $body
            }
            $crate::hashing::WordHashKind::Moremur => {
                type $h = $crate::hashing::moremur::Moremur;
                $body
            }
        }
    };
}
pub(crate) use with_word_hash;

impl core::fmt::Display for KeyHash {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

/// Bytes kept inline before the hasher switches to streaming XXH3.
const INLINE: usize = 64;

/// A [`Hasher`] whose output is XXH3-64 (seeded) of a canonical byte stream: every integer is
/// written little-endian and `usize`/`isize` as 64 bits, so the result is the same on every
/// platform. Short keys stay in an inline buffer and take XXH3's one-shot path.
///
/// ```
/// use core::hash::{Hash, Hasher};
/// let mut h = blockbloom::hash::StableHasher::new(0);
/// 5u64.hash(&mut h);
/// assert_eq!(h.finish(), blockbloom::hash::hash_u64(5, 0));
/// ```
#[derive(Clone)]
pub struct StableHasher {
    seed: u64,
    len: usize,
    buf: [u8; INLINE],
    stream: Option<Box<Xxh3>>,
}

impl StableHasher {
    /// A hasher with this seed.
    ///
    /// ```
    /// use core::hash::Hasher;
    /// let h = blockbloom::hash::StableHasher::new(3);
    /// assert_eq!(h.finish(), blockbloom::hash::hash_bytes(b"", 3));
    /// ```
    pub fn new(seed: u64) -> Self {
        StableHasher {
            seed,
            len: 0,
            buf: [0; INLINE],
            stream: None,
        }
    }
}

impl core::fmt::Debug for StableHasher {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("StableHasher")
            .field("seed", &self.seed)
            .finish_non_exhaustive()
    }
}

impl Hasher for StableHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        if let Some(s) = self.stream.as_mut() {
            s.update(bytes);
        } else if self.len + bytes.len() <= INLINE {
            self.buf[self.len..self.len + bytes.len()].copy_from_slice(bytes);
            self.len += bytes.len();
        } else {
            let mut s = Box::new(Xxh3::with_seed(self.seed));
            s.update(&self.buf[..self.len]);
            s.update(bytes);
            self.stream = Some(s);
        }
    }

    #[inline]
    fn finish(&self) -> u64 {
        // Integer keys take XXH3's closed-form 4- and 8-byte paths directly (same bits as the
        // one-shot function, without its length dispatch).
        match (&self.stream, self.len) {
            (Some(s), _) => s.digest(),
            (None, 8) => {
                let k = u64::from_le_bytes(self.buf[..8].try_into().expect("8 bytes"));
                u64_with_flip(k, seed_flip(self.seed))
            }
            (None, 4) => {
                let k = u32::from_le_bytes(self.buf[..4].try_into().expect("4 bytes"));
                u32_with_flip(k, seed_flip(self.seed))
            }
            (None, len) => xxh3_64_with_seed(&self.buf[..len], self.seed),
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.write(&[i]);
    }
    #[inline]
    fn write_u16(&mut self, i: u16) {
        self.write(&i.to_le_bytes());
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.write(&i.to_le_bytes());
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.write(&i.to_le_bytes());
    }
    #[inline]
    fn write_u128(&mut self, i: u128) {
        self.write(&i.to_le_bytes());
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.write(&(i as u64).to_le_bytes());
    }
    #[inline]
    fn write_i8(&mut self, i: i8) {
        self.write_u8(i as u8);
    }
    #[inline]
    fn write_i16(&mut self, i: i16) {
        self.write_u16(i as u16);
    }
    #[inline]
    fn write_i32(&mut self, i: i32) {
        self.write_u32(i as u32);
    }
    #[inline]
    fn write_i64(&mut self, i: i64) {
        self.write_u64(i as u64);
    }
    #[inline]
    fn write_i128(&mut self, i: i128) {
        self.write_u128(i as u128);
    }
    #[inline]
    fn write_isize(&mut self, i: isize) {
        self.write_u64(i as i64 as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A few thousand pseudo-random words (SplitMix64), plus the edges.
    fn words() -> impl Iterator<Item = u64> {
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        [0, 1, u64::MAX, 1 << 63, 0xffff_ffff]
            .into_iter()
            .chain(core::iter::repeat_with(move || {
                s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
                let mut z = s;
                z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                z ^ (z >> 31)
            }))
            .take(4000)
    }

    #[test]
    fn the_flip_gives_back_its_seed() {
        for seed in words() {
            assert_eq!(seed_from_flip(seed_flip(seed)), seed, "{seed:#x}");
        }
    }

    #[test]
    fn short_byte_strings_hash_as_xxh3() {
        let mut w = words();
        let mut buf = [0u8; 40];
        for round in 0..600 {
            for c in buf.chunks_mut(8) {
                c.copy_from_slice(&w.next().unwrap_or(round).to_le_bytes()[..c.len()]);
            }
            let seed = if round % 3 == 0 {
                0
            } else {
                w.next().unwrap_or(7)
            };
            for len in 0..=buf.len() {
                let b = &buf[round as usize % 3..][..len.min(buf.len() - round as usize % 3)];
                assert_eq!(
                    bytes_with_seed(b, seed),
                    xxh3_64_with_seed(b, seed),
                    "len {} seed {seed:#x}",
                    b.len()
                );
            }
        }
    }

    #[test]
    fn sixteen_byte_keys_hash_as_their_bytes() {
        let mut w = words();
        while let (Some(a), Some(b), Some(seed)) = (w.next(), w.next(), w.next()) {
            let key = (a as u128) | (b as u128) << 64;
            for seed in [seed, 0] {
                assert_eq!(
                    u128_with_seed(key, seed),
                    xxh3_64_with_seed(&key.to_le_bytes(), seed),
                    "{key:#x} seed {seed:#x}"
                );
            }
        }
    }
}
