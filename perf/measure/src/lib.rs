//! `blockbloom-measure`: the measurement core shared by the `blockbloom` user tool (its `demo`)
//! and the `blockbloom-perf` measurement tool (`bench`, `report`, `sweep`, `sizing`, `family`).
//!
//! * [`timing`]: one timer, one median, one ns-per-key conversion;
//! * [`format`](mod@format): thousands separators, byte sizes, percentages;
//! * [`interval`]: Wilson score intervals of measured rates;
//! * [`json`]: results as JSON documents (`--format json`);
//! * [`progress`]: timestamped progress lines on stderr;
//! * [`table`]: tables printed as aligned text, as Markdown or as JSON;
//! * [`system`]: the machine, build and checkout facts a measurement depends on;
//! * [`keys`]: the SplitMix64 key streams and the mixed lookup workload;
//! * [`subject`]: the [`Subject`](subject::Subject) trait and the single-thread timing path;
//! * [`suite`]: every kernel at one size (the tables `demo` and `bench` print);
//! * [`concurrent`]: concurrent insert with several threads;
//! * [`console`]: how `demo` and `bench` print those results.
//!
//! Why a crate of its own rather than `blockbloom-perf` as a library with its heavy parts
//! behind features: cargo unifies features across the packages one command builds, so
//! `cargo build --workspace` or `cargo clippy --workspace` would switch the peers and plotters
//! on for the `blockbloom` binary too. A separate crate without those dependencies keeps the
//! user tool's dependency tree small however the workspace is built. Peer filters plug in
//! through [`suite::Peer`] and [`concurrent::ConcurrentPeer`], which `blockbloom-perf`
//! implements for the crates it compares against.

pub mod concurrent;
pub mod console;
pub mod format;
pub mod interval;
pub mod json;
pub mod keys;
pub mod progress;
pub mod subject;
pub mod suite;
pub mod system;
pub mod table;
pub mod timing;
