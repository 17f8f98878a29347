//! blockbloom inside DataFusion: SQL functions that build and probe Bloom filters, and a
//! Bloom join runtime filter.
//!
//! * [`register`] adds two SQL functions to a [`SessionContext`], named and ordered as Spark's
//!   (so a query moves between the engines):
//!   - `bloom_filter_agg(expr [, expected_items [, fpr | num_bits]])`, an aggregate returning a
//!     filter's bytes ([`BloomFilterAgg`]);
//!   - `might_contain(filter, expr)`, a Boolean per key, null in null out ([`MightContain`]).
//! * [`BloomJoinFilter`] is a physical optimizer rule: for an equi-join whose probe side is
//!   large, it fills a blockbloom filter from the build side as the join collects it and drops
//!   probe rows that cannot match before they are repartitioned or hashed.
//!
//! This crate re-exports the DataFusion it is built against as [`datafusion`], so a program
//! names one DataFusion (and one arrow) through it.
//!
//! # SQL functions
//!
//! ```
//! use blockbloom_datafusion::datafusion::prelude::SessionContext;
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> blockbloom_datafusion::datafusion::error::Result<()> {
//! let ctx = SessionContext::new();
//! blockbloom_datafusion::register(&ctx);
//! ctx.sql("CREATE TABLE dim(k BIGINT) AS VALUES (1), (5), (NULL)").await?;
//! ctx.sql("CREATE TABLE fact(k BIGINT) AS VALUES (1), (2), (5), (NULL)").await?;
//! let hits = ctx
//!     .sql(
//!         "SELECT k FROM fact \
//!          WHERE might_contain((SELECT bloom_filter_agg(k, 1000, 0.01) FROM dim), k) \
//!          ORDER BY k",
//!     )
//!     .await?
//!     .collect()
//!     .await?;
//! # use blockbloom_datafusion::datafusion::arrow::array::AsArray;
//! # use blockbloom_datafusion::datafusion::arrow::datatypes::Int64Type;
//! let keys: Vec<i64> = hits[0].column(0).as_primitive::<Int64Type>().values().to_vec();
//! assert!(keys.contains(&1) && keys.contains(&5)); // 2 only as a false positive (1%)
//! # Ok(())
//! # }
//! ```
//!
//! **Key types.** `Int8` to `Int64` and `UInt8` to `UInt64` are hashed as their 64-bit value
//! (signed types sign-extended), read in place, as blockbloom hashes every integer on every
//! path: a filter built from an `INT` column answers a `BIGINT` literal (as in Spark), and a
//! filter built in Rust from `&[i32]`, an Arrow `Int16Array` or Python's `int`s answers
//! `might_contain` over a `TINYINT` column of the same values, and the other way round.
//! `Utf8`, `LargeUtf8`, `Utf8View`, `Binary`, `LargeBinary`, `BinaryView` and
//! `FixedSizeBinary(16)` are hashed as their bytes, read in place (a string and a binary of the
//! same bytes are one key); a dictionary as its values. Any other type is a plan error naming
//! it. The functions cast their key argument themselves at execution, so a plan that skipped
//! DataFusion's type coercion still hashes the same keys.
//!
//! **Sizes.** `bloom_filter_agg(k)` sizes for 1,000,000 keys at 3% (Spark's defaults);
//! `bloom_filter_agg(k, n, 0.001)` for `n` keys at 0.1%; `bloom_filter_agg(k, n, 8388608)`
//! (an integer third argument) for 8,388,608 bits, Spark's form. Every partition builds a
//! filter of that one shape and the partial states merge by union, so the result does not
//! depend on the partitioning. As in Spark, sizes are bounded: `n` is clamped to
//! `blockbloom.max_num_items` (default 4,000,000) and the bits to `blockbloom.max_num_bits`
//! (default 67,108,864, 8 MiB), both settable with `SET` ([`BloomOptions`]); a filter the
//! allocator refuses is an error, never an abort.
//!
//! **Decoding once.** A literal or parameter filter is decoded at planning (a corrupt one is
//! a plan error). A filter from an uncorrelated scalar subquery, as in the example above, is
//! evaluated once by DataFusion 55 (`ScalarSubqueryExec`, the default of
//! `datafusion.optimizer.enable_physical_uncorrelated_scalar_subquery`) and reaches
//! `might_contain` as one value per batch, decoded once and kept between batches. With that
//! option off (as some distributed engines set it), the subquery becomes a join and the filter
//! a column of equal values: each run of rows with the same filter is answered as one batch
//! with one decode, and a row is matched to the run by its length and 64-byte header (which
//! holds the checksum of the whole encoding), not by comparing every byte of a large filter
//! per row. A corrupt filter or an unsupported key type is an error naming it, never a panic.
//!
//! # The join runtime filter
//!
//! See [`BloomJoinFilter`] for where it fires and its thresholds, [`JoinFilterMetrics`] for
//! what it did, and `docs/guide/datafusion.md` in the repository for measurements on TPC-H.
//! In `EXPLAIN` it shows as `BloomBuildExec` and `BloomProbeExec` nodes.

mod functions;
mod join;
mod keys;
mod options;

use std::sync::Arc;

pub use datafusion;
use datafusion::logical_expr::{AggregateUDF, ScalarUDF};
use datafusion::prelude::SessionContext;

pub use functions::{BloomFilterAgg, DEFAULT_EXPECTED_ITEMS, DEFAULT_FPR, MightContain};
pub use join::{BloomBuildExec, BloomJoinFilter, BloomProbeExec, JoinFilterMetrics};
pub use options::{
    BloomOptions, DEFAULT_MAX_NUM_BITS, DEFAULT_MAX_NUM_ITEMS,
    DEFAULT_RUNTIME_FILTER_EXPECTED_ITEMS, DEFAULT_RUNTIME_FILTER_MIN_PROBE_BYTES,
    DEFAULT_RUNTIME_FILTER_MIN_RATIO,
};

/// Registers `bloom_filter_agg` and `might_contain` with `ctx` (see the [crate] docs), and
/// adds [`BloomOptions`] to its configuration unless it holds them already, so that
/// `SET blockbloom.max_num_bits = ...` works.
pub fn register(ctx: &SessionContext) {
    ctx.register_udaf(AggregateUDF::from(BloomFilterAgg::default()));
    ctx.register_udf(ScalarUDF::from(MightContain::default()));
    let state = ctx.state_ref();
    let mut state = state.write();
    let extensions = &mut state.config_mut().options_mut().extensions;
    if extensions.get::<BloomOptions>().is_none() {
        extensions.insert(BloomOptions::default());
    }
}

/// A [`SessionContext`] with DataFusion's defaults, the functions [`register`]ed, and
/// [`BloomJoinFilter::default`] added after DataFusion's physical optimizer rules.
pub fn session_context() -> SessionContext {
    session_context_with(
        datafusion::prelude::SessionConfig::new(),
        BloomJoinFilter::default(),
    )
}

/// [`session_context`] with a configuration and rule of your choosing.
pub fn session_context_with(
    config: datafusion::prelude::SessionConfig,
    rule: BloomJoinFilter,
) -> SessionContext {
    let state = datafusion::execution::SessionStateBuilder::new()
        .with_config(config)
        .with_default_features()
        .with_physical_optimizer_rule(Arc::new(rule))
        .build();
    let ctx = SessionContext::new_with_state(state);
    register(&ctx);
    ctx
}
