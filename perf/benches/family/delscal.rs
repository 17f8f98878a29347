//! The deletable and the scalable filter against the plain filter at the same key count.
//!
//! Ids follow `<kind>/<operation>/<size>/<implementation>`.
//!
//! * `deletable/…`: batch insert, batch contains (the plain kernel on the same blocks),
//!   and removing a tenth of the keys, with one-word regions.
//! * `scalable/…`: growing from 1/100 of the key count (100x growth, defaults s = 2,
//!   r = 0.85) against one plain filter sized for the final count, then batch lookups of
//!   members and of non-members.

use blockbloom::{DeletableBloomFilter, ScalableBloomFilter};
use criterion::{Criterion, Throughput};

use crate::{SIZES, fresh, keys, plain_filter, plain_insert};

const FPR: f64 = 0.01;

pub fn deletable(c: &mut Criterion) {
    let mut g = c.benchmark_group("deletable");
    for (name, n) in SIZES {
        let members = keys(n, 1);
        let queries = keys(n, 2);
        let empty = || DeletableBloomFilter::with_capacity(n as u64, FPR).expect("valid");
        g.throughput(Throughput::Elements(n as u64));
        let id = format!("insert_batch/{name}/deletable");
        fresh(&mut g, &id, empty, |f| f.insert_batch(&members));
        plain_insert(&mut g, &format!("insert_batch/{name}/plain"), n, &members);
        let mut d = empty();
        d.insert_batch(&members);
        let p = plain_filter(n, &members);
        g.bench_function(format!("count_batch/{name}/deletable"), |b| {
            b.iter(|| d.count_batch(&queries))
        });
        g.bench_function(format!("count_batch/{name}/plain"), |b| {
            b.iter(|| p.count_batch(&queries))
        });
        // A tenth of capacity, where most removals succeed and clear bits.
        let tenth = &members[..n / 10];
        let mut sparse = empty();
        sparse.insert_batch(tenth);
        g.throughput(Throughput::Elements(tenth.len() as u64));
        let id = format!("remove_batch/{name}/deletable");
        fresh(&mut g, &id, || sparse.clone(), |f| f.remove_batch(tenth));
    }
    g.finish();
}

pub fn scalable(c: &mut Criterion) {
    let mut g = c.benchmark_group("scalable");
    for (name, n) in SIZES {
        let members = keys(n, 3);
        let queries = keys(n, 4);
        let empty = || ScalableBloomFilter::new((n / 100) as u64, FPR).expect("valid");
        g.throughput(Throughput::Elements(n as u64));
        let id = format!("insert_batch_100x/{name}/scalable");
        fresh(&mut g, &id, empty, |f| {
            f.insert_batch(&members).expect("grows")
        });
        plain_insert(
            &mut g,
            &format!("insert_batch_100x/{name}/plain"),
            n,
            &members,
        );
        let mut s = empty();
        s.insert_batch(&members).expect("grows");
        let p = plain_filter(n, &members);
        for (what, keys) in [("members", &members), ("non_members", &queries)] {
            g.bench_function(format!("count_batch_{what}/{name}/scalable"), |b| {
                b.iter(|| s.count_batch(keys))
            });
            g.bench_function(format!("count_batch_{what}/{name}/plain"), |b| {
                b.iter(|| p.count_batch(keys))
            });
        }
    }
    g.finish();
}
