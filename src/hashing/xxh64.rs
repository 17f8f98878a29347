//! XXH64 with seed 0 of 4- and 8-byte values: the Parquet split block filter's hash of integer
//! columns, one key at a time (XXH64's input paths for those lengths, unrolled) and in SIMD
//! lanes, equal bit for bit to `xxhash_rust::xxh64::xxh64(&v.to_le_bytes(), 0)`
//! (`tests/parquet.rs`). Other byte strings take `xxhash_rust`'s XXH64 itself.

use crate::simd::Lanes;

/// XXH64's primes.
const P1: u64 = 0x9e37_79b1_85eb_ca87;
const P2: u64 = 0xc2b2_ae3d_27d4_eb4f;
const P3: u64 = 0x1656_67b1_9e37_79f9;
const P4: u64 = 0x85eb_ca77_c2b2_ae63;
const P5: u64 = 0x27d4_eb2f_1656_67c5;

/// XXH64 with seed 0 of `v.to_le_bytes()` (XXH64's 8-byte input path, unrolled).
#[inline(always)]
pub(crate) const fn xxh64_u64(v: u64) -> u64 {
    let mut h = P5.wrapping_add(8);
    let k = v.wrapping_mul(P2).rotate_left(31).wrapping_mul(P1);
    h ^= k;
    h = h.rotate_left(27).wrapping_mul(P1).wrapping_add(P4);
    xxh64_avalanche(h)
}

/// XXH64 with seed 0 of `v.to_le_bytes()` (XXH64's 4-byte input path, unrolled).
#[inline(always)]
pub(crate) const fn xxh64_u32(v: u32) -> u64 {
    let mut h = P5.wrapping_add(4);
    h ^= (v as u64).wrapping_mul(P1);
    h = h.rotate_left(23).wrapping_mul(P2).wrapping_add(P3);
    xxh64_avalanche(h)
}

#[inline(always)]
const fn xxh64_avalanche(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(P2);
    h ^= h >> 29;
    h = h.wrapping_mul(P3);
    h ^ (h >> 32)
}

/// [`xxh64_u64`] of each value into `out` (same length), eight lanes at a time (the rest one
/// at a time). Six dependent 64-bit multiplies a key, so lanes gain only where the tier
/// multiplies 64 bits in one instruction (`Lanes::MUL64_NATIVE`), which the hash plan checks
/// (`kernel::plan::xxh64_u64`); elsewhere it runs the scalar code.
#[inline(always)]
pub(crate) fn u64_lanes<L: Lanes>(l: L, values: &[u64], out: &mut [u64]) {
    let (p1, p2, p3, p4) = (l.splat(P1), l.splat(P2), l.splat(P3), l.splat(P4));
    let start = l.splat(P5.wrapping_add(8));
    let mut vc = values.chunks_exact(8);
    let mut oc = out.chunks_exact_mut(8);
    for (v, o) in (&mut vc).zip(&mut oc) {
        let k = l.mul64(l.rotl::<31, 33>(l.mul64(l.loadu(v), p2)), p1);
        let h = l.xor(start, k);
        let h = l.add(l.mul64(l.rotl::<27, 37>(h), p1), p4);
        let h = l.mul64(l.xor(h, l.shr::<33>(h)), p2);
        let h = l.mul64(l.xor(h, l.shr::<29>(h)), p3);
        l.storeu(o, l.xor(h, l.shr::<32>(h)));
    }
    for (o, &v) in oc.into_remainder().iter_mut().zip(vc.remainder()) {
        *o = xxh64_u64(v);
    }
}
