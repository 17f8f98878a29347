//! The batch hashes over the key shapes, each written once over the SIMD primitives
//! ([`Lanes`](crate::simd::Lanes)) and equal bit for bit to its scalar form in
//! `crate::hashing` on every key: XXH3's byte strings (`xxh3`) and AESH-64 (`aesh`), which read
//! the key shapes. The integer hashes' lanes sit each in its own file in `crate::hashing`,
//! beside its scalar form, with the loops they share (`hashing::word_hash`); which of them a
//! batch runs is the hash plan's choice (`kernel::plan`), made nowhere else.

pub(crate) mod aesh;
pub(crate) mod xxh3;
