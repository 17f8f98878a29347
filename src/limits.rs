//! Limits that the error messages quote and the layers above enforce. They sit at the bottom
//! so that the error type can name them without importing the planner or the codec.

/// The smallest target false-positive rate the planner accepts (`sizing::MIN_FPR`).
pub const MIN_FPR: f64 = 1e-9;

/// The format version this build writes and reads (`format::VERSION`).
pub const FORMAT_VERSION: u16 = 1;
