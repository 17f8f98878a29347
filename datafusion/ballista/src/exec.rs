//! [`RuntimeFilterExec`]: the runtime filter's semi join as one operator that asks the filter
//! while the probe side streams through it, and the planner that puts it in place.

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use blockbloom::BloomFilter;
use blockbloom_datafusion::MightContain;
use datafusion::arrow::array::{Array, AsArray, BooleanArray};
use datafusion::arrow::buffer::BooleanBuffer;
use datafusion::arrow::compute::filter_record_batch;
use datafusion::arrow::datatypes::DataType;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::catalog::Session;
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::{DataFusionError, JoinSide, JoinType, Result, Statistics, internal_err};
use datafusion::execution::context::QueryPlanner;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::LogicalPlan;
use datafusion::physical_expr::expressions::Column;
use datafusion::physical_expr::{Distribution, PhysicalExpr, ScalarFunctionExpr};
use datafusion::physical_plan::joins::NestedLoopJoinExec;
use datafusion::physical_plan::metrics::{
    BaselineMetrics, Count, ExecutionPlanMetricsSet, MetricBuilder, MetricsSet,
};
use datafusion::physical_plan::projection::ProjectionExec;
use datafusion::physical_plan::statistics::{ChildStats, StatisticsArgs};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, ExecutionPlanProperties, PlanProperties,
};
use datafusion::physical_planner::{DefaultPhysicalPlanner, PhysicalPlanner};
use futures::{StreamExt, TryStreamExt};

use crate::rule::FILTER_COLUMN_PREFIX;

/// The rows of its probe input (the second) whose key the runtime filter might hold: the
/// filter is the one row of its filter input (the first, collected whole into every task), as
/// [`BloomRuntimeFilter`](crate::BloomRuntimeFilter) builds it.
///
/// It answers what the rule's `RightSemi` join on `might_contain(filter, key)` answers, and
/// is what the scheduler plans for that join: the join, a nested loop over one row, copies
/// the filter's bytes out of its row and into a column once for every probe batch and
/// evaluates the call over that column; this node decodes the filter once a task and asks it
/// for each batch's keys. A filter input with no row (an empty build side) drops every row,
/// as the join would; with several rows, a row passes if any of their filters might hold its
/// key; a null key or a null filter matches nothing.
#[derive(Debug)]
pub struct RuntimeFilterExec {
    filter_input: Arc<dyn ExecutionPlan>,
    probe: Arc<dyn ExecutionPlan>,
    /// The filter's column in `filter_input`'s schema.
    filter_column: usize,
    /// The key, over `probe`'s schema.
    key: Arc<dyn PhysicalExpr>,
    cache: Arc<PlanProperties>,
    metrics: ExecutionPlanMetricsSet,
}

impl RuntimeFilterExec {
    /// The node of `filter_input`'s column `filter_column` (Binary, BinaryView or
    /// LargeBinary: a filter's bytes) and `probe`'s `key`.
    pub fn try_new(
        filter_input: Arc<dyn ExecutionPlan>,
        probe: Arc<dyn ExecutionPlan>,
        filter_column: usize,
        key: Arc<dyn PhysicalExpr>,
    ) -> Result<Self> {
        let schema = filter_input.schema();
        let Some(field) = schema.fields().get(filter_column) else {
            return internal_err!(
                "RuntimeFilterExec: no column {filter_column} in its filter input ({} columns)",
                schema.fields().len()
            );
        };
        if !matches!(
            field.data_type(),
            DataType::Binary | DataType::BinaryView | DataType::LargeBinary
        ) {
            return internal_err!(
                "RuntimeFilterExec: the filter column {} is {}, not bytes",
                field.name(),
                field.data_type()
            );
        }
        key.data_type(&probe.schema())?;
        Ok(Self {
            cache: Arc::clone(probe.properties()),
            filter_input,
            probe,
            filter_column,
            key,
            metrics: ExecutionPlanMetricsSet::new(),
        })
    }

    /// The column of the filter input that holds the filter.
    pub fn filter_column(&self) -> usize {
        self.filter_column
    }

    /// The key, over the probe input's schema.
    pub fn key(&self) -> &Arc<dyn PhysicalExpr> {
        &self.key
    }
}

impl DisplayAs for RuntimeFilterExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        let schema = self.filter_input.schema();
        write!(
            f,
            "RuntimeFilterExec: might_contain({}, {})",
            schema.field(self.filter_column).name(),
            self.key
        )
    }
}

impl ExecutionPlan for RuntimeFilterExec {
    fn name(&self) -> &str {
        "RuntimeFilterExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.cache
    }

    fn required_input_distribution(&self) -> Vec<Distribution> {
        vec![
            Distribution::SinglePartition,
            Distribution::UnspecifiedDistribution,
        ]
    }

    fn maintains_input_order(&self) -> Vec<bool> {
        vec![false, true]
    }

    fn benefits_from_input_partitioning(&self) -> Vec<bool> {
        vec![false, false]
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.filter_input, &self.probe]
    }

    fn apply_expressions(
        &self,
        f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        f(&self.key)
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let [filter_input, probe] = <[_; 2]>::try_from(children)
            .or_else(|_| internal_err!("RuntimeFilterExec has two children"))?;
        Ok(Arc::new(Self::try_new(
            filter_input,
            probe,
            self.filter_column,
            Arc::clone(&self.key),
        )?))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let filter_streams = (0..self.filter_input.output_partitioning().partition_count())
            .map(|p| self.filter_input.execute(p, Arc::clone(&context)))
            .collect::<Result<Vec<_>>>()?;
        let probe = self.probe.execute(partition, context)?;
        let column = self.filter_column;
        let key = Arc::clone(&self.key);
        let metrics = ProbeMetrics {
            baseline: BaselineMetrics::new(&self.metrics, partition),
            probe_rows: MetricBuilder::new(&self.metrics).counter("probe_rows", partition),
            dropped: MetricBuilder::new(&self.metrics).counter("rows_dropped", partition),
        };
        // The filters first (every task decodes its own), then the probe side through them.
        let filtered = async move {
            let mut filters = Vec::new();
            for stream in filter_streams {
                let batches: Vec<RecordBatch> = stream.try_collect().await?;
                for batch in &batches {
                    decode_filters(batch.column(column), &mut filters)?;
                }
            }
            Ok::<_, DataFusionError>(probe.filter_map(move |batch| {
                let out = batch.and_then(|b| keep(&b, &filters, &key, &metrics));
                futures::future::ready(match out {
                    Ok(b) if b.num_rows() == 0 => None,
                    other => Some(other),
                })
            }))
        };
        let stream = futures::stream::once(filtered).try_flatten();
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            self.schema(),
            stream,
        )))
    }

    fn metrics(&self) -> Option<MetricsSet> {
        Some(self.metrics.clone_inner())
    }

    fn child_stats_requests(&self, partition: Option<usize>) -> Vec<ChildStats> {
        vec![ChildStats::Skip, ChildStats::At(partition)]
    }

    fn statistics_from_inputs(
        &self,
        input_stats: &[Arc<Statistics>],
        _args: &StatisticsArgs,
    ) -> Result<Arc<Statistics>> {
        // At most the probe side's rows: a filter's.
        let probe = input_stats
            .get(1)
            .map(|s| s.as_ref().clone())
            .unwrap_or_else(|| Statistics::new_unknown(&self.schema()));
        Ok(Arc::new(probe.to_inexact()))
    }
}

struct ProbeMetrics {
    baseline: BaselineMetrics,
    probe_rows: Count,
    dropped: Count,
}

/// Decodes the filters of a column of filter bytes into `out` (null rows hold none).
fn decode_filters(column: &Arc<dyn Array>, out: &mut Vec<BloomFilter>) -> Result<()> {
    let value = |i: usize| -> &[u8] {
        match column.data_type() {
            DataType::BinaryView => column.as_binary_view().value(i),
            DataType::LargeBinary => column.as_binary::<i64>().value(i),
            _ => column.as_binary::<i32>().value(i),
        }
    };
    for i in 0..column.len() {
        if column.is_valid(i) {
            out.push(MightContain::decode_filter(value(i))?);
        }
    }
    Ok(())
}

/// `batch`'s rows whose key one of `filters` might hold.
fn keep(
    batch: &RecordBatch,
    filters: &[BloomFilter],
    key: &Arc<dyn PhysicalExpr>,
    metrics: &ProbeMetrics,
) -> Result<RecordBatch> {
    let _timer = metrics.baseline.elapsed_compute().timer();
    let keys = key.evaluate(batch)?.into_array(batch.num_rows())?;
    let mut mask: Option<BooleanBuffer> = None;
    for filter in filters {
        let answers = MightContain::answer_keys(filter, &keys)?;
        // A null answer (a null key) matches nothing.
        let yes = match answers.nulls() {
            Some(nulls) => answers.values() & nulls.inner(),
            None => answers.values().clone(),
        };
        mask = Some(match mask {
            Some(m) => &m | &yes,
            None => yes,
        });
    }
    // No filter (an empty build side): no row passes.
    let mask = mask.unwrap_or_else(|| BooleanBuffer::new_unset(batch.num_rows()));
    let kept = mask.count_set_bits();
    metrics.probe_rows.add(batch.num_rows());
    metrics.dropped.add(batch.num_rows() - kept);
    metrics.baseline.record_output(kept);
    if kept == batch.num_rows() {
        return Ok(batch.clone());
    }
    Ok(filter_record_batch(batch, &BooleanArray::new(mask, None))?)
}

/// DataFusion's planner, then every runtime filter's semi join replaced by a
/// [`RuntimeFilterExec`]. What the scheduler plans with ([`crate::session_state`]).
#[derive(Debug, Default)]
pub struct RuntimeFilterPlanner;

#[async_trait]
impl QueryPlanner for RuntimeFilterPlanner {
    async fn create_physical_plan(
        &self,
        logical_plan: &LogicalPlan,
        session: &dyn Session,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let plan = DefaultPhysicalPlanner::default()
            .create_physical_plan(logical_plan, session)
            .await?;
        with_runtime_filter_exec(plan)
    }
}

/// `plan` with each runtime filter's semi nested-loop join on `might_contain(filter, key)`
/// (`RightSemi` as the rule writes it, or `LeftSemi` as join selection may swap it: the filter
/// a column of one input, the key of the other's columns only) replaced by a
/// [`RuntimeFilterExec`] of the same inputs.
pub fn with_runtime_filter_exec(plan: Arc<dyn ExecutionPlan>) -> Result<Arc<dyn ExecutionPlan>> {
    plan.transform_up(|node| {
        let Some(join) = node.downcast_ref::<NestedLoopJoinExec>() else {
            return Ok(Transformed::no(node));
        };
        match replacement(join)? {
            Some(new) => Ok(Transformed::yes(new)),
            None => Ok(Transformed::no(node)),
        }
    })
    .map(|t| t.data)
}

/// The [`RuntimeFilterExec`] (under a projection where the join had one) that answers as
/// `join` does, if `join` is a runtime filter's.
fn replacement(join: &NestedLoopJoinExec) -> Result<Option<Arc<dyn ExecutionPlan>>> {
    let Some(filter) = join.filter() else {
        return Ok(None);
    };
    // The rule writes a right semi join of the filter's row with the probe side; DataFusion's
    // join selection may swap it into a left semi join.
    let (filter_side, probe_side, filter_input, probe) = match join.join_type() {
        JoinType::RightSemi => (JoinSide::Left, JoinSide::Right, join.left(), join.right()),
        JoinType::LeftSemi => (JoinSide::Right, JoinSide::Left, join.right(), join.left()),
        _ => return Ok(None),
    };
    let Some(call) = filter.expression().downcast_ref::<ScalarFunctionExpr>() else {
        return Ok(None);
    };
    let [filter_arg, key] = call.args() else {
        return Ok(None);
    };
    if call.name() != "might_contain" {
        return Ok(None);
    }
    let indices = filter.column_indices();
    // The filter: a column of the filter's input, named as the rule names it.
    let Some(filter_column) = filter_arg
        .downcast_ref::<Column>()
        .and_then(|c| indices.get(c.index()))
        .filter(|i| i.side == filter_side)
        .map(|i| i.index)
    else {
        return Ok(None);
    };
    if !filter_input
        .schema()
        .field(filter_column)
        .name()
        .starts_with(FILTER_COLUMN_PREFIX)
    {
        return Ok(None);
    }
    // The key: over the probe input's columns only, rewritten onto its schema.
    let probe_schema = probe.schema();
    let mut probe_only = true;
    let key = Arc::clone(key)
        .transform(|e| {
            let Some(c) = e.downcast_ref::<Column>() else {
                return Ok(Transformed::no(e));
            };
            match indices.get(c.index()) {
                Some(i) if i.side == probe_side => {
                    let column = Column::new(probe_schema.field(i.index).name(), i.index);
                    Ok(Transformed::yes(Arc::new(column) as Arc<dyn PhysicalExpr>))
                }
                _ => {
                    probe_only = false;
                    Ok(Transformed::no(e))
                }
            }
        })?
        .data;
    if !probe_only {
        return Ok(None);
    }
    let node: Arc<dyn ExecutionPlan> = Arc::new(RuntimeFilterExec::try_new(
        Arc::clone(filter_input),
        Arc::clone(probe),
        filter_column,
        key,
    )?);
    // A semi join's output is its probe input's columns; an embedded projection picks some.
    let Some(projection) = join.projection() else {
        return Ok(Some(node));
    };
    let exprs = projection.iter().map(|&i| {
        let name = probe_schema.field(i).name();
        (
            Arc::new(Column::new(name, i)) as Arc<dyn PhysicalExpr>,
            name.clone(),
        )
    });
    Ok(Some(Arc::new(ProjectionExec::try_new(exprs, node)?)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::BloomPhysicalCodec;
    use datafusion::arrow::util::pretty::pretty_format_batches;
    use datafusion::execution::SessionStateBuilder;
    use datafusion::physical_plan::{collect, displayable};
    use datafusion::prelude::SessionContext;
    use datafusion_proto::physical_plan::{DefaultPhysicalProtoConverter, PhysicalExtensionCodec};

    /// A context with the functions, `build` and `probe`; with the planner or without.
    async fn context(planner: bool) -> Result<SessionContext> {
        let mut state = SessionStateBuilder::new().with_default_features();
        if planner {
            state = state.with_query_planner(Arc::new(RuntimeFilterPlanner));
        }
        let ctx = SessionContext::new_with_state(state.build());
        blockbloom_datafusion::register(&ctx);
        for sql in [
            "CREATE TABLE build(k BIGINT, s VARCHAR, g INT) AS VALUES \
             (1, 'a', 0), (2, 'b', 0), (3, 'c', 1), (NULL, NULL, 0)",
            "CREATE TABLE probe(k BIGINT, s VARCHAR, v INT) AS VALUES \
             (1, 'a', 10), (2, 'x', 20), (5, 'c', 30), (NULL, 'b', 40), (3, NULL, 50), \
             (7, 'q', 60), (1, 'a', 70)",
        ] {
            ctx.sql(sql).await?.collect().await?;
        }
        Ok(ctx)
    }

    /// The rule's semi join written out: the filters of `build`'s `key` grouped by `group`
    /// (where `where_` holds), each as a `BinaryView` named as the rule names it.
    fn semi_join(key: &str, group: &str, where_: &str, select: &str) -> String {
        format!(
            "SELECT {select} FROM (SELECT arrow_cast(bloom_filter_agg({key}, 1000, 0.01), \
             'BinaryView') AS __blockbloom_runtime_filter_7 FROM build WHERE {where_} \
             GROUP BY {group}) f RIGHT SEMI JOIN probe p \
             ON might_contain(f.__blockbloom_runtime_filter_7, p.{key})"
        )
    }

    async fn answer(ctx: &SessionContext, sql: &str) -> Result<(String, String)> {
        let df = ctx.sql(sql).await?;
        let plan = df.create_physical_plan().await?;
        let text = displayable(plan.as_ref()).indent(true).to_string();
        let mut batches = collect(plan, ctx.task_ctx()).await?;
        batches.retain(|b| b.num_rows() > 0);
        let mut rows: Vec<String> = pretty_format_batches(&batches)?
            .to_string()
            .lines()
            .map(str::to_string)
            .collect();
        rows.sort();
        Ok((rows.join("\n"), text))
    }

    #[tokio::test]
    async fn answers_as_the_semi_join_does() -> Result<()> {
        let (plain, planned) = (context(false).await?, context(true).await?);
        for sql in [
            // One filter; null keys on both sides.
            semi_join("k", "'one'", "true", "p.k, p.s, p.v"),
            // Strings, and a projection of the probe side.
            semi_join("s", "'one'", "true", "p.v"),
            // Two filters (one a group): a row passes if either might hold its key.
            semi_join("k", "g", "true", "p.k, p.v"),
            // Written the other way round: a left semi join of the probe side.
            semi_join("k", "'one'", "true", "p.k, p.v")
                .replace(
                    "SELECT p.k, p.v FROM (",
                    "SELECT p.k, p.v FROM probe p LEFT SEMI JOIN (",
                )
                .replace(") f RIGHT SEMI JOIN probe p", ") f"),
            // No filter row (an empty build side): no row passes.
            semi_join("k", "'one'", "k > 100", "p.k, p.v"),
        ] {
            let (expected, plain_plan) = answer(&plain, &sql).await?;
            let (got, plan) = answer(&planned, &sql).await?;
            assert!(plain_plan.contains("NestedLoopJoinExec"), "{plain_plan}");
            assert!(
                plan.contains("RuntimeFilterExec: might_contain(__blockbloom_runtime_filter_7"),
                "{plan}"
            );
            assert!(!plan.contains("NestedLoopJoinExec"), "{plan}");
            assert_eq!(got, expected, "{sql}\n{plan}");
        }
        // Another name or join type is not the rule's: left as it is.
        let other =
            semi_join("k", "'one'", "true", "p.k").replace("__blockbloom_runtime_filter_7", "f7");
        let (_, plan) = answer(&planned, &other).await?;
        assert!(plan.contains("NestedLoopJoinExec"), "{plan}");
        Ok(())
    }

    #[tokio::test]
    async fn the_node_crosses_the_codec_and_a_corrupt_filter_is_an_error() -> Result<()> {
        let ctx = context(true).await?;
        let plan = ctx
            .sql(&semi_join("k", "'one'", "true", "p.k, p.s, p.v"))
            .await?
            .create_physical_plan()
            .await?;
        let mut found = None;
        plan.apply(|node| {
            if node.downcast_ref::<RuntimeFilterExec>().is_some() {
                found = Some(Arc::clone(node));
                return Ok(TreeNodeRecursion::Stop);
            }
            Ok(TreeNodeRecursion::Continue)
        })?;
        let node = found.expect("a RuntimeFilterExec");
        let codec = BloomPhysicalCodec::default();
        let converter = DefaultPhysicalProtoConverter {};
        let mut buf = Vec::new();
        codec.try_encode(Arc::clone(&node), &mut buf, &converter)?;
        let inputs: Vec<_> = node.children().into_iter().cloned().collect();
        let back = codec.try_decode(&buf, &inputs, &ctx.task_ctx(), &converter)?;
        let back = back.downcast_ref::<RuntimeFilterExec>().expect("the node");
        let node = node.downcast_ref::<RuntimeFilterExec>().unwrap();
        assert_eq!(back.filter_column(), node.filter_column());
        assert_eq!(back.key().to_string(), node.key().to_string());
        assert!(
            codec
                .try_decode(&buf[..buf.len() - 1], &inputs, &ctx.task_ctx(), &converter)
                .is_err()
        );

        // Bytes that are not a filter, as the filter input's row: the node's error names it.
        let bad = "SELECT p.k FROM (SELECT arrow_cast(X'00010203', 'BinaryView') AS \
                   __blockbloom_runtime_filter_7) f RIGHT SEMI JOIN probe p \
                   ON might_contain(f.__blockbloom_runtime_filter_7, p.k)";
        let err = answer(&ctx, bad).await.unwrap_err().to_string();
        assert!(err.contains("not a blockbloom filter"), "{err}");
        Ok(())
    }
}
