//! What sizing costs a constructor: the plan `sizing::plan(n, p)` picks for each case, and the
//! fastest of `reps` timed calls (µs; shared machines are noisy, so compare runs made back to
//! back).
//!
//! ```sh
//! cargo run --release -p blockbloom-perf -- plan-cost 2000          # reps, every case
//! cargo run --release -p blockbloom-perf -- plan-cost 100 1e10 1e-9 # reps, one case
//! cargo run --release -p blockbloom-perf -- plan-cost 100 6463026605 0.3 28 # probes fixed
//! cargo run --release -p blockbloom-perf -- plan-cost 2000 constructors    # whole constructors
//! ```
//!
//! With `constructors`, it times whole constructors instead (the fastest of `reps` calls, µs):
//! `with_capacity` of 1,000 and 1M keys at 1% (the zeroed allocation, the plan remembered per
//! thread after the first) and `with_capacity-cold`, 64 capacities from there in turn, so
//! every construction plans; the counting, shared, deletable and scalable filters' and
//! Parquet's split-block filter's constructors at 1,000 keys; `from_bytes` of a 1,000-key
//! filter (checked header and checksum, then a copy); `best_shape` for 1M keys in 19,532
//! blocks (the shape choice of the `bits_per_key` builders).
//!
//! Instructions per plan, repeatable where time is not (`valgrind`, AVX2 at most): count
//! only inside the planner, for two rep counts (the first call also builds the process's
//! table of shapes), and divide the difference by the difference in calls:
//!
//! ```sh
//! for reps in 9 19; do valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!     --toggle-collect='blockbloom::sizing::plan_for*' \
//!     target/release/blockbloom-perf plan-cost $reps 1e10 1e-9 2>&1 | grep refs; done
//! ```

use std::hint::black_box;

use blockbloom::{
    AtomicBloomFilter, BloomFilter, CountingBloomFilter, DeletableBloomFilter, ScalableBloomFilter,
    parquet::SplitBlockFilter, sizing,
};
use blockbloom_measure::timing::Timing;
use blockbloom_perf::{out, workload};
use serde_json::json;

/// Small and large filters, common and extreme targets, and the slowest plans the grid
/// tests have found.
const CASES: [(u64, f64); 9] = [
    (100, 0.01),
    (1_000, 0.01),
    (1_000_000, 0.01),
    (1_000_000, 1e-4),
    (10_000_000, 1e-8),
    (1_000_000_000, 1e-6),
    (10_000_000_000, 1e-9),
    (17_407_767_402, 7.75e-9),
    (44, 2.4e-3),
];

/// The fastest of `reps` calls of `f`, µs.
fn fastest<R>(reps: u32, f: impl FnMut() -> R) -> f64 {
    Timing::repeat(reps as usize, 1, f).fastest() / 1e3
}

/// Times whole constructors (the `constructors` mode).
fn constructors(reps: u32) -> Result<(), blockbloom::Error> {
    const P: f64 = 0.01;
    let bytes = BloomFilter::with_capacity(1_000, P)?.to_bytes();
    let mut i = 0u64;
    let mut cold = |n: u64| {
        i = (i + 1) % 64;
        BloomFilter::with_capacity(black_box(n + i), P)
    };
    out!("{:>20} {:>9} {:>9}", "constructor", "keys", "µs");
    let row = |name: &str, n: u64, us: f64| {
        out!("{name:>20} {n:>9} {us:>9.2}");
        workload::record_row(json!({"constructor": name, "n": n, "fpr": P, "us_per_call": us}));
    };
    for n in [1_000, 1_000_000] {
        let warm = fastest(reps, || BloomFilter::with_capacity(black_box(n), P));
        row("with_capacity", n, warm);
    }
    for n in [1_000, 1_000_000] {
        row("with_capacity-cold", n, fastest(reps, || cold(n)));
    }
    let n = 1_000;
    let us = fastest(reps, || CountingBloomFilter::with_capacity(black_box(n), P));
    row("counting", n, us);
    let us = fastest(reps, || AtomicBloomFilter::with_capacity(black_box(n), P));
    row("atomic", n, us);
    let us = fastest(reps, || {
        DeletableBloomFilter::with_capacity(black_box(n), P)
    });
    row("deletable", n, us);
    let scalable = || {
        let builder = ScalableBloomFilter::builder().initial_capacity(black_box(n));
        builder.fpr(P).build()
    };
    row("scalable", n, fastest(reps, scalable));
    let us = fastest(reps, || SplitBlockFilter::new_with_ndv_fpp(black_box(n), P));
    row("split_block", n, us);
    row(
        "from_bytes",
        n,
        fastest(reps, || BloomFilter::from_bytes(black_box(&bytes))),
    );
    let shape = || sizing::best_shape(black_box(1_000_000), black_box(19_532), None, None);
    row("best_shape", 1_000_000, fastest(reps, shape));
    Ok(())
}

pub fn main() -> Result<(), blockbloom::Error> {
    let args: Vec<String> = workload::args().skip(1).collect();
    let reps: u32 = args.first().map_or(2000, |s| s.parse().expect("reps"));
    if args.get(1).is_some_and(|a| a == "constructors") {
        return constructors(reps);
    }
    let cases: Vec<(u64, f64)> = match (args.get(1), args.get(2)) {
        (Some(n), Some(p)) => vec![(
            n.parse::<f64>().expect("keys") as u64,
            p.parse().expect("rate"),
        )],
        _ => CASES.to_vec(),
    };
    let probes: Option<u32> = args.get(3).map(|k| k.parse().expect("probes"));
    out!(
        "{:>14} {:>9} {:>12} {:>6} {:>6} {:>9}",
        "keys",
        "fpr",
        "blocks",
        "layout",
        "k",
        "µs"
    );
    for (n, p) in cases {
        let plan = sizing::plan_with(n, p, None, probes)?;
        let best = fastest(reps, || {
            sizing::plan_with(black_box(n), black_box(p), None, probes)
        });
        out!(
            "{n:>14} {p:>9.2e} {:>12} {:>6} {:>6} {best:>9.2}",
            plan.num_blocks,
            plan.layout,
            plan.probes
        );
        let (blocks, layout, k) = (plan.num_blocks, plan.layout.to_string(), plan.probes);
        workload::record_row(json!({
            "n": n, "fpr": p, "blocks": blocks, "layout": layout, "probes": k, "us_per_plan": best
        }));
    }
    Ok(())
}
