//! The filter kinds built on the engine (counting, deletable, scalable, compressed transfer,
//! Bloomier, classic) against the plain `BloomFilter` they reuse, one module per kind. Benchmark ids are
//! `<kind>/<operation>/<size>/<implementation>`, and every group has a `plain` row measured
//! the same way, so a ratio to the plain filter reads off one run.

use blockbloom_measure::keys::{GAMMA, mix};
use criterion::{Criterion, criterion_group, criterion_main};

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

/// The plain filter's batch insert and batch contains at each size: the reference rows.
fn plain(c: &mut Criterion) {
    use blockbloom::BloomFilter;
    use criterion::{BatchSize, Throughput};
    for (name, n) in SIZES {
        let members = keys(n, 1);
        let queries = keys(n, 2);
        let mut g = c.benchmark_group(format!("plain/{name}"));
        g.throughput(Throughput::Elements(n as u64));
        g.bench_function("insert_batch", |b| {
            b.iter_batched_ref(
                || BloomFilter::with_capacity(n as u64, 0.01).expect("valid"),
                |f| f.insert_batch(&members),
                BatchSize::LargeInput,
            )
        });
        let mut f = BloomFilter::with_capacity(n as u64, 0.01).expect("valid");
        f.insert_batch(&members);
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
