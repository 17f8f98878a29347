//! The keys and answers of issue 12: byte strings, Arrow-style columns and 16-byte keys in
//! batches hash exactly as their single-key forms on every tier; check-and-insert answers as
//! sequential inserts would (and under concurrent writers, at least one thread sees a new key
//! as new); bitmaps and selection vectors say what `contains_batch` says.

mod common;

use blockbloom::{
    BloomFilter, ByteColumn, CountingBloomFilter, DeletableBloomFilter, Error, Isa,
    ScalableBloomFilter,
};
use common::{SplitMix64, keys, tiers};

/// Byte strings of lengths 0..=120 (every XXH3 length path), deterministic.
fn strings(seed: u64, n: usize) -> Vec<Vec<u8>> {
    let mut r = SplitMix64::new(seed);
    (0..n)
        .map(|i| {
            let len = if i % 7 == 0 {
                (r.next_u64() % 121) as usize
            } else {
                (r.next_u64() % 24) as usize
            };
            (0..len).map(|_| r.next_u64() as u8).collect()
        })
        .collect()
}

/// A filter on `isa` that holds about `n` keys; `big` makes it larger than the caches, so
/// batches take the prefetching path.
fn filter(isa: Isa, n: u64, big: bool) -> BloomFilter {
    let b = BloomFilter::builder().capacity(n).isa(isa).seed(7);
    let b = if big {
        b.size_in_bytes(8 << 20)
    } else {
        b.fpr(0.01)
    };
    b.build().unwrap()
}

/// Arrow's offsets for `values`, starting at `first` (as a sliced array's do).
fn column_parts<O: TryFrom<usize>>(values: &[Vec<u8>], first: usize) -> (Vec<O>, Vec<u8>)
where
    O::Error: std::fmt::Debug,
{
    let mut bytes = vec![0xAA; first];
    let mut offsets = vec![O::try_from(first).unwrap()];
    for v in values {
        bytes.extend_from_slice(v);
        offsets.push(O::try_from(bytes.len()).unwrap());
    }
    (offsets, bytes)
}

#[test]
fn byte_string_batches_hash_as_insert_bytes_on_every_tier() {
    let owned = strings(1, 3000);
    let slices: Vec<&[u8]> = owned.iter().map(Vec::as_slice).collect();
    let text: Vec<String> = (0..3000)
        .map(|i| format!("user-{i:x}-{}", i * 31))
        .collect();
    let strs: Vec<&str> = text.iter().map(String::as_str).collect();
    let (o32, v32) = column_parts::<i32>(&owned, 5);
    let (o64, v64) = column_parts::<i64>(&owned, 0);
    let col32 = ByteColumn::new(&o32, &v32).unwrap();
    let col64 = ByteColumn::new(&o64, &v64).unwrap();
    assert_eq!(col32.len(), owned.len());
    for big in [false, true] {
        let mut reference = filter(Isa::Scalar, 6000, big);
        for s in &slices {
            reference.insert_bytes(s);
        }
        for s in &strs {
            reference.insert_bytes(s.as_bytes());
        }
        for isa in tiers() {
            let mut f = filter(isa, 6000, big);
            f.insert_batch(&slices);
            f.insert_batch(&strs);
            assert_eq!(f, reference, "{isa}: slices and strs");
            let mut g = filter(isa, 6000, big);
            g.insert_column(&col32);
            g.insert_batch(&strs);
            assert_eq!(g, reference, "{isa}: i32 column");
            let a = filter(isa, 6000, big).into_atomic();
            a.insert_column(&col64);
            a.insert_batch(&strs);
            assert_eq!(a.into_filter(), reference, "{isa}: atomic, i64 column");

            // Queries: members and non-members answer as the single-key form.
            let probe = strings(2, 2000);
            let probe: Vec<&[u8]> = probe.iter().chain(&owned).map(Vec::as_slice).collect();
            let mut out = vec![false; probe.len()];
            f.contains_batch(&probe, &mut out);
            for (k, &got) in probe.iter().zip(&out) {
                assert_eq!(got, reference.contains_bytes(k), "{isa}: {k:?}");
            }
            assert_eq!(
                f.count_batch(&probe),
                out.iter().filter(|&&b| b).count(),
                "{isa}: count"
            );
            let mut col_out = vec![false; col32.len()];
            f.contains_column(&col32, &mut col_out);
            assert!(col_out.iter().all(|&b| b), "{isa}: a member is missing");
        }
    }
}

#[test]
fn sixteen_byte_keys_hash_as_their_little_endian_bytes() {
    let mut r = SplitMix64::new(3);
    let wide: Vec<u128> = (0..5000)
        .map(|_| (r.next_u64() as u128) << 64 | r.next_u64() as u128)
        .collect();
    let bytes: Vec<[u8; 16]> = wide.iter().map(|k| k.to_le_bytes()).collect();
    for big in [false, true] {
        let mut reference = filter(Isa::Scalar, 5000, big);
        for k in &wide {
            reference.insert_bytes(&k.to_le_bytes());
        }
        let mut via_hash = filter(Isa::Scalar, 5000, big);
        for k in &wide {
            via_hash.insert(k); // `Hash` for u128 writes the same 16 bytes
        }
        assert_eq!(via_hash, reference);
        for isa in tiers() {
            let mut f = filter(isa, 5000, big);
            f.insert_batch(&wide);
            assert_eq!(f, reference, "{isa}: u128");
            let mut g = filter(isa, 5000, big);
            g.insert_batch(&bytes);
            assert_eq!(g, reference, "{isa}: [u8; 16]");
            let probe: Vec<u128> = wide.iter().map(|k| k ^ 1).chain(wide.clone()).collect();
            let mut out = vec![false; probe.len()];
            f.contains_batch(&probe, &mut out);
            for (k, &got) in probe.iter().zip(&out) {
                assert_eq!(got, reference.contains_bytes(&k.to_le_bytes()), "{isa}");
            }
        }
    }
}

#[test]
fn the_family_kinds_take_byte_string_batches() {
    let text: Vec<String> = (0..500).map(|i| format!("row-{i}")).collect();
    let strs: Vec<&str> = text.iter().map(String::as_str).collect();

    let mut c = CountingBloomFilter::with_capacity(1000, 0.01).unwrap();
    c.insert_batch(&strs);
    let mut d = DeletableBloomFilter::with_capacity(1000, 0.01).unwrap();
    d.insert_batch(&strs);
    let mut s = ScalableBloomFilter::new(100, 0.01).unwrap();
    s.insert_batch(&strs).unwrap();
    for k in &strs {
        assert!(c.contains_bytes(k.as_bytes()), "counting: {k}");
        assert!(d.contains_bytes(k.as_bytes()), "deletable: {k}");
        assert!(s.contains_bytes(k.as_bytes()), "scalable: {k}");
    }
    let mut out = vec![false; strs.len()];
    c.contains_batch(&strs, &mut out);
    assert!(out.iter().all(|&b| b));
    assert_eq!(c.remove_batch(&strs), Ok(strs.len()));
}

#[test]
fn byte_columns_are_validated_once() {
    let values = b"abcdef";
    assert!(ByteColumn::new::<i32>(&[], values).unwrap().is_empty());
    assert_eq!(ByteColumn::new(&[6i32], values).unwrap().len(), 0);
    assert_eq!(ByteColumn::new(&[2i64, 4, 6], values).unwrap().len(), 2);
    let bad = |offsets: &[i32]| ByteColumn::new(offsets, values).unwrap_err();
    assert_eq!(
        bad(&[0, 3, 2]),
        Error::InvalidOffsets {
            index: 2,
            reason: "smaller than the offset before it"
        }
    );
    assert!(matches!(
        bad(&[-1, 2]),
        Error::InvalidOffsets { index: 0, .. }
    ));
    assert!(matches!(
        bad(&[0, 7]),
        Error::InvalidOffsets { index: 1, .. }
    ));
    assert!(bad(&[0, 7]).to_string().contains("past the end"));
    assert!(matches!(
        ByteColumn::new(&[0i64, i64::MAX], values),
        Err(Error::InvalidOffsets { index: 1, .. })
    ));
}

#[test]
fn check_and_insert_answers_as_sequential_inserts() {
    // Repeats inside a batch, and keys already present.
    let base = keys(4, 4000);
    let mut batch: Vec<u64> = base
        .iter()
        .copied()
        .chain(base[..1000].iter().copied())
        .collect();
    batch.rotate_left(500);
    for big in [false, true] {
        for isa in tiers() {
            let mut f = filter(isa, 4000, big);
            f.insert_batch(&base[3000..]);
            let mut seq = f.clone();
            let expected: Vec<bool> = batch.iter().map(|k| seq.insert_new(k)).collect();
            let mut out = vec![false; batch.len()];
            let n = f.insert_batch_new(&batch, &mut out);
            assert_eq!(out, expected, "{isa}");
            assert_eq!(n, expected.iter().filter(|&&b| b).count());
            assert_eq!(f, seq, "{isa}: same bits");
            // Every key of base[..3000] was absent and appears once before its repeat.
            assert!(n >= 2900, "{isa}: only {n} new");

            let a = filter(isa, 4000, big).into_atomic();
            a.insert_batch(&base[3000..]);
            let mut out_a = vec![false; batch.len()];
            assert_eq!(a.insert_batch_new(&batch, &mut out_a), n, "{isa}: atomic");
            assert_eq!(out_a, expected, "{isa}: atomic");
            let single = filter(isa, 4000, big).into_atomic();
            single.insert_batch(&base[3000..]);
            let answers: Vec<bool> = batch.iter().map(|k| single.insert_new(k)).collect();
            assert_eq!(answers, expected, "{isa}: atomic single");
        }
    }
    let mut f = BloomFilter::with_capacity(10, 0.01).unwrap();
    let mut out = [false; 2];
    assert_eq!(f.insert_batch_new(&["x", "x"], &mut out), 1);
    assert_eq!(out, [true, false]);
}

#[test]
fn concurrent_check_and_insert_reports_every_new_key_at_least_once() {
    // A filter so sparse that a key is a false positive before its insert with probability
    // about 1e-9: then every key is new, and some thread must say so.
    const THREADS: usize = 8;
    let ks = keys(5, 40_000);
    for isa in tiers() {
        let f = BloomFilter::builder()
            .capacity(40_000)
            .fpr(1e-9)
            .isa(isa)
            .build_atomic()
            .unwrap();
        let answers: Vec<Vec<bool>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..THREADS)
                .map(|t| {
                    let (f, ks) = (&f, &ks);
                    s.spawn(move || {
                        let mut out = vec![false; ks.len()];
                        if t % 2 == 0 {
                            f.insert_batch_new(ks, &mut out);
                        } else {
                            for (o, k) in out.iter_mut().zip(ks) {
                                *o = f.insert_new(k);
                            }
                        }
                        out
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let mut unseen = 0;
        for i in 0..ks.len() {
            if !answers.iter().any(|a| a[i]) {
                unseen += 1;
            }
        }
        assert_eq!(unseen, 0, "{isa}: keys no thread saw as new");
        assert!(ks.iter().all(|k| f.contains(k)), "{isa}: a key was lost");
    }
}

#[test]
fn bitmaps_and_selections_say_what_contains_batch_says() {
    let members = keys(6, 3000);
    let probe: Vec<u64> = keys(7, 2000).into_iter().chain(members.clone()).collect();
    for big in [false, true] {
        for isa in tiers() {
            let mut f = filter(isa, 3000, big);
            f.insert_batch(&members);
            let a = f.clone().into_atomic();
            for n in [0, 1, 15, 16, 17, 63, 64, 65, 130, 1000, probe.len()] {
                for offset in [0, 3] {
                    let keys = &probe[offset.min(n)..n];
                    let mut each = vec![false; keys.len()];
                    f.contains_batch(keys, &mut each);
                    let mut bits = vec![u64::MAX; keys.len().div_ceil(64)];
                    f.contains_bitmap(keys, &mut bits);
                    for (i, &e) in each.iter().enumerate() {
                        assert_eq!(bits[i / 64] >> (i % 64) & 1 == 1, e, "{isa} n={n} i={i}");
                    }
                    if !keys.len().is_multiple_of(64) {
                        assert_eq!(bits.last().unwrap() >> (keys.len() % 64), 0, "padding");
                    }
                    let mut atomic_bits = vec![0; bits.len()];
                    a.contains_bitmap(keys, &mut atomic_bits);
                    assert_eq!(atomic_bits, bits, "{isa}: atomic bitmap");

                    let mut rows = vec![u32::MAX]; // appended after what is there
                    let added = f.select(keys, &mut rows);
                    let expected: Vec<u32> = std::iter::once(u32::MAX)
                        .chain((0..keys.len() as u32).filter(|&i| each[i as usize]))
                        .collect();
                    assert_eq!(rows, expected, "{isa} n={n}");
                    assert_eq!(added, expected.len() - 1);
                }
            }
        }
    }
    // Strings and columns through the same answers.
    let text: Vec<String> = (0..300).map(|i| format!("k{i}")).collect();
    let strs: Vec<&str> = text.iter().map(String::as_str).collect();
    let mut f = BloomFilter::with_capacity(1000, 0.001).unwrap();
    f.insert_batch(&strs[..100]);
    let mut rows = Vec::new();
    f.select(&strs, &mut rows);
    assert!((0..100).all(|i| rows.contains(&i)));
    let mut bytes = Vec::new();
    let mut offsets = vec![0i32];
    for s in &strs {
        bytes.extend_from_slice(s.as_bytes());
        offsets.push(bytes.len() as i32);
    }
    let col = ByteColumn::new(&offsets, &bytes).unwrap();
    let mut col_rows = Vec::new();
    f.select(&col, &mut col_rows);
    assert_eq!(col_rows, rows);
}

#[test]
#[should_panic(expected = "bitmap length")]
fn a_bitmap_of_the_wrong_length_panics() {
    let f = BloomFilter::with_capacity(100, 0.01).unwrap();
    f.contains_bitmap(&[1u64; 65], &mut [0u64; 1]);
}
