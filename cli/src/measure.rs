//! The one timing path shared by `demo`, `bench` and `report`.
//!
//! Everything measured (each blockbloom kernel, the single-key API, the peer crates) is a
//! [`Subject`], and [`measure`] times every subject with the same code: insert all members,
//! then answer the same mixed lookups, several repetitions each, reporting medians. Hashing
//! is always inside the timed region, so the figures are "u64 key in, answer out".

use std::hint::black_box;
use std::time::Instant;

use blockbloom::BloomFilter;
use xxhash_rust::xxh3::xxh3_64;

use crate::keys::Workload;

/// A filter under test, as the timing loop sees it.
pub trait Subject {
    /// Forgets every key (and touches the memory, so page faults land outside the timing).
    fn clear(&mut self);
    /// Inserts the keys the way this subject's API is meant to be used.
    fn insert(&mut self, keys: &[u64]);
    /// How many of the keys may be present.
    fn count(&self, keys: &[u64]) -> usize;
    /// Each key's answer, for checking the count and measuring the false-positive rate.
    fn answer(&self, keys: &[u64], out: &mut [bool]);
    /// Bytes of filter.
    fn size_in_bytes(&self) -> usize;
    /// Bits set per key.
    fn probes(&self) -> u32;
}

/// A blockbloom filter used through its batch API in calls of `batch` keys, or through the
/// single-key API when `batch == 1`.
pub struct Blocked {
    /// The filter (its kernel decides the batch code path).
    pub filter: BloomFilter,
    /// Keys per `insert_batch`/`count_batch` call; 1 means `insert`/`contains`.
    pub batch: usize,
}

impl Subject for Blocked {
    fn clear(&mut self) {
        self.filter.clear()
    }

    fn insert(&mut self, keys: &[u64]) {
        if self.batch == 1 {
            for k in keys {
                self.filter.insert(k);
            }
        } else {
            for chunk in keys.chunks(self.batch) {
                self.filter.insert_batch(chunk);
            }
        }
    }

    fn count(&self, keys: &[u64]) -> usize {
        if self.batch == 1 {
            keys.iter().filter(|k| self.filter.contains(*k)).count()
        } else {
            keys.chunks(self.batch)
                .map(|c| self.filter.count_batch(c))
                .sum()
        }
    }

    fn answer(&self, keys: &[u64], out: &mut [bool]) {
        if self.batch == 1 {
            for (o, k) in out.iter_mut().zip(keys) {
                *o = self.filter.contains(k);
            }
        } else {
            for (o, k) in out.chunks_mut(self.batch).zip(keys.chunks(self.batch)) {
                self.filter.contains_batch(k, o);
            }
        }
    }

    fn size_in_bytes(&self) -> usize {
        self.filter.size_in_bytes()
    }

    fn probes(&self) -> u32 {
        self.filter.probes()
    }
}

/// `fastbloom` 0.17 (a classic unblocked filter) with hasher `S`; it has no batch API, so
/// every call is single-key.
pub struct FastBloom<S>(pub fastbloom::BloomFilter<S>);

impl FastBloom<fastbloom::DefaultHasher> {
    /// Sized by fastbloom for `fpr` at `n` keys, default hasher (SipHash-1-3, random seed).
    pub fn siphash(n: usize, fpr: f64) -> Self {
        FastBloom(fastbloom::BloomFilter::with_false_pos(fpr).expected_items(n))
    }
}

impl FastBloom<foldhash::fast::RandomState> {
    /// Sized by fastbloom for `fpr` at `n` keys, hashed with foldhash (fast variant).
    pub fn foldhash(n: usize, fpr: f64) -> Self {
        FastBloom(
            fastbloom::BloomFilter::with_false_pos(fpr)
                .hasher(foldhash::fast::RandomState::default())
                .expected_items(n),
        )
    }
}

impl<S: std::hash::BuildHasher> Subject for FastBloom<S> {
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

/// `sbbf-rs-safe` 0.3.2 (Parquet's split-block filter: 256-bit blocks, 8 probes). It takes
/// hashes, so each key is hashed with XXH3-64 inside the timed loop, as blockbloom does.
pub struct Sbbf {
    filter: sbbf_rs_safe::Filter,
    /// The integer bits-per-key budget the filter was created with.
    pub bits_per_key: usize,
}

impl Sbbf {
    /// The smallest integer bits-per-key budget whose model FPR meets `fpr` at `n` keys.
    pub fn new(n: usize, fpr: f64) -> Self {
        let bits_per_key = sbbf_bits_per_key(n, fpr);
        Sbbf {
            filter: sbbf_rs_safe::Filter::new(bits_per_key, n),
            bits_per_key,
        }
    }
}

impl Sbbf {
    /// A filter of exactly `bytes` bytes (a multiple of 32): an 8-bit budget for `bytes`
    /// keys, so `Filter::new` allocates `8 * bytes / 8` bytes.
    pub fn with_bytes(bytes: usize) -> Self {
        Sbbf {
            filter: sbbf_rs_safe::Filter::new(8, bytes),
            bits_per_key: 8,
        }
    }
}

#[inline(always)]
fn xxh3_u64(k: u64) -> u64 {
    xxh3_64(&k.to_le_bytes())
}

impl Subject for Sbbf {
    fn clear(&mut self) {
        self.filter.reset()
    }

    fn insert(&mut self, keys: &[u64]) {
        for &k in keys {
            self.filter.insert_hash(xxh3_u64(k));
        }
    }

    fn count(&self, keys: &[u64]) -> usize {
        keys.iter()
            .filter(|&&k| self.filter.contains_hash(xxh3_u64(k)))
            .count()
    }

    fn answer(&self, keys: &[u64], out: &mut [bool]) {
        for (o, &k) in out.iter_mut().zip(keys) {
            *o = self.filter.contains_hash(xxh3_u64(k));
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

/// Nanoseconds per key of each timed repetition.
#[derive(Debug, Clone, Default)]
pub struct Timing {
    /// One entry per timed sample.
    pub samples: Vec<f64>,
}

impl Timing {
    /// The median sample (the mean of the middle two for an even count).
    pub fn median(&self) -> f64 {
        let mut s = self.samples.clone();
        s.sort_by(f64::total_cmp);
        match s.len() {
            0 => f64::NAN,
            n if n % 2 == 1 => s[n / 2],
            n => (s[n / 2 - 1] + s[n / 2]) / 2.0,
        }
    }

    /// `(max - min) / median`: how noisy the samples were.
    pub fn spread(&self) -> f64 {
        let min = self.samples.iter().copied().fold(f64::INFINITY, f64::min);
        let max = self
            .samples
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max);
        (max - min) / self.median()
    }
}

/// What [`measure`] found for one subject.
#[derive(Debug, Clone)]
pub struct Measurement {
    /// Insert, ns per key.
    pub insert: Timing,
    /// Lookups of the mixed query stream, ns per key.
    pub contains: Timing,
    /// Non-member lookups answered "present".
    pub false_positives: usize,
    /// Non-member lookups made.
    pub non_members: usize,
    /// Member lookups answered "absent" (must be 0).
    pub false_negatives: usize,
    /// Whether the timed count disagreed with the per-key answers (must not).
    pub count_mismatch: bool,
    /// Bytes of filter.
    pub size_in_bytes: usize,
    /// Bits set per key.
    pub probes: u32,
}

impl Measurement {
    /// False positives per non-member lookup.
    pub fn fpr(&self) -> f64 {
        self.false_positives as f64 / self.non_members.max(1) as f64
    }

    /// Half-width of the 95% confidence interval of [`fpr`](Self::fpr) (normal approximation).
    pub fn fpr_ci95(&self) -> f64 {
        let p = self.fpr();
        1.96 * (p * (1.0 - p) / self.non_members.max(1) as f64).sqrt()
    }
}

/// Below this many key-inserts per sample the timer and loop overhead start to show, so
/// small filters repeat the whole insert inside one sample.
pub const MIN_SAMPLE_KEYS: usize = 1 << 20;

/// Above this many key-inserts in total, repeating the whole insert `reps` times costs more
/// than it tells; one pass is timed in `reps` segments instead (insert cost does not depend
/// on how full the filter is, only on where its blocks live).
const MAX_INSERT_WORK: usize = 1 << 25;

/// Times `subject` on `w`: insert (leaving all members inserted), then `reps` timed passes of
/// the mixed lookups, then one untimed pass of per-key answers for the FPR and a sanity check.
pub fn measure<S: Subject>(subject: &mut S, w: &Workload, reps: usize) -> Measurement {
    let reps = reps.max(1);
    let insert = time_insert(subject, &w.members, reps);

    let mut contains = Timing::default();
    let mut counted = 0;
    for _ in 0..reps {
        let t = Instant::now();
        counted = black_box(subject.count(black_box(&w.queries)));
        contains.samples.push(per_key(t, w.queries.len()));
    }

    let mut answers = vec![false; w.queries.len()];
    subject.answer(&w.queries, &mut answers);
    let (mut false_positives, mut false_negatives) = (0, 0);
    for (&a, &m) in answers.iter().zip(&w.is_member) {
        false_positives += usize::from(a && !m);
        false_negatives += usize::from(!a && m);
    }
    let answered = answers.iter().filter(|&&a| a).count();
    Measurement {
        insert,
        contains,
        false_positives,
        non_members: w.non_members,
        false_negatives,
        count_mismatch: !w.queries.is_empty() && counted != answered,
        size_in_bytes: subject.size_in_bytes(),
        probes: subject.probes(),
    }
}

/// Whether inserting `n` keys is timed as one pass in `reps` segments (large `n`) rather
/// than as `reps` full passes.
pub fn segmented(n: usize, reps: usize) -> bool {
    n.saturating_mul(reps) > MAX_INSERT_WORK && n >= reps
}

/// How [`measure`] times the insert of `n` keys, in words, for the reports.
pub fn describe_insert(n: usize, reps: usize) -> String {
    let reps = reps.max(1);
    if segmented(n, reps) {
        format!("one pass into an empty filter, timed in {reps} equal segments")
    } else {
        let inner = MIN_SAMPLE_KEYS.div_ceil(n.max(1)).max(1);
        if inner > 1 {
            format!("{reps} repetitions, each clear + {inner} passes over all keys")
        } else {
            format!("{reps} repetitions, each clear + one pass over all keys")
        }
    }
}

fn time_insert<S: Subject>(subject: &mut S, keys: &[u64], reps: usize) -> Timing {
    let mut timing = Timing::default();
    if keys.is_empty() {
        return timing;
    }
    if segmented(keys.len(), reps) {
        subject.clear();
        for segment in keys.chunks(keys.len().div_ceil(reps)) {
            let t = Instant::now();
            subject.insert(black_box(segment));
            timing.samples.push(per_key(t, segment.len()));
        }
    } else {
        // Re-inserting present keys does the same work (the same bits are set again).
        let inner = MIN_SAMPLE_KEYS.div_ceil(keys.len()).max(1);
        for _ in 0..reps {
            subject.clear();
            let t = Instant::now();
            for _ in 0..inner {
                subject.insert(black_box(keys));
            }
            timing.samples.push(per_key(t, keys.len() * inner));
        }
    }
    black_box(&subject);
    timing
}

pub fn per_key(start: Instant, keys: usize) -> f64 {
    start.elapsed().as_nanos() as f64 / keys.max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even() {
        assert_eq!(
            Timing {
                samples: vec![3.0, 1.0, 2.0]
            }
            .median(),
            2.0
        );
        assert_eq!(
            Timing {
                samples: vec![4.0, 1.0, 2.0, 3.0]
            }
            .median(),
            2.5
        );
    }

    #[test]
    fn sbbf_budget_for_one_percent_is_near_the_parquet_table() {
        // Parquet's table gives about 10.5 bits per key for 1%; integer budgets round up.
        let b = sbbf_bits_per_key(1_000_000, 0.01);
        assert!((10..=12).contains(&b), "{b}");
    }

    #[test]
    fn every_subject_has_no_false_negatives() {
        let w = Workload::generate(2000, 4000, 1).unwrap();
        let mut subjects: Vec<Measurement> = Vec::new();
        for batch in [1, 7, 1024] {
            let filter = BloomFilter::builder()
                .capacity(2000)
                .fpr(0.01)
                .build()
                .unwrap();
            subjects.push(measure(&mut Blocked { filter, batch }, &w, 1));
        }
        subjects.push(measure(&mut FastBloom::siphash(2000, 0.01), &w, 1));
        subjects.push(measure(&mut FastBloom::foldhash(2000, 0.01), &w, 1));
        subjects.push(measure(&mut Sbbf::new(2000, 0.01), &w, 1));
        for m in subjects {
            assert_eq!(m.false_negatives, 0);
            assert!(!m.count_mismatch);
            assert!(m.fpr() < 0.05, "{}", m.fpr());
        }
    }
}
