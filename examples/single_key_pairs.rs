//! Single-key `contains` and `insert`, one key per call as a packet filter or a point lookup
//! calls them, against the peers' single-key calls, in interleaved rounds (every ratio's sides
//! see the same state of a shared machine; see `build_pairs.rs`).
//!
//! Filters of 50k, 1M and 64M keys at 1%, for `u64` keys and 16-byte strings (the key's
//! 16 hex digits). Each round asks 1M keys (half members, half not) of every side, one call
//! per key in a plain loop, and inserts 1M keys (already members, so the filter does not
//! change between rounds) one call per key. Sides:
//! * `ours`: `BloomFilter::contains(&key)` / `insert(&key)` (hash included);
//! * `sbbf`: sbbf-rs-safe 0.3, `contains_hash(xxh3_64(bytes))` / `insert_hash` (11 bits a key,
//!   0.8%, as the `blockbloom-perf` suite sizes it for 1%);
//! * `fastbloom`: fastbloom 0.17 with foldhash, `contains(&key)` / `insert(&key)` (sized by
//!   fastbloom for 1%);
//! * `parquet`: parquet 60's `Sbbf`, `check(&key)` / `insert(&key)` (XXH64, sized for 1%);
//! * `ours-v2`: ours in the defaults before hash id 3 and the 8x32 rule (hash id 2 in the
//!   layout of least memory), so one run shows what the defaults changed;
//! * `ours-scalar`: ours in the defaults, through `contains_hash`/`insert_hash` of the public
//!   `hash::hash_u64_mx32`/`hash_u128_mx32`: the same bits as `contains` computes, in scalar
//!   registers where `contains` runs MX32-64's rounds in one SSE2 register on x86-64, so one
//!   run shows which of the two shapes this CPU favours (the register's `pmuludq` takes 3
//!   cycles on AMD Zen and 5 on Intel cores since Skylake, uops.info).
//!
//! It prints each side's median ns/key and, per peer, the median and quartiles over the rounds
//! of the peer's time over ours (above 1: ours is faster). Then it splits `contains` between
//! ours and sbbf into its two halves, interleaved in the same way: the hash alone
//! (`BloomFilter::hash` against `xxh3_64`, each folded into a running xor so no call is
//! dropped) and the probe alone (`contains_hash` of hashes computed before the clock starts),
//! which bound what a single-key call can reach.
//!
//! ```sh
//! cargo run --release --example single_key_pairs -- 10            # rounds
//! cargo run --release --example single_key_pairs -- 10 50000,1000000   # sizes
//! ```

use std::hint::black_box;
use std::time::Instant;

use blockbloom::BloomFilter;
use pairs::{median, ratio_summary};
use parquet::bloom_filter::Sbbf;
use xxhash_rust::xxh3::xxh3_64;

mod pairs;

const QUERIES: usize = 1 << 20;

/// splitmix64 of `i`: key `i`, without storing 64M of them.
fn mix(i: u64) -> u64 {
    let mut z = i.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A key type the four filters take: its bytes for the hashes that take bytes.
trait Probe: std::hash::Hash + blockbloom::Key + parquet::data_type::AsBytes {
    fn make(i: u64) -> Self;
    fn bytes(&self) -> &[u8];
    /// The key's hash under the defaults (hash id 3, MX32-64) with `seed`, in scalar rounds.
    fn scalar_mx32(&self, seed: u64) -> u64;
}

impl Probe for u64 {
    fn make(i: u64) -> u64 {
        mix(i)
    }
    fn bytes(&self) -> &[u8] {
        parquet::data_type::AsBytes::as_bytes(self)
    }
    fn scalar_mx32(&self, seed: u64) -> u64 {
        blockbloom::hash::hash_u64_mx32(*self, seed)
    }
}

/// A 16-byte string key.
#[derive(Hash)]
struct Str16(String);

impl blockbloom::Key for Str16 {
    fn key_form(&self) -> blockbloom::KeyForm<'_> {
        self.0.key_form()
    }
}

impl parquet::data_type::AsBytes for Str16 {
    fn as_bytes(&self) -> &[u8] {
        self.0.as_bytes()
    }
}

impl Probe for Str16 {
    fn make(i: u64) -> Str16 {
        Str16(format!("{:016x}", mix(i)))
    }
    fn bytes(&self) -> &[u8] {
        self.0.as_bytes()
    }
    fn scalar_mx32(&self, seed: u64) -> u64 {
        let word = self.0.as_bytes().try_into().expect("16 bytes");
        blockbloom::hash::hash_u128_mx32(u128::from_le_bytes(word), seed)
    }
}

type Fast = fastbloom::BloomFilter<foldhash::fast::RandomState>;

struct Sides {
    ours: BloomFilter,
    sbbf: sbbf_rs_safe::Filter,
    fast: Fast,
    parquet: Sbbf,
    ours_v2: BloomFilter,
    ours_scalar: BloomFilter,
}

const NAMES: [&str; 6] = [
    "ours",
    "sbbf",
    "fastbloom",
    "parquet",
    "ours-v2",
    "ours-scalar",
];
const SIDES: usize = NAMES.len();

impl Sides {
    fn new(n: usize) -> Result<Sides, blockbloom::Error> {
        Ok(Sides {
            ours: BloomFilter::with_capacity(n as u64, 0.01)?,
            sbbf: sbbf_rs_safe::Filter::new(11, n),
            fast: fastbloom::BloomFilter::with_false_pos(0.01)
                .hasher(foldhash::fast::RandomState::default())
                .expected_items(n),
            parquet: Sbbf::new_with_ndv_fpp(n as u64, 0.01).expect("parquet sizes it"),
            ours_v2: BloomFilter::builder()
                .capacity(n as u64)
                .fpr(0.01)
                .key_hash(blockbloom::KeyHash::Aesh)
                .least_memory()
                .build()?,
            ours_scalar: BloomFilter::with_capacity(n as u64, 0.01)?,
        })
    }

    fn insert<K: Probe>(&mut self, side: usize, keys: &[K]) {
        match side {
            0 => keys.iter().for_each(|k| self.ours.insert(k)),
            1 => keys.iter().for_each(|k| {
                self.sbbf.insert_hash(xxh3_64(k.bytes()));
            }),
            2 => keys.iter().for_each(|k| {
                self.fast.insert(k);
            }),
            3 => keys.iter().for_each(|k| self.parquet.insert(k)),
            4 => keys.iter().for_each(|k| self.ours_v2.insert(k)),
            _ => {
                let seed = self.ours_scalar.seed();
                keys.iter()
                    .for_each(|k| self.ours_scalar.insert_hash(k.scalar_mx32(seed)))
            }
        }
    }

    fn count<K: Probe>(&self, side: usize, keys: &[K]) -> usize {
        match side {
            0 => keys.iter().filter(|k| self.ours.contains(*k)).count(),
            1 => keys
                .iter()
                .filter(|k| self.sbbf.contains_hash(xxh3_64(k.bytes())))
                .count(),
            2 => keys.iter().filter(|k| self.fast.contains(*k)).count(),
            3 => keys.iter().filter(|k| self.parquet.check(*k)).count(),
            4 => keys.iter().filter(|k| self.ours_v2.contains(*k)).count(),
            _ => {
                let seed = self.ours_scalar.seed();
                keys.iter()
                    .filter(|k| self.ours_scalar.contains_hash(k.scalar_mx32(seed)))
                    .count()
            }
        }
    }
}

fn run<K: Probe>(what: &str, n: usize, rounds: usize) -> Result<(), blockbloom::Error> {
    let mut s = Sides::new(n)?;
    // Members go in one call per key on every side, in chunks so no side holds all keys.
    let mut chunk = Vec::with_capacity(1 << 16);
    for start in (0..n as u64).step_by(1 << 16) {
        chunk.clear();
        chunk.extend((start..(start + (1 << 16)).min(n as u64)).map(K::make));
        for side in 0..SIDES {
            s.insert(side, &chunk);
        }
    }
    let queries: Vec<K> = (0..QUERIES as u64)
        .map(|i| {
            if i % 2 == 0 {
                K::make(mix(i) % n as u64)
            } else {
                K::make(n as u64 + mix(i))
            }
        })
        .collect();
    let members: Vec<K> = (0..QUERIES as u64)
        .map(|i| K::make(mix(i + 1) % n as u64))
        .collect();
    // The scalar side computes what `contains` does, or it would not be the same filter.
    let seed = s.ours_scalar.seed();
    for k in queries.iter().take(1000) {
        assert_eq!(
            s.ours_scalar.hash(k),
            k.scalar_mx32(seed),
            "ours-scalar: other bits"
        );
    }
    for (side, name) in NAMES.iter().enumerate() {
        let hits = s.count(side, &queries);
        assert!(hits >= QUERIES / 2, "{name}: {hits} hits");
    }
    let mut contains: [Vec<f64>; SIDES] = Default::default();
    let mut insert: [Vec<f64>; SIDES] = Default::default();
    for round in 0..rounds {
        for j in 0..SIDES {
            let side = (round + j) % SIDES;
            let t = Instant::now();
            black_box(s.count(side, &queries));
            contains[side].push(t.elapsed().as_secs_f64() * 1e9 / QUERIES as f64);
            let t = Instant::now();
            s.insert(side, &members);
            black_box(&s);
            insert[side].push(t.elapsed().as_secs_f64() * 1e9 / QUERIES as f64);
        }
    }
    let split = split(&s, &queries, rounds);
    println!(
        "{what}, n = {n} (ours {} KiB, {} KiB of it on huge pages, ours-scalar's {} KiB; \
         sbbf {} KiB):",
        s.ours.size_in_bytes() >> 10,
        s.ours.huge_page_bytes().unwrap_or(0) >> 10,
        s.ours_scalar.huge_page_bytes().unwrap_or(0) >> 10,
        n * 11 / 8 / 1024,
    );
    for (op, times) in [("contains", &contains), ("insert", &insert)] {
        let line: Vec<String> = (0..SIDES)
            .map(|i| format!("{} {:.2}", NAMES[i], median(&mut times[i].clone())))
            .collect();
        println!("  {op:>8} ns/key: {}", line.join(", "));
        for peer in 1..SIDES {
            println!(
                "  {op:>8} {} / ours: {}",
                NAMES[peer],
                ratio_summary(&times[peer], &times[0])
            );
        }
    }
    for (part, times) in [("hash", &split[0]), ("probe", &split[1])] {
        println!(
            "  {part:>8} ns/key: ours {:.2}, sbbf {:.2}; sbbf / ours: {}",
            median(&mut times[0].clone()),
            median(&mut times[1].clone()),
            ratio_summary(&times[1], &times[0])
        );
    }
    Ok(())
}

/// Per round, `contains` of ours and sbbf split into the hash alone and the probe alone:
/// `[hash, probe]`, each `[ours, sbbf]` in ns/key.
fn split<K: Probe>(s: &Sides, queries: &[K], rounds: usize) -> [[Vec<f64>; 2]; 2] {
    let ours_hashes: Vec<u64> = queries.iter().map(|k| s.ours.hash(k)).collect();
    let sbbf_hashes: Vec<u64> = queries.iter().map(|k| xxh3_64(k.bytes())).collect();
    let per_key = |t: Instant| t.elapsed().as_secs_f64() * 1e9 / queries.len() as f64;
    let mut out: [[Vec<f64>; 2]; 2] = Default::default();
    for round in 0..rounds {
        for j in 0..2 {
            let side = (round + j) % 2;
            let t = Instant::now();
            let folded = match side {
                0 => queries.iter().fold(0, |a, k| a ^ black_box(s.ours.hash(k))),
                _ => queries
                    .iter()
                    .fold(0, |a, k| a ^ black_box(xxh3_64(k.bytes()))),
            };
            black_box(folded);
            out[0][side].push(per_key(t));
            let t = Instant::now();
            let hits = match side {
                0 => ours_hashes
                    .iter()
                    .filter(|&&h| s.ours.contains_hash(h))
                    .count(),
                _ => sbbf_hashes
                    .iter()
                    .filter(|&&h| s.sbbf.contains_hash(h))
                    .count(),
            };
            black_box(hits);
            out[1][side].push(per_key(t));
        }
    }
    out
}

fn main() -> Result<(), blockbloom::Error> {
    let mut args = std::env::args().skip(1);
    let rounds: usize = args.next().map_or(10, |s| {
        s.parse()
            .ok()
            .filter(|&v| v > 0)
            .expect("a positive number of rounds")
    });
    let sizes: Vec<usize> = args
        .next()
        .map_or(vec![50_000, 1_000_000, 64_000_000], |s| {
            s.split(',')
                .map(|n| n.parse().expect("sizes: numbers separated by commas"))
                .collect()
        });
    let cpu = pairs::cpu_name();
    println!(
        "single-key contains/insert, 1%: {rounds} rounds, sides interleaved; {cpu}; kernel {}",
        blockbloom::Isa::active()?
    );
    for &n in &sizes {
        run::<u64>("u64 keys", n, rounds)?;
        run::<Str16>("16-byte strings", n, rounds)?;
    }
    Ok(())
}
