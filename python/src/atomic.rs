// The `AtomicBloomFilter` class.

use std::sync::RwLock;

use blockbloom::{AtomicBloomFilter, BloomFilter};
use pyo3::prelude::*;
use pyo3::pyclass::CompareOp;
use pyo3::types::{PyBytes, PyType};

use crate::batches::{contains_batch_with, insert_batch_with};
use crate::bloom::PyBloomFilter;
use crate::errors::to_py;
use crate::keys;
use crate::{
    builder, bytes_of, compare, hash_key, hashes_of, is_batch, key_at, read, reduce, write,
};

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
        let f = py.allow_threads(|| b.build_atomic()).map_err(to_py)?;
        Ok(Self::wrap(f))
    }

    /// Adds one key (`int`, `str` or `bytes`).
    fn add(&self, key: &Bound<'_, PyAny>) -> PyResult<()> {
        let f = read(&self.inner);
        f.insert_hash(hash_key(key, key_at(&f))?);
        Ok(())
    }

    /// Adds every key of an iterable; a NumPy or pyarrow array goes through `insert_batch`.
    fn update(&self, keys: &Bound<'_, PyAny>) -> PyResult<()> {
        if is_batch(keys)? {
            return self.insert_batch(keys);
        }
        let at = key_at(&read(&self.inner));
        let hashes = hashes_of(keys, |k| hash_key(k, at))?;
        keys.py()
            .allow_threads(|| read(&self.inner).insert_hash_batch(&hashes));
        Ok(())
    }

    fn __contains__(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let f = read(&self.inner);
        Ok(f.contains_hash(hash_key(key, key_at(&f))?))
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
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let b = self.snap().try_to_bytes().map_err(to_py)?;
        Ok(PyBytes::new(py, &b))
    }

    #[classmethod]
    fn from_bytes(_cls: &Bound<'_, PyType>, data: &Bound<'_, PyAny>) -> PyResult<Self> {
        let bytes = bytes_of(data)?;
        BloomFilter::from_bytes(&bytes)
            .map(|f| Self::wrap(f.into_atomic()))
            .map_err(to_py)
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        reduce(
            slf.as_any(),
            slf.get().snap().try_to_bytes().map_err(to_py)?,
        )
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
