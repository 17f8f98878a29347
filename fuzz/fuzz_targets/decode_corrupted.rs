//! A valid encoded filter (fuzzer-chosen shape, seed and keys), then fuzzer-chosen edits:
//! byte sets and flips, whole header fields, truncation, insertion, removal, appended bytes,
//! optionally followed by recomputing the checksum (so edited headers and blocks reach the
//! rest of the decoder). Then every decoder, with `blockbloom_fuzz::check_decoders`, plus:
//!
//! * unedited bytes decode to the original filter, header fields included;
//! * edited bytes whose checksum was not recomputed never decode (corruption is detected);
//! * edited bytes that decode re-encode to exactly themselves (checked by `check_decoders`).

#![no_main]

use blockbloom::BloomFilter;
use blockbloom::layout::Layout;
use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
enum Size {
    Fpr(u8),
    BitsPerKey(u8),
    Bytes(u16),
}

#[derive(Arbitrary, Debug)]
enum Edit {
    Set {
        at: u32,
        value: u8,
    },
    Xor {
        at: u32,
        mask: u8,
    },
    /// One of the header's eight 64-bit fields.
    Field {
        index: u8,
        value: u64,
    },
    Truncate {
        len: u32,
    },
    Insert {
        at: u32,
        value: u8,
    },
    Remove {
        at: u32,
    },
    Append(Vec<u8>),
}

#[derive(Arbitrary, Debug)]
struct Input {
    capacity: u16,
    size: Size,
    layout: Option<bool>,
    probes: Option<u8>,
    seed: u64,
    keys: Vec<u64>,
    edits: Vec<Edit>,
    fix_checksum: bool,
    step: u8,
}

const FPRS: [f64; 6] = [0.5, 0.1, 0.01, 0.001, 1e-4, 1e-6];

fuzz_target!(|input: Input| {
    // Small capacities: sizing runs the exact model, slow under the fuzzer's instrumentation.
    let mut b = BloomFilter::builder()
        .capacity(u64::from(input.capacity % 2048))
        .seed(input.seed);
    b = match input.size {
        Size::Fpr(i) => b.fpr(FPRS[i as usize % FPRS.len()]),
        Size::BitsPerKey(bits) => b.bits_per_key(f64::from(bits) / 4.0),
        Size::Bytes(n) => b.size_in_bytes(u64::from(n % 8192)),
    };
    if let Some(l) = input.layout {
        b = b.layout(if l {
            Layout::Sectors8x64
        } else {
            Layout::Sectors4x128
        });
    }
    if let Some(k) = input.probes {
        b = b.probes(u32::from(k % 36));
    }
    // Invalid combinations are the builder's business, tested elsewhere.
    let Ok(mut f) = b.build() else { return };
    if f.num_blocks() > 4096 {
        return; // keep executions fast
    }
    f.insert_batch(&input.keys);
    let original = f.to_bytes();

    let mut bytes = original.clone();
    for e in &input.edits {
        let at = |i: u32, len: usize| i as usize % (len + 1);
        match e {
            Edit::Set { at: i, value } if !bytes.is_empty() => {
                let i = *i as usize % bytes.len();
                bytes[i] = *value;
            }
            Edit::Xor { at: i, mask } if !bytes.is_empty() => {
                let i = *i as usize % bytes.len();
                bytes[i] ^= *mask;
            }
            Edit::Field { index, value } if bytes.len() >= 64 => {
                let i = (*index as usize % 8) * 8;
                bytes[i..i + 8].copy_from_slice(&value.to_le_bytes());
            }
            Edit::Truncate { len } => {
                let n = at(*len, bytes.len());
                bytes.truncate(n);
            }
            Edit::Insert { at: i, value } => {
                let i = at(*i, bytes.len());
                bytes.insert(i, *value);
            }
            Edit::Remove { at: i } if !bytes.is_empty() => {
                let i = *i as usize % bytes.len();
                bytes.remove(i);
            }
            Edit::Append(more) => bytes.extend_from_slice(more),
            _ => {}
        }
    }
    if input.fix_checksum {
        blockbloom_fuzz::fix_checksum(&mut bytes);
    }

    let decoded = blockbloom_fuzz::check_decoders(&bytes, input.step as usize + 1);
    if bytes == original {
        let g = decoded.expect("an unedited filter decodes");
        assert_eq!(g, f);
        assert_eq!(g.capacity(), f.capacity());
        assert_eq!(
            g.target_fpr().map(f64::to_bits),
            f.target_fpr().map(f64::to_bits)
        );
        assert!(input.keys.iter().all(|k| g.contains(k)));
    } else if !input.fix_checksum {
        assert!(
            decoded.is_err(),
            "corrupted bytes decoded without a checksum fix"
        );
    }
});
