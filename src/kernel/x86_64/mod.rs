//! x86-64 tiers: AVX2 and AVX-512, each a token type whose existence proves CPU support.

pub(super) mod avx2;
pub(super) mod avx512;
