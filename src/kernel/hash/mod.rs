//! The batch hashes, each written once over the SIMD primitives ([`Lanes`](crate::simd::Lanes)),
//! one module per hash family, each equal bit for bit to its scalar form in `crate::hashing`
//! on every key; the integer hashes share their loops over keys (`words`). Which of them a batch runs is the hash plan's choice (`kernel::plan`), made
//! nowhere else.

pub(crate) mod aesh;
pub(crate) mod moremur;
pub(crate) mod mx32;
pub(crate) mod words;
pub(crate) mod xxh3;
pub(crate) mod xxh64;
