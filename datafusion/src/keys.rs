//! Which Arrow types the functions and the join filter take, and how a key column reaches
//! blockbloom's Arrow path.

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{DataFusionError, Result};

/// The type a key of type `t` is hashed as by the SQL functions, or `None` if they do not
/// take it.
///
/// Every integer is hashed as its 64-bit value (signed types sign-extended), so a filter
/// built from an `Int32` column answers an `Int64` literal of the same value, as Spark's
/// filters do; `Int64` and `UInt64` columns are read in place, narrower ones cast once. The
/// string and binary types are hashed as their bytes, in place. `Null` (an untyped `NULL`)
/// becomes an `Int64` of nulls.
pub(crate) fn sql_key_type(t: &DataType) -> Option<DataType> {
    use DataType::*;
    Some(match t {
        Int8 | Int16 | Int32 | Int64 | UInt8 | UInt16 | UInt32 | Null => Int64,
        UInt64 => UInt64,
        Utf8 | LargeUtf8 | Utf8View | Binary | LargeBinary | BinaryView => t.clone(),
        FixedSizeBinary(16) => t.clone(),
        _ => return None,
    })
}

/// The types the SQL functions take, for error messages.
pub(crate) const SQL_KEY_TYPES: &str = "integers (Int8 to Int64, UInt8 to UInt64), Utf8, \
     LargeUtf8, Utf8View, Binary, LargeBinary, BinaryView and FixedSizeBinary(16)";

/// The plan error for a key argument of type `t` that `function` does not take.
pub(crate) fn unsupported_key(function: &str, t: &DataType) -> DataFusionError {
    DataFusionError::Plan(format!(
        "{function} does not take keys of type {t}: it takes {SQL_KEY_TYPES}"
    ))
}

/// The type a join key of type `t` is filtered as by the join filter, or `None` if it is not
/// filtered. Both sides of an equi-join have one type, so keys are hashed as they are (no
/// widening): the types blockbloom reads in place, and the narrow integers widened.
pub(crate) fn join_key_type(t: &DataType) -> Option<DataType> {
    use DataType::*;
    Some(match t {
        Int32 | Int64 | UInt32 | UInt64 => t.clone(),
        Int8 | Int16 => Int32,
        UInt8 | UInt16 => UInt32,
        Utf8 | LargeUtf8 | Utf8View | Binary | LargeBinary | BinaryView => t.clone(),
        FixedSizeBinary(16) => t.clone(),
        _ => return None,
    })
}

/// `array` as type `to` (no copy when it is already of that type).
pub(crate) fn as_key_array(array: &ArrayRef, to: &DataType) -> Result<ArrayRef> {
    if array.data_type() == to {
        Ok(Arc::clone(array))
    } else {
        Ok(cast(array, to)?)
    }
}

/// A blockbloom error as a DataFusion execution error naming `what`.
pub(crate) fn bloom_error(what: &str, e: blockbloom::Error) -> DataFusionError {
    DataFusionError::Execution(format!("{what}: {e}"))
}
