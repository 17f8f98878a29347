// The `SplitBlockFilter` class (Parquet's split block Bloom filter).

use std::sync::RwLock;

use blockbloom::Error;
use blockbloom::parquet::SplitBlockFilter;
use pyo3::prelude::*;
use pyo3::pyclass::CompareOp;
use pyo3::types::{PyBytes, PyType};

use crate::batches::{contains_batch_with, insert_batch_with};
use crate::errors::to_py;
use crate::keys;
use crate::{bytes_of, compare, hashes_of, is_batch, parquet_hash, read, reduce, write};

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
