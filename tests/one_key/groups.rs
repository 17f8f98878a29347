// Key groups: one set of keys, every type and path that names them.

use std::borrow::Cow;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::sync::Arc;

use blockbloom::{ByteColumn, Key, KeyForm};

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

/// Integer keys of one width: both integer types of that width, its little-endian bytes and
/// byte array, one more type of the same form (`extra`: `usize`, an IP address, a
/// `KeyForm`), and the batch types of the width where it has them.
macro_rules! word_group {
    ($group:ident, $name:literal, $v:ty, $signed:ty, $n:literal, $extra:expr, $extra_name:literal,
     batch: [$($b:ty),*] $(, batches: $yes:tt)?) => {
        pub(crate) struct $group;

        impl Group for $group {
            type V = $v;
            const NAME: &'static str = $name;
            const INSERT: &'static [&'static str] = &[
                concat!("insert(&", stringify!($v), ")"),
                concat!("insert(&", stringify!($signed), ")"),
                concat!("insert(&[u8; ", $n, "])"),
                concat!("insert(&&", stringify!($v), ")"),
                "insert_bytes",
                concat!("insert(&", $extra_name, ")"),
                concat!("insert_new(&", stringify!($v), ")"),
                concat!("extend(", stringify!($v), ")"),
                $(concat!("insert_batch(&[", stringify!($b), "])"),)*
                $(concat!("insert_batch_new(&[", stringify!($v), "])", $yes),)?
            ];
            const QUERY: &'static [&'static str] = &[
                concat!("contains(&", stringify!($v), ")"),
                concat!("contains(&", stringify!($signed), ")"),
                concat!("contains(&[u8; ", $n, "])"),
                "contains([u8])",
                "contains_bytes",
                concat!("contains(&", $extra_name, ")"),
                $(concat!("contains_batch(&[", stringify!($b), "])"),)*
                $(concat!("count_batch(&[", stringify!($v), "])", $yes),
                concat!("contains_bitmap(&[", stringify!($v), "])"),
                concat!("select(&[", stringify!($v), "])"),)?
            ];
            #[allow(unused_mut, unused_variables)]
            fn insert<F: Kind>(f: &mut F, path: usize, keys: &[$v]) -> bool {
                let extra: fn($v) -> Box<dyn Key> = $extra;
                match path {
                    0 => each(keys, |k| f.insert(k)),
                    1 => each(keys, |&k| f.insert(&(k as $signed))),
                    2 => each(keys, |k| f.insert(&k.to_le_bytes())),
                    3 => each(keys, |k| f.insert(&k)),
                    4 => each(keys, |k| f.insert_bytes(&k.to_le_bytes())),
                    5 => each(keys, |&k| f.insert(&extra(k))),
                    6 => keys.iter().all(|k| f.insert_new(k)),
                    7 => f.extend_keys(keys.iter().copied()),
                    _ => {
                        let mut p = 8;
                        $(
                            if path == p {
                                let typed: Vec<$b> = keys.iter().map(|&k| from_word(k)).collect();
                                return f.insert_batch(&typed);
                            }
                            p += 1;
                        )*
                        $(
                            let _ = $yes;
                            if path == p {
                                return f.insert_batch_new(keys, keys.len());
                            }
                        )?
                        unreachable!()
                    }
                }
            }
            #[allow(unused_mut, unused_variables)]
            fn query<F: Kind>(f: &F, path: usize, keys: &[$v]) -> Option<Vec<bool>> {
                let extra: fn($v) -> Box<dyn Key> = $extra;
                match path {
                    0 => all(keys, |k| f.contains(k)),
                    1 => all(keys, |&k| f.contains(&(k as $signed))),
                    2 => all(keys, |k| f.contains(&k.to_le_bytes())),
                    3 => all(keys, |k| f.contains(&k.to_le_bytes()[..])),
                    4 => all(keys, |k| f.contains_bytes(&k.to_le_bytes())),
                    5 => all(keys, |&k| f.contains(&extra(k))),
                    _ => {
                        let mut p = 6;
                        $(
                            if path == p {
                                let typed: Vec<$b> = keys.iter().map(|&k| from_word(k)).collect();
                                return f.contains_batch(&typed);
                            }
                            p += 1;
                        )*
                        $(
                            let _ = $yes;
                            match path - p {
                                0 => return counted(f.count_batch(keys), keys.len()),
                                1 => return f.contains_bitmap(keys, keys.len()),
                                2 => return f.select(keys, keys.len()),
                                _ => {}
                            }
                        )?
                        unreachable!()
                    }
                }
            }
        }
    };
}

/// A word as one of the batch types of its width (same bits).
trait FromWord<V> {
    fn from_word(v: V) -> Self;
}
macro_rules! from_word {
    ($($v:ty => $b:ty: $f:expr),*) => {$(
        impl FromWord<$v> for $b {
            fn from_word(v: $v) -> $b {
                let f: fn($v) -> $b = $f;
                f(v)
            }
        }
    )*};
}
from_word! {
    u64 => u64: |v| v, u64 => i64: |v| v as i64,
    u32 => u32: |v| v, u32 => i32: |v| v as i32,
    u128 => u128: |v| v, u128 => [u8; 16]: |v| v.to_le_bytes()
}
fn from_word<V, B: FromWord<V>>(v: V) -> B {
    B::from_word(v)
}

word_group!(Words64, "u64 keys", u64, i64, 8, |k| Box::new(k as usize), "usize",
    batch: [u64, i64], batches: "");
word_group!(Words32, "u32 keys", u32, i32, 4, |k| Box::new(Ipv4Addr::from(k)), "Ipv4Addr",
    batch: [u32, i32], batches: "");
word_group!(Words128, "u128 keys", u128, i128, 16, |k| Box::new(Ipv6Addr::from(k)), "Ipv6Addr",
    batch: [u128, [u8; 16]], batches: "");
word_group!(Words16, "u16 keys", u16, i16, 2, |k| Box::new(KeyForm::U16(k)), "KeyForm::U16",
    batch: []);
word_group!(Words8, "u8 keys", u8, i8, 1, |k| Box::new(KeyForm::U8(k)), "KeyForm::U8",
    batch: []);
