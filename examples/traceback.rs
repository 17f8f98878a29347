//! Hash-based IP traceback: routers keep a Bloom filter of the digests of the packets they
//! forward, one per time window, and a single attack packet is traced from the victim back to
//! its source.
//!
//! After A. C. Snoeren, C. Partridge, L. A. Sanchez, C. E. Jones, F. Tchakountio, S. T. Kent
//! and W. T. Strayer, "Hash-Based IP Traceback", ACM SIGCOMM 2001 (SPIE, the Source Path
//! Isolation Engine). Each router digests every packet it forwards, the IP header's invariant
//! fields (TOS, TTL and checksum masked, as they change hop by hop) and the first 8 bytes of
//! the payload, 28 bytes in all, and inserts the digest into the digest table of the current
//! time window, a classic Bloom filter (`ClassicBloomFilter`) paged out when the window ends.
//! To trace a packet, the victim's router is asked whether it saw the packet's digest in that
//! window; then, from every router that says yes, each neighbour (but the one it was reached
//! from) is asked the same: reverse-path flooding. The routers that said yes and the links
//! they were reached over are the attack graph.
//!
//! What it shows, as the paper argues it:
//!
//! * **No false negatives.** Every router on the true path saw the packet, so every link of
//!   the true path is in the attack graph, whatever the other packets.
//! * **False branches are few.** A router not on the path says yes with the false-positive
//!   rate `P` of its table. Each router in the graph asks at most `d` neighbours (`d` the
//!   topology's largest degree), and each false router at most `d - 1` more, so a path of `L`
//!   routers brings in expected false routers at most `L d P / (1 - (d - 1) P)`, small when
//!   `d P` is. Each router's table has its own seed, so its false positives are independent
//!   of its neighbours' (with one seed, routers that carried the same traffic would share
//!   them). The exact expectation, the sum of each asked router's measured rate, is checked
//!   too.
//! * **Memory per router per minute**: each table is provisioned for the router's peak load
//!   per window at the target rate, about 1.44 log2(1/P) bits a digest; a minute is
//!   `60 s / window` tables. The paper puts this at a small fraction of the link's capacity.
//!
//! The topology is generated: a random tree of routers of degree at most `d` plus random
//! extra links (alternate paths), every router with hosts, shortest-path routing. Background
//! packets go between random hosts; the attack packets are single packets hidden among them.
//!
//! ```text
//! cargo run --release --example traceback -- --routers 1000 --degree 8 --packets 250000 --fpr 0.01
//! ```

use std::collections::VecDeque;
use std::process::ExitCode;

use blockbloom::ClassicBloomFilter;

/// Bytes a packet's digest covers: the 20-byte IPv4 header with its mutable fields masked,
/// and the first 8 bytes of the payload.
const DIGEST_BYTES: usize = 28;
/// No router: the victim's router was reached from no router.
const NONE: u32 = u32::MAX;

#[derive(Clone, Debug)]
struct Config {
    routers: usize,
    /// The largest number of links a router has.
    degree: usize,
    windows: usize,
    /// Background packets per window.
    packets: u64,
    window_ms: u64,
    attacks: usize,
    fpr: f64,
    seed: u64,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            routers: 1000,
            degree: 8,
            windows: 4,
            packets: 250_000,
            window_ms: 1000,
            attacks: 1000,
            fpr: 0.01,
            seed: 0x7370_6965,
        }
    }
}

/// SplitMix64, seeded: the same network and traffic on every run.
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
}

/// Routers, links and shortest-path routes.
struct Network {
    adj: Vec<Vec<u32>>,
    /// `toward[t][v]`: the next router from `v` on the way to `t`.
    toward: Vec<Vec<u32>>,
}

impl Network {
    fn generate(n: usize, d: usize, rng: &mut Rng) -> Network {
        let mut adj: Vec<Vec<u32>> = vec![Vec::new(); n];
        let link = |adj: &mut Vec<Vec<u32>>, a: usize, b: usize| {
            adj[a].push(b as u32);
            adj[b].push(a as u32);
        };
        // A random tree (connected), no router above degree d...
        for i in 1..n {
            loop {
                let j = rng.below(i as u64) as usize;
                if adj[j].len() < d {
                    link(&mut adj, i, j);
                    break;
                }
            }
        }
        // ...plus links that make alternate paths, as a real topology has.
        for _ in 0..n {
            let (a, b) = (rng.below(n as u64) as usize, rng.below(n as u64) as usize);
            if a != b && adj[a].len() < d && adj[b].len() < d && !adj[a].contains(&(b as u32)) {
                link(&mut adj, a, b);
            }
        }
        let toward = (0..n)
            .map(|t| {
                // Breadth-first from t: each router's parent is its next hop toward t.
                let mut next = vec![NONE; n];
                next[t] = t as u32;
                let mut queue = VecDeque::from([t]);
                while let Some(v) = queue.pop_front() {
                    for &u in &adj[v] {
                        if next[u as usize] == NONE {
                            next[u as usize] = v as u32;
                            queue.push_back(u as usize);
                        }
                    }
                }
                next
            })
            .collect();
        Network { adj, toward }
    }

    /// The routers a packet from `s` to `t` crosses, `s` and `t` included.
    fn path(&self, s: u32, t: u32) -> Vec<u32> {
        let mut p = vec![s];
        let mut v = s;
        while v != t {
            v = self.toward[t as usize][v as usize];
            p.push(v);
        }
        p
    }

    fn max_degree(&self) -> usize {
        self.adj.iter().map(Vec::len).max().unwrap_or(0)
    }
}

/// A packet: where it enters and leaves the network, and the bytes its digest covers.
#[derive(Clone)]
struct Packet {
    from: u32,
    to: u32,
    digest: [u8; DIGEST_BYTES],
}

impl Packet {
    fn random(routers: usize, rng: &mut Rng) -> Packet {
        let from = rng.below(routers as u64) as u32;
        let to = (from + 1 + rng.below(routers as u64 - 1) as u32) % routers as u32;
        let host = |r: u32, h: u64| 0x0a00_0000 | (r << 8) | (1 + h as u32 % 254);
        let mut d = [0u8; DIGEST_BYTES];
        d[0] = 0x45; // version 4, 20-byte header; d[1] (TOS) masked
        d[2..4].copy_from_slice(&(40 + rng.below(1461) as u16).to_be_bytes()); // total length
        d[4..6].copy_from_slice(&(rng.next() as u16).to_be_bytes()); // identification
        // d[6..8] flags and fragment offset: 0; d[8] TTL masked
        d[9] = if rng.below(5) == 0 { 17 } else { 6 };
        // d[10..12] checksum masked
        d[12..16].copy_from_slice(&host(from, rng.next()).to_be_bytes());
        d[16..20].copy_from_slice(&host(to, rng.next()).to_be_bytes());
        d[20..28].copy_from_slice(&rng.next().to_be_bytes()); // ports, sequence number...
        Packet {
            from,
            to,
            digest: d,
        }
    }
}

/// The attack graph of one traced packet.
struct Trace {
    /// Routers that said yes, and for each the router it was reached from.
    parent: Vec<u32>,
    /// Links `(upstream, downstream)` over which a router said yes.
    edges: Vec<(u32, u32)>,
    /// Routers asked (distinct) that are not on the true path, and the sum of their tables'
    /// false-positive rates: the expected number of false routers, given whom the flood asked.
    off_path_asked: usize,
    off_path_expected: f64,
}

/// Reverse-path flooding from the victim's router over the routers' tables of the packet's
/// window.
fn trace(
    net: &Network,
    tables: &[ClassicBloomFilter],
    victim: u32,
    digest: &[u8],
    on_path: &[bool],
) -> Trace {
    let n = net.adj.len();
    let saw = |r: u32| tables[r as usize].contains_bytes(digest);
    let mut parent = vec![NONE; n];
    let mut in_graph = vec![false; n];
    let mut asked = vec![false; n];
    let (mut edges, mut off_path_asked, mut off_path_expected) = (Vec::new(), 0, 0.0);
    let mut queue = VecDeque::new();
    asked[victim as usize] = true;
    if saw(victim) {
        in_graph[victim as usize] = true;
        queue.push_back(victim);
    }
    while let Some(x) = queue.pop_front() {
        for &nb in &net.adj[x as usize] {
            if nb == parent[x as usize] {
                continue;
            }
            if !asked[nb as usize] {
                asked[nb as usize] = true;
                if !on_path[nb as usize] {
                    off_path_asked += 1;
                    off_path_expected += tables[nb as usize].fill_fpr();
                }
            }
            if saw(nb) {
                edges.push((nb, x));
                if !in_graph[nb as usize] {
                    in_graph[nb as usize] = true;
                    parent[nb as usize] = x;
                    queue.push_back(nb);
                }
            }
        }
    }
    // The victim's router has no parent; mark it as in the graph all the same.
    if in_graph[victim as usize] {
        parent[victim as usize] = victim;
    }
    Trace {
        parent,
        edges,
        off_path_asked,
        off_path_expected,
    }
}

#[derive(Debug, Default)]
struct Report {
    routers: usize,
    max_degree: usize,
    mean_degree: f64,
    probes: u32,
    bits_per_digest: f64,
    mean_bytes_per_minute: f64,
    max_bytes_per_minute: f64,
    busiest_packets_per_second: f64,
    traces: usize,
    /// Traces whose attack graph holds every link of the true path.
    true_path_found: usize,
    true_path_routers: usize,
    /// Routers in the attack graphs that are not on the true paths, and links not on them.
    false_routers: usize,
    false_links: usize,
    /// Sum over traces of `L d P / (1 - (d - 1) P)`, `P` the window's largest table rate.
    false_router_bound: f64,
    off_path_asked: usize,
    off_path_expected: f64,
    /// A trace for display: the first with a false branch.
    example: Option<Example>,
}

/// One traced packet, for display.
#[derive(Debug)]
struct Example {
    true_path: Vec<u32>,
    /// From the source, each router's parent in the attack graph, to the victim's router.
    found_path: Vec<u32>,
    false_links: Vec<(u32, u32)>,
}

fn run(cfg: &Config) -> Result<Report, blockbloom::Error> {
    let mut rng = Rng(cfg.seed);
    let net = Network::generate(cfg.routers, cfg.degree, &mut rng);
    let n = cfg.routers;
    let d = net.max_degree();

    // The traffic of each window, regenerated from its own seed: once to size the tables,
    // once to fill them. Attack packets go out in window `a % windows`.
    let attacks: Vec<(usize, Packet)> = (0..cfg.attacks)
        .map(|a| (a % cfg.windows, Packet::random(n, &mut rng)))
        .collect();
    let window = |w: usize| {
        let mut traffic = Rng(cfg.seed ^ (0x5749_4e44 << 32) ^ w as u64);
        let background = (0..cfg.packets).map(move |_| Packet::random(n, &mut traffic));
        let attack = attacks
            .iter()
            .filter(move |a| a.0 == w)
            .map(|a| a.1.clone());
        background.chain(attack)
    };
    // Packets through each router in its busiest window.
    let mut peak = vec![1u64; n];
    for w in 0..cfg.windows {
        let mut load = vec![0u64; n];
        for p in window(w) {
            for r in net.path(p.from, p.to) {
                load[r as usize] += 1;
            }
        }
        peak.iter_mut()
            .zip(&load)
            .for_each(|(p, &l)| *p = (*p).max(l));
    }

    // Tables by window, then router: each provisioned for the router's peak, with its own seed.
    let mut tables: Vec<Vec<ClassicBloomFilter>> = Vec::with_capacity(cfg.windows);
    for w in 0..cfg.windows {
        let mut routers = Vec::with_capacity(n);
        for (r, &peak) in peak.iter().enumerate() {
            let design = ClassicBloomFilter::with_capacity(peak, cfg.fpr)?;
            let seed = Rng(cfg.seed ^ ((r as u64) << 24) ^ w as u64).next();
            routers.push(ClassicBloomFilter::with_seed(
                design.num_bits(),
                design.probes(),
                seed,
            )?);
        }
        tables.push(routers);
    }
    for (w, routers) in tables.iter_mut().enumerate() {
        for p in window(w) {
            for r in net.path(p.from, p.to) {
                routers[r as usize].insert_bytes(&p.digest);
            }
        }
    }

    let minute = 60_000.0 / cfg.window_ms as f64;
    let bytes_per_minute: Vec<f64> = tables[0]
        .iter()
        .map(|t| t.size_in_bytes() as f64 * minute)
        .collect();
    let busiest = (0..n).max_by_key(|&r| peak[r]).unwrap_or(0);
    let mut report = Report {
        routers: n,
        max_degree: d,
        mean_degree: net.adj.iter().map(Vec::len).sum::<usize>() as f64 / n as f64,
        probes: tables[0][busiest].probes(),
        bits_per_digest: tables[0][busiest].num_bits() as f64 / peak[busiest] as f64,
        mean_bytes_per_minute: bytes_per_minute.iter().sum::<f64>() / n as f64,
        max_bytes_per_minute: bytes_per_minute.iter().copied().fold(0.0, f64::max),
        busiest_packets_per_second: peak[busiest] as f64 * 1000.0 / cfg.window_ms as f64,
        ..Report::default()
    };

    // The largest false-positive rate of any table in each window, for the bound.
    let worst: Vec<f64> = (tables.iter())
        .map(|routers| routers.iter().map(|t| t.fill_fpr()).fold(0.0, f64::max))
        .collect();
    for (w, p) in &attacks {
        let path = net.path(p.from, p.to);
        let mut on_path = vec![false; n];
        for &r in &path {
            on_path[r as usize] = true;
        }
        let t = trace(&net, &tables[*w], p.to, &p.digest, &on_path);
        let true_links: Vec<(u32, u32)> = path.windows(2).map(|l| (l[0], l[1])).collect();
        report.traces += 1;
        if true_links.iter().all(|l| t.edges.contains(l)) && t.parent[p.from as usize] != NONE {
            report.true_path_found += 1;
        }
        report.true_path_routers += path.len();
        report.false_routers += (0..n)
            .filter(|&r| t.parent[r] != NONE && !on_path[r])
            .count();
        let false_links: Vec<(u32, u32)> = t
            .edges
            .iter()
            .copied()
            .filter(|l| !true_links.contains(l))
            .collect();
        report.false_links += false_links.len();
        let pw = worst[*w];
        report.false_router_bound +=
            path.len() as f64 * d as f64 * pw / (1.0 - (d as f64 - 1.0) * pw).max(1e-9);
        report.off_path_asked += t.off_path_asked;
        report.off_path_expected += t.off_path_expected;
        // Show the first trace with a false branch (or the first trace, if none has one).
        let show = match &report.example {
            None => true,
            Some(e) => e.false_links.is_empty() && !false_links.is_empty(),
        };
        if show {
            // The found path: parents from the source back to the victim's router.
            let mut found = vec![p.from];
            let mut v = p.from;
            while t.parent[v as usize] != NONE && t.parent[v as usize] != v {
                v = t.parent[v as usize];
                found.push(v);
            }
            report.example = Some(Example {
                true_path: path.clone(),
                found_path: found,
                false_links,
            });
        }
    }
    Ok(report)
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
            "--routers" => cfg.routers = int()? as usize,
            "--degree" => cfg.degree = int()? as usize,
            "--windows" => cfg.windows = int()? as usize,
            "--packets" => cfg.packets = int()?,
            "--window-ms" => cfg.window_ms = int()?,
            "--attacks" => cfg.attacks = int()? as usize,
            "--seed" => cfg.seed = int()?,
            "--fpr" => cfg.fpr = value.parse().map_err(|e| format!("--fpr {value}: {e}"))?,
            _ => return Err(format!("unknown argument {flag}")),
        }
    }
    if cfg.routers < 2 || cfg.routers > 1 << 16 || cfg.degree < 2 {
        return Err("--routers must be 2 to 65536 and --degree at least 2".into());
    }
    if cfg.windows == 0 || cfg.window_ms == 0 {
        return Err("--windows and --window-ms must be at least 1".into());
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
                "usage: traceback [--routers N] [--degree D] [--windows W] [--packets N] \
                 [--window-ms MS] [--attacks A] [--fpr P] [--seed S]"
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
    let names = |p: &[u32]| {
        p.iter()
            .map(|r| format!("R{r}"))
            .collect::<Vec<_>>()
            .join(" -> ")
    };
    println!(
        "traceback: {} routers (degree at most {}, mean {:.2}), {} windows of {} ms, {} \
         background packets a window between random hosts, {} attack packets",
        r.routers, r.max_degree, r.mean_degree, cfg.windows, cfg.window_ms, cfg.packets, r.traces
    );
    println!(
        "digest tables: one ClassicBloomFilter per router per window, provisioned for the \
         router's peak window at {} ({:.2} bits per digest, k = {})",
        cfg.fpr, r.bits_per_digest, r.probes
    );
    println!(
        "  memory per router per minute: mean {:.1} KiB, busiest router {:.1} KiB ({:.0} \
         packets/s; at 1000-byte packets the digests are {:.3}% of the bits forwarded)",
        r.mean_bytes_per_minute / 1024.0,
        r.max_bytes_per_minute / 1024.0,
        r.busiest_packets_per_second,
        100.0 * r.bits_per_digest / 8000.0
    );
    // The same digests at a 10 Gb/s link's full rate of 1000-byte packets (1.25 M packets/s).
    println!(
        "  at 10 Gb/s of 1000-byte packets: {:.1} MiB per link per minute",
        1.25e6 * 60.0 * r.bits_per_digest / 8.0 / (1 << 20) as f64
    );
    if let Some(e) = &r.example {
        println!("an attack packet with a false branch:");
        println!("  true path:      {}", names(&e.true_path));
        println!("  found path:     {}", names(&e.found_path));
        let branches: Vec<String> = (e.false_links)
            .iter()
            .map(|(a, b)| format!("R{a} -> R{b}"))
            .collect();
        println!(
            "  false branches: {}",
            if branches.is_empty() {
                "none".to_string()
            } else {
                branches.join(", ")
            }
        );
    }
    println!(
        "{} traces: true path in the attack graph {} times; {} true-path routers, {} false \
         routers, {} false links",
        r.traces, r.true_path_found, r.true_path_routers, r.false_routers, r.false_links
    );
    println!(
        "  false routers: {} against {:.1} expected from the {} off-path routers asked (their \
         tables' fill), and the paper's bound L d P / (1 - (d - 1) P) summed: {:.1}",
        r.false_routers, r.off_path_expected, r.off_path_asked, r.false_router_bound
    );
    if r.true_path_found == r.traces {
        ExitCode::SUCCESS
    } else {
        eprintln!("FAILED: a true path was not found");
        ExitCode::FAILURE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small(fpr: f64) -> Config {
        Config {
            routers: 60,
            degree: 6,
            windows: 2,
            packets: 5_000,
            window_ms: 1000,
            attacks: 300,
            fpr,
            seed: 11,
        }
    }

    /// Within six standard deviations (and some slack) of a sum of rare independent events.
    fn near(count: usize, mean: f64) -> bool {
        (count as f64 - mean).abs() <= 6.0 * mean.sqrt() + 3.0
    }

    fn check(r: &Report) {
        assert_eq!(r.traces, 300);
        assert_eq!(r.true_path_found, r.traces, "a true path was not found");
        assert!(r.max_degree <= 6);
        assert!(
            (r.false_routers as f64)
                <= r.false_router_bound + 6.0 * r.false_router_bound.sqrt() + 3.0,
            "{} false routers against a bound of {:.1}",
            r.false_routers,
            r.false_router_bound
        );
        assert!(
            near(r.false_routers, r.off_path_expected),
            "{} false routers, {:.1} expected",
            r.false_routers,
            r.off_path_expected
        );
    }

    #[test]
    fn every_true_path_is_found_and_false_branches_stay_within_the_bound() {
        let r = run(&small(0.05)).unwrap();
        check(&r);
        // At 5% and degree 6 false branches do occur.
        assert!(r.false_routers > 20, "{}", r.false_routers);
    }

    #[test]
    fn a_lower_rate_gives_fewer_false_branches() {
        let loose = run(&small(0.05)).unwrap();
        let tight = run(&small(0.001)).unwrap();
        check(&tight);
        assert!(tight.false_routers * 5 < loose.false_routers.max(1));
        assert!(tight.mean_bytes_per_minute > 2.0 * loose.mean_bytes_per_minute);
    }

    #[test]
    fn routes_are_shortest_paths_over_links() {
        let net = Network::generate(50, 4, &mut Rng(3));
        assert!(net.max_degree() <= 4);
        for s in 0..50 {
            for t in 0..50 {
                let p = net.path(s, t);
                assert_eq!((p[0], *p.last().unwrap()), (s, t));
                assert!(p.windows(2).all(|l| net.adj[l[0] as usize].contains(&l[1])));
                // Shortest paths: the route back is as long.
                assert_eq!(net.path(t, s).len(), p.len());
            }
        }
    }
}
