//! Helpers shared by the tests of the format family's kinds: golden files, resealing edited
//! bytes, and the envelope errors every kind's decoder must give.

#![allow(dead_code)] // each test crate uses its own subset

use std::fmt::Debug;
use std::path::PathBuf;

use blockbloom::{BloomFilter, Error};

/// A file under `tests/data/`.
pub fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// Checks `encoded` against the golden file `name` (written first when
/// `BLOCKBLOOM_WRITE_GOLDEN` is set) and returns the stored bytes.
pub fn golden_file(name: &str, encoded: &[u8]) -> Vec<u8> {
    let path = data(name);
    if std::env::var_os("BLOCKBLOOM_WRITE_GOLDEN").is_some() {
        std::fs::write(&path, encoded).unwrap();
    }
    let stored = std::fs::read(&path).unwrap();
    assert!(encoded == stored, "the encoding pinned by {name} changed");
    stored
}

/// Recomputes the checksum of edited bytes (header without its checksum field, then the
/// body), so the edit reaches the decoder's later checks.
pub fn reseal(bytes: &mut [u8]) {
    let mut x = xxhash_rust::xxh3::Xxh3::new();
    x.update(&bytes[..48]);
    x.update(&bytes[56..]);
    let sum = x.digest().to_le_bytes();
    bytes[48..56].copy_from_slice(&sum);
}

/// The envelope's errors, which every kind's `from_bytes` gives the same way: a missing last
/// byte, a trailing byte, a flipped body byte, a plain filter's bytes; and the plain decoder
/// refuses `good` as another kind.
pub fn envelope_errors<T: Debug>(good: &[u8], from_bytes: impl Fn(&[u8]) -> Result<T, Error>) {
    assert!(matches!(
        from_bytes(&good[..good.len() - 1]),
        Err(Error::Truncated { .. })
    ));
    let mut long = good.to_vec();
    long.push(0);
    assert!(matches!(
        from_bytes(&long),
        Err(Error::TrailingBytes { .. })
    ));
    let mut flipped = good.to_vec();
    *flipped.last_mut().unwrap() ^= 1;
    assert!(matches!(
        from_bytes(&flipped),
        Err(Error::ChecksumMismatch { .. })
    ));
    let plain = BloomFilter::with_capacity(10, 0.01).unwrap().to_bytes();
    assert!(matches!(from_bytes(&plain), Err(Error::WrongKind { .. })));
    assert!(matches!(
        BloomFilter::from_bytes(good),
        Err(Error::WrongKind { .. })
    ));
    let mut resealed = good.to_vec();
    reseal(&mut resealed);
    assert!(
        from_bytes(&resealed).is_ok(),
        "reseal changes nothing valid"
    );
}
