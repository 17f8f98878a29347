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

use alloc::string::ToString;
use alloc::vec::Vec;

use core::str::FromStr;
#[cfg(feature = "std")]
use std::sync::OnceLock;

use crate::error::Error;
use crate::isa::Isa;
use crate::layout::{AtomicBlock, Block, Layout};

#[cfg(target_arch = "aarch64")]
mod aarch64;
pub(crate) mod classic;
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
pub(crate) mod split;
#[cfg(target_arch = "x86_64")]
mod x86_64;

pub(crate) use keys::Keys;
pub(crate) use lanes::Lanes;
pub(crate) use one_key::OneKey;
#[cfg(feature = "parallel")]
pub(crate) use ops::AtomicInsert;
#[cfg(feature = "parallel")]
pub(crate) use ops::InsertWindow;
pub(crate) use ops::{
    AtomicQuery, BURST, BlockBatch, BlockOp, Burst, HeldInsert, Insert, InsertNew, LockedInsert,
    Probes, Query, Shape,
};
pub use pipeline::MAX_PREFETCH_DEPTH;
pub(crate) use pipeline::{Sink, Takes, chunking, prefetch, prefetch_depth};
pub(crate) use split::{SplitBatch, SplitOp, SplitProbes};

impl Isa {
    /// Whether this CPU can run the tier (checked once per process, then cached).
    ///
    /// ```
    /// assert!(blockbloom::Isa::Portable.is_supported());
    /// ```
    pub fn is_supported(self) -> bool {
        match self {
            Isa::Scalar | Isa::Portable => true,
            Isa::Avx2 => cpu().avx2,
            Isa::Avx512 => cpu().avx512,
            Isa::Neon => cpu().neon,
        }
    }

    /// The fastest tier this CPU supports.
    ///
    /// ```
    /// let best = blockbloom::Isa::detect();
    /// assert!(blockbloom::Isa::ALL.iter().all(|&i| i <= best || !i.is_supported()));
    /// ```
    pub fn detect() -> Isa {
        best(Isa::is_supported)
    }

    /// Every tier this CPU supports, slowest first.
    ///
    /// ```
    /// let tiers = blockbloom::Isa::supported();
    /// assert_eq!(&tiers[..2], &[blockbloom::Isa::Scalar, blockbloom::Isa::Portable]);
    /// ```
    pub fn supported() -> Vec<Isa> {
        Isa::ALL.into_iter().filter(|i| i.is_supported()).collect()
    }

    /// The tier new filters use: `BLOCKBLOOM_ISA` if set, else [`Isa::detect`]. Read once per
    /// process.
    ///
    /// # Errors
    /// [`Error::UnknownIsa`] if the variable names no tier, [`Error::UnsupportedIsa`] if it
    /// names one this CPU lacks. There is no silent fallback.
    ///
    /// ```
    /// use blockbloom::Isa;
    ///
    /// for isa in Isa::supported() {          // slowest first; always starts Scalar, Portable
    ///     assert!(isa.is_supported() && isa.require() == Ok(isa));
    ///     assert_eq!(isa.name().parse::<Isa>(), Ok(isa));
    /// }
    /// assert_eq!(Isa::ALL.len(), 5);
    /// assert!(Isa::supported().contains(&Isa::detect()));
    /// // `BLOCKBLOOM_ISA` unset or valid: the tier new filters use.
    /// if let Ok(active) = Isa::active() {
    ///     assert!(active.is_supported());
    /// }
    /// ```
    pub fn active() -> Result<Isa, Error> {
        #[cfg(feature = "std")]
        {
            static ACTIVE: OnceLock<Result<Isa, Error>> = OnceLock::new();
            ACTIVE
                .get_or_init(|| {
                    choose(
                        std::env::var("BLOCKBLOOM_ISA").ok().as_deref(),
                        Isa::is_supported,
                    )
                })
                .clone()
        }
        // No environment to read: the best tier the build targets.
        #[cfg(not(feature = "std"))]
        {
            choose(None, Isa::is_supported)
        }
    }

    /// `Ok(self)` if the CPU supports it, else [`Error::UnsupportedIsa`].
    ///
    /// ```
    /// use blockbloom::Isa;
    /// for isa in Isa::ALL {
    ///     assert_eq!(isa.require().is_ok(), isa.is_supported());
    /// }
    /// ```
    pub fn require(self) -> Result<Isa, Error> {
        if self.is_supported() {
            Ok(self)
        } else {
            Err(Error::UnsupportedIsa {
                requested: self,
                best: Isa::detect(),
            })
        }
    }
}

/// The fastest tier `supports` allows (scalar always is).
fn best(supports: impl Fn(Isa) -> bool) -> Isa {
    Isa::ALL
        .into_iter()
        .rev()
        .find(|&i| supports(i))
        .unwrap_or(Isa::Scalar)
}

/// The tier named by `requested` (the value of `BLOCKBLOOM_ISA`), or the best one `supports`
/// allows when unset or empty.
fn choose(requested: Option<&str>, supports: impl Fn(Isa) -> bool) -> Result<Isa, Error> {
    let best = best(&supports);
    match requested.map(str::trim) {
        None | Some("") => Ok(best),
        Some(name) => {
            let isa = name.parse::<Isa>()?;
            if supports(isa) {
                Ok(isa)
            } else {
                Err(Error::UnsupportedIsa {
                    requested: isa,
                    best,
                })
            }
        }
    }
}

impl FromStr for Isa {
    type Err = Error;
    fn from_str(s: &str) -> Result<Isa, Error> {
        let t = s.trim().to_ascii_lowercase();
        Isa::ALL
            .into_iter()
            .find(|i| i.name() == t || (t == "avx512f" && *i == Isa::Avx512))
            .ok_or_else(|| Error::UnknownIsa(s.to_string()))
    }
}

#[derive(Clone, Copy)]
struct Cpu {
    avx2: bool,
    avx512: bool,
    neon: bool,
    /// Bytes of a core's L2 cache.
    l2_bytes: u64,
}

/// A core's L2 cache, in bytes, where it cannot be read: 2 MiB, the L2 of the Intel Xeon
/// this crate is measured on (Zen 3 has 512 KiB and Zen 4 1 MiB; both report theirs).
const FALLBACK_L2_BYTES: u64 = 2 << 20;

/// L2 sizes taken as read correctly; anything else is a misreport and gets the fallback.
#[cfg(any(test, all(feature = "std", target_arch = "x86_64")))]
const PLAUSIBLE_L2_BYTES: core::ops::RangeInclusive<u64> = 128 << 10..=16 << 20;

/// Bytes of a core's L2 cache (detected once with `std` on x86-64, else
/// [`FALLBACK_L2_BYTES`]): batches over filters that fit it do not prefetch
/// ([`prefetch_depth`]).
pub(crate) fn l2_bytes() -> u64 {
    cpu().l2_bytes
}

/// The L2 size CPUID reports, if plausible ([`PLAUSIBLE_L2_BYTES`]): from the cache
/// descriptors Linux reads too (leaf 4 on Intel, `0x8000_001D` on AMD), else from AMD's older
/// L2 leaf `0x8000_0006` (ECX bits 31-16, in KiB). `None` under Miri, which runs no CPUID.
#[cfg(all(feature = "std", target_arch = "x86_64"))]
fn cpuid_l2_bytes() -> Option<u64> {
    if cfg!(miri) {
        return None;
    }
    use core::arch::x86_64::{__cpuid_count, CpuidResult};
    // `__cpuid_count` is a safe function on newer toolchains, an `unsafe` one on the MSRV.
    #[allow(unused_unsafe)]
    // SAFETY: every x86-64 CPU has CPUID, and leaves 0 and 0x8000_0000 (the highest basic
    // and extended leaves) are defined on all of them; any other leaf is asked only when
    // they say it exists (a leaf past them returns data, not a fault, in any case).
    let leaf = |eax: u32, ecx: u32| -> CpuidResult { unsafe { __cpuid_count(eax, ecx) } };
    let max_basic = leaf(0, 0).eax;
    let max_ext = leaf(0x8000_0000, 0).eax;
    // A descriptor leaf's sub-leaves, one per cache, until a null type: the level-2 data or
    // unified cache's ways x partitions x line x sets.
    let described = |eax: u32| {
        (0..16)
            .map_while(|i| {
                let r = leaf(eax, i);
                let kind = r.eax & 0x1f;
                (kind != 0).then_some((kind, (r.eax >> 5) & 7, r))
            })
            .find(|&(kind, level, _)| level == 2 && (kind == 1 || kind == 3))
            .map(|(_, _, r)| {
                let field =
                    |x: u32, shift: u32, bits: u32| u64::from((x >> shift) & ((1 << bits) - 1)) + 1;
                field(r.ebx, 22, 10)
                    * field(r.ebx, 12, 10)
                    * field(r.ebx, 0, 12)
                    * (u64::from(r.ecx) + 1)
            })
    };
    let amd_topology = max_ext >= 0x8000_001d && leaf(0x8000_0001, 0).ecx & (1 << 22) != 0;
    let bytes = (max_basic >= 4)
        .then(|| described(4))
        .flatten()
        .or_else(|| amd_topology.then(|| described(0x8000_001d)).flatten())
        .or_else(|| {
            (max_ext >= 0x8000_0006).then(|| u64::from(leaf(0x8000_0006, 0).ecx >> 16) << 10)
        })?;
    PLAUSIBLE_L2_BYTES.contains(&bytes).then_some(bytes)
}

/// The tiers this CPU has: detected once at run time with `std`; without it, the features
/// the build enables (`-C target-feature` or `target-cpu`), since detection needs the OS.
#[cfg(feature = "std")]
fn cpu() -> Cpu {
    static CPU: OnceLock<Cpu> = OnceLock::new();
    *CPU.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        {
            Cpu {
                avx2: std::arch::is_x86_feature_detected!("avx2"),
                // The AVX-512 tier uses AVX2 for split blocks; every AVX-512 CPU has it.
                avx512: std::arch::is_x86_feature_detected!("avx512f")
                    && std::arch::is_x86_feature_detected!("avx512dq")
                    && std::arch::is_x86_feature_detected!("avx2"),
                neon: false,
                l2_bytes: cpuid_l2_bytes().unwrap_or(FALLBACK_L2_BYTES),
            }
        }
        #[cfg(target_arch = "aarch64")]
        {
            Cpu {
                avx2: false,
                avx512: false,
                neon: std::arch::is_aarch64_feature_detected!("neon"),
                l2_bytes: FALLBACK_L2_BYTES,
            }
        }
        #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
        {
            Cpu {
                avx2: false,
                avx512: false,
                neon: false,
                l2_bytes: FALLBACK_L2_BYTES,
            }
        }
    })
}

#[cfg(not(feature = "std"))]
fn cpu() -> Cpu {
    Cpu {
        avx2: cfg!(all(target_arch = "x86_64", target_feature = "avx2")),
        avx512: cfg!(all(
            target_arch = "x86_64",
            target_feature = "avx512f",
            target_feature = "avx512dq",
            target_feature = "avx2"
        )),
        neon: cfg!(all(target_arch = "aarch64", target_feature = "neon")),
        l2_bytes: FALLBACK_L2_BYTES,
    }
}

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

    /// Applies `op` to the positions of every key in a classic filter's array.
    ///
    /// # Panics
    /// If `sink` holds a slice of another length than `keys`.
    #[inline]
    pub fn classic<O: classic::ClassicOp>(
        &self,
        shape: classic::ClassicShape,
        keys: Keys<'_>,
        op: O,
        sink: Sink<'_>,
    ) {
        self.run(classic::ClassicBatch::new(shape, keys, op, sink))
    }

    /// Sets the probes of every key.
    pub fn insert(&self, shape: &Shape, blocks: &mut [Block], keys: Keys<'_>) {
        self.blocks(shape, keys, Insert(blocks), Sink::Discard)
    }

    /// Whether every probe of each key is set.
    pub fn query(&self, shape: &Shape, blocks: &[Block], keys: Keys<'_>, sink: Sink<'_>) {
        self.blocks(shape, keys, Query(blocks), sink)
    }

    /// [`insert`](Self::insert) on atomic words (relaxed `fetch_or`s): the shared-atomic
    /// parallel build, whose workers are the only writers of their filter.
    #[cfg(feature = "parallel")]
    pub fn atomic_insert(&self, shape: &Shape, blocks: &[AtomicBlock], keys: Keys<'_>) {
        self.blocks(shape, keys, AtomicInsert(blocks), Sink::Discard)
    }

    /// [`query`](Self::query) from relaxed atomic loads.
    pub fn atomic_query(
        &self,
        shape: &Shape,
        blocks: &[AtomicBlock],
        keys: Keys<'_>,
        sink: Sink<'_>,
    ) {
        self.blocks(shape, keys, AtomicQuery(blocks), sink)
    }

    /// (Feature `parallel`: the partitioned build.) Inserts `hashes` into `window`, the blocks `first..first + window.len()` of a filter of
    /// `shape`. Every hash must select a block inside the window (checked).
    #[cfg(feature = "parallel")]
    pub fn insert_window(&self, shape: &Shape, window: &mut [Block], first: usize, hashes: &[u64]) {
        let op = InsertWindow {
            window,
            first,
            num_blocks: shape.num_blocks as usize,
        };
        self.blocks(shape, Keys::Hashes(hashes), op, Sink::Discard)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choose_follows_the_variable() {
        let all = |i: Isa| i != Isa::Neon;
        let only_scalar = |i: Isa| i == Isa::Scalar;
        assert_eq!(choose(None, all), Ok(Isa::Avx512));
        assert_eq!(choose(Some(" "), only_scalar), Ok(Isa::Scalar));
        assert_eq!(choose(Some("AVX2"), all), Ok(Isa::Avx2));
        assert!(matches!(
            choose(Some("avx512"), only_scalar),
            Err(Error::UnsupportedIsa { .. })
        ));
        assert!(matches!(
            choose(Some("sse9"), all),
            Err(Error::UnknownIsa(_))
        ));
    }

    /// Filters that fit the detected L2 are not prefetched, the next size up is.
    #[test]
    fn prefetching_starts_past_the_l2() {
        let l2 = l2_bytes();
        assert!(PLAUSIBLE_L2_BYTES.contains(&l2), "{l2}");
        for isa in [Isa::Portable, Isa::Avx2, Isa::Avx512, Isa::Neon] {
            assert_eq!(prefetch_depth(l2, isa), 0, "{isa}");
            assert!(prefetch_depth(l2 + 64, isa) > 0, "{isa}");
        }
    }

    /// CPUID's L2 size is the one Linux reports for CPU 0 (where it names a unified level-2
    /// cache), so the threshold is this machine's cache, not the fallback.
    #[cfg(all(
        feature = "std",
        target_os = "linux",
        target_arch = "x86_64",
        not(miri)
    ))]
    #[test]
    fn the_l2_size_is_the_one_linux_reports() {
        let dir = "/sys/devices/system/cpu/cpu0/cache/index2";
        let read = |f: &str| std::fs::read_to_string(format!("{dir}/{f}")).ok();
        let (Some(level), Some(kind), Some(size)) = (read("level"), read("type"), read("size"))
        else {
            return; // no cache information (some containers): nothing to compare
        };
        assert_eq!((level.trim(), kind.trim()), ("2", "Unified"), "{dir}");
        let kib: u64 = size.trim().trim_end_matches('K').parse().expect(&size);
        assert_eq!(cpuid_l2_bytes(), Some(kib << 10));
        assert_eq!(l2_bytes(), kib << 10);
    }
}
