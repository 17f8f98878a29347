//! [`CountingBuilder`]: the shared builder core plus the counter width.

use super::{CounterBits, CountingBloomFilter};
use crate::error::Error;
use crate::filter::{Options, allocate_pages};
use crate::isa::Isa;
use crate::layout::Layout;
use crate::sizing;

/// Options for a [`CountingBloomFilter`]: capacity and target false-positive rate, counter
/// width, and optionally layout, probe count, seed and kernel.
///
/// ```
/// use blockbloom::{layout::Layout, CounterBits, CountingBloomFilter};
/// let f = CountingBloomFilter::builder()
///     .capacity(50_000)              // required
///     .fpr(0.001)                    // default 0.01
///     .counter_bits(CounterBits::Eight) // default Four
///     .layout(Layout::Sectors4x128)  // default: the sizing model's choice
///     .seed(1)                       // default 0
///     .build()?;
/// assert!(f.model_fpr(50_000) <= 0.001);
/// # Ok::<(), blockbloom::Error>(())
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct CountingBuilder {
    opts: Options,
    bits: CounterBits,
}

impl Default for CountingBuilder {
    fn default() -> CountingBuilder {
        CountingBuilder::new()
    }
}

impl CountingBuilder {
    /// A builder with the defaults: 1%, 4-bit counters, seed 0.
    ///
    /// ```
    /// assert!(blockbloom::CountingBuilder::new().capacity(10).build().is_ok());
    /// ```
    pub fn new() -> CountingBuilder {
        CountingBuilder {
            opts: Options {
                fpr: Some(0.01),
                ..Options::default()
            },
            bits: CounterBits::Four,
        }
    }

    /// Keys the filter is sized for. Required.
    ///
    /// ```
    /// assert!(blockbloom::CountingBloomFilter::builder().build().is_err());
    /// ```
    pub fn capacity(mut self, keys: u64) -> CountingBuilder {
        self.opts.capacity = Some(keys);
        self
    }

    /// Target false-positive rate at `capacity` keys (default 0.01).
    ///
    /// ```
    /// let f = blockbloom::CountingBloomFilter::builder().capacity(100).fpr(0.1).build()?;
    /// assert!(f.model_fpr(100) <= 0.1);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn fpr(mut self, fpr: f64) -> CountingBuilder {
        self.opts.fpr = Some(fpr);
        self
    }

    /// Counter width (default [`CounterBits::Four`]).
    ///
    /// ```
    /// use blockbloom::{CounterBits, CountingBloomFilter};
    /// let f = CountingBloomFilter::builder().capacity(100).counter_bits(CounterBits::Eight).build()?;
    /// assert_eq!(f.counter_bits(), CounterBits::Eight);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn counter_bits(mut self, bits: CounterBits) -> CountingBuilder {
        self.bits = bits;
        self
    }

    /// Fixes the block layout (default: the sizing model's choice).
    ///
    /// ```
    /// use blockbloom::{layout::Layout, CountingBloomFilter};
    /// let f = CountingBloomFilter::builder().capacity(100).layout(Layout::Sectors8x64).build()?;
    /// assert_eq!(f.layout(), Layout::Sectors8x64);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn layout(mut self, layout: Layout) -> CountingBuilder {
        self.opts.layout = Some(layout);
        self
    }

    /// Probes per key (a multiple of the layout's sectors, at most 32; default: the best).
    ///
    /// ```
    /// let b = blockbloom::CountingBloomFilter::builder().capacity(100);
    /// assert_eq!(b.clone().probes(12).build()?.probes(), 12);
    /// assert!(b.probes(6).build().is_err());
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn probes(mut self, k: u32) -> CountingBuilder {
        self.opts.probes = Some(k);
        self
    }

    /// Hash seed (default 0).
    ///
    /// ```
    /// let f = blockbloom::CountingBloomFilter::builder().capacity(10).seed(9).build()?;
    /// assert_eq!(f.hash(&1u64), blockbloom::hash::hash_u64(1, 9));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn seed(mut self, seed: u64) -> CountingBuilder {
        self.opts.seed = seed;
        self
    }

    /// A secret random seed, as [`Builder::keyed`](crate::Builder::keyed).
    #[cfg(feature = "std")]
    pub fn keyed(self) -> CountingBuilder {
        self.seed(crate::hashing::random_seed())
    }

    /// Kernel tier for batch hashing (default: [`Isa::active`]).
    ///
    /// ```
    /// use blockbloom::{CountingBloomFilter, Isa};
    /// let f = CountingBloomFilter::builder().capacity(10).isa(Isa::Portable).build()?;
    /// assert_eq!(f.isa(), Isa::Portable);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    pub fn isa(mut self, isa: Isa) -> CountingBuilder {
        self.opts.isa = Some(isa);
        self
    }

    /// Whether large counters ask for transparent huge pages (default: yes, on Linux), as
    /// [`Builder::huge_pages`](crate::Builder::huge_pages).
    pub fn huge_pages(mut self, huge_pages: bool) -> CountingBuilder {
        self.opts.no_huge_pages = !huge_pages;
        self
    }

    /// Sizes, allocates (zeroed) and returns the filter.
    ///
    /// # Errors
    /// [`Error::InvalidOptions`] without a capacity; [`Error::InvalidFpr`],
    /// [`Error::InvalidProbes`], [`Error::TooManyBlocks`], [`Error::AllocationFailed`],
    /// [`Error::UnsupportedIsa`], [`Error::UnknownIsa`].
    ///
    /// ```
    /// let err = blockbloom::CountingBloomFilter::builder().capacity(10).fpr(2.0).build();
    /// assert!(matches!(err, Err(blockbloom::Error::InvalidFpr(_))));
    /// ```
    pub fn build(self) -> Result<CountingBloomFilter, Error> {
        let o = &self.opts;
        let kernel = o.kernel()?;
        let capacity = o.capacity()?;
        let fpr = o.fpr.unwrap_or(0.01);
        let plan = sizing::plan_for_constructor(
            capacity.max(1),
            fpr,
            o.layout,
            o.probes,
            self.bits.bits(),
        )?;
        let meta = o.meta(
            plan.num_blocks,
            plan.layout,
            plan.probes,
            capacity,
            Some(fpr),
            kernel,
        );
        Ok(CountingBloomFilter::from_counters(
            allocate_pages(plan.num_blocks, !o.no_huge_pages)?,
            meta,
            self.bits,
            false,
        ))
    }
}
