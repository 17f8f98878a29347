//! NEON tier (aarch64): a block is four 128-bit registers, a split block two.
//!
//! NEON has no 64-bit lane multiply; [`Lanes::mul64`] builds it from 32-bit products.
//! `USHL` shifts left by the count's signed low byte and gives zero from 64 up, which is
//! exactly what [`Lanes::shl_var`] promises for counts `0..128`.

use core::arch::aarch64::*;
use core::sync::atomic::AtomicU64;

use super::Lanes;

/// Proof that the CPU supports NEON: only [`Neon::new_unchecked`] makes one.
#[derive(Clone, Copy)]
pub(crate) struct Neon(());

impl Neon {
    /// # Safety
    /// The CPU must support NEON.
    #[inline(always)]
    pub(crate) unsafe fn new_unchecked() -> Neon {
        Neon(())
    }
}

type V = [uint64x2_t; 4];
type H = [uint32x4_t; 2];

// Every `unsafe` block below relies on the same fact: a `Neon` value exists, so the CPU
// supports NEON (see `new_unchecked`); loads and stores go through references of at least
// the width read or written (NEON loads need no alignment).

/// `f` on each of the four registers (with the token first, for this file's helpers).
macro_rules! quads {
    ($f:path, $($a:expr),*) => {
        // SAFETY: NEON is present (token); register-only operations.
        unsafe { [$f($($a[0]),*), $f($($a[1]),*), $f($($a[2]),*), $f($($a[3]),*)] }
    };
    ($f:path; $t:expr; $($a:expr),*) => {
        [$f($t, $($a[0]),*), $f($t, $($a[1]),*), $f($t, $($a[2]),*), $f($t, $($a[3]),*)]
    };
}

/// Low 64 bits of `a * b` per lane: `lo*lo + ((lo*hi + hi*lo) << 32)`, the cross products
/// from one 32-bit multiply against `b` with its halves swapped, summed pairwise. A
/// function, not a closure, so it inlines with the caller's target features.
#[inline(always)]
fn mul64(_: Neon, a: uint64x2_t, b: uint64x2_t) -> uint64x2_t {
    // SAFETY: NEON is present (token); register-only operations.
    unsafe {
        let a32 = vreinterpretq_u32_u64(a);
        let cross = vmulq_u32(a32, vrev64q_u32(vreinterpretq_u32_u64(b)));
        let high = vshlq_n_u64::<32>(vpaddlq_u32(cross));
        vmlal_u32(high, vmovn_u64(a), vmovn_u64(b))
    }
}

/// `a * b` per lane of values below 2^32.
#[inline(always)]
fn mul32(_: Neon, a: uint64x2_t, b: uint64x2_t) -> uint64x2_t {
    // SAFETY: NEON is present (token); register-only operations.
    unsafe { vmull_u32(vmovn_u64(a), vmovn_u64(b)) }
}

/// Swaps the 32-bit halves of each 64-bit lane (a rotate by 32).
#[inline(always)]
fn swap_halves(_: Neon, a: uint64x2_t) -> uint64x2_t {
    // SAFETY: NEON is present (token); register-only operations.
    unsafe { vreinterpretq_u64_u32(vrev64q_u32(vreinterpretq_u32_u64(a))) }
}

#[inline(always)]
fn shl_var(_: Neon, a: uint64x2_t, count: uint64x2_t) -> uint64x2_t {
    // SAFETY: NEON is present (token); register-only operations.
    unsafe { vshlq_u64(a, vreinterpretq_s64_u64(count)) }
}

impl Lanes for Neon {
    type V = V;
    type H = H;
    const ISA: crate::isa::Isa = crate::isa::Isa::Neon;

    // AESE where this CPU has the AES extension (the AES code checks and enables it).
    const AES_ROUNDS: bool = true;

    #[inline(always)]
    fn splat(self, x: u64) -> V {
        // SAFETY: NEON is present (token).
        unsafe { [vdupq_n_u64(x); 4] }
    }
    #[inline(always)]
    fn load(self, w: &[u64; 8]) -> V {
        self.loadu(w)
    }
    #[inline(always)]
    fn store(self, w: &mut [u64; 8], v: V) {
        self.storeu(w, v)
    }
    #[inline(always)]
    fn loadu(self, w: &[u64]) -> V {
        let w = &w[..8];
        // SAFETY: NEON is present; `w` holds 8 words.
        let x = unsafe { vld1q_u64_x4(w.as_ptr()) };
        [x.0, x.1, x.2, x.3]
    }
    #[inline(always)]
    fn storeu(self, out: &mut [u64], v: V) {
        let out = &mut out[..8];
        // SAFETY: NEON is present; `out` holds 8 words.
        unsafe { vst1q_u64_x4(out.as_mut_ptr(), uint64x2x4_t(v[0], v[1], v[2], v[3])) }
    }
    #[inline(always)]
    fn widen_u32(self, k: &[u32]) -> V {
        let k = &k[..8];
        // SAFETY: NEON is present; `k` holds 8 u32.
        unsafe {
            let x = vld1q_u32_x2(k.as_ptr());
            [
                vmovl_u32(vget_low_u32(x.0)),
                vmovl_high_u32(x.0),
                vmovl_u32(vget_low_u32(x.1)),
                vmovl_high_u32(x.1),
            ]
        }
    }
    #[inline(always)]
    fn or(self, a: V, b: V) -> V {
        quads!(vorrq_u64, a, b)
    }
    #[inline(always)]
    fn and(self, a: V, b: V) -> V {
        quads!(vandq_u64, a, b)
    }
    #[inline(always)]
    fn xor(self, a: V, b: V) -> V {
        quads!(veorq_u64, a, b)
    }
    #[inline(always)]
    fn add(self, a: V, b: V) -> V {
        quads!(vaddq_u64, a, b)
    }
    #[inline(always)]
    fn mul32(self, a: V, b: V) -> V {
        quads!(mul32; self; a, b)
    }
    #[inline(always)]
    fn mul_halves(self, a: V, b: V) -> V {
        // `vmovn` keeps the low halves, so `umull` reads nothing else.
        self.mul32(a, b)
    }
    #[inline(always)]
    fn mul64(self, a: V, b: V) -> V {
        quads!(mul64; self; a, b)
    }
    #[inline(always)]
    fn shr<const N: i32>(self, a: V) -> V {
        quads!(vshrq_n_u64::<N>, a)
    }
    #[inline(always)]
    fn shl<const N: i32>(self, a: V) -> V {
        quads!(vshlq_n_u64::<N>, a)
    }
    #[inline(always)]
    fn rotl<const L: i32, const R: i32>(self, a: V) -> V {
        if L == 32 {
            quads!(swap_halves; self; a)
        } else {
            self.or(self.shl::<L>(a), self.shr::<R>(a))
        }
    }
    #[inline(always)]
    fn shl_var(self, a: V, count: V) -> V {
        quads!(shl_var; self; a, count)
    }
    #[inline(always)]
    fn covers(self, b: V, p: V) -> bool {
        let missing = quads!(vbicq_u64, p, b);
        // SAFETY: NEON is present (token).
        unsafe {
            let any = vorrq_u64(
                vorrq_u64(missing[0], missing[1]),
                vorrq_u64(missing[2], missing[3]),
            );
            vmaxvq_u32(vreinterpretq_u32_u64(any)) == 0
        }
    }

    #[inline(always)]
    fn splat32(self, x: u32) -> H {
        // SAFETY: NEON is present (token).
        unsafe { [vdupq_n_u32(x); 2] }
    }
    #[inline(always)]
    fn load32(self, w: &[u32; 8]) -> H {
        // SAFETY: NEON is present; `w` holds 8 u32.
        let x = unsafe { vld1q_u32_x2(w.as_ptr()) };
        [x.0, x.1]
    }
    #[inline(always)]
    fn store32(self, w: &mut [u32; 8], v: H) {
        // SAFETY: NEON is present; `w` holds 8 u32.
        unsafe { vst1q_u32_x2(w.as_mut_ptr(), uint32x4x2_t(v[0], v[1])) }
    }
    #[inline(always)]
    unsafe fn store_shared(self, words: &[AtomicU64; 8], v: V) {
        let [a, b] = super::shared_halves(words);
        // SAFETY: NEON is present (token); the halves of an aligned block, under the
        // caller's lock (the caller). The reinterpretations keep the bytes.
        unsafe {
            self.store32_shared(
                a,
                [vreinterpretq_u32_u64(v[0]), vreinterpretq_u32_u64(v[1])],
            );
            self.store32_shared(
                b,
                [vreinterpretq_u32_u64(v[2]), vreinterpretq_u32_u64(v[3])],
            );
        }
    }
    /// One `STP` of the two registers. Assembly, not `vst1q`: to Rust that would be a plain
    /// store racing with readers' atomic loads; `asm!` is an opaque access the compiler
    /// neither splits nor moves past the stripe lock's release (`STLR`), and each aligned
    /// 8-byte part of an `STP` of Q registers is written whole.
    #[inline(always)]
    unsafe fn store32_shared(self, words: &[AtomicU64; 4], v: H) {
        // SAFETY: NEON is present (token); `words` is 32 bytes of atomics (`UnsafeCell`s,
        // writable through a shared reference), aligned, written only under the caller's
        // stripe lock (the caller's guarantees).
        unsafe {
            core::arch::asm!(
                "stp {a:q}, {b:q}, [{p}]",
                p = in(reg) words.as_ptr(),
                a = in(vreg) v[0],
                b = in(vreg) v[1],
                options(nostack, preserves_flags),
            )
        }
    }
    #[inline(always)]
    fn or32(self, a: H, b: H) -> H {
        // SAFETY: NEON is present (token).
        unsafe { [vorrq_u32(a[0], b[0]), vorrq_u32(a[1], b[1])] }
    }
    #[inline(always)]
    fn mul32x32(self, a: H, b: H) -> H {
        // SAFETY: NEON is present (token).
        unsafe { [vmulq_u32(a[0], b[0]), vmulq_u32(a[1], b[1])] }
    }
    #[inline(always)]
    fn shr32<const N: i32>(self, a: H) -> H {
        // SAFETY: NEON is present (token).
        unsafe { [vshrq_n_u32::<N>(a[0]), vshrq_n_u32::<N>(a[1])] }
    }
    #[inline(always)]
    fn shl32_var(self, a: H, count: H) -> H {
        // SAFETY: NEON is present (token).
        unsafe {
            [
                vshlq_u32(a[0], vreinterpretq_s32_u32(count[0])),
                vshlq_u32(a[1], vreinterpretq_s32_u32(count[1])),
            ]
        }
    }
    #[inline(always)]
    fn covers32(self, b: H, p: H) -> bool {
        // SAFETY: NEON is present (token).
        unsafe {
            let any = vorrq_u32(vbicq_u32(p[0], b[0]), vbicq_u32(p[1], b[1]));
            vmaxvq_u32(any) == 0
        }
    }
}
