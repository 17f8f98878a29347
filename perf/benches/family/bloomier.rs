//! Bloomier filter (`bloomier/<operation>/<size>/<implementation>`):
//!
//! * `get_batch`: `BloomierFilter::get_batch` of the member keys (8-bit values, 8-bit
//!   fingerprints, 16 bits per slot) into a reused buffer, against the plain filter's
//!   `count_batch` (membership only, 1% target) of the same keys: what answering a value
//!   costs over answering "present".
//! * `get`: `BloomierFilter::get` per key, summing the values.
//! * `build`: `BloomierBuilder::build_batch` from keys and values (hash, sort, peel, assign),
//!   against the plain filter's `insert_batch` into a fresh filter. Throughput is per key, so
//!   criterion's time per element is the build time per key.

use blockbloom::{BloomFilter, BloomierFilter};
use criterion::{BatchSize, Criterion, Throughput};

use crate::{SIZES, keys};

pub fn bloomier(c: &mut Criterion) {
    for (name, n) in SIZES {
        let members = keys(n, 1);
        let values: Vec<u64> = members.iter().map(|k| k & 0xff).collect();
        let map = BloomierFilter::builder(8, 8)
            .build_batch(&members, &values)
            .expect("valid");
        let mut plain = BloomFilter::with_capacity(n as u64, 0.01).expect("valid");
        plain.insert_batch(&members);

        let mut g = c.benchmark_group(format!("bloomier/get_batch/{name}"));
        g.throughput(Throughput::Elements(n as u64));
        let mut out = vec![None; n];
        g.bench_function("bloomier", |b| b.iter(|| map.get_batch(&members, &mut out)));
        g.bench_function("plain", |b| b.iter(|| plain.count_batch(&members)));
        g.finish();

        let mut g = c.benchmark_group(format!("bloomier/get/{name}"));
        g.throughput(Throughput::Elements(n as u64));
        g.bench_function("bloomier", |b| {
            b.iter(|| members.iter().filter_map(|k| map.get(k)).sum::<u64>())
        });
        g.bench_function("plain", |b| {
            b.iter(|| members.iter().filter(|k| plain.contains(*k)).count())
        });
        g.finish();

        let mut g = c.benchmark_group(format!("bloomier/build/{name}"));
        g.throughput(Throughput::Elements(n as u64));
        g.sample_size(10);
        g.bench_function("bloomier", |b| {
            b.iter(|| {
                BloomierFilter::builder(8, 8)
                    .build_batch(&members, &values)
                    .expect("valid")
            })
        });
        g.bench_function("plain", |b| {
            b.iter_batched_ref(
                || BloomFilter::with_capacity(n as u64, 0.01).expect("valid"),
                |f| f.insert_batch(&members),
                BatchSize::LargeInput,
            )
        });
        g.finish();
    }
}
