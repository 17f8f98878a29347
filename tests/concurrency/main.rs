//! Concurrency: many writers into one `AtomicBloomFilter`, readers during writes, and the
//! atomic and parallel builds against the single-threaded build, bit for bit, on every tier.
//!
//! The many-writer harness is generic over [`Shared`] so that it also runs on [`Racy`], a
//! deliberately broken shadow filter whose insert is load-then-store instead of `fetch_or`:
//! `harness_detects_load_then_store_races` proves the harness can see a lost update at all.
//!
//! No timing assertions. Filters are small on purpose (1 to 256 blocks for the writers), so
//! that threads keep colliding on the same words.

#[path = "../common/mod.rs"]
mod common;

mod harness;
mod racing;

use std::sync::Barrier;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};

use blockbloom::layout::Layout;
use blockbloom::{AtomicBloomFilter, BloomFilter, Builder, Isa, ParallelBuild};
use common::{SplitMix64, tiers};
use quickcheck::{QuickCheck, TestResult};

use harness::{Outcome, Racy, Spec, contended, probe_counts, writers_round};

// ---------------------------------------------------------------------------------------------
// Many writers
// ---------------------------------------------------------------------------------------------

/// Proves: 2, 4, 8 and 16 crossbeam writers sharing one small `AtomicBloomFilter` (1 to 256
/// blocks, both layouts, every tier), through every insert API, with overlapping and disjoint
/// key sets, lose nothing: every key of every writer is found by `contains`, `contains_batch`
/// and `count_batch`, and the words equal the single-threaded build exactly (no bit lost,
/// none extra).
#[test]
fn many_writers_lose_no_insert() {
    let tiers = tiers();
    let sizes = [1u64, 2, 3, 5, 8, 16, 64, 256];
    let mut rng = SplitMix64::new(42);
    for writers in [2, 4, 8, 16] {
        for round in 0..30 {
            let layout = Layout::ALL[round % 2];
            let spec = Spec {
                blocks: sizes[round / 2 % sizes.len()],
                layout,
                probes: probe_counts(layout)[round / 3 % 3],
                seed: round as u64 * 7919,
            };
            let isa = tiers[round % tiers.len()];
            let f = spec.atomic(isa);
            let o = writers_round(&f, spec, writers, &mut rng);
            assert_eq!(
                (o.missing_keys, o.missing_bits, o.extra_bits),
                (0, 0, 0),
                "{writers} writers, {spec:?}, {isa}"
            );
        }
    }
}

/// Proves the harness above can fail: on `Racy` (load-then-store instead of `fetch_or`), the
/// same harness finds inserted keys missing within 200 contended rounds (1-2 blocks, 2-8
/// writers; up to 1000 on a busy machine). A harness that never saw this could not vouch for
/// the real filter.
#[test]
fn harness_detects_load_then_store_races() {
    // 200 rounds nearly always suffice; on a machine busy with other work the broken writers
    // may rarely run at the same time, so up to 4 more batches of 200 are allowed.
    let mut rounds = 0;
    let (mut total, mut rounds_with_losses) = (Outcome::default(), 0);
    while rounds < 1000 && total.missing_keys == 0 {
        let (o, r) = contended(200, rounds as u64, Racy::new);
        total.add(o);
        rounds_with_losses += r;
        rounds += 200;
    }
    eprintln!(
        "racy variant: {rounds_with_losses}/{rounds} rounds lost keys; {} keys and {} bits lost \
         in all",
        total.missing_keys, total.missing_bits
    );
    assert!(
        total.missing_keys > 0,
        "the harness did not catch a single lost update in {rounds} rounds: {total:?}"
    );
    // A lost update loses bits, it never invents them.
    assert_eq!(total.extra_bits, 0);
}

/// Proves: the exact configuration that catches `Racy` finds nothing wrong with the real
/// filter (same rounds, same keys, same thread counts), on the default tier.
#[test]
fn contended_rounds_lose_nothing_on_the_real_filter() {
    let isa = Isa::active().unwrap();
    let (total, _) = contended(200, 0, |spec| spec.atomic(isa));
    assert_eq!(
        (total.missing_keys, total.missing_bits, total.extra_bits),
        (0, 0, 0)
    );
}

// ---------------------------------------------------------------------------------------------
// Readers during writes
// ---------------------------------------------------------------------------------------------

/// Writers insert their keys and publish each run with a `Release` store of a per-writer
/// watermark; readers `Acquire` the watermark and query keys below it with `contains`,
/// `contains_batch`, `count_batch` and on a `snapshot()`. Every such key's insert
/// happened-before the query, so every answer must be "present".
/// Returns how many key checks ran while some writer was still running.
fn readers_during_writes(
    f: &AtomicBloomFilter,
    writers: usize,
    readers: usize,
    per_writer: usize,
) -> usize {
    let keys: Vec<Vec<u64>> = (0..writers)
        .map(|w| common::keys(1000 + w as u64, per_writer))
        .collect();
    let published: Vec<AtomicUsize> = (0..writers).map(|_| AtomicUsize::new(0)).collect();
    let done = AtomicUsize::new(0);
    let (checked, checked_during) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let start = Barrier::new(writers + readers);
    crossbeam::scope(|s| {
        for w in 0..writers {
            let (keys, published, done, start) = (&keys[w], &published[w], &done, &start);
            s.spawn(move |_| {
                start.wait();
                let mut rng = SplitMix64::new(w as u64);
                let mut end = 0;
                let mut api = w;
                while end < keys.len() {
                    let n = (1 + rng.next_u64() as usize % 16).min(keys.len() - end);
                    let run = &keys[end..end + n];
                    match api % 3 {
                        0 => run.iter().for_each(|k| f.insert(k)),
                        1 => f.insert_batch(run),
                        _ => {
                            // Published only after the flush, which makes them visible.
                            let mut w = f.try_writer(1 + run.len() / 2).unwrap();
                            w.insert_batch(run);
                            w.flush();
                            assert_eq!(w.pending(), 0);
                        }
                    }
                    end += n;
                    api += 1;
                    published.store(end, Release);
                    if api.is_multiple_of(8) {
                        // Let the readers in now and then (2 cores, more threads than that).
                        std::thread::yield_now();
                    }
                }
                done.fetch_add(1, Release);
            });
        }
        for r in 0..readers {
            let (keys, published, done, start) = (&keys, &published, &done, &start);
            let (checked, checked_during) = (&checked, &checked_during);
            s.spawn(move |_| {
                start.wait();
                let mut rng = SplitMix64::new(0xabc ^ r as u64);
                let mut pass = 0usize;
                let mut out = Vec::new();
                loop {
                    // Read before the pass: if every writer was done, this pass sees their
                    // final watermarks, and it is the last one.
                    let finished = done.load(Acquire) == writers;
                    for (w, keys) in keys.iter().enumerate() {
                        let m = published[w].load(Acquire);
                        if m == 0 {
                            continue;
                        }
                        // A random published key, and the newest: the likeliest to race.
                        let k = keys[rng.next_u64() as usize % m];
                        assert!(f.contains(&k), "published key {k:#x} not found");
                        assert!(f.contains(&keys[m - 1]), "newest published key not found");
                        let recent = &keys[m.saturating_sub(64)..m];
                        out.resize(recent.len(), false);
                        f.contains_batch(recent, &mut out);
                        assert!(out.iter().all(|&hit| hit), "contains_batch missed a key");
                        if pass.is_multiple_of(32) {
                            assert_eq!(f.count_batch(&keys[..m]), m, "count_batch missed keys");
                        }
                        if pass.is_multiple_of(128) {
                            let snap = f.snapshot();
                            assert_eq!(snap.count_batch(&keys[..m]), m, "snapshot missed keys");
                        }
                        checked.fetch_add(2 + recent.len(), Relaxed);
                        if !finished {
                            checked_during.fetch_add(2 + recent.len(), Relaxed);
                        }
                    }
                    if finished {
                        break;
                    }
                    pass += 1;
                    std::thread::yield_now();
                }
            });
        }
    })
    .unwrap();
    for k in &keys {
        assert_eq!(f.count_batch(k), k.len());
    }
    assert!(checked.load(Relaxed) > 0, "the readers checked nothing");
    checked_during.into_inner()
}

/// Proves: a key whose insert completed (and was published with Release/Acquire) before a
/// query began is always found, by every query API and by a concurrent `snapshot()`, while
/// other writers keep inserting; on tiny contended filters and a larger one, every tier.
#[test]
fn readers_never_miss_published_keys() {
    let mut during = 0;
    for (i, isa) in tiers().into_iter().enumerate() {
        for round in 0..6 {
            let layout = Layout::ALL[(i + round) % 2];
            let spec = Spec {
                blocks: [2u64, 8, 64][round % 3],
                layout,
                probes: probe_counts(layout)[round % 3],
                seed: round as u64,
            };
            let f = spec.atomic(isa);
            during += readers_during_writes(&f, 2 + round % 2, 2, spec.key_budget() / 2);
        }
        let f = BloomFilter::builder()
            .capacity(100_000)
            .fpr(0.01)
            .isa(isa)
            .build_atomic()
            .unwrap();
        during += readers_during_writes(&f, 3, 2, 30_000);
    }
    // Informational (no timing assertion): how much of the checking overlapped the writes.
    eprintln!("readers: {during} key checks while writers were running");
}

/// Proves: 16 writers mixing every way to write (handles with buffers from 1 to 8,192 keys,
/// private handles (their copies published on flush),
/// shared batches long enough to be partitioned by stripe, single-key `insert`, `insert_new`,
/// `insert_batch_new`, byte columns) and 4 readers on one filter of many stripes, every tier:
/// every key a writer published after its call (or flush) returned is found by the readers,
/// and the final filter equals the single-threaded build bit for bit.
#[test]
fn sixteen_mixed_writers_and_four_readers_equal_the_sequential_build() {
    const WRITERS: usize = 16;
    const READERS: usize = 4;
    const PER_WRITER: usize = 6_000;
    for isa in tiers() {
        let build = || {
            BloomFilter::builder()
                .capacity((WRITERS * PER_WRITER) as u64)
                .fpr(0.01)
                .isa(isa)
        };
        let f = build().build_atomic().unwrap();
        let keys: Vec<Vec<u64>> = (0..WRITERS)
            .map(|w| common::keys(0x5151 + w as u64, PER_WRITER))
            .collect();
        let published: Vec<AtomicUsize> = (0..WRITERS).map(|_| AtomicUsize::new(0)).collect();
        let done = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for (w, keys) in keys.iter().enumerate() {
                let (f, published, done) = (&f, &published[w], &done);
                s.spawn(move || {
                    let mut rng = SplitMix64::new(w as u64);
                    let mut handle = match w % 5 {
                        4 => f.try_private_writer().unwrap(),
                        _ => f.try_writer([1, 7, 300, 8192][w % 4]).unwrap(),
                    };
                    let mut end = 0;
                    for step in 0.. {
                        if end == keys.len() {
                            break;
                        }
                        let n = (1 + rng.next_u64() as usize % 300).min(keys.len() - end);
                        let run = &keys[end..end + n];
                        match (w + step) % 6 {
                            0 => {
                                handle.insert_batch(run);
                                handle.flush();
                            }
                            1 => f.insert_batch(run),
                            2 => run.iter().for_each(|k| f.insert(k)),
                            3 => {
                                run.iter().for_each(|k| {
                                    f.insert_new(k);
                                });
                            }
                            4 => {
                                let mut new = vec![false; n];
                                f.insert_batch_new(run, &mut new);
                            }
                            _ => {
                                let bytes: Vec<[u8; 8]> =
                                    run.iter().map(|k| k.to_le_bytes()).collect();
                                let slices: Vec<&[u8]> =
                                    bytes.iter().map(|b| b.as_slice()).collect();
                                let mut h = f.writer();
                                h.insert_batch(&slices);
                                // Byte keys are other keys: insert the integers too.
                                h.insert_batch(run);
                            }
                        }
                        end += n;
                        published.store(end, Release);
                    }
                    drop(handle);
                    done.fetch_add(1, Release);
                });
            }
            for r in 0..READERS {
                let (f, keys, published, done) = (&f, &keys, &published, &done);
                s.spawn(move || {
                    let mut rng = SplitMix64::new(0xdead ^ r as u64);
                    loop {
                        let finished = done.load(Acquire) == WRITERS;
                        for (w, keys) in keys.iter().enumerate() {
                            let m = published[w].load(Acquire);
                            if m > 0 {
                                let k = keys[rng.next_u64() as usize % m];
                                assert!(f.contains(&k), "{isa}: published key {k:#x} missed");
                                let recent = &keys[m.saturating_sub(32)..m];
                                assert_eq!(f.count_batch(recent), recent.len(), "{isa}");
                            }
                        }
                        if finished {
                            break;
                        }
                        std::thread::yield_now();
                    }
                });
            }
        });
        let got = f.into_filter();
        // The reference: every key, plus the byte keys of the steps that inserted them
        // (the writers' random run lengths replayed).
        let mut want = build().isa(Isa::Scalar).build().unwrap();
        for (w, keys) in keys.iter().enumerate() {
            want.insert_batch(keys);
            let mut rng = SplitMix64::new(w as u64);
            let mut end = 0;
            for step in 0.. {
                if end == keys.len() {
                    break;
                }
                let n = (1 + rng.next_u64() as usize % 300).min(keys.len() - end);
                if (w + step) % 6 == 5 {
                    for k in &keys[end..end + n] {
                        want.insert_bytes(&k.to_le_bytes());
                    }
                }
                end += n;
            }
        }
        assert!(
            got.blocks() == want.blocks(),
            "{isa}: bits differ from the sequential build"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Atomic and parallel builds == single-threaded build
// ---------------------------------------------------------------------------------------------

fn fpr_builder(capacity: u64, layout: Layout, probes: u32, seed: u64, isa: Isa) -> Builder {
    BloomFilter::builder()
        .capacity(capacity)
        .fpr(0.01)
        .layout(layout)
        .probes(probes)
        .seed(seed)
        .isa(isa)
}

/// Proves: for every tier, layout and several probe counts, `AtomicBloomFilter` filled by 4
/// threads (u64 and u32 batches, pre-hashed batches, writer handles of many buffer sizes and
/// single inserts, interleaved chunks)
/// and turned `into_filter()` is bit-identical to the plain filter built by `insert_batch` on
/// the scalar tier, and keeps its tier.
#[test]
fn atomic_build_equals_sequential_build_on_every_tier() {
    const THREADS: usize = 4;
    for layout in Layout::ALL {
        for probes in probe_counts(layout) {
            for (capacity, seed) in [(2_000u64, 1u64), (60_000, 0xfeed)] {
                let keys = common::keys(seed ^ probes as u64, capacity as usize);
                let keys32: Vec<u32> = keys[..keys.len() / 4].iter().map(|&k| k as u32).collect();
                let mut want = fpr_builder(capacity, layout, probes, seed, Isa::Scalar)
                    .build()
                    .unwrap();
                want.insert_batch(&keys);
                want.insert_batch(&keys32);
                for isa in tiers() {
                    let f = fpr_builder(capacity, layout, probes, seed, isa)
                        .build_atomic()
                        .unwrap();
                    std::thread::scope(|s| {
                        for t in 0..THREADS {
                            let (f, keys, keys32) = (&f, &keys, &keys32);
                            s.spawn(move || {
                                let chunks = keys.chunks(997).skip(t).step_by(THREADS);
                                for (i, c) in chunks.enumerate() {
                                    match (i + t) % 4 {
                                        0 => f.insert_batch(c),
                                        3 => {
                                            let mut w = f.try_writer(1 + i * 37 % 500).unwrap();
                                            w.insert_batch(c);
                                        }
                                        1 => {
                                            let h: Vec<u64> = c.iter().map(|k| f.hash(k)).collect();
                                            f.insert_hash_batch(&h)
                                        }
                                        _ => c.iter().for_each(|k| f.insert(k)),
                                    }
                                }
                                for c in keys32.chunks(101).skip(t).step_by(THREADS) {
                                    f.insert_batch(c);
                                }
                            });
                        }
                    });
                    let got = f.into_filter();
                    let what = format!("{isa} {layout} k={probes} n={capacity}");
                    assert_eq!(got.isa(), isa, "{what}");
                    assert!(got.blocks() == want.blocks(), "bits differ: {what}");
                    assert_eq!(got, want, "{what}");
                }
            }
        }
    }
}

/// Every parallel build of `keys` into an empty filter made by `make(isa)`, on every tier,
/// with the default rayon pool and with `pool`, against `want`.
fn check_parallel_builds(
    make: impl Fn(Isa) -> BloomFilter,
    prefix: &[u64],
    keys: &[u64],
    want: &BloomFilter,
    pool: &rayon::ThreadPool,
    what: &str,
) {
    type Build<'a> = (&'a str, Box<dyn Fn(&mut BloomFilter) + 'a>);
    let builds: [Build; 5] = [
        ("par_insert_batch", Box::new(|f| f.par_insert_batch(keys))),
        (
            "Partitioned",
            Box::new(|f| f.par_insert_batch_with(keys, ParallelBuild::Partitioned)),
        ),
        (
            "SharedAtomic",
            Box::new(|f| f.par_insert_batch_with(keys, ParallelBuild::SharedAtomic)),
        ),
        (
            "Partitioned, 7-thread pool",
            Box::new(|f| {
                pool.install(|| f.par_insert_batch_with(keys, ParallelBuild::Partitioned))
            }),
        ),
        (
            "SharedAtomic, 7-thread pool",
            Box::new(|f| {
                pool.install(|| f.par_insert_batch_with(keys, ParallelBuild::SharedAtomic))
            }),
        ),
    ];
    for isa in tiers() {
        for (name, build) in &builds {
            let mut f = make(isa);
            f.insert_batch(prefix);
            build(&mut f);
            assert_eq!(f.isa(), isa);
            assert!(
                f.blocks() == want.blocks(),
                "bits differ: {name}, {isa}, {what}"
            );
            assert_eq!(&f, want, "{name}, {isa}, {what}");
        }
    }
}

fn seven_threads() -> rayon::ThreadPool {
    // More workers than cores, and a count that divides no block count used here: uneven
    // partition windows.
    rayon::ThreadPoolBuilder::new()
        .num_threads(7)
        .build()
        .unwrap()
}

/// Proves: `par_insert_batch`, `par_insert_batch_with(Partitioned)` and `(SharedAtomic)` give
/// the single-threaded scalar build bit for bit, on every tier, both layouts and two probe
/// counts each, for a filter beyond 2 MiB (3,000,000 keys at 1%, so the multi-threaded paths
/// are really taken), into a filter that already holds keys, with 2 and 7 rayon workers.
#[test]
fn parallel_builds_equal_sequential_build_beyond_cache() {
    let pool = seven_threads();
    let keys = common::keys(3, 500_000);
    let prefix = common::keys(4, 10_000);
    for layout in Layout::ALL {
        for probes in [layout.sectors(), 16] {
            let make = |isa| {
                fpr_builder(3_000_000, layout, probes, 9, isa)
                    .build()
                    .unwrap()
            };
            let mut want = make(Isa::Scalar);
            assert!(want.size_in_bytes() > 2 << 20, "{}", want.size_in_bytes());
            want.insert_batch(&prefix);
            want.insert_batch(&keys);
            let what = format!("{layout} k={probes}, {} bytes", want.size_in_bytes());
            check_parallel_builds(make, &prefix, &keys, &want, &pool, &what);
        }
    }
}

/// Proves: the parallel builds also equal the sequential build on cache-resident filters
/// (where `par_insert_batch` uses one thread but `par_insert_batch_with` still splits), on
/// filters with fewer blocks than workers (3 blocks, 7 workers), with fewer keys than a rayon
/// task's chunk, and with no keys.
#[test]
fn parallel_builds_equal_sequential_build_small_filters() {
    let pool = seven_threads();
    for (blocks, n) in [
        (3u64, 20_000usize),
        (1, 5_000),
        (100, 1_000),
        (1_000, 50_000),
        (50, 0),
    ] {
        for layout in Layout::ALL {
            let probes = probe_counts(layout)[(blocks % 3) as usize];
            let spec = Spec {
                blocks,
                layout,
                probes,
                seed: blocks,
            };
            let keys = common::keys(blocks ^ 77, n);
            let prefix = common::keys(blocks ^ 78, 100);
            let mut want = spec.builder(Isa::Scalar).build().unwrap();
            want.insert_batch(&prefix);
            want.insert_batch(&keys);
            let make = |isa| spec.builder(isa).build().unwrap();
            check_parallel_builds(make, &prefix, &keys, &want, &pool, &format!("{spec:?}"));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Conversions
// ---------------------------------------------------------------------------------------------

/// Proves: `into_atomic` then `into_filter` keeps every bit, the shape, seed and tier; the
/// atomic filter answers exactly like the plain one in between (false positives included);
/// and with no writer running, `snapshot()` equals `into_filter()`.
#[test]
fn into_atomic_into_filter_round_trip_and_snapshot() {
    for isa in tiers() {
        for layout in Layout::ALL {
            let mut plain = fpr_builder(20_000, layout, probe_counts(layout)[1], 5, isa)
                .build()
                .unwrap();
            let keys = common::keys(11, 20_000);
            plain.insert_batch(&keys);
            let original = plain.clone();

            let atomic = plain.into_atomic();
            assert_eq!(
                (
                    atomic.isa(),
                    atomic.layout(),
                    atomic.probes(),
                    atomic.seed()
                ),
                (isa, layout, original.probes(), 5)
            );
            assert_eq!(atomic.num_blocks(), original.num_blocks());
            assert_eq!(atomic.size_in_bytes(), original.size_in_bytes());
            assert_eq!(atomic.count_batch(&keys), keys.len());
            let others = common::keys(12, 20_000);
            let mut a = vec![false; others.len()];
            let mut p = vec![false; others.len()];
            atomic.contains_batch(&others, &mut a);
            original.contains_batch(&others, &mut p);
            assert_eq!(a, p, "atomic and plain answers differ for non-members");
            for k in &others[..1000] {
                assert_eq!(atomic.contains(k), original.contains(k));
            }
            assert_eq!(atomic.snapshot(), original);

            let back = atomic.into_filter();
            assert_eq!(back, original);
            assert!(back.blocks() == original.blocks());
            assert_eq!((back.isa(), back.capacity()), (isa, original.capacity()));

            // More keys into the atomic form; snapshot and into_filter agree with each other
            // and with the plain filter given the same keys.
            let atomic = back.into_atomic();
            let more = common::keys(13, 5_000);
            atomic.insert_batch(&more);
            let snapshot = atomic.snapshot();
            let owned = atomic.into_filter();
            assert_eq!(snapshot, owned);
            let mut plain_more = original.clone();
            plain_more.insert_batch(&more);
            assert_eq!(owned, plain_more);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Property: any split across threads == sequential order
// ---------------------------------------------------------------------------------------------

/// Proves: any sequence of `u64` inserts, cut at arbitrary points into 1 to 6 contiguous runs,
/// each inserted by its own thread through a generated mix of APIs, gives the filter the
/// sequential `insert_batch` gives; on a generated tier, layout and tiny block count.
#[test]
fn quickcheck_any_split_across_threads_equals_sequential() {
    fn prop(keys: Vec<u64>, cuts: Vec<usize>, threads: u8, shape: u8) -> TestResult {
        let tiers = tiers();
        let threads = 1 + threads as usize % 6;
        let mut bounds: Vec<usize> = cuts
            .iter()
            .take(threads - 1)
            .map(|c| c % (keys.len() + 1))
            .collect();
        bounds.resize(threads - 1, keys.len());
        bounds.push(0);
        bounds.push(keys.len());
        bounds.sort_unstable();
        let layout = Layout::ALL[shape as usize % 2];
        let spec = Spec {
            blocks: 1 + (shape as u64 / 2) % 6,
            layout,
            probes: probe_counts(layout)[(shape as usize / 12) % 3],
            seed: shape as u64,
        };
        let isa = tiers[(shape as usize / 36) % tiers.len()];
        let f = spec.atomic(isa);
        std::thread::scope(|s| {
            for (t, w) in bounds.windows(2).enumerate() {
                let (f, run) = (&f, &keys[w[0]..w[1]]);
                s.spawn(move || match (t + shape as usize) % 3 {
                    0 => f.insert_batch(run),
                    1 => run.iter().for_each(|k| f.insert(k)),
                    _ => {
                        let hashes: Vec<u64> = run.iter().map(|k| f.hash(k)).collect();
                        f.insert_hash_batch(&hashes)
                    }
                });
            }
        });
        let mut want = spec.builder(Isa::Scalar).build().unwrap();
        want.insert_batch(&keys);
        TestResult::from_bool(f.into_filter() == want)
    }
    QuickCheck::new()
        .tests(300)
        .quickcheck(prop as fn(Vec<u64>, Vec<usize>, u8, u8) -> TestResult);
}

/// Proves: a writer handle that is never dropped (leaked) never applies its buffered keys,
/// as `AtomicWriter`'s docs warn; `flush` before the leak applies them.
#[test]
fn a_leaked_writer_loses_its_unflushed_keys() {
    let f = AtomicBloomFilter::with_capacity(1000, 0.000_001).unwrap();
    let mut w = f.try_writer(100).unwrap();
    w.insert_batch(&[1u64, 2, 3]);
    std::mem::forget(w);
    assert_eq!(f.count_batch(&[1u64, 2, 3]), 0);
    let mut w = f.try_writer(100).unwrap();
    w.insert_batch(&[4u64, 5]);
    w.flush();
    std::mem::forget(w);
    assert_eq!(f.count_batch(&[4u64, 5]), 2);
}
