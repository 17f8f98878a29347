//! The shape every integer hash of 64-bit values and 16-byte keys has ([`WordHash`]): what it
//! does to one key, and to eight keys' values in SIMD lanes. Each such hash's file (`mx32.rs`,
//! `moremur.rs`) implements it beside its scalar definition; the loops over keys of every
//! width, the scalar reference's loop and the hash plan's choice of where to run them are
//! written once for all of them (`kernel::hash::words`, `kernel::plan`).

use super::KeyHash;
use crate::simd::Lanes;

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

/// An integer hash of 64-bit values and 16-byte keys, in lanes and one key at a time, equal
/// bit for bit on each key.
pub(crate) trait WordHash {
    /// Which one it is.
    const KIND: WordHashKind;

    /// Whether its lanes multiply 64-bit values ([`Lanes::mul64`]), so that a batch runs them
    /// where the tier's 64-bit multiply is best ([`Lanes::with_mul64`]).
    const MUL64: bool;

    /// The key xored into every key's value, from the filter's seed.
    fn key(seed: u64) -> u64;

    /// One 64-bit value's hash, given [`key`](Self::key)'s result: the scalar reference.
    fn u64_with_key(v: u64, k: u64) -> u64;

    /// One 16-byte key's hash (its little-endian bytes), given [`key`](Self::key)'s result.
    fn u128_with_key(v: u128, k: u64) -> u64;

    /// Eight values' hashes, from the values xored with the key.
    fn lanes<L: Lanes>(l: L, keyed: L::V) -> L::V;

    /// Eight 16-byte keys' hashes, from their low halves xored with the key and their high
    /// halves.
    // Only x86-64's tiers split 16-byte keys in registers (`Lanes::KEYS16_IN_LANES`).
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    fn lanes16<L: Lanes>(l: L, lo_keyed: L::V, hi: L::V) -> L::V;
}
