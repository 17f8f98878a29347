//! Probing: what a batch does with its keys' hashes. Each hash becomes an entry (its block
//! index beside its low half) and a pattern over the layout's rows, and a block operation
//! ([`block::BlockOp`]) sets, tests or takes the pattern in the key's block ([`block`]); the
//! chunked, prefetching [`pipeline`] drives a batch through them on a SIMD tier, [`burst`]
//! runs up to 64 `u64` keys without it, and [`scalar`] is the reference, one key and one bit
//! at a time, that every tier is tested against.

pub(crate) mod block;
pub(crate) mod burst;
pub(crate) mod pipeline;
pub(crate) mod scalar;
