//! Kernels and their run-time dispatch.
//!
//! Three layers, each knowing only the one below it:
//!
//! * **Primitives** ([`Lanes`]): one zero-sized token per SIMD tier (`portable`,
//!   `x86_64/avx2`, `x86_64/avx512`, `aarch64/neon`) whose methods are the tier's instructions on eight 64-bit
//!   lanes (one block, or eight keys' hashes) and eight 32-bit lanes (one split block): load,
//!   store, multiply, shift, and/or/xor, test. A token exists only once the CPU is known to
//!   support its tier, so its safe methods may use the tier's intrinsics.
//! * **One algorithm** ([`lanes`], [`pipeline`], [`ops`]): the lane hash, the probe pattern
//!   and the chunked prefetching pipeline are written once, generic over `Lanes`; the scalar
//!   reference ([`scalar`]) is written once, generic over the same block operations. A block
//!   operation ([`BlockOp`], [`SplitOp`]) says what one key does to its block (insert, query,
//!   atomic insert, ...); the filter kinds above this layer bring their own.
//! * **Dispatch** ([`Kernel`]): a [`Batch`] is handed to [`Kernel::run`], which picks the
//!   tier once per batch and calls that tier's `#[target_feature]` entry point, generic over
//!   the batch. Everything below it is `#[inline(always)]`, so the operation, the pattern and
//!   the intrinsics compile into one function with the tier's features, and adding an
//!   operation or a key source adds no dispatch entry.
//!
//! A [`Kernel`] can only be obtained through [`Kernel::get`], which checks the CPU first; that
//! check is the safety proof every entry point relies on. A filter stores its
//! `&'static Kernel`.

use crate::error::Error;
use crate::isa::Isa;
use crate::layout::{Block, Layout};

#[cfg(target_arch = "aarch64")]
mod aarch64;
// Byte strings of 4 to 16 bytes and 16-byte keys in lanes: the x86-64 tiers' (NEON and
// portable hash them one at a time).
#[cfg(target_arch = "x86_64")]
pub(crate) mod bytes;
#[cfg(target_arch = "x86_64")]
pub(crate) mod key16;
pub(crate) mod keys;
pub(crate) mod lanes;
pub(crate) mod one_key;
pub(crate) mod ops;
pub(crate) mod pipeline;
mod portable;
pub(crate) mod scalar;
#[cfg(target_arch = "x86_64")]
mod x86_64;

pub(crate) use keys::Keys;
pub(crate) use lanes::Lanes;
pub(crate) use one_key::OneKey;
pub(crate) use ops::{
    BURST, BlockBatch, BlockOp, Burst, HalfProbes, Insert, InsertNew, Probes, Query, Shape,
};
pub use pipeline::MAX_PREFETCH_DEPTH;
pub(crate) use pipeline::{Sink, Takes, chunking, prefetch, prefetch_depth};

/// Work that runs on one tier: the scalar reference, or a SIMD tier's lanes. Implemented by
/// the batch kinds ([`BlockBatch`], [`SplitBatch`], [`HashBatch`]); [`Kernel::run`] picks the
/// tier.
pub(crate) trait Batch {
    /// Runs on the scalar reference.
    fn scalar(self);
    /// Runs on a SIMD tier. Called inside the tier's `#[target_feature]` entry point, so
    /// everything it inlines compiles with the tier's instructions.
    fn lanes<L: Lanes>(self, l: L);
}

/// A tier this CPU was checked to support. Obtainable only through [`Kernel::get`].
pub(crate) struct Kernel {
    isa: Isa,
}

impl core::fmt::Debug for Kernel {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Kernel({})", self.isa)
    }
}

static SCALAR: Kernel = Kernel { isa: Isa::Scalar };
static PORTABLE: Kernel = Kernel { isa: Isa::Portable };
static AVX2: Kernel = Kernel { isa: Isa::Avx2 };
static AVX512: Kernel = Kernel { isa: Isa::Avx512 };
static NEON: Kernel = Kernel { isa: Isa::Neon };

impl Kernel {
    /// The kernel of `isa`, if this CPU supports it.
    pub fn get(isa: Isa) -> Result<&'static Kernel, Error> {
        isa.require()?;
        Ok(match isa {
            Isa::Scalar => &SCALAR,
            Isa::Portable => &PORTABLE,
            Isa::Avx2 => &AVX2,
            Isa::Avx512 => &AVX512,
            Isa::Neon => &NEON,
        })
    }

    /// The active tier's kernel, or the best supported one if `BLOCKBLOOM_ISA` is invalid (for
    /// free functions that have no `Result` to report through).
    pub fn fallback_to_best() -> &'static Kernel {
        Kernel::get(Isa::active().unwrap_or_else(|_| Isa::detect())).unwrap_or(&SCALAR)
    }

    pub fn isa(&self) -> Isa {
        self.isa
    }

    /// Runs `batch` on this tier: one branch per batch.
    #[inline]
    pub fn run<B: Batch>(&self, batch: B) {
        match self.isa {
            Isa::Scalar => batch.scalar(),
            Isa::Portable => portable::run(batch),
            // SAFETY: `self` came from `Kernel::get`, which checked that the CPU supports the
            // tier.
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => unsafe { x86_64::avx2::run(batch) },
            // SAFETY: as above.
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => unsafe { x86_64::avx512::run(batch) },
            #[cfg(not(target_arch = "x86_64"))]
            Isa::Avx2 | Isa::Avx512 => unreachable!("Kernel::get rejects x86 tiers elsewhere"),
            // SAFETY: as above.
            #[cfg(target_arch = "aarch64")]
            Isa::Neon => unsafe { aarch64::neon::run(batch) },
            #[cfg(not(target_arch = "aarch64"))]
            Isa::Neon => unreachable!("Kernel::get rejects the NEON tier elsewhere"),
        }
    }

    /// The single-key probe of a filter of `layout` and `rounds` probe rounds on this tier:
    /// chosen once, when the filter is made ([`one_key`]).
    pub fn one_key(&self, layout: Layout, rounds: usize) -> OneKey {
        let table: &'static one_key::OneKeyTable = match self.isa {
            Isa::Scalar => &one_key::SCALAR,
            Isa::Portable => &portable::ONE_KEY,
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => &x86_64::avx2::ONE_KEY,
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => &x86_64::avx512::ONE_KEY,
            #[cfg(not(target_arch = "x86_64"))]
            Isa::Avx2 | Isa::Avx512 => unreachable!("Kernel::get rejects x86 tiers elsewhere"),
            #[cfg(target_arch = "aarch64")]
            Isa::Neon => &aarch64::neon::ONE_KEY,
            #[cfg(not(target_arch = "aarch64"))]
            Isa::Neon => unreachable!("Kernel::get rejects the NEON tier elsewhere"),
        };
        assert!(
            (1..=(crate::layout::MAX_PROBES / layout.sectors()) as usize).contains(&rounds),
            "{rounds} rounds in {layout:?}"
        );
        // SAFETY: `self` came from `Kernel::get`, which checked that the CPU supports the
        // tier.
        unsafe { OneKey::new(&table[one_key::slot(layout)][rounds - 1]) }
    }

    /// Applies `op` to the block of every key (answers into `sink`).
    ///
    /// Generic and inlined, so the whole batch (every tier's pipeline) is compiled wherever it
    /// is instantiated: call it from a function that is not generic, or every crate that
    /// instantiates the caller compiles the batch again (a generic front-end hands its keys,
    /// as [`Keys`], to a non-generic body).
    ///
    /// # Panics
    /// If the op's blocks disagree with `shape`, or `sink` holds a slice of another length
    /// than `keys`.
    #[inline]
    pub fn blocks<O: BlockOp>(&self, shape: &Shape, keys: Keys<'_>, op: O, sink: Sink<'_>) {
        self.run(BlockBatch::new(shape, keys, op, sink))
    }

    /// Sets the probes of every key.
    pub fn insert(&self, shape: &Shape, blocks: &mut [Block], keys: Keys<'_>) {
        self.blocks(shape, keys, Insert(blocks), Sink::Discard)
    }

    /// Whether every probe of each key is set.
    pub fn query(&self, shape: &Shape, blocks: &[Block], keys: Keys<'_>, sink: Sink<'_>) {
        self.blocks(shape, keys, Query(blocks), sink)
    }

    /// Hashes `keys[start..start + out.len()]` into `out` on this tier (hashes are copied).
    pub fn hash_keys(&self, flip: u64, keys: Keys<'_>, start: usize, out: &mut [u64]) {
        let end = start + out.len();
        self.run(HashBatch {
            flip,
            keys: keys.slice(start, end),
            out,
        })
    }

    pub fn hash_u64(&self, flip: u64, keys: &[u64], out: &mut [u64]) {
        assert_eq!(
            keys.len(),
            out.len(),
            "output slice length must equal key count"
        );
        self.hash_keys(flip, Keys::U64(keys), 0, out)
    }
}

/// Hashes a batch of keys into `out` (same length).
pub(crate) struct HashBatch<'k, 'o> {
    pub flip: u64,
    pub keys: Keys<'k>,
    pub out: &'o mut [u64],
}

impl Batch for HashBatch<'_, '_> {
    fn scalar(self) {
        self.keys.hash_scalar(self.flip, self.out)
    }

    #[inline(always)]
    fn lanes<L: Lanes>(self, l: L) {
        self.keys.hash_lanes(l, self.flip, self.out)
    }
}

/// Hashes a batch of `u64` keys with the active kernel (SIMD lanes where the CPU has them).
/// Equal, bit for bit, to [`hash_u64`](crate::hashing::hash_u64) on each key.
///
/// # Panics
/// If `out.len() != keys.len()`.
///
/// ```
/// let keys = [1u64, 2, 3];
/// let mut out = [0u64; 3];
/// blockbloom::hash::hash_u64_batch(&keys, 9, &mut out);
/// assert_eq!(out[2], blockbloom::hash::hash_u64(3, 9));
/// ```
pub fn hash_u64_batch(keys: &[u64], seed: u64, out: &mut [u64]) {
    Kernel::fallback_to_best().hash_u64(crate::hashing::seed_flip(seed), keys, out);
}

/// Hashes a batch of byte-string keys: keys of 4 to 16 bytes eight at a time in AVX-512
/// lanes where the CPU has them and the keys come in runs of one length class, the rest one
/// at a time. Equal to [`hash_bytes`](crate::hashing::hash_bytes) on each key, so the hashes can
/// go to [`contains_hash_batch`](crate::BloomFilter::contains_hash_batch) and be kept.
///
/// # Panics
/// If `out.len() != keys.len()`.
///
/// ```
/// let keys: [&[u8]; 3] = [b"10.0.0.1", b"2001:db8::1", b"x"];
/// let mut out = [0u64; 3];
/// blockbloom::hash::hash_bytes_batch(&keys, 5, &mut out);
/// assert_eq!(out[1], blockbloom::hash::hash_bytes(b"2001:db8::1", 5));
/// ```
pub fn hash_bytes_batch(keys: &[&[u8]], seed: u64, out: &mut [u64]) {
    assert_eq!(
        keys.len(),
        out.len(),
        "output slice length must equal key count"
    );
    let keys = Keys::Bytes(keys::ByteKeys::Slices(keys));
    Kernel::fallback_to_best().hash_keys(crate::hashing::seed_flip(seed), keys, 0, out);
}
