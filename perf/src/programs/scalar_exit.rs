//! Why the scalar reference reads every probe: `layout::contains_scalar` (all `k` bits of a
//! key, no early exit) against the same test stopping at the first clear bit, in interleaved
//! rounds (see `build_pairs.rs`).
//!
//! A scalar-tier filter of the defaults at 1% holding `n` random `u64` keys; each round asks
//! 1,048,576 queries, half members and half not, in a random order (so the exit's branch is
//! not predictable), each hashed by the filter's own hash (`BloomFilter::hash`), then:
//! * `branchless`: `layout::contains_scalar`, the reference every kernel is tested against;
//! * `early-exit`: the same probes, stopping at the first clear bit: fewer reads on a
//!   non-member, a mispredicted branch on most of them.
//!
//! It prints each side's median ns/key and `early-exit / branchless` (above 1: the reference
//! is faster).
//!
//! ```sh
//! cargo run --release -p blockbloom-perf -- scalar-exit 20                  # rounds
//! cargo run --release -p blockbloom-perf -- scalar-exit 20 50000 64000000   # key counts
//! ```

use blockbloom::layout::{block_index, contains_scalar, probe};
use blockbloom::{BloomFilter, Isa};
use blockbloom_perf::out;
use blockbloom_perf::workload::{self, Rng, cpu_name, mixed_queries};
use serde_json::json;

const QUERIES: usize = 1 << 20;
const SIDES: [&str; 2] = ["branchless", "early-exit"];

/// Membership by the reference: every probe read, one branch-free answer.
fn branchless(f: &BloomFilter, key: u64) -> bool {
    let h = f.hash(&key);
    let block = &f.blocks()[block_index(h, f.num_blocks())];
    contains_scalar(block, f.layout(), h as u32, f.probes() as usize)
}

/// Membership by the same probes, stopping at the first clear bit.
fn early_exit(f: &BloomFilter, key: u64) -> bool {
    let h = f.hash(&key);
    let block = &f.blocks()[block_index(h, f.num_blocks())];
    (0..f.probes() as usize).all(|j| {
        let (w, b) = probe(f.layout(), h as u32, j);
        block.0[w] & (1 << b) != 0
    })
}

pub fn main() -> Result<(), blockbloom::Error> {
    let (rounds, sizes) = workload::rounds_and_sizes(20, &[50_000, 1_000_000, 64_000_000]);
    for n in sizes {
        let mut r = Rng(n as u64);
        let members: Vec<u64> = (0..n).map(|_| r.next()).collect();
        let mut f = BloomFilter::builder()
            .capacity(n as u64)
            .fpr(0.01)
            .isa(Isa::Scalar)
            .build()?;
        f.insert_batch(&members);
        let queries = mixed_queries(&mut r, &members, QUERIES);
        let hits =
            |test: fn(&BloomFilter, u64) -> bool| queries.iter().filter(|&&q| test(&f, q)).count();
        // Both answer alike, and every member is found.
        let found = hits(branchless);
        assert_eq!(found, hits(early_exit));
        assert!(found >= QUERIES / 2);
        let times = workload::interleaved(rounds, SIDES.len(), QUERIES, |s| {
            hits([branchless, early_exit][s])
        });
        out!(
            "u64 keys, n = {n}, {} KiB, layout {}, k = {}: {rounds} rounds of {QUERIES} \
             queries; {}",
            f.size_in_bytes() >> 10,
            f.layout(),
            f.probes(),
            cpu_name()
        );
        workload::scope(json!({"keys": "u64", "n": n, "fpr": 0.01}));
        workload::medians(&SIDES, &times, 12);
        let label = "early-exit / branchless";
        out!(
            "  {label}: {}",
            workload::ratio(label, &times[1], &times[0])
        );
    }
    Ok(())
}
