//! `Serialize`/`Deserialize` (feature `serde`): the payload is `to_bytes`, round trips through
//! a binary format (bincode) and a text one (JSON) give equal filters, and a corrupt or
//! foreign payload fails with the message of the error `from_bytes` gives.

use blockbloom::parquet::SplitBlockFilter;
use blockbloom::{
    AtomicBloomFilter, BloomFilter, BloomierFilter, CountingBloomFilter, DeletableBloomFilter,
    FilterRef, ScalableBloomFilter,
};
use serde::Serialize;
use serde::de::DeserializeOwned;

fn bincode_bytes<T: Serialize>(v: &T) -> Vec<u8> {
    bincode::serde::encode_to_vec(v, bincode::config::standard()).unwrap()
}

fn from_bincode<T: DeserializeOwned>(b: &[u8]) -> Result<T, String> {
    bincode::serde::decode_from_slice::<T, _>(b, bincode::config::standard())
        .map(|(v, read)| {
            assert_eq!(read, b.len());
            v
        })
        .map_err(|e| e.to_string())
}

fn from_json<T: DeserializeOwned>(s: &str) -> Result<T, String> {
    serde_json::from_str(s).map_err(|e| e.to_string())
}

/// Round trips through both formats; the bincode payload is the length-prefixed encoding,
/// and a flipped byte or a cut payload fails as `from_bytes` does.
fn check<T>(value: &T, to_bytes: impl Fn(&T) -> Vec<u8>, from_bytes: impl Fn(&[u8]) -> String)
where
    T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug,
{
    let encoded = to_bytes(value);
    let bin = bincode_bytes(value);
    assert!(
        bin.ends_with(&encoded),
        "bincode holds the encoding as it is"
    );
    assert_eq!(&from_bincode::<T>(&bin).unwrap(), value);
    let json = serde_json::to_string(value).unwrap();
    assert_eq!(&from_json::<T>(&json).unwrap(), value);

    // Corrupt: a flipped byte in the middle of the body.
    let mut bad = encoded.clone();
    let i = bad.len() / 2;
    bad[i] ^= 0x40;
    let want = from_bytes(&bad);
    let bad_bin = bincode_bytes(&serde_bytes_of(&bad));
    let got = from_bincode::<T>(&bad_bin).unwrap_err();
    assert!(
        got.contains(&want),
        "bincode: {got:?} should carry {want:?}"
    );
    let got = from_json::<T>(&serde_json::to_string(&bad).unwrap()).unwrap_err();
    assert!(got.contains(&want), "JSON: {got:?} should carry {want:?}");

    // Foreign: eight bytes that are no filter.
    let want = from_bytes(b"not ours");
    let got = from_json::<T>("[110,111,116,32,111,117,114,115]").unwrap_err();
    assert!(got.contains(&want), "JSON: {got:?} should carry {want:?}");
    // Not bytes at all.
    assert!(from_json::<T>("\"BLKBLOOM\"").is_err());
    assert!(from_json::<T>("[1, 2, 300]").is_err());
}

/// The payload as serde sees a byte string (bincode writes `&[u8]` through `serialize_bytes`
/// only via this wrapper; a `Vec<u8>` would be a sequence, which is the same bytes there).
fn serde_bytes_of(b: &[u8]) -> Bytes<'_> {
    Bytes(b)
}

struct Bytes<'a>(&'a [u8]);

impl Serialize for Bytes<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(self.0)
    }
}

fn err<T>(r: Result<T, blockbloom::Error>) -> String {
    match r {
        Ok(_) => panic!("the payload should not decode"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn plain_atomic_and_borrowed() {
    let mut f = BloomFilter::with_capacity(2000, 0.01).unwrap();
    f.insert_batch(&(0..2000u64).collect::<Vec<_>>());
    check(&f, BloomFilter::to_bytes, |b| {
        err(BloomFilter::from_bytes(b))
    });

    let a = f.clone().into_atomic();
    let back: AtomicBloomFilter = from_bincode(&bincode_bytes(&a)).unwrap();
    assert_eq!(back.snapshot(), f);
    assert!(from_json::<AtomicBloomFilter>("[1,2,3]").is_err());

    // A view serializes as the filter it views (the header is 64 bytes, so a block-aligned
    // buffer puts the blocks on block boundaries).
    let bytes = f.to_bytes();
    let mut aligned = vec![blockbloom::Block::default(); bytes.len().div_ceil(64)];
    let buf = block_bytes(&mut aligned);
    buf[..bytes.len()].copy_from_slice(&bytes);
    let view = FilterRef::from_bytes(&buf[..bytes.len()]).unwrap();
    assert_eq!(bincode_bytes(&view), bincode_bytes(&f));
}

fn block_bytes(blocks: &mut [blockbloom::Block]) -> &mut [u8] {
    let len = std::mem::size_of_val(blocks);
    // SAFETY: a `Block` is 64 bytes of plain `u64`s (no padding, every bit pattern valid),
    // and the returned slice borrows `blocks` mutably for its whole life.
    unsafe { std::slice::from_raw_parts_mut(blocks.as_mut_ptr().cast::<u8>(), len) }
}

#[test]
fn family_kinds() {
    let keys: Vec<u64> = (0..1000).collect();
    let mut c = CountingBloomFilter::with_capacity(1000, 0.01).unwrap();
    c.insert_batch(&keys);
    check(&c, CountingBloomFilter::to_bytes, |b| {
        err(CountingBloomFilter::from_bytes(b))
    });

    let mut d = DeletableBloomFilter::with_capacity(1000, 0.01).unwrap();
    for k in &keys {
        d.insert(k);
    }
    check(&d, DeletableBloomFilter::to_bytes, |b| {
        err(DeletableBloomFilter::from_bytes(b))
    });

    let mut s = ScalableBloomFilter::new(100, 0.01).unwrap();
    for k in &keys {
        s.insert(k).unwrap();
    }
    check(&s, ScalableBloomFilter::to_bytes, |b| {
        err(ScalableBloomFilter::from_bytes(b))
    });

    let pairs: Vec<(u64, u64)> = keys.iter().map(|&k| (k, k % 7)).collect();
    let m = BloomierFilter::build(&pairs, 3, 8).unwrap();
    check(&m, BloomierFilter::to_bytes, |b| {
        err(BloomierFilter::from_bytes(b))
    });
}

#[test]
fn split_block_filter_as_its_bitset() {
    let mut f = SplitBlockFilter::new_with_ndv_fpp(1000, 0.01).unwrap();
    for v in 0..1000i64 {
        f.insert(&v);
    }
    let bin = bincode_bytes(&f);
    assert!(bin.ends_with(f.as_bitset()));
    let back: SplitBlockFilter = from_bincode(&bin).unwrap();
    assert_eq!(back.as_bitset(), f.as_bitset());
    let json = serde_json::to_string(&f).unwrap();
    let back: SplitBlockFilter = from_json(&json).unwrap();
    assert_eq!(back.as_bitset(), f.as_bitset());
    // A bitset whose length is no whole number of blocks is refused as `from_bitset` does.
    let want = err(SplitBlockFilter::from_bitset(&[0u8; 33]));
    let got = from_json::<SplitBlockFilter>(&serde_json::to_string(&vec![0u8; 33]).unwrap());
    assert!(got.unwrap_err().contains(&want));
}
