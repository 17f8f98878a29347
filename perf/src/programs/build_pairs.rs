//! Construction plus fill of a 1,000-key filter at 1% against parquet's `Sbbf` and sbbf-rs,
//! measured in interleaved rounds, so that both sides of every ratio see the same state of a
//! shared machine.
//!
//! Criterion times one implementation for seconds and then the next, and this host's speed
//! drifts by tens of percent between such windows, so its ratios between implementations
//! moved from 1.80x to 2.94x over three runs of the same code. Here each round times a
//! batch of builds of each implementation back to back (in a rotating order) and takes their
//! ratio; the program prints the median time of each side and the median and quartiles of
//! the ratio over the rounds (a round's extremes are interrupts, not the code).
//!
//! * `cold`: `BloomFilter::with_capacity(1000 + i, 0.01)` with `i` taking 64 values in turn
//!   (more than a thread remembers), so every construction plans, then `insert_batch`.
//! * `warm`: the same capacity every time (its plan remembered after the first), then
//!   `insert_batch`.
//! * `parquet-sbbf`: `Sbbf::new_with_ndv_fpp(1000, 0.01)` (`peers::parquet_sbbf`), then
//!   `insert` of each key.
//! * `sbbf-xxh3`: sbbf-rs-safe at the bits per key its users pick for 1% (`peers::Sbbf`, a
//!   constant chosen outside the rounds), then `insert_hash` of each key's XXH3-64.
//!
//! ```sh
//! cargo run --release -p blockbloom-perf -- build-pairs 400 16   # rounds, builds per batch
//! ```

use std::hint::black_box;

use blockbloom::BloomFilter;
use blockbloom_measure::keys::scrambled;
use blockbloom_perf::out;
use blockbloom_perf::peers;
use blockbloom_perf::workload::{self, median};
use serde_json::json;

const KEYS: u64 = 1000;
const FPR: f64 = 0.01;
const SIDES: [&str; 4] = ["blockbloom-cold", "blockbloom", "parquet-sbbf", "sbbf-xxh3"];

pub fn main() -> Result<(), blockbloom::Error> {
    let (rounds, batch): (usize, usize) = (workload::arg(1, 400), workload::arg(2, 16));
    assert!(rounds > 0 && batch > 0, "rounds and builds are positive");
    let keys: Vec<u64> = (0..KEYS).map(scrambled).collect();
    let build = |capacity: u64| -> Result<BloomFilter, blockbloom::Error> {
        let mut f = BloomFilter::with_capacity(capacity, FPR)?;
        f.insert_batch(&keys);
        Ok(f)
    };
    let build_sbbf = || {
        let mut f = peers::parquet_sbbf(KEYS as usize, FPR);
        keys.iter().for_each(|k| f.insert(k));
        f
    };
    let bits_per_key = peers::sbbf_bits_per_key(KEYS as usize, FPR);
    let build_sbbf_rs = || {
        let mut f = peers::Sbbf::with_bits_per_key(bits_per_key, KEYS as usize);
        keys.iter().for_each(|&k| f.insert_u64(k));
        f
    };
    // Every key of each is found (the work was done), and one build of each warms up.
    assert_eq!(build(KEYS)?.count_batch(&keys), keys.len());
    let s = build_sbbf();
    assert!(keys.iter().all(|k| s.check(k)));
    let s = build_sbbf_rs();
    assert!(keys.iter().all(|&k| s.contains_u64(k)));

    // Nanoseconds per build, per side and round.
    let mut next = 0u64;
    let times = workload::interleaved(rounds, SIDES.len(), batch, |side| {
        for _ in 0..batch {
            match side {
                0 => {
                    next = (next + 1) % 64;
                    black_box(build(KEYS + next).expect("valid").num_blocks())
                }
                1 => black_box(build(KEYS).expect("valid").num_blocks()),
                2 => black_box(build_sbbf().num_blocks() as u64),
                _ => black_box(build_sbbf_rs().as_bytes().len() as u64),
            };
        }
    });
    out!("build_1000 at {FPR}: {rounds} rounds of {batch} builds per side, sides interleaved");
    workload::scope(json!({"keys": "u64", "n": KEYS, "fpr": FPR}));
    for (name, t) in SIDES.iter().zip(&times) {
        let us = median(&mut t.clone()) / 1e3;
        workload::record_value(name, "us_per_build", us);
        out!("{name:>16}: median {us:.2} us");
    }
    for (peer, p) in [("sbbf", 2), ("sbbf-xxh3", 3)] {
        for (name, i) in [("cold", 0), ("warm", 1)] {
            let label = format!("{peer} / {name}");
            out!("{label}: {}", workload::ratio(&label, &times[p], &times[i]));
        }
    }
    Ok(())
}
