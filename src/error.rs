//! The crate's one error type.

use std::fmt;

use crate::Isa;

/// Everything that can go wrong when building a filter or choosing a kernel.
///
/// Every variant says what was asked for, so the message alone is enough to fix the call.
///
/// ```
/// use blockbloom::{BloomFilter, Error};
///
/// let err = BloomFilter::with_capacity(1000, 1.5).unwrap_err();
/// assert!(matches!(err, Error::InvalidFpr(_)));
/// assert!(err.to_string().contains("false-positive rate"));
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// The target false-positive rate is not a number in `[MIN_FPR, 1)`.
    InvalidFpr(f64),
    /// The explicit bit budget is not a finite number greater than zero.
    InvalidBitsPerKey(f64),
    /// The probe count fits no layout (or not the one asked for): it must be a multiple of 4
    /// in `4..=32`, and of 8 for `Layout::Sectors8x64`.
    InvalidProbes(u32),
    /// The builder's options are missing or contradict each other; the text says which.
    InvalidOptions(&'static str),
    /// The filter would need more blocks than a 32-bit block index can address.
    TooManyBlocks {
        /// Blocks the parameters asked for.
        requested: u128,
        /// The most blocks a filter can have (2^32).
        max: u64,
    },
    /// The allocator refused the filter's memory.
    AllocationFailed {
        /// Bytes that were asked for.
        bytes: u128,
    },
    /// A kernel was requested that this CPU cannot run.
    UnsupportedIsa {
        /// The requested kernel.
        requested: Isa,
        /// The best kernel this CPU can run.
        best: Isa,
    },
    /// `BLOCKBLOOM_ISA` (or a string parsed as [`Isa`]) names no kernel.
    UnknownIsa(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidFpr(p) => write!(
                f,
                "false-positive rate must be a number in [{:e}, 1), got {p}",
                crate::sizing::MIN_FPR
            ),
            Error::InvalidBitsPerKey(b) => {
                write!(f, "bits per key must be finite and greater than 0, got {b}")
            }
            Error::InvalidProbes(k) => write!(
                f,
                "probes per key must be a multiple of 4 in 4..={} (of 8 with the 8x64 layout), \
                 got {k}",
                crate::layout::MAX_PROBES
            ),
            Error::InvalidOptions(what) => write!(f, "invalid builder options: {what}"),
            Error::TooManyBlocks { requested, max } => write!(
                f,
                "filter needs {requested} blocks but a block index addresses at most {max} \
                 (256 GiB); lower the capacity or raise the false-positive rate"
            ),
            Error::AllocationFailed { bytes } => {
                write!(f, "could not allocate {bytes} bytes for the filter")
            }
            Error::UnsupportedIsa { requested, best } => write!(
                f,
                "kernel `{requested}` is not supported by this CPU (best available: `{best}`)"
            ),
            Error::UnknownIsa(s) => write!(
                f,
                "unknown kernel `{s}`; expected one of scalar, portable, avx2, avx512"
            ),
        }
    }
}

impl std::error::Error for Error {}
