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
//! The probe count is at least 4 here (the layouts set 4 or 8 probes per SIMD round), while
//! the paper's best designs at 8 transferred bits per key use 1 or 2: at 8 bits the gain over
//! the plain filter is small, at 16 bits it is real.
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
use crate::filter::BloomFilter;
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
/// above the model (about 8% over it at a fill of 0.064; `blockbloom-perf family` has the table),
/// so the prediction would not hold there.
pub const MIN_FILL: f64 = 0.12;

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
    let per_key = (-hit / num_blocks.max(1) as f64).ln_1p();
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
    for layout in Layout::ALL {
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
        let codec = |e: std::io::Error| Error::Codec(e.to_string());
        let raw_len = self.encoded_len() as u64;
        let mut enc = zstd::stream::write::Encoder::new(Vec::new(), ZSTD_LEVEL).map_err(codec)?;
        // The content size in the frame header lets zstd size its window to small filters.
        enc.set_pledged_src_size(Some(raw_len)).map_err(codec)?;
        enc.include_contentsize(true).map_err(codec)?;
        enc.include_checksum(false).map_err(codec)?; // the envelope and inner checksums cover it
        enc.include_dictid(false).map_err(codec)?;
        self.write_to(&mut enc)?;
        let frame = enc.finish().map_err(codec)?;
        Ok(Compressed {
            seed: self.meta().seed,
            raw_len,
            frame,
        }
        .to_bytes())
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
        let c = Compressed::from_bytes(bytes)?;
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
        // `read_from` reads exactly what the inner header states, in bounded steps; `take`
        // stops it at the declared length whatever that header says.
        let decoded = BloomFilter::read_from((&mut stream).take(declared));
        if let Some(e) = stream.error.take() {
            return Err(Error::Codec(e));
        }
        let f = decoded?;
        if f.encoded_len() as u64 != declared {
            return Err(Error::InvalidHeader(
                "decompressed filter is shorter than the declared length",
            ));
        }
        if f.meta().seed != c.seed {
            return Err(Error::InvalidHeader(
                "the envelope's seed differs from the filter's",
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
}

/// The compressed transfer form in the codec: the envelope (the parameter byte is the codec
/// id, the first field the decompressed length, the others zero) around a zstd frame of the
/// plain encoding.
struct Compressed {
    seed: u64,
    raw_len: u64,
    frame: Vec<u8>,
}

impl Encoded for Compressed {
    const KIND: u8 = kind::COMPRESSED;

    fn envelope(&self) -> Envelope {
        Envelope {
            kind: kind::COMPRESSED,
            param: CODEC_ZSTD,
            seed: self.seed,
            fields: [self.raw_len, 0, 0],
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
        if env.fields[1..] != [0, 0] {
            return Err(Error::InvalidHeader(
                "reserved fields of a compressed filter are not zero",
            ));
        }
        let declared = env.fields[0];
        let block_bytes = (BLOCK_BITS / 8) as u64;
        let most = HEADER_BYTES as u64 + MAX_BLOCKS * block_bytes;
        if declared < HEADER_BYTES as u64 + block_bytes
            || declared > most
            || !declared.is_multiple_of(block_bytes)
        {
            return Err(Error::InvalidHeader(
                "decompressed length is not the size of a plain filter",
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
            raw_len: declared,
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
