//! Batch `contains` of byte-string keys on a 1M-key filter at 1% (or `--keys N` keys) against
//! every peer's string path, measured in interleaved rounds so that every ratio's two sides see
//! the same state of a shared machine (see `build_pairs.rs` for why criterion's windows do not).
//!
//! Sides, each over the same 65,536 queries (half members, half not; their bytes in one
//! buffer, as a column holds them), in a rotating order per round; with `--once`, over as many
//! distinct queries as there are members, at most [`ONCE_MAX`] (half of them members, each
//! asked once, half not), so that each round reads every query's bytes once, as a scan of a
//! column does, where 65,536 queries stay in the caches between rounds:
//! * `batch`: a filter of the defaults (`BloomFilter::with_capacity`: hash id 3, AESH-64 but
//!   for keys of 4, 8 and 16 bytes, which MX32-64 hashes; layout 8x32 at 1%),
//!   `contains_batch(&[&[u8]])` in calls of 1,024 keys;
//! * `column`: the same filter's `contains_column` over a `ByteColumn` (Arrow's offsets and
//!   values) of each call's 1,024 keys;
//! * `vecs`: `contains_batch` over the same keys each in a `Vec<u8>` of its own (a
//!   `&[&[u8]]` of separate allocations, as rows collected one by one hold them);
//! * `single`: the same filter's `contains` per key;
//! * `batch-xxh3`: `contains_batch` on a filter of hash id 1 (XXH3-64) in the layout of least
//!   memory, what every filter used before hash id 2;
//! * peers (`blockbloom_perf::peers`), per key: `sbbf-xxh3` (sbbf-rs-safe 0.3.2, 11 bits per
//!   key at 1%, `contains_hash` of `xxh3_64` of the bytes), `fastbloom-foldhash` (fastbloom
//!   0.17 at 1%, foldhash `fast::RandomState`, `contains(&[u8])`) and `parquet-sbbf` (parquet
//!   60's `Sbbf` at 1%, XXH64 inside `check`);
//! * `hashed`: `contains_hash_batch` on the `batch` filter of the keys' hashes computed before
//!   the rounds: our probe alone, what a batch would cost with a hash that cost nothing;
//! * `aes-only`: AESH-64 of each call's keys (`hash::hash_bytes_aes_batch`, VAES lanes where
//!   the CPU has them) into a buffer, and no probe: hash id 2's hash alone (but at 4 and 8
//!   bytes, where id 2 hashes with XXH3: see `xxh3-only`);
//! * `xxh3-only`: XXH3-64 of each key (hash id 1's hash), no probe;
//! * `bytes-only`: a read of each key's first, middle and last byte, no hash and no probe:
//!   the floor of streaming the keys (their slices and every line of their bytes).
//!
//! The kind `ipv6-u128` is IPv6 addresses as `u128` (16 bytes, as a packet's header holds
//! them), with fewer sides: `batch` (`contains_batch(&[u128])`), `single` (`contains_bytes`
//! of each address's 16 bytes) and the three peers per key (fastbloom the `u128`, sbbf-rs
//! and parquet its 16 little-endian bytes).
//!
//! It prints each side's median ns/key and, per key length, the median and quartiles over the
//! rounds of the best peer's time (the fastest of the three in that round) over each of our
//! sides'; then the hash budget for 2x the best peer (best peer / 2 minus `hashed`) beside
//! what the hash alone costs.
//!
//! Arguments: `[--keys N] [--once] [ROUNDS [LEN...]]`: the members (default 1,000,000), the
//! queries streamed once (above), the rounds
//! (default 200) and the key lengths in bytes, or `ipv6` for IPv6 addresses as text (7 to 39
//! bytes), or `ipv6-u128` (default 8 16 32 100 ipv6). The members' bytes are kept in one
//! buffer.
//!
//! ```sh
//! cargo run --release -p blockbloom-perf -- string-pairs 200 8 16 32 100 ipv6   # rounds, key kinds
//! cargo run --release -p blockbloom-perf -- string-pairs --keys 64000000 200 16
//! cargo run --release -p blockbloom-perf -- string-pairs 200 ipv6-u128
//! cargo run --release -p blockbloom-perf -- string-pairs --once 20 8 16 32 100  # 1M keys, each read once
//! ```

use std::hint::black_box;
use std::time::Instant;

use blockbloom::{BloomFilter, KeyHash};
use blockbloom_perf::out;
use blockbloom_perf::peers;
use blockbloom_perf::workload::{self, Rng, median, string_key as key};
use serde_json::json;

/// The members when `--keys` does not say.
const KEYS: usize = 1_000_000;
/// The queries a round asks, unless `--once`.
const QUERIES: usize = 1 << 16;
/// The most queries a round asks under `--once` (4M: 64 MiB of 16-byte keys, past any L3).
const ONCE_MAX: usize = 1 << 22;
const BATCH: usize = 1024;

/// The members `query` finds among `keys`, asked in calls of [`BATCH`] keys whose answers go
/// to `out` (at least a call's length).
fn hits_in_calls<K>(
    keys: &[K],
    out: &mut [bool],
    mut query: impl FnMut(&[K], &mut [bool]),
) -> usize {
    let mut hits = 0;
    for chunk in keys.chunks(BATCH) {
        let out = &mut out[..chunk.len()];
        query(chunk, out);
        hits += out.iter().filter(|&&x| x).count();
    }
    hits
}

/// An IPv6 address as text, compressed as `Display` writes it.
fn ipv6(r: &mut Rng) -> Vec<u8> {
    let a = 0x2001_0db8u128 << 96 | (r.next() as u128) << 40 | (r.next() & 0xffff) as u128;
    std::net::Ipv6Addr::from(a).to_string().into_bytes()
}

/// A key length, IPv6 text, or IPv6 as `u128` (measured by [`ipv6_u128`]).
#[derive(Clone, Copy)]
enum Kind {
    Len(usize),
    Ipv6,
    Ipv6U128,
}

/// The `ipv6-u128` kind: `keys` members, `n_queries` queries (half members: the first ones
/// in order with `once`), [`U128_SIDES`] interleaved.
fn ipv6_u128(
    rounds: usize,
    keys: usize,
    n_queries: usize,
    once: bool,
) -> Result<(), blockbloom::Error> {
    const U128_SIDES: [&str; 5] = [
        "batch",
        "single",
        "sbbf-xxh3",
        "fastbloom-foldhash",
        "parquet-sbbf",
    ];
    let mut r = Rng(4);
    let members: Vec<u128> = (0..keys)
        .map(|_| 0x2001_0db8u128 << 96 | (r.next() as u128) << 32 | r.next() as u128 >> 32)
        .collect();
    let queries: Vec<u128> = (0..n_queries)
        .map(|i| match (i % 2, once) {
            (0, true) => members[i / 2],
            (0, false) => members[(r.next() % keys as u64) as usize],
            _ => 0xfe80u128 << 112 | r.next() as u128,
        })
        .collect();
    let mut bb = BloomFilter::with_capacity(keys as u64, 0.01)?;
    bb.insert_batch(&members);
    let mut ff = peers::fastbloom_fold(keys, 0.01);
    let mut sb = peers::Sbbf::new(keys, 0.01);
    let mut pq = peers::parquet_sbbf(keys, 0.01);
    for m in &members {
        ff.insert(m);
        sb.insert_bytes(&m.to_le_bytes());
        pq.insert(&m.to_le_bytes()[..]);
    }
    let mut out = vec![false; BATCH];
    let mut run = |side: usize| match side {
        0 => hits_in_calls(&queries, &mut out, |c, o| bb.contains_batch(c, o)),
        1 => queries
            .iter()
            .filter(|q| bb.contains_bytes(&q.to_le_bytes()))
            .count(),
        2 => queries
            .iter()
            .filter(|q| sb.contains_bytes(&q.to_le_bytes()))
            .count(),
        3 => queries.iter().filter(|q| ff.contains(*q)).count(),
        _ => queries
            .iter()
            .filter(|q| pq.check(&q.to_le_bytes()[..]))
            .count(),
    };
    let hits: Vec<usize> = (0..U128_SIDES.len()).map(&mut run).collect();
    assert!(hits.iter().all(|&h| h >= n_queries / 2), "{hits:?}");
    assert_eq!(hits[0], hits[1], "one filter, two paths");
    let times = workload::interleaved(rounds, U128_SIDES.len(), n_queries, run);
    out!("IPv6 u128 keys (filter {} KiB):", bb.size_in_bytes() >> 10);
    workload::scope(json!({"keys": "IPv6 u128 keys", "n": keys, "once": once}));
    workload::medians(&U128_SIDES, &times, 20);
    let best: Vec<f64> = (0..rounds)
        .map(|r| times[2][r].min(times[3][r]).min(times[4][r]))
        .collect();
    for i in [0, 1] {
        let label = format!("best peer / {}", U128_SIDES[i]);
        out!("  {label}: {}", workload::ratio(&label, &best, &times[i]));
    }
    Ok(())
}

pub fn main() -> Result<(), blockbloom::Error> {
    let positive = |s: &str| -> usize {
        s.parse()
            .ok()
            .filter(|&v| v > 0)
            .expect("positive whole numbers")
    };
    // `--keys N` (or `--keys=N`) anywhere; then the rounds, then key lengths or `ipv6`.
    let mut keys = KEYS;
    let mut once = false;
    let mut args = Vec::new();
    let mut raw = blockbloom_perf::workload::args().skip(1);
    while let Some(a) = raw.next() {
        if a == "--keys" {
            keys = positive(&raw.next().expect("--keys needs a number"));
        } else if let Some(v) = a.strip_prefix("--keys=") {
            keys = positive(v);
        } else if a == "--once" {
            once = true;
        } else {
            args.push(a);
        }
    }
    let rounds = args.first().map_or(200, |a| positive(a));
    let kinds: Vec<Kind> = if args.len() > 1 {
        args[1..]
            .iter()
            .map(|a| match a.as_str() {
                "ipv6-u128" => Kind::Ipv6U128,
                "ipv6" => Kind::Ipv6,
                n => Kind::Len(positive(n)),
            })
            .collect()
    } else {
        vec![
            Kind::Len(8),
            Kind::Len(16),
            Kind::Len(32),
            Kind::Len(100),
            Kind::Ipv6,
        ]
    };
    let n_queries = if once { keys.min(ONCE_MAX) } else { QUERIES };
    out!(
        "string keys, contains at {keys} keys and 1%: {rounds} rounds, sides interleaved, {} \
         queries{}; CPU: {}",
        n_queries,
        if once {
            " each read once a round"
        } else {
            " (in cache)"
        },
        blockbloom_perf::workload::cpu_name()
    );
    for kind in kinds {
        // Byte strings of a length, or IPv6 text: `len` is `None` for the text.
        let (name, seed, len) = match kind {
            Kind::Len(n) => (format!("{n}-byte keys"), n as u64, Some(n)),
            Kind::Ipv6 => ("IPv6 text keys".to_string(), 6, None),
            Kind::Ipv6U128 => {
                ipv6_u128(rounds, keys, n_queries, once)?;
                continue;
            }
        };
        let mut r = Rng(seed);
        let mut make = |i: usize| match len {
            Some(n) => key(&mut r, i, n),
            None => ipv6(&mut r),
        };
        // Members in one buffer with offsets, as a column holds them.
        let mut member_bytes = Vec::new();
        let mut member_ends = vec![0usize];
        for i in 0..keys {
            member_bytes.extend_from_slice(&make(i));
            member_ends.push(member_bytes.len());
        }
        let member = |i: usize| &member_bytes[member_ends[i]..member_ends[i + 1]];
        let mut values = Vec::new();
        let mut offsets = vec![0i64];
        let mut pick = Rng(!seed);
        for i in 0..n_queries {
            if i % 2 == 0 {
                let m = if once {
                    i / 2
                } else {
                    (pick.next() % keys as u64) as usize
                };
                values.extend_from_slice(member(m));
            } else {
                values.extend_from_slice(&make(keys + i));
            }
            offsets.push(values.len() as i64);
        }
        let queries: Vec<&[u8]> = offsets
            .windows(2)
            .map(|w| &values[w[0] as usize..w[1] as usize])
            .collect();
        let columns: Vec<blockbloom::ByteColumn<'_>> = (0..n_queries)
            .step_by(BATCH)
            .map(|a| blockbloom::ByteColumn::new(&offsets[a..=n_queries.min(a + BATCH)], &values))
            .collect::<Result<_, _>>()?;
        let owned: Vec<Vec<u8>> = queries.iter().map(|q| q.to_vec()).collect();
        let owned_refs: Vec<&[u8]> = owned.iter().map(Vec::as_slice).collect();

        let mut bb = BloomFilter::with_capacity(keys as u64, 0.01)?;
        let mut old = BloomFilter::builder()
            .capacity(keys as u64)
            .fpr(0.01)
            .key_hash(KeyHash::Xxh3)
            .least_memory()
            .build()?;
        let mut ff = peers::fastbloom_fold(keys, 0.01);
        let mut sb = peers::Sbbf::new(keys, 0.01);
        let mut pq = peers::parquet_sbbf(keys, 0.01);
        // The members go in a chunk of keys a call: no side holds a slice for every member.
        const CHUNK: usize = 1 << 16;
        for start in (0..keys).step_by(CHUNK) {
            let refs: Vec<&[u8]> = (start..keys.min(start + CHUNK)).map(member).collect();
            bb.insert_batch(&refs);
            old.insert_batch(&refs);
            for &m in &refs {
                ff.insert(m);
                sb.insert_bytes(m);
                pq.insert(m);
            }
        }
        assert_eq!(bb.key_hash(), KeyHash::Mx32);

        let mut out = vec![false; BATCH];
        let mut batch = |f: &BloomFilter, queries: &[&[u8]]| {
            hits_in_calls(queries, &mut out, |c, o| f.contains_batch(c, o))
        };
        let mut col_out = vec![false; BATCH];
        let mut column = || {
            columns
                .iter()
                .map(|c| {
                    bb.contains_column(c, &mut col_out[..c.len()]);
                    col_out[..c.len()].iter().filter(|&&x| x).count()
                })
                .sum::<usize>()
        };
        let single = || queries.iter().filter(|q| bb.contains(**q)).count();
        let sbbf = || queries.iter().filter(|q| sb.contains_bytes(q)).count();
        let fast = || queries.iter().filter(|q| ff.contains(**q)).count();
        let parquet = || queries.iter().filter(|q| pq.check(**q)).count();
        let hashes: Vec<u64> = queries.iter().map(|q| bb.hash(*q)).collect();
        let mut hashed_out = vec![false; BATCH];
        let mut hashed = || {
            hits_in_calls(&hashes, &mut hashed_out, |c, o| {
                bb.contains_hash_batch(c, o)
            })
        };
        let mut buf = vec![0u64; BATCH];
        let mut aes_only = || {
            let mut acc = 0u64;
            for chunk in queries.chunks(BATCH) {
                let hs = &mut buf[..chunk.len()];
                blockbloom::hash::hash_bytes_aes_batch(chunk, 0, hs);
                acc ^= black_box(&*hs)[0];
            }
            acc as usize
        };
        let bytes_only = || {
            queries.iter().fold(0usize, |acc, q| match q.len() {
                0 => acc,
                n => acc.wrapping_add((q[0] ^ q[n / 2] ^ q[n - 1]) as usize),
            })
        };
        let xxh3_only = || {
            queries
                .iter()
                .fold(0u64, |acc, q| acc ^ blockbloom::hash::hash_bytes(q, 0)) as usize
        };
        // The work is done: every side finds the same members (and a few false positives).
        let hits = [
            batch(&bb, &queries),
            column(),
            single(),
            batch(&old, &queries),
            sbbf(),
            fast(),
            parquet(),
            hashed(),
            batch(&bb, &owned_refs),
        ];
        assert!(hits.iter().all(|&h| h >= n_queries / 2), "{hits:?}");
        assert_eq!(
            (hits[0], hits[0], hits[0]),
            (hits[1], hits[2], hits[8]),
            "one filter, four paths"
        );

        const NAMES: [&str; 12] = [
            "batch",
            "column",
            "single",
            "batch-xxh3",
            "sbbf-xxh3",
            "fastbloom-foldhash",
            "parquet-sbbf",
            "hashed",
            "aes-only",
            "xxh3-only",
            "vecs",
            "bytes-only",
        ];
        let mut times: [Vec<f64>; NAMES.len()] = Default::default();
        for round in 0..rounds {
            for j in 0..NAMES.len() {
                let side = (round + j) % NAMES.len();
                let t = Instant::now();
                black_box(match side {
                    0 => batch(&bb, &queries),
                    1 => column(),
                    2 => single(),
                    3 => batch(&old, &queries),
                    4 => sbbf(),
                    5 => fast(),
                    6 => parquet(),
                    7 => hashed(),
                    8 => aes_only(),
                    9 => xxh3_only(),
                    10 => batch(&bb, &owned_refs),
                    _ => bytes_only(),
                });
                times[side].push(t.elapsed().as_secs_f64() * 1e9 / n_queries as f64);
            }
        }
        out!(
            "{name} (filter {} KiB, prefetch depth {}):",
            bb.size_in_bytes() >> 10,
            bb.prefetch_depth()
        );
        workload::scope(json!({"keys": name, "n": keys, "once": once}));
        for (i, side) in NAMES.iter().enumerate() {
            let m = median(&mut times[i].clone());
            workload::record(side, m);
            out!("{side:>20}: median {m:.2} ns/key");
        }
        // Per round, the fastest peer.
        let best: Vec<f64> = (0..rounds)
            .map(|r| times[4][r].min(times[5][r]).min(times[6][r]))
            .collect();
        for i in [0, 1, 10, 2, 3, 7] {
            let label = format!("best peer / {}", NAMES[i]);
            out!("  {label}: {}", workload::ratio(&label, &best, &times[i]));
        }
        // sbbf-rs alone (what `perf-reports/string-lanes` compares).
        let label = format!("{} / {}", NAMES[4], NAMES[0]);
        out!(
            "  {label}: {}",
            workload::ratio(&label, &times[4], &times[0])
        );
        let med = |v: &[f64]| median(&mut v.to_vec());
        let budget = med(&best) / 2.0 - med(&times[7]);
        workload::record_row(json!({"hash_budget_ns_per_key": budget}));
        out!(
            "  hash budget for 2x the best peer: {:.2} ns/key (best peer / 2 - hashed); \
             aes-only {:.2}, xxh3-only {:.2}; the key bytes alone {:.2}",
            budget,
            med(&times[8]),
            med(&times[9]),
            med(&times[11])
        );
    }
    Ok(())
}
