//! Throughput of `blockbloom` against its peers, per kernel and per filter size.
//!
//! Every case uses `u64` keys, a filter sized for `n` keys at a 1% false-positive target, and
//! includes hashing in the timed loop. Criterion reports keys/s (`Throughput::Elements`); the
//! time per iteration divided by the element count is ns/key.
//!
//! Groups (benchmark ids are `<group>/<size>/<implementation>`):
//!
//! * `insert`: single-key inserts of a fixed slice of keys into a filter sized for `n`.
//!   `blockbloom-scalar-path` is `BloomFilter::insert`, which runs the same inline scalar code
//!   whatever the kernel, so it is measured once. Peers: `fastbloom-sip` (fastbloom 0.17, its
//!   default SipHash-1-3 hasher), `fastbloom-foldhash` (foldhash `fast::RandomState`) and
//!   `sbbf-xxh3` (sbbf-rs-safe 0.3.2 at 11 bits per key, the smallest whole number that
//!   reaches 1%; keys hashed with `xxh3_64` inside the loop). Every iteration inserts the
//!   same slice into the same filter; all these inserts set their bits unconditionally, so
//!   re-inserting costs what a first insert does.
//! * `contains`: single-key queries on a filter holding all `n` keys; the query slice is a
//!   random mix of about half members and half non-members (so early-exit branches are not
//!   predictable). Same implementations as `insert`.
//! * `batch_insert`: `BloomFilter::insert_batch` over the insert slice in chunks of
//!   `BATCH` keys, once per kernel in `Isa::supported()` (`scalar`, `portable`, `avx2`,
//!   `avx512`).
//! * `batch_contains`: `BloomFilter::contains_batch` over the query slice in chunks of
//!   `BATCH` keys into a reused `[bool]` buffer, once per supported kernel.
//! * `scalar_exit`: why the scalar reference reads every probe. `branchless` is
//!   `layout::contains_scalar` (the reference: all `k` bits, no early exit); `early-exit` stops
//!   at the first clear bit, which saves probes on non-members but mispredicts a branch on
//!   most of them. Both hash with `hash::hash_u64` and run on the same mixed query slice.
//! * `construct`: what sizing costs a constructor (independent of `BLOCKBLOOM_BENCH_SIZES`).
//!   `with_capacity/1000` and `with_capacity/1000000` are `BloomFilter::with_capacity(n, 0.01)`
//!   (the zeroed allocation, and the plan remembered per thread after the first);
//!   `with_capacity_cold/<n>` takes 64 capacities from `n` in turn, so every construction
//!   plans (planning plus the allocation); `plan/1e9-1e-6` is `sizing::plan(1e9, 1e-6)`
//!   alone (the filter would take 5 GB) and `plan/1e6-0.01` the planning of the 1M case
//!   alone; `counting/1000` is `CountingBloomFilter::with_capacity(1000, 0.01)` (4-bit
//!   counters, planned by the counter model). `plan/1e10-1e-9`, `plan/1.7e10-7.75e-9`,
//!   `plan_k32/2.1e10-3.77e-5` (32 probes fixed) and `plan/100-0.01` are the slowest plans
//!   found over the grid of n and p; `best_shape/1e6-10bpk` is the `bits_per_key` builders'
//!   shape choice; `split_block/1000` and `scalable/1000` the Parquet split-block and the
//!   scalable filter's constructors.
//!
//! Sizes (`n`, filter bytes at 1%, slice lengths):
//!
//! * `l2`:   n = 50_000      (~63 KB filter),  every key inserted, 65_536 queries
//! * `l3`:   n = 1_000_000   (~1.3 MB filter), every key inserted, 1_048_576 queries
//! * `dram`: n = 64_000_000  (~77 MiB filter), 2_097_152 keys inserted and queried per
//!   iteration (random keys, so random blocks); generating the keys takes 512 MiB and every
//!   filter is built once per benchmark, outside the timed closure.
//!
//! The size names describe the usual cache hierarchy; check `lscpu` for the machine at hand
//! (a CPU with a 2 MiB L2 holds the `l3` filter in L2, and a large server L3 may hold the
//! `dram` one).
//!
//! Running:
//!
//! ```text
//! cargo bench -p blockbloom-perf --bench filter                                  # everything (a few minutes)
//! BLOCKBLOOM_BENCH_SIZES=l2,l3 cargo bench -p blockbloom-perf --bench filter     # skip the 64M-key size
//! BLOCKBLOOM_BENCH_SIZES=dram cargo bench -p blockbloom-perf --bench filter      # only the 64M-key size
//! cargo bench -p blockbloom-perf --bench filter -- batch_contains/l3             # one group at one size
//! cargo bench -p blockbloom-perf --bench filter -- '^contains/l2/(fastbloom|sbbf)'  # a regex over ids
//! ```
//!
//! `BLOCKBLOOM_BENCH_SIZES` is a comma-separated subset of `l2,l3,dram` (or `all`; default
//! all). Data and filters are built lazily, so a filtered run only pays for the cases it
//! runs. Before the first case of a size, one line on stderr gives each filter's size and
//! its measured false-positive rate, as a sanity check that the peers are sized alike.

use std::cell::OnceCell;
use std::hint::black_box;
use std::time::Duration;

use blockbloom::layout::{Layout, block_index, contains_scalar, probe};
use blockbloom::{BloomFilter, CountingBloomFilter, Isa, hash, sizing};
use blockbloom_measure::keys::Rng;
use blockbloom_perf::peers::{self, FastFold, FastSip, Sbbf};
use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, BenchmarkId, Criterion, criterion_group, criterion_main};

mod common;
use common::{Sampling, configure};

/// Target false-positive rate for every filter.
const FPR: f64 = 0.01;
/// Keys per `insert_batch` / `contains_batch` call.
const BATCH: usize = 1024;
/// Label for the single-key blockbloom path (identical on every kernel).
const BLOCKBLOOM_SINGLE: &str = "blockbloom-scalar-path";

/// One filter size and how hard to measure it.
#[derive(Clone, Copy)]
struct Size {
    name: &'static str,
    /// Keys the filters are sized for and hold in the `contains` cases.
    n: usize,
    /// Keys inserted per iteration of the insert cases.
    inserts: usize,
    /// Keys queried per iteration of the contains cases.
    queries: usize,
    sampling: Sampling,
}

const fn sampling(
    sample_size: usize,
    warm_up_ms: u64,
    measurement_ms: u64,
    flat: bool,
) -> Sampling {
    Sampling {
        sample_size,
        warm_up: Duration::from_millis(warm_up_ms),
        measurement: Duration::from_millis(measurement_ms),
        flat,
    }
}

const SIZES: [Size; 3] = [
    Size {
        name: "l2",
        n: 50_000,
        inserts: 50_000,
        queries: 1 << 16,
        sampling: sampling(20, 500, 1500, false),
    },
    Size {
        name: "l3",
        n: 1_000_000,
        inserts: 1_000_000,
        queries: 1 << 20,
        sampling: sampling(15, 1000, 3000, false),
    },
    Size {
        name: "dram",
        n: 64_000_000,
        inserts: 1 << 21,
        queries: 1 << 21,
        sampling: sampling(10, 1000, 3000, true),
    },
];

/// Keys of one size: members (all inserted), the slice the insert cases time, and a query
/// slice of about half members, half non-members.
struct Data {
    members: Vec<u64>,
    queries: Vec<u64>,
    /// Non-member keys, for the false-positive sanity line only.
    absent: Vec<u64>,
    inserts: usize,
}

impl Data {
    fn new(size: &Size) -> Data {
        let mut rng = Rng(0x0123_4567_89AB_CDEF ^ size.n as u64);
        let members: Vec<u64> = (0..size.n).map(|_| rng.next()).collect();
        // A second stream; a collision with a member has probability ~n*q/2^64.
        let mut other = Rng(0xFEDC_BA98_7654_3210 ^ size.n as u64);
        let mut pick = Rng(0x5555_AAAA_5555_AAAA);
        let queries = (0..size.queries)
            .map(|_| {
                let r = pick.next();
                if r & 1 == 0 {
                    members[((r >> 1) % size.n as u64) as usize]
                } else {
                    other.next()
                }
            })
            .collect();
        let absent = (0..size.queries.min(1 << 20))
            .map(|_| other.next())
            .collect();
        Data {
            members,
            queries,
            absent,
            inserts: size.inserts.min(size.n),
        }
    }

    fn insert_slice(&self) -> &[u64] {
        &self.members[..self.inserts]
    }
}

fn blockbloom(n: usize, isa: Isa) -> BloomFilter {
    BloomFilter::builder()
        .capacity(n as u64)
        .fpr(FPR)
        .isa(isa)
        .build()
        .expect("blockbloom filter")
}

fn fast_sip(n: usize) -> FastSip {
    peers::fastbloom_sip(n, FPR)
}

fn fast_fold(n: usize) -> FastFold {
    peers::fastbloom_fold(n, FPR)
}

fn sbbf(n: usize) -> Sbbf {
    let mut f = Sbbf::new(n, FPR);
    // The buffer comes from `alloc_zeroed`; write it so its pages are mapped before timing.
    f.reset();
    f
}

fn full_blockbloom(data: &Data, isa: Isa) -> BloomFilter {
    let mut f = blockbloom(data.members.len(), isa);
    f.insert_batch(&data.members);
    f
}

/// A filter asked one `u64` key at a time (statically dispatched: the bench loops inline it).
trait OneKey {
    fn put(&mut self, k: u64);
    fn has(&self, k: u64) -> bool;
}

impl OneKey for BloomFilter {
    #[inline(always)]
    fn put(&mut self, k: u64) {
        self.insert(&k);
    }
    #[inline(always)]
    fn has(&self, k: u64) -> bool {
        self.contains(&k)
    }
}

impl<S: std::hash::BuildHasher> OneKey for fastbloom::BloomFilter<S> {
    #[inline(always)]
    fn put(&mut self, k: u64) {
        self.insert(&k);
    }
    #[inline(always)]
    fn has(&self, k: u64) -> bool {
        self.contains(&k)
    }
}

impl OneKey for Sbbf {
    #[inline(always)]
    fn put(&mut self, k: u64) {
        self.insert_u64(k);
    }
    #[inline(always)]
    fn has(&self, k: u64) -> bool {
        self.contains_u64(k)
    }
}

/// A peer built by `make` for the size, holding every member (inserted one at a time).
fn full<F: OneKey>(data: &Data, make: fn(usize) -> F) -> F {
    let mut f = make(data.members.len());
    data.members.iter().for_each(|&k| f.put(k));
    f
}

/// Builds the data of a size on first use and prints the sanity line.
fn data<'a>(cell: &'a OnceCell<Data>, size: &Size) -> &'a Data {
    cell.get_or_init(|| {
        let d = Data::new(size);
        report(size, &d);
        d
    })
}

/// One stderr line per size: bytes and measured false-positive rate of every filter.
fn report(size: &Size, d: &Data) {
    let rate = |hits: usize| hits as f64 / d.absent.len() as f64;
    let bb = full_blockbloom(d, Isa::detect());
    let bb_fp = rate(bb.count_batch(&d.absent));
    let member_share =
        d.queries.iter().filter(|&&q| bb.contains(&q)).count() as f64 / d.queries.len() as f64;
    drop(bb);
    let bb_bytes = blockbloom(size.n, Isa::Scalar).size_in_bytes();
    let fs = full(d, fast_sip);
    let fs_line = format!(
        "fastbloom {} B k={} fpr {:.4}",
        fs.num_bits() / 8,
        fs.num_hashes(),
        rate(d.absent.iter().filter(|k| fs.contains(*k)).count())
    );
    drop(fs);
    let sb = full(d, sbbf);
    let sb_line = format!(
        "sbbf {} B fpr {:.4}",
        sb.as_bytes().len(),
        rate(d.absent.iter().filter(|&&k| sb.contains_u64(k)).count())
    );
    drop(sb);
    eprintln!(
        "[{}] n={} inserts/iter={} queries/iter={} (hit share {:.3}) | blockbloom {} B fpr {:.4} | {} | {} | kernels: {}",
        size.name,
        size.n,
        d.inserts,
        d.queries.len(),
        member_share,
        bb_bytes,
        bb_fp,
        fs_line,
        sb_line,
        Isa::supported()
            .iter()
            .map(|i| i.name())
            .collect::<Vec<_>>()
            .join(",")
    );
}

type Group<'a> = BenchmarkGroup<'a, WallTime>;

/// `insert/<size>/<name>`: single-key inserts of the insert slice into one filter from `make`.
fn insert_case<F: OneKey>(
    g: &mut Group<'_>,
    size: &Size,
    cell: &OnceCell<Data>,
    name: &str,
    make: impl Fn(usize) -> F,
) {
    let mut f = None;
    g.bench_function(BenchmarkId::new(size.name, name), |b| {
        let d = data(cell, size);
        let f = f.get_or_insert_with(|| make(size.n));
        b.iter(|| d.insert_slice().iter().for_each(|&k| f.put(k)));
        black_box(&f);
    });
}

/// `contains/<size>/<name>`: single-key queries of the query slice on the full filter `full`.
fn contains_case<F: OneKey>(
    g: &mut Group<'_>,
    size: &Size,
    cell: &OnceCell<Data>,
    name: &str,
    full: impl Fn(&Data) -> F,
) {
    let f = OnceCell::new();
    g.bench_function(BenchmarkId::new(size.name, name), |b| {
        let d = data(cell, size);
        let f = f.get_or_init(|| full(d));
        b.iter(|| black_box(count_hits(&d.queries, |k| f.has(*k))));
    });
}

fn insert(c: &mut Criterion, sizes: &[(Size, OnceCell<Data>)]) {
    let mut group = c.benchmark_group("insert");
    for (size, cell) in sizes {
        configure(&mut group, &size.sampling, size.inserts.min(size.n));
        let ours = |n| blockbloom(n, Isa::detect());
        insert_case(&mut group, size, cell, BLOCKBLOOM_SINGLE, ours);
        insert_case(&mut group, size, cell, "fastbloom-sip", fast_sip);
        insert_case(&mut group, size, cell, "fastbloom-foldhash", fast_fold);
        insert_case(&mut group, size, cell, "sbbf-xxh3", sbbf);
    }
    group.finish();
}

/// Counts hits of a single-key `contains` over the query slice.
#[inline(always)]
fn count_hits(queries: &[u64], mut contains: impl FnMut(&u64) -> bool) -> usize {
    queries.iter().filter(|k| contains(k)).count()
}

fn contains(c: &mut Criterion, sizes: &[(Size, OnceCell<Data>)]) {
    let mut group = c.benchmark_group("contains");
    for (size, cell) in sizes {
        configure(&mut group, &size.sampling, size.queries);
        let ours = |d: &Data| full_blockbloom(d, Isa::detect());
        contains_case(&mut group, size, cell, BLOCKBLOOM_SINGLE, ours);
        contains_case(&mut group, size, cell, "fastbloom-sip", |d| {
            full(d, fast_sip)
        });
        contains_case(&mut group, size, cell, "fastbloom-foldhash", |d| {
            full(d, fast_fold)
        });
        contains_case(&mut group, size, cell, "sbbf-xxh3", |d| full(d, sbbf));
    }
    group.finish();
}

fn batch_insert(c: &mut Criterion, sizes: &[(Size, OnceCell<Data>)]) {
    let mut group = c.benchmark_group("batch_insert");
    for (size, cell) in sizes {
        configure(&mut group, &size.sampling, size.inserts.min(size.n));
        for isa in Isa::supported() {
            let mut f = None;
            group.bench_function(BenchmarkId::new(size.name, isa.name()), |b| {
                let d = data(cell, size);
                let f = f.get_or_insert_with(|| blockbloom(size.n, isa));
                b.iter(|| {
                    for chunk in d.insert_slice().chunks(BATCH) {
                        f.insert_batch(chunk);
                    }
                });
                black_box(&f);
            });
        }
    }
    group.finish();
}

fn batch_contains(c: &mut Criterion, sizes: &[(Size, OnceCell<Data>)]) {
    let mut group = c.benchmark_group("batch_contains");
    for (size, cell) in sizes {
        configure(&mut group, &size.sampling, size.queries);
        for isa in Isa::supported() {
            let f = OnceCell::new();
            group.bench_function(BenchmarkId::new(size.name, isa.name()), |b| {
                let d = data(cell, size);
                let f = f.get_or_init(|| full_blockbloom(d, isa));
                let mut out = vec![false; BATCH];
                b.iter(|| {
                    for chunk in d.queries.chunks(BATCH) {
                        let out = &mut out[..chunk.len()];
                        f.contains_batch(chunk, out);
                        black_box(out);
                    }
                });
            });
        }
    }
    group.finish();
}

/// Membership by the reference with an early exit at the first clear bit.
fn contains_early_exit(f: &BloomFilter, key: u64) -> bool {
    let h = hash::hash_u64(key, f.seed());
    let block = &f.blocks()[block_index(h, f.num_blocks())];
    (0..f.probes() as usize).all(|j| {
        let (w, b) = probe(f.layout(), h as u32, j);
        block.0[w] & (1 << b) != 0
    })
}

/// Membership by the reference itself (`layout::contains_scalar`).
fn contains_reference(f: &BloomFilter, key: u64, layout: Layout) -> bool {
    let h = hash::hash_u64(key, f.seed());
    let block = &f.blocks()[block_index(h, f.num_blocks())];
    contains_scalar(block, layout, h as u32, f.probes() as usize)
}

fn scalar_exit(c: &mut Criterion, sizes: &[(Size, OnceCell<Data>)]) {
    let mut group = c.benchmark_group("scalar_exit");
    for (size, cell) in sizes {
        configure(&mut group, &size.sampling, size.queries);
        let f = OnceCell::new();
        group.bench_function(BenchmarkId::new(size.name, "branchless"), |b| {
            let d = data(cell, size);
            let f = f.get_or_init(|| full_blockbloom(d, Isa::Scalar));
            let layout = f.layout();
            b.iter(|| {
                black_box(count_hits(&d.queries, |k| {
                    contains_reference(f, *k, layout)
                }))
            });
        });
        group.bench_function(BenchmarkId::new(size.name, "early-exit"), |b| {
            let d = data(cell, size);
            let f = f.get_or_init(|| full_blockbloom(d, Isa::Scalar));
            b.iter(|| black_box(count_hits(&d.queries, |k| contains_early_exit(f, *k))));
        });
    }
    group.finish();
}

fn construct(c: &mut Criterion) {
    let mut group = c.benchmark_group("construct");
    group
        .sample_size(50)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    for n in [1_000u64, 1_000_000] {
        group.bench_function(BenchmarkId::new("with_capacity", n), |b| {
            b.iter(|| BloomFilter::with_capacity(black_box(n), black_box(FPR)).expect("filter"))
        });
        // 64 capacities in turn (more than a thread remembers): every construction plans.
        let mut i = 0u64;
        group.bench_function(BenchmarkId::new("with_capacity_cold", n), |b| {
            b.iter(|| {
                i = (i + 1) % 64;
                BloomFilter::with_capacity(black_box(n + i), black_box(FPR)).expect("filter")
            })
        });
    }
    group.bench_function(BenchmarkId::new("plan", "1e9-1e-6"), |b| {
        b.iter(|| sizing::plan(black_box(1e9 as u64), black_box(1e-6)).expect("plan"))
    });
    // Planning alone for the 1M case above, whose allocation (1.3 MB, zeroed) dominates.
    group.bench_function(BenchmarkId::new("plan", "1e6-0.01"), |b| {
        b.iter(|| sizing::plan(black_box(1_000_000), black_box(FPR)).expect("plan"))
    });
    group.bench_function(BenchmarkId::new("counting", 1_000), |b| {
        b.iter(|| {
            CountingBloomFilter::with_capacity(black_box(1_000), black_box(FPR)).expect("filter")
        })
    });
    // The slowest plans found over the grid of n and p (planning alone).
    group.bench_function(BenchmarkId::new("plan", "1e10-1e-9"), |b| {
        b.iter(|| sizing::plan(black_box(10_000_000_000), black_box(1e-9)).expect("plan"))
    });
    group.bench_function(BenchmarkId::new("plan", "1.7e10-7.75e-9"), |b| {
        b.iter(|| sizing::plan(black_box(17_407_767_402), black_box(7.75e-9)).expect("plan"))
    });
    group.bench_function(BenchmarkId::new("plan_k32", "2.1e10-3.77e-5"), |b| {
        b.iter(|| {
            sizing::plan_with(
                black_box(21_177_200_270),
                black_box(3.77e-5),
                None,
                Some(32),
            )
            .expect("plan")
        })
    });
    group.bench_function(BenchmarkId::new("plan", "100-0.01"), |b| {
        b.iter(|| sizing::plan(black_box(100), black_box(FPR)).expect("plan"))
    });
    // `bits_per_key` / `size_in_bytes` builders: the best shape for a given size.
    group.bench_function(BenchmarkId::new("best_shape", "1e6-10bpk"), |b| {
        b.iter(|| sizing::best_shape(black_box(1_000_000), black_box(19_532), None, None))
    });
    group.bench_function(BenchmarkId::new("atomic", 1_000), |b| {
        b.iter(|| {
            blockbloom::AtomicBloomFilter::with_capacity(black_box(1_000), black_box(FPR))
                .expect("filter")
        })
    });
    group.bench_function(BenchmarkId::new("deletable", 1_000), |b| {
        b.iter(|| {
            blockbloom::DeletableBloomFilter::with_capacity(black_box(1_000), black_box(FPR))
                .expect("filter")
        })
    });
    // Loading a small filter: checked header and checksum, then a copy (or a view).
    let small = BloomFilter::with_capacity(1_000, FPR).expect("filter");
    let bytes = small.to_bytes();
    group.bench_function(BenchmarkId::new("from_bytes", 1_000), |b| {
        b.iter(|| BloomFilter::from_bytes(black_box(&bytes)).expect("filter"))
    });
    group.bench_function(BenchmarkId::new("split_block", 1_000), |b| {
        b.iter(|| {
            blockbloom::parquet::SplitBlockFilter::new_with_ndv_fpp(black_box(1_000), FPR)
                .expect("filter")
        })
    });
    group.bench_function(BenchmarkId::new("scalable", 1_000), |b| {
        b.iter(|| {
            blockbloom::ScalableBloomFilter::builder()
                .initial_capacity(black_box(1_000))
                .fpr(FPR)
                .build()
                .expect("filter")
        })
    });
    group.finish();
}

fn benches(c: &mut Criterion) {
    let sizes: Vec<(Size, OnceCell<Data>)> = common::selected(&SIZES, |s| s.name)
        .into_iter()
        .map(|s| (s, OnceCell::new()))
        .collect();
    insert(c, &sizes);
    contains(c, &sizes);
    batch_insert(c, &sizes);
    batch_contains(c, &sizes);
    scalar_exit(c, &sizes);
    construct(c);
}

criterion_group!(filter, benches);
criterion_main!(filter);
