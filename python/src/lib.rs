//! Python bindings of `blockbloom` (PyO3, abi3 for CPython >= 3.9).
//!
//! Every filter is a frozen Python class around an `RwLock` of the Rust filter. Batches resolve
//! their NumPy or pyarrow input while holding the GIL (types, shapes, buffer addresses), then
//! release the GIL and take the lock: queries (and the atomic filter's inserts) share it, so
//! Python threads run batches in parallel; inserts into the other kinds take it exclusively
//! and wait for each other instead of failing.

#![deny(clippy::undocumented_unsafe_blocks)]

use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use blockbloom::{BloomFilter, KeyForm, KeyHash, layout::Layout};
use pyo3::prelude::*;
use pyo3::pyclass::CompareOp;
use pyo3::types::PyBytes;

mod atomic;
mod batches;
mod bloom;
mod counting;
mod errors;
mod keys;
mod scalable;
mod split_block;

use atomic::PyAtomicBloomFilter;
use bloom::PyBloomFilter;
use counting::PyCountingBloomFilter;
use errors::to_py;
use keys::Key;
use scalable::PyScalableBloomFilter;
use split_block::PySplitBlockFilter;

fn read<T>(lock: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    lock.read().unwrap_or_else(PoisonError::into_inner)
}

fn write<T>(lock: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    lock.write().unwrap_or_else(PoisonError::into_inner)
}

// ---------------------------------------------------------------------------------------------
// Single keys.

/// The filter hash of a Python key under a filter's key hash and seed (the same as the Rust
/// crate's `insert`/`insert_bytes`).
fn hash_key(obj: &Bound<'_, PyAny>, (hash, seed): (KeyHash, u64)) -> PyResult<u64> {
    Ok(match keys::key(obj)? {
        Key::Int(v) => KeyForm::U64(v).hash_with(hash, seed),
        Key::Bytes(b) => KeyForm::Bytes(&b).hash_with(hash, seed),
    })
}

/// A plain or atomic filter's key hash and seed: what [`hash_key`] needs.
fn key_at<S: blockbloom::Storage>(f: &blockbloom::Filter<S>) -> (KeyHash, u64) {
    (f.key_hash(), f.seed())
}

/// The plain and atomic constructors' builder from their arguments.
#[allow(clippy::too_many_arguments)]
fn builder(
    capacity: u64,
    fpr: f64,
    seed: u64,
    layout: Option<&str>,
    probes: Option<u32>,
    keyed: bool,
    key_hash: &str,
    least_memory: bool,
) -> PyResult<blockbloom::Builder> {
    let mut b = BloomFilter::builder()
        .capacity(capacity)
        .fpr(fpr)
        .seed(seed)
        .key_hash(parse_key_hash(key_hash)?);
    if let Some(l) = parse_layout(layout)? {
        b = b.layout(l);
    }
    if let Some(k) = probes {
        b = b.probes(k);
    }
    if keyed {
        b = b.keyed();
    }
    if least_memory {
        b = b.least_memory();
    }
    Ok(b)
}

/// The `key_hash` argument of the constructors: `"mx32-64"` (hash id 3, the default),
/// `"aesh-64"` (hash id 2), `"xxh3-64"` (hash id 1, every filter's hash before id 2) or
/// `"moremur-64"` (hash id 4).
fn parse_key_hash(name: &str) -> PyResult<KeyHash> {
    KeyHash::from_name(name).ok_or_else(|| {
        // Every name this build of the library knows, so that a new hash needs no change here.
        let known: Vec<String> = KeyHash::ALL
            .iter()
            .map(|h| format!("{:?}", h.name()))
            .collect();
        pyo3::exceptions::PyValueError::new_err(format!(
            "unknown key_hash {name:?}: expected one of {}",
            known.join(", ")
        ))
    })
}

/// The Parquet hash of a Python key: `int` as INT64, `str`/`bytes` as BYTE_ARRAY.
fn parquet_hash(obj: &Bound<'_, PyAny>) -> PyResult<u64> {
    Ok(match keys::key(obj)? {
        Key::Int(v) => blockbloom::parquet::hash_u64(v),
        Key::Bytes(b) => blockbloom::parquet::hash_bytes(&b),
    })
}

/// Whether `obj` goes to the batch path (NumPy/pyarrow) rather than key by key.
fn is_batch(obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    if obj.hasattr("__array_interface__")? {
        return Ok(true);
    }
    let modules = obj.py().import("sys")?.getattr("modules")?;
    if let Ok(pa) = modules.get_item("pyarrow")
        && (obj.is_instance(&pa.getattr("Array")?)?
            || obj.is_instance(&pa.getattr("ChunkedArray")?)?)
    {
        return Ok(true);
    }
    Ok(false)
}

/// Hashes every key of an iterable first (so a bad key changes nothing), then inserts them.
fn hashes_of(
    iterable: &Bound<'_, PyAny>,
    hash: impl Fn(&Bound<'_, PyAny>) -> PyResult<u64>,
) -> PyResult<Vec<u64>> {
    let mut out = Vec::new();
    for k in iterable.try_iter()? {
        out.push(hash(&k?)?);
    }
    Ok(out)
}

/// Bytes from `bytes`, `bytearray`, `memoryview` or anything `bytes()` accepts.
fn bytes_of(data: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    if let Ok(b) = data.downcast::<PyBytes>() {
        return Ok(b.as_bytes().to_vec());
    }
    if data.is_instance_of::<pyo3::types::PyString>() || data.is_instance_of::<pyo3::types::PyInt>()
    {
        return Err(errors::unsupported(
            "from_bytes takes bytes, bytearray or memoryview",
        ));
    }
    let b = data
        .py()
        .import("builtins")?
        .getattr("bytes")?
        .call1((data,))?;
    Ok(b.downcast::<PyBytes>()?.as_bytes().to_vec())
}

/// `(blockbloom._restore, (cls, bytes))`: pickling through `to_bytes`/`from_bytes`.
fn reduce<'py>(slf: &Bound<'py, PyAny>, bytes: Vec<u8>) -> PyResult<Bound<'py, PyAny>> {
    let py = slf.py();
    let restore = py.import("blockbloom")?.getattr("_restore")?;
    let args = (slf.get_type(), PyBytes::new(py, &bytes));
    Ok((restore, args).into_pyobject(py)?.into_any())
}

fn parse_layout(layout: Option<&str>) -> PyResult<Option<Layout>> {
    match layout {
        None => Ok(None),
        Some("8x64") => Ok(Some(Layout::Sectors8x64)),
        Some("4x128") => Ok(Some(Layout::Sectors4x128)),
        Some("8x32") => Ok(Some(Layout::Sectors8x32)),
        Some(other) => Err(Python::with_gil(|py| {
            errors::raise(
                py,
                "InvalidParameterError",
                "InvalidParameter",
                &format!("invalid layout {other:?}: expected '8x64', '4x128' or '8x32'"),
            )
        })),
    }
}

fn compare<T: PartialEq>(a: &T, b: &T, op: CompareOp, py: Python<'_>) -> PyObject {
    match op {
        CompareOp::Eq => (a == b)
            .into_pyobject(py)
            .unwrap()
            .to_owned()
            .into_any()
            .unbind(),
        CompareOp::Ne => (a != b)
            .into_pyobject(py)
            .unwrap()
            .to_owned()
            .into_any()
            .unbind(),
        _ => py.NotImplemented(),
    }
}

/// The SIMD kernel this process's batches run on (`BLOCKBLOOM_ISA` forces one).
#[pyfunction]
fn kernel() -> PyResult<String> {
    let f = BloomFilter::with_capacity(1, 0.5).map_err(to_py)?;
    Ok(f.isa().to_string())
}

#[pymodule]
fn _blockbloom(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyBloomFilter>()?;
    m.add_class::<PyAtomicBloomFilter>()?;
    m.add_class::<PyCountingBloomFilter>()?;
    m.add_class::<PyScalableBloomFilter>()?;
    m.add_class::<PySplitBlockFilter>()?;
    m.add_function(wrap_pyfunction!(kernel, m)?)?;
    Ok(())
}
