//! The classic Bloom filter: the textbook design and formulas, batch == single on every tier,
//! no false negatives, measured rates against the formulas, the algebra's laws, and its
//! encoding (golden file, typed errors).

mod common;

use common::bound;

use blockbloom::{ByHash, ClassicBloomFilter, Error, Isa};
use common::{keys, members, non_members, tiers};
use quickcheck::quickcheck;

fn strings(seed: u64, n: usize) -> Vec<String> {
    keys(seed, n)
        .iter()
        .map(|k| format!("key-{k:x}-{}", "x".repeat((k % 40) as usize)))
        .collect()
}

#[test]
fn textbook_design() {
    for (n, p, m, k) in [
        (1000u64, 0.01, 9586u64, 7u32),
        (1_000_000, 0.001, 14_377_588, 10),
        (1, 0.5, 2, 1),
        (100, 1e-9, 4314, 30),
    ] {
        let f = ClassicBloomFilter::with_capacity(n, p).unwrap();
        assert_eq!((f.num_bits(), f.probes()), (m, k), "n={n} p={p}");
        let formula = (-(n as f64) * p.ln() / std::f64::consts::LN_2.powi(2)).ceil() as u64;
        assert_eq!(f.num_bits(), formula);
    }
}

#[test]
fn invalid_parameters_are_typed_errors() {
    let param = |r: Result<ClassicBloomFilter, Error>| match r {
        Err(Error::InvalidParameter { name, .. }) => name,
        other => panic!("{other:?}"),
    };
    assert_eq!(param(ClassicBloomFilter::new(0, 3)), "m_bits");
    assert_eq!(param(ClassicBloomFilter::new((1 << 43) + 1, 3)), "m_bits");
    assert_eq!(param(ClassicBloomFilter::new(100, 0)), "k");
    assert_eq!(param(ClassicBloomFilter::new(100, 65)), "k");
    assert_eq!(param(ClassicBloomFilter::with_capacity(0, 0.01)), "n");
    assert_eq!(
        param(ClassicBloomFilter::with_capacity(u64::MAX, 1e-9)),
        "m_bits"
    );
    for p in [0.0, 1.0, -0.5, f64::NAN] {
        assert!(matches!(
            ClassicBloomFilter::with_capacity(10, p),
            Err(Error::InvalidFpr(_))
        ));
    }
    let mut odd = ClassicBloomFilter::new(101, 3).unwrap();
    assert!(matches!(
        odd.halve(),
        Err(Error::InvalidParameter { name: "m_bits", .. })
    ));
    assert_eq!(odd.num_bits(), 101);
    let a = ClassicBloomFilter::new(100, 3).unwrap();
    for b in [
        ClassicBloomFilter::new(100, 4).unwrap(),
        ClassicBloomFilter::new(101, 3).unwrap(),
        ClassicBloomFilter::with_seed(100, 3, 1).unwrap(),
    ] {
        let mut a2 = a.clone();
        assert!(matches!(a2.union(&b), Err(Error::Incompatible(_))));
        assert!(matches!(a2.intersect(&b), Err(Error::Incompatible(_))));
        assert_eq!(a2, a);
    }
}

/// Every tier sets and tests the same bits as the single-key methods, for every key type, in
/// cache and at a size that takes the prefetching path (above 2 MiB), over odd `m` and `k`
/// from 1 to 64.
#[test]
fn batch_equals_single_on_every_tier() {
    let n = 3_001;
    let ints = keys(1, n);
    let small: Vec<u32> = ints.iter().map(|&k| k as u32).collect();
    let wide: Vec<u128> = ints
        .iter()
        .map(|&k| (k as u128) << 64 | k as u128)
        .collect();
    let fixed: Vec<[u8; 16]> = wide.iter().map(|k| k.to_le_bytes()).collect();
    let owned = strings(2, n);
    let strs: Vec<&str> = owned.iter().map(String::as_str).collect();
    for (m, k) in [
        (1u64, 1u32),
        (999, 3),
        (64 * 1000, 7),
        (20_000_003, 13),
        (16_777_259, 2),
        (7_777, 64),
    ] {
        let mut single = ClassicBloomFilter::with_seed(m, k, 5).unwrap();
        for &x in &ints[..n / 2] {
            single.insert(&x);
        }
        for &x in &small[..n / 2] {
            single.insert(&x);
        }
        for x in &fixed[..n / 2] {
            single.insert_bytes(x);
        }
        for s in &strs[..n / 2] {
            single.insert_bytes(s.as_bytes());
        }
        let answers = |f: &ClassicBloomFilter| -> Vec<bool> {
            let mut a = Vec::new();
            a.extend(ints.iter().map(|x| f.contains(x)));
            a.extend(small.iter().map(|x| f.contains(x)));
            a.extend(fixed.iter().map(|x| f.contains_bytes(x)));
            a.extend(fixed.iter().map(|x| f.contains_bytes(x)));
            a.extend(strs.iter().map(|x| f.contains_bytes(x.as_bytes())));
            a
        };
        let want = answers(&single);
        for (isa, gather) in tiers().into_iter().flat_map(|i| [(i, false), (i, true)]) {
            let mut f = ClassicBloomFilter::with_seed(m, k, 5)
                .unwrap()
                .with_isa(isa)
                .unwrap()
                .with_gather(gather);
            f.insert_batch(&ints[..n / 2]);
            f.insert_batch(&small[..n / 2]);
            f.insert_batch(&wide[..n / 2]);
            f.insert_batch(&strs[..n / 2]);
            assert_eq!(f, single, "{isa} gather={gather} m={m} k={k}: insert_batch");
            let mut got = Vec::new();
            let mut each = |b: &mut [bool], run: &dyn Fn(&mut [bool])| {
                run(b);
                got.extend_from_slice(b);
            };
            each(&mut vec![false; n], &|o| f.contains_batch(&ints, o));
            each(&mut vec![false; n], &|o| f.contains_batch(&small, o));
            each(&mut vec![false; n], &|o| f.contains_batch(&fixed, o));
            each(&mut vec![false; n], &|o| f.contains_batch(&wide, o));
            each(&mut vec![false; n], &|o| f.contains_batch(&strs, o));
            assert_eq!(
                got, want,
                "{isa} gather={gather} m={m} k={k}: contains_batch"
            );
            let count = f.count_batch(&ints) + f.count_batch(&strs);
            let want_count = want[..n].iter().filter(|&&a| a).count()
                + want[4 * n..].iter().filter(|&&a| a).count();
            assert_eq!(
                count, want_count,
                "{isa} gather={gather} m={m} k={k}: count_batch"
            );
        }
    }
}

quickcheck! {
    fn no_false_negatives(m: u32, k: u8, seed: u64, keys: Vec<u64>) -> bool {
        let m = m as u64 % 100_000 + 1;
        let k = k as u32 % 64 + 1;
        let mut f = ClassicBloomFilter::with_seed(m, k, seed).unwrap();
        let (first, second) = keys.split_at(keys.len() / 2);
        f.insert_batch(first);
        for x in second {
            f.insert(x);
        }
        let mut out = vec![false; keys.len()];
        f.contains_batch(&keys, &mut out);
        let halved_ok = if m.is_multiple_of(2) {
            let mut h = f.clone();
            h.halve().unwrap();
            keys.iter().all(|x| h.contains(x))
        } else {
            true
        };
        out.iter().all(|&a| a) && keys.iter().all(|x| f.contains(x)) && halved_ok
    }
}

/// Measured false-positive rates agree with the textbook formula across m/n from 4 to 32 and
/// k from 1 to 20, with fixed seeds. Each filter's realized rate (its fill fraction to the
/// k-th power) is tested too, and the approximate and exact forms agree with each other.
/// The standard deviation of one filter's realized rate `(1 - Z/m)^k` over its keys, where
/// `Z`, the bits still clear after `kn` uniform positions, has the occupancy variance
/// `m(m-1)(1-2/m)^(kn) + E[Z] - E[Z]^2`; by the delta method.
fn fill_sd(m: u64, k: u32, n: u64) -> f64 {
    let (m, balls) = (m as f64, (k as u64 * n) as f64);
    let ez = m * (1.0 - 1.0 / m).powf(balls);
    let var = m * (m - 1.0) * (1.0 - 2.0 / m).powf(balls) + ez - ez * ez;
    let z = ez / m;
    k as f64 * (1.0 - z).powi(k as i32 - 1) * var.max(0.0).sqrt() / m
}

#[test]
fn measured_fpr_agrees_with_the_formula() {
    let n = 20_000u64;
    let queries = 400_000usize;
    let mut rows = Vec::new();
    for ratio in [4u64, 8, 16, 32] {
        for k in [1u32, 2, 3, 5, 8, 12, 16, 20] {
            let seed = ratio * 100 + k as u64;
            let mut f = ClassicBloomFilter::with_seed(ratio * n, k, seed).unwrap();
            f.insert_batch(&members(seed, n as usize));
            let fp = f.count_batch(&non_members(seed, queries)) as f64;
            let formula = f.expected_fpr(n) * queries as f64;
            let exact = f.expected_fpr_exact(n) * queries as f64;
            let realized = f.fill_fpr() * queries as f64;
            rows.push(format!(
                "m/n={ratio:2} k={k:2}: measured {fp:8} formula {formula:10.1} exact {exact:10.1} realized {realized:10.1}"
            ));
            // Against the formula, one filter's fill scatters too: add its spread.
            let spread = fill_sd(ratio * n, k, n) * queries as f64;
            assert!(
                (fp - formula).abs() <= 5.0 * (formula + spread * spread).sqrt() + 5.0,
                "m/n={ratio} k={k}: {fp} vs formula {formula} (fill spread {spread})"
            );
            assert!(
                (fp - realized).abs() <= bound(realized),
                "m/n={ratio} k={k}: {fp} vs realized {realized}"
            );
            assert!((formula - exact).abs() <= 0.01 * exact + 1e-9);
        }
    }
    println!("{}", rows.join("\n"));
}

#[test]
fn union_intersection_and_halving_obey_their_laws() {
    let (a_keys, b_keys) = (members(1, 5_000), members(2, 5_000));
    let build = |ks: &[u64]| {
        let mut f = ClassicBloomFilter::with_seed(80_000, 6, 3).unwrap();
        f.insert_batch(ks);
        f
    };
    let (a, b) = (build(&a_keys), build(&b_keys));
    let both: Vec<u64> = a_keys.iter().chain(&b_keys).copied().collect();
    // Union is the filter of both key sets, and commutative, associative, idempotent.
    let mut ab = a.clone();
    ab.union(&b).unwrap();
    assert_eq!(ab, build(&both));
    let mut ba = b.clone();
    ba.union(&a).unwrap();
    assert_eq!(ab, ba);
    let mut aa = a.clone();
    aa.union(&a).unwrap();
    assert_eq!(aa, a);
    let c = build(&members(3, 100));
    let (mut l, mut r) = (ab.clone(), b.clone());
    l.union(&c).unwrap();
    r.union(&c).unwrap();
    let mut r2 = a.clone();
    r2.union(&r).unwrap();
    assert_eq!(l, r2);
    // Intersection: bits of both; every key of the common part answers true; commutative,
    // and it absorbs the union (a & (a | b) = a).
    let common: Vec<u64> = members(4, 1_000);
    let (mut x, y) = (
        build(&[&a_keys[..], &common[..]].concat()),
        build(&[&b_keys[..], &common[..]].concat()),
    );
    let mut yx = y.clone();
    yx.intersect(&x).unwrap();
    x.intersect(&y).unwrap();
    assert_eq!(x, yx);
    assert!(common.iter().all(|k| x.contains(k)));
    let mut absorb = a.clone();
    absorb.intersect(&ab).unwrap();
    assert_eq!(absorb, a);
    // Halving: keeps every key, commutes with union, and equals building the folded filter
    // (positions mod m/2) directly; m/2 not a multiple of 64 takes the bit-level path.
    for m in [80_000u64, 80_002, 128] {
        let mk = |ks: &[u64]| {
            let mut f = ClassicBloomFilter::with_seed(m, 6, 3).unwrap();
            f.insert_batch(ks);
            f
        };
        let (a, b) = (mk(&a_keys), mk(&b_keys));
        let mut h = a.clone();
        h.halve().unwrap();
        assert_eq!((h.num_bits(), h.halvings()), (m / 2, 1));
        assert!(a_keys.iter().all(|k| h.contains(k)));
        let mut hb = b.clone();
        hb.halve().unwrap();
        let mut u1 = h.clone();
        u1.union(&hb).unwrap();
        let mut u2 = a.clone();
        u2.union(&b).unwrap();
        u2.halve().unwrap();
        assert_eq!(u1, u2, "m={m}");
        // Inserting after halving equals halving after inserting.
        let mut late = ClassicBloomFilter::with_seed(m, 6, 3).unwrap();
        late.halve().unwrap();
        late.insert_batch(&a_keys);
        assert_eq!(late, h, "m={m}");
        assert!(h.count_ones() <= a.count_ones());
    }
}

#[test]
fn estimated_len_and_clear() {
    let mut f = ClassicBloomFilter::with_capacity(50_000, 0.01).unwrap();
    f.insert_batch(&members(7, 50_000));
    let e = f.estimated_len();
    assert!((e - 50_000.0).abs() < 1_000.0, "{e}");
    f.clear();
    assert_eq!((f.count_ones(), f.estimated_len()), (0, 0.0));
}

fn golden() -> ClassicBloomFilter {
    let mut f = ClassicBloomFilter::with_seed(1_000, 5, 0x0123_4567_89ab_cdef).unwrap();
    f.insert_batch(&(0..50u64).collect::<Vec<_>>());
    // What `insert(&"golden")` hashed before the `Key` trait (the `Hash` route, now `ByHash`).
    f.insert(&ByHash("golden"));
    f.insert_bytes(b"bytes");
    f
}

#[test]
fn golden_file_pins_version_1() {
    let f = golden();
    let stored = common::golden_file("classic-v1.bin", &f.to_bytes());
    let g = ClassicBloomFilter::from_bytes(&stored).unwrap();
    assert_eq!(f, g);
    assert_eq!(stored[10], blockbloom::format::kind::CLASSIC);
    assert!(g.contains(&ByHash("golden")) && g.contains(&7u64) && g.contains("bytes"));
}

#[test]
fn round_trips_and_typed_decode_errors() {
    let mut f = ClassicBloomFilter::with_seed(20_003, 9, 11).unwrap();
    f.insert_batch(&keys(3, 2_000));
    let mut h = ClassicBloomFilter::with_seed(20_000, 9, 11).unwrap();
    h.insert_batch(&keys(3, 2_000));
    h.halve().unwrap();
    for f in [f, h] {
        let bytes = f.to_bytes();
        assert_eq!(bytes.len(), f.encoded_len());
        assert_eq!(ClassicBloomFilter::from_bytes(&bytes).unwrap(), f);
        assert_eq!(ClassicBloomFilter::read_from(&bytes[..]).unwrap(), f);
        let mut w = Vec::new();
        f.write_to(&mut w).unwrap();
        assert_eq!(w, bytes);
        common::envelope_errors(&bytes, ClassicBloomFilter::from_bytes);
    }
    let good = golden().to_bytes();
    let edit = |at: usize, value: u64| {
        let mut b = good.clone();
        b[at..at + 8].copy_from_slice(&value.to_le_bytes());
        common::reseal(&mut b);
        ClassicBloomFilter::from_bytes(&b)
    };
    for (at, value) in [
        (24, 0),         // m = 0
        (24, 1 << 44),   // m too large
        (24, 999),       // body not ceil(m / 64) words
        (32, 1_000 * 3), // design m not m times a power of two
        (32, 999),       // design m below m
        (40, 0),         // k = 0
        (40, 65),        // k too large
        (40, 1 << 33),   // k beyond u32
    ] {
        assert!(
            matches!(edit(at, value), Err(Error::InvalidHeader(_))),
            "field at {at} = {value}"
        );
    }
    // A bit set past m (1000 bits: the last word holds 40).
    let mut b = good.clone();
    let last = b.len() - 1;
    b[last] |= 0x80;
    common::reseal(&mut b);
    assert!(matches!(
        ClassicBloomFilter::from_bytes(&b),
        Err(Error::InvalidHeader("classic filter: bits set past m"))
    ));
    let mut b = good;
    b[11] = 1;
    common::reseal(&mut b);
    assert!(matches!(
        ClassicBloomFilter::from_bytes(&b),
        Err(Error::InvalidHeader(_))
    ));
}

#[test]
fn active_kernel_is_used_and_any_tier_can_be_picked() {
    let f = ClassicBloomFilter::new(100, 2).unwrap();
    assert_eq!(Some(f.isa()), Isa::active().ok());
    for isa in Isa::ALL {
        assert_eq!(
            ClassicBloomFilter::new(100, 2)
                .unwrap()
                .with_isa(isa)
                .is_ok(),
            isa.is_supported()
        );
    }
}
