//! Arrow arrays on [`BloomFilter`] and [`AtomicBloomFilter`] (cargo feature `arrow`).

use arrow_array::{Array, BooleanArray};

use super::{AtomicBloomFilter, BloomFilter, Filter, Storage};
use crate::arrow::ArrowKeys;
use crate::error::Error;
use crate::kernel::Sink;

impl<S: Storage> Filter<S> {
    /// Answers every key of an Arrow array: a [`BooleanArray`] of the same length whose value
    /// `i` says whether key `i` may have been inserted, and whose null buffer is the input's
    /// (a null key answers null; the value bit under it is 0). Takes the types
    /// [`BloomFilter::insert_array`] takes, each key hashed exactly as there, so the answers
    /// equal [`contains`](Self::contains) / [`contains_bytes`](Self::contains_bytes) of
    /// each key. The array is read in place: the answers run on the batch kernels over its
    /// buffers, a sliced array's included. On every [`Filter`]: [`BloomFilter`],
    /// [`AtomicBloomFilter`], [`FilterRef`](crate::FilterRef) and
    /// [`CountingBloomFilter`](crate::CountingBloomFilter).
    ///
    /// ```
    /// use arrow_array::{Array, Int64Array, StringArray};
    /// use blockbloom::BloomFilter;
    ///
    /// let mut f = BloomFilter::with_capacity(1000, 0.001)?;
    /// f.insert_batch(&[1i64, 2, 3]);
    /// let answers = f.contains_array(&Int64Array::from(vec![Some(2), None, Some(3)]))?;
    /// assert!(answers.value(0) && answers.value(2));
    /// assert!(answers.is_null(1));
    ///
    /// f.insert_bytes(b"alice");
    /// let names = StringArray::from(vec!["alice", "carol"]);
    /// assert!(f.contains_array(&names)?.value(0));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`BloomFilter::insert_array`].
    pub fn contains_array(&self, array: &dyn Array) -> Result<BooleanArray, Error> {
        let keys = ArrowKeys::new(array, false)?;
        let mut words = keys.answer_words();
        keys.for_each_chunk(|start, c| {
            let w = &mut words[start / 64..(start + c.len()).div_ceil(64)];
            self.store.query(&self.meta, c.keys(), Sink::Bitmap(w));
        });
        Ok(keys.answer(words))
    }
}

impl BloomFilter {
    /// Inserts every non-null key of an Arrow array, hashed exactly as the batch and
    /// single-key forms hash it:
    ///
    /// | Arrow type | key | single-key twin |
    /// | :--- | :--- | :--- |
    /// | `Int32`, `UInt32`, `Int64`, `UInt64` | the integer, in SIMD lanes | [`insert(&i64)`](Self::insert) etc. |
    /// | `Utf8`, `LargeUtf8`, `Binary`, `LargeBinary` | the bytes (a [`ByteColumn`](crate::ByteColumn) over the array's offsets and values) | [`insert_bytes`](Self::insert_bytes) |
    /// | `Utf8View`, `BinaryView` | the bytes (each view resolved to a slice of its buffer or of the view) | [`insert_bytes`](Self::insert_bytes) |
    /// | `FixedSizeBinary(16)` | the 16 bytes, as a `[u8; 16]` key | [`insert_bytes`](Self::insert_bytes) |
    ///
    /// The array is read in place, a sliced one included; an array without nulls is one
    /// batch over its buffers (view arrays: batches of slices into their buffers). A null key is not inserted: the valid runs of an array with
    /// nulls are inserted in place, and the keys of short runs gathered into batches.
    ///
    /// ```
    /// use arrow_array::{BinaryArray, FixedSizeBinaryArray, Int32Array, LargeStringArray};
    /// use blockbloom::BloomFilter;
    ///
    /// let mut f = BloomFilter::with_capacity(1000, 0.001)?;
    /// f.insert_array(&Int32Array::from(vec![Some(7), None, Some(-1)]))?;
    /// assert!(f.contains(&7i32) && f.contains(&-1i32));
    ///
    /// f.insert_array(&LargeStringArray::from(vec!["apple", "pear"]))?;
    /// f.insert_array(&BinaryArray::from(vec![&b"\x00\x01"[..]]))?;
    /// assert!(f.contains_bytes(b"pear") && f.contains_bytes(b"\x00\x01"));
    ///
    /// let ip = 0x2001_0db8_0000_0000_0000_0000_0000_0001u128.to_le_bytes();
    /// f.insert_array(&FixedSizeBinaryArray::try_from_iter([ip].into_iter()).unwrap())?;
    /// assert!(f.contains_bytes(&ip));
    ///
    /// let floats = arrow_array::Float64Array::from(vec![1.5]);
    /// assert!(matches!(f.insert_array(&floats), Err(blockbloom::Error::UnsupportedType(t)) if t == "Float64"));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::UnsupportedType`] naming the array's data type if it is not one of the above
    /// (nothing is inserted); [`Error::InvalidOffsets`] if a byte array's offsets are invalid
    /// (possible only for an array built with Arrow's checks skipped).
    pub fn insert_array(&mut self, array: &dyn Array) -> Result<(), Error> {
        let keys = ArrowKeys::new(array, false)?;
        let (meta, store) = (&self.meta, &mut self.store);
        keys.for_each_valid(|c| meta.kernel.insert(&meta.shape, store, c.keys()));
        Ok(())
    }
}

impl AtomicBloomFilter {
    /// [`BloomFilter::insert_array`] through `&self`, for many writers: every non-null key of
    /// the array, hashed as there, inserted under the stripe locks like
    /// [`insert_batch`](Self::insert_batch).
    ///
    /// ```
    /// use arrow_array::{Array, StringArray};
    /// use blockbloom::AtomicBloomFilter;
    ///
    /// let f = AtomicBloomFilter::with_capacity(1000, 0.001)?;
    /// let names = StringArray::from(vec![Some("alice"), None, Some("bob")]);
    /// f.insert_array(&names)?;
    /// let answers = f.contains_array(&names)?;
    /// assert!(answers.value(0) && answers.is_null(1) && answers.value(2));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`BloomFilter::insert_array`].
    pub fn insert_array(&self, array: &dyn Array) -> Result<(), Error> {
        let keys = ArrowKeys::new(array, false)?;
        keys.for_each_valid(|c| self.insert_keys(c.keys()));
        Ok(())
    }
}
