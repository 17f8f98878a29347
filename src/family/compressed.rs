//! The compressed transfer form (Mitzenmacher, "Compressed Bloom Filters", PODC 2001): a
//! filter sent over a network is sized for its *compressed* size, not its memory.
//!
//! A filter at the usual fill (half its bits set) does not compress. A larger, sparser array
//! with fewer probes per key does, and for the same bits on the wire it can have a lower
//! false-positive rate: the sender and receiver pay with memory and with the time to
//! compress and decompress. [`plan`] makes that trade with the engine's exact model: it picks
//! the layout, probe count and block count with the lowest model rate
//! ([`sizing::false_positive_rate`]) whose *predicted* transferred size fits the budget.
//!
//! The codec is zstd at level 1 on the plain filter's own encoding. It finds nothing to match
//! in a filter's random bits and codes its bytes as Huffman literals, so the prediction
//! ([`predicted_bytes`]) is the expected Huffman code length of the array's bytes at the
//! expected fill (close to the entropy `H(q)` per bit unless the filter is sparse), plus a
//! measured overhead. On these arrays the middle zstd levels do worse than level 1 (their
//! matches on random data cost more than they save), and the top levels gain little at a
//! small fraction of the speed. `cargo run --release -p blockbloom-perf -- family` measures
//! the codec against the entropy bound and the model.
//!
//! [`plan`] keeps to the blocked filter, whose layouts set at least 4 probes (4 or 8 per SIMD
//! round), while the paper's best designs at 8 transferred bits per key use 1 or 2: at 8 bits
//! its gain over the plain filter is small, at 16 bits it is real. The other direction,
//! [`plan_for_fpr`], takes a target rate and finds the fewest transferred bytes; the classic
//! filter ([`ClassicBloomFilter::to_compressed_bytes`]) takes part there with any probe count,
//! and wins it: its designs with 2 to 7 probes send the fewest bytes.
//!
//! ```
//! use blockbloom::BloomFilter;
//!
//! // 16 bits per key on the wire: a sparse 4-probe filter beats a plain 16-bit filter.
//! let mut f = BloomFilter::with_transfer_budget(20_000, 16.0)?;
//! f.insert_batch(&(0..20_000u64).collect::<Vec<_>>());
//! let wire = f.to_compressed_bytes()?;
//! assert!(wire.len() * 8 <= 20_000 * 16 * 102 / 100); // the budget, within the codec's tolerance
//! let g = BloomFilter::from_compressed_bytes_limited(&wire, 1 << 20)?;
//! assert_eq!(f, g);
//! # Ok::<(), blockbloom::Error>(())
//! ```

// Without `std`, `f64` lacks `ln`, `exp`, ... (with it, or in tests, std's own are found).
#[cfg(not(any(feature = "std", test)))]
use crate::math::F64Math as _;

use std::io::Read;

use crate::codec::{Encoded, Envelope, HEADER_BYTES, Out, kind};
use crate::error::Error;
use crate::family::classic::{self, ClassicBloomFilter};
use crate::filter::BloomFilter;
use crate::hashing::KeyHash;
use crate::layout::{BLOCK_BITS, Layout, MAX_BLOCKS};
use crate::sizing::{self, Plan};

/// The codec id in the parameter byte: zstd, no pre-transform.
pub const CODEC_ZSTD: u8 = 1;

/// The zstd level the writer uses. Fixed, so the same filter gives the same bytes.
pub const ZSTD_LEVEL: i32 = 1;

/// Largest zstd window (log2 bytes) a reader accepts. Level 1 never uses more than 2^20, and
/// the decoder allocates its window from the frame header, so a larger one is refused rather
/// than allocated.
pub const WINDOW_LOG_MAX: u32 = 20;

/// [`plan`] never plans an array larger than this many times the transfer budget: the
/// receiver holds the array in memory, and with a fixed probe count the array needed grows
/// exponentially with the budget.
pub const MAX_ARRAY_FACTOR: f64 = 4.0;

/// Bytes of the prediction that do not depend on the array: the envelope's header, the
/// inner header (barely compressible) and the zstd frame header.
pub const FIXED_BYTES: f64 = (2 * HEADER_BYTES + 18) as f64;

/// Bytes zstd spends per 128 KiB block of input on headers and its Huffman table.
pub const BYTES_PER_CODEC_BLOCK: f64 = 100.0;

/// The codec's measured overhead over the Huffman bound of [`codec_bits_per_bit`], per unit
/// of `p0^2`, `p0 = (1 - q)^8` the probability of an all-zero byte: in sparse arrays zstd
/// finds matches in runs of zero bytes, which cost more than the literals they replace.
pub const CODEC_SKEW_OVERHEAD: f64 = 0.19;

/// [`plan`] keeps the expected fill at or above this. In sparser arrays zstd's cost rises
/// above the model (`blockbloom-perf family`'s codec table:
/// perf-reports/2026-11-23-8afb7f5-family.md), so the prediction would not hold there.
pub const MIN_FILL: f64 = 0.12;

/// [`plan_for_fpr`] keeps the expected fill at or below this. A denser array compresses too
/// (`H(q) = H(1 - q)`), but only with more probes than the textbook optimum, which is slower,
/// and the codec's overhead model is fitted on sparse arrays only.
pub const MAX_FILL: f64 = 0.5;

const CODEC_BLOCK: f64 = 131_072.0;

/// The expected fraction of set bits of a filter of `num_blocks` blocks in `layout` with
/// `probes` probes per key once `keys` keys are in it (exact for an ideal hash: block loads
/// are binomial, and a sector of `W` bits receiving `b` probes per key keeps a bit clear with
/// probability `(1 - 1/W)^b` per key).
///
/// ```
/// use blockbloom::{compressed::expected_fill, layout::Layout};
/// let q = expected_fill(1_000_000, 1_000_000 * 8 / 512, Layout::Sectors4x128, 4);
/// assert!((q - (1.0 - (-0.5f64).exp())).abs() < 0.01); // about 1 - e^(-kn/m)
/// ```
pub fn expected_fill(keys: u64, num_blocks: u64, layout: Layout, probes: u32) -> f64 {
    let b = (probes / layout.sectors()) as f64;
    let w = layout.sector_bits() as f64;
    let hit = 1.0 - (1.0 - 1.0 / w).powf(b); // a key in the block sets a given bit
    // A key lands in one of the filter's `num_blocks * parts` parts.
    let per_key = (-hit / (num_blocks.max(1) * layout.parts() as u64) as f64).ln_1p();
    1.0 - (keys as f64 * per_key).exp()
}

/// The binary entropy `H(q)` in bits: the fewest bits per bit of array any code can spend on
/// bits set independently with probability `q` (the paper's bound).
///
/// ```
/// use blockbloom::compressed::entropy;
/// assert_eq!(entropy(0.5), 1.0);
/// assert!((entropy(0.1331) - 0.566).abs() < 0.001);
/// ```
pub fn entropy(q: f64) -> f64 {
    if q <= 0.0 || q >= 1.0 {
        return 0.0;
    }
    -(q * q.log2() + (1.0 - q) * (1.0 - q).log2())
}

/// Predicted compressed bits per bit of array at fill `q`.
///
/// zstd finds no matches in a filter's random bits and codes its bytes as literals with a
/// Huffman code, so the cost is the expected length of the Huffman code of the byte
/// distribution (each of 8 bits set with probability `q`), plus [`CODEC_SKEW_OVERHEAD`]; or
/// one bit when that is more (zstd then stores the block raw). Near half full this is the
/// entropy `H(q)`; in sparse arrays a whole-bit code cannot spend less than one bit on the
/// all-zero byte, and the cost rises above `H(q)`.
///
/// ```
/// use blockbloom::compressed::codec_bits_per_bit;
/// assert_eq!(codec_bits_per_bit(0.5), 1.0);
/// assert!(codec_bits_per_bit(0.133) < 0.59); // entropy 0.566
/// assert!(codec_bits_per_bit(0.01) >= 0.125); // at least one bit per byte
/// ```
pub fn codec_bits_per_bit(q: f64) -> f64 {
    let p0 = (1.0 - q).powi(8);
    (huffman_bits_per_byte(q) / 8.0 * (1.0 + CODEC_SKEW_OVERHEAD * p0 * p0)).min(1.0)
}

/// Expected length of a Huffman code for bytes whose 8 bits are each set with probability
/// `q`: the sum of the weights of the merged nodes.
fn huffman_bits_per_byte(q: f64) -> f64 {
    let q = q.clamp(0.0, 1.0);
    let mut w: Vec<f64> = (0u32..256)
        .map(|v| q.powi(v.count_ones() as i32) * (1.0 - q).powi(8 - v.count_ones() as i32))
        .collect();
    w.sort_by(|a, b| b.total_cmp(a)); // descending: the two lightest are at the end
    let mut total = 0.0;
    while w.len() > 1 {
        let merged = w.pop().unwrap_or(0.0) + w.pop().unwrap_or(0.0);
        total += merged;
        let at = w.partition_point(|&x| x >= merged);
        w.insert(at, merged);
    }
    total
}

/// The predicted size in bytes of [`BloomFilter::to_compressed_bytes`] for a filter of this
/// shape holding `keys` keys: [`FIXED_BYTES`], plus [`BYTES_PER_CODEC_BLOCK`] per 128 KiB of
/// array, plus the array's bits times [`codec_bits_per_bit`] of its [`expected_fill`].
///
/// ```
/// use blockbloom::{compressed::predicted_bytes, layout::Layout};
/// let sparse = predicted_bytes(100_000, 100_000 * 26 / 512, Layout::Sectors4x128, 4);
/// assert!(sparse < 100_000.0 * 16.0 / 8.0); // 26 bits of array per key, under 16 on the wire
/// ```
pub fn predicted_bytes(keys: u64, num_blocks: u64, layout: Layout, probes: u32) -> f64 {
    let array_bytes = num_blocks as f64 * (BLOCK_BITS / 8) as f64;
    let q = expected_fill(keys, num_blocks, layout, probes);
    FIXED_BYTES
        + BYTES_PER_CODEC_BLOCK * (array_bytes / CODEC_BLOCK).ceil()
        + array_bytes * codec_bits_per_bit(q)
}

/// The shape with the lowest model false-positive rate at `capacity` keys whose predicted
/// compressed size ([`predicted_bytes`]) is at most `transfer_bits_per_key` bits per key,
/// with an array of at most [`MAX_ARRAY_FACTOR`] times that and an expected fill of at least
/// [`MIN_FILL`].
///
/// ```
/// use blockbloom::{compressed, layout::Layout, sizing};
///
/// let n = 1_000_000;
/// let p = compressed::plan(n, 16.0)?;
/// assert_eq!((p.layout, p.probes), (Layout::Sectors4x128, 4));
/// assert!(p.bits_per_key() > 25.0); // a sparse array...
/// assert!(compressed::predicted_bytes(n, p.num_blocks, p.layout, p.probes) * 8.0 <= 16.0 * n as f64);
/// // ...that beats the plain filter with 16 bits per key in memory.
/// let plain = sizing::best_shape(n, n * 16 / 512, None, None);
/// let plain_fpr = sizing::false_positive_rate(n, n * 16 / 512, plain.0, plain.1);
/// assert!(sizing::false_positive_rate(n, p.num_blocks, p.layout, p.probes) < plain_fpr);
/// # Ok::<(), blockbloom::Error>(())
/// ```
///
/// # Errors
/// [`Error::InvalidBitsPerKey`] unless the budget is finite and positive;
/// [`Error::TransferBudgetTooSmall`] if not even one block fits it.
pub fn plan(capacity: u64, transfer_bits_per_key: f64) -> Result<Plan, Error> {
    plan_with_array_limit(
        capacity,
        transfer_bits_per_key,
        MAX_ARRAY_FACTOR * transfer_bits_per_key,
    )
}

/// [`plan`] with an explicit cap on the array's bits per key (the receiver's memory).
///
/// ```
/// let p = blockbloom::compressed::plan_with_array_limit(100_000, 16.0, 20.0)?;
/// assert!(p.bits_per_key() <= 20.0);
/// # Ok::<(), blockbloom::Error>(())
/// ```
///
/// # Errors
/// As [`plan`], and [`Error::InvalidBitsPerKey`] for a cap that is not finite and positive.
pub fn plan_with_array_limit(
    capacity: u64,
    transfer_bits_per_key: f64,
    max_array_bits_per_key: f64,
) -> Result<Plan, Error> {
    for bits in [transfer_bits_per_key, max_array_bits_per_key] {
        if !bits.is_finite() || bits <= 0.0 {
            return Err(Error::InvalidBitsPerKey(bits));
        }
    }
    let keys = capacity.max(1);
    let budget_bytes = transfer_bits_per_key * keys as f64 / 8.0;
    let cap = (max_array_bits_per_key * keys as f64 / BLOCK_BITS as f64)
        .floor()
        .clamp(1.0, MAX_BLOCKS as f64) as u64;
    let mut best: Option<(Plan, f64)> = None;
    for layout in Layout::PLANNED {
        for probes in layout.probe_counts() {
            let fits = |blocks: u64| {
                predicted_bytes(keys, blocks, layout, probes) <= budget_bytes
                    && expected_fill(keys, blocks, layout, probes) >= MIN_FILL
            };
            if !fits(1) {
                continue;
            }
            // The predicted size grows with the array: bisect for the largest that fits.
            let (mut lo, mut hi) = (1u64, cap);
            if !fits(hi) {
                while hi - lo > 1 {
                    let mid = lo + (hi - lo) / 2;
                    if fits(mid) {
                        lo = mid;
                    } else {
                        hi = mid;
                    }
                }
            } else {
                lo = hi;
            }
            let plan = Plan {
                num_blocks: lo,
                layout,
                probes,
                capacity: keys,
            };
            let fpr = sizing::false_positive_rate(keys, lo, layout, probes);
            // Fewer SIMD rounds win ties (within 1% of the rate).
            let better = match best {
                None => true,
                Some((b, f)) => {
                    fpr < f * 0.99 || (fpr <= f * 1.01 && plan.rounds() < b.rounds() && fpr < f)
                }
            };
            if better {
                best = Some((plan, fpr));
            }
        }
    }
    best.map(|(p, _)| p)
        .ok_or(Error::TransferBudgetTooSmall(transfer_bits_per_key))
}

/// Probe counts [`plan_for_fpr`] tries for the classic filter: the sparse designs that send
/// the fewest bits use few probes, and past 32 the plain designs win anyway.
pub const CLASSIC_MAX_PROBES: u32 = 32;

/// The expected fraction of set bits of a classic filter of `num_bits` bits with `probes`
/// probes per key once `keys` keys are in it: `1 - (1 - 1/m)^(kn)`.
///
/// ```
/// let q = blockbloom::compressed::classic_expected_fill(1000, 14_000, 2);
/// assert!((q - (1.0 - (-2.0f64 / 14.0).exp())).abs() < 1e-4);
/// ```
pub fn classic_expected_fill(keys: u64, num_bits: u64, probes: u32) -> f64 {
    classic::exact_fill(num_bits, probes, keys)
}

/// The predicted size in bytes of [`ClassicBloomFilter::to_compressed_bytes`] for a classic
/// filter of this design holding `keys` keys: as [`predicted_bytes`], at the classic filter's
/// [`classic_expected_fill`].
pub fn classic_predicted_bytes(keys: u64, num_bits: u64, probes: u32) -> f64 {
    let array_bytes = num_bits.div_ceil(64) as f64 * 8.0;
    let q = classic_expected_fill(keys, num_bits, probes);
    FIXED_BYTES
        + BYTES_PER_CODEC_BLOCK * (array_bytes / CODEC_BLOCK).ceil()
        + array_bytes * codec_bits_per_bit(q)
}

/// A design for the compressed transfer form: which filter, and its shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TransferDesign {
    /// The blocked filter: `BloomFilter::builder()` with this plan's block count, layout and
    /// probes ([`TransferPlan::build_blocked`]).
    Blocked(Plan),
    /// The classic filter: `ClassicBloomFilter::new(num_bits, probes)`.
    Classic {
        /// `m`, bits of the array.
        num_bits: u64,
        /// `k`, probes per key.
        probes: u32,
    },
}

/// What [`plan_for_fpr`] found: the design sending the fewest predicted bytes at the target.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TransferPlan {
    /// The filter and its shape.
    pub design: TransferDesign,
    /// Keys the design is for.
    pub capacity: u64,
    /// The model false-positive rate at `capacity` keys (at most the target).
    pub fpr: f64,
    /// Predicted bytes of `to_compressed_bytes` at `capacity` keys, headers included.
    pub predicted_bytes: f64,
}

impl TransferPlan {
    /// Predicted transferred bits per key.
    pub fn transfer_bits_per_key(&self) -> f64 {
        self.predicted_bytes * 8.0 / self.capacity as f64
    }

    /// Bits of the array in memory per key (what the receiver holds).
    pub fn array_bits_per_key(&self) -> f64 {
        let bits = match self.design {
            TransferDesign::Blocked(p) => p.num_blocks * BLOCK_BITS as u64,
            TransferDesign::Classic { num_bits, .. } => num_bits,
        };
        bits as f64 / self.capacity as f64
    }

    /// The empty blocked filter of a [`TransferDesign::Blocked`] plan, seed 0; `None` for a
    /// classic design.
    ///
    /// # Errors
    /// The builder's allocation and kernel errors.
    pub fn build_blocked(&self) -> Result<Option<BloomFilter>, Error> {
        let TransferDesign::Blocked(p) = self.design else {
            return Ok(None);
        };
        BloomFilter::builder()
            .capacity(self.capacity)
            .size_in_bytes(p.num_blocks * (BLOCK_BITS / 8) as u64)
            .layout(p.layout)
            .probes(p.probes)
            .build()
            .map(Some)
    }

    /// The empty classic filter of a [`TransferDesign::Classic`] plan, seed 0; `None` for a
    /// blocked design.
    ///
    /// # Errors
    /// [`ClassicBloomFilter::new`]'s errors.
    pub fn build_classic(&self) -> Result<Option<ClassicBloomFilter>, Error> {
        let TransferDesign::Classic { num_bits, probes } = self.design else {
            return Ok(None);
        };
        ClassicBloomFilter::new(num_bits, probes).map(Some)
    }
}

/// The inverse of [`plan`]: the design with the smallest predicted compressed size
/// ([`predicted_bytes`], [`classic_predicted_bytes`]) whose model false-positive rate at
/// `capacity` keys is at most `fpr`, among the blocked filter's layouts and probe counts and
/// the classic filter with 1 to [`CLASSIC_MAX_PROBES`] probes (exact rate
/// `(1 - (1 - 1/m)^(kn))^k`); with an array of at most [`MAX_ARRAY_FACTOR`] times the
/// textbook filter's `-ln(fpr) / ln(2)^2` bits per key, and an expected fill from
/// [`MIN_FILL`] (below it the size model fails) to [`MAX_FILL`].
///
/// For each shape the smallest array that meets the target sends the fewest bytes (a larger
/// array is sparser, but for a fixed probe count its compressed size still grows), so each
/// shape is one bisection. The blocked filter is kept unless the classic one sends over 1%
/// fewer bytes: it queries faster.
///
/// Mitzenmacher's gains at 8 transferred bits per key come from 1 or 2 probes on a sparse
/// classic array; with zstd (whole-bit Huffman codes, no arithmetic coding) the 1-probe
/// designs are too sparse to pay, but 2 and 3 probes do. The family report
/// (`blockbloom-perf family`) compares the plans with the paper's designs.
///
/// ```
/// use blockbloom::compressed::{self, TransferDesign};
///
/// let n = 100_000;
/// let p = compressed::plan_for_fpr(n, 0.02)?;
/// assert!(p.fpr <= 0.02);
/// // Fewer bits on the wire than the plain filter holds in memory for the same rate.
/// let plain = blockbloom::sizing::plan(n, 0.02)?;
/// assert!(p.transfer_bits_per_key() < plain.bits_per_key());
/// if let TransferDesign::Classic { num_bits, probes } = p.design {
///     assert!(probes <= 4 && num_bits > 8 * n);
/// }
/// # Ok::<(), blockbloom::Error>(())
/// ```
///
/// # Errors
/// [`Error::InvalidFpr`] unless `fpr` is in `[sizing::MIN_FPR, 1)`;
/// [`Error::InvalidParameter`] for a capacity of 0; [`Error::NoTransferDesign`] if no design
/// meets the target within the limits.
pub fn plan_for_fpr(capacity: u64, fpr: f64) -> Result<TransferPlan, Error> {
    sizing::check_fpr(fpr)?;
    let textbook = -fpr.ln() / (core::f64::consts::LN_2 * core::f64::consts::LN_2);
    plan_for_fpr_with_array_limit(capacity, fpr, MAX_ARRAY_FACTOR * textbook)
}

/// [`plan_for_fpr`] with an explicit cap on the array's bits per key (the receiver's memory).
///
/// ```
/// let p = blockbloom::compressed::plan_for_fpr_with_array_limit(100_000, 0.01, 12.0)?;
/// assert!(p.array_bits_per_key() <= 12.0 && p.fpr <= 0.01);
/// # Ok::<(), blockbloom::Error>(())
/// ```
///
/// # Errors
/// As [`plan_for_fpr`], and [`Error::InvalidBitsPerKey`] for a cap that is not finite and
/// positive.
pub fn plan_for_fpr_with_array_limit(
    capacity: u64,
    fpr: f64,
    max_array_bits_per_key: f64,
) -> Result<TransferPlan, Error> {
    sizing::check_fpr(fpr)?;
    if !max_array_bits_per_key.is_finite() || max_array_bits_per_key <= 0.0 {
        return Err(Error::InvalidBitsPerKey(max_array_bits_per_key));
    }
    if capacity == 0 {
        return Err(Error::InvalidParameter {
            name: "capacity",
            value: 0.0,
            expected: "at least 1 key",
        });
    }
    let keys = capacity;
    let max_bits = (max_array_bits_per_key * keys as f64).floor();
    let mut best: Option<TransferPlan> = None;
    let mut consider = |candidate: TransferPlan| {
        let better = match &best {
            None => true,
            Some(b) => match (b.design, candidate.design) {
                // The blocked filter queries faster: the classic one must win by over 1%.
                (TransferDesign::Blocked(_), TransferDesign::Classic { .. }) => {
                    candidate.predicted_bytes < b.predicted_bytes * 0.99
                }
                (TransferDesign::Classic { .. }, TransferDesign::Blocked(_)) => {
                    candidate.predicted_bytes <= b.predicted_bytes * 1.01
                }
                _ => candidate.predicted_bytes < b.predicted_bytes,
            },
        };
        if better {
            best = Some(candidate);
        }
    };

    let block_cap = ((max_bits / BLOCK_BITS as f64) as u64).min(MAX_BLOCKS);
    if block_cap >= 1 {
        for layout in Layout::PLANNED {
            for probes in layout.probe_counts() {
                let rate = |blocks: u64| sizing::false_positive_rate(keys, blocks, layout, probes);
                let Some(blocks) = smallest(block_cap, |b| rate(b) <= fpr) else {
                    continue;
                };
                let q = expected_fill(keys, blocks, layout, probes);
                if !(MIN_FILL..=MAX_FILL).contains(&q) {
                    continue; // a larger array is sparser still: below MIN_FILL, none fits
                }
                consider(TransferPlan {
                    design: TransferDesign::Blocked(Plan {
                        num_blocks: blocks,
                        layout,
                        probes,
                        capacity: keys,
                    }),
                    capacity: keys,
                    fpr: rate(blocks),
                    predicted_bytes: predicted_bytes(keys, blocks, layout, probes),
                });
            }
        }
    }

    let bit_cap = (max_bits as u64).min(classic::MAX_BITS);
    for probes in 1..=CLASSIC_MAX_PROBES {
        let rate = |m: u64| classic_expected_fill(keys, m, probes).powi(probes as i32);
        let Some(m) = smallest(bit_cap, |m| rate(m) <= fpr) else {
            continue;
        };
        if !(MIN_FILL..=MAX_FILL).contains(&classic_expected_fill(keys, m, probes)) {
            continue;
        }
        consider(TransferPlan {
            design: TransferDesign::Classic {
                num_bits: m,
                probes,
            },
            capacity: keys,
            fpr: rate(m),
            predicted_bytes: classic_predicted_bytes(keys, m, probes),
        });
    }
    best.ok_or(Error::NoTransferDesign {
        fpr,
        max_array_bits_per_key,
    })
}

/// The smallest `x` in `1..=cap` with `ok(x)`, for an `ok` that stays true once true.
fn smallest(cap: u64, ok: impl Fn(u64) -> bool) -> Option<u64> {
    if cap == 0 || !ok(cap) {
        return None;
    }
    let (mut lo, mut hi) = (0u64, cap); // ok(hi), and not ok(lo) unless lo == 0
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if ok(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}

impl BloomFilter {
    /// An empty filter for `capacity` keys shaped by [`plan`] for a transfer budget of
    /// `transfer_bits_per_key` bits per key in [`to_compressed_bytes`](Self::to_compressed_bytes),
    /// seed 0, on the active kernel.
    ///
    /// ```
    /// let f = blockbloom::BloomFilter::with_transfer_budget(100_000, 16.0)?;
    /// assert_eq!(f.probes(), 4);
    /// assert!(f.size_in_bytes() * 8 > 100_000 * 24); // bigger in memory than on the wire
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`plan`], plus the builder's allocation and kernel errors.
    pub fn with_transfer_budget(
        capacity: u64,
        transfer_bits_per_key: f64,
    ) -> Result<BloomFilter, Error> {
        let p = plan(capacity, transfer_bits_per_key)?;
        BloomFilter::builder()
            .capacity(capacity)
            .size_in_bytes(p.num_blocks * (BLOCK_BITS / 8) as u64)
            .layout(p.layout)
            .probes(p.probes)
            .build()
    }

    /// The filter in its compressed transfer form: a format-family envelope (kind
    /// [`kind::COMPRESSED`]) around a zstd frame of [`to_bytes`](Self::to_bytes). The same
    /// filter always gives the same bytes (fixed codec and level).
    ///
    /// ```
    /// let mut f = blockbloom::BloomFilter::with_transfer_budget(10_000, 16.0)?;
    /// f.insert_batch(&(0..10_000u64).collect::<Vec<_>>());
    /// let wire = f.to_compressed_bytes()?;
    /// assert!(wire.len() < f.to_bytes().len() * 2 / 3);
    /// assert_eq!(blockbloom::BloomFilter::from_compressed_bytes(&wire)?, f);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::Codec`] if the codec fails (it allocates its own memory).
    pub fn to_compressed_bytes(&self) -> Result<Vec<u8>, Error> {
        compress(
            (self.meta().seed, self.key_hash()),
            self.encoded_len() as u64,
            Inner::Plain,
            |enc| self.write_to(enc),
        )
    }

    /// Decodes the compressed transfer form.
    ///
    /// **Cost of a payload.** Memory grows only as decompressed data arrives, doubling with
    /// what has arrived and capped at the size the envelope declares (at most 256 GiB plus a
    /// header), so it is at most the declared size. Time is linear in the declared size: each
    /// decompressed byte is produced, checksummed and copied into the blocks once, and the
    /// growing buffer is copied at most once per doubling. zstd's ratio is unbounded for
    /// repetitive data, so a few KiB can declare (and cost) gigabytes: a 16 KiB payload
    /// declaring a 512 MiB empty filter is a valid filter. For input from an untrusted peer,
    /// use [`from_compressed_bytes_limited`](Self::from_compressed_bytes_limited), which
    /// refuses a declared size above its limit before decompressing anything.
    /// (`cargo run --release -p blockbloom-perf -- readers` measures the cost per MiB.)
    ///
    /// # Errors
    /// The envelope's errors ([`Error::BadMagic`], [`Error::Truncated`],
    /// [`Error::ChecksumMismatch`], [`Error::WrongKind`], ...), [`Error::InvalidHeader`] for an
    /// unknown codec or inconsistent fields, [`Error::Codec`] for a stream zstd rejects, and
    /// every error of [`BloomFilter::read_from`] for the decompressed filter. Never a panic.
    pub fn from_compressed_bytes(bytes: &[u8]) -> Result<BloomFilter, Error> {
        BloomFilter::from_compressed_bytes_limited(bytes, u64::MAX)
    }

    /// [`from_compressed_bytes`](Self::from_compressed_bytes) that refuses, before
    /// decompressing anything, a filter declaring more than `max_decompressed` bytes
    /// (header plus blocks), and never decompresses more than it declares.
    ///
    /// ```
    /// use blockbloom::{BloomFilter, Error};
    /// let f = BloomFilter::with_transfer_budget(10_000, 16.0)?;
    /// let wire = f.to_compressed_bytes()?;
    /// let err = BloomFilter::from_compressed_bytes_limited(&wire, 4096).unwrap_err();
    /// assert!(matches!(err, Error::DecompressedTooLarge { limit: 4096, .. }));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`from_compressed_bytes`](Self::from_compressed_bytes), plus
    /// [`Error::DecompressedTooLarge`].
    pub fn from_compressed_bytes_limited(
        bytes: &[u8],
        max_decompressed: u64,
    ) -> Result<BloomFilter, Error> {
        decompress(
            bytes,
            max_decompressed,
            Inner::Plain,
            |r| BloomFilter::read_from(r),
            |f| (f.encoded_len() as u64, f.meta().seed, f.key_hash()),
        )
    }
}

impl ClassicBloomFilter {
    /// The classic filter in the compressed transfer form: the same envelope as
    /// [`BloomFilter::to_compressed_bytes`] (kind [`kind::COMPRESSED`], field 1 naming the
    /// classic filter) around a zstd frame of [`to_bytes`](Self::to_bytes). A sparse classic
    /// filter with few probes is what [`plan_for_fpr`] picks when it sends the fewest bytes.
    ///
    /// ```
    /// use blockbloom::ClassicBloomFilter;
    /// // 14 bits per key in memory, 2 probes: about 13% of the bits set.
    /// let mut f = ClassicBloomFilter::new(14 * 10_000, 2)?;
    /// f.insert_batch(&(0..10_000u64).collect::<Vec<_>>());
    /// let wire = f.to_compressed_bytes()?;
    /// assert!(wire.len() * 8 < 9 * 10_000); // under 9 bits per key on the wire
    /// assert_eq!(ClassicBloomFilter::from_compressed_bytes_limited(&wire, 1 << 20)?, f);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::Codec`] if the codec fails.
    pub fn to_compressed_bytes(&self) -> Result<Vec<u8>, Error> {
        compress(
            (self.seed(), KeyHash::Xxh3),
            self.encoded_len() as u64,
            Inner::Classic,
            |enc| self.write_to(enc),
        )
    }

    /// Decodes the compressed transfer form of a classic filter. The cost of a payload is as
    /// for [`BloomFilter::from_compressed_bytes`]: prefer
    /// [`from_compressed_bytes_limited`](Self::from_compressed_bytes_limited) for untrusted
    /// input.
    ///
    /// # Errors
    /// As [`BloomFilter::from_compressed_bytes`], with [`ClassicBloomFilter::read_from`]'s
    /// errors for the decompressed filter; [`Error::WrongKind`] for the compressed form of a
    /// plain filter.
    pub fn from_compressed_bytes(bytes: &[u8]) -> Result<ClassicBloomFilter, Error> {
        ClassicBloomFilter::from_compressed_bytes_limited(bytes, u64::MAX)
    }

    /// [`from_compressed_bytes`](Self::from_compressed_bytes) that refuses, before
    /// decompressing anything, a filter declaring more than `max_decompressed` bytes.
    ///
    /// ```
    /// use blockbloom::{BloomFilter, ClassicBloomFilter, Error};
    /// let plain = BloomFilter::with_transfer_budget(1000, 16.0)?.to_compressed_bytes()?;
    /// let err = ClassicBloomFilter::from_compressed_bytes_limited(&plain, 1 << 20).unwrap_err();
    /// assert!(matches!(err, Error::WrongKind { .. }));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`from_compressed_bytes`](Self::from_compressed_bytes), plus
    /// [`Error::DecompressedTooLarge`].
    pub fn from_compressed_bytes_limited(
        bytes: &[u8],
        max_decompressed: u64,
    ) -> Result<ClassicBloomFilter, Error> {
        decompress(
            bytes,
            max_decompressed,
            Inner::Classic,
            |r| ClassicBloomFilter::read_from(r),
            |f| (f.encoded_len() as u64, f.seed(), KeyHash::Xxh3),
        )
    }
}

/// The filter a compressed payload holds (the envelope's field 1).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Inner {
    /// The plain filter's version-1 encoding (field 1 is 0: the form's first meaning).
    Plain,
    /// The classic filter's encoding (field 1 is its layout id).
    Classic,
}

impl Inner {
    fn field(self) -> u64 {
        match self {
            Inner::Plain => 0,
            Inner::Classic => kind::CLASSIC as u64,
        }
    }

    fn from_field(field: u64) -> Option<Inner> {
        match field {
            0 => Some(Inner::Plain),
            f if f == kind::CLASSIC as u64 => Some(Inner::Classic),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Inner::Plain => "compressed plain Bloom filter",
            Inner::Classic => "compressed classic Bloom filter",
        }
    }

    /// Whether `len` bytes can be this filter's encoding: the plain filter is 64 + 64 x blocks
    /// for 1 <= blocks <= 2^32, the classic filter 64 + 8 x words for 1 <= words <= 2^37.
    fn valid_len(self, len: u64) -> bool {
        let header = HEADER_BYTES as u64;
        let (unit, most) = match self {
            Inner::Plain => ((BLOCK_BITS / 8) as u64, MAX_BLOCKS),
            Inner::Classic => (8, classic::MAX_BITS / 64),
        };
        len >= header + unit && len <= header + most * unit && (len - header).is_multiple_of(unit)
    }
}

/// A filter's encoding of `raw_len` bytes, written by `write`, in the compressed form; the
/// envelope repeats the filter's seed and key hash.
fn compress(
    (seed, hash): (u64, KeyHash),
    raw_len: u64,
    inner: Inner,
    write: impl FnOnce(&mut zstd::stream::write::Encoder<'static, Vec<u8>>) -> Result<(), Error>,
) -> Result<Vec<u8>, Error> {
    let codec = |e: std::io::Error| Error::Codec(e.to_string());
    let mut enc = zstd::stream::write::Encoder::new(Vec::new(), ZSTD_LEVEL).map_err(codec)?;
    // The content size in the frame header lets zstd size its window to small filters.
    enc.set_pledged_src_size(Some(raw_len)).map_err(codec)?;
    enc.include_contentsize(true).map_err(codec)?;
    enc.include_checksum(false).map_err(codec)?; // the envelope and inner checksums cover it
    enc.include_dictid(false).map_err(codec)?;
    write(&mut enc)?;
    let frame = enc.finish().map_err(codec)?;
    Ok(Compressed {
        seed,
        hash,
        raw_len,
        inner,
        frame,
    }
    .to_bytes())
}

/// Decodes the compressed form of an `inner` filter with `read` (which reads exactly one
/// filter); `len_and_seed` gives the decoded filter's encoded length, seed and key hash.
fn decompress<T>(
    bytes: &[u8],
    max_decompressed: u64,
    inner: Inner,
    read: impl FnOnce(&mut dyn Read) -> Result<T, Error>,
    len_and_seed: impl FnOnce(&T) -> (u64, u64, KeyHash),
) -> Result<T, Error> {
    let c = Compressed::from_bytes(bytes)?;
    if c.inner != inner {
        return Err(Error::WrongKind {
            expected: inner.name(),
            found: c.inner.name(),
        });
    }
    let declared = c.raw_len;
    if declared > max_decompressed {
        return Err(Error::DecompressedTooLarge {
            declared,
            limit: max_decompressed,
        });
    }
    let decoder = zstd::stream::read::Decoder::with_buffer(&c.frame[..])
        .map_err(|e| Error::Codec(e.to_string()))?;
    let mut stream = Tracked {
        inner: decoder.single_frame(),
        error: None,
    };
    stream
        .inner
        .window_log_max(WINDOW_LOG_MAX)
        .map_err(|e| Error::Codec(e.to_string()))?;
    // `read` reads exactly what the inner header states, in bounded steps; `take` stops it at
    // the declared length whatever that header says.
    let decoded = read(&mut (&mut stream).take(declared));
    if let Some(e) = stream.error.take() {
        return Err(Error::Codec(e));
    }
    let f = decoded?;
    let (len, seed, hash) = len_and_seed(&f);
    if len != declared {
        return Err(Error::InvalidHeader(
            "decompressed filter is shorter than the declared length",
        ));
    }
    if seed != c.seed {
        return Err(Error::InvalidHeader(
            "the envelope's seed differs from the filter's",
        ));
    }
    if hash != c.hash {
        return Err(Error::InvalidHeader(
            "the envelope's hash id differs from the filter's",
        ));
    }
    // Nothing may follow the filter, in the frame or after it.
    let mut probe = [0u8; 1];
    let more = stream.read(&mut probe);
    if let Some(e) = stream.error.take() {
        return Err(Error::Codec(e));
    }
    if more? != 0 {
        return Err(Error::InvalidHeader(
            "the compressed stream holds more than the declared length",
        ));
    }
    if !stream.inner.finish().is_empty() {
        return Err(Error::Codec("bytes after the end of the zstd frame".into()));
    }
    Ok(f)
}

/// The compressed transfer form in the codec: the envelope (the parameter byte is the codec
/// id, field 0 the decompressed length, field 1 the inner filter, field 2 zero) around a zstd
/// frame of the inner filter's encoding.
struct Compressed {
    seed: u64,
    hash: KeyHash,
    raw_len: u64,
    inner: Inner,
    frame: Vec<u8>,
}

impl Encoded for Compressed {
    const KIND: u8 = kind::COMPRESSED;
    const HASHES: &'static [KeyHash] = &KeyHash::ALL;

    fn envelope(&self) -> Envelope {
        Envelope {
            kind: kind::COMPRESSED,
            param: CODEC_ZSTD,
            hash: self.hash,
            seed: self.seed,
            fields: [self.raw_len, self.inner.field(), 0],
        }
    }

    fn body_len(&self) -> usize {
        self.frame.len()
    }

    fn body(&self, out: &mut Out<'_>) -> Result<(), Error> {
        out(&self.frame)
    }

    /// Checks the fields (not yet the frame, which the caller decompresses under its limit).
    fn from_parts(env: Envelope, body: &[u8]) -> Result<Compressed, Error> {
        if env.param != CODEC_ZSTD {
            return Err(Error::InvalidHeader(
                "unknown codec id of a compressed filter",
            ));
        }
        if env.fields[2] != 0 {
            return Err(Error::InvalidHeader(
                "reserved field of a compressed filter is not zero",
            ));
        }
        let Some(inner) = Inner::from_field(env.fields[1]) else {
            return Err(Error::InvalidHeader(
                "unknown inner filter of a compressed filter",
            ));
        };
        let declared = env.fields[0];
        if !inner.valid_len(declared) {
            return Err(Error::InvalidHeader(
                "decompressed length is not the size of the inner filter",
            ));
        }
        let mut frame = Vec::new();
        frame
            .try_reserve_exact(body.len())
            .map_err(|_| Error::AllocationFailed {
                bytes: body.len() as u128,
            })?;
        frame.extend_from_slice(body);
        Ok(Compressed {
            seed: env.seed,
            hash: env.hash,
            raw_len: declared,
            inner,
            frame,
        })
    }
}

/// A reader that remembers the codec's error, so it is reported as [`Error::Codec`] rather
/// than as an I/O error of the filter reader.
struct Tracked<R> {
    inner: R,
    error: Option<String>,
}

impl<R: Read> Read for Tracked<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.inner.read(buf).inspect_err(|e| {
            self.error.get_or_insert_with(|| e.to_string());
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_matches_real_filters() {
        for (bits, layout, k) in [
            (28.0, Layout::Sectors4x128, 4),
            (10.0, Layout::Sectors8x64, 8),
        ] {
            let n = 50_000u64;
            let mut f = BloomFilter::builder()
                .capacity(n)
                .bits_per_key(bits)
                .layout(layout)
                .probes(k)
                .build()
                .unwrap();
            f.insert_batch(&(0..n).collect::<Vec<_>>());
            let q = expected_fill(n, f.num_blocks(), layout, k);
            assert!(
                (f.fill_ratio() - q).abs() < 0.005,
                "{} vs {q}",
                f.fill_ratio()
            );
        }
    }

    #[test]
    fn entropy_is_symmetric_and_peaks_at_half() {
        assert_eq!(entropy(0.5), 1.0);
        assert!((entropy(0.2) - entropy(0.8)).abs() < 1e-12);
        assert_eq!(entropy(0.0), 0.0);
    }

    #[test]
    fn prediction_grows_with_the_array() {
        let mut last = 0.0;
        for blocks in (100..20_000).step_by(97) {
            let p = predicted_bytes(50_000, blocks, Layout::Sectors4x128, 4);
            assert!(p > last, "{blocks}");
            last = p;
        }
    }
}
