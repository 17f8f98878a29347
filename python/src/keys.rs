//! Keys from Python: single keys (`int`, `str`, `bytes`) and batches read in place from NumPy
//! arrays (`__array_interface__`) and pyarrow arrays (`Array.buffers()`).
//!
//! abi3 for CPython 3.9 has no buffer protocol in the limited API, so batches are read through
//! the addresses NumPy and pyarrow publish; the Python objects that own the memory are held
//! (in [`Batch::keep`]) for as long as the batch is read.

use std::borrow::Cow;

use blockbloom::{ByteColumn, Error};
use pyo3::exceptions::PyOverflowError;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyInt, PyList, PyString};

use crate::errors::{invalid_keys, unsupported};

/// Keys per chunk where a batch is gathered (nulls skipped) or widened before hashing.
const CHUNK: usize = 2048;

/// One key from Python, as the key bytes the Rust crate documents.
pub enum Key<'a> {
    /// An `int` (or anything with `__index__`): its 64-bit little-endian form.
    Int(u64),
    /// `str` as UTF-8, `bytes`/`bytearray` as they are.
    Bytes(Cow<'a, [u8]>),
}

/// A Python `int` in `[-2**63, 2**64)` as the 64 bits of its little-endian form.
fn int_bits(i: &Bound<'_, PyInt>) -> PyResult<u64> {
    if let Ok(v) = i.extract::<i64>() {
        return Ok(v as u64);
    }
    i.extract::<u64>().map_err(|_| {
        PyOverflowError::new_err("int key out of range: keys are 64-bit, in [-2**63, 2**64)")
    })
}

/// The key bytes of one Python key.
pub fn key<'a>(obj: &'a Bound<'_, PyAny>) -> PyResult<Key<'a>> {
    if let Ok(b) = obj.downcast::<PyBytes>() {
        return Ok(Key::Bytes(Cow::Borrowed(b.as_bytes())));
    }
    if let Ok(s) = obj.downcast::<PyString>() {
        return Ok(Key::Bytes(match s.to_cow()? {
            Cow::Borrowed(s) => Cow::Borrowed(s.as_bytes()),
            Cow::Owned(s) => Cow::Owned(s.into_bytes()),
        }));
    }
    if let Ok(i) = obj.downcast::<PyInt>() {
        return int_bits(i).map(Key::Int);
    }
    if let Ok(b) = obj.downcast::<PyByteArray>() {
        return Ok(Key::Bytes(Cow::Owned(b.to_vec())));
    }
    // NumPy's integer scalars are not `int`s but have `__index__`; floats do not.
    if obj.hasattr("__index__")? && !obj.is_instance_of::<pyo3::types::PyFloat>() {
        let i = obj.call_method0("__index__")?;
        return int_bits(i.downcast::<PyInt>()?).map(Key::Int);
    }
    Err(unsupported(format!(
        "unsupported key type {}: keys are int, str or bytes",
        obj.get_type().name()?
    )))
}

/// The integer width and signedness of a batch. Every integer key is its 64-bit value
/// (sign-extended if signed, zero-extended if not), as in the Rust crate.
#[derive(Clone, Copy, Debug)]
pub enum Int {
    U64,
    I64,
    U32,
    I32,
    U16,
    I16,
    U8,
    I8,
}

impl Int {
    fn width(self) -> usize {
        match self {
            Int::U64 | Int::I64 => 8,
            Int::U32 | Int::I32 => 4,
            Int::U16 | Int::I16 => 2,
            Int::U8 | Int::I8 => 1,
        }
    }
}

/// Integer keys in place, at their own width: what a kind's batch methods take (each key
/// hashed as its 64-bit value, widened in the kernel's lanes; Parquet's filter as its
/// INT32 or INT64 plain encoding).
#[derive(Clone, Copy)]
pub enum Ints<'a> {
    U64(&'a [u64]),
    I64(&'a [i64]),
    U32(&'a [u32]),
    I32(&'a [i32]),
    U16(&'a [u16]),
    I16(&'a [i16]),
    U8(&'a [u8]),
    I8(&'a [i8]),
}

/// `$body` with `$k` the slice of whichever width `$ints` holds.
#[macro_export]
macro_rules! each_int {
    ($ints:expr, $k:ident => $body:expr) => {
        match $ints {
            $crate::keys::Ints::U64($k) => $body,
            $crate::keys::Ints::I64($k) => $body,
            $crate::keys::Ints::U32($k) => $body,
            $crate::keys::Ints::I32($k) => $body,
            $crate::keys::Ints::U16($k) => $body,
            $crate::keys::Ints::I16($k) => $body,
            $crate::keys::Ints::U8($k) => $body,
            $crate::keys::Ints::I8($k) => $body,
        }
    };
}

impl<'a> Ints<'a> {
    /// `len` keys of `kind` at `ptr`.
    ///
    /// # Safety
    /// `ptr` is aligned for `kind` and `len` keys of it lie there, alive for `'a`.
    unsafe fn at(kind: Int, ptr: usize, len: usize) -> Ints<'a> {
        // SAFETY: the caller's guarantees, per width.
        unsafe {
            match kind {
                Int::U64 => Ints::U64(std::slice::from_raw_parts(ptr as *const u64, len)),
                Int::I64 => Ints::I64(std::slice::from_raw_parts(ptr as *const i64, len)),
                Int::U32 => Ints::U32(std::slice::from_raw_parts(ptr as *const u32, len)),
                Int::I32 => Ints::I32(std::slice::from_raw_parts(ptr as *const i32, len)),
                Int::U16 => Ints::U16(std::slice::from_raw_parts(ptr as *const u16, len)),
                Int::I16 => Ints::I16(std::slice::from_raw_parts(ptr as *const i16, len)),
                Int::U8 => Ints::U8(std::slice::from_raw_parts(ptr as *const u8, len)),
                Int::I8 => Ints::I8(std::slice::from_raw_parts(ptr as *const i8, len)),
            }
        }
    }
}

/// Where a batch's keys are. Addresses are plain integers so the plan can cross
/// `allow_threads`; [`Batch::keep`] holds the objects that own the memory.
#[derive(Clone, Copy, Debug)]
pub enum Values {
    /// `len` integers of this kind at `ptr` (any alignment).
    Int { kind: Int, ptr: usize },
    /// Arrow `Utf8`/`Binary` (`wide == false`, `i32` offsets) or `Large*` (`i64`): `len + 1`
    /// offsets at `offsets` (aligned), then `values_len` bytes at `values`.
    Bytes {
        wide: bool,
        offsets: usize,
        values: usize,
        values_len: usize,
    },
    /// `len` keys of 16 bytes at `ptr`.
    Fixed16 { ptr: usize },
}

/// A batch of keys, resolved while holding the GIL, read without it.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    pub values: Values,
    pub len: usize,
    /// The Arrow validity bitmap and the bit of the first key, when the array has nulls.
    pub validity: Option<(usize, usize)>,
}

/// What the answers to a pyarrow input need: its offset, null count and validity buffer.
pub struct ArrowInfo {
    pub offset: usize,
    pub null_count: usize,
    pub validity: Option<PyObject>,
}

pub struct Batch {
    pub plan: Plan,
    /// `Some` for pyarrow input (answers are a `BooleanArray`), `None` for NumPy.
    pub arrow: Option<ArrowInfo>,
    /// The objects that own the memory the plan points into: held, never read.
    #[allow(dead_code)]
    pub keep: Vec<PyObject>,
}

/// The input of a batch call: one array, or a pyarrow `ChunkedArray` as its chunks.
pub enum Input {
    One(Batch),
    Chunked(Vec<Batch>),
}

fn pyarrow<'py>(py: Python<'py>) -> PyResult<Option<Bound<'py, PyModule>>> {
    // An object can only be a pyarrow array if pyarrow is imported.
    let modules = py.import("sys")?.getattr("modules")?;
    match modules.downcast::<PyDict>()?.get_item("pyarrow")? {
        Some(m) => Ok(Some(m.downcast_into::<PyModule>()?)),
        None => Ok(None),
    }
}

/// Resolves a batch argument: a 1-D C-contiguous NumPy array of integers (int8 to uint64)
/// (or 16-byte `S16`/`V16` records), or a pyarrow `Array`/`ChunkedArray` of those integers,
/// `string`, `large_string`, `binary`, `large_binary` or `fixed_size_binary[16]`.
pub fn resolve(keys: &Bound<'_, PyAny>) -> PyResult<Input> {
    let py = keys.py();
    if let Some(pa) = pyarrow(py)? {
        if keys.is_instance(&pa.getattr("ChunkedArray")?)? {
            let chunks = keys.getattr("chunks")?;
            let mut out = Vec::new();
            for c in chunks.try_iter()? {
                out.push(arrow_batch(&c?)?);
            }
            return Ok(Input::Chunked(out));
        }
        if keys.is_instance(&pa.getattr("Array")?)? {
            return Ok(Input::One(arrow_batch(keys)?));
        }
    }
    if keys.hasattr("__array_interface__")? {
        return Ok(Input::One(numpy_batch(keys)?));
    }
    Err(unsupported(format!(
        "keys of type {} are not a batch: pass a NumPy array (uint64, int64, uint32, int32) or \
         a pyarrow array (integers, string, binary, fixed_size_binary(16)); \
         use update() for other iterables",
        keys.get_type().name()?
    )))
}

fn numpy_batch(keys: &Bound<'_, PyAny>) -> PyResult<Batch> {
    let ai = keys.getattr("__array_interface__")?;
    let ai = ai.downcast::<PyDict>()?;
    let get = |k: &str| -> PyResult<Bound<'_, PyAny>> {
        ai.get_item(k)?
            .ok_or_else(|| invalid_keys(format!("__array_interface__ has no '{k}'")))
    };
    let typestr: String = get("typestr")?.extract()?;
    let dtype = match keys.getattr("dtype") {
        Ok(d) => d.str()?.to_string(),
        Err(_) => typestr.clone(),
    };
    let shape: Vec<usize> = get("shape")?.extract()?;
    if shape.len() != 1 {
        return Err(invalid_keys(format!(
            "keys must be a 1-D array, got shape {shape:?}"
        )));
    }
    let len = shape[0];
    let (kind, itemsize) = match typestr.as_str() {
        "<u8" => (Some(Int::U64), 8),
        "<i8" => (Some(Int::I64), 8),
        "<u4" => (Some(Int::U32), 4),
        "<i4" => (Some(Int::I32), 4),
        "<u2" => (Some(Int::U16), 2),
        "<i2" => (Some(Int::I16), 2),
        "|u1" => (Some(Int::U8), 1),
        "|i1" => (Some(Int::I8), 1),
        "|S16" | "|V16" => (None, 16),
        _ => {
            return Err(unsupported(format!(
                "unsupported key dtype {dtype}: expected an integer dtype (int8 to int64, \
                 uint8 to uint64, little-endian), or 16-byte S16/V16 keys"
            )));
        }
    };
    let strides = get("strides")?;
    if !strides.is_none() {
        let strides: Vec<isize> = strides.extract()?;
        if len > 1 && strides[0] != itemsize as isize {
            return Err(invalid_keys(format!(
                "keys must be a C-contiguous array (stride {itemsize}), got strides {strides:?}; \
                 pass numpy.ascontiguousarray(keys)"
            )));
        }
    }
    let (ptr, _readonly): (usize, bool) = get("data")?.extract()?;
    let values = match kind {
        Some(kind) => Values::Int { kind, ptr },
        None => Values::Fixed16 { ptr },
    };
    Ok(Batch {
        plan: Plan {
            values,
            len,
            validity: None,
        },
        arrow: None,
        keep: vec![keys.clone().unbind()],
    })
}

/// A pyarrow buffer's address and size (`None` for a missing buffer).
fn buffer(b: &Bound<'_, PyAny>) -> PyResult<Option<(usize, usize)>> {
    if b.is_none() {
        return Ok(None);
    }
    if let Ok(cpu) = b.getattr("is_cpu")
        && !cpu.extract::<bool>()?
    {
        return Err(invalid_keys("the array's buffers are not in CPU memory"));
    }
    Ok(Some((
        b.getattr("address")?.extract()?,
        b.getattr("size")?.extract()?,
    )))
}

fn arrow_batch(arr: &Bound<'_, PyAny>) -> PyResult<Batch> {
    let ty = arr.getattr("type")?.str()?.to_string();
    let len: usize = arr.len()?;
    let offset: usize = arr.getattr("offset")?.extract()?;
    let null_count: usize = arr.getattr("null_count")?.extract()?;
    let bufs = arr.call_method0("buffers")?;
    let bufs = bufs.downcast::<PyList>()?;
    let int = match ty.as_str() {
        "uint64" => Some(Int::U64),
        "int64" => Some(Int::I64),
        "uint32" => Some(Int::U32),
        "int32" => Some(Int::I32),
        "uint16" => Some(Int::U16),
        "int16" => Some(Int::I16),
        "uint8" => Some(Int::U8),
        "int8" => Some(Int::I8),
        _ => None,
    };
    let need = |i: usize| -> PyResult<(usize, usize)> {
        buffer(&bufs.get_item(i)?)?
            .ok_or_else(|| invalid_keys(format!("the {ty} array has no buffer {i}")))
    };
    let values = if let Some(kind) = int {
        let (ptr, size) = need(1)?;
        let w = kind.width();
        if size < (offset + len) * w {
            return Err(invalid_keys(
                "the array's data buffer is shorter than its length",
            ));
        }
        Values::Int {
            kind,
            ptr: ptr + offset * w,
        }
    } else if ty == "fixed_size_binary[16]" {
        let (ptr, size) = need(1)?;
        if size < (offset + len) * 16 {
            return Err(invalid_keys(
                "the array's data buffer is shorter than its length",
            ));
        }
        Values::Fixed16 {
            ptr: ptr + offset * 16,
        }
    } else if matches!(
        ty.as_str(),
        "string" | "binary" | "large_string" | "large_binary"
    ) {
        let wide = ty.starts_with("large_");
        let ow = if wide { 8 } else { 4 };
        let (optr, osize) = if len == 0 {
            buffer(&bufs.get_item(1)?)?.unwrap_or((0, 0))
        } else {
            need(1)?
        };
        if len > 0 && osize < (offset + len + 1) * ow {
            return Err(invalid_keys(
                "the array's offsets buffer is shorter than its length",
            ));
        }
        if len > 0 && optr % ow != 0 {
            return Err(invalid_keys("the array's offsets buffer is not aligned"));
        }
        let (vptr, vsize) = buffer(&bufs.get_item(2)?)?.unwrap_or((0, 0));
        Values::Bytes {
            wide,
            offsets: optr + offset * ow,
            values: vptr,
            values_len: vsize,
        }
    } else {
        return Err(unsupported(format!(
            "unsupported key type {ty}: expected int64, uint64, int32, uint32, string, \
             large_string, binary, large_binary or fixed_size_binary[16]"
        )));
    };
    let validity_obj = bufs.get_item(0)?;
    let validity = if null_count > 0 {
        let (vptr, vsize) = buffer(&validity_obj)?
            .ok_or_else(|| invalid_keys("the array has nulls but no validity buffer"))?;
        if vsize * 8 < offset + len {
            return Err(invalid_keys(
                "the array's validity buffer is shorter than its length",
            ));
        }
        Some((vptr, offset))
    } else {
        None
    };
    Ok(Batch {
        plan: Plan {
            values,
            len,
            validity,
        },
        arrow: Some(ArrowInfo {
            offset,
            null_count,
            validity: (null_count > 0).then(|| validity_obj.clone().unbind()),
        }),
        keep: vec![arr.clone().unbind(), bufs.clone().into_any().unbind()],
    })
}

/// Walks a byte-string column in slices of keys.
pub type Walk<'a> = &'a dyn Fn(&mut dyn FnMut(&[&[u8]]));

/// Keys per slice in a [`Walk`].
pub const WALK_CHUNK: usize = CHUNK;

/// Inserts through one filter kind.
pub trait Sink {
    /// Integer keys in place, at their own width.
    fn ints(&mut self, keys: Ints<'_>) -> Result<(), Error>;
    /// Integer keys of `kind`, gathered as their 64-bit values (nulls skipped, or keys not
    /// aligned): the same keys to every kind but Parquet's, whose encoding has a width.
    fn gathered(&mut self, _kind: Int, values: &[u64]) -> Result<(), Error> {
        self.ints(Ints::U64(values))
    }
    /// `walk` calls its argument with the keys in order, in slices of at most `CHUNK`
    /// (for kinds without a column batch).
    fn column(&mut self, column: &ByteColumn<'_>, walk: Walk<'_>) -> Result<(), Error>;
    fn slices(&mut self, keys: &[&[u8]]) -> Result<(), Error>;
    fn fixed(&mut self, keys: &[[u8; 16]]) -> Result<(), Error>;
}

/// Queries through one filter kind; `out` has one answer per key.
pub trait Probe {
    /// Integer keys in place, at their own width.
    fn ints(&self, keys: Ints<'_>, out: &mut [bool]);
    /// As [`Sink::gathered`].
    fn gathered(&self, _kind: Int, values: &[u64], out: &mut [bool]) {
        self.ints(Ints::U64(values), out)
    }
    /// `walk` calls its argument with the keys in order, in slices of at most `CHUNK`
    /// (for kinds without a column batch).
    fn column(&self, column: &ByteColumn<'_>, walk: Walk<'_>, out: &mut [bool]);
    fn fixed(&self, keys: &[[u8; 16]], out: &mut [bool]);
}

/// Whether key `i` of the plan is valid (not null).
#[inline]
fn valid(validity: Option<(usize, usize)>, i: usize) -> bool {
    match validity {
        None => true,
        Some((ptr, off)) => {
            let bit = off + i;
            // SAFETY: `arrow_batch` checked that the validity buffer holds `offset + len` bits,
            // and the buffer's owner is alive in `Batch::keep`.
            let byte = unsafe { *(ptr as *const u8).add(bit / 8) };
            byte >> (bit % 8) & 1 == 1
        }
    }
}

/// Reads integer `i` of the plan as 64 bits: zero-extended (unsigned) or sign-extended (signed).
///
/// # Safety
/// `i < len` of a plan made by `resolve`, whose owners are alive.
#[inline]
unsafe fn int_at(kind: Int, ptr: usize, i: usize) -> u64 {
    let p = ptr as *const u8;
    // SAFETY: the caller guarantees key `i` lies inside the array; reads are unaligned-safe.
    unsafe {
        match kind {
            Int::U64 | Int::I64 => p.add(i * 8).cast::<u64>().read_unaligned(),
            Int::U32 => u64::from(p.add(i * 4).cast::<u32>().read_unaligned()),
            Int::I32 => p.add(i * 4).cast::<i32>().read_unaligned() as i64 as u64,
            Int::U16 => u64::from(p.add(i * 2).cast::<u16>().read_unaligned()),
            Int::I16 => p.add(i * 2).cast::<i16>().read_unaligned() as i64 as u64,
            Int::U8 => u64::from(*p.add(i)),
            Int::I8 => *p.add(i) as i8 as i64 as u64,
        }
    }
}

/// The byte-string keys of a plan: the validated column and a way to walk it in slices.
struct Strings<'a> {
    column: ByteColumn<'a>,
    offsets: Offsets<'a>,
    values: &'a [u8],
}

#[derive(Clone, Copy)]
enum Offsets<'a> {
    Narrow(&'a [i32]),
    Wide(&'a [i64]),
}

impl Offsets<'_> {
    #[inline]
    fn at(&self, i: usize) -> usize {
        match self {
            Offsets::Narrow(o) => o[i] as usize,
            Offsets::Wide(o) => o[i] as usize,
        }
    }
}

impl<'a> Strings<'a> {
    /// The byte-string keys at these addresses, validated once (offsets monotone, within
    /// the values).
    ///
    /// # Safety
    /// The addresses come from `arrow_batch` (offsets aligned and `len + 1` long; values
    /// `values_len` long), and their owners outlive `'a`.
    unsafe fn new(
        wide: bool,
        offsets: usize,
        values: usize,
        values_len: usize,
        len: usize,
    ) -> Result<Strings<'a>, Error> {
        let values: &'a [u8] = if values_len == 0 {
            &[]
        } else {
            // SAFETY: pyarrow's buffer of `values_len` bytes at `values`, alive (caller).
            unsafe { std::slice::from_raw_parts(values as *const u8, values_len) }
        };
        let n = if len == 0 { 0 } else { len + 1 };
        let offsets = if n == 0 {
            if wide {
                Offsets::Wide(&[])
            } else {
                Offsets::Narrow(&[])
            }
        } else if wide {
            // SAFETY: `n` aligned i64 offsets inside the buffer (checked by `arrow_batch`).
            Offsets::Wide(unsafe { std::slice::from_raw_parts(offsets as *const i64, n) })
        } else {
            // SAFETY: `n` aligned i32 offsets inside the buffer (checked by `arrow_batch`).
            Offsets::Narrow(unsafe { std::slice::from_raw_parts(offsets as *const i32, n) })
        };
        let column = match offsets {
            Offsets::Narrow(o) => ByteColumn::new(o, values)?,
            Offsets::Wide(o) => ByteColumn::new(o, values)?,
        };
        Ok(Strings {
            column,
            offsets,
            values,
        })
    }

    /// Key `i` (offsets validated by `ByteColumn::new`).
    #[inline]
    fn key(&self, i: usize) -> &'a [u8] {
        &self.values[self.offsets.at(i)..self.offsets.at(i + 1)]
    }

    /// Calls `f` with the valid keys in slices of at most `CHUNK`.
    fn for_each_chunk(
        &self,
        len: usize,
        validity: Option<(usize, usize)>,
        f: &mut dyn FnMut(&[&[u8]]),
    ) {
        let mut buf: Vec<&[u8]> = Vec::with_capacity(CHUNK.min(len));
        let mut start = 0;
        while start < len {
            let end = (start + CHUNK).min(len);
            buf.clear();
            buf.extend(
                (start..end)
                    .filter(|&i| valid(validity, i))
                    .map(|i| self.key(i)),
            );
            if !buf.is_empty() {
                f(&buf);
            }
            start = end;
        }
    }
}

/// Inserts every valid key of the plan. Validation (offsets) happens before any insert, so an
/// error leaves the filter as it was.
///
/// # Safety
/// The plan was made by `resolve` and the objects in its `Batch::keep` are alive.
pub unsafe fn insert<S: Sink>(sink: &mut S, plan: &Plan) -> Result<(), Error> {
    let len = plan.len;
    if len == 0 {
        return Ok(());
    }
    match plan.values {
        Values::Int { kind, ptr } => {
            if plan.validity.is_none() && ptr % kind.width() == 0 {
                // SAFETY: `len` aligned keys of `kind` at `ptr`, alive (caller).
                return sink.ints(unsafe { Ints::at(kind, ptr, len) });
            }
            // Nulls to skip, or keys not aligned: gathered as their 64-bit values.
            let mut buf: Vec<u64> = Vec::with_capacity(CHUNK);
            let mut start = 0;
            while start < len {
                let end = (start + CHUNK).min(len);
                buf.clear();
                // SAFETY: i < len (caller's plan); `int_at` reads unaligned.
                buf.extend(
                    (start..end)
                        .filter(|&i| valid(plan.validity, i))
                        .map(|i| unsafe { int_at(kind, ptr, i) }),
                );
                sink.gathered(kind, &buf)?;
                start = end;
            }
            Ok(())
        }
        Values::Fixed16 { ptr } => {
            // SAFETY: `len` 16-byte keys at `ptr` (alignment 1), alive (caller).
            let keys = unsafe { std::slice::from_raw_parts(ptr as *const [u8; 16], len) };
            if plan.validity.is_none() {
                return sink.fixed(keys);
            }
            let mut buf: Vec<[u8; 16]> = Vec::with_capacity(CHUNK);
            for (c, chunk) in keys.chunks(CHUNK).enumerate() {
                buf.clear();
                buf.extend(
                    chunk
                        .iter()
                        .enumerate()
                        .filter(|(j, _)| valid(plan.validity, c * CHUNK + j))
                        .map(|(_, k)| *k),
                );
                sink.fixed(&buf)?;
            }
            Ok(())
        }
        Values::Bytes {
            wide,
            offsets,
            values,
            values_len,
        } => {
            // SAFETY: addresses from `arrow_batch`, owners alive (caller).
            let s = unsafe { Strings::new(wide, offsets, values, values_len, len)? };
            if plan.validity.is_none() {
                let walk = |f: &mut dyn FnMut(&[&[u8]])| s.for_each_chunk(len, None, f);
                return sink.column(&s.column, &walk);
            }
            let mut result = Ok(());
            s.for_each_chunk(len, plan.validity, &mut |keys| {
                if result.is_ok() {
                    result = sink.slices(keys);
                }
            });
            result
        }
    }
}

/// Answers every key of the plan into `out` (`len` answers; a null key's answer is
/// unspecified, the caller's validity marks it).
///
/// # Safety
/// The plan was made by `resolve` and the objects in its `Batch::keep` are alive.
pub unsafe fn contains<P: Probe>(probe: &P, plan: &Plan, out: &mut [bool]) -> Result<(), Error> {
    let len = plan.len;
    debug_assert_eq!(out.len(), len);
    if len == 0 {
        return Ok(());
    }
    match plan.values {
        Values::Int { kind, ptr } => {
            if ptr % kind.width() == 0 {
                // SAFETY: `len` aligned keys of `kind` at `ptr`, alive (caller).
                probe.ints(unsafe { Ints::at(kind, ptr, len) }, out);
                return Ok(());
            }
            // Not aligned (a NumPy view at an odd offset): read as 64-bit values.
            let mut buf = [0u64; CHUNK];
            for (c, o) in out.chunks_mut(CHUNK).enumerate() {
                for (j, slot) in buf[..o.len()].iter_mut().enumerate() {
                    // SAFETY: c * CHUNK + j < len; `int_at` reads unaligned.
                    *slot = unsafe { int_at(kind, ptr, c * CHUNK + j) };
                }
                probe.gathered(kind, &buf[..o.len()], o);
            }
            Ok(())
        }
        Values::Fixed16 { ptr } => {
            // SAFETY: `len` 16-byte keys at `ptr` (alignment 1), alive (caller).
            let keys = unsafe { std::slice::from_raw_parts(ptr as *const [u8; 16], len) };
            probe.fixed(keys, out);
            Ok(())
        }
        Values::Bytes {
            wide,
            offsets,
            values,
            values_len,
        } => {
            // SAFETY: addresses from `arrow_batch`, owners alive (caller).
            let s = unsafe { Strings::new(wide, offsets, values, values_len, len)? };
            let walk = |f: &mut dyn FnMut(&[&[u8]])| s.for_each_chunk(len, None, f);
            probe.column(&s.column, &walk, out);
            Ok(())
        }
    }
}

/// Packs answers into an Arrow bitmap whose bit `offset + i` is answer `i`.
pub fn pack_bits(answers: &[bool], offset: usize) -> Vec<u8> {
    let mut bits = vec![0u8; (offset + answers.len()).div_ceil(8)];
    for (i, &a) in answers.iter().enumerate() {
        let b = offset + i;
        bits[b / 8] |= u8::from(a) << (b % 8);
    }
    bits
}
