//! The classic filter's batches against fastbloom 0.17 (unblocked, foldhash, one key at a
//! time) at the same `m` and `k`, beside the memory ceiling of that design: `k` random words
//! per key whose positions were computed before the rounds, read (or OR-ed into) with no
//! hashing at all. Measured in interleaved rounds, so that every ratio's sides see the same
//! state of a shared machine (see `build_pairs.rs`).
//!
//! Sides, over the same queries, in a rotating order per round:
//! * `batch`: `count_batch` (queries) or `insert_batch` (inserts, of keys already present: the
//!   same memory traffic as a first insert, without page faults) over the whole query array;
//! * `fastbloom`: `contains` or `insert` per key;
//! * `lines` and `lines-prefetch`: the same memory work with the hashing taken out. Each
//!   key's `k` word positions (double hashing, as both filters draw them) were computed
//!   before the rounds into an array streamed in order; `lines` reads the words (or ORs a
//!   bit into each), `lines-prefetch` also prefetches the lines of the key [`AHEAD`] keys on.
//!
//! Then the paths of each filter, without the ceiling, on members and on absent keys (a query
//! of an absent key can stop at its first clear bit) and into a fresh filter:
//! * `batch`, `gather` (`count_batch` of a filter `with_gather(true)`), `single` (`contains`
//!   per key) and `fastbloom` on the queries, then on as many keys that were never inserted;
//! * `insert (fresh)`: a copy of the empty filter, then `insert_batch` of the queries, against
//!   a new fastbloom filter and its `insert` per key.
//!
//! Besides each side's ratio to fastbloom it prints `fastbloom / fastest`: per round, over
//! the fastest of `batch`, `lines` and `lines-prefetch`. It is not a proof of a bound, but
//! it is what the memory system gave the fastest loops at hand for this design (one array,
//! `k` independent positions, the same `m`): a batch that beat fastbloom by more than it
//! would have to touch the same lines faster than a loop that does nothing else.
//!
//! Queries are the members (every position read). Sizes: 1M keys (a 1.2 MB array: L2/L3)
//! and 2^25 keys (40 MB: beyond a 32 MiB L3), at 1% (k = 7); the large filter is queried
//! with its first 4M members.
//!
//! ```sh
//! cargo run --release -p blockbloom-perf -- classic-pairs 20      # rounds
//! ```

use std::hint::black_box;

use blockbloom::ClassicBloomFilter;
use blockbloom_measure::keys::scrambled;
use blockbloom_perf::out;
use blockbloom_perf::peers;
use blockbloom_perf::workload::{self, Rng};
use serde_json::json;

/// Keys between a key's reads and the key whose lines are prefetched (8 keys of 7 probes:
/// 56 lines in flight). Of 2, 4, 8, 16, 32 and 64, none beat `lines` at 1M keys, and 8 and
/// 16 were best at 2^25 keys (the Zen 4 EPYC, 2026-11-28).
const AHEAD: usize = 8;

const QUERIES: usize = 1 << 22;

#[inline(always)]
fn prefetch(p: *const u64) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint that never faults, whatever the address.
    unsafe {
        core::arch::x86_64::_mm_prefetch(p.cast::<i8>(), core::arch::x86_64::_MM_HINT_T0)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// `k` bit positions in `0..m` per key, by double hashing of a random 64-bit hash
/// (`h * m >> 64` for the start and the step, as both filters reduce theirs).
fn positions(n: usize, m: u64, k: u32, seed: u64) -> Vec<u32> {
    let reduce = |h: u64| ((h as u128 * m as u128) >> 64) as u64;
    let mut r = Rng(seed);
    let mut out = Vec::with_capacity(n * k as usize);
    for _ in 0..n {
        let h = r.next();
        let (mut x, d) = (reduce(h), reduce(h.rotate_left(32)));
        for _ in 0..k {
            out.push(x as u32);
            x += d;
            if x >= m {
                x -= m;
            }
        }
    }
    out
}

/// Keys whose every bit is set at `pos` (`k` per key), with the lines of key `i + AHEAD`
/// prefetched while key `i` is read when `ahead` is set.
fn read_lines(words: &[u64], pos: &[u32], k: usize, ahead: bool) -> usize {
    let mut found = 0;
    let keys = pos.len() / k;
    for i in 0..keys {
        if ahead && i + AHEAD < keys {
            for &p in &pos[(i + AHEAD) * k..(i + AHEAD + 1) * k] {
                prefetch(words.as_ptr().wrapping_add(p as usize / 64));
            }
        }
        let mut all = 1;
        for &p in &pos[i * k..(i + 1) * k] {
            all &= words[p as usize / 64] >> (p % 64);
        }
        found += all as usize;
    }
    found
}

/// Sets the bit of every position, prefetching as [`read_lines`].
fn or_lines(words: &mut [u64], pos: &[u32], k: usize, ahead: bool) {
    let keys = pos.len() / k;
    for i in 0..keys {
        if ahead && i + AHEAD < keys {
            for &p in &pos[(i + AHEAD) * k..(i + AHEAD + 1) * k] {
                prefetch(words.as_ptr().wrapping_add(p as usize / 64));
            }
        }
        for &p in &pos[i * k..(i + 1) * k] {
            words[p as usize / 64] |= 1 << (p % 64);
        }
    }
}

const SIDES: [&str; 4] = ["batch", "fastbloom", "lines", "lines-prefetch"];

fn report(n: usize, what: &str, times: Vec<Vec<f64>>) {
    out!("  {what}:");
    workload::scope(json!({"keys": "u64", "n": n, "op": what}));
    workload::medians(&SIDES, &times, 16);
    for i in [0, 2, 3] {
        let label = format!("fastbloom / {}", SIDES[i]);
        out!(
            "    {label}: {}",
            workload::ratio(&label, &times[1], &times[i])
        );
    }
    let fastest: Vec<f64> = (0..times[0].len())
        .map(|r| {
            [0, 2, 3]
                .map(|i| times[i][r])
                .into_iter()
                .fold(f64::MAX, f64::min)
        })
        .collect();
    out!(
        "    fastbloom / fastest: {}",
        workload::ratio("fastbloom / fastest", &times[1], &fastest)
    );
}

/// The sides of the paths' comparison (see the module's doc).
const PATHS: [&str; 4] = ["batch", "gather", "single", "fastbloom"];

/// Prints and records the paths' medians and fastbloom's time over each of ours.
fn report_paths(n: usize, what: &str, names: &[&str], times: Vec<Vec<f64>>) {
    out!("  {what}:");
    workload::scope(json!({"keys": "u64", "n": n, "op": what}));
    workload::medians(names, &times, 16);
    let peer = names.len() - 1;
    for (i, side) in names[..peer].iter().enumerate() {
        let label = format!("fastbloom / {side}");
        out!(
            "    {label}: {}",
            workload::ratio(&label, &times[peer], &times[i])
        );
    }
}

pub fn main() -> Result<(), blockbloom::Error> {
    let n_rounds: usize = workload::arg(1, 20);
    out!("classic filter at 1% against fastbloom and the memory ceiling: {n_rounds} rounds");
    for n in [1usize << 20, 1 << 25] {
        let members: Vec<u64> = (0..n as u64).map(scrambled).collect();
        let queries = &members[..n.min(QUERIES)];
        let mut ours = ClassicBloomFilter::with_capacity(n as u64, 0.01)?;
        let (m, k) = (ours.num_bits(), ours.probes());
        ours.insert_batch(&members);
        let mut peer = peers::fastbloom_fold_bits(m as usize, Some(k), n);
        for x in &members {
            peer.insert(x);
        }
        let pos = positions(queries.len(), m, k, n as u64);
        let mut lines = vec![0u64; m.div_ceil(64) as usize];
        or_lines(&mut lines, &positions(n, m, k, n as u64), k as usize, false);
        out!(
            "{n} keys: m = {m} bits ({} KiB), k = {k}, {} queries ({})",
            ours.size_in_bytes() >> 10,
            queries.len(),
            ours.isa()
        );
        // Every side finds every member.
        let found = [
            ours.count_batch(queries),
            queries.iter().filter(|x| peer.contains(*x)).count(),
            read_lines(&lines, &pos, k as usize, true),
        ];
        assert!(found.iter().all(|&f| f == queries.len()), "{found:?}");

        let times = workload::interleaved(n_rounds, SIDES.len(), queries.len(), |s| match s {
            0 => ours.count_batch(queries),
            1 => queries
                .iter()
                .filter(|x| black_box(&peer).contains(*x))
                .count(),
            _ => read_lines(&lines, &pos, k as usize, s == 3),
        });
        report(n, "contains (members)", times);
        let times = workload::interleaved(n_rounds, SIDES.len(), queries.len(), |s| match s {
            0 => ours.insert_batch(queries),
            1 => queries.iter().for_each(|x| {
                peer.insert(x);
            }),
            _ => or_lines(&mut lines, &pos, k as usize, s == 3),
        });
        report(n, "insert (again)", times);

        let absent: Vec<u64> = (0..queries.len() as u64)
            .map(|i| scrambled(n as u64 + i))
            .collect();
        let gathering = ours.clone().with_gather(true);
        for (what, q) in [
            ("contains (members)", queries),
            ("contains (absent)", &absent[..]),
        ] {
            let times = workload::interleaved(n_rounds, PATHS.len(), q.len(), |s| match s {
                0 => ours.count_batch(q),
                1 => gathering.count_batch(q),
                2 => q.iter().filter(|x| ours.contains(*x)).count(),
                _ => q.iter().filter(|x| black_box(&peer).contains(*x)).count(),
            });
            report_paths(n, what, &PATHS, times);
        }
        let design = ClassicBloomFilter::with_capacity(n as u64, 0.01)?;
        let times = workload::interleaved(n_rounds, 2, queries.len(), |s| {
            if s == 0 {
                let mut f = design.clone();
                f.insert_batch(queries);
                f.num_bits()
            } else {
                let mut f = peers::fastbloom_fold_bits(m as usize, Some(k), n);
                queries.iter().for_each(|x| {
                    f.insert(x);
                });
                f.num_hashes() as u64
            }
        });
        report_paths(n, "insert (fresh)", &["batch", "fastbloom"], times);
    }
    Ok(())
}
