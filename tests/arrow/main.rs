//! Arrow arrays on the filters (cargo feature `arrow`): `insert_array` and `contains_array`
//! on `BloomFilter`, `AtomicBloomFilter` and `parquet::SplitBlockFilter`, for every supported
//! type, against the single-key forms; nulls, sliced arrays, unsupported types; and (with
//! the `parquet` feature too) the filters a Parquet writer stores for Arrow columns.
//!
//! `cargo test -p blockbloom --features arrow,parquet --test arrow`

#[path = "../common/mod.rs"]
mod common;

use std::sync::Arc;

use arrow_array::types::Int32Type;
use arrow_array::{
    Array, ArrayRef, BinaryArray, BinaryViewArray, BooleanArray, Date32Array, DictionaryArray,
    FixedSizeBinaryArray, Float32Array, Float64Array, Int8Array, Int16Array, Int32Array,
    Int64Array, LargeBinaryArray, LargeStringArray, NullArray, StringArray, StringViewArray,
    UInt8Array, UInt16Array, UInt32Array, UInt64Array,
};
use arrow_buffer::{BooleanBuffer, Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use blockbloom::parquet::SplitBlockFilter;
use blockbloom::{
    AtomicBloomFilter, BloomFilter, CountingBloomFilter, Error, Filter, FilterRef, Isa, Storage,
};
use common::{splitmix64, tiers};

/// The array types the filters take.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    Utf8,
    LargeUtf8,
    Binary,
    LargeBinary,
    /// `Utf8View`, `BinaryView`: keys up to 12 bytes inline in their views, longer ones in
    /// the data buffers.
    Utf8View,
    BinaryView,
    /// `FixedSizeBinary(width)`: 16 for every filter, any width for the Parquet filter.
    Fixed(usize),
}

const KINDS: [Kind; 15] = [
    Kind::I8,
    Kind::U8,
    Kind::I16,
    Kind::U16,
    Kind::I32,
    Kind::U32,
    Kind::I64,
    Kind::U64,
    Kind::Utf8,
    Kind::LargeUtf8,
    Kind::Binary,
    Kind::LargeBinary,
    Kind::Utf8View,
    Kind::BinaryView,
    Kind::Fixed(16),
];

/// One key, in the form its single-key method takes.
#[derive(Clone, Debug, PartialEq)]
enum Key {
    I8(i8),
    U8(u8),
    I16(i16),
    U16(u16),
    I32(i32),
    U32(u32),
    I64(i64),
    U64(u64),
    Bytes(Vec<u8>),
}

impl Key {
    fn insert(&self, f: &mut BloomFilter) {
        match self {
            Key::I8(x) => f.insert(x),
            Key::U8(x) => f.insert(x),
            Key::I16(x) => f.insert(x),
            Key::U16(x) => f.insert(x),
            Key::I32(x) => f.insert(x),
            Key::U32(x) => f.insert(x),
            Key::I64(x) => f.insert(x),
            Key::U64(x) => f.insert(x),
            Key::Bytes(b) => f.insert_bytes(b),
        }
    }

    fn insert_counting(&self, f: &mut CountingBloomFilter) {
        match self {
            Key::I8(x) => f.insert(x),
            Key::U8(x) => f.insert(x),
            Key::I16(x) => f.insert(x),
            Key::U16(x) => f.insert(x),
            Key::I32(x) => f.insert(x),
            Key::U32(x) => f.insert(x),
            Key::I64(x) => f.insert(x),
            Key::U64(x) => f.insert(x),
            Key::Bytes(b) => f.insert_bytes(b),
        }
    }

    /// The single-key answer of any `Filter` (plain, atomic, view, counting).
    fn contains<S: Storage>(&self, f: &Filter<S>) -> bool {
        match self {
            Key::I8(x) => f.contains(x),
            Key::U8(x) => f.contains(x),
            Key::I16(x) => f.contains(x),
            Key::U16(x) => f.contains(x),
            Key::I32(x) => f.contains(x),
            Key::U32(x) => f.contains(x),
            Key::I64(x) => f.contains(x),
            Key::U64(x) => f.contains(x),
            Key::Bytes(b) => f.contains_bytes(b),
        }
    }

    /// Parquet writes every integer of up to 32 bits as INT32: the value as an `i32` (signed)
    /// or the `u32` of the same bits (unsigned).
    fn split_insert(&self, f: &mut SplitBlockFilter) {
        match self {
            Key::I8(x) => f.insert(&(*x as i32)),
            Key::U8(x) => f.insert(&(*x as u32)),
            Key::I16(x) => f.insert(&(*x as i32)),
            Key::U16(x) => f.insert(&(*x as u32)),
            Key::I32(x) => f.insert(x),
            Key::U32(x) => f.insert(x),
            Key::I64(x) => f.insert(x),
            Key::U64(x) => f.insert(x),
            Key::Bytes(b) => f.insert(&b[..]),
        }
    }

    fn split_contains(&self, f: &SplitBlockFilter) -> bool {
        match self {
            Key::I8(x) => f.contains(&(*x as i32)),
            Key::U8(x) => f.contains(&(*x as u32)),
            Key::I16(x) => f.contains(&(*x as i32)),
            Key::U16(x) => f.contains(&(*x as u32)),
            Key::I32(x) => f.contains(x),
            Key::U32(x) => f.contains(x),
            Key::I64(x) => f.contains(x),
            Key::U64(x) => f.contains(x),
            Key::Bytes(b) => f.contains(&b[..]),
        }
    }
}

/// Key `i` of kind `kind` from `seed`: distinct for distinct `i`; strings of 0 to 20 bytes
/// (some empty), binaries with zero bytes, full-range integers.
fn key(kind: Kind, seed: u64, i: u64) -> Key {
    let x = splitmix64(seed ^ i.wrapping_mul(0x1000_0000_01b3));
    match kind {
        Kind::I8 => Key::I8(x as i8),
        Kind::U8 => Key::U8((x >> 56) as u8),
        Kind::I16 => Key::I16(x as i16),
        Kind::U16 => Key::U16((x >> 48) as u16),
        Kind::I32 => Key::I32(x as i32),
        Kind::U32 => Key::U32((x >> 32) as u32),
        Kind::I64 => Key::I64(x as i64),
        Kind::U64 => Key::U64(x),
        Kind::Utf8 | Kind::LargeUtf8 | Kind::Utf8View => Key::Bytes(if i.is_multiple_of(97) {
            format!("{i}").into_bytes()
        } else {
            let mut s = format!("{x:x}-{i}").into_bytes();
            s.truncate((x % 21) as usize);
            s
        }),
        Kind::Binary | Kind::LargeBinary | Kind::BinaryView => {
            let mut b = x.to_le_bytes().to_vec();
            b.extend_from_slice(&i.to_le_bytes());
            b.truncate((x % 17) as usize);
            b.push((i % 7) as u8);
            b.extend_from_slice(&i.to_be_bytes());
            Key::Bytes(b)
        }
        Kind::Fixed(w) => {
            let mut b = Vec::with_capacity(w);
            let mut j = 0;
            while b.len() < w {
                b.extend_from_slice(&splitmix64(x ^ j).to_le_bytes());
                j += 1;
            }
            b.truncate(w);
            if w >= 16 {
                b[..8].copy_from_slice(&i.to_le_bytes()); // distinct for distinct `i`
            }
            Key::Bytes(b)
        }
    }
}

fn keys(kind: Kind, seed: u64, n: usize) -> Vec<Key> {
    (0..n as u64).map(|i| key(kind, seed, i)).collect()
}

/// An array of `kind` holding `keys` (the values under nulls stay in the buffers).
fn array(kind: Kind, keys: &[Key], nulls: Option<NullBuffer>) -> ArrayRef {
    fn ints<T: arrow_buffer::ArrowNativeType>(
        keys: &[Key],
        f: impl Fn(&Key) -> T,
    ) -> ScalarBuffer<T> {
        keys.iter().map(f).collect::<Vec<_>>().into()
    }
    let bytes = || -> (Vec<usize>, Buffer) {
        let mut lens = Vec::new();
        let mut values = Vec::new();
        for k in keys {
            let Key::Bytes(b) = k else { panic!("{k:?}") };
            lens.push(b.len());
            values.extend_from_slice(b);
        }
        (lens, Buffer::from_vec(values))
    };
    match kind {
        Kind::I8 => Arc::new(Int8Array::new(
            ints(keys, |k| match k {
                Key::I8(x) => *x,
                _ => unreachable!(),
            }),
            nulls,
        )),
        Kind::U8 => Arc::new(UInt8Array::new(
            ints(keys, |k| match k {
                Key::U8(x) => *x,
                _ => unreachable!(),
            }),
            nulls,
        )),
        Kind::I16 => Arc::new(Int16Array::new(
            ints(keys, |k| match k {
                Key::I16(x) => *x,
                _ => unreachable!(),
            }),
            nulls,
        )),
        Kind::U16 => Arc::new(UInt16Array::new(
            ints(keys, |k| match k {
                Key::U16(x) => *x,
                _ => unreachable!(),
            }),
            nulls,
        )),
        Kind::I32 => Arc::new(Int32Array::new(
            ints(keys, |k| match k {
                Key::I32(x) => *x,
                _ => unreachable!(),
            }),
            nulls,
        )),
        Kind::U32 => Arc::new(UInt32Array::new(
            ints(keys, |k| match k {
                Key::U32(x) => *x,
                _ => unreachable!(),
            }),
            nulls,
        )),
        Kind::I64 => Arc::new(Int64Array::new(
            ints(keys, |k| match k {
                Key::I64(x) => *x,
                _ => unreachable!(),
            }),
            nulls,
        )),
        Kind::U64 => Arc::new(UInt64Array::new(
            ints(keys, |k| match k {
                Key::U64(x) => *x,
                _ => unreachable!(),
            }),
            nulls,
        )),
        Kind::Utf8 => {
            let (lens, values) = bytes();
            Arc::new(StringArray::new(
                OffsetBuffer::from_lengths(lens),
                values,
                nulls,
            ))
        }
        Kind::LargeUtf8 => {
            let (lens, values) = bytes();
            Arc::new(LargeStringArray::new(
                OffsetBuffer::from_lengths(lens),
                values,
                nulls,
            ))
        }
        Kind::Binary => {
            let (lens, values) = bytes();
            Arc::new(BinaryArray::new(
                OffsetBuffer::from_lengths(lens),
                values,
                nulls,
            ))
        }
        Kind::LargeBinary => {
            let (lens, values) = bytes();
            Arc::new(LargeBinaryArray::new(
                OffsetBuffer::from_lengths(lens),
                values,
                nulls,
            ))
        }
        Kind::Utf8View => {
            let strs = keys.iter().map(|k| match k {
                Key::Bytes(b) => Some(std::str::from_utf8(b).unwrap()),
                _ => unreachable!(),
            });
            let a: StringViewArray = strs.collect();
            Arc::new(StringViewArray::new(
                a.views().clone(),
                a.data_buffers().to_vec(),
                nulls,
            ))
        }
        Kind::BinaryView => {
            let bins = keys.iter().map(|k| match k {
                Key::Bytes(b) => Some(&b[..]),
                _ => unreachable!(),
            });
            let a: BinaryViewArray = bins.collect();
            Arc::new(BinaryViewArray::new(
                a.views().clone(),
                a.data_buffers().to_vec(),
                nulls,
            ))
        }
        Kind::Fixed(w) => {
            let (_, values) = bytes();
            Arc::new(FixedSizeBinaryArray::new(w as i32, values, nulls))
        }
    }
}

/// Null patterns over `n` keys: scattered single nulls (short valid runs: gathered keys, more
/// than one gather batch), long valid runs between null runs (inserted in place), a null at
/// each end, every other key, all null.
fn null_patterns(n: usize) -> Vec<(&'static str, NullBuffer)> {
    let pattern = |f: &dyn Fn(usize) -> bool| NullBuffer::new(BooleanBuffer::collect_bool(n, f));
    vec![
        (
            "scattered",
            pattern(&|i| !splitmix64(i as u64 + 99).is_multiple_of(3)),
        ),
        ("runs", pattern(&|i| i % 237 < 170)),
        ("ends", pattern(&|i| i != 0 && i != n - 1)),
        ("alternate", pattern(&|i| i % 2 == 1)),
        ("all null", pattern(&|_| false)),
    ]
}

/// The keys of `keys` that `nulls` marks valid.
fn valid(keys: &[Key], nulls: Option<&NullBuffer>) -> Vec<Key> {
    keys.iter()
        .enumerate()
        .filter(|&(i, _)| nulls.is_none_or(|n| n.is_valid(i)))
        .map(|(_, k)| k.clone())
        .collect()
}

const N: usize = 3000;

/// A small filter (many false positives, so answers are both true and false), seeded.
fn bloom(isa: Isa) -> BloomFilter {
    BloomFilter::builder()
        .capacity(N as u64 / 4)
        .fpr(0.05)
        .seed(0x5eed)
        .isa(isa)
        .build()
        .unwrap()
}

fn split(isa: Isa) -> SplitBlockFilter {
    SplitBlockFilter::new_with_num_bytes(512)
        .unwrap()
        .with_isa(isa)
        .unwrap()
}

/// Checks `answers` for `probe`, whose keys are `keys`: same length, the probe's null buffer,
/// null keys null with value bit 0, and every valid key answered as `single` answers it.
fn check_answers(
    what: &str,
    answers: &BooleanArray,
    probe: &dyn Array,
    keys: &[Key],
    single: impl Fn(&Key) -> bool,
) {
    assert_eq!(answers.len(), probe.len(), "{what}");
    assert_eq!(answers.nulls(), probe.nulls(), "{what}: null buffer");
    assert_eq!(answers.offset(), 0, "{what}");
    for (i, k) in keys.iter().enumerate() {
        if probe.is_null(i) {
            assert!(answers.is_null(i), "{what}: key {i} is null");
            assert!(
                !answers.values().value(i),
                "{what}: value bit under null {i}"
            );
        } else {
            assert!(answers.is_valid(i), "{what}: key {i}");
            assert_eq!(answers.value(i), single(k), "{what}: key {i} = {k:?}");
        }
    }
}

#[test]
fn arrays_hash_as_single_keys() {
    for isa in tiers() {
        for kind in KINDS {
            let what = format!("{isa} {kind:?}");
            let members = keys(kind, 1, N);
            let arr = array(kind, &members, None);

            let mut by_array = bloom(isa);
            by_array.insert_array(&arr).unwrap();
            let mut by_key = bloom(isa);
            members.iter().for_each(|k| k.insert(&mut by_key));
            assert_eq!(by_array, by_key, "{what}: insert_array");
            let atomic = bloom(isa).into_atomic();
            atomic.insert_array(&arr).unwrap();
            assert_eq!(atomic.snapshot(), by_key, "{what}: atomic insert_array");

            // Members (no false negatives) and others, answered as `contains` answers.
            let mut probe_keys = keys(kind, 2, N);
            probe_keys[..N / 3].clone_from_slice(&members[..N / 3]);
            let probe = array(kind, &probe_keys, None);
            let answers = by_key.contains_array(&probe).unwrap();
            check_answers(&what, &answers, &probe, &probe_keys, |k| {
                k.contains(&by_key)
            });
            assert!(
                answers.values().slice(0, N / 3).count_set_bits() == N / 3,
                "{what}"
            );
            let rest = answers.values().slice(N / 3, N - N / 3).count_set_bits();
            // 8-bit keys: every value is among the members, so every key answers yes.
            let few_values = matches!(kind, Kind::I8 | Kind::U8);
            assert!(
                rest > 0 && (rest < N - N / 3 || few_values),
                "{what}: {rest} positives among others"
            );
            assert_eq!(
                atomic.contains_array(&probe).unwrap(),
                answers,
                "{what}: atomic"
            );
            // A zero-copy view too (Arrow allocates its buffers 64-byte aligned).
            let bytes = Buffer::from_slice_ref(by_key.to_bytes());
            let view = FilterRef::from_bytes(bytes.as_slice()).unwrap();
            assert_eq!(
                view.contains_array(&probe).unwrap(),
                answers,
                "{what}: view"
            );
            // `contains_array` is on every `Filter`: the counting filter's answers too.
            let mut counting = CountingBloomFilter::builder()
                .capacity(N as u64 / 4)
                .fpr(0.05)
                .isa(isa)
                .build()
                .unwrap();
            members
                .iter()
                .for_each(|k| k.insert_counting(&mut counting));
            let answers = counting.contains_array(&probe).unwrap();
            check_answers(&what, &answers, &probe, &probe_keys, |k| {
                k.contains(&counting)
            });
            assert_eq!(answers.values().slice(0, N / 3).count_set_bits(), N / 3);
        }
    }
}

#[test]
fn nulls_answer_null_and_are_not_inserted() {
    for isa in tiers() {
        for kind in KINDS {
            let all = keys(kind, 3, N);
            for (name, nulls) in null_patterns(N) {
                let what = format!("{isa} {kind:?} {name}");
                let arr = array(kind, &all, Some(nulls.clone()));
                let valid_keys = valid(&all, Some(&nulls));

                // The same filter as one built from the non-null keys alone.
                let mut with_nulls = bloom(isa);
                with_nulls.insert_array(&arr).unwrap();
                let mut only_valid = bloom(isa);
                only_valid
                    .insert_array(&array(kind, &valid_keys, None))
                    .unwrap();
                assert_eq!(with_nulls, only_valid, "{what}");
                let mut by_key = bloom(isa);
                valid_keys.iter().for_each(|k| k.insert(&mut by_key));
                assert_eq!(with_nulls, by_key, "{what}: single keys");
                let atomic = bloom(isa).into_atomic();
                atomic.insert_array(&arr).unwrap();
                assert_eq!(atomic.into_filter(), by_key, "{what}: atomic");

                let mut s = split(isa);
                s.insert_array(&arr).unwrap();
                let mut s_key = split(isa);
                valid_keys.iter().for_each(|k| k.split_insert(&mut s_key));
                assert_eq!(s, s_key, "{what}: split block");

                // Answers: null under null; the valid keys as single keys answer.
                let answers = by_key.contains_array(&arr).unwrap();
                check_answers(&what, &answers, arr.as_ref(), &all, |k| k.contains(&by_key));
                let answers = s_key.contains_array(&arr).unwrap();
                check_answers(&what, &answers, arr.as_ref(), &all, |k| {
                    k.split_contains(&s_key)
                });
            }
        }
    }
}

#[test]
fn sliced_arrays() {
    let slices = [
        (0, N),
        (1, 100),
        (63, 1000),
        (64, 64),
        (65, 2000),
        (1000, 0),
        (N - 7, 7),
    ];
    for isa in tiers() {
        for kind in KINDS {
            let all = keys(kind, 4, N);
            let (_, scattered) = null_patterns(N).swap_remove(0);
            for nulls in [None, Some(scattered)] {
                let full = array(kind, &all, nulls.clone());
                for (offset, len) in slices {
                    let what =
                        format!("{isa} {kind:?} [{offset}; {len}] nulls {}", nulls.is_some());
                    let arr = full.slice(offset, len);
                    assert_eq!(arr.len(), len, "{what}");
                    let sub = &all[offset..offset + len];
                    let valid_keys = valid(sub, arr.nulls());

                    let mut f = bloom(isa);
                    f.insert_array(&arr).unwrap();
                    let mut by_key = bloom(isa);
                    valid_keys.iter().for_each(|k| k.insert(&mut by_key));
                    assert_eq!(f, by_key, "{what}");
                    let answers = f.contains_array(&arr).unwrap();
                    check_answers(&what, &answers, arr.as_ref(), sub, |k| k.contains(&f));

                    let mut s = split(isa);
                    s.insert_array(&arr).unwrap();
                    let mut s_key = split(isa);
                    valid_keys.iter().for_each(|k| k.split_insert(&mut s_key));
                    assert_eq!(s, s_key, "{what}: split block");
                    let answers = s.contains_array(&arr).unwrap();
                    check_answers(&what, &answers, arr.as_ref(), sub, |k| k.split_contains(&s));
                }
            }
        }
    }
}

#[test]
fn split_block_filter_hashes_plain_encoding() {
    // Every kind, and FixedSizeBinary of other widths (FIXED_LEN_BYTE_ARRAY of any length).
    let kinds = KINDS
        .into_iter()
        .chain([Kind::Fixed(5), Kind::Fixed(20), Kind::Fixed(64)]);
    for isa in tiers() {
        for kind in kinds.clone() {
            let what = format!("{isa} {kind:?}");
            let members = keys(kind, 5, N);
            let mut by_array = split(isa);
            by_array.insert_array(&array(kind, &members, None)).unwrap();
            let mut by_value = split(isa);
            members.iter().for_each(|k| k.split_insert(&mut by_value));
            assert_eq!(by_array, by_value, "{what}");

            let mut probe_keys = keys(kind, 6, N);
            probe_keys[..N / 3].clone_from_slice(&members[..N / 3]);
            let probe = array(kind, &probe_keys, None);
            let answers = by_value.contains_array(&probe).unwrap();
            check_answers(&what, &answers, &probe, &probe_keys, |k| {
                k.split_contains(&by_value)
            });
            assert_eq!(answers.values().slice(0, N / 3).count_set_bits(), N / 3);
            let rest = answers.values().slice(N / 3, N - N / 3).count_set_bits();
            // 8-bit keys: every value is among the members, so every key answers yes.
            let few_values = matches!(kind, Kind::I8 | Kind::U8);
            assert!(
                rest > 0 && (rest < N - N / 3 || few_values),
                "{what}: {rest} positives among others"
            );
        }
    }
    // Strings are hashed as their bytes (no length prefix), as `insert(str)` hashes them.
    let mut a = split(Isa::Scalar);
    a.insert_array(&StringArray::from(vec!["Paris", ""]))
        .unwrap();
    let mut b = split(Isa::Scalar);
    b.insert("Paris");
    b.insert("");
    assert_eq!(a, b);
    // Unsigned integers as the signed ones with the same bits (how INT32/INT64 store them).
    let mut a = split(Isa::Scalar);
    a.insert_array(&UInt32Array::from(vec![u32::MAX, 7]))
        .unwrap();
    a.insert_array(&UInt64Array::from(vec![u64::MAX])).unwrap();
    let mut b = split(Isa::Scalar);
    b.insert_batch(&[-1i32, 7]);
    b.insert(&-1i64);
    assert_eq!(a, b);
}

#[test]
fn empty_arrays() {
    for kind in KINDS {
        let arr = array(kind, &[], None);
        let mut f = bloom(Isa::Scalar);
        f.insert_array(&arr).unwrap();
        assert_eq!(f, bloom(Isa::Scalar), "{kind:?}");
        assert_eq!(f.contains_array(&arr).unwrap().len(), 0);
        let mut s = split(Isa::Scalar);
        s.insert_array(&arr).unwrap();
        assert_eq!(s.contains_array(&arr).unwrap().len(), 0);
    }
}

#[test]
fn unsupported_types_are_errors() {
    let dict: DictionaryArray<Int32Type> = vec!["a", "b", "a"].into_iter().collect();
    let fixed20 = array(Kind::Fixed(20), &keys(Kind::Fixed(20), 7, 3), None);
    let unsupported: Vec<(ArrayRef, &str)> = vec![
        (Arc::new(Float32Array::from(vec![1.5])), "Float32"),
        (Arc::new(Float64Array::from(vec![1.5])), "Float64"),
        (Arc::new(BooleanArray::from(vec![true])), "Boolean"),
        (Arc::new(Date32Array::from(vec![1])), "Date32"),
        (Arc::new(NullArray::new(2)), "Null"),
        (Arc::new(dict), "Dictionary(Int32, Utf8)"),
        (fixed20.clone(), "FixedSizeBinary(20)"),
    ];
    for (arr, name) in &unsupported {
        let is_type =
            |r: Result<_, Error>| matches!(r, Err(Error::UnsupportedType(t)) if t == *name);
        let mut f = bloom(Isa::Scalar);
        assert!(is_type(f.insert_array(arr).map(|_| ())), "{name}");
        assert_eq!(f, bloom(Isa::Scalar), "{name}: nothing inserted");
        assert!(is_type(f.contains_array(arr).map(|_| ())), "{name}");
        let a = bloom(Isa::Scalar).into_atomic();
        assert!(is_type(a.insert_array(arr).map(|_| ())), "{name}");
        assert!(is_type(a.contains_array(arr).map(|_| ())), "{name}");
        let message = f.insert_array(arr).unwrap_err().to_string();
        assert!(message.contains(name), "{message}");
        assert!(message.contains("FixedSizeBinary(16)"), "{message}");
        if *name != "FixedSizeBinary(20)" {
            let mut s = split(Isa::Scalar);
            assert!(is_type(s.insert_array(arr).map(|_| ())), "split {name}");
            assert_eq!(s, split(Isa::Scalar), "{name}: nothing inserted");
            assert!(is_type(s.contains_array(arr).map(|_| ())), "split {name}");
        }
    }
    // The Parquet filter takes any width (FIXED_LEN_BYTE_ARRAY): only the Bloom filter's
    // 16-byte keys are limited to 16.
    let mut s = split(Isa::Scalar);
    s.insert_array(&fixed20).unwrap();
    assert!(
        s.contains_array(&fixed20)
            .unwrap()
            .iter()
            .all(|a| a == Some(true))
    );
    // An AtomicBloomFilter refuses like the plain one.
    let a = AtomicBloomFilter::with_capacity(10, 0.01).unwrap();
    assert!(a.insert_array(&fixed20).is_err());
}

/// Files written by the `parquet` crate's `ArrowWriter` with Bloom filters: the filter read
/// back for each column answers true for every written value, and is bit for bit the filter
/// `insert_array` builds from the column at the same size.
#[cfg(feature = "parquet")]
mod file;

/// One key, one hash across Arrow and the single-key methods: a string, integer or 16-byte key
/// inserted from an Arrow array is found by `contains` of the Rust value, and the other way
/// round, on every tier.
#[test]
fn arrow_keys_are_the_single_key_methods_keys() {
    let strs: Vec<String> = (0..500).map(|i| format!("user:{i}")).collect();
    let ints: Vec<i32> = (0..500).map(|i| (splitmix64(i) as i32) | 1).collect();
    let wide: Vec<u128> = (0..500)
        .map(|i| (splitmix64(i) as u128) << 64 | 7)
        .collect();
    let str_array = StringArray::from_iter_values(&strs);
    let int_array = Int32Array::from(ints.clone());
    let fixed: Vec<[u8; 16]> = wide.iter().map(|w| w.to_le_bytes()).collect();
    let fixed_array = FixedSizeBinaryArray::try_from_iter(fixed.iter()).unwrap();
    for isa in tiers() {
        let fresh = || {
            BloomFilter::builder()
                .capacity(1500)
                .fpr(0.01)
                .isa(isa)
                .build()
                .unwrap()
        };
        let mut by_array = fresh();
        by_array.insert_array(&str_array).unwrap();
        by_array.insert_array(&int_array).unwrap();
        by_array.insert_array(&fixed_array).unwrap();
        assert!(
            strs.iter()
                .all(|s| by_array.contains(s.as_str()) && by_array.contains(s))
        );
        assert!(ints.iter().all(|i| by_array.contains(i)));
        assert!(wide.iter().all(|w| by_array.contains(w)));
        let mut by_key = fresh();
        strs.iter().for_each(|s| by_key.insert(s.as_str()));
        ints.iter().for_each(|i| by_key.insert(i));
        wide.iter().for_each(|w| by_key.insert(w));
        assert_eq!(by_key, by_array, "{isa}");
        for array in [&str_array as &dyn Array, &int_array, &fixed_array] {
            let answers = by_key.contains_array(array).unwrap();
            assert_eq!(answers.true_count(), array.len(), "{isa}");
        }
    }
}

/// A view array built with Arrow's checks skipped whose view points outside its buffers is
/// an error, not a panic or a read out of bounds, on every filter.
#[test]
fn views_outside_their_buffers_are_errors() {
    let good = StringViewArray::from(vec!["a string longer than twelve bytes"]);
    let view = good.views()[0];
    let bad_index = view | (7u128 << 64); // buffer index 7 of 1
    let bad_offset = (view & !(u128::from(u32::MAX) << 96)) | (1000u128 << 96);
    for (bad, what) in [(bad_index, "buffer index"), (bad_offset, "past the end")] {
        let views = ScalarBuffer::from(vec![view, bad]);
        // SAFETY: deliberately invalid; the filters must refuse it without reading through
        // the bad view.
        let arr = unsafe {
            StringViewArray::new_unchecked(views, good.data_buffers().to_vec().into(), None)
        };
        let is_offsets = |r: Result<(), Error>| matches!(r, Err(Error::InvalidOffsets { index: 1, reason }) if reason.contains(what));
        let mut f = bloom(Isa::Scalar);
        assert!(is_offsets(f.insert_array(&arr)), "{what}");
        assert_eq!(f, bloom(Isa::Scalar), "{what}: nothing inserted");
        assert!(is_offsets(f.contains_array(&arr).map(|_| ())), "{what}");
        let mut s = split(Isa::Scalar);
        assert!(is_offsets(s.insert_array(&arr)), "split {what}");
        assert!(
            is_offsets(s.contains_array(&arr).map(|_| ())),
            "split {what}"
        );
    }
}
