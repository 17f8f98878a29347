//! The persisted format (version 1) and the zero-copy [`FilterRef`](crate::FilterRef) view.
//!
//! A filter is a 64-byte little-endian header followed by its blocks, so that in a buffer
//! that starts 64-byte aligned (a memory-mapped file, say) the blocks are aligned too and can
//! be queried in place. `docs/FORMAT.md` specifies it precisely enough to write a reader in
//! another language.
//!
//! | offset | bytes | field |
//! |---:|---:|---|
//! | 0 | 8 | magic `BLKBLOOM` |
//! | 8 | 2 | format version, `u16` (1) |
//! | 10 | 1 | layout id: 1 = 8x64, 2 = 4x128 |
//! | 11 | 1 | probes per key `k` |
//! | 12 | 1 | hash id ([`KeyHash`](crate::KeyHash)): 1 = XXH3-64, seeded, of the key's canonical little-endian bytes; 2 = the same for keys of 4 and 8 bytes, AESH-64 for every other key; 3 = MX32-64 for keys of 4, 8 and 16 bytes, AESH-64 for every other key; 4 = MM64 for those keys, AESH-64 for every other |
//! | 13 | 3 | reserved, zero |
//! | 16 | 8 | hash seed, `u64` |
//! | 24 | 8 | block count, `u64`, in `1..=2^32` |
//! | 32 | 8 | capacity the filter was sized for, `u64` (informational) |
//! | 40 | 8 | target false-positive rate, `f64` bits (`0x7ff8000000000000`, NaN: none) |
//! | 48 | 8 | checksum: XXH3-64 (seed 0) of bytes 0..48, 56..64, then every block |
//! | 56 | 8 | reserved, zero |
//! | 64 | 64 × blocks | blocks, each 8 `u64` words |
//!
//! Decoding never panics and never allocates more than the input justifies: the declared
//! size is checked against the bytes present before anything is allocated, and a reader is
//! consumed in bounded chunks.
//!
//! ```
//! use blockbloom::BloomFilter;
//!
//! let mut f = BloomFilter::with_capacity(10_000, 0.01)?;
//! f.insert_batch(&[1u64, 2, 3]);
//! let bytes = f.to_bytes();
//! let g = BloomFilter::from_bytes(&bytes)?;
//! assert_eq!(f, g);
//! assert!(blockbloom::BloomFilter::from_bytes(&bytes[..100]).is_err());
//! # Ok::<(), blockbloom::Error>(())
//! ```

// The codec (`src/codec/`) defines these once; this module is its public face.
pub use crate::codec::{
    HASH_AESH, HASH_MOREMUR, HASH_MX32, HASH_XXH3, HEADER_BYTES, MAGIC, NO_TARGET_FPR, VERSION,
    kind,
};
