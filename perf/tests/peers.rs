//! The peers (`blockbloom_perf::peers`): each answers as a filter must, the suite measures
//! them after the kernels, and the atomic builds have no false negatives.

use blockbloom::Isa;
use blockbloom_measure::concurrent::{self, ConcurrentPlan, Method};
use blockbloom_measure::keys::{self, Workload};
use blockbloom_measure::progress::Progress;
use blockbloom_measure::subject::measure;
use blockbloom_measure::suite::{self, Kind, SuitePlan};

use blockbloom_measure::subject::Subject;
use blockbloom_perf::peers::*;

#[test]
fn sbbf_budget_for_one_percent_is_near_the_parquet_table() {
    // Parquet's table gives about 10.5 bits per key for 1%; integer budgets round up.
    let b = sbbf_bits_per_key(1_000_000, 0.01);
    assert!((10..=12).contains(&b), "{b}");
}

#[test]
fn every_peer_has_no_false_negatives() {
    let w = Workload::generate(2000, 4000, 1).unwrap();
    for peer in SUITE {
        let (name, mut filter) = (peer.build)(2000, 0.01);
        let m = measure(filter.as_mut(), &w, 1);
        assert_eq!(m.false_negatives, 0, "{name}");
        assert!(!m.count_mismatch, "{name}");
        assert!(m.fpr() < 0.05, "{name}: {}", m.fpr());
    }
    let mut sbbf = Sbbf::with_bytes(4096);
    assert_eq!(sbbf.size_in_bytes(), 4096);
    assert_eq!(measure(&mut sbbf, &w, 1).false_negatives, 0);
}

#[test]
fn the_suite_measures_peers_after_the_kernels() {
    let mut plan = SuitePlan::standard(5000, 1, &SUITE);
    plan.queries = 10_000;
    plan.isas = vec![Isa::Scalar];
    let r = suite::run(&plan, &Progress::quiet()).unwrap();
    let kinds: Vec<Kind> = r.rows.iter().map(|row| row.kind).collect();
    assert_eq!(
        kinds,
        [
            Kind::Kernel(Isa::Scalar),
            Kind::SingleKey,
            Kind::Peer("fastbloom (SipHash)"),
            Kind::Peer("fastbloom (foldhash)"),
            Kind::Peer("sbbf-rs-safe"),
        ]
    );
    let sbbf = r.get(Kind::Peer(SBBF_SUITE.label)).unwrap();
    assert!(sbbf.name.starts_with("sbbf-rs-safe 0.3.2, XXH3-64, new("));
    assert!(r.problems().is_empty(), "{:?}", r.problems());
}

#[test]
fn fastbloom_atomic_builds_have_no_false_negatives() {
    let keys = keys::members(30_000, 3).unwrap();
    let methods = [
        Method::Plain,
        Method::Peer(FASTBLOOM_SIP),
        Method::Peer(FASTBLOOM_FOLD),
    ];
    let mut plan = ConcurrentPlan::new(30_000, 0.01, Isa::detect(), &[2], &methods);
    plan.reps = 1;
    let r = concurrent::run(&plan, &keys, &Progress::quiet()).unwrap();
    assert!(r.problems.is_empty(), "{:?}", r.problems);
    assert_eq!(r.row(Method::Peer(FASTBLOOM_FOLD)).unwrap().cells.len(), 2);
    assert!(r.peer_bytes.is_some());
    let text = r.describe(&[]);
    assert!(
        text.contains("fastbloom has no false negatives on the first 100,000 keys"),
        "{text}"
    );
}
