//! The prefetch depth changes speed only: on every tier, at every depth (none, odd, the
//! defaults and the deepest), batches set the same bits and give the same answers as the
//! scalar reference, for the plain, atomic and counting filters and chunk lengths that do
//! and do not divide the batch; byte strings, which a batch hashes a run of keys at a time,
//! in batches that end before, on and after a run.

mod common;

use blockbloom::{BloomFilter, CountingBloomFilter, Error, Isa, MAX_PREFETCH_DEPTH};
use common::tiers;

/// 8 MiB at 1%: above the in-cache size, so filters prefetch by default.
const N: u64 = 6_000_000;

fn keys(n: usize, stream: u64) -> Vec<u64> {
    (0..n as u64)
        .map(|i| (i ^ (stream << 48)).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ stream)
        .collect()
}

fn plain(isa: Isa) -> BloomFilter {
    BloomFilter::builder()
        .capacity(N)
        .fpr(0.01)
        .isa(isa)
        .build()
        .unwrap()
}

#[test]
fn every_depth_sets_the_same_bits_and_answers_the_same() {
    // 100_003 keys: no depth divides it, so every run ends on a short chunk.
    let members = keys(100_003, 1);
    let queries: Vec<u64> = members
        .iter()
        .step_by(2)
        .copied()
        .chain(keys(50_001, 2))
        .collect();
    let mut reference = plain(Isa::Scalar);
    reference.insert_batch(&members);
    let mut want = vec![false; queries.len()];
    reference.contains_batch(&queries, &mut want);
    for isa in tiers() {
        for depth in [0, 1, 7, 16, 32, 64, 100, MAX_PREFETCH_DEPTH] {
            let mut f = plain(isa);
            f.set_prefetch_depth(depth).unwrap();
            assert_eq!(f.prefetch_depth(), depth);
            f.insert_batch(&members);
            assert_eq!(f, reference, "{isa}, depth {depth}: bits differ");
            let mut got = vec![false; queries.len()];
            f.contains_batch(&queries, &mut got);
            assert_eq!(got, want, "{isa}, depth {depth}: answers differ");
            // Bitmaps and selections, whose chunks may hold more than 64 keys.
            let mut bits = vec![0u64; queries.len().div_ceil(64)];
            f.contains_bitmap(&queries, &mut bits);
            let from_bits: Vec<bool> = (0..queries.len())
                .map(|i| bits[i / 64] >> (i % 64) & 1 == 1)
                .collect();
            assert_eq!(from_bits, want, "{isa}, depth {depth}: bitmap differs");
            let mut selected = Vec::new();
            f.select(&queries, &mut selected);
            let want_selected: Vec<u32> = (0..queries.len() as u32)
                .filter(|&i| want[i as usize])
                .collect();
            assert_eq!(
                selected, want_selected,
                "{isa}, depth {depth}: selection differs"
            );

            let mut a = plain(isa).into_atomic();
            a.set_prefetch_depth(depth).unwrap();
            a.insert_batch(&members);
            assert_eq!(a.count_batch(&queries), want.iter().filter(|&&w| w).count());
            assert_eq!(
                a.into_filter(),
                reference,
                "{isa}, depth {depth}: atomic bits"
            );
        }
    }
}

/// Byte strings: of mixed lengths (8, 16, 31 and 100 bytes, and the rest) or all of one.
fn strings(n: usize, stream: u64, len: Option<usize>) -> Vec<Vec<u8>> {
    keys(n, stream)
        .into_iter()
        .map(|k| {
            let len = len.unwrap_or([8, 16, 31, 100, (k % 40) as usize][(k >> 60) as usize % 5]);
            (0..len)
                .map(|i| (k >> (i % 8 * 8)) as u8 ^ i as u8)
                .collect()
        })
        .collect()
}

#[test]
fn byte_string_batches_are_the_same_at_every_depth_and_length() {
    for len in [None, Some(16), Some(32)] {
        let members = strings(4_099, 5, len);
        let members: Vec<&[u8]> = members.iter().map(Vec::as_slice).collect();
        let others = strings(2_000, 6, len);
        let queries: Vec<&[u8]> = members
            .iter()
            .step_by(2)
            .copied()
            .chain(others.iter().map(Vec::as_slice))
            .collect();
        let mut reference = plain(Isa::Scalar);
        for m in &members {
            reference.insert_bytes(m);
        }
        let want: Vec<bool> = queries
            .iter()
            .map(|q| reference.contains_bytes(q))
            .collect();
        for isa in tiers() {
            for depth in [0, 7, 32, 48, MAX_PREFETCH_DEPTH] {
                // Calls that end inside the first chunk, a run, and past runs.
                for call in [33, 511, 512, 513, 1_500, 4_099] {
                    let mut f = plain(isa);
                    f.set_prefetch_depth(depth).unwrap();
                    for c in members.chunks(call) {
                        f.insert_batch(c);
                    }
                    let at = format!("{isa}, depth {depth}, calls of {call}, length {len:?}");
                    assert_eq!(f, reference, "{at}: bits differ");
                    let (mut got, mut bits, mut selected) = (Vec::new(), Vec::new(), Vec::new());
                    for c in queries.chunks(call) {
                        let mut out = vec![false; c.len()];
                        f.contains_batch(c, &mut out);
                        got.extend(out);
                        let mut b = vec![0u64; c.len().div_ceil(64)];
                        f.contains_bitmap(c, &mut b);
                        bits.extend((0..c.len()).map(|i| b[i / 64] >> (i % 64) & 1 == 1));
                        let mut s = Vec::new();
                        f.select(c, &mut s);
                        let mut is = vec![false; c.len()];
                        s.iter().for_each(|&i| is[i as usize] = true);
                        selected.extend(is);
                    }
                    assert_eq!(got, want, "{at}: answers differ");
                    assert_eq!(bits, want, "{at}: bitmap differs");
                    assert_eq!(selected, want, "{at}: selection differs");
                }
            }
        }
    }
}

#[test]
fn counting_filters_count_the_same_at_every_depth() {
    let members = keys(60_001, 3);
    let mut reference = CountingBloomFilter::builder()
        .capacity(N / 4)
        .isa(Isa::Scalar)
        .build()
        .unwrap();
    reference.insert_batch(&members);
    for isa in tiers() {
        for depth in [0, 5, 32, MAX_PREFETCH_DEPTH] {
            let mut c = CountingBloomFilter::builder()
                .capacity(N / 4)
                .isa(isa)
                .build()
                .unwrap();
            c.set_prefetch_depth(depth).unwrap();
            c.insert_batch(&members);
            assert_eq!(c, reference, "{isa}, depth {depth}");
            assert_eq!(c.remove_batch(&members).unwrap(), members.len());
            assert_eq!(c.total_count(), 0);
        }
    }
}

#[test]
fn defaults_follow_the_size_and_bad_depths_change_nothing() {
    for isa in tiers() {
        let small = BloomFilter::builder()
            .capacity(10_000)
            .isa(isa)
            .build()
            .unwrap();
        assert_eq!(small.prefetch_depth(), 0, "{isa}: in cache, no prefetch");
        let mut large = plain(isa);
        let d = large.prefetch_depth();
        assert!((1..=MAX_PREFETCH_DEPTH).contains(&d), "{isa}: {d}");
        let err = large
            .set_prefetch_depth(MAX_PREFETCH_DEPTH + 1)
            .unwrap_err();
        assert!(
            matches!(err, Error::InvalidParameter { name: "depth", .. }),
            "{err:?}"
        );
        assert_eq!(
            large.prefetch_depth(),
            d,
            "a refused depth changed the filter"
        );
    }
}
