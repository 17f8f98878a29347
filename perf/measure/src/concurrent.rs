//! Concurrent insert: several threads filling one filter, against one thread and against
//! peer filters ([`ConcurrentPeer`], e.g. fastbloom's `AtomicBloomFilter` in `blockbloom-perf`).
//!
//! Every (method, thread count) builds the filter from empty on the schedule
//! [`subject::measure`] uses for single-thread inserts: small `n` as repeated whole builds
//! (each from a cleared filter), large `n` as one build timed in equal segments. Times are wall-clock for all the
//! threads, divided by the keys inserted, so ns/key falls as threads help. Clearing is never
//! timed: blockbloom's `AtomicBloomFilter` skips words that already hold a key's bits, so
//! re-inserting present keys would time reads only.

use std::error::Error;
use std::fmt::Write as _;
use std::hint::black_box;
use std::time::Instant;

use blockbloom::{AtomicBloomFilter, Block, BloomFilter, Isa, ParallelBuild};
use rayon::{ThreadPool, ThreadPoolBuilder};

use crate::format::{bytes, group, percent};
use crate::keys;
use crate::progress::Progress;
use crate::subject;
use crate::system;
use crate::table::Table;
use crate::timing::{Timing, per_key};

/// A peer's atomic insert (fastbloom's `fetch_or`s every bit whatever the filter holds) costs
/// the same per key however full the filter is, so above this many keys it is timed on the
/// first `PEER_MAX_KEYS` only (its filter is still sized for `n`). At about 50 ns per key a
/// whole 100M-key build would take longer than the rest of the report.
pub const PEER_MAX_KEYS: usize = 1 << 23;

/// A peer filter that several threads insert into at once. Its insert must cost the same
/// however full the filter is: large builds time it on the first [`PEER_MAX_KEYS`] keys.
pub trait SharedFilter {
    /// Forgets every key (outside the timing).
    fn clear(&mut self);
    /// Inserts `keys` with `threads` threads, the way its API is meant to be used.
    fn pass(&self, keys: &[u64], threads: usize);
    /// Whether it reports `key` present.
    fn contains(&self, key: u64) -> bool;
    /// Bytes of filter.
    fn size_in_bytes(&self) -> usize;
}

/// A peer's concurrent insert, as a [`Method`].
#[derive(Debug, Clone, Copy)]
pub struct ConcurrentPeer {
    /// Its name in tables (and its identity: two peers are equal when their names are).
    pub name: &'static str,
    /// How its threads run.
    pub api: &'static str,
    /// The crate, for the notes under the table.
    pub crate_name: &'static str,
    /// Builds it for `n` keys at target `fpr`.
    pub build: fn(n: usize, fpr: f64) -> Box<dyn SharedFilter>,
}

impl PartialEq for ConcurrentPeer {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Eq for ConcurrentPeer {}

/// A way of inserting with several threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// `BloomFilter::insert_batch` on one thread: the baseline.
    Plain,
    /// One `AtomicBloomFilter`, `insert_batch` from scoped threads, each on its share.
    AtomicShared,
    /// `BloomFilter::par_insert_batch` (default strategy) in a rayon pool.
    ParDefault,
    /// `par_insert_batch_with(.., ParallelBuild::Partitioned)` in a rayon pool.
    Partitioned,
    /// `par_insert_batch_with(.., ParallelBuild::SharedAtomic)` in a rayon pool.
    SharedAtomic,
    /// One plain filter per scoped thread, then an OR of their blocks.
    PerThread,
    /// A peer filter shared by its threads.
    Peer(ConcurrentPeer),
}

impl Method {
    /// blockbloom's multi-threaded builds other than the default `par_insert_batch`, with the
    /// plain baseline first (what `report` measures next to the peers).
    pub const BUILDS: [Method; 5] = [
        Method::Plain,
        Method::AtomicShared,
        Method::Partitioned,
        Method::SharedAtomic,
        Method::PerThread,
    ];
    /// What `bench --threads` and `demo` measure.
    pub const SHORT: [Method; 3] = [Method::Plain, Method::AtomicShared, Method::ParDefault];

    /// Its name in tables.
    pub fn name(self) -> &'static str {
        match self {
            Method::Plain => "plain BloomFilter::insert_batch",
            Method::AtomicShared => "AtomicBloomFilter::insert_batch, shared",
            Method::ParDefault => "BloomFilter::par_insert_batch",
            Method::Partitioned => "par_insert_batch_with(Partitioned)",
            Method::SharedAtomic => "par_insert_batch_with(SharedAtomic)",
            Method::PerThread => "per-thread BloomFilter + OR merge",
            Method::Peer(p) => p.name,
        }
    }

    /// How its threads run.
    pub fn api(self) -> &'static str {
        match self {
            Method::Plain => "1 thread, batches",
            Method::AtomicShared | Method::PerThread => "scoped threads, batches",
            Method::ParDefault | Method::Partitioned | Method::SharedAtomic => "rayon pool",
            Method::Peer(p) => p.api,
        }
    }

    fn one_thread_only(self) -> bool {
        self == Method::Plain
    }

    fn is_peer(self) -> bool {
        matches!(self, Method::Peer(_))
    }
}

/// What to measure at one size.
#[derive(Debug, Clone)]
pub struct ConcurrentPlan {
    /// Keys inserted (the filter's capacity).
    pub n: usize,
    /// Target false-positive rate.
    pub fpr: f64,
    /// The blockbloom kernel.
    pub isa: Isa,
    /// Keys per `insert_batch` call.
    pub batch: usize,
    /// Thread counts, ascending, starting at 1.
    pub threads: Vec<usize>,
    /// Methods in measuring order (`Plain` first: its filter is the reference).
    pub methods: Vec<Method>,
    /// Timed repetitions (or segments); medians are reported.
    pub reps: usize,
}

impl ConcurrentPlan {
    /// `threads` sorted, deduplicated and with 1 added.
    pub fn new(
        n: usize,
        fpr: f64,
        isa: Isa,
        threads: &[usize],
        methods: &[Method],
    ) -> ConcurrentPlan {
        let mut t: Vec<usize> = threads.iter().copied().chain([1]).collect();
        t.sort_unstable();
        t.dedup();
        ConcurrentPlan {
            n,
            fpr,
            isa,
            batch: 1024,
            threads: t,
            methods: methods.to_vec(),
            reps: 5,
        }
    }
}

/// One method at one thread count.
#[derive(Debug, Clone)]
pub struct Cell {
    /// Threads (or rayon pool size).
    pub threads: usize,
    /// Wall-clock ns per key of each repetition or segment.
    pub timing: Timing,
    /// For `PerThread`: the OR merge, ns per key of the build (included in `timing`).
    pub merge: Option<f64>,
}

/// One method at every thread count.
#[derive(Debug, Clone)]
pub struct MethodRow {
    /// The method.
    pub method: Method,
    /// One per thread count measured.
    pub cells: Vec<Cell>,
}

/// Everything measured at one size.
#[derive(Debug, Clone)]
pub struct ConcurrentResult {
    /// The plan it ran.
    pub plan: ConcurrentPlan,
    /// blockbloom's filter bytes.
    pub bytes: usize,
    /// The first peer's filter bytes (if one was measured).
    pub peer_bytes: Option<usize>,
    /// The rows, in measuring order.
    pub rows: Vec<MethodRow>,
    /// Builds that disagreed with the plain single-thread build.
    pub problems: Vec<String>,
}

/// A filter being built by one method at one thread count.
enum Build<'p> {
    Plain(BloomFilter, usize),
    Atomic(Option<AtomicBloomFilter>, usize, usize),
    Par(BloomFilter, &'p ThreadPool, Option<ParallelBuild>),
    PerThread(Vec<BloomFilter>, Vec<Block>, usize),
    Peer(Box<dyn SharedFilter>, usize),
}

/// `keys` cut into `t` contiguous shares, one per thread.
pub fn shares(keys: &[u64], t: usize) -> std::slice::Chunks<'_, u64> {
    keys.chunks(keys.len().div_ceil(t.max(1)).max(1))
}

impl Build<'_> {
    /// Forgets every key and writes every page, outside the timing.
    fn clear(&mut self) {
        match self {
            Build::Plain(f, _) | Build::Par(f, _, _) => f.clear(),
            Build::Atomic(f, _, _) => {
                let mut plain = f.take().expect("filter").into_filter();
                plain.clear();
                *f = Some(plain.into_atomic());
            }
            Build::PerThread(filters, _, _) => filters.iter_mut().for_each(BloomFilter::clear),
            Build::Peer(f, _) => f.clear(),
        }
    }

    /// Inserts `keys`, with all the method's threads.
    fn pass(&mut self, keys: &[u64]) {
        match self {
            Build::Plain(f, batch) => {
                for chunk in keys.chunks(*batch) {
                    f.insert_batch(chunk);
                }
            }
            Build::Atomic(f, t, batch) => {
                insert_shared(f.as_ref().expect("filter"), keys, *t, *batch)
            }
            Build::Par(f, pool, how) => pool.install(|| match how {
                None => f.par_insert_batch(keys),
                Some(how) => f.par_insert_batch_with(keys, *how),
            }),
            Build::PerThread(filters, _, batch) => insert_per_thread(filters, keys, *batch),
            Build::Peer(f, t) => f.pass(keys, *t),
        }
    }

    /// Completes a build (the per-thread merge); whether there was anything to do.
    fn finish(&mut self) -> bool {
        let Build::PerThread(filters, out, _) = self else {
            return false;
        };
        if filters.len() < 2 {
            return false; // the one filter is the result
        }
        or_merge(filters, out);
        true
    }

    /// Whether the finished build is the plain single-thread build (`None`), or what is wrong.
    fn check(self, reference: &BloomFilter, keys: &[u64]) -> Option<String> {
        let same = |blocks: &[Block]| {
            (blocks != reference.blocks())
                .then(|| "its bits differ from the plain single-thread build".to_string())
        };
        let missing = |f: &dyn SharedFilter| {
            let sample = &keys[..keys.len().min(100_000)];
            let m = sample.iter().filter(|&&k| !f.contains(k)).count();
            (m > 0).then(|| format!("{m} false negatives"))
        };
        match self {
            Build::Plain(f, _) | Build::Par(f, _, _) => same(f.blocks()),
            Build::Atomic(f, _, _) => same(f.expect("filter").into_filter().blocks()),
            Build::PerThread(filters, _, _) if filters.len() < 2 => same(filters[0].blocks()),
            Build::PerThread(_, out, _) => same(&out),
            Build::Peer(f, _) => missing(f.as_ref()),
        }
    }
}

/// `t` scoped threads, each inserting its share of `keys` into the shared atomic filter in
/// batches of `batch`.
pub fn insert_shared(f: &AtomicBloomFilter, keys: &[u64], t: usize, batch: usize) {
    std::thread::scope(|s| {
        for share in shares(keys, t) {
            s.spawn(move || share.chunks(batch).for_each(|c| f.insert_batch(c)));
        }
    });
}

/// One scoped thread per filter, each inserting its share of `keys` into its own filter in
/// batches of `batch`.
pub fn insert_per_thread(filters: &mut [BloomFilter], keys: &[u64], batch: usize) {
    let t = filters.len();
    std::thread::scope(|s| {
        for (f, share) in filters.iter_mut().zip(shares(keys, t)) {
            s.spawn(move || share.chunks(batch).for_each(|c| f.insert_batch(c)));
        }
    });
}

/// ORs the blocks of every filter into `out` with one scoped thread per filter, each over a
/// contiguous range of blocks. (There is no union API; `out` stands for the merged filter.)
pub fn or_merge(filters: &[BloomFilter], out: &mut [Block]) {
    let per = out.len().div_ceil(filters.len()).max(1);
    std::thread::scope(|s| {
        for (i, range) in out.chunks_mut(per).enumerate() {
            s.spawn(move || {
                let first = i * per;
                for (j, o) in range.iter_mut().enumerate() {
                    let mut acc = filters[0].blocks()[first + j];
                    for f in &filters[1..] {
                        let b = &f.blocks()[first + j];
                        for (a, w) in acc.0.iter_mut().zip(b.0) {
                            *a |= w;
                        }
                    }
                    *o = acc;
                }
            });
        }
    });
}

/// How [`time_builds`] times `n` keys, in words.
fn describe_schedule(n: usize, reps: usize) -> String {
    let reps = reps.max(1);
    if subject::segmented(n, reps) {
        format!("one build timed in {reps} equal segments")
    } else {
        match subject::MIN_SAMPLE_KEYS.div_ceil(n.max(1)).max(1) {
            1 => format!("{reps} repetitions of one build"),
            inner => format!("{reps} repetitions of {inner} builds"),
        }
    }
}

/// Times whole builds of `keys` on `measure`'s schedule; the merge time (ns per key of the
/// build) is returned apart too, and is included in every sample.
fn time_builds(s: &mut Build<'_>, keys: &[u64], reps: usize) -> (Timing, Option<f64>) {
    let reps = reps.max(1);
    let mut timing = Timing::default();
    if keys.is_empty() {
        return (timing, None);
    }
    let merge = if subject::segmented(keys.len(), reps) {
        s.clear();
        for segment in keys.chunks(keys.len().div_ceil(reps)) {
            let t = Instant::now();
            s.pass(black_box(segment));
            timing.samples.push(per_key(t, segment.len()));
        }
        let t = Instant::now();
        let merged = s.finish();
        let merge = per_key(t, keys.len());
        merged.then(|| {
            timing.samples.iter_mut().for_each(|x| *x += merge);
            merge
        })
    } else {
        let inner = subject::MIN_SAMPLE_KEYS.div_ceil(keys.len()).max(1);
        let (mut merged, mut merge_ns) = (false, 0.0);
        for _ in 0..reps {
            let mut ns = 0.0;
            for _ in 0..inner {
                s.clear();
                let t = Instant::now();
                s.pass(black_box(keys));
                let t_merge = Instant::now();
                merged = s.finish();
                merge_ns += t_merge.elapsed().as_nanos() as f64;
                ns += t.elapsed().as_nanos() as f64;
            }
            timing.samples.push(ns / (keys.len() * inner) as f64);
        }
        merged.then(|| merge_ns / (keys.len() * inner * reps) as f64)
    };
    (timing, merge)
}

/// Runs `plan` on `keys` (which must hold `plan.n` keys).
///
/// # Errors
/// The library's error if the filter cannot be built, or rayon's if a pool cannot start.
pub fn run(
    plan: &ConcurrentPlan,
    all_keys: &[u64],
    progress: &Progress,
) -> Result<ConcurrentResult, Box<dyn Error>> {
    let build = || {
        BloomFilter::builder()
            .capacity(plan.n as u64)
            .fpr(plan.fpr)
            .isa(plan.isa)
            .build()
    };
    let pools = plan
        .threads
        .iter()
        .map(|&t| ThreadPoolBuilder::new().num_threads(t).build())
        .collect::<Result<Vec<ThreadPool>, _>>()?;
    let n = group(plan.n as u64);
    let bytes = build()?.size_in_bytes();
    let (mut rows, mut problems, mut peer_bytes) = (Vec::new(), Vec::new(), None);
    let mut reference: Option<BloomFilter> = None;
    for &method in &plan.methods {
        let keys = if method.is_peer() {
            &all_keys[..all_keys.len().min(PEER_MAX_KEYS)]
        } else {
            all_keys
        };
        let mut cells = Vec::new();
        for (&t, pool) in plan.threads.iter().zip(&pools) {
            if method.one_thread_only() && t > 1 {
                continue;
            }
            progress.step(format_args!(
                "n={n}: concurrent insert, {} ({t} thread{})",
                method.name(),
                if t == 1 { "" } else { "s" }
            ));
            let batch = plan.batch;
            let mut subject = match method {
                Method::Plain => Build::Plain(build()?, batch),
                Method::AtomicShared => Build::Atomic(Some(build()?.into_atomic()), t, batch),
                Method::ParDefault => Build::Par(build()?, pool, None),
                Method::Partitioned => Build::Par(build()?, pool, Some(ParallelBuild::Partitioned)),
                Method::SharedAtomic => {
                    Build::Par(build()?, pool, Some(ParallelBuild::SharedAtomic))
                }
                Method::PerThread => {
                    let filters = (0..t).map(|_| build()).collect::<Result<Vec<_>, _>>()?;
                    let out = if t > 1 {
                        vec![Block::ZERO; filters[0].blocks().len()]
                    } else {
                        Vec::new()
                    };
                    Build::PerThread(filters, out, batch)
                }
                Method::Peer(peer) => {
                    let f = (peer.build)(plan.n, plan.fpr);
                    peer_bytes.get_or_insert(f.size_in_bytes());
                    Build::Peer(f, t)
                }
            };
            let (timing, merge) = time_builds(&mut subject, keys, plan.reps);
            cells.push(Cell {
                threads: t,
                timing,
                merge,
            });
            let problem = if method == Method::Plain && reference.is_none() {
                let Build::Plain(f, _) = subject else {
                    unreachable!("the plain method builds a plain subject")
                };
                reference = Some(f);
                None
            } else {
                let reference = match &mut reference {
                    Some(r) => r,
                    slot => {
                        let mut r = build()?;
                        r.insert_batch(all_keys);
                        slot.insert(r)
                    }
                };
                subject.check(reference, keys)
            };
            if let Some(p) = problem {
                problems.push(format!("{} ({t} threads): {p}", method.name()));
            }
        }
        rows.push(MethodRow { method, cells });
    }
    Ok(ConcurrentResult {
        plan: plan.clone(),
        bytes,
        peer_bytes,
        rows,
        problems,
    })
}

/// Runs `plan` on the `plan.n` member keys of stream `seed`, generated here.
///
/// # Errors
/// As [`run`], or a message if the keys do not fit in memory.
pub fn run_on_stream(
    plan: &ConcurrentPlan,
    seed: u64,
    progress: &Progress,
) -> Result<ConcurrentResult, Box<dyn Error>> {
    progress.step(format_args!(
        "n={}: generating keys for the concurrent insert",
        group(plan.n as u64)
    ));
    let keys = keys::members(plan.n, seed)?;
    run(plan, &keys, progress)
}

impl ConcurrentResult {
    /// The row of `method`, if measured.
    pub fn row(&self, method: Method) -> Option<&MethodRow> {
        self.rows.iter().find(|r| r.method == method)
    }

    /// Median ns/key of `method` at `threads`, if measured.
    pub fn ns(&self, method: Method, threads: usize) -> Option<f64> {
        self.row(method)?
            .cells
            .iter()
            .find(|c| c.threads == threads)
            .map(|c| c.timing.median())
    }

    /// A few lines describing the filter and the method.
    pub fn describe(&self, caches: &[system::Cache]) -> String {
        let p = &self.plan;
        let mut peers: Vec<&str> = Vec::new();
        for r in &self.rows {
            if let Method::Peer(peer) = r.method
                && !peers.contains(&peer.crate_name)
            {
                peers.push(peer.crate_name);
            }
        }
        let peers = peers.join(", ");
        let mut s = String::new();
        let _ = writeln!(
            s,
            "n = {} keys, target FPR {}, kernel {}: blockbloom filter {} bytes ({}, {}){}",
            group(p.n as u64),
            percent(p.fpr),
            p.isa,
            group(self.bytes as u64),
            bytes(self.bytes as u64),
            system::placement(self.bytes as u64, caches),
            match self.peer_bytes {
                Some(b) => format!(", {peers} filter {} bytes", group(b as u64)),
                None => String::new(),
            }
        );
        let _ = writeln!(
            s,
            "insert: every method and thread count builds the filter from empty, {}; wall-clock time over all threads (spawning scoped threads or entering the rayon pool included) / keys, median; clearing is not timed; batches of {} keys",
            describe_schedule(p.n, p.reps),
            p.batch
        );
        if p.n > PEER_MAX_KEYS && !peers.is_empty() {
            let _ = writeln!(
                s,
                "{peers} rows: timed on the first {} keys only ({}), the filter still sized for n: its insert fetch_or's every bit whatever the filter holds, so the fill does not change its cost",
                group(PEER_MAX_KEYS as u64),
                describe_schedule(PEER_MAX_KEYS, p.reps)
            );
        }
        if subject::segmented(p.n, p.reps)
            && self
                .rows
                .iter()
                .any(|r| matches!(r.method, Method::AtomicShared | Method::SharedAtomic))
        {
            let _ = writeln!(
                s,
                "atomic rows: later segments are cheaper (more words already hold a key's bits, and the atomic insert skips those), so their spread is large; the median segment is the middle of the build"
            );
        }
        if let Some(r) = self.row(Method::PerThread) {
            let merges: Vec<String> = r
                .cells
                .iter()
                .filter_map(|c| c.merge.map(|m| format!("{} threads {m:.2} ns", c.threads)))
                .collect();
            if !merges.is_empty() {
                let _ = writeln!(
                    s,
                    "per-thread rows include the OR of the T filters' blocks into one block vector (T threads, a range of blocks each), charged per key of the build: {}",
                    merges.join(", ")
                );
            }
        }
        if self.row(Method::ParDefault).is_some() {
            let _ = writeln!(
                s,
                "par_insert_batch builds a filter of at most about 2 MiB on the calling thread (no speed-up expected there), larger ones partitioned by block range"
            );
        }
        let _ = writeln!(
            s,
            "checked: every blockbloom build is bit-identical to the plain single-thread build{}",
            if peers.is_empty() {
                String::new()
            } else {
                format!("; {peers} has no false negatives on the first 100,000 keys")
            }
        );
        s
    }

    /// Methods by thread count: ns/key, speed-up over 1 thread of the same method, and over
    /// the plain single-thread insert.
    pub fn table(&self) -> Table {
        let ts = &self.plan.threads;
        let mut header = vec!["method".to_string(), "how".to_string()];
        header.extend(ts.iter().map(|t| format!("{t}t ns/key")));
        header.extend(ts.iter().skip(1).map(|t| format!("{t}t vs 1t")));
        header.extend(ts.iter().map(|t| format!("{t}t vs plain")));
        header.push("spread".to_string());
        let mut table = Table::new(header);
        let plain = self.ns(Method::Plain, 1);
        let ratio = |num: Option<f64>, den: Option<f64>| match (num, den) {
            (Some(a), Some(b)) => format!("{:.2}x", a / b),
            _ => "-".to_string(),
        };
        for r in &self.rows {
            let ns = |t: usize| self.ns(r.method, t);
            let mut cells = vec![r.method.name().to_string(), r.method.api().to_string()];
            cells.extend(
                ts.iter()
                    .map(|&t| ns(t).map_or("-".to_string(), |v| format!("{v:.2}"))),
            );
            cells.extend(ts.iter().skip(1).map(|&t| ratio(ns(1), ns(t))));
            cells.extend(ts.iter().map(|&t| ratio(plain, ns(t))));
            let spread = r
                .cells
                .iter()
                .map(|c| c.timing.spread())
                .fold(0.0, f64::max);
            cells.push(format!("{:.0}%", spread * 100.0));
            table.row(cells);
        }
        table
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_method_builds_the_plain_filter() {
        let keys = keys::members(30_000, 3).unwrap();
        let mut plan = ConcurrentPlan::new(30_000, 0.01, Isa::detect(), &[3, 2], &Method::BUILDS);
        plan.methods.push(Method::ParDefault);
        plan.reps = 1;
        assert_eq!(plan.threads, [1, 2, 3]);
        let r = run(&plan, &keys, &Progress::quiet()).unwrap();
        assert!(r.problems.is_empty(), "{:?}", r.problems);
        assert_eq!(r.row(Method::Plain).unwrap().cells.len(), 1);
        assert_eq!(r.row(Method::AtomicShared).unwrap().cells.len(), 3);
        let merge = &r.row(Method::PerThread).unwrap().cells;
        assert!(merge[0].merge.is_none() && merge[1].merge.is_some());
        let text = r.table().text();
        assert!(text.contains("3t vs plain"), "{text}");
        assert!(
            text.contains("par_insert_batch_with(SharedAtomic)"),
            "{text}"
        );
    }

    /// A peer that shares an `AtomicBloomFilter`; with `lossy` it drops every other key.
    struct TestPeer(Option<AtomicBloomFilter>, bool);

    impl TestPeer {
        fn filter(&self) -> &AtomicBloomFilter {
            self.0.as_ref().expect("filter")
        }
    }

    impl SharedFilter for TestPeer {
        fn clear(&mut self) {
            let mut plain = self.0.take().expect("filter").into_filter();
            plain.clear();
            self.0 = Some(plain.into_atomic());
        }

        fn pass(&self, keys: &[u64], threads: usize) {
            std::thread::scope(|s| {
                for share in shares(keys, threads) {
                    s.spawn(move || {
                        for k in share.iter().step_by(if self.1 { 2 } else { 1 }) {
                            self.filter().insert(k);
                        }
                    });
                }
            });
        }

        fn contains(&self, key: u64) -> bool {
            self.filter().contains(&key)
        }

        fn size_in_bytes(&self) -> usize {
            self.filter().size_in_bytes()
        }
    }

    fn peer(name: &'static str, lossy: bool) -> Method {
        let build: fn(usize, f64) -> Box<dyn SharedFilter> = if lossy {
            |n, fpr| Box::new(TestPeer(atomic(n, fpr), true))
        } else {
            |n, fpr| Box::new(TestPeer(atomic(n, fpr), false))
        };
        Method::Peer(ConcurrentPeer {
            name,
            api: "scoped threads, single-key",
            crate_name: "testpeer",
            build,
        })
    }

    fn atomic(n: usize, fpr: f64) -> Option<AtomicBloomFilter> {
        Some(AtomicBloomFilter::with_capacity(n as u64, fpr).unwrap())
    }

    #[test]
    fn peers_are_timed_and_checked_for_false_negatives() {
        let (good, bad) = (peer("good peer", false), peer("bad peer", true));
        let mut plan = ConcurrentPlan::new(20_000, 0.01, Isa::detect(), &[2], &[]);
        plan.methods = vec![Method::Plain, good, bad];
        plan.reps = 1;
        let r = run_on_stream(&plan, 5, &Progress::quiet()).unwrap();
        assert_eq!(r.row(good).unwrap().cells.len(), 2);
        assert_eq!(r.problems.len(), 2, "{:?}", r.problems);
        assert!(
            r.problems.iter().all(|p| p.starts_with("bad peer")),
            "{:?}",
            r.problems
        );
        assert!(r.peer_bytes.is_some());
        let text = r.describe(&[]);
        assert!(text.contains(", testpeer filter "), "{text}");
        assert!(text.contains("testpeer has no false negatives"), "{text}");
        assert!(r.table().text().contains("good peer"));
    }
}
