//! A fixed batch workload to count instructions per key under callgrind: `contains_batch` of
//! 65,536 keys of one kind, in calls of 1,024, on a filter sized for 1M keys at 1% (1.2 MiB,
//! so its default prefetch depth is this CPU's: prefetched past an L2 smaller than that).
//! The filter's 1,000 members go in one at a time (`insert_bytes`), outside the kernel, so
//! callgrind's inclusive count of `blockbloom::kernel::Kernel::run` is the batches alone:
//!
//! ```sh
//! cargo build --release -p blockbloom-perf
//! valgrind --tool=callgrind --callgrind-out-file=cg.out \
//!     target/release/blockbloom-perf batch-instructions strings 8   # or: hashes, u64
//! callgrind_annotate --inclusive=yes cg.out | grep 'Kernel::run'   # divide by 65,536
//! ```
//!
//! `strings LEN`: byte strings of LEN bytes (`&[&[u8]]`); `hashes`: the same keys' hashes
//! (`contains_hash_batch`: the probe without the hash); `u64`: integers, hashed in lanes
//! (XXH3, the default hash id 2's); `u64-mx32`: the same on a filter of hash id 3 (MX32).
//!
//! `shared CALL`: the integers inserted into an `AtomicBloomFilter` of the same size on one
//! thread, `insert_batch` of CALL keys at a time (the path that holds every stripe's lock
//! for each call). Two call sizes side by side give a call's fixed cost, and where it goes:
//!
//! ```sh
//! for call in 500 4000; do valgrind --tool=callgrind --callgrind-out-file=cg.$call \
//!     target/release/blockbloom-perf batch-instructions shared $call; done
//! callgrind_annotate --inclusive=yes cg.500 | grep -E 'insert_keys|Stripes::hold|hash_keys'
//! ```
//!
//! (the row's `calls` is what the counts divide by).
//!
//! A third argument repeats the queries that many times, which makes the program a timing
//! workload for comparing two builds as whole processes, in alternating pairs:
//!
//! ```sh
//! farm-bench -n 10 --vs 'OLD/batch_instructions hashes 8 3000' -- NEW/batch_instructions hashes 8 3000
//! ```

use std::hint::black_box;

use blockbloom::{AtomicBloomFilter, BloomFilter, KeyHash};
use blockbloom_measure::keys::scrambled;
use blockbloom_perf::workload;

const QUERIES: u64 = 1 << 16;
const BATCH: usize = 1024;

pub fn main() -> Result<(), blockbloom::Error> {
    let kind: String = workload::arg(1, "strings".into());
    let (len, reps): (usize, usize) = (workload::arg(2, 8), workload::arg(3, 1));
    if kind == "shared" {
        return shared(len, reps);
    }
    let ints: Vec<u64> = (0..QUERIES).map(scrambled).collect();
    let keys: Vec<Vec<u8>> = ints
        .iter()
        .map(|i| {
            let mut v = i.to_le_bytes().to_vec();
            v.resize(len, b'x');
            v
        })
        .collect();
    let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
    let hashes: Vec<u64> = refs
        .iter()
        .map(|k| blockbloom::hash::hash_bytes(k, 0))
        .collect();
    let hash = if kind == "u64-mx32" {
        KeyHash::Mx32
    } else {
        KeyHash::default()
    };
    let mut f = BloomFilter::builder()
        .capacity(1_000_000)
        .fpr(0.01)
        .key_hash(hash)
        .build()?;
    for k in &refs[..1000] {
        f.insert_bytes(k);
    }
    // Under valgrind this is the depth for the L2 its emulated CPUID reports.
    eprintln!(
        "{kind}: {} KiB filter, prefetch depth {}",
        f.size_in_bytes() >> 10,
        f.prefetch_depth()
    );
    let mut out = vec![false; BATCH];
    let mut hits = 0;
    for c in (0..reps).flat_map(|_| 0..QUERIES as usize / BATCH) {
        let r = c * BATCH..(c + 1) * BATCH;
        match kind.as_str() {
            "strings" => f.contains_batch(&refs[r], &mut out),
            "hashes" => f.contains_hash_batch(&hashes[r], &mut out),
            "u64" | "u64-mx32" => f.contains_batch(&ints[r], &mut out),
            other => panic!("unknown kind {other:?}: strings, hashes, u64, u64-mx32 or shared"),
        }
        hits += out.iter().filter(|&&x| x).count();
    }
    // The string members come back (the first 1,000 keys are in the first call's batch).
    assert!(kind.starts_with("u64") || hits >= 1000, "{hits}");
    black_box(hits);
    // Its figure is callgrind's count; the row is the workload that count divides by.
    let (bytes, depth) = (f.size_in_bytes(), f.prefetch_depth());
    workload::record_row(serde_json::json!({
        "kind": kind, "len": len, "queries": QUERIES as usize * reps, "hits": hits,
        "filter_bytes": bytes, "prefetch_depth": depth,
    }));
    Ok(())
}

/// `shared CALL`: the 65,536 integers into an `AtomicBloomFilter` for 1M keys, `call` at a time.
fn shared(call: usize, reps: usize) -> Result<(), blockbloom::Error> {
    assert!(call > 0, "CALL must be at least 1");
    let ints: Vec<u64> = (0..QUERIES).map(scrambled).collect();
    let f = AtomicBloomFilter::with_capacity(1_000_000, 0.01)?;
    for _ in 0..reps {
        for c in ints.chunks(call) {
            f.insert_batch(c);
        }
    }
    assert_eq!(f.count_batch(&ints), ints.len(), "a key was lost");
    workload::record_row(serde_json::json!({
        "kind": "shared", "len": call, "queries": QUERIES as usize * reps,
        "calls": reps * ints.len().div_ceil(call), "filter_bytes": f.size_in_bytes(),
    }));
    Ok(())
}
