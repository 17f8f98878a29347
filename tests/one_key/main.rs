//! One key, one answer: every key type, inserted by every path of every filter kind on every
//! tier, is found by every query path of that kind (quickcheck). Before the `Key` trait,
//! `insert(&str)` hashed through `Hash` (with a terminator byte) while the batch, byte and
//! column paths hashed the bytes, so a key inserted one way was missed the other way.
//!
//! Also: what files written before the change answer (a CLI-built file, and a golden file
//! whose string key went through the old `Hash` route).

#[path = "../common/mod.rs"]
mod common;

mod groups;
mod kinds;

use blockbloom::{
    AtomicBloomFilter, BloomFilter, ByHash, ClassicBloomFilter, CountingBloomFilter,
    DeletableBloomFilter, Isa, ScalableBloomFilter, VariableIncrementBloomFilter,
};
use quickcheck::{QuickCheck, TestResult};

use groups::{Group, Strings, Words8, Words16, Words32, Words64, Words128};
use kinds::{Kind, View};

// ---------------------------------------------------------------------------------------------
// The property
// ---------------------------------------------------------------------------------------------

/// Every (tier, insert path, query path) of kind `F` over group `G`'s keys: the first miss,
/// and how many combinations ran.
fn check<G: Group, F: Kind>(tiers: &[Isa], keys: &[G::V]) -> Result<usize, String> {
    let mut ran = 0;
    for &isa in tiers {
        for (ip, insert_name) in G::INSERT.iter().enumerate() {
            let mut f = F::make(isa, keys.len());
            if !G::insert(&mut f, ip, keys) {
                continue;
            }
            f.finish();
            for (qp, query_name) in G::QUERY.iter().enumerate() {
                let Some(answers) = G::query(&f, qp, keys) else {
                    continue;
                };
                ran += 1;
                if let Some(i) = answers.iter().position(|&a| !a) {
                    return Err(format!(
                        "{} on {isa}, {}: inserted by {insert_name}, {query_name} misses key \
                         {i} ({:?})",
                        F::NAME,
                        G::NAME,
                        keys[i]
                    ));
                }
            }
        }
    }
    Ok(ran)
}

fn check_kinds<G: Group>(tiers: &[Isa], keys: &[G::V]) -> Result<usize, String> {
    Ok(check::<G, BloomFilter>(tiers, keys)?
        + check::<G, View>(tiers, keys)?
        + check::<G, AtomicBloomFilter>(tiers, keys)?
        + check::<G, CountingBloomFilter>(tiers, keys)?
        + check::<G, DeletableBloomFilter>(tiers, keys)?
        + check::<G, ScalableBloomFilter>(tiers, keys)?
        + check::<G, ClassicBloomFilter>(tiers, keys)?
        + check::<G, VariableIncrementBloomFilter>(&tiers[..1], keys)?)
}

#[allow(clippy::too_many_arguments)]
fn one_key_one_answer(
    strings: Vec<String>,
    w64: Vec<u64>,
    w32: Vec<u32>,
    w128: Vec<u128>,
    w16: Vec<u16>,
    w8: Vec<u8>,
) -> TestResult {
    let tiers = common::tiers();
    let run = || -> Result<usize, String> {
        Ok(check_kinds::<Strings>(&tiers, &strings)?
            + check_kinds::<Words64>(&tiers, &w64)?
            + check_kinds::<Words32>(&tiers, &w32)?
            + check_kinds::<Words128>(&tiers, &w128)?
            + check_kinds::<Words16>(&tiers, &w16)?
            + check_kinds::<Words8>(&tiers, &w8)?)
    };
    match run() {
        Ok(_) => TestResult::passed(),
        Err(e) => TestResult::error(e),
    }
}

/// The plain filter has every path: with keys, each group runs all of its insert paths
/// against all of its query paths on every tier (so a path that stopped running would show).
#[test]
fn the_plain_filter_runs_every_combination() {
    let tiers = common::tiers();
    let strings: Vec<String> = (0..300).map(|i| format!("user:{i}")).collect();
    let w64: Vec<u64> = (0..300).map(common::splitmix64).collect();
    let full = |insert: usize, query: usize| tiers.len() * insert * query;
    assert_eq!(
        check::<Strings, BloomFilter>(&tiers, &strings),
        Ok(full(Strings::INSERT.len(), Strings::QUERY.len()))
    );
    assert_eq!(
        check::<Words64, BloomFilter>(&tiers, &w64),
        Ok(full(Words64::INSERT.len(), Words64::QUERY.len()))
    );
    let w8: Vec<u8> = (0..=255).collect();
    assert_eq!(
        check::<Words8, BloomFilter>(&tiers, &w8),
        Ok(full(Words8::INSERT.len(), Words8::QUERY.len()))
    );
}

#[test]
fn every_key_type_path_tier_and_kind_finds_every_key() {
    QuickCheck::new()
        .tests(20)
        .quickcheck(one_key_one_answer as fn(_, _, _, _, _, _) -> TestResult);
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
            // The same bits on this tier: an empty filter of the same shape, united with it.
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
            on.union(&f).unwrap();
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
    for (q, name) in Words64::QUERY.iter().enumerate() {
        assert_eq!(
            Words64::query(&f, q, &ints),
            Some(vec![true; 100]),
            "{name}"
        );
    }
}
