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

use blockbloom::BloomierFilter;
use criterion::Criterion;

use crate::{SIZES, group, keys, plain_filter, plain_insert};

pub fn bloomier(c: &mut Criterion) {
    for (name, n) in SIZES {
        let members = keys(n, 1);
        let values: Vec<u64> = members.iter().map(|k| k & 0xff).collect();
        let build = || {
            BloomierFilter::builder(8, 8)
                .build_batch(&members, &values)
                .expect("valid")
        };
        let map = build();
        let plain = plain_filter(n, &members);

        let mut g = group(c, format!("bloomier/get_batch/{name}"), n);
        let mut out = vec![None; n];
        g.bench_function("bloomier", |b| b.iter(|| map.get_batch(&members, &mut out)));
        g.bench_function("plain", |b| b.iter(|| plain.count_batch(&members)));
        g.finish();

        let mut g = group(c, format!("bloomier/get/{name}"), n);
        g.bench_function("bloomier", |b| {
            b.iter(|| members.iter().filter_map(|k| map.get(k)).sum::<u64>())
        });
        g.bench_function("plain", |b| {
            b.iter(|| members.iter().filter(|k| plain.contains(*k)).count())
        });
        g.finish();

        let mut g = group(c, format!("bloomier/build/{name}"), n);
        g.sample_size(10);
        g.bench_function("bloomier", |b| b.iter(build));
        plain_insert(&mut g, "plain", n, &members);
        g.finish();
    }
}
