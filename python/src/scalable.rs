// The `ScalableBloomFilter` class.

use std::sync::RwLock;

use blockbloom::{KeyHash, ScalableBloomFilter};
use pyo3::prelude::*;
use pyo3::pyclass::CompareOp;
use pyo3::types::{PyBytes, PyType};

use crate::batches::{contains_batch_with, insert_batch_with};
use crate::errors::to_py;
use crate::keys;
use crate::{bytes_of, compare, hash_key, hashes_of, is_batch, read, reduce, write};

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
        let h = hash_key(key, (KeyHash::Xxh3, seed))?;
        write(&self.inner).insert_hash(h).map(drop).map_err(to_py)
    }

    fn update(&self, keys: &Bound<'_, PyAny>) -> PyResult<()> {
        if is_batch(keys)? {
            return self.insert_batch(keys);
        }
        let seed = read(&self.inner).seed();
        let hashes = hashes_of(keys, |k| hash_key(k, (KeyHash::Xxh3, seed)))?;
        let mut f = write(&self.inner);
        for h in hashes {
            f.insert_hash(h).map_err(to_py)?;
        }
        Ok(())
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

    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let b = read(&self.inner).try_to_bytes().map_err(to_py)?;
        Ok(PyBytes::new(py, &b))
    }

    #[classmethod]
    fn from_bytes(_cls: &Bound<'_, PyType>, data: &Bound<'_, PyAny>) -> PyResult<Self> {
        let bytes = bytes_of(data)?;
        ScalableBloomFilter::from_bytes(&bytes)
            .map(Self::wrap)
            .map_err(to_py)
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let b = read(&slf.get().inner).try_to_bytes().map_err(to_py)?;
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
