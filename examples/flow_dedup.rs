//! Flow deduplication: a packet stream's 5-tuples, from several threads, into one
//! [`AtomicBloomFilter`] with `insert_new`, counting new flows against the exact count.
//!
//! A packet filter or flow exporter wants to do something once per flow (log it, sample it,
//! create state) and cannot afford an exact table at line rate (one of the uses surveyed by
//! A. Broder and M. Mitzenmacher, "Network Applications of Bloom Filters: A Survey", Internet
//! Mathematics 1(4), 2004). Each packet's 5-tuple (source
//! and destination IPv4 address, ports, protocol) is a 16-byte key, here a `u128` whose
//! little-endian bytes are the tuple, so it hashes exactly as `insert_bytes` of those bytes
//! and as the `insert_batch_new` of a burst. Packets are sprayed over the threads in bursts of
//! 32, round robin, so one flow's packets reach several threads at about the same time, which
//! is the hard case for a check-and-insert.
//!
//! What `insert_new` guarantees, and what the example checks exactly (not only on average):
//!
//! * **A new flow is reported at least once**, unless it is a false positive: every bit of
//!   its pattern was already set by other flows before its first packet. So the flows never
//!   reported new are exactly false positives, and the filter built from only the flows that
//!   *were* reported new must equal the whole filter, bit for bit (a flow never reported new
//!   set no bit). Their number is compared with the expected count, the sum of the model's
//!   false-positive rate over the fill levels the flows arrived at.
//! * **Under concurrency a new flow can be reported more than once**: threads racing on the
//!   same new flow can each be first to set a different word of its pattern. Each `true` set
//!   at least one bit that no other call set, so the `true`s are at most the bits set, and at
//!   most `k` per flow. On one thread there are no duplicates: the count of `true`s is the
//!   exact distinct count minus the false positives.
//! * **No insert is lost**: after the threads are joined, `into_filter()` equals the filter
//!   built on one thread from the distinct flows.
//!
//! So a counter of `true` answers is within a few false positives below the exact count (and
//! on several threads, within the racing duplicates above it); counting *flows* reported new
//! is never above it.
//!
//! ```text
//! cargo run --release --example flow_dedup -- --flows 1000000 --packets 8000000 --threads 4
//! ```

use std::collections::{HashMap, HashSet};
use std::process::ExitCode;
use std::time::Instant;

use blockbloom::{AtomicBloomFilter, BloomFilter};

/// Packets per burst handed to one thread (a NIC's receive burst).
const BURST: usize = 32;
/// Flows live at once: a new packet belongs to one of them unless it starts a new flow, so
/// each flow's packets are close together in the stream.
const ACTIVE: usize = 256;

/// What to run.
#[derive(Clone, Debug)]
struct Config {
    /// Flows the stream is generated with (and the filter is sized for).
    flows: u64,
    packets: u64,
    threads: usize,
    fpr: f64,
    seed: u64,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            flows: 1_000_000,
            packets: 8_000_000,
            threads: 4,
            fpr: 0.01,
            seed: 0x666c_6f77,
        }
    }
}

/// What the run found.
#[derive(Debug)]
struct Report {
    packets: u64,
    threads: usize,
    filter_bytes: usize,
    probes: u32,
    /// Distinct 5-tuples in the stream (exact).
    distinct: u64,
    /// `insert_new` calls that answered `true`.
    answered_new: u64,
    /// Flows with at least one `true`.
    flows_reported_new: u64,
    /// Flows never reported new: false positives.
    missed: u64,
    /// The expected number of false positives: the model's rate summed over the flows.
    expected_missed: f64,
    /// `true`s beyond the first for a flow (threads racing on a new flow).
    duplicates: u64,
    /// The most `true`s one flow got.
    max_new_per_flow: u32,
    /// Bits set in the final filter.
    bits_set: u64,
    /// The concurrent filter equals the single-threaded build of the distinct flows.
    equals_sequential: bool,
    /// ...and the build of only the flows reported new.
    equals_reported_new: bool,
    fpr_final: f64,
    seconds: f64,
}

/// SplitMix64: a small, fixed-seed generator, so every run sees the same stream.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        ((self.next() as u128 * n as u128) >> 64) as u64
    }

    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A random flow's 5-tuple as its 16 bytes: source and destination IPv4 address, source and
/// destination port, protocol, three zero bytes.
fn random_flow(rng: &mut Rng) -> u128 {
    let mut t = [0u8; 16];
    t[0..4].copy_from_slice(&(0x0a00_0000 | (rng.next() as u32 & 0x00ff_ffff)).to_be_bytes());
    t[4..8].copy_from_slice(&(rng.next() as u32).to_be_bytes());
    t[8..10].copy_from_slice(&(1024 + rng.below(64_512) as u16).to_be_bytes());
    let ports = [443u16, 80, 53, 123, 22, 8080];
    t[10..12].copy_from_slice(&ports[rng.below(ports.len() as u64) as usize].to_be_bytes());
    t[12] = if rng.below(4) == 0 { 17 } else { 6 }; // UDP or TCP
    u128::from_le_bytes(t)
}

/// The packet stream: each packet is a new flow with probability `flows / packets`, else a
/// packet of one of the [`ACTIVE`] live flows.
fn stream(cfg: &Config) -> Vec<u128> {
    let mut rng = Rng(cfg.seed);
    let p_new = cfg.flows as f64 / cfg.packets.max(1) as f64;
    let mut live: Vec<u128> = Vec::with_capacity(ACTIVE);
    (0..cfg.packets)
        .map(|_| {
            if live.is_empty() || rng.unit() < p_new {
                let flow = random_flow(&mut rng);
                if live.len() < ACTIVE {
                    live.push(flow);
                } else {
                    live[rng.below(ACTIVE as u64) as usize] = flow;
                }
                flow
            } else {
                live[rng.below(live.len() as u64) as usize]
            }
        })
        .collect()
}

/// Upper tail bound for a count with mean `mean` (a sum of independent rare events): six
/// standard deviations and a little slack for the smallest counts.
fn within(count: f64, mean: f64) -> bool {
    (count - mean).abs() <= 6.0 * mean.sqrt() + 3.0
}

fn run(cfg: &Config) -> Result<Report, blockbloom::Error> {
    let packets = stream(cfg);
    let filter = AtomicBloomFilter::with_capacity(cfg.flows, cfg.fpr)?;
    let (filter_bytes, probes) = (filter.size_in_bytes(), filter.probes());

    let threads = cfg.threads.max(1);
    let start = Instant::now();
    // Each thread returns the indices of the packets it was told were new.
    let new_at: Vec<Vec<usize>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (filter, packets) = (&filter, &packets);
                s.spawn(move || {
                    let mut new = Vec::new();
                    for burst in (t * BURST..packets.len()).step_by(threads * BURST) {
                        for (i, flow) in packets.iter().enumerate().skip(burst).take(BURST) {
                            if filter.insert_new(flow) {
                                new.push(i);
                            }
                        }
                    }
                    new
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a worker panicked"))
            .collect()
    });
    let seconds = start.elapsed().as_secs_f64();
    let filter: BloomFilter = filter.into_filter();

    // The exact answer, and the flows in order of their first packet.
    let mut seen = HashSet::with_capacity(cfg.flows as usize);
    let distinct: Vec<u128> = packets
        .iter()
        .copied()
        .filter(|f| seen.insert(*f))
        .collect();
    let mut per_flow: HashMap<u128, u32> = HashMap::new();
    for &i in new_at.iter().flatten() {
        *per_flow.entry(packets[i]).or_default() += 1;
    }
    let answered_new: u64 = new_at.iter().map(|v| v.len() as u64).sum();
    let flows_reported_new = per_flow.len() as u64;

    let mut sequential = BloomFilter::with_capacity(cfg.flows, cfg.fpr)?;
    sequential.insert_batch(&distinct);
    let reported: Vec<u128> = distinct
        .iter()
        .copied()
        .filter(|f| per_flow.contains_key(f))
        .collect();
    let mut rebuilt = BloomFilter::with_capacity(cfg.flows, cfg.fpr)?;
    rebuilt.insert_batch(&reported);

    // The i-th new flow meets a filter holding about i flows: sum the model's rate over that.
    let d = distinct.len() as u64;
    let steps = 200.min(d.max(1));
    let expected_missed: f64 = (0..steps)
        .map(|j| {
            let (lo, hi) = (d * j / steps, d * (j + 1) / steps);
            filter.model_fpr((lo + hi) / 2) * (hi - lo) as f64
        })
        .sum();

    let bits = filter.num_blocks() * 512;
    Ok(Report {
        packets: cfg.packets,
        threads,
        filter_bytes,
        probes,
        distinct: d,
        answered_new,
        flows_reported_new,
        missed: d - flows_reported_new,
        expected_missed,
        duplicates: answered_new - flows_reported_new,
        max_new_per_flow: per_flow.values().copied().max().unwrap_or(0),
        bits_set: (filter.fill_ratio() * bits as f64).round() as u64,
        equals_sequential: filter == sequential,
        equals_reported_new: filter == rebuilt,
        fpr_final: filter.expected_fpr(),
        seconds,
    })
}

fn parse_args() -> Result<Config, String> {
    let mut cfg = Config::default();
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        if flag == "--help" || flag == "-h" {
            return Err(String::new());
        }
        let value = it.next().ok_or(format!("{flag} needs a value"))?;
        let value = value.replace('_', "");
        let int = || {
            value
                .parse::<u64>()
                .map_err(|e| format!("{flag} {value}: {e}"))
        };
        match flag.as_str() {
            "--flows" => cfg.flows = int()?,
            "--packets" => cfg.packets = int()?,
            "--threads" => cfg.threads = int()? as usize,
            "--seed" => cfg.seed = int()?,
            "--fpr" => cfg.fpr = value.parse().map_err(|e| format!("--fpr {value}: {e}"))?,
            _ => return Err(format!("unknown argument {flag}")),
        }
    }
    if cfg.flows == 0 || cfg.packets == 0 || cfg.threads == 0 {
        return Err("--flows, --packets and --threads must be at least 1".into());
    }
    Ok(cfg)
}

fn main() -> ExitCode {
    let cfg = match parse_args() {
        Ok(c) => c,
        Err(e) => {
            if !e.is_empty() {
                eprintln!("error: {e}");
            }
            eprintln!(
                "usage: flow_dedup [--flows N] [--packets N] [--threads T] [--fpr P] [--seed S]"
            );
            return ExitCode::from(2);
        }
    };
    let r = match run(&cfg) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let pct = |x: u64| 100.0 * x as f64 / r.distinct.max(1) as f64;
    println!(
        "flow_dedup: {} packets, {} threads (bursts of {BURST}, round robin), one \
         AtomicBloomFilter of {:.2} MiB (k = {}) sized for {} flows at {}",
        r.packets,
        r.threads,
        r.filter_bytes as f64 / (1 << 20) as f64,
        r.probes,
        cfg.flows,
        cfg.fpr
    );
    println!(
        "  exact distinct flows (hash set):          {:>10}",
        r.distinct
    );
    println!(
        "  insert_new answered true:                 {:>10}  ({:+} against exact)",
        r.answered_new,
        r.answered_new as i64 - r.distinct as i64
    );
    println!(
        "  flows reported new at least once:         {:>10}",
        r.flows_reported_new
    );
    println!(
        "  flows never reported new (false pos.):    {:>10}  ({:.3}%; expected {:.0} from the \
         model)",
        r.missed,
        pct(r.missed),
        r.expected_missed
    );
    println!(
        "  extra trues from threads racing:          {:>10}  (most for one flow: {})",
        r.duplicates, r.max_new_per_flow
    );
    let yes = |b: bool| if b { "yes" } else { "NO" };
    println!(
        "  no insert lost (filter == the single-thread build of the distinct flows): {}",
        yes(r.equals_sequential)
    );
    println!(
        "  flows never reported new set no bit (filter == the build of the reported flows \
         alone): {}",
        yes(r.equals_reported_new)
    );
    println!(
        "  false-positive rate at the end: {:.3}%; memory {:.2} MiB against {:.2} MiB for the \
         exact set's keys alone (16 bytes a flow)",
        100.0 * r.fpr_final,
        r.filter_bytes as f64 / (1 << 20) as f64,
        (16 * r.distinct) as f64 / (1 << 20) as f64
    );
    println!(
        "  {:.3} s: {:.1} M packets/s over {} threads",
        r.seconds,
        r.packets as f64 / r.seconds / 1e6,
        r.threads
    );
    let ok = r.equals_sequential
        && r.equals_reported_new
        && r.answered_new <= r.bits_set
        && within(r.missed as f64, r.expected_missed);
    if ok {
        ExitCode::SUCCESS
    } else {
        eprintln!("FAILED: a guarantee of insert_new did not hold");
        ExitCode::FAILURE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small(threads: usize) -> Config {
        Config {
            flows: 20_000,
            packets: 200_000,
            threads,
            fpr: 0.01,
            seed: 7,
        }
    }

    /// The properties every run must have, on any number of threads.
    fn check(r: &Report) {
        assert!(r.equals_sequential, "an insert was lost: {r:?}");
        assert!(
            r.equals_reported_new,
            "a flow never reported new set a bit: {r:?}"
        );
        // Each `true` set a bit no other call set; each flow has at most k bits.
        assert!(r.answered_new <= r.bits_set, "{r:?}");
        assert!(r.max_new_per_flow <= r.probes, "{r:?}");
        assert_eq!(r.flows_reported_new + r.missed, r.distinct);
        assert!(
            within(r.missed as f64, r.expected_missed),
            "false positives {} against {:.1} expected",
            r.missed,
            r.expected_missed
        );
        // Each packet starts a flow with probability flows/packets: a binomial count around
        // 20,000 (standard deviation 134), so within five of them.
        assert!(r.distinct.abs_diff(20_000) < 700, "{}", r.distinct);
    }

    #[test]
    fn one_thread_counts_distinct_minus_false_positives() {
        let r = run(&small(1)).unwrap();
        check(&r);
        assert_eq!(
            r.duplicates, 0,
            "one thread reports a flow new at most once"
        );
        assert_eq!(r.answered_new, r.distinct - r.missed);
        assert!(r.answered_new <= r.distinct);
        // At 1% the first flows meet an empty filter and the last a full one: some misses.
        assert!(r.missed > 0 && r.expected_missed > 10.0, "{r:?}");
    }

    #[test]
    fn four_threads_keep_the_guarantees() {
        // Four writers on CI's two cores: a build of the library without `std` has no
        // scheduler to yield to unless it is given one (docs/guide/many-writers.md). With
        // `std` this is what a wait does anyway. The variable measures the difference
        // (perf-reports/2026-12-06-yield-hook.md).
        if std::env::var_os("FLOW_DEDUP_WITHOUT_YIELD_HOOK").is_none() {
            blockbloom::set_yield_hook(Some(std::thread::yield_now));
        }
        let r = run(&small(4)).unwrap();
        check(&r);
        // Flows reported new are never more than the flows there are; the count of trues is
        // that plus the racing duplicates.
        assert!(r.flows_reported_new <= r.distinct);
        assert_eq!(r.answered_new, r.distinct - r.missed + r.duplicates);
    }

    #[test]
    fn a_tuple_hashes_as_its_bytes() {
        // `insert_new(&u128)` and `insert_batch_new(&[u128])` hash the tuple's 16 bytes, so
        // the example's keys are the bytes a packet parser would hand over.
        let mut rng = Rng(1);
        for _ in 0..100 {
            let k = random_flow(&mut rng);
            assert_eq!(
                blockbloom::hash::hash_key(&k, 0),
                blockbloom::hash::hash_bytes(&k.to_le_bytes(), 0)
            );
        }
        let a = AtomicBloomFilter::with_capacity(100, 0.01).unwrap();
        let b = AtomicBloomFilter::with_capacity(100, 0.01).unwrap();
        let keys: Vec<u128> = (0..50).map(|_| random_flow(&mut rng)).collect();
        let mut out = vec![false; keys.len()];
        let n = a.insert_batch_new(&keys, &mut out);
        let one_by_one: Vec<bool> = keys.iter().map(|k| b.insert_new(k)).collect();
        assert_eq!(
            (out, n),
            (
                one_by_one.clone(),
                one_by_one.iter().filter(|&&x| x).count()
            )
        );
        assert_eq!(a.into_filter(), b.into_filter());
    }
}
