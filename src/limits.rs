//! Limits that the error messages quote and the layers above enforce. They sit at the bottom
//! so that the error type can name them without importing the planner or the codec.

/// The smallest target false-positive rate the planner accepts (`sizing::MIN_FPR`).
pub const MIN_FPR: f64 = 1e-9;

/// The format version this build writes and reads (`format::VERSION`).
pub const FORMAT_VERSION: u16 = 1;

/// The largest explicit bit budget per key a builder accepts (`sizing::MAX_BITS_PER_KEY`): one
/// whole 512-bit block per key, past which more memory no longer lowers the rate measurably.
pub const MAX_BITS_PER_KEY: f64 = 512.0;

/// A filter whose model false-positive rate at its capacity is this or more answers "maybe"
/// for nearly every absent key (`sizing::USELESS_FPR`): the builder refuses it, as the CLI does.
pub const USELESS_FPR: f64 = 0.99;
