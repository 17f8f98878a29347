//! The crate's one error type.

use alloc::string::String;

use core::fmt;

use crate::isa::Isa;

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
    /// The explicit bit budget is not a finite number in `(0, MAX_BITS_PER_KEY]`
    /// ([`sizing::MAX_BITS_PER_KEY`](crate::sizing::MAX_BITS_PER_KEY)).
    InvalidBitsPerKey(f64),
    /// The probe count fits no layout (or not the one asked for): it must be a multiple of 4
    /// in `4..=32`, and of 8 for `Layout::Sectors8x64` and `Layout::Sectors8x32`.
    InvalidProbes(u32),
    /// The builder's options are missing or contradict each other; the text says which.
    InvalidOptions(&'static str),
    /// The filter would need more blocks than a 32-bit block index can address.
    TooManyBlocks {
        /// Blocks the parameters asked for.
        requested: u128,
        /// The most blocks a filter can have (2^32).
        max: u64,
        /// The builder option that set the size.
        sized_by: SizedBy,
    },
    /// The options size a filter whose model false-positive rate at its capacity is
    /// [`sizing::USELESS_FPR`](crate::sizing::USELESS_FPR) or more: it would answer "maybe" for
    /// nearly every absent key.
    FiltersNothing {
        /// Keys the filter was sized for.
        capacity: u64,
        /// Bytes of the filter the options gave.
        bytes: u64,
        /// The model false-positive rate at `capacity` keys.
        model_fpr: f64,
        /// The builder option that set the size.
        sized_by: SizedBy,
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
    /// Decoding: the bytes do not start with the format's magic number.
    BadMagic,
    /// Decoding: a format version this build cannot read.
    UnsupportedVersion(u16),
    /// Decoding: a layout id this build does not know.
    UnsupportedLayout(u8),
    /// Decoding: a hash id this build does not know.
    UnsupportedHash(u8),
    /// Decoding: the input ends before the filter does.
    Truncated {
        /// Bytes the header says the filter takes.
        needed: u128,
        /// Bytes there were.
        got: u128,
    },
    /// Decoding: bytes follow the filter in a buffer that should hold exactly one.
    TrailingBytes {
        /// Bytes the filter takes.
        expected: u128,
        /// Bytes in the buffer.
        got: u128,
    },
    /// Decoding: the checksum over header and blocks does not match (corrupted data).
    ChecksumMismatch {
        /// The checksum stored in the header.
        stored: u64,
        /// The checksum of the bytes read.
        computed: u64,
    },
    /// Decoding: a header field is out of range; the text says which.
    InvalidHeader(&'static str),
    /// A zero-copy view needs its blocks 64-byte aligned in memory; these are not.
    Misaligned {
        /// Address of the first block.
        address: usize,
    },
    /// A Parquet split-block bitset of an unusable length.
    InvalidBitset {
        /// Its length in bytes.
        len: usize,
        /// What is wrong with it.
        why: &'static str,
    },
    /// A named column does not exist in a Parquet file.
    NoSuchColumn(String),
    /// Two filters cannot be combined; the text says what differs.
    Incompatible(&'static str),
    /// `remove`: the key is not in the filter (one of its counters or bits is zero); nothing
    /// was changed.
    NotPresent,
    /// Decoding a compressed filter: the codec rejected its stream (corrupted, or a frame
    /// this reader refuses, such as a window over 1 MiB); the text is the codec's.
    Codec(String),
    /// Decoding a compressed filter: it declares more decompressed bytes than the caller
    /// allows; nothing was decompressed.
    DecompressedTooLarge {
        /// Bytes of plain filter the envelope declares.
        declared: u64,
        /// The caller's limit.
        limit: u64,
    },
    /// `compressed::plan`: the transfer budget (bits per key) cannot hold even one block
    /// plus the headers.
    TransferBudgetTooSmall(f64),
    /// `compressed::plan_for_fpr`: no design reaches the target rate with an array within the
    /// limit (and a fill where the size model holds).
    NoTransferDesign {
        /// The target false-positive rate.
        fpr: f64,
        /// The cap on the array's bits per key.
        max_array_bits_per_key: f64,
    },
    /// `remove` on a counting filter that has had a minimum-increase insert: its counters no
    /// longer add up per key, so a remove could create false negatives; nothing was changed.
    RemoveAfterMinIncrease,
    /// Bloomier build: a value does not fit in the filter's value bits.
    ValueTooLarge {
        /// Position of the pair in the input.
        index: usize,
        /// The value.
        value: u64,
        /// Bits per value of the filter.
        value_bits: u32,
    },
    /// Bloomier build: the same key is given twice with different values (the same value
    /// twice is one entry).
    ConflictingValues {
        /// Position of the first pair in the input.
        first: usize,
        /// Position of the second pair.
        second: usize,
        /// The first pair's value.
        first_value: u64,
        /// The second pair's value.
        second_value: u64,
    },
    /// Bloomier build: no seed tried gave a solvable table.
    ConstructionFailed {
        /// Seeds tried.
        attempts: u32,
    },
    /// `remove` on a deletable filter: every bit of the key lies in a region where keys
    /// collided, so clearing any of them could remove another key; nothing was changed.
    NotDeletable,
    /// A numeric parameter of a filter kind is out of range; the text says which range.
    InvalidParameter {
        /// The parameter's name.
        name: &'static str,
        /// The value given.
        value: f64,
        /// The values it accepts.
        expected: &'static str,
    },
    /// Decoding: the bytes hold another kind of filter of the format family (a counting
    /// filter given to `BloomFilter::from_bytes`, say).
    WrongKind {
        /// The kind the decoder reads.
        expected: &'static str,
        /// The kind the header names.
        found: &'static str,
    },
    /// A byte column's offsets are not a valid Arrow offsets buffer: one is negative, smaller
    /// than the one before it, or past the end of the values (or a view of an Arrow view
    /// array points outside its buffers).
    InvalidOffsets {
        /// Position of the first offending offset.
        index: usize,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// An Arrow array of a data type the filter does not take (`insert_array` and
    /// `contains_array`, cargo feature `arrow`); the text is the type, as Arrow prints it.
    UnsupportedType(String),
    /// Reading or writing failed (feature `std`).
    #[cfg(feature = "std")]
    Io {
        /// The I/O error's kind.
        kind: std::io::ErrorKind,
        /// Its message.
        message: String,
        /// The error that caused it (the `std::io::Error`, or the Parquet reader's error),
        /// also given by [`core::error::Error::source`].
        source: IoSource,
    },
}

/// The error behind an [`Error::Io`], shared so that [`Error`] stays `Clone`.
///
/// Two are equal when they say the same (their `Display`): an `Error` compares by what it
/// says.
///
/// ```
/// use core::error::Error as _;
/// let e = blockbloom::Error::from(std::io::Error::other("disk on fire"));
/// let source = e.source().expect("an I/O error keeps its cause");
/// assert_eq!(source.to_string(), "disk on fire");
/// ```
#[cfg(feature = "std")]
#[derive(Clone)]
pub struct IoSource(std::sync::Arc<dyn core::error::Error + Send + Sync + 'static>);

#[cfg(feature = "std")]
impl IoSource {
    /// Wraps the error that caused an [`Error::Io`].
    pub fn new(e: impl core::error::Error + Send + Sync + 'static) -> IoSource {
        IoSource(std::sync::Arc::new(e))
    }

    /// The error itself.
    pub fn get(&self) -> &(dyn core::error::Error + Send + Sync + 'static) {
        &*self.0
    }
}

#[cfg(feature = "std")]
impl fmt::Debug for IoSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

#[cfg(feature = "std")]
impl PartialEq for IoSource {
    fn eq(&self, other: &IoSource) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0) || self.0.to_string() == other.0.to_string()
    }
}

#[cfg(feature = "std")]
impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Error {
        Error::Io {
            kind: e.kind(),
            message: e.to_string(),
            source: IoSource::new(e),
        }
    }
}

/// A number as people read it: plain in `[1e-4, 1e6)`, else in scientific notation (so
/// `1e-300` is not 300 digits).
struct Readable(f64);

impl fmt::Display for Readable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let x = self.0;
        if x == 0.0 || !x.is_finite() || (1e-4..1e6).contains(&x.abs()) {
            write!(f, "{x}")
        } else {
            write!(f, "{x:e}")
        }
    }
}

/// Which builder option set a filter's size, so an error about the size can say what to
/// change: [`Error::TooManyBlocks`], [`Error::FiltersNothing`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SizedBy {
    /// A target false-positive rate (`fpr`, or `with_capacity`).
    Fpr,
    /// An explicit `bits_per_key` budget.
    BitsPerKey,
    /// An explicit `size_in_bytes` budget.
    SizeInBytes,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidFpr(p) => write!(
                f,
                "false-positive rate must be a number in [{:e}, 1), got {}",
                crate::limits::MIN_FPR,
                Readable(*p)
            ),
            Error::InvalidBitsPerKey(b) => {
                write!(
                    f,
                    "bits per key must be a number in (0, {}], got {}",
                    crate::limits::MAX_BITS_PER_KEY,
                    Readable(*b)
                )
            }
            Error::InvalidProbes(k) => write!(
                f,
                "probes per key must be a multiple of 4 in 4..={} (of 8 with the 8x64 and 8x32 \
                 layouts), \
                 got {k}",
                crate::layout::MAX_PROBES
            ),
            Error::InvalidOptions(what) => write!(f, "invalid builder options: {what}"),
            Error::TooManyBlocks {
                requested,
                max,
                sized_by,
            } => write!(
                f,
                "filter needs {requested} blocks but a block index addresses at most {max} \
                 (256 GiB); {}",
                match sized_by {
                    SizedBy::Fpr => "lower the capacity or raise the false-positive rate",
                    SizedBy::BitsPerKey => "lower the capacity or bits_per_key",
                    SizedBy::SizeInBytes => "lower size_in_bytes",
                }
            ),
            Error::FiltersNothing {
                capacity,
                bytes,
                model_fpr,
                sized_by,
            } => write!(
                f,
                "a {bytes}-byte filter for {capacity} keys would answer \"maybe\" for {:.1}% of \
                 absent keys (model): it would filter nothing; {}",
                model_fpr * 100.0,
                match sized_by {
                    SizedBy::Fpr => "lower the false-positive rate",
                    SizedBy::BitsPerKey =>
                        "raise bits_per_key (about 10 gives 1%), or use fpr(..) instead",
                    SizedBy::SizeInBytes =>
                        "raise size_in_bytes (about 1.25 bytes per key gives 1%) or lower the capacity",
                }
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
                "unknown kernel `{s}`; expected one of scalar, portable, avx2, avx512, neon"
            ),
            Error::BadMagic => write!(f, "not a blockbloom filter (bad magic number)"),
            Error::UnsupportedVersion(v) => write!(
                f,
                "unsupported format version {v} (this build reads version {})",
                crate::limits::FORMAT_VERSION
            ),
            Error::UnsupportedLayout(l) => write!(f, "unsupported layout id {l}"),
            Error::UnsupportedHash(h) => write!(f, "unsupported hash id {h}"),
            Error::Truncated { needed, got } => {
                write!(f, "truncated filter: needs {needed} bytes, got {got}")
            }
            Error::TrailingBytes { expected, got } => write!(
                f,
                "{got} bytes where the filter takes {expected}: trailing bytes after the filter"
            ),
            Error::ChecksumMismatch { stored, computed } => write!(
                f,
                "checksum mismatch (stored {stored:016x}, computed {computed:016x}): corrupted filter"
            ),
            Error::InvalidHeader(what) => write!(f, "invalid header: {what}"),
            Error::Misaligned { address } => write!(
                f,
                "blocks at address {address:#x} are not 64-byte aligned; a zero-copy view needs \
                 aligned bytes (use BloomFilter::from_bytes to copy instead)"
            ),
            Error::InvalidBitset { len, why } => {
                write!(
                    f,
                    "invalid Parquet Bloom filter bitset of {len} bytes: {why}"
                )
            }
            Error::NoSuchColumn(c) => write!(f, "the Parquet file has no column `{c}`"),
            Error::Incompatible(what) => write!(f, "incompatible filters: {what}"),
            Error::NotPresent => {
                write!(
                    f,
                    "remove: the key is not in the filter (nothing was changed)"
                )
            }
            Error::Codec(msg) => write!(f, "compressed filter: the codec failed: {msg}"),
            Error::DecompressedTooLarge { declared, limit } => write!(
                f,
                "compressed filter declares {declared} decompressed bytes, over the limit of \
                 {limit}"
            ),
            Error::TransferBudgetTooSmall(bits) => write!(
                f,
                "a transfer budget of {bits} bits per key cannot hold one block plus headers; \
                 raise the budget or the capacity"
            ),
            Error::NoTransferDesign {
                fpr,
                max_array_bits_per_key,
            } => write!(
                f,
                "no compressed design reaches a false-positive rate of {fpr} with at most \
                 {max_array_bits_per_key} array bits per key; raise the array limit"
            ),
            Error::RemoveAfterMinIncrease => write!(
                f,
                "remove: the counting filter has had minimum-increase inserts, whose counts do \
                 not support removal (nothing was changed)"
            ),
            Error::ValueTooLarge {
                index,
                value,
                value_bits,
            } => write!(
                f,
                "value {value} of pair {index} does not fit in {value_bits} value bits"
            ),
            Error::ConflictingValues {
                first,
                second,
                first_value,
                second_value,
            } => write!(
                f,
                "pairs {first} and {second} have the same key but different values \
                 ({first_value} and {second_value})"
            ),
            Error::ConstructionFailed { attempts } => write!(
                f,
                "no table could be solved with {attempts} seeds (this should not happen; \
                 please report it)"
            ),
            Error::NotDeletable => write!(
                f,
                "remove: every bit of the key is in a region where keys collided, so it cannot \
                 be removed without risking false negatives (nothing was changed)"
            ),
            Error::InvalidParameter {
                name,
                value,
                expected,
            } => write!(f, "invalid {name} {value}: expected {expected}"),
            Error::InvalidOffsets { index, reason } => {
                write!(f, "invalid byte-column offset at index {index}: {reason}")
            }
            Error::WrongKind { expected, found } => write!(
                f,
                "the bytes hold a {found}, not a {expected}; decode them with that kind's \
                 from_bytes"
            ),
            Error::UnsupportedType(t) => write!(
                f,
                "Arrow arrays of type {t} are not supported: the filters take the integers \
                 (Int8 to Int64, UInt8 to UInt64), Utf8, LargeUtf8, Utf8View, Binary, \
                 LargeBinary, BinaryView and FixedSizeBinary(16) (the Parquet filter any \
                 FixedSizeBinary width)"
            ),
            #[cfg(feature = "std")]
            Error::Io { kind, message, .. } => write!(f, "I/O error ({kind:?}): {message}"),
        }
    }
}

impl core::error::Error for Error {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            #[cfg(feature = "std")]
            Error::Io { source, .. } => Some(source.get()),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn numbers_in_messages_are_readable() {
        let tiny = Error::InvalidFpr(1e-300).to_string();
        assert!(tiny.ends_with("got 1e-300"), "{tiny}");
        assert!(Error::InvalidFpr(1.5).to_string().ends_with("got 1.5"));
        assert!(Error::InvalidFpr(-0.25).to_string().ends_with("got -0.25"));
        assert!(
            Error::InvalidFpr(f64::NEG_INFINITY)
                .to_string()
                .ends_with("got -inf")
        );
        let huge = Error::InvalidBitsPerKey(-3e300).to_string();
        assert!(huge.ends_with("got -3e300"), "{huge}");
    }
}
