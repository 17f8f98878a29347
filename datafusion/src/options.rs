//! blockbloom's settings in a DataFusion session: the bounds on what `bloom_filter_agg` may
//! allocate.

use datafusion::common::config::{
    ConfigEntry, ConfigExtension, ConfigField, ExtensionOptions, Visit,
};
use datafusion::common::{Result, config_err, plan_err};

/// Spark's default bound on `expected_items`
/// (`spark.sql.optimizer.runtime.bloomFilter.maxNumItems`).
pub const DEFAULT_MAX_NUM_ITEMS: u64 = 4_000_000;
/// Spark's default bound on a filter's bits (`spark.sql.optimizer.runtime.bloomFilter.maxNumBits`,
/// 8 MiB).
pub const DEFAULT_MAX_NUM_BITS: u64 = 67_108_864;

/// The default of [`BloomOptions::runtime_filter_min_probe_bytes`]: 128 MiB.
pub const DEFAULT_RUNTIME_FILTER_MIN_PROBE_BYTES: u64 = 128 << 20;
/// The default of [`BloomOptions::runtime_filter_min_ratio`].
pub const DEFAULT_RUNTIME_FILTER_MIN_RATIO: u64 = 2;
/// The default of [`BloomOptions::runtime_filter_expected_items`] (Spark's
/// `expectedNumItems`).
pub const DEFAULT_RUNTIME_FILTER_EXPECTED_ITEMS: u64 = 1_000_000;

/// `extensions_options!` with one difference that matters on a cluster: `entries()` names each
/// setting with its `blockbloom.` prefix. Ballista sends a session's settings to the scheduler
/// and executors as `ConfigOptions::entries()`, and sets each there by its key; DataFusion's
/// macro gives extension entries without their prefix, so the scheduler rejected every
/// `blockbloom.*` setting (quietly) and planned with the defaults.
macro_rules! prefixed_options {
    (
        $(#[doc = $struct_doc:tt])*
        pub struct $name:ident {
            $(
                $(#[doc = $doc:tt])*
                pub $field:ident: $ty:ty, default = $default:expr
            )*
        }
    ) => {
        $(#[doc = $struct_doc])*
        #[derive(Debug, Clone, PartialEq)]
        #[non_exhaustive]
        pub struct $name {
            $(
                $(#[doc = $doc])*
                pub $field: $ty,
            )*
        }

        impl Default for $name {
            fn default() -> Self {
                Self { $($field: $default),* }
            }
        }

        impl ConfigField for $name {
            fn visit<V: Visit>(&self, v: &mut V, key_prefix: &str, _description: &'static str) {
                $(
                    let key = format!("{key_prefix}.{}", stringify!($field));
                    self.$field.visit(v, &key, concat!($($doc),*).trim());
                )*
            }

            fn set(&mut self, key: &str, value: &str) -> Result<()> {
                let (key, rest) = key.split_once('.').unwrap_or((key, ""));
                match key {
                    $(stringify!($field) => self.$field.set(rest, value),)*
                    _ => config_err!(
                        "unknown setting {}.{key}",
                        <$name as ConfigExtension>::PREFIX
                    ),
                }
            }
        }

        impl ExtensionOptions for $name {
            fn as_any(&self) -> &dyn std::any::Any {
                self
            }

            fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
                self
            }

            fn cloned(&self) -> Box<dyn ExtensionOptions> {
                Box::new(self.clone())
            }

            fn set(&mut self, key: &str, value: &str) -> Result<()> {
                ConfigField::set(self, key, value)
            }

            fn entries(&self) -> Vec<ConfigEntry> {
                struct Entries(Vec<ConfigEntry>);
                impl Visit for Entries {
                    fn some<V: std::fmt::Display>(
                        &mut self,
                        key: &str,
                        value: V,
                        description: &'static str,
                    ) {
                        self.0.push(ConfigEntry {
                            key: key.to_string(),
                            value: Some(value.to_string()),
                            description,
                        });
                    }

                    fn none(&mut self, key: &str, description: &'static str) {
                        self.0.push(ConfigEntry {
                            key: key.to_string(),
                            value: None,
                            description,
                        });
                    }
                }
                let mut entries = Entries(Vec::new());
                ConfigField::visit(self, &mut entries, <$name as ConfigExtension>::PREFIX, "");
                entries.0
            }
        }
    };
}

prefixed_options! {
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
        /// Whether the distributed runtime filter (blockbloom-ballista's
        /// `BloomRuntimeFilter` rule) may add Bloom filters to joins in this session.
        pub runtime_filter: bool, default = true
        /// The runtime filter fires only where the probe side is estimated to produce at
        /// least this many bytes: its files' bytes, times the share of its rows its own
        /// filters keep where it has any, measured on a sample of its Parquet files (else the
        /// default filter selectivity) (Spark's `applicationSideScanSizeThreshold`, 10
        /// GB, is tuned for its clusters; this is tuned for TPC-H on one machine: see the
        /// rule's docs).
        pub runtime_filter_min_probe_bytes: u64, default = DEFAULT_RUNTIME_FILTER_MIN_PROBE_BYTES
        /// ... and its files at least this many times the bytes of files the filter's source
        /// scans (the build side, or the scan its key comes from; the source is scanned
        /// twice: once for the filter, once for the join).
        pub runtime_filter_min_ratio: u64, default = DEFAULT_RUNTIME_FILTER_MIN_RATIO
        /// Keys a runtime filter is sized for (at 1%) where the build side's rows are not
        /// counted by Parquet footers; else it is sized from them (see the rule's docs).
        pub runtime_filter_expected_items: u64, default = DEFAULT_RUNTIME_FILTER_EXPECTED_ITEMS
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
