//! Summary cache: cooperating web proxies that tell each other what they cache with Bloom
//! filters, instead of asking every peer on every miss.
//!
//! After L. Fan, P. Cao, J. Almeida and A. Z. Broder, "Summary Cache: A Scalable Wide-Area
//! Web Cache Sharing Protocol", ACM SIGCOMM 1998 (extended in IEEE/ACM Transactions on
//! Networking 8(3), 2000). With ICP, a proxy that misses locally queries all its peers. In
//! summary cache each proxy keeps a counting Bloom filter of its own cache (a document's
//! counters go up when it is cached and down when it is evicted) and publishes the plain
//! filter of its nonzero counters, the summary, to its peers; on a local miss a proxy queries
//! only the peers whose summary may hold the document. Summaries are not republished on every
//! change, but when the documents cached since the last publication reach a threshold, a
//! percentage of the cache (the paper recommends 1% to 10%).
//!
//! Here each proxy's `CountingBloomFilter` (4-bit counters; removals on eviction) gives its
//! summary through `to_bloom()`, which is sent in the compressed transfer form
//! (`to_compressed_bytes`, zstd: the projection of 4-bit counters is a sparse bit array, which
//! is what compresses) and decoded by the peers with `from_compressed_bytes_limited`. Caches
//! are LRU; requests come from a Zipf-like popularity (web requests follow one with an
//! exponent below 1), round robin over the proxies; a document fetched from a peer or from
//! the origin is cached by the proxy that asked for it (simple cache sharing, the scheme ICP
//! implements). The example prints:
//!
//! * **false hits**: a peer queried because of its summary did not have the document, either
//!   because the summary is stale (the peer evicted it since publishing) or because of a Bloom
//!   false positive (it never was in the summary's set);
//! * **missed remote hits** (the paper's false misses): a peer had the document but its
//!   summary said no. A counting filter has no false negatives, so every one is a document
//!   the peer cached after its last publication; the example checks that for each;
//! * **bytes exchanged**: the compressed summaries sent to every peer, against the same
//!   summaries uncompressed and against the paper's alternative of sending only the changed
//!   positions (4 bytes each); and the query messages against ICP's.
//!
//! ```text
//! cargo run --release --example summary_cache --features compress -- --proxies 8 --threshold 0.01
//! ```

use std::collections::{BTreeMap, HashMap, HashSet};
use std::process::ExitCode;

use blockbloom::{BloomFilter, CountingBloomFilter};

/// The most bytes a decoded summary may declare: far above any filter here, it only bounds
/// what a faulty peer could make a proxy allocate.
const SUMMARY_LIMIT: u64 = 256 << 20;

#[derive(Clone, Debug)]
struct Config {
    proxies: usize,
    /// Documents each proxy's cache holds.
    cache_docs: usize,
    /// Distinct documents requested from.
    documents: u64,
    requests: u64,
    /// The popularity exponent: request probability of the i-th document ~ 1 / i^zipf.
    zipf: f64,
    /// Publish a summary when the documents cached since the last one reach this fraction
    /// of the cached documents (0: after every change).
    threshold: f64,
    fpr: f64,
    seed: u64,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            proxies: 8,
            cache_docs: 20_000,
            documents: 1_000_000,
            requests: 2_000_000,
            zipf: 0.8,
            threshold: 0.01,
            fpr: 0.01,
            seed: 0x7375_6d6d,
        }
    }
}

#[derive(Debug, Default)]
struct Report {
    requests: u64,
    local_hits: u64,
    remote_hits: u64,
    /// Requests a peer could have served but no summary pointed to.
    missed_remote_hits: u64,
    /// Missed remote hits not explained by staleness (the holder cached the document before
    /// its last publication): must be zero, a counting filter has no false negatives.
    unexplained_misses: u64,
    false_hits: u64,
    /// False hits on a document the peer evicted after publishing.
    stale_false_hits: u64,
    /// False hits on a document not in the published set: Bloom false positives...
    bloom_false_hits: u64,
    /// ...out of this many summary checks of documents not in the published set...
    checks_not_in_summary: u64,
    /// ...at most this rate each (the summary filter's model at a full cache).
    summary_fpr: f64,
    /// Summary checks that said no for a document in the published set (must be zero).
    summary_false_negatives: u64,
    /// Queries sent to peers (summary cache) and that ICP would send (every peer, every
    /// local miss).
    queries: u64,
    icp_queries: u64,
    publications: u64,
    /// Summary bytes sent (to every peer), compressed and as the plain encoding.
    summary_bytes: u64,
    summary_bytes_uncompressed: u64,
    /// The paper's alternative: only the summary positions that changed since the last
    /// publication, as 32-bit indices (to every peer).
    delta_bytes: u64,
    /// Published summaries that decoded to exactly `to_bloom()` of the counting filter.
    summaries_exact: u64,
    /// The counting filter's memory and the summary's positions per cached document.
    counting_bytes: usize,
    summary_positions_per_doc: f64,
}

impl Report {
    /// The hits with perfect knowledge of the peers' caches (what ICP finds).
    fn ideal_hits(&self) -> u64 {
        self.local_hits + self.remote_hits + self.missed_remote_hits
    }
}

/// SplitMix64, seeded: the same request stream on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Document ranks drawn from the Zipf-like distribution, by inverting its CDF.
struct Zipf {
    cdf: Vec<f64>,
}

impl Zipf {
    fn new(n: u64, s: f64) -> Zipf {
        let mut total = 0.0;
        let mut cdf: Vec<f64> = (1..=n)
            .map(|i| {
                total += 1.0 / (i as f64).powf(s);
                total
            })
            .collect();
        cdf.iter_mut().for_each(|c| *c /= total);
        Zipf { cdf }
    }

    fn sample(&self, rng: &mut Rng) -> u64 {
        let u = rng.unit();
        self.cdf.partition_point(|&c| c < u).min(self.cdf.len() - 1) as u64
    }
}

/// A document's identity, as a proxy would take it from the URL's hash.
fn document(rank: u64, seed: u64) -> u64 {
    Rng(seed ^ rank.wrapping_mul(0x2545_f491_4f6c_dd1d)).next()
}

/// A cached document: when it was last used, and the proxy's publication count when it was
/// cached (equal to the current count: cached after the last publication).
struct Entry {
    last_use: u64,
    epoch: u64,
}

struct Proxy {
    capacity: usize,
    entries: HashMap<u64, Entry>,
    /// Last use -> document, for LRU eviction.
    by_use: BTreeMap<u64, u64>,
    counting: CountingBloomFilter,
    /// Publications so far.
    epoch: u64,
    /// Documents cached since the last publication.
    new_docs: usize,
    /// Documents of the published set evicted since.
    gone: HashSet<u64>,
    /// The summary as the peers decoded it.
    summary: BloomFilter,
}

impl Proxy {
    fn new(cfg: &Config) -> Result<Proxy, blockbloom::Error> {
        let counting = CountingBloomFilter::with_capacity(cfg.cache_docs as u64, cfg.fpr)?;
        let summary = counting.to_bloom();
        Ok(Proxy {
            capacity: cfg.cache_docs,
            entries: HashMap::new(),
            by_use: BTreeMap::new(),
            counting,
            epoch: 0,
            new_docs: 0,
            gone: HashSet::new(),
            summary,
        })
    }

    /// A request for a cached document: a hit, which refreshes its LRU position.
    fn hit(&mut self, doc: u64, now: u64) -> bool {
        match self.entries.get_mut(&doc) {
            Some(e) => {
                self.by_use.remove(&e.last_use);
                e.last_use = now;
                self.by_use.insert(now, doc);
                true
            }
            None => false,
        }
    }

    fn has(&self, doc: u64) -> bool {
        self.entries.contains_key(&doc)
    }

    /// Whether `doc` was cached when the current summary was published.
    fn published(&self, doc: u64) -> bool {
        self.gone.contains(&doc) || self.entries.get(&doc).is_some_and(|e| e.epoch < self.epoch)
    }

    /// Caches `doc`, evicting the least recently used document when full; both go through
    /// the counting filter.
    fn cache(&mut self, doc: u64, now: u64) {
        if self.entries.len() == self.capacity {
            let (_, victim) = self.by_use.pop_first().expect("a full cache has entries");
            let e = self.entries.remove(&victim).expect("indexed");
            self.counting
                .remove(&victim)
                .expect("a cached document is in its counting filter");
            if e.epoch < self.epoch {
                self.gone.insert(victim);
            }
        }
        self.entries.insert(
            doc,
            Entry {
                last_use: now,
                epoch: self.epoch,
            },
        );
        self.by_use.insert(now, doc);
        self.counting.insert(&doc);
        self.new_docs += 1;
    }

    fn due(&self, threshold: f64) -> bool {
        let need = (threshold * self.entries.len() as f64).ceil().max(1.0);
        self.new_docs as f64 >= need
    }

    /// Publishes the summary: the counting filter's nonzero counters as a plain filter,
    /// compressed. Returns what was sent to one peer.
    fn publish(&mut self) -> Result<Published, blockbloom::Error> {
        let plain = self.counting.to_bloom();
        let wire = plain.to_compressed_bytes()?;
        // A projected counter sets all its bits, so changed bits / width = changed positions.
        let changed_bits: u64 = (plain.blocks().iter().flat_map(|b| b.0))
            .zip(self.summary.blocks().iter().flat_map(|b| b.0))
            .map(|(a, b)| (a ^ b).count_ones() as u64)
            .sum();
        let changed = changed_bits / self.counting.counter_bits().bits() as u64;
        // What the peers hold is what they decode.
        self.summary = BloomFilter::from_compressed_bytes_limited(&wire, SUMMARY_LIMIT)?;
        self.epoch += 1;
        self.new_docs = 0;
        self.gone.clear();
        Ok(Published {
            bytes: wire.len() as u64,
            uncompressed: plain.encoded_len() as u64,
            delta: 4 * changed,
            exact: self.summary == plain,
        })
    }
}

/// One publication, as one peer receives it.
struct Published {
    /// The compressed summary...
    bytes: u64,
    /// ...its plain encoding...
    uncompressed: u64,
    /// ...and a delta of the changed positions.
    delta: u64,
    /// The decoded summary equals the counting filter's projection.
    exact: bool,
}

impl Report {
    fn sent(&mut self, p: Published, peers: u64) {
        self.publications += 1;
        self.summary_bytes += p.bytes * peers;
        self.summary_bytes_uncompressed += p.uncompressed * peers;
        self.delta_bytes += p.delta * peers;
        self.summaries_exact += p.exact as u64;
    }
}

fn run(cfg: &Config) -> Result<Report, blockbloom::Error> {
    let zipf = Zipf::new(cfg.documents, cfg.zipf);
    let mut rng = Rng(cfg.seed);
    let mut proxies = (0..cfg.proxies)
        .map(|_| Proxy::new(cfg))
        .collect::<Result<Vec<_>, _>>()?;
    let peers = cfg.proxies as u64 - 1;
    let mut r = Report {
        counting_bytes: proxies[0].counting.size_in_bytes(),
        summary_positions_per_doc: proxies[0].counting.num_blocks() as f64 * 512.0
            / proxies[0].counting.counter_bits().bits() as f64
            / cfg.cache_docs as f64,
        summary_fpr: proxies[0].counting.model_fpr(cfg.cache_docs as u64),
        ..Report::default()
    };
    // Every proxy starts by publishing its (empty) summary.
    for p in &mut proxies {
        r.sent(p.publish()?, peers);
    }

    for now in 0..cfg.requests {
        let p = (now % cfg.proxies as u64) as usize;
        let doc = document(zipf.sample(&mut rng), cfg.seed);
        r.requests += 1;
        if proxies[p].hit(doc, now) {
            r.local_hits += 1;
            continue;
        }
        r.icp_queries += peers;
        let mut served = false;
        for i in 1..cfg.proxies {
            let q = &mut proxies[(p + i) % cfg.proxies];
            let in_summary = q.summary.contains(&doc);
            let published = q.published(doc);
            if !published {
                r.checks_not_in_summary += 1;
            }
            if !in_summary {
                r.summary_false_negatives += published as u64;
                continue;
            }
            r.queries += 1;
            if q.hit(doc, now) {
                r.remote_hits += 1;
                served = true;
                break;
            }
            r.false_hits += 1;
            if published {
                r.stale_false_hits += 1;
            } else {
                r.bloom_false_hits += 1;
            }
        }
        if !served {
            let holders: Vec<&Proxy> = proxies.iter().filter(|q| q.has(doc)).collect();
            if !holders.is_empty() {
                r.missed_remote_hits += 1;
                // Explained by staleness when every holder cached it after publishing.
                if holders.iter().any(|q| q.published(doc)) {
                    r.unexplained_misses += 1;
                }
            }
        }
        let me = &mut proxies[p];
        me.cache(doc, now);
        if me.due(cfg.threshold) {
            r.sent(me.publish()?, peers);
        }
    }
    Ok(r)
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
        let float = || {
            value
                .parse::<f64>()
                .map_err(|e| format!("{flag} {value}: {e}"))
        };
        match flag.as_str() {
            "--proxies" => cfg.proxies = int()? as usize,
            "--cache" => cfg.cache_docs = int()? as usize,
            "--documents" => cfg.documents = int()?,
            "--requests" => cfg.requests = int()?,
            "--seed" => cfg.seed = int()?,
            "--zipf" => cfg.zipf = float()?,
            "--threshold" => cfg.threshold = float()?,
            "--fpr" => cfg.fpr = float()?,
            _ => return Err(format!("unknown argument {flag}")),
        }
    }
    if cfg.proxies < 2 || cfg.cache_docs == 0 || cfg.documents == 0 {
        return Err("--proxies must be at least 2, --cache and --documents at least 1".into());
    }
    if !(cfg.threshold >= 0.0 && cfg.threshold <= 1.0) {
        return Err("--threshold must be in [0, 1]".into());
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
                "usage: summary_cache [--proxies N] [--cache DOCS] [--documents N] \
                 [--requests N] [--zipf S] [--threshold F] [--fpr P] [--seed S]"
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
    let per = |x: u64| 100.0 * x as f64 / r.requests as f64;
    println!(
        "summary_cache: {} proxies, LRU caches of {} documents, {} requests over {} documents \
         (Zipf {}), summaries republished at {}% new documents",
        cfg.proxies,
        cfg.cache_docs,
        r.requests,
        cfg.documents,
        cfg.zipf,
        100.0 * cfg.threshold
    );
    println!(
        "  counting filter {:.1} KiB per proxy (4-bit counters, {:.1} positions per document, \
         summary FPR {:.2}% at a full cache)",
        r.counting_bytes as f64 / 1024.0,
        r.summary_positions_per_doc,
        100.0 * r.summary_fpr
    );
    println!(
        "  hits: local {:.2}%, remote {:.2}%, total {:.2}% (ICP, knowing every cache: {:.2}%)",
        per(r.local_hits),
        per(r.remote_hits),
        per(r.local_hits + r.remote_hits),
        per(r.ideal_hits())
    );
    println!(
        "  false hits: {} ({:.3}% of requests): {} stale (evicted since publishing), {} Bloom \
         false positives ({:.3}% of {} checks of unsummarised documents)",
        r.false_hits,
        per(r.false_hits),
        r.stale_false_hits,
        r.bloom_false_hits,
        100.0 * r.bloom_false_hits as f64 / r.checks_not_in_summary.max(1) as f64,
        r.checks_not_in_summary
    );
    println!(
        "  missed remote hits: {} ({:.3}% of requests), all cached after the holder's last \
         summary: {}",
        r.missed_remote_hits,
        per(r.missed_remote_hits),
        if r.unexplained_misses == 0 {
            "yes"
        } else {
            "NO"
        }
    );
    let mib = |b: u64| b as f64 / (1 << 20) as f64;
    println!(
        "  bytes exchanged: {} summaries, {:.1} MiB compressed to all peers ({:.0} bytes per \
         request), {:.1} MiB uncompressed ({:.1}x)",
        r.publications,
        mib(r.summary_bytes),
        r.summary_bytes as f64 / r.requests as f64,
        mib(r.summary_bytes_uncompressed),
        r.summary_bytes_uncompressed as f64 / r.summary_bytes.max(1) as f64
    );
    println!(
        "  (as deltas of the changed summary positions, 4 bytes each, the paper's alternative: \
         {:.1} MiB, {:.0} bytes per request)",
        mib(r.delta_bytes),
        r.delta_bytes as f64 / r.requests as f64
    );
    println!(
        "  query messages: {} ({:.3} per request) against ICP's {} ({:.2} per request, {:.0}x)",
        r.queries,
        r.queries as f64 / r.requests as f64,
        r.icp_queries,
        r.icp_queries as f64 / r.requests as f64,
        r.icp_queries as f64 / r.queries.max(1) as f64
    );
    if r.unexplained_misses == 0 && r.summary_false_negatives == 0 {
        ExitCode::SUCCESS
    } else {
        eprintln!("FAILED: a summary missed a document it was published with");
        ExitCode::FAILURE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small(threshold: f64) -> Config {
        Config {
            proxies: 4,
            cache_docs: 500,
            documents: 20_000,
            requests: 20_000,
            zipf: 0.8,
            threshold,
            fpr: 0.01,
            seed: 5,
        }
    }

    /// What holds at any threshold.
    fn check(r: &Report) {
        assert_eq!(r.summary_false_negatives, 0, "{r:?}");
        assert_eq!(r.unexplained_misses, 0, "{r:?}");
        assert_eq!(
            r.summaries_exact, r.publications,
            "a summary did not round-trip"
        );
        assert_eq!(r.false_hits, r.stale_false_hits + r.bloom_false_hits);
        assert_eq!(r.queries, r.remote_hits + r.false_hits);
        assert!(r.local_hits + r.remote_hits <= r.ideal_hits());
        // Bloom false hits: each check of an unsummarised document at most the summary's
        // rate at a full cache.
        let mean = r.checks_not_in_summary as f64 * r.summary_fpr;
        assert!(
            (r.bloom_false_hits as f64) <= mean + 6.0 * mean.sqrt() + 3.0,
            "{} Bloom false hits in {} checks at {}",
            r.bloom_false_hits,
            r.checks_not_in_summary,
            r.summary_fpr
        );
        assert!(r.summary_bytes > 0 && r.summary_bytes < r.summary_bytes_uncompressed);
        assert!(r.delta_bytes > 0);
        assert!(r.queries < r.icp_queries / 4, "{r:?}");
    }

    #[test]
    fn fresh_summaries_miss_no_remote_hit() {
        let r = run(&small(0.0)).unwrap();
        check(&r);
        // Republished after every change: nothing is stale.
        assert_eq!(r.missed_remote_hits, 0);
        assert_eq!(r.stale_false_hits, 0);
        assert!(r.remote_hits > 0 && r.bloom_false_hits > 0, "{r:?}");
    }

    #[test]
    fn delayed_summaries_miss_only_what_they_have_not_seen() {
        let fresh = run(&small(0.0)).unwrap();
        let delayed = run(&small(0.1)).unwrap();
        check(&delayed);
        // Staleness costs missed remote hits and stale false hits, never a false negative;
        // it saves most of the summary traffic.
        assert!(delayed.missed_remote_hits > 0 && delayed.stale_false_hits > 0);
        assert!(delayed.publications * 10 < fresh.publications);
        assert!(delayed.summary_bytes * 5 < fresh.summary_bytes);
        // Same requests, so the hits a perfect directory finds are about the same.
        assert!(delayed.ideal_hits().abs_diff(fresh.ideal_hits()) < fresh.ideal_hits() / 20);
    }
}
