//! What the criterion benches share: the sizes `BLOCKBLOOM_BENCH_SIZES` selects, and how
//! criterion samples a size.

use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, SamplingMode, Throughput};

/// How hard criterion measures one size.
#[derive(Clone, Copy)]
pub struct Sampling {
    pub sample_size: usize,
    pub warm_up: Duration,
    pub measurement: Duration,
    /// Flat sampling (for iterations too slow for the linear sampling's 55).
    pub flat: bool,
}

/// Sets `group`'s sampling to `s` and its throughput to `elements` keys an iteration.
#[allow(dead_code)] // not every bench samples by size
pub fn configure(group: &mut BenchmarkGroup<'_, WallTime>, s: &Sampling, elements: usize) {
    group
        .sample_size(s.sample_size)
        .warm_up_time(s.warm_up)
        .measurement_time(s.measurement)
        .sampling_mode(if s.flat {
            SamplingMode::Flat
        } else {
            SamplingMode::Auto
        })
        .throughput(Throughput::Elements(elements as u64));
}

/// The entries of `all` that `BLOCKBLOOM_BENCH_SIZES` names (comma-separated, any case; empty
/// or `all`: every one), each once, in the order given. A name this bench has no size of is
/// skipped with a note on stderr (one variable serves every bench).
pub fn selected<T: Copy>(all: &[T], name: fn(&T) -> &'static str) -> Vec<T> {
    let spec = std::env::var("BLOCKBLOOM_BENCH_SIZES").unwrap_or_default();
    let spec = spec.trim();
    if spec.is_empty() || spec.eq_ignore_ascii_case("all") {
        return all.to_vec();
    }
    let mut out: Vec<T> = Vec::new();
    for want in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match all.iter().find(|s| name(s).eq_ignore_ascii_case(want)) {
            Some(s) if !out.iter().any(|o| name(o) == name(s)) => out.push(*s),
            Some(_) => {}
            None => eprintln!(
                "BLOCKBLOOM_BENCH_SIZES: no size {want:?} in this bench (it has {})",
                all.iter().map(name).collect::<Vec<_>>().join(", ")
            ),
        }
    }
    out
}
