//! The primitives a SIMD tier provides ([`Lanes`]) and the algorithms written once over them:
//! XXH3's short-input hash of eight keys, a key's probe pattern, and the block insert and
//! test. A tier file implements the trait and nothing else; the algorithms here are
//! `#[inline(always)]`, so they compile inside the tier's `#[target_feature]` entry point
//! with its instructions.
//!
//! Like hashbrown's `Group`, the trait hides the register width: [`Lanes::V`] is always eight
//! 64-bit lanes (a 512-bit block), held in one AVX-512 register, two AVX2 registers, or four
//! NEON registers; [`Lanes::H`] is eight 32-bit lanes (a 256-bit split block).

use super::Keys;
use super::keys::Word;
use crate::hashing::{PRIME_MX2, mx32, seed_from_flip, u64_with_flip};
use crate::layout::{Block, Layout, Row, Row32, contains_scalar, insert_scalar};
use core::sync::atomic::{AtomicU64, Ordering::Relaxed};

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
    /// the round loop unrolls ([`BlockOp::UNROLL`](super::ops::BlockOp::UNROLL)). True where
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
        self.store32(half_of_mut(&mut b, 0), v);
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

    /// XXH3 of 16-byte keys (`Keys::U128`, `Keys::Fixed16`), `out.len() == keys.len()`: one
    /// key at a time, out of line, unless a tier overrides it with
    /// [`hash_keys`](super::key16::hash_keys) in lanes (AVX2 and AVX-512, where that measured
    /// faster).
    #[inline(always)]
    fn hash_keys16(self, flip: u64, keys: Keys<'_>, out: &mut [u64]) {
        hash_one_by_one(flip, keys, out)
    }

    /// XXH3 of byte-string keys (`Keys::Bytes`), `out.len() == keys.len()`: one key at a
    /// time, out of line, unless a tier overrides it with `bytes::hash_keys` in lanes
    /// (AVX-512, where that measured faster).
    #[inline(always)]
    fn hash_bytes(self, flip: u64, keys: Keys<'_>, out: &mut [u64]) {
        hash_one_by_one(flip, keys, out)
    }

    /// Hash id 2's hash of [`Keys::Aesh`] keys ([`Aesh::hash`](super::keys::Aesh::hash)),
    /// `out.len() == keys.len()`: AESH-64 with the software round, unless a tier overrides it
    /// with [`hash_aesh`] on the CPU's AES instructions (AVX2 and AVX-512: VAES or AES-NI;
    /// NEON: AESE). The same bits either way.
    #[inline(always)]
    fn hash_aesh(self, flip: u64, keys: Keys<'_>, out: &mut [u64]) {
        hash_aesh(self, flip, keys, false, out)
    }

    /// XXH3 of each integer key's 64-bit value (given the seed's flip constant).
    /// `keys.len() == out.len()`. A tier may override it (AVX-512 hashes with instructions
    /// its probe loops avoid).
    #[inline(always)]
    fn hash_words<W: Word>(self, flip: u64, keys: &[W], out: &mut [u64]) {
        hash_words(self, flip, keys, out)
    }

    /// MX32-64 (hash id 3) of each integer key's 64-bit value, given the seed's XXH3 flip.
    /// `keys.len() == out.len()`.
    #[inline(always)]
    fn hash_words_mx32<W: Word>(self, flip: u64, keys: &[W], out: &mut [u64]) {
        hash_words_mx32(self, flip, keys, out)
    }

    /// MX32-64 of fixed-width keys (`Keys::Mx32` of `u64`, `u128` or `[u8; 16]`),
    /// `out.len() == keys.len()`: 8-byte keys in lanes, 16-byte ones one at a time, out of
    /// line, unless a tier overrides it with [`hash_fixed_mx32`] (AVX2 and AVX-512).
    #[inline(always)]
    fn hash_fixed_mx32(self, flip: u64, keys: Keys<'_>, out: &mut [u64]) {
        match keys {
            Keys::Mx32(super::keys::Mx32::U64(w)) => self.hash_words_mx32(flip, w, out),
            other => hash_one_by_one(flip, other, out),
        }
    }

    /// A batch's per-chunk step: hashes keys `start..start + out.len()` into `out` and makes
    /// them entries ([`entries`]). Out of line, one copy per tier rather than one per
    /// operation, layout and sink that a pipeline is compiled for (inlined, the hashes of every
    /// key source were most of the crate's unoptimised build); a call per chunk of keys costs
    /// next to nothing. The tiers that need target features enabled (AVX2, AVX-512) override
    /// it with a function that enables them. `halves`: the entries index `Sectors8x32`
    /// halves ([`entries_halves`]).
    #[inline(always)]
    fn stage(self, keys: Keys<'_>, flip: u64, start: usize, out: &mut [u64], place: Place) {
        stage_out_of_line(self, keys, flip, start, out, place)
    }

    /// XXH64 (seed 0) of each `u64` value, the split block filter's hash. The scalar code
    /// unless a tier has a faster one.
    #[inline(always)]
    fn xxh64_u64(self, values: &[u64], out: &mut [u64]) {
        for (o, &v) in out.iter_mut().zip(values) {
            *o = crate::hashing::xxh64_u64(v);
        }
    }
}

/// How a chunk's hashes become entries: the filter's block count, and whether the entries
/// index the halves of `Sectors8x32` blocks ([`entries_halves`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Place {
    pub num_blocks: u64,
    pub halves: bool,
}

/// [`Lanes::stage`]'s work: hash a chunk, then make its entries.
#[inline(always)]
pub(crate) fn stage<L: Lanes>(
    l: L,
    keys: Keys<'_>,
    flip: u64,
    start: usize,
    out: &mut [u64],
    place: Place,
) {
    keys.hash_lanes_at(l, flip, start, out);
    if place.halves {
        entries_halves(l, out, place.num_blocks);
    } else {
        entries(l, out, place.num_blocks);
    }
}

/// [`Lanes::stage`] out of line, for the tiers whose instructions need no target feature
/// beyond the build's (portable; NEON on aarch64).
#[inline(never)]
pub(crate) fn stage_out_of_line<L: Lanes>(
    l: L,
    keys: Keys<'_>,
    flip: u64,
    start: usize,
    out: &mut [u64],
    place: Place,
) {
    stage(l, keys, flip, start, out, place)
}

/// [`Keys::hash_scalar`], out of line: byte strings, and the tiers' default for 16-byte keys.
#[inline(never)]
pub(crate) fn hash_one_by_one(flip: u64, keys: Keys<'_>, out: &mut [u64]) {
    keys.hash_scalar(flip, out)
}

/// [`Lanes::hash_aesh`], out of line: on the CPU's AES instructions if `machine`, in software
/// otherwise; a chunk of 4- and 8-byte strings alone by the tier's XXH3.
#[inline(never)]
pub(crate) fn hash_aesh<L: Lanes>(l: L, flip: u64, keys: Keys<'_>, machine: bool, out: &mut [u64]) {
    match keys {
        // Both closures call out-of-line functions of the tier (no intrinsic in a closure).
        Keys::Aesh(a) => a.hash(
            flip,
            machine,
            out,
            |k, o| l.hash_bytes(flip, k, o),
            &mut |k, o| l.hash_fixed_mx32(flip, k, o),
        ),
        other => other.hash_scalar(flip, out),
    }
}

/// XXH3's `rrmxmx` finaliser on eight lanes of inputs of `len` bytes.
#[inline(always)]
pub(crate) fn rrmxmx<L: Lanes>(l: L, h: L::V, len: u64) -> L::V {
    rrmxmx_var(l, h, l.splat(len))
}

/// [`rrmxmx`] with each lane's own input length.
#[inline(always)]
pub(crate) fn rrmxmx_var<L: Lanes>(l: L, h: L::V, len: L::V) -> L::V {
    let mx2 = l.splat(PRIME_MX2);
    let h = l.xor(h, l.xor(l.rotl::<49, 15>(h), l.rotl::<24, 40>(h)));
    let h = l.mul64(h, mx2);
    let h = l.xor(h, l.add(l.shr::<35>(h), len));
    let h = l.mul64(h, mx2);
    l.xor(h, l.shr::<28>(h))
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

/// XXH3-64 of each integer key's 64-bit value, eight lanes at a time (the rest one at a time).
#[inline(always)]
pub(crate) fn hash_words<L: Lanes, W: Word>(l: L, flip: u64, keys: &[W], out: &mut [u64]) {
    let f = l.splat(flip);
    let mut kc = keys.chunks_exact(8);
    let mut oc = out.chunks_exact_mut(8);
    for (k, o) in (&mut kc).zip(&mut oc) {
        // XXH3 reads the key as two LE32 halves and rotates by 32: swap the halves.
        let x = l.xor(l.rotl::<32, 32>(W::lanes(l, k)), f);
        l.storeu(o, rrmxmx(l, x, 8));
    }
    for (o, &k) in oc.into_remainder().iter_mut().zip(kc.remainder()) {
        *o = u64_with_flip(k.value(), flip);
    }
}

/// One MX32-64 round (`hashing::mx32`) on eight lanes: two 32x32->64-bit products, a shift,
/// a swap of halves and an xor.
#[inline(always)]
fn mx32_round<L: Lanes>(l: L, x: L::V, r: usize) -> L::V {
    let p = l.mul_halves(x, l.splat(mx32::A[r]));
    let q = l.mul_halves(l.shr::<32>(x), l.splat(mx32::B[r]));
    l.xor(p, l.rotl::<32, 32>(q))
}

/// MX32-64's rounds 1 to 3 with the width's tweak, on eight lanes.
#[inline(always)]
fn mx32_finish<L: Lanes>(l: L, x: L::V, tweak: u64) -> L::V {
    let x = l.xor(mx32_round(l, x, 1), l.splat(tweak));
    mx32_round(l, mx32_round(l, x, 2), 3)
}

/// MX32-64 of each integer key's 64-bit value, eight lanes at a time (the rest one at a time).
#[inline(always)]
pub(crate) fn hash_words_mx32<L: Lanes, W: Word>(l: L, flip: u64, keys: &[W], out: &mut [u64]) {
    let k = mx32::key(seed_from_flip(flip));
    let kv = l.splat(k);
    let mut kc = keys.chunks_exact(8);
    let mut oc = out.chunks_exact_mut(8);
    for (x, o) in (&mut kc).zip(&mut oc) {
        let x = l.xor(W::lanes(l, x), kv);
        l.storeu(o, mx32_finish(l, x, mx32::T8));
    }
    for (o, &x) in oc.into_remainder().iter_mut().zip(kc.remainder()) {
        *o = mx32::u64_with_key(x.value(), k);
    }
}

/// MX32-64 of fixed-width keys (`Keys::Mx32` of `u64`, `u128` or `[u8; 16]`), eight lanes at
/// a time (the rest one at a time); other keys the reference way. A tier calls it from a
/// function with its target features enabled (the x86-64 tiers; NEON's 16-byte keys take the
/// default).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn hash_fixed_mx32<L: Lanes>(l: L, flip: u64, keys: Keys<'_>, out: &mut [u64]) {
    match keys {
        Keys::Mx32(super::keys::Mx32::U64(keys)) => l.hash_words_mx32(flip, keys, out),
        Keys::Mx32(super::keys::Mx32::U128(keys)) => keys16_mx32(l, flip, keys, out),
        Keys::Mx32(super::keys::Mx32::Fixed16(keys)) => keys16_mx32(l, flip, keys, out),
        other => other.hash_scalar(flip, out),
    }
}

/// A 16-byte key form that [`keys16_mx32`] reads: its value, and eight of them split into
/// their low and high halves by the tier.
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

/// [`hash_fixed_mx32`] of one 16-byte key form.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn keys16_mx32<L: Lanes, T: Key16>(l: L, flip: u64, keys: &[T], out: &mut [u64]) {
    let k = mx32::key(seed_from_flip(flip));
    let mut kc = keys.chunks_exact(8);
    let mut oc = out.chunks_exact_mut(8);
    for (x, o) in (&mut kc).zip(&mut oc) {
        let (lo, hi) = T::split(l, x);
        let x = l.xor(lo, l.splat(k));
        let x = l.xor(mx32_round(l, x, 0), hi);
        l.storeu(o, mx32_finish(l, x, mx32::T16));
    }
    for (o, x) in oc.into_remainder().iter_mut().zip(kc.remainder()) {
        *o = mx32::u128_with_key(x.value(), k);
    }
}

/// Turns a chunk's hashes into its entries, in place: each hash's block index over
/// `num_blocks` in the upper half (`layout::block_index`, below 2^32) and its low half kept,
/// so that the probe loop reads both from memory and computes neither. Eight lanes at a time
/// (a shift, a 32x32->64-bit product whose upper half is the index, a blend), the rest one at
/// a time; a filter of 2^32 blocks indexes by the upper half itself, so its entries are its
/// hashes.
#[inline(always)]
pub(crate) fn entries<L: Lanes>(l: L, hashes: &mut [u64], num_blocks: u64) {
    if num_blocks > u32::MAX as u64 {
        return;
    }
    let n = l.splat(num_blocks);
    let mut chunks = hashes.chunks_exact_mut(8);
    for h in &mut chunks {
        let x = l.loadu(h);
        let product = l.mul_halves(l.shr::<32>(x), n);
        l.storeu(h, l.blend_halves(product, x));
    }
    for h in chunks.into_remainder() {
        *h = entry(*h, num_blocks);
    }
}

/// [`entries`] for a `Sectors8x32` filter of at most 2^31 blocks, whose entries index its
/// halves: the upper half `2 * block + (lo >> 31)`, the half the key's probes lie in (its bit
/// 31 moved up into the index), so the probe addresses the half by one load of it. After the
/// index step, `e + (e & HI) + ((e & 2^31) << 1)`: four lane operations more for eight keys,
/// in the same pass over the chunk.
#[inline(always)]
pub(crate) fn entries_halves<L: Lanes>(l: L, hashes: &mut [u64], num_blocks: u64) {
    let n = l.splat(num_blocks);
    let (upper, bit31) = (l.splat(!(u32::MAX as u64)), l.splat(1 << 31));
    let mut chunks = hashes.chunks_exact_mut(8);
    for h in &mut chunks {
        let x = l.loadu(h);
        let e = l.blend_halves(l.mul_halves(l.shr::<32>(x), n), x);
        let moved = l.shl::<1>(l.and(e, bit31));
        l.storeu(h, l.add(l.add(e, l.and(e, upper)), moved));
    }
    for h in chunks.into_remainder() {
        *h = half_entry(entry(*h, num_blocks));
    }
}

/// The half entry of entry `e` (see [`entries_halves`]).
#[inline(always)]
pub(crate) const fn half_entry(e: u64) -> u64 {
    e.wrapping_add(e & !(u32::MAX as u64))
        .wrapping_add((e & (1 << 31)) << 1)
}

/// [`entries`] of one hash.
#[inline(always)]
pub(crate) const fn entry(h: u64, num_blocks: u64) -> u64 {
    if num_blocks > u32::MAX as u64 {
        h
    } else {
        ((h >> 32) * num_blocks) & !(u32::MAX as u64) | h & u32::MAX as u64
    }
}

/// The probe pattern of `lo` over `rows` (see [`Row`]). `WORDS` says the rows are
/// `Sectors8x64` rows (mask 63, no xor), which a tier may exploit.
#[inline(always)]
pub(crate) fn pattern<L: Lanes, const WORDS: bool>(l: L, lo: u32, rows: &[Row]) -> L::V {
    let lo = l.splat_lo(lo);
    let mut p = l.splat(0);
    for row in rows {
        // Taken modulo 2^32, the product's index bits need no mask (see `Row`); a tier
        // without a one-instruction low multiply masks the full product instead.
        let bit = match (WORDS, L::MUL_LO32) {
            (true, true) => {
                let idx = l.shr::<26>(l.mul_lo32(lo, l.load(&row.salt2)));
                l.shl_var(l.splat(1), idx)
            }
            (true, false) => l.bit_mod64(l.shr::<25>(l.mul32(lo, l.load(&row.salt)))),
            (false, lo32) => {
                let idx = if lo32 {
                    l.shr::<25>(l.mul_lo32(lo, l.load(&row.salt)))
                } else {
                    l.and(l.shr::<25>(l.mul32(lo, l.load(&row.salt))), l.splat(127))
                };
                l.shl_var(l.splat(1), l.xor(idx, l.load(&row.xor)))
            }
        };
        p = l.or(p, bit);
    }
    p
}

/// Sets the probes of `lo` in `block`.
#[inline(always)]
pub(crate) fn insert<L: Lanes, const WORDS: bool>(l: L, block: &mut Block, lo: u32, rows: &[Row]) {
    let p = pattern::<L, WORDS>(l, lo, rows);
    let b = l.or(l.load(&block.0), p);
    l.store(&mut block.0, b);
}

/// Whether every probe of `lo` is set in `block`.
#[inline(always)]
pub(crate) fn contains<L: Lanes, const WORDS: bool>(
    l: L,
    block: &Block,
    lo: u32,
    rows: &[Row],
) -> bool {
    let p = pattern::<L, WORDS>(l, lo, rows);
    l.covers(l.load(&block.0), p)
}

/// The probes of `lo` as a block (for storage that must not be touched by vector loads and
/// stores, such as atomics, or that applies them its own way, such as counters).
#[inline(always)]
pub(crate) fn pattern_block<L: Lanes, const WORDS: bool>(l: L, lo: u32, rows: &[Row]) -> Block {
    let mut b = Block::ZERO;
    l.store(&mut b.0, pattern::<L, WORDS>(l, lo, rows));
    b
}

/// `Sectors8x32`: half `half` of `block` (`lo >> 31` of the key's `lo`) as its eight 32-bit
/// sectors (in memory order, which is sector order on a little-endian target only).
#[inline(always)]
fn half_of(block: &Block, half: usize) -> &[u32; 8] {
    debug_assert!(half < 2);
    let halves = (block as *const Block).cast::<[u32; 8]>();
    // SAFETY: a `Block` is 64 bytes, 64-byte aligned, of plain integers: two `[u32; 8]` of 32
    // bytes each, 32-byte aligned, lie inside it; `half` is 0 or 1 (`lo >> 31`, or the low
    // bit of a half entry).
    unsafe { &*halves.add(half & 1) }
}

/// [`half_of`], to write.
#[inline(always)]
fn half_of_mut(block: &mut Block, half: usize) -> &mut [u32; 8] {
    let halves = (block as *mut Block).cast::<[u32; 8]>();
    // SAFETY: as in `half_of`; the borrow of `block` is unique and lives as long.
    unsafe { &mut *halves.add(half & 1) }
}

/// `Sectors8x32`: the probes of `lo` over `rows` in the 32-bit lanes of one register, lane
/// `w` the bits of the half's sector `w`.
#[inline(always)]
pub(crate) fn mask_8x32<L: Lanes>(l: L, lo: u32, rows: &[Row32]) -> L::H {
    let lo = l.splat32(lo);
    let one = l.splat32(1);
    let mut m = l.splat32(0);
    for row in rows {
        let bit = l.shr32::<27>(l.mul32x32(lo, l.load32(&row.0)));
        m = l.or32(m, l.shl32_var(one, bit));
    }
    m
}

/// Sets the `Sectors8x32` probes of `lo` in `half` (little-endian targets only: the batch
/// pipeline's, [`crate::kernel::ops`]).
#[inline(always)]
pub(crate) fn insert_in_half<L: Lanes>(l: L, half: &mut [u32; 8], lo: u32, rows: &[Row32]) {
    let b = l.or32(l.load32(half), mask_8x32(l, lo, rows));
    l.store32(half, b);
}

/// Sets the `Sectors8x32` probes of `lo` in `half` of a shared filter, whose stripe lock the
/// caller holds, answering whether some was not set before (little-endian targets only). One
/// vector load of the half (no other writer can change it), and, when a
/// probe is missing, one vector store ([`Lanes::store32_shared`]); nothing is written when
/// every probe is set, so the line stays shared in other cores' caches. The protocol is the
/// one `layout::stripes` states and its loom model checks, with a vector for the words.
///
/// # Safety
/// `half` is 32-byte aligned and its writers all hold the stripe lock the caller holds.
#[inline(always)]
pub(crate) unsafe fn or_in_half_locked<L: Lanes>(
    l: L,
    half: &[AtomicU64; 4],
    lo: u32,
    rows: &[Row32],
) -> bool {
    // SAFETY: `AtomicU64` has the size and bit validity of `u64`, so the 32 bytes are eight
    // `u32`s, aligned for the vector load (the caller); they sit in `UnsafeCell`s, and no
    // write to them can happen while the reference lives (the caller holds their lock), so
    // the plain read does not race.
    let old = l.load32(unsafe { &*half.as_ptr().cast::<[u32; 8]>() });
    let mask = mask_8x32(l, lo, rows);
    if l.covers32(old, mask) {
        return false;
    }
    // SAFETY: aligned and written under the caller's lock only (the caller).
    unsafe { l.store32_shared(half, l.or32(old, mask)) };
    true
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

/// Sets the probes of `lo` over `rows` in `block` of a shared filter, whose stripe lock the
/// caller holds, answering whether some was not set before ([`or_in_half_locked`] for a whole
/// block: a vector load, and a vector store when a probe is missing).
///
/// # Safety
/// Every writer of `block` holds the stripe lock the caller holds.
#[inline(always)]
pub(crate) unsafe fn or_locked<L: Lanes, const WORDS: bool>(
    l: L,
    block: &[AtomicU64; 8],
    lo: u32,
    rows: &[Row],
) -> bool {
    // SAFETY: as in `or_in_half_locked`: the words are `u64`s in `UnsafeCell`s, 64-byte
    // aligned (a block), and nothing writes them while the reference lives.
    let old = l.load(unsafe { &*block.as_ptr().cast::<[u64; 8]>() });
    let p = pattern::<L, WORDS>(l, lo, rows);
    if l.covers(old, p) {
        return false;
    }
    // SAFETY: a block, 64-byte aligned, written under the caller's lock only.
    unsafe { l.store_shared(block, l.or(old, p)) };
    true
}

/// Whether every `Sectors8x32` probe of `lo` is set in `half` (little-endian targets only).
#[inline(always)]
pub(crate) fn contains_in_half<L: Lanes>(l: L, half: &[u32; 8], lo: u32, rows: &[Row32]) -> bool {
    l.covers32(l.load32(half), mask_8x32(l, lo, rows))
}

/// Sets the `Sectors8x32` probes of `lo` in half `half` of `block` (a big-endian target,
/// whose 32-bit sectors are not in memory order, takes the reference).
#[inline(always)]
pub(crate) fn insert_8x32<L: Lanes>(l: L, block: &mut Block, lo: u32, half: usize, rows: &[Row32]) {
    if cfg!(target_endian = "big") {
        return insert_scalar(block, Layout::Sectors8x32, lo, 8 * rows.len());
    }
    insert_in_half(l, half_of_mut(block, half), lo, rows)
}

/// Whether every `Sectors8x32` probe of `lo` is set in half `half` of `block`.
#[inline(always)]
pub(crate) fn contains_8x32<L: Lanes>(
    l: L,
    block: &Block,
    lo: u32,
    half: usize,
    rows: &[Row32],
) -> bool {
    if cfg!(target_endian = "big") {
        return contains_scalar(block, Layout::Sectors8x32, lo, 8 * rows.len());
    }
    contains_in_half(l, half_of(block, half), lo, rows)
}

/// Sets the `Sectors8x32` probes of `lo` in half `half` of `block`; whether some were not set
/// before.
#[inline(always)]
pub(crate) fn insert_new_8x32<L: Lanes>(
    l: L,
    block: &mut Block,
    lo: u32,
    half: usize,
    rows: &[Row32],
) -> bool {
    if cfg!(target_endian = "big") {
        let new = !contains_scalar(block, Layout::Sectors8x32, lo, 8 * rows.len());
        insert_scalar(block, Layout::Sectors8x32, lo, 8 * rows.len());
        return new;
    }
    let m = mask_8x32(l, lo, rows);
    let h = half_of_mut(block, half);
    let b = l.load32(h);
    l.store32(h, l.or32(b, m));
    !l.covers32(b, m)
}

/// The `Sectors8x32` probes of `lo` in half `half`, as a block (the other half zero).
#[inline(always)]
pub(crate) fn pattern_8x32<L: Lanes>(l: L, lo: u32, half: usize, rows: &[Row32]) -> Block {
    let mut b = Block::ZERO;
    insert_8x32(l, &mut b, lo, half, rows);
    b
}
