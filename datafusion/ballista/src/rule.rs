//! The distributed runtime filter: a logical rule that puts a Bloom filter of a join's build
//! side under its probe side, where the probe side is scanned, before its shuffle.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use ballista_core::config::BallistaConfig;
use blockbloom_datafusion::{BloomFilterAgg, BloomOptions, MightContain};
use datafusion::arrow::datatypes::DataType;
use datafusion::catalog::default_table_source::source_as_provider;
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::{Column, NullEquality, Result};
use datafusion::datasource::listing::ListingTable;
use datafusion::logical_expr::{
    AggregateUDF, Expr, ExprSchemable, Join, JoinType, LogicalPlan, LogicalPlanBuilder, ScalarUDF,
    cast,
};
use datafusion::optimizer::{OptimizerConfig, OptimizerRule};
use datafusion::prelude::lit;

use crate::sample::filter_share;

/// The prefix of the column that carries a runtime filter's bytes: how the rule knows a
/// probe side it already filtered.
pub const FILTER_COLUMN_PREFIX: &str = "__blockbloom_runtime_filter";

/// The false-positive rate a runtime filter is sized for.
const RUNTIME_FILTER_FPR: f64 = 0.01;

/// The fewest keys a runtime filter is sized for.
const MIN_ITEMS: u64 = 1024;

/// The Bloom join across machines, as Spark's `InjectRuntimeFilter` does it: for an equi-join
/// whose probe side is a large scan and whose build side is selective, the probe side
/// becomes
///
/// ```text
/// probe  WHERE might_contain((SELECT bloom_filter_agg(build_key) FROM build), probe_key)
/// ```
///
/// written as a right semi join of the one-row aggregate with the probe side on
/// `might_contain(filter, probe_key)` (its output is the probe side's rows and schema), which
/// [`RuntimeFilterPlanner`](crate::RuntimeFilterPlanner) plans as a
/// [`RuntimeFilterExec`](crate::RuntimeFilterExec) and DataFusion's planner as a nested-loop
/// join whose collected side is the one row. Every engine that runs DataFusion plans
/// runs it. On Ballista the aggregate takes two stages of its own: one partial filter per
/// partition of the build side, then (the aggregate is grouped by a constant, so the partials
/// cross a hash exchange to one task) their union, merged once. Every task that scans the
/// probe side reads that one merged row, and the rows it rules out are dropped before they
/// are hashed into the join's shuffle. Null keys never match an equi-join, and `might_contain` of a null key is
/// null, which the filter drops too.
///
/// # When it fires
///
/// For a join with at least one equality (`a.k = b.k`) whose keys are integers or strings
/// (the types `might_contain` takes), where nulls never match, and where, for the side it
/// would filter (the *probe* side) and the other (the *build* side):
///
/// * the join drops the probe side's unmatched rows: an inner join (either side), a left
///   semi or right outer join (the left side), a right semi or left outer join (the right);
/// * the probe side is a scan (under projections, filters and aliases): the filter goes
///   where its rows are read, in the same stage;
/// * the build side is selective: it holds a filter (a `WHERE` on a scan, pushed into the
///   scan or not);
/// * both sides' scans are of listing tables (Parquet, CSV, ...) on local disk; the probe
///   side's estimated output (its files' bytes, times the share of its rows its own filters
///   keep where it has any: measured on a sample, up to 8,192 rows from each of up to 8 row
///   groups spread over its Parquet files, else `datafusion.optimizer.default_filter_selectivity`,
///   20%) is at least `blockbloom.runtime_filter_min_probe_bytes` (128 MiB), since the filter's two
///   extra stages cost about 0.1 s a query whatever it saves (TPC-H at scale 1 on 2 cores:
///   filters that saved 2-8 MB of shuffle made q2, q16, q19 and q20 0.83x-0.88x as fast);
///   and its files hold at least `blockbloom.runtime_filter_min_ratio` times the bytes of
///   the filter's source (the build side, or the scan its key comes from: below): the source
///   is read twice, once for the filter and once for the join, so the rule asks for a probe
///   side much larger than it. A table whose size it cannot see (in memory, on an object
///   store) does not qualify: the rule does not guess;
/// * the build side would not be broadcast: its files' bytes times
///   `datafusion.optimizer.default_filter_selectivity` (20%, the share of rows DataFusion
///   takes a filter to keep) reach the larger of
///   `datafusion.optimizer.hash_join_single_partition_threshold` and
///   `ballista.optimizer.broadcast_join_threshold_bytes` (both 128 MiB on Ballista's
///   defaults). A smaller build side is collected whole into every task of the probe side's
///   stage (Ballista's adaptive planner measures it after its filters and broadcasts it), so
///   the probe side is not shuffled for this join and the join itself drops its rows where
///   they are read: a filter there only costs;
/// * `blockbloom.runtime_filter` is true (the default).
///
/// The filter is made of the build side's keys; where the build side is a join, of the keys
/// of the scan (under projections, filters and aliases) the build key comes from, when every
/// node on the way passes that column's values on (joins, filters, projections, aliases,
/// sorts, limits) and the scan holds a filter of its own: a superset of the build side's
/// keys, for a fraction of the work (Spark's rule picks its filter's side the same way).
///
/// The filter is sized at 1% for its source's rows as its Parquet files' footers count
/// them, times `datafusion.optimizer.default_filter_selectivity` (20%: the share of rows
/// DataFusion takes a filter to keep), between 1,024 and `blockbloom.max_num_items`; where
/// the files are not Parquet, for `blockbloom.runtime_filter_expected_items`.
///
/// # Where it shows
///
/// In `EXPLAIN`'s logical plan, as a `RightSemi` join on
/// `might_contain(__blockbloom_runtime_filter_N, key)` of an aggregate
/// `bloom_filter_agg(...) AS __blockbloom_runtime_filter_N` of the build side with the probe
/// side's scan. A scheduler that plans with [`RuntimeFilterPlanner`](crate::RuntimeFilterPlanner)
/// (this crate's do) runs that join as a
/// [`RuntimeFilterExec`](crate::RuntimeFilterExec)`: might_contain(__blockbloom_runtime_filter_N, key)`;
/// DataFusion's own planner, as a `NestedLoopJoinExec`.
#[derive(Debug, Default)]
pub struct BloomRuntimeFilter {
    /// Numbers the filter columns of one plan apart.
    next: AtomicU64,
}

impl OptimizerRule for BloomRuntimeFilter {
    fn name(&self) -> &str {
        "blockbloom_runtime_filter"
    }

    fn rewrite(
        &self,
        plan: LogicalPlan,
        config: &dyn OptimizerConfig,
    ) -> Result<Transformed<LogicalPlan>> {
        let options = config
            .options()
            .extensions
            .get::<BloomOptions>()
            .cloned()
            .unwrap_or_default();
        if !options.runtime_filter {
            return Ok(Transformed::no(plan));
        }
        let optimizer = &config.options().optimizer;
        // Ballista sets DataFusion's threshold to its broadcast threshold; a session that
        // changed only Ballista's is read too.
        let broadcast_below = config
            .options()
            .extensions
            .get::<BallistaConfig>()
            .map_or(0, |b| b.broadcast_join_threshold_bytes() as u64);
        let thresholds = Thresholds {
            options,
            collect_below: (optimizer.hash_join_single_partition_threshold as u64)
                .max(broadcast_below),
            filter_selectivity: optimizer.default_filter_selectivity,
        };
        self.inject(plan, &thresholds)
    }
}

/// What the rule reads from the session.
struct Thresholds {
    options: BloomOptions,
    /// A join whose build side is below this many bytes collects it whole into every task
    /// (DataFusion's `hash_join_single_partition_threshold`, which Ballista sets to its
    /// broadcast threshold): its probe side is not shuffled for it.
    collect_below: u64,
    /// The percentage of rows DataFusion takes a filter to keep
    /// (`datafusion.optimizer.default_filter_selectivity`).
    filter_selectivity: u8,
}

/// Which input of a join a runtime filter goes under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Left,
    Right,
}

/// A runtime filter the rule decided on: under `probe`, of `source`'s `source_key`s.
struct Decision {
    probe: Side,
    probe_key: Expr,
    /// What the filter is made of: the build side, or the scan its key comes from.
    source: Arc<LogicalPlan>,
    source_key: Expr,
    /// Keys the filter is sized for.
    items: u64,
}

impl BloomRuntimeFilter {
    fn inject(&self, plan: LogicalPlan, t: &Thresholds) -> Result<Transformed<LogicalPlan>> {
        // A filter's own build side is left as it is (it is a copy of a join's input).
        if creates_filter(&plan) {
            return Ok(Transformed::no(plan));
        }
        let LogicalPlan::Join(join) = plan else {
            return plan.map_children(|child| self.inject(child, t));
        };
        // Decided on the inputs as they came (a decision holds the subtree its filter is
        // made of), so that a filter's build side is never one this rule filtered in turn.
        let decisions = decide(&join, t);
        let mut out = LogicalPlan::Join(join).map_children(|child| self.inject(child, t))?;
        if decisions.is_empty() {
            return Ok(out);
        }
        let LogicalPlan::Join(join) = &mut out.data else {
            unreachable!("map_children keeps the node");
        };
        for d in decisions {
            let probe = match d.probe {
                Side::Left => &mut join.left,
                Side::Right => &mut join.right,
            };
            let filtered = self.filtered(
                Arc::clone(probe),
                d.source,
                d.probe_key,
                d.source_key,
                d.items,
                &t.options,
            )?;
            *probe = Arc::new(filtered);
        }
        out.transformed = true;
        Ok(out)
    }

    /// `probe` without the rows whose key the filter of `build`'s keys rules out, with
    /// `probe`'s schema.
    fn filtered(
        &self,
        probe: Arc<LogicalPlan>,
        build: Arc<LogicalPlan>,
        probe_key: Expr,
        build_key: Expr,
        items: u64,
        options: &BloomOptions,
    ) -> Result<LogicalPlan> {
        let name = format!(
            "{FILTER_COLUMN_PREFIX}_{}",
            self.next.fetch_add(1, Ordering::Relaxed)
        );
        let agg = AggregateUDF::from(BloomFilterAgg::with_bounds(
            options.max_num_items,
            options.max_num_bits,
        )?);
        // Grouped by a constant: the partial filters (one a partition of the build side) go
        // through a hash exchange to the one task that merges them, and every task of the
        // probe side reads that one merged filter. Ungrouped, each probe task would fetch every
        // partial filter and merge them all itself (16 tasks x 16 partials of 400 KiB each
        // on q3 at scale 1). Grouped, an empty build side gives no row rather than an empty
        // filter: the semi join then drops every probe row, as the join would.
        let filter = LogicalPlanBuilder::from(build)
            .aggregate(
                vec![lit(0i32).alias(format!("{name}_group"))],
                vec![
                    agg.call(vec![build_key, lit(items as i64), lit(RUNTIME_FILTER_FPR)])
                        .alias(&name),
                ],
            )?
            // As a view: the join that evaluates `might_contain` repeats the filter's one
            // row for every probe row of a batch, and a view repeats 16 bytes where a
            // `Binary` value would repeat the whole filter (its offsets overflow at 2 GiB).
            .project(vec![
                cast(Expr::Column(Column::from_name(&name)), DataType::BinaryView).alias(&name),
            ])?
            .build()?;
        let might_contain = ScalarUDF::from(MightContain::default());
        // A semi join, not a cross join and a filter: each probe row comes out at most once
        // however many rows the filter's side turns out to have, and no projection is needed.
        LogicalPlanBuilder::from(filter)
            .join_on(
                Arc::unwrap_or_clone(probe),
                JoinType::RightSemi,
                vec![might_contain.call(vec![Expr::Column(Column::from_name(&name)), probe_key])],
            )?
            .build()
    }
}

/// Whether `plan` is a runtime filter's aggregate (its one output column is the filter).
fn creates_filter(plan: &LogicalPlan) -> bool {
    matches!(plan, LogicalPlan::Aggregate(_))
        && plan
            .schema()
            .fields()
            .iter()
            .any(|f| f.name().starts_with(FILTER_COLUMN_PREFIX))
}

/// Whether a runtime filter is already under `plan`.
fn has_runtime_filter(plan: &LogicalPlan) -> bool {
    any_node(plan, creates_filter)
}

/// Whether a node of `plan` satisfies `test`.
fn any_node(plan: &LogicalPlan, test: impl Fn(&LogicalPlan) -> bool) -> bool {
    let mut found = false;
    plan.apply(|node| {
        found = test(node);
        Ok(if found {
            TreeNodeRecursion::Stop
        } else {
            TreeNodeRecursion::Continue
        })
    })
    .expect("the visit does not fail");
    found
}

/// The runtime filters `join` should get (see [`BloomRuntimeFilter`] for the conditions).
fn decide(join: &Join, t: &Thresholds) -> Vec<Decision> {
    let options = &t.options;
    if join.on.is_empty() || join.null_equality != NullEquality::NullEqualsNothing {
        return Vec::new();
    }
    let (left_ok, right_ok) = match join.join_type {
        JoinType::Inner => (true, true),
        JoinType::LeftSemi | JoinType::Right => (true, false),
        JoinType::RightSemi | JoinType::Left => (false, true),
        _ => (false, false),
    };
    let mut out = Vec::new();
    for (side, ok) in [(Side::Left, left_ok), (Side::Right, right_ok)] {
        if !ok {
            continue;
        }
        let (probe, build) = match side {
            Side::Left => (&join.left, &join.right),
            Side::Right => (&join.right, &join.left),
        };
        // A side already filtered is neither filtered again nor a filter's source (a
        // filter's build side then repeats another filter's work).
        if has_runtime_filter(probe)
            || has_runtime_filter(build)
            || !is_scan(probe)
            || !is_selective(build)
        {
            continue;
        }
        let Some((probe_key, build_key)) = join.on.iter().find_map(|(l, r)| {
            let (p, b) = match side {
                Side::Left => (l, r),
                Side::Right => (r, l),
            };
            let t = p.get_type(probe.schema()).ok()?;
            (t.is_integer()
                || matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View))
            .then(|| (p.clone(), b.clone()))
        }) else {
            continue;
        };
        let (Some(probe_files), Some(build_files)) = (scan_files(probe), scan_files(build)) else {
            continue;
        };
        // The filter is made of the scan the build key comes from, where the build side
        // passes that scan's key values on (through joins, filters, projections) and the scan
        // is selective itself: its keys are a superset of the build side's, for a fraction
        // of the work (q3's lineitem filter: the orders of a date range, not their join with
        // customer). Else of the whole build side.
        let (source, source_key) = match key_source(build, &build_key) {
            Some((scan, key)) if is_selective(&scan) => (Arc::new(scan), key),
            _ => (Arc::clone(build), build_key.clone()),
        };
        let Some(source_files) = scan_files(&source) else {
            continue;
        };
        let bytes = |files: &[(PathBuf, u64)]| files.iter().map(|(_, len)| len).sum::<u64>();
        let (probe_bytes, build_bytes) = (bytes(&probe_files), bytes(&build_files));
        // The filter's source is read twice (once for the filter, once for the join).
        let source_bytes = bytes(&source_files);
        if probe_bytes < options.runtime_filter_min_probe_bytes
            || probe_bytes < source_bytes.saturating_mul(options.runtime_filter_min_ratio)
            || estimated_output(build_bytes, t.filter_selectivity) < t.collect_below
        {
            continue;
        }
        // The probe side's output: the rows its own filters keep are what the runtime filter
        // can save shuffling. Their share measured on a sample of its files, else as
        // DataFusion would guess it.
        let probe_output = if is_selective(probe) {
            match filter_share(probe, &probe_files) {
                Some(share) => (probe_bytes as f64 * share) as u64,
                None => estimated_output(probe_bytes, t.filter_selectivity),
            }
        } else {
            probe_bytes
        };
        if probe_output < options.runtime_filter_min_probe_bytes {
            continue;
        }
        // The source's rows as its files' footers count them, times the share of rows
        // DataFusion takes a filter to keep; else the configured guess.
        let source_rows = source_files
            .iter()
            .try_fold(0u64, |sum, (path, _)| Some(sum + parquet_rows(path)?));
        let items = match source_rows {
            Some(rows) => rows.saturating_mul(u64::from(t.filter_selectivity)) / 100,
            None => options.runtime_filter_expected_items,
        };
        out.push(Decision {
            probe: side,
            probe_key,
            source,
            source_key,
            items: items.clamp(MIN_ITEMS, options.max_num_items.max(MIN_ITEMS)),
        });
    }
    out
}

/// The scan (under projections, filters and aliases) under `plan` whose column `key` is,
/// with that column's name there, when every node from `plan` down to it passes the column's
/// values on unchanged: projections and aliases rename it, filters, sorts and limits drop
/// rows, and a join's output column is its input's (an outer join adds nulls, which match
/// nothing). `None` where the path meets another node or `key` is not a column.
fn key_source(plan: &LogicalPlan, key: &Expr) -> Option<(LogicalPlan, Expr)> {
    let Expr::Column(column) = key else {
        return None;
    };
    if is_scan(plan) {
        return Some((plan.clone(), key.clone()));
    }
    let index = plan.schema().index_of_column(column).ok()?;
    let (input, inner): (&LogicalPlan, Expr) = match plan {
        LogicalPlan::Join(join) => {
            // Semi and anti joins give one input's columns, mark joins one input's and the
            // mark; the others the left input's, then the right's.
            let (input, i) = match join.join_type {
                JoinType::LeftSemi | JoinType::LeftAnti | JoinType::LeftMark => (&join.left, index),
                JoinType::RightSemi | JoinType::RightAnti | JoinType::RightMark => {
                    (&join.right, index)
                }
                _ => {
                    let left = join.left.schema().fields().len();
                    if index < left {
                        (&join.left, index)
                    } else {
                        (&join.right, index - left)
                    }
                }
            };
            if i >= input.schema().fields().len() {
                return None;
            }
            (
                input.as_ref(),
                Expr::Column(Column::from(input.schema().qualified_field(i))),
            )
        }
        LogicalPlan::Projection(p) => match p.expr.get(index)?.clone().unalias() {
            Expr::Column(c) => (&p.input, Expr::Column(c)),
            _ => return None,
        },
        LogicalPlan::SubqueryAlias(a) => (
            &a.input,
            Expr::Column(Column::from(a.input.schema().qualified_field(index))),
        ),
        LogicalPlan::Filter(_) | LogicalPlan::Sort(_) | LogicalPlan::Limit(_) => {
            (plan.inputs()[0], key.clone())
        }
        _ => return None,
    };
    key_source(input, &inner)
}

/// The bytes a selective build side is taken to produce: its files' bytes times the share
/// of rows DataFusion takes a filter to keep. What Ballista compares with its broadcast
/// threshold is the side's measured output, after its filters: a build side of 137 MB of
/// files (customer and orders in q3 at scale 1) gives 4 MB and is broadcast.
fn estimated_output(file_bytes: u64, filter_selectivity: u8) -> u64 {
    file_bytes.saturating_mul(u64::from(filter_selectivity)) / 100
}

/// Whether `plan` is one table's scan under projections, filters and aliases.
fn is_scan(plan: &LogicalPlan) -> bool {
    match plan {
        LogicalPlan::TableScan(_) => true,
        LogicalPlan::Projection(_) | LogicalPlan::Filter(_) | LogicalPlan::SubqueryAlias(_) => {
            plan.inputs().iter().all(|p| is_scan(p))
        }
        _ => false,
    }
}

/// Whether `plan` holds a filter: a `Filter` node, or a scan with filters pushed into it.
fn is_selective(plan: &LogicalPlan) -> bool {
    any_node(plan, |node| match node {
        LogicalPlan::Filter(_) => true,
        LogicalPlan::TableScan(scan) => !scan.filters.is_empty(),
        _ => false,
    })
}

/// The files the scans under `plan` read, with their lengths, or `None` if one of them is
/// not a listing table on local disk. A runtime filter's own aggregate is not counted.
fn scan_files(plan: &LogicalPlan) -> Option<Vec<(PathBuf, u64)>> {
    let mut files = Some(Vec::new());
    plan.apply(|node| {
        if creates_filter(node) {
            return Ok(TreeNodeRecursion::Jump);
        }
        if let LogicalPlan::TableScan(scan) = node {
            let provider = source_as_provider(&scan.source).ok();
            let table = provider
                .as_deref()
                .and_then(|p| p.downcast_ref::<ListingTable>())
                .filter(|t| t.table_paths().iter().all(|url| url.scheme() == "file"));
            match (table, files.as_mut()) {
                (Some(table), Some(out)) => {
                    for url in table.table_paths() {
                        local_files(Path::new(&format!("/{}", url.prefix().as_ref())), out);
                    }
                }
                _ => {
                    files = None;
                    return Ok(TreeNodeRecursion::Stop);
                }
            }
        }
        Ok(TreeNodeRecursion::Continue)
    })
    .expect("the visit does not fail");
    files
}

/// The rows of the Parquet file at `path`, from its footer, or `None` if it is not one.
fn parquet_rows(path: &Path) -> Option<u64> {
    use datafusion::parquet::file::reader::{FileReader, SerializedFileReader};
    let file = std::fs::File::open(path).ok()?;
    let reader = SerializedFileReader::new(file).ok()?;
    u64::try_from(reader.metadata().file_metadata().num_rows()).ok()
}

/// The file at `path`, or every file under it, with its length.
fn local_files(path: &Path, out: &mut Vec<(PathBuf, u64)>) {
    let Ok(meta) = std::fs::metadata(path) else {
        return;
    };
    if meta.is_file() {
        out.push((path.to_path_buf(), meta.len()));
        return;
    }
    if let Ok(entries) = std::fs::read_dir(path) {
        for e in entries.flatten() {
            local_files(&e.path(), out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::datatypes::{Field, Schema};
    use datafusion::datasource::{MemTable, provider_as_source};
    use datafusion::logical_expr::col;

    fn scan(name: &str, columns: [&str; 2]) -> LogicalPlanBuilder {
        let schema = Arc::new(Schema::new(
            columns
                .map(|c| Field::new(c, DataType::Int64, true))
                .to_vec(),
        ));
        let table = MemTable::try_new(schema, vec![vec![]]).unwrap();
        LogicalPlanBuilder::scan(name, provider_as_source(Arc::new(table)), None).unwrap()
    }

    #[test]
    fn a_key_is_followed_to_the_scan_it_comes_from() -> Result<()> {
        // customer JOIN (orders WHERE o_date < 5), projected and aliased: the orders key comes
        // from the filtered orders scan.
        let orders = scan("orders", ["o_key", "o_date"]).filter(col("o_date").lt(lit(5i64)))?;
        let build = scan("customer", ["c_key", "c_seg"])
            .filter(col("c_seg").eq(lit(1i64)))?
            .join(
                orders.build()?,
                JoinType::Inner,
                (vec!["c_key"], vec!["o_key"]),
                None,
            )?
            .project(vec![col("o_key").alias("k"), col("c_key")])?
            .alias("b")?
            .build()?;
        let (source, key) = key_source(&build, &col("b.k")).expect("a source");
        assert_eq!(key, col("orders.o_key"));
        assert!(is_scan(&source) && is_selective(&source));
        assert_eq!(source.schema().fields().len(), 2, "{source}");
        assert!(source.to_string().contains("orders"), "{source}");
        assert!(!source.to_string().contains("customer"), "{source}");

        // The other side's key: from customer.
        let (source, key) = key_source(&build, &col("b.c_key")).expect("a source");
        assert_eq!(key, col("customer.c_key"));
        assert!(source.to_string().contains("customer"), "{source}");

        // A computed key is not followed.
        let computed = LogicalPlanBuilder::from(build)
            .project(vec![(col("b.k") + lit(1i64)).alias("k1")])?
            .build()?;
        assert!(key_source(&computed, &col("k1")).is_none());
        Ok(())
    }
}
