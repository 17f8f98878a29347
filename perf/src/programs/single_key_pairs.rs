//! Single-key `contains` and `insert`, one key per call as a packet filter or a point lookup
//! calls them, against the peers' single-key calls, in interleaved rounds (every ratio's sides
//! see the same state of a shared machine; see `build_pairs.rs`).
//!
//! Filters of 50k, 1M and 64M keys at 1%, for `u64` keys and 16-byte strings (the key's
//! 16 hex digits). Each round asks 1M keys (half members, half not) of every side, one call
//! per key in a plain loop, and inserts 1M keys (already members, so the filter does not
//! change between rounds) one call per key. Sides:
//! * `ours`: `BloomFilter::contains(&key)` / `insert(&key)` (hash included);
//! * `sbbf`: sbbf-rs-safe 0.3, `contains_hash(xxh3_64(bytes))` / `insert_hash` (`peers::Sbbf`:
//!   11 bits a key at 1%, 0.8%);
//! * `fastbloom`: fastbloom 0.17 with foldhash, `contains(&key)` / `insert(&key)` (sized by
//!   fastbloom for 1%, `peers::fastbloom_fold`);
//! * `parquet`: parquet 60's `Sbbf`, `check(&key)` / `insert(&key)` (XXH64, sized for 1%,
//!   `peers::parquet_sbbf`);
//! * `ours-v2`: ours in the defaults before hash id 3 and the 8x32 rule (hash id 2 in the
//!   layout of least memory), so one run shows what the defaults changed;
//! * `ours-scalar`: ours in the defaults, through `contains_hash`/`insert_hash` of the public
//!   `hash::hash_u64_mx32`/`hash_u128_mx32`: the same bits as `contains` computes, in scalar
//!   registers where `contains` runs MX32-64's rounds in one SSE2 register on x86-64, so one
//!   run shows which of the two shapes this CPU favours (the register's `pmuludq` takes 3
//!   cycles on AMD Zen and 5 on Intel cores since Skylake, uops.info);
//! * `ours-mm64`: ours in the defaults but hash id 4 (`KeyHash::Moremur`, MM64), the opt-in
//!   for single keys; its line `sbbf / ours-mm64` is the peer's time over it.
//!
//! It prints each side's median ns/key and, per peer, the median and quartiles over the rounds
//! of the peer's time over ours (above 1: ours is faster). Then it splits `contains` between
//! ours and sbbf into its two halves, interleaved in the same way: the hash alone
//! (`BloomFilter::hash` against `xxh3_64`, each folded into a running xor so no call is
//! dropped) and the probe alone (`contains_hash` of hashes computed before the clock starts),
//! which bound what a single-key call can reach. Last, on x86-64 with AVX2, the `floor` lines
//! time `contains` of ours and sbbf beside two floors of the format, which are not sides a
//! user can call; both answer a copy of the defaults' filter (hash id 3, `Sectors8x32`, eight
//! probes), and are checked to give `contains`'s answers:
//! * `ours-inline`: one loop compiled for AVX2 in which the scalar MX32-64 rounds
//!   (`hash::hash_u64_mx32`/`hash_u128_mx32`), the block index and the probe (`layout::SALT`,
//!   one 256-bit half) are inlined, with no call: what a caller built for AVX2 could reach with
//!   the same bits;
//! * `ours-called`: the same work for one key behind one indirect call, as a tier's entry that
//!   took the key (not its hash) would cost;
//! * `fold1-called` and `fold2-called` (`u64` keys): `ours-called` over a filter of the same
//!   size holding the same members under a candidate hash that is not in the format, to show
//!   what a cheaper hash of 8-byte keys would buy: one or two folded multiplies (the 128-bit
//!   product of two 64-bit words, its halves xored), the first of the key xor the seed. The
//!   `floor fpr` line gives each filter's false-positive rate over the non-members among the
//!   queries (over structured keys, where a weak hash shows, these candidates' rates are
//!   `hash-quality`'s);
//! * `mx2-called` (`u64` keys): `ours-called` under a third candidate, MX32-64's first two
//!   rounds (hash id 3 takes three), as cheap in the batches' 32-bit lanes as hash id 3;
//! * `fold2-inline` and `batch-1024` (`u64` keys): `ours-inline`'s loop under two folded
//!   multiplies, beside the defaults' `count_batch` over the same queries 1,024 at a time, to
//!   show whether that hash would cost the batches their speed;
//! * `moremur-called`, `moremur-inline`, `murmur3-called` and `murmur3-inline` (`u64` keys):
//!   the same two floors under issue 84's multiply-xorshift candidates with moremur's
//!   constants and murmur3's (`candidate::Xorshift`; their quality over key families is
//!   `hash-quality`'s).
//!
//! ```sh
//! cargo run --release -p blockbloom-perf -- single-key-pairs 10            # rounds
//! cargo run --release -p blockbloom-perf -- single-key-pairs 10 50000,1000000   # sizes
//! ```

use std::hint::black_box;
use std::time::Instant;

use blockbloom::BloomFilter;
use blockbloom_perf::out;
use blockbloom_perf::peers;
use blockbloom_perf::workload::{self, median};
use serde_json::json;
use xxhash_rust::xxh3::xxh3_64;

const QUERIES: usize = 1 << 20;

/// splitmix64 of `i`: key `i`, without storing 64M of them (the stream of seed `i`, first key).
fn mix(i: u64) -> u64 {
    blockbloom_measure::keys::key(i, 0)
}

/// A key type the four filters take: its bytes for the hashes that take bytes.
trait Probe: std::hash::Hash + blockbloom::Key + parquet::data_type::AsBytes {
    fn make(i: u64) -> Self;
    fn bytes(&self) -> &[u8];
    /// The key's hash under the defaults (hash id 3, MX32-64) with `seed`, in scalar rounds.
    fn scalar_mx32(&self, seed: u64) -> u64;
    /// The key as one 8-byte word, for the floor's candidate hash (`None`: not 8 bytes).
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    fn word(&self) -> Option<u64>;
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
    fn word(&self) -> Option<u64> {
        Some(*self)
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
    fn word(&self) -> Option<u64> {
        None
    }
}

struct Sides {
    ours: BloomFilter,
    sbbf: peers::Sbbf,
    fast: peers::FastFold,
    parquet: parquet::bloom_filter::Sbbf,
    ours_v2: BloomFilter,
    ours_scalar: BloomFilter,
    ours_mm64: BloomFilter,
}

const NAMES: [&str; 7] = [
    "ours",
    "sbbf",
    "fastbloom",
    "parquet",
    "ours-v2",
    "ours-scalar",
    "ours-mm64",
];
/// The index of `ours-mm64` in [`NAMES`].
const MM64: usize = 6;
const SIDES: usize = NAMES.len();

impl Sides {
    fn new(n: usize) -> Result<Sides, blockbloom::Error> {
        Ok(Sides {
            ours: BloomFilter::with_capacity(n as u64, 0.01)?,
            sbbf: peers::Sbbf::new(n, 0.01),
            fast: peers::fastbloom_fold(n, 0.01),
            parquet: peers::parquet_sbbf(n, 0.01),
            ours_v2: BloomFilter::builder()
                .capacity(n as u64)
                .fpr(0.01)
                .key_hash(blockbloom::KeyHash::Aesh)
                .least_memory()
                .build()?,
            ours_scalar: BloomFilter::with_capacity(n as u64, 0.01)?,
            ours_mm64: BloomFilter::builder()
                .capacity(n as u64)
                .fpr(0.01)
                .key_hash(blockbloom::KeyHash::Moremur)
                .build()?,
        })
    }

    fn insert<K: Probe>(&mut self, side: usize, keys: &[K]) {
        match side {
            0 => keys.iter().for_each(|k| self.ours.insert(k)),
            1 => keys.iter().for_each(|k| self.sbbf.insert_bytes(k.bytes())),
            2 => keys.iter().for_each(|k| {
                self.fast.insert(k);
            }),
            3 => keys.iter().for_each(|k| self.parquet.insert(k)),
            4 => keys.iter().for_each(|k| self.ours_v2.insert(k)),
            MM64 => keys.iter().for_each(|k| self.ours_mm64.insert(k)),
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
                .filter(|k| self.sbbf.contains_bytes(k.bytes()))
                .count(),
            2 => keys.iter().filter(|k| self.fast.contains(*k)).count(),
            3 => keys.iter().filter(|k| self.parquet.check(*k)).count(),
            4 => keys.iter().filter(|k| self.ours_v2.contains(*k)).count(),
            MM64 => keys.iter().filter(|k| self.ours_mm64.contains(*k)).count(),
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
    out!(
        "{what}, n = {n} (ours {} KiB, {} KiB of it on huge pages, ours-scalar's {} KiB, \
         ours-mm64's {} KiB; sbbf {} KiB):",
        s.ours.size_in_bytes() >> 10,
        s.ours.huge_page_bytes().unwrap_or(0) >> 10,
        s.ours_scalar.huge_page_bytes().unwrap_or(0) >> 10,
        s.ours_mm64.huge_page_bytes().unwrap_or(0) >> 10,
        s.sbbf.as_bytes().len() >> 10,
    );
    for (op, times) in [("contains", &contains), ("insert", &insert)] {
        workload::scope(json!({"keys": what, "n": n, "op": op}));
        let line = workload::median_line(&NAMES, &times[..]);
        out!("  {op:>8} ns/key: {line}");
        for peer in 1..SIDES {
            let label = format!("{} / ours", NAMES[peer]);
            out!(
                "  {op:>8} {label}: {}",
                workload::ratio(&label, &times[peer], &times[0])
            );
        }
        let label = "sbbf / ours-mm64";
        out!(
            "  {op:>8} {label}: {}",
            workload::ratio(label, &times[1], &times[MM64])
        );
    }
    for (part, times) in [("hash", &split[0]), ("probe", &split[1])] {
        workload::scope(json!({"keys": what, "n": n, "op": "contains", "part": part}));
        let (ours, sbbf) = (median(&mut times[0].clone()), median(&mut times[1].clone()));
        workload::record("ours", ours);
        workload::record("sbbf", sbbf);
        out!(
            "  {part:>8} ns/key: ours {ours:.2}, sbbf {sbbf:.2}; sbbf / ours: {}",
            workload::ratio("sbbf / ours", &times[1], &times[0])
        );
    }
    workload::scope(json!({"keys": what, "n": n, "op": "contains", "part": "floor"}));
    floors(&s, n, &queries, rounds);
    Ok(())
}

/// `contains` of ours and sbbf beside the floors (see the module docs), interleaved, with
/// each side's false-positive rate over the queries that are not members.
#[cfg(target_arch = "x86_64")]
fn floors<K: Probe>(s: &Sides, n: usize, queries: &[K], rounds: usize) {
    use inline::{Floor, FloorHash};
    let Some(same) = Floor::copy(&s.ours) else {
        out!("     floor: not run (no AVX2, or the defaults are not 8x32 with 8 probes)");
        return;
    };
    for k in queries.iter().take(100_000) {
        let one = std::slice::from_ref(k);
        let expect = usize::from(s.ours.contains(k));
        assert_eq!(
            same.count::<_, { FloorHash::MX32 }>(one),
            expect,
            "ours-inline"
        );
        assert_eq!(
            same.count_called::<_, { FloorHash::MX32 }>(one),
            expect,
            "ours-called"
        );
    }
    // The candidate hashes take 8-byte keys only.
    let fold1 = Floor::folded::<K, { FloorHash::FOLD1 }>(&s.ours, (0..n as u64).map(K::make));
    let fold2 = Floor::folded::<K, { FloorHash::FOLD2 }>(&s.ours, (0..n as u64).map(K::make));
    let mx2 = Floor::folded::<K, { FloorHash::MX2 }>(&s.ours, (0..n as u64).map(K::make));
    let moremur = Floor::folded::<K, { FloorHash::MOREMUR }>(&s.ours, (0..n as u64).map(K::make));
    let murmur3 = Floor::folded::<K, { FloorHash::MURMUR3 }>(&s.ours, (0..n as u64).map(K::make));
    // The same queries as `u64`s, taken apart before the clock starts.
    let words: Option<Vec<u64>> = queries.iter().map(Probe::word).collect();
    type Side<'a, K> = (&'static str, Box<dyn Fn(&[K]) -> usize + 'a>);
    let mut sides: Vec<Side<'_, K>> = vec![
        ("ours", Box::new(|q| s.count(0, q))),
        (
            "ours-inline",
            Box::new(|q| same.count::<_, { FloorHash::MX32 }>(q)),
        ),
        (
            "ours-called",
            Box::new(|q| same.count_called::<_, { FloorHash::MX32 }>(q)),
        ),
    ];
    if let (Some(fold1), Some(fold2)) = (&fold1, &fold2) {
        sides.push((
            "fold1-called",
            Box::new(|q| fold1.count_called::<_, { FloorHash::FOLD1 }>(q)),
        ));
        sides.push((
            "fold2-called",
            Box::new(|q| fold2.count_called::<_, { FloorHash::FOLD2 }>(q)),
        ));
        sides.push((
            "fold2-inline",
            Box::new(|q| fold2.count::<_, { FloorHash::FOLD2 }>(q)),
        ));
    }
    if let Some(mx2) = &mx2 {
        sides.push((
            "mx2-called",
            Box::new(|q| mx2.count_called::<_, { FloorHash::MX2 }>(q)),
        ));
    }
    if let Some(moremur) = &moremur {
        sides.push((
            "moremur-called",
            Box::new(|q| moremur.count_called::<_, { FloorHash::MOREMUR }>(q)),
        ));
        sides.push((
            "moremur-inline",
            Box::new(|q| moremur.count::<_, { FloorHash::MOREMUR }>(q)),
        ));
    }
    if let Some(murmur3) = &murmur3 {
        sides.push((
            "murmur3-called",
            Box::new(|q| murmur3.count_called::<_, { FloorHash::MURMUR3 }>(q)),
        ));
        sides.push((
            "murmur3-inline",
            Box::new(|q| murmur3.count::<_, { FloorHash::MURMUR3 }>(q)),
        ));
    }
    if let Some(words) = &words {
        sides.push((
            "batch-1024",
            Box::new(|_| words.chunks(1024).map(|c| s.ours.count_batch(c)).sum()),
        ));
    }
    sides.push(("sbbf", Box::new(|q| s.count(1, q))));
    let times = workload::interleaved(rounds, sides.len(), queries.len(), |i| sides[i].1(queries));
    let names: Vec<&str> = sides.iter().map(|s| s.0).collect();
    out!(
        "     floor ns/key: {}",
        workload::median_line(&names, &times)
    );
    let at = |name: &str| names.iter().position(|&n| n == name);
    for (a, b) in [
        ("ours", "ours-inline"),
        ("ours-called", "ours-inline"),
        ("sbbf", "ours-inline"),
        ("sbbf", "ours-called"),
        ("sbbf", "fold1-called"),
        ("sbbf", "fold2-called"),
        ("sbbf", "mx2-called"),
        ("sbbf", "moremur-called"),
        ("sbbf", "moremur-inline"),
        ("sbbf", "murmur3-called"),
        ("sbbf", "murmur3-inline"),
        ("batch-1024", "fold2-inline"),
    ] {
        if let (Some(i), Some(j)) = (at(a), at(b)) {
            let label = format!("{a} / {b}");
            out!(
                "     floor {label}: {}",
                workload::ratio(&label, &times[i], &times[j])
            );
        }
    }
    // Odd queries are not members (see `run`).
    let strangers: Vec<&K> = queries.iter().skip(1).step_by(2).collect();
    let fpr = |count: &dyn Fn(&[K]) -> usize| {
        let hits: usize = strangers
            .iter()
            .map(|k| count(std::slice::from_ref(*k)))
            .sum();
        hits as f64 / strangers.len() as f64
    };
    let mut rates = vec![("ours", fpr(&|q| s.count(0, q)))];
    if let (Some(f1), Some(f2), Some(m2)) = (&fold1, &fold2, &mx2) {
        rates.push(("fold1", fpr(&|q| f1.count::<_, { FloorHash::FOLD1 }>(q))));
        rates.push(("fold2", fpr(&|q| f2.count::<_, { FloorHash::FOLD2 }>(q))));
        rates.push(("mx2", fpr(&|q| m2.count::<_, { FloorHash::MX2 }>(q))));
    }
    if let Some(m) = &moremur {
        rates.push(("moremur", fpr(&|q| m.count::<_, { FloorHash::MOREMUR }>(q))));
    }
    if let Some(m) = &murmur3 {
        rates.push(("murmur3", fpr(&|q| m.count::<_, { FloorHash::MURMUR3 }>(q))));
    }
    rates.push(("sbbf", fpr(&|q| s.count(1, q))));
    out!(
        "     floor fpr: {}",
        fpr_line("random (the queries)", &rates)
    );
}

/// "ours 0.960%, fold1 ..." of a key set's false-positive rates, each also recorded.
#[cfg(target_arch = "x86_64")]
fn fpr_line(key_set: &str, rates: &[(&str, f64)]) -> String {
    let fpr: serde_json::Map<String, serde_json::Value> = rates
        .iter()
        .map(|&(side, r)| (side.to_string(), json!(r)))
        .collect();
    workload::record_row(json!({"key_set": key_set, "fpr": fpr}));
    let shown: Vec<String> = rates
        .iter()
        .map(|(side, r)| format!("{side} {:.3}%", 100.0 * r))
        .collect();
    shown.join(", ")
}

#[cfg(not(target_arch = "x86_64"))]
fn floors<K: Probe>(_: &Sides, _: usize, _: &[K], _: usize) {
    out!("     floor: not run (x86-64 only)");
}

#[cfg(target_arch = "x86_64")]
mod inline {
    use std::arch::x86_64::*;
    use std::hint::black_box;

    use blockbloom::layout::{SALT, block_index, insert_scalar};
    use blockbloom::{Block, BloomFilter, KeyHash, Layout};

    use super::Probe;
    use blockbloom_perf::workload::candidate;

    /// Which hash a [`Floor`] computes (a const parameter of its loops, so no branch per key).
    pub struct FloorHash;

    impl FloorHash {
        /// Hash id 3, MX32-64, in scalar rounds: the defaults' bits.
        pub const MX32: u8 = 0;
        /// A candidate: one folded multiply of the key xor the seed.
        pub const FOLD1: u8 = 1;
        /// A candidate: two folded multiplies, the second of the first's result.
        pub const FOLD2: u8 = 2;
        /// A candidate: MX32-64's first two rounds for 8-byte keys (hash id 3 takes three).
        pub const MX2: u8 = 3;
        /// A candidate of issue 84: multiply-xorshift with moremur's constants
        /// (`candidate::Xorshift::MOREMUR`).
        pub const MOREMUR: u8 = 4;
        /// A candidate of issue 84: murmur3's `fmix64` (`candidate::Xorshift::MURMUR3`), whose
        /// final shift of 33 leaves the block index (the high 32 bits) as before it.
        pub const MURMUR3: u8 = 5;
    }

    /// Candidate `HASH` of an 8-byte key (`blockbloom_perf::workload::candidate`).
    #[inline(always)]
    fn candidate<const HASH: u8>(key: u64, seed: u64) -> u64 {
        match HASH {
            FloorHash::FOLD1 => candidate::fold1(key, seed),
            FloorHash::FOLD2 => candidate::fold2(key, seed),
            FloorHash::MOREMUR => candidate::Xorshift::MOREMUR.hash(key, seed),
            FloorHash::MURMUR3 => candidate::Xorshift::MURMUR3.hash(key, seed),
            _ => candidate::mx2(key, seed),
        }
    }

    /// Blocks in the defaults' layout (`Sectors8x32`, eight probes), answered by loops
    /// compiled for AVX2.
    pub struct Floor {
        blocks: Vec<Block>,
        num_blocks: u64,
        seed: u64,
    }

    impl Floor {
        /// An empty filter of `f`'s size and seed; `None` unless the CPU has AVX2 and `f` is
        /// hash id 3 in 8x32 with eight probes.
        fn empty(f: &BloomFilter) -> Option<Floor> {
            let defaults = f.key_hash() == KeyHash::Mx32
                && f.layout() == Layout::Sectors8x32
                && f.probes() == 8;
            if !defaults || !is_x86_feature_detected!("avx2") {
                return None;
            }
            Some(Floor {
                blocks: vec![Block::ZERO; f.num_blocks() as usize],
                num_blocks: f.num_blocks(),
                seed: f.seed(),
            })
        }

        /// A copy of `f`'s blocks; `None` as for [`empty`](Self::empty).
        pub fn copy(f: &BloomFilter) -> Option<Floor> {
            let mut floor = Floor::empty(f)?;
            // The encoding is a 64-byte header, then the blocks (docs/FORMAT.md); the answers
            // are checked against `contains` before any timing.
            let bytes = f.to_bytes();
            for (block, b) in floor.blocks.iter_mut().zip(bytes[64..].chunks_exact(64)) {
                *block = Block(std::array::from_fn(|w| {
                    u64::from_le_bytes(b[8 * w..][..8].try_into().expect("8 bytes"))
                }));
            }
            Some(floor)
        }

        /// A filter of `f`'s size and seed holding `members` under the candidate hash;
        /// `None` as for [`empty`](Self::empty) or when the keys are not 8 bytes.
        pub fn folded<K: Probe, const HASH: u8>(
            f: &BloomFilter,
            members: impl Iterator<Item = K>,
        ) -> Option<Floor> {
            let mut members = members.peekable();
            members.peek()?.word()?;
            let mut floor = Floor::empty(f)?;
            for k in members {
                let h = candidate::<HASH>(k.word()?, floor.seed);
                let block = &mut floor.blocks[block_index(h, floor.num_blocks)];
                insert_scalar(block, Layout::Sectors8x32, h as u32, 8);
            }
            Some(floor)
        }

        /// How many of `keys` the filter may hold, in one loop compiled for AVX2.
        pub fn count<K: Probe, const HASH: u8>(&self, keys: &[K]) -> usize {
            // SAFETY: a `Floor` is made only where the CPU has AVX2.
            unsafe { self.count_avx2::<K, HASH>(keys) }
        }

        /// [`count`](Self::count) with each key behind one indirect call into a function
        /// compiled for AVX2, as a tier's entry that took the key would be.
        pub fn count_called<K: Probe, const HASH: u8>(&self, keys: &[K]) -> usize {
            // Through a pointer the compiler cannot see, as a filter's entry is chosen.
            let one: unsafe fn(&Floor, &K) -> bool = black_box(Floor::one::<K, HASH>);
            // SAFETY: as in `count`.
            keys.iter().filter(|k| unsafe { one(self, k) }).count()
        }

        /// # Safety
        /// The CPU must have AVX2.
        #[inline(never)]
        #[target_feature(enable = "avx2")]
        unsafe fn one<K: Probe, const HASH: u8>(&self, key: &K) -> bool {
            // SAFETY: the caller's guarantee.
            unsafe { self.count_avx2::<K, HASH>(std::slice::from_ref(key)) == 1 }
        }

        /// # Safety
        /// The CPU must have AVX2.
        #[target_feature(enable = "avx2")]
        unsafe fn count_avx2<K: Probe, const HASH: u8>(&self, keys: &[K]) -> usize {
            // SAFETY: `SALT` holds at least eight `u32`s (32 bytes), read unaligned.
            let salt = unsafe { _mm256_loadu_si256(SALT.as_ptr().cast()) };
            let one = _mm256_set1_epi32(1);
            let mut hits = 0;
            for k in keys {
                let h = if HASH == FloorHash::MX32 {
                    k.scalar_mx32(self.seed)
                } else {
                    candidate::<HASH>(k.word().unwrap_or(0), self.seed)
                };
                let lo = h as u32;
                // SAFETY: `block_index` is below `num_blocks`, the number of blocks.
                let block = unsafe { self.blocks.get_unchecked(block_index(h, self.num_blocks)) };
                // SAFETY: a `Block` is 64 bytes, 64-byte aligned: halves 0 and 1 are 32-byte
                // aligned `__m256i`s inside it.
                let half = unsafe {
                    let halves = (block as *const Block).cast::<__m256i>();
                    _mm256_load_si256(halves.add((lo >> 31) as usize))
                };
                let bits =
                    _mm256_srli_epi32::<27>(_mm256_mullo_epi32(_mm256_set1_epi32(lo as i32), salt));
                hits += _mm256_testc_si256(half, _mm256_sllv_epi32(one, bits)) as usize;
            }
            hits
        }
    }
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

pub fn main() -> Result<(), blockbloom::Error> {
    let mut args = blockbloom_perf::workload::args().skip(1);
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
    let cpu = blockbloom_perf::workload::cpu_name();
    out!(
        "single-key contains/insert, 1%: {rounds} rounds, sides interleaved; {cpu}; kernel {}",
        blockbloom::Isa::active()?
    );
    for &n in &sizes {
        run::<u64>("u64 keys", n, rounds)?;
        run::<Str16>("16-byte strings", n, rounds)?;
    }
    Ok(())
}
