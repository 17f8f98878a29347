//! Instruction-count benchmarks (iai-callgrind 0.16.1 under valgrind/callgrind).
//!
//! Run with `cargo bench -p blockbloom-instructions --bench instructions`; it needs valgrind
//! and the runner binary of the *same* version as this package's `iai-callgrind`
//! dev-dependency:
//! `cargo install iai-callgrind-runner --version 0.16.1 --locked`.
//! `perf-reports/perf-check` runs this and compares it with `perf-reports/baseline/`.
//!
//! Every case does one operation over a fixed set of [`KEYS`] = 4096 keys, so the reported
//! instruction count (Ir) is the total for 4096 keys: **per key = total / 4096**. Only the
//! benchmark function is measured; building the filter (including the ~20 MiB one) and the
//! keys happens in the `setup` functions, which callgrind does not count.
//!
//! Names: `<filter>_<operation>` for the benchmark function (`plain_*` = [`BloomFilter`],
//! `atomic_*` = [`AtomicBloomFilter`]) and `<tier>_<size>_4096keys` for the case, where the
//! tier is the kernel chosen explicitly with `Builder::isa` (`scalar`, `avx2`; valgrind does
//! not emulate AVX-512, so that tier cannot be measured here) and the size is the filter's
//! capacity: `n10k` (10,000 keys at 1% ≈ 12 KiB, in L1/L2) and `n16m` (16,000,000 keys at 1%
//! ≈ 20 MiB, larger than the caches). Instruction counts do not see cache misses: the large
//! filter is there for the code paths (prefetching, batching windows) that depend on size.
//!
//! Every filter is the defaults' (`BloomFilter::with_capacity`: hash id 3, MX32-64 for the `u64`
//! keys, in `Layout::Sectors8x32` at 1%) on the tier named. `plain_count_batch_v2` is
//! `plain_count_batch` on the defaults before (hash id 2, XXH3-64 for `u64` keys, in the layout
//! of least memory, 8x64 at 1%). `plain_contains_batch_32` asks the 4096 keys in calls of 32, a
//! NIC's receive burst: its excess over `plain_count_batch` is the calls' fixed cost.
//! `hash_u64_batch` has no ISA parameter: it uses the active ISA, which under valgrind is
//! `avx2` (hence `active_avx2`).

use std::hint::black_box;

use blockbloom::{AtomicBloomFilter, BloomFilter, Isa, KeyHash};
use iai_callgrind::{library_benchmark, library_benchmark_group, main};

/// Keys per case: per-key cost = reported total / `KEYS`.
const KEYS: usize = 4096;
/// Capacity of the small (cache-resident) filter.
const SMALL: u64 = 10_000;
/// Capacity of the large (cache-exceeding, ~20 MiB) filter.
const LARGE: u64 = 16_000_000;
const FPR: f64 = 0.01;

/// Deterministic, well-spread keys (splitmix64 of `start..start + KEYS`).
fn keys(start: u64) -> Vec<u64> {
    (start..start + KEYS as u64)
        .map(|i| {
            let mut z = i.wrapping_add(0x9e37_79b9_7f4a_7c15);
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        })
        .collect()
}

/// The defaults on tier `isa`.
fn filter(isa: Isa, capacity: u64) -> BloomFilter {
    BloomFilter::builder()
        .capacity(capacity)
        .fpr(FPR)
        .isa(isa)
        .build()
        .expect("valid filter")
}

/// An empty filter and the keys to insert.
fn empty_plain(isa: Isa, capacity: u64) -> (BloomFilter, Vec<u64>) {
    (filter(isa, capacity), keys(0))
}

/// A filter holding `KEYS` keys, and `KEYS` queries: half of them present, half absent.
fn full_plain(isa: Isa, capacity: u64) -> (BloomFilter, Vec<u64>) {
    let mut f = filter(isa, capacity);
    f.insert_batch(&keys(0));
    let mut queries = keys(0);
    queries.truncate(KEYS / 2);
    queries.extend_from_slice(&keys(1 << 40)[..KEYS / 2]);
    (f, queries)
}

/// [`full_plain`] in the defaults before hash id 3 and the 8x32 rule.
fn full_plain_v2(isa: Isa, capacity: u64) -> (BloomFilter, Vec<u64>) {
    let mut f = BloomFilter::builder()
        .capacity(capacity)
        .fpr(FPR)
        .isa(isa)
        .key_hash(KeyHash::Aesh)
        .least_memory()
        .build()
        .expect("valid filter");
    let (_, queries) = full_plain(isa, capacity);
    f.insert_batch(&keys(0));
    (f, queries)
}

fn empty_atomic(isa: Isa, capacity: u64) -> (AtomicBloomFilter, Vec<u64>) {
    let (f, k) = empty_plain(isa, capacity);
    (f.into_atomic(), k)
}

fn full_atomic(isa: Isa, capacity: u64) -> (AtomicBloomFilter, Vec<u64>) {
    let (f, k) = full_plain(isa, capacity);
    (f.into_atomic(), k)
}

fn hash_input(_: ()) -> (Vec<u64>, Vec<u64>) {
    (keys(0), vec![0; KEYS])
}

#[library_benchmark]
#[bench::scalar_n10k_4096keys(args = (Isa::Scalar, SMALL), setup = empty_plain)]
#[bench::scalar_n16m_4096keys(args = (Isa::Scalar, LARGE), setup = empty_plain)]
#[bench::avx2_n10k_4096keys(args = (Isa::Avx2, SMALL), setup = empty_plain)]
#[bench::avx2_n16m_4096keys(args = (Isa::Avx2, LARGE), setup = empty_plain)]
fn plain_insert(input: (BloomFilter, Vec<u64>)) -> BloomFilter {
    let (mut f, keys) = input;
    for k in &keys {
        f.insert(black_box(k));
    }
    f
}

#[library_benchmark]
#[bench::scalar_n10k_4096keys(args = (Isa::Scalar, SMALL), setup = empty_plain)]
#[bench::scalar_n16m_4096keys(args = (Isa::Scalar, LARGE), setup = empty_plain)]
#[bench::avx2_n10k_4096keys(args = (Isa::Avx2, SMALL), setup = empty_plain)]
#[bench::avx2_n16m_4096keys(args = (Isa::Avx2, LARGE), setup = empty_plain)]
fn plain_insert_batch(input: (BloomFilter, Vec<u64>)) -> BloomFilter {
    let (mut f, keys) = input;
    f.insert_batch(black_box(&keys));
    f
}

#[library_benchmark]
#[bench::scalar_n10k_4096keys(args = (Isa::Scalar, SMALL), setup = full_plain)]
#[bench::scalar_n16m_4096keys(args = (Isa::Scalar, LARGE), setup = full_plain)]
#[bench::avx2_n10k_4096keys(args = (Isa::Avx2, SMALL), setup = full_plain)]
#[bench::avx2_n16m_4096keys(args = (Isa::Avx2, LARGE), setup = full_plain)]
fn plain_contains(input: (BloomFilter, Vec<u64>)) -> usize {
    let (f, keys) = input;
    let mut hits = 0;
    for k in &keys {
        hits += usize::from(f.contains(black_box(k)));
    }
    hits
}

#[library_benchmark]
#[bench::scalar_n10k_4096keys(args = (Isa::Scalar, SMALL), setup = full_plain)]
#[bench::scalar_n16m_4096keys(args = (Isa::Scalar, LARGE), setup = full_plain)]
#[bench::avx2_n10k_4096keys(args = (Isa::Avx2, SMALL), setup = full_plain)]
#[bench::avx2_n16m_4096keys(args = (Isa::Avx2, LARGE), setup = full_plain)]
fn plain_count_batch(input: (BloomFilter, Vec<u64>)) -> usize {
    let (f, keys) = input;
    f.count_batch(black_box(&keys))
}

#[library_benchmark]
#[bench::scalar_n10k_4096keys(args = (Isa::Scalar, SMALL), setup = full_plain_v2)]
#[bench::avx2_n10k_4096keys(args = (Isa::Avx2, SMALL), setup = full_plain_v2)]
#[bench::avx2_n16m_4096keys(args = (Isa::Avx2, LARGE), setup = full_plain_v2)]
fn plain_count_batch_v2(input: (BloomFilter, Vec<u64>)) -> usize {
    let (f, keys) = input;
    f.count_batch(black_box(&keys))
}

#[library_benchmark]
#[bench::avx2_n10k_4096keys(args = (Isa::Avx2, SMALL), setup = full_plain)]
#[bench::avx2_n16m_4096keys(args = (Isa::Avx2, LARGE), setup = full_plain)]
fn plain_contains_batch_32(input: (BloomFilter, Vec<u64>)) -> usize {
    let (f, keys) = input;
    let mut out = [false; 32];
    let mut hits = 0;
    for c in black_box(&keys).chunks(32) {
        f.contains_batch(c, &mut out[..c.len()]);
        hits += out.iter().filter(|&&a| a).count();
    }
    hits
}

#[library_benchmark]
#[bench::scalar_n10k_4096keys(args = (Isa::Scalar, SMALL), setup = empty_atomic)]
#[bench::scalar_n16m_4096keys(args = (Isa::Scalar, LARGE), setup = empty_atomic)]
#[bench::avx2_n10k_4096keys(args = (Isa::Avx2, SMALL), setup = empty_atomic)]
#[bench::avx2_n16m_4096keys(args = (Isa::Avx2, LARGE), setup = empty_atomic)]
fn atomic_insert(input: (AtomicBloomFilter, Vec<u64>)) -> AtomicBloomFilter {
    let (f, keys) = input;
    for k in &keys {
        f.insert(black_box(k));
    }
    f
}

#[library_benchmark]
#[bench::scalar_n10k_4096keys(args = (Isa::Scalar, SMALL), setup = empty_atomic)]
#[bench::scalar_n16m_4096keys(args = (Isa::Scalar, LARGE), setup = empty_atomic)]
#[bench::avx2_n10k_4096keys(args = (Isa::Avx2, SMALL), setup = empty_atomic)]
#[bench::avx2_n16m_4096keys(args = (Isa::Avx2, LARGE), setup = empty_atomic)]
fn atomic_insert_batch(input: (AtomicBloomFilter, Vec<u64>)) -> AtomicBloomFilter {
    let (f, keys) = input;
    f.insert_batch(black_box(&keys));
    f
}

#[library_benchmark]
#[bench::scalar_n10k_4096keys(args = (Isa::Scalar, SMALL), setup = full_atomic)]
#[bench::scalar_n16m_4096keys(args = (Isa::Scalar, LARGE), setup = full_atomic)]
#[bench::avx2_n10k_4096keys(args = (Isa::Avx2, SMALL), setup = full_atomic)]
#[bench::avx2_n16m_4096keys(args = (Isa::Avx2, LARGE), setup = full_atomic)]
fn atomic_count_batch(input: (AtomicBloomFilter, Vec<u64>)) -> usize {
    let (f, keys) = input;
    f.count_batch(black_box(&keys))
}

#[library_benchmark]
#[bench::active_avx2_4096keys(args = (()), setup = hash_input)]
fn hash_u64_batch(input: (Vec<u64>, Vec<u64>)) -> Vec<u64> {
    let (keys, mut out) = input;
    blockbloom::hash::hash_u64_batch(black_box(&keys), 0, &mut out);
    out
}

library_benchmark_group!(
    name = plain;
    benchmarks = plain_insert, plain_insert_batch, plain_contains, plain_count_batch,
        plain_count_batch_v2, plain_contains_batch_32
);

library_benchmark_group!(
    name = atomic;
    benchmarks = atomic_insert, atomic_insert_batch, atomic_count_batch
);

library_benchmark_group!(
    name = hashing;
    benchmarks = hash_u64_batch
);

main!(library_benchmark_groups = plain, atomic, hashing);
