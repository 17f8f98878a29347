//! Wall-clock timing: samples in nanoseconds per item, their median and their spread.

use std::hint::black_box;
use std::time::Instant;

/// Nanoseconds per item of each timed run.
#[derive(Debug, Clone, Default)]
pub struct Timing {
    /// One entry per timed sample.
    pub samples: Vec<f64>,
}

impl Timing {
    /// `reps` timed runs of `run`, each over `items` items.
    pub fn repeat<T>(reps: usize, items: usize, mut run: impl FnMut() -> T) -> Timing {
        Timing::repeat_prepared(reps, items, &mut (), |_| {}, |_| run())
    }

    /// `reps` timed runs of `run` on `state`, each over `items` items and each after an
    /// untimed `prepare` of the state (clearing a filter, refilling it, building a fresh one).
    pub fn repeat_prepared<S, T>(
        reps: usize,
        items: usize,
        state: &mut S,
        mut prepare: impl FnMut(&mut S),
        mut run: impl FnMut(&mut S) -> T,
    ) -> Timing {
        let mut timing = Timing::default();
        for _ in 0..reps {
            prepare(state);
            timing.record(items, || run(state));
            black_box(&*state);
        }
        timing
    }

    /// Times one run of `run` over `items` items, records its ns per item and returns what
    /// it returned (kept from the optimiser either way).
    pub fn record<T>(&mut self, items: usize, run: impl FnOnce() -> T) -> T {
        let start = Instant::now();
        let out = black_box(run());
        self.samples.push(per_key(start, items));
        out
    }

    /// The median sample (the mean of the middle two for an even count; NaN if empty).
    pub fn median(&self) -> f64 {
        let mut s = self.samples.clone();
        s.sort_by(f64::total_cmp);
        match s.len() {
            0 => f64::NAN,
            n if n % 2 == 1 => s[n / 2],
            n => (s[n / 2 - 1] + s[n / 2]) / 2.0,
        }
    }

    /// The fastest sample (infinite if empty): for a figure taken as the best of many runs.
    pub fn fastest(&self) -> f64 {
        self.samples.iter().copied().fold(f64::INFINITY, f64::min)
    }

    /// `(max - min) / median`: how noisy the samples were.
    pub fn spread(&self) -> f64 {
        let min = self.fastest();
        let max = self
            .samples
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max);
        (max - min) / self.median()
    }
}

/// Nanoseconds since `start` per key (or item), for `keys` of them.
pub fn per_key(start: Instant, keys: usize) -> f64 {
    start.elapsed().as_nanos() as f64 / keys.max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even() {
        let t = |samples: &[f64]| Timing {
            samples: samples.to_vec(),
        };
        assert_eq!(t(&[3.0, 1.0, 2.0]).median(), 2.0);
        assert_eq!(t(&[4.0, 1.0, 2.0, 3.0]).median(), 2.5);
        assert!(t(&[]).median().is_nan());
        assert_eq!(t(&[1.0, 2.0, 3.0]).spread(), 1.0);
    }

    #[test]
    fn repeat_records_one_sample_per_run() {
        let mut runs = 0;
        let t = Timing::repeat(4, 10, || runs += 1);
        assert_eq!(runs, 4);
        assert_eq!(t.samples.len(), 4);
        assert!(t.samples.iter().all(|&s| s >= 0.0));
        // Each run sees the state its preparation left, never the previous run's.
        let mut state = Vec::new();
        let t = Timing::repeat_prepared(3, 1, &mut state, Vec::clear, |v| {
            v.push(1);
            assert_eq!(v.len(), 1);
        });
        assert_eq!(t.samples.len(), 3);
        let mut t = Timing::default();
        assert_eq!(t.record(1, || 7), 7);
        assert_eq!(t.samples.len(), 1);
    }
}
