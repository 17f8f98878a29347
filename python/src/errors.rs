//! The crate's typed errors as Python exceptions, with the crate's messages.
//!
//! The exception classes live in `blockbloom/exceptions.py` (plain Python, so they can inherit
//! from both `BlockbloomError` and the matching built-in: `ValueError`, `KeyError`,
//! `TypeError`, `MemoryError`); this module picks the class for each `blockbloom::Error`
//! variant and sets `kind` to the variant's name.

use blockbloom::Error;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;
use pyo3::types::PyModule;

static EXCEPTIONS: GILOnceCell<Py<PyModule>> = GILOnceCell::new();

fn exceptions(py: Python<'_>) -> PyResult<&Bound<'_, PyModule>> {
    EXCEPTIONS
        .get_or_try_init(py, || py.import("blockbloom.exceptions").map(Bound::unbind))
        .map(|m| m.bind(py))
}

/// The Python exception class (in `blockbloom.exceptions`) for a crate error.
fn class_of(e: &Error) -> &'static str {
    match e {
        Error::BadMagic
        | Error::UnsupportedVersion(_)
        | Error::UnsupportedLayout(_)
        | Error::UnsupportedHash(_)
        | Error::Truncated { .. }
        | Error::TrailingBytes { .. }
        | Error::ChecksumMismatch { .. }
        | Error::InvalidHeader(_)
        | Error::InvalidBitset { .. }
        | Error::Misaligned { .. }
        | Error::WrongKind { .. }
        | Error::Codec(_)
        | Error::DecompressedTooLarge { .. } => "DecodeError",
        Error::Incompatible(_) => "IncompatibleFiltersError",
        Error::NotPresent => "NotPresentError",
        Error::AllocationFailed { .. } => "AllocationError",
        Error::UnsupportedType(_) => "UnsupportedKeyTypeError",
        Error::InvalidOffsets { .. } => "InvalidKeysError",
        Error::InvalidFpr(_)
        | Error::InvalidBitsPerKey(_)
        | Error::InvalidProbes(_)
        | Error::InvalidOptions(_)
        | Error::TooManyBlocks { .. }
        | Error::UnsupportedIsa { .. }
        | Error::UnknownIsa(_)
        | Error::InvalidParameter { .. }
        | Error::TransferBudgetTooSmall(_)
        | Error::NoTransferDesign { .. } => "InvalidParameterError",
        _ => "BlockbloomError",
    }
}

/// The variant's name, from its `Debug` form (`ChecksumMismatch { .. }` -> `ChecksumMismatch`).
fn kind_of(e: &Error) -> String {
    let debug = format!("{e:?}");
    let end = debug
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(debug.len());
    debug[..end].to_string()
}

/// Raises the matching `blockbloom.exceptions` class with the crate's message.
pub fn to_py(e: Error) -> PyErr {
    Python::with_gil(|py| raise(py, class_of(&e), &kind_of(&e), &e.to_string()))
}

/// An exception of class `class` (a name in `blockbloom.exceptions`) with `message`.
pub fn raise(py: Python<'_>, class: &str, kind: &str, message: &str) -> PyErr {
    let made = (|| -> PyResult<PyErr> {
        let cls = exceptions(py)?.getattr(class)?;
        let exc = cls.call1((message,))?;
        exc.setattr("kind", kind)?;
        Ok(PyErr::from_value(exc))
    })();
    match made {
        Ok(err) => err,
        // The exceptions module is part of the package; this only happens if it was removed.
        Err(_) => PyValueError::new_err(message.to_string()),
    }
}

/// `InvalidKeysError` (a `ValueError`): the keys' array is unusable (shape, strides, buffers).
pub fn invalid_keys(message: impl AsRef<str>) -> PyErr {
    Python::with_gil(|py| raise(py, "InvalidKeysError", "InvalidKeys", message.as_ref()))
}

/// `UnsupportedKeyTypeError` (a `TypeError`): a key or array of a type the filters do not hash.
pub fn unsupported(message: impl AsRef<str>) -> PyErr {
    Python::with_gil(|py| {
        raise(
            py,
            "UnsupportedKeyTypeError",
            "UnsupportedType",
            message.as_ref(),
        )
    })
}
