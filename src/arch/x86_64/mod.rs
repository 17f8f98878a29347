//! x86-64 tiers: AVX2 and AVX-512, each a token type whose existence proves CPU support.

mod avx2;
mod avx512;

use super::{Isa, Kernel, kernel_table};

pub(crate) static AVX2: Kernel = kernel_table!(Isa::Avx2, avx2);
pub(crate) static AVX512: Kernel = kernel_table!(Isa::Avx512, avx512);
