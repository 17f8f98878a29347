//! `ClassicBloomFilter` batches at 1% on the tier `BLOCKBLOOM_ISA` forces (or the dispatcher's
//! choice): insert of `n` keys once, then the fastest of `reps` passes of `count_batch` over
//! the members and over as many absent keys, in ns/key.
//!
//! ```sh
//! cargo run --release -p blockbloom-perf -- classic-batch 5 1000000      # reps, keys
//! ```
//!
//! Under `valgrind --tool=callgrind` (AVX2 at most), the difference between the instruction
//! totals of `reps` = 2 and 0, divided by 4n, is the instructions per batch query key.

use std::time::Instant;

use blockbloom_measure::keys::scrambled;
use blockbloom_perf::out;
use blockbloom_perf::workload::{self, record};
use serde_json::json;

pub fn main() -> Result<(), blockbloom::Error> {
    let (reps, n): (u64, u64) = (workload::arg(1, 5), workload::arg(2, 1_000_000));
    let members: Vec<u64> = (0..n).map(scrambled).collect();
    let absent: Vec<u64> = (n..2 * n).map(scrambled).collect();
    let mut f = blockbloom::ClassicBloomFilter::with_capacity(n, 0.01)?;
    let per_key = |t: Instant| t.elapsed().as_secs_f64() * 1e9 / n as f64;
    let t = Instant::now();
    f.insert_batch(&members);
    let insert = per_key(t);
    let (mut found, mut contains, mut missing) = (0, f64::MAX, f64::MAX);
    for _ in 0..reps {
        let t = Instant::now();
        found += f.count_batch(&members);
        contains = contains.min(per_key(t));
        let t = Instant::now();
        found += f.count_batch(&absent);
        missing = missing.min(per_key(t));
    }
    out!(
        "{} m = {} k = {}: insert {insert:.2}, contains {contains:.2}, absent {missing:.2} ns/key ({found} found)",
        f.isa(),
        f.num_bits(),
        f.probes()
    );
    let (isa, m, k) = (f.isa().name(), f.num_bits(), f.probes());
    workload::scope(json!({"keys": "u64", "n": n, "isa": isa, "bits": m, "probes": k}));
    record("insert", insert);
    if reps > 0 {
        record("contains", contains);
        record("absent", missing);
    }
    Ok(())
}
