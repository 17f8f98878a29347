//! [`Builder`], and the [`Options`] core it shares with the other kinds' builders.

// Without `std`, `f64` lacks `ln`, `exp`, ... (with it, or in tests, std's own are found).
#[cfg(not(any(feature = "std", test)))]
use crate::math::F64Math as _;

use super::{BloomFilter, Meta, allocate_pages};
use crate::error::{Error, SizedBy};
use crate::hashing::KeyHash;
use crate::isa::Isa;
use crate::kernel::Kernel;
use crate::layout::{BLOCK_BITS, Layout, MAX_BLOCKS};
use crate::limits::{MAX_BITS_PER_KEY, USELESS_FPR};
use crate::sizing;

/// Options for a [`BloomFilter`]: capacity and one way to size it (target false-positive rate,
/// bits per key, or bytes), plus seed, probe count and kernel.
///
/// ```
/// use blockbloom::BloomFilter;
///
/// // An explicit budget: 64 KiB, with the probe count that is best for 40,000 keys.
/// let f = BloomFilter::builder().capacity(40_000).size_in_bytes(64 << 10).build()?;
/// assert_eq!(f.size_in_bytes(), 64 << 10);
/// assert!(f.model_fpr(40_000) < 0.1);
/// # Ok::<(), blockbloom::Error>(())
/// ```
#[derive(Debug, Clone, Default)]
#[must_use]
pub struct Builder {
    opts: Options,
    key_hash: KeyHash,
    /// [`least_memory`](Self::least_memory).
    least_memory: bool,
}

impl Builder {
    /// A builder with no options set (target 1% unless another size option is given).
    ///
    /// ```
    /// use blockbloom::{BloomFilter, Isa};
    ///
    /// let f = BloomFilter::builder()
    ///     .capacity(1_000_000)   // required
    ///     .fpr(0.001)            // or .bits_per_key(15.0), or .size_in_bytes(2 << 20)
    ///     .probes(12)            // default: the best for the size
    ///     .seed(42)              // default 0
    ///     .isa(Isa::Portable)    // default: Isa::active()
    ///     .build()?;
    /// assert_eq!((f.probes(), f.seed(), f.isa()), (12, 42, Isa::Portable));
    /// assert!(f.model_fpr(1_000_000) <= 0.001);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn new() -> Builder {
        Builder::default()
    }

    /// Keys the filter is sized for. Required.
    ///
    /// ```
    /// assert!(blockbloom::BloomFilter::builder().build().is_err());
    /// assert!(blockbloom::BloomFilter::builder().capacity(10).build().is_ok());
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn capacity(mut self, keys: u64) -> Builder {
        self.opts.capacity = Some(keys);
        self
    }

    /// Target false-positive rate at `capacity` keys (default 0.01).
    ///
    /// ```
    /// let f = blockbloom::BloomFilter::builder().capacity(1000).fpr(0.001).build()?;
    /// assert!(f.model_fpr(1000) <= 0.001);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn fpr(mut self, fpr: f64) -> Builder {
        self.opts.fpr = Some(fpr);
        self
    }

    /// Explicit budget: this many bits of filter per key of `capacity`, rounded up to whole
    /// blocks. Exclusive with `fpr` and `size_in_bytes`. At most
    /// [`MAX_BITS_PER_KEY`](crate::sizing::MAX_BITS_PER_KEY) (one block per key); a budget
    /// so small that the filter would answer "maybe" for nearly every absent key is refused
    /// by [`build`](Self::build) ([`Error::FiltersNothing`]).
    ///
    /// ```
    /// use blockbloom::{BloomFilter, Error};
    ///
    /// let f = BloomFilter::builder().capacity(1000).bits_per_key(12.0).build()?;
    /// assert_eq!(f.num_blocks(), 24); // ceil(1000 * 12 / 512)
    /// let tiny = BloomFilter::builder().capacity(1000).bits_per_key(1e-9).build();
    /// assert!(matches!(tiny, Err(Error::FiltersNothing { .. })));
    /// let huge = BloomFilter::builder().capacity(10).bits_per_key(1e9).build();
    /// assert!(matches!(huge, Err(Error::InvalidBitsPerKey(_))));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn bits_per_key(mut self, bits: f64) -> Builder {
        self.opts.bits_per_key = Some(bits);
        self
    }

    /// Explicit budget: this many bytes, rounded up to whole 64-byte blocks. Exclusive with
    /// `fpr` and `bits_per_key`. Needs `capacity` (the probe count is chosen for it); 0 bytes,
    /// and a budget that would filter nothing for the capacity, are refused by
    /// [`build`](Self::build).
    ///
    /// ```
    /// use blockbloom::{BloomFilter, Error};
    ///
    /// let f = BloomFilter::builder().capacity(1000).size_in_bytes(4096).build()?;
    /// assert_eq!(f.size_in_bytes(), 4096);
    /// let zero = BloomFilter::builder().capacity(1000).size_in_bytes(0).build();
    /// assert!(matches!(zero, Err(Error::InvalidOptions(_))));
    /// let alone = BloomFilter::builder().size_in_bytes(4096).build().unwrap_err();
    /// assert!(alone.to_string().contains("capacity"));
    /// let small = BloomFilter::builder().capacity(1_000_000).size_in_bytes(64).build();
    /// assert!(matches!(small, Err(Error::FiltersNothing { .. })));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn size_in_bytes(mut self, bytes: u64) -> Builder {
        self.opts.size_in_bytes = Some(bytes);
        self
    }

    /// Bits set per key (a multiple of 4 in `4..=32`); default: the best for the size.
    ///
    /// ```
    /// let f = blockbloom::BloomFilter::builder().capacity(1000).probes(16).build()?;
    /// assert_eq!(f.probes(), 16);
    /// assert!(blockbloom::BloomFilter::builder().capacity(1000).probes(6).build().is_err());
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn probes(mut self, k: u32) -> Builder {
        self.opts.probes = Some(k);
        self
    }

    /// Plans the layout of least memory for the target rate ([`Layout::Sectors8x64`] or
    /// [`Layout::Sectors4x128`], the sizing model's own pick) instead of the default's
    /// [`Layout::Sectors8x32`] where that costs at most 5% more
    /// ([`sizing::plan_default`]). For filters whose memory counts
    /// more than a faster probe; what scalable and deletable filters use.
    ///
    /// ```
    /// use blockbloom::{BloomFilter, Layout};
    ///
    /// let fast = BloomFilter::builder().capacity(1_000_000).fpr(0.01).build()?;
    /// let small = BloomFilter::builder().capacity(1_000_000).fpr(0.01).least_memory().build()?;
    /// assert_eq!((fast.layout(), small.layout()), (Layout::Sectors8x32, Layout::Sectors8x64));
    /// assert!(small.size_in_bytes() < fast.size_in_bytes());
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn least_memory(mut self) -> Builder {
        self.least_memory = true;
        self
    }

    /// Fixes the block layout (default: the sizing model's choice, see [`crate::layout`]).
    ///
    /// ```
    /// use blockbloom::{layout::Layout, BloomFilter};
    /// let f = BloomFilter::builder().capacity(1000).layout(Layout::Sectors4x128).build()?;
    /// assert_eq!((f.layout(), f.probes()), (Layout::Sectors4x128, 8));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn layout(mut self, layout: Layout) -> Builder {
        self.opts.layout = Some(layout);
        self
    }

    /// Hash seed (default 0). Filters with different seeds cannot be compared or merged.
    ///
    /// ```
    /// let f = blockbloom::BloomFilter::builder().capacity(10).seed(9).build()?;
    /// assert_eq!(f.hash(&1u64), blockbloom::hash::hash_u64_mx32(1, 9)); // hash id 3
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn seed(mut self, seed: u64) -> Builder {
        self.opts.seed = seed;
        self
    }

    /// The hash the filter gives its keys (default [`KeyHash::Mx32`], hash id 3: MX32-64 for
    /// keys of 4, 8 and 16 bytes, AESH-64 for other byte strings; [`KeyHash`] has the table of
    /// every hash). [`KeyHash::Xxh3`] (hash id 1) builds a filter that hashes as every filter
    /// written before hash id 2, to merge with one of them ([`union`](BloomFilter::union) needs
    /// one hash) or to be read by a version of this crate that knows only hash id 1.
    ///
    /// ```
    /// use blockbloom::{BloomFilter, KeyHash};
    ///
    /// let old = BloomFilter::from_bytes(&BloomFilter::builder()
    ///     .capacity(100).key_hash(KeyHash::Xxh3).build()?.to_bytes())?;
    /// let mut new = BloomFilter::builder().capacity(100).build()?;
    /// assert!(new.union(&old).is_err()); // two hashes: the same key lands apart
    /// let mut same = BloomFilter::builder().capacity(100).key_hash(old.key_hash()).build()?;
    /// assert!(same.union(&old).is_ok());
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn key_hash(mut self, hash: KeyHash) -> Builder {
        self.key_hash = hash;
        self
    }

    /// A secret random seed instead of the default 0, so that nobody who does not know it can
    /// compute where a key lands (see the [threat model](crate::guide::threat_model) guide):
    /// the defence of a filter fed by untrusted keys (a block list, a dedup filter on network
    /// traffic) against keys crafted to make a chosen key a false positive or to fill the
    /// filter fast.
    ///
    /// The seed comes from the operating system's randomness (through std's `RandomState`),
    /// is different for every filter, and is stored in the filter's encoding like any seed:
    /// a keyed filter persists, and answers identically on every machine that loads it. Keep
    /// its file as secret as the seed should be. The batch paths stay on SIMD lanes (the hash
    /// is the same, seeded: XXH3-64, and AESH-64 with round keys from the seed under hash id 2,
    /// [`key_hash`](Self::key_hash)). A later `seed(..)` replaces it; filters must share a seed to
    /// be merged, so draw one keyed filter and derive the others with `seed(f.seed())`.
    ///
    /// ```
    /// let a = blockbloom::BloomFilter::builder().capacity(100).keyed().build()?;
    /// let b = blockbloom::BloomFilter::builder().capacity(100).keyed().build()?;
    /// assert_ne!(a.seed(), b.seed());
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    #[cfg(feature = "std")]
    pub fn keyed(self) -> Builder {
        self.seed(crate::hashing::random_seed())
    }

    /// Kernel tier for the batch methods (default: [`Isa::active`]).
    ///
    /// ```
    /// use blockbloom::{BloomFilter, Isa};
    /// let f = BloomFilter::builder().capacity(10).isa(Isa::detect()).build()?;
    /// assert_eq!(f.isa(), Isa::detect());
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn isa(mut self, isa: Isa) -> Builder {
        self.opts.isa = Some(isa);
        self
    }

    /// Whether a large filter (at least [`memory::HUGE_PAGES_FROM_BYTES`]) goes on transparent
    /// huge pages (default: yes, on Linux with `std`: a 2 MiB-aligned mapping of its own,
    /// advised and zeroed by the kernel; see [`memory`]). `false` keeps the global allocator's
    /// memory on 4 KiB pages, for a process that must not take huge pages or to measure the
    /// difference; the filter's clones keep it too.
    ///
    /// ```
    /// let f = blockbloom::BloomFilter::builder()
    ///     .capacity(20_000_000)
    ///     .huge_pages(false)
    ///     .build()?;
    /// assert_eq!(f.huge_page_bytes().unwrap_or(0), 0);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    ///
    /// [`memory`]: crate::memory
    /// [`memory::HUGE_PAGES_FROM_BYTES`]: crate::memory::HUGE_PAGES_FROM_BYTES
    pub fn huge_pages(mut self, huge_pages: bool) -> Builder {
        self.opts.no_huge_pages = !huge_pages;
        self
    }

    /// Sizes, allocates (zeroed) and returns the filter.
    ///
    /// # Errors
    /// [`Error::InvalidOptions`] without a capacity, with more than one size option, or with
    /// `size_in_bytes(0)`; [`Error::InvalidFpr`], [`Error::InvalidBitsPerKey`],
    /// [`Error::InvalidProbes`], [`Error::TooManyBlocks`] (its message names the option to
    /// change), [`Error::FiltersNothing`] (a model rate of
    /// [`USELESS_FPR`](crate::sizing::USELESS_FPR) or more at the capacity),
    /// [`Error::AllocationFailed`], [`Error::UnsupportedIsa`], [`Error::UnknownIsa`].
    ///
    /// ```
    /// let err = blockbloom::BloomFilter::builder().capacity(10).fpr(0.1).bits_per_key(4.0).build();
    /// assert!(matches!(err, Err(blockbloom::Error::InvalidOptions(_))));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn build(self) -> Result<BloomFilter, Error> {
        let o = &self.opts;
        let kernel = o.kernel()?;
        if o.capacity.is_none() && (o.size_in_bytes.is_some() || o.bits_per_key.is_some()) {
            // The best probe count depends on the keys per block: without a key count there
            // is no honest choice, and a guess would quietly cost rate.
            return Err(Error::InvalidOptions(
                "a size budget needs capacity(n) too: the best probe count depends on how \
                 many keys the filter holds",
            ));
        }
        let capacity = o.capacity()?;
        if let Some(k) = o.probes {
            sizing::check_probes(k, o.layout)?;
        }
        let size_options = [
            o.fpr.is_some(),
            o.bits_per_key.is_some(),
            o.size_in_bytes.is_some(),
        ];
        if size_options.iter().filter(|&&s| s).count() > 1 {
            return Err(Error::InvalidOptions(
                "set at most one of fpr, bits_per_key and size_in_bytes",
            ));
        }
        let keys = capacity.max(1);
        let (num_blocks, layout, probes, target_fpr, sized_by) = if let Some(bits) = o.bits_per_key
        {
            if !(bits > 0.0 && bits <= MAX_BITS_PER_KEY) {
                return Err(Error::InvalidBitsPerKey(bits));
            }
            let blocks = (keys as f64 * bits / BLOCK_BITS as f64).ceil().max(1.0);
            let blocks = checked_blocks(blocks as u128, SizedBy::BitsPerKey)?;
            let (layout, probes) =
                sizing::best_shape_for_constructor(keys, blocks, o.layout, o.probes);
            (blocks, layout, probes, None, SizedBy::BitsPerKey)
        } else if let Some(bytes) = o.size_in_bytes {
            if bytes == 0 {
                return Err(Error::InvalidOptions(
                    "size_in_bytes(0): a filter needs at least one 64-byte block",
                ));
            }
            let blocks = checked_blocks((bytes as u128).div_ceil(64), SizedBy::SizeInBytes)?;
            let (layout, probes) =
                sizing::best_shape_for_constructor(keys, blocks, o.layout, o.probes);
            (blocks, layout, probes, None, SizedBy::SizeInBytes)
        } else {
            let fpr = o.fpr.unwrap_or(0.01);
            let plan = match (o.layout, o.probes, self.least_memory) {
                // Nothing named: the default's rule (8x32 within 5% of the least memory).
                (None, None, false) => sizing::plan_default_for_constructor(keys, fpr)?,
                _ => sizing::plan_for_constructor(keys, fpr, o.layout, o.probes, 1)?,
            };
            (
                plan.num_blocks,
                plan.layout,
                plan.probes,
                Some(fpr),
                SizedBy::Fpr,
            )
        };
        // A budget can be too small to filter anything; refuse it as the CLI does. A plan for
        // a target rate below that bound is not checked: the planner kept the same model's
        // rate (margin included) at or below the target. Skipping it matters where filters
        // are built by the thousand: the model's binomial sum cost more than the rest of a
        // remembered construction (perf-reports/2026-12-07-parts-plan.md).
        let planned_below = target_fpr.is_some_and(|fpr| fpr < USELESS_FPR);
        debug_assert!(target_fpr.is_none_or(|fpr| {
            sizing::false_positive_rate(keys, num_blocks, layout, probes) <= fpr
        }));
        if !planned_below {
            let model_fpr = sizing::false_positive_rate(keys, num_blocks, layout, probes);
            if model_fpr >= USELESS_FPR {
                return Err(Error::FiltersNothing {
                    capacity,
                    bytes: num_blocks * 64,
                    model_fpr,
                    sized_by,
                });
            }
        }
        let meta = o
            .meta(num_blocks, layout, probes, capacity, target_fpr, kernel)
            .with_hash(self.key_hash);
        Ok(BloomFilter::from_parts(
            allocate_pages(num_blocks, !o.no_huge_pages)?,
            meta,
        ))
    }
}

/// The options every filter builder shares ([`Builder`], `CountingBuilder`), and the steps
/// that turn them into a filter's metadata. Each builder adds its own options and sizing.
#[derive(Debug, Clone, Default)]
pub(crate) struct Options {
    pub capacity: Option<u64>,
    pub fpr: Option<f64>,
    pub bits_per_key: Option<f64>,
    pub size_in_bytes: Option<u64>,
    pub probes: Option<u32>,
    pub layout: Option<Layout>,
    pub seed: u64,
    pub isa: Option<Isa>,
    /// `Builder::huge_pages(false)`.
    pub no_huge_pages: bool,
}

impl Options {
    /// The kernel asked for, else the active one.
    pub fn kernel(&self) -> Result<&'static Kernel, Error> {
        Kernel::get(match self.isa {
            Some(isa) => isa,
            None => Isa::active()?,
        })
    }

    /// The capacity, which every builder requires.
    pub fn capacity(&self) -> Result<u64, Error> {
        self.capacity
            .ok_or(Error::InvalidOptions("capacity(n) is required"))
    }

    /// The metadata of a filter of this shape with these options' seed.
    pub fn meta(
        &self,
        num_blocks: u64,
        layout: Layout,
        probes: u32,
        capacity: u64,
        target_fpr: Option<f64>,
        kernel: &'static Kernel,
    ) -> Meta {
        Meta::new(
            num_blocks, layout, probes, self.seed, capacity, target_fpr, kernel,
        )
    }
}

fn checked_blocks(blocks: u128, sized_by: SizedBy) -> Result<u64, Error> {
    if blocks > MAX_BLOCKS as u128 {
        Err(Error::TooManyBlocks {
            requested: blocks,
            max: MAX_BLOCKS,
            sized_by,
        })
    } else {
        Ok(blocks as u64)
    }
}
