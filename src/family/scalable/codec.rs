//! The scalable filter in the codec: the envelope (layout id 18), a 64-byte schedule, then
//! each stage's plain encoding back to back.

// Without `std`, `f64` lacks `ln`, `exp`, ... (with it, or in tests, std's own are found).
#[cfg(not(any(feature = "std", test)))]
use crate::math::F64Math as _;

use alloc::vec::Vec;

use crate::io::Read;
#[cfg(feature = "std")]
use crate::io::Write;

use super::{SCHEDULE_BYTES, ScalableBloomFilter, validate};
use crate::codec::{
    Encoded, Envelope, HEADER_BYTES, Out, decode_slice, kind, read_exact_body, read_streamed,
};
use crate::error::Error;
use crate::filter::BloomFilter;
use crate::hashing::KeyHash;
use crate::layout::MAX_BLOCKS;

impl ScalableBloomFilter {
    /// Bytes of this filter's encoding.
    ///
    /// ```
    /// let f = blockbloom::ScalableBloomFilter::new(1000, 0.01)?;
    /// assert_eq!(f.to_bytes().len(), f.encoded_len());
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn encoded_len(&self) -> usize {
        <Self as Encoded>::encoded_len(self)
    }

    /// The filter in the format family (layout id 18, `docs/FORMAT.md`): the envelope, a
    /// 64-byte schedule, then each stage's plain encoding back to back (64-byte multiples, so
    /// every stage's blocks stay 64-byte aligned).
    ///
    /// ```
    /// use blockbloom::ScalableBloomFilter;
    ///
    /// let mut f = ScalableBloomFilter::new(10, 0.01)?;
    /// f.insert_batch(&(0..100u64).collect::<Vec<_>>())?;
    /// let g = ScalableBloomFilter::from_bytes(&f.to_bytes())?;
    /// assert_eq!(f, g);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn to_bytes(&self) -> Vec<u8> {
        <Self as Encoded>::to_bytes(self)
    }

    /// Writes [`to_bytes`](Self::to_bytes) to `w`.
    ///
    /// ```
    /// let f = blockbloom::ScalableBloomFilter::new(10, 0.01)?;
    /// let mut out = Vec::new();
    /// f.write_to(&mut out)?;
    /// assert_eq!(out, f.to_bytes());
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::Io`] if `w` fails.
    #[cfg(feature = "std")]
    pub fn write_to<W: Write>(&self, w: W) -> Result<(), Error> {
        <Self as Encoded>::write_to(self, w)
    }

    /// Decodes exactly one scalable filter from `bytes`, validating every stage and that the
    /// stages follow the schedule.
    ///
    /// ```
    /// use blockbloom::{Error, ScalableBloomFilter};
    /// let bytes = ScalableBloomFilter::new(10, 0.01)?.to_bytes();
    /// assert!(ScalableBloomFilter::from_bytes(&bytes[..bytes.len() - 1]).is_err());
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    ///
    /// # Errors
    /// The envelope's errors (`BadMagic`, `WrongKind`, `Truncated`, `ChecksumMismatch`, ...),
    /// each stage's, and [`Error::InvalidHeader`] when the parameters, a stage's seed,
    /// capacity or target, the stage count or the key count disagree. Never a panic.
    pub fn from_bytes(bytes: &[u8]) -> Result<ScalableBloomFilter, Error> {
        <Self as Encoded>::from_bytes(bytes)
    }

    /// Reads exactly one scalable filter from `r` (which may hold more after it).
    ///
    /// ```
    /// let f = blockbloom::ScalableBloomFilter::new(10, 0.01)?;
    /// assert_eq!(blockbloom::ScalableBloomFilter::read_from(&f.to_bytes()[..])?, f);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`from_bytes`](Self::from_bytes), plus [`Error::Io`].
    #[cfg(feature = "std")]
    pub fn read_from<R: Read>(r: R) -> Result<ScalableBloomFilter, Error> {
        <Self as Encoded>::read_from(r)
    }
}

impl Encoded for ScalableBloomFilter {
    const KIND: u8 = kind::SCALABLE;

    fn envelope(&self) -> Envelope {
        Envelope {
            kind: kind::SCALABLE,
            param: 0,
            hash: KeyHash::Xxh3,
            seed: self.seed,
            fields: [self.initial_capacity, self.len, self.stages.len() as u64],
        }
    }

    fn body_len(&self) -> usize {
        SCHEDULE_BYTES
            + self
                .stages
                .iter()
                .map(BloomFilter::encoded_len)
                .sum::<usize>()
    }

    fn body(&self, out: &mut Out<'_>) -> Result<(), Error> {
        let mut schedule = [0u8; SCHEDULE_BYTES];
        schedule[0..8].copy_from_slice(&self.growth.to_le_bytes());
        schedule[8..16].copy_from_slice(&self.ratio.to_le_bytes());
        schedule[16..24].copy_from_slice(&self.target_fpr.to_le_bytes());
        out(&schedule)?;
        self.stages.iter().try_for_each(|s| s.encode_to(out))
    }

    fn from_parts(env: Envelope, body: &[u8]) -> Result<ScalableBloomFilter, Error> {
        decode_slice(body, |len, r| decode(env, len, r))
    }

    /// Reads each stage straight into its blocks: memory is the filter plus one chunk.
    fn read_from<R: Read>(r: R) -> Result<ScalableBloomFilter, Error> {
        read_streamed::<Self, R>(r, |env, len, body| decode(env, len, body))
    }
}

/// Decodes a body of `body_len` bytes (as the header declares) from `body`, stage by stage.
fn decode<R: Read>(
    env: Envelope,
    body_len: u64,
    body: &mut R,
) -> Result<ScalableBloomFilter, Error> {
    let bad = Error::InvalidHeader;
    if env.param != 0 {
        return Err(bad("scalable filter: parameter byte is not zero"));
    }
    if body_len < SCHEDULE_BYTES as u64 {
        return Err(bad("scalable filter: body shorter than its schedule"));
    }
    let mut schedule_bytes = [0u8; SCHEDULE_BYTES];
    read_exact_body(body, &mut schedule_bytes)?;
    let f64_at =
        |i: usize| f64::from_le_bytes(schedule_bytes[i..i + 8].try_into().expect("8 bytes"));
    let (growth, ratio, target) = (f64_at(0), f64_at(8), f64_at(16));
    if schedule_bytes[24..] != [0; SCHEDULE_BYTES - 24] {
        return Err(bad("scalable filter: reserved schedule bytes are not zero"));
    }
    let [n0, len, count] = env.fields;
    if validate(n0, target, growth, ratio).is_err() {
        return Err(bad(
            "scalable filter: initial capacity, target, growth or ratio out of range",
        ));
    }
    // Every stage takes at least 128 bytes.
    let mut left = body_len - SCHEDULE_BYTES as u64;
    if count == 0 || count > left / 128 {
        return Err(bad("scalable filter: stage count does not fit the body"));
    }
    // Grown as stages arrive, not from the declared count: a lying header costs nothing.
    let mut stages: Vec<BloomFilter> = Vec::new();
    let mut before = 0u64; // capacity of the stages before the newest
    // The schedule, step by step as `schedule` computes it (linear in the stage count).
    let (mut grown, mut fpr) = (n0 as f64, target * (1.0 - ratio));
    for i in 0..count {
        if i > 0 {
            grown *= growth;
            fpr *= ratio;
        }
        let capacity = grown.ceil() as u64;
        if left < HEADER_BYTES as u64 {
            return Err(bad("scalable filter: a stage is cut short"));
        }
        let mut head = [0u8; HEADER_BYTES];
        read_exact_body(body, &mut head)?;
        let num_blocks = u64::from_le_bytes(head[24..32].try_into().expect("8 bytes"));
        if num_blocks == 0 || num_blocks > MAX_BLOCKS {
            return Err(bad(
                "scalable filter: a stage's block count is out of range",
            ));
        }
        let stage_len = HEADER_BYTES as u64 + num_blocks * 64;
        if stage_len > left {
            return Err(bad("scalable filter: a stage is cut short"));
        }
        let stage = <BloomFilter as Encoded>::read_from((&head[..]).chain(&mut *body))?;
        if stage.seed() != env.seed {
            return Err(bad(
                "scalable filter: a stage's seed differs from the header's",
            ));
        }
        if stage.key_hash() != env.hash {
            return Err(bad(
                "scalable filter: a stage's hash id differs from the header's",
            ));
        }
        if stage.capacity() != capacity
            || stage.target_fpr().map(f64::to_bits) != Some(fpr.to_bits())
        {
            return Err(bad(
                "scalable filter: a stage's capacity or target does not follow the schedule",
            ));
        }
        if i + 1 < count {
            before = before.saturating_add(capacity);
        }
        stages.try_reserve(1).map_err(|_| Error::AllocationFailed {
            bytes: (stages.len() as u128 + 1) * core::mem::size_of::<BloomFilter>() as u128,
        })?;
        stages.push(stage);
        left -= stage_len;
    }
    if left != 0 {
        return Err(bad("scalable filter: bytes after the last stage"));
    }
    let newest_capacity = stages.last().map_or(0, BloomFilter::capacity);
    if len < before || len - before > newest_capacity {
        return Err(bad(
            "scalable filter: key count does not fit the stages' capacities",
        ));
    }
    Ok(ScalableBloomFilter {
        stages,
        initial_capacity: n0,
        growth,
        ratio,
        target_fpr: target,
        seed: env.seed,
        len,
        newest_len: len - before,
    })
}

crate::codec::try_to_bytes!(ScalableBloomFilter);
