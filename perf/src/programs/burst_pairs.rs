//! Batches of 8, 32 and 64 keys a call, as a packet filter asks on each receive burst, against
//! 1,024 keys a call and against sbbf-rs's per-key loop, in interleaved rounds (every ratio's
//! sides see the same state of a shared machine; see `build_pairs.rs`).
//!
//! A filter of the defaults (`BloomFilter::with_capacity(n, 0.01)`) of 50k and 1M `u64` keys;
//! each round streams 4,194,304 query keys (32 MiB, half members, read once per round as a
//! NIC's rings deliver them) through every side:
//! * `contains-B`: `contains_batch` in calls of `B` keys (`B` = 8, 32, 64, 1024);
//! * `count-B`: `count_batch` in calls of `B` keys;
//! * `insert-B`: `insert_batch` of members (already in, so the filter stays the same) in calls
//!   of `B` keys;
//! * `sbbf-contains`, `sbbf-insert`: sbbf-rs-safe 0.3 (`peers::Sbbf`: bits per key for the
//!   target rate, 11 at 1%; its AVX2 path) per key: `contains_hash(xxh3_64(key))`,
//!   `insert_hash(..)`.
//!
//! It prints each side's median ns/key, and for each of our sides the sbbf-rs loop's time over
//! ours (above 1: ours is faster) and the 1,024-key call's time over ours (below 1: the call's
//! fixed cost shows).
//!
//! ```sh
//! cargo run --release -p blockbloom-perf -- burst-pairs 20              # rounds
//! cargo run --release -p blockbloom-perf -- burst-pairs 20 1000000      # only these key counts
//! BURST_FPR=0.001 cargo run --release -p blockbloom-perf -- burst-pairs    # another target rate
//! BURST_HASH=moremur-64 cargo run --release -p blockbloom-perf -- burst-pairs # another key hash
//! ```
//!
//! `BURST_HASH` builds our filter with another key hash (a `KeyHash` name: `moremur-64` is
//! hash id 4, the opt-in for single keys and short calls; default: the defaults' hash).
//!
//! `BURST_FPR` sets the target rate (default 0.01; at 0.001 the defaults take the 8x64 layout,
//! and sbbf-rs 17 bits a key: before the peers were defined once, sbbf-rs kept 11 at every
//! rate).

use std::hint::black_box;

use blockbloom::{BloomFilter, KeyHash};
use blockbloom_perf::out;
use blockbloom_perf::peers;
use blockbloom_perf::workload::{self, Rng, cpu_name};
use serde_json::json;

const QUERIES: usize = 1 << 22;
/// Keys per call of our sides.
const CALLS: [usize; 4] = [8, 32, 64, 1024];

/// One measured side.
#[derive(Clone, Copy)]
enum Side {
    Contains(usize),
    Count(usize),
    Insert(usize),
    SbbfContains,
    SbbfInsert,
}

impl Side {
    fn name(self) -> String {
        match self {
            Side::Contains(b) => format!("contains-{b}"),
            Side::Count(b) => format!("count-{b}"),
            Side::Insert(b) => format!("insert-{b}"),
            Side::SbbfContains => "sbbf-contains".into(),
            Side::SbbfInsert => "sbbf-insert".into(),
        }
    }
}

pub fn main() -> Result<(), blockbloom::Error> {
    let (rounds, sizes) = blockbloom_perf::workload::rounds_and_sizes(20, &[50_000, 1_000_000]);
    let fpr: f64 = match std::env::var("BURST_FPR") {
        Ok(v) => v.parse().expect("BURST_FPR: a number, such as 0.001"),
        Err(_) => 0.01,
    };
    let mut sides: Vec<Side> = Vec::new();
    for &b in &CALLS {
        sides.extend([Side::Contains(b), Side::Count(b), Side::Insert(b)]);
    }
    sides.extend([Side::SbbfContains, Side::SbbfInsert]);
    for n in sizes {
        let mut r = Rng(n as u64);
        let members: Vec<u64> = (0..n).map(|_| r.next()).collect();
        let mut f = match std::env::var("BURST_HASH") {
            Ok(name) => BloomFilter::builder()
                .capacity(n as u64)
                .fpr(fpr)
                .key_hash(KeyHash::from_name(&name).expect("BURST_HASH: a KeyHash name"))
                .build()?,
            Err(_) => BloomFilter::with_capacity(n as u64, fpr)?,
        };
        f.insert_batch(&members);
        let mut sb = peers::Sbbf::new(n, fpr);
        for &m in &members {
            sb.insert_u64(m);
        }
        let queries = workload::mixed_queries(&mut r, &members, QUERIES);
        let reinsert: Vec<u64> = (0..QUERIES)
            .map(|_| members[r.next() as usize % n])
            .collect();
        out!(
            "u64 keys, n = {n}, {QUERIES} queries streamed per round, {rounds} rounds, sides \
             interleaved; the defaults at {fpr}: layout {}, hash {} (id {}), k = {}, {} KiB, \
             prefetch depth {}; tier {}; {}",
            f.layout(),
            f.key_hash(),
            f.key_hash().id(),
            f.probes(),
            f.size_in_bytes() >> 10,
            f.prefetch_depth(),
            f.isa(),
            cpu_name()
        );
        let mut out = vec![false; 1024];
        let times = workload::interleaved(rounds, sides.len(), QUERIES, |s| match sides[s] {
            Side::Contains(b) => {
                let mut hits = 0;
                for c in queries.chunks(b) {
                    f.contains_batch(c, &mut out[..c.len()]);
                    hits += out[..c.len()].iter().filter(|&&x| x).count();
                }
                hits
            }
            Side::Count(b) => queries.chunks(b).map(|c| f.count_batch(c)).sum(),
            Side::Insert(b) => {
                reinsert.chunks(b).for_each(|c| f.insert_batch(c));
                black_box(&f).num_blocks() as usize
            }
            Side::SbbfContains => queries.iter().filter(|&&q| sb.contains_u64(q)).count(),
            Side::SbbfInsert => {
                reinsert.iter().for_each(|&q| sb.insert_u64(q));
                black_box(&sb).as_bytes().len()
            }
        });
        workload::scope(json!({"keys": "u64", "n": n, "fpr": fpr}));
        let names: Vec<String> = sides.iter().map(|s| s.name()).collect();
        workload::medians(
            &names.iter().map(String::as_str).collect::<Vec<_>>(),
            &times,
            14,
        );
        let index = |want: &str| sides.iter().position(|s| s.name() == want).expect("a side");
        for (s, side) in sides.iter().enumerate() {
            let (peer, big) = match side {
                Side::Contains(_) => ("sbbf-contains", "contains-1024"),
                Side::Count(_) => ("sbbf-contains", "count-1024"),
                Side::Insert(_) => ("sbbf-insert", "insert-1024"),
                _ => continue,
            };
            for over in [peer, big] {
                if over == side.name() {
                    continue;
                }
                let label = format!("{over} / {}", side.name());
                let summary = workload::ratio(&label, &times[index(over)], &times[s]);
                out!("  {label}: {summary}");
            }
        }
    }
    Ok(())
}
