//! Kernels and their run-time dispatch.
//!
//! Each tier implements [`Lanes`]: hash a chunk of keys, and insert or test one block given a
//! key's low hash half. One generic driver ([`insert_keys`], [`query_keys`]) runs every SIMD
//! tier: hash a chunk of keys, compute their block indices, prefetch those cache lines, then
//! probe them, so a filter larger than the cache has a chunk's misses in flight at once. The
//! driver is `#[inline(always)]` and instantiated inside each tier's `#[target_feature]`
//! functions, so the intrinsics inline into code compiled for that tier.
//!
//! The scalar tier does not use the driver: it is the honest baseline, one key at a time, no
//! SIMD, no prefetch.
//!
//! A [`Kernel`] is a table of function pointers that can only be obtained through
//! [`Kernel::get`], which checks the CPU first; that check is the safety proof every call
//! through the table relies on. A filter stores its `&'static Kernel`, so a batch costs one
//! indirect call.

use std::fmt;
use std::str::FromStr;
use std::sync::OnceLock;

use crate::CounterBits;
use crate::counting::{block_decrement, block_has, block_increment, counter_mask};
use crate::deletable::place;
use crate::error::Error;
use crate::layout::{AtomicBlock, Block, Layout, Row, block_index};

mod portable;
mod scalar;
#[cfg(target_arch = "x86_64")]
mod x86_64;

/// A kernel tier: the instruction set the batch loops run on.
///
/// ```
/// use blockbloom::Isa;
///
/// let best = Isa::detect();
/// assert!(best.is_supported());
/// assert!(Isa::Scalar.is_supported() && Isa::Portable.is_supported());
/// assert_eq!("avx2".parse::<Isa>().unwrap(), Isa::Avx2);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Isa {
    /// The reference: one key and one bit at a time, no SIMD, no prefetch.
    Scalar,
    /// `wide` lanes, compiled for the target's baseline (SSE2 on x86-64, NEON on aarch64).
    Portable,
    /// AVX2 intrinsics (x86-64, detected at run time).
    Avx2,
    /// AVX-512 F+DQ intrinsics (x86-64, detected at run time).
    Avx512,
}

impl Isa {
    /// Every tier, slowest first.
    ///
    /// ```
    /// assert_eq!(blockbloom::Isa::ALL[0], blockbloom::Isa::Scalar);
    /// ```
    pub const ALL: [Isa; 4] = [Isa::Scalar, Isa::Portable, Isa::Avx2, Isa::Avx512];

    /// The name `BLOCKBLOOM_ISA` and [`FromStr`] accept.
    ///
    /// ```
    /// assert_eq!(blockbloom::Isa::Avx512.name(), "avx512");
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            Isa::Scalar => "scalar",
            Isa::Portable => "portable",
            Isa::Avx2 => "avx2",
            Isa::Avx512 => "avx512",
        }
    }

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
    /// assert_eq!(Isa::ALL.len(), 4);
    /// assert!(Isa::supported().contains(&Isa::detect()));
    /// // `BLOCKBLOOM_ISA` unset or valid: the tier new filters use.
    /// if let Ok(active) = Isa::active() {
    ///     assert!(active.is_supported());
    /// }
    /// ```
    pub fn active() -> Result<Isa, Error> {
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

/// The tier named by `requested` (the value of `BLOCKBLOOM_ISA`), or the best one `supports`
/// allows when unset or empty.
/// The fastest tier `supports` allows (scalar always is).
fn best(supports: impl Fn(Isa) -> bool) -> Isa {
    Isa::ALL
        .into_iter()
        .rev()
        .find(|&i| supports(i))
        .unwrap_or(Isa::Scalar)
}

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

impl fmt::Display for Isa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
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
}

fn cpu() -> Cpu {
    static CPU: OnceLock<Cpu> = OnceLock::new();
    *CPU.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        {
            Cpu {
                avx2: std::arch::is_x86_feature_detected!("avx2"),
                avx512: std::arch::is_x86_feature_detected!("avx512f")
                    && std::arch::is_x86_feature_detected!("avx512dq"),
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            Cpu {
                avx2: false,
                avx512: false,
            }
        }
    })
}

/// What a filter needs to place a hash: block count, layout, probe rounds, and the seed's
/// XXH3 constant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Shape {
    pub num_blocks: u64,
    pub layout: Layout,
    /// Probes per key divided by the layout's sectors (one round sets one probe per sector).
    pub rounds: usize,
    pub flip: u64,
    /// Keys per pipelined chunk, from [`chunk_len`].
    pub chunk: usize,
    /// Whether batches prefetch their blocks (filters beyond the cache).
    pub prefetch: bool,
}

impl Shape {
    /// Probes per key.
    pub fn probes(&self) -> usize {
        self.rounds * self.layout.sectors() as usize
    }

    /// The SIMD round table of this shape.
    pub fn rows(&self) -> &'static [Row] {
        &self.layout.rows()[..self.rounds]
    }
}

/// Keys of a batch: raw `u64`/`u32` keys (hashed in lanes) or hashes.
#[derive(Clone, Copy)]
pub(crate) enum Keys<'a> {
    U64(&'a [u64]),
    U32(&'a [u32]),
    Hashes(&'a [u64]),
}

impl Keys<'_> {
    pub fn len(&self) -> usize {
        match self {
            Keys::U64(k) | Keys::Hashes(k) => k.len(),
            Keys::U32(k) => k.len(),
        }
    }
}

/// Where a batch query's answers go.
pub(crate) enum Sink<'a> {
    Each(&'a mut [bool]),
    Count(&'a mut usize),
}

/// What a counting-filter batch does to each key's counters ([`crate::CountingBloomFilter`]).
pub(crate) enum CountingBatch<'a, 'o> {
    /// Increment the key's unsaturated counters.
    Insert(&'a mut [Block]),
    /// Decrement them where all are nonzero; count the keys removed.
    Remove(&'a mut [Block], &'o mut usize),
    /// Whether all of them are nonzero.
    Query(&'a [Block], Sink<'o>),
}

impl CountingBatch<'_, '_> {
    fn blocks(&self) -> &[Block] {
        match self {
            CountingBatch::Insert(b) | CountingBatch::Remove(b, _) => b,
            CountingBatch::Query(b, _) => b,
        }
    }
}

/// A tier's dispatch table. Obtainable only through [`Kernel::get`], which checks the CPU.
pub(crate) struct Kernel {
    isa: Isa,
    insert: unsafe fn(&Shape, &mut [Block], Keys<'_>),
    query: unsafe fn(&Shape, &[Block], Keys<'_>, Sink<'_>),
    atomic_insert: unsafe fn(&Shape, &[AtomicBlock], Keys<'_>),
    atomic_query: unsafe fn(&Shape, &[AtomicBlock], Keys<'_>, Sink<'_>),
    insert_window: unsafe fn(&Shape, &mut [Block], usize, &[u64]),
    counting: unsafe fn(&Shape, CounterBits, CountingBatch<'_, '_>, Keys<'_>),
    deletable_insert: unsafe fn(&Shape, &mut [Block], &mut [u64], u32, Keys<'_>),
    hash_u64: unsafe fn(u64, &[u64], &mut [u64]),
    hash_u32: unsafe fn(u64, &[u32], &mut [u64]),
}

impl fmt::Debug for Kernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Kernel({})", self.isa)
    }
}

/// The dispatch table of the tier whose entry points live in module `$m`.
macro_rules! kernel_table {
    ($isa:expr, $m:path) => {{
        use $m as m;
        Kernel {
            isa: $isa,
            insert: m::insert,
            query: m::query,
            atomic_insert: m::atomic_insert,
            atomic_query: m::atomic_query,
            insert_window: m::insert_window,
            counting: m::counting,
            deletable_insert: m::deletable_insert,
            hash_u64: m::hash_u64,
            hash_u32: m::hash_u32,
        }
    }};
}
pub(crate) use kernel_table;

/// A SIMD tier's batch entry points: the generic drivers instantiated with the tier's token,
/// under the tier's target features (`$attr`). `$token` makes the token; the invocation
/// says why that is sound.
macro_rules! entry_points {
    ($(#[$attr:meta])* token: $token:expr) => {
        /// # Safety
        /// The CPU must support the tier.
        $(#[$attr])*
        pub(super) unsafe fn insert(shape: &Shape, blocks: &mut [Block], keys: Keys<'_>) {
            $crate::arch::insert_keys($token, shape, blocks, keys)
        }

        /// # Safety
        /// The CPU must support the tier.
        $(#[$attr])*
        pub(super) unsafe fn query(shape: &Shape, blocks: &[Block], keys: Keys<'_>, sink: Sink<'_>) {
            $crate::arch::query_keys($token, shape, blocks, keys, sink)
        }

        /// # Safety
        /// The CPU must support the tier.
        $(#[$attr])*
        pub(super) unsafe fn atomic_insert(
            shape: &Shape,
            blocks: &[$crate::layout::AtomicBlock],
            keys: Keys<'_>,
        ) {
            $crate::arch::atomic_insert_keys($token, shape, blocks, keys)
        }

        /// # Safety
        /// The CPU must support the tier.
        $(#[$attr])*
        pub(super) unsafe fn atomic_query(
            shape: &Shape,
            blocks: &[$crate::layout::AtomicBlock],
            keys: Keys<'_>,
            sink: Sink<'_>,
        ) {
            $crate::arch::atomic_query_keys($token, shape, blocks, keys, sink)
        }

        /// # Safety
        /// The CPU must support the tier.
        $(#[$attr])*
        pub(super) unsafe fn insert_window(
            shape: &Shape,
            window: &mut [Block],
            first: usize,
            hashes: &[u64],
        ) {
            $crate::arch::insert_window_keys($token, shape, window, first, hashes)
        }

        /// # Safety
        /// The CPU must support the tier.
        $(#[$attr])*
        pub(super) unsafe fn counting(
            shape: &Shape,
            bits: $crate::CounterBits,
            batch: $crate::arch::CountingBatch<'_, '_>,
            keys: Keys<'_>,
        ) {
            $crate::arch::counting_keys($token, shape, bits, batch, keys)
        }

        /// # Safety
        /// The CPU must support the tier.
        $(#[$attr])*
        pub(super) unsafe fn deletable_insert(
            shape: &Shape,
            blocks: &mut [Block],
            collided: &mut [u64],
            region_shift: u32,
            keys: Keys<'_>,
        ) {
            $crate::arch::deletable_insert_keys($token, shape, blocks, collided, region_shift, keys)
        }
    };
}
pub(crate) use entry_points;

static SCALAR: Kernel = kernel_table!(Isa::Scalar, scalar);
static PORTABLE: Kernel = kernel_table!(Isa::Portable, portable);

impl Kernel {
    /// The table of `isa`, if this CPU supports it.
    pub fn get(isa: Isa) -> Result<&'static Kernel, Error> {
        isa.require()?;
        Ok(match isa {
            Isa::Scalar => &SCALAR,
            Isa::Portable => &PORTABLE,
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => &x86_64::AVX2,
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => &x86_64::AVX512,
            #[cfg(not(target_arch = "x86_64"))]
            Isa::Avx2 | Isa::Avx512 => unreachable!("require() rejects x86 tiers elsewhere"),
        })
    }

    /// The active tier's table, or the best supported one if `BLOCKBLOOM_ISA` is invalid (for
    /// free functions that have no `Result` to report through).
    pub fn fallback_to_best() -> &'static Kernel {
        Kernel::get(Isa::active().unwrap_or_else(|_| Isa::detect())).unwrap_or(&SCALAR)
    }

    pub fn isa(&self) -> Isa {
        self.isa
    }

    pub fn insert(&self, shape: &Shape, blocks: &mut [Block], keys: Keys<'_>) {
        debug_assert_eq!(shape.num_blocks, blocks.len() as u64);
        // SAFETY: `self` came from `Kernel::get`, which checked that the CPU supports the tier.
        unsafe { (self.insert)(shape, blocks, keys) }
    }

    pub fn query(&self, shape: &Shape, blocks: &[Block], keys: Keys<'_>, sink: Sink<'_>) {
        debug_assert_eq!(shape.num_blocks, blocks.len() as u64);
        if let Sink::Each(out) = &sink {
            assert_eq!(
                out.len(),
                keys.len(),
                "output slice length must equal key count"
            );
        }
        // SAFETY: `self` came from `Kernel::get`, which checked that the CPU supports the tier.
        unsafe { (self.query)(shape, blocks, keys, sink) }
    }

    pub fn counting(
        &self,
        shape: &Shape,
        bits: CounterBits,
        batch: CountingBatch<'_, '_>,
        keys: Keys<'_>,
    ) {
        if let CountingBatch::Query(_, Sink::Each(out)) = &batch {
            assert_eq!(
                out.len(),
                keys.len(),
                "output slice length must equal key count"
            );
        }
        // SAFETY: `self` came from `Kernel::get`, which checked that the CPU supports the tier.
        unsafe { (self.counting)(shape, bits, batch, keys) }
    }

    /// The deletable filter's batch insert: `collided` is its bitmap of regions of
    /// `2^region_shift` bits, and must cover every region of `blocks`.
    pub fn deletable_insert(
        &self,
        shape: &Shape,
        blocks: &mut [Block],
        collided: &mut [u64],
        region_shift: u32,
        keys: Keys<'_>,
    ) {
        assert_shape(shape, blocks.len());
        assert!(
            (region_shift as usize) < 64
                && (collided.len() as u128 * 64) << region_shift >= blocks.len() as u128 * 512,
            "the collision bitmap does not cover the filter"
        );
        // SAFETY: `self` came from `Kernel::get`, which checked that the CPU supports the tier.
        unsafe { (self.deletable_insert)(shape, blocks, collided, region_shift, keys) }
    }

    pub fn atomic_insert(&self, shape: &Shape, blocks: &[AtomicBlock], keys: Keys<'_>) {
        // SAFETY: `self` came from `Kernel::get`, which checked that the CPU supports the tier.
        unsafe { (self.atomic_insert)(shape, blocks, keys) }
    }

    pub fn atomic_query(
        &self,
        shape: &Shape,
        blocks: &[AtomicBlock],
        keys: Keys<'_>,
        sink: Sink<'_>,
    ) {
        if let Sink::Each(out) = &sink {
            assert_eq!(
                out.len(),
                keys.len(),
                "output slice length must equal key count"
            );
        }
        // SAFETY: `self` came from `Kernel::get`, which checked that the CPU supports the tier.
        unsafe { (self.atomic_query)(shape, blocks, keys, sink) }
    }

    /// Inserts `hashes` into `window`, the blocks `first..first + window.len()` of a filter of
    /// `shape`. Every hash must select a block inside the window.
    pub fn insert_window(&self, shape: &Shape, window: &mut [Block], first: usize, hashes: &[u64]) {
        // SAFETY: `self` came from `Kernel::get`, which checked that the CPU supports the tier.
        unsafe { (self.insert_window)(shape, window, first, hashes) }
    }

    /// Hashes `keys[start..start + out.len()]` into `out` on this tier (hashes are copied).
    pub fn hash_keys(&self, flip: u64, keys: Keys<'_>, start: usize, out: &mut [u64]) {
        let end = start + out.len();
        match keys {
            Keys::U64(k) => self.hash_u64(flip, &k[start..end], out),
            Keys::U32(k) => self.hash_u32(flip, &k[start..end], out),
            Keys::Hashes(h) => out.copy_from_slice(&h[start..end]),
        }
    }

    pub fn hash_u64(&self, flip: u64, keys: &[u64], out: &mut [u64]) {
        assert_eq!(
            keys.len(),
            out.len(),
            "output slice length must equal key count"
        );
        // SAFETY: `self` came from `Kernel::get`, which checked that the CPU supports the tier.
        unsafe { (self.hash_u64)(flip, keys, out) }
    }

    pub fn hash_u32(&self, flip: u64, keys: &[u32], out: &mut [u64]) {
        assert_eq!(
            keys.len(),
            out.len(),
            "output slice length must equal key count"
        );
        // SAFETY: `self` came from `Kernel::get`, which checked that the CPU supports the tier.
        unsafe { (self.hash_u32)(flip, keys, out) }
    }
}

/// One SIMD tier's primitives. Implementors are zero-sized tokens that exist only once the
/// CPU is known to support the tier, so their safe methods may use the tier's intrinsics.
pub(crate) trait Lanes: Copy {
    /// XXH3 of each `u64` key (given the seed's flip constant). `keys.len() == out.len()`.
    fn hash_u64(self, flip: u64, keys: &[u64], out: &mut [u64]);
    /// XXH3 of each `u32` key. `keys.len() == out.len()`.
    fn hash_u32(self, flip: u64, keys: &[u32], out: &mut [u64]);
    /// Sets the probes of `lo` given by `rows` in `block`. `WORDS` says the rows are
    /// [`Layout::Sectors8x64`] rows (mask 63, no xor), which a tier may exploit.
    fn insert<const WORDS: bool>(self, block: &mut Block, lo: u32, rows: &[Row]);
    /// Whether all probes of `lo` given by `rows` are set in `block`.
    fn contains<const WORDS: bool>(self, block: &Block, lo: u32, rows: &[Row]) -> bool;
    /// The probes of `lo` given by `rows`, as a block (for the atomic filter, whose words must
    /// be read and written with atomic operations rather than vector loads and stores).
    fn pattern<const WORDS: bool>(self, lo: u32, rows: &[Row]) -> Block;
}

/// Most keys hashed, indexed and prefetched together (the staging buffers' size).
pub(crate) const CHUNK: usize = 64;

/// Filters up to this size are taken to fit in a core's L2 cache.
pub(crate) const CACHE_RESIDENT_BYTES: u64 = 2 << 20;

/// Whether a filter of `num_blocks` blocks is taken to fit in a core's L2 cache.
pub(crate) fn cache_resident(num_blocks: u64) -> bool {
    num_blocks.saturating_mul(64) <= CACHE_RESIDENT_BYTES
}

/// Keys per chunk for a filter of `num_blocks` blocks. The pipeline prefetches one chunk
/// ahead, so the chunk is the prefetch distance. In cache, long chunks amortise the per-chunk
/// work and prefetches are skipped (out-of-order execution hides L2 latency, and each
/// prefetch takes a load slot); from memory, more misses in flight than the core can track
/// only get dropped, so chunks are short. Chosen by timing 16, 32 and 64 at 50,000 and
/// 64 million keys during development; the reports in `perf-reports/` show the outcome.
pub(crate) fn chunk_len(num_blocks: u64) -> usize {
    if cache_resident(num_blocks) {
        CHUNK
    } else {
        16
    }
}

/// Asks for the cache line at `line` (shared by every filter's batch pipeline).
#[inline(always)]
pub(crate) fn prefetch<T>(line: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint that never faults, whatever the address.
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>(line.cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = line;
}

/// One chunk's hashes, computed (and their blocks prefetched) a chunk ahead of use.
struct Staged {
    hashes: [u64; CHUNK],
    len: usize,
}

impl Staged {
    const EMPTY: Staged = Staged {
        hashes: [0; CHUNK],
        len: 0,
    };

    /// Hashes keys `start..start + chunk` and, for filters beyond the cache, prefetches their
    /// blocks.
    #[inline(always)]
    fn load<L: Lanes>(
        &mut self,
        l: L,
        shape: &Shape,
        base: *const Block,
        keys: Keys<'_>,
        start: usize,
    ) {
        let n = shape.chunk.min(keys.len() - start);
        let out = &mut self.hashes[..n];
        match keys {
            Keys::U64(k) => l.hash_u64(shape.flip, &k[start..start + n], out),
            Keys::U32(k) => l.hash_u32(shape.flip, &k[start..start + n], out),
            Keys::Hashes(k) => out.copy_from_slice(&k[start..start + n]),
        }
        if shape.prefetch {
            for &h in out.iter() {
                // Address arithmetic only; a prefetch never faults.
                prefetch(base.wrapping_add(block_index(h, shape.num_blocks)));
            }
        }
        self.len = n;
    }

    /// `(block index, low hash half)` of each staged key. Recomputing the index (a multiply
    /// and a shift) costs no more than storing and reloading it.
    #[inline(always)]
    fn entries(&self, num_blocks: u64) -> impl Iterator<Item = (usize, u32)> + '_ {
        self.hashes[..self.len]
            .iter()
            .map(move |&h| (block_index(h, num_blocks), h as u32))
    }
}

// The drivers are software-pipelined: chunk `c + 1` is hashed and its blocks prefetched before
// chunk `c` is probed, so each prefetch has a whole chunk of work to hide its memory latency.
// They are instantiated per layout and, for the common probe counts, per round count, so the
// round loop unrolls; other counts take the same code with a run-time count.
// No intrinsic may sit inside a closure here: a closure is a function of its own, without the
// caller's target features, so its intrinsics would become calls (a 30x slowdown, seen once).
// The one closure, in `Staged::entries`, only computes an index.

/// Calls `$run::<L, WORDS, R>(...)` for the shape's layout and round count (`R = 0`: any).
macro_rules! by_shape {
    ($shape:expr, $run:ident, $l:ty, ($($arg:expr),*)) => {
        match ($shape.layout, $shape.rounds) {
            (Layout::Sectors8x64, 1) => $run::<$l, true, 1>($($arg),*),
            (Layout::Sectors8x64, 2) => $run::<$l, true, 2>($($arg),*),
            (Layout::Sectors8x64, _) => $run::<$l, true, 0>($($arg),*),
            (Layout::Sectors4x128, 1) => $run::<$l, false, 1>($($arg),*),
            (Layout::Sectors4x128, 2) => $run::<$l, false, 2>($($arg),*),
            (Layout::Sectors4x128, 3) => $run::<$l, false, 3>($($arg),*),
            (Layout::Sectors4x128, _) => $run::<$l, false, 0>($($arg),*),
        }
    };
}

/// The rows of a shape, with a compile-time length when `R > 0`.
#[inline(always)]
fn rows_of<const R: usize>(shape: &Shape) -> &'static [Row] {
    if R > 0 {
        &shape.layout.rows()[..R]
    } else {
        shape.rows()
    }
}

/// The unchecked block accesses of the drivers rely on this: multiply-shift yields indices
/// below `num_blocks`, so they are in bounds when the slice has `num_blocks` blocks.
#[inline(always)]
fn assert_shape(shape: &Shape, blocks: usize) {
    assert_eq!(
        shape.num_blocks, blocks as u64,
        "filter shape and blocks disagree"
    );
}

/// The batch insert of every SIMD tier.
#[inline(always)]
pub(crate) fn insert_keys<L: Lanes>(l: L, shape: &Shape, blocks: &mut [Block], keys: Keys<'_>) {
    assert_shape(shape, blocks.len());
    by_shape!(shape, insert_pipelined, L, (l, shape, blocks, keys))
}

/// The batch query of every SIMD tier.
#[inline(always)]
pub(crate) fn query_keys<L: Lanes>(
    l: L,
    shape: &Shape,
    blocks: &[Block],
    keys: Keys<'_>,
    sink: Sink<'_>,
) {
    assert_shape(shape, blocks.len());
    by_shape!(shape, query_pipelined, L, (l, shape, blocks, keys, sink))
}

/// What a pipelined batch does with each staged chunk: keys `start..next`, hashed in `stage`.
/// A trait with an `#[inline(always)]` method rather than a closure, so the probe code inlines
/// into the tier's `#[target_feature]` function.
trait Visit {
    fn chunk(&mut self, start: usize, next: usize, stage: &Staged);
}

/// Runs `visit` over every chunk of `keys`, hashing (and prefetching) one chunk ahead.
#[inline(always)]
fn pipeline<L: Lanes, V: Visit>(
    l: L,
    shape: &Shape,
    base: *const Block,
    keys: Keys<'_>,
    visit: &mut V,
) {
    let mut stage = [Staged::EMPTY, Staged::EMPTY];
    let len = keys.len();
    if len == 0 {
        return;
    }
    stage[0].load(l, shape, base, keys, 0);
    let (mut start, mut cur) = (0, 0);
    while start < len {
        let next = start + stage[cur].len;
        if next < len {
            stage[cur ^ 1].load(l, shape, base, keys, next);
        }
        visit.chunk(start, next, &stage[cur]);
        start = next;
        cur ^= 1;
    }
}

struct Insert<'a, L, const WORDS: bool> {
    l: L,
    blocks: &'a mut [Block],
    rows: &'static [Row],
    num_blocks: u64,
}

impl<L: Lanes, const WORDS: bool> Visit for Insert<'_, L, WORDS> {
    #[inline(always)]
    fn chunk(&mut self, _: usize, _: usize, stage: &Staged) {
        for (i, lo) in stage.entries(self.num_blocks) {
            // SAFETY: `i = block_index(h, num_blocks) < num_blocks == blocks.len()`
            // (`assert_shape`).
            let block = unsafe { self.blocks.get_unchecked_mut(i) };
            self.l.insert::<WORDS>(block, lo, self.rows);
        }
    }
}

struct Query<'a, 'o, L, const WORDS: bool> {
    l: L,
    blocks: &'a [Block],
    rows: &'static [Row],
    num_blocks: u64,
    sink: Sink<'o>,
}

impl<L: Lanes, const WORDS: bool> Visit for Query<'_, '_, L, WORDS> {
    #[inline(always)]
    fn chunk(&mut self, start: usize, next: usize, stage: &Staged) {
        match &mut self.sink {
            Sink::Each(out) => {
                for (o, (i, lo)) in out[start..next]
                    .iter_mut()
                    .zip(stage.entries(self.num_blocks))
                {
                    // SAFETY: `i = block_index(h, num_blocks) < num_blocks == blocks.len()`
                    // (`assert_shape`).
                    let block = unsafe { self.blocks.get_unchecked(i) };
                    *o = self.l.contains::<WORDS>(block, lo, self.rows);
                }
            }
            Sink::Count(c) => {
                let mut found = 0;
                for (i, lo) in stage.entries(self.num_blocks) {
                    // SAFETY: as above.
                    let block = unsafe { self.blocks.get_unchecked(i) };
                    found += self.l.contains::<WORDS>(block, lo, self.rows) as usize;
                }
                **c += found;
            }
        }
    }
}

#[inline(always)]
fn insert_pipelined<L: Lanes, const WORDS: bool, const R: usize>(
    l: L,
    shape: &Shape,
    blocks: &mut [Block],
    keys: Keys<'_>,
) {
    let base = blocks.as_ptr();
    let rows = rows_of::<R>(shape);
    let mut visit = Insert::<L, WORDS> {
        l,
        blocks,
        rows,
        num_blocks: shape.num_blocks,
    };
    pipeline(l, shape, base, keys, &mut visit);
}

#[inline(always)]
fn query_pipelined<L: Lanes, const WORDS: bool, const R: usize>(
    l: L,
    shape: &Shape,
    blocks: &[Block],
    keys: Keys<'_>,
    sink: Sink<'_>,
) {
    let rows = rows_of::<R>(shape);
    let mut visit = Query::<L, WORDS> {
        l,
        blocks,
        rows,
        num_blocks: shape.num_blocks,
        sink,
    };
    pipeline(l, shape, blocks.as_ptr(), keys, &mut visit);
}

struct AtomicInsert<'a, L, const WORDS: bool> {
    l: L,
    blocks: &'a [AtomicBlock],
    rows: &'static [Row],
    num_blocks: u64,
}

impl<L: Lanes, const WORDS: bool> Visit for AtomicInsert<'_, L, WORDS> {
    #[inline(always)]
    fn chunk(&mut self, _: usize, _: usize, stage: &Staged) {
        for (i, lo) in stage.entries(self.num_blocks) {
            // SAFETY: `i = block_index(h, num_blocks) < num_blocks == blocks.len()`
            // (`assert_shape`).
            let block = unsafe { self.blocks.get_unchecked(i) };
            block.or(&self.l.pattern::<WORDS>(lo, self.rows));
        }
    }
}

struct AtomicQuery<'a, 'o, L, const WORDS: bool> {
    l: L,
    blocks: &'a [AtomicBlock],
    rows: &'static [Row],
    num_blocks: u64,
    sink: Sink<'o>,
}

impl<L: Lanes, const WORDS: bool> Visit for AtomicQuery<'_, '_, L, WORDS> {
    #[inline(always)]
    fn chunk(&mut self, start: usize, next: usize, stage: &Staged) {
        let mut found = 0;
        for (j, (i, lo)) in stage.entries(self.num_blocks).enumerate() {
            // SAFETY: `i = block_index(h, num_blocks) < num_blocks == blocks.len()`
            // (`assert_shape`).
            let block = unsafe { self.blocks.get_unchecked(i) };
            let hit = block.has(&self.l.pattern::<WORDS>(lo, self.rows));
            match &mut self.sink {
                Sink::Each(out) => out[start + j] = hit,
                Sink::Count(_) => found += hit as usize,
            }
        }
        if let Sink::Count(c) = &mut self.sink {
            **c += found;
        }
        debug_assert!(start <= next);
    }
}

struct InsertWindow<'a, L, const WORDS: bool> {
    l: L,
    window: &'a mut [Block],
    first: usize,
    rows: &'static [Row],
    num_blocks: u64,
}

impl<L: Lanes, const WORDS: bool> Visit for InsertWindow<'_, L, WORDS> {
    #[inline(always)]
    fn chunk(&mut self, _: usize, _: usize, stage: &Staged) {
        for (i, lo) in stage.entries(self.num_blocks) {
            // Checked: the caller promises the window, this keeps a broken promise safe.
            self.l
                .insert::<WORDS>(&mut self.window[i - self.first], lo, self.rows);
        }
    }
}

/// The atomic batch insert of every SIMD tier: patterns built in lanes, then written with a
/// relaxed `fetch_or` per word that lacks bits (never a vector store to shared memory).
#[inline(always)]
pub(crate) fn atomic_insert_keys<L: Lanes>(
    l: L,
    shape: &Shape,
    blocks: &[AtomicBlock],
    keys: Keys<'_>,
) {
    assert_shape(shape, blocks.len());
    by_shape!(shape, atomic_insert_pipelined, L, (l, shape, blocks, keys))
}

/// The atomic batch query of every SIMD tier: relaxed loads of the words, tested against the
/// pattern built in lanes.
#[inline(always)]
pub(crate) fn atomic_query_keys<L: Lanes>(
    l: L,
    shape: &Shape,
    blocks: &[AtomicBlock],
    keys: Keys<'_>,
    sink: Sink<'_>,
) {
    assert_shape(shape, blocks.len());
    by_shape!(
        shape,
        atomic_query_pipelined,
        L,
        (l, shape, blocks, keys, sink)
    )
}

/// Inserts pre-computed hashes into a window of blocks (one worker's share of a partitioned
/// parallel build).
#[inline(always)]
pub(crate) fn insert_window_keys<L: Lanes>(
    l: L,
    shape: &Shape,
    window: &mut [Block],
    first: usize,
    hashes: &[u64],
) {
    by_shape!(
        shape,
        insert_window_pipelined,
        L,
        (l, shape, window, first, hashes)
    )
}

#[inline(always)]
fn atomic_insert_pipelined<L: Lanes, const WORDS: bool, const R: usize>(
    l: L,
    shape: &Shape,
    blocks: &[AtomicBlock],
    keys: Keys<'_>,
) {
    let rows = rows_of::<R>(shape);
    let base = blocks.as_ptr().cast::<Block>();
    let mut visit = AtomicInsert::<L, WORDS> {
        l,
        blocks,
        rows,
        num_blocks: shape.num_blocks,
    };
    pipeline(l, shape, base, keys, &mut visit);
}

#[inline(always)]
fn atomic_query_pipelined<L: Lanes, const WORDS: bool, const R: usize>(
    l: L,
    shape: &Shape,
    blocks: &[AtomicBlock],
    keys: Keys<'_>,
    sink: Sink<'_>,
) {
    let rows = rows_of::<R>(shape);
    let base = blocks.as_ptr().cast::<Block>();
    let mut visit = AtomicQuery::<L, WORDS> {
        l,
        blocks,
        rows,
        num_blocks: shape.num_blocks,
        sink,
    };
    pipeline(l, shape, base, keys, &mut visit);
}

#[inline(always)]
fn insert_window_pipelined<L: Lanes, const WORDS: bool, const R: usize>(
    l: L,
    shape: &Shape,
    window: &mut [Block],
    first: usize,
    hashes: &[u64],
) {
    let rows = rows_of::<R>(shape);
    // Prefetch addresses are computed from the whole filter's start; only the window is
    // touched, and a prefetch never faults.
    let base = window.as_ptr().wrapping_sub(first);
    let mut visit = InsertWindow::<L, WORDS> {
        l,
        window,
        first,
        rows,
        num_blocks: shape.num_blocks,
    };
    pipeline(l, shape, base, Keys::Hashes(hashes), &mut visit);
}

/// The counting filter's batch of every SIMD tier: each key's pattern built in lanes, folded
/// into counter masks, and applied with the counting filter's branch-free word operations
/// (inlined here, so they compile with the tier's features). Instantiated per layout only (the
/// round count is a run-time loop), as counting batches are fewer than plain ones.
#[inline(always)]
pub(crate) fn counting_keys<L: Lanes>(
    l: L,
    shape: &Shape,
    bits: CounterBits,
    batch: CountingBatch<'_, '_>,
    keys: Keys<'_>,
) {
    assert_shape(shape, batch.blocks().len());
    match (bits, shape.layout) {
        (CounterBits::Four, Layout::Sectors8x64) => {
            counting_pipelined::<L, true, 4>(l, shape, batch, keys)
        }
        (CounterBits::Four, Layout::Sectors4x128) => {
            counting_pipelined::<L, false, 4>(l, shape, batch, keys)
        }
        (CounterBits::Eight, Layout::Sectors8x64) => {
            counting_pipelined::<L, true, 8>(l, shape, batch, keys)
        }
        (CounterBits::Eight, Layout::Sectors4x128) => {
            counting_pipelined::<L, false, 8>(l, shape, batch, keys)
        }
    }
}

struct Counting<'a, 'o, L, const WORDS: bool, const C: u32> {
    l: L,
    batch: CountingBatch<'a, 'o>,
    rows: &'static [Row],
    num_blocks: u64,
}

impl<L: Lanes, const WORDS: bool, const C: u32> Visit for Counting<'_, '_, L, WORDS, C> {
    #[inline(always)]
    fn chunk(&mut self, start: usize, _: usize, stage: &Staged) {
        let (l, rows, n) = (self.l, self.rows, self.num_blocks);
        match &mut self.batch {
            CountingBatch::Insert(blocks) => {
                for (i, lo) in stage.entries(n) {
                    let m = counter_mask::<C>(&l.pattern::<WORDS>(lo, rows));
                    // SAFETY: `i = block_index(h, num_blocks) < num_blocks == blocks.len()`
                    // (`assert_shape`).
                    block_increment::<C>(unsafe { blocks.get_unchecked_mut(i) }, &m);
                }
            }
            CountingBatch::Remove(blocks, removed) => {
                let mut done = 0;
                for (i, lo) in stage.entries(n) {
                    let m = counter_mask::<C>(&l.pattern::<WORDS>(lo, rows));
                    // SAFETY: as above.
                    done +=
                        block_decrement::<C>(unsafe { blocks.get_unchecked_mut(i) }, &m) as usize;
                }
                **removed += done;
            }
            CountingBatch::Query(blocks, sink) => {
                let mut found = 0;
                for (j, (i, lo)) in stage.entries(n).enumerate() {
                    let m = counter_mask::<C>(&l.pattern::<WORDS>(lo, rows));
                    // SAFETY: as above.
                    let hit = block_has::<C>(unsafe { blocks.get_unchecked(i) }, &m);
                    match sink {
                        Sink::Each(out) => out[start + j] = hit,
                        Sink::Count(_) => found += hit as usize,
                    }
                }
                if let Sink::Count(c) = sink {
                    **c += found;
                }
            }
        }
    }
}

#[inline(always)]
fn counting_pipelined<L: Lanes, const WORDS: bool, const C: u32>(
    l: L,
    shape: &Shape,
    batch: CountingBatch<'_, '_>,
    keys: Keys<'_>,
) {
    let base = batch.blocks().as_ptr();
    let mut visit = Counting::<L, WORDS, C> {
        l,
        batch,
        rows: shape.rows(),
        num_blocks: shape.num_blocks,
    };
    pipeline(l, shape, base, keys, &mut visit);
}

/// The deletable filter's batch insert of every SIMD tier: patterns built in lanes, then set
/// with the deletable filter's own collision marking (inlined under the tier's features).
#[inline(always)]
pub(crate) fn deletable_insert_keys<L: Lanes>(
    l: L,
    shape: &Shape,
    blocks: &mut [Block],
    collided: &mut [u64],
    region_shift: u32,
    keys: Keys<'_>,
) {
    assert_shape(shape, blocks.len());
    match shape.layout {
        Layout::Sectors8x64 => {
            deletable_pipelined::<L, true>(l, shape, blocks, collided, region_shift, keys)
        }
        Layout::Sectors4x128 => {
            deletable_pipelined::<L, false>(l, shape, blocks, collided, region_shift, keys)
        }
    }
}

struct DeletableInsert<'a, L, const WORDS: bool> {
    l: L,
    blocks: &'a mut [Block],
    collided: &'a mut [u64],
    region_shift: u32,
    rows: &'static [Row],
    num_blocks: u64,
}

impl<L: Lanes, const WORDS: bool> Visit for DeletableInsert<'_, L, WORDS> {
    #[inline(always)]
    fn chunk(&mut self, _: usize, _: usize, stage: &Staged) {
        for (i, lo) in stage.entries(self.num_blocks) {
            let p = self.l.pattern::<WORDS>(lo, self.rows);
            // SAFETY: `i = block_index(h, num_blocks) < num_blocks == blocks.len()`
            // (`assert_shape`).
            let block = unsafe { self.blocks.get_unchecked_mut(i) };
            place(block, self.collided, i, self.region_shift, &p);
        }
    }
}

#[inline(always)]
fn deletable_pipelined<L: Lanes, const WORDS: bool>(
    l: L,
    shape: &Shape,
    blocks: &mut [Block],
    collided: &mut [u64],
    region_shift: u32,
    keys: Keys<'_>,
) {
    let base = blocks.as_ptr();
    let mut visit = DeletableInsert::<L, WORDS> {
        l,
        blocks,
        collided,
        region_shift,
        rows: shape.rows(),
        num_blocks: shape.num_blocks,
    };
    pipeline(l, shape, base, keys, &mut visit);
}
