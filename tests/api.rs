//! Public API behaviour and every error case.

mod common;

use blockbloom::{BloomFilter, ByHash, Error, Isa, SizedBy, layout::MAX_BLOCKS};
use quickcheck::quickcheck;

#[test]
fn invalid_fpr_is_a_typed_error() {
    for fpr in [
        0.0,
        -0.5,
        1.0,
        1.01,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        1e-300,
    ] {
        let err = BloomFilter::with_capacity(1000, fpr).unwrap_err();
        assert!(matches!(err, Error::InvalidFpr(_)), "{fpr}: {err:?}");
        assert!(err.to_string().contains("false-positive rate"), "{err}");
    }
}

/// The advice of a "needs N blocks" error names the option the call used.
#[test]
fn too_many_blocks_is_a_typed_error_that_names_the_option() {
    let by_rate = BloomFilter::with_capacity(u64::MAX, 0.01).unwrap_err();
    assert!(matches!(
        by_rate,
        Error::TooManyBlocks {
            sized_by: SizedBy::Fpr,
            ..
        }
    ));
    assert!(
        by_rate
            .to_string()
            .contains("raise the false-positive rate"),
        "{by_rate}"
    );
    let by_bits = BloomFilter::builder()
        .capacity(1 << 40)
        .bits_per_key(10.0)
        .build()
        .unwrap_err();
    assert!(matches!(
        by_bits,
        Error::TooManyBlocks {
            sized_by: SizedBy::BitsPerKey,
            ..
        }
    ));
    let text = by_bits.to_string();
    assert!(
        text.contains("bits_per_key") && !text.contains("false-positive"),
        "{text}"
    );
    let by_bytes = BloomFilter::builder()
        .capacity(1)
        .size_in_bytes(64 * (MAX_BLOCKS + 1))
        .build()
        .unwrap_err();
    assert!(matches!(
        by_bytes,
        Error::TooManyBlocks {
            sized_by: SizedBy::SizeInBytes,
            ..
        }
    ));
    let text = by_bytes.to_string();
    assert!(
        text.contains("lower size_in_bytes") && !text.contains("false-positive"),
        "{text}"
    );
}

/// Budgets that filter nothing, waste memory, or leave the probe count to a guess are refused
/// with errors that say so; the limits themselves build.
#[test]
fn the_builder_refuses_nonsense_budgets() {
    let b = || BloomFilter::builder().capacity(1000);
    // 1e-9 bits per key: one block for 1000 keys, model rate 0.998.
    let err = b().bits_per_key(1e-9).build().unwrap_err();
    let Error::FiltersNothing {
        model_fpr,
        sized_by,
        capacity,
        bytes,
    } = err
    else {
        panic!("{err:?}")
    };
    assert!(model_fpr > 0.99 && capacity == 1000 && bytes == 64);
    assert_eq!(sized_by, SizedBy::BitsPerKey);
    assert!(err.to_string().contains("raise bits_per_key"), "{err}");
    // 1e9 bits per key would be 1.25 GB for 10 keys.
    let huge = BloomFilter::builder()
        .capacity(10)
        .bits_per_key(1e9)
        .build();
    assert_eq!(huge.unwrap_err(), Error::InvalidBitsPerKey(1e9));
    assert!(
        Error::InvalidBitsPerKey(1e9)
            .to_string()
            .contains("(0, 512]"),
        "{}",
        Error::InvalidBitsPerKey(1e9)
    );
    let max = b()
        .bits_per_key(blockbloom::sizing::MAX_BITS_PER_KEY)
        .build()
        .unwrap();
    assert_eq!(max.size_in_bytes(), 1000 * 64);
    assert!(b().bits_per_key(512.5).build().is_err());
    // Zero bytes, and a byte budget far too small for the capacity.
    assert!(matches!(
        b().size_in_bytes(0).build(),
        Err(Error::InvalidOptions(_))
    ));
    let small = BloomFilter::builder()
        .capacity(1_000_000)
        .size_in_bytes(64)
        .build();
    assert!(matches!(
        small,
        Err(Error::FiltersNothing {
            sized_by: SizedBy::SizeInBytes,
            ..
        })
    ));
    // A target rate so close to 1 that the smallest filter meeting it filters nothing.
    let rate = BloomFilter::builder()
        .capacity(100_000)
        .fpr(0.999_999)
        .build();
    assert!(
        matches!(
            rate,
            Err(Error::FiltersNothing {
                sized_by: SizedBy::Fpr,
                ..
            })
        ),
        "{rate:?}"
    );
    // A byte budget without a capacity says why it needs one.
    let alone = BloomFilter::builder()
        .size_in_bytes(4096)
        .build()
        .unwrap_err();
    assert!(alone.to_string().contains("probe count"), "{alone}");
    // One block for one key filters well: small budgets that do filter still build.
    assert!(
        BloomFilter::builder()
            .capacity(1)
            .size_in_bytes(64)
            .build()
            .is_ok()
    );
    assert!(b().bits_per_key(2.0).build().unwrap().model_fpr(1000) < 0.99);
}

#[test]
fn unallocatable_size_is_an_error_not_an_abort() {
    // 2^32 blocks = 256 GiB: addressable, but more than this machine's memory. Linux's default
    // heuristic overcommit refuses a single request that large; with overcommit forced on
    // (`vm.overcommit_memory = 1`) the kernel would grant it, so the case cannot be observed.
    let mode = std::fs::read_to_string("/proc/sys/vm/overcommit_memory").unwrap_or_default();
    if mode.trim() == "1" {
        eprintln!("skipped: vm.overcommit_memory = 1 grants any allocation");
        return;
    }
    let err = BloomFilter::builder()
        .capacity(1)
        .size_in_bytes(64 * MAX_BLOCKS)
        .build()
        .unwrap_err();
    assert_eq!(
        err,
        Error::AllocationFailed {
            bytes: 64 * MAX_BLOCKS as u128
        }
    );
    assert!(err.to_string().contains("could not allocate"));
}

#[test]
fn builder_option_errors() {
    let b = || BloomFilter::builder().capacity(1000);
    assert!(matches!(
        BloomFilter::builder().build(),
        Err(Error::InvalidOptions(_))
    ));
    assert!(matches!(
        b().fpr(0.01).bits_per_key(10.0).build(),
        Err(Error::InvalidOptions(_))
    ));
    assert!(matches!(
        b().bits_per_key(8.0).size_in_bytes(64).build(),
        Err(Error::InvalidOptions(_))
    ));
    for bits in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert!(matches!(
            b().bits_per_key(bits).build(),
            Err(Error::InvalidBitsPerKey(_))
        ));
    }
    for k in [0, 1, 3, 6, 36, 64] {
        let err = b().probes(k).build().unwrap_err();
        assert_eq!(err, Error::InvalidProbes(k));
        assert!(err.to_string().contains("multiple of 4"));
    }
    for k in [4, 8, 12, 32] {
        assert_eq!(b().probes(k).build().unwrap().probes(), k);
    }
}

#[test]
fn explicit_budgets() {
    let f = BloomFilter::builder()
        .capacity(1000)
        .bits_per_key(16.0)
        .build()
        .unwrap();
    assert_eq!(f.num_blocks(), 32);
    assert_eq!(f.target_fpr(), None);
    let f = BloomFilter::builder()
        .capacity(1000)
        .size_in_bytes(100)
        .build()
        .unwrap();
    assert_eq!(f.size_in_bytes(), 128, "rounded up to whole blocks");
    let f = BloomFilter::builder()
        .capacity(0)
        .fpr(0.01)
        .build()
        .unwrap();
    assert_eq!(f.num_blocks(), 1, "capacity 0 plans for one key");
    let f = BloomFilter::with_capacity(1_000_000, 0.01).unwrap();
    assert_eq!(f.target_fpr(), Some(0.01));
    assert_eq!(f.capacity(), 1_000_000);
    assert_eq!(f.isa(), Isa::active().unwrap());
}

#[test]
fn every_supported_isa_can_be_chosen() {
    for isa in common::tiers() {
        let f = BloomFilter::builder()
            .capacity(10)
            .isa(isa)
            .build()
            .unwrap();
        assert_eq!(f.isa(), isa);
    }
    for isa in Isa::ALL {
        assert_eq!(isa.require().is_ok(), isa.is_supported());
    }
}

#[test]
#[should_panic(expected = "output slice length")]
fn contains_batch_length_mismatch_panics() {
    let f = BloomFilter::with_capacity(10, 0.01).unwrap();
    f.contains_batch(&[1u64, 2], &mut [false; 3]);
}

#[test]
fn statistics() {
    let mut f = BloomFilter::with_capacity(100_000, 0.01).unwrap();
    assert_eq!(f.fill_ratio(), 0.0);
    assert_eq!(f.estimated_len(), 0.0);
    assert_eq!(f.expected_fpr(), 0.0);
    let keys: Vec<u64> = (0..100_000).collect();
    f.insert_batch(&keys);
    // At the design point about 1 - (1 - 1/128)^(b * 100_000 / blocks) of bits are set.
    let fill = f.fill_ratio();
    assert!(fill > 0.4 && fill < 0.6, "{fill}");
    let est = f.estimated_len();
    assert!((est / 100_000.0 - 1.0).abs() < 0.02, "{est}");
    let p = f.expected_fpr();
    assert!((p / f.model_fpr(100_000) - 1.0).abs() < 0.1, "{p}");
    f.clear();
    assert_eq!(f.fill_ratio(), 0.0);
    assert!(!f.contains(&5u64) || f.expected_fpr() > 0.0);
}

#[test]
fn extend_matches_single_inserts() {
    let mut a = BloomFilter::with_capacity(5000, 0.01).unwrap();
    let mut b = a.clone();
    let words: Vec<String> = (0..3000).map(|i| format!("w{i}")).collect();
    a.extend(words.iter());
    for w in &words {
        b.insert(w);
    }
    assert_eq!(a, b);
    // u64 keys through Extend equal the SIMD batch.
    let mut c = BloomFilter::with_capacity(5000, 0.01).unwrap();
    let mut d = c.clone();
    c.extend(0..3000u64);
    d.insert_batch(&(0..3000u64).collect::<Vec<_>>());
    assert_eq!(c, d);
}

#[test]
fn seeds_change_bits_not_answers() {
    let mut a = BloomFilter::builder()
        .capacity(1000)
        .seed(1)
        .build()
        .unwrap();
    let mut b = BloomFilter::builder()
        .capacity(1000)
        .seed(2)
        .build()
        .unwrap();
    a.insert_batch(&[1u64, 2, 3]);
    b.insert_batch(&[1u64, 2, 3]);
    assert_ne!(a, b);
    assert!([1u64, 2, 3].iter().all(|k| a.contains(k) && b.contains(k)));
}

#[test]
fn bytes_and_hash_keys() {
    let mut f = BloomFilter::with_capacity(1000, 0.001).unwrap();
    f.insert_bytes(b"10.1.2.3");
    f.insert(&ByHash((7u8, "tuple", [1u16, 2])));
    assert!(f.contains_bytes(b"10.1.2.3"));
    assert!(f.contains(&ByHash((7u8, "tuple", [1u16, 2]))));
    assert_eq!(
        f.hash(&42u64),
        blockbloom::KeyForm::U64(42).hash_with(f.key_hash(), f.seed())
    );
}

quickcheck! {
    fn no_false_negatives(keys: Vec<u64>, strs: Vec<String>, seed: u64) -> bool {
        let mut f = BloomFilter::builder()
            .capacity((keys.len() + strs.len()) as u64)
            .fpr(0.05)
            .seed(seed)
            .build()
            .unwrap();
        f.insert_batch(&keys);
        for s in &strs {
            f.insert(s);
        }
        keys.iter().all(|k| f.contains(k))
            && f.count_batch(&keys) == keys.len()
            && strs.iter().all(|s| f.contains(s))
    }

    fn batch_equals_single(keys: Vec<u64>, queries: Vec<u64>, seed: u64) -> bool {
        let mut batch = BloomFilter::builder().capacity(keys.len() as u64).seed(seed).build().unwrap();
        let mut single = batch.clone();
        batch.insert_batch(&keys);
        for k in &keys {
            single.insert(k);
        }
        let mut out = vec![false; queries.len()];
        batch.contains_batch(&queries, &mut out);
        batch == single && queries.iter().zip(&out).all(|(q, &o)| single.contains(q) == o)
    }
}
