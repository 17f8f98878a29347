//! The keys and answers of hot paths (issue 12), against the peers, in one run:
//!
//! * `strings/<n>/<len>/<impl>`: `contains` of byte-string keys of 8, 16, 32 and 100 bytes
//!   (URL-like for 100) and of IPv6 addresses (`u128`), on a filter holding `n` keys at 1%,
//!   queries half members, half not, their bytes in one buffer (as a column holds them)
//!   that every implementation reads in the same order. `batch` is `contains_batch(&[&[u8]])` (`&[u128]` for
//!   IPv6) in chunks of 1024 keys; `column` is `contains_column` over Arrow-style offsets and
//!   values; `single` is `contains_bytes` per key; peers per key: `fastbloom-foldhash`
//!   (fastbloom 0.17, foldhash `fast::RandomState`), `sbbf-xxh3` (sbbf-rs-safe 0.3.2, 11 bits
//!   per key, `xxh3_64` of the bytes), `parquet-sbbf` (parquet 60's `Sbbf` at 1%, XXH64 of
//!   the bytes); `xxh3-only` is no filter, the keys' XXH3-64 alone (the hash of `batch` and of
//!   `sbbf-xxh3`).
//! * `dedup/<n>/<impl>`: a stream of `u64` keys, 3/4 of them repeats, into an empty filter
//!   sized for the distinct keys: `insert_batch_new` (chunks of 1024), `insert_new` per key,
//!   and fastbloom's `insert` (which returns whether the key was new).
//! * `build_1000/<impl>`: construction plus fill of a filter for 1,000 `u64` keys at 1%:
//!   `with_capacity` + `insert_batch`, against parquet's `Sbbf::new_with_ndv_fpp` + `insert`
//!   and sbbf-rs-safe `Filter::new` + `insert_hash`. `blockbloom` builds the same shape again
//!   and again (its plan is remembered per thread after the first); `blockbloom-cold` takes
//!   64 capacities in turn, so every construction plans.
//!
//! Run: `cargo bench -p blockbloom-perf --bench keys` (all), `cargo bench -p blockbloom-perf --bench keys -- strings/1M/16` (a
//! regex). `BLOCKBLOOM_BENCH_SIZES=50k` or `1M` selects a size (default both). Each case
//! reports keys/s; its time divided by the keys is ns/key.

use std::hint::black_box;
use std::time::Duration;

use blockbloom::{BatchKey, BloomFilter, ByteColumn};
use blockbloom_measure::keys::{Rng, scrambled};
use blockbloom_perf::peers::{self, Sbbf, sbbf_bits_per_key};
use blockbloom_perf::workload::string_key;
use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, criterion_group, criterion_main};

mod common;
use common::{Sampling, configure};

const FPR: f64 = 0.01;
const BATCH: usize = 1024;
const QUERIES: usize = 1 << 16;

fn fast_fold(n: usize) -> peers::FastFold {
    peers::fastbloom_fold(n, FPR)
}

/// `n` distinct keys of `len` bytes: printable, URL-like at 100 bytes.
fn strings(seed: u64, n: usize, len: usize) -> Vec<Vec<u8>> {
    let mut r = Rng(seed);
    (0..n).map(|i| string_key(&mut r, i, len)).collect()
}

fn sizes() -> Vec<(&'static str, usize)> {
    common::selected(&[("50k", 50_000), ("1M", 1_000_000)], |s| s.0)
}

fn group<'a>(c: &'a mut Criterion, name: &str, elements: usize) -> BenchmarkGroup<'a, WallTime> {
    let mut g = c.benchmark_group(name);
    let sampling = Sampling {
        sample_size: 20,
        warm_up: Duration::from_millis(500),
        measurement: Duration::from_secs(2),
        flat: false,
    };
    configure(&mut g, &sampling, elements);
    g
}

/// The members `bb` finds among `queries`, asked in calls of [`BATCH`] keys.
fn batch_hits<K: BatchKey>(bb: &BloomFilter, queries: &[K], out: &mut [bool]) -> usize {
    let mut hits = 0;
    for chunk in queries.chunks(BATCH) {
        let out = &mut out[..chunk.len()];
        bb.contains_batch(chunk, out);
        hits += out.iter().filter(|&&x| x).count();
    }
    black_box(hits)
}

/// The queries `contains` answers present, one key a call.
#[inline(always)]
fn hits<K>(queries: &[K], contains: impl Fn(&K) -> bool) -> usize {
    black_box(queries.iter().filter(|q| contains(q)).count())
}

fn string_contains(c: &mut Criterion) {
    for (size, n) in sizes() {
        for len in [8usize, 16, 32, 100] {
            let members = strings(1, n, len);
            let absent = strings(2, QUERIES / 2, len);
            // The queries live in one buffer, as a column of a batch does; every implementation
            // reads the same slices of it, so only the filter is accessed at random.
            let mut r = Rng(3);
            let mut offsets = vec![0i32];
            let mut values = Vec::new();
            for i in 0..QUERIES {
                let q = if i % 2 == 0 {
                    &members[(r.next() % n as u64) as usize]
                } else {
                    &absent[i / 2]
                };
                values.extend_from_slice(q);
                offsets.push(values.len() as i32);
            }
            let queries: Vec<&[u8]> = offsets
                .windows(2)
                .map(|w| &values[w[0] as usize..w[1] as usize])
                .collect();
            let column = ByteColumn::new(&offsets, &values).unwrap();

            let mut bb = BloomFilter::with_capacity(n as u64, FPR).unwrap();
            let refs: Vec<&[u8]> = members.iter().map(Vec::as_slice).collect();
            bb.insert_batch(&refs);
            let mut ff = fast_fold(n);
            let mut sb = Sbbf::new(n, FPR);
            let mut pq = peers::parquet_sbbf(n, FPR);
            for m in &members {
                ff.insert(m.as_slice());
                sb.insert_bytes(m);
                pq.insert(m.as_slice());
            }

            let mut g = group(c, &format!("strings/{size}/{len}"), QUERIES);
            let mut out = vec![false; BATCH];
            g.bench_function("batch", |b| b.iter(|| batch_hits(&bb, &queries, &mut out)));
            let mut all = vec![false; QUERIES];
            g.bench_function("column", |b| {
                b.iter(|| {
                    bb.contains_column(&column, &mut all);
                    black_box(all[0])
                })
            });
            g.bench_function("single", |b| {
                b.iter(|| hits(&queries, |q| bb.contains_bytes(q)))
            });
            g.bench_function("fastbloom-foldhash", |b| {
                b.iter(|| hits(&queries, |q| ff.contains(*q)))
            });
            g.bench_function("sbbf-xxh3", |b| {
                b.iter(|| hits(&queries, |q| sb.contains_bytes(q)))
            });
            g.bench_function("parquet-sbbf", |b| {
                b.iter(|| hits(&queries, |q| pq.check(*q)))
            });
            // No filter: the keys' hash alone, as the filter computes it (XXH3-64 of the bytes,
            // what `sbbf-xxh3` pays too), the part of the time no probe can remove.
            g.bench_function("xxh3-only", |b| {
                b.iter(|| {
                    queries
                        .iter()
                        .fold(0u64, |acc, q| acc ^ blockbloom::hash::hash_bytes(q, 0))
                })
            });
            g.finish();
        }

        // IPv6 addresses as u128.
        let mut r = Rng(4);
        let members: Vec<u128> = (0..n)
            .map(|_| 0x2001_0db8u128 << 96 | (r.next() as u128) << 32 | r.next() as u128 >> 32)
            .collect();
        let queries: Vec<u128> = (0..QUERIES)
            .map(|i| {
                if i % 2 == 0 {
                    members[(r.next() % n as u64) as usize]
                } else {
                    0xfe80u128 << 112 | r.next() as u128
                }
            })
            .collect();
        let mut bb = BloomFilter::with_capacity(n as u64, FPR).unwrap();
        bb.insert_batch(&members);
        let mut ff = fast_fold(n);
        let mut sb = Sbbf::new(n, FPR);
        let mut pq = peers::parquet_sbbf(n, FPR);
        for m in &members {
            ff.insert(m);
            sb.insert_bytes(&m.to_le_bytes());
            pq.insert(&m.to_le_bytes()[..]);
        }
        let mut g = group(c, &format!("strings/{size}/ipv6"), QUERIES);
        let mut out = vec![false; BATCH];
        g.bench_function("batch", |b| b.iter(|| batch_hits(&bb, &queries, &mut out)));
        let bytes = |q: &u128| q.to_le_bytes();
        g.bench_function("single", |b| {
            b.iter(|| hits(&queries, |q| bb.contains_bytes(&bytes(q))))
        });
        g.bench_function("fastbloom-foldhash", |b| {
            b.iter(|| hits(&queries, |q| ff.contains(q)))
        });
        g.bench_function("sbbf-xxh3", |b| {
            b.iter(|| hits(&queries, |q| sb.contains_bytes(&bytes(q))))
        });
        g.bench_function("parquet-sbbf", |b| {
            b.iter(|| hits(&queries, |q| pq.check(&bytes(q)[..])))
        });
        g.finish();
    }
}

fn dedup(c: &mut Criterion) {
    for (size, n) in sizes() {
        // n/4 distinct keys, each seen 4 times, shuffled by a multiplicative walk.
        let distinct = (n / 4).max(1) as u64;
        let mut r = Rng(5);
        let stream: Vec<u64> = (0..n).map(|_| scrambled(r.next() % distinct)).collect();
        let mut g = group(c, &format!("dedup/{size}"), n);
        let mut out = vec![false; BATCH];
        g.bench_function("insert_batch_new", |b| {
            b.iter(|| {
                let mut f = BloomFilter::with_capacity(distinct, FPR).unwrap();
                let mut new = 0;
                for chunk in stream.chunks(BATCH) {
                    new += f.insert_batch_new(chunk, &mut out[..chunk.len()]);
                }
                black_box(new)
            })
        });
        g.bench_function("insert_new", |b| {
            b.iter(|| {
                let mut f = BloomFilter::with_capacity(distinct, FPR).unwrap();
                black_box(stream.iter().filter(|k| f.insert_new(*k)).count())
            })
        });
        g.bench_function("fastbloom-foldhash", |b| {
            b.iter(|| {
                let mut f = fast_fold(distinct as usize);
                black_box(stream.iter().filter(|k| !f.insert(*k)).count())
            })
        });
        g.finish();
    }
}

fn build_1000(c: &mut Criterion) {
    let keys: Vec<u64> = (0..1000u64).map(scrambled).collect();
    // sbbf-rs's budget is a user's constant, chosen outside the timed loop.
    let bits_per_key = sbbf_bits_per_key(keys.len(), FPR);
    let mut g = group(c, "build_1000", keys.len());
    g.bench_function("blockbloom", |b| {
        b.iter(|| {
            let mut f = BloomFilter::with_capacity(1000, FPR).unwrap();
            f.insert_batch(&keys);
            black_box(f.num_blocks())
        })
    });
    // Each construction a capacity of its own (64 in turn, more than a thread remembers):
    // every one plans, as the first filter of a shape does.
    let mut i = 0u64;
    g.bench_function("blockbloom-cold", |b| {
        b.iter(|| {
            i = (i + 1) % 64;
            let mut f = BloomFilter::with_capacity(1000 + i, FPR).unwrap();
            f.insert_batch(&keys);
            black_box(f.num_blocks())
        })
    });
    g.bench_function("parquet-sbbf", |b| {
        b.iter(|| {
            let mut f = peers::parquet_sbbf(1000, FPR);
            for k in &keys {
                f.insert(k);
            }
            black_box(f.num_blocks())
        })
    });
    g.bench_function("sbbf-xxh3", |b| {
        b.iter(|| {
            let mut f = Sbbf::with_bits_per_key(bits_per_key, 1000);
            for &k in &keys {
                f.insert_u64(k);
            }
            black_box(f.as_bytes().len())
        })
    });
    g.finish();
}

criterion_group!(keys, string_contains, dedup, build_1000);
criterion_main!(keys);
