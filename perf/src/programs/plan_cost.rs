//! What sizing costs a constructor: the plan `sizing::plan(n, p)` picks for each case, and the
//! fastest of `reps` timed calls (µs; shared machines are noisy, so compare runs made back to
//! back).
//!
//! ```sh
//! cargo run --release -p blockbloom-perf -- plan-cost 2000          # reps, every case
//! cargo run --release -p blockbloom-perf -- plan-cost 100 1e10 1e-9 # reps, one case
//! cargo run --release -p blockbloom-perf -- plan-cost 100 6463026605 0.3 28 # probes fixed
//! ```
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
use std::time::Instant;

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

pub fn main() -> Result<(), blockbloom::Error> {
    let args: Vec<String> = workload::args().skip(1).collect();
    let reps: u32 = args.first().map_or(2000, |s| s.parse().expect("reps"));
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
        let plan = blockbloom::sizing::plan_with(n, p, None, probes)?;
        let mut best = f64::MAX;
        for _ in 0..reps {
            let t = Instant::now();
            black_box(blockbloom::sizing::plan_with(
                black_box(n),
                black_box(p),
                None,
                probes,
            )?);
            best = best.min(t.elapsed().as_secs_f64() * 1e6);
        }
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
