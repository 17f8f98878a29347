//! One key, one answer: every key type, inserted by every path of every filter kind, on every
//! tier, under every hash id and layout the kind accepts, is found by every query path of
//! that kind (quickcheck). Before the `Key` trait, `insert(&str)` hashed through `Hash` (with a
//! terminator byte) while the batch, byte and column paths hashed the bytes; before integers
//! became their 64-bit value, `5u32` and `5u64` were two keys.
//!
//! How the product is covered: for each (kind, configuration, tier), every insert path must
//! leave the filter in the same state as the first one (the same bits, counters and stages),
//! and every query path must find every key in that state. So every (insert path, query path)
//! pair answers "yes" for every key, at the cost of one filter per insert path rather than
//! one per pair.
//!
//! Also: what files written before the changes answer (a CLI-built file, a golden file whose
//! string key went through the old `Hash` route, and golden files of 8-, 16- and 32-bit keys
//! written as their own width's bytes).

#[path = "../common/mod.rs"]
mod common;

mod groups;
mod kinds;

use blockbloom::{
    AtomicBloomFilter, BloomFilter, ByHash, ClassicBloomFilter, CountingBloomFilter,
    DeletableBloomFilter, Isa, ScalableBloomFilter, VariableIncrementBloomFilter,
};
use quickcheck::{QuickCheck, TestResult};

use groups::{Group, Ints, Strings, Words128};
use kinds::{Config, Kind, View};

// ---------------------------------------------------------------------------------------------
// The property
// ---------------------------------------------------------------------------------------------

/// How many paths ran: insert paths that left the reference state, query paths that found
/// every key.
#[derive(Debug, Default, PartialEq, Clone, Copy)]
struct Ran {
    inserts: usize,
    queries: usize,
}

impl std::ops::AddAssign for Ran {
    fn add_assign(&mut self, o: Ran) {
        self.inserts += o.inserts;
        self.queries += o.queries;
    }
}

/// Every insert and query path of kind `F` over group `G`'s keys on every tier, under
/// `configs`: the first path that leaves another state than the first insert path or misses
/// a key, or how many ran.
fn check<G: Group, F: Kind>(
    tiers: &[Isa],
    configs: &[Config],
    keys: &[G::V],
) -> Result<Ran, String> {
    let mut ran = Ran::default();
    for &config in configs {
        for &isa in tiers {
            let at = || format!("{} on {isa}, {config}, {}", F::NAME, G::NAME);
            let mut reference: Option<(F, &str)> = None;
            for (ip, insert_name) in G::INSERT.iter().enumerate() {
                let mut f = F::make(isa, keys.len(), config);
                if !G::insert(&mut f, ip, keys) {
                    continue;
                }
                f.finish();
                match &reference {
                    None => reference = Some((f, insert_name)),
                    Some((r, first)) if !f.same(r) => {
                        return Err(format!(
                            "{}: {insert_name} leaves another filter than {first} ({} keys, \
                             first {:?})",
                            at(),
                            keys.len(),
                            keys.first()
                        ));
                    }
                    Some(_) => {}
                }
                ran.inserts += 1;
            }
            let Some((f, first)) = reference else {
                return Err(format!("{}: no insert path ran", at()));
            };
            for (qp, query_name) in G::QUERY.iter().enumerate() {
                let Some(answers) = G::query(&f, qp, keys) else {
                    continue;
                };
                ran.queries += 1;
                if let Some(i) = answers.iter().position(|&a| !a) {
                    return Err(format!(
                        "{}: inserted by {first} (and every other insert path alike), \
                         {query_name} misses key {i} ({:?})",
                        at(),
                        keys[i]
                    ));
                }
            }
        }
    }
    Ok(ran)
}

fn check_kind<G: Group, F: Kind>(tiers: &[Isa], keys: &[G::V]) -> Result<Ran, String> {
    check::<G, F>(tiers, &F::configs(), keys)
}

fn check_kinds<G: Group>(tiers: &[Isa], keys: &[G::V]) -> Result<Ran, String> {
    let mut ran = check_kind::<G, BloomFilter>(tiers, keys)?;
    ran += check_kind::<G, View>(tiers, keys)?;
    ran += check_kind::<G, AtomicBloomFilter>(tiers, keys)?;
    ran += check_kind::<G, CountingBloomFilter>(tiers, keys)?;
    ran += check_kind::<G, DeletableBloomFilter>(tiers, keys)?;
    ran += check_kind::<G, ScalableBloomFilter>(tiers, keys)?;
    ran += check_kind::<G, ClassicBloomFilter>(tiers, keys)?;
    ran += check_kind::<G, VariableIncrementBloomFilter>(&tiers[..1], keys)?;
    Ok(ran)
}

/// Distinct keys (a kind that counts, or skips keys it holds, would count a repeat twice on
/// one path and once on another).
fn distinct<T: Ord + Clone>(mut v: Vec<T>) -> Vec<T> {
    v.sort();
    v.dedup();
    v
}

/// Integer key sets as quickcheck draws them at each width, as 64-bit values: each set runs
/// through every type that can name all of its keys.
#[allow(clippy::too_many_arguments)]
fn int_sets(
    i8s: Vec<i8>,
    u8s: Vec<u8>,
    i16s: Vec<i16>,
    u16s: Vec<u16>,
    i32s: Vec<i32>,
    u32s: Vec<u32>,
    u64s: Vec<u64>,
) -> Vec<Vec<u64>> {
    [
        i8s.iter().map(|&v| v as i64 as u64).collect(),
        u8s.iter().map(|&v| v as u64).collect(),
        i16s.iter().map(|&v| v as i64 as u64).collect(),
        u16s.iter().map(|&v| v as u64).collect(),
        i32s.iter().map(|&v| v as i64 as u64).collect(),
        u32s.iter().map(|&v| v as u64).collect(),
        u64s,
    ]
    .into_iter()
    .map(distinct)
    .collect()
}

/// Integer key sets drawn at each width: `i8`, `u8`, `i16`, `u16`, `i32`, `u32`, `u64`.
type IntDraws = (
    Vec<i8>,
    Vec<u8>,
    Vec<i16>,
    Vec<u16>,
    Vec<i32>,
    Vec<u32>,
    Vec<u64>,
);

fn one_key_one_answer(strings: Vec<String>, w128: Vec<u128>, ints: IntDraws) -> TestResult {
    let tiers = common::tiers();
    let (i8s, u8s, i16s, u16s, i32s, u32s, u64s) = ints;
    let run = || -> Result<(), String> {
        check_kinds::<Strings>(&tiers, &distinct(strings))?;
        check_kinds::<Words128>(&tiers, &distinct(w128))?;
        for keys in int_sets(i8s, u8s, i16s, u16s, i32s, u32s, u64s) {
            check_kinds::<Ints>(&tiers, &keys)?;
        }
        Ok(())
    };
    match run() {
        Ok(()) => TestResult::passed(),
        Err(e) => TestResult::error(e),
    }
}

#[test]
fn every_key_type_path_tier_kind_hash_and_layout_finds_every_key() {
    QuickCheck::new()
        .tests(20)
        .quickcheck(one_key_one_answer as fn(_, _, _) -> TestResult);
}

/// The plain filter has every path: with keys every type can name, each group runs all of its
/// insert paths and all of its query paths on every tier and configuration (so a path that
/// stopped running would show).
#[test]
fn the_plain_filter_runs_every_path() {
    let tiers = common::tiers();
    let configs = BloomFilter::configs();
    assert_eq!(configs.len(), 9, "three hash ids by three layouts");
    let full = |g_insert: usize, g_query: usize| Ran {
        inserts: tiers.len() * configs.len() * g_insert,
        queries: tiers.len() * configs.len() * g_query,
    };
    let strings: Vec<String> = (0..300).map(|i| format!("user:{i}")).collect();
    assert_eq!(
        check::<Strings, BloomFilter>(&tiers, &configs, &strings),
        Ok(full(Strings::INSERT.len(), Strings::QUERY.len()))
    );
    let w128: Vec<u128> = (0..300)
        .map(|i| (common::splitmix64(i) as u128) << 64 | i as u128)
        .collect();
    assert_eq!(
        check::<Words128, BloomFilter>(&tiers, &configs, &w128),
        Ok(full(Words128::INSERT.len(), Words128::QUERY.len()))
    );
    // Keys every type can name: every path runs but `contains(&bool)`, which runs on 0 and 1.
    let ints: Vec<u64> = (0..=127).collect();
    assert_eq!(
        check::<Ints, BloomFilter>(&tiers, &configs, &ints),
        Ok(full(Ints::INSERT.len(), Ints::QUERY.len() - 1))
    );
    assert_eq!(
        check::<Ints, BloomFilter>(&tiers, &configs, &[0, 1]),
        Ok(full(Ints::INSERT.len(), Ints::QUERY.len()))
    );
}

/// Keys at the edges of each width (the sign bit, the widths' maxima, negatives) through every
/// kind, configuration and tier: `-1i8`, `-1i64` and `u64::MAX` are one key, `255u8` and
/// `255u64` are one key, and `-1i8` is not `255u8`.
#[test]
fn edge_values_are_their_64_bit_value_on_every_kind() {
    let tiers = common::tiers();
    let sets: [Vec<u64>; 4] = [
        [-128i64, -1, 0, 1, 127].map(|v| v as u64).to_vec(),
        vec![0, 127, 128, 255, 256, 0x7fff, 0x8000, 0xffff],
        [i32::MIN as i64, -32769, -32768, -129, i32::MAX as i64]
            .map(|v| v as u64)
            .to_vec(),
        vec![u32::MAX as u64, 1 << 32, 1 << 63, u64::MAX - 1, u64::MAX],
    ];
    for keys in sets {
        check_kinds::<Ints>(&tiers, &keys).unwrap();
    }
    let mut f = BloomFilter::with_capacity(10, 0.000_001).unwrap();
    f.insert(&-1i8);
    assert!(f.contains(&u64::MAX) && f.contains(&-1i64) && f.contains(&-1isize));
    assert!(!f.contains(&255u8) && !f.contains(&u32::MAX));
}

// ---------------------------------------------------------------------------------------------
// Files written before the `Key` trait
// ---------------------------------------------------------------------------------------------

/// `tests/data/cli-built-v1.bin`: `blockbloom build --fpr 0.01 --seed 0` of these lines, run
/// before the `Key` trait. The CLI hashed each line's bytes then as now.
fn cli_members() -> Vec<String> {
    (0..3000)
        .map(|i| format!("member-{i}"))
        .chain(["ключ-é", "", "tab\tkey"].map(String::from))
        .collect()
}

/// The same bits on tier `isa`: an empty filter of `f`'s shape on that tier, united with it.
fn on_tier(f: &BloomFilter, isa: Isa) -> BloomFilter {
    let mut on = BloomFilter::builder()
        .capacity(f.capacity())
        .size_in_bytes(f.size_in_bytes() as u64)
        .layout(f.layout())
        .probes(f.probes())
        .seed(f.seed())
        .key_hash(f.key_hash())
        .isa(isa)
        .build()
        .unwrap();
    on.union(f).unwrap();
    assert_eq!(&on, f);
    on
}

#[test]
fn a_cli_built_file_finds_every_member_by_every_method() {
    let bytes = std::fs::read(common::data("cli-built-v1.bin")).unwrap();
    let f = BloomFilter::from_bytes(&bytes).unwrap();
    let members = cli_members();
    let tiers = common::tiers();
    let mut view = View {
        filter: f.clone(),
        lines: Vec::new(),
    };
    view.finish();
    for (q, name) in Strings::QUERY.iter().enumerate() {
        let answers = Strings::query(&f, q, &members).unwrap();
        let missed = answers.iter().filter(|&&a| !a).count();
        assert_eq!(
            missed, 0,
            "{name} misses {missed} of the CLI-built file's members"
        );
        assert_eq!(
            Strings::query(&view, q, &members),
            Some(answers),
            "{name}, view"
        );
        for &isa in &tiers {
            let on = on_tier(&f, isa);
            assert_eq!(
                Strings::query(&on, q, &members).unwrap(),
                vec![true; members.len()]
            );
        }
    }
}

/// A file whose string key went in through 0.1's single-key `insert("golden")` (the `Hash`
/// route, with its `0xff` terminator): its integer keys answer on every path, and the string
/// key answers through `ByHash`, the route that wrote it.
#[test]
fn an_old_single_key_string_answers_through_by_hash() {
    let bytes = std::fs::read(common::data("v1-8x64.bin")).unwrap();
    let f = BloomFilter::from_bytes(&bytes).unwrap();
    assert!(f.contains(&ByHash("golden")));
    assert!(f.contains(&ByHash(String::from("golden"))));
    let ints: Vec<u64> = (0..100).collect();
    for (q, name) in Ints::QUERY.iter().enumerate() {
        if let Some(answers) = Ints::query(&f, q, &ints) {
            assert_eq!(answers, vec![true; 100], "{name}");
        }
    }
}

/// Files written while an integer narrower than 64 bits was its own width's bytes (a `u32`
/// its 4 bytes): such keys answer through those bytes (`contains_bytes(&x.to_le_bytes())`, or
/// a batch of the byte strings), as the crate docs say, on every tier; asked as integers they
/// are other keys now.
#[test]
fn keys_written_at_their_own_width_answer_through_their_bytes() {
    // (file, the keys as their old bytes): `tests/format.rs` builds each (hash ids 1, 3, 2).
    let files: [(&str, Vec<Vec<u8>>); 3] = [
        (
            "v1-4x128.bin",
            (1000..1050u32).map(|k| k.to_le_bytes().to_vec()).collect(),
        ),
        (
            "v1-mx32.bin",
            (0..40u32)
                .map(|i| i << 20)
                .chain([7])
                .map(|k| k.to_le_bytes().to_vec())
                .collect(),
        ),
        ("v1-narrow-keys.bin", narrow_golden_keys()),
    ];
    for (name, keys) in files {
        let stored = BloomFilter::from_bytes(&std::fs::read(common::data(name)).unwrap()).unwrap();
        for isa in common::tiers() {
            let f = on_tier(&stored, isa);
            let slices: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
            assert!(
                slices.iter().all(|k| f.contains_bytes(k)),
                "{name} on {isa}: contains_bytes"
            );
            assert_eq!(f.count_batch(&slices), keys.len(), "{name} on {isa}: batch");
        }
        // As integers, the narrow keys are their 64-bit values now: other keys (but for the
        // few that a filter at 1% answers falsely).
        let as_values = keys
            .iter()
            .filter(|k| k.len() < 8)
            .filter(|k| {
                let mut b = [0u8; 8];
                b[..k.len()].copy_from_slice(k);
                stored.contains(&u64::from_le_bytes(b))
            })
            .count();
        assert!(
            as_values * 10 < keys.len(),
            "{name}: {as_values} of {} found as values",
            keys.len()
        );
    }
}

/// The keys of `v1-narrow-keys.bin` as their old bytes (each at its own width), as
/// `tests/format.rs` builds the file.
fn narrow_golden_keys() -> Vec<Vec<u8>> {
    let mut keys: Vec<Vec<u8>> = (0..=255u8).step_by(3).map(|v| vec![v]).collect();
    keys.extend((-50..50i16).map(|i| (i * 301).to_le_bytes().to_vec()));
    keys.extend((0..150u32).map(|i| i.wrapping_mul(0x9e37_79b9).to_le_bytes().to_vec()));
    keys.extend((-100..100i32).map(|i| (i * 7919).to_le_bytes().to_vec()));
    keys
}
