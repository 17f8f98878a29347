//! `contains_batch` ns/key by key type on an in-cache filter (50,000 keys at 1%, 64 KiB), on
//! the kernel tier `BLOCKBLOOM_ISA` forces (or the dispatcher's choice): integers of every
//! width (each its 64-bit value, widened in lanes), byte strings of 4 to 32 bytes (`&[u8]`),
//! and 16-byte keys as `u128` and `[u8; 16]`. The filter fits in L1/L2,
//! so the figures are the hashing and probing cost per key, not memory. Each figure is the
//! fastest of 300 passes over 65,536 keys, which shrugs off a noisy shared machine.
//!
//! ```sh
//! for isa in avx512 avx2 portable; do BLOCKBLOOM_ISA=$isa cargo run --release -p blockbloom-perf -- key-types; done
//! ```

use blockbloom_measure::timing::Timing;

use blockbloom::{BatchKey, BloomFilter};
use blockbloom_perf::{out, workload};
use serde_json::json;

const QUERIES: usize = 1 << 16;
const PASSES: usize = 300;

/// The fastest of [`PASSES`] `contains_batch` passes over `keys` in chunks of 1024, ns/key.
fn fastest<K: BatchKey>(f: &BloomFilter, keys: &[K]) -> f64 {
    let mut out = vec![false; 1024];
    let pass = || {
        for c in keys.chunks(1024) {
            f.contains_batch(c, &mut out[..c.len()]);
            std::hint::black_box(&out);
        }
    };
    Timing::repeat(PASSES, keys.len(), pass).fastest()
}

/// Prints and records one key type's figure.
fn show(keys: &str, ns: f64) {
    out!("{keys:9}: {ns:.3} ns/key");
    workload::record_row(json!({"keys": keys, "ns_per_key": ns}));
}

pub fn main() -> Result<(), blockbloom::Error> {
    let mut f = BloomFilter::with_capacity(50_000, 0.01)?;
    out!("kernel: {}", f.isa());
    workload::scope(json!({"n": 50_000, "isa": f.isa().name()}));
    let mut x = 1u64;
    let mut next = move || {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        x >> 33
    };
    let values: Vec<u64> = (0..QUERIES).map(|_| next()).collect();
    f.insert_batch(&values[..40_000]);
    show("u64", fastest(&f, &values));
    // The same values where they fit (the first 40,000 are members at every width).
    let u32s: Vec<u32> = values.iter().map(|&x| x as u32).collect();
    show("u32", fastest(&f, &u32s));
    let i32s: Vec<i32> = u32s.iter().map(|&x| x as i32).collect();
    show("i32", fastest(&f, &i32s));
    let i16s: Vec<i16> = values.iter().map(|&x| x as i16).collect();
    show("i16", fastest(&f, &i16s));
    let u8s: Vec<u8> = values.iter().map(|&x| x as u8).collect();
    show("u8", fastest(&f, &u8s));
    for len in [4usize, 8, 12, 16, 24, 32] {
        let values: Vec<u8> = (0..QUERIES * len).map(|_| next() as u8).collect();
        let keys: Vec<&[u8]> = values.chunks(len).collect();
        f.insert_batch(&keys[..40_000]);
        show(&format!("bytes {len}"), fastest(&f, &keys));
    }
    let wide: Vec<u128> = (0..QUERIES as u128)
        .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835))
        .collect();
    f.insert_batch(&wide[..40_000]);
    show("u128", fastest(&f, &wide));
    let fixed: Vec<[u8; 16]> = wide.iter().map(|k| k.to_le_bytes()).collect();
    show("[u8; 16]", fastest(&f, &fixed));
    Ok(())
}
