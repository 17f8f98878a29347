//! `parquet FILE --column NAME VALUE...`: for each row group, whether the column chunk's split
//! block Bloom filter may contain each value, read with `blockbloom::parquet`.
//!
//! Each VALUE is parsed as the column's physical type and hashed as a Parquet writer hashes
//! that type's plain encoding (XXH64 of 4 or 8 little-endian bytes, the bytes of a string),
//! so `42` means the INT64 42 in an INT64 column and the string "42" in a BYTE_ARRAY column.
//! A value that is not of the column's type is an error before anything is answered.

use std::error::Error;
use std::ffi::OsString;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use blockbloom::parquet::{SplitBlockFilter, hash_bytes, hash_u32, hash_u64, read_column_filters};
use clap::Args;
use parquet::basic::Type as Physical;
use parquet::file::reader::{FileReader, SerializedFileReader};

#[derive(Args)]
pub struct ParquetArgs {
    /// The Parquet file.
    file: PathBuf,
    /// The column's dotted path (`id`, or `a.b` for field `b` of group `a`).
    #[arg(long)]
    column: String,
    /// Values to look up, parsed as the column's physical type: BOOLEAN `true`/`false`;
    /// INT32 and INT64 whole numbers (signed, or unsigned up to 2^32-1 and 2^64-1 for the
    /// unsigned logical types); FLOAT and DOUBLE decimal numbers; BYTE_ARRAY the argument's
    /// bytes; FIXED_LEN_BYTE_ARRAY the argument's bytes, exactly the column's length.
    /// Printed as `ROW_GROUP<TAB>VALUE<TAB>maybe|no|no filter`.
    #[arg(required = true, allow_hyphen_values = true)]
    values: Vec<OsString>,
    /// Values of BYTE_ARRAY, FIXED_LEN_BYTE_ARRAY and INT96 columns are hexadecimal bytes
    /// (`00ff...`), for binary keys such as UUIDs.
    #[arg(long)]
    hex: bool,
}

type Result<T> = std::result::Result<T, Box<dyn Error>>;

/// The physical type's name as the Parquet format spells it, with the fixed length.
fn type_name(t: Physical, len: i32) -> String {
    match t {
        Physical::BOOLEAN => "BOOLEAN".into(),
        Physical::INT32 => "INT32".into(),
        Physical::INT64 => "INT64".into(),
        Physical::INT96 => "INT96".into(),
        Physical::FLOAT => "FLOAT".into(),
        Physical::DOUBLE => "DOUBLE".into(),
        Physical::BYTE_ARRAY => "BYTE_ARRAY".into(),
        Physical::FIXED_LEN_BYTE_ARRAY => format!("FIXED_LEN_BYTE_ARRAY({len})"),
    }
}

fn decode_hex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) || !s.is_ascii() {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).ok())
        .collect()
}

/// The Parquet Bloom filter hash of `value` as a value of physical type `t` (fixed length
/// `len`), or why it is not one.
fn value_hash(
    value: &OsString,
    t: Physical,
    len: i32,
    hex: bool,
) -> std::result::Result<u64, String> {
    let name = type_name(t, len);
    let text = value.to_str();
    let number = |what: &str| -> std::result::Result<&str, String> {
        text.map(str::trim)
            .ok_or_else(|| format!("value {value:?} is not {what} (column type {name})"))
    };
    let bad = |what: &str| format!("value {value:?} is not {what} (column type {name})");
    match t {
        Physical::BOOLEAN => match number("true or false")? {
            "true" | "1" => Ok(hash_bytes(&[1])),
            "false" | "0" => Ok(hash_bytes(&[0])),
            _ => Err(bad("true or false")),
        },
        Physical::INT32 => {
            let what = "a whole number in -2147483648..=4294967295";
            let s = number(what)?;
            s.parse::<i32>()
                .map(|v| v as u32)
                .or_else(|_| s.parse::<u32>())
                .map(hash_u32)
                .map_err(|_| bad(what))
        }
        Physical::INT64 => {
            let what = "a whole number in -2^63..=2^64-1";
            let s = number(what)?;
            s.parse::<i64>()
                .map(|v| v as u64)
                .or_else(|_| s.parse::<u64>())
                .map(hash_u64)
                .map_err(|_| bad(what))
        }
        Physical::FLOAT => {
            let what = "a number";
            let v: f32 = number(what)?.parse().map_err(|_| bad(what))?;
            Ok(hash_u32(v.to_bits()))
        }
        Physical::DOUBLE => {
            let what = "a number";
            let v: f64 = number(what)?.parse().map_err(|_| bad(what))?;
            Ok(hash_u64(v.to_bits()))
        }
        Physical::BYTE_ARRAY | Physical::FIXED_LEN_BYTE_ARRAY | Physical::INT96 => {
            let bytes = if hex {
                text.and_then(decode_hex)
                    .ok_or_else(|| bad("hexadecimal bytes (--hex)"))?
            } else if t == Physical::INT96 {
                return Err(format!(
                    "value {value:?}: INT96 values are 12 raw bytes; give them with --hex"
                ));
            } else {
                value.as_encoded_bytes().to_vec()
            };
            let fixed = match t {
                Physical::FIXED_LEN_BYTE_ARRAY => Some(len.max(0) as usize),
                Physical::INT96 => Some(12),
                _ => None,
            };
            if let Some(n) = fixed.filter(|&n| n != bytes.len()) {
                return Err(format!(
                    "value {value:?} has {} bytes; column type {name} holds exactly {n}",
                    bytes.len()
                ));
            }
            Ok(hash_bytes(&bytes))
        }
    }
}

/// The column's physical type, fixed length and the row count of each row group.
fn schema(path: &Path, column: &str) -> Result<(Physical, i32, Vec<i64>)> {
    let at = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let file = File::open(path).map_err(|e| at(&e))?;
    let reader = SerializedFileReader::new(file).map_err(|e| at(&e))?;
    let meta = reader.metadata();
    let schema = meta.file_metadata().schema_descr();
    let col = (0..schema.num_columns())
        .map(|i| schema.column(i))
        .find(|c| c.path().string() == column)
        .ok_or_else(|| at(&blockbloom::Error::NoSuchColumn(column.to_string())))?;
    let rows = meta.row_groups().iter().map(|g| g.num_rows()).collect();
    Ok((col.physical_type(), col.type_length(), rows))
}

pub fn command(args: ParquetArgs) -> Result<()> {
    let path = &args.file;
    // The library's reader first: a missing file, a non-Parquet file, a malformed filter and
    // a missing column are its typed errors.
    let filters: Vec<Option<SplitBlockFilter>> =
        read_column_filters(path, &args.column).map_err(|e| format!("{}: {e}", path.display()))?;
    let (physical, len, rows) = schema(path, &args.column)?;
    let hashes: Vec<u64> = args
        .values
        .iter()
        .map(|v| value_hash(v, physical, len, args.hex))
        .collect::<std::result::Result<_, _>>()?;
    let name = type_name(physical, len);
    if filters.is_empty() {
        eprintln!(
            "{}: no row groups: there is nothing to look up in column `{}` ({name})",
            path.display(),
            args.column
        );
        return Ok(());
    }
    if filters.iter().all(Option::is_none) {
        return Err(format!(
            "{}: column `{}` ({name}) has no Bloom filter in any of its {} row groups \
             (written without them?): no value can be ruled out",
            path.display(),
            args.column,
            filters.len()
        )
        .into());
    }
    let mut out = BufWriter::new(io::stdout().lock());
    let r = (|| -> io::Result<()> {
        for (g, f) in filters.iter().enumerate() {
            for (v, &h) in args.values.iter().zip(&hashes) {
                let answer = match f {
                    Some(f) if f.contains_hash(h) => "maybe",
                    Some(_) => "no",
                    None => "no filter",
                };
                out.write_all(format!("{g}\t").as_bytes())?;
                out.write_all(v.as_encoded_bytes())?;
                writeln!(out, "\t{answer}")?;
            }
        }
        out.flush()
    })();
    match r {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => return Ok(()),
        r => r.map_err(|e| format!("<stdout>: {e}"))?,
    }
    let without = filters.iter().filter(|f| f.is_none()).count();
    let skippable = filters.iter().filter(|f| f.is_some()).count();
    eprintln!(
        "{}: column `{}` ({name}): {} row groups ({} rows), {skippable} with a Bloom filter, \
         {without} without",
        path.display(),
        args.column,
        filters.len(),
        rows.iter().sum::<i64>()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_hash_as_their_physical_type() {
        let v = |s: &str| OsString::from(s);
        assert_eq!(
            value_hash(&v("-7"), Physical::INT32, 0, false),
            Ok(hash_u32(-7i32 as u32))
        );
        assert_eq!(
            value_hash(&v("4294967295"), Physical::INT32, 0, false),
            Ok(hash_u32(u32::MAX))
        );
        assert_eq!(
            value_hash(&v("42"), Physical::INT64, 0, false),
            Ok(hash_u64(42))
        );
        assert_eq!(
            value_hash(&v("1.5"), Physical::DOUBLE, 0, false),
            Ok(hash_u64(1.5f64.to_bits()))
        );
        assert_eq!(
            value_hash(&v("1.5"), Physical::FLOAT, 0, false),
            Ok(hash_u32(1.5f32.to_bits()))
        );
        assert_eq!(
            value_hash(&v("42"), Physical::BYTE_ARRAY, 0, false),
            Ok(hash_bytes(b"42"))
        );
        assert_eq!(
            value_hash(&v("00ff"), Physical::FIXED_LEN_BYTE_ARRAY, 2, true),
            Ok(hash_bytes(&[0, 255]))
        );
        assert_eq!(
            value_hash(&v("true"), Physical::BOOLEAN, 0, false),
            Ok(hash_bytes(&[1]))
        );
        for (value, t, len, hex, says) in [
            ("x1", Physical::INT64, 0, false, "is not a whole number"),
            (
                "4294967296",
                Physical::INT32,
                0,
                false,
                "is not a whole number",
            ),
            ("1.5", Physical::INT32, 0, false, "is not a whole number"),
            ("abc", Physical::DOUBLE, 0, false, "is not a number"),
            ("yes", Physical::BOOLEAN, 0, false, "is not true or false"),
            (
                "abc",
                Physical::FIXED_LEN_BYTE_ARRAY,
                4,
                false,
                "has 3 bytes",
            ),
            (
                "0g",
                Physical::BYTE_ARRAY,
                0,
                true,
                "is not hexadecimal bytes",
            ),
            ("abc", Physical::INT96, 12, false, "give them with --hex"),
        ] {
            let e = value_hash(&v(value), t, len, hex).unwrap_err();
            assert!(e.contains(says), "{value}: {e}");
        }
    }
}
