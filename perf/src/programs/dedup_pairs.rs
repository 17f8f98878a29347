//! Deduplicating a stream, as a flow table or a crawler's seen-set does: `u64` keys, 3/4 of
//! them repeats, into an empty filter of the defaults sized for the distinct keys at 1%, in
//! interleaved rounds (see `build_pairs.rs`). Each round builds each side's filter afresh
//! (its construction is timed with it) and counts the keys it reports new:
//! * `insert_batch_new`: `BloomFilter::insert_batch_new` in calls of 1,024 keys;
//! * `insert_new`: `BloomFilter::insert_new` per key;
//! * `fastbloom-foldhash`: fastbloom 0.17 (`peers::fastbloom_fold`), whose `insert` returns
//!   whether the key was there.
//!
//! The stream holds `n / 4` distinct keys, each four times, in a random order. It prints each
//! side's median ns/key and the peer's time over each of ours (above 1: ours is faster).
//!
//! ```sh
//! cargo run --release -p blockbloom-perf -- dedup-pairs 20                # rounds
//! cargo run --release -p blockbloom-perf -- dedup-pairs 20 4000000        # stream lengths
//! ```

use blockbloom::BloomFilter;
use blockbloom_measure::keys::scrambled;
use blockbloom_perf::workload::{self, Rng, cpu_name};
use blockbloom_perf::{out, peers};
use serde_json::json;

const FPR: f64 = 0.01;
const BATCH: usize = 1024;
const SIDES: [&str; 3] = ["insert_batch_new", "insert_new", "fastbloom-foldhash"];

pub fn main() -> Result<(), blockbloom::Error> {
    let (rounds, sizes) = workload::rounds_and_sizes(20, &[50_000, 1_000_000]);
    for n in sizes {
        let distinct = (n / 4).max(1) as u64;
        let mut r = Rng(5);
        let stream: Vec<u64> = (0..n).map(|_| scrambled(r.next() % distinct)).collect();
        let mut out = vec![false; BATCH];
        let mut run = |side: usize| -> Result<usize, blockbloom::Error> {
            Ok(match side {
                0 => {
                    let mut f = BloomFilter::with_capacity(distinct, FPR)?;
                    let calls = stream.chunks(BATCH);
                    calls
                        .map(|c| f.insert_batch_new(c, &mut out[..c.len()]))
                        .sum()
                }
                1 => {
                    let mut f = BloomFilter::with_capacity(distinct, FPR)?;
                    stream.iter().filter(|k| f.insert_new(*k)).count()
                }
                _ => {
                    let mut f = peers::fastbloom_fold(distinct as usize, FPR);
                    stream.iter().filter(|k| !f.insert(*k)).count()
                }
            })
        };
        // Every side reports about the distinct keys new (fewer by its false positives).
        for side in 0..SIDES.len() {
            let new = run(side)? as u64;
            assert!(
                new <= distinct && new >= distinct * 95 / 100,
                "{new} of {distinct}"
            );
        }
        let times = workload::interleaved(rounds, SIDES.len(), n, |s| run(s).expect("valid"));
        let cpu = cpu_name();
        out!("u64 stream of {n} keys, {distinct} distinct, at {FPR}: {rounds} rounds; {cpu}");
        workload::scope(json!({"keys": "u64", "n": n, "distinct": distinct, "fpr": FPR}));
        workload::medians(&SIDES, &times, 18);
        for (i, side) in SIDES[..2].iter().enumerate() {
            let label = format!("fastbloom-foldhash / {side}");
            out!(
                "  {label}: {}",
                workload::ratio(&label, &times[2], &times[i])
            );
        }
    }
    Ok(())
}
