// The filter kinds as sinks and probes of batches.

use blockbloom::parquet::SplitBlockFilter;
use blockbloom::{
    AtomicBloomFilter, BloomFilter, ByteColumn, CountingBloomFilter, Error, ScalableBloomFilter,
};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};

use crate::errors::to_py;
use crate::keys::{self, Batch, Input, Plan, Probe, Sink, WALK_CHUNK, Walk};

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
pub(crate) fn insert_batch_with(
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
pub(crate) fn contains_batch_with<'py>(
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
