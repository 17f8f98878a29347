//! Many threads filling one shared filter, against fastbloom's atomic filter and against our
//! plain filter on one thread, in interleaved rounds (every ratio's sides see the same state
//! of a shared machine; see `build_pairs.rs`).
//!
//! Each side builds a filter for `n` `u64` keys at 1% and inserts them, **construction
//! included** (allocating and zeroing the filter is part of building one), the keys split
//! into one contiguous share per thread. Sides:
//! * `handles`: `AtomicBloomFilter`, one [`writer`](blockbloom::AtomicBloomFilter::writer)
//!   per thread (the default choice: a private handle up to 4 MiB, a buffering one above),
//!   `insert_batch` of `call` keys at a time, dropped (flushed) at the end;
//! * `handles-buffer` and `handles-private`: the same with each kind forced
//!   ([`try_writer`](blockbloom::AtomicBloomFilter::try_writer) with the default buffer,
//!   [`try_private_writer`](blockbloom::AtomicBloomFilter::try_private_writer));
//! * `shared-batch`: `AtomicBloomFilter::insert_batch(&self, ..)` of `call` keys at a time
//!   from every thread;
//! * `single-key`: `AtomicBloomFilter::insert(&self, &key)`, one call per key;
//! * `fastbloom`: fastbloom 0.17's `AtomicBloomFilter` with foldhash (sized by fastbloom for
//!   1%), `insert(&key)` per key (it has no batch insert);
//! * `plain`: our `BloomFilter::insert_batch` of `call` keys at a time on **one** thread,
//!   whatever the thread count: the line a shared filter's per-thread speed approaches;
//! * `floor-plain` (one thread), `floor-atomic` and `floor-stores` (every thread): the keys'
//!   patterns, from hashes computed before the clock starts, OR'd into a buffer of the
//!   filter's size with nothing else; `floor-atomic` with relaxed `fetch_or`s, `floor-stores`
//!   with relaxed loads and stores, both into one buffer all threads share (see
//!   `ingest_floor.rs`). They bound what the memory system allows on this CPU; checked to
//!   set the filter's own bits.
//!
//! It prints, per size and thread count, each side's median wall-clock ns per key, then per
//! round: fastbloom's time over each of ours (above 1: ours is faster), each shared side's
//! per-thread time (wall time times threads) over the plain filter's, and (for more than one
//! thread) each side's one-thread time over its time at this thread count (the speed-up), and
//! each shared side's time over the floors' at the same thread count (how far above the floor).
//!
//! `call`, the keys per `insert_batch` call, is the fourth argument: ingest arrives in small
//! batches (a Kafka consumer polls 500 records by default; a packet path hands over bursts of
//! 32 to 256), so the default runs 500, 1,000 and 4,096 keys a call.
//!
//! ```sh
//! cargo run --release -p blockbloom-perf -- ingest-pairs 5 1000000,16000000 1,2 500,1000,4096   # rounds, sizes, threads, calls
//! ```

use std::hint::black_box;
use std::time::Instant;

use blockbloom::{AtomicBloomFilter, BloomFilter};
use blockbloom_perf::out;
use blockbloom_perf::peers;
use blockbloom_perf::workload::{self, Rng, median};
use serde_json::json;

use super::ingest_floor;

const SIDES: [&str; 10] = [
    "handles",
    "shared-batch",
    "single-key",
    "fastbloom",
    "plain",
    "floor-plain",
    "floor-atomic",
    "floor-stores",
    "handles-buffer",
    "handles-private",
];

/// Our shared sides (each against fastbloom, the plain filter and the floors).
const SHARED: [usize; 5] = [0, 8, 9, 1, 2];

/// The sides' input: the keys, and their hashes under the defaults (for the floors).
struct Input {
    keys: Vec<u64>,
    hashes: Vec<u64>,
    num_blocks: u64,
}

impl Input {
    fn new(n: usize) -> Result<Input, blockbloom::Error> {
        let mut r = Rng(n as u64);
        let keys: Vec<u64> = (0..n).map(|_| r.next()).collect();
        let mut f = BloomFilter::with_capacity(n as u64, 0.01)?;
        let hashes: Vec<u64> = keys.iter().map(|k| f.hash(k)).collect();
        let num_blocks = f.num_blocks();
        // The floors set the filter's own bits (8x32 at 8 probes, the defaults at 1%).
        assert_eq!(
            (f.layout(), f.probes()),
            (blockbloom::Layout::Sectors8x32, 8)
        );
        hashes.iter().for_each(|&h| f.insert_hash(h));
        let mut blocks = ingest_floor::zeroed(num_blocks as usize);
        ingest_floor::plain(ingest_floor::words(&mut blocks), num_blocks, &hashes);
        let same = f.blocks() == &blocks[..];
        assert!(same, "the floor sets other bits than the filter");
        Ok(Input {
            keys,
            hashes,
            num_blocks,
        })
    }
}

/// Builds the filter of `side` for `keys` on `threads` threads and returns the seconds it took
/// and the filter's answer for one member (so nothing is optimised away).
fn build(
    side: usize,
    input: &Input,
    threads: usize,
    call: usize,
) -> Result<(f64, bool), blockbloom::Error> {
    let keys = &input.keys;
    let n = keys.len();
    let share = n.div_ceil(threads);
    let probe = keys[n / 2];
    let t = Instant::now();
    let found = match side {
        0..=2 | 8 | 9 => {
            let f = AtomicBloomFilter::with_capacity(n as u64, 0.01)?;
            std::thread::scope(|s| {
                for part in keys.chunks(share) {
                    let f = &f;
                    s.spawn(move || match side {
                        0 | 8 | 9 => {
                            let mut w = match side {
                                0 => f.writer(),
                                8 => f
                                    .try_writer(blockbloom::AtomicWriter::DEFAULT_BUFFER)
                                    .expect("a buffer"),
                                _ => f.try_private_writer().expect("a copy"),
                            };
                            part.chunks(call).for_each(|c| w.insert_batch(c));
                        }
                        1 => part.chunks(call).for_each(|c| f.insert_batch(c)),
                        _ => part.iter().for_each(|k| f.insert(k)),
                    });
                }
            });
            f.contains(&probe)
        }
        3 => {
            let f = peers::atomic_fastbloom_fold(n, 0.01);
            std::thread::scope(|s| {
                for part in keys.chunks(share) {
                    let f = &f;
                    s.spawn(move || {
                        part.iter().for_each(|k| {
                            f.insert(k);
                        })
                    });
                }
            });
            f.contains(&probe)
        }
        4 => {
            let mut f = BloomFilter::with_capacity(n as u64, 0.01)?;
            keys.chunks(call).for_each(|c| f.insert_batch(c));
            f.contains(&probe)
        }
        5 => {
            let mut blocks = ingest_floor::zeroed(input.num_blocks as usize);
            let words = ingest_floor::words(&mut blocks);
            ingest_floor::plain(words, input.num_blocks, &input.hashes);
            ingest_floor::covers(words, input.num_blocks, input.hashes[n / 2])
        }
        _ => {
            let mut blocks = ingest_floor::zeroed(input.num_blocks as usize);
            let words = ingest_floor::words(&mut blocks);
            let shared = ingest_floor::as_atomic(words);
            std::thread::scope(|s| {
                for part in input.hashes.chunks(share) {
                    s.spawn(move || match side {
                        6 => ingest_floor::shared::<true>(shared, input.num_blocks, part),
                        _ => ingest_floor::shared::<false>(shared, input.num_blocks, part),
                    });
                }
            });
            ingest_floor::covers(words, input.num_blocks, input.hashes[n / 2])
        }
    };
    Ok((t.elapsed().as_secs_f64(), black_box(found)))
}

fn run(
    n: usize,
    rounds: usize,
    thread_counts: &[usize],
    call: usize,
) -> Result<(), blockbloom::Error> {
    let input = Input::new(n)?;
    // times[t][side]: ns/key per round.
    let mut times = vec![vec![Vec::new(); SIDES.len()]; thread_counts.len()];
    for round in 0..rounds {
        for (ti, &threads) in thread_counts.iter().enumerate() {
            for j in 0..SIDES.len() {
                let side = (round + j) % SIDES.len();
                let (secs, found) = build(side, &input, threads, call)?;
                assert!(found, "{}: a member is missing", SIDES[side]);
                times[ti][side].push(secs * 1e9 / n as f64);
            }
        }
    }
    for (ti, &threads) in thread_counts.iter().enumerate() {
        let t = &times[ti];
        out!(
            "u64 keys, n = {n}, threads = {threads}, {call} keys a call (1%, construction \
             included, {rounds} rounds):"
        );
        workload::scope(json!({"keys": "u64", "n": n, "threads": threads, "call": call}));
        let line: Vec<String> = (0..SIDES.len())
            .map(|s| {
                let m = median(&mut t[s].clone());
                workload::record(SIDES[s], m);
                format!("{} {m:.2}", SIDES[s])
            })
            .collect();
        out!("  ns/key: {}", line.join(", "));
        let ratio = |label: String, num: &[f64], den: &[f64]| {
            out!("  {label}: {}", workload::ratio(&label, num, den));
        };
        for ours in SHARED {
            ratio(format!("fastbloom / {}", SIDES[ours]), &t[3], &t[ours]);
        }
        for ours in SHARED.into_iter().chain([3]) {
            let per_thread: Vec<f64> = t[ours].iter().map(|x| x * threads as f64).collect();
            let label = format!("{} per thread / plain", SIDES[ours]);
            ratio(label, &per_thread, &t[4]);
        }
        for ours in SHARED.into_iter().filter(|&s| s != 2).chain([4]) {
            for floor in [5, 6, 7] {
                if ours == 4 && floor != 5 {
                    continue;
                }
                ratio(
                    format!("{} / {}", SIDES[ours], SIDES[floor]),
                    &t[ours],
                    &t[floor],
                );
            }
        }
        if threads > 1
            && let Some(one) = thread_counts.iter().position(|&c| c == 1)
        {
            for side in SHARED.into_iter().chain([3, 6, 7]) {
                let label = format!("{} speed-up, 1 thread / {threads}", SIDES[side]);
                ratio(label, &times[one][side], &t[side]);
            }
        }
    }
    Ok(())
}

fn list(arg: Option<String>, default: Vec<usize>) -> Vec<usize> {
    arg.map_or(default, |s| {
        s.split(',')
            .map(|v| {
                v.parse()
                    .ok()
                    .filter(|&v| v > 0)
                    .expect("positive numbers separated by commas")
            })
            .collect()
    })
}

pub fn main() -> Result<(), blockbloom::Error> {
    let mut args = blockbloom_perf::workload::args().skip(1);
    let rounds = list(args.next(), vec![5])[0];
    let sizes = list(args.next(), vec![1_000_000, 16_000_000, 64_000_000]);
    let threads = list(args.next(), {
        let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
        let mut t = vec![1, 2];
        if cores > 2 {
            t.push(cores);
        }
        t
    });
    let calls = list(args.next(), vec![500, 1000, 4096]);
    let cpu = blockbloom_perf::workload::cpu_name();
    out!(
        "shared-filter ingest, u64 keys, 1%: {rounds} rounds, sides interleaved; {cpu}; kernel {}; \
         {} logical CPUs",
        blockbloom::Isa::active()?,
        std::thread::available_parallelism().map_or(1, |c| c.get())
    );
    for &n in &sizes {
        for &call in &calls {
            run(n, rounds, &threads, call)?;
        }
    }
    Ok(())
}
