//! The parts of `blockbloom-perf` its benches share with its binary: the peers, defined once
//! ([`peers`]), and the interleaved-rounds workload of the measuring programs ([`workload`]).
//! The keys are `blockbloom_measure::keys` (one generator).

pub mod peers;
pub mod workload;
