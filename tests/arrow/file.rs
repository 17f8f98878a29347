//! The filters a Parquet writer stores for Arrow columns (with the `parquet` feature).

use std::path::PathBuf;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_buffer::{BooleanBuffer, NullBuffer};
use arrow_schema::{Field, Schema};
use blockbloom::parquet::{SplitBlockFilter, read_column_filter, read_column_filters};
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;

use super::{Kind, array, keys};
use crate::common::splitmix64;

/// A temporary file path, removed on drop.
struct TempPath(PathBuf);

impl TempPath {
    fn new(name: &str) -> TempPath {
        TempPath(std::env::temp_dir().join(format!(
            "blockbloom-arrow-{name}-{}-{:?}.parquet",
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

/// The columns written: (name, kind, with nulls).
const COLUMNS: [(&str, Kind, bool); 11] = [
    ("id", Kind::I64, true),
    ("i8", Kind::I8, true),
    ("u16", Kind::U16, false),
    ("name", Kind::Utf8, true),
    ("blob", Kind::Binary, false),
    ("n32", Kind::I32, false),
    ("u32", Kind::U32, true),
    ("u64", Kind::U64, false),
    ("large_name", Kind::LargeUtf8, false),
    ("large_blob", Kind::LargeBinary, true),
    ("uuid", Kind::Fixed(16), false),
];

/// Writes `groups` row groups of `rows` rows, each a batch of the [`COLUMNS`]; returns
/// each group's columns.
fn write(path: &TempPath, groups: usize, rows: usize) -> Vec<Vec<ArrayRef>> {
    let columns = |g: usize| -> Vec<ArrayRef> {
        COLUMNS
            .iter()
            .enumerate()
            .map(|(c, &(_, kind, nullable))| {
                let seed = (g * 100 + c) as u64;
                let nulls = nullable.then(|| {
                    NullBuffer::new(BooleanBuffer::collect_bool(rows, |i| {
                        !splitmix64(seed ^ i as u64).is_multiple_of(5)
                    }))
                });
                array(kind, &keys(kind, seed, rows), nulls)
            })
            .collect()
    };
    let written: Vec<Vec<ArrayRef>> = (0..groups).map(columns).collect();
    let schema = Arc::new(Schema::new(
        COLUMNS
            .iter()
            .zip(&written[0])
            .map(|(&(name, _, nullable), a)| Field::new(name, a.data_type().clone(), nullable))
            .collect::<Vec<_>>(),
    ));
    let props = WriterProperties::builder()
        .set_bloom_filter_enabled(true)
        .set_bloom_filter_max_ndv(rows as u64)
        .set_bloom_filter_fpp(0.01)
        .set_max_row_group_row_count(Some(rows))
        .build();
    let file = std::fs::File::create(&path.0).unwrap();
    let mut w = ArrowWriter::try_new(file, schema.clone(), Some(props)).unwrap();
    for cols in &written {
        w.write(&RecordBatch::try_new(schema.clone(), cols.clone()).unwrap())
            .unwrap();
    }
    w.close().unwrap();
    written
}

#[test]
fn arrow_writer_filters_answer_true_for_every_value() {
    let path = TempPath::new("roundtrip");
    let rows = 5000;
    let written = write(&path, 1, rows);
    for (c, &(name, kind, nullable)) in COLUMNS.iter().enumerate() {
        let column = &written[0][c];
        let read = read_column_filter(&path.0, name)
            .unwrap()
            .unwrap_or_else(|| panic!("{name}: no Bloom filter"));
        let answers = read.contains_array(column).unwrap();
        assert_eq!(answers.nulls(), column.nulls(), "{name}");
        assert_eq!(answers.null_count(), column.null_count(), "{name}");
        assert_eq!(nullable, column.null_count() > 0, "{name}");
        assert!(
            (0..rows).all(|i| column.is_null(i) || answers.value(i)),
            "{name} ({kind:?}): a written value answers false"
        );
        // The writer's filter is exactly ours for the column's non-null values.
        let mut ours = SplitBlockFilter::new_with_num_bytes(read.num_bytes()).unwrap();
        ours.insert_array(column).unwrap();
        assert_eq!(ours, read, "{name} ({kind:?}): bitsets differ");
    }
}

#[test]
fn arrow_writer_filters_per_row_group() {
    let path = TempPath::new("groups");
    let rows = 700;
    let written = write(&path, 3, rows);
    for (c, &(name, kind, _)) in COLUMNS.iter().enumerate() {
        let filters = read_column_filters(&path.0, name).unwrap();
        assert_eq!(filters.len(), 3, "{name}");
        for (g, f) in filters.iter().enumerate() {
            let f = f.as_ref().unwrap();
            let column = &written[g][c];
            let answers = f.contains_array(column).unwrap();
            assert!(
                (0..rows).all(|i| column.is_null(i) || answers.value(i)),
                "{name} ({kind:?}) group {g}"
            );
            // A slice of the column answers like the column does.
            let part = column.slice(123, 400);
            let sliced = f.contains_array(&part).unwrap();
            assert_eq!(sliced, answers.slice(123, 400), "{name} group {g}");
        }
    }
}
