//! Arrow arrays as key sources (cargo feature `arrow`): what `insert_array` and
//! `contains_array` take, borrowed in place. The filters' methods live beside the filters
//! (`filter/arrow.rs`, `parquet/arrow.rs`); this module reads an array into a [`Column`] over
//! its buffers, walks its valid keys for inserts, and turns a bitmap of answers into a
//! [`BooleanArray`] with the input's null buffer.

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type, UInt32Type, UInt64Type,
};
use arrow_array::{Array, BooleanArray};
use arrow_buffer::{BooleanBuffer, Buffer, NullBuffer};
use arrow_schema::DataType;

use crate::error::Error;
use crate::kernel::Keys;
use crate::kernel::shapes::{ByteKeys, Narrow, check_offsets};

/// The keys of an array (or of part of one), borrowed from its buffers or from a gather
/// buffer.
#[derive(Clone, Copy)]
pub(crate) enum Column<'a> {
    /// `Int8`..`Int32`, `UInt8`..`UInt32`, in place: each key is its 64-bit value.
    Narrow(Narrow<'a>),
    /// `Int64` (bits reinterpreted: an `i64`'s 64-bit value is its bits) and `UInt64`.
    U64(&'a [u64]),
    /// Keys of a `Narrow` column gathered as their 64-bit values (the same keys to the Bloom
    /// filters; Parquet's filter hashes them as INT32, the value's low 32 bits).
    Int32Values(&'a [u64]),
    /// `Utf8`, `Binary`: key `i` is `values[offsets[i]..offsets[i + 1]]` (validated).
    Bytes32 {
        offsets: &'a [i32],
        values: &'a [u8],
    },
    /// `LargeUtf8`, `LargeBinary`.
    Bytes64 {
        offsets: &'a [i64],
        values: &'a [u8],
    },
    /// Byte-string keys gathered from a byte column with nulls.
    Slices(&'a [&'a [u8]]),
    /// `FixedSizeBinary(width)`, `width > 0`: key `i` is `values[i * width..(i + 1) * width]`.
    Fixed { width: usize, values: &'a [u8] },
    /// `Utf8View`, `BinaryView`: 16 bytes of `views` per key (its length, then the bytes
    /// inline up to 12, else a prefix, a buffer index and an offset), validated against
    /// `buffers`. The kernels take no such source: a batch resolves the views into slices
    /// ([`ArrowKeys::for_each_chunk`]); no key byte is copied.
    Views {
        views: &'a [u8],
        buffers: &'a [Buffer],
    },
}

/// Bytes per Arrow view.
const VIEW: usize = 16;
/// Keys up to this long sit in their view.
const INLINE: usize = 12;

impl<'a> Column<'a> {
    pub(crate) fn len(&self) -> usize {
        match self {
            Column::Narrow(k) => k.len(),
            Column::U64(k) | Column::Int32Values(k) => k.len(),
            Column::Bytes32 { offsets, .. } => offsets.len().saturating_sub(1),
            Column::Bytes64 { offsets, .. } => offsets.len().saturating_sub(1),
            Column::Slices(k) => k.len(),
            Column::Fixed { width, values } => values.len() / width,
            Column::Views { views, .. } => views.len() / VIEW,
        }
    }

    /// Keys `start..end`.
    pub(crate) fn slice(self, start: usize, end: usize) -> Column<'a> {
        match self {
            Column::Narrow(k) => Column::Narrow(k.slice(start, end)),
            Column::Int32Values(k) => Column::Int32Values(&k[start..end]),
            Column::U64(k) => Column::U64(&k[start..end]),
            Column::Bytes32 { offsets, values } => Column::Bytes32 {
                offsets: &offsets[start..=end],
                values,
            },
            Column::Bytes64 { offsets, values } => Column::Bytes64 {
                offsets: &offsets[start..=end],
                values,
            },
            Column::Slices(k) => Column::Slices(&k[start..end]),
            Column::Fixed { width, values } => Column::Fixed {
                width,
                values: &values[start * width..end * width],
            },
            Column::Views { views, buffers } => Column::Views {
                views: &views[start * VIEW..end * VIEW],
                buffers,
            },
        }
    }

    /// The bytes of key `i` of a byte-string or fixed-width column.
    ///
    /// # Panics
    /// On an integer column.
    #[inline]
    pub(crate) fn bytes(&self, i: usize) -> &'a [u8] {
        match *self {
            Column::Bytes32 { offsets, values } => {
                &values[offsets[i] as usize..offsets[i + 1] as usize]
            }
            Column::Bytes64 { offsets, values } => {
                &values[offsets[i] as usize..offsets[i + 1] as usize]
            }
            Column::Slices(k) => k[i],
            Column::Fixed { width, values } => &values[i * width..(i + 1) * width],
            Column::Views { views, buffers } => {
                let view = &views[i * VIEW..(i + 1) * VIEW];
                let len = u32_at(view, 0) as usize;
                if len <= INLINE {
                    &view[4..4 + len]
                } else {
                    // In bounds: `views` checked every view against `buffers`.
                    let offset = u32_at(view, 12) as usize;
                    &buffers[u32_at(view, 8) as usize][offset..offset + len]
                }
            }
            Column::Narrow(_) | Column::U64(_) | Column::Int32Values(_) => {
                unreachable!("integer keys have no byte form here")
            }
        }
    }

    /// The keys as the Bloom filter kernels take them.
    ///
    /// Whether [`keys`](Self::keys) takes it: every column but views.
    fn in_place(&self) -> bool {
        !matches!(self, Column::Views { .. })
    }

    /// # Panics
    /// On a fixed-width column of another width than 16 (refused by [`ArrowKeys::new`]
    /// with `any_width: false`), and on views (walk them with [`ArrowKeys::for_each_chunk`]
    /// or [`ArrowKeys::for_each_valid`]).
    pub(crate) fn keys(self) -> Keys<'a> {
        match self {
            Column::Narrow(k) => Keys::Narrow(k),
            Column::Int32Values(k) => Keys::U64(k),
            Column::U64(k) => Keys::U64(k),
            // Checked by `ArrowKeys::new` (`check_offsets`), as `ByteColumn::new` checks.
            Column::Bytes32 { offsets, values } => {
                Keys::Bytes(ByteKeys::Offsets32 { offsets, values })
            }
            Column::Bytes64 { offsets, values } => {
                Keys::Bytes(ByteKeys::Offsets64 { offsets, values })
            }
            Column::Slices(k) => Keys::Bytes(ByteKeys::Slices(k)),
            Column::Fixed { width, values } => {
                assert_eq!(
                    width, 16,
                    "the Bloom filter takes 16-byte fixed-width keys only"
                );
                Keys::Fixed16(values.as_chunks::<16>().0)
            }
            Column::Views { .. } => unreachable!("views are resolved into slices first"),
        }
    }
}

/// An Arrow array read for a filter: its keys in place and its null buffer.
pub(crate) struct ArrowKeys<'a> {
    pub(crate) column: Column<'a>,
    /// The input's null buffer, as given (it may count no nulls).
    nulls: Option<&'a NullBuffer>,
    len: usize,
}

/// Valid runs at least this long are inserted in place; shorter ones are gathered.
const RUN: usize = 64;
/// Keys gathered per batch.
const GATHER: usize = 1024;

impl<'a> ArrowKeys<'a> {
    /// Reads `array`. `any_width`: accept `FixedSizeBinary` of any width above 0 (the Parquet
    /// filter hashes the bytes), not only 16.
    ///
    /// # Errors
    /// [`Error::UnsupportedType`] naming the array's data type if it is not one of the
    /// supported ones; [`Error::InvalidOffsets`] if a byte array's offsets are not valid
    /// (an Arrow array built with its checks skipped).
    pub(crate) fn new(array: &'a dyn Array, any_width: bool) -> Result<ArrowKeys<'a>, Error> {
        let unsupported = || Error::UnsupportedType(array.data_type().to_string());
        let len = array.len();
        let column = match array.data_type() {
            DataType::Int8 => Column::Narrow(Narrow::I8(
                array
                    .as_primitive_opt::<Int8Type>()
                    .ok_or_else(unsupported)?
                    .values(),
            )),
            DataType::UInt8 => Column::Narrow(Narrow::U8(
                array
                    .as_primitive_opt::<UInt8Type>()
                    .ok_or_else(unsupported)?
                    .values(),
            )),
            DataType::Int16 => Column::Narrow(Narrow::I16(
                array
                    .as_primitive_opt::<Int16Type>()
                    .ok_or_else(unsupported)?
                    .values(),
            )),
            DataType::UInt16 => Column::Narrow(Narrow::U16(
                array
                    .as_primitive_opt::<UInt16Type>()
                    .ok_or_else(unsupported)?
                    .values(),
            )),
            DataType::Int32 => Column::Narrow(Narrow::I32(
                array
                    .as_primitive_opt::<Int32Type>()
                    .ok_or_else(unsupported)?
                    .values(),
            )),
            DataType::UInt32 => Column::Narrow(Narrow::U32(
                array
                    .as_primitive_opt::<UInt32Type>()
                    .ok_or_else(unsupported)?
                    .values(),
            )),
            DataType::Int64 => {
                let v: &[i64] = array
                    .as_primitive_opt::<Int64Type>()
                    .ok_or_else(unsupported)?
                    .values();
                // SAFETY: as for `Int32`, with i64 and u64.
                Column::U64(unsafe {
                    std::slice::from_raw_parts(v.as_ptr().cast::<u64>(), v.len())
                })
            }
            DataType::UInt64 => Column::U64(
                array
                    .as_primitive_opt::<UInt64Type>()
                    .ok_or_else(unsupported)?
                    .values(),
            ),
            DataType::Utf8 => {
                let a = array.as_string_opt::<i32>().ok_or_else(unsupported)?;
                bytes32(a.value_offsets(), a.value_data())?
            }
            DataType::Binary => {
                let a = array.as_binary_opt::<i32>().ok_or_else(unsupported)?;
                bytes32(a.value_offsets(), a.value_data())?
            }
            DataType::LargeUtf8 => {
                let a = array.as_string_opt::<i64>().ok_or_else(unsupported)?;
                bytes64(a.value_offsets(), a.value_data())?
            }
            DataType::LargeBinary => {
                let a = array.as_binary_opt::<i64>().ok_or_else(unsupported)?;
                bytes64(a.value_offsets(), a.value_data())?
            }
            DataType::Utf8View => {
                let a = array.as_string_view_opt().ok_or_else(unsupported)?;
                views(a.views().inner().as_slice(), a.data_buffers())?
            }
            DataType::BinaryView => {
                let a = array.as_binary_view_opt().ok_or_else(unsupported)?;
                views(a.views().inner().as_slice(), a.data_buffers())?
            }
            &DataType::FixedSizeBinary(w) if w == 16 || (any_width && w > 0) => {
                let a = array.as_fixed_size_binary_opt().ok_or_else(unsupported)?;
                let width = w as usize;
                // A sliced array's `value_data` starts at its first value.
                let values = a.value_data().get(..len * width).ok_or_else(unsupported)?;
                Column::Fixed { width, values }
            }
            _ => return Err(unsupported()),
        };
        debug_assert_eq!(column.len(), len);
        Ok(ArrowKeys {
            column,
            nulls: array.nulls(),
            len,
        })
    }

    /// Calls `f` with the valid keys, in batches: all of them at once, in place, when the
    /// array has no nulls; otherwise the long valid runs in place and the rest gathered into
    /// batches of up to [`GATHER`] keys (integers and 16-byte keys copied, byte strings as
    /// slices). Every valid key is in exactly one batch; a null key is in none.
    pub(crate) fn for_each_valid(&self, mut f: impl FnMut(Column<'_>)) {
        let nulls = match self.nulls {
            Some(n) if n.null_count() > 0 => n,
            _ if !self.column.in_place() => {
                let mut gather = Gather::new(self.column);
                for i in 0..self.len {
                    gather.push(self.column, i);
                    if gather.len() == GATHER {
                        gather.flush(&mut f);
                    }
                }
                gather.flush(&mut f);
                return;
            }
            _ => {
                if self.len > 0 {
                    f(self.column);
                }
                return;
            }
        };
        let mut gather = Gather::new(self.column);
        for (start, end) in nulls.valid_slices() {
            if end - start >= RUN && self.column.in_place() {
                f(self.column.slice(start, end));
                continue;
            }
            for i in start..end {
                gather.push(self.column, i);
                if gather.len() == GATHER {
                    gather.flush(&mut f);
                }
            }
        }
        gather.flush(&mut f);
    }

    /// Calls `f(start, keys)` with every key, null or not, in order, as columns the kernels
    /// take: the whole column at once (`start` 0), or for views, runs of [`GATHER`] keys
    /// resolved into slices (`start` a multiple of 64, so a run's answers are whole words of
    /// a bitmap).
    pub(crate) fn for_each_chunk(&self, mut f: impl FnMut(usize, Column<'_>)) {
        const _: () = assert!(GATHER.is_multiple_of(64));
        if self.column.in_place() {
            if self.len > 0 {
                f(0, self.column);
            }
            return;
        }
        let mut slices: Vec<&[u8]> = Vec::with_capacity(GATHER.min(self.len));
        for start in (0..self.len).step_by(GATHER) {
            let end = (start + GATHER).min(self.len);
            slices.clear();
            slices.extend((start..end).map(|i| self.column.bytes(i)));
            f(start, Column::Slices(&slices));
        }
    }

    /// Bitmap words for one answer bit per key (all zero).
    pub(crate) fn answer_words(&self) -> Vec<u64> {
        vec![0; self.len.div_ceil(64)]
    }

    /// The answers in `words` (bit `i % 64` of word `i / 64` for key `i`) as a
    /// [`BooleanArray`] with the input's null buffer; the value bit under a null is 0.
    pub(crate) fn answer(&self, mut words: Vec<u64>) -> BooleanArray {
        // Arrow's bitmaps are bytes, least significant bit first: little-endian words.
        for w in &mut words {
            *w = w.to_le();
        }
        let mut values = BooleanBuffer::new(Buffer::from_vec(words), 0, self.len);
        if let Some(nulls) = self.nulls.filter(|n| n.null_count() > 0) {
            values = &values & nulls.inner();
        }
        BooleanArray::new(values, self.nulls.cloned())
    }
}

fn bytes32<'a>(offsets: &'a [i32], values: &'a [u8]) -> Result<Column<'a>, Error> {
    check_offsets(offsets, values.len())?;
    Ok(Column::Bytes32 { offsets, values })
}

fn bytes64<'a>(offsets: &'a [i64], values: &'a [u8]) -> Result<Column<'a>, Error> {
    check_offsets(offsets, values.len())?;
    Ok(Column::Bytes64 { offsets, values })
}

/// The little-endian `u32` at `at` in a view.
#[inline(always)]
fn u32_at(view: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([view[at], view[at + 1], view[at + 2], view[at + 3]])
}

/// A view array's keys, every view checked against `buffers` in one pass (Arrow checks them
/// when it builds an array, unless its checks were skipped): the first whose length is
/// over 12 and whose buffer index or range is out of bounds is
/// [`Error::InvalidOffsets`].
fn views<'a>(views: &'a [u8], buffers: &'a [Buffer]) -> Result<Column<'a>, Error> {
    for (index, view) in views.chunks_exact(VIEW).enumerate() {
        let len = u32_at(view, 0) as usize;
        if len <= INLINE {
            continue;
        }
        let (buffer, offset) = (u32_at(view, 8) as usize, u32_at(view, 12) as usize);
        let reason = match buffers.get(buffer) {
            None => "a view's buffer index is past the array's buffers",
            Some(b) if offset.checked_add(len).is_none_or(|end| end > b.len()) => {
                "a view's bytes run past the end of its buffer"
            }
            Some(_) => continue,
        };
        return Err(Error::InvalidOffsets { index, reason });
    }
    Ok(Column::Views { views, buffers })
}

/// Valid keys of short runs, collected into a batch.
enum Gather<'a> {
    /// Integers as their 64-bit values; `int32`: of a `Narrow` column.
    U64 {
        values: Vec<u64>,
        int32: bool,
    },
    Bytes(Vec<&'a [u8]>),
    Fixed(usize, Vec<u8>),
}

impl<'a> Gather<'a> {
    fn new(column: Column<'a>) -> Gather<'a> {
        match column {
            Column::Narrow(_) | Column::Int32Values(_) => Gather::U64 {
                values: Vec::with_capacity(GATHER),
                int32: true,
            },
            Column::U64(_) => Gather::U64 {
                values: Vec::with_capacity(GATHER),
                int32: false,
            },
            Column::Fixed { width, .. } => Gather::Fixed(width, Vec::with_capacity(GATHER * width)),
            Column::Bytes32 { .. }
            | Column::Bytes64 { .. }
            | Column::Slices(_)
            | Column::Views { .. } => Gather::Bytes(Vec::with_capacity(GATHER)),
        }
    }

    fn len(&self) -> usize {
        match self {
            Gather::U64 { values, .. } => values.len(),
            Gather::Bytes(v) => v.len(),
            Gather::Fixed(width, v) => v.len() / width,
        }
    }

    /// Adds key `i` of `column` (the column this gather was made for).
    #[inline]
    fn push(&mut self, column: Column<'a>, i: usize) {
        match (self, column) {
            (Gather::U64 { values, .. }, Column::Narrow(k)) => values.push(k.value(i)),
            (Gather::U64 { values, .. }, Column::U64(k) | Column::Int32Values(k)) => {
                values.push(k[i])
            }
            (Gather::Fixed(_, v), c) => v.extend_from_slice(c.bytes(i)),
            (Gather::Bytes(v), c) => v.push(c.bytes(i)),
            _ => unreachable!("a gather takes the keys of the column it was made for"),
        }
    }

    /// Hands the gathered keys to `f` and empties the batch.
    fn flush(&mut self, f: &mut impl FnMut(Column<'_>)) {
        if self.len() == 0 {
            return;
        }
        match self {
            Gather::U64 { values, int32 } => {
                f(if *int32 {
                    Column::Int32Values(values)
                } else {
                    Column::U64(values)
                });
                values.clear();
            }
            Gather::Bytes(v) => {
                f(Column::Slices(v));
                v.clear();
            }
            Gather::Fixed(width, v) => {
                f(Column::Fixed {
                    width: *width,
                    values: v,
                });
                v.clear();
            }
        }
    }
}
