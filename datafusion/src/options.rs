//! blockbloom's settings in a DataFusion session: the bounds on what `bloom_filter_agg` may
//! allocate.

use datafusion::common::config::ConfigExtension;
use datafusion::common::{Result, extensions_options, plan_err};

/// Spark's default bound on `expected_items`
/// (`spark.sql.optimizer.runtime.bloomFilter.maxNumItems`).
pub const DEFAULT_MAX_NUM_ITEMS: u64 = 4_000_000;
/// Spark's default bound on a filter's bits (`spark.sql.optimizer.runtime.bloomFilter.maxNumBits`,
/// 8 MiB).
pub const DEFAULT_MAX_NUM_BITS: u64 = 67_108_864;

extensions_options! {
    /// blockbloom's settings in a DataFusion session, under the `blockbloom.` prefix:
    /// `SET blockbloom.max_num_items = 1000000`, `SET blockbloom.max_num_bits = 8388608`.
    /// [`register`](crate::register) and [`session_context`](crate::session_context) add them
    /// to the session; `SessionConfig::with_option_extension(BloomOptions::default())` does
    /// too. Without them the defaults apply.
    pub struct BloomOptions {
        /// The most keys a `bloom_filter_agg` filter is sized for: a larger `expected_items`
        /// is clamped to it (Spark's `maxNumItems`).
        pub max_num_items: u64, default = DEFAULT_MAX_NUM_ITEMS
        /// The most bits a `bloom_filter_agg` filter holds, whether asked for as a number of
        /// bits or planned for a rate (Spark's `maxNumBits`). Each partition allocates one such
        /// filter while it aggregates.
        pub max_num_bits: u64, default = DEFAULT_MAX_NUM_BITS
    }
}

impl ConfigExtension for BloomOptions {
    const PREFIX: &'static str = "blockbloom";
}

impl BloomOptions {
    /// The bounds, checked (each above 0).
    pub(crate) fn limits(&self) -> Result<Limits> {
        if self.max_num_items == 0 || self.max_num_bits == 0 {
            return plan_err!(
                "blockbloom.max_num_items and blockbloom.max_num_bits must be above 0, got {} \
                 and {}",
                self.max_num_items,
                self.max_num_bits
            );
        }
        Ok(Limits {
            max_items: self.max_num_items,
            max_bits: self.max_num_bits,
        })
    }
}

/// The bounds one `bloom_filter_agg` call was planned with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Limits {
    pub max_items: u64,
    pub max_bits: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_items: DEFAULT_MAX_NUM_ITEMS,
            max_bits: DEFAULT_MAX_NUM_BITS,
        }
    }
}
