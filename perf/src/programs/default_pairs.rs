//! The measurement behind the defaults: each candidate configuration of a new filter (hash id
//! and layout), on every kernel tier this CPU runs, in interleaved rounds (every ratio's sides
//! see the same state of a shared machine; see `build_pairs.rs`).
//!
//! Candidates, each at 1% for `n` keys:
//! * `v2`: hash id 2 (XXH3-64 for integers, AESH-64 for other strings) in the layout of least
//!   memory (8x64 at 1%): the defaults before;
//! * `mx32`: hash id 3 (MX32-64 for keys of 4, 8 and 16 bytes) in the layout of least memory;
//! * `v2-8x32`: hash id 2 in `Layout::Sectors8x32` (one register per key);
//! * `mx32-8x32`: hash id 3 in `Layout::Sectors8x32`: what `BloomFilter::with_capacity` makes
//!   at 1% (asserted).
//!
//! Per tier (`scalar`, `portable` and every SIMD tier the CPU has) and candidate, medians over
//! the rounds of: `u64` batch `count_batch` in calls of 1,024 over 4,194,304 keys streamed (half
//! members); `u64` single-key `contains` over 1,048,576 keys; 16-byte string single-key
//! `contains` over 262,144 keys. Then each candidate's memory at 1% and 0.1% over the least.
//!
//! ```sh
//! cargo run --release -p blockbloom-perf -- default-pairs 10          # rounds
//! cargo run --release -p blockbloom-perf -- default-pairs 10 1000000  # key counts
//! ```

use std::hint::black_box;
use std::time::Instant;

use blockbloom::{BloomFilter, Isa, KeyHash, Layout};
use blockbloom_perf::out;
use blockbloom_perf::workload::{self, Rng, cpu_name};
use serde_json::json;

const BATCH_QUERIES: usize = 1 << 22;
const SINGLE_QUERIES: usize = 1 << 20;
const STRING_QUERIES: usize = 1 << 18;

/// A candidate: its name, hash and layout (`None`: the least memory).
type Candidate = (&'static str, KeyHash, Option<Layout>);

const CANDIDATES: [Candidate; 4] = [
    ("v2", KeyHash::Aesh, None),
    ("mx32", KeyHash::Mx32, None),
    ("v2-8x32", KeyHash::Aesh, Some(Layout::Sectors8x32)),
    ("mx32-8x32", KeyHash::Mx32, Some(Layout::Sectors8x32)),
];

fn build(
    c: &Candidate,
    n: u64,
    fpr: f64,
    isa: Option<Isa>,
) -> Result<BloomFilter, blockbloom::Error> {
    let mut b = BloomFilter::builder().capacity(n).fpr(fpr).key_hash(c.1);
    b = match c.2 {
        Some(l) => b.layout(l),
        None => b.least_memory(),
    };
    if let Some(isa) = isa {
        b = b.isa(isa);
    }
    b.build()
}

pub fn main() -> Result<(), blockbloom::Error> {
    let (rounds, sizes) = workload::rounds_and_sizes(10, &[50_000, 1_000_000]);
    let defaults = BloomFilter::with_capacity(1_000_000, 0.01)?;
    assert_eq!(
        (defaults.key_hash(), defaults.layout()),
        (KeyHash::Mx32, Layout::Sectors8x32),
        "mx32-8x32 is the defaults at 1%"
    );
    out!(
        "the candidates for the defaults, 1%, {rounds} rounds, sides interleaved; tiers {:?}; {}",
        Isa::supported()
            .iter()
            .map(|i| i.name())
            .collect::<Vec<_>>(),
        cpu_name()
    );
    for fpr in [0.01, 0.001] {
        let least = build(&CANDIDATES[0], 1_000_000, fpr, None)?.size_in_bytes() as f64;
        let line: Vec<String> = CANDIDATES
            .iter()
            .map(|c| {
                let f = build(c, 1_000_000, fpr, None).expect("valid");
                let share = f.size_in_bytes() as f64 / least;
                let row =
                    json!({"side": c.0, "n": 1_000_000, "fpr": fpr, "memory_over_least": share});
                workload::record_row(row);
                format!("{} {share:.3}", c.0)
            })
            .collect();
        out!(
            "memory at {fpr} over the least (1M keys): {}; the defaults there: layout {}",
            line.join(", "),
            BloomFilter::with_capacity(1_000_000, fpr)?.layout()
        );
    }
    for n in sizes.into_iter().map(|n| n as u64) {
        let mut r = Rng(n);
        let members: Vec<u64> = (0..n).map(|_| r.next()).collect();
        let strs: Vec<[u8; 16]> = members
            .iter()
            .take(n as usize)
            .map(|m| {
                format!("{m:016x}")
                    .into_bytes()
                    .try_into()
                    .expect("16 bytes")
            })
            .collect();
        let pick = workload::mixed_query;
        let batch_q = workload::mixed_queries(&mut r, &members, BATCH_QUERIES);
        let single_q = workload::mixed_queries(&mut r, &members, SINGLE_QUERIES);
        let string_q: Vec<[u8; 16]> = (0..STRING_QUERIES)
            .map(|i| {
                format!("{:016x}", pick(&mut r, &members, i))
                    .into_bytes()
                    .try_into()
                    .expect("16")
            })
            .collect();
        for isa in Isa::supported() {
            let filters: Vec<BloomFilter> = CANDIDATES
                .iter()
                .map(|c| {
                    let mut f = build(c, n, 0.01, Some(isa)).expect("valid");
                    f.insert_batch(&members);
                    for s in &strs {
                        f.insert_bytes(s);
                    }
                    f
                })
                .collect();
            let k = CANDIDATES.len();
            let mut times = vec![[Vec::new(), Vec::new(), Vec::new()]; k];
            for round in 0..rounds {
                for j in 0..k {
                    let c = (round + j) % k;
                    let f = &filters[c];
                    let t = Instant::now();
                    let hits: usize = batch_q.chunks(1024).map(|q| f.count_batch(q)).sum();
                    black_box(hits);
                    times[c][0].push(t.elapsed().as_secs_f64() * 1e9 / BATCH_QUERIES as f64);
                    let t = Instant::now();
                    let hits = single_q.iter().filter(|q| f.contains(*q)).count();
                    black_box(hits);
                    times[c][1].push(t.elapsed().as_secs_f64() * 1e9 / SINGLE_QUERIES as f64);
                    let t = Instant::now();
                    let hits = string_q.iter().filter(|q| f.contains_bytes(*q)).count();
                    black_box(hits);
                    times[c][2].push(t.elapsed().as_secs_f64() * 1e9 / STRING_QUERIES as f64);
                }
            }
            out!("n = {n}, tier {isa}: median ns/key");
            for (what, i) in [
                ("u64 batch count", 0),
                ("u64 single contains", 1),
                ("16-byte single contains", 2),
            ] {
                let isa = isa.name();
                workload::scope(json!({"keys": what, "n": n, "isa": isa}));
                let names = CANDIDATES.map(|c| c.0);
                let times: Vec<Vec<f64>> = times.iter().map(|t| t[i].clone()).collect();
                out!("  {what:>24}: {}", workload::median_line(&names, &times));
            }
        }
    }
    Ok(())
}
