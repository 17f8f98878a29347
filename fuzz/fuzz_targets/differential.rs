//! Random operation sequences on one filter per supported kernel tier (`Builder::isa`),
//! the scalar tier first as the reference: batch inserts of `u64`/`u32`/`i64`/`i32` keys and
//! of hashes, single inserts, batch and single queries, counts, union and intersection with a
//! second filter (of the same shape and tier), fold, clear. After every operation all tiers must
//! hold the same bits and have given the same answers, and batch answers must match the
//! single-key answers. At the end the encoding must decode (`from_bytes`, `FilterRef`) to the
//! same filter and answers.

#![no_main]

use blockbloom::layout::Layout;
use blockbloom::{BloomFilter, FilterRef, Isa};
use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
enum Op {
    InsertU64(Vec<u64>),
    InsertU32(Vec<u32>),
    InsertI64(Vec<i64>),
    InsertI32(Vec<i32>),
    InsertI16(Vec<i16>),
    InsertU8(Vec<u8>),
    InsertHashes(Vec<u64>),
    Insert(u64),
    InsertBytes(Vec<u8>),
    QueryU64(Vec<u64>),
    QueryU32(Vec<u32>),
    QueryI8(Vec<i8>),
    QueryHashes(Vec<u64>),
    Contains(u64),
    Union(Vec<u64>),
    Intersect(Vec<u64>),
    Fold,
    Clear,
}

#[derive(Arbitrary, Debug)]
struct Input {
    /// Blocks: 1..=512, or (when `big` is 255) just above the 2 MiB cache-resident
    /// threshold, where the kernels switch to short prefetched chunks. A big filter costs
    /// milliseconds per allocation under the sanitizer, so big runs compare only scalar with
    /// the best tier, on the first 16 operations.
    blocks: u16,
    big: u8,
    layout: bool,
    probes: u8,
    seed: u64,
    ops: Vec<Op>,
}

fn answers_u64(f: &BloomFilter, keys: &[u64]) -> Vec<bool> {
    let mut out = vec![false; keys.len()];
    f.contains_batch(keys, &mut out);
    assert_eq!(f.count_batch(keys), out.iter().filter(|&&b| b).count());
    for (k, b) in keys.iter().zip(&out) {
        assert_eq!(
            f.contains(k),
            *b,
            "batch vs single answer, tier {}",
            f.isa()
        );
    }
    out
}

/// A narrow batch's answers: equal to the single-key answers and to the batch of the same
/// values as `u64`s (an integer is its 64-bit value at every width).
fn answers_narrow<K: blockbloom::BatchKey + Into<i64>>(f: &BloomFilter, keys: &[K]) -> Vec<bool> {
    let mut out = vec![false; keys.len()];
    f.contains_batch(keys, &mut out);
    let wide: Vec<u64> = keys.iter().map(|&k| k.into() as u64).collect();
    assert_eq!(out, answers_u64(f, &wide), "narrow vs u64 batch, tier {}", f.isa());
    out
}

fn answers_u32(f: &BloomFilter, keys: &[u32]) -> Vec<bool> {
    let mut out = vec![false; keys.len()];
    f.contains_batch(keys, &mut out);
    assert_eq!(f.count_batch(keys), out.iter().filter(|&&b| b).count());
    for (k, b) in keys.iter().zip(&out) {
        assert_eq!(
            f.contains(k),
            *b,
            "batch vs single answer, tier {}",
            f.isa()
        );
    }
    out
}

fn answers_hashes(f: &BloomFilter, hashes: &[u64]) -> Vec<bool> {
    let mut out = vec![false; hashes.len()];
    f.contains_hash_batch(hashes, &mut out);
    assert_eq!(
        f.count_hash_batch(hashes),
        out.iter().filter(|&&b| b).count()
    );
    for (h, b) in hashes.iter().zip(&out) {
        assert_eq!(
            f.contains_hash(*h),
            *b,
            "batch vs single answer, tier {}",
            f.isa()
        );
    }
    out
}

fuzz_target!(|input: Input| {
    let layout = if input.layout {
        Layout::Sectors8x64
    } else {
        Layout::Sectors4x128
    };
    let counts: Vec<u32> = layout.probe_counts().collect();
    let probes = counts[input.probes as usize % counts.len()];
    let blocks = if input.big == u8::MAX {
        32_768 + 1 + u64::from(input.blocks % 64)
    } else {
        1 + u64::from(input.blocks % 512)
    };
    let build = |isa: Isa| {
        // Sized for 16 keys a block (32 bits a key): the builder refuses budgets that filter
        // nothing, and the ops may insert far more keys than that anyway.
        BloomFilter::builder()
            .capacity(blocks * 16)
            .size_in_bytes(blocks * 64)
            .layout(layout)
            .probes(probes)
            .seed(input.seed)
            .isa(isa)
            .build()
            .expect("a valid shape")
    };
    // Scalar first: the reference every other tier is compared with.
    let big = input.big == u8::MAX;
    let tiers = if big {
        vec![Isa::Scalar, Isa::detect()]
    } else {
        Isa::supported()
    };
    assert_eq!(tiers[0], Isa::Scalar);
    let ops = &input.ops[..input.ops.len().min(if big { 16 } else { usize::MAX })];
    let mut filters: Vec<BloomFilter> = tiers.iter().map(|&isa| build(isa)).collect();
    for (f, isa) in filters.iter().zip(&tiers) {
        assert_eq!((f.isa(), f.num_blocks()), (*isa, blocks));
    }

    for op in ops {
        let answers: Vec<Vec<bool>> = filters
            .iter_mut()
            .map(|f| match op {
                Op::InsertU64(k) => {
                    f.insert_batch(k);
                    vec![]
                }
                Op::InsertU32(k) => {
                    f.insert_batch(k);
                    vec![]
                }
                Op::InsertI64(k) => {
                    f.insert_batch(k);
                    vec![]
                }
                Op::InsertI32(k) => {
                    f.insert_batch(k);
                    vec![]
                }
                Op::InsertI16(k) => {
                    f.insert_batch(k);
                    vec![]
                }
                Op::InsertU8(k) => {
                    f.insert_batch(k);
                    vec![]
                }
                Op::InsertHashes(h) => {
                    f.insert_hash_batch(h);
                    vec![]
                }
                Op::Insert(k) => {
                    f.insert(k);
                    vec![f.contains(k)]
                }
                Op::InsertBytes(b) => {
                    f.insert_bytes(b);
                    vec![f.contains_bytes(b)]
                }
                Op::QueryU64(k) => answers_u64(f, k),
                Op::QueryU32(k) => answers_u32(f, k),
                Op::QueryI8(k) => answers_narrow(f, k),
                Op::QueryHashes(h) => answers_hashes(f, h),
                Op::Contains(k) => vec![f.contains(k)],
                Op::Union(keys) | Op::Intersect(keys) => {
                    // The current shape (a fold halves the blocks), on the same tier.
                    let mut other = f.clone();
                    other.clear();
                    other.insert_batch(keys);
                    if matches!(op, Op::Union(_)) {
                        f.union(&other).expect("same shape");
                        let found = answers_u64(f, keys);
                        assert!(found.iter().all(|&b| b), "a union lost a key");
                        found
                    } else {
                        f.intersect(&other).expect("same shape");
                        answers_u64(f, keys)
                    }
                }
                Op::Fold => match f.fold() {
                    Ok(g) => {
                        assert_eq!(g.isa(), f.isa());
                        *f = g;
                        vec![true]
                    }
                    Err(_) => vec![false],
                },
                Op::Clear => {
                    f.clear();
                    vec![]
                }
            })
            .collect();
        let (reference, rest) = filters.split_first().expect("scalar");
        for (f, a) in rest.iter().zip(&answers[1..]) {
            assert_eq!(
                a,
                &answers[0],
                "tier {} answers differently from scalar",
                f.isa()
            );
            assert_eq!(f.num_blocks(), reference.num_blocks());
            assert!(
                f.blocks() == reference.blocks(),
                "tier {} holds different bits from scalar after {op:?}",
                f.isa()
            );
        }
        if let Op::InsertU64(k) = op {
            assert!(
                k.iter().all(|k| reference.contains(k)),
                "an inserted key is missing"
            );
        }
    }

    // The encoding round-trips and the zero-copy view answers like the filter (small filters
    // only: the decode targets cover the format).
    if big {
        return;
    }
    let f = &filters[0];
    let bytes = f.to_bytes();
    let g = BloomFilter::from_bytes(&bytes).expect("a filter's own encoding decodes");
    assert_eq!(&g, f);
    let aligned = blockbloom_fuzz::Aligned::new(&bytes, 0);
    let view = FilterRef::from_bytes(aligned.bytes()).expect("aligned encoding views");
    let probe: Vec<u64> = ops
        .iter()
        .filter_map(|op| match op {
            Op::InsertU64(k) | Op::QueryU64(k) | Op::Union(k) | Op::Intersect(k) => Some(k),
            _ => None,
        })
        .flatten()
        .copied()
        .take(4096)
        .collect();
    let mut out = vec![false; probe.len()];
    view.contains_batch(&probe, &mut out);
    for (k, b) in probe.iter().zip(&out) {
        assert_eq!(f.contains(k), *b, "FilterRef answers differently");
    }
});
