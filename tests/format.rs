//! The persisted format: round trips, golden files, every decoding error, zero-copy views on a
//! real memory map, and set algebra.

mod common;

use std::io::Write as _;

use blockbloom::layout::Layout;
use blockbloom::{BloomFilter, ByHash, Error, FilterRef, KeyHash};
use quickcheck::quickcheck;

fn filled(capacity: u64, fpr: f64, seed: u64, keys: std::ops::Range<u64>) -> BloomFilter {
    let mut f = BloomFilter::builder()
        .capacity(capacity)
        .fpr(fpr)
        .seed(seed)
        .build()
        .unwrap();
    f.insert_batch(&keys.collect::<Vec<_>>());
    f
}

/// The golden filters: small, fixed, one per layout, on hash id 1 (every filter's hash before
/// id 2); one on hash id 2; one on hash id 3; layout id 3 on hash id 3. Those that name no
/// layout were written when the default was the layout of least memory (`least_memory`).
fn golden() -> Vec<(&'static str, BloomFilter)> {
    let mut a = BloomFilter::builder()
        .capacity(100)
        .fpr(0.01)
        .seed(0x0123_4567_89ab_cdef)
        .layout(Layout::Sectors8x64)
        .key_hash(KeyHash::Xxh3)
        .build()
        .unwrap();
    a.insert_batch(&(0..100u64).collect::<Vec<_>>());
    // What `insert("golden")` hashed before the `Key` trait (the `Hash` route, now `ByHash`).
    a.insert(&ByHash("golden"));
    let mut b = BloomFilter::builder()
        .capacity(50)
        .bits_per_key(20.0)
        .layout(Layout::Sectors4x128)
        .probes(12)
        .key_hash(KeyHash::Xxh3)
        .build()
        .unwrap();
    // `u32` keys as 0.1 hashed them, their 4 bytes (a `u32` is its 64-bit value now).
    let old_u32: Vec<[u8; 4]> = (1000..1050u32).map(u32::to_le_bytes).collect();
    b.insert_batch(&old_u32.iter().map(|k| &k[..]).collect::<Vec<_>>());
    // Hash id 2: byte strings of every length to 40 (4 and 8 bytes take XXH3), 16-byte keys,
    // and integers, each through a batch and a single-key method.
    let mut c = BloomFilter::builder()
        .capacity(200)
        .fpr(0.01)
        .seed(0x0123_4567_89ab_cdef)
        .key_hash(KeyHash::Aesh)
        .least_memory()
        .build()
        .unwrap();
    let text = "the quick brown fox jumps over the lazy dog";
    let strs: Vec<&str> = (0..=40).map(|n| &text[..n]).collect();
    c.insert_batch(&strs);
    c.insert_batch(&(0..40u128).map(|i| i << 64 | i).collect::<Vec<_>>());
    c.insert_batch(&(0..40u64).collect::<Vec<_>>());
    c.insert("golden, hash id 2");
    c.insert(&0xfeed_u128);
    // Hash ids 3 and 4: the same keys (4, 8 and 16 bytes take MX32-64 or MM64) and `u32` keys
    // (as their 4 bytes, as 0.1 hashed them).
    let fixed_width = |hash: KeyHash| {
        let mut d = BloomFilter::builder()
            .capacity(250)
            .fpr(0.01)
            .seed(0x0123_4567_89ab_cdef)
            .key_hash(hash)
            .least_memory()
            .build()
            .unwrap();
        d.insert_batch(&strs);
        d.insert_batch(&(0..40u128).map(|i| i << 64 | i).collect::<Vec<_>>());
        d.insert_batch(&(0..40u64).collect::<Vec<_>>());
        let old_u32: Vec<[u8; 4]> = (0..40u32).map(|i| (i << 20).to_le_bytes()).collect();
        d.insert_batch(&old_u32.iter().map(|k| &k[..]).collect::<Vec<_>>());
        d.insert(&format!("golden, hash id {}", hash.id()));
        d.insert(&0xfeed_u128);
        d.insert_bytes(&7u32.to_le_bytes());
        d
    };
    let d = fixed_width(KeyHash::Mx32);
    // Layout id 3 (8x32) on hash id 3: keys in both halves of the blocks, batch and single.
    let mut e = BloomFilter::builder()
        .capacity(300)
        .fpr(0.01)
        .seed(0x0123_4567_89ab_cdef)
        .layout(Layout::Sectors8x32)
        .key_hash(KeyHash::Mx32)
        .build()
        .unwrap();
    e.insert_batch(&(0..200u64).collect::<Vec<_>>());
    e.insert_batch(&strs);
    e.insert("golden, layout 8x32");
    e.insert(&0xfeed_u128);
    // Integers narrower than 64 bits as 0.1 hashed them, before they became their 64-bit value:
    // their little-endian bytes of their own width, on hash id 2. `insert_into` wrote the file
    // through 0.1's `insert(&v)`; it writes the same bits through the bytes now.
    let mut g = BloomFilter::builder()
        .capacity(600)
        .fpr(0.01)
        .seed(0x0123_4567_89ab_cdef)
        .key_hash(KeyHash::Aesh)
        .layout(Layout::Sectors8x64)
        .build()
        .unwrap();
    for k in narrow_keys() {
        k.insert_into(&mut g);
    }
    // Integers as their 64-bit values, at every width, on hash ids 2, 3 and 4:
    // `python/tests/test_rust_interop.py` rebuilds both from NumPy, pyarrow and `int` keys.
    let ints = |hash: KeyHash| {
        let mut f = BloomFilter::builder()
            .capacity(64)
            .fpr(0.001)
            .seed(0x0123_4567_89ab_cdef)
            .key_hash(hash)
            .least_memory()
            .build()
            .unwrap();
        f.insert_batch(&[-128i8, -1, 0, 1, 5, 127]);
        f.insert_batch(&[200u8, 255]);
        f.insert_batch(&[-32768i16, 300]);
        f.insert_batch(&[65535u16]);
        f.insert_batch(&[i32::MIN, 1 << 20]);
        f.insert_batch(&[u32::MAX]);
        f.insert_batch(&[-(1i64 << 40), i64::MAX]);
        f.insert_batch(&[u64::MAX - 1]);
        f.insert(&-7i16);
        f.insert(&9u8);
        f
    };
    vec![
        ("v1-ints-aesh.bin", ints(KeyHash::Aesh)),
        ("v1-ints-mx32.bin", ints(KeyHash::Mx32)),
        ("v1-ints-moremur.bin", ints(KeyHash::Moremur)),
        ("v1-moremur.bin", fixed_width(KeyHash::Moremur)),
        ("v1-narrow-keys.bin", g),
        ("v1-8x64.bin", a),
        ("v1-4x128.bin", b),
        ("v1-aesh.bin", c),
        ("v1-mx32.bin", d),
        ("v1-8x32.bin", e),
    ]
}

/// The keys of `v1-narrow-keys.bin`: each with the width it was inserted at.
#[derive(Clone, Copy, Debug)]
enum Narrow {
    U8(u8),
    I16(i16),
    U32(u32),
    I32(i32),
}

fn narrow_keys() -> Vec<Narrow> {
    let mut keys: Vec<Narrow> = (0..=255u8).step_by(3).map(Narrow::U8).collect();
    keys.extend((-50..50i16).map(|i| Narrow::I16(i * 301)));
    keys.extend((0..150u32).map(|i| Narrow::U32(i.wrapping_mul(0x9e37_79b9))));
    keys.extend((-100..100i32).map(|i| Narrow::I32(i * 7919)));
    keys
}

impl Narrow {
    /// The key's little-endian bytes of its own width.
    fn le_bytes(self) -> Vec<u8> {
        match self {
            Narrow::U8(v) => v.to_le_bytes().to_vec(),
            Narrow::I16(v) => v.to_le_bytes().to_vec(),
            Narrow::U32(v) => v.to_le_bytes().to_vec(),
            Narrow::I32(v) => v.to_le_bytes().to_vec(),
        }
    }

    fn insert_into(self, f: &mut BloomFilter) {
        f.insert_bytes(&self.le_bytes());
    }
}

#[test]
fn golden_files_pin_version_1() {
    for (name, f) in golden() {
        let stored = common::golden_file(name, &f.to_bytes());
        let g = BloomFilter::from_bytes(&stored).unwrap();
        assert_eq!(f, g);
        assert_eq!(g.target_fpr(), f.target_fpr());
        assert_eq!(g.capacity(), f.capacity());
        assert_eq!(g.key_hash(), f.key_hash());
        assert_eq!(stored[12], f.key_hash().id());
    }
}

/// `try_to_bytes` (reserved fallibly) gives `to_bytes`' bytes on every kind.
#[test]
fn try_to_bytes_is_to_bytes() {
    use blockbloom::{
        ClassicBloomFilter, CountingBloomFilter, DeletableBloomFilter, ScalableBloomFilter,
    };
    for (_, f) in golden() {
        assert_eq!(f.try_to_bytes().unwrap(), f.to_bytes());
    }
    let mut c = CountingBloomFilter::with_capacity(100, 0.01).unwrap();
    c.insert(&1u64);
    assert_eq!(c.try_to_bytes().unwrap(), c.to_bytes());
    let d = DeletableBloomFilter::with_capacity(100, 0.01).unwrap();
    assert_eq!(d.try_to_bytes().unwrap(), d.to_bytes());
    let mut s = ScalableBloomFilter::new(10, 0.01).unwrap();
    s.insert_batch(&(0..100u64).collect::<Vec<_>>()).unwrap();
    assert_eq!(s.try_to_bytes().unwrap(), s.to_bytes());
    let k = ClassicBloomFilter::new(1000, 4).unwrap();
    assert_eq!(k.try_to_bytes().unwrap(), k.to_bytes());
    let b = blockbloom::BloomierFilter::build(&[(1u64, 1u64)], 1, 8).unwrap();
    assert_eq!(b.try_to_bytes().unwrap(), b.to_bytes());
}

#[test]
fn round_trips_every_shape_and_tier() {
    for layout in Layout::ALL {
        for k in layout.probe_counts() {
            for isa in common::tiers() {
                let mut f = BloomFilter::builder()
                    .capacity(2000)
                    .bits_per_key(12.0)
                    .layout(layout)
                    .probes(k)
                    .seed(k as u64)
                    .isa(isa)
                    .build()
                    .unwrap();
                f.insert_batch(&(0..2000u64).collect::<Vec<_>>());
                let bytes = f.to_bytes();
                assert_eq!(bytes.len(), f.encoded_len());
                let g = BloomFilter::from_bytes(&bytes).unwrap();
                assert_eq!(f, g);
                let h = BloomFilter::read_from(&bytes[..]).unwrap();
                assert_eq!(f, h);
            }
        }
    }
}

#[test]
fn read_from_stops_after_one_filter() {
    let a = filled(500, 0.01, 1, 0..500);
    let b = filled(900, 0.001, 2, 0..900);
    let mut stream = Vec::new();
    a.write_to(&mut stream).unwrap();
    b.write_to(&mut stream).unwrap();
    let mut r = &stream[..];
    assert_eq!(BloomFilter::read_from(&mut r).unwrap(), a);
    assert_eq!(BloomFilter::read_from(&mut r).unwrap(), b);
    assert!(r.is_empty());
}

#[test]
fn every_decoding_error_is_typed() {
    let good = filled(1000, 0.01, 7, 0..1000).to_bytes();
    let with = |i: usize, v: u8| {
        let mut b = good.clone();
        b[i] = v;
        b
    };
    let err = |b: &[u8]| BloomFilter::from_bytes(b).unwrap_err();
    assert_eq!(err(&with(0, b'X')), Error::BadMagic);
    assert_eq!(err(b"NOTBLOOM"), Error::BadMagic);
    assert_eq!(err(&with(8, 2)), Error::UnsupportedVersion(2));
    assert_eq!(err(&with(10, 9)), Error::UnsupportedLayout(9));
    assert!(matches!(err(&with(11, 7)), Error::InvalidHeader(_)));
    assert_eq!(err(&with(12, 5)), Error::UnsupportedHash(5));
    assert!(matches!(err(&with(13, 1)), Error::InvalidHeader(_)));
    assert!(matches!(err(&with(60, 1)), Error::InvalidHeader(_)));
    // Block count 0, and more than 2^32.
    let mut zero = good.clone();
    zero[24..32].copy_from_slice(&0u64.to_le_bytes());
    assert!(matches!(err(&zero), Error::InvalidHeader(_)));
    let mut huge = good.clone();
    huge[24..32].copy_from_slice(&u64::MAX.to_le_bytes());
    assert!(matches!(err(&huge), Error::InvalidHeader(_)));
    // A plausible but enormous block count: truncated, and nothing allocated for it.
    let mut big = good.clone();
    big[24..32].copy_from_slice(&(1u64 << 32).to_le_bytes());
    assert!(matches!(err(&big), Error::Truncated { .. }));
    assert!(matches!(
        BloomFilter::read_from(&big[..]),
        Err(Error::Truncated { .. })
    ));
    // Bad target FPR.
    let mut fpr = good.clone();
    fpr[40..48].copy_from_slice(&2.0f64.to_bits().to_le_bytes());
    assert!(matches!(err(&fpr), Error::InvalidHeader(_)));
    // Truncation at every length, trailing bytes, a flipped bit anywhere.
    for len in [0, 1, 7, 8, 63, 64, 65, good.len() - 1] {
        let e = err(&good[..len]);
        assert!(matches!(e, Error::Truncated { .. }), "{len}: {e:?}");
        let e = BloomFilter::read_from(&good[..len]).unwrap_err();
        assert!(
            matches!(e, Error::Truncated { .. }),
            "read_from {len}: {e:?}"
        );
    }
    let mut long = good.clone();
    long.push(0);
    assert!(matches!(err(&long), Error::TrailingBytes { .. }));
    for i in [48, 100, good.len() - 1] {
        let e = err(&with(i, good[i] ^ 0x10));
        assert!(matches!(e, Error::ChecksumMismatch { .. }), "{i}: {e:?}");
    }
    for e in [err(&with(0, b'X')), err(&good[..10])] {
        assert!(!e.to_string().is_empty());
    }
}

quickcheck! {
    fn arbitrary_bytes_never_panic(bytes: Vec<u8>) -> bool {
        let _ = BloomFilter::from_bytes(&bytes);
        let _ = BloomFilter::read_from(&bytes[..]);
        let _ = FilterRef::from_bytes(&bytes);
        true
    }

    fn corrupted_headers_never_panic(flips: Vec<(u8, u8)>) -> bool {
        let mut b = filled(300, 0.05, 3, 0..300).to_bytes();
        for (i, v) in flips {
            let i = i as usize % 64;
            b[i] ^= v;
        }
        let _ = BloomFilter::from_bytes(&b);
        let _ = BloomFilter::read_from(&b[..]);
        true
    }

    fn union_contains_both_and_commutes(a: Vec<u64>, b: Vec<u64>) -> bool {
        let mk = |keys: &[u64]| {
            let mut f = BloomFilter::builder().capacity(1000).fpr(0.01).build().unwrap();
            f.insert_batch(keys);
            f
        };
        let (fa, fb) = (mk(&a), mk(&b));
        let mut ab = fa.clone();
        ab.union(&fb).unwrap();
        let mut ba = fb.clone();
        ba.union(&fa).unwrap();
        let mut all = a.clone();
        all.extend(&b);
        ab == ba && ab == mk(&all) && all.iter().all(|k| ab.contains(k))
    }

    fn union_associates_and_folds_keep_keys(a: Vec<u64>, b: Vec<u64>, c: Vec<u64>) -> bool {
        let mk = |keys: &[u64]| {
            let mut f = BloomFilter::builder().capacity(4096).bits_per_key(16.0).build().unwrap(); // 128 blocks: even, so it folds
            f.insert_batch(keys);
            f
        };
        let (fa, fb, fc) = (mk(&a), mk(&b), mk(&c));
        let mut left = fa.clone();
        left.union(&fb).unwrap();
        left.union(&fc).unwrap();
        let mut bc = fb.clone();
        bc.union(&fc).unwrap();
        let mut right = fa.clone();
        right.union(&bc).unwrap();
        let folded = left.fold().unwrap();
        left == right && a.iter().chain(&b).chain(&c).all(|k| folded.contains(k))
    }
}

#[test]
fn per_shard_filters_merge_into_the_whole() {
    let keys: Vec<u64> = (0..40_000).map(|i| i * 0x9e37_79b9).collect();
    let mut whole = BloomFilter::with_capacity(40_000, 0.01).unwrap();
    whole.insert_batch(&keys);
    let mut merged = BloomFilter::with_capacity(40_000, 0.01).unwrap();
    for shard in keys.chunks(7_000) {
        let mut f = BloomFilter::with_capacity(40_000, 0.01).unwrap();
        f.insert_batch(shard);
        merged.union(&f).unwrap();
    }
    assert_eq!(merged, whole);
}

#[test]
fn intersect_keeps_common_keys_and_checks_compatibility() {
    let mut a = filled(2000, 0.01, 0, 0..1500);
    let b = filled(2000, 0.01, 0, 1000..2000);
    a.intersect(&b).unwrap();
    assert!((1000..1500u64).all(|k| a.contains(&k)));
    let other = filled(2000, 0.01, 1, 0..10);
    assert_eq!(
        a.union(&other),
        Err(Error::Incompatible("different hash seeds"))
    );
    let bigger = filled(4000, 0.01, 0, 0..10);
    assert_eq!(
        a.intersect(&bigger),
        Err(Error::Incompatible("different block counts"))
    );
}

#[test]
fn fold_equals_building_at_half_the_size() {
    let keys: Vec<u64> = (0..5000).collect();
    let big = BloomFilter::builder()
        .capacity(5000)
        .size_in_bytes(64 * 1000)
        .build()
        .unwrap();
    let mut big = big;
    big.insert_batch(&keys);
    let folded = big.fold().unwrap();
    let mut half = BloomFilter::builder()
        .capacity(5000)
        .size_in_bytes(64 * 500)
        .layout(big.layout())
        .probes(big.probes())
        .build()
        .unwrap();
    half.insert_batch(&keys);
    assert_eq!(folded.blocks(), half.blocks());
    assert!(folded.expected_fpr() > big.expected_fpr());
    let odd = BloomFilter::builder()
        .capacity(10)
        .size_in_bytes(64 * 3)
        .build()
        .unwrap();
    assert!(matches!(odd.fold(), Err(Error::Incompatible(_))));
}

#[test]
fn filter_ref_on_a_real_memory_map() {
    let mut f = filled(50_000, 0.01, 11, 0..50_000);
    f.insert_bytes(b"mapped");
    let path = std::env::temp_dir().join(format!("blockbloom-mmap-{}.bin", std::process::id()));
    {
        let mut file = std::fs::File::create(&path).unwrap();
        f.write_to(&mut file).unwrap();
        file.flush().unwrap();
    }
    let file = std::fs::File::open(&path).unwrap();
    // SAFETY: the file was written above and nothing modifies it while it is mapped.
    let map = unsafe { memmap2::Mmap::map(&file) }.unwrap();
    let view = FilterRef::from_bytes(&map).unwrap();
    assert_eq!(view.num_blocks(), f.num_blocks());
    assert!(view.contains_bytes(b"mapped"));
    let keys: Vec<u64> = (0..60_000).collect();
    let (mut a, mut b) = (vec![false; keys.len()], vec![false; keys.len()]);
    view.contains_batch(&keys, &mut a);
    f.contains_batch(&keys, &mut b);
    assert_eq!(a, b);
    assert_eq!(view.count_batch(&keys), f.count_batch(&keys));
    assert_eq!(view.to_filter(), f);
    drop(map);
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn filter_ref_rejects_misaligned_bytes() {
    let bytes = filled(100, 0.01, 0, 0..100).to_bytes();
    // Place the encoding one byte past a 64-byte boundary.
    let mut buf = vec![0u8; bytes.len() + 128];
    let start = (64 - buf.as_ptr() as usize % 64) % 64 + 1;
    buf[start..start + bytes.len()].copy_from_slice(&bytes);
    let e = FilterRef::from_bytes(&buf[start..start + bytes.len()]).unwrap_err();
    assert!(matches!(e, Error::Misaligned { .. }), "{e:?}");
    assert!(e.to_string().contains("from_bytes"));
    // The copying decoder takes the same bytes.
    assert!(BloomFilter::from_bytes(&buf[start..start + bytes.len()]).is_ok());
}

#[test]
fn fuzz_seed_non_canonical_nan_target_is_rejected() {
    // Found by the `decode_corrupted` fuzz target: a NaN other than the canonical one in the
    // target-FPR field used to decode as "no target" and re-encode differently.
    let bytes = std::fs::read(common::data("fuzz-nan-payload-target-fpr.bin")).unwrap();
    let e = BloomFilter::from_bytes(&bytes).unwrap_err();
    assert!(matches!(e, Error::InvalidHeader(_)), "{e:?}");
    assert!(matches!(
        BloomFilter::read_from(&bytes[..]),
        Err(Error::InvalidHeader(_))
    ));
    // Every filter that decodes re-encodes to the same bytes, budget-sized ones included.
    let budget = BloomFilter::builder()
        .capacity(100)
        .bits_per_key(10.0)
        .build()
        .unwrap();
    let b = budget.to_bytes();
    assert_eq!(BloomFilter::from_bytes(&b).unwrap().to_bytes(), b);
    assert_eq!(b[40..48], 0x7ff8_0000_0000_0000u64.to_le_bytes());
}

/// A reader that hands out at most 1000 bytes a call, and a writer that records its largest
/// write: large encodings go through the codec in bounded chunks both ways.
struct Trickle<'a>(&'a [u8]);

impl std::io::Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(1000).min(self.0.len());
        buf[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}

#[derive(Default)]
struct Recorder {
    bytes: Vec<u8>,
    largest: usize,
}

impl std::io::Write for Recorder {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.largest = self.largest.max(buf.len());
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn large_encodings_stream_in_bounded_chunks() {
    use blockbloom::{CountingBloomFilter, DeletableBloomFilter, ScalableBloomFilter};
    const MIB: usize = 1 << 20;
    let plain = filled(2_000_000, 0.01, 3, 0..200_000);
    assert!(plain.encoded_len() > 2 * MIB);
    let bytes = plain.to_bytes();
    let mut resealed = bytes.clone();
    common::reseal(&mut resealed);
    assert!(resealed == bytes, "the checksum covers every chunk");
    let mut w = Recorder::default();
    plain.write_to(&mut w).unwrap();
    assert!(
        w.bytes == bytes && w.largest <= MIB,
        "largest write {}",
        w.largest
    );
    assert_eq!(BloomFilter::read_from(Trickle(&bytes)).unwrap(), plain);
    let cut = MIB + 1000;
    assert!(matches!(
        BloomFilter::read_from(Trickle(&bytes[..cut])),
        Err(Error::Truncated { needed, got }) if needed == bytes.len() as u128 && got == cut as u128
    ));

    // A kind that nests the plain encoding writes it byte for byte, in chunks too.
    let deletable = DeletableBloomFilter::from_filter(plain.clone(), 64).unwrap();
    let d = deletable.to_bytes();
    assert!(d[64..64 + bytes.len()] == bytes[..]);
    let mut w = Recorder::default();
    deletable.write_to(&mut w).unwrap();
    assert!(
        w.bytes == d && w.largest <= MIB,
        "largest write {}",
        w.largest
    );
    let got = DeletableBloomFilter::read_from(Trickle(&d)).unwrap();
    assert_eq!(got, deletable);

    let mut scalable = ScalableBloomFilter::new(1_000_000, 0.01).unwrap();
    scalable
        .insert_batch(&(0..1_500_000u64).collect::<Vec<_>>())
        .unwrap();
    assert!(scalable.stages().len() == 2 && scalable.encoded_len() > 2 * MIB);
    let s = scalable.to_bytes();
    let mut w = Recorder::default();
    scalable.write_to(&mut w).unwrap();
    assert!(
        w.bytes == s && w.largest <= MIB,
        "largest write {}",
        w.largest
    );
    let got = ScalableBloomFilter::read_from(Trickle(&s)).unwrap();
    assert_eq!(got, scalable);

    let counting = CountingBloomFilter::with_capacity(500_000, 0.01).unwrap();
    assert!(counting.encoded_len() > 2 * MIB);
    let c = counting.to_bytes();
    let mut w = Recorder::default();
    counting.write_to(&mut w).unwrap();
    assert!(
        w.bytes == c && w.largest <= MIB,
        "largest write {}",
        w.largest
    );
    let got = CountingBloomFilter::read_from(Trickle(&c)).unwrap();
    assert_eq!(got, counting);
}
