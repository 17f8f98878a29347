//! A fixed workload to count the instructions of one small `contains_batch` call under
//! callgrind: a filter of the defaults for 50k `u64` keys at 1% (50k members), asked 80,000
//! keys in calls of `N` keys (default 8). Each call goes through `ask`, which is never inlined,
//! so callgrind's inclusive count of `burst_instructions::ask` divided by the number of calls
//! (80,000 / `N`) is one call's cost, answers included:
//!
//! ```sh
//! cargo build --release -p blockbloom-perf
//! BLOCKBLOOM_ISA=avx2 valgrind --tool=callgrind --callgrind-out-file=cg.out \
//!     target/release/blockbloom-perf burst-instructions 8
//! callgrind_annotate --inclusive=yes cg.out | grep 'burst_instructions::ask'   # / 10,000
//! ```

use std::hint::black_box;

use blockbloom::BloomFilter;
use blockbloom_measure::keys::scrambled;
use blockbloom_perf::{out, workload};
use serde_json::json;

const QUERIES: usize = 80_000;

/// One call, kept out of line so that callgrind counts it apart.
#[inline(never)]
fn ask(filter: &BloomFilter, keys: &[u64], out: &mut [bool]) {
    filter.contains_batch(keys, out)
}

pub fn main() -> Result<(), blockbloom::Error> {
    let per_call: usize = workload::arg(1, 8);
    assert!(per_call > 0, "keys per call: a positive integer");
    let keys: Vec<u64> = (0..QUERIES as u64).map(scrambled).collect();
    let mut filter = BloomFilter::with_capacity(50_000, 0.01)?;
    filter.insert_batch(&keys[..50_000]);
    let mut out = vec![false; per_call];
    let mut found = 0;
    for call in keys.chunks_exact(per_call) {
        ask(&filter, black_box(call), &mut out);
        found += out.iter().filter(|&&a| a).count();
    }
    out!(
        "{} calls of {per_call} keys, {found} answered maybe",
        QUERIES / per_call
    );
    // Its figure is callgrind's count; the row is the workload that count divides by.
    let calls = QUERIES / per_call;
    workload::record_row(json!({"keys_per_call": per_call, "calls": calls, "maybe": found}));
    Ok(())
}
