//! What hashing `u64` keys costs a batch, per hash: hash id 3's MX32-64 and a candidate of two
//! folded multiplies (see `single_key_pairs.rs`' floor), each in AVX2 lanes and in scalar
//! registers, beside the library's own batch hash and `count_batch`. It answers whether the
//! candidate, faster for single keys, would cost the batches their speed: a batch hashes its
//! keys in lanes first (a 1,024-key call spends its hash stage there), then probes.
//!
//! Over 1M random `u64` keys, 1,024 a call, every side in every round (interleaved), each
//! round's time per key; the medians, and each side's per-round ratio to `mx32-lanes`:
//! * `mx32-lanes`: MX32-64 (`hash::hash_u64_mx32`) four keys to an AVX2 register, a round's
//!   two 32-by-32-bit products in two `vpmuludq` (this program's own, checked against the
//!   library's bits);
//! * `mx32-scalar`: `hash::hash_u64_mx32`, one key at a time;
//! * `fold2-lanes`: two folded multiplies (the 128-bit product of two 64-bit words, its halves
//!   xored) four keys to an AVX2 register, each 64-by-64-bit product from four `vpmuludq`
//!   and their carries (AVX2 has no wider multiply);
//! * `fold2-scalar`: the same, one key at a time (`mul`/`mulx`);
//! * `library`: `hash::hash_u64_batch` (hash id 2, XXH3-64 in the active tier's lanes);
//! * `count_batch`: the defaults' `BloomFilter::count_batch` over a filter of 1M keys at 1%,
//!   the whole batch (hash and probe), for scale.
//! * `moremur-lanes`, `moremur-small-lanes`: issue 84's multiply-xorshift candidate
//!   (`workload::candidate::Xorshift`, moremur's constants) four keys to an AVX2 register,
//!   each 64-bit product's low half from three `vpmuludq` (two for the second multiplier of
//!   `moremur-small`, under 2^32); `moremur-scalar`: one key at a time (`imul`);
//! * `moremur-lanes512` (when the CPU has AVX-512F and DQ): eight keys to a register, each
//!   product one `vpmullq`.
//!
//! x86-64 with AVX2 only.
//!
//! ```sh
//! cargo run --release -p blockbloom-perf -- hash-lanes 15     # rounds
//! ```

#[cfg(target_arch = "x86_64")]
pub fn main() {
    x86::main();
}

#[cfg(not(target_arch = "x86_64"))]
pub fn main() {
    out!("hash_lanes: x86-64 with AVX2 only");
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;
    use std::hint::black_box;

    use blockbloom::BloomFilter;
    use blockbloom::hash::{hash_u64_batch, hash_u64_mx32};

    use blockbloom_perf::out;
    use blockbloom_perf::workload::candidate::{
        FOLD_MUL, MX32_A as A, MX32_B as B, MX32_SEED_MASK as SEED_MASK, MX32_T8 as T8, Xorshift,
        fold2,
    };
    use blockbloom_perf::workload::{self, Rng};
    use serde_json::json;

    const KEYS: usize = 1 << 20;
    const CALL: usize = 1024;

    /// # Safety
    /// The CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    unsafe fn mx32_lanes(keys: &[u64], seed: u64, out: &mut [u64]) {
        let k = _mm256_set1_epi64x((seed ^ SEED_MASK) as i64);
        let t8 = _mm256_set1_epi64x(T8 as i64);
        let a = A.map(|m| _mm256_set1_epi64x(m as i64));
        let b = B.map(|m| _mm256_set1_epi64x(m as i64));
        let round = |x: __m256i, r: usize| {
            let lo = _mm256_mul_epu32(x, a[r]);
            let hi = _mm256_mul_epu32(_mm256_srli_epi64::<32>(x), b[r]);
            _mm256_xor_si256(lo, _mm256_shuffle_epi32::<0b1011_0001>(hi))
        };
        for (c, o) in keys.chunks_exact(4).zip(out.chunks_exact_mut(4)) {
            // SAFETY: `c` and `o` hold four `u64`s (32 bytes), read and written unaligned.
            unsafe {
                let x = _mm256_xor_si256(_mm256_loadu_si256(c.as_ptr().cast()), k);
                let h = round(round(_mm256_xor_si256(round(x, 0), t8), 1), 2);
                _mm256_storeu_si256(o.as_mut_ptr().cast(), h);
            }
        }
    }

    /// The 64-by-64-bit products of `x`'s lanes and `m` (`ml`, `mh`: its halves in the low
    /// half of each lane), their 128 bits' halves xored.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn fold_lanes(x: __m256i, ml: __m256i, mh: __m256i) -> __m256i {
        let low = _mm256_set1_epi64x(0xffff_ffff);
        let xh = _mm256_srli_epi64::<32>(x);
        let p0 = _mm256_mul_epu32(x, ml);
        let p1 = _mm256_mul_epu32(x, mh);
        let p2 = _mm256_mul_epu32(xh, ml);
        let p3 = _mm256_mul_epu32(xh, mh);
        // The middle column: at most three 32-bit values, no carry out of the lane.
        let mid = _mm256_add_epi64(
            _mm256_srli_epi64::<32>(p0),
            _mm256_add_epi64(_mm256_and_si256(p1, low), _mm256_and_si256(p2, low)),
        );
        let hi = _mm256_add_epi64(
            _mm256_add_epi64(p3, _mm256_srli_epi64::<32>(mid)),
            _mm256_add_epi64(_mm256_srli_epi64::<32>(p1), _mm256_srli_epi64::<32>(p2)),
        );
        // The low half is `mid`'s low 32 bits over `p0`'s: disjoint, so xor is or.
        let lo = _mm256_xor_si256(_mm256_slli_epi64::<32>(mid), _mm256_and_si256(p0, low));
        _mm256_xor_si256(lo, hi)
    }

    /// # Safety
    /// The CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    unsafe fn fold2_lanes(keys: &[u64], seed: u64, out: &mut [u64]) {
        let s = _mm256_set1_epi64x(seed as i64);
        let half = |m: u64, shift: u32| _mm256_set1_epi64x((m >> shift) as u32 as i64);
        let (l0, h0) = (half(FOLD_MUL[0], 0), half(FOLD_MUL[0], 32));
        let (l1, h1) = (half(FOLD_MUL[1], 0), half(FOLD_MUL[1], 32));
        for (c, o) in keys.chunks_exact(4).zip(out.chunks_exact_mut(4)) {
            // SAFETY: as in `mx32_lanes`.
            unsafe {
                let x = _mm256_xor_si256(_mm256_loadu_si256(c.as_ptr().cast()), s);
                let h = fold_lanes(fold_lanes(x, l0, h0), l1, h1);
                _mm256_storeu_si256(o.as_mut_ptr().cast(), h);
            }
        }
    }

    /// The low 64 bits of each lane's product with `m` (`ml`, `mh`: its halves in the low
    /// half of each lane): three `vpmuludq`, two when `m` is under 2^32 (`SMALL`: `mh` is 0).
    #[inline]
    #[target_feature(enable = "avx2")]
    fn mul_lo_lanes<const SMALL: bool>(x: __m256i, ml: __m256i, mh: __m256i) -> __m256i {
        let p0 = _mm256_mul_epu32(x, ml);
        let mut cross = _mm256_mul_epu32(_mm256_srli_epi64::<32>(x), ml);
        if !SMALL {
            cross = _mm256_add_epi64(cross, _mm256_mul_epu32(x, mh));
        }
        _mm256_add_epi64(p0, _mm256_slli_epi64::<32>(cross))
    }

    /// A multiply-xorshift candidate ([`Xorshift`]) four keys to an AVX2 register; `A`, `B`,
    /// `C` are its shifts, `SMALL` whether its second multiplier is under 2^32.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    unsafe fn xorshift_lanes<const A: i32, const B: i32, const C: i32, const SMALL: bool>(
        h: Xorshift,
        keys: &[u64],
        seed: u64,
        out: &mut [u64],
    ) {
        assert!(h.shifts == [A as u32, B as u32, C as u32] && (h.mul[1] >> 32 == 0) == SMALL);
        let s = _mm256_set1_epi64x((seed ^ SEED_MASK) as i64);
        let half = |m: u64, shift: u32| _mm256_set1_epi64x((m >> shift) as u32 as i64);
        let (l0, h0) = (half(h.mul[0], 0), half(h.mul[0], 32));
        let (l1, h1) = (half(h.mul[1], 0), half(h.mul[1], 32));
        for (c, o) in keys.chunks_exact(4).zip(out.chunks_exact_mut(4)) {
            // SAFETY: as in `mx32_lanes`.
            unsafe {
                let mut x = _mm256_xor_si256(_mm256_loadu_si256(c.as_ptr().cast()), s);
                x = _mm256_xor_si256(x, _mm256_srli_epi64::<A>(x));
                x = mul_lo_lanes::<false>(x, l0, h0);
                x = _mm256_xor_si256(x, _mm256_srli_epi64::<B>(x));
                x = mul_lo_lanes::<SMALL>(x, l1, h1);
                x = _mm256_xor_si256(x, _mm256_srli_epi64::<C>(x));
                _mm256_storeu_si256(o.as_mut_ptr().cast(), x);
            }
        }
    }

    /// A multiply-xorshift candidate eight keys to an AVX-512 register, each product one
    /// `vpmullq`.
    ///
    /// # Safety
    /// The CPU must have AVX-512F and AVX-512DQ.
    #[target_feature(enable = "avx512f,avx512dq")]
    unsafe fn xorshift_lanes512<const A: u32, const B: u32, const C: u32>(
        h: Xorshift,
        keys: &[u64],
        seed: u64,
        out: &mut [u64],
    ) {
        assert!(h.shifts == [A, B, C]);
        let s = _mm512_set1_epi64((seed ^ SEED_MASK) as i64);
        let m = h.mul.map(|m| _mm512_set1_epi64(m as i64));
        for (c, o) in keys.chunks_exact(8).zip(out.chunks_exact_mut(8)) {
            // SAFETY: `c` and `o` hold eight `u64`s (64 bytes), read and written unaligned.
            unsafe {
                let mut x = _mm512_xor_si512(_mm512_loadu_si512(c.as_ptr().cast()), s);
                x = _mm512_xor_si512(x, _mm512_srli_epi64::<A>(x));
                x = _mm512_mullo_epi64(x, m[0]);
                x = _mm512_xor_si512(x, _mm512_srli_epi64::<B>(x));
                x = _mm512_mullo_epi64(x, m[1]);
                x = _mm512_xor_si512(x, _mm512_srli_epi64::<C>(x));
                _mm512_storeu_si512(o.as_mut_ptr().cast(), x);
            }
        }
    }

    pub fn main() {
        let rounds: usize = workload::arg(1, 15);
        assert!(rounds > 0, "a positive number of rounds");
        assert!(is_x86_feature_detected!("avx2"), "hash_lanes: needs AVX2");
        let mut rng = Rng(7);
        let keys: Vec<u64> = (0..KEYS).map(|_| rng.next()).collect();
        let mut filter = BloomFilter::with_capacity(KEYS as u64, 0.01).expect("1%");
        filter.insert_batch(&keys[..KEYS / 2]);
        let seed = filter.seed();
        let mut out = vec![0u64; CALL];

        // Each side's bits, checked before any timing.
        let sample = &keys[..CALL];
        // SAFETY: AVX2 was detected above.
        unsafe { mx32_lanes(sample, seed, &mut out) };
        assert!(
            sample
                .iter()
                .zip(&out)
                .all(|(&k, &h)| h == hash_u64_mx32(k, seed))
        );
        // SAFETY: as above.
        unsafe { fold2_lanes(sample, seed, &mut out) };
        assert!(sample.iter().zip(&out).all(|(&k, &h)| h == fold2(k, seed)));
        let (moremur, small) = (Xorshift::MOREMUR, Xorshift::MOREMUR_SMALL);
        // SAFETY: as above.
        unsafe { xorshift_lanes::<27, 33, 27, false>(moremur, sample, seed, &mut out) };
        assert!(
            sample
                .iter()
                .zip(&out)
                .all(|(&k, &h)| h == moremur.hash(k, seed))
        );
        // SAFETY: as above.
        unsafe { xorshift_lanes::<27, 33, 27, true>(small, sample, seed, &mut out) };
        assert!(
            sample
                .iter()
                .zip(&out)
                .all(|(&k, &h)| h == small.hash(k, seed))
        );
        let avx512 = is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512dq");
        if avx512 {
            // SAFETY: AVX-512F and DQ were detected.
            unsafe { xorshift_lanes512::<27, 33, 27>(moremur, sample, seed, &mut out) };
            assert!(
                sample
                    .iter()
                    .zip(&out)
                    .all(|(&k, &h)| h == moremur.hash(k, seed))
            );
        }

        let mut names = vec![
            "mx32-lanes",
            "mx32-scalar",
            "fold2-lanes",
            "fold2-scalar",
            "library",
            "count_batch",
            "moremur-lanes",
            "moremur-small-lanes",
            "moremur-scalar",
        ];
        if avx512 {
            names.push("moremur-lanes512");
        }
        let times = workload::interleaved(rounds, names.len(), KEYS, |side| {
            let mut acc = 0u64;
            for c in keys.chunks(CALL) {
                let o = &mut out[..c.len()];
                match side {
                    // SAFETY: AVX2 was detected above.
                    0 => unsafe { mx32_lanes(c, seed, o) },
                    1 => o
                        .iter_mut()
                        .zip(c)
                        .for_each(|(h, &k)| *h = hash_u64_mx32(k, seed)),
                    // SAFETY: as above.
                    2 => unsafe { fold2_lanes(c, seed, o) },
                    3 => o.iter_mut().zip(c).for_each(|(h, &k)| *h = fold2(k, seed)),
                    4 => hash_u64_batch(c, seed, o),
                    5 => o[0] = filter.count_batch(c) as u64,
                    // SAFETY: AVX2 was detected above.
                    6 => unsafe { xorshift_lanes::<27, 33, 27, false>(moremur, c, seed, o) },
                    // SAFETY: as above.
                    7 => unsafe { xorshift_lanes::<27, 33, 27, true>(small, c, seed, o) },
                    8 => o
                        .iter_mut()
                        .zip(c)
                        .for_each(|(h, &k)| *h = moremur.hash(k, seed)),
                    // SAFETY: side 9 runs only when AVX-512F and DQ were detected.
                    _ => unsafe { xorshift_lanes512::<27, 33, 27>(moremur, c, seed, o) },
                }
                acc ^= black_box(o[0]);
            }
            acc
        });
        out!(
            "hash_lanes: {KEYS} u64 keys, {CALL} a call, {rounds} rounds, sides interleaved; {}",
            workload::cpu_name()
        );
        workload::scope(json!({"keys": "u64", "n": KEYS, "call": CALL}));
        out!("  ns/key: {}", workload::median_line(&names, &times));
        for (i, name) in names.iter().enumerate().skip(1) {
            let label = format!("{name} / mx32-lanes");
            out!(
                "  {label}: {}",
                workload::ratio(&label, &times[i], &times[0])
            );
        }
    }
}
