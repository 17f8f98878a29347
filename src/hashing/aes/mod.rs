//! AESH-64: a stable 64-bit hash of byte strings built from AES encryption rounds, with the
//! same bits on every machine: AES-NI and VAES on x86-64, AESE/AESMC on aarch64, and a
//! table-driven software round everywhere else (exact, not constant-time).
//!
//! The definition is on [`hash_bytes_aes`].

#[cfg(target_arch = "aarch64")]
pub(crate) mod aarch64;
#[cfg(target_arch = "x86_64")]
pub(crate) mod x86_64;

/// The hexadecimal digits of pi after the point (Blowfish's P-array), the round keys'
/// nothing-up-the-sleeve constants.
const PI: [u64; 8] = [
    0x243f_6a88_85a3_08d3,
    0x1319_8a2e_0370_7344,
    0xa409_3822_299f_31d0,
    0x082e_fa98_ec4e_6c89,
    0x4528_21e6_38d0_1377,
    0xbe54_66cf_34e9_0c6c,
    0xc0ac_29b7_c97c_50dd,
    0x3f84_d5b5_b547_0917,
];

/// The four round keys of a seed: `k0` starts the state, `k1` absorbs every block, `k2` and
/// `k3` finish. Computed once per seed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct AesKeys(pub(crate) [u128; 4]);

const fn words(lo: u64, hi: u64) -> u128 {
    lo as u128 | (hi as u128) << 64
}

impl AesKeys {
    /// The round keys in `R`'s registers.
    #[inline(always)]
    pub(crate) fn load<R: Round>(&self, r: R) -> Keys<R::V> {
        let w = |k: u128| r.words(k as u64, (k >> 64) as u64);
        Keys([w(self.0[0]), w(self.0[1]), w(self.0[2]), w(self.0[3])])
    }

    /// The round keys for `seed`.
    pub(crate) const fn new(seed: u64) -> Self {
        AesKeys([
            words(PI[0] ^ seed, PI[1] ^ seed.rotate_left(32)),
            words(PI[2].wrapping_add(seed), PI[3]),
            words(PI[4], PI[5] ^ seed.swap_bytes()),
            words(PI[6], PI[7]),
        ])
    }
}

/// The one block a key of at most 16 bytes is absorbed as (step 3 of the definition), as
/// its low and high 64-bit words.
#[inline(always)]
pub(crate) fn short_block(b: &[u8]) -> (u64, u64) {
    let n = b.len();
    let le64 = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
    let le32 = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes")) as u64;
    if n >= 8 {
        (le64(0), le64(n - 8))
    } else if n >= 4 {
        (le32(0) | le32(n - 4) << 32, 0)
    } else if n > 0 {
        (
            b[0] as u64 | (b[n / 2] as u64) << 8 | (b[n - 1] as u64) << 16,
            0,
        )
    } else {
        (0, 0)
    }
}

/// Byte-string keys read by index: what the batch hashes take, so that a slice of slices, strings, Arrow
/// offsets and fixed-width keys are hashed by one loop each, without being collected first.
pub(crate) trait ByteSource<'k>: Copy {
    /// How many keys.
    fn count(&self) -> usize;
    /// Key `i`, for `i < count()`.
    fn key(&self, i: usize) -> &'k [u8];
}

impl<'k> ByteSource<'k> for &[&'k [u8]] {
    #[inline(always)]
    fn count(&self) -> usize {
        self.len()
    }
    #[inline(always)]
    fn key(&self, i: usize) -> &'k [u8] {
        self[i]
    }
}

/// Keys of one width `W` laid end to end (`[u8; 16]` keys, or little-endian integers viewed
/// as their bytes).
#[derive(Clone, Copy)]
pub(crate) struct Fixed<'k, const W: usize>(pub(crate) &'k [u8]);

impl<'k, const W: usize> ByteSource<'k> for Fixed<'k, W> {
    #[inline(always)]
    fn count(&self) -> usize {
        self.0.len() / W
    }
    #[inline(always)]
    fn key(&self, i: usize) -> &'k [u8] {
        &self.0[W * i..W * i + W]
    }
}

/// The bit of a key of `len` bytes in a set of lengths, bit `min(len, 63)`: what the batch
/// hashes answer, so that a caller whose hash id gives some lengths another hash learns whether
/// a chunk holds any from the pass that reads the keys anyway (a pass of its own over their
/// slices, ahead of the hash, slowed a batch of strings read once:
/// perf-reports/2026-12-03-string-lengths.md).
#[inline(always)]
pub(crate) fn length_bit(len: usize) -> u64 {
    1 << len.min(63)
}

/// AESH-64 of each key of `src` into `out` (same length) on the best AES instructions this
/// machine has (VAES, AES-NI, AESE), else in software: the same bits either way. Returns the
/// keys' lengths as a set ([`length_bit`] of each).
#[inline]
pub(crate) fn hash_source<'k, S: ByteSource<'k>>(keys: &AesKeys, src: S, out: &mut [u64]) -> u64 {
    assert_eq!(
        out.len(),
        src.count(),
        "output slice length must equal key count"
    );
    #[cfg(target_arch = "x86_64")]
    {
        if x86_64::has_vaes() {
            // SAFETY: the CPU has AVX2, AES-NI and VAES (checked just above).
            return unsafe { x86_64::hash_batch_vaes(keys, src, out) };
        }
        if x86_64::has_aes() {
            // SAFETY: the CPU has AES-NI (checked just above).
            return unsafe { x86_64::hash_batch(keys, src, out) };
        }
    }
    #[cfg(target_arch = "aarch64")]
    if aarch64::has_aes() {
        // SAFETY: the CPU has the AES extension (checked just above).
        return unsafe { aarch64::hash_batch(keys, src, out) };
    }
    hash_source_soft(keys, src, out)
}

/// [`hash_source`] with the software round alone: the scalar and portable tiers' path.
#[inline]
pub(crate) fn hash_source_soft<'k, S: ByteSource<'k>>(
    keys: &AesKeys,
    src: S,
    out: &mut [u64],
) -> u64 {
    assert_eq!(
        out.len(),
        src.count(),
        "output slice length must equal key count"
    );
    let k = keys.load(Soft);
    let mut seen = 0;
    for (i, o) in out.iter_mut().enumerate() {
        let key = src.key(i);
        seen |= length_bit(key.len());
        *o = hash(Soft, &k, key);
    }
    seen
}

/// One AES round on some 128-bit register type: what the hash needs of a machine.
pub(crate) trait Round: Copy {
    /// A 128-bit state or key.
    type V: Copy;
    /// The 128 bits `lo | hi << 64`.
    fn words(self, lo: u64, hi: u64) -> Self::V;
    /// These 16 bytes.
    fn chunk(self, c: &[u8; 16]) -> Self::V;
    /// `a ^ b`.
    fn xor(self, a: Self::V, b: Self::V) -> Self::V;
    /// `AESENC(s, k)`.
    fn round(self, s: Self::V, k: Self::V) -> Self::V;
    /// The xor of the two 64-bit halves.
    fn fold(self, s: Self::V) -> u64;
}

/// Round keys held in `R`'s registers.
#[derive(Clone, Copy)]
pub(crate) struct Keys<V>(pub(crate) [V; 4]);

/// AESH-64 of `b` on `r`'s rounds: the definition, once, for every machine.
#[inline(always)]
pub(crate) fn hash<R: Round>(r: R, k: &Keys<R::V>, b: &[u8]) -> u64 {
    let n = b.len();
    let mut s;
    if n <= 16 {
        let (lo, hi) = short_block(b);
        s = r.round(r.xor(k.0[0], r.words(lo, hi ^ n as u64)), k.0[1]);
    } else {
        s = r.xor(k.0[0], r.words(0, n as u64));
        let chunk = |at: usize| r.chunk(b[at..at + 16].try_into().expect("16 bytes"));
        let mut at = 0;
        while at + 16 < n {
            s = r.round(r.xor(s, chunk(at)), k.0[1]);
            at += 16;
        }
        s = r.round(r.xor(s, chunk(n - 16)), k.0[1]);
    }
    r.fold(r.round(r.round(s, k.0[2]), k.0[3]))
}

/// The AES S-box, computed: the inverse in GF(2^8) (modulo x^8 + x^4 + x^3 + x + 1, zero to
/// zero) followed by the affine map with constant 0x63 (FIPS-197, section 5.1.1).
const SBOX: [u8; 256] = {
    let mut sbox = [0u8; 256];
    let mut x = 0;
    while x < 256 {
        // x^254 is x's inverse (and 0 for 0).
        let mut inv = 1u8;
        let mut e = 0;
        while e < 254 {
            inv = gmul(inv, x as u8);
            e += 1;
        }
        if x == 0 {
            inv = 0;
        }
        let s = inv
            ^ inv.rotate_left(1)
            ^ inv.rotate_left(2)
            ^ inv.rotate_left(3)
            ^ inv.rotate_left(4)
            ^ 0x63;
        sbox[x] = s;
        x += 1;
    }
    sbox
};

/// Multiplication in AES's GF(2^8).
const fn gmul(mut a: u8, mut b: u8) -> u8 {
    let mut p = 0u8;
    while b != 0 {
        if b & 1 != 0 {
            p ^= a;
        }
        let carry = a & 0x80 != 0;
        a <<= 1;
        if carry {
            a ^= 0x1b;
        }
        b >>= 1;
    }
    p
}

/// `SubBytes` then `MixColumns` of one byte in row 0, as a column (bytes 2s, s, s, 3s
/// little-endian); rows 1 to 3 are this rotated left by 8, 16 and 24 bits.
const T0: [u32; 256] = {
    let mut t = [0u32; 256];
    let mut x = 0;
    while x < 256 {
        let s = SBOX[x];
        t[x] = u32::from_le_bytes([gmul(s, 2), s, s, gmul(s, 3)]);
        x += 1;
    }
    t
};

/// The software round: four table lookups per column (not constant-time; the hash needs
/// exact bits, not secrecy of the key's bytes).
#[derive(Clone, Copy)]
pub(crate) struct Soft;

impl Round for Soft {
    type V = u128;

    #[inline(always)]
    fn words(self, lo: u64, hi: u64) -> u128 {
        words(lo, hi)
    }

    #[inline(always)]
    fn chunk(self, c: &[u8; 16]) -> u128 {
        u128::from_le_bytes(*c)
    }

    #[inline(always)]
    fn xor(self, a: u128, b: u128) -> u128 {
        a ^ b
    }

    #[inline(always)]
    fn round(self, s: u128, k: u128) -> u128 {
        let col = |c: usize| (s >> (32 * (c % 4))) as u32;
        let byte = |c: usize, row: usize| (col(c) >> (8 * row)) as u8 as usize;
        let mut out = 0u128;
        for c in 0..4 {
            // ShiftRows: row r of column c comes from column c + r.
            let v = T0[byte(c, 0)]
                ^ T0[byte(c + 1, 1)].rotate_left(8)
                ^ T0[byte(c + 2, 2)].rotate_left(16)
                ^ T0[byte(c + 3, 3)].rotate_left(24);
            out |= (v as u128) << (32 * c);
        }
        out ^ k
    }

    #[inline(always)]
    fn fold(self, s: u128) -> u64 {
        s as u64 ^ (s >> 64) as u64
    }
}

/// AESH-64 of `b` with the software round: the reference every machine's rounds must match.
pub(crate) fn hash_soft(keys: &AesKeys, b: &[u8]) -> u64 {
    hash(Soft, &keys.load(Soft), b)
}

/// AESH-64 of `bytes` with `seed`, on this machine's AES instructions when it has them
/// (AES-NI on x86-64, AESE/AESMC on aarch64), else with a table-driven software round: the
/// same bits on every machine. Filters do not use this hash yet: it is the byte-string hash
/// that a second hash id of the format will name.
///
/// # Definition
///
/// `R(s, k)` is one AES encryption round as x86's `AESENC` computes it on a 128-bit state `s`
/// (its 16 bytes little-endian, byte `i` at row `i % 4`, column `i / 4`): `ShiftRows`,
/// `SubBytes`, `MixColumns`, then xor the round key `k`. (aarch64's `AESMC(AESE(s, 0)) ^ k`
/// is the same round.) The hash of the `n` bytes `b` with seed `seed`:
///
/// 1. Round keys, as (low, high) 64-bit words, from the hexadecimal digits of pi after the
///    point (Blowfish's P-array) `p0 = 0x243f6a8885a308d3, p1 = 0x13198a2e03707344, p2 =
///    0xa4093822299f31d0, p3 = 0x082efa98ec4e6c89, p4 = 0x452821e638d01377, p5 =
///    0xbe5466cf34e90c6c, p6 = 0xc0ac29b7c97c50dd, p7 = 0x3f84d5b5b5470917` and the seed:
///    `k0 = (p0 ^ seed, p1 ^ seed.rotate_left(32))`, `k1 = (p2 + seed, p3)` (wrapping), `k2 =
///    (p4, p5 ^ seed.swap_bytes())`, `k3 = (p6, p7)`.
/// 2. `s = k0 ^ (n << 64)`: the length enters the state before any byte.
/// 3. Keys of at most 16 bytes are one block, read like XXH3's short inputs, so that no
///    read leaves the key and no byte is shifted: 8 to 16 bytes are the first eight and the
///    last eight (overlapping under 16), 4 to 7 bytes the first four and the last four in
///    the low word, 1 to 3 bytes `b[0]`, `b[n / 2]` and `b[n - 1]`, and no bytes zero. With
///    the length in the state, distinct keys are distinct inputs. `s = R(s ^ block, k1)`.
/// 4. Longer keys are absorbed 16 bytes at a time, `s = R(s ^ chunk, k1)`, the last chunk
///    being the key's last 16 bytes (overlapping the one before unless `n` is a multiple of
///    16).
/// 5. Two more rounds, `s = R(R(s, k2), k3)`, and the hash is the xor of the state's two
///    64-bit halves.
///
/// A key of at most 16 bytes costs three rounds; every 16 bytes more cost one. Two rounds
/// spread every input byte over the whole state (AES's wide-trail design), so a short key's
/// hash has passed two full diffusions before it is folded. Like XXH3, it is a statistical
/// hash: a secret seed makes the positions unpredictable, not the function collision-proof.
///
/// ```
/// let h = blockbloom::hash::hash_bytes_aes(b"2001:db8::1", 7);
/// assert_ne!(h, blockbloom::hash::hash_bytes_aes(b"2001:db8::2", 7));
/// assert_ne!(h, blockbloom::hash::hash_bytes_aes(b"2001:db8::1", 8));
/// ```
pub fn hash_bytes_aes(bytes: &[u8], seed: u64) -> u64 {
    #[cfg(target_arch = "x86_64")]
    if x86_64::has_aes() {
        // SAFETY: the CPU has AES-NI (checked just above).
        return unsafe { x86_64::hash_one(seed, bytes) };
    }
    #[cfg(target_arch = "aarch64")]
    if aarch64::has_aes() {
        // SAFETY: the CPU has the AES extension (checked just above).
        return unsafe { aarch64::hash_one(seed, bytes) };
    }
    hash_soft(&AesKeys::new(seed), bytes)
}

/// AESH-64 of each key with `seed` into `out` (same length): what [`hash_bytes_aes`] gives
/// each key, eight keys at a time in YMM registers where the CPU has VAES.
///
/// # Panics
///
/// If `out.len() != keys.len()`.
///
/// ```
/// let keys: [&[u8]; 3] = [b"a", b"bb", b"a longer key, over sixteen bytes"];
/// let mut out = [0u64; 3];
/// blockbloom::hash::hash_bytes_aes_batch(&keys, 7, &mut out);
/// assert_eq!(out[2], blockbloom::hash::hash_bytes_aes(keys[2], 7));
/// ```
pub fn hash_bytes_aes_batch(keys: &[&[u8]], seed: u64, out: &mut [u64]) {
    hash_source(&AesKeys::new(seed), keys, out);
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;
    use alloc::vec::Vec;

    #[test]
    fn sbox_matches_fips_197() {
        // FIPS-197, figure 7: S(0x00) = 0x63, S(0x53) = 0xed, S(0xff) = 0x16.
        assert_eq!(SBOX[0x00], 0x63);
        assert_eq!(SBOX[0x53], 0xed);
        assert_eq!(SBOX[0xff], 0x16);
        let mut seen = [false; 256];
        for &s in &SBOX {
            assert!(!seen[s as usize], "the S-box is a permutation");
            seen[s as usize] = true;
        }
    }

    #[test]
    fn software_round_matches_the_aes_128_first_round() {
        // FIPS-197, appendix B: the state after the initial AddRoundKey and the second round
        // key; round 1 output ("start of round 2") is the AESENC of the first with the second.
        let hex = |s: &str| {
            let mut b = [0u8; 16];
            for (i, byte) in b.iter_mut().enumerate() {
                *byte = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap();
            }
            u128::from_le_bytes(b)
        };
        let start = hex("193de3bea0f4e22b9ac68d2ae9f84808");
        let key1 = hex("a0fafe1788542cb123a339392a6c7605");
        let next = hex("a49c7ff2689f352b6b5bea43026a5049");
        assert_eq!(Soft.round(start, key1), next);
    }

    /// Eight keys of each length to 130 (whole groups of the VAES path), then keys of mixed
    /// lengths, then a few more (a partial group).
    fn sample_keys() -> Vec<Vec<u8>> {
        let mut state = 7u64;
        let mut byte = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 56) as u8
        };
        let mut keys = Vec::new();
        for len in 0..=130 {
            for _ in 0..8 {
                keys.push((0..len).map(|_| byte()).collect());
            }
        }
        for i in 0..69 {
            let len = (i * 37 + 5) % 41;
            keys.push((0..len).map(|_| byte()).collect());
        }
        keys
    }

    #[test]
    fn every_machine_path_gives_the_software_bits() {
        let keys = sample_keys();
        let slices: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        let mut out = vec![0u64; slices.len()];
        for seed in [0, 1, 0xdead_beef, u64::MAX] {
            let k = AesKeys::new(seed);
            let reference: Vec<u64> = slices.iter().map(|b| hash_soft(&k, b)).collect();
            for (b, &r) in slices.iter().zip(&reference) {
                assert_eq!(hash_bytes_aes(b, seed), r, "{} bytes", b.len());
            }
            hash_bytes_aes_batch(&slices, seed, &mut out);
            assert_eq!(out, reference);
            #[cfg(target_arch = "x86_64")]
            {
                if x86_64::has_aes() {
                    for (b, &r) in slices.iter().zip(&reference) {
                        // SAFETY: the CPU has AES-NI (checked).
                        assert_eq!(unsafe { x86_64::hash_one(seed, b) }, r);
                    }
                    out.fill(0);
                    // SAFETY: as above.
                    unsafe { x86_64::hash_batch(&k, slices.as_slice(), &mut out) };
                    assert_eq!(out, reference, "AES-NI");
                } else {
                    std::eprintln!("AES-NI: not on this CPU, skipped");
                }
                if x86_64::has_vaes() {
                    out.fill(0);
                    // SAFETY: the CPU has AVX2, AES-NI and VAES (checked).
                    unsafe { x86_64::hash_batch_vaes(&k, slices.as_slice(), &mut out) };
                    assert_eq!(out, reference, "VAES");
                } else {
                    std::eprintln!("VAES: not on this CPU, skipped");
                }
            }
            #[cfg(target_arch = "aarch64")]
            {
                if aarch64::has_aes() {
                    out.fill(0);
                    // SAFETY: the CPU has the AES extension (checked).
                    unsafe { aarch64::hash_batch(&k, slices.as_slice(), &mut out) };
                    assert_eq!(out, reference, "AESE");
                } else {
                    std::eprintln!("AESE: not on this CPU, skipped");
                }
            }
        }
    }

    /// Every path answers the lengths of the keys it hashed ([`length_bit`] of each): one
    /// length, lengths past 63 (all bit 63), and the mixed tail of a partial group.
    #[test]
    fn every_machine_path_answers_the_lengths_it_read() {
        let keys = sample_keys();
        let slices: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        let k = AesKeys::new(3);
        let runs = [
            &slices[8 * 32..8 * 33],
            &slices[8 * 100..8 * 100 + 11],
            &slices[8 * 131..],
        ];
        for run in runs {
            let want = run.iter().fold(0, |s, b| s | length_bit(b.len()));
            let mut out = vec![0u64; run.len()];
            assert_eq!(hash_source_soft(&k, run, &mut out), want, "software");
            assert_eq!(hash_source(&k, run, &mut out), want, "machine");
            #[cfg(target_arch = "x86_64")]
            {
                if x86_64::has_aes() {
                    // SAFETY: the CPU has AES-NI (checked).
                    assert_eq!(unsafe { x86_64::hash_batch(&k, run, &mut out) }, want);
                }
                if x86_64::has_vaes() {
                    // SAFETY: the CPU has AVX2, AES-NI and VAES (checked).
                    assert_eq!(unsafe { x86_64::hash_batch_vaes(&k, run, &mut out) }, want);
                }
            }
            #[cfg(target_arch = "aarch64")]
            if aarch64::has_aes() {
                // SAFETY: the CPU has the AES extension (checked).
                assert_eq!(unsafe { aarch64::hash_batch(&k, run, &mut out) }, want);
            }
        }
        assert_eq!(length_bit(32), 1 << 32);
        assert_eq!(length_bit(100), 1 << 63);
    }

    /// The definition's bits, pinned: a change to any step changes these.
    #[test]
    fn known_answers() {
        let long: Vec<u8> = (0..100u8).collect();
        let cases: [(&[u8], u64); 6] = [
            (b"", 0),
            (b"a", 0),
            (b"12345678", 1),
            (b"2001:db8::1", 7),
            (b"0123456789abcdef0123456789abcdef", u64::MAX),
            (&long, 42),
        ];
        let got: Vec<u64> = cases
            .iter()
            .map(|&(b, seed)| hash_soft(&AesKeys::new(seed), b))
            .collect();
        assert_eq!(
            got,
            [
                0x56f3_ce26_d1ff_efd8,
                0xd1e2_23d6_fa8d_45e0,
                0xba97_1583_9f8c_d03a,
                0x6d79_e730_ecb3_6484,
                0x782a_268d_3326_167c,
                0x2207_fe6d_2f18_e5b9,
            ],
            "{got:#x?}"
        );
    }

    #[test]
    fn short_blocks_are_distinct_for_distinct_keys_of_one_length() {
        for n in 0..=16usize {
            let mut seen = std::collections::HashSet::new();
            for v in 0..4096u32 {
                let mut b = [0u8; 16];
                for (i, x) in b.iter_mut().enumerate().take(n) {
                    *x = (v.wrapping_mul(2654435761).rotate_left(i as u32 * 5) >> 3) as u8;
                }
                seen.insert((b[..n].to_vec(), short_block(&b[..n])));
            }
            let blocks: std::collections::HashSet<_> = seen.iter().map(|(_, blk)| *blk).collect();
            let keys: std::collections::HashSet<_> = seen.iter().map(|(k, _)| k.clone()).collect();
            assert_eq!(blocks.len(), keys.len(), "length {n}");
        }
    }
}
