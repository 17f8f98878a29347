// Filter kinds: what each can insert and query (None / false: the kind has no such method),
// and the configurations (hash id, layout) each accepts.

use blockbloom::layout::Layout;
use blockbloom::{
    AtomicBloomFilter, BatchKey, BloomFilter, ByteColumn, ClassicBloomFilter, CountingBloomFilter,
    DeletableBloomFilter, FilterRef, Isa, Key, KeyHash, KeySource, ScalableBloomFilter,
    VariableIncrementBloomFilter,
};

/// A filter's configuration: its hash id and, for the blocked kinds that take one, its layout
/// (`None`: the kind's own, for the kinds that take neither).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Config {
    pub hash: KeyHash,
    pub layout: Option<Layout>,
}

impl std::fmt::Display for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.layout {
            Some(l) => write!(f, "hash id {}, {l:?}", self.hash.id()),
            None => write!(f, "hash id {}, its own layout", self.hash.id()),
        }
    }
}

pub(crate) const HASHES: [KeyHash; 3] = [KeyHash::Xxh3, KeyHash::Aesh, KeyHash::Mx32];

/// Every hash id with every layout: what the plain filter (and its view, its atomic twin and
/// the deletable filter over it) accepts.
pub(crate) fn every_config() -> Vec<Config> {
    HASHES
        .iter()
        .flat_map(|&hash| {
            Layout::ALL.map(|l| Config {
                hash,
                layout: Some(l),
            })
        })
        .collect()
}

/// A kind that takes no configuration: hash id 1 and its own layout.
fn own() -> Vec<Config> {
    vec![Config {
        hash: KeyHash::Xxh3,
        layout: None,
    }]
}

pub(crate) trait Kind: Sized {
    const NAME: &'static str;
    /// The configurations this kind accepts.
    fn configs() -> Vec<Config>;
    fn make(isa: Isa, n: usize, config: Config) -> Self;
    /// Whether two filters hold the same state (the same bits, counters and stages): then
    /// every query answers alike on both.
    fn same(&self, other: &Self) -> bool;
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
    #[cfg(feature = "arrow")]
    fn insert_array(&mut self, _a: &dyn arrow_array::Array) -> bool {
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
    #[cfg(feature = "arrow")]
    fn contains_array(&self, _a: &dyn arrow_array::Array) -> Option<Vec<bool>> {
        None
    }
}

fn plain(isa: Isa, n: usize, config: Config) -> BloomFilter {
    let mut b = BloomFilter::builder()
        .capacity(n as u64)
        .fpr(0.01)
        .seed(0x5eed)
        .key_hash(config.hash)
        .isa(isa);
    if let Some(layout) = config.layout {
        b = b.layout(layout);
    }
    b.build().unwrap()
}

fn same<T>(t: &T) -> &T {
    t
}

/// An answer array's values (a null answers false: no test key is null).
#[cfg(feature = "arrow")]
fn answers(a: Result<arrow_array::BooleanArray, blockbloom::Error>) -> Option<Vec<bool>> {
    use arrow_array::Array;
    let a = a.unwrap();
    Some((0..a.len()).map(|i| a.is_valid(i) && a.value(i)).collect())
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
        #[cfg(feature = "arrow")]
        fn contains_array(&self, a: &dyn arrow_array::Array) -> Option<Vec<bool>> {
            answers($f(self).contains_array(a))
        }
    };
}

/// The plain and the atomic filter take every insert path (the atomic one through `&self`).
macro_rules! every_insert {
    ($t:ty, $name:literal, $make:expr, $same:expr) => {
        impl Kind for $t {
            const NAME: &'static str = $name;
            fn configs() -> Vec<Config> {
                every_config()
            }
            fn make(isa: Isa, n: usize, config: Config) -> Self {
                $make(plain(isa, n, config))
            }
            fn same(&self, other: &Self) -> bool {
                let same: fn(&Self, &Self) -> bool = $same;
                same(self, other)
            }
            #[cfg(feature = "arrow")]
            fn insert_array(&mut self, a: &dyn arrow_array::Array) -> bool {
                <$t>::insert_array(self, a).unwrap();
                true
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

every_insert!(BloomFilter, "BloomFilter", |f| f, |a, b| a == b);
every_insert!(
    AtomicBloomFilter,
    "AtomicBloomFilter",
    BloomFilter::into_atomic,
    |a, b| a.snapshot() == b.snapshot()
);

/// `Extend` exists on the plain filter only.
pub(crate) trait ExtendKeys {
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
pub(crate) fn extend_keys<F: ExtendKeys, K: Key>(
    f: &mut F,
    keys: impl IntoIterator<Item = K>,
) -> bool {
    f.extend_keys(keys)
}

/// A plain filter queried through a zero-copy view of its encoding.
pub(crate) struct View {
    pub(crate) filter: BloomFilter,
    pub(crate) lines: Vec<Line>,
}

#[repr(C, align(64))]
#[derive(Clone, Copy)]
pub(crate) struct Line([u8; 64]);

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
    fn configs() -> Vec<Config> {
        every_config()
    }
    fn make(isa: Isa, n: usize, config: Config) -> Self {
        View {
            filter: plain(isa, n, config),
            lines: Vec::new(),
        }
    }
    fn same(&self, other: &Self) -> bool {
        self.filter == other.filter
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
    /// Hash id 1 only; the two layouts with a counter per bit (not `Sectors8x32`).
    fn configs() -> Vec<Config> {
        [Layout::Sectors8x64, Layout::Sectors4x128]
            .map(|l| Config {
                hash: KeyHash::Xxh3,
                layout: Some(l),
            })
            .to_vec()
    }
    fn make(isa: Isa, n: usize, config: Config) -> Self {
        CountingBloomFilter::builder()
            .capacity(n as u64)
            .fpr(0.01)
            .layout(config.layout.unwrap())
            .isa(isa)
            .build()
            .unwrap()
    }
    fn same(&self, other: &Self) -> bool {
        self == other
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
    fn configs() -> Vec<Config> {
        every_config()
    }
    fn make(isa: Isa, n: usize, config: Config) -> Self {
        DeletableBloomFilter::from_filter(plain(isa, n, config), 64).unwrap()
    }
    fn same(&self, other: &Self) -> bool {
        self == other
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
    fn configs() -> Vec<Config> {
        own()
    }
    fn same(&self, other: &Self) -> bool {
        self == other
    }
    fn make(isa: Isa, n: usize, _config: Config) -> Self {
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
    fn configs() -> Vec<Config> {
        own()
    }
    fn same(&self, other: &Self) -> bool {
        self == other
    }
    fn make(isa: Isa, n: usize, _config: Config) -> Self {
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
    fn configs() -> Vec<Config> {
        own()
    }
    fn same(&self, other: &Self) -> bool {
        self == other
    }
    fn make(_isa: Isa, n: usize, _config: Config) -> Self {
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
