//! Kernels and their run-time dispatch, in layers, each using only the ones below it (the
//! layering test, `tests/layering`, checks the order). Under them all lie the SIMD primitives
//! (`crate::simd`): one zero-sized token per SIMD tier (`portable`, `avx2`, `avx512`, `neon`)
//! implements [`Lanes`], the tier's instructions on eight 64-bit lanes (a block, or eight keys'
//! hashes) and eight 32-bit lanes (a split block), and the facts the algorithms choose by. A
//! token exists only once the CPU is known to support its tier, so its safe methods may use
//! the tier's intrinsics. No algorithm lives there.
//!
//! 1. [`shapes`]: the shapes of keys a batch takes ([`Keys`]).
//! 2. [`hash`]: the batch hashes, one module per family, written once over the primitives.
//! 3. [`plan`]: the hash plan, the only place a hash is chosen (a filter's hash x its keys'
//!    shape -> the routine).
//! 4. [`probe`]: entries and patterns, the block operations ([`BlockOp`]), the chunked
//!    prefetching pipeline and the scalar reference.
//! 5. [`one_key`]: single keys and bursts of `u64` keys, through per-filter entry tables.
//! 6. This module: dispatch. A [`Batch`] is handed to [`Kernel::run`], which picks the tier
//!    once per batch and calls that tier's `#[target_feature]` entry point, generic over the
//!    batch. Everything below it is `#[inline(always)]`, so the operation, the pattern and
//!    the intrinsics compile into one function with the tier's features, and adding an
//!    operation or a key shape adds no dispatch entry.
//!
//! A [`Kernel`] can only be obtained through [`Kernel::get`], which checks the CPU first; that
//! check is the safety proof every entry point relies on. A filter stores its
//! `&'static Kernel`.

use crate::error::Error;
use crate::isa::Isa;
use crate::layout::{Block, Layout};
use crate::simd::{Batch, Lanes};

pub(crate) mod hash;
pub(crate) mod one_key;
pub(crate) mod plan;
pub(crate) mod probe;
pub(crate) mod shapes;

pub(crate) use one_key::OneKey;
pub(crate) use probe::block::{
    BlockOp, HalfProbes, Insert, InsertNew, Probes, Query, Shape, Sink, Takes,
};
pub(crate) use probe::burst::{BURST, Burst};
pub use probe::pipeline::MAX_PREFETCH_DEPTH;
pub(crate) use probe::pipeline::{BlockBatch, chunking, prefetch, prefetch_depth};
pub(crate) use shapes::Keys;

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
            Isa::Portable => batch.lanes(crate::simd::portable::Portable),
            // SAFETY: `self` came from `Kernel::get`, which checked that the CPU supports the
            // tier.
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => unsafe { entry::avx2(batch) },
            // SAFETY: as above.
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => unsafe { entry::avx512(batch) },
            #[cfg(not(target_arch = "x86_64"))]
            Isa::Avx2 | Isa::Avx512 => unreachable!("Kernel::get rejects x86 tiers elsewhere"),
            // SAFETY: as above.
            #[cfg(target_arch = "aarch64")]
            Isa::Neon => unsafe { entry::neon(batch) },
            #[cfg(not(target_arch = "aarch64"))]
            Isa::Neon => unreachable!("Kernel::get rejects the NEON tier elsewhere"),
        }
    }

    /// The single-key probe of a filter of `layout` and `rounds` probe rounds on this tier:
    /// chosen once, when the filter is made ([`one_key`]).
    pub fn one_key(&self, layout: Layout, rounds: usize) -> OneKey {
        let table: &'static one_key::OneKeyTable = match self.isa {
            Isa::Scalar => &one_key::SCALAR,
            Isa::Portable => &one_key::portable::ONE_KEY,
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => &one_key::avx2::ONE_KEY,
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => &one_key::avx512::ONE_KEY,
            #[cfg(not(target_arch = "x86_64"))]
            Isa::Avx2 | Isa::Avx512 => unreachable!("Kernel::get rejects x86 tiers elsewhere"),
            #[cfg(target_arch = "aarch64")]
            Isa::Neon => &one_key::neon::ONE_KEY,
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

/// The tiers' entry points: a batch compiled with the tier's features, its token made inside.
mod entry {
    use super::Batch;
    #[cfg(target_arch = "aarch64")]
    use crate::simd::neon::Neon;
    #[cfg(target_arch = "x86_64")]
    use crate::simd::{avx2::Avx2, avx512::Avx512};

    /// Runs `batch` on the AVX2 tier.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn avx2<B: Batch>(batch: B) {
        // SAFETY: the caller guarantees AVX2.
        batch.lanes(unsafe { Avx2::new_unchecked() })
    }

    /// Runs `batch` on the AVX-512 tier, compiled for AVX-512F and AVX2, not DQ: with DQ,
    /// LLVM turns the probe's 32-bit products into `vpmullq` (see the tier's file).
    ///
    /// # Safety
    /// The CPU must support AVX-512 F and DQ, and AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,avx512f")]
    pub(super) unsafe fn avx512<B: Batch>(batch: B) {
        // SAFETY: the caller guarantees the features.
        batch.lanes(unsafe { Avx512::new_unchecked() })
    }

    /// Runs `batch` on the NEON tier.
    ///
    /// # Safety
    /// The CPU must support NEON.
    #[cfg(target_arch = "aarch64")]
    #[target_feature(enable = "neon")]
    pub(super) unsafe fn neon<B: Batch>(batch: B) {
        // SAFETY: the caller guarantees NEON.
        batch.lanes(unsafe { Neon::new_unchecked() })
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
    let keys = Keys::Bytes(shapes::ByteKeys::Slices(keys));
    Kernel::fallback_to_best().hash_keys(crate::hashing::seed_flip(seed), keys, 0, out);
}
