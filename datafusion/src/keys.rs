//! Which Arrow types the functions and the join filter take, and how a key column reaches
//! blockbloom's Arrow path.

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{DataFusionError, Result};

/// The type a key of type `t` is hashed as by the SQL functions and the join filter, or
/// `None` if they do not take it.
///
/// Every integer (`Int8` to `Int64`, `UInt8` to `UInt64`) is read in place and hashed as its
/// 64-bit value (signed types sign-extended), as blockbloom hashes every integer on every
/// path: a filter built from an `INT` column answers a `BIGINT` literal and Rust's
/// `contains(&5u8)` alike. The string and binary types are hashed as their bytes, in place.
/// A dictionary is its values (cast once per batch); `Null` (an untyped `NULL`) becomes an
/// `Int64` of nulls.
pub(crate) fn key_type(t: &DataType) -> Option<DataType> {
    use DataType::*;
    Some(match t {
        Int8 | Int16 | Int32 | Int64 | UInt8 | UInt16 | UInt32 | UInt64 => t.clone(),
        Utf8 | LargeUtf8 | Utf8View | Binary | LargeBinary | BinaryView => t.clone(),
        FixedSizeBinary(16) => t.clone(),
        Null => Int64,
        Dictionary(_, values) => return key_type(values),
        _ => return None,
    })
}

/// The types the SQL functions take, for error messages.
pub(crate) const SQL_KEY_TYPES: &str = "integers (Int8 to Int64, UInt8 to UInt64), Utf8, \
     LargeUtf8, Utf8View, Binary, LargeBinary, BinaryView and FixedSizeBinary(16), or a \
     dictionary of them";

/// The plan error for a key argument of type `t` that `function` does not take.
pub(crate) fn unsupported_key(function: &str, t: &DataType) -> DataFusionError {
    DataFusionError::Plan(format!(
        "{function} does not take keys of type {t}: it takes {SQL_KEY_TYPES}"
    ))
}

/// `array` as `function` hashes it: in place when its type is one blockbloom reads, else cast
/// to the type [`key_type`] gives. Checked here, at execution, whatever the analyzer did, so
/// a plan that reaches the function without type coercion (another planner, a deserialised
/// plan) gets the same keys, or an error naming the type.
pub(crate) fn key_array(function: &str, array: &ArrayRef) -> Result<ArrayRef> {
    let from = array.data_type();
    let to = key_type(from).ok_or_else(|| {
        DataFusionError::Execution(format!(
            "{function} does not take keys of type {from}: it takes {SQL_KEY_TYPES}"
        ))
    })?;
    if &to == from {
        Ok(Arc::clone(array))
    } else {
        Ok(cast(array, &to)?)
    }
}

/// A blockbloom error as a DataFusion execution error naming `what`.
pub(crate) fn bloom_error(what: &str, e: blockbloom::Error) -> DataFusionError {
    DataFusionError::Execution(format!("{what}: {e}"))
}
