//! Every kind of the format family (`docs/FORMAT.md`, "The format family") as one value: the
//! header's layout id (byte 10) picks the kind's own decoder, so a file is read exactly as the
//! library reads that kind, with its typed errors.
//!
//! An unknown layout id, or bytes that are no filter at all, go to the plain filter's decoder,
//! whose error says what is wrong (`unsupported layout id`, `bad magic`, `truncated`).

use std::io::{self, Read};

use blockbloom::format::{HEADER_BYTES, MAGIC, kind};
use blockbloom::{
    BloomFilter, BloomierFilter, ClassicBloomFilter, CountingBloomFilter, DeletableBloomFilter,
    Error, KeyForm, KeyHash, ScalableBloomFilter,
};

/// A decoded filter file of any kind.
pub enum AnyFilter {
    /// Layout ids 1 and 2.
    Plain(BloomFilter),
    /// Layout id 16.
    Counting(CountingBloomFilter),
    /// Layout id 17.
    Deletable(DeletableBloomFilter),
    /// Layout id 18.
    Scalable(ScalableBloomFilter),
    /// Layout id 19: the plain filter it decompresses to.
    Compressed(BloomFilter),
    /// Layout id 20.
    Bloomier(BloomierFilter),
    /// Layout id 21.
    Classic(ClassicBloomFilter),
    /// Layout id 19 holding a classic filter (field 1 is 21): the filter it decompresses to.
    CompressedClassic(ClassicBloomFilter),
}

/// Reads up to a header's worth of bytes (fewer only at the end of the input).
fn read_head(r: &mut impl Read) -> io::Result<Vec<u8>> {
    let mut head = Vec::with_capacity(HEADER_BYTES);
    r.take(HEADER_BYTES as u64).read_to_end(&mut head)?;
    Ok(head)
}

/// The layout id of a header that starts with the magic, if enough of it is there.
fn layout_id(head: &[u8]) -> Option<u8> {
    (head.len() > 10 && head[..8] == MAGIC).then(|| head[10])
}

/// Bytes the encoding in `head` takes, when the header states it (every kind but the plain
/// filter states its body length in bytes 56..64).
fn stated_len(head: &[u8]) -> Option<u128> {
    let body = head.get(56..64)?;
    let body = u64::from_le_bytes(body.try_into().expect("8 bytes"));
    Some(HEADER_BYTES as u128 + body as u128)
}

impl AnyFilter {
    /// Decodes exactly one filter of any kind from `r`; whatever follows it is reported as
    /// [`Error::TrailingBytes`] (`total` is the input's length, for that message).
    pub fn read_exactly(mut r: impl Read, total: Option<u64>) -> Result<AnyFilter, Error> {
        let head = read_head(&mut r)?;
        let id = layout_id(&head);
        let mut input = io::Cursor::new(&head).chain(&mut r);
        let f = match id {
            Some(kind::COUNTING) => {
                AnyFilter::Counting(CountingBloomFilter::read_from(&mut input)?)
            }
            Some(kind::DELETABLE) => {
                AnyFilter::Deletable(DeletableBloomFilter::read_from(&mut input)?)
            }
            Some(kind::SCALABLE) => {
                AnyFilter::Scalable(ScalableBloomFilter::read_from(&mut input)?)
            }
            Some(kind::BLOOMIER) => AnyFilter::Bloomier(BloomierFilter::read_from(&mut input)?),
            Some(kind::CLASSIC) => AnyFilter::Classic(ClassicBloomFilter::read_from(&mut input)?),
            Some(kind::COMPRESSED) => {
                // The transfer form decodes from a buffer; it is small by construction. Its
                // field 1 (bytes 32..40) names the filter inside.
                let mut bytes = Vec::new();
                input.read_to_end(&mut bytes)?;
                return Ok(if head.get(32) == Some(&kind::CLASSIC) {
                    AnyFilter::CompressedClassic(ClassicBloomFilter::from_compressed_bytes(&bytes)?)
                } else {
                    AnyFilter::Compressed(BloomFilter::from_compressed_bytes(&bytes)?)
                });
            }
            // Plain ids, unknown ids and non-filters: the plain decoder says what is wrong.
            _ => AnyFilter::Plain(BloomFilter::read_from(&mut input)?),
        };
        let mut extra = [0u8; 1];
        if input.read(&mut extra)? > 0 {
            let expected = match &f {
                AnyFilter::Plain(p) => p.encoded_len() as u128,
                _ => stated_len(&head).unwrap_or(0),
            };
            let got = total.map_or(expected + 1, u128::from);
            return Err(Error::TrailingBytes { expected, got });
        }
        Ok(f)
    }

    /// The kind's name, as the library names it.
    pub fn kind_name(&self) -> &'static str {
        let id = match self {
            AnyFilter::Plain(_) => kind::PLAIN_8X64,
            AnyFilter::Counting(_) => kind::COUNTING,
            AnyFilter::Deletable(_) => kind::DELETABLE,
            AnyFilter::Scalable(_) => kind::SCALABLE,
            AnyFilter::Compressed(_) | AnyFilter::CompressedClassic(_) => kind::COMPRESSED,
            AnyFilter::Bloomier(_) => kind::BLOOMIER,
            AnyFilter::Classic(_) => kind::CLASSIC,
        };
        kind::name(id).unwrap_or("filter")
    }

    /// The hash seed every key is hashed with.
    pub fn seed(&self) -> u64 {
        match self {
            AnyFilter::Plain(f) | AnyFilter::Compressed(f) => f.seed(),
            AnyFilter::Counting(f) => f.seed(),
            AnyFilter::Deletable(f) => f.filter().seed(),
            AnyFilter::Scalable(f) => f.seed(),
            AnyFilter::Bloomier(f) => f.seed(),
            AnyFilter::Classic(f) | AnyFilter::CompressedClassic(f) => f.seed(),
        }
    }

    /// The hash the filter gives its keys (the header's hash id): the plain, compressed and
    /// deletable kinds may use either; the others hash with XXH3 (hash id 1).
    pub fn key_hash(&self) -> KeyHash {
        match self {
            AnyFilter::Plain(f) | AnyFilter::Compressed(f) => f.key_hash(),
            AnyFilter::Deletable(f) => f.filter().key_hash(),
            _ => KeyHash::Xxh3,
        }
    }

    /// The hash of a key as the filter hashes it (what `insert_bytes` gives a line's bytes,
    /// `insert(&v)` an integer's value).
    pub fn hash_key(&self, key: KeyForm<'_>) -> u64 {
        key.hash_with(self.key_hash(), self.seed())
    }

    /// Whether a key may be a member (for a Bloomier map: whether it maps to a value).
    pub fn contains_key(&self, key: KeyForm<'_>) -> bool {
        let mut out = [false];
        self.contains_hash_batch(&[self.hash_key(key)], &mut out);
        out[0]
    }

    /// Answers a batch of key hashes ([`hash_key`](Self::hash_key)); one batch call for the plain
    /// kinds, per key for the others.
    pub fn contains_hash_batch(&self, hashes: &[u64], out: &mut [bool]) {
        let each = |f: &dyn Fn(u64) -> bool, out: &mut [bool]| {
            for (o, &h) in out.iter_mut().zip(hashes) {
                *o = f(h);
            }
        };
        match self {
            AnyFilter::Plain(f) | AnyFilter::Compressed(f) => f.contains_hash_batch(hashes, out),
            AnyFilter::Counting(f) => f.contains_hash_batch(hashes, out),
            AnyFilter::Deletable(f) => each(&|h| f.contains_hash(h), out),
            AnyFilter::Scalable(f) => each(&|h| f.contains_hash(h), out),
            AnyFilter::Bloomier(f) => each(&|h| f.get_hash(h).is_some(), out),
            AnyFilter::Classic(f) | AnyFilter::CompressedClassic(f) => {
                each(&|h| f.contains_hash(h), out)
            }
        }
    }

    /// `(field, value)` rows for `info`, after the common ones.
    pub fn info_rows(&self, file_bytes: u64) -> Vec<(String, String)> {
        let mut rows: Vec<(String, String)> = Vec::new();
        let mut add = |k: &str, v: String| rows.push((k.to_string(), v));
        match self {
            AnyFilter::Plain(f) => plain_rows(f, &mut add),
            AnyFilter::Compressed(f) => {
                compressed_rows(f.encoded_len(), file_bytes, &mut add);
                plain_rows(f, &mut add);
            }
            AnyFilter::CompressedClassic(f) => {
                compressed_rows(f.encoded_len(), file_bytes, &mut add);
                classic_rows(f, &mut add);
            }
            AnyFilter::Classic(f) => classic_rows(f, &mut add),
            AnyFilter::Counting(f) => {
                add("layout", f.layout().to_string());
                add("k", f.probes().to_string());
                add("counter bits", f.counter_bits().bits().to_string());
                add("seed", f.seed().to_string());
                add("blocks", f.num_blocks().to_string());
                add("capacity", f.capacity().to_string());
                add("counters", format!("{} bytes", f.size_in_bytes()));
                add("total count", f.total_count().to_string());
                add("saturated", f.saturated_counters().to_string());
                add(
                    "min-increase",
                    if f.min_increase_used() {
                        "used (remove refused)".to_string()
                    } else {
                        "not used".to_string()
                    },
                );
                add("est. keys", format!("{:.0}", f.estimated_len()));
                add(
                    "expected FPR",
                    format!("{:.3e}", f.to_bloom().expected_fpr()),
                );
                add("kernel", f.isa().to_string());
            }
            AnyFilter::Deletable(f) => {
                plain_rows(f.filter(), &mut add);
                add("region bits", f.region_bits().to_string());
                add("regions", f.num_regions().to_string());
                add("collided", f.collided_regions().to_string());
                add(
                    "clean regions",
                    format!(
                        "{:.4}",
                        1.0 - f.collided_regions() as f64 / f.num_regions().max(1) as f64
                    ),
                );
            }
            AnyFilter::Scalable(f) => {
                add("seed", f.seed().to_string());
                add("keys", f.len().to_string());
                add("stages", f.stages().len().to_string());
                add("capacity", f.capacity().to_string());
                add("initial cap.", f.initial_capacity().to_string());
                add("growth", f.growth().to_string());
                add("ratio", f.ratio().to_string());
                add("target FPR", f.target_fpr().to_string());
                add("bits/key", format!("{:.2} at capacity", f.bits_per_key()));
                add("filter bytes", f.size_in_bytes().to_string());
                add("expected FPR", format!("{:.3e}", f.expected_fpr()));
                for (i, s) in f.stages().iter().enumerate() {
                    add(
                        &format!("stage {i}"),
                        format!(
                            "{} blocks, layout {}, k={}, capacity {}, fill {:.4}",
                            s.num_blocks(),
                            s.layout(),
                            s.probes(),
                            s.capacity(),
                            s.fill_ratio()
                        ),
                    );
                }
            }
            AnyFilter::Bloomier(f) => {
                add("seed", f.seed().to_string());
                add("keys", f.len().to_string());
                add("value bits", f.value_bits().to_string());
                add("fingerprint", format!("{} bits", f.fingerprint_bits()));
                add("slots", f.slots().to_string());
                add("table bytes", f.size_in_bytes().to_string());
                add("bits/entry", format!("{:.2}", f.bits_per_entry()));
                add("false pos.", format!("{:.3e}", f.false_positive_rate()));
                add("kernel", f.isa().to_string());
            }
        }
        rows
    }
}

/// The sizes of a compressed file and of the filter it holds.
fn compressed_rows(decompressed: usize, file_bytes: u64, add: &mut impl FnMut(&str, String)) {
    add("compressed", format!("{file_bytes} bytes (zstd)"));
    add(
        "decompressed",
        format!(
            "{decompressed} bytes ({:.1}x)",
            decompressed as f64 / file_bytes.max(1) as f64
        ),
    );
}

/// The classic filter's fields (also the inside of its compressed form).
fn classic_rows(f: &ClassicBloomFilter, add: &mut impl FnMut(&str, String)) {
    let ones = f.count_ones();
    add("m", format!("{} bits", f.num_bits()));
    add("k", f.probes().to_string());
    add("hash", "XXH3-64, double hashing".to_string());
    add("seed", f.seed().to_string());
    add("halvings", f.halvings().to_string());
    add("bytes", f.encoded_len().to_string());
    add(
        "fill ratio",
        format!("{:.4}", ones as f64 / f.num_bits() as f64),
    );
    add("est. keys", format!("{:.0}", f.estimated_len()));
    add("FPR from fill", format!("{:.3e}", f.fill_fpr()));
    add("kernel", f.isa().to_string());
}

/// The plain filter's fields (also the inside of a compressed or deletable filter).
fn plain_rows(f: &BloomFilter, add: &mut impl FnMut(&str, String)) {
    let target = match f.target_fpr() {
        Some(p) => format!("{p}"),
        None => "none (sized by a bit budget)".to_string(),
    };
    add("layout", f.layout().to_string());
    add("k", f.probes().to_string());
    add("hash", "XXH3-64".to_string());
    add("seed", f.seed().to_string());
    add("blocks", f.num_blocks().to_string());
    add("bytes", f.encoded_len().to_string());
    add("capacity", f.capacity().to_string());
    add("target FPR", target);
    add("bits/key", format!("{:.2} at capacity", f.bits_per_key()));
    add("fill ratio", format!("{:.4}", f.fill_ratio()));
    add("est. keys", format!("{:.0}", f.estimated_len()));
    add("expected FPR", format!("{:.3e}", f.expected_fpr()));
    add("kernel", f.isa().to_string());
}
