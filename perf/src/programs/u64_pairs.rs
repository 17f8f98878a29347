//! Batch `contains` of `u64` keys against the peers at 50k, 1M and 64M keys and 1%, measured
//! in interleaved rounds so that every ratio's sides see the same state of a shared machine
//! (see `build_pairs.rs` for why criterion's windows do not).
//!
//! Each filter is asked two query arrays, half members and half not: 65,536 keys (512 KiB,
//! which stay in the cache between rounds) and 4,194,304 keys (32 MiB, streamed from memory
//! every round, as the `blockbloom-perf` suite's 4M lookups are); at 64M keys only the
//! streamed one. Sides, in a rotating order per round:
//! * `batch-xxh3`: `count_batch` in calls of 1,024 keys, hash id 2 (XXH3-64 for `u64` keys)
//!   in the layout of least memory: the defaults before hash id 3 and the 8x32 rule;
//! * `batch-mx32`: the same on hash id 3 (MX32-64, 32-bit lane multiplies);
//! * `batch-8x32`: `BloomFilter::with_capacity`, the defaults: hash id 3 in layout id 3
//!   (`Layout::Sectors8x32`, which the rule picks at 1%: a key's probes in one 256-bit half, one
//!   register per key);
//! * `sbbf-rs`: sbbf-rs-safe's `contains_hash(xxh3_64(key))` per key (`peers::Sbbf`: 11 bits a
//!   key at 1%, 0.8%), its AVX2 path where the CPU has it;
//! * `fastbloom`: fastbloom 0.17 at 1% with foldhash (`peers::fastbloom_fold`), `contains` per
//!   key;
//! * `parquet`: parquet's `Sbbf` at 1% (`peers::parquet_sbbf`, XXH64), `check` per key;
//! * `batch-mm64`: the defaults but hash id 4 (`KeyHash::Moremur`, MM64: 64-bit lane
//!   multiplies, three 32-bit products each on AVX2), the opt-in for single keys;
//! * `hashed`: the hash id 3 filter's `count_hash_batch` over the queries' hashes computed
//!   beforehand: the probe alone, as if hashing cost nothing (the floor a faster hash could
//!   reach);
//! * `hashed-8x32`: the same for the `batch-8x32` filter;
//! * `lines`: per query, a load of the same 64-byte line of an array the filter's size (its
//!   block index computed beforehand) and nothing else: the memory's floor under any probe.
//! * `split-hashed`: `count_hash_batch` of a Parquet-layout filter (256-bit blocks, one
//!   register of 32-bit lanes per key) of 11 bits a key over the same hashes: the probe alone
//!   on half the vector work of ours.
//!
//! It prints each side's median ns/key, and for each of our batches the best peer's time over
//! the batch's (the median and quartiles over the rounds: above 1, ours is faster), and the
//! same for `hashed`. `U64_PAIRS_DEPTH=N` sets our filters' prefetch depth (default: the
//! filter's own choice).
//! `BLOCKBLOOM_ISA=avx2` (or `scalar`, `portable`, `avx512`, `neon`) forces our tier; the
//! first line names the tier and the CPU.
//!
//! ```sh
//! cargo run --release -p blockbloom-perf -- u64-pairs 100        # rounds (64M keys: a fifth of them)
//! cargo run --release -p blockbloom-perf -- u64-pairs 100 1000000  # only these key counts
//! ```

use blockbloom::parquet::SplitBlockFilter;
use blockbloom::{BloomFilter, KeyHash};
use blockbloom_perf::out;
use blockbloom_perf::peers;
use blockbloom_perf::workload::{self, Rng, cpu_name};
use serde_json::json;

const BATCH: usize = 1024;
const SIDES: [&str; 11] = [
    "batch-xxh3",
    "batch-mx32",
    "batch-8x32",
    "batch-mm64",
    "hashed",
    "hashed-8x32",
    "lines",
    "split-hashed",
    "sbbf-rs",
    "fastbloom",
    "parquet",
];
/// The sides that are ours (the rest are peers).
const OURS: usize = 8;

pub fn main() -> Result<(), blockbloom::Error> {
    let (rounds, sizes) = workload::rounds_and_sizes(100, &[50_000, 1_000_000, 64_000_000]);
    let probe = BloomFilter::with_capacity(1, 0.01)?;
    out!(
        "u64 keys, count_batch vs sbbf-rs, fastbloom and parquet at 1%: {rounds} rounds, sides \
         interleaved; tier {}; {}",
        probe.isa(),
        cpu_name()
    );
    for n in sizes {
        let mut r = Rng(n as u64);
        let members: Vec<u64> = (0..n).map(|_| r.next()).collect();
        // `Some((hash, least))`: that hash, in the layout of least memory if `least`.
        let build_in = |hash: Option<(KeyHash, bool)>| -> Result<BloomFilter, blockbloom::Error> {
            let mut f = match hash {
                Some((h, least)) => {
                    let b = BloomFilter::builder()
                        .capacity(n as u64)
                        .fpr(0.01)
                        .key_hash(h);
                    if least { b.least_memory() } else { b }.build()?
                }
                None => BloomFilter::with_capacity(n as u64, 0.01)?,
            };
            f.insert_batch(&members);
            if let Some(d) = std::env::var("U64_PAIRS_DEPTH")
                .ok()
                .and_then(|d| d.parse().ok())
            {
                f.set_prefetch_depth(d)?;
            }
            Ok(f)
        };
        let ours = [
            build_in(Some((KeyHash::Aesh, true)))?,
            build_in(Some((KeyHash::Mx32, true)))?,
            build_in(None)?,
            build_in(Some((KeyHash::Moremur, false)))?,
        ];
        assert_eq!(
            (ours[2].layout(), ours[2].key_hash()),
            (blockbloom::Layout::Sectors8x32, KeyHash::Mx32),
            "the defaults at 1%"
        );
        let mut sb = peers::Sbbf::new(n, 0.01);
        let mut fast = peers::fastbloom_fold(n, 0.01);
        let mut pq = peers::parquet_sbbf(n, 0.01);
        for m in &members {
            sb.insert_u64(*m);
            fast.insert(m);
            pq.insert(m);
        }
        let query_sets: &[usize] = if n > 10_000_000 {
            &[1 << 22]
        } else {
            &[1 << 16, 1 << 22]
        };
        let rounds = if n > 10_000_000 {
            rounds.div_ceil(5)
        } else {
            rounds
        };
        for &queries in query_sets {
            let q = workload::mixed_queries(&mut r, &members, queries);
            let hashes: Vec<u64> = q.iter().map(|k| ours[1].hash(k)).collect();
            let blocks = ours[1].num_blocks();
            let lines = vec![[1u64; 8]; blocks as usize];
            let mut split =
                SplitBlockFilter::from_bitset(&vec![0; (n * 11 / 8).div_ceil(32) * 32])?;
            for m in &members {
                split.insert_hash(ours[1].hash(m));
            }
            let index: Vec<u32> = hashes
                .iter()
                .map(|&h| blockbloom::layout::block_index(h, blocks) as u32)
                .collect();
            let side = |s: usize| -> usize {
                match s {
                    0..=3 => q.chunks(BATCH).map(|c| ours[s].count_batch(c)).sum(),
                    4 => hashes
                        .chunks(BATCH)
                        .map(|c| ours[1].count_hash_batch(c))
                        .sum(),
                    5 => hashes
                        .chunks(BATCH)
                        .map(|c| ours[2].count_hash_batch(c))
                        .sum(),
                    6 => index
                        .iter()
                        .map(|&i| {
                            let line = &lines[i as usize];
                            (line[0] & line[7]) as usize
                        })
                        .sum(),
                    7 => hashes
                        .chunks(BATCH)
                        .map(|c| split.count_hash_batch(c))
                        .sum(),
                    8 => q.iter().filter(|&&k| sb.contains_u64(k)).count(),
                    9 => q.iter().filter(|k| fast.contains(k)).count(),
                    _ => q.iter().filter(|k| pq.check(*k)).count(),
                }
            };
            // Every side finds every member (and a few false positives); `lines` counts
            // every query.
            for (s, name) in SIDES.iter().enumerate() {
                let hits = side(s);
                assert!(hits >= queries / 2, "{name}: {hits}");
            }
            let times = workload::interleaved(rounds, SIDES.len(), queries, side);
            out!(
                "8x32 filter: {} KiB, {} probes, depth {}",
                ours[2].size_in_bytes() >> 10,
                ours[2].probes(),
                ours[2].prefetch_depth()
            );
            out!(
                "{n} keys (filter {} KiB, prefetch depth {}), {queries} queries ({} KiB):",
                ours[0].size_in_bytes() >> 10,
                ours[0].prefetch_depth(),
                queries * 8 / 1024
            );
            workload::scope(json!({"keys": "u64", "n": n, "queries": queries}));
            let medians = workload::medians(&SIDES, &times, 10);
            // The best peer of this set: the lowest median.
            let best = (OURS..SIDES.len())
                .min_by(|&a, &b| medians[a].total_cmp(&medians[b]))
                .expect("peers");
            for (s, name) in SIDES.iter().enumerate().take(OURS) {
                let label = format!("{} / {name}", SIDES[best]);
                out!(
                    "  {label}: {}",
                    workload::ratio(&label, &times[best], &times[s])
                );
            }
        }
    }
    Ok(())
}
