//! The filter kinds built on the engine (counting, deletable, scalable, compressed transfer,
//! Bloomier, classic) against the plain `BloomFilter` they reuse, one module per kind. Benchmark ids are
//! `<kind>/<operation>/<size>/<implementation>`, and every group has a `plain` row measured
//! the same way, so a ratio to the plain filter reads off one run.

use blockbloom::BloomFilter;
use blockbloom_measure::keys::{GAMMA, mix};
use criterion::measurement::WallTime;
use criterion::{
    BatchSize, BenchmarkGroup, Criterion, Throughput, criterion_group, criterion_main,
};

mod bloomier;
mod classic;
mod compressed;
mod counting;
mod delscal;

/// `n` distinct pseudo-random `u64` keys of stream `seed` (SplitMix64's output function of the
/// index, `blockbloom_measure::keys::mix`).
pub fn keys(n: usize, seed: u64) -> Vec<u64> {
    (0..n as u64)
        .map(|i| mix((i ^ seed.rotate_left(32)).wrapping_add(GAMMA)))
        .collect()
}

/// Key counts every kind is measured at: cache-resident (filters of tens of KiB) and a
/// million keys (about a MiB of plain filter, L2/L3).
pub const SIZES: [(&str, usize); 2] = [("50k", 50_000), ("1m", 1_000_000)];

/// A group's benchmarks, in criterion's wall time.
pub type Group<'a> = BenchmarkGroup<'a, WallTime>;

/// The group `name`, its throughput `n` keys an iteration.
pub fn group<'a>(c: &'a mut Criterion, name: String, n: usize) -> Group<'a> {
    let mut g = c.benchmark_group(name);
    g.throughput(Throughput::Elements(n as u64));
    g
}

/// A plain filter for `n` keys at 1%, holding `members`.
pub fn plain_filter(n: usize, members: &[u64]) -> BloomFilter {
    let mut f = BloomFilter::with_capacity(n as u64, 0.01).expect("valid");
    f.insert_batch(members);
    f
}

/// Times `run` on a fresh value from `make` every iteration (a build: `make` is not timed).
pub fn fresh<T, R>(
    g: &mut Group<'_>,
    id: &str,
    make: impl Fn() -> T,
    mut run: impl FnMut(&mut T) -> R,
) {
    g.bench_function(id, |b| {
        b.iter_batched_ref(&make, &mut run, BatchSize::LargeInput)
    });
}

/// The plain filter's `insert_batch` of `members` into a fresh filter for `n` keys at 1%: the
/// reference row of every kind's insert.
pub fn plain_insert(g: &mut Group<'_>, id: &str, n: usize, members: &[u64]) {
    let empty = || BloomFilter::with_capacity(n as u64, 0.01).expect("valid");
    fresh(g, id, empty, |f| f.insert_batch(members));
}

/// The plain filter's batch insert and batch contains at each size: the reference rows.
fn plain(c: &mut Criterion) {
    for (name, n) in SIZES {
        let members = keys(n, 1);
        let queries = keys(n, 2);
        let mut g = group(c, format!("plain/{name}"), n);
        plain_insert(&mut g, "insert_batch", n, &members);
        let f = plain_filter(n, &members);
        g.bench_function("count_batch", |b| b.iter(|| f.count_batch(&queries)));
        g.finish();
    }
}

criterion_group!(
    benches,
    plain,
    counting::counting,
    delscal::deletable,
    delscal::scalable,
    compressed::compressed,
    bloomier::bloomier,
    classic::classic
);
criterion_main!(benches);
