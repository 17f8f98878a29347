//! Batch `contains` of `u64` keys against sbbf-rs (XXH3 of the key's 8 little-endian bytes, the
//! best peer of the `blockbloom-perf` suite's `u64` rows) at 50k and 1M keys and 1%, measured
//! in interleaved rounds so that every ratio's two sides see the same state of a shared
//! machine (see `build_pairs.rs` for why criterion's windows do not).
//!
//! Each filter is asked two query arrays, half members and half not: 65,536 keys (512 KiB,
//! which stay in the cache between rounds) and 4,194,304 keys (32 MiB, streamed from memory
//! every round, as the suite's 4M lookups are). Sides, in a rotating order per round:
//! * `batch`: `count_batch` in calls of 1,024 keys;
//! * `sbbf`: sbbf-rs-safe's `contains_hash(xxh3_64(key))` per key (sized at 11 bits a key,
//!   0.8%, the suite's pick for 1%).
//!
//! It prints each side's median ns/key and the median and quartiles over the rounds of
//! `sbbf`'s time over `batch`'s.
//!
//! ```sh
//! cargo run --release --example u64_pairs -- 100   # rounds
//! ```

use std::hint::black_box;
use std::time::Instant;

use blockbloom::BloomFilter;
use pairs::{Rng, median, ratio_summary};
use xxhash_rust::xxh3::xxh3_64;

mod pairs;

const BATCH: usize = 1024;

fn main() -> Result<(), blockbloom::Error> {
    let rounds: usize = std::env::args().nth(1).map_or(100, |s| {
        s.parse()
            .ok()
            .filter(|&v| v > 0)
            .expect("a positive number of rounds")
    });
    println!("u64 keys, count_batch vs sbbf-rs at 1%: {rounds} rounds, sides interleaved");
    for n in [50_000usize, 1_000_000] {
        let mut r = Rng(n as u64);
        let members: Vec<u64> = (0..n).map(|_| r.next()).collect();
        let mut bb = BloomFilter::with_capacity(n as u64, 0.01)?;
        bb.insert_batch(&members);
        let mut sb = sbbf_rs_safe::Filter::new(11, n);
        for &m in &members {
            sb.insert_hash(xxh3_64(&m.to_le_bytes()));
        }
        for queries in [1usize << 16, 1 << 22] {
            let q: Vec<u64> = (0..queries)
                .map(|i| {
                    if i % 2 == 0 {
                        members[(r.next() % n as u64) as usize]
                    } else {
                        r.next()
                    }
                })
                .collect();
            let batch = || q.chunks(BATCH).map(|c| bb.count_batch(c)).sum::<usize>();
            let sbbf = || {
                q.iter()
                    .filter(|k| sb.contains_hash(xxh3_64(&k.to_le_bytes())))
                    .count()
            };
            // Both find every member (and a few false positives).
            let hits = [batch(), sbbf()];
            assert!(hits.iter().all(|&h| h >= queries / 2), "{hits:?}");

            let mut times: [Vec<f64>; 2] = Default::default();
            for round in 0..rounds {
                for j in 0..2 {
                    let side = (round + j) % 2;
                    let t = Instant::now();
                    black_box(if side == 0 { batch() } else { sbbf() });
                    times[side].push(t.elapsed().as_secs_f64() * 1e9 / queries as f64);
                }
            }
            println!(
                "{n} keys (filter {} KiB, prefetch depth {}), {queries} queries ({} KiB):",
                bb.size_in_bytes() >> 10,
                bb.prefetch_depth(),
                queries * 8 / 1024
            );
            for (name, i) in [("batch", 0), ("sbbf", 1)] {
                println!(
                    "{name:>8}: median {:.2} ns/key",
                    median(&mut times[i].clone())
                );
            }
            println!("  sbbf / batch: {}", ratio_summary(&times[1], &times[0]));
        }
    }
    Ok(())
}
