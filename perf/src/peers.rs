//! The peer crates blockbloom is measured against, each defined once, as its own users
//! configure it; every program, report and bench of `blockbloom-perf` builds its peers here:
//!
//! * **sbbf-rs** (`sbbf-rs-safe` 0.3.2, Parquet's split-block filter: 256-bit blocks, 8
//!   probes): sized by bits per key for the target rate ([`sbbf_bits_per_key`], 11 at 1%) and
//!   fed XXH3-64 hashes of the keys, as its README shows ([`Sbbf`]);
//! * **fastbloom** 0.17 (a classic unblocked filter, one key per call): sized by
//!   `with_false_pos(fpr).expected_items(n)`, with its default hasher (SipHash-1-3,
//!   [`fastbloom_sip`]) and with its fastest, foldhash's `fast::RandomState`
//!   ([`fastbloom_fold`]); the atomic filter the same way ([`atomic_fastbloom_sip`],
//!   [`atomic_fastbloom_fold`]); where a measurement compares at a fixed size, by bits
//!   ([`fastbloom_fold_bits`]);
//! * **parquet's `Sbbf`** (parquet 60): `Sbbf::new_with_ndv_fpp(n, fpr)` and its own XXH64 of
//!   each value, as arrow-rs's writer builds a column's filter ([`parquet_sbbf`]).
//!
//! They plug into `blockbloom-measure`'s single-thread path ([`Subject`], [`SUITE`]) and its
//! concurrent insert ([`SharedFilter`], [`FASTBLOOM_SIP`], [`FASTBLOOM_FOLD`]).

use std::hash::BuildHasher;

use blockbloom_measure::concurrent::{ConcurrentPeer, SharedFilter, shares};
use blockbloom_measure::subject::Subject;
use blockbloom_measure::suite::Peer;
use xxhash_rust::xxh3::xxh3_64;

/// fastbloom with its default hasher (SipHash-1-3, a random seed), sized for `fpr` at `n` keys.
pub type FastSip = fastbloom::BloomFilter;
/// fastbloom with its fastest hasher, foldhash's `fast::RandomState`.
pub type FastFold = fastbloom::BloomFilter<foldhash::fast::RandomState>;
/// fastbloom's atomic filter with its default hasher.
pub type AtomicFastSip = fastbloom::AtomicBloomFilter;
/// fastbloom's atomic filter with foldhash.
pub type AtomicFastFold = fastbloom::AtomicBloomFilter<foldhash::fast::RandomState>;

/// fastbloom sized by fastbloom for `fpr` at `n` keys, its default hasher (SipHash-1-3).
#[inline]
pub fn fastbloom_sip(n: usize, fpr: f64) -> FastSip {
    fastbloom::BloomFilter::with_false_pos(fpr).expected_items(n)
}

/// fastbloom sized by fastbloom for `fpr` at `n` keys, hashed with foldhash (fast variant).
#[inline]
pub fn fastbloom_fold(n: usize, fpr: f64) -> FastFold {
    fastbloom::BloomFilter::with_false_pos(fpr)
        .hasher(foldhash::fast::RandomState::default())
        .expected_items(n)
}

/// fastbloom of exactly `bits` bits with foldhash, for a comparison at one size: `hashes`
/// probes if given (the same `m` and `k` as ours), else the count fastbloom picks for `n` keys.
#[inline]
pub fn fastbloom_fold_bits(bits: usize, hashes: Option<u32>, n: usize) -> FastFold {
    let b =
        fastbloom::BloomFilter::with_num_bits(bits).hasher(foldhash::fast::RandomState::default());
    match hashes {
        Some(k) => b.hashes(k),
        None => b.expected_items(n),
    }
}

/// fastbloom's atomic filter sized for `fpr` at `n` keys, its default hasher.
#[inline]
pub fn atomic_fastbloom_sip(n: usize, fpr: f64) -> AtomicFastSip {
    fastbloom::AtomicBloomFilter::with_false_pos(fpr).expected_items(n)
}

/// fastbloom's atomic filter sized for `fpr` at `n` keys, hashed with foldhash.
#[inline]
pub fn atomic_fastbloom_fold(n: usize, fpr: f64) -> AtomicFastFold {
    fastbloom::AtomicBloomFilter::with_false_pos(fpr)
        .hasher(foldhash::fast::RandomState::default())
        .expected_items(n)
}

/// parquet's `Sbbf` as arrow-rs's writer builds a column's filter: `new_with_ndv_fpp(n, fpr)`
/// (distinct values, target rate); values go in with `insert` and are asked with `check`,
/// which hash them with XXH64 (seed 0) as the Parquet format says.
#[inline]
pub fn parquet_sbbf(n: usize, fpr: f64) -> parquet::bloom_filter::Sbbf {
    parquet::bloom_filter::Sbbf::new_with_ndv_fpp(n as u64, fpr).expect("parquet sizes it")
}

/// fastbloom with its default hasher (SipHash-1-3), in the per-size suite.
pub const FASTBLOOM_SIP_SUITE: Peer = Peer {
    label: "fastbloom (SipHash)",
    build: |n, fpr| {
        (
            "fastbloom 0.17, SipHash-1-3".into(),
            Box::new(FastBloom::siphash(n, fpr)),
        )
    },
};

/// fastbloom hashing with foldhash, in the per-size suite.
pub const FASTBLOOM_FOLD_SUITE: Peer = Peer {
    label: "fastbloom (foldhash)",
    build: |n, fpr| {
        (
            "fastbloom 0.17, foldhash".into(),
            Box::new(FastBloom::foldhash(n, fpr)),
        )
    },
};

/// sbbf-rs-safe with the smallest integer budget that meets the target, in the suite.
pub const SBBF_SUITE: Peer = Peer {
    label: "sbbf-rs-safe",
    build: |n, fpr| {
        let sbbf = Sbbf::new(n, fpr);
        (
            format!("sbbf-rs-safe 0.3.2, XXH3-64, new({}, n)", sbbf.bits_per_key),
            Box::new(sbbf),
        )
    },
};

/// Every peer of the per-size suite (`bench --peers`, `report`), in measuring order.
pub const SUITE: [Peer; 3] = [FASTBLOOM_SIP_SUITE, FASTBLOOM_FOLD_SUITE, SBBF_SUITE];

/// `fastbloom::AtomicBloomFilter` (SipHash-1-3) shared by scoped threads.
pub const FASTBLOOM_SIP: ConcurrentPeer = ConcurrentPeer {
    name: "fastbloom 0.17 AtomicBloomFilter, SipHash-1-3",
    api: "scoped threads, single-key",
    crate_name: "fastbloom",
    build: |n, fpr| Box::new(SharedFastBloom(atomic_fastbloom_sip(n, fpr))),
};

/// `fastbloom::AtomicBloomFilter` (foldhash) shared by scoped threads.
pub const FASTBLOOM_FOLD: ConcurrentPeer = ConcurrentPeer {
    name: "fastbloom 0.17 AtomicBloomFilter, foldhash",
    api: "scoped threads, single-key",
    crate_name: "fastbloom",
    build: |n, fpr| Box::new(SharedFastBloom(atomic_fastbloom_fold(n, fpr))),
};

/// `fastbloom` 0.17 (a classic unblocked filter) with hasher `S`; it has no batch API, so
/// every call is single-key.
pub struct FastBloom<S>(pub fastbloom::BloomFilter<S>);

impl FastBloom<fastbloom::DefaultHasher> {
    /// Sized by fastbloom for `fpr` at `n` keys, default hasher (SipHash-1-3, random seed).
    pub fn siphash(n: usize, fpr: f64) -> Self {
        FastBloom(fastbloom_sip(n, fpr))
    }
}

impl FastBloom<foldhash::fast::RandomState> {
    /// Sized by fastbloom for `fpr` at `n` keys, hashed with foldhash (fast variant).
    pub fn foldhash(n: usize, fpr: f64) -> Self {
        FastBloom(fastbloom_fold(n, fpr))
    }
}

impl<S: BuildHasher> Subject for FastBloom<S> {
    fn clear(&mut self) {
        self.0.clear()
    }

    fn insert(&mut self, keys: &[u64]) {
        for k in keys {
            self.0.insert(k);
        }
    }

    fn count(&self, keys: &[u64]) -> usize {
        keys.iter().filter(|k| self.0.contains(*k)).count()
    }

    fn answer(&self, keys: &[u64], out: &mut [bool]) {
        for (o, k) in out.iter_mut().zip(keys) {
            *o = self.0.contains(k);
        }
    }

    fn size_in_bytes(&self) -> usize {
        self.0.num_bits() / 8
    }

    fn probes(&self) -> u32 {
        self.0.num_hashes()
    }
}

/// `fastbloom::AtomicBloomFilter` with hasher `S`: scoped threads, one key per call.
struct SharedFastBloom<S>(fastbloom::AtomicBloomFilter<S>);

impl<S: BuildHasher + Sync> SharedFilter for SharedFastBloom<S> {
    fn clear(&mut self) {
        self.0.clear()
    }

    fn pass(&self, keys: &[u64], threads: usize) {
        let f = &self.0;
        std::thread::scope(|s| {
            for share in shares(keys, threads) {
                s.spawn(move || {
                    for k in share {
                        f.insert(k);
                    }
                });
            }
        });
    }

    fn contains(&self, key: u64) -> bool {
        self.0.contains(&key)
    }

    fn size_in_bytes(&self) -> usize {
        self.0.num_bits() / 8
    }
}

/// `sbbf-rs-safe` 0.3.2 (Parquet's split-block filter: 256-bit blocks, 8 probes), sized by
/// bits per key for the target rate. It takes hashes, so each key is hashed with XXH3-64 inside
/// the timed loop (its README's `xxh3_64`), as blockbloom hashes its keys.
pub struct Sbbf {
    filter: sbbf_rs_safe::Filter,
    /// The integer bits-per-key budget the filter was created with.
    pub bits_per_key: usize,
}

impl Sbbf {
    /// The smallest integer bits-per-key budget whose model FPR meets `fpr` at `n` keys.
    pub fn new(n: usize, fpr: f64) -> Self {
        Sbbf::with_bits_per_key(sbbf_bits_per_key(n, fpr), n)
    }

    /// `Filter::new(bits_per_key, n)`: for timing a construction, with the budget
    /// ([`sbbf_bits_per_key`]) chosen beforehand, as a user's constant.
    #[inline]
    pub fn with_bits_per_key(bits_per_key: usize, n: usize) -> Self {
        Sbbf {
            filter: sbbf_rs_safe::Filter::new(bits_per_key, n),
            bits_per_key,
        }
    }

    /// Zeroes the filter (its buffer comes from `alloc_zeroed`: this also maps its pages
    /// before timing).
    pub fn reset(&mut self) {
        self.filter.reset()
    }

    /// A filter of exactly `bytes` bytes (a multiple of 32): an 8-bit budget for `bytes`
    /// keys, so `Filter::new` allocates `8 * bytes / 8` bytes.
    pub fn with_bytes(bytes: usize) -> Self {
        Sbbf {
            filter: sbbf_rs_safe::Filter::new(8, bytes),
            bits_per_key: 8,
        }
    }

    /// Inserts a `u64` key (its XXH3-64 of the little-endian bytes).
    #[inline(always)]
    pub fn insert_u64(&mut self, k: u64) {
        self.filter.insert_hash(xxh3_u64(k));
    }

    /// Whether a `u64` key may be in the filter.
    #[inline(always)]
    pub fn contains_u64(&self, k: u64) -> bool {
        self.filter.contains_hash(xxh3_u64(k))
    }

    /// Inserts a byte-string key (its XXH3-64).
    #[inline(always)]
    pub fn insert_bytes(&mut self, k: &[u8]) {
        self.filter.insert_hash(xxh3_64(k));
    }

    /// Whether a byte-string key may be in the filter.
    #[inline(always)]
    pub fn contains_bytes(&self, k: &[u8]) -> bool {
        self.filter.contains_hash(xxh3_64(k))
    }

    /// Whether a key whose XXH3-64 is `hash` may be in the filter: the probe alone, for
    /// measurements that split a call into its hash and its probe.
    #[inline(always)]
    pub fn contains_hash(&self, hash: u64) -> bool {
        self.filter.contains_hash(hash)
    }

    /// The filter's bytes (its size, and the memory a side may touch).
    pub fn as_bytes(&self) -> &[u8] {
        self.filter.as_bytes()
    }
}

/// XXH3-64 of a `u64` key's little-endian bytes: the hash [`Sbbf`] is fed.
#[inline(always)]
pub fn xxh3_u64(k: u64) -> u64 {
    xxh3_64(&k.to_le_bytes())
}

impl Subject for Sbbf {
    fn clear(&mut self) {
        self.reset()
    }

    fn insert(&mut self, keys: &[u64]) {
        for &k in keys {
            self.insert_u64(k);
        }
    }

    fn count(&self, keys: &[u64]) -> usize {
        keys.iter().filter(|&&k| self.contains_u64(k)).count()
    }

    fn answer(&self, keys: &[u64], out: &mut [bool]) {
        for (o, &k) in out.iter_mut().zip(keys) {
            *o = self.contains_u64(k);
        }
    }

    fn size_in_bytes(&self) -> usize {
        self.filter.as_bytes().len()
    }

    fn probes(&self) -> u32 {
        8
    }
}

/// The split-block model: a block of 256 bits is 8 words of 32 bits and each key sets one
/// bit per word, so a block holding `c` keys answers a non-member falsely with probability
/// `(1 - (31/32)^c)^8` exactly; `c` is Poisson with mean keys-per-block.
fn sbbf_fpr(n: usize, blocks: usize) -> f64 {
    let lambda = n as f64 / blocks.max(1) as f64;
    let mut total = 0.0;
    let mut pmf = (-lambda).exp();
    // Summing far past the mean; later terms are negligible.
    let last = (lambda + 12.0 * lambda.sqrt() + 30.0) as usize;
    for c in 0..=last {
        if c > 0 {
            pmf *= lambda / c as f64;
        }
        total += pmf * (1.0 - (31.0f64 / 32.0).powi(c as i32)).powi(8);
    }
    total
}

/// The smallest integer budget `Filter::new` accepts whose model FPR is at most `fpr`.
pub fn sbbf_bits_per_key(n: usize, fpr: f64) -> usize {
    // Filter::new rounds bits_per_key * n / 8 bytes up to whole 32-byte blocks.
    let blocks = |bpk: usize| (bpk * n / 8).div_ceil(32).max(1);
    (1..=64)
        .find(|&bpk| sbbf_fpr(n, blocks(bpk)) <= fpr)
        .unwrap_or(64)
}
