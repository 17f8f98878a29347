//! XXH3-64 of short byte strings (4 to 16 bytes), three ways, in interleaved rounds:
//! * `one at a time`: `blockbloom::hash::hash_bytes` per key (what a string batch computed
//!   before the AVX-512 tier hashed short keys in lanes, and what the other tiers compute);
//! * `gathered`: eight keys at a time in AVX-512 lanes, their words gathered
//!   (`_mm512_mask_i64gather_*`) from the slices' pointers and lengths, loaded as two
//!   vectors: no key passes through scalar code (written here, not in the crate);
//! * `hash_bytes_batch`: the crate's batch hash, which on AVX-512 reads each key's words
//!   with scalar loads and mixes eight in lanes (`src/kernel/bytes.rs`).
//!
//! Every gathered hash is checked against `hash_bytes` before the rounds. On the Zen 4 EPYC
//! the gathers measured slower than one key at a time (0.64-0.9x), and the scalar loads
//! faster for keys of one length class (`src/kernel/bytes.rs` has the figures).
//!
//! ```sh
//! cargo run --release -p blockbloom-perf -- string-lanes 200     # rounds
//! ```

use std::hint::black_box;

use blockbloom_perf::out;
use blockbloom_perf::workload::{self, Rng};
use serde_json::json;

const KEYS: usize = 1 << 16;

#[cfg(target_arch = "x86_64")]
mod lanes {
    use core::arch::x86_64::*;

    const SECRET_8: u64 = 0x1cad_21f7_2c81_017c;
    const SECRET_16: u64 = 0xdb97_9083_e96d_d4de;
    const SECRET_24: u64 = 0x1f67_b3b7_a4a4_4072;
    const SECRET_32: u64 = 0x78e5_c0cc_4ee6_79cb;
    const SECRET_40: u64 = 0x2172_ffcc_7dd0_5a82;
    const SECRET_48: u64 = 0x8e24_43f7_7446_08b8;
    const PRIME_MX2: u64 = 0x9fb2_1c65_1e98_df25;
    const PRIME_AVALANCHE: u64 = 0x1656_6791_9e37_79f9;

    /// XXH3's per-seed constant of the 4-to-8-byte path.
    const fn seed_flip(seed: u64) -> u64 {
        let folded = seed ^ (((seed as u32).swap_bytes() as u64) << 32);
        (SECRET_8 ^ SECRET_16).wrapping_sub(folded)
    }

    /// Whether a `&[u8]` is laid out as (pointer, length) in two words: Rust does not promise
    /// it, so the lanes check it on a real slice before reading descriptors as words.
    pub fn slices_are_ptr_len(s: &[u8]) -> bool {
        // SAFETY: a `&[u8]` is two words (asserted by the transmute's size check); reading
        // them as integers reads no memory.
        let words: [usize; 2] = unsafe { core::mem::transmute::<&[u8], [usize; 2]>(s) };
        words == [s.as_ptr() as usize, s.len()]
    }

    /// The high 64 bits of each lane's 64x64-bit product, from four 32-bit products.
    #[target_feature(enable = "avx512f")]
    fn mul_hi(a: __m512i, b: __m512i) -> __m512i {
        let mask = _mm512_set1_epi64(0xffff_ffff);
        let (ah, bh) = (_mm512_srli_epi64::<32>(a), _mm512_srli_epi64::<32>(b));
        let ll = _mm512_mul_epu32(a, b);
        let lh = _mm512_mul_epu32(a, bh);
        let hl = _mm512_mul_epu32(ah, b);
        let hh = _mm512_mul_epu32(ah, bh);
        let mid = _mm512_add_epi64(
            _mm512_add_epi64(_mm512_srli_epi64::<32>(ll), _mm512_and_si512(lh, mask)),
            _mm512_and_si512(hl, mask),
        );
        _mm512_add_epi64(
            _mm512_add_epi64(hh, _mm512_srli_epi64::<32>(mid)),
            _mm512_add_epi64(_mm512_srli_epi64::<32>(lh), _mm512_srli_epi64::<32>(hl)),
        )
    }

    /// XXH3-64 with `seed` of eight keys of 4 to 16 bytes each (their slices at `keys`).
    ///
    /// # Safety
    /// The CPU has AVX-512 F, DQ and BW; `keys` holds at least eight slices, each of 4 to 16
    /// bytes; and [`slices_are_ptr_len`] holds.
    #[target_feature(enable = "avx512f,avx512dq,avx512bw")]
    pub unsafe fn hash8(keys: &[&[u8]], seed: u64) -> __m512i {
        debug_assert!(keys.len() >= 8);
        // SAFETY: eight slices are 16 words (the caller's layout promise), in bounds.
        let (d0, d1) = unsafe {
            let p = keys.as_ptr().cast::<__m512i>();
            (_mm512_loadu_si512(p), _mm512_loadu_si512(p.add(1)))
        };
        // Even words are pointers, odd words lengths.
        let ptr = _mm512_permutex2var_epi64(d0, _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14), d1);
        let len = _mm512_permutex2var_epi64(d0, _mm512_setr_epi64(1, 3, 5, 7, 9, 11, 13, 15), d1);
        let short = _mm512_cmple_epu64_mask(len, _mm512_set1_epi64(8));
        let long = !short;
        let zero = _mm512_setzero_si512();
        let null = core::ptr::null::<u8>();

        // 4 to 8 bytes: the first and the last four bytes.
        let end4 = _mm512_add_epi64(ptr, _mm512_sub_epi64(len, _mm512_set1_epi64(4)));
        // SAFETY: each short lane's addresses are `ptr` and `ptr + len - 4` with len >= 4: four
        // bytes inside its slice. Masked-off lanes load nothing.
        let (first4, last4) = if short == 0 {
            (_mm256_setzero_si256(), _mm256_setzero_si256())
        } else {
            unsafe {
                (
                    _mm512_mask_i64gather_epi32::<1>(
                        _mm256_setzero_si256(),
                        short,
                        ptr,
                        null.cast(),
                    ),
                    _mm512_mask_i64gather_epi32::<1>(
                        _mm256_setzero_si256(),
                        short,
                        end4,
                        null.cast(),
                    ),
                )
            }
        };
        let x = _mm512_add_epi64(
            _mm512_cvtepu32_epi64(last4),
            _mm512_slli_epi64::<32>(_mm512_cvtepu32_epi64(first4)),
        );
        let mut h = _mm512_xor_si512(x, _mm512_set1_epi64(seed_flip(seed) as i64));
        h = _mm512_xor_si512(
            h,
            _mm512_xor_si512(_mm512_rol_epi64::<49>(h), _mm512_rol_epi64::<24>(h)),
        );
        let mx2 = _mm512_set1_epi64(PRIME_MX2 as i64);
        h = _mm512_mullo_epi64(h, mx2);
        h = _mm512_xor_si512(h, _mm512_add_epi64(_mm512_srli_epi64::<35>(h), len));
        h = _mm512_mullo_epi64(h, mx2);
        let h48 = _mm512_xor_si512(h, _mm512_srli_epi64::<28>(h));

        // 9 to 16 bytes: the first and the last eight bytes.
        let end8 = _mm512_add_epi64(ptr, _mm512_sub_epi64(len, _mm512_set1_epi64(8)));
        // SAFETY: each long lane's addresses are `ptr` and `ptr + len - 8` with len >= 9: eight
        // bytes inside its slice.
        let (first8, last8) = if long == 0 {
            (zero, zero)
        } else {
            unsafe {
                (
                    _mm512_mask_i64gather_epi64::<1>(zero, long, ptr, null.cast()),
                    _mm512_mask_i64gather_epi64::<1>(zero, long, end8, null.cast()),
                )
            }
        };
        let klo = (SECRET_24 ^ SECRET_32).wrapping_add(seed);
        let khi = (SECRET_40 ^ SECRET_48).wrapping_sub(seed);
        let lo = _mm512_xor_si512(first8, _mm512_set1_epi64(klo as i64));
        let hi = _mm512_xor_si512(last8, _mm512_set1_epi64(khi as i64));
        let fold = _mm512_xor_si512(_mm512_mullo_epi64(lo, hi), mul_hi(lo, hi));
        let bswap = _mm512_set_epi8(
            56, 57, 58, 59, 60, 61, 62, 63, 48, 49, 50, 51, 52, 53, 54, 55, 40, 41, 42, 43, 44, 45,
            46, 47, 32, 33, 34, 35, 36, 37, 38, 39, 24, 25, 26, 27, 28, 29, 30, 31, 16, 17, 18, 19,
            20, 21, 22, 23, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7,
        );
        let mut acc = _mm512_add_epi64(
            _mm512_add_epi64(len, _mm512_shuffle_epi8(lo, bswap)),
            _mm512_add_epi64(hi, fold),
        );
        acc = _mm512_xor_si512(acc, _mm512_srli_epi64::<37>(acc));
        acc = _mm512_mullo_epi64(acc, _mm512_set1_epi64(PRIME_AVALANCHE as i64));
        let h916 = _mm512_xor_si512(acc, _mm512_srli_epi64::<32>(acc));
        _mm512_mask_blend_epi64(short, h916, h48)
    }

    /// Hashes every key (a multiple of eight, each of 4 to 16 bytes) into `out`.
    ///
    /// # Safety
    /// As [`hash8`], for all of `keys`; `out` is as long as `keys`.
    #[target_feature(enable = "avx512f,avx512dq,avx512bw")]
    pub unsafe fn hash_all(keys: &[&[u8]], seed: u64, out: &mut [u64]) {
        assert_eq!(keys.len(), out.len());
        for (k, o) in keys.chunks_exact(8).zip(out.chunks_exact_mut(8)) {
            // SAFETY: the caller's promises, for these eight keys; `o` holds eight words.
            unsafe { _mm512_storeu_si512(o.as_mut_ptr().cast(), hash8(k, seed)) };
        }
    }
}

pub fn main() {
    let rounds: usize = workload::arg(1, 200);
    #[cfg(target_arch = "x86_64")]
    {
        let avx512 = is_x86_feature_detected!("avx512f")
            && is_x86_feature_detected!("avx512dq")
            && is_x86_feature_detected!("avx512bw");
        if !avx512 || !lanes::slices_are_ptr_len(b"abcd") {
            out!(
                "no AVX-512 F/DQ/BW here (or slices are not (pointer, length)): nothing to measure"
            );
            return;
        }
        out!("XXH3 of byte strings, {KEYS} keys, {rounds} rounds, sides interleaved");
        for lens in [
            &[8usize][..],
            &[4, 5, 6, 7, 8],
            &[16],
            &[4, 5, 6, 7, 8, 9, 12, 16],
        ] {
            let mut r = Rng(lens.len() as u64);
            let mut values = Vec::new();
            let mut ends = vec![0];
            for i in 0..KEYS {
                let len = lens[i % lens.len()];
                values.extend((0..len).map(|_| r.next() as u8));
                ends.push(values.len());
            }
            let keys: Vec<&[u8]> = ends.windows(2).map(|w| &values[w[0]..w[1]]).collect();
            let mut out = vec![0u64; KEYS];
            for seed in [0u64, 1, u64::MAX, 0x9e37_79b9_7f4a_7c15] {
                // SAFETY: AVX-512 F/DQ/BW and the slice layout were checked above; every key
                // has 4 to 16 bytes; KEYS is a multiple of eight.
                unsafe { lanes::hash_all(&keys, seed, &mut out) };
                for (i, k) in keys.iter().enumerate() {
                    let want = blockbloom::hash::hash_bytes(k, seed);
                    assert_eq!(out[i], want, "key {i} of {} bytes, seed {seed}", k.len());
                }
            }
            const SIDES: [&str; 3] = ["one at a time", "gathered", "hash_bytes_batch"];
            let times = workload::interleaved(rounds, SIDES.len(), KEYS, |side| {
                match side {
                    0 => {
                        for (o, k) in out.iter_mut().zip(&keys) {
                            *o = blockbloom::hash::hash_bytes(k, 0);
                        }
                    }
                    // SAFETY: as above.
                    1 => unsafe { lanes::hash_all(black_box(&keys), 0, &mut out) },
                    _ => blockbloom::hash::hash_bytes_batch(black_box(&keys), 0, &mut out),
                }
                black_box(&out);
            });
            out!("{lens:?} bytes:");
            workload::scope(json!({"keys": format!("{lens:?} bytes"), "n": KEYS}));
            workload::medians(&SIDES, &times, 16);
            for i in [1, 2] {
                let label = format!("one at a time / {}", SIDES[i]);
                out!(
                    "  {label}: {}",
                    workload::ratio(&label, &times[0], &times[i])
                );
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (rounds, black_box(0), Rng(0), json!(0));
        out!("x86_64 only");
    }
}
