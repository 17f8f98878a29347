//! The classic (unblocked) filter against fastbloom 0.17, which is also unblocked (k positions
//! over the whole array by double hashing of one 64-bit hash, `index = h * m >> 64`), with the
//! same `m` and `k` (the textbook design for 1%), and the blocked plain filter at the same
//! target for scale. fastbloom runs at its fastest documented configuration (foldhash) and
//! takes keys one at a time (it has no batch form).
//!
//! Ids: `classic/<operation>/<size>/<implementation>`, operations `insert`, `contains`
//! (queries of keys that were inserted: every probe is read) and `absent` (keys that were
//! not: a query can stop at its first clear bit). `classic-gather` is the batch with
//! [`ClassicBloomFilter::with_gather`]. Sizes: `1m` (1M keys, a 1.2 MB array: L2/L3)
//! always, and `dram` (2^25 keys, a 40 MB array, beyond a 32 MiB L3) when
//! `BLOCKBLOOM_BENCH_SIZES` contains `dram` (it takes minutes).

use std::hint::black_box;

use blockbloom::ClassicBloomFilter;
use blockbloom_perf::peers;
use criterion::Criterion;

use crate::{Group, fresh, group, keys, plain_filter, plain_insert};

fn fast(m: u64, k: u32) -> peers::FastFold {
    peers::fastbloom_fold_bits(m as usize, Some(k), 0)
}

fn sizes() -> Vec<(&'static str, usize)> {
    let mut s = vec![("1m", 1_000_000)];
    if std::env::var("BLOCKBLOOM_BENCH_SIZES").is_ok_and(|v| v.contains("dram")) {
        s.push(("dram", 1 << 25));
    }
    s
}

/// The group `name` of `n` keys; 10 samples beyond 2^24 keys.
fn sized(c: &mut Criterion, name: String, n: usize) -> Group<'_> {
    let mut g = group(c, name, n);
    if n > 1 << 24 {
        g.sample_size(10);
    }
    g
}

/// `classic/<operation>/<size>/<implementation>` at 1%.
pub fn classic(c: &mut Criterion) {
    for (size, n) in sizes() {
        let members = keys(n, 1);
        let absent = keys(n, 2);
        let design = ClassicBloomFilter::with_capacity(n as u64, 0.01).expect("valid");
        let (m, k) = (design.num_bits(), design.probes());
        let mut ours = design.clone();
        ours.insert_batch(&members);
        let mut peer = fast(m, k);
        for x in &members {
            peer.insert(x);
        }
        let plain = plain_filter(n, &members);
        eprintln!(
            "classic/{size}: m = {m} bits, k = {k}; measured FPR classic {:.4}, fastbloom {:.4}, plain {:.4}",
            ours.count_batch(&absent) as f64 / n as f64,
            absent.iter().filter(|x| peer.contains(x)).count() as f64 / n as f64,
            plain.count_batch(&absent) as f64 / n as f64,
        );
        let mut g = sized(c, format!("classic/insert/{size}"), n);
        fresh(
            &mut g,
            "classic-batch",
            || design.clone(),
            |f| f.insert_batch(&members),
        );
        let single = |f: &mut ClassicBloomFilter| members.iter().for_each(|x| f.insert(x));
        fresh(&mut g, "classic-single", || design.clone(), single);
        let peer_insert = |f: &mut peers::FastFold| {
            members.iter().for_each(|x| {
                f.insert(x);
            })
        };
        fresh(&mut g, "fastbloom", || fast(m, k), peer_insert);
        plain_insert(&mut g, "plain-batch", n, &members);
        g.finish();

        for (op, queries) in [("contains", &members), ("absent", &absent)] {
            let mut g = sized(c, format!("classic/{op}/{size}"), n);
            g.bench_function("classic-batch", |b| b.iter(|| ours.count_batch(queries)));
            let gathering = ours.clone().with_gather(true);
            g.bench_function("classic-gather", |b| {
                b.iter(|| gathering.count_batch(queries))
            });
            g.bench_function("classic-single", |b| {
                b.iter(|| queries.iter().filter(|x| ours.contains(*x)).count())
            });
            g.bench_function("fastbloom", |b| {
                b.iter(|| {
                    queries
                        .iter()
                        .filter(|x| black_box(&peer).contains(*x))
                        .count()
                })
            });
            g.bench_function("plain-batch", |b| b.iter(|| plain.count_batch(queries)));
            g.finish();
        }
    }
}
