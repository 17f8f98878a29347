//! The key sources a batch can take, and how each becomes 64-bit hashes: in lanes on a SIMD
//! tier, one at a time on the scalar reference. A new key source is a variant here and its
//! two hash arms.

use super::Lanes;
use crate::error::Error;
use crate::hashing::aes::{self, AesKeys, Fixed, KeySource};
use crate::hashing::{
    KeyHash, bytes_with_seed, mx32, seed_from_flip, u64_with_flip, u128_with_seed,
};

/// An integer key type of up to 64 bits: the key is its 64-bit value (sign-extended if the
/// type is signed, zero-extended if not), on every path and under every hash.
pub(crate) trait Word: Copy {
    /// The key's 64-bit value.
    fn value(self) -> u64;
    /// The values of the first eight keys of `keys` in eight 64-bit lanes (`keys.len() >= 8`).
    fn lanes<L: Lanes>(l: L, keys: &[Self]) -> L::V;
}

macro_rules! words {
    ($($t:ty => $widen:ident as $via:ty),* $(,)?) => {$(
        impl Word for $t {
            #[inline(always)]
            fn value(self) -> u64 {
                self as $via as u64
            }
            #[inline(always)]
            fn lanes<L: Lanes>(l: L, keys: &[$t]) -> L::V {
                l.$widen(keys)
            }
        }
    )*};
}

words! {
    u64 => loadu as u64,
    u32 => widen_u32 as u32, i32 => widen_i32 as i64,
    u16 => widen_u16 as u16, i16 => widen_i16 as i64,
    u8 => widen_u8 as u8, i8 => widen_i8 as i64,
}

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
            $crate::kernel::keys::Narrow::I8($k) => $body,
            $crate::kernel::keys::Narrow::U8($k) => $body,
            $crate::kernel::keys::Narrow::I16($k) => $body,
            $crate::kernel::keys::Narrow::U16($k) => $body,
            $crate::kernel::keys::Narrow::I32($k) => $body,
            $crate::kernel::keys::Narrow::U32($k) => $body,
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
    fn values_into(self, out: &mut [u64], f: impl Fn(u64) -> u64) {
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
    /// Keys of a filter of hash id 2 or 3 that AESH-64 hashes ([`Keys::under`]).
    Aesh(Aesh<'a>),
    /// Keys of 4, 8 and 16 bytes of a filter of hash id 3, which MX32-64 hashes.
    Mx32(Mx32<'a>),
}

/// The keys hash id 3 ([`KeyHash::Mx32`]) hashes with MX32-64: the integer forms of 4, 8 and
/// 16 bytes (byte strings of those lengths are among [`Aesh::BytesMx32`]).
#[derive(Clone, Copy)]
pub enum Mx32<'a> {
    Narrow(Narrow<'a>),
    U64(&'a [u64]),
    U128(&'a [u128]),
    Fixed16(&'a [[u8; 16]]),
}

impl<'a> Mx32<'a> {
    /// The same keys as hash id 1 holds them.
    #[inline(always)]
    fn plain(self) -> Keys<'a> {
        match self {
            Mx32::Narrow(k) => Keys::Narrow(k),
            Mx32::U64(k) => Keys::U64(k),
            Mx32::U128(k) => Keys::U128(k),
            Mx32::Fixed16(k) => Keys::Fixed16(k),
        }
    }

    /// Hashes every key into `out` (same length), one at a time: the scalar reference's.
    fn hash_scalar(self, k: u64, out: &mut [u64]) {
        match self {
            Mx32::Narrow(keys) => keys.values_into(out, |x| mx32::u64_with_key(x, k)),
            Mx32::U64(keys) => {
                for (o, &x) in out.iter_mut().zip(keys) {
                    *o = mx32::u64_with_key(x, k);
                }
            }
            Mx32::U128(keys) => {
                for (o, &x) in out.iter_mut().zip(keys) {
                    *o = mx32::u128_with_key(x, k);
                }
            }
            Mx32::Fixed16(keys) => {
                for (o, x) in out.iter_mut().zip(keys) {
                    *o = mx32::u128_with_key(u128::from_le_bytes(*x), k);
                }
            }
        }
    }
}

/// The keys hash id 2 ([`KeyHash::Aesh`]) hashes with AESH-64: byte strings (but those of 4
/// and 8 bytes, which XXH3 hashes as under hash id 1, as it does the integer forms of those
/// widths) and 16-byte keys; and the byte strings of hash id 3 ([`KeyHash::Mx32`]).
#[derive(Clone, Copy)]
pub enum Aesh<'a> {
    Bytes(ByteKeys<'a>),
    U128(&'a [u128]),
    Fixed16(&'a [[u8; 16]]),
    /// Byte strings under hash id 3: those of 4, 8 and 16 bytes hash with MX32-64, as the
    /// integer forms of those widths do.
    BytesMx32(ByteKeys<'a>),
}

impl<'a> Aesh<'a> {
    /// The same keys as hash id 1 holds them.
    #[inline(always)]
    fn plain(self) -> Keys<'a> {
        match self {
            Aesh::Bytes(b) | Aesh::BytesMx32(b) => Keys::Bytes(b),
            Aesh::U128(k) => Keys::U128(k),
            Aesh::Fixed16(k) => Keys::Fixed16(k),
        }
    }

    /// Hashes every key into `out` (same length): AESH-64 on this CPU's AES instructions if
    /// `machine`, else with the software round (the same bits); byte strings of 4 and 8 bytes
    /// with XXH3, a chunk of nothing else by `xxh3` (the tier's way), else one at a time.
    /// `fixed` hashes fixed-width keys (`Keys::Mx32` of `u64` or `u128`) with MX32-64 in the
    /// tier's lanes: the 8- and 16-byte strings of hash id 3, gathered out of a chunk.
    #[inline(always)]
    pub(crate) fn hash(
        self,
        flip: u64,
        machine: bool,
        out: &mut [u64],
        xxh3: impl FnOnce(Keys<'_>, &mut [u64]),
        fixed: &mut dyn FnMut(Keys<'_>, &mut [u64]),
    ) {
        if self.hash_aes(flip, machine, out, fixed) {
            xxh3(self.plain(), out)
        }
    }

    /// [`hash`](Self::hash) but for a chunk of 4- and 8-byte strings alone, which it leaves
    /// to the caller (`true`, nothing written). Out of line and not generic: every tier shares
    /// one copy of the AES paths (per tier, they were most of the crate's unoptimised build).
    #[inline(never)]
    fn hash_aes(
        self,
        flip: u64,
        machine: bool,
        out: &mut [u64],
        fixed: &mut dyn FnMut(Keys<'_>, &mut [u64]),
    ) -> bool {
        let seed = seed_from_flip(flip);
        let k = AesKeys::new(seed);
        match self {
            Aesh::U128(keys) => {
                let mut bytes = [0u8; 16 * 64];
                for (keys, out) in keys.chunks(64).zip(out.chunks_mut(64)) {
                    for (b, key) in bytes.chunks_exact_mut(16).zip(keys) {
                        b.copy_from_slice(&key.to_le_bytes());
                    }
                    let src = Fixed::<16>(&bytes[..16 * keys.len()]);
                    run(&k, src, machine, out);
                }
                false
            }
            Aesh::Fixed16(keys) => {
                run(&k, Fixed::<16>(keys.as_flattened()), machine, out);
                false
            }
            Aesh::Bytes(b) => bytes(b, KeyHash::Aesh, &k, seed, machine, out, fixed),
            Aesh::BytesMx32(b) => bytes(b, KeyHash::Mx32, &k, seed, machine, out, fixed),
        }
    }

    /// The hash id these keys are under.
    #[inline(always)]
    fn id(self) -> KeyHash {
        match self {
            Aesh::BytesMx32(_) => KeyHash::Mx32,
            _ => KeyHash::Aesh,
        }
    }
}

/// [`split`] of each byte source.
#[inline(always)]
fn bytes(
    b: ByteKeys<'_>,
    hash: KeyHash,
    k: &AesKeys,
    seed: u64,
    machine: bool,
    out: &mut [u64],
    fixed: &mut dyn FnMut(Keys<'_>, &mut [u64]),
) -> bool {
    let s = Split {
        hash,
        k,
        seed,
        machine,
    };
    match b {
        ByteKeys::Slices(keys) => s.run(keys, out, fixed),
        ByteKeys::Strs(keys) => s.run(Strs(keys), out, fixed),
        ByteKeys::Offsets32 { offsets, values } => s.run(Offsets { offsets, values }, out, fixed),
        ByteKeys::Offsets64 { offsets, values } => s.run(Offsets { offsets, values }, out, fixed),
    }
}

/// [`Aesh::hash`] in software, out of line: the scalar reference's, kept out of
/// [`Keys::hash_scalar`] so that its integer loops stay as small as before hash id 2.
#[inline(never)]
fn aesh_scalar(keys: Aesh<'_>, flip: u64, out: &mut [u64]) {
    keys.hash(
        flip,
        false,
        out,
        |keys, out| keys.hash_scalar(flip, out),
        &mut |keys, out| keys.hash_scalar(flip, out),
    )
}

/// AESH-64 of every key of `src`, on the machine's AES instructions or in software; the keys'
/// lengths as a set ([`aes::length_bit`]).
#[inline(always)]
fn run<'k, S: KeySource<'k>>(k: &AesKeys, src: S, machine: bool, out: &mut [u64]) -> u64 {
    if machine {
        aes::hash_source(k, src, out)
    } else {
        aes::hash_source_soft(k, src, out)
    }
}

/// How a chunk of byte strings under hash id 2 or 3 is hashed ([`Split::run`]).
struct Split<'k> {
    hash: KeyHash,
    k: &'k AesKeys,
    seed: u64,
    machine: bool,
}

/// The keys of 8 or 16 bytes gathered at a time for the tier's lanes (a stack buffer of at
/// most 512 bytes).
const GATHER: usize = 32;

impl Split<'_> {
    /// Byte strings under hash id 2 or 3: AESH-64, then the hash of the integer form for those
    /// of its widths ([`KeyHash::bytes`]: XXH3 for 4 and 8 bytes under id 2, MX32 for 4, 8 and
    /// 16 under id 3). Under id 2, `true` (and nothing written) when every key is of 4 or 8
    /// bytes. Under id 3 a chunk of 8- or 16-byte keys only, and the 16-byte keys of any
    /// chunk, are gathered 32 at a time and hashed in the tier's lanes (`fixed`): one at a
    /// time they cost a 16-byte string batch 2.6x.
    #[inline(always)]
    fn run<'a, S: KeySource<'a>>(
        &self,
        src: S,
        out: &mut [u64],
        fixed: &mut dyn FnMut(Keys<'_>, &mut [u64]),
    ) -> bool {
        let (hash, seed) = (self.hash, self.seed);
        let n = src.count();
        // Whether some keys take the integer hash (4 and 8 bytes) and some are 16 bytes,
        // which under id 3 take it in lanes.
        let (words, wide) = if hash == KeyHash::Mx32 {
            if self.one_width(src, out, fixed) {
                return false;
            }
            // AESH-64 of every key first: the pass that reads them says which lengths there
            // are, so a chunk with none of 4, 8 or 16 bytes (a column of other widths) is
            // done, and no count of its own reads the keys' slices again (one ahead of the
            // hash took the misses of their stream: 32-byte strings read once, 9.2-9.5 ns a
            // key with it, 7.7-8.0 without, perf-reports/2026-12-03-string-lengths.md). Keys
            // of those widths are hashed again below, as they were before.
            let seen = run(self.k, src, self.machine, out);
            let sixteen = aes::length_bit(16);
            (
                seen & hash.word_lengths() & !sixteen != 0,
                seen & sixteen != 0,
            )
        } else {
            let words = (0..n)
                .filter(|&i| hash.word_width(src.key(i).len()))
                .count();
            if words == n && n > 0 {
                return true;
            }
            if words < n {
                run(self.k, src, self.machine, out);
            }
            (words > 0, false)
        };
        if words {
            for (i, o) in out.iter_mut().enumerate() {
                let key = src.key(i);
                // 16-byte keys are words only under id 3, where `gather16` hashes them.
                if hash.word_width(key.len()) && key.len() != 16 {
                    *o = hash.bytes(key, seed);
                }
            }
        }
        if wide {
            self.gather16(src, out, fixed);
        }
        false
    }

    /// A chunk of keys of one width that MX32-64 hashes in lanes, 8 or 16 bytes (a column of
    /// one width), gathered and hashed straight into `out` in one pass; `false` at the first
    /// key of another length (`out` then partly written, which the general path overwrites).
    #[inline(always)]
    fn one_width<'a, S: KeySource<'a>>(
        &self,
        src: S,
        out: &mut [u64],
        fixed: &mut dyn FnMut(Keys<'_>, &mut [u64]),
    ) -> bool {
        match src.count().checked_sub(1).map(|last| src.key(last).len()) {
            Some(8) => gather(src, out, u64::from_le_bytes, |k| Mx32::U64(k), fixed),
            Some(16) => gather(src, out, u128::from_le_bytes, |k| Mx32::U128(k), fixed),
            _ => false,
        }
    }

    /// MX32-64 of the 16-byte keys of `src` into their places of `out`, in the tier's lanes,
    /// through a buffer of their places (a chunk of mixed lengths).
    #[inline(always)]
    fn gather16<'a, S: KeySource<'a>>(
        &self,
        src: S,
        out: &mut [u64],
        fixed: &mut dyn FnMut(Keys<'_>, &mut [u64]),
    ) {
        let mut keys = [0u128; GATHER];
        let key16 = |i: usize| <&[u8; 16]>::try_from(src.key(i)).ok();
        let (mut at, mut hashed) = ([0usize; GATHER], [0u64; GATHER]);
        let mut m = 0;
        let mut flush = |keys: &[u128], at: &[usize], out: &mut [u64]| {
            fixed(Keys::Mx32(Mx32::U128(keys)), &mut hashed[..keys.len()]);
            for (&i, &h) in at.iter().zip(&hashed) {
                out[i] = h;
            }
        };
        for i in 0..src.count() {
            if let Some(b) = key16(i) {
                keys[m] = u128::from_le_bytes(*b);
                at[m] = i;
                m += 1;
                if m == GATHER {
                    flush(&keys, &at, out);
                    m = 0;
                }
            }
        }
        if m > 0 {
            flush(&keys[..m], &at[..m], out);
        }
    }
}

/// [`Split::one_width`] for keys of `W` bytes, read as `T` by `word`: `GATHER` at a time into
/// a stack buffer, then hashed into their places of `out` by `fixed`.
#[inline(always)]
fn gather<'a, S: KeySource<'a>, const W: usize, T: Copy + Default>(
    src: S,
    out: &mut [u64],
    word: fn([u8; W]) -> T,
    keys: impl for<'t> Fn(&'t [T]) -> Mx32<'t>,
    fixed: &mut dyn FnMut(Keys<'_>, &mut [u64]),
) -> bool {
    let mut buf = [T::default(); GATHER];
    for (c, out) in out.chunks_mut(GATHER).enumerate() {
        for (j, k) in buf[..out.len()].iter_mut().enumerate() {
            match <[u8; W]>::try_from(src.key(c * GATHER + j)) {
                Ok(b) => *k = word(b),
                Err(_) => return false,
            }
        }
        fixed(Keys::Mx32(keys(&buf[..out.len()])), out);
    }
    true
}

/// String keys, as their UTF-8 bytes.
#[derive(Clone, Copy)]
struct Strs<'a>(&'a [&'a str]);

impl<'a> KeySource<'a> for Strs<'a> {
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
struct Offsets<'a, O> {
    offsets: &'a [O],
    values: &'a [u8],
}

impl<'a, O: Copy + TryInto<usize>> KeySource<'a> for Offsets<'a, O> {
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
    fn len(&self) -> usize {
        match self {
            ByteKeys::Slices(k) => k.len(),
            ByteKeys::Strs(k) => k.len(),
            ByteKeys::Offsets32 { offsets, .. } => offsets.len().saturating_sub(1),
            ByteKeys::Offsets64 { offsets, .. } => offsets.len().saturating_sub(1),
        }
    }

    fn slice(self, start: usize, end: usize) -> ByteKeys<'a> {
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

    /// XXH3 of each key with `seed` into `out` (same length), one key at a time: the
    /// reference, and every tier's hash of byte strings but AVX-512's short ones
    /// ([`bytes`](super::bytes)).
    #[inline(always)]
    fn hash(&self, seed: u64, out: &mut [u64]) {
        match self {
            ByteKeys::Slices(k) => {
                for (o, b) in out.iter_mut().zip(*k) {
                    *o = bytes_with_seed(b, seed);
                }
            }
            ByteKeys::Strs(k) => {
                for (o, s) in out.iter_mut().zip(*k) {
                    *o = bytes_with_seed(s.as_bytes(), seed);
                }
            }
            ByteKeys::Offsets32 { offsets, values } => {
                for (o, w) in out.iter_mut().zip(offsets.windows(2)) {
                    // In bounds: the front-end validated the offsets against `values`.
                    *o = bytes_with_seed(&values[w[0] as usize..w[1] as usize], seed);
                }
            }
            ByteKeys::Offsets64 { offsets, values } => {
                for (o, w) in out.iter_mut().zip(offsets.windows(2)) {
                    *o = bytes_with_seed(&values[w[0] as usize..w[1] as usize], seed);
                }
            }
        }
    }
}

impl<'a> Keys<'a> {
    /// These keys as a filter of `hash` hashes them: under hash id 2, byte strings and 16-byte
    /// keys become [`Keys::Aesh`]; under hash id 3, byte strings become [`Keys::Aesh`] and
    /// the integer forms and 16-byte keys [`Keys::Mx32`]; other keys and hash id 1 as they
    /// are.
    #[inline(always)]
    pub(crate) fn under(self, hash: KeyHash) -> Keys<'a> {
        match (hash, self) {
            (KeyHash::Aesh, Keys::Bytes(b)) => Keys::Aesh(Aesh::Bytes(b)),
            (KeyHash::Aesh, Keys::U128(k)) => Keys::Aesh(Aesh::U128(k)),
            (KeyHash::Aesh, Keys::Fixed16(k)) => Keys::Aesh(Aesh::Fixed16(k)),
            (KeyHash::Mx32, Keys::Bytes(b)) => Keys::Aesh(Aesh::BytesMx32(b)),
            (KeyHash::Mx32, Keys::Narrow(k)) => Keys::Mx32(Mx32::Narrow(k)),
            (KeyHash::Mx32, Keys::U64(k)) => Keys::Mx32(Mx32::U64(k)),
            (KeyHash::Mx32, Keys::U128(k)) => Keys::Mx32(Mx32::U128(k)),
            (KeyHash::Mx32, Keys::Fixed16(k)) => Keys::Mx32(Mx32::Fixed16(k)),
            (_, keys) => keys,
        }
    }

    #[inline(always)]
    pub(crate) fn len(&self) -> usize {
        match self.source() {
            Keys::U64(k) | Keys::Hashes(k) => k.len(),
            Keys::Narrow(k) => k.len(),
            Keys::U128(k) => k.len(),
            Keys::Fixed16(k) => k.len(),
            Keys::Bytes(k) => k.len(),
            Keys::Aesh(_) | Keys::Mx32(_) => unreachable!("`source` unwraps the hash's keys"),
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
            Keys::Aesh(_) | Keys::Mx32(_) => unreachable!("`source` unwraps the hash's keys"),
        }
    }

    /// The keys as hash id 1 holds them (the hash ids' wrappers taken off): what [`len`] and
    /// [`stream`] read. One level, so both inline into a short batch's fixed cost (through the
    /// wrappers' own methods they were out-of-line recursive calls, 45 instructions a call).
    ///
    /// [`len`]: Self::len
    /// [`stream`]: Self::stream
    #[inline(always)]
    fn source(&self) -> Keys<'a> {
        match *self {
            Keys::Aesh(a) => a.plain(),
            Keys::Mx32(m) => m.plain(),
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
            Keys::Aesh(a) => a.plain().slice(start, end).under(a.id()),
            Keys::Mx32(m) => m.plain().slice(start, end).under(KeyHash::Mx32),
        }
    }

    /// Hashes every key into `out` (same length), the reference way.
    pub(crate) fn hash_scalar(&self, flip: u64, out: &mut [u64]) {
        assert_eq!(
            out.len(),
            self.len(),
            "output slice length must equal key count"
        );
        match self {
            Keys::U64(k) => {
                for (o, &x) in out.iter_mut().zip(*k) {
                    *o = u64_with_flip(x, flip);
                }
            }
            Keys::Narrow(k) => k.values_into(out, |x| u64_with_flip(x, flip)),
            Keys::U128(k) => {
                let seed = seed_from_flip(flip);
                for (o, &x) in out.iter_mut().zip(*k) {
                    *o = u128_with_seed(x, seed);
                }
            }
            Keys::Fixed16(k) => {
                let seed = seed_from_flip(flip);
                for (o, x) in out.iter_mut().zip(*k) {
                    *o = u128_with_seed(u128::from_le_bytes(*x), seed);
                }
            }
            Keys::Bytes(k) => k.hash(seed_from_flip(flip), out),
            Keys::Hashes(k) => out.copy_from_slice(k),
            Keys::Aesh(a) => aesh_scalar(*a, flip, out),
            Keys::Mx32(m) => m.hash_scalar(mx32::key(seed_from_flip(flip)), out),
        }
    }

    /// Hashes every key into `out` (same length) in `l`'s lanes.
    #[inline(always)]
    pub(crate) fn hash_lanes<L: Lanes>(&self, l: L, flip: u64, out: &mut [u64]) {
        assert_eq!(
            out.len(),
            self.len(),
            "output slice length must equal key count"
        );
        self.hash_lanes_at(l, flip, 0, out)
    }

    /// Hashes keys `start..start + out.len()` into `out` in `l`'s lanes: the pipeline's
    /// per-chunk step, one match and no re-slicing of the other sources. 16-byte keys are
    /// hashed out of line ([`Lanes::hash_keys16`]), and so are byte strings
    /// ([`Lanes::hash_bytes`]).
    #[inline(always)]
    pub(crate) fn hash_lanes_at<L: Lanes>(&self, l: L, flip: u64, start: usize, out: &mut [u64]) {
        let end = start + out.len();
        match self {
            Keys::U64(k) => l.hash_words(flip, &k[start..end], out),
            Keys::Narrow(n) => each_width!(n, k => l.hash_words(flip, &k[start..end], out)),
            Keys::Hashes(k) => out.copy_from_slice(&k[start..end]),
            Keys::U128(_) | Keys::Fixed16(_) => l.hash_keys16(flip, self.slice(start, end), out),
            Keys::Bytes(_) => l.hash_bytes(flip, self.slice(start, end), out),
            Keys::Aesh(_) => l.hash_aesh(flip, self.slice(start, end), out),
            Keys::Mx32(Mx32::U64(k)) => l.hash_words_mx32(flip, &k[start..end], out),
            Keys::Mx32(Mx32::Narrow(n)) => {
                each_width!(n, k => l.hash_words_mx32(flip, &k[start..end], out))
            }
            Keys::Mx32(_) => l.hash_fixed_mx32(flip, self.slice(start, end), out),
        }
    }
}

#[cfg(test)]
mod tests {
    use alloc::vec::Vec;

    use super::{ByteKeys, Keys, Narrow};
    use crate::hashing::{KeyHash, seed_flip};
    use crate::isa::Isa;
    use crate::kernel::Kernel;
    use crate::key::KeyForm;

    /// Hash id 2 on every tier this CPU runs (NEON's AESE on aarch64, VAES or AES-NI on
    /// x86-64, software on scalar and portable): every byte source, mixed lengths with 4- and
    /// 8-byte keys among them, chunks of 4- and 8-byte keys alone, and 16-byte keys, equal to
    /// the single-key hash, from several starts.
    #[test]
    fn hash_id_2_batches_equal_single_keys_on_every_tier() {
        let text: Vec<u8> = (0..200u32).map(|i| (i * 37 % 251) as u8).collect();
        let lengths = [0, 1, 3, 4, 5, 8, 9, 15, 16, 17, 31, 32, 33, 100];
        let mixed: Vec<&[u8]> = (0..300)
            .map(|i| {
                let n = lengths[i % lengths.len()];
                &text[i % 50..i % 50 + n]
            })
            .collect();
        let words: Vec<&[u8]> = (0..100).map(|i| &text[i..i + 4 + 4 * (i % 2)]).collect();
        let wide: Vec<u128> = (0..100u128)
            .map(|i| i * 0x0123_4567_89ab_cdef_0f1e)
            .collect();
        let fixed: Vec<[u8; 16]> = wide.iter().map(|w| w.to_le_bytes()).collect();
        for seed in [0, 0xfeed] {
            let flip = seed_flip(seed);
            let single = |k: &[&[u8]]| -> Vec<u64> {
                k.iter()
                    .map(|b| KeyForm::Bytes(b).hash_with(KeyHash::Aesh, seed))
                    .collect()
            };
            for isa in Isa::supported() {
                let kernel = Kernel::get(isa).unwrap();
                for keys in [&mixed, &words] {
                    let want = single(keys);
                    let mut offsets = alloc::vec![0i64];
                    let mut values = Vec::new();
                    for k in keys.iter() {
                        values.extend_from_slice(k);
                        offsets.push(values.len() as i64);
                    }
                    let offsets32: Vec<i32> = offsets.iter().map(|&o| o as i32).collect();
                    let sources = [
                        ByteKeys::Slices(keys),
                        ByteKeys::Offsets32 {
                            offsets: &offsets32,
                            values: &values,
                        },
                        ByteKeys::Offsets64 {
                            offsets: &offsets,
                            values: &values,
                        },
                    ];
                    for source in sources {
                        for start in [0, 3, 8] {
                            let mut out = alloc::vec![0u64; keys.len() - start];
                            let k = Keys::Bytes(source).under(KeyHash::Aesh);
                            kernel.hash_keys(flip, k, start, &mut out);
                            assert_eq!(out, want[start..], "{isa}, from {start}");
                        }
                    }
                }
                let want: Vec<u64> = wide
                    .iter()
                    .map(|&w| KeyForm::U128(w).hash_with(KeyHash::Aesh, seed))
                    .collect();
                let mut out = alloc::vec![0u64; wide.len()];
                kernel.hash_keys(flip, Keys::U128(&wide).under(KeyHash::Aesh), 0, &mut out);
                assert_eq!(out, want, "{isa}, u128");
                kernel.hash_keys(
                    flip,
                    Keys::Fixed16(&fixed).under(KeyHash::Aesh),
                    0,
                    &mut out,
                );
                assert_eq!(out, want, "{isa}, [u8; 16]");
            }
        }
    }

    /// Hash id 3 on every tier this CPU runs: `u64`, `u32` and 16-byte keys in MX32's lanes
    /// and byte strings of every length (4, 8 and 16 bytes by MX32, the rest by AESH), equal to
    /// the single-key hash, from several starts and lengths (whole chunks of eight and
    /// remainders), in chunks with and without keys of those widths.
    #[test]
    fn hash_id_3_batches_equal_single_keys_on_every_tier() {
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            s = s.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            s ^ s >> 29
        };
        let words: Vec<u64> = (0..203)
            .map(|i| if i % 5 == 0 { i } else { next() })
            .collect();
        let halves: Vec<u32> = words.iter().map(|&w| (w >> 7) as u32).collect();
        let wide: Vec<u128> = words
            .iter()
            .map(|&w| (w as u128) << 64 | next() as u128)
            .collect();
        let fixed: Vec<[u8; 16]> = wide.iter().map(|w| w.to_le_bytes()).collect();
        let text: Vec<u8> = (0..300u32).map(|i| (i * 37 % 251) as u8).collect();
        let lengths = [4, 8, 16, 0, 3, 5, 9, 17, 32];
        let mixed: Vec<&[u8]> = (0..200).map(|i| &text[i..i + lengths[i % 9]]).collect();
        let only_words: Vec<&[u8]> = (0..90).map(|i| &text[i..i + lengths[i % 3]]).collect();
        // One width (gathered into lanes), and one width but for a key past the first 32.
        let all8: Vec<&[u8]> = (0..70).map(|i| &text[i..i + 8]).collect();
        let all16: Vec<&[u8]> = (0..70).map(|i| &text[i..i + 16]).collect();
        let mut late = all16.clone();
        late[40] = &text[..5];
        // No key of 4, 8 or 16 bytes (the AES pass alone), lengths past 63 among them.
        let others = [0, 3, 5, 9, 17, 32, 63, 64, 72, 80];
        let no_words: Vec<&[u8]> = (0..75).map(|i| &text[i..i + others[i % 10]]).collect();
        for seed in [0, 0xfeed, u64::MAX] {
            let flip = seed_flip(seed);
            let one = |k: KeyForm<'_>| k.hash_with(KeyHash::Mx32, seed);
            for isa in Isa::supported() {
                let kernel = Kernel::get(isa).unwrap();
                for start in [0, 3, 8, 200] {
                    let check = |keys: Keys<'_>, want: Vec<u64>, what: &str| {
                        let mut out = alloc::vec![0u64; want.len() - start];
                        kernel.hash_keys(flip, keys.under(KeyHash::Mx32), start, &mut out);
                        assert_eq!(out, want[start..], "{isa}, {what}, from {start}");
                    };
                    check(
                        Keys::U64(&words),
                        words.iter().map(|&w| one(KeyForm::U64(w))).collect(),
                        "u64",
                    );
                    check(
                        Keys::Narrow(Narrow::U32(&halves)),
                        halves
                            .iter()
                            .map(|&w| one(KeyForm::U64(w as u64)))
                            .collect(),
                        "u32",
                    );
                    let want: Vec<u64> = wide.iter().map(|&w| one(KeyForm::U128(w))).collect();
                    check(Keys::U128(&wide), want.clone(), "u128");
                    check(Keys::Fixed16(&fixed), want, "[u8; 16]");
                    for keys in [&mixed, &only_words, &all8, &all16, &late, &no_words] {
                        if start < keys.len() {
                            let want = keys.iter().map(|b| one(KeyForm::Bytes(b))).collect();
                            check(Keys::Bytes(ByteKeys::Slices(keys)), want, "bytes");
                        }
                    }
                }
            }
            // The integer forms and their bytes are one key.
            for &w in &words {
                assert_eq!(one(KeyForm::U64(w)), one(KeyForm::Bytes(&w.to_le_bytes())));
            }
        }
    }

    /// Integers of every width are their 64-bit value (sign-extended if signed) on every tier
    /// under every hash id: each narrow batch hashes as the `u64` batch of the widened values,
    /// from several starts (whole chunks of eight and remainders).
    #[test]
    fn narrow_integers_hash_as_their_64_bit_value_on_every_tier() {
        let mut s = 0x0123_4567_89ab_cdefu64;
        let mut next = move || {
            s = s.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            s >> 17
        };
        let raw: Vec<u64> = (0..77).map(|_| next()).collect();
        let i8s: Vec<i8> = raw.iter().map(|&r| r as i8).collect();
        let u8s: Vec<u8> = raw.iter().map(|&r| r as u8).collect();
        let i16s: Vec<i16> = raw.iter().map(|&r| r as i16).collect();
        let u16s: Vec<u16> = raw.iter().map(|&r| r as u16).collect();
        let i32s: Vec<i32> = raw.iter().map(|&r| r as i32).collect();
        let u32s: Vec<u32> = raw.iter().map(|&r| r as u32).collect();
        let sources: [(&str, Narrow<'_>, Vec<u64>); 6] = [
            (
                "i8",
                Narrow::I8(&i8s),
                i8s.iter().map(|&v| v as i64 as u64).collect(),
            ),
            (
                "u8",
                Narrow::U8(&u8s),
                u8s.iter().map(|&v| v as u64).collect(),
            ),
            (
                "i16",
                Narrow::I16(&i16s),
                i16s.iter().map(|&v| v as i64 as u64).collect(),
            ),
            (
                "u16",
                Narrow::U16(&u16s),
                u16s.iter().map(|&v| v as u64).collect(),
            ),
            (
                "i32",
                Narrow::I32(&i32s),
                i32s.iter().map(|&v| v as i64 as u64).collect(),
            ),
            (
                "u32",
                Narrow::U32(&u32s),
                u32s.iter().map(|&v| v as u64).collect(),
            ),
        ];
        for hash in [KeyHash::Xxh3, KeyHash::Aesh, KeyHash::Mx32] {
            for seed in [0, 0xfeed] {
                let flip = seed_flip(seed);
                for isa in Isa::supported() {
                    let kernel = Kernel::get(isa).unwrap();
                    for (name, narrow, values) in &sources {
                        let want: Vec<u64> = values
                            .iter()
                            .map(|&v| KeyForm::U64(v).hash_with(hash, seed))
                            .collect();
                        for start in [0, 5, 8, 70] {
                            let mut out = alloc::vec![0u64; values.len() - start];
                            let keys = Keys::Narrow(*narrow).under(hash);
                            kernel.hash_keys(flip, keys, start, &mut out);
                            assert_eq!(out, want[start..], "{isa}, {hash:?}, {name}, from {start}");
                            let mut wide = alloc::vec![0u64; values.len() - start];
                            let keys = Keys::U64(values).under(hash);
                            kernel.hash_keys(flip, keys, start, &mut wide);
                            assert_eq!(out, wide, "{isa}, {hash:?}, {name} against u64");
                        }
                    }
                }
            }
        }
    }
}
