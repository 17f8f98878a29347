//! Helpers shared by the test files: the kernel tiers to compare, one set of deterministic
//! key generators, and for the format family's kinds golden files, resealing edited bytes and
//! the envelope errors every kind's decoder must give.

#![allow(dead_code)] // each test crate uses its own subset

use std::cell::Cell;
use std::fmt::Debug;
use std::ops::Range;
use std::path::PathBuf;

use blockbloom::{BloomFilter, Error, Isa};

// ---------------------------------------------------------------------------------------------
// Kernel tiers
// ---------------------------------------------------------------------------------------------

/// Every tier this CPU supports, slowest first (`Scalar` first: the reference).
///
/// With `BLOCKBLOOM_EXPECT_ALL_TIERS` set, panics unless every tier of `Isa::ALL` that exists
/// on this `target_arch` is supported, so CI on a full CPU cannot silently compare fewer
/// tiers. Prints the tiers once per test thread.
pub fn tiers() -> Vec<Isa> {
    let tiers = Isa::supported();
    if std::env::var_os("BLOCKBLOOM_EXPECT_ALL_TIERS").is_some() {
        let missing = missing_tiers(&tiers);
        assert!(
            missing.is_empty(),
            "BLOCKBLOOM_EXPECT_ALL_TIERS is set but this CPU lacks {missing:?} (supported: {:?})",
            names(&tiers)
        );
    }
    thread_local!(static PRINTED: Cell<bool> = const { Cell::new(false) });
    if !PRINTED.replace(true) {
        let thread = std::thread::current();
        let test = thread.name().unwrap_or("?");
        eprintln!("{test}: tiers {:?}", names(&tiers));
    }
    tiers
}

/// The names of the tiers of `Isa::ALL` that exist on this target but not in `supported`.
pub fn missing_tiers(supported: &[Isa]) -> Vec<&'static str> {
    Isa::ALL
        .into_iter()
        .filter(|&isa| exists_here(isa) && !supported.contains(&isa))
        .map(Isa::name)
        .collect()
}

/// Whether `isa` can exist on this target. By name, not by variant, so this compiles whether
/// or not an architecture's variant (`Isa::Neon`) is declared yet.
fn exists_here(isa: Isa) -> bool {
    match isa.name() {
        "scalar" | "portable" => true,
        "avx2" | "avx512" => cfg!(target_arch = "x86_64"),
        "neon" => cfg!(target_arch = "aarch64"),
        // A new tier must be placed here, or the guard would silently skip it.
        other => panic!("tests/common: say on which target_arch the tier {other:?} exists"),
    }
}

fn names(tiers: &[Isa]) -> Vec<&'static str> {
    tiers.iter().map(|i| i.name()).collect()
}

// ---------------------------------------------------------------------------------------------
// Keys
// ---------------------------------------------------------------------------------------------

/// SplitMix64's increment, the golden ratio in 64 bits.
pub const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;

/// SplitMix64's output for state `x`: `x + GOLDEN` through two multiply-xorshift rounds.
/// A bijection, so distinct inputs give distinct keys.
pub fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(GOLDEN);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The SplitMix64 stream from `seed`: output `i` is [`key_at`]`(seed, i)`.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        let out = splitmix64(self.0);
        self.0 = self.0.wrapping_add(GOLDEN);
        out
    }
}

impl Iterator for SplitMix64 {
    type Item = u64;

    fn next(&mut self) -> Option<u64> {
        Some(self.next_u64())
    }
}

/// Output `i` of the stream from `seed`, without running the stream. Distinct `i` (below
/// 2^64) give distinct keys.
pub fn key_at(seed: u64, i: u64) -> u64 {
    splitmix64(seed.wrapping_add(i.wrapping_mul(GOLDEN)))
}

/// Five standard deviations of a binomial count with mean `mean`, plus a little slack for
/// tiny means: how far a false-positive count may stray from its expectation.
pub fn bound(mean: f64) -> f64 {
    5.0 * mean.sqrt() + 5.0
}

/// The first `n` outputs of the stream from `seed`.
pub fn keys(seed: u64, n: usize) -> Vec<u64> {
    SplitMix64::new(seed).take(n).collect()
}

/// Outputs `range` of the stream from `seed`: `keys_in(s, 0..n) == keys(s, n)`, and
/// consecutive ranges continue one stream.
pub fn keys_in(seed: u64, range: Range<u64>) -> Vec<u64> {
    range.map(|i| key_at(seed, i)).collect()
}

/// `n` distinct keys `splitmix64(i ^ seed.rotate_left(32))`: another indexing of the same
/// mixer, kept because the Bloomier tests' measured rates were checked with it.
pub fn keys_xor_indexed(seed: u64, n: usize) -> Vec<u64> {
    (0..n as u64)
        .map(|i| splitmix64(i ^ seed.rotate_left(32)))
        .collect()
}

/// `n` keys with the top bit clear, for filling a filter; [`non_members`] have it set, so the
/// two sets are disjoint by construction and every query hit is a false positive.
pub fn members(seed: u64, n: usize) -> Vec<u64> {
    SplitMix64::new(seed).take(n).map(|k| k >> 1).collect()
}

/// `n` keys with the top bit set, from a stream other than `members(seed, _)`'s.
pub fn non_members(seed: u64, n: usize) -> Vec<u64> {
    SplitMix64::new(seed ^ 0x5555)
        .take(n)
        .map(|k| k | 1 << 63)
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Golden files and the format envelope
// ---------------------------------------------------------------------------------------------

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
