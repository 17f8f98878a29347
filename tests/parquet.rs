//! `blockbloom::parquet::SplitBlockFilter` against the reference implementation, the
//! `parquet` crate's `bloom_filter::Sbbf`: same sizes, byte-identical bitsets, same answers;
//! and every kernel tier against the scalar reference.

mod common;

use blockbloom::Isa;
use blockbloom::parquet::{
    BITSET_MAX_BYTES, ParquetValue, SplitBlockFilter, hash_bytes, hash_u32, hash_u64,
    num_bytes_for_ndv_fpp,
};
use common::splitmix64;
use parquet::bloom_filter::Sbbf;
use quickcheck::quickcheck;

/// The bitset bytes of an `Sbbf` (what a Parquet file stores after the header).
fn sbbf_bytes(s: &Sbbf) -> Vec<u8> {
    let mut out = Vec::new();
    s.write_bitset(&mut out).unwrap();
    out
}

const SIZES: [(u64, f64); 6] = [
    (0, 0.5),
    (10, 0.1),
    (1000, 0.01),
    (5000, 0.05),
    (20_000, 0.001),
    (100_000, 0.01),
];

#[test]
fn sizing_matches_sbbf() {
    for ndv in [0u64, 1, 7, 100, 1000, 12_345, 1 << 20, 50_000_000, u64::MAX] {
        for fpp in [1e-9, 1e-4, 0.001, 0.01, 0.05, 0.1, 0.3, 0.5, 0.9, 0.999] {
            let theirs = Sbbf::new_with_ndv_fpp(ndv, fpp).unwrap();
            let ours = num_bytes_for_ndv_fpp(ndv, fpp).unwrap();
            assert_eq!(ours, theirs.num_blocks() * 32, "ndv {ndv} fpp {fpp}");
            assert!(ours <= BITSET_MAX_BYTES);
        }
    }
    for n in [0usize, 1, 31, 32, 33, 1000, 4096, 1 << 30] {
        let theirs = Sbbf::new_with_num_of_bytes(n);
        let ours = SplitBlockFilter::new_with_num_bytes(n).unwrap();
        assert_eq!(ours.num_bytes(), theirs.num_blocks() * 32, "{n} bytes");
        assert_eq!(ours.as_bitset(), sbbf_bytes(&theirs));
    }
    for bad in [0.0, 1.0, -0.1, f64::NAN, 2.0] {
        assert!(
            SplitBlockFilter::new_with_ndv_fpp(10, bad).is_err(),
            "{bad}"
        );
    }
}

#[test]
fn hashes_match_parquet_plain_encoding() {
    // The `parquet` crate's own fixture: XXH64("") with seed 0.
    assert_eq!(hash_bytes(b""), 17_241_709_254_077_376_921);
    for i in 0..1000u64 {
        let v = splitmix64(i);
        assert_eq!(hash_u64(v), xxhash_rust::xxh64::xxh64(&v.to_le_bytes(), 0));
        assert_eq!(
            hash_u32(v as u32),
            xxhash_rust::xxh64::xxh64(&(v as u32).to_le_bytes(), 0)
        );
    }
}

/// Builds the same set in an `Sbbf` and in ours (`insert` for theirs, `ours_insert` for
/// ours), then checks bytes and answers both ways.
fn check_against_sbbf<T: ParquetValue + parquet::data_type::AsBytes + ?Sized>(
    ndv: u64,
    fpp: f64,
    members: &[&T],
    others: &[&T],
) {
    let mut theirs = Sbbf::new_with_ndv_fpp(ndv, fpp).unwrap();
    let mut ours = SplitBlockFilter::new_with_ndv_fpp(ndv, fpp).unwrap();
    for v in members {
        theirs.insert(*v);
        ours.insert(*v);
    }
    assert_eq!(ours.as_bitset(), sbbf_bytes(&theirs), "ndv {ndv} fpp {fpp}");
    // Ours read back from their bytes, and theirs from ours.
    let from_theirs = SplitBlockFilter::from_bitset(&sbbf_bytes(&theirs)).unwrap();
    let theirs_from_ours = Sbbf::new(ours.as_bitset());
    assert_eq!(from_theirs, ours);
    for v in members.iter().chain(others) {
        let want = theirs.check(*v);
        assert_eq!(ours.contains(*v), want);
        assert_eq!(from_theirs.contains(*v), want);
        assert_eq!(theirs_from_ours.check(*v), want);
    }
    assert!(members.iter().all(|v| ours.contains(*v)));
}

#[test]
fn i64_sets_match_sbbf() {
    for (s, &(ndv, fpp)) in SIZES.iter().enumerate() {
        let members: Vec<i64> = (0..ndv.max(50))
            .map(|i| splitmix64(i ^ (s as u64) << 40) as i64)
            .collect();
        let others: Vec<i64> = (0..20_000u64)
            .map(|i| splitmix64(i + (1 << 50)) as i64)
            .collect();
        let m: Vec<&i64> = members.iter().collect();
        let o: Vec<&i64> = others.iter().collect();
        check_against_sbbf::<i64>(ndv, fpp, &m, &o);
        // Small and negative values too.
        let small: Vec<i64> = (-500..500).collect();
        let sm: Vec<&i64> = small.iter().collect();
        check_against_sbbf::<i64>(ndv, fpp, &sm, &o);
    }
}

#[test]
fn i32_and_f64_sets_match_sbbf() {
    let ints: Vec<i32> = (0..3000).map(|i| splitmix64(i) as i32).collect();
    let other_ints: Vec<i32> = (0..10_000).map(|i| splitmix64(i + 99_999) as i32).collect();
    let a: Vec<&i32> = ints.iter().collect();
    let b: Vec<&i32> = other_ints.iter().collect();
    check_against_sbbf::<i32>(3000, 0.01, &a, &b);

    let floats: Vec<f64> = (0..3000).map(|i| i as f64 * 0.25 - 100.0).collect();
    let other_floats: Vec<f64> = (0..10_000).map(|i| i as f64 * 0.3 + 1e6).collect();
    let a: Vec<&f64> = floats.iter().collect();
    let b: Vec<&f64> = other_floats.iter().collect();
    check_against_sbbf::<f64>(3000, 0.01, &a, &b);
}

#[test]
fn byte_string_sets_match_sbbf() {
    for &(ndv, fpp) in &SIZES {
        let members: Vec<String> = (0..ndv.max(50)).map(|i| format!("user-{i}")).collect();
        let others: Vec<String> = (0..20_000).map(|i| format!("guest-{i}")).collect();
        // As `str` ...
        let m: Vec<&str> = members.iter().map(String::as_str).collect();
        let o: Vec<&str> = others.iter().map(String::as_str).collect();
        let m: Vec<&str> = m.to_vec();
        check_against_sbbf::<str>(ndv, fpp, &m, &o);
        // ... and as raw bytes (BYTE_ARRAY), including the empty string and binary values.
        let mut raw: Vec<Vec<u8>> = members.iter().map(|s| s.as_bytes().to_vec()).collect();
        raw.push(Vec::new());
        raw.extend((0..200u64).map(|i| splitmix64(i).to_le_bytes()[..(i % 9) as usize].to_vec()));
        let m: Vec<&[u8]> = raw.iter().map(Vec::as_slice).collect();
        let o: Vec<&[u8]> = others.iter().map(|s| s.as_bytes()).collect();
        check_against_sbbf::<[u8]>(ndv, fpp, &m, &o);
    }
}

#[test]
fn sbbf_conversions_round_trip() {
    let mut theirs = Sbbf::new_with_ndv_fpp(5000, 0.01).unwrap();
    for i in 0..5000i64 {
        theirs.insert(&i);
    }
    // The full serialised form (Thrift header + bitset) ends with our bitset.
    let mut full = Vec::new();
    theirs.write(&mut full).unwrap();
    let ours = SplitBlockFilter::from_bitset(&sbbf_bytes(&theirs)).unwrap();
    assert!(full.ends_with(ours.as_bitset()));
    assert_eq!(ours.count_batch(&(0..5000i64).collect::<Vec<_>>()), 5000);
    let back = Sbbf::from_bytes(&full).unwrap();
    assert_eq!(sbbf_bytes(&back), ours.as_bitset());
}

#[test]
fn from_bitset_validates_length() {
    assert!(SplitBlockFilter::from_bitset(&[]).is_err());
    assert!(SplitBlockFilter::from_bitset(&[0; 31]).is_err());
    assert!(SplitBlockFilter::from_bitset(&[0; 33]).is_err());
    // Any whole number of blocks is accepted, a power of two or not.
    let f = SplitBlockFilter::from_bitset(&[0; 96]).unwrap();
    assert_eq!(f.num_blocks(), 3);
    assert!(SplitBlockFilter::from_bitset(&vec![0; BITSET_MAX_BYTES + 32]).is_err());
}

/// Every supported tier builds the scalar tier's bits and gives its answers, for the hash
/// batches and the value batches, on filters in and beyond the cache (prefetching).
#[test]
fn every_tier_matches_scalar() {
    for num_bytes in [32usize, 96, 4096, 1 << 20, 8 << 20] {
        let base = if num_bytes.is_power_of_two() {
            SplitBlockFilter::new_with_num_bytes(num_bytes).unwrap()
        } else {
            SplitBlockFilter::from_bitset(&vec![0; num_bytes]).unwrap()
        };
        let n = (num_bytes / 4).clamp(100, 200_000);
        let hashes: Vec<u64> = (0..n as u64).map(splitmix64).collect();
        let values: Vec<i64> = (0..n as u64).map(|i| splitmix64(i + 7) as i64).collect();
        let probes: Vec<u64> = (0..n as u64 + 123)
            .map(|i| splitmix64(i + (1 << 40)))
            .collect();
        let probe_values: Vec<i64> = (0..n as i64 + 77).map(|i| i * 3 - 1000).collect();

        let mut reference = base.clone().with_isa(Isa::Scalar).unwrap();
        for &h in &hashes {
            reference.insert_hash(h);
        }
        for v in &values {
            reference.insert(v);
        }
        let want_h: Vec<bool> = probes.iter().map(|&h| reference.contains_hash(h)).collect();
        let want_v: Vec<bool> = probe_values.iter().map(|v| reference.contains(v)).collect();

        for isa in common::tiers() {
            let mut f = base.clone().with_isa(isa).unwrap();
            f.insert_hash_batch(&hashes);
            f.insert_batch(&values);
            assert_eq!(f.as_bitset(), reference.as_bitset(), "{isa} {num_bytes}");

            let mut got = vec![false; probes.len()];
            f.contains_hash_batch(&probes, &mut got);
            assert_eq!(got, want_h, "{isa} {num_bytes}");
            let count = want_h.iter().filter(|&&b| b).count();
            assert_eq!(f.count_hash_batch(&probes), count, "{isa}");

            let mut got = vec![false; probe_values.len()];
            f.contains_batch(&probe_values, &mut got);
            assert_eq!(got, want_v, "{isa} {num_bytes}");
            let count = want_v.iter().filter(|&&b| b).count();
            assert_eq!(f.count_batch(&probe_values), count, "{isa}");

            // u64, u32, i32 batches equal single inserts.
            let as_u64: Vec<u64> = values.iter().map(|&v| v as u64).collect();
            assert_eq!(f.count_batch(&as_u64), values.len(), "{isa}");
            let small: Vec<i32> = (0..1000).map(|i| splitmix64(i) as i32).collect();
            let mut g = base.clone().with_isa(isa).unwrap();
            g.insert_batch(&small);
            let mut h = base.clone().with_isa(Isa::Scalar).unwrap();
            small.iter().for_each(|v| h.insert(v));
            assert_eq!(g, h, "{isa}");
            let small_u: Vec<u32> = small.iter().map(|&v| v as u32).collect();
            assert_eq!(g.count_batch(&small_u), small.len(), "{isa}");
        }
    }
}

quickcheck! {
    fn tiers_agree_on_random_hashes(blocks: u8, hashes: Vec<u64>, probes: Vec<u64>) -> bool {
        let bytes = (blocks as usize + 1) * 32;
        let base = SplitBlockFilter::from_bitset(&vec![0; bytes]).unwrap();
        let mut reference = base.clone().with_isa(Isa::Scalar).unwrap();
        hashes.iter().for_each(|&h| reference.insert_hash(h));
        let want: Vec<bool> = probes.iter().map(|&h| reference.contains_hash(h)).collect();
        common::tiers().into_iter().all(|isa| {
            let mut f = base.clone().with_isa(isa).unwrap();
            f.insert_hash_batch(&hashes);
            let mut got = vec![false; probes.len()];
            f.contains_hash_batch(&probes, &mut got);
            f == reference && got == want && hashes.iter().all(|&h| f.contains_hash(h))
        })
    }

    fn agrees_with_sbbf_on_random_i64(ndv: u16, values: Vec<i64>, probes: Vec<i64>) -> bool {
        let mut theirs = Sbbf::new_with_ndv_fpp(ndv as u64, 0.01).unwrap();
        let mut ours = SplitBlockFilter::new_with_ndv_fpp(ndv as u64, 0.01).unwrap();
        for v in &values {
            theirs.insert(v);
        }
        ours.insert_batch(&values);
        ours.as_bitset() == sbbf_bytes(&theirs).as_slice()
            && probes.iter().all(|p| ours.contains(p) == theirs.check(p))
    }
}

/// The measured false-positive rate of a filter sized by `new_with_ndv_fpp` and filled to
/// `ndv` is at or below the target (the power-of-two rounding only ever adds room).
#[test]
fn false_positive_rate_meets_target() {
    for &(ndv, fpp) in &[(10_000u64, 0.01f64), (100_000, 0.05), (50_000, 0.001)] {
        let mut f = SplitBlockFilter::new_with_ndv_fpp(ndv, fpp).unwrap();
        let members: Vec<u64> = (0..ndv).map(splitmix64).collect();
        f.insert_batch(&members);
        let trials = 1_000_000u64;
        let non_members: Vec<u64> = (0..trials).map(|i| splitmix64(i + (1 << 60))).collect();
        let rate = f.count_batch(&non_members) as f64 / trials as f64;
        assert!(
            rate <= fpp * 1.1,
            "ndv {ndv}: measured {rate} vs target {fpp}"
        );
        assert!(f.estimated_fpp() <= fpp * 1.1);
    }
}

#[cfg(feature = "parquet")]
mod file {
    use std::path::PathBuf;
    use std::sync::Arc;

    use blockbloom::parquet::{SplitBlockFilter, read_column_filter, read_column_filters};
    use parquet::data_type::{ByteArray, ByteArrayType, Int32Type, Int64Type};
    use parquet::file::properties::WriterProperties;
    use parquet::file::writer::SerializedFileWriter;
    use parquet::schema::parser::parse_message_type;
    use parquet::schema::types::ColumnPath;

    use super::common::splitmix64;

    /// A temporary file path, removed on drop.
    struct TempPath(PathBuf);

    impl TempPath {
        fn new(name: &str) -> TempPath {
            TempPath(std::env::temp_dir().join(format!(
                "blockbloom-{name}-{}-{:?}.parquet",
                std::process::id(),
                std::thread::current().id()
            )))
        }
    }

    impl Drop for TempPath {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    const FPP: f64 = 0.01;

    /// Writes `row_groups` row groups of `(id: int64, name: binary, n: int32)`; `id` and
    /// `name` have Bloom filters, `n` does not. Returns each group's ids and names.
    fn write_file(path: &TempPath, row_groups: usize, rows: usize) -> Vec<(Vec<i64>, Vec<String>)> {
        let schema = Arc::new(
            parse_message_type(
                "message m { required int64 id; required binary name (UTF8); required int32 n; }",
            )
            .unwrap(),
        );
        let props = Arc::new(
            WriterProperties::builder()
                .set_column_bloom_filter_enabled(ColumnPath::from("id"), true)
                .set_column_bloom_filter_fpp(ColumnPath::from("id"), FPP)
                .set_column_bloom_filter_max_ndv(ColumnPath::from("id"), rows as u64)
                .set_column_bloom_filter_enabled(ColumnPath::from("name"), true)
                .set_column_bloom_filter_fpp(ColumnPath::from("name"), FPP)
                .set_column_bloom_filter_max_ndv(ColumnPath::from("name"), rows as u64)
                .set_dictionary_enabled(false)
                .build(),
        );
        let file = std::fs::File::create(&path.0).unwrap();
        let mut w = SerializedFileWriter::new(file, schema, props).unwrap();
        let mut written = Vec::new();
        for g in 0..row_groups {
            let ids: Vec<i64> = (0..rows as u64)
                .map(|i| splitmix64(i + (g as u64) * 1_000_000_000) as i64)
                .collect();
            let names: Vec<String> = ids.iter().map(|i| format!("name-{i}")).collect();
            let bytes: Vec<ByteArray> = names.iter().map(|s| ByteArray::from(s.as_str())).collect();
            let ns: Vec<i32> = (0..rows as i32).collect();
            let mut rg = w.next_row_group().unwrap();
            let mut col = rg.next_column().unwrap().unwrap();
            col.typed::<Int64Type>()
                .write_batch(&ids, None, None)
                .unwrap();
            col.close().unwrap();
            let mut col = rg.next_column().unwrap().unwrap();
            col.typed::<ByteArrayType>()
                .write_batch(&bytes, None, None)
                .unwrap();
            col.close().unwrap();
            let mut col = rg.next_column().unwrap().unwrap();
            col.typed::<Int32Type>()
                .write_batch(&ns, None, None)
                .unwrap();
            col.close().unwrap();
            rg.close().unwrap();
            written.push((ids, names));
        }
        w.close().unwrap();
        written
    }

    fn measured_fpr(f: &SplitBlockFilter, trials: u64) -> f64 {
        let probes: Vec<i64> = (0..trials)
            .map(|i| splitmix64(i + (1 << 62)) as i64)
            .collect();
        f.count_batch(&probes) as f64 / trials as f64
    }

    #[test]
    fn reads_a_written_column_filter() {
        let path = TempPath::new("one");
        let rows = 20_000;
        let written = write_file(&path, 1, rows);
        let (ids, names) = &written[0];

        let f = read_column_filter(&path.0, "id")
            .unwrap()
            .expect("id has a filter");
        assert_eq!(f.count_batch(ids), rows, "every written id present");
        let mut each = vec![false; ids.len()];
        f.contains_batch(ids, &mut each);
        assert!(each.iter().all(|&b| b));
        let rate = measured_fpr(&f, 1_000_000);
        // The writer may fold the filter down while its estimated FPP stays at or below
        // the target; the measured rate sits near the configured fpp.
        assert!(rate < FPP * 1.5, "measured {rate} vs fpp {FPP}");
        assert!(
            rate > FPP / 50.0,
            "measured {rate}: the filter is oddly large"
        );

        let g = read_column_filter(&path.0, "name")
            .unwrap()
            .expect("name has a filter");
        assert!(names.iter().all(|n| g.contains(n.as_str())));
        let misses = (0..200_000)
            .filter(|i| g.contains(&format!("absent-{i}")))
            .count();
        assert!((misses as f64 / 200_000.0) < FPP * 1.5, "{misses}");

        // A column without a Bloom filter, and a column that does not exist.
        assert!(read_column_filter(&path.0, "n").unwrap().is_none());
        assert!(read_column_filter(&path.0, "missing").is_err());

        // Every kernel tier answers the same on the file's filter.
        for isa in super::common::tiers() {
            let t = f.clone().with_isa(isa).unwrap();
            assert_eq!(t.count_batch(ids), rows, "{isa}");
            assert_eq!(
                measured_fpr(&t, 100_000),
                measured_fpr(&f, 100_000),
                "{isa}"
            );
        }
    }

    #[test]
    fn reads_every_row_group() {
        let path = TempPath::new("groups");
        let written = write_file(&path, 3, 5000);
        let filters = read_column_filters(&path.0, "id").unwrap();
        assert_eq!(filters.len(), 3);
        for (f, (ids, _)) in filters.iter().zip(&written) {
            let f = f.as_ref().expect("id has a filter");
            assert_eq!(f.count_batch(ids), ids.len());
        }
        // The first row group's filter is what `read_column_filter` returns.
        let first = read_column_filter(&path.0, "id").unwrap().unwrap();
        assert_eq!(Some(&first), filters[0].as_ref());
    }

    #[test]
    fn missing_or_garbage_files_are_errors() {
        use blockbloom::Error;
        use std::io::ErrorKind;

        let path = TempPath::new("garbage");
        let err = read_column_filter(&path.0, "id").unwrap_err();
        assert!(
            matches!(
                err,
                Error::Io {
                    kind: ErrorKind::NotFound,
                    ..
                }
            ),
            "{err}"
        );
        std::fs::write(&path.0, b"PAR1 this is not a parquet file PAR1").unwrap();
        let err = read_column_filter(&path.0, "id").unwrap_err();
        assert!(
            matches!(
                err,
                Error::Io {
                    kind: ErrorKind::InvalidData,
                    ..
                }
            ),
            "{err}"
        );
        assert!(err.to_string().contains("Parquet"), "{err}");
    }
}
