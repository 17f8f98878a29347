//! The baseline tier: `wide` lanes. `wide` picks its instructions at compile time (SSE2 on
//! any x86-64, NEON on aarch64), so this tier is always available. A block is two `u64x4`,
//! a split block one `u32x8`.

use wide::{u32x8, u64x4};

use super::Lanes;

/// The baseline tier's token (every CPU of the target runs it).
#[derive(Clone, Copy)]
pub(crate) struct Portable;

#[inline(always)]
fn each(a: [u64x4; 2], b: [u64x4; 2], f: impl Fn(u64x4, u64x4) -> u64x4) -> [u64x4; 2] {
    [f(a[0], b[0]), f(a[1], b[1])]
}

#[inline(always)]
fn four(w: &[u64]) -> u64x4 {
    u64x4::new([w[0], w[1], w[2], w[3]])
}

impl Lanes for Portable {
    type V = [u64x4; 2];
    type H = u32x8;
    const ISA: crate::isa::Isa = crate::isa::Isa::Portable;
    /// Not on x86-64 and aarch64, where the tier is a fallback: every aarch64 CPU has NEON,
    /// and an x86-64 one without AVX2 predates 2013-2015. Its unrolled copies were a large
    /// share of an x86-64 build of the library, for somewhat faster batches on this tier
    /// (measured: `perf-reports/2026-12-03-portable-rounds.md`).
    const UNROLL_BATCHES: bool = !cfg!(any(target_arch = "x86_64", target_arch = "aarch64"));

    #[inline(always)]
    fn splat(self, x: u64) -> Self::V {
        [u64x4::splat(x); 2]
    }
    #[inline(always)]
    fn load(self, w: &[u64; 8]) -> Self::V {
        [four(&w[..4]), four(&w[4..])]
    }
    #[inline(always)]
    fn store(self, w: &mut [u64; 8], v: Self::V) {
        self.storeu(w, v)
    }
    #[inline(always)]
    fn loadu(self, w: &[u64]) -> Self::V {
        [four(&w[..4]), four(&w[4..8])]
    }
    #[inline(always)]
    fn storeu(self, out: &mut [u64], v: Self::V) {
        out[..4].copy_from_slice(&v[0].to_array());
        out[4..8].copy_from_slice(&v[1].to_array());
    }
    #[inline(always)]
    fn widen_u32(self, k: &[u32]) -> Self::V {
        let w = |i: usize| {
            u64x4::new([
                k[i] as u64,
                k[i + 1] as u64,
                k[i + 2] as u64,
                k[i + 3] as u64,
            ])
        };
        [w(0), w(4)]
    }
    #[inline(always)]
    fn or(self, a: Self::V, b: Self::V) -> Self::V {
        each(a, b, |x, y| x | y)
    }
    #[inline(always)]
    fn and(self, a: Self::V, b: Self::V) -> Self::V {
        each(a, b, |x, y| x & y)
    }
    #[inline(always)]
    fn xor(self, a: Self::V, b: Self::V) -> Self::V {
        each(a, b, |x, y| x ^ y)
    }
    #[inline(always)]
    fn add(self, a: Self::V, b: Self::V) -> Self::V {
        each(a, b, |x, y| x + y)
    }
    #[inline(always)]
    fn mul32(self, a: Self::V, b: Self::V) -> Self::V {
        // Both operands are below 2^32, so the full product is the 32x32 product.
        each(a, b, |x, y| x * y)
    }
    #[inline(always)]
    fn mul64(self, a: Self::V, b: Self::V) -> Self::V {
        each(a, b, |x, y| x * y)
    }
    #[inline(always)]
    fn shr<const N: i32>(self, a: Self::V) -> Self::V {
        a.map(|x| x.unbounded_shr_scalar(N as u32))
    }
    #[inline(always)]
    fn shl<const N: i32>(self, a: Self::V) -> Self::V {
        a.map(|x| x.unbounded_shl_scalar(N as u32))
    }
    #[inline(always)]
    fn shl_var(self, a: Self::V, count: Self::V) -> Self::V {
        each(a, count, |x, c| x.unbounded_shl(c))
    }
    // A shift per lane in `wide`; but under Miri this tier takes the paths that require one,
    // so that Miri checks their unchecked accesses (it cannot run the AVX tiers).
    const VARIABLE_SHIFT: bool = cfg!(miri);
    #[inline(always)]
    fn covers(self, b: Self::V, p: Self::V) -> bool {
        ((p[0] & !b[0]) | (p[1] & !b[1])) == u64x4::ZERO
    }

    #[inline(always)]
    fn splat32(self, x: u32) -> Self::H {
        u32x8::splat(x)
    }
    #[inline(always)]
    fn load32(self, w: &[u32; 8]) -> Self::H {
        u32x8::new(*w)
    }
    #[inline(always)]
    fn store32(self, w: &mut [u32; 8], v: Self::H) {
        *w = v.to_array();
    }
    #[inline(always)]
    fn or32(self, a: Self::H, b: Self::H) -> Self::H {
        a | b
    }
    #[inline(always)]
    fn mul32x32(self, a: Self::H, b: Self::H) -> Self::H {
        a * b
    }
    #[inline(always)]
    fn shr32<const N: i32>(self, a: Self::H) -> Self::H {
        a.unbounded_shr_scalar(N as u32)
    }
    #[inline(always)]
    fn shl32_var(self, a: Self::H, count: Self::H) -> Self::H {
        a.unbounded_shl(count)
    }
    #[inline(always)]
    fn covers32(self, b: Self::H, p: Self::H) -> bool {
        (b & p) == p
    }
}
