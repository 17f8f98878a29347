//! x86-64 tiers: AVX2 and AVX-512, each a token type whose existence proves CPU support.

mod avx2;
mod avx512;

use super::Isa;
use super::Kernel;

pub(crate) static AVX2: Kernel = Kernel {
    isa: Isa::Avx2,
    insert: avx2::insert,
    query: avx2::query,
    hash_u64: avx2::hash_u64,
    hash_u32: avx2::hash_u32,
};

pub(crate) static AVX512: Kernel = Kernel {
    isa: Isa::Avx512,
    insert: avx512::insert,
    query: avx512::query,
    hash_u64: avx512::hash_u64,
    hash_u32: avx512::hash_u32,
};
