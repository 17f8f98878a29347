//! Arrow arrays on [`SplitBlockFilter`] (cargo feature `arrow`): each value hashed as XXH64
//! of its Parquet plain encoding, so an Arrow column can be tested against the filter a
//! Parquet writer stored for it.

use arrow_array::{Array, BooleanArray};

use super::kernel::{Kernel, Sink, SplitKernel};
use super::{CHUNK, SplitBlockFilter, hash_bytes, hash_u32};
use crate::arrow::{ArrowKeys, Column};

use crate::error::Error;

impl SplitBlockFilter {
    /// Inserts every non-null value of an Arrow array, hashed as a Parquet writer hashes the
    /// column's values: XXH64 (seed 0) of the value's plain encoding, as
    /// [`insert`](Self::insert) hashes the matching Rust value ([`ParquetValue`](super::ParquetValue)).
    ///
    /// | Arrow type | Parquet physical type | bytes hashed | single-value twin |
    /// | :--- | :--- | :--- | :--- |
    /// | `Int8`, `Int16`, `Int32`, `UInt8`, `UInt16`, `UInt32` | `INT32` | 4, little-endian, of the value extended to 32 bits | `insert(&i32)`, `insert(&u32)` |
    /// | `Int64`, `UInt64` | `INT64` | 8, little-endian | `insert(&i64)`, `insert(&u64)` |
    /// | `Utf8`, `LargeUtf8`, `Binary`, `LargeBinary` | `BYTE_ARRAY` | the bytes, no length prefix | `insert(str)`, `insert(&[u8])` |
    /// | `Utf8View`, `BinaryView` | `BYTE_ARRAY` | the bytes, no length prefix | `insert(str)`, `insert(&[u8])` |
    /// | `FixedSizeBinary(n)`, any `n > 0` | `FIXED_LEN_BYTE_ARRAY` | the `n` bytes | `insert(&[u8; n])` |
    ///
    /// (`UInt32`/`UInt64` are written as `INT32`/`INT64` with the same bits, so their
    /// encodings agree.) The array is read in place, a sliced one included; 8-byte values are
    /// hashed in SIMD lanes on the tiers that have an XXH64 lane form. A null value is not
    /// inserted (Parquet writers do not hash nulls either).
    ///
    /// ```
    /// use arrow_array::{Int64Array, StringArray};
    /// use blockbloom::parquet::SplitBlockFilter;
    ///
    /// let mut f = SplitBlockFilter::new_with_ndv_fpp(1000, 0.01)?;
    /// f.insert_array(&Int64Array::from(vec![Some(42), None]))?;
    /// f.insert_array(&StringArray::from(vec!["Paris"]))?;
    /// assert!(f.contains(&42i64) && f.contains("Paris"));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::UnsupportedType`] naming the array's data type if it is not one of the above
    /// (nothing is inserted); [`Error::InvalidOffsets`] if a byte array's offsets are invalid
    /// (possible only for an array built with Arrow's checks skipped).
    pub fn insert_array(&mut self, array: &dyn Array) -> Result<(), Error> {
        let keys = ArrowKeys::new(array, true)?;
        let mut hashes = [0u64; CHUNK];
        keys.for_each_valid(|c| {
            for start in (0..c.len()).step_by(CHUNK) {
                let end = (start + CHUNK).min(c.len());
                let h = &mut hashes[..end - start];
                hash_column(self.kernel, c.slice(start, end), h);
                self.kernel.split_insert(&mut self.blocks, h);
            }
        });
        Ok(())
    }

    /// Answers every value of an Arrow array: a [`BooleanArray`] of the same length whose
    /// value `i` says whether value `i` may be in the filter, and whose null buffer is the
    /// input's (a null answers null; the value bit under it is 0). Takes the types
    /// [`insert_array`](Self::insert_array) takes, hashed as there, so the answers equal
    /// [`contains`](Self::contains) of each value.
    ///
    /// ```
    /// use arrow_array::{Array, BinaryArray};
    /// use blockbloom::parquet::SplitBlockFilter;
    ///
    /// let mut f = SplitBlockFilter::new_with_ndv_fpp(1000, 0.01)?;
    /// f.insert(&b"\x01\x02"[..]);
    /// let probe = BinaryArray::from(vec![Some(&b"\x01\x02"[..]), None]);
    /// let answers = f.contains_array(&probe)?;
    /// assert!(answers.value(0) && answers.is_null(1));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`insert_array`](Self::insert_array).
    pub fn contains_array(&self, array: &dyn Array) -> Result<BooleanArray, Error> {
        let keys = ArrowKeys::new(array, true)?;
        let mut words = keys.answer_words();
        let mut hashes = [0u64; CHUNK];
        let n = keys.column.len();
        // CHUNK is a multiple of 64, so each chunk's answers are whole words of the bitmap.
        const _: () = assert!(CHUNK.is_multiple_of(64));
        for start in (0..n).step_by(CHUNK) {
            let end = (start + CHUNK).min(n);
            let h = &mut hashes[..end - start];
            hash_column(self.kernel, keys.column.slice(start, end), h);
            let w = &mut words[start / 64..(end - start).div_ceil(64) + start / 64];
            self.kernel.split_query(&self.blocks, h, Sink::Bitmap(w));
        }
        Ok(keys.answer(words))
    }
}

/// XXH64 (seed 0) of each key's plain encoding into `out` (same length): 8-byte values on
/// `kernel`'s lanes, 4-byte values and byte strings one at a time (as
/// [`BatchValue`](super::BatchValue) and [`ParquetValue`](super::ParquetValue) hash them).
fn hash_column(kernel: &Kernel, column: Column<'_>, out: &mut [u64]) {
    debug_assert_eq!(column.len(), out.len());
    match column {
        Column::U64(v) => kernel.xxh64_u64(v, out),
        // Parquet stores every integer of up to 32 bits as INT32: the value sign-extended
        // (signed types) or zero-extended (unsigned) to 32 bits, 4 bytes hashed.
        Column::Narrow(v) => {
            for (i, o) in out.iter_mut().enumerate() {
                *o = hash_u32(v.value(i) as u32);
            }
        }
        Column::Int32Values(v) => {
            for (o, &x) in out.iter_mut().zip(v) {
                *o = hash_u32(x as u32);
            }
        }
        c => {
            for (i, o) in out.iter_mut().enumerate() {
                *o = hash_bytes(c.bytes(i));
            }
        }
    }
}
