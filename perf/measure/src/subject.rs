//! The one single-thread timing path shared by `demo`, `bench` and `report`.
//!
//! Everything measured (each blockbloom kernel, the single-key API, the peer crates) is a
//! [`Subject`], and [`measure`] times every subject with the same code: insert all members,
//! then answer the same mixed lookups, several repetitions each, reporting medians. Hashing
//! is always inside the timed region, so the figures are "u64 key in, answer out".

use std::hint::black_box;
use std::time::Instant;

use blockbloom::BloomFilter;

use crate::keys::Workload;
use crate::timing::{Timing, per_key};

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

    /// The 95% confidence interval of [`fpr`](Self::fpr), `(lower, upper)` (Wilson score:
    /// sound at the handful of false positives low targets produce).
    pub fn fpr_interval95(&self) -> (f64, f64) {
        crate::interval::rate_interval95(self.false_positives as u64, self.non_members as u64)
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
pub fn measure<S: Subject + ?Sized>(subject: &mut S, w: &Workload, reps: usize) -> Measurement {
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

fn time_insert<S: Subject + ?Sized>(subject: &mut S, keys: &[u64], reps: usize) -> Timing {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_batch_size_has_no_false_negatives() {
        let w = Workload::generate(2000, 4000, 1).unwrap();
        for batch in [1, 7, 1024] {
            let filter = BloomFilter::builder()
                .capacity(2000)
                .fpr(0.01)
                .build()
                .unwrap();
            let m = measure(&mut Blocked { filter, batch }, &w, 1);
            assert_eq!(m.false_negatives, 0);
            assert!(!m.count_mismatch);
            assert!(m.fpr() < 0.05, "{}", m.fpr());
        }
    }
}
