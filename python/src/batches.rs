// The filter kinds as sinks and probes of batches.

use blockbloom::parquet::SplitBlockFilter;
use blockbloom::{
    AtomicBloomFilter, BloomFilter, ByteColumn, CountingBloomFilter, Error, ScalableBloomFilter,
};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};

use crate::each_int;
use crate::errors::to_py;
use crate::keys::{self, Batch, Input, Int, Ints, Plan, Probe, Sink, WALK_CHUNK, Walk};

impl Sink for BloomFilter {
    fn ints(&mut self, keys: Ints<'_>) -> Result<(), Error> {
        each_int!(keys, k => self.insert_batch(k));
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
    fn ints(&mut self, keys: Ints<'_>) -> Result<(), Error> {
        each_int!(keys, k => self.insert_batch(k));
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
    fn ints(&mut self, keys: Ints<'_>) -> Result<(), Error> {
        each_int!(keys, k => self.insert_batch(k));
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
    fn ints(&mut self, keys: Ints<'_>) -> Result<(), Error> {
        each_int!(keys, k => self.insert_batch(k).map(drop))
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

/// Parquet's filter hashes each value's plain encoding: integers of up to 32 bits as INT32
/// (4 bytes of the value extended to 32 bits), 64-bit ones as INT64.
impl Sink for SplitBlockFilter {
    fn ints(&mut self, keys: Ints<'_>) -> Result<(), Error> {
        match keys {
            Ints::U64(k) => self.insert_batch(k),
            Ints::I64(k) => self.insert_batch(k),
            Ints::U32(k) => self.insert_batch(k),
            Ints::I32(k) => self.insert_batch(k),
            narrow => self.insert_batch(&int32_values(narrow)),
        }
        Ok(())
    }
    fn gathered(&mut self, kind: Int, values: &[u64]) -> Result<(), Error> {
        if int32(kind) {
            let v: Vec<u32> = values.iter().map(|&v| v as u32).collect();
            self.insert_batch(&v);
        } else {
            self.insert_batch(values);
        }
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
            fn ints(&self, keys: Ints<'_>, out: &mut [bool]) {
                each_int!(keys, k => self.contains_batch(k, out));
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
    fn ints(&self, keys: Ints<'_>, out: &mut [bool]) {
        each_int!(keys, k => self.contains_batch(k, out));
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
    fn ints(&self, keys: Ints<'_>, out: &mut [bool]) {
        match keys {
            Ints::U64(k) => self.contains_batch(k, out),
            Ints::I64(k) => self.contains_batch(k, out),
            Ints::U32(k) => self.contains_batch(k, out),
            Ints::I32(k) => self.contains_batch(k, out),
            narrow => self.contains_batch(&int32_values(narrow), out),
        }
    }
    fn gathered(&self, kind: Int, values: &[u64], out: &mut [bool]) {
        if int32(kind) {
            let v: Vec<u32> = values.iter().map(|&v| v as u32).collect();
            self.contains_batch(&v, out);
        } else {
            self.contains_batch(values, out);
        }
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

/// Whether Parquet writes integers of `kind` as INT32 (every width up to 32 bits).
fn int32(kind: Int) -> bool {
    !matches!(kind, Int::U64 | Int::I64)
}

/// 8- and 16-bit keys as Parquet's INT32 values (the value extended to 32 bits).
fn int32_values(keys: Ints<'_>) -> Vec<u32> {
    match keys {
        Ints::U16(k) => k.iter().map(|&v| v as u32).collect(),
        Ints::I16(k) => k.iter().map(|&v| v as i32 as u32).collect(),
        Ints::U8(k) => k.iter().map(|&v| v as u32).collect(),
        Ints::I8(k) => k.iter().map(|&v| v as i32 as u32).collect(),
        _ => unreachable!("the 8- and 16-bit keys"),
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
