//! Concurrent insert: many threads filling one filter, against one thread and against
//! fastbloom's `AtomicBloomFilter`.
//!
//! Every case inserts `u64` keys into a filter sized for `n` keys at a 1% false-positive
//! target, hashing inside the timed region. Criterion reports keys/s
//! (`Throughput::Elements`); the time per iteration divided by the element count is wall-clock
//! ns/key, whatever the number of threads. Each method runs at 1, 2, 4 and 8 threads; check
//! `nproc`: on a 2-core machine 4 and 8 threads only show what oversubscription costs.
//!
//! Cases (benchmark ids are `concurrent_insert/<size>/<method>/t<threads>`):
//!
//! * `plain/t1`: the baseline, `BloomFilter::insert_batch` on one thread, batches of `BATCH`.
//! * `atomic-shared/tT`: one `AtomicBloomFilter`; `T` scoped threads (`std::thread::scope`,
//!   spawned inside the timed region, as an application would) each insert a contiguous
//!   `1/T` of the slice with `insert_batch` in batches of `BATCH`.
//! * `par-partitioned/tT` and `par-shared-atomic/tT`:
//!   `BloomFilter::par_insert_batch_with(slice, ParallelBuild::Partitioned | SharedAtomic)`
//!   inside `pool.install` of a rayon pool built with `num_threads(T)` (pools are built once,
//!   outside the timing). `par_insert_batch_with` never falls back to one thread, unlike
//!   `par_insert_batch`.
//! * `per-thread-or-merge/tT`: `T` plain filters, one per scoped thread, each inserting `1/T`
//!   of the slice with `insert_batch`; then, for `T > 1`, `T` scoped threads OR the filters'
//!   `blocks()` into one pre-allocated `Vec<Block>` (each thread a contiguous range of blocks).
//!   The library has no union or from-blocks constructor, so the merged blocks stay a
//!   `Vec<Block>`; a union API would make the same pass (read `T` filters, write one). Both
//!   phases are timed. The merge reads `T` whole filters whatever the slice length, so at
//!   `dram`, where an iteration inserts only 8M of the 100M keys, the merge is charged to 8M
//!   keys instead of the 100M a whole build would spread it over: this row overstates the
//!   per-key cost of a whole build. `or-merge-only/tT` times the merge alone, with
//!   `Throughput::Elements(n)`, i.e. per key of a whole build, so the two can be told apart.
//! * `fastbloom-atomic-sip/tT` and `fastbloom-atomic-foldhash/tT`: one
//!   `fastbloom::AtomicBloomFilter` (0.17; `with_false_pos(0.01).expected_items(n)`, its
//!   default SipHash-1-3 hasher or foldhash `fast::RandomState`), shared by `T` scoped threads,
//!   each calling the single-key `insert(&self, &u64)` on its share (it has no batch API).
//!
//! **Why the atomic cases restore the filter before every iteration.** A plain insert ORs its
//! pattern into the block unconditionally, and fastbloom's atomic insert `fetch_or`s every bit
//! unconditionally, so re-inserting present keys costs what the first insert did: those cases
//! reuse one filter across iterations (`b.iter`). blockbloom's `AtomicBloomFilter` (and the
//! `SharedAtomic` build, which uses it) reads each word first and skips the `fetch_or` when
//! the word already has the key's bits; re-inserting the same slice would time reads only,
//! and inserting ever new keys would keep filling the filter beyond its capacity. So the
//! atomic cases use `iter_batched(.., BatchSize::PerIteration)`: before every timed
//! iteration, outside the timing, the filter is reset by cloning a snapshot (`clone` +
//! zero-copy `into_atomic`), and every iteration inserts the same slice into that state. The
//! snapshot holds the keys *before* the slice:
//!
//! * `l3`: the slice is all `n` keys and the snapshot is empty, so an iteration is a whole
//!   build, from empty to full;
//! * `dram`: the slice is the middle 8,388,608 keys of the 100M (from key 45,805,696) and the
//!   snapshot holds the 45.8M before them, so an iteration is the middle of a whole build,
//!   where the share of skipped words is about its average over the build.
//!
//! The plain cases start from the same snapshot (their cost does not depend on it).
//!
//! Sizes (`n`, filter bytes at 1%, keys per iteration):
//!
//! * `l3`:   n = 1_000_000   (~1.2 MiB filter), all keys per iteration
//! * `dram`: n = 100_000_000 (~120 MiB filter), 8_388_608 keys per iteration (1_048_576 for
//!   fastbloom, whose per-key cost does not depend on how many keys an iteration has); the
//!   keys take 800 MB and are generated once. The size names describe the usual cache
//!   hierarchy; a virtual machine may report a large shared L3 (`lscpu`).
//!
//! Running (a full run took a little over 3 minutes on a 2-core machine; criterion warns that
//! the slowest cases cannot complete 10 samples in the target time, and simply runs longer):
//!
//! ```text
//! cargo bench -p blockbloom-perf --bench concurrent                                   # both sizes
//! BLOCKBLOOM_BENCH_SIZES=l3 cargo bench -p blockbloom-perf --bench concurrent         # skip the 100M-key size
//! cargo bench -p blockbloom-perf --bench concurrent -- 'concurrent_insert/dram/atomic-shared'
//! cargo bench -p blockbloom-perf --bench concurrent -- '/t2$'                          # 2 threads only
//! ```
//!
//! `BLOCKBLOOM_BENCH_SIZES` is a comma-separated subset of `l3,dram` (or `all`; default all).
//! The threads' work is `blockbloom_measure::concurrent`'s (`insert_shared`,
//! `insert_per_thread`, `or_merge`), and fastbloom is `blockbloom_perf::peers`' concurrent peer,
//! the code `blockbloom-perf report` times.
//! Before the first case of a size, one line on stderr gives the filters' sizes and a
//! false-negative check of the snapshot.

use std::cell::OnceCell;
use std::hint::black_box;
use std::time::Duration;

use blockbloom::{Block, BloomFilter, ParallelBuild};
use blockbloom_measure::concurrent::{SharedFilter, insert_per_thread, insert_shared, or_merge};
use blockbloom_measure::keys::Rng;
use blockbloom_perf::peers::{self, FASTBLOOM_FOLD, FASTBLOOM_SIP};
use criterion::{BatchSize, BenchmarkId, Criterion, criterion_group, criterion_main};
use rayon::{ThreadPool, ThreadPoolBuilder};

mod common;
use common::{Sampling, configure};

/// Target false-positive rate for every filter.
const FPR: f64 = 0.01;
/// Keys per `insert_batch` call.
const BATCH: usize = 1024;
/// Thread counts every method runs at.
const THREADS: [usize; 4] = [1, 2, 4, 8];

/// One filter size and how hard to measure it.
#[derive(Clone, Copy)]
struct Size {
    name: &'static str,
    /// Keys the filters are sized for.
    n: usize,
    /// Keys inserted per iteration by the blockbloom cases.
    inserts: usize,
    /// Keys inserted per iteration by the fastbloom cases.
    peer_inserts: usize,
    sampling: Sampling,
}

const SIZES: [Size; 2] = [
    Size {
        name: "l3",
        n: 1_000_000,
        inserts: 1_000_000,
        peer_inserts: 1_000_000,
        // The atomic and fastbloom cases take ~40 ms per iteration: too slow for the
        // linear sampling's 55 iterations.
        sampling: Sampling {
            sample_size: 10,
            warm_up: Duration::from_millis(500),
            measurement: Duration::from_millis(1500),
            flat: true,
        },
    },
    Size {
        name: "dram",
        n: 100_000_000,
        inserts: 1 << 23,
        peer_inserts: 1 << 20,
        sampling: Sampling {
            sample_size: 10,
            warm_up: Duration::from_millis(500),
            measurement: Duration::from_secs(2),
            flat: true,
        },
    },
];

/// Keys of one size and the filter state every atomic iteration starts from.
struct Data {
    members: Vec<u64>,
    /// `members[start..start + inserts]` is the timed slice.
    start: usize,
    inserts: usize,
    peer_inserts: usize,
    /// A filter holding `members[..start]`.
    snapshot: BloomFilter,
}

impl Data {
    fn slice(&self) -> &[u64] {
        &self.members[self.start..self.start + self.inserts]
    }

    fn peer_slice(&self) -> &[u64] {
        &self.members[self.start..self.start + self.peer_inserts]
    }
}

/// Builds the data of a size on first use and prints the sanity line.
fn data<'a>(cell: &'a OnceCell<Data>, size: &Size) -> &'a Data {
    cell.get_or_init(|| {
        let mut rng = Rng(0x0123_4567_89AB_CDEF ^ size.n as u64);
        let members: Vec<u64> = (0..size.n).map(|_| rng.next()).collect();
        let inserts = size.inserts.min(size.n);
        let start = (size.n - inserts) / 2;
        let mut snapshot = BloomFilter::with_capacity(size.n as u64, FPR).expect("blockbloom");
        // Maps every page; the inserts below only touch some.
        snapshot.clear();
        snapshot.par_insert_batch(&members[..start]);
        let missing = start - snapshot.count_batch(&members[..start]);
        // Never written: its zeroed pages are not even mapped.
        let peer = peers::atomic_fastbloom_sip(size.n, FPR);
        eprintln!(
            "[{}] n={} keys/iter={} (fastbloom {}) snapshot holds {} keys ({} missing) | blockbloom {} B k={} | fastbloom {} B k={} | {} CPUs, threads {:?}",
            size.name,
            size.n,
            inserts,
            size.peer_inserts.min(inserts),
            start,
            missing,
            snapshot.size_in_bytes(),
            snapshot.probes(),
            peer.num_bits() / 8,
            peer.num_hashes(),
            std::thread::available_parallelism().map_or(1, |n| n.get()),
            THREADS,
        );
        assert_eq!(missing, 0, "false negatives in the snapshot");
        Data {
            members,
            start,
            inserts,
            peer_inserts: size.peer_inserts.min(inserts),
            snapshot,
        }
    })
}

fn concurrent_insert(c: &mut Criterion, sizes: &[(Size, OnceCell<Data>)], pools: &[ThreadPool]) {
    let mut group = c.benchmark_group("concurrent_insert");
    for (size, cell) in sizes {
        let inserts = size.inserts.min(size.n);
        let id = |method: &str, t: usize| {
            BenchmarkId::new(format!("{}/{method}", size.name), format!("t{t}"))
        };
        configure(&mut group, &size.sampling, inserts);

        let mut f = None;
        group.bench_function(id("plain", 1), |b| {
            let d = data(cell, size);
            let f = f.get_or_insert_with(|| d.snapshot.clone());
            b.iter(|| d.slice().chunks(BATCH).for_each(|c| f.insert_batch(c)));
            black_box(&f);
        });
        drop(f);

        for &t in &THREADS {
            group.bench_function(id("atomic-shared", t), |b| {
                let d = data(cell, size);
                b.iter_batched(
                    || d.snapshot.clone().into_atomic(),
                    |f| {
                        insert_shared(&f, d.slice(), t, BATCH);
                        f
                    },
                    BatchSize::PerIteration,
                );
            });
        }

        let mut f = None;
        for (&t, pool) in THREADS.iter().zip(pools) {
            group.bench_function(id("par-partitioned", t), |b| {
                let d = data(cell, size);
                let f = f.get_or_insert_with(|| d.snapshot.clone());
                b.iter(|| {
                    pool.install(|| f.par_insert_batch_with(d.slice(), ParallelBuild::Partitioned))
                });
                black_box(&f);
            });
        }
        drop(f);

        for (&t, pool) in THREADS.iter().zip(pools) {
            group.bench_function(id("par-shared-atomic", t), |b| {
                let d = data(cell, size);
                b.iter_batched(
                    || d.snapshot.clone(),
                    |mut f| {
                        pool.install(|| {
                            f.par_insert_batch_with(d.slice(), ParallelBuild::SharedAtomic)
                        });
                        f
                    },
                    BatchSize::PerIteration,
                );
            });
        }

        for &t in &THREADS {
            let mut state = None;
            group.bench_function(id("per-thread-or-merge", t), |b| {
                let d = data(cell, size);
                let (filters, out) = state.get_or_insert_with(|| per_thread_state(d, t));
                b.iter(|| {
                    insert_per_thread(filters, d.slice(), BATCH);
                    if t > 1 {
                        or_merge(filters, out);
                    }
                });
                black_box(&out);
            });
        }

        configure(&mut group, &size.sampling, size.n);
        for &t in THREADS.iter().filter(|&&t| t > 1) {
            let mut state = None;
            group.bench_function(id("or-merge-only", t), |b| {
                let d = data(cell, size);
                let (filters, out) = state.get_or_insert_with(|| per_thread_state(d, t));
                b.iter(|| or_merge(filters, out));
                black_box(&out);
            });
        }

        configure(&mut group, &size.sampling, size.peer_inserts.min(inserts));
        for (name, peer) in [
            ("fastbloom-atomic-sip", FASTBLOOM_SIP),
            ("fastbloom-atomic-foldhash", FASTBLOOM_FOLD),
        ] {
            for &t in &THREADS {
                let mut f: Option<Box<dyn SharedFilter>> = None;
                group.bench_function(id(name, t), |b| {
                    let d = data(cell, size);
                    let f = f.get_or_insert_with(|| {
                        let mut f = (peer.build)(size.n, FPR);
                        f.clear(); // maps the pages before timing
                        f
                    });
                    b.iter(|| f.pass(d.peer_slice(), t));
                    black_box(&f);
                });
            }
        }
    }
    group.finish();
}

/// `t` empty plain filters (pages mapped) and the merge output.
fn per_thread_state(d: &Data, t: usize) -> (Vec<BloomFilter>, Vec<Block>) {
    let filters: Vec<BloomFilter> = (0..t)
        .map(|_| {
            let mut f = d.snapshot.clone();
            f.clear();
            f
        })
        .collect();
    let out = vec![Block::ZERO; d.snapshot.blocks().len()];
    (filters, out)
}

fn benches(c: &mut Criterion) {
    let pools: Vec<ThreadPool> = THREADS
        .iter()
        .map(|&t| {
            ThreadPoolBuilder::new()
                .num_threads(t)
                .build()
                .expect("rayon pool")
        })
        .collect();
    let sizes: Vec<(Size, OnceCell<Data>)> = common::selected(&SIZES, |s| s.name)
        .into_iter()
        .map(|s| (s, OnceCell::new()))
        .collect();
    concurrent_insert(c, &sizes, &pools);
}

criterion_group!(concurrent, benches);
criterion_main!(concurrent);
