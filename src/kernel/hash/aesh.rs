//! AESH-64 over a batch: [`Aesh`] keys (byte strings and 16-byte keys of a filter whose hash
//! takes them with AESH-64) on the CPU's AES rounds or the software round (the same bits),
//! and, for the byte strings whose hash is the integer hash of their width (4 and 8 bytes
//! with XXH3 under `KeyHash::Aesh`; 4, 8 and 16 bytes with the filter hash's own integer
//! hash, `KeyHash::word_hash`), those keys picked out and handed back to the tier's lanes.

use crate::hashing::aes::{self, AesKeys, ByteSource, Fixed};
use crate::hashing::{KeyHash, WordHashKind, seed_from_flip};
use crate::kernel::shapes::{Aesh, ByteKeys, FixedWidth, Keys, Offsets, Strs};

impl<'a> Aesh<'a> {
    /// Hashes every key into `out` (same length): AESH-64 on this CPU's AES instructions if
    /// `machine`, else with the software round (the same bits); byte strings of 4 and 8 bytes
    /// with XXH3, a chunk of nothing else by `xxh3` (the tier's way), else one at a time.
    /// `fixed` hashes fixed-width keys (`Keys::Fixed` of `u64` or `u128`) with their integer
    /// hash in the tier's lanes: the 8- and 16-byte strings of a hash with an integer hash of
    /// its own, gathered out of a chunk.
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
            Aesh::Bytes(hash, b) => bytes(b, hash, &k, seed, machine, out, fixed),
        }
    }
}

/// [`Split::run`] of each byte source.
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

/// AESH-64 of every key of `src`, on the machine's AES instructions or in software; the keys'
/// lengths as a set ([`aes::length_bit`]).
#[inline(always)]
fn run<'k, S: ByteSource<'k>>(k: &AesKeys, src: S, machine: bool, out: &mut [u64]) -> u64 {
    if machine {
        aes::hash_source(k, src, out)
    } else {
        aes::hash_source_soft(k, src, out)
    }
}

/// How a chunk of byte strings under `KeyHash::Aesh` or a hash with an integer hash of its own
/// is hashed ([`Split::run`]).
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
    /// Byte strings under `KeyHash::Aesh` or a hash with an integer hash of its own: AESH-64,
    /// then the hash of the integer form for those of its widths ([`KeyHash::bytes`]: XXH3 for
    /// 4 and 8 bytes under `Aesh`, the integer hash for 4, 8 and 16 under the others). Under
    /// `Aesh`, `true` (and nothing written) when every key is of 4 or 8 bytes. Under the other
    /// two ([`KeyHash::word_hash`]) a chunk of 8- or 16-byte keys only, and the
    /// 16-byte keys of any chunk, are gathered 32 at a time and hashed in the tier's lanes
    /// (`fixed`): one at a time they made a 16-byte string batch much slower
    /// (perf-reports/2026-12-01-defaults.md).
    #[inline(always)]
    fn run<'a, S: ByteSource<'a>>(
        &self,
        src: S,
        out: &mut [u64],
        fixed: &mut dyn FnMut(Keys<'_>, &mut [u64]),
    ) -> bool {
        let (hash, seed) = (self.hash, self.seed);
        let n = src.count();
        // Whether some keys take the integer hash (4 and 8 bytes) and some are 16 bytes,
        // which under a hash with an integer hash of its own take it in lanes.
        let (words, wide) = if let Some(kind) = hash.word_hash() {
            if self.one_width(kind, src, out, fixed) {
                return false;
            }
            // AESH-64 of every key first: the pass that reads them says which lengths there
            // are, so a chunk with none of 4, 8 or 16 bytes (a column of other widths) is
            // done, and no count of its own reads the keys' slices again (one ahead of the
            // hash took the misses of their stream, measured in
            // perf-reports/2026-12-03-string-lengths.md). Keys of those widths are hashed
            // again below, as they were before.
            let seen = run(self.k, src, self.machine, out);
            let sixteen = aes::length_bit(16);
            (
                seen & hash.word_lengths() & !sixteen != 0,
                (seen & sixteen != 0).then_some(kind),
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
            (words > 0, None)
        };
        if words {
            for (i, o) in out.iter_mut().enumerate() {
                let key = src.key(i);
                // 16-byte keys are words only under a hash with an integer hash of its own,
                // where `gather16` hashes them.
                if hash.word_width(key.len()) && key.len() != 16 {
                    *o = hash.bytes(key, seed);
                }
            }
        }
        if let Some(kind) = wide {
            self.gather16(kind, src, out, fixed);
        }
        false
    }

    /// A chunk of keys of one width that the hash takes in lanes, 8 or 16 bytes (a column of
    /// one width), gathered and hashed straight into `out` in one pass; `false` at the first
    /// key of another length (`out` then partly written, which the general path overwrites).
    #[inline(always)]
    fn one_width<'a, S: ByteSource<'a>>(
        &self,
        kind: WordHashKind,
        src: S,
        out: &mut [u64],
        fixed: &mut dyn FnMut(Keys<'_>, &mut [u64]),
    ) -> bool {
        match src.count().checked_sub(1).map(|last| src.key(last).len()) {
            Some(8) => gather(
                kind,
                src,
                out,
                u64::from_le_bytes,
                |k| FixedWidth::U64(k),
                fixed,
            ),
            Some(16) => {
                let word = u128::from_le_bytes;
                gather(kind, src, out, word, |k| FixedWidth::U128(k), fixed)
            }
            _ => false,
        }
    }

    /// The hash of the 16-byte keys of `src` into their places of `out`, in the tier's lanes,
    /// through a buffer of their places (a chunk of mixed lengths).
    #[inline(always)]
    fn gather16<'a, S: ByteSource<'a>>(
        &self,
        kind: WordHashKind,
        src: S,
        out: &mut [u64],
        fixed: &mut dyn FnMut(Keys<'_>, &mut [u64]),
    ) {
        let mut keys = [0u128; GATHER];
        let key16 = |i: usize| <&[u8; 16]>::try_from(src.key(i)).ok();
        let (mut at, mut hashed) = ([0usize; GATHER], [0u64; GATHER]);
        let mut m = 0;
        let mut flush = |keys: &[u128], at: &[usize], out: &mut [u64]| {
            let keys = Keys::Fixed(kind, FixedWidth::U128(keys));
            fixed(keys, &mut hashed[..keys.len()]);
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
fn gather<'a, S: ByteSource<'a>, const W: usize, T: Copy + Default>(
    kind: WordHashKind,
    src: S,
    out: &mut [u64],
    word: fn([u8; W]) -> T,
    keys: impl for<'t> Fn(&'t [T]) -> FixedWidth<'t>,
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
        fixed(Keys::Fixed(kind, keys(&buf[..out.len()])), out);
    }
    true
}
