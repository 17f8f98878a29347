//! Python bindings of `blockbloom` (PyO3, abi3 for CPython >= 3.9).
//!
//! Every filter is a frozen Python class around an `RwLock` of the Rust filter. Batches resolve
//! their NumPy or pyarrow input while holding the GIL (types, shapes, buffer addresses), then
//! release the GIL and take the lock: queries (and the atomic filter's inserts) share it, so
//! Python threads run batches in parallel; inserts into the other kinds take it exclusively
//! and wait for each other instead of failing.

#![deny(clippy::undocumented_unsafe_blocks)]

use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use blockbloom::parquet::SplitBlockFilter;
use blockbloom::{
    AtomicBloomFilter, BloomFilter, ByteColumn, CounterBits, CountingBloomFilter, Error,
    ScalableBloomFilter, layout::Layout,
};
use pyo3::prelude::*;
use pyo3::pyclass::CompareOp;
use pyo3::types::{PyBytes, PyList, PyType};

mod errors;
mod keys;

use errors::to_py;
use keys::{Batch, Input, Key, Plan, Probe, Sink, WALK_CHUNK, Walk};

fn read<T>(lock: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    lock.read().unwrap_or_else(PoisonError::into_inner)
}

fn write<T>(lock: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    lock.write().unwrap_or_else(PoisonError::into_inner)
}

// ---------------------------------------------------------------------------------------------
// The filter kinds as sinks and probes of batches.

impl Sink for BloomFilter {
    fn u64s(&mut self, keys: &[u64]) -> Result<(), Error> {
        self.insert_batch(keys);
        Ok(())
    }
    fn column(&mut self, column: &ByteColumn<'_>, _: Walk<'_>) -> Result<(), Error> {
        self.insert_column(column);
        Ok(())
    }
    fn slices(&mut self, keys: &[&[u8]]) -> Result<(), Error> {
        self.insert_batch(keys);
        Ok(())
    }
    fn fixed(&mut self, keys: &[[u8; 16]]) -> Result<(), Error> {
        self.insert_batch(keys);
        Ok(())
    }
}

/// The atomic filter inserts through `&self`: a sink is a shared reference.
impl Sink for &AtomicBloomFilter {
    fn u64s(&mut self, keys: &[u64]) -> Result<(), Error> {
        self.insert_batch(keys);
        Ok(())
    }
    fn column(&mut self, column: &ByteColumn<'_>, _: Walk<'_>) -> Result<(), Error> {
        self.insert_column(column);
        Ok(())
    }
    fn slices(&mut self, keys: &[&[u8]]) -> Result<(), Error> {
        self.insert_batch(keys);
        Ok(())
    }
    fn fixed(&mut self, keys: &[[u8; 16]]) -> Result<(), Error> {
        self.insert_batch(keys);
        Ok(())
    }
}

impl Sink for CountingBloomFilter {
    fn u64s(&mut self, keys: &[u64]) -> Result<(), Error> {
        self.insert_batch(keys);
        Ok(())
    }
    fn column(&mut self, _: &ByteColumn<'_>, walk: Walk<'_>) -> Result<(), Error> {
        walk(&mut |keys| self.insert_batch(keys));
        Ok(())
    }
    fn slices(&mut self, keys: &[&[u8]]) -> Result<(), Error> {
        self.insert_batch(keys);
        Ok(())
    }
    fn fixed(&mut self, keys: &[[u8; 16]]) -> Result<(), Error> {
        self.insert_batch(keys);
        Ok(())
    }
}

impl Sink for ScalableBloomFilter {
    fn u64s(&mut self, keys: &[u64]) -> Result<(), Error> {
        self.insert_batch(keys).map(drop)
    }
    fn column(&mut self, _: &ByteColumn<'_>, walk: Walk<'_>) -> Result<(), Error> {
        let mut result = Ok(());
        walk(&mut |keys| {
            if result.is_ok() {
                result = self.insert_batch(keys).map(drop);
            }
        });
        result
    }
    fn slices(&mut self, keys: &[&[u8]]) -> Result<(), Error> {
        self.insert_batch(keys).map(drop)
    }
    fn fixed(&mut self, keys: &[[u8; 16]]) -> Result<(), Error> {
        self.insert_batch(keys).map(drop)
    }
}

/// Parquet's filter hashes each value's plain encoding: 32-bit keys as their 4 bytes (INT32).
impl Sink for SplitBlockFilter {
    const NARROW: bool = true;
    fn u64s(&mut self, keys: &[u64]) -> Result<(), Error> {
        self.insert_batch(keys);
        Ok(())
    }
    fn u32s(&mut self, keys: &[u32]) -> Result<(), Error> {
        self.insert_batch(keys);
        Ok(())
    }
    fn column(&mut self, _: &ByteColumn<'_>, walk: Walk<'_>) -> Result<(), Error> {
        walk(&mut |keys| self.slices(keys).unwrap_or(()));
        Ok(())
    }
    fn slices(&mut self, keys: &[&[u8]]) -> Result<(), Error> {
        for k in keys {
            self.insert(*k);
        }
        Ok(())
    }
    fn fixed(&mut self, keys: &[[u8; 16]]) -> Result<(), Error> {
        for k in keys {
            self.insert(k);
        }
        Ok(())
    }
}

macro_rules! probe_via_filter {
    ($t:ty) => {
        impl Probe for $t {
            fn u64s(&self, keys: &[u64], out: &mut [bool]) {
                self.contains_batch(keys, out);
            }
            fn column(&self, column: &ByteColumn<'_>, _: Walk<'_>, out: &mut [bool]) {
                self.contains_column(column, out);
            }
            fn fixed(&self, keys: &[[u8; 16]], out: &mut [bool]) {
                self.contains_batch(keys, out);
            }
        }
    };
}
probe_via_filter!(BloomFilter);
probe_via_filter!(AtomicBloomFilter);
probe_via_filter!(CountingBloomFilter);

impl Probe for ScalableBloomFilter {
    fn u64s(&self, keys: &[u64], out: &mut [bool]) {
        self.contains_batch(keys, out);
    }
    fn column(&self, _: &ByteColumn<'_>, walk: Walk<'_>, out: &mut [bool]) {
        let mut chunks = out.chunks_mut(WALK_CHUNK);
        walk(&mut |keys| {
            let o = chunks.next().expect("one answer slice per key slice");
            self.contains_batch(keys, o);
        });
    }
    fn fixed(&self, keys: &[[u8; 16]], out: &mut [bool]) {
        self.contains_batch(keys, out);
    }
}

impl Probe for SplitBlockFilter {
    const NARROW: bool = true;
    fn u64s(&self, keys: &[u64], out: &mut [bool]) {
        self.contains_batch(keys, out);
    }
    fn u32s(&self, keys: &[u32], out: &mut [bool]) {
        self.contains_batch(keys, out);
    }
    fn column(&self, _: &ByteColumn<'_>, walk: Walk<'_>, out: &mut [bool]) {
        let mut i = 0;
        walk(&mut |keys| {
            for k in keys {
                out[i] = self.contains(*k);
                i += 1;
            }
        });
    }
    fn fixed(&self, keys: &[[u8; 16]], out: &mut [bool]) {
        for (k, o) in keys.iter().zip(out) {
            *o = self.contains(k);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Batches: resolve with the GIL, run without it.

/// Inserts a batch (NumPy or pyarrow; a `ChunkedArray` chunk by chunk) with the GIL released.
/// `run` takes the lock and inserts one plan.
fn insert_batch_with(
    keys: &Bound<'_, PyAny>,
    run: impl Fn(&Plan) -> Result<(), Error> + Sync,
) -> PyResult<()> {
    let py = keys.py();
    let batches = match keys::resolve(keys)? {
        Input::One(b) => vec![b],
        Input::Chunked(bs) => bs,
    };
    for b in &batches {
        let plan = b.plan;
        // The objects in `b.keep` stay alive on this stack while the GIL is released.
        py.allow_threads(|| run(&plan)).map_err(to_py)?;
    }
    Ok(())
}

/// Answers a batch: a NumPy `bool` array for NumPy input, a pyarrow `BooleanArray` (nulls where
/// the keys are null) for a pyarrow `Array`, a `ChunkedArray` of them for a `ChunkedArray`.
fn contains_batch_with<'py>(
    keys: &Bound<'py, PyAny>,
    run: impl Fn(&Plan, &mut [bool]) -> Result<(), Error> + Sync,
) -> PyResult<Bound<'py, PyAny>> {
    let py = keys.py();
    match keys::resolve(keys)? {
        Input::One(b) => answer(py, &b, &run),
        Input::Chunked(bs) => {
            let pa = py.import("pyarrow")?;
            let list = PyList::empty(py);
            for b in &bs {
                list.append(answer(py, b, &run)?)?;
            }
            pa.call_method1("chunked_array", (list, pa.call_method0("bool_")?))
        }
    }
}

fn answer<'py>(
    py: Python<'py>,
    b: &Batch,
    run: &(impl Fn(&Plan, &mut [bool]) -> Result<(), Error> + Sync),
) -> PyResult<Bound<'py, PyAny>> {
    let n = b.plan.len;
    let plan = b.plan;
    match &b.arrow {
        None => {
            let np = py.import("numpy")?;
            let out = np.call_method1("zeros", (n, np.getattr("bool_")?))?;
            let ai = out.getattr("__array_interface__")?;
            let (ptr, _): (usize, bool) = ai.get_item("data")?.extract()?;
            py.allow_threads(|| {
                let answers: &mut [bool] = if n == 0 {
                    &mut []
                } else {
                    // SAFETY: `out` is a new C-contiguous, zero-filled (all `false`) NumPy
                    // bool array of `n` one-byte elements that no other code has seen yet; it
                    // is alive on this stack while the GIL is released.
                    unsafe { std::slice::from_raw_parts_mut(ptr as *mut bool, n) }
                };
                run(&plan, answers)
            })
            .map_err(to_py)?;
            Ok(out)
        }
        Some(info) => {
            let offset = if info.null_count > 0 { info.offset } else { 0 };
            let bits = py
                .allow_threads(|| -> Result<Vec<u8>, Error> {
                    let mut answers = vec![false; n];
                    run(&plan, &mut answers)?;
                    Ok(keys::pack_bits(&answers, offset))
                })
                .map_err(to_py)?;
            let pa = py.import("pyarrow")?;
            let data = pa.call_method1("py_buffer", (PyBytes::new(py, &bits),))?;
            let validity = match &info.validity {
                Some(v) => v.bind(py).clone(),
                None => py.None().into_bound(py),
            };
            pa.getattr("BooleanArray")?.call_method1(
                "from_buffers",
                (
                    pa.call_method0("bool_")?,
                    n,
                    vec![validity, data],
                    info.null_count,
                    offset,
                ),
            )
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Single keys.

/// The filter hash of a Python key (the same as the Rust crate's `insert`/`insert_bytes`).
fn hash_key(obj: &Bound<'_, PyAny>, seed: u64) -> PyResult<u64> {
    Ok(match keys::key(obj)? {
        Key::Int(v) => blockbloom::hash::hash_u64(v, seed),
        Key::Bytes(b) => blockbloom::hash::hash_bytes(&b, seed),
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
        Some(other) => Err(Python::with_gil(|py| {
            errors::raise(
                py,
                "InvalidParameterError",
                "InvalidParameter",
                &format!("invalid layout {other:?}: expected '8x64' or '4x128'"),
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

// ---------------------------------------------------------------------------------------------
// BloomFilter

/// A cache-line-blocked Bloom filter: every key sets its bits in one 64-byte block.
///
/// BloomFilter(capacity, fpr, seed=0, *, layout=None, probes=None, keyed=False)
///
/// The smallest filter that holds `capacity` keys at a false-positive rate at or below `fpr`
/// (the exact model of the layout). Keys: `int` (hashed as its 64-bit little-endian form),
/// `str` (UTF-8) and `bytes`, exactly as the Rust crate's `insert`/`insert_bytes`; batches
/// take NumPy and pyarrow arrays in place and release the GIL.
#[pyclass(module = "blockbloom", name = "BloomFilter", frozen)]
pub struct PyBloomFilter {
    inner: RwLock<BloomFilter>,
}

impl PyBloomFilter {
    fn wrap(f: BloomFilter) -> PyBloomFilter {
        PyBloomFilter {
            inner: RwLock::new(f),
        }
    }
    fn cloned(&self) -> BloomFilter {
        read(&self.inner).clone()
    }
}

#[pymethods]
impl PyBloomFilter {
    #[new]
    #[pyo3(signature = (capacity, fpr, seed = 0, *, layout = None, probes = None, keyed = false))]
    fn new(
        py: Python<'_>,
        capacity: u64,
        fpr: f64,
        seed: u64,
        layout: Option<&str>,
        probes: Option<u32>,
        keyed: bool,
    ) -> PyResult<Self> {
        let mut b = BloomFilter::builder()
            .capacity(capacity)
            .fpr(fpr)
            .seed(seed);
        if let Some(l) = parse_layout(layout)? {
            b = b.layout(l);
        }
        if let Some(k) = probes {
            b = b.probes(k);
        }
        if keyed {
            b = b.keyed();
        }
        let f = py.allow_threads(|| b.build()).map_err(to_py)?;
        Ok(Self::wrap(f))
    }

    /// Adds one key (`int`, `str` or `bytes`).
    fn add(&self, key: &Bound<'_, PyAny>) -> PyResult<()> {
        let seed = read(&self.inner).seed();
        let h = hash_key(key, seed)?;
        write(&self.inner).insert_hash(h);
        Ok(())
    }

    /// Adds every key of an iterable; a NumPy or pyarrow array goes through `insert_batch`.
    /// A key of an unsupported type raises before any key is added.
    fn update(&self, keys: &Bound<'_, PyAny>) -> PyResult<()> {
        if is_batch(keys)? {
            return self.insert_batch(keys);
        }
        let seed = read(&self.inner).seed();
        let hashes = hashes_of(keys, |k| hash_key(k, seed))?;
        let py = keys.py();
        py.allow_threads(|| write(&self.inner).insert_hash_batch(&hashes));
        Ok(())
    }

    fn __contains__(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let f = read(&self.inner);
        Ok(f.contains_hash(hash_key(key, f.seed())?))
    }

    /// Inserts a batch of keys without the interpreter: a 1-D C-contiguous NumPy array of
    /// uint64/int64/uint32/int32 (32-bit keys hash as their 64-bit value, like `int`), or a
    /// pyarrow Array/ChunkedArray of those integers, string, large_string, binary,
    /// large_binary or fixed_size_binary(16) (nulls are skipped). Read in place; the GIL is
    /// released while it runs.
    fn insert_batch(&self, keys: &Bound<'_, PyAny>) -> PyResult<()> {
        insert_batch_with(keys, |plan| {
            let mut f = write(&self.inner);
            // SAFETY: `plan` comes from `keys::resolve`, and `insert_batch_with` keeps its
            // owners alive for the call.
            unsafe { keys::insert(&mut *f, plan) }
        })
    }

    /// Answers a batch (the inputs of `insert_batch`): a NumPy bool array, or a pyarrow
    /// BooleanArray (null where the key is null) for pyarrow input. The GIL is released.
    fn contains_batch<'py>(&self, keys: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        contains_batch_with(keys, |plan, out| {
            let f = read(&self.inner);
            // SAFETY: as in `insert_batch`.
            unsafe { keys::contains(&*f, plan, out) }
        })
    }

    /// Estimated number of distinct keys inserted, from the set bits.
    fn estimated_len(&self) -> f64 {
        read(&self.inner).estimated_len()
    }

    /// Fraction of bits set.
    fn fill_ratio(&self) -> f64 {
        read(&self.inner).fill_ratio()
    }

    /// The false-positive rate of the filter as it is now, computed from its bits.
    fn expected_fpr(&self) -> f64 {
        read(&self.inner).expected_fpr()
    }

    /// Removes every key.
    fn clear(&self) {
        write(&self.inner).clear();
    }

    fn copy(&self) -> Self {
        Self::wrap(self.cloned())
    }
    fn __copy__(&self) -> Self {
        self.copy()
    }
    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> Self {
        self.copy()
    }

    /// A new filter holding the keys of both (exact: bitwise or). The filters must have the
    /// same shape and seed, else `IncompatibleFiltersError`.
    fn union(&self, other: &Bound<'_, PyBloomFilter>) -> PyResult<Self> {
        let mut f = self.cloned();
        f.union(&other.get().cloned()).map_err(to_py)?;
        Ok(Self::wrap(f))
    }

    /// A new filter of the bits both share (a superset of the common keys' filter).
    fn intersection(&self, other: &Bound<'_, PyBloomFilter>) -> PyResult<Self> {
        let mut f = self.cloned();
        f.intersect(&other.get().cloned()).map_err(to_py)?;
        Ok(Self::wrap(f))
    }

    fn __or__(&self, other: &Bound<'_, PyBloomFilter>) -> PyResult<Self> {
        self.union(other)
    }
    fn __and__(&self, other: &Bound<'_, PyBloomFilter>) -> PyResult<Self> {
        self.intersection(other)
    }
    fn __ior__(slf: &Bound<'_, Self>, other: &Bound<'_, PyBloomFilter>) -> PyResult<()> {
        let o = other.get().cloned();
        write(&slf.get().inner).union(&o).map_err(to_py)
    }
    fn __iand__(slf: &Bound<'_, Self>, other: &Bound<'_, PyBloomFilter>) -> PyResult<()> {
        let o = other.get().cloned();
        write(&slf.get().inner).intersect(&o).map_err(to_py)
    }

    fn __richcmp__(&self, other: &Bound<'_, PyAny>, op: CompareOp) -> PyObject {
        let py = other.py();
        match other.downcast::<PyBloomFilter>() {
            Ok(o) => compare(&self.cloned(), &o.get().cloned(), op, py),
            Err(_) => py.NotImplemented(),
        }
    }

    /// The crate's file format (header, blocks, checksum): the same bytes as Rust's `to_bytes`.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let b = read(&self.inner).to_bytes();
        PyBytes::new(py, &b)
    }

    /// A filter from `to_bytes`' bytes (or a file the Rust crate or CLI wrote). Corrupt or
    /// foreign bytes raise `DecodeError` with the crate's message.
    #[classmethod]
    fn from_bytes(_cls: &Bound<'_, PyType>, data: &Bound<'_, PyAny>) -> PyResult<Self> {
        let bytes = bytes_of(data)?;
        BloomFilter::from_bytes(&bytes)
            .map(Self::wrap)
            .map_err(to_py)
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let b = read(&slf.get().inner).to_bytes();
        reduce(slf.as_any(), b)
    }

    #[getter]
    fn capacity(&self) -> u64 {
        read(&self.inner).capacity()
    }
    #[getter]
    fn target_fpr(&self) -> Option<f64> {
        read(&self.inner).target_fpr()
    }
    #[getter]
    fn seed(&self) -> u64 {
        read(&self.inner).seed()
    }
    #[getter]
    fn probes(&self) -> u32 {
        read(&self.inner).probes()
    }
    #[getter]
    fn num_blocks(&self) -> u64 {
        read(&self.inner).num_blocks()
    }
    #[getter]
    fn size_in_bytes(&self) -> usize {
        read(&self.inner).size_in_bytes()
    }
    #[getter]
    fn bits_per_key(&self) -> f64 {
        read(&self.inner).bits_per_key()
    }
    #[getter]
    fn layout(&self) -> String {
        read(&self.inner).layout().to_string()
    }
    /// The SIMD kernel the batches run on (scalar, portable, avx2, avx512, neon).
    #[getter]
    fn isa(&self) -> String {
        read(&self.inner).isa().to_string()
    }

    fn __repr__(&self) -> String {
        let f = read(&self.inner);
        format!(
            "BloomFilter(capacity={}, fpr={}, seed={}, layout='{}', probes={}, size_in_bytes={})",
            f.capacity(),
            f.target_fpr().map_or("None".to_string(), |p| p.to_string()),
            f.seed(),
            f.layout(),
            f.probes(),
            f.size_in_bytes()
        )
    }
}

// ---------------------------------------------------------------------------------------------
// AtomicBloomFilter

/// A Bloom filter that takes inserts from many threads at once (relaxed atomic ORs): its
/// `insert_batch` runs in parallel across Python threads with the GIL released.
///
/// AtomicBloomFilter(capacity, fpr, seed=0, *, layout=None, probes=None, keyed=False)
///
/// Same bits, keys and file format as `BloomFilter`.
#[pyclass(module = "blockbloom", name = "AtomicBloomFilter", frozen)]
pub struct PyAtomicBloomFilter {
    inner: RwLock<AtomicBloomFilter>,
}

impl PyAtomicBloomFilter {
    fn wrap(f: AtomicBloomFilter) -> Self {
        Self {
            inner: RwLock::new(f),
        }
    }
    fn snap(&self) -> BloomFilter {
        read(&self.inner).snapshot()
    }
}

#[pymethods]
impl PyAtomicBloomFilter {
    #[new]
    #[pyo3(signature = (capacity, fpr, seed = 0, *, layout = None, probes = None, keyed = false))]
    fn new(
        py: Python<'_>,
        capacity: u64,
        fpr: f64,
        seed: u64,
        layout: Option<&str>,
        probes: Option<u32>,
        keyed: bool,
    ) -> PyResult<Self> {
        let mut b = BloomFilter::builder()
            .capacity(capacity)
            .fpr(fpr)
            .seed(seed);
        if let Some(l) = parse_layout(layout)? {
            b = b.layout(l);
        }
        if let Some(k) = probes {
            b = b.probes(k);
        }
        if keyed {
            b = b.keyed();
        }
        let f = py.allow_threads(|| b.build_atomic()).map_err(to_py)?;
        Ok(Self::wrap(f))
    }

    /// Adds one key (`int`, `str` or `bytes`).
    fn add(&self, key: &Bound<'_, PyAny>) -> PyResult<()> {
        let f = read(&self.inner);
        f.insert_hash(hash_key(key, f.seed())?);
        Ok(())
    }

    /// Adds every key of an iterable; a NumPy or pyarrow array goes through `insert_batch`.
    fn update(&self, keys: &Bound<'_, PyAny>) -> PyResult<()> {
        if is_batch(keys)? {
            return self.insert_batch(keys);
        }
        let seed = read(&self.inner).seed();
        let hashes = hashes_of(keys, |k| hash_key(k, seed))?;
        keys.py()
            .allow_threads(|| read(&self.inner).insert_hash_batch(&hashes));
        Ok(())
    }

    fn __contains__(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let f = read(&self.inner);
        Ok(f.contains_hash(hash_key(key, f.seed())?))
    }

    /// As `BloomFilter.insert_batch`; threads insert at the same time.
    fn insert_batch(&self, keys: &Bound<'_, PyAny>) -> PyResult<()> {
        insert_batch_with(keys, |plan| {
            let f = read(&self.inner);
            // SAFETY: `plan` comes from `keys::resolve`, and `insert_batch_with` keeps its
            // owners alive for the call.
            unsafe { keys::insert(&mut &*f, plan) }
        })
    }

    /// As `BloomFilter.contains_batch`.
    fn contains_batch<'py>(&self, keys: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        contains_batch_with(keys, |plan, out| {
            let f = read(&self.inner);
            // SAFETY: as in `insert_batch`.
            unsafe { keys::contains(&*f, plan, out) }
        })
    }

    /// Estimated number of distinct keys inserted (from a snapshot of the bits).
    fn estimated_len(&self) -> f64 {
        self.snap().estimated_len()
    }
    fn fill_ratio(&self) -> f64 {
        self.snap().fill_ratio()
    }
    fn expected_fpr(&self) -> f64 {
        self.snap().expected_fpr()
    }

    /// A `BloomFilter` copy of the bits as they are now.
    fn snapshot(&self) -> PyBloomFilter {
        PyBloomFilter::wrap(self.snap())
    }

    fn copy(&self) -> Self {
        Self::wrap(self.snap().into_atomic())
    }
    fn __copy__(&self) -> Self {
        self.copy()
    }
    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> Self {
        self.copy()
    }

    fn union(&self, other: &Bound<'_, PyAtomicBloomFilter>) -> PyResult<Self> {
        let mut f = self.snap();
        f.union(&other.get().snap()).map_err(to_py)?;
        Ok(Self::wrap(f.into_atomic()))
    }
    fn intersection(&self, other: &Bound<'_, PyAtomicBloomFilter>) -> PyResult<Self> {
        let mut f = self.snap();
        f.intersect(&other.get().snap()).map_err(to_py)?;
        Ok(Self::wrap(f.into_atomic()))
    }
    fn __or__(&self, other: &Bound<'_, PyAtomicBloomFilter>) -> PyResult<Self> {
        self.union(other)
    }
    fn __and__(&self, other: &Bound<'_, PyAtomicBloomFilter>) -> PyResult<Self> {
        self.intersection(other)
    }
    fn __ior__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAtomicBloomFilter>) -> PyResult<()> {
        let o = other.get().snap();
        let mut g = write(&slf.get().inner);
        let mut f = g.snapshot();
        f.union(&o).map_err(to_py)?;
        *g = f.into_atomic();
        Ok(())
    }

    fn __richcmp__(&self, other: &Bound<'_, PyAny>, op: CompareOp) -> PyObject {
        let py = other.py();
        match other.downcast::<PyAtomicBloomFilter>() {
            Ok(o) => compare(&self.snap(), &o.get().snap(), op, py),
            Err(_) => py.NotImplemented(),
        }
    }

    /// The same bytes as a `BloomFilter` with these bits.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.snap().to_bytes())
    }

    #[classmethod]
    fn from_bytes(_cls: &Bound<'_, PyType>, data: &Bound<'_, PyAny>) -> PyResult<Self> {
        let bytes = bytes_of(data)?;
        BloomFilter::from_bytes(&bytes)
            .map(|f| Self::wrap(f.into_atomic()))
            .map_err(to_py)
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        reduce(slf.as_any(), slf.get().snap().to_bytes())
    }

    #[getter]
    fn capacity(&self) -> u64 {
        read(&self.inner).capacity()
    }
    #[getter]
    fn target_fpr(&self) -> Option<f64> {
        read(&self.inner).target_fpr()
    }
    #[getter]
    fn seed(&self) -> u64 {
        read(&self.inner).seed()
    }
    #[getter]
    fn probes(&self) -> u32 {
        read(&self.inner).probes()
    }
    #[getter]
    fn size_in_bytes(&self) -> usize {
        read(&self.inner).size_in_bytes()
    }
    #[getter]
    fn isa(&self) -> String {
        read(&self.inner).isa().to_string()
    }

    fn __repr__(&self) -> String {
        let f = read(&self.inner);
        format!(
            "AtomicBloomFilter(capacity={}, seed={}, probes={}, size_in_bytes={})",
            f.capacity(),
            f.seed(),
            f.probes(),
            f.size_in_bytes()
        )
    }
}

// ---------------------------------------------------------------------------------------------
// CountingBloomFilter

/// A Bloom filter of small saturating counters: keys can be removed, and counted.
///
/// CountingBloomFilter(capacity, fpr, seed=0, *, counter_bits=4)
#[pyclass(module = "blockbloom", name = "CountingBloomFilter", frozen)]
pub struct PyCountingBloomFilter {
    inner: RwLock<CountingBloomFilter>,
}

impl PyCountingBloomFilter {
    fn wrap(f: CountingBloomFilter) -> Self {
        Self {
            inner: RwLock::new(f),
        }
    }
}

#[pymethods]
impl PyCountingBloomFilter {
    #[new]
    #[pyo3(signature = (capacity, fpr, seed = 0, *, counter_bits = 4))]
    fn new(capacity: u64, fpr: f64, seed: u64, counter_bits: u32) -> PyResult<Self> {
        let bits = match counter_bits {
            4 => CounterBits::Four,
            8 => CounterBits::Eight,
            other => {
                return Err(Python::with_gil(|py| {
                    errors::raise(
                        py,
                        "InvalidParameterError",
                        "InvalidParameter",
                        &format!("invalid counter_bits {other}: expected 4 or 8"),
                    )
                }));
            }
        };
        CountingBloomFilter::builder()
            .capacity(capacity)
            .fpr(fpr)
            .seed(seed)
            .counter_bits(bits)
            .build()
            .map(Self::wrap)
            .map_err(to_py)
    }

    fn add(&self, key: &Bound<'_, PyAny>) -> PyResult<()> {
        let seed = read(&self.inner).seed();
        let h = hash_key(key, seed)?;
        write(&self.inner).insert_hash(h);
        Ok(())
    }

    fn update(&self, keys: &Bound<'_, PyAny>) -> PyResult<()> {
        if is_batch(keys)? {
            return self.insert_batch(keys);
        }
        let seed = read(&self.inner).seed();
        let hashes = hashes_of(keys, |k| hash_key(k, seed))?;
        keys.py()
            .allow_threads(|| write(&self.inner).insert_hash_batch(&hashes));
        Ok(())
    }

    /// Removes one occurrence of a key. Raises `NotPresentError` (a `KeyError`) if the key is
    /// certainly absent; nothing is changed then.
    fn remove(&self, key: &Bound<'_, PyAny>) -> PyResult<()> {
        let seed = read(&self.inner).seed();
        let h = hash_key(key, seed)?;
        write(&self.inner).remove_hash(h).map_err(to_py)
    }

    /// Removes one occurrence of a key if it may be present; returns whether it did.
    fn discard(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let seed = read(&self.inner).seed();
        let h = hash_key(key, seed)?;
        match write(&self.inner).remove_hash(h) {
            Ok(()) => Ok(true),
            Err(Error::NotPresent) => Ok(false),
            Err(e) => Err(to_py(e)),
        }
    }

    /// An upper estimate of how many times the key was inserted (its smallest counter).
    fn count(&self, key: &Bound<'_, PyAny>) -> PyResult<u32> {
        let f = read(&self.inner);
        Ok(f.estimate_count_hash(hash_key(key, f.seed())?))
    }

    fn __contains__(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let f = read(&self.inner);
        Ok(f.contains_hash(hash_key(key, f.seed())?))
    }

    /// As `BloomFilter.insert_batch`.
    fn insert_batch(&self, keys: &Bound<'_, PyAny>) -> PyResult<()> {
        insert_batch_with(keys, |plan| {
            let mut f = write(&self.inner);
            // SAFETY: `plan` comes from `keys::resolve`, and `insert_batch_with` keeps its
            // owners alive for the call.
            unsafe { keys::insert(&mut *f, plan) }
        })
    }

    /// As `BloomFilter.contains_batch`.
    fn contains_batch<'py>(&self, keys: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        contains_batch_with(keys, |plan, out| {
            let f = read(&self.inner);
            // SAFETY: as in `insert_batch`.
            unsafe { keys::contains(&*f, plan, out) }
        })
    }

    fn estimated_len(&self) -> f64 {
        read(&self.inner).estimated_len()
    }

    /// The plain `BloomFilter` of the counters that are not zero.
    fn to_bloom(&self) -> PyBloomFilter {
        PyBloomFilter::wrap(read(&self.inner).to_bloom())
    }

    fn clear(&self) {
        write(&self.inner).clear();
    }

    fn copy(&self) -> Self {
        Self::wrap(read(&self.inner).clone())
    }
    fn __copy__(&self) -> Self {
        self.copy()
    }
    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> Self {
        self.copy()
    }

    fn __richcmp__(&self, other: &Bound<'_, PyAny>, op: CompareOp) -> PyObject {
        let py = other.py();
        match other.downcast::<PyCountingBloomFilter>() {
            Ok(o) => {
                let b = read(&o.get().inner).clone();
                compare(&*read(&self.inner), &b, op, py)
            }
            Err(_) => py.NotImplemented(),
        }
    }

    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &read(&self.inner).to_bytes())
    }

    #[classmethod]
    fn from_bytes(_cls: &Bound<'_, PyType>, data: &Bound<'_, PyAny>) -> PyResult<Self> {
        let bytes = bytes_of(data)?;
        CountingBloomFilter::from_bytes(&bytes)
            .map(Self::wrap)
            .map_err(to_py)
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let b = read(&slf.get().inner).to_bytes();
        reduce(slf.as_any(), b)
    }

    #[getter]
    fn capacity(&self) -> u64 {
        read(&self.inner).capacity()
    }
    #[getter]
    fn seed(&self) -> u64 {
        read(&self.inner).seed()
    }
    #[getter]
    fn counter_bits(&self) -> u32 {
        read(&self.inner).counter_bits().bits()
    }
    #[getter]
    fn size_in_bytes(&self) -> usize {
        read(&self.inner).size_in_bytes()
    }

    fn __repr__(&self) -> String {
        let f = read(&self.inner);
        format!(
            "CountingBloomFilter(capacity={}, seed={}, counter_bits={}, size_in_bytes={})",
            f.capacity(),
            f.seed(),
            f.counter_bits().bits(),
            f.size_in_bytes()
        )
    }
}

// ---------------------------------------------------------------------------------------------
// ScalableBloomFilter

/// A Bloom filter that grows with its keys under a fixed false-positive target (new stages
/// of `growth` times the capacity, each at `ratio` times the rate of the one before).
///
/// ScalableBloomFilter(initial_capacity, fpr, seed=0, *, growth=None, ratio=None)
#[pyclass(module = "blockbloom", name = "ScalableBloomFilter", frozen)]
pub struct PyScalableBloomFilter {
    inner: RwLock<ScalableBloomFilter>,
}

impl PyScalableBloomFilter {
    fn wrap(f: ScalableBloomFilter) -> Self {
        Self {
            inner: RwLock::new(f),
        }
    }
}

#[pymethods]
impl PyScalableBloomFilter {
    #[new]
    #[pyo3(signature = (initial_capacity, fpr, seed = 0, *, growth = None, ratio = None))]
    fn new(
        initial_capacity: u64,
        fpr: f64,
        seed: u64,
        growth: Option<f64>,
        ratio: Option<f64>,
    ) -> PyResult<Self> {
        let mut b = ScalableBloomFilter::builder()
            .initial_capacity(initial_capacity)
            .fpr(fpr)
            .seed(seed);
        if let Some(g) = growth {
            b = b.growth(g);
        }
        if let Some(r) = ratio {
            b = b.ratio(r);
        }
        b.build().map(Self::wrap).map_err(to_py)
    }

    fn add(&self, key: &Bound<'_, PyAny>) -> PyResult<()> {
        let seed = read(&self.inner).seed();
        let h = hash_key(key, seed)?;
        write(&self.inner).insert_hash(h).map(drop).map_err(to_py)
    }

    fn update(&self, keys: &Bound<'_, PyAny>) -> PyResult<()> {
        if is_batch(keys)? {
            return self.insert_batch(keys);
        }
        let seed = read(&self.inner).seed();
        let hashes = hashes_of(keys, |k| hash_key(k, seed))?;
        let mut f = write(&self.inner);
        for h in hashes {
            f.insert_hash(h).map_err(to_py)?;
        }
        Ok(())
    }

    fn __contains__(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let f = read(&self.inner);
        Ok(f.contains_hash(hash_key(key, f.seed())?))
    }

    /// As `BloomFilter.insert_batch`.
    fn insert_batch(&self, keys: &Bound<'_, PyAny>) -> PyResult<()> {
        insert_batch_with(keys, |plan| {
            let mut f = write(&self.inner);
            // SAFETY: `plan` comes from `keys::resolve`, and `insert_batch_with` keeps its
            // owners alive for the call.
            unsafe { keys::insert(&mut *f, plan) }
        })
    }

    /// As `BloomFilter.contains_batch`.
    fn contains_batch<'py>(&self, keys: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        contains_batch_with(keys, |plan, out| {
            let f = read(&self.inner);
            // SAFETY: as in `insert_batch`.
            unsafe { keys::contains(&*f, plan, out) }
        })
    }

    /// Keys counted as new when inserted (a key that was a false positive is not counted).
    fn estimated_len(&self) -> f64 {
        read(&self.inner).len() as f64
    }

    fn expected_fpr(&self) -> f64 {
        read(&self.inner).expected_fpr()
    }

    fn copy(&self) -> Self {
        Self::wrap(read(&self.inner).clone())
    }
    fn __copy__(&self) -> Self {
        self.copy()
    }
    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> Self {
        self.copy()
    }

    fn __richcmp__(&self, other: &Bound<'_, PyAny>, op: CompareOp) -> PyObject {
        let py = other.py();
        match other.downcast::<PyScalableBloomFilter>() {
            Ok(o) => {
                let b = read(&o.get().inner).clone();
                compare(&*read(&self.inner), &b, op, py)
            }
            Err(_) => py.NotImplemented(),
        }
    }

    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &read(&self.inner).to_bytes())
    }

    #[classmethod]
    fn from_bytes(_cls: &Bound<'_, PyType>, data: &Bound<'_, PyAny>) -> PyResult<Self> {
        let bytes = bytes_of(data)?;
        ScalableBloomFilter::from_bytes(&bytes)
            .map(Self::wrap)
            .map_err(to_py)
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let b = read(&slf.get().inner).to_bytes();
        reduce(slf.as_any(), b)
    }

    /// Keys the current stages hold at their rates.
    #[getter]
    fn capacity(&self) -> u64 {
        read(&self.inner).capacity()
    }
    #[getter]
    fn stages(&self) -> usize {
        read(&self.inner).stages().len()
    }
    #[getter]
    fn seed(&self) -> u64 {
        read(&self.inner).seed()
    }
    #[getter]
    fn size_in_bytes(&self) -> usize {
        read(&self.inner).size_in_bytes()
    }

    fn __repr__(&self) -> String {
        let f = read(&self.inner);
        format!(
            "ScalableBloomFilter(initial_capacity={}, fpr={}, seed={}, stages={}, size_in_bytes={})",
            f.initial_capacity(),
            f.target_fpr(),
            f.seed(),
            f.stages().len(),
            f.size_in_bytes()
        )
    }
}

// ---------------------------------------------------------------------------------------------
// SplitBlockFilter

/// Parquet's split block Bloom filter (the bitset Parquet files store). Keys hash as their
/// Parquet plain encoding: `int` as INT64, `str`/`bytes` as BYTE_ARRAY; 32-bit arrays as
/// INT32 (4 bytes), unlike the other filters, so a column checks against the filter a Parquet
/// writer stored for it.
///
/// SplitBlockFilter(ndv, fpp)
#[pyclass(module = "blockbloom", name = "SplitBlockFilter", frozen)]
pub struct PySplitBlockFilter {
    inner: RwLock<SplitBlockFilter>,
}

impl PySplitBlockFilter {
    fn wrap(f: SplitBlockFilter) -> Self {
        Self {
            inner: RwLock::new(f),
        }
    }
    fn or_bits(a: &[u8], b: &[u8], and: bool) -> Result<SplitBlockFilter, Error> {
        if a.len() != b.len() {
            return Err(Error::Incompatible("the bitsets differ in size"));
        }
        let bits: Vec<u8> = a
            .iter()
            .zip(b)
            .map(|(x, y)| if and { x & y } else { x | y })
            .collect();
        SplitBlockFilter::from_bitset(&bits)
    }
}

#[pymethods]
impl PySplitBlockFilter {
    #[new]
    #[pyo3(signature = (ndv, fpp))]
    fn new(ndv: u64, fpp: f64) -> PyResult<Self> {
        SplitBlockFilter::new_with_ndv_fpp(ndv, fpp)
            .map(Self::wrap)
            .map_err(to_py)
    }

    /// An empty filter of `num_bytes` (a power of two, at least 32).
    #[staticmethod]
    fn with_num_bytes(num_bytes: usize) -> PyResult<Self> {
        SplitBlockFilter::new_with_num_bytes(num_bytes)
            .map(Self::wrap)
            .map_err(to_py)
    }

    fn add(&self, key: &Bound<'_, PyAny>) -> PyResult<()> {
        let h = parquet_hash(key)?;
        write(&self.inner).insert_hash(h);
        Ok(())
    }

    fn update(&self, keys: &Bound<'_, PyAny>) -> PyResult<()> {
        if is_batch(keys)? {
            return self.insert_batch(keys);
        }
        let hashes = hashes_of(keys, parquet_hash)?;
        write(&self.inner).insert_hash_batch(&hashes);
        Ok(())
    }

    fn __contains__(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let h = parquet_hash(key)?;
        Ok(read(&self.inner).contains_hash(h))
    }

    /// As `BloomFilter.insert_batch`, hashing Parquet's plain encoding (32-bit keys as INT32).
    fn insert_batch(&self, keys: &Bound<'_, PyAny>) -> PyResult<()> {
        insert_batch_with(keys, |plan| {
            let mut f = write(&self.inner);
            // SAFETY: `plan` comes from `keys::resolve`, and `insert_batch_with` keeps its
            // owners alive for the call.
            unsafe { keys::insert(&mut *f, plan) }
        })
    }

    /// As `BloomFilter.contains_batch`.
    fn contains_batch<'py>(&self, keys: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        contains_batch_with(keys, |plan, out| {
            let f = read(&self.inner);
            // SAFETY: as in `insert_batch`.
            unsafe { keys::contains(&*f, plan, out) }
        })
    }

    /// Estimated distinct keys from the set bits (each key sets one bit in each of a
    /// block's eight 32-bit words).
    fn estimated_len(&self) -> f64 {
        let f = read(&self.inner);
        let bits = f.as_bitset();
        let words = bits.len() / 4;
        let set: u64 = bits.iter().map(|b| u64::from(b.count_ones())).sum();
        let fill = set as f64 / (words as f64 * 32.0);
        if fill >= 1.0 {
            return f64::INFINITY;
        }
        // Keys per block: -32 ln(1 - fill) per word, one bit per key in each word.
        -(1.0 - fill).ln() * 32.0 * (words as f64 / 8.0)
    }

    /// The false-positive rate estimated from the bits set.
    fn estimated_fpp(&self) -> f64 {
        read(&self.inner).estimated_fpp()
    }

    fn copy(&self) -> Self {
        Self::wrap(read(&self.inner).clone())
    }
    fn __copy__(&self) -> Self {
        self.copy()
    }
    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> Self {
        self.copy()
    }

    /// A new filter of both filters' keys (bitwise or of bitsets of the same size).
    fn union(&self, other: &Bound<'_, PySplitBlockFilter>) -> PyResult<Self> {
        let b = read(&other.get().inner).to_bitset();
        Self::or_bits(read(&self.inner).as_bitset(), &b, false)
            .map(Self::wrap)
            .map_err(to_py)
    }
    fn intersection(&self, other: &Bound<'_, PySplitBlockFilter>) -> PyResult<Self> {
        let b = read(&other.get().inner).to_bitset();
        Self::or_bits(read(&self.inner).as_bitset(), &b, true)
            .map(Self::wrap)
            .map_err(to_py)
    }
    fn __or__(&self, other: &Bound<'_, PySplitBlockFilter>) -> PyResult<Self> {
        self.union(other)
    }
    fn __and__(&self, other: &Bound<'_, PySplitBlockFilter>) -> PyResult<Self> {
        self.intersection(other)
    }
    fn __ior__(slf: &Bound<'_, Self>, other: &Bound<'_, PySplitBlockFilter>) -> PyResult<()> {
        let b = read(&other.get().inner).to_bitset();
        let mut g = write(&slf.get().inner);
        let isa = g.isa();
        *g = Self::or_bits(g.as_bitset(), &b, false)
            .and_then(|f| f.with_isa(isa))
            .map_err(to_py)?;
        Ok(())
    }

    fn __richcmp__(&self, other: &Bound<'_, PyAny>, op: CompareOp) -> PyObject {
        let py = other.py();
        match other.downcast::<PySplitBlockFilter>() {
            Ok(o) => {
                let b = read(&o.get().inner).clone();
                compare(&*read(&self.inner), &b, op, py)
            }
            Err(_) => py.NotImplemented(),
        }
    }

    /// The bitset, as Parquet stores it (and the Rust crate's `to_bitset`).
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, read(&self.inner).as_bitset())
    }

    /// A filter over a Parquet bitset (a power of two of at least 32 bytes).
    #[classmethod]
    fn from_bytes(_cls: &Bound<'_, PyType>, data: &Bound<'_, PyAny>) -> PyResult<Self> {
        let bytes = bytes_of(data)?;
        SplitBlockFilter::from_bitset(&bytes)
            .map(Self::wrap)
            .map_err(to_py)
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let b = read(&slf.get().inner).to_bitset();
        reduce(slf.as_any(), b)
    }

    #[getter]
    fn num_bytes(&self) -> usize {
        read(&self.inner).num_bytes()
    }
    #[getter]
    fn size_in_bytes(&self) -> usize {
        read(&self.inner).num_bytes()
    }
    #[getter]
    fn isa(&self) -> String {
        read(&self.inner).isa().to_string()
    }

    fn __repr__(&self) -> String {
        format!(
            "SplitBlockFilter(num_bytes={})",
            read(&self.inner).num_bytes()
        )
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
