//! The baseline tier: the same algorithm over `wide` lanes. `wide` picks its instructions at
//! compile time (SSE2 on any x86-64, NEON on aarch64), so this tier is always available.

use wide::u64x4;

use super::{Keys, Lanes, Shape, Sink};
use crate::hash::PRIME_MX2;
use crate::layout::{Block, Row};

#[derive(Clone, Copy)]
pub(super) struct Portable;

#[inline(always)]
fn rotl(x: u64x4, r: u32) -> u64x4 {
    x.unbounded_shl_scalar(r) | x.unbounded_shr_scalar(64 - r)
}

/// XXH3's `rrmxmx` on four lanes.
#[inline(always)]
fn rrmxmx(mut h: u64x4, len: u64) -> u64x4 {
    let mx2 = u64x4::splat(PRIME_MX2);
    h ^= rotl(h, 49) ^ rotl(h, 24);
    h *= mx2;
    h ^= h.unbounded_shr_scalar(35) + u64x4::splat(len);
    h *= mx2;
    h ^ h.unbounded_shr_scalar(28)
}

#[inline(always)]
fn load4(words: &[u64]) -> u64x4 {
    u64x4::new([words[0], words[1], words[2], words[3]])
}

/// The pattern half (words `4*half..4*half+4`) of `lo` for one round.
#[inline(always)]
fn round_half<const WORDS: bool>(lo: u64x4, row: &Row, half: usize) -> u64x4 {
    let idx = (lo * load4(&row.salt[4 * half..])).unbounded_shr_scalar(25);
    let count = if WORDS {
        idx & u64x4::splat(63)
    } else {
        (idx & u64x4::splat(127)) ^ load4(&row.xor[4 * half..])
    };
    u64x4::splat(1).unbounded_shl(count)
}

#[inline(always)]
fn pattern<const WORDS: bool>(lo: u32, rows: &[Row]) -> [u64x4; 2] {
    let lo = u64x4::splat(lo as u64);
    let mut p = [u64x4::ZERO; 2];
    for row in rows {
        p[0] |= round_half::<WORDS>(lo, row, 0);
        p[1] |= round_half::<WORDS>(lo, row, 1);
    }
    p
}

impl Lanes for Portable {
    #[inline(always)]
    fn hash_u64(self, flip: u64, keys: &[u64], out: &mut [u64]) {
        let f = u64x4::splat(flip);
        let mut kc = keys.chunks_exact(4);
        let mut oc = out.chunks_exact_mut(4);
        for (k, o) in (&mut kc).zip(&mut oc) {
            let x = load4(k);
            o.copy_from_slice(&rrmxmx(rotl(x, 32) ^ f, 8).to_array());
        }
        for (o, &k) in oc.into_remainder().iter_mut().zip(kc.remainder()) {
            *o = crate::hash::u64_with_flip(k, flip);
        }
    }

    #[inline(always)]
    fn hash_u32(self, flip: u64, keys: &[u32], out: &mut [u64]) {
        let f = u64x4::splat(flip);
        let mut kc = keys.chunks_exact(4);
        let mut oc = out.chunks_exact_mut(4);
        for (k, o) in (&mut kc).zip(&mut oc) {
            let x = u64x4::new([k[0] as u64, k[1] as u64, k[2] as u64, k[3] as u64]);
            o.copy_from_slice(&rrmxmx((x | x.unbounded_shl_scalar(32)) ^ f, 4).to_array());
        }
        for (o, &k) in oc.into_remainder().iter_mut().zip(kc.remainder()) {
            *o = crate::hash::u32_with_flip(k, flip);
        }
    }

    #[inline(always)]
    fn insert<const WORDS: bool>(self, block: &mut Block, lo: u32, rows: &[Row]) {
        let p = pattern::<WORDS>(lo, rows);
        let lo_half = load4(&block.0[..4]) | p[0];
        let hi_half = load4(&block.0[4..]) | p[1];
        block.0[..4].copy_from_slice(&lo_half.to_array());
        block.0[4..].copy_from_slice(&hi_half.to_array());
    }

    #[inline(always)]
    fn pattern<const WORDS: bool>(self, lo: u32, rows: &[Row]) -> Block {
        let p = pattern::<WORDS>(lo, rows);
        let mut b = Block::ZERO;
        b.0[..4].copy_from_slice(&p[0].to_array());
        b.0[4..].copy_from_slice(&p[1].to_array());
        b
    }

    #[inline(always)]
    fn contains<const WORDS: bool>(self, block: &Block, lo: u32, rows: &[Row]) -> bool {
        let p = pattern::<WORDS>(lo, rows);
        let missing = (p[0] & !load4(&block.0[..4])) | (p[1] & !load4(&block.0[4..]));
        missing == u64x4::ZERO
    }
}

super::entry_points!(token: Portable);

pub(super) fn hash_u64(flip: u64, keys: &[u64], out: &mut [u64]) {
    Portable.hash_u64(flip, keys, out)
}

pub(super) fn hash_u32(flip: u64, keys: &[u32], out: &mut [u64]) {
    Portable.hash_u32(flip, keys, out)
}
