//! The batch hashes over the key shapes, each written once over the SIMD primitives
//! ([`Lanes`](crate::simd::Lanes)) and equal bit for bit to its scalar form in
//! `crate::hashing` on every key: XXH3 (`xxh3`), AESH-64 (`aesh`), and the loops over keys of every
//! width that the integer hashes share (`words`; each integer hash's lanes sit in its own file
//! in `crate::hashing`, beside its scalar form, as XXH64's do). Which of them a
//! batch runs is the hash plan's choice (`kernel::plan`), made nowhere else.

pub(crate) mod aesh;
pub(crate) mod words;
pub(crate) mod xxh3;
