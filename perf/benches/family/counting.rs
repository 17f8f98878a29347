//! Counting filter (4- and 8-bit counters) against the plain filter at the same key count and
//! target: batch insert, batch query (`count_batch`), batch remove, and the single-key query
//! loop that the batch form replaces.

use blockbloom::{BloomFilter, CounterBits, CountingBloomFilter};
use criterion::{BatchSize, Criterion, Throughput};

use crate::{SIZES, keys};

fn build(n: usize, bits: CounterBits) -> CountingBloomFilter {
    CountingBloomFilter::builder()
        .capacity(n as u64)
        .fpr(0.01)
        .counter_bits(bits)
        .build()
        .expect("valid")
}

fn name(bits: CounterBits) -> String {
    format!("{}bit", bits.bits())
}

/// `counting/<operation>/<size>/<implementation>` at 1%.
pub fn counting(c: &mut Criterion) {
    for (size, n) in SIZES {
        let members = keys(n, 1);
        let queries = keys(n, 2);
        let filled: Vec<(CounterBits, CountingBloomFilter)> = CounterBits::ALL
            .iter()
            .map(|&bits| {
                let mut f = build(n, bits);
                f.insert_batch(&members);
                (bits, f)
            })
            .collect();
        let mut plain = BloomFilter::with_capacity(n as u64, 0.01).expect("valid");
        plain.insert_batch(&members);

        let mut g = c.benchmark_group(format!("counting/insert_batch/{size}"));
        g.throughput(Throughput::Elements(n as u64));
        for bits in CounterBits::ALL {
            g.bench_function(name(bits), |b| {
                b.iter_batched_ref(
                    || build(n, bits),
                    |f| f.insert_batch(&members),
                    BatchSize::LargeInput,
                )
            });
        }
        g.bench_function("plain", |b| {
            b.iter_batched_ref(
                || BloomFilter::with_capacity(n as u64, 0.01).expect("valid"),
                |f| f.insert_batch(&members),
                BatchSize::LargeInput,
            )
        });
        g.finish();

        let mut g = c.benchmark_group(format!("counting/contains/{size}"));
        g.throughput(Throughput::Elements(n as u64));
        for (bits, f) in &filled {
            g.bench_function(name(*bits), |b| b.iter(|| f.count_batch(&queries)));
        }
        let (_, four) = &filled[0];
        g.bench_function("4bit-single", |b| {
            b.iter(|| queries.iter().filter(|k| four.contains(*k)).count())
        });
        g.bench_function("plain", |b| b.iter(|| plain.count_batch(&queries)));
        g.finish();

        // No plain row: the plain filter cannot remove.
        let mut g = c.benchmark_group(format!("counting/remove_batch/{size}"));
        g.throughput(Throughput::Elements(n as u64));
        for (bits, f) in &filled {
            g.bench_function(name(*bits), |b| {
                b.iter_batched_ref(
                    || f.clone(),
                    |f| f.remove_batch(&members).expect("no min-increase"),
                    BatchSize::LargeInput,
                )
            });
        }
        g.finish();
    }
}
