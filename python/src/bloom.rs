// The `BloomFilter` class.

use std::sync::RwLock;

use blockbloom::BloomFilter;
use pyo3::prelude::*;
use pyo3::pyclass::CompareOp;
use pyo3::types::{PyBytes, PyType};

use crate::batches::{contains_batch_with, insert_batch_with};
use crate::errors::to_py;
use crate::keys;
use crate::{
    builder, bytes_of, compare, hash_key, hashes_of, is_batch, key_at, read, reduce, write,
};

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
    pub(crate) fn wrap(f: BloomFilter) -> PyBloomFilter {
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
    #[pyo3(signature = (capacity, fpr, seed = 0, *, layout = None, probes = None, keyed = false, key_hash = "mx32-64", least_memory = false))]
    // One parameter per keyword argument of the Python constructor.
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        capacity: u64,
        fpr: f64,
        seed: u64,
        layout: Option<&str>,
        probes: Option<u32>,
        keyed: bool,
        key_hash: &str,
        least_memory: bool,
    ) -> PyResult<Self> {
        let b = builder(
            capacity,
            fpr,
            seed,
            layout,
            probes,
            keyed,
            key_hash,
            least_memory,
        )?;
        let f = py.allow_threads(|| b.build()).map_err(to_py)?;
        Ok(Self::wrap(f))
    }

    /// Adds one key (`int`, `str` or `bytes`).
    fn add(&self, key: &Bound<'_, PyAny>) -> PyResult<()> {
        let at = key_at(&read(&self.inner));
        let h = hash_key(key, at)?;
        write(&self.inner).insert_hash(h);
        Ok(())
    }

    /// Adds every key of an iterable; a NumPy or pyarrow array goes through `insert_batch`.
    /// A key of an unsupported type raises before any key is added.
    fn update(&self, keys: &Bound<'_, PyAny>) -> PyResult<()> {
        if is_batch(keys)? {
            return self.insert_batch(keys);
        }
        let at = key_at(&read(&self.inner));
        let hashes = hashes_of(keys, |k| hash_key(k, at))?;
        let py = keys.py();
        py.allow_threads(|| write(&self.inner).insert_hash_batch(&hashes));
        Ok(())
    }

    fn __contains__(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let f = read(&self.inner);
        Ok(f.contains_hash(hash_key(key, key_at(&f))?))
    }

    /// Inserts a batch of keys without the interpreter: a 1-D C-contiguous NumPy array of
    /// int8 to int64 or uint8 to uint64 (every key hashes as its 64-bit value, like `int`), or a
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
    /// same shape, seed and key hash, else `IncompatibleFiltersError`.
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
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let b = read(&self.inner).try_to_bytes().map_err(to_py)?;
        Ok(PyBytes::new(py, &b))
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
        let b = read(&slf.get().inner).try_to_bytes().map_err(to_py)?;
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
    /// The key hash: `"aesh-64"` (hash id 2), `"mx32-64"` (hash id 3), `"moremur-64"` (hash
    /// id 4) or `"xxh3-64"` (hash id 1).
    #[getter]
    fn key_hash(&self) -> &'static str {
        read(&self.inner).key_hash().name()
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
