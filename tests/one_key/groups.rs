// Key groups: one set of keys, every type and path that names them.

use std::borrow::Cow;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::sync::Arc;

use blockbloom::{BatchKey, ByteColumn, Key, KeyForm};

use crate::kinds::Kind;

/// A set of keys and every typed way to insert and query them. `insert` returns false where
/// the kind lacks the path; `query` gives `None` there, else one answer per key (a count is
/// spread as "all true" when it equals the key count).
pub(crate) trait Group {
    type V: std::fmt::Debug;
    const NAME: &'static str;
    const INSERT: &'static [&'static str];
    const QUERY: &'static [&'static str];
    fn insert<F: Kind>(f: &mut F, path: usize, keys: &[Self::V]) -> bool;
    fn query<F: Kind>(f: &F, path: usize, keys: &[Self::V]) -> Option<Vec<bool>>;
}

fn each<V>(keys: &[V], one: impl FnMut(&V)) -> bool {
    keys.iter().for_each(one);
    true
}

fn all<V>(keys: &[V], one: impl Fn(&V) -> bool) -> Option<Vec<bool>> {
    Some(keys.iter().map(one).collect())
}

fn counted(n: Option<usize>, len: usize) -> Option<Vec<bool>> {
    n.map(|n| vec![n == len; len])
}

/// Arrow's offsets and values for byte strings.
fn column<O: TryFrom<usize>>(keys: &[&[u8]]) -> (Vec<O>, Vec<u8>)
where
    O::Error: std::fmt::Debug,
{
    let mut values = Vec::new();
    let mut offsets = vec![O::try_from(0).unwrap()];
    for k in keys {
        values.extend_from_slice(k);
        offsets.push(O::try_from(values.len()).unwrap());
    }
    (offsets, values)
}

pub(crate) struct Strings;

impl Group for Strings {
    type V = String;
    const NAME: &'static str = "strings";
    const INSERT: &'static [&'static str] = &[
        "insert(&String)",
        "insert(str)",
        "insert(&&str)",
        "insert([u8])",
        "insert(&Vec<u8>)",
        "insert(&Box<str>)",
        "insert(&Cow<str>)",
        "insert(&Arc<str>)",
        "insert_bytes",
        "insert_batch(&[&str])",
        "insert_batch(&[&[u8]])",
        "insert_column(i32 offsets)",
        "insert_column(i64 offsets)",
        "insert_new(str)",
        "insert_batch_new(&[&str])",
        "insert_batch_new(ByteColumn)",
        "extend(String)",
    ];
    const QUERY: &'static [&'static str] = &[
        "contains(&String)",
        "contains(str)",
        "contains([u8])",
        "contains(&Vec<u8>)",
        "contains(&Box<str>)",
        "contains(&Cow<[u8]>)",
        "contains(&Arc<str>)",
        "contains_bytes",
        "contains_batch(&[&str])",
        "contains_batch(&[&[u8]])",
        "count_batch(&[&str])",
        "contains_column(i32 offsets)",
        "contains_column(i64 offsets)",
        "contains_bitmap(&[&str])",
        "select(ByteColumn)",
    ];
    fn insert<F: Kind>(f: &mut F, path: usize, keys: &[String]) -> bool {
        let strs: Vec<&str> = keys.iter().map(String::as_str).collect();
        let bytes: Vec<&[u8]> = keys.iter().map(String::as_bytes).collect();
        match path {
            0 => each(keys, |s| f.insert(s)),
            1 => each(keys, |s| f.insert(s.as_str())),
            2 => each(keys, |s| f.insert(&s.as_str())),
            3 => each(keys, |s| f.insert(s.as_bytes())),
            4 => each(keys, |s| f.insert(&s.clone().into_bytes())),
            5 => each(keys, |s| f.insert(&Box::<str>::from(s.as_str()))),
            6 => each(keys, |s| f.insert(&Cow::Borrowed(s.as_str()))),
            7 => each(keys, |s| f.insert(&Arc::<str>::from(s.as_str()))),
            8 => each(keys, |s| f.insert_bytes(s.as_bytes())),
            9 => f.insert_batch(&strs),
            10 => f.insert_batch(&bytes),
            11 => {
                let (o, v) = column::<i32>(&bytes);
                f.insert_column(&ByteColumn::new(&o, &v).unwrap())
            }
            12 => {
                let (o, v) = column::<i64>(&bytes);
                f.insert_column(&ByteColumn::new(&o, &v).unwrap())
            }
            13 => keys.iter().all(|s| f.insert_new(s.as_str())),
            14 => f.insert_batch_new(&strs, keys.len()),
            15 => {
                let (o, v) = column::<i32>(&bytes);
                f.insert_batch_new(&ByteColumn::new(&o, &v).unwrap(), keys.len())
            }
            16 => f.extend_keys(keys.iter().cloned()),
            _ => unreachable!(),
        }
    }
    fn query<F: Kind>(f: &F, path: usize, keys: &[String]) -> Option<Vec<bool>> {
        let strs: Vec<&str> = keys.iter().map(String::as_str).collect();
        let bytes: Vec<&[u8]> = keys.iter().map(String::as_bytes).collect();
        match path {
            0 => all(keys, |s| f.contains(s)),
            1 => all(keys, |s| f.contains(s.as_str())),
            2 => all(keys, |s| f.contains(s.as_bytes())),
            3 => all(keys, |s| f.contains(&s.clone().into_bytes())),
            4 => all(keys, |s| f.contains(&Box::<str>::from(s.as_str()))),
            5 => all(keys, |s| f.contains(&Cow::<[u8]>::Owned(s.clone().into()))),
            6 => all(keys, |s| f.contains(&Arc::<str>::from(s.as_str()))),
            7 => all(keys, |s| f.contains_bytes(s.as_bytes())),
            8 => f.contains_batch(&strs),
            9 => f.contains_batch(&bytes),
            10 => counted(f.count_batch(&strs), keys.len()),
            11 => {
                let (o, v) = column::<i32>(&bytes);
                f.contains_column(&ByteColumn::new(&o, &v).unwrap())
            }
            12 => {
                let (o, v) = column::<i64>(&bytes);
                f.contains_column(&ByteColumn::new(&o, &v).unwrap())
            }
            13 => f.contains_bitmap(&strs, keys.len()),
            14 => {
                let (o, v) = column::<i64>(&bytes);
                f.select(&ByteColumn::new(&o, &v).unwrap(), keys.len())
            }
            _ => unreachable!(),
        }
    }
}

/// An integer type of up to 64 bits. A key is a 64-bit value; the type can name key `k` if
/// one of its values widens to `k` (sign-extended if signed, zero-extended if not).
pub(crate) trait Int: Key + BatchKey + Copy + std::fmt::Debug + Widen {
    fn name(k: u64) -> Option<Self>;
}

macro_rules! ints {
    ($($t:ty),* $(,)?) => {$(
        impl Int for $t {
            fn name(k: u64) -> Option<$t> {
                // The type's value of `k`'s bits, if widening it gives `k` back.
                let v = k as $t;
                (Self::widen(v) == k).then_some(v)
            }
        }
    )*};
}

/// How each type widens to 64 bits.
pub(crate) trait Widen: Sized {
    fn widen(v: Self) -> u64;
}
macro_rules! widen {
    ($($t:ty => $via:ty),*) => {$(
        impl Widen for $t {
            fn widen(v: $t) -> u64 {
                v as $via as u64
            }
        }
    )*};
}
widen!(u8 => u8, u16 => u16, u32 => u32, u64 => u64, usize => usize,
       i8 => i64, i16 => i64, i32 => i64, i64 => i64, isize => i64);

ints!(u64, i64, u32, i32, u16, i16, u8, i8, usize, isize);

/// The keys as `T`, if `T` can name every one.
fn typed<T: Int>(keys: &[u64]) -> Option<Vec<T>> {
    keys.iter().map(|&k| T::name(k)).collect()
}

/// Integer keys as their 64-bit values: every integer type that can name all of them, by
/// every insert and query path, single keys and batches of every width, the 8-byte form,
/// and Arrow arrays of every integer type (with the `arrow` feature).
pub(crate) struct Ints;

/// `$m!(T)` for every integer type, in `Ints`' path order.
macro_rules! each_int {
    ($m:ident) => {
        $m!(u64, i64, u32, i32, u16, i16, u8, i8, usize, isize)
    };
}

macro_rules! single_names {
    ($verb:literal, $($t:ty),*) => { [$(concat!($verb, "(&", stringify!($t), ")")),*] };
}
macro_rules! batch_names {
    ($verb:literal, $($t:ty),*) => { [$(concat!($verb, "(&[", stringify!($t), "])")),*] };
}
macro_rules! insert_singles { ($($t:ty),*) => { single_names!("insert", $($t),*) }; }
macro_rules! insert_batches { ($($t:ty),*) => { batch_names!("insert_batch", $($t),*) }; }
macro_rules! contains_singles { ($($t:ty),*) => { single_names!("contains", $($t),*) }; }
macro_rules! contains_batches { ($($t:ty),*) => { batch_names!("contains_batch", $($t),*) }; }

const TYPES: usize = 10;
const INSERT_SINGLE: [&str; TYPES] = each_int!(insert_singles);
const INSERT_BATCH: [&str; TYPES] = each_int!(insert_batches);
const CONTAINS_SINGLE: [&str; TYPES] = each_int!(contains_singles);
const CONTAINS_BATCH: [&str; TYPES] = each_int!(contains_batches);
const INSERT_OTHER: [&str; 13] = [
    "insert_new(&u8)",
    "insert_new(&i32)",
    "insert_new(&u64)",
    "insert_batch_new(&[i8])",
    "insert_batch_new(&[u32])",
    "insert_batch_new(&[i64])",
    "extend(u16)",
    "extend(isize)",
    "insert_bytes(8 LE bytes)",
    "insert(&[u8; 8])",
    "insert(&Ipv4Addr)",
    "insert(&char)",
    "insert(&KeyForm::U64)",
];
const QUERY_OTHER: [&str; 12] = [
    "count_batch(&[u16])",
    "count_batch(&[i64])",
    "contains_bitmap(&[u8])",
    "contains_bitmap(&[isize])",
    "select(&[i32])",
    "select(&[usize])",
    "contains_bytes(8 LE bytes)",
    "contains(&[u8; 8])",
    "contains(&Ipv4Addr)",
    "contains(&char)",
    "contains(&bool)",
    "contains(&KeyForm::U64)",
];
#[cfg(feature = "arrow")]
const INSERT_ARROW: [&str; 8] = [
    "insert_array(Int8Array)",
    "insert_array(UInt8Array)",
    "insert_array(Int16Array)",
    "insert_array(UInt16Array)",
    "insert_array(Int32Array)",
    "insert_array(UInt32Array)",
    "insert_array(Int64Array)",
    "insert_array(UInt64Array)",
];
#[cfg(not(feature = "arrow"))]
const INSERT_ARROW: [&str; 0] = [];
#[cfg(feature = "arrow")]
const QUERY_ARROW: [&str; 8] = [
    "contains_array(Int8Array)",
    "contains_array(UInt8Array)",
    "contains_array(Int16Array)",
    "contains_array(UInt16Array)",
    "contains_array(Int32Array)",
    "contains_array(UInt32Array)",
    "contains_array(Int64Array)",
    "contains_array(UInt64Array)",
];
#[cfg(not(feature = "arrow"))]
const QUERY_ARROW: [&str; 0] = [];

const fn concat<const N: usize>(parts: [&[&'static str]; 4]) -> [&'static str; N] {
    let mut out = [""; N];
    let (mut i, mut p) = (0, 0);
    while p < parts.len() {
        let mut j = 0;
        while j < parts[p].len() {
            out[i] = parts[p][j];
            i += 1;
            j += 1;
        }
        p += 1;
    }
    assert!(i == N);
    out
}

const N_INSERT: usize = 2 * TYPES + INSERT_OTHER.len() + INSERT_ARROW.len();
const N_QUERY: usize = 2 * TYPES + QUERY_OTHER.len() + QUERY_ARROW.len();
static INSERT_PATHS: [&str; N_INSERT] =
    concat([&INSERT_SINGLE, &INSERT_BATCH, &INSERT_OTHER, &INSERT_ARROW]);
static QUERY_PATHS: [&str; N_QUERY] = concat([
    &CONTAINS_SINGLE,
    &CONTAINS_BATCH,
    &QUERY_OTHER,
    &QUERY_ARROW,
]);

/// `$body` with `$T` the integer type of index `$i` in `Ints`' order.
macro_rules! with_int {
    ($i:expr, $T:ident => $body:expr) => {
        match $i {
            0 => {
                type $T = u64;
                $body
            }
            1 => {
                type $T = i64;
                $body
            }
            2 => {
                type $T = u32;
                $body
            }
            3 => {
                type $T = i32;
                $body
            }
            4 => {
                type $T = u16;
                $body
            }
            5 => {
                type $T = i16;
                $body
            }
            6 => {
                type $T = u8;
                $body
            }
            7 => {
                type $T = i8;
                $body
            }
            8 => {
                type $T = usize;
                $body
            }
            9 => {
                type $T = isize;
                $body
            }
            _ => unreachable!(),
        }
    };
}

/// The keys as an Arrow array of integer type `i` (Int8, UInt8, ..., UInt64), if that type
/// can name every one.
#[cfg(feature = "arrow")]
fn arrow_array_of(i: usize, keys: &[u64]) -> Option<std::sync::Arc<dyn arrow_array::Array>> {
    use arrow_array::*;
    use std::sync::Arc;
    Some(match i {
        0 => Arc::new(Int8Array::from(typed::<i8>(keys)?)),
        1 => Arc::new(UInt8Array::from(typed::<u8>(keys)?)),
        2 => Arc::new(Int16Array::from(typed::<i16>(keys)?)),
        3 => Arc::new(UInt16Array::from(typed::<u16>(keys)?)),
        4 => Arc::new(Int32Array::from(typed::<i32>(keys)?)),
        5 => Arc::new(UInt32Array::from(typed::<u32>(keys)?)),
        6 => Arc::new(Int64Array::from(typed::<i64>(keys)?)),
        7 => Arc::new(UInt64Array::from(typed::<u64>(keys)?)),
        _ => unreachable!(),
    })
}

fn le8(k: u64) -> [u8; 8] {
    k.to_le_bytes()
}

impl Group for Ints {
    type V = u64;
    const NAME: &'static str = "integers";
    const INSERT: &'static [&'static str] = &INSERT_PATHS;
    const QUERY: &'static [&'static str] = &QUERY_PATHS;

    fn insert<F: Kind>(f: &mut F, path: usize, keys: &[u64]) -> bool {
        if path < TYPES {
            return with_int!(path, T => match typed::<T>(keys) {
                Some(t) => each(&t, |k| f.insert(k)),
                None => false,
            });
        }
        if path < 2 * TYPES {
            return with_int!(path - TYPES, T => match typed::<T>(keys) {
                Some(t) => f.insert_batch(&t),
                None => false,
            });
        }
        let other = path - 2 * TYPES;
        let n = keys.len();
        match other {
            0 => typed::<u8>(keys).is_some_and(|t| t.iter().all(|k| f.insert_new(k))),
            1 => typed::<i32>(keys).is_some_and(|t| t.iter().all(|k| f.insert_new(k))),
            2 => keys.iter().all(|k| f.insert_new(k)),
            3 => typed::<i8>(keys).is_some_and(|t| f.insert_batch_new(&t, n)),
            4 => typed::<u32>(keys).is_some_and(|t| f.insert_batch_new(&t, n)),
            5 => typed::<i64>(keys).is_some_and(|t| f.insert_batch_new(&t, n)),
            6 => typed::<u16>(keys).is_some_and(|t| f.extend_keys(t)),
            7 => typed::<isize>(keys).is_some_and(|t| f.extend_keys(t)),
            8 => each(keys, |&k| f.insert_bytes(&le8(k))),
            9 => each(keys, |&k| f.insert(&le8(k))),
            10 => typed::<u32>(keys).is_some_and(|t| each(&t, |&k| f.insert(&Ipv4Addr::from(k)))),
            11 => chars(keys).is_some_and(|t| each(&t, |k| f.insert(k))),
            12 => each(keys, |&k| f.insert(&KeyForm::U64(k))),
            _ => {
                #[cfg(feature = "arrow")]
                if let Some(a) = arrow_array_of(other - INSERT_OTHER.len(), keys) {
                    return f.insert_array(a.as_ref());
                }
                false
            }
        }
    }

    fn query<F: Kind>(f: &F, path: usize, keys: &[u64]) -> Option<Vec<bool>> {
        if path < TYPES {
            return with_int!(path, T => all(&typed::<T>(keys)?, |k| f.contains(k)));
        }
        if path < 2 * TYPES {
            return with_int!(path - TYPES, T => f.contains_batch(&typed::<T>(keys)?));
        }
        let other = path - 2 * TYPES;
        let n = keys.len();
        match other {
            0 => counted(f.count_batch(&typed::<u16>(keys)?), n),
            1 => counted(f.count_batch(&typed::<i64>(keys)?), n),
            2 => f.contains_bitmap(&typed::<u8>(keys)?, n),
            3 => f.contains_bitmap(&typed::<isize>(keys)?, n),
            4 => f.select(&typed::<i32>(keys)?, n),
            5 => f.select(&typed::<usize>(keys)?, n),
            6 => all(keys, |&k| f.contains_bytes(&le8(k))),
            7 => all(keys, |&k| f.contains(&le8(k))),
            8 => all(&typed::<u32>(keys)?, |&k| f.contains(&Ipv4Addr::from(k))),
            9 => all(&chars(keys)?, |k| f.contains(k)),
            10 => all(&bools(keys)?, |k| f.contains(k)),
            11 => all(keys, |&k| f.contains(&KeyForm::U64(k))),
            #[cfg(feature = "arrow")]
            _ => f.contains_array(arrow_array_of(other - QUERY_OTHER.len(), keys)?.as_ref()),
            #[cfg(not(feature = "arrow"))]
            _ => None,
        }
    }
}

/// The keys as `char`s (their code points), if every one is a Unicode scalar value.
fn chars(keys: &[u64]) -> Option<Vec<char>> {
    keys.iter()
        .map(|&k| char::from_u32(u32::try_from(k).ok()?))
        .collect()
}

/// The keys as `bool`s, if every one is 0 or 1.
fn bools(keys: &[u64]) -> Option<Vec<bool>> {
    keys.iter().map(|&k| (k <= 1).then_some(k == 1)).collect()
}

/// 16-byte keys: `u128`, `i128`, their bytes, `Ipv6Addr`, and both batch types.
pub(crate) struct Words128;

impl Group for Words128 {
    type V = u128;
    const NAME: &'static str = "u128 keys";
    const INSERT: &'static [&'static str] = &[
        "insert(&u128)",
        "insert(&i128)",
        "insert(&[u8; 16])",
        "insert(&&u128)",
        "insert_bytes",
        "insert(&Ipv6Addr)",
        "insert_new(&u128)",
        "extend(u128)",
        "insert_batch(&[u128])",
        "insert_batch(&[[u8; 16]])",
        "insert_batch_new(&[u128])",
    ];
    const QUERY: &'static [&'static str] = &[
        "contains(&u128)",
        "contains(&i128)",
        "contains(&[u8; 16])",
        "contains([u8])",
        "contains_bytes",
        "contains(&Ipv6Addr)",
        "contains_batch(&[u128])",
        "contains_batch(&[[u8; 16]])",
        "count_batch(&[u128])",
        "contains_bitmap(&[u128])",
        "select(&[u128])",
    ];
    fn insert<F: Kind>(f: &mut F, path: usize, keys: &[u128]) -> bool {
        let arrays: Vec<[u8; 16]> = keys.iter().map(|k| k.to_le_bytes()).collect();
        match path {
            0 => each(keys, |k| f.insert(k)),
            1 => each(keys, |&k| f.insert(&(k as i128))),
            2 => each(&arrays, |k| f.insert(k)),
            3 => each(keys, |k| f.insert(&k)),
            4 => each(&arrays, |k| f.insert_bytes(k)),
            5 => each(keys, |&k| f.insert(&Ipv6Addr::from(k))),
            6 => keys.iter().all(|k| f.insert_new(k)),
            7 => f.extend_keys(keys.iter().copied()),
            8 => f.insert_batch(keys),
            9 => f.insert_batch(&arrays),
            10 => f.insert_batch_new(keys, keys.len()),
            _ => unreachable!(),
        }
    }
    fn query<F: Kind>(f: &F, path: usize, keys: &[u128]) -> Option<Vec<bool>> {
        let arrays: Vec<[u8; 16]> = keys.iter().map(|k| k.to_le_bytes()).collect();
        match path {
            0 => all(keys, |k| f.contains(k)),
            1 => all(keys, |&k| f.contains(&(k as i128))),
            2 => all(&arrays, |k| f.contains(k)),
            3 => all(&arrays, |k| f.contains(&k[..])),
            4 => all(&arrays, |k| f.contains_bytes(k)),
            5 => all(keys, |&k| f.contains(&Ipv6Addr::from(k))),
            6 => f.contains_batch(keys),
            7 => f.contains_batch(&arrays),
            8 => counted(f.count_batch(keys), keys.len()),
            9 => f.contains_bitmap(keys, keys.len()),
            10 => f.select(keys, keys.len()),
            _ => unreachable!(),
        }
    }
}
