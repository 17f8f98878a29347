// The `CountingBloomFilter` class.

use std::sync::RwLock;

use blockbloom::{CounterBits, CountingBloomFilter, Error, KeyHash};
use pyo3::prelude::*;
use pyo3::pyclass::CompareOp;
use pyo3::types::{PyBytes, PyType};

use crate::batches::{contains_batch_with, insert_batch_with};
use crate::bloom::PyBloomFilter;
use crate::errors::{self, to_py};
use crate::keys;
use crate::{bytes_of, compare, hash_key, hashes_of, is_batch, read, reduce, write};

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
        let h = hash_key(key, (KeyHash::Xxh3, seed))?;
        write(&self.inner).insert_hash(h);
        Ok(())
    }

    fn update(&self, keys: &Bound<'_, PyAny>) -> PyResult<()> {
        if is_batch(keys)? {
            return self.insert_batch(keys);
        }
        let seed = read(&self.inner).seed();
        let hashes = hashes_of(keys, |k| hash_key(k, (KeyHash::Xxh3, seed)))?;
        keys.py()
            .allow_threads(|| write(&self.inner).insert_hash_batch(&hashes));
        Ok(())
    }

    /// Removes one occurrence of a key. Raises `NotPresentError` (a `KeyError`) if the key is
    /// certainly absent; nothing is changed then.
    fn remove(&self, key: &Bound<'_, PyAny>) -> PyResult<()> {
        let seed = read(&self.inner).seed();
        let h = hash_key(key, (KeyHash::Xxh3, seed))?;
        write(&self.inner).remove_hash(h).map_err(to_py)
    }

    /// Removes one occurrence of a key if it may be present; returns whether it did.
    fn discard(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let seed = read(&self.inner).seed();
        let h = hash_key(key, (KeyHash::Xxh3, seed))?;
        match write(&self.inner).remove_hash(h) {
            Ok(()) => Ok(true),
            Err(Error::NotPresent) => Ok(false),
            Err(e) => Err(to_py(e)),
        }
    }

    /// An upper estimate of how many times the key was inserted (its smallest counter).
    fn count(&self, key: &Bound<'_, PyAny>) -> PyResult<u32> {
        let f = read(&self.inner);
        Ok(f.estimate_count_hash(hash_key(key, (KeyHash::Xxh3, f.seed()))?))
    }

    fn __contains__(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let f = read(&self.inner);
        Ok(f.contains_hash(hash_key(key, (KeyHash::Xxh3, f.seed()))?))
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

    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let b = read(&self.inner).try_to_bytes().map_err(to_py)?;
        Ok(PyBytes::new(py, &b))
    }

    #[classmethod]
    fn from_bytes(_cls: &Bound<'_, PyType>, data: &Bound<'_, PyAny>) -> PyResult<Self> {
        let bytes = bytes_of(data)?;
        CountingBloomFilter::from_bytes(&bytes)
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
