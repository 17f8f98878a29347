//! Every kernel against the scalar reference, and the hash against `xxhash-rust`.

mod common;

use blockbloom::{BloomFilter, ByHash, Isa, KeyHash, hash, layout::Layout};
use quickcheck::{QuickCheck, TestResult};
use xxhash_rust::xxh3::xxh3_64_with_seed;

/// The `BLOCKBLOOM_EXPECT_ALL_TIERS` guard names exactly the tiers this architecture has and
/// the CPU lacks.
#[test]
fn tier_guard_names_the_missing_tiers_of_this_arch() {
    let baseline = common::missing_tiers(&[Isa::Scalar, Isa::Portable]);
    if cfg!(target_arch = "x86_64") {
        assert_eq!(baseline, ["avx2", "avx512"]);
    } else {
        assert!(!baseline.contains(&"avx2") && !baseline.contains(&"avx512"));
    }
    assert!(common::missing_tiers(&Isa::ALL).is_empty());
}

/// With `BLOCKBLOOM_EXPECT_DISPATCH` set (CI names the best tier this CPU's flags show), the
/// dispatcher picked that tier: CI forces only the other tiers, so a dispatcher that fell back
/// to a lower one would leave the best untested.
#[test]
fn dispatcher_picks_the_expected_tier() {
    let Some(expected) = std::env::var_os("BLOCKBLOOM_EXPECT_DISPATCH") else {
        return;
    };
    let expected = expected.to_str().expect("a tier name");
    if std::env::var_os("BLOCKBLOOM_ISA").is_some() {
        return; // a forced run: the dispatcher does not choose
    }
    assert_eq!(Isa::active().map(Isa::name), Ok(expected));
    assert_eq!(Isa::detect().name(), expected);
}

#[derive(Clone, Copy, Debug)]
struct Params {
    capacity: u64,
    bits: f64,
    layout: Layout,
    probes: u32,
    seed: u64,
}

fn filter(isa: Isa, p: Params) -> BloomFilter {
    filter_with(isa, p, KeyHash::default())
}

fn filter_with(isa: Isa, p: Params, hash: KeyHash) -> BloomFilter {
    let Params {
        capacity,
        bits,
        layout,
        probes,
        seed,
    } = p;
    BloomFilter::builder()
        .capacity(capacity)
        .bits_per_key(bits)
        .layout(layout)
        .probes(probes)
        .seed(seed)
        .key_hash(hash)
        .isa(isa)
        .build()
        .unwrap()
}

#[test]
fn hash_u64_equals_xxh3_reference() {
    let mut x = 0u64;
    for seed in [0u64, 1, 42, u64::MAX, 0xdead_beef_cafe_f00d] {
        for _ in 0..2000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            assert_eq!(
                hash::hash_u64(x, seed),
                xxh3_64_with_seed(&x.to_le_bytes(), seed)
            );
            let y = (x >> 17) as u32;
            assert_eq!(
                hash::hash_u32(y, seed),
                xxh3_64_with_seed(&y.to_le_bytes(), seed)
            );
            assert_eq!(hash::hash_key(&x, seed), hash::hash_u64(x, seed));
            // A `u32` key is its 64-bit value; `hash_u32` is the hash of its 4 bytes.
            assert_eq!(hash::hash_key(&y, seed), hash::hash_u64(y as u64, seed));
            assert_eq!(
                hash::hash_key(&y.to_le_bytes(), seed),
                hash::hash_u32(y, seed)
            );
        }
    }
}

#[test]
fn by_hash_is_xxh3_of_the_hash_stream() {
    let seed = 99;
    assert_eq!(
        hash::hash_key(&ByHash("abc"), seed),
        xxh3_64_with_seed(b"abc\xff", seed)
    );
    let mut bytes = 3u64.to_le_bytes().to_vec();
    bytes.extend_from_slice(b"xyz");
    assert_eq!(
        hash::hash_key(&ByHash(&b"xyz"[..]), seed),
        xxh3_64_with_seed(&bytes, seed)
    );
    // Longer than the inline buffer: the streaming path must agree with one-shot XXH3.
    let long = "k".repeat(1000);
    let mut want = long.as_bytes().to_vec();
    want.push(0xff);
    assert_eq!(
        hash::hash_key(&ByHash(long.as_str()), seed),
        xxh3_64_with_seed(&want, seed)
    );
    assert_eq!(hash::hash_key(&ByHash((1u16, -1i64)), seed), {
        let mut b = 1u16.to_le_bytes().to_vec();
        b.extend_from_slice(&(-1i64).to_le_bytes());
        xxh3_64_with_seed(&b, seed)
    });
}

#[test]
fn batch_hash_equals_scalar_on_every_tier_and_length() {
    let keys: Vec<u64> = (0..67u64)
        .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
        .collect();
    let keys32: Vec<u32> = keys.iter().map(|&k| (k >> 7) as u32).collect();
    for seed in [0, 5, u64::MAX] {
        for len in 0..keys.len() {
            let mut out = vec![0; len];
            hash::hash_u64_batch(&keys[..len], seed, &mut out);
            let want: Vec<u64> = keys[..len]
                .iter()
                .map(|&k| hash::hash_u64(k, seed))
                .collect();
            assert_eq!(out, want);
            hash::hash_key_batch(&keys32[..len], seed, &mut out);
            let want: Vec<u64> = keys32[..len]
                .iter()
                .map(|&k| hash::hash_u64(k as u64, seed))
                .collect();
            assert_eq!(out, want);
            let signed: Vec<i16> = keys32[..len].iter().map(|&k| k as i16).collect();
            hash::hash_key_batch(&signed, seed, &mut out);
            let want: Vec<u64> = signed
                .iter()
                .map(|&k| hash::hash_u64(k as i64 as u64, seed))
                .collect();
            assert_eq!(out, want);
        }
    }
}

/// Builds the same filter on every tier from `keys`, checks bits and answers agree with the
/// scalar tier, and that nothing inserted is missing.
fn check_all_tiers(keys: &[u64], probes_of: &[u64], p: Params) {
    let mut reference = filter(Isa::Scalar, p);
    reference.insert_batch(keys);
    let mut want = vec![false; probes_of.len()];
    reference.contains_batch(probes_of, &mut want);
    let want_count = reference.count_batch(probes_of);
    // Single-key calls are the scalar reference too.
    let mut single = filter(Isa::Scalar, p);
    for key in keys {
        single.insert(key);
    }
    assert_eq!(single, reference);
    for &isa in &common::tiers() {
        let mut f = filter(isa, p);
        f.insert_batch(keys);
        assert_eq!(
            f.blocks(),
            reference.blocks(),
            "{isa}: bits differ from scalar"
        );
        let mut got = vec![false; probes_of.len()];
        f.contains_batch(probes_of, &mut got);
        assert_eq!(got, want, "{isa}: answers differ from scalar");
        assert_eq!(f.count_batch(probes_of), want_count, "{isa}: count differs");
        let mut all = vec![false; keys.len()];
        f.contains_batch(keys, &mut all);
        assert!(all.iter().all(|&x| x), "{isa}: false negative");
        // Pre-hashed batches agree with key batches.
        let hashes: Vec<u64> = keys.iter().map(|k| f.hash(k)).collect();
        let mut g = filter(isa, p);
        g.insert_hash_batch(&hashes);
        assert_eq!(g, f, "{isa}: hash batch differs");
        let qh: Vec<u64> = probes_of.iter().map(|k| f.hash(k)).collect();
        let mut got = vec![false; qh.len()];
        g.contains_hash_batch(&qh, &mut got);
        assert_eq!(got, want, "{isa}: hash batch answers differ");
        assert_eq!(g.count_hash_batch(&qh), want_count);
        // Single-key answers agree with batch answers.
        for (key, w) in probes_of.iter().zip(&want) {
            assert_eq!(f.contains(key), *w);
        }
        check_single_key(isa, keys, probes_of, p, &reference, &want);
    }
}

/// The single-key path of `isa` (its own probe, chosen when the filter is made): inserts,
/// check-and-inserts and queries on the plain and the atomic filter give the scalar
/// reference's bits and answers.
fn check_single_key(
    isa: Isa,
    keys: &[u64],
    probes_of: &[u64],
    p: Params,
    reference: &BloomFilter,
    want: &[bool],
) {
    let mut one = filter(isa, p);
    keys.iter().for_each(|k| one.insert(k));
    assert_eq!(
        one.blocks(),
        reference.blocks(),
        "{isa}: single-key insert bits"
    );
    let atomic = filter(isa, p).into_atomic();
    keys.iter().for_each(|k| atomic.insert(k));
    assert_eq!(
        atomic.snapshot(),
        *reference,
        "{isa}: atomic single-key insert bits"
    );
    for (key, w) in probes_of.iter().zip(want) {
        assert_eq!(atomic.contains(key), *w, "{isa}: atomic single-key answer");
    }
    // Check-and-insert: every answer and the bits after, against the scalar tier.
    let mut scalar_new = filter(Isa::Scalar, p);
    let mut tier_new = filter(isa, p);
    let atomic_new = filter(isa, p).into_atomic();
    for k in keys.iter().chain(probes_of) {
        let w = scalar_new.insert_new(k);
        assert_eq!(tier_new.insert_new(k), w, "{isa}: insert_new({k})");
        assert_eq!(atomic_new.insert_new(k), w, "{isa}: atomic insert_new({k})");
    }
    assert_eq!(tier_new, scalar_new, "{isa}: insert_new bits");
    assert_eq!(
        atomic_new.snapshot(),
        scalar_new,
        "{isa}: atomic insert_new bits"
    );
}

#[test]
fn every_tier_equals_scalar_fixed_cases() {
    let keys: Vec<u64> = (0..5000u64).map(|i| i * 7919).collect();
    let probes: Vec<u64> = (0..20_000u64).collect();
    let p = |capacity, bits, layout, probes, seed| Params {
        capacity,
        bits,
        layout,
        probes,
        seed,
    };
    for layout in Layout::ALL {
        for k in layout.probe_counts() {
            check_all_tiers(&keys, &probes, p(5000, 6.0, layout, k, 11));
        }
        // One block, and a non-power-of-two block count.
        check_all_tiers(
            &keys[..40],
            &probes[..500],
            p(1, 512.0 / 40.0, layout, 8, 1),
        );
        check_all_tiers(&keys, &probes, p(3001, 10.0, layout, 16, 2));
    }
}

#[test]
fn every_tier_equals_scalar_u32_keys() {
    let keys: Vec<u32> = (0..3000u32).map(|i| i.wrapping_mul(2654435761)).collect();
    let probes: Vec<u32> = (0..10_000u32).collect();
    let u32_params = Params {
        capacity: 3000,
        bits: 9.0,
        layout: Layout::Sectors8x64,
        probes: 8,
        seed: 3,
    };
    let mut reference = filter(Isa::Scalar, u32_params);
    reference.insert_batch(&keys);
    let mut want = vec![false; probes.len()];
    reference.contains_batch(&probes, &mut want);
    for &isa in &common::tiers() {
        let mut f = filter(isa, u32_params);
        f.insert_batch(&keys);
        assert_eq!(f, reference, "{isa}");
        let mut got = vec![false; probes.len()];
        f.contains_batch(&probes, &mut got);
        assert_eq!(got, want, "{isa}");
        for k in &keys {
            assert!(f.contains(k));
        }
        // A key is its value at every width: the same values as `i64` and `u64` are the same
        // keys; as `i32`, those of 2^31 and above are other (negative) values.
        let wide: Vec<i64> = keys.iter().map(|&k| k as i64).collect();
        let mut s = filter(isa, u32_params);
        s.insert_batch(&wide);
        assert_eq!(s, reference);
        let signed: Vec<i32> = keys.iter().map(|&k| k as i32).collect();
        let mut s = filter(isa, u32_params);
        s.insert_batch(&signed);
        let negative = keys.iter().any(|&k| k >= 1 << 31);
        assert_eq!(s == reference, !negative, "{isa}: i32 keys");
    }
}

#[test]
fn quickcheck_every_tier_equals_scalar() {
    fn prop(keys: Vec<u64>, extra: Vec<u64>, cap: u16, bits: u8, k: u8, seed: u64) -> TestResult {
        let layout = Layout::ALL[k as usize % 2];
        let probes = layout.sectors() * (1 + (k as u32 / 2) % (32 / layout.sectors()));
        let params = Params {
            capacity: cap as u64 % 4000 + 1,
            bits: (bits % 24) as f64 + 1.0,
            layout,
            probes,
            seed,
        };
        // The builder refuses budgets that filter nothing (model rate 0.99 or more); the
        // fullest filters it builds still saturate most blocks.
        let built = BloomFilter::builder()
            .capacity(params.capacity)
            .bits_per_key(params.bits)
            .layout(layout)
            .probes(probes)
            .build();
        if let Err(blockbloom::Error::FiltersNothing { .. }) = built {
            return TestResult::discard();
        }
        let mut queries = extra;
        queries.extend(keys.iter().map(|x| x ^ 1));
        check_all_tiers(&keys, &queries, params);
        TestResult::passed()
    }
    QuickCheck::new()
        .tests(300)
        .quickcheck(prop as fn(Vec<u64>, Vec<u64>, u16, u8, u8, u64) -> TestResult);
}

#[test]
fn stable_hasher_every_short_length_equals_xxh3() {
    use std::hash::Hasher;
    let bytes: Vec<u8> = (0..200u8).map(|i| i.wrapping_mul(37)).collect();
    for seed in [0, 3, u64::MAX] {
        for len in 0..bytes.len() {
            let mut h = hash::StableHasher::new(seed);
            h.write(&bytes[..len]);
            assert_eq!(
                h.finish(),
                xxh3_64_with_seed(&bytes[..len], seed),
                "len {len}"
            );
        }
    }
}

#[test]
fn filters_beyond_the_cache_threshold_equal_scalar() {
    // Past the core's L2 (2 MiB at most on the CPUs measured) the batch pipeline prefetches in
    // short chunks; bits and answers must not care.
    let keys: Vec<u64> = (0..300_000u64)
        .map(|i| i.wrapping_mul(0x2545_f491_4f6c_dd1d))
        .collect();
    let queries: Vec<u64> = (0..300_000u64).collect();
    for layout in Layout::ALL {
        let p = Params {
            capacity: 300_000,
            bits: 64.0,
            layout,
            probes: 16,
            seed: 9,
        };
        assert!(filter(Isa::Scalar, p).size_in_bytes() > 2 << 20);
        check_all_tiers(&keys, &queries, p);
    }
}

/// Calls of at most 64 `u64` keys under hash ids 3 and 4 take the filter's burst entries
/// (chosen once per filter, beside its single-key probe). On every tier, layout and round
/// count, under both hashes, at
/// every call length up to one past the most a burst takes: `insert_batch` leaves the scalar
/// reference's bits (built one key at a time), and `contains_batch`, `count_batch`,
/// `contains_bitmap` and `select` give its answers.
#[test]
fn bursts_equal_scalar_on_every_tier_layout_and_length() {
    let keys: Vec<u64> = (0..240u64)
        .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (i << 7))
        .collect();
    let (members, others) = keys.split_at(120);
    let queries: Vec<u64> = members.iter().chain(others).copied().collect();
    for (layout, hash) in Layout::ALL
        .into_iter()
        .flat_map(|l| [(l, KeyHash::Mx32), (l, KeyHash::Moremur)])
    {
        for probes in [8, 16, 24, 32] {
            let p = Params {
                capacity: 100,
                bits: 12.0,
                layout,
                probes,
                seed: 7,
            };
            let mut reference = filter_with(Isa::Scalar, p, hash);
            for k in members {
                reference.insert(k);
            }
            let want: Vec<bool> = queries.iter().map(|k| reference.contains(k)).collect();
            for &isa in &common::tiers() {
                for n in [1, 2, 3, 5, 7, 8, 9, 16, 17, 31, 32, 33, 63, 64, 65] {
                    let case = format!("{isa}, {layout:?}, {hash}, k = {probes}, calls of {n}");
                    let mut f = filter_with(isa, p, hash);
                    for call in members.chunks(n) {
                        f.insert_batch(call);
                    }
                    assert_eq!(f.blocks(), reference.blocks(), "{case}: bits");
                    let mut got = Vec::new();
                    let mut count = 0;
                    for call in queries.chunks(n) {
                        let mut out = vec![true; call.len()];
                        f.contains_batch(call, &mut out);
                        got.extend(out);
                        count += f.count_batch(call);
                        let mut bits = vec![u64::MAX; call.len().div_ceil(64)];
                        f.contains_bitmap(call, &mut bits);
                        let mut selected = vec![7u32];
                        f.select(call, &mut selected);
                        let mut want_selected = vec![7u32];
                        for (i, k) in call.iter().enumerate() {
                            assert_eq!(bits[i / 64] >> (i % 64) & 1 == 1, reference.contains(k));
                            if reference.contains(k) {
                                want_selected.push(i as u32);
                            }
                        }
                        assert_eq!(selected, want_selected, "{case}: selection");
                    }
                    assert_eq!(got, want, "{case}: answers");
                    assert_eq!(count, want.iter().filter(|&&w| w).count(), "{case}: count");
                }
            }
        }
    }
}

/// A burst whose answer slice has another length panics as every batch does.
#[test]
#[should_panic(expected = "output slice length must equal key count")]
fn a_burst_with_a_short_answer_slice_panics() {
    let f = BloomFilter::with_capacity(100, 0.01).unwrap();
    f.contains_batch(&[1u64, 2, 3], &mut [false; 2]);
}
