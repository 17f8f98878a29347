//! blockbloom on [Ballista](https://datafusion.apache.org/ballista/): the SQL functions of
//! [`blockbloom_datafusion`] on every scheduler and executor, and a distributed Bloom join.
//!
//! * **The functions**: `bloom_filter_agg` and `might_contain` (see [`blockbloom_datafusion`])
//!   in every process's function registry, with [`BloomLogicalCodec`] and
//!   [`BloomPhysicalCodec`] carrying what a plan holds of them between processes.
//! * **A distributed runtime filter** ([`BloomRuntimeFilter`]): for a join whose probe side is
//!   a large scan and whose build side is selective, a filter of the build side's keys,
//!   built per partition and merged by union, drops the probe rows that cannot match where
//!   they are scanned, before the shuffle writes them.
//! * [`standalone`]: an in-process scheduler and executor with all of the above.
//! * [`remote`]: a client of a cluster of `blockbloom-scheduler` and `blockbloom-executor`
//!   processes (the binaries of this crate: Ballista's, with the above installed).
//!
//! This crate re-exports the [`ballista`] and [`datafusion`] it is built on.
//!
//! # In one process
//!
//! ```no_run
//! # #[tokio::main]
//! # async fn main() -> blockbloom_ballista::datafusion::error::Result<()> {
//! let ctx = blockbloom_ballista::standalone().await?;
//! ctx.register_parquet("orders", "data/orders.parquet", Default::default()).await?;
//! ctx.sql("SELECT count(*) FROM orders").await?.show().await?;
//! # Ok(())
//! # }
//! ```
//!
//! # On a cluster
//!
//! ```text
//! blockbloom-scheduler --bind-port 50050
//! blockbloom-executor --scheduler-host sched.example --scheduler-port 50050 --bind-port 50051
//! blockbloom-executor --scheduler-host sched.example --scheduler-port 50050 --bind-port 50061
//! ```
//!
//! and in the client, `blockbloom_ballista::remote("df://sched.example:50050").await?`.
//! `datafusion/ballista/README.md` in the repository tells when the rule fires, what it costs,
//! and gives its measurement on TPC-H.

mod codec;
mod exec;
mod rule;
mod sample;

#[doc(hidden)]
pub mod cli;

use std::sync::Arc;

pub use ballista;
pub use datafusion;

pub use codec::{BloomLogicalCodec, BloomPhysicalCodec};
pub use exec::{RuntimeFilterExec, RuntimeFilterPlanner, with_runtime_filter_exec};
pub use rule::{BloomRuntimeFilter, FILTER_COLUMN_PREFIX};

use ballista::prelude::{SessionConfigExt, SessionContextExt};
use blockbloom_datafusion::{BloomFilterAgg, BloomOptions, MightContain};
use datafusion::common::Result;
use datafusion::execution::{FunctionRegistry, SessionState, SessionStateBuilder};
use datafusion::logical_expr::{AggregateUDF, ScalarUDF};
use datafusion::prelude::{SessionConfig, SessionContext};

/// A Ballista session configuration with blockbloom's: [`BloomOptions`] (so `SET
/// blockbloom.runtime_filter = false` works) and the codecs.
pub fn session_config() -> SessionConfig {
    with_blockbloom_config(SessionConfig::new_with_ballista())
}

/// `config` with blockbloom's options (unless it holds them already) and codecs.
pub fn with_blockbloom_config(config: SessionConfig) -> SessionConfig {
    let config = if config.options().extensions.get::<BloomOptions>().is_none() {
        config.with_option_extension(BloomOptions::default())
    } else {
        config
    };
    config
        .with_ballista_logical_extension_codec(Arc::new(BloomLogicalCodec::default()))
        .with_ballista_physical_extension_codec(Arc::new(BloomPhysicalCodec::default()))
}

/// A session state of `config` (see [`with_blockbloom_config`]) as Ballista builds one for a
/// scheduler, with blockbloom's functions, [`BloomRuntimeFilter`] after DataFusion's
/// optimizer rules, and [`RuntimeFilterPlanner`] (which plans the rule's joins as
/// [`RuntimeFilterExec`]). What schedulers and clients plan with (a client's Ballista
/// replaces the planner with the one that sends the plan to its scheduler).
pub fn session_state(config: SessionConfig) -> Result<SessionState> {
    let state = ballista_core::utils::default_session_builder(with_blockbloom_config(config))?;
    let mut state = SessionStateBuilder::new_from_existing(state)
        .with_optimizer_rule(Arc::new(BloomRuntimeFilter::default()))
        .with_query_planner(Arc::new(RuntimeFilterPlanner))
        .build();
    register_functions(&mut state)?;
    Ok(state)
}

/// Adds `bloom_filter_agg` and `might_contain` to `registry`.
pub fn register_functions(registry: &mut dyn FunctionRegistry) -> Result<()> {
    registry.register_udaf(Arc::new(AggregateUDF::from(BloomFilterAgg::default())))?;
    registry.register_udf(Arc::new(ScalarUDF::from(MightContain::default())))?;
    Ok(())
}

/// An in-process Ballista cluster (a scheduler and an executor, on free ports of
/// `localhost`) with blockbloom's functions, codecs and runtime filter, and a context that
/// runs its queries there.
pub async fn standalone() -> Result<SessionContext> {
    standalone_with_config(session_config()).await
}

/// [`standalone`] with a configuration of your choosing (for example
/// `session_config().with_ballista_standalone_parallelism(4)`).
pub async fn standalone_with_config(config: SessionConfig) -> Result<SessionContext> {
    with_functions(SessionContext::standalone_with_state(session_state(config)?).await?)
}

/// A context that runs its queries on the Ballista cluster at `url` (`df://host:port`),
/// whose scheduler and executors are `blockbloom-scheduler` and `blockbloom-executor` (or
/// have blockbloom's functions and codecs installed).
pub async fn remote(url: &str) -> Result<SessionContext> {
    with_functions(SessionContext::remote_with_state(url, session_state(session_config())?).await?)
}

/// `ctx` with blockbloom's functions: Ballista's client state keeps only its own set
/// (`upgrade_for_ballista`), so they are registered again on the context it returns.
fn with_functions(ctx: SessionContext) -> Result<SessionContext> {
    blockbloom_datafusion::register(&ctx);
    Ok(ctx)
}
