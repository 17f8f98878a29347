//! The primitives a SIMD tier provides ([`Lanes`]): loads, stores, lane arithmetic, shifts,
//! gathers and compares on eight 64-bit lanes (a block, or eight keys' hashes) and eight
//! 32-bit lanes (a split block), and the few facts about the tier that the algorithms above
//! choose by (which of its hashes run in lanes, and in which function they are compiled).
//! Each tier file implements the trait and nothing else; the algorithms (the batch hashes in
//! `kernel::hash`, the probe in `kernel::probe`) are written once over it, `#[inline(always)]`,
//! so they compile inside the tier's `#[target_feature]` entry point with its instructions.
//!
//! Like hashbrown's `Group`, the trait hides the register width: [`Lanes::V`] is always eight
//! 64-bit lanes (a 512-bit block), held in one AVX-512 register, two AVX2 registers, or four
//! NEON registers; [`Lanes::H`] is eight 32-bit lanes (a 256-bit split block).

use crate::layout::Block;
use core::sync::atomic::{AtomicU64, Ordering::Relaxed};

#[cfg(target_arch = "x86_64")]
pub(crate) mod avx2;
#[cfg(target_arch = "x86_64")]
pub(crate) mod avx512;
#[cfg(target_arch = "aarch64")]
pub(crate) mod neon;
pub(crate) mod portable;

/// One SIMD tier's primitives. Implementors are zero-sized tokens that exist only once the
/// CPU is known to support the tier, so their safe methods may use the tier's intrinsics.
///
/// Shift counts are const generics (`i32`, as the intrinsics take them); `rotl` takes both
/// the left and the right count (`R = 64 - L`) because stable Rust cannot compute one from
/// the other in a const generic.
pub(crate) trait Lanes: Copy {
    /// Eight 64-bit lanes.
    type V: Copy;
    /// Eight 32-bit lanes.
    type H: Copy;
    /// The tier these lanes are.
    const ISA: crate::isa::Isa;
    /// Whether batches on this tier get a copy of the pipeline per probe-round count, so that
    /// the round loop unrolls (`BlockOp::UNROLL`). True where
    /// the tier is what the target's CPUs run; a fallback that only CPUs without the target's
    /// usual tier reach counts its rounds at run time, for a fraction of the compile time.
    const UNROLL_BATCHES: bool = true;

    fn splat(self, x: u64) -> Self::V;
    /// A key's low hash half `lo` in every lane's low 32 bits, for products with the probe
    /// salts (whose upper halves are zero): the upper halves hold `lo` or zero, whichever the
    /// tier broadcasts in fewer instructions (AVX2 and AVX-512: `lo` straight from memory into
    /// every 32-bit element, one load; `mul32` and `mul_lo32` read nothing else of it there).
    #[inline(always)]
    fn splat_lo(self, lo: u32) -> Self::V {
        self.splat(lo as u64)
    }
    /// The upper 32-bit halves of `hi` with the lower halves of `lo`, per lane.
    #[inline(always)]
    fn blend_halves(self, hi: Self::V, lo: Self::V) -> Self::V {
        let low = self.splat(u32::MAX as u64);
        self.or(self.and(lo, low), self.xor(self.or(hi, low), low))
    }
    /// Eight words from 64-byte-aligned memory (a block or a row of the round table).
    fn load(self, words: &[u64; 8]) -> Self::V;
    /// Stores eight words to 64-byte-aligned memory.
    fn store(self, words: &mut [u64; 8], v: Self::V);
    /// The first eight words of `words` (any alignment; `words.len() >= 8`).
    fn loadu(self, words: &[u64]) -> Self::V;
    /// Stores into the first eight words of `out` (any alignment; `out.len() >= 8`).
    fn storeu(self, out: &mut [u64], v: Self::V);
    /// The first eight `u32` of `keys`, zero-extended to 64-bit lanes (`keys.len() >= 8`).
    fn widen_u32(self, keys: &[u32]) -> Self::V;
    /// The first eight `i32` of `keys`, sign-extended to 64-bit lanes (`keys.len() >= 8`).
    /// The narrower widths below, the same way: a tier overrides them where one instruction
    /// widens (x86-64's `vpmovsx`/`vpmovzx`); the default goes through a stack array, which
    /// is the key chunk read once either way.
    #[inline(always)]
    fn widen_i32(self, keys: &[i32]) -> Self::V {
        self.loadu(&widened(keys, |x| x as i64 as u64))
    }
    #[inline(always)]
    fn widen_u16(self, keys: &[u16]) -> Self::V {
        self.loadu(&widened(keys, |x| x as u64))
    }
    #[inline(always)]
    fn widen_i16(self, keys: &[i16]) -> Self::V {
        self.loadu(&widened(keys, |x| x as i64 as u64))
    }
    #[inline(always)]
    fn widen_u8(self, keys: &[u8]) -> Self::V {
        self.loadu(&widened(keys, |x| x as u64))
    }
    #[inline(always)]
    fn widen_i8(self, keys: &[i8]) -> Self::V {
        self.loadu(&widened(keys, |x| x as i64 as u64))
    }

    fn or(self, a: Self::V, b: Self::V) -> Self::V;
    fn and(self, a: Self::V, b: Self::V) -> Self::V;
    fn xor(self, a: Self::V, b: Self::V) -> Self::V;
    fn add(self, a: Self::V, b: Self::V) -> Self::V;
    /// Product of lanes whose values are below 2^32 (the upper halves are ignored or zero).
    fn mul32(self, a: Self::V, b: Self::V) -> Self::V;
    /// Whether [`mul_lo32`](Self::mul_lo32) is one instruction, so that the probe pattern
    /// takes its index bits from it (see `Row`) instead of from [`mul32`](Self::mul32) and a
    /// mask.
    const MUL_LO32: bool = false;
    /// The product modulo 2^32 of lanes whose values are below 2^32.
    #[inline(always)]
    fn mul_lo32(self, a: Self::V, b: Self::V) -> Self::V {
        self.and(self.mul32(a, b), self.splat(u32::MAX as u64))
    }
    /// The 64-bit product of the low 32-bit half of each lane of `a` and the lane of `b`
    /// (below 2^32): `a`'s upper halves are ignored. MX32-64's multiply; one instruction
    /// (`vpmuludq`, `umull`) where the tier's `mul32` ignores them already.
    #[inline(always)]
    fn mul_halves(self, a: Self::V, b: Self::V) -> Self::V {
        self.mul32(self.and(a, self.splat(u32::MAX as u64)), b)
    }
    /// Wrapping 64-bit product per lane.
    fn mul64(self, a: Self::V, b: Self::V) -> Self::V;
    fn shr<const N: i32>(self, a: Self::V) -> Self::V;
    fn shl<const N: i32>(self, a: Self::V) -> Self::V;
    /// Rotate left by `L` (`R = 64 - L`).
    fn rotl<const L: i32, const R: i32>(self, a: Self::V) -> Self::V {
        self.or(self.shl::<L>(a), self.shr::<R>(a))
    }
    /// `a << count` per lane, zero where `count >= 64`.
    fn shl_var(self, a: Self::V, count: Self::V) -> Self::V;
    /// `1 << (idx & 63)` per lane.
    fn bit_mod64(self, idx: Self::V) -> Self::V {
        self.shl_var(self.splat(1), self.and(idx, self.splat(63)))
    }
    /// Whether every bit of `p` is set in `b`.
    fn covers(self, b: Self::V, p: Self::V) -> bool;
    /// `x - m` where `x >= m`, else `x`, per lane, given `neg_m = 2^64 - m` (splat), for
    /// `x < 2m <= 2^63`: then `x - m` wraps to a value with its top bit set exactly when
    /// `x < m`.
    #[inline(always)]
    fn sub_if_ge(self, x: Self::V, m: Self::V, neg_m: Self::V) -> Self::V {
        let t = self.add(x, neg_m);
        let borrow = self.shr::<63>(t);
        // All ones where `x < m`: the borrow's two's-complement negation.
        let undo = self.add(self.xor(borrow, self.splat(u64::MAX)), self.splat(1));
        self.add(t, self.and(m, undo))
    }

    /// Writes `v` over `words`, a block of a shared filter (as
    /// [`store32_shared`](Self::store32_shared), for the whole block). The default is eight
    /// relaxed stores; tiers override it with their 256-bit or 512-bit stores.
    ///
    /// # Safety
    /// As [`store32_shared`](Self::store32_shared): `words` is a 64-byte aligned block whose
    /// writers all hold the stripe lock the caller holds.
    #[inline(always)]
    unsafe fn store_shared(self, words: &[AtomicU64; 8], v: Self::V) {
        let mut b = Block::ZERO;
        self.store(&mut b.0, v);
        for (word, &w) in words.iter().zip(&b.0) {
            word.store(w, Relaxed);
        }
    }

    fn splat32(self, x: u32) -> Self::H;
    /// Eight 32-bit words from 32-byte-aligned memory.
    fn load32(self, words: &[u32; 8]) -> Self::H;
    fn store32(self, words: &mut [u32; 8], v: Self::H);
    /// Writes `v` over `words`, 32 bytes of a shared filter that readers load word by word
    /// with relaxed atomic loads while it is written. The default is four relaxed stores; a
    /// tier with a 256-bit store overrides it with one, in inline assembly (opaque to Rust's
    /// memory model, which has no atomic vector store). Each 8-byte word is written whole;
    /// even a torn word would read as old bits or new ones, never anything else, as writers
    /// only add bits.
    ///
    /// # Safety
    /// `words` is 32-byte aligned, and no other thread writes it during the call (its writers
    /// hold the stripe lock the caller holds).
    #[inline(always)]
    unsafe fn store32_shared(self, words: &[AtomicU64; 4], v: Self::H) {
        let mut b = Block::ZERO;
        // SAFETY: a block is 64 bytes, 64-byte aligned: its first 32 bytes are eight aligned
        // `u32`, borrowed uniquely through `b` for as long.
        let first_half = unsafe { &mut *(&mut b as *mut Block).cast::<[u32; 8]>() };
        self.store32(first_half, v);
        for (word, &w) in words.iter().zip(&b.0) {
            word.store(w, Relaxed);
        }
    }
    fn or32(self, a: Self::H, b: Self::H) -> Self::H;
    /// Wrapping 32-bit product per lane.
    fn mul32x32(self, a: Self::H, b: Self::H) -> Self::H;
    fn shr32<const N: i32>(self, a: Self::H) -> Self::H;
    /// `a << count` per lane (`count < 32`).
    fn shl32_var(self, a: Self::H, count: Self::H) -> Self::H;
    fn covers32(self, b: Self::H, p: Self::H) -> bool;

    /// Whether [`shl_var`](Self::shl_var) is one instruction per register on this tier (not
    /// a shift per lane, as `wide` does it on SSE2).
    const VARIABLE_SHIFT: bool = true;

    /// Whether [`gather`](Self::gather) is one instruction on this tier (not eight loads);
    /// algorithms that can probe either way use it to choose.
    const GATHERS: bool = false;

    /// `words[idx[j]]` in lane `j`: eight loads, one gather instruction where the tier has
    /// it.
    ///
    /// # Safety
    /// Every lane of `idx` must be below the length of the slice `words` points into.
    #[inline(always)]
    unsafe fn gather(self, words: *const u64, idx: Self::V) -> Self::V {
        let mut i = [0u64; 8];
        self.storeu(&mut i, idx);
        // SAFETY: the caller guarantees every index is in bounds of the slice at `words`.
        let w = i.map(|j| unsafe { *words.add(j as usize) });
        self.loadu(&w)
    }

    /// The bytes of each lane in reverse order (for the x86-64 tiers' 16-byte keys).
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn bswap64(self, a: Self::V) -> Self::V {
        let a = self.rotl::<32, 32>(a);
        let m16 = self.splat(0x0000_ffff_0000_ffff);
        let a = self.or(
            self.shl::<16>(self.and(a, m16)),
            self.and(self.shr::<16>(a), m16),
        );
        let m8 = self.splat(0x00ff_00ff_00ff_00ff);
        self.or(
            self.shl::<8>(self.and(a, m8)),
            self.and(self.shr::<8>(a), m8),
        )
    }

    /// The low and the high 64-bit halves of the first eight `u128` (`keys.len() >= 8`). The
    /// default goes through two stack arrays; the x86-64 tiers split them in registers, as a
    /// wide load of eight narrower stores still in flight would wait for them to retire.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn split_u128(self, keys: &[u128]) -> (Self::V, Self::V) {
        split_by_arrays(self, &keys[..8], |&x| x)
    }
    /// [`split_u128`](Self::split_u128) of the first eight 16-byte keys, each read as a
    /// little-endian `u128`.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn split_fixed16(self, keys: &[[u8; 16]]) -> (Self::V, Self::V) {
        split_by_arrays(self, &keys[..8], |&x| u128::from_le_bytes(x))
    }

    /// The full 128-bit product of each pair of lanes, its two halves xored (XXH3's
    /// `mul128_fold64`): four 32-bit products, as no tier multiplies 64 by 64 bits into 128.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn mul_fold64(self, a: Self::V, b: Self::V) -> Self::V {
        let low = self.splat(0xffff_ffff);
        let (a_lo, a_hi) = (self.and(a, low), self.shr::<32>(a));
        let (b_lo, b_hi) = (self.and(b, low), self.shr::<32>(b));
        let ll = self.mul32(a_lo, b_lo);
        let lh = self.mul32(a_lo, b_hi);
        let hl = self.mul32(a_hi, b_lo);
        let hh = self.mul32(a_hi, b_hi);
        // The middle column: at most three 32-bit values, no overflow.
        let mid = self.add(
            self.add(self.shr::<32>(ll), self.and(lh, low)),
            self.and(hl, low),
        );
        let lo = self.or(self.and(ll, low), self.shl::<32>(mid));
        let hi = self.add(
            self.add(hh, self.shr::<32>(lh)),
            self.add(self.shr::<32>(hl), self.shr::<32>(mid)),
        );
        self.xor(lo, hi)
    }

    /// Whether the CPU's AES round instructions are used for AESH-64 on this tier (VAES or
    /// AES-NI on the x86-64 tiers, AESE on NEON); without them the software round gives the
    /// same bits.
    const AES_ROUNDS: bool = false;

    /// Whether 16-byte keys (and MX32-64's 16-byte strings) are hashed eight at a time in
    /// lanes on this tier rather than one at a time: where that measured faster (the x86-64
    /// tiers, whose [`split_u128`](Self::split_u128) splits them in registers).
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    const KEYS16_IN_LANES: bool = false;

    /// Whether byte strings of 4 to 16 bytes are hashed eight at a time in lanes on this tier
    /// rather than one at a time: where that measured faster (AVX-512, whose 64-bit multiply
    /// is one instruction).
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    const BYTES_IN_LANES: bool = false;

    /// Whether [`mul64`](Self::mul64) is one instruction (AVX-512DQ's `vpmullq`): a hash made
    /// of many 64-bit multiplies (XXH64) gains from lanes only then.
    const MUL64_NATIVE: bool = false;

    /// Runs `r` in a function of its own, compiled with the tier's features: one copy per
    /// tier of a routine that every operation, layout and sink of a batch calls once per chunk
    /// (inlined into each, it multiplied the crate's build). The default is a plain
    /// out-of-line call (tiers whose instructions need no feature beyond the build's).
    #[inline(always)]
    fn outlined<R: Routine>(self, r: R) -> R::Output {
        outlined_plain(self, r)
    }

    /// [`outlined`](Self::outlined), with the features that make [`mul64`](Self::mul64)
    /// native where a tier keeps them out of its probe loops (AVX-512DQ: see the tier).
    #[inline(always)]
    fn outlined_mul64<R: Routine>(self, r: R) -> R::Output {
        self.outlined(r)
    }

    /// Runs `r` where [`mul64`](Self::mul64) is the tier's best: here, inline, unless the tier
    /// enables its 64-bit multiply only in functions of their own (AVX-512DQ), which run `r`
    /// through [`outlined_mul64`](Self::outlined_mul64).
    #[inline(always)]
    fn with_mul64<R: Routine>(self, r: R) -> R::Output {
        r.run(self)
    }
}

/// Work that runs on one tier: the scalar reference, or a SIMD tier's lanes. Implemented by
/// the batch kinds (a block batch, a split-block batch, a hash batch); `Kernel::run` picks the
/// tier.
pub(crate) trait Batch {
    /// Runs on the scalar reference.
    fn scalar(self);
    /// Runs on a SIMD tier. Called inside the tier's `#[target_feature]` entry point, so
    /// everything it inlines compiles with the tier's instructions.
    fn lanes<L: Lanes>(self, l: L);
}

/// Work written once over [`Lanes`] that a tier may compile in a function of its own, with
/// its features ([`Lanes::outlined`]).
pub(crate) trait Routine {
    type Output;
    fn run<L: Lanes>(self, l: L) -> Self::Output;
}

/// [`Lanes::outlined`]'s default: `r` in a function of its own.
#[inline(never)]
fn outlined_plain<L: Lanes, R: Routine>(l: L, r: R) -> R::Output {
    r.run(l)
}

/// The two halves of a shared block, for tiers that store it as two 256-bit halves.
#[inline(always)]
pub(crate) fn shared_halves(words: &[AtomicU64; 8]) -> [&[AtomicU64; 4]; 2] {
    let (a, b) = words.split_at(4);
    [
        a.try_into().expect("4 words"),
        b.try_into().expect("4 words"),
    ]
}

/// The first eight keys' 64-bit values, in a stack array: [`Lanes`]' default widening.
#[inline(always)]
fn widened<T: Copy>(keys: &[T], value: impl Fn(T) -> u64) -> [u64; 8] {
    let keys = &keys[..8];
    core::array::from_fn(|i| value(keys[i]))
}

/// The low and the high halves of eight keys read as `u128` by `value`, through stack arrays.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn split_by_arrays<L: Lanes, T>(l: L, keys: &[T], value: impl Fn(&T) -> u128) -> (L::V, L::V) {
    let (mut lo, mut hi) = ([0u64; 8], [0u64; 8]);
    for ((lo, hi), x) in lo.iter_mut().zip(&mut hi).zip(keys) {
        let x = value(x);
        (*lo, *hi) = (x as u64, (x >> 64) as u64);
    }
    (l.loadu(&lo), l.loadu(&hi))
}

/// An integer key type of up to 64 bits: the key is its 64-bit value (sign-extended if the
/// type is signed, zero-extended if not), on every path and under every hash.
pub(crate) trait Word: Copy {
    /// The key's 64-bit value.
    fn value(self) -> u64;
    /// The values of the first eight keys of `keys` in eight 64-bit lanes (`keys.len() >= 8`).
    fn lanes<L: Lanes>(l: L, keys: &[Self]) -> L::V;
}

macro_rules! words {
    ($($t:ty => $widen:ident as $via:ty),* $(,)?) => {$(
        impl Word for $t {
            #[inline(always)]
            fn value(self) -> u64 {
                self as $via as u64
            }
            #[inline(always)]
            fn lanes<L: Lanes>(l: L, keys: &[$t]) -> L::V {
                l.$widen(keys)
            }
        }
    )*};
}

words! {
    u64 => loadu as u64,
    u32 => widen_u32 as u32, i32 => widen_i32 as i64,
    u16 => widen_u16 as u16, i16 => widen_i16 as i64,
    u8 => widen_u8 as u8, i8 => widen_i8 as i64,
}

/// A 16-byte key form that the integer hashes' 16-byte lanes read: its value, and eight of
/// them split into their low and high halves by the tier.
#[cfg(target_arch = "x86_64")]
pub(crate) trait Key16: Copy {
    fn value(&self) -> u128;
    fn split<L: Lanes>(l: L, keys: &[Self]) -> (L::V, L::V);
}

#[cfg(target_arch = "x86_64")]
impl Key16 for u128 {
    #[inline(always)]
    fn value(&self) -> u128 {
        *self
    }
    #[inline(always)]
    fn split<L: Lanes>(l: L, keys: &[u128]) -> (L::V, L::V) {
        l.split_u128(keys)
    }
}

#[cfg(target_arch = "x86_64")]
impl Key16 for [u8; 16] {
    #[inline(always)]
    fn value(&self) -> u128 {
        u128::from_le_bytes(*self)
    }
    #[inline(always)]
    fn split<L: Lanes>(l: L, keys: &[[u8; 16]]) -> (L::V, L::V) {
        l.split_fixed16(keys)
    }
}
