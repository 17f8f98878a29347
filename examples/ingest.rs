//! A bounded-channel ingest pipeline feeding one shared [`AtomicBloomFilter`].
//!
//! What it demonstrates:
//!
//! * **Many writers, no lock.** `P` producer threads generate keys (SplitMix64) and send them
//!   in batches of 4096 through a `crossbeam::channel::bounded` channel, whose capacity gives
//!   back-pressure; `W` writer threads receive the batches and `insert_batch` them into one
//!   `AtomicBloomFilter` through `&self`.
//! * **Reads during writes.** After a batch's insert returns, its writer *publishes* it to a
//!   reader thread over a second channel (the send/receive orders the insert before the read).
//!   The reader queries every published key, which must be found 100% of the time, and keys
//!   known never to be inserted, whose hits give the false-positive rate observed while the
//!   filter is still filling.
//! * **Per-writer counters without false sharing**, each in its own
//!   `crossbeam::utils::CachePadded<AtomicU64>` cache line.
//! * **Hand-over.** When the writers are done, `into_filter()` turns the atomic filter into a
//!   plain `BloomFilter` without copying; every key is then verified with `count_batch`, and
//!   the final false-positive rate is measured against the target.
//!
//! ```text
//! cargo run --release --example ingest -- --keys 10000000 --producers 2 --writers 2
//! ```

use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Instant;

use blockbloom::{AtomicBloomFilter, BloomFilter};
use crossbeam::channel::{TrySendError, bounded};
use crossbeam::utils::CachePadded;

/// Keys per batch sent through the channel.
const BATCH: usize = 4096;
/// Target false-positive rate of the filter at `--keys` keys.
const TARGET_FPR: f64 = 0.01;
/// Member keys are SplitMix64 outputs `0..keys` of this stream; non-members are outputs from
/// `keys` on. SplitMix64 is a bijection of its counter, so the two sets never overlap.
const STREAM: u64 = 0x696e_6765_7374; // "ingest"

/// Output `i` of the SplitMix64 stream seeded with `STREAM`.
fn splitmix64(i: u64) -> u64 {
    let mut z = STREAM.wrapping_add(i.wrapping_add(1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

struct Args {
    keys: u64,
    producers: usize,
    writers: usize,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        keys: 10_000_000,
        producers: 2,
        writers: 2,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        if flag == "--help" || flag == "-h" {
            return Err(String::new());
        }
        if !["--keys", "--producers", "--writers"].contains(&flag.as_str()) {
            return Err(format!("unknown argument {flag}"));
        }
        let value = it.next().ok_or(format!("{flag} needs a value"))?;
        let n: u64 =
            (value.replace('_', "").parse()).map_err(|e| format!("{flag} {value}: {e}"))?;
        match flag.as_str() {
            "--keys" => args.keys = n,
            "--producers" => args.producers = n as usize,
            _ => args.writers = n as usize,
        }
    }
    if args.keys == 0 || args.producers == 0 || args.writers == 0 {
        return Err("--keys, --producers and --writers must be at least 1".into());
    }
    Ok(args)
}

/// What the reader saw while the writers were running.
#[derive(Default)]
struct ReaderStats {
    published_batches: u64,
    published_keys: u64,
    published_hits: u64,
    non_members: u64,
    false_positives: u64,
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            if !e.is_empty() {
                eprintln!("error: {e}");
            }
            eprintln!("usage: ingest [--keys N] [--producers P] [--writers W]");
            return ExitCode::from(2);
        }
    };
    let Args {
        keys,
        producers,
        writers,
    } = args;

    let filter = match AtomicBloomFilter::with_capacity(keys, TARGET_FPR) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    println!(
        "ingest: {keys} keys, {producers} producers -> bounded({}) batches of {BATCH} -> \
         {writers} writers -> 1 AtomicBloomFilter ({:.1} MiB, k = {}, {} layout, {} kernel), \
         1 reader",
        4 * writers,
        filter.size_in_bytes() as f64 / (1 << 20) as f64,
        filter.probes(),
        filter.layout(),
        filter.isa()
    );

    let (batch_tx, batch_rx) = bounded::<Vec<u64>>(4 * writers);
    // Published batches: the reader may fall behind, so writers never block on it and drop
    // publications it has no room for (they are counted).
    let (published_tx, published_rx) = bounded::<Vec<u64>>(64);
    let inserted: Vec<CachePadded<AtomicU64>> = (0..writers)
        .map(|_| CachePadded::new(AtomicU64::new(0)))
        .collect();
    let unpublished = CachePadded::new(AtomicU64::new(0));

    let start = Instant::now();
    let stats = crossbeam::scope(|s| {
        for p in 0..producers as u64 {
            let batch_tx = batch_tx.clone();
            // Producer `p` makes keys `lo..hi` of the stream.
            let (lo, hi) = (
                keys * p / producers as u64,
                keys * (p + 1) / producers as u64,
            );
            s.spawn(move |_| {
                let mut i = lo;
                while i < hi {
                    let end = hi.min(i + BATCH as u64);
                    let batch: Vec<u64> = (i..end).map(splitmix64).collect();
                    batch_tx.send(batch).expect("writers hung up");
                    i = end;
                }
            });
        }
        drop(batch_tx); // the channel closes when the last producer is done

        for counter in &inserted {
            let (batch_rx, published_tx) = (batch_rx.clone(), published_tx.clone());
            let (filter, unpublished) = (&filter, &unpublished);
            s.spawn(move |_| {
                for batch in batch_rx {
                    filter.insert_batch(&batch);
                    counter.fetch_add(batch.len() as u64, Relaxed);
                    match published_tx.try_send(batch) {
                        Ok(()) => {}
                        Err(TrySendError::Full(_)) => {
                            unpublished.fetch_add(1, Relaxed);
                        }
                        Err(TrySendError::Disconnected(_)) => panic!("reader hung up"),
                    }
                }
            });
        }
        drop(published_tx); // the reader's channel closes when the last writer is done

        let reader = s.spawn(|_| {
            let mut st = ReaderStats::default();
            let mut hits = vec![false; BATCH];
            let mut next_non_member = keys;
            for batch in published_rx {
                // Every key of a published batch was inserted before it was sent.
                let out = &mut hits[..batch.len()];
                filter.contains_batch(&batch, out);
                let found = out.iter().filter(|&&h| h).count() as u64;
                assert!(
                    found == batch.len() as u64 && filter.contains(&batch[batch.len() - 1]),
                    "a published key was not found: {found} of {}",
                    batch.len()
                );
                st.published_batches += 1;
                st.published_keys += batch.len() as u64;
                st.published_hits += found;
                // As many never-inserted keys, for the false-positive rate so far.
                let others: Vec<u64> = (next_non_member..next_non_member + batch.len() as u64)
                    .map(splitmix64)
                    .collect();
                next_non_member += others.len() as u64;
                st.non_members += others.len() as u64;
                st.false_positives += filter.count_batch(&others) as u64;
            }
            st
        });
        reader.join().expect("reader panicked")
    })
    .expect("a pipeline thread panicked");
    let elapsed = start.elapsed();

    let counts: Vec<u64> = inserted.iter().map(|c| c.load(Relaxed)).collect();
    let total: u64 = counts.iter().sum();
    println!(
        "inserted {total} keys in {:.3} s: {:.1} M keys/s",
        elapsed.as_secs_f64(),
        total as f64 / elapsed.as_secs_f64() / 1e6
    );
    for (w, c) in counts.iter().enumerate() {
        println!(
            "  writer {w}: {c:>10} keys ({:.1}%)",
            100.0 * *c as f64 / total.max(1) as f64
        );
    }
    println!(
        "reader during ingest: {} published batches, {}/{} published keys found ({:.2}%); \
         {} batches not published (reader busy)",
        stats.published_batches,
        stats.published_hits,
        stats.published_keys,
        100.0 * stats.published_hits as f64 / stats.published_keys.max(1) as f64,
        unpublished.load(Relaxed)
    );
    println!(
        "  false positives during ingest (filter still filling): {}/{} = {:.3}%",
        stats.false_positives,
        stats.non_members,
        100.0 * stats.false_positives as f64 / stats.non_members.max(1) as f64
    );

    // The writers are done: hand the bits over to a plain filter, without copying.
    let filter: BloomFilter = filter.into_filter();
    let verify = Instant::now();
    let mut found = 0u64;
    let mut chunk = Vec::with_capacity(1 << 16);
    for start in (0..keys).step_by(1 << 16) {
        chunk.clear();
        chunk.extend((start..keys.min(start + (1 << 16))).map(splitmix64));
        found += filter.count_batch(&chunk) as u64;
    }
    println!(
        "into_filter(): {found}/{keys} keys found by count_batch ({:.3} s)",
        verify.elapsed().as_secs_f64()
    );
    let probes = 10_000_000u64;
    let others: Vec<u64> = (2 * keys..2 * keys + probes).map(splitmix64).collect();
    let fp = filter.count_batch(&others);
    println!(
        "final false-positive rate: {:.3}% observed on {probes} non-members, target {:.3}%, \
         expected from the bits {:.3}%",
        100.0 * fp as f64 / probes as f64,
        100.0 * TARGET_FPR,
        100.0 * filter.expected_fpr()
    );

    let ok = total == keys && found == keys && stats.published_hits == stats.published_keys;
    if ok {
        println!("OK: no key lost");
        ExitCode::SUCCESS
    } else {
        eprintln!("FAILED: keys were lost");
        ExitCode::FAILURE
    }
}
