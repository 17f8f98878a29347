//! XXH3-64 of byte-string batches, equal bit for bit to `xxh3_64_with_seed` of each key's
//! bytes: strings of 4 to 16 bytes in lanes on the tiers where that measured faster
//! ([`bytes`]), the others one at a time ([`ByteKeys::hash`]). XXH3 itself, one key at a time
//! and in lanes for integer and 16-byte keys, is `crate::hashing::xxh3`.

use crate::hashing::bytes_with_seed;
use crate::kernel::shapes::ByteKeys;

// Short byte strings in lanes: the x86-64 tiers' (NEON and portable hash them one at a time).
#[cfg(target_arch = "x86_64")]
pub(crate) mod bytes;

impl ByteKeys<'_> {
    /// XXH3 of each key with `seed` into `out` (same length), one key at a time: the
    /// reference, and every tier's hash of byte strings but AVX-512's short ones
    /// ([`bytes`]).
    #[inline(always)]
    pub(crate) fn hash(&self, seed: u64, out: &mut [u64]) {
        match self {
            ByteKeys::Slices(k) => {
                for (o, b) in out.iter_mut().zip(*k) {
                    *o = bytes_with_seed(b, seed);
                }
            }
            ByteKeys::Strs(k) => {
                for (o, s) in out.iter_mut().zip(*k) {
                    *o = bytes_with_seed(s.as_bytes(), seed);
                }
            }
            ByteKeys::Offsets32 { offsets, values } => {
                for (o, w) in out.iter_mut().zip(offsets.windows(2)) {
                    // In bounds: the front-end validated the offsets against `values`.
                    *o = bytes_with_seed(&values[w[0] as usize..w[1] as usize], seed);
                }
            }
            ByteKeys::Offsets64 { offsets, values } => {
                for (o, w) in out.iter_mut().zip(offsets.windows(2)) {
                    *o = bytes_with_seed(&values[w[0] as usize..w[1] as usize], seed);
                }
            }
        }
    }
}

/// [`ByteKeys::hash`] out of line: a chunk that the lanes do not pay for (`bytes`).
#[cfg(target_arch = "x86_64")]
#[inline(never)]
pub(crate) fn bytes_one_by_one(keys: ByteKeys<'_>, seed: u64, out: &mut [u64]) {
    keys.hash(seed, out)
}

/// 16-byte keys (`crate::hashing::xxh3::key16` in lanes) through the kernel on every tier.
#[cfg(target_arch = "x86_64")]
#[cfg(test)]
mod key16_tests {
    use alloc::vec::Vec;

    use super::bytes::tests::mix;
    use crate::hashing::aes::hash_bytes_aes;
    use crate::hashing::{KeyHash, seed_flip};
    use crate::isa::Isa;
    use crate::kernel::{Kernel, Keys};
    use xxhash_rust::xxh3::xxh3_64_with_seed;

    #[test]
    fn sixteen_byte_keys_hash_as_their_bytes_on_every_tier() {
        let mut state = 5;
        let wide: Vec<u128> = (0..777)
            .map(|_| (mix(&mut state) as u128) << 64 | mix(&mut state) as u128)
            .collect();
        let fixed: Vec<[u8; 16]> = wide.iter().map(|k| k.to_le_bytes()).collect();
        for seed in [0, 99] {
            let want: Vec<u64> = fixed.iter().map(|k| xxh3_64_with_seed(k, seed)).collect();
            for isa in Isa::supported() {
                let kernel = Kernel::get(isa).unwrap();
                let mut out = alloc::vec![0u64; wide.len()];
                kernel.hash_keys(seed_flip(seed), Keys::U128(&wide), 0, &mut out);
                assert_eq!(out, want, "{isa}: u128");
                kernel.hash_keys(seed_flip(seed), Keys::Fixed16(&fixed), 0, &mut out);
                assert_eq!(out, want, "{isa}: [u8; 16]");
            }
        }
    }

    /// Under `KeyHash::Aesh`, AESH-64 of the 16 bytes, from both sources, on every tier, from every
    /// start (groups of eight at every offset, and the tail).
    #[test]
    fn sixteen_byte_keys_hash_as_aesh_under_hash_id_2_on_every_tier() {
        let mut state = 6;
        let wide: Vec<u128> = (0..300)
            .map(|_| (mix(&mut state) as u128) << 64 | mix(&mut state) as u128)
            .collect();
        let fixed: Vec<[u8; 16]> = wide.iter().map(|k| k.to_le_bytes()).collect();
        for seed in [0, 99] {
            let want: Vec<u64> = fixed.iter().map(|k| hash_bytes_aes(k, seed)).collect();
            for isa in Isa::supported() {
                let kernel = Kernel::get(isa).unwrap();
                for start in [0, 1, 7, 9] {
                    let mut out = alloc::vec![0u64; wide.len() - start];
                    let flip = seed_flip(seed);
                    let u128s = Keys::U128(&wide).under(KeyHash::Aesh);
                    kernel.hash_keys(flip, u128s, start, &mut out);
                    assert_eq!(out, want[start..], "{isa}: u128 from {start}");
                    let arrays = Keys::Fixed16(&fixed).under(KeyHash::Aesh);
                    kernel.hash_keys(flip, arrays, start, &mut out);
                    assert_eq!(out, want[start..], "{isa}: [u8; 16] from {start}");
                }
            }
        }
    }
}
