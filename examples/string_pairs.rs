//! Batch `contains` of byte-string keys on a 1M-key filter at 1% (or `--keys N` keys) against
//! sbbf-rs with XXH3 of the bytes (the best peer of `benches/keys.rs`'s `strings/1M/*` cases),
//! measured in interleaved rounds so that every ratio's two sides see the same state of a shared
//! machine (see `build_pairs.rs` for why criterion's windows do not).
//!
//! Sides, each over the same 65,536 queries (half members, half not; their bytes in one
//! buffer, as a column holds them), in a rotating order per round:
//! * `batch`: `contains_batch(&[&[u8]])` in calls of 1,024 keys, at the filter's own
//!   prefetch depth;
//! * `batch-no-prefetch`: the same filter with `set_prefetch_depth(0)`: what the default was
//!   on a CPU whose L2 is smaller than the filter before the depth followed the CPU's L2;
//! * `sbbf-xxh3`: sbbf-rs-safe's `contains_hash(xxh3_64(key))` per key;
//! * `hashed`: `contains_hash_batch` of the same keys' hashes, computed before the rounds:
//!   our probe alone, what a batch would cost with a byte hash that cost nothing;
//! * `sbbf-hashed`: sbbf-rs-safe's `contains_hash` of the same hashes (both hash with XXH3,
//!   seed 0): its probe alone.
//! * `xxh3-only`: our hash of each key (XXH3-64, what a batch computes) into a buffer of a
//!   call's length, and no probe: what the hash alone costs;
//! * `foldhash-batch`: each call's keys hashed with foldhash (fixed seed, the fastest hash a
//!   peer here uses) into a buffer, then `contains_hash_batch` of those hashes, on a second
//!   filter built from them: what a batch could cost if the format's byte hash were
//!   foldhash-class (the format has no such hash id);
//! * `aes-only`: AESH-64 of each call's keys (`hash::hash_bytes_aes_batch`, VAES lanes where
//!   the CPU has them) into a buffer, and no probe: what the AES hash alone costs;
//! * `aes-batch`: the same hashes then `contains_hash_batch`, on a filter built from AESH-64
//!   hashes: what a batch costs once a filter's hash id names AESH-64.
//!
//! It prints each side's median ns/key and, per key length, the median and quartiles over
//! the rounds of `sbbf-xxh3`'s time over each of our sides'. `sbbf-xxh3 / hashed` bounds
//! what any byte hash can give this probe: a string batch cannot beat it.
//!
//! Arguments: `[--keys N] [ROUNDS [LEN...]]`: the members (default 1,000,000), the rounds
//! (default 200) and the key lengths in bytes (default 8 16 32 100). The members' bytes are kept
//! in one buffer (`len` bytes a key): 64M 16-byte keys take about 1 GiB.
//!
//! ```sh
//! cargo run --release --example string_pairs -- 200 8 16 32 100   # rounds, key lengths
//! cargo run --release --example string_pairs -- --keys 64000000 200 16
//! ```

use std::hash::BuildHasher;
use std::hint::black_box;
use std::time::Instant;

use blockbloom::BloomFilter;
use pairs::{Rng, median, ratio_summary};
use xxhash_rust::xxh3::xxh3_64;

mod pairs;

/// The members when `--keys` does not say.
const KEYS: usize = 1_000_000;
const QUERIES: usize = 1 << 16;
const BATCH: usize = 1024;

/// Key `i` of `len` bytes: random letters (URL-like from 32 bytes), distinct by the index
/// folded into its last bytes (as `benches/keys.rs` makes them).
fn key(r: &mut Rng, i: usize, len: usize) -> Vec<u8> {
    let mut s = if len >= 32 {
        format!("https://example.com/p/{i:x}/").into_bytes()
    } else {
        Vec::new()
    };
    while s.len() < len {
        s.push(b'a' + (r.next() % 26) as u8);
    }
    s.truncate(len);
    let at = len.saturating_sub(8);
    for (d, t) in s[at..].iter_mut().zip((i as u64).to_le_bytes()) {
        *d ^= t & 0x0f;
    }
    s
}

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

fn main() -> Result<(), blockbloom::Error> {
    let positive = |s: &str| -> usize {
        s.parse()
            .ok()
            .filter(|&v| v > 0)
            .expect("positive whole numbers")
    };
    // `--keys N` (or `--keys=N`) anywhere; every other argument is a number: rounds, lengths.
    let mut keys = KEYS;
    let mut args = Vec::new();
    let mut raw = std::env::args().skip(1);
    while let Some(a) = raw.next() {
        if a == "--keys" {
            keys = positive(&raw.next().expect("--keys needs a number"));
        } else if let Some(v) = a.strip_prefix("--keys=") {
            keys = positive(v);
        } else {
            args.push(positive(&a));
        }
    }
    let rounds = args.first().copied().unwrap_or(200);
    let lens = if args.len() > 1 {
        args[1..].to_vec()
    } else {
        vec![8, 16, 32, 100]
    };
    println!("string keys, contains at {keys} keys and 1%: {rounds} rounds, sides interleaved");
    for len in lens {
        let mut r = Rng(len as u64);
        // Every member is `len` bytes: member `i` is `member_bytes[i * len..][..len]`.
        let mut member_bytes = Vec::with_capacity(keys * len);
        for i in 0..keys {
            member_bytes.extend_from_slice(&key(&mut r, i, len));
        }
        let member = |i: usize| &member_bytes[i * len..(i + 1) * len];
        let mut values = Vec::new();
        let mut ends = vec![0];
        for i in 0..QUERIES {
            if i % 2 == 0 {
                values.extend_from_slice(member((r.next() % keys as u64) as usize));
            } else {
                values.extend_from_slice(&key(&mut r, keys + i, len));
            }
            ends.push(values.len());
        }
        let queries: Vec<&[u8]> = ends.windows(2).map(|w| &values[w[0]..w[1]]).collect();

        // The members go in a chunk of keys a call: no side holds a slice for every member.
        const CHUNK: usize = 1 << 16;
        let mut bb = BloomFilter::with_capacity(keys as u64, 0.01)?;
        for chunk in member_bytes.chunks(CHUNK * len) {
            let refs: Vec<&[u8]> = chunk.chunks(len).collect();
            bb.insert_batch(&refs);
        }
        let mut off = bb.clone();
        off.set_prefetch_depth(0)?;
        let mut sb = sbbf_rs_safe::Filter::new(11, keys);
        for m in member_bytes.chunks(len) {
            sb.insert_hash(xxh3_64(m));
        }

        let mut out = vec![false; BATCH];
        let mut batch =
            |f: &BloomFilter| hits_in_calls(&queries, &mut out, |c, o| f.contains_batch(c, o));
        let sbbf = || {
            queries
                .iter()
                .filter(|q| sb.contains_hash(xxh3_64(q)))
                .count()
        };
        // One set of hashes for both probes: the filter's seed is 0, so it hashes a key's
        // bytes exactly as sbbf-rs's side does (XXH3-64, seed 0).
        assert_eq!(bb.seed(), 0);
        let hashes: Vec<u64> = queries.iter().map(|q| xxh3_64(q)).collect();
        let mut hashed_out = vec![false; BATCH];
        let mut hashed = || {
            hits_in_calls(&hashes, &mut hashed_out, |c, o| {
                bb.contains_hash_batch(c, o)
            })
        };
        let sbbf_hashed = || hashes.iter().filter(|&&h| sb.contains_hash(h)).count();
        let mut buf = vec![0u64; BATCH];
        let mut xxh3_only = || {
            let mut acc = 0u64;
            for chunk in queries.chunks(BATCH) {
                for (h, q) in buf.iter_mut().zip(chunk) {
                    *h = blockbloom::hash::hash_bytes(q, 0);
                }
                acc ^= black_box(&buf)[0];
            }
            acc as usize
        };
        let fold = foldhash::fast::FixedState::with_seed(0);
        let mut folded = BloomFilter::with_capacity(keys as u64, 0.01)?;
        for chunk in member_bytes.chunks(CHUNK * len) {
            let fold_hashes: Vec<u64> = chunk.chunks(len).map(|m| fold.hash_one(m)).collect();
            folded.insert_hash_batch(&fold_hashes);
        }
        let mut aes_only_buf = vec![0u64; BATCH];
        let mut aes_only = || {
            let mut acc = 0u64;
            for chunk in queries.chunks(BATCH) {
                let hs = &mut aes_only_buf[..chunk.len()];
                blockbloom::hash::hash_bytes_aes_batch(chunk, 0, hs);
                acc ^= black_box(&*hs)[0];
            }
            acc as usize
        };
        let mut aes_filter = BloomFilter::with_capacity(keys as u64, 0.01)?;
        for chunk in member_bytes.chunks(CHUNK * len) {
            let refs: Vec<&[u8]> = chunk.chunks(len).collect();
            let mut hs = vec![0u64; refs.len()];
            blockbloom::hash::hash_bytes_aes_batch(&refs, 0, &mut hs);
            aes_filter.insert_hash_batch(&hs);
        }
        let mut aes_buf = vec![0u64; BATCH];
        let mut aes_out = vec![false; BATCH];
        let mut aes_batch = || {
            hits_in_calls(&queries, &mut aes_out, |c, o| {
                let hs = &mut aes_buf[..c.len()];
                blockbloom::hash::hash_bytes_aes_batch(c, 0, hs);
                aes_filter.contains_hash_batch(hs, o)
            })
        };
        let mut fold_buf = vec![0u64; BATCH];
        let mut fold_out = vec![false; BATCH];
        let mut fold_batch = || {
            hits_in_calls(&queries, &mut fold_out, |c, o| {
                let hs = &mut fold_buf[..c.len()];
                for (h, q) in hs.iter_mut().zip(c) {
                    *h = fold.hash_one(q);
                }
                folded.contains_hash_batch(hs, o)
            })
        };
        // The work is done: every side finds the same members (and a few false positives).
        let hits = [
            batch(&bb),
            batch(&off),
            sbbf(),
            hashed(),
            sbbf_hashed(),
            fold_batch(),
            aes_batch(),
        ];
        assert!(hits.iter().all(|&h| h >= QUERIES / 2), "{hits:?}");

        const SIDES: usize = 9;
        let mut times: [Vec<f64>; SIDES] = Default::default();
        for round in 0..rounds {
            for j in 0..SIDES {
                let side = (round + j) % SIDES;
                let t = Instant::now();
                black_box(match side {
                    0 => batch(&bb),
                    1 => batch(&off),
                    2 => sbbf(),
                    3 => hashed(),
                    4 => sbbf_hashed(),
                    5 => xxh3_only(),
                    6 => fold_batch(),
                    7 => aes_only(),
                    _ => aes_batch(),
                });
                times[side].push(t.elapsed().as_secs_f64() * 1e9 / QUERIES as f64);
            }
        }
        println!(
            "{len}-byte keys (filter {} KiB, prefetch depth {}):",
            bb.size_in_bytes() >> 10,
            bb.prefetch_depth()
        );
        for (name, i) in [
            ("batch", 0),
            ("batch-no-prefetch", 1),
            ("sbbf-xxh3", 2),
            ("hashed", 3),
            ("sbbf-hashed", 4),
            ("xxh3-only", 5),
            ("foldhash-batch", 6),
            ("aes-only", 7),
            ("aes-batch", 8),
        ] {
            println!(
                "{name:>20}: median {:.2} ns/key",
                median(&mut times[i].clone())
            );
        }
        for (name, i) in [
            ("batch", 0),
            ("batch-no-prefetch", 1),
            ("hashed", 3),
            ("foldhash-batch", 6),
            ("aes-batch", 8),
        ] {
            println!("  sbbf / {name}: {}", ratio_summary(&times[2], &times[i]));
        }
        let med = |i: usize| median(&mut times[i].clone());
        println!(
            "  hash budget for 2x sbbf: {:.2} ns/key (sbbf-xxh3 / 2 - hashed); xxh3-only {:.2}, \
             aes-only {:.2}",
            med(2) / 2.0 - med(3),
            med(5),
            med(7)
        );
    }
    Ok(())
}
