//! One key, one answer: every key type, inserted by every path of every filter kind on every
//! tier, is found by every query path of that kind (quickcheck). Before the `Key` trait,
//! `insert(&str)` hashed through `Hash` (with a terminator byte) while the batch, byte and
//! column paths hashed the bytes, so a key inserted one way was missed the other way.
//!
//! Also: what files written before the change answer (a CLI-built file, and a golden file
//! whose string key went through the old `Hash` route).

mod common;

use std::borrow::Cow;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::sync::Arc;

use blockbloom::{
    AtomicBloomFilter, BatchKey, BloomFilter, ByHash, ByteColumn, ClassicBloomFilter,
    CountingBloomFilter, DeletableBloomFilter, FilterRef, Isa, Key, KeyForm, KeySource,
    ScalableBloomFilter, VariableIncrementBloomFilter,
};
use quickcheck::{QuickCheck, TestResult};

// ---------------------------------------------------------------------------------------------
// Filter kinds: what each can insert and query (None / false: the kind has no such method)
// ---------------------------------------------------------------------------------------------

trait Kind: Sized {
    const NAME: &'static str;
    fn make(isa: Isa, n: usize) -> Self;
    fn insert<K: Key + ?Sized>(&mut self, k: &K);
    fn insert_bytes(&mut self, b: &[u8]);
    fn insert_batch<K: BatchKey>(&mut self, keys: &[K]) -> bool;
    fn insert_column(&mut self, _c: &ByteColumn<'_>) -> bool {
        false
    }
    fn insert_new<K: Key + ?Sized>(&mut self, _k: &K) -> bool {
        false
    }
    fn insert_batch_new<Q: KeySource + ?Sized>(&mut self, _q: &Q, _n: usize) -> bool {
        false
    }
    fn extend_keys<K: Key>(&mut self, _keys: impl IntoIterator<Item = K>) -> bool {
        false
    }
    /// Called once after the inserts, before the queries.
    fn finish(&mut self) {}
    fn contains<K: Key + ?Sized>(&self, k: &K) -> bool;
    fn contains_bytes(&self, b: &[u8]) -> bool;
    fn contains_batch<K: BatchKey>(&self, keys: &[K]) -> Option<Vec<bool>>;
    fn count_batch<K: BatchKey>(&self, keys: &[K]) -> Option<usize>;
    fn contains_column(&self, _c: &ByteColumn<'_>) -> Option<Vec<bool>> {
        None
    }
    fn contains_bitmap<Q: KeySource + ?Sized>(&self, _q: &Q, _n: usize) -> Option<Vec<bool>> {
        None
    }
    fn select<Q: KeySource + ?Sized>(&self, _q: &Q, _n: usize) -> Option<Vec<bool>> {
        None
    }
}

fn plain(isa: Isa, n: usize) -> BloomFilter {
    BloomFilter::builder()
        .capacity(n as u64)
        .fpr(0.01)
        .seed(0x5eed)
        .isa(isa)
        .build()
        .unwrap()
}

fn same<T>(t: &T) -> &T {
    t
}

/// The queries every `Filter<S>` has (plain, view, atomic, counting).
macro_rules! filter_queries {
    ($f:path) => {
        fn contains<K: Key + ?Sized>(&self, k: &K) -> bool {
            let f = $f(self);
            f.contains(k) && f.contains_hash(f.hash(k))
        }
        fn contains_bytes(&self, b: &[u8]) -> bool {
            $f(self).contains_bytes(b)
        }
        fn contains_batch<K: BatchKey>(&self, keys: &[K]) -> Option<Vec<bool>> {
            let mut out = vec![false; keys.len()];
            $f(self).contains_batch(keys, &mut out);
            Some(out)
        }
        fn count_batch<K: BatchKey>(&self, keys: &[K]) -> Option<usize> {
            Some($f(self).count_batch(keys))
        }
        fn contains_column(&self, c: &ByteColumn<'_>) -> Option<Vec<bool>> {
            let mut out = vec![false; c.len()];
            $f(self).contains_column(c, &mut out);
            Some(out)
        }
        fn contains_bitmap<Q: KeySource + ?Sized>(&self, q: &Q, n: usize) -> Option<Vec<bool>> {
            let mut bits = vec![0u64; n.div_ceil(64)];
            $f(self).contains_bitmap(q, &mut bits);
            Some((0..n).map(|i| bits[i / 64] >> (i % 64) & 1 == 1).collect())
        }
        fn select<Q: KeySource + ?Sized>(&self, q: &Q, n: usize) -> Option<Vec<bool>> {
            let mut picked = Vec::new();
            $f(self).select(q, &mut picked);
            let mut out = vec![false; n];
            for i in picked {
                out[i as usize] = true;
            }
            Some(out)
        }
    };
}

/// The plain and the atomic filter take every insert path (the atomic one through `&self`).
macro_rules! every_insert {
    ($t:ty, $name:literal, $make:expr) => {
        impl Kind for $t {
            const NAME: &'static str = $name;
            fn make(isa: Isa, n: usize) -> Self {
                $make(plain(isa, n))
            }
            fn insert<K: Key + ?Sized>(&mut self, k: &K) {
                <$t>::insert(self, k)
            }
            fn insert_bytes(&mut self, b: &[u8]) {
                <$t>::insert_bytes(self, b)
            }
            fn insert_batch<K: BatchKey>(&mut self, keys: &[K]) -> bool {
                <$t>::insert_batch(self, keys);
                true
            }
            fn insert_column(&mut self, c: &ByteColumn<'_>) -> bool {
                <$t>::insert_column(self, c);
                true
            }
            fn insert_new<K: Key + ?Sized>(&mut self, k: &K) -> bool {
                <$t>::insert_new(self, k);
                true
            }
            fn insert_batch_new<Q: KeySource + ?Sized>(&mut self, q: &Q, n: usize) -> bool {
                <$t>::insert_batch_new(self, q, &mut vec![false; n]);
                true
            }
            fn extend_keys<K: Key>(&mut self, keys: impl IntoIterator<Item = K>) -> bool {
                extend_keys(self, keys)
            }
            filter_queries!(same);
        }
    };
}

every_insert!(BloomFilter, "BloomFilter", |f| f);
every_insert!(
    AtomicBloomFilter,
    "AtomicBloomFilter",
    BloomFilter::into_atomic
);

/// `Extend` exists on the plain filter only.
trait ExtendKeys {
    fn extend_keys<K: Key>(&mut self, keys: impl IntoIterator<Item = K>) -> bool;
}
impl ExtendKeys for BloomFilter {
    fn extend_keys<K: Key>(&mut self, keys: impl IntoIterator<Item = K>) -> bool {
        self.extend(keys);
        true
    }
}
impl ExtendKeys for AtomicBloomFilter {
    fn extend_keys<K: Key>(&mut self, _keys: impl IntoIterator<Item = K>) -> bool {
        false
    }
}
fn extend_keys<F: ExtendKeys, K: Key>(f: &mut F, keys: impl IntoIterator<Item = K>) -> bool {
    f.extend_keys(keys)
}

/// A plain filter queried through a zero-copy view of its encoding.
struct View {
    filter: BloomFilter,
    lines: Vec<Line>,
}

#[repr(C, align(64))]
#[derive(Clone, Copy)]
struct Line([u8; 64]);

impl View {
    fn view(&self) -> FilterRef<'_> {
        let len = self.filter.encoded_len();
        // SAFETY: `lines` is a live allocation of `lines.len() * 64` initialised bytes, and
        // `finish` made it at least `len` long.
        let bytes = unsafe { std::slice::from_raw_parts(self.lines.as_ptr().cast::<u8>(), len) };
        FilterRef::from_bytes(bytes).unwrap()
    }
}

impl Kind for View {
    const NAME: &'static str = "FilterRef";
    fn make(isa: Isa, n: usize) -> Self {
        View {
            filter: plain(isa, n),
            lines: Vec::new(),
        }
    }
    fn insert<K: Key + ?Sized>(&mut self, k: &K) {
        self.filter.insert(k)
    }
    fn insert_bytes(&mut self, b: &[u8]) {
        self.filter.insert_bytes(b)
    }
    fn insert_batch<K: BatchKey>(&mut self, keys: &[K]) -> bool {
        self.filter.insert_batch(keys);
        true
    }
    fn finish(&mut self) {
        let bytes = self.filter.to_bytes();
        self.lines = vec![Line([0; 64]); bytes.len().div_ceil(64)];
        for (line, chunk) in self.lines.iter_mut().zip(bytes.chunks(64)) {
            line.0[..chunk.len()].copy_from_slice(chunk);
        }
    }
    filter_queries!(View::view);
}

impl Kind for CountingBloomFilter {
    const NAME: &'static str = "CountingBloomFilter";
    fn make(isa: Isa, n: usize) -> Self {
        CountingBloomFilter::builder()
            .capacity(n as u64)
            .fpr(0.01)
            .isa(isa)
            .build()
            .unwrap()
    }
    fn insert<K: Key + ?Sized>(&mut self, k: &K) {
        CountingBloomFilter::insert(self, k)
    }
    fn insert_bytes(&mut self, b: &[u8]) {
        CountingBloomFilter::insert_bytes(self, b)
    }
    fn insert_batch<K: BatchKey>(&mut self, keys: &[K]) -> bool {
        CountingBloomFilter::insert_batch(self, keys);
        true
    }
    filter_queries!(same);
}

/// The queries of the kinds outside `Filter<S>`: single key, bytes, and batches.
macro_rules! family_queries {
    () => {
        fn contains<K: Key + ?Sized>(&self, k: &K) -> bool {
            Self::contains(self, k)
        }
        fn contains_bytes(&self, b: &[u8]) -> bool {
            Self::contains_bytes(self, b)
        }
        fn contains_batch<K: BatchKey>(&self, keys: &[K]) -> Option<Vec<bool>> {
            let mut out = vec![false; keys.len()];
            Self::contains_batch(self, keys, &mut out);
            Some(out)
        }
        fn count_batch<K: BatchKey>(&self, keys: &[K]) -> Option<usize> {
            Some(Self::count_batch(self, keys))
        }
    };
}

impl Kind for DeletableBloomFilter {
    const NAME: &'static str = "DeletableBloomFilter";
    fn make(isa: Isa, n: usize) -> Self {
        DeletableBloomFilter::from_filter(plain(isa, n), 64).unwrap()
    }
    fn insert<K: Key + ?Sized>(&mut self, k: &K) {
        DeletableBloomFilter::insert(self, k)
    }
    fn insert_bytes(&mut self, b: &[u8]) {
        DeletableBloomFilter::insert_bytes(self, b)
    }
    fn insert_batch<K: BatchKey>(&mut self, keys: &[K]) -> bool {
        DeletableBloomFilter::insert_batch(self, keys);
        true
    }
    family_queries!();
}

impl Kind for ScalableBloomFilter {
    const NAME: &'static str = "ScalableBloomFilter";
    fn make(isa: Isa, n: usize) -> Self {
        // A small first stage, so the keys spread over several stages.
        ScalableBloomFilter::builder()
            .initial_capacity((n as u64 / 4).max(1))
            .fpr(0.01)
            .isa(isa)
            .build()
            .unwrap()
    }
    fn insert<K: Key + ?Sized>(&mut self, k: &K) {
        ScalableBloomFilter::insert(self, k).unwrap();
    }
    fn insert_bytes(&mut self, b: &[u8]) {
        ScalableBloomFilter::insert_bytes(self, b).unwrap();
    }
    fn insert_batch<K: BatchKey>(&mut self, keys: &[K]) -> bool {
        ScalableBloomFilter::insert_batch(self, keys).unwrap();
        true
    }
    family_queries!();
}

impl Kind for ClassicBloomFilter {
    const NAME: &'static str = "ClassicBloomFilter";
    fn make(isa: Isa, n: usize) -> Self {
        ClassicBloomFilter::with_capacity(n.max(1) as u64, 0.01)
            .unwrap()
            .with_isa(isa)
            .unwrap()
    }
    fn insert<K: Key + ?Sized>(&mut self, k: &K) {
        ClassicBloomFilter::insert(self, k)
    }
    fn insert_bytes(&mut self, b: &[u8]) {
        ClassicBloomFilter::insert_bytes(self, b)
    }
    fn insert_batch<K: BatchKey>(&mut self, keys: &[K]) -> bool {
        ClassicBloomFilter::insert_batch(self, keys);
        true
    }
    family_queries!();
}

/// No kernel and no batches: single keys and bytes only (the tier does not apply).
impl Kind for VariableIncrementBloomFilter {
    const NAME: &'static str = "VariableIncrementBloomFilter";
    fn make(_isa: Isa, n: usize) -> Self {
        VariableIncrementBloomFilter::with_capacity(n.max(1) as u64, 0.01).unwrap()
    }
    fn insert<K: Key + ?Sized>(&mut self, k: &K) {
        VariableIncrementBloomFilter::insert(self, k)
    }
    fn insert_bytes(&mut self, b: &[u8]) {
        VariableIncrementBloomFilter::insert_bytes(self, b)
    }
    fn insert_batch<K: BatchKey>(&mut self, _keys: &[K]) -> bool {
        false
    }
    fn contains<K: Key + ?Sized>(&self, k: &K) -> bool {
        VariableIncrementBloomFilter::contains(self, k)
    }
    fn contains_bytes(&self, b: &[u8]) -> bool {
        VariableIncrementBloomFilter::contains_bytes(self, b)
    }
    fn contains_batch<K: BatchKey>(&self, _keys: &[K]) -> Option<Vec<bool>> {
        None
    }
    fn count_batch<K: BatchKey>(&self, _keys: &[K]) -> Option<usize> {
        None
    }
}

// ---------------------------------------------------------------------------------------------
// Key groups: one set of keys, every type and path that names them
// ---------------------------------------------------------------------------------------------

/// A set of keys and every typed way to insert and query them. `insert` returns false where
/// the kind lacks the path; `query` gives `None` there, else one answer per key (a count is
/// spread as "all true" when it equals the key count).
trait Group {
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

struct Strings;

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
        struct $group;

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

// ---------------------------------------------------------------------------------------------
// The property
// ---------------------------------------------------------------------------------------------

/// Every (tier, insert path, query path) of kind `F` over group `G`'s keys: the first miss,
/// and how many combinations ran.
fn check<G: Group, F: Kind>(tiers: &[Isa], keys: &[G::V]) -> Result<usize, String> {
    let mut ran = 0;
    for &isa in tiers {
        for (ip, insert_name) in G::INSERT.iter().enumerate() {
            let mut f = F::make(isa, keys.len());
            if !G::insert(&mut f, ip, keys) {
                continue;
            }
            f.finish();
            for (qp, query_name) in G::QUERY.iter().enumerate() {
                let Some(answers) = G::query(&f, qp, keys) else {
                    continue;
                };
                ran += 1;
                if let Some(i) = answers.iter().position(|&a| !a) {
                    return Err(format!(
                        "{} on {isa}, {}: inserted by {insert_name}, {query_name} misses key \
                         {i} ({:?})",
                        F::NAME,
                        G::NAME,
                        keys[i]
                    ));
                }
            }
        }
    }
    Ok(ran)
}

fn check_kinds<G: Group>(tiers: &[Isa], keys: &[G::V]) -> Result<usize, String> {
    Ok(check::<G, BloomFilter>(tiers, keys)?
        + check::<G, View>(tiers, keys)?
        + check::<G, AtomicBloomFilter>(tiers, keys)?
        + check::<G, CountingBloomFilter>(tiers, keys)?
        + check::<G, DeletableBloomFilter>(tiers, keys)?
        + check::<G, ScalableBloomFilter>(tiers, keys)?
        + check::<G, ClassicBloomFilter>(tiers, keys)?
        + check::<G, VariableIncrementBloomFilter>(&tiers[..1], keys)?)
}

#[allow(clippy::too_many_arguments)]
fn one_key_one_answer(
    strings: Vec<String>,
    w64: Vec<u64>,
    w32: Vec<u32>,
    w128: Vec<u128>,
    w16: Vec<u16>,
    w8: Vec<u8>,
) -> TestResult {
    let tiers = common::tiers();
    let run = || -> Result<usize, String> {
        Ok(check_kinds::<Strings>(&tiers, &strings)?
            + check_kinds::<Words64>(&tiers, &w64)?
            + check_kinds::<Words32>(&tiers, &w32)?
            + check_kinds::<Words128>(&tiers, &w128)?
            + check_kinds::<Words16>(&tiers, &w16)?
            + check_kinds::<Words8>(&tiers, &w8)?)
    };
    match run() {
        Ok(_) => TestResult::passed(),
        Err(e) => TestResult::error(e),
    }
}

/// The plain filter has every path: with keys, each group runs all of its insert paths
/// against all of its query paths on every tier (so a path that stopped running would show).
#[test]
fn the_plain_filter_runs_every_combination() {
    let tiers = common::tiers();
    let strings: Vec<String> = (0..300).map(|i| format!("user:{i}")).collect();
    let w64: Vec<u64> = (0..300).map(common::splitmix64).collect();
    let full = |insert: usize, query: usize| tiers.len() * insert * query;
    assert_eq!(
        check::<Strings, BloomFilter>(&tiers, &strings),
        Ok(full(Strings::INSERT.len(), Strings::QUERY.len()))
    );
    assert_eq!(
        check::<Words64, BloomFilter>(&tiers, &w64),
        Ok(full(Words64::INSERT.len(), Words64::QUERY.len()))
    );
    let w8: Vec<u8> = (0..=255).collect();
    assert_eq!(
        check::<Words8, BloomFilter>(&tiers, &w8),
        Ok(full(Words8::INSERT.len(), Words8::QUERY.len()))
    );
}

#[test]
fn every_key_type_path_tier_and_kind_finds_every_key() {
    QuickCheck::new()
        .tests(20)
        .quickcheck(one_key_one_answer as fn(_, _, _, _, _, _) -> TestResult);
}

// ---------------------------------------------------------------------------------------------
// Files written before the `Key` trait
// ---------------------------------------------------------------------------------------------

/// `tests/data/cli-built-v1.bin`: `blockbloom build --fpr 0.01 --seed 0` of these lines, run
/// before the `Key` trait. The CLI hashed each line's bytes then as now.
fn cli_members() -> Vec<String> {
    (0..3000)
        .map(|i| format!("member-{i}"))
        .chain(["ключ-é", "", "tab\tkey"].map(String::from))
        .collect()
}

#[test]
fn a_cli_built_file_finds_every_member_by_every_method() {
    let bytes = std::fs::read(common::data("cli-built-v1.bin")).unwrap();
    let f = BloomFilter::from_bytes(&bytes).unwrap();
    let members = cli_members();
    let tiers = common::tiers();
    let mut view = View {
        filter: f.clone(),
        lines: Vec::new(),
    };
    view.finish();
    for (q, name) in Strings::QUERY.iter().enumerate() {
        let answers = Strings::query(&f, q, &members).unwrap();
        let missed = answers.iter().filter(|&&a| !a).count();
        assert_eq!(
            missed, 0,
            "{name} misses {missed} of the CLI-built file's members"
        );
        assert_eq!(
            Strings::query(&view, q, &members),
            Some(answers),
            "{name}, view"
        );
        for &isa in &tiers {
            // The same bits on this tier: an empty filter of the same shape, united with it.
            let mut on = BloomFilter::builder()
                .capacity(f.capacity())
                .size_in_bytes(f.size_in_bytes() as u64)
                .layout(f.layout())
                .probes(f.probes())
                .seed(f.seed())
                .isa(isa)
                .build()
                .unwrap();
            on.union(&f).unwrap();
            assert_eq!(
                Strings::query(&on, q, &members).unwrap(),
                vec![true; members.len()]
            );
        }
    }
}

/// A file whose string key went in through 0.1's single-key `insert("golden")` (the `Hash`
/// route, with its `0xff` terminator): its integer keys answer on every path, and the string
/// key answers through `ByHash`, the route that wrote it.
#[test]
fn an_old_single_key_string_answers_through_by_hash() {
    let bytes = std::fs::read(common::data("v1-8x64.bin")).unwrap();
    let f = BloomFilter::from_bytes(&bytes).unwrap();
    assert!(f.contains(&ByHash("golden")));
    assert!(f.contains(&ByHash(String::from("golden"))));
    let ints: Vec<u64> = (0..100).collect();
    for (q, name) in Words64::QUERY.iter().enumerate() {
        assert_eq!(
            Words64::query(&f, q, &ints),
            Some(vec![true; 100]),
            "{name}"
        );
    }
}
