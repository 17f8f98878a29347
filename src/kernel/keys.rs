//! The key sources a batch can take, and how each becomes 64-bit hashes: in lanes on a SIMD
//! tier, one at a time on the scalar reference. A new key source is a variant here and its
//! two hash arms.

use super::Lanes;
use crate::hashing::{u32_with_flip, u64_with_flip};

/// Keys of a batch: raw `u64`/`u32` keys (hashed in lanes) or hashes.
#[derive(Clone, Copy)]
pub enum Keys<'a> {
    U64(&'a [u64]),
    U32(&'a [u32]),
    Hashes(&'a [u64]),
}

impl<'a> Keys<'a> {
    pub(crate) fn len(&self) -> usize {
        match self {
            Keys::U64(k) | Keys::Hashes(k) => k.len(),
            Keys::U32(k) => k.len(),
        }
    }

    /// Keys `start..end`.
    #[inline(always)]
    pub(crate) fn slice(self, start: usize, end: usize) -> Keys<'a> {
        match self {
            Keys::U64(k) => Keys::U64(&k[start..end]),
            Keys::U32(k) => Keys::U32(&k[start..end]),
            Keys::Hashes(k) => Keys::Hashes(&k[start..end]),
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
            Keys::U32(k) => {
                for (o, &x) in out.iter_mut().zip(*k) {
                    *o = u32_with_flip(x, flip);
                }
            }
            Keys::Hashes(k) => out.copy_from_slice(k),
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
        match self {
            Keys::U64(k) => l.hash_u64(flip, k, out),
            Keys::U32(k) => l.hash_u32(flip, k, out),
            Keys::Hashes(k) => out.copy_from_slice(k),
        }
    }
}
