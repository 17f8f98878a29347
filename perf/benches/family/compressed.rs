//! Compressed transfer form: `to_compressed_bytes` / `from_compressed_bytes` against the plain
//! form (`to_bytes` / `from_bytes`) of the same filter, the one `compressed::plan` picks for 16
//! transferred bits per key. Throughput is in bytes of the plain encoding, so the rows of a
//! group compare directly; ns per key is the time over the key count.

use blockbloom::BloomFilter;
use criterion::{Criterion, Throughput};

use crate::{SIZES, keys};

/// The filter of `n` keys planned for 16 transferred bits per key, filled to capacity.
fn planned(n: usize) -> BloomFilter {
    let mut f = BloomFilter::with_transfer_budget(n as u64, 16.0).expect("valid budget");
    f.insert_batch(&keys(n, 1));
    f
}

/// `compressed/encode/<size>/{compressed,plain}` and `compressed/decode/<size>/{compressed,plain}`.
pub fn compressed(c: &mut Criterion) {
    for (name, n) in SIZES {
        let f = planned(n);
        let wire = f.to_compressed_bytes().expect("compresses");
        let plain = f.to_bytes();
        let mut g = c.benchmark_group(format!("compressed/encode/{name}"));
        g.throughput(Throughput::Bytes(plain.len() as u64));
        g.bench_function("compressed", |b| {
            b.iter(|| f.to_compressed_bytes().expect("compresses"))
        });
        g.bench_function("plain", |b| b.iter(|| f.to_bytes()));
        g.finish();
        let mut g = c.benchmark_group(format!("compressed/decode/{name}"));
        g.throughput(Throughput::Bytes(plain.len() as u64));
        g.bench_function("compressed", |b| {
            b.iter(|| BloomFilter::from_compressed_bytes(&wire).expect("decodes"))
        });
        g.bench_function("plain", |b| {
            b.iter(|| BloomFilter::from_bytes(&plain).expect("decodes"))
        });
        g.finish();
    }
}
