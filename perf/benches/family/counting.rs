//! Counting filter (4- and 8-bit counters) against the plain filter at the same key count and
//! target: batch insert, batch query (`count_batch`), batch remove, and the single-key query
//! loop that the batch form replaces.

use blockbloom::{CounterBits, CountingBloomFilter};
use criterion::Criterion;

use crate::{SIZES, fresh, group, keys, plain_filter, plain_insert};

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
        let plain = plain_filter(n, &members);

        let mut g = group(c, format!("counting/insert_batch/{size}"), n);
        for bits in CounterBits::ALL {
            fresh(
                &mut g,
                &name(bits),
                || build(n, bits),
                |f| f.insert_batch(&members),
            );
        }
        plain_insert(&mut g, "plain", n, &members);
        g.finish();

        let mut g = group(c, format!("counting/contains/{size}"), n);
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
        let mut g = group(c, format!("counting/remove_batch/{size}"), n);
        for (bits, f) in &filled {
            let remove =
                |f: &mut CountingBloomFilter| f.remove_batch(&members).expect("no min-increase");
            fresh(&mut g, &name(*bits), || f.clone(), remove);
        }
        g.finish();
    }
}
