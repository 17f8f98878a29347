//! XXH64 (seed 0) of `u64` values over a batch: the Parquet split block filter's hash of
//! integer columns, equal bit for bit to `hashing::xxh64_u64`. Six dependent 64-bit
//! multiplies a key, so lanes gain only where the tier multiplies 64 bits in one instruction
//! ([`Lanes::MUL64_NATIVE`]); elsewhere it is the scalar code.

use crate::hashing::xxh64::{P1, P2, P3, P4, P5};
use crate::hashing::xxh64_u64;
use crate::simd::Lanes;

/// XXH64 of each value's 8 little-endian bytes into `out` (same length), eight lanes at a
/// time (the rest one at a time).
#[inline(always)]
pub(crate) fn hash_u64<L: Lanes>(l: L, values: &[u64], out: &mut [u64]) {
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
