//! The deletable and the scalable filter against the plain filter at the same key count.
//!
//! Ids follow `<kind>/<operation>/<size>/<implementation>`.
//!
//! * `deletable/…`: batch insert, batch contains (the plain kernel on the same blocks),
//!   and removing a tenth of the keys, with one-word regions.
//! * `scalable/…`: growing from 1/100 of the key count (100x growth, defaults s = 2,
//!   r = 0.85) against one plain filter sized for the final count, then batch lookups of
//!   members and of non-members.

use blockbloom::{BloomFilter, DeletableBloomFilter, ScalableBloomFilter};
use criterion::{BatchSize, Criterion, Throughput};

use crate::{SIZES, keys};

const FPR: f64 = 0.01;

pub fn deletable(c: &mut Criterion) {
    let mut g = c.benchmark_group("deletable");
    for (name, n) in SIZES {
        let members = keys(n, 1);
        let queries = keys(n, 2);
        g.throughput(Throughput::Elements(n as u64));
        g.bench_function(format!("insert_batch/{name}/deletable"), |b| {
            b.iter_batched_ref(
                || DeletableBloomFilter::with_capacity(n as u64, FPR).expect("valid"),
                |f| f.insert_batch(&members),
                BatchSize::LargeInput,
            )
        });
        g.bench_function(format!("insert_batch/{name}/plain"), |b| {
            b.iter_batched_ref(
                || BloomFilter::with_capacity(n as u64, FPR).expect("valid"),
                |f| f.insert_batch(&members),
                BatchSize::LargeInput,
            )
        });
        let mut d = DeletableBloomFilter::with_capacity(n as u64, FPR).expect("valid");
        d.insert_batch(&members);
        let mut p = BloomFilter::with_capacity(n as u64, FPR).expect("valid");
        p.insert_batch(&members);
        g.bench_function(format!("count_batch/{name}/deletable"), |b| {
            b.iter(|| d.count_batch(&queries))
        });
        g.bench_function(format!("count_batch/{name}/plain"), |b| {
            b.iter(|| p.count_batch(&queries))
        });
        // A tenth of capacity, where most removals succeed and clear bits.
        let tenth = &members[..n / 10];
        let mut sparse = DeletableBloomFilter::with_capacity(n as u64, FPR).expect("valid");
        sparse.insert_batch(tenth);
        g.throughput(Throughput::Elements(tenth.len() as u64));
        g.bench_function(format!("remove_batch/{name}/deletable"), |b| {
            b.iter_batched_ref(
                || sparse.clone(),
                |f| f.remove_batch(tenth),
                BatchSize::LargeInput,
            )
        });
    }
    g.finish();
}

pub fn scalable(c: &mut Criterion) {
    let mut g = c.benchmark_group("scalable");
    for (name, n) in SIZES {
        let members = keys(n, 3);
        let queries = keys(n, 4);
        let initial = (n / 100) as u64;
        g.throughput(Throughput::Elements(n as u64));
        g.bench_function(format!("insert_batch_100x/{name}/scalable"), |b| {
            b.iter_batched_ref(
                || ScalableBloomFilter::new(initial, FPR).expect("valid"),
                |f| f.insert_batch(&members).expect("grows"),
                BatchSize::LargeInput,
            )
        });
        g.bench_function(format!("insert_batch_100x/{name}/plain"), |b| {
            b.iter_batched_ref(
                || BloomFilter::with_capacity(n as u64, FPR).expect("valid"),
                |f| f.insert_batch(&members),
                BatchSize::LargeInput,
            )
        });
        let mut s = ScalableBloomFilter::new(initial, FPR).expect("valid");
        s.insert_batch(&members).expect("grows");
        let mut p = BloomFilter::with_capacity(n as u64, FPR).expect("valid");
        p.insert_batch(&members);
        g.bench_function(format!("count_batch_members/{name}/scalable"), |b| {
            b.iter(|| s.count_batch(&members))
        });
        g.bench_function(format!("count_batch_members/{name}/plain"), |b| {
            b.iter(|| p.count_batch(&members))
        });
        g.bench_function(format!("count_batch_non_members/{name}/scalable"), |b| {
            b.iter(|| s.count_batch(&queries))
        });
        g.bench_function(format!("count_batch_non_members/{name}/plain"), |b| {
            b.iter(|| p.count_batch(&queries))
        });
    }
    g.finish();
}
