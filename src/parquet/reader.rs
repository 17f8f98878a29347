//! Reading a column's Bloom filter out of a Parquet file, with the `parquet` crate's reader
//! (cargo feature `parquet`).

use std::fs::File;
use std::path::Path;

use parquet::bloom_filter::Sbbf;
use parquet::file::reader::{FileReader, SerializedFileReader};

use super::SplitBlockFilter;
use crate::error::{Error, IoSource};

/// The Bloom filter of column `column` in the **first row group** of the Parquet file at
/// `path`, or `None` if the file has no row groups or that column chunk has no Bloom filter.
/// Use [`read_column_filters`] for every row group.
///
/// `column` is the column's dotted path (`"id"` for a top-level column, `"a.b"` for field
/// `b` of group `a`). Only the footer and that one filter are read.
///
/// ```
/// # fn write_example(path: &std::path::Path) {
/// #     use std::sync::Arc;
/// #     use parquet::data_type::Int64Type;
/// #     use parquet::file::properties::WriterProperties;
/// #     use parquet::file::writer::SerializedFileWriter;
/// #     use parquet::schema::parser::parse_message_type;
/// #     let schema = Arc::new(parse_message_type("message m { required int64 id; }").unwrap());
/// #     let props = Arc::new(WriterProperties::builder().set_bloom_filter_enabled(true).build());
/// #     let mut w = SerializedFileWriter::new(std::fs::File::create(path).unwrap(), schema, props).unwrap();
/// #     let mut rg = w.next_row_group().unwrap();
/// #     let mut col = rg.next_column().unwrap().unwrap();
/// #     let values: Vec<i64> = (0..100).collect();
/// #     col.typed::<Int64Type>().write_batch(&values, None, None).unwrap();
/// #     col.close().unwrap();
/// #     rg.close().unwrap();
/// #     w.close().unwrap();
/// # }
/// # let path = std::env::temp_dir().join(format!("blockbloom-doc-{}.parquet", std::process::id()));
/// # write_example(&path);
/// use blockbloom::parquet::read_column_filter;
///
/// // A file whose INT64 column "id" was written with a Bloom filter (values 0..100).
/// let f = read_column_filter(&path, "id")?.expect("column has a Bloom filter");
/// assert!(f.contains(&42i64));
/// assert_eq!(f.count_batch(&(0..100i64).collect::<Vec<_>>()), 100);
/// # std::fs::remove_file(&path).ok();
/// # Ok::<(), blockbloom::Error>(())
/// ```
///
/// # Errors
/// [`Error::Io`] if the file cannot be read, or is not a valid Parquet file, or holds a
/// malformed or unsupported Bloom filter (kind [`InvalidData`](std::io::ErrorKind::InvalidData));
/// [`Error::NoSuchColumn`] if it has no column `column`; a kernel error if
/// `BLOCKBLOOM_ISA` is invalid.
pub fn read_column_filter(
    path: impl AsRef<Path>,
    column: &str,
) -> Result<Option<SplitBlockFilter>, Error> {
    Ok(read_filters(path.as_ref(), column, Some(0))?
        .into_iter()
        .next()
        .flatten())
}

/// The Bloom filter of column `column` in every row group of the Parquet file at `path`, in
/// row-group order (`None` for a column chunk without one). `column` is as in
/// [`read_column_filter`].
///
/// ```
/// # let path = std::env::temp_dir().join(format!("blockbloom-doc2-{}.parquet", std::process::id()));
/// # std::fs::write(&path, b"not parquet").unwrap();
/// // Not a Parquet file: an error, not a panic.
/// assert!(blockbloom::parquet::read_column_filters(&path, "id").is_err());
/// # std::fs::remove_file(&path).ok();
/// ```
///
/// # Errors
/// As [`read_column_filter`].
pub fn read_column_filters(
    path: impl AsRef<Path>,
    column: &str,
) -> Result<Vec<Option<SplitBlockFilter>>, Error> {
    read_filters(path.as_ref(), column, None)
}

fn read_filters(
    path: &Path,
    column: &str,
    only: Option<usize>,
) -> Result<Vec<Option<SplitBlockFilter>>, Error> {
    let file = File::open(path)?;
    let chunks = file.try_clone()?;
    // The default reader properties read the footer only (no Bloom filters, no page index).
    let reader = SerializedFileReader::new(file).map_err(|e| invalid_data("footer", e))?;
    let meta = reader.metadata();
    let schema = meta.file_metadata().schema_descr();
    let index = (0..schema.num_columns())
        .find(|&i| schema.column(i).path().string() == column)
        .ok_or_else(|| Error::NoSuchColumn(column.to_string()))?;
    let groups = match only {
        Some(g) => g..(g + 1).min(meta.num_row_groups()),
        None => 0..meta.num_row_groups(),
    };
    groups
        .map(|g| {
            let chunk = meta.row_group(g).column(index);
            let sbbf = Sbbf::read_from_column_chunk(chunk, &chunks)
                .map_err(|e| invalid_data("Bloom filter", e))?;
            sbbf.as_ref().map(SplitBlockFilter::from_sbbf).transpose()
        })
        .collect()
}

/// A Parquet reader error, as [`Error::Io`]: an I/O error keeps its kind, a malformed file
/// is [`std::io::ErrorKind::InvalidData`]; the message says what was being read.
fn invalid_data(what: &str, e: parquet::errors::ParquetError) -> Error {
    let kind = match &e {
        parquet::errors::ParquetError::External(inner) => inner
            .downcast_ref::<std::io::Error>()
            .map_or(std::io::ErrorKind::InvalidData, std::io::Error::kind),
        _ => std::io::ErrorKind::InvalidData,
    };
    Error::Io {
        kind,
        message: format!("reading the Parquet file's {what}: {e}"),
        source: IoSource::new(e),
    }
}

impl SplitBlockFilter {
    /// The filter with the bits of a `parquet` crate [`Sbbf`] (feature `parquet`).
    ///
    /// ```
    /// use blockbloom::parquet::SplitBlockFilter;
    /// use parquet::bloom_filter::Sbbf;
    ///
    /// let mut s = Sbbf::new_with_ndv_fpp(100, 0.01).unwrap();
    /// s.insert(&7i64);
    /// let f = SplitBlockFilter::from_sbbf(&s)?;
    /// assert!(f.contains(&7i64));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`from_bitset`](SplitBlockFilter::from_bitset).
    pub fn from_sbbf(sbbf: &Sbbf) -> Result<SplitBlockFilter, Error> {
        let mut bitset = Vec::with_capacity(sbbf.num_blocks() * super::BLOCK_BYTES);
        sbbf.write_bitset(&mut bitset).map_err(|e| Error::Io {
            kind: std::io::ErrorKind::Other,
            message: format!("could not copy the Sbbf's bitset: {e}"),
            source: IoSource::new(e),
        })?;
        SplitBlockFilter::from_bitset(&bitset)
    }

    /// A `parquet` crate [`Sbbf`] with this filter's bits (feature `parquet`), for example to
    /// hand to a Parquet writer.
    ///
    /// ```
    /// let mut f = blockbloom::parquet::SplitBlockFilter::new_with_ndv_fpp(100, 0.01)?;
    /// f.insert("a");
    /// assert!(f.to_sbbf().check(&"a"));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn to_sbbf(&self) -> Sbbf {
        Sbbf::new(self.as_bitset())
    }
}
