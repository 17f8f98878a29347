//! A DRAM-sized filter with and without transparent huge pages (`blockbloom::memory`):
//! how much of it the kernel put on huge pages, the time to allocate it and to build it
//! (allocate and insert every key: with huge pages the kernel zeroes each page at its first
//! touch, which the inserts make), and batch insert and contains in ns/key; then how much of
//! the same filter loaded with `from_bytes` and `read_from`, and of a clone, is on huge pages,
//! and how long each took.
//!
//! A filter of at least `memory::HUGE_PAGES_FROM_BYTES` asks for huge pages on Linux;
//! `Builder::huge_pages(false)` keeps 4 KiB pages. Each side is built and measured twice,
//! alternating, and the better of three passes over the queries is kept.
//!
//! ```text
//! cargo run --release -p blockbloom-perf -- huge-pages --keys 64000000
//! ```

use std::process::ExitCode;
use std::time::Instant;

use blockbloom::{BloomFilter, memory};
use blockbloom_perf::{out, workload};
use serde_json::json;

/// SplitMix64 output `i`: members are `0..n`, queries `n..2n` (disjoint).
fn key(i: u64) -> u64 {
    blockbloom_measure::keys::key(0, i)
}

pub fn main() -> ExitCode {
    let mut n: u64 = 64_000_000;
    let mut args = workload::args().skip(1);
    while let Some(a) = args.next() {
        match (a.as_str(), args.next().and_then(|v| v.parse().ok())) {
            ("--keys", Some(v)) if v > 0 => n = v,
            _ => {
                eprintln!("usage: huge_pages [--keys N]");
                return ExitCode::FAILURE;
            }
        }
    }
    let members: Vec<u64> = (0..n).map(key).collect();
    let queries: Vec<u64> = (n..2 * n).map(key).collect();
    let mut out = vec![false; n as usize];
    let thp = memory::transparent_huge_pages().unwrap_or("unknown");
    out!("{n} keys at 1%; transparent huge pages: {thp}");
    workload::scope(json!({"keys": "u64", "n": n, "transparent_huge_pages": thp}));
    for huge in [true, false, true, false] {
        let built = Instant::now();
        let mut f = match BloomFilter::builder()
            .capacity(n)
            .fpr(0.01)
            .huge_pages(huge)
            .build()
        {
            Ok(f) => f,
            Err(e) => {
                eprintln!("{e}");
                return ExitCode::FAILURE;
            }
        };
        let alloc = built.elapsed();
        let t = Instant::now();
        f.insert_batch(&members);
        let insert = t.elapsed().as_secs_f64() * 1e9 / n as f64;
        let build = built.elapsed();
        let mut contains = f64::MAX;
        for _ in 0..3 {
            let t = Instant::now();
            f.contains_batch(&queries, &mut out);
            contains = contains.min(t.elapsed().as_secs_f64() * 1e9 / n as f64);
        }
        if f.count_batch(&members) != members.len() {
            eprintln!("a member was not found");
            return ExitCode::FAILURE;
        }
        out!(
            "huge_pages({huge:5}): {:>4} MiB, {:>4} MiB on huge pages; allocate {:>6.1} ms, \
             build {:>6.1} ms, insert {insert:.2} ns/key, contains {contains:.2} ns/key",
            f.size_in_bytes() >> 20,
            mib(f.huge_page_bytes()),
            alloc.as_secs_f64() * 1e3,
            build.as_secs_f64() * 1e3,
        );
        workload::record_row(json!({
            "side": if huge { "huge pages" } else { "4 KiB pages" },
            "bytes": f.size_in_bytes(),
            "huge_page_bytes": f.huge_page_bytes(),
            "allocate_ms": alloc.as_secs_f64() * 1e3,
            "build_ms": build.as_secs_f64() * 1e3,
            "insert_ns_per_key": insert,
            "contains_ns_per_key": contains,
        }));
    }
    // Loaded filters ask for huge pages the same way: `from_bytes` reserves the whole array
    // up front, `read_from` grows it as the bytes arrive; and a clone.
    let mut f = BloomFilter::with_capacity(n, 0.01).expect("built above");
    f.insert_batch(&members);
    let bytes = f.to_bytes();
    let t = Instant::now();
    let clone = f.clone();
    report("clone", t, &clone);
    drop((f, clone));
    for streamed in [false, true] {
        let t = Instant::now();
        let loaded = if streamed {
            BloomFilter::read_from(&bytes[..])
        } else {
            BloomFilter::from_bytes(&bytes)
        };
        match loaded {
            Ok(g) => report(if streamed { "read_from" } else { "from_bytes" }, t, &g),
            Err(e) => {
                eprintln!("{e}");
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}

/// Whole MiB, or `?` where the system cannot say.
fn mib(bytes: Option<u64>) -> String {
    bytes.map_or("?".to_string(), |b| (b >> 20).to_string())
}

/// A filter made since `t`: its size, what of it is on huge pages, and the time taken.
fn report(what: &str, t: Instant, f: &BloomFilter) {
    let ms = t.elapsed().as_secs_f64() * 1e3;
    out!(
        "{what:>10}: {:>4} MiB, {:>4} MiB on huge pages; {ms:>6.1} ms",
        f.size_in_bytes() >> 20,
        mib(f.huge_page_bytes()),
    );
    let (bytes, huge) = (f.size_in_bytes(), f.huge_page_bytes());
    workload::record_row(json!({"side": what, "bytes": bytes, "huge_page_bytes": huge, "ms": ms}));
}
