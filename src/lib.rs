//! # blockbloom
//!
//! A cache-line-blocked Bloom filter that answers "have I seen this key?" at memory speed.
//! Each key sets `k` bits in exactly one 64-byte block, so a query costs at most one cache
//! miss; batches hash their keys in SIMD lanes, prefetch their blocks, and test them with the
//! fastest kernel the CPU has (scalar, portable `wide` lanes, AVX2, AVX-512), picked once per
//! process. Sizing uses the exact model of the layout, so the measured false-positive rate
//! is at or below the target.
//!
//! Single-key calls (`contains`, `insert`, `insert_new`) are built for a caller that asks one
//! key per packet or per row: each filter holds its tier's probe for its layout, chosen when
//! it is made, so a call is the key's hash, one block index and a branch-free block test in
//! the tier's lanes, with nothing decided per key.
//!
//! ```
//! use blockbloom::BloomFilter;
//!
//! let mut f = BloomFilter::with_capacity(1_000_000, 0.01)?;
//! f.insert_batch(&[1u64, 2, 3]);
//! f.insert(&"row-group-17");
//! assert!(f.contains(&2u64) && f.contains(&"row-group-17"));
//! println!("kernel: {}, {} bytes", f.isa(), f.size_in_bytes());
//! # Ok::<(), blockbloom::Error>(())
//! ```
//!
//! # Guides
//!
//! The long-form documentation is in [`guide`], one module per topic, with its examples run as
//! doctests: [`guide::keys`] (start there), [`guide::many_writers`], [`guide::files`],
//! [`guide::parquet`], [`guide::family`], [`guide::sizing`], [`guide::kernels`],
//! [`guide::memory`], [`guide::threat_model`] and [`guide::applications`].
//!
//! # Keys
//!
//! One key, one hash: every method (single-key, batch, bytes, [`ByteColumn`], Arrow, and the
//! Python and CLI front ends) reads a key through [`Key`], whose [`KeyForm`] is the key's
//! canonical bytes: an integer of up to 64 bits is its 64-bit value (sign-extended if
//! signed, zero-extended if not), a 128-bit one its 16 bytes, a string's or byte string's
//! bytes exactly. So `insert("user:17")`, `insert_batch(&["user:17"])`,
//! `insert_bytes(b"user:17")` and a line `user:17` of a CLI-built file are one key, found by
//! `contains(&String::from("user:17"))` or any other query on every filter kind and tier; and
//! `5u8`, `5i32`, `5u64`, an Arrow `Int16` 5, SQL's `5` in `blockbloom-datafusion` and
//! Python's `5` are one key (`f.contains(&5u8)` finds `f.insert_batch(&[5i64])`).
//! Types the crate does not know go through [`ByHash`] (their [`Hash`](core::hash::Hash)
//! stream), or implement [`Key`] with the form of the field that identifies them.
//!
//! ```
//! use blockbloom::{BloomFilter, ByHash};
//!
//! let mut f = BloomFilter::with_capacity(1000, 0.01)?;
//! f.insert("user:17");
//! f.insert_batch(&["user:18"]);
//! let mut out = [false; 2];
//! f.contains_batch(&["user:17", "user:18"], &mut out);
//! assert_eq!(out, [true, true]);
//! assert!(f.contains_bytes(b"user:18") && f.contains(&String::from("user:17")));
//! f.insert(&ByHash((17u32, "eu-west"))); // a tuple: its `Hash` stream, said at the call site
//! assert!(f.contains(&ByHash((17u32, "eu-west"))));
//! # Ok::<(), blockbloom::Error>(())
//! ```
//!
//! **Files written before** load and answer unchanged but for two kinds of keys (the format
//! itself did not change; how a Rust value becomes key bytes did, `CHANGELOG.md`):
//!
//! * an integer of 8, 16 or 32 bits inserted from Rust (a `u32`, `i32`, `Ipv4Addr`, `char`,
//!   ..., or an Arrow `Int32`/`UInt32` array) was its own width's bytes: ask for it with
//!   `contains_bytes(&x.to_le_bytes())`, `x` at that width (DataFusion, Python and the CLI
//!   always hashed integers as their 64-bit values);
//! * a `str`, `String`, byte slice or array inserted one at a time by the `insert` of before
//!   the `Key` trait went through `Hash` (which appends `0xff` to a `str` and writes a length
//!   before a slice): query it with `contains(&ByHash(key))`.
//!
//! ```
//! # let mut old = blockbloom::BloomFilter::with_capacity(100, 0.01)?;
//! # old.insert_bytes(&7u32.to_le_bytes()); // how `insert(&7u32)` wrote a key before
//! assert!(old.contains_bytes(&7u32.to_le_bytes())); // a 32-bit key of a file written before
//! # Ok::<(), blockbloom::Error>(())
//! ```
//!
//! Force a kernel with `BLOCKBLOOM_ISA=scalar|portable|avx2|avx512` (an unsupported choice is
//! an error, never a silent fallback) or per filter with [`Builder::isa`].
//!
//! To send a filter over a network, `compressed` (feature `compress`) sizes it for its
//! compressed size (Mitzenmacher's compressed Bloom filters) and encodes it with zstd.
//!
//! The hash is XXH3-64 with a seed ([`hash`]); it is stable across platforms, kernels and
//! compile flags, so a filter's bits mean the same everywhere.
//!
//! [`CountingBloomFilter`] puts small saturating counters on the same blocks and probes, for
//! sets that also remove keys and for estimates of a key's multiplicity.
//! [`BloomierFilter`] is a static key-to-value map on the same hash (a binary fuse xor table):
//! small values for every key it was built from, `None` for other keys at a chosen rate.
//! Built on the same engine: [`DeletableBloomFilter`] (remove keys whose bits no other key
//! shares) and [`ScalableBloomFilter`] (grows with the keys under a fixed false-positive target).
//!
//! # Cargo features
//!
//! | feature | default | what it adds | what it pulls in |
//! | :--- | :---: | :--- | :--- |
//! | `std` | yes | run-time kernel detection, `read_from`/`write_to`, `Error::Io`, `keyed()` | — |
//! | `parallel` | yes | `BloomFilter::par_insert_batch`, `ParallelBuild` | rayon |
//! | `compress` | no | `compressed`: filters sized and sent as zstd frames (`with_transfer_budget`, `to_compressed_bytes`) | zstd (C sources) |
//! | `serde` | no | `Serialize`/`Deserialize` for every filter kind, as `to_bytes` | serde (no std needed) |
//! | `parquet` | no | `parquet::read_column_filter`, `SplitBlockFilter::from_sbbf` | parquet |
//! | `arrow-60`, `arrow-59` | no | `insert_array`/`contains_array` on Arrow arrays of that Arrow major (`arrow` is `arrow-60`) | arrow-array, -buffer, -schema of that major |
//!
//! Enable the Arrow major the rest of the dependency graph is on: `arrow-59` under DataFusion
//! 55 (`blockbloom-datafusion` does), `arrow-60` beside `parquet` 60. Each is a dependency of
//! its own major, so cargo cannot resolve the library to another arrow than yours; with both on,
//! the methods take arrow 60's arrays.
//!
//! Every combination builds; CI tests no features, the defaults and all of them. Without
//! `std` the crate is `#![no_std]` with `alloc`: the kernel tier is the best the build's
//! target features allow (no run-time detection), the sizing maths come from `libm`, and the
//! `std::io` readers and writers, [`Error`]'s `Io` variant and `keyed()` are absent
//! (`to_bytes`/`from_bytes` remain).
//!
//! * **`no_std`.** With `default-features = false` the crate is `#![no_std]` with `alloc`: every
//!   filter kind, batch, encoding (`to_bytes`/`from_bytes`) and the sizing models. The kernel
//!   tier is the best one the build enables (`-C target-feature=+avx2`, `target-cpu=native`; NEON
//!   on aarch64), since detecting the CPU at run time needs the OS. The sizing maths use the
//!   `libm` crate there, whose last bits can differ from the platform's, so at an exact tie a
//!   `no_std` build may size a filter one block differently; files are read and queried
//!   identically. CI builds it for `aarch64-unknown-none`. `x86_64-unknown-none` is a
//!   soft-float target on which LLVM aborts compiling the AVX kernels, and `thumbv7em-none-eabihf`
//!   lacks the 64-bit atomics the atomic filter needs; neither is supported.
//! * **serde.** A filter serializes as exactly its `to_bytes` (one byte string: header,
//!   body, checksum) and deserializes through `from_bytes`, so a corrupt or foreign payload
//!   fails with the same error, as the format's error message. `AtomicBloomFilter` goes through
//!   a snapshot, `FilterRef` serializes as the filter it views, and the Parquet
//!   `SplitBlockFilter` as its bitset. `tests/serde.rs` round-trips every kind through bincode and
//!   JSON.
//! * **MSRV** 1.89 (the AVX-512 intrinsics were stabilised then); CI checks the library with
//!   that toolchain. `Error`, `Isa`, `Layout`, `CounterBits` and `ParallelBuild` are
//!   `#[non_exhaustive]`.
//! * **Changes and format stability**:
//!   [`CHANGELOG.md`](https://github.com/blockbloom/blockbloom/blob/main/CHANGELOG.md) says
//!   which changes bump the file format's version (none within a version changes a byte;
//!   `tests/data/` holds a golden file per kind).
//!
//! # Threads
//!
//! Every filter type is `Send` and `Sync` (each type's docs say so, and `tests/threads.rs` fails
//! to compile otherwise). The owned filters change only through `&mut self`;
//! [`AtomicBloomFilter`] takes inserts through `&self` from any number of threads, and through
//! per-thread [`AtomicWriter`] handles ([`guide::many_writers`]).

#![cfg_attr(not(feature = "std"), no_std)]
#![deny(unsafe_op_in_unsafe_fn)]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs)]

extern crate alloc;
// The unit tests use the standard library even when the crate does not.
#[cfg(all(test, not(feature = "std")))]
#[macro_use]
extern crate std;

// One Arrow major serves the Arrow API, under the names `arrow_array`, `arrow_buffer` and
// `arrow_schema`: 60 (the dependencies' own names) if its feature is on, else 59.
#[cfg(all(feature = "arrow-59", not(feature = "arrow-60")))]
extern crate arrow_array_59 as arrow_array;
#[cfg(all(feature = "arrow-59", not(feature = "arrow-60")))]
extern crate arrow_buffer_59 as arrow_buffer;
#[cfg(all(feature = "arrow-59", not(feature = "arrow-60")))]
extern crate arrow_schema_59 as arrow_schema;

#[cfg(any(feature = "arrow-59", feature = "arrow-60"))]
mod arrow;
mod codec;
mod cpu;
mod error;
mod family;
mod filter;
pub mod format;
pub mod guide;
mod hashing;
mod io;
mod isa;
mod kernel;
mod key;
pub mod layout;
mod limits;
#[cfg(any(not(feature = "std"), test))]
mod math;
pub mod memory;
pub mod parquet;
#[cfg(feature = "serde")]
mod serialize;
mod simd;
pub mod sizing;

#[cfg(feature = "compress")]
pub use family::compressed;
pub use family::{bloomier, classic, deletable, scalable, variable};

pub use bloomier::{BloomierBuilder, BloomierFilter};
pub use deletable::DeletableBloomFilter;
#[cfg(feature = "std")]
pub use error::IoSource;
pub use error::{Error, SizedBy};
pub use family::classic::ClassicBloomFilter;
pub use family::variable::VariableIncrementBloomFilter;
#[cfg(feature = "parallel")]
pub use filter::ParallelBuild;
pub use filter::{AtomicBloomFilter, AtomicWriter, Striped};
pub use filter::{
    BatchKey, Bits, BloomFilter, Builder, ByteColumn, Filter, FilterRef, KeySource, Offset, Storage,
};
pub use filter::{CounterBits, Counters, CountingBloomFilter, CountingBuilder};
pub use hashing::KeyHash;
pub use isa::Isa;
pub use kernel::MAX_PREFETCH_DEPTH;
pub use key::{ByHash, HashInto, Key, KeyForm};
pub use layout::sync::set_yield_hook;
pub use layout::{Block, Layout};
pub use scalable::{ScalableBloomFilter, ScalableBuilder};

/// The stable key hashes: XXH3-64, AESH-64, MX32-64 and MM64, with a seed.
///
/// Every key becomes one 64-bit hash, and the filter derives everything else from it, so these
/// functions *are* the persisted format's hashes: they give the same bits on every platform,
/// kernel and compile flag. Which one a filter uses is its [`KeyHash`], the format's hash id:
/// hash id 1 ([`KeyHash::Xxh3`]) is XXH3-64 of a key's canonical bytes ([`KeyForm`]); hash
/// id 2 ([`KeyHash::Aesh`]) is the same for keys of 4 and 8
/// bytes and [`hash_bytes_aes`](hash::hash_bytes_aes) for every other key; hash id 3
/// ([`KeyHash::Mx32`], the default for new filters) is
/// [`hash_bytes_mx32`](hash::hash_bytes_mx32) (MX32-64) for keys of 4, 8 and 16 bytes and
/// AESH-64 for the others. XXH3-64 of a key's
/// canonical bytes is: an integer's 64-bit value's 8 little-endian bytes, at every width
/// (which the batch kernels widen and hash in SIMD lanes), a string's or byte string's bytes
/// exactly; [`ByHash`] keys hash the canonical byte stream their `Hash` impl
/// writes ([`StableHasher`](hash::StableHasher)). Each equals
/// `xxhash_rust::xxh3::xxh3_64_with_seed` of those bytes.
///
/// ```
/// use blockbloom::hash;
///
/// let seed = 7;
/// assert_eq!(
///     hash::hash_u64(42, seed),
///     xxhash_rust::xxh3::xxh3_64_with_seed(&42u64.to_le_bytes(), seed)
/// );
/// assert_eq!(hash::hash_key(&42u64, seed), hash::hash_u64(42, seed));
/// assert_eq!(hash::hash_key("abc", seed), hash::hash_bytes(b"abc", seed));
/// assert_eq!(hash::hash_bytes(b"abc", seed), xxhash_rust::xxh3::xxh3_64_with_seed(b"abc", seed));
/// ```
///
/// [`hash_bytes_aes`](hash::hash_bytes_aes) and its batch form are the second stable
/// byte-string hash, AESH-64, built from AES rounds (defined on the function): the same bits
/// on every machine, faster than XXH3 where the CPU has AES instructions.
/// [`hash_u64_mx32`](hash::hash_u64_mx32) and its siblings are the third, MX32-64, hash id 3's
/// hash of keys of 4, 8 and 16 bytes, built from 32-by-32-bit multiplies (defined in
/// `docs/FORMAT.md`). [`hash_u64_moremur`](hash::hash_u64_moremur) and its siblings are the
/// fourth, MM64, hash id 4's, a multiply-xorshift hash of two 64-bit multiplies.
/// [`KeyForm::hash_with`] gives any key's hash under any [`KeyHash`].
///
/// (The scalar hashes live in the bottom layer; the batch forms run on the kernel tiers, a
/// layer up, and meet here.)
pub mod hash {
    pub use crate::filter::keys::hash_key_batch;
    pub use crate::hashing::aes::{hash_bytes_aes, hash_bytes_aes_batch};
    pub use crate::hashing::moremur::{
        hash_bytes_moremur, hash_u32_moremur, hash_u64_moremur, hash_u128_moremur,
    };
    pub use crate::hashing::mx32::{hash_bytes_mx32, hash_u32_mx32, hash_u64_mx32, hash_u128_mx32};
    pub use crate::hashing::{KeyHash, StableHasher, hash_bytes, hash_u32, hash_u64};
    pub use crate::kernel::{hash_bytes_batch, hash_u64_batch};
    pub use crate::key::hash_key;
}

/// The README's Rust example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
